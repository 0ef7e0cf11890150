//! Units that move at once: instinct steering while the search runs, then
//! path following.
//!
//! The frame a [`PathRequest`] lands on a [`Mover`], the unit starts walking
//! straight at the goal, sliding along walls (the seed articles' principle
//! of immediate start). When its [`PathResult`] arrives it joins the path at
//! the furthest waypoint it can see from where it now stands, so it never
//! walks back to where the order was given, and follows the path with
//! straight segments between waypoints that see each other. A path cut by a
//! map change is planned again while the unit carries on by instinct.

use std::sync::Arc;

use bevy::ecs::intern::Interned;
use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;

use crate::grid::Cell;
use crate::group::{self, GroupMember, GroupMove, GroupScratch};
use crate::layout::{CellLookup, MapView};
use crate::plugin::PathfindingSystems;
use crate::request::{PathRequest, PathResult, PathTarget};
use crate::scheduler::{self, MapData, map_view, pick_map};

/// A unit that walks: put it with a `Transform` and give it
/// [`PathRequest`]s.
#[derive(Component, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Component)]
#[require(Transform, Steering)]
pub struct Mover {
    /// World units per second.
    pub speed: f32,
}

/// What a [`Mover`] is doing.
#[derive(Component, Clone, Debug, Default, PartialEq, Reflect)]
#[reflect(Component)]
pub enum Steering {
    /// Standing.
    #[default]
    Idle,
    /// Walking straight at `goal` (sliding along walls) until a path comes.
    Instinct {
        /// Where the order points, in world space.
        goal: Vec2,
        /// The map the unit walks on.
        map: Entity,
    },
    /// Following a path.
    Following {
        /// The corners still to walk to.
        route: Route,
        /// Where the order points.
        goal: Vec2,
        /// The map the unit walks on.
        map: Entity,
    },
}

impl Steering {
    /// The map a moving unit walks on.
    pub fn map(&self) -> Option<Entity> {
        match self {
            Steering::Idle => None,
            Steering::Instinct { map, .. } | Steering::Following { map, .. } => Some(*map),
        }
    }

    /// Where a moving unit is going.
    pub fn goal(&self) -> Option<Vec2> {
        match self {
            Steering::Idle => None,
            Steering::Instinct { goal, .. } | Steering::Following { goal, .. } => Some(*goal),
        }
    }
}

/// The corners a [`Mover`] still has to walk to, in world space: its own
/// waypoints, then (in a group move) a stretch shared with the rest of the
/// group, stored once and reference-counted, then its own again.
#[derive(Clone, Debug, Default, PartialEq, Reflect)]
#[reflect(opaque, Clone, Debug, Default, PartialEq)]
pub struct Route {
    head: Vec<Vec2>,
    shared: SharedWaypoints,
    tail: Vec<Vec2>,
    next: usize,
}

/// A stretch of waypoints shared by a group's units.
pub type SharedWaypoints = Arc<[Vec2]>;

impl Route {
    /// A route through `waypoints`, all the unit's own.
    pub fn new(waypoints: Vec<Vec2>) -> Self {
        Self {
            head: waypoints,
            ..default()
        }
    }

    /// A route through `head`, then the `shared` stretch, then `tail`.
    pub fn spliced(head: Vec<Vec2>, shared: SharedWaypoints, tail: Vec<Vec2>) -> Self {
        Self {
            head,
            shared,
            tail,
            next: 0,
        }
    }

    fn get(&self, index: usize) -> Option<Vec2> {
        let (head, shared) = (self.head.len(), self.shared.len());
        if index < head {
            Some(self.head[index])
        } else if index < head + shared {
            Some(self.shared[index - head])
        } else {
            self.tail.get(index - head - shared).copied()
        }
    }

    /// The corner walked to now.
    pub fn next_waypoint(&self) -> Option<Vec2> {
        self.get(self.next)
    }

    /// The corners still to walk to, in order.
    pub fn remaining(&self) -> impl Iterator<Item = Vec2> + '_ {
        (self.next..self.head.len() + self.shared.len() + self.tail.len())
            .filter_map(|i| self.get(i))
    }

    /// Corners still to walk to.
    pub fn len(&self) -> usize {
        (self.head.len() + self.shared.len() + self.tail.len()).saturating_sub(self.next)
    }

    /// Whether the route is walked.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The shared stretch, if the route has one (empty for a unit's own
    /// path). Units of one group hold the same allocation.
    pub fn shared(&self) -> Option<&SharedWaypoints> {
        (!self.shared.is_empty()).then_some(&self.shared)
    }

    /// The same route, starting `count` corners in.
    pub(crate) fn skipping(mut self, count: usize) -> Self {
        self.next = count;
        self
    }

    fn advance(&mut self) {
        self.next += 1;
    }
}

/// On a [`Mover`] that reached the end of its path.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Reflect)]
#[reflect(Component)]
pub struct Arrived;

/// Triggered on a [`Mover`] when it reaches the end of its path.
#[derive(EntityEvent, Clone, Copy, Debug, PartialEq)]
pub struct UnitArrived {
    /// The unit.
    pub entity: Entity,
}

/// Moves [`Mover`]s: instinct, path following, re-planning, and
/// [`GroupMove`]s (see [`crate::group`]).
///
/// # Systems
/// In [`PathfindingSystems::First`]: `retire_groups` (despawns group
/// entities no unit is left in) and `start_group_moves` (reads
/// [`GroupMove`] messages). In [`PathfindingSystems::Search`], before the
/// plugin's searches: `splice_groups` (runs the groups' floods on the frame's
/// budget and gives members their routes). In the plugin's schedule, after
/// [`PathfindingSystems::Last`]:
/// `begin_orders` (new requests start instinct at once), `adopt_paths` (new
/// results are joined at the furthest visible waypoint), `replan_cut_paths`
/// (paths a map change cut are asked for again) and `steer` (moves units by
/// `speed × delta time`).
pub struct MovementPlugin {
    /// The schedule to run in; the one `PathfindingPlugin` runs in.
    pub schedule: Interned<dyn ScheduleLabel>,
}

impl Default for MovementPlugin {
    fn default() -> Self {
        Self {
            schedule: Update.intern(),
        }
    }
}

impl Plugin for MovementPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<Mover>()
            .register_type::<Steering>()
            .register_type::<Arrived>()
            .register_type::<GroupMember>()
            .add_message::<GroupMove>()
            .init_resource::<GroupScratch>()
            .add_systems(
                self.schedule,
                (
                    (group::retire_groups, group::start_group_moves)
                        .chain()
                        .in_set(PathfindingSystems::First),
                    group::splice_groups
                        .in_set(PathfindingSystems::Search)
                        .before(scheduler::run_searches),
                    (begin_orders, adopt_paths, replan_cut_paths, steer)
                        .chain()
                        .after(PathfindingSystems::Last),
                ),
            );
    }
}

/// The world position a request points at.
fn goal_position(request: &PathRequest, view: &MapView) -> Option<Vec2> {
    match request.goal {
        PathTarget::World(position) => position.is_finite().then_some(position),
        PathTarget::Cell(cell) => view.grid.in_bounds(cell).then(|| view.cell_to_world(cell)),
    }
}

#[allow(clippy::type_complexity)]
fn begin_orders(
    mut commands: Commands,
    mut orders: Query<(Entity, &PathRequest, &mut Steering), (With<Mover>, Changed<PathRequest>)>,
    maps: Query<MapData, Without<Mover>>,
) {
    for (unit, request, mut steering) in &mut orders {
        // A unit's own order takes it out of any group move.
        commands.entity(unit).remove::<(Arrived, GroupMember)>();
        let goal = pick_map(request, &maps)
            .ok()
            .and_then(|(map, view)| Some((goal_position(request, &view)?, map)));
        *steering = match goal {
            Some((goal, map)) => Steering::Instinct { goal, map },
            None => Steering::Idle,
        };
    }
}

pub(crate) fn cell_of(view: &MapView, position: Vec2) -> Option<Cell> {
    match view.world_to_cell(position) {
        CellLookup::Inside(cell) => Some(cell),
        _ => None,
    }
}

#[allow(clippy::type_complexity)]
fn adopt_paths(
    mut units: Query<
        (&Transform, &mut PathRequest, &PathResult, &mut Steering),
        (With<Mover>, Changed<PathResult>),
    >,
    maps: Query<MapData, Without<Mover>>,
) {
    for (transform, mut request, result, mut steering) in &mut units {
        // Only a unit waiting for its path takes it.
        let Steering::Instinct { goal, map } = *steering else {
            continue;
        };
        if !result.status.has_path() {
            *steering = Steering::Idle;
            continue;
        }
        let Some(view) = result.map.and_then(|map| map_view(&maps, map)) else {
            continue;
        };
        let here = transform.translation.truncate();
        let Some(cell) = cell_of(&view, here) else {
            continue;
        };
        match join_path(&view, here, cell, &result.cells) {
            Some(waypoints) => {
                let route = Route::new(waypoints);
                *steering = Steering::Following { route, goal, map };
            }
            // Nothing in sight (instinct took the unit round a corner):
            // plan again from here.
            None => request.set_changed(),
        }
    }
}

/// How a unit standing at `here`, in `cell`, joins the path through
/// `cells`: string-pulled waypoints from the furthest cell it can see, so
/// it never walks back to where the order was given. `None` when it sees
/// none. A unit a wall went up under starts at the path's first cell, the
/// walkable cell nearest to it.
pub(crate) fn join_path(
    view: &MapView,
    here: Vec2,
    cell: Cell,
    cells: &[Cell],
) -> Option<Vec<Vec2>> {
    let in_wall = !view.grid.is_walkable(cell);
    let join = (0..cells.len())
        .rev()
        .find(|&i| in_wall && i == 0 || view.grid.line_of_sight(cell, cells[i]))?;
    let mut waypoints = smooth(view, &cells[join..]);
    // The waypoint is in sight of the unit's cell centre; from where the
    // unit stands, near the cell's edge, the way may clip a corner: then
    // step to the centre first.
    if !in_wall
        && waypoints
            .first()
            .is_some_and(|&first| !segment_clear(view, here, first))
    {
        waypoints.insert(0, view.cell_to_world(cell));
    }
    Some(waypoints)
}

/// String pulling: from each kept waypoint, the furthest later one in
/// sight, so open ground is crossed in straight lines, not 45° zig-zags.
pub(crate) fn smooth(view: &MapView, cells: &[Cell]) -> Vec<Vec2> {
    let mut kept = Vec::new();
    let mut at = 0;
    while at < cells.len() {
        kept.push(view.cell_to_world(cells[at]));
        let mut next = at + 1;
        while next + 1 < cells.len() && view.grid.line_of_sight(cells[at], cells[next + 1]) {
            next += 1;
        }
        at = next;
    }
    kept
}

fn replan_cut_paths(mut units: Query<(&PathResult, &mut PathRequest, &mut Steering), With<Mover>>) {
    for (result, mut request, mut steering) in &mut units {
        if let (true, Steering::Following { goal, map, .. }) = (result.invalidated, &*steering) {
            let (goal, map) = (*goal, *map);
            request.set_changed();
            *steering = Steering::Instinct { goal, map };
        }
    }
}

/// Longest step taken at once, in cells: short enough never to jump over a
/// wall cell or past a corner unchecked.
const MAX_SUBSTEP: f32 = 0.25;

/// [`MAX_SUBSTEP`] in world units on this map.
fn substep(view: &MapView) -> f32 {
    MAX_SUBSTEP * view.layout.cell_size.min_element().abs().max(f32::EPSILON)
}

fn steer(
    time: Res<Time>,
    mut commands: Commands,
    mut units: Query<(
        Entity,
        &Mover,
        Option<&mut PathRequest>,
        &mut Transform,
        &mut Steering,
    )>,
    maps: Query<MapData, Without<Mover>>,
) {
    let seconds = time.delta_secs();
    for (unit, mover, request, mut transform, mut steering) in &mut units {
        let Some(view) = steering.map().and_then(|map| map_view(&maps, map)) else {
            continue;
        };
        let mut budget = (mover.speed * seconds).max(0.0);
        if !budget.is_finite() {
            continue;
        }
        let mut position = transform.translation.truncate();
        let arrived = match &mut *steering {
            Steering::Idle => false,
            Steering::Instinct { goal, .. } => {
                walk_instinct(&view, &mut position, *goal, budget);
                false
            }
            Steering::Following { route, goal, map } => {
                let mut blocked = false;
                while budget > 0.0 && !blocked {
                    let Some(target) = route.next_waypoint() else {
                        break;
                    };
                    let walked = walk_straight(&view, &mut position, target, budget);
                    budget -= walked;
                    if position == target {
                        route.advance();
                    } else if budget > 0.0 {
                        blocked = true;
                    }
                }
                if blocked {
                    // A wall went up on the path: walk on instinct while a
                    // new path is found.
                    let (goal, map) = (*goal, *map);
                    *steering = Steering::Instinct { goal, map };
                    match request {
                        Some(mut request) => request.set_changed(),
                        // A group member leaves the group with an order of
                        // its own to its end slot.
                        None => {
                            commands
                                .entity(unit)
                                .remove::<GroupMember>()
                                .insert(PathRequest::new(goal).on_map(map));
                        }
                    }
                    false
                } else {
                    route.is_empty()
                }
            }
        };
        transform.translation = position.extend(transform.translation.z);
        if arrived {
            *steering = Steering::Idle;
            commands
                .entity(unit)
                .remove::<GroupMember>()
                .insert(Arrived);
            commands.trigger(UnitArrived { entity: unit });
        }
    }
}

/// Walks up to `distance` straight at `goal`, in small steps, each allowed
/// only onto walkable cells and never across a wall's corner; a blocked step
/// slides along the wall (keeps only its x or its y part), and a unit that
/// can do neither stops where it is.
fn walk_instinct(view: &MapView, position: &mut Vec2, goal: Vec2, distance: f32) {
    let mut left = distance.min(position.distance(goal));
    let step_length = substep(view);
    while left > 1e-6 {
        let step = left.min(step_length);
        let direction = (goal - *position).normalize_or_zero();
        if direction == Vec2::ZERO {
            return;
        }
        let wanted = direction * step;
        let moved = [wanted, Vec2::new(wanted.x, 0.0), Vec2::new(0.0, wanted.y)]
            .into_iter()
            .filter(|m| m.length_squared() > 1e-12)
            .find(|&m| can_move(view, *position, *position + m));
        match moved {
            Some(m) => {
                *position += m;
                left -= step;
            }
            None => return,
        }
    }
}

/// Walks at most `distance` straight toward `target` in small checked steps;
/// stops early at a wall or a wall's corner. Returns the distance walked.
fn walk_straight(view: &MapView, position: &mut Vec2, target: Vec2, distance: f32) -> f32 {
    let step_length = substep(view);
    let mut walked = 0.0;
    while walked < distance {
        let left = position.distance(target);
        if left <= 1e-6 {
            *position = target;
            break;
        }
        let step = (distance - walked).min(step_length).min(left);
        let next = if step == left {
            target
        } else {
            *position + (target - *position) / left * step
        };
        if !can_move(view, *position, next) {
            break;
        }
        *position = next;
        walked += step;
    }
    walked
}

/// Whether a unit can walk the straight segment from `from` to `to`.
pub(crate) fn segment_clear(view: &MapView, from: Vec2, to: Vec2) -> bool {
    let mut probe = from;
    walk_straight(view, &mut probe, to, f32::MAX);
    probe == to
}

/// Whether a short move from `from` to `to` stays on walkable cells without
/// cutting a corner.
fn can_move(view: &MapView, from: Vec2, to: Vec2) -> bool {
    let (Some(a), Some(b)) = (cell_of(view, from), cell_of(view, to)) else {
        return false;
    };
    // Within one cell nothing is crossed; this also lets a unit a wall went
    // up under walk out of it.
    if a == b {
        return true;
    }
    if !view.grid.is_walkable(b) {
        return false;
    }
    if a.x != b.x && a.y != b.y {
        return view.grid.is_walkable(Cell::new(a.x, b.y))
            && view.grid.is_walkable(Cell::new(b.x, a.y));
    }
    true
}
