//! Quick paths: on maps with terrain costs, a path found as if all ground
//! cost the same, sent as [`PathStatus::Provisional`] so that a unit sets
//! off along a sensible route while its real search waits its turn (see
//! [`PathfindingSettings::refine`]).

use std::collections::VecDeque;

use bevy::platform::collections::HashMap;

use bevy::prelude::*;

use super::super::result::{PathResult, PathStatus};
use super::delivery::Found;
use super::flights::Flight;
use super::resolve::{Job, Plan};
use super::{PathfindingQueue, search_config};
use crate::core::{Cell, NavGrid, Scratch, Search, SearchConfig, SearchStatus};
use crate::maps::{MapView, Maps};
use crate::schedule::{FrameBudget, PathfindingSettings, deal, run_lanes, shares};

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

/// Quick searches planned for a lane per round: a lane runs them one after
/// another in one scratch space, so a round covers its whole share.
const QUICK_PLANNED_PER_LANE: usize = 16;

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
    pub(super) fn into_scratch(self) -> Scratch {
        self.search.into_scratch()
    }
}

/// A quick search to start: a job's ticket and the cells its real search
/// would take on its map as it is now.
struct Planned<'a> {
    ticket: u64,
    grid: &'a NavGrid,
    start: Cell,
    goal: Cell,
    config: SearchConfig,
}

/// One lane's quick searches in a round: the one it carries on from an
/// earlier round, then those planned for it, run one after another, each
/// started in the scratch space the one before it left.
#[derive(Default)]
struct QuickLane<'a> {
    current: Option<(QuickSearch, &'a NavGrid)>,
    planned: VecDeque<Planned<'a>>,
    /// Scratch space for the first search started, if none is carried on.
    spare: Option<Scratch>,
    /// Searches that ended: the ticket of each, and the path it found (none
    /// when the goal could not be reached).
    ended: Vec<(u64, Option<Found>)>,
}

impl QuickLane<'_> {
    /// Runs the lane's quick searches on at most `most` expansions; returns
    /// what it spent.
    fn run(&mut self, most: u32) -> u64 {
        let mut spent = 0;
        let mut left = most;
        while left > 0 {
            if self.current.is_none() {
                let Some(next) = self.planned.pop_front() else {
                    break;
                };
                let scratch = self.spare.take().unwrap_or_default();
                let search =
                    Search::planned(scratch, next.grid, next.start, next.goal, next.config);
                let quick = QuickSearch {
                    ticket: next.ticket,
                    version: next.grid.version(),
                    setbacks: 0,
                    search,
                };
                self.current = Some((quick, next.grid));
            }
            let Some((quick, grid)) = self.current.as_mut() else {
                break;
            };
            let before = quick.search.expansions();
            let status = quick.search.step(grid, left);
            let used = quick.search.expansions() - before;
            spent += used;
            left = left.saturating_sub(used.min(u32::MAX as u64) as u32);
            if !status.is_finished() {
                if used == 0 {
                    break;
                }
                continue;
            }
            let Some((mut quick, grid)) = self.current.take() else {
                break;
            };
            let found = (status == SearchStatus::Found)
                .then(|| quick.search.take_path())
                .flatten()
                .map(|path| Found {
                    path,
                    expansions: quick.search.expansions(),
                    version: grid.version(),
                });
            self.ended.push((quick.ticket, found));
            self.spare = Some(quick.into_scratch());
        }
        spent
    }
}

/// Quick searches before the searches with real costs, on the whole
/// budget while no request has waited [`QUICK_FIRST_FRAMES`], else on up
/// to half of it (split among the lanes as the budget is), for the
/// best-ranked requests alone on a map with terrain costs that have neither
/// their quick path nor their real one yet and were not answered in the
/// frame they were made in. Each lane runs its quick searches one after
/// another in one scratch space (one with one lane: the best request
/// first, then the next), so a lane holds at most one quick search from
/// one frame to the next. A quick path leads where the request's real
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
    let quota =
        if oldest.is_some_and(|frame| queue.frame.saturating_sub(frame) >= QUICK_FIRST_FRAMES) {
            settings.nodes_per_frame / 2
        } else {
            settings.nodes_per_frame
        };
    let candidates = candidates(queue, settings.aging_frames, maps);
    if candidates.is_empty() && queue.quick.is_empty() {
        return;
    }
    let lanes = budget.lane_count();
    let mut quota_left: Vec<u32> = shares(quota, lanes).collect();
    // The lists do not change while quick searches run: each job is found
    // through one index, and the requests that want a quick path are
    // ranked once, not scanned for every search started.
    let spots = Spots::of(queue);
    let mut candidates = candidates.into_iter();
    loop {
        let open: Vec<usize> = budget
            .open_lanes()
            .into_iter()
            .filter(|&lane| quota_left[lane] > 0)
            .collect();
        if open.is_empty() {
            return;
        }
        // Those under way, brought up to date, each back in its lane.
        let mut carried: Vec<QuickSearch> = Vec::new();
        for quick in std::mem::take(&mut queue.quick) {
            carried.extend(keep_up(queue, &spots, quick, maps, settings));
        }
        let mut work: Vec<QuickLane> = (0..lanes).map(|_| QuickLane::default()).collect();
        let mut busy: Vec<u64> = carried.iter().map(|quick| quick.ticket).collect();
        let mut idle = open.iter().copied();
        for quick in carried {
            let grid = spots
                .map_of(queue, quick.ticket)
                .and_then(|map| maps.get(map));
            match (idle.next(), grid) {
                (Some(lane), Some(view)) => work[lane].current = Some((quick, view.grid)),
                _ => queue.quick.push(quick),
            }
        }
        // New ones for the best requests, dealt in turn.
        let mut planned = Vec::new();
        while planned.len() < open.len() * QUICK_PLANNED_PER_LANE {
            // Each once: not under way, and not given its quick path (or
            // found to need none) in an earlier round.
            let wanted = |ticket: &u64, queue: &mut PathfindingQueue| {
                !busy.contains(ticket) && spots.job(queue, *ticket).is_some_and(|job| job.quick)
            };
            let Some(ticket) = candidates.find(|ticket| wanted(ticket, queue)) else {
                break;
            };
            if let Some(next) = plan_quick(queue, &spots, ticket, maps, settings) {
                busy.push(ticket);
                planned.push(next);
            }
        }
        if planned.is_empty() && work.iter().all(|lane| lane.current.is_none()) {
            return;
        }
        for (lane, list) in deal(lanes, &open, planned).into_iter().enumerate() {
            work[lane].planned = list.into();
            if work[lane].current.is_none() && !work[lane].planned.is_empty() {
                work[lane].spare = Some(queue.pool.take());
            }
        }
        let mut dealt: Vec<Vec<&mut QuickLane>> = work.iter_mut().map(|lane| vec![lane]).collect();
        let spent = run_lanes(
            budget,
            settings.threads,
            &mut dealt,
            Some(&quota_left),
            |lane, most| lane.run(most),
        );
        drop(dealt);
        for (lane, used) in spent.iter().enumerate() {
            quota_left[lane] = quota_left[lane].saturating_sub(*used as u32);
        }
        let mut progress = spent.iter().any(|&used| used > 0);
        for lane in work {
            for (ticket, found) in lane.ended {
                progress = true;
                if let Some(result) =
                    found.and_then(|found| provisional(queue, &spots, ticket, found, maps))
                {
                    queue.provisional.push(result);
                }
                if let Some(job) = spots.job(queue, ticket) {
                    job.quick = false;
                }
            }
            if let Some((quick, _)) = lane.current {
                if quick.search.restarts().saturating_add(quick.setbacks) > settings.max_restarts {
                    // Edits keep hitting it: the real path will do.
                    give_up(queue, &spots, quick);
                    progress = true;
                } else {
                    queue.quick.push(quick);
                }
            }
            // Planned but not started: they stay wanted.
            if let Some(spare) = lane.spare {
                queue.pool.give(spare);
            }
        }
        if !progress {
            return;
        }
    }
}

/// The provisional result of the quick path `found` for the job with
/// `ticket`.
fn provisional(
    queue: &mut PathfindingQueue,
    spots: &Spots,
    ticket: u64,
    found: Found,
    maps: &Maps,
) -> Option<(Entity, PathResult)> {
    let frame = queue.frame;
    let job = spots.job(queue, ticket)?;
    let view: MapView = maps.get(job.map)?.for_size(job.size);
    let waited = (frame - job.frame_requested) as u32;
    let result = found.into_result(PathStatus::Provisional, job.map, &view, waited);
    Some((job.entity, result))
}

/// The quick search the job with `ticket` would start: between the cells
/// its real search would take on its map as it is now. `None` (and the job
/// wants no quick path any more) when it needs no search.
fn plan_quick<'m>(
    queue: &mut PathfindingQueue,
    spots: &Spots,
    ticket: u64,
    maps: &'m Maps,
    settings: &PathfindingSettings,
) -> Option<Planned<'m>> {
    let job = spots.job(queue, ticket)?.clone();
    let view = maps.get(job.map).map(|view| view.for_size(job.size));
    let cells = view
        .as_ref()
        .and_then(|view| match job.plan_now(&mut queue.nearest, view) {
            Plan::Search { start, goal } => Some((start, goal)),
            Plan::Answer(..) => None,
        });
    let (Some(view), Some((start, goal))) = (view, cells) else {
        // Its own refresh answers it.
        if let Some(job) = spots.job(queue, ticket) {
            job.quick = false;
        }
        return None;
    };
    Some(Planned {
        ticket,
        grid: view.grid,
        start,
        goal,
        config: SearchConfig {
            size: job.size,
            ignore_costs: true,
            heuristic_weight: QUICK_WEIGHT,
            ..search_config(settings)
        },
    })
}

/// Brings a quick search carried from an earlier frame up to date: dropped
/// if its job was answered, cancelled or no longer wants it; made anew, if
/// an edit since it was planned moved the cells the job's search would take
/// (counted as a restart).
fn keep_up(
    queue: &mut PathfindingQueue,
    spots: &Spots,
    quick: QuickSearch,
    maps: &Maps,
    settings: &PathfindingSettings,
) -> Option<QuickSearch> {
    let version = spots
        .job(queue, quick.ticket)
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
    let Some(next) = plan_quick(queue, spots, quick.ticket, maps, settings) else {
        queue.pool.give(quick.into_scratch());
        return None;
    };
    if (next.start, next.goal) == (quick.search.start(), quick.search.goal()) {
        // Same cells: the search itself decides whether the edits touch it
        // (`Search::step`).
        return Some(QuickSearch { version, ..quick });
    }
    let setbacks = quick.setbacks.saturating_add(1);
    let search = Search::planned(
        quick.into_scratch(),
        next.grid,
        next.start,
        next.goal,
        next.config,
    );
    Some(QuickSearch {
        ticket: next.ticket,
        version,
        setbacks,
        search,
    })
}

/// Ends a quick search: its job wants no other.
fn give_up(queue: &mut PathfindingQueue, spots: &Spots, quick: QuickSearch) {
    if let Some(job) = spots.job(queue, quick.ticket) {
        job.quick = false;
    }
    queue.pool.give(quick.into_scratch());
}

/// The requests that want a quick path, best-ranked first: searched alone,
/// on a map with terrain costs (for their unit's size), and unanswered
/// through the frame they were made in.
fn candidates(queue: &PathfindingQueue, aging_frames: u32, maps: &Maps) -> Vec<u64> {
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
    let mut wanted: Vec<&Job> = queue
        .waiting
        .iter()
        .chain(&queue.in_flight)
        .filter(|flight| !flight.is_shared())
        .map(|flight| flight.lead())
        // A request's first frame goes to its real search: most on a small
        // map end there, and a quick path would only delay them.
        .filter(|job| job.quick && job.frame_requested < queue.frame)
        .filter(|job| has_terrain(job))
        .collect();
    wanted.sort_by_key(|job| std::cmp::Reverse(job.rank(aging_frames)));
    wanted.into_iter().map(|job| job.ticket).collect()
}

/// Where each job searched alone sits in the queue's lists, by ticket: the
/// lists do not change while the quick searches run.
struct Spots(HashMap<u64, (bool, usize)>);

impl Spots {
    fn of(queue: &PathfindingQueue) -> Self {
        let alone = |list: &[Flight], waiting: bool| {
            list.iter()
                .enumerate()
                .filter(|(_, flight)| !flight.is_shared())
                .map(move |(i, flight)| (flight.lead().ticket, (waiting, i)))
                .collect::<Vec<_>>()
        };
        let mut spots = alone(&queue.waiting, true);
        spots.extend(alone(&queue.in_flight, false));
        Self(spots.into_iter().collect())
    }

    /// The job with `ticket`, searched alone, waiting or in flight.
    fn job<'q>(&self, queue: &'q mut PathfindingQueue, ticket: u64) -> Option<&'q mut Job> {
        let &(waiting, index) = self.0.get(&ticket)?;
        let list = if waiting {
            &mut queue.waiting
        } else {
            &mut queue.in_flight
        };
        let job = &mut list.get_mut(index)?.jobs[0];
        (job.ticket == ticket).then_some(job)
    }

    /// The map of the job with `ticket`.
    fn map_of(&self, queue: &mut PathfindingQueue, ticket: u64) -> Option<Entity> {
        self.job(queue, ticket).map(|job| job.map)
    }
}
