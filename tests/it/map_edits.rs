//! The core under edits: region labels repaired edit by edit equal a fresh
//! labelling; searches and floods that keep running while the grid changes
//! under them end optimal on the grid as it is when they end; edits a
//! search has not looked at do not restart it.

use std::collections::HashMap;

use bevy_frontier::core::{
    Cell, Flood, FloodDirection, GridChanges, NavGrid, Search, SearchConfig, SearchStatus,
};

use crate::common::{Rng, assert_valid_path, random_grid, random_walkable};
use crate::search_vs_dijkstra::{close, dijkstra};
use crate::unit_sizes::brute_size_grid;

/// Whether two grids split their walkable cells into the same regions.
fn same_partition(a: &NavGrid, b: &NavGrid) -> bool {
    let mut forward = HashMap::new();
    let mut backward = HashMap::new();
    (0..a.cell_count()).all(|i| {
        let cell = a.cell(i);
        match (a.region(cell), b.region(cell)) {
            (None, None) => true,
            (Some(ra), Some(rb)) => {
                *forward.entry(ra).or_insert(rb) == rb && *backward.entry(rb).or_insert(ra) == ra
            }
            _ => false,
        }
    }) && a.region_count() == b.region_count()
}

/// A random single-cell edit: a wall, ground, or rough ground.
fn random_edit(rng: &mut Rng, grid: &mut NavGrid, max_cost: u8) -> Cell {
    let cell = Cell::new(rng.below(grid.width()), rng.below(grid.height()));
    let cost = match rng.below(3) {
        0 => NavGrid::BLOCKED,
        1 => 1,
        _ => 1 + rng.below(max_cost as u32) as u8,
    };
    grid.set_cost(cell, cost).unwrap();
    cell
}

#[test]
fn repaired_regions_match_a_fresh_labelling() {
    for seed in 0..40 {
        let mut rng = Rng::new(seed);
        let (w, h) = (8 + rng.below(40), 8 + rng.below(40));
        let walls = 20 + rng.below(30);
        let mut grid = random_grid(&mut rng, w, h, walls, 3);
        grid.region_count(); // labelled now, then repaired edit by edit
        for edit in 0..300 {
            random_edit(&mut rng, &mut grid, 3);
            let fresh = NavGrid::from_costs(w, h, grid.costs().to_vec()).unwrap();
            assert!(
                same_partition(&grid, &fresh),
                "seed {seed}, edit {edit}: regions differ from a fresh labelling"
            );
        }
    }
}

#[test]
fn the_journal_lists_every_change_since_a_version() {
    let mut rng = Rng::new(5);
    let mut grid = random_grid(&mut rng, 30, 30, 20, 3);
    let mut log = vec![];
    let from = grid.version();
    for _ in 0..200 {
        let before = grid.version();
        let cell = random_edit(&mut rng, &mut grid, 3);
        if grid.version() != before {
            log.push(cell);
        }
    }
    assert_eq!(grid.changes_since(from), GridChanges::Cells(log.clone()));
    assert_eq!(
        grid.changes_since(grid.version()),
        GridChanges::Cells(vec![])
    );
    assert_eq!(
        grid.changes_since(grid.version() + 1),
        GridChanges::Everything
    );
    // A replaced grid (a resized tilemap) is a change of everything.
    let version = grid.version();
    grid.replace(NavGrid::new(40, 10).unwrap());
    assert!(grid.version() > version);
    assert_eq!(grid.changes_since(version), GridChanges::Everything);
}

#[test]
fn the_journal_tells_which_cells_got_dearer_since_a_version() {
    let mut rng = Rng::new(9);
    let mut grid = random_grid(&mut rng, 20, 20, 20, 3);
    let mut snapshots = vec![(grid.version(), grid.costs().to_vec())];
    let mut raised = 0;
    for _ in 0..300 {
        random_edit(&mut rng, &mut grid, 4);
        snapshots.push((grid.version(), grid.costs().to_vec()));
        // From every version seen, against the costs then.
        for (version, then) in &snapshots {
            let mut dearer: Vec<usize> = (0..grid.cell_count())
                .filter(|&i| {
                    let (old, now) = (then[i], grid.costs()[i]);
                    old != NavGrid::BLOCKED && (now == NavGrid::BLOCKED || now > old)
                })
                .collect();
            let GridChanges::Cells(listed) = grid.dearer_since(*version) else {
                panic!("the journal reaches back to version {version}");
            };
            let mut listed: Vec<usize> = listed
                .iter()
                .map(|c| (c.y * grid.width() + c.x) as usize)
                .collect();
            let once = listed.len();
            listed.sort_unstable();
            listed.dedup();
            assert_eq!(listed.len(), once, "a cell listed twice");
            dearer.sort_unstable();
            assert_eq!(listed, dearer, "since version {version}");
            raised += dearer.len();
        }
    }
    assert!(raised > 1000, "only {raised} dearer cells compared");
    let version = grid.version();
    grid.replace(NavGrid::new(5, 5).unwrap());
    assert_eq!(grid.dearer_since(version), GridChanges::Everything);
}

/// Runs searches in slices of a few expansions while random edits land
/// between the slices, and checks each ends optimal on the final grid.
fn searches_under_edits(config: SearchConfig, max_cost: u8, seeds: std::ops::Range<u64>) {
    let mut checked = 0;
    for seed in seeds {
        let mut rng = Rng::new(seed);
        let (w, h) = (10 + rng.below(30), 10 + rng.below(30));
        let walls = (15 + rng.below(20)) / config.size as u32;
        let mut grid = random_grid(&mut rng, w, h, walls, max_cost);
        // A unit bigger than a cell walks the grid of its footprints.
        let walked = |grid: &NavGrid| match config.size {
            1 => grid.clone(),
            size => brute_size_grid(grid, size as u32),
        };
        let (Some(start), Some(goal)) = (
            random_walkable(&mut rng, &walked(&grid)),
            random_walkable(&mut rng, &walked(&grid)),
        ) else {
            continue;
        };
        let Ok(mut search) = Search::new(&grid, start, goal, config) else {
            continue;
        };
        let mut slices = 0;
        while search.step(&grid, 3) == SearchStatus::Running {
            slices += 1;
            if slices < 60 {
                random_edit(&mut rng, &mut grid, max_cost);
            }
        }
        let grid = walked(&grid);
        let best = (grid.is_walkable(start) && grid.is_walkable(goal))
            .then(|| dijkstra(&grid, start, goal))
            .flatten();
        match (search.status(), best) {
            (SearchStatus::Found, Some(best)) => {
                let path = search.path().unwrap();
                assert_valid_path(&grid, path, start, goal);
                assert!(
                    close(path.cost, best),
                    "seed {seed}: cost {} vs {best}",
                    path.cost
                );
                checked += 1;
            }
            (SearchStatus::Unreachable, None) => {}
            (status, best) => panic!("seed {seed}: {status:?} but Dijkstra says {best:?}"),
        }
    }
    assert!(checked > 100, "only {checked} paths checked");
}

#[test]
fn a_star_under_edits_stays_optimal() {
    let config = SearchConfig {
        jump_points: false,
        ..SearchConfig::default()
    };
    searches_under_edits(config, 4, 0..400);
}

#[test]
fn jump_point_search_under_edits_stays_optimal() {
    // Uniform costs: the search is a jump point search until an edit
    // brings rough ground, then plain A*.
    searches_under_edits(SearchConfig::default(), 1, 1000..1400);
}

#[test]
fn sized_a_star_under_edits_stays_optimal() {
    let config = SearchConfig {
        jump_points: false,
        size: 2,
        ..SearchConfig::default()
    };
    searches_under_edits(config, 4, 2000..2400);
}

#[test]
fn sized_jump_point_search_under_edits_stays_optimal() {
    let config = SearchConfig {
        size: 3,
        ..SearchConfig::default()
    };
    searches_under_edits(config, 1, 3000..3400);
}

#[test]
fn edits_a_search_has_not_looked_at_leave_it_alone() {
    // A sealed pocket in the corner, and a long way round a wall.
    let mut grid = NavGrid::new(64, 64).unwrap();
    grid.fill_rect(Cell::new(50, 50), Cell::new(50, 63), NavGrid::BLOCKED)
        .unwrap();
    grid.fill_rect(Cell::new(50, 50), Cell::new(63, 50), NavGrid::BLOCKED)
        .unwrap();
    grid.fill_rect(Cell::new(20, 0), Cell::new(20, 45), NavGrid::BLOCKED)
        .unwrap();
    let (start, goal) = (Cell::new(2, 2), Cell::new(40, 2));
    for jump_points in [false, true] {
        let config = SearchConfig {
            jump_points,
            ..SearchConfig::default()
        };
        let mut grid = grid.clone();
        if !jump_points {
            grid.set_cost(Cell::new(62, 62), 3).unwrap();
        }
        let mut quiet = grid.clone();
        let mut alone = Search::new(&quiet, start, goal, config).unwrap();
        alone.run(&quiet);
        let mut edited = grid.clone();
        let mut search = Search::new(&edited, start, goal, config).unwrap();
        let mut toggle = 0u8;
        while search.step(&edited, 2) == SearchStatus::Running {
            // Something changes in the pocket every slice: walls, and for
            // plain A* rough ground too (not dearer than the rough cell
            // already there, so the costs' range stays as it was).
            toggle = toggle % 3 + 1;
            let cost = if jump_points { toggle % 2 } else { toggle };
            edited.set_cost(Cell::new(60, 60), cost).unwrap();
            edited
                .set_cost(Cell::new(55, 58), (toggle == 2) as u8)
                .unwrap();
        }
        assert_eq!(search.restarts(), 0, "jump points {jump_points}");
        assert_eq!(search.expansions(), alone.expansions());
        assert_eq!(search.path().unwrap().cost, alone.path().unwrap().cost);
        quiet.set_cost(Cell::new(0, 0), 1).unwrap();
    }
}

#[test]
fn floods_under_edits_match_dijkstra() {
    let mut compared = 0;
    for seed in 0..150 {
        let mut rng = Rng::new(seed);
        let mut grid = random_grid(&mut rng, 24, 24, 20, 3);
        let Some(source) = random_walkable(&mut rng, &grid) else {
            continue;
        };
        let targets: Vec<Cell> = (0..4)
            .filter_map(|_| random_walkable(&mut rng, &grid))
            .collect();
        let direction = if seed % 2 == 0 {
            FloodDirection::FromSource
        } else {
            FloodDirection::ToSource
        };
        let mut flood = Flood::new(&grid, source, direction, targets.clone(), None).unwrap();
        let mut slices = 0;
        while !flood.step(&grid, 4) {
            slices += 1;
            if slices < 40 {
                random_edit(&mut rng, &mut grid, 3);
            }
        }
        if !grid.is_walkable(source) {
            continue;
        }
        for &target in &targets {
            let (from, to) = match direction {
                FloodDirection::FromSource => (source, target),
                FloodDirection::ToSource => (target, source),
            };
            let best = grid
                .is_walkable(target)
                .then(|| dijkstra(&grid, from, to))
                .flatten();
            match (best, flood.path(&grid, target)) {
                (Some(best), Some(path)) => {
                    assert_valid_path(&grid, &path, from, to);
                    assert!(close(path.cost, best), "seed {seed}");
                    compared += 1;
                }
                (None, None) => {}
                (best, path) => panic!("seed {seed}: Dijkstra {best:?}, flood {path:?}"),
            }
        }
    }
    assert!(compared > 200, "only {compared}");
}

#[test]
fn hours_of_edits_keep_the_labels_right() {
    // Far more splits and merges than the grid has cells: the retired
    // labels are dropped on the way and the regions stay right.
    let mut rng = Rng::new(11);
    let mut grid = random_grid(&mut rng, 12, 12, 25, 1);
    grid.region_count();
    for edit in 0..20_000 {
        random_edit(&mut rng, &mut grid, 1);
        if edit % 500 == 0 {
            let fresh = NavGrid::from_costs(12, 12, grid.costs().to_vec()).unwrap();
            assert!(same_partition(&grid, &fresh), "edit {edit}");
        }
    }
}
