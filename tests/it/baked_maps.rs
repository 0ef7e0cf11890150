//! Maps baked ahead (feature `serialize`): a grid with terrain, two
//! movement classes and their coarse graphs survives bytes and the asset
//! system unchanged, a damaged file is refused whatever byte is damaged,
//! and a game that loads one gets quick routes from its first frames with
//! no graph built.

use bevy::asset::AssetPlugin;
use bevy::prelude::*;
use bevy_frontier::bake::{BakeError, BakedMap, BakedNavGrid, NavGridAssetPlugin};
use bevy_frontier::core::{Cell, ClassId, CoarseGraph, MovementClasses, UnitKind};
use bevy_frontier::pathfinding::{CoarseGraphs, MovementClass};
use bevy_frontier::prelude::*;

use crate::common::{Rng, result};

/// Walkers (slow in woods, never in water) and boats (water only), on
/// `width × height` cells of open ground, woods and a lake, walls here and
/// there.
fn land_and_lake(width: u32, height: u32) -> NavGrid {
    let (open, woods, water) = (Terrain(1), Terrain(2), Terrain(3));
    let classes = MovementClasses::new()
        .class("foot", [(open, 1), (woods, 3)])
        .class("boat", [(water, 1)]);
    let mut grid = NavGrid::new(width, height)
        .unwrap()
        .with_classes(classes)
        .unwrap();
    let mut rng = Rng::new(53);
    for y in 0..height {
        for x in 0..width {
            let cell = Cell::new(x, y);
            let terrain = if x > width / 2 && y > height / 3 {
                water
            } else if rng.below(5) == 0 {
                woods
            } else if rng.below(12) == 0 {
                Terrain::WALL
            } else {
                open
            };
            grid.set_terrain(cell, terrain).unwrap();
        }
    }
    grid
}

fn kinds() -> [UnitKind; 3] {
    [
        UnitKind::new(ClassId::from_index(0), 1),
        UnitKind::new(ClassId::from_index(1), 1),
        UnitKind::new(ClassId::from_index(0), 2),
    ]
}

#[test]
fn a_baked_map_reads_back_as_the_same_grid_and_graphs() {
    let grid = land_and_lake(80, 64);
    let baked = BakedMap::bake(grid.clone(), &kinds());
    assert_eq!(baked.graphs.len(), 3);
    let bytes = baked.to_bytes().unwrap();
    let loaded = BakedMap::from_bytes(&bytes).unwrap();
    assert_eq!(
        loaded.to_bytes().unwrap(),
        bytes,
        "written again, the same bytes"
    );
    assert_eq!(loaded.grid.version(), grid.version());
    assert_eq!(loaded.grid.classes(), grid.classes());
    for kind in kinds() {
        let (ours, theirs) = (grid.view(kind).unwrap(), loaded.grid.view(kind).unwrap());
        assert_eq!(ours.costs(), theirs.costs(), "{kind:?}: the same costs");
        let graph = loaded.graph(kind).unwrap();
        assert!(graph.is_ready(&theirs), "{kind:?}: its graph is ready");
        assert_eq!(graph.node_count(), baked.graph(kind).unwrap().node_count());
    }
    // A grid whose graph is still to build cannot be baked half done.
    let mut unbuilt = baked.clone();
    unbuilt
        .graphs
        .push(CoarseGraph::new(&grid.view(kinds()[1]).unwrap()));
    assert!(matches!(
        unbuilt.to_bytes(),
        Err(BakeError::GraphNotBuilt(_))
    ));
}

#[test]
fn every_byte_flipped_or_cut_gives_an_error_or_the_same_map() {
    let baked = BakedMap::bake(land_and_lake(40, 36), &kinds()[..2]);
    let bytes = baked.to_bytes().unwrap();
    for cut in 0..bytes.len() {
        assert!(
            BakedMap::from_bytes(&bytes[..cut]).is_err(),
            "cut to {cut} bytes of {}",
            bytes.len()
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(BakedMap::from_bytes(&longer).is_err(), "a byte too many");
    let mut damaged = bytes.clone();
    for at in 0..bytes.len() {
        for flip in [0x01, 0x80, 0xff] {
            damaged[at] ^= flip;
            match BakedMap::from_bytes(&damaged) {
                Err(_) => {}
                Ok(map) => assert_eq!(
                    map.to_bytes().unwrap(),
                    bytes,
                    "byte {at} ^ {flip:#x} read as another map"
                ),
            }
            damaged[at] ^= flip;
        }
    }
    // The hash catches damage; what it cannot (bytes rewritten with their
    // hash) is still refused when it does not read as a grid and graphs.
    assert!(matches!(
        BakedMap::from_bytes(b"not a map"),
        Err(BakeError::NotABakedMap)
    ));
}

/// A headless app with the plugins and Bevy's asset system reading `dir`.
fn asset_app(dir: &std::path::Path) -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            file_path: dir.to_string_lossy().into_owned(),
            ..default()
        },
        FrontierPlugins::default(),
        NavGridAssetPlugin,
    ));
    app
}

/// A map entity given the baked map in `file` (of the asset folder).
fn spawn_baked(app: &mut App, file: &str) -> Entity {
    let server = app.world().resource::<AssetServer>().clone();
    app.world_mut()
        .spawn((
            BakedNavGrid(server.load(file.to_owned())),
            Transform::default(),
        ))
        .id()
}

#[test]
fn a_game_loads_a_baked_map_as_an_asset_and_routes_at_once() {
    let dir = std::env::temp_dir().join(format!("frontier-baked-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let grid = land_and_lake(96, 80);
    let baked = BakedMap::bake(grid.clone(), &kinds()[..2]);
    std::fs::write(dir.join("lake.navgrid"), baked.to_bytes().unwrap()).unwrap();
    std::fs::write(dir.join("cut.navgrid"), &baked.to_bytes().unwrap()[..100]).unwrap();

    let mut app = asset_app(&dir);
    let map = spawn_baked(&mut app, "lake.navgrid");
    let broken = spawn_baked(&mut app, "cut.navgrid");
    let mut frames = 0;
    while app.world().get::<NavGrid>(map).is_none() {
        app.update();
        frames += 1;
        assert!(frames < 500, "the baked map never loaded");
    }
    assert_eq!(
        app.world().get::<NavGrid>(map).unwrap().costs(),
        grid.costs()
    );
    assert!(app.world().get::<BakedNavGrid>(map).is_none());
    for _ in 0..50 {
        if app.world().get::<BakedNavGrid>(broken).is_none() {
            break;
        }
        app.update();
    }
    assert!(
        app.world().get::<BakedNavGrid>(broken).is_none()
            && app.world().get::<NavGrid>(broken).is_none(),
        "a cut file gives no map (and an error in the log)"
    );

    // A walker and a boat across the map: quick routes on the baked
    // graphs, with no graph to build first.
    let orders = [
        (Cell::new(2, 2), Cell::new(40, 70), 0u8),
        (Cell::new(60, 40), Cell::new(92, 76), 1u8),
    ];
    let units: Vec<Entity> = orders
        .iter()
        .map(|&(start, goal, class)| {
            let start = if grid
                .view(kinds()[class as usize])
                .unwrap()
                .is_walkable(start)
            {
                start
            } else {
                Cell::new(start.x + 1, start.y)
            };
            app.world_mut()
                .spawn((
                    Transform::from_xyz(start.x as f32, start.y as f32, 0.0),
                    MovementClass(ClassId::from_index(class)),
                    PathRequest::new(goal).on_map(map),
                ))
                .id()
        })
        .collect();
    let mut first = vec![None; units.len()];
    for frame in 1..=400 {
        app.update();
        let graphs = app.world().get::<CoarseGraphs>(map).unwrap();
        assert!(
            !graphs.is_building(),
            "frame {frame}: a graph is being built"
        );
        for (i, &unit) in units.iter().enumerate() {
            if first[i].is_none() && result(&app, unit).is_some() {
                first[i] = Some(frame);
            }
        }
        if units
            .iter()
            .all(|&u| result(&app, u).is_some_and(|r| r.status == PathStatus::Complete))
        {
            break;
        }
    }
    for (i, &unit) in units.iter().enumerate() {
        let answer = result(&app, unit).unwrap();
        assert_eq!(answer.status, PathStatus::Complete, "unit {i}");
        assert!(
            first[i].unwrap() <= 3,
            "unit {i}: first path at frame {:?}",
            first[i]
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// How a game hands a baked map's graphs in.
#[derive(Clone, Copy, Debug)]
enum HandedIn {
    /// `BakedMap::coarse_graphs()`, spawned with the grid.
    CoarseGraphs,
    /// Each graph through `CoarseGraphs::insert` on the map entity.
    Inserted,
    /// A `.navgrid` file through `NavGridAssetPlugin`.
    Asset,
}

/// A baked map, loaded, then edited like any other and ordered on: its
/// graphs (loaded built, with no record dirty) take the edit and keep
/// giving routes. Every way of handing them in once panicked at the first
/// edit (the loaded graph had no dirty flag per cluster to set).
#[test]
fn a_baked_map_is_edited_and_played_like_any_other() {
    for way in [HandedIn::CoarseGraphs, HandedIn::Inserted, HandedIn::Asset] {
        let mut grid = NavGrid::new(160, 120).unwrap();
        // A swamp across the middle: quick routes on.
        grid.fill_rect(Cell::new(70, 0), Cell::new(90, 119), 3)
            .unwrap();
        let baked = BakedMap::bake(grid, &[UnitKind::sized(1)]);
        let bytes = baked.to_bytes().unwrap();
        let baked = BakedMap::from_bytes(&bytes).unwrap();
        let dir = std::env::temp_dir().join(format!(
            "frontier-baked-edit-{}-{way:?}",
            std::process::id()
        ));
        let (mut app, map) = match way {
            HandedIn::Asset => {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join("swamp.navgrid"), &bytes).unwrap();
                let mut app = asset_app(&dir);
                let map = spawn_baked(&mut app, "swamp.navgrid");
                for _ in 0..500 {
                    if app.world().get::<NavGrid>(map).is_some() {
                        break;
                    }
                    app.update();
                }
                (app, map)
            }
            handed => {
                let graphs = match handed {
                    HandedIn::CoarseGraphs => baked.coarse_graphs(),
                    _ => {
                        let mut graphs = CoarseGraphs::supplied_by_game();
                        for graph in baked.graphs {
                            graphs.insert(graph);
                        }
                        graphs
                    }
                };
                let mut app = crate::common::app();
                let map = app
                    .world_mut()
                    .spawn((baked.grid, graphs, Transform::default()));
                let map = map.id();
                (app, map)
            }
        };
        app.update();
        let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
        grid.set_cost(Cell::new(40, 40), NavGrid::BLOCKED).unwrap();
        app.update();
        let unit = app
            .world_mut()
            .spawn((
                Transform::from_xyz(5.0, 5.0, 0.0),
                PathRequest::new(Cell::new(150, 112)),
            ))
            .id();
        let mut provisional = false;
        for _ in 0..200 {
            app.update();
            provisional |= result(&app, unit).is_some_and(|r| r.status == PathStatus::Provisional);
            // Edits go on while it plans: cells on the swamp's edge.
            let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
            let cost = if grid.cost(Cell::new(70, 60)) == Some(3) {
                1
            } else {
                3
            };
            grid.set_cost(Cell::new(70, 60), cost).unwrap();
        }
        let answer = result(&app, unit).unwrap();
        assert_eq!(answer.status, PathStatus::Complete, "{way:?}");
        assert!(
            provisional,
            "{way:?}: a quick route first, on the baked graph"
        );
        let graphs = app.world().get::<CoarseGraphs>(map).unwrap();
        assert!(graphs.is_ready(UnitKind::sized(1)), "{way:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
