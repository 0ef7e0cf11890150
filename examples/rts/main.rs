//! The RTS example scene: a bevy_ecs_tilemap map, 240 units, box selection,
//! group and individual orders, walls and terrain edited live, a HUD and a
//! debug overlay.
//!
//! ```text
//! cargo run --release --example rts --features demo [-- --map PATH] [--screenshot PATH --frames N]
//! ```
//!
//! Controls:
//! - left-drag: select units in a box; left-click: select one
//! - right-click: group move of the selection; shift + right-click: each
//!   unit ordered alone
//! - middle-click, or W + left-click: toggle a wall
//! - T + left-click: cycle a tile's terrain cost (ground 1, swamp 4, mud 8)
//! - `+` / `-`: raise or lower the node budget per frame
//! - F1: debug overlay (paths, group paths, search frontiers); F2: regions
//! - arrows or the window's edge: pan; wheel: zoom
//!
//! `--screenshot PATH --frames N` runs N frames with a scripted group order,
//! saves a screenshot of the window to PATH and exits (it works under Xvfb
//! with Mesa's software Vulkan driver).

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::time::Duration;

use bevy::diagnostic::{DiagnosticsStore, FrameTimeDiagnosticsPlugin};
use bevy::input::mouse::{MouseScrollUnit, MouseWheel};
use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, save_to_disk};
use bevy::time::TimeUpdateStrategy;
use bevy::window::PrimaryWindow;
use bevy_ecs_tilemap::prelude::*;
use bevy_frontier::core::movingai::benchmark_cost;
use bevy_frontier::core::{Cell, MovingAiMap};
use bevy_frontier::groups::SharedRoute;
use bevy_frontier::maps::{CellLookup, MapView};
use bevy_frontier::movement::Steering;
use bevy_frontier::pathfinding::PathfindingStats;
use bevy_frontier::prelude::*;
use bevy_frontier::tilemap::tilemap_layout;

/// Pixels per tile.
const TILE: f32 = 16.0;
/// Units on the map.
const UNITS: usize = 240;
/// Unit speed in pixels per second (four tiles).
const SPEED: f32 = 4.0 * TILE;
/// Terrain costs a T-click cycles through, with their tile images.
const TERRAIN: [(u8, u32); 3] = [(1, GROUND), (4, SWAMP), (8, MUD)];

// Tile images in assets/tiles.png (made by tools/make_assets.py).
const GROUND: u32 = 0;
const SWAMP: u32 = 1;
const ROCK: u32 = 2;
const TREES: u32 = 3;
const WATER: u32 = 4;
const MUD: u32 = 5;

#[derive(Resource, Clone)]
struct Options {
    map: PathBuf,
    screenshot: Option<PathBuf>,
    frames: u32,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        map: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/maps/frontier.map"),
        screenshot: None,
        frames: 240,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--map" => options.map = PathBuf::from(value()?),
            "--screenshot" => options.screenshot = Some(PathBuf::from(value()?)),
            "--frames" => {
                let v = value()?;
                options.frames = v
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or(format!("--frames {v:?} is not a positive number"))?;
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(options)
}

fn main() -> AppExit {
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}\nusage: rts [--map PATH] [--screenshot PATH --frames N]");
            return AppExit::error();
        }
    };
    let map = match MovingAiMap::load(&options.map) {
        Ok(map) => map,
        Err(error) => {
            eprintln!("error: {}: {error}", options.map.display());
            return AppExit::error();
        }
    };
    let mut app = App::new();
    app.add_plugins((
        DefaultPlugins
            .set(WindowPlugin {
                primary_window: Some(Window {
                    title: "bevy_frontier: RTS example".into(),
                    resolution: (1280, 800).into(),
                    ..default()
                }),
                ..default()
            })
            .set(ImagePlugin::default_nearest())
            .set(AssetPlugin {
                // The crate's own assets, however the binary is started.
                file_path: concat!(env!("CARGO_MANIFEST_DIR"), "/assets").into(),
                ..default()
            }),
        TilemapPlugin,
        FrontierPlugins::default(),
        DebugDrawPlugin,
        FrameTimeDiagnosticsPlugin::default(),
    ))
    .insert_resource(ClearColor(Color::srgb(0.08, 0.09, 0.1)))
    .insert_resource(Terrain(map))
    .init_resource::<Selection>()
    .init_resource::<OrderTimes>()
    .add_systems(Startup, setup)
    .add_systems(
        Update,
        (
            (select, order, edit_tiles, camera_controls, keys),
            (track_orders, show_selection, hud).chain(),
        )
            .chain()
            .after(FrontierSystems::Last),
    );
    if options.screenshot.is_some() {
        // The same frames on every machine, however slow it renders.
        app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )))
        .add_systems(Update, script);
    }
    app.insert_resource(options);
    app.run()
}

/// The map file the scene was built from.
#[derive(Resource)]
struct Terrain(MovingAiMap);

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

/// A unit, with its team colour.
#[derive(Component)]
struct Unit {
    color: Color,
}

#[derive(Component)]
struct Selected;

#[derive(Component)]
struct HudText;

#[derive(Resource, Default)]
struct Selection {
    drag_from: Option<Vec2>,
}

/// Frames from an order to the unit's path, per unit, and the last 256
/// measured.
#[derive(Resource, Default)]
struct OrderTimes {
    frame: u64,
    pending: HashMap<Entity, u64>,
    recent: VecDeque<u64>,
}

fn setup(mut commands: Commands, terrain: Res<Terrain>, assets: Res<AssetServer>) {
    let map = &terrain.0;
    let size = TilemapSize {
        x: map.width,
        y: map.height,
    };
    let tile_size = TilemapTileSize { x: TILE, y: TILE };
    let grid_size: TilemapGridSize = tile_size.into();
    let anchor = TilemapAnchor::Center;
    let tilemap = commands.spawn_empty().id();
    let mut storage = TileStorage::empty(size);
    let mut open = Vec::new();
    for row in 0..size.y {
        for x in 0..size.x {
            // The file's first row is the top of the map.
            let position = TilePos {
                x,
                y: size.y - 1 - row,
            };
            let (cost, image) = terrain_of(map.terrain_at(Cell::new(x, row)).unwrap_or(b'@'));
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
            if cost != NavGrid::BLOCKED {
                open.push(Cell::new(position.x, position.y));
            }
        }
    }
    commands.entity(tilemap).insert(TilemapBundle {
        grid_size,
        map_type: TilemapType::Square,
        size,
        storage,
        texture: TilemapTexture::Single(assets.load("tiles.png")),
        tile_size,
        anchor,
        ..default()
    });
    let layout = tilemap_layout(&size, &grid_size, &tile_size, &anchor);

    // Three armies in packed squares on open ground.
    let teams = [
        (Vec2::new(0.12, 0.6), Color::srgb(0.95, 0.35, 0.3)),
        (Vec2::new(0.1, 0.2), Color::srgb(0.35, 0.6, 1.0)),
        (Vec2::new(0.7, 0.15), Color::srgb(1.0, 0.85, 0.3)),
    ];
    for (i, (at, color)) in teams.into_iter().enumerate() {
        let count = UNITS / teams.len() + usize::from(i < UNITS % teams.len());
        let centre = Vec2::new(at.x * size.x as f32, at.y * size.y as f32);
        let mut cells = open.clone();
        cells.sort_by(|a, b| {
            let d = |c: &Cell| Vec2::new(c.x as f32, c.y as f32).distance_squared(centre);
            d(a).total_cmp(&d(b))
                .then(a.y.cmp(&b.y))
                .then(a.x.cmp(&b.x))
        });
        for cell in cells.into_iter().take(count) {
            let position = layout.cell_center(cell);
            commands.spawn((
                Unit { color },
                Mover { speed: SPEED },
                Sprite::from_color(color, Vec2::splat(TILE * 0.8)),
                Transform::from_translation(position.extend(5.0)),
            ));
        }
    }

    // The whole map in the 1280×800 window to begin with.
    let fit = (size.x as f32 * TILE / 1280.0).max(size.y as f32 * TILE / 800.0);
    commands.spawn((
        Camera2d,
        Projection::Orthographic(OrthographicProjection {
            scale: fit * 1.02,
            ..OrthographicProjection::default_2d()
        }),
    ));
    commands.spawn((
        HudText,
        Text::new(""),
        TextFont::from_font_size(13.0),
        Node {
            position_type: PositionType::Absolute,
            top: Val::Px(8.0),
            left: Val::Px(8.0),
            padding: UiRect::all(Val::Px(6.0)),
            ..default()
        },
        BackgroundColor(Color::srgba(0.0, 0.0, 0.0, 0.6)),
    ));
}

/// The world position under the mouse.
fn cursor_world(
    windows: &Query<&Window, With<PrimaryWindow>>,
    cameras: &Query<(&Camera, &GlobalTransform)>,
) -> Option<Vec2> {
    let cursor = windows.single().ok()?.cursor_position()?;
    let (camera, transform) = cameras.single().ok()?;
    camera.viewport_to_world_2d(transform, cursor).ok()
}

/// Whether a left click edits tiles rather than selecting.
fn editing(keys: &ButtonInput<KeyCode>) -> bool {
    keys.pressed(KeyCode::KeyW) || keys.pressed(KeyCode::KeyT)
}

#[allow(clippy::too_many_arguments)]
fn select(
    mouse: Res<ButtonInput<MouseButton>>,
    keys: Res<ButtonInput<KeyCode>>,
    windows: Query<&Window, With<PrimaryWindow>>,
    cameras: Query<(&Camera, &GlobalTransform)>,
    units: Query<(Entity, &Transform), With<Unit>>,
    mut selection: ResMut<Selection>,
    mut commands: Commands,
    mut gizmos: Gizmos,
) {
    let Some(cursor) = cursor_world(&windows, &cameras) else {
        return;
    };
    if mouse.just_pressed(MouseButton::Left) && !editing(&keys) {
        selection.drag_from = Some(cursor);
    }
    let Some(from) = selection.drag_from else {
        return;
    };
    let (min, max) = (from.min(cursor), from.max(cursor));
    if mouse.pressed(MouseButton::Left) {
        gizmos.rect_2d(
            Isometry2d::from_translation((min + max) / 2.0),
            max - min,
            Color::srgb(0.4, 1.0, 0.4),
        );
        return;
    }
    selection.drag_from = None;
    let positions = units
        .iter()
        .map(|(unit, transform)| (unit, transform.translation.truncate()));
    let chosen: Vec<Entity> = if from.distance(cursor) < 4.0 {
        positions
            .filter(|(_, p)| p.distance(cursor) < TILE * 0.6)
            .min_by(|a, b| a.1.distance(cursor).total_cmp(&b.1.distance(cursor)))
            .map(|(unit, _)| unit)
            .into_iter()
            .collect()
    } else {
        positions
            .filter(|(_, p)| p.cmple(max).all() && p.cmpge(min).all())
            .map(|(unit, _)| unit)
            .collect()
    };
    for (unit, _) in &units {
        commands.entity(unit).remove::<Selected>();
    }
    for unit in chosen {
        commands.entity(unit).insert(Selected);
    }
}

fn order(
    mouse: Res<ButtonInput<MouseButton>>,
    keys: Res<ButtonInput<KeyCode>>,
    windows: Query<&Window, With<PrimaryWindow>>,
    cameras: Query<(&Camera, &GlobalTransform)>,
    selected: Query<Entity, With<Selected>>,
    mut times: ResMut<OrderTimes>,
    mut commands: Commands,
) {
    if !mouse.just_pressed(MouseButton::Right) {
        return;
    }
    let Some(goal) = cursor_world(&windows, &cameras) else {
        return;
    };
    let units: Vec<Entity> = selected.iter().collect();
    if keys.pressed(KeyCode::ShiftLeft) || keys.pressed(KeyCode::ShiftRight) {
        for &unit in &units {
            commands.entity(unit).insert(PathRequest::new(goal));
        }
    } else {
        commands.write_message(GroupMove::new(units.iter().copied(), goal));
    }
    let frame = times.frame;
    times
        .pending
        .extend(units.into_iter().map(|unit| (unit, frame)));
}

#[allow(clippy::too_many_arguments)]
fn edit_tiles(
    mouse: Res<ButtonInput<MouseButton>>,
    keys: Res<ButtonInput<KeyCode>>,
    windows: Query<&Window, With<PrimaryWindow>>,
    cameras: Query<(&Camera, &GlobalTransform)>,
    maps: Query<(&NavGrid, &GridLayout, Option<&Transform>, &TileStorage)>,
    mut tiles: Query<(&mut TileCost, &mut TileTextureIndex)>,
) {
    let wall = mouse.just_pressed(MouseButton::Middle)
        || (keys.pressed(KeyCode::KeyW) && mouse.just_pressed(MouseButton::Left));
    let cycle = keys.pressed(KeyCode::KeyT) && mouse.just_pressed(MouseButton::Left);
    if !wall && !cycle {
        return;
    }
    let Some(cursor) = cursor_world(&windows, &cameras) else {
        return;
    };
    let Ok((grid, layout, transform, storage)) = maps.single() else {
        return;
    };
    let CellLookup::Inside(cell) = MapView::new(grid, layout, transform).world_to_cell(cursor)
    else {
        return;
    };
    let Some(tile) = storage.get(&TilePos::new(cell.x, cell.y)) else {
        return;
    };
    let Ok((mut cost, mut image)) = tiles.get_mut(tile) else {
        return;
    };
    let (new_cost, new_image) = if wall {
        if cost.0 == NavGrid::BLOCKED {
            (1, GROUND)
        } else {
            (NavGrid::BLOCKED, ROCK)
        }
    } else {
        let at = TERRAIN.iter().position(|&(c, _)| c == cost.0);
        TERRAIN[at.map_or(0, |i| (i + 1) % TERRAIN.len())]
    };
    *cost = TileCost(new_cost);
    *image = TileTextureIndex(new_image);
}

fn camera_controls(
    time: Res<Time<Real>>,
    keys: Res<ButtonInput<KeyCode>>,
    mut wheel: MessageReader<MouseWheel>,
    windows: Query<&Window, With<PrimaryWindow>>,
    mut cameras: Query<(&mut Transform, &mut Projection), With<Camera2d>>,
) {
    let Ok((mut transform, mut projection)) = cameras.single_mut() else {
        return;
    };
    let Projection::Orthographic(projection) = &mut *projection else {
        return;
    };
    for event in wheel.read() {
        let lines = match event.unit {
            MouseScrollUnit::Line => event.y,
            MouseScrollUnit::Pixel => event.y / 40.0,
        };
        projection.scale = (projection.scale * 1.1f32.powf(-lines)).clamp(0.25, 4.0);
    }
    let mut pan = Vec2::ZERO;
    for (key, direction) in [
        (KeyCode::ArrowLeft, Vec2::NEG_X),
        (KeyCode::ArrowRight, Vec2::X),
        (KeyCode::ArrowUp, Vec2::Y),
        (KeyCode::ArrowDown, Vec2::NEG_Y),
    ] {
        if keys.pressed(key) {
            pan += direction;
        }
    }
    if let Ok(window) = windows.single()
        && let Some(cursor) = window.cursor_position()
    {
        const EDGE: f32 = 8.0;
        let size = window.size();
        if cursor.x < EDGE {
            pan.x -= 1.0;
        }
        if cursor.x > size.x - EDGE {
            pan.x += 1.0;
        }
        if cursor.y < EDGE {
            pan.y += 1.0;
        }
        if cursor.y > size.y - EDGE {
            pan.y -= 1.0;
        }
    }
    let speed = 600.0 * projection.scale;
    transform.translation += (pan.normalize_or_zero() * speed * time.delta_secs()).extend(0.0);
}

fn keys(
    keys: Res<ButtonInput<KeyCode>>,
    mut settings: ResMut<PathfindingSettings>,
    mut gizmos: ResMut<GizmoConfigStore>,
) {
    let (overlay, draw) = gizmos.config_mut::<FrontierGizmos>();
    if keys.just_pressed(KeyCode::Equal) || keys.just_pressed(KeyCode::NumpadAdd) {
        settings.nodes_per_frame = settings.nodes_per_frame.saturating_mul(2).min(1 << 20);
    }
    if keys.just_pressed(KeyCode::Minus) || keys.just_pressed(KeyCode::NumpadSubtract) {
        settings.nodes_per_frame = (settings.nodes_per_frame / 2).max(16);
    }
    if keys.just_pressed(KeyCode::F1) {
        overlay.enabled = !overlay.enabled;
    }
    if keys.just_pressed(KeyCode::F2) {
        draw.regions = !draw.regions;
        overlay.enabled |= draw.regions;
    }
}

/// Frames from order to path: a unit has its path once it follows a route
/// (or was answered without one).
fn track_orders(mut times: ResMut<OrderTimes>, units: Query<&Steering>) {
    times.frame += 1;
    let frame = times.frame;
    let mut done = Vec::new();
    times.pending.retain(|&unit, &mut ordered| {
        let waiting = matches!(units.get(unit), Ok(Steering::Instinct { .. }));
        if !waiting && frame > ordered + 1 {
            done.push(frame - ordered - 1);
        }
        waiting || frame <= ordered + 1
    });
    for frames in done {
        if times.recent.len() == 256 {
            times.recent.pop_front();
        }
        times.recent.push_back(frames);
    }
}

fn show_selection(mut units: Query<(&Unit, &mut Sprite, Has<Selected>)>) {
    for (unit, mut sprite, selected) in &mut units {
        sprite.color = if selected { Color::WHITE } else { unit.color };
    }
}

fn hud(
    settings: Res<PathfindingSettings>,
    stats: Res<PathfindingStats>,
    times: Res<OrderTimes>,
    diagnostics: Res<DiagnosticsStore>,
    gizmos: Res<GizmoConfigStore>,
    selected: Query<(), With<Selected>>,
    mut text: Query<&mut Text, With<HudText>>,
) {
    let Ok(mut text) = text.single_mut() else {
        return;
    };
    let (overlay, draw) = gizmos.config::<FrontierGizmos>();
    let fps = diagnostics
        .get(&FrameTimeDiagnosticsPlugin::FPS)
        .and_then(|fps| fps.smoothed())
        .unwrap_or(0.0);
    let (mean, worst) = match times.recent.len() {
        0 => (0.0, 0),
        n => (
            times.recent.iter().sum::<u64>() as f64 / n as f64,
            times.recent.iter().copied().max().unwrap_or(0),
        ),
    };
    text.0 = format!(
        "node budget per frame: {} (+/-)\n\
         expansions this frame: {}\n\
         searches in flight: {}   queued: {}\n\
         frames from order to path: mean {mean:.1}, worst {worst} (last {} units)\n\
         selected: {}   FPS: {fps:.0}\n\
         overlay (F1): {}   regions (F2): {}\n\
         drag: select   right-click: group move   shift+right: one by one\n\
         middle or W+click: wall   T+click: terrain cost",
        settings.nodes_per_frame,
        stats.frame_expansions,
        stats.in_flight,
        stats.queued,
        times.recent.len(),
        selected.iter().count(),
        if overlay.enabled { "on" } else { "off" },
        if draw.regions { "on" } else { "off" },
    );
}

/// `--screenshot`: a group order at frame 5, a wall dropped across its path
/// at frame 60,
/// the screenshot at the last frame, then exit.
#[allow(clippy::too_many_arguments)]
fn script(
    options: Res<Options>,
    mut frame: Local<u32>,
    mut gizmos: ResMut<GizmoConfigStore>,
    units: Query<(Entity, &Unit, &Transform)>,
    groups: Query<&SharedRoute>,
    terrain: Res<Terrain>,
    maps: Query<(&NavGrid, &GridLayout, &TileStorage)>,
    mut tiles: Query<(&mut TileCost, &mut TileTextureIndex)>,
    mut times: ResMut<OrderTimes>,
    mut commands: Commands,
    mut exit: MessageWriter<AppExit>,
) {
    *frame += 1;
    let Ok((grid, layout, storage)) = maps.single() else {
        return;
    };
    let last = options.frames;
    if *frame == 5 {
        gizmos.config_mut::<FrontierGizmos>().0.enabled = true;
        // The red army crosses the river; the blue one goes east, alone.
        let goal = layout.cell_center(Cell::new(grid.width() * 3 / 4, grid.height() * 3 / 4));
        let red: Vec<Entity> = units
            .iter()
            .filter(|(_, unit, _)| unit.color == Color::srgb(0.95, 0.35, 0.3))
            .map(|(entity, _, _)| entity)
            .collect();
        commands.write_message(GroupMove::new(red.iter().copied(), goal));
        let east = layout.cell_center(Cell::new(grid.width() * 3 / 5, grid.height() / 5));
        let frame = times.frame;
        for (unit, team, _) in &units {
            if team.color == Color::srgb(0.35, 0.6, 1.0) {
                commands.entity(unit).insert(PathRequest::new(east));
                times.pending.insert(unit, frame);
            }
        }
        times
            .pending
            .extend(red.into_iter().map(|unit| (unit, frame)));
    }
    if *frame == 60.min(last) {
        // A wall across the red army's shared path where it crosses the
        // river: its units re-plan live, round the wall.
        let water = |x: u32, y: u32| {
            let row = grid.height().checked_sub(y + 1);
            row.and_then(|row| terrain.0.terrain_at(Cell::new(x, row))) == Some(b'W')
        };
        let crossing = groups
            .iter()
            .flat_map(|group| group.shared_cells().iter().copied())
            .find(|c| water(c.x, c.y + 1) || c.y > 0 && water(c.x, c.y - 1));
        if let Some(crossing) = crossing {
            for y in crossing.y.saturating_sub(3)..=crossing.y + 3 {
                if let Some(tile) = storage.get(&TilePos::new(crossing.x, y))
                    && let Ok((mut cost, mut image)) = tiles.get_mut(tile)
                    && cost.0 != NavGrid::BLOCKED
                {
                    *cost = TileCost::WALL;
                    *image = TileTextureIndex(ROCK);
                }
            }
        }
    }
    if *frame == last
        && let Some(path) = options.screenshot.clone()
    {
        commands
            .spawn(Screenshot::primary_window())
            .observe(save_to_disk(path));
    }
    // The capture lands a few frames later.
    if *frame >= last + 8 {
        exit.write(AppExit::Success);
    }
}
