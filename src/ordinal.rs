//! The order the game gave things in, which every choice among equals
//! follows: never entity ids (Bevy reuses them, so two clients of one
//! lockstep game that spawned a menu or an overlay apart number their
//! units differently) and never the order a query visits entities in
//! (archetypes are found through a hash map, so that order follows
//! everything spawned before).
//!
//! Every unit with a [`PathRequest`](crate::pathfinding::PathRequest) or a
//! [`Mover`](crate::movement::Mover) gets an [`Ordinal`]: stamped from a
//! counter the world keeps when the unit first gets either (its place in
//! the crowd), and again each time a request is inserted (its place among
//! the requests of a frame). Component hooks stamp them, so the order is
//! the order the game's commands were applied in.

use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;

/// The world's counter the stamps are taken from.
#[derive(Resource, Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct OrdinalCounter {
    count: u64,
    /// Deals the places units join in out in another order (0: none).
    shuffle: u64,
}

/// Deals the crowd's places ([`Ordinal::joined`]) out in another order, a
/// fixed shuffle of the order the units joined (`salt` 0: none), for units
/// that join from now on. For tests that the crowd's rules hold whatever
/// order it visits its units in; a game has no use for it.
#[doc(hidden)]
pub fn shuffle_crowd_ranks(world: &mut World, salt: u64) {
    world.get_resource_or_init::<OrdinalCounter>().shuffle = salt;
}

/// Where a unit stands in the order the game gave its units and orders in
/// (see the [module](self)). The plugin adds it with a `PathRequest` or a
/// `Mover` and stamps it; a game only reads it.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct Ordinal {
    joined: u64,
    asked: u64,
}

impl Ordinal {
    /// When the unit first got a request or a mover: its place in the
    /// crowd, which it keeps for life.
    pub fn joined(&self) -> u64 {
        self.joined
    }

    /// Its rank in the crowd, lowest first: the unit that joined last
    /// comes first, and of two the one that joined first yields where a
    /// rule needs one to. (Bevy's entities compare newest first, so this
    /// is the order the crowd went by when it sorted its units by entity:
    /// the crowd behaves as it did, now whatever the ids.)
    pub fn crowd_rank(&self) -> u64 {
        u64::MAX - self.joined
    }

    /// When its request was last inserted: its place among the requests
    /// that arrive in one frame. A request changed in place (through
    /// `Mut<PathRequest>`) keeps the stamp of its insertion: the order
    /// the game's queries visit entities in is not one the game controls.
    pub fn asked(&self) -> u64 {
        self.asked
    }
}

/// The next stamp of `world`'s counter, and the place it gives a unit
/// joining now (the same unless shuffled); 0 without the plugin's counter.
fn next(world: &mut DeferredWorld) -> (u64, u64) {
    world
        .get_resource_mut::<OrdinalCounter>()
        .map_or((0, 0), |mut counter| {
            counter.count += 1;
            let place = match counter.shuffle {
                0 => counter.count,
                // An odd multiplier: one place per stamp, 0 for none a
                // game reaches.
                salt => counter
                    .count
                    .wrapping_add(salt)
                    .wrapping_mul(0x9E37_79B9_7F4A_7C15),
            };
            (counter.count, place)
        })
}

/// A unit joined (its request or its mover was added): stamped once.
pub(crate) fn stamp_joined(mut world: DeferredWorld, context: HookContext) {
    let (_, place) = next(&mut world);
    if let Some(mut ordinal) = world.get_mut::<Ordinal>(context.entity)
        && ordinal.joined == 0
    {
        ordinal.joined = place;
    }
}

/// A request was inserted: stamped each time (and the unit joins if it
/// had not).
pub(crate) fn stamp_asked(mut world: DeferredWorld, context: HookContext) {
    let (stamp, place) = next(&mut world);
    if let Some(mut ordinal) = world.get_mut::<Ordinal>(context.entity) {
        ordinal.asked = stamp;
        if ordinal.joined == 0 {
            ordinal.joined = place;
        }
    }
}
