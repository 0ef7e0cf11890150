//! A model-based test of crowds at narrow passages: seeded random rivers
//! crossed by bridges one or two cells wide, with rocks on the banks;
//! squads of infantry (1×1) and vehicles (2×2) on both banks, ordered
//! across as groups or one by one, some orders given again on the way,
//! rocks toggled on the banks while they walk, and every frame a rock put
//! up right beside a unit, where one step could take it (never under a
//! body), each standing six frames. A second ground, a rocky
//! field with no river, has one squad walk to the middle and stand there
//! while the other crosses the whole field through it. Checked after
//! every frame:
//!
//! - no unit stands where its footprint does not fit (so none steps into
//!   a rock that stood before its step, however new);
//! - no bridge one lane wide (for the biggest unit there) carries units
//!   going both ways at once (bodies wholly between the banks);
//! - no two bodies overlap by more than 0.1 of the smaller radius (a
//!   quarter of their radii's sum before the separation promised it);
//! - no unit walks on, two frames running, a route whose legs between the
//!   corners still ahead a toggled rock cuts (`common::cut_legs`);
//! - every path held is flagged in the frame after a cell under it changed
//!   for its class, and only then (`path_flags::FlagWatch`);
//!
//! and every unit ends within a bound (the liveness of taking turns) in
//! one of the crowd's defined ends: arrived, or stopped in a jam with the
//! game told so (`Arrival::Blocked`, with exactly one `MoveBlocked` saying
//! where it stands). None may still be under way at the bound, making
//! headway or not.
//!
//! `FRONTIER_CROWD_SEEDS=N` (or `A..B`) runs more seeds than the CI's few
//! and lists every failing one (`FRONTIER_CROWD_SEED=S` runs seed S alone;
//! a unit still under way at the end is listed with its steering, its
//! motion and the ground round it, and a bridge carrying units both ways
//! with the units on it). Of the first 2,500 seeds of each ground, none
//! failed since the separation of bodies ends its rounds at a slop (not
//! after 8), shares
//! out what its first half left, and holds back the
//! pairs still deeper than 0.1 of a radius (the jams issue). Before that,
//! 252, 439 and 555 at the bridges failed, all on overlap, two bodies
//! pressed 25–30% into each other against the river bank at a bridge's
//! end, and 1391 failed the same way with the slop and the rounds alone.
//! Since the crowd went by its units' places
//! (`Ordinal`) rather than the query's order, and turned right without
//! the platform's sine and cosine, 780, 2421 and 2441 at the bridges and
//! 788 on the waters (a unit walking on a route a rock cut two frames
//! before) pass and 439 fails: which pairs end pressed in a jam follows
//! the order and the last bits. The lanes that keep a formation's shape
//! (5bc9076) failed the waters' 498: two units at rest after a group
//! move, further apart than the frame's contacts reach, one pushed by a
//! third 0.87 of a cell into the other, ended a frame 0.37 of a radius
//! deep; a body pushed further than the contacts allow for is now
//! checked against every body round it (`Separation::missed_pairs`).
//!
//! The seeds named below failed under the model's draws before movement
//! classes joined it (the waters ground), so today they replay other
//! games; `seeds_that_once_failed_still_pass` keeps them. Before rocks
//! went up beside units every frame, of the first 2,500 seeds 237 and
//! 2140 failed on the rocky field and 1321 and 2421 at the bridges, all
//! the same way; and before the solvers settled the contacts colour by
//! colour, 1947 and 2441 at the bridges: which pairs end pressed depends
//! on the order the pairs are settled in. After that, 135 and 895 failed
//! at the bridges the same way, and rocky seed 44 failed on the test
//! itself (a footprint check in f32). 174 (a vehicle pushing through
//! infantry about six cells of route from its end, for good) passes since
//! a vehicle whose pushing through gains nothing counts twice as far as
//! close enough; the same rule for infantry failed 809 on the rocky field
//! (two units stuck at a corridor's mouth in a crowd that rested sooner).
//! Before infantry stopped counting the bank beside a two-cell bridge's
//! end as the bridge, 14 failed, among them 161 and 403: an infantry unit
//! walking along the bank there claimed the bridge and, a crosser now,
//! was swept onto the deck by the stream coming off it.

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_frontier::core::{Cell, UnitKind};
use bevy_frontier::movement::{Arrival, Arrived, MoveBlocked};
use bevy_frontier::prelude::*;

use crate::common::{PutCell, Rng, app, assert_cut_routes_dropped, position, seeds_from_env};
use crate::path_flags::{FlagWatch, Versions};

const WIDTH: u32 = 70;
const HEIGHT: u32 = 44;
/// Columns of the river.
const RIVER: std::ops::Range<u32> = 31..39;
/// Frames every unit must have arrived within.
const BOUND: u32 = 12_000;

/// Every `MoveBlocked` the game was told, in order.
#[derive(Resource, Default)]
struct Told(Vec<MoveBlocked>);

fn listen(mut blocked: MessageReader<MoveBlocked>, mut told: ResMut<Told>) {
    told.0.extend(blocked.read().copied());
}

/// A bridge: its first row and its width.
struct Bridge {
    row: u32,
    width: u32,
}

/// The ground a model game is played on.
#[derive(Clone, Copy, PartialEq)]
enum Ground {
    /// A river crossed by one or two bridges, rocks on the banks.
    Bridges,
    /// Open ground strewn with rocks, no river.
    RockyField,
    /// Movement classes: a river of deep water with a shallow ford,
    /// rocks on the banks; infantry (foot) cross at the ford, hovercraft
    /// anywhere, and boats sail up and down the river through the ford.
    Waters,
}

/// Terrain types of [`Ground::Waters`]: 1 (open ground, as a rock taken
/// away leaves it), a ford and deep water.
const OPEN: Terrain = Terrain(1);
const FORD: Terrain = Terrain(2);
const DEEP: Terrain = Terrain(3);
/// Its movement classes, in id order.
const FOOT: ClassId = ClassId::from_index(0);
const BOAT: ClassId = ClassId::from_index(1);
const HOVER: ClassId = ClassId::from_index(2);

fn water_classes() -> MovementClasses {
    MovementClasses::new()
        .class("foot", [(OPEN, 1), (FORD, 2)])
        .class("boat", [(FORD, 2), (DEEP, 1)])
        .class("hover", [(OPEN, 1), (FORD, 1), (DEEP, 1)])
}

struct Game {
    seed: u64,
    ground: Ground,
    rng: Rng,
    map: Entity,
    bridges: Vec<Bridge>,
    /// Each unit, its size, and which way it crosses (+1: east; 0 for
    /// boats, which sail along the river).
    units: Vec<(Entity, u8, f32)>,
    /// Each unit's movement class.
    classes: Vec<ClassId>,
    /// Rocks put up beside units ([`Game::edit_beside`]), oldest first.
    beside: std::collections::VecDeque<Cell>,
}

impl Game {
    fn new(seed: u64, ground: Ground) -> (App, Self) {
        let mut rng = Rng::new(seed);
        let mut grid = NavGrid::new(WIDTH, HEIGHT).unwrap();
        if ground == Ground::RockyField {
            // One cell in twelve a rock.
            for y in 0..HEIGHT {
                for x in 0..WIDTH {
                    if rng.below(12) == 0 {
                        grid.put(Cell::new(x, y), NavGrid::BLOCKED).unwrap();
                    }
                }
            }
            return Self::start(seed, ground, rng, grid, Vec::new());
        }
        if ground == Ground::Waters {
            grid.set_classes(water_classes()).unwrap();
            grid.fill_terrain(
                Cell::new(RIVER.start, 0),
                Cell::new(RIVER.end - 1, HEIGHT - 1),
                DEEP,
            )
            .unwrap();
            // The ford, clear of the boats' ends.
            let (row, width) = (8 + rng.below(HEIGHT - 20), 2 + rng.below(3));
            grid.fill_terrain(
                Cell::new(RIVER.start, row),
                Cell::new(RIVER.end - 1, row + width - 1),
                FORD,
            )
            .unwrap();
            let bridges = vec![Bridge { row, width }];
            for _ in 0..40 {
                let cell = random_bank_cell(&mut rng);
                if !near_a_bridge(&bridges, cell) {
                    grid.put(cell, NavGrid::BLOCKED).unwrap();
                }
            }
            return Self::start(seed, ground, rng, grid, bridges);
        }
        grid.fill_rect(
            Cell::new(RIVER.start, 0),
            Cell::new(RIVER.end - 1, HEIGHT - 1),
            NavGrid::BLOCKED,
        )
        .unwrap();
        let mut bridges = Vec::new();
        for _ in 0..1 + rng.below(2) {
            let (row, width) = (3 + rng.below(HEIGHT - 8), 1 + rng.below(2));
            if bridges.iter().any(|b: &Bridge| row.abs_diff(b.row) < 5) {
                continue;
            }
            grid.fill_rect(
                Cell::new(RIVER.start, row),
                Cell::new(RIVER.end - 1, row + width - 1),
                1,
            )
            .unwrap();
            bridges.push(Bridge { row, width });
        }
        // Rocks on the banks, off the bridges' ends.
        for _ in 0..40 {
            let cell = random_bank_cell(&mut rng);
            if !near_a_bridge(&bridges, cell) {
                grid.put(cell, NavGrid::BLOCKED).unwrap();
            }
        }
        Self::start(seed, ground, rng, grid, bridges)
    }

    /// The app with the map and the squads on it.
    fn start(
        seed: u64,
        ground: Ground,
        rng: Rng,
        grid: NavGrid,
        bridges: Vec<Bridge>,
    ) -> (App, Self) {
        let mut app = app();
        app.insert_resource(TimeUpdateStrategy::ManualDuration(
            std::time::Duration::from_millis(1_000 / 30),
        ))
        .init_resource::<Told>()
        .add_systems(Update, listen.after(FrontierSystems::Last));
        let map = app.world_mut().spawn((grid, Transform::default())).id();
        let mut game = Self {
            seed,
            ground,
            rng,
            map,
            bridges,
            units: Vec::new(),
            classes: Vec::new(),
            beside: Default::default(),
        };
        game.spawn_squads(&mut app);
        (app, game)
    }

    /// A squad on each bank: infantry, and some vehicles when a bridge is
    /// wide enough for them, on free cells.
    fn spawn_squads(&mut self, app: &mut App) {
        let waters = self.ground == Ground::Waters;
        let vehicles_cross = !waters && self.bridges.iter().any(|b| b.width >= 2);
        for (x0, way) in [(2u32, 1.0), (RIVER.end + 3, -1.0)] {
            let count = 12 + self.rng.below(20);
            let vehicles = if vehicles_cross { self.rng.below(4) } else { 0 };
            let mut taken = std::collections::HashSet::new();
            let grid = app.world().get::<NavGrid>(self.map).unwrap().clone();
            let mut placed = 0;
            'cells: for y in (2..HEIGHT - 3).step_by(2) {
                for x in (x0..x0 + 26).step_by(2) {
                    if placed == count + vehicles {
                        break 'cells;
                    }
                    let size = if placed < vehicles { 2 } else { 1 };
                    // On the waters, one unit in three a hovercraft.
                    let class = if waters && placed % 3 == 2 {
                        HOVER
                    } else {
                        FOOT
                    };
                    let cells: Vec<Cell> = (0..size)
                        .flat_map(|dy| (0..size).map(move |dx| Cell::new(x + dx, y + dy)))
                        .collect();
                    if cells
                        .iter()
                        .any(|c| !grid.is_walkable(*c) || taken.contains(c))
                    {
                        continue;
                    }
                    taken.extend(cells);
                    let centre =
                        Vec2::new(x as f32, y as f32) + Vec2::splat((size - 1) as f32 / 2.0);
                    let unit = app
                        .world_mut()
                        .spawn((
                            Mover {
                                speed: if size == 1 { 4.0 } else { 2.5 },
                            },
                            Footprint(size as u8),
                            MovementClass(class),
                            Transform::from_translation(centre.extend(0.0)),
                        ))
                        .id();
                    self.units.push((unit, size as u8, way));
                    self.classes.push(class);
                    placed += 1;
                }
            }
        }
        if waters {
            // Boats at both ends of the river, in its middle columns.
            for (y, count) in [
                (2.0, 1 + self.rng.below(3)),
                (HEIGHT as f32 - 3.0, 1 + self.rng.below(3)),
            ] {
                for i in 0..count {
                    let x = (RIVER.start + 2 + 2 * i) as f32;
                    let unit = app
                        .world_mut()
                        .spawn((
                            Mover { speed: 3.0 },
                            MovementClass(BOAT),
                            Transform::from_xyz(x, y, 0.0),
                        ))
                        .id();
                    self.units.push((unit, 1, 0.0));
                    self.classes.push(BOAT);
                }
            }
        }
    }

    /// Orders every boat to the other end of the river.
    fn order_boats(&mut self, app: &mut App) {
        for (&(unit, _, way), &class) in self.units.iter().zip(&self.classes) {
            if class != BOAT || way != 0.0 {
                continue;
            }
            let at = position(app, unit);
            let goal = Vec2::new(at.x, HEIGHT as f32 - 1.0 - at.y);
            app.world_mut()
                .entity_mut(unit)
                .insert(PathRequest::new(goal));
        }
    }

    /// Orders the units of side `way` (+1: the west bank) to the other
    /// bank, as one group or each unit alone to its own place mirrored
    /// across the river. On a rocky field the west side only walks to the
    /// middle, where it stands in the way of the east side, ordered later
    /// across the whole field.
    fn order(&mut self, app: &mut App, way: f32) {
        let middle = self.ground == Ground::RockyField && way > 0.0;
        {
            let side: Vec<Entity> = self
                .units
                .iter()
                .filter(|u| u.2 == way)
                .map(|u| u.0)
                .collect();
            if self.rng.below(2) == 0 {
                let goal = Vec2::new(
                    match (middle, way > 0.0) {
                        (true, _) => 30.0,
                        (false, true) => 55.0,
                        (false, false) => 14.0,
                    },
                    22.0,
                );
                app.world_mut()
                    .write_message(GroupMove::new(side.iter().copied(), goal));
            } else {
                for unit in side {
                    let at = position(app, unit);
                    let x = if middle {
                        at.x + 16.0
                    } else {
                        WIDTH as f32 - 1.0 - at.x
                    };
                    let goal = Vec2::new(x, at.y);
                    app.world_mut()
                        .entity_mut(unit)
                        .insert(PathRequest::new(goal));
                }
            }
        }
    }

    /// A random rock on a bank toggled (never on a bridge's end, nor under
    /// a unit).
    fn edit(&mut self, app: &mut App) {
        let cell = random_bank_cell(&mut self.rng);
        if near_a_bridge(&self.bridges, cell) {
            return;
        }
        let under_a_unit = self.units.iter().any(|&(unit, size, _)| {
            let at = position(app, unit);
            (at.x - cell.x as f32).abs() < size as f32 + 1.0
                && (at.y - cell.y as f32).abs() < size as f32 + 1.0
        });
        if under_a_unit {
            return;
        }
        let mut grid = app.world_mut().get_mut::<NavGrid>(self.map).unwrap();
        let cost = if grid.is_walkable(cell) {
            NavGrid::BLOCKED
        } else {
            1
        };
        grid.put(cell, cost).unwrap();
    }

    /// A rock put up right beside a random unit, where one step could take
    /// its body, never under any unit's body (nor on the river or a
    /// bridge's end); after [`BESIDE`] frames it goes again. Every frame,
    /// so units walk among walls that come and go at their feet.
    fn edit_beside(&mut self, app: &mut App) {
        if self.beside.len() >= BESIDE
            && let Some(old) = self.beside.pop_front()
        {
            let mut grid = app.world_mut().get_mut::<NavGrid>(self.map).unwrap();
            grid.put(old, 1).unwrap();
        }
        let (unit, size, _) = self.units[self.rng.below(self.units.len() as u32) as usize];
        let at = position(app, unit);
        let reach = i64::from(size) + 1;
        let offset = |rng: &mut Rng| i64::from(rng.below(2 * reach as u32 + 1)) - reach;
        let (x, y) = (
            at.x.round() as i64 + offset(&mut self.rng),
            at.y.round() as i64 + offset(&mut self.rng),
        );
        if x < 0 || y < 0 || x >= i64::from(WIDTH) || y >= i64::from(HEIGHT) {
            return;
        }
        let cell = Cell::new(x as u32, y as u32);
        let on_river = self.ground != Ground::RockyField && RIVER.contains(&cell.x);
        if on_river || near_a_bridge(&self.bridges, cell) {
            return;
        }
        // A body of side `size` centred at `at` covers the cells its square
        // overlaps.
        let under_a_body = self.units.iter().any(|&(unit, size, _)| {
            let at = position(app, unit);
            let half = size as f32 / 2.0 + 0.5;
            (at.x - cell.x as f32).abs() < half && (at.y - cell.y as f32).abs() < half
        });
        let mut grid = app.world_mut().get_mut::<NavGrid>(self.map).unwrap();
        if under_a_body || !grid.is_walkable(cell) {
            return;
        }
        grid.put(cell, NavGrid::BLOCKED).unwrap();
        self.beside.push_back(cell);
    }

    /// Every unit ended in a defined end: arrived, or stopped in a jam and
    /// told once, where it stands.
    fn check_ends(&self, app: &App) {
        let told = &app.world().resource::<Told>().0;
        for &(unit, ..) in &self.units {
            let outcome = app.world().get::<Arrived>(unit).map(|a| a.outcome);
            let of_unit: Vec<_> = told.iter().filter(|t| t.entity == unit).collect();
            match outcome {
                Some(Arrival::Blocked) => assert!(
                    of_unit.len() == 1 && of_unit[0].at.distance(position(app, unit)) < 0.5,
                    "seed {}: {unit} stopped blocked, told {of_unit:?}, at {}",
                    self.seed,
                    position(app, unit)
                ),
                _ => assert!(
                    of_unit.is_empty(),
                    "seed {}: {unit} ended {outcome:?} but was told {of_unit:?}",
                    self.seed
                ),
            }
        }
    }

    /// The checks of one frame.
    fn check(&self, app: &App, frame: u32) {
        let grid = app.world().get::<NavGrid>(self.map).unwrap();
        let at: Vec<Vec2> = self.units.iter().map(|u| position(app, u.0)).collect();
        for (i, &(unit, size, _)) in self.units.iter().enumerate() {
            // The anchor of a footprint centred there, in f64 as the plugin
            // works it out: in f32, a unit resting against a wall at
            // y = 0.49999997 would round into the wall's cell.
            let corner = at[i].as_dvec2() - (f64::from(size) - 1.0) / 2.0 + 0.5;
            let anchor = Cell::new(corner.x.floor() as u32, corner.y.floor() as u32);
            // Where its class may stand: no boat on land, no infantry in
            // deep water.
            let class = self.classes[i];
            assert!(
                grid.view(UnitKind::new(class, size))
                    .is_some_and(|view| view.is_walkable(anchor)),
                "seed {}, frame {frame}: {unit} of size {size}, class {class}, stands where it does not fit, at {}",
                self.seed,
                at[i]
            );
            for (j, &(other, other_size, _)) in self.units.iter().enumerate().skip(i + 1) {
                // No deeper than 0.1 of the smaller radius: what the
                // separation promises (its hold back keeps it).
                let touching = 0.45 * (size + other_size) as f32;
                let limit = 0.1 * 0.45 * size.min(other_size) as f32;
                assert!(
                    at[i].distance(at[j]) >= touching - limit - 1e-4,
                    "seed {}, frame {frame}: {unit} at {} and {other} at {} overlap, {} apart\n  {:?} {:?}\n  {:?} {:?}",
                    self.seed,
                    at[i],
                    at[j],
                    at[i].distance(at[j]),
                    app.world().get::<bevy_frontier::movement::Steering>(unit),
                    app.world().get::<bevy_frontier::movement::Motion>(unit),
                    app.world().get::<bevy_frontier::movement::Steering>(other),
                    app.world().get::<bevy_frontier::movement::Motion>(other),
                );
            }
        }
        // A bridge is one lane if the biggest unit cannot pass another on
        // it; infantry alone pass each other on one two cells wide.
        let biggest = self.units.iter().map(|u| u.1).max().unwrap_or(1) as u32;
        for bridge in self.bridges.iter().filter(|b| b.width < 2 * biggest) {
            // Its body wholly between the banks: a unit jostled half a
            // cell onto the end of the bridge by those going on to it is
            // not crossing against them.
            let on = |i: usize| {
                let radius = 0.45 * self.units[i].1 as f32;
                at[i].x - radius >= RIVER.start as f32 - 0.5
                    && at[i].x + radius <= RIVER.end as f32 - 0.5
                    && at[i].y >= bridge.row as f32 - 1.0
                    && at[i].y <= (bridge.row + bridge.width) as f32
            };
            let mut ways = [false; 2];
            for (i, &(_, _, way)) in self.units.iter().enumerate() {
                if on(i) {
                    ways[usize::from(way > 0.0)] = true;
                }
            }
            assert!(
                !(ways[0] && ways[1]),
                "seed {}, frame {frame}: the bridge on row {} carries units both ways:{}",
                self.seed,
                bridge.row,
                (0..self.units.len())
                    .filter(|&i| on(i))
                    .map(|i| {
                        let (unit, size, way) = self.units[i];
                        format!(
                            "\n  {unit} size {size} going {way} at {} {:?}",
                            at[i],
                            app.world().get::<bevy_frontier::movement::Motion>(unit),
                        )
                    })
                    .collect::<String>()
            );
        }
    }
}

fn random_bank_cell(rng: &mut Rng) -> Cell {
    let x = if rng.below(2) == 0 {
        1 + rng.below(RIVER.start - 2)
    } else {
        RIVER.end + 1 + rng.below(WIDTH - RIVER.end - 2)
    };
    Cell::new(x, 1 + rng.below(HEIGHT - 2))
}

/// Whether `cell` is within four cells of a bridge's end.
fn near_a_bridge(bridges: &[Bridge], cell: Cell) -> bool {
    bridges.iter().any(|b| {
        cell.y + 4 >= b.row
            && cell.y <= b.row + b.width + 3
            && (cell.x + 5 >= RIVER.start && cell.x < RIVER.end + 5)
    })
}

/// Rocks standing beside units at once ([`Game::edit_beside`]), each for
/// as many frames.
const BESIDE: usize = 6;

/// Frames after the west side's order the east side's comes on a rocky
/// field: time for the west side to stand in its way.
const EAST_LATER: u32 = 150;

fn run(seed: u64, ground: Ground) {
    let (mut app, mut game) = Game::new(seed, ground);
    app.update();
    game.order(&mut app, 1.0);
    if ground != Ground::RockyField {
        game.order(&mut app, -1.0);
    }
    if ground == Ground::Waters {
        game.order_boats(&mut app);
    }
    let mut cut = Vec::new();
    let (mut versions, mut flags) = (Versions::default(), FlagWatch::default());
    for frame in 1..=BOUND {
        if ground == Ground::RockyField && frame == EAST_LATER {
            game.order(&mut app, -1.0);
        }
        versions.note(app.world_mut());
        app.update();
        game.check(&app, frame);
        flags.check(app.world_mut(), &versions, frame);
        assert_cut_routes_dropped(app.world_mut(), &mut cut, || {
            format!("seed {seed}, frame {frame}")
        });
        // Some units ordered again on the way; rocks toggled now and then.
        if frame % 97 == 0 && game.rng.below(3) == 0 {
            let (unit, ..) = game.units[game.rng.below(game.units.len() as u32) as usize];
            if let Some(mut request) = app.world_mut().get_mut::<PathRequest>(unit) {
                request.set_changed();
            }
        }
        if frame % 13 == 0 {
            game.edit(&mut app);
        }
        game.edit_beside(&mut app);
        let arrived = game
            .units
            .iter()
            .all(|u| app.world().get::<Arrived>(u.0).is_some());
        if arrived {
            return game.check_ends(&app);
        }
    }
    let left = game
        .units
        .iter()
        .filter(|u| app.world().get::<Arrived>(u.0).is_none())
        .count();
    let stuck: Vec<String> = game
        .units
        .iter()
        .filter(|u| app.world().get::<Arrived>(u.0).is_none())
        .map(|&(unit, size, _)| {
            let at = position(&app, unit);
            // The ground round it, top row first: `#` wall, `o` another
            // unit's cell, `@` its own.
            let grid = app.world().get::<NavGrid>(game.map).unwrap();
            let mut ground = String::new();
            for y in (at.y.round() as i64 - 4..=at.y.round() as i64 + 4).rev() {
                ground.push_str("\n    ");
                for x in at.x.round() as i64 - 6..=at.x.round() as i64 + 6 {
                    let here = |p: Vec2| p.x.round() as i64 == x && p.y.round() as i64 == y;
                    let walkable =
                        x >= 0 && y >= 0 && grid.is_walkable(Cell::new(x as u32, y as u32));
                    ground.push(if here(at) {
                        '@'
                    } else if game.units.iter().any(|u| here(position(&app, u.0))) {
                        'o'
                    } else if walkable {
                        '.'
                    } else {
                        '#'
                    });
                }
            }
            format!(
                "\n  {unit} size {size} at {at} {:?} {:?}{ground}",
                app.world().get::<bevy_frontier::movement::Steering>(unit),
                app.world().get::<bevy_frontier::movement::Motion>(unit),
            )
        })
        .collect();
    panic!(
        "seed {seed}: {left} units still under way after {BOUND} frames:{}",
        stuck.concat()
    );
}

/// Runs the seeds the environment asks for (`FRONTIER_CROWD_SEEDS=N`: the
/// first N; `A..B`: seeds A to B - 1; else the first `default`;
/// `FRONTIER_CROWD_SEED=S`: S alone) on `ground`, and fails listing every
/// failing seed.
fn run_seeds(ground: Ground, default: u64) {
    let seeds = seeds_from_env("FRONTIER_CROWD_SEEDS", "FRONTIER_CROWD_SEED", default);
    run_listed(ground, seeds);
}

/// Runs every seed of `seeds` on `ground`, and fails listing every failing
/// one.
fn run_listed(ground: Ground, seeds: impl IntoIterator<Item = u64>) {
    let failed = failing(ground, seeds);
    assert!(failed.is_empty(), "failed seeds {failed:?}");
}

/// The seeds of `seeds` that fail on `ground`.
fn failing(ground: Ground, seeds: impl IntoIterator<Item = u64>) -> Vec<u64> {
    seeds
        .into_iter()
        .filter(|&seed| std::panic::catch_unwind(|| run(seed, ground)).is_err())
        .collect()
}

#[test]
fn crowds_at_random_bridges_take_turns_and_all_arrive() {
    run_seeds(Ground::Bridges, 8);
}

/// A squad stands among rocks and another crosses through it: a standing
/// unit a rock keeps from being pushed straight on steps aside.
#[test]
fn crowds_crossing_standing_squads_among_rocks_all_arrive() {
    run_seeds(Ground::RockyField, 8);
}

/// Infantry, hovercraft and boats on one map: each stays on ground its
/// class may enter every frame, they avoid each other where they meet (at
/// the ford, boats sailing through the infantry crossing it), and all
/// arrive.
#[test]
fn infantry_hovercraft_and_boats_share_a_river_and_all_arrive() {
    run_seeds(Ground::Waters, 8);
}

/// Seeds that once left units a cell or two from their ends for good: two
/// units each in the other's way in a narrow spot among rocks (49, 200),
/// and one whose end became a rock, sent round a wall's corner to the
/// free cell beside it, with a resting unit on the way (214). A unit
/// blocked that close to its end now rests where it stands.
#[test]
fn units_kept_from_their_ends_in_narrow_spots_still_arrive() {
    for seed in [49, 200, 214] {
        run(seed, Ground::Bridges);
    }
}

/// Seeds that once left units still for good beside a one-lane gap,
/// pressed by the units about to go in: at a bridge's mouth (226, 287,
/// and 136, two bodies pressed 26% into each other there), and at gaps
/// between rocks (24, 73, 213, 258 on the rocky field). Avoidance planned
/// them into the gap, where they may not step without a claim. A passage
/// beside a unit is a wall to its avoidance now, not only one ahead.
#[test]
fn units_pressed_beside_a_one_lane_gap_are_not_planned_into_it() {
    for seed in [136, 226, 287] {
        run(seed, Ground::Bridges);
    }
    for seed in [24, 73, 213, 258] {
        run(seed, Ground::RockyField);
    }
}

/// A seed that once left two units pushing through against each other
/// round a rock's corner, each leaving the avoiding to the other, for
/// good (236 on the rocky field): the later entity yields now.
#[test]
fn two_units_pushing_through_against_each_other_do_not_stand_for_good() {
    run(236, Ground::RockyField);
}

/// Seeds where a unit walked into the body of one standing idle that could
/// not be pushed aside: against the river bank at a bridge's mouth (543:
/// two bodies 31% into each other), at the far bank (529: a tank left
/// pressed there for good), and at the map's edge in the mouth of a gap
/// between rocks (110 on the rocky field). The walking unit now stops
/// short instead.
#[test]
fn units_walking_into_one_that_cannot_make_way_stop_short() {
    for seed in [529, 543] {
        run(seed, Ground::Bridges);
    }
    run(110, Ground::RockyField);
}

/// A seed that once left three units of a group for good in a pocket among
/// rocks (399 on the rocky field): a rock put up after their group's path
/// was found cut the way on from the corner they pressed round, and
/// avoidance slid them along it instead of walking them into it. A unit
/// blocked that long whose way on a wall cuts now asks for a new path.
#[test]
fn units_whose_group_route_a_new_rock_cuts_in_a_crowd_plan_again() {
    run(399, Ground::RockyField);
}

/// Seeds where a vehicle was kept for good three to four cells from its
/// end, by infantry resting beside a bridge's end or among rocks (once
/// the bank beside a two-cell bridge stopped counting as the bridge, the
/// infantry could rest there). A unit k cells wide blocked within k times
/// the reach of a unit one cell wide now rests where it stands. And a seed
/// where one was kept six cells from its end by infantry with nowhere to
/// go, pushing through them and stalling again over and over (174): once
/// pushing through gained it nothing, twice that reach is close enough.
#[test]
fn vehicles_kept_a_few_cells_from_their_ends_still_arrive() {
    for seed in [174, 509, 1151, 1246] {
        run(seed, Ground::Bridges);
    }
}

/// The seeds the module's doc names as failing once, at the bridges and on
/// the rocky field, whatever seeds CI's random runs draw.
#[test]
fn seeds_that_once_failed_still_pass() {
    let bridges = failing(
        Ground::Bridges,
        [
            135, 161, 252, 403, 439, 555, 780, 895, 1321, 1391, 1947, 2421, 2441,
        ],
    );
    let rocks = failing(Ground::RockyField, [44, 237, 809, 2140]);
    let waters = failing(Ground::Waters, [498, 788]);
    assert!(
        bridges.is_empty() && rocks.is_empty() && waters.is_empty(),
        "failed seeds at the bridges {bridges:?}, on the rocky field {rocks:?}, on the waters {waters:?}"
    );
}
