//! Shared searches: requests with one goal and starts close together put
//! in one flight, whose search is a [`Flood`](crate::core::Flood) run
//! backwards from the goal (see
//! [`PathfindingSettings::share_goals`](crate::schedule::PathfindingSettings::share_goals)).

use bevy::platform::collections::HashMap;

use bevy::prelude::*;

use super::delivery::{Delivery, Found};
use super::flight::{Flight, Flights, SharedWork, Work, reading_cost};
use super::state::PathfindingQueue;
use crate::core::{Cell, UnitKind};
use crate::maps::Maps;
use crate::schedule::FrameBudget;

/// Which jobs can share one search: `(map, unit kind, goal cell,
/// priority)`. Only requests of one priority share: a shared search
/// answers its requests in the order it settles their starts, so a more
/// urgent request must not wait in one for less urgent ones.
type ShareKey = (Entity, UnitKind, Cell, i32);

impl Flight {
    /// What a flight with these jobs could share, if it can: a shared
    /// flight, or a lone job not yet searched that has not left a shared
    /// flight before.
    fn share_key(&self) -> Option<ShareKey> {
        let job = self.lead();
        let shareable = match &self.work {
            Work::Shared(_) => true,
            Work::Alone(search) => search.is_none() && !job.alone && self.jobs.len() == 1,
        };
        shareable.then_some((job.map, job.kind, job.goal, job.priority))
    }

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

/// A box of cells, `[min x, min y, max x, max y]`.
type Span = [u32; 4];

/// Starts of one goal share a search only while they fit in a box this
/// many cells wide, or a quarter of their distance from the goal if that
/// is more: a squad, a base, a crowd at a rally point. Starts spread over
/// the map would make the shared search flood most of it, far more work
/// than a search each.
const SHARE_SPAN: u32 = 16;

/// Fewest requests that share a search. On maps where each would be a jump
/// point search, so is the shared one (a jump point flood), so two already
/// gain.
const MIN_SHARED: usize = 2;

/// `span` grown to hold `cell`.
fn span_with(span: Span, cell: Cell) -> Span {
    let [min_x, min_y, max_x, max_y] = span;
    [
        min_x.min(cell.x),
        min_y.min(cell.y),
        max_x.max(cell.x),
        max_y.max(cell.y),
    ]
}

/// Whether starts within `span` are close enough together, for their
/// distance from `goal`, to share a search (see [`SHARE_SPAN`]).
fn shareable(span: Span, goal: Cell) -> bool {
    let [min_x, min_y, max_x, max_y] = span;
    let gap = |v: u32, low: u32, high: u32| low.saturating_sub(v).max(v.saturating_sub(high));
    let distance = gap(goal.x, min_x, max_x).max(gap(goal.y, min_y, max_y));
    (max_x - min_x).max(max_y - min_y) <= SHARE_SPAN.max(distance / 4)
}

/// Requests that can share one search.
struct Cluster {
    key: ShareKey,
    span: Span,
    /// The shared flight in flight they join.
    in_flight: Option<usize>,
    /// Requests in it.
    jobs: usize,
    /// Where its first waiting flight went in the new waiting list.
    home: Option<usize>,
}

/// Clusters by share key, each key's clusters in the order they were made.
#[derive(Default)]
struct Clusters {
    all: Vec<Cluster>,
    by_key: HashMap<ShareKey, Vec<usize>>,
}

impl Clusters {
    /// The cluster a flight with `key` and these starts joins (a new one
    /// when none of its key has room for them).
    fn join(&mut self, key: ShareKey, flight: &Flight) -> usize {
        let list = self.by_key.entry(key).or_default();
        let grown = |span: Span| {
            flight
                .jobs
                .iter()
                .fold(span, |span, job| span_with(span, job.start))
        };
        for &c in list.iter() {
            let span = grown(self.all[c].span);
            if shareable(span, key.2) {
                self.all[c].span = span;
                self.all[c].jobs += flight.jobs.len();
                return c;
            }
        }
        list.push(self.all.len());
        let first = flight.lead().start;
        self.all.push(Cluster {
            key,
            span: grown([first.x, first.y, first.x, first.y]),
            in_flight: None,
            jobs: flight.jobs.len(),
            home: None,
        });
        self.all.len() - 1
    }
}

/// Puts waiting requests with the same goal together when their starts lie
/// close together ([`shareable`]): each joins a shared flight with its goal
/// (in flight, which answers it at once when it has already settled its
/// start, or waiting), or enough waiting requests with its goal become a
/// shared flight. Waiting searches that have already started alone, and
/// requests that left a shared flight, stay alone. Lists are walked in
/// order, so the result never depends on hash order.
pub(super) fn share_goals(
    queue: &mut PathfindingQueue,
    maps: &Maps,
    budget: &mut FrameBudget,
    delivery: &mut Delivery,
) {
    let Flights {
        in_flight,
        pool,
        waiting,
        reading_debt: debt,
        ..
    } = &mut queue.flights;
    // A flight pinned to a copy older than its map serves only the
    // requests it has: one made since the edits must not be answered from
    // the map as it was before them.
    let behind = |flight: &Flight| {
        flight.pinned.as_ref().is_some_and(|copy| {
            maps.get(flight.lead().map)
                .is_none_or(|view| view.grid.version() != copy.version())
        })
    };
    let mut clusters = Clusters::default();
    for (i, flight) in in_flight.iter().enumerate() {
        if behind(flight) {
            continue;
        }
        if let Some(key) = flight.share_key().filter(|_| flight.is_shared()) {
            let c = clusters.join(key, flight);
            clusters.all[c].in_flight.get_or_insert(i);
        }
    }
    let waiting = std::mem::take(waiting);
    let cluster_of: Vec<Option<usize>> = waiting
        .iter()
        .map(|flight| {
            let key = flight.share_key().filter(|_| !behind(flight))?;
            Some(clusters.join(key, flight))
        })
        .collect();
    let mut ready = Vec::new();
    let mut late = Vec::new();
    let mut kept: Vec<Flight> = Vec::with_capacity(waiting.len());
    for (flight, cluster) in waiting.into_iter().zip(cluster_of) {
        let Some(cluster) = cluster.map(|c| &mut clusters.all[c]) else {
            kept.push(flight);
            continue;
        };
        if cluster.in_flight.is_none() && cluster.jobs < MIN_SHARED {
            kept.push(flight);
            continue;
        }
        let home = match (cluster.in_flight, cluster.home) {
            (Some(i), _) => &mut in_flight[i],
            (None, Some(i)) => &mut kept[i],
            (None, None) => {
                cluster.home = Some(kept.len());
                let mut flight = flight;
                flight.make_shared();
                kept.push(flight);
                continue;
            }
        };
        home.make_shared();
        let jobs = flight.land(pool);
        let key = cluster.key;
        let Some(view) = maps.get(key.0) else {
            home.jobs.extend(jobs);
            continue;
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
                late.push(Flight::new(job));
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
            let current =
                job.grid_version == grid.version() && flood.grid_version() == grid.version();
            let afford = budget.left() > 0;
            match current.then(|| flood.path(grid, job.start)).flatten() {
                Some(path) if afford => {
                    *debt += budget.spend_reading(reading_cost(&path));
                    *served += 1;
                    ready.push((job, path, grid.version()));
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
                    late.push(Flight::new(job));
                }
                None => {
                    flood.add_targets(grid, [job.start]);
                    home.jobs.push(job);
                }
            }
        }
    }
    kept.extend(late);
    queue.flights.waiting = kept;
    queue.flights.waiting_sorted = None;
    let frame = queue.frame;
    for (job, path, version) in ready {
        let Some(view) = maps.get(job.map) else {
            continue;
        };
        let view = view.for_kind(job.kind);
        queue.flights.live.remove(&job.entity);
        let found = Found {
            path,
            expansions: 0,
            version,
        };
        delivery.deliver(&job, job.found_status(), found, &view, frame);
    }
}
