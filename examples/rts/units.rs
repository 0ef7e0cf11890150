//! The armies: three teams of infantry (one tile) and vehicles (two by two
//! tiles, slower), and a flotilla of boats (two by two, on the river only)
//! and hovercraft (one tile, over land and water alike), drawn at the size
//! of their bodies, turned the way they go, in their team's colour (white
//! while selected, grey once stopped in a jam: `Arrival::Blocked`).

use std::collections::HashSet;

use bevy::prelude::*;
use bevy_ecs_tilemap::tiles::TilePos;
use bevy_frontier::core::Cell;
use bevy_frontier::movement::Motion;
use bevy_frontier::prelude::*;

use crate::SceneSystems;
use crate::map::{BOAT, Battlefield, HOVER, LAND, TILE, classes};

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
/// The flotilla: boats on the river south of the middle bridge, hovercraft
/// on its west bank north of it.
pub const NAVY: Color = Color::srgb(0.3, 0.95, 0.8);

/// The flotilla's boats and hovercraft, and where each kind starts (as
/// fractions of the map).
const FLOTILLA: [(Kind, usize, Vec2); 2] = [
    (Kind::Boat, 4, Vec2::new(0.52, 0.38)),
    (Kind::Hover, 6, Vec2::new(0.41, 0.63)),
];

/// What a unit is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One tile, quick, and through passes a vehicle does not fit.
    Infantry,
    /// Two by two tiles, slower.
    Vehicle,
    /// Two by two tiles, on water only.
    Boat,
    /// One tile, over land and water alike.
    Hover,
}

impl Kind {
    /// Side of its footprint, in tiles.
    pub fn size(self) -> u8 {
        match self {
            Kind::Infantry | Kind::Hover => 1,
            Kind::Vehicle | Kind::Boat => 2,
        }
    }

    /// Its movement class.
    pub fn class(self) -> ClassId {
        match self {
            Kind::Infantry | Kind::Vehicle => LAND,
            Kind::Boat => BOAT,
            Kind::Hover => HOVER,
        }
    }

    /// Speed in pixels per second.
    fn speed(self) -> f32 {
        match self {
            Kind::Infantry => 4.0 * TILE,
            Kind::Vehicle => 2.5 * TILE,
            Kind::Boat => 3.0 * TILE,
            Kind::Hover => 5.0 * TILE,
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
/// the centre), then the flotilla, each unit on tiles no other unit stands
/// on and its class may enter.
fn spawn_armies(mut commands: Commands, terrain: Res<Battlefield>, assets: Res<AssetServer>) {
    let size = terrain.size();
    let layout = terrain.layout();
    let classes = classes();
    let open = |kind: Kind, x: u32, y: u32| {
        x < size.x
            && y < size.y
            && classes
                .cost(kind.class(), terrain.tile(TilePos::new(x, y)).0)
                .is_some_and(|cost| cost != NavGrid::BLOCKED)
    };
    let images = [assets.load("infantry.png"), assets.load("vehicle.png")];
    let mut taken = HashSet::new();
    let mut squad = |at: Vec2, color: Color, kinds: &[(Kind, usize)]| {
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
        for &(kind, count) in kinds {
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
                    .all(|&(x, y)| open(kind, x, y) && !taken.contains(&(x, y)));
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
                    MovementClass(kind.class()),
                    Sprite {
                        image: images[usize::from(side == 2)].clone(),
                        color,
                        custom_size: Some(Vec2::splat(diameter)),
                        ..default()
                    },
                    Transform::from_translation(position.extend(5.0 + side as f32)),
                ));
                spawned += 1;
            }
            debug_assert_eq!(spawned, count);
        }
    };
    for (at, color) in TEAMS {
        squad(
            at,
            color,
            &[
                (Kind::Vehicle, VEHICLES),
                (Kind::Infantry, PER_TEAM - VEHICLES),
            ],
        );
    }
    for (kind, count, at) in FLOTILLA {
        squad(at, NAVY, &[(kind, count)]);
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

/// Grey: a unit that gave up in a jam (`MoveBlocked`), until its next
/// order.
const BLOCKED: Color = Color::srgb(0.45, 0.45, 0.45);

fn show_selection(mut units: Query<(&Unit, &mut Sprite, Has<Selected>, Option<&Arrived>)>) {
    for (unit, mut sprite, selected, arrived) in &mut units {
        let blocked = arrived.is_some_and(|a| a.outcome == Arrival::Blocked);
        sprite.color = if selected {
            Color::WHITE
        } else if blocked {
            BLOCKED
        } else {
            unit.color
        };
    }
}
