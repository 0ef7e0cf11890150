//! The armies: three teams of infantry (one tile) and vehicles (two by two
//! tiles, slower), drawn at the size of their bodies, turned the way they
//! go, in their team's colour (white while selected).

use std::collections::HashSet;

use bevy::prelude::*;
use bevy_ecs_tilemap::tiles::TilePos;
use bevy_frontier::core::Cell;
use bevy_frontier::movement::Motion;
use bevy_frontier::prelude::*;

use crate::SceneSystems;
use crate::map::{TILE, Terrain};

/// Units per team.
const PER_TEAM: usize = 80;
/// Vehicles among them.
const VEHICLES: usize = 12;

/// The red team: west of the middle bridge.
pub const RED: Color = Color::srgb(0.95, 0.35, 0.3);
/// The blue team: in the south-west.
pub const BLUE: Color = Color::srgb(0.35, 0.6, 1.0);
/// The yellow team: east of the middle bridge.
pub const YELLOW: Color = Color::srgb(1.0, 0.85, 0.3);

/// What a unit is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One tile, quick, and through passes a vehicle does not fit.
    Infantry,
    /// Two by two tiles, slower.
    Vehicle,
}

impl Kind {
    /// Side of its footprint, in tiles.
    pub fn size(self) -> u8 {
        match self {
            Kind::Infantry => 1,
            Kind::Vehicle => 2,
        }
    }

    /// Speed in pixels per second.
    fn speed(self) -> f32 {
        match self {
            Kind::Infantry => 4.0 * TILE,
            Kind::Vehicle => 2.5 * TILE,
        }
    }
}

/// A unit, with its team colour and kind.
#[derive(Component)]
pub struct Unit {
    pub color: Color,
    pub kind: Kind,
}

/// On the units the player has selected.
#[derive(Component)]
pub struct Selected;

/// Spawns the armies, turns units the way they go and colours the
/// selection.
pub struct UnitsPlugin;

impl Plugin for UnitsPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(Startup, spawn_armies).add_systems(
            Update,
            (face_heading, show_selection).in_set(SceneSystems::Display),
        );
    }
}

/// Where each team stands at the start, as fractions of the map.
pub const TEAMS: [(Vec2, Color); 3] = [
    (Vec2::new(0.34, 0.49), RED),
    (Vec2::new(0.1, 0.2), BLUE),
    (Vec2::new(0.59, 0.55), YELLOW),
];

/// Three armies in packed squares on open ground, vehicles first (nearest
/// the centre), each on tiles no other unit stands on.
fn spawn_armies(mut commands: Commands, terrain: Res<Terrain>, assets: Res<AssetServer>) {
    let size = terrain.size();
    let layout = terrain.layout();
    let open = |x: u32, y: u32| {
        x < size.x && y < size.y && terrain.tile(TilePos::new(x, y)).0 != NavGrid::BLOCKED
    };
    let images = [assets.load("infantry.png"), assets.load("vehicle.png")];
    let mut taken = HashSet::new();
    for (at, color) in TEAMS {
        let centre = Vec2::new(at.x * size.x as f32, at.y * size.y as f32);
        let mut cells: Vec<Cell> = (0..size.y)
            .flat_map(|y| (0..size.x).map(move |x| Cell::new(x, y)))
            .collect();
        cells.sort_by(|a, b| {
            let d = |c: &Cell| Vec2::new(c.x as f32, c.y as f32).distance_squared(centre);
            d(a).total_cmp(&d(b))
                .then(a.y.cmp(&b.y))
                .then(a.x.cmp(&b.x))
        });
        let mut placed = 0;
        for kind in [Kind::Vehicle, Kind::Infantry] {
            let count = if kind == Kind::Vehicle {
                VEHICLES
            } else {
                PER_TEAM - VEHICLES
            };
            let side = kind.size() as u32;
            let mut spawned = 0;
            for &anchor in &cells {
                if spawned == count {
                    break;
                }
                let footprint: Vec<(u32, u32)> = (0..side)
                    .flat_map(|dy| (0..side).map(move |dx| (anchor.x + dx, anchor.y + dy)))
                    .collect();
                let fits = footprint
                    .iter()
                    .all(|&(x, y)| open(x, y) && !taken.contains(&(x, y)));
                if !fits {
                    continue;
                }
                taken.extend(footprint);
                let offset = TILE * (side as f32 - 1.0) / 2.0;
                let position = layout.cell_center(anchor) + Vec2::splat(offset);
                let diameter = 0.9 * side as f32 * TILE;
                commands.spawn((
                    Unit { color, kind },
                    Mover {
                        speed: kind.speed(),
                    },
                    Footprint(kind.size()),
                    Sprite {
                        image: images[usize::from(kind == Kind::Vehicle)].clone(),
                        color,
                        custom_size: Some(Vec2::splat(diameter)),
                        ..default()
                    },
                    Transform::from_translation(position.extend(5.0 + side as f32)),
                ));
                spawned += 1;
                placed += 1;
            }
        }
        debug_assert_eq!(placed, PER_TEAM);
    }
}

/// Units turn the way they walk.
fn face_heading(mut units: Query<(&Motion, &mut Transform), With<Unit>>) {
    for (motion, mut transform) in &mut units {
        let velocity = motion.velocity;
        if velocity.length_squared() > (0.2 * TILE).powi(2) {
            transform.rotation = Quat::from_rotation_z(velocity.y.atan2(velocity.x));
        }
    }
}

fn show_selection(mut units: Query<(&Unit, &mut Sprite, Has<Selected>)>) {
    for (unit, mut sprite, selected) in &mut units {
        sprite.color = if selected { Color::WHITE } else { unit.color };
    }
}
