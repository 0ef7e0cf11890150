//! The A* over a graph's nodes: for a route, on level 1 inside the
//! super-clusters of its start and goal and on level 2 between them; and
//! on level 1 inside two super-clusters side by side, to refine a route's
//! course through them into level-1 nodes.

use super::cost_code;
use super::levels::{LOWER_UNIT, Levels};
use super::local::Positions;
use super::{ABSENT, IndexMap, WEIGHT_ONE};
use crate::core::grid::Cell;
use crate::core::heap::OpenList;
use crate::core::moves::{octile, step_cost};
use crate::core::size_class::SizeClass;

/// How a route reaches a waypoint from the one before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) enum Leg {
    /// Through the cells of one cluster (a level-1 table entry, or joining
    /// the start or the goal).
    Cells,
    /// One step across a border between two clusters (an entrance).
    Step,
    /// Through one super-cluster's level-1 graph (a level-2 table entry).
    Upper,
}

/// Where a node search may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
enum Scope {
    /// A route: level 1 inside these super-clusters (its start's and its
    /// goal's), level 2 elsewhere.
    Route([u32; 2]),
    /// Level 1 inside these super-clusters (one, or two side by side).
    Inside([u32; 2]),
}

/// The A* over the nodes of a [`CoarseGraph`].
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct Abstract {
    /// Per cluster reached: the first of a block of ids, one per node of
    /// its record in the record's order, the block's length, and the
    /// record's generation it numbers ([`Levels::generations`]). A node's
    /// id is its cluster's block plus its place in the record: one lookup
    /// per cluster an expansion reaches, not one per node.
    blocks: IndexMap<(u32, u32, u32)>,
    /// Per id: node cell, score, parent id (`ABSENT` for the first), the
    /// leg it was reached by, closed, heap position.
    cells: Vec<u32>,
    g: Vec<u64>,
    parent: Vec<u32>,
    leg: Vec<Leg>,
    closed: Vec<bool>,
    positions: Vec<u32>,
    open: OpenList<u64>,
    /// The best cost found to the goal, and the id it came through
    /// (`ABSENT` for the direct path inside one cluster).
    best: Option<(u64, u32)>,
    scope: Scope,
    /// Halves of a budget unit owed by the node expansions so far (see
    /// [`NODE_HALVES`]), paid as the budget allows.
    owed_halves: u64,
    /// Nodes expanded on level 1 and on level 2.
    pub(super) expanded: [u64; 2],
}

/// What a node expansion is charged, in halves of a budget unit: four, two
/// units (at most four: one expansion pays at most one unit beyond its
/// own). A node expansion scores every other node of its cluster or
/// super-cluster (7 on average) and looks across its cluster's borders:
/// under callgrind it runs about 1,960 instructions on random512-10-0 and
/// 2,280 on Berlin_0_1024 with the stress test's terrain (quick routes'
/// weight, `tools/budget_cost.py`), against 852 and 930 for a plain A*
/// expansion, one unit; so charged, a unit of it costs 982 and 1,141,
/// within 7% and 10% of the mean of every kind of work the budget pays
/// for (920 and 1,042). It cost 2,850 before the nodes of a cluster were
/// numbered as one block (one lookup per cluster reached, not per node)
/// and the crossings were looked for only on the cluster's own borders.
const NODE_HALVES: u64 = 4;
const _: () = assert!(NODE_HALVES >= 2 && NODE_HALVES <= 4);

/// A level-1 table entry's cost, fixed point; `None` for no path.
#[inline(always)]
fn inner_cost(code: u8) -> Option<u64> {
    cost_code::decode(code).map(|units| units as u64 * LOWER_UNIT)
}

impl Default for Abstract {
    fn default() -> Self {
        Self {
            blocks: IndexMap::default(),
            cells: Vec::new(),
            g: Vec::new(),
            parent: Vec::new(),
            leg: Vec::new(),
            closed: Vec::new(),
            positions: Vec::new(),
            open: OpenList::default(),
            best: None,
            scope: Scope::Inside([0; 2]),
            owed_halves: 0,
            expanded: [0; 2],
        }
    }
}

/// The goal of a node search: its cell, and the nodes of its cluster that
/// reach it with what that costs.
pub(super) struct Goal<'a> {
    pub(super) cell: Cell,
    pub(super) from: &'a [(u32, u64)],
}

impl Abstract {
    pub(super) fn memory_bytes(&self) -> usize {
        self.blocks.capacity() * 16 + self.cells.capacity() * 26 + self.open.capacity() * 12
    }

    /// Begins a route's search from the nodes the start reaches
    /// (`from_start`), with the cost of a path inside one cluster to the
    /// goal if there is one (`direct`).
    pub(super) fn begin_route(
        &mut self,
        graph: &Levels,
        size_class: &SizeClass<'_>,
        (start, from_start): (Cell, &[(u32, u64)]),
        direct: Option<u64>,
        goal: Cell,
        weight: u64,
    ) {
        self.reset(Scope::Route([
            graph.super_of(graph.cluster_of(start)),
            graph.super_of(graph.cluster_of(goal)),
        ]));
        self.best = direct.map(|cost| (cost, ABSENT));
        for &(node, cost) in from_start {
            if let Some(id) = self.id_of_node(graph, node) {
                self.score(
                    graph,
                    size_class,
                    id,
                    cost,
                    (ABSENT, Leg::Cells),
                    goal,
                    weight,
                );
            }
        }
    }

    /// Begins a search over the level-1 nodes of super-clusters `supers`
    /// from node `from` (a grid cell index) towards `to`.
    pub(super) fn begin_inside(
        &mut self,
        graph: &Levels,
        size_class: &SizeClass<'_>,
        supers: [u32; 2],
        from: u32,
        to: Cell,
    ) {
        self.reset(Scope::Inside(supers));
        if let Some(id) = self.id_of_node(graph, from) {
            self.score(
                graph,
                size_class,
                id,
                0,
                (ABSENT, Leg::Cells),
                to,
                WEIGHT_ONE,
            );
        }
    }

    fn reset(&mut self, scope: Scope) {
        self.blocks.clear();
        self.cells.clear();
        self.g.clear();
        self.parent.clear();
        self.leg.clear();
        self.closed.clear();
        self.positions.clear();
        self.open.clear();
        self.best = None;
        self.scope = scope;
        self.owed_halves = 0;
    }

    /// The first id of `cluster`'s block, numbered now if the cluster was
    /// not reached yet or its record changed since.
    fn block(&mut self, graph: &Levels, cluster: u32) -> u32 {
        let generation = graph.generations[cluster as usize];
        if let Some(&(first, _, made)) = self.blocks.get(&cluster)
            && made == generation
        {
            return first;
        }
        let n = graph.local_nodes(cluster).len() as u32;
        let first = self.cells.len() as u32;
        self.blocks.insert(cluster, (first, n, generation));
        for node in graph.nodes(cluster) {
            self.cells.push(node);
        }
        let len = self.cells.len();
        self.g.resize(len, u64::MAX);
        self.parent.resize(len, ABSENT);
        self.leg.resize(len, Leg::Cells);
        self.closed.resize(len, false);
        self.positions.resize(len, ABSENT);
        first
    }

    /// The id of grid cell index `node`, if it is a node of its cluster.
    fn id_of_node(&mut self, graph: &Levels, node: u32) -> Option<u32> {
        let cluster = graph.cluster_of(graph.cell_of(node));
        let at = graph.node_position(cluster, node)?;
        Some(self.block(graph, cluster) + at as u32)
    }

    #[allow(clippy::too_many_arguments)]
    fn score(
        &mut self,
        graph: &Levels,
        size_class: &SizeClass<'_>,
        id: u32,
        g: u64,
        (parent, leg): (u32, Leg),
        goal: Cell,
        weight: u64,
    ) {
        let i = id as usize;
        if self.closed[i] || g >= self.g[i] {
            return;
        }
        let cell = graph.cell_of(self.cells[i]);
        let h = octile(cell.x.abs_diff(goal.x), cell.y.abs_diff(goal.y))
            * size_class.min_walkable_cost().max(1) as u64;
        let key = g + (h as u128 * weight as u128 / WEIGHT_ONE as u128) as u64;
        let fresh = self.g[i] == u64::MAX;
        self.g[i] = g;
        self.parent[i] = parent;
        self.leg[i] = leg;
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
        graph: &Levels,
        size_class: &SizeClass<'_>,
        goal: &Goal<'_>,
        weight: u64,
        most: u64,
    ) -> (u64, bool) {
        let goal_cluster = graph.cluster_of(goal.cell);
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
            // The rest of its charge, as far as the budget goes (never
            // beyond it; what is left is paid by the next expansions).
            self.owed_halves += NODE_HALVES - 2;
            if self.owed_halves >= 2 && spent < most {
                self.owed_halves -= 2;
                spent += 1;
            }
            let i = id as usize;
            self.closed[i] = true;
            let (node, g) = (self.cells[i], self.g[i]);
            let cell = graph.cell_of(node);
            let cluster = graph.cluster_of(cell);
            if cluster == goal_cluster
                && let Some(&(_, rest)) = goal.from.iter().find(|(n, _)| *n == node)
                && self.best.is_none_or(|(best, _)| g + rest < best)
            {
                self.best = Some((g + rest, id));
            }
            let sup = graph.super_of(cluster);
            let lower = match self.scope {
                Scope::Route(lower) => lower.contains(&sup),
                Scope::Inside(inside) => inside.contains(&sup),
            };
            if lower {
                self.expanded[0] += 1;
                self.expand_lower(graph, size_class, (id, node, g, cluster), goal.cell, weight);
            } else {
                self.expanded[1] += 1;
                self.expand_upper(graph, size_class, (id, node, g, cluster), goal.cell, weight);
            }
        }
        (spent, false)
    }

    /// A level-1 node: the others of its cluster, and the nodes facing it
    /// across its cluster's borders (on level 2 only where that level
    /// goes: a level-2 node, or inside the scope).
    fn expand_lower(
        &mut self,
        graph: &Levels,
        size_class: &SizeClass<'_>,
        (id, node, g, cluster): (u32, u32, u64, u32),
        goal: Cell,
        weight: u64,
    ) {
        let Some(at) = graph.node_position(cluster, node) else {
            // No longer a node: an edit moved the entrances.
            return;
        };
        let first = self.block(graph, cluster);
        // Node `at`'s row of the cluster's table: the cost to every other
        // node, its own left out.
        let row = graph.inner_row(cluster, at);
        for (column, &code) in row.iter().enumerate() {
            let j = if column < at { column } else { column + 1 };
            if let Some(cost) = inner_cost(code) {
                let other = first + j as u32;
                self.score(
                    graph,
                    size_class,
                    other,
                    g + cost,
                    (id, Leg::Cells),
                    goal,
                    weight,
                );
            }
        }
        self.cross(
            graph,
            size_class,
            (id, node, g, cluster),
            goal,
            weight,
            false,
        );
    }

    /// A level-2 node: the others of its super-cluster, and the level-2
    /// node facing it across a border.
    fn expand_upper(
        &mut self,
        graph: &Levels,
        size_class: &SizeClass<'_>,
        (id, node, g, cluster): (u32, u32, u64, u32),
        goal: Cell,
        weight: u64,
    ) {
        let sup = graph.super_of(cluster);
        let Some(at) = graph.upper_position(cluster, node) else {
            return;
        };
        let m = graph.upper_nodes(sup).len() / 2;
        for j in 0..m {
            if j == at {
                continue;
            }
            if let Some(cost) = graph.upper_cost(sup, at, j) {
                let nodes = graph.upper_nodes(sup);
                let (inner, local) = (nodes[2 * j], nodes[2 * j + 1]);
                let cluster = graph.cluster_in(sup, inner);
                let Ok(place) = graph.local_nodes(cluster).binary_search(&local) else {
                    continue;
                };
                let other = self.block(graph, cluster) + place as u32;
                self.score(
                    graph,
                    size_class,
                    other,
                    g + cost,
                    (id, Leg::Upper),
                    goal,
                    weight,
                );
            }
        }
        self.cross(
            graph,
            size_class,
            (id, node, g, cluster),
            goal,
            weight,
            true,
        );
    }

    /// The nodes one step from `node` across its cluster's borders that
    /// the search may go to.
    #[allow(clippy::too_many_arguments)]
    fn cross(
        &mut self,
        graph: &Levels,
        size_class: &SizeClass<'_>,
        (id, node, g, cluster): (u32, u32, u64, u32),
        goal: Cell,
        weight: u64,
        upper: bool,
    ) {
        let cell = graph.cell_of(node);
        let sup = graph.super_of(cluster);
        let (x0, y0, w, h) = graph.bounds(cluster);
        // Only across the cluster's own borders, in the order of the four
        // orthogonal moves (+x, −x, +y, −y).
        let across = [
            (cell.x + 1 == x0 + w && cell.x + 1 < graph.width).then(|| (cluster + 1, node + 1)),
            (cell.x == x0 && cell.x > 0).then(|| (cluster - 1, node - 1)),
            (cell.y + 1 == y0 + h && cell.y + 1 < graph.height)
                .then(|| (cluster + graph.columns, node + graph.width)),
            (cell.y == y0 && cell.y > 0).then(|| (cluster - graph.columns, node - graph.width)),
        ];
        for (other, index) in across.into_iter().flatten() {
            let Some(place) = graph.node_position(other, index) else {
                continue;
            };
            let other_sup = graph.super_of(other);
            let allowed = match self.scope {
                Scope::Inside(inside) => inside.contains(&other_sup),
                Scope::Route(lower) => {
                    // Level 2 crosses only to level-2 nodes; level 1 stays
                    // on level 1 inside its super-clusters.
                    let to_upper = graph.upper_position(other, index).is_some();
                    if upper {
                        other_sup != sup && to_upper
                    } else {
                        lower.contains(&other_sup) || to_upper
                    }
                }
            };
            if !allowed {
                continue;
            }
            let Some(cost) = size_class.costs().get(index as usize).filter(|&&c| c != 0) else {
                continue;
            };
            let next_id = self.block(graph, other) + place as u32;
            self.score(
                graph,
                size_class,
                next_id,
                g + *cost as u64 * step_cost(0),
                (id, Leg::Step),
                goal,
                weight,
            );
        }
    }

    /// The search's waypoints once it is over, each with the leg that
    /// reaches it: `start`, the nodes in order, `goal` (each once); and the
    /// index of the last node among them. `None` if it found none.
    pub(super) fn waypoints(
        &self,
        graph: &Levels,
        start: Cell,
        goal: Cell,
    ) -> Option<(Vec<(Cell, Leg)>, usize)> {
        let (_, mut id) = self.best?;
        let mut nodes = Vec::new();
        while id != ABSENT {
            let node = self.cells[id as usize];
            nodes.push((graph.cell_of(node), self.leg[id as usize]));
            id = self.parent[id as usize];
        }
        nodes.reverse();
        let mut waypoints = vec![(start, Leg::Cells)];
        waypoints.extend(nodes.into_iter().filter(|&(cell, _)| cell != start));
        let last_node = waypoints.len() - 1;
        if waypoints.last().map(|&(cell, _)| cell) != Some(goal) {
            waypoints.push((goal, Leg::Cells));
        }
        Some((waypoints, last_node))
    }

    /// A search inside super-clusters once over: the nodes after its first
    /// up to `to` (a grid cell index), with their legs. `None` if it did
    /// not reach it.
    pub(super) fn inside_path(&self, graph: &Levels, to: u32) -> Option<Vec<(u32, Leg)>> {
        let cluster = graph.cluster_of(graph.cell_of(to));
        let at = graph.node_position(cluster, to)?;
        let &(first, len, _) = self.blocks.get(&cluster)?;
        let target = first + at as u32;
        // Numbered on this record (not an older one), and settled.
        if at as u32 >= len || self.cells[target as usize] != to || !self.closed[target as usize] {
            return None;
        }
        let mut nodes = Vec::new();
        let mut id = target;
        while self.parent[id as usize] != ABSENT {
            nodes.push((self.cells[id as usize], self.leg[id as usize]));
            id = self.parent[id as usize];
        }
        nodes.reverse();
        Some(nodes)
    }
}
