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

use bevy::platform::collections::HashMap;
use std::borrow::Cow;

use bevy::ecs::query::QueryData;
use bevy::prelude::*;

mod priority;
mod solver;

use super::body::body_radius;
use super::body::{AgentQuery, AgentQueryItem, AgentQueryReadOnlyItem};
pub use super::body::{Avoidance, AvoidanceSettings};
use super::neighbours::{List, NeighbourLists, Reach, SpatialGrid};
use super::passage::Passages;
use super::store::{Slot, Slots, each_chunk_mut, in_chunks};
use super::{Mover, PARALLEL_MOVERS, Steering, speed_of};
use crate::core::{Cell, UnitKind};
use crate::maps::{AllViews, MapView, Maps};
use priority::{Agent, parting_direction, priority, responsibility};
use solver::{Colouring, Separation, keep_gaps};

/// The movers of the frame as avoidance sees them, gathered by slot
/// ([`Slots`]), the index of their positions, their plans and the pairs
/// that may touch: worked out by [`avoid`], used again by [`separate`],
/// kept from frame to frame.
#[derive(Resource, Default)]
pub(crate) struct Crowd {
    /// Each slot's mover as it stood at the frame's start
    /// ([`Agent::ABSENT`] for a free slot).
    by_slot: Vec<Agent>,
    /// The live slots (a mover standing somewhere finite), lowest first.
    live: Vec<u32>,
    /// The live slots in crowd rank: the order the crowd decides in.
    ranked: Vec<u32>,
    /// Each slot's place in `ranked` (`u32::MAX`: not live).
    rank_of: Vec<u32>,
    /// Counts the changes of `ranked`: what was kept by rank is stale.
    rankings: u64,
    /// The live movers in crowd rank (index `r` is `ranked[r]`'s): the
    /// arrays below, the neighbour lists and the contacts are in rank.
    agents: Vec<Agent>,
    /// Where each mover stands (after the walk, in [`separate`]).
    positions: Vec<Vec2>,
    grid: SpatialGrid,
    /// Each mover's candidate neighbours, kept while nobody moves far.
    lists: NeighbourLists,
    /// Each mover's velocity for the frame, as it is worked out.
    planned: Vec<Vec2>,
    /// Each mover is queued behind one waiting at a passage.
    queued: Vec<bool>,
    /// Pairs close enough to touch within the frame.
    contacts: Vec<(u32, u32)>,
    /// The contacts in colours, for the solvers.
    colouring: Colouring,
    /// Whether this frame's plans stand (avoidance ran).
    planned_this_frame: bool,
}

impl Crowd {
    /// Puts the live movers of the snapshot in crowd rank
    /// ([`Ordinal::crowd_rank`](crate::order::Ordinal::crowd_rank), then
    /// entity): sorted again only when the live slots changed (a mover
    /// joined or left, or stands nowhere finite), else copied in the
    /// order kept.
    fn rank(&mut self) {
        let live = self
            .by_slot
            .iter()
            .enumerate()
            .filter(|(_, a)| a.live)
            .map(|(slot, _)| slot as u32);
        if !live.clone().eq(self.live.iter().copied()) {
            self.live.clear();
            self.live.extend(live);
            let by_slot = &self.by_slot;
            self.ranked.clone_from(&self.live);
            self.ranked.sort_unstable_by_key(|&s| {
                let agent = &by_slot[s as usize];
                (agent.order, agent.entity)
            });
            self.rank_of.clear();
            self.rank_of.resize(by_slot.len(), u32::MAX);
            for (r, &slot) in self.ranked.iter().enumerate() {
                self.rank_of[slot as usize] = r as u32;
            }
            self.rankings += 1;
        }
        self.rank_of.resize(self.by_slot.len(), u32::MAX);
        self.agents.clear();
        let by_slot = &self.by_slot;
        self.agents
            .extend(self.ranked.iter().map(|&s| by_slot[s as usize]));
    }

    /// The rank of the mover in `slot`, if it is live this frame.
    fn rank_of(&self, slot: &Slot) -> Option<usize> {
        let rank = *self.rank_of.get(slot.index()?)?;
        (rank != u32::MAX).then_some(rank as usize)
    }

    /// Indexes the agents' positions in buckets `width` wide.
    fn index(&mut self, width: f32) {
        self.positions.clear();
        self.positions
            .extend(self.agents.iter().map(|a| a.position));
        self.grid.rebuild(&self.positions, width.max(0.05));
    }

    /// The largest radius and speed of the agents.
    fn widest_and_fastest(&self) -> (f32, f32) {
        self.agents.iter().fold((0.0f32, 0.0f32), |(r, s), a| {
            (r.max(a.radius), s.max(a.speed))
        })
    }
}

/// Movers, at least, per task of a cheap pass over the slots (the
/// snapshot, the write-back).
const SLOT_CHUNK: usize = 128;

/// One chunk of slots' snapshot: each slot's mover as it stands at the
/// frame's start, read from its components (a free slot, or a mover
/// standing nowhere finite, is [`Agent::ABSENT`]).
#[inline(never)] // the parallel body of the snapshot, named in profiles
fn snapshot(
    first: usize,
    chunk: &mut [Agent],
    holders: &[Option<Entity>],
    movers: &Query<AgentQuery>,
    all_views: &AllViews,
    settings: &AvoidanceSettings,
) {
    for (k, agent) in chunk.iter_mut().enumerate() {
        *agent = holders[first + k]
            .and_then(|entity| movers.get(entity).ok())
            .and_then(|unit| agent_of(unit, all_views, settings))
            .unwrap_or(Agent::ABSENT);
    }
}

/// What avoidance reads of one mover, if it stands somewhere finite.
fn agent_of(
    unit: AgentQueryReadOnlyItem,
    all_views: &AllViews,
    settings: &AvoidanceSettings,
) -> Option<Agent> {
    let AgentQueryReadOnlyItem {
        entity,
        ordinal,
        mover,
        transform,
        steering,
        motion,
        footprint,
        class,
        avoidance,
        ..
    } = unit;
    let map = steering.map().or(motion.map);
    let view = map.and_then(|map| all_views.get(map));
    let cell = view.map_or(1.0, |view| view.layout.cell_size.abs().min_element());
    // A unit of a class its map lacks stands still: an obstacle the others
    // walk round, doing none of the avoiding.
    let kind = crate::pathfinding::unit_kind(footprint, class);
    let stands = view.is_some_and(|view| !view.knows(kind));
    let usable = |v: Vec2| {
        if v.is_finite() && !stands {
            v
        } else {
            Vec2::ZERO
        }
    };
    let radius = body_radius(avoidance, footprint, cell);
    let avoidance = avoidance.copied().unwrap_or_default();
    let position = transform.translation.truncate();
    position.is_finite().then(|| Agent {
        entity,
        order: ordinal.crowd_rank(),
        map,
        class: class.copied().unwrap_or_default().0,
        size: footprint.copied().unwrap_or_default().0,
        position,
        velocity: usable(motion.velocity),
        preferred: usable(motion.preferred),
        radius,
        speed: speed_of(mover, cell),
        avoids: settings.enabled && avoidance.enabled && !stands,
        pushing: motion.pushing_through(),
        heading: motion.heading,
        held_up: motion.held_up(),
        idle: matches!(steering, Steering::Idle),
        near_passage: motion.near_passage,
        crossing: motion.turn.claim().is_some(),
        blocked: if settings.give_up_after > 0.0 {
            (motion.headway.stalled / settings.give_up_after).clamp(0.0, 1.0)
        } else {
            1.0
        },
        live: true,
    })
}

/// `FrontierSystems::Avoidance`: each mover's velocity for this frame, the
/// closest to its preferred one that avoids its nearest neighbours and
/// the walls near it (ORCA). Agents are gathered by slot ([`Slots`]) and
/// decided in crowd rank, so the
/// result depends neither on the order the ECS stores them in nor on
/// their entity ids.
#[inline(never)] // named in profiles: one entry per crowd-step system
pub(crate) fn avoid(
    time: Res<Time>,
    settings: Res<AvoidanceSettings>,
    mut movers: Query<AgentQuery>,
    maps: Maps<Without<Mover>>,
    passages: Res<Passages>,
    slots: Res<Slots>,
    mut crowd: ResMut<Crowd>,
) {
    let seconds = time.delta_secs();
    let settings = settings.clamped();
    let crowd = &mut *crowd;
    let threads = crate::budget::threads_for(settings.threads);
    // Each mover as it stands at the frame's start, each chunk of slots
    // gathered alone (in parallel).
    let all_views = AllViews::new(&maps);
    crowd.by_slot.resize(slots.len(), Agent::ABSENT);
    each_chunk_mut(&mut crowd.by_slot, threads, SLOT_CHUNK, |first, chunk| {
        snapshot(
            first,
            chunk,
            slots.holders(),
            &movers,
            &all_views,
            &settings,
        );
    });
    crowd.rank();
    let horizon = settings.time_horizon;
    let usable_time = seconds > 0.0 && horizon > 0.0 && horizon.is_finite();
    crowd.planned_this_frame = settings.enabled && usable_time;
    if crowd.planned_this_frame {
        plan_crowd(
            crowd,
            &settings,
            &all_views,
            &passages,
            (seconds, threads),
            crowd.rankings,
        );
    } else {
        crowd.contacts.clear();
    }
    // Each mover takes its velocity (in parallel), from its slot: until
    // avoidance decides, a unit walks as it prefers.
    let crowd = &*crowd;
    each_mover!(movers, PARALLEL_MOVERS, |unit| take_velocity(crowd, unit));
}

/// One mover's velocity for the frame, from its slot's plan: the parallel
/// body of [`avoid`]'s write-back.
#[inline(never)] // named in profiles
fn take_velocity(crowd: &Crowd, unit: AgentQueryItem) {
    let AgentQueryItem {
        slot, mut motion, ..
    } = unit;
    let usable = |v: Vec2| if v.is_finite() { v } else { Vec2::ZERO };
    let planned = crowd.rank_of(slot).filter(|_| crowd.planned_this_frame);
    motion.planned = match planned {
        Some(i) if crowd.agents[i].avoids => crowd.planned[i],
        _ => usable(motion.preferred),
    };
    motion.queued = planned.is_some_and(|i| crowd.queued[i]);
}

/// The crowd's plans for the frame: each awake unit planned alone (ORCA),
/// the woken after, then the gaps kept between the pairs that may touch.
fn plan_crowd(
    crowd: &mut Crowd,
    settings: &AvoidanceSettings,
    all_views: &AllViews,
    passages: &Passages,
    (seconds, threads): (f32, usize),
    rankings: u64,
) {
    crowd.contacts.clear();
    let (widest, fastest) = crowd.widest_and_fastest();
    let horizon = settings.time_horizon;
    // Buckets a third of the way two units can close within the horizon
    // (at least a body wide): the nearest neighbours are found in a few
    // rings, in a dense crowd and a sparse one.
    crowd.index((2.0 * widest).max((2.0 * widest + 2.0 * fastest * horizon) / 3.0));
    let map_views = views_of(&crowd.agents, all_views);
    let first_map = crowd.agents.first().and_then(|a| a.map);
    let one_map = crowd.agents.iter().all(|a| a.map == first_map);
    let bounds = Bounds {
        widest,
        fastest,
        horizon,
        seconds,
        count: settings.max_neighbours,
    };
    if one_map {
        keep_lists(crowd, bounds, rankings, threads);
    }
    let planner = Planner {
        agents: &crowd.agents,
        positions: &crowd.positions,
        passages,
        grid: &crowd.grid,
        lists: one_map.then_some(&crowd.lists),
        views: &map_views,
        one_map,
        widest,
        fastest,
        horizon,
        seconds,
        max_neighbours: settings.max_neighbours,
        options: dodgy_2d::AvoidanceOptions {
            obstacle_margin: 0.0,
            time_horizon: horizon,
            obstacle_time_horizon: WALL_HORIZON,
        },
    };
    let plans = plan_awake_then_woken(&planner, &crowd.grid, threads);
    crowd.planned.clear();
    crowd
        .planned
        .extend(crowd.agents.iter().map(|a| a.preferred));
    crowd.queued.clear();
    crowd.queued.resize(crowd.agents.len(), false);
    for chunk in plans {
        for (i, velocity, is_queued) in chunk.plans {
            if let Some(velocity) = velocity {
                crowd.planned[i] = velocity;
            }
            crowd.queued[i] = is_queued;
        }
        crowd.contacts.extend(chunk.contacts);
    }
    let agents = &crowd.agents;
    sort_pairs(&mut crowd.contacts, agents.len());
    crowd.colouring.rebuild(&crowd.contacts, agents.len());
    keep_gaps(
        agents,
        &mut crowd.planned,
        &crowd.colouring,
        seconds,
        threads,
    );
}

/// The view of every map an agent is on.
fn views_of<'a>(agents: &[Agent], all_views: &AllViews<'a>) -> HashMap<Entity, MapView<'a>> {
    let mut map_views = HashMap::new();
    let mut last = None;
    for agent in agents {
        if agent.map != last
            && let Some(map) = agent.map
            && let Some(view) = all_views.get(map)
        {
            map_views.insert(map, view);
        }
        last = agent.map;
    }
    map_views
}

/// Every awake unit planned, then those they woke. Units standing at rest
/// need no avoiding of their own until a moving one comes their way: they
/// are planned after the others, and only those some moving unit woke (a
/// big army at rest costs nearly nothing). Taken bucket by bucket, so that
/// units planned one after the other look at the same neighbours (kind to
/// the cache); each unit is planned alone from the frame's start, so the
/// threads and the chunks it is split into do not change what comes out.
fn plan_awake_then_woken(planner: &Planner, grid: &SpatialGrid, threads: usize) -> Vec<Plans> {
    let agents = planner.agents;
    let awake: Vec<usize> = grid
        .in_bucket_order()
        .map(|i| i as usize)
        .filter(|&i| !agents[i].asleep())
        .collect();
    let mut plans = planner.plan_all(&awake, threads);
    let mut woken = vec![false; agents.len()];
    for chunk in &plans {
        for &j in &chunk.wakes {
            woken[j as usize] = true;
        }
    }
    let woken: Vec<usize> = grid
        .in_bucket_order()
        .map(|i| i as usize)
        .filter(|&i| woken[i])
        .collect();
    plans.extend(planner.plan_all(&woken, threads));
    plans
}

/// What bounds a unit's neighbours: the crowd's widest body and fastest
/// speed, the horizon and the frame.
#[derive(Clone, Copy)]
struct Bounds {
    widest: f32,
    fastest: f32,
    horizon: f32,
    seconds: f32,
    count: usize,
}

impl Bounds {
    /// `me`'s neighbours: no pair further apart than `range` can meet
    /// within the horizon; every unit within `near` may touch it this
    /// frame, however many.
    fn query(&self, me: &Agent) -> Reach {
        Reach {
            range: me.radius + self.widest + (me.speed + self.fastest) * self.horizon,
            count: self.count,
            near: 1.1 * (me.radius + self.widest + (me.speed + self.fastest) * self.seconds),
        }
    }
}

/// The neighbour lists' skin, in widest bodies: the lists hold until a
/// unit has moved a body's width.
const SKIN: f32 = 2.0;

/// The frames a list allows for in its near bound: a frame up to this
/// many times as long as the one it was built in still reads it.
const FRAME_SLACK: f32 = 1.5;

/// Keeps the neighbour lists: rebuilt, each unit's alone (in parallel),
/// when the live movers changed (one joined or left), or one moved more than half the skin since
/// they were built; only awake units get one (the others ask the grid if
/// woken).
fn keep_lists(crowd: &mut Crowd, bounds: Bounds, rankings: u64, threads: usize) {
    let key = rankings ^ (bounds.count as u64).rotate_left(40);
    if crowd.lists.hold(&crowd.positions, key) {
        return;
    }
    let skin = SKIN * bounds.widest.max(1e-3);
    crowd.lists.reset(&crowd.positions, key, skin);
    let roomy = Bounds {
        seconds: bounds.seconds * FRAME_SLACK,
        ..bounds
    };
    let (agents, grid) = (&crowd.agents, (&crowd.grid, &crowd.positions[..]));
    let (lists, skin) = crowd.lists.lists_mut();
    each_chunk_mut(lists, threads, SLOT_CHUNK, |first, chunk| {
        build_lists(first, chunk, agents, grid, roomy, skin);
    });
}

/// One chunk of the movers' neighbour lists (in rank), for the awake
/// units among them.
#[inline(never)] // a parallel body of its own in profiles
fn build_lists(
    first: usize,
    chunk: &mut [List],
    agents: &[Agent],
    grid: (&SpatialGrid, &[Vec2]),
    bounds: Bounds,
    skin: f32,
) {
    for (k, list) in chunk.iter_mut().enumerate() {
        let me = &agents[first + k];
        if me.live && !me.asleep() {
            let skip = (first + k) as u32;
            list.build(grid, me.position, bounds.query(me), (skin, skip));
        }
    }
}

/// Units planned in one task, at least.
const PLAN_CHUNK: usize = 32;

/// Everything planning a unit reads: the frame's agents as they stood, and
/// the settings.
struct Planner<'a> {
    agents: &'a [Agent],
    /// The agents' positions.
    positions: &'a [Vec2],
    passages: &'a Passages,
    grid: &'a SpatialGrid,
    /// The neighbour lists, where they hold (one map: no unit turns down
    /// another as a neighbour).
    lists: Option<&'a NeighbourLists>,
    views: &'a HashMap<Entity, MapView<'a>>,
    one_map: bool,
    widest: f32,
    fastest: f32,
    horizon: f32,
    seconds: f32,
    max_neighbours: usize,
    options: dodgy_2d::AvoidanceOptions,
}

/// What planning some units gave.
#[derive(Default)]
struct Plans {
    /// Each unit's velocity (`None`: as it prefers) and whether it is
    /// queued.
    plans: Vec<(usize, Option<Vec2>, bool)>,
    /// Pairs that may touch this frame.
    contacts: Vec<(u32, u32)>,
    /// Units at rest that a planned unit is coming at.
    wakes: Vec<u32>,
}

/// A planning task's own buffers.
#[derive(Default)]
struct Scratch {
    found: Vec<(f32, u32)>,
    neighbours: Vec<Cow<'static, dodgy_2d::Agent>>,
    walls: Vec<Cow<'static, dodgy_2d::Obstacle>>,
}

impl Planner<'_> {
    /// Plans `units`, split over `threads` threads of the compute task pool
    /// (all on this one with 1).
    fn plan_all(&self, units: &[usize], threads: usize) -> Vec<Plans> {
        in_chunks(units, threads, PLAN_CHUNK, |part| self.plan_part(part))
    }

    /// Plans one task's `units`.
    #[inline(never)] // a parallel body of its own in profiles
    fn plan_part(&self, units: &[usize]) -> Plans {
        let mut scratch = Scratch::default();
        let mut out = Plans::default();
        for &i in units {
            self.plan(i, &mut scratch, &mut out);
        }
        out
    }

    /// Plans unit `i`: its velocity for the frame, the closest to the one
    /// it would like that avoids its nearest neighbours and the walls near
    /// it (ORCA), asked only when one of them is in its way.
    fn plan(&self, i: usize, scratch: &mut Scratch, out: &mut Plans) {
        let me = self.agents[i];
        self.neighbours(i, &mut scratch.found);
        if scratch.found.is_empty() {
            return;
        }
        let threatened = self.threats(i, &scratch.found, out);
        // One that does not avoid still wakes those in its way and has its
        // contacts kept, but plans nothing itself.
        if !me.avoids {
            return;
        }
        let queued = self.queued(&me, &scratch.found);
        // Nobody in the way within the horizon: the unit goes as it would
        // like, and ORCA need not be asked.
        if !threatened {
            out.plans.push((i, None, queued));
            return;
        }
        let velocity = self.solve(&me, scratch);
        out.plans
            .push((i, velocity.is_finite().then_some(velocity), queued));
    }

    /// Unit `i`'s neighbours into `found`: the nearest within the horizon,
    /// and everyone it may touch this frame (from its list where one
    /// holds, which gives exactly what the grid would).
    fn neighbours(&self, i: usize, found: &mut Vec<(f32, u32)>) {
        let (agents, me) = (self.agents, &self.agents[i]);
        let query = Bounds {
            widest: self.widest,
            fastest: self.fastest,
            horizon: self.horizon,
            seconds: self.seconds,
            count: self.max_neighbours,
        }
        .query(me);
        let (reach, near, count) = (query.range, query.near, query.count);
        let everyone = |_| true;
        let at = me.position;
        let listed = self.lists.is_some_and(|lists| {
            lists.nearest(self.positions, at, query, i as u32, everyone, found)
        });
        if listed {
        } else if self.one_map {
            self.grid
                .nearest(at, reach, count, near, i as u32, everyone, found);
        } else {
            let same_map = |j: u32| agents[j as usize].map == me.map;
            self.grid
                .nearest(at, reach, count, near, i as u32, same_map, found);
        }
    }

    /// Whether any of unit `i`'s neighbours `found` is in its way within
    /// the horizon; those asleep in its way are woken, and the pairs that
    /// may touch this frame kept.
    fn threats(&self, i: usize, found: &[(f32, u32)], out: &mut Plans) -> bool {
        let me = &self.agents[i];
        let mut threatened = false;
        for &(distance, j) in found {
            let other = &self.agents[j as usize];
            let course = on_collision_course(
                other.position - me.position,
                me.preferred - seen(me, other),
                distance,
                me.radius + other.radius,
                self.horizon,
            );
            threatened |= course;
            if course && other.asleep() {
                out.wakes.push(j);
            }
            let close = me.radius + other.radius + (me.speed + other.speed) * self.seconds;
            if distance < 1.1 * close {
                out.contacts.push(((i as u32).min(j), (i as u32).max(j)));
            }
        }
        threatened
    }

    /// Whether `me` is behind a unit that waits its turn at a passage (or
    /// is queued behind one), going the same way: queued too, not blocked.
    fn queued(&self, me: &Agent, found: &[(f32, u32)]) -> bool {
        !me.held_up
            && me.heading != Vec2::ZERO
            && found.iter().any(|&(distance, j)| {
                let other = &self.agents[j as usize];
                let offset = other.position - me.position;
                other.held_up
                    && distance <= 1.3 * (me.radius + other.radius)
                    && offset.dot(me.heading) >= 0.5 * distance
                    && other.heading.dot(me.heading) >= 0.0
            })
    }

    /// `me`'s velocity by ORCA, from its neighbours in `scratch.found` and
    /// the walls near it.
    fn solve(&self, me: &Agent, scratch: &mut Scratch) -> Vec2 {
        scratch.neighbours.clear();
        for &(distance, j) in &scratch.found {
            let other = &self.agents[j as usize];
            scratch
                .neighbours
                .push(Cow::Owned(self.as_obstacle(me, other, distance)));
        }
        // The map as the unit's class sees it, cell by cell: its walls are
        // the ground the class may not enter.
        let view = me
            .map
            .and_then(|map| self.views.get(&map))
            .map(|view| view.for_kind(UnitKind::new(me.class, 1)));
        let view = view.as_ref();
        let nearby = scratch.found.iter().map(|&(_, j)| &self.agents[j as usize]);
        let preferred = keep_right(me, nearby, self.horizon, view);
        scratch.walls.clear();
        if let Some(view) = view {
            self.walls(me, view, &mut scratch.walls);
        }
        let agent = dodgy_2d::Agent {
            position: to_dodgy(me.position),
            velocity: to_dodgy(me.velocity),
            radius: me.radius,
            avoidance_responsibility: responsibility(me),
        };
        let avoiding = agent.compute_avoiding_velocity(
            &scratch.neighbours,
            &scratch.walls,
            to_dodgy(preferred),
            me.speed,
            self.seconds,
            &self.options,
        );
        Vec2::new(avoiding.x, avoiding.y)
    }

    /// `other`, `distance` from `me`, as ORCA's neighbour of `me`.
    fn as_obstacle(&self, me: &Agent, other: &Agent, distance: f32) -> dodgy_2d::Agent {
        let mut position = other.position;
        if distance < 1e-4 {
            // Two units on one spot: ORCA cannot tell which way to part
            // them (dodgy_2d would pick a random direction). Part them
            // along a direction fixed by their places in the crowd, so the
            // same inputs give the same positions.
            position = me.position + parting_direction(me.order, other.order) * 1e-3;
        }
        let mut velocity = seen(me, other);
        // Bodies already touching whose relative velocity is exactly the
        // one that closes the gap within the frame leave ORCA's cut-off
        // circle without a normal, and dodgy_2d would pick a random one
        // (from the thread's random generator: another run of the same
        // game parts there). The same test as dodgy_2d's, on the same
        // numbers: such a neighbour's velocity is nudged along the pair's
        // parting direction instead.
        let offset = position - me.position;
        let reach = me.radius + other.radius;
        if offset.length_squared() <= reach * reach {
            let from_centre = (me.velocity - velocity) - offset / self.seconds;
            let recip = from_centre.length_recip();
            if !(recip.is_finite() && recip > 0.0) {
                velocity += parting_direction(me.order, other.order) * 1e-3;
            }
        }
        dodgy_2d::Agent {
            position: to_dodgy(position),
            velocity: to_dodgy(velocity),
            radius: other.radius,
            avoidance_responsibility: priority(other, me).avoids,
        }
    }

    /// The wall edges near `me` as ORCA's obstacles into `walls`. A
    /// passage it has no claim on is a wall to it: one ahead, and one
    /// beside it (a unit coming out, pressed by those about to go in, must
    /// not be planned back into it, where it may not step, and so stand
    /// still).
    fn walls(&self, me: &Agent, view: &MapView, walls: &mut Vec<Cow<'static, dodgy_2d::Obstacle>>) {
        let reach = me.radius + me.speed * WALL_HORIZON;
        let by_passage = !me.crossing
            && me.map.is_some_and(|map| {
                me.near_passage || self.passages.beside(map, view, me.position, 2)
            });
        let closed = |cell: Cell| {
            by_passage
                && me
                    .map
                    .is_some_and(|map| self.passages.closes(map, view, cell))
        };
        wall_edges(view, me.position, reach, closed, walls);
    }
}

/// What `me` sees of `other`'s velocity: a standing unit sees where a
/// moving one means to go, so that it makes way before the other reaches
/// it; and everyone sees where one pushing through or crossing a passage
/// means to go.
fn seen(me: &Agent, other: &Agent) -> Vec2 {
    if priority(me, other).sees_intent {
        other.preferred
    } else {
        other.velocity
    }
}

/// Whether two bodies `offset` apart, their radii summing to `reach` and
/// closing at `relative` velocity, touch within `horizon` seconds (or do
/// now).
fn on_collision_course(
    offset: Vec2,
    relative: Vec2,
    distance: f32,
    reach: f32,
    horizon: f32,
) -> bool {
    if distance <= reach {
        return true;
    }
    let closing = offset.dot(relative);
    let speed_squared = relative.length_squared();
    if closing <= 0.0 || speed_squared <= 1e-12 {
        return false;
    }
    let discriminant = closing * closing - speed_squared * (distance * distance - reach * reach);
    discriminant > 0.0 && (closing - discriminant.sqrt()) / speed_squared <= horizon
}

/// A mover's body as [`separate`] moves it.
#[derive(QueryData)]
#[query_data(mutable)]
pub(crate) struct BodyQuery {
    entity: Entity,
    transform: &'static mut Transform,
    motion: &'static mut super::Motion,
    slot: &'static Slot,
}

/// `FrontierSystems::Move`, after the units walked: bodies that still
/// overlap (ORCA's velocities are only a plan, and a crowd pressed against
/// a wall cannot always follow it) are pushed apart, a few rounds, each
/// unit taking its share as in avoidance, every step checked on the grid,
/// as Detour's crowds do after integration. Only the pairs [`avoid`] found
/// close enough to touch this frame are looked at. A unit that does not
/// avoid is not pushed; the others make way for it. What a unit was pushed
/// is added to the velocity it walked (`Motion::velocity`), as position-based
/// crowds take velocities from positions: one held back in a jam starts the
/// next frame with no push into it, seen standing by the others.
#[inline(never)] // named in profiles: one entry per crowd-step system
pub(crate) fn separate(
    settings: Res<AvoidanceSettings>,
    mut bodies: Query<BodyQuery, With<Mover>>,
    maps: Maps<Without<Mover>>,
    passages: Res<Passages>,
    mut crowd: ResMut<Crowd>,
    time: Res<Time>,
) {
    if !settings.enabled || crowd.contacts.is_empty() {
        return;
    }
    let settings = settings.clamped();
    let crowd = &mut *crowd;
    let threads = crate::budget::threads_for(settings.threads);
    let all_views = AllViews::new(&maps);
    // Where each body stands after the move, and its map for its kind,
    // each chunk of movers alone (in parallel).
    let mut walk_views: Vec<(Vec2, Option<MapView>)> = vec![(Vec2::NAN, None); crowd.agents.len()];
    let agents = &crowd.agents;
    each_chunk_mut(&mut walk_views, threads, SLOT_CHUNK, |first, chunk| {
        place_bodies(first, chunk, agents, &bodies, &all_views);
    });
    crowd.positions.clear();
    crowd.positions.extend(walk_views.iter().map(|&(at, _)| at));
    let views: Vec<Option<MapView>> = walk_views.into_iter().map(|(_, view)| view).collect();
    let separation = Separation {
        agents,
        views: &views,
        passages: &passages,
        colouring: &crowd.colouring,
        rounds: settings.separation_rounds,
    };
    let pushes = separation.pushes(&mut crowd.positions, threads);
    let (positions, crowd) = (&crowd.positions, &*crowd);
    let seconds = time.delta_secs();
    each_mover!(
        bodies,
        PARALLEL_MOVERS,
        |BodyQueryItem {
             entity,
             mut transform,
             mut motion,
             slot,
         }| {
            // The mover the agent was: one spawned since avoidance ran
            // (in an observer of the walk's events, say) may hold the
            // slot of one despawned since, and was not separated.
            if let Some(i) = crowd.rank_of(slot)
                && crowd.agents[i].entity == entity
                && let Some(&push) = pushes.get(i)
                && push != Vec2::ZERO
            {
                transform.translation = positions[i].extend(transform.translation.z);
                if seconds > 0.0 {
                    motion.velocity += push / seconds;
                }
            }
        }
    );
}

/// One chunk of the movers' bodies (in rank) as separation starts: where
/// each stands after the walk, and its map for its kind (`None`, a body
/// the separation does not move: a mover off every map, one of a class
/// its map lacks, or one standing nowhere finite).
#[inline(never)] // the parallel body of `separate`'s gathering
fn place_bodies<'a>(
    first: usize,
    chunk: &mut [(Vec2, Option<MapView<'a>>)],
    agents: &[Agent],
    bodies: &Query<BodyQuery, With<Mover>>,
    all_views: &AllViews<'a>,
) {
    for (k, placed) in chunk.iter_mut().enumerate() {
        let agent = &agents[first + k];
        let at = bodies.get(agent.entity).ok().filter(|_| agent.live);
        let Some(at) = at.map(|body| body.transform.translation.truncate()) else {
            continue;
        };
        let kind = UnitKind::new(agent.class, agent.size);
        let view = agent
            .map
            .and_then(|map| all_views.get(map))
            .filter(|view| view.knows(kind))
            .map(|view| view.for_kind(kind));
        *placed = (at, view.filter(|_| at.is_finite()));
    }
}

/// `pairs` (of indices below `count`) in order and without repeats, as
/// `sort_unstable` and `dedup` leave them, in time linear in the pairs and
/// `count`: a counting sort by the first index, then each unit's few pairs
/// by the second. (A frame's contacts, each found from both sides, were
/// the step's largest sort.)
fn sort_pairs(pairs: &mut Vec<(u32, u32)>, count: usize) {
    let mut starts = vec![0u32; count + 1];
    for &(i, _) in pairs.iter() {
        starts[i as usize + 1] += 1;
    }
    for k in 0..count {
        starts[k + 1] += starts[k];
    }
    let mut sorted = vec![(0, 0); pairs.len()];
    let mut fill = starts.clone();
    for &(i, j) in pairs.iter() {
        sorted[fill[i as usize] as usize] = (i, j);
        fill[i as usize] += 1;
    }
    for run in starts.windows(2) {
        let run = &mut sorted[run[0] as usize..run[1] as usize];
        // A few pairs each: by insertion.
        for k in 1..run.len() {
            let mut at = k;
            while at > 0 && run[at - 1] > run[at] {
                run.swap(at - 1, at);
                at -= 1;
            }
        }
    }
    sorted.dedup();
    *pairs = sorted;
}

/// Seconds ahead a unit looks for walls when it avoids others: short, as
/// walls are the grid's business; it only keeps avoidance from pushing a
/// unit into a wall, where it would stop short of where the others
/// counted on it to go.
const WALL_HORIZON: f32 = 0.25;

/// The wall edges within `reach` of `position` as ORCA obstacles: each side
/// a wall cell (or the map's edge) shares with a walkable cell, with the
/// wall on its left. Walls of the grid itself as the unit's class sees it
/// (`view` is for that class, size 1), whatever the unit's size: its body
/// keeps its radius from them.
fn wall_edges(
    view: &MapView,
    position: Vec2,
    reach: f32,
    closed: impl Fn(Cell) -> bool,
    out: &mut Vec<Cow<'static, dodgy_2d::Obstacle>>,
) {
    let Some(at) = view.world_to_grid(position) else {
        return;
    };
    let cell = view.layout.cell_size.abs().min_element();
    if cell <= 0.0 || !reach.is_finite() {
        return;
    }
    let reach = reach / cell;
    let grid = view.size_class();
    let wall = |x: i64, y: i64| {
        let cell = Cell::new(
            u32::try_from(x).unwrap_or(u32::MAX),
            u32::try_from(y).unwrap_or(u32::MAX),
        );
        x < 0 || y < 0 || !grid.is_walkable(cell) || closed(cell)
    };
    // A mirroring transform turns left into right.
    let origin = view.grid_to_world(Vec2::ZERO);
    let mirrored =
        (view.grid_to_world(Vec2::X) - origin).perp_dot(view.grid_to_world(Vec2::Y) - origin) < 0.0;
    let (x0, x1) = ((at.x - reach).floor() as i64, (at.x + reach).floor() as i64);
    let (y0, y1) = ((at.y - reach).floor() as i64, (at.y + reach).floor() as i64);
    for y in y0..=y1 {
        for x in x0..=x1 {
            if !wall(x, y) {
                continue;
            }
            let centre = Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
            for (dx, dy) in [(1, 0), (-1, 0), (0, 1), (0, -1)] {
                if wall(x + dx, y + dy) {
                    continue;
                }
                let normal = Vec2::new(dx as f32, dy as f32);
                let along = normal.perp();
                let middle = centre + 0.5 * normal;
                let (mut a, mut b) = (middle - 0.5 * along, middle + 0.5 * along);
                let nearest = at.clamp(a.min(b), a.max(b));
                if nearest.distance(at) > reach {
                    continue;
                }
                if mirrored {
                    std::mem::swap(&mut a, &mut b);
                }
                out.push(Cow::Owned(dodgy_2d::Obstacle::Open {
                    vertices: vec![
                        to_dodgy(view.grid_to_world(a)),
                        to_dodgy(view.grid_to_world(b)),
                    ],
                }));
            }
        }
    }
}

/// How far a unit turns to its right to pass one in its way (radians).
const KEEP_RIGHT: f32 = 0.3;

/// `v` turned clockwise by `angle` radians (at most about 1.5): the sine
/// and cosine from their Taylor series, in multiplications and additions
/// only, which give the same bits on every machine (a platform's `sin` and
/// `cos` may differ in the last bit, and a lockstep game would part
/// there). Off by less than 3e-7 up to 1.2 radians.
fn turned_right(v: Vec2, angle: f32) -> Vec2 {
    let a2 = angle * angle;
    let sin = angle * (1.0 - a2 / 6.0 * (1.0 - a2 / 20.0 * (1.0 - a2 / 42.0 * (1.0 - a2 / 72.0))));
    let cos = 1.0
        - a2 / 2.0 * (1.0 - a2 / 12.0 * (1.0 - a2 / 30.0 * (1.0 - a2 / 56.0 * (1.0 - a2 / 90.0))));
    Vec2::new(cos, -sin).rotate(v)
}

/// How far a unit that has long been blocked turns (radians).
const KEEP_RIGHT_BLOCKED: f32 = 1.2;

/// `me`'s preferred velocity, turned a little to its right when another
/// unit stands or comes in its way within the horizon. ORCA alone lets two
/// units that meet exactly head-on (or one walking straight at a standing
/// one) only slow down and push; turning right, each to its own side, they
/// pass, the same way every run.
fn keep_right<'a>(
    me: &Agent,
    others: impl Iterator<Item = &'a Agent>,
    horizon: f32,
    view: Option<&MapView>,
) -> Vec2 {
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
    // The longer a unit is blocked, the more it turns: in a jam where
    // everyone keeps right, that sets the crowd turning round, which
    // unlocks it.
    let angle = KEEP_RIGHT + (KEEP_RIGHT_BLOCKED - KEEP_RIGHT) * me.blocked;
    let turned = turned_right(me.preferred, angle);
    // Not into a wall: ORCA would then hold the unit against it.
    let clear = |view: &MapView| {
        let cell = view.layout.cell_size.abs().min_element();
        // One step of about a cell: `can_move` checks the cells and the
        // corner it crosses.
        view.can_move(
            me.position,
            me.position + turned / speed * (me.radius + 0.5 * cell),
        )
    };
    if in_the_way && view.is_none_or(clear) {
        turned
    } else {
        me.preferred
    }
}

/// bevy's `Vec2` to the `glam` version `dodgy_2d` is built on.
fn to_dodgy(v: Vec2) -> dodgy_2d::Vec2 {
    dodgy_2d::Vec2::new(v.x, v.y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{ClassId, NavGrid};
    use crate::maps::GridLayout;

    /// The turn to the right made of multiplications matches the
    /// platform's sine and cosine over the angles a unit turns by.
    #[test]
    #[expect(
        clippy::disallowed_methods,
        reason = "the reference it is checked against"
    )]
    fn turning_right_without_sine_and_cosine() {
        for step in 0..=150 {
            let angle = step as f32 * 0.01;
            let v = Vec2::new(0.6, -1.7);
            let expected = Vec2::from_angle(-angle).rotate(v);
            let got = turned_right(v, angle);
            assert!(
                got.distance(expected) < 1e-5 * v.length(),
                "{angle}: {got} {expected}"
            );
        }
    }

    /// A small xorshift generator.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> f32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 40) as f32 / (1u64 << 24) as f32
        }
    }

    fn agent(entity: u32, position: Vec2) -> Agent {
        Agent {
            entity: Entity::from_raw_u32(entity).unwrap(),
            // In the order the entities compare in (their bits), as the
            // scenes of these tests were first drawn in.
            order: Entity::from_raw_u32(entity).unwrap().to_bits(),
            map: None,
            class: ClassId::DEFAULT,
            position,
            velocity: Vec2::ZERO,
            preferred: Vec2::ZERO,
            radius: 0.45,
            speed: 4.0,
            avoids: true,
            pushing: false,
            heading: Vec2::ZERO,
            held_up: false,
            idle: false,
            near_passage: false,
            crossing: false,
            blocked: 0.0,
            live: true,
            size: 1,
        }
    }

    /// Separation's colours hold pairs that share no body: split over any
    /// number of threads they give the same positions bit for bit. And the
    /// rounds part the bodies: the deepest overlap is less after than
    /// before.
    #[test]
    fn separation_is_the_same_for_any_split_and_parts_bodies() {
        let mut grid = NavGrid::new(48, 48).unwrap();
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for _ in 0..120 {
            let cell = Cell::new((rng.next() * 48.0) as u32, (rng.next() * 48.0) as u32);
            grid.set_cost(cell, NavGrid::BLOCKED).unwrap();
        }
        let layout = GridLayout::default();
        let view = MapView::new(&grid, &layout, None);
        for round in 0..6 {
            let count = 400 + round * 60;
            // Where each started the frame: a cell apart (bodies apart,
            // as the frame before left them), and where each walked to.
            let agents: Vec<Agent> = (0..count)
                .map(|k| {
                    let cell = Vec2::new((k % 24) as f32, (k / 24) as f32);
                    let jitter = Vec2::new(rng.next() - 0.5, rng.next() - 0.5) * 0.1;
                    let mut a = agent(k as u32 + 1, Vec2::splat(4.0) + cell + jitter);
                    a.pushing = rng.next() < 0.2;
                    a.idle = rng.next() < 0.2;
                    a.avoids = rng.next() < 0.9;
                    a
                })
                .collect();
            let walked: Vec<Vec2> = agents
                .iter()
                .map(|a| a.position + Vec2::new(rng.next() - 0.5, rng.next() - 0.5) * 0.3)
                .collect();
            let views: Vec<Option<MapView>> = walked
                .iter()
                .map(|&at| {
                    view.cell_at(at)
                        .filter(|&c| grid.is_walkable(c))
                        .map(|_| view)
                })
                .collect();
            let mut contacts = Vec::new();
            for i in 0..count {
                for j in i + 1..count {
                    if walked[i].distance(walked[j]) < 1.2 {
                        contacts.push((i as u32, j as u32));
                    }
                }
            }
            let mut colouring = Colouring::default();
            colouring.rebuild(&contacts, count);
            let passages = Passages::default();
            let separation = Separation {
                agents: &agents,
                views: &views,
                passages: &passages,
                colouring: &colouring,
                rounds: 32,
            };
            let start = walked;
            let deepest = |positions: &[Vec2]| {
                contacts
                    .iter()
                    .filter(|&&(i, j)| {
                        let (a, b) = (&agents[i as usize], &agents[j as usize]);
                        let parts = priority(a, b).gives + priority(b, a).gives > 0.0;
                        parts && views[i as usize].is_some() && views[j as usize].is_some()
                    })
                    .map(|&(i, j)| 0.9 - positions[i as usize].distance(positions[j as usize]))
                    .fold(0.0f32, f32::max)
            };
            let mut once = start.clone();
            let once_moved = separation.settle(&mut once, 1);
            assert!(once_moved.iter().any(|&m| m), "round {round} moved nobody");
            assert!(
                3.0 * deepest(&once) < 2.0 * deepest(&start),
                "round {round}: {} {}",
                deepest(&start),
                deepest(&once)
            );
            for threads in [2, 3, 7] {
                let mut split = start.clone();
                let split_moved = separation.settle(&mut split, threads);
                assert!(
                    once.iter()
                        .zip(&split)
                        .all(|(a, b)| a.to_array() == b.to_array()),
                    "round {round}, {threads} threads"
                );
                assert_eq!(once_moved, split_moved);
            }
        }
    }

    /// A crowd packed shoulder to shoulder in the open presses in on its
    /// middle, every body walking a frame's way (0.13 of a cell) toward it,
    /// frame after frame, some pushing through, some standing: after each
    /// frame's separation no pair is deeper than 0.1 of a radius, however
    /// few its rounds. (The rounds alone left pairs 0.86 of a radius deep
    /// here: the hold back of what they leave keeps the limit.)
    #[test]
    fn a_crowd_pressing_in_stays_under_the_limit() {
        let grid = NavGrid::new(48, 48).unwrap();
        let layout = GridLayout::default();
        let view = MapView::new(&grid, &layout, None);
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let mut agents = Vec::new();
        for row in 0..20 {
            for column in 0..20 {
                let x = 12.0 + column as f32 * 0.9 + if row % 2 == 1 { 0.45 } else { 0.0 };
                let mut a = agent(
                    agents.len() as u32 + 1,
                    Vec2::new(x, 12.0 + row as f32 * 0.78),
                );
                a.pushing = rng.next() < 0.2;
                a.idle = !a.pushing && rng.next() < 0.2;
                agents.push(a);
            }
        }
        let middle = Vec2::new(21.0, 19.5);
        let deepest = |rounds: usize| {
            let mut agents = agents.clone();
            let mut worst = 0.0f32;
            for _ in 0..20 {
                let walked: Vec<Vec2> = agents
                    .iter()
                    .map(|a| match a.idle {
                        true => a.position,
                        false => a.position + (middle - a.position).normalize_or_zero() * 0.13,
                    })
                    .collect();
                worst = worst.max(separate_once(&mut agents, walked, &view, rounds));
            }
            worst / 0.45
        };
        for rounds in [2, 8, 32] {
            let deepest = deepest(rounds);
            // At the squeeze a pair may stay: the limit, to the last bits.
            assert!(
                deepest <= 0.1 + 1e-4,
                "{deepest} of a radius deep, {rounds} rounds"
            );
        }
    }

    /// One separation in the open with `rounds` of `agents` (where they
    /// started the frame) having walked to `walked`, their positions moved
    /// to its result: the deepest pair after it.
    fn separate_once(
        agents: &mut [Agent],
        mut positions: Vec<Vec2>,
        view: &MapView,
        rounds: usize,
    ) -> f32 {
        let count = agents.len();
        let mut contacts = Vec::new();
        for i in 0..count {
            for j in i + 1..count {
                if agents[i].position.distance(agents[j].position) < 1.5 {
                    contacts.push((i as u32, j as u32));
                }
            }
        }
        let mut colouring = Colouring::default();
        colouring.rebuild(&contacts, count);
        let passages = Passages::default();
        let views: Vec<Option<MapView>> = vec![Some(*view); count];
        Separation {
            agents,
            views: &views,
            passages: &passages,
            colouring: &colouring,
            rounds,
        }
        .settle(&mut positions, 1);
        for (a, &at) in agents.iter_mut().zip(&positions) {
            a.position = at;
        }
        contacts
            .iter()
            .map(|&(i, j)| 0.9 - positions[i as usize].distance(positions[j as usize]))
            .fold(0.0f32, f32::max)
    }

    /// The contacts' linear sort puts pairs in the order, and drops the
    /// repeats, that sorting and `dedup` would: separation's rounds take
    /// them in that order.
    #[test]
    fn pairs_sorted_as_a_sort_would() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        for round in 0..30 {
            let count = 1 + round * 7;
            let pairs: Vec<(u32, u32)> = (0..round * 40)
                .map(|_| {
                    let a = (rng.next() * count as f32) as u32 % count as u32;
                    let b = (rng.next() * count as f32) as u32 % count as u32;
                    (a.min(b), a.max(b))
                })
                .collect();
            let mut expected = pairs.clone();
            expected.sort_unstable();
            expected.dedup();
            let mut sorted = pairs;
            sort_pairs(&mut sorted, count);
            assert_eq!(sorted, expected);
        }
    }

    /// Whose way it is: of two pushing through against each other, the
    /// later to join yields and gives up all of the pair; one pushing
    /// through gives up none of it against a unit standing idle; one that
    /// does not avoid gives up none.
    #[test]
    fn priority_between_two_units() {
        let (mut early, mut late) = (agent(1, Vec2::ZERO), agent(2, Vec2::X));
        if early.order > late.order {
            std::mem::swap(&mut early, &mut late);
        }
        early.pushing = true;
        late.pushing = true;
        let (late_early, early_late) = (priority(&late, &early), priority(&early, &late));
        assert!(late_early.steps_back && !early_late.steps_back);
        assert_eq!(late_early.gives, 1.0);
        assert!(early_late.gives < 0.5);
        assert!(late_early.avoids > early_late.avoids);
        assert!(late_early.sees_intent && late_early.makes_way);
        let mut standing = agent(3, Vec2::Y);
        standing.idle = true;
        assert_eq!(priority(&early, &standing).gives, 0.0);
        assert_eq!(priority(&standing, &early).gives, 1.0);
        assert!(priority(&standing, &agent(5, Vec2::X)).sees_intent);
        let mut ghost = agent(4, Vec2::NEG_X);
        ghost.avoids = false;
        assert_eq!(priority(&ghost, &standing).gives, 0.0);
    }
}
