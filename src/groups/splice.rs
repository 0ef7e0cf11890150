//! The shared path spliced onto every member: two floods on the frame's
//! budget (heads from the members, tails to the slots), run in lanes, and
//! groups that must plan again or disband.

use bevy::prelude::*;

use super::group::{
    GroupMembers, GroupScratch, ROUTES_PER_FRAME, SharedRoute, Splice, Stage, Units, send_alone,
};
use super::handout::{assign_routes, prepare_routes};
use crate::budget::{FrameBudget, deal, run_lanes};
use crate::clock;
use crate::core::{Cell, Flood, FloodDirection, ScratchPool};
use crate::maps::{MapView, Maps};
use crate::movement::Mover;
use crate::pathfinding::{PathRequest, PathResult, PathfindingStats};
use crate::schedule::PathfindingSettings;

/// Members of a group still standing somewhere, and where.
pub(super) fn current_members(
    members: Option<&GroupMembers>,
    units: &Units,
) -> Vec<(Entity, Vec2)> {
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
    let mut in_sequence: Vec<_> = groups.iter_mut().collect();
    in_sequence.sort_by_key(|(_, group, _, _, _)| group.sequence);
    // Routes are handed out a few dozen a frame, so a big group does not
    // make one frame long.
    let mut routes_left = ROUTES_PER_FRAME;
    let mut splicing = in_sequence
        .iter()
        .any(|(_, group, _, _, _)| matches!(group.stage, Stage::Splicing(_)));
    // With several search lanes, the floods of splicing groups run side by
    // side after this loop instead of one after the other in it.
    let lanes = budget.lane_count();
    let mut side_by_side = vec![false; in_sequence.len()];
    for (index, (entity, group, members, result, request)) in in_sequence.iter_mut().enumerate() {
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
        if matches!(group.stage, Stage::HandingOut(_)) {
            let on = (&view, &mut units, &mut commands);
            routes_left -= hand_out(entity, group, on, routes_left);
            continue;
        }
        if let Stage::Searching = group.stage {
            let Some(result) = result else {
                continue;
            };
            // Floods start only with budget to run on, and only one group
            // at a time sets up new scratch (grid-sized), so a frame where
            // many shared paths arrive does not stall allocating it.
            let room = budget.left() > 0 && !(splicing && scratch.0.len() < 2);
            let on = (&view, &units, &mut commands, &mut scratch.0);
            let found = (result, &mut *request, settings.max_restarts);
            if !start_splice(entity, group, members, found, on, room) {
                continue;
            }
            splicing = true;
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
        group.flood_expansions += step_floods(splice, grid, &mut budget);
        if end_splice(group, &view, &mut scratch.0) {
            splicing = false;
        }
    }
    if side_by_side.contains(&true) {
        let chosen = (in_sequence.iter_mut().zip(&side_by_side))
            .filter(|(_, chosen)| **chosen)
            .map(|((_, group, ..), _)| &mut **group)
            .collect();
        run_side_by_side(chosen, &maps, &mut budget, &settings, &mut scratch.0);
    }
    stats.frame_time += clock::since(began);
}

/// Runs a splice's two floods on what is left of the frame's budget, one
/// after the other; returns their expansions.
pub(super) fn step_floods(
    splice: &mut Splice,
    grid: &crate::core::NavGrid,
    budget: &mut FrameBudget,
) -> u64 {
    let mut spent = 0;
    for flood in [&mut splice.head, &mut splice.tail] {
        let before = flood.expansions();
        flood.step(grid, budget.slice());
        let used = flood.expansions() - before;
        budget.spend(used);
        spent += used;
    }
    spent
}

/// Hands out the next routes of a group whose floods are done, at most
/// `most`; returns how many.
pub(super) fn hand_out(
    entity: Entity,
    group: &mut SharedRoute,
    (view, units, commands): (&MapView, &mut Units, &mut Commands),
    most: usize,
) -> usize {
    let Stage::HandingOut(mut handout) = std::mem::replace(&mut group.stage, Stage::Done) else {
        return 0;
    };
    let handed = assign_routes(entity, group, &mut handout, view, units, commands, most);
    if handout.next < handout.pairs.len() {
        group.stage = Stage::HandingOut(handout);
    }
    handed
}

/// A searching group whose shared path came: its floods start (when the
/// frame has `room` for them), or it plans again (an edit flagged the path)
/// or disbands (no path, or no member left). Whether its floods started.
pub(super) fn start_splice(
    entity: Entity,
    group: &mut SharedRoute,
    members: Option<&GroupMembers>,
    (result, request, max_restarts): (&PathResult, &mut Mut<PathRequest>, u32),
    (view, units, commands, pool): (&MapView, &Units, &mut Commands, &mut ScratchPool),
    room: bool,
) -> bool {
    if !result.status.has_path() {
        disband(group, members, units, commands, pool);
        return false;
    }
    if result.invalidated && !keep_flagged(group.replans, max_restarts, view, &result.cells) {
        // An edit made the shared path illegal or dearer.
        replan(entity, group, request, commands, pool);
        return false;
    }
    if !room {
        return false;
    }
    group.status = result.status;
    match begin_splice(group, members, &result.cells, view, units, pool) {
        Some(splice) => {
            group.stage = Stage::Splicing(Box::new(splice));
            true
        }
        None => {
            disband(group, members, units, commands, pool);
            false
        }
    }
}

/// The floods of splicing groups side by side, in rounds until the budget
/// or the floods run out: those still running, in the groups' order, share
/// each round's budget in lanes. Groups whose floods ended then prepare
/// their routes.
pub(super) fn run_side_by_side(
    mut chosen: Vec<&mut SharedRoute>,
    maps: &Maps<Without<Mover>>,
    budget: &mut FrameBudget,
    settings: &PathfindingSettings,
    pool: &mut ScratchPool,
) {
    loop {
        let mut floods = Vec::new();
        for (index, group) in chosen.iter_mut().enumerate() {
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
        let spent: u64 = run_lanes(budget, settings.threads, &mut dealt, None, |item, most| {
            let (flood, grid, used, _) = &mut **item;
            let before = flood.expansions();
            flood.step(grid, most);
            *used += flood.expansions() - before;
            flood.expansions() - before
        })
        .iter()
        .sum();
        drop(dealt);
        let used: Vec<(usize, u64)> = floods
            .into_iter()
            .map(|(_, _, used, index)| (index, used))
            .collect();
        for (index, used) in used {
            chosen[index].flood_expansions += used;
        }
        if spent == 0 {
            break;
        }
    }
    for group in chosen {
        if let Some(view) = maps.get(group.map) {
            end_splice(group, &view.for_kind(group.kind), pool);
        }
    }
}

/// Once both floods of a splicing group have ended, prepares the members'
/// routes for handing out and returns the floods' scratch; whether they
/// had ended.
pub(super) fn end_splice(group: &mut SharedRoute, view: &MapView, pool: &mut ScratchPool) -> bool {
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

pub(super) fn scratch_back(splice: Splice, pool: &mut ScratchPool) {
    pool.give(splice.head.into_scratch());
    pool.give(splice.tail.into_scratch());
}

/// Whether a group goes on with its shared path `cells` though an edit
/// flagged it: when edits have sent the path back `replans` times, at
/// least `max_restarts` (ground whose cost changes every frame would
/// otherwise keep the group searching for good), and it is still walkable,
/// only dearer. Its members plan again on their own for edits after their
/// routes are handed out, walking on meanwhile.
pub(super) fn keep_flagged(
    replans: u32,
    max_restarts: u32,
    view: &MapView,
    cells: &[Cell],
) -> bool {
    replans >= max_restarts && view.size_class().can_walk(cells)
}

/// Asks for the shared path again, on the grid as it is now.
pub(super) fn replan(
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
pub(super) fn disband(
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

/// Starts the two floods once the shared path is known: towards its head
/// splice cell from every member, and from its tail splice cell to every
/// slot. `None` when no member is left.
pub(super) fn begin_splice(
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
    let cost = view.size_class().max_walkable_cost().max(1) as f64;
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
