//! The A* over a graph's nodes.

use super::graph::CoarseGraph;
use super::local::Positions;
use super::{ABSENT, IndexMap, WEIGHT_ONE};
use crate::core::grid::Cell;
use crate::core::heap::OpenList;
use crate::core::moves::{MOVE_DELTAS, octile, step_cost};
use crate::core::size_class::SizeClass;

/// The A* over the nodes of a [`CoarseGraph`].
#[derive(Clone, Debug, Default)]
pub(super) struct Abstract {
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
    pub(super) fn memory_bytes(&self) -> usize {
        self.ids.capacity() * 12 + self.cells.capacity() * 25
    }

    pub(super) fn begin(
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

    pub(super) fn id(&mut self, node: u32) -> u32 {
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
    pub(super) fn score(
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
    pub(super) fn run(
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
    pub(super) fn waypoints(
        &self,
        graph: &CoarseGraph,
        start: Cell,
        goal: Cell,
    ) -> Option<Vec<Cell>> {
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
