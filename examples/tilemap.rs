//! A game's own bevy_ecs_tilemap map: the game spawns its tiles with a
//! `TileCost` (walls, ground, swamp), adds `FrontierPlugins`, and the map
//! gets a `NavGrid` kept in sync with its tiles. Left-click to send the
//! unit; right-click to build or knock down a wall. Its path is drawn.
//!
//! ```text
//! cargo run --release --example tilemap --features demo
//! ```

use bevy::prelude::*;
use bevy::window::PrimaryWindow;
use bevy_ecs_tilemap::prelude::*;
use bevy_frontier::maps::Maps;
use bevy_frontier::movement::{Route, Steering};
use bevy_frontier::prelude::*;

/// Pixels per tile.
const TILE: f32 = 16.0;
// Tile images in assets/tiles.png.
const GROUND: u32 = 0;
const SWAMP: u32 = 1;
const ROCK: u32 = 2;

fn main() {
    App::new()
        .add_plugins((
            DefaultPlugins
                .set(ImagePlugin::default_nearest())
                .set(AssetPlugin {
                    file_path: concat!(env!("CARGO_MANIFEST_DIR"), "/assets").into(),
                    ..default()
                }),
            TilemapPlugin,
            FrontierPlugins::default(),
        ))
        .init_resource::<Cursor>()
        .add_systems(Startup, setup)
        .add_systems(Update, track_cursor.before(FrontierSystems::First))
        .add_systems(
            Update,
            (send_unit, toggle_wall, draw_route).after(FrontierSystems::Last),
        )
        .run();
}

/// The tile images and costs of a 48×30 field: a rock ridge with two gaps
/// and a swamp the path goes round when it can.
fn tile_at(x: u32, y: u32) -> (u32, TileCost) {
    let ridge = x == 24 && !(4..7).contains(&y) && !(22..25).contains(&y);
    let swamp = (10..20).contains(&x) && (8..22).contains(&y);
    match (ridge, swamp) {
        (true, _) => (ROCK, TileCost::WALL),
        (_, true) => (SWAMP, TileCost(4)),
        _ => (GROUND, TileCost::GROUND),
    }
}

fn setup(mut commands: Commands, assets: Res<AssetServer>) {
    commands.spawn(Camera2d);
    let size = TilemapSize { x: 48, y: 30 };
    let map = commands.spawn_empty().id();
    let mut storage = TileStorage::empty(size);
    for y in 0..size.y {
        for x in 0..size.x {
            let (image, cost) = tile_at(x, y);
            let position = TilePos { x, y };
            let tile = commands
                .spawn((
                    TileBundle {
                        position,
                        tilemap_id: TilemapId(map),
                        texture_index: TileTextureIndex(image),
                        ..default()
                    },
                    cost,
                ))
                .id();
            storage.set(&position, tile);
        }
    }
    let tile_size = TilemapTileSize { x: TILE, y: TILE };
    commands.entity(map).insert(TilemapBundle {
        grid_size: tile_size.into(),
        size,
        storage,
        texture: TilemapTexture::Single(assets.load("tiles.png")),
        tile_size,
        anchor: TilemapAnchor::Center,
        ..default()
    });
    commands.spawn((
        Mover { speed: 6.0 * TILE },
        Sprite::from_color(Color::srgb(0.95, 0.35, 0.3), Vec2::splat(TILE * 0.8)),
        Transform::from_xyz(-300.0, 0.0, 5.0),
    ));
}

/// The world position under the mouse, if it is over the window.
#[derive(Resource, Default)]
struct Cursor(Option<Vec2>);

fn track_cursor(
    window: Query<&Window, With<PrimaryWindow>>,
    camera: Query<(&Camera, &GlobalTransform)>,
    mut cursor: ResMut<Cursor>,
) {
    cursor.0 = window
        .single()
        .ok()
        .and_then(Window::cursor_position)
        .zip(camera.single().ok())
        .and_then(|(p, (camera, at))| camera.viewport_to_world_2d(at, p).ok());
}

/// Left-click: the unit goes there.
fn send_unit(
    mouse: Res<ButtonInput<MouseButton>>,
    cursor: Res<Cursor>,
    units: Query<Entity, With<Mover>>,
    mut commands: Commands,
) {
    if let (true, Some(goal)) = (mouse.just_pressed(MouseButton::Left), cursor.0) {
        for unit in &units {
            commands.entity(unit).insert(PathRequest::new(goal));
        }
    }
}

/// Right-click: a wall appears or goes. The game edits its own tiles; the
/// `NavGrid` follows, and paths it cuts are planned again.
fn toggle_wall(
    mouse: Res<ButtonInput<MouseButton>>,
    cursor: Res<Cursor>,
    maps: Maps,
    storages: Query<&TileStorage>,
    mut tiles: Query<(&mut TileCost, &mut TileTextureIndex)>,
) {
    if mouse.just_pressed(MouseButton::Right)
        && let Some(cursor) = cursor.0
        && let Ok((map, view)) = maps.find(None)
        && let Some(cell) = view.cell_at(cursor)
        && let Some(tile) = storages
            .get(map)
            .ok()
            .and_then(|storage| storage.get(&TilePos::new(cell.x, cell.y)))
        && let Ok((mut cost, mut image)) = tiles.get_mut(tile)
    {
        (*cost, *image) = if *cost == TileCost::WALL {
            (TileCost::GROUND, TileTextureIndex(GROUND))
        } else {
            (TileCost::WALL, TileTextureIndex(ROCK))
        };
    }
}

/// The route the unit walks, or a line to its goal while it walks on
/// instinct.
fn draw_route(units: Query<(&Transform, &Steering)>, mut gizmos: Gizmos) {
    for (transform, steering) in &units {
        let here = transform.translation.truncate();
        match steering {
            Steering::Following { route, .. } => draw(&mut gizmos, here, route),
            Steering::Instinct { goal, .. } => {
                gizmos.line_2d(here, *goal, Color::srgba(1.0, 0.6, 0.2, 0.6));
            }
            Steering::Idle => {}
        }
    }
}

fn draw(gizmos: &mut Gizmos, here: Vec2, route: &Route) {
    gizmos.linestrip_2d(
        std::iter::once(here).chain(route.remaining()),
        Color::srgb(0.3, 0.9, 1.0),
    );
}
