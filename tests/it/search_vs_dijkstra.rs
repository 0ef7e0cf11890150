//! A* finds paths exactly as cheap as a plain Dijkstra on random weighted
//! grids with walls, in both neighbourhoods, and says "unreachable" exactly
//! when Dijkstra finds nothing.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use bevy_frontier::core::{
    Cell, Neighborhood, Search, SearchConfig, SearchError, SearchStatus, find_path,
};
use bevy_frontier::prelude::*;

use crate::common::{Rng, assert_valid_path, random_grid, random_problem, random_walkable};

/// Dijkstra written from the movement rules alone, sharing no code with the
/// library's search: cost of entering a cell, ×√2 on diagonals, and no
/// diagonal past a wall corner.
pub fn dijkstra(grid: &NavGrid, start: Cell, goal: Cell) -> Option<f64> {
    #[derive(PartialEq)]
    struct Entry(f64, usize);
    impl Eq for Entry {}
    impl Ord for Entry {
        fn cmp(&self, other: &Self) -> Ordering {
            other.0.total_cmp(&self.0)
        }
    }
    impl PartialOrd for Entry {
        fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
            Some(self.cmp(other))
        }
    }

    let (w, h) = (grid.width() as i64, grid.height() as i64);
    let costs = grid.costs();
    let walkable =
        |x: i64, y: i64| x >= 0 && y >= 0 && x < w && y < h && costs[(y * w + x) as usize] > 0;
    let diagonals = grid.neighborhood() == Neighborhood::Eight;
    let mut dist = vec![f64::INFINITY; costs.len()];
    let start_i = (start.y as i64 * w + start.x as i64) as usize;
    let goal_i = (goal.y as i64 * w + goal.x as i64) as usize;
    dist[start_i] = 0.0;
    let mut queue = BinaryHeap::from([Entry(0.0, start_i)]);
    while let Some(Entry(d, i)) = queue.pop() {
        if d > dist[i] {
            continue;
        }
        if i == goal_i {
            return Some(d);
        }
        let (x, y) = (i as i64 % w, i as i64 / w);
        for dy in -1..=1 {
            for dx in -1..=1 {
                let diagonal = dx != 0 && dy != 0;
                if (dx == 0 && dy == 0) || (diagonal && !diagonals) {
                    continue;
                }
                let (nx, ny) = (x + dx, y + dy);
                if !walkable(nx, ny) || (diagonal && !(walkable(nx, y) && walkable(x, ny))) {
                    continue;
                }
                let j = (ny * w + nx) as usize;
                let step = costs[j] as f64
                    * if diagonal {
                        std::f64::consts::SQRT_2
                    } else {
                        1.0
                    };
                if d + step < dist[j] {
                    dist[j] = d + step;
                    queue.push(Entry(d + step, j));
                }
            }
        }
    }
    None
}

pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * b.max(1.0)
}

fn for_random_problems(mut check: impl FnMut(&NavGrid, Cell, Cell)) {
    let mut rng = Rng::new(2026);
    for round in 0..600 {
        let width = 1 + rng.below(24);
        let height = 1 + rng.below(24);
        let walls = [0, 15, 30, 45][round % 4];
        let max_cost = [1, 3, 9][round % 3];
        let neighborhood = if round % 2 == 0 {
            Neighborhood::Eight
        } else {
            Neighborhood::Four
        };
        let grid =
            random_grid(&mut rng, width, height, walls, max_cost).with_neighborhood(neighborhood);
        let Some((start, goal)) = random_problem(&mut rng, &grid) else {
            continue;
        };
        check(&grid, start, goal);
    }
}

#[test]
fn optimal_costs_match_dijkstra() {
    let mut compared = 0;
    for_random_problems(|grid, start, goal| {
        let (status, path) =
            find_path(grid, start, goal, SearchConfig::default()).expect("valid request");
        match dijkstra(grid, start, goal) {
            Some(best) => {
                assert_eq!(status, SearchStatus::Found, "{start} -> {goal}");
                let path = path.expect("found has a path");
                assert_valid_path(grid, &path, start, goal);
                assert!(
                    close(path.cost, best),
                    "{start} -> {goal}: A* {} vs Dijkstra {best}",
                    path.cost
                );
                compared += 1;
            }
            None => {
                assert_eq!(status, SearchStatus::Unreachable, "{start} -> {goal}");
                assert!(path.is_none());
            }
        }
    });
    assert!(compared > 300, "only {compared} reachable problems");
}

#[test]
fn unreachable_goals_cost_no_expansions() {
    let mut grid = NavGrid::new(20, 10).unwrap();
    grid.fill_rect(Cell::new(10, 0), Cell::new(10, 9), NavGrid::BLOCKED)
        .unwrap();
    let mut search = Search::new(
        &grid,
        Cell::new(0, 0),
        Cell::new(19, 9),
        SearchConfig::default(),
    )
    .unwrap();
    assert_eq!(search.status(), SearchStatus::Unreachable);
    assert_eq!(search.step(&grid, 1000), SearchStatus::Unreachable);
    assert_eq!(search.expansions(), 0);
}

#[test]
fn weighted_heuristic_stays_within_its_factor() {
    for_random_problems(|grid, start, goal| {
        let Some(best) = dijkstra(grid, start, goal) else {
            return;
        };
        for weight in [1.02, 1.05, 1.1, 1.5] {
            let config = SearchConfig {
                heuristic_weight: weight,
                ..SearchConfig::default()
            };
            let (status, path) = find_path(grid, start, goal, config).unwrap();
            assert_eq!(status, SearchStatus::Found);
            let path = path.unwrap();
            assert_valid_path(grid, &path, start, goal);
            assert!(
                path.cost <= best * weight as f64 + 1e-6,
                "{} > {weight} × {best}",
                path.cost
            );
        }
    });
}

#[test]
fn zero_weight_is_dijkstra() {
    for_random_problems(|grid, start, goal| {
        let Some(best) = dijkstra(grid, start, goal) else {
            return;
        };
        let config = SearchConfig {
            heuristic_weight: 0.0,
            ..SearchConfig::default()
        };
        let (_, path) = find_path(grid, start, goal, config).unwrap();
        assert!(close(path.unwrap().cost, best));
    });
}

#[test]
fn expansion_cap_gives_partial_path_toward_goal() {
    let grid = NavGrid::new(64, 64).unwrap();
    let (start, goal) = (Cell::new(0, 0), Cell::new(63, 40));
    let config = SearchConfig {
        max_expansions: Some(20),
        ..SearchConfig::default()
    };
    let mut search = Search::new(&grid, start, goal, config).unwrap();
    while search.step(&grid, 3) == SearchStatus::Running {}
    assert_eq!(search.status(), SearchStatus::Partial);
    assert!(search.expansions() <= 20);
    let path = search.path().expect("partial has a path");
    let end = *path.cells.last().unwrap();
    assert_valid_path(&grid, path, start, end);
    let distance = |c: Cell| (c.x.abs_diff(goal.x)).max(c.y.abs_diff(goal.y));
    assert!(
        distance(end) + 10 < distance(start),
        "partial path ended at {end}, barely closer"
    );
}

#[test]
fn bad_requests_are_errors() {
    let mut grid = NavGrid::new(8, 8).unwrap();
    grid.set_cost(Cell::new(3, 3), NavGrid::BLOCKED).unwrap();
    let ok = Cell::new(0, 0);
    let config = SearchConfig::default();
    let error = |start, goal, config| Search::new(&grid, start, goal, config).err();
    assert_eq!(
        error(Cell::new(8, 0), ok, config),
        Some(SearchError::StartOutOfBounds(Cell::new(8, 0)))
    );
    assert_eq!(
        error(ok, Cell::new(0, 99), config),
        Some(SearchError::GoalOutOfBounds(Cell::new(0, 99)))
    );
    assert_eq!(
        error(Cell::new(3, 3), ok, config),
        Some(SearchError::StartBlocked(Cell::new(3, 3)))
    );
    assert_eq!(
        error(ok, Cell::new(3, 3), config),
        Some(SearchError::GoalBlocked(Cell::new(3, 3)))
    );
    let nan = SearchConfig {
        heuristic_weight: f32::NAN,
        ..config
    };
    assert!(matches!(
        error(ok, ok, nan),
        Some(SearchError::BadHeuristicWeight(_))
    ));
    let (status, path) = find_path(&grid, ok, ok, config).unwrap();
    assert_eq!(status, SearchStatus::Found);
    assert_eq!(path.unwrap().cells, vec![ok]);
}

#[test]
fn a_changed_grid_restarts_the_search() {
    let mut grid = NavGrid::new(30, 30).unwrap();
    let (start, goal) = (Cell::new(0, 15), Cell::new(29, 15));
    let mut search = Search::new(&grid, start, goal, SearchConfig::default()).unwrap();
    assert_eq!(search.step(&grid, 5), SearchStatus::Running);
    // A wall with one gap at the top goes up mid-search.
    grid.fill_rect(Cell::new(15, 0), Cell::new(15, 28), NavGrid::BLOCKED)
        .unwrap();
    assert_eq!(search.run(&grid), SearchStatus::Found);
    assert_eq!(search.restarts(), 1);
    let path = search.path().unwrap();
    assert_valid_path(&grid, path, start, goal);
    assert!(
        path.cells.contains(&Cell::new(15, 29)),
        "path must use the gap"
    );
    // Walling the goal in makes the search unreachable, not wrong.
    let mut search = Search::new(&grid, start, goal, SearchConfig::default()).unwrap();
    grid.set_cost(goal, NavGrid::BLOCKED).unwrap();
    assert_eq!(search.step(&grid, 100), SearchStatus::Unreachable);
}

/// A flood gives every target its Dijkstra cost, both ways round (moves
/// cost the cell they enter, so to and from a cell can differ), in slices.
#[test]
fn floods_match_dijkstra_both_ways() {
    use bevy_frontier::core::{Flood, FloodDirection};
    let mut rng = Rng::new(77);
    let mut compared = 0;
    for_random_problems(|grid, source, _| {
        let targets: Vec<Cell> = (0..4)
            .filter_map(|_| random_walkable(&mut rng, grid))
            .collect();
        for direction in [FloodDirection::FromSource, FloodDirection::ToSource] {
            let mut flood = Flood::new(grid, source, direction, targets.clone(), None).unwrap();
            while !flood.step(grid, 5) {}
            for &target in &targets {
                let (from, to) = match direction {
                    FloodDirection::FromSource => (source, target),
                    FloodDirection::ToSource => (target, source),
                };
                match dijkstra(grid, from, to) {
                    Some(best) => {
                        let path = flood.path(grid, target).expect("reached");
                        assert_valid_path(grid, &path, from, to);
                        assert!(close(path.cost, best), "{from} -> {to}: {}", path.cost);
                        assert_eq!(flood.cost(grid, target), Some(path.cost));
                        compared += 1;
                    }
                    None => assert!(flood.path(grid, target).is_none()),
                }
            }
        }
    });
    assert!(compared > 1000, "only {compared} reachable targets");
}
