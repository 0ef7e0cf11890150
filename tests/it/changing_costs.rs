//! Ground whose cost changes under the units' way every frame (a threat
//! map, say, or the cost of cells near enemies): a unit keeps walking the
//! way it has while it plans again, and arrives about as soon as on calm
//! ground. Only a wall across its way sends it back to instinct. A group's
//! shared path that the changes keep flagging is searched again a few
//! times, then kept while it is walkable. (Before, each flag sent a unit
//! back to instinct, and each flag of the shared path sent the group back
//! to searching: in a maze, neither ever arrived.)

use bevy::prelude::*;
use bevy_frontier::core::Cell;
use bevy_frontier::movement::{Arrived, Steering};
use bevy_frontier::prelude::*;

use crate::common::{position, serpentine, spawn_map, spawn_mover, timed_app};

/// The serpentine's row that every corridor crosses.
const BAND: u32 = 10;

/// The cost of the band's ground in `frame`: 1, 2, 1, 2, ...
fn band_cost(frame: u32) -> u8 {
    1 + (frame % 2) as u8
}

/// A serpentine 40×20 (corridors four cells wide joined at alternate
/// ends: walking straight at the goal gets a unit nowhere) with `units`
/// movers in its first corridor; searches of 256 expansions a frame, so a
/// path takes a few frames to come.
fn serpentine_with_units(units: u32) -> (App, Entity, Vec<Entity>) {
    let mut app = timed_app(256);
    let map = spawn_map(&mut app, serpentine(40, 20));
    let units = (0..units)
        .map(|i| spawn_mover(&mut app, Cell::new(i % 2, i / 2), 8.0))
        .collect();
    (app, map, units)
}

/// Runs up to `frames` frames, first setting the band's cost for the frame
/// when `churn`; the frame every unit has arrived by. With `on_its_way`,
/// panics if a unit that once followed a path walks on instinct again.
fn run(
    app: &mut App,
    map: Entity,
    units: &[Entity],
    churn: bool,
    on_its_way: bool,
    frames: u32,
) -> Option<u32> {
    let mut followed = vec![false; units.len()];
    for frame in 1..=frames {
        if churn {
            let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
            for x in 0..grid.width() {
                let cell = Cell::new(x, BAND);
                if grid.is_walkable(cell) {
                    grid.set_cost(cell, band_cost(frame)).unwrap();
                }
            }
        }
        app.update();
        for (i, &unit) in units.iter().enumerate() {
            match app.world().get::<Steering>(unit) {
                Some(Steering::Following { .. }) => followed[i] = true,
                Some(Steering::Instinct { .. }) => assert!(
                    !on_its_way || !followed[i],
                    "frame {frame}: {unit} left its way for instinct at {}",
                    position(app, unit)
                ),
                _ => {}
            }
        }
        if units
            .iter()
            .all(|&u| app.world().get::<Arrived>(u).is_some())
        {
            return Some(frame);
        }
    }
    None
}

/// Orders `units` movers across the serpentine with `order`, once on calm
/// ground and once with the band's cost changing every frame (see
/// [`run`] for `on_its_way`); checks that they arrive under the churn
/// within a quarter more frames than on calm ground.
fn arrive_despite_churn(units: u32, on_its_way: bool, order: impl Fn(&mut App, &[Entity])) {
    let mut frames = [false, true].map(|churn| {
        let (mut app, map, units) = serpentine_with_units(units);
        order(&mut app, &units);
        run(&mut app, map, &units, churn, on_its_way, 3_000)
    });
    let calm = frames[0].take().expect("arrives on calm ground");
    let churned = frames[1]
        .take()
        .expect("arrives however often its way changes cost");
    eprintln!("{units} units arrived by frame {calm} on calm ground, {churned} with the churn");
    assert!(
        churned <= calm + calm / 4,
        "arrived in frame {churned}, against {calm} on calm ground"
    );
}

#[test]
fn a_unit_whose_way_changes_cost_every_frame_walks_on_and_arrives() {
    arrive_despite_churn(1, true, |app, units| {
        app.world_mut()
            .entity_mut(units[0])
            .insert(PathRequest::new(Cell::new(39, 19)));
    });
}

#[test]
fn a_group_whose_way_changes_cost_every_frame_walks_on_and_arrives() {
    // Members pushed by the others out of sight of their next corner may
    // plan again on instinct, on calm ground too.
    arrive_despite_churn(8, false, |app, units| {
        app.world_mut()
            .write_message(GroupMove::new(units.iter().copied(), Cell::new(37, 16)));
    });
}
