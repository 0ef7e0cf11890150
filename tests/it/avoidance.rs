//! Local avoidance: movers walk round each other instead of through, can
//! be told not to, give way where they rest and come back, never leave the
//! grid's walkable cells for it, and do it the same way every run.

use std::collections::HashSet;

use bevy::prelude::*;
use bevy_frontier::core::Cell;
use bevy_frontier::movement::{Arrived, Avoidance, CrowdSettings};
use bevy_frontier::prelude::*;

use crate::common::{cell_at, position, settle, spawn_map, spawn_mover, timed_app};

/// Two lines of `count` units facing each other across open ground, each
/// ordered to the other side.
fn head_on(app: &mut App, count: u32) -> Vec<Entity> {
    let mut units = Vec::new();
    for i in 0..count {
        let (west, east) = (Cell::new(5, 10 + 2 * i), Cell::new(35, 10 + 2 * i));
        let a = spawn_mover(app, west, 4.0);
        let b = spawn_mover(app, east, 4.0);
        app.world_mut()
            .entity_mut(a)
            .insert(PathRequest::new(Vec2::new(35.0, (10 + 2 * i) as f32)));
        app.world_mut()
            .entity_mut(b)
            .insert(PathRequest::new(Vec2::new(5.0, (10 + 2 * i) as f32)));
        units.extend([a, b]);
    }
    units
}

/// The smallest distance between two of `units` over `frames` frames, and
/// whether they all arrived.
fn closest_approach(app: &mut App, units: &[Entity], frames: u32) -> (f32, bool) {
    let mut closest = f32::MAX;
    for _ in 0..frames {
        app.update();
        let at: Vec<Vec2> = units.iter().map(|&u| position(app, u)).collect();
        for i in 0..at.len() {
            for j in i + 1..at.len() {
                closest = closest.min(at[i].distance(at[j]));
            }
        }
        if units
            .iter()
            .all(|&u| app.world().get::<Arrived>(u).is_some())
        {
            return (closest, true);
        }
    }
    (closest, false)
}

#[test]
fn units_meeting_head_on_pass_without_overlapping() {
    let mut app = timed_app(4096);
    spawn_map(&mut app, NavGrid::new(40, 40).unwrap());
    let units = head_on(&mut app, 8);
    let (closest, arrived) = closest_approach(&mut app, &units, 2_000);
    assert!(arrived, "every unit arrives");
    // Two bodies of radius 0.45: 0.9 apart touch; a tenth of a radius of
    // give is allowed.
    assert!(closest >= 0.9 - 0.045, "two units came {closest} apart");
}

/// Units spawned before the plugins were added avoid each other as any
/// others do.
#[test]
fn units_spawned_before_the_plugins_still_avoid_each_other() {
    let mut app = App::new();
    let mut units = Vec::new();
    for i in 0..4 {
        let (west, east) = (Cell::new(5, 10 + 2 * i), Cell::new(35, 10 + 2 * i));
        for (from, to) in [(west, east), (east, west)] {
            let at = Vec3::new(from.x as f32, from.y as f32, 0.0);
            let goal = Vec2::new(to.x as f32, to.y as f32);
            let unit = app
                .world_mut()
                .spawn((Mover { speed: 4.0 }, Transform::from_translation(at)))
                .id();
            units.push((unit, goal));
        }
    }
    app.add_plugins((MinimalPlugins, FrontierPlugins::default()))
        .insert_resource(bevy::time::TimeUpdateStrategy::ManualDuration(
            std::time::Duration::from_millis(50),
        ));
    spawn_map(&mut app, NavGrid::new(40, 40).unwrap());
    app.update();
    for &(unit, goal) in &units {
        app.world_mut()
            .entity_mut(unit)
            .insert(PathRequest::new(goal));
    }
    let units: Vec<Entity> = units.iter().map(|&(unit, _)| unit).collect();
    let (closest, arrived) = closest_approach(&mut app, &units, 2_000);
    assert!(arrived, "every unit arrives");
    assert!(closest >= 0.9 - 0.045, "two units came {closest} apart");
}

#[test]
fn avoidance_off_globally_or_per_unit_walks_through() {
    for global in [true, false] {
        let mut app = timed_app(4096);
        if global {
            app.insert_resource(CrowdSettings {
                enabled: false,
                ..default()
            });
        }
        spawn_map(&mut app, NavGrid::new(40, 40).unwrap());
        let units = head_on(&mut app, 1);
        if !global {
            for &unit in &units {
                app.world_mut().entity_mut(unit).insert(Avoidance::OFF);
            }
        }
        let (closest, arrived) = closest_approach(&mut app, &units, 2_000);
        assert!(arrived);
        assert!(closest < 0.1, "they walked through each other: {closest}");
    }
}

#[test]
fn a_unit_that_does_not_avoid_is_still_avoided() {
    let mut app = timed_app(4096);
    spawn_map(&mut app, NavGrid::new(40, 40).unwrap());
    let units = head_on(&mut app, 1);
    app.world_mut().entity_mut(units[0]).insert(Avoidance::OFF);
    let (closest, arrived) = closest_approach(&mut app, &units, 2_000);
    assert!(arrived);
    assert!(closest >= 0.9 - 0.045, "{closest}");
}

#[test]
fn units_ordered_one_by_one_to_one_point_rest_on_cells_of_their_own() {
    let mut app = timed_app(4096);
    spawn_map(&mut app, NavGrid::new(40, 40).unwrap());
    let goal = Vec2::new(20.0, 20.0);
    let units: Vec<Entity> = (0..12)
        .map(|i| {
            let unit = spawn_mover(&mut app, Cell::new(2 + 3 * (i % 4), 2 + 3 * (i / 4)), 5.0);
            app.world_mut()
                .entity_mut(unit)
                .insert(PathRequest::new(goal));
            unit
        })
        .collect();
    let (_, arrived) = closest_approach(&mut app, &units, 2_000);
    if !arrived {
        for &u in &units {
            eprintln!(
                "{u} {} {:?} {:?}",
                position(&app, u),
                app.world().get::<bevy_frontier::movement::Motion>(u),
                app.world().get::<bevy_frontier::movement::Steering>(u)
            );
        }
    }
    assert!(arrived);
    settle(&mut app, &units, 600);
    let cells: HashSet<Cell> = units.iter().map(|&u| cell_at(position(&app, u))).collect();
    assert_eq!(cells.len(), units.len(), "two units rest on one cell");
    for cell in cells {
        assert!(
            // Twelve units fill the 5×5 round the goal but for a few a
            // push leaves one ring further out.
            cell.x.abs_diff(20).max(cell.y.abs_diff(20)) <= 4,
            "{cell} is far"
        );
    }
}

#[test]
fn a_resting_unit_gives_way_and_comes_back() {
    let mut app = timed_app(4096);
    spawn_map(&mut app, NavGrid::new(40, 40).unwrap());
    let resting = spawn_mover(&mut app, Cell::new(20, 20), 4.0);
    let walker = spawn_mover(&mut app, Cell::new(10, 20), 4.0);
    // The walker goes straight through: the resting unit must make way.
    app.world_mut().entity_mut(walker).insert(Avoidance::OFF);
    app.update();
    let home = position(&app, resting);
    app.world_mut()
        .entity_mut(walker)
        .insert(PathRequest::new(Vec2::new(30.0, 20.0)));
    let mut moved = 0.0f32;
    for _ in 0..400 {
        app.update();
        moved = moved.max(position(&app, resting).distance(home));
        let gap = position(&app, resting).distance(position(&app, walker));
        assert!(
            gap >= 0.9 - 0.045,
            "the walker came {gap} from the resting unit"
        );
    }
    assert!(app.world().get::<Arrived>(walker).is_some());
    assert!(moved > 0.5, "the resting unit gave way ({moved})");
    settle(&mut app, &[resting, walker], 600);
    assert!(
        position(&app, resting).distance(home) < 0.05,
        "and came back"
    );
}

#[test]
fn avoidance_never_pushes_a_unit_into_a_wall() {
    // A corridor two cells wide; a crowd going each way.
    let mut grid = NavGrid::new(60, 12).unwrap();
    grid.fill_rect(Cell::new(0, 0), Cell::new(59, 3), NavGrid::BLOCKED)
        .unwrap();
    grid.fill_rect(Cell::new(0, 6), Cell::new(59, 11), NavGrid::BLOCKED)
        .unwrap();
    grid.fill_rect(Cell::new(0, 0), Cell::new(5, 11), 1)
        .unwrap();
    grid.fill_rect(Cell::new(54, 0), Cell::new(59, 11), 1)
        .unwrap();
    let mut app = timed_app(4096);
    let map = spawn_map(&mut app, grid);
    let mut units = Vec::new();
    for i in 0..10u32 {
        let (west, east) = (
            Cell::new(1 + i % 5, 1 + 2 * (i / 5)),
            Cell::new(54 + i % 5, 1 + 2 * (i / 5)),
        );
        let a = spawn_mover(&mut app, west, 4.0);
        let b = spawn_mover(&mut app, east, 4.0);
        app.world_mut()
            .entity_mut(a)
            .insert(PathRequest::new(Vec2::new(56.0, 5.0)));
        app.world_mut()
            .entity_mut(b)
            .insert(PathRequest::new(Vec2::new(3.0, 5.0)));
        units.extend([a, b]);
    }
    for _ in 0..3_000 {
        app.update();
        let grid = app.world().get::<NavGrid>(map).unwrap();
        for &unit in &units {
            let cell = cell_at(position(&app, unit));
            assert!(
                grid.is_walkable(cell),
                "{unit} pushed into the wall at {cell}"
            );
        }
        if units
            .iter()
            .all(|&u| app.world().get::<Arrived>(u).is_some())
        {
            return;
        }
    }
    panic!("the two crowds did not get past each other");
}

#[test]
fn the_same_crowd_moves_the_same_way_every_run() {
    let run = || {
        let mut app = timed_app(4096);
        spawn_map(&mut app, NavGrid::new(40, 40).unwrap());
        let units = head_on(&mut app, 6);
        let mut log = Vec::new();
        for _ in 0..300 {
            app.update();
            log.extend(units.iter().map(|&u| position(&app, u)));
        }
        log
    };
    assert_eq!(run(), run());
}

/// A game with physics of its own switches bodies off: without
/// `AvoidancePlugin`, units walk the velocity their steering would like,
/// through each other, and still arrive; and the velocity a game sets
/// between `CrowdSystems::Avoid` and `CrowdSystems::Walk` is the one walked.
#[test]
fn a_game_without_the_avoidance_plugin_gets_preferred_velocities_and_drives_them() {
    use bevy::time::TimeUpdateStrategy;
    use bevy_frontier::movement::{AvoidancePlugin, CrowdSystems, Motion};
    use std::time::Duration;

    let plugins = || {
        FrontierPlugins::default()
            .build()
            .disable::<AvoidancePlugin>()
    };
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, plugins()))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
            50,
        )));
    spawn_map(&mut app, NavGrid::new(40, 40).unwrap());
    let units = head_on(&mut app, 1);
    let (closest, arrived) = closest_approach(&mut app, &units, 2_000);
    assert!(arrived);
    assert!(closest < 0.1, "they walked through each other: {closest}");

    // The game's own physics: every unit walks half as fast as it would
    // like.
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, plugins()))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
            50,
        )))
        .add_systems(
            Update,
            (|mut units: Query<&mut Motion>| {
                for mut motion in &mut units {
                    motion.planned = motion.preferred * 0.5;
                }
            })
            .after(CrowdSystems::Avoid)
            .before(CrowdSystems::Walk),
        );
    spawn_map(&mut app, NavGrid::new(40, 40).unwrap());
    let unit = spawn_mover(&mut app, Cell::new(5, 5), 4.0);
    app.world_mut()
        .entity_mut(unit)
        .insert(PathRequest::new(Vec2::new(35.0, 5.0)));
    for _ in 0..20 {
        app.update();
    }
    // 20 frames of 50 ms at half of 4 cells a second: 2 cells, not 4.
    let walked = position(&app, unit).x - 5.0;
    assert!((walked - 2.0).abs() < 0.3, "walked {walked} cells");
}

/// A game that answers arrivals at once, in an observer, by despawning
/// the unit that arrived and spawning another mover elsewhere (a unit
/// that enters a building, reinforcements that leave it): the new mover
/// may take the old one's place in the crowd in the middle of the frame,
/// between avoidance and the separation of bodies. It is never moved to
/// where the old one stood, nor to no place at all, and no body ends a
/// frame off the walkable cells.
#[test]
fn movers_despawned_and_spawned_mid_frame_are_not_mixed_up() {
    #[derive(Resource, Default)]
    struct Spawned(Vec<(Entity, Vec2)>);
    let mut app = timed_app(4096);
    let mut grid = NavGrid::new(40, 30).unwrap();
    grid.fill_rect(Cell::new(20, 0), Cell::new(20, 29), NavGrid::BLOCKED)
        .unwrap();
    grid.fill_rect(Cell::new(20, 14), Cell::new(20, 15), 1)
        .unwrap();
    let map = spawn_map(&mut app, grid);
    app.init_resource::<Spawned>();
    app.add_observer(
        |arrived: On<UnitArrived>, mut commands: Commands, mut spawned: ResMut<Spawned>| {
            commands.entity(arrived.entity).despawn();
            // Reinforcements on the far side, at once ordered back.
            let at = Vec2::new(
                2.0 + (spawned.0.len() % 5) as f32,
                2.0 + (spawned.0.len() / 5 % 20) as f32,
            );
            let unit = commands
                .spawn((
                    Mover { speed: 5.0 },
                    Transform::from_translation(at.extend(0.0)),
                    PathRequest::new(Vec2::new(36.0, 14.0)),
                ))
                .id();
            spawned.0.push((unit, at));
        },
    );
    // A crowd through the gap, both ways, arriving in a stream.
    for i in 0..24u32 {
        let (x, goal) = if i % 2 == 0 { (4, 34.0) } else { (36, 4.0) };
        let unit = spawn_mover(&mut app, Cell::new(x, 6 + i), 5.0);
        app.world_mut()
            .entity_mut(unit)
            .insert(PathRequest::new(Vec2::new(goal, 14.0)));
    }
    for frame in 0..1_500 {
        let before: Vec<(Entity, Vec2)> = {
            let world = app.world_mut();
            let mut movers = world.query_filtered::<(Entity, &Transform), With<Mover>>();
            movers
                .iter(world)
                .map(|(e, t)| (e, t.translation.truncate()))
                .collect()
        };
        app.update();
        let grid = app.world().get::<NavGrid>(map).unwrap().clone();
        let world = app.world_mut();
        let mut movers = world.query_filtered::<(Entity, &Transform), With<Mover>>();
        for (unit, transform) in movers.iter(world) {
            let at = transform.translation.truncate();
            assert!(at.is_finite(), "frame {frame}: {unit} at {at}");
            assert!(
                grid.is_walkable(cell_at(at)),
                "frame {frame}: {unit} in a wall at {at}"
            );
            if let Some(&(_, was)) = before.iter().find(|(e, _)| *e == unit) {
                assert!(
                    at.distance(was) < 1.0,
                    "frame {frame}: {unit} jumped from {was} to {at}"
                );
            }
        }
        let spawned = &world.resource::<Spawned>().0;
        for &(unit, at) in spawned
            .iter()
            .filter(|(u, _)| !before.iter().any(|(e, _)| e == u))
        {
            if let Some(transform) = world.get::<Transform>(unit) {
                let now = transform.translation.truncate();
                assert!(
                    now.distance(at) < 1.0,
                    "frame {frame}: {unit}, spawned at {at}, is at {now} the same frame"
                );
            }
        }
    }
    assert!(app.world().resource::<Spawned>().0.len() > 20);
}
