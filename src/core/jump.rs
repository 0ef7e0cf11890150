//! Jump-point scans: the successor rule of jump point search (Harabor and
//! Grastien) for 8-neighbour grids with no corner cutting, used by
//! `Search` on maps whose walkable cells all cost
//! the same.
//!
//! On such a map most optimal paths have many twins of equal cost that only
//! differ in the order of their moves. Jump point search keeps one of them,
//! the one that moves diagonally as early as it can, and skips every cell
//! where that path can only go straight on: those cells are scanned, never
//! put on the open list. Without corner cutting the rules are:
//!
//! - A cell reached by a straight move, say east, goes on east. If the cell
//!   north of it is open and the cell north of the one it came from is a
//!   wall, it also goes north and north-east (those are *forced*: no
//!   shorter or diagonal-first way reaches them). The same for south.
//! - A cell reached diagonally, say north-east, goes north, east and
//!   north-east; a diagonal move never forces anything, because both cells
//!   beside it are open.
//! - A straight scan stops at a wall (no successor), at the goal, or at a
//!   cell with a forced neighbour (a *jump point*). A diagonal scan stops at
//!   a wall, at the goal, or at a cell from which a straight scan along
//!   either of its two components finds a jump point.
//!
//! Straight scans read 64 cells at a time from [`WalkBits`], bitmaps of the
//! walkable cells kept by the `NavGrid` row by row and column by column.
//! Their work is counted in *scan steps*: one per 64-cell window read, one
//! per diagonal step. Every jump also stops once it has taken
//! [`JUMP_LIMIT`] scan steps (or fewer, when the search's expansion cap is
//! near), at whatever cell it has reached: a cell on a scan line can always
//! be made a node without changing the result, and the limit bounds the
//! work of one expansion.

use super::moves::MOVE_DELTAS;
use super::walk_bits::{Lines, WalkBits};

/// Scan steps one jump may take (its own steps and, for a diagonal jump,
/// the windows of the straight scans from each of them) before it stops
/// where it is.
pub(crate) const JUMP_LIMIT: u32 = 256;

/// A grid and goal as the jump scans read them.
#[derive(Clone, Copy)]
pub(crate) struct JumpGrid<'a> {
    bits: &'a WalkBits,
    goal: (i32, i32),
    /// Many goals (a flood's targets) instead of one: see
    /// [`JumpGrid::with_targets`].
    targets: Option<&'a Targets>,
}

/// Cells a jump point flood must settle, by row and by column (each list
/// sorted), so that scans find those on their line without a look-up per
/// cell.
#[derive(Clone, Debug, Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct Targets {
    rows: Vec<Vec<i32>>,
    columns: Vec<Vec<i32>>,
}

impl Targets {
    /// Targets on a `width × height` grid.
    pub(crate) fn new(width: u32, height: u32) -> Self {
        Self {
            rows: vec![Vec::new(); height as usize],
            columns: vec![Vec::new(); width as usize],
        }
    }

    /// Adds the cell `(x, y)`.
    pub(crate) fn insert(&mut self, x: u32, y: u32) {
        let add = |list: &mut Vec<i32>, v: i32| {
            if let Err(at) = list.binary_search(&v) {
                list.insert(at, v);
            }
        };
        if let (Some(row), Some(column)) = (
            self.rows.get_mut(y as usize),
            self.columns.get_mut(x as usize),
        ) {
            add(row, x as i32);
            add(column, y as i32);
        }
    }

    /// Removes the cell `(x, y)` (settled: scans need not find it).
    pub(crate) fn remove(&mut self, x: u32, y: u32) {
        let take = |list: &mut Vec<i32>, v: i32| {
            if let Ok(at) = list.binary_search(&v) {
                list.remove(at);
            }
        };
        if let (Some(row), Some(column)) = (
            self.rows.get_mut(y as usize),
            self.columns.get_mut(x as usize),
        ) {
            take(row, x as i32);
            take(column, y as i32);
        }
    }

    /// The targets on line `line` of rows (`columns` false) or columns.
    fn on(&self, columns: bool, line: i32) -> &[i32] {
        let lines = if columns { &self.columns } else { &self.rows };
        usize::try_from(line)
            .ok()
            .and_then(|line| lines.get(line))
            .map_or(&[], Vec::as_slice)
    }

    fn contains(&self, x: i32, y: i32) -> bool {
        self.on(false, y).binary_search(&x).is_ok()
    }

    /// The bits of the targets of a line in the 64-cell window from `first`
    /// (bit 0 the cell `first`).
    fn window(list: &[i32], first: i32) -> u64 {
        let from = list.partition_point(|&v| v < first);
        list[from..]
            .iter()
            .take_while(|&&v| v < first + 64)
            .fold(0, |bits, &v| bits | 1 << (v - first))
    }
}

impl<'a> JumpGrid<'a> {
    pub(crate) fn new(bits: &'a WalkBits, goal: (u32, u32)) -> Self {
        Self {
            bits,
            goal: (goal.0 as i32, goal.1 as i32),
            targets: None,
        }
    }

    /// Scans for a flood from one cell to many targets. A main scan (the
    /// jump [`JumpGrid::jump`] makes) never stops at a target: it reports
    /// every target it passes in `hits`, each then reached along that scan,
    /// and goes on to its jump point as if the targets were not there, so
    /// the flood's other paths are those of a plain jump point search. The
    /// straight look-ahead scans of a diagonal jump treat targets as jump
    /// points, as a single search treats its goal: the diagonal stops where
    /// a target lies straight ahead, so the target is reached from a node.
    pub(crate) fn with_targets(bits: &'a WalkBits, targets: &'a Targets) -> Self {
        Self {
            bits,
            goal: (-1, -1),
            targets: Some(targets),
        }
    }

    /// The moves (indices into `MOVE_DELTAS`, as a bit set) worth scanning
    /// from `(x, y)`, reached by move `arrived` (`None` at the start, which
    /// tries all eight).
    #[inline(always)]
    pub(crate) fn successors(&self, x: i32, y: i32, arrived: Option<usize>) -> u8 {
        let Some(arrived) = arrived else {
            return 0xff;
        };
        let (dx, dy) = MOVE_DELTAS[arrived];
        if dx != 0 && dy != 0 {
            return bit(dx, 0) | bit(0, dy) | bit(dx, dy);
        }
        let mut moves = bit(dx, dy);
        // The two sides across the move.
        for side in [1, -1] {
            let (sx, sy) = (dy * side, dx * side);
            if self.bits.open(x + sx, y + sy) && !self.bits.open(x - dx + sx, y - dy + sy) {
                moves |= bit(sx, sy) | bit(dx + sx, dy + sy);
            }
        }
        moves
    }

    /// Expands the cell `(x, y)`, reached by move `arrived` (`None` at the
    /// start): jumps along every move worth making from it, grows
    /// `scanned` to hold every cell the scans read, and calls
    /// `reached(direction, steps, to)` for every cell found along the way (a
    /// target passed, then the jump point), `steps` moves away at `to`.
    #[inline(always)]
    pub(crate) fn expand(
        &self,
        (x, y): (u32, u32),
        arrived: Option<usize>,
        allowance: &mut u32,
        scanned: &mut [i64; 4],
        hits: &mut Vec<u32>,
        mut reached: impl FnMut(usize, u32, (u32, u32)),
    ) {
        let mut moves = self.successors(x as i32, y as i32, arrived);
        let mut reach = (0, 0);
        while moves != 0 {
            let direction = moves.trailing_zeros() as usize;
            moves &= moves - 1;
            let found = self.jump(x as i32, y as i32, direction, allowance, &mut reach, hits);
            let (dx, dy) = MOVE_DELTAS[direction];
            let to_x = x as i64 + dx as i64 * reach.0 as i64;
            let to_y = y as i64 + dy as i64 * reach.1 as i64;
            cover(scanned, x as i64, y as i64, to_x, to_y);
            let mut reach_at = |steps: u32| {
                let to = (
                    x.wrapping_add_signed(dx * steps as i32),
                    y.wrapping_add_signed(dy * steps as i32),
                );
                reached(direction, steps, to);
            };
            // Only a flood's scans pass targets.
            if !hits.is_empty() {
                hits.iter().copied().for_each(&mut reach_at);
                hits.clear();
            }
            if let Some(steps) = found {
                reach_at(steps);
            }
        }
    }

    /// Scans from `(x, y)` along `direction` and returns the number of
    /// moves to the next jump point, or `None` when the scan runs into a
    /// wall first (a diagonal move also needs both cells beside it open).
    /// Takes the scan steps it uses out of `allowance`, and does nothing
    /// when that is 0.
    ///
    /// `reach` is set to how far the cells the result depends on extend,
    /// in cells along x and along y (in the move's direction): with the
    /// lines on either side, everything the scan read that mattered lies
    /// within that box round `(x, y)`.
    #[inline(always)]
    pub(crate) fn jump(
        &self,
        x: i32,
        y: i32,
        direction: usize,
        allowance: &mut u32,
        reach: &mut (u32, u32),
        hits: &mut Vec<u32>,
    ) -> Option<u32> {
        let (dx, dy) = MOVE_DELTAS[direction];
        *reach = (0, 0);
        let granted = JUMP_LIMIT.min(*allowance);
        if granted == 0 {
            return None;
        }
        let mut limit = granted;
        let found = if dx != 0 && dy != 0 {
            self.diagonal((x, y), (dx, dy), &mut limit, reach, hits)
        } else {
            let mut far = 0;
            let found = self.straight((x, y), (dx, dy), &mut limit, &mut far, false);
            *reach = if dy == 0 { (far, 0) } else { (0, far) };
            if let Some(targets) = self.targets {
                // The walkable cells the scan went over: up to its jump
                // point, or up to the wall it met.
                let last = found.unwrap_or(far.saturating_sub(1)) as i32;
                let (list, at, step) = if dy == 0 {
                    (targets.on(false, y), x, dx)
                } else {
                    (targets.on(true, x), y, dy)
                };
                let (low, high) = if step > 0 {
                    (at + 1, at + last)
                } else {
                    (at - last, at - 1)
                };
                let from = list.partition_point(|&v| v < low);
                for &v in list[from..].iter().take_while(|&&v| v <= high) {
                    hits.push(v.abs_diff(at));
                }
            }
            found
        };
        *allowance -= granted - limit;
        found
    }

    /// A straight scan, 64 cells at a time; `limit` counts down the scan
    /// steps it may still take. A look-ahead (`ahead`) stops at targets as
    /// at the goal.
    #[inline(always)]
    fn straight(
        &self,
        (x, y): (i32, i32),
        (dx, dy): (i32, i32),
        limit: &mut u32,
        far: &mut u32,
        ahead: bool,
    ) -> Option<u32> {
        // Scan along a line of one bitmap: rows for east and west, columns
        // for north and south.
        let (lines, line, at, step, goal) = if dy == 0 {
            (
                &self.bits.rows,
                y,
                x,
                dx,
                (self.goal.1 == y).then_some(self.goal.0),
            )
        } else {
            (
                &self.bits.columns,
                x,
                y,
                dy,
                (self.goal.0 == x).then_some(self.goal.1),
            )
        };
        let targets = self
            .targets
            .filter(|_| ahead)
            .map_or(&[][..], |targets| targets.on(dy != 0, line));
        let stops = Stops { goal, targets };
        scan(lines, line, (at, step), stops, limit, far)
    }

    /// A diagonal scan: at each cell, straight scans along both components
    /// look for a jump point.
    #[inline(always)]
    fn diagonal(
        &self,
        (mut x, mut y): (i32, i32),
        (dx, dy): (i32, i32),
        limit: &mut u32,
        reach: &mut (u32, u32),
        hits: &mut Vec<u32>,
    ) -> Option<u32> {
        let bits = self.bits;
        let mut steps = 0;
        loop {
            // The next diagonal cell and the two beside the move.
            reach.0 = reach.0.max(steps + 1);
            reach.1 = reach.1.max(steps + 1);
            if !(bits.open(x + dx, y) && bits.open(x, y + dy) && bits.open(x + dx, y + dy)) {
                return None;
            }
            x += dx;
            y += dy;
            steps += 1;
            *limit = limit.saturating_sub(1);
            if self.targets.is_some_and(|targets| targets.contains(x, y)) {
                hits.push(steps);
            }
            if (x, y) == self.goal || *limit == 0 {
                return Some(steps);
            }
            let (mut far_x, mut far_y) = (0, 0);
            let found = self
                .straight((x, y), (dx, 0), limit, &mut far_x, true)
                .is_some()
                || self
                    .straight((x, y), (0, dy), limit, &mut far_y, true)
                    .is_some();
            reach.0 = reach.0.max(steps + far_x);
            reach.1 = reach.1.max(steps + far_y);
            if found {
                return Some(steps);
            }
        }
    }
}

/// Grows the box `scanned` to hold the cells from `(x, y)` to
/// `(to_x, to_y)` and the lines round them (a straight scan reads its two
/// side lines; the cells beside a diagonal step lie within one cell too).
pub(crate) fn cover(scanned: &mut [i64; 4], x: i64, y: i64, to_x: i64, to_y: i64) {
    scanned[0] = scanned[0].min(x.min(to_x) - 1);
    scanned[1] = scanned[1].min(y.min(to_y) - 1);
    scanned[2] = scanned[2].max(x.max(to_x) + 1);
    scanned[3] = scanned[3].max(y.max(to_y) + 1);
}

/// Cells of a line where a scan stops besides jump points: the goal (when
/// it lies on the line) and targets (sorted).
struct Stops<'a> {
    goal: Option<i32>,
    targets: &'a [i32],
}

/// Scans line `line` of `lines` from cell `at` in direction `step` (±1),
/// 64 cells a window, for the first jump point: a cell whose neighbour on
/// a side line is open while the one before it on that side line is a
/// wall, or the goal (`goal`, when it lies on this line), or one of
/// `targets` (cells of this line, sorted). Returns its
/// distance in moves, or `None` when a wall comes first. Each window read
/// takes one step of `limit`; when none is left, the scan stops at the last
/// cell read. `far` is set to the distance of the furthest cell whose
/// state decided the result (the jump point, the wall, or the last cell).
#[inline(always)]
fn scan(
    lines: &Lines,
    line: i32,
    (at, step): (i32, i32),
    Stops { goal, targets }: Stops,
    limit: &mut u32,
    far: &mut u32,
) -> Option<u32> {
    let mut covered = 0u32;
    loop {
        // The window holds the next 64 cells; going backward they are read
        // from the top, so the bits are reversed to put the nearest first.
        let (first, before) = if step > 0 {
            let first = at + 1 + covered as i32;
            (first, first - 1)
        } else {
            let first = at - 64 - covered as i32;
            (first, first + 1)
        };
        let side = |l: i32| lines.window(l, first) & !lines.window(l, before);
        let goal_bit = goal
            .map(|g| g - first)
            .filter(|&i| (0..64).contains(&i))
            .map_or(0, |i| 1u64 << i);
        let target_bits = if targets.is_empty() {
            0
        } else {
            Targets::window(targets, first)
        };
        let mut stops = side(line - 1) | side(line + 1) | goal_bit | target_bits;
        let mut open = lines.window(line, first);
        if step < 0 {
            stops = stops.reverse_bits();
            open = open.reverse_bits();
        }
        let wall = (!open).trailing_zeros();
        let stop = stops.trailing_zeros();
        *limit = limit.saturating_sub(1);
        if stop < wall {
            *far = covered + stop + 1;
            return Some(covered + stop + 1);
        }
        if wall < 64 {
            *far = covered + wall + 1;
            return None;
        }
        covered += 64;
        if *limit == 0 {
            *far = covered;
            return Some(covered);
        }
    }
}

/// The bit of the move `(dx, dy)` in a move set: `1 << i` for its index
/// `i` in `MOVE_DELTAS`.
#[inline(always)]
const fn bit(dx: i32, dy: i32) -> u8 {
    let mut index = 0;
    while index < MOVE_DELTAS.len() {
        if MOVE_DELTAS[index].0 == dx && MOVE_DELTAS[index].1 == dy {
            return 1 << index;
        }
        index += 1;
    }
    0
}
