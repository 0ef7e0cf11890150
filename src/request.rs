//! What a game puts on a unit ([`PathRequest`]) and what it gets back
//! ([`PathResult`], the [`PathReady`] event and the [`PathReadyMessage`]
//! stream).

use std::fmt;

use bevy::prelude::*;

use crate::grid::Cell;

/// A point a path starts or ends at: a world position or a grid cell.
#[derive(Clone, Copy, Debug, PartialEq, Reflect)]
pub enum PathTarget {
    /// A position in world space (x, y); the cell it falls in is used.
    World(Vec2),
    /// A cell of the map's grid.
    Cell(Cell),
}

impl From<Vec2> for PathTarget {
    fn from(position: Vec2) -> Self {
        PathTarget::World(position)
    }
}

impl From<Cell> for PathTarget {
    fn from(cell: Cell) -> Self {
        PathTarget::Cell(cell)
    }
}

/// What to do when the goal cannot be reached from the start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
pub enum Unreachable {
    /// Go as close as possible: path to the reachable cell nearest the goal
    /// (status [`PathStatus::NearestReachable`]). What a player expects when
    /// clicking on a lake or into a walled-off base.
    #[default]
    GoNearest,
    /// Give up at once with [`PathStatus::Unreachable`] and no path.
    Fail,
}

/// Ask for a path: put this on a unit. The unit's `Transform` is the start
/// unless [`PathRequest::start`] says otherwise.
///
/// Inserting a new `PathRequest` (or changing this one) replaces an
/// unfinished request; removing it, or despawning the unit, cancels it.
/// The answer arrives as a [`PathResult`] component on the same entity.
#[derive(Component, Clone, Debug, PartialEq, Reflect)]
#[reflect(Component)]
pub struct PathRequest {
    /// Where to go.
    pub goal: PathTarget,
    /// Where to start; `None` means the entity's `Transform`.
    pub start: Option<PathTarget>,
    /// The map entity (one with a `NavGrid`). Needed only when there is
    /// more than one map.
    pub map: Option<Entity>,
    /// Higher goes first; equal priorities are served first come, first
    /// served. Requests that wait gain priority over time, so none starves
    /// (see `PathfindingSettings::aging_frames`).
    pub priority: i32,
    /// What to do when the goal cannot be reached.
    pub on_unreachable: Unreachable,
}

impl PathRequest {
    /// A request to reach `goal` (a world position or a [`Cell`]).
    pub fn new(goal: impl Into<PathTarget>) -> Self {
        Self {
            goal: goal.into(),
            start: None,
            map: None,
            priority: 0,
            on_unreachable: Unreachable::GoNearest,
        }
    }

    /// Starting somewhere other than the entity's `Transform`.
    pub fn from(mut self, start: impl Into<PathTarget>) -> Self {
        self.start = Some(start.into());
        self
    }

    /// On the map entity `map`.
    pub fn on_map(mut self, map: Entity) -> Self {
        self.map = Some(map);
        self
    }

    /// With priority `priority` (higher first).
    pub fn with_priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }

    /// Answering [`PathStatus::Unreachable`] instead of going to the nearest
    /// reachable cell.
    pub fn fail_if_unreachable(mut self) -> Self {
        self.on_unreachable = Unreachable::Fail;
        self
    }
}

/// Why a request could not be served.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Reflect)]
pub enum InvalidReason {
    /// The start lies outside the map.
    StartOutOfBounds,
    /// The goal lies outside the map.
    GoalOutOfBounds,
    /// The start position is NaN or infinite (or the map's transform is
    /// degenerate).
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
}

impl fmt::Display for InvalidReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InvalidReason::StartOutOfBounds => "the start is outside the map",
            InvalidReason::GoalOutOfBounds => "the goal is outside the map",
            InvalidReason::NonFiniteStart => "the start position is not finite",
            InvalidReason::NonFiniteGoal => "the goal position is not finite",
            InvalidReason::NoStartPosition => "no start given and the entity has no Transform",
            InvalidReason::NoMap => "there is no map with a NavGrid",
            InvalidReason::AmbiguousMap => "several maps exist and the request named none",
            InvalidReason::MapRemoved => "the map was removed during the search",
            InvalidReason::NoWalkableStart => "the map has no walkable cell near the start",
        })
    }
}

/// How a request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Reflect)]
pub enum PathStatus {
    /// An optimal path to the goal.
    Complete,
    /// The goal was unreachable (or a wall); the path leads to the reachable
    /// cell nearest to it.
    NearestReachable,
    /// The search hit its expansion cap; the path leads to the explored cell
    /// nearest the goal.
    Partial,
    /// The goal cannot be reached and the request asked not to go near it.
    Unreachable,
    /// The request was bad; nothing was searched.
    Invalid(InvalidReason),
}

impl PathStatus {
    /// Whether the result carries a path to follow.
    pub fn has_path(self) -> bool {
        matches!(
            self,
            PathStatus::Complete | PathStatus::NearestReachable | PathStatus::Partial
        )
    }
}

/// The answer to a [`PathRequest`], inserted on the requesting entity when
/// its search ends.
#[derive(Component, Clone, Debug, PartialEq, Reflect)]
#[reflect(Component)]
pub struct PathResult {
    /// How the request ended.
    pub status: PathStatus,
    /// The map the path is on (`None` when no map could be chosen).
    pub map: Option<Entity>,
    /// The cells from start to end (empty without a path).
    pub cells: Vec<Cell>,
    /// The centres of `cells` in world space.
    pub waypoints: Vec<Vec2>,
    /// The path's cost (an orthogonal step on plain ground costs 1).
    pub cost: f32,
    /// Nodes expanded to find it, over every frame it took.
    pub expansions: u64,
    /// Frames from the request to this result (0: answered in the frame
    /// the request was seen).
    pub frames_waited: u32,
    /// The grid version the path was found on.
    pub grid_version: u64,
    /// Set when a cell on the path changed after it was found (a wall went
    /// up, or the terrain cost changed): the path may be blocked or no longer
    /// the best, and should be planned again.
    pub invalidated: bool,
}

impl PathResult {
    /// A result with no path.
    pub fn without_path(status: PathStatus, map: Option<Entity>, frames_waited: u32) -> Self {
        Self {
            status,
            map,
            cells: Vec::new(),
            waypoints: Vec::new(),
            cost: 0.0,
            expansions: 0,
            frames_waited,
            grid_version: 0,
            invalidated: false,
        }
    }
}

/// Triggered on a unit when its [`PathResult`] has been inserted; observe it
/// with `app.add_observer(|ready: On<PathReady>| ...)` or on the entity.
#[derive(EntityEvent, Clone, Copy, Debug, PartialEq)]
pub struct PathReady {
    /// The unit.
    pub entity: Entity,
    /// How its request ended.
    pub status: PathStatus,
}

/// The same news as [`PathReady`], as a buffered stream for systems that
/// read `MessageReader<PathReadyMessage>`.
#[derive(Message, Clone, Copy, Debug, PartialEq)]
pub struct PathReadyMessage {
    /// The unit.
    pub entity: Entity,
    /// How its request ended.
    pub status: PathStatus,
    /// Nodes expanded for it.
    pub expansions: u64,
    /// Frames from request to result.
    pub frames_waited: u32,
}

/// Triggered on a unit whose finished path crosses a cell that changed (its
/// [`PathResult::invalidated`] was just set).
#[derive(EntityEvent, Clone, Copy, Debug, PartialEq)]
pub struct PathInvalidated {
    /// The unit.
    pub entity: Entity,
}
