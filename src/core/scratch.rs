//! The memory a search or a flood works in, and the stamps that tell which
//! cells it has seen.
//!
//! Every cell has a stamp: a search generation above 3 bits of the move
//! that reached the cell. A search that begins in generation `open` marks a
//! cell open by stamping it `open`, closed by stamping it `open + 1`; any
//! other generation means "not seen by this search". So starting a new
//! search clears nothing: it takes the next generation.

use std::fmt;

use super::grid::Cell;
use super::heap::OpenList;
use super::moves::{Moves, step_cost};

/// Bits of a stamp that hold the move that reached the cell.
pub(crate) const DIRECTION_BITS: u32 = 3;
const DIRECTION_MASK: u32 = (1 << DIRECTION_BITS) - 1;

/// The stamp of a cell in generation `generation`, reached by move
/// `direction`.
#[inline(always)]
pub(crate) const fn stamp(generation: u32, direction: usize) -> u32 {
    (generation << DIRECTION_BITS) | direction as u32
}

/// The generation of a stamp.
#[inline(always)]
pub(crate) const fn generation(stamp: u32) -> u32 {
    stamp >> DIRECTION_BITS
}

/// The move recorded in a stamp (an index into
/// [`MOVE_DELTAS`](super::moves::MOVE_DELTAS)).
#[inline(always)]
pub(crate) const fn direction(stamp: u32) -> usize {
    (stamp & DIRECTION_MASK) as usize
}

/// Per-cell records of a search, 16 bytes a cell in three arrays. The stamp
/// is read for every neighbour of every expanded cell, mostly to learn that
/// it is closed, so it gets an array of its own: four times as many stamps
/// per cache line as a 16-byte record would allow.
#[derive(Default)]
pub(crate) struct Nodes {
    /// See the module docs.
    pub(crate) stamp: Vec<u32>,
    /// Best known cost from the start (or to the source), fixed point.
    pub(crate) g: Vec<u64>,
    /// Position in the open list, while open.
    pub(crate) position: Vec<u32>,
}

impl Nodes {
    /// Writes one value in every memory page of the arrays, so that they
    /// are backed by memory now.
    fn touch(&mut self) {
        fn touch<T: Copy + Default>(values: &mut [T]) {
            let step = (4096 / std::mem::size_of::<T>()).max(1);
            for value in values.iter_mut().step_by(step) {
                // An opaque value: the store cannot be optimised away.
                *value = std::hint::black_box(T::default());
            }
        }
        touch(&mut self.stamp);
        touch(&mut self.g);
        touch(&mut self.position);
    }

    /// Opens `cell` in generation `open` with score `g`, reached by move
    /// `direction`.
    #[inline(always)]
    pub(crate) fn open(&mut self, cell: u32, open: u32, g: u64, direction: usize) {
        self.stamp[cell as usize] = stamp(open, direction);
        self.g[cell as usize] = g;
    }

    /// Whether `cell` is closed in the search whose open generation is
    /// `open`.
    #[inline(always)]
    pub(crate) fn is_closed(&self, cell: usize, open: u32) -> bool {
        self.stamp
            .get(cell)
            .is_some_and(|&s| generation(s) == open + 1)
    }

    /// Whether the search whose open generation is `open` has opened or
    /// closed `cell`.
    #[inline(always)]
    pub(crate) fn is_seen(&self, cell: usize, open: u32) -> bool {
        generation(self.stamp[cell]).wrapping_sub(open) <= 1
    }

    /// Whether the search whose open generation is `open` has read the grid
    /// at `cell`, on a `width × height` grid: whether a cell of the 3×3
    /// block round it is closed. A search reads a
    /// step's cost, its walls and the cells beside a diagonal only round
    /// the cell it expands, so an edit of any other cell leaves its state
    /// what the same expansions give on the edited grid.
    pub(crate) fn has_read(&self, cell: Cell, width: u32, height: u32, open: u32) -> bool {
        let (x, y) = (cell.x as i64, cell.y as i64);
        (y - 1..=y + 1).any(|ny| {
            (x - 1..=x + 1).any(|nx| {
                (0..width as i64).contains(&nx)
                    && (0..height as i64).contains(&ny)
                    && self.is_closed((ny * width as i64 + nx) as usize, open)
            })
        })
    }

    /// The cell one recorded move back from `cell`: its parent, for a cell
    /// reached by a single move.
    #[inline(always)]
    pub(crate) fn parent(&self, cell: u32, moves: &Moves) -> u32 {
        moves.back(cell, direction(self.stamp[cell as usize]))
    }

    /// [`Nodes::walk_back`] for a jump point search (whose open generation
    /// is `open`, every step costing `unit` times a plain-ground step): a
    /// jump point's parent lies some steps back along the move that reached
    /// it. Any cell of the search on the way whose cost adds up is as good
    /// a parent, and the first one is taken. `end` first.
    pub(crate) fn walk_back_jumps(
        &self,
        end: u32,
        start: u32,
        moves: &Moves,
        open: u32,
        unit: u64,
    ) -> Vec<u32> {
        let mut cells = vec![end];
        let mut at = end;
        while at != start {
            let direction = direction(self.stamp[at as usize]);
            let step = unit * step_cost(direction);
            let g = self.g[at as usize];
            let mut back = 0;
            loop {
                at = moves.back(at, direction);
                back += step;
                cells.push(at);
                if at == start
                    || (self.is_seen(at as usize, open) && self.g[at as usize] + back == g)
                {
                    break;
                }
            }
        }
        cells
    }

    /// The cells from `end` back to `start` through the recorded parents,
    /// `end` first.
    pub(crate) fn walk_back(&self, end: u32, start: u32, moves: &Moves) -> Vec<u32> {
        let mut cells = vec![end];
        let mut at = end;
        while at != start {
            at = self.parent(at, moves);
            cells.push(at);
        }
        cells
    }
}

/// Marks `cell` closed in the stamps of the search whose open generation is
/// `open`, keeping its recorded move; returns that move.
#[inline(always)]
pub(crate) fn close(stamps: &mut [u32], cell: u32, open: u32) -> usize {
    let stamp_of = &mut stamps[cell as usize];
    let direction = direction(*stamp_of);
    *stamp_of = stamp(open + 1, direction);
    direction
}

/// The memory a search works in: 16 bytes per grid cell (stamp, score and
/// heap position) and the open list, which holds only the frontier. Reused
/// from search to search and reset in O(1) by bumping a generation number,
/// never cleared cell by cell (but once every 2²⁸ searches, when the number
/// wraps).
#[derive(Default)]
pub struct Scratch {
    pub(crate) nodes: Nodes,
    generation: u32,
    pub(crate) open: OpenList<u64>,
}

impl fmt::Debug for Scratch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scratch")
            .field("cells", &self.nodes.stamp.len())
            .field("generation", &self.generation)
            .finish()
    }
}

impl Scratch {
    /// Bytes of per-cell scratch a search uses on each grid cell.
    pub const BYTES_PER_CELL: usize =
        std::mem::size_of::<u32>() + std::mem::size_of::<u64>() + std::mem::size_of::<u32>();

    /// Empty scratch space; it grows to the size of the first grid searched.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes held now: the per-cell records plus the open list's capacity.
    pub fn memory_bytes(&self) -> usize {
        self.nodes.stamp.capacity() * Self::BYTES_PER_CELL
            + self.open.capacity() * (std::mem::size_of::<u64>() + std::mem::size_of::<u32>())
    }

    /// Starts a new search over `cells` cells; returns its open generation.
    pub(crate) fn begin(&mut self, cells: usize) -> u32 {
        if self.generation >= (u32::MAX >> DIRECTION_BITS) - 2 {
            self.nodes.stamp.fill(0);
            self.generation = 0;
        }
        self.generation += 2;
        if self.nodes.stamp.len() < cells {
            // Fresh zeroed allocations: the OS hands out zero pages lazily,
            // so a first search pays only for the cells it touches.
            self.nodes = Nodes {
                stamp: vec![0; cells],
                g: vec![0; cells],
                position: vec![0; cells],
            };
            self.generation = 2;
        }
        self.open.clear();
        self.generation
    }

    /// Opens the cell a search starts from (score 0) in generation `open`
    /// and puts it on the open list with key `key`.
    pub(crate) fn open_source(&mut self, source: u32, open: u32, key: u64) {
        self.nodes.open(source, open, 0, 0);
        self.open.push(key, source, &mut self.nodes.position[..]);
    }
}

/// A pool of [`Scratch`] spaces, so that searches started one after another
/// reuse memory instead of allocating a grid-sized array each time. It
/// keeps at most [`ScratchPool::limit`] spaces (unbounded unless set): one
/// given back beyond that is freed, so memory follows the searches under
/// way, not the most there ever were.
#[derive(Debug, Default)]
pub struct ScratchPool {
    free: Vec<Scratch>,
    limit: Option<usize>,
}

impl ScratchPool {
    /// An empty pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// A scratch space from the pool, or a new one.
    pub fn take(&mut self) -> Scratch {
        self.free.pop().unwrap_or_default()
    }

    /// Returns a scratch space to the pool (or frees it, when the pool
    /// already holds its limit).
    pub fn give(&mut self, scratch: Scratch) {
        if self.limit.is_none_or(|limit| self.free.len() < limit) {
            self.free.push(scratch);
        }
    }

    /// Keeps at most `limit` spaces from now on, freeing any beyond it (the
    /// coldest first: warm ones are taken first, from the end).
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = Some(limit);
        if self.free.len() > limit {
            self.free.drain(..self.free.len() - limit);
        }
    }

    /// The most spaces the pool keeps, if it is bounded.
    pub fn limit(&self) -> Option<usize> {
        self.limit
    }

    /// Fills the pool up to `count` spaces (no more than its limit) of at
    /// least `cells` cells each, their memory touched now: the operating
    /// system then hands over its pages here (when a map is loaded, say),
    /// not in the first frames that search it, where that cost is not
    /// counted in node expansions.
    pub fn warm(&mut self, count: usize, cells: usize) {
        let count = self.limit.map_or(count, |limit| count.min(limit));
        let ready = self
            .free
            .iter()
            .filter(|scratch| scratch.nodes.stamp.len() >= cells)
            .count();
        for _ in ready..count {
            let mut scratch = Scratch::new();
            scratch.begin(cells);
            scratch.nodes.touch();
            // Warm ones are taken first; a full pool frees its coldest.
            if self.limit.is_some_and(|limit| self.free.len() >= limit) {
                self.free.remove(0);
            }
            self.free.push(scratch);
        }
    }

    /// Scratch spaces waiting in the pool.
    pub fn len(&self) -> usize {
        self.free.len()
    }

    /// Whether the pool holds none.
    pub fn is_empty(&self) -> bool {
        self.free.is_empty()
    }

    /// Bytes the spaces in the pool hold.
    pub fn memory_bytes(&self) -> usize {
        self.free.iter().map(Scratch::memory_bytes).sum()
    }
}

/// A saved scratch space is its size, its generation and only the cells
/// the search of that generation has seen (`(cell, stamp, g)`, in cell
/// order), with the open list. Positions are those of the open list's
/// items; a cell not seen is left at zero, which no generation a search
/// takes reads as seen.
#[cfg(feature = "serialize")]
type SeenCell = (u32, u32, u64);

#[cfg(feature = "serialize")]
impl serde::Serialize for Scratch {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let seen: Vec<SeenCell> = (self.nodes.stamp.iter().enumerate())
            .filter(|&(_, &stamp)| {
                self.generation > 0 && generation(stamp).wrapping_sub(self.generation) <= 1
            })
            .map(|(cell, &stamp)| (cell as u32, stamp, self.nodes.g[cell]))
            .collect();
        let cells = self.nodes.stamp.len() as u32;
        (cells, self.generation, seen, &self.open).serialize(serializer)
    }
}

#[cfg(feature = "serialize")]
impl<'de> serde::Deserialize<'de> for Scratch {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let (cells, generation, seen, open): (u32, u32, Vec<SeenCell>, OpenList<u64>) =
            serde::Deserialize::deserialize(deserializer)?;
        let cells = cells as usize;
        let mut nodes = Nodes {
            stamp: vec![0; cells],
            g: vec![0; cells],
            position: vec![0; cells],
        };
        for (cell, stamp, g) in seen {
            let cell = cell as usize;
            if cell >= cells {
                return Err(D::Error::custom("a scratch cell beyond its size"));
            }
            nodes.stamp[cell] = stamp;
            nodes.g[cell] = g;
        }
        for (position, &item) in open.items().iter().enumerate() {
            let slot = nodes.position.get_mut(item as usize);
            *slot.ok_or_else(|| D::Error::custom("an open cell beyond its size"))? =
                position as u32;
        }
        Ok(Self {
            nodes,
            generation,
            open,
        })
    }
}

/// A saved pool keeps only its limit: the spaces in it hold no search, and
/// the next searches make their own.
#[cfg(feature = "serialize")]
impl serde::Serialize for ScratchPool {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.limit.serialize(serializer)
    }
}

#[cfg(feature = "serialize")]
impl<'de> serde::Deserialize<'de> for ScratchPool {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let limit = Option::<usize>::deserialize(deserializer)?;
        Ok(Self {
            free: Vec::new(),
            limit,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_search_forgets_the_last_without_clearing() {
        let mut scratch = Scratch::new();
        let first = scratch.begin(16);
        scratch.open_source(3, first, 0);
        close(&mut scratch.nodes.stamp, 3, first);
        assert!(scratch.nodes.is_closed(3, first));
        let second = scratch.begin(16);
        assert!(!scratch.nodes.is_seen(3, second));
        assert!(!scratch.nodes.is_closed(3, second));
    }

    #[test]
    fn stamps_keep_the_move() {
        for direction in 0..8 {
            let s = stamp(1234, direction);
            assert_eq!((generation(s), super::direction(s)), (1234, direction));
        }
    }
}
