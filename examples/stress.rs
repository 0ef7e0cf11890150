//! Stress benchmark: many units ask for paths in the same frame; the plugin
//! answers them all without a frame spending more than its node budget.
//!
//! ```text
//! cargo run --release --example stress -- [--map PATH] [--units N] [--budget B] [--groups G] [--goals G] [--edits N] [--terrain] [--swamp C] [--refine on|off] [--weight W] [--classes K] [--threads T] [--lanes L] [--fps F] [--clutter N]
//! ```
//!
//! The map defaults to `random512-10-0` from `$FRONTIER_MOVINGAI_DIR` or
//! `../shared/movingai`, or a generated 512×512 map with 10% random walls
//! when neither exists. Starts and goals are random walkable cells of one
//! region, the same on every run. The last line is
//! `frames=F budget=B max_frame_expansions=E p50_frame_ms=X p99_frame_ms=Y max_frame_ms=M frames_to_last_path=L expansions=N results_digest=D`
//! where the frame times are those of the plugin's own systems, `N` the
//! expansions of the whole run and `D` a hash of every answer (frame,
//! unit, status, cost, cells, grid version): two builds that give the same
//! digest answered the same units with the same paths in the same frames.
//! The line before it names the five slowest frames (`ms@frame`).
//!
//! With several lanes the last line adds `lane_imbalance_p50` and
//! `lane_imbalance_p99`: over the frames that spent their whole budget, the
//! slowest lane's time (`PathfindingStats::lane_times`) over the mean
//! lane's. `--threads 1 --lanes L` runs the L lanes one after another on
//! one thread, which is what decides how evenly L cores would share them.
//!
//! With `--threads T`, searches run in T lanes on T threads
//! (`PathfindingSettings::search_lanes` and `threads`, with a compute task
//! pool of T threads), and the last line adds `threads=T`. Threads run in
//! parallel only with the `multi_threaded` feature
//! (`cargo run --release --features multi_threaded --example stress -- --threads 2 --budget 8192`).
//! Give the budget to match: at twice the budget, two threads spend the
//! time of one if the two cores split it evenly. `--lanes L` splits the
//! budget into L lanes instead (default T), run on the T threads; the
//! paths and frames depend on L, never on T (`--threads 1 --lanes 2` shows
//! what the lanes themselves cost, with no thread to help).
//!
//! With `--terrain`, a fifth of the map's walkable cells (chosen by a fixed
//! seed) cost 4 instead of 1: rough ground, where jump point search does
//! not apply and every search is a plain A*.
//!
//! With `--swamp C`, the map's swamp cells (`S`) cost C instead of 1 (the
//! RTS scene's `assets/maps/frontier.map` gives them 4).
//!
//! On maps with terrain costs, units first get a quick provisional path
//! (`PathfindingSettings::refine`) unless `--refine off` is given. With
//! `--terrain`, `--swamp` or `--refine`, the last line adds
//! `frames_to_first_path=F`, the most frames any unit waited from its
//! order to its first path (provisional or not), and a line before it gives
//! the mean and worst frames to the first and to the final path;
//! `frames_to_last_path` is always the frame of the last final path. When
//! quick paths were sent it also adds `quick_cost_ratio_mean=` and
//! `quick_cost_ratio_p95=` (per unit that got both, the cost of its last
//! provisional path over its final path's) and `quick_illegal=`, the
//! provisional paths that broke the move rules on the grid they came on,
//! and `grid_bytes_per_cell=` and `coarse_bytes_per_cell=`: the memory of
//! the grid (regions labelled) and of the coarse graph quick routes run on,
//! and `graph_frame=`, the frame that graph was taken up on.
//!
//! The coarse graph is built in the background over a window of frames
//! that assumes frames of a real game, not frames run back to back: while
//! it is being built, each frame is held to `--fps F` frames a second (60
//! by default; 0 runs them back to back, and the graph then comes whenever
//! its build is done, with frames and paths that depend on the machine).
//! The frame times reported are the plugin's own systems', never the wait.
//!
//! Every run prints `checksum=`, the plugin's own hash of every frame
//! (`FrontierChecksum::total`, the frame a lockstep game compares across
//! clients), and `graph_wait_ms=` beside `graph_frame=`: how long frames
//! waited, in all, for a coarse graph's build not done on its due frame
//! (`PathfindingStats::graph_wait`; zero on a machine fast enough). With
//! `--clutter N`, one more resource is registered and N other entities
//! spawned and despawned in a shuffled order before the map (`--clutter 0`:
//! the resource alone): every unit then has another entity id, and the
//! frames, digest and checksum must not change.
//!
//! With `--weight W` (at least 1), searches use a heuristic weight of W
//! (`PathfindingSettings::heuristic_weight`): every final path costs at
//! most W times the best. The last line then adds `final_cost_ratio_mean=`
//! and `final_cost_ratio_max=`: each unit's final path against an optimal
//! search between its ends. Every run gives `final_cost_mean=`, the mean
//! cost of the units' final paths.
//!
//! With `--classes K` (1 to 4), the map's open cells become land and
//! water by a fixed seed (deep water and shallow banks, woods, open
//! ground) and the grid gets K movement classes, the first K of foot, boat,
//! hover and wheels; unit i is of class i mod K, its start and goal in
//! its class's largest region. The last line adds `frames_to_first_path=`
//! (as with `--terrain`: woods and water are terrain costs, so units of
//! every class get quick routes first, hover's even ground included),
//! `first_path_by_class=` (the same, per class: `F0/F1/...`), `classes=K`,
//! `grid_bytes_per_cell=` (every class's layer built and its regions
//! labelled, the terrain byte included), `class_bytes_per_cell=` (what
//! each class beside the default adds), `size_bytes_per_cell=` (what one
//! more unit size adds to a grid without classes, for comparison) and
//! `coarse_bytes_per_cell=` (every coarse graph the run built). Units
//! are ordered alone: not with `--groups` or `--goals`.
//!
//! With `--edits N`, once every unit holds its path, N random cells are
//! toggled between wall and ground, one a frame, and the last line adds
//! `edit_p50_ms` and `edit_max_ms`: the time of one edit (the grid's own
//! update, region repair included, plus the plugin flagging the paths it
//! cuts), and `edit_flagged`, the paths flagged.
//!
//! With `--groups G` the units stand in G packed squads, one per random
//! spot, and each squad gets one [`GroupMove`] to a random goal, all in the
//! same frame. The run is then repeated with every unit ordered alone to its
//! squad's goal, and the last line adds
//! `group_expansion_ratio=R`: the expansions of the group orders over those
//! of the one-by-one orders. `frames_to_last_path` is then the frame the
//! last unit got its route.
//!
//! With `--goals G` the units stand in G squads as with `--groups`, but
//! each unit is ordered alone to its squad's goal (a shift-click on many
//! units, an AI player's orders, a rally point), so requests to one goal
//! share a search (`PathfindingSettings::share_goals`). The run is then
//! repeated with every request searched on its own, and the last line adds
//! `shared_goal_ratio=R`: the expansions of the first run over those of
//! the second. (Units spread over the whole map do not share: a search
//! backwards from the goal would flood most of the map to reach them all,
//! more work than their own searches; that is the run without flags.)

// A benchmark's wall clock (`clippy.toml` keeps it out of the plugin):
// the examples run natively and time the plugin's systems.
#![allow(clippy::disallowed_methods)]

use std::path::PathBuf;
use std::process::ExitCode;

use bevy::prelude::*;
use bevy_frontier::checksum::FrontierChecksum;
use bevy_frontier::core::{Cell, CoarseGraph, SearchConfig, UnitKind, find_path};
use bevy_frontier::movement::{Arrived, Steering};
use bevy_frontier::pathfinding::{CoarseGraphs, PathfindingStats};
use bevy_frontier::prelude::*;

mod support;

use support::{Lcg, main_region_cells, percentile};

struct Options {
    map: Option<PathBuf>,
    units: usize,
    budget: u32,
    groups: Option<usize>,
    goals: Option<usize>,
    edits: usize,
    terrain: bool,
    threads: Option<usize>,
    lanes: Option<usize>,
    swamp: u8,
    weight: f32,
    refine: Option<bool>,
    fps: u32,
    classes: Option<usize>,
    clutter: Option<usize>,
    /// `--bake FILE` or `--baked FILE`.
    bake: Option<(bool, PathBuf)>,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        map: None,
        units: 1000,
        budget: PathfindingSettings::default().nodes_per_frame,
        groups: None,
        goals: None,
        edits: 0,
        terrain: false,
        threads: None,
        lanes: None,
        swamp: 1,
        weight: 1.0,
        refine: None,
        fps: 60,
        classes: None,
        clutter: None,
        bake: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--map" => options.map = Some(PathBuf::from(value()?)),
            "--units" => {
                let v = value()?;
                options.units = v
                    .parse()
                    .map_err(|_| format!("--units {v:?} is not a number"))?;
            }
            "--budget" => options.budget = support::positive(&flag, &value()?)?,
            "--groups" => options.groups = Some(support::positive(&flag, &value()?)?),
            "--goals" => options.goals = Some(support::positive(&flag, &value()?)?),
            "--terrain" => options.terrain = true,
            "--threads" => options.threads = Some(support::positive(&flag, &value()?)?),
            "--lanes" => options.lanes = Some(support::positive(&flag, &value()?)?),
            "--swamp" => options.swamp = support::positive(&flag, &value()?)?,
            "--weight" => options.weight = support::weight(&value()?)?,
            "--refine" => {
                options.refine = Some(match value()?.as_str() {
                    "on" => true,
                    "off" => false,
                    v => return Err(format!("--refine {v:?} is neither on nor off")),
                })
            }
            "--classes" => {
                let count: usize = support::positive(&flag, &value()?)?;
                if count > 4 {
                    return Err(format!("--classes {count}: at most 4"));
                }
                options.classes = Some(count);
            }
            "--fps" => {
                let v = value()?;
                options.fps = v
                    .parse()
                    .map_err(|_| format!("--fps {v:?} is not a number"))?;
            }
            "--clutter" => {
                let v = value()?;
                options.clutter = Some(
                    v.parse()
                        .map_err(|_| format!("--clutter {v:?} is not a number"))?,
                );
            }
            "--edits" => {
                let v = value()?;
                options.edits = v
                    .parse()
                    .map_err(|_| format!("--edits {v:?} is not a number"))?;
            }
            "--bake" | "--baked" if cfg!(feature = "serialize") => {
                options.bake = Some((flag == "--bake", PathBuf::from(value()?)));
            }
            "--bake" | "--baked" => return Err(format!("{flag} needs --features serialize")),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!(
                "error: {message}\nusage: stress [--map PATH] [--units N] [--budget B] [--groups G] [--goals G] [--edits N] [--terrain] [--swamp C] [--refine on|off] [--weight W] [--classes K] [--threads T] [--lanes L] [--fps F]"
            );
            return ExitCode::from(2);
        }
    };
    let (mut grid, name) = match support::benchmark_grid(options.map, options.swamp) {
        Ok(loaded) => loaded,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };

    if options.terrain {
        grid = support::rough_terrain(&grid, 20, 4, 12);
    }
    if let Some(count) = options.classes {
        if options.groups.is_some() || options.goals.is_some() {
            eprintln!("error: --classes orders units alone; give neither --groups nor --goals");
            return ExitCode::from(2);
        }
        grid = support::land_and_water(&grid, support::movement_classes(count), 7);
    }
    #[cfg(feature = "serialize")]
    if let Some((bake, path)) = &options.bake {
        match baking::bake_or_load(&grid, options.classes.unwrap_or(1), *bake, path) {
            Ok(baked) => grid = baked,
            Err(message) => {
                eprintln!("error: {message}");
                return ExitCode::FAILURE;
            }
        }
    }
    // Starts and goals from the largest region, so every path exists.
    let cells = main_region_cells(&grid);
    if cells.is_empty() {
        eprintln!("error: the map has no walkable cell");
        return ExitCode::from(2);
    }

    println!(
        "map: {name}, units: {}, budget: {}",
        options.units, options.budget
    );
    if options.groups.is_some() && options.goals.is_some() {
        eprintln!("error: --groups and --goals are different runs; give one");
        return ExitCode::from(2);
    }
    let orders = match (options.groups.or(options.goals), options.classes) {
        (Some(squad_count), _) => squads(&grid, &cells, options.units, squad_count),
        (None, Some(count)) => class_orders(&grid, options.units, count),
        (None, None) => solo_orders(&cells, options.units),
    };
    let share = Sharing::Goals;
    let threads = options.threads.unwrap_or(1);
    let refine = options
        .refine
        .unwrap_or(PathfindingSettings::default().refine);
    let setup = Setup {
        threads,
        lanes: options.lanes.unwrap_or(threads),
        refine,
        weight: options.weight,
        fps: options.fps,
        clutter: options.clutter,
    };
    let run = match run_orders(
        &grid,
        &orders,
        options.budget,
        options.groups.is_some(),
        share,
        options.edits,
        setup,
    ) {
        Ok(run) => run,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    let mut last = format!(
        "frames={} budget={} max_frame_expansions={} p50_frame_ms={:.3} p99_frame_ms={:.3} max_frame_ms={:.3} frames_to_last_path={}",
        run.frames,
        options.budget,
        run.max_expansions,
        percentile(&run.frame_ms, 50.0),
        percentile(&run.frame_ms, 99.0),
        run.frame_ms.last().copied().unwrap_or_default(),
        run.last_path
    );
    last += &format!(
        " expansions={} results_digest={:016x} checksum={:016x}",
        run.expansions, run.digest, run.checksum
    );
    let slowest: Vec<String> = run
        .slowest
        .iter()
        .map(|(ms, frame)| format!("{ms:.3}@{frame}"))
        .collect();
    println!("slowest frames (ms@frame): {}", slowest.join(" "));
    if let Some(threads) = options.threads {
        last += &format!(" threads={threads}");
    }
    if let Some(lanes) = options.lanes {
        last += &format!(" lanes={lanes}");
    }
    if !run.final_costs.is_empty() {
        let costs = run.final_costs.values();
        let mean = costs.map(|&(.., cost)| cost).sum::<f64>() / run.final_costs.len() as f64;
        last += &format!(" final_cost_mean={mean:.3}");
    }
    if options.weight > 1.0 {
        // Each final path against the best between its ends (the map does
        // not change while the units are ordered).
        let mut ratios: Vec<f64> = run
            .final_costs
            .values()
            .filter_map(|&(first, end, cost)| {
                let (_, best) = find_path(&grid, first, end, SearchConfig::default()).ok()?;
                let best = best?.cost;
                (best > 0.0).then(|| cost / best)
            })
            .collect();
        ratios.sort_by(f64::total_cmp);
        let mean = ratios.iter().sum::<f64>() / ratios.len().max(1) as f64;
        last += &format!(
            " final_cost_ratio_mean={mean:.4} final_cost_ratio_max={:.4}",
            ratios.last().copied().unwrap_or(1.0)
        );
    }
    if !run.imbalance.is_empty() {
        last += &format!(
            " lane_imbalance_p50={:.3} lane_imbalance_p99={:.3}",
            percentile(&run.imbalance, 50.0),
            percentile(&run.imbalance, 99.0)
        );
    }
    if let Some(count) = options.classes {
        let worst = run.first_path.iter().max().copied().unwrap_or_default();
        last += &format!(" frames_to_first_path={worst}");
        let by_class: Vec<String> = run
            .first_path_by_class
            .iter()
            .map(|frames| frames.to_string())
            .collect();
        last += &format!(" first_path_by_class={}", by_class.join("/"));
        last += &class_memory(&grid, count, &run);
    }
    if options.terrain || options.swamp > 1 || options.refine.is_some() {
        let worst = run.first_path.iter().max().copied().unwrap_or_default();
        last += &format!(" frames_to_first_path={worst}");
        // What quick routes keep per map beside the grid: its coarse graph
        // (the one the plugin built for unit size 1), against the grid's
        // own memory with its regions labelled; and the frame (after the
        // orders) it was there.
        grid.label_regions_now();
        let cells = grid.cell_count() as f64;
        let coarse = run
            .graph_bytes
            .unwrap_or_else(|| CoarseGraph::build(&grid.size_class(1)).memory_bytes())
            as f64;
        last += &format!(
            " grid_bytes_per_cell={:.3} coarse_bytes_per_cell={:.3} graph_frame={} graph_wait_ms={:.3}",
            grid.memory_bytes() as f64 / cells,
            coarse / cells,
            run.graph_frame
                .map_or("none".to_string(), |f| f.to_string()),
            run.graph_wait.as_secs_f64() * 1e3
        );
        let mean = |frames: &[u32]| {
            frames.iter().map(|&f| f as f64).sum::<f64>() / frames.len().max(1) as f64
        };
        println!(
            "refinement {}: first path mean {:.1} worst {worst} frames; final path mean {:.1} worst {} frames",
            if refine { "on" } else { "off" },
            mean(&run.first_path),
            mean(&run.final_path),
            run.final_path.iter().max().copied().unwrap_or_default(),
        );
        if !run.quick_ratios.is_empty() {
            let ratios = &run.quick_ratios;
            last += &format!(
                " quick_cost_ratio_mean={:.4} quick_cost_ratio_p95={:.4} quick_illegal={}",
                ratios.iter().sum::<f64>() / ratios.len() as f64,
                percentile(ratios, 95.0),
                run.quick_illegal
            );
        }
    }
    if options.edits > 0 {
        last += &format!(
            " edit_p50_ms={:.4} edit_max_ms={:.4} edit_flagged={}",
            percentile(&run.edit_ms, 50.0),
            run.edit_ms.last().copied().unwrap_or_default(),
            run.flagged
        );
    }
    // Both comparisons are against every unit searched on its own.
    if options.goals.is_some() || options.groups.is_some() {
        let alone = match run_orders(
            &grid,
            &orders,
            options.budget,
            false,
            Sharing::None,
            0,
            setup,
        ) {
            Ok(alone) => alone,
            Err(message) => {
                eprintln!("error: {message}");
                return ExitCode::FAILURE;
            }
        };
        let ratio = run.expansions as f64 / alone.expansions.max(1) as f64;
        let what = if options.goals.is_some() {
            last += &format!(" shared_goal_ratio={ratio:.4}");
            "shared goals"
        } else {
            last += &format!(" group_expansion_ratio={ratio:.4}");
            "group orders"
        };
        println!(
            "{what}: {} expansions in {} frames; every unit searched alone: {} expansions in {} frames",
            run.expansions, run.last_path, alone.expansions, alone.last_path
        );
    }
    println!("{last}");
    ExitCode::SUCCESS
}

/// Units and their goal: one start cell per unit, one goal per order.
struct Orders {
    /// Start cell of each unit and the index of its goal.
    units: Vec<(Cell, usize)>,
    goals: Vec<Cell>,
    /// Each unit's movement class (none: the grid's own).
    classes: Vec<ClassId>,
}

/// Random starts and goals, one per unit, unit `i` of class `i % count`,
/// each in the largest region of its class.
fn class_orders(grid: &NavGrid, units: usize, count: usize) -> Orders {
    let mut rng = Lcg(2026);
    let regions: Vec<Vec<Cell>> = (0..count as u8)
        .map(|class| {
            let view = grid
                .view(UnitKind::new(ClassId::from_index(class), 1))
                .expect("a registered class");
            support::main_region_of(view)
        })
        .collect();
    let mut orders = Orders {
        units: Vec::new(),
        goals: Vec::new(),
        classes: Vec::new(),
    };
    for i in 0..units {
        let class = i % count;
        let cells = &regions[class];
        let start = cells[rng.below(cells.len())];
        orders.goals.push(cells[rng.below(cells.len())]);
        orders.units.push((start, i));
        orders.classes.push(ClassId::from_index(class as u8));
    }
    orders
}

/// The memory figures of a run with `count` movement classes: the bytes a
/// cell of the grid holds with every class's layer built and labelled (the
/// terrain among them, one byte), the bytes per cell each class beside the
/// default adds, against what one more unit size adds to a grid without
/// classes, and the coarse graphs' bytes per cell, all classes together.
fn class_memory(grid: &NavGrid, count: usize, run: &Run) -> String {
    let cells = grid.cell_count() as f64;
    for class in 0..count as u8 {
        grid.view(UnitKind::new(ClassId::from_index(class), 1))
            .expect("a registered class")
            .label_regions_now();
    }
    let per_class = grid.class_layer_bytes() as f64 / cells / (count - 1).max(1) as f64;
    // One unit size more on the same ground without classes.
    let plain = NavGrid::from_costs(grid.width(), grid.height(), grid.costs().to_vec())
        .expect("the same size")
        .with_neighborhood(grid.neighborhood());
    plain.label_regions_now();
    let before = plain.memory_bytes();
    plain.size_class(2).label_regions_now();
    let per_size = (plain.memory_bytes() - before) as f64 / cells;
    format!(
        " classes={count} grid_bytes_per_cell={:.3} class_bytes_per_cell={per_class:.3} size_bytes_per_cell={per_size:.3} coarse_bytes_per_cell={:.3}",
        grid.memory_bytes() as f64 / cells,
        run.class_graph_bytes as f64 / cells
    )
}

/// Random starts and goals, one per unit.
fn solo_orders(cells: &[Cell], units: usize) -> Orders {
    let mut rng = Lcg(2026);
    let mut orders = Orders {
        units: Vec::new(),
        goals: Vec::new(),
        classes: Vec::new(),
    };
    for i in 0..units {
        let start = cells[rng.below(cells.len())];
        orders.goals.push(cells[rng.below(cells.len())]);
        orders.units.push((start, i));
    }
    orders
}

/// Whether requests with one goal share a search.
#[derive(Clone, Copy, PartialEq)]
enum Sharing {
    /// The plugin's default: they do.
    Goals,
    /// Every request searched on its own: the baseline.
    None,
}

/// `groups` squads: units packed breadth-first on walkable cells around a
/// random spot, each squad with one random goal.
fn squads(grid: &NavGrid, cells: &[Cell], units: usize, groups: usize) -> Orders {
    let mut rng = Lcg(2026);
    let mut orders = Orders {
        units: Vec::new(),
        goals: Vec::new(),
        classes: Vec::new(),
    };
    let mut taken = std::collections::HashSet::new();
    for group in 0..groups {
        let size = units / groups + usize::from(group < units % groups);
        let centre = cells[rng.below(cells.len())];
        orders.goals.push(cells[rng.below(cells.len())]);
        let mut queue = std::collections::VecDeque::from([centre]);
        let mut seen = std::collections::HashSet::from([centre]);
        let mut placed = 0;
        while let Some(cell) = queue.pop_front() {
            if placed == size {
                break;
            }
            if taken.insert(cell) {
                orders.units.push((cell, group));
                placed += 1;
            }
            for (next, _) in grid.neighbors(cell) {
                if seen.insert(next) {
                    queue.push_back(next);
                }
            }
        }
    }
    orders
}

/// What a run measured.
struct Run {
    frames: u32,
    frame_ms: Vec<f64>,
    /// Per frame that spent its whole budget in several lanes, the slowest
    /// lane's time over the mean lane's, sorted.
    imbalance: Vec<f64>,
    /// The slowest frames, slowest first: (ms, frame).
    slowest: Vec<(f64, u32)>,
    max_expansions: u64,
    last_path: u32,
    expansions: u64,
    /// Time of each edit, sorted.
    edit_ms: Vec<f64>,
    /// Paths the edits flagged.
    flagged: usize,
    /// Per unit, frames from the order to its first path (a provisional
    /// one, with refinement) and to its final one.
    first_path: Vec<u32>,
    final_path: Vec<u32>,
    /// Per movement class (with `--classes`), the most frames one of its
    /// units waited for its first path.
    first_path_by_class: Vec<u32>,
    /// Per unit, its last final path: first and last cell, and cost.
    final_costs: std::collections::HashMap<Entity, (Cell, Cell, f64)>,
    /// Per unit with both, the cost of its last provisional path over that
    /// of its final one, sorted.
    quick_ratios: Vec<f64>,
    /// Provisional paths that broke the move rules on the grid they came
    /// on (a wall, a cut corner, a gap).
    quick_illegal: usize,
    /// A hash of every answer (frame, unit, status, cost, cells,
    /// expansions, grid version): two runs with the same digest answered
    /// the same units with the same paths in the same frames.
    digest: u64,
    /// The frame (after the orders) the map's coarse graph for units of a
    /// cell was there, if it was, and its bytes then.
    graph_frame: Option<u32>,
    /// `FrontierChecksum::total` after the last frame.
    checksum: u64,
    /// How long frames waited for the coarse graph's build, in all.
    graph_wait: std::time::Duration,
    graph_bytes: Option<usize>,
    /// The bytes of every coarse graph of the map at the end, one per
    /// movement class and size that wanted quick routes.
    class_graph_bytes: usize,
}

/// How the plugin is set up: threads, search lanes, quick routes first
/// or not, and the heuristic weight of the searches.
#[derive(Clone, Copy)]
struct Setup {
    threads: usize,
    lanes: usize,
    refine: bool,
    weight: f32,
    /// Frames a second the run is held to while a coarse graph is being
    /// built (0: as fast as it can).
    fps: u32,
    /// One more resource registered before the map, and this many other
    /// entities spawned and despawned.
    clutter: Option<usize>,
}

fn app_with(grid: &NavGrid, budget: u32, share: Sharing, setup: Setup) -> App {
    let Setup {
        threads,
        lanes,
        refine,
        weight,
        clutter,
        ..
    } = setup;
    let mut app = App::new();
    // Bevy gives the compute pool what the I/O and async pools leave: one
    // thread on a 2-core machine. Searches in T lanes want T. A coarse
    // graph's build runs on the async compute pool as Bevy sizes it for a
    // game (a quarter of the cores, at least one, at most four), so that
    // on a small machine it leaves the frame's lanes their cores.
    let mut pools = TaskPoolOptions::default();
    pools.compute.min_threads = threads;
    app.add_plugins((
        MinimalPlugins.set(TaskPoolPlugin {
            task_pool_options: pools,
        }),
        FrontierPlugins::default(),
    ));
    // Fixed frame time: the same run every time.
    app.insert_resource(bevy::time::TimeUpdateStrategy::ManualDuration(
        std::time::Duration::from_millis(16),
    ));
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: budget,
        max_in_flight: 16,
        share_goals: share == Sharing::Goals,
        search_lanes: lanes,
        threads,
        refine,
        heuristic_weight: weight,
        ..default()
    });
    app.init_resource::<FrontierChecksum>();
    if let Some(count) = clutter {
        spawn_clutter(&mut app, count);
    }
    let map = app
        .world_mut()
        .spawn((grid.clone(), Transform::default()))
        .id();
    #[cfg(feature = "serialize")]
    if let Some(baked) = baking::BAKED.get() {
        app.world_mut()
            .entity_mut(map)
            .insert(baked.coarse_graphs());
    }
    #[cfg(not(feature = "serialize"))]
    let _ = map;
    app
}

/// `--bake FILE` and `--baked FILE`: the grid's coarse graphs built before
/// the first frame and written to FILE, or the grid and its graphs read
/// from FILE. Both runs start with every class's graph in place, so they
/// give the same digest when the file holds what was built.
#[cfg(feature = "serialize")]
mod baking {
    use std::path::Path;
    use std::sync::OnceLock;

    use bevy_frontier::bake::BakedMap;
    use bevy_frontier::core::{ClassId, NavGrid, UnitKind};

    /// The map baked or read, whose graphs every run's map gets.
    pub static BAKED: OnceLock<BakedMap> = OnceLock::new();

    /// The grid to run on: `grid` with its graphs for `classes` classes
    /// built and written to `path`, or the grid read from `path`.
    pub fn bake_or_load(
        grid: &NavGrid,
        classes: usize,
        bake: bool,
        path: &Path,
    ) -> Result<NavGrid, String> {
        let began = std::time::Instant::now();
        let baked = if bake {
            let kinds: Vec<UnitKind> = (0..classes as u8)
                .map(|class| UnitKind::new(ClassId::from_index(class), 1))
                .collect();
            let baked = BakedMap::bake(grid.clone(), &kinds);
            let bytes = baked.to_bytes().map_err(|error| error.to_string())?;
            std::fs::write(path, &bytes).map_err(|error| format!("{}: {error}", path.display()))?;
            println!(
                "baked: {} bytes, {} graphs, grid_memory_bytes={} in {:.3} s",
                bytes.len(),
                baked.graphs.len(),
                baked.grid.memory_bytes(),
                began.elapsed().as_secs_f64()
            );
            baked
        } else {
            let bytes =
                std::fs::read(path).map_err(|error| format!("{}: {error}", path.display()))?;
            let baked = BakedMap::from_bytes(&bytes).map_err(|error| error.to_string())?;
            if baked.grid.costs() != grid.costs() {
                return Err(format!("{} is not a bake of this map", path.display()));
            }
            println!(
                "loaded: {} bytes, {} graphs in {:.3} s",
                bytes.len(),
                baked.graphs.len(),
                began.elapsed().as_secs_f64()
            );
            baked
        };
        let grid = baked.grid.clone();
        let _ = BAKED.set(baked);
        Ok(grid)
    }
}

/// What a game may do before its level (a menu, an overlay): one more
/// resource, and `count` entities spawned and despawned in a shuffled
/// order, so that every unit gets another entity id than it would have.
fn spawn_clutter(app: &mut App, count: usize) {
    #[derive(Resource)]
    struct Menu;
    #[derive(Component)]
    struct Button;
    app.insert_resource(Menu);
    let mut spawned: Vec<Entity> = (0..count)
        .map(|_| app.world_mut().spawn((Button, Transform::default())).id())
        .collect();
    let mut rng = Lcg(count as u64);
    while !spawned.is_empty() {
        let i = rng.below(spawned.len());
        app.world_mut().despawn(spawned.swap_remove(i));
    }
}

fn spawn_units(app: &mut App, orders: &Orders) -> Vec<Entity> {
    orders
        .units
        .iter()
        .enumerate()
        .map(|(i, &(start, _))| {
            let position = Vec3::new(start.x as f32, start.y as f32, 0.0);
            let mut unit = app
                .world_mut()
                .spawn((Mover { speed: 4.0 }, Transform::from_translation(position)));
            if let Some(&class) = orders.classes.get(i) {
                unit.insert(MovementClass(class));
            }
            unit.id()
        })
        .collect()
}

fn goal_of(orders: &Orders, unit: usize) -> Vec2 {
    let goal = orders.goals[orders.units[unit].1];
    Vec2::new(goal.x as f32, goal.y as f32)
}

/// Whether a unit has what it walks by: a route, or an answer of its own
/// (`final_only`: not a provisional one).
fn has_path(app: &App, unit: Entity, final_only: bool) -> bool {
    match app.world().get::<PathResult>(unit) {
        Some(result) => !final_only || result.status != PathStatus::Provisional,
        None => {
            matches!(
                app.world().get::<Steering>(unit),
                Some(Steering::Following { .. })
            ) || app.world().get::<Arrived>(unit).is_some()
        }
    }
}

/// Orders every unit at once (as squads with `grouped`) and runs frames
/// until every unit has its path.
#[allow(clippy::too_many_arguments)]
fn run_orders(
    grid: &NavGrid,
    orders: &Orders,
    budget: u32,
    grouped: bool,
    share: Sharing,
    edits: usize,
    setup: Setup,
) -> Result<Run, String> {
    let mut app = app_with(grid, budget, share, setup);
    let units = spawn_units(&mut app, orders);
    // The map's first frame, which starts its graph's build.
    let began = std::time::Instant::now();
    app.update();
    pace(&mut app, setup, began);
    if grouped {
        for (group, &goal) in orders.goals.iter().enumerate() {
            let members = orders
                .units
                .iter()
                .zip(&units)
                .filter(|((_, g), _)| *g == group)
                .map(|(_, &unit)| unit);
            let goal = Vec2::new(goal.x as f32, goal.y as f32);
            app.world_mut().write_message(GroupMove::new(members, goal));
        }
    } else {
        for (i, &unit) in units.iter().enumerate() {
            let goal = goal_of(orders, i);
            app.world_mut()
                .entity_mut(unit)
                .insert(PathRequest::new(goal));
        }
    }
    let mut run = Run {
        frames: 0,
        frame_ms: Vec::new(),
        slowest: Vec::new(),
        imbalance: Vec::new(),
        max_expansions: 0,
        last_path: 0,
        expansions: 0,
        edit_ms: Vec::new(),
        flagged: 0,
        first_path: Vec::new(),
        first_path_by_class: Vec::new(),
        final_path: Vec::new(),
        quick_ratios: Vec::new(),
        final_costs: Default::default(),
        quick_illegal: 0,
        digest: support::FNV_START,
        checksum: 0,
        graph_wait: std::time::Duration::ZERO,
        graph_frame: None,
        graph_bytes: None,
        class_graph_bytes: 0,
    };
    let answered = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut quick_cost: std::collections::HashMap<Entity, f64> = Default::default();
    let sink = answered.clone();
    app.add_observer(move |ready: On<PathReady>| sink.lock().unwrap().push(ready.entity));
    let mut waiting = units.clone();
    let mut unseen: Vec<(usize, Entity)> = units.iter().copied().enumerate().collect();
    while !waiting.is_empty() {
        let began = std::time::Instant::now();
        app.update();
        run.frames += 1;
        if run.graph_frame.is_none()
            && let Some(bytes) = graph_bytes(&mut app)
        {
            run.graph_frame = Some(run.frames);
            run.graph_bytes = Some(bytes);
        }
        pace(&mut app, setup, began);
        run.checksum = app.world().resource::<FrontierChecksum>().total();
        let stats = app.world().resource::<PathfindingStats>();
        run.graph_wait += stats.graph_wait;
        run.frame_ms.push(stats.frame_time.as_secs_f64() * 1e3);
        run.slowest
            .push((stats.frame_time.as_secs_f64() * 1e3, run.frames));
        let lanes: Vec<f64> = stats.lane_times.iter().map(|t| t.as_secs_f64()).collect();
        let mean = lanes.iter().sum::<f64>() / lanes.len().max(1) as f64;
        let full = stats.frame_expansions + stats.frame_reading >= budget as u64;
        if lanes.len() > 1 && full && mean > 0.0 {
            run.imbalance
                .push(lanes.iter().copied().fold(0.0, f64::max) / mean);
        }
        run.max_expansions = run.max_expansions.max(stats.frame_expansions);
        run.expansions += stats.frame_expansions;
        for unit in std::mem::take(&mut *answered.lock().unwrap()) {
            let index = units.iter().position(|&u| u == unit);
            if let Some(result) = app.world().get::<PathResult>(unit) {
                run.digest = fold_answer(run.digest, run.frames, index, result);
                match result.status {
                    PathStatus::Provisional => {
                        let legal = result
                            .map
                            .and_then(|map| app.world().get::<NavGrid>(map))
                            .is_some_and(|grid| {
                                grid.size_class(result.size).can_walk(&result.cells)
                            });
                        run.quick_illegal += usize::from(!legal);
                        // A first stretch is not the whole route.
                        if !result.ends_short {
                            quick_cost.insert(unit, result.cost as f64);
                        }
                    }
                    PathStatus::Complete => {
                        if let (Some(&first), Some(&last)) =
                            (result.cells.first(), result.cells.last())
                        {
                            run.final_costs
                                .insert(unit, (first, last, result.cost as f64));
                        }
                        if let Some(quick) = quick_cost.remove(&unit)
                            && result.cost > 0.0
                        {
                            run.quick_ratios.push(quick / result.cost as f64);
                        }
                    }
                    _ => {}
                }
            }
        }
        let before = waiting.len();
        waiting.retain(|&unit| !has_path(&app, unit, true));
        if waiting.len() < before {
            run.last_path = run.frames;
        }
        for _ in waiting.len()..before {
            run.final_path.push(run.frames);
        }
        let before = unseen.len();
        unseen.retain(|&(i, unit)| {
            if !has_path(&app, unit, false) {
                return true;
            }
            if let Some(class) = orders.classes.get(i) {
                let class = class.index() as usize;
                if run.first_path_by_class.len() <= class {
                    run.first_path_by_class.resize(class + 1, 0);
                }
                run.first_path_by_class[class] = run.frames;
            }
            false
        });
        for _ in unseen.len()..before {
            run.first_path.push(run.frames);
        }
        if run.frames > 1_000_000 {
            return Err(format!("{} units still without a path", waiting.len()));
        }
    }
    run.frame_ms.sort_by(f64::total_cmp);
    run.slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
    run.slowest.truncate(5);
    run.imbalance.sort_by(f64::total_cmp);
    run.quick_ratios.sort_by(f64::total_cmp);
    run.class_graph_bytes = app
        .world_mut()
        .query::<&CoarseGraphs>()
        .iter(app.world())
        .map(CoarseGraphs::memory_bytes)
        .sum();
    if edits > 0 {
        edit_cells(&mut app, &mut run, edits);
    }
    Ok(run)
}

/// Holds a frame that began at `began` to `setup.fps` frames a second
/// while a coarse graph is being built: a game's frames while the build
/// runs on a worker thread, since the window a build is given is in frames.
fn pace(app: &mut App, setup: Setup, began: std::time::Instant) {
    let building = app
        .world_mut()
        .query::<&CoarseGraphs>()
        .iter(app.world())
        .any(CoarseGraphs::is_building);
    if building && setup.fps > 0 {
        let frame = std::time::Duration::from_secs_f64(1.0 / setup.fps as f64);
        std::thread::sleep(frame.saturating_sub(began.elapsed()));
    }
}

/// The bytes of the map's coarse graph for units of one cell, once built.
fn graph_bytes(app: &mut App) -> Option<usize> {
    app.world_mut()
        .query::<&CoarseGraphs>()
        .iter(app.world())
        .find_map(|graphs| {
            graphs
                .graph(UnitKind::sized(1))
                .map(|graph| graph.memory_bytes())
        })
}

/// `digest` with one answer folded in (FNV-1a over its fields).
fn fold_answer(digest: u64, frame: u32, unit: Option<usize>, result: &PathResult) -> u64 {
    let fields = [
        frame as u64,
        unit.map_or(u64::MAX, |i| i as u64),
        result.cost.to_bits() as u64,
        result.cells.len() as u64,
        result
            .cells
            .last()
            .map_or(0, |c| (c.x as u64) << 32 | c.y as u64),
        result.expansions,
        result.grid_version,
    ];
    let status = format!("{:?}{}", result.status, result.invalidated);
    let bytes = fields
        .iter()
        .flat_map(|field| field.to_le_bytes())
        .chain(status.bytes());
    support::fnv1a(digest, bytes)
}

/// Toggles `edits` random cells between wall and ground, one a frame, and
/// times each: the grid's own update plus the plugin's path flagging.
fn edit_cells(app: &mut App, run: &mut Run, edits: usize) {
    let flagged = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = flagged.clone();
    app.add_observer(move |_: On<PathInvalidated>| {
        count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    });
    let mut rng = Lcg(99);
    let map = app
        .world_mut()
        .query_filtered::<Entity, With<NavGrid>>()
        .single(app.world())
        .expect("one map");
    for _ in 0..edits {
        let mut grid = app.world_mut().get_mut::<NavGrid>(map).expect("the map");
        let cell = Cell::new(
            rng.below(grid.width() as usize) as u32,
            rng.below(grid.height() as usize) as u32,
        );
        let cost = if grid.is_walkable(cell) {
            NavGrid::BLOCKED
        } else {
            1
        };
        let began = std::time::Instant::now();
        let _ = grid.set_cost(cell, cost);
        let grid_ms = began.elapsed().as_secs_f64() * 1e3;
        app.update();
        let stats = app.world().resource::<PathfindingStats>();
        run.edit_ms
            .push(grid_ms + stats.invalidate_time.as_secs_f64() * 1e3);
    }
    run.edit_ms.sort_by(f64::total_cmp);
    run.flagged = flagged.load(std::sync::atomic::Ordering::Relaxed);
}
