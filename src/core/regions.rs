//! Connected regions of a grid's walkable cells, kept as union-find labels
//! and repaired cell by cell as walls come and go. Each size class of a
//! `NavGrid` keeps its own, over the anchors where its footprint fits.

/// A wall, as in `NavGrid`.
const BLOCKED: u8 = 0;

/// Connected regions: a label per cell, and labels joined in a union-find
/// forest so that two regions merged by an opened wall need no relabel. A
/// region's id is the root of its labels.
#[derive(Clone, Debug)]
pub(super) struct Regions {
    /// Label per cell; `NO_REGION` for blocked cells.
    pub(super) labels: Vec<u32>,
    /// Union-find parent per label (a root is its own parent).
    pub(super) parent: Vec<u32>,
    /// Cells under each root label (for union by size; stale on non-roots).
    size: Vec<u32>,
    /// Regions (roots with cells).
    pub(super) count: u32,
    /// Visit marks for split checks, allocated on the first one.
    marks: Vec<u32>,
    /// The last mark handed out.
    mark: u32,
}

const NO_REGION: u32 = u32::MAX;

/// Cells a split check may visit before it gives up and leaves the regions
/// to a full relabel at the next query.
const SPLIT_CHECK_LIMIT: usize = 1 << 15;

impl Regions {
    /// Bytes of memory the labels hold.
    pub(super) fn memory_bytes(&self) -> usize {
        (self.labels.capacity()
            + self.parent.capacity()
            + self.size.capacity()
            + self.marks.capacity())
            * std::mem::size_of::<u32>()
    }

    /// Flood fill with 4-connectivity, one label per walkable component
    /// (cost 0 is a wall).
    pub(super) fn label(costs: &[u8], w: usize, h: usize) -> Self {
        let mut labels = vec![NO_REGION; costs.len()];
        let mut stack = Vec::new();
        let mut count = 0;
        for seed in 0..costs.len() {
            if labels[seed] != NO_REGION || costs[seed] == BLOCKED {
                continue;
            }
            labels[seed] = count;
            stack.push(seed);
            while let Some(i) = stack.pop() {
                let (x, y) = (i % w, i / w);
                let mut visit = |j: usize| {
                    if labels[j] == NO_REGION && costs[j] != BLOCKED {
                        labels[j] = count;
                        stack.push(j);
                    }
                };
                if x > 0 {
                    visit(i - 1);
                }
                if x + 1 < w {
                    visit(i + 1);
                }
                if y > 0 {
                    visit(i - w);
                }
                if y + 1 < h {
                    visit(i + w);
                }
            }
            count += 1;
        }
        let mut size = vec![0u32; count as usize];
        for &label in &labels {
            if label != NO_REGION {
                size[label as usize] += 1;
            }
        }
        Regions {
            labels,
            parent: (0..count).collect(),
            size,
            count,
            marks: Vec::new(),
            mark: 0,
        }
    }

    /// The region (root label) of a cell, `None` for a wall.
    pub(super) fn region_of(&self, index: usize) -> Option<u32> {
        let label = self.labels[index];
        (label != NO_REGION).then(|| self.root(label))
    }

    fn root(&self, mut label: u32) -> u32 {
        while self.parent[label as usize] != label {
            label = self.parent[label as usize];
        }
        label
    }

    /// A label for a region of its own.
    fn new_label(&mut self) -> u32 {
        let label = self.parent.len() as u32;
        self.parent.push(label);
        self.size.push(0);
        self.count += 1;
        label
    }

    /// Joins two regions; returns the root of the whole.
    fn union(&mut self, a: u32, b: u32) -> u32 {
        let (a, b) = (self.root(a), self.root(b));
        if a == b {
            return a;
        }
        let (big, small) = if self.size[a as usize] >= self.size[b as usize] {
            (a, b)
        } else {
            (b, a)
        };
        self.parent[small as usize] = big;
        self.size[big as usize] += self.size[small as usize];
        self.count -= 1;
        big
    }

    /// A cell became ground: it joins the regions beside it (merging them)
    /// or starts its own.
    pub(super) fn ground_added(&mut self, w: usize, h: usize, index: usize) {
        let mut joined: Option<u32> = None;
        for next in neighbours4(index, w, h).into_iter().flatten() {
            if let Some(region) = self.region_of(next) {
                joined = Some(match joined {
                    Some(root) => self.union(root, region),
                    None => region,
                });
            }
        }
        let label = joined.unwrap_or_else(|| self.new_label());
        self.labels[index] = label;
        self.size[label as usize] += 1;
    }

    /// A cell became a wall. Its ground neighbours still reach each other
    /// round it if they are linked by the ring of eight cells around it;
    /// otherwise one breadth-first search per group of linked neighbours
    /// runs in lockstep until all but one have met or run out: each that
    /// runs out without meeting the others is a region of its own and is
    /// labelled anew. Returns `false` when that search grows past
    /// [`SPLIT_CHECK_LIMIT`] cells (the caller then drops the labels).
    pub(super) fn wall_added(&mut self, costs: &[u8], w: usize, h: usize, index: usize) -> bool {
        let old = self.labels[index];
        self.labels[index] = NO_REGION;
        let root = self.root(old);
        self.size[root as usize] = self.size[root as usize].saturating_sub(1);
        let walkable = |i: usize| costs[i] != BLOCKED;
        let (x, y) = ((index % w) as i64, (index / w) as i64);
        let at = |dx: i64, dy: i64| -> Option<usize> {
            let (nx, ny) = (x + dx, y + dy);
            ((0..w as i64).contains(&nx) && (0..h as i64).contains(&ny))
                .then(|| ny as usize * w + nx as usize)
                .filter(|&i| walkable(i))
        };
        // The ring, counter-clockwise from east; even places are the four
        // orthogonal neighbours.
        const RING: [(i64, i64); 8] = [
            (1, 0),
            (1, 1),
            (0, 1),
            (-1, 1),
            (-1, 0),
            (-1, -1),
            (0, -1),
            (1, -1),
        ];
        let ring: [Option<usize>; 8] = RING.map(|(dx, dy)| at(dx, dy));
        let orthogonal = [ring[0], ring[2], ring[4], ring[6]];
        let open_sides = orthogonal.iter().flatten().count();
        if open_sides == 0 {
            // The cell was a region of its own.
            self.count -= 1;
            return true;
        }
        // Groups of orthogonal neighbours linked along the ring: cells next
        // to each other on the ring touch, so a run of ground links the
        // neighbours in it. Going round from a wall, each run holding an
        // orthogonal neighbour gives one seed.
        let Some(start) = (0..8).find(|&i| ring[i].is_none()) else {
            return true;
        };
        let mut seeds: Vec<usize> = Vec::new();
        let mut seeded = false;
        for step in 1..=8 {
            let place = (start + step) % 8;
            match ring[place] {
                None => seeded = false,
                Some(cell) if place % 2 == 0 && !seeded => {
                    seeds.push(cell);
                    seeded = true;
                }
                Some(_) => {}
            }
        }
        if seeds.len() <= 1 {
            return true;
        }
        self.split_search(costs, w, h, &seeds, root)
    }

    /// The lockstep searches of [`Regions::wall_added`].
    fn split_search(
        &mut self,
        costs: &[u8],
        w: usize,
        h: usize,
        seeds: &[usize],
        root: u32,
    ) -> bool {
        if self.marks.is_empty() {
            self.marks = vec![0; costs.len()];
        }
        let k = seeds.len();
        if self.mark > u32::MAX - 8 {
            self.marks.fill(0);
            self.mark = 0;
        }
        let base = self.mark + 1;
        self.mark += k as u32;
        // Which search each one has merged into (a tiny union-find).
        let mut joined: Vec<usize> = (0..k).collect();
        fn find(joined: &[usize], mut i: usize) -> usize {
            while joined[i] != i {
                i = joined[i];
            }
            i
        }
        let mut queues: Vec<std::collections::VecDeque<usize>> = seeds
            .iter()
            .map(|&s| std::collections::VecDeque::from([s]))
            .collect();
        let mut visited: Vec<Vec<usize>> = seeds.iter().map(|&s| vec![s]).collect();
        for (i, &seed) in seeds.iter().enumerate() {
            self.marks[seed] = base + i as u32;
        }
        let mut total = k;
        let mut groups = k;
        let mut done = vec![false; k];
        loop {
            if groups == 1 {
                return true;
            }
            // A group whose searches have all run out is a region apart.
            for (group, finished) in done.iter_mut().enumerate() {
                if find(&joined, group) != group || *finished {
                    continue;
                }
                let members: Vec<usize> = (0..k).filter(|&i| find(&joined, i) == group).collect();
                if members.iter().all(|&i| queues[i].is_empty()) {
                    let label = self.new_label();
                    let mut cells = 0;
                    for &i in &members {
                        for &cell in &visited[i] {
                            self.labels[cell] = label;
                            cells += 1;
                        }
                    }
                    self.size[label as usize] = cells;
                    self.size[root as usize] = self.size[root as usize].saturating_sub(cells);
                    *finished = true;
                    groups -= 1;
                    if groups == 1 {
                        return true;
                    }
                }
            }
            for i in 0..k {
                let Some(cell) = queues[i].pop_front() else {
                    continue;
                };
                for next in neighbours4(cell, w, h).into_iter().flatten() {
                    if costs[next] == BLOCKED {
                        continue;
                    }
                    let mark = self.marks[next];
                    if mark >= base && mark < base + k as u32 {
                        let other = (mark - base) as usize;
                        let (a, b) = (find(&joined, i), find(&joined, other));
                        if a != b {
                            joined[a.max(b)] = a.min(b);
                            groups -= 1;
                        }
                        continue;
                    }
                    self.marks[next] = base + i as u32;
                    queues[i].push_back(next);
                    visited[i].push(next);
                    total += 1;
                }
                if total > SPLIT_CHECK_LIMIT {
                    return false;
                }
            }
        }
    }
}

/// The in-grid orthogonal neighbours of a cell index.
fn neighbours4(index: usize, w: usize, h: usize) -> [Option<usize>; 4] {
    let (x, y) = (index % w, index / w);
    [
        (x + 1 < w).then(|| index + 1),
        (x > 0).then(|| index - 1),
        (y + 1 < h).then(|| index + w),
        (y > 0).then(|| index - w),
    ]
}
