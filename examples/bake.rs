//! A big map baked ahead, and a game that loads it (feature `serialize`).
//!
//! ```text
//! # at build time: Berlin_0_1024 with land and water and two movement
//! # classes (foot and boat), its coarse graphs built, written to a file
//! cargo run --release --features serialize --example bake -- bake assets/maps/berlin.navgrid
//! # at start: the game loads the file through Bevy's asset system and
//! # sends a walker and a boat across the city
//! cargo run --release --features serialize --example bake -- play assets/maps/berlin.navgrid
//! ```
//!
//! `bake [FILE] [--map PATH]` prints the file's size against the grid's
//! memory; `play [FILE]` prints the frame the map was loaded on and each
//! unit's first (quick) and final path. The map is the one
//! `stress --map Berlin_0_1024 --classes 2` runs on (same seed), so
//! `stress --classes 2 --bake FILE` and `--baked FILE` (built with
//! `--features serialize`) compare a built and a loaded map frame by frame.
//! Without `FRONTIER_MOVINGAI_DIR`, `bake` takes the MovingAI folder beside
//! the repository (`../shared/movingai`).

#![allow(clippy::disallowed_methods)] // wall-clock times, printed only

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bevy::asset::AssetPlugin;
use bevy::prelude::*;
use bevy_frontier::bake::{BakedMap, BakedNavGrid, NavGridAssetPlugin};
use bevy_frontier::core::{Cell, ClassId, UnitKind};
use bevy_frontier::pathfinding::MovementClass;
use bevy_frontier::prelude::*;

mod support;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let file = |at: usize| {
        PathBuf::from(
            args.get(at)
                .filter(|a| !a.starts_with("--"))
                .map_or("assets/maps/berlin.navgrid", String::as_str),
        )
    };
    let map = args
        .iter()
        .position(|a| a == "--map")
        .and_then(|at| args.get(at + 1))
        .map(PathBuf::from);
    let done = match args.first().map(String::as_str) {
        Some("bake") => bake(map, &file(1)),
        Some("play") => play(&file(1)),
        _ => Err("usage: bake bake [FILE] [--map PATH] | bake play [FILE]".to_string()),
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Builds the map and its graphs for foot and boat, and writes them.
fn bake(map: Option<PathBuf>, out: &Path) -> Result<(), String> {
    let began = std::time::Instant::now();
    let (grid, name) = support::load_grid(
        map,
        "maps/cities/Berlin_0_1024.map",
        "generated 512x512, 10% walls",
        || support::scattered_walls(512, 512, 10, 7),
        1,
    )?;
    let grid = support::land_and_water(&grid, support::movement_classes(2), 7);
    let kinds = [0, 1].map(|class| UnitKind::new(ClassId::from_index(class), 1));
    let baked = BakedMap::bake(grid, &kinds);
    let bytes = baked.to_bytes().map_err(|e| e.to_string())?;
    if let Some(folder) = out.parent() {
        std::fs::create_dir_all(folder).map_err(|e| e.to_string())?;
    }
    std::fs::write(out, &bytes).map_err(|e| format!("{}: {e}", out.display()))?;
    let memory = baked.grid.memory_bytes();
    println!(
        "baked {name}: {} graphs ({} nodes) in {:.3} s; file_bytes={} grid_memory_bytes={memory} file_over_memory={:.3}",
        baked.graphs.len(),
        baked.graphs.iter().map(|g| g.node_count()).sum::<usize>(),
        began.elapsed().as_secs_f64(),
        bytes.len(),
        bytes.len() as f64 / memory as f64,
    );
    println!("wrote {}", out.display());
    Ok(())
}

/// A game: loads the baked map as an asset and sends a walker and a boat
/// across it.
fn play(file: &Path) -> Result<(), String> {
    let file = std::fs::canonicalize(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let (Some(folder), Some(name)) = (file.parent(), file.file_name()) else {
        return Err(format!("{} is not a file", file.display()));
    };
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            file_path: folder.to_string_lossy().into_owned(),
            ..default()
        },
        FrontierPlugins::default(),
        NavGridAssetPlugin,
    ));
    let handle = app
        .world()
        .resource::<AssetServer>()
        .load(name.to_string_lossy().into_owned());
    let map = app
        .world_mut()
        .spawn((BakedNavGrid(handle), Transform::default()))
        .id();
    let mut frame = 0;
    while app.world().get::<NavGrid>(map).is_none() {
        if app.world().get::<BakedNavGrid>(map).is_none() || frame > 10_000 {
            return Err(format!("{} did not load (see the log)", file.display()));
        }
        app.update();
        frame += 1;
    }
    println!("map loaded on frame {frame}");
    let grid = app.world().get::<NavGrid>(map).unwrap().clone();
    // A walker and a boat, each between the two far ends of its class's
    // largest region.
    let units: Vec<(Entity, &str)> = [("walker", 0u8), ("boat", 1u8)]
        .into_iter()
        .filter_map(|(name, class)| {
            let view = grid.view(UnitKind::new(ClassId::from_index(class), 1))?;
            let cells = support::main_region_of(view);
            let (start, goal): (Cell, Cell) = (*cells.first()?, *cells.last()?);
            let unit = app.world_mut().spawn((
                Transform::from_xyz(start.x as f32, start.y as f32, 0.0),
                MovementClass(ClassId::from_index(class)),
                PathRequest::new(goal).on_map(map),
            ));
            Some((unit.id(), name))
        })
        .collect();
    let mut first = vec![None; units.len()];
    for frame in 1..=5_000 {
        app.update();
        let mut done = true;
        for (i, &(unit, name)) in units.iter().enumerate() {
            let Some(result) = app.world().get::<PathResult>(unit) else {
                done = false;
                continue;
            };
            if first[i].is_none() {
                first[i] = Some(frame);
                println!(
                    "{name}: first path on frame {frame} ({:?}, cost {:.0})",
                    result.status, result.cost
                );
            }
            if result.status == PathStatus::Provisional {
                done = false;
            } else if first[i] != Some(0) {
                println!(
                    "{name}: final path on frame {frame} ({:?}, cost {:.0})",
                    result.status, result.cost
                );
                first[i] = Some(0);
            }
        }
        if done {
            return Ok(());
        }
    }
    Err("not every unit got its final path in 5,000 frames".to_string())
}
