//! The RTS example scene: a bevy_ecs_tilemap map, 250 units (infantry one
//! tile across, vehicles two, drawn at their size and turned the way they
//! go; they walk round each other and take turns at passes; and a flotilla
//! of four boats on the river and six hovercraft that cross it anywhere:
//! four movement classes on one map, the river their dividing line), box selection,
//! group and individual orders, walls and terrain edited live, a HUD and a
//! debug overlay.
//!
//! ```text
//! cargo run --release --example rts --features demo [-- --map PATH] [--screenshot PATH --frames N]
//! ```
//!
//! Controls:
//! - left-drag: select units in a box; left-click: select one
//! - right-click: group move of the selection; shift + right-click: each
//!   unit ordered alone; right-click on a unit: the selection chases it into
//!   range (two tiles); ctrl + right-click on a unit: follows it (within
//!   three)
//! - middle-click, or W + left-click: toggle a wall
//! - T + left-click: cycle a tile's terrain (ground, swamp, mud: 1, 4 and
//!   8 to land units, 1 to hovercraft)
//! - `+` / `-`: raise or lower the node budget per frame
//! - F1: debug overlay (paths, group paths, search frontiers); F2: regions
//! - arrows or the window's edge: pan; wheel: zoom
//!
//! `--screenshot PATH --frames N` runs N frames of a scripted scene (two
//! armies crossing the middle bridge from both ends, see `script`), saves a
//! screenshot of the window to PATH and exits (it works under Xvfb with
//! Mesa's software Vulkan driver). It prints the frames by which half, nine
//! in ten and all of the two armies had crossed and arrived
//! (`armies_arrived_9_of_10_frame=F`), the same for the blue units and for
//! the flotilla (the boats sail south down the river, the hovercraft cross
//! it; `boats_hover_arrived_1_of_1_frame=F`), the frame by which each of
//! eight blue foot soldiers, hunting the first hovercraft as it crosses
//! the river (they ford it), had come within range of it
//! (`hunters_in_range_frame=F`),
//! and how many had arrived when the N frames ran out; the frames are a fixed
//! 1/60 s, so these are the same on every machine.

// Drawing and the camera use trigonometry (`clippy.toml` keeps it out of
// the plugin's simulation, which must give the same bits on every client).
#![allow(clippy::disallowed_methods)]

use std::path::PathBuf;
use std::time::Duration;

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, save_to_disk};
use bevy::time::TimeUpdateStrategy;
use bevy_ecs_tilemap::prelude::*;
use bevy_frontier::core::{Cell, MovingAiMap};
use bevy_frontier::prelude::*;
use bevy_frontier::tilemap::TilemapNavPlugin;

mod hud;
mod input;
mod map;
mod units;

use hud::OrderTimes;
use map::{Battlefield, TILE};
use units::{BLUE, Kind, NAVY, RED, Unit, YELLOW};

/// The scene's own systems, after pathfinding and steering each frame.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum SceneSystems {
    /// Selection, orders, edits, camera.
    Input,
    /// Selection colours and the HUD.
    Display,
}

#[derive(Resource, Clone)]
struct Options {
    map: PathBuf,
    screenshot: Option<PathBuf>,
    frames: u32,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        map: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/maps/frontier.map"),
        screenshot: None,
        frames: 240,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--map" => options.map = PathBuf::from(value()?),
            "--screenshot" => options.screenshot = Some(PathBuf::from(value()?)),
            "--frames" => {
                let v = value()?;
                options.frames = v
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or(format!("--frames {v:?} is not a positive number"))?;
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(options)
}

fn main() -> AppExit {
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}\nusage: rts [--map PATH] [--screenshot PATH --frames N]");
            return AppExit::error();
        }
    };
    let map = match MovingAiMap::load(&options.map) {
        Ok(map) => map,
        Err(error) => {
            eprintln!("error: {}: {error}", options.map.display());
            return AppExit::error();
        }
    };
    let mut app = App::new();
    app.add_plugins((
        DefaultPlugins
            .set(WindowPlugin {
                primary_window: Some(Window {
                    title: "bevy_frontier: RTS example".into(),
                    resolution: (1280, 800).into(),
                    ..default()
                }),
                ..default()
            })
            .set(ImagePlugin::default_nearest())
            .set(AssetPlugin {
                // The crate's own assets, however the binary is started.
                file_path: concat!(env!("CARGO_MANIFEST_DIR"), "/assets").into(),
                ..default()
            }),
        TilemapPlugin,
        FrontierPlugins::default()
            .build()
            .set(TilemapNavPlugin::default().with_classes(map::classes())),
        DebugDrawPlugin,
        (
            map::MapPlugin,
            units::UnitsPlugin,
            input::InputPlugin,
            hud::HudPlugin,
        ),
    ))
    .configure_sets(
        Update,
        (SceneSystems::Input, SceneSystems::Display)
            .chain()
            .after(FrontierSystems::Last),
    )
    .insert_resource(ClearColor(Color::srgb(0.08, 0.09, 0.1)))
    .add_systems(Startup, spawn_camera);
    // The whole map in the 1280×800 window to begin with.
    let fit = (map.width() as f32 * TILE / 1280.0).max(map.height() as f32 * TILE / 800.0);
    app.insert_resource(Battlefield(map))
        .insert_resource(CameraFit(fit));
    if options.screenshot.is_some() {
        // The same frames on every machine, however slow it renders.
        app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )))
        .add_systems(Update, script.in_set(SceneSystems::Input));
    }
    app.insert_resource(options);
    app.run()
}

/// The blue foot soldiers the script sends after the first hovercraft.
const HUNTERS: usize = 8;

/// On a unit the script sends hunting.
#[derive(Component)]
struct Hunter;

/// The camera zoom that shows the whole map.
#[derive(Resource)]
struct CameraFit(f32);

fn spawn_camera(mut commands: Commands, fit: Res<CameraFit>) {
    commands.spawn((
        Camera2d,
        Projection::Orthographic(OrthographicProjection {
            scale: fit.0 * 1.02,
            ..OrthographicProjection::default_2d()
        }),
    ));
}

/// What the screenshot script touches: the map, the camera, the overlay and
/// the HUD's order times.
#[derive(SystemParam)]
struct Scene<'w, 's> {
    times: ResMut<'w, OrderTimes>,
    maps: Query<'w, 's, (&'static NavGrid, &'static GridLayout)>,
    camera: Query<'w, 's, (&'static mut Transform, &'static mut Projection), With<Camera2d>>,
    gizmos: ResMut<'w, GizmoConfigStore>,
    fit: Res<'w, CameraFit>,
    /// The hunters, and whether all have had their quarry in range.
    hunters: Query<'w, 's, Option<&'static Arrived>, With<Hunter>>,
    hunted: Local<'s, bool>,
}

/// `--screenshot`: at frame 5 the red army (west of the middle bridge) and
/// the yellow one (east of it) are each given a group move across the river
/// over that bridge, so they meet on it, and each blue unit is ordered
/// alone through the canyon in the east (infantry take the pass one tile
/// wide, vehicles the long way round); the camera looks at the bridge. The
/// screenshot is taken at the last frame, then the app exits.
fn script(
    options: Res<Options>,
    mut frame: Local<u32>,
    mut scene: Scene,
    units: Query<(Entity, &Unit, Option<&Arrived>)>,
    mut done: Local<[usize; 3]>,
    mut commands: Commands,
    mut exit: MessageWriter<AppExit>,
) {
    *frame += 1;
    // Who has arrived since the orders (at frame 5): the armies crossing
    // the bridge, the blue units, and the boats and hovercraft; the frames
    // by which half, nine in ten and all of each had.
    if *frame > 5 {
        let parts: [(usize, &[Color], &str); 3] = [
            (0, &[RED, YELLOW], "armies"),
            (1, &[BLUE], "blue"),
            (2, &[NAVY], "boats_hover"),
        ];
        for (slot, colors, name) in parts {
            // Arrived, not stopped in a jam (`Arrival::Blocked`).
            let (all, arrived, blocked) = units
                .iter()
                .filter(|(_, unit, _)| colors.contains(&unit.color))
                .fold((0, 0, 0), |(all, arrived, blocked), (_, _, end)| {
                    let end = end.map(|a| a.outcome);
                    let stopped = end == Some(Arrival::Blocked);
                    let there = end.is_some() && !stopped;
                    (
                        all + 1,
                        arrived + usize::from(there),
                        blocked + usize::from(stopped),
                    )
                });
            for (step, (part, of)) in [(1, 2), (9, 10), (1, 1)].into_iter().enumerate() {
                if done[slot] == step && arrived * of >= all * part {
                    done[slot] += 1;
                    println!("{name}_arrived_{part}_of_{of}_frame={}", *frame);
                }
            }
            if *frame == options.frames && arrived < all {
                println!(
                    "{name}: {arrived} of {all} arrived by frame {}, {blocked} stopped in a jam",
                    *frame
                );
            }
        }
    }
    // The hunters: all eight in range of the hovercraft.
    if *frame > 5 {
        let hunters: Vec<Option<Arrival>> = scene
            .hunters
            .iter()
            .map(|end| end.map(|a| a.outcome))
            .collect();
        let in_range = hunters
            .iter()
            .filter(|end| **end == Some(Arrival::InRange))
            .count();
        if !hunters.is_empty() && in_range == hunters.len() && !*scene.hunted {
            *scene.hunted = true;
            println!("hunters_in_range_frame={}", *frame);
        }
        if *frame == options.frames && !*scene.hunted {
            println!(
                "hunters: {in_range} of {} in range by frame {}",
                hunters.len(),
                *frame
            );
        }
    }
    let Ok((_, layout)) = scene.maps.single() else {
        return;
    };
    let at = |x: u32, y: u32| layout.cell_center(Cell::new(x, y));
    let last = options.frames;
    if *frame == 5 {
        scene.gizmos.config_mut::<FrontierGizmos>().0.enabled = true;
        if let Ok((mut transform, mut projection)) = scene.camera.single_mut() {
            transform.translation = at(63, 38).extend(transform.translation.z);
            if let Projection::Orthographic(ortho) = &mut *projection {
                ortho.scale = scene.fit.0 * 0.45;
            }
        }
        let team = |color: Color| -> Vec<Entity> {
            units
                .iter()
                .filter(|(_, unit, _)| unit.color == color)
                .map(|(entity, _, _)| entity)
                .collect()
        };
        let frame = scene.times.frame;
        for (army, goal) in [(team(RED), at(75, 33)), (team(YELLOW), at(44, 41))] {
            commands.write_message(GroupMove::new(army.iter().copied(), goal));
            scene
                .times
                .pending
                .extend(army.into_iter().map(|unit| (unit, frame)));
        }
        // Eight blue foot soldiers hunt the first hovercraft into range
        // (two tiles) as it crosses; the other blue units take the canyon.
        let quarry = units
            .iter()
            .find(|(_, u, _)| u.color == NAVY && u.kind == Kind::Hover)
            .map(|(entity, ..)| entity);
        let mut hunters = HUNTERS;
        for (unit, kind, _) in units.iter().filter(|(_, u, _)| u.color == BLUE) {
            let request = match quarry {
                Some(quarry) if kind.kind == Kind::Infantry && hunters > 0 => {
                    hunters -= 1;
                    commands.entity(unit).insert(Hunter);
                    PathRequest::chase(quarry, 2.0 * TILE)
                }
                _ => PathRequest::new(at(92, 36)),
            };
            commands.entity(unit).insert(request);
            scene.times.pending.insert(unit, frame);
        }
        // The boats sail south down the river; the hovercraft cross it.
        for (entity, unit, _) in units.iter().filter(|(_, u, _)| u.color == NAVY) {
            let goal = match unit.kind {
                Kind::Boat => at(67, 22),
                _ => at(75, 50),
            };
            commands.entity(entity).insert(PathRequest::new(goal));
            scene.times.pending.insert(entity, frame);
        }
    }
    if *frame == last
        && let Some(path) = options.screenshot.clone()
    {
        commands
            .spawn(Screenshot::primary_window())
            .observe(save_to_disk(path));
    }
    // The capture lands a few frames later.
    if *frame >= last + 8 {
        exit.write(AppExit::Success);
    }
}
