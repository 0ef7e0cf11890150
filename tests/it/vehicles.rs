//! Units bigger than a cell in the plugin: a `Footprint(k)` unit is routed
//! only where it fits, walks without ever putting its footprint in a wall,
//! has its path flagged by an edit under its footprint, and moves in group
//! orders on a path of its own size, to a slot no other unit's footprint
//! overlaps.

use std::collections::HashSet;

use bevy::prelude::*;
use bevy_frontier::core::Cell;
use bevy_frontier::groups::SharedRoute;
use bevy_frontier::movement::Arrived;
use bevy_frontier::prelude::*;

use crate::common::{Rng, position, random_grid, seeds_from_env, settle, spawn_map, timed_app};
use crate::unit_sizes::footprint_fits;

/// A wall down x = 20 with a one-cell gap at y = 20 (on the way) and a
/// three-cell gap at y = 2..=4 (a detour).
fn gate() -> NavGrid {
    let mut grid = NavGrid::new(40, 30).unwrap();
    grid.fill_rect(Cell::new(20, 0), Cell::new(20, 29), NavGrid::BLOCKED)
        .unwrap();
    grid.set_cost(Cell::new(20, 20), 1).unwrap();
    grid.fill_rect(Cell::new(20, 2), Cell::new(20, 4), 1)
        .unwrap();
    grid
}

/// A mover of `size` whose footprint is anchored at `anchor`.
fn spawn_vehicle(app: &mut App, anchor: Cell, size: u8, speed: f32) -> Entity {
    let centre = (size as f32 - 1.0) / 2.0;
    let at = Vec3::new(anchor.x as f32 + centre, anchor.y as f32 + centre, 0.0);
    app.world_mut()
        .spawn((
            Mover { speed },
            Footprint(size),
            Transform::from_translation(at),
        ))
        .id()
}

/// The anchor of the `size` footprint centred at `at`.
fn anchor_at(at: Vec2, size: u8) -> Cell {
    let back = (size as f32 - 1.0) / 2.0;
    Cell::new(
        (at.x - back + 0.5).floor() as u32,
        (at.y - back + 0.5).floor() as u32,
    )
}

/// The cells a footprint anchored at `anchor` covers.
fn footprint(anchor: Cell, size: u8) -> impl Iterator<Item = Cell> {
    let size = size as u32;
    (0..size).flat_map(move |dy| (0..size).map(move |dx| Cell::new(anchor.x + dx, anchor.y + dy)))
}

/// Runs frames until every unit arrived, checking every frame that no
/// footprint is in a wall.
fn drive(app: &mut App, map: Entity, units: &[(Entity, u8)], max_frames: u32) {
    for _ in 0..max_frames {
        app.update();
        let grid = app.world().get::<NavGrid>(map).unwrap();
        for &(unit, size) in units {
            let anchor = anchor_at(position(app, unit), size);
            assert!(
                footprint_fits(grid, anchor, size as u32),
                "{unit} of size {size} stands at {anchor}, where it does not fit"
            );
        }
        if units
            .iter()
            .all(|&(u, _)| app.world().get::<Arrived>(u).is_some())
        {
            return;
        }
    }
    for &(unit, size) in units {
        if app.world().get::<Arrived>(unit).is_none() {
            eprintln!(
                "{unit} of size {size} at {} not arrived: {:?} {:?} {:?}",
                position(app, unit),
                app.world().get::<bevy_frontier::movement::Steering>(unit),
                app.world().get::<PathRequest>(unit),
                app.world()
                    .get::<PathResult>(unit)
                    .map(|r| (r.status, r.cells.last().copied())),
            );
        }
    }
    panic!("not every unit arrived in {max_frames} frames");
}

#[test]
fn a_vehicle_takes_the_long_way_round_a_gap_only_infantry_fits() {
    let mut app = timed_app(4096);
    let map = spawn_map(&mut app, gate());
    let infantry = spawn_vehicle(&mut app, Cell::new(10, 20), 1, 6.0);
    let tank = spawn_vehicle(&mut app, Cell::new(10, 20), 2, 6.0);
    let goal = Vec2::new(30.0, 20.0);
    for unit in [infantry, tank] {
        app.world_mut()
            .entity_mut(unit)
            .insert(PathRequest::new(goal));
    }
    app.update();
    let world = app.world();
    let foot = world.get::<PathResult>(infantry).unwrap();
    let tracks = world.get::<PathResult>(tank).unwrap();
    assert_eq!(foot.status, PathStatus::Complete);
    assert_eq!(tracks.status, PathStatus::Complete);
    assert_eq!(tracks.size, 2);
    assert!(foot.cells.contains(&Cell::new(20, 20)));
    // The tank's footprint crosses the wall only through the wide gap.
    for &anchor in &tracks.cells {
        if anchor.x == 19 || anchor.x == 20 {
            assert!(
                (2..=3).contains(&anchor.y),
                "tank anchor {anchor} in the wall"
            );
        }
    }
    assert!(tracks.cost > foot.cost + 20.0);
    // Its waypoints are the centres of its footprints.
    let last = *tracks.waypoints.last().unwrap();
    assert_eq!(anchor_at(last, 2), *tracks.cells.last().unwrap());
    drive(&mut app, map, &[(infantry, 1), (tank, 2)], 2_000);
    settle(&mut app, &[infantry, tank], 600);
    // Both were sent to one point: one rests there, the other beside it,
    // their footprints apart.
    let (a, b) = (position(&app, infantry), position(&app, tank));
    assert!(a.distance(goal).min(b.distance(goal)) < 0.5);
    assert!(a.distance(goal).max(b.distance(goal)) < 3.0);
    let infantry_cell = anchor_at(a, 1);
    assert!(footprint(anchor_at(b, 2), 2).all(|cell| cell != infantry_cell));
}

#[test]
fn footprints_no_grid_answers_for_are_invalid_requests() {
    let mut app = timed_app(4096);
    spawn_map(&mut app, gate());
    let units: Vec<Entity> = [0, 9]
        .into_iter()
        .map(|size| {
            app.world_mut()
                .spawn((
                    Transform::from_xyz(5.0, 5.0, 0.0),
                    Footprint(size),
                    PathRequest::new(Vec2::new(8.0, 8.0)),
                ))
                .id()
        })
        .collect();
    app.update();
    for unit in units {
        assert_eq!(
            app.world().get::<PathResult>(unit).unwrap().status,
            PathStatus::Invalid(InvalidReason::BadFootprint)
        );
    }
}

#[test]
fn a_wall_under_a_vehicle_path_but_off_its_anchors_flags_the_path() {
    let mut app = timed_app(4096);
    let map = spawn_map(&mut app, NavGrid::new(40, 30).unwrap());
    let tank = app
        .world_mut()
        .spawn((
            Transform::from_xyz(3.5, 10.5, 0.0),
            Footprint(2),
            PathRequest::new(Vec2::new(33.5, 10.5)),
        ))
        .id();
    app.update();
    let result = app.world().get::<PathResult>(tank).unwrap().clone();
    assert_eq!(result.status, PathStatus::Complete);
    let anchors: HashSet<Cell> = result.cells.iter().copied().collect();
    // A cell the footprint covers on the way, but no anchor of the path.
    let covered = result
        .cells
        .iter()
        .flat_map(|&a| footprint(a, 2))
        .find(|cell| !anchors.contains(cell) && cell.x > 10)
        .unwrap();
    app.world_mut()
        .get_mut::<NavGrid>(map)
        .unwrap()
        .set_cost(covered, NavGrid::BLOCKED)
        .unwrap();
    app.update();
    let result = app.world().get::<PathResult>(tank).unwrap();
    assert!(result.invalidated, "a wall at {covered} under the path");
}

#[test]
fn a_mixed_group_moves_one_path_per_size_to_slots_that_do_not_overlap() {
    let mut app = timed_app(4096);
    let map = spawn_map(&mut app, gate());
    let mut units = Vec::new();
    for i in 0..8u32 {
        units.push((spawn_vehicle(&mut app, Cell::new(4 + i, 14), 1, 6.0), 1));
    }
    for i in 0..4u32 {
        units.push((spawn_vehicle(&mut app, Cell::new(3 + 3 * i, 17), 2, 4.0), 2));
    }
    app.update();
    let goal = Cell::new(30, 15);
    app.world_mut()
        .write_message(GroupMove::new(units.iter().map(|&(u, _)| u), goal));
    app.update();
    let mut groups = app.world_mut().query::<&SharedRoute>();
    let mut sizes: Vec<u8> = groups.iter(app.world()).map(|g| g.size()).collect();
    sizes.sort();
    assert_eq!(sizes, [1, 2], "one group per size");
    drive(&mut app, map, &units, 3_000);
    let entities: Vec<Entity> = units.iter().map(|&(u, _)| u).collect();
    settle(&mut app, &entities, 600);
    // No two units' footprints overlap at the end.
    let mut covered = HashSet::new();
    for &(unit, size) in &units {
        let anchor = anchor_at(position(&app, unit), size);
        for cell in footprint(anchor, size) {
            assert!(covered.insert(cell), "two units on {cell}");
        }
    }
}

/// A seeded crowd of movers of sizes 1 to 3 with avoidance on a field of
/// random walls, ordered about again and again (alone and in groups),
/// with walls put up and taken down anywhere every frame, beside and
/// under bodies too. After every frame: no body that fitted where it
/// stood at the frame's start (on the grid as edited before it) ends the
/// frame where its footprint does not fit. (A body a wall went up under
/// may leave any way.) Once, a 2×2 vehicle ended a frame 0.01 of a cell
/// over a wall's corner.
fn crowd_among_walls(seed: u64) {
    let mut rng = Rng::new(seed);
    let mut app = timed_app(4096);
    let (width, height) = (30 + rng.below(20), 30 + rng.below(20));
    let walls = 8 + rng.below(12);
    let grid = random_grid(&mut rng, width, height, walls, 1);
    let map = spawn_map(&mut app, grid);
    let mut units = Vec::new();
    for _ in 0..20 + rng.below(20) {
        let size = 1 + rng.below(3) as u8;
        let back = (size as f32 - 1.0) / 2.0;
        let at = Vec3::new(
            rng.below(width - 2) as f32 + back,
            rng.below(height - 2) as f32 + back,
            0.0,
        );
        let speed = [2.0, 4.0, 7.0][rng.below(3) as usize];
        let unit = app
            .world_mut()
            .spawn((
                Mover { speed },
                Footprint(size),
                Transform::from_translation(at),
            ))
            .id();
        units.push(unit);
    }
    let goal = |rng: &mut Rng| Vec2::new(rng.below(width) as f32, rng.below(height) as f32);
    for frame in 0..600 {
        if frame % 40 == 0 {
            if rng.below(2) == 0 {
                let members = units.iter().copied().filter(|_| rng.below(2) == 0);
                let order = GroupMove::new(members.collect::<Vec<_>>(), goal(&mut rng));
                app.world_mut().write_message(order);
            } else {
                for &unit in &units {
                    let to = goal(&mut rng);
                    app.world_mut()
                        .entity_mut(unit)
                        .insert(PathRequest::new(to));
                }
            }
        }
        for _ in 0..2 {
            let cell = Cell::new(rng.below(width), rng.below(height));
            let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
            let cost = if grid.is_walkable(cell) {
                NavGrid::BLOCKED
            } else {
                1
            };
            grid.set_cost(cell, cost).unwrap();
        }
        let grid = app.world().get::<NavGrid>(map).unwrap().clone();
        let anchor = |app: &App, unit: Entity| {
            let size = app.world().get::<Footprint>(unit).unwrap().0;
            let at = position(app, unit).as_dvec2() - (size as f64 - 1.0) / 2.0 + 0.5;
            let cell = Cell::new(at.x.floor() as u32, at.y.floor() as u32);
            (cell, footprint_fits(&grid, cell, size as u32))
        };
        let before: Vec<(Cell, bool)> = units.iter().map(|&u| anchor(&app, u)).collect();
        let was: Vec<Vec2> = units.iter().map(|&u| position(&app, u)).collect();
        app.update();
        for (i, &unit) in units.iter().enumerate() {
            let (cell, fits) = anchor(&app, unit);
            assert!(
                fits || !before[i].1,
                "seed {seed}, frame {frame}: {unit} of size {} went from {} (anchor {}) to {} \
                 (anchor {cell}), where it does not fit",
                app.world().get::<Footprint>(unit).unwrap().0,
                was[i],
                before[i].0,
                position(&app, unit),
            );
        }
    }
}

/// [`crowd_among_walls`] over seeds: `FRONTIER_WALLS_SEEDS=N` (or `A..B`)
/// for more than CI's, `FRONTIER_WALLS_SEED=S` for one.
#[test]
fn crowds_among_walls_going_up_keep_every_body_off_them() {
    for seed in seeds_from_env("FRONTIER_WALLS_SEEDS", "FRONTIER_WALLS_SEED", 12) {
        crowd_among_walls(seed);
    }
}
