//! One-lane passages: where the way is one unit wide (a bridge, a gap in a
//! wall, a corridor), two units going opposite ways cannot pass each other
//! and no amount of avoidance helps. Units take turns instead, as drivers
//! do at a one-lane bridge.
//!
//! A *one-lane* anchor is a walkable anchor with at most two moves out of
//! it: a unit there can only go on or back. A passage is a chain of such
//! anchors with a *mouth* at each end, the anchor outside it that opens
//! onto it; they are found by looking along each unit's way, per size
//! class (a bridge two cells wide is one lane for a tank), and cached until
//! the grid changes.
//!
//! Each frame every moving unit looks a short way ahead along its route
//! (the rules below are worked out from the frame's start, in entity
//! order, so the same inputs give the same turns).
//!
//! - A unit that sees a passage ahead walks on to its mouth if it is its
//!   side's turn, and *claims* the passage there; it holds the claim
//!   through the passage and while it stands in the far mouth.
//! - It is a side's turn when the passage is empty and that side's first
//!   unit has waited longest, or when the passage carries that side's
//!   units and the other side's first unit has waited less than
//!   [`AvoidanceSettings::passage_turn`] seconds. A unit already at the
//!   mouth when the turn passes goes on, for one more turn at most, so that
//!   none is left standing in the way of its own side's units.
//! - Otherwise it waits: clear of the lane out of the passage (stepping
//!   aside, to its own side of it) and a few cells back from the mouth,
//!   so that the units coming out have room; units queued behind it count
//!   as waiting too, not as blocked.
//! - A unit that sees passages of two sizes ahead goes by the nearer: one
//!   on a bridge two cells wide (one lane while a tank is about) with a
//!   gap one cell wide beyond it is on the bridge till it is off it.
//! - A unit smaller than a passage's size is in it only where every
//!   walkable anchor (of that size) whose footprint holds it is in it. The
//!   last anchor of a bridge two cells wide covers a column of the bank
//!   too; an infantry unit walking along the bank there is beside the
//!   bridge, not on it, and takes no turn (it once claimed the bridge and,
//!   a crosser now, was swept onto the deck by the stream coming off it).
//! - No unit steps into a passage without a claim on it: not by walking,
//!   not pushed by others (the move stops at the passage's edge, and to
//!   avoidance the passage is a wall, whether it lies ahead or beside: a
//!   unit come out and pressed by those about to go in is not planned
//!   back into it, where it could not step and would stand still).
//!
//! So the passage never carries units both ways at once, neither side is
//! held up for ever, and nobody turns back half-way.

use bevy::platform::collections::{HashMap, HashSet};

use bevy::prelude::*;

use bevy::utils::Parallel;

use super::{Motion, Mover, PARALLEL_WALKS, Steering, speed_of};
use crate::core::{Cell, ClassId, GridChanges, MAX_UNIT_SIZE, SizeClass};
use crate::maps::{AllViews, MapView, Maps};

use super::body::{
    AgentQuery, AgentQueryItem, AgentQueryReadOnlyItem, Avoidance, AvoidanceSettings, body_radius,
};
use crate::core::UnitKind;
use crate::pathfinding::{Footprint, MovementClass, unit_kind};

/// Anchors a passage may have: a longer one-lane chain is not taken turns
/// on (its units meet and push through, as in open ground).
const LONGEST: usize = 4096;

/// How far ahead of its body (in cells) a unit looks for a passage: the
/// nearest it comes to one before it knows whether it must wait.
const LOOK_AHEAD: f32 = 4.0;

/// A waiting unit closer than this to the passage (cells beyond its body)
/// backs off, so that the mouth is clear for the units coming out.
const CLEAR_OF_MOUTH: f32 = 2.5;

/// How close to the passage (cells beyond its body) a unit claims it: only
/// units at its mouth hold it, so a turn that ends stops no unit that is
/// half-way to it behind one that has to wait.
const CLAIM_AT: f32 = 1.0;

/// A chain of one-lane anchors with two mouths.
#[derive(Clone, Debug)]
struct Passage {
    /// The chain's lowest anchor (row, then column): the passage's name.
    key: Cell,
    /// The anchor outside each end, lower first: side 0 and side 1.
    mouths: [Cell; 2],
    /// The chain's anchor each mouth opens onto.
    ends: [Cell; 2],
}

/// Side of the square blocks of anchors that remember whether they hold a
/// one-lane anchor at all, so that units in the open need not look.
const BLOCK: u32 = 8;

/// Per block of a map's anchors, whether it holds a one-lane anchor, for
/// the blocks looked at so far: a flat table (a look-up in the open costs
/// an index, not a hash).
#[derive(Default)]
struct Blocks {
    /// Blocks along x and y.
    wide: u32,
    high: u32,
    /// Per block, row by row (`None`: not looked at yet).
    lanes: Vec<Option<bool>>,
}

impl Blocks {
    /// Sizes the table for `class`'s anchors, forgetting everything if its
    /// size changed.
    fn fit(&mut self, class: &SizeClass) {
        let (wide, high) = (
            class.width().div_ceil(BLOCK),
            class.height().div_ceil(BLOCK),
        );
        if (wide, high) != (self.wide, self.high) {
            *self = Self {
                wide,
                high,
                lanes: vec![None; wide as usize * high as usize],
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
        Some(&mut self.lanes[index])
    }

    /// What block `(bx, by)` holds, if it was looked at.
    fn get(&self, bx: u32, by: u32) -> Option<bool> {
        self.lanes[self.index(bx, by)?]
    }
}

/// The passages of one map for one size, as far as units have looked.
#[derive(Default)]
struct PassageMap {
    /// The grid version the cache is for.
    version: u64,
    /// Whether each block looked at holds a one-lane anchor.
    blocks: Blocks,
    /// One-lane anchors seen so far and the passage they belong to (`None`:
    /// a chain that is not taken turns on).
    cells: HashMap<Cell, Option<u32>>,
    passages: Vec<Passage>,
    /// How many anchors of `cells` are in a passage taken turns on: with
    /// none, no unit can step into one, and nothing need be looked up.
    in_passages: usize,
}

/// Whether a unit at `cell` can only go on or back.
fn one_lane(class: &SizeClass, cell: Cell) -> bool {
    class.is_walkable(cell) && class.neighbors(cell).take(3).count() <= 2
}

impl PassageMap {
    /// Forgets what the edits since the last look may have changed: every
    /// chain, and the blocks round the anchors edited; and sizes the blocks
    /// for `class`.
    fn catch_up(&mut self, class: &SizeClass) {
        self.forget_edits(class);
        self.blocks.fit(class);
    }

    /// The forgetting half of [`catch_up`](Self::catch_up).
    fn forget_edits(&mut self, class: &SizeClass) {
        if self.version == class.version() {
            return;
        }
        match class.changes_since(self.version) {
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
        self.version = class.version();
        self.cells.clear();
        self.passages.clear();
        self.in_passages = 0;
    }

    /// Whether any anchor within `reach` anchors of `cell` may be one-lane,
    /// or the first block round it nobody has looked at yet (the blocks
    /// are looked at in order, so the answer is the same once it is).
    fn lanes_near(&self, cell: Cell, reach: u32) -> Result<bool, (u32, u32)> {
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
                match self.blocks.lanes[index] {
                    Some(true) => return Ok(true),
                    Some(false) => {}
                    None => return Err((bx, by)),
                }
            }
        }
        Ok(false)
    }

    /// Looks at block `(bx, by)`: whether it holds a one-lane anchor.
    fn fill_block(&mut self, class: &SizeClass, bx: u32, by: u32) {
        if let Some(entry) = self.blocks.entry(bx, by) {
            *entry =
                Some((by * BLOCK..(by + 1) * BLOCK).any(|y| {
                    (bx * BLOCK..(bx + 1) * BLOCK).any(|x| one_lane(class, Cell::new(x, y)))
                }));
        }
    }

    /// The passage `cell` belongs to, if it is one-lane and its chain has
    /// two mouths; `Err(cell)` for a one-lane anchor whose chain nobody has
    /// walked yet.
    fn passage_at(&self, class: &SizeClass, cell: Cell) -> Result<Option<u32>, Cell> {
        match self.cells.get(&cell) {
            Some(&known) => Ok(known),
            None if !one_lane(class, cell) => Ok(None),
            None => Err(cell),
        }
    }

    /// Walks the chain of one-lane anchors through `cell` and remembers the
    /// passage it makes, if it has two mouths, for each of its anchors.
    fn walk_chain(&mut self, class: &SizeClass, cell: Cell) {
        if self.cells.contains_key(&cell) || !one_lane(class, cell) {
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
            for (next, _) in class.neighbors(here) {
                if seen.contains(&next) {
                    continue;
                }
                if one_lane(class, next) {
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
enum Miss {
    /// The map, class and size's cache, caught up with the grid.
    Map((ClassMap, u8)),
    /// Whether block `(bx, by)` of the map, class and size holds a
    /// one-lane anchor.
    Block((ClassMap, u8), u32, u32),
    /// The passage through this one-lane anchor of the map, class and size.
    Chain((ClassMap, u8), Cell),
}

/// A map as one movement class sees it: the map entity and the class.
/// Passages are found per class (a bridge is one lane to tanks, a river
/// mouth to boats), and units take turns with units of their class.
type ClassMap = (Entity, ClassId);

/// The map as the class of a unit of `view` sees it.
fn class_map(map: Entity, view: &MapView) -> ClassMap {
    (map, view.kind().class)
}

/// The one-lane passages units have looked at, per map, class and size,
/// the sizes of the movers of each class on each map this frame, and
/// scratch for the frame.
#[derive(Resource, Default)]
pub(crate) struct Passages {
    maps: HashMap<(ClassMap, u8), PassageMap>,
    /// Per map, the sizes of its movers (bit k for size k). A unit takes
    /// turns at the passages of its own size and of every bigger size on
    /// the map: a bridge two cells wide is one lane where a tank may meet
    /// infantry on it, so the infantry take turns there too.
    sizes: HashMap<ClassMap, u16>,
    seen: Vec<Sighting>,
}

/// The sizes, `size` and up, whose passages a unit of `size` takes turns
/// at on a map whose movers' sizes are `present` (bit k for size k).
fn lanes(present: u16, size: u8) -> impl Iterator<Item = u8> {
    (size..=MAX_UNIT_SIZE).filter(move |&k| k == size || present & (1 << k) != 0)
}

/// The anchors of size `lane` that hold a unit of size `size` standing at
/// `position`: its own anchor when the sizes agree; for a smaller unit,
/// every anchor whose footprint contains the point (in order, lowest
/// first). See [`held_in`] for when they hold it in a passage.
fn holders(view: &MapView, position: Vec2, size: u8, lane: u8) -> impl Iterator<Item = Cell> {
    let cell = holder_grid(view, size, lane).cell_at(position);
    let reach = if size >= lane { 1 } else { lane as u32 };
    cell.into_iter().flat_map(move |cell| {
        (0..reach).rev().flat_map(move |dy| {
            (0..reach).rev().filter_map(move |dx| {
                Some(Cell::new(cell.x.checked_sub(dx)?, cell.y.checked_sub(dy)?))
            })
        })
    })
}

/// What `passage_of` says of the first anchor of size `lane` holding a
/// unit of `size` at `position`, if it says something of every walkable
/// one: a unit is in a passage where every walkable anchor holding it is.
/// A smaller unit on a cell that the end of a bigger passage's deck shares
/// with the open ground beside it (the bank beside a bridge two cells wide,
/// under the footprint of the deck's last anchor) is not in the passage,
/// and a unit walking along the bank there takes no turn.
fn held_in<T>(
    view: &MapView,
    position: Vec2,
    size: u8,
    lane: u8,
    mut passage_of: impl FnMut(Cell) -> Option<T>,
) -> Option<T> {
    let class = view.for_size(lane).size_class();
    let mut first = None;
    for anchor in holders(view, position, size, lane).filter(|&a| class.is_walkable(a)) {
        let found = passage_of(anchor)?;
        first.get_or_insert(found);
    }
    first
}

/// The grid whose cell at a unit's position fixes the anchors of size
/// `lane` that hold a unit of `size` (see [`holders`]).
fn holder_grid<'a>(view: &MapView<'a>, size: u8, lane: u8) -> MapView<'a> {
    view.for_size(if size >= lane { lane } else { 1 })
}

impl Passages {
    /// The sizes of `map`'s movers this frame (bit k for size k).
    fn present(&self, map: ClassMap) -> u16 {
        self.sizes.get(&map).copied().unwrap_or(0)
    }

    /// Whether a unit of `size` at `position` on `view` of `map` stands in
    /// a passage (of its size or a bigger one) units have looked at this
    /// version of the grid.
    fn stands_in(&self, map: ClassMap, view: &MapView, size: u8, position: Vec2) -> bool {
        lanes(self.present(map), size).any(|lane| {
            self.maps.get(&(map, lane)).is_some_and(|cached| {
                held_in(view, position, size, lane, |a| {
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
    pub(crate) fn beside(&self, map: Entity, view: &MapView, position: Vec2, reach: u32) -> bool {
        let map = class_map(map, view);
        lanes(self.present(map), 1).any(|lane| {
            let (Some(cached), Some(cell)) = (
                self.maps.get(&(map, lane)),
                view.for_size(lane).cell_at(position),
            ) else {
                return false;
            };
            let (x0, y0) = (cell.x.saturating_sub(reach), cell.y.saturating_sub(reach));
            let (x1, y1) = (cell.x + reach, cell.y + reach);
            let lanes_there = (y0 / BLOCK..=y1 / BLOCK).any(|by| {
                (x0 / BLOCK..=x1 / BLOCK).any(|bx| cached.blocks.get(bx, by) == Some(true))
            });
            lanes_there
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
        let known = lanes(self.present(map), size).any(|lane| {
            self.maps
                .get(&(map, lane))
                .is_some_and(|cached| cached.in_passages > 0)
        });
        if !known {
            return false;
        }
        // Whether a unit stands in a passage depends only on the anchors
        // that hold it (see `holders`): a step that keeps every one of
        // them, as nearly every nudge in a crowd does, steps into none,
        // and costs no look-up.
        let holds_other_anchors = lanes(self.present(map), size).any(|lane| {
            let grid = holder_grid(view, size, lane);
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
        let steps = 16;
        (1..steps)
            .rev()
            .map(|k| from.lerp(to, k as f32 / steps as f32))
            .find(|&p| !self.steps_in(map, view, from, p) && view.segment_clear(from, p))
            .unwrap_or(from)
    }
}

/// A passage's name: its map and class, the size it is for and its key
/// anchor.
type PassageId = (ClassMap, u8, Cell);

/// Whose turn it is at a passage this frame.
#[derive(Clone, Copy, Default)]
struct Turn {
    /// The side that may walk on to it.
    open: Option<usize>,
    /// The side in it, whose units at the mouth still go on.
    flow: Option<usize>,
}

/// A claim on a passage: the unit may be in it, going from `side`'s mouth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Claim {
    map: ClassMap,
    size: u8,
    key: Cell,
    side: u8,
}

impl Claim {
    fn passage(&self) -> PassageId {
        (self.map, self.size, self.key)
    }
}

/// What one unit near a passage sees of it this frame.
struct Sighting {
    unit: Entity,
    /// Its rank in the crowd ([`Ordinal::crowd_rank`](crate::order::Ordinal::crowd_rank)).
    order: u64,
    /// The passage ahead (or the one it is in), and its side of it.
    ahead: Claim,
    /// How far ahead the passage starts, in world units (0 inside it).
    distance: f32,
    /// The claim it held coming into the frame.
    held: Option<Claim>,
    waited: f32,
    /// The direction it means to go.
    heading: Vec2,
    /// Distance it should keep from the passage while waiting.
    hold: f32,
    /// Distance from the passage at which it claims it, its side's turn.
    claim: f32,
    speed: f32,
    /// Where it stands.
    position: Vec2,
    /// The lane out of the passage at its mouth on this unit's side.
    lane: Lane,
}

/// The lane the units coming out of a passage walk, kept clear by those
/// waiting at that mouth. In world space.
#[derive(Clone, Copy)]
struct Lane {
    /// The mouth's centre.
    mouth: Vec2,
    /// The way out (unit length).
    out: Vec2,
    /// Half the lane's width.
    half_width: f32,
    /// How far out from the mouth it runs.
    length: f32,
}

/// `FrontierSystems::Steering`, after the preferred velocities: units take
/// turns at one-lane passages (see the [module](self) docs). A unit that
/// must wait has its preferred velocity set to stand (or to back away from
/// the mouth) and counts as waiting, not as blocked.
///
/// Every unit looks ahead on its own, in parallel, reading the passage
/// cache as it stands; a look that needs what nobody has looked at yet
/// (under this version of the grid) is taken again on the frame's thread,
/// in mover order, once that is filled in. The turns are then worked out
/// from the units near passages, in their crowd rank.
#[inline(never)] // named in profiles: one entry per crowd-step system
pub(crate) fn take_turns(
    time: Res<Time>,
    settings: Res<AvoidanceSettings>,
    mut units: Query<AgentQuery>,
    maps: Maps<Without<Mover>>,
    mut passages: ResMut<Passages>,
) {
    let seconds = time.delta_secs();
    let passages = &mut *passages;
    passages.seen.clear();
    passages.note_sizes(&units);
    let views = AllViews::new(&maps);
    passages.catch_up(&views);
    let enabled = settings.enabled;
    let mut looked: Parallel<Vec<Result<Sighting, Missed>>> = Parallel::default();
    {
        let passages = &*passages;
        each_mover!(
            units,
            PARALLEL_WALKS,
            || looked.borrow_local_mut(),
            |local, item| look(passages, &views, enabled, item, local),
        );
    }
    let mut missed = Vec::new();
    for result in looked.drain() {
        match result {
            Ok(sighting) => passages.seen.push(sighting),
            Err(miss) => missed.push(miss),
        }
    }
    missed.sort_unstable_by_key(|&(order, unit, _)| (order, unit));
    for (order, unit, miss) in missed {
        match passages.look_again(&views, enabled, &units, (order, unit), miss) {
            Some(sighting) => passages.seen.push(sighting),
            None => {
                if let Ok(mut item) = units.get_mut(unit) {
                    item.motion.turn = TurnState::Free;
                }
            }
        }
    }
    passages.seen.sort_unstable_by_key(|s| (s.order, s.unit));
    let turns = turns(&passages.seen, settings.clamped().passage_turn);
    for sighting in &passages.seen {
        let Ok(AgentQueryItem { mut motion, .. }) = units.get_mut(sighting.unit) else {
            continue;
        };
        motion.near_passage = true;
        let turn = turns
            .get(&sighting.ahead.passage())
            .copied()
            .unwrap_or_default();
        let (state, preferred) = decide(sighting, turn, seconds);
        motion.turn = state;
        if let Some(preferred) = preferred {
            motion.preferred = preferred;
        }
    }
}

impl Passages {
    /// The sizes of each map's movers, per class, this frame.
    fn note_sizes(&mut self, units: &Query<AgentQuery>) {
        self.sizes.clear();
        // Most units of a run share a map and class: the table is asked
        // only when the ground changes.
        let mut run: Option<(ClassMap, u16)> = None;
        for AgentQueryReadOnlyItem {
            steering,
            motion,
            footprint,
            class,
            ..
        } in units
        {
            if let Some(map) = steering.map().or(motion.map) {
                let kind = unit_kind(footprint, class);
                let size = kind.size.clamp(1, MAX_UNIT_SIZE);
                let ground = (map, kind.class);
                match &mut run {
                    Some((last, bits)) if *last == ground => *bits |= 1 << size,
                    _ => {
                        if let Some((last, bits)) = run.replace((ground, 1 << size)) {
                            *self.sizes.entry(last).or_default() |= bits;
                        }
                    }
                }
            }
        }
        if let Some((last, bits)) = run {
            *self.sizes.entry(last).or_default() |= bits;
        }
    }

    /// Each map's cache, per class and size its movers have, caught up
    /// with the grid's edits.
    fn catch_up(&mut self, views: &AllViews) {
        for (&map, &present) in &self.sizes {
            let Some(view) = views.get(map.0) else {
                continue;
            };
            for lane in (1..=MAX_UNIT_SIZE).filter(|&k| present & (1 << k) != 0) {
                let class = view.for_kind(UnitKind::new(map.1, lane)).size_class();
                self.maps.entry((map, lane)).or_default().catch_up(&class);
            }
        }
    }

    /// A look that needed what nobody had looked at, taken again on the
    /// frame's thread once that is filled in (as often as it needs).
    fn look_again(
        &mut self,
        views: &AllViews,
        enabled: bool,
        units: &Query<AgentQuery>,
        (order, unit): (u64, Entity),
        mut miss: Miss,
    ) -> Option<Sighting> {
        loop {
            if !self.fill(views, miss) {
                return None;
            }
            let item = units.get(unit).ok()?;
            let looker = Looker::new(
                views,
                enabled,
                (order, unit),
                item.mover,
                item.transform,
                item.steering,
                item.motion,
                item.footprint,
                item.class,
                item.avoidance,
            )?;
            match self.sight(&looker) {
                Err(again) => miss = again,
                Ok(sighting) => return sighting,
            }
        }
    }
}

/// Where a mover stands with the one-lane passages, as the turns of this
/// frame left it ([`take_turns`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) enum TurnState {
    /// No passage ahead, or its way on is open.
    #[default]
    Free,
    /// Waiting its turn at a passage, `waited` seconds so far.
    Waiting { waited: f32 },
    /// Holding a claim on a passage: in it, or at its mouth about to go in
    /// (the others make way).
    Crossing(Claim),
}

impl TurnState {
    /// The passage it holds, if any.
    pub(crate) fn claim(&self) -> Option<Claim> {
        match self {
            TurnState::Crossing(claim) => Some(*claim),
            _ => None,
        }
    }

    /// Whether it waits its turn this frame.
    pub(crate) fn waiting(&self) -> bool {
        matches!(self, TurnState::Waiting { .. })
    }

    /// Seconds it has waited for its turn so far.
    fn waited(&self) -> f32 {
        match self {
            TurnState::Waiting { waited } => *waited,
            _ => 0.0,
        }
    }
}

/// Who is at a passage this frame, per side: how many are in it (or hold
/// it), and the longest any has waited (with the rank of the first of
/// those, to break ties).
#[derive(Default)]
struct Traffic {
    inside: [u32; 2],
    waited: [Option<(f32, u64)>; 2],
}

/// Whose turn it is at each passage someone sees this frame.
fn turns(seen: &[Sighting], turn: f32) -> HashMap<PassageId, Turn> {
    let mut traffic: HashMap<PassageId, Traffic> = HashMap::new();
    for sighting in seen {
        let ahead = sighting.ahead;
        let entry = traffic.entry(ahead.passage()).or_default();
        let side = ahead.side as usize;
        if sighting.held == Some(ahead) || sighting.distance <= 0.0 {
            entry.inside[side] += 1;
        } else {
            let candidate = (sighting.waited, sighting.order);
            let better = entry.waited[side]
                .is_none_or(|(w, u)| candidate.0 > w || candidate.0 == w && candidate.1 < u);
            if better {
                entry.waited[side] = Some(candidate);
            }
        }
    }
    traffic
        .iter()
        .map(|(&passage, t)| (passage, turn_at(t, turn)))
        .collect()
}

/// Whose turn it is at a passage with `traffic`, turns lasting `turn`
/// seconds: the side in it keeps it (and its units at the mouth go on)
/// until the other side has waited a turn (two for those at the mouth);
/// with nobody in it, the side that waited longer (on a tie, the side of
/// the unit ranked first); with units of both sides in it, neither.
fn turn_at(traffic: &Traffic, turn: f32) -> Turn {
    let waited = |side: usize| traffic.waited[side].map_or(-1.0, |w| w.0);
    let inside = (traffic.inside[0] > 0, traffic.inside[1] > 0);
    let flow = match inside {
        (true, false) => (waited(1) < 2.0 * turn).then_some(0),
        (false, true) => (waited(0) < 2.0 * turn).then_some(1),
        _ => None,
    };
    let open = match inside {
        (true, true) => None,
        (true, false) => (waited(1) < turn).then_some(0),
        (false, true) => (waited(0) < turn).then_some(1),
        (false, false) => match (traffic.waited[0], traffic.waited[1]) {
            (Some(a), Some(b)) => Some(if a.0 > b.0 || a.0 == b.0 && a.1 < b.1 {
                0
            } else {
                1
            }),
            (Some(_), None) => Some(0),
            (None, _) => Some(1),
        },
    };
    Turn { open, flow }
}

/// What a unit near a passage does this frame, given whose `turn` it is:
/// a unit in the passage, or holding it, keeps its claim; one whose side
/// may go claims it at the mouth (and walks on toward it before that);
/// the others wait, `seconds` longer, with the velocity they wait at.
fn decide(sighting: &Sighting, turn: Turn, seconds: f32) -> (TurnState, Option<Vec2>) {
    let ahead = sighting.ahead;
    if sighting.held == Some(ahead) || sighting.distance <= 0.0 {
        return (TurnState::Crossing(ahead), None);
    }
    let mine = Some(ahead.side as usize);
    let at_mouth = sighting.distance <= sighting.claim;
    if turn.open == mine || turn.flow == mine && at_mouth {
        let state = if at_mouth {
            TurnState::Crossing(ahead)
        } else {
            TurnState::Free
        };
        return (state, None);
    }
    let waited = sighting.waited + seconds;
    (
        TurnState::Waiting { waited },
        Some(waiting_velocity(sighting)),
    )
}

/// How far out of a passage's mouth (in cells) its lane is kept clear by
/// those waiting.
const LANE_LENGTH: f32 = 5.0;

/// How a unit waiting its turn at a passage moves: out of the lane the
/// units coming out of the passage walk (sideways, to its own side of it),
/// back from the mouth if it stands too near, else not at all.
fn waiting_velocity(sighting: &Sighting) -> Vec2 {
    let slow = 0.5 * sighting.speed;
    let lane = sighting.lane;
    if lane.out != Vec2::ZERO {
        let offset = sighting.position - lane.mouth;
        let along = offset.dot(lane.out);
        let aside = lane.out.perp_dot(offset);
        if (-lane.half_width..lane.length).contains(&along) && aside.abs() < lane.half_width {
            // To the nearer side; dead on the lane's middle, to its left
            // (the same for every unit, so they do not block each other).
            let side = if aside < 0.0 { -1.0 } else { 1.0 };
            return lane.out.perp() * side * slow;
        }
    }
    if sighting.distance < sighting.hold {
        -sighting.heading * slow
    } else {
        Vec2::ZERO
    }
}

/// Corners ahead a unit looks along, at most.
const CORNERS_AHEAD: usize = 4;

/// The points a unit means to walk through, from where it stands: the
/// first of `points`, as many as the count says.
fn way_ahead(steering: &Steering, position: Vec2) -> ([Vec2; CORNERS_AHEAD + 1], usize) {
    let mut way = [position; CORNERS_AHEAD + 1];
    let mut count = 1;
    match steering {
        Steering::Idle => {}
        Steering::Instinct { goal, .. } => {
            way[1] = *goal;
            count = 2;
        }
        Steering::Following { route, .. } => {
            for corner in route.remaining().take(CORNERS_AHEAD) {
                way[count] = corner;
                count += 1;
            }
        }
    }
    (way, count)
}

/// The first passage on `way` within `reach` world units: its index, the
/// first of its anchors met, and how far along the way that anchor starts
/// (0 when the unit stands in it); or what nobody has looked at yet.
fn look_ahead(
    view: &MapView,
    lane: u8,
    passages: &PassageMap,
    key: (ClassMap, u8),
    position: Vec2,
    way: &[Vec2],
    reach: f32,
) -> Result<Option<(u32, Cell, f32)>, Miss> {
    let class = view.for_size(lane).size_class();
    let cells = view.for_size(1);
    let cell = view.layout.cell_size.abs().min_element();
    let Some(here) = cells.cell_at(position) else {
        return Ok(None);
    };
    let near = (reach / cell).ceil() as u32 + lane as u32;
    match passages.lanes_near(here, near) {
        Ok(true) => {}
        Ok(false) => return Ok(None),
        Err((bx, by)) => return Err(Miss::Block(key, bx, by)),
    }
    let size = view.size();
    let step = 0.25 * cell;
    let mut last = None;
    let mut travelled = 0.0;
    let check = |at: Vec2, travelled: f32, last: &mut Option<Cell>| {
        let Some(spot) = cells.cell_at(at) else {
            return Ok(None);
        };
        if *last == Some(spot) {
            return Ok(None);
        }
        *last = Some(spot);
        let mut missed = None;
        let found = held_in(view, at, size, lane, |anchor| {
            match passages.passage_at(&class, anchor) {
                Ok(index) => index.map(|index| (index, anchor, travelled)),
                Err(chain) => {
                    missed = Some(Miss::Chain(key, chain));
                    None
                }
            }
        });
        missed.map_or(Ok(found), Err)
    };
    if let Some(found) = check(position, 0.0, &mut last)? {
        return Ok(Some(found));
    }
    for pair in way.windows(2) {
        let (from, to) = (pair[0], pair[1]);
        let length = from.distance(to);
        let mut along = 0.0;
        while along < length {
            along = (along + step).min(length);
            if travelled + along > reach {
                return Ok(None);
            }
            let at = from.lerp(to, along / length);
            if let Some(found) = check(at, travelled + along, &mut last)? {
                return Ok(Some(found));
            }
        }
        travelled += length;
    }
    Ok(None)
}

/// One unit's look ahead for passages, on its own: what it sees goes to
/// `seen` (or what it missed, to be looked at again); a unit with no
/// passage near has its claim dropped here.
#[inline(never)] // the parallel body of `take_turns`, named in profiles
fn look(
    passages: &Passages,
    views: &AllViews,
    enabled: bool,
    item: AgentQueryItem,
    seen: &mut Vec<Result<Sighting, Missed>>,
) {
    let mut motion = item.motion;
    motion.near_passage = false;
    motion.heading = motion.preferred.normalize_or_zero();
    let looker = Looker::new(
        views,
        enabled,
        (item.ordinal.crowd_rank(), item.entity),
        item.mover,
        item.transform,
        item.steering,
        &motion,
        item.footprint,
        item.class,
        item.avoidance,
    );
    let Some(looker) = looker else {
        motion.turn = TurnState::Free;
        return;
    };
    motion.heading = looker.heading;
    match passages.sight(&looker) {
        Ok(Some(sighting)) => seen.push(Ok(sighting)),
        Ok(None) => motion.turn = TurnState::Free,
        Err(miss) => seen.push(Err((item.ordinal.crowd_rank(), item.entity, miss))),
    }
}

/// A look that needs what nobody has looked at yet: the unit's place in
/// the crowd, the unit, and what it needs.
type Missed = (u64, Entity, Miss);

/// What taking turns reads of one unit.
struct Looker<'a> {
    unit: Entity,
    /// Its rank in the crowd ([`Ordinal::crowd_rank`](crate::order::Ordinal::crowd_rank)).
    order: u64,
    map: ClassMap,
    /// Its map, for its class and size.
    view: MapView<'a>,
    position: Vec2,
    /// The points it means to walk through, from where it stands.
    way: ([Vec2; CORNERS_AHEAD + 1], usize),
    /// The direction it means to go.
    heading: Vec2,
    /// The claim it holds coming into the frame.
    claim: Option<Claim>,
    waited: f32,
    radius: f32,
    speed: f32,
}

impl<'a> Looker<'a> {
    /// A unit as taking turns sees it, if it takes turns: it is on a map
    /// and avoids others (`enabled`: avoidance is on).
    #[expect(clippy::too_many_arguments, reason = "one unit's components")]
    fn new(
        views: &AllViews<'a>,
        enabled: bool,
        (order, unit): (u64, Entity),
        mover: &Mover,
        transform: &Transform,
        steering: &Steering,
        motion: &Motion,
        footprint: Option<&Footprint>,
        class: Option<&MovementClass>,
        avoidance: Option<&Avoidance>,
    ) -> Option<Self> {
        let avoids = avoidance.is_none_or(|a| a.enabled);
        let map = steering.map()?;
        let view = views.get(map)?.for_kind(unit_kind(footprint, class));
        let map = class_map(map, &view);
        if !avoids || !enabled {
            return None;
        }
        let position = transform.translation.truncate();
        let way = way_ahead(steering, position);
        let heading = way.0[..way.1]
            .iter()
            .map(|&p| p - position)
            .find(|d| d.length_squared() > 1e-8)
            .map_or(Vec2::ZERO, Vec2::normalize);
        let cell = view.layout.cell_size.abs().min_element();
        Some(Self {
            unit,
            order,
            map,
            view,
            position,
            way,
            heading,
            claim: motion.turn.claim(),
            waited: motion.turn.waited(),
            radius: body_radius(avoidance, footprint, cell),
            speed: speed_of(mover, cell),
        })
    }
}

impl Passages {
    /// What `looker` sees of the passages ahead: `None` where none is near,
    /// or what nobody has looked at yet.
    fn sight(&self, looker: &Looker) -> Result<Option<Sighting>, Miss> {
        let (map, view, position, radius) =
            (looker.map, looker.view, looker.position, looker.radius);
        let cell = view.layout.cell_size.abs().min_element();
        let found = match self.nearest_ahead(looker)? {
            Some(found) => Some(found),
            None => self.mouth_held(looker),
        };
        let Some((lane, (index, first, distance))) = found else {
            return Ok(None);
        };
        let lane_view = view.for_size(lane);
        let Some(passage) = self
            .maps
            .get(&(map, lane))
            .and_then(|m| m.passages.get(index as usize))
        else {
            return Ok(None);
        };
        let key = passage.key;
        let held = looker.claim.filter(|c| c.passage() == (map, lane, key));
        let side = match held {
            Some(claim) => claim.side,
            None => side_of(
                &lane_view,
                passage,
                first,
                distance,
                position,
                looker.heading,
            ),
        };
        // The lane out of the passage on this side: from the end's
        // footprint centre through the mouth's, as wide as the passage's
        // biggest unit.
        let (end, mouth) = (
            lane_view.cell_to_world(passage.ends[side as usize]),
            lane_view.cell_to_world(passage.mouths[side as usize]),
        );
        let lane_radius = 0.45 * lane as f32 * cell;
        Ok(Some(Sighting {
            unit: looker.unit,
            order: looker.order,
            ahead: Claim {
                map,
                size: lane,
                key,
                side,
            },
            distance,
            lane: Lane {
                mouth,
                out: (mouth - end).normalize_or_zero(),
                half_width: radius.max(lane_radius) + 0.5 * lane as f32 * cell,
                length: LANE_LENGTH * cell,
            },
            position,
            held: looker.claim,
            waited: looker.waited,
            heading: looker.heading,
            hold: radius + CLEAR_OF_MOUTH * cell,
            claim: radius + CLAIM_AT * cell,
            speed: looker.speed,
        }))
    }

    /// The nearest passage ahead of `looker` (its lane's size, and the
    /// passage, the anchor where it starts and how far ahead), of its size
    /// or a bigger one (its own size first of two as near): infantry
    /// crossing a bridge two cells wide (one lane while a tank is about)
    /// towards a gap one cell wide are on the bridge till they are off it.
    #[allow(clippy::type_complexity)]
    fn nearest_ahead(&self, looker: &Looker) -> Result<Option<(u8, (u32, Cell, f32))>, Miss> {
        let (map, view, position) = (looker.map, looker.view, looker.position);
        let way = &looker.way.0[..looker.way.1];
        let cell = view.layout.cell_size.abs().min_element();
        let size = view.size();
        let reach = looker.radius + LOOK_AHEAD * cell;
        let mut found: Option<(u8, (u32, Cell, f32))> = None;
        for k in lanes(self.present(map), size) {
            let Some(map_passages) = self.maps.get(&(map, k)) else {
                return Err(Miss::Map((map, k)));
            };
            if let Some(ahead) = look_ahead(&view, k, map_passages, (map, k), position, way, reach)?
                && found.is_none_or(|(_, nearest)| ahead.2 < nearest.2)
            {
                found = Some((k, ahead));
            }
            // Nothing is nearer than a passage it stands in.
            if found.is_some_and(|(_, nearest)| nearest.2 <= 0.0) {
                break;
            }
        }
        Ok(found)
    }

    /// A unit that has come out of the passage it holds keeps it while it
    /// stands in the mouth, so that nobody comes in at it: that passage,
    /// as [`nearest_ahead`](Self::nearest_ahead) gives one.
    fn mouth_held(&self, looker: &Looker) -> Option<(u8, (u32, Cell, f32))> {
        let (map, view, position) = (looker.map, looker.view, looker.position);
        let held = looker.claim?;
        let size = view.size();
        if held.map != map || held.size < size {
            return None;
        }
        let map_passages = self.maps.get(&(map, held.size))?;
        holders(&view, position, size, held.size).find_map(|here| {
            map_passages
                .passages
                .iter()
                .position(|p| p.key == held.key && p.mouths.contains(&here))
                .map(|index| (held.size, (index as u32, here, 0.0)))
        })
    }

    /// Fills in what a look missed; whether it could (the map has a view).
    fn fill(&mut self, views: &AllViews, miss: Miss) -> bool {
        let key = match miss {
            Miss::Map(key) | Miss::Block(key, ..) | Miss::Chain(key, _) => key,
        };
        let Some(view) = views.get(key.0.0) else {
            return false;
        };
        let class = view.for_kind(UnitKind::new(key.0.1, key.1)).size_class();
        let cached = self.maps.entry(key).or_default();
        match miss {
            Miss::Map(_) => cached.catch_up(&class),
            Miss::Block(_, bx, by) => cached.fill_block(&class, bx, by),
            Miss::Chain(_, cell) => cached.walk_chain(&class, cell),
        }
        true
    }
}

/// Which mouth a unit at `position` enters `passage` from: for a unit
/// outside, the mouth of the end it meets first (`first`; the nearer mouth
/// when that end has both); for one already inside without a claim, the
/// mouth behind it.
fn side_of(
    view: &MapView,
    passage: &Passage,
    first: Cell,
    distance: f32,
    position: Vec2,
    heading: Vec2,
) -> u8 {
    let mouth = |side: usize| view.cell_to_world(passage.mouths[side]);
    let nearer = || {
        if mouth(0).distance_squared(position) <= mouth(1).distance_squared(position) {
            0
        } else {
            1
        }
    };
    if distance <= 0.0 {
        let behind = |side: usize| (mouth(side) - position).dot(heading);
        return if behind(0) <= behind(1) { 0 } else { 1 };
    }
    match (passage.ends[0] == first, passage.ends[1] == first) {
        (true, false) => 0,
        (false, true) => 1,
        _ => nearer(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TURN: f32 = 4.0;

    fn traffic(inside: [u32; 2], waited: [Option<(f32, u64)>; 2]) -> Traffic {
        Traffic { inside, waited }
    }

    /// Whose turn it is at a passage: each row is who is in it and who
    /// waits at each side, and the side that may walk on to it and the
    /// side whose units at the mouth still go on.
    #[test]
    fn whose_turn_it_is() {
        type Case = (&'static str, Traffic, Option<usize>, Option<usize>);
        let cases: [Case; 9] = [
            ("nobody", traffic([0, 0], [None, None]), Some(1), None),
            (
                "one side waits",
                traffic([0, 0], [Some((0.5, 9)), None]),
                Some(0),
                None,
            ),
            (
                "the longer wait goes first",
                traffic([0, 0], [Some((0.5, 1)), Some((1.5, 2))]),
                Some(1),
                None,
            ),
            (
                "a tie goes to the unit ranked first",
                traffic([0, 0], [Some((1.0, 7)), Some((1.0, 3))]),
                Some(1),
                None,
            ),
            (
                "side 0 crosses",
                traffic([2, 0], [None, None]),
                Some(0),
                Some(0),
            ),
            (
                "side 0 crosses, side 1 waited less than a turn",
                traffic([2, 0], [None, Some((3.9, 1))]),
                Some(0),
                Some(0),
            ),
            (
                "side 1 waited a turn: side 0 closes, its mouth still goes",
                traffic([2, 0], [None, Some((4.5, 1))]),
                None,
                Some(0),
            ),
            (
                "side 1 waited two turns: side 0's mouth stops too",
                traffic([2, 0], [None, Some((8.5, 1))]),
                None,
                None,
            ),
            (
                "both sides in it",
                traffic([1, 1], [Some((9.0, 1)), None]),
                None,
                None,
            ),
        ];
        for (name, at, open, flow) in cases {
            let turn = turn_at(&at, TURN);
            assert_eq!((turn.open, turn.flow), (open, flow), "{name}");
        }
    }

    fn sighting(side: u8, distance: f32, held: bool, waited: f32) -> Sighting {
        let ahead = Claim {
            map: (Entity::from_raw_u32(1).unwrap(), ClassId::DEFAULT),
            size: 1,
            key: Cell::new(10, 10),
            side,
        };
        Sighting {
            unit: Entity::from_raw_u32(2).unwrap(),
            order: 5,
            ahead,
            distance,
            held: held.then_some(ahead),
            waited,
            heading: Vec2::X,
            hold: 2.0,
            claim: 1.0,
            speed: 4.0,
            position: Vec2::ZERO,
            lane: Lane {
                mouth: Vec2::new(50.0, 50.0),
                out: Vec2::ZERO,
                half_width: 0.5,
                length: 5.0,
            },
        }
    }

    /// What a unit near a passage does: each row is where it stands, whose
    /// turn it is, and what it becomes (and whether it waits, backing off
    /// when close to the mouth).
    #[test]
    fn what_a_unit_at_a_passage_does() {
        let open = |side| Turn {
            open: Some(side),
            flow: None,
        };
        let flowing = |side| Turn {
            open: None,
            flow: Some(side),
        };
        let claim = sighting(0, 0.0, false, 0.0).ahead;
        type Case = (&'static str, Sighting, Turn, TurnState, Option<Vec2>);
        let cases: [Case; 7] = [
            (
                "in it",
                sighting(0, 0.0, false, 0.0),
                open(1),
                TurnState::Crossing(claim),
                None,
            ),
            (
                "holds it",
                sighting(0, 3.0, true, 0.0),
                open(1),
                TurnState::Crossing(claim),
                None,
            ),
            (
                "its side's turn, far",
                sighting(0, 3.0, false, 0.0),
                open(0),
                TurnState::Free,
                None,
            ),
            (
                "its side's turn, at the mouth",
                sighting(0, 0.5, false, 0.0),
                open(0),
                TurnState::Crossing(claim),
                None,
            ),
            (
                "its side still flows at the mouth",
                sighting(0, 0.5, false, 0.0),
                flowing(0),
                TurnState::Crossing(claim),
                None,
            ),
            (
                "the other side's turn, far: stands",
                sighting(0, 3.0, false, 1.0),
                open(1),
                TurnState::Waiting { waited: 1.5 },
                Some(Vec2::ZERO),
            ),
            (
                "the other side's turn, close: backs off",
                sighting(0, 1.5, false, 0.0),
                flowing(0),
                TurnState::Waiting { waited: 0.5 },
                Some(Vec2::new(-2.0, 0.0)),
            ),
        ];
        for (name, seen, turn, state, preferred) in cases {
            assert_eq!(decide(&seen, turn, 0.5), (state, preferred), "{name}");
        }
    }
}
