//! Chase benchmark: chasers sent at targets that walk random routes, three
//! ways in one run (the same map, units and target routes each time).
//!
//! ```text
//! cargo run --release --example chase -- [--map PATH] [--chasers N] [--targets T] [--range R] [--budget B] [--frames F] [--seed S] [--lookahead L|none] [--mode all|frontier|naive|oracle]
//! ```
//!
//! The map defaults to `random512-10-0` from `$FRONTIER_MOVINGAI_DIR` or
//! `../shared/movingai`. `N` chasers (1,000) and `T` targets (10) stand on
//! random cells of the map's largest region; chaser `i` chases target
//! `i mod T`. Targets walk at half the chasers' speed (2 cells a second
//! against 4) from one random cell to the next, each target drawing its
//! cells from a generator of its own, so the routes are the same in every
//! game. A chaser is caught up once its body's edge is within `R` cells
//! (3) of its target's, give or take the plugin's leeway
//! (`chase::RANGE_LEEWAY`); the run ends when every chaser has been, or
//! after `F` frames (15,000) of a fixed 1/30 s, counted from the orders
//! (the map's first frame, its regions labelled, runs before them). Every unit is a `Mover`
//! with avoidance, on a budget of `B` node expansions a frame (4,096);
//! chases search `L` expansions ahead (`PathfindingSettings::chase_lookahead`,
//! 500 by default; `none` searches each to its end).
//!
//! - `frontier`: each chaser gets `PathRequest::chase(target, R)` once;
//!   the plugin tracks the target, repairs the path and ends the order
//!   `Arrival::InRange`.
//! - `naive`: the way a game must play it without chases: a new
//!   `PathRequest` to where the target stands for each chaser whenever its
//!   target has entered a new cell, and the game's own check of the range
//!   each frame (the request removed once in range), on the same budget.
//! - `oracle`: the naive game with no budget (every search finishes in the
//!   frame it is asked for): every chaser always walks the optimal path to
//!   the cell its target stands on now.
//!
//! Each game prints its five slowest frames (`ms@frame`) and a line; the
//! last line is
//! `chasers=N caught=C catch_frame_mean=F oracle_catch_frame_mean=G expansions=E naive_expansions=M naive_expansions_same_frames=S budget=B max_frame_expansions=X p50_frame_ms=… p99_frame_ms=… max_frame_ms=… searches=S naive_searches=…`,
//! the frontier game's figures beside the two others': caught chasers,
//! the mean frame they were caught on, node expansions of the whole game
//! (`naive_expansions_same_frames`: the naive game's over as many frames
//! as the frontier game ran, for a naive game that never catches them all),
//! the most any frame spent, and the plugin's time per frame (its systems,
//! `FrontierSystems::First` to `Last`, wall clock), searches started.

// A benchmark's wall clock (`clippy.toml` keeps it out of the plugin):
// the examples run natively and time the plugin's systems.
#![allow(clippy::disallowed_methods)]

#[path = "support/mod.rs"]
mod support;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_frontier::core::Cell;
use bevy_frontier::movement::chase::RANGE_LEEWAY;
use bevy_frontier::prelude::*;
use support::{Lcg, main_region_cells, percentile};

/// Seconds a frame.
const FRAME: f64 = 1.0 / 30.0;
/// A chaser's speed, cells a second; targets walk half as fast.
const SPEED: f32 = 4.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Frontier,
    Naive,
    Oracle,
}

struct Options {
    map: Option<PathBuf>,
    chasers: usize,
    targets: usize,
    range: f32,
    budget: u32,
    frames: u32,
    seed: u64,
    lookahead: Option<u32>,
    modes: Vec<Mode>,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        map: None,
        chasers: 1000,
        targets: 10,
        range: 3.0,
        budget: 4096,
        frames: 15000,
        seed: 1,
        lookahead: Some(PathfindingSettings::CHASE_LOOKAHEAD),
        modes: vec![Mode::Frontier, Mode::Naive, Mode::Oracle],
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--map" => options.map = Some(PathBuf::from(value()?)),
            "--chasers" => options.chasers = support::positive(&flag, &value()?)?,
            "--targets" => options.targets = support::positive(&flag, &value()?)?,
            "--range" => {
                options.range = value()?
                    .parse()
                    .ok()
                    .filter(|r: &f32| r.is_finite() && *r >= 0.0)
                    .ok_or("--range needs a number of cells, 0 or more")?
            }
            "--budget" => options.budget = support::positive(&flag, &value()?)?,
            "--frames" => options.frames = support::positive(&flag, &value()?)?,
            "--lookahead" => {
                options.lookahead = match value()?.as_str() {
                    "none" => None,
                    v => Some(
                        v.parse()
                            .map_err(|_| "--lookahead needs a number or none")?,
                    ),
                }
            }
            "--seed" => options.seed = value()?.parse().map_err(|_| "--seed needs a number")?,
            "--mode" => {
                options.modes = match value()?.as_str() {
                    "all" => vec![Mode::Frontier, Mode::Naive, Mode::Oracle],
                    "frontier" => vec![Mode::Frontier],
                    "naive" => vec![Mode::Naive],
                    "oracle" => vec![Mode::Oracle],
                    other => return Err(format!("unknown mode {other}")),
                }
            }
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if options.targets > options.chasers {
        return Err("more targets than chasers".into());
    }
    Ok(options)
}

/// A chaser: its entity, its target's index, the cell it last asked for
/// (naive and oracle), the frame it was caught on.
type Chaser = (Entity, usize, Option<(i64, i64)>, Option<u32>);

/// The units of one game.
#[derive(Resource)]
struct Game {
    mode: Mode,
    range: f32,
    targets: Vec<Entity>,
    /// Per target, the generator of its next cells.
    routes: Vec<Lcg>,
    region: Vec<Cell>,
    chasers: Vec<Chaser>,
    frame: u32,
    expansions: u64,
    max_frame_expansions: u64,
    frame_ms: Vec<f64>,
    mark: Option<Instant>,
    /// Orders that ended `Arrival::Blocked`.
    blocked: u32,
    /// Expansions so far, after each frame.
    by_frame: Vec<u64>,
}

fn to_world(cell: Cell) -> Vec2 {
    Vec2::new(cell.x as f32, cell.y as f32)
}

fn cell_of(at: Vec2) -> (i64, i64) {
    ((at.x + 0.5).floor() as i64, (at.y + 0.5).floor() as i64)
}

fn start_clock(mut game: ResMut<Game>) {
    game.mark = Some(Instant::now());
}

/// After the plugin's systems: the frame's time and expansions.
fn stop_clock(mut game: ResMut<Game>, stats: Res<PathfindingStats>) {
    if let Some(mark) = game.mark.take() {
        let ms = mark.elapsed().as_secs_f64() * 1e3;
        game.frame_ms.push(ms);
    }
    game.expansions += stats.frame_expansions;
    let total = game.expansions;
    game.by_frame.push(total);
    game.max_frame_expansions = game.max_frame_expansions.max(stats.frame_expansions);
}

/// Before the plugin's systems: targets at the end of a route get the next
/// one; the naive and oracle games check the range and ask again.
fn play(
    mut game: ResMut<Game>,
    mut commands: Commands,
    arrived: Query<(), With<Arrived>>,
    positions: Query<&Transform>,
) {
    let game = &mut *game;
    game.frame += 1;
    for (i, &target) in game.targets.iter().enumerate() {
        if arrived.contains(target) {
            let next = game.region[game.routes[i].below(game.region.len())];
            commands
                .entity(target)
                .insert(PathRequest::new(to_world(next)));
        }
    }
    if game.mode == Mode::Frontier {
        return;
    }
    let reach = game.range + RANGE_LEEWAY + 0.9;
    for (chaser, target, asked, caught) in game.chasers.iter_mut() {
        if caught.is_some() {
            continue;
        }
        let (Ok(at), Ok(to)) = (positions.get(*chaser), positions.get(game.targets[*target]))
        else {
            continue;
        };
        let (at, to) = (at.translation.truncate(), to.translation.truncate());
        if at.distance(to) <= reach {
            *caught = Some(game.frame);
            commands.entity(*chaser).remove::<PathRequest>();
            continue;
        }
        let cell = cell_of(to);
        if *asked != Some(cell) {
            *asked = Some(cell);
            commands.entity(*chaser).insert(PathRequest::new(to));
        }
    }
}

/// The frontier game's catches, and its chasers stopped in a jam.
fn caught_up(mut game: ResMut<Game>, mut arrivals: MessageReader<UnitArrived>) {
    let frame = game.frame;
    for arrived in arrivals.read() {
        if arrived.outcome == Arrival::Blocked {
            game.blocked += 1;
        }
        if arrived.outcome != Arrival::InRange {
            continue;
        }
        if let Some(chaser) = game.chasers.iter_mut().find(|c| c.0 == arrived.entity) {
            chaser.3.get_or_insert(frame);
        }
    }
}

struct Outcome {
    caught: usize,
    catch_frame_mean: f64,
    expansions: u64,
    searches: u64,
    max_frame_expansions: u64,
    frame_ms: Vec<f64>,
    frames: u32,
    blocked: u32,
    by_frame: Vec<u64>,
}

fn run(grid: &NavGrid, region: &[Cell], options: &Options, mode: Mode) -> Outcome {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, FrontierPlugins::default()))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            FRAME,
        )))
        .insert_resource(PathfindingSettings {
            nodes_per_frame: if mode == Mode::Oracle {
                u32::MAX / 4
            } else {
                options.budget
            },
            max_expansions_per_request: None,
            chase_lookahead: options.lookahead,
            ..default()
        });
    app.world_mut().spawn((grid.clone(), Transform::default()));
    // The map's first frame (its regions labelled) before the game: the
    // frame times are the game's.
    app.update();
    let mut rng = Lcg(options.seed);
    let mut spawn = |app: &mut App, speed: f32| {
        let cell = region[rng.below(region.len())];
        app.world_mut()
            .spawn((
                Mover { speed },
                Avoidance::default(),
                Transform::from_translation(to_world(cell).extend(0.0)),
            ))
            .id()
    };
    let targets: Vec<Entity> = (0..options.targets)
        .map(|_| spawn(&mut app, SPEED / 2.0))
        .collect();
    let chasers: Vec<Chaser> = (0..options.chasers)
        .map(|i| (spawn(&mut app, SPEED), i % options.targets, None, None))
        .collect();
    let mut routes: Vec<Lcg> = (0..options.targets)
        .map(|i| Lcg(options.seed.wrapping_mul(7919).wrapping_add(i as u64 + 1)))
        .collect();
    for (i, &target) in targets.iter().enumerate() {
        let first = region[routes[i].below(region.len())];
        app.world_mut()
            .entity_mut(target)
            .insert(PathRequest::new(to_world(first)));
    }
    if mode == Mode::Frontier {
        for &(chaser, target, ..) in &chasers {
            app.world_mut()
                .entity_mut(chaser)
                .insert(PathRequest::chase(targets[target], options.range));
        }
    }
    app.insert_resource(Game {
        mode,
        range: options.range,
        targets,
        routes,
        region: region.to_vec(),
        chasers,
        frame: 0,
        expansions: 0,
        max_frame_expansions: 0,
        frame_ms: Vec::new(),
        mark: None,
        blocked: 0,
        by_frame: Vec::new(),
    })
    .add_systems(
        Update,
        (
            (play, start_clock).chain().before(FrontierSystems::First),
            (stop_clock, caught_up).after(FrontierSystems::Last),
        ),
    );
    for _ in 0..options.frames {
        app.update();
        let game = app.world().resource::<Game>();
        if game.chasers.iter().all(|c| c.3.is_some()) {
            break;
        }
    }
    let searches = app
        .world()
        .resource::<PathfindingStats>()
        .searches_started_total;
    let game = app.world().resource::<Game>();
    let catches: Vec<u32> = game.chasers.iter().filter_map(|c| c.3).collect();
    Outcome {
        caught: catches.len(),
        catch_frame_mean: catches.iter().map(|&f| f as f64).sum::<f64>()
            / catches.len().max(1) as f64,
        expansions: game.expansions,
        searches,
        max_frame_expansions: game.max_frame_expansions,
        frame_ms: game.frame_ms.clone(),
        frames: game.frame,
        blocked: game.blocked,
        by_frame: game.by_frame.clone(),
    }
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!(
                "error: {message}\nusage: chase [--map PATH] [--chasers N] [--targets T] [--range R] [--budget B] [--frames F] [--seed S] [--lookahead L|none] [--mode all|frontier|naive|oracle]"
            );
            return ExitCode::from(2);
        }
    };
    let (grid, name) = match support::benchmark_grid(options.map.clone(), 1) {
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
    println!(
        "map: {name}; {} chasers, {} targets, range {}, budget {}",
        options.chasers, options.targets, options.range, options.budget
    );
    let mut outcomes = Vec::new();
    for &mode in &options.modes {
        let outcome = run(&grid, &region, &options, mode);
        let mut slowest: Vec<(f64, usize)> = outcome
            .frame_ms
            .iter()
            .enumerate()
            .map(|(frame, &ms)| (ms, frame + 1))
            .collect();
        slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
        let named: Vec<String> = slowest
            .iter()
            .take(5)
            .map(|(ms, frame)| format!("{ms:.2}@{frame}"))
            .collect();
        println!("{mode:?}: slowest frames (ms@frame): {}", named.join(" "));
        let mut times = outcome.frame_ms.clone();
        times.sort_by(f64::total_cmp);
        println!(
            "{mode:?}: frames={} caught={} blocked={} catch_frame_mean={:.1} expansions={} searches={} max_frame_expansions={} p50_frame_ms={:.3} p99_frame_ms={:.3} max_frame_ms={:.3}",
            outcome.frames,
            outcome.caught,
            outcome.blocked,
            outcome.catch_frame_mean,
            outcome.expansions,
            outcome.searches,
            outcome.max_frame_expansions,
            percentile(&times, 50.0),
            percentile(&times, 99.0),
            times.last().copied().unwrap_or(0.0),
        );
        outcomes.push((mode, outcome, times));
    }
    let find = |mode| outcomes.iter().find(|o| o.0 == mode);
    if let (Some(ours), Some(naive), Some(oracle)) =
        (find(Mode::Frontier), find(Mode::Naive), find(Mode::Oracle))
    {
        let (_, o, times) = ours;
        println!(
            "chasers={} caught={} catch_frame_mean={:.1} oracle_catch_frame_mean={:.1} expansions={} naive_expansions={} naive_expansions_same_frames={} budget={} max_frame_expansions={} p50_frame_ms={:.3} p99_frame_ms={:.3} max_frame_ms={:.3} searches={} naive_searches={} naive_caught={} naive_catch_frame_mean={:.1}",
            options.chasers,
            o.caught,
            o.catch_frame_mean,
            oracle.1.catch_frame_mean,
            o.expansions,
            naive.1.expansions,
            naive
                .1
                .by_frame
                .get(o.frames.saturating_sub(1) as usize)
                .or(naive.1.by_frame.last())
                .copied()
                .unwrap_or(0),
            options.budget,
            o.max_frame_expansions,
            percentile(times, 50.0),
            percentile(times, 99.0),
            times.last().copied().unwrap_or(0.0),
            o.searches,
            naive.1.searches,
            naive.1.caught,
            naive.1.catch_frame_mean,
        );
    }
    ExitCode::SUCCESS
}
