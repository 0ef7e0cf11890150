//! The navigation grid: which cells can be walked, what they cost, and which
//! cells can reach each other.
//!
//! Nothing here depends on Bevy. The plugin keeps a [`NavGrid`] on each map
//! entity as a component; that impl lives in the ECS layer, with the maps.

use std::fmt;
use std::sync::OnceLock;

use super::classes::{ClassError, ClassId, Classes, MovementClasses, Terrain, UnitKind};
use super::layer::{
    Layer, MAX_UNIT_SIZE, anchors_over, build_layer, clearance_of, footprint_cost, repair_clearance,
};
use super::moves::{COST_SCALE, octile};

/// A cell of a [`NavGrid`], by column `x` and row `y`.
///
/// The grid does not care which way `y` points: bevy_ecs_tilemap puts row 0 at
/// the bottom, MovingAI files put it at the top, and both load as they are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct Cell {
    /// Column, from 0.
    pub x: u32,
    /// Row, from 0.
    pub y: u32,
}

impl Cell {
    /// The cell at column `x`, row `y`.
    pub const fn new(x: u32, y: u32) -> Self {
        Self { x, y }
    }

    /// The octile distance to `other`, in plain-ground steps: the cost of
    /// the cheapest 8-neighbour path between them across open ground.
    pub fn octile_distance(self, other: Cell) -> f64 {
        octile(self.x.abs_diff(other.x), self.y.abs_diff(other.y)) as f64 / COST_SCALE as f64
    }
}

impl From<(u32, u32)> for Cell {
    fn from((x, y): (u32, u32)) -> Self {
        Self { x, y }
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

/// Which moves a unit may make from a cell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub enum Neighborhood {
    /// Up, down, left and right, each costing the entered cell's cost.
    Four,
    /// The four orthogonal moves plus the four diagonals, a diagonal costing
    /// √2 × the entered cell's cost. A diagonal step needs both orthogonal
    /// cells beside it to be passable (no cutting wall corners).
    #[default]
    Eight,
}

/// Error returned by fallible [`NavGrid`] operations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GridError {
    /// Width or height was zero, or `width × height` does not fit the grid's
    /// 32-bit cell index.
    BadSize {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
    },
    /// A cost array did not have `width × height` entries.
    WrongCellCount {
        /// `width × height`.
        expected: usize,
        /// Entries given.
        got: usize,
    },
    /// A cell lies outside the grid.
    OutOfBounds(Cell),
    /// A cost was written to a grid with movement classes, whose cells
    /// hold terrain types ([`NavGrid::set_terrain`]).
    HoldsTerrain,
    /// A terrain type was written to a grid without movement classes,
    /// whose cells hold costs ([`NavGrid::set_cost`]).
    HoldsCosts,
}

impl fmt::Display for GridError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GridError::BadSize { width, height } => {
                write!(f, "a {width}×{height} grid is empty or too large")
            }
            GridError::WrongCellCount { expected, got } => {
                write!(f, "expected {expected} cell costs, got {got}")
            }
            GridError::OutOfBounds(cell) => write!(f, "cell {cell} is outside the grid"),
            GridError::HoldsTerrain => write!(
                f,
                "the grid has movement classes: its cells hold terrain types (set_terrain), not costs"
            ),
            GridError::HoldsCosts => write!(
                f,
                "the grid has no movement classes: its cells hold costs (set_cost), not terrain types"
            ),
        }
    }
}

impl std::error::Error for GridError {}

/// Largest number of cells a grid may have: cell indices and heap positions
/// share a 32-bit word with 3 bits of parent direction in the search.
pub const MAX_CELLS: u64 = 1 << 28;

/// A rectangular grid of cells, each blocked or walkable at a cost.
///
/// - Cost 0 ([`NavGrid::BLOCKED`]) is a wall; 1 is plain ground; 2..=255 is
///   rough terrain, that many times slower to cross.
/// - Entering a cell orthogonally costs its cost; diagonally (in
///   [`Neighborhood::Eight`]) √2 × its cost, and only when both orthogonal
///   cells beside the diagonal are walkable.
/// - Connected-region labels answer "can A reach B at all?" without a
///   search. They are labelled at the first query and then repaired
///   locally on each edit (see [`NavGrid::region`]).
/// - [`NavGrid::version`] changes on every edit that changes a cell, so
///   searches and paths can tell that the ground moved under them.
/// - The walkable cells are also kept as two bitmaps, by rows and by
///   columns (about a quarter of a byte per cell), updated on every edit,
///   from which jump point searches scan 64 cells at a time. A grid so thin
///   that they would outweigh its own cells goes without them.
/// - Every cell has a [clearance](NavGrid::clearance): the side of the
///   largest square of walkable cells anchored there, repaired on each
///   edit. Units bigger than one cell search the grid as their
///   [size class](NavGrid::size_class) sees it, with its own costs,
///   regions and bitmaps, built at its first use and then repaired edit by
///   edit.
#[derive(Clone, Debug)]
pub struct NavGrid {
    width: u32,
    height: u32,
    neighborhood: Neighborhood,
    /// Size 1: the cells' own costs, with their histogram (the cheapest
    /// walkable cost, the heuristic's scale, in O(1) after any edit), walk
    /// bitmaps and regions.
    base: Layer,
    /// Clearance per cell, up to [`MAX_UNIT_SIZE`].
    clearance: Vec<u8>,
    /// Size classes 2..=[`MAX_UNIT_SIZE`], each built at its first use.
    sized: [OnceLock<Layer>; MAX_UNIT_SIZE as usize - 1],
    version: u64,
    /// The index of the cell changed by each of the last
    /// [`CHANGE_JOURNAL_LIMIT`] versions, with the byte it held before the
    /// change (its cost, or its terrain type once classes are registered):
    /// version `v` at `v % LIMIT` (allocated on the first edit).
    journal: Vec<(u32, u8)>,
    /// Every version after this one is a single-cell change recorded in the
    /// journal (while it still holds it); an edit of the whole grid (a new
    /// move set, a replaced grid) moves it up.
    journal_floor: u64,
    /// The terrain of each cell and the movement classes that read it,
    /// once a game registers classes ([`NavGrid::set_classes`]); without,
    /// the byte a cell holds is its cost.
    classes: Option<Box<Classes>>,
}

/// How many single-cell changes a [`NavGrid`] remembers, for
/// [`NavGrid::changes_since`]; a reader further behind learns only that
/// everything may have changed.
pub const CHANGE_JOURNAL_LIMIT: usize = 1 << 14;

/// What changed on a grid since a version, from [`NavGrid::changes_since`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GridChanges {
    /// These cells changed (a cell changed twice is listed twice).
    Cells(Vec<Cell>),
    /// Too much changed to list, or the grid as a whole changed (its move
    /// set, its size, or it is another grid): treat every cell as changed.
    Everything,
}

impl GridChanges {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        matches!(self, GridChanges::Cells(cells) if cells.is_empty())
    }
}

impl NavGrid {
    /// The cost of a wall.
    pub const BLOCKED: u8 = 0;

    /// A `width × height` grid of plain ground (cost 1), 8-neighbour moves.
    pub fn new(width: u32, height: u32) -> Result<Self, GridError> {
        let cells = Self::checked_cells(width, height)?;
        Self::from_costs(width, height, vec![1; cells])
    }

    /// A grid from one cost per cell, row by row (`index = y × width + x`).
    pub fn from_costs(width: u32, height: u32, costs: Vec<u8>) -> Result<Self, GridError> {
        let expected = Self::checked_cells(width, height)?;
        if costs.len() != expected {
            return Err(GridError::WrongCellCount {
                expected,
                got: costs.len(),
            });
        }
        Ok(Self::assembled(width, height, costs, None))
    }

    /// A grid of these costs (its first class's) and classes, its layer
    /// built, at version 0.
    fn assembled(width: u32, height: u32, costs: Vec<u8>, classes: Option<Box<Classes>>) -> Self {
        Self {
            width,
            height,
            neighborhood: Neighborhood::Eight,
            clearance: clearance_of(width, height, &costs),
            base: Layer::new(width, height, costs),
            sized: Default::default(),
            version: 0,
            journal: Vec::new(),
            journal_floor: 0,
            classes,
        }
    }

    /// A grid of terrain types and the classes that read them, as
    /// [`NavGrid::from_costs`] and then [`NavGrid::set_classes`] make it,
    /// with its layer built once, not twice (a baked map's load).
    #[cfg(feature = "serialize")]
    pub(crate) fn from_terrain(
        width: u32,
        height: u32,
        terrain: Vec<u8>,
        classes: MovementClasses,
    ) -> Result<Self, String> {
        let expected = Self::checked_cells(width, height).map_err(|e| e.to_string())?;
        if terrain.len() != expected {
            let got = terrain.len();
            return Err(GridError::WrongCellCount { expected, got }.to_string());
        }
        let classes = Classes::new(classes.checked().map_err(|e| e.to_string())?, terrain);
        let costs: Vec<u8> = (classes.terrain.iter())
            .map(|&t| classes.default_cost(t))
            .collect();
        Ok(Self::assembled(
            width,
            height,
            costs,
            Some(Box::new(classes)),
        ))
    }

    fn checked_cells(width: u32, height: u32) -> Result<usize, GridError> {
        let cells = width as u64 * height as u64;
        if width == 0 || height == 0 || cells > MAX_CELLS {
            return Err(GridError::BadSize { width, height });
        }
        Ok(cells as usize)
    }

    /// This grid with the given move set.
    pub fn with_neighborhood(mut self, neighborhood: Neighborhood) -> Self {
        self.set_neighborhood(neighborhood);
        self
    }

    /// Changes the move set (bumps the version: paths found under the old
    /// rule may no longer be valid).
    pub fn set_neighborhood(&mut self, neighborhood: Neighborhood) {
        if self.neighborhood != neighborhood {
            self.neighborhood = neighborhood;
            self.version += 1;
            self.journal_floor = self.version;
        }
    }

    /// Replaces this grid with `other` (of any size) as an edit of the
    /// whole grid: the version goes on increasing, so anything that
    /// remembers an older version of this grid sees that everything
    /// changed. Used when a tilemap is resized.
    pub fn replace(&mut self, other: NavGrid) {
        let previous = self.version;
        *self = other;
        self.supersede(previous);
    }

    /// Makes this grid the successor of a grid that was at version
    /// `previous` in the same place (a map entity whose `NavGrid` was
    /// replaced by this one): its version moves past both, and anything
    /// that remembers a version from before sees that everything changed
    /// ([`GridChanges::Everything`], [`NavGrid::rebuilt_since`]). Two grids
    /// can carry the same version number; after this, none of this grid's
    /// versions is one its predecessor had. The plugins do it when a
    /// `NavGrid` is inserted over another.
    pub fn supersede(&mut self, previous: u64) {
        let version = self.version.max(previous) + 1;
        self.version = version;
        self.journal_floor = version;
    }

    /// Whether the grid changed as a whole after `version`: it was
    /// replaced ([`NavGrid::replace`], [`NavGrid::supersede`]) or its move
    /// set changed, so cells chosen on that version may mean other places
    /// now. Single-cell edits, however many, do not count.
    pub fn rebuilt_since(&self, version: u64) -> bool {
        version < self.journal_floor
    }

    /// Columns.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Rows.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// `width × height`.
    pub fn cell_count(&self) -> usize {
        self.base.costs.len()
    }

    /// The move set.
    pub fn neighborhood(&self) -> Neighborhood {
        self.neighborhood
    }

    /// Bytes of memory the grid holds: costs, clearance, the size classes
    /// built so far (costs, walk bitmaps, region labels once labelled) and
    /// the journal of edits.
    ///
    /// ```
    /// use bevy_frontier::core::NavGrid;
    ///
    /// let grid = NavGrid::new(256, 256).unwrap();
    /// let before = grid.memory_bytes();
    /// // A byte of cost and one of clearance per cell at least.
    /// assert!(before >= 2 * 256 * 256);
    /// // Region labels come at the first question that needs them.
    /// grid.label_regions_now();
    /// assert!(grid.memory_bytes() >= before + 4 * 256 * 256);
    /// ```
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.base.memory_bytes()
            + self.clearance.capacity()
            + self
                .sized
                .iter()
                .filter_map(|layer| layer.get())
                .map(|layer| layer.memory_bytes())
                .sum::<usize>()
            + self.journal.capacity() * std::mem::size_of::<(u32, u8)>()
            + self.classes.as_ref().map_or(0, |c| c.memory_bytes())
    }

    /// A number that changes whenever a cell's cost or the move set changes.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Whether `cell` lies inside the grid.
    pub fn in_bounds(&self, cell: Cell) -> bool {
        cell.x < self.width && cell.y < self.height
    }

    /// The flat index of an in-bounds cell (`y × width + x`).
    pub fn index(&self, cell: Cell) -> Option<usize> {
        self.in_bounds(cell)
            .then(|| cell.y as usize * self.width as usize + cell.x as usize)
    }

    /// The cell at a flat index.
    pub fn cell(&self, index: usize) -> Cell {
        Cell::new(
            (index % self.width as usize) as u32,
            (index / self.width as usize) as u32,
        )
    }

    /// The cost of `cell`: `Some(0)` for a wall, `None` outside the grid.
    pub fn cost(&self, cell: Cell) -> Option<u8> {
        self.index(cell).map(|i| self.base.costs[i])
    }

    /// Whether `cell` is inside the grid and not a wall.
    pub fn is_walkable(&self, cell: Cell) -> bool {
        self.cost(cell).is_some_and(|c| c != Self::BLOCKED)
    }

    /// All cell costs, row by row.
    pub fn costs(&self) -> &[u8] {
        &self.base.costs
    }

    /// The clearance of `cell`: the side of the largest square of walkable
    /// cells with `cell` at its lowest `x` and `y` (counted up to
    /// [`MAX_UNIT_SIZE`]); 0 for a wall or outside the grid. A unit of size
    /// `k` fits at `cell` when its clearance is at least `k`.
    pub fn clearance(&self, cell: Cell) -> u8 {
        self.index(cell).map_or(0, |i| self.clearance[i])
    }

    /// Every cell's clearance, row by row.
    pub fn clearances(&self) -> &[u8] {
        &self.clearance
    }

    /// The layer of size class `size` (in `1..=MAX_UNIT_SIZE`): the cells'
    /// own for size 1; a larger one built the first time it is asked for.
    pub(super) fn layer(&self, size: u8) -> &Layer {
        if size <= 1 {
            return &self.base;
        }
        self.sized[size as usize - 2].get_or_init(|| {
            build_layer(
                self.width,
                self.height,
                &self.base.costs,
                &self.clearance,
                size,
            )
        })
    }

    /// The layer of `kind`, a class the grid has and a size in
    /// `1..=MAX_UNIT_SIZE` (as [`NavGrid::kind_view`] makes it):
    /// [`NavGrid::layer`] for class 0, a class's own built at its first use.
    pub(super) fn layer_of(&self, kind: UnitKind) -> &Layer {
        match &self.classes {
            Some(classes) if kind.class != ClassId::DEFAULT => {
                classes.layer(self.width, self.height, kind.class.index(), kind.size)
            }
            _ => self.layer(kind.size),
        }
    }

    /// [`NavGrid::layer_of`] if that layer is built (the default class's
    /// cells always are), without building it.
    pub(super) fn built_layer_of(&self, kind: UnitKind) -> Option<&Layer> {
        match &self.classes {
            Some(classes) if kind.class != ClassId::DEFAULT => {
                classes.built(kind.class.index(), kind.size)
            }
            _ if kind.size <= 1 => Some(&self.base),
            _ => self.sized[kind.size as usize - 2].get(),
        }
    }

    /// Registers the game's movement classes: from now on each cell holds
    /// a [`Terrain`] type (the cost it held becomes the type of that
    /// number: a new grid is all [`Terrain::PLAIN`]), written with
    /// [`NavGrid::set_terrain`] and [`NavGrid::fill_terrain`]; the first
    /// class reads its costs from its table ([`NavGrid::cost`] and every
    /// query that names no class answer for it), and the other classes
    /// from theirs ([`NavGrid::view`]). An edit of the whole grid, as a
    /// new move set is. See [`MovementClasses`].
    pub fn set_classes(&mut self, classes: MovementClasses) -> Result<(), ClassError> {
        let table = classes.checked()?;
        let terrain = match self.classes.take() {
            Some(old) => old.terrain,
            None => std::mem::take(&mut self.base.costs),
        };
        let classes = Classes::new(table, terrain);
        let costs: Vec<u8> = classes
            .terrain
            .iter()
            .map(|&t| classes.default_cost(t))
            .collect();
        self.clearance = clearance_of(self.width, self.height, &costs);
        self.base = Layer::new(self.width, self.height, costs);
        self.sized = Default::default();
        self.classes = Some(Box::new(classes));
        self.version += 1;
        self.journal_floor = self.version;
        Ok(())
    }

    /// This grid with the game's movement classes ([`NavGrid::set_classes`]).
    pub fn with_classes(mut self, classes: MovementClasses) -> Result<Self, ClassError> {
        self.set_classes(classes)?;
        Ok(self)
    }

    /// The byte each cell holds, row by row: its terrain type once classes
    /// are registered, else its cost. With the move set and the classes,
    /// all that makes the grid (everything else is worked out from them).
    #[cfg(feature = "serialize")]
    pub(crate) fn cell_bytes(&self) -> &[u8] {
        match &self.classes {
            Some(classes) => &classes.terrain,
            None => &self.base.costs,
        }
    }

    /// Gives a grid made from baked bytes the version it had when baked,
    /// so that what was baked with it (its coarse graphs) matches it. No
    /// change is remembered from before it.
    #[cfg(feature = "serialize")]
    pub(crate) fn restore_version(&mut self, version: u64) {
        self.version = version;
        self.journal.clear();
        self.journal_floor = version;
    }

    /// The movement classes registered, if any.
    pub fn classes(&self) -> Option<&MovementClasses> {
        self.classes.as_deref().map(|c| &*c.table)
    }

    /// How many movement classes the grid answers for: 1 (the cells' own
    /// costs) until classes are registered.
    pub fn class_count(&self) -> usize {
        self.classes.as_ref().map_or(1, |c| c.table.len())
    }

    /// The terrain type of `cell` on a grid with movement classes; `None`
    /// outside the grid or on a grid without classes (whose cells hold
    /// costs: [`NavGrid::cost`]).
    pub fn terrain(&self, cell: Cell) -> Option<Terrain> {
        let classes = self.classes.as_ref()?;
        self.index(cell).map(|i| Terrain(classes.terrain[i]))
    }

    /// The byte `cell` holds: its terrain type on a grid with classes,
    /// else its cost. `None` outside the grid.
    #[cfg(feature = "tilemap")] // what the tilemap sync compares
    pub(crate) fn byte(&self, cell: Cell) -> Option<u8> {
        self.index(cell).map(|i| self.terrain_at(i))
    }

    fn terrain_at(&self, index: usize) -> u8 {
        match &self.classes {
            Some(classes) => classes.terrain[index],
            None => self.base.costs[index],
        }
    }

    /// Bytes the layers of classes other than the default hold (built at
    /// their first use).
    pub fn class_layer_bytes(&self) -> usize {
        self.classes.as_ref().map_or(0, |c| c.layer_bytes())
    }

    /// The cheapest walkable cost on the grid (1 if nothing is walkable).
    /// The default heuristic is scaled by it, which keeps it admissible on
    /// maps made only of rough terrain.
    pub fn min_walkable_cost(&self) -> u8 {
        self.base.min_walkable_cost()
    }

    /// The most expensive walkable cost on the grid (1 if nothing is
    /// walkable).
    pub fn max_walkable_cost(&self) -> u8 {
        self.base.max_walkable_cost()
    }

    /// Sets one cell's cost ([`NavGrid::BLOCKED`] makes it a wall).
    /// Returns whether anything changed. On a grid with movement classes,
    /// whose cells hold terrain types, [`GridError::HoldsTerrain`]:
    /// [`NavGrid::set_terrain`] writes those.
    pub fn set_cost(&mut self, cell: Cell, cost: u8) -> Result<bool, GridError> {
        if self.classes.is_some() {
            return Err(GridError::HoldsTerrain);
        }
        self.set_byte(cell, cost)
    }

    /// Sets one cell's terrain type ([`Terrain::WALL`] makes it a wall for
    /// every class) on a grid with movement classes; returns whether
    /// anything changed. On a grid without classes
    /// [`GridError::HoldsCosts`].
    pub fn set_terrain(&mut self, cell: Cell, terrain: Terrain) -> Result<bool, GridError> {
        if self.classes.is_none() {
            return Err(GridError::HoldsCosts);
        }
        self.set_byte(cell, terrain.0)
    }

    /// Writes the byte a cell holds, a cost or a terrain type, whichever
    /// the grid holds.
    pub(crate) fn set_byte(&mut self, cell: Cell, byte: u8) -> Result<bool, GridError> {
        let index = self.index(cell).ok_or(GridError::OutOfBounds(cell))?;
        Ok(self.write(index, byte))
    }

    /// Sets every cell of the rectangle from `min` to `max` (both inclusive,
    /// in any order) to `cost`. Cells outside the grid are an error and
    /// nothing is changed. Returns how many cells changed. On a grid with
    /// movement classes [`GridError::HoldsTerrain`]:
    /// [`NavGrid::fill_terrain`] writes terrain types.
    pub fn fill_rect(&mut self, min: Cell, max: Cell, cost: u8) -> Result<usize, GridError> {
        if self.classes.is_some() {
            return Err(GridError::HoldsTerrain);
        }
        self.fill_bytes(min, max, cost)
    }

    /// Sets every cell of the rectangle from `min` to `max` (both
    /// inclusive, in any order) to `terrain` on a grid with movement
    /// classes. Cells outside the grid are an error and nothing is
    /// changed. Returns how many cells changed. On a grid without classes
    /// [`GridError::HoldsCosts`].
    pub fn fill_terrain(
        &mut self,
        min: Cell,
        max: Cell,
        terrain: Terrain,
    ) -> Result<usize, GridError> {
        if self.classes.is_none() {
            return Err(GridError::HoldsCosts);
        }
        self.fill_bytes(min, max, terrain.0)
    }

    fn fill_bytes(&mut self, min: Cell, max: Cell, cost: u8) -> Result<usize, GridError> {
        for corner in [min, max] {
            if !self.in_bounds(corner) {
                return Err(GridError::OutOfBounds(corner));
            }
        }
        let mut changed = 0;
        for y in min.y.min(max.y)..=min.y.max(max.y) {
            for x in min.x.min(max.x)..=min.x.max(max.x) {
                let index = y as usize * self.width as usize + x as usize;
                changed += self.write(index, cost) as usize;
            }
        }
        Ok(changed)
    }

    fn write(&mut self, index: usize, byte: u8) -> bool {
        let (width, height) = (self.width, self.height);
        let before = self.terrain_at(index);
        if before == byte {
            return false;
        }
        let cost = match &mut self.classes {
            Some(classes) => {
                classes.terrain[index] = byte;
                classes.default_cost(byte)
            }
            None => byte,
        };
        let old = self.base.write(width, height, index, cost);
        self.version += 1;
        if self.journal.is_empty() {
            self.journal = vec![(0, 0); CHANGE_JOURNAL_LIMIT];
        }
        self.journal[(self.version % CHANGE_JOURNAL_LIMIT as u64) as usize] =
            (index as u32, before);
        let (x, y) = (index as u32 % width, index as u32 / width);
        if old != cost {
            if (old == Self::BLOCKED) != (cost == Self::BLOCKED) {
                repair_clearance(width, height, &self.base.costs, &mut self.clearance, x, y);
            }
            // The anchors of each size class built so far whose footprint
            // covers the cell, one at a time so their regions stay exact.
            for (class, layer) in self.sized.iter_mut().enumerate() {
                let Some(layer) = layer.get_mut() else {
                    continue;
                };
                let size = class as u8 + 2;
                for (ax, ay) in anchors_over(x, y, size) {
                    let cost =
                        footprint_cost(width, &self.base.costs, &self.clearance, size, ax, ay);
                    layer.write(width, height, (ay * width + ax) as usize, cost);
                }
            }
        }
        if let Some(classes) = &mut self.classes {
            classes.repair(width, height, x, y, before);
        }
        true
    }

    /// The cells changed after `version` (a value [`NavGrid::version`] gave
    /// earlier), oldest first. Any number of readers can each keep their
    /// own version: searches use it to tell edits that can affect them from
    /// those that cannot, the plugin to flag paths crossing changed cells.
    /// [`GridChanges::Everything`] when the journal no longer reaches that
    /// far back ([`CHANGE_JOURNAL_LIMIT`]), when the grid changed as a whole
    /// since, or when `version` is newer than this grid's.
    pub fn changes_since(&self, version: u64) -> GridChanges {
        match self.journal_since(version) {
            Some(entries) => {
                GridChanges::Cells(entries.map(|(i, _)| self.cell(i as usize)).collect())
            }
            None => GridChanges::Everything,
        }
    }

    /// The cells that cost more now than at `version`: a higher cost, or a
    /// wall where there was ground. Each is listed once, in the order it
    /// first changed after `version`. These are the changes that can make a
    /// way found at `version` dearer or illegal; a cell made cheaper, or
    /// changed and changed back, is not listed. [`GridChanges::Everything`]
    /// as for [`NavGrid::changes_since`].
    pub fn dearer_since(&self, version: u64) -> GridChanges {
        self.dearer_for(ClassId::DEFAULT, version)
    }

    /// [`NavGrid::dearer_since`] as movement class `class` reads the cells.
    pub(super) fn dearer_for(&self, class: ClassId, version: u64) -> GridChanges {
        self.changes_for(class, version, |old, now| {
            old != Self::BLOCKED && (now == Self::BLOCKED || now > old)
        })
    }

    /// The cells written after `version` by at least one write that
    /// changed their cost to movement class `class` (a wall counting as a
    /// cost): the changes a unit of that class can tell. A cell turned
    /// from open ground to shallows is one for a walker, not for a
    /// hovercraft that pays the same on both; a wall put up and taken down
    /// again is one for both, though the cell ends as it was (a path held
    /// over it was crossed by a wall for a moment: it is flagged, as it
    /// would have been had anyone looked in between). Each cell once, in
    /// the order it first changed. [`GridChanges::Everything`] as for
    /// [`NavGrid::changes_since`].
    ///
    /// ```
    /// use bevy_frontier::core::{Cell, ClassId, GridChanges, NavGrid};
    ///
    /// let mut grid = NavGrid::new(8, 8).unwrap();
    /// let v = grid.version();
    /// grid.set_cost(Cell::new(2, 2), NavGrid::BLOCKED).unwrap();
    /// grid.set_cost(Cell::new(2, 2), 1).unwrap();
    /// let told = grid.told_apart_by(ClassId::DEFAULT, v);
    /// assert_eq!(told, GridChanges::Cells(vec![Cell::new(2, 2)]));
    /// ```
    pub fn told_apart_by(&self, class: ClassId, version: u64) -> GridChanges {
        let Some(entries) = self.journal_since(version) else {
            return GridChanges::Everything;
        };
        let entries: Vec<(u32, u8)> = entries.collect();
        let cost = self.class_cost_of(class);
        // Newest first: each write's byte after it is the byte before the
        // next write of its cell, or the cell's byte now.
        let mut after = std::collections::HashMap::new();
        let mut told = std::collections::HashSet::new();
        for &(i, before) in entries.iter().rev() {
            let next = *after.get(&i).unwrap_or(&self.terrain_at(i as usize));
            if cost(before) != cost(next) {
                told.insert(i);
            }
            after.insert(i, before);
        }
        let mut listed = std::collections::HashSet::new();
        GridChanges::Cells(
            entries
                .iter()
                .filter(|&&(i, _)| told.contains(&i) && listed.insert(i))
                .map(|&(i, _)| self.cell(i as usize))
                .collect(),
        )
    }

    /// How `class` reads a cell's byte: its cost table on a grid with
    /// classes, else the byte (a cost) itself.
    fn class_cost_of(&self, class: ClassId) -> impl Fn(u8) -> u8 + '_ {
        let table = self
            .classes
            .as_ref()
            .and_then(|c| c.table.table(class.index()));
        move |byte: u8| table.map_or(byte, |t| t[byte as usize])
    }

    /// The cells changed after `version` whose cost to `class` then and
    /// now (`old`, `now`) meet `kept`, each once, in the order it first
    /// changed.
    fn changes_for(
        &self,
        class: ClassId,
        version: u64,
        kept: impl Fn(u8, u8) -> bool,
    ) -> GridChanges {
        let Some(entries) = self.journal_since(version) else {
            return GridChanges::Everything;
        };
        let cost = self.class_cost_of(class);
        // Each cell's cost at `version`: the cost before its first change.
        let mut seen = std::collections::HashSet::new();
        GridChanges::Cells(
            entries
                .filter(|&(i, _)| seen.insert(i))
                .filter(|&(i, before)| kept(cost(before), cost(self.terrain_at(i as usize))))
                .map(|(i, _)| self.cell(i as usize))
                .collect(),
        )
    }

    /// The journal as far back as it reaches: the version it starts after
    /// and its entries from there (for a save, `crate::save`).
    #[cfg(feature = "serialize")]
    pub(crate) fn journal_parts(&self) -> (u64, Vec<(u32, u8)>) {
        let from =
            (self.journal_floor).max(self.version.saturating_sub(CHANGE_JOURNAL_LIMIT as u64));
        let entries = self.journal_since(from).map(Iterator::collect);
        (from, entries.unwrap_or_default())
    }

    /// Puts back a journal [`journal_parts`](Self::journal_parts) gave, on
    /// a grid of the version it was taken at: the edits since `from` read
    /// as they did.
    #[cfg(feature = "serialize")]
    pub(crate) fn restore_journal(&mut self, from: u64, entries: &[(u32, u8)]) -> bool {
        if from > self.version || self.version - from != entries.len() as u64 {
            return false;
        }
        self.journal_floor = from;
        if entries.is_empty() {
            return true;
        }
        let limit = CHANGE_JOURNAL_LIMIT as u64;
        self.journal = vec![(0, 0); CHANGE_JOURNAL_LIMIT];
        for (v, &entry) in (from + 1..=self.version).zip(entries) {
            self.journal[(v % limit) as usize] = entry;
        }
        true
    }

    /// The journal's entries (cell index, byte before) of the versions
    /// after `version`, oldest first; `None` when it no longer reaches that
    /// far back, the grid changed as a whole since, or `version` is newer
    /// than this grid's.
    fn journal_since(&self, version: u64) -> Option<impl Iterator<Item = (u32, u8)> + '_> {
        if version > self.version
            || version < self.journal_floor
            || self.version - version > CHANGE_JOURNAL_LIMIT as u64
        {
            return None;
        }
        let limit = CHANGE_JOURNAL_LIMIT as u64;
        Some((version + 1..=self.version).map(move |v| self.journal[(v % limit) as usize]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retired_labels_do_not_pile_up() {
        // A cell toggled between ground and wall beside a wall line splits
        // and merges regions on every edit.
        let mut grid = NavGrid::new(8, 8).unwrap();
        grid.fill_rect(Cell::new(4, 0), Cell::new(4, 7), NavGrid::BLOCKED)
            .unwrap();
        grid.region_count();
        let mut most = 0;
        for edit in 0..50_000u32 {
            let cost = if edit % 2 == 0 { 1 } else { NavGrid::BLOCKED };
            grid.set_cost(Cell::new(4, 3), cost).unwrap();
            grid.set_cost(Cell::new(1, edit % 8), cost).unwrap();
            grid.region_count();
            grid.size_class(2).region_count();
            most = most.max(grid.base.regions(8, 8).parent.len());
            let sized = grid.sized[0].get().unwrap().regions(8, 8);
            most = most.max(sized.parent.len());
        }
        assert!(most <= 2 * 64 + 1024 + 2, "{most} labels");
        assert_eq!(grid.region_count(), 2);
        assert_eq!(grid.size_class(2).region_count(), 2);
    }
}
