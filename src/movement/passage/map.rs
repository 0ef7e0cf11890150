//! The passages of a map as units have looked at them: one-lane anchors
//! found block by block, chained into passages with a mouth at each end,
//! and forgotten where the grid's edits touch them.

use bevy::platform::collections::{HashMap, HashSet};
use bevy::prelude::*;

use crate::core::{Cell, GridChanges, MAX_UNIT_SIZE, SizeClass, UnitKind};
use crate::maps::{AllViews, MapView};
use crate::movement::state::turn::ClassMap;
use crate::movement::tuning::{BACK_OFF_STEPS, LONGEST};

/// A chain of one-lane anchors with two mouths.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct Passage {
    /// The chain's lowest anchor (row, then column): the passage's name.
    pub(super) key: Cell,
    /// The anchor outside each end, lower first: side 0 and side 1.
    pub(super) mouths: [Cell; 2],
    /// The chain's anchor each mouth opens onto.
    pub(super) ends: [Cell; 2],
}

/// Side of the square blocks of anchors that remember whether they hold a
/// one-lane anchor at all, so that units in the open need not look.
pub(super) const BLOCK: u32 = 8;

/// Per block of a map's anchors, whether it holds a one-lane anchor, for
/// the blocks looked at so far: a flat table (a look-up in the open costs
/// an index, not a hash).
#[derive(Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct Blocks {
    /// Blocks along x and y.
    wide: u32,
    high: u32,
    /// Per block, row by row (`None`: not looked at yet).
    one_lane: Vec<Option<bool>>,
}

impl Blocks {
    /// Sizes the table for `class`'s anchors, forgetting everything if its
    /// size changed.
    fn fit(&mut self, size_class: &SizeClass) {
        let (wide, high) = (
            size_class.width().div_ceil(BLOCK),
            size_class.height().div_ceil(BLOCK),
        );
        if (wide, high) != (self.wide, self.high) {
            *self = Self {
                wide,
                high,
                one_lane: vec![None; wide as usize * high as usize],
            };
        }
    }

    /// Where block `(bx, by)` is kept, if it lies on the map.
    fn index(&self, bx: u32, by: u32) -> Option<usize> {
        (bx < self.wide && by < self.high).then(|| by as usize * self.wide as usize + bx as usize)
    }

    /// Block `(bx, by)`'s entry, if it lies on the map.
    fn entry(&mut self, bx: u32, by: u32) -> Option<&mut Option<bool>> {
        let index = self.index(bx, by)?;
        Some(&mut self.one_lane[index])
    }

    /// What block `(bx, by)` holds, if it was looked at.
    pub(super) fn get(&self, bx: u32, by: u32) -> Option<bool> {
        self.one_lane[self.index(bx, by)?]
    }
}

/// The passages of one map for one size, as far as units have looked.
#[derive(Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct PassageMap {
    /// The grid version the cache is for.
    pub(super) version: u64,
    /// Whether each block looked at holds a one-lane anchor.
    pub(super) blocks: Blocks,
    /// One-lane anchors seen so far and the passage they belong to (`None`:
    /// a chain that is not taken turns on).
    pub(super) cells: HashMap<Cell, Option<u32>>,
    pub(super) passages: Vec<Passage>,
    /// How many anchors of `cells` are in a passage taken turns on: with
    /// none, no unit can step into one, and nothing need be looked up.
    pub(super) in_passages: usize,
}

/// Whether a unit at `cell` can only go on or back.
pub(super) fn one_lane(size_class: &SizeClass, cell: Cell) -> bool {
    size_class.is_walkable(cell) && size_class.neighbors(cell).take(3).count() <= 2
}

impl PassageMap {
    /// Forgets what the edits since the last look may have changed: every
    /// chain, and the blocks round the anchors edited; and sizes the blocks
    /// for `class`.
    pub(super) fn catch_up(&mut self, size_class: &SizeClass) {
        self.forget_edits(size_class);
        self.blocks.fit(size_class);
    }

    /// The forgetting half of [`catch_up`](Self::catch_up).
    fn forget_edits(&mut self, size_class: &SizeClass) {
        if self.version == size_class.version() {
            return;
        }
        match size_class.changes_since(self.version) {
            GridChanges::Cells(cells) => {
                for cell in cells {
                    // An edit changes the moves out of the anchors round it.
                    for y in cell.y.saturating_sub(1)..=cell.y + 1 {
                        for x in cell.x.saturating_sub(1)..=cell.x + 1 {
                            if let Some(entry) = self.blocks.entry(x / BLOCK, y / BLOCK) {
                                *entry = None;
                            }
                        }
                    }
                }
            }
            GridChanges::Everything => self.blocks = Blocks::default(),
        }
        self.version = size_class.version();
        self.cells.clear();
        self.passages.clear();
        self.in_passages = 0;
    }

    /// Whether any anchor within `reach` anchors of `cell` may be one-lane,
    /// or the first block round it nobody has looked at yet (the blocks
    /// are looked at in order, so the answer is the same once it is).
    #[inline] // called across modules in the crowd step's hot loops
    pub(super) fn one_lane_near(&self, cell: Cell, reach: u32) -> Result<bool, (u32, u32)> {
        let (x0, y0) = (
            cell.x.saturating_sub(reach) / BLOCK,
            cell.y.saturating_sub(reach) / BLOCK,
        );
        let (x1, y1) = ((cell.x + reach) / BLOCK, (cell.y + reach) / BLOCK);
        for by in y0..=y1 {
            for bx in x0..=x1 {
                // Blocks off the map hold no anchor.
                let Some(index) = self.blocks.index(bx, by) else {
                    continue;
                };
                match self.blocks.one_lane[index] {
                    Some(true) => return Ok(true),
                    Some(false) => {}
                    None => return Err((bx, by)),
                }
            }
        }
        Ok(false)
    }

    /// Looks at block `(bx, by)`: whether it holds a one-lane anchor.
    fn fill_block(&mut self, size_class: &SizeClass, bx: u32, by: u32) {
        if let Some(entry) = self.blocks.entry(bx, by) {
            *entry = Some((by * BLOCK..(by + 1) * BLOCK).any(|y| {
                (bx * BLOCK..(bx + 1) * BLOCK).any(|x| one_lane(size_class, Cell::new(x, y)))
            }));
        }
    }

    /// The passage `cell` belongs to, if it is one-lane and its chain has
    /// two mouths; `Err(cell)` for a one-lane anchor whose chain nobody has
    /// walked yet.
    pub(super) fn passage_at(
        &self,
        size_class: &SizeClass,
        cell: Cell,
    ) -> Result<Option<u32>, Cell> {
        match self.cells.get(&cell) {
            Some(&known) => Ok(known),
            None if !one_lane(size_class, cell) => Ok(None),
            None => Err(cell),
        }
    }

    /// Walks the chain of one-lane anchors through `cell` and remembers the
    /// passage it makes, if it has two mouths, for each of its anchors.
    fn walk_chain(&mut self, size_class: &SizeClass, cell: Cell) {
        if self.cells.contains_key(&cell) || !one_lane(size_class, cell) {
            return;
        }
        let mut chain = vec![cell];
        let mut seen = HashSet::from([cell]);
        let mut mouths: Vec<(Cell, Cell)> = Vec::new();
        let mut too_long = false;
        let mut at = 0;
        while at < chain.len() && !too_long {
            let here = chain[at];
            at += 1;
            for (next, _) in size_class.neighbors(here) {
                if seen.contains(&next) {
                    continue;
                }
                if one_lane(size_class, next) {
                    if chain.len() >= LONGEST {
                        too_long = true;
                        break;
                    }
                    seen.insert(next);
                    chain.push(next);
                } else if mouths.iter().all(|&(mouth, _)| mouth != next) {
                    mouths.push((next, here));
                }
            }
        }
        let passage = if too_long || mouths.len() != 2 {
            None
        } else {
            mouths.sort_by_key(|&(mouth, _)| (mouth.y, mouth.x));
            let key = *chain.iter().min_by_key(|c| (c.y, c.x)).unwrap_or(&cell);
            self.passages.push(Passage {
                key,
                mouths: [mouths[0].0, mouths[1].0],
                ends: [mouths[0].1, mouths[1].1],
            });
            Some(self.passages.len() as u32 - 1)
        };
        for anchor in chain {
            self.in_passages += usize::from(passage.is_some());
            self.cells.insert(anchor, passage);
        }
    }
}

/// What a unit's look ahead needed that nobody had looked at yet this
/// version of the grid: filled in on the frame's thread, in mover order,
/// and the look taken again. What is filled in is the map's, not the
/// unit's, so the same looks give the same answers in any order.
#[derive(Clone, Copy, Debug)]
pub(super) enum Miss {
    /// The map, class and size's cache, caught up with the grid.
    Map((ClassMap, u8)),
    /// Whether block `(bx, by)` of the map, class and size holds a
    /// one-lane anchor.
    Block((ClassMap, u8), u32, u32),
    /// The passage through this one-lane anchor of the map, class and size.
    Chain((ClassMap, u8), Cell),
}

impl Passages {
    /// Fills in what a look missed; whether it could (the map has a view).
    pub(super) fn fill(&mut self, views: &AllViews, miss: Miss) -> bool {
        let key = match miss {
            Miss::Map(key) | Miss::Block(key, ..) | Miss::Chain(key, _) => key,
        };
        let Some(view) = views.get(key.0.0) else {
            return false;
        };
        let size_class = view.for_kind(UnitKind::new(key.0.1, key.1)).size_class();
        let cached = self.maps.entry(key).or_default();
        match miss {
            Miss::Map(_) => cached.catch_up(&size_class),
            Miss::Block(_, bx, by) => cached.fill_block(&size_class, bx, by),
            Miss::Chain(_, cell) => cached.walk_chain(&size_class, cell),
        }
        true
    }
}

/// The map as the class of a unit of `view` sees it.
pub(super) fn class_map(map: Entity, view: &MapView) -> ClassMap {
    (map, view.kind().class)
}

/// The one-lane passages units have looked at, per map, class and size,
/// and the sizes of the movers of each class on each map this frame.
#[derive(Resource, Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct Passages {
    pub(super) maps: HashMap<(ClassMap, u8), PassageMap>,
    /// Per map, the sizes of its movers (bit k for size k). A unit takes
    /// turns at the passages of its own size and of every bigger size on
    /// the map: a bridge two cells wide is one lane where a tank may meet
    /// infantry on it, so the infantry take turns there too.
    pub(super) sizes: HashMap<ClassMap, u16>,
}

impl Passages {
    /// The sizes of `map`'s movers this frame (bit k for size k).
    pub(super) fn present(&self, map: ClassMap) -> u16 {
        self.sizes.get(&map).copied().unwrap_or(0)
    }

    /// Whether a unit of `size` at `position` on `view` of `map` stands in
    /// a passage (of its size or a bigger one) units have looked at this
    /// version of the grid.
    fn stands_in(&self, map: ClassMap, view: &MapView, size: u8, position: Vec2) -> bool {
        widths(self.present(map), size).any(|width| {
            self.maps.get(&(map, width)).is_some_and(|cached| {
                held_in(view, position, size, width, |a| {
                    cached.cells.get(&a).copied().flatten()
                })
                .is_some()
            })
        })
    }

    /// Whether a passage units have looked at lies within `reach` anchors
    /// of `position` on `view` of `map`, for a unit one cell wide: first
    /// asked of the blocks round it, so that a unit in the open pays a
    /// look or two.
    #[inline] // called across modules in the crowd step's hot loops
    pub(crate) fn beside(&self, map: Entity, view: &MapView, position: Vec2, reach: u32) -> bool {
        let map = class_map(map, view);
        widths(self.present(map), 1).any(|width| {
            let (Some(cached), Some(cell)) = (
                self.maps.get(&(map, width)),
                view.for_size(width).cell_at(position),
            ) else {
                return false;
            };
            let (x0, y0) = (cell.x.saturating_sub(reach), cell.y.saturating_sub(reach));
            let (x1, y1) = (cell.x + reach, cell.y + reach);
            let one_lane_there = (y0 / BLOCK..=y1 / BLOCK).any(|by| {
                (x0 / BLOCK..=x1 / BLOCK).any(|bx| cached.blocks.get(bx, by) == Some(true))
            });
            one_lane_there
                && (y0..=y1).any(|y| {
                    (x0..=x1).any(|x| {
                        cached
                            .cells
                            .get(&Cell::new(x, y))
                            .is_some_and(Option::is_some)
                    })
                })
        })
    }

    /// Whether cell `cell` (of the grid itself) of `map` is in a passage:
    /// to a unit without a claim on it, avoidance treats it as a wall.
    pub(crate) fn closes(&self, map: Entity, view: &MapView, cell: Cell) -> bool {
        let map = class_map(map, view);
        self.stands_in(map, view, 1, view.for_size(1).cell_to_world(cell))
    }

    /// Whether a unit of the size `view` is for, going from `from` to `to`
    /// on `map`, steps into a passage from outside one: what only a unit
    /// holding a claim on it may do.
    fn steps_in(&self, map: ClassMap, view: &MapView, from: Vec2, to: Vec2) -> bool {
        let size = view.size();
        // Where no passage is known (open ground, or a map whose units
        // have looked at none yet), there is none to step into.
        let known = widths(self.present(map), size).any(|width| {
            self.maps
                .get(&(map, width))
                .is_some_and(|cached| cached.in_passages > 0)
        });
        if !known {
            return false;
        }
        // Whether a unit stands in a passage depends only on the anchors
        // that hold it (see `holders`): a step that keeps every one of
        // them, as nearly every nudge in a crowd does, steps into none,
        // and costs no look-up.
        let holds_other_anchors = widths(self.present(map), size).any(|width| {
            let grid = holder_grid(view, size, width);
            grid.cell_at(from) != grid.cell_at(to)
        });
        holds_other_anchors
            && self.stands_in(map, view, size, to)
            && !self.stands_in(map, view, size, from)
    }

    /// Where a unit without a claim that walked from `from` to `to` stops:
    /// `to`, or the last point before the way steps into a passage.
    pub(crate) fn stop_outside(&self, map: Entity, view: &MapView, from: Vec2, to: Vec2) -> Vec2 {
        let map = class_map(map, view);
        // A unit that did not move stepped nowhere (pressed against a wall
        // or another, as many are in a crowd): no cell to look up.
        if from == to || !self.steps_in(map, view, from, to) {
            return to;
        }
        // Back along the way in small steps (a frame's walk is short), to a
        // point the unit can walk to straight.
        (1..BACK_OFF_STEPS)
            .rev()
            .map(|k| from.lerp(to, k as f32 / BACK_OFF_STEPS as f32))
            .find(|&p| !self.steps_in(map, view, from, p) && view.segment_clear(from, p))
            .unwrap_or(from)
    }
}

/// The sizes, `size` and up, whose passages a unit of `size` takes turns
/// at on a map whose movers' sizes are `present` (bit k for size k).
pub(super) fn widths(present: u16, size: u8) -> impl Iterator<Item = u8> {
    (size..=MAX_UNIT_SIZE).filter(move |&k| k == size || present & (1 << k) != 0)
}

/// The anchors of width `width` that hold a unit of size `size` standing at
/// `position`: its own anchor when the sizes agree; for a smaller unit,
/// every anchor whose footprint contains the point (in order, lowest
/// first). See [`held_in`] for when they hold it in a passage.
pub(super) fn holders(
    view: &MapView,
    position: Vec2,
    size: u8,
    width: u8,
) -> impl Iterator<Item = Cell> {
    let cell = holder_grid(view, size, width).cell_at(position);
    let reach = if size >= width { 1 } else { width as u32 };
    cell.into_iter().flat_map(move |cell| {
        (0..reach).rev().flat_map(move |dy| {
            (0..reach).rev().filter_map(move |dx| {
                Some(Cell::new(cell.x.checked_sub(dx)?, cell.y.checked_sub(dy)?))
            })
        })
    })
}

/// What `passage_of` says of the first anchor of width `width` holding a
/// unit of `size` at `position`, if it says something of every walkable
/// one: a unit is in a passage where every walkable anchor holding it is.
/// A smaller unit on a cell that the end of a bigger passage's deck shares
/// with the open ground beside it (the bank beside a bridge two cells wide,
/// under the footprint of the deck's last anchor) is not in the passage,
/// and a unit walking along the bank there takes no turn.
pub(super) fn held_in<T>(
    view: &MapView,
    position: Vec2,
    size: u8,
    width: u8,
    mut passage_of: impl FnMut(Cell) -> Option<T>,
) -> Option<T> {
    let size_class = view.for_size(width).size_class();
    let mut first = None;
    for anchor in holders(view, position, size, width).filter(|&a| size_class.is_walkable(a)) {
        let found = passage_of(anchor)?;
        first.get_or_insert(found);
    }
    first
}

/// The grid whose cell at a unit's position fixes the anchors of size
/// `width` that hold a unit of `size` (see [`holders`]).
pub(super) fn holder_grid<'a>(view: &MapView<'a>, size: u8, width: u8) -> MapView<'a> {
    view.for_size(if size >= width { width } else { 1 })
}

#[cfg(feature = "serialize")]
crate::remap::remap_fields!(Passages { maps, sizes });
#[cfg(feature = "serialize")]
crate::remap::no_entities!(PassageMap);
