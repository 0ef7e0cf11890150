//! How an order ends, as a game reads it: `UnitArrived` and `Arrived` say
//! whether the unit reached its goal or only the nearest place it could,
//! `PathFailed` says an order found no path at all, and a member of a
//! group move gets the same signals as a unit ordered alone (its own
//! `PathReady` included).

use bevy::prelude::*;
use bevy_frontier::core::Cell;
use bevy_frontier::groups::GroupMember;
use bevy_frontier::prelude::*;

use crate::common::{spawn_map, spawn_mover, timed_app};

/// Everything the plugin said about units, in order.
#[derive(Resource, Default)]
struct Heard {
    ready: Vec<(Entity, PathStatus)>,
    failed: Vec<(Entity, PathStatus)>,
    arrived: Vec<UnitArrived>,
}

fn listen(
    mut ready: MessageReader<PathReady>,
    mut failed: MessageReader<PathFailed>,
    mut arrived: MessageReader<UnitArrived>,
    mut heard: ResMut<Heard>,
) {
    heard
        .ready
        .extend(ready.read().map(|r| (r.entity, r.status)));
    heard
        .failed
        .extend(failed.read().map(|f| (f.entity, f.status)));
    heard.arrived.extend(arrived.read().copied());
}

/// A 40×24 field of open ground with a sealed pocket (a walled 5×5 room,
/// cells 30..=34 × 10..=14, its inside 31..=33 × 11..=13) and a lake of
/// deep water (cells 4..=12 × 16..=22) for boats.
fn scene() -> (App, Entity, ClassId, ClassId) {
    const OPEN: Terrain = Terrain(1);
    const DEEP: Terrain = Terrain(2);
    let mut classes = MovementClasses::new();
    let foot = classes.add("foot", [(OPEN, 1)]);
    let boat = classes.add("boat", [(DEEP, 1)]);
    let mut grid = NavGrid::new(40, 24).unwrap().with_classes(classes).unwrap();
    grid.fill_terrain(Cell::new(30, 10), Cell::new(34, 14), Terrain::WALL)
        .unwrap();
    grid.fill_terrain(Cell::new(31, 11), Cell::new(33, 13), OPEN)
        .unwrap();
    grid.fill_terrain(Cell::new(4, 16), Cell::new(12, 22), DEEP)
        .unwrap();
    let mut app = timed_app(4096);
    app.init_resource::<Heard>()
        .add_systems(Update, listen.after(FrontierSystems::Last));
    let map = spawn_map(&mut app, grid);
    app.update();
    (app, map, foot, boat)
}

fn run(app: &mut App, frames: u32) {
    for _ in 0..frames {
        app.update();
    }
}

fn arrival(app: &App, unit: Entity) -> Option<Arrival> {
    let heard = &app.world().resource::<Heard>().arrived;
    let mut of_unit = heard.iter().filter(|a| a.entity == unit);
    let first = of_unit.next().map(|a| a.outcome);
    assert!(of_unit.next().is_none(), "{unit} arrived twice");
    // The component says the same.
    assert_eq!(
        app.world().get::<Arrived>(unit).map(|a| a.outcome),
        first,
        "{unit}'s Arrived"
    );
    first
}

/// The statuses `unit` heard, in order, from one list of [`Heard`].
fn of_unit(heard: &[(Entity, PathStatus)], unit: Entity) -> Vec<PathStatus> {
    heard
        .iter()
        .filter(|&&(e, _)| e == unit)
        .map(|&(_, s)| s)
        .collect()
}

fn ready_statuses(app: &App, unit: Entity) -> Vec<PathStatus> {
    of_unit(&app.world().resource::<Heard>().ready, unit)
}

fn failures(app: &App, unit: Entity) -> Vec<PathStatus> {
    of_unit(&app.world().resource::<Heard>().failed, unit)
}

#[test]
fn a_unit_sent_into_a_sealed_pocket_arrives_at_the_nearest_place_and_says_so() {
    let (mut app, _, _, _) = scene();
    let sent = spawn_mover(&mut app, Cell::new(2, 2), 6.0);
    let ordinary = spawn_mover(&mut app, Cell::new(2, 4), 6.0);
    app.world_mut()
        .entity_mut(sent)
        .insert(PathRequest::new(Cell::new(32, 12)));
    app.world_mut()
        .entity_mut(ordinary)
        .insert(PathRequest::new(Cell::new(20, 4)));
    run(&mut app, 300);
    assert_eq!(ready_statuses(&app, sent), [PathStatus::NearestReachable]);
    assert_eq!(arrival(&app, sent), Some(Arrival::NearestReachable));
    assert!(!Arrival::NearestReachable.at_goal());
    // Beside the room, not in it.
    let at = crate::common::position(&app, sent);
    assert!(at.distance(Vec2::new(32.0, 12.0)) < 4.0, "{at}");
    assert_eq!(ready_statuses(&app, ordinary), [PathStatus::Complete]);
    assert_eq!(arrival(&app, ordinary), Some(Arrival::Reached));
    assert!(failures(&app, sent).is_empty() && failures(&app, ordinary).is_empty());
}

#[test]
fn a_boat_sent_onto_land_stops_at_the_shore_and_says_so() {
    let (mut app, _, _, boat) = scene();
    let unit = spawn_mover(&mut app, Cell::new(8, 19), 4.0);
    app.world_mut()
        .entity_mut(unit)
        .insert((MovementClass(boat), PathRequest::new(Cell::new(20, 19))));
    run(&mut app, 300);
    assert_eq!(arrival(&app, unit), Some(Arrival::NearestReachable));
    // On the lake's east shore.
    let at = crate::common::position(&app, unit);
    assert!((11.0..=12.5).contains(&at.x), "{at}");
}

#[test]
fn an_order_with_no_path_fails_and_never_arrives() {
    let (mut app, _, _, _) = scene();
    let pocket = spawn_mover(&mut app, Cell::new(2, 2), 6.0);
    let off_map = spawn_mover(&mut app, Cell::new(2, 4), 6.0);
    app.world_mut()
        .entity_mut(pocket)
        .insert(PathRequest::new(Cell::new(32, 12)).fail_if_unreachable());
    app.world_mut()
        .entity_mut(off_map)
        .insert(PathRequest::new(Vec2::new(400.0, 4.0)));
    run(&mut app, 120);
    assert_eq!(failures(&app, pocket), [PathStatus::Unreachable]);
    assert_eq!(
        failures(&app, off_map),
        [PathStatus::Invalid(InvalidReason::GoalOutOfBounds)]
    );
    for unit in [pocket, off_map] {
        assert_eq!(arrival(&app, unit), None);
        let at = crate::common::position(&app, unit);
        assert!(at.x < 3.0, "{unit} walked to {at}");
    }
}

/// Eight foot soldiers in a block at the field's west end.
fn squad(app: &mut App) -> Vec<Entity> {
    (0..8)
        .map(|i| spawn_mover(app, Cell::new(2 + i % 4, 2 + i / 4), 5.0))
        .collect()
}

#[test]
fn group_members_get_their_own_path_ready_and_arrival() {
    let (mut app, _, _, _) = scene();
    let units = squad(&mut app);
    app.world_mut()
        .write_message(GroupMove::new(units.clone(), Cell::new(24, 6)));
    run(&mut app, 400);
    for &unit in &units {
        // Its part of the group's route, then its end: as a solo unit's.
        assert_eq!(ready_statuses(&app, unit), [PathStatus::Complete], "{unit}");
        assert_eq!(arrival(&app, unit), Some(Arrival::Reached), "{unit}");
        assert!(app.world().get::<GroupMember>(unit).is_none());
    }
}

/// A group sent where it cannot go: into the sealed room (whose cells its
/// end slots are: each member goes alone to the nearest place it can
/// reach), or onto the lake (its slots on the shore, handed out with the
/// group's route). Either way each member ends as a unit ordered alone.
#[test]
fn group_members_sent_where_they_cannot_go_end_as_a_solo_unit_does() {
    for (goal, shared) in [(Cell::new(32, 12), false), (Cell::new(8, 19), true)] {
        let (mut app, _, _, _) = scene();
        let units = squad(&mut app);
        app.world_mut()
            .write_message(GroupMove::new(units.clone(), goal));
        run(&mut app, 400);
        for &unit in &units {
            assert_eq!(
                arrival(&app, unit),
                Some(Arrival::NearestReachable),
                "{unit} sent to {goal}"
            );
            // It heard of its route: the group's, or its own.
            let ready = ready_statuses(&app, unit);
            assert!(!ready.is_empty(), "{unit}");
            if shared {
                assert_eq!(ready, [PathStatus::NearestReachable], "{unit}");
                assert!(app.world().get::<PathResult>(unit).is_none());
            }
        }
    }
}

#[test]
fn group_members_given_a_goal_off_the_map_each_fail() {
    let (mut app, _, _, _) = scene();
    let units = squad(&mut app);
    app.world_mut()
        .write_message(GroupMove::new(units.clone(), Vec2::new(-50.0, 3.0)));
    run(&mut app, 60);
    for &unit in &units {
        assert_eq!(
            failures(&app, unit),
            [PathStatus::Invalid(InvalidReason::GoalOutOfBounds)],
            "{unit}"
        );
        assert_eq!(arrival(&app, unit), None);
    }
}

/// Marks a unit the game holds in place (a net, a spell): its own system
/// sets the velocity it walks to nothing, as a game's physics may.
#[derive(Component)]
struct HeldInPlace;

fn hold(mut held: Query<&mut bevy_frontier::movement::Motion, With<HeldInPlace>>) {
    for mut motion in &mut held {
        motion.planned = Vec2::ZERO;
    }
}

/// Everything `MoveBlocked` said, in order.
#[derive(Resource, Default)]
struct Blocked(Vec<MoveBlocked>);

fn listen_blocked(mut blocked: MessageReader<MoveBlocked>, mut heard: ResMut<Blocked>) {
    heard.0.extend(blocked.read().copied());
}

/// A unit that makes no headway for `CrowdSettings::stop_after`
/// (pushing through gains it nothing) stops where it stands and the game
/// is told, once: its order ends `Blocked`, `MoveBlocked` says where, and
/// it stands still after. A unit beside it that can move arrives as ever;
/// with `stop_after` infinite, a held unit keeps trying.
#[test]
fn a_unit_held_without_headway_stops_and_the_game_is_told() {
    use bevy_frontier::movement::{CrowdSystems, Steering};
    for stop_after in [3.0, f32::INFINITY] {
        let (mut app, _, _, _) = scene();
        app.insert_resource(CrowdSettings {
            stop_after,
            ..default()
        })
        .init_resource::<Blocked>()
        .add_systems(
            Update,
            (
                hold.after(CrowdSystems::Avoid).before(CrowdSystems::Walk),
                listen_blocked.after(FrontierSystems::Last),
            ),
        );
        let held = spawn_mover(&mut app, Cell::new(2, 2), 4.0);
        let free = spawn_mover(&mut app, Cell::new(2, 6), 4.0);
        app.world_mut()
            .entity_mut(held)
            .insert((HeldInPlace, PathRequest::new(Cell::new(20, 2))));
        app.world_mut()
            .entity_mut(free)
            .insert(PathRequest::new(Cell::new(20, 6)));
        // 3 s of no headway is 60 frames of 50 ms; it is told at the
        // give-up after that (every 2 s): within 7 s.
        run(&mut app, 140);
        assert_eq!(arrival(&app, free), Some(Arrival::Reached));
        let told = &app.world().resource::<Blocked>().0;
        if stop_after.is_finite() {
            assert_eq!(arrival(&app, held), Some(Arrival::Blocked));
            assert!(!Arrival::Blocked.at_goal());
            assert_eq!(told.len(), 1, "{told:?}");
            assert_eq!(told[0].entity, held);
            let at = crate::common::position(&app, held);
            assert!(told[0].at.distance(Vec2::new(2.0, 2.0)) < 0.5, "{told:?}");
            // It stands where it stopped: no order left to push on with.
            app.world_mut().entity_mut(held).remove::<HeldInPlace>();
            run(&mut app, 40);
            assert!(crate::common::position(&app, held).distance(at) < 0.1);
            assert_eq!(app.world().get::<Steering>(held), Some(&Steering::Idle));
        } else {
            assert_eq!(arrival(&app, held), None);
            assert!(told.is_empty(), "{told:?}");
            assert!(matches!(
                app.world().get::<Steering>(held),
                Some(Steering::Following { .. })
            ));
        }
    }
}

/// A unit of a class the map lacks stands still, whatever its order: the
/// order is answered `UnknownClass` (never walked as another class, which
/// would take a boat onto land), and the crowd walks round it as round a
/// rock, never into its body.
#[test]
fn a_unit_of_a_class_the_map_lacks_stands_still_as_an_obstacle() {
    let (mut app, _, _, _) = scene();
    let stray = spawn_mover(&mut app, Cell::new(10, 8), 4.0);
    let walker = spawn_mover(&mut app, Cell::new(2, 8), 4.0);
    app.world_mut().entity_mut(stray).insert((
        MovementClass(ClassId::from_index(7)),
        PathRequest::new(Cell::new(20, 20)),
    ));
    app.world_mut()
        .entity_mut(walker)
        .insert(PathRequest::new(Cell::new(20, 8)));
    let at = Vec2::new(10.0, 8.0);
    let mut closest = f32::INFINITY;
    for _ in 0..200 {
        app.update();
        assert_eq!(crate::common::position(&app, stray), at, "the stray moved");
        closest = closest.min(crate::common::position(&app, walker).distance(at));
    }
    assert_eq!(
        failures(&app, stray),
        [PathStatus::Invalid(InvalidReason::UnknownClass)]
    );
    assert_eq!(arrival(&app, stray), None);
    assert_eq!(arrival(&app, walker), Some(Arrival::Reached));
    // Two bodies of 0.45 touch at 0.9: the walker kept out of the stray's.
    assert!(closest >= 0.9 - 0.1 * 0.45 - 1e-4, "{closest}");
}
