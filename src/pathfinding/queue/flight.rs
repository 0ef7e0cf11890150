//! A flight: one job's search, or the search jobs with one goal share
//! (the flights the queue holds are in `flights.rs`).

use std::sync::Arc;

use bevy::prelude::*;

use super::policy::Rank;
use super::resolve::Job;
use crate::core::{Flood, NavGrid, ScratchPool, Search};

/// What a flight searches with.
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) enum Work {
    /// One job's own search, made when the flight first gets budget (so
    /// admitting many requests at once does not set up grid-sized scratch
    /// for searches that will not run this frame).
    Alone(Option<Box<Search>>),
    /// Jobs with one goal sharing a search run backwards from it.
    Shared(SharedWork),
}

/// The work of jobs with one goal: a [`Flood`] from the goal towards every
/// job's start, and what it has answered.
#[derive(Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct SharedWork {
    /// Made, like a search, when the flight first gets budget.
    pub(super) flood: Option<Box<Flood>>,
    /// Jobs answered so far.
    pub(super) served: u64,
    /// The flood's expansions when it last answered a job.
    pub(super) reported: u64,
}

/// Jobs and their search, in flight or waiting (a search that lost its
/// place in flight keeps its state and resumes where it was): one job with a
/// [`Search`] of its own, or jobs with one goal sharing a [`Flood`] run
/// backwards from it.
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct Flight {
    /// At least one; all on the same map, of the same size and with the
    /// same goal when shared.
    pub(super) jobs: Vec<Job>,
    pub(super) work: Work,
    /// The map as it was when edits had restarted the search
    /// `max_restarts` times: it finishes on this copy.
    pub(super) pinned: Option<Arc<NavGrid>>,
    /// Times edits made it drop its search: restarts of searches it no
    /// longer has, and plans that moved its cells.
    pub(super) setbacks: u32,
    /// Times its map was replaced while it was pinned, and the copy made
    /// anew from the new map.
    pub(super) repins: u32,
}

impl Flight {
    /// A flight of one job, nothing set up yet.
    pub(super) fn new(job: Job) -> Self {
        Self {
            jobs: vec![job],
            work: Work::Alone(None),
            pinned: None,
            setbacks: 0,
            repins: 0,
        }
    }

    /// The job that stands for the flight: its map, size and (shared) goal.
    pub(super) fn lead(&self) -> &Job {
        &self.jobs[0]
    }

    /// Whether its jobs share a search backwards from their goal.
    pub(super) fn is_shared(&self) -> bool {
        matches!(self.work, Work::Shared(_))
    }

    /// Whether it holds a search's state (and its scratch).
    pub(super) fn is_started(&self) -> bool {
        match &self.work {
            Work::Alone(search) => search.is_some(),
            Work::Shared(shared) => shared.flood.is_some(),
        }
    }

    /// Times edits made its search start over, this search or one it
    /// dropped.
    pub(super) fn restarts(&self) -> u32 {
        let now = match &self.work {
            Work::Alone(Some(search)) => search.restarts(),
            Work::Shared(SharedWork {
                flood: Some(flood), ..
            }) => flood.restarts(),
            _ => 0,
        };
        now.saturating_add(self.setbacks)
    }

    /// Drops the search because edits made it useless; it counts as a
    /// restart.
    pub(super) fn set_back(&mut self, pool: &mut ScratchPool) {
        self.setbacks = self.restarts().saturating_add(1);
        self.reset(pool);
    }

    /// The best rank of its jobs (see [`Job::rank`]).
    pub(super) fn rank(&self, aging_frames: u32) -> Rank {
        self.jobs
            .iter()
            .map(|job| job.rank(aging_frames))
            .max()
            .unwrap_or((i128::MIN, std::cmp::Reverse(u64::MAX)))
    }

    /// Drops the search's state, returning its scratch space to `pool`.
    pub(super) fn reset(&mut self, pool: &mut ScratchPool) {
        match &mut self.work {
            Work::Alone(search) => {
                if let Some(search) = search.take() {
                    pool.give(search.into_scratch());
                }
            }
            Work::Shared(shared) => {
                if let Some(flood) = shared.flood.take() {
                    pool.give(flood.into_scratch());
                }
                // A new flood counts its expansions from zero again.
                shared.reported = 0;
            }
        }
        self.pinned = None;
    }

    /// Ends the flight, returning its scratch space to `pool`.
    pub(super) fn land(mut self, pool: &mut ScratchPool) -> Vec<Job> {
        self.reset(pool);
        self.jobs
    }
}

#[cfg(feature = "serialize")]
crate::remap::remap_fields!(Flight { jobs });
