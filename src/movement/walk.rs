//! The walk (stage 5, [`CrowdSystems::Walk`](super::CrowdSystems::Walk)):
//! every mover walks its velocity on the grid and settles what its walk
//! means for it (its route's end, its headway) alone, in parallel; what
//! touches the others (rest places) or the world (commands, messages) is
//! left as an [`Effect`] and applied on the frame's thread, in crowd rank.

use bevy::ecs::query::QueryData;
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy::utils::Parallel;

use super::body::speed_of;
use super::corridor::{route_cut_ahead, walk_left};
use super::parallel::each_mover;
use super::passage;
use super::rest::RestingPlaces;
use super::settings::CrowdSettings;
use super::state::headway::{Doing, Seen, Stall};
use super::state::steer::{Meanwhile, Steer, steer, wait_for_new_path};
use super::state::{
    Arrival, MapsBesideUnits, MissesGoal, Motion, MoveBlocked, Mover, Route, Steering, UnitArrived,
    order_ended,
};
use super::stepping::{walk_instinct, walk_velocity};
use super::tuning::{DISPLACED, NEAR_THE_END, PARALLEL_WALKS, REACHED};
use crate::maps::{AllViews, MapView};
use crate::ordinal::Ordinal;
use crate::pathfinding::{Footprint, MovementClass, PathRequest, unit_kind};

/// What `move_units` walks units on: the frame's time, the maps, the
/// passages and the settings, read only.
#[derive(SystemParam)]
pub(super) struct WalkWorld<'w, 's> {
    time: Res<'w, Time>,
    maps: MapsBesideUnits<'w, 's>,
    settings: Res<'w, CrowdSettings>,
    passages: Res<'w, passage::Passages>,
}

/// A mover as `move_units` moves it.
#[derive(QueryData)]
#[query_data(mutable)]
pub(super) struct WalkQuery {
    entity: Entity,
    ordinal: &'static Ordinal,
    mover: &'static Mover,
    request: Option<&'static mut PathRequest>,
    transform: &'static mut Transform,
    steering: &'static mut Steering,
    motion: &'static mut Motion,
    footprint: Option<&'static Footprint>,
    class: Option<&'static MovementClass>,
}

/// Where one unit's walk this frame took it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Stride {
    /// Where it stood.
    start: Vec2,
    /// Where its walk ended (before it was stopped outside a passage it
    /// has no claim on).
    to: Vec2,
    /// Its route's way on is blocked by a wall.
    blocked: bool,
}

/// What a unit's walk leaves to the frame's thread.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Effect {
    /// Its route's end is near, or walked: the end, whether another rests
    /// there, and all that follows from it are settled there.
    EndOfRoute(Stride),
    /// Kept off its rest place too long: it rests at the nearest free cell
    /// from where it stands.
    Resettle,
    /// Blocked too long near its end: it rests where it stands.
    StopShort,
    /// No headway for [`CrowdSettings::stop_after`]: it stops where it
    /// stands, and the game is told.
    Blocked,
    /// A route without an order of its own (a group member's) asks for a
    /// path to the same end.
    Ask { goal: Vec2, map: Entity },
    /// Its order ended.
    Arrive(Arrival),
}

/// The frame's settings for the walk.
#[derive(Clone, Copy)]
struct Frame<'a, 'v> {
    views: &'a AllViews<'v>,
    passages: &'a passage::Passages,
    seconds: f32,
    give_up: f32,
    stop_after: f32,
}

/// `FrontierSystems::Move`: walks every mover its velocity for the frame,
/// on the grid. A unit that avoidance left alone walks its way exactly:
/// instinct slides along walls, a route is followed corner to corner, and
/// a route a new wall blocks is planned again. One avoidance moved walks
/// the velocity it was given, sliding along walls. A unit whose route is
/// walked arrives, and rests where it stands unless another rests there:
/// then it walks on to the nearest free cell first. A unit that makes no
/// headway for [`CrowdSettings::give_up_after`] pushes through the
/// others (and asks for its path again if pushed out of sight of its next
/// corner, or if a wall cuts the way on from there to the one after) until
/// it does; with less than [`NEAR_THE_END`] cells of its
/// route left per cell of its footprint's side, it rests where it stands
/// instead.
///
/// Every mover walks and settles alone (in parallel: it reads the maps
/// and the passages and writes only itself); then, in crowd rank (not the
/// query's order, which follows how the ECS stores them), the effects on
/// the others and the world, the few units near their route's end first
/// settling it there.
#[inline(never)] // named in profiles: one entry per crowd-step system
pub(super) fn move_units(
    world: WalkWorld,
    mut commands: Commands,
    mut units: Query<WalkQuery>,
    mut places: ResMut<RestingPlaces>,
    mut arrivals: MessageWriter<UnitArrived>,
    mut blocked: MessageWriter<MoveBlocked>,
    // The frame's effects, kept so no frame allocates them anew.
    mut effects: Local<Vec<(u64, Entity, Effect)>>,
) {
    let seconds = world.time.delta_secs();
    if seconds <= 0.0 {
        // No time passed: nobody walks, and each has the velocity it was
        // given.
        each_mover!(units, PARALLEL_WALKS, |mut unit| unit.motion.velocity =
            unit.motion.planned);
        return;
    }
    let all_views = AllViews::new(&world.maps);
    let settings = world.settings.clamped();
    let frame = Frame {
        views: &all_views,
        passages: &world.passages,
        seconds,
        give_up: settings.give_up_after,
        stop_after: settings.stop_after,
    };
    let mut left: Parallel<Vec<(u64, Entity, Effect)>> = Parallel::default();
    each_mover!(
        units,
        PARALLEL_WALKS,
        || left.borrow_local_mut(),
        |out, unit| walk_one(frame, unit, out),
    );
    effects.clear();
    for part in left.iter_mut() {
        effects.append(part);
    }
    // Stable: a unit's effects stay in the order it left them.
    effects.sort_by_key(|&(rank, unit, _)| (rank, unit));
    let mut others = Others {
        commands: &mut commands,
        places: &mut places,
        arrivals: &mut arrivals,
        blocked: &mut blocked,
    };
    for &(_, unit, effect) in effects.iter() {
        if let Ok(mut item) = units.get_mut(unit) {
            apply(frame, &mut others, &mut item, effect);
        }
    }
}

/// What the effects write to beyond the unit.
struct Others<'a, 'c, 's, 'm, 'b> {
    commands: &'a mut Commands<'c, 's>,
    places: &'a mut RestingPlaces,
    arrivals: &'a mut MessageWriter<'m, UnitArrived>,
    blocked: &'a mut MessageWriter<'b, MoveBlocked>,
}

/// One mover's walk for the frame and what it means for it, alone: its
/// effects on the others and the world go to `out`.
#[inline(never)] // the parallel body of `move_units`, named in profiles
fn walk_one(frame: Frame, mut unit: WalkQueryItem, out: &mut Vec<(u64, Entity, Effect)>) {
    // Until it has walked, the velocity it was given (kept by one that
    // cannot walk: off every map, or no speed to walk at).
    unit.motion.velocity = unit.motion.planned;
    // Its map as it sees it, the same for the whole of its walk.
    let Some(view) = walking_view(frame.views, &unit) else {
        return;
    };
    // A unit of a class its map lacks stands still (its order was
    // answered `UnknownClass`): walking as another class would take a boat
    // onto land.
    if !view.knows(unit_kind(unit.footprint, unit.class)) {
        unit.motion.velocity = Vec2::ZERO;
        return;
    }
    let Some(stride) = stride(frame, &view, &mut unit) else {
        return;
    };
    let (rank, entity) = (unit.ordinal.crowd_rank(), unit.entity);
    let mut effects = Vec::new();
    if matches!(*unit.steering, Steering::Following { .. }) {
        // A wall went up on the path: walk on instinct while a new path
        // is found.
        if stride.blocked
            && let Some((goal, map)) = wait_for_new_path(&mut unit.steering, Meanwhile::Instinct)
        {
            ask(&mut unit.request, goal, map, &mut effects);
        }
        if end_of_route_near(&view, &unit, stride.to) {
            effects.push(Effect::EndOfRoute(stride));
        } else {
            on_after_a_short_route(&mut unit.steering);
            settle(frame, &view, &mut unit, (stride, false), &mut effects);
        }
    } else {
        settle(frame, &view, &mut unit, (stride, false), &mut effects);
    }
    out.extend(effects.into_iter().map(|effect| (rank, entity, effect)));
}

/// One mover's walk on the grid, alone: it reads the maps and the
/// passages and writes only itself. `None` for a mover off every map, or
/// one whose frame's walk is no number.
fn stride(frame: Frame, view: &MapView, unit: &mut WalkQueryItem) -> Option<Stride> {
    let speed = speed_of(unit.mover, view.layout.cell_size.abs().min_element());
    if !(speed * frame.seconds).is_finite() {
        return None;
    }
    let start = unit.transform.translation.truncate();
    let (to, blocked) = walk(
        view,
        &mut unit.steering,
        &unit.motion,
        start,
        speed,
        frame.seconds,
    );
    // No unit steps into a passage without a claim on it: a unit is in a
    // passage only in its turn.
    let map = view_map(unit)?;
    let stopped = if !unit.motion.passage.crossing() {
        frame.passages.stop_outside(map, view, start, to)
    } else {
        to
    };
    unit.transform.translation = stopped.extend(unit.transform.translation.z);
    Some(Stride { start, to, blocked })
}

/// Whether the end of a unit's route is walked, or near enough that it
/// must look whether another rests there: both ask the rest places, so
/// they are settled on the frame's thread.
fn end_of_route_near(view: &MapView, unit: &WalkQueryItem, walked_to: Vec2) -> bool {
    let Steering::Following { route, .. } = &*unit.steering else {
        return false;
    };
    let cell = view.layout.cell_size.abs().min_element();
    let near_end = route.len() == 1
        && route
            .next_waypoint()
            .is_some_and(|end| walked_to.distance(end) < NEAR_THE_END * cell);
    near_end || route.is_empty() && !route.ends_short()
}

/// The end of a quick route's first stretch: on by instinct until the
/// rest comes.
fn on_after_a_short_route(steering: &mut Steering) {
    if let Steering::Following { route, .. } = &*steering
        && route.is_empty()
        && route.ends_short()
    {
        steer(steering, Steer::LostWay);
    }
}

/// Asks for a path again: the unit's own request is marked changed (in
/// place); a route without an order of its own leaves an effect.
fn ask(request: &mut Option<Mut<PathRequest>>, goal: Vec2, map: Entity, effects: &mut Vec<Effect>) {
    match request {
        Some(request) => request.set_changed(),
        None => effects.push(Effect::Ask { goal, map }),
    }
}

/// After the walk (and its route's end, `arrived` there): the velocity
/// it walked, its headway, and what that asks of it.
fn settle(
    frame: Frame,
    view: &MapView,
    unit: &mut WalkQueryItem,
    (stride, arrived): (Stride, bool),
    effects: &mut Vec<Effect>,
) {
    let cell = view.layout.cell_size.abs().min_element();
    let position = unit.transform.translation.truncate();
    let motion = &mut *unit.motion;
    motion.velocity = (position - stride.start) / frame.seconds;
    let doing = match &*unit.steering {
        _ if arrived => Doing::Arrived,
        Steering::Idle => Doing::Standing {
            displaced: motion
                .rest
                .is_some_and(|rest| rest.distance(stride.start) > DISPLACED * cell),
        },
        _ => Doing::Moving {
            held_up: motion.held_up(),
        },
    };
    let seen = Seen {
        position,
        seconds: frame.seconds,
        cell,
        size: view.size(),
        give_up: frame.give_up,
        stop_after: frame.stop_after,
        can_move: speed_of(unit.mover, cell) * frame.seconds > 0.0,
        doing,
    };
    let left = || match &*unit.steering {
        Steering::Following { route, .. } => Some(walk_left(route, position)),
        _ => None,
    };
    let (headway, stall) = motion.headway.step(&seen, left);
    motion.headway = headway;
    match stall {
        Stall::Nothing => {}
        Stall::Resettle if motion.map.is_some() => effects.push(Effect::Resettle),
        Stall::Resettle => {}
        Stall::StopShort => effects.push(Effect::StopShort),
        Stall::Blocked => effects.push(Effect::Blocked),
        Stall::PushThrough => {
            // Pushed out of sight of its next corner, or its way on from
            // that corner cut by a wall (an edit since its route was
            // found: a group's routes have no path result for the edit to
            // flag): it asks for a fresh path from where it is. One held
            // up by a crowd does not (a new path would be the same one).
            if let Steering::Following { route, .. } = &*unit.steering
                && route_cut_ahead(view, position, route)
                && let Some((goal, map)) =
                    wait_for_new_path(&mut unit.steering, Meanwhile::Instinct)
            {
                ask(&mut unit.request, goal, map, effects);
            }
        }
    }
    if arrived {
        effects.push(Effect::Arrive(arrival(&unit.steering, false)));
    }
}

/// Applies one effect of a unit's walk, on the frame's thread.
fn apply(frame: Frame, others: &mut Others, unit: &mut WalkQueryItem, effect: Effect) {
    let Some(view) = walking_view(frame.views, unit) else {
        return;
    };
    let entity = unit.entity;
    let position = unit.transform.translation.truncate();
    match effect {
        Effect::EndOfRoute(stride) => {
            let mut effects = Vec::new();
            let arrived = end_of_route(others.places, &view, unit, stride.to);
            settle(frame, &view, unit, (stride, arrived), &mut effects);
            for effect in effects {
                apply(frame, others, unit, effect);
            }
        }
        Effect::Resettle => {
            if let Some(map) = unit.motion.map {
                unit.motion.rest = Some(others.places.settle(entity, map, &view, position));
            }
        }
        Effect::StopShort => stop_short(others, &view, unit, Arrival::StoppedShort),
        Effect::Blocked => {
            let (entity, at) = (unit.entity, unit.transform.translation.truncate());
            stop_short(others, &view, unit, Arrival::Blocked);
            // A chase or follow does not give up: the unit stands, and
            // tries again once its target has moved (see `chase`).
            if !chases(unit) {
                let event = MoveBlocked { entity, at };
                others.blocked.write(event);
                others.commands.trigger(event);
            }
        }
        Effect::Ask { goal, map } => {
            others
                .commands
                .entity(entity)
                .insert(PathRequest::new(goal).on_map(map));
        }
        Effect::Arrive(outcome) => arrive(others, unit, outcome),
    }
}

/// A unit near or at its route's end: near an end another unit rests on,
/// the nearest free cell becomes the end (held at once, so no other takes
/// it); at the end, it rests there, or walks on to the nearest free cell
/// if another unit rests there. Whether it arrived.
fn end_of_route(
    places: &mut RestingPlaces,
    view: &MapView,
    unit: &mut WalkQueryItem,
    walked_to: Vec2,
) -> bool {
    let entity = unit.entity;
    let cell = view.layout.cell_size.abs().min_element();
    if let Steering::Following { route, map, .. } = &mut *unit.steering
        && route.len() == 1
        && let Some(end) = route.next_waypoint()
        && walked_to.distance(end) < NEAR_THE_END * cell
        && places.taken(entity, *map, view, end)
    {
        let place = places.settle(entity, *map, view, end);
        *route = route.last_leg(vec![place]);
    }
    on_after_a_short_route(&mut unit.steering);
    match &mut *unit.steering {
        Steering::Following { route, map, .. } if route.is_empty() => rest_or_walk_on(
            places,
            entity,
            *map,
            view,
            walked_to,
            route,
            &mut unit.motion,
        ),
        _ => false,
    }
}

/// Blocked too long near its end (others stand between, or in the narrow
/// way to it, round a corner or not): close enough, it rests where it
/// stands. It holds the nearest free cell if it half stands on it, and
/// none if that cell lies further (others keep it from it, and would keep
/// it from any other). A unit that made no headway for
/// [`CrowdSettings::stop_after`] stops the same way, `outcome`
/// [`Arrival::Blocked`].
fn stop_short(others: &mut Others, view: &MapView, unit: &mut WalkQueryItem, outcome: Arrival) {
    let Steering::Following { route, map, .. } = &mut *unit.steering else {
        return;
    };
    let entity = unit.entity;
    let position = unit.transform.translation.truncate();
    let cell = view.layout.cell_size.abs().min_element();
    let place = others.places.settle(entity, *map, view, position);
    let distance = place.distance(position);
    if distance > cell {
        others.places.release(entity);
    }
    *route = route.last_leg(Vec::new());
    unit.motion.rest = Some(if distance <= 0.5 * cell {
        place
    } else {
        position
    });
    let outcome = match outcome {
        Arrival::StoppedShort => arrival(&unit.steering, true),
        blocked => blocked,
    };
    arrive(others, unit, outcome);
}

/// A unit's order ended: it stands, and the game is told how. A chase or
/// follow never ends here ([`chase`](super::chase) ends it, in range or
/// with its target lost): at the end of a path short of its target, or
/// held in a jam, the unit stands and its pursuit goes on.
fn arrive(others: &mut Others, unit: &mut WalkQueryItem, outcome: Arrival) {
    let entity = unit.entity;
    steer(&mut unit.steering, Steer::Stop);
    if chases(unit) {
        return;
    }
    others.commands.entity(entity).remove::<MissesGoal>();
    let changed = unit.request.as_ref().map(|request| request.last_changed());
    order_ended(others.commands, others.arrivals, entity, outcome, changed);
}

/// Whether the unit's order names a unit (a chase or a follow): its end is
/// decided by `chase::pursue`, never by the walk.
fn chases(unit: &WalkQueryItem) -> bool {
    unit.request
        .as_ref()
        .is_some_and(|request| request.target().is_some())
}

/// How the order of a unit that arrives with `steering` ended: the one
/// place that decides it. Its route (the last leg keeps the order's mark)
/// says whether the goal could be reached; `stopped_short`, whether others
/// held it a few cells from its end.
fn arrival(steering: &Steering, stopped_short: bool) -> Arrival {
    match steering {
        Steering::Following { route, .. } if route.misses_goal() => Arrival::NearestReachable,
        _ if stopped_short => Arrival::StoppedShort,
        _ => Arrival::Reached,
    }
}

/// The map a mover walks on (its order's, else the one it last walked on).
fn view_map(unit: &WalkQueryItem) -> Option<Entity> {
    unit.steering.map().or(unit.motion.map)
}

/// The map a mover walks on and that map's view for the mover's kind.
fn walking_view<'a>(all_views: &AllViews<'a>, unit: &WalkQueryItem) -> Option<MapView<'a>> {
    let view = all_views.get(view_map(unit)?)?;
    Some(view.for_kind(unit_kind(unit.footprint, unit.class)))
}

/// Walks a unit at `start` (at `speed`) its velocity for the frame, on the grid: one
/// avoidance left alone walks its own way exactly (instinct slides along
/// walls, a route is followed corner to corner, passing the corners it
/// reaches); one avoidance moved walks the velocity it was given, sliding
/// along walls. Where it ends, and whether a wall blocks its route.
fn walk(
    view: &MapView,
    steering: &mut Steering,
    motion: &Motion,
    start: Vec2,
    speed: f32,
    seconds: f32,
) -> (Vec2, bool) {
    let mut position = start;
    let velocity = motion.planned;
    let budget = speed * seconds;
    let cell = view.layout.cell_size.abs().min_element();
    // Avoidance left the unit alone: it walks its own way exactly.
    let own_way = velocity.distance(motion.preferred) <= 1e-5 * speed.max(1.0);
    let mut blocked = false;
    match steering {
        Steering::Idle => walk_velocity(view, &mut position, velocity, seconds),
        Steering::Instinct { goal, .. } => {
            if own_way {
                walk_instinct(view, &mut position, *goal, budget);
            } else {
                walk_velocity(view, &mut position, velocity, seconds);
            }
        }
        Steering::Following { route, .. } => {
            if own_way {
                let mut left = budget;
                while left > 0.0 && !blocked {
                    let Some(target) = route.next_waypoint() else {
                        break;
                    };
                    let walked = view.walk_straight(&mut position, target, left);
                    left -= walked;
                    if position == target {
                        route.advance();
                    } else if left > 0.0 {
                        blocked = true;
                    }
                }
            } else {
                walk_velocity(view, &mut position, velocity, seconds);
                if route.len() == 1
                    && route
                        .next_waypoint()
                        .is_some_and(|end| position.distance(end) <= REACHED * cell)
                {
                    route.advance();
                }
            }
        }
    }
    (position, blocked)
}

/// A unit done walking at `position` (its route walked, or close enough):
/// it rests at the nearest free cell if that is where it stands, and
/// `true` is returned; else that cell becomes its route's one corner.
fn rest_or_walk_on(
    places: &mut RestingPlaces,
    unit: Entity,
    map: Entity,
    view: &MapView,
    position: Vec2,
    route: &mut Route,
    motion: &mut Motion,
) -> bool {
    let cell = view.layout.cell_size.abs().min_element();
    let place = places.settle(unit, map, view, position);
    if place.distance(position) > 0.5 * cell {
        *route = route.last_leg(vec![place]);
        false
    } else {
        *route = route.last_leg(Vec::new());
        motion.rest = Some(place);
        true
    }
}
