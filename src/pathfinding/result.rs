//! What a game gets back: the [`PathResult`] component, and the
//! [`PathReady`] and [`PathInvalidated`] news, each both an observer event
//! and a buffered message.

use std::fmt;

use bevy::prelude::*;

use crate::core::{Cell, ClassId, UnitKind};
use crate::maps::MapError;

/// Why a request could not be served.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Reflect)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub enum InvalidReason {
    /// The start lies outside the map: the position or cell the request
    /// starts from (its unit's `Transform` unless it names a start) falls
    /// off the grid. For a unit with a [`Footprint`](super::Footprint) of
    /// k×k cells the position is its square's centre, and the square must
    /// lie on the grid: its anchor, (k − 1)/2 cells down and left of the
    /// centre's cell, must be a cell of the map. A unit placed by its
    /// anchor cell's centre rather than its square's centre (see
    /// [`Footprint::centre`](super::Footprint::centre)) has its square
    /// shifted by that much, and at a map's low edge its anchor falls off.
    StartOutOfBounds,
    /// The goal lies outside the map.
    GoalOutOfBounds,
    /// The start position is NaN or infinite.
    NonFiniteStart,
    /// The goal position is NaN or infinite.
    NonFiniteGoal,
    /// No start was given and the entity has no `Transform`.
    NoStartPosition,
    /// There is no map (no entity with a `NavGrid`), or the named map entity
    /// has none.
    NoMap,
    /// Several maps exist and the request did not name one.
    AmbiguousMap,
    /// The map was despawned (or lost its grid) while the search ran.
    MapRemoved,
    /// The map has no walkable cell near the start.
    NoWalkableStart,
    /// The map cannot place cells in the world: its `GridLayout` has a zero
    /// or non-finite cell size or origin, or its `Transform` is not finite
    /// or not invertible (a zero scale). A warning names the map.
    BadMapPlacement,
    /// The unit's [`Footprint`](super::Footprint) is 0 or larger than
    /// [`MAX_UNIT_SIZE`](crate::core::MAX_UNIT_SIZE).
    BadFootprint,
    /// The unit's [`MovementClass`](super::MovementClass) is not one the
    /// map's grid has registered.
    UnknownClass,
    /// The request's goal (or start) is a unit
    /// ([`PathTarget::Entity`](super::PathTarget::Entity)) that has no
    /// `Transform`: despawned, or never placed.
    TargetLost,
}

impl From<MapError> for InvalidReason {
    fn from(error: MapError) -> Self {
        match error {
            MapError::NoMap => InvalidReason::NoMap,
            MapError::Ambiguous => InvalidReason::AmbiguousMap,
        }
    }
}

impl fmt::Display for InvalidReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InvalidReason::StartOutOfBounds => {
                "the start is outside the map (for a unit bigger than a cell: its square, centred on its Transform, does not lie on the map)"
            }
            InvalidReason::GoalOutOfBounds => "the goal is outside the map",
            InvalidReason::NonFiniteStart => "the start position is not finite",
            InvalidReason::NonFiniteGoal => "the goal position is not finite",
            InvalidReason::NoStartPosition => "no start given and the entity has no Transform",
            InvalidReason::NoMap => "there is no map with a NavGrid",
            InvalidReason::AmbiguousMap => "several maps exist and the request named none",
            InvalidReason::MapRemoved => "the map was removed during the search",
            InvalidReason::NoWalkableStart => "the map has no walkable cell near the start",
            InvalidReason::BadMapPlacement => {
                "the map's layout or transform cannot place cells (zero or non-finite size)"
            }
            InvalidReason::BadFootprint => "the unit's footprint is 0 or too large",
            InvalidReason::UnknownClass => "the map has no movement class of the unit's id",
            InvalidReason::TargetLost => "the unit the request names is gone (no Transform)",
        })
    }
}

/// How a request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Reflect)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub enum PathStatus {
    /// A path to the goal: optimal, or with a
    /// [`heuristic_weight`](crate::schedule::PathfindingSettings::heuristic_weight)
    /// W above 1, costing at most W times the optimum.
    Complete,
    /// A quick route to the goal over the map's coarse graph (see
    /// [`PathfindingSettings::refine`](crate::schedule::PathfindingSettings::refine)),
    /// for the unit to start along: legal, near the best (its cost is what
    /// walking it really costs), found at a work that does not grow with
    /// the map. The search with real costs goes on, and its result replaces
    /// this one (the component changes and [`PathReady`] fires again).
    Provisional,
    /// The goal was unreachable (or a wall); the path leads to the reachable
    /// cell nearest to it.
    NearestReachable,
    /// The search hit its expansion cap; the path leads to the explored cell
    /// nearest the goal. For a chase (its
    /// [`chase_lookahead`](crate::schedule::PathfindingSettings::chase_lookahead)),
    /// a leg of the way: the chaser asks for the next one before its end,
    /// and its order goes on.
    Partial,
    /// The goal cannot be reached and the request asked not to go near it.
    Unreachable,
    /// The request was bad; nothing was searched.
    Invalid(InvalidReason),
}

impl PathStatus {
    /// Whether this is the request's last answer: everything but
    /// [`PathStatus::Provisional`], which a final answer always follows
    /// (unless the request is replaced or removed first).
    pub fn is_final(self) -> bool {
        self != PathStatus::Provisional
    }

    /// Whether the path leads only to the reachable place nearest the goal
    /// ([`PathStatus::NearestReachable`], [`PathStatus::Partial`]): the
    /// unit's order ends [`Arrival::NearestReachable`](crate::movement::Arrival::NearestReachable).
    pub fn misses_goal(self) -> bool {
        matches!(self, PathStatus::NearestReachable | PathStatus::Partial)
    }

    /// Whether the result carries a path to follow.
    pub fn has_path(self) -> bool {
        matches!(
            self,
            PathStatus::Complete
                | PathStatus::Provisional
                | PathStatus::NearestReachable
                | PathStatus::Partial
        )
    }
}

/// The answer to a [`PathRequest`](super::PathRequest), inserted on the requesting entity when
/// its search ends.
#[derive(Component, Clone, Debug, PartialEq, Reflect)]
#[reflect(Component)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct PathResult {
    /// How the request ended.
    pub status: PathStatus,
    /// The map the path is on (`None` when no map could be chosen).
    pub map: Option<Entity>,
    /// The cells from start to end (empty without a path). For a unit
    /// bigger than a cell, the anchors of its footprint (its lowest-`x`,
    /// lowest-`y` cell).
    #[cfg_attr(feature = "serialize", serde(with = "crate::core::serial::path_cells"))]
    pub cells: Vec<Cell>,
    /// The centres of `cells` in world space (of the footprints, for a unit
    /// bigger than a cell).
    pub waypoints: Vec<Vec2>,
    /// The unit size the path was found for (its
    /// [`Footprint`](super::Footprint)).
    pub size: u8,
    /// The movement class the path was found for (its
    /// [`MovementClass`](super::MovementClass)).
    pub class: ClassId,
    /// The path's cost (an orthogonal step on plain ground costs 1).
    pub cost: f32,
    /// Nodes expanded to find it, over every frame it took. For a path
    /// from a search shared by units with one goal
    /// ([`PathfindingSettings::share_goals`](crate::schedule::PathfindingSettings::share_goals)):
    /// the expansions since that search last answered a unit, so the sum
    /// over its units is the search's whole work (0 for a unit answered at
    /// once from cells it had already settled).
    pub expansions: u64,
    /// Frames from the request to this result (0: answered in the frame
    /// the request was seen).
    pub frames_waited: u32,
    /// The grid version the path was found on.
    pub grid_version: u64,
    /// Set when a cell on the path (or beside one of its diagonal steps,
    /// or under its footprint) changed after it was found, in the frame
    /// after the change: a wall went up, or the terrain's cost to the
    /// unit's class changed (a wall put up and taken down again between
    /// two frames counts; a change only other classes can tell does not).
    /// The path may be blocked or no longer the best, and should be
    /// planned again. Never set when no such cell changed (a new level on
    /// the map changes every cell).
    pub invalidated: bool,
    /// A [`PathStatus::Provisional`] route sent before it was refined to
    /// the goal: its cells are the route's first stretch (a couple of
    /// clusters' worth), and the whole route follows (another
    /// provisional result) unless the real path comes first. A `Mover` at
    /// its end walks on by instinct towards the goal until then; it never
    /// arrives there.
    pub ends_short: bool,
}

impl PathResult {
    /// The class and size the path was found for.
    pub fn kind(&self) -> UnitKind {
        UnitKind::new(self.class, self.size)
    }

    /// A result with no path.
    pub fn without_path(status: PathStatus, map: Option<Entity>, frames_waited: u32) -> Self {
        Self {
            status,
            map,
            cells: Vec::new(),
            waypoints: Vec::new(),
            size: 1,
            class: ClassId::DEFAULT,
            cost: 0.0,
            expansions: 0,
            frames_waited,
            grid_version: 0,
            invalidated: false,
            ends_short: false,
        }
    }
}

/// A unit's [`PathResult`] has been inserted. Sent both ways: triggered as
/// an observer event (`app.add_observer(|ready: On<PathReady>| ...)`, or on
/// the entity) and written as a message for systems that read
/// `MessageReader<PathReady>`.
///
/// A member of a [`GroupMove`](crate::groups::GroupMove) gets one too, when
/// its part of the group's route is handed to it: `status` is that of the
/// group's shared search, `expansions` 0 (the search's are on the group's
/// entity, which holds its [`PathRequest`](super::PathRequest) and gets
/// its own `PathReady`), and it has no `PathResult` of its own (its route
/// is in its [`Steering`](crate::movement::Steering)). A member the group
/// sends its own way gets a `PathResult` as a unit ordered alone does.
///
/// On maps with terrain costs a request is usually answered twice: first
/// with a quick [`PathStatus::Provisional`] path for the unit to set off
/// along, then with its final path. [`PathReady::is_final`] tells them
/// apart; react to it where only the final path matters:
///
/// ```
/// use bevy::prelude::*;
/// use bevy_frontier::prelude::*;
///
/// /// Counts units whose order has its final answer (the quick path of a
/// /// terrain map does not count).
/// #[derive(Resource, Default)]
/// struct Routed(usize);
///
/// fn count_routed(mut ready: MessageReader<PathReady>, mut routed: ResMut<Routed>) {
///     routed.0 += ready.read().filter(|ready| ready.is_final()).count();
/// }
///
/// let mut app = App::new();
/// app.add_plugins((MinimalPlugins, FrontierPlugins::default()))
///     .init_resource::<Routed>()
///     .add_systems(Update, count_routed.after(FrontierSystems::Last))
///     // The observer form: only final answers.
///     .add_observer(|ready: On<PathReady>| {
///         if ready.is_final() {
///             info!("{} has its path: {:?}", ready.entity, ready.status);
///         }
///     });
/// // Swamp (cost 4) everywhere but a dry road along the bottom row.
/// let mut grid = NavGrid::new(64, 64).unwrap();
/// grid.fill_rect(Cell::new(0, 1), Cell::new(63, 63), 4).unwrap();
/// app.world_mut().spawn((grid, Transform::default()));
/// app.update();
/// for i in 0..20 {
///     app.world_mut().spawn((
///         Transform::from_xyz(i as f32, 60.0, 0.0),
///         PathRequest::new(Vec2::new(63.0 - i as f32, 0.0)),
///     ));
/// }
/// for _ in 0..60 {
///     app.update();
/// }
/// assert_eq!(app.world().resource::<Routed>().0, 20);
/// ```
#[derive(EntityEvent, Message, Clone, Copy, Debug, PartialEq)]
pub struct PathReady {
    /// The unit.
    pub entity: Entity,
    /// How its request ended.
    pub status: PathStatus,
    /// Nodes expanded for it.
    pub expansions: u64,
    /// Frames from request to result.
    pub frames_waited: u32,
}

impl PathReady {
    /// Whether this is the request's last answer, not a quick path that a
    /// final one will replace (see [`PathStatus::is_final`]).
    pub fn is_final(&self) -> bool {
        self.status.is_final()
    }
}

/// A request's final answer has no path: the goal cannot be reached and
/// the request asked not to go near it ([`PathStatus::Unreachable`]), or
/// the request was bad ([`PathStatus::Invalid`], with the reason). Sent
/// with the [`PathReady`] of that answer, both ways like it, for a unit
/// ordered alone and for each member of a group move alike (a group whose
/// order is bad gives each unit its own request, answered this way). A
/// [`Mover`](crate::movement::Mover) so answered stands where it is and
/// never arrives.
///
/// A goal that cannot be reached is not a failure by default: the unit
/// goes to the nearest place it can reach, and its arrival says so
/// ([`Arrival::NearestReachable`](crate::movement::Arrival::NearestReachable)).
///
/// ```
/// use bevy::prelude::*;
/// use bevy_frontier::prelude::*;
///
/// let mut app = App::new();
/// app.add_plugins((MinimalPlugins, FrontierPlugins::default()))
///     .add_observer(|failed: On<PathFailed>| {
///         warn!("{} cannot go there: {:?}", failed.entity, failed.status);
///     });
/// app.world_mut().spawn((NavGrid::new(16, 16).unwrap(), Transform::default()));
/// app.update();
/// // A goal off the map.
/// let unit = app
///     .world_mut()
///     .spawn((Transform::from_xyz(1.0, 1.0, 0.0), PathRequest::new(Vec2::new(99.0, 1.0))))
///     .id();
/// app.update();
/// let failed: Vec<PathFailed> = app
///     .world_mut()
///     .resource_mut::<Messages<PathFailed>>()
///     .drain()
///     .collect();
/// assert_eq!(failed[0].entity, unit);
/// assert_eq!(failed[0].status, PathStatus::Invalid(InvalidReason::GoalOutOfBounds));
/// ```
#[derive(EntityEvent, Message, Clone, Copy, Debug, PartialEq)]
pub struct PathFailed {
    /// The unit (or, for a group's shared search, the group's entity).
    pub entity: Entity,
    /// [`PathStatus::Unreachable`] or [`PathStatus::Invalid`].
    pub status: PathStatus,
}

/// A unit's finished path crosses a cell that changed (its
/// [`PathResult::invalidated`] was just set). Triggered as an observer event
/// and written as a message, like [`PathReady`].
#[derive(EntityEvent, Message, Clone, Copy, Debug, PartialEq)]
pub struct PathInvalidated {
    /// The unit.
    pub entity: Entity,
}

#[cfg(feature = "serialize")]
crate::remap::remap_fields!(PathResult { map });
