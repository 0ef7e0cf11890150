//! Whose turn it is at a passage ([`turns`], [`turn_at`]) and what a unit
//! near one does about it ([`decide`]): pure rules, table-tested.

use bevy::platform::collections::HashMap;
use bevy::prelude::*;

use super::sight::Sighting;
use crate::movement::state::turn::{PassageId, TurnState};
use crate::movement::tuning::{
    PLATOON_GAP, PLATOON_TURNS, QUEUE_AHEAD, QUEUE_REACH, WAITING_SPEED,
};

/// Whose turn it is at a passage this frame.
#[derive(Clone, Copy, Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct Turn {
    /// The side that may walk on to it.
    open: Option<usize>,
    /// The side in it, whose units at the mouth still go on.
    flow: Option<usize>,
}

/// Who is at a passage this frame, per side: how many are in it (or hold
/// it), the longest any has waited (with the rank of the first of those,
/// to break ties), and the seconds the next to come needs to reach the
/// point where it claims the passage.
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct Traffic {
    inside: [u32; 2],
    waited: [Option<(f32, u64)>; 2],
    next: [f32; 2],
}

impl Default for Traffic {
    fn default() -> Self {
        Traffic {
            inside: [0; 2],
            waited: [None; 2],
            next: [f32::INFINITY; 2],
        }
    }
}

/// Whose turn it is at each passage someone sees this frame.
pub(super) fn turns(seen: &[Sighting], turn: f32) -> HashMap<PassageId, Turn> {
    let mut traffic: HashMap<PassageId, Traffic> = HashMap::new();
    for sighting in seen {
        let ahead = sighting.ahead;
        let entry = traffic.entry(ahead.passage()).or_default();
        let side = ahead.side as usize;
        if sighting.held == Some(ahead) || sighting.distance <= 0.0 {
            entry.inside[side] += 1;
        } else {
            let coming = (sighting.distance - sighting.claim).max(0.0) / sighting.speed;
            if coming.is_finite() {
                entry.next[side] = entry.next[side].min(coming);
            }
            let candidate = (sighting.waited, sighting.rank);
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
/// until the other side has waited a turn (a turn more for those at the
/// mouth); with nobody in it, the side that waited longer (on a tie, the
/// side of the unit ranked first); with units of both sides in it,
/// neither. As a traffic light that a stream of cars holds green (an
/// actuated signal's gap-out), a side whose next unit comes within
/// [`PLATOON_GAP`] seconds of its mouth keeps its turn up to
/// [`PLATOON_TURNS`] turns: a platoon crosses whole, and the passage is
/// emptied for the other side (the time nobody crosses) fewer times.
pub(super) fn turn_at(traffic: &Traffic, turn: f32) -> Turn {
    let waited = |side: usize| traffic.waited[side].map_or(-1.0, |w| w.0);
    let patience = |side: usize| {
        if traffic.next[side] <= PLATOON_GAP {
            PLATOON_TURNS * turn
        } else {
            turn
        }
    };
    let inside = (traffic.inside[0] > 0, traffic.inside[1] > 0);
    let flow = match inside {
        (true, false) => (waited(1) < patience(0) + turn).then_some(0),
        (false, true) => (waited(0) < patience(1) + turn).then_some(1),
        _ => None,
    };
    let open = match inside {
        (true, true) => None,
        (true, false) => (waited(1) < patience(0)).then_some(0),
        (false, true) => (waited(0) < patience(1)).then_some(1),
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
pub(super) fn decide(sighting: &Sighting, turn: Turn, seconds: f32) -> (TurnState, Option<Vec2>) {
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

/// How a unit waiting its turn at a passage moves: out of the exit the
/// units coming out of the passage walk (sideways, to its own side of it),
/// back from the mouth if it stands too near, else not at all.
pub(super) fn waiting_velocity(sighting: &Sighting) -> Vec2 {
    let slow = WAITING_SPEED * sighting.speed;
    let exit = sighting.exit;
    if exit.out != Vec2::ZERO {
        let offset = sighting.position - exit.mouth;
        let along = offset.dot(exit.out);
        let aside = exit.out.perp_dot(offset);
        if (-exit.half_width..exit.length).contains(&along) && aside.abs() < exit.half_width {
            // To the nearer side; dead on the exit's middle, to its left
            // (the same for every unit, so they do not block each other).
            let side = if aside < 0.0 { -1.0 } else { 1.0 };
            return exit.out.perp() * side * slow;
        }
    }
    if sighting.distance < sighting.hold {
        -sighting.heading * slow
    } else {
        Vec2::ZERO
    }
}

/// A unit as the queue rule reads it ([`queued_behind`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct InQueue {
    /// Where it stands.
    pub(crate) position: Vec2,
    /// The way it means to go (unit length, or zero when it stands).
    pub(crate) heading: Vec2,
    /// Its body's radius.
    pub(crate) radius: f32,
    /// Whether it waits its turn at a passage, or is queued behind one that
    /// does.
    pub(crate) held_up: bool,
}

/// Whether `me` is queued behind a unit held up at a passage (waiting its
/// turn, or queued itself), going the same way, among `others` (each with
/// its distance from `me`): held up too, not blocked. The avoid stage asks
/// it of each unit's neighbours, the ones it finds for ORCA.
pub(crate) fn queued_behind(me: InQueue, mut others: impl Iterator<Item = (f32, InQueue)>) -> bool {
    !me.held_up
        && me.heading != Vec2::ZERO
        && others.any(|(distance, other)| {
            let offset = other.position - me.position;
            other.held_up
                && distance <= QUEUE_REACH * (me.radius + other.radius)
                && offset.dot(me.heading) >= QUEUE_AHEAD * distance
                && other.heading.dot(me.heading) >= 0.0
        })
}

#[cfg(test)]
#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{Cell, ClassId};
    use crate::movement::passage::sight::Exit;
    use crate::movement::state::turn::Claim;

    const TURN: f32 = 4.0;

    fn traffic(inside: [u32; 2], waited: [Option<(f32, u64)>; 2]) -> Traffic {
        Traffic {
            inside,
            waited,
            next: [f32::INFINITY; 2],
        }
    }

    /// `traffic` with side 0's next unit `next` seconds from its mouth.
    fn platoon(inside: [u32; 2], waited: [Option<(f32, u64)>; 2], next: f32) -> Traffic {
        Traffic {
            next: [next, f32::INFINITY],
            ..traffic(inside, waited)
        }
    }

    /// Whose turn it is at a passage: each row is who is in it and who
    /// waits at each side, and the side that may walk on to it and the
    /// side whose units at the mouth still go on.
    #[test]
    fn whose_turn_it_is() {
        type Case = (&'static str, Traffic, Option<usize>, Option<usize>);
        let cases: [Case; 13] = [
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
                "side 0 crosses in a platoon: it keeps its turn",
                platoon([2, 0], [None, Some((4.5, 1))], 0.5),
                Some(0),
                Some(0),
            ),
            (
                "the platoon ends (a gap): side 0 closes",
                platoon([2, 0], [None, Some((4.5, 1))], 2.0),
                None,
                Some(0),
            ),
            (
                "side 1 waited three turns: the platoon closes, its mouth goes",
                platoon([2, 0], [None, Some((12.5, 1))], 0.5),
                None,
                Some(0),
            ),
            (
                "side 1 waited four turns: the platoon's mouth stops too",
                platoon([2, 0], [None, Some((16.5, 1))], 0.5),
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
            rank: 5,
            ahead,
            distance,
            held: held.then_some(ahead),
            waited,
            heading: Vec2::X,
            hold: 2.0,
            claim: 1.0,
            speed: 4.0,
            position: Vec2::ZERO,
            exit: Exit {
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
