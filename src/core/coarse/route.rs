//! A route over the graph, found and refined a budget of expansions at a
//! time: joining start and goal, the search over nodes, the refinement of
//! each leg, in order and only as far as it is asked for.

use super::WEIGHT_ONE;
use super::build::{LABELS_PER_EXPANSION, pieces};
use super::graph::CoarseGraph;
use super::levels::Levels;
use super::local::{Area, Local};
use super::nodes::{Abstract, Goal, Leg};
use crate::core::grid::Cell;
use crate::core::moves::{COST_SCALE, octile, step_cost};
use crate::core::search::Path;
use crate::core::size_class::SizeClass;

/// Where a [`CoarseRoute`] stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
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
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
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
    /// The search over nodes, then the searches through its course.
    nodes: Abstract,
    /// The node search's waypoints: start, nodes, goal, each with the leg
    /// reaching it.
    plan: Vec<(Cell, Leg)>,
    /// The super-clusters `plan` passes through, in order, each with the
    /// index in `plan` of its last node there.
    course: Vec<(u32, usize)>,
    /// The next of `course` to search through (see `through`).
    window: usize,
    /// Whether `nodes` is searching through the window.
    opening: bool,
    /// Level-1 waypoints refined to so far: start and level-1 nodes (and
    /// the goal once the last window is done), each with its leg.
    waypoints: Vec<(Cell, Leg)>,
    /// The leg being refined (index into `waypoints` of its first end).
    leg: usize,
    cells: Vec<Cell>,
    /// A step ends once this many cells are refined (once).
    pause: Option<usize>,
    expansions: u64,
    work: RouteWork,
    status: RouteStatus,
}

/// What a [`CoarseRoute`] has spent, by part, in expansions (cells of a
/// cluster searched or labelled, and nodes of the graph).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct RouteWork {
    /// Joining the start and the goal to the nodes of their clusters.
    pub join: u64,
    /// The search over nodes: level-1 nodes (inside the super-clusters of
    /// the start and the goal) and level-2 nodes (between them) expanded,
    /// each charged two units of the budget.
    pub nodes: [u64; 2],
    /// Searching the level-1 nodes along the route's course, two
    /// super-clusters at a time, in budget charged (node expansions at
    /// two units).
    pub open: u64,
    /// Refining level-1 legs to cells.
    pub refine: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
enum Phase {
    FromStart,
    ToGoal,
    Nodes,
    Refine,
    Done,
}

/// Which part of [`RouteWork`] a step's expansions go to.
#[derive(Clone, Copy)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
enum Part {
    Join,
    Nodes,
    Open,
    Refine,
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
            nodes: Abstract::default(),
            plan: Vec::new(),
            course: Vec::new(),
            window: 0,
            opening: false,
            waypoints: Vec::new(),
            leg: 0,
            cells: Vec::new(),
            pause: None,
            expansions: 0,
            work: RouteWork::default(),
            status: RouteStatus::Running,
        }
    }

    /// The route, made to end the [`step`](Self::step) in which its
    /// refined prefix first reaches `cells` cells (see
    /// [`refined`](Self::refined)): a first stretch can be sent before the
    /// rest of the route is refined, whatever budget the step was given.
    pub fn pausing_at(mut self, cells: usize) -> Self {
        self.pause = Some(cells);
        self
    }

    /// The start anchor.
    pub fn start(&self) -> Cell {
        self.start
    }

    /// The goal anchor.
    pub fn goal(&self) -> Cell {
        self.goal
    }

    /// Budget spent so far: cells expanded in clusters, and nodes
    /// expanded, each node charged two.
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
    pub fn path(&self, size_class: &SizeClass<'_>) -> Option<Path> {
        (self.status == RouteStatus::Found).then(|| walked(size_class, &self.cells))
    }

    /// The route refined so far, while its legs are being refined: anchors
    /// from the start, each one move from the next (a prefix of the route
    /// [`path`](Self::path) will give), and what walking them costs. `None`
    /// before the node search has ended, and once the route ended without
    /// one.
    pub fn refined(&self, size_class: &SizeClass<'_>) -> Option<Path> {
        (self.phase == Phase::Refine || self.status == RouteStatus::Found)
            .then(|| walked(size_class, &self.cells))
    }

    /// Cells refined so far (see [`refined`](Self::refined)).
    pub fn refined_len(&self) -> usize {
        self.cells.len()
    }

    /// Bytes of memory it holds.
    pub fn memory_bytes(&self) -> usize {
        self.local.g.capacity() * 8
            + self.local.via.capacity()
            + self.local.stamp.capacity() * 4
            + self.local.closed.capacity()
            + self.local.positions.capacity() * 4
            + self.nodes.memory_bytes()
            + self.waypoints.capacity() * std::mem::size_of::<(Cell, Leg)>()
            + self.cells.capacity() * std::mem::size_of::<Cell>()
    }

    /// Works on the route for at most `budget` expansions. The graph must
    /// be usable for `class` ([`CoarseGraph::is_usable`]); an edit between
    /// steps is fine: legs are refined on the grid as it is, and a route an
    /// edit cut (checked whole when the last leg is refined) ends as
    /// [`RouteStatus::NotFound`], so a found route is always legal on the
    /// grid it was finished on.
    pub fn step(
        &mut self,
        graph: &CoarseGraph,
        size_class: &SizeClass<'_>,
        budget: u64,
    ) -> RouteStatus {
        let graph = &graph.levels;
        let mut left = budget;
        while left > 0 && self.status == RouteStatus::Running {
            let (spent, part) = match self.phase {
                Phase::FromStart => (self.connect_start(graph, size_class, left), Part::Join),
                Phase::ToGoal => (self.connect_goal(graph, size_class, left), Part::Join),
                Phase::Nodes => (self.search(graph, size_class, left), Part::Nodes),
                Phase::Refine
                    if self.opening
                        || (self.leg + PAIRED >= self.waypoints.len()
                            && self.window < self.course.len()) =>
                {
                    (self.through(graph, size_class, left), Part::Open)
                }
                Phase::Refine => (self.refine(graph, size_class, left), Part::Refine),
                Phase::Done => break,
            };
            match part {
                Part::Join => self.work.join += spent,
                Part::Nodes => {}
                Part::Open => self.work.open += spent,
                Part::Refine => self.work.refine += spent,
            }
            self.expansions += spent;
            left = left.saturating_sub(spent.max(1));
            if self
                .pause
                .is_some_and(|cells| self.phase == Phase::Refine && self.cells.len() >= cells)
            {
                self.pause = None;
                break;
            }
        }
        self.status
    }

    /// Joins `cell` to the nodes of its cluster, on at most `most`
    /// expansions: the cost from it (`forward`) or to it from each node it
    /// reaches. Returns the expansions, and the costs once done.
    // Not inlined: each phase is one call per step, and `budget_cost`
    // reads each one's instructions apart under callgrind.
    #[inline(never)]
    fn connect(
        &mut self,
        graph: &Levels,
        size_class: &SizeClass<'_>,
        cell: Cell,
        forward: bool,
        most: u64,
    ) -> (u64, Option<Vec<(u32, u64)>>) {
        let cluster = graph.cluster_of(cell);
        if graph.cluster_of(self.start) != graph.cluster_of(self.goal) {
            // A cluster of one piece: every node is joined to every cell,
            // and an estimate of the cost does. Otherwise labelling the
            // pieces is paid before it is done, a step's budget at a time.
            let (w, h) = (graph.bounds(cluster).2, graph.bounds(cluster).3);
            let cost = if graph.pieces_in(cluster) <= 1 {
                0
            } else {
                ((w * h) as u64).div_ceil(LABELS_PER_EXPANSION)
            };
            if self.paid < cost {
                let pay = (cost - self.paid).min(most);
                self.paid += pay;
                return (pay, None);
            }
            self.paid = 0;
            return (0, Some(estimate(graph, size_class, cell, forward)));
        }
        let area = Area::new(size_class, graph.bounds(cluster));
        let index = size_class.index(cell).unwrap_or_default() as u32;
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

    fn connect_start(&mut self, graph: &Levels, size_class: &SizeClass<'_>, most: u64) -> u64 {
        if !size_class.is_walkable(self.start) || !size_class.is_walkable(self.goal) {
            self.fail();
            return 0;
        }
        let (spent, costs) = self.connect(graph, size_class, self.start, true, most);
        if let Some(costs) = costs {
            self.from_start = costs;
            let cluster = graph.cluster_of(self.start);
            if graph.cluster_of(self.goal) == cluster {
                let area = Area::new(size_class, graph.bounds(cluster));
                let goal = size_class.index(self.goal).unwrap_or_default() as u32;
                self.direct = self.local.cost(area.local(goal));
            }
            self.phase = Phase::ToGoal;
        }
        spent
    }

    fn connect_goal(&mut self, graph: &Levels, size_class: &SizeClass<'_>, most: u64) -> u64 {
        let (spent, costs) = self.connect(graph, size_class, self.goal, false, most);
        if let Some(costs) = costs {
            self.to_goal = costs;
            self.nodes.begin_route(
                graph,
                size_class,
                (self.start, &self.from_start),
                self.direct,
                self.goal,
                self.weight,
            );
            self.phase = Phase::Nodes;
        }
        spent
    }

    // Not inlined: each phase is one call per step, and `budget_cost`
    // reads each one's instructions apart under callgrind.
    #[inline(never)]
    fn search(&mut self, graph: &Levels, size_class: &SizeClass<'_>, most: u64) -> u64 {
        let before = self.nodes.expanded;
        let goal = Goal {
            cell: self.goal,
            from: &self.to_goal,
        };
        let (spent, over) = self.nodes.run(graph, size_class, &goal, self.weight, most);
        for (level, before) in before.into_iter().enumerate() {
            self.work.nodes[level] += self.nodes.expanded[level] - before;
        }
        if over {
            match self.nodes.waypoints(graph, self.start, self.goal) {
                Some((plan, last_node)) => {
                    self.set_course(graph, plan, last_node);
                    self.cells = vec![self.start];
                    self.leg = 0;
                    self.phase = Phase::Refine;
                }
                None => self.fail(),
            }
        }
        spent
    }

    /// Takes the node search's waypoints: the super-clusters they pass
    /// through, and the level-1 waypoints to refine first.
    fn set_course(&mut self, graph: &Levels, plan: Vec<(Cell, Leg)>, last_node: usize) {
        self.course.clear();
        // The nodes: `plan[1..=last_node]`.
        for (i, &(cell, _)) in plan.iter().enumerate().take(last_node + 1).skip(1) {
            let sup = graph.super_of(graph.cluster_of(cell));
            match self.course.last_mut() {
                Some((last, end)) if *last == sup => *end = i,
                _ => self.course.push((sup, i)),
            }
        }
        if self.course.len() <= 1 {
            // One super-cluster: the plan is on level 1 already.
            self.waypoints = plan.clone();
            self.window = self.course.len();
        } else {
            self.waypoints = plan[..2].to_vec();
            self.window = 1;
        }
        self.plan = plan;
    }

    /// Searches the level-1 nodes through the next two super-clusters of
    /// the course (the one the refined waypoints stand in, and the next),
    /// from the last waypoint to the plan's last node in the second, and
    /// keeps the way up to where it last enters the second: the route
    /// crosses each border between super-clusters where the level-1 graph
    /// crosses it best, not only at the level-2 entrances the node search
    /// went through. The last window keeps its whole way, and the goal.
    // Not inlined: each phase is one call per step, and `budget_cost`
    // reads each one's instructions apart under callgrind.
    #[inline(never)]
    fn through(&mut self, graph: &Levels, size_class: &SizeClass<'_>, most: u64) -> u64 {
        let (from, _) = *self.waypoints.last().expect("the start");
        let (first, _) = self.course[self.window - 1];
        let (second, end) = self.course[self.window];
        let to = self.plan[end].0;
        let (Some(a), Some(b)) = (size_class.index(from), size_class.index(to)) else {
            self.fail();
            return 0;
        };
        let (a, b) = (a as u32, b as u32);
        if !self.opening {
            self.nodes
                .begin_inside(graph, size_class, [first, second], a, to);
            self.opening = true;
        }
        let target = [(b, 0)];
        let goal = Goal {
            cell: to,
            from: &target,
        };
        let (spent, over) = self.nodes.run(graph, size_class, &goal, WEIGHT_ONE, most);
        if !over {
            return spent;
        }
        self.opening = false;
        let Some(way) = self.nodes.inside_path(graph, b) else {
            // An edit cut the level-1 graph.
            self.fail();
            return spent;
        };
        let cell = |node: u32| Cell::new(node % size_class.width(), node / size_class.width());
        let inside = |node: u32| graph.super_of(graph.cluster_of(cell(node))) == second;
        self.window += 1;
        let keep = if self.window == self.course.len() {
            way.len()
        } else {
            // Up to where it last enters the second super-cluster: from
            // there it stays inside it, on to the plan's way on.
            let mut keep = way.len();
            for i in (0..way.len()).rev() {
                let before = if i == 0 { a } else { way[i - 1].0 };
                if inside(way[i].0) && !inside(before) {
                    keep = i + 1;
                    break;
                }
            }
            keep
        };
        self.waypoints
            .extend(way[..keep].iter().map(|&(node, leg)| (cell(node), leg)));
        if self.window == self.course.len() {
            self.waypoints.extend_from_slice(&self.plan[end + 1..]);
        }
        spent
    }

    // Not inlined: each phase is one call per step, and `budget_cost`
    // reads each one's instructions apart under callgrind.
    #[inline(never)]
    fn refine(&mut self, graph: &Levels, size_class: &SizeClass<'_>, most: u64) -> u64 {
        if self.leg + 1 >= self.waypoints.len() {
            // Legs refined in earlier steps may have been cut since.
            if size_class.can_walk(&self.cells) {
                self.phase = Phase::Done;
                self.status = RouteStatus::Found;
            } else {
                self.fail();
            }
            return 0;
        }
        let ((from, _), (to, leg)) = (self.waypoints[self.leg], self.waypoints[self.leg + 1]);
        if leg == Leg::Step {
            // A step across a border.
            if !size_class.can_step(from, to) {
                self.fail();
                return 0;
            }
            self.cells.push(to);
            self.leg += 1;
            return 0;
        }
        if graph.cluster_of(from) != graph.cluster_of(to) {
            // A level-1 leg joins two nodes of one cluster.
            self.fail();
            return 0;
        }
        // A leg, the step across the border after it and the leg after
        // that (and so on, over up to WINDOW clusters) are refined as one,
        // inside those clusters: the route crosses their borders where it
        // is cheapest, not only at the entrances.
        let mut end = self.leg + 1;
        let mut bounds = graph.bounds(graph.cluster_of(from));
        let mut clusters = 1;
        while clusters < WINDOW {
            let Some(&[(_, step), (cell, leg)]) = self.waypoints.get(end + 1..=end + 2) else {
                break;
            };
            let cluster = graph.cluster_of(cell);
            if step != Leg::Step
                || leg != Leg::Cells
                || cluster == graph.cluster_of(self.waypoints[end].0)
            {
                break;
            }
            bounds = union(bounds, graph.bounds(cluster));
            end += 2;
            clusters += 1;
        }
        let (to, legs) = (self.waypoints[end].0, end - self.leg);
        let area = Area::new(size_class, bounds);
        let (Some(a), Some(b)) = (size_class.index(from), size_class.index(to)) else {
            self.fail();
            return 0;
        };
        let (a, b) = (area.local(a as u32), area.local(b as u32));
        if !self.local.begun {
            if !size_class.is_walkable(from) {
                self.fail();
                return 0;
            }
            self.local.begin(&area, &[(a, 0)], Some(b), true);
        }
        let spent = self.local.run(&area, most);
        if self.local.reached {
            let leg = self.local.path_to(&area, b);
            self.cells.extend_from_slice(&leg[1..]);
            self.leg += legs;
            self.local.begun = false;
        } else if self.local.is_over() {
            // An edit cut the leg.
            self.fail();
        }
        spent
    }

    fn fail(&mut self) {
        self.phase = Phase::Done;
        self.status = RouteStatus::NotFound;
    }
}

/// Clusters a refined leg may span: legs and the steps across borders
/// between them, refined as one.
const WINDOW: usize = 2;

/// Waypoints ahead the refinement wants planned before it refines a leg
/// (so that a window of [`WINDOW`] clusters finds its legs there).
const PAIRED: usize = 2 * WINDOW - 1;

/// The smallest area holding two areas `(x0, y0, w, h)`.
fn union(a: (u32, u32, u32, u32), b: (u32, u32, u32, u32)) -> (u32, u32, u32, u32) {
    let (x0, y0) = (a.0.min(b.0), a.1.min(b.1));
    let (x1, y1) = ((a.0 + a.2).max(b.0 + b.2), (a.1 + a.3).max(b.1 + b.3));
    (x0, y0, x1 - x0, y1 - y0)
}

/// The path through `cells` on `class`, with what walking it costs.
fn walked(size_class: &SizeClass<'_>, cells: &[Cell]) -> Path {
    let total: u64 = cells
        .windows(2)
        .map(|step| {
            let diagonal = step[0].x != step[1].x && step[0].y != step[1].y;
            size_class.cost(step[1]).unwrap_or(0) as u64 * step_cost(if diagonal { 4 } else { 0 })
        })
        .sum();
    Path {
        cells: cells.to_vec(),
        cost: total as f64 / COST_SCALE as f64,
    }
}

/// The nodes of `cell`'s cluster that a path inside the cluster joins to
/// it (those in its piece), each with the least a path between them could
/// cost (octile distance at the cheapest cost): the node search starts
/// (`forward`) or ends there, and the leg between is refined like any
/// other. Cheaper than a Dijkstra over the cluster, for a route whose
/// start and goal lie in different clusters: nothing to label in a cluster
/// of one piece, and otherwise a flood fill charged at
/// [`LABELS_PER_EXPANSION`] cells an expansion.
fn estimate(
    graph: &Levels,
    size_class: &SizeClass<'_>,
    cell: Cell,
    forward: bool,
) -> Vec<(u32, u64)> {
    let cluster = graph.cluster_of(cell);
    let bounds = graph.bounds(cluster);
    let (x0, y0, w, _) = bounds;
    let labels = (graph.pieces_in(cluster) > 1).then(|| pieces(size_class, bounds).0);
    let own = labels
        .as_ref()
        .map(|labels| labels[((cell.y - y0) * w + cell.x - x0) as usize]);
    let scale = size_class.min_walkable_cost().max(1) as u64;
    graph
        .nodes(cluster)
        .zip(graph.local_nodes(cluster))
        .filter(|&(_, &local)| {
            labels
                .as_ref()
                .is_none_or(|labels| Some(labels[local as usize]) == own)
        })
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
