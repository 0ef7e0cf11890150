//! Solves every scenario of a MovingAI benchmark and checks the costs.
//!
//! ```text
//! cargo run --release --example movingai -- MAP SCEN [--budget N] [--astar]
//! ```
//!
//! With `--budget N` each search runs in slices of N expansions, as the
//! plugin runs it across frames; the costs must not change. With `--astar`
//! the search is plain A* even where jump point search applies. The last
//! line is
//! `scenarios=N mismatches=M mean_us=X expansions_per_sec=Y`.

// A benchmark's wall clock (`clippy.toml` keeps it out of the plugin):
// the examples run natively and time the plugin's systems.
#![allow(clippy::disallowed_methods)]

use std::process::ExitCode;
use std::time::Instant;

use bevy_frontier::core::{
    MovingAiMap, Scenario, Scratch, ScratchPool, Search, SearchConfig, SearchStatus,
};

fn main() -> ExitCode {
    match run() {
        Ok(0) => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("error: {message}");
            eprintln!("usage: movingai MAP SCEN [--budget N] [--astar]");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<usize, String> {
    let mut args = std::env::args().skip(1);
    let mut paths = Vec::new();
    let mut budget = u32::MAX;
    let mut config = SearchConfig::default();
    while let Some(arg) = args.next() {
        if arg == "--astar" {
            config.jump_points = false;
        } else if arg == "--budget" {
            let value = args.next().ok_or("--budget needs a number")?;
            budget = value
                .parse()
                .ok()
                .filter(|&b| b > 0)
                .ok_or(format!("--budget {value:?} is not a positive number"))?;
        } else {
            paths.push(arg);
        }
    }
    let [map_path, scen_path] = &paths[..] else {
        return Err("expected a map file and a scenario file".into());
    };
    let map = MovingAiMap::load(map_path).map_err(|e| format!("{map_path}: {e}"))?;
    let scenarios = Scenario::load_all(scen_path).map_err(|e| format!("{scen_path}: {e}"))?;
    let grid = map.to_nav_grid();
    let mut pool = ScratchPool::new();

    let mut mismatches = 0;
    let mut expansions = 0u64;
    let mut seconds = 0.0;
    for (i, scenario) in scenarios.iter().enumerate() {
        let began = Instant::now();
        let mut search =
            match Search::new_in(&mut pool, &grid, scenario.start, scenario.goal, config) {
                Ok(search) => search,
                Err(error) => {
                    println!("scenario {i}: {error}");
                    mismatches += 1;
                    continue;
                }
            };
        while search.step(&grid, budget) == SearchStatus::Running {}
        seconds += began.elapsed().as_secs_f64();
        expansions += search.expansions();
        let (status, cost) = (search.status(), search.path().map(|p| p.cost));
        pool.give(search.into_scratch());
        let Some(cost) = cost else {
            println!("scenario {i}: {status:?}");
            mismatches += 1;
            continue;
        };
        if !scenario.matches(cost) {
            println!(
                "scenario {i}: {} -> {}: cost {cost:.6}, optimal {}",
                scenario.start, scenario.goal, scenario.optimal_length
            );
            mismatches += 1;
        }
    }
    let count = scenarios.len().max(1) as f64;
    println!(
        "scratch_bytes_per_cell={} open_list_bytes={}",
        Scratch::BYTES_PER_CELL,
        pool.take().memory_bytes() - Scratch::BYTES_PER_CELL * grid.cell_count()
    );
    println!(
        "scenarios={} mismatches={mismatches} mean_us={:.2} expansions_per_sec={:.0}",
        scenarios.len(),
        seconds * 1e6 / count,
        expansions as f64 / seconds.max(f64::MIN_POSITIVE),
    );
    Ok(mismatches)
}
