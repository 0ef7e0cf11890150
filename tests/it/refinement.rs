//! Refinement on maps with terrain costs: a quick route over the coarse
//! graph comes first, marked provisional, and the optimal path replaces it;
//! a unit walking the quick route switches to the real one without turning
//! back.

use std::sync::{Arc, Mutex};

use bevy::prelude::*;
use bevy_frontier::core::{Cell, Path};
use bevy_frontier::movement::Steering;
use bevy_frontier::prelude::*;

use crate::common::{
    Rng, app, assert_valid_path, position, random_grid, random_problem, random_walkable, result,
    spawn_map, spawn_mover, spawn_unit, timed_app,
};
use crate::search_vs_dijkstra::dijkstra;

/// Every `PathReady` in order: unit, status and the frame it came in.
type Log = Arc<Mutex<Vec<(Entity, PathStatus, u32)>>>;

/// Records every `PathReady` with the frame it came in (the app's frame
/// count, kept in `frame`).
fn listen(app: &mut App) -> (Log, Arc<Mutex<u32>>) {
    let log: Log = Arc::default();
    let frame = Arc::new(Mutex::new(0));
    let (sink, now) = (log.clone(), frame.clone());
    app.add_observer(move |ready: On<PathReady>| {
        sink.lock()
            .unwrap()
            .push((ready.entity, ready.status, *now.lock().unwrap()));
    });
    (log, frame)
}

/// The answers `unit` got, in order, with their frames.
fn answers(log: &Log, unit: Entity) -> Vec<(PathStatus, u32)> {
    log.lock()
        .unwrap()
        .iter()
        .filter(|(u, ..)| *u == unit)
        .map(|&(_, status, frame)| (status, frame))
        .collect()
}

/// Runs frames until every unit has an answer that is not provisional.
fn run_until_final(app: &mut App, frame: &Arc<Mutex<u32>>, units: &[Entity]) {
    for _ in 0..10_000 {
        *frame.lock().unwrap() += 1;
        app.update();
        if units
            .iter()
            .all(|&u| result(app, u).is_some_and(|r| r.status != PathStatus::Provisional))
        {
            return;
        }
    }
    panic!("not every unit got its real path");
}

/// A 96×96 map with walls and costs from 1 to 4 (from `seed`), in an app
/// with `budget` expansions a frame, run one frame; with the map, the rest
/// of the seed's numbers and the `PathReady` log.
fn terrain_app(seed: u64, budget: u32) -> (App, NavGrid, Rng, Log, Arc<Mutex<u32>>) {
    let mut rng = Rng::new(seed);
    let grid = random_grid(&mut rng, 96, 96, 15, 4);
    let (app, log, frame) = app_on(&grid, budget);
    (app, grid, rng, log, frame)
}

/// An app with `budget` expansions a frame on `grid`, run one frame; with
/// the `PathReady` log.
fn app_on(grid: &NavGrid, budget: u32) -> (App, Log, Arc<Mutex<u32>>) {
    let mut app = app();
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: budget,
        ..default()
    });
    let (log, frame) = listen(&mut app);
    spawn_map(&mut app, grid.clone());
    app.update();
    (app, log, frame)
}

#[test]
fn a_quick_path_comes_first_and_the_optimal_one_replaces_it() {
    let (mut app, grid, mut rng, log, frame) = terrain_app(12, 300);
    let mut units = Vec::new();
    while units.len() < 40 {
        let start = random_walkable(&mut rng, &grid).unwrap();
        let goal = random_walkable(&mut rng, &grid).unwrap();
        if dijkstra(&grid, start, goal).is_some() && start != goal {
            let unit = spawn_unit(&mut app, start, PathRequest::new(goal));
            units.push((unit, start, goal));
        }
    }
    let entities: Vec<Entity> = units.iter().map(|u| u.0).collect();
    let mut seen_quick = Vec::new();
    for _ in 0..10_000 {
        *frame.lock().unwrap() += 1;
        app.update();
        for &(unit, start, goal) in &units {
            let Some(answer) = result(&app, unit) else {
                continue;
            };
            if answer.status == PathStatus::Provisional && !seen_quick.contains(&unit) {
                seen_quick.push(unit);
                // A legal path from the start to the goal, its cost what
                // walking it costs, never below the optimum.
                let path = Path {
                    cells: answer.cells.clone(),
                    cost: answer.cost as f64,
                };
                let best = dijkstra(&grid, start, goal).unwrap();
                assert!(answer.cost as f64 >= best - 1e-3 * best);
                assert_valid_path_loose(&grid, &path, start, goal);
            }
        }
        if entities
            .iter()
            .all(|&u| result(&app, u).is_some_and(|r| r.status != PathStatus::Provisional))
        {
            break;
        }
    }
    let (mut first_sum, mut final_sum) = (0, 0);
    for &(unit, start, goal) in &units {
        let got = answers(&log, unit);
        let (last, last_frame) = *got.last().unwrap();
        assert_eq!(last, PathStatus::Complete, "{start} -> {goal}: {got:?}");
        assert!(
            got.len() == 1 || got.len() == 2 && got[0].0 == PathStatus::Provisional,
            "{start} -> {goal}: {got:?}"
        );
        let answer = result(&app, unit).unwrap();
        let best = dijkstra(&grid, start, goal).unwrap();
        assert!(
            (answer.cost as f64 - best).abs() < 1e-4 * best,
            "{start} -> {goal}: cost {} but Dijkstra {best}",
            answer.cost
        );
        first_sum += got[0].1;
        final_sum += last_frame;
    }
    assert!(
        seen_quick.len() >= 30,
        "only {} units got a quick path first",
        seen_quick.len()
    );
    assert!(
        first_sum * 3 < final_sum,
        "first paths after {first_sum} frames in all, final ones after {final_sum}"
    );
}

/// [`assert_valid_path`] with the cost compared in f32, as `PathResult`
/// stores it.
fn assert_valid_path_loose(grid: &NavGrid, path: &Path, start: Cell, end: Cell) {
    let exact: f64 = path
        .cells
        .windows(2)
        .map(|step| grid.step_cost(step[0], step[1]).expect("a legal step"))
        .sum();
    assert!((exact - path.cost).abs() <= 1e-4 * exact.max(1.0));
    let path = Path {
        cells: path.cells.clone(),
        cost: exact,
    };
    assert_valid_path(grid, &path, start, end);
}

#[test]
fn no_quick_path_on_uniform_maps_or_when_turned_off() {
    let mut rng = Rng::new(3);
    let terrain = random_grid(&mut rng, 64, 64, 15, 4);
    let uniform = random_grid(&mut rng, 64, 64, 15, 1);
    let run = |grid: &NavGrid, refine: bool, per_request: bool| {
        let mut app = app();
        app.insert_resource(PathfindingSettings {
            nodes_per_frame: 100,
            refine,
            ..default()
        });
        let (log, frame) = listen(&mut app);
        spawn_map(&mut app, grid.clone());
        app.update();
        let mut rng = Rng::new(9);
        let units: Vec<Entity> = (0..10)
            .map(|_| {
                let start = random_walkable(&mut rng, grid).unwrap();
                let goal = random_walkable(&mut rng, grid).unwrap();
                let request = PathRequest::new(goal);
                let request = if per_request {
                    request
                } else {
                    request.without_refinement()
                };
                spawn_unit(&mut app, start, request)
            })
            .collect();
        run_until_final(&mut app, &frame, &units);
        log.lock()
            .unwrap()
            .iter()
            .filter(|(_, status, _)| *status == PathStatus::Provisional)
            .count()
    };
    assert!(run(&terrain, true, true) > 0, "terrain: quick paths first");
    assert_eq!(run(&uniform, true, true), 0, "uniform map");
    assert_eq!(run(&terrain, false, true), 0, "turned off for all");
    assert_eq!(run(&terrain, true, false), 0, "turned off per request");
}

/// A request whose real search fits in the frame it is made in gets its
/// optimal path in that frame and nothing provisional: the quick search
/// waits for requests still unanswered after their first frame, so it
/// never takes budget the real search needed.
#[test]
fn a_request_answered_in_its_first_frame_gets_no_quick_path() {
    let mut rng = Rng::new(21);
    let grid = random_grid(&mut rng, 64, 64, 15, 4);
    let (start, goal) = (Cell::new(2, 2), Cell::new(60, 58));
    let (start, goal) = (
        grid.nearest_walkable((start.x as i64, start.y as i64), None)
            .unwrap(),
        grid.nearest_walkable((goal.x as i64, goal.y as i64), None)
            .unwrap(),
    );
    let mut alone = bevy_frontier::core::Search::new(&grid, start, goal, default()).unwrap();
    alone.run(&grid);
    let needed = alone.expansions() as u32;
    assert!(needed > 200, "a search long enough to matter: {needed}");
    let mut app = app();
    app.insert_resource(PathfindingSettings {
        // Room for the real search, none for a quick one before it.
        nodes_per_frame: needed,
        ..default()
    });
    let (log, frame) = listen(&mut app);
    spawn_map(&mut app, grid.clone());
    app.update();
    let unit = spawn_unit(&mut app, start, PathRequest::new(goal));
    *frame.lock().unwrap() += 1;
    app.update();
    assert_eq!(answers(&log, unit), vec![(PathStatus::Complete, 1)]);
    let cost = result(&app, unit).unwrap().cost;
    assert!((cost as f64 - dijkstra(&grid, start, goal).unwrap()).abs() < 1e-3);
}

/// An open field with a swamp (cost 6) between the unit and its goal: the
/// quick path goes straight through, the optimal one round. The unit sets
/// off along the quick path, switches to the real one before the swamp
/// without ever turning back, never sets foot in the swamp, and arrives.
#[test]
fn a_unit_switches_to_the_real_path_without_turning_back() {
    let mut grid = NavGrid::new(60, 40).unwrap();
    grid.fill_rect(Cell::new(20, 5), Cell::new(40, 34), 6)
        .unwrap();
    let mut app = timed_app(20);
    let (log, frame) = listen(&mut app);
    spawn_map(&mut app, grid.clone());
    let unit = spawn_mover(&mut app, Cell::new(5, 20), 3.0);
    app.update();
    let goal = Cell::new(55, 20);
    app.world_mut()
        .entity_mut(unit)
        .insert(PathRequest::new(goal));
    let mut heading: Option<Vec2> = None;
    let mut was = position(&app, unit);
    let mut walked_quick = 0.0;
    for _ in 0..2_000 {
        *frame.lock().unwrap() += 1;
        app.update();
        let at = position(&app, unit);
        let step = at - was;
        if result(&app, unit).is_some_and(|r| r.status == PathStatus::Provisional) {
            walked_quick += step.length();
        }
        if step.length() > 1e-4 {
            let direction = step.normalize();
            if let Some(before) = heading {
                assert!(
                    before.dot(direction) > 0.0,
                    "turned back at {at}: {before} then {direction}"
                );
            }
            heading = Some(direction);
        }
        // How deep inside the swamp's cells the unit's centre is (a unit
        // rounding its corner may graze it).
        let depth = (at.x - 19.5)
            .min(40.5 - at.x)
            .min(at.y - 4.5)
            .min(34.5 - at.y);
        assert!(
            depth < 0.25,
            "walked into the swamp at {at}: {:?}, {:?}",
            answers(&log, unit),
            app.world().get::<Steering>(unit)
        );
        was = at;
        if at.distance(Vec2::new(goal.x as f32, goal.y as f32)) < 0.1
            && matches!(app.world().get::<Steering>(unit), Some(Steering::Idle))
        {
            break;
        }
    }
    let got = answers(&log, unit);
    eprintln!("{got:?}, {walked_quick} cells on the quick path");
    let got: Vec<PathStatus> = got.into_iter().map(|a| a.0).collect();
    assert_eq!(got, [PathStatus::Provisional, PathStatus::Complete]);
    assert!(
        walked_quick > 2.0,
        "the unit walked only {walked_quick} cells on its quick path"
    );
    let end = position(&app, unit);
    assert!(
        end.distance(Vec2::new(goal.x as f32, goal.y as f32)) < 0.5,
        "stopped at {end}"
    );
}

/// Orders for `count` units between random walkable cells of `grid` that
/// are linked, `start != goal`, all spawned in this frame.
fn order_units(app: &mut App, rng: &mut Rng, grid: &NavGrid, count: usize) -> Vec<Entity> {
    let mut units = Vec::new();
    while units.len() < count {
        let (start, goal) = random_problem(rng, grid).unwrap();
        if start != goal && grid.region(start) == grid.region(goal) {
            units.push(spawn_unit(app, start, PathRequest::new(goal)));
        }
    }
    units
}

/// Forty units ordered at once on a terrain map, far more work than one
/// frame's budget: after the order's own frame (which goes to the real
/// searches) the quick searches get the whole budget, so every unit has a
/// path within about the quick work over the budget, not twice that.
#[test]
fn a_burst_of_orders_gets_its_quick_paths_on_the_whole_budget() {
    let budget = 300;
    let (mut app, grid, mut rng, log, frame) = terrain_app(12, budget);
    let units = order_units(&mut app, &mut rng, &grid, 40);
    // The expansions of every quick path, read as it comes.
    let mut quick_work = 0;
    let mut counted = Vec::new();
    for _ in 0..1_000 {
        *frame.lock().unwrap() += 1;
        app.update();
        for &unit in &units {
            if let Some(answer) = result(&app, unit)
                && answer.status == PathStatus::Provisional
                && !counted.contains(&unit)
            {
                counted.push(unit);
                quick_work += answer.expansions;
            }
        }
        if units.iter().all(|&u| !answers(&log, u).is_empty()) {
            break;
        }
    }
    let last_first = units
        .iter()
        .map(|&u| answers(&log, u).first().map_or(u32::MAX, |a| a.1))
        .max()
        .unwrap();
    assert!(counted.len() >= 30, "{} quick paths", counted.len());
    // Frame 1 goes to the real searches; the quick work then takes
    // ceil(work / budget) frames, one more for a search cut at a frame's end.
    let bound = 1 + quick_work.div_ceil(budget as u64) as u32 + 1;
    assert!(
        last_first <= bound,
        "the last unit got its first path in frame {last_first}, after {quick_work} expansions of quick paths on a budget of {budget}: at most {bound} expected"
    );
}

/// Five new orders every frame on a terrain map, more quick work than the
/// whole budget: the quick searches may take the whole budget only until a
/// request has waited two seconds, and then leave half of it, so the real
/// searches still go on and the earliest orders get their optimal paths
/// while the stream goes on.
#[test]
fn a_steady_stream_of_orders_does_not_starve_the_real_searches() {
    let (mut app, grid, mut rng, log, frame) = terrain_app(5, 300);
    let mut units = Vec::new();
    for _ in 0..600 {
        units.extend(order_units(&mut app, &mut rng, &grid, 5));
        *frame.lock().unwrap() += 1;
        app.update();
    }
    let finished = |unit: Entity| {
        answers(&log, unit)
            .last()
            .is_some_and(|a| a.0 == PathStatus::Complete)
    };
    let first: Vec<Entity> = units[..20].to_vec();
    let waiting = first.iter().filter(|&&u| !finished(u)).count();
    assert_eq!(
        waiting, 0,
        "{waiting} of the first 20 orders still without their real path after 600 frames of new orders"
    );
}

/// A quick path leads where the unit's order now leads: a goal walled in
/// when the request was made, and opened before its quick path was found,
/// is the quick path's end (before, it led to the nearest reachable cell
/// chosen before the edit).
#[test]
fn a_quick_path_leads_to_the_goal_an_edit_made_reachable() {
    let mut rng = Rng::new(31);
    let mut grid = random_grid(&mut rng, 64, 64, 0, 3);
    // The goal, walled in.
    let goal = Cell::new(54, 54);
    grid.fill_rect(Cell::new(52, 52), Cell::new(56, 56), NavGrid::BLOCKED)
        .unwrap();
    grid.fill_rect(Cell::new(53, 53), Cell::new(55, 55), 1)
        .unwrap();
    let mut app = app();
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 24,
        ..default()
    });
    let map = spawn_map(&mut app, grid);
    app.update();
    let unit = spawn_unit(&mut app, Cell::new(3, 3), PathRequest::new(goal));
    // Its first frame goes to its real search, towards the nearest cell
    // it can reach.
    app.update();
    assert!(result(&app, unit).is_none());
    // A gap in the box.
    app.world_mut()
        .get_mut::<NavGrid>(map)
        .unwrap()
        .set_cost(Cell::new(52, 54), 1)
        .unwrap();
    let mut quick = None;
    for _ in 0..500 {
        app.update();
        if let Some(answer) = result(&app, unit) {
            quick = Some(answer);
            break;
        }
    }
    let quick = quick.expect("an answer");
    assert_eq!(quick.status, PathStatus::Provisional);
    assert_eq!(quick.cells.last(), Some(&goal));
    assert!(!quick.invalidated);
}

/// On a map big enough for its coarse graph to be built on a worker
/// thread, the quick route goes round a swamp as the best path does (a
/// path that ignored the swamp's cost would cross it at four times the
/// cost), legal, and before the real path.
#[test]
fn a_quick_route_goes_round_a_swamp_like_the_best_path() {
    let mut grid = NavGrid::new(192, 192).unwrap();
    grid.fill_rect(Cell::new(60, 0), Cell::new(130, 160), 9)
        .unwrap();
    let (mut app, log, frame) = app_on(&grid, 300);
    let mut units = Vec::new();
    for i in 0..5 {
        let (start, goal) = (Cell::new(10, 20 + 20 * i), Cell::new(180, 120 - 20 * i));
        units.push((
            spawn_unit(&mut app, start, PathRequest::new(goal)),
            start,
            goal,
        ));
    }
    let entities: Vec<Entity> = units.iter().map(|u| u.0).collect();
    let mut quick = Vec::new();
    for _ in 0..20_000 {
        *frame.lock().unwrap() += 1;
        app.update();
        for &(unit, start, goal) in &units {
            if let Some(answer) = result(&app, unit)
                && answer.status == PathStatus::Provisional
                && !quick.iter().any(|(u, _)| *u == unit)
            {
                // A first stretch ends short of the goal; the whole route
                // follows.
                let end = if answer.ends_short {
                    *answer.cells.last().unwrap()
                } else {
                    goal
                };
                let path = Path {
                    cells: answer.cells.clone(),
                    cost: answer.cost as f64,
                };
                assert_valid_path_loose(&grid, &path, start, end);
                if !answer.ends_short {
                    quick.push((unit, answer.cost as f64));
                }
            }
        }
        if entities
            .iter()
            .all(|&u| result(&app, u).is_some_and(|r| r.status != PathStatus::Provisional))
        {
            break;
        }
    }
    assert_eq!(quick.len(), units.len(), "every unit got a quick route");
    for (unit, cost) in quick {
        let got = answers(&log, unit);
        assert_eq!(got[0].0, PathStatus::Provisional, "{got:?}");
        let best = result(&app, unit).unwrap();
        assert_eq!(best.status, PathStatus::Complete);
        assert!(
            cost <= 1.1 * best.cost as f64,
            "quick route {cost}, best path {}",
            best.cost
        );
    }
}

/// A quick route on a big map comes first as its first stretch (a couple
/// of clusters), then whole; a unit that walks to the end of the stretch
/// before the rest comes walks on towards its goal, and arrives only there.
#[test]
fn a_unit_walks_on_from_a_quick_routes_first_stretch_and_arrives_only_at_its_goal() {
    let mut rng = Rng::new(31);
    let grid = random_grid(&mut rng, 256, 256, 10, 4);
    let mut app = timed_app(30);
    let (log, frame) = listen(&mut app);
    spawn_map(&mut app, grid.clone());
    app.update();
    let (start, goal) = (Cell::new(8, 8), Cell::new(240, 240));
    let start = grid
        .nearest_walkable((start.x as i64, start.y as i64), None)
        .unwrap();
    let goal = grid
        .nearest_walkable((goal.x as i64, goal.y as i64), grid.region(start))
        .unwrap();
    let unit = spawn_mover(&mut app, start, 40.0);
    let target = Vec2::new(goal.x as f32, goal.y as f32);
    app.world_mut()
        .entity_mut(unit)
        .insert(PathRequest::new(target));
    let mut stretch = None;
    let mut walked_on = false;
    for _ in 0..20_000 {
        *frame.lock().unwrap() += 1;
        app.update();
        if let Some(answer) = result(&app, unit)
            && answer.ends_short
            && stretch.is_none()
        {
            assert_eq!(answer.status, PathStatus::Provisional);
            assert_eq!(answer.cells.first(), Some(&start));
            assert_ne!(answer.cells.last(), Some(&goal));
            stretch = Some(answer.cells.clone());
        }
        walked_on |= stretch.is_some()
            && matches!(
                app.world().get::<Steering>(unit),
                Some(Steering::Instinct { .. })
            );
        if app.world().get::<Arrived>(unit).is_some() {
            break;
        }
    }
    assert!(
        stretch.is_some(),
        "no first stretch came: {:?}",
        answers(&log, unit)
    );
    assert!(
        walked_on,
        "the unit never reached the end of its first stretch first"
    );
    assert!(
        app.world().get::<Arrived>(unit).is_some(),
        "the unit never arrived"
    );
    assert!(position(&app, unit).distance(target) < 1.5);
}

/// On a map of two classes, one with terrain costs (walkers) and one to
/// which every walkable cell costs the same (hovercraft), a burst of
/// orders of both classes, two walkers among them sharing a search to one
/// goal: every unit gets a quick path first, all of them in a third of the
/// frames the real searches take. (Before, the
/// hovercraft had no quick route and waited for their real searches
/// behind the walkers' long ones, and so did the two sharing a search.)
#[test]
fn every_class_and_every_shared_search_gets_its_quick_path_first() {
    let mut rng = Rng::new(53);
    // Terrain types 1 to 4 where the random map has costs 1 to 4; open
    // ground (1) where the pair stands and at their goal.
    let mut terrain = random_grid(&mut rng, 96, 96, 15, 4).costs().to_vec();
    let (pair_at, goal) = ([Cell::new(2, 2), Cell::new(3, 2)], Cell::new(92, 92));
    for cell in pair_at.iter().chain([&goal]) {
        terrain[(cell.y * 96 + cell.x) as usize] = 1;
    }
    let classes = MovementClasses::new()
        .class("walker", (1..=4).map(|t| (Terrain(t), t)))
        .class("hover", (1..=4).map(|t| (Terrain(t), 1)));
    let grid = NavGrid::from_costs(96, 96, terrain)
        .unwrap()
        .with_classes(classes)
        .unwrap();
    assert!(pair_at.iter().all(|&c| grid.region(c) == grid.region(goal)));
    let (mut app, log, frame) = app_on(&grid, 300);
    let hover = ClassId::from_index(1);
    let mut units = order_units(&mut app, &mut rng, &grid, 40);
    for &unit in &units[20..] {
        app.world_mut()
            .entity_mut(unit)
            .insert(MovementClass(hover));
    }
    let pair: Vec<Entity> = pair_at
        .iter()
        .map(|&cell| spawn_unit(&mut app, cell, PathRequest::new(goal)))
        .collect();
    units.extend(&pair);
    run_until_final(&mut app, &frame, &units);
    let first = |u: Entity| answers(&log, u).first().map_or(u32::MAX, |a| a.1);
    let last = |us: &[Entity]| us.iter().map(|&u| first(u)).max().unwrap();
    let finals = units
        .iter()
        .map(|&u| answers(&log, u).last().unwrap().1)
        .max()
        .unwrap();
    let (walkers, hovers) = (last(&units[..20]), last(&units[20..40]));
    assert!(
        walkers.max(hovers).max(last(&pair)) * 3 < finals,
        "first paths: walkers by frame {walkers}, hovercraft {hovers}, the pair {}; real ones by {finals}",
        last(&pair)
    );
    for &unit in units[20..].iter().chain(&pair) {
        assert_eq!(answers(&log, unit)[0].0, PathStatus::Provisional);
    }
}
