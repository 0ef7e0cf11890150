//! Resumable A* on a [`NavGrid`].
//!
//! A [`Search`] holds everything it needs between calls (its open list,
//! scores, parents and closed set live in its [`Scratch`]), so
//! [`Search::step`] can stop after any number of expansions and carry on
//! later, in the next frame or the next minute, and still return the path an
//! unsliced search would.
//!
//! Costs are kept in fixed point ([`COST_SCALE`] units per step of plain
//! ground), so searches are exact, integer and identical on every machine.
//!
//! On an 8-neighbour grid whose walkable cells all cost the same (the
//! MovingAI benchmarks, most RTS maps without rough terrain), the search is
//! a jump point search by default ([`SearchConfig::jump_points`]): the same
//! open list, scores and slicing, but only cells where an optimal path may
//! turn enter the open list, and the straight runs between them are scanned
//! 64 cells at a time from bitmaps the grid keeps. Paths cost exactly what
//! plain A* finds. Work is still counted in expansions: each jump point
//! expansion counts one, plus one per [`SCAN_STEPS_PER_EXPANSION`] steps
//! of its scans (a 64-cell window read, or a diagonal step).

use std::fmt;

use super::classes::{ClassId, UnitKind};
use super::grid::{Cell, GridChanges, NavGrid, Neighborhood};
use super::heap::OpenList;
use super::jump::{JumpGrid, cover};
use super::moves::{COST_SCALE, DIAGONAL, DIAGONAL_SIDES, Moves, manhattan, octile, step_cost};
use super::scratch::{self, Scratch, ScratchPool};
use super::size_class::{MAX_UNIT_SIZE, SizeClass};
use super::walk_bits::WalkBits;

/// Fixed-point scale of the heuristic weight.
pub(crate) const WEIGHT_SCALE: u64 = 1 << 10;
/// Scan steps (a 64-cell window read in a straight scan, or one diagonal
/// step) a jump point search takes for the price of one expansion: about
/// what a plain A* expansion costs in time, measured on the MovingAI maps.
pub const SCAN_STEPS_PER_EXPANSION: u32 = 8;

/// How a search behaves. [`SearchConfig::default`] gives optimal paths with
/// no expansion cap.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct SearchConfig {
    /// Multiplier on the heuristic. 1 (the default) gives optimal paths;
    /// above 1 expands fewer nodes, for a path that costs at most this
    /// factor times the best (weighted A*: the heuristic is consistent and
    /// a closed cell is never reopened, which keeps the bound and the work
    /// down); 0 turns A* into Dijkstra's algorithm.
    pub heuristic_weight: f32,
    /// Give up after this many expansions and return a path to the node
    /// closest to the goal (by heuristic) as [`SearchStatus::Partial`].
    pub max_expansions: Option<u32>,
    /// Use jump point search where it applies (the default): on an
    /// 8-neighbour grid whose walkable cells all cost the same, with a
    /// heuristic weight of at most 1. It finds paths of the same cost as
    /// plain A* while putting only the cells where an optimal path may turn
    /// on the open list; the cells between them are scanned in straight
    /// lines. Elsewhere, or when this is `false`, the search is plain A*.
    pub jump_points: bool,
    /// The side of the unit's square footprint, in cells (1 to
    /// [`MAX_UNIT_SIZE`]; default 1). A unit of size `k` is placed by the
    /// cell at its footprint's lowest `x` and `y` (its anchor): start,
    /// goal and path cells are anchors, and the search goes only where the
    /// whole footprint fits, paying the dearest cell under it (see
    /// [`NavGrid::size_class`]).
    pub size: u8,
    /// The unit's movement class (default [`ClassId::DEFAULT`]: the grid's own costs; see
    /// [`NavGrid::set_classes`]): the search reads that class's costs and
    /// goes only where it may.
    pub class: ClassId,
    /// Search as if every walkable anchor cost the cheapest cost on the
    /// grid: a quick path that takes no account of terrain (with the move
    /// rules unchanged, so it is legal), for a unit to start on while the
    /// search with real costs runs. On an 8-neighbour grid it can be a jump
    /// point search whatever the costs. The path's
    /// [`cost`](Path::cost) is still what walking it really costs.
    pub ignore_costs: bool,
}

impl SearchConfig {
    /// The class and size searched for.
    pub fn kind(&self) -> UnitKind {
        UnitKind::new(self.class, self.size)
    }
}

impl Default for SearchConfig {
    fn default() -> Self {
        Self {
            heuristic_weight: 1.0,
            max_expansions: None,
            jump_points: true,
            size: 1,
            class: ClassId::DEFAULT,
            ignore_costs: false,
        }
    }
}

/// Where a search stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub enum SearchStatus {
    /// Still searching: call [`Search::step`] again.
    Running,
    /// Reached the goal; the path is optimal (for a heuristic weight of at
    /// most 1).
    Found,
    /// Stopped at [`SearchConfig::max_expansions`]; the path leads to the
    /// explored cell nearest the goal.
    Partial,
    /// The goal cannot be reached from the start (decided without
    /// expanding a node when they lie in different regions).
    Unreachable,
}

impl SearchStatus {
    /// Whether the search has ended.
    pub fn is_finished(self) -> bool {
        self != SearchStatus::Running
    }
}

/// Why a search could not start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SearchError {
    /// The start cell is outside the grid.
    StartOutOfBounds(Cell),
    /// The goal cell is outside the grid.
    GoalOutOfBounds(Cell),
    /// The start cell is a wall (for a unit bigger than a cell: its
    /// footprint does not fit there).
    StartBlocked(Cell),
    /// The goal cell is a wall (for a unit bigger than a cell: its
    /// footprint does not fit there).
    GoalBlocked(Cell),
    /// The heuristic weight was negative, infinite or NaN.
    BadHeuristicWeight(f32),
    /// The unit size was 0 or above [`MAX_UNIT_SIZE`].
    BadSize(u8),
    /// The grid has no movement class of this id (see
    /// [`NavGrid::set_classes`]).
    UnknownClass(ClassId),
}

impl fmt::Display for SearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SearchError::StartOutOfBounds(c) => write!(f, "start {c} is outside the grid"),
            SearchError::GoalOutOfBounds(c) => write!(f, "goal {c} is outside the grid"),
            SearchError::StartBlocked(c) => write!(f, "start {c} is a wall"),
            SearchError::GoalBlocked(c) => write!(f, "goal {c} is a wall"),
            SearchError::BadHeuristicWeight(w) => {
                write!(f, "heuristic weight {w} is not a finite number ≥ 0")
            }
            SearchError::BadSize(size) => {
                write!(f, "unit size {size} is not between 1 and {MAX_UNIT_SIZE}")
            }
            SearchError::UnknownClass(class) => {
                write!(f, "the grid has no movement class {}", class.index())
            }
        }
    }
}

impl std::error::Error for SearchError {}

/// A path: the cells from start to end, both included, each one move from
/// the next, and the total cost of those moves.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct Path {
    /// Cells from start to end.
    pub cells: Vec<Cell>,
    /// Sum of the move costs (an orthogonal step on plain ground costs 1).
    pub cost: f64,
}

/// Packs an open-list key into one `u64`: f in the high bits, exact, and
/// below it as many bits as are left of `max_g - g`, so that f-ties go to
/// the larger g (the deeper node), which on open ground cuts expansions
/// several-fold. One integer compare per heap level.
#[derive(Clone, Copy, Debug, Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct KeyPacking {
    /// Bits below f (0 when f needs all 64, in which case ties are left
    /// to the heap's order).
    tie_bits: u32,
    /// Right shift that makes any g fit in `tie_bits`.
    g_shift: u32,
    /// The dearest walkable cost the bounds allow for.
    pub(crate) max_cost: u8,
}

impl KeyPacking {
    /// Bounds every f and g a search on `grid` can produce: a path enters
    /// each cell at most once, at most diagonally at the highest cost.
    pub(crate) fn new(grid: SizeClass<'_>, heuristic_scale: u64) -> Self {
        let cells = grid.cell_count() as u128;
        let max_g = cells * grid.max_walkable_cost() as u128 * DIAGONAL as u128;
        let span = grid.width() as u128 + grid.height() as u128;
        let max_h = (span * DIAGONAL as u128 * heuristic_scale as u128 / WEIGHT_SCALE as u128)
            .min(MAX_H as u128);
        let bits = |n: u128| 128 - n.leading_zeros();
        let tie_bits = 64u32.saturating_sub(bits(max_g + max_h));
        Self {
            tie_bits,
            g_shift: bits(max_g).saturating_sub(tie_bits),
            max_cost: grid.max_walkable_cost(),
        }
    }

    #[inline(always)]
    pub(crate) fn key(self, f: u64, g: u64) -> u64 {
        if self.tie_bits == 0 {
            return f;
        }
        let tie_mask = (1u64 << self.tie_bits) - 1;
        (f << self.tie_bits) | (tie_mask - (g >> self.g_shift))
    }
}

/// A resumable A* search from one cell to another.
///
/// ```
/// use bevy_frontier::core::{Cell, NavGrid, Search, SearchConfig, SearchStatus};
///
/// let mut grid = NavGrid::new(16, 16).unwrap();
/// grid.fill_rect(Cell::new(8, 0), Cell::new(8, 14), NavGrid::BLOCKED).unwrap();
///
/// let mut search =
///     Search::new(&grid, Cell::new(0, 0), Cell::new(15, 0), SearchConfig::default()).unwrap();
/// // A few expansions per frame, until it ends.
/// while search.step(&grid, 10) == SearchStatus::Running {}
/// let path = search.path().unwrap();
/// assert_eq!(path.cells.first(), Some(&Cell::new(0, 0)));
/// assert_eq!(path.cells.last(), Some(&Cell::new(15, 0)));
/// ```
#[derive(Debug)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct Search {
    start: Cell,
    goal: Cell,
    config: SearchConfig,
    scratch: Scratch,
    status: SearchStatus,
    expansions: u64,
    restarts: u32,
    path: Option<Path>,
    /// What the search was started on; a grid with another shape or
    /// version restarts it.
    grid_shape: (u32, u32, u64),
    /// The open stamp of this search (closed = `open + 1`).
    open_stamp: u32,
    /// Lowest-heuristic cell reached so far, as `(h, cell index)`: the end
    /// of a partial path.
    best: (u64, u32),
    heuristic_scale: u64,
    /// A cell taken out of turn: opened no worse than the open list's
    /// minimum, so it is expanded next without entering the heap.
    bypass: Option<(u64, u32)>,
    keys: KeyPacking,
    /// Whether this run is a jump point search.
    jumps: bool,
    /// Work done past the end of an earlier step's budget (one jump point
    /// expansion can scan more than the budget had left), paid out of the
    /// next steps' budgets before anything else is done.
    debt: u64,
    /// Scan steps taken and not yet charged (fewer than
    /// `SCAN_STEPS_PER_EXPANSION`).
    scan_carry: u32,
    /// The end of a search that finished while in debt: it is reported
    /// once the debt is paid, so no step reports more work than its budget.
    pending: Option<(SearchStatus, u32)>,
    /// For a jump point search, a box holding every cell its scans have
    /// read, as `(min x, min y, max x, max y)`: a change outside it cannot
    /// affect what it has found so far.
    scanned: Option<[i64; 4]>,
}

impl Search {
    /// A search from `start` to `goal` in its own new scratch space.
    pub fn new(
        grid: &NavGrid,
        start: Cell,
        goal: Cell,
        config: SearchConfig,
    ) -> Result<Self, SearchError> {
        Self::with_scratch(grid, start, goal, config, Scratch::new())
    }

    /// A search that takes its scratch space from `pool` (only when the
    /// request is valid); give it back with [`Search::into_scratch`].
    pub fn new_in(
        pool: &mut ScratchPool,
        grid: &NavGrid,
        start: Cell,
        goal: Cell,
        config: SearchConfig,
    ) -> Result<Self, SearchError> {
        Self::validate(grid, start, goal, config)?;
        Self::with_scratch(grid, start, goal, config, pool.take())
    }

    /// A search working in the given scratch space.
    pub fn with_scratch(
        grid: &NavGrid,
        start: Cell,
        goal: Cell,
        config: SearchConfig,
        scratch: Scratch,
    ) -> Result<Self, SearchError> {
        Self::validate(grid, start, goal, config)?;
        Ok(Self::unchecked(grid, start, goal, config, scratch))
    }

    /// A search in `scratch` for a caller that chose its cells and
    /// configuration on this very grid. It is not checked again:
    /// a start or goal off the grid or in a wall, or a bad weight, makes it
    /// [`Unreachable`](SearchStatus::Unreachable) before any expansion, as a
    /// grid edit would.
    pub(crate) fn planned(
        scratch: Scratch,
        grid: &NavGrid,
        start: Cell,
        goal: Cell,
        config: SearchConfig,
    ) -> Self {
        Self::unchecked(grid, start, goal, config, scratch)
    }

    fn unchecked(
        grid: &NavGrid,
        start: Cell,
        goal: Cell,
        config: SearchConfig,
        scratch: Scratch,
    ) -> Self {
        let mut search = Self {
            start,
            goal,
            config,
            scratch,
            status: SearchStatus::Running,
            expansions: 0,
            restarts: 0,
            path: None,
            grid_shape: (0, 0, 0),
            open_stamp: 0,
            best: (u64::MAX, 0),
            heuristic_scale: 0,
            bypass: None,
            keys: KeyPacking::default(),
            jumps: false,
            debt: 0,
            scan_carry: 0,
            pending: None,
            scanned: None,
        };
        search.begin(grid.kind_view(config.kind()));
        search
    }

    fn validate(
        grid: &NavGrid,
        start: Cell,
        goal: Cell,
        config: SearchConfig,
    ) -> Result<(), SearchError> {
        let weight = config.heuristic_weight;
        if !weight.is_finite() || weight < 0.0 {
            return Err(SearchError::BadHeuristicWeight(weight));
        }
        if !(1..=MAX_UNIT_SIZE).contains(&config.size) {
            return Err(SearchError::BadSize(config.size));
        }
        let Some(grid) = grid.view(config.kind()) else {
            return Err(SearchError::UnknownClass(config.class));
        };
        match (grid.cost(start), grid.cost(goal)) {
            (None, _) => Err(SearchError::StartOutOfBounds(start)),
            (_, None) => Err(SearchError::GoalOutOfBounds(goal)),
            (Some(NavGrid::BLOCKED), _) => Err(SearchError::StartBlocked(start)),
            (_, Some(NavGrid::BLOCKED)) => Err(SearchError::GoalBlocked(goal)),
            _ => Ok(()),
        }
    }

    /// (Re)initialises the search state on `grid`; the cheap region check
    /// settles unreachable goals here, before any expansion.
    fn begin(&mut self, grid: SizeClass<'_>) {
        self.grid_shape = (grid.width(), grid.height(), grid.version());
        self.path = None;
        self.bypass = None;
        self.pending = None;
        self.scanned = None;
        self.jumps = self.uses_jumps(grid);
        self.open_stamp = self.scratch.begin(grid.cell_count());
        self.heuristic_scale = self.heuristic_scale_on(grid);
        self.keys = KeyPacking::new(grid, self.heuristic_scale);
        if Self::validate(grid.grid(), self.start, self.goal, self.config).is_err()
            || !grid.connected(self.start, self.goal)
        {
            self.status = SearchStatus::Unreachable;
            return;
        }
        self.status = SearchStatus::Running;
        let start = grid.index(self.start).unwrap_or_default() as u32;
        let h = self.heuristic(grid, self.start);
        self.best = (h, start);
        self.scratch
            .open_source(start, self.open_stamp, self.keys.key(h, 0));
    }

    /// Whether a search with this configuration is a jump point search on
    /// `grid`.
    fn uses_jumps(&self, grid: SizeClass<'_>) -> bool {
        self.config.jump_points
            && grid.neighborhood() == Neighborhood::Eight
            && (self.config.ignore_costs || grid.min_walkable_cost() == grid.max_walkable_cost())
            && grid.walk_bits().is_some()
            && self.config.heuristic_weight <= 1.0
    }

    /// The heuristic's scale on `grid`: the cheapest walkable cost times
    /// the weight.
    fn heuristic_scale_on(&self, grid: SizeClass<'_>) -> u64 {
        (grid.min_walkable_cost() as u64).saturating_mul(
            (self.config.heuristic_weight as f64 * WEIGHT_SCALE as f64).round() as u64,
        )
    }

    /// Whether the edits made to `grid` since the search last ran on it can
    /// change what it has found so far. They cannot when every changed cell
    /// lies away from everything the search has read: a plain A* search
    /// reads the grid only around the cells it expanded (a step's cost,
    /// walls and the two cells beside a diagonal all lie in the 3×3 block
    /// round the cell it leaves), a jump point search inside the box its
    /// scans covered, and neither reads a cell with nothing of its start's
    /// region round it (a sealed pocket, another island). Its open list and scores are then exactly those the
    /// same expansions give on the new grid, and it carries on from them,
    /// still optimal. Also affected: a changed start or goal, another
    /// heuristic scale (the cheapest cost changed), a cost dearer than any
    /// the open list's keys were packed for, or a switch between jump points and
    /// plain A*.
    fn affected_by_edits(&self, grid: SizeClass<'_>) -> bool {
        let (width, height, version) = self.grid_shape;
        if (width, height) != (grid.width(), grid.height())
            || self.heuristic_scale != self.heuristic_scale_on(grid)
            || self.jumps != self.uses_jumps(grid)
            || grid.max_walkable_cost() > self.keys.max_cost
        {
            return true;
        }
        let cells = match grid.changes_since(version) {
            GridChanges::Everything => return true,
            GridChanges::Cells(cells) => cells,
        };
        let nodes = &self.scratch.nodes;
        let Some(home) = grid.region(self.start) else {
            return true;
        };
        cells.iter().any(|&cell| {
            if cell == self.start || cell == self.goal {
                return true;
            }
            if !grid.touches_region(cell, home) {
                // Nothing the search can reach, now or before (a cell it
                // reached is still linked to its start through the cell
                // before it on the way there).
                return false;
            }
            if let Some([min_x, min_y, max_x, max_y]) = self.scanned {
                let (x, y) = (cell.x as i64, cell.y as i64);
                return (min_x..=max_x).contains(&x) && (min_y..=max_y).contains(&y);
            }
            if self.jumps {
                // A jump point search that has scanned nothing yet.
                return false;
            }
            nodes.has_read(cell, width, height, self.open_stamp)
        })
    }

    /// Brings the search up to date with an edited grid: it carries on if
    /// no edit can affect it ([`Search::affected_by_edits`]), and starts
    /// over otherwise (a restart). A goal that the edits cut off ends it as
    /// unreachable either way.
    fn catch_up(&mut self, grid: SizeClass<'_>) {
        if self.affected_by_edits(grid) {
            self.restarts += 1;
            self.begin(grid);
            return;
        }
        self.grid_shape = (grid.width(), grid.height(), grid.version());
        if !grid.connected(self.start, self.goal) {
            self.status = SearchStatus::Unreachable;
        }
    }

    fn heuristic(&self, grid: SizeClass<'_>, cell: Cell) -> u64 {
        let (dx, dy) = (cell.x.abs_diff(self.goal.x), cell.y.abs_diff(self.goal.y));
        match grid.neighborhood() {
            Neighborhood::Eight => heuristic::<true>(dx, dy, self.heuristic_scale),
            Neighborhood::Four => heuristic::<false>(dx, dy, self.heuristic_scale),
        }
    }

    /// The start cell.
    pub fn start(&self) -> Cell {
        self.start
    }

    /// The goal cell.
    pub fn goal(&self) -> Cell {
        self.goal
    }

    /// The configuration the search runs with.
    pub fn config(&self) -> SearchConfig {
        self.config
    }

    /// Where the search stands.
    pub fn status(&self) -> SearchStatus {
        self.status
    }

    /// Work done so far, in expansions, over all calls to
    /// [`Search::step`] (and all restarts): nodes expanded, plus, for a
    /// jump point search, one per [`SCAN_STEPS_PER_EXPANSION`] scan steps.
    pub fn expansions(&self) -> u64 {
        self.expansions
    }

    /// How many times the search started over because its grid changed.
    pub fn restarts(&self) -> u32 {
        self.restarts
    }

    /// Cells waiting in the open list.
    pub fn open_len(&self) -> usize {
        self.scratch.open.len()
    }

    /// The path, once the search is [`Found`](SearchStatus::Found) or
    /// [`Partial`](SearchStatus::Partial).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_ref()
    }

    /// Takes the path out of a finished search.
    pub fn take_path(&mut self) -> Option<Path> {
        self.path.take()
    }

    /// The cells on the open list (the search's frontier), in no
    /// particular order.
    pub fn open_cells<'a>(&'a self, grid: &'a NavGrid) -> impl Iterator<Item = Cell> + 'a {
        let bypass = self.bypass.map(|(_, cell)| cell);
        self.scratch
            .open
            .items()
            .iter()
            .copied()
            .chain(bypass)
            .map(|index| grid.cell(index as usize))
    }

    /// Bytes of memory the search holds: its scratch space (16 bytes per
    /// cell of the largest grid it has run on) and its open list.
    pub fn memory_bytes(&self) -> usize {
        self.scratch.memory_bytes()
    }

    /// Ends the search and hands back its scratch space for reuse.
    pub fn into_scratch(self) -> Scratch {
        self.scratch
    }

    /// Does at most `budget` expansions of work and says where the search
    /// stands.
    ///
    /// A jump point expansion cannot stop half way, so the last one of a
    /// step may scan past the budget; that work is charged to the next
    /// steps of the same search before they expand anything (and a search
    /// that ended in such a step reports its end once it is paid for). So
    /// no step ever counts more than `budget`, the total is exact, and the
    /// work done in one step goes past its budget by at most what one jump
    /// point expansion scans (at most 8 × 256 scan steps, worth 256
    /// expansions).
    ///
    /// `grid` must be the grid the search was created on, edited or not.
    /// After edits, the search carries on where it was if none of the
    /// changed cells lies where it has looked (around the cells it
    /// expanded, or inside the area a jump point search scanned), and
    /// otherwise starts over on the new grid, counting a
    /// [restart](Search::restarts); a start or goal that became a wall, or
    /// a goal cut off, makes it [`Unreachable`](SearchStatus::Unreachable).
    /// A finished search returns its status again without doing anything.
    ///
    /// Under edits that keep hitting it, a search can start over again and
    /// again; to bound that, run it on a copy of the grid (clone it) once
    /// it has restarted often enough, as the plugin does.
    pub fn step(&mut self, grid: &NavGrid, budget: u32) -> SearchStatus {
        if self.status.is_finished() {
            return self.status;
        }
        let grid = grid.kind_view(self.config.kind());
        if self.grid_shape != (grid.width(), grid.height(), grid.version()) {
            self.catch_up(grid);
            if self.status.is_finished() {
                return self.status;
            }
        }
        // Work done past an earlier step's budget is paid for first.
        let paid = self.debt.min(budget as u64);
        self.debt -= paid;
        self.expansions += paid;
        let budget = budget - paid as u32;
        if self.debt > 0 {
            return self.status;
        }
        if let Some((status, end)) = self.pending.take() {
            return self.finish(grid, status, end);
        }
        let budget = match self.config.max_expansions {
            Some(cap) => {
                let left = (cap as u64).saturating_sub(self.expansions);
                if left == 0 {
                    return self.finish(grid, SearchStatus::Partial, self.best.1);
                }
                budget.min(left.min(u32::MAX as u64) as u32)
            }
            None => budget,
        };
        let (status, end) = self.expand(grid, budget);
        let capped = self
            .config
            .max_expansions
            .is_some_and(|cap| self.expansions + self.debt >= cap as u64);
        let end = match (status.is_finished(), capped) {
            (true, _) => (status, end),
            (false, true) => (SearchStatus::Partial, self.best.1),
            (false, false) => return self.status,
        };
        if self.debt > 0 {
            self.pending = Some(end);
            return self.status;
        }
        self.finish(grid, end.0, end.1)
    }

    /// Runs the search to its end, whatever it takes.
    pub fn run(&mut self, grid: &NavGrid) -> SearchStatus {
        while self.step(grid, u32::MAX) == SearchStatus::Running {}
        self.status
    }

    fn finish(&mut self, grid: SizeClass<'_>, status: SearchStatus, end: u32) -> SearchStatus {
        self.status = status;
        if status != SearchStatus::Unreachable {
            self.path = Some(self.trace_back(grid, end));
        }
        self.status
    }

    /// The path from the start to `end` through the recorded parents.
    fn trace_back(&self, grid: SizeClass<'_>, end: u32) -> Path {
        let moves = Moves::new(grid.width());
        let start = grid.index(self.start).unwrap_or_default() as u32;
        let nodes = &self.scratch.nodes;
        let mut cells: Vec<Cell> = if self.jumps {
            let unit = grid.min_walkable_cost() as u64;
            nodes.walk_back_jumps(end, start, &moves, self.open_stamp, unit)
        } else {
            nodes.walk_back(end, start, &moves)
        }
        .into_iter()
        .map(|index| grid.cell(index as usize))
        .collect();
        cells.reverse();
        let cost = if self.config.ignore_costs {
            // What the path really costs, not what the search counted.
            cells
                .windows(2)
                .filter_map(|step| grid.step_cost(step[0], step[1]))
                .sum()
        } else {
            nodes.g[end as usize] as f64 / COST_SCALE as f64
        };
        Path { cells, cost }
    }

    /// The A* inner loop: at most `budget` expansions. Returns the status
    /// and, when finished, the cell the path ends at.
    fn expand(&mut self, grid: SizeClass<'_>, budget: u32) -> (SearchStatus, u32) {
        if let Some(bits) = grid.walk_bits().filter(|_| self.jumps) {
            return self.expand_jumps(grid, bits, budget);
        }
        match (grid.neighborhood(), self.config.ignore_costs) {
            (Neighborhood::Eight, false) => self.expand_with::<true, false>(grid, budget),
            (Neighborhood::Four, false) => self.expand_with::<false, false>(grid, budget),
            (Neighborhood::Eight, true) => self.expand_with::<true, true>(grid, budget),
            (Neighborhood::Four, true) => self.expand_with::<false, true>(grid, budget),
        }
    }

    /// [`Search::expand`] for one move set, with real costs or with every
    /// walkable anchor at the cheapest (`FLAT`), so the neighbour loop and
    /// the heuristic compile without a branch on either.
    fn expand_with<const EIGHT: bool, const FLAT: bool>(
        &mut self,
        grid: SizeClass<'_>,
        budget: u32,
    ) -> (SearchStatus, u32) {
        let width = grid.width();
        let height = grid.height();
        let rows = RowDivider::new(width);
        let costs = grid.costs();
        let moves = Moves::new(width);
        let goal = grid.index(self.goal).unwrap_or_default() as u32;
        let (goal_x, goal_y) = (self.goal.x, self.goal.y);
        let scale = self.heuristic_scale;
        let flat = grid.min_walkable_cost();
        let mut frontier = Frontier::new(self, costs.len());
        let (open, closed) = (frontier.open, frontier.open + 1);
        let mut expanded = 0;
        let mut result = (SearchStatus::Running, 0);

        while expanded < budget {
            let Some((key, current)) = frontier.pop() else {
                result = (SearchStatus::Unreachable, 0);
                break;
            };
            expanded += 1;
            let (g, _) = frontier.close(current);
            if current == goal {
                result = (SearchStatus::Found, goal);
                break;
            }
            let y = rows.row_of(current);
            let x = current - y * width;
            let in_grid = [x + 1 < width, x > 0, y + 1 < height, y > 0];
            let mut walkable = [false; 4];
            for direction in 0..if EIGHT { 8 } else { 4 } {
                let allowed = if direction < 4 {
                    in_grid[direction]
                } else {
                    let [a, b] = DIAGONAL_SIDES[direction - 4];
                    walkable[a] & walkable[b]
                };
                if !allowed {
                    continue;
                }
                let next = current.wrapping_add(moves.offsets[direction] as u32);
                let cost = costs[next as usize];
                if cost == NavGrid::BLOCKED {
                    continue;
                }
                let cost = if FLAT { flat } else { cost };
                if direction < 4 {
                    walkable[direction] = true;
                }
                let next_g = g + cost as u64 * step_cost(direction);
                let generation = scratch::generation(frontier.stamps[next as usize]);
                // A closed cell stays closed, with a weight too: weighted A*
                // without re-expansions keeps its bound (a consistent
                // heuristic), and reopening can cost many times the work.
                if generation == closed {
                    continue;
                }
                if generation == open && next_g >= frontier.scores[next as usize] {
                    continue;
                }
                // Only cells that get a new or cheaper path pay for the
                // heuristic.
                let (nx, ny) = moves.cell_of(direction, x, y);
                let h = heuristic::<EIGHT>(nx.abs_diff(goal_x), ny.abs_diff(goal_y), scale);
                frontier.reach(next, next_g, h, direction, generation == open, key);
            }
        }
        (self.best, self.bypass) = frontier.into_parts();
        self.expansions += expanded as u64;
        result
    }
}

/// The open list and per-cell records of a search, borrowed for one call of
/// its expansion loop, with the two things that change on the way: the
/// best cell seen (for a partial path) and the cell taken out of turn.
struct Frontier<'a> {
    stamps: &'a mut [u32],
    scores: &'a mut [u64],
    positions: &'a mut [u32],
    heap: &'a mut OpenList<u64>,
    open: u32,
    keys: KeyPacking,
    best: (u64, u32),
    bypass: Option<(u64, u32)>,
}

impl<'a> Frontier<'a> {
    fn new(search: &'a mut Search, cells: usize) -> Self {
        let Scratch {
            nodes, open: heap, ..
        } = &mut search.scratch;
        Self {
            stamps: &mut nodes.stamp[..cells],
            scores: &mut nodes.g[..cells],
            positions: &mut nodes.position[..cells],
            heap,
            open: search.open_stamp,
            keys: search.keys,
            best: search.best,
            bypass: search.bypass.take(),
        }
    }

    /// What changed, for the search to keep: the best cell and the bypass.
    fn into_parts(self) -> ((u64, u32), Option<(u64, u32)>) {
        (self.best, self.bypass)
    }

    /// The next cell to expand, with its key.
    #[inline(always)]
    fn pop(&mut self) -> Option<(u64, u32)> {
        self.bypass.take().or_else(|| self.heap.pop(self.positions))
    }

    /// Marks a cell closed; returns its score and the move that reached it.
    #[inline(always)]
    fn close(&mut self, cell: u32) -> (u64, usize) {
        let direction = scratch::close(self.stamps, cell, self.open);
        (self.scores[cell as usize], direction)
    }

    /// Records a new or cheaper way to `next` (score `next_g`, heuristic
    /// `h`, reached by move `direction`), found while expanding a cell whose
    /// key was `current_key`.
    #[inline(always)]
    fn reach(
        &mut self,
        next: u32,
        next_g: u64,
        h: u64,
        direction: usize,
        was_open: bool,
        current_key: u64,
    ) {
        let next_key = self.keys.key(next_g + h, next_g);
        self.stamps[next as usize] = scratch::stamp(self.open, direction);
        self.scores[next as usize] = next_g;
        if was_open {
            let position = self.positions[next as usize];
            self.heap.decrease_key(position, next_key, self.positions);
            return;
        }
        if (h, next) < self.best {
            self.best = (h, next);
        }
        // A newly opened cell no worse than the one just expanded is the
        // open list's minimum: it is expanded next without the round trip
        // through the heap. Only the best such cell skips the heap; the
        // others are pushed.
        let opened = (next_key, next);
        let spare = match self.bypass {
            Some(held) if held.0 <= next_key => opened,
            Some(held) => {
                self.bypass = Some(opened);
                held
            }
            None if next_key <= current_key => {
                self.bypass = Some(opened);
                return;
            }
            None => opened,
        };
        self.heap.push(spare.0, spare.1, self.positions);
    }
}

impl Search {
    /// The jump point search loop: like [`Search::expand_with`] for eight
    /// neighbours, but the successors of a cell are the jump points that
    /// [`JumpGrid::jump`] finds along the moves worth making from it. Each
    /// expansion costs one unit of budget plus one per
    /// [`SCAN_STEPS_PER_EXPANSION`] scan steps; what goes past `budget` is
    /// recorded as debt.
    fn expand_jumps(
        &mut self,
        grid: SizeClass<'_>,
        bits: &WalkBits,
        budget: u32,
    ) -> (SearchStatus, u32) {
        let width = grid.width();
        let rows = RowDivider::new(width);
        let jumps = JumpGrid::new(bits, (self.goal.x, self.goal.y));
        let unit = grid.min_walkable_cost() as u64;
        let goal = grid.index(self.goal).unwrap_or_default() as u32;
        let start = grid.index(self.start).unwrap_or_default() as u32;
        let (goal_x, goal_y) = (self.goal.x, self.goal.y);
        let scale = self.heuristic_scale;
        let mut carry = self.scan_carry;
        let mut spent = 0u64;
        let cap = self.config.max_expansions.map(u64::from);
        let done_before = self.expansions + self.debt;
        const STEPS: u32 = SCAN_STEPS_PER_EXPANSION;
        let mut scanned = self
            .scanned
            .unwrap_or([i64::MAX, i64::MAX, i64::MIN, i64::MIN]);
        // A search has one goal: its scans report no targets passed.
        let mut no_hits = Vec::new();
        let mut frontier = Frontier::new(self, grid.cell_count());
        let (open, closed) = (frontier.open, frontier.open + 1);
        let mut result = (SearchStatus::Running, 0);

        while spent < budget as u64 {
            let Some((key, current)) = frontier.pop() else {
                result = (SearchStatus::Unreachable, 0);
                break;
            };
            spent += 1;
            let (g, arrived) = frontier.close(current);
            let y = rows.row_of(current);
            let x = current - y * width;
            // The cells round it, read for forced neighbours.
            cover(&mut scanned, x as i64, y as i64, x as i64, y as i64);
            let arrived = (current != start).then_some(arrived);
            if current == goal {
                result = (SearchStatus::Found, goal);
                break;
            }
            // Scan steps this expansion may take: all it needs, or, near
            // the expansion cap, no more than keeps the total within it
            // (whatever the slicing, so sliced and whole searches agree).
            let granted = match cap {
                Some(cap) => {
                    let left = cap.saturating_sub(done_before + spent);
                    (left * STEPS as u64 + (STEPS - 1 - carry) as u64).min(u32::MAX as u64) as u32
                }
                None => u32::MAX,
            };
            let mut allowance = granted;
            let reached = |direction: usize, steps: u32, (nx, ny): (u32, u32)| {
                let next = ny * width + nx;
                let next_g = g + steps as u64 * unit * step_cost(direction);
                let generation = scratch::generation(frontier.stamps[next as usize]);
                if generation == closed
                    || (generation == open && next_g >= frontier.scores[next as usize])
                {
                    return;
                }
                let h = heuristic::<true>(nx.abs_diff(goal_x), ny.abs_diff(goal_y), scale);
                frontier.reach(next, next_g, h, direction, generation == open, key);
            };
            jumps.expand(
                (x, y),
                arrived,
                &mut allowance,
                &mut scanned,
                &mut no_hits,
                reached,
            );
            carry += granted - allowance;
            spent += (carry / STEPS) as u64;
            carry %= STEPS;
        }
        (self.best, self.bypass) = frontier.into_parts();
        self.scanned = (scanned[0] <= scanned[2]).then_some(scanned);
        self.scan_carry = carry;
        let charged = spent.min(budget as u64);
        self.expansions += charged;
        self.debt += spent - charged;
        result
    }
}

/// Divides cell indices by the grid width with a multiply and a shift
/// instead of a division: exact for every index a grid can have (index ×
/// width < 2⁶⁰).
#[derive(Clone, Copy)]
pub(crate) struct RowDivider {
    magic: u64,
}

impl RowDivider {
    const SHIFT: u32 = 60;

    pub(crate) fn new(width: u32) -> Self {
        Self {
            magic: (1u64 << Self::SHIFT) / width as u64 + 1,
        }
    }

    #[inline(always)]
    pub(crate) fn row_of(self, index: u32) -> u32 {
        ((index as u128 * self.magic as u128) >> Self::SHIFT) as u32
    }
}

/// Octile (8 neighbours) or Manhattan (4) distance in fixed point, times
/// `scale` (cheapest cell cost × weight, itself in `WEIGHT_SCALE` units).
#[inline(always)]
pub(crate) fn heuristic<const EIGHT: bool>(dx: u32, dy: u32, scale: u64) -> u64 {
    let distance = if EIGHT {
        octile(dx, dy)
    } else {
        manhattan(dx, dy)
    };
    // In 128 bits: a heavy weight on a long grid of dear ground would not
    // fit in 64 (the sum with g stays below 2⁶⁴ with this cap).
    (distance as u128 * scale as u128 / WEIGHT_SCALE as u128).min(MAX_H as u128) as u64
}

/// The largest heuristic value: g stays below 2⁶⁰ on any grid (2²⁸ cells,
/// each entered diagonally at cost 255), so g + h never overflows.
const MAX_H: u64 = 1 << 62;

/// Runs a search from `start` to `goal` to its end and returns its status
/// and path (none when unreachable).
pub fn find_path(
    grid: &NavGrid,
    start: Cell,
    goal: Cell,
    config: SearchConfig,
) -> Result<(SearchStatus, Option<Path>), SearchError> {
    let mut search = Search::new(grid, start, goal, config)?;
    let status = search.run(grid);
    Ok((status, search.take_path()))
}
