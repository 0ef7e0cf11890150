//! The queue as one resource: its frame count and each concept's state
//! behind a type of its own (the flights, the quick routes, one frame's
//! plans), so that the code of each concept takes what it works on.

use bevy::prelude::*;

use super::flight::{SharedWork, Work};
use super::flights::Flights;
use super::quick_routes::QuickRoutes;
use super::resolve::Plans;
use crate::core::{Flood, Search};

/// The plugin's requests: those waiting for a place in flight and those in
/// flight. Read it for [`queued`](Self::queued) and
/// [`in_flight`](Self::in_flight) counts.
#[derive(Resource, Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct PathfindingQueue {
    /// Runs of the plugin's schedule so far.
    pub(super) frame: u64,
    /// Requests waiting and in flight, and the scratch they search in.
    pub(super) flights: Flights,
    /// Quick provisional routes (see
    /// [`PathfindingSettings::refine`](crate::schedule::PathfindingSettings::refine)).
    pub(super) quick: QuickRoutes,
    /// Units whose request was removed (or that were despawned) since
    /// `collect_requests` last ran, in that order.
    pub(super) removed: Vec<Entity>,
    /// Units whose request `collect_requests` reads as new on its next run
    /// whatever its change tick: those a loaded save's game had not read yet.
    pub(super) resumed: Vec<Entity>,
    /// What one frame's planning finds and keeps for the rest of it
    /// (cleared as each frame's run begins, so never saved).
    #[cfg_attr(feature = "serialize", serde(skip))]
    pub(super) plans: Plans,
}

impl PathfindingQueue {
    /// Requests waiting for a place in flight.
    pub fn queued(&self) -> usize {
        self.flights.waiting.len()
    }

    /// Searches started and not yet finished.
    pub fn in_flight(&self) -> usize {
        self.flights.in_flight.len()
    }

    /// Whether no request is waiting or being searched.
    pub fn is_idle(&self) -> bool {
        self.flights.waiting.is_empty() && self.flights.in_flight.is_empty()
    }

    /// Bytes of search memory the queue holds: the scratch space of every
    /// search that has run and not ended (in flight, or waiting after
    /// losing its place in flight), of the quick routes under way, and of the pool
    /// kept for the next searches (see
    /// [`PathfindingSettings::max_in_flight`](crate::schedule::PathfindingSettings::max_in_flight)).
    /// The coarse graphs quick routes run on are the maps' own
    /// ([`CoarseGraphs::memory_bytes`](crate::pathfinding::CoarseGraphs::memory_bytes)).
    pub fn memory_bytes(&self) -> usize {
        self.flights.memory_bytes() + self.quick.memory_bytes()
    }

    /// Runs of the plugin's schedule so far.
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// The searches in flight that have started: the requesting entity,
    /// the map and the search (for drawing frontiers, say).
    pub fn searches(&self) -> impl Iterator<Item = (Entity, Entity, &Search)> {
        self.flights
            .in_flight
            .iter()
            .filter_map(|flight| match &flight.work {
                Work::Alone(Some(search)) => {
                    Some((flight.lead().entity, flight.lead().map, &**search))
                }
                _ => None,
            })
    }

    /// Searches shared by units with one goal, in flight: the jobs' map,
    /// the number of requests still waiting on it, and its search (a
    /// [`Flood`] run backwards from the goal).
    pub fn shared_searches(&self) -> impl Iterator<Item = (Entity, usize, &Flood)> {
        self.flights
            .in_flight
            .iter()
            .filter_map(|flight| match &flight.work {
                Work::Shared(SharedWork {
                    flood: Some(flood), ..
                }) => Some((flight.lead().map, flight.jobs.len(), &**flood)),
                _ => None,
            })
    }
}

#[cfg(feature = "serialize")]
crate::remap::remap_fields!(PathfindingQueue {
    flights,
    quick,
    removed,
    resumed
});

#[cfg(feature = "serialize")]
impl PathfindingQueue {
    /// Units whose request the next run of `collect_requests` reads as new
    /// whatever its change tick (a loaded save's, `crate::save`).
    pub(crate) fn resumed_mut(&mut self) -> &mut Vec<Entity> {
        &mut self.resumed
    }

    /// Those it has not read yet of a restore's (before a frame ran).
    pub(crate) fn resumed(&self) -> &[Entity] {
        &self.resumed
    }
}
