//! A mover's body as avoidance and the taking of turns at passages both
//! read it: the [`Avoidance`] component, the query both systems walk the
//! movers with, the body's radius and its speed.

use bevy::ecs::query::QueryData;
use bevy::prelude::*;

use super::seats::Seat;
use super::state::{Motion, Mover, Steering};
use super::tuning::BODY_RADIUS;
use crate::core::MAX_UNIT_SIZE;
use crate::ordinal::Ordinal;
use crate::pathfinding::{Footprint, MovementClass};

/// A mover's body for local avoidance. A [`Mover`] without one avoids
/// others with [`Avoidance::default`].
#[derive(Component, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Component)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct Avoidance {
    /// The body's radius in world units. `None` (the default): 0.45 of its
    /// [`Footprint`]'s side in cells, so units one cell wide pass a bridge
    /// one cell wide in single file.
    pub radius: Option<f32>,
    /// Whether this unit steers round the others (default `true`). A unit
    /// that does not still has a body: the others steer round it and take
    /// the whole work of avoiding.
    pub enabled: bool,
}

impl Default for Avoidance {
    fn default() -> Self {
        Self {
            radius: None,
            enabled: true,
        }
    }
}

impl Avoidance {
    /// The smallest body radius, in cells: a radius below it (0 or a
    /// negative one included) is taken as this.
    pub const MIN_RADIUS_CELLS: f32 = 0.01;

    /// The largest body radius, in cells (the half side of the largest
    /// footprint): a radius above it (`f32::INFINITY` included) is taken
    /// as this. A NaN radius is no radius (the footprint's default).
    pub const MAX_RADIUS_CELLS: f32 = MAX_UNIT_SIZE as f32 / 2.0;

    /// A unit that walks its own way and leaves the avoiding to others.
    pub const OFF: Self = Self {
        radius: None,
        enabled: false,
    };

    /// Avoiding others with a body of `radius` world units.
    pub fn with_radius(radius: f32) -> Self {
        Self {
            radius: Some(radius),
            enabled: true,
        }
    }
}

/// A mover as avoidance (and the taking of turns at passages) reads and
/// writes it.
#[derive(QueryData)]
#[query_data(mutable)]
pub(crate) struct AgentQuery {
    pub(crate) entity: Entity,
    pub(crate) ordinal: &'static Ordinal,
    pub(crate) mover: &'static Mover,
    pub(crate) transform: &'static Transform,
    pub(crate) steering: &'static Steering,
    pub(crate) motion: &'static mut Motion,
    pub(crate) footprint: Option<&'static Footprint>,
    pub(crate) class: Option<&'static MovementClass>,
    pub(crate) avoidance: Option<&'static Avoidance>,
    pub(crate) seat: &'static Seat,
    pub(crate) group: Option<&'static crate::groups::GroupMember>,
}

/// A mover's body radius: its [`Avoidance::radius`] if that is a number,
/// else 0.45 of its footprint's side (`cell`: the map's cell size), and
/// always between [`Avoidance::MIN_RADIUS_CELLS`] and
/// [`Avoidance::MAX_RADIUS_CELLS`] cells.
pub(crate) fn body_radius(
    avoidance: Option<&Avoidance>,
    footprint: Option<&Footprint>,
    cell: f32,
) -> f32 {
    let cell = usable_cell(cell);
    let size = footprint.map_or(1, |f| f.0).clamp(1, MAX_UNIT_SIZE) as f32;
    let radius = avoidance
        .and_then(|a| a.radius)
        .filter(|r| !r.is_nan())
        .unwrap_or(BODY_RADIUS * size * cell);
    radius
        .max(Avoidance::MIN_RADIUS_CELLS * cell)
        .min(Avoidance::MAX_RADIUS_CELLS * cell)
}

/// A mover's speed (`cell`: its map's cell size): 0 when it is NaN or
/// negative, and at most [`Mover::MAX_CELLS_PER_SECOND`] cells a second.
pub(crate) fn speed_of(mover: &Mover, cell: f32) -> f32 {
    mover
        .speed
        .max(0.0)
        .min(Mover::MAX_CELLS_PER_SECOND * usable_cell(cell))
}

/// A map's cell size as the bounds above read it: a positive, finite
/// number (a layout that is neither is no map a unit walks on; 1 then).
fn usable_cell(cell: f32) -> f32 {
    if cell.is_finite() && cell > 0.0 {
        cell
    } else {
        1.0
    }
}
