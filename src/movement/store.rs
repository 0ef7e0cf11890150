//! The crowd's movers at stable places: each [`Mover`](super::Mover) gets
//! a slot when it joins (the lowest free one) and keeps it until it stops
//! being a mover. The crowd's arrays (avoidance's snapshot, its plans, the
//! neighbour lists) are indexed by slot, so a stage reads and writes a
//! mover's data at the same index every frame, whatever order the ECS
//! stores the movers in (that order follows archetypes and changes when a
//! marker such as `Arrived` is inserted) and whatever their entity ids.
//!
//! Slots are handed out as the movers' components are added, that is in
//! the order the game's commands are applied: two runs of one game give
//! every mover the same slot.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;

use crate::order::stamp_joined;

/// A mover's place in the crowd's arrays ([`Slots`]); `Slot::NONE` until it
/// joins (and for a mover in a world without the movement plugin).
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Slot(u32);

impl Default for Slot {
    fn default() -> Self {
        Self::NONE
    }
}

impl Slot {
    /// No slot.
    pub(crate) const NONE: Self = Slot(u32::MAX);

    /// The slot as an index into the crowd's arrays, if the mover has one.
    pub(crate) fn index(self) -> Option<usize> {
        (self != Self::NONE).then_some(self.0 as usize)
    }
}

/// Which mover holds each slot, and the free slots, lowest first.
#[derive(Resource, Default, Debug)]
pub(crate) struct Slots {
    holders: Vec<Option<Entity>>,
    free: BinaryHeap<Reverse<u32>>,
    /// Slots held.
    pub(crate) held: usize,
}

impl Slots {
    /// Slots in use or free (the crowd's arrays are this long).
    pub(crate) fn len(&self) -> usize {
        self.holders.len()
    }

    /// The mover in each slot (`None` for a free one), in slot order.
    pub(crate) fn holders(&self) -> &[Option<Entity>] {
        &self.holders
    }

    pub(crate) fn take(&mut self, mover: Entity) -> Slot {
        self.held += 1;
        match self.free.pop() {
            Some(Reverse(slot)) => {
                self.holders[slot as usize] = Some(mover);
                Slot(slot)
            }
            None => {
                self.holders.push(Some(mover));
                Slot(self.holders.len() as u32 - 1)
            }
        }
    }

    fn give_back(&mut self, slot: Slot, mover: Entity) {
        if let Some(at) = slot.index()
            && self.holders.get(at) == Some(&Some(mover))
        {
            self.held -= 1;
            self.holders[at] = None;
            self.free.push(Reverse(slot.0));
        }
    }
}

/// A mover joined: stamped (its [`Ordinal`](crate::order::Ordinal)) and
/// given the lowest free slot.
pub(crate) fn join_crowd(mut world: DeferredWorld, context: HookContext) {
    stamp_joined(world.reborrow(), context);
    let Some(mut slots) = world.get_resource_mut::<Slots>() else {
        return;
    };
    let slot = slots.take(context.entity);
    if let Some(mut held) = world.get_mut::<Slot>(context.entity) {
        *held = slot;
    }
}

/// A mover left (its `Mover` was removed, or it was despawned): its slot
/// is free again.
pub(crate) fn leave_crowd(mut world: DeferredWorld, context: HookContext) {
    let Some(slot) = world.get::<Slot>(context.entity).copied() else {
        return;
    };
    if let Some(mut slots) = world.get_resource_mut::<Slots>() {
        slots.give_back(slot, context.entity);
    }
    if let Some(mut held) = world.get_mut::<Slot>(context.entity) {
        *held = Slot::NONE;
    }
}
