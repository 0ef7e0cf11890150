//! The graph against plain searches on random grids.

use super::*;
use crate::core::search::Path;
use crate::core::{Cell, NavGrid, SearchConfig, SizeClass, find_path};

fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 33
}

fn random_grid(seed: u64, w: u32, h: u32) -> NavGrid {
    let mut s = seed;
    let costs = (0..w * h)
        .map(|_| match lcg(&mut s) % 10 {
            0..=1 => 0,
            2..=3 => 4,
            _ => 1,
        })
        .collect();
    NavGrid::from_costs(w, h, costs).unwrap()
}

fn route(graph: &CoarseGraph, class: &SizeClass, start: Cell, goal: Cell) -> Option<Path> {
    let mut route = CoarseRoute::new(start, goal, 1.0);
    while route.step(graph, class, 7) == RouteStatus::Running {}
    route.path(class)
}

#[test]
fn routes_are_legal_and_found_exactly_when_a_path_exists() {
    for seed in 0..40 {
        let (w, h) = (20 + (seed as u32 * 7) % 45, 17 + (seed as u32 * 11) % 40);
        let grid = random_grid(seed, w, h);
        for size in [1, 2] {
            let class = grid.size_class(size);
            let graph = CoarseGraph::build(&class);
            let mut s = seed * 31 + size as u64;
            for _ in 0..30 {
                let a = Cell::new(lcg(&mut s) as u32 % w, lcg(&mut s) as u32 % h);
                let b = Cell::new(lcg(&mut s) as u32 % w, lcg(&mut s) as u32 % h);
                let config = SearchConfig {
                    size,
                    ..SearchConfig::default()
                };
                let best = find_path(&grid, a, b, config).ok().and_then(|(_, p)| p);
                let found = route(&graph, &class, a, b);
                assert_eq!(
                    found.is_some(),
                    best.is_some(),
                    "seed {seed} size {size} {a:?}→{b:?}"
                );
                if let (Some(found), Some(best)) = (found, best) {
                    assert_eq!(found.cells.first(), Some(&a));
                    assert_eq!(found.cells.last(), Some(&b));
                    assert!(class.can_walk(&found.cells), "seed {seed} illegal route");
                    assert!(found.cost >= best.cost - 1e-6);
                }
            }
        }
    }
}

#[test]
fn edits_dirty_only_the_clusters_round_them_and_repair_keeps_routes_right() {
    let mut grid = random_grid(7, 64, 64);
    let mut graph = CoarseGraph::build(&grid.size_class(1));
    assert_eq!(graph.dirty_count(), 0);
    // A cluster inside the map: it and its four neighbours.
    grid.set_cost(Cell::new(20, 20), 9).unwrap();
    assert_eq!(graph.note_edits(&grid.size_class(1)), 5);
    // A corner cluster: it and its two neighbours.
    grid.set_cost(Cell::new(63, 0), 9).unwrap();
    assert_eq!(graph.note_edits(&grid.size_class(1)), 8);
    let mut s = 99;
    for _ in 0..200 {
        let cell = Cell::new(lcg(&mut s) as u32 % 64, lcg(&mut s) as u32 % 64);
        grid.set_cost(cell, [0, 1, 4][lcg(&mut s) as usize % 3])
            .unwrap();
        let class = grid.size_class(1);
        graph.repair(&class, u64::MAX);
        assert!(graph.is_ready(&class));
        let fresh = CoarseGraph::build(&class);
        assert_eq!(graph.clusters, fresh.clusters);
    }
    // Another grid of the same size: everything.
    grid.replace(random_grid(8, 64, 64));
    assert_eq!(graph.note_edits(&grid.size_class(1)), 16);
}

#[test]
fn a_route_found_under_edits_is_legal_on_the_grid_it_ends_on() {
    let (mut found, mut cut) = (0, 0);
    for seed in 0..8 {
        let mut grid = random_grid(seed + 100, 80, 80);
        let mut graph = CoarseGraph::build(&grid.size_class(1));
        let mut s = seed;
        for _ in 0..10 {
            let a = Cell::new(lcg(&mut s) as u32 % 80, lcg(&mut s) as u32 % 80);
            let b = Cell::new(lcg(&mut s) as u32 % 80, lcg(&mut s) as u32 % 80);
            let mut route = CoarseRoute::new(a, b, 1.0);
            let mut prefix: Vec<Cell> = Vec::new();
            loop {
                let status = route.step(&graph, &grid.size_class(1), 5);
                // What is refined only grows, from the start.
                if let Some(refined) = route.refined(&grid.size_class(1)) {
                    assert_eq!(refined.cells.first(), Some(&a));
                    assert!(refined.cells.starts_with(&prefix));
                    prefix = refined.cells;
                }
                if status != RouteStatus::Running {
                    if let Some(path) = route.path(&grid.size_class(1)) {
                        assert!(grid.size_class(1).can_walk(&path.cells));
                        found += 1;
                    } else {
                        cut += 1;
                    }
                    break;
                }
                let cell = Cell::new(lcg(&mut s) as u32 % 80, lcg(&mut s) as u32 % 80);
                grid.set_cost(cell, [0, 1][lcg(&mut s) as usize % 2])
                    .unwrap();
                graph.repair(&grid.size_class(1), u64::MAX);
            }
        }
    }
    assert!(found > 20 && cut > 0, "found {found}, cut {cut}");
}

#[test]
fn a_route_on_rough_ground_costs_little_more_than_the_best() {
    let grid = random_grid(3, 200, 200);
    let class = grid.size_class(1);
    let graph = CoarseGraph::build(&class);
    let mut s = 5;
    let (mut sum, mut count) = (0.0, 0);
    for _ in 0..50 {
        let a = Cell::new(lcg(&mut s) as u32 % 200, lcg(&mut s) as u32 % 200);
        let b = Cell::new(lcg(&mut s) as u32 % 200, lcg(&mut s) as u32 % 200);
        let best = find_path(&grid, a, b, SearchConfig::default())
            .ok()
            .and_then(|(_, p)| p);
        if let (Some(found), Some(best)) = (route(&graph, &class, a, b), best)
            && best.cost > 0.0
        {
            sum += found.cost / best.cost;
            count += 1;
        }
    }
    // 1.15 on this map of 20% walls and 20% ground at cost 4; about
    // 1.06–1.09 on the benchmark maps with the stress test's terrain.
    let mean = sum / count as f64;
    assert!(mean < 1.2, "mean {mean}");
}
