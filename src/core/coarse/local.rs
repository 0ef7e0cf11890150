//! A search confined to one cluster: Dijkstra from its nodes when it is
//! built, A* along a leg when a route is refined.

use super::ABSENT;
use crate::core::grid::{Cell, Neighborhood};
use crate::core::heap::{HeapPositions, OpenList};
use crate::core::moves::{DIAGONAL_SIDES, MOVE_DELTAS, octile, step_cost};
use crate::core::size_class::SizeClass;

/// A cluster's cells as one search sees them: their costs in a local
/// array with a border of walls round it, so a move is an offset and
/// needs no bounds check.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct Area {
    /// Costs, `(w + 2) × (h + 2)`, walls all round.
    pub(super) costs: Vec<u8>,
    /// `w + 2`.
    pub(super) stride: u32,
    /// `(x0, y0, w, h)`.
    pub(super) bounds: (u32, u32, u32, u32),
    /// Grid width.
    pub(super) width: u32,
    /// Each move as an offset in the local array.
    pub(super) offsets: [i64; 8],
    pub(super) moves: usize,
    /// The cheapest walkable cost, the heuristic's scale.
    pub(super) min_cost: u64,
}

impl Area {
    pub(super) fn new(size_class: &SizeClass<'_>, bounds: (u32, u32, u32, u32)) -> Self {
        let (x0, y0, w, h) = bounds;
        let stride = w + 2;
        let width = size_class.width();
        let grid = size_class.costs();
        let mut costs = vec![0u8; (stride * (h + 2)) as usize];
        for y in 0..h {
            let row = ((y0 + y) * width + x0) as usize;
            let at = ((y + 1) * stride + 1) as usize;
            costs[at..at + w as usize].copy_from_slice(&grid[row..row + w as usize]);
        }
        let offsets = MOVE_DELTAS.map(|(dx, dy)| dy as i64 * stride as i64 + dx as i64);
        Self {
            costs,
            stride,
            bounds,
            width,
            offsets,
            moves: match size_class.neighborhood() {
                Neighborhood::Four => 4,
                Neighborhood::Eight => 8,
            },
            min_cost: size_class.min_walkable_cost().max(1) as u64,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.costs.len()
    }

    /// The local index of a grid cell index inside the area.
    pub(super) fn local(&self, index: u32) -> u32 {
        let (x0, y0, ..) = self.bounds;
        let (x, y) = (index % self.width, index / self.width);
        (y - y0 + 1) * self.stride + (x - x0 + 1)
    }

    /// The local index of a cell index inside the cluster (`y × w + x`).
    pub(super) fn padded(&self, inside: u32) -> u32 {
        let w = self.bounds.2;
        (inside / w + 1) * self.stride + inside % w + 1
    }

    /// The grid cell of a local index.
    pub(super) fn cell(&self, local: u32) -> Cell {
        let (x0, y0, ..) = self.bounds;
        Cell::new(x0 + local % self.stride - 1, y0 + local / self.stride - 1)
    }

    #[inline(always)]
    pub(super) fn cost_at(&self, local: u32) -> u64 {
        self.costs[local as usize] as u64
    }

    /// The local cell one move `direction` from `local`, if the move is
    /// allowed (walkable, inside the area, no corner cut).
    #[inline(always)]
    pub(super) fn step(&self, local: u32, direction: usize) -> Option<u32> {
        let next = (local as i64 + self.offsets[direction]) as u32;
        if self.costs[next as usize] == 0 {
            return None;
        }
        if direction >= 4 {
            let [a, b] = DIAGONAL_SIDES[direction - 4];
            let side = |m: usize| self.costs[(local as i64 + self.offsets[m]) as usize] == 0;
            if side(a) || side(b) {
                return None;
            }
        }
        Some(next)
    }
}

/// A search confined to one cluster: Dijkstra (forward from sources, or
/// backward to a target) or A* to one cell. Resumable.
#[derive(Clone, Debug, Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct Local {
    pub(super) g: Vec<u64>,
    /// The move (index into `MOVE_DELTAS`) that reached each cell.
    pub(super) via: Vec<u8>,
    /// `stamp[i] == mark` when cell `i` has a score this search.
    pub(super) stamp: Vec<u32>,
    pub(super) closed: Vec<bool>,
    pub(super) mark: u32,
    pub(super) positions: Vec<u32>,
    pub(super) open: OpenList<u64>,
    /// A* target (local index) with its cell, or `None` for Dijkstra.
    pub(super) target: Option<(u32, Cell)>,
    pub(super) forward: bool,
    /// Set when an A* reached its target.
    pub(super) reached: bool,
    /// Whether a search was begun and not yet taken up.
    pub(super) begun: bool,
}

/// A `Local`'s heap positions, borrowed apart from the rest.
pub(super) struct Positions<'a>(pub(super) &'a mut [u32]);

impl HeapPositions for Positions<'_> {
    fn set_position(&mut self, item: u32, position: u32) {
        self.0[item as usize] = position;
    }
}

impl Local {
    /// Starts a search over `area` from `sources` (local index, cost).
    /// With `target`, an A* that stops there; `forward` false searches
    /// backward (the cost of a move is that of the cell it leaves, so the
    /// scores are costs *to* the sources).
    pub(super) fn begin(
        &mut self,
        area: &Area,
        sources: &[(u32, u64)],
        target: Option<u32>,
        forward: bool,
    ) {
        let len = area.len();
        if self.g.len() < len {
            self.g.resize(len, 0);
            self.via.resize(len, 0);
            self.stamp.resize(len, 0);
            self.closed.resize(len, false);
            self.positions.resize(len, ABSENT);
        }
        self.mark = self.mark.wrapping_add(1);
        if self.mark == 0 {
            self.stamp.fill(0);
            self.mark = 1;
        }
        self.open.clear();
        self.target = target.map(|t| (t, area.cell(t)));
        self.forward = forward;
        self.reached = false;
        self.begun = true;
        for &(source, cost) in sources {
            self.score(area, source, cost, u8::MAX);
        }
    }

    pub(super) fn heuristic(&self, area: &Area, local: u32) -> u64 {
        match self.target {
            Some((_, goal)) => {
                let cell = area.cell(local);
                octile(cell.x.abs_diff(goal.x), cell.y.abs_diff(goal.y)) * area.min_cost
            }
            None => 0,
        }
    }

    /// Gives `local` the score `g` (reached by move `via`) if it is better.
    pub(super) fn score(&mut self, area: &Area, local: u32, g: u64, via: u8) {
        let i = local as usize;
        if self.stamp[i] == self.mark {
            if self.closed[i] || g >= self.g[i] {
                return;
            }
            self.g[i] = g;
            self.via[i] = via;
            let key = g + self.heuristic(area, local);
            let position = self.positions[i];
            self.open
                .decrease_key(position, key, &mut Positions(&mut self.positions));
            return;
        }
        self.stamp[i] = self.mark;
        self.closed[i] = false;
        self.g[i] = g;
        self.via[i] = via;
        let key = g + self.heuristic(area, local);
        self.open
            .push(key, local, &mut Positions(&mut self.positions));
    }

    /// Expands at most `most` cells. Returns the cells expanded; the search
    /// is over when [`is_over`](Self::is_over).
    pub(super) fn run(&mut self, area: &Area, most: u64) -> u64 {
        let mut spent = 0;
        while spent < most {
            let Some((_, local)) = self.open.pop(&mut Positions(&mut self.positions)) else {
                break;
            };
            spent += 1;
            let i = local as usize;
            self.closed[i] = true;
            if self.target.is_some_and(|(t, _)| t == local) {
                self.reached = true;
                self.open.clear();
                break;
            }
            let g = self.g[i];
            let leave = area.cost_at(local);
            for direction in 0..area.moves {
                let Some(next) = area.step(local, direction) else {
                    continue;
                };
                let cost = if self.forward {
                    area.cost_at(next)
                } else {
                    leave
                };
                self.score(area, next, g + cost * step_cost(direction), direction as u8);
            }
        }
        spent
    }

    pub(super) fn is_over(&self) -> bool {
        self.open.is_empty()
    }

    /// The settled cost of `local`, if the search reached it.
    pub(super) fn cost(&self, local: u32) -> Option<u64> {
        let i = local as usize;
        (self.stamp.get(i) == Some(&self.mark) && self.closed[i]).then(|| self.g[i])
    }

    /// The cells from the search's source to `local` (forward searches).
    pub(super) fn path_to(&self, area: &Area, local: u32) -> Vec<Cell> {
        let mut cells = vec![area.cell(local)];
        let mut at = local;
        while self.via[at as usize] != u8::MAX {
            at = (at as i64 - area.offsets[self.via[at as usize] as usize]) as u32;
            cells.push(area.cell(at));
        }
        cells.reverse();
        cells
    }
}

/// The build's Dijkstra: from one cell of an area to the cells it is asked
/// for (a cluster's nodes), resumable at any expansion, with costs in
/// `u32` units of 1/1024 of a step (a diagonal is 1,448 units a cost
/// point), a heap that drops stale entries as it meets them, and an early
/// end once every target is settled. The moves each cell allows are worked
/// out once per area ([`prepare`](Self::prepare)), not once per sweep; a
/// settled cell needs no mark, since costs are taken in order and none
/// later can improve it; and the records are arrays indexed through a mask,
/// so no index is bounds-checked.
#[derive(Clone, Debug, Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct Sweep {
    cells: Box<SweepCells>,
    targets_left: usize,
    /// `cost << 16 | cell`, least first: one integer compared per move
    /// of the heap.
    heap: std::collections::BinaryHeap<std::cmp::Reverse<u64>>,
}

/// [`Sweep`] units in a step on ground of cost 1: straight, diagonal.
pub(super) const SWEEP_STEP: [u32; 2] = [1024, 1448];

/// The most cells a sweep's area holds: a cluster with its border of walls
/// (18 × 18 = 324), rounded up to a power of two so that an index masked
/// with `SWEEP_CELLS - 1` needs no bounds check.
const SWEEP_CELLS: usize = 512;

/// A sweep's per-cell records, in arrays of [`SWEEP_CELLS`].
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
struct SweepCells {
    /// The best cost found (`u32::MAX`: none yet).
    #[cfg_attr(feature = "serialize", serde(with = "crate::core::serial::array"))]
    dist: [u32; SWEEP_CELLS],
    /// The cost of entering each cell.
    #[cfg_attr(feature = "serialize", serde(with = "crate::core::serial::array"))]
    costs: [u32; SWEEP_CELLS],
    /// The moves each cell allows, a bit per direction.
    #[cfg_attr(feature = "serialize", serde(with = "crate::core::serial::array"))]
    moves: [u8; SWEEP_CELLS],
    #[cfg_attr(feature = "serialize", serde(with = "crate::core::serial::array"))]
    target: [bool; SWEEP_CELLS],
}

impl Default for SweepCells {
    fn default() -> Self {
        Self {
            dist: [u32::MAX; SWEEP_CELLS],
            costs: [0; SWEEP_CELLS],
            moves: [0; SWEEP_CELLS],
            target: [false; SWEEP_CELLS],
        }
    }
}

impl Sweep {
    /// Works out the moves each cell of `area` (a cluster with its border)
    /// allows (walkable, no corner cut), for the sweeps over it.
    pub(super) fn prepare(&mut self, area: &Area) {
        assert!(area.len() <= SWEEP_CELLS, "a sweep covers one cluster");
        let cells = &mut *self.cells;
        cells.moves.fill(0);
        cells.costs.fill(0);
        for (i, &cost) in area.costs.iter().enumerate() {
            cells.costs[i] = cost as u32;
        }
        let inner = area.stride as usize + 1..area.len() - area.stride as usize - 1;
        for i in inner {
            if area.costs[i] == 0 {
                continue;
            }
            let mut mask = 0u8;
            for direction in 0..area.moves {
                if area.step(i as u32, direction).is_some() {
                    mask |= 1 << direction;
                }
            }
            cells.moves[i] = mask;
        }
    }

    /// Starts from `source` towards `targets` (local indices of the area
    /// last [`prepare`](Self::prepare)d).
    pub(super) fn begin(&mut self, source: u32, targets: &[u32]) {
        let cells = &mut *self.cells;
        cells.dist.fill(u32::MAX);
        cells.target.fill(false);
        self.targets_left = 0;
        for &t in targets {
            if !std::mem::replace(&mut cells.target[t as usize & (SWEEP_CELLS - 1)], true) {
                self.targets_left += 1;
            }
        }
        self.heap.clear();
        cells.dist[source as usize & (SWEEP_CELLS - 1)] = 0;
        self.heap.push(std::cmp::Reverse(source as u64));
    }

    /// Settles at most `most` cells; returns them. Over once
    /// [`is_over`](Self::is_over).
    pub(super) fn run(&mut self, area: &Area, most: u64) -> u64 {
        const MASK: usize = SWEEP_CELLS - 1;
        let mut spent = 0;
        let offsets = area.offsets.map(|o| o as isize);
        let cells = &mut *self.cells;
        while spent < most && self.targets_left > 0 {
            let Some(std::cmp::Reverse(entry)) = self.heap.pop() else {
                break;
            };
            let (d, i) = ((entry >> 16) as u32, (entry & 0xffff) as usize & MASK);
            if cells.dist[i] != d {
                // Stale: the cell was reached for less since.
                continue;
            }
            spent += 1;
            if cells.target[i] {
                self.targets_left -= 1;
            }
            let mut moves = cells.moves[i];
            while moves != 0 {
                let direction = moves.trailing_zeros() as usize;
                moves &= moves - 1;
                let next = (i as isize + offsets[direction & 7]) as usize & MASK;
                let next_d = d + cells.costs[next] * SWEEP_STEP[direction >> 2 & 1];
                // Never true of a settled cell: costs are taken in order.
                if next_d < cells.dist[next] {
                    cells.dist[next] = next_d;
                    self.heap
                        .push(std::cmp::Reverse((next_d as u64) << 16 | next as u64));
                }
            }
        }
        if self.heap.is_empty() {
            self.targets_left = 0;
        }
        spent
    }

    /// Whether every target is settled (or the rest cannot be reached).
    pub(super) fn is_over(&self) -> bool {
        self.targets_left == 0
    }

    /// The cost to a settled cell, in sweep units.
    pub(super) fn cost(&self, local: u32) -> Option<u32> {
        let d = self.cells.dist[local as usize & (SWEEP_CELLS - 1)];
        (d != u32::MAX).then_some(d)
    }

    pub(super) fn memory_bytes(&self) -> usize {
        std::mem::size_of::<SweepCells>() + self.heap.capacity() * 8
    }
}
