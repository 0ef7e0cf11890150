//! The guide's scene (`docs/guide.md`), built from the guide alone: a
//! headless game of 209 units on a 128×128 map of open ground, a river
//! and a ford. Foot soldiers with orders of their own, a squad of 30 moved
//! as a group, boats on the river (one sent ashore), one soldier sent into
//! a sealed fort, a wall raised across the field mid-game; every outcome
//! read from the plugin's messages.
//!
//! ```text
//! cargo run --release --example guide -- [--budget N] [--frames N] [--checksums]
//! ```
//!
//! It prints one line of figures: the frame by which every unit had its
//! first path and its final one, how the orders ended, how many requests
//! the plugin took in and searches it began (`PathfindingStats`), the
//! longest frame, and the frame after the wall went up, whole and its
//! searching part (the guide's budget table comes from runs of it). It exits with
//! an error if an order went unanswered or ended otherwise than the scene
//! expects, so CI runs it. With `--checksums` it also prints every
//! frame's `FrontierChecksum` (`frame=N checksum=…`) and their total: CI
//! compares them, frame by frame, between the native build and a wasm32
//! one run under Node.
#![allow(clippy::disallowed_methods)] // wall-clock frame times, printed only

use std::time::{Duration, Instant};

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_frontier::checksum::FrontierChecksum;
use bevy_frontier::prelude::*;

const SIZE: u32 = 128;
const OPEN: Terrain = Terrain(1);
const FORD: Terrain = Terrain(2);
const DEEP: Terrain = Terrain(3);

/// The game's classes, as registering them named them.
#[derive(Resource, Clone, Copy)]
struct Classes {
    foot: ClassId,
    boat: ClassId,
}

/// What the game heard, counted from the plugin's messages.
#[derive(Resource, Default, Debug)]
struct Heard {
    first_path: Vec<(Entity, u32)>,
    final_path: Vec<(Entity, u32)>,
    failed: Vec<(Entity, PathStatus)>,
    arrived: Vec<(Entity, Arrival)>,
    frame: u32,
}

fn listen(
    mut ready: MessageReader<PathReady>,
    mut failed: MessageReader<PathFailed>,
    mut arrived: MessageReader<UnitArrived>,
    units: Query<(), With<Mover>>,
    mut heard: ResMut<Heard>,
) {
    heard.frame += 1;
    let frame = heard.frame;
    for ready in ready.read() {
        // The group's own entity hears of its shared search too.
        if !units.contains(ready.entity) {
            continue;
        }
        if !heard.first_path.iter().any(|&(e, _)| e == ready.entity) {
            heard.first_path.push((ready.entity, frame));
        }
        if ready.is_final() {
            heard.final_path.push((ready.entity, frame));
        }
    }
    heard
        .failed
        .extend(failed.read().map(|f| (f.entity, f.status)));
    heard
        .arrived
        .extend(arrived.read().map(|a| (a.entity, a.outcome)));
}

fn map() -> (NavGrid, Classes) {
    let mut classes = MovementClasses::new();
    let foot = classes.add("foot", [(OPEN, 1), (FORD, 3)]);
    let boat = classes.add("boat", [(FORD, 2), (DEEP, 1)]);
    let mut grid = NavGrid::new(SIZE, SIZE)
        .unwrap()
        .with_classes(classes)
        .unwrap();
    let cell = Cell::new;
    // A river down the middle, a ford across it, a sealed fort.
    grid.fill_terrain(cell(60, 0), cell(67, SIZE - 1), DEEP)
        .unwrap();
    grid.fill_terrain(cell(60, 60), cell(67, 67), FORD).unwrap();
    grid.fill_terrain(cell(100, 100), cell(110, 110), Terrain::WALL)
        .unwrap();
    grid.fill_terrain(cell(101, 101), cell(109, 109), OPEN)
        .unwrap();
    (grid, Classes { foot, boat })
}

/// A small deterministic generator, so every run is the same game.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u32) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as u32
    }
}

/// A unit of `class` walking `speed` cells a second, standing on `start`.
fn unit(class: ClassId, speed: f32, start: Cell) -> (Mover, MovementClass, Transform) {
    let at = Transform::from_xyz(start.x as f32, start.y as f32, 0.0);
    (Mover { speed }, MovementClass(class), at)
}

/// Spawns a unit of `class` on `start`, ordered to `goal`.
fn ordered(world: &mut World, class: ClassId, speed: f32, start: Cell, goal: Cell) -> Entity {
    let request = PathRequest::new(goal);
    world.spawn((unit(class, speed, start), request)).id()
}

/// Spawns the units and gives their orders; returns the soldier sent into
/// the fort and the boat sent ashore, whose orders end short.
fn spawn_units(world: &mut World, classes: Classes) -> (Vec<Entity>, Entity, Entity) {
    let mut rng = Lcg(2026);
    let mut units = Vec::new();
    let land = |rng: &mut Lcg| loop {
        let cell = Cell::new(rng.below(SIZE), rng.below(SIZE));
        let in_fort = (100..=110).contains(&cell.x) && (100..=110).contains(&cell.y);
        if !(58..=69).contains(&cell.x) && !in_fort {
            return cell;
        }
    };
    // 157 soldiers with orders of their own, across the field.
    for _ in 0..157 {
        let (start, goal) = (land(&mut rng), land(&mut rng));
        units.push(ordered(world, classes.foot, 4.0, start, goal));
    }
    // One sent into the sealed fort.
    let fort = ordered(
        world,
        classes.foot,
        4.0,
        Cell::new(90, 90),
        Cell::new(105, 105),
    );
    units.push(fort);
    // 20 boats up and down the river, one of them sent ashore.
    for i in 0..20 {
        let x = 61 + i % 6;
        let (from, to) = if i % 2 == 0 {
            (2 + i, 120 - i)
        } else {
            (120 - i, 2 + i)
        };
        units.push(ordered(
            world,
            classes.boat,
            3.0,
            Cell::new(x, from),
            Cell::new(x, to),
        ));
    }
    let ashore = ordered(
        world,
        classes.boat,
        3.0,
        Cell::new(63, 30),
        Cell::new(40, 30),
    );
    units.push(ashore);
    // A squad of 30 soldiers, ordered as one group across the ford.
    let squad: Vec<Entity> = (0..30)
        .map(|i| {
            let cell = Cell::new(20 + i % 6, 60 + i / 6);
            world.spawn(unit(classes.foot, 4.0, cell)).id()
        })
        .collect();
    units.extend(&squad);
    world.write_message(GroupMove::new(squad, Cell::new(100, 64)));
    (units, fort, ashore)
}

fn main() {
    let mut budget = 4096;
    let mut frames = 3000;
    let mut checksums = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--checksums" {
            checksums = true;
            continue;
        }
        let value = args.next().and_then(|v| v.parse().ok());
        match (arg.as_str(), value) {
            ("--budget", Some(v)) => budget = v,
            ("--frames", Some(v)) => frames = v,
            _ => {
                eprintln!("usage: guide [--budget N] [--frames N] [--checksums]");
                std::process::exit(2);
            }
        }
    }
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, FrontierPlugins::default()))
        // A fixed clock: 60 frames to a game second, however fast the
        // machine runs them.
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )))
        .insert_resource(PathfindingSettings {
            nodes_per_frame: budget,
            ..default()
        })
        .init_resource::<Heard>()
        .add_systems(Update, listen.after(FrontierSystems::Last));
    if checksums {
        app.init_resource::<FrontierChecksum>();
    }
    let (grid, classes) = map();
    app.world_mut().spawn((grid, Transform::default()));
    app.insert_resource(classes);
    let (units, fort, ashore) = spawn_units(app.world_mut(), classes);
    let mut longest = Duration::ZERO;
    // The frame after the wall went up: every unit whose route it cut asks
    // again at once (the budget bounds it, bursts included).
    let (mut wall_frame, mut wall_searching) = (Duration::ZERO, Duration::ZERO);
    let mut ran = 0;
    for frame in 1..=frames {
        if frame == 200 {
            // A wall raised across the field, west of the river.
            let mut grids = app.world_mut().query::<&mut NavGrid>();
            let mut grid = grids.single_mut(app.world_mut()).unwrap();
            grid.fill_terrain(Cell::new(30, 20), Cell::new(30, 100), Terrain::WALL)
                .unwrap();
        }
        let began = Instant::now();
        app.update();
        longest = longest.max(began.elapsed());
        if frame == 201 {
            wall_frame = began.elapsed();
            wall_searching = app.world().resource::<PathfindingStats>().frame_time;
        }
        ran = frame;
        if let Some(checksum) = app.world().get_resource::<FrontierChecksum>() {
            println!("frame={frame} checksum={:016x}", checksum.frame());
        }
        if app.world().resource::<Heard>().arrived.len() == units.len() {
            break;
        }
    }
    let stats = app.world().resource::<PathfindingStats>();
    let (requests, searches) = (stats.requests_total, stats.searches_started_total);
    let heard = app.world().resource::<Heard>();
    let last = |list: &[(Entity, u32)]| list.iter().map(|&(_, f)| f).max().unwrap_or(0);
    let count = |outcome: Arrival| heard.arrived.iter().filter(|a| a.1 == outcome).count();
    println!(
        "budget={budget} units={} frames={ran} last_first_path={} last_final_path={} \
         arrived={} reached={} nearest_reachable={} stopped_short={} failed={} \
         requests={requests} searches={searches} longest_frame_ms={:.2} \
         after_wall_frame_ms={:.2} after_wall_searching_ms={:.2}",
        units.len(),
        last(&heard.first_path),
        last(&heard.final_path),
        heard.arrived.len(),
        count(Arrival::Reached),
        count(Arrival::NearestReachable),
        count(Arrival::StoppedShort),
        heard.failed.len(),
        longest.as_secs_f64() * 1e3,
        wall_frame.as_secs_f64() * 1e3,
        wall_searching.as_secs_f64() * 1e3,
    );
    if let Some(checksum) = app.world().get_resource::<FrontierChecksum>() {
        println!("checksum={:016x}", checksum.total());
    }
    if std::env::var_os("GUIDE_DEBUG").is_some() {
        for &unit in &units {
            if !heard.arrived.iter().any(|a| a.0 == unit) {
                let world = app.world();
                eprintln!(
                    "{unit}: {:?} at {} {:?} {:?}",
                    world.get::<MovementClass>(unit),
                    world.get::<Transform>(unit).unwrap().translation.truncate(),
                    world
                        .get::<bevy_frontier::movement::Steering>(unit)
                        .map(|s| s.goal()),
                    world.get::<PathResult>(unit).map(|r| r.status),
                );
            }
        }
    }
    let outcome = |unit| heard.arrived.iter().find(|a| a.0 == unit).map(|a| a.1);
    let mut wrong = Vec::new();
    // Every order answered. (Not every unit arrives in time: a few jam
    // at the ford and round the wall's end: jams are the crowd's open work.)
    if heard.first_path.len() != units.len() {
        wrong.push(format!(
            "{} of {} had a path",
            heard.first_path.len(),
            units.len()
        ));
    }
    for (unit, name) in [
        (fort, "the soldier sent into the fort"),
        (ashore, "the boat sent ashore"),
    ] {
        if outcome(unit) != Some(Arrival::NearestReachable) {
            wrong.push(format!("{name} ended {:?}", outcome(unit)));
        }
    }
    if !heard.failed.is_empty() {
        wrong.push(format!("orders failed: {:?}", heard.failed));
    }
    if !wrong.is_empty() {
        eprintln!("error: {}", wrong.join("; "));
        std::process::exit(1);
    }
}
