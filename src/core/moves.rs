//! The moves a unit can make from a cell and what they cost: one table
//! for the search, jump points, the flood and the grid's own neighbour
//! queries.
//!
//! Costs are fixed point, [`COST_SCALE`] units per orthogonal step on plain
//! ground, so every search is exact, integer and identical on every
//! machine. A move costs the entered cell's cost times [`ORTHOGONAL`] or
//! [`DIAGONAL`].

/// Fixed-point units per unit of path cost: an orthogonal step onto plain
/// ground costs `COST_SCALE`.
pub const COST_SCALE: u64 = 1 << 20;

/// An orthogonal step on ground of cost 1, fixed point.
pub const ORTHOGONAL: u64 = COST_SCALE;

/// A diagonal step on ground of cost 1: √2 × 2²⁰, rounded. The relative
/// error, 3·10⁻⁷, is far below the precision of any published benchmark
/// length.
pub const DIAGONAL: u64 = 1_482_910;

/// The eight moves in the order searches number them (a parent is recorded
/// as the index of the move that left it): east, west, +y, −y, then the
/// diagonals +x+y, −x+y, +x−y, −x−y. The first four are the 4-neighbour
/// moves.
pub const MOVE_DELTAS: [(i32, i32); 8] = [
    (1, 0),
    (-1, 0),
    (0, 1),
    (0, -1),
    (1, 1),
    (-1, 1),
    (1, -1),
    (-1, -1),
];

/// The two orthogonal moves (indices into [`MOVE_DELTAS`]) that each
/// diagonal move `4 + i` passes between: both cells must be walkable, so no
/// wall corner is cut.
pub(crate) const DIAGONAL_SIDES: [[usize; 2]; 4] = [[0, 2], [1, 2], [0, 3], [1, 3]];

/// Whether move `direction` (an index into [`MOVE_DELTAS`]) is diagonal.
#[inline(always)]
pub const fn is_diagonal(direction: usize) -> bool {
    direction >= 4
}

/// The cost of move `direction` on ground of cost 1, fixed point.
#[inline(always)]
pub const fn step_cost(direction: usize) -> u64 {
    if is_diagonal(direction) {
        DIAGONAL
    } else {
        ORTHOGONAL
    }
}

/// The octile distance of an offset `(dx, dy)` in fixed point: the cost of
/// the cheapest 8-neighbour path across open plain ground.
#[inline(always)]
pub const fn octile(dx: u32, dy: u32) -> u64 {
    let (dx, dy) = (dx as u64, dy as u64);
    let (low, high) = if dx < dy { (dx, dy) } else { (dy, dx) };
    (high - low) * ORTHOGONAL + low * DIAGONAL
}

/// The Manhattan distance of an offset `(dx, dy)` in fixed point: the cost
/// of the cheapest 4-neighbour path across open plain ground.
#[inline(always)]
pub const fn manhattan(dx: u32, dy: u32) -> u64 {
    (dx as u64 + dy as u64) * ORTHOGONAL
}

/// [`MOVE_DELTAS`] as flat-index offsets on a grid of a given width.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Moves {
    pub(crate) offsets: [i64; 8],
}

impl Moves {
    pub(crate) fn new(width: u32) -> Self {
        let w = width as i64;
        Self {
            offsets: MOVE_DELTAS.map(|(dx, dy)| dx as i64 + dy as i64 * w),
        }
    }

    /// The cell one move `direction` from `(x, y)` (wrapping below 0: the
    /// caller checks bounds).
    #[inline(always)]
    pub(crate) fn cell_of(&self, direction: usize, x: u32, y: u32) -> (u32, u32) {
        let (dx, dy) = MOVE_DELTAS[direction];
        (x.wrapping_add_signed(dx), y.wrapping_add_signed(dy))
    }

    /// The flat index one move `direction` back from `index`: the parent of
    /// a cell reached by that move.
    #[inline(always)]
    pub(crate) fn back(&self, index: u32, direction: usize) -> u32 {
        (index as i64 - self.offsets[direction]) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagonal_sides_are_the_components_of_each_diagonal() {
        for (i, [a, b]) in DIAGONAL_SIDES.iter().enumerate() {
            let (dx, dy) = MOVE_DELTAS[4 + i];
            assert_eq!(MOVE_DELTAS[*a], (dx, 0));
            assert_eq!(MOVE_DELTAS[*b], (0, dy));
        }
    }

    #[test]
    fn octile_counts_diagonals_first() {
        assert_eq!(octile(3, 0), 3 * ORTHOGONAL);
        assert_eq!(octile(2, 5), 3 * ORTHOGONAL + 2 * DIAGONAL);
        assert_eq!(octile(5, 2), octile(2, 5));
        let sqrt2 = DIAGONAL as f64 / COST_SCALE as f64;
        assert!((sqrt2 - std::f64::consts::SQRT_2).abs() < 1e-6);
    }

    #[test]
    fn back_undoes_a_move() {
        let moves = Moves::new(10);
        let at = 5 * 10 + 5;
        for (direction, &(dx, dy)) in MOVE_DELTAS.iter().enumerate() {
            let next = (at as i64 + dx as i64 + 10 * dy as i64) as u32;
            assert_eq!(moves.back(next, direction), at);
        }
    }
}
