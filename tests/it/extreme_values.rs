//! Numbers a game sets from its data files, at their extremes (NaN, ±∞,
//! 0, negative, `f32::MIN_POSITIVE`, 1e30): no frame hangs, nothing
//! panics, every order is answered and no body ends a frame over a wall.
//! [`games_of_odd_numbers_return_answer_and_keep_bodies_off_walls`] plays
//! seeded games with every number a game sets drawn from the extremes.
//! Each test here once failed: a mover of speed 1e30 hung the frame, an
//! avoidance radius of ∞ or 1e30 panicked inside a system, and one of
//! the odd time horizons walked a unit into a wall.

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_frontier::core::{Cell, MAX_UNIT_SIZE};
use bevy_frontier::movement::{Avoidance, CrowdSettings};
use bevy_frontier::pathfinding::PathfindingStats;
use bevy_frontier::prelude::*;

use crate::common::{Rng, app, position, random_grid, returns_within, seeds_from_env};
use crate::unit_sizes::footprint_fits;

/// The odd numbers a data file can hold.
pub const ODD: [f32; 10] = [
    f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    0.0,
    -0.0,
    -1.0,
    f32::MIN_POSITIVE,
    1e-30,
    1e30,
    f32::MAX,
];

/// A small maze: walls across it every sixth column, with a gap four
/// cells wide at the top or the bottom in turn; corridors five wide, so a
/// 3×3 vehicle fits.
fn maze() -> NavGrid {
    let (width, height) = (42, 40);
    let mut grid = NavGrid::new(width, height).unwrap();
    for (i, x) in (5..width - 1).step_by(6).enumerate() {
        let (from, to) = if i % 2 == 0 {
            (0, height - 5)
        } else {
            (4, height - 1)
        };
        grid.fill_rect(Cell::new(x, from), Cell::new(x, to), NavGrid::BLOCKED)
            .unwrap();
    }
    grid
}

/// The [`maze`] with `units` (speed, radius, size) spawned in its first
/// corridor, two abreast, each ordered to the far corner; the frames run
/// at 30 a second.
fn maze_with(units: &[(f32, Option<f32>, u8)], settings: CrowdSettings) -> (App, Vec<Entity>) {
    let mut app = app();
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
        1_000 / 30,
    )))
    .insert_resource(settings);
    let map = app.world_mut().spawn((maze(), Transform::default())).id();
    let mut spawned = Vec::new();
    for (i, &(speed, radius, size)) in units.iter().enumerate() {
        // In the first corridor (columns 0 to 4), two abreast.
        let at = Vec2::new([1.0, 3.0][i % 2], 1.0 + 3.0 * (i / 2) as f32);
        let mut unit = app.world_mut().spawn((
            Mover { speed },
            Footprint(size),
            Transform::from_translation(at.extend(0.0)),
            PathRequest::new(Cell::new(39, 2)).on_map(map),
        ));
        if let Some(radius) = radius {
            unit.insert(Avoidance::with_radius(radius));
        }
        spawned.push(unit.id());
    }
    (app, spawned)
}

/// Runs `frames` frames, checking after each that every unit stands at a
/// finite place where its footprint fits (its anchor in f64, as the
/// plugin works it out).
fn run_checked(app: &mut App, units: &[Entity], frames: u32, what: &str) {
    for frame in 0..frames {
        app.update();
        let world = app.world_mut();
        let grid = world.query::<&NavGrid>().single(world).unwrap().clone();
        for &unit in units {
            let at = position(app, unit);
            let size = app.world().get::<Footprint>(unit).map_or(1, |f| f.0);
            assert!(at.is_finite(), "{what}, frame {frame}: {unit} at {at}");
            let back = (size.clamp(1, MAX_UNIT_SIZE) as f64 - 1.0) / 2.0;
            let anchor = at.as_dvec2() - back + 0.5;
            let cell = Cell::new(anchor.x.floor() as u32, anchor.y.floor() as u32);
            assert!(
                footprint_fits(&grid, cell, size as u32),
                "{what}, frame {frame}: {unit} of size {size} at {at} stands over a wall"
            );
        }
    }
    for &unit in units {
        assert!(
            app.world().get::<PathResult>(unit).is_some(),
            "{what}: {unit} has no answer"
        );
    }
}

/// Movers of sizes 1 to 3 given every odd speed walk a small maze: each
/// frame returns (speed 1e30 once hung it: the walk took its stride in
/// quarter-cell steps), every unit stands where it fits, and a unit whose
/// speed is a huge number walks at the most a mover may, and arrives.
#[test]
fn odd_speeds_neither_hang_nor_leave_the_ground() {
    returns_within(Duration::from_secs(300), "odd speeds", || {
        let units: Vec<(f32, Option<f32>, u8)> = ODD
            .iter()
            .enumerate()
            .map(|(i, &speed)| (speed, None, 1 + (i % 3) as u8))
            .collect();
        let (mut app, spawned) = maze_with(&units, CrowdSettings::default());
        run_checked(&mut app, &spawned, 240, "odd speeds");
        for (&unit, &(speed, ..)) in spawned.iter().zip(&units) {
            let arrived = app.world().get::<Arrived>(unit).is_some();
            if speed >= 1e30 {
                assert!(arrived, "{unit} of speed {speed} has not arrived");
            }
            if speed.is_nan() || speed <= 1e-3 {
                assert!(!arrived, "{unit} of speed {speed} walked");
            }
        }
    });
}

/// Three movers with each odd avoidance radius (and three of each size
/// for the huge ones): no system panics (∞ and 1e30 did, in a clamp whose
/// bounds came out NaN), and no unit stands over a wall.
#[test]
fn odd_avoidance_radii_do_not_panic() {
    returns_within(Duration::from_secs(300), "odd radii", || {
        let mut units = Vec::new();
        for &radius in &ODD {
            for i in 0..3 {
                units.push((4.0, Some(radius), 1 + i as u8));
            }
        }
        let (mut app, spawned) = maze_with(&units[..12], CrowdSettings::default());
        run_checked(&mut app, &spawned, 120, "odd radii");
        let (mut app, spawned) = maze_with(&units[12..], CrowdSettings::default());
        run_checked(&mut app, &spawned, 120, "odd radii");
    });
}

/// Every field of `CrowdSettings` that is a number, set to each odd
/// value in turn, with a crowd of movers of sizes 1 to 3 in the maze: no
/// frame hangs, nothing panics, no unit ends a frame in a wall (one of the
/// odd time horizons walked one into a wall), and every order is answered.
#[test]
fn odd_avoidance_settings_keep_units_on_the_ground() {
    returns_within(Duration::from_secs(600), "odd avoidance settings", || {
        type Set = fn(&mut CrowdSettings, f32);
        let fields: [(&str, Set); 5] = [
            ("time_horizon", |s, v| s.time_horizon = v),
            ("give_up_after", |s, v| s.give_up_after = v),
            ("passage_turn", |s, v| s.passage_turn = v),
            ("stop_after", |s, v| s.stop_after = v),
            ("counts", |s, v| {
                let count = if v.is_nan() { 0 } else { v as usize };
                s.max_neighbours = count;
                s.separation_rounds = count;
                s.threads = count;
            }),
        ];
        let units: Vec<(f32, Option<f32>, u8)> = (0..12)
            .map(|i| (3.0 + i as f32 * 0.5, None, [1, 1, 2, 1, 3, 1][i % 6]))
            .collect();
        for (name, set) in fields {
            for &value in &ODD {
                let mut settings = CrowdSettings::default();
                set(&mut settings, value);
                let (mut app, spawned) = maze_with(&units, settings);
                run_checked(&mut app, &spawned, 90, &format!("{name} = {value}"));
            }
        }
    });
}

/// A number drawn from the odd ones, or (half the time) `usual`.
fn odd_or(rng: &mut Rng, usual: f32) -> f32 {
    if rng.below(2) == 0 {
        ODD[rng.below(ODD.len() as u32) as usize]
    } else {
        usual
    }
}

/// A count drawn from the extremes, or (half the time) `usual`.
fn count_or(rng: &mut Rng, usual: usize) -> usize {
    [0, 1, usual, usual, usual, usize::MAX][rng.below(6) as usize]
}

/// Settings of every field drawn from the extremes.
fn odd_pathfinding(rng: &mut Rng) -> PathfindingSettings {
    PathfindingSettings {
        nodes_per_frame: [0, 1, 4096, 4096, u32::MAX][rng.below(5) as usize],
        max_in_flight: count_or(rng, 16),
        max_expansions_per_request: [None, None, Some(0), Some(u32::MAX)][rng.below(4) as usize],
        chase_lookahead: [None, Some(0), Some(500), Some(u32::MAX)][rng.below(4) as usize],
        max_frame_time: [None, None, Some(Duration::ZERO), Some(Duration::MAX)]
            [rng.below(4) as usize],
        heuristic_weight: odd_or(rng, 1.0),
        jump_points: rng.below(2) == 0,
        aging_frames: [0, 1, 30, u32::MAX][rng.below(4) as usize],
        max_restarts: [0, 3, u32::MAX][rng.below(3) as usize],
        share_goals: rng.below(2) == 0,
        refine: rng.below(2) == 0,
        search_lanes: count_or(rng, 1),
        threads: count_or(rng, 0),
        graph_take_up: default(),
    }
}

fn odd_avoidance(rng: &mut Rng) -> CrowdSettings {
    CrowdSettings {
        enabled: rng.below(6) > 0,
        time_horizon: odd_or(rng, 0.75),
        max_neighbours: count_or(rng, 6),
        threads: count_or(rng, 0),
        give_up_after: odd_or(rng, 2.0),
        passage_turn: odd_or(rng, 4.0),
        stop_after: odd_or(rng, 30.0),
        separation_rounds: count_or(rng, 32),
    }
}

/// A game of movers on a random map with every number a game sets drawn
/// from the extremes now and then: speeds, body radii, footprints (0 and
/// too big among them), positions and goals (non-finite and far off the
/// map), group orders' parameters, and every field of both settings
/// resources. Checked each frame: it returns (the whole game runs under a
/// watchdog), it spends at most its budget, no system panics, and no body
/// that stood where it fits at the frame's start ends it where it does
/// not (walls go up anywhere, under bodies too: one walled in may walk
/// out). Then, with usual settings and no more orders, every request is
/// answered.
fn play_odd_game(seed: u64) {
    let mut rng = Rng::new(seed);
    let mut app = app();
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
        1_000 / 30,
    )));
    let (width, height) = (24 + rng.below(40), 24 + rng.below(40));
    let walls = 5 + rng.below(20);
    let max_cost = 1 + rng.below(4) as u8;
    let grid = random_grid(&mut rng, width, height, walls, max_cost);
    let map = app.world_mut().spawn((grid, Transform::default())).id();
    let mut units: Vec<Entity> = Vec::new();
    // In half the games, a unit that arrives is despawned at once, in an
    // observer, and another spawned in its stead somewhere else: movers
    // come and go in the middle of the crowd's step.
    let reborn = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    if rng.below(2) == 0 {
        let sink = reborn.clone();
        app.add_observer(move |arrived: On<UnitArrived>, mut commands: Commands| {
            commands.entity(arrived.entity).despawn();
            let mut sink = sink.lock().unwrap();
            let i = sink.len() as u32;
            let at = Vec2::new((i * 7 % width) as f32, (i * 5 % height) as f32);
            let unit = commands
                .spawn((
                    Mover { speed: 3.0 },
                    Footprint(1 + (i % 3) as u8),
                    Transform::from_translation(at.extend(0.0)),
                    PathRequest::new(Vec2::new((i * 11 % width) as f32, 1.0)),
                ))
                .id();
            sink.push(unit);
        });
    }
    let point = |rng: &mut Rng| match rng.below(12) {
        0 => Vec2::new(odd_or(rng, 3.0), odd_or(rng, 3.0)),
        1 => Vec2::new(-5.0 - rng.below(20) as f32, rng.below(height) as f32),
        _ => Vec2::new(
            rng.below(width * 10) as f32 / 10.0,
            rng.below(height * 10) as f32 / 10.0,
        ),
    };
    for frame in 0..300 {
        units.extend(reborn.lock().unwrap().drain(..));
        units.retain(|&unit| app.world().get_entity(unit).is_ok());
        for _ in 0..rng.below(3) {
            match rng.below(14) {
                0..=3 => {
                    let size =
                        [0, 1, 1, 1, 2, 2, 3, MAX_UNIT_SIZE + 1, u8::MAX][rng.below(9) as usize];
                    let mut unit = app.world_mut().spawn((
                        Mover {
                            speed: odd_or(&mut rng, 3.0),
                        },
                        Footprint(size),
                        Transform::from_translation(point(&mut rng).extend(0.0)),
                        PathRequest::new(point(&mut rng)),
                    ));
                    if rng.below(3) == 0 {
                        let radius = odd_or(&mut rng, 0.45);
                        unit.insert(Avoidance {
                            radius: Some(radius),
                            enabled: rng.below(4) > 0,
                        });
                    }
                    units.push(unit.id());
                }
                4 | 5 if !units.is_empty() => {
                    let unit = units[rng.below(units.len() as u32) as usize];
                    let goal = point(&mut rng);
                    let request = if rng.below(3) == 0 {
                        PathRequest::new(Cell::new(rng.below(width + 3), rng.below(height + 3)))
                    } else {
                        PathRequest::new(goal)
                    };
                    app.world_mut().entity_mut(unit).insert(request);
                }
                6 if !units.is_empty() => {
                    let unit = units[rng.below(units.len() as u32) as usize];
                    let speed = odd_or(&mut rng, 4.0);
                    app.world_mut().entity_mut(unit).insert(Mover { speed });
                }
                7 => {
                    let members: Vec<Entity> = (0..rng.below(10))
                        .filter_map(|_| units.get(rng.below(units.len().max(1) as u32) as usize))
                        .copied()
                        .collect();
                    let mut order = GroupMove::new(members, point(&mut rng));
                    order.priority = [i32::MIN, 0, i32::MAX][rng.below(3) as usize];
                    order.splice_steps = [0, 10, u32::MAX][rng.below(3) as usize];
                    order.max_spread = odd_or(&mut rng, 24.0);
                    order.columns = [0, 1, 3, u8::MAX][rng.below(4) as usize];
                    order.column_spacing = odd_or(&mut rng, 0.6);
                    app.world_mut().write_message(order);
                }
                8 if rng.below(3) == 0 => {
                    let settings = odd_pathfinding(&mut rng);
                    app.insert_resource(settings);
                }
                9 if rng.below(3) == 0 => {
                    let settings = odd_avoidance(&mut rng);
                    app.insert_resource(settings);
                }
                _ => {
                    let cell = Cell::new(rng.below(width), rng.below(height));
                    let cost = [NavGrid::BLOCKED, 1, 3][rng.below(3) as usize];
                    let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
                    grid.set_cost(cell, cost).unwrap();
                }
            }
        }
        let grid = app.world().get::<NavGrid>(map).unwrap().clone();
        let before: Vec<(Entity, Option<Cell>)> = units
            .iter()
            .map(|&unit| (unit, anchor_where_it_fits(&app, &grid, unit)))
            .collect();
        app.update();
        let world = app.world();
        let budget = world.resource::<PathfindingSettings>().nodes_per_frame;
        let stats = world.resource::<PathfindingStats>();
        let spent = stats.frame_expansions + stats.frame_reading;
        assert!(
            spent <= budget as u64,
            "seed {seed}, frame {frame}: {spent} > {budget}"
        );
        for (unit, fitted) in before {
            if fitted.is_none() || app.world().get_entity(unit).is_err() {
                continue;
            }
            let at = position(&app, unit);
            let size = app.world().get::<Footprint>(unit).map_or(1, |f| f.0);
            assert!(
                anchor_where_it_fits(&app, &grid, unit).is_some(),
                "seed {seed}, frame {frame}: {unit} of size {size} went from {:?} to {at}, \
                 over a wall",
                fitted
            );
        }
    }
    // No more orders, usual settings: every request is answered.
    app.insert_resource(PathfindingSettings::default());
    app.insert_resource(CrowdSettings::default());
    for _ in 0..2_000 {
        app.update();
        let world = app.world_mut();
        let mut waiting = world.query::<(Entity, Ref<PathRequest>, Option<Ref<PathResult>>)>();
        let tick = world.read_change_tick();
        let unanswered = waiting.iter(world).any(|(_, request, result)| {
            result.is_none_or(|r| {
                r.status == PathStatus::Provisional
                    || !r.last_changed().is_newer_than(request.last_changed(), tick)
            })
        });
        if !unanswered {
            return;
        }
    }
    panic!("seed {seed}: requests still unanswered 2,000 frames after the last order");
}

/// The anchor of `unit`'s footprint if it stands on the map, finite, of
/// a size a grid answers for, where it fits on `grid`.
fn anchor_where_it_fits(app: &App, grid: &NavGrid, unit: Entity) -> Option<Cell> {
    let at = position(app, unit);
    let size = app.world().get::<Footprint>(unit).map_or(1, |f| f.0);
    if !at.is_finite() || !(1..=MAX_UNIT_SIZE).contains(&size) {
        return None;
    }
    let anchor = at.as_dvec2() - (size as f64 - 1.0) / 2.0 + 0.5;
    let (x, y) = (anchor.x.floor(), anchor.y.floor());
    if x < 0.0 || y < 0.0 || x >= grid.width() as f64 || y >= grid.height() as f64 {
        return None;
    }
    let cell = Cell::new(x as u32, y as u32);
    footprint_fits(grid, cell, size as u32).then_some(cell)
}

/// Seeded games of odd numbers ([`play_odd_game`]).
/// `FRONTIER_ODD_SEEDS=N` (or `A..B`) runs more than CI's
/// (`FRONTIER_ODD_SEED=S` one).
#[test]
fn games_of_odd_numbers_return_answer_and_keep_bodies_off_walls() {
    returns_within(Duration::from_secs(1_200), "games of odd numbers", || {
        for seed in seeds_from_env("FRONTIER_ODD_SEEDS", "FRONTIER_ODD_SEED", 24) {
            play_odd_game(seed);
        }
    });
}
