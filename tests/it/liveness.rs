//! Every request is answered while the map keeps changing and while more
//! is asked than the budget can serve: edits a search cannot see leave it
//! alone, edits that keep hitting it cannot restart it forever, and a busy
//! queue keeps delivering instead of throwing its searches out.

use std::sync::{Arc, Mutex};

use bevy::prelude::*;
use bevy_frontier::core::Cell;
use bevy_frontier::pathfinding::PathfindingStats;
use bevy_frontier::prelude::*;

use crate::common::{Rng, app, result, spawn_map, spawn_unit};

/// A 80×80 map: a wall at x = 30 with a gap at the top, so the way from
/// the left to the right is long, and a sealed pocket in the far corner.
fn fenced_map() -> NavGrid {
    let mut grid = NavGrid::new(80, 80).unwrap();
    grid.fill_rect(Cell::new(30, 0), Cell::new(30, 70), NavGrid::BLOCKED)
        .unwrap();
    grid.fill_rect(Cell::new(69, 69), Cell::new(79, 69), NavGrid::BLOCKED)
        .unwrap();
    grid.fill_rect(Cell::new(69, 69), Cell::new(69, 79), NavGrid::BLOCKED)
        .unwrap();
    grid
}

/// Runs frames until `unit` is answered, calling `edit` on the map before
/// each; returns the frames run, or `None` after `max_frames`.
fn frames_to_answer(
    app: &mut App,
    map: Entity,
    unit: Entity,
    max_frames: u32,
    mut edit: impl FnMut(&mut NavGrid, u32),
) -> Option<u32> {
    for frame in 1..=max_frames {
        edit(&mut app.world_mut().get_mut::<NavGrid>(map).unwrap(), frame);
        app.update();
        if result(app, unit).is_some() {
            return Some(frame);
        }
    }
    None
}

fn long_search_app(jump_points: bool) -> App {
    let mut app = app();
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 10,
        jump_points,
        ..default()
    });
    app
}

#[test]
fn edits_in_a_sealed_pocket_do_not_delay_a_search() {
    for jump_points in [false, true] {
        let mut quiet = long_search_app(jump_points);
        let map = spawn_map(&mut quiet, fenced_map());
        let request = PathRequest::new(Cell::new(60, 2));
        let unit = spawn_unit(&mut quiet, Cell::new(2, 2), request.clone());
        let frames = frames_to_answer(&mut quiet, map, unit, 10_000, |_, _| {}).unwrap();
        assert!(frames > 3, "the search should span frames ({frames})");

        let mut busy = long_search_app(jump_points);
        let busy_map = spawn_map(&mut busy, fenced_map());
        let busy_unit = spawn_unit(&mut busy, Cell::new(2, 2), request);
        // A building goes up and comes down in the pocket every frame.
        let edited = frames_to_answer(&mut busy, busy_map, busy_unit, 10_000, |grid, frame| {
            let cost = if frame % 2 == 0 { NavGrid::BLOCKED } else { 1 };
            grid.fill_rect(Cell::new(72, 72), Cell::new(74, 74), cost)
                .unwrap();
        });
        assert_eq!(edited, Some(frames), "jump points {jump_points}");
        let (a, b) = (
            result(&quiet, unit).unwrap(),
            result(&busy, busy_unit).unwrap(),
        );
        assert_eq!((a.cells, a.expansions), (b.cells, b.expansions));
        assert!(!b.invalidated);
    }
}

#[test]
fn edits_that_keep_hitting_a_search_cannot_starve_it() {
    let mut quiet = long_search_app(false);
    let quiet_map = spawn_map(&mut quiet, fenced_map());
    let request = PathRequest::new(Cell::new(60, 2));
    let quiet_unit = spawn_unit(&mut quiet, Cell::new(2, 2), request.clone());
    let alone = frames_to_answer(&mut quiet, quiet_map, quiet_unit, 10_000, |_, _| {}).unwrap();

    let mut app = long_search_app(false);
    let map = spawn_map(&mut app, fenced_map());
    let unit = spawn_unit(&mut app, Cell::new(2, 2), request);
    // A cell right beside the start, which every restart expands next to,
    // toggles every frame.
    let answered = frames_to_answer(&mut app, map, unit, 2_000, |grid, frame| {
        let cost = if frame % 2 == 0 { NavGrid::BLOCKED } else { 1 };
        grid.set_cost(Cell::new(3, 3), cost).unwrap();
    });
    let frames = answered.expect("a search under constant edits is still answered");
    let answer = result(&app, unit).unwrap();
    assert_eq!(answer.status, PathStatus::Complete);
    let settings = app.world().resource::<PathfindingSettings>();
    // It followed the edits a few times, then finished on a copy.
    assert!(answer.expansions > 0);
    // Each restart costs the frame it happened in; then it runs as if
    // alone.
    assert!(
        frames <= alone + settings.max_restarts + 1,
        "{frames} frames, {alone} alone: it should stop following the edits after {} restarts",
        settings.max_restarts
    );
    // Keep editing: the path is legal on the map now, or flagged.
    for frame in 0..4 {
        let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
        let cost = if frame % 2 == 0 { NavGrid::BLOCKED } else { 1 };
        grid.set_cost(Cell::new(3, 3), cost).unwrap();
        app.update();
        let answer = result(&app, unit).unwrap();
        let grid = app.world().get::<NavGrid>(map).unwrap();
        let legal = answer.cells.windows(2).all(|s| grid.can_step(s[0], s[1]));
        assert!(
            legal || answer.invalidated,
            "an illegal path is not flagged"
        );
    }
}

/// What a steady overload delivers: requests replaced as soon as they are
/// answered, few slots, a small budget and ageing of two frames (ageing in steps that two
/// requests take in different frames once made them swap places).
struct Overload {
    /// Results delivered in each 100-frame window.
    per_window: Vec<usize>,
    /// Expansions spent in all, and the expansions of the results delivered.
    spent: u64,
    useful: u64,
}

fn overload(frames: u32) -> Overload {
    let mut app = app();
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 60,
        max_in_flight: 2,
        aging_frames: 2,
        jump_points: false,
        ..default()
    });
    let map = spawn_map(&mut app, fenced_map());
    let ready = Arc::new(Mutex::new(Vec::new()));
    let sink = ready.clone();
    app.add_observer(move |event: On<PathReady>| {
        sink.lock().unwrap().push((event.entity, event.expansions))
    });
    let mut rng = Rng::new(7);
    let order = |rng: &mut Rng| {
        let (x, y) = (1 + rng.below(25), 1 + rng.below(60));
        PathRequest::new(Cell::new(x + 40, y))
            .with_priority(rng.below(4) as i32 - 2)
            .on_map(map)
    };
    let units: Vec<Entity> = (0..24)
        .map(|i| {
            let request = order(&mut rng);
            spawn_unit(&mut app, Cell::new(1 + i % 20, 1 + i), request)
        })
        .collect();
    let mut outcome = Overload {
        per_window: vec![0; (frames / 100) as usize],
        spent: 0,
        useful: 0,
    };
    for frame in 0..frames {
        app.update();
        outcome.spent += app.world().resource::<PathfindingStats>().frame_expansions;
        let answered: Vec<(Entity, u64)> = ready.lock().unwrap().drain(..).collect();
        outcome.per_window[(frame / 100) as usize] += answered.len();
        for (unit, expansions) in answered {
            assert!(units.contains(&unit));
            outcome.useful += expansions;
            // Asked again at once: the queue never empties.
            let request = order(&mut rng);
            app.world_mut().entity_mut(unit).insert(request);
        }
    }
    assert_eq!(
        map,
        app.world()
            .get::<PathResult>(units[0])
            .unwrap()
            .map
            .unwrap()
    );
    outcome
}

#[test]
fn a_steady_overload_keeps_delivering_at_capacity() {
    let outcome = overload(1_500);
    // No window goes dry, and nearly every expansion spent went into a
    // result that was delivered (an evicted search keeps its work).
    let least = *outcome.per_window.iter().min().unwrap();
    let mean = outcome.per_window.iter().sum::<usize>() as f64 / outcome.per_window.len() as f64;
    assert!(
        least as f64 >= 0.5 * mean && mean >= 2.0,
        "deliveries per 100 frames: {:?}",
        outcome.per_window
    );
    assert!(
        outcome.useful as f64 >= 0.9 * outcome.spent as f64,
        "{} of {} expansions went into delivered results",
        outcome.useful,
        outcome.spent
    );
}

#[test]
fn a_search_and_the_request_that_evicted_it_do_not_take_turns() {
    // One slot, ageing of two frames, and two long searches asked a frame
    // apart, the later one a level more urgent. With ageing in whole steps
    // the two used to outrank each other in turn, each throwing the other
    // out every frame, and neither ever finished.
    let mut app = long_search_app(false);
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 20,
        max_in_flight: 1,
        aging_frames: 2,
        jump_points: false,
        ..default()
    });
    let map = spawn_map(&mut app, fenced_map());
    let first = spawn_unit(
        &mut app,
        Cell::new(2, 2),
        PathRequest::new(Cell::new(60, 2)),
    );
    app.update();
    let second = spawn_unit(
        &mut app,
        Cell::new(2, 5),
        PathRequest::new(Cell::new(60, 5)).with_priority(1),
    );
    let mut frames = 1;
    while result(&app, first).is_none() || result(&app, second).is_none() {
        app.update();
        frames += 1;
        assert!(frames < 2_000, "not answered in 2,000 frames");
    }
    // The urgent one went first, and no work was thrown away: the frames
    // are what both searches' expansions need at 20 a frame.
    let (a, b) = (result(&app, first).unwrap(), result(&app, second).unwrap());
    assert!(b.frames_waited < a.frames_waited);
    let needed = (a.expansions + b.expansions).div_ceil(20) as u32;
    assert!(
        frames <= needed + 2,
        "{frames} frames for {needed} frames of work"
    );
    assert_eq!(a.map, Some(map));
}
