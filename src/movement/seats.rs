//! The crowd's movers at stable places: each [`Mover`](super::Mover) gets
//! a seat when it joins (the lowest free one) and keeps it until it stops
//! being a mover. The crowd's arrays (avoidance's snapshot, its plans, the
//! neighbour lists) are indexed by seat, so a stage reads and writes a
//! mover's data at the same index every frame, whatever order the ECS
//! stores the movers in (that order follows archetypes and changes when a
//! marker such as `Arrived` is inserted) and whatever their entity ids.
//!
//! Seats are handed out as the movers' components are added, that is in
//! the order the game's commands are applied: two runs of one game give
//! every mover the same seat.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;

use crate::ordinal::stamp_joined;

/// A mover's place in the crowd's arrays ([`Seats`]); `Seat::NONE` until it
/// joins (and for a mover in a world without the movement plugin).
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct Seat(u32);

impl Default for Seat {
    fn default() -> Self {
        Self::NONE
    }
}

impl Seat {
    /// No seat.
    pub(crate) const NONE: Self = Seat(u32::MAX);

    /// The seat as an index into the crowd's arrays, if the mover has one.
    pub(crate) fn index(self) -> Option<usize> {
        (self != Self::NONE).then_some(self.0 as usize)
    }
}

/// Which mover holds each seat, and the free seats, lowest first.
#[derive(Resource, Default, Debug)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct Seats {
    holders: Vec<Option<Entity>>,
    free: BinaryHeap<Reverse<u32>>,
    /// Seats held.
    pub(crate) held: usize,
}

impl Seats {
    /// Seats in use or free (the crowd's arrays are this long).
    pub(crate) fn len(&self) -> usize {
        self.holders.len()
    }

    /// The mover in each seat (`None` for a free one), in seat order.
    pub(crate) fn holders(&self) -> &[Option<Entity>] {
        &self.holders
    }

    pub(crate) fn take(&mut self, mover: Entity) -> Seat {
        self.held += 1;
        match self.free.pop() {
            Some(Reverse(seat)) => {
                self.holders[seat as usize] = Some(mover);
                Seat(seat)
            }
            None => {
                self.holders.push(Some(mover));
                Seat(self.holders.len() as u32 - 1)
            }
        }
    }

    fn give_back(&mut self, seat: Seat, mover: Entity) {
        if let Some(at) = seat.index()
            && self.holders.get(at) == Some(&Some(mover))
        {
            self.held -= 1;
            self.holders[at] = None;
            self.free.push(Reverse(seat.0));
        }
    }
}

/// A mover joined: stamped (its [`Ordinal`](crate::ordinal::Ordinal)) and
/// given the lowest free seat.
pub(crate) fn join_crowd(mut world: DeferredWorld, context: HookContext) {
    stamp_joined(world.reborrow(), context);
    let Some(mut seats) = world.get_resource_mut::<Seats>() else {
        return;
    };
    let seat = seats.take(context.entity);
    if let Some(mut held) = world.get_mut::<Seat>(context.entity) {
        *held = seat;
    }
}

/// A mover left (its `Mover` was removed, or it was despawned): its seat
/// is free again.
pub(crate) fn leave_crowd(mut world: DeferredWorld, context: HookContext) {
    let Some(seat) = world.get::<Seat>(context.entity).copied() else {
        return;
    };
    if let Some(mut seats) = world.get_resource_mut::<Seats>() {
        seats.give_back(seat, context.entity);
    }
    if let Some(mut held) = world.get_mut::<Seat>(context.entity) {
        *held = Seat::NONE;
    }
}

#[cfg(feature = "serialize")]
crate::remap::remap_fields!(Seats { holders });
