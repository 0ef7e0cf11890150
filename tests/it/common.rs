//! Helpers shared by the test modules.

use std::path::PathBuf;
use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_frontier::core::{Cell, GridError, Path};
use bevy_frontier::pathfinding::PathfindingStats;
use bevy_frontier::prelude::*;

/// The MovingAI benchmark folder: `$FRONTIER_MOVINGAI_DIR`, else
/// `../shared/movingai` beside the crate. `None` (with a message saying the
/// test is skipped) when neither exists.
pub fn movingai_dir(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("FRONTIER_MOVINGAI_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/movingai"));
    if dir.join("maps").is_dir() {
        Some(dir)
    } else {
        println!(
            "skipping {test}: no MovingAI data at {} (set FRONTIER_MOVINGAI_DIR)",
            dir.display()
        );
        None
    }
}

/// Every `(map, scenario file)` pair in the MovingAI folder, sorted.
pub fn movingai_pairs(dir: &std::path::Path) -> Vec<(PathBuf, PathBuf)> {
    let mut pairs = Vec::new();
    for set in std::fs::read_dir(dir.join("maps")).expect("maps folder") {
        let set = set.expect("maps entry").path();
        for map in std::fs::read_dir(&set).expect("map set folder") {
            let map = map.expect("map entry").path();
            let name = map
                .file_name()
                .expect("file name")
                .to_string_lossy()
                .to_string();
            let set_name = set.file_name().expect("set name");
            let scen = dir
                .join("scenarios")
                .join(set_name)
                .join(format!("{name}.scen"));
            if scen.is_file() {
                pairs.push((map, scen));
            }
        }
    }
    pairs.sort();
    pairs
}

/// A small deterministic random generator (xorshift64*), so tests need no
/// extra dependency and fail the same way every time.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u32) -> u32 {
        (self.next() % n as u64) as u32
    }
}

/// A random grid: each cell a wall with probability `wall_percent`%, else
/// a cost from 1 to `max_cost`.
pub fn random_grid(
    rng: &mut Rng,
    width: u32,
    height: u32,
    wall_percent: u32,
    max_cost: u8,
) -> NavGrid {
    let costs = (0..width * height)
        .map(|_| {
            if rng.below(100) < wall_percent {
                NavGrid::BLOCKED
            } else {
                1 + rng.below(max_cost as u32) as u8
            }
        })
        .collect();
    NavGrid::from_costs(width, height, costs).expect("valid size")
}

/// A random start and goal, both walkable, if the grid has a walkable cell.
pub fn random_problem(rng: &mut Rng, grid: &NavGrid) -> Option<(Cell, Cell)> {
    let start = random_walkable(rng, grid);
    let goal = random_walkable(rng, grid);
    start.zip(goal)
}

/// A random walkable cell, if the grid has one.
pub fn random_walkable(rng: &mut Rng, grid: &NavGrid) -> Option<Cell> {
    let walkable: Vec<usize> = (0..grid.cell_count())
        .filter(|&i| grid.costs()[i] != NavGrid::BLOCKED)
        .collect();
    (!walkable.is_empty()).then(|| grid.cell(walkable[rng.below(walkable.len() as u32) as usize]))
}

/// Checks that `path` is a chain of allowed moves from `start` to `end` whose
/// costs add up to `path.cost`.
pub fn assert_valid_path(grid: &NavGrid, path: &Path, start: Cell, end: Cell) {
    assert_eq!(path.cells.first(), Some(&start), "path starts elsewhere");
    assert_eq!(path.cells.last(), Some(&end), "path ends elsewhere");
    let mut total = 0.0;
    for pair in path.cells.windows(2) {
        total += grid
            .step_cost(pair[0], pair[1])
            .unwrap_or_else(|| panic!("illegal move {} -> {}", pair[0], pair[1]));
    }
    assert!(
        (total - path.cost).abs() <= 1e-6 * total.max(1.0),
        "path cost {} but its moves add up to {total}",
        path.cost
    );
}

/// A headless app with the pathfinding plugins and nothing else.
pub fn app() -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, FrontierPlugins::default()));
    app
}

/// A headless app with the pathfinding plugins on fixed 1/30 s frames.
pub fn crowd_app() -> App {
    let mut app = app();
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / 30.0,
    )));
    app
}

/// A headless app with the pathfinding plugins whose compute task pool
/// has `threads` threads (the pool Bevy's own systems and the crowd's
/// parallel stages run on).
pub fn threaded_app(threads: usize) -> App {
    let mut pools = bevy::app::TaskPoolOptions::default();
    pools.compute.min_threads = threads;
    pools.compute.max_threads = threads;
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins.set(bevy::app::TaskPoolPlugin {
            task_pool_options: pools,
        }),
        FrontierPlugins::default(),
    ));
    app
}

/// An app whose searches take many frames: plain A* (no jump points) on
/// `nodes_per_frame` expansions a frame, restarted by edits at most
/// `max_restarts` times before it finishes on a copy of the map.
pub fn slow_app(nodes_per_frame: u32, max_restarts: u32) -> App {
    let mut app = app();
    app.insert_resource(PathfindingSettings {
        nodes_per_frame,
        jump_points: false,
        max_restarts,
        ..default()
    });
    app
}

/// A 64×64 map of plain ground in a [`slow_app`] of 8 expansions a frame,
/// run one frame.
pub fn slow_open_scene(max_restarts: u32) -> (App, Entity) {
    let mut app = slow_app(8, max_restarts);
    let map = spawn_map(&mut app, NavGrid::new(64, 64).unwrap());
    app.update();
    (app, map)
}

/// Spawns a map entity: the grid with the default layout (cell (x, y)
/// centred at world (x, y)).
pub fn spawn_map(app: &mut App, grid: NavGrid) -> Entity {
    app.world_mut().spawn((grid, Transform::default())).id()
}

/// Spawns a unit standing on `start` asking for a path to `goal`.
pub fn spawn_unit(app: &mut App, start: Cell, request: PathRequest) -> Entity {
    let position = Vec3::new(start.x as f32, start.y as f32, 0.0);
    app.world_mut()
        .spawn((Transform::from_translation(position), request))
        .id()
}

/// The unit's result, if it has one.
pub fn result(app: &App, unit: Entity) -> Option<PathResult> {
    app.world().get::<PathResult>(unit).cloned()
}

/// Runs frames until every unit has a result (panics after `max_frames`);
/// returns the frames run and the most expansions any frame spent.
pub fn run_until_answered(app: &mut App, units: &[Entity], max_frames: u32) -> (u32, u64) {
    let mut most = 0;
    for frame in 1..=max_frames {
        app.update();
        most = most.max(app.world().resource::<PathfindingStats>().frame_expansions);
        if units
            .iter()
            .all(|&u| app.world().get::<PathResult>(u).is_some())
        {
            return (frame, most);
        }
    }
    panic!("not every request answered in {max_frames} frames");
}

/// A `size`×`size` grid with movement `classes`, each cell's terrain
/// given by `terrain(x, y)`, row by row.
pub fn terrain_grid(
    size: u32,
    classes: MovementClasses,
    mut terrain: impl FnMut(u32, u32) -> Terrain,
) -> NavGrid {
    let mut grid = NavGrid::new(size, size)
        .unwrap()
        .with_classes(classes)
        .unwrap();
    for y in 0..size {
        for x in 0..size {
            grid.set_terrain(Cell::new(x, y), terrain(x, y)).unwrap();
        }
    }
    grid
}

/// A maze-like grid: walls every 4th column with alternating gaps at the
/// top and bottom, so paths are long and searches span many frames.
pub fn serpentine(width: u32, height: u32) -> NavGrid {
    let mut grid = NavGrid::new(width, height).unwrap();
    for (i, x) in (2..width - 1).step_by(4).enumerate() {
        let (from, to) = if i % 2 == 0 {
            (0, height - 3)
        } else {
            (2, height - 1)
        };
        grid.fill_rect(Cell::new(x, from), Cell::new(x, to), NavGrid::BLOCKED)
            .unwrap();
    }
    grid
}

/// An app whose frames each last 50 ms.
pub fn timed_app(budget: u32) -> App {
    let mut app = app();
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
        50,
    )));
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: budget,
        ..default()
    });
    app
}

pub fn spawn_mover(app: &mut App, at: Cell, speed: f32) -> Entity {
    let position = Vec3::new(at.x as f32, at.y as f32, 0.0);
    app.world_mut()
        .spawn((Mover { speed }, Transform::from_translation(position)))
        .id()
}

pub fn position(app: &App, unit: Entity) -> Vec2 {
    app.world()
        .get::<Transform>(unit)
        .unwrap()
        .translation
        .truncate()
}

pub fn cell_at(p: Vec2) -> Cell {
    Cell::new((p.x + 0.5).floor() as u32, (p.y + 0.5).floor() as u32)
}

/// Runs frames until no unit moves any more (every `Motion::velocity`
/// under a thousandth of a cell a second): a crowd that has arrived
/// settles, pushed units back at their rest places. Panics if it is still
/// moving after `max_frames`: units that never come to rest oscillate.
pub fn settle(app: &mut App, units: &[Entity], max_frames: u32) {
    for _ in 0..max_frames {
        app.update();
        let still = units.iter().all(|&unit| {
            app.world()
                .get::<bevy_frontier::movement::Motion>(unit)
                .is_none_or(|motion| motion.velocity.length() < 1e-3)
        });
        if still {
            return;
        }
    }
    for &unit in units {
        eprintln!(
            "{unit} at {}: {:?} {:?}",
            position(app, unit),
            app.world().get::<bevy_frontier::movement::Motion>(unit),
            app.world().get::<bevy_frontier::movement::Steering>(unit)
        );
    }
    panic!("the units are still moving after {max_frames} frames");
}

/// The legs of movers' routes that a wall cuts: between two corners still
/// to walk, not clear for the mover's class and size on its map as the map
/// is now,
/// or with a corner where the mover does not fit.
/// Where the unit stands is left out (avoidance may push a unit off the
/// straight way to its next corner), and so is a unit standing where it
/// does not fit (a wall went up under it: it walks out any way).
pub fn cut_legs(world: &mut World) -> Vec<(Entity, Vec2, Vec2)> {
    use bevy_frontier::maps::MapView;
    use bevy_frontier::movement::Steering;
    let mut movers = world.query_filtered::<(
        Entity,
        &Transform,
        &Steering,
        Option<&Footprint>,
        Option<&MovementClass>,
    ), With<Mover>>();
    let mut maps = world.query::<(&NavGrid, &GridLayout, Option<&Transform>)>();
    let mut cut = Vec::new();
    for (unit, body, steering, footprint, class) in movers.iter(world) {
        let Steering::Following { route, map, .. } = steering else {
            continue;
        };
        let Ok((grid, layout, transform)) = maps.get(world, *map) else {
            continue;
        };
        let kind = UnitKind::new(
            class.map_or(ClassId::DEFAULT, |c| c.0),
            footprint.map_or(1, |f| f.0),
        );
        let view = MapView::new(grid, layout, transform).for_kind(kind);
        let corners: Vec<Vec2> = route.remaining().collect();
        let fits = |p: Vec2| {
            view.cell_at(p)
                .is_some_and(|c| view.size_class().is_walkable(c))
        };
        // One a wall went up under walks out any way, through the wall.
        if !fits(body.translation.truncate()) {
            continue;
        }
        for leg in corners.windows(2) {
            // Both ways: a segment that starts in a wall counts as clear
            // (a unit a wall went up under may walk out of it).
            let clear = view.segment_clear(leg[0], leg[1]) && view.segment_clear(leg[1], leg[0]);
            if !clear || !fits(leg[0]) || !fits(leg[1]) {
                cut.push((unit, leg[0], leg[1]));
            }
        }
    }
    cut.sort_by_key(|leg| leg.0);
    cut
}

/// Checks after a frame that no route an edit cut is still walked: a leg
/// [`cut_legs`] finds may last one frame (a path found on an older copy of
/// the map is flagged the frame after it arrives), never two. `before`
/// holds the last frame's cut legs.
pub fn assert_cut_routes_dropped(
    world: &mut World,
    before: &mut Vec<(Entity, Vec2, Vec2)>,
    what: impl Fn() -> String,
) {
    let now = cut_legs(world);
    let kept: Vec<_> = now.iter().filter(|leg| before.contains(leg)).collect();
    assert!(
        kept.is_empty(),
        "{}: routes a wall cuts still walked two frames on: {kept:?}",
        what()
    );
    *before = now;
}

/// The seeds a model-based test runs: `one=S` alone; else `many=N`, the
/// first N, or `many=A..B`, seeds A to B - 1; else the first `default`.
pub fn seeds_from_env(many: &str, one: &str, default: u64) -> std::ops::Range<u64> {
    let var = |name: &str| std::env::var(name).ok();
    if let Some(seed) = var(one).and_then(|v| v.parse::<u64>().ok()) {
        return seed..seed + 1;
    }
    var(many)
        .and_then(|v| match v.split_once("..") {
            Some((a, b)) => Some(a.parse().ok()?..b.parse().ok()?),
            None => Some(0..v.parse().ok()?),
        })
        .unwrap_or(0..default)
}

/// Entities and resources a game might have made before its level: spawned
/// and despawned in a shuffled order, so that the ids Bevy hands out next
/// come back in another order.
pub fn clutter(app: &mut App, rng: &mut Rng) {
    #[derive(Resource)]
    struct Menu;
    #[derive(Resource)]
    struct Overlay(#[allow(dead_code)] u32);
    #[derive(Component)]
    struct Button;
    app.insert_resource(Menu).insert_resource(Overlay(3));
    let mut spawned: Vec<Entity> = (0..300)
        .map(|i| {
            if i % 3 == 0 {
                app.world_mut().spawn((Button, Transform::default())).id()
            } else {
                app.world_mut().spawn(Button).id()
            }
        })
        .collect();
    while !spawned.is_empty() {
        let i = rng.below(spawned.len() as u32) as usize;
        app.world_mut().despawn(spawned.swap_remove(i));
    }
}

/// Writes a cell of a grid with or without movement classes: a terrain
/// type of that number where the grid has classes, else that cost. For
/// tests whose edits run on both kinds of ground.
pub trait PutCell {
    /// Sets `cell` to `byte`; whether it changed.
    fn put(&mut self, cell: Cell, byte: u8) -> Result<bool, GridError>;
}

impl PutCell for NavGrid {
    fn put(&mut self, cell: Cell, byte: u8) -> Result<bool, GridError> {
        if self.classes().is_some() {
            self.set_terrain(cell, Terrain(byte))
        } else {
            self.set_cost(cell, byte)
        }
    }
}

/// Runs `game` on a thread of its own and waits for it at most `limit`:
/// a frame that never returns (a hang) fails the test with `what` instead
/// of stalling the whole suite. A liveness check with a generous bound,
/// not a timing: what it runs takes a few seconds.
pub fn returns_within<T: Send + 'static>(
    limit: Duration,
    what: &str,
    game: impl FnOnce() -> T + Send + 'static,
) -> T {
    use std::sync::mpsc::{RecvTimeoutError, channel};
    let (done, finished) = channel();
    let thread = std::thread::spawn(move || {
        let out = game();
        let _ = done.send(());
        out
    });
    match finished.recv_timeout(limit) {
        Ok(()) | Err(RecvTimeoutError::Disconnected) => thread
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
        Err(RecvTimeoutError::Timeout) => panic!("{what}: still running after {limit:?} (a hang)"),
    }
}
