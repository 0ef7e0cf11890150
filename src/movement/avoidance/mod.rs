//! Local avoidance (stage 4, [`CrowdSystems::Avoid`](super::CrowdSystems::Avoid)):
//! movers steer round each other with optimal reciprocal collision
//! avoidance (ORCA, the method of RVO2, Detour's crowds and Unity's A*
//! Pathfinding Project), solved by the crate's own (`orca.rs`, which
//! follows the `dodgy_2d` crate bit for bit, allocating nothing).
//!
//! Each frame, every mover's preferred velocity (from its steering) is
//! turned into the velocity closest to it that collides with none of its
//! nearest neighbours within [`CrowdSettings::time_horizon`], each
//! pair sharing the work of avoiding. Neighbours come from each awake
//! unit's neighbour list, kept across frames while nobody has moved far
//! (`neighbours`), and from a uniform grid of buckets rebuilt every frame
//! for the rest, so the cost grows with the number of movers, not its
//! square. Walls are not ORCA's business: the movers' integration walks
//! the grid (`MapView::can_move`), which stays the final word on where a
//! unit may stand.
//!
//! | file | what it holds |
//! |---|---|
//! | `mod.rs` | `avoid`: the snapshot by seat, put in crowd rank (`Crowd`), the lists kept, the plans gathered |
//! | `plan.rs` | one unit's plan: its neighbours, threats, walls, keeping right, ORCA's answer |
//! | `priority.rs` | what avoidance reads of a mover (`Agent`, one flags word) and whose way it is (`priority`) |
//! | `orca.rs` | ORCA's half-planes and its 2D and 3D linear programs |
//! | `solver.rs` | the contacts' colours, the gaps kept, and the separation's rounds (used by `separate.rs`) |
//! | `neighbours.rs` | the bucket grid and the neighbour lists kept across frames |

mod neighbours;
mod orca;
mod plan;
pub(crate) mod priority;
pub(crate) mod solver;

use bevy::platform::collections::HashMap;
use bevy::prelude::*;

use super::body::{AgentQuery, AgentQueryItem, AgentQueryReadOnlyItem, body_radius, speed_of};
use super::parallel::{Pace, Team, each_mover, team_threads, with_team};
use super::passage::Passages;
use super::seats::{Seat, Seats};
use super::settings::CrowdSettings;
use super::state::{MapsBesideUnits, Steering};
use super::tuning::{FRAME_SLACK, NEAR_GOAL, PARALLEL_MOVERS, SEAT_CHUNK, SKIN, WALL_HORIZON};
use crate::maps::{AllViews, MapView};
use neighbours::{List, NeighbourLists, SpatialGrid};
use plan::{Bounds, Planner, UnitPlans};
use priority::{Agent, Flags};
use solver::{Colouring, keep_gaps};

/// The movers of the frame as avoidance sees them, gathered by seat
/// ([`Seats`]), the index of their positions, their plans and the pairs
/// that may touch: worked out by [`avoid`], used again by [`separate`],
/// kept from frame to frame.
#[derive(Resource, Default)]
pub(crate) struct Crowd {
    /// Each seat's mover as it stood at the frame's start
    /// ([`Agent::ABSENT`] for a free seat).
    by_seat: Vec<Agent>,
    /// The live seats (a mover standing somewhere finite), lowest first.
    live: Vec<u32>,
    /// The live seats in crowd rank: the order the crowd decides in.
    ranked: Vec<u32>,
    /// Each seat's place in `ranked` (`u32::MAX`: not live).
    rank_of: Vec<u32>,
    /// Counts the changes of `ranked`: what was kept by rank is stale.
    rankings: u64,
    /// The live movers in crowd rank (index `r` is `ranked[r]`'s): the
    /// arrays below, the neighbour lists and the contacts are in rank.
    pub(crate) agents: Vec<Agent>,
    /// Where each mover stands (after the walk, in [`separate`]).
    pub(crate) positions: Vec<Vec2>,
    pub(crate) grid: SpatialGrid,
    /// Each mover's candidate neighbours, kept while nobody moves far.
    lists: NeighbourLists,
    /// Each mover's velocity for the frame, as it is worked out.
    planned: Vec<Vec2>,
    /// Each mover is queued behind one waiting at a passage.
    queued: Vec<bool>,
    /// Seconds since the crowd in front of each mover last gained ground
    /// ([`Headway::ahead`](crate::movement::state::headway::Headway::ahead)).
    ahead: Vec<f32>,
    /// Pairs close enough to touch within the frame.
    pub(crate) contacts: Vec<(u32, u32)>,
    /// The contacts in colours, for the solvers.
    pub(crate) colouring: Colouring,
    /// Whether this frame's plans stand (avoidance ran).
    planned_this_frame: bool,
}

impl Crowd {
    /// Puts the live movers of the snapshot in crowd rank
    /// ([`Ordinal::crowd_rank`](crate::ordinal::Ordinal::crowd_rank), then
    /// entity): sorted again only when the live seats changed (a mover
    /// joined or left, or stands nowhere finite), else copied in the
    /// order kept.
    #[inline(never)] // a serial piece of the step, named in profiles
    fn rank(&mut self, team: &Team) {
        let live = self
            .by_seat
            .iter()
            .enumerate()
            .filter(|(_, a)| a.live())
            .map(|(seat, _)| seat as u32);
        if !live.clone().eq(self.live.iter().copied()) {
            self.live.clear();
            self.live.extend(live);
            let by_seat = &self.by_seat;
            self.ranked.clone_from(&self.live);
            self.ranked.sort_unstable_by_key(|&s| {
                let agent = &by_seat[s as usize];
                (agent.rank, agent.entity)
            });
            self.rank_of.clear();
            self.rank_of.resize(by_seat.len(), u32::MAX);
            for (r, &seat) in self.ranked.iter().enumerate() {
                self.rank_of[seat as usize] = r as u32;
            }
            self.rankings += 1;
        }
        self.rank_of.resize(self.by_seat.len(), u32::MAX);
        // Copied in rank on the team's threads, each chunk alone.
        self.agents.resize(self.ranked.len(), Agent::ABSENT);
        let (by_seat, ranked) = (&self.by_seat, &self.ranked);
        team.each_chunk_mut(&mut self.agents, SEAT_CHUNK, |first, chunk| {
            for (agent, &seat) in chunk.iter_mut().zip(&ranked[first..]) {
                *agent = by_seat[seat as usize];
            }
        });
    }

    /// The rank of the mover in `seat`, if it is live this frame.
    pub(crate) fn rank_of(&self, seat: &Seat) -> Option<usize> {
        let rank = *self.rank_of.get(seat.index()?)?;
        (rank != u32::MAX).then_some(rank as usize)
    }

    /// Indexes the agents' positions in buckets `width` wide.
    #[inline(never)] // a serial piece of the step, named in profiles
    fn index(&mut self, width: f32, team: &Team) {
        self.positions.resize(self.agents.len(), Vec2::ZERO);
        let agents = &self.agents;
        team.each_chunk_mut(&mut self.positions, SEAT_CHUNK, |first, chunk| {
            for (at, agent) in chunk.iter_mut().zip(&agents[first..]) {
                *at = agent.position;
            }
        });
        self.grid.rebuild_on(&self.positions, width.max(0.05), team);
    }

    /// The largest radius and speed of the agents.
    fn widest_and_fastest(&self) -> (f32, f32) {
        priority::widest_and_fastest(&self.agents)
    }
}

/// The pace of [`avoid`]'s dispatch, on the pool's threads and alone.
static AVOID_PACE: Pace = Pace::new();

/// One chunk of seats' snapshot: each seat's mover as it stands at the
/// frame's start, read from its components (a free seat, or a mover
/// standing nowhere finite, is [`Agent::ABSENT`]).
#[inline(never)] // the parallel body of the snapshot, named in profiles
fn snapshot(
    first: usize,
    chunk: &mut [Agent],
    holders: &[Option<Entity>],
    movers: &Query<AgentQuery>,
    all_views: &AllViews,
    settings: &CrowdSettings,
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
    settings: &CrowdSettings,
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
        group,
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
    // What avoidance reads of the passages, in one place.
    let passage = &motion.passage;
    position.is_finite().then(|| Agent {
        entity,
        rank: ordinal.crowd_rank(),
        map,
        class: class.copied().unwrap_or_default().0,
        size: footprint.copied().unwrap_or_default().0,
        position,
        velocity: usable(motion.velocity),
        preferred: usable(motion.preferred),
        radius,
        speed: speed_of(mover, cell),
        heading: passage.heading,
        blocked: if settings.give_up_after > 0.0 {
            (motion.headway.stalled / settings.give_up_after).clamp(0.0, 1.0)
        } else {
            1.0
        },
        still: if matches!(steering, Steering::Idle) {
            f32::INFINITY
        } else {
            motion.headway.still()
        },
        flags: Flags::LIVE
            .with(
                Flags::AVOIDS,
                settings.enabled && avoidance.enabled && !stands,
            )
            .with(Flags::PUSHING, motion.pushing_through())
            .with(Flags::IDLE, matches!(steering, Steering::Idle))
            .with(Flags::HELD_UP, passage.held_up())
            .with(Flags::NEAR_PASSAGE, passage.near)
            .with(Flags::CROSSING, passage.crossing())
            .with(
                Flags::NEAR_GOAL,
                near_goal(
                    steering,
                    position,
                    cell * f32::from(footprint.copied().unwrap_or_default().0),
                ),
            ),
        goal: steering.goal().unwrap_or(Vec2::NAN),
        group: group.map(|member| member.group),
    })
}

/// Whether a mover stands, or the end of its way (its route's last corner,
/// or its goal on instinct) is within [`NEAR_GOAL`] of its footprint's
/// sides (`side`, in world units).
fn near_goal(steering: &Steering, position: Vec2, side: f32) -> bool {
    let end = match steering {
        Steering::Idle => return true,
        Steering::Instinct { goal, .. } => Some(*goal),
        Steering::Following { route, goal, .. } => route.remaining().last().or(Some(*goal)),
    };
    end.is_some_and(|end| end.distance(position) < NEAR_GOAL * side)
}

/// `FrontierSystems::Avoidance`: each mover's velocity for this frame, the
/// closest to its preferred one that avoids its nearest neighbours and
/// the walls near it (ORCA). Agents are gathered by seat ([`Seats`]) and
/// decided in crowd rank, so the
/// result depends neither on the order the ECS stores them in nor on
/// their entity ids.
#[inline(never)] // named in profiles: one entry per crowd-step system
pub(crate) fn avoid(
    time: Res<Time>,
    settings: Res<CrowdSettings>,
    mut movers: Query<AgentQuery>,
    maps: MapsBesideUnits,
    passages: Res<Passages>,
    seats: Res<Seats>,
    mut crowd: ResMut<Crowd>,
) {
    let seconds = time.delta_secs();
    let settings = settings.clamped();
    let crowd = &mut *crowd;
    let threads = crate::budget::threads_for(settings.threads);
    let all_views = AllViews::new(&maps);
    crowd.by_seat.resize(seats.len(), Agent::ABSENT);
    let horizon = settings.time_horizon;
    let usable_time = seconds > 0.0 && horizon > 0.0 && horizon.is_finite();
    crowd.planned_this_frame = settings.enabled && usable_time;
    // The snapshot, the plans and the gaps in one dispatch, stage by
    // stage; on this thread alone for a small crowd.
    let team_size = team_threads(threads, seats.len());
    with_team(team_size, &AVOID_PACE, seats.len(), |team| {
        // Each mover as it stands at the frame's start, each chunk of
        // seats gathered alone.
        team.each_chunk_mut(&mut crowd.by_seat, SEAT_CHUNK, |first, chunk| {
            snapshot(
                first,
                chunk,
                seats.holders(),
                &movers,
                &all_views,
                &settings,
            );
        });
        crowd.rank(team);
        if crowd.planned_this_frame {
            let rankings = crowd.rankings;
            plan_crowd(
                crowd,
                &settings,
                &all_views,
                &passages,
                (seconds, team, threads),
                rankings,
            );
        } else {
            crowd.contacts.clear();
        }
    });
    // Each mover takes its velocity (in parallel), from its seat: until
    // avoidance decides, a unit walks as it prefers. (Over the movers'
    // tables: fetching each by its entity, seat by seat in the dispatch
    // above, costs some 240 instructions a mover more.)
    let crowd = &*crowd;
    each_mover!(movers, PARALLEL_MOVERS, |unit| take_velocity(crowd, unit));
}

/// One mover's velocity for the frame, from its seat's plan: the parallel
/// body of [`avoid`]'s write-back.
#[inline(never)] // named in profiles
fn take_velocity(crowd: &Crowd, unit: AgentQueryItem) {
    let AgentQueryItem {
        seat, mut motion, ..
    } = unit;
    let usable = |v: Vec2| if v.is_finite() { v } else { Vec2::ZERO };
    let planned = crowd.rank_of(seat).filter(|_| crowd.planned_this_frame);
    motion.planned = match planned {
        Some(i) if crowd.agents[i].avoids() => crowd.planned[i],
        _ => usable(motion.preferred),
    };
    motion.passage.queued = planned.is_some_and(|i| crowd.queued[i]);
    motion.headway.ahead = planned.map_or(f32::INFINITY, |i| crowd.ahead[i]);
}

/// The crowd's plans for the frame: each awake unit planned alone (ORCA),
/// the woken after, then the gaps kept between the pairs that may touch.
#[inline(never)] // a serial piece of the step (the plans merged), named in profiles
fn plan_crowd(
    crowd: &mut Crowd,
    settings: &CrowdSettings,
    all_views: &AllViews,
    passages: &Passages,
    (seconds, team, threads): (f32, &Team, usize),
    rankings: u64,
) {
    crowd.contacts.clear();
    let (widest, fastest) = crowd.widest_and_fastest();
    let horizon = settings.time_horizon;
    // Buckets a third of the way two units can close within the horizon
    // (at least a body wide): the nearest neighbours are found in a few
    // rings, in a dense crowd and a sparse one.
    crowd.index(
        (2.0 * widest).max((2.0 * widest + 2.0 * fastest * horizon) / 3.0),
        team,
    );
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
        keep_lists(crowd, bounds, rankings, team);
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
        horizons: orca::Horizons {
            neighbours: horizon,
            walls: WALL_HORIZON,
        },
    };
    let plans = plan_awake_then_woken(&planner, &crowd.grid, (team, threads));
    crowd.planned.clear();
    crowd
        .planned
        .extend(crowd.agents.iter().map(|a| a.preferred));
    crowd.queued.clear();
    crowd.queued.resize(crowd.agents.len(), false);
    crowd.ahead.clear();
    crowd.ahead.resize(crowd.agents.len(), f32::INFINITY);
    for chunk in plans {
        for (i, velocity, is_queued) in chunk.plans {
            if let Some(velocity) = velocity {
                crowd.planned[i] = velocity;
            }
            crowd.queued[i] = is_queued;
        }
        for (i, ahead) in chunk.ahead {
            crowd.ahead[i] = ahead;
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
        (team, threads),
    );
}

/// The view of every map an agent is on.
#[inline(never)] // a serial piece of the step, named in profiles
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
#[inline(never)] // a serial piece of the step, named in profiles
fn plan_awake_then_woken(
    planner: &Planner,
    grid: &SpatialGrid,
    (team, threads): (&Team, usize),
) -> Vec<UnitPlans> {
    let agents = planner.agents;
    let awake: Vec<usize> = grid
        .in_bucket_order()
        .map(|i| i as usize)
        .filter(|&i| !agents[i].asleep())
        .collect();
    let mut plans = planner.plan_all(&awake, (team, threads));
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
    plans.extend(planner.plan_all(&woken, (team, threads)));
    plans
}

/// Keeps the neighbour lists: rebuilt, each unit's alone (in parallel),
/// when the live movers changed (one joined or left), or one moved more than half the skin since
/// they were built; only awake units get one (the others ask the grid if
/// woken).
#[inline(never)] // a serial piece of the step, named in profiles
fn keep_lists(crowd: &mut Crowd, bounds: Bounds, rankings: u64, team: &Team) {
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
    team.each_chunk_mut(lists, SEAT_CHUNK, |first, chunk| {
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
        if me.live() && !me.asleep() {
            let skip = (first + k) as u32;
            list.build(grid, me.position, bounds.query(me), (skin, skip));
        }
    }
}

/// `pairs` (of indices below `count`) in order and without repeats, as
/// `sort_unstable` and `dedup` leave them, in time linear in the pairs and
/// `count`: a counting sort by the first index, then each unit's few pairs
/// by the second. (A frame's contacts, each found from both sides, were
/// the step's largest sort.)
#[inline(never)] // a serial piece of the step, named in profiles
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

#[cfg(test)]
mod tests;
