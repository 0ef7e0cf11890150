//! Units that move at once: instinct steering while the search runs, then
//! path following, in a crowd that keeps its bodies apart.
//!
//! The frame a [`PathRequest`](crate::pathfinding::PathRequest) lands on a
//! [`Mover`], the unit starts walking straight at the goal, sliding along
//! walls (the seed articles' principle of immediate start). When its
//! [`PathResult`](crate::pathfinding::PathResult) arrives it joins the path
//! at the furthest waypoint it can see from where it now stands, so it
//! never walks back to where the order was given, and follows the path
//! with straight segments between waypoints that see each other. A path
//! cut by a map change is planned again while the unit carries on by
//! instinct.
//!
//! Each frame a mover's steering sets the velocity it would like
//! ([`Motion::preferred`]), local avoidance turns it into one that does not
//! run into the others ([`avoidance`]), and the mover walks it on the grid,
//! never into a wall or over a wall's corner. A unit that comes to rest
//! holds its cell (its footprint's cells): a unit arriving where another
//! rests takes the nearest free cell instead, so units ordered one by one
//! to one point stand side by side, and a unit pushed aside walks back.
//!
//! # Layout
//! The files, bottom floor first: each imports only from the floors
//! below it (`tools/import_cycles.py --upward src src/movement`).
//!
//! | floor | file | what it holds |
//! |---|---|---|
//! | state | `state/` | the mover's components ([`Mover`], [`Steering`], [`Motion`]), how an order ends, and the pure state machines: what a unit does (`steer`), its headway, its turn at passages; imports no stage |
//! | state | `seats.rs` | each mover's seat in the crowd's arrays |
//! | state | `settings.rs`, `tuning.rs` | the settings a game changes ([`CrowdSettings`]), and the crate's own numbers, each with its reason |
//! | helpers | `body.rs` | a body as avoidance and the turns read it: [`Avoidance`], radius, speed |
//! | helpers | `parallel.rs` | passes over the movers and the crowd's arrays on the task pool |
//! | helpers | `corridor.rs`, `stepping.rs`, `rest.rs` | joining a path and testing it against edits; stepping on the grid; the cells units rest on |
//! | stage 1 | `orders.rs`, [`chase`] | orders begun, paths joined, cut paths asked again; chases and follows |
//! | stage 2 | `prefer.rs` | each mover's preferred velocity |
//! | stage 3 | [`passage`] | turns at one-lane passages |
//! | stage 4 | [`avoidance`] | ORCA's velocities and the gaps kept |
//! | stage 5 | `walk.rs` | every mover walks its velocity; arrivals, rest places, units blocked too long |
//! | stage 6 | `separate.rs` | bodies still touching pushed apart |
//! | top | `plugin.rs` | the plugins and the stage order ([`CrowdSystems`]) |

mod parallel;

pub mod avoidance;
mod body;
pub mod chase;
mod corridor;
mod orders;
pub mod passage;
mod plugin;
mod prefer;
mod rest;
mod seats;
mod separate;
mod settings;
mod state;
mod stepping;
mod tuning;
mod walk;

pub use body::Avoidance;
pub use chase::{Pursuit, TargetLost};
pub use plugin::{AvoidancePlugin, CrowdSystems, MovementPlugin, PassagesPlugin};
#[expect(deprecated, reason = "the old name, kept for games that use it")]
pub use settings::AvoidanceSettings;
pub use settings::CrowdSettings;
pub use state::route::{Route, SharedWaypoints};
pub use state::{Arrival, Arrived, CrowdState, Motion, MoveBlocked, Mover, Steering, UnitArrived};

pub(crate) use corridor::{Edits, join_path, smooth};
pub(crate) use state::MissesGoal;
pub(crate) use state::steer::{Steer, steer};
/// What a save holds of the crowd (`crate::save`).
#[cfg(feature = "serialize")]
pub(crate) use {
    orders::RouteChecks,
    rest::RestingPlaces,
    seats::{Seat, Seats},
    state::{EndedOrder, OnProvisionalPath},
};
