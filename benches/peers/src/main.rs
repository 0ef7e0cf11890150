//! bevy_frontier against its peers on the same workloads: 1,000 requests
//! between random walkable cells of one region (a fixed seed) on
//! random512-10-0, AR0011SR and Berlin_0_1024, each with and without the
//! stress test's terrain (a fifth of the walkable cells at cost 4).
//!
//! - `pathfinding`: the `pathfinding` crate's A* with bevy_frontier's move
//!   rules (8 neighbours, no corner cut, a move costs the entered cell's
//!   cost times 1 or √2), all requests in one go. Its paths are the
//!   optimum every other path is measured against.
//! - `northstar`: bevy_northstar 0.7's grid (chunks of 16, 8 neighbours,
//!   `NoCornerCuttingFlat`), built once, then every request with
//!   `PathfindMode::Coarse` (its quick route) and `PathfindMode::Refined`
//!   (its final path), all in one go.
//! - `frontier`: bevy_frontier's plugin in a headless app with its default
//!   settings (4,096 expansions a frame): every request made in one frame,
//!   frames run until every unit has a route (its first answer) and until
//!   every final path.
//!
//! On each map with terrain, once every final path is held, 100 walls go
//! up at random cells of the region, one a frame (`...+terrain+walls`):
//! bevy_northstar rebuilds its grid after each (only the chunks the wall
//! touched) and finds new refined paths for the requests whose path it
//! cut; bevy_frontier's units ask again when their path is flagged (what a
//! game without `Mover` does on `PathInvalidated`). The line gives frames
//! and CPU from the first wall until every request holds a legal final
//! path again, and the final paths' cost over the optimum on the walled
//! map.
//!
//! Per workload and peer, one line: frames and CPU time (process CPU, all
//! threads) until every unit has a route and until every final path; the
//! mean and worst cost of the routes and final paths over the optimum
//! (under bevy_frontier's move costs); and the paths that break the move
//! rules (a wall, a cut corner, a gap). A peer that answers every request
//! in one call has "frames" 1: it holds that frame for all of its CPU time.
//!
//! Run from the repository: `cargo run --release --manifest-path
//! benches/peers/Cargo.toml > peers.txt`, then `python3
//! tools/benchmark_charts.py peers.txt docs/benchmarks` for the charts.
//! `--requests N` and `--maps a,b` shorten a run.

#[path = "../../../examples/support/mod.rs"]
#[allow(dead_code)]
mod support;

use std::path::PathBuf;
use std::time::Duration;

use bevy::prelude::*;
use bevy_frontier::core::moves::{DIAGONAL, MOVE_DELTAS, ORTHOGONAL, octile};
use bevy_frontier::core::{Cell, NavGrid};
use bevy_frontier::prelude::*;
use bevy_northstar::prelude::*;

/// Process CPU time so far, all threads (user + system), from
/// `/proc/self/stat`.
fn cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces) in parentheses.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<u64>().ok())
        .sum();
    // Linux reports clock ticks of 1/100 s.
    Duration::from_millis(ticks * 10)
}

/// One workload: the grid, the requests, the optimum of each, and the
/// walls put up once the paths are held, with the grid they leave and the
/// optimum there.
#[derive(Clone, Copy)]
struct Workload<'a> {
    grid: &'a NavGrid,
    pairs: &'a [(Cell, Cell)],
    best: &'a [f64],
    walls: &'a [Cell],
    last: &'a NavGrid,
    last_best: &'a [f64],
}

/// What one peer did on one workload. Every CPU time counts from before
/// the peer saw the map, its build included.
#[derive(Default, Clone)]
struct Outcome {
    /// CPU to take up the map before any request: northstar's grid build,
    /// frontier's first frame with the map (region labels; its coarse
    /// graph is built on worker threads once requests come, inside the
    /// routed time).
    build_cpu: Duration,
    /// Until every unit has its first answer, whatever it is (for
    /// frontier, often a first stretch of a quick route).
    routed_frames: u64,
    routed_cpu: Duration,
    /// Until every unit has a route to its goal (not a first stretch).
    whole_frames: u64,
    whole_cpu: Duration,
    final_frames: u64,
    final_cpu: Duration,
    /// Per request: its first whole route's cost over the optimum, `None`
    /// without a legal one.
    route_ratios: Vec<Option<f64>>,
    /// Per request: its final path's cost over the optimum, `None` without
    /// a legal one.
    final_ratios: Vec<Option<f64>>,
    illegal: usize,
    missing: usize,
}

/// What one peer did while walls went up under the paths it held: frames
/// and CPU from the first wall until every request holds a legal final
/// path again, the final paths' cost over the optimum on the last grid,
/// and the paths still breaking the move rules there.
#[derive(Default, Clone)]
struct Toggled {
    frames: u64,
    cpu: Duration,
    ratios: Vec<Option<f64>>,
    illegal: usize,
}

/// The cost of walking `cells` under bevy_frontier's rules, or `None` if
/// they break them.
fn walk_cost(grid: &NavGrid, cells: &[Cell]) -> Option<f64> {
    let class = grid.size_class(1);
    if cells.is_empty() || !class.can_walk(cells) {
        return None;
    }
    Some(
        cells
            .windows(2)
            .filter_map(|step| class.step_cost(step[0], step[1]))
            .sum(),
    )
}

/// Each path's cost on `grid` over the optimum `best` (`None` for a
/// missing or illegal path) into `ratios`, the illegal ones counted in
/// `illegal`. Returns the requests with no path.
fn tally(
    grid: &NavGrid,
    paths: &[Option<Vec<Cell>>],
    best: &[f64],
    ratios: &mut Vec<Option<f64>>,
    illegal: &mut usize,
) -> usize {
    let mut missing = 0;
    ratios.clear();
    for (i, path) in paths.iter().enumerate() {
        let cost = match path.as_deref().map(|cells| walk_cost(grid, cells)) {
            Some(Some(cost)) => Some(cost / best[i]),
            Some(None) => {
                *illegal += 1;
                None
            }
            None => {
                missing += 1;
                None
            }
        };
        ratios.push(cost);
    }
    missing
}

/// bevy_northstar's path from `start` to `goal` as cells.
fn star_path(nav: &OrdinalGrid, start: Cell, goal: Cell, mode: PathfindMode) -> Option<Vec<Cell>> {
    let mut args = PathfindArgs::new(
        UVec3::new(start.x, start.y, 0),
        UVec3::new(goal.x, goal.y, 0),
    )
    .mode(mode);
    nav.pathfind(&mut args).map(|path| {
        let mut cells = vec![start];
        cells.extend(path.path().iter().map(|p| Cell::new(p.x, p.y)));
        cells.dedup();
        cells
    })
}

/// The cells of each unit's path (none without a result).
fn held_paths(app: &App, units: &[Entity]) -> Vec<Option<Vec<Cell>>> {
    units
        .iter()
        .map(|&unit| {
            app.world()
                .get::<PathResult>(unit)
                .map(|result| result.cells.clone())
        })
        .collect()
}

/// Optimal paths with the `pathfinding` crate's A*, bevy_frontier's rules.
fn pathfinding_crate(grid: &NavGrid, pairs: &[(Cell, Cell)]) -> (Vec<f64>, Outcome) {
    let (w, h) = (grid.width() as i32, grid.height() as i32);
    let cost_at = |x: i32, y: i32| -> u64 {
        if x < 0 || y < 0 || x >= w || y >= h {
            return 0;
        }
        grid.costs()[(y * w + x) as usize] as u64
    };
    let before = cpu();
    let mut best = Vec::new();
    for &(start, goal) in pairs {
        let found = pathfinding::directed::astar::astar(
            &(start.x as i32, start.y as i32),
            |&(x, y)| {
                let mut next = Vec::with_capacity(8);
                for &(dx, dy) in &MOVE_DELTAS {
                    let cost = cost_at(x + dx, y + dy);
                    if cost == 0 {
                        continue;
                    }
                    let diagonal = dx != 0 && dy != 0;
                    if diagonal && (cost_at(x + dx, y) == 0 || cost_at(x, y + dy) == 0) {
                        continue;
                    }
                    let step = if diagonal { DIAGONAL } else { ORTHOGONAL };
                    next.push(((x + dx, y + dy), cost * step));
                }
                next
            },
            |&(x, y)| octile(x.abs_diff(goal.x as i32), y.abs_diff(goal.y as i32)),
            |&(x, y)| (x, y) == (goal.x as i32, goal.y as i32),
        );
        best.push(found.map_or(f64::NAN, |(_, cost)| cost as f64 / ORTHOGONAL as f64));
    }
    let spent = cpu() - before;
    let outcome = Outcome {
        routed_frames: 1,
        routed_cpu: spent,
        whole_frames: 1,
        whole_cpu: spent,
        final_frames: 1,
        final_cpu: spent,
        route_ratios: vec![Some(1.0); pairs.len()],
        final_ratios: vec![Some(1.0); pairs.len()],
        ..default()
    };
    (best, outcome)
}

/// bevy_northstar's HPA*: build, then coarse routes and refined paths
/// (each pass timed apart: routed is build + coarse, final is build +
/// refined, as a game that wants refined paths runs no coarse pass);
/// then a wall at each of `walls` in turn, each followed by a rebuild (of
/// the chunks it touched) and new refined paths for the requests whose
/// path it cut: legal before this wall, illegal after (only those calls
/// are timed: finding which paths a wall cuts is left to the game). A
/// path that broke the move rules before any wall is not re-planned.
fn northstar(work: &Workload) -> (Outcome, Toggled) {
    let Workload {
        grid,
        pairs,
        best,
        walls,
        last,
        last_best,
    } = *work;
    let before = cpu();
    let settings = GridSettingsBuilder::new_2d(grid.width(), grid.height())
        .chunk_size(16)
        .add_neighbor_filter(filter::NoCornerCuttingFlat)
        .build();
    let mut nav: OrdinalGrid = OrdinalGrid::new(&settings);
    for y in 0..grid.height() {
        for x in 0..grid.width() {
            let cost = grid.cost(Cell::new(x, y)).unwrap_or(0);
            let cell = if cost == 0 {
                Nav::Impassable
            } else {
                Nav::Passable(cost as u32)
            };
            nav.set_nav(UVec3::new(x, y, 0), cell);
        }
    }
    nav.build();
    let built = cpu() - before;
    let run = |mode: PathfindMode| {
        let before = cpu();
        let paths: Vec<Option<Vec<Cell>>> = pairs
            .iter()
            .map(|&(start, goal)| star_path(&nav, start, goal, mode))
            .collect();
        (paths, cpu() - before)
    };
    let (coarse, coarse_cpu) = run(PathfindMode::Coarse);
    let (mut refined, refined_cpu) = run(PathfindMode::Refined);
    let mut outcome = Outcome {
        build_cpu: built,
        routed_frames: 1,
        routed_cpu: built + coarse_cpu,
        whole_frames: 1,
        whole_cpu: built + coarse_cpu,
        final_frames: 1,
        final_cpu: built + refined_cpu,
        ..default()
    };
    outcome.missing += tally(
        grid,
        &coarse,
        best,
        &mut outcome.route_ratios,
        &mut outcome.illegal,
    );
    outcome.missing += tally(
        grid,
        &refined,
        best,
        &mut outcome.final_ratios,
        &mut outcome.illegal,
    );
    let mut now = grid.clone();
    let mut toggled = Toggled {
        frames: walls.len() as u64,
        ..default()
    };
    let legal = |grid: &NavGrid, path: &Option<Vec<Cell>>| {
        path.as_deref()
            .is_some_and(|cells| walk_cost(grid, cells).is_some())
    };
    let mut was_legal: Vec<bool> = refined.iter().map(|path| legal(&now, path)).collect();
    for &wall in walls {
        now.set_cost(wall, NavGrid::BLOCKED).ok();
        let before = cpu();
        nav.set_nav(UVec3::new(wall.x, wall.y, 0), Nav::Impassable);
        nav.build();
        toggled.cpu += cpu() - before;
        for (i, path) in refined.iter_mut().enumerate() {
            if was_legal[i] && !legal(&now, path) {
                let (start, goal) = pairs[i];
                let before = cpu();
                *path = star_path(&nav, start, goal, PathfindMode::Refined);
                toggled.cpu += cpu() - before;
                was_legal[i] = legal(&now, path);
            }
        }
    }
    tally(
        last,
        &refined,
        last_best,
        &mut toggled.ratios,
        &mut toggled.illegal,
    );
    (outcome, toggled)
}

/// bevy_frontier's plugin, frame by frame; then a wall at each of `walls`,
/// one a frame, and frames until every request holds a final path that
/// no wall cuts.
fn frontier(work: &Workload) -> (Outcome, Toggled) {
    let Workload {
        grid,
        pairs,
        best,
        walls,
        last,
        last_best,
    } = *work;
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, FrontierPlugins::default()));
    app.update();
    let mut outcome = Outcome::default();
    let before = cpu();
    app.world_mut().spawn((grid.clone(), Transform::default()));
    app.update();
    outcome.build_cpu = cpu() - before;
    let units: Vec<Entity> = pairs
        .iter()
        .map(|&(start, goal)| {
            let at = Vec3::new(start.x as f32, start.y as f32, 0.0);
            app.world_mut()
                .spawn((Transform::from_translation(at), PathRequest::new(goal)))
                .id()
        })
        .collect();
    outcome.route_ratios = vec![None; units.len()];
    let mut whole = vec![false; units.len()];
    for frame in 1..=2_000_000u64 {
        app.update();
        let mut all_routed = true;
        let mut all_whole = true;
        let mut all_final = true;
        for (i, &unit) in units.iter().enumerate() {
            let Some(result) = app.world().get::<PathResult>(unit) else {
                all_routed = false;
                all_whole = false;
                all_final = false;
                continue;
            };
            // The first route to the goal (not a first stretch) is the
            // one compared with northstar's coarse routes.
            if !whole[i] && !result.ends_short {
                whole[i] = true;
                match walk_cost(grid, &result.cells) {
                    Some(cost) => outcome.route_ratios[i] = Some(cost / best[i]),
                    None => outcome.illegal += 1,
                }
            }
            all_whole &= whole[i];
            all_final &= result.status.is_final();
        }
        if all_routed && outcome.routed_frames == 0 {
            outcome.routed_frames = frame;
            outcome.routed_cpu = cpu() - before;
        }
        if all_whole && outcome.whole_frames == 0 {
            outcome.whole_frames = frame;
            outcome.whole_cpu = cpu() - before;
        }
        if all_final {
            outcome.final_frames = frame;
            outcome.final_cpu = cpu() - before;
            break;
        }
    }
    let held = held_paths(&app, &units);
    outcome.missing += tally(
        grid,
        &held,
        best,
        &mut outcome.final_ratios,
        &mut outcome.illegal,
    );
    let map = app
        .world_mut()
        .query_filtered::<Entity, With<NavGrid>>()
        .single(app.world())
        .expect("one map");
    let mut toggled = Toggled::default();
    let mut asked = vec![false; units.len()];
    let before = cpu();
    let mut walls = walls.iter();
    for frame in 1..=2_000_000u64 {
        if let Some(&wall) = walls.next() {
            let mut grid = app.world_mut().get_mut::<NavGrid>(map).expect("the map");
            grid.set_cost(wall, NavGrid::BLOCKED).ok();
        }
        app.update();
        // What a game without `Mover` does with a path a wall cut: ask
        // again, once (`PathInvalidated` tells it; the flag says the same).
        for (i, &unit) in units.iter().enumerate() {
            let cut = app
                .world()
                .get::<PathResult>(unit)
                .is_some_and(|result| result.invalidated);
            if cut
                && !asked[i]
                && let Some(mut request) = app.world_mut().get_mut::<PathRequest>(unit)
            {
                request.set_changed();
            }
            asked[i] = cut;
        }
        let settled = walls.len() == 0
            && units.iter().all(|&unit| {
                app.world().get::<PathResult>(unit).is_some_and(|result| {
                    result.status.is_final()
                        && !result.invalidated
                        && walk_cost(last, &result.cells).is_some()
                })
            });
        if settled {
            toggled.frames = frame;
            toggled.cpu = cpu() - before;
            break;
        }
    }
    let held = held_paths(&app, &units);
    tally(
        last,
        &held,
        last_best,
        &mut toggled.ratios,
        &mut toggled.illegal,
    );
    (outcome, toggled)
}

/// Mean and worst of `ratios` over the requests in `over`, and how many
/// those are.
fn stats(ratios: &[Option<f64>], over: &[bool]) -> (f64, f64, usize) {
    let finite: Vec<f64> = ratios
        .iter()
        .zip(over)
        .filter(|&(_, &over)| over)
        .filter_map(|(r, _)| r.filter(|r| r.is_finite()))
        .collect();
    let mean = finite.iter().sum::<f64>() / finite.len().max(1) as f64;
    (
        mean,
        finite.iter().copied().fold(0.0, f64::max),
        finite.len(),
    )
}

/// The requests where every one of `sets` holds a legal path: the set
/// costs are compared over, so no peer is scored on requests another
/// skipped.
fn common(sets: &[&[Option<f64>]]) -> Vec<bool> {
    let n = sets.iter().map(|set| set.len()).max().unwrap_or(0);
    (0..n)
        .map(|i| sets.iter().all(|set| set.get(i).is_some_and(Option::is_some)))
        .collect()
}

/// The median of `runs`' CPU times, field by field (frames and paths are
/// the same in every run; the first run's are kept).
fn median(mut runs: Vec<(Outcome, Toggled)>) -> (Outcome, Toggled) {
    fn mid(mut times: Vec<Duration>) -> Duration {
        times.sort();
        times[times.len() / 2]
    }
    let pick = |field: fn(&(Outcome, Toggled)) -> Duration| mid(runs.iter().map(field).collect());
    let build = pick(|r| r.0.build_cpu);
    let routed = pick(|r| r.0.routed_cpu);
    let whole = pick(|r| r.0.whole_cpu);
    let fin = pick(|r| r.0.final_cpu);
    let walls = pick(|r| r.1.cpu);
    let (mut outcome, mut toggled) = runs.swap_remove(0);
    outcome.build_cpu = build;
    outcome.routed_cpu = routed;
    outcome.whole_cpu = whole;
    outcome.final_cpu = fin;
    toggled.cpu = walls;
    (outcome, toggled)
}

/// Walls put up while the paths are held, one a frame, on each map with
/// terrain.
const TOGGLES: usize = 100;

fn main() {
    let mut requests = 1_000;
    let mut runs = 3usize;
    let mut only: Option<Vec<String>> = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--requests" => requests = args.next().and_then(|v| v.parse().ok()).unwrap_or(requests),
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).unwrap_or(runs).max(1),
            "--maps" => {
                only = args
                    .next()
                    .map(|v| v.split(',').map(String::from).collect())
            }
            _ => {
                eprintln!(
                    "usage: frontier-peers [--requests N] [--runs N] [--maps random512,AR0011SR,Berlin]"
                );
                std::process::exit(2);
            }
        }
    }
    let dir = std::env::var_os("FRONTIER_MOVINGAI_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/movingai")
        });
    let maps = [
        ("random512", "maps/random/random512-10-0.map"),
        ("AR0011SR", "maps/bg512/AR0011SR.map"),
        ("Berlin", "maps/cities/Berlin_0_1024.map"),
    ];
    for (name, file) in maps {
        if only
            .as_ref()
            .is_some_and(|only| !only.iter().any(|m| m == name))
        {
            continue;
        }
        let path = dir.join(file);
        let Ok((plain, _)) =
            support::load_grid(Some(path.clone()), file, name, || unreachable!(), 1)
        else {
            eprintln!("skipping {name}: {} not found", path.display());
            continue;
        };
        for terrain in [false, true] {
            let grid = if terrain {
                support::rough_terrain(&plain, 20, 4, 12)
            } else {
                plain.clone()
            };
            let cells = support::main_region_cells(&grid);
            let mut rng = support::Lcg(7);
            let pairs: Vec<(Cell, Cell)> = (0..requests)
                .map(|_| (cells[rng.below(cells.len())], cells[rng.below(cells.len())]))
                .collect();
            let (best, optimum) = pathfinding_crate(&grid, &pairs);
            // With terrain: walls put up one a frame once the paths are
            // held, at random cells of the region (never a request's end).
            let walls: Vec<Cell> = if terrain {
                (0..TOGGLES)
                    .map(|_| cells[rng.below(cells.len())])
                    .filter(|cell| !pairs.iter().any(|&(a, b)| *cell == a || *cell == b))
                    .collect()
            } else {
                Vec::new()
            };
            let mut last = grid.clone();
            for &wall in &walls {
                last.set_cost(wall, NavGrid::BLOCKED).ok();
            }
            let (last_best, _) = if walls.is_empty() {
                (best.clone(), Outcome::default())
            } else {
                pathfinding_crate(&last, &pairs)
            };
            let work = Workload {
                grid: &grid,
                pairs: &pairs,
                best: &best,
                walls: &walls,
                last: &last,
                last_best: &last_best,
            };
            // The peers take turns, run by run, so that whatever else the
            // machine does falls on both alike.
            let mut star_runs = Vec::new();
            let mut our_runs = Vec::new();
            for _ in 0..runs {
                star_runs.push(northstar(&work));
                our_runs.push(frontier(&work));
            }
            let (star, star_walls) = median(star_runs);
            let (ours, our_walls) = median(our_runs);
            if !walls.is_empty() {
                let over = common(&[&star_walls.ratios, &our_walls.ratios]);
                for (peer, toggled) in [("northstar", &star_walls), ("frontier", &our_walls)] {
                    let (mean, worst, compared) = stats(&toggled.ratios, &over);
                    println!(
                        "workload={name}+terrain+walls peer={peer} walls={} frames={} cpu_ms={} final_cost_mean={mean:.4} final_cost_worst={worst:.4} compared={compared} illegal={}",
                        walls.len(),
                        toggled.frames,
                        toggled.cpu.as_millis(),
                        toggled.illegal,
                    );
                }
            }
            // Costs over the requests where both northstar and frontier
            // hold a legal path (routes: a whole route, not a first
            // stretch).
            let route_over = common(&[&star.route_ratios, &ours.route_ratios]);
            let final_over = common(&[&star.final_ratios, &ours.final_ratios]);
            let outcomes = [
                ("pathfinding", optimum),
                ("northstar", star),
                ("frontier", ours),
            ];
            for (peer, outcome) in outcomes {
                let (route_mean, route_worst, routes) = stats(&outcome.route_ratios, &route_over);
                let (final_mean, final_worst, finals) = stats(&outcome.final_ratios, &final_over);
                println!(
                    "workload={name}{} peer={peer} requests={requests} build_cpu_ms={} routed_frames={} routed_cpu_ms={} whole_frames={} whole_cpu_ms={} final_frames={} final_cpu_ms={} route_cost_mean={route_mean:.4} route_cost_worst={route_worst:.4} routes_compared={routes} final_cost_mean={final_mean:.4} final_cost_worst={final_worst:.4} finals_compared={finals} illegal={} missing={}",
                    if terrain { "+terrain" } else { "" },
                    outcome.build_cpu.as_millis(),
                    outcome.routed_frames,
                    outcome.routed_cpu.as_millis(),
                    outcome.whole_frames,
                    outcome.whole_cpu.as_millis(),
                    outcome.final_frames,
                    outcome.final_cpu.as_millis(),
                    outcome.illegal,
                    outcome.missing,
                );
            }
        }
    }
}
