//! Quick paths: on maps with terrain costs, a route over the map's coarse
//! graph ([`CoarseGraph`]: clusters, their entrances and the costs between
//! them), refined to cells and sent as [`PathStatus::Provisional`] so that
//! a unit sets off along a sensible route while its real search waits its
//! turn (see [`PathfindingSettings::refine`]).

use std::collections::VecDeque;

use bevy::platform::collections::{HashMap, HashSet};

use bevy::prelude::*;

use super::super::graphs::{CoarseGraphs, wants_quick_routes};
use super::super::result::{PathResult, PathStatus};
use super::delivery::Found;
use super::flight::Flight;
use super::flights::FlightAt;
use super::policy::{QUICK_WEIGHT, has_quick_routes, quick_quota};
use super::quick_routes::QuickSearch;
use super::resolve::{Job, Plan};
use super::state::PathfindingQueue;
use crate::budget::{FrameBudget, deal, run_lanes, shares};
use crate::core::{Cell, CoarseGraph, CoarseRoute, NavGrid, RouteStatus, UnitKind};
use crate::maps::{MapView, Maps};
use crate::schedule::PathfindingSettings;

/// Quick routes planned for a lane per round: a lane runs them one after
/// another, so a round covers its whole share.
const QUICK_PLANNED_PER_LANE: usize = 16;

/// Cells of a quick route refined before its first stretch is sent (two
/// clusters' worth, several seconds of walking for most units): the rest
/// is refined after every waiting request has its first stretch, and sent
/// whole.
const FIRST_STRETCH: usize = 2 * crate::core::coarse::CLUSTER as usize;

/// Routes whose ends lie closer than this (octile cells) are sent whole:
/// refining the rest costs little more than the stretch.
const STRETCHED_FROM: f64 = 4.0 * FIRST_STRETCH as f64;

/// A quick route to start: a job's ticket, its map and the cells its real
/// search would take on its map as it is now.
struct Planned<'a> {
    ticket: u64,
    grid: &'a NavGrid,
    graph: &'a CoarseGraph,
    kind: UnitKind,
    start: Cell,
    goal: Cell,
}

/// One lane's quick routes in a round: the one it carries on from an
/// earlier round, then those planned for it, run one after another.
#[derive(Default)]
struct QuickLane<'a> {
    current: Option<(QuickSearch, Planned<'a>)>,
    planned: VecDeque<Planned<'a>>,
    /// Routes that ended: the ticket of each, and the path it found (none
    /// when the goal could not be reached, or an edit cut it).
    ended: Vec<(u64, Option<Found>)>,
    /// First stretches of routes refined that far: the ticket of each and
    /// the stretch.
    stretches: Vec<(u64, Found)>,
    /// Routes whose first stretch was sent, to be refined to the end once
    /// every waiting request has its own.
    parked: Vec<QuickSearch>,
}

impl QuickLane<'_> {
    /// Runs the lane's quick routes on at most `most` expansions; returns
    /// what it spent.
    fn run(&mut self, most: u32) -> u64 {
        let mut spent = 0;
        let mut left = most as u64;
        while left > 0 {
            if self.current.is_none() {
                let Some(next) = self.planned.pop_front() else {
                    break;
                };
                let quick = QuickSearch {
                    ticket: next.ticket,
                    version: next.grid.version(),
                    setbacks: 0,
                    sent: false,
                    route: new_route(next.start, next.goal),
                };
                self.current = Some((quick, next));
            }
            let Some((quick, on)) = self.current.as_mut() else {
                break;
            };
            let class = on.grid.kind_view(on.kind);
            let before = quick.route.expansions();
            let status = quick.route.step(on.graph, &class, left);
            let used = quick.route.expansions() - before;
            spent += used;
            left = left.saturating_sub(used.max(1));
            if status == RouteStatus::Running {
                if !quick.sent
                    && quick.route.start().octile_distance(quick.route.goal()) >= STRETCHED_FROM
                    && let Some(stretch) = quick.route.refined(&class)
                    && stretch.cells.len() > FIRST_STRETCH
                {
                    quick.sent = true;
                    let found = Found {
                        path: stretch,
                        expansions: quick.route.expansions(),
                        version: on.grid.version(),
                    };
                    self.stretches.push((quick.ticket, found));
                    if let Some((quick, _)) = self.current.take() {
                        self.parked.push(quick);
                    }
                }
                continue;
            }
            let Some((quick, on)) = self.current.take() else {
                break;
            };
            let class = on.grid.kind_view(on.kind);
            let found = quick.route.path(&class).map(|path| Found {
                path,
                expansions: quick.route.expansions(),
                version: on.grid.version(),
            });
            self.ended.push((quick.ticket, found));
        }
        spent
    }
}

/// Quick searches before the searches with real costs, on the whole
/// budget while no request has waited [`QUICK_FIRST_FRAMES`](super::policy::QUICK_FIRST_FRAMES), else on up
/// to half of it (split among the lanes as the budget is), for the
/// best-ranked requests (searched alone or sharing a search with a few
/// others: [`has_quick_routes`]) on a map
/// where their kind gets quick routes that have neither their quick path
/// nor their real one yet and were not answered in the frame they were
/// made in. Each lane runs its quick searches one after
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
    graphs: &mut Query<(Entity, &'static mut CoarseGraphs)>,
) {
    let candidates = candidates(queue, settings.aging_frames, maps);
    if candidates.is_empty() && queue.quick.under_way.is_empty() {
        return;
    }
    // A unit with no path is worse off than one with a quick path waiting
    // for its real one, so after a burst of orders the quick paths come
    // first. Once a request has waited `QUICK_FIRST_FRAMES` (for either
    // path), half the budget stays for the searches with real costs, so a
    // steady stream of new requests cannot starve them.
    let oldest = queue
        .flights
        .all()
        .flat_map(|flight| &flight.jobs)
        .map(|job| job.frame_requested)
        .min();
    let quota = quick_quota(settings.nodes_per_frame, queue.frame, oldest);
    let lanes = budget.lane_count();
    let mut quota_left: Vec<u32> = shares(quota, lanes).collect();
    // The lists do not change while quick searches run: each job is found
    // through one index, and the requests that want a quick path are
    // ranked once, not scanned for every search started.
    let spots = Spots::of(queue);
    // The coarse graphs of the maps these routes run on, brought up to date
    // with the edits since they last ran (repaired on the budget, never
    // beyond it), or started.
    let keys = graph_keys(queue, &spots, &candidates);
    let quota_total: u64 = quota_left.iter().map(|&q| q as u64).sum();
    // Routes run on a graph whose edited clusters are still to build (on
    // their old records), so repairs take at most half while routes wait.
    let share = if candidates.is_empty() && queue.quick.under_way.is_empty() {
        quota_total
    } else {
        quota_total.div_ceil(2)
    };
    let mut left = share.min(budget.left() as u64);
    let mut repaired = 0;
    for (map, kind) in keys {
        let (Some(view), Ok((_, mut graphs))) = (maps.get(map), graphs.get_mut(map)) else {
            continue;
        };
        let spent = graphs.prepare(view.grid, kind, queue.frame, left);
        left -= spent;
        repaired += spent;
    }
    budget.spend(repaired);
    let mut charge = repaired;
    for left in &mut quota_left {
        let taken = charge.min(*left as u64);
        *left -= taken as u32;
        charge -= taken;
    }
    let graphs = Graphs(graphs);
    run_rounds(
        queue,
        settings,
        budget,
        maps,
        &graphs,
        &spots,
        candidates,
        &mut quota_left,
    );
}

/// The maps' coarse graphs, read while quick routes run.
struct Graphs<'a, 'w, 's>(&'a Query<'w, 's, (Entity, &'static mut CoarseGraphs)>);

impl Graphs<'_, '_, '_> {
    /// The graph of `map` for `kind`, if it is built and up to date with
    /// `grid`.
    fn ready(&self, map: Entity, kind: UnitKind, grid: &NavGrid) -> Option<&CoarseGraph> {
        self.0.get(map).ok()?.1.ready(kind, grid)
    }
}

/// The (map, unit kind) of each quick route under way and each candidate.
fn graph_keys(
    queue: &mut PathfindingQueue,
    spots: &Spots,
    candidates: &[u64],
) -> Vec<(Entity, UnitKind)> {
    let tickets = queue
        .quick
        .under_way
        .iter()
        .map(|quick| quick.ticket)
        .collect::<Vec<_>>();
    let mut keys: Vec<(Entity, UnitKind)> = Vec::new();
    for &ticket in tickets.iter().chain(candidates) {
        if let Some(job) = spots.job(queue, ticket)
            && !keys.contains(&(job.map, job.kind))
        {
            keys.push((job.map, job.kind));
        }
    }
    keys
}

/// The rounds of quick routes: each lane runs the routes it carries on and
/// those dealt to it, until the quota or the candidates run out.
#[allow(clippy::too_many_arguments)]
fn run_rounds(
    queue: &mut PathfindingQueue,
    settings: &PathfindingSettings,
    budget: &mut FrameBudget,
    maps: &Maps,
    graphs: &Graphs<'_, '_, '_>,
    spots: &Spots,
    candidates: Vec<u64>,
    quota_left: &mut [u32],
) {
    let lanes = budget.lane_count();
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
        // Those under way, brought up to date.
        let mut carried: Vec<QuickSearch> = Vec::new();
        for quick in std::mem::take(&mut queue.quick.under_way) {
            carried.extend(keep_up(queue, spots, quick, maps, graphs));
        }
        let wanted = open.len() * QUICK_PLANNED_PER_LANE;
        let on = (spots, maps, graphs);
        let planned = plan_round(queue, on, &mut candidates, &carried, wanted);
        // Every request has its first stretch: routes are refined on.
        let extending = carried.is_empty() && planned.is_empty();
        if extending {
            // As many as there are lanes open, from the front; the rest
            // wait in order, untouched (bringing a thousand parked routes up
            // to date each round, to place two, cost a frame milliseconds).
            let mut parked = std::mem::take(&mut queue.quick.extending).into_iter();
            while carried.len() < open.len() {
                let Some(quick) = parked.next() else {
                    break;
                };
                carried.extend(keep_up(queue, spots, quick, maps, graphs));
            }
            queue.quick.extending = parked.collect();
        }
        let mut work = seat(queue, on, carried, (lanes, &open), extending);
        if planned.is_empty() && work.iter().all(|lane| lane.current.is_none()) {
            return;
        }
        for (lane, list) in deal(lanes, &open, planned).into_iter().enumerate() {
            work[lane].planned = list.into();
        }
        let mut dealt: Vec<Vec<&mut QuickLane>> = work.iter_mut().map(|lane| vec![lane]).collect();
        let spent = run_lanes(
            budget,
            settings.threads,
            &mut dealt,
            Some(quota_left),
            |lane, most| lane.run(most),
        );
        drop(dealt);
        for (lane, used) in spent.iter().enumerate() {
            quota_left[lane] = quota_left[lane].saturating_sub(*used as u32);
        }
        let progress = spent.iter().any(|&used| used > 0);
        if !land_round(queue, settings, (spots, maps), work) && !progress {
            return;
        }
    }
}

/// New quick routes for the best requests that want one, at most
/// `wanted`: each once (not under way, and not given its quick path, or
/// found to need none, in an earlier round).
fn plan_round<'m>(
    queue: &mut PathfindingQueue,
    (spots, maps, graphs): (&Spots, &'m Maps, &'m Graphs<'_, '_, '_>),
    candidates: &mut std::vec::IntoIter<u64>,
    carried: &[QuickSearch],
    wanted: usize,
) -> Vec<Planned<'m>> {
    // A set: with a thousand routes parked after their first stretch,
    // scanning a list for every candidate cost a frame milliseconds.
    let mut busy: HashSet<u64> = carried
        .iter()
        .chain(&queue.quick.extending)
        .map(|quick| quick.ticket)
        .collect();
    let mut planned = Vec::new();
    while planned.len() < wanted {
        let wants = |ticket: &u64, queue: &mut PathfindingQueue| {
            !busy.contains(ticket) && spots.job(queue, *ticket).is_some_and(|job| job.quick)
        };
        let Some(ticket) = candidates.find(|ticket| wants(ticket, queue)) else {
            break;
        };
        if let Some(next) = plan_quick(queue, spots, ticket, maps, graphs) {
            busy.insert(ticket);
            planned.push(next);
        }
    }
    planned
}

/// Each carried route back in a lane of its own, among the `open` lanes
/// of `lanes`; those with no lane wait (with the extending ones when
/// `extending`).
fn seat<'m>(
    queue: &mut PathfindingQueue,
    (spots, maps, graphs): (&Spots, &'m Maps, &'m Graphs<'_, '_, '_>),
    carried: Vec<QuickSearch>,
    (lanes, open): (usize, &[usize]),
    extending: bool,
) -> Vec<QuickLane<'m>> {
    let mut work: Vec<QuickLane> = (0..lanes).map(|_| QuickLane::default()).collect();
    let mut idle = open.iter().copied();
    for quick in carried {
        let on = place(queue, spots, quick.ticket, maps, graphs);
        match (idle.next(), on) {
            (Some(lane), Some((grid, graph, kind))) => {
                let on = Planned {
                    ticket: quick.ticket,
                    grid,
                    graph,
                    kind,
                    start: quick.route.start(),
                    goal: quick.route.goal(),
                };
                work[lane].current = Some((quick, on));
            }
            _ if extending => queue.quick.extending.push(quick),
            _ => queue.quick.under_way.push(quick),
        }
    }
    work
}

/// What a round's lanes found, sent and put back: first stretches and
/// whole routes offered as provisional paths, routes still under way kept
/// (one that edits keep setting back given up). Whether anything came of
/// the round.
fn land_round(
    queue: &mut PathfindingQueue,
    settings: &PathfindingSettings,
    (spots, maps): (&Spots, &Maps),
    work: Vec<QuickLane<'_>>,
) -> bool {
    let mut progress = false;
    for lane in work {
        for (ticket, found) in lane.stretches {
            progress = true;
            if let Some((entity, mut result)) = provisional(queue, spots, ticket, found, maps) {
                result.ends_short = true;
                offer(queue, entity, result);
            }
        }
        queue.quick.extending.extend(lane.parked);
        for (ticket, found) in lane.ended {
            progress = true;
            if let Some((entity, result)) =
                found.and_then(|found| provisional(queue, spots, ticket, found, maps))
            {
                offer(queue, entity, result);
            }
            if let Some(job) = spots.job(queue, ticket) {
                job.quick = false;
            }
        }
        if let Some((quick, _)) = lane.current {
            if quick.setbacks > settings.max_restarts {
                // Edits keep hitting it: the real path will do.
                give_up(queue, spots, quick);
                progress = true;
            } else if quick.sent {
                queue.quick.extending.push(quick);
            } else {
                queue.quick.under_way.push(quick);
            }
        }
        // Planned but not started: they stay wanted.
    }
    progress
}

/// Keeps `result` to send to `entity` at the frame's end, in place of one
/// kept for it earlier in the frame (one answer a frame).
fn offer(queue: &mut PathfindingQueue, entity: Entity, result: PathResult) {
    match queue
        .quick
        .provisional
        .iter_mut()
        .find(|(e, _)| *e == entity)
    {
        Some(kept) => kept.1 = result,
        None => queue.quick.provisional.push((entity, result)),
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
    let view: MapView = maps.get(job.map)?.for_kind(job.kind);
    let waited = (frame - job.frame_requested) as u32;
    let result = found.into_result(PathStatus::Provisional, job.map, &view, waited);
    Some((job.entity, result))
}

/// The grid, coarse graph and unit kind of the job with `ticket`.
fn place<'m>(
    queue: &mut PathfindingQueue,
    spots: &Spots,
    ticket: u64,
    maps: &'m Maps,
    graphs: &'m Graphs<'_, '_, '_>,
) -> Option<(&'m NavGrid, &'m CoarseGraph, UnitKind)> {
    let job = spots.job(queue, ticket)?;
    let view = maps.get(job.map)?;
    let graph = graphs.ready(job.map, job.kind, view.grid)?;
    Some((view.grid, graph, job.kind))
}

/// The quick route the job with `ticket` would start: between the cells
/// its real search would take on its map as it is now. `None` (and the job
/// wants no quick path any more) when it needs no search.
fn plan_quick<'m>(
    queue: &mut PathfindingQueue,
    spots: &Spots,
    ticket: u64,
    maps: &'m Maps,
    graphs: &'m Graphs<'_, '_, '_>,
) -> Option<Planned<'m>> {
    let job = spots.job(queue, ticket)?.clone();
    let view = maps.get(job.map).map(|view| view.for_kind(job.kind));
    let cells = view
        .as_ref()
        .and_then(|view| match job.plan_now(&mut queue.plans.nearest, view) {
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
    // A graph still being built or repaired: the job waits for it.
    let graph = graphs.ready(job.map, job.kind, view.grid)?;
    Some(Planned {
        ticket,
        grid: view.grid,
        graph,
        kind: job.kind,
        start,
        goal,
    })
}

/// Brings a quick route carried from an earlier frame up to date: dropped
/// if its job was answered, cancelled or no longer wants it; made anew, if
/// an edit since it was planned moved the cells the job's search would take
/// (counted as a setback). A route whose cells stayed carries on: its legs
/// are refined on the grid as it is, and it is checked whole at its end.
fn keep_up(
    queue: &mut PathfindingQueue,
    spots: &Spots,
    quick: QuickSearch,
    maps: &Maps,
    graphs: &Graphs<'_, '_, '_>,
) -> Option<QuickSearch> {
    let (version, rebuilt) = spots
        .job(queue, quick.ticket)
        .filter(|job| job.quick)
        .and_then(|job| maps.get(job.map))
        .map(|view| (view.grid.version(), view.grid.rebuilt_since(quick.version)))?;
    if version == quick.version {
        return Some(quick);
    }
    let next = plan_quick(queue, spots, quick.ticket, maps, graphs)?;
    // On another grid (a level loaded over it) the route starts over: what
    // it found was on the old one.
    if !rebuilt && (next.start, next.goal) == (quick.route.start(), quick.route.goal()) {
        return Some(QuickSearch { version, ..quick });
    }
    Some(QuickSearch {
        ticket: next.ticket,
        version,
        setbacks: quick.setbacks.saturating_add(1),
        sent: false,
        route: new_route(next.start, next.goal),
    })
}

/// A quick route from `start` to `goal`: one long enough to be sent in two
/// pieces stops working once its first stretch is refined, so that the
/// stretch goes out before the rest is refined.
fn new_route(start: Cell, goal: Cell) -> CoarseRoute {
    let route = CoarseRoute::new(start, goal, QUICK_WEIGHT);
    if start.octile_distance(goal) >= STRETCHED_FROM {
        route.pausing_at(FIRST_STRETCH + 1)
    } else {
        route
    }
}

/// Ends a quick route: its job wants no other.
fn give_up(queue: &mut PathfindingQueue, spots: &Spots, quick: QuickSearch) {
    if let Some(job) = spots.job(queue, quick.ticket) {
        job.quick = false;
    }
}

/// The requests that want a quick path, best-ranked first: unanswered
/// through the frame they were made in, on a map where their unit's kind
/// gets quick routes ([`wants_quick_routes`]), searched alone or sharing a
/// search with a few others ([`SHARED_QUICK_MOST`](super::policy::SHARED_QUICK_MOST): each gets its own quick
/// route, from its own start).
fn candidates(queue: &PathfindingQueue, aging_frames: u32, maps: &Maps) -> Vec<u64> {
    // Whether each (map, kind) seen gets quick routes, looked up once.
    let mut wanted_on: Vec<(Entity, UnitKind, bool)> = Vec::new();
    let mut gets_quick = |job: &Job| {
        if let Some(&(.., known)) = wanted_on
            .iter()
            .find(|(map, kind, _)| (*map, *kind) == (job.map, job.kind))
        {
            return known;
        }
        let known = maps
            .get(job.map)
            .is_some_and(|view| wants_quick_routes(view.grid, job.kind));
        wanted_on.push((job.map, job.kind, known));
        known
    };
    let mut wanted: Vec<&Job> = queue
        .flights
        .all()
        .filter(|flight| has_quick_routes(flight.is_shared(), flight.jobs.len()))
        .flat_map(|flight| &flight.jobs)
        // A request's first frame goes to its real search: most on a small
        // map end there, and a quick path would only delay them.
        .filter(|job| job.quick && job.frame_requested < queue.frame)
        .filter(|job| gets_quick(job))
        .collect();
    wanted.sort_by_key(|job| std::cmp::Reverse(job.rank(aging_frames)));
    wanted.into_iter().map(|job| job.ticket).collect()
}

/// Where each job that may have a quick route ([`has_quick_routes`]) sits
/// in the queue's lists, by ticket: its flight (by rank when waiting, by
/// place in flight) and its place in the flight. The lists do not change
/// while the quick searches run.
struct Spots(HashMap<u64, Spot>);

/// A job's flight and place in it.
type Spot = (FlightAt, usize);

impl Spots {
    fn of(queue: &PathfindingQueue) -> Self {
        fn spots<'a>(
            flights: impl Iterator<Item = (FlightAt, &'a Flight)> + 'a,
        ) -> impl Iterator<Item = (u64, Spot)> + 'a {
            flights
                .filter(|(_, flight)| has_quick_routes(flight.is_shared(), flight.jobs.len()))
                .flat_map(move |(home, flight)| {
                    let jobs = flight.jobs.iter().enumerate();
                    jobs.map(move |(j, job)| (job.ticket, (home, j)))
                })
        }
        let flights = &queue.flights;
        let waiting = flights
            .waiting
            .ranked()
            .map(|(rank, flight)| (FlightAt::Waiting(*rank), flight));
        let in_flight = flights.in_flight.iter().enumerate();
        let in_flight = in_flight.map(|(i, flight)| (FlightAt::InFlight(i), flight));
        Self(spots(waiting).chain(spots(in_flight)).collect())
    }

    /// The job with `ticket`, waiting or in flight.
    fn job<'q>(&self, queue: &'q mut PathfindingQueue, ticket: u64) -> Option<&'q mut Job> {
        let &(home, place) = self.0.get(&ticket)?;
        let flight = match home {
            FlightAt::Waiting(rank) => queue.flights.waiting.get_mut(&rank)?,
            FlightAt::InFlight(i) => queue.flights.in_flight.get_mut(i)?,
        };
        let job = flight.jobs.get_mut(place)?;
        (job.ticket == ticket).then_some(job)
    }
}
