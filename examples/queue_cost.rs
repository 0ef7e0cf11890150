//! What one new request costs the queue, for a queue holding `N` waiting
//! requests: run it twice under callgrind, with and without arrivals, and
//! the difference over the frames is the work of one arrival (collecting
//! it, sharing goals, ranking it among those waiting).
//!
//! ```text
//! cargo build --release --example queue_cost
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/queue_cost --waiting 1000 --arrivals 1
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/queue_cost --waiting 1000 --arrivals 0
//! ```
//!
//! (and the same with `--waiting 10`). Every arrival has a goal of its own,
//! the case where sharing finds no partner and an unindexed queue looks
//! at every waiting request to learn so. The waiting requests never get a
//! slot: one search holds the only one, on a budget of one expansion a
//! frame. Without valgrind, the example prints the time of the measured
//! frames, noisier than instructions.

#![allow(clippy::disallowed_methods)] // wall-clock times, printed only

use std::time::{Duration, Instant};

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_frontier::core::Cell;
use bevy_frontier::pathfinding::PathfindingQueue;
use bevy_frontier::prelude::*;

/// Frames measured, one arrival each with `--arrivals 1`.
const FRAMES: u32 = 50;

fn main() {
    let mut waiting = 1_000u32;
    let mut arrivals = true;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().and_then(|v| v.parse::<u32>().ok());
        match (arg.as_str(), value) {
            ("--waiting", Some(n)) => waiting = n,
            ("--arrivals", Some(n)) => arrivals = n != 0,
            _ => {
                eprintln!("usage: queue_cost [--waiting N] [--arrivals 0|1]");
                std::process::exit(2);
            }
        }
    }

    let mut app = App::new();
    app.add_plugins((MinimalPlugins, FrontierPlugins::default()))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
            16,
        )))
        .insert_resource(PathfindingSettings {
            nodes_per_frame: 1,
            max_in_flight: 1,
            share_goals: true,
            jump_points: false,
            ..default()
        });
    let side = 256u32;
    // A wall across the middle with a gap at the top: no request is
    // answered by a straight line.
    let mut grid = NavGrid::new(side, side).unwrap();
    grid.fill_rect(
        Cell::new(128, 0),
        Cell::new(128, side - 8),
        NavGrid::BLOCKED,
    )
    .unwrap();
    app.world_mut().spawn((grid, Transform::default()));
    // A request per unit, each from its own start to a goal of its own,
    // all far enough apart never to share.
    let order = |app: &mut App, i: u32| {
        let start = Cell::new(i % 64, (i / 64) % 64);
        let goal = Cell::new(side - 1 - (i % 128), side - 1 - (i / 128) % 128);
        app.world_mut().spawn((
            Transform::from_xyz(start.x as f32, start.y as f32, 0.0),
            PathRequest::new(goal),
        ));
    };
    for i in 0..waiting {
        order(&mut app, i);
    }
    for _ in 0..10 {
        app.update();
    }
    let began = Instant::now();
    for frame in 0..FRAMES {
        if arrivals {
            order(&mut app, waiting + frame);
        }
        app.update();
    }
    let took = began.elapsed();
    let queue = app.world().resource::<PathfindingQueue>();
    println!(
        "waiting={} arrivals={} frames={FRAMES} us_per_frame={:.2}",
        queue.queued(),
        u32::from(arrivals),
        took.as_secs_f64() * 1e6 / f64::from(FRAMES)
    );
}
