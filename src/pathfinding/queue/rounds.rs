//! The rounds of the flights: how the searches the queue keeps are
//! admitted to the room in flight, checked against their maps, run in
//! lanes on the frame's budget and landed.

use std::sync::Arc;

use bevy::prelude::*;

use super::delivery::{Delivery, Found};
use super::flight::{Flight, SharedWork, Work};
use super::policy::{evicts, keeps_state};
use super::resolve::{Job, Replan, search_config};
use super::shared::split_alone;
use super::state::PathfindingQueue;
use crate::budget::{FrameBudget, deal, run_lanes};
use crate::core::{Flood, FloodDirection, NavGrid, Search, SearchStatus};
use crate::maps::{MapView, Maps};
use crate::pathfinding::result::InvalidReason;
use crate::schedule::PathfindingSettings;

/// Starts the best waiting requests while places in flight are free, and lets a
/// waiting request that outranks the lowest search in flight take its
/// place. The evicted search waits again with its state kept (up to one
/// kept state per place in flight; beyond that the lowest starts over), and resumes
/// where it stopped when it gets a place in flight back. Ranks never change order
/// over time ([`Job::rank`]), so it cannot throw out the request that
/// evicted it. A shared flight ranks as its best job.
pub(super) fn admit(
    queue: &mut PathfindingQueue,
    settings: &PathfindingSettings,
    maps: &Maps,
    delivery: &mut Delivery,
) {
    let places = settings.max_in_flight.max(1);
    let aging = settings.aging_frames;
    queue.flights.waiting.set_aging(aging);
    loop {
        let Some(best_rank) = queue.flights.waiting.best_rank() else {
            return;
        };
        if queue.flights.in_flight.len() >= places {
            let Some(worst) = (0..queue.flights.in_flight.len())
                .min_by_key(|&i| queue.flights.in_flight[i].rank(aging))
            else {
                return;
            };
            if !evicts(best_rank, queue.flights.in_flight[worst].rank(aging)) {
                return;
            }
            let mut evicted = queue.flights.in_flight.swap_remove(worst);
            if !keeps_state(queue.flights.waiting.parked(), places) {
                evicted.reset(&mut queue.flights.pool);
            }
            // In its place in the rank order: it ranks below the best.
            queue.flights.waiting.put_back(evicted);
            continue;
        }
        let Some(flight) = queue.flights.waiting.pop_best() else {
            return;
        };
        if let Some(flight) = refresh(queue, flight, settings.max_restarts, maps, delivery) {
            queue.flights.in_flight.push(flight);
        }
    }
}

/// Checks a flight against its map as it is now, before it runs. Jobs on
/// a removed map are answered `MapRemoved`. After edits, each job's cells
/// are chosen again from where its unit stood ([`Job::replan`]; on a
/// replaced map, found again from the request): the same cells keep the
/// search (which itself carries on or starts over, see `Search::step`),
/// other cells start a new one (a job of a shared flight whose goal moved
/// waits for a search of its own; one whose start moved becomes a new
/// target of the shared search), and a job that needs no search any more
/// is answered. A flight whose searches edits made start over
/// `max_restarts` times in all is pinned to a copy of the map as it is
/// now, and finishes there; if the map is replaced (a new `NavGrid`), the
/// copy is made anew from the new map, up to `max_restarts` times (at
/// least once). `None` when no job is left in the flight.
pub(super) fn refresh(
    queue: &mut PathfindingQueue,
    mut flight: Flight,
    max_restarts: u32,
    maps: &Maps,
    delivery: &mut Delivery,
) -> Option<Flight> {
    let frame = queue.frame;
    let Some(view) = maps.get(flight.lead().map) else {
        for job in flight.land(&mut queue.flights.pool) {
            queue.flights.answered(job.entity);
            delivery.answer_invalid(&job, InvalidReason::MapRemoved, frame);
        }
        return None;
    };
    let view = view.for_kind(flight.lead().kind);
    let grid = view.grid;
    let version = grid.version();
    if let Some(copy) = &flight.pinned {
        if !grid.rebuilt_since(copy.version()) || flight.repins >= max_restarts.max(1) {
            return Some(flight);
        }
        flight.repins += 1;
        flight.set_back(&mut queue.flights.pool);
    }
    if flight.jobs.iter().all(|job| job.grid_version == version) {
        return Some(flight);
    }
    let goal = flight.lead().goal;
    let mut kept = Vec::with_capacity(flight.jobs.len());
    for mut job in std::mem::take(&mut flight.jobs) {
        let moved = match job.replan(&mut queue.plans.nearest, &view) {
            Replan::Answer(status, cells) => {
                queue.flights.answered(job.entity);
                let waited = (frame - job.frame_requested) as u32;
                delivery.answer(job.entity, job.map, (status, cells), &view, waited);
                continue;
            }
            Replan::Same => false,
            Replan::Moved => true,
        };
        match &mut flight.work {
            Work::Alone(_) => {
                if moved {
                    flight.set_back(&mut queue.flights.pool);
                }
                kept.push(job);
            }
            Work::Shared(_) if job.goal != goal => {
                queue.flights.wait(Flight::new(job));
            }
            Work::Shared(shared) => {
                if let Some(flood) = shared.flood.as_mut().filter(|_| moved) {
                    flood.add_targets(grid, [job.start]);
                }
                kept.push(job);
            }
        }
    }
    flight.jobs = kept;
    if flight.jobs.is_empty() {
        flight.land(&mut queue.flights.pool);
        return None;
    }
    let set_back = flight.is_started() || flight.setbacks > 0;
    if set_back && flight.restarts() >= max_restarts {
        let copy = queue
            .plans
            .copies
            .entry((flight.lead().map, version))
            .or_insert_with(|| Arc::new(grid.clone()));
        flight.pinned = Some(copy.clone());
    }
    Some(flight)
}

/// Sets up a flight's search (its own [`Search`], or a shared [`Flood`]
/// from the goal towards every job's start) when it first gets budget.
/// `None` when the flight dissolved instead: a shared flight whose goal
/// cannot be searched from sends its jobs back to wait alone.
fn prepare(
    queue: &mut PathfindingQueue,
    mut flight: Flight,
    view: &MapView,
    settings: &PathfindingSettings,
) -> Option<Flight> {
    let grid = flight.pinned.clone();
    let grid = grid.as_deref().unwrap_or(view.grid);
    let lead = &flight.jobs[0];
    match &mut flight.work {
        Work::Alone(search) => {
            let config = crate::core::SearchConfig {
                size: lead.kind.size,
                class: lead.kind.class,
                max_expansions: lead.expansion_cap(settings),
                ..search_config(settings)
            };
            // `plan` chose both cells on this grid version.
            search.get_or_insert_with(|| {
                Box::new(Search::planned(
                    queue.flights.pool.take(),
                    grid,
                    lead.start,
                    lead.goal,
                    config,
                ))
            });
        }
        Work::Shared(SharedWork { flood: Some(_), .. }) => {}
        Work::Shared(shared) => {
            let starts = flight.jobs.iter().map(|job| job.start);
            let flood = Flood::with_scratch(
                queue.flights.pool.take(),
                grid,
                lead.kind,
                lead.goal,
                FloodDirection::ToSource,
                starts,
                None,
            );
            match flood {
                Ok(flood) => {
                    let flood = flood.guided(grid);
                    // On maps where each request would be a jump point
                    // search, so is the shared one.
                    let flood = if settings.jump_points {
                        flood.jump_points(grid)
                    } else {
                        flood
                    };
                    shared.flood = Some(Box::new(flood));
                }
                Err(_) => {
                    split_alone(queue, flight);
                    return None;
                }
            }
        }
    }
    Some(flight)
}

/// How many cells nearer its goal (straight, octile) a chase search that
/// stopped at its lookahead leads; `None` for a search that ended.
fn leg_nearer(job: &Job, search: &Search) -> Option<f64> {
    if search.status() != SearchStatus::Partial {
        return None;
    }
    let end = search.path().and_then(|path| path.cells.last().copied());
    let end = end.unwrap_or(job.start);
    Some(job.start.octile_distance(job.goal) - end.octile_distance(job.goal))
}

/// Runs a prepared flight's search for at most `budget` expansions on its
/// grid (`live`, or the copy it is pinned to); returns the expansions
/// spent. Touches nothing but the flight, so flights can advance side by
/// side on several threads.
fn advance(flight: &mut Flight, live: &NavGrid, budget: u32) -> u64 {
    let Flight { work, pinned, .. } = flight;
    let grid = pinned.as_deref().unwrap_or(live);
    match work {
        Work::Alone(Some(search)) => {
            let before = search.expansions();
            search.step(grid, budget);
            search.expansions() - before
        }
        Work::Shared(SharedWork {
            flood: Some(flood), ..
        }) => {
            let before = flood.expansions();
            flood.step(grid, budget);
            flood.expansions() - before
        }
        _ => 0,
    }
}

/// Delivers what an advanced flight has found: its own search's result
/// once it has finished, or a shared flight's answer to every job whose
/// start it has settled, each paid for from the frame's budget
/// ([`reading_cost`]; what the budget has no room for is answered in the
/// next frames). Jobs a shared flight cannot serve (it ended
/// without reaching them, or went over the jobs' summed expansion caps)
/// wait again, each for a search of its own. The flight back while it
/// still has a job to serve.
fn finish(
    queue: &mut PathfindingQueue,
    mut flight: Flight,
    view: &MapView,
    settings: &PathfindingSettings,
    budget: &mut FrameBudget,
    delivery: &mut Delivery,
) -> Option<Flight> {
    let frame = queue.frame;
    let pinned = flight.pinned.clone();
    let grid = pinned.as_deref().unwrap_or(view.grid);
    let version = grid.version();
    let jobs = &mut flight.jobs;
    match &mut flight.work {
        Work::Alone(search) => {
            if !search.as_ref()?.status().is_finished() {
                return Some(flight);
            }
            let search = search.take()?;
            let job = jobs.swap_remove(0);
            queue.flights.answered(job.entity);
            let nearer = leg_nearer(&job, &search).filter(|_| job.chase);
            queue.flights.leg_answered(&job, nearer);
            let search = delivery.deliver_search(&job, *search, view, version, frame);
            queue.flights.pool.give(search.into_scratch());
            None
        }
        Work::Shared(shared) => {
            let flood = shared.flood.as_mut()?;
            // A finished flood holding answers is brought up to date with
            // edits since it ended: its paths are read on the grid as it is.
            flood.update(grid);
            let flood = &**flood;
            // Settled starts, answered best-ranked first while the frame's
            // budget has room; the rest are held for the next frames.
            let mut settled: Vec<usize> = (0..jobs.len())
                .filter(|&i| flood.is_settled(grid, jobs[i].start))
                .collect();
            settled.sort_by_key(|&i| std::cmp::Reverse(jobs[i].rank(settings.aging_frames)));
            let mut answered = Vec::with_capacity(settled.len());
            let mut held = false;
            for i in settled {
                if budget.left() == 0 {
                    held = true;
                    break;
                }
                let Some(path) = flood.path(grid, jobs[i].start) else {
                    continue;
                };
                queue.flights.read_back(budget, &path);
                let expansions = flood.expansions() - shared.reported;
                shared.reported = flood.expansions();
                shared.served += 1;
                answered.push(i);
                let job = &jobs[i];
                queue.flights.answered(job.entity);
                let found = Found {
                    path,
                    expansions,
                    version,
                };
                delivery.deliver(job, job.found_status(), found, view, frame);
            }
            answered.sort_unstable();
            for i in answered.into_iter().rev() {
                jobs.swap_remove(i);
            }
            let cap = jobs
                .first()
                .and_then(|job| job.expansion_cap(settings))
                .map(|cap| cap as u64 * (shared.served + jobs.len() as u64));
            let over_cap = cap.is_some_and(|cap| flood.expansions() >= cap);
            if jobs.is_empty() {
                flight.land(&mut queue.flights.pool);
                None
            } else if held {
                Some(flight)
            } else if flood.is_finished() || over_cap {
                split_alone(queue, flight);
                None
            } else {
                Some(flight)
            }
        }
    }
}

/// The best `count` flights in flight, best first, taken out of the list
/// (which keeps the others in their order).
fn take_best(flights: &mut Vec<Flight>, count: usize, aging: u32) -> Vec<Flight> {
    if count >= flights.len() {
        let mut all = std::mem::take(flights);
        all.sort_by_key(|flight| std::cmp::Reverse(flight.rank(aging)));
        return all;
    }
    let mut best = Vec::with_capacity(count);
    for _ in 0..count {
        let Some(index) = (0..flights.len()).max_by_key(|&i| flights[i].rank(aging)) else {
            break;
        };
        best.push(flights.swap_remove(index));
    }
    best
}

/// Flights dealt to a lane per round when there are several lanes: a lane
/// whose first flight ends early goes on with the next instead of idling
/// until the round ends.
const FLIGHTS_PER_LANE: usize = 4;

/// Flights a round deals to each of `lanes` lanes: one with one lane (the
/// best flight alone, which takes everything it needs first, so results
/// come strictly by priority), [`FLIGHTS_PER_LANE`] with more.
pub(super) fn flights_per_lane(lanes: usize) -> usize {
    if lanes == 1 { 1 } else { FLIGHTS_PER_LANE }
}

/// Spends what is left of the frame's budget on the flights in flight, in
/// rounds: each round admits waiting requests to free places in flight, takes the
/// best flights (one per lane with one lane, [`FLIGHTS_PER_LANE`] per lane
/// with expansions left otherwise), checks them against their maps and
/// sets them up one by one ([`refresh`], [`prepare`]: all that touches the
/// queue), deals them best first to the lanes with the most left and
/// advances them side by side ([`run_lanes`]: [`advance`] touches only the
/// flight, so every thread count gives the same results in the same
/// frames), and delivers what they found in rank order ([`finish`]). Each
/// lane spends its own part of the frame's budget over the rounds, so the
/// lanes do alike work each frame; only the flights dealt hold scratch.
pub(super) fn run_flights(
    queue: &mut PathfindingQueue,
    settings: &PathfindingSettings,
    budget: &mut FrameBudget,
    maps: &Maps,
    delivery: &mut Delivery,
) {
    let lanes = budget.lane_count();
    let per_lane = flights_per_lane(lanes);
    let aging = settings.aging_frames;
    while budget.left() > 0 {
        admit(queue, settings, maps, delivery);
        let open = budget.open_lanes();
        if queue.flights.in_flight.is_empty() || open.is_empty() {
            break;
        }
        let flying = queue.flights.in_flight.len();
        let delivered = delivery.stats.delivered;
        let mut ready: Vec<(Flight, MapView)> = Vec::new();
        for flight in take_best(&mut queue.flights.in_flight, open.len() * per_lane, aging) {
            let Some(flight) = refresh(queue, flight, settings.max_restarts, maps, delivery) else {
                continue;
            };
            let Some(view) = maps.get(flight.lead().map) else {
                continue;
            };
            let view = view.for_kind(flight.lead().kind);
            let fresh = !flight.is_started();
            if let Some(flight) = prepare(queue, flight, &view, settings) {
                if fresh && flight.is_started() {
                    delivery.stats.count_search();
                }
                ready.push((flight, view));
            }
        }
        let items = ready.iter_mut().map(|(flight, view)| (flight, view.grid));
        let mut dealt = deal(lanes, &open, items);
        let spent: u64 = run_lanes(budget, settings.threads, &mut dealt, None, |item, most| {
            let (flight, live) = item;
            advance(flight, live, most)
        })
        .iter()
        .sum();
        drop(dealt);
        for (flight, view) in ready {
            let flight = finish(queue, flight, &view, settings, budget, delivery);
            queue.flights.in_flight.extend(flight);
        }
        let changed = spent > 0
            || delivery.stats.delivered > delivered
            || queue.flights.in_flight.len() != flying;
        if !changed {
            break;
        }
    }
}
