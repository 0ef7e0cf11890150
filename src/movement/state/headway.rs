//! Whether a mover gains ground, and what it does when it has not for a
//! while: one pure transition, [`Headway::step`], from what the mover was
//! and what it saw this frame to what it is and what it must do, tested
//! on plain data.

use crate::movement::tuning::{HEADWAY, NEAR_THE_END};
use bevy::prelude::*;

/// A mover's headway: how long it has been trying to move without gaining
/// ground, and whether it pushes through others because of it.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct Headway {
    /// Seconds it has been trying to move without headway.
    pub(crate) stalled: f32,
    /// Where it stood when it last made headway.
    pub(crate) mark: Vec2,
    /// Seconds left of pushing through others (leaving them most of the
    /// avoiding).
    pub(crate) pushing: f32,
    /// Whether it pushed through since it last made headway (and so gained
    /// nothing by it).
    pub(crate) pushed: bool,
    /// Seconds it has been trying to move without headway, pushing through
    /// or not: at [`Seen::stop_after`] it stops, and the game is told,
    /// unless the crowd in front of it moves on ([`Headway::ahead`]).
    pub(crate) since_headway: f32,
    /// Seconds since a unit in front of it (or one in front of that, and
    /// so on) last gained ground, as avoidance saw them this frame
    /// (infinite with nobody in front, or without avoidance): a unit in a
    /// crowd that is slow, not stuck, makes headway when the front does,
    /// and does not give up.
    pub(crate) ahead: f32,
}

impl Default for Headway {
    fn default() -> Self {
        Headway {
            stalled: 0.0,
            mark: Vec2::ZERO,
            pushing: 0.0,
            pushed: false,
            since_headway: 0.0,
            ahead: f32::INFINITY,
        }
    }
}

/// What a mover saw of itself this frame, after its walk.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Seen {
    /// Where it stands now.
    pub(crate) position: Vec2,
    /// The frame's length.
    pub(crate) seconds: f32,
    /// A cell's side, in world units.
    pub(crate) cell: f32,
    /// Its footprint's side, in cells.
    pub(crate) size: u8,
    /// [`CrowdSettings::give_up_after`](super::CrowdSettings::give_up_after).
    pub(crate) give_up: f32,
    /// [`CrowdSettings::stop_after`](super::CrowdSettings::stop_after).
    pub(crate) stop_after: f32,
    /// Whether it may move at all this frame (speed and frame above 0).
    pub(crate) can_move: bool,
    /// What it is doing.
    pub(crate) doing: Doing,
}

/// What a mover is doing, as its headway counts it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Doing {
    /// No order: `displaced` when pushed off its rest place and not back.
    Standing { displaced: bool },
    /// Under way (on its route, or on instinct); `held_up` while it waits
    /// its turn at a passage or is queued behind one that does.
    Moving { held_up: bool },
    /// It reached its end this frame.
    Arrived,
}

/// What a mover must do about its headway.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stall {
    /// Nothing.
    Nothing,
    /// A standing unit that cannot get back to its rest place rests at the
    /// nearest free cell from where it stands.
    Resettle,
    /// Blocked too long near its end: close enough, it rests where it
    /// stands.
    StopShort,
    /// Blocked too long elsewhere: it pushes through until it gains
    /// ground (and asks for a new path if a wall cuts its way on).
    PushThrough,
    /// Pushing through gained it nothing for
    /// [`CrowdSettings::stop_after`](super::CrowdSettings::stop_after):
    /// it stops where it stands, and the game is told.
    Blocked,
}

impl Headway {
    /// Whether it pushes through others this frame.
    pub(crate) fn pushing_through(&self) -> bool {
        self.pushing > 0.0
    }

    /// Seconds since it, or the crowd in front of it, last gained ground:
    /// the time that counts toward [`Seen::stop_after`]. Only in a
    /// deadlock (nobody in front moving on either) does it grow to it.
    pub(crate) fn still(&self) -> f32 {
        self.since_headway.min(self.ahead)
    }

    /// The mover's headway after a frame in which it saw `seen`, and what
    /// it must do about it; `left` tells how much of its route it has
    /// still to walk (`None` on instinct), asked only of a unit blocked
    /// long enough to give up. Headway is ground gained, not steps taken: a
    /// unit jostled to and fro in a crowd that keeps it where it is makes
    /// none. Waiting at a passage (or queued behind a unit that is) is not
    /// being blocked, nor is arriving.
    #[inline] // called across modules in the walk's hot loop
    pub(crate) fn step(
        mut self,
        seen: &Seen,
        left: impl FnOnce() -> Option<f32>,
    ) -> (Headway, Stall) {
        let trying = match seen.doing {
            Doing::Standing { displaced } => displaced,
            Doing::Moving { held_up, .. } => !held_up,
            Doing::Arrived => false,
        };
        let headway = seen.position.distance(self.mark) >= HEADWAY * seen.cell;
        if headway {
            self.pushed = false;
        }
        if !trying || !seen.can_move || headway {
            self.stalled = 0.0;
            self.since_headway = 0.0;
            self.mark = seen.position;
        } else {
            self.stalled += seen.seconds;
            self.since_headway += seen.seconds;
        }
        self.pushing = (self.pushing - seen.seconds).max(0.0);
        let give_up = seen.give_up;
        if !give_up.is_finite() {
            return (self, Stall::Nothing);
        }
        // A unit wider than a cell whose pushing through gained nothing
        // (the smaller units in its way, at rest round its end, have
        // nowhere to go, and no gap opens as wide as it) counts twice as
        // far as close enough.
        let wide_and_pushed = self.pushed && seen.size > 1;
        let near_the_end = NEAR_THE_END * if wide_and_pushed { 2.0 } else { 1.0 };
        let close_enough = near_the_end * seen.cell * seen.size as f32;
        let stall = match seen.doing {
            Doing::Standing { .. } if self.stalled >= 0.5 * give_up => Stall::Resettle,
            Doing::Moving { .. } if self.stalled >= give_up => {
                if left().is_some_and(|left| left < close_enough) {
                    Stall::StopShort
                } else if self.still() >= seen.stop_after {
                    self.since_headway = 0.0;
                    self.pushing = 0.0;
                    Stall::Blocked
                } else {
                    self.pushing = give_up.max(seen.seconds);
                    self.pushed = true;
                    Stall::PushThrough
                }
            }
            _ => return (self, Stall::Nothing),
        };
        self.stalled = 0.0;
        (self, stall)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRAME: f32 = 0.1;

    fn seen(position: Vec2, doing: Doing) -> Seen {
        Seen {
            position,
            seconds: FRAME,
            cell: 1.0,
            size: 1,
            give_up: 2.0,
            stop_after: 30.0,
            can_move: true,
            doing,
        }
    }

    const MOVING: Doing = Doing::Moving { held_up: false };

    fn stalled(stalled: f32) -> Headway {
        Headway {
            stalled,
            ..default()
        }
    }

    /// One frame from a given headway: each row is what the mover was,
    /// what it saw, and what it must be and do.
    #[test]
    fn one_frame_of_headway() {
        let here = Vec2::ZERO;
        let on = Vec2::new(0.6, 0.0);
        let far_left = Some(10.0);
        // Its name, the headway before, what it saw, its route left, the
        // seconds stalled after, and what it must do.
        type Case = (&'static str, Headway, Seen, Option<f32>, f32, Stall);
        let cases: [Case; 16] = [
            (
                "no headway for long, pushing through or not",
                Headway {
                    since_headway: 29.95,
                    ..stalled(1.95)
                },
                seen(here, MOVING),
                far_left,
                0.0,
                Stall::Blocked,
            ),
            (
                "no headway for long, but the crowd in front moves on",
                Headway {
                    since_headway: 29.95,
                    ahead: 3.0,
                    ..stalled(1.95)
                },
                seen(here, MOVING),
                far_left,
                0.0,
                Stall::PushThrough,
            ),
            (
                "no headway for long, near its end",
                Headway {
                    since_headway: 29.95,
                    ..stalled(1.95)
                },
                seen(here, MOVING),
                Some(2.0),
                0.0,
                Stall::StopShort,
            ),
            (
                "no headway for long, but not blocked long this time",
                Headway {
                    since_headway: 40.0,
                    ..stalled(1.0)
                },
                seen(here, MOVING),
                far_left,
                1.1,
                Stall::Nothing,
            ),
            (
                "gains ground",
                stalled(1.0),
                seen(on, MOVING),
                far_left,
                0.0,
                Stall::Nothing,
            ),
            (
                "blocked a frame",
                stalled(1.0),
                seen(here, MOVING),
                far_left,
                1.1,
                Stall::Nothing,
            ),
            (
                "blocked long, far from its end",
                stalled(1.95),
                seen(here, MOVING),
                far_left,
                0.0,
                Stall::PushThrough,
            ),
            (
                "blocked long on instinct",
                stalled(1.95),
                seen(here, MOVING),
                None,
                0.0,
                Stall::PushThrough,
            ),
            (
                "blocked long near its end",
                stalled(1.95),
                seen(here, MOVING),
                Some(2.0),
                0.0,
                Stall::StopShort,
            ),
            (
                "held up at a passage",
                stalled(1.95),
                seen(here, Doing::Moving { held_up: true }),
                far_left,
                0.0,
                Stall::Nothing,
            ),
            (
                "arrives",
                stalled(1.95),
                seen(here, Doing::Arrived),
                None,
                0.0,
                Stall::Nothing,
            ),
            (
                "stands at its place",
                stalled(1.5),
                seen(here, Doing::Standing { displaced: false }),
                None,
                0.0,
                Stall::Nothing,
            ),
            (
                "kept off its place",
                stalled(0.5),
                seen(here, Doing::Standing { displaced: true }),
                None,
                0.6,
                Stall::Nothing,
            ),
            (
                "kept off its place for long",
                stalled(0.95),
                seen(here, Doing::Standing { displaced: true }),
                None,
                0.0,
                Stall::Resettle,
            ),
            (
                "cannot move",
                stalled(1.95),
                Seen {
                    can_move: false,
                    ..seen(here, MOVING)
                },
                far_left,
                0.0,
                Stall::Nothing,
            ),
            (
                "never gives up",
                stalled(1.95),
                Seen {
                    give_up: f32::INFINITY,
                    ..seen(here, MOVING)
                },
                far_left,
                2.05,
                Stall::Nothing,
            ),
        ];
        for (name, before, saw, left, after, must) in cases {
            let (headway, stall) = before.step(&saw, || left);
            assert_eq!(stall, must, "{name}");
            assert!(
                (headway.stalled - after).abs() < 1e-5,
                "{name}: {}",
                headway.stalled
            );
        }
    }

    /// Pushing through lasts `give_up` seconds, counts down every frame,
    /// and is marked as having gained nothing until the unit gains ground.
    #[test]
    fn pushing_through_lasts_and_is_remembered() {
        let far = || Some(10.0);
        let (pushing, stall) = stalled(1.95).step(&seen(Vec2::ZERO, MOVING), far);
        assert_eq!(stall, Stall::PushThrough);
        assert!(pushing.pushing_through() && pushing.pushed);
        let (later, _) = pushing.step(&seen(Vec2::ZERO, MOVING), far);
        assert!((later.pushing - (2.0 - FRAME)).abs() < 1e-5);
        assert!(later.pushed);
        let (gained, _) = later.step(&seen(Vec2::new(0.0, 0.7), MOVING), far);
        assert!(!gained.pushed && gained.stalled == 0.0);
    }

    /// Bouts of pushing through that gain nothing add up to a stop: with
    /// `give_up` 2 s and `stop_after` 30 s, a unit held in place pushes
    /// through 14 times and then stops; one that gains ground in between
    /// starts counting again.
    #[test]
    fn bouts_without_headway_add_up_to_a_stop() {
        let far = || Some(10.0);
        let frames = |mut headway: Headway, n: usize, at: Vec2| {
            let mut stalls = Vec::new();
            for _ in 0..n {
                let (next, stall) = headway.step(&seen(at, MOVING), far);
                headway = next;
                if stall != Stall::Nothing {
                    stalls.push(stall);
                }
            }
            (headway, stalls)
        };
        // (One told it is blocked stands from then on; here it goes on.)
        let (held, stalls) = frames(Headway::default(), 305, Vec2::ZERO);
        assert_eq!(stalls.len(), 15, "{stalls:?}");
        assert!(stalls[..14].iter().all(|&s| s == Stall::PushThrough));
        assert_eq!(stalls[14], Stall::Blocked);
        assert!(!held.pushing_through());
        // Ground gained at frame 200 starts the count again.
        let (halfway, _) = frames(Headway::default(), 200, Vec2::ZERO);
        let (moved, _) = frames(halfway, 1, Vec2::new(0.0, 0.7));
        let (_, stalls) = frames(moved, 290, Vec2::new(0.0, 0.7));
        assert!(
            stalls.iter().all(|&s| s == Stall::PushThrough),
            "{stalls:?}"
        );
    }

    /// A vehicle (2×2) counts twice as far as close enough once pushing
    /// through gained it nothing: 5 cells a side, 10 once pushed.
    #[test]
    fn close_enough_grows_with_size_and_failed_pushing() {
        let vehicle = |left, pushed| {
            let before = Headway {
                pushed,
                ..stalled(1.95)
            };
            let saw = Seen {
                size: 2,
                ..seen(Vec2::ZERO, MOVING)
            };
            before.step(&saw, || Some(left)).1
        };
        assert_eq!(vehicle(4.5, false), Stall::StopShort);
        assert_eq!(vehicle(7.0, false), Stall::PushThrough);
        assert_eq!(vehicle(7.0, true), Stall::StopShort);
        assert_eq!(vehicle(10.5, true), Stall::PushThrough);
    }
}
