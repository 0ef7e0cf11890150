//! Two identical apps fed the same requests in the same frames give the
//! same results in the same frames, and so does any number of threads
//! running the searches side by side.

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_frontier::core::Cell;
use bevy_frontier::pathfinding::PathfindingStats;
use bevy_frontier::prelude::*;

use crate::common::{Rng, app, random_grid, random_walkable, spawn_map, spawn_unit};

/// One unit's result: its index, status, cells and expansions.
type Answer = (u32, PathStatus, Vec<Cell>, u64);

/// Per frame: expansions spent, every result so far and where the group
/// members stand (the bits of their coordinates).
type Frame = (u64, Vec<Answer>, Vec<(u32, u32)>);

/// Every frame of a scripted game: orders, rally points, group moves and
/// map edits.
fn run(seed: u64, lanes: usize, threads: usize) -> Vec<Frame> {
    let mut app = app();
    // Frames of a fixed length: group members walk the same way each run.
    app.insert_resource(TimeUpdateStrategy::ManualDuration(
        std::time::Duration::from_millis(20),
    ));
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 300,
        max_in_flight: 3 * lanes,
        search_lanes: lanes,
        threads,
        ..default()
    });
    let mut rng = Rng::new(seed);
    let grid = random_grid(&mut rng, 64, 64, 30, 4);
    let map = spawn_map(&mut app, grid.clone());
    let mut units = Vec::new();
    let mut grouped = Vec::new();
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
        // A rally point: units standing together sent one by one to one
        // goal (a shared search), and a group move (floods).
        if frame % 29 == 3 && frame < 120 {
            let at = random_walkable(&mut rng, &grid).unwrap();
            let goal = random_walkable(&mut rng, &grid).unwrap();
            for _ in 0..5 {
                units.push(spawn_unit(&mut app, at, PathRequest::new(goal)));
            }
            let members: Vec<Entity> = (0..6)
                .map(|_| {
                    let at = random_walkable(&mut rng, &grid).unwrap();
                    let position = Vec3::new(at.x as f32, at.y as f32, 0.0);
                    app.world_mut()
                        .spawn((Mover { speed: 4.0 }, Transform::from_translation(position)))
                        .id()
                })
                .collect();
            let goal = random_walkable(&mut rng, &grid).unwrap();
            grouped.extend(&members);
            app.world_mut().write_message(GroupMove::new(members, goal));
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
        let standing = grouped
            .iter()
            .map(|&u| {
                let at = app.world().get::<Transform>(u).unwrap().translation;
                (at.x.to_bits(), at.y.to_bits())
            })
            .collect();
        log.push((spent, results, standing));
    }
    log
}

#[test]
fn identical_apps_give_identical_results_frame_by_frame() {
    let first = run(42, 1, 1);
    let second = run(42, 1, 1);
    let answered = first.last().unwrap().1.len();
    assert!(answered > 50, "only {answered} results to compare");
    let busy = first.iter().filter(|(spent, ..)| *spent == 300).count();
    assert!(busy > 20, "only {busy} frames used the whole budget");
    for (frame, (a, b)) in first.iter().zip(&second).enumerate() {
        assert_eq!(a, b, "frame {frame} differs");
    }
}

#[test]
fn any_number_of_threads_gives_identical_results_frame_by_frame() {
    let one = run(7, 3, 1);
    let answered = one.last().unwrap().1.len();
    assert!(answered > 50, "only {answered} results to compare");
    for threads in [2, 3, 4] {
        let many = run(7, 3, threads);
        for (frame, (a, b)) in one.iter().zip(&many).enumerate() {
            assert_eq!(a, b, "frame {frame} differs with {threads} threads");
        }
    }
}

/// Every unit's status and cells, frame by frame, on a map of rough ground
/// whose coarse graph (for quick routes) is built on a worker thread held
/// back `hold` by other work when the build starts.
fn quick_routes_with_the_build_held_back(hold: std::time::Duration) -> Vec<Vec<Answer>> {
    let mut app = app();
    app.insert_resource(TimeUpdateStrategy::ManualDuration(
        std::time::Duration::from_millis(20),
    ));
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 300,
        ..default()
    });
    app.update();
    // The machine is busy: every thread of the pool the build runs on
    // sleeps a while first.
    let pool = bevy::tasks::AsyncComputeTaskPool::get();
    for _ in 0..pool.thread_num().max(1) {
        pool.spawn(async move { std::thread::sleep(hold) }).detach();
    }
    let mut rng = Rng::new(11);
    let grid = random_grid(&mut rng, 160, 160, 15, 4);
    spawn_map(&mut app, grid.clone());
    let units: Vec<Entity> = (0..40)
        .map(|_| {
            let start = random_walkable(&mut rng, &grid).unwrap();
            let goal = random_walkable(&mut rng, &grid).unwrap();
            spawn_unit(&mut app, start, PathRequest::new(goal))
        })
        .collect();
    (0..120)
        .map(|_| {
            app.update();
            units
                .iter()
                .enumerate()
                .filter_map(|(i, &u)| {
                    let r = app.world().get::<PathResult>(u)?;
                    Some((i as u32, r.status, r.cells.clone(), r.expansions))
                })
                .collect()
        })
        .collect()
}

/// A coarse graph is taken up on the frame its work decides, however late
/// its build runs: on a busy machine the frame waits for it rather than
/// letting quick routes start in other frames (the default,
/// `GraphTakeUp::OnSchedule`; with `GraphTakeUp::WhenReady` this test
/// fails). With the `multi_threaded` feature the build runs on a real
/// worker, held back here for a random while; without it, in slices on
/// the frame's thread.
#[test]
fn a_graph_built_late_is_still_taken_up_on_its_frame() {
    let on_time = quick_routes_with_the_build_held_back(std::time::Duration::ZERO);
    let provisional = on_time
        .iter()
        .flatten()
        .filter(|(_, status, ..)| *status == PathStatus::Provisional)
        .count();
    assert!(provisional > 0, "no quick route was sent");
    let mut rng = Rng::new(5);
    for _ in 0..3 {
        let hold = std::time::Duration::from_millis(10 + rng.below(80) as u64);
        let late = quick_routes_with_the_build_held_back(hold);
        for (frame, (a, b)) in on_time.iter().zip(&late).enumerate() {
            assert_eq!(
                a, b,
                "frame {frame} differs with the build held back {hold:?}"
            );
        }
    }
}
