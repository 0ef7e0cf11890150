//! The promise of `PathResult::invalidated`: a path is flagged in the
//! frame after a cell under it changed (a wall went up, or its cost
//! changed, for the unit's class; a wall that went up and came down again
//! between two frames counts), and only then. Checked every frame, on
//! every path a unit holds (final, provisional, shared, a group's), by
//! [`FlagWatch`], here in long seeded games of plain searches (units that
//! stand, orders given again and again, costs and walls edited every few
//! frames, settings changed) and in the model test's games.
//!
//! Once, paths went unflagged late in long games: four seeds in twelve
//! ended with paths whose cells had changed a few frames after delivery.
//!
//! `FRONTIER_FLAG_SEEDS=N` (or `A..B`) runs more seeds
//! (`FRONTIER_FLAG_SEED=S` one), `FRONTIER_FLAG_FRAMES=F` longer games.

use std::collections::HashMap;

use bevy::prelude::*;
use bevy_frontier::core::{Cell, GridChanges, UnitKind};
use bevy_frontier::prelude::*;

use crate::common::{PutCell, Rng, app, random_grid, seeds_from_env};
use crate::unit_sizes::brute_size_grid;

/// A grid as it was at one version: its size and each cell's cost (to
/// its first class, and to each class it has).
pub struct Version {
    pub width: u32,
    pub height: u32,
    pub costs: Vec<u8>,
    /// Each class's costs, on a grid with movement classes.
    classes: Vec<Vec<u8>>,
}

impl Version {
    pub fn of(grid: &NavGrid) -> Self {
        let classes = match grid.classes() {
            Some(_) => (0..grid.class_count())
                .map(|c| {
                    let kind = UnitKind::new(ClassId::from_index(c as u8), 1);
                    grid.view(kind).unwrap().costs().to_vec()
                })
                .collect(),
            None => Vec::new(),
        };
        Self {
            width: grid.width(),
            height: grid.height(),
            costs: grid.costs().to_vec(),
            classes,
        }
    }

    /// What `cell` cost units of `class` at this version.
    fn class_cost(&self, class: ClassId, cell: Cell) -> Option<u8> {
        let costs = self
            .classes
            .get(class.index() as usize)
            .unwrap_or(&self.costs);
        (cell.x < self.width && cell.y < self.height)
            .then(|| costs[(cell.y * self.width + cell.x) as usize])
    }

    /// The grid a unit of `size` walks at this version.
    pub fn grid(&self, size: u8) -> NavGrid {
        let grid = NavGrid::from_costs(self.width, self.height, self.costs.clone()).unwrap();
        match size {
            1 => grid,
            size => brute_size_grid(&grid, size as u32),
        }
    }
}

/// Every version each map was left at between frames, and the versions
/// at which a new level was swapped in.
#[derive(Default)]
pub struct Versions {
    maps: HashMap<Entity, (HashMap<u64, Version>, Vec<u64>)>,
}

impl Versions {
    /// Notes each map's grid as the next frame will see it.
    pub fn note(&mut self, world: &mut World) {
        let mut grids = world.query::<(Entity, &NavGrid)>();
        for (map, grid) in grids.iter(world) {
            let (versions, _) = self.maps.entry(map).or_default();
            versions
                .entry(grid.version())
                .or_insert_with(|| Version::of(grid));
        }
    }

    /// A new level was swapped in on `map`, at `version`.
    pub fn swapped(&mut self, map: Entity, version: u64) {
        self.maps.entry(map).or_default().1.push(version);
    }

    /// `map`'s grid at `version`, if noted.
    pub fn at(&self, map: Entity, version: u64) -> Option<&Version> {
        self.maps.get(&map)?.0.get(&version)
    }

    /// Whether a level was swapped in on `map` after `version`.
    fn swapped_after(&self, map: Entity, version: u64) -> bool {
        self.maps
            .get(&map)
            .is_some_and(|(_, swaps)| swaps.iter().any(|&v| v > version))
    }
}

/// What tells one delivered path from another: its version, cost, length
/// and ends, and the frames it waited.
type PathId = (u64, u32, usize, Option<Cell>, Option<Cell>, u32);

fn path_id(result: &PathResult) -> PathId {
    (
        result.grid_version,
        result.cost.to_bits(),
        result.cells.len(),
        result.cells.first().copied(),
        result.cells.last().copied(),
        result.frames_waited,
    )
}

/// The cells a path of anchors `cells` for units of `size` reads: every
/// cell its footprint covers at each anchor, and at the two anchors
/// beside each diagonal step (which must stay clear for the step not to
/// cut a corner).
pub fn cells_under(cells: &[Cell], size: u8) -> Vec<Cell> {
    let size = u32::from(size.max(1));
    let mut anchors: Vec<Cell> = cells.to_vec();
    for step in cells.windows(2) {
        let (a, b) = (step[0], step[1]);
        if a.x != b.x && a.y != b.y {
            anchors.push(Cell::new(a.x, b.y));
            anchors.push(Cell::new(b.x, a.y));
        }
    }
    let mut under: Vec<Cell> = anchors
        .iter()
        .flat_map(|a| {
            (0..size).flat_map(move |dy| (0..size).map(move |dx| Cell::new(a.x + dx, a.y + dy)))
        })
        .collect();
    under.sort_unstable_by_key(|c| (c.y, c.x));
    under.dedup();
    under
}

/// Checks, after each frame, every path held against the grid it was
/// found on and the grid now, as the path's movement class reads it.
#[derive(Default)]
pub struct FlagWatch {
    /// Per unit, the path it held after the last frame: what tells it
    /// apart, whether it was flagged, whether a cell under it was written
    /// since it was found, and the grid version that was checked up to.
    held: HashMap<Entity, Held>,
    /// Paths seen newly flagged, each with a cell under it changed.
    pub flagged: u32,
    /// Paths checked, frame by frame.
    pub checked: u64,
}

#[derive(Clone, Copy)]
struct Held {
    id: PathId,
    flagged: bool,
    written: Option<Cell>,
    seen: u64,
}

impl FlagWatch {
    /// Every path held is flagged if a cell under it costs other than on
    /// the version it was found on, or was written since (on a grid
    /// without classes, where every write changes a cost: a wall put up
    /// and taken down between two frames), or a new level was swapped in;
    /// and a path newly flagged has such a cell.
    pub fn check(&mut self, world: &mut World, versions: &Versions, frame: u32) {
        let mut results = world.query::<(Entity, &PathResult)>();
        let mut held = HashMap::new();
        for (unit, answer) in results.iter(world) {
            let Some(map) = answer.map.filter(|_| answer.status.has_path()) else {
                continue;
            };
            let (Some(then), Some(grid)) = (
                versions.at(map, answer.grid_version),
                world.get::<NavGrid>(map),
            ) else {
                continue;
            };
            self.checked += 1;
            let swapped = versions.swapped_after(map, answer.grid_version);
            let now = grid.view(UnitKind::new(answer.class, 1));
            let cost_now = |cell: Cell| now.as_ref().and_then(|view| view.cost(cell));
            let under = cells_under(&answer.cells, answer.size);
            let changed = under
                .iter()
                .copied()
                .find(|&cell| cost_now(cell) != then.class_cost(answer.class, cell));
            let id = path_id(answer);
            let before = self.held.get(&unit).copied().filter(|h| h.id == id);
            // Cells written since it was found, from the grid's journal,
            // a frame's worth at a time (the journal holds the last 16,384
            // writes, a long-held path's may be older).
            let since = before.map_or(answer.grid_version, |h| h.seen);
            let written_now = match grid.changes_since(since) {
                GridChanges::Everything => under.first().copied(),
                GridChanges::Cells(cells) => under.iter().copied().find(|c| cells.contains(c)),
            };
            let written = before.and_then(|h| h.written).or(written_now);
            let must = changed.or(written.filter(|_| grid.classes().is_none()));
            let newly = before.is_none_or(|h| !h.flagged);
            if answer.invalidated {
                assert!(
                    !newly || swapped || changed.is_some() || written.is_some(),
                    "frame {frame}: {unit}'s {:?} path (found on version {}, now {}) flagged \
                     though no cell under it changed",
                    answer.status,
                    answer.grid_version,
                    grid.version()
                );
                self.flagged += u32::from(newly);
            } else {
                assert!(
                    !swapped && must.is_none(),
                    "frame {frame}: {unit}'s {:?} path of size {} (found on version {}, now {}, \
                     {} frames waited) unflagged though {}",
                    answer.status,
                    answer.size,
                    answer.grid_version,
                    grid.version(),
                    answer.frames_waited,
                    match must {
                        Some(cell) => format!(
                            "{cell} under it changed from {:?} to {:?}{}",
                            then.class_cost(answer.class, cell),
                            cost_now(cell),
                            if changed.is_none() { " (and back)" } else { "" },
                        ),
                        None => "a level was swapped in".to_string(),
                    },
                );
            }
            let seen = grid.version();
            let flagged = answer.invalidated;
            held.insert(
                unit,
                Held {
                    id,
                    flagged,
                    written,
                    seen,
                },
            );
        }
        self.held = held;
    }
}

/// Fills a rectangle with `byte`: a cost, or a terrain type where the grid
/// has classes.
fn fill(grid: &mut NavGrid, a: Cell, b: Cell, byte: u8) {
    if grid.classes().is_some() {
        grid.fill_terrain(a, b, Terrain(byte)).unwrap();
    } else {
        grid.fill_rect(a, b, byte).unwrap();
    }
}

/// Frames of a game, by default.
const FRAMES: u32 = 2_500;

/// A long game of plain searches on one map with terrain costs: units
/// that stand and are ordered again and again, rally points (units side
/// by side sent to one goal), a group order now and then, cells and
/// rectangles re-costed or walled every few frames, and the settings
/// changed. Every path held is checked every frame.
fn play(seed: u64, frames: u32) {
    let mut rng = Rng::new(seed);
    let mut app = app();
    let (width, height) = if seed % 3 == 2 {
        // Big enough for quick routes sent in two pieces.
        (120 + rng.below(100), 120 + rng.below(100))
    } else {
        (40 + rng.below(60), 40 + rng.below(60))
    };
    let walls = 8 + rng.below(15);
    let mut grid = random_grid(&mut rng, width, height, walls, 4);
    let classes = if seed % 2 == 1 {
        // Movement classes registered: cells hold terrain types, whose
        // costs each class's table gives: foot pays each type its number,
        // and (in one game in four) hovercraft pay 1 on every type, so
        // an edit from one type to another is one for foot alone.
        let foot = (1..=4).map(|t| (Terrain(t), t));
        let mut classes = MovementClasses::new().class("foot", foot);
        if seed % 4 == 3 {
            classes = classes.class("hover", (1..=4).map(|t| (Terrain(t), 1)));
        }
        let count = classes.len();
        grid.set_classes(classes).unwrap();
        count
    } else {
        1
    };
    let map = app.world_mut().spawn((grid, Transform::default())).id();
    let cell = |rng: &mut Rng| Cell::new(rng.below(width), rng.below(height));
    let mut units: Vec<Entity> = Vec::new();
    let mut versions = Versions::default();
    let mut watch = FlagWatch::default();
    for frame in 0..frames {
        for _ in 0..rng.below(3) {
            match rng.below(16) {
                0..=3 => {
                    let at = cell(&mut rng);
                    let mut unit = app.world_mut().spawn((
                        Transform::from_xyz(at.x as f32, at.y as f32, 0.0),
                        PathRequest::new(cell(&mut rng)),
                    ));
                    if rng.below(6) == 0 {
                        unit.insert(Footprint(2));
                    }
                    let class = rng.below(classes as u32) as u8;
                    unit.insert(MovementClass(ClassId::from_index(class)));
                    units.push(unit.id());
                }
                4..=6 if !units.is_empty() => {
                    let unit = units[rng.below(units.len() as u32) as usize];
                    let goal = cell(&mut rng);
                    let mut request = match rng.below(3) {
                        0 => PathRequest::new(Vec2::new(goal.x as f32 + 0.3, goal.y as f32 - 0.2)),
                        _ => PathRequest::new(goal),
                    };
                    if rng.below(4) == 0 {
                        request = request.without_refinement();
                    }
                    if rng.below(5) == 0 {
                        request = request.from(cell(&mut rng));
                    }
                    if rng.below(5) == 0 {
                        request = request.fail_if_unreachable();
                    }
                    app.world_mut().entity_mut(unit).insert(request);
                }
                7 if units.len() > 40 => {
                    let unit = units.swap_remove(rng.below(units.len() as u32) as usize);
                    app.world_mut().despawn(unit);
                }
                8 => {
                    let (at, goal) = (cell(&mut rng), cell(&mut rng));
                    for i in 0..2 + rng.below(5) {
                        let unit = app.world_mut().spawn((
                            Transform::from_xyz((at.x + i % 3) as f32, (at.y + i / 3) as f32, 0.0),
                            PathRequest::new(goal),
                        ));
                        units.push(unit.id());
                    }
                }
                9 => {
                    let members: Vec<Entity> = (0..rng.below(6))
                        .filter_map(|_| units.get(rng.below(units.len().max(1) as u32) as usize))
                        .copied()
                        .collect();
                    app.world_mut()
                        .write_message(GroupMove::new(members, cell(&mut rng)));
                }
                10 if rng.below(8) == 0 => {
                    app.insert_resource(PathfindingSettings {
                        nodes_per_frame: [16, 200, 4096][rng.below(3) as usize],
                        max_in_flight: [1, 4, 16][rng.below(3) as usize],
                        max_restarts: rng.below(4),
                        jump_points: rng.below(2) == 0,
                        ..default()
                    });
                }
                _ => {
                    let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
                    let cost = [NavGrid::BLOCKED, 1, 1, 2, 4][rng.below(5) as usize];
                    let a = cell(&mut rng);
                    if rng.below(4) == 0 {
                        let b = Cell::new(
                            (a.x + rng.below(4)).min(width - 1),
                            (a.y + rng.below(4)).min(height - 1),
                        );
                        fill(&mut grid, a, b, cost);
                    } else {
                        grid.put(a, cost).unwrap();
                    }
                }
            }
        }
        // Edits on paths held: a cell of a random unit's path re-costed.
        if rng.below(3) == 0
            && let Some(&unit) = units.get(rng.below(units.len().max(1) as u32) as usize)
            && let Some(path) = app.world().get::<PathResult>(unit).map(|r| r.cells.clone())
            && !path.is_empty()
        {
            let at = path[rng.below(path.len() as u32) as usize];
            let cost = [NavGrid::BLOCKED, 1, 2, 3][rng.below(4) as usize];
            let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
            let _ = grid.put(at, cost);
        }
        // A cell of a held path walled and opened again between two
        // frames: a change the frame after sees nothing of but the journal.
        if rng.below(5) == 0
            && let Some(&unit) = units.get(rng.below(units.len().max(1) as u32) as usize)
            && let Some(path) = app.world().get::<PathResult>(unit).map(|r| r.cells.clone())
            && !path.is_empty()
        {
            let at = path[rng.below(path.len() as u32) as usize];
            let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
            if let Some(byte) = grid.cost(at).filter(|_| grid.classes().is_none()) {
                grid.put(at, NavGrid::BLOCKED).unwrap();
                grid.put(at, byte).unwrap();
            }
        }
        // Now and then a big patch of ground re-costed: many versions at
        // once (a long game runs through the grid's journal many times).
        if rng.below(4) == 0 {
            let a = cell(&mut rng);
            let b = Cell::new((a.x + 7).min(width - 1), (a.y + 7).min(height - 1));
            let cost = [1, 2, 3][rng.below(3) as usize];
            let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
            fill(&mut grid, a, b, cost);
        }
        versions.note(app.world_mut());
        app.update();
        watch.check(app.world_mut(), &versions, frame);
    }
    assert!(
        watch.checked > 10_000 && watch.flagged > 50,
        "seed {seed}: {} paths checked, {} flagged: the game did too little",
        watch.checked,
        watch.flagged
    );
}

#[test]
fn paths_are_flagged_after_a_change_under_them_and_only_then() {
    let frames = std::env::var("FRONTIER_FLAG_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(FRAMES);
    for seed in seeds_from_env("FRONTIER_FLAG_SEEDS", "FRONTIER_FLAG_SEED", 4) {
        play(seed, frames);
    }
}
