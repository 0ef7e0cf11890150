//! The plugins of the crowd step and the order its stages run in
//! ([`CrowdSystems`]): the top floor of `movement/`, naming every stage's
//! systems.

use bevy::ecs::intern::Interned;
use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;

use super::body::Avoidance;
use super::parallel::each_mover;
use super::rest::RestingPlaces;
use super::seats::Seats;
use super::settings::{CrowdSettings, warn_of_odd_settings};
use super::state::{Arrived, Motion, MoveBlocked, Mover, Steering, UnitArrived};
use super::tuning::PARALLEL_MOVERS;
use super::{avoidance, chase, orders, passage, prefer, separate, walk};
use crate::checksum::{FrontierChecksum, pair};
use crate::ordinal::Ordinal;
use crate::pathfinding::PathfindingPlugin;
use crate::schedule::FrontierSystems;

/// The stages of the crowd step, in the order each frame runs them, each
/// a pass over every mover: nested in [`FrontierSystems::Steering`],
/// [`FrontierSystems::Avoidance`] and [`FrontierSystems::Move`]. Order a
/// system of your own around one stage, for example
/// `.after(CrowdSystems::Avoid).before(CrowdSystems::Walk)` to change the
/// velocities avoidance chose before units walk them.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CrowdSystems {
    /// Orders: new requests start instinct, new paths are joined, paths and
    /// routes a map change cut are asked for again.
    Orders,
    /// Each mover's preferred velocity: toward its next corner, its goal on
    /// instinct, or its rest place when it stands (in parallel; standing
    /// units without a place take one after, one by one).
    Prefer,
    /// Turns at one-lane passages ([`passage`]): units whose side it is
    /// not wait.
    Turns,
    /// Local avoidance ([`avoidance`]): ORCA's velocities, planned in
    /// parallel, and the gaps kept between the pairs that may touch.
    Avoid,
    /// Every mover walks its velocity on the grid (in parallel), then, one
    /// by one, arrivals, rest places and units blocked too long.
    Walk,
    /// Bodies still touching are pushed apart.
    Separate,
}

/// Moves [`Mover`]s: instinct while the search runs, path following,
/// re-planning and arrival.
///
/// # Systems
/// Each in its stage of [`CrowdSystems`]:
/// - [`CrowdSystems::Orders`], chained: `begin_orders` (new requests start
///   instinct at once), `adopt_paths` (new results are joined at the
///   furthest visible waypoint), `replan_cut_paths` (paths a map change cut
///   are asked for again), `replan_cut_routes` (so are routes, group
///   members' too, whose legs still to walk a cell changed since the last
///   frame now blocks).
/// - [`CrowdSystems::Prefer`]: `prefer` (each unit's [`Motion::preferred`]
///   velocity; standing units take their rest place).
/// - [`CrowdSystems::Walk`]: `move_units` (walks each unit its velocity ×
///   delta time on the grid; arrival, rest places, and a unit blocked too
///   long pushes through).
///
/// [`PassagesPlugin`] adds `take_turns` in [`CrowdSystems::Turns`], and
/// [`AvoidancePlugin`] adds `avoid` and `separate` in
/// [`CrowdSystems::Avoid`] and [`CrowdSystems::Separate`]; without
/// [`AvoidancePlugin`], `walk_as_preferred` in [`CrowdSystems::Avoid`] has
/// every unit walk the velocity it would like. Add them too, or use
/// [`FrontierPlugins`](crate::FrontierPlugins), which holds all three.
///
/// An observer stops a unit whose `PathRequest` is removed.
pub struct MovementPlugin {
    /// The schedule to run in; the one `PathfindingPlugin` runs in.
    pub schedule: Interned<dyn ScheduleLabel>,
}

impl MovementPlugin {
    /// The plugin, running in `schedule`.
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
        }
    }
}

impl MovementPlugin {
    /// Adds the plugin for `schedule` unless the app already has it: the
    /// plugins built on movement bring it with them.
    pub(crate) fn add_once(app: &mut App, schedule: Interned<dyn ScheduleLabel>) {
        if !app.is_plugin_added::<Self>() {
            app.add_plugins(Self { schedule });
        }
    }
}

impl Default for MovementPlugin {
    fn default() -> Self {
        Self::new(Update)
    }
}

impl Plugin for MovementPlugin {
    fn build(&self, app: &mut App) {
        if !app.is_plugin_added::<PathfindingPlugin>() {
            app.add_plugins(PathfindingPlugin {
                schedule: self.schedule,
            });
        }
        app.register_type::<Mover>()
            .register_type::<Steering>()
            .register_type::<Motion>()
            .register_type::<Avoidance>()
            .register_type::<CrowdSettings>()
            .register_type::<Arrived>()
            .register_type::<chase::Pursuit>()
            .init_resource::<CrowdSettings>()
            .init_resource::<RestingPlaces>()
            .init_resource::<Seats>()
            .init_resource::<orders::RouteChecks>()
            .init_resource::<passage::Passages>()
            .add_observer(super::rest::note_gone_mover)
            .add_message::<UnitArrived>()
            .add_message::<MoveBlocked>()
            .add_message::<chase::TargetLost>()
            .configure_sets(
                self.schedule,
                (
                    (
                        CrowdSystems::Orders,
                        CrowdSystems::Prefer,
                        CrowdSystems::Turns,
                    )
                        .chain()
                        .in_set(FrontierSystems::Steering),
                    CrowdSystems::Avoid.in_set(FrontierSystems::Avoidance),
                    // The walk's commands (arrivals, new requests) are
                    // applied after the separation, which reads none of
                    // them: one sync point the fewer.
                    (CrowdSystems::Walk, CrowdSystems::Separate)
                        .chain_ignore_deferred()
                        .in_set(FrontierSystems::Move),
                ),
            )
            .add_systems(
                self.schedule,
                (
                    (
                        // None of these reads what the others' commands
                        // change (`Arrived`, `EndedOrder`, markers, a
                        // request for a unit without one): their commands
                        // are applied together, at one sync point before
                        // `pursue`, which reads `Arrived`.
                        (
                            warn_of_odd_settings,
                            orders::seat_strays,
                            orders::begin_orders,
                            orders::adopt_paths,
                            orders::replan_cut_paths,
                            orders::replan_cut_routes,
                        )
                            .chain_ignore_deferred(),
                        chase::pursue,
                    )
                        .chain()
                        .in_set(CrowdSystems::Orders),
                    prefer::prefer.in_set(CrowdSystems::Prefer),
                    // Without avoidance, nothing turns the velocity a unit
                    // would like into the one it walks: it walks the one
                    // it would like.
                    walk_as_preferred
                        .run_if(not(resource_exists::<avoidance::Crowd>))
                        .in_set(CrowdSystems::Avoid),
                    walk::move_units.in_set(CrowdSystems::Walk),
                    fold_movers
                        .run_if(resource_exists::<FrontierChecksum>)
                        .in_set(FrontierSystems::Last)
                        .before(crate::checksum::close_frame),
                ),
            )
            .add_observer(orders::stop_on_cancel);
    }
}

/// Bodies in a crowd: local avoidance (ORCA, [`avoidance`]) in
/// [`CrowdSystems::Avoid`] and the separation of bodies still touching in
/// [`CrowdSystems::Separate`]. Part of [`FrontierPlugins`]; a game with
/// physics of its own switches it off
/// (`FrontierPlugins::default().build().disable::<AvoidancePlugin>()`): its
/// movers then walk the velocity their steering would like
/// ([`Motion::preferred`]), through each other, and the game may change
/// [`Motion::planned`] between [`CrowdSystems::Avoid`] and
/// [`CrowdSystems::Walk`].
///
/// [`FrontierPlugins`]: crate::FrontierPlugins
pub struct AvoidancePlugin {
    /// The schedule to run in; the one `MovementPlugin` runs in.
    pub schedule: Interned<dyn ScheduleLabel>,
}

impl Default for AvoidancePlugin {
    fn default() -> Self {
        Self {
            schedule: Update.intern(),
        }
    }
}

impl Plugin for AvoidancePlugin {
    fn build(&self, app: &mut App) {
        MovementPlugin::add_once(app, self.schedule);
        app.init_resource::<avoidance::Crowd>().add_systems(
            self.schedule,
            (
                avoidance::avoid.in_set(CrowdSystems::Avoid),
                separate::separate.in_set(CrowdSystems::Separate),
            ),
        );
    }
}

/// Turns at one-lane passages ([`passage`]) in [`CrowdSystems::Turns`]:
/// units going opposite ways take turns at a bridge one unit wide instead
/// of meeting on it. Part of [`FrontierPlugins`]; switched off, units meet
/// in passages and push through each other.
///
/// [`FrontierPlugins`]: crate::FrontierPlugins
pub struct PassagesPlugin {
    /// The schedule to run in; the one `MovementPlugin` runs in.
    pub schedule: Interned<dyn ScheduleLabel>,
}

impl Default for PassagesPlugin {
    fn default() -> Self {
        Self {
            schedule: Update.intern(),
        }
    }
}

impl Plugin for PassagesPlugin {
    fn build(&self, app: &mut App) {
        MovementPlugin::add_once(app, self.schedule);
        app.add_systems(
            self.schedule,
            passage::take_turns.in_set(CrowdSystems::Turns),
        );
    }
}

/// [`CrowdSystems::Avoid`] without [`AvoidancePlugin`]: every mover walks
/// the velocity it would like.
fn walk_as_preferred(mut units: Query<&mut Motion, With<Mover>>) {
    each_mover!(units, PARALLEL_MOVERS, |mut motion| {
        motion.planned = motion.preferred;
    });
}

/// `FrontierSystems::Last`, with a [`FrontierChecksum`]: every mover's
/// position, velocity and crowd state, in the order the movers joined.
#[inline(never)] // named in profiles
fn fold_movers(
    units: Query<(&Ordinal, &Transform, &Motion, &Steering), With<Mover>>,
    mut checksum: ResMut<FrontierChecksum>,
    mut movers: Local<Vec<(u64, [u64; 3])>>,
) {
    movers.clear();
    movers.extend(units.iter().map(|(ordinal, transform, motion, steering)| {
        let at = transform.translation;
        let words = [
            pair(at.x, at.y),
            pair(motion.velocity.x, motion.velocity.y),
            motion.state(steering) as u64,
        ];
        (ordinal.joined(), words)
    }));
    movers.sort_unstable_by_key(|&(joined, _)| joined);
    checksum.fold(movers.iter().flat_map(|(_, words)| *words));
}
