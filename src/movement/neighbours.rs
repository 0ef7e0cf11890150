//! Neighbours by position: a uniform grid of buckets over the movers,
//! rebuilt each frame by a counting sort, so finding a unit's neighbours
//! costs in proportion to the units near it and a frame's rebuild in
//! proportion to the number of units.

use bevy::math::Vec2;

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

impl SpatialGrid {
    /// Rebuilds the grid over `points` (finite) with buckets about `width`
    /// wide.
    pub(crate) fn rebuild(&mut self, points: &[Vec2], width: f32) {
        self.items.clear();
        self.starts.clear();
        self.keys.clear();
        let mut width = if width.is_finite() && width > 1e-3 {
            width
        } else {
            1.0
        };
        let (lo, hi) = points.iter().fold(
            (Vec2::splat(f32::MAX), Vec2::splat(f32::MIN)),
            |(lo, hi), p| (lo.min(*p), hi.max(*p)),
        );
        if points.is_empty() {
            self.width = width;
            self.dims = (0, 0);
            return;
        }
        let limit = (BUCKETS_PER_POINT * points.len() + 1024) as f64;
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
        for p in points {
            let key = self.bucket(self.coordinate(p.x), self.coordinate(p.y));
            self.keys.push(key);
            self.starts[key as usize + 1] += 1;
        }
        for i in 0..buckets {
            self.starts[i + 1] += self.starts[i];
        }
        self.items.resize(points.len(), (Vec2::ZERO, 0));
        let mut fill = self.starts[..buckets].to_vec();
        for (i, &key) in self.keys.iter().enumerate() {
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
        floor_to_int(v as f64 / self.width as f64)
    }

    fn bucket(&self, x: i64, y: i64) -> u32 {
        ((y - self.min.1) * self.dims.0 + (x - self.min.0)) as u32
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
        let before = |a: (f32, u32), b: (f32, u32)| a.0 < b.0 || a.0 == b.0 && a.1 < b.1;
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
                let full = found.len() >= count;
                if full && squared > near_squared && !before((squared, i), found[count - 1]) {
                    continue;
                }
                if !accept(i) {
                    continue;
                }
                // Insertion by hand: the list is short, and `insert`
                // would call memmove.
                found.push((squared, i));
                let mut k = found.len() - 1;
                while k > 0 && before((squared, i), found[k - 1]) {
                    found[k] = found[k - 1];
                    k -= 1;
                }
                found[k] = (squared, i);
                while found.len() > count && found[found.len() - 1].0 > near_squared {
                    found.pop();
                }
                if found.len() >= count {
                    *limit = limit.min(found[count - 1].0.max(near_squared));
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

    #[test]
    fn nearest_matches_brute_force() {
        let mut seed = 12345u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 40) as f32 / (1u64 << 24) as f32
        };
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
