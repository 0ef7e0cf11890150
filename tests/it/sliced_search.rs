//! A search cut into slices of 1, 7 or 64 expansions (one slice per frame
//! in the plugin) returns exactly the path of an unsliced search.

use bevy_frontier::core::{
    Cell, MovingAiMap, Neighborhood, Path, Scenario, Search, SearchConfig, SearchStatus,
};
use bevy_frontier::prelude::*;

use crate::common::{Rng, movingai_dir, random_grid, random_problem};

fn sliced(
    grid: &NavGrid,
    start: Cell,
    goal: Cell,
    slice: u32,
) -> (SearchStatus, Option<Path>, u64) {
    let mut search = Search::new(grid, start, goal, SearchConfig::default()).unwrap();
    let mut calls = 0u64;
    while search.step(grid, slice) == SearchStatus::Running {
        calls += 1;
        assert!(calls <= grid.cell_count() as u64 + 1, "search never ends");
    }
    let expansions = search.expansions();
    (search.status(), search.take_path(), expansions)
}

fn assert_slices_agree(grid: &NavGrid, start: Cell, goal: Cell) {
    let whole = sliced(grid, start, goal, u32::MAX);
    for slice in [1, 7, 64] {
        assert_eq!(
            sliced(grid, start, goal, slice),
            whole,
            "slice {slice}: {start} -> {goal}"
        );
    }
}

#[test]
fn random_grids() {
    let mut rng = Rng::new(7);
    for round in 0..200 {
        // Every fourth grid has one cost for all walkable cells, 8
        // neighbours: a jump point search.
        let max_cost = [4, 4, 1, 4][round % 4];
        let grid = random_grid(&mut rng, 40, 30, [10, 25, 35][round % 3], max_cost)
            .with_neighborhood(if round % 2 == 0 {
                Neighborhood::Eight
            } else {
                Neighborhood::Four
            });
        if let Some((start, goal)) = random_problem(&mut rng, &grid) {
            assert_slices_agree(&grid, start, goal);
        }
    }
}

#[test]
fn movingai_maps() {
    let Some(dir) = movingai_dir("sliced_search::movingai_maps") else {
        return;
    };
    for (map, scen) in crate::common::movingai_pairs(&dir) {
        let grid = MovingAiMap::load(&map).unwrap().to_nav_grid();
        let scenarios = Scenario::load_all(&scen).unwrap();
        // The longest few of each map: the most slices.
        for scenario in scenarios.iter().rev().take(3) {
            assert_slices_agree(&grid, scenario.start, scenario.goal);
        }
    }
}

#[test]
fn partial_searches_agree_too() {
    let mut rng = Rng::new(99);
    let grid = random_grid(&mut rng, 80, 80, 30, 3);
    let (start, goal) = random_problem(&mut rng, &grid).unwrap();
    let config = SearchConfig {
        max_expansions: Some(150),
        ..SearchConfig::default()
    };
    let run = |slice: u32| {
        let mut search = Search::new(&grid, start, goal, config).unwrap();
        while search.step(&grid, slice) == SearchStatus::Running {}
        (search.status(), search.expansions(), search.take_path())
    };
    let whole = run(u32::MAX);
    for slice in [1, 7, 64] {
        assert_eq!(run(slice), whole);
    }
}
