//! The flights the queue holds: those waiting for a place in flight (in rank order,
//! indexed by what they could share) and those in flight, the scratch
//! space their searches take, the tickets that order requests, and the
//! reading of shared searches' paths the budget owes.

use bevy::ecs::entity::{EntityHashMap, EntityHashSet};
use bevy::prelude::*;

use super::flight::{Flight, Work};
use super::policy::{Rank, reading_cost};
use super::resolve::Job;
use super::waiting::Waiting;
use crate::budget::FrameBudget;
use crate::core::{Path, ScratchPool};

/// Stalled legs counted at most: the lookahead is doubled at most this
/// many times (500 × 2²⁴ expansions is more than any map's cells).
const MOST_STALLED_LEGS: u8 = 24;

/// Where a flight is held: waiting, by rank, or in flight, by place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FlightAt {
    Waiting(Rank),
    InFlight(usize),
}

/// The flights the queue holds and what they share: requests waiting for
/// a place in flight and in flight, the scratch space searches take, the tickets that
/// order requests, and the reading of shared searches' paths the budget
/// owes.
#[derive(Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct Flights {
    next_ticket: u64,
    /// Entities with a request waiting or in flight, so that cancelling the
    /// many that have none skips the scans.
    live: EntityHashSet,
    /// In rank order, indexed by what they could share.
    pub(super) waiting: Waiting,
    pub(super) in_flight: Vec<Flight>,
    pub(super) pool: ScratchPool,
    /// Reading back shared searches' paths that a frame's budget had no room
    /// left for: paid first in the next frames.
    reading_debt: u64,
    /// Chasers whose last legs (chase searches stopped at their lookahead)
    /// led them no nearer their target: how many in a row, each doubling
    /// the next search's lookahead (see [`Job::expansion_cap`]). Only read
    /// and written by entity, never walked, so its order cannot matter.
    stalled_legs: EntityHashMap<u8>,
}

impl Flights {
    /// Every flight, waiting and in flight.
    pub(super) fn all(&self) -> impl Iterator<Item = &Flight> {
        self.waiting.iter().chain(&self.in_flight)
    }

    /// Drops `entity`'s job wherever it is.
    pub(super) fn cancel(&mut self, entity: Entity) {
        if !self.live.remove(&entity) {
            return;
        }
        if let Some(mut flight) = self.waiting.take_with(entity) {
            flight.jobs.retain(|job| job.entity != entity);
            if flight.jobs.is_empty() {
                flight.land(&mut self.pool);
            } else {
                // Its rank is its best job's, which may have been this one.
                self.waiting.put_back(flight);
            }
            return;
        }
        let list = &mut self.in_flight;
        if let Some(i) = list
            .iter()
            .position(|f| f.jobs.iter().any(|job| job.entity == entity))
        {
            list[i].jobs.retain(|job| job.entity != entity);
            if list[i].jobs.is_empty() {
                list.swap_remove(i).land(&mut self.pool);
            }
        }
    }

    /// A ticket for a new request of `entity`'s: arrival order, and the
    /// entity counted as having a request.
    pub(super) fn take_ticket(&mut self, entity: Entity) -> u64 {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        self.live.insert(entity);
        ticket
    }

    /// Whether `entity` has a request waiting or in flight.
    pub(super) fn is_live(&self, entity: Entity) -> bool {
        self.live.contains(&entity)
    }

    /// `entity`'s request was removed: its job is dropped, and its legs
    /// forgotten.
    pub(super) fn forget(&mut self, entity: Entity) {
        self.stalled_legs.remove(&entity);
        self.cancel(entity);
    }

    /// Legs in a row that led `entity` no nearer its target.
    pub(super) fn stalled_legs(&self, entity: Entity) -> u8 {
        self.stalled_legs.get(&entity).copied().unwrap_or(0)
    }

    /// `job` (a chase) was answered: with a leg that led it `nearer` cells
    /// closer to its goal (`Some`), or with a whole path (`None`).
    pub(super) fn leg_answered(&mut self, job: &Job, nearer: Option<f64>) {
        match nearer {
            Some(nearer) if nearer < 1.0 => {
                let stalled = job.stalled_legs.saturating_add(1).min(MOST_STALLED_LEGS);
                self.stalled_legs.insert(job.entity, stalled);
            }
            _ => {
                self.stalled_legs.remove(&job.entity);
            }
        }
    }

    /// `entity`'s request is answered: it has none waiting or in flight.
    pub(super) fn answered(&mut self, entity: Entity) {
        self.live.remove(&entity);
    }

    /// Pays what the frame's budget can of the reading of shared searches'
    /// paths that earlier frames had no room for.
    pub(super) fn pay_reading(&mut self, budget: &mut FrameBudget) {
        self.reading_debt = budget.spend_reading(self.reading_debt);
    }

    /// Owes `units` of reading paths back to the next frames.
    pub(super) fn owe_reading(&mut self, units: u64) {
        self.reading_debt += units;
    }

    /// Records `path`'s reading back from a shared search on the frame's
    /// budget, what it has no room for owed to the next frames.
    pub(super) fn read_back(&mut self, budget: &mut FrameBudget, path: &Path) {
        self.reading_debt += budget.spend_reading(reading_cost(path));
    }

    /// Puts a flight in the waiting list.
    pub(super) fn wait(&mut self, flight: Flight) {
        self.waiting.push(flight);
    }

    /// Bytes of scratch space the flights hold, and the pool keeps.
    pub(super) fn memory_bytes(&self) -> usize {
        let work: usize = self
            .all()
            .map(|flight| match &flight.work {
                Work::Alone(search) => search.as_ref().map_or(0, |search| search.memory_bytes()),
                Work::Shared(shared) => shared
                    .flood
                    .as_ref()
                    .map_or(0, |flood| flood.memory_bytes()),
            })
            .sum();
        work + self.pool.memory_bytes()
    }
}

#[cfg(feature = "serialize")]
crate::remap::remap_fields!(Flights {
    live,
    waiting,
    in_flight,
    stalled_legs
});
