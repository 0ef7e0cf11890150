//! The player's hands: box selection, group and one-by-one orders, chases
//! and follows of a unit clicked on, live
//! wall and terrain edits, the camera, and the budget and overlay keys.

use bevy::ecs::system::SystemParam;
use bevy::input::mouse::{MouseScrollUnit, MouseWheel};
use bevy::prelude::*;
use bevy::window::PrimaryWindow;
use bevy_ecs_tilemap::prelude::*;
use bevy_frontier::maps::Maps;
use bevy_frontier::prelude::*;

use crate::SceneSystems;
use crate::hud::OrderTimes;
use crate::map::{GROUND, OPEN, ROCK, TERRAIN, TILE};
use crate::units::{Selected, Unit};

/// Reads the mouse and keyboard.
pub struct InputPlugin;

impl Plugin for InputPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<Selection>().add_systems(
            Update,
            (select, order, edit_tiles, camera_controls, keys).in_set(SceneSystems::Input),
        );
    }
}

/// Where a box selection started.
#[derive(Resource, Default)]
struct Selection {
    drag_from: Option<Vec2>,
}

/// The mouse, in the world.
#[derive(SystemParam)]
struct Cursor<'w, 's> {
    windows: Query<'w, 's, &'static Window, With<PrimaryWindow>>,
    cameras: Query<'w, 's, (&'static Camera, &'static GlobalTransform)>,
}

impl Cursor<'_, '_> {
    /// The world position under the mouse.
    fn world(&self) -> Option<Vec2> {
        let cursor = self.windows.single().ok()?.cursor_position()?;
        let (camera, transform) = self.cameras.single().ok()?;
        camera.viewport_to_world_2d(transform, cursor).ok()
    }
}

/// Whether a left click edits tiles rather than selecting.
fn editing(keys: &ButtonInput<KeyCode>) -> bool {
    keys.pressed(KeyCode::KeyW) || keys.pressed(KeyCode::KeyT)
}

fn select(
    mouse: Res<ButtonInput<MouseButton>>,
    keys: Res<ButtonInput<KeyCode>>,
    cursor: Cursor,
    units: Query<(Entity, &Transform, &Unit)>,
    mut selection: ResMut<Selection>,
    mut commands: Commands,
    mut gizmos: Gizmos,
) {
    let Some(cursor) = cursor.world() else {
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
    let positions = units.iter().map(|(unit, transform, kind)| {
        (
            unit,
            transform.translation.truncate(),
            kind.kind.size() as f32,
        )
    });
    let chosen: Vec<Entity> = if from.distance(cursor) < 4.0 {
        // A click picks the unit whose body it lands on.
        positions
            .filter(|(_, p, size)| p.distance(cursor) < TILE * 0.5 * size)
            .min_by(|a, b| a.1.distance(cursor).total_cmp(&b.1.distance(cursor)))
            .map(|(unit, ..)| unit)
            .into_iter()
            .collect()
    } else {
        positions
            .filter(|(_, p, _)| p.cmple(max).all() && p.cmpge(min).all())
            .map(|(unit, ..)| unit)
            .collect()
    };
    for (unit, ..) in &units {
        commands.entity(unit).remove::<Selected>();
    }
    for unit in chosen {
        commands.entity(unit).insert(Selected);
    }
}

/// How near a unit ordered at another closes in: two tiles (an attack),
/// or, following it, three.
const CHASE_RANGE: f32 = 2.0 * TILE;
const FOLLOW_RANGE: f32 = 3.0 * TILE;

fn order(
    mouse: Res<ButtonInput<MouseButton>>,
    keys: Res<ButtonInput<KeyCode>>,
    cursor: Cursor,
    selected: Query<Entity, With<Selected>>,
    others: Query<(Entity, &Transform, &Unit), Without<Selected>>,
    mut times: ResMut<OrderTimes>,
    mut commands: Commands,
) {
    if !mouse.just_pressed(MouseButton::Right) {
        return;
    }
    let Some(goal) = cursor.world() else {
        return;
    };
    let units: Vec<Entity> = selected.iter().collect();
    // On a unit not selected: chase it (with Ctrl, follow it).
    let target = others
        .iter()
        .map(|(unit, transform, kind)| {
            let at = transform.translation.truncate();
            (
                unit,
                at.distance(goal),
                TILE * 0.5 * kind.kind.size() as f32,
            )
        })
        .filter(|&(_, distance, reach)| distance < reach)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(unit, ..)| unit);
    let control = keys.pressed(KeyCode::ControlLeft) || keys.pressed(KeyCode::ControlRight);
    if let Some(target) = target {
        for &unit in &units {
            let request = if control {
                PathRequest::follow(target, FOLLOW_RANGE)
            } else {
                PathRequest::chase(target, CHASE_RANGE)
            };
            commands.entity(unit).insert(request);
        }
    } else if keys.pressed(KeyCode::ShiftLeft) || keys.pressed(KeyCode::ShiftRight) {
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

fn edit_tiles(
    mouse: Res<ButtonInput<MouseButton>>,
    keys: Res<ButtonInput<KeyCode>>,
    cursor: Cursor,
    maps: Maps,
    storages: Query<&TileStorage>,
    mut tiles: Query<(&mut TileTerrain, &mut TileTextureIndex)>,
) {
    let wall = mouse.just_pressed(MouseButton::Middle)
        || (keys.pressed(KeyCode::KeyW) && mouse.just_pressed(MouseButton::Left));
    let cycle = keys.pressed(KeyCode::KeyT) && mouse.just_pressed(MouseButton::Left);
    if !wall && !cycle {
        return;
    }
    let Some(cursor) = cursor.world() else {
        return;
    };
    let Ok((map, view)) = maps.find(None) else {
        return;
    };
    let (Some(cell), Ok(storage)) = (view.cell_at(cursor), storages.get(map)) else {
        return;
    };
    let Some(tile) = storage.get(&TilePos::new(cell.x, cell.y)) else {
        return;
    };
    let Ok((mut terrain, mut image)) = tiles.get_mut(tile) else {
        return;
    };
    let (new_terrain, new_image) = if wall {
        if terrain.0 == Terrain::WALL {
            (OPEN, GROUND)
        } else {
            (Terrain::WALL, ROCK)
        }
    } else {
        let at = TERRAIN.iter().position(|&(t, _)| t == terrain.0);
        TERRAIN[at.map_or(0, |i| (i + 1) % TERRAIN.len())]
    };
    *terrain = TileTerrain(new_terrain);
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
    maps: Query<&NavGrid>,
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
        // Off, then each class's regions in turn (walkers', boats', ...).
        let classes = maps.iter().map(NavGrid::class_count).max().unwrap_or(1);
        draw.cycle_regions(classes);
        overlay.enabled |= draw.regions;
    }
}
