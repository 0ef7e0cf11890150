//! The map changing under searches and under finished paths.

use std::sync::{Arc, Mutex};

use bevy::prelude::*;
use bevy_frontier::core::Cell;
use bevy_frontier::prelude::*;

use crate::common::{Rng, app, random_problem, result, run_until_answered, spawn_map, spawn_unit};

fn assert_walkable_path(grid: &NavGrid, cells: &[Cell]) {
    for pair in cells.windows(2) {
        assert!(
            grid.can_step(pair[0], pair[1]),
            "path steps {} -> {} on the current grid",
            pair[0],
            pair[1]
        );
    }
}

#[test]
fn wall_added_under_an_in_flight_search() {
    let mut app = app();
    // Plain A*, so that the search is still running when the map changes
    // (jump points would cross this open map at once).
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 20,
        jump_points: false,
        ..default()
    });
    let map = spawn_map(&mut app, NavGrid::new(60, 60).unwrap());
    let unit = spawn_unit(
        &mut app,
        Cell::new(0, 30),
        PathRequest::new(Cell::new(59, 30)),
    );
    app.update();
    app.update();
    assert!(
        result(&app, unit).is_none(),
        "the search should still be running"
    );
    // A wall across the straight line, with a gap at the top.
    app.world_mut()
        .get_mut::<NavGrid>(map)
        .unwrap()
        .fill_rect(Cell::new(30, 0), Cell::new(30, 57), NavGrid::BLOCKED)
        .unwrap();
    run_until_answered(&mut app, &[unit], 2_000);
    let answer = result(&app, unit).unwrap();
    assert_eq!(answer.status, PathStatus::Complete);
    let grid = app.world().get::<NavGrid>(map).unwrap();
    assert_walkable_path(grid, &answer.cells);
    assert_eq!(answer.grid_version, grid.version());
    assert!(
        answer.cells.iter().any(|c| c.x == 30 && c.y > 57),
        "path goes through the gap"
    );
}

#[test]
fn goal_walled_off_while_waiting_goes_nearest() {
    let mut app = app();
    // Plain A*, so that the search is still running when the map changes
    // (jump points would cross this open map at once).
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 20,
        jump_points: false,
        ..default()
    });
    let map = spawn_map(&mut app, NavGrid::new(40, 40).unwrap());
    let unit = spawn_unit(
        &mut app,
        Cell::new(0, 0),
        PathRequest::new(Cell::new(35, 35)),
    );
    app.update();
    // Box the goal in.
    let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
    grid.fill_rect(Cell::new(33, 33), Cell::new(37, 33), NavGrid::BLOCKED)
        .unwrap();
    grid.fill_rect(Cell::new(33, 37), Cell::new(37, 37), NavGrid::BLOCKED)
        .unwrap();
    grid.fill_rect(Cell::new(33, 33), Cell::new(33, 37), NavGrid::BLOCKED)
        .unwrap();
    grid.fill_rect(Cell::new(37, 33), Cell::new(37, 37), NavGrid::BLOCKED)
        .unwrap();
    run_until_answered(&mut app, &[unit], 2_000);
    let answer = result(&app, unit).unwrap();
    assert_eq!(answer.status, PathStatus::NearestReachable);
    // (35, 32), (32, 35), (38, 35) and (35, 38) are all 3 away: ties go to
    // the lowest row.
    assert_eq!(answer.cells.last(), Some(&Cell::new(35, 32)));
}

#[test]
fn wall_added_under_a_finished_path_flags_it() {
    let mut app = app();
    let invalidated = Arc::new(Mutex::new(Vec::new()));
    let sink = invalidated.clone();
    app.add_observer(move |event: On<PathInvalidated>| sink.lock().unwrap().push(event.entity));
    let map = spawn_map(&mut app, NavGrid::new(40, 20).unwrap());
    let crossing = spawn_unit(
        &mut app,
        Cell::new(0, 5),
        PathRequest::new(Cell::new(39, 5)),
    );
    let elsewhere = spawn_unit(
        &mut app,
        Cell::new(0, 15),
        PathRequest::new(Cell::new(39, 15)),
    );
    run_until_answered(&mut app, &[crossing, elsewhere], 100);
    app.update();
    assert!(!result(&app, crossing).unwrap().invalidated);

    // A wall on the first path only, and rough terrain off both paths.
    let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
    grid.fill_rect(Cell::new(20, 3), Cell::new(20, 7), NavGrid::BLOCKED)
        .unwrap();
    grid.set_cost(Cell::new(5, 10), 4).unwrap();
    app.update();
    assert!(result(&app, crossing).unwrap().invalidated);
    assert!(!result(&app, elsewhere).unwrap().invalidated);
    assert_eq!(*invalidated.lock().unwrap(), vec![crossing]);

    // Re-planning (a new request) gives a valid, unflagged path.
    app.world_mut()
        .entity_mut(crossing)
        .insert(PathRequest::new(Cell::new(39, 5)));
    for _ in 0..20 {
        app.update();
    }
    let answer = result(&app, crossing).unwrap();
    assert!(!answer.invalidated);
    assert_walkable_path(app.world().get::<NavGrid>(map).unwrap(), &answer.cells);
}

#[test]
fn a_wall_beside_a_diagonal_step_flags_the_path() {
    let mut app = app();
    let map = spawn_map(&mut app, NavGrid::new(20, 20).unwrap());
    let unit = spawn_unit(
        &mut app,
        Cell::new(0, 0),
        PathRequest::new(Cell::new(10, 10)),
    );
    run_until_answered(&mut app, &[unit], 100);
    let cells = result(&app, unit).unwrap().cells;
    // The straight diagonal; wall a cell beside one of its steps, which
    // is not on the path but makes that step cut a corner.
    assert!(cells.contains(&Cell::new(4, 4)) && cells.contains(&Cell::new(5, 5)));
    assert!(!cells.contains(&Cell::new(5, 4)));
    app.world_mut()
        .get_mut::<NavGrid>(map)
        .unwrap()
        .set_cost(Cell::new(5, 4), NavGrid::BLOCKED)
        .unwrap();
    app.update();
    assert!(result(&app, unit).unwrap().invalidated);
}

#[test]
fn random_wall_toggles_never_leave_an_illegal_path_unflagged() {
    let mut app = app();
    let mut rng = Rng::new(3);
    let mut grid = NavGrid::new(64, 64).unwrap();
    for _ in 0..300 {
        let cell = Cell::new(rng.below(64), rng.below(64));
        grid.set_cost(cell, NavGrid::BLOCKED).unwrap();
    }
    let map = spawn_map(&mut app, grid);
    let units: Vec<Entity> = (0..60)
        .filter_map(|_| {
            let grid = app.world().get::<NavGrid>(map).unwrap();
            let (start, goal) = random_problem(&mut rng, grid)?;
            Some(spawn_unit(&mut app, start, PathRequest::new(goal)))
        })
        .collect();
    run_until_answered(&mut app, &units, 200);
    for _ in 0..200 {
        let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
        let cell = Cell::new(rng.below(64), rng.below(64));
        let cost = if grid.is_walkable(cell) {
            NavGrid::BLOCKED
        } else {
            1
        };
        grid.set_cost(cell, cost).unwrap();
        app.update();
        let grid = app.world().get::<NavGrid>(map).unwrap();
        for &unit in &units {
            let answer = result(&app, unit).unwrap();
            let legal = answer.cells.windows(2).all(|s| grid.can_step(s[0], s[1]));
            assert!(
                legal || answer.invalidated,
                "an illegal path is not flagged"
            );
        }
    }
}

/// A wall put up on a held path and taken down again between two frames
/// (a building placed and cancelled, a gate shut and opened) is a change
/// under the path: it is flagged in the next frame, as it was before
/// flags went by movement class; and a cell changed beside the path, not
/// under it, flags nothing. (Per class, the flags had come to compare
/// only the cell's cost at the two frames, and missed it.)
#[test]
fn a_wall_up_and_down_between_frames_flags_the_path_under_it() {
    let mut app = app();
    let map = spawn_map(&mut app, NavGrid::new(40, 20).unwrap());
    let unit = spawn_unit(
        &mut app,
        Cell::new(2, 10),
        PathRequest::new(Cell::new(37, 10)),
    );
    run_until_answered(&mut app, &[unit], 100);
    let path = result(&app, unit).unwrap().cells;
    let on = path[path.len() / 2];
    let beside = Cell::new(on.x, on.y + 3);
    let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
    grid.set_cost(beside, NavGrid::BLOCKED).unwrap();
    grid.set_cost(beside, 1).unwrap();
    app.update();
    assert!(
        !result(&app, unit).unwrap().invalidated,
        "a cell beside the path"
    );
    let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
    grid.set_cost(on, NavGrid::BLOCKED).unwrap();
    grid.set_cost(on, 1).unwrap();
    app.update();
    assert!(
        result(&app, unit).unwrap().invalidated,
        "a wall went up on {on} and down"
    );
}
