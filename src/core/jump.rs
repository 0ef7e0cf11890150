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
}

impl<'a> JumpGrid<'a> {
    pub(crate) fn new(bits: &'a WalkBits, goal: (u32, u32)) -> Self {
        Self {
            bits,
            goal: (goal.0 as i32, goal.1 as i32),
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
    ) -> Option<u32> {
        let (dx, dy) = MOVE_DELTAS[direction];
        *reach = (0, 0);
        let granted = JUMP_LIMIT.min(*allowance);
        if granted == 0 {
            return None;
        }
        let mut limit = granted;
        let found = if dx != 0 && dy != 0 {
            self.diagonal(x, y, dx, dy, &mut limit, reach)
        } else {
            let mut far = 0;
            let found = self.straight(x, y, dx, dy, &mut limit, &mut far);
            *reach = if dy == 0 { (far, 0) } else { (0, far) };
            found
        };
        *allowance -= granted - limit;
        found
    }

    /// A straight scan, 64 cells at a time; `limit` counts down the scan
    /// steps it may still take.
    #[inline(always)]
    fn straight(
        &self,
        x: i32,
        y: i32,
        dx: i32,
        dy: i32,
        limit: &mut u32,
        far: &mut u32,
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
        scan(lines, line, at, step, goal, limit, far)
    }

    /// A diagonal scan: at each cell, straight scans along both components
    /// look for a jump point.
    #[inline(always)]
    fn diagonal(
        &self,
        mut x: i32,
        mut y: i32,
        dx: i32,
        dy: i32,
        limit: &mut u32,
        reach: &mut (u32, u32),
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
            if (x, y) == self.goal || *limit == 0 {
                return Some(steps);
            }
            let (mut far_x, mut far_y) = (0, 0);
            let found = self.straight(x, y, dx, 0, limit, &mut far_x).is_some()
                || self.straight(x, y, 0, dy, limit, &mut far_y).is_some();
            reach.0 = reach.0.max(steps + far_x);
            reach.1 = reach.1.max(steps + far_y);
            if found {
                return Some(steps);
            }
        }
    }
}

/// Scans line `line` of `lines` from cell `at` in direction `step` (±1),
/// 64 cells a window, for the first jump point: a cell whose neighbour on
/// a side line is open while the one before it on that side line is a
/// wall, or the goal (`goal`, when it lies on this line). Returns its
/// distance in moves, or `None` when a wall comes first. Each window read
/// takes one step of `limit`; when none is left, the scan stops at the last
/// cell read. `far` is set to the distance of the furthest cell whose
/// state decided the result (the jump point, the wall, or the last cell).
#[inline(always)]
fn scan(
    lines: &Lines,
    line: i32,
    at: i32,
    step: i32,
    goal: Option<i32>,
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
        let mut stops = side(line - 1) | side(line + 1) | goal_bit;
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
