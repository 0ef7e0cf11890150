//! Unreachable goals are answered in the request's first frame without a
//! node expanded; bad requests get a clear status; nothing panics.

use bevy::prelude::*;
use bevy_frontier::core::Cell;
use bevy_frontier::pathfinding::PathfindingStats;
use bevy_frontier::prelude::*;

use crate::common::{app, result, spawn_map, spawn_unit};

/// A 30×20 field split by a wall at x = 15, with a walled pond at the right.
fn split_field() -> NavGrid {
    let mut grid = NavGrid::new(30, 20).unwrap();
    grid.fill_rect(Cell::new(15, 0), Cell::new(15, 19), NavGrid::BLOCKED)
        .unwrap();
    grid
}

#[test]
fn unreachable_answered_at_once_with_no_expansions() {
    let mut app = app();
    spawn_map(&mut app, split_field());
    let units: Vec<Entity> = (0..20)
        .map(|i| {
            spawn_unit(
                &mut app,
                Cell::new(2, i),
                PathRequest::new(Cell::new(25, 10)).fail_if_unreachable(),
            )
        })
        .collect();
    app.update();
    assert_eq!(
        app.world().resource::<PathfindingStats>().frame_expansions,
        0
    );
    for unit in units {
        let answer = result(&app, unit).expect("answered in the first frame");
        assert_eq!(answer.status, PathStatus::Unreachable);
        assert_eq!((answer.expansions, answer.frames_waited), (0, 0));
        assert!(answer.cells.is_empty());
    }
}

#[test]
fn unreachable_goes_to_the_nearest_reachable_cell_by_default() {
    let mut app = app();
    spawn_map(&mut app, split_field());
    let unit = spawn_unit(
        &mut app,
        Cell::new(2, 2),
        PathRequest::new(Cell::new(25, 10)),
    );
    for _ in 0..10 {
        app.update();
    }
    let answer = result(&app, unit).unwrap();
    assert_eq!(answer.status, PathStatus::NearestReachable);
    assert_eq!(
        answer.cells.last(),
        Some(&Cell::new(14, 10)),
        "ends at the wall, level with the goal"
    );
}

#[test]
fn bad_goals_and_starts_get_a_status() {
    let mut app = app();
    let map = spawn_map(&mut app, split_field());
    let cases = [
        (
            Cell::new(2, 2),
            PathRequest::new(Cell::new(30, 0)),
            PathStatus::Invalid(InvalidReason::GoalOutOfBounds),
        ),
        (
            Cell::new(2, 2),
            PathRequest::new(Vec2::new(-3.0, 4.0)),
            PathStatus::Invalid(InvalidReason::GoalOutOfBounds),
        ),
        (
            Cell::new(2, 2),
            PathRequest::new(Vec2::new(f32::NAN, 4.0)),
            PathStatus::Invalid(InvalidReason::NonFiniteGoal),
        ),
        (
            Cell::new(2, 2),
            PathRequest::new(Vec2::new(3.0, f32::INFINITY)),
            PathStatus::Invalid(InvalidReason::NonFiniteGoal),
        ),
        (
            Cell::new(2, 2),
            PathRequest::new(Vec2::new(3.0e38, -2.0e38)),
            PathStatus::Invalid(InvalidReason::GoalOutOfBounds),
        ),
        (
            Cell::new(2, 2),
            PathRequest::new(Cell::new(3, 3)).from(Vec2::new(f32::MAX, 1.0)),
            PathStatus::Invalid(InvalidReason::StartOutOfBounds),
        ),
        (
            Cell::new(2, 2),
            PathRequest::new(Cell::new(3, 3)).from(Cell::new(99, 0)),
            PathStatus::Invalid(InvalidReason::StartOutOfBounds),
        ),
        (
            Cell::new(2, 2),
            PathRequest::new(Cell::new(3, 3)).on_map(Entity::from_raw_u32(999).unwrap()),
            PathStatus::Invalid(InvalidReason::NoMap),
        ),
        (
            Cell::new(2, 2),
            PathRequest::new(Cell::new(2, 2)),
            PathStatus::Complete,
        ),
        (
            Cell::new(2, 2),
            PathRequest::new(Cell::new(15, 5)).fail_if_unreachable(),
            PathStatus::Unreachable,
        ),
    ];
    let units: Vec<Entity> = cases
        .iter()
        .map(|(start, request, _)| {
            spawn_unit(
                &mut app,
                *start,
                request.clone().on_map(request.map.unwrap_or(map)),
            )
        })
        .collect();
    let nan_start = app
        .world_mut()
        .spawn((
            Transform::from_xyz(f32::NAN, 1.0, 0.0),
            PathRequest::new(Cell::new(3, 3)),
        ))
        .id();
    let no_transform = app
        .world_mut()
        .spawn(PathRequest::new(Cell::new(3, 3)))
        .id();
    app.update();
    for ((_, _, expected), unit) in cases.iter().zip(&units) {
        let answer = result(&app, *unit).unwrap_or_else(|| panic!("{expected:?} not answered"));
        assert_eq!(answer.status, *expected);
        assert_eq!(answer.expansions, 0);
    }
    assert_eq!(
        result(&app, nan_start).unwrap().status,
        PathStatus::Invalid(InvalidReason::NonFiniteStart)
    );
    assert_eq!(
        result(&app, no_transform).unwrap().status,
        PathStatus::Invalid(InvalidReason::NoStartPosition)
    );
    assert_eq!(result(&app, units[8]).unwrap().cells, vec![Cell::new(2, 2)]);
}

#[test]
fn goal_in_a_wall_goes_next_to_it() {
    let mut app = app();
    spawn_map(&mut app, split_field());
    let unit = spawn_unit(
        &mut app,
        Cell::new(2, 7),
        PathRequest::new(Vec2::new(15.2, 7.1)),
    );
    for _ in 0..10 {
        app.update();
    }
    let answer = result(&app, unit).unwrap();
    assert_eq!(answer.status, PathStatus::NearestReachable);
    assert_eq!(answer.cells.last(), Some(&Cell::new(14, 7)));
}

#[test]
fn maps_must_be_found() {
    let mut app = app();
    let lonely = spawn_unit(&mut app, Cell::new(1, 1), PathRequest::new(Cell::new(2, 2)));
    app.update();
    assert_eq!(
        result(&app, lonely).unwrap().status,
        PathStatus::Invalid(InvalidReason::NoMap)
    );
    spawn_map(&mut app, NavGrid::new(4, 4).unwrap());
    let second = spawn_map(&mut app, NavGrid::new(8, 8).unwrap());
    let ambiguous = spawn_unit(&mut app, Cell::new(1, 1), PathRequest::new(Cell::new(2, 2)));
    let named = spawn_unit(
        &mut app,
        Cell::new(1, 1),
        PathRequest::new(Cell::new(6, 6)).on_map(second),
    );
    for _ in 0..5 {
        app.update();
    }
    assert_eq!(
        result(&app, ambiguous).unwrap().status,
        PathStatus::Invalid(InvalidReason::AmbiguousMap)
    );
    let answer = result(&app, named).unwrap();
    assert_eq!(
        (answer.status, answer.map),
        (PathStatus::Complete, Some(second))
    );
}

#[test]
fn map_despawned_mid_search() {
    let mut app = app();
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 16,
        ..default()
    });
    let map = spawn_map(&mut app, crate::common::serpentine(60, 30));
    let unit = spawn_unit(
        &mut app,
        Cell::new(0, 0),
        PathRequest::new(Cell::new(59, 29)),
    );
    for _ in 0..3 {
        app.update();
    }
    app.world_mut().despawn(map);
    app.update();
    assert_eq!(
        result(&app, unit).unwrap().status,
        PathStatus::Invalid(InvalidReason::MapRemoved)
    );
}

#[test]
fn a_map_that_cannot_place_cells_is_refused() {
    let broken = [
        (
            GridLayout {
                cell_size: Vec2::ZERO,
                ..default()
            },
            Transform::default(),
        ),
        (
            GridLayout {
                cell_size: Vec2::new(1.0, f32::NAN),
                ..default()
            },
            Transform::default(),
        ),
        (
            GridLayout {
                origin: Vec2::new(f32::INFINITY, 0.0),
                ..default()
            },
            Transform::default(),
        ),
        (
            GridLayout::default(),
            Transform::from_scale(Vec3::new(0.0, 1.0, 1.0)),
        ),
    ];
    for (layout, transform) in broken {
        let mut app = app();
        let map = app
            .world_mut()
            .spawn((NavGrid::new(10, 10).unwrap(), layout, transform))
            .id();
        let unit = app
            .world_mut()
            .spawn((
                Transform::from_xyz(2.0, 2.0, 0.0),
                PathRequest::new(Vec2::new(5.0, 5.0)).on_map(map),
            ))
            .id();
        app.update();
        assert_eq!(
            result(&app, unit).unwrap().status,
            PathStatus::Invalid(InvalidReason::BadMapPlacement),
            "{layout:?} {transform:?}"
        );
    }
}
