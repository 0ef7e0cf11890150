//! A route over the graph, found and refined a budget of expansions at a
//! time: joining start and goal, the search over nodes, the refinement of
//! each leg.

use super::WEIGHT_ONE;
use super::build::pieces;
use super::graph::CoarseGraph;
use super::local::{Area, Local};
use super::nodes::Abstract;
use crate::core::grid::Cell;
use crate::core::moves::{COST_SCALE, octile, step_cost};
use crate::core::search::Path;
use crate::core::size_class::SizeClass;

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
    work: RouteWork,
    status: RouteStatus,
}

/// What a [`CoarseRoute`] has spent, by part, in expansions (cells of a
/// cluster searched or labelled, and nodes of the graph).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RouteWork {
    /// Joining the start and the goal to the graph's nodes round them.
    pub join: u64,
    /// The search over the graph's nodes.
    pub nodes: u64,
    /// Refining the route's legs to cells.
    pub refine: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
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
            work: RouteWork::default(),
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

    /// What it has spent so far, by part.
    pub fn work(&self) -> RouteWork {
        self.work
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
            let (spent, part) = match self.phase {
                Phase::FromStart => (self.connect_start(graph, class, left), &mut self.work.join),
                Phase::ToGoal => (self.connect_goal(graph, class, left), &mut self.work.join),
                Phase::Nodes => (self.nodes(graph, class, left), &mut self.work.nodes),
                Phase::Refine => (self.refine(graph, class, left), &mut self.work.refine),
                Phase::Done => break,
            };
            *part += spent;
            self.expansions += spent;
            left = left.saturating_sub(spent.max(1));
        }
        self.status
    }

    /// Runs the Dijkstra from (`forward`) or to `cell` in its cluster on at
    /// most `most` expansions. Returns them, and once it is over the cost
    /// to (or from) each node of the cluster it reached.
    pub(super) fn connect(
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

    pub(super) fn connect_start(
        &mut self,
        graph: &CoarseGraph,
        class: &SizeClass<'_>,
        most: u64,
    ) -> u64 {
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

    pub(super) fn connect_goal(
        &mut self,
        graph: &CoarseGraph,
        class: &SizeClass<'_>,
        most: u64,
    ) -> u64 {
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

    pub(super) fn nodes(&mut self, graph: &CoarseGraph, class: &SizeClass<'_>, most: u64) -> u64 {
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

    pub(super) fn refine(&mut self, graph: &CoarseGraph, class: &SizeClass<'_>, most: u64) -> u64 {
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

    pub(super) fn fail(&mut self) {
        self.phase = Phase::Done;
        self.status = RouteStatus::NotFound;
    }
}

/// The path through `cells` on `class`, with what walking it costs.
pub(super) fn walked(class: &SizeClass<'_>, cells: &[Cell]) -> Path {
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
pub(super) const LABELS_PER_EXPANSION: u64 = 4;

/// The nodes of `cell`'s cluster that a path inside the cluster joins to
/// it (those in its piece), each with the least a path between them could
/// cost (octile distance at the cheapest cost): the node search starts
/// (`forward`) or ends there, and the leg between is refined like any
/// other. Cheaper than a Dijkstra over the cluster, for a route whose
/// start and goal lie in different clusters (the labelling is charged at
/// [`LABELS_PER_EXPANSION`] cells an expansion).
pub(super) fn estimate(
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
