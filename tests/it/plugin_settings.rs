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

/// Bytes of search memory one search holds on `grid`: its scratch.
fn scratch_of(grid: &NavGrid) -> usize {
    grid.cell_count() * bevy_frontier::core::Scratch::BYTES_PER_CELL
}

/// A game that means "no limit" writes `usize::MAX` slots. Nothing is
/// allocated for them: memory follows the searches that run. With one lane
/// a few searches hold scratch at a time, however many are in flight (the
/// old rule reserved a search's scratch per slot when the map appeared:
/// 64 slots on this map were a gigabyte, `usize::MAX` never ended).
#[test]
fn a_huge_max_in_flight_allocates_nothing_up_front() {
    for slots in [64, usize::MAX] {
        let mut app = App::new();
        app.add_plugins((MinimalPlugins, FrontierPlugins::default()));
        app.insert_resource(PathfindingSettings {
            max_in_flight: slots,
            ..default()
        });
        let mut grid = NavGrid::new(1024, 1024).unwrap();
        grid.fill_rect(Cell::new(500, 0), Cell::new(500, 1000), NavGrid::BLOCKED)
            .unwrap();
        let one = scratch_of(&grid);
        spawn_map(&mut app, grid);
        app.update();
        let memory = |app: &App| {
            app.world()
                .resource::<bevy_frontier::pathfinding::PathfindingQueue>()
                .memory_bytes()
        };
        assert!(
            memory(&app) <= 2 * one,
            "{slots} slots: {} bytes",
            memory(&app)
        );
        let mut rng = crate::common::Rng::new(5);
        let units: Vec<Entity> = (0..300)
            .map(|_| {
                let start = Cell::new(rng.below(400), rng.below(1024));
                let goal = Cell::new(600 + rng.below(400), rng.below(1024));
                spawn_unit(&mut app, start, PathRequest::new(goal))
            })
            .collect();
        let mut most = 0;
        for _ in 0..2_000 {
            app.update();
            most = most.max(memory(&app));
            if units
                .iter()
                .all(|&u| app.world().get::<PathResult>(u).is_some())
            {
                break;
            }
        }
        for &unit in &units {
            let answer = app.world().get::<PathResult>(unit).expect("answered");
            assert_eq!(answer.status, PathStatus::Complete);
        }
        assert!(
            most <= 4 * one,
            "{slots} slots: {most} bytes at most, {} searches' worth",
            most as f64 / one as f64
        );
    }
}

/// Settings at the ends of their ranges, as a config file might hold
/// them: every request is still answered, and nothing panics.
#[test]
fn settings_at_their_limits_still_answer_every_request() {
    let huge = PathfindingSettings {
        nodes_per_frame: u32::MAX,
        max_in_flight: usize::MAX,
        max_expansions_per_request: Some(u32::MAX),
        chase_lookahead: Some(u32::MAX),
        max_frame_time: Some(std::time::Duration::MAX),
        heuristic_weight: 1e30,
        jump_points: true,
        aging_frames: u32::MAX,
        max_restarts: u32::MAX,
        share_goals: true,
        refine: true,
        search_lanes: usize::MAX,
        threads: usize::MAX,
        graph_take_up: bevy_frontier::schedule::GraphTakeUp::WhenReady,
    };
    let tiny = PathfindingSettings {
        nodes_per_frame: 1,
        max_in_flight: 1,
        max_expansions_per_request: Some(0),
        chase_lookahead: Some(0),
        max_frame_time: Some(std::time::Duration::ZERO),
        heuristic_weight: 0.0,
        jump_points: false,
        aging_frames: 1,
        max_restarts: 0,
        share_goals: true,
        refine: true,
        search_lanes: 1,
        threads: 1,
        graph_take_up: bevy_frontier::schedule::GraphTakeUp::OnSchedule,
    };
    for (name, settings) in [("huge", huge), ("tiny", tiny)] {
        let mut app = App::new();
        app.add_plugins((MinimalPlugins, FrontierPlugins::default()));
        app.insert_resource(settings);
        let mut rng = crate::common::Rng::new(9);
        // Terrain (quick paths), walls, and units in a squad (a shared
        // search) and alone, some to unreachable goals.
        let grid = crate::common::random_grid(&mut rng, 48, 48, 20, 3);
        let map = spawn_map(&mut app, grid.clone());
        let mut units = Vec::new();
        for i in 0..40u32 {
            let start = crate::common::random_walkable(&mut rng, &grid).unwrap();
            let goal = if i < 10 {
                Cell::new(40, 40)
            } else {
                Cell::new(rng.below(48), rng.below(48))
            };
            let start = if i < 10 {
                Cell::new(3 + i % 4, 3 + i / 4)
            } else {
                start
            };
            units.push(spawn_unit(
                &mut app,
                start,
                PathRequest::new(goal).with_priority(i as i32 % 3),
            ));
        }
        let mut answered = false;
        for frame in 0..20_000 {
            // Edits now and then, near and far.
            if frame % 7 == 0 {
                let cell = Cell::new(rng.below(48), rng.below(48));
                let cost = [NavGrid::BLOCKED, 1, 2][rng.below(3) as usize];
                let _ = app
                    .world_mut()
                    .get_mut::<NavGrid>(map)
                    .unwrap()
                    .set_cost(cell, cost);
            }
            app.update();
            answered = units.iter().all(|&u| {
                app.world()
                    .get::<PathResult>(u)
                    .is_some_and(|r| r.status.is_final())
            });
            if answered {
                break;
            }
        }
        assert!(answered, "{name}: a request went unanswered");
        let settings = app.world().resource::<PathfindingSettings>();
        assert!(settings.max_restarts <= PathfindingSettings::MAX_RESTARTS);
    }
}

/// `max_frame_time: Some(Duration::ZERO)` is one slice a frame: slow, but
/// every request is answered, as with a cap of a few microseconds.
#[test]
fn a_zero_time_cap_still_answers_every_request() {
    for cap in [
        std::time::Duration::ZERO,
        std::time::Duration::from_micros(5),
    ] {
        let mut app = App::new();
        app.add_plugins((MinimalPlugins, FrontierPlugins::default()));
        app.insert_resource(PathfindingSettings {
            max_frame_time: Some(cap),
            ..default()
        });
        let mut rng = crate::common::Rng::new(4);
        let grid = crate::common::random_grid(&mut rng, 40, 40, 25, 1);
        spawn_map(&mut app, grid.clone());
        let units: Vec<Entity> = (0..40)
            .map(|_| {
                let start = crate::common::random_walkable(&mut rng, &grid).unwrap();
                let goal = crate::common::random_walkable(&mut rng, &grid).unwrap();
                spawn_unit(&mut app, start, PathRequest::new(goal))
            })
            .collect();
        // Some requests share a search (two units with one goal): one that
        // had ended waited for budget to read its paths back, and a zero
        // cap's frames spent none (34 of 40 went unanswered in 5,500).
        crate::common::run_until_answered(&mut app, &units, 1_000);
    }
}
