//! Starting a group move: a [`GroupMove`](super::GroupMove) order split by
//! unit kind into groups and units that go alone, with their end slots.

use std::collections::HashSet;

use bevy::ecs::message::MessageCursor;
use bevy::prelude::*;

use super::group::{GroupMember, GroupMove, SharedRoute, Stage, centre_cell, order_alone};
use crate::core::{Cell, SizeClass, UnitKind};
use crate::maps::{MapView, Maps};
use crate::movement::{Arrived, MissesGoal, Mover, Steer, Steering};
use crate::pathfinding::{
    Footprint, KindData, MovementClass, PathRequest, PathResult, PathStatus, PathTarget, locate,
    unit_kind,
};

/// End slots for `count` units of one size: anchors of `goal`'s region
/// nearest to it, breadth-first, whose footprints overlap no cell in
/// `taken` (the slots of the order's other units); their cells are added to
/// it. Fewer than `count` when the region has no more room.
pub(super) fn end_slots(
    size_class: SizeClass<'_>,
    goal: Cell,
    count: usize,
    taken: &mut HashSet<Cell>,
) -> Vec<Cell> {
    let size = size_class.size() as u32;
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
        for (next, _) in size_class.neighbors(anchor) {
            if seen.insert(next) {
                queue.push_back(next);
            }
        }
    }
    slots
}

/// How far `start_group_moves` has read the [`GroupMove`]s, and the
/// number the next group gets (its place in the first-come, first-served
/// order). Kept in a resource, not the system's own state, so that a save
/// holds them: the orders sent since it last read (`resumed` on load, read
/// first) and the count.
#[derive(Resource, Default)]
pub(crate) struct GroupOrders {
    pub(crate) cursor: MessageCursor<GroupMove>,
    pub(crate) sequence: u64,
    pub(crate) resumed: Vec<GroupMove>,
}

/// `FrontierSystems::Orders`: turns [`GroupMove`]s into a group entity
/// searching the shared path, members walking on instinct, and solo
/// requests for the units too far away. Units of different sizes
/// ([`Footprint`]) or classes ([`MovementClass`]) move as one group per
/// class and size, each on a shared path wide enough for it and on ground
/// its class may enter; all of the order's end slots are distinct, no two
/// footprints overlapping.
pub(crate) fn start_group_moves(
    messages: Res<Messages<GroupMove>>,
    mut read: ResMut<GroupOrders>,
    units: Query<(&Transform, KindData), With<Mover>>,
    maps: Maps,
    mut commands: Commands,
) {
    let read = &mut *read;
    let resumed = std::mem::take(&mut read.resumed);
    let sequence = &mut read.sequence;
    for order in resumed.iter().chain(read.cursor.read(&messages)) {
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
        // Sent at a unit: each chases it (its chasers share searches).
        let chase = matches!(order.goal, PathTarget::Entity(_));
        let found = maps.find(order.map).ok().filter(|_| !chase);
        let Some((map, view)) = found else {
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
pub(super) struct ClassOrder<'a> {
    pub(super) order: &'a GroupMove,
    pub(super) map: Entity,
    pub(super) view: MapView<'a>,
    /// The group's place in the first-come, first-served order.
    pub(super) sequence: u64,
}

/// Who of a group order's units move together and where to: the goal
/// (the nearest cell the units may stand on to the one asked for), their
/// centre, the members and the units that go alone.
pub(super) struct Split {
    pub(super) goal: Cell,
    /// Whether the goal asked for was not ground the units may stand on.
    pub(super) off_ground: bool,
    pub(super) centre: Option<Cell>,
    pub(super) members: Vec<Entity>,
    pub(super) solo: Vec<Entity>,
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
            order, map, view, ..
        } = *self;
        let Some(split) = self.split(movers) else {
            for &(unit, _) in movers {
                commands
                    .entity(unit)
                    .insert(order.solo_request(order.goal, Some(map)));
            }
            return false;
        };
        let Split {
            goal,
            off_ground,
            ref members,
            ref solo,
            ..
        } = split;
        // Members take the slots nearest the goal, solo units the next; a
        // region with room for fewer footprints than units shares them out.
        let mut slots = end_slots(view.size_class(), goal, movers.len(), taken);
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
        let slots = (0..members.len()).map(slot).collect();
        self.spawn_group(&split, slots, assigned, commands);
        true
    }

    /// The order's goal, centre, members and solo units; `None` when the
    /// goal is nowhere the units may go (every unit then goes alone).
    fn split(&self, movers: &[(Entity, Vec2)]) -> Option<Split> {
        let Self { order, view, .. } = *self;
        let grid = view.size_class();
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
        let (goal, region) = goal.and_then(|g| Some((g, grid.region(g)?)))?;
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
        Some(Split {
            goal,
            off_ground,
            centre,
            members,
            solo,
        })
    }

    /// The group entity, searching its shared path from the members'
    /// centre to the goal, and its members walking on instinct meanwhile.
    fn spawn_group(
        &self,
        split: &Split,
        slots: Vec<Cell>,
        assigned: Vec<(Entity, Cell)>,
        commands: &mut Commands,
    ) {
        let Self {
            order,
            map,
            view,
            sequence,
        } = *self;
        let Split {
            goal,
            off_ground,
            centre,
            ref members,
            ..
        } = *split;
        let group = commands.spawn_empty().id();
        let goal_position = view.cell_to_world(goal);
        for &unit in members {
            commands
                .entity(unit)
                .remove::<(PathRequest, PathResult, Arrived, MissesGoal)>()
                .insert((
                    GroupMember { group },
                    Steering::Idle.on(Steer::Order {
                        goal: goal_position,
                        map,
                    }),
                ));
        }
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
                columns: order.columns.max(1),
                // A spacing that is not a finite distance ≥ 0 would give
                // columns of NaN or reversed waypoints: single file instead.
                column_spacing: if order.column_spacing.is_finite() {
                    order.column_spacing.max(0.0)
                } else {
                    0.0
                },
                slots,
                assigned,
                shared: Vec::new(),
                column_waypoints: Vec::new(),
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
    }
}
