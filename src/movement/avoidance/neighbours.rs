//! Neighbours by position: a uniform grid of buckets over the movers,
//! rebuilt each frame by a counting sort, so finding a unit's neighbours
//! costs in proportion to the units near it and a frame's rebuild in
//! proportion to the number of units; and each awake unit's list of
//! candidate neighbours ([`NeighbourLists`], the Verlet lists of
//! molecular dynamics), kept across frames while no unit has moved more
//! than half the skin, which gives exactly what the grid would.

use bevy::math::Vec2;

use crate::movement::parallel::Team;

/// Points a chunk of the grid's rebuild takes on a team's thread.
const POINT_CHUNK: usize = 256;

/// Buckets at most this many times the number of points (plus a constant):
/// a few units far apart widen the buckets instead of making the grid huge.
const BUCKETS_PER_POINT: usize = 4;

/// Points in square buckets, each bucket's points contiguous.
#[derive(Default)]
pub(crate) struct SpatialGrid {
    width: f32,
    /// The lowest bucket coordinates.
    min: (i64, i64),
    /// Buckets along x and y.
    dims: (i64, i64),
    /// Where each bucket's points start in `items` (one more entry at the
    /// end).
    starts: Vec<u32>,
    /// Points and their indices, bucket by bucket, in index order within
    /// a bucket (the positions beside the indices, for the cache's sake).
    items: Vec<(Vec2, u32)>,
    /// Each point's bucket, for the rebuild.
    keys: Vec<u32>,
    /// Points in the buckets up to each bucket along both axes (a summed
    /// area table, one row and column more than the buckets): how many
    /// points any block of buckets holds, in constant time.
    totals: Vec<u32>,
}

/// `x` rounded down to a whole number (a cast and a compare: `floor` is a
/// call into libm on a baseline x86-64 target).
#[inline]
fn floor_to_int(x: f64) -> i64 {
    let whole = x as i64;
    if (whole as f64) > x { whole - 1 } else { whole }
}

/// The bucket coordinate of `v` along an axis, buckets `width` wide.
#[inline]
fn coordinate(v: f32, width: f32) -> i64 {
    floor_to_int(v as f64 / width as f64)
}

/// The index of bucket `(x, y)` in a grid of `dims` buckets from `min`.
#[inline]
fn bucket((x, y): (i64, i64), min: (i64, i64), dims: (i64, i64)) -> u32 {
    ((y - min.1) * dims.0 + (x - min.0)) as u32
}

impl SpatialGrid {
    /// Rebuilds the grid over `points` with buckets about `width` wide;
    /// points that are not finite (free seats) are left out.
    #[cfg(test)]
    pub(crate) fn rebuild(&mut self, points: &[Vec2], width: f32) {
        self.rebuild_on(points, width, &Team::alone());
    }

    /// Rebuilds the grid over `points` with buckets about `width` wide
    /// (points that are not finite, free seats, are left out), the points'
    /// bounds and buckets worked out chunk by chunk on `team`'s threads:
    /// the same grid on any.
    pub(crate) fn rebuild_on(&mut self, points: &[Vec2], width: f32, team: &Team) {
        self.items.clear();
        self.starts.clear();
        let mut width = if width.is_finite() && width > 1e-3 {
            width
        } else {
            1.0
        };
        let bounds = |(lo, hi, count): (Vec2, Vec2, usize), (l, h, c): (Vec2, Vec2, usize)| {
            (lo.min(l), hi.max(h), count + c)
        };
        let none = (Vec2::splat(f32::MAX), Vec2::splat(f32::MIN), 0);
        let parts = team.map_chunks(points, POINT_CHUNK, |part| {
            part.iter()
                .filter(|p| p.is_finite())
                .fold(none, |bound, &p| bounds(bound, (p, p, 1)))
        });
        let (lo, hi, count) = parts.into_iter().fold(none, bounds);
        if count == 0 {
            self.width = width;
            self.dims = (0, 0);
            self.keys.clear();
            return;
        }
        let limit = (BUCKETS_PER_POINT * count + 1024) as f64;
        loop {
            let span = |l: f32, h: f32| {
                (h as f64 / width as f64).floor() - (l as f64 / width as f64).floor() + 1.0
            };
            let (sx, sy) = (span(lo.x, hi.x), span(lo.y, hi.y));
            if sx * sy <= limit {
                break;
            }
            width *= ((sx * sy / limit).sqrt() as f32).max(1.5);
        }
        self.width = width;
        self.min = (self.coordinate(lo.x), self.coordinate(lo.y));
        self.dims = (
            self.coordinate(hi.x) - self.min.0 + 1,
            self.coordinate(hi.y) - self.min.1 + 1,
        );
        let buckets = (self.dims.0 * self.dims.1) as usize;
        self.starts.resize(buckets + 1, 0);
        // Each point's bucket, chunk by chunk (`u32::MAX`: left out).
        self.keys.resize(points.len(), u32::MAX);
        let (min, dims) = (self.min, self.dims);
        team.each_chunk_mut(&mut self.keys, POINT_CHUNK, |first, chunk| {
            for (key, p) in chunk.iter_mut().zip(&points[first..]) {
                *key = if p.is_finite() {
                    let cell = (coordinate(p.x, width), coordinate(p.y, width));
                    bucket(cell, min, dims)
                } else {
                    u32::MAX
                };
            }
        });
        for &key in &self.keys {
            if key != u32::MAX {
                self.starts[key as usize + 1] += 1;
            }
        }
        for i in 0..buckets {
            self.starts[i + 1] += self.starts[i];
        }
        self.items.resize(count, (Vec2::ZERO, 0));
        let mut fill = self.starts[..buckets].to_vec();
        for (i, &key) in self.keys.iter().enumerate() {
            if key == u32::MAX {
                continue;
            }
            self.items[fill[key as usize] as usize] = (points[i], i as u32);
            fill[key as usize] += 1;
        }
        let (w, h) = (self.dims.0 as usize, self.dims.1 as usize);
        self.totals.clear();
        self.totals.resize((w + 1) * (h + 1), 0);
        for y in 0..h {
            let mut row = 0;
            for x in 0..w {
                let bucket = y * w + x;
                row += self.starts[bucket + 1] - self.starts[bucket];
                self.totals[(y + 1) * (w + 1) + x + 1] = self.totals[y * (w + 1) + x + 1] + row;
            }
        }
    }

    /// The points in the square of buckets `ring` buckets each way round
    /// bucket `(cx, cy)` (clipped to the grid).
    fn square_count(&self, cx: i64, cy: i64, ring: i64) -> u32 {
        let w = self.dims.0 + 1;
        let clip = |v: i64, len: i64| v.clamp(0, len);
        let (x0, x1) = (
            clip(cx - ring - self.min.0, self.dims.0),
            clip(cx + ring + 1 - self.min.0, self.dims.0),
        );
        let (y0, y1) = (
            clip(cy - ring - self.min.1, self.dims.1),
            clip(cy + ring + 1 - self.min.1, self.dims.1),
        );
        let at = |x: i64, y: i64| self.totals[(y * w + x) as usize];
        at(x1, y1) + at(x0, y0) - at(x0, y1) - at(x1, y0)
    }

    fn coordinate(&self, v: f32) -> i64 {
        coordinate(v, self.width)
    }

    fn bucket(&self, x: i64, y: i64) -> u32 {
        bucket((x, y), self.min, self.dims)
    }

    /// The points' indices bucket by bucket: an order in which points near
    /// each other come near each other.
    pub(crate) fn in_bucket_order(&self) -> impl Iterator<Item = u32> + '_ {
        self.items.iter().map(|&(_, i)| i)
    }

    /// The `count` points nearest to `at` within `range`, and every point
    /// within `near` of it however many, but for point `skip` and those
    /// `accept` turns down. `found` gets `(distance, index)` pairs, sorted
    /// by distance then index.
    ///
    /// The smallest square of buckets round `at` that holds more than
    /// `count` points (the summed-area table tells, in constant time per
    /// square) bounds how far the `count`th nearest can be: its farthest
    /// corner. Only the buckets within that bound are read, row by row out
    /// from `at`'s row, each row one run of buckets (contiguous in
    /// `items`) clipped to the circle of the `count`th nearest found so far.
    /// Should `accept` turn down so many that fewer than `count` are found
    /// within the bound, the rows are read again out to `range`.
    #[inline] // called across modules in the crowd step's hot loops
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn nearest(
        &self,
        at: Vec2,
        range: f32,
        count: usize,
        near: f32,
        skip: u32,
        mut accept: impl FnMut(u32) -> bool,
        found: &mut Vec<(f32, u32)>,
    ) {
        found.clear();
        if self.dims.0 == 0 || count == 0 || range.is_nan() || range < 0.0 || !at.is_finite() {
            return;
        }
        let range_squared = range * range;
        let near = near.clamp(0.0, range);
        let near_squared = near * near;
        let (cx, cy) = (self.coordinate(at.x), self.coordinate(at.y));
        let most = self
            .last_ring(cx, cy)
            .min((range / self.width).ceil() as i64);
        let mut bound = range_squared;
        for ring in 0..=most {
            if self.square_count(cx, cy, ring) as usize > count {
                let (low, high) = (
                    Vec2::new((cx - ring) as f32, (cy - ring) as f32) * self.width,
                    Vec2::new((cx + ring + 1) as f32, (cy + ring + 1) as f32) * self.width,
                );
                let corner = (at - low).abs().max((high - at).abs());
                bound = bound.min(corner.length_squared().max(near_squared));
                break;
            }
        }
        self.scan(at, bound, count, near_squared, skip, &mut accept, found);
        if found.len() < count && bound < range_squared {
            found.clear();
            self.scan(
                at,
                range_squared,
                count,
                near_squared,
                skip,
                &mut accept,
                found,
            );
        }
        for pair in found.iter_mut() {
            pair.0 = pair.0.sqrt();
        }
    }

    /// Every point within `range` of `at` but `skip`, in no particular
    /// order, into `out` (cleared first).
    pub(crate) fn within(&self, at: Vec2, range: f32, skip: u32, out: &mut Vec<u32>) {
        out.clear();
        if self.dims.0 == 0 || range < 0.0 || !range.is_finite() || !at.is_finite() {
            return;
        }
        let limit = range * range;
        let (x_low, x_high) = (self.min.0, self.min.0 + self.dims.0 - 1);
        let (y_low, y_high) = (self.min.1, self.min.1 + self.dims.1 - 1);
        let y0 = self.coordinate(at.y - range).max(y_low);
        let y1 = self.coordinate(at.y + range).min(y_high);
        let x0 = self.coordinate(at.x - range).max(x_low);
        let x1 = self.coordinate(at.x + range).min(x_high);
        for y in y0..=y1 {
            if x0 > x1 {
                break;
            }
            let (from, to) = (
                self.starts[self.bucket(x0, y) as usize] as usize,
                self.starts[self.bucket(x1, y) as usize + 1] as usize,
            );
            out.extend(
                self.items[from..to]
                    .iter()
                    .filter(|&&(point, i)| i != skip && point.distance_squared(at) <= limit)
                    .map(|&(_, i)| i),
            );
        }
    }

    /// The ring of buckets beyond which no bucket lies, seen from bucket
    /// `(cx, cy)`.
    fn last_ring(&self, cx: i64, cy: i64) -> i64 {
        let (x1, y1) = (self.min.0 + self.dims.0 - 1, self.min.1 + self.dims.1 - 1);
        [cx - self.min.0, x1 - cx, cy - self.min.1, y1 - cy]
            .into_iter()
            .max()
            .unwrap_or(0)
            .max(0)
    }

    /// [`nearest`](Self::nearest) among the points within `limit` (squared
    /// distance) of `at`, distances left squared.
    #[allow(clippy::too_many_arguments)]
    fn scan(
        &self,
        at: Vec2,
        mut limit: f32,
        count: usize,
        near_squared: f32,
        skip: u32,
        accept: &mut impl FnMut(u32) -> bool,
        found: &mut Vec<(f32, u32)>,
    ) {
        let cy = self.coordinate(at.y);
        let (x_low, x_high) = (self.min.0, self.min.0 + self.dims.0 - 1);
        let (y_low, y_high) = (self.min.1, self.min.1 + self.dims.1 - 1);
        // A little slack on the rows' and runs' edges: a point read in
        // vain is turned down by its distance, a point missed is wrong.
        let slack = 1e-4 * self.width;
        let mut row = |y: i64, across: f32, limit: &mut f32| {
            let half = (*limit - across * across).max(0.0).sqrt() + slack;
            let x0 = self.coordinate(at.x - half).max(x_low);
            let x1 = self.coordinate(at.x + half).min(x_high);
            if x0 > x1 {
                return;
            }
            let (from, to) = (
                self.starts[self.bucket(x0, y) as usize] as usize,
                self.starts[self.bucket(x1, y) as usize + 1] as usize,
            );
            for &(point, i) in &self.items[from..to] {
                let squared = point.distance_squared(at);
                if squared > *limit || i == skip {
                    continue;
                }
                if let Some(bound) = offer(found, (squared, i), (count, near_squared), accept) {
                    *limit = limit.min(bound);
                }
            }
        };
        // `at`'s row, then the rows above and below it, nearest first,
        // each side until its rows lie beyond the limit (or the grid).
        if (y_low..=y_high).contains(&cy) {
            row(cy, 0.0, &mut limit);
        }
        let (mut up, mut down) = ((cy + 1).max(y_low), (cy - 1).min(y_high));
        loop {
            let mut read = false;
            if up <= y_high {
                let across = (up as f32 * self.width - at.y - slack).max(0.0);
                if across * across <= limit {
                    row(up, across, &mut limit);
                    up += 1;
                    read = true;
                } else {
                    up = y_high + 1;
                }
            }
            if down >= y_low {
                let across = (at.y - (down + 1) as f32 * self.width - slack).max(0.0);
                if across * across <= limit {
                    row(down, across, &mut limit);
                    down -= 1;
                    read = true;
                } else {
                    down = y_low - 1;
                }
            }
            if !read {
                break;
            }
        }
    }
}

/// Each mover's candidate neighbours, kept across frames (the Verlet list
/// of molecular dynamics): every point that was, when the lists were
/// built, within a bound of the mover that cannot let a true neighbour
/// slip out while no point has moved more than half the `skin`. A frame
/// then picks each mover's nearest from its few candidates instead of
/// searching the grid. [`NeighbourLists::nearest`] gives exactly what
/// [`SpatialGrid::nearest`] would, so keeping the lists changes no result.
#[derive(Default)]
pub(crate) struct NeighbourLists {
    /// Each point's list.
    lists: Vec<List>,
    /// Where each point stood when the lists were built.
    anchors: Vec<Vec2>,
    skin: f32,
    /// What the lists were built for; another key rebuilds them.
    key: u64,
    built: bool,
}

/// One point's candidate neighbours.
#[derive(Default)]
pub(crate) struct List {
    /// The candidates and how far each was when the list was built (the
    /// distance's bits above the index), nearest first: one further than
    /// the skin beyond the nearest found so far cannot be nearer now, so a
    /// query stops there.
    items: Vec<u64>,
    /// Whether it was built (a point not built for asks the grid).
    listed: bool,
    /// Scratch for the build.
    scratch: Vec<u32>,
    /// How far out the last build found its `count`th nearest (and a skin
    /// more): where the next build starts looking.
    guess: f32,
    /// The range and near bound it was built for: a query beyond either
    /// asks the grid.
    bounds: (f32, f32),
}

/// What one query asks, as [`SpatialGrid::nearest`] takes it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reach {
    pub(crate) range: f32,
    pub(crate) count: usize,
    pub(crate) near: f32,
}

impl NeighbourLists {
    /// Whether the lists hold for `points` (`NaN` for a point not
    /// present) under `key`: built for the same key and the same points,
    /// and no point has moved more than half the skin since.
    pub(crate) fn hold(&self, points: &[Vec2], key: u64) -> bool {
        let half = 0.5 * self.skin;
        let limit = half * half;
        self.built
            && self.key == key
            && points.len() == self.anchors.len()
            && points.iter().zip(&self.anchors).all(|(p, a)| {
                // Both absent (NaN), or both present and close.
                p.is_nan() && a.is_nan() || p.distance_squared(*a) <= limit
            })
    }

    /// Starts a rebuild for `points` under `key` with `skin`, every list
    /// emptied: then [`List::build`] each over [`lists_mut`](Self::lists_mut).
    pub(crate) fn reset(&mut self, points: &[Vec2], key: u64, skin: f32) {
        self.anchors.clear();
        self.anchors.extend_from_slice(points);
        self.lists.resize_with(points.len(), List::default);
        for list in &mut self.lists {
            list.items.clear();
            list.listed = false;
        }
        self.skin = skin;
        self.key = key;
        self.built = true;
    }

    /// The lists, by point, and the skin they are built with.
    pub(crate) fn lists_mut(&mut self) -> (&mut [List], f32) {
        (&mut self.lists, self.skin)
    }

    /// The `count` points nearest to `at` within `range`, and every one
    /// within `near`, but for `skip` and those `accept` turns down, as
    /// [`SpatialGrid::nearest`] gives them, from `skip`'s list: `false`
    /// if it has none, or one built for a smaller range or near bound
    /// (ask the grid then).
    #[inline] // called across modules in the crowd step's hot loops
    pub(crate) fn nearest(
        &self,
        points: &[Vec2],
        at: Vec2,
        query: Reach,
        skip: u32,
        mut accept: impl FnMut(u32) -> bool,
        found: &mut Vec<(f32, u32)>,
    ) -> bool {
        let Some(list) = self.lists.get(skip as usize).filter(|list| list.listed) else {
            return false;
        };
        let Reach { range, count, near } = query;
        let (built_range, built_near) = list.bounds;
        if !(range <= built_range && near.clamp(0.0, range) <= built_near) {
            return false;
        }
        found.clear();
        if count == 0 || !at.is_finite() {
            return true;
        }
        let range_squared = range * range;
        let near = near.clamp(0.0, range);
        let near_squared = near * near;
        let mut limit = range;
        for &key in &list.items {
            let (then, j) = (distance_of(key), key as u32);
            // Nobody moved more than half the skin: the pair is at least
            // `then - skin` apart now, and so is every later candidate.
            if then - self.skin > limit {
                break;
            }
            let squared = points[j as usize].distance_squared(at);
            if squared > range_squared {
                continue;
            }
            if let Some(bound) = offer(found, (squared, j), (count, near_squared), &mut accept) {
                limit = limit.min(bound.sqrt());
            }
        }
        for pair in found.iter_mut() {
            pair.0 = pair.0.sqrt();
        }
        true
    }
}

impl List {
    /// Builds the list of point `skip` at `at`, for queries up to
    /// `query`'s range and near bound: every point of `grid` within the
    /// `count`th nearest's distance (at most `range`, at least `near`)
    /// plus twice the skin. While no point moves more than half the skin,
    /// a point outside it stays further than the `count` nearest, and
    /// every point within `near` is on it.
    #[inline] // called across modules in the crowd step's hot loops
    pub(crate) fn build(
        &mut self,
        (grid, points): (&SpatialGrid, &[Vec2]),
        at: Vec2,
        query: Reach,
        (skin, skip): (f32, u32),
    ) {
        self.items.clear();
        self.listed = false;
        let Reach { range, count, near } = query;
        if !(at.is_finite() && range.is_finite() && range >= 0.0 && near.is_finite()) {
            return;
        }
        let near = near.clamp(0.0, range);
        // The `count`th nearest's distance is not known before the list
        // is: a guess (the last one's), doubled until the points within it
        // number `count` (or it reaches `range`).
        let mut guess = self.guess.clamp(near.max(1e-3), range.max(1e-3));
        loop {
            let reach = guess.min(range) + 2.0 * skin;
            grid.within(at, reach, skip, &mut self.scratch);
            // Sorted as whole numbers: a distance's bits (never negative)
            // above the index.
            self.items.clear();
            self.items.extend(self.scratch.iter().map(|&j| {
                let distance = at.distance(points[j as usize]);
                (u64::from(distance.to_bits()) << 32) | u64::from(j)
            }));
            self.items.sort_unstable();
            let inside = self.items.partition_point(|&key| distance_of(key) <= guess);
            if inside >= count || guess >= range {
                break;
            }
            guess = (2.0 * guess).min(range);
        }
        let kth = match count {
            0 => near,
            _ => self
                .items
                .get(count - 1)
                .map_or(range, |&key| distance_of(key)),
        };
        self.guess = kth.max(near) + skin;
        self.listed = true;
        self.bounds = (range, near);
    }
}

/// The distance a list's item keeps (its high half).
#[inline]
fn distance_of(key: u64) -> f32 {
    f32::from_bits((key >> 32) as u32)
}

/// Whether `a` comes before `b`: nearer, or as near and lower.
#[inline]
fn before(a: (f32, u32), b: (f32, u32)) -> bool {
    a.0 < b.0 || a.0 == b.0 && a.1 < b.1
}

/// Offers `item` (a squared distance and an index) to `found`, the
/// `count` nearest so far and every one within `near_squared`: put in if
/// it comes before the `count`th or lies that near, and `accept` takes
/// it. Once `found` holds `count`, the squared distance beyond which no
/// later item can be put in.
#[inline]
fn offer(
    found: &mut Vec<(f32, u32)>,
    item: (f32, u32),
    (count, near_squared): (usize, f32),
    accept: &mut impl FnMut(u32) -> bool,
) -> Option<f32> {
    let full = found.len() >= count;
    if full && item.0 > near_squared && !before(item, found[count - 1]) || !accept(item.1) {
        return None;
    }
    insert_sorted(found, item, count, near_squared);
    (found.len() >= count).then(|| found[count - 1].0.max(near_squared))
}

/// Puts `item` in `found` (sorted by [`before`]), then drops from the end
/// what is beyond the `count`th and further than `near_squared`.
#[inline]
fn insert_sorted(found: &mut Vec<(f32, u32)>, item: (f32, u32), count: usize, near_squared: f32) {
    // Insertion by hand: the list is short, and `insert` would call
    // memmove.
    found.push(item);
    let mut k = found.len() - 1;
    while k > 0 && before(item, found[k - 1]) {
        found[k] = found[k - 1];
        k -= 1;
    }
    found[k] = item;
    while found.len() > count && found[found.len() - 1].0 > near_squared {
        found.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The nearest points by brute force, as `nearest` orders them.
    fn brute(
        points: &[Vec2],
        at: Vec2,
        (range, count, near): (f32, usize, f32),
        wanted: impl Fn(u32) -> bool,
    ) -> Vec<(f32, u32)> {
        let mut all: Vec<(f32, u32)> = points
            .iter()
            .enumerate()
            .map(|(i, p)| (p.distance(at), i as u32))
            .filter(|f| f.0 <= range && wanted(f.1))
            .collect();
        all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let near = all.iter().filter(|f| f.0 <= near).count();
        all.truncate(count.max(near));
        all
    }

    /// Numbers in [0, 1) from a linear congruential generator seeded
    /// with `seed`.
    fn uniform(mut seed: u64) -> impl FnMut() -> f32 {
        move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 40) as f32 / (1u64 << 24) as f32
        }
    }

    #[test]
    fn nearest_matches_brute_force() {
        let mut next = uniform(12345);
        for round in 0..80 {
            let n = 1 + round * 13;
            let spread = 5.0 + (round % 40) as f32 * 3.0;
            // Half the rounds on a lattice, where many points lie at the
            // same distance and some on one spot.
            let lattice = round >= 40;
            let points: Vec<Vec2> = (0..n)
                .map(|_| {
                    let p = Vec2::new(next() * spread - 2.0, next() * spread + 7.0);
                    if lattice { (p * 2.0).round() * 0.5 } else { p }
                })
                .collect();
            let mut grid = SpatialGrid::default();
            grid.rebuild(&points, 0.3 + 2.0 * next());
            let mut found = Vec::new();
            for query in 0..20 {
                let at = if lattice && query % 2 == 0 {
                    points[(next() * n as f32) as usize % n]
                } else {
                    Vec2::new(next() * spread, next() * spread + 5.0)
                };
                let limits = (next() * 8.0, 1 + (next() * 12.0) as usize, next() * 3.0);
                let skip = (next() * n as f32) as u32;
                // Some queries turn down most points (units on other maps).
                let picky = query % 3 == 0;
                let accepted = |i: u32| !picky || i.is_multiple_of(4);
                let wanted = |i: u32| i != skip && accepted(i);
                grid.nearest(at, limits.0, limits.1, limits.2, skip, accepted, &mut found);
                let expected = brute(&points, at, limits, wanted);
                assert_eq!(found.len(), expected.len(), "round {round} query {query}");
                for (got, want) in found.iter().zip(&expected) {
                    assert_eq!(got.1, want.1);
                    assert!((got.0 - want.0).abs() <= 1e-4 * want.0.max(1.0));
                }
            }
        }
    }

    /// Neighbour lists give what the grid gives, bit for bit, while the
    /// points drift (each less than half the skin between builds), in
    /// sparse crowds and dense ones; and they are rebuilt when a point
    /// drifts further.
    #[test]
    fn lists_give_what_the_grid_gives() {
        let mut next = uniform(0x0005_DEEC_E66D);
        for round in 0..12 {
            let n = 50 + round * 70;
            let spread = 6.0 + (round % 4) as f32 * 12.0;
            let skin = 0.3 + 0.2 * (round % 3) as f32;
            let mut points: Vec<Vec2> = (0..n)
                .map(|i| match i % 17 {
                    // Some free seats.
                    3 => Vec2::NAN,
                    _ => Vec2::new(next() * spread, next() * spread),
                })
                .collect();
            let reach = |i: usize| Reach {
                range: 1.0 + 0.5 * (i % 5) as f32,
                count: 1 + round % 7,
                near: 0.3 + 0.1 * (i % 3) as f32,
            };
            let mut grid = SpatialGrid::default();
            let mut lists = NeighbourLists::default();
            let (mut found, mut expected) = (Vec::new(), Vec::new());
            let mut builds = 0;
            for frame in 0..30 {
                grid.rebuild(&points, 1.1);
                if !lists.hold(&points, 7) {
                    builds += 1;
                    lists.reset(&points, 7, skin);
                    let (all, skin) = lists.lists_mut();
                    for (i, list) in all.iter_mut().enumerate() {
                        list.build((&grid, &points), points[i], reach(i), (skin, i as u32));
                    }
                }
                for (i, &at) in points.iter().enumerate().filter(|(_, p)| p.is_finite()) {
                    let Reach { range, count, near } = reach(i);
                    let skip = i as u32;
                    assert!(lists.nearest(&points, at, reach(i), skip, |_| true, &mut found));
                    grid.nearest(at, range, count, near, skip, |_| true, &mut expected);
                    assert_eq!(found, expected, "round {round} frame {frame} point {i}");
                }
                // Everyone drifts a little, a few further.
                for p in points.iter_mut().filter(|p| p.is_finite()) {
                    let step = if next() < 0.05 { 0.4 } else { 0.1 } * skin;
                    *p += Vec2::new(next() - 0.5, next() - 0.5) * 2.0 * step;
                }
            }
            assert!((2..30).contains(&builds), "round {round}: {builds} builds");
        }
    }

    #[test]
    fn far_apart_points_do_not_make_a_huge_grid() {
        let points = [Vec2::ZERO, Vec2::splat(1.0e6), Vec2::new(3.0, 4.0)];
        let mut grid = SpatialGrid::default();
        grid.rebuild(&points, 1.0);
        assert!(grid.starts.len() <= BUCKETS_PER_POINT * points.len() + 1025);
        let mut found = Vec::new();
        grid.nearest(Vec2::ZERO, 10.0, 2, 0.0, u32::MAX, |_| true, &mut found);
        assert_eq!(found, vec![(0.0, 0), (5.0, 2)]);
    }
}
