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

mod build;
mod graph;
mod local;
mod nodes;
mod route;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

pub use graph::CoarseGraph;
pub use route::{CoarseRoute, RouteStatus, RouteWork};

/// Hashes the `u32` keys of the graph's maps (cell and cluster indices)
/// with one multiply: small distinct integers, not input to defend
/// against, on the node search's hottest path.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct IndexHasher(u64);

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
pub(super) type IndexMap<V> = HashMap<u32, V, BuildHasherDefault<IndexHasher>>;

/// The side of a cluster, in cells.
pub const CLUSTER: u32 = 16;

/// Runs of at least this many border cells get an entrance at each end as
/// well as in the middle.
pub(super) const LONG_RUN: u32 = 6;

/// Intra-cluster costs are kept in `u16`s, in units of `COST_SCALE >>
/// COARSE_SHIFT` (a quarter of a step on plain ground): up to 16,382
/// quarter steps, which a path across a cluster reaches only on ground
/// costing 45 or more all the way. Dearer paths are kept at that ceiling:
/// the table guides the node search, the legs are refined at their exact
/// cost.
pub(super) const COARSE_SHIFT: u32 = 18;

/// No path inside the cluster.
pub(super) const NONE: u16 = u16::MAX;

/// Two entrances joining the same pieces of two clusters (cells connected
/// inside each cluster) are at least this many cells apart along a
/// border: a route crossing between them loses at most a few steps, and
/// the nodes (and the tables, which grow with their square) stay few.
pub(super) const SPACING: u32 = 6;

/// Not on a heap (see [`HeapPositions`](crate::core::heap::HeapPositions)).
pub(super) const ABSENT: u32 = u32::MAX;

/// Fixed point for the heuristic weight.
pub(super) const WEIGHT_ONE: u64 = 1 << 10;
