//! The armies: three teams of movers in packed squares, drawn as coloured
//! squares, white while selected.

use bevy::prelude::*;
use bevy_ecs_tilemap::tiles::TilePos;
use bevy_frontier::core::Cell;
use bevy_frontier::prelude::*;

use crate::SceneSystems;
use crate::map::{TILE, Terrain};

/// Units on the map.
const UNITS: usize = 240;
/// Unit speed in pixels per second (four tiles).
const SPEED: f32 = 4.0 * TILE;

/// The red team, the one the screenshot script orders across the river.
pub const RED: Color = Color::srgb(0.95, 0.35, 0.3);
/// The blue team, ordered one by one in the screenshot script.
pub const BLUE: Color = Color::srgb(0.35, 0.6, 1.0);
const YELLOW: Color = Color::srgb(1.0, 0.85, 0.3);

/// A unit, with its team colour.
#[derive(Component)]
pub struct Unit {
    pub color: Color,
}

/// On the units the player has selected.
#[derive(Component)]
pub struct Selected;

/// Spawns the armies and colours the selection.
pub struct UnitsPlugin;

impl Plugin for UnitsPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(Startup, spawn_armies)
            .add_systems(Update, show_selection.in_set(SceneSystems::Display));
    }
}

/// Three armies in packed squares on open ground.
fn spawn_armies(mut commands: Commands, terrain: Res<Terrain>) {
    let size = terrain.size();
    let layout = terrain.layout();
    let open: Vec<Cell> = (0..size.y)
        .flat_map(|y| (0..size.x).map(move |x| Cell::new(x, y)))
        .filter(|c| terrain.tile(TilePos::new(c.x, c.y)).0 != NavGrid::BLOCKED)
        .collect();
    let teams = [
        (Vec2::new(0.12, 0.6), RED),
        (Vec2::new(0.1, 0.2), BLUE),
        (Vec2::new(0.7, 0.15), YELLOW),
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
}

fn show_selection(mut units: Query<(&Unit, &mut Sprite, Has<Selected>)>) {
    for (unit, mut sprite, selected) in &mut units {
        sprite.color = if selected { Color::WHITE } else { unit.color };
    }
}
