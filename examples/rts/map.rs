//! The battlefield: a MovingAI map file rendered as a bevy_ecs_tilemap map,
//! whose `TileCost`s the library turns into the `NavGrid`.

use bevy::prelude::*;
use bevy_ecs_tilemap::prelude::*;
use bevy_frontier::core::movingai::benchmark_cost;
use bevy_frontier::core::{Cell, MovingAiMap};
use bevy_frontier::maps::GridLayout;
use bevy_frontier::prelude::*;
use bevy_frontier::tilemap::tilemap_layout;

/// Pixels per tile.
pub const TILE: f32 = 16.0;

// Tile images in assets/tiles.png (made by tools/make_assets.py).
pub const GROUND: u32 = 0;
pub const SWAMP: u32 = 1;
pub const ROCK: u32 = 2;
const TREES: u32 = 3;
const WATER: u32 = 4;
const MUD: u32 = 5;

/// Terrain costs a T-click cycles through, with their tile images.
pub const TERRAIN: [(u8, u32); 3] = [(1, GROUND), (4, SWAMP), (8, MUD)];

/// The map file the scene was built from.
#[derive(Resource)]
pub struct Terrain(pub MovingAiMap);

impl Terrain {
    /// The tilemap's size; the file's first row is the top of the map.
    pub fn size(&self) -> TilemapSize {
        TilemapSize {
            x: self.0.width(),
            y: self.0.height(),
        }
    }

    /// Cost and tile image of the tile at `position`.
    pub fn tile(&self, position: TilePos) -> (u8, u32) {
        let row = self.0.height() - 1 - position.y;
        terrain_of(
            self.0
                .terrain_at(Cell::new(position.x, row))
                .unwrap_or(b'@'),
        )
    }

    /// Where the map's cells sit, as the library will see them.
    pub fn layout(&self) -> GridLayout {
        let tile_size = TilemapTileSize { x: TILE, y: TILE };
        tilemap_layout(
            &self.size(),
            &tile_size.into(),
            &tile_size,
            &TilemapAnchor::Center,
        )
    }
}

/// Cost and tile image of a map character.
fn terrain_of(c: u8) -> (u8, u32) {
    match c {
        b'S' => (4, SWAMP),
        b'T' => (NavGrid::BLOCKED, TREES),
        b'W' => (NavGrid::BLOCKED, WATER),
        c if benchmark_cost(c) == NavGrid::BLOCKED => (NavGrid::BLOCKED, ROCK),
        _ => (1, GROUND),
    }
}

/// Spawns the tilemap at startup.
pub struct MapPlugin;

impl Plugin for MapPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(Startup, spawn_tilemap);
    }
}

fn spawn_tilemap(mut commands: Commands, terrain: Res<Terrain>, assets: Res<AssetServer>) {
    let size = terrain.size();
    let tile_size = TilemapTileSize { x: TILE, y: TILE };
    let tilemap = commands.spawn_empty().id();
    let mut storage = TileStorage::empty(size);
    for y in 0..size.y {
        for x in 0..size.x {
            let position = TilePos { x, y };
            let (cost, image) = terrain.tile(position);
            let tile = commands
                .spawn((
                    TileBundle {
                        position,
                        tilemap_id: TilemapId(tilemap),
                        texture_index: TileTextureIndex(image),
                        ..default()
                    },
                    TileCost(cost),
                ))
                .id();
            storage.set(&position, tile);
        }
    }
    commands.entity(tilemap).insert(TilemapBundle {
        grid_size: tile_size.into(),
        map_type: TilemapType::Square,
        size,
        storage,
        texture: TilemapTexture::Single(assets.load("tiles.png")),
        tile_size,
        anchor: TilemapAnchor::Center,
        ..default()
    });
}
