//! The navigation grid: which cells can be walked, what they cost, and which
//! cells can reach each other.
//!
//! Nothing here depends on Bevy. The plugin keeps a [`NavGrid`] on each map
//! entity as a component; that impl lives in the ECS layer, with the maps.

use std::fmt;
use std::sync::OnceLock;

use super::moves::{COST_SCALE, MOVE_DELTAS, octile, step_cost};
use super::walk_bits::WalkBits;

/// A cell of a [`NavGrid`], by column `x` and row `y`.
///
/// The grid does not care which way `y` points: bevy_ecs_tilemap puts row 0 at
/// the bottom, MovingAI files put it at the top, and both load as they are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
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
#[derive(Debug)]
pub struct NavGrid {
    width: u32,
    height: u32,
    neighborhood: Neighborhood,
    costs: Vec<u8>,
    /// How many cells have each cost; gives the cheapest walkable cost (the
    /// heuristic's scale) in O(1) after any edit.
    cost_histogram: [u32; 256],
    version: u64,
    regions: OnceLock<Regions>,
    /// Walkable cells as bitmaps, for jump point search (`None` on grids too
    /// thin for them to pay).
    walk_bits: Option<WalkBits>,
    /// The index of the cell changed by each of the last
    /// [`CHANGE_JOURNAL_LIMIT`] versions: version `v` at `v % LIMIT`
    /// (allocated on the first edit).
    journal: Vec<u32>,
    /// Every version after this one is a single-cell change recorded in the
    /// journal (while it still holds it); an edit of the whole grid (a new
    /// move set, a replaced grid) moves it up.
    journal_floor: u64,
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

/// Connected regions: a label per cell, and labels joined in a union-find
/// forest so that two regions merged by an opened wall need no relabel. A
/// region's id is the root of its labels.
#[derive(Clone, Debug)]
struct Regions {
    /// Label per cell; `NO_REGION` for blocked cells.
    labels: Vec<u32>,
    /// Union-find parent per label (a root is its own parent).
    parent: Vec<u32>,
    /// Cells under each root label (for union by size; stale on non-roots).
    size: Vec<u32>,
    /// Regions (roots with cells).
    count: u32,
    /// Visit marks for split checks, allocated on the first one.
    marks: Vec<u32>,
    /// The last mark handed out.
    mark: u32,
}

const NO_REGION: u32 = u32::MAX;

/// Cells a split check may visit before it gives up and leaves the regions
/// to a full relabel at the next query.
const SPLIT_CHECK_LIMIT: usize = 1 << 15;

impl Clone for NavGrid {
    fn clone(&self) -> Self {
        Self {
            width: self.width,
            height: self.height,
            neighborhood: self.neighborhood,
            costs: self.costs.clone(),
            cost_histogram: self.cost_histogram,
            version: self.version,
            regions: match self.regions.get() {
                Some(regions) => OnceLock::from(regions.clone()),
                None => OnceLock::new(),
            },
            walk_bits: self.walk_bits.clone(),
            journal: self.journal.clone(),
            journal_floor: self.journal_floor,
        }
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
        let mut cost_histogram = [0u32; 256];
        for &cost in &costs {
            cost_histogram[cost as usize] += 1;
        }
        Ok(Self {
            width,
            height,
            neighborhood: Neighborhood::Eight,
            walk_bits: WalkBits::new(width, height, &costs),
            costs,
            cost_histogram,
            version: 0,
            regions: OnceLock::new(),
            journal: Vec::new(),
            journal_floor: 0,
        })
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
        let version = self.version.max(other.version) + 1;
        *self = other;
        self.version = version;
        self.journal_floor = version;
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
        self.costs.len()
    }

    /// The move set.
    pub fn neighborhood(&self) -> Neighborhood {
        self.neighborhood
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
        self.index(cell).map(|i| self.costs[i])
    }

    /// Whether `cell` is inside the grid and not a wall.
    pub fn is_walkable(&self, cell: Cell) -> bool {
        self.cost(cell).is_some_and(|c| c != Self::BLOCKED)
    }

    /// All cell costs, row by row.
    pub fn costs(&self) -> &[u8] {
        &self.costs
    }

    /// The walkable cells as bitmaps, when the grid keeps them.
    pub(crate) fn walk_bits(&self) -> Option<&WalkBits> {
        self.walk_bits.as_ref()
    }

    /// The cheapest walkable cost on the grid (1 if nothing is walkable).
    /// The default heuristic is scaled by it, which keeps it admissible on
    /// maps made only of rough terrain.
    pub fn min_walkable_cost(&self) -> u8 {
        (1..=255u8)
            .find(|&c| self.cost_histogram[c as usize] > 0)
            .unwrap_or(1)
    }

    /// The most expensive walkable cost on the grid (1 if nothing is
    /// walkable).
    pub fn max_walkable_cost(&self) -> u8 {
        (1..=255u8)
            .rev()
            .find(|&c| self.cost_histogram[c as usize] > 0)
            .unwrap_or(1)
    }

    /// Sets one cell's cost ([`NavGrid::BLOCKED`] makes it a wall). Returns
    /// whether anything changed.
    pub fn set_cost(&mut self, cell: Cell, cost: u8) -> Result<bool, GridError> {
        let index = self.index(cell).ok_or(GridError::OutOfBounds(cell))?;
        Ok(self.write(index, cost))
    }

    /// Sets every cell of the rectangle from `min` to `max` (both inclusive,
    /// in any order) to `cost`. Cells outside the grid are an error and
    /// nothing is changed. Returns how many cells changed.
    pub fn fill_rect(&mut self, min: Cell, max: Cell, cost: u8) -> Result<usize, GridError> {
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

    fn write(&mut self, index: usize, cost: u8) -> bool {
        let old = self.costs[index];
        if old == cost {
            return false;
        }
        self.cost_histogram[old as usize] -= 1;
        self.cost_histogram[cost as usize] += 1;
        self.costs[index] = cost;
        self.version += 1;
        if self.journal.is_empty() {
            self.journal = vec![0; CHANGE_JOURNAL_LIMIT];
        }
        self.journal[(self.version % CHANGE_JOURNAL_LIMIT as u64) as usize] = index as u32;
        // Only a change between wall and ground can change connectivity.
        if (old == Self::BLOCKED) != (cost == Self::BLOCKED) {
            if let Some(regions) = self.regions.get_mut() {
                let (w, h) = (self.width as usize, self.height as usize);
                let repaired = if cost == Self::BLOCKED {
                    regions.wall_added(&self.costs, w, h, index)
                } else {
                    regions.ground_added(w, h, index);
                    true
                };
                // Labels retired by splits and merges stay in the forest;
                // a map edited for hours is labelled afresh once they
                // outnumber its cells.
                if !repaired || regions.parent.len() > 2 * self.costs.len() + 1024 {
                    self.regions = OnceLock::new();
                }
            }
            if let Some(bits) = &mut self.walk_bits {
                let width = self.width as usize;
                bits.set(
                    (index % width) as u32,
                    (index / width) as u32,
                    cost != Self::BLOCKED,
                );
            }
        }
        true
    }

    /// The connected region of a walkable cell, `None` for walls and cells
    /// outside the grid. Two cells with the same region can reach each other.
    ///
    /// Region ids are not dense (use them as keys, not indices) and are
    /// only stable while the walls stay where they are.
    ///
    /// With no corner cutting, 8-neighbour reachability equals 4-neighbour
    /// reachability, so both move sets share these labels. They are kept up
    /// to date on every edit that turns a wall into ground or back: an
    /// opened cell joins the regions beside it; a new wall is checked
    /// locally (its neighbours still linked round it), and only a wall that
    /// may split a region makes a search for the pieces, bounded, beyond
    /// which the whole grid is labelled again at the next query.
    pub fn region(&self, cell: Cell) -> Option<u32> {
        let index = self.index(cell)?;
        self.regions().region_of(index)
    }

    /// Whether a path exists between two cells (both walkable and in the
    /// same region). O(1) once the labels are computed.
    pub fn connected(&self, a: Cell, b: Cell) -> bool {
        match (self.region(a), self.region(b)) {
            (Some(ra), Some(rb)) => ra == rb,
            _ => false,
        }
    }

    /// Whether `cell` or one of the eight cells round it lies in `region`:
    /// a search in `region` reads only cells of that kind (its cells, and
    /// the walls and cells beside them), so a change to any other cell
    /// cannot affect it.
    pub(crate) fn touches_region(&self, cell: Cell, region: u32) -> bool {
        let (x, y) = (cell.x as i64, cell.y as i64);
        (y - 1..=y + 1).any(|ny| {
            (x - 1..=x + 1).any(|nx| {
                (0..self.width as i64).contains(&nx)
                    && (0..self.height as i64).contains(&ny)
                    && self.region(Cell::new(nx as u32, ny as u32)) == Some(region)
            })
        })
    }

    /// How many connected regions the grid has.
    pub fn region_count(&self) -> u32 {
        self.regions().count
    }

    fn regions(&self) -> &Regions {
        self.regions.get_or_init(|| self.label_regions())
    }

    /// Labels the regions now if they are not labelled yet (they are
    /// otherwise labelled at the first query that needs them).
    pub fn label_regions_now(&self) {
        self.regions();
    }

    /// Flood fill with 4-connectivity, one label per walkable component.
    fn label_regions(&self) -> Regions {
        let (w, h) = (self.width as usize, self.height as usize);
        let mut labels = vec![NO_REGION; self.costs.len()];
        let mut stack = Vec::new();
        let mut count = 0;
        for seed in 0..self.costs.len() {
            if labels[seed] != NO_REGION || self.costs[seed] == Self::BLOCKED {
                continue;
            }
            labels[seed] = count;
            stack.push(seed);
            while let Some(i) = stack.pop() {
                let (x, y) = (i % w, i / w);
                let mut visit = |j: usize| {
                    if labels[j] == NO_REGION && self.costs[j] != Self::BLOCKED {
                        labels[j] = count;
                        stack.push(j);
                    }
                };
                if x > 0 {
                    visit(i - 1);
                }
                if x + 1 < w {
                    visit(i + 1);
                }
                if y > 0 {
                    visit(i - w);
                }
                if y + 1 < h {
                    visit(i + w);
                }
            }
            count += 1;
        }
        let mut size = vec![0u32; count as usize];
        for &label in &labels {
            if label != NO_REGION {
                size[label as usize] += 1;
            }
        }
        Regions {
            labels,
            parent: (0..count).collect(),
            size,
            count,
            marks: Vec::new(),
            mark: 0,
        }
    }

    /// Whether one move from `from` to the adjacent cell `to` is allowed:
    /// both walkable, adjacent under the move set, and for a diagonal both
    /// orthogonal cells beside it walkable.
    pub fn can_step(&self, from: Cell, to: Cell) -> bool {
        if !self.is_walkable(from) || !self.is_walkable(to) {
            return false;
        }
        let dx = to.x.abs_diff(from.x);
        let dy = to.y.abs_diff(from.y);
        match (dx, dy, self.neighborhood) {
            (1, 0, _) | (0, 1, _) => true,
            (1, 1, Neighborhood::Eight) => {
                self.is_walkable(Cell::new(to.x, from.y))
                    && self.is_walkable(Cell::new(from.x, to.y))
            }
            _ => false,
        }
    }

    /// The cost of one allowed move from `from` to the adjacent `to`
    /// (`None` when [`NavGrid::can_step`] says no), as the searches count
    /// it: the entered cell's cost times 1 or √2 (to 2⁻²⁰).
    pub fn step_cost(&self, from: Cell, to: Cell) -> Option<f64> {
        self.can_step(from, to).then(|| {
            let cost = self.costs[self.index(to).unwrap_or_default()] as u64;
            let direction = if from.x != to.x && from.y != to.y {
                4
            } else {
                0
            };
            (cost * step_cost(direction)) as f64 / COST_SCALE as f64
        })
    }

    /// The cells reachable in one move from `cell`, with the move's cost.
    pub fn neighbors(&self, cell: Cell) -> impl Iterator<Item = (Cell, f64)> + '_ {
        let moves = match self.neighborhood {
            Neighborhood::Four => &MOVE_DELTAS[..4],
            Neighborhood::Eight => &MOVE_DELTAS[..],
        };
        moves.iter().filter_map(move |&(dx, dy)| {
            let x = cell.x.checked_add_signed(dx)?;
            let y = cell.y.checked_add_signed(dy)?;
            let to = Cell::new(x, y);
            self.step_cost(cell, to).map(|cost| (to, cost))
        })
    }

    /// The cells changed after `version` (a value [`NavGrid::version`] gave
    /// earlier), oldest first. Any number of readers can each keep their
    /// own version: searches use it to tell edits that can affect them from
    /// those that cannot, the plugin to flag paths crossing changed cells.
    /// [`GridChanges::Everything`] when the journal no longer reaches that
    /// far back ([`CHANGE_JOURNAL_LIMIT`]), when the grid changed as a whole
    /// since, or when `version` is newer than this grid's.
    pub fn changes_since(&self, version: u64) -> GridChanges {
        if version > self.version
            || version < self.journal_floor
            || self.version - version > CHANGE_JOURNAL_LIMIT as u64
        {
            return GridChanges::Everything;
        }
        let limit = CHANGE_JOURNAL_LIMIT as u64;
        GridChanges::Cells(
            (version + 1..=self.version)
                .map(|v| self.cell(self.journal[(v % limit) as usize] as usize))
                .collect(),
        )
    }

    /// The walkable cell nearest to `target` by straight-line distance (ties
    /// to the lower row, then the lower column), searching ring by ring
    /// outwards. With `region`, only cells of that region count. `target`
    /// may lie in a wall, or anywhere outside the grid: it is first moved to
    /// the nearest cell of the grid, so the answer is as fast for
    /// `(i64::MIN, i64::MAX)` as for a cell beside the grid. `None` when no
    /// cell qualifies.
    pub fn nearest_walkable(&self, target: (i64, i64), region: Option<u32>) -> Option<Cell> {
        let (w, h) = (self.width as i64, self.height as i64);
        let target = (target.0.clamp(0, w - 1), target.1.clamp(0, h - 1));
        let regions = region.map(|_| self.regions());
        let accept = |x: i64, y: i64| {
            let i = (y * w + x) as usize;
            match (regions, region) {
                (Some(regions), Some(region)) => regions.region_of(i) == Some(region),
                _ => self.costs[i] != Self::BLOCKED,
            }
        };
        // Rings end once they have covered the whole grid.
        let reach = |v: i64, len: i64| v.max(len - 1 - v);
        let last = reach(target.0, w).max(reach(target.1, h));
        let mut best: Option<(i64, i64, i64)> = None;
        for radius in 0..=last {
            // Every cell on ring r is at least r away.
            if best.is_some_and(|(d, _, _)| radius * radius > d) {
                break;
            }
            for dy in -radius..=radius {
                let y = target.1 + dy;
                if y < 0 || y >= h {
                    continue;
                }
                // Whole rows at the ring's top and bottom, two cells between.
                let step = if dy.abs() == radius { 1 } else { 2 * radius };
                let mut dx = -radius;
                while dx <= radius {
                    let x = target.0 + dx;
                    if (0..w).contains(&x) && accept(x, y) {
                        let candidate = (dx * dx + dy * dy, y, x);
                        if best.is_none_or(|b| candidate < b) {
                            best = Some(candidate);
                        }
                    }
                    dx += step;
                }
            }
        }
        best.map(|(_, y, x)| Cell::new(x as u32, y as u32))
    }

    /// Whether a unit can walk the straight segment between the centres of
    /// `from` and `to` without entering a wall or cutting a wall's corner:
    /// every cell the segment passes through is walkable, and where it
    /// passes exactly through a corner, both cells beside that corner are.
    pub fn line_of_sight(&self, from: Cell, to: Cell) -> bool {
        if !self.is_walkable(from) || !self.is_walkable(to) {
            return false;
        }
        let walkable =
            |x: i64, y: i64| x >= 0 && y >= 0 && self.is_walkable(Cell::new(x as u32, y as u32));
        let (dx, dy) = (to.x as i64 - from.x as i64, to.y as i64 - from.y as i64);
        let (step_x, step_y) = (dx.signum(), dy.signum());
        let (nx, ny) = (dx.abs(), dy.abs());
        let (mut x, mut y) = (from.x as i64, from.y as i64);
        let (mut ix, mut iy) = (0, 0);
        while ix < nx || iy < ny {
            // Which cell border the segment crosses next: the sign compares
            // the distances to the next vertical and horizontal borders.
            let next = (1 + 2 * ix) * ny - (1 + 2 * iy) * nx;
            if next == 0 {
                if !walkable(x + step_x, y) || !walkable(x, y + step_y) {
                    return false;
                }
                x += step_x;
                y += step_y;
                ix += 1;
                iy += 1;
            } else if next < 0 {
                x += step_x;
                ix += 1;
            } else {
                y += step_y;
                iy += 1;
            }
            if !walkable(x, y) {
                return false;
            }
        }
        true
    }
}

impl Regions {
    /// The region (root label) of a cell, `None` for a wall.
    fn region_of(&self, index: usize) -> Option<u32> {
        let label = self.labels[index];
        (label != NO_REGION).then(|| self.root(label))
    }

    fn root(&self, mut label: u32) -> u32 {
        while self.parent[label as usize] != label {
            label = self.parent[label as usize];
        }
        label
    }

    /// A label for a region of its own.
    fn new_label(&mut self) -> u32 {
        let label = self.parent.len() as u32;
        self.parent.push(label);
        self.size.push(0);
        self.count += 1;
        label
    }

    /// Joins two regions; returns the root of the whole.
    fn union(&mut self, a: u32, b: u32) -> u32 {
        let (a, b) = (self.root(a), self.root(b));
        if a == b {
            return a;
        }
        let (big, small) = if self.size[a as usize] >= self.size[b as usize] {
            (a, b)
        } else {
            (b, a)
        };
        self.parent[small as usize] = big;
        self.size[big as usize] += self.size[small as usize];
        self.count -= 1;
        big
    }

    /// A cell became ground: it joins the regions beside it (merging them)
    /// or starts its own.
    fn ground_added(&mut self, w: usize, h: usize, index: usize) {
        let mut joined: Option<u32> = None;
        for next in neighbours4(index, w, h).into_iter().flatten() {
            if let Some(region) = self.region_of(next) {
                joined = Some(match joined {
                    Some(root) => self.union(root, region),
                    None => region,
                });
            }
        }
        let label = joined.unwrap_or_else(|| self.new_label());
        self.labels[index] = label;
        self.size[label as usize] += 1;
    }

    /// A cell became a wall. Its ground neighbours still reach each other
    /// round it if they are linked by the ring of eight cells around it;
    /// otherwise one breadth-first search per group of linked neighbours
    /// runs in lockstep until all but one have met or run out: each that
    /// runs out without meeting the others is a region of its own and is
    /// labelled anew. Returns `false` when that search grows past
    /// [`SPLIT_CHECK_LIMIT`] cells (the caller then drops the labels).
    fn wall_added(&mut self, costs: &[u8], w: usize, h: usize, index: usize) -> bool {
        let old = self.labels[index];
        self.labels[index] = NO_REGION;
        let root = self.root(old);
        self.size[root as usize] = self.size[root as usize].saturating_sub(1);
        let walkable = |i: usize| costs[i] != NavGrid::BLOCKED;
        let (x, y) = ((index % w) as i64, (index / w) as i64);
        let at = |dx: i64, dy: i64| -> Option<usize> {
            let (nx, ny) = (x + dx, y + dy);
            ((0..w as i64).contains(&nx) && (0..h as i64).contains(&ny))
                .then(|| ny as usize * w + nx as usize)
                .filter(|&i| walkable(i))
        };
        // The ring, counter-clockwise from east; even places are the four
        // orthogonal neighbours.
        const RING: [(i64, i64); 8] = [
            (1, 0),
            (1, 1),
            (0, 1),
            (-1, 1),
            (-1, 0),
            (-1, -1),
            (0, -1),
            (1, -1),
        ];
        let ring: [Option<usize>; 8] = RING.map(|(dx, dy)| at(dx, dy));
        let orthogonal = [ring[0], ring[2], ring[4], ring[6]];
        let ground = orthogonal.iter().flatten().count();
        if ground == 0 {
            // The cell was a region of its own.
            self.count -= 1;
            return true;
        }
        // Groups of orthogonal neighbours linked along the ring: cells next
        // to each other on the ring touch, so a run of ground links the
        // neighbours in it. Going round from a wall, each run holding an
        // orthogonal neighbour gives one seed.
        let Some(start) = (0..8).find(|&i| ring[i].is_none()) else {
            return true;
        };
        let mut seeds: Vec<usize> = Vec::new();
        let mut seeded = false;
        for step in 1..=8 {
            let place = (start + step) % 8;
            match ring[place] {
                None => seeded = false,
                Some(cell) if place % 2 == 0 && !seeded => {
                    seeds.push(cell);
                    seeded = true;
                }
                Some(_) => {}
            }
        }
        if seeds.len() <= 1 {
            return true;
        }
        self.split_search(costs, w, h, &seeds, root)
    }

    /// The lockstep searches of [`Regions::wall_added`].
    fn split_search(
        &mut self,
        costs: &[u8],
        w: usize,
        h: usize,
        seeds: &[usize],
        root: u32,
    ) -> bool {
        if self.marks.is_empty() {
            self.marks = vec![0; costs.len()];
        }
        let k = seeds.len();
        if self.mark > u32::MAX - 8 {
            self.marks.fill(0);
            self.mark = 0;
        }
        let base = self.mark + 1;
        self.mark += k as u32;
        // Which search each one has merged into (a tiny union-find).
        let mut joined: Vec<usize> = (0..k).collect();
        fn find(joined: &[usize], mut i: usize) -> usize {
            while joined[i] != i {
                i = joined[i];
            }
            i
        }
        let mut queues: Vec<std::collections::VecDeque<usize>> = seeds
            .iter()
            .map(|&s| std::collections::VecDeque::from([s]))
            .collect();
        let mut visited: Vec<Vec<usize>> = seeds.iter().map(|&s| vec![s]).collect();
        for (i, &seed) in seeds.iter().enumerate() {
            self.marks[seed] = base + i as u32;
        }
        let mut total = k;
        let mut groups = k;
        let mut done = vec![false; k];
        loop {
            if groups == 1 {
                return true;
            }
            // A group whose searches have all run out is a region apart.
            for (group, finished) in done.iter_mut().enumerate() {
                if find(&joined, group) != group || *finished {
                    continue;
                }
                let members: Vec<usize> = (0..k).filter(|&i| find(&joined, i) == group).collect();
                if members.iter().all(|&i| queues[i].is_empty()) {
                    let label = self.new_label();
                    let mut cells = 0;
                    for &i in &members {
                        for &cell in &visited[i] {
                            self.labels[cell] = label;
                            cells += 1;
                        }
                    }
                    self.size[label as usize] = cells;
                    self.size[root as usize] = self.size[root as usize].saturating_sub(cells);
                    *finished = true;
                    groups -= 1;
                    if groups == 1 {
                        return true;
                    }
                }
            }
            for i in 0..k {
                let Some(cell) = queues[i].pop_front() else {
                    continue;
                };
                for next in neighbours4(cell, w, h).into_iter().flatten() {
                    if costs[next] == NavGrid::BLOCKED {
                        continue;
                    }
                    let mark = self.marks[next];
                    if mark >= base && mark < base + k as u32 {
                        let other = (mark - base) as usize;
                        let (a, b) = (find(&joined, i), find(&joined, other));
                        if a != b {
                            joined[a.max(b)] = a.min(b);
                            groups -= 1;
                        }
                        continue;
                    }
                    self.marks[next] = base + i as u32;
                    queues[i].push_back(next);
                    visited[i].push(next);
                    total += 1;
                }
                if total > SPLIT_CHECK_LIMIT {
                    return false;
                }
            }
        }
    }
}

/// The in-grid orthogonal neighbours of a cell index.
fn neighbours4(index: usize, w: usize, h: usize) -> [Option<usize>; 4] {
    let (x, y) = (index % w, index / w);
    [
        (x + 1 < w).then(|| index + 1),
        (x > 0).then(|| index - 1),
        (y + 1 < h).then(|| index + w),
        (y > 0).then(|| index - w),
    ]
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
            most = most.max(grid.regions().parent.len());
        }
        assert!(most <= 2 * 64 + 1024 + 2, "{most} labels");
        assert_eq!(grid.region_count(), 2);
    }
}
