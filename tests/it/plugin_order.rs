//! Many simultaneous requests are all answered, higher priority first and
//! first come, first served within a priority; a flood of urgent requests
//! does not starve an old one.

use std::sync::{Arc, Mutex};

use bevy::prelude::*;
use bevy_frontier::core::Cell;
use bevy_frontier::prelude::*;

use crate::common::{app, spawn_map, spawn_unit};

type Log = Arc<Mutex<Vec<Entity>>>;

/// Records the order units get their `PathReady` events and messages.
fn record_order(app: &mut App) -> (Log, Log) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let messages = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    app.add_observer(move |ready: On<PathReady>| sink.lock().unwrap().push(ready.entity));
    let sink = messages.clone();
    app.add_systems(
        Update,
        (move |mut reader: MessageReader<PathReady>| {
            sink.lock().unwrap().extend(reader.read().map(|m| m.entity));
        })
        .after(FrontierSystems::Last),
    );
    (events, messages)
}

#[test]
fn priority_then_arrival_order() {
    let mut app = app();
    // Each search takes a few hundred expansions: none ends in its first frame.
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 40,
        ..default()
    });
    let (events, messages) = record_order(&mut app);
    spawn_map(&mut app, NavGrid::new(100, 100).unwrap());

    let mut expected: Vec<(i32, u32, Entity)> = Vec::new();
    let mut arrival = 0;
    let mut order = |app: &mut App, priority: i32, row: u32| {
        let unit = spawn_unit(
            app,
            Cell::new(0, row),
            PathRequest::new(Cell::new(99, 99 - row)).with_priority(priority),
        );
        expected.push((priority, arrival, unit));
        arrival += 1;
    };
    for (i, priority) in [0, 2, 1, 2, 0, 1, 0, 2].into_iter().enumerate() {
        order(&mut app, priority, i as u32 * 3);
    }
    app.update();
    // Later arrivals: a 2 queues behind the earlier 2s, a 3 jumps all.
    order(&mut app, 2, 40);
    order(&mut app, 3, 43);
    app.update();

    let units: Vec<Entity> = expected.iter().map(|e| e.2).collect();
    crate::common::run_until_answered(&mut app, &units, 20_000);
    app.update();

    // The search already under way when the priority-3 request came keeps
    // its slot but runs only after it.
    expected.sort_by_key(|&(priority, arrival, _)| (-priority, arrival));
    let expected: Vec<Entity> = expected.into_iter().map(|e| e.2).collect();
    assert_eq!(*events.lock().unwrap(), expected);
    assert_eq!(*messages.lock().unwrap(), expected);
    for unit in units {
        assert_eq!(
            app.world().get::<PathResult>(unit).unwrap().status,
            PathStatus::Complete
        );
    }
}

#[test]
fn waiting_requests_age_and_are_not_starved() {
    let mut app = app();
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 100,
        aging_frames: 10,
        ..default()
    });
    spawn_map(&mut app, NavGrid::new(60, 60).unwrap());
    let patient = spawn_unit(
        &mut app,
        Cell::new(0, 0),
        PathRequest::new(Cell::new(59, 59)),
    );
    // Two urgent requests a frame: more than the budget can serve, so
    // without ageing the patient request would wait forever.
    for frame in 0..400u32 {
        for lane in [0, 30] {
            let row = (frame + lane) % 60;
            let urgent = PathRequest::new(Cell::new(59, 59 - row)).with_priority(3);
            spawn_unit(&mut app, Cell::new(0, row), urgent);
        }
        app.update();
        if app.world().get::<PathResult>(patient).is_some() {
            return;
        }
    }
    panic!("the priority-0 request starved behind urgent ones");
}
