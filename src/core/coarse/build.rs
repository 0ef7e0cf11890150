//! Building the records: a cluster's (the pieces its cells form, the
//! entrances on its borders and the costs between them) and a
//! super-cluster's (its level-2 entrances and the costs between them along
//! its level-1 graph), each resumable at any expansion ([`Repair`]). Every
//! record is a function of the grid alone (a super-cluster's, of its
//! clusters' records), so any order and any split give the same graph.

use super::levels::{LOWER_UNIT, Levels, UPPER_UNIT, around};
use super::local::{Area, SWEEP_STEP, Sweep};
use super::{IndexMap, LONG_RUN, SPACING, SUPER, SUPER_SPACING, cost_code};
use crate::core::size_class::SizeClass;

/// A cell of a cluster counts this many times less than an expansion when
/// its pieces are labelled: a flood fill touches each cell once, with no
/// heap (about 70 instructions a cell against 300–400 an expansion).
pub(super) const LABELS_PER_EXPANSION: u64 = 4;

/// [`Sweep`] units in a level-1 cost unit (a quarter step).
const SWEEP_PER_LOWER: u32 = SWEEP_STEP[0] / 4;

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
            if keep(&mut placed, at, piece(at), SPACING) {
                out.push(at);
            }
        }
    }
}

/// Whether an entrance at `at` joining `pieces` is kept, given those
/// `placed` before it: the first joining two pieces always is, another
/// only `spacing` or more cells from every one joining the same pieces.
fn keep<P: PartialEq + Copy>(placed: &mut Vec<(u32, P)>, at: u32, pieces: P, spacing: u32) -> bool {
    if placed
        .iter()
        .any(|&(other, joins)| joins == pieces && other.abs_diff(at) < spacing)
    {
        return false;
    }
    placed.push((at, pieces));
    true
}

/// Labels the pieces of the area `(x0, y0, w, h)`: walkable cells joined
/// inside it share a label (4-connected, which under the corner rule is
/// what 8-neighbour moves join too); walls get `u16::MAX`. Returns the
/// labels and how many pieces there are.
pub(super) fn pieces(
    size_class: &SizeClass<'_>,
    (x0, y0, w, h): (u32, u32, u32, u32),
) -> (Vec<u16>, u16) {
    let costs = size_class.costs();
    let width = size_class.width();
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
    (labels, next)
}

/// What one build step has labelled and put together, kept while the grid
/// cannot change (one call of [`CoarseGraph::repair`], one part of a
/// [`GraphBuild`]): each cluster's pieces and each super-cluster's
/// level-1 graph are read when it is built and when each of its
/// neighbours is, so they are worked out once, not five times. Bounded to
/// a few rows.
#[derive(Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct Cache {
    pieces: IndexMap<(Vec<u16>, u16)>,
    supers: IndexMap<SuperGraph>,
}

impl Cache {
    /// The pieces of `cluster`, and what labelling them cost if they were
    /// not held.
    fn pieces(&mut self, graph: &Levels, size_class: &SizeClass<'_>, cluster: u32) -> u64 {
        if self.pieces.contains_key(&cluster) {
            return 0;
        }
        let bounds = graph.bounds(cluster);
        self.pieces.insert(cluster, pieces(size_class, bounds));
        ((bounds.2 * bounds.3) as u64).div_ceil(LABELS_PER_EXPANSION)
    }

    /// Forgets what it holds once it holds more than a few rows' worth
    /// (called before a record takes what it needs, never while it does).
    fn trim(&mut self, graph: &Levels) {
        if self.pieces.len() > 8 * graph.columns as usize + 16 {
            self.pieces.clear();
        }
        if self.supers.len() > 4 * graph.super_columns as usize + 8 {
            self.supers.clear();
        }
    }

    fn labels(&self, cluster: u32) -> &[u16] {
        self.pieces.get(&cluster).map_or(&[], |(labels, _)| labels)
    }

    /// Puts together the level-1 graph of `sup` unless it is held.
    fn super_graph(&mut self, graph: &Levels, size_class: &SizeClass<'_>, sup: u32) {
        if self.supers.contains_key(&sup) {
            return;
        }
        self.supers
            .insert(sup, SuperGraph::of(graph, size_class, sup));
    }
}

/// A record under construction, resumable at any expansion.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(crate) enum Repair {
    Cluster(ClusterBuild),
    Super(SuperBuild),
}

impl Repair {
    /// The cluster it builds, if it builds one.
    pub(super) fn cluster(&self) -> Option<u32> {
        match self {
            Self::Cluster(build) => Some(build.cluster),
            Self::Super(_) => None,
        }
    }

    /// The super-cluster it builds, if it builds one.
    pub(super) fn super_cluster(&self) -> Option<u32> {
        match self {
            Self::Super(build) => Some(build.sup),
            Self::Cluster(_) => None,
        }
    }

    pub(super) fn memory_bytes(&self) -> usize {
        match self {
            Self::Cluster(build) => {
                build.record.capacity() + build.sweep.memory_bytes() + 400 + build.targets.len() * 4
            }
            Self::Super(build) => build.record.capacity() + build.sweep.memory_bytes(),
        }
    }
}

/// A cluster's record under construction: first its pieces are labelled
/// and its entrances placed (paid for in advance, a step's budget at a
/// time), then a [`Sweep`] from each node in turn fills its row of costs.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct ClusterBuild {
    pub(super) cluster: u32,
    /// Expansions paid towards the labelling, until it is done.
    paid: u64,
    /// The record so far: header and nodes once placed, then the rows done.
    record: Vec<u8>,
    /// The cluster's cells, once placed.
    area: Option<Area>,
    /// The nodes as local indices of the area.
    targets: Vec<u32>,
    /// The node whose row is being filled.
    source: usize,
    sweep: Sweep,
}

impl ClusterBuild {
    pub(super) fn new(cluster: u32) -> Self {
        Self {
            cluster,
            paid: 0,
            record: Vec::new(),
            area: None,
            targets: Vec::new(),
            source: 0,
            sweep: Sweep::default(),
        }
    }

    /// Works on at most `most` expansions; returns them, and the record
    /// once it is done.
    pub(super) fn run(
        &mut self,
        graph: &Levels,
        size_class: &SizeClass<'_>,
        most: u64,
        cache: &mut Cache,
    ) -> (u64, Option<Vec<u8>>) {
        let mut spent = 0;
        if self.area.is_none() {
            // Labelling this cluster and its neighbours, paid in advance.
            let cost = labelling_cost(graph, cache, self.cluster);
            if self.paid < cost {
                let pay = (cost - self.paid).min(most);
                self.paid += pay;
                spent += pay;
                if self.paid < cost {
                    return (spent, None);
                }
            }
            self.place(graph, size_class, cache);
        }
        let Some(area) = &self.area else {
            return (spent, None);
        };
        let n = self.targets.len();
        while self.source < n {
            if spent >= most {
                return (spent, None);
            }
            spent += self.sweep.run(area, most - spent);
            if !self.sweep.is_over() {
                return (spent, None);
            }
            let from = self.source;
            for (to, &target) in self.targets.iter().enumerate() {
                if to != from {
                    let code = self.sweep.cost(target).map_or(cost_code::NONE, |units| {
                        cost_code::encode((units + SWEEP_PER_LOWER / 2) / SWEEP_PER_LOWER)
                    });
                    self.record.push(code);
                }
            }
            self.source += 1;
            if self.source < n {
                self.sweep.begin(self.targets[self.source], &self.targets);
            }
        }
        (spent, Some(std::mem::take(&mut self.record)))
    }

    /// Labels the pieces and places the entrances: the record's header and
    /// nodes, and the first sweep begun.
    fn place(&mut self, graph: &Levels, size_class: &SizeClass<'_>, cache: &mut Cache) {
        let cluster = self.cluster;
        let bounds = graph.bounds(cluster);
        let (_, _, w, h) = bounds;
        let (cx, cy) = (cluster % graph.columns, cluster / graph.columns);
        cache.trim(graph);
        for (x, y) in around(cx, cy, graph.columns, graph.rows) {
            cache.pieces(graph, size_class, y * graph.columns + x);
        }
        let own = cache.labels(cluster);
        let piece_count = cache.pieces.get(&cluster).map_or(0, |(_, count)| *count);
        let mut nodes: Vec<u32> = Vec::new();
        let mut offsets = Vec::new();
        // The four borders: left, right (across x), bottom, top (across y).
        for (across_x, low) in [(true, true), (true, false), (false, true), (false, false)] {
            let Some(neighbour) = beside((cx, cy), (across_x, low), (graph.columns, graph.rows))
            else {
                continue;
            };
            let (_, _, ow, oh) = graph.bounds(neighbour);
            let theirs = cache.labels(neighbour);
            // Index inside a cluster of width `cw` of cell `i` along the
            // border on line `line` (a column across x, a row across y).
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
            // A cell's labels are u16::MAX on walls, so both labels say
            // whether it can be crossed.
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
        self.record = Vec::with_capacity(2 + n + n * n.saturating_sub(1));
        self.record.push(n as u8);
        self.record.push(piece_count.min(255) as u8);
        self.record.extend(nodes.iter().map(|&i| i as u8));
        let area = Area::new(size_class, bounds);
        self.targets = nodes.iter().map(|&i| area.padded(i)).collect();
        self.sweep.prepare(&area);
        if let Some(&first) = self.targets.first() {
            self.sweep.begin(first, &self.targets);
        }
        self.area = Some(area);
    }
}

/// What labelling `cluster` and its neighbours costs, less what `cache`
/// holds.
fn labelling_cost(graph: &Levels, cache: &Cache, cluster: u32) -> u64 {
    let (cx, cy) = (cluster % graph.columns, cluster / graph.columns);
    around(cx, cy, graph.columns, graph.rows)
        .map(|(x, y)| y * graph.columns + x)
        .filter(|c| !cache.pieces.contains_key(c))
        .map(|c| {
            let (.., w, h) = graph.bounds(c);
            ((w * h) as u64).div_ceil(LABELS_PER_EXPANSION)
        })
        .sum()
}

/// The level-1 graph inside one super-cluster: its clusters' nodes, the
/// costs between nodes of one cluster and the steps across the borders
/// between its clusters, and the pieces it forms (nodes it joins).
#[derive(Clone, Debug, Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct SuperGraph {
    /// Per node: its grid cell index.
    cells: Vec<u32>,
    /// Per node: its cluster's index inside the super-cluster and its cell
    /// inside that cluster.
    keys: Vec<[u8; 2]>,
    /// Per node, its edges `edges[first[i]..first[i + 1]]`: `(node, cost
    /// in level-1 units)`.
    first: Vec<u32>,
    edges: Vec<(u32, u32)>,
    /// Per node: its piece (the least node index it is joined to).
    piece: Vec<u32>,
}

impl SuperGraph {
    fn of(graph: &Levels, size_class: &SizeClass<'_>, sup: u32) -> Self {
        let mut made = Self::default();
        // Where each cluster's nodes start, by index inside the super.
        let mut starts = [u32::MAX; (SUPER * SUPER) as usize];
        for (inner, cluster) in graph.clusters_of(sup) {
            starts[inner as usize] = made.cells.len() as u32;
            for &local in graph.local_nodes(cluster) {
                made.cells.push(graph.cell_index(cluster, local));
                made.keys.push([inner, local]);
            }
        }
        let count = made.cells.len();
        let mut lists: Vec<Vec<(u32, u32)>> = vec![Vec::new(); count];
        for (inner, cluster) in graph.clusters_of(sup) {
            let base = starts[inner as usize];
            let n = graph.local_nodes(cluster).len();
            for from in 0..n {
                let row = graph.inner_row(cluster, from);
                for (column, &code) in row.iter().enumerate() {
                    let to = if column < from { column } else { column + 1 };
                    if let Some(units) = cost_code::decode(code) {
                        lists[base as usize + from].push((base + to as u32, units));
                    }
                }
                // Steps across this cluster's right and top borders to a
                // node of a cluster of the same super-cluster.
                let cell =
                    graph.cell_of(graph.cell_index(cluster, graph.local_nodes(cluster)[from]));
                let (x0, y0, w, h) = graph.bounds(cluster);
                let beyond = [
                    (cell.x + 1 == x0 + w && inner as u32 % SUPER + 1 < SUPER)
                        .then(|| (cell.x + 1, cell.y)),
                    (cell.y + 1 == y0 + h && inner as u32 / SUPER + 1 < SUPER)
                        .then(|| (cell.x, cell.y + 1)),
                ];
                for (x, y) in beyond.into_iter().flatten() {
                    if x >= graph.width || y >= graph.height {
                        continue;
                    }
                    let other = graph.cluster_of(crate::core::grid::Cell::new(x, y));
                    let index = y * graph.width + x;
                    let Some(position) = graph.node_position(other, index) else {
                        continue;
                    };
                    let other_base = starts[graph.inner_index(other) as usize];
                    let there = other_base + position as u32;
                    let here = base + from as u32;
                    let enter = |cell| size_class.cost(cell).unwrap_or(0) as u32 * 4;
                    lists[here as usize].push((there, enter(crate::core::grid::Cell::new(x, y))));
                    lists[there as usize].push((here, enter(cell)));
                }
            }
        }
        made.first = Vec::with_capacity(count + 1);
        made.first.push(0);
        for list in lists {
            made.edges.extend(list);
            made.first.push(made.edges.len() as u32);
        }
        // Pieces: union-find over the edges.
        let mut parent: Vec<u32> = (0..count as u32).collect();
        fn find(parent: &mut [u32], mut i: u32) -> u32 {
            while parent[i as usize] != i {
                parent[i as usize] = parent[parent[i as usize] as usize];
                i = parent[i as usize];
            }
            i
        }
        for i in 0..count as u32 {
            for &(j, _) in made.neighbours(i) {
                let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                if a != b {
                    let (low, high) = (a.min(b), a.max(b));
                    parent[high as usize] = low;
                }
            }
        }
        made.piece = (0..count as u32).map(|i| find(&mut parent, i)).collect();
        made
    }

    fn neighbours(&self, node: u32) -> &[(u32, u32)] {
        &self.edges[self.first[node as usize] as usize..self.first[node as usize + 1] as usize]
    }

    /// The node at grid cell index `cell`, if it is one.
    fn node_at(&self, cell: u32) -> Option<u32> {
        self.cells.iter().position(|&c| c == cell).map(|i| i as u32)
    }
}

/// A super-cluster's record under construction: first its level-1 graph
/// and its neighbours' are put together and its level-2 entrances chosen
/// (paid for in advance), then a Dijkstra over its level-1 graph from each
/// level-2 node in turn fills its row of costs.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct SuperBuild {
    pub(super) sup: u32,
    paid: u64,
    record: Vec<u8>,
    /// Its level-1 graph, once placed, and its level-2 nodes in it.
    placed: Option<(SuperGraph, Vec<u32>)>,
    source: usize,
    sweep: NodeSweep,
}

impl SuperBuild {
    pub(super) fn new(sup: u32) -> Self {
        Self {
            sup,
            paid: 0,
            record: Vec::new(),
            placed: None,
            source: 0,
            sweep: NodeSweep::default(),
        }
    }

    pub(super) fn run(
        &mut self,
        graph: &Levels,
        size_class: &SizeClass<'_>,
        most: u64,
        cache: &mut Cache,
    ) -> (u64, Option<Vec<u8>>) {
        let mut spent = 0;
        if self.placed.is_none() {
            let cost = self.placing_cost(graph, cache);
            if self.paid < cost {
                let pay = (cost - self.paid).min(most);
                self.paid += pay;
                spent += pay;
                if self.paid < cost {
                    return (spent, None);
                }
            }
            self.place(graph, size_class, cache);
        }
        let Some((made, upper)) = &self.placed else {
            return (spent, None);
        };
        let m = upper.len();
        while self.source < m {
            if spent >= most {
                return (spent, None);
            }
            spent += self.sweep.run(made, most - spent);
            if !self.sweep.is_over() {
                return (spent, None);
            }
            let from = self.source;
            for (to, &node) in upper.iter().enumerate() {
                if to != from {
                    let code = self.sweep.cost(node).map_or(cost_code::NONE, |units| {
                        // Level-1 units (quarter steps) to level-2 (steps).
                        let ratio = (UPPER_UNIT / LOWER_UNIT) as u32;
                        cost_code::encode((units + ratio / 2) / ratio)
                    });
                    self.record.push(code);
                }
            }
            self.source += 1;
            if self.source < m {
                self.sweep.begin(made, upper[self.source], upper);
            }
        }
        (spent, Some(std::mem::take(&mut self.record)))
    }

    /// What putting together this super-cluster's level-1 graph and its
    /// neighbours' is charged, less what `cache` holds: a unit per node
    /// and one per eight table entries, read off the clusters' headers.
    fn placing_cost(&self, graph: &Levels, cache: &Cache) -> u64 {
        let (sx, sy) = (
            self.sup % graph.super_columns,
            self.sup / graph.super_columns,
        );
        let mut cost = 1;
        for (x, y) in around(sx, sy, graph.super_columns, graph.super_rows) {
            let sup = y * graph.super_columns + x;
            if cache.supers.contains_key(&sup) {
                continue;
            }
            for (_, cluster) in graph.clusters_of(sup) {
                let n = graph.local_nodes(cluster).len() as u64;
                cost += n + (n * n.saturating_sub(1)).div_ceil(8);
            }
        }
        cost
    }

    /// Chooses the level-2 entrances and begins the first Dijkstra.
    fn place(&mut self, graph: &Levels, size_class: &SizeClass<'_>, cache: &mut Cache) {
        let sup = self.sup;
        let (sx, sy) = (sup % graph.super_columns, sup / graph.super_columns);
        cache.trim(graph);
        for (x, y) in around(sx, sy, graph.super_columns, graph.super_rows) {
            cache.super_graph(graph, size_class, y * graph.super_columns + x);
        }
        let Some(made) = cache.supers.get(&sup).cloned() else {
            return;
        };
        let mut chosen: Vec<u32> = Vec::new();
        // The four borders: left, right, bottom, top.
        for (across_x, low) in [(true, true), (true, false), (false, true), (false, false)] {
            let Some(other) = beside(
                (sx, sy),
                (across_x, low),
                (graph.super_columns, graph.super_rows),
            ) else {
                continue;
            };
            let Some(theirs) = cache.supers.get(&other) else {
                continue;
            };
            // The level-1 entrances across the border, along it: this
            // side's node, its offset along the border, and the pieces it
            // joins (lower super-cluster's first).
            let mut candidates: Vec<(u32, u32, (u32, u32))> = Vec::new();
            for (i, &cell) in made.cells.iter().enumerate() {
                let (x, y) = (cell % graph.width, cell / graph.width);
                let facing = match (across_x, low) {
                    (true, true) => x.checked_sub(1).map(|x| (x, y)),
                    (true, false) => Some((x + 1, y)),
                    (false, true) => y.checked_sub(1).map(|y| (x, y)),
                    (false, false) => Some((x, y + 1)),
                };
                let Some((fx, fy)) =
                    facing.filter(|&(fx, fy)| fx < graph.width && fy < graph.height)
                else {
                    continue;
                };
                let cluster = graph.cluster_of(crate::core::grid::Cell::new(fx, fy));
                if graph.super_of(cluster) != other {
                    continue;
                }
                let Some(j) = theirs.node_at(fy * graph.width + fx) else {
                    continue;
                };
                let (mine, their) = (made.piece[i], theirs.piece[j as usize]);
                let pieces = if low { (their, mine) } else { (mine, their) };
                let along = if across_x { y } else { x };
                candidates.push((i as u32, along, pieces));
            }
            candidates.sort_unstable_by_key(|&(_, along, _)| along);
            let mut placed = Vec::new();
            for (node, along, pieces) in candidates {
                if keep(&mut placed, along, pieces, SUPER_SPACING) {
                    chosen.push(node);
                }
            }
        }
        chosen.sort_unstable_by_key(|&node| made.keys[node as usize]);
        chosen.dedup();
        let m = chosen.len();
        self.record = Vec::with_capacity(1 + 2 * m + m * m.saturating_sub(1));
        self.record.push(m as u8);
        for &node in &chosen {
            self.record.extend_from_slice(&made.keys[node as usize]);
        }
        if let Some(&first) = chosen.first() {
            self.sweep.begin(&made, first, &chosen);
        }
        self.placed = Some((made, chosen));
    }
}

/// A Dijkstra over a [`SuperGraph`] from one node to the level-2 nodes,
/// resumable at any expansion, costs in level-1 units.
#[derive(Clone, Debug, Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct NodeSweep {
    dist: Vec<u32>,
    settled: Vec<bool>,
    target: Vec<bool>,
    targets_left: usize,
    heap: std::collections::BinaryHeap<std::cmp::Reverse<(u32, u32)>>,
}

impl NodeSweep {
    fn begin(&mut self, made: &SuperGraph, source: u32, targets: &[u32]) {
        let len = made.cells.len();
        self.dist.clear();
        self.dist.resize(len, u32::MAX);
        self.settled.clear();
        self.settled.resize(len, false);
        self.target.clear();
        self.target.resize(len, false);
        self.targets_left = 0;
        for &t in targets {
            if !std::mem::replace(&mut self.target[t as usize], true) {
                self.targets_left += 1;
            }
        }
        self.heap.clear();
        self.dist[source as usize] = 0;
        self.heap.push(std::cmp::Reverse((0, source)));
    }

    fn run(&mut self, made: &SuperGraph, most: u64) -> u64 {
        let mut spent = 0;
        while spent < most && self.targets_left > 0 {
            let Some(std::cmp::Reverse((d, node))) = self.heap.pop() else {
                break;
            };
            let i = node as usize;
            if self.settled[i] {
                continue;
            }
            self.settled[i] = true;
            spent += 1;
            if self.target[i] {
                self.targets_left -= 1;
            }
            for &(next, cost) in made.neighbours(node) {
                let next_d = d.saturating_add(cost);
                if !self.settled[next as usize] && next_d < self.dist[next as usize] {
                    self.dist[next as usize] = next_d;
                    self.heap.push(std::cmp::Reverse((next_d, next)));
                }
            }
        }
        if self.heap.is_empty() {
            self.targets_left = 0;
        }
        spent
    }

    fn is_over(&self) -> bool {
        self.targets_left == 0
    }

    fn cost(&self, node: u32) -> Option<u32> {
        self.settled[node as usize].then(|| self.dist[node as usize])
    }

    fn memory_bytes(&self) -> usize {
        self.dist.capacity() * 4
            + self.settled.capacity()
            + self.target.capacity()
            + self.heap.capacity() * 8
    }
}

/// The index of the block beside block `(x, y)` of a lattice of
/// `(columns, rows)` across its border `(across_x, low)` (left, right,
/// bottom or top), if there is one.
fn beside(
    (x, y): (u32, u32),
    (across_x, low): (bool, bool),
    (columns, rows): (u32, u32),
) -> Option<u32> {
    let (nx, ny) = match (across_x, low) {
        (true, true) => (x.checked_sub(1)?, y),
        (true, false) => (x + 1, y),
        (false, true) => (x, y.checked_sub(1)?),
        (false, false) => (x, y + 1),
    };
    (nx < columns && ny < rows).then_some(ny * columns + nx)
}
