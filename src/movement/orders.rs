//! Orders (stage 1, [`CrowdSystems::Orders`](super::CrowdSystems::Orders)):
//! new requests start instinct at once ([`begin_orders`]), new paths are
//! joined at the furthest visible waypoint ([`adopt_paths`]), and paths
//! and routes a map change cut are asked for again
//! ([`replan_cut_paths`], [`replan_cut_routes`]). Chases and follows
//! have their own part of the stage ([`chase`](super::chase)).

use bevy::ecs::entity::EntityHashMap;
use bevy::ecs::query::QueryData;
use bevy::ecs::system::SystemChangeTick;
use bevy::prelude::*;

use super::corridor::{Cut, Edits, join_path};
use super::seats::{Seat, Seats};
use super::state::steer::{Meanwhile, Steer, steer, wait_for_new_path};
use super::state::{
    Arrived, EndedOrder, MapsBesideUnits, MissesGoal, Mover, OnProvisionalPath, Route, Steering,
};
use crate::core::{ClassId, UnitKind};
use crate::maps::MapView;
use crate::ordinal::Ordinal;
use crate::pathfinding::{
    Footprint, MovementClass, PathRequest, PathResult, PathStatus, PathTarget, unit_kind,
};
use crate::schedule::ChangeMarks;

/// The world position a request points at (where the unit it names
/// stands: `positions` holds it).
fn goal_position(
    request: &PathRequest,
    view: &MapView,
    positions: &Query<&Transform>,
) -> Option<Vec2> {
    match request.goal {
        PathTarget::World(position) => position.is_finite().then_some(position),
        PathTarget::Cell(cell) => view.grid.in_bounds(cell).then(|| view.cell_to_world(cell)),
        PathTarget::Entity(target) => {
            let position = positions.get(target).ok()?.translation.truncate();
            position.is_finite().then_some(position)
        }
    }
}

/// Movers given a new order this frame.
type NewOrders = (With<Mover>, Changed<PathRequest>);

/// A mover given a new order, as `begin_orders` reads it.
type NewOrder = (
    Entity,
    Ref<'static, PathRequest>,
    &'static mut Steering,
    Option<&'static EndedOrder>,
);

#[inline(never)] // named in profiles: one entry per crowd-step system
pub(super) fn begin_orders(
    mut commands: Commands,
    mut orders: Query<NewOrder, NewOrders>,
    maps: MapsBesideUnits,
    positions: Query<&Transform>,
    (ticks, mut marks): (SystemChangeTick, ResMut<ChangeMarks>),
) {
    marks.orders = ticks.this_run();
    for (unit, request, mut steering, ended) in &mut orders {
        // An order that ended in the frame its path was asked for again:
        // no new order.
        if ended.is_some_and(|ended| ended.0 == request.last_changed()) {
            continue;
        }
        commands.entity(unit).remove::<(Arrived, EndedOrder)>();
        let request = &*request;
        let goal = maps
            .find(request.map)
            .ok()
            .and_then(|(map, view)| Some((goal_position(request, &view, &positions)?, map)));
        // A chaser asked again for the way to where its target stands
        // now: it walks on (its old path, or straight at the target) until
        // the new path comes.
        if request.target().is_some()
            && let Some((to, map)) = goal
            && steering.map() == Some(map)
        {
            let walking_on = match &*steering {
                Steering::Following { route, .. } => route.replanning(),
                Steering::Instinct { .. } => true,
                Steering::Idle => false,
            };
            if walking_on {
                steer(&mut steering, Steer::Retarget(to));
                continue;
            }
        }
        // The request asked again for a route made dearer (or the same
        // order given again meanwhile): the unit walks it until the new
        // path comes.
        if let (Some(order), Steering::Following { route, goal, map }) = (goal, &*steering)
            && route.replanning()
            && order == (*goal, *map)
        {
            continue;
        }
        let event = match goal {
            Some((goal, map)) => Steer::Order { goal, map },
            None => Steer::Stop,
        };
        steer(&mut steering, event);
    }
}

/// A unit whose order is taken away (its `PathRequest` removed) stops where
/// it is. A group that takes a unit into its move removes the request and
/// then sets the unit's steering, so that is not undone.
pub(super) fn stop_on_cancel(
    cancelled: On<Remove, PathRequest>,
    mut units: Query<&mut Steering, With<Mover>>,
) {
    if let Ok(mut steering) = units.get_mut(cancelled.entity) {
        steer(&mut steering, Steer::Stop);
    }
}

/// A mover as `adopt_paths` reads its new path.
#[derive(QueryData)]
#[query_data(mutable)]
pub(super) struct AdoptQuery {
    entity: Entity,
    transform: &'static Transform,
    request: &'static mut PathRequest,
    result: &'static PathResult,
    steering: &'static mut Steering,
    on_provisional: Has<OnProvisionalPath>,
    misses_goal: Option<&'static MissesGoal>,
}

/// A unit waiting for its path takes it when it comes; one walking a
/// provisional path switches to the real one where it can see it ahead,
/// and keeps to the provisional one rather than turn back for it.
#[inline(never)] // named in profiles: one entry per crowd-step system
pub(super) fn adopt_paths(
    mut units: Query<AdoptQuery, (With<Mover>, Changed<PathResult>)>,
    maps: MapsBesideUnits,
    mut commands: Commands,
    (ticks, mut marks): (SystemChangeTick, ResMut<ChangeMarks>),
) {
    marks.adopt = ticks.this_run();
    for AdoptQueryItem {
        entity: unit,
        transform,
        mut request,
        result,
        mut steering,
        on_provisional,
        misses_goal,
    } in &mut units
    {
        let provisional = result.status == PathStatus::Provisional;
        // A chaser takes the path to where its target stands now, even
        // back the way it was going.
        let chasing = request.target().is_some();
        let (goal, walking) = match &mut *steering {
            Steering::Instinct { goal, .. } => (*goal, None),
            // The real path for the provisional one being walked, or the
            // new path for a route made dearer (found on a later grid than
            // the route: not the route's own path, just flagged).
            Steering::Following { route, goal, .. }
                if on_provisional && (!provisional || route.ends_short())
                    || route.replanning()
                        && (result.grid_version > route.version()
                            || chasing && !result.invalidated) =>
            {
                // Whatever comes of it, the path asked for has come.
                route.set_replanning(false);
                (*goal, route.next_waypoint())
            }
            _ => continue,
        };
        if on_provisional && !provisional {
            commands.entity(unit).remove::<OnProvisionalPath>();
        }
        if !result.status.has_path() {
            if walking.is_none() {
                steer(&mut steering, Steer::Stop);
            }
            continue;
        }
        let Some(view) = result.map.and_then(|map| maps.get(map)) else {
            continue;
        };
        let view = view.for_kind(result.kind());
        let here = transform.translation.truncate();
        let Some(cell) = view.cell_at(here) else {
            continue;
        };
        match (join_path(&view, here, cell, &result.cells), walking) {
            // Ahead, or at least not back the way the unit is going.
            (Some(waypoints), Some(next))
                if !chasing
                    && (waypoints[0] - here).dot(next - here) < 0.0
                    && waypoints[0].distance(here) > 0.5 => {}
            (Some(waypoints), _) => {
                // A quick route says nothing of the goal: the regions do.
                let misses = result.status.misses_goal()
                    || provisional && !view.can_reach(here, goal)
                    || misses_goal.is_some_and(|m| m.goal == request.goal);
                // Checked against the edits since the path was found (one
                // found on an older copy may cross a wall put up since).
                let route = Route::new(waypoints)
                    .planned_on(result.grid_version)
                    .ending_short(provisional && result.ends_short)
                    .missing_goal(misses);
                steer(&mut steering, Steer::Follow(route));
                if provisional {
                    commands.entity(unit).insert(OnProvisionalPath);
                }
            }
            // Out of sight of a unit on its provisional path: it keeps to it.
            (None, Some(_)) => {}
            // Nothing in sight (instinct took the unit round a corner, or
            // the request named a start elsewhere): plan again from here.
            (None, None) => {
                request.start = None;
                request.set_changed();
            }
        }
    }
}

/// Movers with their own path, as [`replan_cut_paths`] reads them.
type PathFollowers<'w, 's> = Query<
    'w,
    's,
    (
        Ref<'static, PathResult>,
        &'static mut PathRequest,
        &'static mut Steering,
        Option<&'static Footprint>,
        Option<&'static MovementClass>,
    ),
    With<Mover>,
>;

/// A unit following its own path that an edit changed (its `PathResult`
/// was just flagged `invalidated`) asks for a path again. If the path is
/// only dearer (still walkable, cell by cell and step by step, and so are
/// the legs between the corners still ahead), the unit walks on along its
/// route until the new path comes; if a wall now cuts it, the unit walks on
/// instinct meanwhile. So costs that change under a unit's way every frame
/// cost it re-plans, never its way to the goal. The leg from where it
/// stands (off which avoidance may have pushed it) is
/// [`replan_cut_routes`]' to test, against the edits since the route was
/// planned.
#[inline(never)] // named in profiles: one entry per crowd-step system
pub(super) fn replan_cut_paths(mut units: PathFollowers, maps: MapsBesideUnits) {
    for (result, mut request, mut steering, footprint, class) in &mut units {
        if !result.invalidated || !result.is_changed() {
            continue;
        }
        let Steering::Following { route, map, .. } = &*steering else {
            continue;
        };
        let walkable = maps.get(*map).is_some_and(|view| {
            if result.map != Some(*map)
                || !view
                    .for_kind(result.kind())
                    .size_class()
                    .can_walk(&result.cells)
            {
                return false;
            }
            let view = view.for_kind(unit_kind(footprint, class));
            let mut corners = route.remaining();
            let Some(mut from) = corners.next() else {
                return true;
            };
            corners.all(|corner| {
                let clear = view.segment_clear(from, corner);
                from = corner;
                clear
            })
        });
        let meanwhile = if walkable {
            Meanwhile::WalkOn
        } else {
            Meanwhile::Instinct
        };
        if wait_for_new_path(&mut steering, meanwhile).is_some() {
            request.set_changed();
        }
    }
}

/// Per map, the grid version whose edits [`replan_cut_routes`] has checked
/// the routes against.
#[derive(Resource, Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct RouteChecks {
    checked: EntityHashMap<u64>,
}

/// Units that follow routes, as [`replan_cut_routes`] reads them.
type Followers<'w, 's> = Query<
    'w,
    's,
    (
        Entity,
        &'static Ordinal,
        &'static Transform,
        Option<&'static mut PathRequest>,
        &'static mut Steering,
        Option<&'static Footprint>,
        Option<&'static MovementClass>,
    ),
    With<Mover>,
>;

/// A unit following a route that an edit since the last frame cut (a wall
/// now stands across the way from where it stands to its next corner, or
/// between two corners after it) or made dearer (a cell under a leg costs
/// more) asks for a path again at once, not when it gets there: on
/// instinct meanwhile if cut, walking on along the route if only dearer
/// ([`wait_for_new_path`]). This covers what the `PathIndex` cannot: a group member's
/// route (it has no `PathResult`), and the straight legs a string-pulled
/// route takes across cells its path did not cross. Only legs near a
/// changed cell are looked at, and a route only against the edits made
/// after it was planned.
#[inline(never)] // named in profiles: one entry per crowd-step system
pub(super) fn replan_cut_routes(
    mut commands: Commands,
    mut units: Followers,
    maps: MapsBesideUnits,
    mut checks: ResMut<RouteChecks>,
) {
    let mut edited: EntityHashMap<EditedMap> = EntityHashMap::default();
    for (map, view) in maps.iter() {
        let version = view.grid.version();
        if let Some(checked) = checks.checked.insert(map, version)
            && checked != version
        {
            edited.insert(map, EditedMap::new(view, checked));
        }
    }
    checks.checked.retain(|&map, _| maps.get(map).is_some());
    if edited.is_empty() {
        return;
    }
    let mut cut = Vec::new();
    for (unit, ordinal, transform, _, steering, footprint, class) in &units {
        let Steering::Following { route, map, .. } = steering else {
            continue;
        };
        let Some(edited) = edited.get_mut(map) else {
            continue;
        };
        let view = edited.view.for_kind(unit_kind(footprint, class));
        let Some(edits) = edited.since(view.kind().class, route.version()) else {
            // Planned on the grid as it is.
            continue;
        };
        let meanwhile = match edits.cut(&view, transform.translation.truncate(), route) {
            None => continue,
            Some(Cut::Blocked) => Meanwhile::Instinct,
            Some(Cut::Dearer) => Meanwhile::WalkOn,
        };
        cut.push((ordinal.joined(), unit, meanwhile));
    }
    // Asked again in the order the units joined: the requests a group's
    // members get arrive in that order.
    cut.sort_unstable_by_key(|&(joined, unit, _)| (joined, unit));
    for (_, unit, meanwhile) in cut {
        let Ok((_, _, _, mut request, mut steering, ..)) = units.get_mut(unit) else {
            continue;
        };
        if let Some((goal, map)) = wait_for_new_path(&mut steering, meanwhile) {
            ask_again(&mut commands, unit, &mut request, goal, map);
        }
    }
}

/// A map edited since the last frame, as [`replan_cut_routes`] tests
/// routes on it.
struct EditedMap<'a> {
    view: MapView<'a>,
    /// The version the last frame checked up to.
    checked: u64,
    /// Per movement class, the edits since `checked` and since each
    /// later version a route was planned on that made ground dearer to
    /// that class, made when first asked for.
    edits: Vec<(ClassId, u64, Edits)>,
}

impl<'a> EditedMap<'a> {
    fn new(view: MapView<'a>, checked: u64) -> Self {
        Self {
            view,
            checked,
            edits: Vec::new(),
        }
    }

    /// The edits a route of movement class `class` planned on version
    /// `planned` (0: not known) has not seen and the last frame did not
    /// check; `None` when the route was planned on the grid as it is.
    fn since(&mut self, class: ClassId, planned: u64) -> Option<&Edits> {
        let since = planned.max(self.checked);
        if since >= self.view.grid.version() {
            return None;
        }
        let at = match self.edits.iter().position(|e| (e.0, e.1) == (class, since)) {
            Some(at) => at,
            None => {
                let size_class = self.view.for_kind(UnitKind::new(class, 1)).size_class();
                let edits = Edits::new(size_class.dearer_since(since));
                self.edits.push((class, since, edits));
                self.edits.len() - 1
            }
        };
        Some(&self.edits[at].2)
    }
}

/// Asks for a path again: the unit's own request is marked changed, and a
/// route without an order of its own (a group member's) gets one, to the
/// same end.
pub(super) fn ask_again(
    commands: &mut Commands,
    unit: Entity,
    request: &mut Option<Mut<PathRequest>>,
    goal: Vec2,
    map: Entity,
) {
    match request {
        Some(request) => request.set_changed(),
        None => {
            commands
                .entity(unit)
                .insert(PathRequest::new(goal).on_map(map));
        }
    }
}

/// `CrowdSystems::Orders`, first: movers that joined before the movement
/// plugin was added (so no seat was there to give) get theirs, in the
/// order they joined. Costs a count a frame otherwise.
pub(super) fn seat_strays(
    mut movers: Query<(Entity, &Ordinal, &mut Seat), With<Mover>>,
    mut seats: ResMut<Seats>,
) {
    if movers.iter().len() == seats.held {
        return;
    }
    let mut strays: Vec<(u64, Entity)> = movers
        .iter()
        .filter(|(_, _, seat)| **seat == Seat::NONE)
        .map(|(entity, ordinal, _)| (ordinal.joined(), entity))
        .collect();
    strays.sort_unstable();
    for (_, mover) in strays {
        let taken = seats.take(mover);
        if let Ok((_, _, mut seat)) = movers.get_mut(mover) {
            *seat = taken;
        }
    }
}

#[cfg(feature = "serialize")]
crate::remap::remap_fields!(RouteChecks { checked });
