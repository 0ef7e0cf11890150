//! Coarse graph benchmark: builds the coarse graph quick routes run on and
//! sends routes over it, with the core API alone (no app), and prints what
//! each part costs.
//!
//! ```text
//! cargo run --release --example coarse -- [--map PATH] [--routes N] [--flat] [--size K]
//! ```
//!
//! The map defaults to `random512-10-0` (see `stress`); the stress test's
//! terrain (a fifth of the open cells at cost 4) is laid on it unless
//! `--flat` is given. Starts and goals are drawn as `stress` draws them, so
//! the routes are those of its first units.
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

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use bevy_frontier::core::{
    Cell, CoarseGraph, CoarseRoute, NavGrid, Path, RouteStatus, SearchConfig, find_path,
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
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        map: None,
        routes: 200,
        flat: false,
        size: 1,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--map" => options.map = Some(PathBuf::from(value()?)),
            "--routes" => options.routes = support::positive(&flag, &value()?)?,
            "--size" => options.size = support::positive(&flag, &value()?)?,
            "--flat" => options.flat = true,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(options)
}

/// Picks one figure of a route's sample.
type Pick<'a> = &'a dyn Fn(&Sample) -> Option<f64>;

/// What one route cost, by part.
#[derive(Default)]
struct Sample {
    join: f64,
    nodes: f64,
    refine: f64,
    first_stretch: Option<f64>,
    whole: f64,
    ratio: f64,
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!(
                "error: {message}\nusage: coarse [--map PATH] [--routes N] [--flat] [--size K]"
            );
            return ExitCode::from(2);
        }
    };
    let (mut grid, name) = match support::load_grid(
        options.map,
        "maps/random/random512-10-0.map",
        "generated 512x512, 10% walls",
        || support::scattered_walls(512, 512, 10, 7),
        1,
    ) {
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
    let graph = CoarseGraph::build(&class);
    let build_ms = began.elapsed().as_secs_f64() * 1e3;
    let cells = grid.cell_count() as f64;
    let grid_bytes = grid.memory_bytes() as f64 / cells;
    let coarse_bytes = graph.memory_bytes() as f64 / cells;
    println!(
        "build_ms={build_ms:.1} clusters={} nodes={} grid_bytes_per_cell={grid_bytes:.3} coarse_bytes_per_cell={coarse_bytes:.3} coarse_share={:.1}%",
        graph.cluster_count(),
        graph.node_count(),
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
        let Some((sample, path)) = route(&graph, &grid, options.size, start, goal) else {
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

    let column = |pick: Pick| {
        let mut values: Vec<f64> = samples.iter().filter_map(pick).collect();
        values.sort_by(f64::total_cmp);
        let mean = values.iter().sum::<f64>() / values.len().max(1) as f64;
        (
            mean,
            percentile(&values, 50.0),
            percentile(&values, 95.0),
            values.last().copied().unwrap_or_default(),
            values.len(),
        )
    };
    println!(
        "{} routes; expansions by part (mean / p50 / p95 / max):",
        samples.len()
    );
    let parts: [(&str, Pick); 5] = [
        ("join start and goal", &|s| Some(s.join)),
        ("search over nodes", &|s| Some(s.nodes)),
        ("refine legs", &|s| Some(s.refine)),
        ("first stretch", &|s| s.first_stretch),
        ("whole route", &|s| Some(s.whole)),
    ];
    for (name, pick) in parts {
        let (mean, p50, p95, max, count) = column(pick);
        println!("  {name:<20} {mean:>8.1} {p50:>8.0} {p95:>8.0} {max:>8.0}   ({count} routes)");
    }
    let (mean, _, p95, max, _) = column(&|s| Some(s.ratio));
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
    size: u8,
    start: Cell,
    goal: Cell,
) -> Option<(Sample, Path)> {
    let class = grid.size_class(size);
    let mut route = CoarseRoute::new(start, goal, 1.05);
    let stretched = start.octile_distance(goal) >= STRETCHED_FROM;
    let mut first_stretch = None;
    loop {
        let status = route.step(graph, &class, 8);
        if stretched
            && first_stretch.is_none()
            && route
                .refined(&class)
                .is_some_and(|path| path.cells.len() > FIRST_STRETCH)
        {
            first_stretch = Some(route.expansions() as f64);
        }
        match status {
            RouteStatus::Running => continue,
            RouteStatus::Found => break,
            RouteStatus::NotFound => return None,
        }
    }
    let work = route.work();
    let sample = Sample {
        join: work.join as f64,
        nodes: work.nodes as f64,
        refine: work.refine as f64,
        first_stretch,
        whole: route.expansions() as f64,
        ratio: 0.0,
    };
    Some((sample, route.path(&class)?))
}
