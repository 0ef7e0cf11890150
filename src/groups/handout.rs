//! Routes handed out once a group's floods end: each member's own head,
//! the shared middle in its column, and its own tail to its slot, a few
//! dozen a frame.

use bevy::prelude::*;

use super::group::{Handout, Pair, SharedRoute, Splice, Units, send_alone};
use crate::core::Cell;
use crate::maps::MapView;
use crate::movement::{Edits, Route, SharedWaypoints, Steer, join_path, smooth, steer};
use crate::pathfinding::PathReady;

/// Shares the path once the floods are done: the middle, its columns, and
/// which slot each member gets. The first to arrive (cheapest head) get the
/// slots deepest past the tail splice cell.
pub(super) fn prepare_routes(group: &mut SharedRoute, splice: &Splice, view: &MapView) -> Handout {
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
    // Columns from the middle out: 0, +1, −1, +2, … spacings; a lone unit
    // walks the centre.
    group.column_waypoints = (0..group.columns as i32)
        .map(|column| {
            let side = if column % 2 == 1 { 1 } else { -1 };
            let offset = ((column + 1) / 2 * side) as f32 * group.column_spacing;
            column_waypoints(view, &middle, offset)
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
        // before the other (with several columns an ended flood is not run
        // again) found its paths on the grid of then, and the edits since
        // must be checked against them when they are handed out (model
        // seed 1034, its crowd's order shuffled: a member handed a head
        // route a wall had cut, stamped as planned on the grid of now).
        version: head.grid_version().min(tail.grid_version()),
    }
}

/// Gives up to `limit` more members their route: their own head, the
/// shared middle (in their column), their own tail to their slot. Returns
/// how many it handled.
pub(super) fn assign_routes(
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
        .then(|| Edits::new(view.size_class().dearer_since(handout.version)));
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
        let column = &group.column_waypoints[i % group.column_waypoints.len()];
        // Where the unit stands now: it has walked on instinct since the
        // floods saw it on `cell`.
        let here = transform.translation.truncate();
        let now = view.cell_at(here).unwrap_or(cell);
        let mut tail_waypoints = smooth(view, tail_cells);
        tail_waypoints.remove(0);
        let route = match join_shared(view, here, now, column) {
            Some(skip) => Route::spliced(Vec::new(), column.clone(), tail_waypoints).skipping(skip),
            None => match join_path(view, here, now, head_cells) {
                Some(mut head_waypoints) => {
                    head_waypoints.pop();
                    Route::spliced(head_waypoints, column.clone(), tail_waypoints)
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
        let route = route
            .planned_on(view.grid.version())
            .missing_goal(group.misses_goal());
        let (goal, map) = (view.cell_to_world(slot), group.map);
        steer(&mut steering, Steer::Handed { route, goal, map });
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
pub(super) fn join_shared(
    view: &MapView,
    here: Vec2,
    cell: Cell,
    column: &[Vec2],
) -> Option<usize> {
    const LOOK_AHEAD: usize = 4;
    (1..column.len().min(LOOK_AHEAD + 1)).rev().find(|&i| {
        view.cell_at(column[i])
            .is_some_and(|target| view.size_class().line_of_sight(cell, target))
            && view.segment_clear(here, column[i])
    })
}

/// The shared waypoints shifted `offset` cells sideways on every straight
/// stretch long enough, where the shifted way is clear; corners stay put,
/// so every column can be walked.
pub(super) fn column_waypoints(view: &MapView, middle: &[Vec2], offset: f32) -> SharedWaypoints {
    let cell = view.layout.cell_size.min_element().abs();
    if offset == 0.0 || middle.len() < 2 {
        return middle.into();
    }
    let mut column = vec![middle[0]];
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
            let last = *column.last().unwrap_or(&from);
            let walkable = |p: Vec2| {
                view.cell_at(p)
                    .is_some_and(|c| view.size_class().is_walkable(c))
            };
            if walkable(a)
                && walkable(b)
                && view.segment_clear(last, a)
                && view.segment_clear(a, b)
                && view.segment_clear(b, to)
            {
                column.extend([a, b]);
            }
        }
        column.push(to);
    }
    column.into()
}
