//! Units bigger than a cell: clearance stays exact under edits, and a unit
//! of size k gets exactly the path a plain Dijkstra finds over the anchors
//! where its k×k footprint fits, for every search the core has.

use bevy_frontier::core::{
    Cell, Flood, FloodDirection, MAX_UNIT_SIZE, Neighborhood, Scratch, Search, SearchConfig,
    SearchError, SearchStatus,
};
use bevy_frontier::prelude::*;

use crate::common::{Rng, random_grid};
use crate::search_vs_dijkstra::{close, dijkstra};

/// Clearance from its definition: the side of the largest all-walkable
/// square anchored at the cell, capped at `MAX_UNIT_SIZE`.
fn brute_clearance(grid: &NavGrid, cell: Cell) -> u8 {
    let fits = |k: u32| {
        (0..k).all(|dy| (0..k).all(|dx| grid.is_walkable(Cell::new(cell.x + dx, cell.y + dy))))
    };
    (1..=MAX_UNIT_SIZE as u32)
        .take_while(|&k| fits(k))
        .last()
        .unwrap_or(0) as u8
}

/// Whether every cell of the `size × size` footprint anchored at `anchor`
/// is walkable.
pub fn footprint_fits(grid: &NavGrid, anchor: Cell, size: u32) -> bool {
    (0..size)
        .all(|dy| (0..size).all(|dx| grid.is_walkable(Cell::new(anchor.x + dx, anchor.y + dy))))
}

/// The grid a unit of `size` walks, from the rules alone: an anchor is
/// walkable when every cell of its footprint is, and costs the dearest of
/// them.
pub fn brute_size_grid(grid: &NavGrid, size: u32) -> NavGrid {
    brute_grid_by(grid, size, |cell| grid.cost(cell))
}

/// [`brute_size_grid`] with each cell's cost from `cost` (`None` off the
/// grid, 0 a wall).
pub fn brute_grid_by(grid: &NavGrid, size: u32, cost: impl Fn(Cell) -> Option<u8>) -> NavGrid {
    let (w, h) = (grid.width(), grid.height());
    let costs = (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            let mut dearest = 0u8;
            for dy in 0..size {
                for dx in 0..size {
                    match cost(Cell::new(x + dx, y + dy)) {
                        Some(cost) if cost != NavGrid::BLOCKED => dearest = dearest.max(cost),
                        _ => return NavGrid::BLOCKED,
                    }
                }
            }
            dearest
        })
        .collect();
    NavGrid::from_costs(w, h, costs)
        .unwrap()
        .with_neighborhood(grid.neighborhood())
}

fn random_anchor(rng: &mut Rng, sized: &NavGrid) -> Option<Cell> {
    let walkable: Vec<usize> = (0..sized.cell_count())
        .filter(|&i| sized.costs()[i] != NavGrid::BLOCKED)
        .collect();
    (!walkable.is_empty()).then(|| sized.cell(walkable[rng.below(walkable.len() as u32) as usize]))
}

/// A random edit: a wall, plain ground, rough ground or a small rectangle.
fn random_edit(rng: &mut Rng, grid: &mut NavGrid) {
    let (w, h) = (grid.width(), grid.height());
    let cell = Cell::new(rng.below(w), rng.below(h));
    let cost = match rng.below(4) {
        0 | 1 => NavGrid::BLOCKED,
        2 => 1,
        _ => 1 + rng.below(5) as u8,
    };
    if rng.below(5) == 0 {
        let other = Cell::new(
            (cell.x + rng.below(3)).min(w - 1),
            (cell.y + rng.below(3)).min(h - 1),
        );
        grid.fill_rect(cell, other, cost).unwrap();
    } else {
        grid.set_cost(cell, cost).unwrap();
    }
}

#[test]
fn clearance_and_size_classes_after_random_edits_equal_a_fresh_computation() {
    let mut rng = Rng::new(11);
    for seed in 0..30 {
        let (w, h) = (8 + rng.below(30), 8 + rng.below(30));
        let mut grid = random_grid(&mut rng, w, h, 5 + seed % 25, 1 + (seed % 3) as u8);
        // Size classes built before the edits are repaired by them.
        for size in 2..=4 {
            grid.size_class(size).label_regions_now();
        }
        for _ in 0..300 {
            random_edit(&mut rng, &mut grid);
        }
        for i in 0..grid.cell_count() {
            let cell = grid.cell(i);
            assert_eq!(
                grid.clearance(cell),
                brute_clearance(&grid, cell),
                "seed {seed}: clearance of {cell}"
            );
        }
        let fresh = NavGrid::from_costs(w, h, grid.costs().to_vec()).unwrap();
        for size in 2..=4u8 {
            let brute = brute_size_grid(&grid, size as u32);
            let (kept, rebuilt) = (grid.size_class(size), fresh.size_class(size));
            assert_eq!(kept.costs(), brute.costs(), "seed {seed}, size {size}");
            assert_eq!(kept.region_count(), rebuilt.region_count(), "seed {seed}");
            for _ in 0..200 {
                let a = grid.cell(rng.below(w * h) as usize);
                let b = grid.cell(rng.below(w * h) as usize);
                assert_eq!(
                    kept.connected(a, b),
                    rebuilt.connected(a, b),
                    "seed {seed}, size {size}: {a} ~ {b}"
                );
            }
        }
    }
}

#[test]
fn sized_searches_cost_what_dijkstra_over_the_footprints_finds() {
    let mut rng = Rng::new(5);
    let mut checked = 0;
    for round in 0..240u32 {
        let neighborhood = if round % 3 == 0 {
            Neighborhood::Four
        } else {
            Neighborhood::Eight
        };
        let size = 1 + (round % 3) as u8;
        // Uniform maps (jump points) and rough ones (plain A*).
        let max_cost = if round % 2 == 0 { 1 } else { 4 };
        let (w, h) = (10 + rng.below(50), 10 + rng.below(50));
        let walls = 4 + rng.below(14);
        let grid = random_grid(&mut rng, w, h, walls, max_cost).with_neighborhood(neighborhood);
        let brute = brute_size_grid(&grid, size as u32);
        let Some(start) = random_anchor(&mut rng, &brute) else {
            continue;
        };
        let Some(goal) = random_anchor(&mut rng, &brute) else {
            continue;
        };
        let expected = dijkstra(&brute, start, goal);
        for jump_points in [true, false] {
            for budget in [u32::MAX, 7] {
                let config = SearchConfig {
                    size,
                    jump_points,
                    ..SearchConfig::default()
                };
                let mut search = Search::new(&grid, start, goal, config).unwrap();
                while search.step(&grid, budget) == SearchStatus::Running {}
                match expected {
                    None => {
                        assert_eq!(search.status(), SearchStatus::Unreachable, "round {round}");
                        // Told by the size class's regions, with no search.
                        assert_eq!(search.expansions(), 0, "round {round}");
                    }
                    Some(cost) => {
                        assert_eq!(search.status(), SearchStatus::Found, "round {round}");
                        let path = search.path().unwrap();
                        assert!(
                            close(path.cost, cost),
                            "round {round}, size {size}: {} vs {cost}",
                            path.cost
                        );
                        // Every step is legal for the footprint, by the
                        // brute-force grid's own rule.
                        crate::common::assert_valid_path(&brute, path, start, goal);
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 400, "only {checked} reachable problems");
}

#[test]
fn sized_floods_cost_what_dijkstra_over_the_footprints_finds() {
    let mut rng = Rng::new(9);
    for round in 0..60u32 {
        let size = 2 + (round % 2) as u8;
        let grid = random_grid(&mut rng, 30, 30, 8, 3);
        let brute = brute_size_grid(&grid, size as u32);
        let Some(source) = random_anchor(&mut rng, &brute) else {
            continue;
        };
        let targets: Vec<Cell> = (0..6)
            .filter_map(|_| random_anchor(&mut rng, &brute))
            .collect();
        let mut flood = Flood::with_scratch(
            Scratch::new(),
            &grid,
            UnitKind::sized(size),
            source,
            FloodDirection::FromSource,
            targets.clone(),
            None,
        )
        .unwrap();
        while !flood.step(&grid, 5) {}
        for &target in &targets {
            match dijkstra(&brute, source, target) {
                None => assert!(flood.cost(&grid, target).is_none()),
                Some(cost) => {
                    let path = flood.path(&grid, target).unwrap();
                    assert!(close(path.cost, cost), "round {round}");
                    crate::common::assert_valid_path(&brute, &path, source, target);
                }
            }
        }
    }
}

#[test]
fn a_tank_is_not_routed_through_a_gap_only_infantry_fits() {
    // A wall down the middle with a one-cell gap near the top and a
    // two-cell gap at the bottom.
    let mut grid = NavGrid::new(20, 20).unwrap();
    grid.fill_rect(Cell::new(10, 0), Cell::new(10, 19), NavGrid::BLOCKED)
        .unwrap();
    grid.set_cost(Cell::new(10, 17), 1).unwrap();
    grid.fill_rect(Cell::new(10, 1), Cell::new(10, 2), 1)
        .unwrap();
    let (start, goal) = (Cell::new(2, 16), Cell::new(16, 16));
    let path_for = |size: u8| {
        let config = SearchConfig {
            size,
            ..SearchConfig::default()
        };
        let mut search = Search::new(&grid, start, goal, config).unwrap();
        search.run(&grid);
        search.take_path().unwrap()
    };
    let infantry = path_for(1);
    assert!(infantry.cells.contains(&Cell::new(10, 17)));
    let tank = path_for(2);
    assert!(tank.cells.iter().all(|c| c.y <= 3 || c.x.abs_diff(10) > 1));
    assert!(tank.cells.iter().any(|c| c.x == 10 && c.y == 1));
    assert!(tank.cost > infantry.cost + 20.0);
    // Too big for either gap: answered without a search.
    let config = SearchConfig {
        size: 3,
        ..SearchConfig::default()
    };
    let mut search = Search::new(&grid, start, goal, config).unwrap();
    assert_eq!(search.run(&grid), SearchStatus::Unreachable);
    assert_eq!(search.expansions(), 0);
    // Where the wall's edge leaves a footprint no room, the search says so.
    let config = SearchConfig {
        size: 2,
        ..SearchConfig::default()
    };
    assert_eq!(
        Search::new(&grid, Cell::new(9, 5), goal, config).err(),
        Some(SearchError::StartBlocked(Cell::new(9, 5)))
    );
    let config = SearchConfig {
        size: MAX_UNIT_SIZE + 1,
        ..SearchConfig::default()
    };
    assert_eq!(
        Search::new(&grid, start, goal, config).err(),
        Some(SearchError::BadSize(MAX_UNIT_SIZE + 1))
    );
}

#[test]
fn the_nearest_anchor_is_one_where_the_footprint_fits() {
    let mut rng = Rng::new(3);
    for _ in 0..50 {
        let grid = random_grid(&mut rng, 25, 25, 25, 1);
        for size in 1..=3u8 {
            let class = grid.size_class(size);
            let target = (rng.below(25) as i64, rng.below(25) as i64);
            let Some(anchor) = class.nearest_walkable(target, None) else {
                continue;
            };
            assert!(grid.clearance(anchor) >= size);
            // Nothing that fits is strictly nearer.
            let d = |c: Cell| (c.x as i64 - target.0).pow(2) + (c.y as i64 - target.1).pow(2);
            for i in 0..grid.cell_count() {
                let cell = grid.cell(i);
                if grid.clearance(cell) >= size {
                    assert!(d(cell) >= d(anchor));
                }
            }
        }
    }
}
