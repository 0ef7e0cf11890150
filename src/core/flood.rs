//! A resumable Dijkstra flood: the cheapest paths between one cell and
//! many, found in one search.
//!
//! Group moves use it twice: once towards the splice cell at the head of
//! the shared path (every unit's way onto it) and once from the splice
//! cell at its tail (every unit's way to its end slot). Like [`Search`], a
//! flood runs in slices of a node budget and keeps its state between them.
//!
//! [`Search`]: super::search::Search

use std::collections::HashSet;

use super::grid::{Cell, GridChanges, NavGrid, Neighborhood};
use super::moves::{COST_SCALE, MOVE_DELTAS, Moves, step_cost};
use super::scratch::{self, Scratch, ScratchPool};
use super::search::{Path, SearchError};
use super::size_class::{MAX_UNIT_SIZE, SizeClass};

/// Which way a flood's paths run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloodDirection {
    /// Paths from the source to every cell reached.
    FromSource,
    /// Paths from every cell reached to the source. Moves cost what it
    /// costs to enter a cell, so the two directions can differ.
    ToSource,
}

/// A Dijkstra search outward from one cell that stops when every target is
/// settled, when the next cell would cost more than a limit, or when the
/// source's region is exhausted.
///
/// ```
/// use bevy_frontier::core::{Cell, Flood, FloodDirection, NavGrid};
///
/// let grid = NavGrid::new(16, 16).unwrap();
/// let targets = [Cell::new(5, 0), Cell::new(0, 7)];
/// let mut flood =
///     Flood::new(&grid, Cell::new(0, 0), FloodDirection::ToSource, targets, None).unwrap();
/// flood.run(&grid);
/// let path = flood.path(&grid, Cell::new(5, 0)).unwrap();
/// assert_eq!(path.cells.first(), Some(&Cell::new(5, 0)));
/// assert_eq!(path.cells.last(), Some(&Cell::new(0, 0)));
/// assert_eq!(path.cost, 5.0);
/// ```
#[derive(Debug)]
pub struct Flood {
    source: Cell,
    direction: FloodDirection,
    scratch: Scratch,
    open_stamp: u32,
    /// Fixed-point cost beyond which nothing is expanded.
    max_cost: u64,
    /// Target cell indices not yet settled.
    remaining: HashSet<u32>,
    /// Every target, for a restart.
    targets: Vec<Cell>,
    /// The unit size whose anchors it floods (see [`NavGrid::size_class`]).
    size: u8,
    expansions: u64,
    restarts: u32,
    finished: bool,
    grid_shape: (u32, u32, u64),
}

impl Flood {
    /// A flood from `source` that ends once all `targets` are settled
    /// (targets that are walls or off the grid are ignored), or once the
    /// cheapest open cell costs more than `max_cost` (in plain-ground
    /// steps), or when nothing more is reachable.
    pub fn new(
        grid: &NavGrid,
        source: Cell,
        direction: FloodDirection,
        targets: impl IntoIterator<Item = Cell>,
        max_cost: Option<f64>,
    ) -> Result<Self, SearchError> {
        Self::with_scratch(
            Scratch::new(),
            grid,
            1,
            source,
            direction,
            targets,
            max_cost,
        )
    }

    /// As [`Flood::new`], with scratch space from `pool` (give it back with
    /// [`Flood::into_scratch`]).
    pub fn new_in(
        pool: &mut ScratchPool,
        grid: &NavGrid,
        source: Cell,
        direction: FloodDirection,
        targets: impl IntoIterator<Item = Cell>,
        max_cost: Option<f64>,
    ) -> Result<Self, SearchError> {
        Self::with_scratch(pool.take(), grid, 1, source, direction, targets, max_cost)
    }

    /// As [`Flood::new`], in the given scratch space, for units of `size`
    /// (1 to [`MAX_UNIT_SIZE`]): the source, targets and paths are then
    /// anchors, and the flood goes only where the footprint fits (see
    /// [`NavGrid::size_class`]).
    pub fn with_scratch(
        scratch: Scratch,
        grid: &NavGrid,
        size: u8,
        source: Cell,
        direction: FloodDirection,
        targets: impl IntoIterator<Item = Cell>,
        max_cost: Option<f64>,
    ) -> Result<Self, SearchError> {
        if !(1..=MAX_UNIT_SIZE).contains(&size) {
            return Err(SearchError::BadSize(size));
        }
        let grid = grid.size_class(size);
        match grid.cost(source) {
            None => return Err(SearchError::StartOutOfBounds(source)),
            Some(NavGrid::BLOCKED) => return Err(SearchError::StartBlocked(source)),
            Some(_) => {}
        }
        let max_cost = match max_cost {
            Some(cost) if cost.is_finite() => (cost.max(0.0) * COST_SCALE as f64) as u64,
            Some(_) | None => u64::MAX,
        };
        let mut flood = Self {
            source,
            direction,
            scratch,
            open_stamp: 0,
            max_cost,
            remaining: HashSet::new(),
            targets: targets.into_iter().collect(),
            size,
            expansions: 0,
            restarts: 0,
            finished: false,
            grid_shape: (0, 0, 0),
        };
        flood.begin(grid);
        Ok(flood)
    }

    /// (Re)starts the flood on `grid`; a source that is not walkable ends
    /// it at once.
    fn begin(&mut self, grid: SizeClass<'_>) {
        self.grid_shape = (grid.width(), grid.height(), grid.version());
        self.open_stamp = self.scratch.begin(grid.cell_count());
        self.remaining = self
            .targets
            .iter()
            .filter(|&&cell| grid.is_walkable(cell))
            .filter_map(|&cell| grid.index(cell).map(|i| i as u32))
            .collect();
        self.finished = self.remaining.is_empty();
        match grid
            .index(self.source)
            .filter(|_| grid.is_walkable(self.source))
        {
            Some(start) => self.scratch.open_source(start as u32, self.open_stamp, 0),
            None => self.finished = true,
        }
    }

    /// Brings the flood up to date with an edited grid: it carries on if no
    /// changed cell lies next to a cell it settled, or away from its
    /// source's region (as for [`Search::step`](super::search::Search::step)),
    /// and starts over otherwise.
    fn catch_up(&mut self, grid: SizeClass<'_>) {
        let (width, height, version) = self.grid_shape;
        let home = grid.region(self.source);
        let changes = grid.changes_since(version);
        let affected = (width, height) != (grid.width(), grid.height())
            || home.is_none()
            || match &changes {
                GridChanges::Everything => true,
                GridChanges::Cells(cells) => cells.iter().any(|&cell| {
                    cell == self.source
                        || home.is_some_and(|home| grid.touches_region(cell, home))
                            && self.scratch.nodes.has_read(
                                cell,
                                width,
                                height,
                                self.open_stamp,
                                false,
                            )
                }),
            };
        if affected {
            self.restarts += 1;
            self.begin(grid);
            return;
        }
        // A target walled off is no longer waited for; one that became
        // walkable is, unless already settled.
        if let GridChanges::Cells(cells) = changes {
            for cell in cells {
                if !self.targets.contains(&cell) {
                    continue;
                }
                let Some(index) = grid.index(cell).map(|i| i as u32) else {
                    continue;
                };
                if !grid.is_walkable(cell) {
                    self.remaining.remove(&index);
                } else if !self
                    .scratch
                    .nodes
                    .is_closed(index as usize, self.open_stamp)
                {
                    self.remaining.insert(index);
                }
            }
        }
        self.grid_shape = (width, height, grid.version());
        if self.remaining.is_empty() {
            self.finished = true;
        }
    }

    /// The cell the flood started from.
    pub fn source(&self) -> Cell {
        self.source
    }

    /// Which way the flood's paths run.
    pub fn direction(&self) -> FloodDirection {
        self.direction
    }

    /// Cells expanded so far.
    pub fn expansions(&self) -> u64 {
        self.expansions
    }

    /// How many times edits of the grid made the flood start over.
    pub fn restarts(&self) -> u32 {
        self.restarts
    }

    /// Whether the flood has ended.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Targets not settled yet (after the end: those it never reached).
    pub fn unreached_targets(&self) -> usize {
        self.remaining.len()
    }

    /// Gives back the scratch space.
    pub fn into_scratch(self) -> Scratch {
        self.scratch
    }

    /// Runs the flood to its end.
    pub fn run(&mut self, grid: &NavGrid) {
        while !self.step(grid, u32::MAX) {}
    }

    /// Expands at most `budget` cells; returns whether the flood has ended.
    /// On an edited grid it carries on where it was when no changed cell
    /// lies next to a cell it settled, and starts over otherwise (see
    /// [`Flood::restarts`]). A finished flood stays as it is.
    pub fn step(&mut self, grid: &NavGrid, budget: u32) -> bool {
        if self.finished {
            return true;
        }
        let grid = grid.size_class(self.size);
        if self.grid_shape != (grid.width(), grid.height(), grid.version()) {
            self.catch_up(grid);
            if self.finished {
                return true;
            }
        }
        let open = self.open_stamp;
        let Scratch {
            nodes, open: heap, ..
        } = &mut self.scratch;
        let moves = match grid.neighborhood() {
            Neighborhood::Four => &MOVE_DELTAS[..4],
            Neighborhood::Eight => &MOVE_DELTAS[..],
        };
        let mut expanded = 0;
        while expanded < budget {
            let Some((g, current)) = heap.peek() else {
                self.finished = true;
                break;
            };
            if g > self.max_cost {
                self.finished = true;
                break;
            }
            heap.pop(&mut nodes.position[..]);
            expanded += 1;
            scratch::close(&mut nodes.stamp, current, open);
            if self.remaining.remove(&current) && self.remaining.is_empty() {
                self.finished = true;
                break;
            }
            let here = grid.cell(current as usize);
            for (direction, &(dx, dy)) in moves.iter().enumerate() {
                let (Some(x), Some(y)) =
                    (here.x.checked_add_signed(dx), here.y.checked_add_signed(dy))
                else {
                    continue;
                };
                let next = Cell::new(x, y);
                if !grid.can_step(here, next) {
                    continue;
                }
                let Some(index) = grid.index(next) else {
                    continue;
                };
                let generation = scratch::generation(nodes.stamp[index]);
                if generation == open + 1 {
                    continue;
                }
                // The move's cost is the cost of the cell it enters.
                let entered = match self.direction {
                    FloodDirection::FromSource => next,
                    FloodDirection::ToSource => here,
                };
                let next_g = g + grid.cost(entered).unwrap_or(1) as u64 * step_cost(direction);
                if generation == open && next_g >= nodes.g[index] {
                    continue;
                }
                nodes.open(index as u32, open, next_g, direction);
                if generation == open {
                    let position = nodes.position[index];
                    heap.decrease_key(position, next_g, &mut nodes.position[..]);
                } else {
                    heap.push(next_g, index as u32, &mut nodes.position[..]);
                }
            }
        }
        self.expansions += expanded as u64;
        self.finished
    }

    fn settled_index(&self, grid: &NavGrid, cell: Cell) -> Option<usize> {
        let index = grid.index(cell)?;
        self.scratch
            .nodes
            .is_closed(index, self.open_stamp)
            .then_some(index)
    }

    /// The cost of the cheapest path between the source and `cell`, once
    /// `cell` is settled.
    pub fn cost(&self, grid: &NavGrid, cell: Cell) -> Option<f64> {
        let index = self.settled_index(grid, cell)?;
        Some(self.scratch.nodes.g[index] as f64 / COST_SCALE as f64)
    }

    /// The cheapest path between the source and a settled `cell`: from the
    /// source for [`FloodDirection::FromSource`], to it for
    /// [`FloodDirection::ToSource`].
    pub fn path(&self, grid: &NavGrid, cell: Cell) -> Option<Path> {
        let end = self.settled_index(grid, cell)?;
        let source = grid.index(self.source)? as u32;
        let nodes = &self.scratch.nodes;
        let moves = Moves::new(grid.width());
        let mut cells: Vec<Cell> = nodes
            .walk_back(end as u32, source, &moves)
            .into_iter()
            .map(|index| grid.cell(index as usize))
            .collect();
        if self.direction == FloodDirection::FromSource {
            cells.reverse();
        }
        Some(Path {
            cells,
            cost: nodes.g[end] as f64 / COST_SCALE as f64,
        })
    }
}
