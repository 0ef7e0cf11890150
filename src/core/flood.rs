//! A resumable Dijkstra flood: the cheapest paths between one cell and
//! many, found in one search.
//!
//! Group moves use it twice: once towards the splice cell at the head of
//! the shared path (every unit's way onto it) and once from the splice
//! cell at its tail (every unit's way to its end slot). Like [`Search`], a
//! flood runs in slices of a node budget and keeps its state between them.
//!
//! [`Search`]: super::search::Search

use super::classes::UnitKind;
use super::coarse::IndexSet;
use super::grid::{Cell, GridChanges, NavGrid, Neighborhood};
use super::jump::{JumpGrid, Targets, cover};
use super::moves::{COST_SCALE, DIAGONAL_SIDES, Moves, step_cost};
use super::scratch::{self, Scratch, ScratchPool};
use super::search::{
    KeyPacking, Path, RowDivider, SCAN_STEPS_PER_EXPANSION, SearchError, WEIGHT_SCALE, heuristic,
};
use super::size_class::{MAX_UNIT_SIZE, SizeClass};

/// Which way a flood's paths run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
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
/// A [`guided`](Flood::guided) flood is an A* search instead: it heads for
/// the box round its targets (the octile distance to the box times the
/// cheapest cost, a consistent heuristic), so it settles targets gathered
/// in one part of the map without flooding the rest. Targets can be added
/// while it runs ([`Flood::add_targets`]); the paths it has settled stay
/// optimal.
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
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct Flood {
    source: Cell,
    direction: FloodDirection,
    scratch: Scratch,
    open_stamp: u32,
    /// Fixed-point cost beyond which nothing is expanded.
    max_cost: u64,
    /// Target cell indices not yet settled.
    remaining: IndexSet,
    /// Every target, for a restart.
    targets: Vec<Cell>,
    /// The unit class and size whose anchors it floods (see
    /// [`NavGrid::view`]).
    kind: UnitKind,
    expansions: u64,
    restarts: u32,
    finished: bool,
    grid_shape: (u32, u32, u64),
    /// Whether the flood heads for its targets' box (A*).
    guided: bool,
    /// The box round every target, `[min x, min y, max x, max y]`.
    bounds: Option<[u32; 4]>,
    /// The heuristic's scale (the cheapest walkable cost in
    /// `WEIGHT_SCALE` units; 0 unguided).
    scale: u64,
    /// How open-list keys are packed: f, then ties to the larger g.
    keys: KeyPacking,
    /// Asked to be a jump point flood where the grid allows it
    /// ([`Flood::jump_points`]).
    wants_jumps: bool,
    /// Whether it is one on the grid it runs on.
    jumps: bool,
    /// The targets not yet settled, by row and column, for its scans.
    lines: Targets,
    /// The box its scans have read, `[min x, min y, max x, max y]`.
    scanned: Option<[i64; 4]>,
    /// Scan steps not yet charged as an expansion.
    carry: u32,
    /// For a jump point flood, the targets it has settled: a node it closed
    /// without it being a target may have been reached by a dearer way
    /// first (its cheapest way passes it in the middle of a scan), so only
    /// targets are settled.
    settled: IndexSet,
    /// Work done past an earlier step's budget, charged first.
    debt: u64,
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
            UnitKind::sized(1),
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
        Self::with_scratch(
            pool.take(),
            grid,
            UnitKind::sized(1),
            source,
            direction,
            targets,
            max_cost,
        )
    }

    /// As [`Flood::new`], in the given scratch space, for units of `kind`
    /// (size 1 to [`MAX_UNIT_SIZE`], a class the grid has): the source,
    /// targets and paths are then anchors, and the flood goes only where
    /// the footprint fits and the class may go (see [`NavGrid::view`]).
    pub fn with_scratch(
        scratch: Scratch,
        grid: &NavGrid,
        kind: UnitKind,
        source: Cell,
        direction: FloodDirection,
        targets: impl IntoIterator<Item = Cell>,
        max_cost: Option<f64>,
    ) -> Result<Self, SearchError> {
        if !(1..=MAX_UNIT_SIZE).contains(&kind.size) {
            return Err(SearchError::BadSize(kind.size));
        }
        let Some(grid) = grid.view(kind) else {
            return Err(SearchError::UnknownClass(kind.class));
        };
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
            remaining: IndexSet::default(),
            targets: targets.into_iter().collect(),
            kind,
            expansions: 0,
            restarts: 0,
            finished: false,
            grid_shape: (0, 0, 0),
            guided: false,
            bounds: None,
            scale: 0,
            keys: KeyPacking::default(),
            wants_jumps: false,
            jumps: false,
            lines: Targets::default(),
            scanned: None,
            carry: 0,
            settled: IndexSet::default(),
            debt: 0,
        };
        flood.begin(grid);
        Ok(flood)
    }

    /// Makes the flood an A* search towards its targets (see [`Flood`]),
    /// starting over on `grid`. With a cost limit, cells beyond it are
    /// still not expanded, but the flood only ends when its targets are
    /// settled or nothing is left to expand.
    pub fn guided(mut self, grid: &NavGrid) -> Self {
        self.guided = true;
        self.begin(grid.kind_view(self.kind));
        self
    }

    /// Makes the flood a jump point flood where the grid allows it (eight
    /// neighbours, every walkable anchor at one cost, no cost limit),
    /// starting over on `grid`: the same paths and costs, found the way
    /// [`Search`](super::search::Search) finds its own on such maps, for a
    /// fraction of the work. Its work is counted the same way (one per
    /// node, one per [`SCAN_STEPS_PER_EXPANSION`] scan steps, work past a
    /// step's budget charged to the next). A target added later where its
    /// scans have already passed makes it start over, which counts as a
    /// restart (see [`Flood::accepts`]); edits start it over where it has
    /// scanned.
    pub fn jump_points(mut self, grid: &NavGrid) -> Self {
        self.wants_jumps = true;
        self.begin(grid.kind_view(self.kind));
        self
    }

    /// Whether a jump point flood runs on `grid`.
    fn uses_jumps(&self, grid: SizeClass<'_>) -> bool {
        self.wants_jumps
            && self.max_cost == u64::MAX
            && grid.neighborhood() == Neighborhood::Eight
            && grid.min_walkable_cost() == grid.max_walkable_cost()
            && grid.walk_bits().is_some()
    }

    /// Whether `cell` can be served without starting over: settled
    /// already, or (for a jump point flood) where its scans have not been.
    pub fn accepts(&self, grid: &NavGrid, cell: Cell) -> bool {
        self.is_settled(grid, cell) || !self.inside_scanned(cell)
    }

    /// Whether a jump point flood's scans have read `cell`.
    fn inside_scanned(&self, cell: Cell) -> bool {
        self.jumps
            && self.scanned.is_some_and(|[min_x, min_y, max_x, max_y]| {
                (min_x..=max_x).contains(&(cell.x as i64))
                    && (min_y..=max_y).contains(&(cell.y as i64))
            })
    }

    /// The heuristic's scale on `grid`.
    fn scale_on(&self, grid: SizeClass<'_>) -> u64 {
        if self.guided {
            grid.min_walkable_cost() as u64 * WEIGHT_SCALE
        } else {
            0
        }
    }

    /// The lower bound on the cost between `cell` and the targets' box.
    fn h(&self, grid: SizeClass<'_>, cell: Cell) -> u64 {
        if self.guided {
            guided_h(grid, self.bounds, self.scale, cell)
        } else {
            0
        }
    }

    /// The box round `cells` joined with `bounds`.
    fn grow(bounds: Option<[u32; 4]>, cells: &[Cell]) -> Option<[u32; 4]> {
        cells.iter().fold(bounds, |bounds, cell| {
            let [min_x, min_y, max_x, max_y] = bounds.unwrap_or([cell.x, cell.y, cell.x, cell.y]);
            Some([
                min_x.min(cell.x),
                min_y.min(cell.y),
                max_x.max(cell.x),
                max_y.max(cell.y),
            ])
        })
    }

    /// Adds targets to a flood that may be running or finished: it carries
    /// on until they are settled too. A target already settled is ready at
    /// once ([`Flood::is_settled`]). A guided flood whose targets' box
    /// grows re-keys its open list for the new box (a smaller heuristic, still
    /// consistent, so what it has settled stays optimal).
    pub fn add_targets(&mut self, grid: &NavGrid, cells: impl IntoIterator<Item = Cell>) {
        let grid = grid.kind_view(self.kind);
        let added: Vec<Cell> = cells.into_iter().collect();
        let mut over = false;
        for &cell in &added {
            self.targets.push(cell);
            let Some(index) = grid.index(cell).filter(|_| grid.is_walkable(cell)) else {
                continue;
            };
            if !self.is_settled_index(index) {
                self.remaining.insert(index as u32);
                self.finished = false;
                // A scan went over it without stopping: it can no longer be
                // reached from what the flood has.
                over |= self.inside_scanned(cell);
                self.lines.insert(cell.x, cell.y);
            }
        }
        if over {
            self.restarts += 1;
            self.begin(grid);
            return;
        }
        let bounds = Self::grow(self.bounds, &added);
        if bounds == self.bounds {
            return;
        }
        self.bounds = bounds;
        if self.guided {
            let items = self.scratch.open.items().to_vec();
            self.scratch.open.clear();
            for index in items {
                let g = self.scratch.nodes.g[index as usize];
                let key = self
                    .keys
                    .key(g + self.h(grid, grid.cell(index as usize)), g);
                self.scratch
                    .open
                    .push(key, index, &mut self.scratch.nodes.position[..]);
            }
        }
    }

    /// Whether `cell` is settled: its path ([`Flood::path`]) and cost are
    /// final. Never on a grid of another size than the one the flood last
    /// ran on.
    pub fn is_settled(&self, grid: &NavGrid, cell: Cell) -> bool {
        self.settled_index(grid, cell).is_some()
    }

    /// (Re)starts the flood on `grid`; a source that is not walkable ends
    /// it at once.
    fn begin(&mut self, grid: SizeClass<'_>) {
        self.grid_shape = (grid.width(), grid.height(), grid.version());
        self.open_stamp = self.scratch.begin(grid.cell_count());
        self.bounds = Self::grow(None, &self.targets);
        self.scale = self.scale_on(grid);
        self.keys = if self.guided {
            KeyPacking::new(grid, self.scale)
        } else {
            KeyPacking::default()
        };
        self.remaining = self
            .targets
            .iter()
            .filter(|&&cell| grid.is_walkable(cell))
            .filter_map(|&cell| grid.index(cell).map(|i| i as u32))
            .collect();
        self.finished = self.remaining.is_empty();
        self.jumps = self.uses_jumps(grid);
        self.scanned = None;
        self.carry = 0;
        self.debt = 0;
        self.settled.clear();
        self.lines = Targets::default();
        if self.jumps {
            self.lines = Targets::new(grid.width(), grid.height());
            for &index in &self.remaining {
                let cell = grid.cell(index as usize);
                self.lines.insert(cell.x, cell.y);
            }
        }
        match grid
            .index(self.source)
            .filter(|_| grid.is_walkable(self.source))
        {
            Some(start) => {
                let key = self.keys.key(self.h(grid, self.source), 0);
                self.scratch.open_source(start as u32, self.open_stamp, key)
            }
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
            || self.scale != self.scale_on(grid)
            || self.guided && grid.max_walkable_cost() > self.keys.max_cost
            || self.jumps != self.uses_jumps(grid)
            || match &changes {
                GridChanges::Everything => true,
                GridChanges::Cells(cells) => cells.iter().any(|&cell| {
                    let read = if self.jumps {
                        self.inside_scanned(cell)
                    } else {
                        self.scratch
                            .nodes
                            .has_read(cell, width, height, self.open_stamp)
                    };
                    cell == self.source
                        || home.is_some_and(|home| grid.touches_region(cell, home)) && read
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
                } else if !self.is_settled_index(index as usize) {
                    self.remaining.insert(index);
                    self.lines.insert(cell.x, cell.y);
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

    /// The grid version the flood is up to date with: its paths are those
    /// of that version.
    pub fn grid_version(&self) -> u64 {
        self.grid_shape.2
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

    /// Bytes of memory the flood holds: its scratch space (16 bytes per
    /// cell of the largest grid it has run on) and its open list.
    pub fn memory_bytes(&self) -> usize {
        self.scratch.memory_bytes()
    }

    /// Gives back the scratch space.
    pub fn into_scratch(self) -> Scratch {
        self.scratch
    }

    /// Runs the flood to its end.
    pub fn run(&mut self, grid: &NavGrid) {
        while !self.step(grid, u32::MAX) {}
    }

    /// Brings the flood up to date with `grid` without expanding a cell,
    /// as [`Flood::step`] does first, and also when it has finished (which
    /// `step` leaves as it is): it carries on from what it has if no edit
    /// since touches what it read, and starts over otherwise. Its paths are
    /// then those of `grid` ([`Flood::grid_version`]); a target walled off
    /// is no longer waited for, and one it must now settle (a target that
    /// became walkable) makes it run again.
    pub fn update(&mut self, grid: &NavGrid) {
        let grid = grid.kind_view(self.kind);
        if self.grid_shape == (grid.width(), grid.height(), grid.version()) {
            return;
        }
        let restarts = self.restarts;
        self.catch_up(grid);
        if self.restarts == restarts {
            self.finished = self.remaining.is_empty();
        }
    }

    /// Expands at most `budget` cells; returns whether the flood has ended.
    /// On an edited grid it carries on where it was when no changed cell
    /// lies next to a cell it settled, and starts over otherwise (see
    /// [`Flood::restarts`]). A finished flood stays as it is (see
    /// [`Flood::update`]). A jump point flood's work past `budget` is
    /// charged to its next steps.
    pub fn step(&mut self, grid: &NavGrid, budget: u32) -> bool {
        if self.finished {
            return true;
        }
        let grid = grid.kind_view(self.kind);
        if self.grid_shape != (grid.width(), grid.height(), grid.version()) {
            self.catch_up(grid);
            if self.finished {
                return true;
            }
        }
        if self.jumps {
            return self.step_jumps(grid, budget);
        }
        let open = self.open_stamp;
        let Scratch {
            nodes, open: heap, ..
        } = &mut self.scratch;
        let moves = match grid.neighborhood() {
            Neighborhood::Four => 4,
            Neighborhood::Eight => 8,
        };
        let (width, height, costs) = (grid.width(), grid.height(), grid.costs());
        let rows = RowDivider::new(width);
        let offsets = Moves::new(width);
        let guide = self.guided.then_some((self.bounds, self.scale));
        let keys = self.keys;
        let h = |cell: Cell| match guide {
            Some((bounds, scale)) => guided_h(grid, bounds, scale, cell),
            None => 0,
        };
        let mut expanded = 0;
        while expanded < budget {
            let Some((_, current)) = heap.peek() else {
                self.finished = true;
                break;
            };
            let g = nodes.g[current as usize];
            if g > self.max_cost && guide.is_none() {
                self.finished = true;
                break;
            }
            heap.pop(&mut nodes.position[..]);
            expanded += 1;
            scratch::close(&mut nodes.stamp, current, open);
            // The last target ends the flood once its neighbours are open,
            // so that targets added later resume from a whole frontier.
            let last = self.remaining.remove(&current) && self.remaining.is_empty();
            if g > self.max_cost {
                if last {
                    self.finished = true;
                    break;
                }
                continue;
            }
            // The neighbour loop of a search (`Search::expand_with`): flat
            // indices, bounds by the cell's row and column, a diagonal only
            // where both cells beside it are walkable. Written out in both:
            // with the test in a shared function (inlined), both loops ran
            // 5% more instructions (`tools/budget_cost.py`).
            let y = rows.row_of(current);
            let x = current - y * width;
            let here_cost = costs[current as usize];
            let in_grid = [x + 1 < width, x > 0, y + 1 < height, y > 0];
            let mut walkable = [false; 4];
            let directions = if here_cost == NavGrid::BLOCKED {
                0
            } else {
                moves
            };
            for direction in 0..directions {
                let allowed = if direction < 4 {
                    in_grid[direction]
                } else {
                    let [a, b] = DIAGONAL_SIDES[direction - 4];
                    walkable[a] & walkable[b]
                };
                if !allowed {
                    continue;
                }
                let index = current.wrapping_add(offsets.offsets[direction] as u32) as usize;
                let cost = costs[index];
                if cost == NavGrid::BLOCKED {
                    continue;
                }
                if direction < 4 {
                    walkable[direction] = true;
                }
                let generation = scratch::generation(nodes.stamp[index]);
                if generation == open + 1 {
                    continue;
                }
                // The move's cost is the cost of the cell it enters.
                let entered = match self.direction {
                    FloodDirection::FromSource => cost,
                    FloodDirection::ToSource => here_cost,
                };
                let next_g = g + entered as u64 * step_cost(direction);
                if generation == open && next_g >= nodes.g[index] {
                    continue;
                }
                nodes.open(index as u32, open, next_g, direction);
                let (nx, ny) = offsets.cell_of(direction, x, y);
                let key = keys.key(next_g + h(Cell::new(nx, ny)), next_g);
                if generation == open {
                    let position = nodes.position[index];
                    heap.decrease_key(position, key, &mut nodes.position[..]);
                } else {
                    heap.push(key, index as u32, &mut nodes.position[..]);
                }
            }
            if last {
                self.finished = true;
                break;
            }
        }
        self.expansions += expanded as u64;
        self.finished
    }

    /// [`Flood::step`] for a jump point flood: the successors of a cell are
    /// the jump points its scans find, and the targets they pass on the way
    /// (see [`JumpGrid::with_targets`]).
    fn step_jumps(&mut self, grid: SizeClass<'_>, budget: u32) -> bool {
        // Work done past an earlier step's budget is paid for first.
        let paid = self.debt.min(budget as u64);
        self.debt -= paid;
        self.expansions += paid;
        let budget = budget - paid as u32;
        if self.debt > 0 {
            return self.finished;
        }
        let Some(bits) = grid.walk_bits() else {
            return self.finished;
        };
        let jumps = JumpGrid::with_targets(bits, &self.lines);
        let width = grid.width();
        let unit = grid.min_walkable_cost() as u64;
        let source = grid.index(self.source).unwrap_or_default() as u32;
        let open = self.open_stamp;
        let (bounds, scale, keys) = (self.bounds, self.scale, self.keys);
        let guided = self.guided;
        let h = |x: u32, y: u32| {
            if guided {
                guided_h(grid, bounds, scale, Cell::new(x, y))
            } else {
                0
            }
        };
        let Scratch {
            nodes, open: heap, ..
        } = &mut self.scratch;
        let mut scanned = self
            .scanned
            .unwrap_or([i64::MAX, i64::MAX, i64::MIN, i64::MIN]);
        let mut carry = self.carry;
        let mut spent = 0u64;
        let mut hits = Vec::new();
        let mut settled_now = Vec::new();
        const STEPS: u32 = SCAN_STEPS_PER_EXPANSION;
        while spent < budget as u64 {
            let Some((_, current)) = heap.pop(&mut nodes.position[..]) else {
                self.finished = true;
                break;
            };
            spent += 1;
            let arrived = scratch::close(&mut nodes.stamp, current, open);
            let g = nodes.g[current as usize];
            let settled = self.remaining.remove(&current);
            let last = settled && self.remaining.is_empty();
            let (x, y) = (current % width, current / width);
            if settled {
                settled_now.push((x, y));
                self.settled.insert(current);
            }
            cover(&mut scanned, x as i64, y as i64, x as i64, y as i64);
            let arrived = (current != source).then_some(arrived);
            let granted = u32::MAX;
            let mut allowance = granted;
            let reached = |direction: usize, steps: u32, (nx, ny): (u32, u32)| {
                let next = ny * width + nx;
                let next_g = g + steps as u64 * unit * step_cost(direction);
                let generation = scratch::generation(nodes.stamp[next as usize]);
                if generation == open + 1
                    || (generation == open && next_g >= nodes.g[next as usize])
                {
                    return;
                }
                nodes.open(next, open, next_g, direction);
                let key = keys.key(next_g + h(nx, ny), next_g);
                if generation == open {
                    let position = nodes.position[next as usize];
                    heap.decrease_key(position, key, &mut nodes.position[..]);
                } else {
                    heap.push(key, next, &mut nodes.position[..]);
                }
            };
            jumps.expand(
                (x, y),
                arrived,
                &mut allowance,
                &mut scanned,
                &mut hits,
                reached,
            );
            carry += granted - allowance;
            spent += (carry / STEPS) as u64;
            carry %= STEPS;
            if last {
                self.finished = true;
                break;
            }
        }
        // Settled targets need not stop scans any more.
        for (x, y) in settled_now {
            self.lines.remove(x, y);
        }
        self.scanned = (scanned[0] <= scanned[2]).then_some(scanned);
        self.carry = carry;
        let charged = spent.min(budget as u64);
        self.expansions += charged;
        self.debt += spent - charged;
        self.finished
    }

    fn settled_index(&self, grid: &NavGrid, cell: Cell) -> Option<usize> {
        // Its records are by cell index on the grid it ran on: on a grid of
        // another shape (a replaced map) they mean nothing.
        let (width, height, _) = self.grid_shape;
        if (grid.width(), grid.height()) != (width, height) {
            return None;
        }
        let index = grid.index(cell)?;
        self.is_settled_index(index).then_some(index)
    }

    /// Whether the cell with `index` is settled: closed, and for a jump
    /// point flood settled as a target.
    fn is_settled_index(&self, index: usize) -> bool {
        self.scratch.nodes.is_closed(index, self.open_stamp)
            && (!self.jumps || self.settled.contains(&(index as u32)))
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
        let back = if self.jumps {
            let unit = grid.kind_view(self.kind).min_walkable_cost() as u64;
            nodes.walk_back_jumps(end as u32, source, &moves, self.open_stamp, unit)
        } else {
            nodes.walk_back(end as u32, source, &moves)
        };
        let mut cells: Vec<Cell> = back
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

/// A guided flood's heuristic: the octile (or Manhattan) distance from
/// `cell` to the box `bounds`, times `scale`.
#[inline(always)]
fn guided_h(grid: SizeClass<'_>, bounds: Option<[u32; 4]>, scale: u64, cell: Cell) -> u64 {
    let Some([min_x, min_y, max_x, max_y]) = bounds else {
        return 0;
    };
    let gap = |v: u32, low: u32, high: u32| low.saturating_sub(v).max(v.saturating_sub(high));
    let (dx, dy) = (gap(cell.x, min_x, max_x), gap(cell.y, min_y, max_y));
    match grid.neighborhood() {
        Neighborhood::Eight => heuristic::<true>(dx, dy, scale),
        Neighborhood::Four => heuristic::<false>(dx, dy, scale),
    }
}
