//! Group moves: one order for many units, one long search for all of them.
//!
//! A [`GroupMove`] names the units and the goal. The plugin finds one path
//! P from the group's centre (the walkable cell nearest to the units' mean
//! position in the goal's region) to the goal; meanwhile every unit walks on
//! instinct. When P arrives, two floods (Dijkstra searches that stop once
//! every target is settled) give every unit at once its own short head, from
//! where it stands to the splice cell P\[k\], and its own short tail, from
//! P\[len−1−k\] to its end slot. The middle of P is string-pulled once and
//! shared by every unit (reference-counted, one copy per lane). Routes are
//! handed out a few dozen a frame, so no frame pays for a whole army.
//!
//! End slots are distinct walkable cells around the goal in its region,
//! taken breadth-first, so the group spreads out on arrival instead of piling
//! onto one cell. The first units to arrive take the slots deepest past the
//! tail's splice cell, so later ones do not walk through them. Units far from
//! the centre or in another region get a [`PathRequest`] of their own to
//! their slot instead.
//!
//! Membership is a Bevy relationship: a unit's [`GroupMember`] points at the
//! group entity, whose [`GroupMembers`] Bevy keeps up to date, so a unit
//! despawned, arrived, or given an order of its own is never left behind in
//! a list.

use std::collections::HashSet;

use bevy::ecs::intern::Interned;
use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;

use crate::clock;
use crate::core::{Cell, ClassId, Flood, FloodDirection, ScratchPool, SizeClass, UnitKind};
use crate::maps::{MapView, Maps};
use crate::movement::{
    Arrived, Edits, MissesGoal, MovementPlugin, Mover, Route, SharedWaypoints, Steering,
    UnitArrived, join_path, smooth,
};
use crate::pathfinding::{
    Footprint, KindData, MovementClass, PathReady, PathRequest, PathResult, PathStatus, PathTarget,
    PathfindingStats, locate, unit_kind,
};
use crate::schedule::{FrameBudget, FrontierSystems, PathfindingSettings, deal, run_lanes};

/// Group moves: [`GroupMove`] orders become one shared path, heads and
/// tails from two budgeted floods, and routes handed out a few dozen a
/// frame.
///
/// # Systems
/// - In [`FrontierSystems::Orders`]: `retire_groups` (despawns groups no
///   unit is left in), then `start_group_moves` (reads [`GroupMove`]s).
/// - In [`FrontierSystems::GroupRoutes`]: `splice_groups` (runs the floods
///   on the frame's budget, before the searches, and gives members their
///   routes).
///
/// Observers take a unit out of its group when it arrives or gets an order
/// of its own.
pub struct GroupsPlugin {
    /// The schedule to run in; the one the other plugins run in.
    pub schedule: Interned<dyn ScheduleLabel>,
}

impl GroupsPlugin {
    /// The plugin, running in `schedule`.
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
        }
    }
}

impl Default for GroupsPlugin {
    fn default() -> Self {
        Self::new(Update)
    }
}

impl Plugin for GroupsPlugin {
    fn build(&self, app: &mut App) {
        MovementPlugin::add_once(app, self.schedule);
        app.register_type::<GroupMember>()
            .register_type::<GroupMembers>()
            .add_message::<GroupMove>()
            .init_resource::<GroupScratch>()
            .add_observer(leave_on_arrival)
            .add_observer(leave_on_own_order)
            .add_systems(
                self.schedule,
                (
                    (retire_groups, start_group_moves)
                        .chain()
                        .in_set(FrontierSystems::Orders),
                    splice_groups.in_set(FrontierSystems::GroupRoutes),
                ),
            );
    }
}

/// An order for many [`Mover`]s to one goal, sent as a message:
/// `commands.write_message(GroupMove::new(units, goal))`.
///
/// Units named twice count once; entities that are not movers are skipped.
/// An order whose goal or map is bad gives each unit a [`PathRequest`] to
/// the goal, so each gets the usual `Invalid` [`PathResult`].
#[derive(Message, Clone, Debug, PartialEq)]
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
    /// Parallel lanes along the shared path (1: single file).
    pub lanes: u8,
    /// Distance between lanes, in cells (not finite, or below 0: single
    /// file).
    pub lane_spacing: f32,
}

impl GroupMove {
    /// An order for `units` to go to `goal`, with k = 10 splice steps, a
    /// spread of 24 cells and three lanes 0.6 cells apart.
    pub fn new(units: impl IntoIterator<Item = Entity>, goal: impl Into<PathTarget>) -> Self {
        Self {
            units: units.into_iter().collect(),
            goal: goal.into(),
            map: None,
            priority: 0,
            splice_steps: 10,
            max_spread: 24.0,
            lanes: 3,
            lane_spacing: 0.6,
        }
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

    /// With `lanes` parallel lanes `spacing` cells apart.
    pub fn with_lanes(mut self, lanes: u8, spacing: f32) -> Self {
        self.lanes = lanes;
        self.lane_spacing = spacing;
        self
    }

    fn solo_request(&self, goal: PathTarget, map: Option<Entity>) -> PathRequest {
        PathRequest {
            map,
            ..PathRequest::new(goal).with_priority(self.priority)
        }
    }
}

/// On a unit that takes part in a group move: the group's entity, which
/// holds a [`SharedRoute`]. Removed when the unit arrives, leaves the shared
/// path or gets an order of its own.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Reflect)]
#[reflect(Component)]
#[relationship(relationship_target = GroupMembers)]
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
/// [`PathRequest`] (and then the [`PathResult`]) of the shared path and the
/// [`GroupMembers`]. It is despawned when no unit is left in the group.
#[derive(Component, Debug)]
pub struct SharedRoute {
    /// Order of creation: groups are served first come, first served.
    sequence: u64,
    map: Entity,
    /// The members' class and size: cells here are anchors of that size
    /// class, for that movement class.
    kind: UnitKind,
    goal: Cell,
    priority: i32,
    splice_steps: u32,
    lanes: u8,
    lane_spacing: f32,
    /// End slots kept for the members.
    slots: Vec<Cell>,
    /// Each unit's end slot, once given.
    assigned: Vec<(Entity, Cell)>,
    /// The shared middle of the path, in cells.
    shared: Vec<Cell>,
    /// The shared middle walked by each lane.
    lane_waypoints: Vec<SharedWaypoints>,
    flood_expansions: u64,
    /// Times an edit sent the shared path back to be found again.
    replans: u32,
    /// Whether the order's goal is where its units may not stand: the
    /// group goes to the nearest place they may.
    off_ground: bool,
    /// How the shared search ended (`Complete` until it has).
    status: PathStatus,
    /// Frames since the order.
    frames: u32,
    stage: Stage,
}

#[derive(Debug)]
enum Stage {
    Searching,
    Splicing(Box<Splice>),
    HandingOut(Handout),
    Done,
}

#[derive(Debug)]
struct Splice {
    path: Vec<Cell>,
    /// Units and the cells they stood on when the floods began.
    units: Vec<(Entity, Cell)>,
    k: usize,
    head: Flood,
    tail: Flood,
}

impl SharedRoute {
    /// Whether the members' routes lead only to the reachable place
    /// nearest the goal (off their ground, or cut off): every member's
    /// order ends
    /// [`Arrival::NearestReachable`](crate::movement::Arrival::NearestReachable).
    fn misses_goal(&self) -> bool {
        self.off_ground || self.status.misses_goal()
    }

    /// The status each member's [`PathReady`] gives: the shared search's,
    /// `NearestReachable` for a goal off the members' ground, as a unit
    /// ordered there alone would hear.
    fn members_status(&self) -> PathStatus {
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

    /// The size of the group's units (their [`Footprint`]): a group order
    /// with units of several sizes makes one group per size.
    pub fn size(&self) -> u8 {
        self.kind.size
    }

    /// The movement class of the group's units (their [`MovementClass`]):
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

    /// The shared waypoints of each lane, once spliced.
    pub fn lanes(&self) -> &[SharedWaypoints] {
        &self.lane_waypoints
    }

    /// Whether every member has its route.
    pub fn is_spliced(&self) -> bool {
        matches!(self.stage, Stage::Done)
    }

    /// Cells the group's two floods expanded (the shared search's count is
    /// on its [`PathResult`]).
    pub fn flood_expansions(&self) -> u64 {
        self.flood_expansions
    }
}

/// Members given their route per frame, over all groups.
const ROUTES_PER_FRAME: usize = 64;

/// Scratch space for the floods.
#[derive(Resource, Default)]
pub(crate) struct GroupScratch(ScratchPool);

/// The cell a footprint anchored at `anchor` is centred on, as a request
/// names it ([`PathTarget::Cell`] is read as that cell, and the unit's
/// anchor found from it).
fn centre_cell(anchor: Cell, size: u8) -> PathTarget {
    let back = (size.max(1) as u32 - 1) / 2;
    PathTarget::Cell(Cell::new(anchor.x + back, anchor.y + back))
}

/// End slots for `count` units of one size: anchors of `goal`'s region
/// nearest to it, breadth-first, whose footprints overlap no cell in
/// `taken` (the slots of the order's other units); their cells are added to
/// it. Fewer than `count` when the region has no more room.
fn end_slots(
    class: SizeClass<'_>,
    goal: Cell,
    count: usize,
    taken: &mut HashSet<Cell>,
) -> Vec<Cell> {
    let size = class.size() as u32;
    let footprint = move |anchor: Cell| {
        (0..size)
            .flat_map(move |dy| (0..size).map(move |dx| Cell::new(anchor.x + dx, anchor.y + dy)))
    };
    let mut slots = Vec::new();
    let mut queue = std::collections::VecDeque::from([goal]);
    let mut seen = HashSet::from([goal]);
    while let Some(anchor) = queue.pop_front() {
        if slots.len() == count {
            break;
        }
        if footprint(anchor).all(|cell| !taken.contains(&cell)) {
            taken.extend(footprint(anchor));
            slots.push(anchor);
        }
        for (next, _) in class.neighbors(anchor) {
            if seen.insert(next) {
                queue.push_back(next);
            }
        }
    }
    slots
}

/// `FrontierSystems::Orders`: turns [`GroupMove`]s into a group entity
/// searching the shared path, members walking on instinct, and solo
/// requests for the units too far away. Units of different sizes
/// ([`Footprint`]) or classes ([`MovementClass`]) move as one group per
/// class and size, each on a shared path wide enough for it and on ground
/// its class may enter; all of the order's end slots are distinct, no two
/// footprints overlapping.
pub(crate) fn start_group_moves(
    mut orders: MessageReader<GroupMove>,
    units: Query<(&Transform, KindData), With<Mover>>,
    maps: Maps,
    mut commands: Commands,
    mut sequence: Local<u64>,
) {
    for order in orders.read() {
        let mut seen = HashSet::new();
        let movers: Vec<(Entity, Vec2, UnitKind)> = order
            .units
            .iter()
            .filter(|&&unit| seen.insert(unit))
            .filter_map(|&unit| {
                let (transform, (footprint, class)) = units.get(unit).ok()?;
                let kind = unit_kind(footprint, class);
                Some((unit, transform.translation.truncate(), kind))
            })
            .collect();
        if movers.is_empty() {
            continue;
        }
        let Ok((map, view)) = maps.find(order.map) else {
            for &(unit, _, _) in &movers {
                commands
                    .entity(unit)
                    .insert(order.solo_request(order.goal, order.map));
            }
            continue;
        };
        // Biggest first: their slots are the hardest to fit. Then by class.
        let mut kinds: Vec<UnitKind> = movers.iter().map(|m| m.2).collect();
        kinds.sort_unstable_by(|a, b| (b.size, a.class).cmp(&(a.size, b.class)));
        kinds.dedup();
        let mut taken = HashSet::new();
        for kind in kinds {
            let class_movers: Vec<(Entity, Vec2)> = movers
                .iter()
                .filter(|m| m.2 == kind)
                .map(|&(unit, position, _)| (unit, position))
                .collect();
            if !Footprint(kind.size).is_valid() || !view.knows(kind) {
                // Each is answered `BadFootprint` or `UnknownClass`.
                for &(unit, _) in &class_movers {
                    commands
                        .entity(unit)
                        .insert(order.solo_request(order.goal, Some(map)));
                }
                continue;
            }
            let view = view.for_kind(kind);
            let group = ClassOrder {
                order,
                map,
                view,
                sequence: *sequence,
            };
            if group.start(&class_movers, &mut taken, &mut commands) {
                *sequence += 1;
            }
        }
    }
}

/// The part of a group order for the units of one size, seen through
/// `view` (for that size).
struct ClassOrder<'a> {
    order: &'a GroupMove,
    map: Entity,
    view: MapView<'a>,
    /// The group's place in the first-come, first-served order.
    sequence: u64,
}

impl ClassOrder<'_> {
    /// Starts the move of `movers`: a group with a shared path, solo
    /// requests, or both. Returns whether a group was made.
    fn start(
        &self,
        movers: &[(Entity, Vec2)],
        taken: &mut HashSet<Cell>,
        commands: &mut Commands,
    ) -> bool {
        let Self {
            order,
            map,
            view,
            sequence,
        } = *self;
        let grid = view.class();
        let all_solo = |commands: &mut Commands| {
            for &(unit, _) in movers {
                commands
                    .entity(unit)
                    .insert(order.solo_request(order.goal, Some(map)));
            }
        };
        // A goal where the units may not stand (a wall, water for foot
        // soldiers) is taken as the nearest place they may: every unit's
        // order ends short of it, as a unit's ordered alone would.
        let mut off_ground = false;
        let goal = locate(&view, order.goal, true).ok().and_then(|cell| {
            if grid.is_walkable(cell) {
                Some(cell)
            } else {
                off_ground = true;
                grid.nearest_walkable((cell.x as i64, cell.y as i64), None)
            }
        });
        let Some((goal, region)) = goal.and_then(|g| Some((g, grid.region(g)?))) else {
            all_solo(commands);
            return false;
        };
        // The cell of each unit standing in the goal's region.
        let cells: Vec<Option<Cell>> = movers
            .iter()
            .map(|&(_, position)| {
                view.cell_at(position)
                    .filter(|&c| grid.region(c) == Some(region))
            })
            .collect();
        // The centre: the walkable cell nearest their mean position.
        let in_region = || movers.iter().zip(&cells).filter(|(_, c)| c.is_some());
        let count = in_region().count();
        let centre = (count > 0)
            .then(|| in_region().map(|(&(_, p), _)| p).sum::<Vec2>() / count as f32)
            .and_then(|mean| view.cell_at(mean))
            .and_then(|c| grid.nearest_walkable((c.x as i64, c.y as i64), Some(region)));
        let (mut members, mut solo) = (Vec::new(), Vec::new());
        for (&(unit, _), cell) in movers.iter().zip(&cells) {
            match (cell, centre) {
                (Some(cell), Some(centre))
                    if cell.octile_distance(centre) <= order.max_spread as f64 =>
                {
                    members.push(unit)
                }
                _ => solo.push(unit),
            }
        }
        if members.len() < 2 {
            // Nothing to share: every unit goes alone.
            members.clear();
            solo = movers.iter().map(|&(unit, _)| unit).collect();
        }
        // Members take the slots nearest the goal, solo units the next; a
        // region with room for fewer footprints than units shares them out.
        let mut slots = end_slots(grid, goal, movers.len(), taken);
        if slots.is_empty() {
            slots.push(goal);
        }
        let slot = |i: usize| slots[i % slots.len()];
        let mut assigned = Vec::new();
        for (i, &unit) in solo.iter().enumerate() {
            let slot = slot(members.len() + i);
            assigned.push((unit, slot));
            let target = centre_cell(slot, view.size());
            order_alone(
                commands,
                unit,
                order.solo_request(target, Some(map)),
                off_ground,
            );
        }
        if members.is_empty() {
            return false;
        }
        let group = commands.spawn_empty().id();
        let goal_position = view.cell_to_world(goal);
        for &unit in &members {
            commands
                .entity(unit)
                .remove::<(PathRequest, PathResult, Arrived, MissesGoal)>()
                .insert((
                    GroupMember { group },
                    Steering::Instinct {
                        goal: goal_position,
                        map,
                    },
                ));
        }
        let slots = (0..members.len()).map(slot).collect();
        commands.entity(group).insert((
            Footprint(view.size()),
            MovementClass(view.kind().class),
            SharedRoute {
                sequence,
                map,
                kind: view.kind(),
                goal,
                priority: order.priority,
                splice_steps: order.splice_steps,
                lanes: order.lanes.max(1),
                // A spacing that is not a finite distance ≥ 0 would give
                // lanes of NaN or reversed waypoints: single file instead.
                lane_spacing: if order.lane_spacing.is_finite() {
                    order.lane_spacing.max(0.0)
                } else {
                    0.0
                },
                slots,
                assigned,
                shared: Vec::new(),
                lane_waypoints: Vec::new(),
                flood_expansions: 0,
                replans: 0,
                off_ground,
                status: PathStatus::Complete,
                frames: 0,
                stage: Stage::Searching,
            },
            PathRequest {
                start: centre.map(|c| centre_cell(c, view.size())),
                // The floods splice onto the optimal path, not a quick one.
                ..PathRequest::new(centre_cell(goal, view.size()))
                    .on_map(map)
                    .with_priority(order.priority)
                    .without_refinement()
            },
        ));
        true
    }
}

/// The movers a group's systems read and steer.
type Units<'w, 's> = Query<
    'w,
    's,
    (
        &'static Transform,
        Option<&'static GroupMember>,
        &'static mut Steering,
    ),
    With<Mover>,
>;

/// Members of a group still standing somewhere, and where.
fn current_members(members: Option<&GroupMembers>, units: &Units) -> Vec<(Entity, Vec2)> {
    members
        .map(GroupMembers::units)
        .unwrap_or_default()
        .iter()
        .filter_map(|&unit| {
            let (transform, _, _) = units.get(unit).ok()?;
            Some((unit, transform.translation.truncate()))
        })
        .collect()
}

/// `FrontierSystems::GroupRoutes`, before the searches: groups whose shared
/// path arrived start their floods, and floods run on the frame's node
/// budget (first call on it). Finished floods give every member its route.
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub(crate) fn splice_groups(
    mut groups: Query<(
        Entity,
        &mut SharedRoute,
        Option<&GroupMembers>,
        Option<&PathResult>,
        &mut PathRequest,
    )>,
    mut units: Units,
    maps: Maps<Without<Mover>>,
    mut budget: ResMut<FrameBudget>,
    settings: Res<PathfindingSettings>,
    mut stats: ResMut<PathfindingStats>,
    mut scratch: ResMut<GroupScratch>,
    mut commands: Commands,
) {
    let began = clock::now();
    // Two floods a group; what more were given back is freed.
    scratch.0.set_limit(4);
    let mut order: Vec<_> = groups.iter_mut().collect();
    order.sort_by_key(|(_, group, _, _, _)| group.sequence);
    // Routes are handed out a few dozen a frame, so a big group does not
    // make one frame long.
    let mut routes_left = ROUTES_PER_FRAME;
    let mut splicing = order
        .iter()
        .any(|(_, group, _, _, _)| matches!(group.stage, Stage::Splicing(_)));
    // With several search lanes, the floods of splicing groups run side by
    // side after this loop instead of one after the other in it.
    let lanes = budget.lane_count();
    let mut side_by_side = vec![false; order.len()];
    for (index, (entity, group, members, result, request)) in order.iter_mut().enumerate() {
        let (entity, members, result) = (*entity, *members, *result);
        let group = &mut **group;
        if matches!(group.stage, Stage::Done) {
            continue;
        }
        group.frames = group.frames.saturating_add(1);
        let Some(view) = maps.get(group.map) else {
            disband(group, members, &units, &mut commands, &mut scratch.0);
            continue;
        };
        let view = view.for_kind(group.kind);
        let grid = view.grid;
        if matches!(group.stage, Stage::HandingOut(_))
            && let Stage::HandingOut(mut handout) = std::mem::replace(&mut group.stage, Stage::Done)
        {
            routes_left -= assign_routes(
                entity,
                group,
                &mut handout,
                &view,
                &mut units,
                &mut commands,
                routes_left,
            );
            if handout.next < handout.pairs.len() {
                group.stage = Stage::HandingOut(handout);
            }
            continue;
        }
        if let Stage::Searching = group.stage {
            let Some(result) = result else {
                continue;
            };
            if !result.status.has_path() {
                disband(group, members, &units, &mut commands, &mut scratch.0);
                continue;
            }
            if result.invalidated
                && !keep_flagged(group.replans, settings.max_restarts, &view, &result.cells)
            {
                // An edit made the shared path illegal or dearer.
                replan(entity, group, request, &mut commands, &mut scratch.0);
                continue;
            }
            // Floods start only with budget to run on, and only one group
            // at a time sets up new scratch (grid-sized), so a frame where
            // many shared paths arrive does not stall allocating it.
            if budget.left() == 0 || splicing && scratch.0.len() < 2 {
                continue;
            }
            splicing = true;
            group.status = result.status;
            match begin_splice(group, members, &result.cells, &view, &units, &mut scratch.0) {
                Some(splice) => group.stage = Stage::Splicing(Box::new(splice)),
                None => {
                    disband(group, members, &units, &mut commands, &mut scratch.0);
                    continue;
                }
            }
        }
        let Stage::Splicing(splice) = &mut group.stage else {
            continue;
        };
        let replans = group.replans;
        if result.is_some_and(|result| {
            result.invalidated && !keep_flagged(replans, settings.max_restarts, &view, &splice.path)
        }) {
            // An edit cut the shared path: find it again on the new grid
            // (members walk on by instinct).
            replan(entity, group, request, &mut commands, &mut scratch.0);
            continue;
        }
        if splice.head.restarts() + splice.tail.restarts() > settings.max_restarts {
            // Edits keep hitting the floods: every unit goes alone instead
            // (each search is bounded in its own restarts).
            disband(group, members, &units, &mut commands, &mut scratch.0);
            continue;
        }
        if lanes > 1 {
            side_by_side[index] = true;
            continue;
        }
        for flood in [&mut splice.head, &mut splice.tail] {
            let before = flood.expansions();
            flood.step(grid, budget.slice());
            let used = flood.expansions() - before;
            budget.spend(used);
            group.flood_expansions += used;
        }
        if end_splice(group, &view, &mut scratch.0) {
            splicing = false;
        }
    }
    if side_by_side.contains(&true) {
        // Rounds until the budget or the floods run out: the floods still
        // running, in the groups' order, share each round's budget in lanes.
        loop {
            let mut floods = Vec::new();
            for (index, ((_, group, ..), _)) in order
                .iter_mut()
                .zip(&side_by_side)
                .enumerate()
                .filter(|(_, (_, chosen))| **chosen)
            {
                let group = &mut **group;
                let (Some(view), Stage::Splicing(splice)) = (maps.get(group.map), &mut group.stage)
                else {
                    continue;
                };
                let grid = view.for_kind(group.kind).grid;
                let Splice { head, tail, .. } = &mut **splice;
                for flood in [head, tail] {
                    if !flood.is_finished() {
                        floods.push((flood, grid, 0u64, index));
                    }
                }
            }
            let open = budget.open_lanes();
            if floods.is_empty() || open.is_empty() {
                break;
            }
            let mut dealt = deal(budget.lane_count(), &open, floods.iter_mut());
            let spent: u64 = run_lanes(
                &mut budget,
                settings.threads,
                &mut dealt,
                None,
                |item, most| {
                    let (flood, grid, used, _) = &mut **item;
                    let before = flood.expansions();
                    flood.step(grid, most);
                    *used += flood.expansions() - before;
                    flood.expansions() - before
                },
            )
            .iter()
            .sum();
            drop(dealt);
            let used: Vec<(usize, u64)> = floods
                .into_iter()
                .map(|(_, _, used, index)| (index, used))
                .collect();
            for (index, used) in used {
                order[index].1.flood_expansions += used;
            }
            if spent == 0 {
                break;
            }
        }
        for ((_, group, ..), _) in order
            .iter_mut()
            .zip(&side_by_side)
            .filter(|(_, chosen)| **chosen)
        {
            let group = &mut **group;
            if let Some(view) = maps.get(group.map) {
                end_splice(group, &view.for_kind(group.kind), &mut scratch.0);
            }
        }
    }
    stats.frame_time += clock::since(began);
}

/// Once both floods of a splicing group have ended, prepares the members'
/// routes for handing out and returns the floods' scratch; whether they
/// had ended.
fn end_splice(group: &mut SharedRoute, view: &MapView, pool: &mut ScratchPool) -> bool {
    match &group.stage {
        Stage::Splicing(splice) if splice.head.is_finished() && splice.tail.is_finished() => {}
        _ => return false,
    }
    let Stage::Splicing(splice) = std::mem::replace(&mut group.stage, Stage::Done) else {
        return false;
    };
    let handout = prepare_routes(group, &splice, view);
    scratch_back(*splice, pool);
    group.stage = Stage::HandingOut(handout);
    true
}

fn scratch_back(splice: Splice, pool: &mut ScratchPool) {
    pool.give(splice.head.into_scratch());
    pool.give(splice.tail.into_scratch());
}

/// Whether a group goes on with its shared path `cells` though an edit
/// flagged it: when edits have sent the path back `replans` times, at
/// least `max_restarts` (ground whose cost changes every frame would
/// otherwise keep the group searching for good), and it is still walkable,
/// only dearer. Its members plan again on their own for edits after their
/// routes are handed out, walking on meanwhile.
fn keep_flagged(replans: u32, max_restarts: u32, view: &MapView, cells: &[Cell]) -> bool {
    replans >= max_restarts && view.class().can_walk(cells)
}

/// Asks for the shared path again, on the grid as it is now.
fn replan(
    entity: Entity,
    group: &mut SharedRoute,
    request: &mut Mut<PathRequest>,
    commands: &mut Commands,
    pool: &mut ScratchPool,
) {
    if let Stage::Splicing(splice) = std::mem::replace(&mut group.stage, Stage::Searching) {
        scratch_back(*splice, pool);
    }
    group.replans += 1;
    request.set_changed();
    commands.entity(entity).remove::<PathResult>();
}

/// Ends a group move that cannot share a path: every unit still in it gets
/// a request of its own to its end slot.
fn disband(
    group: &mut SharedRoute,
    members: Option<&GroupMembers>,
    units: &Units,
    commands: &mut Commands,
    pool: &mut ScratchPool,
) {
    if let Stage::Splicing(splice) = std::mem::replace(&mut group.stage, Stage::Done) {
        scratch_back(*splice, pool);
    }
    let slots = group.slots.clone();
    for (i, (unit, _)) in current_members(members, units).into_iter().enumerate() {
        let slot = slots.get(i).copied().unwrap_or(group.goal);
        send_alone(group, unit, slot, commands);
    }
}

/// Gives `unit` its own request to `slot` (which takes it out of the
/// group).
fn send_alone(group: &mut SharedRoute, unit: Entity, slot: Cell, commands: &mut Commands) {
    group.assigned.push((unit, slot));
    let request = PathRequest::new(centre_cell(slot, group.kind.size))
        .on_map(group.map)
        .with_priority(group.priority);
    order_alone(commands, unit, request, group.misses_goal());
}

/// Gives `unit` a group order's `request` to a slot of its own, marked as
/// missing the order's goal when the group's does: the slot may be
/// reachable when the goal is not, and the unit's order ends as its
/// group's.
fn order_alone(commands: &mut Commands, unit: Entity, request: PathRequest, misses_goal: bool) {
    let mut unit = commands.entity(unit);
    if misses_goal {
        let goal = request.goal;
        unit.insert((request, MissesGoal { goal }));
    } else {
        unit.insert(request).remove::<MissesGoal>();
    }
}

/// Starts the two floods once the shared path is known: towards its head
/// splice cell from every member, and from its tail splice cell to every
/// slot. `None` when no member is left.
fn begin_splice(
    group: &SharedRoute,
    members: Option<&GroupMembers>,
    path: &[Cell],
    view: &MapView,
    units: &Units,
    pool: &mut ScratchPool,
) -> Option<Splice> {
    let grid = view.grid;
    let members: Vec<(Entity, Cell)> = current_members(members, units)
        .into_iter()
        .filter_map(|(unit, position)| Some((unit, view.cell_at(position)?)))
        .collect();
    if members.is_empty() || path.is_empty() {
        return None;
    }
    let k = (group.splice_steps as usize).min((path.len() - 1) / 2);
    let (head_cell, tail_cell) = (path[k], path[path.len() - 1 - k]);
    // Reach: members within the spread of the centre, k steps from the
    // head splice cell; slots around the goal. Twice that in cost covers
    // detours; a unit or slot beyond it moves alone.
    let cost = view.class().max_walkable_cost().max(1) as f64;
    let member_reach = members
        .iter()
        .map(|&(_, cell)| cell.octile_distance(head_cell))
        .fold(0.0, f64::max);
    let slot_reach = group
        .slots
        .iter()
        .map(|&slot| slot.octile_distance(tail_cell))
        .fold(0.0, f64::max);
    let head = Flood::with_scratch(
        pool.take(),
        grid,
        group.kind,
        head_cell,
        FloodDirection::ToSource,
        members.iter().map(|&(_, cell)| cell),
        Some(2.0 * (member_reach + 2.0) * cost),
    )
    .ok()?;
    let tail = Flood::with_scratch(
        pool.take(),
        grid,
        group.kind,
        tail_cell,
        FloodDirection::FromSource,
        group.slots.iter().copied(),
        Some(2.0 * (slot_reach + 2.0) * cost),
    )
    .ok()?;
    Some(Splice {
        path: path.to_vec(),
        units: members,
        k,
        head,
        tail,
    })
}

/// Shares the path once the floods are done: the middle, its lanes, and
/// which slot each member gets. The first to arrive (cheapest head) get the
/// slots deepest past the tail splice cell.
fn prepare_routes(group: &mut SharedRoute, splice: &Splice, view: &MapView) -> Handout {
    let grid = view.grid;
    let Splice {
        path,
        k,
        head,
        tail,
        ..
    } = splice;
    group.shared = path[*k..path.len() - *k].to_vec();
    let middle = smooth(view, &group.shared);
    // Lanes from the middle out: 0, +1, −1, +2, … spacings; a lone unit
    // walks the centre.
    group.lane_waypoints = (0..group.lanes as i32)
        .map(|lane| {
            let side = if lane % 2 == 1 { 1 } else { -1 };
            let offset = ((lane + 1) / 2 * side) as f32 * group.lane_spacing;
            lane_waypoints(view, &middle, offset)
        })
        .collect();
    let mut arrivals: Vec<(Entity, Cell, Option<f64>)> = splice
        .units
        .iter()
        .map(|&(unit, cell)| (unit, cell, head.cost(grid, cell)))
        .collect();
    arrivals.sort_by(|a, b| {
        let key = |c: Option<f64>| c.unwrap_or(f64::INFINITY);
        key(a.2).total_cmp(&key(b.2))
    });
    let mut slots: Vec<(usize, Cell, Option<f64>)> = group
        .slots
        .iter()
        .enumerate()
        .map(|(i, &slot)| (i, slot, tail.cost(grid, slot)))
        .collect();
    slots.sort_by(|a, b| {
        let key = |c: Option<f64>| c.unwrap_or(-1.0);
        key(b.2).total_cmp(&key(a.2)).then(a.0.cmp(&b.0))
    });
    // The paths are read out now, so the floods' scratch can go back to
    // the pool while routes are handed out over the next frames.
    let pairs = arrivals
        .into_iter()
        .zip(slots)
        .map(|((unit, cell, _), (_, slot, _))| Pair {
            unit,
            cell,
            slot,
            head: head.path(grid, cell).map(|path| path.cells),
            tail: tail.path(grid, slot).map(|path| path.cells),
        })
        .collect();
    Handout {
        pairs,
        next: 0,
        // The older of the two floods' grids: a flood that ended frames
        // before the other (with several lanes an ended flood is not run
        // again) found its paths on the grid of then, and the edits since
        // must be checked against them when they are handed out (model
        // seed 1034, its crowd's order shuffled: a member handed a head
        // route a wall had cut, stamped as planned on the grid of now).
        version: head.grid_version().min(tail.grid_version()),
    }
}

/// A member, the cell it stood on, its slot, and its own two paths (`None`
/// where a flood did not reach).
#[derive(Debug)]
struct Pair {
    unit: Entity,
    cell: Cell,
    slot: Cell,
    head: Option<Vec<Cell>>,
    tail: Option<Vec<Cell>>,
}

/// Routes being handed out, a few each frame.
#[derive(Debug)]
struct Handout {
    pairs: Vec<Pair>,
    next: usize,
    /// The grid version the paths were found on (the older flood's).
    version: u64,
}

/// Gives up to `limit` more members their route: their own head, the
/// shared middle (in their lane), their own tail to their slot. Returns
/// how many it handled.
fn assign_routes(
    entity: Entity,
    group: &mut SharedRoute,
    handout: &mut Handout,
    view: &MapView,
    units: &mut Units,
    commands: &mut Commands,
    limit: usize,
) -> usize {
    let end = (handout.next + limit).min(handout.pairs.len());
    // Edits since the paths were read out: a route one of them cuts or
    // makes dearer is not handed out (its unit plans its own way).
    let edits = (view.grid.version() != handout.version)
        .then(|| Edits::new(view.class().dearer_since(handout.version)));
    for i in handout.next..end {
        let Pair {
            unit,
            cell,
            slot,
            ref head,
            ref tail,
        } = handout.pairs[i];
        // A unit that left the group meanwhile keeps its own order (before,
        // one whose floods had not reached it was sent to its slot anyway,
        // over an order the game gave it this frame).
        let Ok((transform, Some(member), mut steering)) = units.get_mut(unit) else {
            continue;
        };
        if member.group != entity {
            continue;
        }
        let (Some(head_cells), Some(tail_cells)) = (head, tail) else {
            send_alone(group, unit, slot, commands);
            continue;
        };
        let lane = &group.lane_waypoints[i % group.lane_waypoints.len()];
        // Where the unit stands now: it has walked on instinct since the
        // floods saw it on `cell`.
        let here = transform.translation.truncate();
        let now = view.cell_at(here).unwrap_or(cell);
        let mut tail_waypoints = smooth(view, tail_cells);
        tail_waypoints.remove(0);
        let route = match join_shared(view, here, now, lane) {
            Some(skip) => Route::spliced(Vec::new(), lane.clone(), tail_waypoints).skipping(skip),
            None => match join_path(view, here, now, head_cells) {
                Some(mut head_waypoints) => {
                    head_waypoints.pop();
                    Route::spliced(head_waypoints, lane.clone(), tail_waypoints)
                }
                // Its head is out of sight: it plans its own way.
                None => {
                    send_alone(group, unit, slot, commands);
                    continue;
                }
            },
        };
        if edits
            .as_ref()
            .is_some_and(|edits| edits.cut(view, here, &route).is_some())
        {
            send_alone(group, unit, slot, commands);
            continue;
        }
        group.assigned.push((unit, slot));
        *steering = Steering::Following {
            route: route
                .planned_on(view.grid.version())
                .missing_goal(group.misses_goal()),
            goal: view.cell_to_world(slot),
            map: group.map,
        };
        // The member's own news, as a unit ordered alone gets it.
        let ready = PathReady {
            entity: unit,
            status: group.members_status(),
            expansions: 0,
            frames_waited: group.frames,
        };
        commands.write_message(ready);
        commands.trigger(ready);
    }
    let handled = end - handout.next;
    handout.next = end;
    handled
}

/// How far along the shared waypoints a unit can join straight from where
/// it stands (looking a few corners ahead): the index, if past the first.
fn join_shared(view: &MapView, here: Vec2, cell: Cell, lane: &[Vec2]) -> Option<usize> {
    const LOOK_AHEAD: usize = 4;
    (1..lane.len().min(LOOK_AHEAD + 1)).rev().find(|&i| {
        view.cell_at(lane[i])
            .is_some_and(|target| view.class().line_of_sight(cell, target))
            && view.segment_clear(here, lane[i])
    })
}

/// The shared waypoints shifted `offset` cells sideways on every straight
/// stretch long enough, where the shifted way is clear; corners stay put,
/// so every lane can be walked.
fn lane_waypoints(view: &MapView, middle: &[Vec2], offset: f32) -> SharedWaypoints {
    let cell = view.layout.cell_size.min_element().abs();
    if offset == 0.0 || middle.len() < 2 {
        return middle.into();
    }
    let mut lane = vec![middle[0]];
    for pair in middle.windows(2) {
        let (from, to) = (pair[0], pair[1]);
        let length = from.distance(to);
        let direction = (to - from) / length.max(f32::EPSILON);
        let inset = (2.0 * cell).min(length / 3.0);
        if length >= 4.0 * cell {
            let side = direction.perp() * offset * cell;
            let (a, b) = (
                from + direction * inset + side,
                to - direction * inset + side,
            );
            let last = *lane.last().unwrap_or(&from);
            let walkable = |p: Vec2| view.cell_at(p).is_some_and(|c| view.class().is_walkable(c));
            if walkable(a)
                && walkable(b)
                && view.segment_clear(last, a)
                && view.segment_clear(a, b)
                && view.segment_clear(b, to)
            {
                lane.extend([a, b]);
            }
        }
        lane.push(to);
    }
    lane.into()
}

/// `FrontierSystems::Orders`: despawns groups no unit is left in (Bevy
/// removes [`GroupMembers`] with the last member).
pub(crate) fn retire_groups(
    mut groups: Query<(Entity, &mut SharedRoute), Without<GroupMembers>>,
    mut scratch: ResMut<GroupScratch>,
    mut commands: Commands,
) {
    for (entity, mut group) in &mut groups {
        if let Stage::Splicing(splice) = std::mem::replace(&mut group.stage, Stage::Done) {
            scratch_back(*splice, &mut scratch.0);
        }
        commands.entity(entity).despawn();
    }
}

/// A unit that arrived is no longer in its group.
fn leave_on_arrival(
    arrived: On<UnitArrived>,
    members: Query<(), With<GroupMember>>,
    mut commands: Commands,
) {
    if members.contains(arrived.entity) {
        commands.entity(arrived.entity).try_remove::<GroupMember>();
    }
}

/// A unit given an order of its own (a [`PathRequest`]) leaves its group.
fn leave_on_own_order(
    order: On<Insert, PathRequest>,
    members: Query<(), With<GroupMember>>,
    mut commands: Commands,
) {
    if members.contains(order.entity) {
        commands.entity(order.entity).try_remove::<GroupMember>();
    }
}
