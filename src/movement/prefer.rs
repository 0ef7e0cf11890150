//! The velocity each mover would like (stage 2,
//! [`CrowdSystems::Prefer`](super::CrowdSystems::Prefer)): toward its next
//! corner, its goal on instinct, or its rest place when it stands. Every
//! mover alone, in parallel; rest places (shared) after, in crowd rank.

use bevy::ecs::query::QueryData;
use bevy::prelude::*;
use bevy::utils::Parallel;

use super::body::speed_of;
use super::parallel::each_mover;
use super::rest::RestingPlaces;
use super::state::{MapsBesideUnits, Motion, Mover, Route, Steering};
use super::tuning::{PARALLEL_MOVERS, REACHED, SKIP_NEAR};
use crate::maps::AllViews;
use crate::maps::MapView;
use crate::ordinal::Ordinal;
use crate::pathfinding::{Footprint, MovementClass, unit_kind};

/// A mover as `prefer` reads and writes it.
#[derive(QueryData)]
#[query_data(mutable)]
pub(super) struct PreferQuery {
    entity: Entity,
    ordinal: &'static Ordinal,
    mover: &'static Mover,
    transform: &'static Transform,
    steering: &'static mut Steering,
    motion: &'static mut Motion,
    footprint: Option<&'static Footprint>,
    class: Option<&'static MovementClass>,
}

/// What `prefer` leaves to the frame's thread: the rest places, shared by
/// every unit.
enum Place {
    /// It moves off on instinct: the place it holds is free again.
    Leave(Entity),
    /// It stands and holds no place: it takes one, in crowd rank.
    Take(u64, Entity),
}

/// `FrontierSystems::Steering`, last: each mover's preferred velocity. A
/// moving unit gives up its rest place; one pushed off the way near a
/// corner goes on to the next as soon as it sees it; a standing unit takes
/// a rest place (the nearest free cell, when another rests where it
/// stands) and is drawn back to it.
#[inline(never)] // named in profiles: one entry per crowd-step system
pub(super) fn prefer(
    time: Res<Time>,
    mut units: Query<PreferQuery>,
    maps: MapsBesideUnits,
    mut places: ResMut<RestingPlaces>,
) {
    for unit in std::mem::take(&mut places.gone) {
        places.release(unit);
    }
    let seconds = time.delta_secs();
    let all_views = AllViews::new(&maps);
    let first_map = maps.find(None).ok().map(|(map, _)| map);
    // Every unit on its own (in parallel); units that left their rest
    // place give it up, and standing units without one take one, after,
    // unit by unit.
    let mut left: Parallel<Vec<Place>> = Parallel::default();
    {
        let (views, held) = (&all_views, &*places);
        each_mover!(
            units,
            PARALLEL_MOVERS,
            || left.borrow_local_mut(),
            |out, unit| prefer_one(views, held, (first_map, seconds), unit, out),
        );
    }
    // Taken one by one in their crowd rank: who gets a free cell first
    // must not follow the order the ECS stores them in.
    let mut to_settle = Vec::new();
    for place in left.drain() {
        match place {
            Place::Leave(unit) => places.release(unit),
            Place::Take(rank, unit) => to_settle.push((rank, unit)),
        }
    }
    to_settle.sort_unstable();
    for (_, unit) in to_settle {
        let Ok(PreferQueryItem {
            mover,
            transform,
            mut motion,
            footprint,
            class,
            ..
        }) = units.get_mut(unit)
        else {
            continue;
        };
        let (Some(map), position) = (motion.map, transform.translation.truncate()) else {
            continue;
        };
        let Some(view) = all_views.get(map) else {
            continue;
        };
        let view = view.for_kind(unit_kind(footprint, class));
        let rest = places.settle(unit, map, &view, position);
        motion.rest = Some(rest);
        let cell = view.layout.cell_size.abs().min_element();
        motion.preferred = toward(position, rest, speed_of(mover, cell), seconds);
    }
}

/// One mover's preferred velocity, alone: what it leaves to the rest
/// places goes to `out`.
#[inline(never)] // the parallel body of `prefer`, named in profiles
fn prefer_one(
    all_views: &AllViews,
    places: &RestingPlaces,
    (first_map, seconds): (Option<Entity>, f32),
    unit: PreferQueryItem,
    out: &mut Vec<Place>,
) {
    let PreferQueryItem {
        entity: unit,
        ordinal,
        mover,
        transform,
        mut steering,
        mut motion,
        footprint,
        class,
    } = unit;
    if let Some(map) = steering.map() {
        motion.map = Some(map);
    } else if motion.map.is_none() {
        motion.map = first_map;
    }
    let view = motion
        .map
        .and_then(|map| all_views.get(map))
        .map(|view| view.for_kind(unit_kind(footprint, class)));
    let cell = view
        .as_ref()
        .map_or(1.0, |view| view.layout.cell_size.abs().min_element());
    let (speed, position) = (speed_of(mover, cell), transform.translation.truncate());
    motion.preferred = match &mut *steering {
        Steering::Idle => match (view, motion.rest) {
            (Some(_), Some(rest)) => toward(position, rest, speed, seconds),
            (Some(_), None) if motion.map.is_some() => {
                out.push(Place::Take(ordinal.crowd_rank(), unit));
                Vec2::ZERO
            }
            _ => Vec2::ZERO,
        },
        Steering::Instinct { goal, .. } => {
            if places.holds(unit) {
                out.push(Place::Leave(unit));
            }
            motion.rest = None;
            toward(position, *goal, speed, seconds)
        }
        Steering::Following { route, .. } => {
            // Every order starts on instinct, which gave up the old rest
            // place; what it holds now is the end it walks to.
            motion.rest = None;
            if let Some(view) = &view {
                pass_reached_corners(view, route, position);
            }
            match route.next_waypoint() {
                Some(next) => toward(position, next, speed, seconds),
                None => Vec2::ZERO,
            }
        }
    };
}

/// The velocity that takes a unit at `from` toward `to` at `speed`,
/// slowing so as to stop there within the frame.
fn toward(from: Vec2, to: Vec2, speed: f32, seconds: f32) -> Vec2 {
    let offset = to - from;
    let distance = offset.length();
    if distance <= 1e-6 || speed <= 0.0 {
        return Vec2::ZERO;
    }
    let reach = speed * seconds;
    if seconds > 0.0 && distance < reach {
        offset / seconds
    } else {
        offset / distance * speed
    }
}

/// A unit following `route` at `position` passes the corners it has as
/// good as reached: within a hair of one (in a crowd, others may keep it
/// off the exact point, and it would block theirs), or pushed near it or
/// past it towards the next one, with the next one in sight over ground no
/// dearer than the two corners' (the route went round what is dearer).
fn pass_reached_corners(view: &MapView, route: &mut Route, position: Vec2) {
    let cell = view.layout.cell_size.abs().min_element();
    let cost = |at: Vec2| {
        view.cell_at(at)
            .and_then(|c| view.size_class().cost(c))
            .unwrap_or(0)
    };
    while let Some(next) = route.next_waypoint() {
        let near = position.distance(next);
        let after = route.remaining().nth(1);
        let reached = near <= REACHED * cell
            || after.is_some_and(|after| {
                let past = (position - next).dot(after - next) > 0.0;
                let dearest = cost(next).max(cost(after));
                (near <= SKIP_NEAR * cell || past)
                    && view.segment_clear_within(position, after, dearest)
            });
        if !reached || after.is_none() {
            break;
        }
        route.advance();
    }
}
