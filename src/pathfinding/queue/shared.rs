//! Shared searches: requests with one goal and starts close together put
//! in one flight, whose search is a [`Flood`](crate::core::Flood) run
//! backwards from the goal (see
//! [`PathfindingSettings::share_goals`](crate::schedule::PathfindingSettings::share_goals)).

use bevy::platform::collections::HashMap;
use bevy::prelude::*;

use super::delivery::{Delivery, Found};
use super::flight::{Flight, SharedWork, Work};
use super::flights::FlightAt;
use super::policy::{Span, reading_cost, shares, span_union};
use super::resolve::Job;
use super::state::PathfindingQueue;
use super::waiting::ShareKey;
use crate::core::Path;
use crate::maps::Maps;
use crate::schedule::FrameBudget;

impl Flight {
    /// Makes a flight not yet searched a shared one.
    fn make_shared(&mut self) {
        if !self.is_shared() {
            self.work = Work::Shared(SharedWork::default());
        }
    }
}

/// Sends every job of `flight` back to wait for a search of its own.
pub(super) fn split_alone(queue: &mut PathfindingQueue, flight: Flight) {
    for mut job in flight.land(&mut queue.flights.pool) {
        job.alone = true;
        queue.flights.wait(Flight::new(job));
    }
}

/// What joining a flight yields: requests answered from its search at
/// once (with the path and the grid version it was read on), and requests
/// that must wait on their own.
#[derive(Default)]
struct Joined {
    ready: Vec<(Job, Path, u64)>,
    late: Vec<Flight>,
    /// Reading the ready paths back that the frame's budget had no room
    /// for.
    owed: u64,
}

/// Puts each request that started waiting since the last call with a goal
/// another request has, and a start close to theirs (or, for many chasers
/// of one unit, anywhere: [`shares`]), in one flight with them: a shared
/// flight in flight with its goal (which answers it at once when it has
/// already settled its start), or else a
/// waiting flight with its goal, which becomes a shared flight if it was
/// not. Waiting searches that have already started alone, and requests
/// that left a shared flight, stay alone. Only the new requests are looked
/// at, each finding the waiting flights with its goal through the waiting
/// list's index ([`Waiting::partner`](super::waiting::Waiting::partner)),
/// so a request costs the same however many wait; lists are walked in
/// order, so the result never depends on hash order.
pub(super) fn share_goals(
    queue: &mut PathfindingQueue,
    maps: &Maps,
    budget: &mut FrameBudget,
    delivery: &mut Delivery,
) {
    let fresh = queue.flights.waiting.take_fresh();
    if fresh.is_empty() {
        return;
    }
    let flights = &mut queue.flights;
    // A flight pinned to a copy older than its map serves only the
    // requests it has: one made since the edits must not be answered from
    // the map as it was before them.
    let behind = |flight: &Flight| {
        flight.pinned.as_ref().is_some_and(|copy| {
            maps.get(flight.lead().map)
                .is_none_or(|view| view.grid.version() != copy.version())
        })
    };
    // Shared flights in flight (few: one per place in flight), and their starts' box.
    let mut flying: Vec<(ShareKey, Span, usize, bool)> = (flights.in_flight.iter().enumerate())
        .filter(|(_, flight)| flight.is_shared() && !behind(flight))
        .filter_map(|(i, flight)| {
            Some((flight.share_key()?, flight.span(), i, flight.lead().chase))
        })
        .collect();
    // Chase requests new this frame, per goal: many share wherever they
    // start.
    let mut chasers: HashMap<ShareKey, usize> = HashMap::default();
    for rank in &fresh {
        let Some(flight) = flights.waiting.get(rank).filter(|f| f.lead().chase) else {
            continue;
        };
        let Some(key) = flight.share_key() else {
            continue;
        };
        *chasers.entry(key).or_default() += 1;
    }
    let mut joined = Joined::default();
    for rank in fresh {
        let Some(flight) = flights.waiting.get(&rank) else {
            continue;
        };
        let Some(key) = flight.share_key().filter(|_| !behind(flight)) else {
            continue;
        };
        let span = flight.span();
        let chase = flight.lead().chase;
        let many = chasers.get(&key).copied().unwrap_or(0);
        let in_flight = flying.iter_mut().find_map(|(theirs, box_, i, chasing)| {
            let both = span_union(*box_, span);
            let fits = shares(both, key.2, (chase, *chasing), many);
            (*theirs == key && fits).then(|| {
                *box_ = both;
                *i
            })
        });
        let fits = |other: &Flight, both: Span| {
            !behind(other) && shares(both, key.2, (chase, other.lead().chase), many)
        };
        let home = match in_flight {
            Some(i) => FlightAt::InFlight(i),
            None => match flights.waiting.partner(key, &rank, span, fits) {
                Some(home) => FlightAt::Waiting(home),
                None => continue,
            },
        };
        let Some(flight) = flights.waiting.take(&rank) else {
            continue;
        };
        let found = match home {
            FlightAt::InFlight(i) => flights.in_flight.get_mut(i),
            FlightAt::Waiting(home) => flights.waiting.get_mut(&home),
        };
        let Some(found) = found else {
            flights.waiting.put_back(flight);
            continue;
        };
        let jobs = flight.land(&mut flights.pool);
        join(found, jobs, (maps, key), budget, &mut joined);
        if let FlightAt::Waiting(home) = home {
            // Its best job may be one that joined it.
            flights.waiting.rekey(&home);
        }
    }
    flights.owe_reading(joined.owed);
    for flight in joined.late {
        flights.wait(flight);
    }
    let frame = queue.frame;
    for (job, path, version) in joined.ready {
        let Some(view) = maps.get(job.map) else {
            continue;
        };
        let view = view.for_kind(job.kind);
        queue.flights.answered(job.entity);
        let found = Found {
            path,
            expansions: 0,
            version,
        };
        delivery.deliver(&job, job.found_status(), found, &view, frame);
    }
}

/// Puts `jobs` (of share key `key`) in the shared flight `home`, making it
/// one if it is not: each job settled by its search already is answered
/// from it (while the frame's budget can pay for reading its path back),
/// and one it cannot serve waits on its own.
fn join(
    home: &mut Flight,
    jobs: Vec<Job>,
    (maps, key): (&Maps, ShareKey),
    budget: &mut FrameBudget,
    joined: &mut Joined,
) {
    home.make_shared();
    let Some(view) = maps.get(key.0) else {
        home.jobs.extend(jobs);
        return;
    };
    let view = view.for_kind(key.1);
    let grid = home.pinned.as_deref().unwrap_or(view.grid);
    for job in jobs {
        // A flight pinned to a copy answers from that copy without
        // planning its jobs again: a job planned on another version
        // (it waited while edits went on) would be answered for cells
        // the copy does not lead to. It waits to be planned afresh.
        if home
            .pinned
            .as_ref()
            .is_some_and(|copy| job.grid_version != copy.version())
        {
            joined.late.push(Flight::new(job));
            continue;
        }
        let Work::Shared(SharedWork {
            flood: Some(flood),
            served,
            ..
        }) = &mut home.work
        else {
            home.jobs.push(job);
            continue;
        };
        // Settled on another grid version (the flood has not caught up
        // with edits, or the job was planned on a newer map than the
        // flight's copy): the job waits for the flood to run again.
        let current = job.grid_version == grid.version() && flood.grid_version() == grid.version();
        let afford = budget.left() > 0;
        match current.then(|| flood.path(grid, job.start)).flatten() {
            Some(path) if afford => {
                joined.owed += budget.spend_reading(reading_cost(&path));
                *served += 1;
                joined.ready.push((job, path, grid.version()));
            }
            // Settled, but the frame has no room to read it back: the
            // flight answers it in a coming frame.
            Some(_) => home.jobs.push(job),
            // Where a jump point flood's scans have passed, a new start
            // would make it start over: a stream of late requests must
            // not keep it from ending, so this one waits on its own.
            None if !flood.accepts(grid, job.start) => {
                let mut job = job;
                job.alone = true;
                joined.late.push(Flight::new(job));
            }
            None => {
                flood.add_targets(grid, [job.start]);
                home.jobs.push(job);
            }
        }
    }
}
