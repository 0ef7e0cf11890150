//! Handing results to their units: the `PathResult` component, the
//! `PathReady` event and message, and `PathInvalidated` for a path found on
//! a copy of the map that an edit since has touched.

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;

use super::super::index::changed_since;
use super::super::result::{
    InvalidReason, PathFailed, PathInvalidated, PathReady, PathResult, PathStatus,
};
use super::super::stats::PathfindingStats;
use super::resolve::Job;
use crate::checksum::FrontierChecksum;
use crate::core::{Cell, Path, Search, SearchStatus};
use crate::maps::MapView;

/// Folds a result into the frame's checksum: what it says, never whose it
/// is (the delivery order says that, and entity ids would differ).
#[inline(never)] // named in profiles: what the checksum costs
fn fold_result(checksum: &mut FrontierChecksum, result: &PathResult) {
    let status = match result.status {
        PathStatus::Complete => 0,
        PathStatus::Provisional => 1,
        PathStatus::NearestReachable => 2,
        PathStatus::Partial => 3,
        PathStatus::Unreachable => 4,
        PathStatus::Invalid(reason) => 1 << 8 | reason as u64,
    };
    checksum.fold([
        status,
        u64::from(result.cost.to_bits()),
        result.grid_version,
        u64::from(result.frames_waited),
        result.expansions,
        u64::from(result.invalidated) | u64::from(result.ends_short) << 1,
        result.cells.len() as u64,
    ]);
    checksum.fold(
        result
            .cells
            .iter()
            .map(|c| u64::from(c.x) << 32 | u64::from(c.y)),
    );
}

/// Hands results to their units: component, event and message.
#[derive(SystemParam)]
pub(crate) struct Delivery<'w, 's> {
    commands: Commands<'w, 's>,
    messages: MessageWriter<'w, PathReady>,
    failed: MessageWriter<'w, PathFailed>,
    invalidated: MessageWriter<'w, PathInvalidated>,
    pub(super) stats: ResMut<'w, PathfindingStats>,
    checksum: Option<ResMut<'w, FrontierChecksum>>,
}

impl Delivery<'_, '_> {
    /// Sends `result` to `entity` three ways at once.
    pub(super) fn send(&mut self, entity: Entity, result: PathResult) {
        if let Some(checksum) = &mut self.checksum {
            fold_result(checksum, &result);
        }
        self.stats.delivered += 1;
        self.stats.delivered_total += 1;
        self.stats.frames_waited_sum += result.frames_waited as u64;
        self.stats.max_frames_waited = self.stats.max_frames_waited.max(result.frames_waited);
        let ready = PathReady {
            entity,
            status: result.status,
            expansions: result.expansions,
            frames_waited: result.frames_waited,
        };
        self.messages.write(ready);
        let failed = (!result.status.has_path()).then_some(PathFailed {
            entity,
            status: result.status,
        });
        if let Some(failed) = failed {
            self.failed.write(failed);
        }
        let cut = result.invalidated.then_some(PathInvalidated { entity });
        if let Some(cut) = cut {
            self.invalidated.write(cut);
        }
        if let Ok(mut unit) = self.commands.get_entity(entity) {
            unit.try_insert(result);
            self.commands.trigger(ready);
            if let Some(failed) = failed {
                self.commands.trigger(failed);
            }
            if let Some(cut) = cut {
                self.commands.trigger(cut);
            }
        }
    }

    /// Answers `entity`'s request on `map` without a search: `status` with
    /// `cells` (a path of one cell, or none) on the grid version `view`
    /// shows, `waited` frames after the request.
    pub(super) fn answer(
        &mut self,
        entity: Entity,
        map: Entity,
        (status, cells): (PathStatus, Vec<Cell>),
        view: &MapView,
        waited: u32,
    ) {
        let found = Found {
            path: Path { cells, cost: 0.0 },
            expansions: 0,
            version: view.grid.version(),
        };
        let result = found.into_result(status, map, view, waited);
        self.send(entity, result);
    }

    /// Answers `job` with `PathStatus::Invalid(reason)`.
    pub(super) fn answer_invalid(&mut self, job: &Job, reason: InvalidReason, frame: u64) {
        let waited = (frame - job.frame_requested) as u32;
        let result = PathResult::without_path(PathStatus::Invalid(reason), Some(job.map), waited);
        self.send(job.entity, result);
    }

    /// Delivers a path found for `job`. Found on a copy of the map (an
    /// older version than `view`'s): flagged at once if an edit since
    /// touches it.
    pub(super) fn deliver(
        &mut self,
        job: &Job,
        status: PathStatus,
        found: Found,
        view: &MapView,
        frame: u64,
    ) {
        let version = found.version;
        let waited = (frame - job.frame_requested) as u32;
        let mut result = found.into_result(status, job.map, view, waited);
        result.invalidated = version != view.grid.version()
            && changed_since(view.size_class(), version, &result.cells);
        self.send(job.entity, result);
    }

    /// Delivers a finished search of `job`'s, found on grid version
    /// `version`; returns the search for its scratch to be pooled.
    pub(super) fn deliver_search(
        &mut self,
        job: &Job,
        mut search: Search,
        view: &MapView,
        version: u64,
        frame: u64,
    ) -> Search {
        let status = match search.status() {
            SearchStatus::Found => job.found_status(),
            SearchStatus::Partial => PathStatus::Partial,
            SearchStatus::Unreachable | SearchStatus::Running => PathStatus::Unreachable,
        };
        let found = Found {
            path: search.take_path().unwrap_or_default(),
            expansions: search.expansions(),
            version,
        };
        self.deliver(job, status, found, view, frame);
        search
    }
}

/// A path and what it took: the expansions spent on it and the grid
/// version it was found on.
pub(super) struct Found {
    pub(super) path: Path,
    pub(super) expansions: u64,
    pub(super) version: u64,
}

impl Found {
    /// The result on `map`, its waypoints placed by `view`, `waited` frames
    /// after the request.
    pub(super) fn into_result(
        self,
        status: PathStatus,
        map: Entity,
        view: &MapView,
        waited: u32,
    ) -> PathResult {
        let cells = self.path.cells;
        PathResult {
            status,
            map: Some(map),
            waypoints: cells.iter().map(|&c| view.cell_to_world(c)).collect(),
            cells,
            size: view.size(),
            class: view.kind().class,
            cost: self.path.cost as f32,
            expansions: self.expansions,
            frames_waited: waited,
            grid_version: self.version,
            invalidated: false,
            ends_short: false,
        }
    }
}
