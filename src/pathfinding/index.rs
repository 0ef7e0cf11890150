//! Finished paths by where they run, so that an edit costs in proportion to
//! the paths near it, and the `Invalidate` system that flags them.

use std::collections::HashMap;

use crate::clock;
use bevy::ecs::entity::{EntityHashMap, EntityHashSet};
use bevy::prelude::*;

use super::result::{PathInvalidated, PathResult};
use super::stats::PathfindingStats;
use crate::core::size_class::anchors_over;
use crate::core::{Cell, ClassId, GridChanges, NavGrid, SizeClass};
use crate::ordinal::Ordinal;
use crate::schedule::ChangeMarks;
use bevy::ecs::system::SystemChangeTick;

/// Side of the square blocks of cells the index files paths under.
const BLOCK: u32 = 16;

/// A run of consecutive path cells (indices `first..=last`) in one block.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
struct Run {
    unit: Entity,
    first: u32,
    last: u32,
}

/// Where finished, unflagged paths run: per map and block of 16×16 cells,
/// the runs of path cells inside it; per map, the grid version up to which
/// edits have been checked.
#[derive(Resource, Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct PathIndex {
    blocks: HashMap<(Entity, u32, u32), Vec<Run>>,
    /// The blocks each indexed path has runs in.
    paths: EntityHashMap<(Entity, Vec<(u32, u32)>)>,
    /// Per map, the grid version whose edits have all been checked.
    checked: EntityHashMap<u64>,
    /// The largest unit size of any path indexed so far (so an edit looks
    /// only as far back as a footprint can reach).
    largest: u8,
    /// Units whose result was removed (or that were despawned) since
    /// `invalidate_paths` last ran, in that order.
    removed: Vec<Entity>,
    /// Units whose result `invalidate_paths` reads as changed on its next
    /// run whatever its change tick: those a loaded save's game had not
    /// read yet.
    pub(crate) resumed: Vec<Entity>,
}

impl PathIndex {
    fn insert(&mut self, unit: Entity, map: Entity, cells: &[Cell], size: u8) {
        self.largest = self.largest.max(size);
        let mut blocks = Vec::new();
        let mut first = 0;
        for i in 1..=cells.len() {
            let block = |c: Cell| (c.x / BLOCK, c.y / BLOCK);
            if i == cells.len() || block(cells[i]) != block(cells[first]) {
                let key = block(cells[first]);
                self.blocks
                    .entry((map, key.0, key.1))
                    .or_default()
                    .push(Run {
                        unit,
                        first: first as u32,
                        last: (i - 1) as u32,
                    });
                if !blocks.contains(&key) {
                    blocks.push(key);
                }
                first = i;
            }
        }
        self.paths.insert(unit, (map, blocks));
    }

    fn remove(&mut self, unit: Entity) {
        let Some((map, blocks)) = self.paths.remove(&unit) else {
            return;
        };
        for (bx, by) in blocks {
            if let Some(runs) = self.blocks.get_mut(&(map, bx, by)) {
                runs.retain(|run| run.unit != unit);
                if runs.is_empty() {
                    self.blocks.remove(&(map, bx, by));
                }
            }
        }
    }

    /// Indexed paths of units of movement class `class` on `map` that a
    /// change of `cell` can make illegal, dearer or cheaper.
    fn hit_by(
        &self,
        map: Entity,
        (cell, class): (Cell, ClassId),
        results: &Results,
        hits: &mut Vec<Entity>,
    ) {
        // The anchors whose footprint covers the cell lie up to
        // `largest - 1` before it; the steps that read them, one more.
        let reach = self.largest as u32;
        let (x0, x1) = (
            cell.x.saturating_sub(reach) / BLOCK,
            cell.x.saturating_add(1) / BLOCK,
        );
        let (y0, y1) = (
            cell.y.saturating_sub(reach) / BLOCK,
            cell.y.saturating_add(1) / BLOCK,
        );
        for by in y0..=y1 {
            for bx in x0..=x1 {
                let Some(runs) = self.blocks.get(&(map, bx, by)) else {
                    continue;
                };
                for run in runs {
                    if hits.contains(&run.unit) {
                        continue;
                    }
                    let Ok((_, result, _)) = results.get(run.unit) else {
                        continue;
                    };
                    if result.class != class {
                        continue;
                    }
                    let cells = &result.cells;
                    let hit = (run.last as usize) < cells.len()
                        && anchors_over(cell.x, cell.y, result.size).any(|(x, y)| {
                            (run.first as usize..=run.last as usize)
                                .any(|i| step_uses(cells, i, Cell::new(x, y)))
                        });
                    if hit {
                        hits.push(run.unit);
                    }
                }
            }
        }
    }

    /// Indexed paths on `map` that the edits to `grid` after version
    /// `checked` hit: each class's paths against the cells whose cost that
    /// class can tell apart (a cell turned from open ground to shallows
    /// leaves a hovercraft's path as it was); every path on the map when
    /// the journal no longer reaches back that far.
    fn hits_of_edits(
        &self,
        map: Entity,
        grid: &NavGrid,
        checked: u64,
        results: &Results,
        hits: &mut Vec<Entity>,
    ) {
        for class in (0..grid.class_count()).map(|c| ClassId::from_index(c as u8)) {
            match grid.told_apart_by(class, checked) {
                GridChanges::Everything => {
                    let on_map = self.paths.iter().filter(|(_, (m, _))| *m == map);
                    hits.extend(on_map.map(|(&unit, _)| unit));
                    return;
                }
                GridChanges::Cells(cells) => {
                    for cell in cells {
                        self.hit_by(map, (cell, class), results, hits);
                    }
                }
            }
        }
    }
}

/// Whether the path `cells` uses `cell` at or around its `i`-th cell: as
/// that cell, or as one of the two cells beside a diagonal step into or out
/// of it (which must stay walkable for the step not to cut a corner).
fn step_uses(cells: &[Cell], i: usize, cell: Cell) -> bool {
    let here = cells[i];
    if here == cell {
        return true;
    }
    if here.x.abs_diff(cell.x) > 1 || here.y.abs_diff(cell.y) > 1 {
        return false;
    }
    let beside = |a: Cell, b: Cell| {
        a.x != b.x && a.y != b.y && (Cell::new(a.x, b.y) == cell || Cell::new(b.x, a.y) == cell)
    };
    (i > 0 && beside(cells[i - 1], here))
        || cells.get(i + 1).is_some_and(|&next| beside(here, next))
}

/// Whether a path found on an older version of `grid` crosses a cell
/// changed since whose cost its unit's class can tell apart.
pub(super) fn changed_since(grid: SizeClass<'_>, version: u64, cells: &[Cell]) -> bool {
    match grid.told_apart_since(version) {
        GridChanges::Everything => true,
        GridChanges::Cells(changed) => changed
            .iter()
            .any(|&c| (0..cells.len()).any(|i| step_uses(cells, i, c))),
    }
}

/// Units' results, with their place in the order the game made them.
type Results<'w, 's> = Query<'w, 's, (Entity, &'static mut PathResult, Option<&'static Ordinal>)>;

/// `Invalidate`: flags finished paths that a map edit made illegal or
/// changed the cost of: a cell on the path, or beside one of its diagonal
/// steps, whose cost the unit's movement class can tell apart from before
/// (an edit another class alone can tell re-plans none of its paths). Each
/// edit looks only at the paths indexed in the blocks round it, and a
/// path delivered from an older version of its map (one that finished on a
/// copy) is checked against the edits made since, once.
pub(crate) fn invalidate_paths(
    maps: Query<(Entity, &NavGrid)>,
    mut results: Results,
    mut index: ResMut<PathIndex>,
    mut commands: Commands,
    mut messages: MessageWriter<PathInvalidated>,
    mut stats: ResMut<PathfindingStats>,
    (ticks, mut marks): (SystemChangeTick, ResMut<ChangeMarks>),
) {
    let began = clock::now();
    marks.index = ticks.this_run();
    stats.begin_frame();
    let index = &mut *index;
    for unit in std::mem::take(&mut index.removed) {
        index.remove(unit);
    }
    // Results changed since the last frame (new ones included); reading
    // through `Mut` does not mark them changed.
    let resumed = std::mem::take(&mut index.resumed);
    let mut changed: Vec<Entity> = results
        .iter_mut()
        .filter(|(_, result, _)| result.is_changed())
        .map(|(unit, ..)| unit)
        .collect();
    if !resumed.is_empty() {
        let mut seen: EntityHashSet = changed.iter().copied().collect();
        let resumed = resumed.into_iter().filter(|&unit| results.contains(unit));
        changed.extend(resumed.filter(|&unit| seen.insert(unit)));
    }
    // Their old paths are gone; the new ones are checked below.
    for &unit in &changed {
        index.remove(unit);
    }
    let mut hits = Vec::new();
    // Edits since the last frame, against the indexed paths.
    for (map, grid) in &maps {
        let version = grid.version();
        let Some(checked) = index.checked.insert(map, version) else {
            continue;
        };
        if checked == version {
            continue;
        }
        index.hits_of_edits(map, grid, checked, &results, &mut hits);
    }
    index.checked.retain(|&map, _| maps.contains(map));
    // Paths delivered or changed since the last frame: checked against
    // edits newer than the grid they were found on, then indexed.
    for unit in changed {
        if hits.contains(&unit) {
            continue;
        }
        let Ok((_, result, _)) = results.get(unit) else {
            continue;
        };
        let Some((map, grid)) = result.map.and_then(|map| maps.get(map).ok()) else {
            continue;
        };
        if result.invalidated || result.cells.is_empty() {
            continue;
        }
        if result.grid_version != grid.version()
            && changed_since(
                grid.kind_view(result.kind()),
                result.grid_version,
                &result.cells,
            )
        {
            hits.push(unit);
            continue;
        }
        index.insert(unit, map, &result.cells, result.size);
    }
    // In the order the units joined (not the hash map's or the query's),
    // each once: the game reads the messages in this order.
    hits.sort_by_cached_key(|&unit| {
        let ordinal = results.get(unit).ok().and_then(|(.., ordinal)| ordinal);
        (ordinal.map_or(u64::MAX, Ordinal::joined), unit)
    });
    hits.dedup();
    for unit in hits {
        index.remove(unit);
        let Ok((_, mut result, _)) = results.get_mut(unit) else {
            continue;
        };
        if result.invalidated {
            continue;
        }
        result.invalidated = true;
        let event = PathInvalidated { entity: unit };
        messages.write(event);
        commands.trigger(event);
    }
    let took = clock::since(began);
    stats.invalidate_time = took;
    stats.frame_time += took;
}

/// A result was removed, or its unit despawned: `invalidate_paths` takes
/// its path out of the index on its next run (kept in the index, so a save
/// holds those not yet read).
pub(crate) fn note_removed_result(gone: On<Remove, PathResult>, mut index: ResMut<PathIndex>) {
    index.removed.push(gone.entity);
}

#[cfg(feature = "serialize")]
crate::remap::remap_fields!(PathIndex {
    blocks,
    paths,
    checked,
    removed,
    resumed
});
#[cfg(feature = "serialize")]
crate::remap::remap_fields!(Run { unit });
