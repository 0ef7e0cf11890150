//! Crowd benchmark: movers ordered across each other so that they meet,
//! with local avoidance on, until all arrive or 3,000 frames pass.
//!
//! ```text
//! cargo run --release --example crowd -- [--map PATH] [--movers N] [--groups] [--spacing S] [--open] [--frames F] [--no-avoidance] [--separation-rounds R] [--threads T] [--stages] [--seed S] [--checksum] [--save-at F]
//! ```
//!
//! The map defaults to `bg512/AR0011SR` (a 512×512 Baldur's Gate map of
//! open ground, walls and gates) from `$FRONTIER_MOVINGAI_DIR` or
//! `../shared/movingai`, or a generated open 512×512 map with scattered
//! rocks when neither exists (or with `--open`, which measures how the cost
//! grows with the crowd where no wall or gate jams it). The movers stand in four squads, on every
//! other cell (`--spacing S`: every S-th), east, north, west and south of the most open spot of the
//! map's largest region; each squad is ordered across to the far side,
//! keeping its shape, so east and west pass through each other head-on,
//! north and south too, and all four cross at that spot at once. Each
//! mover is ordered alone to its own cell over there; with `--groups` each
//! squad gets one `GroupMove` instead. `--seed S` (not 0) moves each start
//! up to a quarter cell off its cell's centre: another crowd of the same
//! scenario, for flow averaged over several. Frames are a fixed 1/30 s, so every
//! run is the same.
//!
//! The last line is
//! `movers=N frames=F arrived=A avoidance_p50_ms=X avoidance_p99_ms=Y stopped=S max_overlap=Z overlap_p50=… overlap_p90=… overlap_p99=… … crowd_digest=D`:
//! the frames run, the movers that arrived, the time per frame (median and
//! 99th percentile) of the `Steering` and `Avoidance` sets (steering, taking
//! turns at passages, ORCA), the movers that stopped in a jam and told the
//! game so (`Arrival::Blocked`, after `CrowdSettings::stop_after`
//! without headway), and the largest
//! penetration between two movers' bodies over the whole run, as a
//! fraction of the smaller radius, with the median, 90th and 99th
//! percentiles of each frame's worst penetration, then `mean_arrival_frame=` and
//! `last_arrival_frame=` (over the movers that arrived) and
//! `step_all_under_way_p50_ms=`, the median of the whole crowd step
//! (`Steering`, `Avoidance` and `Move`) over the frames before the first
//! arrival; with `--stages`, the line before it gives the median of each
//! stage of the step (`CrowdSystems`) over those frames (three timing
//! systems more, which cost the frame a little themselves); last,
//! `crowd_digest=`, a hash of every mover's final position, state and
//! arrival frame, the same for any `--threads`. With `--checksum` the
//! plugin keeps its `FrontierChecksum` (every frame's results and every
//! mover's position, velocity and state hashed) and a last line gives
//! `checksum=`, its total over the run: what it costs is the difference
//! between a run with it and one without. `--no-avoidance` runs the same scenario with bodies passing
//! through each other (`CrowdSettings::enabled` off): how well the
//! crowd would flow if bodies cost nothing. `--separation-rounds R` sets
//! `CrowdSettings::separation_rounds` (32): what fewer rounds save and
//! how deep bodies then press into each other. `--threads T` gives the
//! compute task pool (and avoidance planning) T threads; the results are
//! the same for any T. `--save-at F` (feature `serialize`) saves the
//! plugin's state before frame F, spawns the map and movers again under
//! other ids in a new app, loads the state there and goes on in it,
//! printing the save's size and how long saving and loading took: the
//! run ends with the same `crowd_digest` as one without it. The line before it gives the same two
//! times over the frames before the first mover arrives, when every mover
//! is under way: what N movers walking cost, the figure to compare between
//! crowd sizes. (The median over the whole run also counts how many have
//! arrived by the middle of the run: with four times the movers the squads
//! stand further out, the trip is longer, and more are still under way at
//! the median frame.) The line before that gives the median of
//! each set alone, the `Move` set (the walk on the grid and the separation
//! of bodies) among them, and the median of steering plus avoidance per
//! mover not yet arrived (arrived movers sleep and cost next to nothing,
//! so this one stays flat when the cost grows linearly with the movers
//! under way). Before them, up to five movers that did not arrive are
//! shown with what they were doing, the ground round them and the movers
//! touching them.

// A benchmark's wall clock (`clippy.toml` keeps it out of the plugin):
// the examples run natively and time the plugin's systems.
#![allow(clippy::disallowed_methods)]

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_frontier::checksum::FrontierChecksum;
use bevy_frontier::core::Cell;
use bevy_frontier::movement::{
    Arrival, Arrived, Avoidance, CrowdSettings, CrowdSystems, Motion, Steering,
};
use bevy_frontier::prelude::*;

mod support;

use support::{main_region_cells, percentile};

/// Mover speed, cells per second.
const SPEED: f32 = 4.0;
/// Seconds per frame.
const FRAME: f64 = 1.0 / 30.0;

struct Options {
    map: Option<PathBuf>,
    movers: usize,
    groups: bool,
    frames: u32,
    spacing: u32,
    open: bool,
    /// Bodies pass through each other (`CrowdSettings::enabled` off).
    no_avoidance: bool,
    /// `CrowdSettings::separation_rounds` (`None`: the default).
    separation_rounds: Option<usize>,
    /// Threads of the compute task pool (and of avoidance planning).
    threads: Option<usize>,
    /// Time each stage of the crowd step alone.
    stages: bool,
    /// Keep the plugin's `FrontierChecksum` and print it.
    checksum: bool,
    /// Moves each start a little within its cell (0: none), so that
    /// several runs of one scenario give several crowds to average over.
    seed: u64,
    /// Before this frame, save the plugin's state and go on in a new app
    /// loaded from it (feature `serialize`).
    save_at: Option<u32>,
}

/// Where mover `i` stands off its cell's centre with `seed`: up to a
/// quarter cell each way, none with seed 0.
fn jitter(seed: u64, i: u64) -> Vec2 {
    if seed == 0 {
        return Vec2::ZERO;
    }
    let bytes = seed.to_le_bytes().into_iter().chain(i.to_le_bytes());
    let hash = support::fnv1a(support::FNV_START, bytes);
    let unit = |bits: u64| (bits & 0xffff) as f32 / 65535.0 - 0.5;
    0.5 * Vec2::new(unit(hash), unit(hash >> 16))
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        map: None,
        movers: 1000,
        groups: false,
        frames: 3000,
        spacing: 2,
        open: false,
        no_avoidance: false,
        separation_rounds: None,
        threads: None,
        stages: false,
        checksum: false,
        seed: 0,
        save_at: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--map" => options.map = Some(PathBuf::from(value()?)),
            "--movers" => options.movers = support::positive(&flag, &value()?)?,
            "--frames" => options.frames = support::positive(&flag, &value()?)?,
            "--groups" => options.groups = true,
            "--open" => options.open = true,
            "--no-avoidance" => options.no_avoidance = true,
            "--separation-rounds" => {
                let v = value()?;
                options.separation_rounds = Some(
                    v.parse()
                        .map_err(|_| format!("--separation-rounds {v:?} is not a whole number"))?,
                );
            }
            "--stages" => options.stages = true,
            "--checksum" => options.checksum = true,
            "--seed" => {
                let v = value()?;
                options.seed = v
                    .parse()
                    .map_err(|_| format!("--seed {v:?} is not a whole number"))?;
            }
            "--threads" => options.threads = Some(support::positive(&flag, &value()?)?),
            "--save-at" => options.save_at = Some(support::positive(&flag, &value()?)?),
            "--spacing" => {
                let v = value()?;
                options.spacing =
                    v.parse()
                        .ok()
                        .filter(|&n| (1..=16).contains(&n))
                        .ok_or(format!(
                            "--spacing {v:?} is not a number of cells from 1 to 16"
                        ))?;
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(options)
}

/// Each region cell's distance to the nearest wall or map edge, in cells
/// (8-neighbour steps), from a breadth-first pass out of the walls.
fn openness(grid: &NavGrid) -> Vec<u32> {
    let (w, h) = (grid.width() as i64, grid.height() as i64);
    let mut distance = vec![u32::MAX; grid.cell_count()];
    let mut queue = VecDeque::new();
    for (i, distance) in distance.iter_mut().enumerate() {
        let cell = grid.cell(i);
        let edge = cell.x == 0 || cell.y == 0 || cell.x + 1 == w as u32 || cell.y + 1 == h as u32;
        if !grid.is_walkable(cell) || edge {
            *distance = 0;
            queue.push_back(i);
        }
    }
    while let Some(i) = queue.pop_front() {
        let (x, y) = ((i as i64) % w, (i as i64) / w);
        for (dx, dy) in [
            (-1, -1),
            (0, -1),
            (1, -1),
            (-1, 0),
            (1, 0),
            (-1, 1),
            (0, 1),
            (1, 1),
        ] {
            let (nx, ny) = (x + dx, y + dy);
            if nx < 0 || ny < 0 || nx >= w || ny >= h {
                continue;
            }
            let j = (ny * w + nx) as usize;
            if distance[j] == u32::MAX {
                distance[j] = distance[i] + 1;
                queue.push_back(j);
            }
        }
    }
    distance
}

/// Four squads round `centre`, each ordered across to the opposite side,
/// keeping its shape: east and west pass through each other head-on, north
/// and south too, and all four cross at `centre` at once.
struct Crowd {
    centre: Cell,
    spread: u32,
    /// Each squad's move.
    shifts: [(i64, i64); 4],
    /// Start cell, goal cell and squad of each mover.
    movers: Vec<(Cell, Cell, usize)>,
}

/// `count` movers in four squads, every other cell of the region packed
/// breadth-first round points `spread` cells east, north, west and south
/// of the most open cell of the region.
fn crowd(grid: &NavGrid, region: &[Cell], count: usize, spacing: u32) -> Crowd {
    let open = openness(grid);
    let centre = *region
        .iter()
        .max_by_key(|c| {
            (
                open[grid.index(**c).unwrap_or(0)],
                std::cmp::Reverse((c.y, c.x)),
            )
        })
        .expect("a walkable cell");
    let in_region: HashSet<Cell> = region.iter().copied().collect();
    // Squads of n movers `spacing` cells apart are about √n·spacing cells
    // across; the four squads stand clear of each other.
    let per_squad = count.div_ceil(4);
    let spread = ((per_squad as f32).sqrt() * spacing as f32 + 12.0).round() as u32;
    let (cx, cy) = (centre.x as i64, centre.y as i64);
    let offsets = [(1, 0), (0, 1), (-1, 0), (0, -1)];
    let shifts = offsets.map(|(ox, oy)| (-2 * ox * spread as i64, -2 * oy * spread as i64));
    let across = |c: Cell, (dx, dy): (i64, i64)| -> Option<Cell> {
        let (x, y) = (c.x as i64 + dx, c.y as i64 + dy);
        let cell = Cell::new(u32::try_from(x).ok()?, u32::try_from(y).ok()?);
        in_region.contains(&cell).then_some(cell)
    };
    let mut taken = HashSet::new();
    let mut movers = Vec::new();
    for (squad, (ox, oy)) in offsets.into_iter().enumerate() {
        let size = count / 4 + usize::from(squad < count % 4);
        let want = (cx + ox * spread as i64, cy + oy * spread as i64);
        let Some(start) = grid.nearest_walkable(want, grid.region(centre)) else {
            continue;
        };
        let mut queue = VecDeque::from([start]);
        let mut seen = HashSet::from([start]);
        let mut placed = 0;
        while let Some(cell) = queue.pop_front() {
            if placed == size {
                break;
            }
            if in_region.contains(&cell)
                && let Some(goal) = across(cell, shifts[squad])
                && taken.insert(cell)
            {
                movers.push((cell, goal, squad));
                placed += 1;
            }
            let s = spacing as i64;
            for (dx, dy) in [
                (s, 0),
                (0, s),
                (-s, 0),
                (0, -s),
                (s, s),
                (-s, s),
                (s, -s),
                (-s, -s),
            ] {
                let (x, y) = (cell.x as i64 + dx, cell.y as i64 + dy);
                if x < 0 || y < 0 || x >= grid.width() as i64 || y >= grid.height() as i64 {
                    continue;
                }
                let next = Cell::new(x as u32, y as u32);
                // Squads do not spread further than their own size.
                let far = (x - start.x as i64).abs().max((y - start.y as i64).abs());
                if far as u32 <= spread && seen.insert(next) {
                    queue.push_back(next);
                }
            }
        }
    }
    Crowd {
        centre,
        spread,
        shifts,
        movers,
    }
}

/// The crowd step's stages timed (`CrowdSystems`): the whole is their sum.
const STAGES: [&str; 6] = ["orders", "prefer", "turns", "avoid", "walk", "separate"];

/// The sets of the earlier figures, each the stages it holds.
const LAPS: [(&str, std::ops::Range<usize>); 3] =
    [("steering", 0..3), ("avoidance", 3..4), ("move", 4..6)];

/// When the last timed stage ended this frame, and how long each took,
/// each frame.
#[derive(Resource, Default)]
struct Stopwatch {
    mark: Option<Instant>,
    stages: [Vec<f64>; 6],
}

fn start_clock(mut clock: ResMut<Stopwatch>) {
    clock.mark = Some(Instant::now());
}

/// Ends stage `STAGE`'s lap and starts the next.
fn lap<const STAGE: usize>(mut clock: ResMut<Stopwatch>) {
    if let Some(mark) = clock.mark {
        let now = Instant::now();
        clock.stages[STAGE].push((now - mark).as_secs_f64() * 1e3);
        clock.mark = Some(now);
    }
}

/// The largest penetration between two bodies this frame, as a fraction of
/// the smaller radius: pairs found through buckets as wide as the largest
/// body.
fn worst_overlap(bodies: &[(Vec2, f32)]) -> (f32, usize, usize) {
    let width = bodies.iter().map(|b| 2.0 * b.1).fold(1e-3, f32::max);
    let key = |p: Vec2| ((p.x / width).floor() as i32, (p.y / width).floor() as i32);
    let mut buckets: HashMap<(i32, i32), Vec<usize>> = HashMap::new();
    for (i, body) in bodies.iter().enumerate() {
        buckets.entry(key(body.0)).or_default().push(i);
    }
    let mut worst = (0.0f32, 0, 0);
    for (i, &(position, radius)) in bodies.iter().enumerate() {
        let (bx, by) = key(position);
        for y in by - 1..=by + 1 {
            for x in bx - 1..=bx + 1 {
                for &j in buckets.get(&(x, y)).into_iter().flatten() {
                    if j <= i {
                        continue;
                    }
                    let (other, other_radius) = bodies[j];
                    let depth = radius + other_radius - position.distance(other);
                    let fraction = depth / radius.min(other_radius).max(1e-6);
                    if fraction > worst.0 {
                        worst = (fraction, i, j);
                    }
                }
            }
        }
    }
    worst
}

/// Two movers as the worst overlap found them: where they stood and what
/// they were doing.
fn describe(app: &App, a: Entity, b: Entity) -> String {
    format!("{} and {}", one_mover(app, a), one_mover(app, b))
}

/// Where a mover stands and what it is doing.
fn one_mover(app: &App, unit: Entity) -> String {
    let at = app
        .world()
        .get::<Transform>(unit)
        .map_or(Vec3::ZERO, |t| t.translation);
    let motion = app.world().get::<Motion>(unit).copied().unwrap_or_default();
    let doing = match app.world().get::<Steering>(unit) {
        Some(Steering::Idle) => "standing",
        Some(Steering::Instinct { .. }) => "on instinct",
        Some(Steering::Following { .. }) => "following its path",
        None => "gone",
    };
    let arrived = app.world().get::<Arrived>(unit).map(|a| a.outcome);
    format!(
        "{unit} at ({:.2}, {:.2}) {doing}{}{} [{arrived:?}, rest {:?}, velocity {}]",
        at.x,
        at.y,
        if motion.pushing_through() {
            ", pushing through"
        } else {
            ""
        },
        if motion.waiting_turn() {
            ", waiting its turn"
        } else {
            ""
        },
        motion.rest,
        motion.velocity,
    )
}

/// A mover that has not arrived: where it stands, what it is doing, the
/// ground round it, top row first (`#` wall, `o` a cell another mover
/// stands on, `@` its own), and the movers within touching distance.
fn straggler(app: &App, grid: &NavGrid, movers: &[(Entity, Vec2)], unit: Entity) -> String {
    let at = movers
        .iter()
        .find(|m| m.0 == unit)
        .map_or(Vec2::ZERO, |m| m.1);
    let rounded = |p: Vec2| (p.x.round() as i64, p.y.round() as i64);
    let taken: HashSet<(i64, i64)> = movers.iter().map(|m| rounded(m.1)).collect();
    let (ux, uy) = rounded(at);
    let mut ground = String::new();
    for y in (uy - 4..=uy + 4).rev() {
        ground.push_str("\n    ");
        for x in ux - 6..=ux + 6 {
            let walkable = x >= 0 && y >= 0 && grid.is_walkable(Cell::new(x as u32, y as u32));
            ground.push(if (x, y) == (ux, uy) {
                '@'
            } else if taken.contains(&(x, y)) {
                'o'
            } else if walkable {
                '.'
            } else {
                '#'
            });
        }
    }
    let mut near = String::new();
    for &(other, position) in movers {
        if other != unit && position.distance(at) < 1.0 {
            let motion = app
                .world()
                .get::<Motion>(other)
                .copied()
                .unwrap_or_default();
            near.push_str(&format!(
                "\n    touching: {}, resting place {:?}",
                one_mover(app, other),
                motion.rest
            ));
        }
    }
    format!(
        "{} {:?} {:?}{ground}{near}",
        one_mover(app, unit),
        app.world().get::<Steering>(unit),
        app.world().get::<Motion>(unit),
    )
}

/// The benchmark's app: the plugins on fixed frames, the stopwatch's
/// systems, and the options' settings.
fn crowd_app(options: &Options) -> App {
    let mut app = App::new();
    // The compute pool gets what the I/O and async pools leave (one thread
    // on a 2-core machine) unless told how many.
    let mut pools = TaskPoolOptions::default();
    if let Some(threads) = options.threads {
        pools.compute.min_threads = threads;
        pools.compute.max_threads = threads;
    }
    app.add_plugins((
        MinimalPlugins.set(TaskPoolPlugin {
            task_pool_options: pools,
        }),
        FrontierPlugins::default(),
    ))
    .insert_resource(CrowdSettings {
        enabled: !options.no_avoidance,
        threads: options.threads.unwrap_or(0),
        separation_rounds: options
            .separation_rounds
            .unwrap_or(CrowdSettings::default().separation_rounds),
        ..default()
    })
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        FRAME,
    )))
    .init_resource::<Stopwatch>();
    if options.checksum {
        app.init_resource::<FrontierChecksum>();
    }
    app.add_systems(
        Update,
        (
            start_clock
                .after(FrontierSystems::Search)
                .before(CrowdSystems::Orders),
            lap::<2>
                .after(CrowdSystems::Turns)
                .before(CrowdSystems::Avoid),
            lap::<3>
                .after(CrowdSystems::Avoid)
                .before(CrowdSystems::Walk),
            lap::<5>
                .after(CrowdSystems::Separate)
                .before(FrontierSystems::Last),
        ),
    );
    // Each stage timed alone: three timing systems more, which cost the
    // frame a little themselves.
    if options.stages {
        app.add_systems(
            Update,
            (
                lap::<0>
                    .after(CrowdSystems::Orders)
                    .before(CrowdSystems::Prefer),
                lap::<1>
                    .after(CrowdSystems::Prefer)
                    .before(CrowdSystems::Turns),
                lap::<4>
                    .after(CrowdSystems::Walk)
                    .before(CrowdSystems::Separate),
            ),
        );
    }
    app
}

/// Saves the plugin's state, spawns the map and units again in a new app
/// (after some other entities, so they have other ids) and loads the state
/// into it: the run goes on there, and ends as it would have (the same
/// `crowd_digest`). Prints the save's size and how long saving and loading
/// took.
#[cfg(feature = "serialize")]
fn save_and_load(
    app: &mut App,
    options: &Options,
    map: Entity,
    units: &mut [Entity],
) -> Result<(), String> {
    use bevy::ecs::entity::EntityHashMap;
    use bevy::platform::time::Instant;
    use bevy_frontier::save::FrontierSave;

    let began = Instant::now();
    let save = FrontierSave::capture(app.world_mut()).map_err(|e| e.to_string())?;
    let saved_ms = began.elapsed().as_secs_f64() * 1e3;
    let bytes = save.to_bytes();
    let mut loaded = crowd_app(options);
    // Bevy's clock starts on the first frame, which lasts no time.
    loaded.update();
    let world = loaded.world_mut();
    for _ in 0..97 {
        world.spawn_empty();
    }
    let mut ids = EntityHashMap::default();
    ids.insert(map, world.spawn(Transform::default()).id());
    for unit in units.iter_mut().rev() {
        let new = world.spawn(Transform::default()).id();
        ids.insert(*unit, new);
        *unit = new;
    }
    let began = Instant::now();
    let save = FrontierSave::from_bytes(bytes);
    save.restore(world, &ids).map_err(|e| e.to_string())?;
    let loaded_ms = began.elapsed().as_secs_f64() * 1e3;
    let stopwatch = app.world_mut().remove_resource::<Stopwatch>();
    if let Some(stopwatch) = stopwatch {
        loaded.insert_resource(stopwatch);
    }
    println!(
        "save: {} bytes, saved in {saved_ms:.3} ms, loaded in {loaded_ms:.3} ms; going on in the loaded app",
        save.as_bytes().len()
    );
    *app = loaded;
    Ok(())
}

#[cfg(not(feature = "serialize"))]
fn save_and_load(_: &mut App, _: &Options, _: Entity, _: &mut [Entity]) -> Result<(), String> {
    Err("--save-at needs the `serialize` feature".to_string())
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!(
                "error: {message}\nusage: crowd [--map PATH] [--movers N] [--groups] [--spacing S] [--open] [--frames F] [--no-avoidance] [--threads T] [--stages] [--seed S] [--save-at F]"
            );
            return ExitCode::from(2);
        }
    };
    const GENERATED: &str = "generated 512x512, 1% rocks";
    let loaded = if options.open {
        Ok((
            support::scattered_walls(512, 512, 1, 11),
            GENERATED.to_string(),
        ))
    } else {
        support::load_grid(
            options.map.clone(),
            "maps/bg512/AR0011SR.map",
            GENERATED,
            || support::scattered_walls(512, 512, 1, 11),
            1,
        )
    };
    let (grid, name) = match loaded {
        Ok(loaded) => loaded,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    let region = main_region_cells(&grid);
    if region.is_empty() {
        eprintln!("error: the map has no walkable cell");
        return ExitCode::from(2);
    }
    let crowd = crowd(&grid, &region, options.movers, options.spacing);
    println!(
        "map: {name}; {} movers in 4 squads {} cells from {} (the most open cell), {}",
        crowd.movers.len(),
        crowd.spread,
        crowd.centre,
        if options.groups {
            "one group move per squad"
        } else {
            "each ordered across by itself"
        }
    );

    let mut app = crowd_app(&options);
    let map = app
        .world_mut()
        .spawn((grid.clone(), Transform::default()))
        .id();
    let mut units: Vec<Entity> = crowd
        .movers
        .iter()
        .enumerate()
        .map(|(i, &(start, ..))| {
            let position = Vec3::new(start.x as f32, start.y as f32, 0.0)
                + jitter(options.seed, i as u64).extend(0.0);
            app.world_mut()
                .spawn((
                    Mover { speed: SPEED },
                    Avoidance::default(),
                    Transform::from_translation(position),
                ))
                .id()
        })
        .collect();
    app.update();
    *app.world_mut().resource_mut::<Stopwatch>() = Stopwatch::default();
    let to_world = |c: Cell| Vec2::new(c.x as f32, c.y as f32);
    if options.groups {
        for (squad, &(dx, dy)) in crowd.shifts.iter().enumerate() {
            let members: Vec<(Entity, Vec2)> = crowd
                .movers
                .iter()
                .zip(&units)
                .filter(|((.., s), _)| *s == squad)
                .map(|((start, ..), &unit)| (unit, to_world(*start)))
                .collect();
            if members.is_empty() {
                continue;
            }
            let mean = members.iter().map(|m| m.1).sum::<Vec2>() / members.len() as f32;
            let goal = mean + Vec2::new(dx as f32, dy as f32);
            app.world_mut()
                .write_message(GroupMove::new(members.iter().map(|m| m.0), goal));
        }
    } else {
        for (&(_, goal, _), &unit) in crowd.movers.iter().zip(&units) {
            app.world_mut()
                .entity_mut(unit)
                .insert(PathRequest::new(to_world(goal)));
        }
    }

    let radius = 0.45;
    let mut max_overlap = 0.0f32;
    let mut worst_frame = 0;
    let mut worst_pair = String::new();
    let mut frames = 0;
    let mut arrived = 0;
    let mut stopped = 0;
    // Each frame's worst overlap.
    let mut overlaps = Vec::new();
    let mut bodies = Vec::with_capacity(units.len());
    // Movers not yet arrived at each frame's start.
    let mut under_way = Vec::new();
    // The frame each mover arrived in, and whether it stopped in a jam
    // instead (`Arrival::Blocked`).
    let mut arrivals: Vec<Option<u32>> = vec![None; units.len()];
    let mut blocked = vec![false; units.len()];
    while frames < options.frames {
        if options.save_at == Some(frames) {
            match save_and_load(&mut app, &options, map, &mut units) {
                Ok(()) => {}
                Err(message) => {
                    eprintln!("error: {message}");
                    return ExitCode::from(1);
                }
            }
        }
        under_way.push(units.len() - arrived);
        app.update();
        frames += 1;
        bodies.clear();
        bodies.extend(units.iter().map(|&unit| {
            let at = app
                .world()
                .get::<Transform>(unit)
                .map_or(Vec3::ZERO, |t| t.translation);
            (at.truncate(), radius)
        }));
        let (overlap, a, b) = worst_overlap(&bodies);
        overlaps.push(f64::from(overlap));
        if overlap > max_overlap {
            max_overlap = overlap;
            worst_frame = frames;
            worst_pair = describe(&app, units[a], units[b]);
        }
        for ((at, blocked), &unit) in arrivals.iter_mut().zip(&mut blocked).zip(&units) {
            if at.is_none()
                && let Some(end) = app.world().get::<Arrived>(unit)
            {
                *at = Some(frames);
                *blocked = end.outcome == Arrival::Blocked;
            }
        }
        stopped = blocked.iter().filter(|&&b| b).count();
        arrived = arrivals.iter().flatten().count() - stopped;
        if frames % 300 == 0 {
            println!(
                "frame {frames}: {arrived} arrived, {stopped} stopped, max overlap so far {max_overlap:.3} (frame {worst_frame})"
            );
        }
        if arrived + stopped == units.len() {
            break;
        }
    }
    let stragglers: Vec<Entity> = units
        .iter()
        .copied()
        .filter(|&unit| app.world().get::<Arrived>(unit).is_none())
        .collect();
    let movers: Vec<(Entity, Vec2)> = units
        .iter()
        .copied()
        .zip(bodies.iter().map(|b| b.0))
        .collect();
    for &unit in stragglers.iter().take(5) {
        println!("not arrived: {}", straggler(&app, &grid, &movers, unit));
    }
    let stages = std::mem::take(&mut app.world_mut().resource_mut::<Stopwatch>().stages);
    let frames_timed = stages[5].len();
    // A stage not timed alone is in the lap of the next one timed.
    let stage_ms = |stage: usize, frame: usize| stages[stage].get(frame).copied().unwrap_or(0.0);
    let laps: Vec<Vec<f64>> = LAPS
        .iter()
        .map(|(_, range)| {
            (0..frames_timed)
                .map(|frame| range.clone().map(|stage| stage_ms(stage, frame)).sum())
                .collect()
        })
        .collect();
    // What the issue's figures cover: steering plus avoidance. The move
    // (the walk on the grid and the separation of bodies) is shown apart.
    let mut frame_ms: Vec<f64> = (0..frames_timed)
        .map(|frame| laps[0][frame] + laps[1][frame])
        .collect();
    // The same per mover under way, in µs (see the module doc).
    let mut per_mover_us: Vec<f64> = frame_ms
        .iter()
        .zip(&under_way)
        .filter(|&(_, &n)| n > 0)
        .map(|(ms, &n)| 1e3 * ms / n as f64)
        .collect();
    per_mover_us.sort_by(f64::total_cmp);
    // The same per frame while none has arrived yet (see the module doc).
    let mut all_under_way: Vec<f64> = frame_ms
        .iter()
        .zip(&under_way)
        .filter(|&(_, &n)| n == units.len())
        .map(|(ms, _)| *ms)
        .collect();
    all_under_way.sort_by(f64::total_cmp);
    frame_ms.sort_by(f64::total_cmp);
    let medians: Vec<String> = LAPS
        .iter()
        .zip(&laps)
        .map(|((name, _), lap)| {
            let mut lap = lap.clone();
            lap.sort_by(f64::total_cmp);
            format!("{name} {:.3}", percentile(&lap, 50.0))
        })
        .collect();
    println!(
        "per frame: median ms {}, total {:.0} ms, worst frame {:.3} ms, median per mover under way {:.3} µs (steering + avoidance); worst overlap in frame {worst_frame}: {worst_pair}",
        medians.join(", "),
        frame_ms.iter().sum::<f64>(),
        frame_ms.last().copied().unwrap_or_default(),
        percentile(&per_mover_us, 50.0)
    );
    println!(
        "all {} under way (the {} frames before the first arrival): steering + avoidance median {:.3} ms, p99 {:.3} ms",
        units.len(),
        all_under_way.len(),
        percentile(&all_under_way, 50.0),
        percentile(&all_under_way, 99.0)
    );
    // The whole crowd step (steering, avoidance and the move) while all
    // are under way, and each stage of it.
    let all_frames: Vec<usize> = (0..frames_timed)
        .filter(|&frame| under_way.get(frame) == Some(&units.len()))
        .collect();
    let median_over_all = |value: &dyn Fn(usize) -> f64| {
        let mut values: Vec<f64> = all_frames.iter().map(|&frame| value(frame)).collect();
        values.sort_by(f64::total_cmp);
        percentile(&values, 50.0)
    };
    if options.stages {
        let stage_medians: Vec<String> = STAGES
            .iter()
            .enumerate()
            .map(|(stage, name)| {
                format!(
                    "{name} {:.3}",
                    median_over_all(&|frame| stage_ms(stage, frame))
                )
            })
            .collect();
        println!(
            "stages, median ms over the frames all are under way: {}",
            stage_medians.join(", ")
        );
    }
    let step_all = median_over_all(&|frame| (0..STAGES.len()).map(|s| stage_ms(s, frame)).sum());
    overlaps.sort_by(f64::total_cmp);
    // The frames the movers that got there arrived in (not those that
    // stopped, blocked).
    let arrived_at: Vec<u32> = arrivals
        .iter()
        .zip(&blocked)
        .filter(|&(_, &blocked)| !blocked)
        .filter_map(|(at, _)| *at)
        .collect();
    let mean_arrival =
        arrived_at.iter().map(|&f| f as f64).sum::<f64>() / arrived_at.len().max(1) as f64;
    println!(
        "movers={} frames={frames} arrived={arrived} avoidance_p50_ms={:.3} avoidance_p99_ms={:.3} stopped={stopped} max_overlap={:.3} overlap_p50={:.3} overlap_p90={:.3} overlap_p99={:.3} mean_arrival_frame={mean_arrival:.1} last_arrival_frame={} step_all_under_way_p50_ms={:.3} crowd_digest={:016x}",
        units.len(),
        percentile(&frame_ms, 50.0),
        percentile(&frame_ms, 99.0),
        max_overlap,
        percentile(&overlaps, 50.0),
        percentile(&overlaps, 90.0),
        percentile(&overlaps, 99.0),
        arrived_at.iter().max().copied().unwrap_or_default(),
        step_all,
        crowd_digest(&app, &units, &arrivals),
    );
    if let Some(checksum) = app.world().get_resource::<FrontierChecksum>() {
        println!("checksum={:016x}", checksum.total());
    }
    ExitCode::SUCCESS
}

/// Every mover's final position and state and the frame it arrived in,
/// in the order they were spawned, hashed (FNV-1a): two runs with the same
/// digest ended with every body in the same spot, bit for bit.
fn crowd_digest(app: &App, units: &[Entity], arrivals: &[Option<u32>]) -> u64 {
    let world = app.world();
    units
        .iter()
        .zip(arrivals)
        .fold(support::FNV_START, |hash, (&unit, arrival)| {
            let at = world
                .get::<Transform>(unit)
                .map_or(Vec3::NAN, |t| t.translation);
            let state = match (world.get::<Motion>(unit), world.get::<Steering>(unit)) {
                (Some(motion), Some(steering)) => motion.state(steering) as u8,
                _ => u8::MAX,
            };
            let bytes =
                at.x.to_bits()
                    .to_le_bytes()
                    .into_iter()
                    .chain(at.y.to_bits().to_le_bytes())
                    .chain([state])
                    .chain(arrival.unwrap_or(u32::MAX).to_le_bytes());
            support::fnv1a(hash, bytes)
        })
}
