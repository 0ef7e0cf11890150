//! The open list: a binary min-heap in a flat array whose items know their
//! own position, so membership is O(1) and lowering a key is an O(log n)
//! sift-up instead of an O(n) scan.
//!
//! [`OpenList`] keeps positions wherever the caller likes through
//! [`HeapPositions`] (the A* search keeps them in its per-cell scratch
//! space, one `u32` per grid cell). [`IndexedHeap`] bundles an `OpenList`
//! with its own position array for everyone else.

/// Where an [`OpenList`] records each item's position in its array.
pub trait HeapPositions {
    /// Item `item` now sits at `position`.
    fn set_position(&mut self, item: u32, position: u32);
}

/// A binary min-heap of `(key, item)` pairs, 0-based (children of `i` at
/// `2i + 1` and `2i + 2`), that reports every move of an item to a
/// [`HeapPositions`].
///
/// Keys and items live in two arrays: choosing a child reads only keys, so
/// more of them share a cache line.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct OpenList<K> {
    keys: Vec<K>,
    items: Vec<u32>,
}

impl<K> Default for OpenList<K> {
    fn default() -> Self {
        Self {
            keys: Vec::new(),
            items: Vec::new(),
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
        self.keys.len()
    }

    /// Whether the heap is empty.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Items the heap can hold without reallocating.
    pub fn capacity(&self) -> usize {
        self.keys.capacity().min(self.items.capacity())
    }

    /// Removes every item, keeping the allocation.
    pub fn clear(&mut self) {
        self.keys.clear();
        self.items.clear();
    }

    /// The items in the heap, in heap order.
    pub fn items(&self) -> &[u32] {
        &self.items
    }

    /// The smallest key and its item.
    pub fn peek(&self) -> Option<(K, u32)> {
        Some((*self.keys.first()?, *self.items.first()?))
    }

    /// The key of the item at `position`.
    pub fn key_at(&self, position: u32) -> Option<K> {
        self.keys.get(position as usize).copied()
    }

    /// Adds `item` with `key`. The caller makes sure the item is not already
    /// in the heap.
    pub fn push(&mut self, key: K, item: u32, positions: &mut (impl HeapPositions + ?Sized)) {
        self.keys.push(key);
        self.items.push(item);
        self.sift_up(self.keys.len() - 1, key, item, positions);
    }

    /// Removes and returns the smallest key and its item.
    ///
    /// Floyd's variant: the hole left at the root walks down to a leaf along
    /// the smaller children (one comparison per level instead of two), and
    /// the last entry then sifts up from there, which in an A* open list is
    /// rarely more than a level or two.
    pub fn pop(&mut self, positions: &mut (impl HeapPositions + ?Sized)) -> Option<(K, u32)> {
        let (last_key, last_item) = (self.keys.pop()?, self.items.pop()?);
        if self.keys.is_empty() {
            return Some((last_key, last_item));
        }
        let top = (self.keys[0], self.items[0]);
        let keys = &mut self.keys[..];
        let items = &mut self.items[..keys.len()];
        let len = keys.len();
        let mut hole = 0;
        let mut child = 1;
        while child + 1 < len {
            child += (keys[child + 1] < keys[child]) as usize;
            keys[hole] = keys[child];
            items[hole] = items[child];
            positions.set_position(items[hole], hole as u32);
            hole = child;
            child = 2 * hole + 1;
        }
        if child < len {
            keys[hole] = keys[child];
            items[hole] = items[child];
            positions.set_position(items[hole], hole as u32);
            hole = child;
        }
        self.sift_up(hole, last_key, last_item, positions);
        Some(top)
    }

    /// Lowers the key of the item at `position` to `key` and restores the
    /// heap order. A key that is not lower than the current one is ignored.
    pub fn decrease_key(
        &mut self,
        position: u32,
        key: K,
        positions: &mut (impl HeapPositions + ?Sized),
    ) {
        let position = position as usize;
        match self.keys.get(position) {
            Some(&current) if key < current => {
                let item = self.items[position];
                self.sift_up(position, key, item, positions);
            }
            _ => {}
        }
    }

    /// Places `(key, item)` at `position` or above it, moving down the
    /// parents it beats.
    fn sift_up(
        &mut self,
        mut position: usize,
        key: K,
        item: u32,
        positions: &mut (impl HeapPositions + ?Sized),
    ) {
        let keys = &mut self.keys[..];
        let items = &mut self.items[..keys.len()];
        while position > 0 {
            let parent = (position - 1) / 2;
            if keys[parent] <= key {
                break;
            }
            keys[position] = keys[parent];
            items[position] = items[parent];
            positions.set_position(items[position], position as u32);
            position = parent;
        }
        keys[position] = key;
        items[position] = item;
        positions.set_position(item, position as u32);
    }
}

const ABSENT: u32 = u32::MAX;

/// A plain array indexed by item.
impl HeapPositions for [u32] {
    #[inline(always)]
    fn set_position(&mut self, item: u32, position: u32) {
        self[item as usize] = position;
    }
}

/// A min-heap over items `0..capacity` with O(1) membership and key lookup
/// and O(log n) decrease-key: an [`OpenList`] plus one position per item.
#[derive(Clone, Debug, Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
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
        self.heap.push(key, item, &mut self.positions[..]);
        true
    }

    /// Lowers `item`'s key to `key`. Returns whether it changed: `false` if
    /// the item is not in the heap or `key` is not lower.
    pub fn decrease_key(&mut self, item: u32, key: K) -> bool {
        match self.key(item) {
            Some(current) if key < current => {
                let position = self.positions[item as usize];
                self.heap
                    .decrease_key(position, key, &mut self.positions[..]);
                true
            }
            _ => false,
        }
    }

    /// Removes and returns the smallest key and its item.
    pub fn pop(&mut self) -> Option<(K, u32)> {
        let (key, item) = self.heap.pop(&mut self.positions[..])?;
        self.positions[item as usize] = ABSENT;
        Some((key, item))
    }
}
