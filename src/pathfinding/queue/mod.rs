//! The request queue and the per-frame budget loop behind
//! [`PathfindingPlugin`](super::PathfindingPlugin), by concept:
//!
//! - `resolve`: a request turned into cells on its map ([`Job`], `plan`);
//! - `flights`: the searches kept between frames, waiting or in flight,
//!   their admission to slots, their checks against edited maps, and the
//!   lane runner that spends the budget on them;
//! - `shared`: requests with one goal put in one shared search;
//! - `quick`: quick provisional routes on maps with terrain costs (on the
//!   maps' [`CoarseGraphs`](super::CoarseGraphs));
//! - `delivery`: results handed to their units.

mod delivery;
mod flights;
mod quick;
mod resolve;
mod shared;

use bevy::platform::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bevy::diagnostic::Diagnostics;
use bevy::ecs::entity::EntityHashSet;
use bevy::prelude::*;

use super::diagnostics::{EXPANSIONS, FRAMES_TO_RESULT, IN_FLIGHT, QUEUED, SEARCH_MS};
use super::graphs::CoarseGraphs;
use super::request::{Footprint, PathRequest};
use super::result::{InvalidReason, PathResult, PathStatus};
use crate::core::{Flood, NavGrid, ScratchPool, Search, SearchConfig};
use crate::maps::Maps;
use crate::schedule::{FrameBudget, PathfindingSettings};
use delivery::Delivery;
use flights::{Flight, SharedWork, Work};
pub(crate) use resolve::locate;
use resolve::{Job, NearestCache, Plan, locate_request, plan};

/// The plugin's requests: those waiting for a search slot and those in
/// flight. Read it for [`queued`](Self::queued) and
/// [`in_flight`](Self::in_flight) counts.
#[derive(Resource, Default)]
pub struct PathfindingQueue {
    /// Runs of the plugin's schedule so far.
    frame: u64,
    next_ticket: u64,
    /// Entities with a request waiting or in flight, so that cancelling the
    /// many that have none skips the scans.
    live: EntityHashSet,
    /// Best last once sorted ([`PathfindingQueue::sort_waiting`]), so that
    /// admitting the best is a pop, not a scan of a thousand.
    waiting: Vec<Flight>,
    /// The ageing `waiting` is sorted for, if it is.
    waiting_sorted: Option<u32>,
    in_flight: Vec<Flight>,
    pool: ScratchPool,
    /// Reachable cell nearest to an unreachable goal, per (map, grid
    /// version, unit size, goal, start region): a group ordered onto a lake
    /// asks once. Emptied every frame, so it never outgrows one frame's
    /// orders.
    nearest: NearestCache,
    /// Copies of maps made this frame for searches that stop following
    /// edits, shared by all of them (emptied every frame).
    copies: HashMap<(Entity, u64), Arc<NavGrid>>,
    /// Whether a request that could share a search has started waiting
    /// since requests were last put together (`share_goals`).
    unshared: bool,
    /// The quick routes under way (see [`PathfindingSettings::refine`])
    /// whose first stretch (or whole route) is still to send.
    quick: Vec<quick::QuickSearch>,
    /// Quick routes whose first stretch was sent, refined on to the goal
    /// once every request waiting for a quick route has its first stretch.
    extending: Vec<quick::QuickSearch>,
    /// Reading back shared searches' paths that a frame's budget had no room
    /// left for: paid first in the next frames.
    reading_debt: u64,
    /// Quick paths found this frame, sent at its end to the requests not
    /// answered for good by then.
    provisional: Vec<(Entity, PathResult)>,
}

impl PathfindingQueue {
    /// Requests waiting for a search slot.
    pub fn queued(&self) -> usize {
        self.waiting.len()
    }

    /// Searches started and not yet finished.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Whether no request is waiting or being searched.
    pub fn is_idle(&self) -> bool {
        self.waiting.is_empty() && self.in_flight.is_empty()
    }

    /// Bytes of search memory the queue holds: the scratch space of every
    /// search that has run and not ended (in flight, or waiting after
    /// losing its slot), of the quick routes under way, and of the pool
    /// kept for the next searches (see
    /// [`PathfindingSettings::max_in_flight`]). The coarse graphs quick
    /// routes run on are the maps' own ([`CoarseGraphs::memory_bytes`](super::CoarseGraphs::memory_bytes)).
    pub fn memory_bytes(&self) -> usize {
        let flights = self.waiting.iter().chain(&self.in_flight);
        let work: usize = flights
            .map(|flight| match &flight.work {
                Work::Alone(search) => search.as_ref().map_or(0, |search| search.memory_bytes()),
                Work::Shared(shared) => shared
                    .flood
                    .as_ref()
                    .map_or(0, |flood| flood.memory_bytes()),
            })
            .sum();
        let quick: usize = self
            .quick
            .iter()
            .chain(&self.extending)
            .map(quick::QuickSearch::memory_bytes)
            .sum();
        work + quick + self.pool.memory_bytes()
    }

    /// Runs of the plugin's schedule so far.
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// The searches in flight that have started: the requesting entity,
    /// the map and the search (for drawing frontiers, say).
    pub fn searches(&self) -> impl Iterator<Item = (Entity, Entity, &Search)> {
        self.in_flight
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
        self.in_flight
            .iter()
            .filter_map(|flight| match &flight.work {
                Work::Shared(SharedWork {
                    flood: Some(flood), ..
                }) => Some((flight.lead().map, flight.jobs.len(), &**flood)),
                _ => None,
            })
    }

    fn cancel(&mut self, entity: Entity) {
        if !self.live.remove(&entity) {
            return;
        }
        for list in [&mut self.waiting, &mut self.in_flight] {
            let Some(i) = list
                .iter()
                .position(|f| f.jobs.iter().any(|job| job.entity == entity))
            else {
                continue;
            };
            list[i].jobs.retain(|job| job.entity != entity);
            if list[i].jobs.is_empty() {
                list.swap_remove(i).land(&mut self.pool);
            }
        }
        // A flight moved or lost its best job.
        self.waiting_sorted = None;
    }

    /// Puts a flight in the waiting list.
    fn wait(&mut self, flight: Flight) {
        self.waiting.push(flight);
        self.waiting_sorted = None;
    }

    /// Sorts the waiting list for `aging`, best last, if it is not.
    fn sort_waiting(&mut self, aging: u32) {
        if self.waiting_sorted != Some(aging) {
            self.waiting.sort_by_cached_key(|flight| flight.rank(aging));
            self.waiting_sorted = Some(aging);
        }
    }
}

/// What the plugin did in the last frame.
#[derive(Resource, Clone, Debug, Default, PartialEq)]
pub struct PathfindingStats {
    /// Node expansions spent in the last frame, by searches and by group
    /// moves' floods (with `frame_reading`, never above `nodes_per_frame`).
    pub frame_expansions: u64,
    /// Budget spent in the last frame reading paths back from searches
    /// shared by units with one goal (one per 8 cells of a path; see
    /// [`PathfindingSettings::share_goals`]).
    pub frame_reading: u64,
    /// Wall-clock time the plugin's request and search systems took in the
    /// last frame.
    pub frame_time: Duration,
    /// The part of `frame_time` spent flagging finished paths that map
    /// edits cut (`PathInvalidated`).
    pub invalidate_time: Duration,
    /// Results delivered in the last frame.
    pub delivered: usize,
    /// Results delivered since the app started.
    pub delivered_total: u64,
    /// Most frames any result delivered in the last frame waited.
    pub max_frames_waited: u32,
    /// How long each search lane worked in the last frame (group floods,
    /// quick routes and searches; one lane unless
    /// [`PathfindingSettings::search_lanes`] says more), on whatever thread
    /// ran it: the slowest against the mean says how evenly the frame's
    /// work spread.
    pub lane_times: Vec<Duration>,
    frames_waited_sum: u64,
}

impl PathfindingStats {
    pub(super) fn begin_frame(&mut self) {
        *self = Self {
            delivered_total: self.delivered_total,
            ..Self::default()
        };
    }

    /// Mean frames from request to result over the last frame's results.
    pub fn mean_frames_waited(&self) -> Option<f64> {
        (self.delivered > 0).then(|| self.frames_waited_sum as f64 / self.delivered as f64)
    }
}

/// Idle scratch spaces the queue keeps for the next searches: one per
/// flight a round deals ([`flights::flights_per_lane`] per lane), never
/// more than the slots could use, and at most [`MAX_POOLED`]. What runs
/// holds its own; a space given back beyond these is freed. (Quick routes
/// take none: each holds its own cluster-sized space.)
fn pooled(settings: &PathfindingSettings) -> usize {
    let lanes = settings.lanes();
    (lanes * flights::flights_per_lane(lanes))
        .min(settings.max_in_flight.max(1))
        .min(MAX_POOLED)
}

/// The most idle scratch spaces the queue keeps, however many lanes.
const MAX_POOLED: usize = 16;

/// `Invalidate`: a map that has just appeared (or changed) gets its region
/// labels now, for every unit size seen so far (and every map gets them
/// for a size when the first unit of that size appears), and the scratch
/// pool warm space for the searches that start first on it ([`pooled`]):
/// in the frame the game loads the map, not in the first frame that orders
/// units on it. Nothing here grows with `max_in_flight`: a search holds
/// scratch only once it runs.
pub(crate) fn prepare_maps(
    maps: Query<(Entity, Ref<NavGrid>, Has<CoarseGraphs>)>,
    new_sizes: Query<&Footprint, Added<Footprint>>,
    mut sizes_seen: Local<Vec<u8>>,
    mut queue: ResMut<PathfindingQueue>,
    settings: Res<PathfindingSettings>,
    mut commands: Commands,
) {
    let before = sizes_seen.len();
    for footprint in &new_sizes {
        if footprint.is_valid() && footprint.0 > 1 && !sizes_seen.contains(&footprint.0) {
            sizes_seen.push(footprint.0);
        }
    }
    let new_size = sizes_seen.len() > before;
    for (map, grid, has_graphs) in &maps {
        if !has_graphs {
            // Its coarse graphs: the one for units of a cell is started in
            // `Search` this frame if it has rough ground.
            commands.entity(map).insert(CoarseGraphs::default());
        }
        if !grid.is_changed() && !new_size {
            continue;
        }
        grid.label_regions_now();
        // Units bigger than a cell: their size class's costs and regions
        // too, once per map and size.
        for &size in sizes_seen.iter() {
            grid.size_class(size).label_regions_now();
        }
        if grid.is_changed() {
            let keep = pooled(&settings);
            queue.pool.set_limit(keep);
            queue.pool.warm(keep, grid.cell_count());
        }
    }
}

/// Requests new or changed this frame, with where and how big their units
/// are.
type ChangedRequests<'w, 's> = Query<
    'w,
    's,
    (
        Entity,
        &'static PathRequest,
        Option<&'static Transform>,
        Option<&'static Footprint>,
    ),
    Changed<PathRequest>,
>;

/// `Collect`: reads removed and new or changed requests. Bad ones and
/// those needing no search are answered now; the rest wait in the queue.
pub(crate) fn collect_requests(
    mut queue: ResMut<PathfindingQueue>,
    mut removed: RemovedComponents<PathRequest>,
    still_requesting: Query<(), With<PathRequest>>,
    changed: ChangedRequests,
    maps: Maps,
    mut delivery: Delivery,
) {
    let began = Instant::now();
    let queue = &mut *queue;
    queue.frame += 1;
    queue.nearest.clear();
    queue.copies.clear();
    for entity in removed.read() {
        if !still_requesting.contains(entity) {
            queue.cancel(entity);
        }
    }
    // Each map looked up once (a view inverts its map's transform): a burst
    // of a thousand orders names one or two.
    let mut found = Vec::new();
    for (entity, request, transform, footprint) in &changed {
        queue.cancel(entity);
        let footprint = footprint.copied().unwrap_or_default();
        let lookup = match found.iter().find(|(named, _)| *named == request.map) {
            Some(&(_, lookup)) => lookup,
            None => {
                let lookup = maps.find(request.map);
                found.push((request.map, lookup));
                lookup
            }
        };
        let (map, view) = match lookup {
            Ok(found) => found,
            Err(error) => {
                let result = PathResult::without_path(PathStatus::Invalid(error.into()), None, 0);
                delivery.send(entity, result);
                continue;
            }
        };
        if !footprint.is_valid() {
            let result = PathResult::without_path(
                PathStatus::Invalid(InvalidReason::BadFootprint),
                Some(map),
                0,
            );
            delivery.send(entity, result);
            continue;
        }
        let view = view.for_size(footprint.0);
        let asked = resolve::asked(request, transform);
        let cells = asked.and_then(|asked| Ok((asked, locate_request(&view, asked)?)));
        let (asked, (origin, goal)) = match cells {
            Ok(cells) => cells,
            Err(reason) => {
                let result = PathResult::without_path(PathStatus::Invalid(reason), Some(map), 0);
                delivery.send(entity, result);
                continue;
            }
        };
        match plan(
            &mut queue.nearest,
            map,
            view.class(),
            origin,
            goal,
            request.on_unreachable,
        ) {
            Plan::Answer(status, cells) => {
                delivery.answer(entity, map, (status, cells), &view, 0);
            }
            Plan::Search {
                start,
                goal: target,
            } => {
                let ticket = queue.next_ticket;
                queue.next_ticket += 1;
                queue.live.insert(entity);
                let frame_requested = queue.frame;
                queue.unshared = true;
                queue.wait(Flight::new(Job {
                    entity,
                    ticket,
                    priority: request.priority,
                    map,
                    size: footprint.0,
                    asked,
                    origin,
                    start,
                    requested_goal: goal,
                    policy: request.on_unreachable,
                    goal: target,
                    grid_version: view.grid.version(),
                    frame_requested,
                    alone: false,
                    quick: request.refine,
                }));
            }
        }
    }
    delivery.stats.frame_time += began.elapsed();
}

/// `Search`: spends what is left of the frame's node budget on the best
/// search in flight, then the next, admitting waiting requests as slots
/// free up, and delivers what finishes. Requests with one goal share a
/// search first (see [`PathfindingSettings::share_goals`]).
pub(crate) fn run_searches(
    mut queue: ResMut<PathfindingQueue>,
    settings: Res<PathfindingSettings>,
    mut budget: ResMut<FrameBudget>,
    maps: Maps,
    mut graphs: Query<(Entity, &'static mut CoarseGraphs)>,
    mut delivery: Delivery,
    mut diagnostics: Diagnostics,
) {
    let began = Instant::now();
    let queue = &mut *queue;
    // Builds move on (never waited for): done and due ones are taken up.
    for (map, mut graphs) in &mut graphs {
        if let Some(view) = maps.get(map) {
            graphs.poll(view.grid, queue.frame, settings.refine);
        }
    }

    queue.pool.set_limit(pooled(&settings));
    let owed = queue.reading_debt;
    queue.reading_debt = budget.spend_reading(owed);
    if settings.share_goals && std::mem::take(&mut queue.unshared) {
        shared::share_goals(queue, &maps, &mut budget, &mut delivery);
    }
    if settings.refine {
        quick::run_quick(queue, &settings, &mut budget, &maps, &mut graphs);
    } else {
        queue.quick.clear();
        queue.extending.clear();
    }
    flights::run_flights(queue, &settings, &mut budget, &maps, &mut delivery);
    // Fill free slots so the queue count says what truly waits.
    flights::admit(queue, &settings, &maps, &mut delivery);
    // A quick path whose real one came in the same frame is not sent: one
    // answer a frame.
    for (entity, result) in std::mem::take(&mut queue.provisional) {
        if queue.live.contains(&entity) {
            delivery.send(entity, result);
        }
    }

    let stats = &mut *delivery.stats;
    stats.frame_expansions = budget.spent() - budget.reading();
    stats.frame_reading = budget.reading();
    stats.lane_times.clear();
    stats.lane_times.extend(budget.lane_times());
    let spent = stats.frame_expansions;
    stats.frame_time += began.elapsed();
    diagnostics.add_measurement(&EXPANSIONS, || spent as f64);
    diagnostics.add_measurement(&IN_FLIGHT, || queue.in_flight.len() as f64);
    diagnostics.add_measurement(&QUEUED, || queue.waiting.len() as f64);
    diagnostics.add_measurement(&SEARCH_MS, || stats.frame_time.as_secs_f64() * 1000.0);
    if let Some(mean) = stats.mean_frames_waited() {
        diagnostics.add_measurement(&FRAMES_TO_RESULT, || mean);
    }
}

/// How searches run under `settings`.
fn search_config(settings: &PathfindingSettings) -> SearchConfig {
    SearchConfig {
        heuristic_weight: settings.heuristic_weight,
        max_expansions: settings.max_expansions_per_request,
        jump_points: settings.jump_points,
        size: 1,
        ignore_costs: false,
    }
}
