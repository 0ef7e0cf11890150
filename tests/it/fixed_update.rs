//! A lockstep game runs every plugin in `FixedUpdate`: group moves, solo
//! orders and movement give the same steps as in the default `Update`.

use std::time::Duration;

use bevy::ecs::intern::Interned;
use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_frontier::core::Cell;
use bevy_frontier::movement::Arrived;
use bevy_frontier::prelude::*;

use crate::common::{position, spawn_mover};

/// Where every unit stood each time the plugins' schedule ran.
#[derive(Resource, Default)]
struct Steps(Vec<Vec<Vec2>>);

#[derive(Resource)]
struct Units(Vec<Entity>);

fn record(units: Res<Units>, transforms: Query<&Transform>, mut steps: ResMut<Steps>) {
    let step = units
        .0
        .iter()
        .map(|&u| transforms.get(u).unwrap().translation.truncate())
        .collect();
    steps.0.push(step);
}

/// A field with a wall and a gap; ten units ordered as a group, two alone.
/// Returns the steps and whether everyone arrived.
fn run(schedule: impl ScheduleLabel + Clone) -> (Vec<Vec<Vec2>>, bool) {
    let label: Interned<dyn ScheduleLabel> = schedule.clone().intern();
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, FrontierPlugins::new(schedule.clone())))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
            20,
        )))
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_millis(20)))
        .insert_resource(PathfindingSettings {
            // Small, so group floods and searches span several steps.
            nodes_per_frame: 64,
            ..default()
        })
        .init_resource::<Steps>()
        .add_systems(label, record.after(FrontierSystems::Last));
    let mut grid = NavGrid::new(40, 30).unwrap();
    grid.fill_rect(Cell::new(20, 0), Cell::new(20, 24), NavGrid::BLOCKED)
        .unwrap();
    app.world_mut().spawn((grid, Transform::default()));
    let squad: Vec<Entity> = (0..10)
        .map(|i| spawn_mover(&mut app, Cell::new(3 + i % 5, 10 + i / 5), 6.0))
        .collect();
    let alone = [
        spawn_mover(&mut app, Cell::new(2, 2), 5.0),
        spawn_mover(&mut app, Cell::new(2, 27), 7.0),
    ];
    let units: Vec<Entity> = squad.iter().chain(&alone).copied().collect();
    app.insert_resource(Units(units.clone()));
    // Bevy's first frame has no time step (and runs no fixed step): start
    // both clocks before the orders.
    app.update();
    app.world_mut().resource_mut::<Steps>().0.clear();
    app.world_mut()
        .write_message(GroupMove::new(squad, Cell::new(34, 12)));
    for (unit, goal) in alone.iter().zip([Cell::new(37, 3), Cell::new(30, 28)]) {
        app.world_mut()
            .entity_mut(*unit)
            .insert(PathRequest::new(goal));
    }
    for _ in 0..1_500 {
        app.update();
    }
    let arrived = units
        .iter()
        .all(|&u| app.world().get::<Arrived>(u).is_some() && position(&app, u).x > 20.0);
    (
        app.world_mut().remove_resource::<Steps>().unwrap().0,
        arrived,
    )
}

#[test]
fn every_plugin_runs_in_the_schedule_it_is_given() {
    let (update, all_arrived) = run(Update);
    let (fixed, all_arrived_fixed) = run(FixedUpdate);
    assert!(all_arrived, "not every unit arrived in Update");
    assert!(all_arrived_fixed, "not every unit arrived in FixedUpdate");
    let steps = update.len().min(fixed.len());
    assert!(steps > 200, "only {steps} steps ran");
    if let Some(step) = (0..steps).find(|&i| update[i] != fixed[i]) {
        panic!(
            "step {step} of {steps} differs:\n  Update:      {:?}\n  FixedUpdate: {:?}",
            update[step], fixed[step]
        );
    }
}
