//! Whose way it is between two movers: what avoidance reads of a mover
//! ([`Agent`]) and the one rule ([`priority`]) that ORCA's shares, the
//! gaps kept and the separation of bodies all ask.

use crate::core::ClassId;
use bevy::prelude::*;

/// What [`avoid`](super::avoid) reads of one mover.
#[derive(Clone, Copy)]
pub(crate) struct Agent {
    pub(crate) entity: Entity,
    /// Its rank in the crowd ([`Ordinal::crowd_rank`](crate::order::Ordinal::crowd_rank)):
    /// agents are taken in this order, and the one ranked later yields
    /// where a rule needs one to.
    pub(crate) order: u64,
    pub(crate) map: Option<Entity>,
    /// Its movement class: the walls it keeps clear of are those of the
    /// ground its class may not enter.
    pub(crate) class: ClassId,
    /// Its footprint's side, in cells.
    pub(crate) size: u8,
    pub(crate) position: Vec2,
    pub(crate) velocity: Vec2,
    pub(crate) preferred: Vec2,
    pub(crate) radius: f32,
    pub(crate) speed: f32,
    /// Whether it steers round others this frame.
    pub(crate) avoids: bool,
    /// Whether it pushes through others this frame (it still avoids them,
    /// but they take most of the avoiding).
    pub(crate) pushing: bool,
    /// The way it means to go (unit length, or zero).
    pub(crate) heading: Vec2,
    /// Whether it waits its turn at a passage, or queued behind one that
    /// does (last frame).
    pub(crate) held_up: bool,
    /// Whether it stands (no order).
    pub(crate) idle: bool,
    /// Whether a one-lane passage lies just ahead (which it may enter only
    /// with a claim on it).
    pub(crate) near_passage: bool,
    /// Whether it holds a passage: it is crossing one, or about to, and
    /// the others, those waiting at the far end first, make way for it.
    pub(crate) crossing: bool,
    /// How far (0 to 1) it is into the time it may make no headway before
    /// pushing through.
    pub(crate) blocked: f32,
    /// Whether a mover holds the slot this agent stands for (and stands
    /// somewhere finite): free slots are skipped.
    pub(crate) live: bool,
}

impl Agent {
    /// A free slot's agent.
    pub(super) const ABSENT: Agent = Agent {
        entity: Entity::PLACEHOLDER,
        order: u64::MAX,
        map: None,
        class: ClassId::DEFAULT,
        size: 1,
        position: Vec2::ZERO,
        velocity: Vec2::ZERO,
        preferred: Vec2::ZERO,
        radius: 0.0,
        speed: 0.0,
        avoids: false,
        pushing: false,
        heading: Vec2::ZERO,
        held_up: false,
        idle: true,
        near_passage: false,
        crossing: false,
        blocked: 0.0,
        live: false,
    };

    /// Whether it stands at rest and still: it needs no avoiding of its
    /// own until a moving unit comes its way and wakes it.
    pub(super) fn asleep(&self) -> bool {
        self.idle && self.preferred == Vec2::ZERO && self.velocity == Vec2::ZERO
    }
}

/// Whose way it is between two units: the one rule avoidance, the gaps
/// kept and the separation of bodies all ask, of `me` against `other`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Priority {
    /// `me`'s responsibility for avoiding `other` in ORCA (its share is
    /// this over the sum of both): its [`responsibility`], but all of it if
    /// it yields and none if `other` does.
    pub(crate) avoids: f32,
    /// How much of a pair's excess closing, or of an overlap, `me` gives
    /// up: its responsibility (so a unit crossing a passage, or pushing
    /// through, gives up little), all of it if it yields, but nothing if it
    /// does not avoid, nor if it pushes through against a standing unit
    /// (which is pushed aside instead).
    pub(crate) gives: f32,
    /// Whether `me` sees where `other` means to go rather than where it
    /// goes: a standing unit sees a moving one's, so that it makes way
    /// before the other reaches it; and everyone sees the intent of one
    /// pushing through or crossing a passage.
    pub(crate) sees_intent: bool,
    /// Whether, where one of the two cannot move (a wall, a passage's
    /// mouth), the other takes the whole overlap down to the squeeze even
    /// if it gives nothing otherwise: one of them pushes through or stands
    /// idle. (One that gives takes the rest in any case.)
    pub(crate) makes_way: bool,
    /// Whether `me`, pushing through deeper than the squeeze into `other`,
    /// is the one to step back (of two pushing through, the one that
    /// yields).
    pub(crate) steps_back: bool,
}

/// Whose way it is between `me` and `other` ([`Priority`]).
#[inline]
pub(super) fn priority(me: &Agent, other: &Agent) -> Priority {
    let avoids = if yields(other, me) {
        1e-3
    } else if yields(me, other) {
        1.0
    } else {
        responsibility(me)
    };
    let gives = if !me.avoids || me.pushing && other.idle {
        0.0
    } else if yields(me, other) {
        1.0
    } else {
        responsibility(me)
    };
    Priority {
        avoids,
        gives,
        sees_intent: other.pushing || other.crossing && !me.crossing || me.idle && !other.idle,
        makes_way: me.pushing || other.pushing || me.idle || other.idle,
        steps_back: if me.pushing && other.pushing {
            yields(me, other)
        } else {
            me.pushing
        },
    }
}

/// Whether `me` makes way for `other` as any unit would, though both push
/// through: two units pushing through against each other (each in the
/// other's way in a narrow spot) would each leave the avoiding to the
/// other and stand for good, so the one ranked later in the crowd yields.
#[inline]
fn yields(me: &Agent, other: &Agent) -> bool {
    me.pushing && other.pushing && me.avoids && me.order > other.order
}

/// How far two bodies may stay pressed into each other after separation
/// where one of them cannot give way (a wall, a passage's mouth), as a
/// fraction of their radii's sum: the other (a unit pushing through, say)
/// presses on a little instead of stopping dead. 0.05 of the sum is 0.1 of
/// a radius between equals: the limit the separation holds its pairs to
/// (deeper, it holds them back; see `Separation::hold_back`).
pub(super) const SQUEEZE: f32 = 0.05;

/// A unit's share of the avoiding between two units is its responsibility
/// over the sum of both: a unit that does not avoid leaves all of it to the
/// others; one pushing through, most of it.
#[inline]
pub(super) fn responsibility(agent: &Agent) -> f32 {
    if !agent.avoids {
        1e-3
    } else if agent.pushing || agent.crossing {
        0.1
    } else {
        1.0
    }
}

/// The unit direction two units on one spot part along, the same for the
/// same pair (opposite for each of them).
pub(super) fn parting_direction(me: u64, other: u64) -> Vec2 {
    let (low, high) = (me.min(other), me.max(other));
    let mixed = low.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17)
        ^ high.wrapping_mul(0xD6E8_FEB8_6659_FD93);
    // A point of a square from the hash's bits, scaled to unit length: a
    // square root and a division only, so the same bits on every machine
    // (no sine or cosine). Half-integers: never the origin.
    let x = (mixed & 0xFFFF) as f32 - 32767.5;
    let y = ((mixed >> 16) & 0xFFFF) as f32 - 32767.5;
    let direction = Vec2::new(x, y).normalize();
    if me < other { -direction } else { direction }
}
