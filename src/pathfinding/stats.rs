//! What the plugin did in the last frame: [`PathfindingStats`], read by
//! games and benchmarks, written by the queue, the path index and group
//! floods.

use std::time::Duration;

use bevy::prelude::*;

/// What the plugin did in the last frame.
#[derive(Resource, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct PathfindingStats {
    /// Node expansions spent in the last frame, by searches and by group
    /// moves' floods (with `frame_reading`, never above `nodes_per_frame`).
    pub frame_expansions: u64,
    /// Budget spent in the last frame reading paths back from searches
    /// shared by units with one goal (one per 8 cells of a path; see
    /// [`PathfindingSettings::share_goals`](crate::schedule::PathfindingSettings::share_goals)).
    pub frame_reading: u64,
    /// Wall-clock time the plugin's request and search systems took in the
    /// last frame.
    pub frame_time: Duration,
    /// The part of `frame_time` spent flagging finished paths that map
    /// edits cut (`PathInvalidated`).
    pub invalidate_time: Duration,
    /// Results delivered in the last frame.
    pub delivered: usize,
    /// Results delivered since the app started.
    pub delivered_total: u64,
    /// Requests the plugin took in in the last frame (new `PathRequest`s
    /// and changed ones).
    pub requests: usize,
    /// Requests taken in since the app started.
    pub requests_total: u64,
    /// Searches begun in the last frame: a search for one request, or one
    /// shared by requests with one goal (a search that starts over after
    /// an edit is the same search). Requests answered without a search
    /// (an unreachable goal, a start on the goal, bad input) begin none.
    pub searches_started: usize,
    /// Searches begun since the app started.
    pub searches_started_total: u64,
    /// Most frames any result delivered in the last frame waited.
    pub max_frames_waited: u32,
    /// How long each search lane worked in the last frame (group floods,
    /// quick routes and searches; one lane unless
    /// [`PathfindingSettings::search_lanes`](crate::schedule::PathfindingSettings::search_lanes) says more), on whatever thread
    /// ran it: the slowest against the mean says how evenly the frame's
    /// work spread.
    pub lane_times: Vec<Duration>,
    /// How long the last frame waited for a coarse graph's build to finish
    /// on its due frame ([`GraphTakeUp::OnSchedule`](crate::schedule::GraphTakeUp::OnSchedule)):
    /// zero unless the machine was slower or busier than the build's
    /// window assumed.
    pub graph_wait: Duration,
    pub(crate) frames_waited_sum: u64,
}

impl PathfindingStats {
    pub(crate) fn begin_frame(&mut self) {
        *self = Self {
            delivered_total: self.delivered_total,
            requests_total: self.requests_total,
            searches_started_total: self.searches_started_total,
            ..Self::default()
        };
    }

    pub(crate) fn count_request(&mut self) {
        self.requests += 1;
        self.requests_total += 1;
    }

    pub(crate) fn count_search(&mut self) {
        self.searches_started += 1;
        self.searches_started_total += 1;
    }

    /// Mean frames from request to result over the last frame's results.
    pub fn mean_frames_waited(&self) -> Option<f64> {
        (self.delivered > 0).then(|| self.frames_waited_sum as f64 / self.delivered as f64)
    }
}
