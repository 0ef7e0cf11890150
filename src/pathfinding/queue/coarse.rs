//! The coarse graphs quick routes run on ([`CoarseGraph`]), one per map and
//! unit size: built on a worker thread from a copy of the grid the first
//! time a quick route is wanted there, taken up on a fixed frame, and then
//! repaired on the budget where edits made clusters dirty.

use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy::tasks::{AsyncComputeTaskPool, Task, TaskPool, block_on};

use crate::core::{CoarseGraph, NavGrid};
use crate::maps::Maps;

/// Cells of a grid a build is given a frame for: it is taken up
/// `cells / BAKE_CELLS_PER_FRAME` frames after it started, on that frame
/// whatever the machine, so routes start in the same frames everywhere (a
/// map under 128×128 cells is built at once, in well under a
/// millisecond). A 1024×1024 map gets 64 frames
/// (about a second) for a build that takes a core about 0.4 s; a machine
/// too slow for that waits for it on that frame.
const BAKE_CELLS_PER_FRAME: usize = 1 << 14;

/// A map's coarse graph for one unit size.
enum Coarse {
    /// Being built on a worker thread from a copy of the grid; taken up on
    /// frame `due`.
    Building {
        task: Task<CoarseGraph>,
        due: u64,
    },
    Ready(CoarseGraph),
}

/// The coarse graphs of the maps quick routes run on, per (map, unit
/// size), and the repair work a frame's budget could not pay yet.
#[derive(Default)]
pub(super) struct Graphs {
    graphs: HashMap<(Entity, u8), Coarse>,
    /// Expansions of repairs done beyond a frame's budget, paid first in
    /// the next frames (no repair runs while any is owed).
    debt: u64,
}

impl Graphs {
    /// Brings the graphs of `keys` forward on frame `frame`: starts the build
    /// of a graph not yet made (or made for a grid of another size), takes
    /// up a build that is due, and repairs what edits made dirty on at most
    /// `most` expansions (after paying any debt). Graphs of maps gone are
    /// dropped. Returns the expansions charged, at most `most`.
    pub(super) fn prepare(
        &mut self,
        keys: &[(Entity, u8)],
        maps: &Maps,
        frame: u64,
        most: u64,
    ) -> u64 {
        self.graphs.retain(|(map, _), _| maps.get(*map).is_some());
        let paid = self.debt.min(most);
        self.debt -= paid;
        let mut left = most - paid;
        for &(map, size) in keys {
            let Some(view) = maps.get(map) else {
                continue;
            };
            let class = view.grid.size_class(size);
            let mut coarse = match self.graphs.remove(&(map, size)) {
                Some(Coarse::Building { task, due }) if frame >= due => {
                    Coarse::Ready(block_on(task))
                }
                Some(coarse) => coarse,
                None => build(view.grid, size, frame),
            };
            if let Coarse::Ready(graph) = &mut coarse {
                // A grid of another size, or one mostly changed (another
                // level of the same size): built again, off the budget.
                if !graph.fits(&class) || graph.note_edits(&class) * 4 > graph.cluster_count() {
                    coarse = build(view.grid, size, frame);
                } else if self.debt == 0 && left > 0 {
                    let spent = graph.repair(&class, left);
                    let charged = spent.min(left);
                    left -= charged;
                    self.debt += spent - charged;
                }
            }
            self.graphs.insert((map, size), coarse);
        }
        most - left
    }

    /// The graph of `map` for `size`, if it is built and up to date with
    /// `grid`.
    pub(super) fn ready(&self, map: Entity, size: u8, grid: &NavGrid) -> Option<&CoarseGraph> {
        match self.graphs.get(&(map, size))? {
            Coarse::Ready(graph) if graph.is_ready(&grid.size_class(size)) => Some(graph),
            _ => None,
        }
    }

    /// Bytes of memory the built graphs hold.
    pub(super) fn memory_bytes(&self) -> usize {
        self.graphs
            .values()
            .map(|coarse| match coarse {
                Coarse::Ready(graph) => graph.memory_bytes(),
                Coarse::Building { .. } => 0,
            })
            .sum()
    }

    /// Drops every graph and build (quick paths were switched off).
    pub(super) fn clear(&mut self) {
        self.graphs.clear();
        self.debt = 0;
    }
}

/// Starts building the graph of `grid` for `size` on a worker thread, from a
/// copy of the grid (edits made meanwhile are repaired once it is taken up).
/// Without Bevy's `multi_threaded` feature the task pool runs it at once.
fn build(grid: &NavGrid, size: u8, frame: u64) -> Coarse {
    let frames = (grid.cell_count() / BAKE_CELLS_PER_FRAME) as u64;
    if frames == 0 {
        return Coarse::Ready(CoarseGraph::build(&grid.size_class(size)));
    }
    let copy = grid.clone();
    let due = frame + frames;
    let pool = AsyncComputeTaskPool::get_or_init(TaskPool::default);
    let task = pool.spawn(async move { CoarseGraph::build(&copy.size_class(size)) });
    Coarse::Building { task, due }
}
