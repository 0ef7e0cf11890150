//! The request queue and the per-frame budget loop behind
//! [`PathfindingPlugin`](super::PathfindingPlugin).

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use bevy::diagnostic::Diagnostics;
use bevy::ecs::entity::{EntityHashMap, EntityHashSet};
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;

use super::diagnostics::{EXPANSIONS, FRAMES_TO_RESULT, IN_FLIGHT, QUEUED, SEARCH_MS};
use super::request::{PathRequest, PathTarget, Unreachable};
use super::result::{InvalidReason, PathInvalidated, PathReady, PathResult, PathStatus};
use crate::core::{Cell, GridChanges, NavGrid, ScratchPool, Search, SearchConfig, SearchStatus};
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
    start: Cell,
    /// The cell asked for.
    requested_goal: Cell,
    policy: Unreachable,
    /// The cell searched for: the requested goal, or the reachable cell
    /// nearest to it.
    goal: Cell,
    /// The grid version `goal` was chosen on.
    grid_version: u64,
    frame_requested: u64,
}

impl Job {
    /// Priority after ageing: one level more per `aging_frames` waited.
    fn effective_priority(&self, frame: u64, aging_frames: u32) -> i64 {
        let age = frame - self.frame_requested;
        let bonus = if aging_frames == 0 {
            0
        } else {
            (age / aging_frames as u64) as i64
        };
        self.priority as i64 + bonus
    }

    /// Orders jobs: higher effective priority first, then arrival.
    fn rank(&self, frame: u64, aging_frames: u32) -> (i64, std::cmp::Reverse<u64>) {
        (
            self.effective_priority(frame, aging_frames),
            std::cmp::Reverse(self.ticket),
        )
    }
}

struct Flight {
    job: Job,
    /// Made when the flight first gets budget, so admitting many requests
    /// at once does not set up grid-sized scratch for searches that will
    /// not run this frame.
    search: Option<Search>,
}

impl Flight {
    /// Ends the flight, returning its scratch space to `pool`.
    fn land(self, pool: &mut ScratchPool) -> Job {
        if let Some(search) = self.search {
            pool.give(search.into_scratch());
        }
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
    waiting: Vec<Job>,
    in_flight: Vec<Flight>,
    pool: ScratchPool,
    /// Reachable cell nearest to an unreachable goal, per (map, grid
    /// version, goal, start region): a group ordered onto a lake asks once.
    /// Emptied every frame, so it never outgrows one frame's orders.
    nearest: HashMap<(Entity, u64, Cell, u32), Option<Cell>>,
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
        self.waiting.retain(|job| job.entity != entity);
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
    /// Results delivered in the last frame.
    pub delivered: usize,
    /// Results delivered since the app started.
    pub delivered_total: u64,
    /// Most frames any result delivered in the last frame waited.
    pub max_frames_waited: u32,
    frames_waited_sum: u64,
}

impl PathfindingStats {
    fn begin_frame(&mut self) {
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
        PathTarget::Cell(cell) if view.grid.in_bounds(cell) => Ok(cell),
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
    queue_nearest: &mut HashMap<(Entity, u64, Cell, u32), Option<Cell>>,
    map: Entity,
    grid: &NavGrid,
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
        let key = (map, grid.version(), goal, region);
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
        if let Ok(mut unit) = self.commands.get_entity(entity) {
            unit.try_insert(result);
            self.commands.trigger(ready);
        }
    }
}

fn path_result(
    status: PathStatus,
    map: Entity,
    view: &MapView,
    cells: Vec<Cell>,
    cost: f64,
    expansions: u64,
    frames_waited: u32,
) -> PathResult {
    PathResult {
        status,
        map: Some(map),
        waypoints: cells.iter().map(|&c| view.cell_to_world(c)).collect(),
        cells,
        cost: cost as f32,
        expansions,
        frames_waited,
        grid_version: view.grid.version(),
        invalidated: false,
    }
}

/// `Collect`: reads removed and new or changed requests. Bad ones and
/// those needing no search are answered now; the rest wait in the queue.
pub(crate) fn collect_requests(
    mut queue: ResMut<PathfindingQueue>,
    mut removed: RemovedComponents<PathRequest>,
    still_requesting: Query<(), With<PathRequest>>,
    changed: Query<(Entity, &PathRequest, Option<&Transform>), Changed<PathRequest>>,
    maps: Maps,
    mut delivery: Delivery,
) {
    let began = Instant::now();
    let queue = &mut *queue;
    queue.frame += 1;
    queue.nearest.clear();
    for entity in removed.read() {
        if !still_requesting.contains(entity) {
            queue.cancel(entity);
        }
    }
    for (entity, request, transform) in &changed {
        queue.cancel(entity);
        let (map, view) = match maps.find(request.map) {
            Ok(found) => found,
            Err(error) => {
                let result = PathResult::without_path(PathStatus::Invalid(error.into()), None, 0);
                delivery.send(entity, result);
                continue;
            }
        };
        let cells = locate_request(&view, request, transform);
        let (start, goal) = match cells {
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
            view.grid,
            start,
            goal,
            request.on_unreachable,
        ) {
            Plan::Answer(status, cells) => {
                let result = path_result(status, map, &view, cells, 0.0, 0, 0);
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
                queue.waiting.push(Job {
                    entity,
                    ticket,
                    priority: request.priority,
                    map,
                    start,
                    requested_goal: goal,
                    policy: request.on_unreachable,
                    goal: target,
                    grid_version: view.grid.version(),
                    frame_requested,
                });
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
    let config = search_config(&settings);
    let slots = settings.max_in_flight.max(1);

    while budget.left() > 0 {
        admit(queue, slots, frame, aging, &maps, &mut delivery);
        let Some(index) =
            (0..queue.in_flight.len()).max_by_key(|&i| queue.in_flight[i].job.rank(frame, aging))
        else {
            break;
        };
        let Some(view) = maps.get(queue.in_flight[index].job.map) else {
            let job = queue.in_flight.swap_remove(index).land(&mut queue.pool);
            answer_invalid(queue, &job, InvalidReason::MapRemoved, frame, &mut delivery);
            continue;
        };
        let grid = view.grid;
        let flight = &mut queue.in_flight[index];
        if flight.job.grid_version != grid.version() {
            // The ground changed under the search: choose the cells again
            // (the goal may now be a wall, or reachable after all) and
            // start over.
            let job = queue.in_flight.swap_remove(index).land(&mut queue.pool);
            queue.live.remove(&job.entity);
            requeue(queue, job, grid, &view, frame, &mut delivery);
            continue;
        }
        let slice = budget.slice();
        let job = &flight.job;
        // `plan` chose both cells on this very grid version; a search is
        // set up only now that it gets budget.
        let search = flight.search.get_or_insert_with(|| {
            Search::planned(&mut queue.pool, grid, job.start, job.goal, config)
        });
        let before = search.expansions();
        let status = search.step(grid, slice);
        budget.spend(search.expansions() - before);
        if status.is_finished() {
            let Flight { job, search } = queue.in_flight.swap_remove(index);
            if let Some(search) = search {
                deliver_search(queue, job, search, &view, frame, &mut delivery);
            }
        }
    }
    // Fill free slots so the queue count says what truly waits.
    admit(queue, slots, frame, aging, &maps, &mut delivery);

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
    }
}

/// Starts the best waiting requests while slots are free, and lets a
/// waiting request that outranks the lowest search in flight take its
/// slot (the evicted search waits again and starts over later).
fn admit(
    queue: &mut PathfindingQueue,
    slots: usize,
    frame: u64,
    aging: u32,
    maps: &Maps,
    delivery: &mut Delivery,
) {
    loop {
        let Some(best) =
            (0..queue.waiting.len()).max_by_key(|&i| queue.waiting[i].rank(frame, aging))
        else {
            return;
        };
        if queue.in_flight.len() >= slots {
            let best_rank = queue.waiting[best].rank(frame, aging);
            let Some(worst) = (0..queue.in_flight.len())
                .min_by_key(|&i| queue.in_flight[i].job.rank(frame, aging))
            else {
                return;
            };
            if queue.in_flight[worst].job.rank(frame, aging) >= best_rank {
                return;
            }
            let evicted = queue.in_flight.swap_remove(worst).land(&mut queue.pool);
            queue.waiting.push(evicted);
            continue;
        }
        let job = queue.waiting.swap_remove(best);
        let Some(view) = maps.get(job.map) else {
            answer_invalid(queue, &job, InvalidReason::MapRemoved, frame, delivery);
            continue;
        };
        let grid = view.grid;
        if job.grid_version != grid.version() {
            queue.live.remove(&job.entity);
            requeue(queue, job, grid, &view, frame, delivery);
            continue;
        }
        queue.in_flight.push(Flight { job, search: None });
    }
}

/// Plans a job again on a changed grid: answers it at once or puts it back
/// in the queue with its place (ticket) kept.
fn requeue(
    queue: &mut PathfindingQueue,
    mut job: Job,
    grid: &NavGrid,
    view: &MapView,
    frame: u64,
    delivery: &mut Delivery,
) {
    match plan(
        &mut queue.nearest,
        job.map,
        grid,
        job.start,
        job.requested_goal,
        job.policy,
    ) {
        Plan::Answer(status, cells) => {
            let waited = (frame - job.frame_requested) as u32;
            let result = path_result(status, job.map, view, cells, 0.0, 0, waited);
            delivery.send(job.entity, result);
        }
        Plan::Search { start, goal } => {
            job.start = start;
            job.goal = goal;
            job.grid_version = grid.version();
            queue.live.insert(job.entity);
            queue.waiting.push(job);
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

fn deliver_search(
    queue: &mut PathfindingQueue,
    job: Job,
    mut search: Search,
    view: &MapView,
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
    let result = path_result(
        status,
        job.map,
        view,
        path.cells,
        path.cost,
        search.expansions(),
        (frame - job.frame_requested) as u32,
    );
    queue.pool.give(search.into_scratch());
    delivery.send(job.entity, result);
}

/// `Invalidate`: flags finished paths that cross a cell changed since the
/// last frame.
pub(crate) fn invalidate_paths(
    mut maps: Query<(Entity, &mut NavGrid)>,
    mut results: Query<(Entity, &mut PathResult)>,
    mut commands: Commands,
    mut messages: MessageWriter<PathInvalidated>,
    mut stats: ResMut<PathfindingStats>,
) {
    let began = Instant::now();
    stats.begin_frame();
    let mut changed: EntityHashMap<Option<HashSet<Cell>>> = EntityHashMap::default();
    for (map, mut grid) in maps.iter_mut() {
        match grid.bypass_change_detection().take_changes() {
            GridChanges::Cells(cells) if cells.is_empty() => {}
            GridChanges::Cells(cells) => {
                changed.insert(map, Some(cells.into_iter().collect()));
            }
            GridChanges::Everything => {
                changed.insert(map, None);
            }
        }
    }
    if !changed.is_empty() {
        for (entity, mut result) in results.iter_mut() {
            if result.invalidated || result.cells.is_empty() {
                continue;
            }
            let Some(cells) = result.map.and_then(|map| changed.get(&map)) else {
                continue;
            };
            let crossed = match cells {
                Some(cells) => result.cells.iter().any(|c| cells.contains(c)),
                None => true,
            };
            if crossed {
                result.invalidated = true;
                let event = PathInvalidated { entity };
                messages.write(event);
                commands.trigger(event);
            }
        }
    }
    stats.frame_time += began.elapsed();
}
