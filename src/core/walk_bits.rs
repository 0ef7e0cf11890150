//! The walkable cells of a grid as bitmaps, row by row and column by
//! column, from which jump point scans read 64 cells at a time. Kept by the
//! `NavGrid` and updated on every edit.

/// Bits of padding on each side of a line of [`WalkBits`]: a whole word, so
/// a 64-cell window may start up to 64 cells before the grid.
const PAD: i32 = 64;

/// The walkable cells of a grid as two bitmaps, one by rows and one by
/// columns, each line padded with walls on both ends and with a line of
/// walls before the first and after the last, so that scans never test
/// bounds.
#[derive(Clone, Debug)]
pub(crate) struct WalkBits {
    pub(crate) rows: Lines,
    pub(crate) columns: Lines,
}

/// One bitmap: `count + 2` lines of `words` words; bit `PAD + i` of line
/// `j + 1` is cell `i` of line `j`.
#[derive(Clone, Debug)]
pub(crate) struct Lines {
    bits: Vec<u64>,
    words: usize,
}

impl Lines {
    /// Words in a line of `length` cells: the padding on both sides, and
    /// one more so a window never reads past the line.
    fn words(length: u32) -> usize {
        (length as usize + PAD as usize) / 64 + 2
    }

    fn new(count: u32, length: u32) -> Self {
        let words = Self::words(length);
        Self {
            bits: vec![0; (count as usize + 2) * words],
            words,
        }
    }

    fn bytes(count: u32, length: u32) -> u64 {
        (Self::words(length) * 8) as u64 * (count as u64 + 2)
    }

    fn set(&mut self, line: u32, at: u32, on: bool) {
        let bit = (line as usize + 1) * self.words * 64 + (at + PAD as u32) as usize;
        let mask = 1u64 << (bit % 64);
        if on {
            self.bits[bit / 64] |= mask;
        } else {
            self.bits[bit / 64] &= !mask;
        }
    }

    /// Whether cell `at` of line `line` is walkable; both may be one past
    /// either end.
    #[inline(always)]
    pub(crate) fn get(&self, line: i32, at: i32) -> bool {
        let bit = (line + 1) as usize * self.words * 64 + (at + PAD) as usize;
        self.bits[bit / 64] >> (bit % 64) & 1 != 0
    }

    /// Cells `at .. at + 64` of line `line` (bit `i` is cell `at + i`);
    /// `at` may start up to 64 cells before the line.
    #[inline(always)]
    pub(crate) fn window(&self, line: i32, at: i32) -> u64 {
        let bit = (at + PAD) as usize;
        let word = (line + 1) as usize * self.words + bit / 64;
        let pair = (self.bits[word + 1] as u128) << 64 | self.bits[word] as u128;
        (pair >> (bit % 64)) as u64
    }
}

/// Bit `i` set where `cells[i]` (at most 64 costs) is walkable (not 0):
/// eight cells at a time, a byte's "not zero" found by carrying into its
/// top bit and the eight top bits gathered by one multiply.
fn walkable_bits(cells: &[u8]) -> u64 {
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const TOP: u64 = 0x8080_8080_8080_8080;
    const GATHER: u64 = 0x0002_0408_1020_4081;
    let eights = cells.chunks_exact(8);
    let rest = eights.remainder();
    let mut word = 0u64;
    let mut at = 0;
    for eight in eights {
        let v = u64::from_le_bytes(eight.try_into().unwrap_or_default());
        let top = (((v & LOW).wrapping_add(LOW)) | v) & TOP;
        word |= (top.wrapping_mul(GATHER) >> 56) << at;
        at += 8;
    }
    for (i, &cost) in rest.iter().enumerate() {
        word |= ((cost != 0) as u64) << (at + i);
    }
    word
}

impl WalkBits {
    /// Bytes of memory the bitmaps hold.
    pub(crate) fn memory_bytes(&self) -> usize {
        (self.rows.bits.capacity() + self.columns.bits.capacity()) * std::mem::size_of::<u64>()
    }

    /// The bitmaps of a grid's costs, or `None` when the grid is so thin
    /// that they would take more than twice its own size (plus 64 KiB):
    /// searches on it then do without jump points.
    pub(crate) fn new(width: u32, height: u32, costs: &[u8]) -> Option<Self> {
        let bytes = Lines::bytes(height, width) + Lines::bytes(width, height);
        if bytes > 2 * costs.len() as u64 + (64 << 10) {
            return None;
        }
        let mut rows = Lines::new(height, width);
        let mut columns = Lines::new(width, height);
        // Whole words at a time: the padding is one word, so cell `i` of a
        // line is bit `i % 64` of the line's word `1 + i / 64`. Cost 0 is a
        // wall, as in `NavGrid`.
        let w = width as usize;
        for (y, row) in costs.chunks_exact(w).enumerate() {
            let line = (y + 1) * rows.words + 1;
            let (bit, at) = (1u64 << (y % 64), 1 + y / 64);
            let stride = columns.words;
            for (k, cells) in row.chunks(64).enumerate() {
                let word = walkable_bits(cells);
                rows.bits[line + k] = word;
                // Each walkable cell of the word into its column.
                let mut left = word;
                while left != 0 {
                    let x = k * 64 + left.trailing_zeros() as usize;
                    columns.bits[(x + 1) * stride + at] |= bit;
                    left &= left - 1;
                }
            }
        }
        Some(Self { rows, columns })
    }

    /// Marks a cell walkable or not.
    pub(crate) fn set(&mut self, x: u32, y: u32, walkable: bool) {
        self.rows.set(y, x, walkable);
        self.columns.set(x, y, walkable);
    }

    #[inline(always)]
    pub(crate) fn open(&self, x: i32, y: i32) -> bool {
        self.rows.get(y, x)
    }
}
