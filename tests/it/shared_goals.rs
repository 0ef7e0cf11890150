//! Units sent one by one to one goal share one search run backwards from
//! it: each still gets the path its own search would give, for a fraction
//! of the work; late requests join it or are answered from it at once.

use bevy::prelude::*;
use bevy_frontier::core::{Cell, Flood, FloodDirection, Neighborhood, Path};
use bevy_frontier::pathfinding::{PathfindingQueue, PathfindingStats};
use bevy_frontier::prelude::*;

use crate::common::{Rng, app, assert_valid_path, random_grid, random_walkable, result, spawn_map};
use crate::search_vs_dijkstra::{close, dijkstra};

/// A guided flood run backwards from a goal, in slices, with targets added
/// while it runs, settles every reachable start at exactly the cost of
/// the cheapest path from it to the goal.
/// How [`settle_in_slices`] runs a flood.
#[derive(Clone, Copy)]
struct Slicing {
    /// The most expansions of a step (a random number up to it).
    most: u32,
    /// A few late targets every this many steps...
    late_every: u32,
    /// ...while there are fewer targets than this.
    starts_at_most: usize,
}

/// Runs `flood` (from `goal`, towards `starts`) in random slices, adding
/// late targets from `late` while it runs and after it ended, then checks
/// every start against Dijkstra: settled at the cheapest cost with a legal
/// path, or unreachable. Returns the starts compared.
fn settle_in_slices(
    grid: &NavGrid,
    goal: Cell,
    flood: &mut Flood,
    starts: &mut Vec<Cell>,
    rng: &mut Rng,
    slicing: Slicing,
    late: impl Fn(&mut Rng) -> Option<Cell>,
) -> u32 {
    let mut steps = 0;
    loop {
        let done = flood.step(grid, 1 + rng.below(slicing.most));
        steps += 1;
        if steps % slicing.late_every == 0 && starts.len() < slicing.starts_at_most {
            let added: Vec<Cell> = (0..1 + rng.below(3)).filter_map(|_| late(rng)).collect();
            flood.add_targets(grid, added.iter().copied());
            starts.extend(added);
            continue;
        }
        if done {
            break;
        }
    }
    let mut compared = 0;
    for &start in starts.iter() {
        match dijkstra(grid, start, goal) {
            Some(best) => {
                let path: Path = flood
                    .path(grid, start)
                    .unwrap_or_else(|| panic!("{start} not settled"));
                assert_valid_path(grid, &path, start, goal);
                assert!(
                    close(path.cost, best),
                    "{start} -> {goal} costs {} but the cheapest is {best}",
                    path.cost
                );
                compared += 1;
            }
            None => assert!(flood.path(grid, start).is_none()),
        }
    }
    compared
}

#[test]
fn guided_flood_gives_every_start_its_cheapest_path() {
    let mut rng = Rng::new(12);
    let mut compared = 0;
    for round in 0..300 {
        let (width, height) = (2 + rng.below(30), 2 + rng.below(30));
        let neighborhood = if round % 2 == 0 {
            Neighborhood::Eight
        } else {
            Neighborhood::Four
        };
        let grid = random_grid(
            &mut rng,
            width,
            height,
            [0, 20, 35][round % 3],
            1 + (round % 5) as u8,
        )
        .with_neighborhood(neighborhood);
        let Some(goal) = random_walkable(&mut rng, &grid) else {
            continue;
        };
        let mut starts: Vec<Cell> = (0..1 + rng.below(6))
            .filter_map(|_| random_walkable(&mut rng, &grid))
            .collect();
        let mut flood = Flood::new(&grid, goal, FloodDirection::ToSource, starts.clone(), None)
            .expect("walkable goal");
        // Plain Dijkstra every other pair of rounds, A* towards the
        // targets' box otherwise.
        if round % 4 < 2 {
            flood = flood.guided(&grid);
        }
        // Late requests join: some while it runs, some after it ended.
        let late = |rng: &mut Rng| random_walkable(rng, &grid);
        let slicing = Slicing {
            most: 40,
            late_every: 3,
            starts_at_most: 14,
        };
        compared += settle_in_slices(
            &grid,
            goal,
            &mut flood,
            &mut starts,
            &mut rng,
            slicing,
            late,
        );
    }
    assert!(compared > 1000, "only {compared} starts compared");
}

/// A 64×64 map with scattered walls and terrain costs 1 to 4 (no jump
/// points), and units packed in one corner.
fn terrain_scene(seed: u64) -> (NavGrid, Vec<Cell>, Cell) {
    let mut rng = Rng::new(seed);
    let mut grid = random_grid(&mut rng, 64, 64, 12, 4);
    let mut starts = Vec::new();
    for y in 2..9 {
        for x in 2..8 {
            let cell = Cell::new(x, y);
            grid.set_cost(cell, 1).unwrap();
            starts.push(cell);
        }
    }
    let goal = Cell::new(58, 55);
    grid.set_cost(goal, 1).unwrap();
    (grid, starts, goal)
}

fn app_with(share_goals: bool, budget: u32) -> App {
    let mut app = app();
    app.insert_resource(PathfindingSettings {
        share_goals,
        nodes_per_frame: budget,
        ..default()
    });
    app
}

/// Spawns a unit per start, each with its own request to `goal`.
fn send(app: &mut App, starts: &[Cell], goal: Cell) -> Vec<Entity> {
    starts
        .iter()
        .map(|&start| {
            let position = Vec3::new(start.x as f32, start.y as f32, 0.0);
            app.world_mut()
                .spawn((
                    Transform::from_translation(position),
                    PathRequest::new(Vec2::new(goal.x as f32, goal.y as f32)),
                ))
                .id()
        })
        .collect()
}

/// The unit's answer from a search (not a quick path), if it has one.
fn searched(app: &App, unit: Entity) -> Option<PathResult> {
    result(app, unit).filter(|r| r.status != PathStatus::Provisional)
}

/// Runs frames until every unit has a result (not a provisional one);
/// returns the expansions spent.
fn answer_all(app: &mut App, units: &[Entity]) -> u64 {
    let mut spent = 0;
    for _ in 0..5_000 {
        app.update();
        spent += app.world().resource::<PathfindingStats>().frame_expansions;
        if units
            .iter()
            .all(|&u| result(app, u).is_some_and(|r| r.status != PathStatus::Provisional))
        {
            return spent;
        }
    }
    panic!("not every unit answered");
}

#[test]
fn one_goal_many_units_share_one_search_with_optimal_paths() {
    let (grid, starts, goal) = terrain_scene(3);
    let mut spent = [0; 2];
    let mut costs = [vec![], vec![]];
    for (i, share) in [true, false].into_iter().enumerate() {
        let mut app = app_with(share, 4096);
        spawn_map(&mut app, grid.clone());
        app.update();
        let units = send(&mut app, &starts, goal);
        spent[i] = answer_all(&mut app, &units);
        for (&unit, &start) in units.iter().zip(&starts) {
            let answer = result(&app, unit).unwrap();
            assert_eq!(answer.status, PathStatus::Complete);
            let best = dijkstra(&grid, start, goal).expect("reachable");
            let path = Path {
                cells: answer.cells.clone(),
                cost: best,
            };
            assert_valid_path(&grid, &path, start, goal);
            assert!(
                (answer.cost as f64 - best).abs() < 1e-4 * best,
                "{start}: {} vs the cheapest {best}",
                answer.cost
            );
            costs[i].push(answer.cost);
        }
    }
    assert_eq!(costs[0], costs[1], "shared and own searches cost alike");
    assert!(
        spent[0] * 5 < spent[1],
        "the shared search spent {} expansions, {} searches {}",
        spent[0],
        starts.len(),
        spent[1]
    );
}

#[test]
fn late_requests_join_the_shared_search_or_are_answered_at_once() {
    let (grid, starts, goal) = terrain_scene(5);
    let mut app = app_with(true, 60);
    spawn_map(&mut app, grid.clone());
    app.update();
    let first = send(&mut app, &starts[..30], goal);
    // Run until the shared search has reached the squad: some answered,
    // not all.
    let answered = |app: &App| {
        first
            .iter()
            .filter(|&&u| searched(app, u).is_some())
            .count()
    };
    for _ in 0..2_000 {
        app.update();
        if answered(&app) > 0 {
            break;
        }
    }
    let done = answered(&app);
    assert!(done > 0 && done < first.len(), "{done} answered at once");
    let queue = app.world().resource::<PathfindingQueue>();
    assert_eq!(
        queue.shared_searches().count(),
        1,
        "one search for the squad"
    );
    // A second unit on the cell of one answered (settled), and one on the
    // cell of one still waiting (not settled yet).
    let (settled, unsettled): (Vec<_>, Vec<_>) =
        (0..first.len()).partition(|&i| searched(&app, first[i]).is_some());
    let late_starts = [starts[settled[0]], starts[unsettled[0]]];
    let late = send(&mut app, &late_starts, goal);
    app.update();
    let at_once = searched(&app, late[0]).expect("a settled start is answered in its own frame");
    assert_eq!(at_once.frames_waited, 0);
    assert_eq!(at_once.expansions, 0, "answered from the shared search");
    assert!(searched(&app, late[1]).is_none() || searched(&app, first[unsettled[0]]).is_some());
    let queue = app.world().resource::<PathfindingQueue>();
    assert!(
        queue.shared_searches().all(|(_, waiting, _)| waiting > 1),
        "the late unit joined the squad's search"
    );
    assert_eq!(
        queue.in_flight(),
        queue.shared_searches().count(),
        "no search of its own"
    );
    let mut all = first.clone();
    all.extend(&late);
    answer_all(&mut app, &all);
    for (&unit, &start) in all.iter().zip(starts[..30].iter().chain(&late_starts)) {
        let answer = result(&app, unit).unwrap();
        let best = dijkstra(&grid, start, goal).unwrap();
        assert!((answer.cost as f64 - best).abs() < 1e-4 * best, "{start}");
    }
}

#[test]
fn an_unreachable_goal_shared_gives_each_unit_the_nearest_reachable_cell() {
    let (mut grid, starts, _) = terrain_scene(7);
    // A walled pocket round the goal.
    let goal = Cell::new(40, 40);
    for (x, y) in [
        (39, 39),
        (40, 39),
        (41, 39),
        (39, 40),
        (41, 40),
        (39, 41),
        (40, 41),
        (41, 41),
    ] {
        grid.set_cost(Cell::new(x, y), NavGrid::BLOCKED).unwrap();
    }
    grid.set_cost(goal, 1).unwrap();
    let mut app = app_with(true, 4096);
    spawn_map(&mut app, grid.clone());
    app.update();
    let units = send(&mut app, &starts[..12], goal);
    answer_all(&mut app, &units);
    let ends: Vec<Cell> = units
        .iter()
        .map(|&u| {
            let answer = result(&app, u).unwrap();
            assert_eq!(answer.status, PathStatus::NearestReachable);
            *answer.cells.last().unwrap()
        })
        .collect();
    assert!(
        ends.windows(2).all(|w| w[0] == w[1]),
        "one nearest cell for all"
    );
    for (&unit, &start) in units.iter().zip(&starts) {
        let answer = result(&app, unit).unwrap();
        let best = dijkstra(&grid, start, ends[0]).unwrap();
        assert!((answer.cost as f64 - best).abs() < 1e-4 * best, "{start}");
    }
}

#[test]
fn edits_and_caps_never_leave_a_shared_request_unanswered() {
    let (grid, starts, goal) = terrain_scene(9);
    let mut app = app_with(true, 120);
    app.insert_resource(PathfindingSettings {
        share_goals: true,
        nodes_per_frame: 120,
        max_expansions_per_request: Some(40),
        ..default()
    });
    let map = spawn_map(&mut app, grid.clone());
    app.update();
    let units = send(&mut app, &starts, goal);
    let mut rng = Rng::new(1);
    for _ in 0..30 {
        let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
        let cell = Cell::new(10 + rng.below(50), 10 + rng.below(50));
        let cost = if grid.is_walkable(cell) {
            NavGrid::BLOCKED
        } else {
            2
        };
        if cell != goal {
            grid.set_cost(cell, cost).unwrap();
        }
        app.update();
    }
    answer_all(&mut app, &units);
    for &unit in &units {
        let status = result(&app, unit).unwrap().status;
        assert!(
            matches!(
                status,
                PathStatus::Complete | PathStatus::Partial | PathStatus::NearestReachable
            ),
            "{status:?}"
        );
    }
}

/// A shared search that loses its slot to an urgent request, and its state
/// with it, starts over and still answers every unit optimally, each
/// answer counting only expansions really spent, even when the search
/// started over needs far fewer expansions than the first (the map was
/// cleared meanwhile).
#[test]
fn a_shared_search_thrown_out_of_its_slot_starts_over_and_answers_all() {
    let (mut grid, starts, goal) = terrain_scene(7);
    let (far, other) = (Cell::new(58, 8), Cell::new(8, 58));
    grid.set_cost(far, 1).unwrap();
    grid.set_cost(other, 1).unwrap();
    let mut app = app();
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 60,
        max_in_flight: 1,
        ..default()
    });
    let map = spawn_map(&mut app, grid.clone());
    app.update();
    let order = |app: &mut App, start: Cell, goal: Cell, priority: i32| {
        let position = Vec3::new(start.x as f32, start.y as f32, 0.0);
        let goal = Vec2::new(goal.x as f32, goal.y as f32);
        app.world_mut()
            .spawn((
                Transform::from_translation(position),
                PathRequest::new(goal).with_priority(priority),
            ))
            .id()
    };
    // A slow search holds the only slot, then the squad takes it (the
    // slow one keeps its state, parked), then an urgent request takes it
    // from the squad: with a search already parked, the squad's is dropped.
    let slow = order(&mut app, starts[0], far, 0);
    app.update();
    let squad: Vec<Entity> = starts[2..22]
        .iter()
        .map(|&start| order(&mut app, start, goal, 5))
        .collect();
    let answered = |app: &App| {
        squad
            .iter()
            .filter(|&&u| searched(app, u).is_some())
            .count()
    };
    let mut spent = 0;
    for _ in 0..2_000 {
        app.update();
        spent += app.world().resource::<PathfindingStats>().frame_expansions;
        if answered(&app) > 0 {
            break;
        }
    }
    assert!(
        answered(&app) < squad.len(),
        "the squad is still being served"
    );
    let before: Vec<bool> = squad.iter().map(|&u| searched(&app, u).is_some()).collect();
    let urgent = order(&mut app, starts[22], other, 10);
    // The whole map becomes open ground of the cheapest cost.
    let open = NavGrid::new(64, 64).unwrap();
    *app.world_mut().get_mut::<NavGrid>(map).unwrap() = open.clone();
    let mut all = squad.clone();
    all.extend([slow, urgent]);
    spent += answer_all(&mut app, &all);
    let mut counted = 0u64;
    for ((&unit, &start), before) in squad.iter().zip(&starts[2..22]).zip(before) {
        let answer = result(&app, unit).unwrap();
        assert!(
            answer.expansions <= spent,
            "{start}: {} expansions counted, {spent} spent in all",
            answer.expansions
        );
        counted = counted.saturating_add(answer.expansions);
        let best = dijkstra(if before { &grid } else { &open }, start, goal).unwrap();
        assert!((answer.cost as f64 - best).abs() < 1e-4 * best, "{start}");
    }
    assert!(
        counted <= spent,
        "the squad's answers count {counted} expansions, the frames spent {spent}"
    );
}

/// A shared search that edits pinned to a copy of the map serves the
/// requests it has; one made after a later edit is never answered from
/// that copy: it gets its path on the map as it is, which goes round the
/// wall the edit put up (before, it joined the pinned search and got a
/// path through that wall, flagged on arrival).
#[test]
fn a_late_request_is_not_answered_from_a_copy_older_than_itself() {
    let (mut app, map) = crate::common::slow_open_scene(0);
    let goal = Cell::new(60, 32);
    let squad: Vec<Cell> = (0..4).map(|i| Cell::new(2 + i, 30)).collect();
    let first = send(&mut app, &squad, goal);
    app.update();
    assert_eq!(
        app.world()
            .resource::<PathfindingQueue>()
            .shared_searches()
            .count(),
        1
    );
    // Any edit: with no restarts allowed, the search is pinned to a copy.
    let edit = |app: &mut App, from: Cell, to: Cell| {
        app.world_mut()
            .get_mut::<NavGrid>(map)
            .unwrap()
            .fill_rect(from, to, NavGrid::BLOCKED)
            .unwrap();
    };
    edit(&mut app, Cell::new(0, 63), Cell::new(0, 63));
    app.update();
    // A wall across the squad's way, and a unit of the squad's ordered to
    // the same goal after it.
    edit(&mut app, Cell::new(30, 0), Cell::new(30, 60));
    let version = app.world().get::<NavGrid>(map).unwrap().version();
    let late = send(&mut app, &[Cell::new(3, 31)], goal)[0];
    let mut answer = None;
    for _ in 0..3_000 {
        app.update();
        if let Some(found) = result(&app, late) {
            answer = Some(found);
            break;
        }
    }
    let answer = answer.expect("the late request answered");
    assert!(answer.grid_version >= version, "answered from an older map");
    assert!(!answer.invalidated);
    let grid = app.world().get::<NavGrid>(map).unwrap();
    assert!(answer.cells.windows(2).all(|s| grid.can_step(s[0], s[1])));
    // The squad's own requests still get their answers.
    answer_all(&mut app, &first);
}

/// A more urgent request with a squad's goal does not wait in the squad's
/// shared search: it gets its own, which goes first.
#[test]
fn an_urgent_request_does_not_wait_in_a_shared_search() {
    let (grid, starts, goal) = terrain_scene(7);
    let mut app = app_with(true, 100);
    spawn_map(&mut app, grid.clone());
    app.update();
    let squad = send(&mut app, &starts, goal);
    app.update();
    // The first unit of the squad stands furthest from the goal: the
    // shared search would reach it last. Ordered again, urgently.
    let (urgent, at) = (squad[0], starts[0]);
    app.world_mut()
        .entity_mut(urgent)
        .insert(PathRequest::new(Vec2::new(goal.x as f32, goal.y as f32)).with_priority(5));
    let mut frames = 0;
    while !result(&app, urgent).is_some_and(|r| r.status.is_final()) {
        app.update();
        frames += 1;
        assert!(frames < 2_000);
    }
    let others_done = squad
        .iter()
        .filter(|&&u| u != urgent && searched(&app, u).is_some())
        .count();
    assert_eq!(
        others_done, 0,
        "{at} answered after {others_done} of the squad, in frame {frames}"
    );
    assert_eq!(result(&app, urgent).unwrap().status, PathStatus::Complete);
    answer_all(&mut app, &squad);
}

/// A jump point flood (on maps whose walkable cells all cost the same)
/// settles every target at exactly the cost Dijkstra gives, with a legal
/// path, run in slices with targets added while it runs (one added where
/// its scans have been makes it start over; one it closed as a mere jump
/// point, reached first by a dearer way, is not settled), and for far less
/// work than a plain flood.
#[test]
fn a_jump_point_flood_gives_every_start_its_cheapest_path() {
    let mut rng = Rng::new(77);
    let mut compared = 0;
    let (mut jump_work, mut plain_work) = (0u64, 0u64);
    for round in 0..1500 {
        let (width, height) = (2 + rng.below(60), 2 + rng.below(60));
        let grid = random_grid(&mut rng, width, height, [0, 10, 25, 40][round % 4], 1);
        let Some(goal) = random_walkable(&mut rng, &grid) else {
            continue;
        };
        // Starts in a squad, or anywhere.
        let squad = round % 3 != 0;
        let centre = random_walkable(&mut rng, &grid).unwrap();
        let pick = |rng: &mut Rng| {
            if squad {
                let cell = Cell::new(
                    (centre.x + rng.below(6)).min(width - 1),
                    (centre.y + rng.below(6)).min(height - 1),
                );
                grid.is_walkable(cell).then_some(cell)
            } else {
                random_walkable(rng, &grid)
            }
        };
        let mut starts: Vec<Cell> = (0..1 + rng.below(12))
            .filter_map(|_| pick(&mut rng))
            .collect();
        let guided = round % 2 == 0;
        let make = |starts: &[Cell], jumps: bool| {
            let flood = Flood::new(&grid, goal, FloodDirection::ToSource, starts.to_vec(), None)
                .expect("walkable goal");
            let flood = if guided { flood.guided(&grid) } else { flood };
            if jumps {
                flood.jump_points(&grid)
            } else {
                flood
            }
        };
        let mut flood = make(&starts, true);
        let slicing = Slicing {
            most: 50,
            late_every: 4,
            starts_at_most: 20,
        };
        compared += settle_in_slices(
            &grid,
            goal,
            &mut flood,
            &mut starts,
            &mut rng,
            slicing,
            pick,
        );
        if guided && squad {
            let mut plain = make(&starts, false);
            plain.run(&grid);
            let mut fresh = make(&starts, true);
            fresh.run(&grid);
            jump_work += fresh.expansions();
            plain_work += plain.expansions();
        }
    }
    assert!(compared > 2000, "only {compared} starts compared");
    assert!(
        jump_work * 2 < plain_work,
        "jump points {jump_work} expansions, plain {plain_work}"
    );
}
