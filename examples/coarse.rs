//! Coarse graph benchmark: builds the coarse graph quick routes run on and
//! sends routes over it, with the core API alone (no app), and prints what
//! each part costs.
//!
//! ```text
//! cargo run --release --example coarse -- [--map PATH] [--routes N] [--flat] [--size K] [--weight W]
//! ```
//!
//! The map defaults to `random512-10-0` (see `stress`); the stress test's
//! terrain (a fifth of the open cells at cost 4) is laid on it unless
//! `--flat` is given. Starts and goals are drawn as `stress` draws them, so
//! the routes are those of its first units.
//!
//! The node searches' rows count node expansions; the level-1 course and
//! the totals count budget, where a node expansion is charged one and a
//! half (see `CoarseRoute::expansions`).
//!
//! It prints the build's time and size (`build_ms`, `coarse_bytes_per_cell`
//! against `grid_bytes_per_cell`, nodes), then a table of what a route
//! costs in expansions, by part: joining its start and goal to the graph,
//! the search over nodes, the refinement of its legs, its first stretch
//! (everything spent until its first 33 cells were refined, for routes
//! whose ends lie at least 128 cells apart, which is when the plugin sends
//! a first stretch) and the whole route; and the route's cost over the best
//! path's (an optimal search between its ends), mean, p95 and worst, and
//! the routes that broke the move rules.

// A benchmark's wall clock (`clippy.toml` keeps it out of the plugin):
// the examples run natively and time the plugin's systems.
#![allow(clippy::disallowed_methods)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use bevy_frontier::core::{
    Cell, CoarseGraph, CoarseRoute, NavGrid, Path, RouteStatus, RouteWork, SearchConfig, find_path,
};

mod support;

use support::{Lcg, main_region_cells, percentile};

/// Cells refined before a first stretch is sent, and the distance from
/// which it is (the plugin's own rule).
const FIRST_STRETCH: usize = 32;
const STRETCHED_FROM: f64 = 128.0;

struct Options {
    map: Option<PathBuf>,
    routes: usize,
    flat: bool,
    size: u8,
    weight: f32,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        map: None,
        routes: 200,
        flat: false,
        size: 1,
        weight: 1.05,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--map" => options.map = Some(PathBuf::from(value()?)),
            "--routes" => options.routes = support::positive(&flag, &value()?)?,
            "--size" => options.size = support::positive(&flag, &value()?)?,
            "--flat" => options.flat = true,
            "--weight" => options.weight = support::weight(&value()?)?,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(options)
}

/// A part of a route's work, by name.
type PartColumn = (&'static str, fn(&Parts) -> u64);

/// Whole routes, or first stretches.
type SampleColumn = (&'static str, fn(&Sample) -> Option<Parts>);

/// What one route cost: by part once whole, and by part when its first
/// stretch was refined (routes long enough to send one).
struct Sample {
    whole: Parts,
    first: Option<Parts>,
    ratio: f64,
}

/// A route's expansions by part, and in all.
#[derive(Clone, Copy)]
struct Parts {
    work: RouteWork,
    total: u64,
}

impl Parts {
    fn of(route: &CoarseRoute) -> Self {
        Self {
            work: route.work(),
            total: route.expansions(),
        }
    }
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!(
                "error: {message}\nusage: coarse [--map PATH] [--routes N] [--flat] [--size K] [--weight W]"
            );
            return ExitCode::from(2);
        }
    };
    let (mut grid, name) = match support::benchmark_grid(options.map, 1) {
        Ok(loaded) => loaded,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    if !options.flat {
        grid = support::rough_terrain(&grid, 20, 4, 12);
    }
    grid.label_regions_now();
    let class = grid.size_class(options.size);
    class.label_regions_now();
    println!(
        "map: {name}{}, size {}",
        if options.flat { "" } else { " with terrain" },
        options.size
    );

    let began = Instant::now();
    let mut graph = CoarseGraph::new(&class);
    let build_expansions = graph.repair(&class, u64::MAX);
    let build_ms = began.elapsed().as_secs_f64() * 1e3;
    let cells = grid.cell_count() as f64;
    let grid_bytes = grid.memory_bytes() as f64 / cells;
    let coarse_bytes = graph.memory_bytes() as f64 / cells;
    println!(
        "build_ms={build_ms:.1} build_expansions={build_expansions} build_estimate={} clusters={} nodes={} upper_nodes={} grid_bytes_per_cell={grid_bytes:.3} coarse_bytes_per_cell={coarse_bytes:.3} coarse_share={:.1}%",
        CoarseGraph::build_estimate(&class),
        graph.cluster_count(),
        graph.node_count(),
        graph.upper_node_count(),
        100.0 * coarse_bytes / grid_bytes
    );

    // The starts and goals `stress` gives its units.
    let walkable = main_region_cells(&grid);
    let mut rng = Lcg(2026);
    let mut samples = Vec::new();
    let mut illegal = 0;
    let config = SearchConfig {
        size: options.size,
        ..SearchConfig::default()
    };
    for _ in 0..options.routes {
        let start = walkable[rng.below(walkable.len())];
        let goal = walkable[rng.below(walkable.len())];
        if !class.is_walkable(start) || !class.is_walkable(goal) || start == goal {
            continue;
        }
        let Some((sample, path)) =
            route(&graph, &grid, (options.size, options.weight), start, goal)
        else {
            continue;
        };
        let Some(best) = find_path(&grid, start, goal, config)
            .ok()
            .and_then(|(_, path)| path)
        else {
            continue;
        };
        illegal += usize::from(!class.can_walk(&path.cells));
        samples.push(Sample {
            ratio: path.cost / best.cost.max(f64::MIN_POSITIVE),
            ..sample
        });
    }

    let column = |values: Vec<f64>| {
        let mut values = values;
        values.sort_by(f64::total_cmp);
        let mean = values.iter().sum::<f64>() / values.len().max(1) as f64;
        (
            mean,
            percentile(&values, 50.0),
            percentile(&values, 95.0),
            values.last().copied().unwrap_or_default(),
        )
    };
    let parts: [PartColumn; 6] = [
        ("join start and goal", |p| p.work.join),
        ("nodes, level 1", |p| p.work.nodes[0]),
        ("nodes, level 2", |p| p.work.nodes[1]),
        ("level-1 course", |p| p.work.open),
        ("refine to cells", |p| p.work.refine),
        ("in all", |p| p.total),
    ];
    let picks: [SampleColumn; 2] = [
        ("whole routes", |s| Some(s.whole)),
        ("first stretches", |s| s.first),
    ];
    for (what, pick) in picks {
        let chosen: Vec<Parts> = samples.iter().filter_map(pick).collect();
        println!(
            "{what} ({} routes), expansions by part: mean / p50 / p95 / max",
            chosen.len()
        );
        for (name, part) in parts {
            let (mean, p50, p95, max) = column(chosen.iter().map(|p| part(p) as f64).collect());
            println!("  {name:<20} {mean:>8.1} {p50:>8.0} {p95:>8.0} {max:>8.0}");
        }
    }
    let (mean, _, p95, max) = column(samples.iter().map(|s| s.ratio).collect());
    println!(
        "route_cost_ratio_mean={mean:.4} route_cost_ratio_p95={p95:.4} route_cost_ratio_max={max:.4} illegal={illegal}"
    );
    ExitCode::SUCCESS
}

/// One route from `start` to `goal`, stepped a few expansions at a time to
/// see when its first stretch is refined.
fn route(
    graph: &CoarseGraph,
    grid: &NavGrid,
    (size, weight): (u8, f32),
    start: Cell,
    goal: Cell,
) -> Option<(Sample, Path)> {
    let class = grid.size_class(size);
    let mut route = CoarseRoute::new(start, goal, weight);
    let stretched = start.octile_distance(goal) >= STRETCHED_FROM;
    let mut first = None;
    loop {
        let status = route.step(graph, &class, 8);
        if stretched && first.is_none() && route.refined_len() > FIRST_STRETCH {
            first = Some(Parts::of(&route));
        }
        match status {
            RouteStatus::Running => continue,
            RouteStatus::Found => break,
            RouteStatus::NotFound => return None,
        }
    }
    let sample = Sample {
        whole: Parts::of(&route),
        first,
        ratio: 0.0,
    };
    Some((sample, route.path(&class)?))
}
