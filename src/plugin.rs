//! [`PathfindingPlugin`], its settings and system sets, and the
//! [`FrontierPlugins`] group.

use std::time::Duration;

use bevy::app::PluginGroupBuilder;
use bevy::diagnostic::{Diagnostic, DiagnosticPath, RegisterDiagnostic};
use bevy::ecs::intern::Interned;
use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;

use crate::layout::GridLayout;
use crate::request::{
    InvalidReason, PathReadyMessage, PathRequest, PathResult, PathStatus, PathTarget, Unreachable,
};
use crate::scheduler::{self, PathfindingQueue, PathfindingStats};

/// How much pathfinding may cost per frame, and how searches behave.
///
/// Added with `init_resource`, so a value the app inserts, before or after
/// adding the plugin, wins.
#[derive(Resource, Clone, Debug, PartialEq, Reflect)]
#[reflect(Resource)]
pub struct PathfindingSettings {
    /// Node expansions all searches together may spend per run of the
    /// plugin's schedule. Counted in expansions, not time, so every machine
    /// finds the same paths in the same frames. 0 pauses searching (requests
    /// that need no search are still answered).
    pub nodes_per_frame: u32,
    /// Searches kept in flight (started, with their state kept between
    /// frames) at once; each holds 16 bytes of scratch per map cell. More
    /// requests wait in a queue.
    pub max_in_flight: usize,
    /// Give up a search after this many expansions and answer
    /// [`PathStatus::Partial`] with a path to the explored cell nearest the
    /// goal. `None`: no cap.
    pub max_expansions_per_request: Option<u32>,
    /// Optional wall-clock cap on the searching per frame, checked every
    /// [`PathfindingSettings::TIME_CHECK_INTERVAL`] expansions. The one
    /// setting that makes results depend on the machine: leave it `None`
    /// for a lockstep game.
    pub max_frame_time: Option<Duration>,
    /// Heuristic weight: 1 gives optimal paths; above 1 fewer expansions
    /// for paths up to that factor longer.
    pub heuristic_weight: f32,
    /// Jump point search on maps where it applies (see
    /// [`SearchConfig::jump_points`](crate::search::SearchConfig::jump_points)).
    pub jump_points: bool,
    /// A waiting request gains one priority level per this many frames
    /// waited, so low-priority requests are served even under a steady
    /// stream of urgent ones. 0 turns ageing off.
    pub aging_frames: u32,
}

impl PathfindingSettings {
    /// Expansions between two clock reads when
    /// [`PathfindingSettings::max_frame_time`] is set.
    pub const TIME_CHECK_INTERVAL: u32 = 256;
}

impl Default for PathfindingSettings {
    fn default() -> Self {
        Self {
            nodes_per_frame: 4096,
            max_in_flight: 8,
            max_expansions_per_request: None,
            max_frame_time: None,
            heuristic_weight: 1.0,
            jump_points: true,
            aging_frames: 120,
        }
    }
}

/// The plugin's system sets, chained in this order in its schedule. Put
/// your own systems `.before(PathfindingSystems::First)` or
/// `.after(PathfindingSystems::Last)` to run around pathfinding.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PathfindingSystems {
    /// Empty; a hook for running before anything else here.
    First,
    /// Maps are brought up to date: bevy_ecs_tilemap maps get and update
    /// their `NavGrid` and `GridLayout` (feature `tilemap`).
    SyncMaps,
    /// Finished paths that cross a cell changed since last frame get
    /// [`PathResult::invalidated`] set and a
    /// [`PathInvalidated`](crate::request::PathInvalidated) event.
    Invalidate,
    /// New, changed and removed [`PathRequest`]s are read: bad and
    /// unreachable ones are answered at once, the rest queued.
    Collect,
    /// Searches run under the per-frame node budget; finished ones are
    /// delivered as [`PathResult`] components, events and messages.
    /// Diagnostics are recorded.
    Search,
    /// Empty; a hook for running after everything else here.
    Last,
}

/// Diagnostic: node expansions spent in the last frame.
pub const EXPANSIONS: DiagnosticPath = DiagnosticPath::const_new("pathfinding/expansions");
/// Diagnostic: searches in flight at the end of the frame.
pub const IN_FLIGHT: DiagnosticPath = DiagnosticPath::const_new("pathfinding/in_flight");
/// Diagnostic: requests waiting for a search slot at the end of the frame.
pub const QUEUED: DiagnosticPath = DiagnosticPath::const_new("pathfinding/queued");
/// Diagnostic: mean frames from request to result of the results delivered
/// in the frame.
pub const FRAMES_TO_RESULT: DiagnosticPath =
    DiagnosticPath::const_new("pathfinding/frames_to_result");
/// Diagnostic: milliseconds the search set took in the frame.
pub const SEARCH_MS: DiagnosticPath = DiagnosticPath::const_new("pathfinding/search_ms");

/// Interruptible A* for units: [`PathRequest`] in, [`PathResult`] out,
/// never more than [`PathfindingSettings::nodes_per_frame`] expansions per
/// frame.
///
/// # Systems
/// All in the plugin's schedule (default `Update`), in the chained
/// [`PathfindingSystems`] sets:
/// - `SyncMaps`: tilemap → `NavGrid` sync (feature `tilemap`);
/// - `Invalidate`: flags finished paths crossing changed cells;
/// - `Collect`: reads new, changed and removed requests;
/// - `Search`: runs the budgeted searches and delivers results.
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
        app.init_resource::<PathfindingSettings>()
            .init_resource::<PathfindingQueue>()
            .init_resource::<PathfindingStats>()
            .add_message::<PathReadyMessage>()
            .register_type::<PathfindingSettings>()
            .register_type::<PathRequest>()
            .register_type::<PathResult>()
            .register_type::<PathTarget>()
            .register_type::<PathStatus>()
            .register_type::<InvalidReason>()
            .register_type::<Unreachable>()
            .register_type::<GridLayout>()
            .register_type::<crate::grid::Cell>();
        for path in [EXPANSIONS, IN_FLIGHT, QUEUED, FRAMES_TO_RESULT, SEARCH_MS] {
            app.register_diagnostic(Diagnostic::new(path));
        }
        app.configure_sets(
            self.schedule,
            (
                PathfindingSystems::First,
                PathfindingSystems::SyncMaps,
                PathfindingSystems::Invalidate,
                PathfindingSystems::Collect,
                PathfindingSystems::Search,
                PathfindingSystems::Last,
            )
                .chain(),
        );
        app.add_systems(
            self.schedule,
            (
                scheduler::invalidate_paths.in_set(PathfindingSystems::Invalidate),
                scheduler::collect_requests.in_set(PathfindingSystems::Collect),
                scheduler::run_searches.in_set(PathfindingSystems::Search),
            ),
        );
    }
}

/// Every bevy_frontier plugin: [`PathfindingPlugin`],
/// [`MovementPlugin`](crate::movement::MovementPlugin) and, with the
/// `tilemap` feature, [`TilemapNavPlugin`](crate::tilemap::TilemapNavPlugin).
pub struct FrontierPlugins;

impl PluginGroup for FrontierPlugins {
    fn build(self) -> PluginGroupBuilder {
        let group = PluginGroupBuilder::start::<Self>()
            .add(PathfindingPlugin::default())
            .add(crate::movement::MovementPlugin::default());
        #[cfg(feature = "tilemap")]
        let group = group.add(crate::tilemap::TilemapNavPlugin::default());
        group
    }
}
