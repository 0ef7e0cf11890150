//! What a graph holds, level by level: the lattice of clusters and
//! super-clusters over the grid, each one's record, and reading them (a
//! cluster's nodes and the costs between them, a super-cluster's).
//!
//! A cluster's record is `[n, pieces, nodes (n bytes), costs (n × (n − 1)
//! bytes)]`: its node count, how many pieces its cells form (saturating at
//! 255), each node as its cell's index inside the cluster (`y × w + x`, in
//! ascending order) and the cost code from every node to every other, row
//! by row, the diagonal left out. A super-cluster's record is `[m, nodes
//! (2 × m bytes), costs (m × (m − 1) bytes)]`: each level-2 node as the
//! index of its cluster inside the super-cluster and its cell inside that
//! cluster, in ascending order. Records live one after another in one
//! buffer per level, so the graph is a few allocations whatever its size.

use super::{CLUSTER, SUPER, cost_code};
use crate::core::classes::UnitKind;
use crate::core::grid::{Cell, Neighborhood};
use crate::core::moves::COST_SCALE;
use crate::core::size_class::SizeClass;

/// A level-1 cost unit: a quarter of a step on plain ground.
pub(super) const LOWER_UNIT: u64 = COST_SCALE >> 2;

/// A level-2 cost unit: one step on plain ground.
pub(super) const UPPER_UNIT: u64 = COST_SCALE;

/// The lattice of clusters and super-clusters over one size class, and the
/// record of each.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct Levels {
    pub(super) kind: UnitKind,
    pub(super) width: u32,
    pub(super) height: u32,
    pub(super) neighborhood: Neighborhood,
    /// Clusters per row and per column.
    pub(super) columns: u32,
    pub(super) rows: u32,
    /// Super-clusters per row and per column.
    pub(super) super_columns: u32,
    pub(super) super_rows: u32,
    /// One record per cluster (a dirty one keeps its old record until it
    /// is built again).
    pub(super) lower: Records,
    /// One record per super-cluster (likewise).
    pub(super) upper: Records,
    /// Per cluster, how many times its record was set: a node search that
    /// numbered a cluster's nodes in the order of its record knows when
    /// the record changed under it.
    pub(super) generations: Vec<u32>,
}

impl Levels {
    /// The lattice over `class`, no record built.
    pub(super) fn new(size_class: &SizeClass<'_>) -> Self {
        let columns = size_class.width().div_ceil(CLUSTER);
        let rows = size_class.height().div_ceil(CLUSTER);
        let super_columns = columns.div_ceil(SUPER);
        let super_rows = rows.div_ceil(SUPER);
        Self {
            kind: size_class.kind(),
            width: size_class.width(),
            height: size_class.height(),
            neighborhood: size_class.neighborhood(),
            columns,
            rows,
            super_columns,
            super_rows,
            lower: Records::new((columns * rows) as usize),
            upper: Records::new((super_columns * super_rows) as usize),
            generations: vec![0; (columns * rows) as usize],
        }
    }

    /// The lattice over a grid of this shape, with these records; `None`
    /// unless they are one per cluster and one per super-cluster, each of
    /// the layout the module docs give ([`Levels::check`]).
    #[cfg(feature = "serialize")]
    pub(super) fn from_records(
        kind: UnitKind,
        (width, height, neighborhood): (u32, u32, Neighborhood),
        lower: Records,
        upper: Records,
    ) -> Option<Self> {
        let columns = width.div_ceil(CLUSTER);
        let rows = height.div_ceil(CLUSTER);
        let (super_columns, super_rows) = (columns.div_ceil(SUPER), rows.div_ceil(SUPER));
        let levels = Self {
            kind,
            width,
            height,
            neighborhood,
            columns,
            rows,
            super_columns,
            super_rows,
            generations: vec![0; lower.count()],
            lower,
            upper,
        };
        levels.check().then_some(levels)
    }

    /// Whether every record reads as the module docs lay it out: a
    /// cluster's nodes inside it and in ascending order, a super-cluster's
    /// in clusters inside it, among their nodes and in ascending order,
    /// and each record as long as its node count says. What reads a graph
    /// may then index its records without a check.
    #[cfg(feature = "serialize")]
    fn check(&self) -> bool {
        if self.lower.count() != self.cluster_count() || self.upper.count() != self.super_count() {
            return false;
        }
        let ascending = |nodes: &[u8], step: usize| {
            let keys: Vec<&[u8]> = nodes.chunks(step).collect();
            keys.windows(2).all(|pair| pair[0] < pair[1])
        };
        let lower_ok = (0..self.cluster_count() as u32).all(|cluster| {
            let record = self.lower.get(cluster as usize);
            let Some(&n) = record.first() else {
                return true;
            };
            let n = n as usize;
            let (.., w, h) = self.bounds(cluster);
            let nodes = record.get(2..2 + n).unwrap_or(&[]);
            record.len() == 2 + n + n * n.saturating_sub(1)
                && nodes.iter().all(|&local| (local as u32) < w * h)
                && ascending(nodes, 1)
        });
        lower_ok
            && (0..self.super_count() as u32).all(|sup| {
                let record = self.upper.get(sup as usize);
                let Some(&m) = record.first() else {
                    return true;
                };
                let m = m as usize;
                let inside: Vec<u8> = self.clusters_of(sup).map(|(inner, _)| inner).collect();
                let nodes = record.get(1..1 + 2 * m).unwrap_or(&[]);
                record.len() == 1 + 2 * m + m * m.saturating_sub(1)
                    && ascending(nodes, 2)
                    && nodes.chunks(2).all(|key| {
                        inside.contains(&key[0])
                            && (self.local_nodes(self.cluster_in(sup, key[0])))
                                .binary_search(&key[1])
                                .is_ok()
                    })
            })
    }

    /// Sets cluster `cluster`'s record.
    pub(super) fn set_lower(&mut self, cluster: usize, record: &[u8]) {
        self.lower.set(cluster, record);
        self.generations[cluster] = self.generations[cluster].wrapping_add(1);
    }

    /// Clusters in all.
    pub(super) fn cluster_count(&self) -> usize {
        (self.columns * self.rows) as usize
    }

    /// Super-clusters in all.
    pub(super) fn super_count(&self) -> usize {
        (self.super_columns * self.super_rows) as usize
    }

    /// The clusters beside `cluster` whose shared border has other nodes of
    /// `cluster`'s in its `new` record than in its `old` one: the entrances
    /// there moved, so theirs did too (both sides of a border place the
    /// same entrances).
    pub(super) fn entrances_moved(&self, cluster: u32, old: &[u8], new: &[u8]) -> Vec<u32> {
        let nodes = |record: &[u8]| -> Vec<u8> {
            record
                .first()
                .map_or(&[][..], |&n| &record[2..2 + n as usize])
                .to_vec()
        };
        let (old, new) = (nodes(old), nodes(new));
        let (.., w, h) = self.bounds(cluster);
        let (cx, cy) = (cluster % self.columns, cluster / self.columns);
        let on = |local: u8, side: usize| {
            let (x, y) = (local as u32 % w, local as u32 / w);
            [x == 0, x == w - 1, y == 0, y == h - 1][side]
        };
        let sides = [
            (cx > 0).then(|| cluster - 1),
            (cx + 1 < self.columns).then(|| cluster + 1),
            (cy > 0).then(|| cluster - self.columns),
            (cy + 1 < self.rows).then(|| cluster + self.columns),
        ];
        (0..4)
            .filter_map(|side| {
                let neighbour = sides[side]?;
                let before = old.iter().filter(|&&l| on(l, side));
                let after = new.iter().filter(|&&l| on(l, side));
                (!before.eq(after)).then_some(neighbour)
            })
            .collect()
    }

    /// The super-clusters beside `sup` whose shared border has other
    /// level-2 nodes of `sup`'s in its `new` record than in its `old` one.
    pub(super) fn upper_entrances_moved(&self, sup: u32, old: &[u8], new: &[u8]) -> Vec<u32> {
        let nodes = |record: &[u8]| -> Vec<u32> {
            let m = record.first().copied().unwrap_or(0) as usize;
            record[1.min(record.len())..1 + 2 * m]
                .chunks(2)
                .map(|key| self.cell_index(self.cluster_in(sup, key[0]), key[1]))
                .collect()
        };
        let (old, new) = (nodes(old), nodes(new));
        let (sx, sy) = (sup % self.super_columns, sup / self.super_columns);
        let span = CLUSTER * SUPER;
        let (x0, y0) = (sx * span, sy * span);
        let (x1, y1) = (
            (x0 + span).min(self.width) - 1,
            (y0 + span).min(self.height) - 1,
        );
        let on = |cell: u32, side: usize| {
            let (x, y) = (cell % self.width, cell / self.width);
            [x == x0, x == x1, y == y0, y == y1][side]
        };
        let sides = [
            (sx > 0).then(|| sup - 1),
            (sx + 1 < self.super_columns).then(|| sup + 1),
            (sy > 0).then(|| sup - self.super_columns),
            (sy + 1 < self.super_rows).then(|| sup + self.super_columns),
        ];
        (0..4)
            .filter_map(|side| {
                let neighbour = sides[side]?;
                let before = old.iter().filter(|&&c| on(c, side));
                let after = new.iter().filter(|&&c| on(c, side));
                (!before.eq(after)).then_some(neighbour)
            })
            .collect()
    }

    pub(super) fn cluster_of(&self, cell: Cell) -> u32 {
        (cell.y / CLUSTER) * self.columns + cell.x / CLUSTER
    }

    pub(super) fn cell_of(&self, index: u32) -> Cell {
        Cell::new(index % self.width, index / self.width)
    }

    /// The super-cluster a cluster belongs to.
    pub(super) fn super_of(&self, cluster: u32) -> u32 {
        let (cx, cy) = (cluster % self.columns, cluster / self.columns);
        (cy / SUPER) * self.super_columns + cx / SUPER
    }

    /// The clusters of super-cluster `sup`, by their index inside it
    /// (`y × SUPER + x`), those past the map's edge left out.
    pub(super) fn clusters_of(&self, sup: u32) -> impl Iterator<Item = (u8, u32)> + '_ {
        let (sx, sy) = (sup % self.super_columns, sup / self.super_columns);
        (0..SUPER * SUPER).filter_map(move |inner| {
            let (cx, cy) = (sx * SUPER + inner % SUPER, sy * SUPER + inner / SUPER);
            (cx < self.columns && cy < self.rows).then(|| (inner as u8, cy * self.columns + cx))
        })
    }

    /// The cluster with index `inner` inside super-cluster `sup`.
    pub(super) fn cluster_in(&self, sup: u32, inner: u8) -> u32 {
        let (sx, sy) = (sup % self.super_columns, sup / self.super_columns);
        let (cx, cy) = (
            sx * SUPER + inner as u32 % SUPER,
            sy * SUPER + inner as u32 / SUPER,
        );
        cy * self.columns + cx
    }

    /// The index of a cluster inside its super-cluster.
    pub(super) fn inner_index(&self, cluster: u32) -> u8 {
        let (cx, cy) = (cluster % self.columns, cluster / self.columns);
        ((cy % SUPER) * SUPER + cx % SUPER) as u8
    }

    /// The cells of cluster `cluster`: `(x0, y0, w, h)`.
    pub(super) fn bounds(&self, cluster: u32) -> (u32, u32, u32, u32) {
        let (cx, cy) = (cluster % self.columns, cluster / self.columns);
        let (x0, y0) = (cx * CLUSTER, cy * CLUSTER);
        (
            x0,
            y0,
            CLUSTER.min(self.width - x0),
            CLUSTER.min(self.height - y0),
        )
    }

    /// The grid cell index of the cell with index `local` inside cluster
    /// `cluster`.
    pub(super) fn cell_index(&self, cluster: u32, local: u8) -> u32 {
        let (x0, y0, w, _) = self.bounds(cluster);
        (y0 + local as u32 / w) * self.width + x0 + local as u32 % w
    }

    /// The index inside its cluster of grid cell index `index`.
    pub(super) fn local_of(&self, cluster: u32, index: u32) -> u8 {
        let (x0, y0, w, _) = self.bounds(cluster);
        let (x, y) = (index % self.width, index / self.width);
        ((y - y0) * w + (x - x0)) as u8
    }

    /// The nodes of a built cluster (empty if dirty), as indices inside it.
    pub(super) fn local_nodes(&self, cluster: u32) -> &[u8] {
        let record = self.lower.get(cluster as usize);
        match record.first() {
            Some(&n) => &record[2..2 + n as usize],
            None => &[],
        }
    }

    /// How many pieces the cells of a built cluster form (saturating).
    pub(super) fn pieces_in(&self, cluster: u32) -> u8 {
        self.lower
            .get(cluster as usize)
            .get(1)
            .copied()
            .unwrap_or(0)
    }

    /// The nodes of a built cluster, as grid cell indices, in order.
    pub(super) fn nodes(&self, cluster: u32) -> impl Iterator<Item = u32> + '_ {
        self.local_nodes(cluster)
            .iter()
            .map(move |&local| self.cell_index(cluster, local))
    }

    /// The position of grid cell index `node` among its cluster's nodes.
    pub(super) fn node_position(&self, cluster: u32, node: u32) -> Option<usize> {
        let local = self.local_of(cluster, node);
        self.local_nodes(cluster).binary_search(&local).ok()
    }

    /// The costs from node `from` of a built cluster to each of its other
    /// nodes, as codes (the entry for `from` itself left out).
    pub(super) fn inner_row(&self, cluster: u32, from: usize) -> &[u8] {
        let record = self.lower.get(cluster as usize);
        let n = record[0] as usize;
        let at = 2 + n + from * (n - 1);
        &record[at..at + n - 1]
    }

    /// The level-2 nodes of a built super-cluster (empty if dirty), as
    /// pairs of bytes: the cluster's index inside it, and the cell's
    /// inside that cluster.
    pub(super) fn upper_nodes(&self, sup: u32) -> &[u8] {
        let record = self.upper.get(sup as usize);
        match record.first() {
            Some(&m) => &record[1..1 + 2 * m as usize],
            None => &[],
        }
    }

    /// The position of grid cell index `node`, in cluster `cluster`, among
    /// its super-cluster's level-2 nodes.
    pub(super) fn upper_position(&self, cluster: u32, node: u32) -> Option<usize> {
        let sup = self.super_of(cluster);
        let key = [self.inner_index(cluster), self.local_of(cluster, node)];
        let nodes = self.upper_nodes(sup);
        let (mut low, mut high) = (0, nodes.len() / 2);
        while low < high {
            let middle = (low + high) / 2;
            match nodes[2 * middle..2 * middle + 2].cmp(&key) {
                std::cmp::Ordering::Equal => return Some(middle),
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
            }
        }
        None
    }

    /// The cost inside super-cluster `sup` between two of its level-2
    /// nodes, fixed point; `None` if its level-1 graph joins them nowhere.
    pub(super) fn upper_cost(&self, sup: u32, from: usize, to: usize) -> Option<u64> {
        if from == to {
            return Some(0);
        }
        let record = self.upper.get(sup as usize);
        let m = record[0] as usize;
        let column = if to < from { to } else { to - 1 };
        let code = record[1 + 2 * m + from * (m - 1) + column];
        cost_code::decode(code).map(|units| units as u64 * UPPER_UNIT)
    }
}

/// The cell `(x, y)` of a `columns × rows` lattice and its four neighbours
/// inside it.
pub(super) fn around(x: u32, y: u32, columns: u32, rows: u32) -> impl Iterator<Item = (u32, u32)> {
    [
        Some((x, y)),
        x.checked_sub(1).map(|x| (x, y)),
        (x + 1 < columns).then_some((x + 1, y)),
        y.checked_sub(1).map(|y| (x, y)),
        (y + 1 < rows).then_some((x, y + 1)),
    ]
    .into_iter()
    .flatten()
}

/// Records of varying length, one after another in one buffer: a record
/// set again is written at the end and its old bytes counted as garbage,
/// and the buffer is compacted once a quarter of it is garbage.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct Records {
    data: Vec<u8>,
    /// Per record: where it starts in `data` and its length (0: none).
    at: Vec<(u32, u16)>,
    /// Bytes of `data` no record holds.
    garbage: usize,
}

impl Records {
    pub(super) fn new(count: usize) -> Self {
        Self {
            data: Vec::new(),
            at: vec![(0, 0); count],
            garbage: 0,
        }
    }

    /// Record `i` (empty if there is none).
    #[inline(always)]
    pub(super) fn get(&self, i: usize) -> &[u8] {
        let (start, len) = self.at[i];
        &self.data[start as usize..start as usize + len as usize]
    }

    pub(super) fn count(&self) -> usize {
        self.at.len()
    }

    /// Sets record `i`.
    pub(super) fn set(&mut self, i: usize, record: &[u8]) {
        self.clear(i);
        if record.is_empty() {
            return;
        }
        if self.garbage > 4096 && self.garbage * 4 > self.data.len() {
            self.compact();
        }
        self.at[i] = (self.data.len() as u32, record.len() as u16);
        self.data.extend_from_slice(record);
    }

    /// Drops record `i`.
    pub(super) fn clear(&mut self, i: usize) {
        self.garbage += self.at[i].1 as usize;
        self.at[i] = (0, 0);
    }

    fn compact(&mut self) {
        let mut data = Vec::with_capacity(self.data.len() - self.garbage);
        for at in &mut self.at {
            let (start, len) = *at;
            *at = (data.len() as u32, len);
            data.extend_from_slice(&self.data[start as usize..start as usize + len as usize]);
        }
        self.data = data;
        self.garbage = 0;
    }

    /// Drops what is no longer held and the buffer's spare room (a graph
    /// just built keeps no more than it needs).
    pub(super) fn shrink(&mut self) {
        if self.garbage > 0 {
            self.compact();
        }
        self.data.shrink_to_fit();
    }

    pub(super) fn memory_bytes(&self) -> usize {
        self.data.capacity() + self.at.capacity() * std::mem::size_of::<(u32, u16)>()
    }

    /// The records, in order.
    #[cfg(any(test, feature = "serialize"))]
    pub(super) fn bytes(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.at.len()).map(|i| self.get(i))
    }

    /// Records from their bytes one after another and each one's length;
    /// `None` if the lengths do not add up to the bytes.
    #[cfg(feature = "serialize")]
    pub(super) fn from_lengths(data: Vec<u8>, lengths: &[u16]) -> Option<Self> {
        let mut at = Vec::with_capacity(lengths.len());
        let mut start = 0usize;
        for &len in lengths {
            at.push((u32::try_from(start).ok()?, len));
            start += len as usize;
        }
        (start == data.len()).then_some(Self {
            data,
            at,
            garbage: 0,
        })
    }
}

/// Records still to build, each once, oldest first: a flag per record
/// (so `add` is O(1)), and the dirty ones in order.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct Dirty {
    list: std::collections::VecDeque<u32>,
    flag: Vec<bool>,
}

impl Dirty {
    pub(super) fn all(count: u32) -> Self {
        Self {
            list: (0..count).collect(),
            flag: vec![true; count as usize],
        }
    }

    /// `count` records, none dirty (a graph loaded built).
    #[cfg(feature = "serialize")]
    pub(super) fn none(count: u32) -> Self {
        Self {
            list: Default::default(),
            flag: vec![false; count as usize],
        }
    }

    pub(super) fn len(&self) -> usize {
        self.list.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub(super) fn add(&mut self, i: u32) {
        if !self.flag[i as usize] {
            self.flag[i as usize] = true;
            self.list.push_back(i);
        }
    }

    /// The oldest, still dirty.
    pub(super) fn first(&self) -> Option<u32> {
        self.list.front().copied()
    }

    /// Record `i` is built: it is no longer dirty.
    pub(super) fn remove(&mut self, i: u32) {
        if std::mem::take(&mut self.flag[i as usize]) {
            if self.list.front() == Some(&i) {
                self.list.pop_front();
            } else {
                self.list.retain(|&j| j != i);
            }
        }
    }

    pub(super) fn memory_bytes(&self) -> usize {
        self.list.capacity() * 4 + self.flag.capacity()
    }
}
