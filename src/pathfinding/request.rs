//! What a game puts on a unit: a [`PathRequest`].

use bevy::prelude::*;

use crate::core::{Cell, ClassId, MAX_UNIT_SIZE, UnitKind};
use crate::maps::GridLayout;
use crate::ordinal::{Ordinal, stamp_asked};

/// A point a path starts or ends at: a world position, a grid cell, or a
/// unit (any entity with a `Transform`), wherever it stands.
#[derive(Clone, Copy, Debug, PartialEq, Reflect)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub enum PathTarget {
    /// A position in world space (x, y); the cell it falls in is used.
    World(Vec2),
    /// A cell of the map's grid. A unit bigger than a cell (see
    /// [`Footprint`]) is centred on it: its anchor is the cell
    /// `(size − 1) / 2` cells lower in `x` and `y`.
    Cell(Cell),
    /// An entity's `Transform`, wherever it stands when the path is
    /// searched: a chase, or with [`PathRequest::follow`] an escort. On a
    /// [`Mover`](crate::movement::Mover) the order tracks the target every
    /// frame, asks for a new path when the target has gone far for what
    /// is left to walk (see [`movement::chase`](crate::movement::chase)),
    /// and ends when the unit is within [`PathRequest::range`] of it
    /// ([`Arrival::InRange`](crate::movement::Arrival::InRange)), or when
    /// the target is despawned or leaves the map
    /// ([`Arrival::TargetLost`](crate::movement::Arrival::TargetLost)). A
    /// request whose target has no `Transform` is answered
    /// [`InvalidReason::TargetLost`](super::InvalidReason::TargetLost).
    /// As a start it reads the same way (where the entity stands).
    Entity(Entity),
}

impl From<Entity> for PathTarget {
    fn from(entity: Entity) -> Self {
        PathTarget::Entity(entity)
    }
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
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub enum Unreachable {
    /// Go as close as possible: path to the reachable cell nearest the goal
    /// (status [`PathStatus::NearestReachable`](super::PathStatus::NearestReachable)). What a player expects when
    /// clicking on a lake or into a walled-off base.
    #[default]
    GoNearest,
    /// Give up at once with
    /// [`PathStatus::Unreachable`](super::PathStatus::Unreachable) and no
    /// path.
    Fail,
}

/// Ask for a path: put this on a unit. The unit's `Transform` is the start
/// unless [`PathRequest::start`] says otherwise.
///
/// Inserting a new `PathRequest` (or changing this one) replaces an
/// unfinished request; removing it, or despawning the unit, cancels it.
/// The answer arrives as a [`PathResult`](super::PathResult) component on
/// the same entity, and as a [`PathReady`](super::PathReady) event and
/// message.
#[derive(Component, Clone, Debug, PartialEq, Reflect)]
#[reflect(Component)]
#[require(Ordinal)]
#[component(on_insert = stamp_asked)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct PathRequest {
    /// Where to go.
    pub goal: PathTarget,
    /// Where to start; `None` means the entity's `Transform`. A `Mover`
    /// that can see none of the path found from here (it stands elsewhere)
    /// clears it and asks again from where it stands.
    pub start: Option<PathTarget>,
    /// The map entity (one with a `NavGrid`). Needed only when there is
    /// more than one map.
    pub map: Option<Entity>,
    /// Higher goes first; equal priorities are served first come, first
    /// served. Requests that wait gain priority over time, so none starves
    /// (see [`PathfindingSettings::aging_frames`](crate::schedule::PathfindingSettings::aging_frames)).
    ///
    /// With [`PathfindingSettings::share_goals`](crate::schedule::PathfindingSettings::share_goals)
    /// (on by default), requests of one priority sent to one goal from
    /// starts close together share one search, which ranks as its best
    /// request and answers them in the order it reaches their starts
    /// (nearest the goal first), not in the order they came. A request of
    /// another priority never joins it: a more urgent one gets its own
    /// search, which goes first.
    pub priority: i32,
    /// What to do when the goal cannot be reached.
    pub on_unreachable: Unreachable,
    /// Whether a quick path that ignores terrain costs may come first
    /// ([`PathStatus::Provisional`](super::PathStatus::Provisional)), on
    /// maps with terrain costs: when
    /// [`PathfindingSettings::refine`](crate::schedule::PathfindingSettings::refine)
    /// says so (`true`, the default), or never (`false`).
    pub refine: bool,
    /// How close is close enough, in world units (0, the default: on the
    /// goal). On a [`Mover`](crate::movement::Mover), the order ends
    /// ([`Arrival::InRange`](crate::movement::Arrival::InRange)) once the
    /// unit is this near its goal: between the two bodies' edges when the
    /// goal is a unit with a body (a `Mover`, an
    /// [`Avoidance`](crate::movement::Avoidance) radius or a
    /// [`Footprint`]), else between the unit's edge and the goal's point.
    /// A ranged unit ordered onto a building stops at range. Not finite
    /// or below 0 reads as 0. The path searched still leads to the goal.
    pub range: f32,
    /// For a goal that is a unit ([`PathTarget::Entity`]): follow it
    /// (escort, guard) rather than chase it. The order does not end in
    /// range: the unit stands while the target is within
    /// [`PathRequest::range`] and walks again when it leaves, until the
    /// game removes the order (or the target is lost). Ignored for a goal
    /// that is a place.
    pub keep_following: bool,
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
            refine: true,
            range: 0.0,
            keep_following: false,
        }
    }

    /// Chasing `target` (a unit, or any entity with a `Transform`) until
    /// within `range` world units of it ([`PathRequest::range`]).
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_frontier::prelude::*;
    ///
    /// # let mut world = World::new();
    /// let tank = world.spawn((Transform::from_xyz(40.5, 10.5, 0.0), Mover { speed: 2.0 })).id();
    /// // Infantry with a reach of 3 cells closes in to fire.
    /// world.spawn((
    ///     Transform::from_xyz(4.5, 4.5, 0.0),
    ///     Mover { speed: 3.0 },
    ///     PathRequest::chase(tank, 3.0),
    /// ));
    /// ```
    pub fn chase(target: Entity, range: f32) -> Self {
        Self::new(target).within(range)
    }

    /// Following `target` (escort, guard): standing while within `range`
    /// world units of it, walking again when it leaves, until the order
    /// is removed ([`PathRequest::keep_following`]).
    pub fn follow(target: Entity, range: f32) -> Self {
        Self {
            keep_following: true,
            ..Self::chase(target, range)
        }
    }

    /// Ending within `range` world units of the goal
    /// ([`PathRequest::range`]).
    pub fn within(mut self, range: f32) -> Self {
        self.range = range;
        self
    }

    /// The range as the plugin reads it: 0 when not finite or below 0.
    pub fn usable_range(&self) -> f32 {
        if self.range.is_finite() {
            self.range.max(0.0)
        } else {
            0.0
        }
    }

    /// The unit this request chases or follows, if its goal is one.
    pub fn target(&self) -> Option<Entity> {
        match self.goal {
            PathTarget::Entity(target) => Some(target),
            _ => None,
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

    /// Without a quick provisional path first: only the optimal one.
    pub fn without_refinement(mut self) -> Self {
        self.refine = false;
        self
    }

    /// Answering [`PathStatus::Unreachable`](super::PathStatus::Unreachable)
    /// instead of going to the nearest reachable cell.
    pub fn fail_if_unreachable(mut self) -> Self {
        self.on_unreachable = Unreachable::Fail;
        self
    }
}

/// How big a unit is on the grid: the side of its square footprint, in
/// cells (1 to [`MAX_UNIT_SIZE`]; a unit without one is 1×1).
///
/// A unit of size `k` is routed only where its whole `k × k` footprint
/// fits, never through a gap narrower than itself, and each step costs the
/// dearest cell under it. Its `Transform` is the centre of the footprint;
/// its path's cells are anchors, the footprint's lowest-`x`, lowest-`y`
/// cells, and its waypoints the footprint's centres ([`Footprint::centre`]
/// places a unit by its anchor). A size outside the range is answered
/// [`InvalidReason::BadFootprint`](super::InvalidReason::BadFootprint).
///
/// ```
/// use bevy::prelude::*;
/// use bevy_frontier::prelude::*;
///
/// # let mut world = World::new();
/// // A 2×2 vehicle.
/// world.spawn((
///     Transform::from_xyz(4.5, 4.5, 0.0),
///     Footprint(2),
///     Mover { speed: 3.0 },
///     PathRequest::new(Vec2::new(40.5, 10.5)),
/// ));
/// ```
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash, Reflect)]
#[reflect(Component)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct Footprint(pub u8);

/// Which ground a unit may walk and what each terrain costs it: an id of
/// the [movement classes](crate::core::MovementClasses) registered on its
/// map's grid ([`NavGrid::set_classes`](crate::core::NavGrid::set_classes)).
/// It holds the [`ClassId`] that
/// [`MovementClasses::add`](crate::core::MovementClasses::add) returned.
/// A unit without one is of [`ClassId::DEFAULT`], the grid's default, which
/// on a map without classes reads the cells' own costs. A class the map does not
/// have is answered
/// [`InvalidReason::UnknownClass`](super::InvalidReason::UnknownClass).
///
/// Everything that holds per unit size holds per class and size: regions,
/// clearance, jump points, the coarse graph, shared searches and group
/// moves (a mixed group splits by class), and the walk, passages and the
/// separation of bodies, which keep a unit on ground its class may enter.
/// Units of every class avoid each other.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_frontier::prelude::*;
///
/// # let mut world = World::new();
/// let mut classes = MovementClasses::new();
/// let _foot = classes.add("foot", [(Terrain(1), 1)]);
/// let boat = classes.add("boat", [(Terrain(2), 1)]);
/// // A 2×2 boat.
/// world.spawn((
///     Transform::from_xyz(4.5, 4.5, 0.0),
///     Footprint(2),
///     MovementClass(boat),
///     Mover { speed: 2.0 },
///     PathRequest::new(Vec2::new(40.5, 10.5)),
/// ));
/// ```
///
/// A terrain type, or a bare number, is not a class:
///
/// ```compile_fail
/// use bevy_frontier::prelude::*;
///
/// const WATER: Terrain = Terrain(2);
/// let boat = MovementClass(WATER);
/// ```
///
/// ```compile_fail
/// use bevy_frontier::prelude::*;
///
/// let boat = MovementClass(1);
/// ```
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Reflect)]
#[reflect(Component)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct MovementClass(pub ClassId);

impl From<ClassId> for MovementClass {
    fn from(class: ClassId) -> Self {
        Self(class)
    }
}

/// What a query reads of a unit to know its class and size
/// ([`unit_kind`]).
pub(crate) type KindData = (Option<&'static Footprint>, Option<&'static MovementClass>);

/// The class and size of a unit with these components.
pub(crate) fn unit_kind(footprint: Option<&Footprint>, class: Option<&MovementClass>) -> UnitKind {
    UnitKind::new(
        class.copied().unwrap_or_default().0,
        footprint.copied().unwrap_or_default().0,
    )
}

impl Default for Footprint {
    fn default() -> Self {
        Self(1)
    }
}

impl Footprint {
    /// Whether the size is one a grid answers for (1 to [`MAX_UNIT_SIZE`]).
    pub fn is_valid(self) -> bool {
        (1..=MAX_UNIT_SIZE).contains(&self.0)
    }

    /// Where a unit of this size stands when its square's lowest-`x`,
    /// lowest-`y` cell (its *anchor*) is `anchor`: the square's centre, which
    /// is what its `Transform` must hold. In the map's local space under
    /// `layout`, which is the world when the map's `Transform` is the
    /// identity (otherwise put it through that transform, or ask
    /// [`MapView::cell_to_world`](crate::maps::MapView::cell_to_world) of a
    /// view for this size).
    ///
    /// Placing a k×k unit at its anchor cell's centre instead puts its
    /// square (k − 1)/2 cells up and right of where it was meant to be: on a
    /// map edge, its anchor is then off the map and its requests are
    /// answered [`InvalidReason::StartOutOfBounds`](super::InvalidReason::StartOutOfBounds).
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_frontier::prelude::*;
    ///
    /// let layout = GridLayout::default(); // cells one unit wide, (0, 0) at the origin
    /// // A 3×3 tank whose square covers cells (0..=2, 0..=2) stands at (1, 1).
    /// assert_eq!(Footprint(3).centre(Cell::new(0, 0), &layout), Vec2::new(1.0, 1.0));
    /// // A 2×2 one covering (4..=5, 6..=7), at the corner the four share.
    /// assert_eq!(Footprint(2).centre(Cell::new(4, 6), &layout), Vec2::new(4.5, 6.5));
    /// assert_eq!(Footprint(2).anchor(Vec2::new(4.5, 6.5), &layout), Some((4, 6)));
    /// ```
    pub fn centre(self, anchor: Cell, layout: &GridLayout) -> Vec2 {
        layout.cell_center(anchor) + layout.cell_size * (self.0.max(1) as f32 - 1.0) / 2.0
    }

    /// The anchor (its square's lowest-`x`, lowest-`y` cell, as cell
    /// coordinates that may lie off the grid) of a unit of this size
    /// standing at `centre`, in the map's local space under `layout`: the
    /// inverse of [`Footprint::centre`]. `None` for a position that is not
    /// finite or a layout that cannot place cells.
    pub fn anchor(self, centre: Vec2, layout: &GridLayout) -> Option<(i64, i64)> {
        let back = layout.cell_size * (self.0.max(1) as f32 - 1.0) / 2.0;
        layout.local_to_cell(centre - back)
    }
}

#[cfg(feature = "serialize")]
crate::remap::remap_fields!(PathRequest { goal, start, map });

#[cfg(feature = "serialize")]
impl crate::remap::Remap for PathTarget {
    fn remap(&mut self, to: &mut dyn FnMut(Entity) -> Entity) {
        if let PathTarget::Entity(entity) = self {
            *entity = to(*entity);
        }
    }
}
