//! A coarse graph over a size class, for routes whose work does not grow
//! with the map (hierarchical A*, HPA*).
//!
//! The grid is cut into square clusters of [`CLUSTER`] cells. Where two
//! clusters touch, each run of border cells walkable on both sides is an
//! *entrance*: one pair of facing cells in the run's middle for a short
//! run, one at each end and one in the middle for a long one. Each cluster
//! keeps its entrance cells (its *nodes*) and the cost between every two of
//! them along a path that stays in the cluster, found by Dijkstra's
//! algorithm on the cluster's own cells with the real move costs. A route
//! is then an A* over the nodes (a step across a border between two nodes
//! costs the entered cell; a step inside a cluster costs what its table
//! says), from the nodes the start reaches in its own cluster to those
//! that reach the goal in the goal's, followed by the *refinement* of each
//! leg: an A* inside one cluster between two of its nodes.
//!
//! The graph is for one size class, so a unit of any size gets a route its
//! footprint fits along (one graph per size in use, as a size class is one
//! grid per size). Edits make the clusters they touch (and a neighbour
//! whose border cells they change) *dirty*; [`CoarseGraph::repair`] builds
//! dirty clusters again, so an edit costs the graph the clusters round it,
//! never the whole map. Routes are legal by construction: every leg is a
//! path on the grid under its move rules.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::grid::{Cell, GridChanges, Neighborhood};
use super::heap::{HeapPositions, OpenList};
use super::moves::{COST_SCALE, DIAGONAL_SIDES, MOVE_DELTAS, octile, step_cost};
use super::search::Path;
use super::size_class::SizeClass;

/// Hashes the `u32` keys of the graph's maps (cell and cluster indices)
/// with one multiply: small distinct integers, not input to defend
/// against, on the node search's hottest path.
#[derive(Clone, Copy, Debug, Default)]
struct IndexHasher(u64);

impl Hasher for IndexHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ byte as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0 ^ n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// A map keyed by cell or cluster index.
type IndexMap<V> = HashMap<u32, V, BuildHasherDefault<IndexHasher>>;

/// The side of a cluster, in cells.
pub const CLUSTER: u32 = 16;

/// Runs of at least this many border cells get an entrance at each end as
/// well as in the middle.
const LONG_RUN: u32 = 6;

/// Intra-cluster costs are kept in `u16`s, in units of `COST_SCALE >>
/// COARSE_SHIFT` (a quarter of a step on plain ground): up to 16,382
/// quarter steps, which a path across a cluster reaches only on ground
/// costing 45 or more all the way. Dearer paths are kept at that ceiling:
/// the table guides the node search, the legs are refined at their exact
/// cost.
const COARSE_SHIFT: u32 = 18;

/// No path inside the cluster.
const NONE: u16 = u16::MAX;

/// Two entrances joining the same pieces of two clusters (cells connected
/// inside each cluster) are at least this many cells apart along a
/// border: a route crossing between them loses at most a few steps, and
/// the nodes (and the tables, which grow with their square) stay few.
const SPACING: u32 = 6;

/// Not on a heap (see [`HeapPositions`]).
const ABSENT: u32 = u32::MAX;

/// A coarse graph over one size class of a grid; see the module docs.
#[derive(Clone, Debug)]
pub struct CoarseGraph {
    size: u8,
    width: u32,
    height: u32,
    neighborhood: Neighborhood,
    /// Clusters per row and per column.
    columns: u32,
    rows: u32,
    /// Per cluster: `[n, nodes (n, ascending cell indices inside the
    /// cluster, row by row), costs (n × n, row by row, from row node to
    /// column node, `NONE` if unreachable)]`; empty while dirty.
    clusters: Vec<Box<[u16]>>,
    /// Dirty clusters, each once, in the order they became dirty.
    dirty: Vec<u32>,
    /// Whether each cluster is in `dirty`.
    is_dirty: Vec<bool>,
    /// The grid version the graph (with its dirty clusters built) reflects.
    version: u64,
}

impl CoarseGraph {
    /// A graph for `class` with every cluster still to build
    /// ([`repair`](Self::repair) builds them).
    pub fn new(class: &SizeClass<'_>) -> Self {
        let columns = class.width().div_ceil(CLUSTER);
        let rows = class.height().div_ceil(CLUSTER);
        let count = (columns * rows) as usize;
        Self {
            size: class.size(),
            width: class.width(),
            height: class.height(),
            neighborhood: class.neighborhood(),
            columns,
            rows,
            clusters: vec![Box::default(); count],
            dirty: (0..count as u32).collect(),
            is_dirty: vec![true; count],
            version: class.version(),
        }
    }

    /// A graph for `class`, every cluster built.
    pub fn build(class: &SizeClass<'_>) -> Self {
        let mut graph = Self::new(class);
        graph.repair(class, u64::MAX);
        graph
    }

    /// The unit size it is for.
    pub fn size(&self) -> u8 {
        self.size
    }

    /// Whether it was made for a grid of this class's size and move set
    /// (an edit never changes them; a replaced grid may).
    pub fn fits(&self, class: &SizeClass<'_>) -> bool {
        (self.size, self.width, self.height, self.neighborhood)
            == (
                class.size(),
                class.width(),
                class.height(),
                class.neighborhood(),
            )
    }

    /// Marks the clusters that the edits since the graph's version touched
    /// as dirty (all of them if the grid lost count or is another grid of
    /// the same size). Returns how many clusters are dirty now.
    pub fn note_edits(&mut self, class: &SizeClass<'_>) -> usize {
        if class.version() == self.version {
            return self.dirty.len();
        }
        match class.changes_since(self.version) {
            GridChanges::Cells(cells) => {
                for cell in cells {
                    self.touch(cell);
                }
            }
            GridChanges::Everything => {
                for cluster in 0..self.clusters.len() as u32 {
                    self.mark(cluster);
                }
            }
        }
        self.version = class.version();
        self.dirty.len()
    }

    /// Builds dirty clusters, oldest first, until about `most` cells have
    /// been expanded (a cluster is built whole once started). Returns the
    /// expansions spent. Call [`note_edits`](Self::note_edits) first.
    pub fn repair(&mut self, class: &SizeClass<'_>, most: u64) -> u64 {
        self.note_edits(class);
        let mut spent = 0;
        let mut local = Local::default();
        let mut pieces = Pieces::default();
        let mut done = 0;
        while done < self.dirty.len() && spent < most {
            let cluster = self.dirty[done];
            let (table, work) = build_cluster(self, class, cluster, &mut local, &mut pieces);
            self.clusters[cluster as usize] = table;
            self.is_dirty[cluster as usize] = false;
            spent += work;
            done += 1;
        }
        self.dirty.drain(..done);
        spent
    }

    /// Whether every cluster is built and up to date with `class`.
    pub fn is_ready(&self, class: &SizeClass<'_>) -> bool {
        self.dirty.is_empty() && self.version == class.version()
    }

    /// Clusters in all.
    pub fn cluster_count(&self) -> usize {
        self.clusters.len()
    }

    /// Clusters still to build.
    pub fn dirty_count(&self) -> usize {
        self.dirty.len()
    }

    /// Entrance cells (nodes) in all built clusters.
    pub fn node_count(&self) -> usize {
        self.clusters
            .iter()
            .map(|table| table.first().copied().unwrap_or(0) as usize)
            .sum()
    }

    /// Bytes of memory the graph holds.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.clusters.capacity() * std::mem::size_of::<Box<[u16]>>()
            + self
                .clusters
                .iter()
                .map(|table| table.len() * 2)
                .sum::<usize>()
            + self.dirty.capacity() * 4
    }

    fn mark(&mut self, cluster: u32) {
        let i = cluster as usize;
        self.clusters[i] = Box::default();
        if !self.is_dirty[i] {
            self.is_dirty[i] = true;
            self.dirty.push(cluster);
        }
    }

    /// An anchor changed: its cluster is dirty, and so are the four beside
    /// it (the entrances on their shared borders depend on the cells of
    /// both, and on which of them are joined inside each).
    fn touch(&mut self, cell: Cell) {
        if cell.x >= self.width || cell.y >= self.height {
            return;
        }
        let (cx, cy) = (cell.x / CLUSTER, cell.y / CLUSTER);
        self.mark(cy * self.columns + cx);
        let around = [
            cx.checked_sub(1).map(|x| (x, cy)),
            (cx + 1 < self.columns).then_some((cx + 1, cy)),
            cy.checked_sub(1).map(|y| (cx, y)),
            (cy + 1 < self.rows).then_some((cx, cy + 1)),
        ];
        for (x, y) in around.into_iter().flatten() {
            self.mark(y * self.columns + x);
        }
    }

    fn cluster_of(&self, cell: Cell) -> u32 {
        (cell.y / CLUSTER) * self.columns + cell.x / CLUSTER
    }

    /// The cells of cluster `cluster`: `(x0, y0, w, h)`.
    fn bounds(&self, cluster: u32) -> (u32, u32, u32, u32) {
        let (cx, cy) = (cluster % self.columns, cluster / self.columns);
        let (x0, y0) = (cx * CLUSTER, cy * CLUSTER);
        (
            x0,
            y0,
            CLUSTER.min(self.width - x0),
            CLUSTER.min(self.height - y0),
        )
    }

    /// The nodes of a built cluster (empty if dirty), as indices inside it.
    fn local_nodes(&self, cluster: u32) -> &[u16] {
        let table = &self.clusters[cluster as usize];
        match table.first() {
            Some(&n) => &table[1..1 + n as usize],
            None => &[],
        }
    }

    /// The nodes of a built cluster, as grid cell indices, in order.
    fn nodes(&self, cluster: u32) -> impl Iterator<Item = u32> + '_ {
        let (x0, y0, w, _) = self.bounds(cluster);
        self.local_nodes(cluster)
            .iter()
            .map(move |&i| (y0 + i as u32 / w) * self.width + x0 + i as u32 % w)
    }

    /// The position of grid cell index `node` among its cluster's nodes.
    fn node_position(&self, cluster: u32, node: u32) -> Option<usize> {
        let (x0, y0, w, _) = self.bounds(cluster);
        let (x, y) = (node % self.width, node / self.width);
        let local = (y - y0) * w + (x - x0);
        self.local_nodes(cluster)
            .binary_search(&(local as u16))
            .ok()
    }

    /// The cost inside cluster `cluster` from its node `from` to its node
    /// `to` (positions among its nodes), fixed point; `None` if there is
    /// no path inside the cluster.
    fn inner_cost(&self, cluster: u32, from: usize, to: usize) -> Option<u64> {
        let table = &self.clusters[cluster as usize];
        let n = table[0] as usize;
        let cost = table[1 + n + from * n + to];
        (cost != NONE).then_some((cost as u64) << COARSE_SHIFT)
    }
}

/// The offsets along a border of `len` cells where entrances go, given
/// which cells can be crossed and which pieces of the two clusters each
/// crossing joins (`piece`: its cells' labels on the lower and the higher
/// side). A run of crossings gets one entrance in its middle, a long run
/// one at each end too; one is left out where an entrance joining the same
/// pieces lies less than [`SPACING`] cells away. The first entrance
/// joining two pieces is never left out, so every way across the border
/// can still be taken (walking inside each cluster to an entrance that
/// joins the same pieces).
fn entrances(
    len: u32,
    crossing: impl Fn(u32) -> bool,
    piece: impl Fn(u32) -> (u16, u16),
    out: &mut Vec<u32>,
) {
    let mut placed: Vec<(u32, (u16, u16))> = Vec::new();
    let mut i = 0;
    while i < len {
        if !crossing(i) {
            i += 1;
            continue;
        }
        let start = i;
        while i < len && crossing(i) {
            i += 1;
        }
        let end = i - 1;
        let run = end - start + 1;
        let middle = start + run / 2;
        let candidates: &[u32] = if run >= LONG_RUN {
            &[start, middle, end]
        } else {
            &[middle]
        };
        for &at in candidates {
            let joins = piece(at);
            if placed
                .iter()
                .any(|&(other, pieces)| pieces == joins && other.abs_diff(at) < SPACING)
            {
                continue;
            }
            placed.push((at, joins));
            out.push(at);
        }
    }
}

/// The pieces of the clusters a repair has labelled: each cluster's are
/// read when it is built and when each of its four neighbours is, so a
/// full build labels every cluster once, not five times. Bounded to a few
/// rows of clusters.
#[derive(Default)]
struct Pieces(IndexMap<Vec<u16>>);

impl Pieces {
    /// Labels `cluster` unless it is held.
    fn fill(&mut self, graph: &CoarseGraph, class: &SizeClass<'_>, cluster: u32) {
        if self.0.len() > 4 * graph.columns as usize + 8 {
            self.0.clear();
        }
        self.0
            .entry(cluster)
            .or_insert_with(|| pieces(class, graph.bounds(cluster)));
    }

    /// The labels of a cluster [`fill`](Self::fill) was given.
    fn of(&self, cluster: u32) -> &[u16] {
        self.0.get(&cluster).map_or(&[], Vec::as_slice)
    }
}

/// Labels the pieces of the area `(x0, y0, w, h)`: walkable cells joined
/// inside it share a label (4-connected, which under the corner rule is
/// what 8-neighbour moves join too); walls get `u16::MAX`.
fn pieces(class: &SizeClass<'_>, (x0, y0, w, h): (u32, u32, u32, u32)) -> Vec<u16> {
    let costs = class.costs();
    let width = class.width();
    let walkable = |i: u32| costs[((y0 + i / w) * width + x0 + i % w) as usize] != 0;
    let mut labels = vec![u16::MAX; (w * h) as usize];
    let mut stack = Vec::new();
    let mut next = 0;
    for seed in 0..w * h {
        if labels[seed as usize] != u16::MAX || !walkable(seed) {
            continue;
        }
        labels[seed as usize] = next;
        stack.push(seed);
        while let Some(i) = stack.pop() {
            let (x, y) = (i % w, i / w);
            let around = [
                (x > 0).then(|| i - 1),
                (x + 1 < w).then(|| i + 1),
                (y > 0).then(|| i - w),
                (y + 1 < h).then(|| i + w),
            ];
            for j in around.into_iter().flatten() {
                if labels[j as usize] == u16::MAX && walkable(j) {
                    labels[j as usize] = next;
                    stack.push(j);
                }
            }
        }
        next += 1;
    }
    labels
}

/// Builds cluster `cluster` of `graph` on `class`: its nodes and the table
/// of costs between them. Returns the table and the cells expanded.
fn build_cluster(
    graph: &CoarseGraph,
    class: &SizeClass<'_>,
    cluster: u32,
    local: &mut Local,
    labels: &mut Pieces,
) -> (Box<[u16]>, u64) {
    let bounds = graph.bounds(cluster);
    let (_, _, w, h) = bounds;
    let (cx, cy) = (cluster % graph.columns, cluster / graph.columns);
    // The four borders: left, right (across x), bottom, top (across y),
    // each with the neighbour across it, if there is one.
    let borders =
        [(true, true), (true, false), (false, true), (false, false)].map(|(across_x, low)| {
            let (nx, ny) = match (across_x, low) {
                (true, true) => (cx.checked_sub(1), Some(cy)),
                (true, false) => (Some(cx + 1), Some(cy)),
                (false, true) => (Some(cx), cy.checked_sub(1)),
                (false, false) => (Some(cx), Some(cy + 1)),
            };
            let neighbour = nx
                .zip(ny)
                .filter(|&(nx, ny)| nx < graph.columns && ny < graph.rows)
                .map(|(nx, ny)| ny * graph.columns + nx);
            (across_x, low, neighbour)
        });
    labels.fill(graph, class, cluster);
    for &(.., neighbour) in &borders {
        if let Some(neighbour) = neighbour {
            labels.fill(graph, class, neighbour);
        }
    }
    let own = labels.of(cluster);
    let mut nodes: Vec<u32> = Vec::new();
    let mut offsets = Vec::new();
    // On each border, the line of cells inside and the neighbour's facing
    // line. A cell's labels are u16::MAX on walls, so both labels say
    // whether it can be crossed.
    for (across_x, low, neighbour) in borders {
        let Some(neighbour) = neighbour else {
            continue;
        };
        let other = graph.bounds(neighbour);
        let theirs = labels.of(neighbour);
        let (ow, oh) = (other.2, other.3);
        // Index inside a cluster of width `cw` of cell `i` along the border
        // on line `line` (a column across x, a row across y).
        let at = |cw: u32, line: u32, i: u32| {
            if across_x {
                i * cw + line
            } else {
                line * cw + i
            }
        };
        let (inside, outside, len) = match (across_x, low) {
            (true, true) => (0, ow - 1, h),
            (true, false) => (w - 1, 0, h),
            (false, true) => (0, oh - 1, w),
            (false, false) => (h - 1, 0, w),
        };
        let labels = |i: u32| {
            let (a, b) = (
                own[at(w, inside, i) as usize],
                theirs[at(ow, outside, i) as usize],
            );
            if low { (b, a) } else { (a, b) }
        };
        offsets.clear();
        entrances(
            len,
            |i| {
                let (a, b) = labels(i);
                a != u16::MAX && b != u16::MAX
            },
            labels,
            &mut offsets,
        );
        nodes.extend(offsets.iter().map(|&i| at(w, inside, i)));
    }
    nodes.sort_unstable();
    nodes.dedup();
    let n = nodes.len();
    let mut table: Vec<u16> = Vec::with_capacity(1 + n + n * n);
    table.push(n as u16);
    table.extend(nodes.iter().map(|&i| i as u16));
    let area = Area::new(class, bounds);
    let mut work = 0;
    for &from in &nodes {
        local.begin(&area, &[(area.padded(from), 0)], None, true);
        work += local.run(&area, u64::MAX);
        table.extend(nodes.iter().map(|&to| {
            local.cost(area.padded(to)).map_or(NONE, |g| {
                let rounded = (g + (1 << (COARSE_SHIFT - 1))) >> COARSE_SHIFT;
                rounded.min(NONE as u64 - 1) as u16
            })
        }));
    }
    (table.into_boxed_slice(), work)
}

/// A cluster's cells as one search sees them: their costs in a local
/// array with a border of walls round it, so a move is an offset and
/// needs no bounds check.
struct Area {
    /// Costs, `(w + 2) × (h + 2)`, walls all round.
    costs: Vec<u8>,
    /// `w + 2`.
    stride: u32,
    /// `(x0, y0, w, h)`.
    bounds: (u32, u32, u32, u32),
    /// Grid width.
    width: u32,
    /// Each move as an offset in the local array.
    offsets: [i64; 8],
    moves: usize,
    /// The cheapest walkable cost, the heuristic's scale.
    min_cost: u64,
}

impl Area {
    fn new(class: &SizeClass<'_>, bounds: (u32, u32, u32, u32)) -> Self {
        let (x0, y0, w, h) = bounds;
        let stride = w + 2;
        let width = class.width();
        let grid = class.costs();
        let mut costs = vec![0u8; (stride * (h + 2)) as usize];
        for y in 0..h {
            let row = ((y0 + y) * width + x0) as usize;
            let at = ((y + 1) * stride + 1) as usize;
            costs[at..at + w as usize].copy_from_slice(&grid[row..row + w as usize]);
        }
        let offsets = MOVE_DELTAS.map(|(dx, dy)| dy as i64 * stride as i64 + dx as i64);
        Self {
            costs,
            stride,
            bounds,
            width,
            offsets,
            moves: match class.neighborhood() {
                Neighborhood::Four => 4,
                Neighborhood::Eight => 8,
            },
            min_cost: class.min_walkable_cost().max(1) as u64,
        }
    }

    fn len(&self) -> usize {
        self.costs.len()
    }

    /// The local index of a grid cell index inside the area.
    fn local(&self, index: u32) -> u32 {
        let (x0, y0, ..) = self.bounds;
        let (x, y) = (index % self.width, index / self.width);
        (y - y0 + 1) * self.stride + (x - x0 + 1)
    }

    /// The local index of a cell index inside the cluster (`y × w + x`).
    fn padded(&self, inside: u32) -> u32 {
        let w = self.bounds.2;
        (inside / w + 1) * self.stride + inside % w + 1
    }

    /// The grid cell of a local index.
    fn cell(&self, local: u32) -> Cell {
        let (x0, y0, ..) = self.bounds;
        Cell::new(x0 + local % self.stride - 1, y0 + local / self.stride - 1)
    }

    #[inline(always)]
    fn cost_at(&self, local: u32) -> u64 {
        self.costs[local as usize] as u64
    }

    /// The local cell one move `direction` from `local`, if the move is
    /// allowed (walkable, inside the area, no corner cut).
    #[inline(always)]
    fn step(&self, local: u32, direction: usize) -> Option<u32> {
        let next = (local as i64 + self.offsets[direction]) as u32;
        if self.costs[next as usize] == 0 {
            return None;
        }
        if direction >= 4 {
            let [a, b] = DIAGONAL_SIDES[direction - 4];
            let side = |m: usize| self.costs[(local as i64 + self.offsets[m]) as usize] == 0;
            if side(a) || side(b) {
                return None;
            }
        }
        Some(next)
    }
}

/// A search confined to one cluster: Dijkstra (forward from sources, or
/// backward to a target) or A* to one cell. Resumable.
#[derive(Clone, Debug, Default)]
struct Local {
    g: Vec<u64>,
    /// The move (index into `MOVE_DELTAS`) that reached each cell.
    via: Vec<u8>,
    /// `stamp[i] == mark` when cell `i` has a score this search.
    stamp: Vec<u32>,
    closed: Vec<bool>,
    mark: u32,
    positions: Vec<u32>,
    open: OpenList<u64>,
    /// A* target (local index) with its cell, or `None` for Dijkstra.
    target: Option<(u32, Cell)>,
    forward: bool,
    /// Set when an A* reached its target.
    reached: bool,
    /// Whether a search was begun and not yet taken up.
    begun: bool,
}

/// A `Local`'s heap positions, borrowed apart from the rest.
struct Positions<'a>(&'a mut [u32]);

impl HeapPositions for Positions<'_> {
    fn set_position(&mut self, item: u32, position: u32) {
        self.0[item as usize] = position;
    }
}

impl Local {
    /// Starts a search over `area` from `sources` (local index, cost).
    /// With `target`, an A* that stops there; `forward` false searches
    /// backward (the cost of a move is that of the cell it leaves, so the
    /// scores are costs *to* the sources).
    fn begin(&mut self, area: &Area, sources: &[(u32, u64)], target: Option<u32>, forward: bool) {
        let len = area.len();
        if self.g.len() < len {
            self.g.resize(len, 0);
            self.via.resize(len, 0);
            self.stamp.resize(len, 0);
            self.closed.resize(len, false);
            self.positions.resize(len, ABSENT);
        }
        self.mark = self.mark.wrapping_add(1);
        if self.mark == 0 {
            self.stamp.fill(0);
            self.mark = 1;
        }
        self.open.clear();
        self.target = target.map(|t| (t, area.cell(t)));
        self.forward = forward;
        self.reached = false;
        self.begun = true;
        for &(source, cost) in sources {
            self.score(area, source, cost, u8::MAX);
        }
    }

    fn heuristic(&self, area: &Area, local: u32) -> u64 {
        match self.target {
            Some((_, goal)) => {
                let cell = area.cell(local);
                octile(cell.x.abs_diff(goal.x), cell.y.abs_diff(goal.y)) * area.min_cost
            }
            None => 0,
        }
    }

    /// Gives `local` the score `g` (reached by move `via`) if it is better.
    fn score(&mut self, area: &Area, local: u32, g: u64, via: u8) {
        let i = local as usize;
        if self.stamp[i] == self.mark {
            if self.closed[i] || g >= self.g[i] {
                return;
            }
            self.g[i] = g;
            self.via[i] = via;
            let key = g + self.heuristic(area, local);
            let position = self.positions[i];
            self.open
                .decrease_key(position, key, &mut Positions(&mut self.positions));
            return;
        }
        self.stamp[i] = self.mark;
        self.closed[i] = false;
        self.g[i] = g;
        self.via[i] = via;
        let key = g + self.heuristic(area, local);
        self.open
            .push(key, local, &mut Positions(&mut self.positions));
    }

    /// Expands at most `most` cells. Returns the cells expanded; the search
    /// is over when [`is_over`](Self::is_over).
    fn run(&mut self, area: &Area, most: u64) -> u64 {
        let mut spent = 0;
        while spent < most {
            let Some((_, local)) = self.open.pop(&mut Positions(&mut self.positions)) else {
                break;
            };
            spent += 1;
            let i = local as usize;
            self.closed[i] = true;
            if self.target.is_some_and(|(t, _)| t == local) {
                self.reached = true;
                self.open.clear();
                break;
            }
            let g = self.g[i];
            let leave = area.cost_at(local);
            for direction in 0..area.moves {
                let Some(next) = area.step(local, direction) else {
                    continue;
                };
                let cost = if self.forward {
                    area.cost_at(next)
                } else {
                    leave
                };
                self.score(area, next, g + cost * step_cost(direction), direction as u8);
            }
        }
        spent
    }

    fn is_over(&self) -> bool {
        self.open.is_empty()
    }

    /// The settled cost of `local`, if the search reached it.
    fn cost(&self, local: u32) -> Option<u64> {
        let i = local as usize;
        (self.stamp.get(i) == Some(&self.mark) && self.closed[i]).then(|| self.g[i])
    }

    /// The cells from the search's source to `local` (forward searches).
    fn path_to(&self, area: &Area, local: u32) -> Vec<Cell> {
        let mut cells = vec![area.cell(local)];
        let mut at = local;
        while self.via[at as usize] != u8::MAX {
            at = (at as i64 - area.offsets[self.via[at as usize] as usize]) as u32;
            cells.push(area.cell(at));
        }
        cells.reverse();
        cells
    }
}

/// Where a [`CoarseRoute`] stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteStatus {
    /// Still working: call [`CoarseRoute::step`] again.
    Running,
    /// The route is refined to the goal: [`CoarseRoute::path`] has it.
    Found,
    /// No route: the goal cannot be reached from the start, or an edit cut
    /// the route while it was refined.
    NotFound,
}

/// A route from one anchor to another over a [`CoarseGraph`], found and
/// refined a budget of expansions at a time.
#[derive(Clone, Debug)]
pub struct CoarseRoute {
    start: Cell,
    goal: Cell,
    /// Heuristic weight over the nodes (`WEIGHT_ONE` = 1).
    weight: u64,
    /// Expansions paid so far towards labelling a cluster's pieces.
    paid: u64,
    phase: Phase,
    local: Local,
    /// Costs from the start to its cluster's nodes: `(node cell, cost)`.
    from_start: Vec<(u32, u64)>,
    /// Costs from the goal cluster's nodes to the goal.
    to_goal: Vec<(u32, u64)>,
    /// A path inside the start's cluster to the goal, if they share one.
    direct: Option<u64>,
    abstract_search: Abstract,
    /// Waypoints: start, nodes, goal.
    waypoints: Vec<Cell>,
    /// The leg being refined (index into `waypoints` of its first end).
    leg: usize,
    cells: Vec<Cell>,
    expansions: u64,
    status: RouteStatus,
}

/// Fixed point for the heuristic weight.
const WEIGHT_ONE: u64 = 1 << 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    FromStart,
    ToGoal,
    Nodes,
    Refine,
    Done,
}

impl CoarseRoute {
    /// A route from `start` to `goal` (anchors of the graph's size class),
    /// with the node search's heuristic weighted by `weight` (1 gives the
    /// best route the graph holds).
    pub fn new(start: Cell, goal: Cell, weight: f32) -> Self {
        let weight = if weight.is_finite() {
            (weight.clamp(1.0, 16.0) * WEIGHT_ONE as f32) as u64
        } else {
            WEIGHT_ONE
        };
        Self {
            start,
            goal,
            weight,
            paid: 0,
            phase: Phase::FromStart,
            local: Local::default(),
            from_start: Vec::new(),
            to_goal: Vec::new(),
            direct: None,
            abstract_search: Abstract::default(),
            waypoints: Vec::new(),
            leg: 0,
            cells: Vec::new(),
            expansions: 0,
            status: RouteStatus::Running,
        }
    }

    /// The start anchor.
    pub fn start(&self) -> Cell {
        self.start
    }

    /// The goal anchor.
    pub fn goal(&self) -> Cell {
        self.goal
    }

    /// Expansions so far (cells in clusters, and nodes).
    pub fn expansions(&self) -> u64 {
        self.expansions
    }

    /// Whether the node search is over and legs are being refined.
    pub fn refining(&self) -> bool {
        matches!(self.phase, Phase::Refine | Phase::Done)
    }

    /// Where it stands.
    pub fn status(&self) -> RouteStatus {
        self.status
    }

    /// The refined route, once [`RouteStatus::Found`]: anchors from start to
    /// goal, each one move from the next, and what walking them costs.
    pub fn path(&self, class: &SizeClass<'_>) -> Option<Path> {
        (self.status == RouteStatus::Found).then(|| walked(class, &self.cells))
    }

    /// The route refined so far, while its legs are being refined: anchors
    /// from the start, each one move from the next (a prefix of the route
    /// [`path`](Self::path) will give), and what walking them costs. `None`
    /// before the node search has ended, and once the route ended without
    /// one.
    pub fn refined(&self, class: &SizeClass<'_>) -> Option<Path> {
        (self.phase == Phase::Refine || self.status == RouteStatus::Found)
            .then(|| walked(class, &self.cells))
    }

    /// Bytes of memory it holds.
    pub fn memory_bytes(&self) -> usize {
        self.local.g.capacity() * 8
            + self.local.via.capacity()
            + self.local.stamp.capacity() * 4
            + self.local.closed.capacity()
            + self.local.positions.capacity() * 4
            + self.abstract_search.memory_bytes()
            + self.cells.capacity() * std::mem::size_of::<Cell>()
    }

    /// Works on the route for at most `budget` expansions. The graph must
    /// be ready for `class` ([`CoarseGraph::is_ready`]); an edit between
    /// steps is fine: legs are refined on the grid as it is, and a route an
    /// edit cut (checked whole when the last leg is refined) ends as
    /// [`RouteStatus::NotFound`], so a found route is always legal on the
    /// grid it was finished on.
    pub fn step(&mut self, graph: &CoarseGraph, class: &SizeClass<'_>, budget: u64) -> RouteStatus {
        let mut left = budget;
        while left > 0 && self.status == RouteStatus::Running {
            let spent = match self.phase {
                Phase::FromStart => self.connect_start(graph, class, left),
                Phase::ToGoal => self.connect_goal(graph, class, left),
                Phase::Nodes => self.nodes(graph, class, left),
                Phase::Refine => self.refine(graph, class, left),
                Phase::Done => break,
            };
            self.expansions += spent;
            left = left.saturating_sub(spent.max(1));
        }
        self.status
    }

    /// Runs the Dijkstra from (`forward`) or to `cell` in its cluster on at
    /// most `most` expansions. Returns them, and once it is over the cost
    /// to (or from) each node of the cluster it reached.
    fn connect(
        &mut self,
        graph: &CoarseGraph,
        class: &SizeClass<'_>,
        cell: Cell,
        forward: bool,
        most: u64,
    ) -> (u64, Option<Vec<(u32, u64)>>) {
        let cluster = graph.cluster_of(cell);
        if graph.cluster_of(self.start) != graph.cluster_of(self.goal) {
            // Labelling the cluster's pieces is paid before it is done, a
            // step's budget at a time.
            let (w, h) = (graph.bounds(cluster).2, graph.bounds(cluster).3);
            let cost = ((w * h) as u64).div_ceil(LABELS_PER_EXPANSION);
            if self.paid < cost {
                let pay = (cost - self.paid).min(most);
                self.paid += pay;
                return (pay, None);
            }
            self.paid = 0;
            return (0, Some(estimate(graph, class, cell, forward)));
        }
        let area = Area::new(class, graph.bounds(cluster));
        let index = class.index(cell).unwrap_or_default() as u32;
        if !self.local.begun {
            self.local
                .begin(&area, &[(area.local(index), 0)], None, forward);
        }
        let spent = self.local.run(&area, most);
        if !self.local.is_over() {
            return (spent, None);
        }
        self.local.begun = false;
        let costs = graph
            .nodes(cluster)
            .filter_map(|node| Some((node, self.local.cost(area.local(node))?)))
            .collect();
        (spent, Some(costs))
    }

    fn connect_start(&mut self, graph: &CoarseGraph, class: &SizeClass<'_>, most: u64) -> u64 {
        if !class.is_walkable(self.start) || !class.is_walkable(self.goal) {
            self.fail();
            return 0;
        }
        let (spent, costs) = self.connect(graph, class, self.start, true, most);
        if let Some(costs) = costs {
            self.from_start = costs;
            let cluster = graph.cluster_of(self.start);
            if graph.cluster_of(self.goal) == cluster {
                let area = Area::new(class, graph.bounds(cluster));
                let goal = class.index(self.goal).unwrap_or_default() as u32;
                self.direct = self.local.cost(area.local(goal));
            }
            self.phase = Phase::ToGoal;
        }
        spent
    }

    fn connect_goal(&mut self, graph: &CoarseGraph, class: &SizeClass<'_>, most: u64) -> u64 {
        let (spent, costs) = self.connect(graph, class, self.goal, false, most);
        if let Some(costs) = costs {
            self.to_goal = costs;
            self.abstract_search.begin(
                graph,
                class,
                &self.from_start,
                self.direct,
                self.goal,
                self.weight,
            );
            self.phase = Phase::Nodes;
        }
        spent
    }

    fn nodes(&mut self, graph: &CoarseGraph, class: &SizeClass<'_>, most: u64) -> u64 {
        let (spent, over) =
            self.abstract_search
                .run(graph, class, &self.to_goal, self.goal, self.weight, most);
        if over {
            match self.abstract_search.waypoints(graph, self.start, self.goal) {
                Some(waypoints) => {
                    self.waypoints = waypoints;
                    self.cells = vec![self.start];
                    self.leg = 0;
                    self.phase = Phase::Refine;
                }
                None => self.fail(),
            }
        }
        spent
    }

    fn refine(&mut self, graph: &CoarseGraph, class: &SizeClass<'_>, most: u64) -> u64 {
        if self.leg + 1 >= self.waypoints.len() {
            // Legs refined in earlier steps may have been cut since.
            if class.can_walk(&self.cells) {
                self.phase = Phase::Done;
                self.status = RouteStatus::Found;
            } else {
                self.fail();
            }
            return 0;
        }
        let (from, to) = (self.waypoints[self.leg], self.waypoints[self.leg + 1]);
        if graph.cluster_of(from) != graph.cluster_of(to) {
            // A step across a border.
            if !class.can_step(from, to) {
                self.fail();
                return 0;
            }
            self.cells.push(to);
            self.leg += 1;
            return 0;
        }
        let area = Area::new(class, graph.bounds(graph.cluster_of(from)));
        let (Some(a), Some(b)) = (class.index(from), class.index(to)) else {
            self.fail();
            return 0;
        };
        let (a, b) = (area.local(a as u32), area.local(b as u32));
        if !self.local.begun {
            if !class.is_walkable(from) {
                self.fail();
                return 0;
            }
            self.local.begin(&area, &[(a, 0)], Some(b), true);
        }
        let spent = self.local.run(&area, most);
        if self.local.reached {
            let leg = self.local.path_to(&area, b);
            self.cells.extend_from_slice(&leg[1..]);
            self.leg += 1;
            self.local.begun = false;
        } else if self.local.is_over() {
            // An edit cut the leg.
            self.fail();
        }
        spent
    }

    fn fail(&mut self) {
        self.phase = Phase::Done;
        self.status = RouteStatus::NotFound;
    }
}

/// The path through `cells` on `class`, with what walking it costs.
fn walked(class: &SizeClass<'_>, cells: &[Cell]) -> Path {
    let total: u64 = cells
        .windows(2)
        .map(|step| {
            let diagonal = step[0].x != step[1].x && step[0].y != step[1].y;
            class.cost(step[1]).unwrap_or(0) as u64 * step_cost(if diagonal { 4 } else { 0 })
        })
        .sum();
    Path {
        cells: cells.to_vec(),
        cost: total as f64 / COST_SCALE as f64,
    }
}

/// A cell of a cluster counts this many times less than an expansion when
/// its pieces are labelled: a flood fill touches each cell once, with no
/// heap (about 70 instructions a cell against 300–400 an expansion).
const LABELS_PER_EXPANSION: u64 = 4;

/// The nodes of `cell`'s cluster that a path inside the cluster joins to
/// it (those in its piece), each with the least a path between them could
/// cost (octile distance at the cheapest cost): the node search starts
/// (`forward`) or ends there, and the leg between is refined like any
/// other. Cheaper than a Dijkstra over the cluster, for a route whose
/// start and goal lie in different clusters (the labelling is charged at
/// [`LABELS_PER_EXPANSION`] cells an expansion).
fn estimate(
    graph: &CoarseGraph,
    class: &SizeClass<'_>,
    cell: Cell,
    forward: bool,
) -> Vec<(u32, u64)> {
    let cluster = graph.cluster_of(cell);
    let bounds = graph.bounds(cluster);
    let (x0, y0, w, _) = bounds;
    let labels = pieces(class, bounds);
    let own = labels[((cell.y - y0) * w + cell.x - x0) as usize];
    let scale = class.min_walkable_cost().max(1) as u64;
    graph
        .nodes(cluster)
        .zip(graph.local_nodes(cluster))
        .filter(|&(_, &local)| labels[local as usize] == own)
        .map(|(node, _)| {
            let at = Cell::new(node % graph.width, node / graph.width);
            let (from, to) = if forward { (cell, at) } else { (at, cell) };
            (
                node,
                octile(from.x.abs_diff(to.x), from.y.abs_diff(to.y)) * scale,
            )
        })
        .collect()
}

/// The A* over the nodes of a [`CoarseGraph`].
#[derive(Clone, Debug, Default)]
struct Abstract {
    /// Node cell → id.
    ids: IndexMap<u32>,
    /// Per id: node cell, score, parent id (`ABSENT` for the start), closed.
    cells: Vec<u32>,
    g: Vec<u64>,
    parent: Vec<u32>,
    closed: Vec<bool>,
    positions: Vec<u32>,
    open: OpenList<u64>,
    /// The best cost found to the goal, and the id it came through
    /// (`ABSENT` for the direct path inside one cluster).
    best: Option<(u64, u32)>,
}

impl Abstract {
    fn memory_bytes(&self) -> usize {
        self.ids.capacity() * 12 + self.cells.capacity() * 25
    }

    fn begin(
        &mut self,
        graph: &CoarseGraph,
        class: &SizeClass<'_>,
        from_start: &[(u32, u64)],
        direct: Option<u64>,
        goal: Cell,
        weight: u64,
    ) {
        *self = Self::default();
        self.best = direct.map(|cost| (cost, ABSENT));
        for &(node, cost) in from_start {
            self.score(graph, class, node, cost, ABSENT, goal, weight);
        }
    }

    fn id(&mut self, node: u32) -> u32 {
        if let Some(&id) = self.ids.get(&node) {
            return id;
        }
        let id = self.cells.len() as u32;
        self.ids.insert(node, id);
        self.cells.push(node);
        self.g.push(u64::MAX);
        self.parent.push(ABSENT);
        self.closed.push(false);
        self.positions.push(ABSENT);
        id
    }

    #[allow(clippy::too_many_arguments)]
    fn score(
        &mut self,
        graph: &CoarseGraph,
        class: &SizeClass<'_>,
        node: u32,
        g: u64,
        parent: u32,
        goal: Cell,
        weight: u64,
    ) {
        let id = self.id(node);
        let i = id as usize;
        if self.closed[i] || g >= self.g[i] {
            return;
        }
        let cell = Cell::new(node % graph.width, node / graph.width);
        let h = octile(cell.x.abs_diff(goal.x), cell.y.abs_diff(goal.y))
            * class.min_walkable_cost().max(1) as u64;
        let key = g + (h as u128 * weight as u128 / WEIGHT_ONE as u128) as u64;
        let fresh = self.g[i] == u64::MAX;
        self.g[i] = g;
        self.parent[i] = parent;
        if fresh {
            self.open.push(key, id, &mut Positions(&mut self.positions));
        } else {
            let position = self.positions[i];
            self.open
                .decrease_key(position, key, &mut Positions(&mut self.positions));
        }
    }

    /// Expands at most `most` nodes; returns the expansions and whether
    /// the search is over.
    fn run(
        &mut self,
        graph: &CoarseGraph,
        class: &SizeClass<'_>,
        to_goal: &[(u32, u64)],
        goal: Cell,
        weight: u64,
        most: u64,
    ) -> (u64, bool) {
        let goal_cluster = graph.cluster_of(goal);
        let mut spent = 0;
        while spent < most {
            let Some((key, id)) = self.open.peek() else {
                return (spent, true);
            };
            // The best route is settled once no open node can beat it (with
            // a weight, once none can beat it by the weight's margin).
            if self.best.is_some_and(|(best, _)| key >= best) {
                return (spent, true);
            }
            self.open.pop(&mut Positions(&mut self.positions));
            spent += 1;
            let i = id as usize;
            self.closed[i] = true;
            let (node, g) = (self.cells[i], self.g[i]);
            let cell = Cell::new(node % graph.width, node / graph.width);
            let cluster = graph.cluster_of(cell);
            if cluster == goal_cluster
                && let Some(&(_, rest)) = to_goal.iter().find(|(n, _)| *n == node)
                && self.best.is_none_or(|(best, _)| g + rest < best)
            {
                self.best = Some((g + rest, id));
            }
            let Some(at) = graph.node_position(cluster, node) else {
                // No longer a node: an edit moved the entrances.
                continue;
            };
            for (j, other) in graph.nodes(cluster).enumerate() {
                if j == at {
                    continue;
                }
                if let Some(cost) = graph.inner_cost(cluster, at, j) {
                    self.score(graph, class, other, g + cost, id, goal, weight);
                }
            }
            for (dx, dy) in &MOVE_DELTAS[..4] {
                let (x, y) = (cell.x as i64 + *dx as i64, cell.y as i64 + *dy as i64);
                if !(0..graph.width as i64).contains(&x) || !(0..graph.height as i64).contains(&y) {
                    continue;
                }
                let next = Cell::new(x as u32, y as u32);
                let other = graph.cluster_of(next);
                let index = y as u32 * graph.width + x as u32;
                if other == cluster || graph.node_position(other, index).is_none() {
                    continue;
                }
                let Some(cost) = class.cost(next).filter(|&c| c != 0) else {
                    continue;
                };
                self.score(
                    graph,
                    class,
                    index,
                    g + cost as u64 * step_cost(0),
                    id,
                    goal,
                    weight,
                );
            }
        }
        (spent, false)
    }

    /// The route's waypoints once the search is over: start, the nodes in
    /// order, goal. `None` if it found none.
    fn waypoints(&self, graph: &CoarseGraph, start: Cell, goal: Cell) -> Option<Vec<Cell>> {
        let (_, mut id) = self.best?;
        let mut nodes = Vec::new();
        while id != ABSENT {
            let node = self.cells[id as usize];
            nodes.push(Cell::new(node % graph.width, node / graph.width));
            id = self.parent[id as usize];
        }
        nodes.reverse();
        let mut waypoints = vec![start];
        waypoints.extend(nodes.into_iter().filter(|&cell| cell != start));
        if waypoints.last() != Some(&goal) {
            waypoints.push(goal);
        }
        Some(waypoints)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{NavGrid, SearchConfig, find_path};

    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *seed >> 33
    }

    fn random_grid(seed: u64, w: u32, h: u32) -> NavGrid {
        let mut s = seed;
        let costs = (0..w * h)
            .map(|_| match lcg(&mut s) % 10 {
                0..=1 => 0,
                2..=3 => 4,
                _ => 1,
            })
            .collect();
        NavGrid::from_costs(w, h, costs).unwrap()
    }

    fn route(graph: &CoarseGraph, class: &SizeClass, start: Cell, goal: Cell) -> Option<Path> {
        let mut route = CoarseRoute::new(start, goal, 1.0);
        while route.step(graph, class, 7) == RouteStatus::Running {}
        route.path(class)
    }

    #[test]
    fn routes_are_legal_and_found_exactly_when_a_path_exists() {
        for seed in 0..40 {
            let (w, h) = (20 + (seed as u32 * 7) % 45, 17 + (seed as u32 * 11) % 40);
            let grid = random_grid(seed, w, h);
            for size in [1, 2] {
                let class = grid.size_class(size);
                let graph = CoarseGraph::build(&class);
                let mut s = seed * 31 + size as u64;
                for _ in 0..30 {
                    let a = Cell::new(lcg(&mut s) as u32 % w, lcg(&mut s) as u32 % h);
                    let b = Cell::new(lcg(&mut s) as u32 % w, lcg(&mut s) as u32 % h);
                    let config = SearchConfig {
                        size,
                        ..SearchConfig::default()
                    };
                    let best = find_path(&grid, a, b, config).ok().and_then(|(_, p)| p);
                    let found = route(&graph, &class, a, b);
                    assert_eq!(
                        found.is_some(),
                        best.is_some(),
                        "seed {seed} size {size} {a:?}→{b:?}"
                    );
                    if let (Some(found), Some(best)) = (found, best) {
                        assert_eq!(found.cells.first(), Some(&a));
                        assert_eq!(found.cells.last(), Some(&b));
                        assert!(class.can_walk(&found.cells), "seed {seed} illegal route");
                        assert!(found.cost >= best.cost - 1e-6);
                    }
                }
            }
        }
    }

    #[test]
    fn edits_dirty_only_the_clusters_round_them_and_repair_keeps_routes_right() {
        let mut grid = random_grid(7, 64, 64);
        let mut graph = CoarseGraph::build(&grid.size_class(1));
        assert_eq!(graph.dirty_count(), 0);
        // A cluster inside the map: it and its four neighbours.
        grid.set_cost(Cell::new(20, 20), 9).unwrap();
        assert_eq!(graph.note_edits(&grid.size_class(1)), 5);
        // A corner cluster: it and its two neighbours.
        grid.set_cost(Cell::new(63, 0), 9).unwrap();
        assert_eq!(graph.note_edits(&grid.size_class(1)), 8);
        let mut s = 99;
        for _ in 0..200 {
            let cell = Cell::new(lcg(&mut s) as u32 % 64, lcg(&mut s) as u32 % 64);
            grid.set_cost(cell, [0, 1, 4][lcg(&mut s) as usize % 3])
                .unwrap();
            let class = grid.size_class(1);
            graph.repair(&class, u64::MAX);
            assert!(graph.is_ready(&class));
            let fresh = CoarseGraph::build(&class);
            assert_eq!(graph.clusters, fresh.clusters);
        }
        // Another grid of the same size: everything.
        grid.replace(random_grid(8, 64, 64));
        assert_eq!(graph.note_edits(&grid.size_class(1)), 16);
    }

    #[test]
    fn a_route_found_under_edits_is_legal_on_the_grid_it_ends_on() {
        let (mut found, mut cut) = (0, 0);
        for seed in 0..8 {
            let mut grid = random_grid(seed + 100, 80, 80);
            let mut graph = CoarseGraph::build(&grid.size_class(1));
            let mut s = seed;
            for _ in 0..10 {
                let a = Cell::new(lcg(&mut s) as u32 % 80, lcg(&mut s) as u32 % 80);
                let b = Cell::new(lcg(&mut s) as u32 % 80, lcg(&mut s) as u32 % 80);
                let mut route = CoarseRoute::new(a, b, 1.0);
                let mut prefix: Vec<Cell> = Vec::new();
                loop {
                    let status = route.step(&graph, &grid.size_class(1), 5);
                    // What is refined only grows, from the start.
                    if let Some(refined) = route.refined(&grid.size_class(1)) {
                        assert_eq!(refined.cells.first(), Some(&a));
                        assert!(refined.cells.starts_with(&prefix));
                        prefix = refined.cells;
                    }
                    if status != RouteStatus::Running {
                        if let Some(path) = route.path(&grid.size_class(1)) {
                            assert!(grid.size_class(1).can_walk(&path.cells));
                            found += 1;
                        } else {
                            cut += 1;
                        }
                        break;
                    }
                    let cell = Cell::new(lcg(&mut s) as u32 % 80, lcg(&mut s) as u32 % 80);
                    grid.set_cost(cell, [0, 1][lcg(&mut s) as usize % 2])
                        .unwrap();
                    graph.repair(&grid.size_class(1), u64::MAX);
                }
            }
        }
        assert!(found > 20 && cut > 0, "found {found}, cut {cut}");
    }

    #[test]
    fn a_route_on_rough_ground_costs_little_more_than_the_best() {
        let grid = random_grid(3, 200, 200);
        let class = grid.size_class(1);
        let graph = CoarseGraph::build(&class);
        let mut s = 5;
        let (mut sum, mut count) = (0.0, 0);
        for _ in 0..50 {
            let a = Cell::new(lcg(&mut s) as u32 % 200, lcg(&mut s) as u32 % 200);
            let b = Cell::new(lcg(&mut s) as u32 % 200, lcg(&mut s) as u32 % 200);
            let best = find_path(&grid, a, b, SearchConfig::default())
                .ok()
                .and_then(|(_, p)| p);
            if let (Some(found), Some(best)) = (route(&graph, &class, a, b), best)
                && best.cost > 0.0
            {
                sum += found.cost / best.cost;
                count += 1;
            }
        }
        // 1.15 on this map of 20% walls and 20% ground at cost 4; about
        // 1.06–1.09 on the benchmark maps with the stress test's terrain.
        let mean = sum / count as f64;
        assert!(mean < 1.2, "mean {mean}");
    }
}
