//! Results follow what the game does, never the numbers Bevy gives its
//! entities: a game played twice, the second time after spawning and
//! despawning a few hundred other entities in a shuffled order and
//! inserting resources (a menu, a debug overlay: every unit then gets
//! another entity id, in another order), gives every unit the same
//! results in the same frames and leaves every mover in the same place,
//! bit for bit. The game has solo orders of three movement classes on
//! rough ground, units sent one by one to a rally point (shared searches),
//! group moves, chases and a follow across a river (targets destroyed
//! mid-chase), movers avoiding each other, and walls and terrain changed
//! while it runs.

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_frontier::checksum::FrontierChecksum;
use bevy_frontier::core::Cell;
use bevy_frontier::prelude::*;

use crate::common::{Rng, clutter, spawn_map, terrain_grid, threaded_app};

const SIZE: u32 = 48;
const OPEN: Terrain = Terrain(1);
const WOODS: Terrain = Terrain(2);
const SHALLOW: Terrain = Terrain(3);
const DEEP: Terrain = Terrain(4);

/// Per frame: every unit's result so far (status, cells, cost bits),
/// every unit's position bits, in the order the game made them, and the
/// frame's `FrontierChecksum`.
type Frame = (
    Vec<Option<(PathStatus, Vec<Cell>, u32)>>,
    Vec<(u32, u32)>,
    u64,
);

fn terrain_at(rng: &mut Rng, x: u32, y: u32) -> Terrain {
    // A river down the middle with banks, woods in patches, walls here and
    // there.
    let river = x.abs_diff(SIZE / 2);
    match (river, rng.below(100)) {
        (0..=1, _) => DEEP,
        (2..=3, _) => SHALLOW,
        (_, 0..=9) => Terrain::WALL,
        (_, r) if r < 35 || (y / 8 + x / 8).is_multiple_of(3) => WOODS,
        _ => OPEN,
    }
}

/// What the game does differently: nothing, or one unit's order.
#[derive(Clone, Copy, PartialEq)]
enum Change {
    None,
    /// The first unit ordered on frame 30 is sent elsewhere.
    OneOrder,
}

fn play(clutter_first: bool, threads: usize, change: Change) -> Vec<Frame> {
    let mut app = threaded_app(threads);
    app.insert_resource(TimeUpdateStrategy::ManualDuration(
        std::time::Duration::from_millis(25),
    ))
    .insert_resource(PathfindingSettings {
        nodes_per_frame: 400,
        max_in_flight: 6,
        search_lanes: 2,
        threads,
        ..default()
    })
    .insert_resource(CrowdSettings {
        threads,
        ..default()
    })
    .init_resource::<FrontierChecksum>();
    if clutter_first {
        clutter(&mut app, &mut Rng::new(99));
    }
    // A frame before the level, as a game's menu has.
    app.update();
    let mut rng = Rng::new(5);
    let mut classes = MovementClasses::new();
    let foot = classes.add("foot", [(OPEN, 1), (WOODS, 3), (SHALLOW, 4)]);
    let boat = classes.add("boat", [(SHALLOW, 2), (DEEP, 1)]);
    let hover = classes.add("hover", [(OPEN, 1), (WOODS, 1), (SHALLOW, 1), (DEEP, 1)]);
    let grid = terrain_grid(SIZE, classes, |x, y| terrain_at(&mut rng, x, y));
    let map = spawn_map(&mut app, grid.clone());
    // Where a unit of each class may stand.
    let ground = |class: ClassId, cell: Cell| match grid.terrain(cell) {
        Some(OPEN | WOODS) => class != boat,
        Some(SHALLOW) => true,
        Some(DEEP) => class != foot,
        _ => false,
    };
    let pick = |rng: &mut Rng, class: ClassId| loop {
        let cell = Cell::new(rng.below(SIZE), rng.below(SIZE));
        if ground(class, cell) {
            return cell;
        }
    };
    let mut units: Vec<Entity> = Vec::new();
    let mut targets: Vec<Entity> = Vec::new();
    let mut log = Vec::new();
    for frame in 0..420 {
        if frame % 6 == 0 && frame < 120 {
            // Solo orders of every class, some walking in the crowd.
            for k in 0..5u8 {
                let class = [foot, boat, hover][usize::from(k % 3)];
                let (start, mut goal) = (pick(&mut rng, class), pick(&mut rng, class));
                if change == Change::OneOrder && frame == 30 && k == 0 {
                    goal = start;
                }
                let at = Vec3::new(start.x as f32, start.y as f32, 0.0);
                let request = PathRequest::new(goal).with_priority(rng.below(3) as i32);
                let mut unit = app.world_mut().spawn((
                    Transform::from_translation(at),
                    MovementClass(class),
                    request,
                ));
                if k < 3 {
                    unit.insert(Mover { speed: 3.0 });
                }
                units.push(unit.id());
            }
        }
        if frame % 25 == 4 && frame < 150 {
            // A rally point: foot soldiers standing together sent one by
            // one to one goal (a shared search)…
            let (at, goal) = (pick(&mut rng, foot), pick(&mut rng, foot));
            for _ in 0..4 {
                let position = Vec3::new(at.x as f32, at.y as f32, 0.0);
                let unit = app
                    .world_mut()
                    .spawn((
                        Transform::from_translation(position),
                        PathRequest::new(goal),
                    ))
                    .id();
                units.push(unit);
            }
            // …and a group of hovercraft and foot soldiers.
            let members: Vec<Entity> = (0..8)
                .map(|i| {
                    let class = if i % 2 == 0 { foot } else { hover };
                    let at = pick(&mut rng, foot);
                    let position = Vec3::new(at.x as f32, at.y as f32, 0.0);
                    app.world_mut()
                        .spawn((
                            Mover { speed: 3.5 },
                            MovementClass(class),
                            Transform::from_translation(position),
                        ))
                        .id()
                })
                .collect();
            units.extend(&members);
            let goal = pick(&mut rng, foot);
            app.world_mut().write_message(GroupMove::new(members, goal));
        }
        if frame % 40 == 12 && frame < 250 {
            // A hovercraft that flees across the river, chased into range
            // by foot soldiers (who must ford it) and followed by another
            // hovercraft; every other one is destroyed mid-chase.
            let (at, to) = (pick(&mut rng, hover), pick(&mut rng, hover));
            let target = app
                .world_mut()
                .spawn((
                    Mover { speed: 1.5 },
                    MovementClass(hover),
                    Transform::from_xyz(at.x as f32, at.y as f32, 0.0),
                    PathRequest::new(to),
                ))
                .id();
            for i in 0..4 {
                let (class, request) = match i {
                    3 => (hover, PathRequest::follow(target, 2.0)),
                    _ => (foot, PathRequest::chase(target, 1.5)),
                };
                let at = pick(&mut rng, class);
                let chaser = app
                    .world_mut()
                    .spawn((
                        Mover { speed: 3.0 },
                        MovementClass(class),
                        Transform::from_xyz(at.x as f32, at.y as f32, 0.0),
                        request,
                    ))
                    .id();
                units.push(chaser);
            }
            targets.push(target);
        }
        if frame % 80 == 70 && !targets.is_empty() {
            let target = targets.remove(0);
            app.world_mut().despawn(target);
        }
        if frame % 9 == 2 {
            // A wall raised or a ford dug: terrain changed under way.
            let cell = Cell::new(rng.below(SIZE), rng.below(SIZE));
            let terrain = [Terrain::WALL, OPEN, WOODS, SHALLOW][rng.below(4) as usize];
            let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
            grid.set_terrain(cell, terrain).unwrap();
        }
        app.update();
        let world = app.world();
        let results = units
            .iter()
            .map(|&unit| {
                let r = world.get::<PathResult>(unit)?;
                Some((r.status, r.cells.clone(), r.cost.to_bits()))
            })
            .collect();
        let standing = units
            .iter()
            .map(|&unit| {
                let at = world.get::<Transform>(unit).unwrap().translation;
                (at.x.to_bits(), at.y.to_bits())
            })
            .collect();
        log.push((
            results,
            standing,
            world.resource::<FrontierChecksum>().frame(),
        ));
    }
    log
}

fn assert_same(plain: &[Frame], other: &[Frame], what: &str) {
    for (frame, (a, b)) in plain.iter().zip(other).enumerate() {
        for (unit, (x, y)) in a.0.iter().zip(&b.0).enumerate() {
            assert_eq!(
                x, y,
                "{what}: unit {unit}'s result differs on frame {frame}"
            );
        }
        for (unit, (x, y)) in a.1.iter().zip(&b.1).enumerate() {
            assert_eq!(
                x, y,
                "{what}: unit {unit} stands elsewhere on frame {frame}"
            );
        }
        assert_eq!(a.2, b.2, "{what}: the checksum differs on frame {frame}");
    }
}

#[test]
fn other_entity_ids_give_the_same_game() {
    let plain = play(false, 1, Change::None);
    let last = plain.last().unwrap();
    let answered = last.0.iter().filter(|r| r.is_some()).count();
    assert!(answered > 100, "only {answered} results to compare");
    let walked = (0..last.1.len())
        .filter(|&unit| {
            let first = plain.iter().find(|frame| frame.1.len() > unit).unwrap();
            first.1[unit] != last.1[unit]
        })
        .count();
    assert!(
        walked > 20,
        "only {walked} of {} units walked",
        last.1.len()
    );
    let cluttered = play(true, 1, Change::None);
    assert_same(&plain, &cluttered, "after other entities");
}

/// The checksum sees a game part: one order of another goal, and the
/// frames differ from the first one that answered it.
#[test]
fn the_checksum_finds_the_frame_where_two_games_part() {
    let plain = play(false, 1, Change::None);
    let changed = play(true, 1, Change::OneOrder);
    let parted = (0..plain.len())
        .find(|&frame| plain[frame].2 != changed[frame].2)
        .expect("the checksum never saw the other order");
    // The order is given before frame 30's update: frame 30 is the first
    // that can answer it.
    assert_eq!(parted, 30, "the checksums part on frame {parted}");
    assert_ne!(plain.last().unwrap().2, changed.last().unwrap().2);
}

#[test]
fn other_entity_ids_and_threads_give_the_same_game() {
    let plain = play(false, 1, Change::None);
    let cluttered = play(true, 3, Change::None);
    assert_same(&plain, &cluttered, "after other entities, on three threads");
}
