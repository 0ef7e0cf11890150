//! Quick paths: on maps with terrain costs, a path found as if all ground
//! cost the same, sent as [`PathStatus::Provisional`] so that a unit sets
//! off along a sensible route while its real search waits its turn (see
//! [`PathfindingSettings::refine`]).

use bevy::prelude::*;

use super::super::result::PathStatus;
use super::delivery::Found;
use super::flights::Work;
use super::resolve::{Job, Plan};
use super::{PathfindingQueue, search_config};
use crate::core::{Search, SearchConfig, SearchStatus};
use crate::maps::Maps;
use crate::schedule::{FrameBudget, PathfindingSettings};

/// Frames a request may wait (for its quick path or its real one) before
/// the quick searches leave half the budget to the searches with real
/// costs: two seconds at 60 frames a second. Until then they may take all
/// of it, so that 1,000 units ordered at once on a 512×512 terrain map all
/// get a quick path in about 70 frames rather than 140, for about 5 more
/// frames (of 3,000) until the last real path.
const QUICK_FIRST_FRAMES: u64 = 120;

/// The heuristic weight of quick searches. On flat costs a weighted A*
/// heads almost straight for the goal: on random512-10-0 it expands about
/// a tenth of what a jump point search charges (scan steps included), for
/// a path at most this factor longer on flat ground (in practice a few
/// per cent).
const QUICK_WEIGHT: f32 = 1.5;

/// A quick search under way, kept between frames like any search.
pub(super) struct QuickSearch {
    /// The ticket of its job.
    ticket: u64,
    /// The grid version its cells were chosen on.
    version: u64,
    /// Times it was made anew because an edit moved its cells.
    setbacks: u32,
    search: Search,
}

impl QuickSearch {
    /// Bytes of memory it holds.
    pub(super) fn memory_bytes(&self) -> usize {
        self.search.memory_bytes()
    }

    /// Gives back its scratch space.
    pub(super) fn into_scratch(self) -> crate::core::Scratch {
        self.search.into_scratch()
    }
}

/// Quick searches before the searches with real costs, on the whole
/// budget while no request has waited [`QUICK_FIRST_FRAMES`], else on up
/// to half of it: one at a time, kept between frames like any search, each
/// for the best-ranked request alone on a map with terrain costs that has
/// neither its quick path nor its real one yet and was not answered in the
/// frame it was made in. A quick path leads where the request's real
/// search would go on the map as it is now ([`Job::plan_now`]): after an
/// edit its cells are chosen again, so a goal made reachable (or cut off)
/// since the request was planned is the quick path's end too. One that
/// edits make start over more than `max_restarts` times is dropped (the
/// request gets its real path only). Its path is sent at the frame's end
/// as [`PathStatus::Provisional`] (unless the real one came too), and the
/// request goes on waiting for its real search.
pub(super) fn run_quick(
    queue: &mut PathfindingQueue,
    settings: &PathfindingSettings,
    budget: &mut FrameBudget,
    maps: &Maps,
) {
    // A unit with no path is worse off than one with a quick path waiting
    // for its real one, so after a burst of orders the quick paths come
    // first. Once a request has waited QUICK_FIRST_FRAMES (for either
    // path), half the budget stays for the searches with real costs, so a
    // steady stream of new requests cannot starve them.
    let oldest = queue
        .waiting
        .iter()
        .chain(&queue.in_flight)
        .flat_map(|flight| &flight.jobs)
        .map(|job| job.frame_requested)
        .min();
    let mut left =
        if oldest.is_some_and(|frame| queue.frame.saturating_sub(frame) >= QUICK_FIRST_FRAMES) {
            settings.nodes_per_frame / 2
        } else {
            settings.nodes_per_frame
        };
    while budget.left() > 0 && left > 0 {
        let quick = match queue.quick.take() {
            Some(quick) => Some(quick),
            None => {
                let Some(ticket) = next_quick(queue, settings.aging_frames, maps) else {
                    return;
                };
                start_quick(queue, ticket, 0, settings, maps)
            }
        };
        let Some(mut quick) = quick.and_then(|quick| keep_up(queue, quick, settings, maps)) else {
            continue;
        };
        // `keep_up` found the job and its map.
        let Some((job, view)) = quick_job(queue, quick.ticket)
            .and_then(|job| Some((job.clone(), maps.get(job.map)?.for_size(job.size))))
        else {
            queue.pool.give(quick.into_scratch());
            continue;
        };
        let search = &mut quick.search;
        let before = search.expansions();
        let status = search.step(view.grid, budget.slice().min(left));
        let used = search.expansions() - before;
        budget.spend(used);
        left = left.saturating_sub(used.min(u32::MAX as u64) as u32);
        if search.restarts().saturating_add(quick.setbacks) > settings.max_restarts {
            // Edits keep hitting it: the real path will do.
            give_up(queue, quick);
            continue;
        }
        if !status.is_finished() {
            queue.quick = Some(quick);
            if used == 0 {
                return;
            }
            continue;
        }
        if status == SearchStatus::Found {
            let found = Found {
                path: search.take_path().unwrap_or_default(),
                expansions: search.expansions(),
                version: view.grid.version(),
            };
            let waited = (queue.frame - job.frame_requested) as u32;
            let result = found.into_result(PathStatus::Provisional, job.map, &view, waited);
            queue.provisional.push((job.entity, result));
        }
        give_up(queue, quick);
    }
}

/// A quick search for the job with `ticket`, between the cells its real
/// search would take on its map as it is now; `None` (and the job wants
/// no quick path any more) when it needs no search.
fn start_quick(
    queue: &mut PathfindingQueue,
    ticket: u64,
    setbacks: u32,
    settings: &PathfindingSettings,
    maps: &Maps,
) -> Option<QuickSearch> {
    let job = quick_job(queue, ticket)?.clone();
    let view = maps.get(job.map).map(|view| view.for_size(job.size));
    let cells = view
        .as_ref()
        .and_then(|view| match job.plan_now(&mut queue.nearest, view) {
            Plan::Search { start, goal } => Some((start, goal)),
            Plan::Answer(..) => None,
        });
    let (Some(view), Some((start, goal))) = (view, cells) else {
        // Its own refresh answers it.
        if let Some(job) = quick_job(queue, ticket) {
            job.quick = false;
        }
        return None;
    };
    let config = SearchConfig {
        size: job.size,
        ignore_costs: true,
        heuristic_weight: QUICK_WEIGHT,
        ..search_config(settings)
    };
    let search = Search::planned(&mut queue.pool, view.grid, start, goal, config);
    Some(QuickSearch {
        ticket,
        version: view.grid.version(),
        setbacks,
        search,
    })
}

/// Brings a quick search up to date: dropped if its job was answered,
/// cancelled or no longer wants it; made anew, if an edit since it was
/// planned moved the cells the job's search would take (counted as a
/// restart).
fn keep_up(
    queue: &mut PathfindingQueue,
    quick: QuickSearch,
    settings: &PathfindingSettings,
    maps: &Maps,
) -> Option<QuickSearch> {
    let version = quick_job(queue, quick.ticket)
        .filter(|job| job.quick)
        .and_then(|job| maps.get(job.map))
        .map(|view| view.grid.version());
    let Some(version) = version else {
        queue.pool.give(quick.into_scratch());
        return None;
    };
    if version == quick.version {
        return Some(quick);
    }
    let (ticket, setbacks) = (quick.ticket, quick.setbacks);
    let moved = start_quick(queue, ticket, setbacks.saturating_add(1), settings, maps);
    match moved {
        Some(fresh)
            if (fresh.search.start(), fresh.search.goal())
                == (quick.search.start(), quick.search.goal()) =>
        {
            // Same cells: the search itself decides whether the edits
            // touch it (`Search::step`).
            queue.pool.give(fresh.into_scratch());
            Some(QuickSearch { version, ..quick })
        }
        moved => {
            queue.pool.give(quick.into_scratch());
            moved
        }
    }
}

/// Ends a quick search: its job wants no other.
fn give_up(queue: &mut PathfindingQueue, quick: QuickSearch) {
    if let Some(job) = quick_job(queue, quick.ticket) {
        job.quick = false;
    }
    queue.pool.give(quick.into_scratch());
}

/// The best-ranked request that still wants a quick path, is searched
/// alone, is on a map with terrain costs (for its unit's size) and went
/// unanswered through the frame it was made in.
fn next_quick(queue: &PathfindingQueue, aging_frames: u32, maps: &Maps) -> Option<u64> {
    // Whether each (map, size) seen has terrain costs, looked up once.
    let mut terrain: Vec<(Entity, u8, bool)> = Vec::new();
    let mut has_terrain = |job: &Job| {
        if let Some(&(.., known)) = terrain
            .iter()
            .find(|(map, size, _)| (*map, *size) == (job.map, job.size))
        {
            return known;
        }
        let known = maps.get(job.map).is_some_and(|view| {
            let view = view.for_size(job.size);
            let class = view.class();
            class.min_walkable_cost() != class.max_walkable_cost()
        });
        terrain.push((job.map, job.size, known));
        known
    };
    queue
        .waiting
        .iter()
        .chain(&queue.in_flight)
        .filter(|flight| !flight.is_shared())
        .map(|flight| flight.lead())
        // A request's first frame goes to its real search: most on a small
        // map end there, and a quick path would only delay them.
        .filter(|job| job.quick && job.frame_requested < queue.frame && has_terrain(job))
        .max_by_key(|job| job.rank(aging_frames))
        .map(|job| job.ticket)
}

/// The job with `ticket`, searched alone, waiting or in flight.
fn quick_job(queue: &mut PathfindingQueue, ticket: u64) -> Option<&mut Job> {
    queue
        .waiting
        .iter_mut()
        .chain(&mut queue.in_flight)
        .filter(|flight| matches!(flight.work, Work::Alone(_)))
        .map(|flight| &mut flight.jobs[0])
        .find(|job| job.ticket == ticket)
}
