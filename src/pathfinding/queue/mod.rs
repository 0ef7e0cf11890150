//! The request queue and the per-frame budget loop behind
//! [`PathfindingPlugin`](super::PathfindingPlugin), by concept. Each
//! concept's state is a type of its own, in a file that needs no other
//! concept's code; the code that runs a concept may take the queue whole
//! (`state`), but no file imports one that imports it back:
//!
//! - `policy`: the queue's policy in one file: ranking (so admission and
//!   eviction), which requests share a search, how much of the budget
//!   quick routes take and which get them, what reading a shared search's
//!   paths costs;
//! - `state`: [`PathfindingQueue`], the resource: the frame count and the
//!   concepts' states;
//! - `resolve`: a request turned into cells on its map ([`Job`], `plan`),
//!   and one frame's plans (`Plans`);
//! - `flight`: a flight (one job's search, or one shared by jobs with one
//!   goal);
//! - `waiting`: the flights waiting for room in flight, in rank order and indexed
//!   by what they could share (`Waiting`);
//! - `flights`: the flights held (`Flights`: waiting, in flight, scratch);
//! - `rounds`: their admission to the room in flight, their checks
//!   against edited maps, and the rounds that spend the budget on them in
//!   lanes;
//! - `shared`: requests with one goal put in one shared search;
//! - `quick_routes`: the quick routes kept between frames (`QuickRoutes`);
//! - `quick`: running them on maps with terrain costs (on the maps'
//!   [`CoarseGraphs`](super::CoarseGraphs));
//! - `delivery`: results handed to their units.
//!
//! This file holds the systems that drive them.

mod delivery;
mod flight;
mod flights;
mod policy;
mod quick;
mod quick_routes;
mod resolve;
mod rounds;
mod shared;
mod state;
mod waiting;

use crate::clock;
use bevy::diagnostic::Diagnostics;
use bevy::prelude::*;

use super::diagnostics::{EXPANSIONS, FRAMES_TO_RESULT, IN_FLIGHT, QUEUED, SEARCH_MS};
use super::graphs::CoarseGraphs;
use super::request::{Footprint, KindData, MovementClass, PathRequest, PathTarget, unit_kind};
use super::result::{InvalidReason, PathResult, PathStatus};
use crate::budget::FrameBudget;
use crate::core::{Cell, NavGrid, UnitKind};
use crate::maps::{MapView, Maps};
use crate::ordinal::Ordinal;
use crate::schedule::{ChangeMarks, PathfindingSettings};
use bevy::ecs::system::SystemChangeTick;
use delivery::Delivery;
use flight::Flight;
pub(crate) use resolve::locate;
use resolve::{Job, Plan, locate_request, plan};
pub use state::PathfindingQueue;

/// Idle scratch spaces the queue keeps for the next searches: one per
/// flight a round deals ([`rounds::flights_per_lane`] per lane), never
/// more than the places in flight could use, and at most [`MAX_POOLED`]. What runs
/// holds its own; a space given back beyond these is freed. (Quick routes
/// take none: each holds its own cluster-sized space.)
fn pooled(settings: &PathfindingSettings) -> usize {
    let lanes = settings.lanes();
    (lanes * rounds::flights_per_lane(lanes))
        .min(settings.max_in_flight.max(1))
        .min(MAX_POOLED)
}

/// The most idle scratch spaces the queue keeps, however many lanes.
const MAX_POOLED: usize = 16;

/// A unit whose size or movement class is new this frame.
type NewKind = Or<(Added<Footprint>, Added<MovementClass>)>;

/// `Invalidate`: a map that has just appeared (or changed) gets its region
/// labels now, for every unit size seen so far (and every map gets them
/// for a size when the first unit of that size appears), and the scratch
/// pool warm space for the searches that start first on it ([`pooled`]):
/// in the frame the game loads the map, not in the first frame that orders
/// units on it. Nothing here grows with `max_in_flight`: a search holds
/// scratch only once it runs.
pub(crate) fn prepare_maps(
    maps: Query<(Entity, Ref<NavGrid>, Has<CoarseGraphs>)>,
    new_units: Query<KindData, NewKind>,
    mut kinds_seen: Local<Vec<UnitKind>>,
    mut queue: ResMut<PathfindingQueue>,
    settings: Res<PathfindingSettings>,
    mut commands: Commands,
) {
    let before = kinds_seen.len();
    for (footprint, class) in &new_units {
        let kind = unit_kind(footprint, class);
        if Footprint(kind.size).is_valid()
            && kind != UnitKind::sized(1)
            && !kinds_seen.contains(&kind)
        {
            kinds_seen.push(kind);
        }
    }
    let new_kind = kinds_seen.len() > before;
    for (map, grid, has_graphs) in &maps {
        if !has_graphs {
            // Its coarse graphs: the one for units of a cell is started in
            // `Search` this frame if it has rough ground.
            commands.entity(map).insert(CoarseGraphs::default());
        }
        if !grid.is_changed() && !new_kind {
            continue;
        }
        grid.label_regions_now();
        // Units bigger than a cell, or of another class: their layer's
        // costs and regions too, once per map and kind (a class the map
        // does not have is left alone).
        for &kind in kinds_seen.iter() {
            if let Some(view) = grid.view(kind) {
                view.label_regions_now();
            }
        }
        if grid.is_changed() {
            let keep = pooled(&settings);
            queue.flights.pool.set_limit(keep);
            queue.flights.pool.warm(keep, grid.cell_count());
        }
    }
}

/// A request, with where and how big its unit is.
type RequestData = (
    Entity,
    &'static PathRequest,
    Option<&'static Transform>,
    Option<&'static Footprint>,
    Option<&'static MovementClass>,
    &'static Ordinal,
);

/// Requests new or changed this frame.
type ChangedRequests<'w, 's> = Query<'w, 's, RequestData, Changed<PathRequest>>;

/// Every request (for those a loaded save hands `collect_requests` as
/// new, [`PathfindingQueue::resumed`]).
type AllRequests<'w, 's> = Query<'w, 's, RequestData>;

/// A request was removed, or its unit despawned: `collect_requests` drops
/// its job on its next run (in the order they went, as Bevy's
/// `RemovedComponents` would give them, but kept in the queue, so a save
/// holds those not yet read).
pub(crate) fn note_removed_request(
    gone: On<Remove, PathRequest>,
    mut queue: ResMut<PathfindingQueue>,
) {
    queue.removed.push(gone.entity);
}

/// `Collect`: reads removed and new or changed requests. Bad ones and
/// those needing no search are answered now; the rest wait in the queue.
pub(crate) fn collect_requests(
    mut queue: ResMut<PathfindingQueue>,
    // Whether an entity still has a request, and where it stands (a unit
    // a request names as its goal).
    entities: Query<(Has<PathRequest>, Option<&'static Transform>)>,
    // New and changed requests, and every request (for those a loaded
    // save hands over as new).
    (changed, requests): (ChangedRequests, AllRequests),
    maps: Maps,
    settings: Res<PathfindingSettings>,
    mut delivery: Delivery,
    (ticks, mut marks): (SystemChangeTick, ResMut<ChangeMarks>),
) {
    let began = clock::now();
    marks.collect = ticks.this_run();
    let queue = &mut *queue;
    let position_of = |entity| Some(entities.get(entity).ok()?.1?.translation.truncate());
    queue.frame += 1;
    queue.plans.clear();
    queue.flights.waiting.set_aging(settings.aging_frames);
    for entity in std::mem::take(&mut queue.removed) {
        if !entities.get(entity).is_ok_and(|(requesting, _)| requesting) {
            queue.flights.forget(entity);
        }
    }
    // Each map looked up once (a view inverts its map's transform): a burst
    // of a thousand orders names one or two.
    let mut found = Vec::new();
    // In the order they were asked for, not the order the query visits.
    let mut arrived: Vec<_> = changed.iter().collect();
    for entity in std::mem::take(&mut queue.resumed) {
        if !changed.contains(entity)
            && let Ok(request) = requests.get(entity)
        {
            arrived.push(request);
        }
    }
    arrived.sort_unstable_by_key(|(.., ordinal)| ordinal.asked());
    for (entity, request, transform, footprint, class, _) in arrived {
        delivery.stats.count_request();
        queue.flights.cancel(entity);
        let kind = unit_kind(footprint, class);
        let lookup = match found.iter().find(|(named, _)| *named == request.map) {
            Some(&(_, lookup)) => lookup,
            None => {
                let lookup = maps.find(request.map);
                found.push((request.map, lookup));
                lookup
            }
        };
        let resolved = lookup
            .map_err(|error| (None, error.into()))
            .and_then(|(map, view)| {
                let resolved = resolve_request(view, kind, request, transform, position_of);
                resolved
                    .map(|resolved| (map, resolved))
                    .map_err(|reason| (Some(map), reason))
            });
        let (map, (view, asked, (origin, goal))) = match resolved {
            Ok(resolved) => resolved,
            Err((map, reason)) => {
                let result = PathResult::without_path(PathStatus::Invalid(reason), map, 0);
                delivery.send(entity, result);
                continue;
            }
        };
        let policy = request.on_unreachable;
        let nearest = &mut queue.plans.nearest;
        match plan(nearest, map, view.size_class(), origin, goal, policy) {
            Plan::Answer(status, cells) => {
                delivery.answer(entity, map, (status, cells), &view, 0);
            }
            Plan::Search {
                start,
                goal: target,
            } => {
                let ticket = queue.flights.take_ticket(entity);
                queue.flights.wait(Flight::new(Job {
                    entity,
                    ticket,
                    priority: request.priority,
                    map,
                    kind,
                    asked,
                    origin,
                    start,
                    requested_goal: goal,
                    policy,
                    goal: target,
                    grid_version: view.grid.version(),
                    frame_requested: queue.frame,
                    alone: false,
                    chase: request.target().is_some(),
                    stalled_legs: queue.flights.stalled_legs(entity),
                    quick: request.refine,
                }));
            }
        }
    }
    delivery.stats.frame_time += clock::since(began);
}

/// A request on its map: the map as its unit's kind sees it, where it was
/// asked from and to, and its origin and goal cells.
type Resolved<'m> = (MapView<'m>, (PathTarget, PathTarget), (Cell, Cell));

/// A request on the map `view` shows, for a unit of `kind`: the map as
/// that kind sees it, where it was asked from and to, and its origin and
/// goal cells; or why it is invalid.
fn resolve_request<'m>(
    view: MapView<'m>,
    kind: UnitKind,
    request: &PathRequest,
    transform: Option<&Transform>,
    position_of: impl Fn(Entity) -> Option<Vec2>,
) -> Result<Resolved<'m>, InvalidReason> {
    if !Footprint(kind.size).is_valid() {
        return Err(InvalidReason::BadFootprint);
    }
    if !view.knows(kind) {
        return Err(InvalidReason::UnknownClass);
    }
    let view = view.for_kind(kind);
    let asked = resolve::asked(request, transform, position_of)?;
    let cells = locate_request(&view, asked)?;
    Ok((view, asked, cells))
}

/// `Search`: spends what is left of the frame's node budget on the best
/// search in flight, then the next, admitting waiting requests as places in flight
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
    let began = clock::now();
    let queue = &mut *queue;
    // Builds move on: due ones are taken up (finished now if need be,
    // unless the game asked never to wait).
    let mut graph_wait = std::time::Duration::ZERO;
    for (map, mut graphs) in &mut graphs {
        if let Some(view) = maps.get(map) {
            let take_up = settings.graph_take_up;
            graph_wait += graphs.poll(view.grid, queue.frame, settings.refine, take_up);
        }
    }
    delivery.stats.graph_wait = graph_wait;

    queue.flights.pool.set_limit(pooled(&settings));
    queue.flights.pay_reading(&mut budget);
    if settings.share_goals {
        shared::share_goals(queue, &maps, &mut budget, &mut delivery);
    } else {
        queue.flights.waiting.take_fresh();
    }
    if settings.refine {
        quick::run_quick(queue, &settings, &mut budget, &maps, &mut graphs);
    } else {
        queue.quick.clear();
    }
    rounds::run_flights(queue, &settings, &mut budget, &maps, &mut delivery);
    // Fill free places in flight so the queue count says what truly waits.
    rounds::admit(queue, &settings, &maps, &mut delivery);
    // A quick path whose real one came in the same frame is not sent: one
    // answer a frame.
    for (entity, result) in std::mem::take(&mut queue.quick.provisional) {
        if queue.flights.is_live(entity) {
            delivery.send(entity, result);
        }
    }

    let stats = &mut *delivery.stats;
    stats.frame_expansions = budget.spent() - budget.reading();
    stats.frame_reading = budget.reading();
    stats.lane_times.clear();
    stats.lane_times.extend(budget.lane_times());
    let spent = stats.frame_expansions;
    stats.frame_time += clock::since(began);
    diagnostics.add_measurement(&EXPANSIONS, || spent as f64);
    diagnostics.add_measurement(&IN_FLIGHT, || queue.flights.in_flight.len() as f64);
    diagnostics.add_measurement(&QUEUED, || queue.flights.waiting.len() as f64);
    diagnostics.add_measurement(&SEARCH_MS, || stats.frame_time.as_secs_f64() * 1000.0);
    if let Some(mean) = stats.mean_frames_waited() {
        diagnostics.add_measurement(&FRAMES_TO_RESULT, || mean);
    }
}
