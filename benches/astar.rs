//! Time per path on the 512×512 MovingAI maps: bevy_frontier's search
//! against the `pathfinding` crate's `astar` given the same neighbour rule
//! (octile moves, no corner cutting) and the same fixed-point costs, in the
//! same run. `frontier` is the default search (jump point search on these
//! uniform-cost maps); `frontier_astar` is the same search with jump points
//! turned off, plain A*. `random512-10-0-terrain` is random512-10-0 with a
//! fifth of its open cells at cost 4 (`rough_terrain` in
//! `examples/support`), where every search is a plain A*.
//!
//! ```text
//! cargo bench --bench astar
//! ```
//!
//! Reads `$FRONTIER_MOVINGAI_DIR` or `../shared/movingai`; prints a notice
//! and measures nothing when neither exists.

use std::hint::black_box;
use std::path::PathBuf;

use bevy_frontier::core::moves::{COST_SCALE, DIAGONAL};
use bevy_frontier::core::{
    Cell, MovingAiMap, NavGrid, Scenario, ScratchPool, Search, SearchConfig, find_path,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

#[allow(dead_code)]
#[path = "../examples/support/mod.rs"]
mod support;

/// Every `STRIDE`-th scenario: a spread over all the difficulty buckets.
const STRIDE: usize = 16;

fn data_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("FRONTIER_MOVINGAI_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/movingai"));
    dir.join("maps").is_dir().then_some(dir)
}

fn pathfinding_astar(grid: &NavGrid, start: Cell, goal: Cell) -> Option<u64> {
    let (w, h) = (grid.width() as i64, grid.height() as i64);
    let costs = grid.costs();
    let walkable = move |x: i64, y: i64| {
        x >= 0 && y >= 0 && x < w && y < h && costs[(y * w + x) as usize] != NavGrid::BLOCKED
    };
    const MOVES: [(i64, i64); 8] = [
        (1, 0),
        (-1, 0),
        (0, 1),
        (0, -1),
        (1, 1),
        (-1, 1),
        (1, -1),
        (-1, -1),
    ];
    let successors = |&(x, y): &(i64, i64)| {
        MOVES.iter().filter_map(move |&(dx, dy)| {
            let (nx, ny) = (x + dx, y + dy);
            let diagonal = dx != 0 && dy != 0;
            if !walkable(nx, ny) || (diagonal && !(walkable(nx, y) && walkable(x, ny))) {
                return None;
            }
            let cell_cost = costs[(ny * w + nx) as usize] as u64;
            Some((
                (nx, ny),
                cell_cost * if diagonal { DIAGONAL } else { COST_SCALE },
            ))
        })
    };
    let goal = (goal.x as i64, goal.y as i64);
    let octile = |&(x, y): &(i64, i64)| {
        let (dx, dy) = ((x - goal.0).unsigned_abs(), (y - goal.1).unsigned_abs());
        let (low, high) = (dx.min(dy), dx.max(dy));
        (high - low) * COST_SCALE + low * DIAGONAL
    };
    pathfinding::prelude::astar(&(start.x as i64, start.y as i64), successors, octile, |p| {
        *p == goal
    })
    .map(|(_, cost)| cost)
}

fn bench(c: &mut Criterion) {
    let Some(dir) = data_dir() else {
        eprintln!("no MovingAI data (set FRONTIER_MOVINGAI_DIR): nothing measured");
        return;
    };
    for (map, scen, terrain) in [
        (
            "random/random512-10-0.map",
            "random/random512-10-0.map.scen",
            false,
        ),
        (
            "random/random512-10-0.map",
            "random/random512-10-0.map.scen",
            true,
        ),
        ("bg512/AR0011SR.map", "bg512/AR0011SR.map.scen", false),
    ] {
        let mut grid = MovingAiMap::load(dir.join("maps").join(map))
            .unwrap()
            .to_nav_grid();
        if terrain {
            grid = support::rough_terrain(&grid, 20, 4, 12);
        }
        let scenarios = Scenario::load_all(dir.join("scenarios").join(scen)).unwrap();
        let sample: Vec<&Scenario> = scenarios.iter().step_by(STRIDE).collect();

        // All must find the same costs, or the race means nothing.
        for s in &sample {
            let theirs = pathfinding_astar(&grid, s.start, s.goal).unwrap();
            for jump_points in [true, false] {
                let config = SearchConfig {
                    jump_points,
                    ..SearchConfig::default()
                };
                let (_, ours) = find_path(&grid, s.start, s.goal, config).unwrap();
                assert!((ours.unwrap().cost - theirs as f64 / COST_SCALE as f64).abs() < 1e-9);
            }
        }

        let name = map.rsplit('/').next().unwrap().trim_end_matches(".map");
        let name = if terrain {
            format!("{name}-terrain")
        } else {
            name.to_string()
        };
        let mut group = c.benchmark_group(name);
        group.throughput(Throughput::Elements(sample.len() as u64));
        group.sample_size(10);
        for (name, jump_points) in [("frontier", true), ("frontier_astar", false)] {
            let config = SearchConfig {
                jump_points,
                ..SearchConfig::default()
            };
            group.bench_function(name, |b| {
                let mut pool = ScratchPool::new();
                b.iter(|| {
                    for s in &sample {
                        let mut search =
                            Search::new_in(&mut pool, &grid, s.start, s.goal, config).unwrap();
                        search.run(&grid);
                        black_box(search.path().map(|p| p.cost));
                        pool.give(search.into_scratch());
                    }
                })
            });
        }
        group.bench_function("pathfinding_astar", |b| {
            b.iter(|| {
                for s in &sample {
                    black_box(pathfinding_astar(&grid, s.start, s.goal));
                }
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
