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

mod route;

use bevy::ecs::intern::Interned;
use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;

pub use route::{Route, SharedWaypoints};

use crate::core::Cell;
use crate::maps::{MapView, Maps};
use crate::pathfinding::{Footprint, PathRequest, PathResult, PathTarget, PathfindingPlugin};
use crate::schedule::FrontierSystems;

/// The maps, as the movement systems read them beside the units'
/// transforms.
type MapsBesideUnits<'w, 's> = Maps<'w, 's, Without<Mover>>;

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

/// On a [`Mover`] that reached the end of its path.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Reflect)]
#[reflect(Component)]
pub struct Arrived;

/// A [`Mover`] reached the end of its path. Triggered as an observer event
/// and written as a message.
#[derive(EntityEvent, Message, Clone, Copy, Debug, PartialEq)]
pub struct UnitArrived {
    /// The unit.
    pub entity: Entity,
}

/// Moves [`Mover`]s: instinct while the search runs, path following,
/// re-planning and arrival.
///
/// # Systems
/// In [`FrontierSystems::Steering`], chained: `begin_orders` (new requests
/// start instinct at once), `adopt_paths` (new results are joined at the
/// furthest visible waypoint), `replan_cut_paths` (paths a map change cut
/// are asked for again) and `steer` (moves units by `speed × delta time`).
/// An observer stops a unit whose `PathRequest` is removed.
pub struct MovementPlugin {
    /// The schedule to run in; the one `PathfindingPlugin` runs in.
    pub schedule: Interned<dyn ScheduleLabel>,
}

impl MovementPlugin {
    /// The plugin, running in `schedule`.
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
        }
    }
}

impl Default for MovementPlugin {
    fn default() -> Self {
        Self::new(Update)
    }
}

impl Plugin for MovementPlugin {
    fn build(&self, app: &mut App) {
        if !app.is_plugin_added::<PathfindingPlugin>() {
            app.add_plugins(PathfindingPlugin {
                schedule: self.schedule,
            });
        }
        app.register_type::<Mover>()
            .register_type::<Steering>()
            .register_type::<Arrived>()
            .add_message::<UnitArrived>()
            .add_systems(
                self.schedule,
                (begin_orders, adopt_paths, replan_cut_paths, steer)
                    .chain()
                    .in_set(FrontierSystems::Steering),
            )
            .add_observer(stop_on_cancel);
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
    maps: MapsBesideUnits,
) {
    for (unit, request, mut steering) in &mut orders {
        commands.entity(unit).remove::<Arrived>();
        let goal = maps
            .find(request.map)
            .ok()
            .and_then(|(map, view)| Some((goal_position(request, &view)?, map)));
        *steering = match goal {
            Some((goal, map)) => Steering::Instinct { goal, map },
            None => Steering::Idle,
        };
    }
}

/// A unit whose order is taken away (its `PathRequest` removed) stops where
/// it is. A group that takes a unit into its move removes the request and
/// then sets the unit's steering, so that is not undone.
fn stop_on_cancel(
    cancelled: On<Remove, PathRequest>,
    mut units: Query<&mut Steering, With<Mover>>,
) {
    if let Ok(mut steering) = units.get_mut(cancelled.entity) {
        *steering = Steering::Idle;
    }
}

#[allow(clippy::type_complexity)]
fn adopt_paths(
    mut units: Query<
        (&Transform, &mut PathRequest, &PathResult, &mut Steering),
        (With<Mover>, Changed<PathResult>),
    >,
    maps: MapsBesideUnits,
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
        let Some(view) = result.map.and_then(|map| maps.get(map)) else {
            continue;
        };
        let view = view.for_size(result.size);
        let here = transform.translation.truncate();
        let Some(cell) = view.cell_at(here) else {
            continue;
        };
        match join_path(&view, here, cell, &result.cells) {
            Some(waypoints) => {
                let route = Route::new(waypoints);
                *steering = Steering::Following { route, goal, map };
            }
            // Nothing in sight (instinct took the unit round a corner, or
            // the request named a start elsewhere): plan again from here.
            None => {
                request.start = None;
                request.set_changed();
            }
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
    let class = view.class();
    let in_wall = !class.is_walkable(cell);
    let join = (0..cells.len())
        .rev()
        .find(|&i| in_wall && i == 0 || class.line_of_sight(cell, cells[i]))?;
    let mut waypoints = smooth(view, &cells[join..]);
    // The waypoint is in sight of the unit's cell centre; from where the
    // unit stands, near the cell's edge, the way may clip a corner: then
    // step to the centre first.
    if !in_wall
        && waypoints
            .first()
            .is_some_and(|&first| !view.segment_clear(here, first))
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
        while next + 1 < cells.len() && view.class().line_of_sight(cells[at], cells[next + 1]) {
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

/// Movers as `steer` moves them.
type SteeredUnits<'w, 's> = Query<
    'w,
    's,
    (
        Entity,
        &'static Mover,
        Option<&'static mut PathRequest>,
        &'static mut Transform,
        &'static mut Steering,
        Option<&'static Footprint>,
    ),
>;

fn steer(
    time: Res<Time>,
    mut commands: Commands,
    mut units: SteeredUnits,
    maps: MapsBesideUnits,
    mut arrivals: MessageWriter<UnitArrived>,
) {
    let seconds = time.delta_secs();
    for (unit, mover, request, mut transform, mut steering, footprint) in &mut units {
        let Some(view) = steering
            .map()
            .and_then(|map| maps.get(map))
            .filter(MapView::is_valid)
        else {
            continue;
        };
        let view = view.for_size(footprint.map_or(1, |f| f.0));
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
                    let walked = view.walk_straight(&mut position, target, budget);
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
                        // A route without an order of its own (a group
                        // member's) gets one, to the same end.
                        None => {
                            commands
                                .entity(unit)
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
            commands.entity(unit).insert(Arrived);
            let event = UnitArrived { entity: unit };
            arrivals.write(event);
            commands.trigger(event);
        }
    }
}

/// Walks up to `distance` straight at `goal`, in small steps, each allowed
/// only onto walkable cells and never across a wall's corner; a blocked step
/// slides along the wall (keeps only its x or its y part), and a unit that
/// can do neither stops where it is.
fn walk_instinct(view: &MapView, position: &mut Vec2, goal: Vec2, distance: f32) {
    let mut left = distance.min(position.distance(goal));
    let step_length = view.substep();
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
            .find(|&m| view.can_move(*position, *position + m));
        match moved {
            Some(m) => {
                *position += m;
                left -= step;
            }
            None => return,
        }
    }
}
