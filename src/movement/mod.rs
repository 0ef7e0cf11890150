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
//!
//! Each frame a mover's steering sets the velocity it would like
//! ([`Motion::preferred`]), local avoidance turns it into one that does not
//! run into the others ([`avoidance`]), and the mover walks it on the grid,
//! never into a wall or over a wall's corner. A unit that comes to rest
//! holds its cell (its footprint's cells): a unit arriving where another
//! rests takes the nearest free cell instead, so units ordered one by one
//! to one point stand side by side, and a unit pushed aside walks back.

/// Runs `$body` for every item of `$query`, a pass over movers in which
/// each reads the frame and writes only itself: on the compute task pool
/// from `$least` items on, on this thread below that (where handing the
/// work out costs more than it saves). The same result either way.
macro_rules! each_mover {
    // With a state `$init` makes once per batch of movers (once in all on
    // this thread), handed to `$body` as `$local`.
    ($query:expr, $least:expr, $init:expr, |$local:pat_param, $item:pat_param| $body:expr $(,)?) => {{
        if $query.iter().len() >= $least {
            $query
                .par_iter_mut()
                .for_each_init($init, |$local, $item| $body)
        } else {
            let mut state = ($init)();
            $query.iter_mut().for_each(|$item| {
                let $local = &mut state;
                $body
            })
        }
    }};
    ($query:expr, $least:expr, |$item:pat_param| $body:expr $(,)?) => {{
        if $query.iter().len() >= $least {
            $query.par_iter_mut().for_each(|$item| $body)
        } else {
            $query.iter_mut().for_each(|$item| $body)
        }
    }};
}

/// Movers, at least, for a cheap pass over them (preferred velocities,
/// avoidance's gathering and write-back) to run on the compute task pool:
/// about 40 ns a mover, against some 40 µs to hand the work out and
/// gather it on a 2-core machine.
const PARALLEL_MOVERS: usize = 4096;

/// Movers, at least, for the walk on the grid (about 240 ns a mover) to
/// run on the compute task pool.
const PARALLEL_WALKS: usize = 512;

pub mod avoidance;
mod body;
pub mod chase;
mod corridor;
mod headway;
mod neighbours;
pub mod passage;
mod prefer;
mod rest;
mod route;
mod store;
mod walk;

use bevy::ecs::change_detection::Tick;
use bevy::ecs::intern::Interned;
use bevy::ecs::query::QueryData;
use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;

pub use body::{Avoidance, AvoidanceSettings};
pub use chase::{Pursuit, TargetLost};
pub use route::{Route, SharedWaypoints};

use bevy::ecs::entity::EntityHashMap;

use crate::checksum::{FrontierChecksum, pair};
use crate::core::{ClassId, UnitKind};
use crate::maps::{MapView, Maps};
use crate::order::Ordinal;
use crate::pathfinding::{
    Footprint, MovementClass, PathRequest, PathResult, PathStatus, PathTarget, PathfindingPlugin,
    unit_kind,
};
use crate::schedule::FrontierSystems;
use headway::Headway;
use rest::RestingPlaces;
use store::{Slot, Slots, join_crowd, leave_crowd};

pub(crate) use body::speed_of;
pub(crate) use corridor::{Cut, Edits, join_path, route_cut_ahead, smooth, walk_left};

/// The maps, as the movement systems read them beside the units'
/// transforms.
type MapsBesideUnits<'w, 's> = Maps<'w, 's, Without<Mover>>;

/// A unit that walks: put it with a `Transform` and give it
/// [`PathRequest`]s.
#[derive(Component, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Component)]
#[require(Transform, Steering, Motion, Ordinal, Slot)]
#[component(on_add = join_crowd, on_remove = leave_crowd)]
pub struct Mover {
    /// World units per second: from 0 up to
    /// [`Mover::MAX_CELLS_PER_SECOND`] cells a second (a speed above it,
    /// `f32::INFINITY` included, walks at that; NaN or a negative speed
    /// stands still).
    pub speed: f32,
}

impl Mover {
    /// The fastest a mover walks, in cells of its map a second: far
    /// beyond any unit's, and short of what would make one frame's walk
    /// long (a stride is walked and checked in quarter-cell steps, so a
    /// speed of 1e30 would never end its frame).
    pub const MAX_CELLS_PER_SECOND: f32 = 1_000.0;
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

/// How a [`Mover`] moves this frame: three velocities, each written by one
/// stage (the one its steering would like, the one avoidance planned, the
/// one it walked, as Detour keeps `dvel`, `nvel` and `vel` apart), and
/// where it rests when it stands.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Reflect)]
#[reflect(Component)]
pub struct Motion {
    /// The velocity steering asks for this frame (world units per second):
    /// toward the next waypoint, the goal (on instinct) or the unit's rest
    /// place (when standing and pushed off it).
    pub preferred: Vec2,
    /// The velocity avoidance planned for this frame
    /// ([`CrowdSystems::Avoid`]; without [`AvoidancePlugin`], the preferred
    /// one): what the unit walks in [`CrowdSystems::Walk`]. A game with
    /// physics of its own may set it between the two.
    pub planned: Vec2,
    /// The velocity the unit moved at in its last frame, per second: what
    /// it really did, its walk (walls considered) and the push of others'
    /// bodies after it (so a unit held in a jam shows it stands, and one
    /// shoved aside shows it moves, to the others that avoid it next
    /// frame; position-based crowds take velocities so). In a frame it could
    /// not walk (no time passing, or off every map), the one it was given.
    pub velocity: Vec2,
    /// Where a standing unit belongs; pushed off it, it walks back.
    pub rest: Option<Vec2>,
    /// The map the unit last walked on (kept while it stands).
    pub map: Option<Entity>,
    /// Whether it gains ground, and whether it pushes through others
    /// because it has not for a while.
    #[reflect(ignore)]
    headway: Headway,
    /// The way the unit means to go (unit length, or zero when it stands).
    heading: Vec2,
    /// Whether a one-lane passage lies just ahead (or it is in one).
    near_passage: bool,
    /// Whether it is queued behind a unit that waits (or is queued), going
    /// the same way.
    queued: bool,
    /// Where it stands with the one-lane passages: free, waiting its turn
    /// (and how long so far), or crossing with its claim.
    #[reflect(ignore)]
    turn: passage::TurnState,
}

impl Motion {
    /// Whether the unit, blocked by others for
    /// [`AvoidanceSettings::give_up_after`], pushes through them instead of
    /// avoiding them, until it makes headway again.
    pub fn pushing_through(&self) -> bool {
        self.headway.pushing_through()
    }

    /// Whether the unit stands waiting its turn at a one-lane passage (see
    /// [`passage`]).
    pub fn waiting_turn(&self) -> bool {
        self.turn.waiting()
    }

    /// Whether it waits its turn at a passage, or is queued behind a unit
    /// that waits (going the same way): held up, not blocked.
    pub(crate) fn held_up(&self) -> bool {
        self.turn.waiting() || self.queued
    }

    /// What the unit is doing in the crowd this frame (its `steering`
    /// beside it), as a game would show it: the states of Detour's crowd
    /// agents, one at a time.
    pub fn state(&self, steering: &Steering) -> CrowdState {
        if self.turn.claim().is_some() {
            CrowdState::Crossing
        } else if self.held_up() {
            CrowdState::Waiting
        } else if self.pushing_through() {
            CrowdState::PushingThrough
        } else if matches!(steering, Steering::Idle) {
            CrowdState::Standing
        } else {
            CrowdState::Moving
        }
    }
}

/// What a [`Mover`] is doing in the crowd ([`Motion::state`]), the first
/// that holds of, in this order:
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Reflect)]
pub enum CrowdState {
    /// In a one-lane passage, or at its mouth about to go in, holding the
    /// passage: the others make way.
    Crossing,
    /// Waiting its turn at a one-lane passage, or queued behind a unit
    /// that waits, going the same way: held up, not blocked.
    Waiting,
    /// Blocked for [`AvoidanceSettings::give_up_after`]: pushing through
    /// the others (leaving them most of the avoiding) until it makes
    /// headway.
    PushingThrough,
    /// No order: at its rest place, or walking back to it.
    Standing,
    /// Under way: on its route, or on instinct until its path comes.
    Moving,
}

/// How a [`Mover`]'s order ended, in [`Arrived`] and [`UnitArrived`]: the
/// same for a unit ordered alone and for a member of a
/// [`GroupMove`](crate::groups::GroupMove).
///
/// An order that found no path at all never arrives: its unit stands, and
/// [`PathFailed`](crate::pathfinding::PathFailed) said so when the answer
/// came. More ends may come (a unit that gives up in a jam far from its
/// goal), so a `match` needs a `_` arm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Reflect)]
#[non_exhaustive]
pub enum Arrival {
    /// At its goal: on the goal's cell, or on the nearest free one when
    /// others stand there (a group's units each at their own).
    Reached,
    /// The goal could not be reached (walled off, on ground its class may
    /// not enter, or beyond a search's cap): it stopped at the end of its
    /// path, the reachable place nearest the goal
    /// ([`PathStatus::NearestReachable`] or [`PathStatus::Partial`]).
    NearestReachable,
    /// Blocked by others within a few cells of its goal for
    /// [`AvoidanceSettings::give_up_after`]: close enough, it rests where
    /// it stands.
    StoppedShort,
    /// Stopped in a jam, far from its goal, after making no headway for
    /// [`AvoidanceSettings::stop_after`]: it stands where it was held, and
    /// [`MoveBlocked`] says where. The game may order it again (elsewhere,
    /// or the same way once the jam clears). A chase or follow never ends
    /// so: the unit stands and tries again once its target has moved.
    Blocked,
    /// Within [`PathRequest::range`] of its goal: a chase caught up with
    /// its target, or a ranged unit came near enough a place (see
    /// [`chase`]).
    InRange,
    /// The unit it chased or followed is gone (despawned, or off the
    /// map): it stands where it was, and [`TargetLost`] says so.
    TargetLost,
}

impl Arrival {
    /// Whether the unit got where it was sent ([`Arrival::Reached`],
    /// [`Arrival::InRange`], or [`Arrival::StoppedShort`] a few cells from
    /// it).
    pub fn at_goal(self) -> bool {
        matches!(
            self,
            Arrival::Reached | Arrival::InRange | Arrival::StoppedShort
        )
    }
}

/// On a [`Mover`] whose order has ended ([`UnitArrived`] was sent), with
/// how it ended. Removed when it gets a new order.
#[derive(Component, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Component)]
pub struct Arrived {
    /// How the order ended.
    pub outcome: Arrival,
}

/// On a unit whose order ended: when its request last changed then. A
/// path asked for again earlier in the frame (a wall cut its way) marks the
/// request changed; unchanged since, it is no new order, and
/// `begin_orders` leaves the unit standing.
#[derive(Component, Clone, Copy)]
pub(crate) struct EndedOrder(Tick);

/// A unit's order ended with `outcome`: `Arrived` says how, and
/// `UnitArrived` tells the game; `changed` is when its request (if it has
/// one) last changed ([`EndedOrder`]). Where it stands is its caller's.
fn order_ended(
    commands: &mut Commands,
    arrivals: &mut MessageWriter<UnitArrived>,
    entity: Entity,
    outcome: Arrival,
    changed: Option<Tick>,
) {
    let mut ended = commands.entity(entity);
    ended.insert(Arrived { outcome });
    if let Some(changed) = changed {
        ended.insert(EndedOrder(changed));
    }
    let event = UnitArrived { entity, outcome };
    arrivals.write(event);
    commands.trigger(event);
}

/// A [`Mover`]'s order ended: it stands at the end of its path. Triggered
/// as an observer event and written as a message, for a unit ordered alone
/// and for each member of a group alike.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_frontier::movement::Arrival;
/// use bevy_frontier::prelude::*;
///
/// fn report(mut arrivals: MessageReader<UnitArrived>) {
///     for arrived in arrivals.read() {
///         match arrived.outcome {
///             Arrival::NearestReachable => warn!("{} could not get there", arrived.entity),
///             _ => info!("{} is there", arrived.entity),
///         }
///     }
/// }
/// # bevy::ecs::system::assert_is_system(report);
/// ```
#[derive(EntityEvent, Message, Clone, Copy, Debug, PartialEq)]
pub struct UnitArrived {
    /// The unit.
    pub entity: Entity,
    /// How its order ended.
    pub outcome: Arrival,
}

/// A [`Mover`] gave up: others held it where it stands, far from its goal,
/// with no headway for [`AvoidanceSettings::stop_after`]. Its order ended
/// with [`Arrival::Blocked`] (its [`UnitArrived`] is sent too). Triggered
/// as an observer event and written as a message. Never sent for a chase
/// or follow ([`PathTarget::Entity`]),
/// which stands and tries again once its target has moved.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_frontier::movement::MoveBlocked;
///
/// fn report(mut blocked: MessageReader<MoveBlocked>) {
///     for stuck in blocked.read() {
///         warn!("{} is stuck at {}", stuck.entity, stuck.at);
///     }
/// }
/// # bevy::ecs::system::assert_is_system(report);
/// ```
#[derive(EntityEvent, Message, Clone, Copy, Debug, PartialEq)]
pub struct MoveBlocked {
    /// The unit.
    pub entity: Entity,
    /// Where it stands, in world units.
    pub at: Vec2,
}

/// The stages of the crowd step, in the order each frame runs them, each
/// a pass over every mover: nested in [`FrontierSystems::Steering`],
/// [`FrontierSystems::Avoidance`] and [`FrontierSystems::Move`]. Order a
/// system of your own around one stage, for example
/// `.after(CrowdSystems::Avoid).before(CrowdSystems::Walk)` to change the
/// velocities avoidance chose before units walk them.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CrowdSystems {
    /// Orders: new requests start instinct, new paths are joined, paths and
    /// routes a map change cut are asked for again.
    Orders,
    /// Each mover's preferred velocity: toward its next corner, its goal on
    /// instinct, or its rest place when it stands (in parallel; standing
    /// units without a place take one after, one by one).
    Prefer,
    /// Turns at one-lane passages ([`passage`]): units whose side it is
    /// not wait.
    Turns,
    /// Local avoidance ([`avoidance`]): ORCA's velocities, planned in
    /// parallel, and the gaps kept between the pairs that may touch.
    Avoid,
    /// Every mover walks its velocity on the grid (in parallel), then, one
    /// by one, arrivals, rest places and units blocked too long.
    Walk,
    /// Bodies still touching are pushed apart.
    Separate,
}

/// Moves [`Mover`]s: instinct while the search runs, path following,
/// re-planning and arrival.
///
/// # Systems
/// Each in its stage of [`CrowdSystems`]:
/// - [`CrowdSystems::Orders`], chained: `begin_orders` (new requests start
///   instinct at once), `adopt_paths` (new results are joined at the
///   furthest visible waypoint), `replan_cut_paths` (paths a map change cut
///   are asked for again), `replan_cut_routes` (so are routes, group
///   members' too, whose legs still to walk a cell changed since the last
///   frame now blocks).
/// - [`CrowdSystems::Prefer`]: `prefer` (each unit's [`Motion::preferred`]
///   velocity; standing units take their rest place).
/// - [`CrowdSystems::Walk`]: `move_units` (walks each unit its velocity ×
///   delta time on the grid; arrival, rest places, and a unit blocked too
///   long pushes through).
///
/// [`PassagesPlugin`] adds `take_turns` in [`CrowdSystems::Turns`], and
/// [`AvoidancePlugin`] adds `avoid` and `separate` in
/// [`CrowdSystems::Avoid`] and [`CrowdSystems::Separate`]; without
/// [`AvoidancePlugin`], `walk_as_preferred` in [`CrowdSystems::Avoid`] has
/// every unit walk the velocity it would like. Add them too, or use
/// [`FrontierPlugins`](crate::FrontierPlugins), which holds all three.
///
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

impl MovementPlugin {
    /// Adds the plugin for `schedule` unless the app already has it: the
    /// plugins built on movement bring it with them.
    pub(crate) fn add_once(app: &mut App, schedule: Interned<dyn ScheduleLabel>) {
        if !app.is_plugin_added::<Self>() {
            app.add_plugins(Self { schedule });
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
            .register_type::<Motion>()
            .register_type::<Avoidance>()
            .register_type::<AvoidanceSettings>()
            .register_type::<Arrived>()
            .register_type::<Pursuit>()
            .init_resource::<AvoidanceSettings>()
            .init_resource::<RestingPlaces>()
            .init_resource::<Slots>()
            .init_resource::<RouteChecks>()
            .init_resource::<passage::Passages>()
            .add_message::<UnitArrived>()
            .add_message::<MoveBlocked>()
            .add_message::<TargetLost>()
            .configure_sets(
                self.schedule,
                (
                    (
                        CrowdSystems::Orders,
                        CrowdSystems::Prefer,
                        CrowdSystems::Turns,
                    )
                        .chain()
                        .in_set(FrontierSystems::Steering),
                    CrowdSystems::Avoid.in_set(FrontierSystems::Avoidance),
                    (CrowdSystems::Walk, CrowdSystems::Separate)
                        .chain()
                        .in_set(FrontierSystems::Move),
                ),
            )
            .add_systems(
                self.schedule,
                (
                    (
                        body::warn_of_odd_settings,
                        store::seat_strays,
                        begin_orders,
                        adopt_paths,
                        replan_cut_paths,
                        replan_cut_routes,
                        chase::pursue,
                    )
                        .chain()
                        .in_set(CrowdSystems::Orders),
                    prefer::prefer.in_set(CrowdSystems::Prefer),
                    // Without avoidance, nothing turns the velocity a unit
                    // would like into the one it walks: it walks the one
                    // it would like.
                    walk_as_preferred
                        .run_if(not(resource_exists::<avoidance::Crowd>))
                        .in_set(CrowdSystems::Avoid),
                    walk::move_units.in_set(CrowdSystems::Walk),
                    fold_movers
                        .run_if(resource_exists::<FrontierChecksum>)
                        .in_set(FrontierSystems::Last)
                        .before(crate::checksum::close_frame),
                ),
            )
            .add_observer(stop_on_cancel);
    }
}

/// Bodies in a crowd: local avoidance (ORCA, [`avoidance`]) in
/// [`CrowdSystems::Avoid`] and the separation of bodies still touching in
/// [`CrowdSystems::Separate`]. Part of [`FrontierPlugins`]; a game with
/// physics of its own switches it off
/// (`FrontierPlugins::default().build().disable::<AvoidancePlugin>()`): its
/// movers then walk the velocity their steering would like
/// ([`Motion::preferred`]), through each other, and the game may change
/// [`Motion::planned`] between [`CrowdSystems::Avoid`] and
/// [`CrowdSystems::Walk`].
///
/// [`FrontierPlugins`]: crate::FrontierPlugins
pub struct AvoidancePlugin {
    /// The schedule to run in; the one `MovementPlugin` runs in.
    pub schedule: Interned<dyn ScheduleLabel>,
}

impl Default for AvoidancePlugin {
    fn default() -> Self {
        Self {
            schedule: Update.intern(),
        }
    }
}

impl Plugin for AvoidancePlugin {
    fn build(&self, app: &mut App) {
        MovementPlugin::add_once(app, self.schedule);
        app.init_resource::<avoidance::Crowd>().add_systems(
            self.schedule,
            (
                avoidance::avoid.in_set(CrowdSystems::Avoid),
                avoidance::separate.in_set(CrowdSystems::Separate),
            ),
        );
    }
}

/// Turns at one-lane passages ([`passage`]) in [`CrowdSystems::Turns`]:
/// units going opposite ways take turns at a bridge one unit wide instead
/// of meeting on it. Part of [`FrontierPlugins`]; switched off, units meet
/// in passages and push through each other.
///
/// [`FrontierPlugins`]: crate::FrontierPlugins
pub struct PassagesPlugin {
    /// The schedule to run in; the one `MovementPlugin` runs in.
    pub schedule: Interned<dyn ScheduleLabel>,
}

impl Default for PassagesPlugin {
    fn default() -> Self {
        Self {
            schedule: Update.intern(),
        }
    }
}

impl Plugin for PassagesPlugin {
    fn build(&self, app: &mut App) {
        MovementPlugin::add_once(app, self.schedule);
        app.add_systems(
            self.schedule,
            passage::take_turns.in_set(CrowdSystems::Turns),
        );
    }
}

/// [`CrowdSystems::Avoid`] without [`AvoidancePlugin`]: every mover walks
/// the velocity it would like.
fn walk_as_preferred(mut units: Query<&mut Motion, With<Mover>>) {
    each_mover!(units, PARALLEL_MOVERS, |mut motion| {
        motion.planned = motion.preferred;
    });
}

/// `FrontierSystems::Last`, with a [`FrontierChecksum`]: every mover's
/// position, velocity and crowd state, in the order the movers joined.
#[inline(never)] // named in profiles
fn fold_movers(
    units: Query<(&Ordinal, &Transform, &Motion, &Steering), With<Mover>>,
    mut checksum: ResMut<FrontierChecksum>,
    mut movers: Local<Vec<(u64, [u64; 3])>>,
) {
    movers.clear();
    movers.extend(units.iter().map(|(ordinal, transform, motion, steering)| {
        let at = transform.translation;
        let words = [
            pair(at.x, at.y),
            pair(motion.velocity.x, motion.velocity.y),
            motion.state(steering) as u64,
        ];
        (ordinal.joined(), words)
    }));
    movers.sort_unstable_by_key(|&(joined, _)| joined);
    checksum.fold(movers.iter().flat_map(|(_, words)| *words));
}

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
fn begin_orders(
    mut commands: Commands,
    mut orders: Query<NewOrder, NewOrders>,
    maps: MapsBesideUnits,
    positions: Query<&Transform>,
) {
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
            match &mut *steering {
                Steering::Following { route, goal, .. } if route.replanning() => {
                    *goal = to;
                    continue;
                }
                Steering::Instinct { goal, .. } => {
                    *goal = to;
                    continue;
                }
                _ => {}
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

/// On a mover walking a [`PathStatus::Provisional`] path: the optimal path
/// that replaces it is taken up when it comes.
///
/// [`PathStatus::Provisional`]: crate::pathfinding::PathStatus::Provisional
#[derive(Component)]
pub(crate) struct OnProvisionalPath;

/// On a unit a group sent to its end slot alone, when the group's goal
/// cannot be reached: the path to its slot leads to the nearest reachable
/// place, and its order ends [`Arrival::NearestReachable`] like its
/// group's. It holds the request it came with (a later order to another
/// goal does not miss it).
#[derive(Component)]
pub(crate) struct MissesGoal {
    pub(crate) goal: PathTarget,
}

/// A mover as `adopt_paths` reads its new path.
#[derive(QueryData)]
#[query_data(mutable)]
struct AdoptQuery {
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
fn adopt_paths(
    mut units: Query<AdoptQuery, (With<Mover>, Changed<PathResult>)>,
    maps: MapsBesideUnits,
    mut commands: Commands,
) {
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
        let (goal, map, walking) = match &mut *steering {
            Steering::Instinct { goal, map } => (*goal, *map, None),
            // The real path for the provisional one being walked, or the
            // new path for a route made dearer (found on a later grid than
            // the route: not the route's own path, just flagged).
            Steering::Following { route, goal, map }
                if on_provisional && (!provisional || route.ends_short())
                    || route.replanning()
                        && (result.grid_version > route.version()
                            || chasing && !result.invalidated) =>
            {
                // Whatever comes of it, the path asked for has come.
                route.set_replanning(false);
                (*goal, *map, route.next_waypoint())
            }
            _ => continue,
        };
        if on_provisional && !provisional {
            commands.entity(unit).remove::<OnProvisionalPath>();
        }
        if !result.status.has_path() {
            if walking.is_none() {
                *steering = Steering::Idle;
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
                *steering = Steering::Following { route, goal, map };
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
fn replan_cut_paths(mut units: PathFollowers, maps: MapsBesideUnits) {
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
fn replan_cut_routes(
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
    cut.sort_unstable_by_key(|&(order, unit, _)| (order, unit));
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
                let ground = self.view.for_kind(UnitKind::new(class, 1)).size_class();
                let edits = Edits::new(ground.dearer_since(since));
                self.edits.push((class, since, edits));
                self.edits.len() - 1
            }
        };
        Some(&self.edits[at].2)
    }
}

/// A waypoint this close (in cells) counts as reached by a unit that
/// avoidance moved off the straight way to it.
const REACHED: f32 = 0.1;

/// A unit within this many cells of its next waypoint, pushed off the way
/// to it, goes on to the one after as soon as it can see it.
const SKIP_NEAR: f32 = 1.5;

/// The velocity that takes a unit at `from` toward `to` at `speed`,
/// slowing so as to stop there within the frame.
pub(super) fn toward(from: Vec2, to: Vec2, speed: f32, seconds: f32) -> Vec2 {
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
pub(super) fn pass_reached_corners(view: &MapView, route: &mut Route, position: Vec2) {
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

/// What a unit following a route does while the path it asks for again
/// after an edit is found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Meanwhile {
    /// A wall cuts its way: it walks on instinct.
    Instinct,
    /// Its way is only dearer: it walks on along its route
    /// ([`Route::replanning`]) and takes the new path when it comes.
    WalkOn,
}

/// Sets a unit following a route to wait for a new path as `meanwhile`
/// says; the order to ask again for (its goal and map), or `None` when
/// there is nothing to ask: it does not follow a route, or it walks on
/// while a path it asked for already is found (that one is checked against
/// the edit when it comes).
fn wait_for_new_path(steering: &mut Steering, meanwhile: Meanwhile) -> Option<(Vec2, Entity)> {
    let Steering::Following { route, goal, map } = steering else {
        return None;
    };
    let order = (*goal, *map);
    match meanwhile {
        Meanwhile::WalkOn if route.replanning() => return None,
        Meanwhile::WalkOn => route.set_replanning(true),
        Meanwhile::Instinct => {
            *steering = Steering::Instinct {
                goal: order.0,
                map: order.1,
            }
        }
    }
    Some(order)
}

/// Asks for a path again: the unit's own request is marked changed, and a
/// route without an order of its own (a group member's) gets one, to the
/// same end.
fn ask_again(
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
