//! Turns at one-lane passages (stage 3,
//! [`CrowdSystems::Turns`](super::CrowdSystems::Turns)): where the way is
//! one unit wide (a bridge, a gap in a wall, a corridor), two units going
//! opposite ways cannot pass each other and no amount of avoidance helps.
//! Units take turns instead, as drivers do at a one-lane bridge.
//!
//! A *one-lane* anchor is a walkable anchor with at most two moves out of
//! it: a unit there can only go on or back. A passage is a chain of such
//! anchors with a *mouth* at each end, the anchor outside it that opens
//! onto it; they are found by looking along each unit's way, per size
//! class (a bridge two cells wide is one lane for a tank), and cached until
//! the grid changes.
//!
//! Each frame every moving unit looks a short way ahead along its route
//! (the rules below are worked out from the frame's start, in crowd
//! rank, so the same inputs give the same turns whatever the entity ids).
//!
//! - A unit that sees a passage ahead walks on to its mouth if it is its
//!   side's turn, and *claims* the passage there; it holds the claim
//!   through the passage and while it stands in the far mouth.
//! - It is a side's turn when the passage is empty and that side's first
//!   unit has waited longest, or when the passage carries that side's
//!   units and the other side's first unit has waited less than
//!   [`CrowdSettings::passage_turn`] seconds. A side whose next unit
//!   comes within a second and a half of the mouth is a platoon: it keeps
//!   the turn up to three turns of the other side's waiting, as a stream
//!   of cars holds a traffic light green, so the passage is emptied for a
//!   change of side less often. A unit already at the mouth when the turn
//!   passes goes on, for one more turn at most, so that none is left
//!   standing in the way of its own side's units.
//! - Otherwise it waits: clear of the way out of the passage (stepping
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
//!
//! | file | what it holds |
//! |---|---|
//! | `mod.rs` | `take_turns`: every unit looks ahead, then the turns are worked out and decided, in crowd rank |
//! | `map.rs` | the `Passages` cache: one-lane anchors block by block, chains with their mouths, which anchors hold a unit, where a walk stops outside |
//! | `sight.rs` | what one unit sees of the passages ahead (`Sighting`, its `Exit`) |
//! | `turns.rs` | whose turn it is, what a unit near a passage does, and who is queued behind one held up: pure rules, table-tested |

mod map;
mod sight;
mod turns;

use bevy::prelude::*;
use bevy::utils::Parallel;

use super::body::{AgentQuery, AgentQueryItem};
use super::parallel::each_mover;
use super::settings::CrowdSettings;
use super::state::turn::{ClassMap, TurnState};
use super::state::{MapsBesideUnits, Motion, Steering};
use super::tuning::PARALLEL_WALKS;
use crate::core::{MAX_UNIT_SIZE, UnitKind};
use crate::maps::AllViews;
use crate::pathfinding::{Footprint, MovementClass, unit_kind};
use map::Miss;
pub(crate) use map::Passages;
use sight::{Looker, Missed, Sighting};
pub(crate) use turns::{InQueue, queued_behind};
use turns::{decide, turns};

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
    settings: Res<CrowdSettings>,
    mut units: Query<AgentQuery>,
    maps: MapsBesideUnits,
    mut passages: ResMut<Passages>,
    // The frame's sightings, kept so no frame allocates them anew.
    mut seen: Local<Vec<Sighting>>,
) {
    let seconds = time.delta_secs();
    let passages = &mut *passages;
    seen.clear();
    passages.note_sizes(&mut units);
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
            Ok(sighting) => seen.push(sighting),
            Err(miss) => missed.push(miss),
        }
    }
    missed.sort_unstable_by_key(|&(rank, unit, _)| (rank, unit));
    for (rank, unit, miss) in missed {
        match passages.look_again(&views, enabled, &units, (rank, unit), miss) {
            Some(sighting) => seen.push(sighting),
            None => {
                if let Ok(mut item) = units.get_mut(unit) {
                    item.motion.passage.turn = TurnState::Free;
                }
            }
        }
    }
    seen.sort_unstable_by_key(|s| (s.rank, s.unit));
    let turns = turns(&seen, settings.clamped().passage_turn);
    for sighting in &seen {
        let Ok(AgentQueryItem { mut motion, .. }) = units.get_mut(sighting.unit) else {
            continue;
        };
        motion.passage.near = true;
        let turn = turns
            .get(&sighting.ahead.passage())
            .copied()
            .unwrap_or_default();
        let (state, preferred) = decide(sighting, turn, seconds);
        motion.passage.turn = state;
        if let Some(preferred) = preferred {
            motion.preferred = preferred;
        }
    }
}

impl Passages {
    /// The sizes of each map's movers, per class, this frame (read through
    /// a narrower query than the movers' whole: the pass is serial).
    fn note_sizes(&mut self, units: &mut Query<AgentQuery>) {
        self.sizes.clear();
        let mut lens = units.transmute_lens::<(
            &Steering,
            &Motion,
            Option<&Footprint>,
            Option<&MovementClass>,
        )>();
        // Most units of a run share a map and class: the table is asked
        // only when the ground changes.
        let mut run: Option<(ClassMap, u16)> = None;
        for (steering, motion, footprint, class) in &lens.query() {
            if let Some(map) = steering.map().or(motion.map) {
                let kind = unit_kind(footprint, class);
                let size = kind.size.clamp(1, MAX_UNIT_SIZE);
                let class_map = (map, kind.class);
                match &mut run {
                    Some((last, bits)) if *last == class_map => *bits |= 1 << size,
                    _ => {
                        if let Some((last, bits)) = run.replace((class_map, 1 << size)) {
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
            for width in (1..=MAX_UNIT_SIZE).filter(|&k| present & (1 << k) != 0) {
                let size_class = view.for_kind(UnitKind::new(map.1, width)).size_class();
                self.maps
                    .entry((map, width))
                    .or_default()
                    .catch_up(&size_class);
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
        (rank, unit): (u64, Entity),
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
                (rank, unit),
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
    motion.passage.near = false;
    motion.passage.heading = motion.preferred.normalize_or_zero();
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
        motion.passage.turn = TurnState::Free;
        return;
    };
    motion.passage.heading = looker.heading;
    match passages.sight(&looker) {
        Ok(Some(sighting)) => seen.push(Ok(sighting)),
        Ok(None) => motion.passage.turn = TurnState::Free,
        Err(miss) => seen.push(Err((item.ordinal.crowd_rank(), item.entity, miss))),
    }
}
