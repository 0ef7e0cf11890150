//! A saved game goes on bit for bit after a load: seeded games of every
//! kind of work (searches spanning frames, quick routes on rough ground
//! while the coarse graph is built, group moves, units sent to shared
//! goals, chases, a crowd at a one-lane bridge, map edits, units
//! despawned and spawned) are saved at a frame of the seed's choosing,
//! loaded into a fresh `App` whose entities have other ids, and played on
//! beside the game that was saved: the [`FrontierChecksum`] of every frame
//! after is the same. A frame where they part fails with the first units
//! and fields that differ ([`FrontierDump`]).
#![cfg(feature = "serialize")]

use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;
use bevy_frontier::checksum::FrontierChecksum;
use bevy_frontier::core::Cell;
use bevy_frontier::desync::FrontierDump;
use bevy_frontier::groups::SharedRoute;
use bevy_frontier::pathfinding::{CoarseGraphs, PathfindingQueue};
use bevy_frontier::prelude::*;
use bevy_frontier::save::{FrontierSave, LoadError};

use crate::common::{Rng, crowd_app, terrain_grid};

const SIZE: u32 = 96;
const FRAMES: u64 = 200;
/// Seeds run by default; `FRONTIER_SAVE_SEEDS=N` runs N.
const SEEDS: u64 = 8;

/// A game as the test drives it: the app, its map and its units (by the
/// test's own numbering, `None` once despawned).
struct Game {
    app: App,
    map: Entity,
    units: Vec<Option<Entity>>,
}

fn game_app() -> App {
    let mut app = crowd_app();
    app.init_resource::<FrontierChecksum>();
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 400,
        ..default()
    });
    app
}

/// The river map: rough ground with woods and walls, a river walled
/// across it but for a bridge one cell wide and a ford.
fn grid(seed: u64) -> NavGrid {
    let (open, woods) = (Terrain(1), Terrain(2));
    let mut classes = MovementClasses::new();
    classes.add("foot", [(open, 1), (woods, 3)]);
    let mut rng = Rng::new(seed ^ 0x5eed);
    terrain_grid(SIZE, classes, |x, y| {
        let river = (46..50).contains(&x);
        match (river, rng.below(100)) {
            (true, _) if y == 48 => open,
            (true, _) if (20..24).contains(&y) => woods,
            (true, _) => Terrain::WALL,
            (false, 0..=6) => Terrain::WALL,
            (false, r) if r < 35 => woods,
            _ => open,
        }
    })
}

fn spawn_unit(app: &mut App, at: Vec2, speed: f32) -> Entity {
    app.world_mut()
        .spawn((Mover { speed }, Transform::from_translation(at.extend(0.0))))
        .id()
}

impl Game {
    fn new(seed: u64) -> Self {
        let mut app = game_app();
        let map = app
            .world_mut()
            .spawn((grid(seed), Transform::default()))
            .id();
        let mut rng = Rng::new(seed);
        let mut units: Vec<Option<Entity>> = (0..20)
            .map(|i| {
                // Half each side of the river.
                let x = if i % 2 == 0 {
                    rng.below(40)
                } else {
                    56 + rng.below(40)
                };
                let at = Vec2::new(x as f32, rng.below(SIZE) as f32);
                let unit = spawn_unit(&mut app, at, 3.0 + rng.below(3) as f32);
                // Some of two cells: their own layer and coarse graph.
                if i % 5 == 4 {
                    app.world_mut().entity_mut(unit).insert(Footprint(2));
                }
                Some(unit)
            })
            .collect();
        // Eight near the bridge, four each side, sent over it.
        for i in 0..8 {
            let (x, to) = if i % 2 == 0 { (40, 56) } else { (55, 39) };
            let at = Vec2::new((x + i % 4) as f32, (46 + i / 2) as f32);
            let unit = spawn_unit(&mut app, at, 4.0);
            let goal = Cell::new(to, 44 + 2 * (i / 2));
            app.world_mut()
                .entity_mut(unit)
                .insert(PathRequest::new(goal));
            units.push(Some(unit));
        }
        Self { app, map, units }
    }

    fn alive(&self) -> Vec<(usize, Entity)> {
        (self.units.iter().enumerate())
            .filter_map(|(i, unit)| Some((i, (*unit)?)))
            .collect()
    }

    /// The frame's orders and edits, the same in any game of this seed
    /// whatever its entities' ids.
    fn act(&mut self, seed: u64, frame: u64) {
        let mut rng = Rng::new(seed.wrapping_mul(1_000_003) ^ frame);
        let alive = self.alive();
        let pick = |rng: &mut Rng| alive[rng.below(alive.len() as u32) as usize].1;
        let cell = |rng: &mut Rng| Cell::new(rng.below(SIZE), rng.below(SIZE));
        let world = self.app.world_mut();
        let roll = rng.below(100);
        if roll < 30 {
            let unit = pick(&mut rng);
            let request = match rng.below(10) {
                0 => PathRequest::chase(pick(&mut rng), 2.0),
                1 => PathRequest::follow(pick(&mut rng), 3.0),
                2 => PathRequest::new(cell(&mut rng)).within(4.0),
                3 => PathRequest::new(cell(&mut rng)).without_refinement(),
                _ => PathRequest::new(cell(&mut rng)),
            };
            world.entity_mut(unit).insert(request);
        } else if roll < 38 {
            // Units sent one by one to a shared rally point.
            let rally = [Cell::new(90, 10), Cell::new(5, 88)][rng.below(2) as usize];
            for _ in 0..3 + rng.below(3) {
                let unit = pick(&mut rng);
                world.entity_mut(unit).insert(PathRequest::new(rally));
            }
        } else if roll < 42 {
            let units: Vec<Entity> = (0..4 + rng.below(5)).map(|_| pick(&mut rng)).collect();
            let columns = 1 + rng.below(2) as u8;
            world.write_message(GroupMove::new(units, cell(&mut rng)).in_columns(columns, 1.0));
        } else if roll < 45 {
            let unit = pick(&mut rng);
            world.entity_mut(unit).remove::<PathRequest>();
        }
        // Edits: walls and woods come and go (never on the bridge).
        if rng.below(100) < 25 {
            let at = cell(&mut rng);
            if !(46..50).contains(&at.x) {
                let terrain = [Terrain::WALL, Terrain(1), Terrain(2)][rng.below(3) as usize];
                let mut grid = world.get_mut::<NavGrid>(self.map).unwrap();
                grid.set_terrain(at, terrain).unwrap();
            }
        }
        let roll = rng.below(100);
        if roll < 2 && alive.len() > 12 {
            let unit = pick(&mut rng);
            world.despawn(unit);
            let i = self.units.iter().position(|u| *u == Some(unit)).unwrap();
            self.units[i] = None;
        } else if roll < 5 {
            let at = Vec2::new(rng.below(40) as f32, rng.below(SIZE) as f32);
            let unit = spawn_unit(&mut self.app, at, 4.0);
            self.units.push(Some(unit));
        } else if roll < 8 {
            // A request with no mover: a path asked for, not walked.
            let at = Transform::from_xyz(rng.below(SIZE) as f32, rng.below(SIZE) as f32, 0.0);
            let request = PathRequest::new(cell(&mut rng)).with_priority(rng.below(3) as i32);
            let asker = self.app.world_mut().spawn((at, request)).id();
            self.units.push(Some(asker));
        }
    }

    fn checksum(&self) -> u64 {
        self.app.world().resource::<FrontierChecksum>().frame()
    }

    /// The game loaded from `save` into a fresh app, its entities spawned
    /// again under other ids: after `clutter` others, and in reverse.
    fn load(&self, save: &FrontierSave, clutter: u32) -> Result<Self, LoadError> {
        let mut app = game_app();
        // A frame before the load, as a game's menu runs: Bevy's clock
        // starts (its first frame lasts no time), so the loaded game's
        // frames last as long as the saved game's.
        app.update();
        let world = app.world_mut();
        let spare: Vec<Entity> = (0..clutter).map(|_| world.spawn_empty().id()).collect();
        let mut ids = EntityHashMap::default();
        let mut units = vec![None; self.units.len()];
        for (i, unit) in self.units.iter().enumerate().rev() {
            if let Some(unit) = unit {
                let new = world.spawn(Transform::default()).id();
                ids.insert(*unit, new);
                units[i] = Some(new);
            }
        }
        let map = world.spawn(Transform::default()).id();
        ids.insert(self.map, map);
        for entity in spare.into_iter().step_by(2) {
            world.despawn(entity);
        }
        save.restore(world, &ids)?;
        Ok(Self { app, map, units })
    }
}

/// What was under way when a game was saved.
#[derive(Debug, Default, Clone, Copy)]
struct Under {
    searches: bool,
    graph_build: bool,
    groups: bool,
    chases: bool,
    passage: bool,
}

fn under_way(game: &mut Game) -> Under {
    let world = game.app.world_mut();
    let searches = world.resource::<PathfindingQueue>().in_flight() > 0;
    let graph_build = world
        .get::<CoarseGraphs>(game.map)
        .is_some_and(|g| g.is_building());
    let groups = world.query::<&SharedRoute>().iter(world).next().is_some();
    let chases = world
        .query::<&PathRequest>()
        .iter(world)
        .any(|request| request.target().is_some());
    let passage = world.query::<&Transform>().iter(world).any(|at| {
        (44.0..52.0).contains(&at.translation.x) && (46.0..51.0).contains(&at.translation.y)
    });
    Under {
        searches,
        graph_build,
        groups,
        chases,
        passage,
    }
}

/// Plays seed `seed`, saving at `save_at` (after that frame's orders,
/// before it runs), and checks the loaded game against the saved one on
/// every frame after. Returns what was under way when it saved, and the
/// save's size.
fn play(seed: u64, save_at: u64) -> (Under, usize) {
    let mut game = Game::new(seed);
    for frame in 0..save_at {
        game.act(seed, frame);
        game.app.update();
    }
    game.act(seed, save_at);
    let under = under_way(&mut game);
    let save = FrontierSave::capture(game.app.world_mut()).unwrap();
    // Through bytes, as a game keeps it.
    let save = FrontierSave::from_bytes(save.to_bytes());
    let mut loaded = game.load(&save, 7 + (seed as u32 * 13) % 50).unwrap();
    for frame in save_at..FRAMES {
        if frame > save_at {
            game.act(seed, frame);
            loaded.act(seed, frame);
        }
        game.app.update();
        loaded.app.update();
        if game.checksum() != loaded.checksum() {
            let ours = FrontierDump::capture(game.app.world_mut());
            let theirs = FrontierDump::capture(loaded.app.world_mut());
            let parted: Vec<String> = ours
                .differences(&theirs)
                .take(8)
                .map(|d| d.to_string())
                .collect();
            panic!(
                "seed {seed} saved before frame {save_at}: the loaded game parted on frame {frame} ({under:?}):\n{}",
                parted.join("\n")
            );
        }
    }
    (under, save.as_bytes().len())
}

#[test]
fn a_loaded_game_goes_on_as_the_saved_one_every_frame() {
    let seeds = std::env::var("FRONTIER_SAVE_SEEDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(SEEDS);
    let mut seen = Under::default();
    for seed in 0..seeds {
        // Early saves catch the coarse graph being built; later ones
        // groups, chases and the crowd at the bridge.
        let save_at = match seed % 4 {
            0 => 1 + seed % 3,
            _ => 10 + Rng::new(seed).below(FRAMES as u32 - 40) as u64,
        };
        let (under, _) = play(seed, save_at);
        seen.searches |= under.searches;
        seen.graph_build |= under.graph_build;
        seen.groups |= under.groups;
        seen.chases |= under.chases;
        seen.passage |= under.passage;
    }
    // The seeds saved every kind of work in the middle of it.
    assert!(
        seen.searches && seen.graph_build && seen.groups && seen.chases && seen.passage,
        "{seen:?}"
    );
}

#[test]
fn bad_saves_are_refused_and_change_nothing() {
    let mut game = Game::new(3);
    for frame in 0..20 {
        game.act(3, frame);
        game.app.update();
    }
    let save = FrontierSave::capture(game.app.world_mut()).unwrap();
    let bytes = save.to_bytes();
    let mut fresh = game_app();
    let before = fresh.world().entities().len();
    let ids = EntityHashMap::default();
    let refused = |bytes: Vec<u8>, fresh: &mut App| {
        FrontierSave::from_bytes(bytes).restore(fresh.world_mut(), &ids)
    };
    assert_eq!(
        refused(b"not a save".to_vec(), &mut fresh),
        Err(LoadError::NotASave)
    );
    let mut flipped = bytes.clone();
    *flipped.last_mut().unwrap() ^= 1;
    assert_eq!(refused(flipped, &mut fresh), Err(LoadError::Corrupt));
    let mut cut = bytes.clone();
    cut.pop();
    assert!(matches!(
        refused(cut, &mut fresh),
        Err(LoadError::Length { .. })
    ));
    let mut version = bytes.clone();
    version[8] ^= 0xff;
    assert!(matches!(
        refused(version, &mut fresh),
        Err(LoadError::Version { .. })
    ));
    // A save whose units the game did not spawn again.
    assert!(matches!(
        refused(bytes, &mut fresh),
        Err(LoadError::Unmapped(_))
    ));
    assert_eq!(fresh.world().entities().len(), before);
    // The saved entities are listed, each once: the map and the units.
    let listed = save.entities().unwrap();
    assert_eq!(listed.len(), game.alive().len() + 1);
}

/// A game that saves with Bevy's reflection (scenes) carries the save as
/// a resource: it goes through the type registry and comes back whole.
#[test]
fn a_save_goes_through_reflection_as_a_resource() {
    use bevy::reflect::TypeRegistry;
    use bevy::reflect::serde::{TypedReflectDeserializer, TypedReflectSerializer};
    use serde::de::DeserializeSeed;

    let mut game = Game::new(5);
    for frame in 0..30 {
        game.act(5, frame);
        game.app.update();
    }
    let save = FrontierSave::capture(game.app.world_mut()).unwrap();
    let mut registry = TypeRegistry::default();
    registry.register::<FrontierSave>();
    let bytes = postcard::to_allocvec(&TypedReflectSerializer::new(&save, &registry)).unwrap();
    let registration = registry
        .get(std::any::TypeId::of::<FrontierSave>())
        .unwrap();
    let mut reader = postcard::Deserializer::from_bytes(&bytes);
    let value = TypedReflectDeserializer::new(registration, &registry)
        .deserialize(&mut reader)
        .unwrap();
    let back = value.try_take::<FrontierSave>().unwrap();
    assert_eq!(back, save);
    assert!(game.load(&back, 3).is_ok());
}

/// A bevy_ecs_tilemap map: its tiles are the game's, spawned again on
/// load as they stand; the plugin's grid of it comes from the save, and
/// the tiles' sync finds nothing to change. Tiles edited before and after
/// the save, movers through the gap in a wall: the same every frame.
#[cfg(feature = "tilemap")]
#[test]
fn a_tilemap_game_goes_on_as_the_saved_one() {
    use bevy_ecs_tilemap::prelude::{
        TilePos, TileStorage, TilemapAnchor, TilemapGridSize, TilemapId, TilemapSize,
        TilemapTileSize, TilemapType,
    };
    use bevy_frontier::tilemap::TileCost;

    const W: u32 = 40;
    const H: u32 = 24;
    /// Spawns the tilemap with each tile's cost from `cost`.
    fn spawn_tilemap(app: &mut App, cost: impl Fn(u32, u32) -> u8) -> Entity {
        let size = TilemapSize { x: W, y: H };
        let map = app.world_mut().spawn_empty().id();
        let mut storage = TileStorage::empty(size);
        for y in 0..H {
            for x in 0..W {
                let pos = TilePos { x, y };
                let tile = (app.world_mut())
                    .spawn((pos, TilemapId(map), TileCost(cost(x, y))))
                    .id();
                storage.set(&pos, tile);
            }
        }
        app.world_mut().entity_mut(map).insert((
            storage,
            size,
            TilemapGridSize { x: 16.0, y: 16.0 },
            TilemapTileSize { x: 16.0, y: 16.0 },
            TilemapType::Square,
            TilemapAnchor::Center,
            Transform::from_xyz(100.0, -40.0, 0.0),
        ));
        map
    }
    fn cost_at(app: &App, map: Entity, x: u32, y: u32) -> u8 {
        let storage = app.world().get::<TileStorage>(map).unwrap();
        let tile = storage.get(&TilePos { x, y }).unwrap();
        app.world().get::<TileCost>(tile).unwrap().0
    }
    fn set_cost(app: &mut App, map: Entity, x: u32, y: u32, cost: u8) {
        let storage = app.world().get::<TileStorage>(map).unwrap();
        let tile = storage.get(&TilePos { x, y }).unwrap();
        app.world_mut().entity_mut(tile).insert(TileCost(cost));
    }
    /// The frame's tile edit: a patch of mud comes and goes, and the wall
    /// at x = 20 opens and closes at y = 5.
    fn edit(app: &mut App, map: Entity, frame: u64) {
        if frame % 9 == 4 {
            let cost = if frame % 18 == 4 { 5 } else { 1 };
            set_cost(app, map, 8 + (frame as u32 % 6), 12, cost);
        }
        if frame % 40 == 20 {
            let cost = if frame % 80 == 20 { 1 } else { 0 };
            set_cost(app, map, 20, 5, cost);
        }
    }
    let world_of = |app: &App, map: Entity, cell: Cell| -> Vec2 {
        let world = app.world();
        bevy_frontier::maps::MapView::new(
            world.get::<NavGrid>(map).unwrap(),
            world.get::<GridLayout>(map).unwrap(),
            world.get::<Transform>(map),
        )
        .cell_to_world(cell)
    };
    let wall = |x: u32, y: u32| if x == 20 && y != 18 { 0 } else { 1 };
    let mut app = game_app();
    let map = spawn_tilemap(&mut app, wall);
    app.update();
    let units: Vec<Entity> = (0..10)
        .map(|i| {
            let at = world_of(&app, map, Cell::new(2 + i % 3, 2 + 2 * i));
            let unit = spawn_unit(&mut app, at, 160.0);
            let goal = world_of(&app, map, Cell::new(36, 2 + 2 * i));
            app.world_mut()
                .entity_mut(unit)
                .insert(PathRequest::new(goal));
            unit
        })
        .collect();
    const SAVE_AT: u64 = 30;
    for frame in 0..SAVE_AT {
        edit(&mut app, map, frame);
        app.update();
    }
    let save = FrontierSave::capture(app.world_mut()).unwrap();

    let mut loaded = game_app();
    loaded.update();
    let tiles: Vec<Vec<u8>> = (0..H)
        .map(|y| (0..W).map(|x| cost_at(&app, map, x, y)).collect())
        .collect();
    let new_map = spawn_tilemap(&mut loaded, |x, y| tiles[y as usize][x as usize]);
    let mut ids = EntityHashMap::default();
    ids.insert(map, new_map);
    for &unit in &units {
        ids.insert(unit, loaded.world_mut().spawn(Transform::default()).id());
    }
    save.restore(loaded.world_mut(), &ids).unwrap();
    for frame in SAVE_AT..200 {
        edit(&mut app, map, frame);
        edit(&mut loaded, new_map, frame);
        app.update();
        loaded.update();
        let hash = |app: &App| app.world().resource::<FrontierChecksum>().frame();
        assert_eq!(hash(&app), hash(&loaded), "frame {frame}");
    }
    // They went somewhere: most crossed the wall.
    let crossed = units
        .iter()
        .filter(|&&unit| {
            let at = app
                .world()
                .get::<Transform>(unit)
                .unwrap()
                .translation
                .truncate();
            at.x > world_of(&app, map, Cell::new(21, 0)).x
        })
        .count();
    let unit = units[0];
    let world = app.world();
    assert!(
        crossed >= 5,
        "{crossed} of 10 crossed; {:?} {:?} {:?} {:?}",
        world.get::<Transform>(unit).map(|t| t.translation),
        world
            .get::<PathResult>(unit)
            .map(|r| (r.status, r.cells.len())),
        world.get::<bevy_frontier::movement::Steering>(unit),
        world_of(&app, map, Cell::new(21, 0))
    );
}
