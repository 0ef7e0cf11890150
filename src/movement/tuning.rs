//! The crowd's tuning, in one place, top to bottom: each number that
//! shapes how movers walk, arrive, wait at passages, avoid each other and
//! part, with why it is what it is. The settings a game changes are
//! [`CrowdSettings`](super::CrowdSettings); these are the crate's
//! own. Changing one of the first sections changes the crowd's digests
//! (the `crowd` example prints them); where a measurement chose a number
//! (`REPAIR_SHARE`, the separation's rounds in
//! [`CrowdSettings::separation_rounds`](super::CrowdSettings::separation_rounds)),
//! its doc gives the figures, and the others were set by hand and are held
//! by the tests. The last section changes only how the work is spread over
//! threads, never a result.
//!
//! Sizes of data structures that change neither results nor tuning stay
//! beside their structures (`BLOCK` in `passage/map.rs`, `EDIT_BLOCK` in
//! `corridor.rs`, `BUCKETS_PER_POINT` in `avoidance/neighbours.rs`,
//! `COLOURS` and `SMALL_COLOUR` in `avoidance/solver.rs`).

// --- Walking a route and arriving ---

/// A waypoint this close (in cells) counts as reached by a unit that
/// avoidance moved off the straight way to it.
pub(crate) const REACHED: f32 = 0.1;

/// A unit within this many cells of its next waypoint, pushed off the way
/// to it, goes on to the one after as soon as it can see it.
pub(crate) const SKIP_NEAR: f32 = 1.5;

/// A standing unit further than this (in cells) from its rest place has
/// been pushed off it.
pub(crate) const DISPLACED: f32 = 0.3;

/// Cells a place is looked for in, at most, before a unit rests where it
/// stands without one.
pub(crate) const SEARCH_LIMIT: usize = 4096;

// --- Headway: when a unit pushes through, stops short or gives up ---

/// Ground (in cells) a unit must gain to count as making headway.
pub(crate) const HEADWAY: f32 = 0.5;

/// A unit blocked this close to the end of its route (in cells, along
/// it; for a unit k cells wide, k times this; for k > 1, twice that once
/// pushing through gained it nothing) rests where it stands. It also
/// looks, this close to its end, whether another unit rests there.
pub(crate) const NEAR_THE_END: f32 = 2.5;

/// A unit counts another as in front of it (its headway waiting on that
/// one's) within this many times their two radii, centre to centre:
/// bodies touching, with a little room between them.
pub(crate) const STILL_AHEAD_REACH: f32 = 1.5;

// --- Bodies ---

/// A body's radius, in cells of its footprint's side, when the game sets
/// none ([`Avoidance::radius`](super::Avoidance::radius)): under half a
/// cell, so that units one cell wide pass a bridge one cell wide in single
/// file, and the passages' exits are as wide.
pub(crate) const BODY_RADIUS: f32 = 0.45;

// --- One-lane passages ---

/// How far ahead of its body (in cells) a unit looks for a passage: the
/// nearest it comes to one before it knows whether it must wait.
pub(crate) const LOOK_AHEAD: f32 = 4.0;

/// How close to the passage (cells beyond its body) a unit claims it: only
/// units at its mouth hold it, so a turn that ends stops no unit that is
/// half-way to it behind one that has to wait.
pub(crate) const CLAIM_AT: f32 = 1.0;

/// A waiting unit closer than this to the passage (cells beyond its body)
/// backs off, so that the mouth is clear for the units coming out.
pub(crate) const CLEAR_OF_MOUTH: f32 = 2.5;

/// How far out of a passage's mouth (in cells) its exit is kept clear by
/// those waiting.
pub(crate) const EXIT_LENGTH: f32 = 5.0;

/// A unit waiting its turn at a passage steps out of the exit, or back
/// from the mouth, at this share of its speed.
pub(crate) const WAITING_SPEED: f32 = 0.5;

/// A unit is queued behind one held up at a passage only this close: its
/// bodies' radii summed, times this (a little more than touching, so a
/// queue with gaps in it still counts).
pub(crate) const QUEUE_REACH: f32 = 1.3;

/// And only with the one held up ahead of it: at least this share of the
/// way to it along its heading (within 60 degrees of straight ahead).
pub(crate) const QUEUE_AHEAD: f32 = 0.5;

/// Corners ahead a unit looks along for passages, at most.
pub(crate) const CORNERS_AHEAD: usize = 4;

/// Anchors a passage may have: a longer one-lane chain is not taken turns
/// on (its units meet and push through, as in open ground).
pub(crate) const LONGEST: usize = 4096;

/// Steps back along a frame's walk, at most, to the last point outside a
/// passage a unit has no claim on (a frame's walk is short: a sixteenth of
/// it is well under a body's width).
pub(crate) const BACK_OFF_STEPS: u32 = 16;

/// A side whose next unit is this many seconds or less from the point
/// where it claims a passage comes in a platoon: it keeps its turn
/// (see [`PLATOON_TURNS`]).
pub(crate) const PLATOON_GAP: f32 = 1.5;

/// The most turns a platoon holds a passage for, counted in the other
/// side's waiting: fewer changes of side, each of which empties the
/// passage, and no side waits more than this many turns.
pub(crate) const PLATOON_TURNS: f32 = 3.0;

// --- Avoidance ---

/// How far a unit turns to its right to pass one in its way (radians)
/// near the end of its way or at a passage: a little, so that it passes
/// without circling round a goal others crowd (units ordered one by one
/// to one point, a group at its slots) and keeps the order of a queue.
pub(crate) const KEEP_RIGHT: f32 = 0.3;

/// How far it turns elsewhere (radians): far enough that two streams
/// meeting head-on part into lanes, each keeping to its right, instead of
/// pressing into each other. Measured with the `crowd` example (four
/// squads of 250 crossing head-on on AR0011SR, seeds 0 to 3, mean
/// arrival frame, default / `--groups` / `--open`), with one angle for
/// every unit in the way: 0.3 gave 1,008.7 / 1,339.7 / 1,091.6, 0.6 gave
/// 971.3 / 1,178.3 / 957.5, 1.0 gave 898.3 / 1,148.5 / 864.5 and 1.2 gave
/// 887.7 / 1,225.0 / 862.0 (with [`KEEP_RIGHT_ASIDE`] 1.5, 1.1 gave 876.0
/// / 1,187.1 / 858.4); with 4,000 movers (`--movers 4000 --frames 6000`,
/// aside 1.5) 3,708 arrived at 0.9, 3,751 at 1.0 and 3,950 at 1.1 (3,515
/// at 0.3). So strong a turn everywhere kept units ordered to one point
/// circling it (hence [`NEAR_GOAL`]). Taken only from units walking (more
/// than a quarter of their speed), 3,551 of the 4,000 arrived; taken
/// from every unit but those going one's way, 3,631 (and 974.7 / 1,223.3
/// / 939.9); from everyone, 3,857 (870.5 / 1,053.2 / 853.0): a unit
/// standing in a stream's way is parted from early too.
pub(crate) const KEEP_RIGHT_LANES: f32 = 1.1;

/// A unit does not part from one walking its way at more than this share
/// of that one's speed: it follows it. Without this, nine in ten of the
/// `rts` scene's boats and hovercraft (ordered one by one, boats to one
/// point, hovercraft to another) were there by frame 993, with it by 779
/// (by 362 with no big turn at all); with it at a quarter of the speed, the `crowd` figures above
/// fell back to 974.7 / 1,223.3 / 939.9 and 3,631 of 4,000; at three
/// quarters, 865.8 / 1,090.8 / 845.8 and 3,962 of 4,000, and with units
/// standing (idle) passed with the small turn too (one taken out of a
/// group was swept 30 cells along by the group's turns), 859.7 / 1,068.2
/// / 840.2 and 3,977 of 4,000.
///
/// A unit also keeps the small turn for one of another movement class,
/// one bound for the same point, and a member of its own group unless
/// it is held up and that one is not settling into its slot (`follows`
/// in `avoidance/plan.rs`). Parting from group-mates as from anyone, one
/// member in 672 of squads of 8 to 20 walked 56 cells across open ground
/// (the guide's group move among them) was hemmed in short of its slot,
/// against none with no big turn at all; never parting from them, none
/// was, but `--groups` took 1,251.0 frames (1,068.2), and parting only
/// from group-mates not walking its way, 1,248.2; parting from them once
/// stalled at all, 1,063.2 with 3 in 672 hemmed in, and once stalled past
/// a tenth of `give_up_after`, 1,229.2; stalled at all and not from one
/// settling, 1,081.1 and none. In the `rts` scene (one run each: its
/// figures move by hundreds of frames with any small change), half the
/// two armies were across by frame 2,161 with none of these, 2,222 with
/// the group rule, 1,860 with the same point too and 2,248 with the
/// class too; half, nine in ten and all the boats and hovercraft there by
/// 507 / 779 / 855, 416 / 904 / 1,124, 420 / 726 / 1,133 and 371 / 525 /
/// 534 (main, with no big turn: 303 / 362 / 416).
pub(crate) const SAME_WAY: f32 = 0.75;

/// A unit whose way ends within this many of its footprint's sides keeps
/// right only a little ([`KEEP_RIGHT`]): with the big turn, units ordered
/// one by one to one point, or a group walking into its slots, circled
/// their goal.
pub(crate) const NEAR_GOAL: f32 = 4.0;

/// A unit parts into lanes ([`KEEP_RIGHT_LANES`]) from one whose body
/// would come within this many times the two radii of its way (1: only
/// one dead in its way): 1.5 starts the streams parting before they touch
/// (at 1.0 with [`KEEP_RIGHT`] 1.0, mean arrival 898.3, 1,148.5 and
/// 864.5; at 1.5, 886.4, 1,149.7 and 853.8).
pub(crate) const KEEP_RIGHT_ASIDE: f32 = 1.5;

/// Cells of open ground the big turn must have ahead of the body
/// ([`KEEP_RIGHT_LANES`]): in a channel (a river four cells wide, a
/// corridor) a unit turned so far only meets the bank, and takes the
/// small turn.
pub(crate) const OPEN_AHEAD: f32 = 2.0;

/// How far a unit that has long been blocked turns (radians).
pub(crate) const KEEP_RIGHT_BLOCKED: f32 = 1.2;

/// Seconds ahead a unit looks for walls when it avoids others: short, as
/// walls are the grid's business; it only keeps avoidance from pushing a
/// unit into a wall, where it would stop short of where the others
/// counted on it to go.
pub(crate) const WALL_HORIZON: f32 = 0.25;

/// Passes over the contacts in `keep_gaps`, at most.
pub(crate) const GAP_PASSES: usize = 8;

// --- Separation ---

/// The pairs avoidance keeps as contacts for the separation: those closer
/// than this many times the sum of their radii and a frame's walk at
/// both their speeds. A body the rounds push further than its share of
/// the margin is checked against all around it
/// (`Separation::missed_pairs`).
pub(crate) const CONTACT_MARGIN: f32 = 1.1;

/// Depth (a fraction of two bodies' radii's sum) a pair may keep without
/// being pushed apart (Box2D's linear slop): a round that leaves no pair
/// deeper ends the rounds, and bodies that just touch are not jostled.
pub(crate) const OVERLAP_SLOP: f32 = 0.01;

/// How deep (a fraction of the smaller radius) a pair may end a frame
/// in each other: deeper, and deeper than it started the frame, after the
/// rounds, both go back to where they started it
/// (`Separation::hold_back`).
pub(crate) const OVERLAP_LIMIT: f32 = 0.1;

/// How far two bodies may stay pressed into each other after separation
/// where one of them cannot give way (a wall, a passage's mouth), as a
/// fraction of their radii's sum: the other (a unit pushing through, say)
/// presses on a little instead of stopping dead. 0.05 of the sum is 0.1 of
/// a radius between equals: the limit the separation holds its pairs to
/// (deeper, it holds them back; see `Separation::hold_back`).
pub(crate) const SQUEEZE: f32 = 0.05;

/// The least share a unit that avoids gives in the second half of the
/// separation's rounds. In the first half a unit pushing through gives
/// nothing against a standing one (which is pushed aside, as players
/// expect); where those rounds have not parted every pair (a standing unit
/// pressed by pushers from two sides has nowhere to go), the rest share it
/// out.
pub(crate) const SHARED_OUT: f32 = 0.05;

// --- Chases and follows (public: `chase` re-exports them) ---

/// A chaser asks for a new path when its target has gone this share of the
/// straight distance from the chaser to where the target stood when its
/// path was asked for (and at least [`REPAIR_LEAST`] cells). Measured with
/// the `chase` example (1,000 chasers of 10 targets, budget 4,096): on
/// random512-10-0, 0.2 catches on frame 2,046.7 on average for 5.30 M
/// expansions, 0.35 on 2,067.1 for 3.68 M, 0.5 on 2,100.7 for 3.12 M,
/// against 1,935.8 for chasers that always know the best way to where
/// their target stands; on AR0011SR, 0.35 costs 0.64 M against 1.00 M at
/// 0.2 for the same catches.
pub const REPAIR_SHARE: f32 = 0.35;

/// A chaser asks for a new path only once its target has gone at least
/// this many cells from where it stood when the chaser's path was asked
/// for.
pub const REPAIR_LEAST: f32 = 1.0;

/// Within this many cells of its target, with a straight line to it its
/// class and size may walk, a chaser walks straight at it with no search.
pub const SIGHT: f32 = 12.0;

/// A chaser whose path is a leg of its way (its search stopped at
/// [`PathfindingSettings::chase_lookahead`](crate::schedule::PathfindingSettings::chase_lookahead))
/// asks for the next leg this many cells before the leg's end, so that it
/// need not stop there while the search runs: a second of walking for
/// most units.
pub const NEXT_LEG: f32 = 4.0;

/// Cells beyond the range that still count as in range: a unit beside its
/// target diagonally (its edge some 0.51 of a cell from the target's, for
/// two units of a cell) is beside it, at range 0 too.
pub const RANGE_LEEWAY: f32 = 0.55;

// --- Performance: work handed to threads and kept between frames (no effect on any result) ---

/// Movers, at least, for a cheap pass over them (preferred velocities,
/// avoidance's gathering and write-back) to run on the compute task pool:
/// about 40 ns a mover, against some 40 µs to hand the work out and
/// gather it on a 2-core machine.
pub(crate) const PARALLEL_MOVERS: usize = 4096;

/// Movers, at least, for the walk on the grid (about 240 ns a mover) to
/// run on the compute task pool.
pub(crate) const PARALLEL_WALKS: usize = 512;

/// Pairs, at least, for a solve to go to the compute task pool: below
/// that one dispatch (some 40 µs on a 2-core machine) costs more than the
/// rounds save.
pub(crate) const PARALLEL_PAIRS: usize = 512;

/// Movers, at least, per task of a cheap pass over the seats (the
/// snapshot, the write-back).
pub(crate) const SEAT_CHUNK: usize = 128;

/// Units planned in one task, at least.
pub(crate) const PLAN_CHUNK: usize = 32;

/// The neighbour lists' skin, in widest bodies: the lists hold until a
/// unit has moved a body's width.
pub(crate) const SKIN: f32 = 2.0;

/// The frames a list allows for in its near bound: a frame up to this
/// many times as long as the one it was built in still reads it.
pub(crate) const FRAME_SLACK: f32 = 1.5;
