//! Unit sizes: clearance, and the grid as a unit of each size sees it.
//!
//! A unit of size `k` covers a `k × k` square of cells. It is placed by its
//! *anchor*, the cell at the square's lowest `x` and `y`, and it may stand
//! where every cell of its square is walkable. The *clearance* of a cell is
//! the side of the largest such square anchored there (up to
//! [`MAX_UNIT_SIZE`]), so a unit of size `k` fits at `a` exactly when
//! `clearance(a) ≥ k`.
//!
//! Each size class is a grid of its own over the anchors: an anchor where
//! the unit fits costs the dearest cell under its footprint (a tank half in
//! a swamp is slowed by the swamp), every other anchor is a wall. The move
//! rule is the grid's, applied to anchors: a diagonal step needs both
//! orthogonal anchors beside it, which is exactly the footprint not cutting
//! a wall's corner as it moves. Searches, floods, regions, jump point
//! bitmaps and nearest-cell queries all run on that grid unchanged, so
//! everything the core does for a point unit it does for every size.
//!
//! Size 1 is the grid itself. Larger classes are built the first time
//! something asks for them and then kept up to date edit by edit: an edit
//! of one cell touches only the anchors whose footprint covers it.

use super::classes::{ClassId, UnitKind};
use super::grid::{Cell, GridChanges, NavGrid, Neighborhood};
use super::layer::Layer;
pub use super::layer::MAX_UNIT_SIZE;
pub(crate) use super::layer::anchors_over;
use super::moves::{COST_SCALE, MOVE_DELTAS, step_cost};
use super::regions::Regions;
use super::walk_bits::WalkBits;

/// A [`NavGrid`] as a unit of one size sees it, from
/// [`NavGrid::size_class`]: which anchors it fits at, what they cost,
/// which anchors it can reach, and the moves between them.
///
/// Cells here are anchors: the footprint of a unit at anchor `(x, y)`
/// covers `x .. x + size` by `y .. y + size`. For size 1 this is the grid
/// itself.
///
/// ```
/// use bevy_frontier::core::{Cell, NavGrid};
///
/// // A wall with a one-cell gap at (5, 4).
/// let mut grid = NavGrid::new(10, 10).unwrap();
/// grid.fill_rect(Cell::new(5, 0), Cell::new(5, 9), NavGrid::BLOCKED).unwrap();
/// grid.set_cost(Cell::new(5, 4), 1).unwrap();
///
/// // Infantry gets through; a 2×2 vehicle does not.
/// assert!(grid.size_class(1).connected(Cell::new(0, 0), Cell::new(9, 0)));
/// assert!(!grid.size_class(2).connected(Cell::new(0, 0), Cell::new(8, 0)));
/// assert_eq!(grid.clearance(Cell::new(5, 4)), 1);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SizeClass<'a> {
    grid: &'a NavGrid,
    layer: &'a Layer,
    size: u8,
    class: ClassId,
}

impl<'a> SizeClass<'a> {
    pub(super) fn new(grid: &'a NavGrid, layer: &'a Layer, kind: UnitKind) -> Self {
        Self {
            grid,
            layer,
            size: kind.size,
            class: kind.class,
        }
    }

    /// The unit size (footprint side, in cells).
    pub fn size(&self) -> u8 {
        self.size
    }

    /// The movement class ([`ClassId::DEFAULT`] on a grid without classes).
    pub fn class(&self) -> ClassId {
        self.class
    }

    /// The class and size it is for.
    pub fn kind(&self) -> UnitKind {
        UnitKind::new(self.class, self.size)
    }

    /// The grid.
    pub fn grid(&self) -> &'a NavGrid {
        self.grid
    }

    /// Columns of the grid (and of anchors).
    pub fn width(&self) -> u32 {
        self.grid.width()
    }

    /// Rows of the grid (and of anchors).
    pub fn height(&self) -> u32 {
        self.grid.height()
    }

    /// `width × height`.
    pub fn cell_count(&self) -> usize {
        self.grid.cell_count()
    }

    /// The grid's move set.
    pub fn neighborhood(&self) -> Neighborhood {
        self.grid.neighborhood()
    }

    /// The grid's version.
    pub fn version(&self) -> u64 {
        self.grid.version()
    }

    /// Whether `cell` lies inside the grid.
    pub fn in_bounds(&self, cell: Cell) -> bool {
        self.grid.in_bounds(cell)
    }

    /// The flat index of an in-bounds cell.
    pub fn index(&self, cell: Cell) -> Option<usize> {
        self.grid.index(cell)
    }

    /// The cell at a flat index.
    pub fn cell(&self, index: usize) -> Cell {
        self.grid.cell(index)
    }

    /// What standing at anchor `cell` costs a unit of this size (the
    /// dearest cell of its footprint): `Some(0)` where it does not fit,
    /// `None` outside the grid.
    pub fn cost(&self, cell: Cell) -> Option<u8> {
        self.index(cell).map(|i| self.layer.costs[i])
    }

    /// Whether a unit of this size fits at anchor `cell`.
    pub fn is_walkable(&self, cell: Cell) -> bool {
        self.cost(cell).is_some_and(|c| c != NavGrid::BLOCKED)
    }

    /// Whether a unit of this size fits at anchor `cell` and it costs at
    /// most `max_cost`.
    pub fn is_walkable_within(&self, cell: Cell, max_cost: u8) -> bool {
        self.cost(cell)
            .is_some_and(|c| c != NavGrid::BLOCKED && c <= max_cost)
    }

    /// Every anchor's cost, row by row.
    pub fn costs(&self) -> &'a [u8] {
        &self.layer.costs
    }

    pub(crate) fn walk_bits(&self) -> Option<&'a WalkBits> {
        self.layer.walk_bits.as_ref()
    }

    /// The cheapest cost of an anchor where the unit fits (1 if none).
    pub fn min_walkable_cost(&self) -> u8 {
        self.layer.min_walkable_cost()
    }

    /// The dearest cost of an anchor where the unit fits (1 if none).
    pub fn max_walkable_cost(&self) -> u8 {
        self.layer.max_walkable_cost()
    }

    fn regions(&self) -> &'a Regions {
        self.layer.regions(self.width(), self.height())
    }

    /// Labels the regions now if they are not labelled yet.
    pub fn label_regions_now(&self) {
        self.regions();
    }

    /// The connected region of an anchor where the unit fits, `None`
    /// elsewhere. Two anchors with the same region can reach each other.
    /// See [`NavGrid::region`].
    pub fn region(&self, cell: Cell) -> Option<u32> {
        let index = self.index(cell)?;
        self.regions().region_of(index)
    }

    /// Whether a unit of this size can go from anchor `a` to anchor `b`.
    /// O(1) once the labels are computed.
    pub fn connected(&self, a: Cell, b: Cell) -> bool {
        match (self.region(a), self.region(b)) {
            (Some(ra), Some(rb)) => ra == rb,
            _ => false,
        }
    }

    /// How many connected regions the anchors form.
    pub fn region_count(&self) -> u32 {
        self.regions().count
    }

    /// Whether `cell` or one of the eight anchors round it lies in
    /// `region`: a search in `region` reads only anchors of that kind, so a
    /// change to any other cannot affect it.
    pub(crate) fn touches_region(&self, cell: Cell, region: u32) -> bool {
        let (x, y) = (cell.x as i64, cell.y as i64);
        (y - 1..=y + 1).any(|ny| {
            (x - 1..=x + 1).any(|nx| {
                (0..self.width() as i64).contains(&nx)
                    && (0..self.height() as i64).contains(&ny)
                    && self.region(Cell::new(nx as u32, ny as u32)) == Some(region)
            })
        })
    }

    /// The anchors changed after `version`: every anchor whose footprint
    /// covers a cell the grid's journal lists (see
    /// [`NavGrid::changes_since`]).
    pub fn changes_since(&self, version: u64) -> GridChanges {
        self.anchors_of(self.grid.changes_since(version))
    }

    /// The anchors whose footprint covers one of the cells `changes`
    /// lists.
    fn anchors_of(&self, changes: GridChanges) -> GridChanges {
        match changes {
            GridChanges::Cells(cells) if self.size > 1 => GridChanges::Cells(
                cells
                    .into_iter()
                    .flat_map(|c| anchors_over(c.x, c.y, self.size))
                    .map(|(x, y)| Cell::new(x, y))
                    .collect(),
            ),
            changes => changes,
        }
    }

    /// The anchors whose footprint covers a cell written after `version`
    /// by a write that changed its cost to this view's class
    /// ([`NavGrid::told_apart_by`]): the changes a unit of this kind can
    /// tell.
    pub(crate) fn told_apart_since(&self, version: u64) -> GridChanges {
        self.anchors_of(self.grid.told_apart_by(self.class, version))
    }

    /// The cells (not anchors) that cost this class more now than at
    /// `version`, as [`NavGrid::dearer_since`] lists them for the default
    /// class.
    pub fn dearer_since(&self, version: u64) -> GridChanges {
        self.grid.dearer_for(self.class, version)
    }

    /// Whether the path through anchors `cells` can still be walked as it
    /// is: the unit fits at every one, and every step is allowed
    /// ([`can_step`](Self::can_step)). A path an edit only made dearer
    /// still can; one a wall now cuts cannot.
    ///
    /// ```
    /// use bevy_frontier::core::{Cell, NavGrid};
    ///
    /// let mut grid = NavGrid::new(8, 8).unwrap();
    /// let path = [Cell::new(1, 1), Cell::new(2, 2), Cell::new(3, 2)];
    /// // A swamp on the path: dearer, still walkable.
    /// grid.set_cost(Cell::new(2, 2), 9).unwrap();
    /// assert!(grid.size_class(1).can_walk(&path));
    /// // A wall beside the diagonal step: the step would cut its corner.
    /// grid.set_cost(Cell::new(2, 1), NavGrid::BLOCKED).unwrap();
    /// assert!(!grid.size_class(1).can_walk(&path));
    /// // A unit 2×2 anchored at (1, 1) would stand on the wall.
    /// assert!(!grid.size_class(2).can_walk(&path[..1]));
    /// ```
    pub fn can_walk(&self, cells: &[Cell]) -> bool {
        cells.iter().all(|&cell| self.is_walkable(cell))
            && cells.windows(2).all(|step| self.can_step(step[0], step[1]))
    }

    /// Whether one move from anchor `from` to the adjacent anchor `to` is
    /// allowed: the unit fits at both, they are adjacent under the move
    /// set, and for a diagonal it fits at both anchors beside it (its
    /// footprint cuts no wall corner).
    pub fn can_step(&self, from: Cell, to: Cell) -> bool {
        if !self.is_walkable(from) || !self.is_walkable(to) {
            return false;
        }
        let dx = to.x.abs_diff(from.x);
        let dy = to.y.abs_diff(from.y);
        match (dx, dy, self.neighborhood()) {
            (1, 0, _) | (0, 1, _) => true,
            (1, 1, Neighborhood::Eight) => {
                self.is_walkable(Cell::new(to.x, from.y))
                    && self.is_walkable(Cell::new(from.x, to.y))
            }
            _ => false,
        }
    }

    /// The cost of one allowed move (`None` when [`SizeClass::can_step`]
    /// says no), as the searches count it: the entered anchor's cost times
    /// 1 or √2 (to 2⁻²⁰).
    pub fn step_cost(&self, from: Cell, to: Cell) -> Option<f64> {
        self.can_step(from, to).then(|| {
            let cost = self.layer.costs[self.index(to).unwrap_or_default()] as u64;
            let direction = if from.x != to.x && from.y != to.y {
                4
            } else {
                0
            };
            (cost * step_cost(direction)) as f64 / COST_SCALE as f64
        })
    }

    /// The anchors reachable in one move from `cell`, with the move's cost.
    pub fn neighbors(self, cell: Cell) -> impl Iterator<Item = (Cell, f64)> + 'a {
        let moves = match self.neighborhood() {
            Neighborhood::Four => &MOVE_DELTAS[..4],
            Neighborhood::Eight => &MOVE_DELTAS[..],
        };
        let view = self;
        moves.iter().filter_map(move |&(dx, dy)| {
            let x = cell.x.checked_add_signed(dx)?;
            let y = cell.y.checked_add_signed(dy)?;
            let to = Cell::new(x, y);
            view.step_cost(cell, to).map(|cost| (to, cost))
        })
    }

    /// The anchor nearest to `target` where the unit fits, by straight-line
    /// distance from `target` itself (ties to the lower row, then the lower
    /// column), searching ring by ring outwards. With `region`, only
    /// anchors of that region count. `target` may lie anywhere, even far
    /// outside the grid (`(i64::MIN, i64::MAX)` is as fast as a cell beside
    /// it): the rings start at the grid cell nearest to it, and distances
    /// are measured from `target`, exactly. `None` when no anchor
    /// qualifies.
    pub fn nearest_walkable(&self, target: (i64, i64), region: Option<u32>) -> Option<Cell> {
        let (w, h) = (self.width() as i64, self.height() as i64);
        let centre = (target.0.clamp(0, w - 1), target.1.clamp(0, h - 1));
        // How far `target` lies off the grid along each axis. A cell `dx`
        // columns from `centre` lies `|dx|` + that from `target` (the grid
        // is all on one side of an outside target), so the squared distance
        // is exact in 128 bits and a carry.
        let off = (
            target.0.abs_diff(centre.0) as u128,
            target.1.abs_diff(centre.1) as u128,
        );
        let distance = |dx: i64, dy: i64| {
            let a = dx.unsigned_abs() as u128 + off.0;
            let b = dy.unsigned_abs() as u128 + off.1;
            let (sum, carry) = (a * a).overflowing_add(b * b);
            (carry, sum)
        };
        let regions = region.map(|_| self.regions());
        let costs = &self.layer.costs;
        let accept = |x: i64, y: i64| {
            let i = (y * w + x) as usize;
            match (regions, region) {
                (Some(regions), Some(region)) => regions.region_of(i) == Some(region),
                _ => costs[i] != NavGrid::BLOCKED,
            }
        };
        // Rings end once they have covered the whole grid.
        let reach = |v: i64, len: i64| v.max(len - 1 - v);
        let last = reach(centre.0, w).max(reach(centre.1, h));
        let mut best: Option<((bool, u128), i64, i64)> = None;
        for radius in 0..=last {
            // Every cell on ring r is r columns or r rows from the centre.
            let nearest_on_ring = distance(radius, 0).min(distance(0, radius));
            if best.is_some_and(|(d, _, _)| nearest_on_ring > d) {
                break;
            }
            for dy in -radius..=radius {
                let y = centre.1 + dy;
                if y < 0 || y >= h {
                    continue;
                }
                // Whole rows at the ring's top and bottom, two cells between.
                let step = if dy.abs() == radius { 1 } else { 2 * radius };
                let mut dx = -radius;
                while dx <= radius {
                    let x = centre.0 + dx;
                    if (0..w).contains(&x) && accept(x, y) {
                        let candidate = (distance(dx, dy), y, x);
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

    /// Whether a unit of this size can move in a straight line between
    /// anchors `from` and `to` without its footprint entering a wall or
    /// cutting a wall's corner: every anchor the segment between them
    /// passes through fits, and where it passes exactly through a corner,
    /// both anchors beside that corner do.
    pub fn line_of_sight(&self, from: Cell, to: Cell) -> bool {
        self.line_of_sight_within(from, to, u8::MAX)
    }

    /// [`SizeClass::line_of_sight`] over anchors that cost at most
    /// `max_cost`: a straight line that crosses no dearer ground, so
    /// string pulling a path over a map with terrain costs never cuts
    /// through a swamp the path went round.
    pub fn line_of_sight_within(&self, from: Cell, to: Cell, max_cost: u8) -> bool {
        let walkable = |x: i64, y: i64| {
            x >= 0 && y >= 0 && self.is_walkable_within(Cell::new(x as u32, y as u32), max_cost)
        };
        if !walkable(from.x as i64, from.y as i64) || !walkable(to.x as i64, to.y as i64) {
            return false;
        }
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

/// The grid's queries that a size class answers: the class of a size, and
/// the size-1 view every cell-level query is asked of.
impl NavGrid {
    /// The grid as a unit of `size × size` cells sees it (`size` is
    /// clamped to `1..=MAX_UNIT_SIZE`): where it fits, what each anchor
    /// costs it, which anchors it can reach. Size 1 is the grid itself;
    /// a larger class is built the first time it is asked for (one pass
    /// over the grid) and repaired on every edit after that.
    pub fn size_class(&self, size: u8) -> SizeClass<'_> {
        self.kind_view(UnitKind::sized(size))
    }

    /// The grid as a unit of `kind` sees it: [`NavGrid::size_class`] for
    /// its movement class. `None` for a class the grid does not have
    /// (any class but 0 on a grid without [classes](NavGrid::set_classes)).
    /// A class's layer for a size is built the first time it is asked for
    /// and repaired on every edit after that.
    pub fn view(&self, kind: UnitKind) -> Option<SizeClass<'_>> {
        (kind.class.table_row() < self.class_count()).then(|| self.kind_view(kind))
    }

    /// [`NavGrid::view`], the default class's for a class the grid does
    /// not have (whose requests the plugin answers as invalid).
    pub(crate) fn kind_view(&self, kind: UnitKind) -> SizeClass<'_> {
        let size = kind.size.clamp(1, MAX_UNIT_SIZE);
        let class = if kind.class.table_row() < self.class_count() {
            kind.class
        } else {
            ClassId::DEFAULT
        };
        let kind = UnitKind::new(class, size);
        SizeClass::new(self, self.layer_of(kind), kind)
    }

    /// [`NavGrid::kind_view`] of a registered class if its layer is built
    /// already, without building it: for a question about every class that
    /// must not cost the classes nobody uses their layers.
    pub(crate) fn view_if_built(&self, kind: UnitKind) -> Option<SizeClass<'_>> {
        let size = kind.size.clamp(1, MAX_UNIT_SIZE);
        let kind = UnitKind::new(kind.class, size);
        (kind.class.table_row() < self.class_count())
            .then(|| self.built_layer_of(kind))
            .flatten()
            .map(|layer| SizeClass::new(self, layer, kind))
    }

    /// The size-1 view, which every cell-level query below answers from.
    fn cells(&self) -> SizeClass<'_> {
        SizeClass::new(self, self.layer(1), UnitKind::sized(1))
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
        self.cells().region(cell)
    }

    /// Whether a path exists between two cells (both walkable and in the
    /// same region). O(1) once the labels are computed.
    pub fn connected(&self, a: Cell, b: Cell) -> bool {
        self.cells().connected(a, b)
    }

    /// How many connected regions the grid has.
    pub fn region_count(&self) -> u32 {
        self.cells().region_count()
    }

    /// Labels the regions now if they are not labelled yet (they are
    /// otherwise labelled at the first query that needs them).
    pub fn label_regions_now(&self) {
        self.cells().label_regions_now();
    }

    /// Whether one move from `from` to the adjacent cell `to` is allowed:
    /// both walkable, adjacent under the move set, and for a diagonal both
    /// orthogonal cells beside it walkable.
    pub fn can_step(&self, from: Cell, to: Cell) -> bool {
        self.cells().can_step(from, to)
    }

    /// The cost of one allowed move from `from` to the adjacent `to`
    /// (`None` when [`NavGrid::can_step`] says no), as the searches count
    /// it: the entered cell's cost times 1 or √2 (to 2⁻²⁰).
    pub fn step_cost(&self, from: Cell, to: Cell) -> Option<f64> {
        self.cells().step_cost(from, to)
    }

    /// The cells reachable in one move from `cell`, with the move's cost.
    pub fn neighbors(&self, cell: Cell) -> impl Iterator<Item = (Cell, f64)> + '_ {
        self.cells().neighbors(cell)
    }

    /// The walkable cell nearest to `target` by straight-line distance from
    /// `target` (ties to the lower row, then the lower column), searching
    /// ring by ring outwards. With `region`, only cells of that region
    /// count. `target` may lie in a wall, or anywhere outside the grid: the
    /// rings start at the grid cell nearest to it, so the answer is as fast
    /// for `(i64::MIN, i64::MAX)` as for a cell beside the grid, and
    /// distances are still measured from `target` itself, exactly. `None`
    /// when no cell qualifies.
    ///
    /// ```
    /// use bevy_frontier::core::{Cell, NavGrid};
    ///
    /// let mut grid = NavGrid::new(8, 8).unwrap();
    /// grid.set_cost(Cell::new(0, 5), NavGrid::BLOCKED).unwrap();
    /// grid.set_cost(Cell::new(0, 4), NavGrid::BLOCKED).unwrap();
    /// // Three columns left of the grid, on row 5: (0, 6) is √10 away,
    /// // (1, 5) is 4.
    /// assert_eq!(grid.nearest_walkable((-3, 5), None), Some(Cell::new(0, 6)));
    /// ```
    pub fn nearest_walkable(&self, target: (i64, i64), region: Option<u32>) -> Option<Cell> {
        self.cells().nearest_walkable(target, region)
    }
    /// Whether a unit can walk the straight segment between the centres of
    /// `from` and `to` without entering a wall or cutting a wall's corner:
    /// every cell the segment passes through is walkable, and where it
    /// passes exactly through a corner, both cells beside that corner are.
    pub fn line_of_sight(&self, from: Cell, to: Cell) -> bool {
        self.cells().line_of_sight(from, to)
    }
}
