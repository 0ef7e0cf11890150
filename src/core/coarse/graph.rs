//! The graph: its levels' records, which are dirty, how an edit dirties
//! them and how they are built again (on a budget, resumable), and a
//! whole graph built in parts side by side ([`GraphBuild`]).

use std::ops::Range;

use super::CLUSTER;
use super::build::{Cache, ClusterBuild, Repair, SuperBuild};
use super::levels::{Dirty, Levels};
use crate::core::classes::UnitKind;
#[cfg(feature = "serialize")]
use crate::core::grid::Neighborhood;
use crate::core::grid::{Cell, GridChanges};
use crate::core::size_class::SizeClass;

/// A built graph's parts ([`CoarseGraph::parts`]).
#[cfg(feature = "serialize")]
pub(crate) struct GraphParts {
    pub(crate) kind: UnitKind,
    /// The grid's width, height and move set.
    pub(crate) shape: (u32, u32, Neighborhood),
    /// The grid version it reflects.
    pub(crate) version: u64,
    /// Each level's records: their bytes one after another, and each
    /// one's length.
    pub(crate) lower: (Vec<u8>, Vec<u16>),
    pub(crate) upper: (Vec<u8>, Vec<u16>),
}

/// A coarse graph over one size class of a grid; see the module docs.
#[derive(Clone, Debug)]
pub struct CoarseGraph {
    /// The lattice and the records of both levels.
    pub(super) levels: Levels,
    /// Dirty clusters, and dirty super-clusters.
    pub(super) dirty: Dirty,
    pub(super) dirty_upper: Dirty,
    /// Whether every record was built once for this grid (and edits since
    /// touched only some): routes may run, on the records as they are.
    pub(super) usable: bool,
    /// The grid version the graph (with its dirty records built) reflects.
    pub(super) version: u64,
    /// The record being built, carried between calls to
    /// [`repair`](Self::repair).
    pub(super) repair: Option<Box<Repair>>,
}

impl CoarseGraph {
    /// A graph for `class` with every record still to build
    /// ([`repair`](Self::repair) builds them).
    pub fn new(size_class: &SizeClass<'_>) -> Self {
        let levels = Levels::new(size_class);
        let (count, supers) = (levels.cluster_count(), levels.super_count());
        Self {
            levels,
            dirty: Dirty::all(count as u32),
            dirty_upper: Dirty::all(supers as u32),
            usable: false,
            version: size_class.version(),
            repair: None,
        }
    }

    /// A graph for `class`, every record built, on this thread.
    pub fn build(size_class: &SizeClass<'_>) -> Self {
        let mut graph = Self::new(size_class);
        graph.repair(size_class, u64::MAX);
        graph
    }

    /// The graph as it stands, built or not, with the repairs it has under
    /// way (for a save, `crate::save`; a baked map keeps only built
    /// graphs, as [`parts`](Self::parts)).
    #[cfg(feature = "serialize")]
    pub(crate) fn serialize_live<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        use serde::Serialize;
        let Self {
            levels,
            dirty,
            dirty_upper,
            usable,
            version,
            repair,
        } = self;
        (levels, dirty, dirty_upper, usable, version, repair).serialize(serializer)
    }

    /// A graph [`serialize_live`](Self::serialize_live) wrote.
    #[cfg(feature = "serialize")]
    pub(crate) fn deserialize_live<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Self, D::Error> {
        use serde::Deserialize;
        let (levels, dirty, dirty_upper, usable, version, repair) =
            Deserialize::deserialize(deserializer)?;
        Ok(Self {
            levels,
            dirty,
            dirty_upper,
            usable,
            version,
            repair,
        })
    }

    /// What a built graph is made of, for baking: the grid's shape and
    /// version it reflects, and each level's records, as their bytes one
    /// after another and each one's length. `None` unless every record is
    /// built and none is being repaired.
    #[cfg(feature = "serialize")]
    pub(crate) fn parts(&self) -> Option<GraphParts> {
        let done = self.is_built();
        let levels = &self.levels;
        let records = |records: &super::levels::Records| {
            let lengths = records.bytes().map(|r| r.len() as u16).collect();
            (records.bytes().flatten().copied().collect(), lengths)
        };
        done.then(|| GraphParts {
            kind: levels.kind,
            shape: (levels.width, levels.height, levels.neighborhood),
            version: self.version,
            lower: records(&levels.lower),
            upper: records(&levels.upper),
        })
    }

    /// A built graph from its [`parts`](Self::parts); `None` if they do
    /// not make one (records not of the layout a graph writes, or not one
    /// per cluster of the shape).
    #[cfg(feature = "serialize")]
    pub(crate) fn from_parts(parts: GraphParts) -> Option<Self> {
        use super::levels::Records;
        let lower = Records::from_lengths(parts.lower.0, &parts.lower.1)?;
        let upper = Records::from_lengths(parts.upper.0, &parts.upper.1)?;
        let levels = Levels::from_records(parts.kind, parts.shape, lower, upper)?;
        let (count, supers) = (levels.cluster_count(), levels.super_count());
        Some(Self {
            levels,
            dirty: Dirty::none(count as u32),
            dirty_upper: Dirty::none(supers as u32),
            usable: true,
            version: parts.version,
            repair: None,
        })
    }

    /// Whether it is a built graph of a grid of this shape (width, height
    /// and move set) at this version, for a class the grid has: a baked
    /// graph's check against its baked grid, which builds no layer.
    #[cfg(feature = "serialize")]
    pub(crate) fn is_built_for(
        &self,
        shape: (u32, u32, Neighborhood),
        version: u64,
        classes: usize,
    ) -> bool {
        let levels = &self.levels;
        (levels.width, levels.height, levels.neighborhood) == shape
            && self.version == version
            && (1..=crate::core::MAX_UNIT_SIZE).contains(&levels.kind.size)
            && levels.kind.class.table_row() < classes
            && self.is_built()
    }

    /// Whether every record is built for its grid and none is being
    /// repaired: a graph that can be baked.
    #[cfg(feature = "serialize")]
    pub(crate) fn is_built(&self) -> bool {
        self.usable && self.dirty.is_empty() && self.dirty_upper.is_empty() && self.repair.is_none()
    }

    /// The unit size it is for.
    pub fn size(&self) -> u8 {
        self.levels.kind.size
    }

    /// The unit class and size it is for.
    pub fn kind(&self) -> UnitKind {
        self.levels.kind
    }

    /// About how many expansions building `class`'s graph costs, read off
    /// the grid in one pass (no labelling, no search): per cluster, the
    /// runs of cells that can be crossed on its borders times its walkable
    /// cells (a sweep from each entrance covers the cluster). Within a
    /// factor of two of the build on the benchmark maps (0.68–1.29 times
    /// the real cost on random512-10-0, AR0011SR and Berlin_0_1024), which
    /// is what a build's time is planned with.
    pub fn build_estimate(size_class: &SizeClass<'_>) -> u64 {
        let (width, height) = (size_class.width(), size_class.height());
        let costs = size_class.costs();
        let walkable = |x: u32, y: u32| costs[(y * width + x) as usize] != 0;
        let mut estimate = 0u64;
        for y0 in (0..height).step_by(CLUSTER as usize) {
            for x0 in (0..width).step_by(CLUSTER as usize) {
                let (x1, y1) = ((x0 + CLUSTER).min(width), (y0 + CLUSTER).min(height));
                let cells = (y0..y1)
                    .flat_map(|y| (x0..x1).map(move |x| (x, y)))
                    .filter(|&(x, y)| walkable(x, y))
                    .count() as u64;
                // Crossings on the right and top borders (each border is
                // counted by the cluster on its lower side, and again
                // below for the cluster on its higher side).
                let mut runs = 0;
                let mut count = |crossing: &dyn Fn(u32) -> bool, len: u32| {
                    let mut open = false;
                    for i in 0..len {
                        let now = crossing(i);
                        runs += u64::from(now && !open);
                        open = now;
                    }
                };
                if x1 < width {
                    count(
                        &|i| walkable(x1 - 1, y0 + i) && walkable(x1, y0 + i),
                        y1 - y0,
                    );
                }
                if x0 > 0 {
                    count(
                        &|i| walkable(x0, y0 + i) && walkable(x0 - 1, y0 + i),
                        y1 - y0,
                    );
                }
                if y1 < height {
                    count(
                        &|i| walkable(x0 + i, y1 - 1) && walkable(x0 + i, y1),
                        x1 - x0,
                    );
                }
                if y0 > 0 {
                    count(
                        &|i| walkable(x0 + i, y0) && walkable(x0 + i, y0 - 1),
                        x1 - x0,
                    );
                }
                estimate += runs * cells;
            }
        }
        estimate
    }

    /// Whether it was made for this class and size, on a grid of this
    /// size and move set (an edit never changes them; a replaced grid may).
    pub fn fits(&self, size_class: &SizeClass<'_>) -> bool {
        (
            self.levels.kind,
            self.levels.width,
            self.levels.height,
            self.levels.neighborhood,
        ) == (
            size_class.kind(),
            size_class.width(),
            size_class.height(),
            size_class.neighborhood(),
        )
    }

    /// Marks the records that the edits since the graph's version touched
    /// as dirty (all of them if the grid lost count or is another grid of
    /// the same size). Returns how many clusters are dirty now.
    pub fn note_edits(&mut self, size_class: &SizeClass<'_>) -> usize {
        if size_class.version() == self.version {
            return self.dirty.len();
        }
        match size_class.changes_since(self.version) {
            GridChanges::Cells(cells) => {
                for cell in cells {
                    self.touch(cell);
                }
            }
            GridChanges::Everything => {
                // Another grid: nothing of the old one is of use.
                self.usable = false;
                for cluster in 0..self.cluster_count() as u32 {
                    self.mark(cluster);
                }
            }
        }
        self.version = size_class.version();
        self.dirty.len()
    }

    /// Whether every record is built and up to date with `class`.
    pub fn is_ready(&self, size_class: &SizeClass<'_>) -> bool {
        self.dirty.is_empty() && self.dirty_upper.is_empty() && self.version == size_class.version()
    }

    /// Whether routes may run on it for `class`: every record was built
    /// for this grid, and edits since left at most some dirty (call
    /// [`note_edits`](Self::note_edits) first). A dirty record is the one
    /// from before the edits until it is built again: a route over it is
    /// still legal (its legs are refined on the grid as it is, and one an
    /// edit cut ends without a route), only perhaps not as good.
    pub fn is_usable(&self, size_class: &SizeClass<'_>) -> bool {
        self.usable && self.fits(size_class) && self.version == size_class.version()
    }

    /// Clusters in all.
    pub fn cluster_count(&self) -> usize {
        self.levels.cluster_count()
    }

    /// Super-clusters in all.
    pub fn super_count(&self) -> usize {
        self.levels.super_count()
    }

    /// Clusters still to build.
    pub fn dirty_count(&self) -> usize {
        self.dirty.len()
    }

    /// Level-1 nodes (entrance cells) in all built clusters.
    pub fn node_count(&self) -> usize {
        (0..self.cluster_count() as u32)
            .map(|cluster| self.levels.local_nodes(cluster).len())
            .sum()
    }

    /// Level-2 nodes in all built super-clusters.
    pub fn upper_node_count(&self) -> usize {
        (0..self.super_count() as u32)
            .map(|sup| self.levels.upper_nodes(sup).len() / 2)
            .sum()
    }

    /// Bytes of memory the graph holds.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.levels.lower.memory_bytes()
            + self.levels.upper.memory_bytes()
            + self.levels.generations.capacity() * std::mem::size_of::<u32>()
            + self.dirty.memory_bytes()
            + self.dirty_upper.memory_bytes()
            + self
                .repair
                .as_ref()
                .map_or(0, |repair| repair.memory_bytes())
    }

    /// Marks cluster `cluster` dirty, and with it its super-cluster (whose
    /// level-1 graph it is part of).
    pub(super) fn mark(&mut self, cluster: u32) {
        self.dirty.add(cluster);
        if self
            .repair
            .as_ref()
            .is_some_and(|repair| repair.cluster() == Some(cluster))
        {
            self.repair = None;
        }
        self.mark_super(self.levels.super_of(cluster));
    }

    /// Marks super-cluster `sup` dirty.
    pub(super) fn mark_super(&mut self, sup: u32) {
        self.dirty_upper.add(sup);
        if self
            .repair
            .as_ref()
            .is_some_and(|repair| repair.super_cluster() == Some(sup))
        {
            self.repair = None;
        }
    }

    /// An anchor changed: its cluster is dirty, and so is the one across a
    /// border the anchor lies on (which cells can be crossed there
    /// changed). A neighbour whose entrances change only because this
    /// cluster's pieces did is marked when this one is built again (see
    /// [`entrances_moved`](Self::entrances_moved)).
    fn touch(&mut self, cell: Cell) {
        if cell.x >= self.levels.width || cell.y >= self.levels.height {
            return;
        }
        let cluster = self.levels.cluster_of(cell);
        self.mark(cluster);
        let (x0, y0, w, h) = self.levels.bounds(cluster);
        let (cx, cy) = (cluster % self.levels.columns, cluster / self.levels.columns);
        let across = [
            (cell.x == x0 && cx > 0).then(|| cluster - 1),
            (cell.x == x0 + w - 1 && cx + 1 < self.levels.columns).then(|| cluster + 1),
            (cell.y == y0 && cy > 0).then(|| cluster - self.levels.columns),
            (cell.y == y0 + h - 1 && cy + 1 < self.levels.rows)
                .then(|| cluster + self.levels.columns),
        ];
        for neighbour in across.into_iter().flatten() {
            self.mark(neighbour);
        }
    }

    /// Builds dirty records, clusters first, oldest first, on at most
    /// `most` expansions, resumable at any of them: a record left half
    /// built is carried on with in the next call (unless an edit made it
    /// dirty again meanwhile). Returns the expansions spent, at most
    /// `most`. Edits since the graph's version are noted first
    /// ([`note_edits`](Self::note_edits)).
    pub fn repair(&mut self, size_class: &SizeClass<'_>, most: u64) -> u64 {
        self.note_edits(size_class);
        let mut cache = Cache::default();
        let mut spent = 0;
        while spent < most {
            let mut work = match self.repair.take() {
                Some(work) => *work,
                None => match (self.dirty.first(), self.dirty_upper.first()) {
                    (Some(cluster), _) => Repair::Cluster(ClusterBuild::new(cluster)),
                    (None, Some(sup)) => Repair::Super(SuperBuild::new(sup)),
                    (None, None) => break,
                },
            };
            let (used, done) = match &mut work {
                Repair::Cluster(build) => {
                    build.run(&self.levels, size_class, most - spent, &mut cache)
                }
                Repair::Super(build) => {
                    build.run(&self.levels, size_class, most - spent, &mut cache)
                }
            };
            spent += used;
            match (done, &work) {
                (Some(record), Repair::Cluster(build)) => {
                    let cluster = build.cluster;
                    // Records from before edits to this grid: a neighbour
                    // whose entrances moved with this one's is built again.
                    // (A first build, or one for another grid, builds every
                    // record anyway.)
                    let moved = if self.usable {
                        self.levels.entrances_moved(
                            cluster,
                            self.levels.lower.get(cluster as usize),
                            &record,
                        )
                    } else {
                        Vec::new()
                    };
                    self.levels.set_lower(cluster as usize, &record);
                    self.dirty.remove(cluster);
                    for neighbour in moved {
                        self.mark(neighbour);
                    }
                }
                (Some(record), Repair::Super(build)) => {
                    let sup = build.sup;
                    let moved = if self.usable {
                        self.levels.upper_entrances_moved(
                            sup,
                            self.levels.upper.get(sup as usize),
                            &record,
                        )
                    } else {
                        Vec::new()
                    };
                    self.levels.upper.set(sup as usize, &record);
                    self.dirty_upper.remove(sup);
                    for neighbour in moved {
                        self.mark_super(neighbour);
                    }
                }
                (None, _) => {
                    self.repair = Some(Box::new(work));
                    if used == 0 {
                        break;
                    }
                }
            }
        }
        if self.dirty.is_empty() && self.dirty_upper.is_empty() {
            self.usable = true;
            self.levels.lower.shrink();
            self.levels.upper.shrink();
        }
        spent
    }
}

/// A whole graph built a part at a time, the parts side by side on as many
/// threads as a caller has: first every cluster's record, then every
/// super-cluster's (which reads the clusters'). Each record is a function
/// of the grid, so any split gives the same graph as
/// [`CoarseGraph::build`].
///
/// ```
/// use bevy_frontier::core::{CoarseGraph, GraphBuild, NavGrid};
///
/// let grid = NavGrid::new(200, 120).unwrap();
/// let class = grid.size_class(1);
/// let mut build = GraphBuild::new(&class);
/// while !build.is_done() {
///     // Each part could run on a thread of its own.
///     let parts: Vec<_> = build
///         .parts(3)
///         .into_iter()
///         .map(|part| build.build_part(&class, part))
///         .collect();
///     build.install(parts);
/// }
/// assert!(build.into_graph().is_ready(&class));
/// ```
#[derive(Clone, Debug)]
pub struct GraphBuild {
    graph: CoarseGraph,
    /// Whether the clusters are done and the super-clusters are next.
    upper: bool,
    done: bool,
}

/// The records of one part of a [`GraphBuild`].
#[derive(Clone, Debug)]
pub struct BuiltPart {
    upper: bool,
    records: Vec<(u32, Vec<u8>)>,
}

impl GraphBuild {
    /// A build of `class`'s graph, nothing built yet.
    pub fn new(size_class: &SizeClass<'_>) -> Self {
        Self {
            graph: CoarseGraph::new(size_class),
            upper: false,
            done: false,
        }
    }

    /// The records of the current stage (clusters, then super-clusters),
    /// in `count` parts of about equal size.
    pub fn parts(&self, count: usize) -> Vec<Range<u32>> {
        let total = if self.upper {
            self.graph.levels.upper.count()
        } else {
            self.graph.levels.lower.count()
        } as u32;
        let count = (count.max(1) as u32).min(total.max(1));
        (0..count)
            .map(|part| total * part / count..total * (part + 1) / count)
            .collect()
    }

    /// Builds the records of one part (of [`parts`](Self::parts)) of the
    /// current stage on `class`, the grid the build was made for. Reads
    /// the build only, so parts can be built side by side.
    pub fn build_part(&self, size_class: &SizeClass<'_>, part: Range<u32>) -> BuiltPart {
        let mut cache = Cache::default();
        let records = part
            .map(|i| {
                let record = if self.upper {
                    SuperBuild::new(i)
                        .run(&self.graph.levels, size_class, u64::MAX, &mut cache)
                        .1
                } else {
                    ClusterBuild::new(i)
                        .run(&self.graph.levels, size_class, u64::MAX, &mut cache)
                        .1
                };
                (i, record.unwrap_or_default())
            })
            .collect();
        BuiltPart {
            upper: self.upper,
            records,
        }
    }

    /// Installs the parts of the current stage and moves to the next.
    /// Records of another stage are ignored; one no part held stays dirty
    /// (a [`CoarseGraph::repair`] builds it).
    pub fn install(&mut self, parts: impl IntoIterator<Item = BuiltPart>) {
        for part in parts {
            if part.upper != self.upper {
                continue;
            }
            for (i, record) in part.records {
                if self.upper {
                    self.graph.levels.upper.set(i as usize, &record);
                    self.graph.dirty_upper.remove(i);
                } else {
                    self.graph.levels.set_lower(i as usize, &record);
                    self.graph.dirty.remove(i);
                }
            }
        }
        if self.upper {
            self.done = true;
        } else {
            self.upper = true;
        }
    }

    /// Whether both stages are installed.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The graph (records no part held still dirty).
    pub fn into_graph(mut self) -> CoarseGraph {
        self.graph.levels.lower.shrink();
        self.graph.levels.upper.shrink();
        self.graph.usable = self.graph.dirty.is_empty() && self.graph.dirty_upper.is_empty();
        self.graph
    }
}
