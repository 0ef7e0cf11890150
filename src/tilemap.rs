//! bevy_ecs_tilemap maps as navigation grids. Needs the `tilemap` feature
//! (on by default).
//!
//! A map entity with `TileStorage`, `TilemapSize`, `TilemapGridSize`,
//! `TilemapType::Square` (and optionally `TilemapTileSize`,
//! `TilemapAnchor` and a `Transform`) gets a [`NavGrid`] and a
//! [`GridLayout`], kept in sync with the [`TileCost`] of its tiles:
//!
//! - a tile without `TileCost` is plain ground (cost 1);
//! - a position with no tile entity is a wall;
//! - changing a tile's `TileCost` updates its cell the same frame;
//!   setting or removing tiles in the `TileStorage` rescans the map.
//!
//! None of this needs `TilemapPlugin` (which needs a renderer), so it works
//! in a headless `App`.

use bevy::ecs::intern::Interned;
use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;
use bevy_ecs_tilemap::anchor::TilemapAnchor;
use bevy_ecs_tilemap::map::{
    TilemapGridSize, TilemapId, TilemapSize, TilemapTileSize, TilemapType,
};
use bevy_ecs_tilemap::tiles::{TilePos, TileStorage};

use crate::core::{Cell, NavGrid};
use crate::maps::GridLayout;
use crate::schedule::{FrontierSchedulePlugin, FrontierSystems};

/// The movement cost of a tile: [`TileCost::WALL`], [`TileCost::GROUND`] or
/// rough terrain up to 255.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash, Reflect)]
#[reflect(Component)]
pub struct TileCost(pub u8);

impl TileCost {
    /// Impassable.
    pub const WALL: TileCost = TileCost(NavGrid::BLOCKED);
    /// Plain ground, cost 1.
    pub const GROUND: TileCost = TileCost(1);
}

impl Default for TileCost {
    fn default() -> Self {
        Self::GROUND
    }
}

/// Marks a tilemap the plugin cannot navigate (not `TilemapType::Square`);
/// it was warned about once and is left alone.
#[derive(Component, Clone, Copy, Debug)]
pub struct UnsupportedTilemap;

/// Keeps a [`NavGrid`] on every square bevy_ecs_tilemap map, in the
/// [`FrontierSystems::SyncMaps`] set.
///
/// # Systems
/// - `attach_grids`: gives new square maps a `NavGrid` and `GridLayout`,
///   and warns about other map types;
/// - `sync_layouts`: recomputes the layout when the map's size, grid size,
///   tile size or anchor change;
/// - `sync_tile_costs`: applies changed, added and removed [`TileCost`]s;
/// - `sync_storage`: rescans maps whose `TileStorage` changed, and gives a
///   map whose `TilemapSize` changed a grid of the new size.
///
/// And an observer: a tile entity despawned while the storage still holds
/// it makes its cell a wall at once, as a missing tile.
pub struct TilemapNavPlugin {
    /// The schedule to run in; must be the one `PathfindingPlugin` runs in.
    pub schedule: Interned<dyn ScheduleLabel>,
}

impl TilemapNavPlugin {
    /// The plugin, running in `schedule`.
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
        }
    }
}

impl Default for TilemapNavPlugin {
    fn default() -> Self {
        Self::new(Update)
    }
}

impl Plugin for TilemapNavPlugin {
    fn build(&self, app: &mut App) {
        FrontierSchedulePlugin::add_once(app, self.schedule);
        crate::maps::register(app);
        app.register_type::<TileCost>()
            .add_systems(
                self.schedule,
                (attach_grids, sync_layouts, sync_storage, sync_tile_costs)
                    .chain()
                    .in_set(FrontierSystems::SyncMaps),
            )
            .add_observer(wall_despawned_tile);
    }
}

/// The layout bevy_ecs_tilemap itself uses: the centre of tile (0, 0) from
/// `TilePos::center_in_world` (anchor included) and the grid size as the
/// cell size, so `GridLayout` and `TilePos::from_world_pos` agree.
pub fn tilemap_layout(
    size: &TilemapSize,
    grid_size: &TilemapGridSize,
    tile_size: &TilemapTileSize,
    anchor: &TilemapAnchor,
) -> GridLayout {
    let origin = TilePos::new(0, 0).center_in_world(
        size,
        grid_size,
        tile_size,
        &TilemapType::Square,
        anchor,
    );
    GridLayout {
        origin,
        cell_size: Vec2::new(grid_size.x, grid_size.y),
    }
}

type MapShape<'a> = (
    Entity,
    &'a TileStorage,
    &'a TilemapSize,
    &'a TilemapGridSize,
    &'a TilemapType,
    Option<&'a TilemapTileSize>,
    Option<&'a TilemapAnchor>,
);

fn attach_grids(
    mut commands: Commands,
    maps: Query<MapShape, (Without<NavGrid>, Without<UnsupportedTilemap>)>,
    tiles: Query<Option<&TileCost>>,
) {
    for (map, storage, size, grid_size, map_type, tile_size, anchor) in &maps {
        if *map_type != TilemapType::Square {
            warn!(
                "bevy_frontier: tilemap {map} is {map_type:?}; only TilemapType::Square maps get a NavGrid"
            );
            commands.entity(map).insert(UnsupportedTilemap);
            continue;
        }
        let costs = (0..size.y)
            .flat_map(|y| (0..size.x).map(move |x| TilePos::new(x, y)))
            .map(|pos| tile_cost(storage, &tiles, &pos))
            .collect();
        let grid = match NavGrid::from_costs(size.x, size.y, costs) {
            Ok(grid) => grid,
            Err(error) => {
                warn!("bevy_frontier: tilemap {map} cannot be navigated: {error}");
                commands.entity(map).insert(UnsupportedTilemap);
                continue;
            }
        };
        let tile_size = tile_size.copied().unwrap_or_default();
        let anchor = anchor.copied().unwrap_or_default();
        let layout = tilemap_layout(size, grid_size, &tile_size, &anchor);
        commands.entity(map).insert((grid, layout));
    }
}

/// The cost at `pos`: its tile's [`TileCost`], ground for a tile without
/// one, a wall where there is no tile.
fn tile_cost(storage: &TileStorage, tiles: &Query<Option<&TileCost>>, pos: &TilePos) -> u8 {
    match storage.checked_get(pos) {
        Some(tile) => match tiles.get(tile) {
            Ok(cost) => cost.copied().unwrap_or_default().0,
            Err(_) => NavGrid::BLOCKED,
        },
        None => NavGrid::BLOCKED,
    }
}

#[allow(clippy::type_complexity)]
fn sync_layouts(
    mut maps: Query<
        (
            &TilemapSize,
            &TilemapGridSize,
            Option<&TilemapTileSize>,
            Option<&TilemapAnchor>,
            &mut GridLayout,
        ),
        (
            With<NavGrid>,
            Or<(
                Changed<TilemapSize>,
                Changed<TilemapGridSize>,
                Changed<TilemapTileSize>,
                Changed<TilemapAnchor>,
            )>,
        ),
    >,
) {
    for (size, grid_size, tile_size, anchor, mut layout) in &mut maps {
        let tile_size = tile_size.copied().unwrap_or_default();
        let anchor = anchor.copied().unwrap_or_default();
        layout.set_if_neq(tilemap_layout(size, grid_size, &tile_size, &anchor));
    }
}

/// Rescans every cell of maps whose `TileStorage` changed (tiles set or
/// removed). Only cells whose cost differs are written. A map whose
/// `TilemapSize` changed gets a new grid of the new size (as an edit of the
/// whole grid, so searches and paths on it start over).
#[allow(clippy::type_complexity)]
fn sync_storage(
    mut maps: Query<
        (Entity, &TileStorage, &TilemapSize, &mut NavGrid),
        Or<(Changed<TileStorage>, Changed<TilemapSize>)>,
    >,
    tiles: Query<Option<&TileCost>>,
) {
    for (map, storage, size, mut grid) in &mut maps {
        if (size.x, size.y) != (grid.width(), grid.height()) {
            let costs = (0..size.y)
                .flat_map(|y| (0..size.x).map(move |x| TilePos::new(x, y)))
                .map(|pos| tile_cost(storage, &tiles, &pos))
                .collect();
            match NavGrid::from_costs(size.x, size.y, costs) {
                Ok(resized) => {
                    let neighborhood = grid.neighborhood();
                    grid.replace(resized.with_neighborhood(neighborhood));
                }
                Err(error) => {
                    warn!(
                        "bevy_frontier: tilemap {map} resized to {size:?} cannot be navigated: {error}"
                    );
                }
            }
            continue;
        }
        let (width, height) = (grid.width(), grid.height());
        for y in 0..height {
            for x in 0..width {
                let cost = tile_cost(storage, &tiles, &TilePos::new(x, y));
                let cell = Cell::new(x, y);
                if grid.cost(cell) != Some(cost) {
                    let _ = grid.set_cost(cell, cost);
                }
            }
        }
    }
}

/// A tile entity despawned while its map's storage still holds it: its cell
/// becomes a wall, as a missing tile is.
fn wall_despawned_tile(
    removed: On<Remove, TilePos>,
    tiles: Query<(&TilePos, &TilemapId)>,
    mut maps: Query<(&TileStorage, &mut NavGrid)>,
) {
    let tile = removed.entity;
    let Ok((pos, map)) = tiles.get(tile) else {
        return;
    };
    if let Ok((storage, mut grid)) = maps.get_mut(map.0)
        && storage.checked_get(pos) == Some(tile)
    {
        let _ = grid.set_cost(Cell::new(pos.x, pos.y), NavGrid::BLOCKED);
    }
}

#[allow(clippy::type_complexity)]
fn sync_tile_costs(
    changed: Query<
        (Entity, &TilePos, &TilemapId, Option<&TileCost>),
        Or<(Changed<TileCost>, Changed<TilePos>, Added<TilemapId>)>,
    >,
    mut removed: RemovedComponents<TileCost>,
    still_tiles: Query<(&TilePos, &TilemapId), Without<TileCost>>,
    mut maps: Query<(&TileStorage, &mut NavGrid)>,
) {
    let mut apply = |tile: Entity, pos: &TilePos, map: &TilemapId, cost: u8| {
        if let Ok((storage, mut grid)) = maps.get_mut(map.0) {
            // Only the tile the storage holds at this position counts.
            let cell = Cell::new(pos.x, pos.y);
            if storage.checked_get(pos) == Some(tile) && grid.cost(cell) != Some(cost) {
                let _ = grid.set_cost(cell, cost);
            }
        }
    };
    for (tile, pos, map, cost) in &changed {
        apply(tile, pos, map, cost.copied().unwrap_or_default().0);
    }
    for tile in removed.read() {
        if let Ok((pos, map)) = still_tiles.get(tile) {
            apply(tile, pos, map, TileCost::GROUND.0);
        }
    }
}
