//! The crowd's tuning, in one place, top to bottom: each number that
//! shapes how movers walk, wait, avoid and part, with why it is what it
//! is and where it was measured. The settings a game changes are
//! [`CrowdSettings`](super::CrowdSettings); these are the crate's own.

/// Movers, at least, for a cheap pass over them (preferred velocities,
/// avoidance's gathering and write-back) to run on the compute task pool:
/// about 40 ns a mover, against some 40 µs to hand the work out and
/// gather it on a 2-core machine.
pub(crate) const PARALLEL_MOVERS: usize = 4096;

/// Movers, at least, for the walk on the grid (about 240 ns a mover) to
/// run on the compute task pool.
pub(crate) const PARALLEL_WALKS: usize = 512;

/// A waypoint this close (in cells) counts as reached by a unit that
/// avoidance moved off the straight way to it.
pub(crate) const REACHED: f32 = 0.1;

/// A unit within this many cells of its next waypoint, pushed off the way
/// to it, goes on to the one after as soon as it can see it.
pub(crate) const SKIP_NEAR: f32 = 1.5;

/// Anchors a passage may have: a longer one-lane chain is not taken turns
/// on (its units meet and push through, as in open ground).
pub(crate) const LONGEST: usize = 4096;

/// How far ahead of its body (in cells) a unit looks for a passage: the
/// nearest it comes to one before it knows whether it must wait.
pub(crate) const LOOK_AHEAD: f32 = 4.0;

/// A waiting unit closer than this to the passage (cells beyond its body)
/// backs off, so that the mouth is clear for the units coming out.
pub(crate) const CLEAR_OF_MOUTH: f32 = 2.5;

/// How close to the passage (cells beyond its body) a unit claims it: only
/// units at its mouth hold it, so a turn that ends stops no unit that is
/// half-way to it behind one that has to wait.
pub(crate) const CLAIM_AT: f32 = 1.0;

/// Corners ahead a unit looks along for passages, at most.
pub(crate) const CORNERS_AHEAD: usize = 4;

/// How far out of a passage's mouth (in cells) its lane is kept clear by
/// those waiting.
pub(crate) const LANE_LENGTH: f32 = 5.0;

/// Movers, at least, per task of a cheap pass over the slots (the
/// snapshot, the write-back).
pub(crate) const SLOT_CHUNK: usize = 128;

/// The neighbour lists' skin, in widest bodies: the lists hold until a
/// unit has moved a body's width.
pub(crate) const SKIN: f32 = 2.0;

/// The frames a list allows for in its near bound: a frame up to this
/// many times as long as the one it was built in still reads it.
pub(crate) const FRAME_SLACK: f32 = 1.5;

/// Units planned in one task, at least.
pub(crate) const PLAN_CHUNK: usize = 32;

/// Seconds ahead a unit looks for walls when it avoids others: short, as
/// walls are the grid's business; it only keeps avoidance from pushing a
/// unit into a wall, where it would stop short of where the others
/// counted on it to go.
pub(crate) const WALL_HORIZON: f32 = 0.25;

/// How far a unit turns to its right to pass one in its way (radians).
pub(crate) const KEEP_RIGHT: f32 = 0.3;

/// How far a unit that has long been blocked turns (radians).
pub(crate) const KEEP_RIGHT_BLOCKED: f32 = 1.2;
