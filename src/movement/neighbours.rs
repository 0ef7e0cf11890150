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

    /// The ring beyond which no bucket lies, seen from `at`.
    fn last_ring(&self, at: Vec2) -> i64 {
        let (cx, cy) = (self.coordinate(at.x), self.coordinate(at.y));
        let (x1, y1) = (self.min.0 + self.dims.0 - 1, self.min.1 + self.dims.1 - 1);
        [cx - self.min.0, x1 - cx, cy - self.min.1, y1 - cy]
            .into_iter()
            .max()
            .unwrap_or(0)
            .max(0)
    }

    /// The points in the buckets of the square ring `ring` buckets out from
    /// `at`'s bucket (ring 0: its own bucket).
    fn ring(&self, at: Vec2, ring: i64, mut visit: impl FnMut(Vec2, u32)) {
        let (cx, cy) = (self.coordinate(at.x), self.coordinate(at.y));
        let (x0, x1) = (
            (cx - ring).max(self.min.0),
            (cx + ring).min(self.min.0 + self.dims.0 - 1),
        );
        let (y0, y1) = (
            (cy - ring).max(self.min.1),
            (cy + ring).min(self.min.1 + self.dims.1 - 1),
        );
        let mut bucket_points = |x: i64, y: i64| {
            let bucket = self.bucket(x, y) as usize;
            let (from, to) = (self.starts[bucket], self.starts[bucket + 1]);
            for &(point, item) in &self.items[from as usize..to as usize] {
                visit(point, item);
            }
        };
        for y in y0..=y1 {
            if (y - cy).abs() == ring {
                for x in x0..=x1 {
                    bucket_points(x, y);
                }
            } else {
                // Inside rows only the ring's two ends belong to it.
                for x in [cx - ring, cx + ring] {
                    if (x0..=x1).contains(&x) {
                        bucket_points(x, y);
                    }
                }
            }
        }
    }

    /// The `count` points nearest to `at` within `range`, and every point
    /// within `near` of it however many, but for point `skip` and those
    /// `accept` turns down; ring by ring out from `at` until they are
    /// known. `found` gets `(distance, index)` pairs, sorted by distance
    /// then index.
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
        if self.dims.0 == 0 || count == 0 {
            return;
        }
        let range_squared = range * range;
        let near_squared = near.min(range).powi(2);
        let most = self.last_ring(at).min((range / self.width).ceil() as i64);
        let (cx, cy) = (self.coordinate(at.x), self.coordinate(at.y));
        let before = |a: (f32, u32), b: (f32, u32)| a.0 < b.0 || a.0 == b.0 && a.1 < b.1;
        let mut inside = 0;
        // Points further than this are not wanted: out of range, or not
        // near and further than the `count`th nearest so far.
        let mut limit = range_squared;
        for ring in 0..=most {
            let square = self.square_count(cx, cy, ring);
            if square > inside {
                self.ring(at, ring, |point, i| {
                    let squared = point.distance_squared(at);
                    if squared > limit || i == skip {
                        return;
                    }
                    let full = found.len() >= count;
                    if full && squared > near_squared && !before((squared, i), found[count - 1]) {
                        return;
                    }
                    if !accept(i) {
                        return;
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
                        limit = found[count - 1].0.max(near_squared);
                    }
                });
            }
            inside = square;
            // Every point outside the rings so far is further than the
            // nearest side of the square they cover.
            let (low, high) = (
                Vec2::new((cx - ring) as f32, (cy - ring) as f32) * self.width,
                Vec2::new((cx + ring + 1) as f32, (cy + ring + 1) as f32) * self.width,
            );
            let covered = (at - low).min(high - at).min_element().max(0.0).powi(2);
            if found.len() >= count && found[count - 1].0 <= covered && near_squared <= covered {
                break;
            }
        }
        for pair in found.iter_mut() {
            pair.0 = pair.0.sqrt();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The nearest points by brute force, as `nearest` orders them.
    fn brute(points: &[Vec2], at: Vec2, range: f32, count: usize, near: f32) -> Vec<(f32, u32)> {
        let mut all: Vec<(f32, u32)> = points
            .iter()
            .enumerate()
            .map(|(i, p)| (p.distance(at), i as u32))
            .filter(|f| f.0 <= range)
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
        for round in 0..50 {
            let n = 1 + round * 13;
            let spread = 5.0 + round as f32 * 3.0;
            let points: Vec<Vec2> = (0..n)
                .map(|_| Vec2::new(next() * spread - 2.0, next() * spread + 7.0))
                .collect();
            let mut grid = SpatialGrid::default();
            grid.rebuild(&points, 0.9 + next());
            let mut found = Vec::new();
            for _ in 0..20 {
                let at = Vec2::new(next() * spread, next() * spread + 5.0);
                let (range, count, near) =
                    (next() * 8.0, 1 + (next() * 12.0) as usize, next() * 3.0);
                grid.nearest(at, range, count, near, u32::MAX, |_| true, &mut found);
                let expected = brute(&points, at, range, count, near);
                assert_eq!(found.len(), expected.len());
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
