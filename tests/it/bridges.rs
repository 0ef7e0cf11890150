//! Narrow passages: two crowds crossing a bridge one unit wide from both
//! ends at once take turns (infantry on a bridge one cell wide; infantry
//! and vehicles two cells wide on one two cells wide). Nobody deadlocks or turns back on the bridge,
//! the bridge never carries units both ways at once, no unit walks into
//! another or into the river, and every unit arrives.

use bevy::prelude::*;
use bevy_frontier::core::Cell;
use bevy_frontier::movement::{Arrived, CrowdState, Motion, Steering};
use bevy_frontier::prelude::*;

use crate::common::{crowd_app, position, spawn_map, spawn_mover};

/// Columns of the river; the bridge crosses it on row `BRIDGE_ROW`.
const RIVER: std::ops::RangeInclusive<u32> = 36..=45;
const BRIDGE_ROW: u32 = 20;

/// An 82 × 41 map: open banks west and east of a river ten cells wide,
/// crossed by one bridge `width` cells wide.
fn river_map(width: u32) -> NavGrid {
    let mut grid = NavGrid::new(82, 41).unwrap();
    grid.fill_rect(
        Cell::new(*RIVER.start(), 0),
        Cell::new(*RIVER.end(), 40),
        NavGrid::BLOCKED,
    )
    .unwrap();
    grid.fill_rect(
        Cell::new(*RIVER.start(), BRIDGE_ROW),
        Cell::new(*RIVER.end(), BRIDGE_ROW + width - 1),
        1,
    )
    .unwrap();
    grid
}

/// `count` movers packed on every other cell of a block with its corner at
/// (`x0`, 8), ten wide.
fn squad(app: &mut App, x0: u32, count: u32) -> Vec<Entity> {
    (0..count)
        .map(|i| spawn_mover(app, Cell::new(x0 + 2 * (i % 10), 8 + 2 * (i / 10)), 4.0))
        .collect()
}

/// A vehicle (2×2, slower than infantry) centred on `at`.
fn spawn_tank(app: &mut App, at: Vec2) -> Entity {
    app.world_mut()
        .spawn((
            Mover { speed: 2.5 },
            Footprint(2),
            Transform::from_translation(at.extend(0.0)),
        ))
        .id()
}

/// Whether `at` is on the bridge (over the river).
fn on_bridge(at: Vec2) -> bool {
    let x = (at.x + 0.5).floor() as i64;
    x >= *RIVER.start() as i64 && x <= *RIVER.end() as i64
}

/// What the test saw over the whole run.
struct Crossing {
    frames: u32,
    closest: f32,
    turned_back: usize,
    both_ways: u32,
    /// Unit-frames on the bridge of a unit whose state is not `Crossing`.
    on_bridge_not_crossing: u32,
    /// Unit-frames a unit's state was `Waiting`.
    waiting: u32,
}

/// Runs frames until every unit has arrived, checking each frame: the
/// closest two bodies, that no unit stands in the river, which way the
/// units on the bridge go, and that a unit that stepped onto the bridge
/// leaves it at the far end.
fn cross(app: &mut App, map: Entity, west: &[Entity], east: &[Entity], max: u32) -> Crossing {
    let all: Vec<(Entity, f32)> = west
        .iter()
        .map(|&u| (u, 1.0))
        .chain(east.iter().map(|&u| (u, -1.0)))
        .collect();
    let sizes: Vec<u8> = all
        .iter()
        .map(|&(u, _)| app.world().get::<Footprint>(u).map_or(1, |f| f.0))
        .collect();
    // For each unit on the bridge: the side of the river it stepped onto
    // it from, and how far it has walked in.
    let mut entered: Vec<Option<(f32, f32)>> = vec![None; all.len()];
    let mut seen = Crossing {
        frames: 0,
        closest: f32::MAX,
        turned_back: 0,
        both_ways: 0,
        on_bridge_not_crossing: 0,
        waiting: 0,
    };
    for frame in 1..=max {
        app.update();
        seen.frames = frame;
        let at: Vec<Vec2> = all.iter().map(|&(u, _)| position(app, u)).collect();
        let grid = app.world().get::<NavGrid>(map).unwrap();
        for (i, &p) in at.iter().enumerate() {
            // The footprint's anchor: a unit of size k stands centred on it
            // and k - 1 half cells on.
            let k = sizes[i];
            let corner = p - Vec2::splat((k as f32 - 1.0) / 2.0) + 0.5;
            let anchor = Cell::new(corner.x.floor() as u32, corner.y.floor() as u32);
            assert!(
                grid.size_class(k).is_walkable(anchor),
                "a unit of size {k} stands in the river at {p}"
            );
            // Distances between bodies of radius 0.45 a cell: 0.9 is
            // touching for two units one cell wide.
            for (j, q) in at.iter().enumerate().skip(i + 1) {
                let touching = 0.45 * (k + sizes[j]) as f32;
                seen.closest = seen.closest.min(0.9 * p.distance(*q) / touching);
            }
        }
        let mut ways = [false; 2];
        for (k, &p) in at.iter().enumerate() {
            let heading = all[k].1;
            let world = app.world();
            let state = world
                .get::<Motion>(all[k].0)
                .zip(world.get::<Steering>(all[k].0))
                .map(|(motion, steering)| motion.state(steering));
            seen.waiting += u32::from(state == Some(CrowdState::Waiting));
            if on_bridge(p) && state != Some(CrowdState::Crossing) {
                seen.on_bridge_not_crossing += 1;
            }
            if on_bridge(p) {
                ways[usize::from(heading > 0.0)] = true;
                let entry = entered[k].get_or_insert((if p.x < 40.5 { -1.0 } else { 1.0 }, 0.0));
                let end = if entry.0 < 0.0 { 35.5 } else { 45.5 };
                entry.1 = entry.1.max((p.x - end).abs());
            } else if let Some((from, depth)) = entered[k].take() {
                // Off the bridge again: back on the side it came from, after
                // walking onto it (not only jostled at its end)?
                let side = if p.x < 40.5 { -1.0 } else { 1.0 };
                if side == from && depth > 1.0 {
                    seen.turned_back += 1;
                }
            }
        }
        if ways[0] && ways[1] {
            seen.both_ways += 1;
        }
        if all
            .iter()
            .all(|&(u, _)| app.world().get::<Arrived>(u).is_some())
        {
            return seen;
        }
    }
    let waiting = all
        .iter()
        .filter(|&&(u, _)| {
            app.world()
                .get::<Motion>(u)
                .is_some_and(Motion::waiting_turn)
        })
        .count();
    let left = all
        .iter()
        .filter(|&&(u, _)| app.world().get::<Arrived>(u).is_none())
        .count();
    panic!("{left} units still under way after {max} frames ({waiting} waiting their turn)");
}

/// What a player watching the bridge would want to see: nobody walking
/// into another, the bridge carrying one way at a time, nobody turning
/// back on it.
fn took_turns(seen: &Crossing) {
    // Two bodies of radius 0.45 touch 0.9 apart. Where crowds press at the
    // bridge's ends, and units blocked there push through, a fifth of
    // that of give is allowed (the crowd model allows a quarter).
    assert!(
        seen.closest >= 0.9 - 0.18,
        "two units came {} apart",
        seen.closest
    );
    assert_eq!(
        seen.both_ways, 0,
        "the bridge carried units both ways at once"
    );
    assert_eq!(seen.turned_back, 0, "units turned back on the bridge");
}

/// What a game shows of units at a bridge one lane wide
/// (`Motion::state`): every unit on it crossing, and units waiting their
/// turn at its ends.
fn shown_taking_turns(seen: &Crossing) {
    assert_eq!(
        seen.on_bridge_not_crossing, 0,
        "units on the bridge not shown crossing"
    );
    assert!(seen.waiting > 0, "no unit was shown waiting its turn");
}

/// Each side ordered as one group to the other bank.
fn order_across(app: &mut App, west: &[Entity], east: &[Entity]) {
    for (group, goal) in [(west, Vec2::new(65.0, 20.0)), (east, Vec2::new(15.0, 20.0))] {
        app.world_mut()
            .write_message(GroupMove::new(group.iter().copied(), goal));
    }
}

#[test]
fn two_groups_of_a_hundred_cross_a_one_cell_bridge_both_ways() {
    let mut app = crowd_app();
    let map = spawn_map(&mut app, river_map(1));
    let west = squad(&mut app, 6, 100);
    let east = squad(&mut app, 56, 100);
    app.update();
    order_across(&mut app, &west, &east);
    let seen = cross(&mut app, map, &west, &east, 9_000);
    took_turns(&seen);
    shown_taking_turns(&seen);
}

#[test]
fn units_ordered_one_by_one_across_a_one_cell_bridge_take_turns() {
    let mut app = crowd_app();
    let map = spawn_map(&mut app, river_map(1));
    let west = squad(&mut app, 6, 30);
    let east = squad(&mut app, 56, 30);
    app.update();
    // Each unit to the mirror of its own place on the other bank.
    for &unit in west.iter().chain(&east) {
        let at = position(&app, unit);
        app.world_mut()
            .entity_mut(unit)
            .insert(PathRequest::new(Vec2::new(81.0 - at.x, at.y)));
    }
    let seen = cross(&mut app, map, &west, &east, 9_000);
    took_turns(&seen);
    shown_taking_turns(&seen);
}

#[test]
fn infantry_and_vehicles_cross_a_two_cell_bridge_both_ways() {
    let mut app = crowd_app();
    // Two cells wide: two infantry pass each other on it, a vehicle and
    // anything else do not.
    let map = spawn_map(&mut app, river_map(2));
    let mut west = squad(&mut app, 6, 40);
    let mut east = squad(&mut app, 56, 40);
    for (side, x0) in [(&mut west, 6), (&mut east, 56)] {
        for i in 0..4 {
            let at = Vec2::new((x0 + 6 * i) as f32 + 0.5, 30.5);
            side.push(spawn_tank(&mut app, at));
        }
    }
    app.update();
    order_across(&mut app, &west, &east);
    let seen = cross(&mut app, map, &west, &east, 9_000);
    took_turns(&seen);
}

#[test]
fn a_vehicle_waits_for_infantry_leaving_a_two_cell_bridge_for_a_gap() {
    let mut app = crowd_app();
    // Two cells wide, and two cells past its east end a wall with a gap
    // one cell wide on the bridge's row: near the east end, the infantry
    // on the bridge see the gap ahead.
    let mut grid = river_map(2);
    grid.fill_rect(Cell::new(48, 0), Cell::new(48, 40), NavGrid::BLOCKED)
        .unwrap();
    grid.set_cost(Cell::new(48, BRIDGE_ROW), 1).unwrap();
    let map = spawn_map(&mut app, grid);
    // Slow infantry already on the bridge, bound east through the gap.
    let west: Vec<Entity> = (0..8)
        .map(|i| {
            let cell = Cell::new(37 + i / 2, BRIDGE_ROW + i % 2);
            spawn_mover(&mut app, cell, 1.0)
        })
        .collect();
    // A tank in the strip between the river and the wall, bound west.
    let tank = spawn_tank(&mut app, Vec2::new(46.5, 25.5));
    app.update();
    order_across(&mut app, &west, &[tank]);
    let seen = cross(&mut app, map, &west, &[tank], 9_000);
    took_turns(&seen);
}

#[test]
fn infantry_walking_along_the_bank_past_a_two_cell_bridge_take_no_turn() {
    let mut app = crowd_app();
    // Two cells wide, one lane while a vehicle is on the map: the tank
    // parked in a far corner of the west bank is one.
    spawn_map(&mut app, river_map(2));
    spawn_tank(&mut app, Vec2::new(3.5, 37.5));
    // Infantry crossing from the east bank while others walk north along
    // the west bank, on the column beside the river: past the bridge's
    // west end, through the bank cells under the footprint of its last
    // anchor, but never onto it.
    let east = squad(&mut app, 50, 30);
    let walkers: Vec<Entity> = (0..4)
        .map(|i| spawn_mover(&mut app, Cell::new(35, 6 + 2 * i), 4.0))
        .collect();
    app.update();
    app.world_mut()
        .write_message(GroupMove::new(east.iter().copied(), Cell::new(15, 20)));
    for frame in 1..=3_000 {
        // The walkers set off once the crossers are on the bridge.
        if frame == 120 {
            for (i, &walker) in walkers.iter().enumerate() {
                app.world_mut()
                    .entity_mut(walker)
                    .insert(PathRequest::new(Cell::new(35, 30 + 2 * i as u32)));
            }
        }
        app.update();
        for &walker in &walkers {
            let motion = app.world().get::<Motion>(walker).unwrap();
            assert!(
                !motion.waiting_turn(),
                "frame {frame}: {walker}, walking along the bank, waits its turn at the bridge"
            );
            assert!(!on_bridge(position(&app, walker)), "{walker} on the bridge");
        }
        if walkers
            .iter()
            .all(|&u| app.world().get::<Arrived>(u).is_some())
        {
            return;
        }
    }
    panic!("the walkers did not all arrive in 3,000 frames");
}
