//! Orders on units that move, as a game gives them: a chase ends in
//! range of its target, a follow stands in range and walks again when the
//! target leaves it, a lost target ends the order with `TargetLost`, a
//! ranged order to a place stops at range, and a chaser of another class
//! closes in as near as its ground lets it.

use bevy::prelude::*;
use bevy_frontier::core::Cell;
use bevy_frontier::movement::chase::RANGE_LEEWAY;
use bevy_frontier::prelude::*;

use crate::common::{position, spawn_map, spawn_mover, timed_app};

/// Every `UnitArrived` and `TargetLost`, in order.
#[derive(Resource, Default)]
pub struct Heard {
    pub arrived: Vec<UnitArrived>,
    pub lost: Vec<TargetLost>,
}

/// Keeps every `UnitArrived` and `TargetLost` in [`Heard`].
pub fn listen(
    mut arrived: MessageReader<UnitArrived>,
    mut lost: MessageReader<TargetLost>,
    mut heard: ResMut<Heard>,
) {
    heard.arrived.extend(arrived.read().copied());
    heard.lost.extend(lost.read().copied());
}

/// A 60×40 field with a wall across it (x = 30, y 0..=30) that a chase
/// from the left half to the right must go round at the top.
fn field() -> (App, Entity) {
    let mut grid = NavGrid::new(60, 40).unwrap();
    grid.fill_rect(Cell::new(30, 0), Cell::new(30, 30), NavGrid::BLOCKED)
        .unwrap();
    listening_on(grid, PathfindingSettings::default().chase_lookahead)
}

/// An app on `grid` (its first frame run) with chases searched on
/// `lookahead`, keeping what the game is told in [`Heard`]; and the map.
fn listening_on(grid: NavGrid, lookahead: Option<u32>) -> (App, Entity) {
    let mut app = timed_app(4096);
    app.world_mut()
        .resource_mut::<PathfindingSettings>()
        .chase_lookahead = lookahead;
    app.init_resource::<Heard>()
        .add_systems(Update, listen.after(FrontierSystems::Last));
    let map = spawn_map(&mut app, grid);
    app.update();
    (app, map)
}

fn outcomes(app: &App, unit: Entity) -> Vec<Arrival> {
    let heard = &app.world().resource::<Heard>().arrived;
    heard
        .iter()
        .filter(|a| a.entity == unit)
        .map(|a| a.outcome)
        .collect()
}

/// The gap between two units' bodies (of a cell each, radius 0.45).
fn gap(app: &App, a: Entity, b: Entity) -> f32 {
    position(app, a).distance(position(app, b)) - 0.9
}

#[test]
fn a_chase_ends_in_range_of_a_target_that_walks_away() {
    let (mut app, _) = field();
    let target = spawn_mover(&mut app, Cell::new(40, 5), 1.0);
    app.world_mut()
        .entity_mut(target)
        .insert(PathRequest::new(Cell::new(55, 35)));
    let chaser = spawn_mover(&mut app, Cell::new(5, 5), 3.0);
    app.world_mut()
        .entity_mut(chaser)
        .insert(PathRequest::chase(target, 2.0));
    let mut caught = None;
    for frame in 0..1200 {
        app.update();
        if !outcomes(&app, chaser).is_empty() {
            caught = Some(frame);
            break;
        }
    }
    assert!(caught.is_some(), "the chase never ended");
    assert_eq!(outcomes(&app, chaser), vec![Arrival::InRange]);
    assert!(
        gap(&app, chaser, target) <= 2.0 + RANGE_LEEWAY + 0.01,
        "ended {} from its target",
        gap(&app, chaser, target)
    );
    let pursuit = app.world().get::<Pursuit>(chaser).unwrap();
    assert!(
        pursuit.searches < 20,
        "{} searches for one chase",
        pursuit.searches
    );
    // Over: it stands while the target walks on.
    let at = position(&app, chaser);
    for _ in 0..100 {
        app.update();
    }
    assert!(position(&app, chaser).distance(at) < 1.0);
    assert_eq!(outcomes(&app, chaser), vec![Arrival::InRange]);
}

#[test]
fn a_follower_stands_in_range_and_walks_again_when_the_target_leaves() {
    let (mut app, _) = field();
    let target = spawn_mover(&mut app, Cell::new(10, 35), 1.5);
    let follower = spawn_mover(&mut app, Cell::new(5, 5), 3.0);
    app.world_mut()
        .entity_mut(follower)
        .insert(PathRequest::follow(target, 3.0));
    // The target stands: the follower comes within range and stands.
    for _ in 0..400 {
        app.update();
    }
    let near = gap(&app, follower, target);
    assert!(near <= 3.0 + RANGE_LEEWAY, "stands {near} from its target");
    let standing = position(&app, follower);
    for _ in 0..40 {
        app.update();
    }
    assert!(position(&app, follower).distance(standing) < 0.5);
    // The target walks away round the wall: the follower goes after it,
    // and is never told its order ended.
    app.world_mut()
        .entity_mut(target)
        .insert(PathRequest::new(Cell::new(50, 5)));
    let mut out_of_range = 0;
    for _ in 0..900 {
        app.update();
        if gap(&app, follower, target) > 3.0 + RANGE_LEEWAY + 1.5 {
            out_of_range += 1;
        }
    }
    assert!(outcomes(&app, follower).is_empty());
    let near = gap(&app, follower, target);
    assert!(near <= 3.0 + RANGE_LEEWAY, "follows {near} behind");
    // Twice as fast as its target, it is out of range only while the
    // target turns a corner it must go round too.
    assert!(out_of_range < 200, "out of range {out_of_range} frames");
    // The game takes the order away: it stops.
    app.world_mut().entity_mut(follower).remove::<PathRequest>();
    app.world_mut()
        .entity_mut(target)
        .insert(PathRequest::new(Cell::new(50, 35)));
    for _ in 0..50 {
        app.update();
    }
    let at = position(&app, follower);
    for _ in 0..200 {
        app.update();
    }
    assert!(position(&app, follower).distance(at) < 0.5);
}

#[test]
fn a_target_despawned_mid_chase_ends_the_order_with_target_lost() {
    let (mut app, _) = field();
    let target = spawn_mover(&mut app, Cell::new(50, 5), 1.0);
    let chasers: Vec<Entity> = (0..3)
        .map(|i| {
            let chaser = spawn_mover(&mut app, Cell::new(5, 5 + 3 * i), 3.0);
            app.world_mut()
                .entity_mut(chaser)
                .insert(PathRequest::chase(target, 1.0));
            chaser
        })
        .collect();
    for _ in 0..60 {
        app.update();
    }
    app.world_mut().despawn(target);
    app.update();
    app.update();
    let heard = app.world().resource::<Heard>();
    for &chaser in &chasers {
        assert_eq!(outcomes(&app, chaser), vec![Arrival::TargetLost]);
        assert!(
            heard
                .lost
                .iter()
                .any(|l| l.entity == chaser && l.target == target)
        );
    }
    // They stand where they were.
    let at: Vec<Vec2> = chasers.iter().map(|&c| position(&app, c)).collect();
    for _ in 0..60 {
        app.update();
    }
    for (&chaser, &was) in chasers.iter().zip(&at) {
        assert!(position(&app, chaser).distance(was) < 1.0);
    }
    // A chase ordered at an entity that is gone is answered at once.
    let late = spawn_mover(&mut app, Cell::new(5, 20), 3.0);
    app.world_mut()
        .entity_mut(late)
        .insert(PathRequest::chase(target, 1.0));
    app.update();
    let result = app.world().get::<PathResult>(late).unwrap();
    assert_eq!(
        result.status,
        PathStatus::Invalid(InvalidReason::TargetLost)
    );
    app.update();
    assert_eq!(outcomes(&app, late), vec![Arrival::TargetLost]);
}

#[test]
fn a_ranged_order_to_a_place_stops_at_range() {
    let (mut app, _) = field();
    // A building: a 4×4 block of wall.
    {
        let mut grid = app
            .world_mut()
            .query::<&mut NavGrid>()
            .single_mut(app.world_mut())
            .unwrap();
        grid.fill_rect(Cell::new(10, 20), Cell::new(13, 23), NavGrid::BLOCKED)
            .unwrap();
    }
    let archer = spawn_mover(&mut app, Cell::new(2, 2), 3.0);
    app.world_mut()
        .entity_mut(archer)
        .insert(PathRequest::new(Vec2::new(11.5, 21.5)).within(5.0));
    for _ in 0..300 {
        app.update();
    }
    assert_eq!(outcomes(&app, archer), vec![Arrival::InRange]);
    let from_centre = position(&app, archer).distance(Vec2::new(11.5, 21.5)) - 0.45;
    assert!(
        from_centre <= 5.0 + RANGE_LEEWAY && from_centre > 3.0,
        "stopped {from_centre} from the building's centre"
    );
}

/// A 40×30 field with a lake (cells 4..=16 × 8..=22), a boat in mid-lake
/// and a foot soldier on land sent to chase it (range 1), with chases
/// searched on `lookahead`: the app, the boat and the soldier.
fn soldier_after_a_boat(lookahead: Option<u32>) -> (App, Entity, Entity) {
    const OPEN: Terrain = Terrain(1);
    const DEEP: Terrain = Terrain(2);
    let mut classes = MovementClasses::new();
    let foot = classes.add("foot", [(OPEN, 1)]);
    let boat = classes.add("boat", [(DEEP, 1)]);
    let mut grid = NavGrid::new(40, 30).unwrap().with_classes(classes).unwrap();
    grid.fill_terrain(Cell::new(4, 8), Cell::new(16, 22), DEEP)
        .unwrap();
    let (mut app, _) = listening_on(grid, lookahead);
    let ship = spawn_mover(&mut app, Cell::new(10, 15), 1.0);
    app.world_mut().entity_mut(ship).insert(MovementClass(boat));
    let soldier = spawn_mover(&mut app, Cell::new(35, 25), 3.0);
    app.world_mut()
        .entity_mut(soldier)
        .insert((MovementClass(foot), PathRequest::chase(ship, 1.0)));
    (app, ship, soldier)
}

#[test]
fn foot_soldiers_chasing_a_boat_wait_on_the_shore_and_close_in_when_it_comes_near() {
    let (mut app, ship, soldier) =
        soldier_after_a_boat(PathfindingSettings::default().chase_lookahead);
    for _ in 0..300 {
        app.update();
    }
    // Out of reach in mid-lake: it waits on the shore, nearest the boat,
    // its order not over.
    assert!(outcomes(&app, soldier).is_empty());
    let shore = position(&app, soldier);
    assert!(
        shore.x == 17.0 || shore.y == 7.0 || shore.y == 23.0 || shore.x == 3.0,
        "waits at {shore}"
    );
    assert!(
        shore.distance(position(&app, ship)) < 9.0,
        "waits at {shore}"
    );
    // The boat sails to the east bank: the soldier walks along the shore
    // and has it in range.
    app.world_mut()
        .entity_mut(ship)
        .insert(PathRequest::new(Cell::new(16, 20)));
    for _ in 0..400 {
        app.update();
    }
    assert_eq!(outcomes(&app, soldier), vec![Arrival::InRange]);
    assert!(gap(&app, soldier, ship) <= 1.0 + RANGE_LEEWAY);
}

#[test]
fn a_group_sent_at_a_unit_closes_in_round_it() {
    let (mut app, _) = field();
    let target = spawn_mover(&mut app, Cell::new(45, 20), 1.0);
    let squad: Vec<Entity> = (0..8)
        .map(|i| spawn_mover(&mut app, Cell::new(3 + i % 4, 10 + i / 4), 3.0))
        .collect();
    app.world_mut()
        .write_message(GroupMove::new(squad.clone(), target).within(2.0));
    for _ in 0..600 {
        app.update();
    }
    for &unit in &squad {
        assert_eq!(outcomes(&app, unit), vec![Arrival::InRange], "{unit}");
        // In range when it stopped; those that came later pressed some
        // a cell or two further as they stood.
        assert!(
            gap(&app, unit, target) <= 2.0 + RANGE_LEEWAY + 2.0,
            "{unit} stands {} from its target",
            gap(&app, unit, target)
        );
    }
    // Round it, not on one spot: no two share a cell.
    let mut cells: Vec<(i32, i32)> = squad
        .iter()
        .map(|&u| {
            let p = position(&app, u);
            (p.x.round() as i32, p.y.round() as i32)
        })
        .collect();
    cells.sort_unstable();
    cells.dedup();
    assert_eq!(cells.len(), squad.len());
}

/// A chase whose searches stop at a small lookahead
/// (`PathfindingSettings::chase_lookahead`) on open ground: each path is a
/// leg of the way (`PathStatus::Partial`), and the chaser walks leg after
/// leg without stopping to wait for the next, and catches its target.
#[test]
fn a_chase_on_a_short_lookahead_walks_leg_after_leg_without_stopping() {
    let (mut app, _) = listening_on(NavGrid::new(60, 40).unwrap(), Some(3));
    let target = spawn_mover(&mut app, Cell::new(45, 5), 1.0);
    app.world_mut()
        .entity_mut(target)
        .insert(PathRequest::new(Cell::new(55, 20)));
    let chaser = spawn_mover(&mut app, Cell::new(5, 5), 3.0);
    app.world_mut()
        .entity_mut(chaser)
        .insert(PathRequest::chase(target, 1.0));
    let (mut legs, mut stood, mut caught) = (false, 0, None);
    let mut at = position(&app, chaser);
    for frame in 0..1200 {
        app.update();
        let result = app.world().get::<PathResult>(chaser);
        legs |= result.is_some_and(|r| r.status == PathStatus::Partial);
        if !outcomes(&app, chaser).is_empty() {
            caught = Some(frame);
            break;
        }
        let now = position(&app, chaser);
        if frame > 2 && now.distance(at) < 0.01 {
            stood += 1;
        }
        at = now;
    }
    assert!(caught.is_some(), "the chase never ended");
    assert_eq!(outcomes(&app, chaser), vec![Arrival::InRange]);
    let searches = app.world().get::<Pursuit>(chaser).unwrap().searches;
    assert!(
        legs && searches >= 3,
        "{searches} searches: the lookahead did not cut the way"
    );
    assert!(stood <= 3, "stood still {stood} frames on the way");
}

/// A chaser cut off from its target (foot soldiers, a boat in mid-lake)
/// on a small lookahead: its legs lead to the shore and it waits there,
/// without asking for a leg every frame.
#[test]
fn a_chaser_cut_off_on_a_short_lookahead_waits_without_searching_each_frame() {
    let (mut app, ship, soldier) = soldier_after_a_boat(Some(20));
    for _ in 0..300 {
        app.update();
    }
    assert!(outcomes(&app, soldier).is_empty());
    let shore = position(&app, soldier);
    assert!(
        shore.distance(position(&app, ship)) < 9.0,
        "waits at {shore}"
    );
    let searches = app.world().get::<Pursuit>(soldier).unwrap().searches;
    assert!(searches < 40, "{searches} searches in 300 frames");
    for _ in 0..200 {
        app.update();
    }
    let more = app.world().get::<Pursuit>(soldier).unwrap().searches - searches;
    assert!(more <= 1, "{more} searches while it waited");
}

/// A chaser on a short lookahead facing a wall far longer than its
/// searches explore round: the legs that lead it no nearer make the next
/// search look further, until one leads round the wall, and it catches a
/// target standing still behind it.
#[test]
fn a_chaser_on_a_short_lookahead_goes_round_a_long_wall() {
    let (mut app, _) = field();
    app.world_mut()
        .resource_mut::<PathfindingSettings>()
        .chase_lookahead = Some(3);
    let target = spawn_mover(&mut app, Cell::new(40, 5), 1.0);
    let chaser = spawn_mover(&mut app, Cell::new(5, 5), 3.0);
    app.world_mut()
        .entity_mut(chaser)
        .insert(PathRequest::chase(target, 1.0));
    for _ in 0..1200 {
        app.update();
        if !outcomes(&app, chaser).is_empty() {
            break;
        }
    }
    assert_eq!(outcomes(&app, chaser), vec![Arrival::InRange]);
    let searches = app.world().get::<Pursuit>(chaser).unwrap().searches;
    assert!(searches < 100, "{searches} searches");
}
