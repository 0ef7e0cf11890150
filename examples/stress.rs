//! Stress benchmark: many units ask for paths in the same frame; the plugin
//! answers them all without a frame spending more than its node budget.
//!
//! ```text
//! cargo run --release --example stress -- [--map PATH] [--units N] [--budget B]
//! ```
//!
//! The map defaults to `random512-10-0` from `$FRONTIER_MOVINGAI_DIR` or
//! `../shared/movingai`, or a generated 512×512 map with 10% random walls
//! when neither exists. Starts and goals are random walkable cells of one
//! region, the same on every run. The last line is
//! `frames=F budget=B max_frame_expansions=E p50_frame_ms=X p99_frame_ms=Y frames_to_last_path=L`
//! where the frame times are those of the plugin's own systems.

use std::path::PathBuf;
use std::process::ExitCode;

use bevy::prelude::*;
use bevy_frontier::prelude::*;

struct Options {
    map: Option<PathBuf>,
    units: usize,
    budget: u32,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        map: None,
        units: 1000,
        budget: PathfindingSettings::default().nodes_per_frame,
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
            "--budget" => {
                let v = value()?;
                options.budget = v
                    .parse()
                    .ok()
                    .filter(|&b| b > 0)
                    .ok_or(format!("--budget {v:?} is not a positive number"))?;
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(options)
}

/// The map to load, or a generated one.
fn load_grid(path: Option<PathBuf>) -> Result<(NavGrid, String), String> {
    let path = path.or_else(|| {
        let dir = std::env::var_os("FRONTIER_MOVINGAI_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/movingai")
            });
        let default = dir.join("maps/random/random512-10-0.map");
        default.is_file().then_some(default)
    });
    match path {
        Some(path) => {
            let map = MovingAiMap::load(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok((map.to_nav_grid(), path.display().to_string()))
        }
        None => {
            let mut rng = Lcg(7);
            let costs = (0..512 * 512)
                .map(|_| {
                    if rng.below(100) < 10 {
                        NavGrid::BLOCKED
                    } else {
                        1
                    }
                })
                .collect();
            let grid = NavGrid::from_costs(512, 512, costs).map_err(|e| e.to_string())?;
            Ok((grid, "generated 512x512, 10% walls".into()))
        }
    }
}

/// A fixed-seed generator so every run orders the same moves.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}\nusage: stress [--map PATH] [--units N] [--budget B]");
            return ExitCode::from(2);
        }
    };
    let (grid, name) = match load_grid(options.map) {
        Ok(loaded) => loaded,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };

    // Starts and goals from the largest region, so every path exists.
    let mut sizes = vec![0usize; grid.region_count() as usize];
    let walkable: Vec<Cell> = (0..grid.cell_count())
        .map(|i| grid.cell(i))
        .filter(|&c| grid.is_walkable(c))
        .collect();
    for &cell in &walkable {
        sizes[grid.region(cell).unwrap_or_default() as usize] += 1;
    }
    let main_region = (0..sizes.len())
        .max_by_key(|&r| sizes[r])
        .unwrap_or_default() as u32;
    let cells: Vec<Cell> = walkable
        .into_iter()
        .filter(|&c| grid.region(c) == Some(main_region))
        .collect();
    if cells.is_empty() {
        eprintln!("error: the map has no walkable cell");
        return ExitCode::from(2);
    }

    let mut app = App::new();
    app.add_plugins((MinimalPlugins, PathfindingPlugin::default()));
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: options.budget,
        max_in_flight: 16,
        ..default()
    });
    app.world_mut().spawn((grid, Transform::default()));
    let mut rng = Lcg(2026);
    let units: Vec<Entity> = (0..options.units)
        .map(|_| {
            let start = cells[rng.below(cells.len())];
            let goal = cells[rng.below(cells.len())];
            let position = Vec3::new(start.x as f32, start.y as f32, 0.0);
            let goal = Vec2::new(goal.x as f32, goal.y as f32);
            app.world_mut()
                .spawn((
                    Transform::from_translation(position),
                    PathRequest::new(goal),
                ))
                .id()
        })
        .collect();

    println!(
        "map: {name}, units: {}, budget: {}",
        options.units, options.budget
    );
    let mut frame_ms = Vec::new();
    let mut max_expansions = 0;
    let mut frames = 0u32;
    let mut last_path = 0u32;
    let mut answered = 0;
    while answered < units.len() {
        app.update();
        frames += 1;
        let stats = app.world().resource::<PathfindingStats>();
        frame_ms.push(stats.frame_time.as_secs_f64() * 1e3);
        max_expansions = max_expansions.max(stats.frame_expansions);
        if stats.delivered > 0 {
            last_path = frames;
        }
        answered += stats.delivered;
        if frames > 1_000_000 {
            eprintln!("error: requests still unanswered after {frames} frames");
            return ExitCode::FAILURE;
        }
    }
    let statuses = units
        .iter()
        .filter_map(|&u| app.world().get::<PathResult>(u))
        .filter(|r| r.status == PathStatus::Complete)
        .count();
    println!("complete paths: {statuses} of {}", units.len());
    frame_ms.sort_by(f64::total_cmp);
    println!(
        "frames={frames} budget={} max_frame_expansions={max_expansions} p50_frame_ms={:.3} p99_frame_ms={:.3} frames_to_last_path={last_path}",
        options.budget,
        percentile(&frame_ms, 50.0),
        percentile(&frame_ms, 99.0),
    );
    ExitCode::SUCCESS
}
