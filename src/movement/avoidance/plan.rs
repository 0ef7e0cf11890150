//! Planning one unit's velocity (stage 4): its neighbours, whether any
//! is in its way, the walls near it, its keeping right, and ORCA's answer
//! (`orca.rs`).

use bevy::platform::collections::HashMap;
use bevy::prelude::*;

use super::neighbours::Reach;
use super::neighbours::{NeighbourLists, SpatialGrid};
use super::orca::{Horizons, Neighbour, Scratch, Wall, avoiding_velocity};
use super::priority::{Agent, parting_direction, priority, responsibility};
use crate::core::{Cell, UnitKind};
use crate::maps::MapView;
use crate::movement::parallel::Team;
use crate::movement::passage::{InQueue, Passages, queued_behind};
use crate::movement::tuning::{
    CONTACT_MARGIN, KEEP_RIGHT, KEEP_RIGHT_ASIDE, KEEP_RIGHT_BLOCKED, KEEP_RIGHT_LANES, OPEN_AHEAD,
    PLAN_CHUNK, SAME_WAY, STILL_AHEAD_REACH, WALL_HORIZON,
};

/// What bounds a unit's neighbours: the crowd's widest body and fastest
/// speed, the horizon and the frame.
#[derive(Clone, Copy)]
pub(super) struct Bounds {
    pub(super) widest: f32,
    pub(super) fastest: f32,
    pub(super) horizon: f32,
    pub(super) seconds: f32,
    pub(super) count: usize,
}

impl Bounds {
    /// `me`'s neighbours: no pair further apart than `range` can meet
    /// within the horizon; every unit within `near` may touch it this
    /// frame, however many.
    pub(super) fn query(&self, me: &Agent) -> Reach {
        Reach {
            range: me.radius + self.widest + (me.speed + self.fastest) * self.horizon,
            count: self.count,
            near: 1.1 * (me.radius + self.widest + (me.speed + self.fastest) * self.seconds),
        }
    }
}

/// Everything planning a unit reads: the frame's agents as they stood, and
/// the settings.
pub(super) struct Planner<'a> {
    pub(super) agents: &'a [Agent],
    /// The agents' positions.
    pub(super) positions: &'a [Vec2],
    pub(super) passages: &'a Passages,
    pub(super) grid: &'a SpatialGrid,
    /// The neighbour lists, where they hold (one map: no unit turns down
    /// another as a neighbour).
    pub(super) lists: Option<&'a NeighbourLists>,
    pub(super) views: &'a HashMap<Entity, MapView<'a>>,
    pub(super) one_map: bool,
    pub(super) widest: f32,
    pub(super) fastest: f32,
    pub(super) horizon: f32,
    pub(super) seconds: f32,
    pub(super) max_neighbours: usize,
    pub(super) horizons: Horizons,
}

/// What planning some units gave.
#[derive(Default)]
pub(super) struct UnitPlans {
    /// Each unit's velocity (`None`: as it prefers) and whether it is
    /// queued.
    pub(super) plans: Vec<(usize, Option<Vec2>, bool)>,
    /// Pairs that may touch this frame.
    pub(super) contacts: Vec<(u32, u32)>,
    /// Units at rest that a planned unit is coming at.
    pub(super) wakes: Vec<u32>,
    /// Units with someone moving in front of them, and the seconds since
    /// the crowd in front of them last gained ground ([`still_ahead`]).
    pub(super) ahead: Vec<(usize, f32)>,
}

/// A planning task's own buffers.
#[derive(Default)]
struct PlanBuffers {
    found: Vec<(f32, u32)>,
    neighbours: Vec<Neighbour>,
    walls: Vec<Wall>,
    orca: Scratch,
}

impl Planner<'_> {
    /// Plans `units` on `team`'s threads, in blocks of at least
    /// [`PLAN_CHUNK`] (a few for each of the `threads`): the blocks' plans
    /// in the units' order, the same however they are split.
    pub(super) fn plan_all(
        &self,
        units: &[usize],
        (team, threads): (&Team, usize),
    ) -> Vec<UnitPlans> {
        let chunk = units.len().div_ceil(4 * threads.max(1)).max(PLAN_CHUNK);
        team.map_chunks(units, chunk, |part| self.plan_part(part))
    }

    /// UnitPlans one task's `units`.
    #[inline(never)] // a parallel body of its own in profiles
    fn plan_part(&self, units: &[usize]) -> UnitPlans {
        let mut scratch = PlanBuffers::default();
        let mut out = UnitPlans::default();
        for &i in units {
            self.plan(i, &mut scratch, &mut out);
        }
        out
    }

    /// UnitPlans unit `i`: its velocity for the frame, the closest to the one
    /// it would like that avoids its nearest neighbours and the walls near
    /// it (ORCA), asked only when one of them is in its way.
    fn plan(&self, i: usize, scratch: &mut PlanBuffers, out: &mut UnitPlans) {
        let me = self.agents[i];
        self.neighbours(i, &mut scratch.found);
        if scratch.found.is_empty() {
            return;
        }
        if !me.idle() {
            let others = scratch
                .found
                .iter()
                .map(|&(d, j)| (d, &self.agents[j as usize]));
            let ahead = still_ahead(&me, others, self.seconds);
            if ahead.is_finite() {
                out.ahead.push((i, ahead));
            }
        }
        let threatened = self.threats(i, &scratch.found, out);
        // One that does not avoid still wakes those in its way and has its
        // contacts kept, but plans nothing itself.
        if !me.avoids() {
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
    fn threats(&self, i: usize, found: &[(f32, u32)], out: &mut UnitPlans) -> bool {
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
            if distance < CONTACT_MARGIN * close {
                out.contacts.push(((i as u32).min(j), (i as u32).max(j)));
            }
        }
        threatened
    }

    /// Whether `me` is queued behind a unit held up at a passage, among
    /// its neighbours `found` ([`queued_behind`], the passages' rule).
    fn queued(&self, me: &Agent, found: &[(f32, u32)]) -> bool {
        let in_queue = |agent: &Agent| InQueue {
            position: agent.position,
            heading: agent.heading,
            radius: agent.radius,
            held_up: agent.held_up(),
        };
        let others = found
            .iter()
            .map(|&(distance, j)| (distance, in_queue(&self.agents[j as usize])));
        queued_behind(in_queue(me), others)
    }

    /// `me`'s velocity by ORCA, from its neighbours in `scratch.found` and
    /// the walls near it.
    fn solve(&self, me: &Agent, scratch: &mut PlanBuffers) -> Vec2 {
        scratch.neighbours.clear();
        for &(distance, j) in &scratch.found {
            let other = &self.agents[j as usize];
            scratch
                .neighbours
                .push(self.as_obstacle(me, other, distance));
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
        let body = Neighbour {
            position: me.position,
            velocity: me.velocity,
            radius: me.radius,
            responsibility: responsibility(me),
        };
        avoiding_velocity(
            &body,
            &scratch.neighbours,
            &scratch.walls,
            preferred,
            me.speed,
            self.seconds,
            self.horizons,
            &mut scratch.orca,
        )
    }

    /// `other`, `distance` from `me`, as ORCA's neighbour of `me`.
    fn as_obstacle(&self, me: &Agent, other: &Agent, distance: f32) -> Neighbour {
        let mut position = other.position;
        if distance < 1e-4 {
            // Two units on one spot: ORCA cannot tell which way to part
            // them. Part them along a direction fixed by their places in
            // the crowd, so the same inputs give the same positions.
            position = me.position + parting_direction(me.rank, other.rank) * 1e-3;
        }
        Neighbour {
            position,
            velocity: seen(me, other),
            radius: other.radius,
            responsibility: priority(other, me).avoids,
        }
    }

    /// The wall edges near `me` as ORCA's obstacles into `walls`. A
    /// passage it has no claim on is a wall to it: one ahead, and one
    /// beside it (a unit coming out, pressed by those about to go in, must
    /// not be planned back into it, where it may not step, and so stand
    /// still).
    fn walls(&self, me: &Agent, view: &MapView, walls: &mut Vec<Wall>) {
        let reach = me.radius + me.speed * WALL_HORIZON;
        let by_passage = !me.crossing()
            && me.map.is_some_and(|map| {
                me.near_passage() || self.passages.beside(map, view, me.position, 2)
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

/// Seconds since the crowd in front of `me` last gained ground: the least
/// of [`Agent::still`] (last frame's, one frame older now) among the
/// moving units touching it (nearly) ahead, along the way it would like
/// to go; infinite with none. Passed back one unit a frame, it tells a
/// unit in a slow crowd that the front moves on; in a deadlock, where
/// nobody gains ground, it grows as every unit's own count does.
fn still_ahead<'a>(
    me: &Agent,
    others: impl Iterator<Item = (f32, &'a Agent)>,
    seconds: f32,
) -> f32 {
    let heading = me.preferred.normalize_or_zero();
    if heading == Vec2::ZERO {
        return f32::INFINITY;
    }
    let mut least = f32::INFINITY;
    for (distance, other) in others {
        let touching = distance <= STILL_AHEAD_REACH * (me.radius + other.radius);
        if touching && (other.position - me.position).dot(heading) > 0.0 {
            least = least.min(other.still + seconds);
        }
    }
    least
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
    out: &mut Vec<Wall>,
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
                out.push([view.grid_to_world(a), view.grid_to_world(b)]);
            }
        }
    }
}

/// `v` turned clockwise by `angle` radians (at most about 1.5): the sine
/// and cosine from their Taylor series, in multiplications and additions
/// only, which give the same bits on every machine (a platform's `sin` and
/// `cos` may differ in the last bit, and a lockstep game would part
/// there). Off by less than 3e-7 up to 1.2 radians.
pub(super) fn turned_right(v: Vec2, angle: f32) -> Vec2 {
    let a2 = angle * angle;
    let sin = angle * (1.0 - a2 / 6.0 * (1.0 - a2 / 20.0 * (1.0 - a2 / 42.0 * (1.0 - a2 / 72.0))));
    let cos = 1.0
        - a2 / 2.0 * (1.0 - a2 / 12.0 * (1.0 - a2 / 30.0 * (1.0 - a2 / 56.0 * (1.0 - a2 / 90.0))));
    Vec2::new(cos, -sin).rotate(v)
}

/// `me`'s preferred velocity, turned to its right when another unit stands
/// or comes in its way within the horizon. ORCA alone lets two units that
/// meet exactly head-on (or one walking straight at a standing one) only
/// slow down and push; turning right, each to its own side, they pass, the
/// same way every run. Far from the end of its way and away from a
/// passage, a unit turns well to its right ([`KEEP_RIGHT_LANES`]) of
/// anyone moving within [`KEEP_RIGHT_ASIDE`] bodies of its way, where the ground
/// that way is open for [`OPEN_AHEAD`] cells, so that streams meeting
/// head-on part into lanes early (Helbing and Molnar's lane formation);
/// a little ([`KEEP_RIGHT`]) otherwise: of one standing, one going its
/// own way (it follows that one), and anyone when near the end of
/// its way (not to circle a goal others crowd) or at a passage (where the
/// turns keep order).
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
    let lanes = !me.near_goal() && !me.near_passage() && !me.crossing() && !me.held_up();
    // Someone in the way, and whether to part from one of them into lanes.
    let (mut in_the_way, mut parting) = (false, false);
    for other in others {
        let offset = other.position - me.position;
        let ahead = offset.dot(heading);
        let aside = heading.perp_dot(offset).abs();
        let closing = (me.preferred - other.velocity).dot(heading) > 0.0;
        let radii = me.radius + other.radius;
        if !(closing && ahead > 0.0 && ahead <= reach + radii) {
            continue;
        }
        in_the_way |= aside < radii;
        // Not one standing (at rest, or making way), nor one it follows.
        let moving = !other.idle() && other.velocity.length() > 0.0;
        parting |=
            lanes && moving && aside < KEEP_RIGHT_ASIDE * radii && !follows(me, other, heading);
        if parting {
            break;
        }
    }
    if !(in_the_way || parting) {
        return me.preferred;
    }
    // Not into a wall: ORCA would then hold the unit against it.
    let clear = |turned: Vec2, cells: f32| {
        view.is_none_or(|view| {
            let cell = view.layout.cell_size.abs().min_element();
            // `can_move` checks the cells and the corners it crosses.
            view.can_move(
                me.position,
                me.position + turned / speed * (me.radius + cells * cell),
            )
        })
    };
    // The longer a unit is blocked, the more it turns: in a jam where
    // everyone keeps right, that sets the crowd turning round, which
    // unlocks it.
    let turn = |least: f32| {
        let angle = least + (KEEP_RIGHT_BLOCKED - least).max(0.0) * me.blocked;
        turned_right(me.preferred, angle)
    };
    if parting {
        let turned = turn(KEEP_RIGHT_LANES);
        if clear(turned, OPEN_AHEAD) {
            return turned;
        }
    }
    let turned = turn(KEEP_RIGHT);
    // One step of about a cell.
    if clear(turned, 0.5) {
        turned
    } else {
        me.preferred
    }
}

/// Whether `me` passes `other` with the small turn however far it is from
/// its goal, rather than parting from it into lanes: `other` walks `me`'s
/// way at more than [`SAME_WAY`] of its speed (`me` follows it), is of
/// another movement class (lanes form in a stream of one kind: a boat
/// and a hovercraft, or infantry and a hovercraft, cross as they meet),
/// is bound for the same point (units ordered one by one to one place),
/// or is in `me`'s group, which keeps its shape: unless `me` is held up
/// (stalled at all: the group is in a jam, and its members flow round
/// each other) and `other` is not yet settling into its slot.
/// `heading` is `me`'s preferred direction.
pub(super) fn follows(me: &Agent, other: &Agent, heading: Vec2) -> bool {
    let same_way = other.velocity.dot(heading) > SAME_WAY * other.speed;
    let formation =
        me.group.is_some() && me.group == other.group && (me.blocked <= 0.0 || other.near_goal());
    same_way || other.class != me.class || other.goal == me.goal || formation
}
