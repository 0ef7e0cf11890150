//! How a body steps on the grid: in small steps, each onto walkable
//! cells and never across a wall's corner, sliding along walls. The walk
//! moves units so, and the gaps avoidance keeps foresee it so.

use bevy::prelude::*;

use crate::maps::MapView;

/// Walks `velocity × seconds` from `position`, sliding along walls as
/// [`walk_instinct`] does: how a unit moves where avoidance set its way.
#[inline] // called across modules in the crowd step's hot loops
pub(crate) fn walk_velocity(view: &MapView, position: &mut Vec2, velocity: Vec2, seconds: f32) {
    let goal = *position + velocity * seconds;
    walk_instinct(view, position, goal, velocity.length() * seconds);
}

/// Walks up to `distance` straight at `goal`, in small steps, each allowed
/// only onto walkable cells and never across a wall's corner; a blocked step
/// slides along the wall (keeps only its x or its y part), and a unit that
/// can do neither stops where it is.
pub(crate) fn walk_instinct(view: &MapView, position: &mut Vec2, goal: Vec2, distance: f32) {
    let mut left = distance.min(position.distance(goal));
    let step_length = view.substep();
    while left > 1e-6 {
        let step = left.min(step_length);
        let direction = (goal - *position).normalize_or_zero();
        if direction == Vec2::ZERO {
            return;
        }
        let wanted = direction * step;
        let moved = [wanted, Vec2::new(wanted.x, 0.0), Vec2::new(0.0, wanted.y)]
            .into_iter()
            .filter(|m| m.length_squared() > 1e-12)
            .find(|&m| view.can_move(*position, *position + m));
        match moved {
            Some(m) => {
                *position += m;
                left -= step;
            }
            None => return,
        }
    }
}
