//! Building a cluster: the pieces its cells form, the entrances on its
//! borders and the table of costs between them.

use super::graph::CoarseGraph;
use super::local::{Area, Local};
use super::{COARSE_SHIFT, IndexMap, LONG_RUN, NONE, SPACING};
use crate::core::size_class::SizeClass;

/// The offsets along a border of `len` cells where entrances go, given
/// which cells can be crossed and which pieces of the two clusters each
/// crossing joins (`piece`: its cells' labels on the lower and the higher
/// side). A run of crossings gets one entrance in its middle, a long run
/// one at each end too; one is left out where an entrance joining the same
/// pieces lies less than [`SPACING`] cells away. The first entrance
/// joining two pieces is never left out, so every way across the border
/// can still be taken (walking inside each cluster to an entrance that
/// joins the same pieces).
pub(super) fn entrances(
    len: u32,
    crossing: impl Fn(u32) -> bool,
    piece: impl Fn(u32) -> (u16, u16),
    out: &mut Vec<u32>,
) {
    let mut placed: Vec<(u32, (u16, u16))> = Vec::new();
    let mut i = 0;
    while i < len {
        if !crossing(i) {
            i += 1;
            continue;
        }
        let start = i;
        while i < len && crossing(i) {
            i += 1;
        }
        let end = i - 1;
        let run = end - start + 1;
        let middle = start + run / 2;
        let candidates: &[u32] = if run >= LONG_RUN {
            &[start, middle, end]
        } else {
            &[middle]
        };
        for &at in candidates {
            let joins = piece(at);
            if placed
                .iter()
                .any(|&(other, pieces)| pieces == joins && other.abs_diff(at) < SPACING)
            {
                continue;
            }
            placed.push((at, joins));
            out.push(at);
        }
    }
}

/// The pieces of the clusters a repair has labelled: each cluster's are
/// read when it is built and when each of its four neighbours is, so a
/// full build labels every cluster once, not five times. Bounded to a few
/// rows of clusters.
#[derive(Default)]
pub(super) struct Pieces(IndexMap<Vec<u16>>);

impl Pieces {
    /// Labels `cluster` unless it is held.
    pub(super) fn fill(&mut self, graph: &CoarseGraph, class: &SizeClass<'_>, cluster: u32) {
        if self.0.len() > 4 * graph.columns as usize + 8 {
            self.0.clear();
        }
        self.0
            .entry(cluster)
            .or_insert_with(|| pieces(class, graph.bounds(cluster)));
    }

    /// The labels of a cluster [`fill`](Self::fill) was given.
    pub(super) fn of(&self, cluster: u32) -> &[u16] {
        self.0.get(&cluster).map_or(&[], Vec::as_slice)
    }
}

/// Labels the pieces of the area `(x0, y0, w, h)`: walkable cells joined
/// inside it share a label (4-connected, which under the corner rule is
/// what 8-neighbour moves join too); walls get `u16::MAX`.
pub(super) fn pieces(class: &SizeClass<'_>, (x0, y0, w, h): (u32, u32, u32, u32)) -> Vec<u16> {
    let costs = class.costs();
    let width = class.width();
    let walkable = |i: u32| costs[((y0 + i / w) * width + x0 + i % w) as usize] != 0;
    let mut labels = vec![u16::MAX; (w * h) as usize];
    let mut stack = Vec::new();
    let mut next = 0;
    for seed in 0..w * h {
        if labels[seed as usize] != u16::MAX || !walkable(seed) {
            continue;
        }
        labels[seed as usize] = next;
        stack.push(seed);
        while let Some(i) = stack.pop() {
            let (x, y) = (i % w, i / w);
            let around = [
                (x > 0).then(|| i - 1),
                (x + 1 < w).then(|| i + 1),
                (y > 0).then(|| i - w),
                (y + 1 < h).then(|| i + w),
            ];
            for j in around.into_iter().flatten() {
                if labels[j as usize] == u16::MAX && walkable(j) {
                    labels[j as usize] = next;
                    stack.push(j);
                }
            }
        }
        next += 1;
    }
    labels
}

/// Builds cluster `cluster` of `graph` on `class`: its nodes and the table
/// of costs between them. Returns the table and the cells expanded.
pub(super) fn build_cluster(
    graph: &CoarseGraph,
    class: &SizeClass<'_>,
    cluster: u32,
    local: &mut Local,
    labels: &mut Pieces,
) -> (Box<[u16]>, u64) {
    let bounds = graph.bounds(cluster);
    let (_, _, w, h) = bounds;
    let (cx, cy) = (cluster % graph.columns, cluster / graph.columns);
    // The four borders: left, right (across x), bottom, top (across y),
    // each with the neighbour across it, if there is one.
    let borders =
        [(true, true), (true, false), (false, true), (false, false)].map(|(across_x, low)| {
            let (nx, ny) = match (across_x, low) {
                (true, true) => (cx.checked_sub(1), Some(cy)),
                (true, false) => (Some(cx + 1), Some(cy)),
                (false, true) => (Some(cx), cy.checked_sub(1)),
                (false, false) => (Some(cx), Some(cy + 1)),
            };
            let neighbour = nx
                .zip(ny)
                .filter(|&(nx, ny)| nx < graph.columns && ny < graph.rows)
                .map(|(nx, ny)| ny * graph.columns + nx);
            (across_x, low, neighbour)
        });
    labels.fill(graph, class, cluster);
    for &(.., neighbour) in &borders {
        if let Some(neighbour) = neighbour {
            labels.fill(graph, class, neighbour);
        }
    }
    let own = labels.of(cluster);
    let mut nodes: Vec<u32> = Vec::new();
    let mut offsets = Vec::new();
    // On each border, the line of cells inside and the neighbour's facing
    // line. A cell's labels are u16::MAX on walls, so both labels say
    // whether it can be crossed.
    for (across_x, low, neighbour) in borders {
        let Some(neighbour) = neighbour else {
            continue;
        };
        let other = graph.bounds(neighbour);
        let theirs = labels.of(neighbour);
        let (ow, oh) = (other.2, other.3);
        // Index inside a cluster of width `cw` of cell `i` along the border
        // on line `line` (a column across x, a row across y).
        let at = |cw: u32, line: u32, i: u32| {
            if across_x {
                i * cw + line
            } else {
                line * cw + i
            }
        };
        let (inside, outside, len) = match (across_x, low) {
            (true, true) => (0, ow - 1, h),
            (true, false) => (w - 1, 0, h),
            (false, true) => (0, oh - 1, w),
            (false, false) => (h - 1, 0, w),
        };
        let labels = |i: u32| {
            let (a, b) = (
                own[at(w, inside, i) as usize],
                theirs[at(ow, outside, i) as usize],
            );
            if low { (b, a) } else { (a, b) }
        };
        offsets.clear();
        entrances(
            len,
            |i| {
                let (a, b) = labels(i);
                a != u16::MAX && b != u16::MAX
            },
            labels,
            &mut offsets,
        );
        nodes.extend(offsets.iter().map(|&i| at(w, inside, i)));
    }
    nodes.sort_unstable();
    nodes.dedup();
    let n = nodes.len();
    let mut table: Vec<u16> = Vec::with_capacity(1 + n + n * n);
    table.push(n as u16);
    table.extend(nodes.iter().map(|&i| i as u16));
    let area = Area::new(class, bounds);
    let mut work = 0;
    for &from in &nodes {
        local.begin(&area, &[(area.padded(from), 0)], None, true);
        work += local.run(&area, u64::MAX);
        table.extend(nodes.iter().map(|&to| {
            local.cost(area.padded(to)).map_or(NONE, |g| {
                let rounded = (g + (1 << (COARSE_SHIFT - 1))) >> COARSE_SHIFT;
                rounded.min(NONE as u64 - 1) as u16
            })
        }));
    }
    (table.into_boxed_slice(), work)
}
