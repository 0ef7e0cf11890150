//! The smallest game: one unit ordered across a wall walks at once, joins its
//! path when it arrives and stops at the goal. `cargo run --example minimal`

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_frontier::core::Cell;
use bevy_frontier::prelude::*;

fn main() {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, FrontierPlugins::default()))
        // 60 frames a second, however fast the machine runs them.
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )))
        .add_observer(|ready: On<PathReady>| {
            println!(
                "path ready: {:?}, {} expansions",
                ready.status, ready.expansions
            );
        })
        .add_observer(|arrived: On<UnitArrived>| println!("{} arrived", arrived.entity));

    // A 64×64 map, one world unit per cell, with a wall that has a gap at
    // the top.
    let mut grid = NavGrid::new(64, 64).unwrap();
    grid.fill_rect(Cell::new(32, 0), Cell::new(32, 60), NavGrid::BLOCKED)
        .unwrap();
    app.world_mut()
        .spawn((grid, GridLayout::new(Vec2::ZERO, 1.0), Transform::default()));

    // A unit at (2, 2), walking 8 cells a second, ordered to (60, 2).
    let unit = app
        .world_mut()
        .spawn((
            Mover { speed: 8.0 },
            Transform::from_xyz(2.0, 2.0, 0.0),
            PathRequest::new(Vec2::new(60.0, 2.0)),
        ))
        .id();

    for frame in 1..=2_000 {
        app.update();
        let world = app.world();
        if world.get::<Arrived>(unit).is_some() {
            let at = world.get::<Transform>(unit).unwrap().translation;
            let cost = world.get::<PathResult>(unit).unwrap().cost;
            println!(
                "frame {frame}: at ({:.1}, {:.1}), cost {cost:.1}",
                at.x, at.y
            );
            return;
        }
    }
    println!("the unit did not arrive");
}
