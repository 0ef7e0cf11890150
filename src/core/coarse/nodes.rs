//! The A* over a graph's nodes: for a route, on level 1 inside the
//! super-clusters of its start and goal and on level 2 between them; and
//! on level 1 inside two super-clusters side by side, to refine a route's
//! course through them into level-1 nodes.

use super::levels::Levels;
use super::local::Positions;
use super::{ABSENT, IndexMap, WEIGHT_ONE};
use crate::core::grid::Cell;
use crate::core::heap::OpenList;
use crate::core::moves::{MOVE_DELTAS, octile, step_cost};
use crate::core::size_class::SizeClass;

/// How a route reaches a waypoint from the one before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
enum Scope {
    /// A route: level 1 inside these super-clusters (its start's and its
    /// goal's), level 2 elsewhere.
    Route([u32; 2]),
    /// Level 1 inside these super-clusters (one, or two side by side).
    Inside([u32; 2]),
}

/// The A* over the nodes of a [`CoarseGraph`].
#[derive(Clone, Debug)]
pub(super) struct Abstract {
    /// Node cell → id.
    ids: IndexMap<u32>,
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

/// What a node expansion is charged, in halves of a budget unit: three, a
/// unit and a half. A node expansion scores every other node of its
/// cluster or super-cluster (7 on average) and looks across four borders:
/// under callgrind it runs about 2,750 instructions, against 855 for an
/// expansion refining a leg to cells (300 routes on random512-10-0 with
/// the stress test's terrain). Charged as one, a frame of quick routes
/// took up to 4.7 ms for its 4,096 expansions against about 1 ms for a
/// frame of searches (`stress --terrain`); at one and a half, quick frames
/// no longer stand out, and first routes come a little later (138 frames
/// at worst for 1,000 units on random512-10-0 instead of 110; at two, 178).
const NODE_HALVES: u64 = 3;

impl Default for Abstract {
    fn default() -> Self {
        Self {
            ids: IndexMap::default(),
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
        self.ids.capacity() * 12 + self.cells.capacity() * 26 + self.open.capacity() * 12
    }

    /// Begins a route's search from the nodes the start reaches
    /// (`from_start`), with the cost of a path inside one cluster to the
    /// goal if there is one (`direct`).
    pub(super) fn begin_route(
        &mut self,
        graph: &Levels,
        class: &SizeClass<'_>,
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
            self.score(graph, class, node, cost, (ABSENT, Leg::Cells), goal, weight);
        }
    }

    /// Begins a search over the level-1 nodes of super-clusters `supers`
    /// from node `from` (a grid cell index) towards `to`.
    pub(super) fn begin_inside(
        &mut self,
        graph: &Levels,
        class: &SizeClass<'_>,
        supers: [u32; 2],
        from: u32,
        to: Cell,
    ) {
        self.reset(Scope::Inside(supers));
        self.score(graph, class, from, 0, (ABSENT, Leg::Cells), to, WEIGHT_ONE);
    }

    fn reset(&mut self, scope: Scope) {
        self.ids.clear();
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

    fn id(&mut self, node: u32) -> u32 {
        if let Some(&id) = self.ids.get(&node) {
            return id;
        }
        let id = self.cells.len() as u32;
        self.ids.insert(node, id);
        self.cells.push(node);
        self.g.push(u64::MAX);
        self.parent.push(ABSENT);
        self.leg.push(Leg::Cells);
        self.closed.push(false);
        self.positions.push(ABSENT);
        id
    }

    #[allow(clippy::too_many_arguments)]
    fn score(
        &mut self,
        graph: &Levels,
        class: &SizeClass<'_>,
        node: u32,
        g: u64,
        (parent, leg): (u32, Leg),
        goal: Cell,
        weight: u64,
    ) {
        let id = self.id(node);
        let i = id as usize;
        if self.closed[i] || g >= self.g[i] {
            return;
        }
        let cell = graph.cell_of(node);
        let h = octile(cell.x.abs_diff(goal.x), cell.y.abs_diff(goal.y))
            * class.min_walkable_cost().max(1) as u64;
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
        class: &SizeClass<'_>,
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
                self.expand_lower(graph, class, (id, node, g, cluster), goal.cell, weight);
            } else {
                self.expanded[1] += 1;
                self.expand_upper(graph, class, (id, node, g, cluster), goal.cell, weight);
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
        class: &SizeClass<'_>,
        (id, node, g, cluster): (u32, u32, u64, u32),
        goal: Cell,
        weight: u64,
    ) {
        let Some(at) = graph.node_position(cluster, node) else {
            // No longer a node: an edit moved the entrances.
            return;
        };
        let n = graph.local_nodes(cluster).len();
        for j in 0..n {
            if j == at {
                continue;
            }
            if let Some(cost) = graph.inner_cost(cluster, at, j) {
                let other = graph.cell_index(cluster, graph.local_nodes(cluster)[j]);
                self.score(
                    graph,
                    class,
                    other,
                    g + cost,
                    (id, Leg::Cells),
                    goal,
                    weight,
                );
            }
        }
        self.cross(graph, class, (id, node, g, cluster), goal, weight, false);
    }

    /// A level-2 node: the others of its super-cluster, and the level-2
    /// node facing it across a border.
    fn expand_upper(
        &mut self,
        graph: &Levels,
        class: &SizeClass<'_>,
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
                let other = graph.upper_cell(sup, j);
                self.score(
                    graph,
                    class,
                    other,
                    g + cost,
                    (id, Leg::Upper),
                    goal,
                    weight,
                );
            }
        }
        self.cross(graph, class, (id, node, g, cluster), goal, weight, true);
    }

    /// The nodes one step from `node` across its cluster's borders that
    /// the search may go to.
    #[allow(clippy::too_many_arguments)]
    fn cross(
        &mut self,
        graph: &Levels,
        class: &SizeClass<'_>,
        (id, node, g, cluster): (u32, u32, u64, u32),
        goal: Cell,
        weight: u64,
        upper: bool,
    ) {
        let cell = graph.cell_of(node);
        let sup = graph.super_of(cluster);
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
            let Some(cost) = class.cost(next).filter(|&c| c != 0) else {
                continue;
            };
            self.score(
                graph,
                class,
                index,
                g + cost as u64 * step_cost(0),
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
    pub(super) fn inside_path(&self, to: u32) -> Option<Vec<(u32, Leg)>> {
        let &target = self.ids.get(&to)?;
        if !self.closed[target as usize] {
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
