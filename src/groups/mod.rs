//! Group moves: one order for many units, one long search for all of them.
//!
//! A [`GroupMove`] names the units and the goal. The plugin finds one path
//! P from the group's centre (the walkable cell nearest to the units' mean
//! position in the goal's region) to the goal; meanwhile every unit walks on
//! instinct. When P arrives, two floods (Dijkstra searches that stop once
//! every target is settled) give every unit at once its own short head, from
//! where it stands to the splice cell P\[k\], and its own short tail, from
//! P\[len−1−k\] to its end slot. The middle of P is string-pulled once and
//! shared by every unit (reference-counted, one copy per column). Routes are
//! handed out a few dozen a frame, so no frame pays for a whole army.
//!
//! End slots are distinct walkable cells around the goal in its region,
//! taken breadth-first, so the group spreads out on arrival instead of piling
//! onto one cell. The first units to arrive take the slots deepest past the
//! tail's splice cell, so later ones do not walk through them. Units far from
//! the centre or in another region get a [`PathRequest`] of their own to
//! their slot instead.
//!
//! Membership is a Bevy relationship: a unit's [`GroupMember`] points at the
//! group entity, whose [`GroupMembers`] Bevy keeps up to date, so a unit
//! despawned, arrived, or given an order of its own is never left behind in
//! a list.
//!
//! | file | holds |
//! |---|---|
//! | `group.rs` | the order, membership and the group's state ([`GroupMove`], [`GroupMember`], [`GroupMembers`], [`SharedRoute`]) |
//! | `order.rs` | an order split by unit kind into groups and units alone, with end slots |
//! | `splice.rs` | the two floods on the frame's budget, in lanes; plan again or disband |
//! | `handout.rs` | each member's route handed out: head, shared middle in its column, tail |

mod group;
mod handout;
mod order;
mod splice;

use bevy::ecs::intern::Interned;
use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;

use crate::movement::{MovementPlugin, Mover, Steer, Steering, UnitArrived, steer};
use crate::pathfinding::PathRequest;
use crate::schedule::FrontierSystems;
use group::{GroupScratch, Stage};
use splice::scratch_back;

pub use group::{GroupMember, GroupMembers, GroupMove, SharedRoute};
/// How far the group orders have been read (`crate::save`).
#[cfg(feature = "serialize")]
pub(crate) use order::GroupOrders;

/// Group moves: [`GroupMove`] orders become one shared path, heads and
/// tails from two budgeted floods, and routes handed out a few dozen a
/// frame.
///
/// # Systems
/// - In [`FrontierSystems::Orders`]: `retire_groups` (despawns groups no
///   unit is left in), then `start_group_moves` (reads [`GroupMove`]s).
/// - In [`FrontierSystems::GroupRoutes`]: `splice_groups` (runs the floods
///   on the frame's budget, before the searches, and gives members their
///   routes).
///
/// Observers take a unit out of its group when it arrives or gets an order
/// of its own, and stop one the game takes out (its [`GroupMember`]
/// removed).
pub struct GroupsPlugin {
    /// The schedule to run in; the one the other plugins run in.
    pub schedule: Interned<dyn ScheduleLabel>,
}

impl GroupsPlugin {
    /// The plugin, running in `schedule`.
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
        }
    }
}

impl Default for GroupsPlugin {
    fn default() -> Self {
        Self::new(Update)
    }
}

impl Plugin for GroupsPlugin {
    fn build(&self, app: &mut App) {
        MovementPlugin::add_once(app, self.schedule);
        app.register_type::<GroupMember>()
            .register_type::<GroupMembers>()
            .add_message::<GroupMove>()
            .init_resource::<GroupScratch>()
            .init_resource::<order::GroupOrders>()
            .add_observer(leave_on_arrival)
            .add_observer(leave_on_own_order)
            .add_observer(stop_when_taken_out)
            .add_systems(
                self.schedule,
                (
                    (retire_groups, order::start_group_moves)
                        .chain()
                        .in_set(FrontierSystems::Orders),
                    splice::splice_groups.in_set(FrontierSystems::GroupRoutes),
                ),
            );
    }
}

/// `FrontierSystems::Orders`: despawns groups no unit is left in (Bevy
/// removes [`GroupMembers`] with the last member).
pub(crate) fn retire_groups(
    mut groups: Query<(Entity, &mut SharedRoute), Without<GroupMembers>>,
    mut scratch: ResMut<GroupScratch>,
    mut commands: Commands,
) {
    for (entity, mut group) in &mut groups {
        if let Stage::Splicing(splice) = std::mem::replace(&mut group.stage, Stage::Done) {
            scratch_back(*splice, &mut scratch.0);
        }
        commands.entity(entity).despawn();
    }
}

/// A unit that arrived is no longer in its group.
fn leave_on_arrival(
    arrived: On<UnitArrived>,
    members: Query<(), With<GroupMember>>,
    mut commands: Commands,
) {
    if members.contains(arrived.entity) {
        commands.entity(arrived.entity).try_remove::<GroupMember>();
    }
}

/// A unit the game takes out of its group order (its [`GroupMember`]
/// removed) stops where it stands, as a unit ordered alone does when its
/// `PathRequest` is removed; the group goes on without it. One that left
/// because it arrived (it stands already) or got an order of its own (it
/// holds a `PathRequest`) is left as it is.
fn stop_when_taken_out(
    left: On<Remove, GroupMember>,
    mut units: Query<&mut Steering, (With<Mover>, Without<PathRequest>)>,
) {
    if let Ok(mut steering) = units.get_mut(left.entity) {
        steer(&mut steering, Steer::Stop);
    }
}

/// A unit given an order of its own (a [`PathRequest`]) leaves its group.
fn leave_on_own_order(
    order: On<Insert, PathRequest>,
    members: Query<(), With<GroupMember>>,
    mut commands: Commands,
) {
    if members.contains(order.entity) {
        commands.entity(order.entity).try_remove::<GroupMember>();
    }
}
