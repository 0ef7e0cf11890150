//! Paths for units: a [`PathRequest`] on an entity in, a [`PathResult`] on
//! the same entity out, with the [`PathReady`] news on both channels.
//!
//! Requests are resolved to cells on their map, answered at once when no
//! search is needed (bad input, an unreachable goal, start = goal), and
//! otherwise queued. Searches run under the frame's shared
//! [`FrameBudget`](crate::schedule::FrameBudget), the best-ranked first,
//! with their state kept between frames; the [`PathfindingQueue`] holds
//! them.

mod graphs;
mod index;
mod queue;
mod request;
mod result;
mod stats;

use bevy::diagnostic::{Diagnostic, RegisterDiagnostic};
use bevy::ecs::intern::Interned;
use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;

pub use graphs::{BUILD_EXPANSIONS_PER_FRAME, CoarseGraphs, build_frames};
/// What a save holds of the queue's and the index's (`crate::save`).
#[cfg(feature = "serialize")]
pub(crate) use index::PathIndex;
pub use queue::PathfindingQueue;
pub(crate) use queue::locate;
pub use request::{Footprint, MovementClass, PathRequest, PathTarget, Unreachable};
pub(crate) use request::{KindData, unit_kind};
pub use result::{InvalidReason, PathFailed, PathInvalidated, PathReady, PathResult, PathStatus};
pub use stats::PathfindingStats;

use crate::schedule::{FrontierSchedulePlugin, FrontierSystems};

pub mod diagnostics;

/// Interruptible A* for units: [`PathRequest`] in, [`PathResult`] out,
/// never more than
/// [`PathfindingSettings::nodes_per_frame`](crate::schedule::PathfindingSettings::nodes_per_frame)
/// expansions per frame.
///
/// # Systems
/// All in the plugin's schedule (default `Update`), in the chained
/// [`FrontierSystems`] sets:
/// - `Invalidate`: `prepare_maps` labels a new map's regions and warms
///   scratch space for it; `invalidate_paths` flags finished paths that
///   changed cells make illegal (on the path, or beside a diagonal step);
/// - `Collect`: `warn_bad_placement` warns once about a map whose layout or
///   transform cannot place cells; `collect_requests` reads new, changed
///   and removed requests;
/// - `Search`: `run_searches` runs the budgeted searches and delivers
///   results.
pub struct PathfindingPlugin {
    /// The schedule the systems run in.
    pub schedule: Interned<dyn ScheduleLabel>,
}

impl PathfindingPlugin {
    /// The plugin, running in `schedule` (e.g. `FixedUpdate` for a lockstep
    /// simulation).
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
        }
    }
}

impl Default for PathfindingPlugin {
    fn default() -> Self {
        Self::new(Update)
    }
}

impl Plugin for PathfindingPlugin {
    fn build(&self, app: &mut App) {
        FrontierSchedulePlugin::add_once(app, self.schedule);
        crate::maps::register(app);
        app.init_resource::<PathfindingQueue>()
            .init_resource::<index::PathIndex>()
            .init_resource::<PathfindingStats>()
            .add_message::<PathReady>()
            .add_message::<PathFailed>()
            .add_message::<PathInvalidated>()
            .register_type::<PathRequest>()
            .register_type::<Footprint>()
            .register_type::<MovementClass>()
            .register_type::<PathResult>()
            .register_type::<PathTarget>()
            .register_type::<PathStatus>()
            .register_type::<InvalidReason>()
            .register_type::<Unreachable>();
        for path in diagnostics::ALL {
            app.register_diagnostic(Diagnostic::new(path));
        }
        app.add_systems(
            self.schedule,
            (
                (
                    crate::maps::forget_despawned_maps,
                    queue::prepare_maps,
                    index::invalidate_paths,
                )
                    .chain()
                    .in_set(FrontierSystems::Invalidate),
                (crate::maps::warn_bad_placement, queue::collect_requests)
                    .chain()
                    .in_set(FrontierSystems::Collect),
                queue::run_searches.in_set(FrontierSystems::Search),
            ),
        )
        .add_observer(queue::note_removed_request)
        .add_observer(index::note_removed_result);
    }
}
