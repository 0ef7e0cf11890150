//! Group moves: one order, one shared path, every unit at its own slot, for
//! a fraction of the search work of ordering the units one by one.

use std::collections::HashSet;
use std::sync::Arc;

use bevy::prelude::*;
use bevy_frontier::core::Cell;
use bevy_frontier::groups::{GroupMember, GroupMembers, SharedRoute};
use bevy_frontier::movement::{Arrived, Steering};
use bevy_frontier::pathfinding::PathfindingStats;
use bevy_frontier::prelude::*;

use crate::common::{
    Rng, cell_at, cut_legs, position, random_grid, settle, spawn_map, spawn_mover, timed_app,
};

/// A walled field: a wall across the middle with two gaps, so the shared
/// path has corners.
fn field() -> NavGrid {
    let mut grid = NavGrid::new(80, 60).unwrap();
    grid.fill_rect(Cell::new(40, 0), Cell::new(41, 59), NavGrid::BLOCKED)
        .unwrap();
    grid.fill_rect(Cell::new(40, 8), Cell::new(41, 10), 1)
        .unwrap();
    grid.fill_rect(Cell::new(40, 50), Cell::new(41, 52), 1)
        .unwrap();
    grid
}

/// `count` movers packed on walkable cells around `centre`.
fn squad(app: &mut App, grid: &NavGrid, centre: Cell, count: usize, speed: f32) -> Vec<Entity> {
    let mut units = Vec::new();
    let mut radius = 0i64;
    let mut taken = HashSet::new();
    while units.len() < count {
        for dy in -radius..=radius {
            for dx in -radius..=radius {
                let (x, y) = (centre.x as i64 + dx, centre.y as i64 + dy);
                if units.len() == count || x < 0 || y < 0 {
                    continue;
                }
                let cell = Cell::new(x as u32, y as u32);
                if grid.is_walkable(cell) && taken.insert(cell) {
                    units.push(spawn_mover(app, cell, speed));
                }
            }
        }
        radius += 1;
    }
    units
}

fn order_group(app: &mut App, units: &[Entity], goal: Cell) {
    app.world_mut()
        .write_message(GroupMove::new(units.iter().copied(), goal));
}

fn has_route(app: &App, unit: Entity) -> bool {
    matches!(
        app.world().get::<Steering>(unit),
        Some(Steering::Following { .. })
    ) || app.world().get::<Arrived>(unit).is_some()
}

/// Runs frames until every unit has arrived; checks each frame that none
/// stands in a wall. Returns the frames run.
fn run_until_arrived(app: &mut App, map: Entity, units: &[Entity], max_frames: u32) -> u32 {
    for frame in 1..=max_frames {
        app.update();
        let grid = app.world().get::<NavGrid>(map).unwrap();
        for &unit in units {
            let cell = cell_at(position(app, unit));
            assert!(grid.is_walkable(cell), "{unit} in a wall at {cell}");
        }
        if units
            .iter()
            .all(|&u| app.world().get::<Arrived>(u).is_some())
        {
            return frame;
        }
    }
    panic!("not every unit arrived in {max_frames} frames");
}

#[test]
fn every_unit_arrives_at_a_slot_of_its_own() {
    let mut app = timed_app(4096);
    let grid = field();
    let map = spawn_map(&mut app, grid.clone());
    let units = squad(&mut app, &grid, Cell::new(10, 30), 40, 8.0);
    app.update();
    let goal = Cell::new(70, 30);
    order_group(&mut app, &units, goal);
    app.update();
    // Everyone walks at once, before any path exists.
    assert!(units.iter().all(|&u| matches!(
        app.world().get::<Steering>(u),
        Some(Steering::Instinct { .. })
    )));
    run_until_arrived(&mut app, map, &units, 3_000);
    settle(&mut app, &units, 600);
    let ends: HashSet<Cell> = units.iter().map(|&u| cell_at(position(&app, u))).collect();
    assert_eq!(ends.len(), units.len(), "two units share an end cell");
    for end in &ends {
        let (dx, dy) = (end.x.abs_diff(goal.x), end.y.abs_diff(goal.y));
        assert!(dx.max(dy) <= 6, "{end} is far from the goal {goal}");
    }
}

#[test]
fn the_shared_middle_is_stored_once() {
    let mut app = timed_app(4096);
    let grid = field();
    spawn_map(&mut app, grid.clone());
    let units = squad(&mut app, &grid, Cell::new(10, 30), 30, 4.0);
    app.update();
    order_group(&mut app, &units, Cell::new(70, 30));
    for _ in 0..20 {
        app.update();
    }
    let mut groups = app.world_mut().query::<(&SharedRoute, &GroupMembers)>();
    let (group, members) = groups.single(app.world()).expect("one group");
    assert_eq!(members.units(), &units[..], "every unit, in order");
    assert!(
        group.shared_cells().len() > 40,
        "the middle spans the field"
    );
    let columns = group.columns().to_vec();
    assert_eq!(columns.len(), 3, "three columns by default");
    assert!(
        columns[1] != columns[0] && columns[2] != columns[0],
        "side columns run beside the middle on the open field"
    );
    let mut used = HashSet::new();
    for &unit in &units {
        let Some(Steering::Following { route, .. }) = app.world().get::<Steering>(unit) else {
            panic!("{unit} has no route");
        };
        let shared = route.shared().expect("routed through the shared middle");
        let column = columns
            .iter()
            .position(|column| Arc::ptr_eq(column, shared));
        assert!(column.is_some(), "{unit} holds a copy of the middle");
        used.extend(column);
    }
    assert_eq!(used.len(), 3, "the units walk in every column");
}

/// Sums the expansions of all frames until every unit has its way.
fn expansions_until_routed(app: &mut App, units: &[Entity]) -> u64 {
    let mut total = 0;
    for _ in 0..5_000 {
        app.update();
        total += app.world().resource::<PathfindingStats>().frame_expansions;
        if units.iter().all(|&u| has_route(app, u)) {
            return total;
        }
    }
    panic!("units still without a route");
}

#[test]
fn a_group_of_100_costs_at_most_15_percent_of_100_requests() {
    let mut rng = Rng::new(404);
    let mut grid = random_grid(&mut rng, 160, 160, 12, 1);
    grid.fill_rect(Cell::new(10, 10), Cell::new(24, 24), 1)
        .unwrap();
    grid.fill_rect(Cell::new(140, 140), Cell::new(150, 150), 1)
        .unwrap();
    let goal = Cell::new(145, 145);
    let run = |grouped: bool| {
        let mut app = timed_app(4096);
        // Each request its own search: the separate orders of the
        // comparison.
        app.world_mut()
            .resource_mut::<PathfindingSettings>()
            .share_goals = false;
        spawn_map(&mut app, grid.clone());
        let units = squad(&mut app, &grid, Cell::new(17, 17), 100, 2.0);
        app.update();
        if grouped {
            order_group(&mut app, &units, goal);
        } else {
            for &unit in &units {
                app.world_mut()
                    .entity_mut(unit)
                    .insert(PathRequest::new(goal));
            }
        }
        expansions_until_routed(&mut app, &units)
    };
    let (group, separate) = (run(true), run(false));
    let ratio = group as f64 / separate as f64;
    assert!(
        ratio <= 0.15,
        "group {group} vs separate {separate} expansions: ratio {ratio:.3}"
    );
}

#[test]
fn far_and_cut_off_units_move_alone() {
    let mut app = timed_app(4096);
    let mut grid = field();
    // A walled pen in the corner: a unit inside cannot reach the goal.
    grid.fill_rect(Cell::new(0, 55), Cell::new(4, 55), NavGrid::BLOCKED)
        .unwrap();
    grid.fill_rect(Cell::new(4, 56), Cell::new(4, 59), NavGrid::BLOCKED)
        .unwrap();
    let map = spawn_map(&mut app, grid.clone());
    let mut units = squad(&mut app, &grid, Cell::new(10, 30), 10, 8.0);
    let far = spawn_mover(&mut app, Cell::new(30, 2), 8.0);
    let penned = spawn_mover(&mut app, Cell::new(1, 58), 8.0);
    units.push(far);
    app.update();
    let mut all = units.clone();
    all.push(penned);
    order_group(&mut app, &all, Cell::new(70, 30));
    app.update();
    assert!(
        app.world().get::<PathRequest>(far).is_some(),
        "far unit on its own"
    );
    assert!(
        app.world().get::<PathRequest>(penned).is_some(),
        "penned unit on its own"
    );
    assert!(app.world().get::<GroupMember>(units[0]).is_some());
    run_until_arrived(&mut app, map, &units, 3_000);
    // The far unit walks in through the others' slots, jostling them;
    // ten seconds later every unit stands at a slot of its own.
    for _ in 0..200 {
        app.update();
    }
    let ends: HashSet<Cell> = units.iter().map(|&u| cell_at(position(&app, u))).collect();
    assert_eq!(
        ends.len(),
        units.len(),
        "the far unit has a slot of its own"
    );
    let penned_result = app.world().get::<PathResult>(penned).unwrap();
    assert_eq!(penned_result.status, PathStatus::NearestReachable);
}

#[test]
fn bad_group_orders_are_answered_per_unit() {
    let mut app = timed_app(4096);
    let grid = field();
    spawn_map(&mut app, grid.clone());
    let units = squad(&mut app, &grid, Cell::new(10, 30), 5, 8.0);
    app.update();
    order_group(&mut app, &units, Cell::new(500, 30));
    app.update();
    for &unit in &units {
        let result = app.world().get::<PathResult>(unit).expect("answered");
        assert_eq!(
            result.status,
            PathStatus::Invalid(InvalidReason::GoalOutOfBounds)
        );
    }
    // Despawned units and non-movers in an order are skipped.
    let ghost = app.world_mut().spawn_empty().id();
    app.world_mut().despawn(ghost);
    let mut with_ghost = units.clone();
    with_ghost.push(ghost);
    order_group(&mut app, &with_ghost, Cell::new(70, 30));
    app.update();
    assert!(
        units
            .iter()
            .all(|&u| app.world().get::<GroupMember>(u).is_some())
    );
}

/// A squad of 20 west of the field's wall, ordered as a group to its east
/// side and run until every member has its route, all still well short of
/// the wall. Returns the app, the map, the units and the lowest row of the
/// gap the shared path goes through.
fn a_group_routed_towards_a_gap() -> (App, Entity, Vec<Entity>, u32) {
    let mut app = timed_app(4096);
    let grid = field();
    let map = spawn_map(&mut app, grid.clone());
    let units = squad(&mut app, &grid, Cell::new(10, 30), 20, 6.0);
    app.update();
    order_group(&mut app, &units, Cell::new(70, 30));
    for _ in 0..10 {
        app.update();
    }
    assert!(units.iter().all(|&u| has_route(&app, u)));
    assert!(units.iter().all(|&u| position(&app, u).x < 30.0));
    let mut groups = app.world_mut().query::<&SharedRoute>();
    let through_top = groups
        .single(app.world())
        .unwrap()
        .shared_cells()
        .iter()
        .any(|c| c.x == 40 && c.y >= 50);
    (app, map, units, if through_top { 50 } else { 8 })
}

#[test]
fn a_wall_dropped_across_the_shared_path_turns_members_at_once_and_is_walked_around() {
    let (mut app, map, units, gap) = a_group_routed_towards_a_gap();
    assert!(cut_legs(app.world_mut()).is_empty());
    // Close the gap the shared path uses while every member is still far
    // from it; the other stays open.
    app.world_mut()
        .get_mut::<NavGrid>(map)
        .unwrap()
        .fill_rect(Cell::new(40, gap), Cell::new(41, gap + 2), NavGrid::BLOCKED)
        .unwrap();
    assert!(!cut_legs(app.world_mut()).is_empty());
    app.update();
    // Nobody walks on towards the closed gap: every route through it is
    // dropped in the frame of the edit, and those units plan again.
    let cut = cut_legs(app.world_mut());
    assert!(cut.is_empty(), "routes through the closed gap: {cut:?}");
    run_until_arrived(&mut app, map, &units, 4_000);
    let ends: HashSet<Cell> = units.iter().map(|&u| cell_at(position(&app, u))).collect();
    assert!(ends.iter().all(|c| c.x > 41), "everyone got through");
}

#[test]
fn a_gap_made_dear_after_the_routes_are_handed_out_is_gone_round() {
    let (mut app, map, units, gap) = a_group_routed_towards_a_gap();
    // Turn the gap the shared path uses into ground that costs 50 a cell
    // (a swamp): the other gap is now far the cheaper way.
    app.world_mut()
        .get_mut::<NavGrid>(map)
        .unwrap()
        .fill_rect(Cell::new(40, gap), Cell::new(41, gap + 2), 50)
        .unwrap();
    let in_swamp = |app: &App| {
        units.iter().copied().find(|&u| {
            let cell = cell_at(position(app, u));
            (40..=41).contains(&cell.x) && (gap..=gap + 2).contains(&cell.y)
        })
    };
    for frame in 0..4_000 {
        app.update();
        if let Some(unit) = in_swamp(&app) {
            panic!("frame {frame}: {unit} wades through the swamp");
        }
        if units
            .iter()
            .all(|&u| app.world().get::<Arrived>(u).is_some())
        {
            break;
        }
    }
    // Once the last has arrived, the others walk the last steps to the
    // places they hold.
    settle(&mut app, &units, 600);
    let ends: HashSet<Cell> = units.iter().map(|&u| cell_at(position(&app, u))).collect();
    assert_eq!(ends.len(), units.len(), "every unit at a cell of its own");
    assert!(ends.iter().all(|c| c.x > 41), "everyone got through");
}

#[test]
fn a_short_move_still_gives_every_unit_its_own_slot() {
    let mut app = timed_app(4096);
    let grid = field();
    let map = spawn_map(&mut app, grid.clone());
    let units = squad(&mut app, &grid, Cell::new(10, 30), 12, 8.0);
    app.update();
    // Three steps away: k shrinks to fit the path.
    order_group(&mut app, &units, Cell::new(13, 30));
    run_until_arrived(&mut app, map, &units, 1_000);
    settle(&mut app, &units, 600);
    let ends: HashSet<Cell> = units.iter().map(|&u| cell_at(position(&app, u))).collect();
    assert_eq!(ends.len(), units.len());
}

#[test]
fn the_same_group_order_gives_the_same_routes() {
    let run = || {
        let mut app = timed_app(512);
        let grid = field();
        spawn_map(&mut app, grid.clone());
        let units = squad(&mut app, &grid, Cell::new(10, 30), 30, 6.0);
        app.update();
        order_group(&mut app, &units, Cell::new(70, 30));
        let mut frames = Vec::new();
        for _ in 0..40 {
            app.update();
            let routes: Vec<Vec<Vec2>> = units
                .iter()
                .map(|&u| match app.world().get::<Steering>(u) {
                    Some(Steering::Following { route, .. }) => route.remaining().collect(),
                    _ => vec![position(&app, u)],
                })
                .collect();
            frames.push(routes);
        }
        frames
    };
    assert_eq!(run(), run());
}

#[test]
fn edits_far_from_a_group_do_not_hold_up_its_routes() {
    // The field, with a sealed pocket in the top right corner where a
    // building goes up and comes down every frame.
    let routed_after = |edit: bool| {
        let mut app = timed_app(200);
        let mut grid = field();
        grid.fill_rect(Cell::new(70, 50), Cell::new(79, 50), NavGrid::BLOCKED)
            .unwrap();
        grid.fill_rect(Cell::new(70, 50), Cell::new(70, 59), NavGrid::BLOCKED)
            .unwrap();
        let units = squad(&mut app, &grid, Cell::new(10, 30), 30, 0.0);
        let map = spawn_map(&mut app, grid);
        order_group(&mut app, &units, Cell::new(60, 30));
        for frame in 1..=500u32 {
            if edit {
                let cost = if frame % 2 == 0 { NavGrid::BLOCKED } else { 1 };
                app.world_mut()
                    .get_mut::<NavGrid>(map)
                    .unwrap()
                    .fill_rect(Cell::new(74, 54), Cell::new(76, 56), cost)
                    .unwrap();
            }
            app.update();
            if units.iter().all(|&u| has_route(&app, u)) {
                let grouped = units
                    .iter()
                    .filter(|&&u| app.world().get::<PathRequest>(u).is_none())
                    .count();
                return Some((frame, grouped));
            }
        }
        None
    };
    let quiet = routed_after(false).unwrap();
    assert_eq!(routed_after(true), Some(quiet));
    assert!(quiet.1 > 20, "most units follow the shared path: {quiet:?}");
}

/// With searches and floods in lanes, two groups ordered at once, on a
/// budget too small for their floods in one frame, are both spliced (not
/// sent alone) and every unit arrives at a slot of its own.
#[test]
fn groups_spliced_side_by_side_all_arrive_at_slots_of_their_own() {
    let mut app = timed_app(200);
    {
        let mut settings = app.world_mut().resource_mut::<PathfindingSettings>();
        settings.search_lanes = 3;
        settings.threads = 2;
    }
    let grid = field();
    let map = spawn_map(&mut app, grid.clone());
    let west = squad(&mut app, &grid, Cell::new(10, 30), 20, 6.0);
    let east = squad(&mut app, &grid, Cell::new(70, 20), 20, 6.0);
    app.update();
    order_group(&mut app, &west, Cell::new(70, 40));
    order_group(&mut app, &east, Cell::new(10, 20));
    let mut spliced = HashSet::new();
    for _ in 0..400 {
        app.update();
        let mut groups = app.world_mut().query::<(Entity, &SharedRoute)>();
        for (entity, group) in groups.iter(app.world()) {
            if group.is_spliced() && group.flood_expansions() > 0 {
                spliced.insert(entity);
            }
        }
        if spliced.len() == 2 {
            break;
        }
    }
    assert_eq!(spliced.len(), 2, "both groups get their routes from floods");
    let mut units = west.clone();
    units.extend(&east);
    run_until_arrived(&mut app, map, &units, 3_000);
    settle(&mut app, &units, 600);
    let ends: HashSet<Cell> = units.iter().map(|&u| cell_at(position(&app, u))).collect();
    assert_eq!(ends.len(), units.len(), "two units share an end cell");
}

/// A game takes one unit out of a group order by removing its
/// `GroupMember` (a unit in range of its target, say): it stops where it
/// stands (settling on the free cell nearest it) and stays there, hears
/// no `UnitArrived`, and the rest of the group goes on to their slots.
/// (Before, nothing said how, and a unit taken out walked on to its
/// slot.)
#[test]
fn a_unit_taken_out_of_a_group_stops_and_the_group_goes_on() {
    let mut app = timed_app(4096);
    let grid = field();
    let map = spawn_map(&mut app, grid.clone());
    let units = squad(&mut app, &grid, Cell::new(10, 30), 12, 6.0);
    app.update();
    order_group(&mut app, &units, Cell::new(70, 30));
    // One taken out while it waits for its part of the route, one while
    // it walks it.
    let (waiting, walking) = (units[3], units[7]);
    app.update();
    app.world_mut().entity_mut(waiting).remove::<GroupMember>();
    for _ in 0..400 {
        app.update();
        if matches!(
            app.world().get::<Steering>(walking),
            Some(Steering::Following { .. })
        ) {
            break;
        }
    }
    app.world_mut().entity_mut(walking).remove::<GroupMember>();
    app.update();
    let stopped = [position(&app, waiting), position(&app, walking)];
    let others: Vec<Entity> = units
        .iter()
        .copied()
        .filter(|&u| u != waiting && u != walking)
        .collect();
    run_until_arrived(&mut app, map, &others, 3_000);
    for (unit, at) in [waiting, walking].into_iter().zip(stopped) {
        assert!(matches!(
            app.world().get::<Steering>(unit),
            Some(Steering::Idle)
        ));
        assert!(
            app.world().get::<Arrived>(unit).is_none(),
            "{unit} was told it arrived"
        );
        assert!(
            // A standing unit settles on the free cell nearest to it.
            position(&app, unit).distance(at) < 1.5,
            "{unit} walked on from {at} to {}",
            position(&app, unit)
        );
    }
}

/// Squads of 12 and 20 walked across open ground as the guide walks one
/// (a block of four abreast, speed 5, to a point 56 cells on): every
/// member reaches its own slot. Members of one group do not part into
/// lanes from each other (unless the group is held up in a jam), so the
/// squad keeps its shape and none is hemmed in short of its slot by the
/// others settling into theirs; when they did, one member of the 12 ended
/// `StoppedShort` with the goal 12 or 4 rows up.
#[test]
fn squads_walked_across_open_ground_all_reach_their_slots() {
    for (count, goal_y) in [(12, 12), (12, 4), (20, 12), (16, 20)] {
        let mut app = timed_app(PathfindingSettings::default().nodes_per_frame);
        let map = spawn_map(&mut app, NavGrid::new(64, 32).unwrap());
        let units: Vec<Entity> = (0..count)
            .map(|i| spawn_mover(&mut app, Cell::new(2 + i % 4, 10 + i / 4), 5.0))
            .collect();
        order_group(&mut app, &units, Cell::new(58, goal_y));
        run_until_arrived(&mut app, map, &units, 400);
        for &unit in &units {
            assert_eq!(
                app.world().get::<Arrived>(unit).map(|a| a.outcome),
                Some(Arrival::Reached),
                "{count} to row {goal_y}: {unit} at {}",
                position(&app, unit)
            );
        }
    }
}
