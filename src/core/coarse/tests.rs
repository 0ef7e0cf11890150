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

/// Whether two graphs hold the same records on both levels.
fn same_records(a: &CoarseGraph, b: &CoarseGraph) -> bool {
    a.levels.lower.bytes().eq(b.levels.lower.bytes())
        && a.levels.upper.bytes().eq(b.levels.upper.bytes())
}

fn route(graph: &CoarseGraph, size_class: &SizeClass, start: Cell, goal: Cell) -> Option<Path> {
    let mut route = CoarseRoute::new(start, goal, 1.0);
    while route.step(graph, size_class, 7) == RouteStatus::Running {}
    route.path(size_class)
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
    // A cell inside a cluster: that cluster (its neighbours follow only if
    // its entrances move when it is built again).
    grid.set_cost(Cell::new(20, 20), 9).unwrap();
    assert_eq!(graph.note_edits(&grid.size_class(1)), 1);
    // A cell on a border: the cluster across it too.
    grid.set_cost(Cell::new(16, 40), 9).unwrap();
    assert_eq!(graph.note_edits(&grid.size_class(1)), 3);
    // A corner of the map: its cluster alone.
    grid.set_cost(Cell::new(63, 0), 9).unwrap();
    assert_eq!(graph.note_edits(&grid.size_class(1)), 4);
    let mut s = 99;
    for _ in 0..200 {
        let cell = Cell::new(lcg(&mut s) as u32 % 64, lcg(&mut s) as u32 % 64);
        grid.set_cost(cell, [0, 1, 4][lcg(&mut s) as usize % 3])
            .unwrap();
        let class = grid.size_class(1);
        graph.repair(&class, u64::MAX);
        assert!(graph.is_ready(&class));
        let fresh = CoarseGraph::build(&class);
        assert!(same_records(&graph, &fresh));
    }
    // Another grid of the same size: everything.
    grid.replace(random_grid(8, 64, 64));
    assert_eq!(graph.note_edits(&grid.size_class(1)), 16);
    assert!(!graph.is_usable(&grid.size_class(1)));
}

#[test]
fn a_graph_repaired_after_edits_over_several_super_clusters_is_the_one_built_afresh() {
    for size in [1, 2] {
        let mut grid = random_grid(21 + size as u64, 200, 140);
        let mut graph = CoarseGraph::build(&grid.size_class(size));
        assert!(graph.super_count() >= 6);
        let mut s = 7 + size as u64;
        for round in 0..60 {
            // A few edits, some in a row along a border or across a
            // cluster, as a game's walls go up.
            for _ in 0..1 + round % 4 {
                let cell = Cell::new(lcg(&mut s) as u32 % 200, lcg(&mut s) as u32 % 140);
                let cost = [0, 1, 4, 0][lcg(&mut s) as usize % 4];
                let end = Cell::new((cell.x + 5).min(199), cell.y);
                grid.fill_rect(cell, end, cost).unwrap();
            }
            let class = grid.size_class(size);
            // Usable meanwhile, on its old records.
            graph.note_edits(&class);
            assert!(graph.is_usable(&class));
            while !graph.is_ready(&class) {
                graph.repair(&class, 500);
            }
            assert!(
                same_records(&graph, &CoarseGraph::build(&class)),
                "size {size}, round {round}"
            );
        }
    }
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

#[test]
fn a_graph_built_in_parts_or_a_few_expansions_at_a_time_is_the_same() {
    for seed in 0..6 {
        let (w, h) = (70 + seed as u32 * 13, 90 - seed as u32 * 7);
        let grid = random_grid(seed + 40, w, h);
        for size in [1, 2] {
            let class = grid.size_class(size);
            let whole = CoarseGraph::build(&class);
            assert!(whole.is_ready(&class));
            assert!(whole.upper_node_count() > 0, "seed {seed}: no level-2 node");
            for parts in [1, 2, 5] {
                let mut build = GraphBuild::new(&class);
                while !build.is_done() {
                    let built: Vec<_> = build
                        .parts(parts)
                        .into_iter()
                        .map(|part| build.build_part(&class, part))
                        .collect();
                    build.install(built);
                }
                let graph = build.into_graph();
                assert!(graph.is_ready(&class));
                assert!(same_records(&graph, &whole), "seed {seed}: {parts} parts");
            }
            // Resumed at every few expansions, as a frame's budget does.
            let mut slow = CoarseGraph::new(&class);
            let mut calls = 0;
            while !slow.is_ready(&class) {
                let spent = slow.repair(&class, 7);
                assert!(spent <= 7, "a repair spent {spent} of 7");
                calls += 1;
            }
            assert!(calls > 100);
            assert!(same_records(&slow, &whole), "seed {seed}: slices");
        }
    }
}

#[test]
fn cost_codes_keep_costs_within_a_sixty_fourth() {
    use super::cost_code::{MAX, NONE, decode, encode};
    for units in 0..=MAX + 100 {
        let code = encode(units);
        assert_ne!(code, NONE);
        let back = decode(code).unwrap();
        let kept = units.min(MAX);
        assert!(
            back.abs_diff(kept) as f64 <= kept as f64 / 64.0 + 0.5,
            "{units} came back as {back}"
        );
    }
    assert_eq!(decode(NONE), None);
    // Codes are ordered as the costs they stand for.
    let decoded: Vec<u32> = (0..NONE).map(|code| decode(code).unwrap()).collect();
    assert!(decoded.windows(2).all(|pair| pair[0] < pair[1]));
}

#[test]
fn the_builds_sweep_finds_what_a_plain_dijkstra_finds() {
    use super::local::{Area, Local, SWEEP_STEP, Sweep};
    for seed in 0..30 {
        let grid = random_grid(seed + 500, 40, 40);
        let class = grid.size_class(1);
        let bounds = (16, 16, 16, 16 - (seed as u32 % 5));
        let area = Area::new(&class, bounds);
        let cells: Vec<u32> = (0..bounds.2 * bounds.3)
            .map(|i| area.padded(i))
            .filter(|&l| area.costs[l as usize] != 0)
            .collect();
        let mut sweep = Sweep::default();
        sweep.prepare(&area);
        let mut local = Local::default();
        for &source in cells.iter().step_by(7) {
            sweep.begin(source, &cells);
            while !sweep.is_over() {
                sweep.run(&area, 13);
            }
            local.begin(&area, &[(source, 0)], None, true);
            local.run(&area, u64::MAX);
            for &cell in &cells {
                let plain = local.cost(cell).map(|g| g as f64 / (1u64 << 20) as f64);
                let swept = sweep.cost(cell).map(|u| u as f64 / SWEEP_STEP[0] as f64);
                match (plain, swept) {
                    (Some(a), Some(b)) => assert!(
                        (a - b).abs() <= a * 1e-3 + 1e-9,
                        "seed {seed}: {a} against {b}"
                    ),
                    (a, b) => assert_eq!(
                        a.is_some(),
                        b.is_some(),
                        "seed {seed}: cell {cell} from {source}: {a:?} {b:?}"
                    ),
                }
            }
        }
    }
}
