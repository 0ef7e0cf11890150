//! Settings the app inserts win, whether inserted before or after the
//! plugin.

use bevy::prelude::*;
use bevy_frontier::core::Cell;
use bevy_frontier::pathfinding::PathfindingStats;
use bevy_frontier::prelude::*;

use crate::common::{serpentine, spawn_map, spawn_unit};

fn busiest_frame(mut app: App) -> u64 {
    // One patch of rough ground makes this a plain A* search, long enough
    // to fill every frame's budget.
    let mut grid = serpentine(200, 100);
    grid.set_cost(Cell::new(1, 99), 2).unwrap();
    spawn_map(&mut app, grid);
    spawn_unit(
        &mut app,
        Cell::new(0, 0),
        PathRequest::new(Cell::new(199, 99)),
    );
    app.update();
    app.update();
    app.world().resource::<PathfindingStats>().frame_expansions
}

#[test]
fn inserted_before_the_plugin() {
    let mut app = App::new();
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 77,
        ..default()
    });
    app.add_plugins((MinimalPlugins, FrontierPlugins::default()));
    assert_eq!(
        app.world()
            .resource::<PathfindingSettings>()
            .nodes_per_frame,
        77
    );
    assert_eq!(busiest_frame(app), 77);
}

#[test]
fn inserted_after_the_plugin() {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, FrontierPlugins::default()));
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 55,
        ..default()
    });
    assert_eq!(busiest_frame(app), 55);
}

#[test]
fn defaults() {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, FrontierPlugins::default()));
    assert_eq!(
        app.world()
            .resource::<PathfindingSettings>()
            .nodes_per_frame,
        4096
    );
    assert_eq!(busiest_frame(app), 4096);
}

#[test]
fn expansion_cap_gives_partial_results() {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, FrontierPlugins::default()));
    app.insert_resource(PathfindingSettings {
        max_expansions_per_request: Some(100),
        ..default()
    });
    spawn_map(&mut app, serpentine(100, 50));
    let unit = spawn_unit(
        &mut app,
        Cell::new(0, 0),
        PathRequest::new(Cell::new(99, 49)),
    );
    app.update();
    let answer = app.world().get::<PathResult>(unit).unwrap();
    assert_eq!(answer.status, PathStatus::Partial);
    assert!(answer.expansions <= 100);
    assert_eq!(answer.cells.first(), Some(&Cell::new(0, 0)));
    assert!(answer.cells.len() > 5);
}

#[test]
fn runs_in_a_chosen_schedule() {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, PathfindingPlugin::new(FixedUpdate)));
    spawn_map(&mut app, NavGrid::new(10, 10).unwrap());
    let unit = spawn_unit(&mut app, Cell::new(0, 0), PathRequest::new(Cell::new(9, 9)));
    app.world_mut().run_schedule(FixedUpdate);
    assert_eq!(
        app.world().get::<PathResult>(unit).unwrap().status,
        PathStatus::Complete
    );
}

#[test]
fn wall_clock_cap_stops_the_frame_early() {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, FrontierPlugins::default()));
    app.insert_resource(PathfindingSettings {
        max_frame_time: Some(std::time::Duration::ZERO),
        jump_points: false,
        ..default()
    });
    spawn_map(&mut app, serpentine(200, 100));
    let unit = spawn_unit(
        &mut app,
        Cell::new(0, 0),
        PathRequest::new(Cell::new(199, 99)),
    );
    // A zero cap lets each frame run one slice of expansions, then stop.
    for _ in 0..5 {
        app.update();
        let spent = app.world().resource::<PathfindingStats>().frame_expansions;
        assert_eq!(spent, PathfindingSettings::TIME_CHECK_INTERVAL as u64);
    }
    crate::common::run_until_answered(&mut app, &[unit], 10_000);
    assert_eq!(
        app.world().get::<PathResult>(unit).unwrap().status,
        PathStatus::Complete
    );
}

#[test]
fn a_heuristic_weight_that_makes_no_sense_is_clamped() {
    for weight in [f32::NAN, -2.0, f32::INFINITY] {
        let mut app = App::new();
        app.add_plugins((MinimalPlugins, FrontierPlugins::default()));
        app.insert_resource(PathfindingSettings {
            heuristic_weight: weight,
            ..default()
        });
        spawn_map(&mut app, serpentine(40, 20));
        let unit = spawn_unit(
            &mut app,
            Cell::new(0, 0),
            PathRequest::new(Cell::new(39, 19)),
        );
        for _ in 0..10 {
            app.update();
        }
        let answer = app.world().get::<PathResult>(unit).unwrap();
        assert_eq!(answer.status, PathStatus::Complete, "weight {weight}");
        let settings = app.world().resource::<PathfindingSettings>();
        assert_eq!(settings.heuristic_weight, 1.0, "weight {weight}");
    }
}
