//! Rest places: the cells standing units hold, so that no two units come to
//! rest on one cell.

use std::collections::VecDeque;

use bevy::platform::collections::{HashMap, HashSet};

use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;

use crate::core::Cell;
use crate::maps::MapView;
use crate::movement::tuning::SEARCH_LIMIT;

/// The cells each standing unit holds (its footprint's cells, on its map).
#[derive(Resource, Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct RestingPlaces {
    /// The unit resting on each cell of each map.
    cells: HashMap<(Entity, Cell), Entity>,
    /// The map and cells each unit holds.
    held: EntityHashMap<(Entity, Vec<Cell>)>,
    /// Units that stopped being movers (or were despawned) since `prefer`
    /// last ran, in that order: their cells are given up then.
    pub(crate) gone: Vec<Entity>,
}

/// A unit stopped being a mover, or was despawned: `prefer` gives up its
/// rest place on its next run (kept here, so a save holds those not yet
/// read).
pub(crate) fn note_gone_mover(
    gone: On<Remove, super::state::Mover>,
    mut places: ResMut<RestingPlaces>,
) {
    places.gone.push(gone.entity);
}

impl RestingPlaces {
    /// Whether `unit` holds cells.
    pub(crate) fn holds(&self, unit: Entity) -> bool {
        self.held.contains_key(&unit)
    }

    /// Gives up the cells `unit` holds.
    pub(crate) fn release(&mut self, unit: Entity) {
        let Some((map, cells)) = self.held.remove(&unit) else {
            return;
        };
        for cell in cells {
            if self.cells.get(&(map, cell)) == Some(&unit) {
                self.cells.remove(&(map, cell));
            }
        }
    }

    /// Whether the footprint anchored at `anchor` holds no cell another
    /// unit rests on.
    fn is_free(&self, map: Entity, anchor: Cell, size: u8, unit: Entity) -> bool {
        footprint(anchor, size).all(|cell| {
            self.cells
                .get(&(map, cell))
                .is_none_or(|&holder| holder == unit)
        })
    }

    /// Whether another unit rests on any cell of the footprint of the unit
    /// `view` is for, centred at `position`.
    pub(crate) fn taken(&self, unit: Entity, map: Entity, view: &MapView, position: Vec2) -> bool {
        view.cell_at(position)
            .is_some_and(|anchor| !self.is_free(map, anchor, view.size(), unit))
    }

    fn claim(&mut self, unit: Entity, map: Entity, anchor: Cell, size: u8) {
        let cells: Vec<Cell> = footprint(anchor, size).collect();
        for &cell in &cells {
            self.cells.insert((map, cell), unit);
        }
        self.held.insert(unit, (map, cells));
    }

    /// Where `unit`, standing at `position`, comes to rest: the centre of
    /// its cell (of its footprint, for a unit bigger than a cell), if no
    /// other unit rests on its cells (which it then holds), or else of the
    /// nearest cell where it fits and no other rests, breadth-first from
    /// where it is. Centres one cell apart leave bodies of the default
    /// radius a tenth of a cell between them. Where no such place is near,
    /// it rests where it stands without holding a cell.
    pub(crate) fn settle(
        &mut self,
        unit: Entity,
        map: Entity,
        view: &MapView,
        position: Vec2,
    ) -> Vec2 {
        self.release(unit);
        let Some(anchor) = view.cell_at(position) else {
            return position;
        };
        let size = view.size();
        if self.is_free(map, anchor, size, unit) {
            self.claim(unit, map, anchor, size);
            return view.cell_to_world(anchor);
        }
        let size_class = view.size_class();
        let Some(first) = size_class
            .is_walkable(anchor)
            .then_some(anchor)
            .or_else(|| size_class.nearest_walkable((anchor.x as i64, anchor.y as i64), None))
        else {
            return position;
        };
        let mut queue = VecDeque::from([first]);
        let mut seen = HashSet::from([first]);
        while let Some(at) = queue.pop_front() {
            if self.is_free(map, at, size, unit) {
                self.claim(unit, map, at, size);
                return view.cell_to_world(at);
            }
            if seen.len() >= SEARCH_LIMIT {
                break;
            }
            for (next, _) in size_class.neighbors(at) {
                if seen.insert(next) {
                    queue.push_back(next);
                }
            }
        }
        position
    }
}

/// The cells of the `size × size` footprint anchored at `anchor`.
fn footprint(anchor: Cell, size: u8) -> impl Iterator<Item = Cell> {
    let size = size.max(1) as u32;
    (0..size).flat_map(move |dy| (0..size).map(move |dx| Cell::new(anchor.x + dx, anchor.y + dy)))
}

#[cfg(feature = "serialize")]
crate::remap::remap_fields!(RestingPlaces { cells, held, gone });
