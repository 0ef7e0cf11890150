//! The plugin never spends more than its node budget in a frame, and a
//! search spread over many frames finds the path an unsliced search finds.

use bevy::prelude::*;
use bevy_frontier::core::{Cell, SearchConfig, find_path};
use bevy_frontier::pathfinding::PathfindingStats;
use bevy_frontier::prelude::*;

use crate::common::{
    Rng, app, random_walkable, result, run_until_answered, serpentine, spawn_map, spawn_unit,
};

#[test]
fn budget_honoured_in_every_frame() {
    let mut app = app();
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 700,
        ..default()
    });
    let mut rng = Rng::new(5);
    let grid = crate::common::random_grid(&mut rng, 120, 120, 25, 3);
    let cells: Vec<(Cell, Cell)> = (0..150)
        .map(|_| {
            (
                random_walkable(&mut rng, &grid).unwrap(),
                random_walkable(&mut rng, &grid).unwrap(),
            )
        })
        .collect();
    spawn_map(&mut app, grid);
    let units: Vec<Entity> = cells
        .iter()
        .map(|&(start, goal)| spawn_unit(&mut app, start, PathRequest::new(goal)))
        .collect();
    let mut frames = 0;
    let mut busy_frames = 0;
    while units.iter().any(|&u| result(&app, u).is_none()) {
        app.update();
        frames += 1;
        let spent = app.world().resource::<PathfindingStats>().frame_expansions;
        assert!(spent <= 700, "frame {frames} spent {spent} expansions");
        busy_frames += (spent == 700) as u32;
        assert!(frames < 10_000, "requests never finished");
    }
    assert!(busy_frames > 5, "the test should keep the budget busy");
    let total: u64 = units
        .iter()
        .map(|&u| result(&app, u).unwrap().expansions)
        .sum();
    assert!(total <= 700 * frames as u64);
}

#[test]
fn long_search_spans_frames_and_matches_unsliced() {
    let grid = serpentine(120, 60);
    let (start, goal) = (Cell::new(0, 0), Cell::new(119, 59));
    let (_, unsliced) = find_path(&grid, start, goal, SearchConfig::default()).unwrap();
    let unsliced = unsliced.unwrap();

    let mut app = app();
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 4,
        ..default()
    });
    spawn_map(&mut app, grid);
    let unit = spawn_unit(&mut app, start, PathRequest::new(goal));
    let (frames, most) = run_until_answered(&mut app, &[unit], 5_000);
    let answer = result(&app, unit).unwrap();
    assert!(
        frames > 20,
        "only {frames} frames: the search should be sliced"
    );
    assert!(most <= 4);
    assert_eq!(answer.status, PathStatus::Complete);
    assert_eq!(answer.cells, unsliced.cells);
    assert!((answer.cost as f64 - unsliced.cost).abs() < 1e-3);
    assert_eq!(
        answer.frames_waited,
        frames - 1,
        "answered in the frame the search ended"
    );
    assert_eq!(answer.waypoints.len(), answer.cells.len());
    assert_eq!(answer.waypoints.last(), Some(&Vec2::new(119.0, 59.0)));
}

#[test]
fn diagnostics_are_recorded() {
    use bevy::diagnostic::DiagnosticsStore;
    let mut app = app();
    spawn_map(&mut app, serpentine(60, 30));
    let unit = spawn_unit(
        &mut app,
        Cell::new(0, 0),
        PathRequest::new(Cell::new(59, 29)),
    );
    run_until_answered(&mut app, &[unit], 100);
    app.update();
    let store = app.world().resource::<DiagnosticsStore>();
    let expansions = store
        .get(&bevy_frontier::pathfinding::diagnostics::EXPANSIONS)
        .expect("registered");
    assert!(expansions.history_len() > 0);
    assert!(expansions.values().any(|&v| v > 0.0));
    assert!(
        store
            .get(&bevy_frontier::pathfinding::diagnostics::FRAMES_TO_RESULT)
            .unwrap()
            .history_len()
            > 0
    );
    assert!(
        store
            .get(&bevy_frontier::pathfinding::diagnostics::QUEUED)
            .unwrap()
            .history_len()
            > 0
    );
    assert!(
        store
            .get(&bevy_frontier::pathfinding::diagnostics::IN_FLIGHT)
            .unwrap()
            .history_len()
            > 0
    );
}
