//! A `NavGrid` inserted over another (what a game does to load a level) is
//! a new map, whatever version number it carries: searches in flight start
//! over or are answered on it, held paths are checked against it, and
//! nothing found on the old grid is delivered as if it were the new one.

use bevy::prelude::*;
use bevy_frontier::pathfinding::PathfindingQueue;
use bevy_frontier::prelude::*;

use crate::common::{app, result, slow_open_scene, spawn_map, spawn_unit};

/// An app whose searches take many frames: plain A*, 8 nodes a frame.
fn slow_app() -> App {
    crate::common::slow_app(8, PathfindingSettings::default().max_restarts)
}

/// A 64×64 grid made whole from the cost of each cell: version 0, like any
/// freshly loaded level.
fn level(cost: impl Fn(Cell) -> u8) -> NavGrid {
    let costs = (0..64 * 64)
        .map(|i| cost(Cell::new(i % 64, i / 64)))
        .collect();
    NavGrid::from_costs(64, 64, costs).unwrap()
}

/// A level of plain ground with a wall across column 32 from row 0 to row
/// `top`.
fn walled(top: u32) -> NavGrid {
    level(|c| {
        if c.x == 32 && c.y <= top {
            NavGrid::BLOCKED
        } else {
            1
        }
    })
}

/// Whether every step of `cells` is legal on `grid`.
fn legal_on(grid: &NavGrid, cells: &[Cell]) -> bool {
    cells.windows(2).all(|step| grid.can_step(step[0], step[1]))
}

/// Runs frames until `unit` has a final answer (not a quick path).
fn final_answer(app: &mut App, unit: Entity, frames: u32) -> PathResult {
    for _ in 0..frames {
        app.update();
        if let Some(answer) = result(app, unit).filter(|r| r.status.is_final()) {
            return answer;
        }
    }
    panic!("{unit} not answered in {frames} frames");
}

/// The case: a search under way when the level is swapped for one
/// with a wall across its way, both grids fresh (version 0). The answer is
/// found on the new grid and goes round the new wall; before, the search
/// finished on the old one and its path went straight through.
#[test]
fn a_search_in_flight_is_answered_on_the_grid_that_replaced_its_map() {
    let (mut app, map) = slow_open_scene(PathfindingSettings::default().max_restarts);
    let unit = spawn_unit(
        &mut app,
        Cell::new(2, 10),
        PathRequest::new(Cell::new(60, 10)),
    );
    for _ in 0..3 {
        app.update();
    }
    assert!(result(&app, unit).is_none(), "still searching");
    let level = walled(60);
    assert_eq!(
        level.version(),
        0,
        "the same version number as the old grid"
    );
    app.world_mut().entity_mut(map).insert(level.clone());
    let answer = final_answer(&mut app, unit, 2_000);
    let grid = app.world().get::<NavGrid>(map).unwrap();
    assert!(grid.version() > 0, "the new grid succeeds the old one");
    assert_eq!(answer.status, PathStatus::Complete);
    assert_eq!(answer.grid_version, grid.version());
    assert!(!answer.invalidated);
    assert!(
        legal_on(&level, &answer.cells),
        "the path crosses the new wall"
    );
    assert!(answer.cells.iter().any(|c| c.x == 32 && c.y > 60));
}

/// A goal walled in on the old grid is planned to the nearest reachable
/// cell; on the level that replaces it the goal is open, and the unit is
/// routed to the goal itself, not to the old plan's cell.
#[test]
fn a_nearest_reachable_plan_is_made_again_on_the_new_grid() {
    let mut app = slow_app();
    // A box round (50, 50).
    let boxed = |c: Cell| {
        let ring = |v: u32| v == 47 || v == 53;
        let inside = |v: u32| (47..=53).contains(&v);
        inside(c.x) && inside(c.y) && (ring(c.x) || ring(c.y))
    };
    let map = spawn_map(&mut app, level(|c| if boxed(c) { 0 } else { 1 }));
    app.update();
    let unit = spawn_unit(
        &mut app,
        Cell::new(2, 2),
        PathRequest::new(Cell::new(50, 50)),
    );
    app.update();
    assert!(result(&app, unit).is_none(), "still searching");
    app.world_mut().entity_mut(map).insert(level(|_| 1));
    let answer = final_answer(&mut app, unit, 2_000);
    assert_eq!(answer.status, PathStatus::Complete);
    assert_eq!(answer.cells.last(), Some(&Cell::new(50, 50)));
}

/// A path held when the level is swapped is flagged, however few cells
/// differ, and a mover on it asks again and gets a path legal on the new
/// grid.
#[test]
fn paths_held_are_flagged_and_movers_plan_again() {
    let mut app = app();
    let map = spawn_map(&mut app, NavGrid::new(64, 64).unwrap());
    let unit = app
        .world_mut()
        .spawn((
            Mover { speed: 2.0 },
            Transform::from_xyz(2.0, 10.0, 0.0),
            PathRequest::new(Vec2::new(60.0, 10.0)),
        ))
        .id();
    let flagged = std::sync::Arc::new(std::sync::Mutex::new(0));
    let count = flagged.clone();
    app.add_observer(move |_: On<PathInvalidated>| *count.lock().unwrap() += 1);
    for _ in 0..5 {
        app.update();
    }
    let first = result(&app, unit).unwrap();
    assert_eq!(first.status, PathStatus::Complete);
    let level = walled(60);
    app.world_mut().entity_mut(map).insert(level.clone());
    let mut replanned = None;
    for _ in 0..60 {
        app.update();
        let now = result(&app, unit).unwrap();
        if now.grid_version != first.grid_version && !now.invalidated {
            replanned = Some(now);
            break;
        }
    }
    assert_eq!(*flagged.lock().unwrap(), 1, "the old path was flagged once");
    let replanned = replanned.expect("a new path on the new grid");
    assert!(legal_on(&level, &replanned.cells));
}

/// A smaller level: cells of the old grid lie off the new one. Requests in
/// flight are found again from where they were asked and answered on the
/// new grid (here the start is off it), and nothing panics: not the
/// searches, not a group splicing its routes, not the movers.
#[test]
fn a_smaller_level_answers_what_no_longer_fits_and_panics_nowhere() {
    let (mut app, map) = slow_open_scene(PathfindingSettings::default().max_restarts);
    let far = spawn_unit(
        &mut app,
        Cell::new(50, 50),
        PathRequest::new(Cell::new(2, 2)),
    );
    let near = spawn_unit(
        &mut app,
        Cell::new(3, 3),
        PathRequest::new(Cell::new(60, 3)),
    );
    let movers: Vec<Entity> = (0..6)
        .map(|i| {
            app.world_mut()
                .spawn((
                    Mover { speed: 4.0 },
                    Transform::from_xyz(40.0 + i as f32, 40.0, 0.0),
                ))
                .id()
        })
        .collect();
    app.world_mut()
        .write_message(GroupMove::new(movers.clone(), Vec2::new(5.0, 60.0)));
    for _ in 0..4 {
        app.update();
    }
    app.world_mut()
        .entity_mut(map)
        .insert(NavGrid::new(24, 24).unwrap());
    for _ in 0..600 {
        app.update();
    }
    assert_eq!(
        result(&app, far).unwrap().status,
        PathStatus::Invalid(InvalidReason::StartOutOfBounds)
    );
    let near = result(&app, near).unwrap();
    // The goal (60, 3) is off the new grid.
    assert_eq!(
        near.status,
        PathStatus::Invalid(InvalidReason::GoalOutOfBounds)
    );
    assert!(app.world().resource::<PathfindingQueue>().is_idle());
    for unit in movers {
        let at = app.world().get::<Transform>(unit).unwrap().translation;
        assert!(at.is_finite());
    }
}

/// A search pinned to a copy of the map (edits kept restarting it) when
/// the level is swapped is moved onto the new level: its answer is found
/// there, not on the copy of the old one.
#[test]
fn a_pinned_search_is_moved_onto_the_new_level() {
    let (mut app, map) = slow_open_scene(0);
    let unit = spawn_unit(
        &mut app,
        Cell::new(2, 10),
        PathRequest::new(Cell::new(60, 10)),
    );
    app.update();
    // An edit beside its start: with no restarts allowed, it is pinned.
    app.world_mut()
        .get_mut::<NavGrid>(map)
        .unwrap()
        .set_cost(Cell::new(3, 11), NavGrid::BLOCKED)
        .unwrap();
    app.update();
    app.update();
    assert!(result(&app, unit).is_none(), "still searching");
    let mut level = walled(60);
    level.set_cost(Cell::new(3, 11), NavGrid::BLOCKED).unwrap();
    app.world_mut().entity_mut(map).insert(level.clone());
    let answer = final_answer(&mut app, unit, 2_000);
    let grid = app.world().get::<NavGrid>(map).unwrap();
    assert_eq!(answer.grid_version, grid.version());
    assert!(!answer.invalidated);
    assert!(legal_on(&level, &answer.cells));
}

/// Units bigger than a cell see the new level's size classes: a gap that
/// a 2×2 vehicle fitted through on the old grid is one cell wide on the
/// new one, and its answer does not squeeze through it.
#[test]
fn size_classes_are_those_of_the_new_level() {
    let mut app = slow_app();
    let wide = walled(60);
    let map = spawn_map(&mut app, wide);
    app.update();
    let tank = app
        .world_mut()
        .spawn((
            Footprint(2),
            Transform::from_xyz(4.5, 10.5, 0.0),
            PathRequest::new(Vec2::new(59.5, 10.5)),
        ))
        .id();
    app.update();
    assert!(result(&app, tank).is_none(), "still searching");
    let narrow = level(|c| {
        if c.x == 32 && (c.y <= 60 || c.y == 62) {
            NavGrid::BLOCKED
        } else {
            1
        }
    });
    app.world_mut().entity_mut(map).insert(narrow);
    let answer = final_answer(&mut app, tank, 4_000);
    assert_eq!(answer.status, PathStatus::NearestReachable);
    assert!(answer.cells.iter().all(|c| c.x < 32));
}
