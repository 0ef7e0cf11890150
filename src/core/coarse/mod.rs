//! A coarse graph over a size class, for routes whose work does not grow
//! with the map (hierarchical A*, HPA*), in two levels.
//!
//! **Level 1.** The grid is cut into square clusters of [`CLUSTER`] cells.
//! Where two clusters touch, each run of border cells walkable on both
//! sides is an *entrance*: one pair of facing cells in the run's middle for
//! a short run, one at each end and one in the middle for a long one. Each
//! cluster keeps its entrance cells (its *nodes*) and the cost between
//! every two of them along a path that stays in the cluster, found by
//! Dijkstra's algorithm on the cluster's own cells with the real move
//! costs.
//!
//! **Level 2.** Square blocks of [`SUPER`] × [`SUPER`] clusters are
//! *super-clusters*. Where two super-clusters touch, some of the level-1
//! entrances across their border are kept as level-2 entrances: for each
//! pair of *pieces* they join (the parts of each super-cluster that its
//! level-1 graph connects), the first, and others at least
//! [`SUPER_SPACING`] cells apart. Each super-cluster keeps its level-2
//! nodes and the costs between them along the level-1 graph inside it.
//!
//! **A route** joins its start and goal to the nodes of their clusters,
//! then runs one A* over the nodes: on level 1 inside the super-clusters
//! of the start and the goal, on level 2 everywhere between, so its work
//! grows with the number of super-clusters it crosses, not of cells or
//! clusters. Its legs are then *refined* in order, only as far as they are
//! wanted: a level-2 leg becomes level-1 nodes (an A* over the level-1
//! graph inside its super-cluster), a level-1 leg becomes cells (an A*
//! inside its cluster). A first stretch of a long route costs the join, the
//! search and its first legs, not the whole route.
//!
//! The graph is for one size class, so a unit of any size gets a route its
//! footprint fits along (one graph per size in use, as a size class is one
//! grid per size). Edits make the clusters they touch (and a neighbour
//! whose border cells they change) *dirty*, and with them their
//! super-clusters; [`CoarseGraph::repair`] builds dirty clusters again on
//! a budget of expansions, resumable at any expansion, so an edit costs
//! the graph the clusters round it, never the whole map. Routes are legal
//! by construction: every leg is a path on the grid under its move rules.
//!
//! Costs between nodes are kept in one byte each, a float with a 5-bit
//! mantissa (within 1.6% of the cost found; see `cost_code`): the tables
//! guide the search over nodes, and the legs are refined at their exact
//! cost.
//!
//! | file | holds |
//! |---|---|
//! | `levels.rs` | the lattice of clusters and super-clusters, each one's record, and reading them |
//! | `build.rs` | building one cluster's or super-cluster's record, resumable at any expansion |
//! | `graph.rs` | [`CoarseGraph`]: what is dirty, repairs on a budget, memory; [`GraphBuild`] |
//! | `local.rs` | searches confined to one cluster: the build's Dijkstra, a leg's A* |
//! | `nodes.rs` | the A* over nodes, on both levels, and inside super-clusters |
//! | `route.rs` | [`CoarseRoute`]: the join, the search, the refinement, by phase |

mod build;
mod graph;
mod levels;
mod local;
mod nodes;
mod route;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

#[cfg(feature = "serialize")]
pub(crate) use graph::GraphParts;
pub use graph::{BuiltPart, CoarseGraph, GraphBuild};
pub use route::{CoarseRoute, RouteStatus, RouteWork};

/// Hashes the `u32` keys of the graph's maps (cell indices) with one
/// multiply: small distinct integers, not input to defend against, on the
/// node search's hottest path.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct IndexHasher(u64);

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

/// A map keyed by cell index.
pub(super) type IndexMap<V> = HashMap<u32, V, BuildHasherDefault<IndexHasher>>;

/// A set of cell indices, hashed as [`IndexMap`]'s keys are.
pub(crate) type IndexSet = std::collections::HashSet<u32, BuildHasherDefault<IndexHasher>>;

/// Expansions of [`CoarseGraph::repair`] (a cluster's Dijkstra, or four
/// cells labelled) per unit of a frame's
/// budget when the plugin repairs a graph on it: under callgrind a repair
/// expansion runs 319 instructions, a plain A* expansion (one unit) 852
/// (`tools/budget_cost.py`, random512-10-0 with the stress test's
/// terrain), so three make a unit (958 instructions).
pub const REPAIR_EXPANSIONS_PER_UNIT: u64 = 3;

/// The side of a cluster, in cells.
pub const CLUSTER: u32 = 16;

/// The side of a super-cluster, in clusters.
pub const SUPER: u32 = 4;

/// Runs of at least this many border cells get an entrance at each end as
/// well as in the middle.
pub(super) const LONG_RUN: u32 = 6;

/// Two entrances joining the same pieces of two clusters (cells connected
/// inside each cluster) are at least this many cells apart along a
/// border: a route crossing between them loses at most a few steps, and
/// the nodes (and the tables, which grow with their square) stay few.
pub(super) const SPACING: u32 = 10;

/// Two level-2 entrances joining the same pieces of two super-clusters are
/// at least this many cells apart along their border.
pub const SUPER_SPACING: u32 = 16;

/// Not on a heap (see [`HeapPositions`](crate::core::heap::HeapPositions)).
pub(super) const ABSENT: u32 = u32::MAX;

/// Fixed point for the heuristic weight.
pub(super) const WEIGHT_ONE: u64 = 1 << 10;

/// The costs in a table, in one byte each: a float with a 5-bit mantissa.
/// Costs below 64 units are exact; above, within 1/64 of the value
/// (1.6%). 255 means no path; the most a code holds is 3,968 units
/// (dearer paths are kept at that ceiling: the tables guide the search,
/// the legs are refined at their exact cost).
pub(super) mod cost_code {
    /// No path.
    pub(in crate::core::coarse) const NONE: u8 = u8::MAX;

    /// The most a code holds, in units (the code below [`NONE`]).
    pub(in crate::core::coarse) const MAX: u32 = 62 << 6;

    /// The code of `units`: exact below 64, else rounded to the nearest
    /// the code can hold (at most [`MAX`]).
    pub(in crate::core::coarse) fn encode(units: u32) -> u8 {
        let units = units.min(MAX);
        if units < 64 {
            return units as u8;
        }
        // units in [32 << e, 64 << e) for e ≥ 1: a mantissa in [32, 64).
        let mut e = 31 - units.leading_zeros() - 5;
        let mut mantissa = (units + (1 << (e - 1))) >> e;
        if mantissa == 64 {
            mantissa = 32;
            e += 1;
        }
        (32 + 32 * e + (mantissa - 32)) as u8
    }

    /// The units a code stands for (`None` for [`NONE`]).
    #[inline(always)]
    pub(in crate::core::coarse) fn decode(code: u8) -> Option<u32> {
        if code == NONE {
            return None;
        }
        let code = code as u32;
        if code < 64 {
            return Some(code);
        }
        let e = (code - 32) / 32;
        let mantissa = (code - 32) % 32 + 32;
        Some(mantissa << e)
    }
}
