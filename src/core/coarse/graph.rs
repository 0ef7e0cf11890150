//! The graph's storage: each cluster's nodes and the costs between them,
//! which clusters are dirty, and how an edit dirties them.

use super::build::{Pieces, build_cluster};
use super::local::Local;
use super::{CLUSTER, COARSE_SHIFT, NONE};
use crate::core::grid::{Cell, GridChanges, Neighborhood};
use crate::core::size_class::SizeClass;

/// A coarse graph over one size class of a grid; see the module docs.
#[derive(Clone, Debug)]
pub struct CoarseGraph {
    pub(super) size: u8,
    pub(super) width: u32,
    pub(super) height: u32,
    pub(super) neighborhood: Neighborhood,
    /// Clusters per row and per column.
    pub(super) columns: u32,
    pub(super) rows: u32,
    /// Per cluster: `[n, nodes (n, ascending cell indices inside the
    /// cluster, row by row), costs (n × n, row by row, from row node to
    /// column node, `NONE` if unreachable)]`; empty while dirty.
    pub(super) clusters: Vec<Box<[u16]>>,
    /// Dirty clusters, each once, in the order they became dirty.
    pub(super) dirty: Vec<u32>,
    /// Whether each cluster is in `dirty`.
    pub(super) is_dirty: Vec<bool>,
    /// The grid version the graph (with its dirty clusters built) reflects.
    pub(super) version: u64,
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

    pub(super) fn mark(&mut self, cluster: u32) {
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
    pub(super) fn touch(&mut self, cell: Cell) {
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

    pub(super) fn cluster_of(&self, cell: Cell) -> u32 {
        (cell.y / CLUSTER) * self.columns + cell.x / CLUSTER
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

    /// The nodes of a built cluster (empty if dirty), as indices inside it.
    pub(super) fn local_nodes(&self, cluster: u32) -> &[u16] {
        let table = &self.clusters[cluster as usize];
        match table.first() {
            Some(&n) => &table[1..1 + n as usize],
            None => &[],
        }
    }

    /// The nodes of a built cluster, as grid cell indices, in order.
    pub(super) fn nodes(&self, cluster: u32) -> impl Iterator<Item = u32> + '_ {
        let (x0, y0, w, _) = self.bounds(cluster);
        self.local_nodes(cluster)
            .iter()
            .map(move |&i| (y0 + i as u32 / w) * self.width + x0 + i as u32 % w)
    }

    /// The position of grid cell index `node` among its cluster's nodes.
    pub(super) fn node_position(&self, cluster: u32, node: u32) -> Option<usize> {
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
    pub(super) fn inner_cost(&self, cluster: u32, from: usize, to: usize) -> Option<u64> {
        let table = &self.clusters[cluster as usize];
        let n = table[0] as usize;
        let cost = table[1 + n + from * n + to];
        (cost != NONE).then_some((cost as u64) << COARSE_SHIFT)
    }
}
