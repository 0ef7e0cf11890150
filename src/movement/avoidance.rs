//! Local avoidance: movers steer round each other with optimal reciprocal
//! collision avoidance (ORCA, the method of RVO2, Detour's crowds and
//! Unity's A* Pathfinding Project), solved by the `dodgy_2d` crate.
//!
//! Each frame, every mover's preferred velocity (from its steering) is
//! turned into the velocity closest to it that collides with none of its
//! nearest neighbours within [`AvoidanceSettings::time_horizon`], each
//! pair sharing the work of avoiding. Neighbours come from a uniform grid
//! of buckets rebuilt every frame, so the cost grows with the number of
//! movers, not its square. Walls are not ORCA's business: the movers'
//! integration walks the grid (`MapView::can_move`), which stays the final
//! word on where a unit may stand.

use std::borrow::Cow;
use std::collections::HashMap;

use bevy::prelude::*;

use super::{Motion, Mover, Steering};
use crate::maps::Maps;
use crate::pathfinding::Footprint;

/// How movers avoid each other. Added with `init_resource`: a value the app
/// inserts wins.
#[derive(Resource, Clone, Debug, PartialEq, Reflect)]
#[reflect(Resource)]
pub struct AvoidanceSettings {
    /// Whether movers avoid each other at all (default `true`). Off, every
    /// mover walks its preferred velocity, through the others.
    pub enabled: bool,
    /// Seconds ahead a mover looks for collisions with others (default
    /// 0.75): longer avoids earlier and more smoothly, shorter lets units
    /// pack closer.
    pub time_horizon: f32,
    /// The nearest neighbours each mover avoids, at most (default 10).
    pub max_neighbours: usize,
    /// Seconds a moving unit may make no headway, blocked by others, before
    /// it stops avoiding and pushes through until it makes headway again
    /// (default 2). Two crowds meeting head-on in a passage one unit wide
    /// cannot pass each other any other way.
    pub give_up_after: f32,
}

impl Default for AvoidanceSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            time_horizon: 0.75,
            max_neighbours: 10,
            give_up_after: 2.0,
        }
    }
}

/// A mover's body for local avoidance. A [`Mover`] without one avoids
/// others with [`Avoidance::default`].
#[derive(Component, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Component)]
pub struct Avoidance {
    /// The body's radius in world units. `None` (the default): 0.45 of its
    /// [`Footprint`]'s side in cells, so units one cell wide pass a bridge
    /// one cell wide in single file.
    pub radius: Option<f32>,
    /// Whether this unit steers round the others (default `true`). A unit
    /// that does not still has a body: the others steer round it and take
    /// the whole work of avoiding.
    pub enabled: bool,
}

impl Default for Avoidance {
    fn default() -> Self {
        Self {
            radius: None,
            enabled: true,
        }
    }
}

impl Avoidance {
    /// A unit that walks its own way and leaves the avoiding to others.
    pub const OFF: Self = Self {
        radius: None,
        enabled: false,
    };

    /// Avoiding others with a body of `radius` world units.
    pub fn with_radius(radius: f32) -> Self {
        Self {
            radius: Some(radius),
            enabled: true,
        }
    }
}

/// What [`avoid`] reads of one mover.
#[derive(Clone, Copy)]
struct Agent {
    entity: Entity,
    map: Option<Entity>,
    position: Vec2,
    velocity: Vec2,
    preferred: Vec2,
    radius: f32,
    speed: f32,
    /// Whether it steers round others this frame.
    avoids: bool,
}

/// Movers as the avoidance reads and writes them.
type Agents<'w, 's> = Query<
    'w,
    's,
    (
        Entity,
        &'static Mover,
        &'static Transform,
        &'static Steering,
        &'static mut Motion,
        Option<&'static Footprint>,
        Option<&'static Avoidance>,
    ),
>;

/// Buckets of agents by position, reused from frame to frame.
#[derive(Default)]
pub(crate) struct Buckets {
    agents: Vec<Agent>,
    cells: HashMap<(i32, i32), Vec<u32>>,
    neighbours: Vec<(f32, u32)>,
}

/// `FrontierSystems::Avoidance`: each mover's velocity for this frame, the
/// closest to its preferred one that avoids its neighbours (ORCA). Agents
/// are taken in entity order, so the result does not depend on the order
/// the ECS stores them in.
pub(crate) fn avoid(
    time: Res<Time>,
    settings: Res<AvoidanceSettings>,
    mut movers: Agents,
    maps: Maps<Without<Mover>>,
    mut buckets: Local<Buckets>,
) {
    let seconds = time.delta_secs();
    let buckets = &mut *buckets;
    buckets.agents.clear();
    // Each map's cell size, looked up once a frame, not once a unit.
    let mut cell_sizes: HashMap<Entity, f32> = HashMap::new();
    for (entity, mover, transform, steering, mut motion, footprint, avoidance) in &mut movers {
        let avoidance = avoidance.copied().unwrap_or_default();
        let map = steering.map().or(motion.map);
        let cell = map.map_or(1.0, |map| {
            *cell_sizes.entry(map).or_insert_with(|| {
                maps.get(map)
                    .map_or(1.0, |view| view.layout.cell_size.abs().min_element())
            })
        });
        let size = footprint.map_or(1, |f| f.0).max(1) as f32;
        let radius = avoidance
            .radius
            .filter(|r| r.is_finite() && *r >= 0.0)
            .unwrap_or(0.45 * size * cell);
        let position = transform.translation.truncate();
        let usable = |v: Vec2| if v.is_finite() { v } else { Vec2::ZERO };
        let agent = Agent {
            entity,
            map,
            position,
            velocity: usable(motion.velocity),
            preferred: usable(motion.preferred),
            radius,
            speed: if mover.speed.is_finite() {
                mover.speed.max(0.0)
            } else {
                0.0
            },
            avoids: settings.enabled && avoidance.enabled && !motion.pushing_through(),
        };
        // Until it is decided, a unit walks as it prefers.
        motion.velocity = agent.preferred;
        if position.is_finite() {
            buckets.agents.push(agent);
        }
    }
    let horizon = settings.time_horizon;
    let usable_time = seconds > 0.0 && horizon > 0.0 && horizon.is_finite();
    if !settings.enabled || !usable_time {
        return;
    }
    buckets.agents.sort_by_key(|a| a.entity);
    // Buckets as wide as the furthest two agents can close in on each
    // other within the horizon (bounded, so one absurdly fast unit cannot
    // make the grid one bucket).
    let reach = buckets
        .agents
        .iter()
        .map(|a| 2.0 * a.radius + a.speed * horizon)
        .fold(0.0f32, f32::max);
    let width = reach.clamp(1e-3, 64.0);
    for cell in buckets.cells.values_mut() {
        cell.clear();
    }
    let key = |p: Vec2| ((p.x / width).floor() as i32, (p.y / width).floor() as i32);
    for (i, agent) in buckets.agents.iter().enumerate() {
        buckets
            .cells
            .entry(key(agent.position))
            .or_default()
            .push(i as u32);
    }
    let options = dodgy_2d::AvoidanceOptions {
        obstacle_margin: 0.0,
        time_horizon: horizon,
        obstacle_time_horizon: horizon,
    };
    let mut neighbours: Vec<Cow<'_, dodgy_2d::Agent>> = Vec::new();
    for i in 0..buckets.agents.len() {
        let me = buckets.agents[i];
        if !me.avoids {
            continue;
        }
        let (bx, by) = key(me.position);
        let found = &mut buckets.neighbours;
        found.clear();
        for y in by - 1..=by + 1 {
            for x in bx - 1..=bx + 1 {
                let Some(cell) = buckets.cells.get(&(x, y)) else {
                    continue;
                };
                for &j in cell {
                    let other = &buckets.agents[j as usize];
                    if j as usize == i || other.map != me.map {
                        continue;
                    }
                    let distance = other.position.distance(me.position);
                    let range = me.radius + other.radius + (me.speed + other.speed) * horizon;
                    if distance <= range {
                        found.push((distance, j));
                    }
                }
            }
        }
        found.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        found.truncate(settings.max_neighbours);
        neighbours.clear();
        for &(distance, j) in found.iter() {
            let other = &buckets.agents[j as usize];
            let mut position = other.position;
            if distance < 1e-4 {
                // Two units on one spot: ORCA cannot tell which way to
                // part them (dodgy_2d would pick a random direction).
                // Part them along a direction fixed by their entities, so
                // the same inputs give the same positions.
                position = me.position + parting_direction(me.entity, other.entity) * 1e-3;
            }
            neighbours.push(Cow::Owned(dodgy_2d::Agent {
                position: to_dodgy(position),
                velocity: to_dodgy(other.velocity),
                radius: other.radius,
                // A unit that does not avoid leaves all of it to the others.
                avoidance_responsibility: if other.avoids { 1.0 } else { 1e-3 },
            }));
        }
        if neighbours.is_empty() {
            continue;
        }
        let preferred = keep_right(
            &me,
            found.iter().map(|&(_, j)| &buckets.agents[j as usize]),
            horizon,
        );
        let agent = dodgy_2d::Agent {
            position: to_dodgy(me.position),
            velocity: to_dodgy(me.velocity),
            radius: me.radius,
            avoidance_responsibility: 1.0,
        };
        let velocity = agent.compute_avoiding_velocity(
            &neighbours,
            &[],
            to_dodgy(preferred),
            me.speed,
            seconds,
            &options,
        );
        let velocity = Vec2::new(velocity.x, velocity.y);
        if velocity.is_finite()
            && let Ok((.., mut motion, _, _)) = movers.get_mut(me.entity)
        {
            motion.velocity = velocity;
        }
    }
}

/// How far a unit turns to its right to pass one in its way (radians).
const KEEP_RIGHT: f32 = 0.3;

/// `me`'s preferred velocity, turned a little to its right when another
/// unit stands or comes in its way within the horizon. ORCA alone lets two
/// units that meet exactly head-on (or one walking straight at a standing
/// one) only slow down and push; turning right, each to its own side, they
/// pass, the same way every run.
fn keep_right<'a>(me: &Agent, others: impl Iterator<Item = &'a Agent>, horizon: f32) -> Vec2 {
    let speed = me.preferred.length();
    if speed <= 1e-6 {
        return me.preferred;
    }
    let heading = me.preferred / speed;
    let reach = speed * horizon;
    let in_the_way = others.into_iter().any(|other| {
        let offset = other.position - me.position;
        let ahead = offset.dot(heading);
        let aside = heading.perp_dot(offset).abs();
        let closing = (me.preferred - other.velocity).dot(heading) > 0.0;
        closing
            && ahead > 0.0
            && ahead <= reach + me.radius + other.radius
            && aside < me.radius + other.radius
    });
    if in_the_way {
        Vec2::from_angle(-KEEP_RIGHT).rotate(me.preferred)
    } else {
        me.preferred
    }
}

/// The unit direction two units on one spot part along, the same for the
/// same pair (opposite for each of them).
fn parting_direction(me: Entity, other: Entity) -> Vec2 {
    let (low, high) = if me < other { (me, other) } else { (other, me) };
    let mixed = low
        .to_bits()
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(17)
        ^ high.to_bits();
    let angle = (mixed % 3600) as f32 / 3600.0 * std::f32::consts::TAU;
    let direction = Vec2::from_angle(angle);
    if me < other { -direction } else { direction }
}

/// bevy's `Vec2` to the `glam` version `dodgy_2d` is built on.
fn to_dodgy(v: Vec2) -> dodgy_2d::Vec2 {
    dodgy_2d::Vec2::new(v.x, v.y)
}
