//! The coarse graphs quick routes run on: no frame waits for one, a graph
//! held back leaves every request answered with its final path, and a
//! graph a game bakes or hands in is used as soon as it is there.

use bevy::prelude::*;
use bevy_frontier::core::{Cell, CoarseGraph};
use bevy_frontier::pathfinding::{CoarseGraphs, PathfindingStats};
use bevy_frontier::prelude::*;

use crate::common::{Rng, app, random_grid, random_walkable, result, spawn_unit};

/// A 160×160 map with walls and rough ground: big enough that its graph is
/// built over frames, not at once.
fn rough_map(seed: u64) -> NavGrid {
    random_grid(&mut Rng::new(seed), 160, 160, 12, 4)
}

/// `count` units on walkable cells of `grid`, each asking for a path to
/// another, far enough apart to want a quick route.
fn orders(app: &mut App, grid: &NavGrid, seed: u64, count: usize) -> Vec<Entity> {
    let mut rng = Rng::new(seed);
    let mut units = Vec::new();
    while units.len() < count {
        let (Some(start), Some(goal)) = (
            random_walkable(&mut rng, grid),
            random_walkable(&mut rng, grid),
        ) else {
            continue;
        };
        if start.octile_distance(goal) < 60.0 || !grid.connected(start, goal) {
            continue;
        }
        units.push(spawn_unit(app, start, PathRequest::new(goal)));
    }
    units
}

/// Frames until every unit has a final answer; panics after `most`.
/// Returns the frames and whether any answer was provisional.
fn run_until_final(app: &mut App, units: &[Entity], most: u32) -> (u32, bool) {
    let mut provisional = false;
    for frame in 1..=most {
        app.update();
        provisional |= units
            .iter()
            .any(|&u| result(app, u).is_some_and(|r| r.status == PathStatus::Provisional));
        if units
            .iter()
            .all(|&u| result(app, u).is_some_and(|r| r.status.is_final()))
        {
            return (frame, provisional);
        }
    }
    panic!("not every request was answered in {most} frames");
}

#[test]
fn a_graph_held_back_leaves_every_request_answered_with_its_final_path() {
    let grid = rough_map(3);
    let mut app = app();
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 2_000,
        ..default()
    });
    // The game hands this map's graphs in, and has not yet: the build is
    // held back for as long as the test likes.
    let map = app
        .world_mut()
        .spawn((
            grid.clone(),
            Transform::default(),
            CoarseGraphs::supplied_by_game(),
        ))
        .id();
    app.update();
    let units = orders(&mut app, &grid, 5, 30);
    let (frames, provisional) = run_until_final(&mut app, &units, 5_000);
    // No frame waited (a wait for a graph that never comes would hang
    // here), nothing came from a graph that is not there, and no frame
    // spent more than its budget.
    assert!(!provisional, "a quick route without a graph");
    assert!(frames > 1);
    let graphs = app.world().get::<CoarseGraphs>(map).unwrap();
    assert!(!graphs.is_ready(UnitKind::sized(1)) && !graphs.is_building());

    // The game hands the graph in: new orders get quick routes first.
    let graph = CoarseGraph::build(&grid.size_class(1));
    app.world_mut()
        .get_mut::<CoarseGraphs>(map)
        .unwrap()
        .insert(graph);
    let units = orders(&mut app, &grid, 6, 30);
    let (_, provisional) = run_until_final(&mut app, &units, 5_000);
    assert!(provisional, "no quick route once the graph was there");
}

#[test]
fn a_baked_graph_is_ready_before_play_and_routes_come_from_the_first_frames() {
    let grid = rough_map(4);
    let mut app = app();
    let map = app
        .world_mut()
        .spawn((
            grid.clone(),
            Transform::default(),
            CoarseGraphs::supplied_by_game(),
        ))
        .id();
    app.update();
    // A loading state: bake, and run frames until it is done.
    app.world_mut()
        .get_mut::<CoarseGraphs>(map)
        .unwrap()
        .bake(&grid, UnitKind::sized(1));
    let mut loading = 0;
    while !app
        .world()
        .get::<CoarseGraphs>(map)
        .unwrap()
        .is_ready(UnitKind::sized(1))
    {
        app.update();
        loading += 1;
        assert!(loading < 1_000, "the bake never ended");
    }
    let bytes = app.world().get::<CoarseGraphs>(map).unwrap().memory_bytes();
    assert!(
        bytes > 0 && bytes < grid.memory_bytes() / 4,
        "{bytes} bytes"
    );
    // Play: a unit sent far gets a quick route within a few frames.
    let units = orders(&mut app, &grid, 8, 4);
    let mut first = None;
    for frame in 1..200 {
        app.update();
        if units.iter().all(|&u| result(&app, u).is_some()) {
            first = Some(frame);
            break;
        }
    }
    assert!(
        first.is_some_and(|f| f <= 5),
        "first routes in {first:?} frames"
    );
}

#[test]
fn a_map_with_rough_ground_builds_its_graph_over_frames_within_its_budget() {
    let grid = rough_map(5);
    let mut app = app();
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 500,
        ..default()
    });
    let map = app
        .world_mut()
        .spawn((grid.clone(), Transform::default()))
        .id();
    let units = orders(&mut app, &grid, 9, 20);
    let mut graph_frame = None;
    for frame in 1..3_000u32 {
        app.update();
        let stats = app.world().resource::<PathfindingStats>();
        assert!(stats.frame_expansions + stats.frame_reading <= 500);
        let graphs = app.world().get::<CoarseGraphs>(map).unwrap();
        if graph_frame.is_none() && graphs.is_ready(UnitKind::sized(1)) {
            graph_frame = Some(frame);
        }
        if units
            .iter()
            .all(|&u| result(&app, u).is_some_and(|r| r.status.is_final()))
        {
            break;
        }
    }
    // The map's graph came on its own (started in the map's first frame),
    // in the frames its size plans.
    let estimate = CoarseGraph::build_estimate(&grid.size_class(1));
    let planned = bevy_frontier::pathfinding::build_frames(estimate) as u32;
    assert_eq!(graph_frame, Some(1 + planned));
    // And after an edit quick routes still come, on the graph repaired
    // where the edit touched it (or on its old records meanwhile).
    let cell = Cell::new(80, 80);
    app.world_mut()
        .get_mut::<NavGrid>(map)
        .unwrap()
        .set_cost(cell, NavGrid::BLOCKED)
        .unwrap();
    let units = orders(&mut app, &grid, 10, 5);
    let (_, provisional) = run_until_final(&mut app, &units, 3_000);
    assert!(provisional);
    let graphs = app.world().get::<CoarseGraphs>(map).unwrap();
    let now = app.world().get::<NavGrid>(map).unwrap();
    assert!(
        graphs
            .graph(UnitKind::sized(1))
            .unwrap()
            .is_usable(&now.size_class(1))
    );
}
