//! A group move's state: the order ([`GroupMove`]), who is in the group
//! ([`GroupMember`], [`GroupMembers`]), and the group entity's shared path
//! and where it stands ([`SharedRoute`]: searching, splicing heads and
//! tails, handing routes out).

use bevy::prelude::*;

use crate::core::{Cell, ClassId, Flood, ScratchPool, UnitKind};
use crate::movement::{MissesGoal, Mover, SharedWaypoints, Steering};
use crate::pathfinding::{PathRequest, PathStatus, PathTarget};

/// An order for many [`Mover`]s to one goal, sent as a message:
/// `commands.write_message(GroupMove::new(units, goal))`.
///
/// Units named twice count once; entities that are not movers are skipped.
/// An order whose goal or map is bad gives each unit a [`PathRequest`] to
/// the goal, so each gets the usual `Invalid` [`PathResult`](crate::pathfinding::PathResult).
#[derive(Message, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct GroupMove {
    /// The units.
    pub units: Vec<Entity>,
    /// Where they go.
    pub goal: PathTarget,
    /// The map; `None` for the only map there is.
    pub map: Option<Entity>,
    /// Priority of the searches, as [`PathRequest::priority`].
    pub priority: i32,
    /// k: how many steps of the shared path are left to each unit's own
    /// head and tail searches (fewer on paths shorter than 2k + 1 cells).
    pub splice_steps: u32,
    /// Units further than this many cells from the group's centre get a
    /// path of their own.
    pub max_spread: f32,
    /// Parallel columns along the shared path (1: single file).
    pub columns: u8,
    /// Distance between columns, in cells (not finite, or below 0: single
    /// file).
    pub column_spacing: f32,
    /// For a goal that is a unit ([`PathTarget::Entity`]): the range each
    /// unit chases it into, in world units ([`PathRequest::range`]). A
    /// group sent at a unit chases it unit by unit: each gets
    /// [`PathRequest::chase`]`(target, range)` (sixteen or more asking in
    /// one frame share one search back from the target), and each stops
    /// where it comes in range, so they close in round the target rather
    /// than onto one cell. Ignored for a goal that is a place.
    pub range: f32,
}

impl GroupMove {
    /// An order for `units` to go to `goal`, with k = 10 splice steps, a
    /// spread of 24 cells and three columns 0.6 cells apart.
    pub fn new(units: impl IntoIterator<Item = Entity>, goal: impl Into<PathTarget>) -> Self {
        Self {
            units: units.into_iter().collect(),
            goal: goal.into(),
            map: None,
            priority: 0,
            splice_steps: 10,
            max_spread: 24.0,
            columns: 3,
            column_spacing: 0.6,
            range: 0.0,
        }
    }

    /// Sent at a unit, each member chasing it into `range` world units
    /// ([`GroupMove::range`]).
    pub fn within(mut self, range: f32) -> Self {
        self.range = range;
        self
    }

    /// On the given map.
    pub fn on_map(mut self, map: Entity) -> Self {
        self.map = Some(map);
        self
    }

    /// With the given search priority.
    pub fn with_priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }

    /// With k splice steps.
    pub fn with_splice_steps(mut self, steps: u32) -> Self {
        self.splice_steps = steps;
        self
    }

    /// With units further than `cells` from the centre moving alone.
    pub fn with_max_spread(mut self, cells: f32) -> Self {
        self.max_spread = cells;
        self
    }

    /// With `columns` parallel columns `spacing` cells apart.
    pub fn in_columns(mut self, columns: u8, spacing: f32) -> Self {
        self.columns = columns;
        self.column_spacing = spacing;
        self
    }

    pub(super) fn solo_request(&self, goal: PathTarget, map: Option<Entity>) -> PathRequest {
        PathRequest {
            map,
            ..PathRequest::new(goal)
                .with_priority(self.priority)
                .within(self.range)
        }
    }
}

/// On a unit that takes part in a group move: the group's entity, which
/// holds a [`SharedRoute`]. Removed when the unit arrives, leaves the shared
/// path or gets an order of its own.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Reflect)]
#[reflect(Component)]
#[relationship(relationship_target = GroupMembers)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct GroupMember {
    /// The entity holding the group's [`SharedRoute`].
    pub group: Entity,
}

/// On a group's entity: the units in it, in the order they were ordered,
/// kept by Bevy from their [`GroupMember`]s.
#[derive(Component, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component)]
#[relationship_target(relationship = GroupMember)]
pub struct GroupMembers(Vec<Entity>);

impl GroupMembers {
    /// The units still in the group.
    pub fn units(&self) -> &[Entity] {
        &self.0
    }
}

/// A group move under way, on an entity of its own that also holds the
/// [`PathRequest`] (and then the [`PathResult`](crate::pathfinding::PathResult)) of the shared path and the
/// [`GroupMembers`]. It is despawned when no unit is left in the group.
#[derive(Component, Debug)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct SharedRoute {
    /// Order of creation: groups are served first come, first served.
    pub(super) sequence: u64,
    pub(super) map: Entity,
    /// The members' class and size: cells here are anchors of that size
    /// class, for that movement class.
    pub(super) kind: UnitKind,
    pub(super) goal: Cell,
    pub(super) priority: i32,
    pub(super) splice_steps: u32,
    pub(super) columns: u8,
    pub(super) column_spacing: f32,
    /// End slots kept for the members.
    pub(super) slots: Vec<Cell>,
    /// Each unit's end slot, once given.
    pub(super) assigned: Vec<(Entity, Cell)>,
    /// The shared middle of the path, in cells.
    pub(super) shared: Vec<Cell>,
    /// The shared middle walked by each column.
    pub(super) column_waypoints: Vec<SharedWaypoints>,
    pub(super) flood_expansions: u64,
    /// Times an edit sent the shared path back to be found again.
    pub(super) replans: u32,
    /// Whether the order's goal is where its units may not stand: the
    /// group goes to the nearest place they may.
    pub(super) off_ground: bool,
    /// How the shared search ended (`Complete` until it has).
    pub(super) status: PathStatus,
    /// Frames since the order.
    pub(super) frames: u32,
    pub(super) stage: Stage,
}

#[derive(Debug)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) enum Stage {
    Searching,
    Splicing(Box<Splice>),
    HandingOut(Handout),
    Done,
}

#[derive(Debug)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct Splice {
    pub(super) path: Vec<Cell>,
    /// Units and the cells they stood on when the floods began.
    pub(super) units: Vec<(Entity, Cell)>,
    pub(super) k: usize,
    pub(super) head: Flood,
    pub(super) tail: Flood,
}

impl SharedRoute {
    /// Whether the members' routes lead only to the reachable place
    /// nearest the goal (off their ground, or cut off): every member's
    /// order ends
    /// [`Arrival::NearestReachable`](crate::movement::Arrival::NearestReachable).
    pub(super) fn misses_goal(&self) -> bool {
        self.off_ground || self.status.misses_goal()
    }

    /// The status each member's [`PathReady`] gives: the shared search's,
    /// `NearestReachable` for a goal off the members' ground, as a unit
    /// ordered there alone would hear.
    pub(super) fn members_status(&self) -> PathStatus {
        match self.status {
            PathStatus::Complete if self.off_ground => PathStatus::NearestReachable,
            status => status,
        }
    }

    /// The map the group moves on.
    pub fn map(&self) -> Entity {
        self.map
    }

    /// The goal cell (the walkable cell nearest the order's goal; for
    /// units bigger than a cell, the anchor of their footprint).
    pub fn goal(&self) -> Cell {
        self.goal
    }

    /// The size of the group's units (their [`Footprint`](crate::pathfinding::Footprint)): a group order
    /// with units of several sizes makes one group per size.
    pub fn size(&self) -> u8 {
        self.kind.size
    }

    /// The movement class of the group's units (their [`MovementClass`](crate::pathfinding::MovementClass)):
    /// a group order with units of several classes makes one group per
    /// class (and size).
    pub fn class(&self) -> ClassId {
        self.kind.class
    }

    /// The end slot given to each unit of the order, solo units included
    /// (members get theirs when the path is spliced).
    pub fn slots(&self) -> &[(Entity, Cell)] {
        &self.assigned
    }

    /// The shared middle of the path, P\[k..=len−1−k\], once spliced.
    pub fn shared_cells(&self) -> &[Cell] {
        &self.shared
    }

    /// The shared waypoints of each column, once spliced.
    pub fn columns(&self) -> &[SharedWaypoints] {
        &self.column_waypoints
    }

    /// Whether every member has its route.
    pub fn is_spliced(&self) -> bool {
        matches!(self.stage, Stage::Done)
    }

    /// Cells the group's two floods expanded (the shared search's count is
    /// on its [`PathResult`](crate::pathfinding::PathResult)).
    pub fn flood_expansions(&self) -> u64 {
        self.flood_expansions
    }
}

/// Members given their route per frame, over all groups.
pub(super) const ROUTES_PER_FRAME: usize = 64;

/// Scratch space for the floods.
#[derive(Resource, Default)]
pub(crate) struct GroupScratch(pub(super) ScratchPool);

/// A member, the cell it stood on, its slot, and its own two paths (`None`
/// where a flood did not reach).
#[derive(Debug)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct Pair {
    pub(super) unit: Entity,
    pub(super) cell: Cell,
    pub(super) slot: Cell,
    pub(super) head: Option<Vec<Cell>>,
    pub(super) tail: Option<Vec<Cell>>,
}

/// Routes being handed out, a few each frame.
#[derive(Debug)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct Handout {
    pub(super) pairs: Vec<Pair>,
    pub(super) next: usize,
    /// The grid version the paths were found on (the older flood's).
    pub(super) version: u64,
}

/// The cell a footprint anchored at `anchor` is centred on, as a request
/// names it ([`PathTarget::Cell`] is read as that cell, and the unit's
/// anchor found from it).
pub(super) fn centre_cell(anchor: Cell, size: u8) -> PathTarget {
    let back = (size.max(1) as u32 - 1) / 2;
    PathTarget::Cell(Cell::new(anchor.x + back, anchor.y + back))
}

/// Gives `unit` a group order's `request` to a slot of its own, marked as
/// missing the order's goal when the group's does: the slot may be
/// reachable when the goal is not, and the unit's order ends as its
/// group's.
pub(super) fn order_alone(
    commands: &mut Commands,
    unit: Entity,
    request: PathRequest,
    misses_goal: bool,
) {
    let mut unit = commands.entity(unit);
    if misses_goal {
        let goal = request.goal;
        unit.insert((request, MissesGoal { goal }));
    } else {
        unit.insert(request).remove::<MissesGoal>();
    }
}

/// The movers a group's systems read and steer.
pub(super) type Units<'w, 's> = Query<
    'w,
    's,
    (
        &'static Transform,
        Option<&'static GroupMember>,
        &'static mut Steering,
    ),
    With<Mover>,
>;

/// Gives `unit` its own request to `slot` (which takes it out of the
/// group).
pub(super) fn send_alone(
    group: &mut SharedRoute,
    unit: Entity,
    slot: Cell,
    commands: &mut Commands,
) {
    group.assigned.push((unit, slot));
    let request = PathRequest::new(centre_cell(slot, group.kind.size))
        .on_map(group.map)
        .with_priority(group.priority);
    order_alone(commands, unit, request, group.misses_goal());
}

#[cfg(feature = "serialize")]
crate::remap::remap_fields!(GroupMove { units, goal, map });
#[cfg(feature = "serialize")]
crate::remap::remap_fields!(GroupMember { group });
#[cfg(feature = "serialize")]
crate::remap::remap_fields!(SharedRoute {
    map,
    assigned,
    stage
});
#[cfg(feature = "serialize")]
crate::remap::remap_fields!(Splice { units });
#[cfg(feature = "serialize")]
crate::remap::remap_fields!(Handout { pairs });
#[cfg(feature = "serialize")]
crate::remap::remap_fields!(Pair { unit });

#[cfg(feature = "serialize")]
impl crate::remap::Remap for Stage {
    fn remap(&mut self, to: &mut dyn FnMut(Entity) -> Entity) {
        match self {
            Stage::Splicing(splice) => crate::remap::Remap::remap(splice, to),
            Stage::HandingOut(handout) => crate::remap::Remap::remap(handout, to),
            Stage::Searching | Stage::Done => {}
        }
    }
}
