//! bevy_ecs_tilemap maps get a `NavGrid` that follows their tiles, and
//! world positions map to the same tiles bevy_ecs_tilemap says they are in.

use bevy::prelude::*;
use bevy_ecs_tilemap::prelude::*;
use bevy_frontier::core::Cell;
use bevy_frontier::maps::{CellLookup, MapView};
use bevy_frontier::prelude::*;

use crate::common::{Rng, app, result};

/// A 20×12 square tilemap, 16-px tiles, centred, moved off the origin;
/// tiles at x = 10 are walls except at y = 11, tile (3, 3) is mud (cost 5)
/// and there is no tile at (0, 11).
fn spawn_tilemap(app: &mut App, map_type: TilemapType) -> Entity {
    let size = TilemapSize { x: 20, y: 12 };
    let map = app.world_mut().spawn_empty().id();
    let mut storage = TileStorage::empty(size);
    for y in 0..size.y {
        for x in 0..size.x {
            if (x, y) == (0, 11) {
                continue;
            }
            let pos = TilePos { x, y };
            let mut tile = app.world_mut().spawn((pos, TilemapId(map)));
            if x == 10 && y != 11 {
                tile.insert(TileCost::WALL);
            } else if (x, y) == (3, 3) {
                tile.insert(TileCost(5));
            }
            storage.set(&pos, tile.id());
        }
    }
    app.world_mut().entity_mut(map).insert((
        storage,
        size,
        TilemapGridSize { x: 16.0, y: 16.0 },
        TilemapTileSize { x: 16.0, y: 16.0 },
        map_type,
        TilemapAnchor::Center,
        Transform::from_xyz(100.0, -40.0, 0.0),
    ));
    map
}

#[test]
fn tilemap_gets_a_grid_from_its_tiles() {
    let mut app = app();
    let map = spawn_tilemap(&mut app, TilemapType::Square);
    app.update();
    let grid = app.world().get::<NavGrid>(map).expect("a NavGrid");
    assert_eq!((grid.width(), grid.height()), (20, 12));
    assert_eq!(grid.cost(Cell::new(10, 5)), Some(NavGrid::BLOCKED));
    assert_eq!(grid.cost(Cell::new(10, 11)), Some(1));
    assert_eq!(grid.cost(Cell::new(3, 3)), Some(5));
    assert_eq!(
        grid.cost(Cell::new(0, 11)),
        Some(NavGrid::BLOCKED),
        "no tile: a wall"
    );
    assert_eq!(
        grid.cost(Cell::new(4, 4)),
        Some(1),
        "a tile without TileCost: ground"
    );
}

#[test]
fn world_positions_land_on_the_tiles_bevy_ecs_tilemap_says() {
    let mut app = app();
    let map = spawn_tilemap(&mut app, TilemapType::Square);
    app.update();
    let world = app.world();
    let view = MapView::new(
        world.get::<NavGrid>(map).unwrap(),
        world.get::<GridLayout>(map).unwrap(),
        world.get::<Transform>(map),
    );
    let map_transform = *world.get::<Transform>(map).unwrap();
    let mut rng = Rng::new(3);
    let mut inside = 0;
    for _ in 0..2_000 {
        let point = Vec2::new(
            rng.below(500) as f32 - 150.0 + 0.37,
            rng.below(300) as f32 - 190.0 + 0.61,
        );
        let local = point - map_transform.translation.truncate();
        let theirs = TilePos::from_world_pos(
            &local,
            &TilemapSize { x: 20, y: 12 },
            &TilemapGridSize { x: 16.0, y: 16.0 },
            &TilemapTileSize { x: 16.0, y: 16.0 },
            &TilemapType::Square,
            &TilemapAnchor::Center,
        );
        match (view.world_to_cell(point), theirs) {
            (CellLookup::Inside(cell), Some(tile)) => {
                assert_eq!((cell.x, cell.y), (tile.x, tile.y), "at {point}");
                inside += 1;
            }
            (CellLookup::Outside(..), None) => {}
            (ours, theirs) => panic!("at {point}: {ours:?} vs {theirs:?}"),
        }
    }
    assert!(inside > 200);
    // Cell centres are the tiles' centres.
    let tile = TilePos { x: 7, y: 2 };
    let centre = tile.center_in_world(
        &TilemapSize { x: 20, y: 12 },
        &TilemapGridSize { x: 16.0, y: 16.0 },
        &TilemapTileSize { x: 16.0, y: 16.0 },
        &TilemapType::Square,
        &TilemapAnchor::Center,
    ) + map_transform.translation.truncate();
    assert!(view.cell_to_world(Cell::new(7, 2)).distance(centre) < 1e-4);
}

#[test]
fn tile_changes_reach_the_grid_and_the_paths() {
    let mut app = app();
    let map = spawn_tilemap(&mut app, TilemapType::Square);
    app.update();
    let start_world = |app: &App, cell: Cell| {
        let world = app.world();
        MapView::new(
            world.get::<NavGrid>(map).unwrap(),
            world.get::<GridLayout>(map).unwrap(),
            world.get::<Transform>(map),
        )
        .cell_to_world(cell)
    };
    // Close the only gap in the wall: the right side becomes unreachable.
    let gap = app
        .world()
        .get::<TileStorage>(map)
        .unwrap()
        .get(&TilePos { x: 10, y: 11 })
        .unwrap();
    app.world_mut().entity_mut(gap).insert(TileCost::WALL);
    let position = start_world(&app, Cell::new(1, 1)).extend(0.0);
    let unit = app
        .world_mut()
        .spawn((
            Transform::from_translation(position),
            PathRequest::new(Cell::new(18, 1)).fail_if_unreachable(),
        ))
        .id();
    app.update();
    assert_eq!(
        app.world()
            .get::<NavGrid>(map)
            .unwrap()
            .cost(Cell::new(10, 11)),
        Some(NavGrid::BLOCKED)
    );
    assert_eq!(result(&app, unit).unwrap().status, PathStatus::Unreachable);

    // Remove a wall tile's cost: it is ground again, and the path goes through.
    let door = app
        .world()
        .get::<TileStorage>(map)
        .unwrap()
        .get(&TilePos { x: 10, y: 1 })
        .unwrap();
    app.world_mut().entity_mut(door).remove::<TileCost>();
    app.world_mut()
        .entity_mut(unit)
        .insert(PathRequest::new(Cell::new(18, 1)));
    for _ in 0..5 {
        app.update();
    }
    let answer = result(&app, unit).unwrap();
    assert_eq!(answer.status, PathStatus::Complete);
    assert!(answer.cells.contains(&Cell::new(10, 1)));
    assert!(
        answer.waypoints[0].distance(position.truncate()) < 1e-3,
        "waypoints are in world space"
    );

    // Take a tile out of the storage (and the world): a hole is a wall.
    let tile = app
        .world_mut()
        .get_mut::<TileStorage>(map)
        .unwrap()
        .remove(&TilePos { x: 5, y: 5 })
        .unwrap();
    app.world_mut().despawn(tile);
    app.update();
    assert_eq!(
        app.world()
            .get::<NavGrid>(map)
            .unwrap()
            .cost(Cell::new(5, 5)),
        Some(NavGrid::BLOCKED)
    );
}

#[test]
fn non_square_maps_are_refused_with_a_warning() {
    let mut app = app();
    let map = spawn_tilemap(&mut app, TilemapType::Isometric(IsoCoordSystem::Diamond));
    app.update();
    app.update();
    assert!(app.world().get::<NavGrid>(map).is_none());
    assert!(
        app.world()
            .get::<bevy_frontier::tilemap::UnsupportedTilemap>(map)
            .is_some()
    );
}

#[test]
fn a_tile_despawned_but_still_in_the_storage_is_a_wall() {
    let mut app = app();
    let map = spawn_tilemap(&mut app, TilemapType::Square);
    app.update();
    let tile = app
        .world()
        .get::<TileStorage>(map)
        .unwrap()
        .get(&TilePos { x: 4, y: 4 })
        .unwrap();
    app.world_mut().despawn(tile);
    app.update();
    let grid = app.world().get::<NavGrid>(map).unwrap();
    assert_eq!(grid.cost(Cell::new(4, 4)), Some(NavGrid::BLOCKED));
    assert_eq!(grid.cost(Cell::new(4, 5)), Some(1));
}

#[test]
fn a_tilemap_that_grows_gets_a_grid_of_its_new_size() {
    let mut app = app();
    let map = spawn_tilemap(&mut app, TilemapType::Square);
    app.update();
    // Grow the map to 30×12: ten new columns of ground on the right.
    let old = app.world().get::<TileStorage>(map).unwrap().clone();
    let size = TilemapSize { x: 30, y: 12 };
    let mut storage = TileStorage::empty(size);
    for y in 0..size.y {
        for x in 0..size.x {
            let pos = TilePos { x, y };
            match old.checked_get(&pos) {
                Some(tile) => storage.set(&pos, tile),
                None if x >= 20 => {
                    let tile = app.world_mut().spawn((pos, TilemapId(map))).id();
                    storage.set(&pos, tile);
                }
                None => {}
            }
        }
    }
    app.world_mut().entity_mut(map).insert((storage, size));
    app.update();
    let grid = app.world().get::<NavGrid>(map).unwrap();
    assert_eq!((grid.width(), grid.height()), (30, 12));
    assert_eq!(grid.cost(Cell::new(10, 5)), Some(NavGrid::BLOCKED));
    assert_eq!(grid.cost(Cell::new(0, 11)), Some(NavGrid::BLOCKED));
    assert_eq!(grid.cost(Cell::new(28, 5)), Some(1));
    // An order into the new area is served.
    let unit = app
        .world_mut()
        .spawn((
            Transform::default(),
            PathRequest::new(Cell::new(28, 5)).from(Cell::new(25, 2)),
        ))
        .id();
    app.update();
    let answer = result(&app, unit).unwrap();
    assert_eq!(answer.status, PathStatus::Complete);
    assert_eq!(answer.cells.last(), Some(&Cell::new(28, 5)));

    // Shrunk back to 20×12, the new area is gone again.
    let mut storage = TileStorage::empty(TilemapSize { x: 20, y: 12 });
    for y in 0..12 {
        for x in 0..20 {
            let pos = TilePos { x, y };
            if let Some(tile) = old.checked_get(&pos) {
                storage.set(&pos, tile);
            }
        }
    }
    app.world_mut()
        .entity_mut(map)
        .insert((storage, TilemapSize { x: 20, y: 12 }));
    app.update();
    let grid = app.world().get::<NavGrid>(map).unwrap();
    assert_eq!((grid.width(), grid.height()), (20, 12));
}

/// With movement classes, a tile's `TileTerrain` is its terrain type:
/// boats are routed on the water tiles, infantry told the river cannot be
/// crossed, and a tile turned to water opens the way for boats the same
/// frame.
#[test]
fn tiles_terrain_types_route_each_class_on_its_own_ground() {
    use bevy_frontier::tilemap::TilemapNavPlugin;
    const LAND: Terrain = Terrain(1);
    const WATER: Terrain = Terrain(2);
    let mut classes = MovementClasses::new();
    classes.add("foot", [(LAND, 1)]);
    let boat_class = classes.add("boat", [(WATER, 1)]);
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        FrontierPlugins::default()
            .build()
            .set(TilemapNavPlugin::default().with_classes(classes)),
    ));
    // A river down column 5 with a dam (land) across it at row 4.
    let size = TilemapSize { x: 10, y: 8 };
    let map = app.world_mut().spawn_empty().id();
    let mut storage = TileStorage::empty(size);
    let mut dam = None;
    for y in 0..size.y {
        for x in 0..size.x {
            let pos = TilePos { x, y };
            let terrain = if x == 5 && y != 4 { WATER } else { LAND };
            let tile = app
                .world_mut()
                .spawn((pos, TilemapId(map), TileTerrain(terrain)))
                .id();
            if (x, y) == (5, 4) {
                dam = Some(tile);
            }
            storage.set(&pos, tile);
        }
    }
    app.world_mut().entity_mut(map).insert((
        storage,
        size,
        TilemapGridSize { x: 1.0, y: 1.0 },
        TilemapTileSize { x: 1.0, y: 1.0 },
        TilemapType::Square,
        TilemapAnchor::None,
    ));
    app.update();
    // Tile (x, y) is centred at (x, y).
    let place = |x: f32, y: f32| Transform::from_xyz(x, y, 0.0);
    let boat = app
        .world_mut()
        .spawn((
            place(5.0, 0.0),
            MovementClass(boat_class),
            PathRequest::new(Vec2::new(5.0, 7.0)),
        ))
        .id();
    let foot = app
        .world_mut()
        .spawn((
            place(1.0, 1.0),
            PathRequest::new(Vec2::new(8.0, 1.0)).fail_if_unreachable(),
        ))
        .id();
    app.update();
    // The dam cuts the river: the boat gets no further than it.
    let answer = result(&app, boat).expect("the boat's answer");
    assert_eq!(answer.status, PathStatus::NearestReachable);
    assert_eq!(answer.class, boat_class);
    assert!(answer.cells.iter().all(|c| c.x == 5), "{:?}", answer.cells);
    // Infantry cross the dam.
    assert_eq!(result(&app, foot).unwrap().status, PathStatus::Complete);
    assert!(result(&app, foot).unwrap().cells.contains(&Cell::new(5, 4)));
    // The dam breaks: the boat sails through, infantry cannot cross.
    app.world_mut()
        .entity_mut(dam.unwrap())
        .insert(TileTerrain(WATER));
    for unit in [boat, foot] {
        app.world_mut()
            .get_mut::<PathRequest>(unit)
            .unwrap()
            .set_changed();
    }
    app.update();
    let answer = result(&app, boat).unwrap();
    assert_eq!(answer.status, PathStatus::Complete);
    assert_eq!(answer.cells.last(), Some(&Cell::new(5, 7)));
    assert_eq!(result(&app, foot).unwrap().status, PathStatus::Unreachable);
    // A class the map does not have is answered as such.
    let stray = app
        .world_mut()
        .spawn((
            place(1.0, 1.0),
            MovementClass(ClassId::from_index(9)),
            PathRequest::new(Vec2::new(2.0, 1.0)),
        ))
        .id();
    app.update();
    assert_eq!(
        result(&app, stray).unwrap().status,
        PathStatus::Invalid(InvalidReason::UnknownClass)
    );
}
