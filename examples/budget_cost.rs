//! What one unit of the frame's budget costs, for each kind of work the
//! budget pays for: run under callgrind, each kind's instructions (the
//! inclusive cost of its driver below) over the units it was charged,
//! which this prints.
//!
//! ```text
//! cargo build --release --example budget_cost
//! valgrind --tool=callgrind --callgrind-out-file=budget.cg \
//!     target/release/examples/budget_cost [--map PATH]
//! callgrind_annotate --inclusive=yes budget.cg | grep budget_cost::
//! ```
//!
//! The kinds, on the map with the stress test's terrain (a fifth of its
//! walkable cells cost 4; `--map` as `stress --map`, random512-10-0 by
//! default): plain A* searches (`search`), jump point searches on the map
//! without terrain (`jump`), a flood from one goal to many starts
//! (`flood`), the coarse graph built cluster by cluster as repairs build
//! it (`repair`), and quick routes over it, split by phase: joining start
//! and goal to their clusters' nodes (`join`), the search over nodes
//! (`nodes`) and refining legs to cells (`refine`). `tools/budget_cost.py`
//! runs it and prints instructions per unit for each.

use std::path::PathBuf;

use bevy_frontier::core::coarse::REPAIR_EXPANSIONS_PER_UNIT;
use bevy_frontier::core::{
    Cell, CoarseGraph, CoarseRoute, Flood, FloodDirection, NavGrid, RouteStatus, RouteWork,
    ScratchPool, Search, SearchConfig, SearchStatus, UnitKind,
};

mod support;

/// Searches and routes run of each kind.
const RUNS: usize = 200;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut map = None;
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--map", Some(path)) => map = Some(PathBuf::from(path)),
            _ => {
                eprintln!("usage: budget_cost [--map PATH]");
                std::process::exit(2);
            }
        }
    }
    let (plain, name) = support::benchmark_grid(map, 1).unwrap_or_else(|message| {
        eprintln!("error: {message}");
        std::process::exit(2);
    });
    let rough = support::rough_terrain(&plain, 20, 4, 12);
    let cells = support::main_region_cells(&plain);
    let mut rng = support::Lcg(53);
    let pairs: Vec<(Cell, Cell)> = (0..RUNS)
        .map(|_| (cells[rng.below(cells.len())], cells[rng.below(cells.len())]))
        .collect();
    println!("map: {name}");
    report("search", plain_searches(&rough, &pairs));
    report("jump", jump_searches(&plain, &pairs));
    report("flood", floods(&rough, &pairs));
    let (graph, expansions) = repairs(&rough);
    // What the plugin charges the frame's budget for them.
    report("repair", expansions.div_ceil(REPAIR_EXPANSIONS_PER_UNIT));
    let (work, nodes_charged) = routes(&rough, &graph, &pairs);
    report("join", work.join);
    report("nodes", work.nodes[0] + work.nodes[1]);
    report("nodes_charged", nodes_charged);
    report("refine", work.refine);
}

fn report(kind: &str, units: u64) {
    println!("kind={kind} units={units}");
}

/// Plain A* (the map has terrain costs).
#[inline(never)]
fn plain_searches(grid: &NavGrid, pairs: &[(Cell, Cell)]) -> u64 {
    searches(grid, pairs, false)
}

/// Jump point searches (the map without terrain).
#[inline(never)]
fn jump_searches(grid: &NavGrid, pairs: &[(Cell, Cell)]) -> u64 {
    searches(grid, pairs, true)
}

/// Each pair searched to its end; the budget units charged.
fn searches(grid: &NavGrid, pairs: &[(Cell, Cell)], jump_points: bool) -> u64 {
    let config = SearchConfig {
        jump_points,
        ..SearchConfig::default()
    };
    // Scratch space reused, as the plugin's pool does.
    let mut pool = ScratchPool::new();
    let mut units = 0;
    for &(start, goal) in pairs {
        let Ok(mut search) = Search::new_in(&mut pool, grid, start, goal, config) else {
            continue;
        };
        while search.step(grid, 4096) == SearchStatus::Running {}
        units += search.expansions();
        pool.give(search.into_scratch());
    }
    units
}

/// Floods from every tenth goal back to the ten starts round it (a
/// squad's shared search); the budget units charged.
#[inline(never)]
fn floods(grid: &NavGrid, pairs: &[(Cell, Cell)]) -> u64 {
    let mut pool = ScratchPool::new();
    let mut units = 0;
    for chunk in pairs.chunks(10) {
        let goal = chunk[0].1;
        let starts = chunk.iter().map(|&(start, _)| start);
        let direction = FloodDirection::ToSource;
        let Ok(flood) = Flood::new_in(&mut pool, grid, goal, direction, starts, None) else {
            continue;
        };
        let mut flood = flood.guided(grid);
        while !flood.step(grid, 4096) {}
        units += flood.expansions();
        pool.give(flood.into_scratch());
    }
    units
}

/// The coarse graph, built as repairs build it; the budget units charged.
#[inline(never)]
fn repairs(grid: &NavGrid) -> (CoarseGraph, u64) {
    let view = grid.view(UnitKind::sized(1)).expect("the default class");
    let mut graph = CoarseGraph::new(&view);
    let mut units = 0;
    loop {
        let spent = graph.repair(&view, 4096);
        units += spent;
        if spent == 0 || graph.is_ready(&view) {
            break;
        }
    }
    (graph, units)
}

/// Each pair's quick route, refined to the goal: what they spent, by part,
/// and the budget their node searches (over the route and along its
/// course) were charged.
#[inline(never)]
fn routes(grid: &NavGrid, graph: &CoarseGraph, pairs: &[(Cell, Cell)]) -> (RouteWork, u64) {
    let view = grid.view(UnitKind::sized(1)).expect("the default class");
    let mut all = RouteWork::default();
    let mut nodes_charged = 0;
    for &(start, goal) in pairs {
        // The plugin's quick routes search the nodes with a weight of 1.5.
        let mut route = CoarseRoute::new(start, goal, 1.5);
        while route.step(graph, &view, 4096) == RouteStatus::Running {}
        let work = route.work();
        all.join += work.join;
        all.refine += work.refine;
        all.nodes[0] += work.nodes[0];
        all.nodes[1] += work.nodes[1];
        // Everything else the route was charged went to its node searches.
        nodes_charged += route.expansions() - work.join - work.refine;
    }
    (all, nodes_charged)
}
