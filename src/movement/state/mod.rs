//! The mover's state: the components every stage of the crowd step reads
//! ([`Mover`], [`Steering`], [`Motion`]), how an order ends ([`Arrival`],
//! [`Arrived`], [`UnitArrived`], [`MoveBlocked`]), and the pure state
//! machines they hold (what a unit is doing, [`steer`]; its headway,
//! [`headway`]; its turn at passages, [`turn`]). It imports no stage.

pub(crate) mod headway;
pub(crate) mod route;
pub(crate) mod steer;
pub(crate) mod turn;

use bevy::ecs::change_detection::Tick;
use bevy::prelude::*;

use super::seats::{Seat, join_crowd, leave_crowd};
use crate::maps::Maps;
use crate::ordinal::Ordinal;
use crate::pathfinding::PathTarget;
use headway::Headway;
pub use route::Route;
use turn::PassageState;

/// The maps, as the movement systems read them beside the units'
/// transforms.
pub(crate) type MapsBesideUnits<'w, 's> = Maps<'w, 's, Without<Mover>>;

/// A unit that walks: put it with a `Transform` and give it
/// [`PathRequest`](crate::pathfinding::PathRequest)s.
#[derive(Component, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Component)]
#[require(Transform, Steering, Motion, Ordinal, Seat)]
#[component(on_add = join_crowd, on_remove = leave_crowd)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
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
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
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

/// How a [`Mover`] moves this frame: three velocities (the one its
/// steering would like, the one avoidance planned, the one it moved at, as
/// Detour keeps `dvel`, `nvel` and `vel` apart), where it rests when it
/// stands, its headway and its state at passages. `preferred` is set by
/// the prefer stage and rewritten by the turns stage for a unit that
/// waits; `planned` by avoidance (or a game's physics); `velocity` by the
/// walk, with the separation's push added after it.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Reflect)]
#[reflect(Component)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct Motion {
    /// The velocity steering asks for this frame (world units per second):
    /// toward the next waypoint, the goal (on instinct) or the unit's rest
    /// place (when standing and pushed off it).
    pub preferred: Vec2,
    /// The velocity avoidance planned for this frame
    /// ([`CrowdSystems::Avoid`](crate::movement::CrowdSystems::Avoid); without [`AvoidancePlugin`](crate::movement::AvoidancePlugin), the preferred
    /// one): what the unit walks in [`CrowdSystems::Walk`](crate::movement::CrowdSystems::Walk). A game with
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
    pub(crate) headway: Headway,
    /// Where it stands with the one-lane passages (kept by the turns
    /// stage).
    #[reflect(ignore)]
    pub(crate) passage: PassageState,
}

impl Motion {
    /// Whether the unit, blocked by others for
    /// [`CrowdSettings::give_up_after`](crate::movement::CrowdSettings::give_up_after), pushes through them instead of
    /// avoiding them, until it makes headway again.
    pub fn pushing_through(&self) -> bool {
        self.headway.pushing_through()
    }

    /// Whether the unit stands waiting its turn at a one-lane passage (see
    /// [`passage`](crate::movement::passage)).
    pub fn waiting_turn(&self) -> bool {
        self.passage.turn.waiting()
    }

    /// Whether it waits its turn at a passage, or is queued behind a unit
    /// that waits (going the same way): held up, not blocked.
    pub(crate) fn held_up(&self) -> bool {
        self.passage.held_up()
    }

    /// What the unit is doing in the crowd this frame (its `steering`
    /// beside it), as a game would show it: the states of Detour's crowd
    /// agents, one at a time.
    pub fn state(&self, steering: &Steering) -> CrowdState {
        if self.passage.crossing() {
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
    /// Blocked for [`CrowdSettings::give_up_after`](crate::movement::CrowdSettings::give_up_after): pushing through
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
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub enum Arrival {
    /// At its goal: on the goal's cell, or on the nearest free one when
    /// others stand there (a group's units each at their own).
    Reached,
    /// The goal could not be reached (walled off, on ground its class may
    /// not enter, or beyond a search's cap): it stopped at the end of its
    /// path, the reachable place nearest the goal
    /// ([`PathStatus::NearestReachable`](crate::pathfinding::PathStatus::NearestReachable) or [`PathStatus::Partial`](crate::pathfinding::PathStatus::Partial)).
    NearestReachable,
    /// Blocked by others within a few cells of its goal for
    /// [`CrowdSettings::give_up_after`](crate::movement::CrowdSettings::give_up_after): close enough, it rests where
    /// it stands.
    StoppedShort,
    /// Stopped in a jam, far from its goal, after making no headway for
    /// [`CrowdSettings::stop_after`](crate::movement::CrowdSettings::stop_after): it stands where it was held, and
    /// [`MoveBlocked`] says where. The game may order it again (elsewhere,
    /// or the same way once the jam clears). A chase or follow never ends
    /// so: the unit stands and tries again once its target has moved.
    Blocked,
    /// Within [`PathRequest::range`](crate::pathfinding::PathRequest::range) of its goal: a chase caught up with
    /// its target, or a ranged unit came near enough a place (see
    /// [`chase`](crate::movement::chase)).
    InRange,
    /// The unit it chased or followed is gone (despawned, or off the
    /// map): it stands where it was, and [`TargetLost`](crate::movement::TargetLost) says so.
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
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct Arrived {
    /// How the order ended.
    pub outcome: Arrival,
}

/// On a unit whose order ended: when its request last changed then. A
/// path asked for again earlier in the frame (a wall cut its way) marks the
/// request changed; unchanged since, it is no new order, and
/// `begin_orders` leaves the unit standing.
#[derive(Component, Clone, Copy)]
pub(crate) struct EndedOrder(pub(crate) Tick);

/// A unit's order ended with `outcome`: `Arrived` says how, and
/// `UnitArrived` tells the game; `changed` is when its request (if it has
/// one) last changed ([`EndedOrder`]). Where it stands is its caller's.
pub(crate) fn order_ended(
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
/// with no headway for [`CrowdSettings::stop_after`](crate::movement::CrowdSettings::stop_after). Its order ended
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

/// On a mover walking a [`PathStatus::Provisional`](crate::pathfinding::PathStatus::Provisional) path: the optimal path
/// that replaces it is taken up when it comes.
///
/// [`PathStatus::Provisional`](crate::pathfinding::PathStatus::Provisional): crate::pathfinding::PathStatus::Provisional
#[derive(Component)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct OnProvisionalPath;

/// On a unit a group sent to its end slot alone, when the group's goal
/// cannot be reached: the path to its slot leads to the nearest reachable
/// place, and its order ends [`Arrival::NearestReachable`] like its
/// group's. It holds the request it came with (a later order to another
/// goal does not miss it).
#[derive(Component)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct MissesGoal {
    pub(crate) goal: PathTarget,
}

#[cfg(feature = "serialize")]
crate::remap::remap_fields!(Motion { map, passage });
#[cfg(feature = "serialize")]
crate::remap::remap_fields!(MissesGoal { goal });

#[cfg(feature = "serialize")]
impl crate::remap::Remap for Steering {
    fn remap(&mut self, to: &mut dyn FnMut(Entity) -> Entity) {
        match self {
            Steering::Idle => {}
            Steering::Instinct { map, .. } | Steering::Following { map, .. } => *map = to(*map),
        }
    }
}
