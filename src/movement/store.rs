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
use bevy::tasks::{ComputeTaskPool, ParallelSlice, ParallelSliceMut, TaskPool};

use crate::order::{Ordinal, stamp_joined};

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
    held: usize,
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

    fn take(&mut self, mover: Entity) -> Slot {
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

/// `CrowdSystems::Orders`, first: movers that joined before the movement
/// plugin was added (so no slot was there to give) get theirs, in the
/// order they joined. Costs a count a frame otherwise.
pub(crate) fn seat_strays(
    mut movers: Query<(Entity, &Ordinal, &mut Slot), With<super::Mover>>,
    mut slots: ResMut<Slots>,
) {
    if movers.iter().len() == slots.held {
        return;
    }
    let mut strays: Vec<(u64, Entity)> = movers
        .iter()
        .filter(|(_, _, slot)| **slot == Slot::NONE)
        .map(|(entity, ordinal, _)| (ordinal.joined(), entity))
        .collect();
    strays.sort_unstable();
    for (_, mover) in strays {
        let taken = slots.take(mover);
        if let Ok((_, _, mut slot)) = movers.get_mut(mover) {
            *slot = taken;
        }
    }
}

/// The length of the chunks a pass over `len` items is split into, at
/// least `least` each, for up to `threads` threads; `None` when the pass
/// runs whole on this thread (one thread, or too few items to be worth a
/// hand-out to the pool).
fn chunk_len(len: usize, threads: usize, least: usize) -> Option<usize> {
    (threads > 1 && len > least).then(|| len.div_ceil(threads.saturating_mul(2)).max(least))
}

/// Runs `work` over `items` in chunks (see [`chunk_len`]) on the compute
/// task pool: the results in the items' order, the same for any number of
/// threads as long as `work` reads only what it is given.
pub(crate) fn in_chunks<T: Sync, R: Send + 'static>(
    items: &[T],
    threads: usize,
    least: usize,
    work: impl Fn(&[T]) -> R + Send + Sync,
) -> Vec<R> {
    let Some(chunk) = chunk_len(items.len(), threads, least) else {
        return vec![work(items)];
    };
    let pool = ComputeTaskPool::get_or_init(TaskPool::default);
    items.par_chunk_map(pool, chunk, |_, part| work(part))
}

/// Runs `work` over `items` (one of the crowd's arrays) in chunks (see
/// [`chunk_len`]) on the compute task pool, in one dispatch: each call
/// gets the index of its chunk's first item and the chunk to write. The
/// result is the same for any number of threads when `work` writes only
/// its chunk.
pub(crate) fn each_chunk_mut<T: Send>(
    mut items: &mut [T],
    threads: usize,
    least: usize,
    work: impl Fn(usize, &mut [T]) + Send + Sync,
) {
    let Some(chunk) = chunk_len(items.len(), threads, least) else {
        work(0, items);
        return;
    };
    let pool = ComputeTaskPool::get_or_init(TaskPool::default);
    items.par_chunk_map_mut(pool, chunk, |k, part| work(k * chunk, part));
}
