//! The request queue and the per-frame budget loop behind
//! [`PathfindingPlugin`](super::PathfindingPlugin).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bevy::diagnostic::Diagnostics;
use bevy::ecs::entity::EntityHashSet;
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;

use super::diagnostics::{EXPANSIONS, FRAMES_TO_RESULT, IN_FLIGHT, QUEUED, SEARCH_MS};
use super::index::changed_since;
use super::request::{Footprint, PathRequest, PathTarget, Unreachable};
use super::result::{InvalidReason, PathInvalidated, PathReady, PathResult, PathStatus};
use crate::core::{
    Cell, Flood, FloodDirection, NavGrid, Neighborhood, Path, ScratchPool, Search, SearchConfig,
    SearchStatus, SizeClass,
};
use crate::maps::{CellLookup, MapView, Maps};
use crate::schedule::{FrameBudget, PathfindingSettings, run_side_by_side};

/// A request resolved to cells, waiting for or holding a search.
#[derive(Clone, Debug)]
struct Job {
    entity: Entity,
    /// Arrival order; also tells a live request from a replaced one.
    ticket: u64,
    priority: i32,
    map: Entity,
    /// The unit's size: its cells are anchors of that size class.
    size: u8,
    /// The cell the unit stood on (or the start asked for): every plan
    /// starts from it, so a unit in a wall always starts from the walkable
    /// cell nearest to itself.
    origin: Cell,
    /// The cell searched from: `origin`, or the walkable cell nearest to it.
    start: Cell,
    /// The cell asked for.
    requested_goal: Cell,
    policy: Unreachable,
    /// The cell searched for: the requested goal, or the reachable cell
    /// nearest to it.
    goal: Cell,
    /// The grid version `start` and `goal` were chosen on.
    grid_version: u64,
    frame_requested: u64,
    /// Searched alone, never in a shared search (it left one that could
    /// not serve it).
    alone: bool,
    /// Still to get a quick path first, on a map with terrain costs (see
    /// [`PathfindingSettings::refine`]).
    quick: bool,
}

impl Job {
    /// Orders jobs, higher first: priority plus one level per
    /// `aging_frames` frames since the request, then arrival. Every job ages
    /// at the same rate, so the order of two jobs never changes over time
    /// (`priority × aging_frames − frame requested` is the same at every
    /// frame): once a job outranks another it always will, and eviction
    /// cannot go back and forth.
    fn rank(&self, aging_frames: u32) -> (i128, std::cmp::Reverse<u64>) {
        let key = if aging_frames == 0 {
            self.priority as i128
        } else {
            self.priority as i128 * aging_frames as i128 - self.frame_requested as i128
        };
        (key, std::cmp::Reverse(self.ticket))
    }
}

/// Which jobs can share one search: `(map, unit size, goal cell)`.
type ShareKey = (Entity, u8, Cell);

/// Jobs and their search, in flight or waiting (a search that lost its
/// slot keeps its state and resumes where it was). One job with a
/// [`Search`] of its own, or jobs with one goal sharing a [`Flood`] run
/// backwards from it.
struct Flight {
    /// At least one; all on the same map, of the same size and with the same
    /// goal when `shared`.
    jobs: Vec<Job>,
    /// Whether the jobs share a search backwards from their goal.
    shared: bool,
    /// Made when the flight first gets budget, so admitting many requests
    /// at once does not set up grid-sized scratch for searches that will
    /// not run this frame.
    search: Option<Search>,
    /// A shared flight's search, made the same way.
    flood: Option<Flood>,
    /// Jobs a shared flight has answered, and the expansions it had spent
    /// when it last answered one.
    served: u64,
    reported: u64,
    /// The map as it was when edits had restarted the search
    /// `max_restarts` times: it finishes on this copy.
    frozen: Option<Arc<NavGrid>>,
}

impl Flight {
    fn new(job: Job) -> Self {
        Self {
            jobs: vec![job],
            shared: false,
            search: None,
            flood: None,
            served: 0,
            reported: 0,
            frozen: None,
        }
    }

    /// The job that stands for the flight: its map, size and (shared) goal.
    fn lead(&self) -> &Job {
        &self.jobs[0]
    }

    /// The best rank of its jobs (see [`Job::rank`]).
    fn rank(&self, aging_frames: u32) -> (i128, std::cmp::Reverse<u64>) {
        self.jobs
            .iter()
            .map(|job| job.rank(aging_frames))
            .max()
            .unwrap_or((i128::MIN, std::cmp::Reverse(u64::MAX)))
    }

    /// What a flight with these jobs could share, if it can.
    fn share_key(&self) -> Option<ShareKey> {
        let job = self.lead();
        let fresh = self.search.is_none() && !job.alone;
        (self.shared || fresh && self.jobs.len() == 1).then_some((job.map, job.size, job.goal))
    }

    /// Drops the search's state, returning its scratch space to `pool`.
    fn reset(&mut self, pool: &mut ScratchPool) {
        if let Some(search) = self.search.take() {
            pool.give(search.into_scratch());
        }
        if let Some(flood) = self.flood.take() {
            pool.give(flood.into_scratch());
        }
        // A new flood counts its expansions from zero again.
        self.reported = 0;
        self.frozen = None;
    }

    /// Ends the flight, returning its scratch space to `pool`.
    fn land(mut self, pool: &mut ScratchPool) -> Vec<Job> {
        self.reset(pool);
        self.jobs
    }
}

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
    waiting: Vec<Flight>,
    in_flight: Vec<Flight>,
    pool: ScratchPool,
    /// Reachable cell nearest to an unreachable goal, per (map, grid
    /// version, unit size, goal, start region): a group ordered onto a lake
    /// asks once. Emptied every frame, so it never outgrows one frame's
    /// orders.
    nearest: HashMap<NearestKey, Option<Cell>>,
    /// Copies of maps made this frame for searches that stop following
    /// edits, shared by all of them (emptied every frame).
    copies: HashMap<(Entity, u64), Arc<NavGrid>>,
    /// Whether a request that could share a search has started waiting
    /// since requests were last put together (`share_goals`).
    unshared: bool,
    /// The quick search under way (see [`PathfindingSettings::refine`]):
    /// the ticket of its job, and the search.
    quick: Option<(u64, Search)>,
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

    /// Runs of the plugin's schedule so far.
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// The searches in flight that have started: the requesting entity,
    /// the map and the search (for drawing frontiers, say).
    pub fn searches(&self) -> impl Iterator<Item = (Entity, Entity, &Search)> {
        self.in_flight.iter().filter_map(|flight| {
            let job = flight.lead();
            Some((job.entity, job.map, flight.search.as_ref()?))
        })
    }

    /// Searches shared by units with one goal, in flight: the jobs' map,
    /// the number of requests still waiting on it, and its search (a
    /// [`Flood`] run backwards from the goal).
    pub fn shared_searches(&self) -> impl Iterator<Item = (Entity, usize, &Flood)> {
        self.in_flight.iter().filter_map(|flight| {
            Some((flight.lead().map, flight.jobs.len(), flight.flood.as_ref()?))
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
    }
}

/// What the plugin did in the last frame.
#[derive(Resource, Clone, Debug, Default, PartialEq)]
pub struct PathfindingStats {
    /// Node expansions spent in the last frame, by searches and by group
    /// moves' floods (never above `nodes_per_frame`).
    pub frame_expansions: u64,
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

/// The cell of a start or goal, or why there is none.
pub(crate) fn locate(
    view: &MapView,
    target: PathTarget,
    is_goal: bool,
) -> Result<Cell, InvalidReason> {
    let (out_of_bounds, non_finite) = if is_goal {
        (InvalidReason::GoalOutOfBounds, InvalidReason::NonFiniteGoal)
    } else {
        (
            InvalidReason::StartOutOfBounds,
            InvalidReason::NonFiniteStart,
        )
    };
    match target {
        PathTarget::Cell(cell) if view.grid.in_bounds(cell) => Ok(view.anchor_of(cell)),
        PathTarget::Cell(_) => Err(out_of_bounds),
        PathTarget::World(position) => match view.world_to_cell(position) {
            CellLookup::Inside(cell) => Ok(cell),
            CellLookup::Outside(..) => Err(out_of_bounds),
            CellLookup::NonFinite => Err(non_finite),
        },
    }
}

/// The start and goal cells of a request on its map.
fn locate_request(
    view: &MapView,
    request: &PathRequest,
    transform: Option<&Transform>,
) -> Result<(Cell, Cell), InvalidReason> {
    if !view.is_valid() {
        return Err(InvalidReason::BadMapPlacement);
    }
    let start = match request.start {
        Some(start) => start,
        None => PathTarget::World(
            transform
                .ok_or(InvalidReason::NoStartPosition)?
                .translation
                .truncate(),
        ),
    };
    Ok((
        locate(view, start, false)?,
        locate(view, request.goal, true)?,
    ))
}

/// `(map, grid version, unit size, goal, start region)`.
type NearestKey = (Entity, u64, u8, Cell, u32);

/// Where a resolved request should search to, or its answer when no search
/// is needed.
enum Plan {
    Search { start: Cell, goal: Cell },
    Answer(PathStatus, Vec<Cell>),
}

/// Chooses the cells to search between on the grid as it is now: a start
/// in a wall moves to the nearest walkable cell (a unit a wall went up
/// under must still be able to walk out), and an unreachable goal becomes
/// the nearest reachable cell or an `Unreachable` answer, without a node
/// expanded.
fn plan(
    queue_nearest: &mut HashMap<NearestKey, Option<Cell>>,
    map: Entity,
    grid: SizeClass<'_>,
    start: Cell,
    goal: Cell,
    policy: Unreachable,
) -> Plan {
    let start = if grid.is_walkable(start) {
        start
    } else {
        match grid.nearest_walkable((start.x as i64, start.y as i64), None) {
            Some(cell) => cell,
            None => {
                return Plan::Answer(PathStatus::Invalid(InvalidReason::NoWalkableStart), vec![]);
            }
        }
    };
    let goal = if grid.connected(start, goal) {
        goal
    } else if policy == Unreachable::Fail {
        return Plan::Answer(PathStatus::Unreachable, vec![]);
    } else {
        let Some(region) = grid.region(start) else {
            return Plan::Answer(PathStatus::Invalid(InvalidReason::NoWalkableStart), vec![]);
        };
        let key = (map, grid.version(), grid.size(), goal, region);
        let nearest = *queue_nearest
            .entry(key)
            .or_insert_with(|| grid.nearest_walkable((goal.x as i64, goal.y as i64), Some(region)));
        match nearest {
            Some(cell) if cell == start => {
                return Plan::Answer(PathStatus::NearestReachable, vec![start]);
            }
            Some(cell) => cell,
            None => return Plan::Answer(PathStatus::Unreachable, vec![]),
        }
    };
    if start == goal {
        return Plan::Answer(PathStatus::Complete, vec![start]);
    }
    Plan::Search { start, goal }
}

/// Hands results to their units: component, event and message.
#[derive(SystemParam)]
pub(crate) struct Delivery<'w, 's> {
    commands: Commands<'w, 's>,
    messages: MessageWriter<'w, PathReady>,
    invalidated: MessageWriter<'w, PathInvalidated>,
    stats: ResMut<'w, PathfindingStats>,
}

impl Delivery<'_, '_> {
    fn send(&mut self, entity: Entity, result: PathResult) {
        self.stats.delivered += 1;
        self.stats.delivered_total += 1;
        self.stats.frames_waited_sum += result.frames_waited as u64;
        self.stats.max_frames_waited = self.stats.max_frames_waited.max(result.frames_waited);
        let ready = PathReady {
            entity,
            status: result.status,
            expansions: result.expansions,
            frames_waited: result.frames_waited,
        };
        self.messages.write(ready);
        let cut = result.invalidated.then_some(PathInvalidated { entity });
        if let Some(cut) = cut {
            self.invalidated.write(cut);
        }
        if let Ok(mut unit) = self.commands.get_entity(entity) {
            unit.try_insert(result);
            self.commands.trigger(ready);
            if let Some(cut) = cut {
                self.commands.trigger(cut);
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn path_result(
    status: PathStatus,
    map: Entity,
    view: &MapView,
    cells: Vec<Cell>,
    cost: f64,
    expansions: u64,
    grid_version: u64,
    frames_waited: u32,
) -> PathResult {
    PathResult {
        status,
        map: Some(map),
        waypoints: cells.iter().map(|&c| view.cell_to_world(c)).collect(),
        cells,
        size: view.size(),
        cost: cost as f32,
        expansions,
        frames_waited,
        grid_version,
        invalidated: false,
    }
}

/// `Invalidate`: a map that has just appeared (or changed) gets its region
/// labels now, for every unit size seen so far (and every map gets them
/// for a size when the first unit of that size appears), and the scratch
/// pool enough warm space for a search in every slot on it: in the frame
/// the game loads the map, not in the first frame that orders units on it.
pub(crate) fn prepare_maps(
    maps: Query<Ref<NavGrid>>,
    new_sizes: Query<&Footprint, Added<Footprint>>,
    mut sizes_seen: Local<Vec<u8>>,
    mut queue: ResMut<PathfindingQueue>,
    settings: Res<PathfindingSettings>,
) {
    let before = sizes_seen.len();
    for footprint in &new_sizes {
        if footprint.is_valid() && footprint.0 > 1 && !sizes_seen.contains(&footprint.0) {
            sizes_seen.push(footprint.0);
        }
    }
    let new_size = sizes_seen.len() > before;
    for grid in &maps {
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
            queue
                .pool
                .warm(settings.max_in_flight.max(1), grid.cell_count());
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
    for (entity, request, transform, footprint) in &changed {
        queue.cancel(entity);
        let footprint = footprint.copied().unwrap_or_default();
        let (map, view) = match maps.find(request.map) {
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
        let cells = locate_request(&view, request, transform);
        let (origin, goal) = match cells {
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
                let version = view.grid.version();
                let result = path_result(status, map, &view, cells, 0.0, 0, version, 0);
                delivery.send(entity, result);
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
                queue.waiting.push(Flight::new(Job {
                    entity,
                    ticket,
                    priority: request.priority,
                    map,
                    size: footprint.0,
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
    mut delivery: Delivery,
    mut diagnostics: Diagnostics,
) {
    let began = Instant::now();
    let queue = &mut *queue;
    let aging = settings.aging_frames;
    let slots = settings.max_in_flight.max(1);
    let max_restarts = settings.max_restarts;

    if settings.share_goals && std::mem::take(&mut queue.unshared) {
        share_goals(queue, &maps, settings.jump_points, &mut delivery);
    }
    if settings.refine {
        run_quick(queue, &settings, &mut budget, &maps);
    } else if let Some((_, search)) = queue.quick.take() {
        queue.pool.give(search.into_scratch());
    }
    let lanes = settings.search_lanes.max(1);
    while budget.left() > 0 {
        admit(queue, slots, aging, max_restarts, &maps, &mut delivery);
        if queue.in_flight.is_empty() {
            break;
        }
        if lanes > 1 {
            if !run_lanes(queue, lanes, &settings, &mut budget, &maps, &mut delivery) {
                break;
            }
            continue;
        }
        let Some(index) =
            (0..queue.in_flight.len()).max_by_key(|&i| queue.in_flight[i].rank(aging))
        else {
            break;
        };
        let flight = queue.in_flight.swap_remove(index);
        let mut flight = refresh(queue, flight, max_restarts, &maps, &mut delivery);
        let Some(view) = flight.as_ref().and_then(|f| maps.get(f.lead().map)) else {
            continue;
        };
        let view = view.for_size(flight.as_ref().expect("checked").lead().size);
        let live = view.grid;
        let frozen = flight.as_ref().and_then(|f| f.frozen.clone());
        let grid = frozen.as_deref().unwrap_or(live);
        if !prepare(queue, &mut flight, grid, &settings) {
            continue;
        }
        let mut flight = flight.expect("prepared");
        let spent = advance(&mut flight, grid, budget.slice());
        budget.spend(spent);
        let flight = finish(queue, flight, &view, &settings, &mut delivery);
        queue.in_flight.extend(flight);
    }
    // Fill free slots so the queue count says what truly waits.
    admit(queue, slots, aging, max_restarts, &maps, &mut delivery);
    // A quick path whose real one came in the same frame is not sent: one
    // answer a frame.
    for (entity, result) in std::mem::take(&mut queue.provisional) {
        if queue.live.contains(&entity) {
            delivery.send(entity, result);
        }
    }

    let stats = &mut *delivery.stats;
    stats.frame_expansions = budget.spent();
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

/// Quick searches (see [`PathfindingSettings::refine`]) before the
/// searches with real costs, on the whole budget while no request has
/// waited [`QUICK_FIRST_FRAMES`], else on up to half of it: one at a time,
/// kept between frames like any search, each for the best-ranked request
/// alone on a map with terrain costs that has neither its quick path nor
/// its real one yet and was not answered in the frame it was made in. One
/// that edits restart more than `max_restarts` times is dropped (the
/// request gets its real path only). Its path is sent at the frame's end
/// as [`PathStatus::Provisional`] (unless the real one came too), and the
/// request goes on waiting for its real search.
fn run_quick(
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
        let (ticket, mut search) = match queue.quick.take() {
            Some(quick) => quick,
            None => {
                let Some(job) = next_quick(queue, settings.aging_frames, maps) else {
                    return;
                };
                let Some(view) = maps.get(job.map) else {
                    return;
                };
                let config = SearchConfig {
                    size: job.size,
                    ignore_costs: true,
                    heuristic_weight: QUICK_WEIGHT,
                    ..search_config(settings)
                };
                let search =
                    Search::planned(&mut queue.pool, view.grid, job.start, job.goal, config);
                (job.ticket, search)
            }
        };
        // The request may have been answered, cancelled, or planned anew
        // on an edited map since the search began.
        let Some(job) = quick_job(queue, ticket)
            .filter(|job| job.quick && (job.start, job.goal) == (search.start(), search.goal()))
        else {
            queue.pool.give(search.into_scratch());
            continue;
        };
        let Some(view) = maps.get(job.map) else {
            queue.pool.give(search.into_scratch());
            continue;
        };
        let view = view.for_size(job.size);
        let before = search.expansions();
        let status = search.step(view.grid, budget.slice().min(left));
        let used = search.expansions() - before;
        budget.spend(used);
        left = left.saturating_sub(used.min(u32::MAX as u64) as u32);
        if search.restarts() > settings.max_restarts {
            // Edits keep hitting it: the real path will do.
            job.quick = false;
            queue.pool.give(search.into_scratch());
            continue;
        }
        if !status.is_finished() {
            queue.quick = Some((ticket, search));
            if used == 0 {
                return;
            }
            continue;
        }
        job.quick = false;
        if status == SearchStatus::Found {
            let job = job.clone();
            let path = search.take_path().unwrap_or_default();
            let result = path_result(
                PathStatus::Provisional,
                job.map,
                &view,
                path.cells,
                path.cost,
                search.expansions(),
                view.grid.version(),
                (queue.frame - job.frame_requested) as u32,
            );
            queue.provisional.push((job.entity, result));
        }
        queue.pool.give(search.into_scratch());
    }
}

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

/// The best-ranked request that still wants a quick path, is searched
/// alone, is on a map with terrain costs (for its unit's size) and went
/// unanswered through the frame it was made in.
fn next_quick(queue: &PathfindingQueue, aging_frames: u32, maps: &Maps) -> Option<Job> {
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
        .filter(|flight| !flight.shared)
        .map(Flight::lead)
        // A request's first frame goes to its real search: most on a small
        // map end there, and a quick path would only delay them.
        .filter(|job| job.quick && job.frame_requested < queue.frame && has_terrain(job))
        .max_by_key(|job| job.rank(aging_frames))
        .cloned()
}

/// The job with `ticket`, searched alone, waiting or in flight.
fn quick_job(queue: &mut PathfindingQueue, ticket: u64) -> Option<&mut Job> {
    queue
        .waiting
        .iter_mut()
        .chain(&mut queue.in_flight)
        .filter(|flight| !flight.shared)
        .map(|flight| &mut flight.jobs[0])
        .find(|job| job.ticket == ticket)
}

/// The grid a flight searches: the live map, or the copy a search that
/// edits kept restarting finishes on.
fn grid_of<'a>(frozen: &'a Option<Arc<NavGrid>>, view: &MapView<'a>) -> &'a NavGrid {
    frozen.as_deref().unwrap_or(view.grid)
}

/// Sets up a flight's search (its own [`Search`], or a shared [`Flood`]
/// from the goal towards every job's start) when it first gets budget.
/// `false` when the flight dissolved instead: a shared flight whose goal
/// cannot be searched from sends its jobs back to wait alone.
fn prepare(
    queue: &mut PathfindingQueue,
    flight: &mut Option<Flight>,
    grid: &NavGrid,
    settings: &PathfindingSettings,
) -> bool {
    let Some(f) = flight.as_mut() else {
        return false;
    };
    let lead = &f.jobs[0];
    if !f.shared {
        let config = SearchConfig {
            size: lead.size,
            ..search_config(settings)
        };
        // `plan` chose both cells on this grid version.
        f.search.get_or_insert_with(|| {
            Search::planned(&mut queue.pool, grid, lead.start, lead.goal, config)
        });
        return true;
    }
    if f.flood.is_some() {
        return true;
    }
    let starts = f.jobs.iter().map(|job| job.start);
    let flood = Flood::with_scratch(
        queue.pool.take(),
        grid,
        lead.size,
        lead.goal,
        FloodDirection::ToSource,
        starts,
        None,
    );
    match flood {
        Ok(flood) => {
            f.flood = Some(flood.guided(grid));
            true
        }
        Err(_) => {
            split_alone(queue, flight.take().expect("checked"));
            false
        }
    }
}

/// Runs a prepared flight's search for at most `budget` expansions on
/// `grid`; returns the expansions spent. Touches nothing but the flight, so
/// flights can advance side by side on several threads.
fn advance(flight: &mut Flight, grid: &NavGrid, budget: u32) -> u64 {
    if let Some(search) = flight.search.as_mut() {
        let before = search.expansions();
        search.step(grid, budget);
        search.expansions() - before
    } else if let Some(flood) = flight.flood.as_mut() {
        let before = flood.expansions();
        flood.step(grid, budget);
        flood.expansions() - before
    } else {
        0
    }
}

/// Delivers what an advanced flight has found: its own search's result
/// once it has finished, or a shared flight's answer to every job whose
/// start it has settled. Jobs a shared flight cannot serve (it ended
/// without reaching them, or went over the jobs' summed expansion caps)
/// wait again, each for a search of its own. The flight back while it
/// still has a job to serve.
fn finish(
    queue: &mut PathfindingQueue,
    mut flight: Flight,
    view: &MapView,
    settings: &PathfindingSettings,
    delivery: &mut Delivery,
) -> Option<Flight> {
    let grid = grid_of(&flight.frozen, view);
    let version = grid.version();
    if !flight.shared {
        if !flight.search.as_ref()?.status().is_finished() {
            return Some(flight);
        }
        let search = flight.search.take()?;
        let job = flight.jobs.swap_remove(0);
        deliver_search(queue, job, search, view, version, delivery);
        return None;
    }
    let flood = flight.flood.as_ref()?;
    let mut i = 0;
    while i < flight.jobs.len() {
        let start = flight.jobs[i].start;
        let Some(path) = flood.path(grid, start) else {
            i += 1;
            continue;
        };
        let job = flight.jobs.swap_remove(i);
        let expansions = flood.expansions() - flight.reported;
        flight.reported = flood.expansions();
        flight.served += 1;
        let status = found_status(&job);
        deliver(
            queue, &job, status, path, expansions, view, version, delivery,
        );
    }
    let cap = settings
        .max_expansions_per_request
        .map(|cap| cap as u64 * (flight.served + flight.jobs.len() as u64));
    let over_cap = cap.is_some_and(|cap| flood.expansions() >= cap);
    if flight.jobs.is_empty() {
        flight.land(&mut queue.pool);
        None
    } else if flood.is_finished() || over_cap {
        split_alone(queue, flight);
        None
    } else {
        Some(flight)
    }
}

/// One round of searches side by side (`PathfindingSettings::search_lanes`
/// above 1): the flights in flight, best first, are checked against their
/// maps and set up one by one, then advanced in lanes by
/// [`run_side_by_side`] (so every thread count gives the same results in
/// the same frames) and delivered in the same order. Returns whether the
/// round spent or answered anything.
fn run_lanes(
    queue: &mut PathfindingQueue,
    lanes: usize,
    settings: &PathfindingSettings,
    budget: &mut FrameBudget,
    maps: &Maps,
    delivery: &mut Delivery,
) -> bool {
    let aging = settings.aging_frames;
    let delivered = delivery.stats.delivered;
    let mut flights = std::mem::take(&mut queue.in_flight);
    flights.sort_by_key(|flight| std::cmp::Reverse(flight.rank(aging)));
    // Checked against the map and set up one by one, best first.
    let mut ready: Vec<(Flight, MapView)> = Vec::with_capacity(flights.len());
    for flight in flights {
        let mut flight = refresh(queue, flight, settings.max_restarts, maps, delivery);
        let Some(view) = flight.as_ref().and_then(|f| maps.get(f.lead().map)) else {
            continue;
        };
        let view = view.for_size(flight.as_ref().expect("checked").lead().size);
        let frozen = flight.as_ref().and_then(|f| f.frozen.clone());
        if prepare(
            queue,
            &mut flight,
            frozen.as_deref().unwrap_or(view.grid),
            settings,
        ) {
            ready.push((flight.expect("prepared"), view));
        }
    }
    let lane_count = lanes.min(ready.len());
    if lane_count == 0 {
        return delivery.stats.delivered > delivered;
    }
    let total = budget.slice_of(lane_count as u32);
    let mut items: Vec<(&mut Flight, &NavGrid)> = ready
        .iter_mut()
        .map(|(flight, view)| (flight, view.grid))
        .collect();
    let spent = run_side_by_side(&mut items, lanes, settings.threads, total, |item, most| {
        let (flight, live) = item;
        let frozen = flight.frozen.clone();
        advance(flight, frozen.as_deref().unwrap_or(live), most)
    });
    drop(items);
    budget.spend(spent);
    for (flight, view) in ready {
        let flight = finish(queue, flight, &view, settings, delivery);
        queue.in_flight.extend(flight);
    }
    spent > 0 || delivery.stats.delivered > delivered
}

/// Sends every job of `flight` back to wait for a search of its own.
fn split_alone(queue: &mut PathfindingQueue, flight: Flight) {
    for mut job in flight.land(&mut queue.pool) {
        job.alone = true;
        queue.waiting.push(Flight::new(job));
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

/// Fewest requests that share a search on maps where each would otherwise
/// be a jump point search (a shared search is a plain A*, which expands
/// several times the nodes of a jump point search); elsewhere two do.
const MIN_SHARED_ON_JUMPS: usize = 4;

/// `span` grown to hold `cell`.
fn span_with(span: Option<Span>, cell: Cell) -> Span {
    let [min_x, min_y, max_x, max_y] = span.unwrap_or([cell.x, cell.y, cell.x, cell.y]);
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

/// Puts waiting requests with the same goal together when their starts lie
/// close together ([`shareable`]): each joins a shared flight with its goal
/// (in flight, which answers it at once when it has already settled its
/// start, or waiting), or enough waiting requests with its goal become a
/// shared flight. Waiting searches that have already started alone, and
/// requests that left a shared flight, stay alone. Lists are walked in
/// order, so the result never depends on hash order.
fn share_goals(
    queue: &mut PathfindingQueue,
    maps: &Maps,
    jump_points: bool,
    delivery: &mut Delivery,
) {
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
    let PathfindingQueue {
        in_flight,
        pool,
        waiting,
        ..
    } = &mut *queue;
    let mut clusters: Vec<Cluster> = Vec::new();
    let mut by_key: HashMap<ShareKey, Vec<usize>> = HashMap::new();
    /// The cluster a flight with `key` and these starts joins (a new one
    /// when none of its key has room for them).
    fn join(
        clusters: &mut Vec<Cluster>,
        by_key: &mut HashMap<ShareKey, Vec<usize>>,
        key: ShareKey,
        flight: &Flight,
    ) -> usize {
        let list = by_key.entry(key).or_default();
        let grown = |span: Option<Span>| {
            flight
                .jobs
                .iter()
                .fold(span, |span, job| Some(span_with(span, job.start)))
        };
        for &c in list.iter() {
            let span = grown(Some(clusters[c].span)).expect("a span");
            if shareable(span, key.2) {
                clusters[c].span = span;
                clusters[c].jobs += flight.jobs.len();
                return c;
            }
        }
        list.push(clusters.len());
        clusters.push(Cluster {
            key,
            span: grown(None).expect("a flight has a job"),
            in_flight: None,
            jobs: flight.jobs.len(),
            home: None,
        });
        clusters.len() - 1
    }
    for (i, flight) in in_flight.iter().enumerate() {
        if let Some(key) = flight.share_key().filter(|_| flight.shared) {
            let c = join(&mut clusters, &mut by_key, key, flight);
            clusters[c].in_flight.get_or_insert(i);
        }
    }
    let waiting = std::mem::take(waiting);
    let cluster_of: Vec<Option<usize>> = waiting
        .iter()
        .map(|flight| {
            let key = flight.share_key()?;
            Some(join(&mut clusters, &mut by_key, key, flight))
        })
        .collect();
    let fewest = |key: ShareKey| {
        let jumps = jump_points
            && maps.get(key.0).is_some_and(|view| {
                let class = view.for_size(key.1).class();
                class.neighborhood() == Neighborhood::Eight
                    && class.min_walkable_cost() == class.max_walkable_cost()
            });
        if jumps { MIN_SHARED_ON_JUMPS } else { 2 }
    };
    let mut ready = Vec::new();
    let mut kept: Vec<Flight> = Vec::with_capacity(waiting.len());
    for (flight, cluster) in waiting.into_iter().zip(cluster_of) {
        let Some(cluster) = cluster.map(|c| &mut clusters[c]) else {
            kept.push(flight);
            continue;
        };
        if cluster.in_flight.is_none() && cluster.jobs < fewest(cluster.key) {
            kept.push(flight);
            continue;
        }
        let home = match (cluster.in_flight, cluster.home) {
            (Some(i), _) => &mut in_flight[i],
            (None, Some(i)) => &mut kept[i],
            (None, None) => {
                cluster.home = Some(kept.len());
                kept.push(flight);
                kept.last_mut().expect("just pushed").shared = true;
                continue;
            }
        };
        home.shared = true;
        let jobs = flight.land(pool);
        let key = cluster.key;
        let Some(view) = maps.get(key.0) else {
            home.jobs.extend(jobs);
            continue;
        };
        let view = view.for_size(key.1);
        let grid = home.frozen.as_deref().unwrap_or(view.grid);
        for job in jobs {
            let Some(flood) = home.flood.as_mut() else {
                home.jobs.push(job);
                continue;
            };
            // Settled on another grid version (the flood has not caught up
            // with edits, or the job was planned on a newer map than the
            // flight's copy): the job waits for the flood to run again.
            let current =
                job.grid_version == grid.version() && flood.grid_version() == grid.version();
            match flood.path(grid, job.start).filter(|_| current) {
                Some(path) => {
                    home.served += 1;
                    ready.push((job, path, grid.version()));
                }
                None => {
                    flood.add_targets(grid, [job.start]);
                    home.jobs.push(job);
                }
            }
        }
    }
    queue.waiting = kept;
    for (job, path, version) in ready {
        let Some(view) = maps.get(job.map) else {
            continue;
        };
        let view = view.for_size(job.size);
        let status = found_status(&job);
        deliver(queue, &job, status, path, 0, &view, version, delivery);
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

/// Starts the best waiting requests while slots are free, and lets a
/// waiting request that outranks the lowest search in flight take its
/// slot. The evicted search waits again with its state kept (up to one
/// kept state per slot; beyond that the lowest starts over), and resumes
/// where it stopped when it gets a slot back. Ranks never change order
/// over time ([`Job::rank`]), so it cannot throw out the request that
/// evicted it. A shared flight ranks as its best job.
fn admit(
    queue: &mut PathfindingQueue,
    slots: usize,
    aging: u32,
    max_restarts: u32,
    maps: &Maps,
    delivery: &mut Delivery,
) {
    loop {
        let Some(best) = (0..queue.waiting.len()).max_by_key(|&i| queue.waiting[i].rank(aging))
        else {
            return;
        };
        if queue.in_flight.len() >= slots {
            let best_rank = queue.waiting[best].rank(aging);
            let Some(worst) =
                (0..queue.in_flight.len()).min_by_key(|&i| queue.in_flight[i].rank(aging))
            else {
                return;
            };
            if queue.in_flight[worst].rank(aging) >= best_rank {
                return;
            }
            let mut evicted = queue.in_flight.swap_remove(worst);
            let parked = queue
                .waiting
                .iter()
                .filter(|f| f.search.is_some() || f.flood.is_some())
                .count();
            if parked >= slots {
                evicted.reset(&mut queue.pool);
            }
            queue.waiting.push(evicted);
            continue;
        }
        let flight = queue.waiting.swap_remove(best);
        if let Some(flight) = refresh(queue, flight, max_restarts, maps, delivery) {
            queue.in_flight.push(flight);
        }
    }
}

/// Checks a flight against its map as it is now, before it runs. Jobs on
/// a removed map are answered `MapRemoved`. After edits, each job's cells
/// are chosen again from where its unit stood: the same cells keep the
/// search (which itself carries on or starts over, see `Search::step`),
/// other cells start a new one (a job of a shared flight whose goal moved
/// waits for a search of its own; one whose start moved becomes a new
/// target of the shared search), and a job that needs no search any more
/// is answered. A search that edits made start over `max_restarts` times
/// is moved onto a copy of the map as it is now, and finishes there.
/// `None` when no job is left in the flight.
fn refresh(
    queue: &mut PathfindingQueue,
    mut flight: Flight,
    max_restarts: u32,
    maps: &Maps,
    delivery: &mut Delivery,
) -> Option<Flight> {
    let frame = queue.frame;
    let Some(view) = maps.get(flight.lead().map) else {
        for job in flight.land(&mut queue.pool) {
            answer_invalid(queue, &job, InvalidReason::MapRemoved, delivery);
        }
        return None;
    };
    let view = view.for_size(flight.lead().size);
    let grid = view.grid;
    let version = grid.version();
    if flight.frozen.is_some() || flight.jobs.iter().all(|job| job.grid_version == version) {
        return Some(flight);
    }
    let goal = flight.lead().goal;
    let mut kept = Vec::with_capacity(flight.jobs.len());
    for mut job in std::mem::take(&mut flight.jobs) {
        if job.grid_version == version {
            kept.push(job);
            continue;
        }
        match plan(
            &mut queue.nearest,
            job.map,
            view.class(),
            job.origin,
            job.requested_goal,
            job.policy,
        ) {
            Plan::Answer(status, cells) => {
                queue.live.remove(&job.entity);
                let waited = (frame - job.frame_requested) as u32;
                let result = path_result(status, job.map, &view, cells, 0.0, 0, version, waited);
                delivery.send(job.entity, result);
            }
            Plan::Search {
                start,
                goal: target,
            } => {
                job.grid_version = version;
                let moved = (start, target) != (job.start, job.goal);
                job.start = start;
                job.goal = target;
                if !flight.shared {
                    if moved {
                        flight.reset(&mut queue.pool);
                    }
                    kept.push(job);
                } else if target != goal {
                    queue.unshared = true;
                    queue.waiting.push(Flight::new(job));
                } else {
                    if let Some(flood) = flight.flood.as_mut().filter(|_| moved) {
                        flood.add_targets(grid, [start]);
                    }
                    kept.push(job);
                }
            }
        }
    }
    flight.jobs = kept;
    if flight.jobs.is_empty() {
        flight.land(&mut queue.pool);
        return None;
    }
    let restarts = match (&flight.search, &flight.flood) {
        (Some(search), _) => search.restarts(),
        (None, Some(flood)) => flood.restarts(),
        (None, None) => 0,
    };
    if restarts >= max_restarts && (flight.search.is_some() || flight.flood.is_some()) {
        let copy = queue
            .copies
            .entry((flight.lead().map, version))
            .or_insert_with(|| Arc::new(grid.clone()));
        flight.frozen = Some(copy.clone());
    }
    Some(flight)
}

/// Answers a job that cannot be searched.
fn answer_invalid(
    queue: &mut PathfindingQueue,
    job: &Job,
    reason: InvalidReason,
    delivery: &mut Delivery,
) {
    queue.live.remove(&job.entity);
    let waited = (queue.frame - job.frame_requested) as u32;
    let result = PathResult::without_path(PathStatus::Invalid(reason), Some(job.map), waited);
    delivery.send(job.entity, result);
}

/// The status of a path found to a job's goal.
fn found_status(job: &Job) -> PathStatus {
    if job.goal != job.requested_goal {
        PathStatus::NearestReachable
    } else {
        PathStatus::Complete
    }
}

/// Delivers a finished search, found on grid version `version`.
fn deliver_search(
    queue: &mut PathfindingQueue,
    job: Job,
    mut search: Search,
    view: &MapView,
    version: u64,
    delivery: &mut Delivery,
) {
    let status = match search.status() {
        SearchStatus::Found => found_status(&job),
        SearchStatus::Partial => PathStatus::Partial,
        SearchStatus::Unreachable | SearchStatus::Running => PathStatus::Unreachable,
    };
    let path = search.take_path().unwrap_or_default();
    let expansions = search.expansions();
    queue.pool.give(search.into_scratch());
    deliver(
        queue, &job, status, path, expansions, view, version, delivery,
    );
}

/// Delivers `path` for `job`, found on grid version `version` with
/// `expansions` expansions.
#[allow(clippy::too_many_arguments)]
fn deliver(
    queue: &mut PathfindingQueue,
    job: &Job,
    status: PathStatus,
    path: Path,
    expansions: u64,
    view: &MapView,
    version: u64,
    delivery: &mut Delivery,
) {
    queue.live.remove(&job.entity);
    let mut result = path_result(
        status,
        job.map,
        view,
        path.cells,
        path.cost,
        expansions,
        version,
        (queue.frame - job.frame_requested) as u32,
    );
    // Found on a copy of the map: edits made since that the path crosses
    // flag it at once.
    result.invalidated =
        version != view.grid.version() && changed_since(view.class(), version, &result.cells);
    delivery.send(job.entity, result);
}
