//! Grid edits, versions and connected regions.

use bevy_frontier::core::{Cell, GridError, SearchConfig, SearchStatus, find_path};
use bevy_frontier::prelude::*;

#[test]
fn regions_follow_walls() {
    let mut grid = NavGrid::new(10, 5).unwrap();
    assert_eq!(grid.region_count(), 1);
    let version = grid.version();
    assert_eq!(
        grid.fill_rect(Cell::new(4, 4), Cell::new(4, 0), NavGrid::BLOCKED),
        Ok(5)
    );
    assert!(grid.version() > version);
    assert_eq!(grid.region_count(), 2);
    assert!(!grid.connected(Cell::new(0, 0), Cell::new(9, 0)));
    assert!(grid.connected(Cell::new(0, 0), Cell::new(3, 4)));
    assert_eq!(grid.region(Cell::new(4, 2)), None, "walls have no region");

    // A diagonal gap is no gap: moves may not cut wall corners.
    grid.set_cost(Cell::new(4, 2), 1).unwrap();
    grid.set_cost(Cell::new(3, 2), NavGrid::BLOCKED).unwrap();
    grid.set_cost(Cell::new(5, 2), NavGrid::BLOCKED).unwrap();
    grid.set_cost(Cell::new(3, 1), NavGrid::BLOCKED).unwrap();
    grid.set_cost(Cell::new(5, 3), NavGrid::BLOCKED).unwrap();
    grid.set_cost(Cell::new(3, 3), NavGrid::BLOCKED).unwrap();
    grid.set_cost(Cell::new(5, 1), NavGrid::BLOCKED).unwrap();
    assert!(!grid.connected(Cell::new(0, 0), Cell::new(9, 0)));
    let (status, _) = find_path(
        &grid,
        Cell::new(0, 0),
        Cell::new(9, 0),
        SearchConfig::default(),
    )
    .unwrap();
    assert_eq!(status, SearchStatus::Unreachable);

    // Opening a door joins the two sides.
    grid.set_cost(Cell::new(4, 0), 1).unwrap();
    assert!(grid.connected(Cell::new(0, 0), Cell::new(9, 0)));
    assert_eq!(
        grid.region_count(),
        1 + 1,
        "the walled-in (4, 2) is its own region"
    );
}

#[test]
fn edits_report_changes_and_bounds() {
    let mut grid = NavGrid::new(4, 4).unwrap();
    let version = grid.version();
    assert_eq!(
        grid.set_cost(Cell::new(1, 1), 1),
        Ok(false),
        "same cost is no change"
    );
    assert_eq!(grid.version(), version);
    assert_eq!(grid.set_cost(Cell::new(1, 1), 5), Ok(true));
    assert_eq!(grid.cost(Cell::new(1, 1)), Some(5));
    assert_eq!(
        grid.set_cost(Cell::new(4, 0), 1),
        Err(GridError::OutOfBounds(Cell::new(4, 0)))
    );
    assert!(grid.fill_rect(Cell::new(0, 0), Cell::new(9, 9), 0).is_err());
    assert_eq!(
        grid.cost(Cell::new(0, 0)),
        Some(1),
        "a failed fill changes nothing"
    );
    assert!(NavGrid::new(0, 3).is_err());
    assert!(NavGrid::from_costs(2, 2, vec![1; 3]).is_err());
}

#[test]
fn rough_terrain_is_avoided_when_cheaper() {
    // A band of cost-9 swamp, three rows deep, with a plain ford at x = 9:
    // wading straight across costs 32, the detour through the ford 22.5.
    let mut grid = NavGrid::new(10, 9).unwrap();
    grid.fill_rect(Cell::new(0, 3), Cell::new(8, 5), 9).unwrap();
    let (start, goal) = (Cell::new(0, 0), Cell::new(0, 8));
    let (_, path) = find_path(&grid, start, goal, SearchConfig::default()).unwrap();
    let path = path.unwrap();
    assert!(
        path.cells.contains(&Cell::new(9, 4)),
        "path should take the ford: {:?}",
        path.cells
    );
    // All cells cost 9 except the goal: the heuristic scales to the cheapest cost.
    let mut swamp = NavGrid::new(12, 12).unwrap();
    swamp
        .fill_rect(Cell::new(0, 0), Cell::new(11, 11), 9)
        .unwrap();
    assert_eq!(swamp.min_walkable_cost(), 9);
    let (_, path) = find_path(
        &swamp,
        Cell::new(0, 0),
        Cell::new(11, 5),
        SearchConfig::default(),
    )
    .unwrap();
    let expected = 9.0 * (6.0 + 5.0 * std::f64::consts::SQRT_2);
    assert!((path.unwrap().cost - expected).abs() < 1e-4);
}

#[test]
fn line_of_sight_respects_walls_and_corners() {
    let mut grid = NavGrid::new(10, 10).unwrap();
    assert!(grid.line_of_sight(Cell::new(0, 0), Cell::new(9, 4)));
    grid.set_cost(Cell::new(5, 2), NavGrid::BLOCKED).unwrap();
    assert!(
        !grid.line_of_sight(Cell::new(0, 0), Cell::new(9, 4)),
        "the segment crosses (5, 2)"
    );
    assert!(grid.line_of_sight(Cell::new(0, 5), Cell::new(9, 5)));
    // An exact diagonal past one wall corner: cutting it is not allowed.
    let mut corner = NavGrid::new(4, 4).unwrap();
    corner.set_cost(Cell::new(1, 0), NavGrid::BLOCKED).unwrap();
    assert!(!corner.line_of_sight(Cell::new(0, 0), Cell::new(2, 2)));
    assert!(corner.line_of_sight(Cell::new(0, 1), Cell::new(3, 1)));
    assert!(
        !corner.line_of_sight(Cell::new(1, 0), Cell::new(3, 3)),
        "from a wall"
    );
    // Sight agrees with single steps.
    for (a, b) in [((0, 0), (1, 1)), ((2, 0), (1, 1)), ((0, 1), (1, 0))] {
        let (a, b) = (Cell::new(a.0, a.1), Cell::new(b.0, b.1));
        assert_eq!(
            corner.line_of_sight(a, b),
            corner.can_step(a, b),
            "{a} -> {b}"
        );
    }
}

#[test]
fn nearest_walkable_answers_any_target_fast() {
    let mut grid = NavGrid::new(300, 200).unwrap();
    grid.fill_rect(Cell::new(0, 0), Cell::new(299, 100), NavGrid::BLOCKED)
        .unwrap();
    let extremes = [i64::MIN, i64::MIN / 2, -1, 0, 150, 299, 1 << 40, i64::MAX];
    for &x in &extremes {
        for &y in &extremes {
            let cell = grid.nearest_walkable((x, y), None).unwrap();
            assert!(grid.is_walkable(cell));
            // The answer is the walkable cell nearest to the target moved
            // into the grid.
            let clamped = (x.clamp(0, 299), y.clamp(0, 199));
            let expected_y = clamped.1.max(101) as u32;
            assert_eq!(cell, Cell::new(clamped.0 as u32, expected_y), "({x}, {y})");
        }
    }
    assert_eq!(grid.nearest_walkable((5, 5), Some(u32::MAX)), None);
}

/// `nearest_walkable` gives the walkable cell nearest to the target itself,
/// by exact straight-line distance, wherever the target lies: on the grid,
/// just off it, or far away (checked against every cell).
#[test]
fn nearest_walkable_is_nearest_to_the_target_itself() {
    let mut rng = crate::common::Rng::new(41);
    let mut differs_from_clamped = 0;
    for round in 0..400 {
        let (width, height) = (1 + rng.below(12), 1 + rng.below(12));
        let grid = crate::common::random_grid(&mut rng, width, height, 15 + round % 70, 1);
        let pick = |rng: &mut crate::common::Rng, len: u32| match rng.below(5) {
            0 => -(rng.below(6) as i64) - 1,
            1 => len as i64 + rng.below(6) as i64,
            2 => [i64::MIN, i64::MAX, -(1 << 40), 1 << 40][rng.below(4) as usize],
            _ => rng.below(len) as i64,
        };
        let target = (pick(&mut rng, width), pick(&mut rng, height));
        let brute = (0..height)
            .flat_map(|y| (0..width).map(move |x| Cell::new(x, y)))
            .filter(|&cell| grid.is_walkable(cell))
            .min_by_key(|cell| {
                let dx = (cell.x as i128 - target.0 as i128).unsigned_abs();
                let dy = (cell.y as i128 - target.1 as i128).unsigned_abs();
                // Exact: both squares fit in 128 bits, their sum with a carry.
                let (low, carry) = (dx * dx).overflowing_add(dy * dy);
                ((carry, low), cell.y, cell.x)
            });
        let found = grid.nearest_walkable(target, None);
        assert_eq!(
            found, brute,
            "round {round}: target {target:?} on {width}x{height}"
        );
        let clamped = (
            target.0.clamp(0, width as i64 - 1),
            target.1.clamp(0, height as i64 - 1),
        );
        differs_from_clamped += usize::from(grid.nearest_walkable(clamped, None) != found);
    }
    // The rule matters: off-grid targets often have another answer than
    // the grid cell nearest to them.
    assert!(differs_from_clamped > 5, "{differs_from_clamped}");
}
