//! The battlefield: a MovingAI map file rendered as a bevy_ecs_tilemap map,
//! whose `TileTerrain`s the library turns into the `NavGrid`, read by four
//! movement classes: land units (infantry and vehicles), boats and
//! hovercraft.

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

// Terrain types (rock and trees are `Terrain::WALL`, a wall for every
// class).
pub const OPEN: Terrain = Terrain(1);
const SWAMP_GROUND: Terrain = Terrain(2);
const MUD_GROUND: Terrain = Terrain(3);
const RIVER: Terrain = Terrain(4);

/// Terrain types a T-click cycles through, with their tile images.
pub const TERRAIN: [(Terrain, u32); 3] = [(OPEN, GROUND), (SWAMP_GROUND, SWAMP), (MUD_GROUND, MUD)];

// Movement classes, in the order `classes` registers them.
/// Infantry and vehicles: ground at 1, swamp 4, mud 8; no water.
pub const LAND: ClassId = ClassId::from_index(0);
/// Boats: the river only.
pub const BOAT: ClassId = ClassId::from_index(1);
/// Hovercraft: ground, swamp, mud and water alike.
pub const HOVER: ClassId = ClassId::from_index(2);

/// The scene's movement classes ([`LAND`], [`BOAT`], [`HOVER`]).
pub fn classes() -> MovementClasses {
    let mut classes = MovementClasses::new();
    let land = classes.add("land", [(OPEN, 1), (SWAMP_GROUND, 4), (MUD_GROUND, 8)]);
    let boat = classes.add("boat", [(RIVER, 1)]);
    let hover = classes.add(
        "hover",
        [(OPEN, 1), (SWAMP_GROUND, 1), (MUD_GROUND, 1), (RIVER, 1)],
    );
    assert_eq!((land, boat, hover), (LAND, BOAT, HOVER));
    classes
}

/// The map file the scene was built from.
#[derive(Resource)]
pub struct Battlefield(pub MovingAiMap);

impl Battlefield {
    /// The tilemap's size; the file's first row is the top of the map.
    pub fn size(&self) -> TilemapSize {
        TilemapSize {
            x: self.0.width(),
            y: self.0.height(),
        }
    }

    /// Terrain type and tile image of the tile at `position`.
    pub fn tile(&self, position: TilePos) -> (Terrain, u32) {
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

/// Terrain type and tile image of a map character.
fn terrain_of(c: u8) -> (Terrain, u32) {
    match c {
        b'S' => (SWAMP_GROUND, SWAMP),
        b'T' => (Terrain::WALL, TREES),
        b'W' => (RIVER, WATER),
        c if benchmark_cost(c) == NavGrid::BLOCKED => (Terrain::WALL, ROCK),
        _ => (OPEN, GROUND),
    }
}

/// Spawns the tilemap at startup.
pub struct MapPlugin;

impl Plugin for MapPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(Startup, spawn_tilemap);
    }
}

fn spawn_tilemap(mut commands: Commands, terrain: Res<Battlefield>, assets: Res<AssetServer>) {
    let size = terrain.size();
    let tile_size = TilemapTileSize { x: TILE, y: TILE };
    let tilemap = commands.spawn_empty().id();
    let mut storage = TileStorage::empty(size);
    for y in 0..size.y {
        for x in 0..size.x {
            let position = TilePos { x, y };
            let (terrain_type, image) = terrain.tile(position);
            let tile = commands
                .spawn((
                    TileBundle {
                        position,
                        tilemap_id: TilemapId(tilemap),
                        texture_index: TileTextureIndex(image),
                        ..default()
                    },
                    TileTerrain(terrain_type),
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
