//! The flights waiting for a place in flight: kept in rank order, so that admitting
//! the best is a pop and a new request takes its place in O(log n), and
//! indexed by what they could share, so that a new request finds the
//! waiting flights it could share a search with without looking at the
//! others.

use std::collections::BTreeMap;

use bevy::platform::collections::{HashMap, HashSet};
use bevy::prelude::*;

use super::flight::{Flight, Work};
use super::policy::{Rank, Span, span_union, span_with};
use crate::core::{Cell, UnitKind};

/// Which jobs can share one search: `(map, unit kind, goal cell,
/// priority)`. Only requests of one priority share: a shared search
/// answers its requests in the order it settles their starts, so a more
/// urgent request must not wait in one for less urgent ones.
pub(super) type ShareKey = (Entity, UnitKind, Cell, i32);

impl Flight {
    /// What a flight with these jobs could share, if it can: a shared
    /// flight, or a lone job not yet searched that has not left a shared
    /// flight before.
    pub(super) fn share_key(&self) -> Option<ShareKey> {
        let job = self.lead();
        let shareable = match &self.work {
            Work::Shared(_) => true,
            Work::Alone(search) => search.is_none() && !job.alone && self.jobs.len() == 1,
        };
        shareable.then_some((job.map, job.kind, job.goal, job.priority))
    }

    /// The box its jobs' starts lie in.
    pub(super) fn span(&self) -> Span {
        let first = self.lead().start;
        let span = [first.x, first.y, first.x, first.y];
        self.jobs
            .iter()
            .fold(span, |span, job| span_with(span, job.start))
    }
}

/// The waiting flights, best-ranked last ([`Job::rank`](super::resolve::Job::rank)
/// for the ageing they are keyed for), and an index of those that could
/// share a search.
#[derive(Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct Waiting {
    flights: BTreeMap<Rank, Flight>,
    /// The ageing the keys are ranks for.
    aging: u32,
    /// Per share key, the waiting flights with it and their starts' box,
    /// in the order they started waiting.
    shares: HashMap<ShareKey, Vec<(Rank, Span)>>,
    /// Flights with a share key that started waiting since sharing last
    /// looked for partners ([`Waiting::take_fresh`]), in arrival order.
    fresh: Vec<Rank>,
}

impl Waiting {
    /// Flights waiting.
    pub(super) fn len(&self) -> usize {
        self.flights.len()
    }

    /// Whether none is waiting.
    pub(super) fn is_empty(&self) -> bool {
        self.flights.is_empty()
    }

    /// The waiting flights, worst first.
    pub(super) fn iter(&self) -> impl Iterator<Item = &Flight> {
        self.flights.values()
    }

    /// The waiting flights and their ranks, worst first.
    pub(super) fn ranked(&self) -> impl Iterator<Item = (&Rank, &Flight)> {
        self.flights.iter()
    }

    /// The flight of rank `rank`.
    pub(super) fn get(&self, rank: &Rank) -> Option<&Flight> {
        self.flights.get(rank)
    }

    /// The flight of rank `rank`. A change to its jobs must be followed by
    /// [`Waiting::rekey`].
    pub(super) fn get_mut(&mut self, rank: &Rank) -> Option<&mut Flight> {
        self.flights.get_mut(rank)
    }

    /// Keys the flights by their rank for `aging` (again, if it changed).
    pub(super) fn set_aging(&mut self, aging: u32) {
        if aging == self.aging {
            return;
        }
        self.aging = aging;
        let flights = std::mem::take(&mut self.flights);
        // A flight's rank names its best job, whatever the ageing.
        let fresh: HashSet<u64> = self.fresh.drain(..).map(|rank| rank.1.0).collect();
        self.shares.clear();
        for flight in flights.into_values() {
            let was_fresh = flight.jobs.iter().any(|job| fresh.contains(&job.ticket));
            self.insert(flight, was_fresh);
        }
    }

    /// Puts a flight that starts waiting in its place: one that could
    /// share a search is looked at by the next [`Waiting::take_fresh`].
    pub(super) fn push(&mut self, flight: Flight) {
        self.insert(flight, true);
    }

    /// Puts back a flight that waited before (one that lost its place in flight).
    pub(super) fn put_back(&mut self, flight: Flight) {
        self.insert(flight, false);
    }

    fn insert(&mut self, flight: Flight, fresh: bool) -> Rank {
        let rank = flight.rank(self.aging);
        if let Some(key) = flight.share_key() {
            self.shares
                .entry(key)
                .or_default()
                .push((rank, flight.span()));
            if fresh {
                self.fresh.push(rank);
            }
        }
        self.flights.insert(rank, flight);
        rank
    }

    /// The best rank waiting.
    pub(super) fn best_rank(&self) -> Option<Rank> {
        self.flights.last_key_value().map(|(rank, _)| *rank)
    }

    /// Takes the best flight out.
    pub(super) fn pop_best(&mut self) -> Option<Flight> {
        let rank = self.best_rank()?;
        self.take(&rank)
    }

    /// Takes the flight of rank `rank` out.
    pub(super) fn take(&mut self, rank: &Rank) -> Option<Flight> {
        let flight = self.flights.remove(rank)?;
        if let Some(key) = flight.share_key()
            && let Some(list) = self.shares.get_mut(&key)
        {
            list.retain(|(r, _)| r != rank);
            if list.is_empty() {
                self.shares.remove(&key);
            }
        }
        if let Some(i) = self.fresh.iter().position(|r| r == rank) {
            self.fresh.remove(i);
        }
        Some(flight)
    }

    /// Puts the flight of rank `rank` in its place again after its jobs
    /// changed. It keeps its places in the index and among the fresh, so
    /// that the flight requests join first stays first.
    pub(super) fn rekey(&mut self, rank: &Rank) {
        let Some(flight) = self.flights.remove(rank) else {
            return;
        };
        let new = flight.rank(self.aging);
        if let Some(key) = flight.share_key() {
            let list = self.shares.entry(key).or_default();
            match list.iter_mut().find(|(r, _)| r == rank) {
                Some(entry) => *entry = (new, flight.span()),
                None => list.push((new, flight.span())),
            }
        }
        if let Some(r) = self.fresh.iter_mut().find(|r| *r == rank) {
            *r = new;
        }
        self.flights.insert(new, flight);
    }

    /// Waiting flights that hold a search's state.
    pub(super) fn parked(&self) -> usize {
        self.flights.values().filter(|f| f.is_started()).count()
    }

    /// Takes the flight with `entity`'s job out, if one waits.
    pub(super) fn take_with(&mut self, entity: Entity) -> Option<Flight> {
        let rank = self
            .flights
            .iter()
            .find(|(_, f)| f.jobs.iter().any(|job| job.entity == entity))
            .map(|(rank, _)| *rank)?;
        self.take(&rank)
    }

    /// The flights that started waiting with a share key since the last
    /// call, in arrival order.
    pub(super) fn take_fresh(&mut self) -> Vec<Rank> {
        std::mem::take(&mut self.fresh)
    }

    /// The first other waiting flight with `key` whose starts and `span`
    /// pass `fits` (given the box of both).
    pub(super) fn partner(
        &self,
        key: ShareKey,
        not: &Rank,
        span: Span,
        fits: impl Fn(&Flight, Span) -> bool,
    ) -> Option<Rank> {
        self.shares.get(&key)?.iter().find_map(|(rank, theirs)| {
            let flight = self.flights.get(rank).filter(|_| rank != not)?;
            fits(flight, span_union(*theirs, span)).then_some(*rank)
        })
    }
}

#[cfg(feature = "serialize")]
crate::remap::remap_fields!(Waiting { flights, shares });
