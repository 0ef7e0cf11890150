//! A crowd that is slow, not stuck: units squeezing through a gap two
//! cells wide from both sides make headway only when the units in front
//! of them do, and none gives up while the front moves on.

use bevy::prelude::*;
use bevy_frontier::core::Cell;
use bevy_frontier::movement::{Arrival, Arrived, CrowdSettings};
use bevy_frontier::prelude::*;

use crate::common::{spawn_map, spawn_mover, timed_app};

/// Sixty units packed on each side of a wall with a gap two cells wide,
/// each ordered to the mirror of its cell across the wall, with a short
/// patience (`stop_after` 2 s, `give_up_after` 0.5 s): units wait longer
/// than 2 s without half a cell of ground while the two streams squeeze
/// through each other (counting only its own headway, as the crate did
/// before, one of them gave up). Returns how each order ended.
fn squeeze(frames: u32) -> Vec<Option<Arrival>> {
    let mut app = timed_app(4096);
    app.insert_resource(CrowdSettings {
        stop_after: 2.0,
        give_up_after: 0.5,
        ..default()
    });
    let mut grid = NavGrid::new(60, 30).unwrap();
    grid.fill_rect(Cell::new(30, 0), Cell::new(30, 13), NavGrid::BLOCKED)
        .unwrap();
    grid.fill_rect(Cell::new(30, 16), Cell::new(30, 29), NavGrid::BLOCKED)
        .unwrap();
    spawn_map(&mut app, grid);
    let mut units = Vec::new();
    for x in (14..26).chain(35..47) {
        for y in 10..20 {
            if (x + y) % 2 == 0 {
                let unit = spawn_mover(&mut app, Cell::new(x, y), 4.0);
                let goal = Vec2::new((60 - x) as f32, y as f32);
                app.world_mut()
                    .entity_mut(unit)
                    .insert(PathRequest::new(goal));
                units.push(unit);
            }
        }
    }
    for _ in 0..frames {
        app.update();
        if units
            .iter()
            .all(|&u| app.world().get::<Arrived>(u).is_some())
        {
            break;
        }
    }
    units
        .iter()
        .map(|&u| app.world().get::<Arrived>(u).map(|a| a.outcome))
        .collect()
}

#[test]
fn units_in_a_slow_crowd_never_give_up() {
    let ends = squeeze(3_000);
    let stopped = ends
        .iter()
        .filter(|end| **end == Some(Arrival::Blocked))
        .count();
    assert_eq!(stopped, 0, "{ends:?}");
    assert!(
        ends.iter().all(|end| end.is_some_and(|a| a.at_goal())),
        "{ends:?}"
    );
}
