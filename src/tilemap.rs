//! bevy_ecs_tilemap maps as navigation grids. Needs the `tilemap` feature
//! (on by default).
//!
//! A map entity with `TileStorage`, `TilemapSize`, `TilemapGridSize`,
//! `TilemapType::Square` (and optionally `TilemapTileSize`,
//! `TilemapAnchor` and a `Transform`) gets a [`NavGrid`] and a
//! [`GridLayout`], kept in sync with the [`TileCost`] of its tiles:
//!
//! - a tile without `TileCost` is plain ground (cost 1);
//! - on a map whose grid has movement classes
//!   ([`TilemapNavPlugin::with_classes`]), a tile's [`TileTerrain`] is its
//!   terrain type, which each class reads its cost from (a tile with
//!   neither is terrain type 1);
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

use crate::core::{Cell, MovementClasses, NavGrid, Terrain};
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

/// The terrain type of a tile, on maps whose grids have movement classes
/// ([`TilemapNavPlugin::with_classes`]): what its cell holds, which each
/// class reads its cost from ([`MovementClasses`]); [`Terrain::WALL`] is
/// a wall for every class. Where a tile has both, it stands in for [`TileCost`].
/// A game keeps it the way it keeps `TileCost`: a function of its tile
/// (what the tile shows, what stands on it), written when that changes.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash, Reflect)]
#[reflect(Component)]
pub struct TileTerrain(pub Terrain);

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
    /// The movement classes every tilemap's grid gets
    /// ([`NavGrid::set_classes`]); `None` (the default) keeps one cost per
    /// cell, from [`TileCost`].
    pub classes: Option<MovementClasses>,
}

impl TilemapNavPlugin {
    /// The plugin, running in `schedule`.
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
            classes: None,
        }
    }

    /// The plugin, giving every tilemap's grid these movement classes: a
    /// tile's [`TileTerrain`] is then its terrain type. Put it in place of
    /// the one `FrontierPlugins` adds:
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_frontier::prelude::*;
    /// use bevy_frontier::tilemap::TilemapNavPlugin;
    ///
    /// const OPEN: Terrain = Terrain(1);
    /// const WATER: Terrain = Terrain(2);
    /// let classes = MovementClasses::new()
    ///     .class("foot", [(OPEN, 1)])
    ///     .class("boat", [(WATER, 1)]);
    /// App::new().add_plugins(
    ///     FrontierPlugins::default()
    ///         .build()
    ///         .set(TilemapNavPlugin::default().with_classes(classes)),
    /// );
    /// ```
    pub fn with_classes(mut self, classes: MovementClasses) -> Self {
        self.classes = Some(classes);
        self
    }
}

/// The movement classes tilemaps' grids get (see
/// [`TilemapNavPlugin::classes`]); there only when the plugin has some.
#[derive(Resource)]
struct TilemapClasses(MovementClasses);

/// A grid of `bytes`, with the classes if there are any.
fn tilemap_grid(
    classes: Option<&TilemapClasses>,
    width: u32,
    height: u32,
    bytes: Vec<u8>,
) -> Result<NavGrid, String> {
    let grid = NavGrid::from_costs(width, height, bytes).map_err(|e| e.to_string())?;
    match classes {
        Some(classes) => grid
            .with_classes(classes.0.clone())
            .map_err(|e| e.to_string()),
        None => Ok(grid),
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
        // Only a plugin with classes adds a resource: resources are
        // entities, and one more would number every later entity anew.
        if let Some(classes) = &self.classes {
            app.insert_resource(TilemapClasses(classes.clone()));
        }
        app.register_type::<TileCost>()
            .register_type::<TileTerrain>()
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
    tiles: Query<TileByte>,
    classes: Option<Res<TilemapClasses>>,
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
        let grid = match tilemap_grid(classes.as_deref(), size.x, size.y, costs) {
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

/// What a tile's cell holds is read from.
type TileByte = (Option<&'static TileCost>, Option<&'static TileTerrain>);

/// The byte of a tile with these components: its [`TileTerrain`], else its
/// [`TileCost`], else ground (1).
fn byte_of((cost, terrain): (Option<&TileCost>, Option<&TileTerrain>)) -> u8 {
    terrain.map_or(cost.copied().unwrap_or_default().0, |t| t.0.0)
}

/// The byte at `pos` (its cost, or its terrain type on a map with
/// classes): see [`byte_of`]; a wall where there is no tile.
fn tile_cost(storage: &TileStorage, tiles: &Query<TileByte>, pos: &TilePos) -> u8 {
    match storage.checked_get(pos) {
        Some(tile) => tiles.get(tile).map_or(NavGrid::BLOCKED, byte_of),
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
    tiles: Query<TileByte>,
    classes: Option<Res<TilemapClasses>>,
) {
    for (map, storage, size, mut grid) in &mut maps {
        if (size.x, size.y) != (grid.width(), grid.height()) {
            let costs = (0..size.y)
                .flat_map(|y| (0..size.x).map(move |x| TilePos::new(x, y)))
                .map(|pos| tile_cost(storage, &tiles, &pos))
                .collect();
            match tilemap_grid(classes.as_deref(), size.x, size.y, costs) {
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
                if grid.byte(cell) != Some(cost) {
                    let _ = grid.set_byte(cell, cost);
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
        let _ = grid.set_byte(Cell::new(pos.x, pos.y), NavGrid::BLOCKED);
    }
}

#[allow(clippy::type_complexity)]
fn sync_tile_costs(
    changed: Query<
        (Entity, &TilePos, &TilemapId, TileByte),
        Or<(
            Changed<TileCost>,
            Changed<TileTerrain>,
            Changed<TilePos>,
            Added<TilemapId>,
        )>,
    >,
    mut removed_costs: RemovedComponents<TileCost>,
    mut removed_terrain: RemovedComponents<TileTerrain>,
    still_tiles: Query<(&TilePos, &TilemapId, TileByte)>,
    mut maps: Query<(&TileStorage, &mut NavGrid)>,
) {
    let mut apply = |tile: Entity, pos: &TilePos, map: &TilemapId, cost: u8| {
        if let Ok((storage, mut grid)) = maps.get_mut(map.0) {
            // Only the tile the storage holds at this position counts.
            let cell = Cell::new(pos.x, pos.y);
            if storage.checked_get(pos) == Some(tile) && grid.byte(cell) != Some(cost) {
                let _ = grid.set_byte(cell, cost);
            }
        }
    };
    for (tile, pos, map, byte) in &changed {
        apply(tile, pos, map, byte_of(byte));
    }
    for tile in removed_costs.read().chain(removed_terrain.read()) {
        if let Ok((pos, map, byte)) = still_tiles.get(tile) {
            apply(tile, pos, map, byte_of(byte));
        }
    }
}
