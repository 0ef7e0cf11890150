//! Where a mover stands with the one-lane passages: the part of its
//! [`Motion`](super::Motion) that the turns stage
//! ([`passage`](crate::movement::passage)) keeps, and what the other
//! stages read of it ([`PassageState`]).

use bevy::prelude::*;

use crate::core::{Cell, ClassId};

/// A map as one movement class sees it: the map entity and the class.
/// Passages are found per class (a bridge is one lane to tanks, a river
/// mouth to boats), and units take turns with units of their class.
pub(crate) type ClassMap = (Entity, ClassId);

/// A passage's name: its map and class, the size it is for and its key
/// anchor.
pub(crate) type PassageId = (ClassMap, u8, Cell);

/// A claim on a passage: the unit may be in it, going from `side`'s mouth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct Claim {
    pub(crate) map: ClassMap,
    pub(crate) size: u8,
    pub(crate) key: Cell,
    pub(crate) side: u8,
}

impl Claim {
    pub(crate) fn passage(&self) -> PassageId {
        (self.map, self.size, self.key)
    }
}

/// Where a mover stands with the one-lane passages, as the turns of this
/// frame left it (the turns stage).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
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
    pub(crate) fn waited(&self) -> f32 {
        match self {
            TurnState::Waiting { waited } => *waited,
            _ => 0.0,
        }
    }
}

/// A mover's state at the one-lane passages: kept by the turns stage
/// (`take_turns`), and by avoidance for the one rule that needs the
/// neighbours it finds ([`queued`](crate::movement::passage)); read by
/// avoidance, the walk and [`Motion::state`](super::Motion::state).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct PassageState {
    /// The way the unit means to go (unit length, or zero when it stands).
    pub(crate) heading: Vec2,
    /// Whether a one-lane passage lies just ahead (or it is in one).
    pub(crate) near: bool,
    /// Whether it is queued behind a unit that waits (or is queued), going
    /// the same way.
    pub(crate) queued: bool,
    /// Where it stands with the one-lane passages: free, waiting its turn
    /// (and how long so far), or crossing with its claim.
    pub(crate) turn: TurnState,
}

impl PassageState {
    /// Whether it waits its turn at a passage, or is queued behind a unit
    /// that waits (going the same way): held up, not blocked.
    pub(crate) fn held_up(&self) -> bool {
        self.turn.waiting() || self.queued
    }

    /// Whether it holds a passage (in it, or at its mouth about to go in).
    pub(crate) fn crossing(&self) -> bool {
        self.turn.claim().is_some()
    }
}

#[cfg(feature = "serialize")]
crate::remap::remap_fields!(Claim { map });
#[cfg(feature = "serialize")]
crate::remap::remap_fields!(PassageState { turn });

#[cfg(feature = "serialize")]
impl crate::remap::Remap for TurnState {
    fn remap(&mut self, to: &mut dyn FnMut(Entity) -> Entity) {
        if let TurnState::Crossing(claim) = self {
            crate::remap::Remap::remap(claim, to);
        }
    }
}
