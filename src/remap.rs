//! Entities in the plugin's own state, renamed to the ids they have in
//! another world: a loaded save's (`crate::save`), where the game's units
//! were spawned again under new ids.
//!
//! Bevy's [`MapEntities`](bevy::ecs::entity::MapEntities) does this for
//! components; the plugin's state also holds entities inside tuples and
//! as map keys, which that trait cannot be implemented for, so the crate
//! has its own, with the containers it uses. A type's impl lists the
//! fields that hold entities ([`remap_fields!`]); a type without any says
//! so ([`no_entities!`]). Maps keyed by entities are built again under
//! their new keys: nothing the plugin decides follows their order (see
//! "The order things are done in" in `docs/architecture.md`).

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hash};

use bevy::ecs::entity::{EntityHashMap, EntityHashSet};
use bevy::prelude::*;

/// Entities held in a value, renamed by a mapping.
pub(crate) trait Remap {
    /// Renames every entity `self` holds by `to`.
    fn remap(&mut self, to: &mut dyn FnMut(Entity) -> Entity);
}

impl Remap for Entity {
    fn remap(&mut self, to: &mut dyn FnMut(Entity) -> Entity) {
        *self = to(*self);
    }
}

/// Implements [`Remap`] for types that hold no entity.
macro_rules! no_entities {
    ($($ty:ty),* $(,)?) => {
        $(impl $crate::remap::Remap for $ty {
            #[inline]
            fn remap(&mut self, _: &mut dyn FnMut(bevy::prelude::Entity) -> bevy::prelude::Entity) {}
        })*
    };
}
pub(crate) use no_entities;

/// Implements [`Remap`] for a struct by renaming the entities in the
/// fields listed (the others hold none).
macro_rules! remap_fields {
    ($ty:ty { $($field:tt),* $(,)? }) => {
        impl $crate::remap::Remap for $ty {
            fn remap(&mut self, to: &mut dyn FnMut(bevy::prelude::Entity) -> bevy::prelude::Entity) {
                $($crate::remap::Remap::remap(&mut self.$field, to);)*
            }
        }
    };
}
pub(crate) use remap_fields;

no_entities!(
    u8,
    u16,
    u32,
    u64,
    i32,
    i128,
    std::cmp::Reverse<u64>,
    crate::core::Cell,
    crate::core::UnitKind,
    crate::core::ClassId,
);

impl<T: Remap> Remap for Option<T> {
    fn remap(&mut self, to: &mut dyn FnMut(Entity) -> Entity) {
        if let Some(value) = self {
            value.remap(to);
        }
    }
}

impl<T: Remap + ?Sized> Remap for Box<T> {
    fn remap(&mut self, to: &mut dyn FnMut(Entity) -> Entity) {
        (**self).remap(to);
    }
}

impl<T: Remap> Remap for Vec<T> {
    fn remap(&mut self, to: &mut dyn FnMut(Entity) -> Entity) {
        self.iter_mut().for_each(|value| value.remap(to));
    }
}

impl<T: Remap, const N: usize> Remap for [T; N] {
    fn remap(&mut self, to: &mut dyn FnMut(Entity) -> Entity) {
        self.iter_mut().for_each(|value| value.remap(to));
    }
}

macro_rules! tuples {
    ($(($($name:ident),+)),*) => {
        $(impl<$($name: Remap),+> Remap for ($($name,)+) {
            #[allow(non_snake_case)]
            fn remap(&mut self, to: &mut dyn FnMut(Entity) -> Entity) {
                let ($($name,)+) = self;
                $($name.remap(to);)+
            }
        })*
    };
}
tuples!((A, B), (A, B, C), (A, B, C, D));

/// The pairs of a map, renamed and gathered again.
fn remapped<K: Remap, V: Remap, M: IntoIterator<Item = (K, V)> + FromIterator<(K, V)>>(
    map: M,
    to: &mut dyn FnMut(Entity) -> Entity,
) -> M {
    map.into_iter()
        .map(|(mut key, mut value)| {
            key.remap(to);
            value.remap(to);
            (key, value)
        })
        .collect()
}

impl<K: Remap + Eq + Hash, V: Remap, S: BuildHasher + Default> Remap for HashMap<K, V, S> {
    fn remap(&mut self, to: &mut dyn FnMut(Entity) -> Entity) {
        *self = remapped(std::mem::take(self), to);
    }
}

impl<K: Remap + Eq + Hash, V: Remap, S: BuildHasher + Default> Remap
    for bevy::platform::collections::HashMap<K, V, S>
{
    fn remap(&mut self, to: &mut dyn FnMut(Entity) -> Entity) {
        *self = remapped(std::mem::take(self), to);
    }
}

impl<K: Remap + Ord, V: Remap> Remap for BTreeMap<K, V> {
    fn remap(&mut self, to: &mut dyn FnMut(Entity) -> Entity) {
        *self = remapped(std::mem::take(self), to);
    }
}

impl<V: Remap> Remap for EntityHashMap<V> {
    fn remap(&mut self, to: &mut dyn FnMut(Entity) -> Entity) {
        *self = remapped(std::mem::take(self), to);
    }
}

impl Remap for EntityHashSet {
    fn remap(&mut self, to: &mut dyn FnMut(Entity) -> Entity) {
        *self = std::mem::take(self).into_iter().map(to).collect();
    }
}
