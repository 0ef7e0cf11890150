//! Orders on units that move (stage 1, [`CrowdSystems::Orders`](super::CrowdSystems::Orders),
//! after the new paths are taken up): a [`PathRequest`] whose goal is a
//! unit ([`PathTarget::Entity`](crate::pathfinding::PathTarget::Entity))
//! chases it, or follows it, and any request may end within a range of
//! its goal ([`PathRequest::range`]).
//!
//! A chaser's path is not thrown away each time its target moves. It walks
//! the path it has toward where the target stood when that path was asked
//! for ([`Pursuit::planned_to`]) and asks for a new one only when the
//! target has gone far for what is left to walk: more than
//! [`REPAIR_SHARE`] of the straight distance from the chaser to that
//! place, and at least [`REPAIR_LEAST`] cells. That is the repair bound: a
//! path walked toward a place the target left by more than it is asked
//! for again in the same frame (and walked until the new one comes, on the
//! frame's budget like any search). Walking on toward the old place costs
//! little: the best way to the target's new place is at most the target's
//! drift longer than the best way to the old one, and the chaser turns as
//! soon as the new path comes. So a chase costs a few searches that get
//! shorter as it closes in, where asking again whenever the target enters
//! a new cell costs one a cell. With a lookahead set, a chaser far away
//! gets its way in legs: its search stops there
//! ([`PathfindingSettings::chase_lookahead`](crate::schedule::PathfindingSettings::chase_lookahead),
//! Moving Target Search's bounded lookahead) with a path to the explored
//! cell nearest the target ([`PathStatus::Partial`]), and it asks for the
//! next leg [`NEXT_LEG`] cells before that one ends, or at its end. A leg
//! that led no nearer the target (a wall between, longer than the
//! lookahead explores round) makes the next search's lookahead twice as
//! long, and so on until one leads on or the search ends: a chaser is
//! never stuck at a wall face. Close to the target with nothing between
//! them (within [`SIGHT`] cells, a straight line its class and size may
//! walk), a chaser walks straight at it with no search at all, every frame
//! toward where it stands now; it asks for a path again when it loses
//! sight. Chasers of one target that ask in one frame ask for the same
//! cell, so when there are many of them (16 or more) they share one
//! search back from it wherever they stand; a few never do, their legs
//! cost less than a flood to them all.
//!
//! A chase ends when the chaser is in range ([`Arrival::InRange`]); a
//! follow stands there and walks again once the target is out of range.
//! A target that is despawned, loses its `Transform`, or stands off the
//! chaser's map ends the order where the chaser stands
//! ([`Arrival::TargetLost`], and a [`TargetLost`] message). A chaser that
//! walked its whole path without coming in range (the target moved on, or
//! stands where the chaser's class may not go: a boat off the shore) stands
//! and asks again once the target has moved a cell from where it was
//! sought. A chaser or follower the crowd holds back too long (where a
//! unit ordered to a place would end `Arrival::Blocked`) does not give up
//! either: it stands, and tries again once its target has moved a cell.

use bevy::ecs::query::QueryData;
use bevy::prelude::*;

use super::body::{Avoidance, body_radius};
use super::state::steer::{Steer, steer};
use super::state::{
    Arrival, Arrived, MapsBesideUnits, Motion, Mover, Steering, UnitArrived, order_ended,
};
pub use super::tuning::{NEXT_LEG, RANGE_LEEWAY, REPAIR_LEAST, REPAIR_SHARE, SIGHT};
use crate::maps::MapView;
use crate::ordinal::Ordinal;
use crate::pathfinding::{
    Footprint, MovementClass, PathRequest, PathResult, PathStatus, unit_kind,
};

/// A chase or follow under way, on a [`Mover`] whose request names a unit:
/// what the plugin knows of it, for a game to read (a debug view, an AI
/// that wants to know whether its order is still served).
#[derive(Component, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Component)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct Pursuit {
    /// The unit chased or followed.
    pub target: Entity,
    /// Where the target stood when the path the unit walks (or waits for)
    /// was asked for.
    pub planned_to: Vec2,
    /// Where the unit stood when it last asked for a path.
    pub asked_from: Vec2,
    /// A new path has been asked for and has not come yet: the unit walks
    /// its old one, or on instinct, meanwhile.
    pub repairing: bool,
    /// It walks straight at the target, in sight of it.
    pub in_sight: bool,
    /// Searches asked for since the order was given (the first included).
    pub searches: u32,
}

/// The target of a [`Mover`]'s chase or follow is gone: despawned, without
/// a `Transform`, or off the chaser's map. Its order ended
/// ([`Arrival::TargetLost`]; its [`UnitArrived`] is sent too) and it
/// stands where it is. Triggered as an observer event and written as a
/// message.
#[derive(EntityEvent, Message, Clone, Copy, Debug, PartialEq)]
pub struct TargetLost {
    /// The unit that chased or followed.
    pub entity: Entity,
    /// The unit it chased or followed.
    pub target: Entity,
}

/// A mover as [`pursue`] reads it.
#[derive(QueryData)]
#[query_data(mutable)]
pub(super) struct ChaserQuery {
    entity: Entity,
    ordinal: &'static Ordinal,
    transform: &'static Transform,
    request: &'static mut PathRequest,
    result: Option<Ref<'static, PathResult>>,
    steering: &'static mut Steering,
    motion: &'static mut Motion,
    pursuit: Option<&'static mut Pursuit>,
    arrived: Option<&'static Arrived>,
    footprint: Option<&'static Footprint>,
    class: Option<&'static MovementClass>,
    avoidance: Option<&'static Avoidance>,
}

/// What a unit chased, or a goal with a range, is as [`pursue`] sees it:
/// where it stands and how far its body reaches.
type Bodies<'w, 's> = Query<
    'w,
    's,
    (
        &'static Transform,
        Has<Mover>,
        Option<&'static Footprint>,
        Option<&'static Avoidance>,
    ),
>;

/// How a unit's order stands this frame, as [`pursue`] decides it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Verdict {
    /// Nothing to do.
    Nothing,
    /// In range: a chase (or a ranged order to a place) ends.
    Ended(Arrival),
    /// A follower in range stands.
    Stand,
    /// Asks for a new path to where the target stands now.
    Ask,
}

/// Stage 1, after the paths are taken up: chasers and followers track
/// their targets (a new path when the target has gone far for what is
/// left to walk, straight at it in sight), orders end in range, and
/// orders whose target is gone end with [`TargetLost`]. Units are taken in
/// the order they joined, so the messages go out in that order.
#[inline(never)] // named in profiles: one entry per crowd-step system
pub(super) fn pursue(
    mut commands: Commands,
    mut units: Query<ChaserQuery, With<Mover>>,
    bodies: Bodies,
    maps: MapsBesideUnits,
    mut arrivals: MessageWriter<UnitArrived>,
    mut lost: MessageWriter<TargetLost>,
    mut joined: Local<Vec<(u64, Entity)>>,
) {
    joined.clear();
    joined.extend(units.iter().filter_map(|unit| {
        let ranged = unit.request.target().is_some() || unit.request.usable_range() > 0.0;
        (ranged || unit.pursuit.is_some()).then_some((unit.ordinal.joined(), unit.entity))
    }));
    joined.sort_unstable();
    for &(_, entity) in joined.iter() {
        let Ok(mut unit) = units.get_mut(entity) else {
            continue;
        };
        let Some(target) = unit.request.target() else {
            if unit.pursuit.is_some() {
                commands.entity(entity).remove::<Pursuit>();
            }
            if let Some(outcome) = place_in_range(&maps, &unit) {
                end(&mut commands, &mut arrivals, &mut unit, outcome);
            }
            continue;
        };
        // Ended: a chase, or an order whose target is gone.
        if let Some(arrived) = unit.arrived
            && (!unit.request.keep_following || arrived.outcome == Arrival::TargetLost)
        {
            continue;
        }
        let Some((view, at)) = target_on_map(&maps, &bodies, &unit, target) else {
            end(&mut commands, &mut arrivals, &mut unit, Arrival::TargetLost);
            let event = TargetLost { entity, target };
            lost.write(event);
            commands.trigger(event);
            continue;
        };
        let tracked = unit.pursuit.as_ref().is_some_and(|p| p.target == target);
        let verdict = if tracked {
            track(&view, &bodies, &mut unit, target, at)
        } else {
            // A new order: its path was asked for with it (and may have
            // come this frame).
            let pursuit = Pursuit {
                target,
                planned_to: at,
                asked_from: unit.transform.translation.truncate(),
                repairing: !answered(&unit),
                in_sight: false,
                searches: 1,
            };
            commands.entity(entity).insert(pursuit);
            Verdict::Nothing
        };
        match verdict {
            Verdict::Nothing => {}
            Verdict::Ended(outcome) => end(&mut commands, &mut arrivals, &mut unit, outcome),
            Verdict::Stand => {
                steer(&mut unit.steering, Steer::Stop);
                unit.motion.rest = None;
            }
            Verdict::Ask => {
                if let Steering::Following { route, .. } = &mut *unit.steering {
                    route.set_replanning(true);
                }
                unit.request.set_changed();
                let position = unit.transform.translation.truncate();
                if let Some(pursuit) = unit.pursuit.as_deref_mut() {
                    pursuit.planned_to = at;
                    pursuit.asked_from = position;
                    pursuit.repairing = true;
                    pursuit.in_sight = false;
                    pursuit.searches = pursuit.searches.saturating_add(1);
                }
            }
        }
    }
}

/// One chaser's frame: where its target `target` stands (`at`) against
/// its path, its range and its sight.
fn track(
    view: &MapView,
    bodies: &Bodies,
    unit: &mut ChaserQueryItem,
    target: Entity,
    at: Vec2,
) -> Verdict {
    let cell = view.layout.cell_size.abs().min_element();
    let position = unit.transform.translation.truncate();
    let radius = body_radius(unit.avoidance, unit.footprint, cell);
    let result_came = answered(unit);
    // A leg of the way: the search stopped at the chase's lookahead.
    let leg = unit
        .result
        .as_ref()
        .is_some_and(|result| result.status == PathStatus::Partial);
    let stopped = unit.arrived.is_some();
    let request = &*unit.request;
    let steering = &mut *unit.steering;
    let Some(pursuit) = unit.pursuit.as_deref_mut() else {
        return Verdict::Nothing;
    };
    if result_came {
        pursuit.repairing = false;
    }
    let gap = position.distance(at) - radius - target_radius(bodies, target, cell);
    let range = request.usable_range();
    let follow = request.keep_following;
    // A follower stops a little inside its range, so that it does not
    // stop and start at its edge each frame.
    let close_enough = if follow {
        range - (0.5 * range).min(cell)
    } else {
        range
    };
    let standing = matches!(steering, Steering::Idle);
    if gap <= close_enough + RANGE_LEEWAY * cell {
        return match (follow, standing) {
            (false, _) => Verdict::Ended(Arrival::InRange),
            (true, false) => Verdict::Stand,
            (true, true) => Verdict::Nothing,
        };
    }
    if standing {
        // A follower whose target walked out of range, or a chaser at the
        // end of a path whose target moved on: the way from here.
        let out_of_range = gap > range + RANGE_LEEWAY * cell;
        let moved = at.distance(pursuit.planned_to) >= REPAIR_LEAST * cell;
        // At a leg's end, the next leg (one that led nowhere is searched
        // again with twice the lookahead, so the chaser is never stuck).
        let again = if follow {
            out_of_range && (moved || leg || !stopped)
        } else {
            moved || leg
        };
        return if again && !pursuit.repairing {
            Verdict::Ask
        } else {
            Verdict::Nothing
        };
    }
    let sees = position.distance(at) <= SIGHT * cell && view.segment_clear(position, at);
    match steering {
        Steering::Idle => Verdict::Nothing,
        Steering::Instinct { .. } => {
            steer(steering, Steer::Retarget(at));
            if pursuit.in_sight && !sees {
                // Round a corner: the way from here.
                Verdict::Ask
            } else {
                Verdict::Nothing
            }
        }
        Steering::Following { .. } if sees => {
            steer(steering, Steer::Sighted(at));
            pursuit.in_sight = true;
            Verdict::Nothing
        }
        Steering::Following { route, .. } => {
            let drift = at.distance(pursuit.planned_to);
            let left = position.distance(pursuit.planned_to);
            // The next leg before this one ends, once the chaser has walked
            // a cell since it asked (a leg of a cell or two is walked to its
            // end first, not asked for again each frame).
            let walked_on = position.distance(pursuit.asked_from) >= cell;
            let leg_ends = leg
                && walked_on
                && route
                    .remaining()
                    .last()
                    .is_some_and(|end| position.distance(end) <= NEXT_LEG * cell);
            let far = drift > (REPAIR_SHARE * left).max(REPAIR_LEAST * cell);
            steer(steering, Steer::Retarget(at));
            if !pursuit.repairing && (leg_ends || far) {
                Verdict::Ask
            } else {
                Verdict::Nothing
            }
        }
    }
}

/// Whether a new answer came to the unit's request this frame (a flag on
/// its old path changes its result too).
fn answered(unit: &ChaserQueryItem) -> bool {
    unit.result
        .as_ref()
        .is_some_and(|result| result.is_changed() && !result.invalidated)
}

/// The map the unit walks on as its class and size see it, and where
/// `target` stands on it; `None` when the target is gone or off that map.
fn target_on_map<'m>(
    maps: &'m MapsBesideUnits,
    bodies: &Bodies,
    unit: &ChaserQueryItem,
    target: Entity,
) -> Option<(MapView<'m>, Vec2)> {
    let (transform, ..) = bodies.get(target).ok()?;
    let at = transform.translation.truncate();
    let map = unit.steering.map().or(unit.motion.map);
    let (_, view) = match map {
        Some(map) => (map, maps.get(map)?),
        None => maps.find(unit.request.map).ok()?,
    };
    // The target's point on the map (a unit's anchor may fall off it at
    // the edge where the target's does not).
    view.cell_at(at)?;
    Some((view.for_kind(unit_kind(unit.footprint, unit.class)), at))
}

/// How far the body of `target` reaches from its centre (0 for an entity
/// with no body: no `Mover`, `Avoidance` or `Footprint`).
fn target_radius(bodies: &Bodies, target: Entity, cell: f32) -> f32 {
    match bodies.get(target) {
        Ok((_, mover, footprint, avoidance))
            if mover || footprint.is_some() || avoidance.is_some() =>
        {
            body_radius(avoidance, footprint, cell)
        }
        _ => 0.0,
    }
}

/// A moving unit ordered to a place with a range, in range of it: how its
/// order ends.
fn place_in_range(maps: &MapsBesideUnits, unit: &ChaserQueryItem) -> Option<Arrival> {
    let range = unit.request.usable_range();
    if range <= 0.0 || unit.arrived.is_some() {
        return None;
    }
    let (map, goal) = (unit.steering.map()?, unit.steering.goal()?);
    let cell = maps.get(map)?.layout.cell_size.abs().min_element();
    let radius = body_radius(unit.avoidance, unit.footprint, cell);
    let gap = unit.transform.translation.truncate().distance(goal) - radius;
    (gap <= range + RANGE_LEEWAY * cell).then_some(Arrival::InRange)
}

/// Ends a unit's order where it stands: it takes a rest place there, and
/// the game is told how.
fn end(
    commands: &mut Commands,
    arrivals: &mut MessageWriter<UnitArrived>,
    unit: &mut ChaserQueryItem,
    outcome: Arrival,
) {
    steer(&mut unit.steering, Steer::Stop);
    unit.motion.rest = None;
    let changed = Some(unit.request.last_changed());
    order_ended(commands, arrivals, unit.entity, outcome, changed);
}

#[cfg(feature = "serialize")]
crate::remap::remap_fields!(Pursuit { target });
