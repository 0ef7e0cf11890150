//! Movement classes: units that walk different ground on one map.
//!
//! A grid without classes holds one cost per cell, read alike by every
//! unit. A game that registers [`MovementClasses`] on a grid
//! ([`NavGrid::set_classes`](super::NavGrid::set_classes)) makes the byte
//! each cell holds its *terrain type* instead (a small index the game
//! names: open, road, swamp, woods, shallow water, deep water, …), and
//! each class reads its cost from its own table, as a Detour query filter
//! reads an area's cost, but known up front so that everything the grid
//! precomputes (regions, clearance, jump point bitmaps, the coarse graph)
//! is precomputed per class. Terrain type 0 is a wall for every class.
//!
//! A unit is searched for as a [`UnitKind`]: its class and its size. Class
//! 0, the first registered, is the grid's own: [`NavGrid::cost`](super::NavGrid::cost),
//! [`NavGrid::size_class`](super::NavGrid::size_class) and every query that
//! names no class answer for it. Other classes' layers are built the
//! first time a unit of that class asks, so classes nobody uses cost
//! nothing.
//!
//! ```
//! use bevy_frontier::core::{Cell, MovementClasses, NavGrid, Terrain, UnitKind};
//!
//! // Terrain types the game names.
//! const OPEN: Terrain = Terrain(1);
//! const WATER: Terrain = Terrain(2);
//! // Registering a class gives back its typed id.
//! let mut classes = MovementClasses::new();
//! let _foot = classes.add("foot", [(OPEN, 1)]);
//! let boat = classes.add("boat", [(WATER, 1)]);
//! let hover = classes.add("hover", [(OPEN, 1), (WATER, 1)]);
//!
//! // A river down the middle of open ground.
//! let mut grid = NavGrid::new(9, 9).unwrap();
//! grid.set_classes(classes).unwrap();
//! grid.fill_terrain(Cell::new(0, 0), Cell::new(8, 8), OPEN).unwrap();
//! grid.fill_terrain(Cell::new(4, 0), Cell::new(4, 8), WATER).unwrap();
//!
//! // Infantry cannot cross; a boat sails it; a hovercraft goes anywhere.
//! assert!(!grid.connected(Cell::new(0, 0), Cell::new(8, 0)));
//! let river = grid.view(UnitKind::new(boat, 1)).unwrap();
//! assert!(river.connected(Cell::new(4, 0), Cell::new(4, 8)));
//! assert!(!river.is_walkable(Cell::new(0, 0)));
//! let hover = grid.view(UnitKind::new(hover, 1)).unwrap();
//! assert!(hover.connected(Cell::new(0, 0), Cell::new(8, 8)));
//! ```
//!
//! A terrain type is not a class: where a class is meant, a terrain
//! constant (or a bare number) does not compile.
//!
//! ```compile_fail
//! use bevy_frontier::core::{Terrain, UnitKind};
//!
//! const WATER: Terrain = Terrain(2);
//! let boat = UnitKind::new(WATER, 1);
//! ```

use std::fmt;
use std::sync::{Arc, OnceLock};

use super::layer::{Layer, MAX_UNIT_SIZE, anchors_over};

/// The most classes a grid holds.
pub const MAX_CLASSES: usize = 32;

/// A terrain type: what each cell of a grid with [`MovementClasses`]
/// holds, and what each class reads its cost from (a small index the game
/// names: `const SWAMP: Terrain = Terrain(3);`). [`Terrain::WALL`] is a
/// wall for every class; every cell of a new grid is [`Terrain::PLAIN`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct Terrain(pub u8);

impl Terrain {
    /// Impassable for every class.
    pub const WALL: Terrain = Terrain(0);
    /// What every cell of a new grid holds (cost 1 before classes are
    /// registered).
    pub const PLAIN: Terrain = Terrain(1);
}

impl fmt::Display for Terrain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "terrain {}", self.0)
    }
}

/// A movement class of a grid's [`MovementClasses`], as
/// [`MovementClasses::add`] returns it: not a number a terrain type could
/// be mistaken for. [`ClassId::DEFAULT`] (the first class registered) is
/// the grid's own, and the only class of a grid without any.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct ClassId(u8);

impl ClassId {
    /// The first class registered: the grid's own.
    pub const DEFAULT: ClassId = ClassId(0);

    /// The class registered `index`th (from 0), for a game that stores or
    /// sends classes as numbers (a save file, a lockstep order). A class
    /// the grid does not have is answered
    /// [`UnknownClass`](crate::pathfinding::InvalidReason::UnknownClass).
    pub const fn from_index(index: u8) -> Self {
        Self(index)
    }

    /// Its index among the classes, in the order of registration.
    pub const fn index(self) -> u8 {
        self.0
    }

    /// Its row in the tables kept per class (its index, as a `usize`).
    pub(crate) const fn table_row(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for ClassId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "class {}", self.0)
    }
}

/// What a unit is, for the grid: its movement class (one of the grid's
/// [`MovementClasses`]; [`ClassId::DEFAULT`] on a grid without any) and
/// its size (the side of its square footprint, in cells).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct UnitKind {
    /// The movement class.
    pub class: ClassId,
    /// The footprint's side, in cells (1 to
    /// [`MAX_UNIT_SIZE`]).
    pub size: u8,
}

impl UnitKind {
    /// A unit of `class` and `size`.
    pub const fn new(class: ClassId, size: u8) -> Self {
        Self { class, size }
    }

    /// A unit of the default class and `size`.
    pub const fn sized(size: u8) -> Self {
        Self {
            class: ClassId::DEFAULT,
            size,
        }
    }
}

impl Default for UnitKind {
    fn default() -> Self {
        Self::sized(1)
    }
}

impl fmt::Display for UnitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "class {} size {}", self.class.0, self.size)
    }
}

/// One class's costs: a cost per terrain type, 0 where it may not go.
pub(super) type CostTable = [u8; 256];

/// The movement classes a game registers on a grid: each a name and a
/// table from [`Terrain`] type to cost (1 plain, 2..=255 that many times
/// slower, absent impassable). [`MovementClasses::add`] returns each
/// class's [`ClassId`], in the order of registration; the first is the
/// grid's default ([`ClassId::DEFAULT`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MovementClasses {
    names: Vec<String>,
    tables: Vec<CostTable>,
}

impl Default for MovementClasses {
    fn default() -> Self {
        Self::new()
    }
}

/// Why classes could not be registered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClassError {
    /// No class was registered.
    Empty,
    /// More than [`MAX_CLASSES`] classes.
    TooMany(usize),
}

impl fmt::Display for ClassError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClassError::Empty => write!(f, "no movement class registered"),
            ClassError::TooMany(n) => {
                write!(f, "{n} movement classes, at most {MAX_CLASSES} allowed")
            }
        }
    }
}

impl std::error::Error for ClassError {}

impl MovementClasses {
    /// No classes yet.
    pub fn new() -> Self {
        Self {
            names: Vec::new(),
            tables: Vec::new(),
        }
    }

    /// These classes and one more, as [`MovementClasses::add`] registers
    /// it: a chain of registrations, whose ids [`MovementClasses::id`]
    /// finds by name.
    pub fn class(mut self, name: &str, costs: impl IntoIterator<Item = (Terrain, u8)>) -> Self {
        self.add(name, costs);
        self
    }

    /// Registers one more class, `name`, which may enter the terrain types
    /// listed at the costs given (a cost of 0, and every type not listed,
    /// is impassable; [`Terrain::WALL`] is a wall whatever it says), and
    /// returns its id: what a unit's
    /// [`MovementClass`](crate::pathfinding::MovementClass) holds.
    pub fn add(&mut self, name: &str, costs: impl IntoIterator<Item = (Terrain, u8)>) -> ClassId {
        let mut table = [0u8; 256];
        for (terrain, cost) in costs {
            table[terrain.0 as usize] = cost;
        }
        table[0] = 0;
        self.names.push(name.to_owned());
        self.tables.push(table);
        ClassId((self.names.len() - 1).min(u8::MAX as usize) as u8)
    }

    /// How many classes there are.
    pub fn len(&self) -> usize {
        self.tables.len()
    }

    /// Whether none is registered.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// The id of the class called `name`.
    pub fn id(&self, name: &str) -> Option<ClassId> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| ClassId(i as u8))
    }

    /// The name of class `id`.
    pub fn name(&self, id: ClassId) -> Option<&str> {
        self.names.get(id.table_row()).map(String::as_str)
    }

    /// The ids of the classes, in the order of registration.
    pub fn ids(&self) -> impl Iterator<Item = ClassId> + '_ {
        (0..self.names.len()).map(|i| ClassId(i as u8))
    }

    /// What terrain type `terrain` costs class `class` (0: impassable),
    /// `None` for a class not registered.
    pub fn cost(&self, class: ClassId, terrain: Terrain) -> Option<u8> {
        self.tables
            .get(class.table_row())
            .map(|t| t[terrain.0 as usize])
    }

    pub(super) fn checked(self) -> Result<Arc<Self>, ClassError> {
        match self.len() {
            0 => Err(ClassError::Empty),
            n if n > MAX_CLASSES => Err(ClassError::TooMany(n)),
            _ => Ok(Arc::new(self)),
        }
    }

    /// Each class's name and cost per terrain type, in order.
    #[cfg(feature = "serialize")]
    pub(crate) fn tables(&self) -> impl Iterator<Item = (&str, &CostTable)> {
        self.names.iter().map(String::as_str).zip(&self.tables)
    }

    pub(super) fn table(&self, class: u8) -> Option<&CostTable> {
        self.tables.get(class as usize)
    }
}

/// A grid's classes: the terrain each cell holds, the classes' tables, and
/// the layers of every class but the default (which is the grid's own),
/// one per size, each built at its first use.
#[derive(Clone, Debug)]
pub(super) struct Classes {
    pub(super) table: Arc<MovementClasses>,
    /// The terrain type of each cell, row by row.
    pub(super) terrain: Vec<u8>,
    /// Classes `1..`, each sizes `1..=MAX_UNIT_SIZE`.
    layers: Vec<[OnceLock<Layer>; MAX_UNIT_SIZE as usize]>,
}

impl Classes {
    pub(super) fn new(table: Arc<MovementClasses>, terrain: Vec<u8>) -> Self {
        let layers = (1..table.len()).map(|_| Default::default()).collect();
        Self {
            table,
            terrain,
            layers,
        }
    }

    /// Class 0's cost of terrain type `terrain`.
    pub(super) fn default_cost(&self, terrain: u8) -> u8 {
        self.table.tables[0][terrain as usize]
    }

    /// The layer of `class` (1 or more, registered) and `size` if it is
    /// built, without building it.
    pub(super) fn built(&self, class: u8, size: u8) -> Option<&Layer> {
        self.layers[class as usize - 1][size as usize - 1].get()
    }

    /// The layer of `class` (1 or more, registered) and `size`, built now
    /// if it is not yet.
    pub(super) fn layer(&self, width: u32, height: u32, class: u8, size: u8) -> &Layer {
        let table = &self.table.tables[class as usize];
        self.layers[class as usize - 1][size as usize - 1].get_or_init(|| {
            if size == 1 {
                // A footprint of one cell: its terrain's cost (0, a wall,
                // where the class may not enter).
                let costs = self.terrain.iter().map(|&t| table[t as usize]).collect();
                return Layer::new(width, height, costs);
            }
            let mut costs = vec![0u8; self.terrain.len()];
            for y in 0..height {
                for x in 0..width {
                    costs[(y * width + x) as usize] =
                        footprint(width, height, &self.terrain, table, size, x, y);
                }
            }
            Layer::new(width, height, costs)
        })
    }

    /// Repairs every layer built so far after cell `(x, y)` changed from
    /// terrain `old` (the new type is in `terrain` already): the anchors
    /// whose footprint covers it, one at a time so that regions stay
    /// exact, in the classes that see the change.
    pub(super) fn repair(&mut self, width: u32, height: u32, x: u32, y: u32, old: u8) {
        let new = self.terrain[(y * width + x) as usize];
        for (i, sizes) in self.layers.iter_mut().enumerate() {
            let table = &self.table.tables[i + 1];
            if table[old as usize] == table[new as usize] {
                continue;
            }
            for (s, layer) in sizes.iter_mut().enumerate() {
                let Some(layer) = layer.get_mut() else {
                    continue;
                };
                let size = s as u8 + 1;
                for (ax, ay) in anchors_over(x, y, size) {
                    let cost = footprint(width, height, &self.terrain, table, size, ax, ay);
                    layer.write(width, height, (ay * width + ax) as usize, cost);
                }
            }
        }
    }

    /// Bytes held: the terrain and every layer built.
    pub(super) fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + std::mem::size_of::<MovementClasses>()
            + self.table.tables.capacity() * std::mem::size_of::<CostTable>()
            + self.terrain.capacity()
            + self.layers.capacity()
                * std::mem::size_of::<[OnceLock<Layer>; MAX_UNIT_SIZE as usize]>()
            + self.layer_bytes()
    }

    /// Bytes held by the layers built.
    pub(super) fn layer_bytes(&self) -> usize {
        self.layers
            .iter()
            .flatten()
            .filter_map(OnceLock::get)
            .map(Layer::memory_bytes)
            .sum()
    }
}

/// What anchor `(x, y)` costs a unit of `size` whose class reads `table`:
/// the dearest cell of its footprint, or a wall where a cell of it is
/// impassable or off the grid.
#[inline]
fn footprint(
    width: u32,
    height: u32,
    terrain: &[u8],
    table: &CostTable,
    size: u8,
    x: u32,
    y: u32,
) -> u8 {
    let size = size as u32;
    if x + size > width || y + size > height {
        return 0;
    }
    let mut dearest = 0;
    for row in y..y + size {
        let start = (row * width + x) as usize;
        for &t in &terrain[start..start + size as usize] {
            let cost = table[t as usize];
            if cost == 0 {
                return 0;
            }
            dearest = dearest.max(cost);
        }
    }
    dearest
}
