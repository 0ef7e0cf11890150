//! The open list: a binary min-heap in a flat array whose items know their
//! own position, so membership is O(1) and lowering a key is an O(log n)
//! sift-up instead of an O(n) scan.
//!
//! [`OpenList`] keeps positions wherever the caller likes through
//! [`HeapPositions`] (the A* search keeps them inside its per-cell scratch
//! records, next to the scores it reads anyway). [`IndexedHeap`] bundles an
//! `OpenList` with a plain position array for everyone else.

/// Where an [`OpenList`] records each item's position in its array.
pub trait HeapPositions {
    /// Item `item` now sits at `position`.
    fn set_position(&mut self, item: u32, position: u32);
}

#[derive(Clone, Copy, Debug)]
struct Entry<K> {
    key: K,
    item: u32,
}

/// A binary min-heap of `(key, item)` pairs, 0-based (children of `i` at
/// `2i + 1` and `2i + 2`), that reports every move of an item to a
/// [`HeapPositions`].
#[derive(Clone, Debug)]
pub struct OpenList<K> {
    entries: Vec<Entry<K>>,
}

impl<K> Default for OpenList<K> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
        }
    }
}

impl<K: Ord + Copy> OpenList<K> {
    /// An empty heap.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the heap is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Items the heap can hold without reallocating.
    pub fn capacity(&self) -> usize {
        self.entries.capacity()
    }

    /// Removes every item, keeping the allocation.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// The smallest key and its item.
    pub fn peek(&self) -> Option<(K, u32)> {
        self.entries.first().map(|e| (e.key, e.item))
    }

    /// The key of the item at `position`.
    pub fn key_at(&self, position: u32) -> Option<K> {
        self.entries.get(position as usize).map(|e| e.key)
    }

    /// Adds `item` with `key`. The caller makes sure the item is not already
    /// in the heap.
    pub fn push(&mut self, key: K, item: u32, positions: &mut impl HeapPositions) {
        let position = self.entries.len();
        self.entries.push(Entry { key, item });
        self.sift_up(position, positions);
    }

    /// Removes and returns the smallest key and its item.
    ///
    /// Floyd's variant: the hole left at the root walks down to a leaf along
    /// the smaller children (one comparison per level instead of two), and
    /// the last entry then sifts up from there, which in an A* open list is
    /// rarely more than a level or two.
    pub fn pop(&mut self, positions: &mut impl HeapPositions) -> Option<(K, u32)> {
        let last = self.entries.pop()?;
        if self.entries.is_empty() {
            return Some((last.key, last.item));
        }
        let top = self.entries[0];
        let len = self.entries.len();
        let mut hole = 0;
        let mut child = 1;
        while child + 1 < len {
            child += (self.entries[child + 1].key < self.entries[child].key) as usize;
            let moved = self.entries[child];
            self.entries[hole] = moved;
            positions.set_position(moved.item, hole as u32);
            hole = child;
            child = 2 * hole + 1;
        }
        if child < len {
            let moved = self.entries[child];
            self.entries[hole] = moved;
            positions.set_position(moved.item, hole as u32);
            hole = child;
        }
        self.entries[hole] = last;
        self.sift_up(hole, positions);
        Some((top.key, top.item))
    }

    /// Lowers the key of the item at `position` to `key` and restores the
    /// heap order. A key that is not lower than the current one is ignored.
    pub fn decrease_key(&mut self, position: u32, key: K, positions: &mut impl HeapPositions) {
        let position = position as usize;
        match self.entries.get_mut(position) {
            Some(entry) if key < entry.key => entry.key = key,
            _ => return,
        }
        self.sift_up(position, positions);
    }

    fn sift_up(&mut self, mut position: usize, positions: &mut impl HeapPositions) {
        let moving = self.entries[position];
        while position > 0 {
            let parent = (position - 1) / 2;
            let above = self.entries[parent];
            if above.key <= moving.key {
                break;
            }
            self.entries[position] = above;
            positions.set_position(above.item, position as u32);
            position = parent;
        }
        self.entries[position] = moving;
        positions.set_position(moving.item, position as u32);
    }
}

const ABSENT: u32 = u32::MAX;

impl HeapPositions for Vec<u32> {
    fn set_position(&mut self, item: u32, position: u32) {
        self[item as usize] = position;
    }
}

/// A min-heap over items `0..capacity` with O(1) membership and key lookup
/// and O(log n) decrease-key: an [`OpenList`] plus one position per item.
#[derive(Clone, Debug, Default)]
pub struct IndexedHeap<K> {
    heap: OpenList<K>,
    positions: Vec<u32>,
}

impl<K: Ord + Copy> IndexedHeap<K> {
    /// An empty heap for items `0..capacity`.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            heap: OpenList::new(),
            positions: vec![ABSENT; capacity],
        }
    }

    /// Number of items in the heap.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether the heap is empty.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Whether `item` is in the heap.
    pub fn contains(&self, item: u32) -> bool {
        self.positions
            .get(item as usize)
            .is_some_and(|&p| p != ABSENT)
    }

    /// The key of `item`, if it is in the heap.
    pub fn key(&self, item: u32) -> Option<K> {
        let position = *self.positions.get(item as usize)?;
        self.heap.key_at(position)
    }

    /// The smallest key and its item.
    pub fn peek(&self) -> Option<(K, u32)> {
        self.heap.peek()
    }

    /// Adds `item` with `key`. Returns `false`, changing nothing, when the
    /// item is already in the heap or not below the capacity.
    pub fn push(&mut self, item: u32, key: K) -> bool {
        if item as usize >= self.positions.len() || self.contains(item) {
            return false;
        }
        self.heap.push(key, item, &mut self.positions);
        true
    }

    /// Lowers `item`'s key to `key`. Returns whether it changed: `false` if
    /// the item is not in the heap or `key` is not lower.
    pub fn decrease_key(&mut self, item: u32, key: K) -> bool {
        match self.key(item) {
            Some(current) if key < current => {
                let position = self.positions[item as usize];
                self.heap.decrease_key(position, key, &mut self.positions);
                true
            }
            _ => false,
        }
    }

    /// Removes and returns the smallest key and its item.
    pub fn pop(&mut self) -> Option<(K, u32)> {
        let (key, item) = self.heap.pop(&mut self.positions)?;
        self.positions[item as usize] = ABSENT;
        Some((key, item))
    }
}
