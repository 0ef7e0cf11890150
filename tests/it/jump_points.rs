//! Jump point search, the default on 8-neighbour maps whose walkable cells
//! all cost the same: paths as cheap as Dijkstra's (and as plain A*'s),
//! correct after edits, far cheaper on open ground, never more work per
//! step than the step's budget, and plain A* where it does not apply.

use bevy_frontier::core::{Cell, Neighborhood, Search, SearchConfig, SearchStatus, find_path};
use bevy_frontier::prelude::*;

use crate::common::{Rng, assert_valid_path, random_grid, random_problem};
use crate::search_vs_dijkstra::{close, dijkstra};

fn config(jump_points: bool) -> SearchConfig {
    SearchConfig {
        jump_points,
        ..SearchConfig::default()
    }
}

/// A uniform-cost grid (every walkable cell costs `cost`) with random walls.
fn uniform_grid(rng: &mut Rng, width: u32, height: u32, walls: u32, cost: u8) -> NavGrid {
    let costs = random_grid(rng, width, height, walls, 1)
        .costs()
        .iter()
        .map(|&c| if c == NavGrid::BLOCKED { c } else { cost })
        .collect();
    NavGrid::from_costs(width, height, costs).unwrap()
}

/// Checks one problem against Dijkstra, with and without jump points.
fn check(grid: &NavGrid, start: Cell, goal: Cell) -> bool {
    let best = dijkstra(grid, start, goal);
    for jump_points in [true, false] {
        let (status, path) = find_path(grid, start, goal, config(jump_points)).unwrap();
        match (best, path) {
            (Some(best), Some(path)) => {
                assert_eq!(status, SearchStatus::Found);
                assert_valid_path(grid, &path, start, goal);
                assert!(
                    close(path.cost, best),
                    "{start} -> {goal} (jump points {jump_points}): {} vs Dijkstra {best}",
                    path.cost
                );
            }
            (None, None) => assert_eq!(status, SearchStatus::Unreachable),
            (best, path) => panic!("{start} -> {goal}: Dijkstra {best:?}, search {path:?}"),
        }
    }
    best.is_some()
}

#[test]
fn optimal_on_uniform_grids_of_every_size() {
    let mut rng = Rng::new(64);
    let mut reachable = 0;
    for round in 0..300 {
        // Up to 150 cells a side: scans cross several 64-cell windows, and
        // some grids are all open so scans run to the edges.
        let (width, height) = (1 + rng.below(150), 1 + rng.below(150));
        let walls = [0, 5, 12, 25, 40][round % 5];
        let cost = [1, 3][round % 2];
        let grid = uniform_grid(&mut rng, width, height, walls, cost);
        if let Some((start, goal)) = random_problem(&mut rng, &grid) {
            reachable += check(&grid, start, goal) as u32;
        }
    }
    assert!(reachable > 200, "only {reachable} reachable problems");
}

#[test]
fn optimal_after_edits() {
    let mut rng = Rng::new(11);
    for _ in 0..40 {
        let mut grid = uniform_grid(&mut rng, 100, 90, 15, 1);
        for _ in 0..30 {
            let a = Cell::new(rng.below(100), rng.below(90));
            let cost = if rng.below(2) == 0 {
                NavGrid::BLOCKED
            } else {
                1
            };
            if rng.below(3) == 0 {
                let b = Cell::new((a.x + rng.below(20)).min(99), (a.y + rng.below(3)).min(89));
                grid.fill_rect(a, b, cost).unwrap();
            } else {
                grid.set_cost(a, cost).unwrap();
            }
        }
        if let Some((start, goal)) = random_problem(&mut rng, &grid) {
            check(&grid, start, goal);
        }
    }
}

#[test]
fn open_ground_costs_a_fraction_of_plain_astar() {
    let mut grid = NavGrid::new(400, 400).unwrap();
    // A few long walls with gaps, as on a real map.
    for x in [100, 200, 300] {
        grid.fill_rect(Cell::new(x, 0), Cell::new(x, 349), NavGrid::BLOCKED)
            .unwrap();
    }
    let (start, goal) = (Cell::new(5, 390), Cell::new(395, 10));
    let run = |jump_points| {
        let mut search = Search::new(&grid, start, goal, config(jump_points)).unwrap();
        assert_eq!(search.run(&grid), SearchStatus::Found);
        (search.expansions(), search.take_path().unwrap())
    };
    let (jps, jps_path) = run(true);
    let (astar, astar_path) = run(false);
    assert_valid_path(&grid, &jps_path, start, goal);
    assert!(close(jps_path.cost, astar_path.cost));
    assert!(
        jps * 20 < astar,
        "jump points charged {jps} expansions, plain A* {astar}"
    );
}

#[test]
fn no_step_reports_more_than_its_budget() {
    // Open ground: one jump point expansion scans hundreds of cells, more
    // than a step of 1 or 3 may charge.
    let mut rng = Rng::new(3);
    let grid = uniform_grid(&mut rng, 300, 300, 1, 1);
    let (start, goal) = (Cell::new(0, 0), Cell::new(299, 150));
    let (_, whole) = find_path(&grid, start, goal, SearchConfig::default()).unwrap();
    let mut unsliced = Search::new(&grid, start, goal, SearchConfig::default()).unwrap();
    unsliced.run(&grid);
    for budget in [1, 3, 50] {
        let mut search = Search::new(&grid, start, goal, SearchConfig::default()).unwrap();
        let mut steps = 0;
        loop {
            let before = search.expansions();
            let status = search.step(&grid, budget);
            assert!(search.expansions() - before <= budget as u64);
            steps += 1;
            if status.is_finished() {
                break;
            }
        }
        assert!(steps > 1, "budget {budget}: the search should be sliced");
        assert_eq!(search.path(), whole.as_ref(), "budget {budget}");
        assert_eq!(search.expansions(), unsliced.expansions());
    }
}

#[test]
fn expansion_cap_gives_partial_path() {
    let mut rng = Rng::new(8);
    let grid = uniform_grid(&mut rng, 200, 200, 10, 1);
    let (start, goal) = (Cell::new(0, 0), Cell::new(199, 199));
    let capped = SearchConfig {
        max_expansions: Some(40),
        ..SearchConfig::default()
    };
    for budget in [1, 7, u32::MAX] {
        let mut search = Search::new(&grid, start, goal, capped).unwrap();
        while search.step(&grid, budget) == SearchStatus::Running {}
        assert_eq!(search.status(), SearchStatus::Partial);
        let path = search.path().unwrap();
        let end = *path.cells.last().unwrap();
        assert_valid_path(&grid, path, start, end);
        assert!(end.x + end.y > 20, "partial path ended at {end}");
    }
}

#[test]
fn rough_terrain_thin_grids_and_four_neighbours_use_plain_astar() {
    let mut rng = Rng::new(5);
    // Mixed costs: jump points would be wrong, so plain A* runs.
    let mixed = random_grid(&mut rng, 60, 60, 10, 4);
    // So thin that its bitmaps would outweigh it.
    let thin = uniform_grid(&mut rng, 2, 40_000, 0, 1);
    let four = uniform_grid(&mut rng, 60, 60, 10, 1).with_neighborhood(Neighborhood::Four);
    for grid in [mixed, thin, four] {
        let (start, goal) = random_problem(&mut rng, &grid).unwrap();
        check(&grid, start, goal);
        let expansions = |jump_points| {
            let mut search = Search::new(&grid, start, goal, config(jump_points)).unwrap();
            search.run(&grid);
            search.expansions()
        };
        assert_eq!(expansions(true), expansions(false));
    }
}
