//! Fixed references: three small scenes played for fixed frames end with
//! the [`FrontierChecksum`] written here, on every build (debug, release,
//! x86-64, wasm32) and every thread count. A change in behaviour, however
//! small, changes one of them: that change is then chosen, its new values
//! written here with a line in the CHANGELOG, never taken by accident.
//!
//! The scenes: searches on rough ground of three movement classes while
//! walls go up and fords are dug; a crowd crossing a bridge one unit wide
//! from both banks (turns at a passage, avoidance, separation); group
//! moves and units sent one by one to shared rally points.

use bevy::prelude::*;
use bevy_frontier::checksum::FrontierChecksum;
use bevy_frontier::core::Cell;
use bevy_frontier::movement::Arrived;
use bevy_frontier::prelude::*;

use crate::common::{Rng, crowd_app, position, spawn_map, spawn_mover, terrain_grid};

/// What the scenes gave when they were last changed on purpose.
const SEARCHES: Golden = Golden {
    frames: 160,
    total: 0x6f7e741d5fe9f9ee,
};
const PASSAGE: Golden = Golden {
    frames: 600,
    total: 0xd5692dc46dd1e7c0,
};
const GROUPS: Golden = Golden {
    frames: 1200,
    total: 0xbbafd80385078b22,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Golden {
    frames: u64,
    total: u64,
}

/// A headless app on fixed 1/30 s frames, hashing what it decides.
fn scene_app() -> App {
    let mut app = crowd_app();
    app.init_resource::<FrontierChecksum>();
    app
}

/// Plays `frames` frames, calling `each` before each, and returns what
/// the checksum says at the end.
fn play(app: &mut App, frames: u64, mut each: impl FnMut(&mut App, u64)) -> Golden {
    for frame in 0..frames {
        each(app, frame);
        app.update();
    }
    let checksum = app.world().resource::<FrontierChecksum>();
    Golden {
        frames: checksum.frames(),
        total: checksum.total(),
    }
}

/// Searches of three movement classes on a river map with woods, asked
/// a few at a time on a small budget (so they span frames), while the map
/// changes under them. Every one is answered, most with a path.
fn searches() -> Golden {
    const SIZE: u32 = 40;
    let (open, woods, shallow, deep) = (Terrain(1), Terrain(2), Terrain(3), Terrain(4));
    let mut app = scene_app();
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 300,
        ..default()
    });
    let mut classes = MovementClasses::new();
    let foot = classes.add("foot", [(open, 1), (woods, 3), (shallow, 4)]);
    let boat = classes.add("boat", [(shallow, 2), (deep, 1)]);
    let hover = classes.add("hover", [(open, 1), (woods, 1), (shallow, 1), (deep, 1)]);
    let mut rng = Rng::new(41);
    let grid = terrain_grid(SIZE, classes, |x, _| {
        match (x.abs_diff(SIZE / 2), rng.below(100)) {
            (0..=1, _) => deep,
            (2..=3, _) => shallow,
            (_, 0..=11) => Terrain::WALL,
            (_, r) if r < 40 => woods,
            _ => open,
        }
    });
    let map = spawn_map(&mut app, grid);
    let played = play(&mut app, SEARCHES.frames, |app, frame| {
        if frame % 5 == 0 && frame < 100 {
            for k in 0..4 {
                let class = [foot, boat, hover, foot][k];
                let start = Cell::new(rng.below(SIZE), rng.below(SIZE));
                let goal = Cell::new(rng.below(SIZE), rng.below(SIZE));
                app.world_mut().spawn((
                    Transform::from_xyz(start.x as f32, start.y as f32, 0.0),
                    MovementClass(class),
                    PathRequest::new(goal).with_priority(k as i32 % 2),
                ));
            }
        }
        if frame % 7 == 3 {
            let cell = Cell::new(rng.below(SIZE), rng.below(SIZE));
            let terrain = [Terrain::WALL, open, woods, shallow][rng.below(4) as usize];
            let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
            grid.set_terrain(cell, terrain).unwrap();
        }
    });
    // The scene does what it says: every request answered, most with a
    // path.
    let world = app.world_mut();
    let answers: Vec<Option<PathStatus>> = world
        .query_filtered::<Option<&PathResult>, With<PathRequest>>()
        .iter(world)
        .map(|r| r.map(|r| r.status))
        .collect();
    assert_eq!(answers.len(), 80);
    assert!(answers.iter().all(Option::is_some), "{answers:?}");
    let paths = answers.iter().flatten().filter(|s| s.has_path()).count();
    assert!(paths >= 40, "{paths} of 80 found a path: {answers:?}");
    played
}

/// Two crowds of twelve crossing a river on a bridge one cell wide from
/// both banks at once.
fn passage() -> Golden {
    let mut app = scene_app();
    let mut grid = NavGrid::new(60, 31).unwrap();
    grid.fill_rect(Cell::new(26, 0), Cell::new(33, 30), NavGrid::BLOCKED)
        .unwrap();
    grid.fill_rect(Cell::new(26, 15), Cell::new(33, 15), 1)
        .unwrap();
    spawn_map(&mut app, grid);
    let mut orders = Vec::new();
    for i in 0..12 {
        let (a, b) = (i % 4, i / 4);
        orders.push((
            Cell::new(4 + 2 * a, 11 + 2 * b),
            Cell::new(48 + 2 * a, 11 + 2 * b),
        ));
        orders.push((
            Cell::new(48 + 2 * a, 13 + 2 * b),
            Cell::new(4 + 2 * a, 13 + 2 * b),
        ));
    }
    let units: Vec<Entity> = orders
        .iter()
        .map(|&(start, _)| spawn_mover(&mut app, start, 4.0))
        .collect();
    let played = play(&mut app, PASSAGE.frames, |app, frame| {
        if frame == 1 {
            for (&unit, &(_, goal)) in units.iter().zip(&orders) {
                app.world_mut()
                    .entity_mut(unit)
                    .insert(PathRequest::new(goal));
            }
        }
    });
    // Units crossed both ways over the bridge.
    let crossed = |east: bool| {
        units
            .iter()
            .zip(&orders)
            .filter(|&(&unit, &(start, _))| {
                let x = position(&app, unit).x;
                (start.x < 26) == east && if east { x > 33.5 } else { x < 25.5 }
            })
            .count()
    };
    let (east, west) = (crossed(true), crossed(false));
    assert_eq!((east, west), (12, 12), "units that crossed east and west");
    played
}

/// Group moves across a walled field, and units sent one by one to two
/// rally points (shared searches), some while the others are under way.
fn groups() -> Golden {
    let mut app = scene_app();
    let mut grid = NavGrid::new(64, 48).unwrap();
    grid.fill_rect(Cell::new(20, 0), Cell::new(21, 36), NavGrid::BLOCKED)
        .unwrap();
    grid.fill_rect(Cell::new(42, 12), Cell::new(43, 47), NavGrid::BLOCKED)
        .unwrap();
    spawn_map(&mut app, grid);
    let squad = |app: &mut App, x0: u32, y0: u32, count: u32| -> Vec<Entity> {
        (0..count)
            .map(|i| spawn_mover(app, Cell::new(x0 + 2 * (i % 4), y0 + 2 * (i / 4)), 3.5))
            .collect()
    };
    let first = squad(&mut app, 4, 4, 12);
    let second = squad(&mut app, 54, 30, 12);
    let rallied = squad(&mut app, 4, 38, 8);
    let played = play(&mut app, GROUPS.frames, |app, frame| match frame {
        1 => {
            app.world_mut()
                .write_message(GroupMove::new(first.clone(), Cell::new(56, 6)));
            app.world_mut()
                .write_message(GroupMove::new(second.clone(), Cell::new(8, 20)));
        }
        2..=9 => {
            let unit = rallied[frame as usize - 2];
            let goal = if frame % 2 == 0 {
                Cell::new(60, 44)
            } else {
                Cell::new(32, 2)
            };
            app.world_mut()
                .entity_mut(unit)
                .insert(PathRequest::new(goal));
        }
        120 => {
            // The first group is sent back while still on its way.
            app.world_mut()
                .write_message(GroupMove::new(first.clone(), Cell::new(10, 44)));
        }
        _ => {}
    });
    // Every order ended: both groups (the first at the place it was sent
    // back to) and the rallied units arrived.
    let arrived = |units: &[Entity]| {
        units
            .iter()
            .filter(|&&unit| app.world().get::<Arrived>(unit).is_some())
            .count()
    };
    let (a, b, c) = (arrived(&first), arrived(&second), arrived(&rallied));
    assert_eq!(
        (a, b, c),
        (12, 12, 8),
        "units arrived: the groups', the rallied"
    );
    played
}

#[test]
fn three_scenes_play_as_their_fixed_references() {
    let played = [
        ("SEARCHES", searches(), SEARCHES),
        ("PASSAGE", passage(), PASSAGE),
        ("GROUPS", groups(), GROUPS),
    ];
    let parted: Vec<String> = played
        .iter()
        .filter(|(_, got, want)| got != want)
        .map(|(scene, got, want)| {
            format!(
                "{scene}: {} frames, total {:#018x} (fixed: {} frames, {:#018x})",
                got.frames, got.total, want.frames, want.total
            )
        })
        .collect();
    assert!(
        parted.is_empty(),
        "scenes that play differently from their fixed references:\n{}\nIf the change \
         in behaviour is meant, write the new totals in tests/it/golden.rs and say so in \
         the CHANGELOG.",
        parted.join("\n")
    );
}
