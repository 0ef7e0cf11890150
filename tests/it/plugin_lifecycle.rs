//! Units despawned, or whose request is removed or replaced, mid-search:
//! the search is dropped, nothing panics, and no stray result arrives.

use std::sync::{Arc, Mutex};

use bevy::prelude::*;
use bevy_frontier::core::Cell;
use bevy_frontier::pathfinding::PathfindingQueue;
use bevy_frontier::prelude::*;

use crate::common::{app, result, run_until_answered, serpentine, spawn_map, spawn_unit};

/// A unit whose search from (0, 0) to (79, 39) has run five frames.
fn unit_mid_search(app: &mut App) -> Entity {
    let unit = spawn_unit(app, Cell::new(0, 0), PathRequest::new(Cell::new(79, 39)));
    for _ in 0..5 {
        app.update();
    }
    assert_eq!(app.world().resource::<PathfindingQueue>().in_flight(), 1);
    unit
}

fn slow_app() -> (App, Arc<Mutex<Vec<Entity>>>) {
    let mut app = app();
    // Plain A*: a jump point search would cross this open map in a frame
    // or two, and these tests need one still running.
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 32,
        jump_points: false,
        ..default()
    });
    spawn_map(&mut app, serpentine(80, 40));
    let ready = Arc::new(Mutex::new(Vec::new()));
    let sink = ready.clone();
    app.add_observer(move |event: On<PathReady>| sink.lock().unwrap().push(event.entity));
    (app, ready)
}

#[test]
fn despawned_mid_search() {
    let (mut app, ready) = slow_app();
    let doomed = unit_mid_search(&mut app);
    app.world_mut().despawn(doomed);
    app.update();
    assert!(
        app.world().resource::<PathfindingQueue>().is_idle(),
        "search not dropped"
    );
    // The freed slot serves the next unit.
    let next = spawn_unit(
        &mut app,
        Cell::new(0, 0),
        PathRequest::new(Cell::new(79, 39)),
    );
    run_until_answered(&mut app, &[next], 5_000);
    assert_eq!(
        *ready.lock().unwrap(),
        vec![next],
        "a result for the despawned unit"
    );
}

#[test]
fn request_removed_mid_search() {
    let (mut app, ready) = slow_app();
    let unit = unit_mid_search(&mut app);
    app.world_mut().entity_mut(unit).remove::<PathRequest>();
    for _ in 0..500 {
        app.update();
    }
    assert!(app.world().resource::<PathfindingQueue>().is_idle());
    assert!(result(&app, unit).is_none());
    assert!(ready.lock().unwrap().is_empty());
}

#[test]
fn request_replaced_mid_search() {
    let (mut app, ready) = slow_app();
    let unit = unit_mid_search(&mut app);
    let new_goal = Cell::new(1, 39);
    app.world_mut()
        .entity_mut(unit)
        .insert(PathRequest::new(new_goal));
    run_until_answered(&mut app, &[unit], 5_000);
    for _ in 0..200 {
        app.update();
    }
    let answer = result(&app, unit).unwrap();
    assert_eq!(
        answer.cells.last(),
        Some(&new_goal),
        "the old request's path arrived"
    );
    assert_eq!(*ready.lock().unwrap(), vec![unit], "exactly one result");
}
