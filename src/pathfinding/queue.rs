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
use crate::core::{Cell, NavGrid, ScratchPool, Search, SearchConfig, SearchStatus, SizeClass};
use crate::maps::{CellLookup, MapView, Maps};
use crate::schedule::{FrameBudget, PathfindingSettings};

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

/// A job and its search, in flight or waiting (a search that lost its slot
/// keeps its state and resumes where it was).
struct Flight {
    job: Job,
    /// Made when the flight first gets budget, so admitting many requests
    /// at once does not set up grid-sized scratch for searches that will
    /// not run this frame.
    search: Option<Search>,
    /// The map as it was when edits had restarted the search
    /// `max_restarts` times: it finishes on this copy.
    frozen: Option<Arc<NavGrid>>,
}

impl Flight {
    fn new(job: Job) -> Self {
        Self {
            job,
            search: None,
            frozen: None,
        }
    }

    /// Drops the search's state, returning its scratch space to `pool`.
    fn reset(&mut self, pool: &mut ScratchPool) {
        if let Some(search) = self.search.take() {
            pool.give(search.into_scratch());
        }
        self.frozen = None;
    }

    /// Ends the flight, returning its scratch space to `pool`.
    fn land(mut self, pool: &mut ScratchPool) -> Job {
        self.reset(pool);
        self.job
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
        self.in_flight
            .iter()
            .filter_map(|flight| Some((flight.job.entity, flight.job.map, flight.search.as_ref()?)))
    }

    fn cancel(&mut self, entity: Entity) {
        if !self.live.remove(&entity) {
            return;
        }
        if let Some(i) = self.waiting.iter().position(|f| f.job.entity == entity) {
            self.waiting.swap_remove(i).land(&mut self.pool);
        }
        if let Some(i) = self.in_flight.iter().position(|f| f.job.entity == entity) {
            self.in_flight.swap_remove(i).land(&mut self.pool);
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
                }));
            }
        }
    }
    delivery.stats.frame_time += began.elapsed();
}

/// `Search`: spends what is left of the frame's node budget on the best
/// search in flight, then the next, admitting waiting requests as slots
/// free up, and delivers what finishes.
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
    let frame = queue.frame;
    let aging = settings.aging_frames;
    let settings_config = search_config(&settings);
    let slots = settings.max_in_flight.max(1);
    let max_restarts = settings.max_restarts;

    while budget.left() > 0 {
        admit(queue, slots, aging, max_restarts, &maps, &mut delivery);
        let Some(index) =
            (0..queue.in_flight.len()).max_by_key(|&i| queue.in_flight[i].job.rank(aging))
        else {
            break;
        };
        let flight = queue.in_flight.swap_remove(index);
        let Some(mut flight) = refresh(queue, flight, max_restarts, &maps, &mut delivery) else {
            continue;
        };
        let Some(view) = maps.get(flight.job.map) else {
            continue;
        };
        let view = view.for_size(flight.job.size);
        let config = SearchConfig {
            size: flight.job.size,
            ..settings_config
        };
        // The live map, or the copy a search that edits kept restarting
        // finishes on.
        let grid = flight.frozen.as_deref().unwrap_or(view.grid);
        let job = &flight.job;
        // `plan` chose both cells on this grid version; a search is set up
        // only now that it gets budget.
        let search = flight.search.get_or_insert_with(|| {
            Search::planned(&mut queue.pool, grid, job.start, job.goal, config)
        });
        let before = search.expansions();
        let status = search.step(grid, budget.slice());
        budget.spend(search.expansions() - before);
        if status.is_finished() {
            let version = grid.version();
            if let Some(search) = flight.search.take() {
                deliver_search(
                    queue,
                    flight.job,
                    search,
                    &view,
                    version,
                    frame,
                    &mut delivery,
                );
            }
        } else {
            queue.in_flight.push(flight);
        }
    }
    // Fill free slots so the queue count says what truly waits.
    admit(queue, slots, aging, max_restarts, &maps, &mut delivery);

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

/// How searches run under `settings`.
fn search_config(settings: &PathfindingSettings) -> SearchConfig {
    SearchConfig {
        heuristic_weight: settings.heuristic_weight,
        max_expansions: settings.max_expansions_per_request,
        jump_points: settings.jump_points,
        size: 1,
    }
}

/// Starts the best waiting requests while slots are free, and lets a
/// waiting request that outranks the lowest search in flight take its
/// slot. The evicted search waits again with its state kept (up to one
/// kept state per slot; beyond that the lowest starts over), and resumes
/// where it stopped when it gets a slot back. Ranks never change order
/// over time ([`Job::rank`]), so it cannot throw out the request that
/// evicted it.
fn admit(
    queue: &mut PathfindingQueue,
    slots: usize,
    aging: u32,
    max_restarts: u32,
    maps: &Maps,
    delivery: &mut Delivery,
) {
    loop {
        let Some(best) = (0..queue.waiting.len()).max_by_key(|&i| queue.waiting[i].job.rank(aging))
        else {
            return;
        };
        if queue.in_flight.len() >= slots {
            let best_rank = queue.waiting[best].job.rank(aging);
            let Some(worst) =
                (0..queue.in_flight.len()).min_by_key(|&i| queue.in_flight[i].job.rank(aging))
            else {
                return;
            };
            if queue.in_flight[worst].job.rank(aging) >= best_rank {
                return;
            }
            let mut evicted = queue.in_flight.swap_remove(worst);
            let parked = queue.waiting.iter().filter(|f| f.search.is_some()).count();
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

/// Checks a job against its map as it is now, before it runs. A job on a
/// removed map is answered `MapRemoved`. After edits, its cells are chosen
/// again from where the unit stood: the same cells keep the search (which
/// itself carries on or starts over, see `Search::step`), other cells start
/// a new one, and a job that needs no search any more is answered. A search
/// that edits made start over `max_restarts` times is moved onto a copy of
/// the map as it is now, and finishes there. `None` when the job was
/// answered.
fn refresh(
    queue: &mut PathfindingQueue,
    mut flight: Flight,
    max_restarts: u32,
    maps: &Maps,
    delivery: &mut Delivery,
) -> Option<Flight> {
    let frame = queue.frame;
    let Some(view) = maps.get(flight.job.map) else {
        let job = flight.land(&mut queue.pool);
        answer_invalid(queue, &job, InvalidReason::MapRemoved, frame, delivery);
        return None;
    };
    let view = view.for_size(flight.job.size);
    let grid = view.grid;
    if flight.frozen.is_some() || flight.job.grid_version == grid.version() {
        return Some(flight);
    }
    let job = &mut flight.job;
    match plan(
        &mut queue.nearest,
        job.map,
        view.class(),
        job.origin,
        job.requested_goal,
        job.policy,
    ) {
        Plan::Answer(status, cells) => {
            let job = flight.land(&mut queue.pool);
            queue.live.remove(&job.entity);
            let waited = (frame - job.frame_requested) as u32;
            let result = path_result(
                status,
                job.map,
                &view,
                cells,
                0.0,
                0,
                grid.version(),
                waited,
            );
            delivery.send(job.entity, result);
            None
        }
        Plan::Search { start, goal } => {
            job.grid_version = grid.version();
            if (start, goal) != (job.start, job.goal) {
                job.start = start;
                job.goal = goal;
                flight.reset(&mut queue.pool);
            } else if flight
                .search
                .as_ref()
                .is_some_and(|search| search.restarts() >= max_restarts)
            {
                let copy = queue
                    .copies
                    .entry((flight.job.map, grid.version()))
                    .or_insert_with(|| Arc::new(grid.clone()));
                flight.frozen = Some(copy.clone());
            }
            Some(flight)
        }
    }
}

/// Answers a job that cannot be searched.
fn answer_invalid(
    queue: &mut PathfindingQueue,
    job: &Job,
    reason: InvalidReason,
    frame: u64,
    delivery: &mut Delivery,
) {
    queue.live.remove(&job.entity);
    let waited = (frame - job.frame_requested) as u32;
    let result = PathResult::without_path(PathStatus::Invalid(reason), Some(job.map), waited);
    delivery.send(job.entity, result);
}

/// Delivers a finished search, found on grid version `version`.
fn deliver_search(
    queue: &mut PathfindingQueue,
    job: Job,
    mut search: Search,
    view: &MapView,
    version: u64,
    frame: u64,
    delivery: &mut Delivery,
) {
    queue.live.remove(&job.entity);
    let redirected = job.goal != job.requested_goal;
    let status = match search.status() {
        SearchStatus::Found if redirected => PathStatus::NearestReachable,
        SearchStatus::Found => PathStatus::Complete,
        SearchStatus::Partial => PathStatus::Partial,
        SearchStatus::Unreachable | SearchStatus::Running => PathStatus::Unreachable,
    };
    let path = search.take_path().unwrap_or_default();
    let mut result = path_result(
        status,
        job.map,
        view,
        path.cells,
        path.cost,
        search.expansions(),
        version,
        (frame - job.frame_requested) as u32,
    );
    // Found on a copy of the map: edits made since that the path crosses
    // flag it at once.
    result.invalidated =
        version != view.grid.version() && changed_since(view.class(), version, &result.cells);
    queue.pool.give(search.into_scratch());
    delivery.send(job.entity, result);
}
