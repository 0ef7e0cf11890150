//! Paths to the plugin's measurements in Bevy's `DiagnosticsStore`.

use bevy::diagnostic::DiagnosticPath;

/// Node expansions spent in the last frame (searches and group floods).
pub const EXPANSIONS: DiagnosticPath = DiagnosticPath::const_new("pathfinding/expansions");
/// Searches in flight at the end of the frame.
pub const IN_FLIGHT: DiagnosticPath = DiagnosticPath::const_new("pathfinding/in_flight");
/// Requests waiting for a place in flight at the end of the frame.
pub const QUEUED: DiagnosticPath = DiagnosticPath::const_new("pathfinding/queued");
/// Mean frames from request to result of the results delivered in the
/// frame.
pub const FRAMES_TO_RESULT: DiagnosticPath =
    DiagnosticPath::const_new("pathfinding/frames_to_result");
/// Milliseconds the plugin's systems took in the frame.
pub const SEARCH_MS: DiagnosticPath = DiagnosticPath::const_new("pathfinding/search_ms");

/// All of them.
pub(crate) const ALL: [DiagnosticPath; 5] =
    [EXPANSIONS, IN_FLIGHT, QUEUED, FRAMES_TO_RESULT, SEARCH_MS];
