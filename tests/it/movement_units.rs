//! Movers walk the frame they are ordered, on instinct, then join their
//! path without walking back, never stand in a wall, re-plan when a wall
//! cuts their path, and arrive.

use std::sync::{Arc, Mutex};

use bevy::prelude::*;
use bevy_frontier::core::{Cell, MovingAiMap, SearchConfig, find_path};
use bevy_frontier::movement::{Arrived, Steering};
use bevy_frontier::prelude::*;

use crate::common::{
    Rng, cell_at, movingai_dir, position, random_walkable, serpentine, spawn_map, spawn_mover,
    timed_app,
};

fn order(app: &mut App, unit: Entity, goal: Cell) {
    app.world_mut()
        .entity_mut(unit)
        .insert(PathRequest::new(goal));
}

/// Runs up to `frames` frames; whether `unit` arrived.
fn arrives_within(app: &mut App, unit: Entity, frames: u32) -> bool {
    (0..frames).any(|_| {
        app.update();
        app.world().get::<Arrived>(unit).is_some()
    })
}

#[test]
fn moves_in_the_frame_of_the_order() {
    let mut app = timed_app(1);
    spawn_map(&mut app, NavGrid::new(100, 100).unwrap());
    let unit = spawn_mover(&mut app, Cell::new(5, 5), 4.0);
    app.update();
    order(&mut app, unit, Cell::new(95, 5));
    app.update();
    assert!(
        app.world().get::<PathResult>(unit).is_none(),
        "no path can exist yet"
    );
    let moved = position(&app, unit);
    assert!(
        moved.x > 5.0 && (moved.y - 5.0).abs() < 1e-4,
        "walked toward the goal: {moved}"
    );
}

#[test]
fn arrives_and_says_so() {
    let mut app = timed_app(4096);
    let arrived = Arc::new(Mutex::new(Vec::new()));
    let sink = arrived.clone();
    app.add_observer(move |event: On<UnitArrived>| sink.lock().unwrap().push(event.entity));
    spawn_map(&mut app, serpentine(40, 20));
    let unit = spawn_mover(&mut app, Cell::new(0, 0), 8.0);
    order(&mut app, unit, Cell::new(39, 19));
    assert!(arrives_within(&mut app, unit, 2_000), "never arrived");
    assert!(position(&app, unit).distance(Vec2::new(39.0, 19.0)) < 1e-3);
    assert_eq!(*arrived.lock().unwrap(), vec![unit]);
}

#[test]
fn open_ground_is_crossed_in_a_straight_line() {
    let mut app = timed_app(4096);
    spawn_map(&mut app, NavGrid::new(60, 60).unwrap());
    let unit = spawn_mover(&mut app, Cell::new(2, 3), 0.0);
    order(&mut app, unit, Cell::new(50, 20));
    app.update();
    app.update();
    match app.world().get::<Steering>(unit).unwrap() {
        Steering::Following { route, .. } => {
            assert_eq!(
                route.remaining().collect::<Vec<_>>(),
                vec![Vec2::new(50.0, 20.0)],
                "not a straight line"
            );
        }
        other => panic!("not following: {other:?}"),
    }
}

/// Cost of a path from its `from`-th cell to its end.
fn rest_of(grid: &NavGrid, cells: &[Cell], from: usize) -> f64 {
    cells[from..]
        .windows(2)
        .map(|w| grid.step_cost(w[0], w[1]).unwrap())
        .sum()
}

#[test]
fn joining_the_path_never_walks_back() {
    // Slow searches and fast units: they walk far on instinct first.
    let mut app = timed_app(60);
    let grid = serpentine(80, 40);
    spawn_map(&mut app, grid.clone());
    let mut rng = Rng::new(11);
    let mut checked = 0;
    for _ in 0..12 {
        let start = random_walkable(&mut rng, &grid).unwrap();
        let goal = random_walkable(&mut rng, &grid).unwrap();
        let unit = spawn_mover(&mut app, start, 6.0);
        order(&mut app, unit, goal);
        let mut last_position = position(&app, unit);
        for _ in 0..400 {
            app.update();
            let steering = app.world().get::<Steering>(unit).unwrap().clone();
            if let Steering::Following { route, .. } = steering {
                let waypoints: Vec<Vec2> = route.remaining().collect();
                let result = app.world().get::<PathResult>(unit).unwrap();
                // Where the unit stood when it switched, and the path it joined.
                let here = cell_at(last_position);
                let (_, best) = find_path(&grid, here, goal, SearchConfig::default()).unwrap();
                let best = best.unwrap().cost;
                // The unit may first step to its own cell's centre.
                let mut walk = 0.0;
                let mut from = last_position;
                let mut index = None;
                for &waypoint in &waypoints {
                    walk += from.distance(waypoint) as f64;
                    from = waypoint;
                    index = result.cells.iter().position(|&c| c == cell_at(waypoint));
                    if index.is_some() {
                        break;
                    }
                }
                let index = index.expect("the waypoints join the path");
                let via_path = walk + rest_of(&grid, &result.cells, index);
                assert!(
                    via_path <= best + 1.0 + 1e-6,
                    "joining costs {via_path}, going straight {best}"
                );
                checked += 1;
                break;
            }
            last_position = position(&app, unit);
        }
        app.world_mut().despawn(unit);
    }
    assert!(checked >= 10);
}

#[test]
fn never_stands_in_a_wall() {
    let Some(dir) = movingai_dir("movement_units::never_stands_in_a_wall") else {
        return;
    };
    let map = MovingAiMap::load(dir.join("maps/dao/den312d.map")).unwrap();
    let grid = map.to_nav_grid();
    let mut app = timed_app(2_000);
    spawn_map(&mut app, grid.clone());
    let mut rng = Rng::new(17);
    let units: Vec<Entity> = (0..30)
        .map(|_| spawn_mover(&mut app, random_walkable(&mut rng, &grid).unwrap(), 5.0))
        .collect();
    for frame in 0..3_000 {
        if frame % 150 == 0 {
            for &unit in &units {
                // Some goals are walls or cut off: units still only walk on ground.
                let goal = Cell::new(rng.below(grid.width()), rng.below(grid.height()));
                order(&mut app, unit, goal);
            }
        }
        app.update();
        for &unit in &units {
            let p = position(&app, unit);
            let cell = cell_at(p);
            assert!(
                grid.is_walkable(cell),
                "frame {frame}: unit at {p} in {cell}"
            );
        }
    }
}

#[test]
fn a_wall_across_the_path_makes_the_unit_replan_and_still_arrive() {
    let mut app = timed_app(4096);
    let map = spawn_map(&mut app, NavGrid::new(40, 30).unwrap());
    let unit = spawn_mover(&mut app, Cell::new(2, 15), 3.0);
    order(&mut app, unit, Cell::new(37, 15));
    for _ in 0..5 {
        app.update();
    }
    assert!(matches!(
        app.world().get::<Steering>(unit).unwrap(),
        Steering::Following { .. }
    ));
    // A wall across the field ahead, with a gap at the top.
    app.world_mut()
        .get_mut::<NavGrid>(map)
        .unwrap()
        .fill_rect(Cell::new(20, 0), Cell::new(20, 26), NavGrid::BLOCKED)
        .unwrap();
    let grid = app.world().get::<NavGrid>(map).unwrap().clone();
    for _ in 0..3_000 {
        app.update();
        assert!(grid.is_walkable(cell_at(position(&app, unit))));
        if app.world().get::<Arrived>(unit).is_some() {
            break;
        }
    }
    assert!(app.world().get::<Arrived>(unit).is_some(), "never arrived");
    assert!(position(&app, unit).distance(Vec2::new(37.0, 15.0)) < 1e-3);
}

#[test]
fn a_unit_walled_in_where_it_stands_walks_out() {
    let mut app = timed_app(4096);
    let map = spawn_map(&mut app, NavGrid::new(20, 20).unwrap());
    let unit = spawn_mover(&mut app, Cell::new(5, 5), 3.0);
    app.update();
    app.world_mut()
        .get_mut::<NavGrid>(map)
        .unwrap()
        .set_cost(Cell::new(5, 5), NavGrid::BLOCKED)
        .unwrap();
    order(&mut app, unit, Cell::new(15, 5));
    assert!(arrives_within(&mut app, unit, 400), "stuck in the wall");
    assert!(position(&app, unit).distance(Vec2::new(15.0, 5.0)) < 1e-3);
}

#[test]
fn removing_the_request_stops_the_unit_where_it_is() {
    // Once while walking on instinct (no path can come: no budget), once
    // while following its path.
    for budget in [0, 4096] {
        let mut app = timed_app(budget);
        spawn_map(&mut app, NavGrid::new(100, 20).unwrap());
        let unit = spawn_mover(&mut app, Cell::new(5, 5), 4.0);
        order(&mut app, unit, Cell::new(95, 5));
        for _ in 0..5 {
            app.update();
        }
        assert!(position(&app, unit).x > 5.5, "it walked");
        app.world_mut().entity_mut(unit).remove::<PathRequest>();
        app.update();
        let stopped = position(&app, unit);
        for _ in 0..20 {
            app.update();
        }
        assert_eq!(position(&app, unit), stopped, "budget {budget}");
        assert_eq!(app.world().get::<Steering>(unit), Some(&Steering::Idle));
    }
}

#[test]
fn a_unit_in_a_wall_replans_from_the_cell_nearest_itself() {
    let mut app = timed_app(1);
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 1,
        jump_points: false,
        ..default()
    });
    let mut grid = NavGrid::new(30, 20).unwrap();
    grid.fill_rect(Cell::new(9, 5), Cell::new(12, 15), NavGrid::BLOCKED)
        .unwrap();
    let map = spawn_map(&mut app, grid);
    // Not a mover: it stands where it is, inside the wall at (10, 10).
    let unit = app
        .world_mut()
        .spawn((
            Transform::from_xyz(10.0, 10.0, 0.0),
            PathRequest::new(Cell::new(0, 10)),
        ))
        .id();
    app.update();
    // While its search runs, the wall grows to x = 7: the walkable cell
    // nearest the unit is now (13, 10), three cells away; the one nearest
    // its first start (8, 10) would be (6, 10), four away.
    app.world_mut()
        .get_mut::<NavGrid>(map)
        .unwrap()
        .fill_rect(Cell::new(7, 5), Cell::new(8, 15), NavGrid::BLOCKED)
        .unwrap();
    for _ in 0..200 {
        app.update();
    }
    let answer = app.world().get::<PathResult>(unit).unwrap();
    assert_eq!(answer.status, PathStatus::Complete);
    assert_eq!(answer.cells[0], Cell::new(13, 10));
}

#[test]
fn a_unit_walled_in_with_only_a_corner_to_cross_walks_out() {
    let mut app = timed_app(4096);
    let map = spawn_map(&mut app, NavGrid::new(12, 12).unwrap());
    let unit = spawn_mover(&mut app, Cell::new(6, 6), 3.0);
    app.update();
    // Walls on the unit's cell and all round it but one diagonal, (5, 5),
    // whose side cells are walls too.
    let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
    grid.fill_rect(Cell::new(5, 5), Cell::new(7, 7), NavGrid::BLOCKED)
        .unwrap();
    grid.set_cost(Cell::new(5, 5), 1).unwrap();
    order(&mut app, unit, Cell::new(1, 1));
    assert!(arrives_within(&mut app, unit, 400), "stuck in the wall");
}

#[test]
fn a_unit_leaving_a_gap_at_a_slant_passes_the_wall_corner() {
    // A one-cell gap in a wall; the way on runs at a slant that passes
    // a fifth of a cell from the gap's lower corner. Frame steps that
    // cross a column and a row at once there used to be taken for a
    // corner cut, and the unit was stopped and sent the same way again,
    // for ever.
    let mut grid = NavGrid::new(40, 30).unwrap();
    grid.fill_rect(Cell::new(20, 0), Cell::new(20, 29), NavGrid::BLOCKED)
        .unwrap();
    grid.set_cost(Cell::new(20, 20), 1).unwrap();
    let mut app = timed_app(4096);
    spawn_map(&mut app, grid);
    let unit = spawn_mover(&mut app, Cell::new(20, 20), 6.0);
    app.update();
    order(&mut app, unit, Cell::new(28, 14));
    assert!(arrives_within(&mut app, unit, 200));
    assert_eq!(cell_at(position(&app, unit)), Cell::new(28, 14));
}
