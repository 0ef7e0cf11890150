//! Random chase games, checked every frame against what a game is told
//! of a chase or a follow: targets walk random routes across a river (foot
//! soldiers ford it, boats keep to it, hovercraft cross anywhere), are
//! teleported, carried off the map or destroyed; walls go up on the
//! chasers' ways; chasers are ordered again mid-chase, at another target
//! or a place, with ranges drawn from odd values (NaN, −1, ∞, 1e30, 0).
//!
//! Every frame, for every chaser:
//! - a chase that ended `InRange` ended within its range (its body's edge
//!   within the range and the plugin's leeway of its target's), one that
//!   ended `TargetLost` had lost its target (despawned, or off the map),
//!   and no chase or follow ended any other way (never `Blocked`: held
//!   back in a crowd, a chaser stands and tries again);
//! - an order still under way walks toward where its target stands, up to
//!   the documented repair bound ([`chase::REPAIR_SHARE`] of what it has
//!   left to walk, and [`chase::REPAIR_LEAST`] cells, plus the target's
//!   last step): or it is asking for the way there, walking straight at
//!   the target in sight, or standing (in range, or at the end of a path
//!   as near as its ground lets it);
//! - no new path is awaited for more than 200 frames, and more only on a
//!   budget that starves the chasers (every request is answered);
//! - no order ends twice.
//!
//! `FRONTIER_CHASE_SEEDS=N` (or `A..B`) runs more seeds,
//! `FRONTIER_CHASE_SEED=S` one; `FRONTIER_CHASE_FRAMES` sets the frames a
//! game (1,200).

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_frontier::core::Cell;
use bevy_frontier::movement::{Steering, chase};
use bevy_frontier::prelude::*;

use crate::chase::{Heard, listen};
use crate::common::{Rng, seeds_from_env, spawn_map, terrain_grid, threaded_app};

const SIZE: u32 = 40;
const OPEN: Terrain = Terrain(1);
const SHALLOW: Terrain = Terrain(2);
const DEEP: Terrain = Terrain(3);

/// Frames a chaser may wait for a path it asked for, on a budget of
/// `budget` expansions a frame: 200, and more on a budget that starves
/// two dozen chasers repairing their paths (a whole 40×40 map searched for
/// each on 94 expansions a frame takes most of that).
fn longest_wait(budget: u32) -> u32 {
    200 + 200_000 / budget
}

/// A chaser as the model keeps it.
struct Chaser {
    unit: Entity,
    target: Option<Entity>,
    range: f32,
    follow: bool,
    /// Frames it has been repairing in a row.
    waiting: u32,
    ended: bool,
}

/// One game; panics with the seed at the first broken promise.
fn game(seed: u64, frames: u32) -> [u32; 4] {
    // In range, lost, bounds checked, repairs.
    let mut tally = [0u32; 4];
    let mut rng = Rng::new(seed);
    let budget = 1 + rng.below(3000);
    // Chases searched to their end, or in legs (one cell's worth at the
    // least).
    let lookahead = [None, Some(1), Some(40), Some(500)][rng.below(4) as usize];
    let mut app = threaded_app(1);
    app.insert_resource(TimeUpdateStrategy::ManualDuration(
        std::time::Duration::from_millis(50),
    ))
    .insert_resource(PathfindingSettings {
        nodes_per_frame: budget,
        chase_lookahead: lookahead,
        ..default()
    })
    .init_resource::<Heard>()
    .add_systems(Update, listen.after(FrontierSystems::Last));
    let mut classes = MovementClasses::new();
    let foot = classes.add("foot", [(OPEN, 1), (SHALLOW, 3)]);
    let boat = classes.add("boat", [(SHALLOW, 2), (DEEP, 1)]);
    let hover = classes.add("hover", [(OPEN, 1), (SHALLOW, 1), (DEEP, 1)]);
    let grid = terrain_grid(SIZE, classes, |x, y| {
        match (x.abs_diff(SIZE / 2), rng.below(100)) {
            (0..=2, _) if y.abs_diff(10) > 2 => DEEP,
            (0..=3, _) => SHALLOW,
            (_, 0..=7) => Terrain::WALL,
            _ => OPEN,
        }
    });
    let map = spawn_map(&mut app, grid.clone());
    app.update();
    let stands = |grid: &NavGrid, class: ClassId, cell: Cell| match grid.terrain(cell) {
        Some(OPEN) => class != boat,
        Some(SHALLOW) => true,
        Some(DEEP) => class != foot,
        _ => false,
    };
    let pick = |rng: &mut Rng, grid: &NavGrid, class: ClassId| {
        for _ in 0..200 {
            let cell = Cell::new(rng.below(SIZE), rng.below(SIZE));
            if stands(grid, class, cell) {
                return Some(cell);
            }
        }
        None
    };
    let ranges = [0.0, 1.0, 2.5, 4.0, f32::NAN, -1.0, f32::INFINITY, 1e30];
    let mut targets: Vec<(Entity, ClassId)> = Vec::new();
    let mut chasers: Vec<Chaser> = Vec::new();
    let mut seen_arrived = 0;
    for frame in 0..frames {
        let now: NavGrid = app.world().get::<NavGrid>(map).unwrap().clone();
        // The game's moves.
        if targets.len() < 4 && rng.below(20) == 0 {
            let class = [foot, boat, hover][rng.below(3) as usize];
            if let Some(at) = pick(&mut rng, &now, class) {
                let target = app
                    .world_mut()
                    .spawn((
                        Mover {
                            speed: 0.5 + rng.below(3) as f32,
                        },
                        MovementClass(class),
                        Transform::from_xyz(at.x as f32, at.y as f32, 0.0),
                    ))
                    .id();
                targets.push((target, class));
            }
        }
        for &(target, class) in &targets {
            let idle = app
                .world()
                .get::<Steering>(target)
                .is_none_or(|s| matches!(s, Steering::Idle));
            if idle
                && rng.below(10) == 0
                && let Some(to) = pick(&mut rng, &now, class)
            {
                app.world_mut()
                    .entity_mut(target)
                    .insert(PathRequest::new(to));
            }
        }
        if !targets.is_empty() && chasers.len() < 24 && rng.below(6) == 0 {
            let (target, _) = targets[rng.below(targets.len() as u32) as usize];
            let class = [foot, boat, hover][rng.below(3) as usize];
            if let Some(at) = pick(&mut rng, &now, class) {
                let range = ranges[rng.below(ranges.len() as u32) as usize];
                let follow = rng.below(3) == 0;
                let request = if follow {
                    PathRequest::follow(target, range)
                } else {
                    PathRequest::chase(target, range)
                };
                let unit = app
                    .world_mut()
                    .spawn((
                        Mover {
                            speed: 1.0 + rng.below(4) as f32,
                        },
                        MovementClass(class),
                        Footprint(1 + rng.below(2) as u8),
                        Transform::from_xyz(at.x as f32, at.y as f32, 0.0),
                        request,
                    ))
                    .id();
                chasers.push(Chaser {
                    unit,
                    target: Some(target),
                    range,
                    follow,
                    waiting: 0,
                    ended: false,
                });
            }
        }
        match rng.below(200) {
            // A target teleported.
            0 if !targets.is_empty() => {
                let (target, class) = targets[rng.below(targets.len() as u32) as usize];
                if let Some(to) = pick(&mut rng, &now, class) {
                    app.world_mut()
                        .get_mut::<Transform>(target)
                        .unwrap()
                        .translation = Vec3::new(to.x as f32, to.y as f32, 0.0);
                }
            }
            // A target destroyed, or carried off the map.
            1 | 2 if !targets.is_empty() => {
                let (target, _) = targets.remove(rng.below(targets.len() as u32) as usize);
                if rng.below(2) == 0 {
                    app.world_mut().despawn(target);
                } else {
                    app.world_mut()
                        .get_mut::<Transform>(target)
                        .unwrap()
                        .translation = Vec3::new(-50.0, 10.0, 0.0);
                }
            }
            // A chaser ordered again: at another target, or to a place.
            3..=5 if !chasers.is_empty() => {
                let i = rng.below(chasers.len() as u32) as usize;
                let request = match targets.get(rng.below(targets.len() as u32 + 1) as usize) {
                    Some(&(target, _)) => {
                        chasers[i].target = Some(target);
                        PathRequest::chase(target, 2.0)
                    }
                    None => {
                        chasers[i].target = None;
                        PathRequest::new(Cell::new(rng.below(SIZE), rng.below(SIZE))).within(1.0)
                    }
                };
                chasers[i].range = request.range;
                chasers[i].follow = false;
                chasers[i].ended = false;
                app.world_mut().entity_mut(chasers[i].unit).insert(request);
            }
            // Walls on the way of a chaser.
            6..=20 if !chasers.is_empty() => {
                let unit = chasers[rng.below(chasers.len() as u32) as usize].unit;
                let at = app.world().get::<Transform>(unit).unwrap().translation;
                let next = match app.world().get::<Steering>(unit) {
                    Some(Steering::Following { route, .. }) => route.next_waypoint(),
                    _ => None,
                };
                if let Some(next) = next {
                    let mid = (at.truncate() + next) / 2.0;
                    let cell = Cell::new(mid.x.round() as u32, mid.y.round() as u32);
                    let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
                    let _ = grid.set_terrain(cell, Terrain::WALL);
                }
            }
            _ => {}
        }
        let before: Vec<Option<Vec2>> = chasers
            .iter()
            .map(|c| {
                let t = c.target?;
                Some(app.world().get::<Transform>(t)?.translation.truncate())
            })
            .collect();
        app.update();

        // The checks.
        let world = app.world();
        let heard = world.resource::<Heard>();
        let fresh = &heard.arrived[seen_arrived..];
        for arrived in fresh {
            let Some(c) = chasers.iter_mut().find(|c| c.unit == arrived.entity) else {
                continue;
            };
            let at = world
                .get::<Transform>(c.unit)
                .unwrap()
                .translation
                .truncate();
            let range = if c.range.is_finite() {
                c.range.max(0.0)
            } else {
                0.0
            };
            let why = format!(
                "seed {seed} frame {frame}: {:?} for {}",
                arrived.outcome, c.unit
            );
            assert!(!c.ended, "{why}: its order had ended already");
            match arrived.outcome {
                Arrival::InRange => {
                    tally[0] += 1;
                    assert!(!c.follow, "{why}: a follow ended in range");
                    let to = match c.target {
                        Some(target) => world
                            .get::<Transform>(target)
                            .map(|t| t.translation.truncate()),
                        None => None,
                    };
                    if let Some(to) = to {
                        let size = world.get::<Footprint>(c.unit).map_or(1, |f| f.0) as f32;
                        let gap = at.distance(to) - 0.45 * size - 0.45 - 1.0;
                        assert!(
                            gap <= range + chase::RANGE_LEEWAY,
                            "{why}: ended {gap} beyond range {range}"
                        );
                    }
                }
                Arrival::TargetLost => {
                    tally[1] += 1;
                    let target = c.target.expect("a place order lost no target");
                    let gone = world
                        .get::<Transform>(target)
                        .is_none_or(|t| t.translation.x < 0.0);
                    assert!(gone, "{why}: its target is still there");
                    assert!(
                        heard
                            .lost
                            .iter()
                            .any(|l| l.entity == c.unit && l.target == target),
                        "{why}: no TargetLost message"
                    );
                }
                Arrival::NearestReachable
                | Arrival::Reached
                | Arrival::StoppedShort
                | Arrival::Blocked
                    if c.target.is_none() => {}
                other => panic!("{why}: a chase ended {other:?}"),
            }
            c.ended = true;
        }
        seen_arrived = heard.arrived.len();
        for (c, before) in chasers.iter_mut().zip(&before) {
            let (Some(target), false) = (c.target, c.ended) else {
                continue;
            };
            let Some(pursuit) = world.get::<Pursuit>(c.unit) else {
                continue;
            };
            let why = format!("seed {seed} frame {frame}: chaser {} of {target}", c.unit);
            assert_eq!(pursuit.target, target, "{why}");
            c.waiting = if pursuit.repairing { c.waiting + 1 } else { 0 };
            tally[3] = tally[3].max(pursuit.searches);
            assert!(
                c.waiting <= longest_wait(budget),
                "{why}: no path for {} frames (budget {budget})",
                c.waiting
            );
            let steering = world.get::<Steering>(c.unit).unwrap();
            let Steering::Following { .. } = steering else {
                continue;
            };
            if pursuit.repairing || pursuit.in_sight {
                continue;
            }
            let (Some(to), Some(before)) = (
                world
                    .get::<Transform>(target)
                    .map(|t| t.translation.truncate()),
                *before,
            ) else {
                continue;
            };
            let at = world
                .get::<Transform>(c.unit)
                .unwrap()
                .translation
                .truncate();
            let left = at.distance(pursuit.planned_to);
            let bound = (chase::REPAIR_SHARE * (left + 1.0)).max(chase::REPAIR_LEAST)
                + before.distance(to)
                + 0.5;
            let drift = to.distance(pursuit.planned_to);
            tally[2] += 1;
            assert!(
                drift <= bound,
                "{why}: walks toward {} though its target stands at {to} ({drift} > {bound})",
                pursuit.planned_to
            );
        }
    }
    tally
}

#[test]
fn random_chase_games_keep_their_promises() {
    let frames = std::env::var("FRONTIER_CHASE_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1200);
    let mut tally = [0; 4];
    for seed in seeds_from_env("FRONTIER_CHASE_SEEDS", "FRONTIER_CHASE_SEED", 24) {
        let game = game(seed, frames);
        for (all, one) in tally.iter_mut().zip(game) {
            *all += one;
        }
    }
    eprintln!(
        "in range {}, lost {}, bounds checked {}, most searches a chase {}",
        tally[0], tally[1], tally[2], tally[3]
    );
    // The games played what they are meant to.
    assert!(
        tally[0] > 0 && tally[1] > 0 && tally[2] > 0 && tally[3] > 1,
        "{tally:?}"
    );
}
