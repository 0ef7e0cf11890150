//! Whose way it is between two movers: what avoidance reads of a mover
//! ([`Agent`]) and the one rule ([`priority`]) that ORCA's shares, the
//! gaps kept and the separation of bodies all ask.

use crate::core::ClassId;
use bevy::prelude::*;

/// What [`avoid`](super::avoid) reads of one mover.
#[derive(Clone, Copy)]
pub(crate) struct Agent {
    pub(crate) entity: Entity,
    /// Its rank in the crowd ([`Ordinal::crowd_rank`](crate::ordinal::Ordinal::crowd_rank)):
    /// agents are taken in this order, and the one ranked later yields
    /// where a rule needs one to.
    pub(crate) rank: u64,
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
    /// The way it means to go (unit length, or zero).
    pub(crate) heading: Vec2,
    /// How far (0 to 1) it is into the time it may make no headway before
    /// pushing through.
    pub(crate) blocked: f32,
    /// Seconds since it, or the crowd in front of it, last gained ground
    /// ([`Headway::still`](crate::movement::state::headway::Headway::still));
    /// infinite for one standing, which carries no crowd's flow.
    pub(crate) still: f32,
    /// What it is this frame, in one word ([`Flags`]).
    pub(crate) flags: Flags,
    /// Where its order ends (not a number for one standing).
    pub(crate) goal: Vec2,
    /// The group order it is one of, if any.
    pub(crate) group: Option<Entity>,
}

/// What an agent is this frame, one bit each, in one word (as Box2D's
/// `b2BodyState` keeps one `flags` field): copied once from its
/// components by the snapshot, read through [`Agent`]'s methods.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Flags(u8);

impl Flags {
    /// It steers round others this frame.
    pub(crate) const AVOIDS: Flags = Flags(1);
    /// It pushes through others this frame (it still avoids them, but they
    /// take most of the avoiding).
    pub(crate) const PUSHING: Flags = Flags(1 << 1);
    /// It waits its turn at a passage, or is queued behind one that does
    /// (last frame).
    pub(crate) const HELD_UP: Flags = Flags(1 << 2);
    /// It stands (no order).
    pub(crate) const IDLE: Flags = Flags(1 << 3);
    /// A one-lane passage lies just ahead (which it may enter only with a
    /// claim on it).
    pub(crate) const NEAR_PASSAGE: Flags = Flags(1 << 4);
    /// It holds a passage: it is crossing one, or about to, and the
    /// others, those waiting at the far end first, make way for it.
    pub(crate) const CROSSING: Flags = Flags(1 << 5);
    /// A mover holds the seat this agent stands for (and stands somewhere
    /// finite): free seats are skipped.
    pub(crate) const LIVE: Flags = Flags(1 << 6);
    /// Its goal is near (within [`NEAR_GOAL`](crate::movement::tuning::NEAR_GOAL)
    /// cells): it keeps right only a little, not to circle a goal others
    /// crowd.
    pub(crate) const NEAR_GOAL: Flags = Flags(1 << 7);

    /// These flags with `flag` set or cleared.
    pub(crate) const fn with(self, flag: Flags, on: bool) -> Flags {
        if on {
            Flags(self.0 | flag.0)
        } else {
            Flags(self.0 & !flag.0)
        }
    }

    fn has(self, flag: Flags) -> bool {
        self.0 & flag.0 != 0
    }
}

impl Agent {
    /// A free seat's agent.
    pub(super) const ABSENT: Agent = Agent {
        entity: Entity::PLACEHOLDER,
        rank: u64::MAX,
        map: None,
        class: ClassId::DEFAULT,
        size: 1,
        position: Vec2::ZERO,
        velocity: Vec2::ZERO,
        preferred: Vec2::ZERO,
        radius: 0.0,
        speed: 0.0,
        heading: Vec2::ZERO,
        blocked: 0.0,
        still: f32::INFINITY,
        flags: Flags::IDLE,
        goal: Vec2::NAN,
        group: None,
    };

    /// Sets or clears `flag`.
    #[cfg(test)]
    pub(crate) fn set(&mut self, flag: Flags, on: bool) {
        self.flags = self.flags.with(flag, on);
    }

    /// Whether it steers round others this frame ([`Flags::AVOIDS`]).
    pub(crate) fn avoids(&self) -> bool {
        self.flags.has(Flags::AVOIDS)
    }

    /// Whether it pushes through others ([`Flags::PUSHING`]).
    pub(crate) fn pushing(&self) -> bool {
        self.flags.has(Flags::PUSHING)
    }

    /// Whether it is held up at a passage ([`Flags::HELD_UP`]).
    pub(crate) fn held_up(&self) -> bool {
        self.flags.has(Flags::HELD_UP)
    }

    /// Whether it stands with no order ([`Flags::IDLE`]).
    pub(crate) fn idle(&self) -> bool {
        self.flags.has(Flags::IDLE)
    }

    /// Whether a one-lane passage lies just ahead
    /// ([`Flags::NEAR_PASSAGE`]).
    pub(crate) fn near_passage(&self) -> bool {
        self.flags.has(Flags::NEAR_PASSAGE)
    }

    /// Whether it holds a passage ([`Flags::CROSSING`]).
    pub(crate) fn crossing(&self) -> bool {
        self.flags.has(Flags::CROSSING)
    }

    /// Whether its goal is near ([`Flags::NEAR_GOAL`]).
    pub(crate) fn near_goal(&self) -> bool {
        self.flags.has(Flags::NEAR_GOAL)
    }

    /// Whether a mover stands for it ([`Flags::LIVE`]).
    pub(crate) fn live(&self) -> bool {
        self.flags.has(Flags::LIVE)
    }

    /// Whether it stands at rest and still: it needs no avoiding of its
    /// own until a moving unit comes its way and wakes it.
    pub(super) fn asleep(&self) -> bool {
        self.idle() && self.preferred == Vec2::ZERO && self.velocity == Vec2::ZERO
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
    let gives = if !me.avoids() || me.pushing() && other.idle() {
        0.0
    } else if yields(me, other) {
        1.0
    } else {
        responsibility(me)
    };
    Priority {
        avoids,
        gives,
        sees_intent: other.pushing()
            || other.crossing() && !me.crossing()
            || me.idle() && !other.idle(),
        makes_way: me.pushing() || other.pushing() || me.idle() || other.idle(),
        steps_back: if me.pushing() && other.pushing() {
            yields(me, other)
        } else {
            me.pushing()
        },
    }
}

/// Whether `me` makes way for `other` as any unit would, though both push
/// through: two units pushing through against each other (each in the
/// other's way in a narrow spot) would each leave the avoiding to the
/// other and stand for good, so the one ranked later in the crowd yields.
#[inline]
fn yields(me: &Agent, other: &Agent) -> bool {
    me.pushing() && other.pushing() && me.avoids() && me.rank > other.rank
}

/// A unit's share of the avoiding between two units is its responsibility
/// over the sum of both: a unit that does not avoid leaves all of it to the
/// others; one pushing through, most of it.
#[inline]
pub(super) fn responsibility(agent: &Agent) -> f32 {
    if !agent.avoids() {
        1e-3
    } else if agent.pushing() || agent.crossing() {
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

/// The largest radius and speed of `agents`.
pub(super) fn widest_and_fastest(agents: &[Agent]) -> (f32, f32) {
    agents.iter().fold((0.0f32, 0.0f32), |(r, s), a| {
        (r.max(a.radius), s.max(a.speed))
    })
}
