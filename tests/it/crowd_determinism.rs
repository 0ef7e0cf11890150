//! A crowd of a few hundred movers ends in the same places, bit for bit,
//! whatever the number of threads the crowd step is spread over and
//! whatever entity ids its movers get: four squads ordered across each
//! other meet in a jam through a gap in a wall, and every mover's position
//! and state in every frame are the same with one thread, with four, and
//! with one after a few hundred other entities were spawned and
//! despawned in a shuffled order (so the movers get other ids, in another
//! order). (Built with the `multi_threaded` feature,
//! `cargo test --features multi_threaded --test it crowd_determinism`, the
//! four threads are real; without it the task pool has one.)

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_frontier::core::{Cell, NavGrid};
use bevy_frontier::movement::{CrowdSettings, Motion, Steering};
use bevy_frontier::prelude::*;

use crate::common::{Rng, clutter, spawn_map, spawn_mover, threaded_app};

/// Movers per squad.
const SQUAD: u32 = 80;

/// Every frame's hash of every mover's position and state, and the least
/// distance between two movers over the run; with `clutter_first`, other
/// entities come and go before the movers are spawned.
fn run(threads: usize, clutter_first: bool) -> (Vec<u64>, f32) {
    let mut app = threaded_app(threads);
    if clutter_first {
        clutter(&mut app, &mut Rng::new(17));
    }
    app.insert_resource(CrowdSettings {
        threads,
        ..default()
    })
    .insert_resource(TimeUpdateStrategy::ManualDuration(
        std::time::Duration::from_secs_f64(1.0 / 30.0),
    ));
    // A wall across the middle with a gap six cells wide.
    let mut grid = NavGrid::new(64, 64).unwrap();
    for y in 0..64 {
        if !(29..35).contains(&y) {
            grid.set_cost(Cell::new(32, y), NavGrid::BLOCKED).unwrap();
        }
    }
    spawn_map(&mut app, grid);
    // Two squads from the west and the east, through the gap; two more
    // from the north and south, across their way.
    let mut orders = Vec::new();
    for k in 0..SQUAD {
        let (a, b) = (k % 8, k / 8);
        orders.push((
            Cell::new(4 + 2 * a, 22 + 2 * b),
            Cell::new(44 + 2 * a, 22 + 2 * b),
        ));
        orders.push((
            Cell::new(44 + 2 * a, 22 + 2 * b),
            Cell::new(4 + 2 * a, 22 + 2 * b),
        ));
        orders.push((Cell::new(20 + 2 * b, 2 + a), Cell::new(20 + 2 * b, 54 + a)));
        orders.push((Cell::new(20 + 2 * b, 54 + a), Cell::new(20 + 2 * b, 2 + a)));
    }
    let units: Vec<Entity> = orders
        .iter()
        .map(|&(start, _)| spawn_mover(&mut app, start, 4.0))
        .collect();
    app.update();
    for (&unit, &(_, goal)) in units.iter().zip(&orders) {
        let goal = Vec2::new(goal.x as f32, goal.y as f32);
        app.world_mut()
            .entity_mut(unit)
            .insert(PathRequest::new(goal));
    }
    let mut frames = Vec::new();
    let mut closest = f32::INFINITY;
    for _ in 0..360 {
        app.update();
        let world = app.world();
        let mut hash = 0xcbf2_9ce4_8422_2325u64;
        let mut positions = Vec::with_capacity(units.len());
        for &unit in &units {
            let at = world.get::<Transform>(unit).unwrap().translation;
            let state = world
                .get::<Motion>(unit)
                .zip(world.get::<Steering>(unit))
                .map_or(u8::MAX, |(motion, steering)| motion.state(steering) as u8);
            for byte in
                at.x.to_bits()
                    .to_le_bytes()
                    .into_iter()
                    .chain(at.y.to_bits().to_le_bytes())
                    .chain([state])
            {
                hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
            }
            positions.push(at.truncate());
        }
        frames.push(hash);
        for (i, a) in positions.iter().enumerate() {
            for b in &positions[i + 1..] {
                closest = closest.min(a.distance(*b));
            }
        }
    }
    (frames, closest)
}

#[test]
fn a_crowd_ends_the_same_on_any_threads_and_any_ids() {
    let (one, closest) = run(1, false);
    // The squads met: bodies (radius 0.45) pressed together in the gap,
    // where the solvers had pairs to settle.
    assert!(closest < 0.9, "the squads never met (closest {closest})");
    let (four, _) = run(4, false);
    for (frame, (a, b)) in one.iter().zip(&four).enumerate() {
        assert_eq!(a, b, "frame {frame} differs with four threads");
    }
    let (other_ids, _) = run(1, true);
    for (frame, (a, b)) in one.iter().zip(&other_ids).enumerate() {
        assert_eq!(a, b, "frame {frame} differs with other entity ids");
    }
}
