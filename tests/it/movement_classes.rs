//! Movement classes: on random maps of terrain types, with random classes
//! and random terrain edits, every class and size gets exactly the paths a
//! plain Dijkstra finds over that class's costs, reachability matches a
//! flood fill, and the plugin keeps each unit on ground its class may
//! enter (seeded: `FRONTIER_CLASS_SEEDS=N` or `A..B`, `FRONTIER_CLASS_SEED=S`).

use std::collections::VecDeque;

use bevy::prelude::{App, Entity};
use bevy_frontier::core::{
    Cell, CoarseGraph, CoarseRoute, Flood, FloodDirection, MovementClasses, Neighborhood,
    RouteStatus, Scratch, Search, SearchConfig, SearchError, SearchStatus, UnitKind,
};
use bevy_frontier::prelude::*;

use crate::common::{Rng, seeds_from_env};
use crate::search_vs_dijkstra::{close, dijkstra};
use crate::unit_sizes::brute_grid_by;

/// How many terrain types the random maps use (type 0 is a wall).
const TYPES: u32 = 6;

/// Random classes: each terrain type impassable to a class one time in
/// three, else a cost from 1 to 4; a class that walks everything at cost 1
/// now and then, for jump points.
fn random_classes(rng: &mut Rng, count: usize) -> MovementClasses {
    let mut classes = MovementClasses::new();
    for c in 0..count {
        let uniform = rng.below(3) == 0;
        let costs: Vec<(Terrain, u8)> = (1..TYPES as u8)
            .map(|t| {
                let cost = match (uniform, rng.below(3)) {
                    (_, 0) => 0,
                    (true, _) => 1,
                    (false, _) => 1 + rng.below(4) as u8,
                };
                (Terrain(t), cost)
            })
            .collect();
        classes = classes.class(&format!("class {c}"), costs);
    }
    classes
}

/// The grid a unit of `kind` walks, from the rules alone: an anchor is
/// walkable when its class may enter every cell of the footprint, at the
/// dearest of their costs.
fn brute_grid(grid: &NavGrid, classes: &MovementClasses, kind: UnitKind) -> NavGrid {
    brute_grid_by(grid, kind.size as u32, |cell| {
        grid.terrain(cell)
            .map(|t| classes.cost(kind.class, t).unwrap_or(0))
    })
}

/// Which walkable cells of `grid` a flood fill from `from` reaches
/// (4-neighbour: without corner cutting that is 8-neighbour reachability).
fn flood_fill(grid: &NavGrid, from: Cell) -> Vec<bool> {
    let mut seen = vec![false; grid.cell_count()];
    let mut queue = VecDeque::from([from]);
    seen[grid.index(from).unwrap()] = true;
    while let Some(cell) = queue.pop_front() {
        for (dx, dy) in [(1i64, 0i64), (-1, 0), (0, 1), (0, -1)] {
            let (x, y) = (cell.x as i64 + dx, cell.y as i64 + dy);
            if x < 0 || y < 0 {
                continue;
            }
            let next = Cell::new(x as u32, y as u32);
            if grid.is_walkable(next)
                && !std::mem::replace(&mut seen[grid.index(next).unwrap()], true)
            {
                queue.push_back(next);
            }
        }
    }
    seen
}

fn random_terrain_grid(rng: &mut Rng, classes: MovementClasses) -> NavGrid {
    let (w, h) = (8 + rng.below(40), 8 + rng.below(40));
    let walls = rng.below(15);
    let terrain = (0..w * h)
        .map(|_| {
            if rng.below(100) < walls {
                0
            } else {
                1 + rng.below(TYPES - 1) as u8
            }
        })
        .collect();
    let neighborhood = if rng.below(4) == 0 {
        Neighborhood::Four
    } else {
        Neighborhood::Eight
    };
    NavGrid::from_costs(w, h, terrain)
        .unwrap()
        .with_neighborhood(neighborhood)
        .with_classes(classes)
        .unwrap()
}

/// A random terrain edit: one cell or a small rectangle.
fn random_edit(rng: &mut Rng, grid: &mut NavGrid) {
    let (w, h) = (grid.width(), grid.height());
    let cell = Cell::new(rng.below(w), rng.below(h));
    let terrain = Terrain(rng.below(TYPES) as u8);
    if rng.below(5) == 0 {
        let other = Cell::new(
            (cell.x + rng.below(3)).min(w - 1),
            (cell.y + rng.below(3)).min(h - 1),
        );
        grid.fill_terrain(cell, other, terrain).unwrap();
    } else {
        grid.set_terrain(cell, terrain).unwrap();
    }
}

fn random_walkable(rng: &mut Rng, brute: &NavGrid) -> Option<Cell> {
    crate::common::random_walkable(rng, brute)
}

/// One seed: a map, its classes, edits with layers built before them, and
/// every class and size checked against the brute-force grids.
fn check_seed(seed: u64) -> usize {
    let mut rng = Rng::new(seed);
    let count = 1 + rng.below(4) as usize;
    let classes = random_classes(&mut rng, count);
    let mut grid = random_terrain_grid(&mut rng, classes.clone());
    let kinds: Vec<UnitKind> = (0..count as u8)
        .flat_map(|class| (1..=3).map(move |size| UnitKind::new(ClassId::from_index(class), size)))
        .collect();
    // Some layers are built (and labelled) before the edits, to be
    // repaired by them; the rest are built after.
    for &kind in &kinds {
        if rng.below(2) == 0 {
            grid.view(kind).unwrap().label_regions_now();
        }
    }
    for _ in 0..rng.below(200) {
        random_edit(&mut rng, &mut grid);
    }
    let mut checked = 0;
    for &kind in &kinds {
        let brute = brute_grid(&grid, &classes, kind);
        let view = grid.view(kind).unwrap();
        assert_eq!(view.costs(), brute.costs(), "seed {seed}, {kind}");
        // Reachability: regions match a flood fill from a few cells.
        for _ in 0..4 {
            let Some(from) = random_walkable(&mut rng, &brute) else {
                break;
            };
            let reached = flood_fill(&brute, from);
            for (i, &r) in reached.iter().enumerate() {
                let cell = grid.cell(i);
                assert_eq!(
                    view.connected(from, cell),
                    r,
                    "seed {seed}, {kind}: {from} ~ {cell}"
                );
            }
        }
        let graph = CoarseGraph::build(&view);
        // Searches, alone and as floods, cost what Dijkstra finds.
        for _ in 0..6 {
            let (Some(start), Some(goal)) = (
                random_walkable(&mut rng, &brute),
                random_walkable(&mut rng, &brute),
            ) else {
                break;
            };
            let expected = dijkstra(&brute, start, goal);
            for (jump_points, budget) in [(true, u32::MAX), (false, 7), (true, 5)] {
                let config = SearchConfig {
                    size: kind.size,
                    class: kind.class,
                    jump_points,
                    ..SearchConfig::default()
                };
                let mut search = Search::new(&grid, start, goal, config).unwrap();
                while search.step(&grid, budget) == SearchStatus::Running {}
                match expected {
                    None => assert_eq!(search.status(), SearchStatus::Unreachable),
                    Some(cost) => {
                        assert_eq!(search.status(), SearchStatus::Found, "seed {seed}");
                        let path = search.path().unwrap();
                        assert!(
                            close(path.cost, cost),
                            "seed {seed}, {kind}: {} vs {cost}",
                            path.cost
                        );
                        crate::common::assert_valid_path(&brute, path, start, goal);
                        checked += 1;
                    }
                }
            }
            let mut flood = Flood::with_scratch(
                Scratch::new(),
                &grid,
                kind,
                goal,
                FloodDirection::ToSource,
                [start],
                None,
            )
            .unwrap()
            .guided(&grid);
            while !flood.step(&grid, 9) {}
            match expected {
                None => assert!(flood.cost(&grid, start).is_none(), "seed {seed}"),
                Some(cost) => {
                    let found = flood.cost(&grid, start).unwrap();
                    assert!(
                        close(found, cost),
                        "seed {seed}, {kind}: flood {found} vs {cost}"
                    );
                }
            }
            // A route over the class's coarse graph exists exactly when a
            // path does, and is a path under its rules.
            let mut route = CoarseRoute::new(start, goal, 1.0);
            while route.step(&graph, &view, 50) == RouteStatus::Running {}
            match (expected, route.path(&view)) {
                (None, None) => {}
                (Some(_), Some(path)) => assert!(brute.size_class(1).can_walk(&path.cells)),
                (e, p) => panic!(
                    "seed {seed}, {kind}: path {e:?}, route {:?}",
                    p.map(|p| p.cost)
                ),
            }
        }
    }
    checked
}

#[test]
fn every_class_and_size_gets_dijkstras_paths_and_flood_fills_reach() {
    let mut checked = 0;
    for seed in seeds_from_env("FRONTIER_CLASS_SEEDS", "FRONTIER_CLASS_SEED", 120) {
        checked += check_seed(seed);
    }
    assert!(checked > 500, "only {checked} reachable problems");
}

#[test]
fn a_class_the_grid_does_not_have_is_an_error() {
    let grid = NavGrid::new(8, 8).unwrap();
    let config = SearchConfig {
        class: ClassId::from_index(1),
        ..SearchConfig::default()
    };
    assert!(matches!(
        Search::new(&grid, Cell::new(0, 0), Cell::new(7, 7), config),
        Err(SearchError::UnknownClass(c)) if c == ClassId::from_index(1)
    ));
    assert!(
        grid.view(UnitKind::new(ClassId::from_index(1), 1))
            .is_none()
    );
}

/// Flagged paths: each unit's `PathResult::invalidated` after the frame.
fn flagged(app: &App, units: &[Entity]) -> Vec<bool> {
    units
        .iter()
        .map(|&unit| crate::common::result(app, unit).is_some_and(|r| r.invalidated))
        .collect()
}

#[test]
fn a_terrain_change_only_one_class_can_tell_replans_only_that_class() {
    // Open ground (1) and shallows (2): a walker pays 3 in shallows, a
    // hovercraft 1 on both.
    let (open, shallow) = (Terrain(1), Terrain(2));
    let classes = MovementClasses::new()
        .class("walker", [(open, 1), (shallow, 3)])
        .class("hover", [(open, 1), (shallow, 1)]);
    let grid = NavGrid::from_costs(24, 5, vec![open.0; 24 * 5])
        .unwrap()
        .with_classes(classes)
        .unwrap();
    let mut app = crate::common::app();
    let map = crate::common::spawn_map(&mut app, grid);
    let hover = ClassId::from_index(1);
    // Two of each class along the middle row, not moving: their paths stay.
    let units: Vec<Entity> = (0..4)
        .map(|i| {
            let unit = crate::common::spawn_unit(
                &mut app,
                Cell::new(0, 1 + i % 2),
                PathRequest::new(Cell::new(23, 1 + i % 2)),
            );
            if i >= 2 {
                app.world_mut()
                    .entity_mut(unit)
                    .insert(MovementClass(hover));
            }
            unit
        })
        .collect();
    crate::common::run_until_answered(&mut app, &units, 50);
    let before: Vec<PathResult> = units
        .iter()
        .map(|&unit| crate::common::result(&app, unit).unwrap())
        .collect();
    assert!(before.iter().all(|r| r.status == PathStatus::Complete));
    let set = |app: &mut App, cells: &[Cell], terrain: Terrain| {
        let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
        for &cell in cells {
            grid.set_terrain(cell, terrain).unwrap();
        }
    };
    // Shallows across both rows: the walkers' paths cost more, the
    // hovercrafts' do not.
    let across = [Cell::new(12, 1), Cell::new(12, 2)];
    set(&mut app, &across, shallow);
    app.update();
    assert_eq!(flagged(&app, &units), [true, true, false, false]);
    for (i, &unit) in units.iter().enumerate().skip(2) {
        let now = crate::common::result(&app, unit).unwrap();
        assert_eq!(now.cells, before[i].cells, "a hovercraft re-planned");
    }
    // A wall is a change every class can tell.
    crate::common::run_until_answered(&mut app, &units, 50);
    for _ in 0..10 {
        app.update();
    }
    set(
        &mut app,
        &[Cell::new(16, 1), Cell::new(16, 2)],
        Terrain::WALL,
    );
    app.update();
    assert_eq!(flagged(&app, &units)[2..], [true, true]);
}

/// A class nobody uses costs nothing: whether a map's other classes have
/// rough ground (and so every class quick routes) is asked of the classes
/// in use only, and never builds another's layer.
#[test]
fn a_class_nobody_uses_costs_nothing_on_a_map_of_several() {
    // Hovercraft (the grid's own class) pay the same everywhere; walkers
    // would pay for rough ground, but none is ordered until the end.
    let (open, rough) = (Terrain(1), Terrain(2));
    let classes = MovementClasses::new()
        .class("hover", [(open, 1), (rough, 1)])
        .class("walker", [(open, 1), (rough, 4)]);
    let terrain = (0..96 * 96)
        .map(|i| if i % 7 == 0 { rough.0 } else { open.0 })
        .collect();
    let grid = NavGrid::from_costs(96, 96, terrain)
        .unwrap()
        .with_classes(classes)
        .unwrap();
    let mut app = crate::common::app();
    let map = crate::common::spawn_map(&mut app, grid);
    let order = |app: &mut App, from: Cell, to: Cell| {
        crate::common::spawn_unit(app, from, PathRequest::new(to))
    };
    let hovers: Vec<Entity> = (0..8)
        .map(|i| {
            order(
                &mut app,
                Cell::new(1, 10 * i + 3),
                Cell::new(90, 10 * i + 5),
            )
        })
        .collect();
    crate::common::run_until_answered(&mut app, &hovers, 200);
    for _ in 0..30 {
        app.update();
    }
    let layers = |app: &App| app.world().get::<NavGrid>(map).unwrap().class_layer_bytes();
    assert_eq!(layers(&app), 0, "the walkers' layer was built");
    let walker = order(&mut app, Cell::new(2, 2), Cell::new(80, 80));
    app.world_mut()
        .entity_mut(walker)
        .insert(MovementClass(ClassId::from_index(1)));
    crate::common::run_until_answered(&mut app, &[walker], 200);
    assert!(layers(&app) > 0);
}
