//! A size class's data, apart from the grid that owns it: the cost of each
//! anchor for a unit of one size, its histogram, jump point bitmaps and
//! regions ([`Layer`]), and the clearance every size class is read from.
//! The grid holds the layers and keeps them up to date; a
//! [`SizeClass`](super::size_class::SizeClass) reads one.

use std::sync::OnceLock;

use super::regions::Regions;
use super::walk_bits::WalkBits;

/// The cost of a wall ([`NavGrid::BLOCKED`](super::grid::NavGrid::BLOCKED)).
const BLOCKED: u8 = 0;

/// The largest unit size (footprint side, in cells) a grid answers for;
/// clearance is counted up to it.
pub const MAX_UNIT_SIZE: u8 = 8;

/// One size class: a cost per anchor and what is derived from it.
#[derive(Clone, Debug)]
pub(super) struct Layer {
    /// Cost per anchor; 0 where the footprint does not fit.
    pub(super) costs: Vec<u8>,
    /// How many anchors have each cost.
    pub(super) histogram: [u32; 256],
    /// Walkable anchors as bitmaps for jump point search (`None` on grids
    /// too thin for them to pay).
    pub(super) walk_bits: Option<WalkBits>,
    /// Connected regions of the walkable anchors, labelled at the first
    /// query and then repaired edit by edit.
    pub(super) regions: OnceLock<Regions>,
}

impl Layer {
    /// Bytes of memory the layer holds (its regions once labelled).
    pub(super) fn memory_bytes(&self) -> usize {
        self.costs.capacity()
            + std::mem::size_of_val(&self.histogram)
            + self.walk_bits.as_ref().map_or(0, WalkBits::memory_bytes)
            + self.regions.get().map_or(0, Regions::memory_bytes)
    }

    pub(super) fn new(width: u32, height: u32, costs: Vec<u8>) -> Self {
        let mut histogram = [0u32; 256];
        for &cost in &costs {
            histogram[cost as usize] += 1;
        }
        Self {
            walk_bits: WalkBits::new(width, height, &costs),
            costs,
            histogram,
            regions: OnceLock::new(),
        }
    }

    /// Sets one anchor's cost and repairs what follows from it. Returns
    /// the old cost.
    pub(super) fn write(&mut self, width: u32, height: u32, index: usize, cost: u8) -> u8 {
        let old = self.costs[index];
        if old == cost {
            return old;
        }
        self.histogram[old as usize] -= 1;
        self.histogram[cost as usize] += 1;
        self.costs[index] = cost;
        // Only a change between wall and ground can change connectivity.
        if (old == BLOCKED) != (cost == BLOCKED) {
            if let Some(regions) = self.regions.get_mut() {
                let (w, h) = (width as usize, height as usize);
                let repaired = if cost == BLOCKED {
                    regions.wall_added(&self.costs, w, h, index)
                } else {
                    regions.ground_added(w, h, index);
                    true
                };
                // Labels retired by splits and merges stay in the forest;
                // a map edited for hours is labelled afresh once they
                // outnumber its cells.
                if !repaired || regions.parent.len() > 2 * self.costs.len() + 1024 {
                    self.regions = OnceLock::new();
                }
            }
            if let Some(bits) = &mut self.walk_bits {
                let w = width as usize;
                bits.set((index % w) as u32, (index / w) as u32, cost != BLOCKED);
            }
        }
        old
    }

    pub(super) fn regions(&self, width: u32, height: u32) -> &Regions {
        self.regions
            .get_or_init(|| Regions::label(&self.costs, width as usize, height as usize))
    }

    pub(super) fn min_walkable_cost(&self) -> u8 {
        (1..=255u8)
            .find(|&c| self.histogram[c as usize] > 0)
            .unwrap_or(1)
    }

    pub(super) fn max_walkable_cost(&self) -> u8 {
        (1..=255u8)
            .rev()
            .find(|&c| self.histogram[c as usize] > 0)
            .unwrap_or(1)
    }
}

/// Clearance of every cell from scratch: the side of the largest square of
/// walkable cells anchored there, at most [`MAX_UNIT_SIZE`].
pub(super) fn clearance_of(width: u32, height: u32, costs: &[u8]) -> Vec<u8> {
    // Row by row from the top, each from the row above it (already final)
    // and the cell after it: what `clearance_at` does, without its bounds
    // checks (a grid's load is mostly this and its walk bitmaps).
    let (w, h) = (width as usize, height as usize);
    let mut clearance = vec![0u8; costs.len()];
    let none = vec![0u8; w + 1];
    for y in (0..h).rev() {
        let (below, above) = clearance.split_at_mut((y + 1) * w);
        let row = &mut below[y * w..];
        // The row above, with the grid's edge (a zero) past its end.
        let above = if y + 1 < h { &above[..w] } else { &none[..w] };
        let cost_row = &costs[y * w..(y + 1) * w];
        let mut right = 0u8;
        let mut above_right = 0u8;
        for ((cell, &cost), &up) in row.iter_mut().zip(cost_row).zip(above).rev() {
            let value = if cost == BLOCKED {
                0
            } else {
                (1 + right.min(up).min(above_right)).min(MAX_UNIT_SIZE)
            };
            *cell = value;
            right = value;
            above_right = up;
        }
    }
    clearance
}

/// One cell's clearance from its three neighbours towards `+x`, `+y`
/// (already final): one more than the least of theirs.
#[inline]
fn clearance_at(width: u32, height: u32, costs: &[u8], clearance: &[u8], x: u32, y: u32) -> u8 {
    let w = width as usize;
    let index = y as usize * w + x as usize;
    if costs[index] == BLOCKED {
        return 0;
    }
    let at = |dx: u32, dy: u32| -> u8 {
        if x + dx >= width || y + dy >= height {
            0
        } else {
            clearance[index + dx as usize + dy as usize * w]
        }
    };
    (1 + at(1, 0).min(at(0, 1)).min(at(1, 1))).min(MAX_UNIT_SIZE)
}

/// Repairs clearance after cell `(x, y)` changed between wall and ground.
/// Only cells that can have it in their square change: the
/// `MAX_UNIT_SIZE × MAX_UNIT_SIZE` block ending at it, recomputed from its
/// far corner back.
pub(super) fn repair_clearance(
    width: u32,
    height: u32,
    costs: &[u8],
    clearance: &mut [u8],
    x: u32,
    y: u32,
) {
    let reach = MAX_UNIT_SIZE as u32 - 1;
    for ay in (y.saturating_sub(reach)..=y).rev() {
        for ax in (x.saturating_sub(reach)..=x).rev() {
            let value = clearance_at(width, height, costs, clearance, ax, ay);
            clearance[(ay * width + ax) as usize] = value;
        }
    }
}

/// The cost of anchor `(x, y)` for a unit of `size`: the dearest cell of
/// its footprint, or a wall where it does not fit.
#[inline]
pub(super) fn footprint_cost(
    width: u32,
    costs: &[u8],
    clearance: &[u8],
    size: u8,
    x: u32,
    y: u32,
) -> u8 {
    let w = width as usize;
    let index = y as usize * w + x as usize;
    if clearance[index] < size {
        return BLOCKED;
    }
    let mut dearest = 0;
    for row in 0..size as usize {
        let line = &costs[index + row * w..index + row * w + size as usize];
        dearest = line.iter().fold(dearest, |a, &b| a.max(b));
    }
    dearest
}

/// The layer of a size class, built from the grid's costs and clearance.
pub(super) fn build_layer(
    width: u32,
    height: u32,
    costs: &[u8],
    clearance: &[u8],
    size: u8,
) -> Layer {
    let mut anchors = vec![BLOCKED; costs.len()];
    for y in 0..height {
        for x in 0..width {
            anchors[(y * width + x) as usize] = footprint_cost(width, costs, clearance, size, x, y);
        }
    }
    Layer::new(width, height, anchors)
}

/// The anchors whose footprint, for a unit of `size`, covers cell `(x, y)`.
pub(crate) fn anchors_over(x: u32, y: u32, size: u8) -> impl Iterator<Item = (u32, u32)> {
    let reach = size.max(1) as u32 - 1;
    (y.saturating_sub(reach)..=y)
        .flat_map(move |ay| (x.saturating_sub(reach)..=x).map(move |ax| (ax, ay)))
}
