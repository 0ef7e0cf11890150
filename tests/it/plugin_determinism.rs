//! Two identical apps fed the same requests in the same frames give the
//! same results in the same frames.

use bevy::prelude::*;
use bevy_frontier::core::Cell;
use bevy_frontier::pathfinding::PathfindingStats;
use bevy_frontier::prelude::*;

use crate::common::{Rng, app, random_grid, random_walkable, spawn_map, spawn_unit};

/// One unit's result: its index, status, cells and expansions.
type Answer = (u32, PathStatus, Vec<Cell>, u64);

/// Per frame: expansions spent and every result so far.
fn run(seed: u64) -> Vec<(u64, Vec<Answer>)> {
    let mut app = app();
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 300,
        max_in_flight: 3,
        ..default()
    });
    let mut rng = Rng::new(seed);
    let grid = random_grid(&mut rng, 64, 64, 30, 4);
    let map = spawn_map(&mut app, grid.clone());
    let mut units = Vec::new();
    let mut log = Vec::new();
    for frame in 0..400 {
        // New orders in some frames, a wall toggled in others.
        if frame % 7 == 0 && frame < 120 {
            for _ in 0..6 {
                let start = random_walkable(&mut rng, &grid).unwrap();
                let goal = random_walkable(&mut rng, &grid).unwrap();
                let priority = rng.below(3) as i32;
                units.push(spawn_unit(
                    &mut app,
                    start,
                    PathRequest::new(goal).with_priority(priority),
                ));
            }
        }
        if frame % 11 == 5 {
            let cell = Cell::new(rng.below(64), rng.below(64));
            let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
            let cost = if grid.is_walkable(cell) {
                NavGrid::BLOCKED
            } else {
                1
            };
            grid.set_cost(cell, cost).unwrap();
        }
        app.update();
        let spent = app.world().resource::<PathfindingStats>().frame_expansions;
        let results = units
            .iter()
            .enumerate()
            .filter_map(|(i, &u)| {
                let r = app.world().get::<PathResult>(u)?;
                Some((i as u32, r.status, r.cells.clone(), r.expansions))
            })
            .collect();
        log.push((spent, results));
    }
    log
}

#[test]
fn identical_apps_give_identical_results_frame_by_frame() {
    let first = run(42);
    let second = run(42);
    let answered = first.last().unwrap().1.len();
    assert!(answered > 50, "only {answered} results to compare");
    let busy = first.iter().filter(|(spent, _)| *spent == 300).count();
    assert!(busy > 20, "only {busy} frames used the whole budget");
    for (frame, (a, b)) in first.iter().zip(&second).enumerate() {
        assert_eq!(a, b, "frame {frame} differs");
    }
}
