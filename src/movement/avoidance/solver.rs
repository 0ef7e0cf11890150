//! The crowd's solvers: the gaps kept between planned velocities
//! ([`keep_gaps`]) and the separation of bodies after the walk
//! ([`Separation`]), both a few Gauss–Seidel rounds over the contacts.
//!
//! The contacts are coloured so that no two pairs of one colour share a
//! body ([`Colouring`], Box2D v3's constraint graph): the pairs of one
//! colour are settled side by side on every thread, each writing only its
//! own two bodies, the colours one after another. The result is the same
//! bit for bit for any number of threads, and as good as settling the
//! pairs one by one, each round seeing what the last colour did. Each
//! colour of a round is a stage of its system's one dispatch to the
//! compute task pool ([`Team`]): the threads take its shares, and meet
//! when they are done (as Box2D's solver stages do), since waking the
//! pool's threads costs more than a round's work at a thousand movers.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use bevy::prelude::*;

use super::neighbours::SpatialGrid;
use super::priority::{Agent, parting_direction, priority, widest_and_fastest};
use crate::maps::MapView;
use crate::movement::parallel::Team;
use crate::movement::passage::Passages;
use crate::movement::stepping::walk_velocity;
use crate::movement::tuning::{
    CONTACT_MARGIN, GAP_PASSES, OVERLAP_LIMIT, OVERLAP_SLOP, PARALLEL_PAIRS, SHARED_OUT, SQUEEZE,
};

/// The contacts in colours: no two pairs of one colour share a body, so
/// the pairs of a colour are settled side by side on every thread, each
/// writing only its own two bodies, and the colours one after another
/// (Box2D v3's constraint graph). Colour `c`'s pairs are
/// `pairs[starts[c]..starts[c + 1]]`; the last colour holds the pairs no
/// colour had room for, settled on one thread.
#[derive(Default)]
pub(crate) struct Colouring {
    pairs: Vec<(u32, u32)>,
    starts: Vec<u32>,
    /// Scratch kept from frame to frame: the colours each body has, and
    /// each pair's colour.
    used: Vec<u32>,
    colour_of: Vec<u8>,
}

/// Colours at most, before the overflow (Box2D's count).
const COLOURS: usize = 24;

impl Colouring {
    /// Colours `pairs` (sorted, no repeats) over `count` bodies: each pair,
    /// in order, takes the first colour neither of its bodies has yet.
    #[inline(never)] // a serial piece of the step, named in profiles
    pub(super) fn rebuild(&mut self, pairs: &[(u32, u32)], count: usize) {
        let (used, colour_of) = (&mut self.used, &mut self.colour_of);
        used.clear();
        used.resize(count, 0);
        colour_of.clear();
        let mut sizes = [0u32; COLOURS + 1];
        for &(i, j) in pairs {
            let free = !(used[i as usize] | used[j as usize]);
            let colour = (free.trailing_zeros() as usize).min(COLOURS);
            if colour < COLOURS {
                used[i as usize] |= 1 << colour;
                used[j as usize] |= 1 << colour;
            }
            colour_of.push(colour as u8);
            sizes[colour] += 1;
        }
        let colours = (0..=COLOURS)
            .rev()
            .find(|&c| sizes[c] > 0)
            .map_or(0, |c| c + 1);
        self.starts.clear();
        self.starts.push(0);
        for &size in &sizes[..colours] {
            self.starts.push(self.starts.last().unwrap() + size);
        }
        let mut fill = [0u32; COLOURS + 1];
        fill[..colours].copy_from_slice(&self.starts[..colours]);
        self.pairs.clear();
        self.pairs.resize(pairs.len(), (0, 0));
        for (&pair, &colour) in pairs.iter().zip(&self.colour_of) {
            self.pairs[fill[colour as usize] as usize] = pair;
            fill[colour as usize] += 1;
        }
    }

    /// The phases a round takes: one per colour big enough to split over
    /// the threads, then one for the rest (the small colours and the
    /// overflow, on the first thread, one after another).
    fn phases(&self) -> usize {
        self.split_colours() + usize::from(self.split_colours() < self.colours())
    }

    /// The colours.
    fn colours(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// The colours before the first one too small to split (colours fill
    /// in order, so those after it are small too, or the overflow).
    fn split_colours(&self) -> usize {
        (0..self.colours().min(COLOURS))
            .find(|&c| ((self.starts[c + 1] - self.starts[c]) as usize) < SMALL_COLOUR)
            .unwrap_or(self.colours().min(COLOURS))
    }

    /// Phase `p`'s pairs for thread `part` of `parts`: its share of a big
    /// colour, or all the rest for the first thread.
    fn share(&self, p: usize, part: usize, parts: usize) -> &[(u32, u32)] {
        let split = self.split_colours();
        if p >= split {
            let rest = &self.pairs[self.starts[split] as usize..];
            return if part == 0 { rest } else { &[] };
        }
        let (begin, end) = (self.starts[p] as usize, self.starts[p + 1] as usize);
        let (len, parts) = (end - begin, parts.max(1));
        let from = begin + len * part / parts;
        let to = begin + len * (part + 1) / parts;
        &self.pairs[from..to]
    }
}

/// Pairs, at least, for a colour to be split over the threads.
const SMALL_COLOUR: usize = 32;

/// Runs up to `rounds` rounds, each of `phases` phases, of `phase(r, p,
/// part)` for every `part` below `parts`, until a round in which no call
/// returned true (nothing changed: the rounds left would change nothing
/// either); with `finish`, the last round runs even so. Every part of a
/// phase runs before any of the next, on `team`'s threads (each phase a
/// stage of its dispatch).
fn run_rounds(
    (team, parts): (&Team, usize),
    rounds: usize,
    finish: bool,
    phases: usize,
    phase: impl Fn(usize, usize, usize) -> bool + Sync,
) {
    let mut r = 0;
    while r < rounds {
        let changed = AtomicBool::new(false);
        for p in 0..phases {
            team.run(parts.max(1), |part| {
                if phase(r, p, part) {
                    changed.store(true, Ordering::Relaxed);
                }
            });
        }
        // The round after `r`, once it changed something or not.
        r = match (changed.into_inner(), finish) {
            (true, _) => r + 1,
            (false, true) if r + 1 < rounds => rounds - 1,
            (false, _) => rounds,
        };
    }
}

/// The threads a solve over `colouring`'s pairs takes with `threads` at
/// hand.
fn parts(colouring: &Colouring, threads: usize) -> usize {
    if colouring.pairs.len() < PARALLEL_PAIRS {
        1
    } else {
        threads.max(1)
    }
}

/// Vectors many threads read and each writes its own entries of (the
/// barrier between phases orders the writes before the next phase's
/// reads).
struct Shared(Vec<AtomicU64>);

impl Shared {
    fn new(values: &[Vec2]) -> Self {
        Shared(values.iter().map(|&v| AtomicU64::new(pack(v))).collect())
    }

    fn get(&self, i: usize) -> Vec2 {
        unpack(self.0[i].load(Ordering::Relaxed))
    }

    /// Sets entry `i` to `v`: whether it changed. (A load and a seats,
    /// each a plain move: no other thread writes entry `i` in this phase,
    /// so a read-modify-write, a locked instruction, is not needed.)
    fn set(&self, i: usize, v: Vec2) -> bool {
        let bits = pack(v);
        let changed = self.0[i].load(Ordering::Relaxed) != bits;
        if changed {
            self.0[i].store(bits, Ordering::Relaxed);
        }
        changed
    }

    fn read_into(&self, out: &mut [Vec2]) {
        for (i, v) in out.iter_mut().enumerate() {
            *v = self.get(i);
        }
    }
}

fn pack(v: Vec2) -> u64 {
    (u64::from(v.x.to_bits()) << 32) | u64::from(v.y.to_bits())
}

fn unpack(bits: u64) -> Vec2 {
    Vec2::new(
        f32::from_bits((bits >> 32) as u32),
        f32::from_bits(bits as u32),
    )
}

/// ORCA gives way only as far as its linear program is feasible; in a
/// dense crowd it is not, and units would press into each other. So the
/// velocities planned are changed as little as it takes for no two units
/// to close in on each other this frame by more than the gap between them,
/// each giving up its share of the excess (a unit pushing through gives
/// up none of it against a standing one, which is pushed aside instead).
/// Units going the same way keep their pace behind each other, and a
/// crowd may turn as one. A few passes over the contacts, colour by
/// colour; what is left is for the separation after the move.
pub(super) fn keep_gaps(
    agents: &[Agent],
    planned: &mut [Vec2],
    colouring: &Colouring,
    seconds: f32,
    (team, threads): (&Team, usize),
) {
    let parts = parts(colouring, threads);
    let shared = Shared::new(planned);
    run_rounds(
        (team, parts),
        GAP_PASSES,
        false,
        colouring.phases(),
        |_, c, part| {
            let pairs = colouring.share(c, part, parts);
            gap_pass(agents, &shared, pairs, seconds)
        },
    );
    shared.read_into(planned);
}

/// One pass of [`keep_gaps`] over `pairs` (no two sharing a body, but in
/// the overflow colour, settled on one thread): each pair's excess
/// closing taken off its two planned velocities, each its share. Whether
/// any velocity changed.
#[inline(never)] // a parallel body of its own in profiles
fn gap_pass(agents: &[Agent], planned: &Shared, pairs: &[(u32, u32)], seconds: f32) -> bool {
    let mut changed = false;
    for &(i, j) in pairs {
        let (i, j) = (i as usize, j as usize);
        let (me, other) = (&agents[i], &agents[j]);
        let offset = other.position - me.position;
        let distance = offset.length();
        if distance < 1e-4 {
            continue;
        }
        let toward = offset / distance;
        let gap = (distance - me.radius - other.radius).max(0.0);
        let (mine_now, theirs_now) = (planned.get(i), planned.get(j));
        let closing = (mine_now - theirs_now).dot(toward);
        let excess = closing - gap / seconds;
        if excess <= 1e-5 {
            continue;
        }
        let (mine, theirs) = (priority(me, other).gives, priority(other, me).gives);
        let total = mine + theirs;
        if total <= 0.0 {
            continue;
        }
        changed |= planned.set(i, mine_now - toward * excess * mine / total);
        changed |= planned.set(j, theirs_now + toward * excess * theirs / total);
    }
    changed
}

/// The way `me`, `offset` from `other` and `distance` apart, is pushed
/// off it: straight away, or where the two stand on one spot, the way
/// that pair always parts.
fn away(offset: Vec2, distance: f32, me: &Agent, other: &Agent) -> Vec2 {
    if distance > 1e-4 {
        offset / distance
    } else {
        parting_direction(me.rank, other.rank)
    }
}

/// What [`Separation::settle`] reads: the frame's agents, each one's map
/// for its size (`None`: not moved), the passages, the contacts coloured.
pub(crate) struct Separation<'a> {
    pub(crate) agents: &'a [Agent],
    pub(crate) views: &'a [Option<MapView<'a>>],
    pub(crate) passages: &'a Passages,
    pub(crate) colouring: &'a Colouring,
    /// [`CrowdSettings::separation_rounds`](crate::movement::CrowdSettings::separation_rounds).
    pub(crate) rounds: usize,
    /// The agents' positions as the frame started, in buckets (built by
    /// avoidance), and the frame's length: a body the rounds pushed
    /// farther than the contacts allowed for is checked against the bodies
    /// around it too ([`missed_pairs`](Self::missed_pairs)).
    pub(crate) grid: &'a SpatialGrid,
    pub(crate) seconds: f32,
}

impl Separation<'_> {
    /// Pushes overlapping bodies at `positions` apart: a few rounds over
    /// the contacts, colour by colour, each unit taking its share as in
    /// avoidance, every step checked on the grid; then a unit pushing
    /// through deeper than a squeeze into another steps back, and what is
    /// still too deep is held back. How far each body was pushed (zero:
    /// not moved). The same for any `threads`: the pairs of a colour share
    /// no body.
    pub(crate) fn pushes(
        &self,
        positions: &mut [Vec2],
        (team, threads): (&Team, usize),
    ) -> Vec<Vec2> {
        let start = positions.to_vec();
        let colouring = self.colouring;
        let parts = parts(colouring, threads);
        let shared = Shared::new(positions);
        // The last round only steps pushers back; it runs even when a
        // round before it changed nothing (and ended the others).
        run_rounds(
            (team, parts),
            self.rounds + 1,
            true,
            colouring.phases(),
            |r, p, part| {
                let pairs = colouring.share(p, part, parts);
                if r < self.rounds {
                    self.round(&shared, pairs, r >= self.rounds / 2)
                } else {
                    self.step_back(&shared, pairs);
                    false
                }
            },
        );
        shared.read_into(positions);
        self.hold_back(positions);
        positions.iter().zip(&start).map(|(b, a)| b - a).collect()
    }

    /// [`pushes`](Self::pushes), as whether each body moved.
    #[cfg(test)]
    pub(super) fn settle(&self, positions: &mut [Vec2], threads: usize) -> Vec<bool> {
        // A pace never measured: the team goes on the pool.
        use crate::movement::parallel::{Pace, with_team};
        let pushes = with_team(threads, &Pace::new(), 1, |team| {
            self.pushes(positions, (team, threads))
        });
        pushes.iter().map(|&push| push != Vec2::ZERO).collect()
    }

    /// One round over `pairs`: each pair deeper than the slop pushed
    /// apart, each body its share. Whether any body moved.
    #[inline(never)] // a parallel body of its own in profiles
    fn round(&self, positions: &Shared, pairs: &[(u32, u32)], shared_out: bool) -> bool {
        let (agents, walk_views) = (self.agents, self.views);
        let mut changed = false;
        for &(i, j) in pairs {
            let (i, j) = (i as usize, j as usize);
            let (me, other) = (&agents[i], &agents[j]);
            let (mut at_i, mut at_j) = (positions.get(i), positions.get(j));
            // A body with no map to move on (off every map, or of a class
            // its map lacks) stands like a wall: the other takes the whole
            // push.
            let neither = walk_views[i].is_none() && walk_views[j].is_none();
            if neither || !at_i.is_finite() || !at_j.is_finite() {
                continue;
            }
            let offset = at_i - at_j;
            let distance = offset.length();
            let depth = me.radius + other.radius - distance;
            if depth <= OVERLAP_SLOP * (me.radius + other.radius) {
                continue;
            }
            let away = away(offset, distance, me, other);
            let (my, their) = (priority(me, other), priority(other, me));
            let share = |agent: &Agent, gives: f32| {
                if shared_out && agent.avoids() {
                    gives.max(SHARED_OUT)
                } else {
                    gives
                }
            };
            let (mine, theirs) = (share(me, my.gives), share(other, their.gives));
            let total = mine + theirs;
            if total <= 0.0 {
                continue;
            }
            // Each its share; and where one could not move its share (a
            // wall, a passage's mouth), the other takes the rest, down to a
            // squeeze that still lets a crowd press on: a crowd pressed
            // against a bank would otherwise keep its overlaps frame after
            // frame. A unit that gives nothing (it does not avoid, or it
            // pushes a standing unit aside) takes the rest only where one
            // of the two pushes through or stands: a unit pushing through
            // has little share, so where the other could not move, it gives
            // way for it; and a unit walking into one standing idle that
            // cannot be pushed aside would otherwise walk into its body
            // frame after frame.
            let parted = self.nudge(i, &mut at_i, away * depth * mine / total)
                + self.nudge(j, &mut at_j, -away * depth * theirs / total);
            let mut left = depth - parted - SQUEEZE * (me.radius + other.radius);
            let makes_way = my.makes_way;
            if left > 1e-4 && (makes_way || mine > 0.0) {
                left -= self.nudge(i, &mut at_i, away * left);
            }
            if left > 1e-4 && (makes_way || theirs > 0.0) {
                self.nudge(j, &mut at_j, -away * left);
            }
            changed |= positions.set(i, at_i);
            changed |= positions.set(j, at_j);
        }
        changed
    }

    /// The last resort, for what the rounds left (a jam pressing harder
    /// than they could part in a frame): each body of a pair deeper than
    /// [`OVERLAP_LIMIT`] and deeper than it started the frame goes back to where it
    /// started it, until no such pair is left. Units held back lose their
    /// frame's walk, and only they: a few in a hard jam, and none in most
    /// frames. A pair of units that avoid never ends a frame deeper than
    /// the limit, unless it started it so (spawned into each other), and
    /// then no deeper than it started. On the frame's thread, in the
    /// contacts' order.
    fn hold_back(&self, positions: &mut [Vec2]) {
        let agents = self.agents;
        let missed = self.missed_pairs(positions);
        let too_deep = |i: usize, j: usize, positions: &[Vec2]| {
            let (me, other) = (&agents[i], &agents[j]);
            // A unit that does not avoid walks its own way, through the
            // others if need be: the others make way, and are not held.
            if !me.avoids() || !other.avoids() {
                return false;
            }
            let touching = me.radius + other.radius;
            let limit = OVERLAP_LIMIT * me.radius.min(other.radius);
            let depth = touching - positions[i].distance(positions[j]);
            let before = touching - me.position.distance(other.position);
            depth > limit && depth > before + 1e-4
        };
        loop {
            let mut held = false;
            for &(i, j) in self.colouring.pairs.iter().chain(&missed) {
                let (i, j) = (i as usize, j as usize);
                if self.views[i].is_none() || self.views[j].is_none() {
                    continue;
                }
                if too_deep(i, j, positions) {
                    for k in [i, j] {
                        held |= positions[k] != agents[k].position;
                        positions[k] = agents[k].position;
                    }
                }
            }
            if !held {
                return;
            }
        }
    }

    /// The pairs the contacts left out that the rounds may have brought
    /// into touch. The contacts hold every pair that could touch by
    /// walking ([`CONTACT_MARGIN`] times their radii and a frame's walk
    /// at full speed apart): a pair further apart than that can touch only
    /// if one of the two went further than its part of the margin (its
    /// tenth of its radius and its walk). The rounds may push a body that
    /// far, into one standing beyond the contacts' reach (two units at
    /// rest, one pushed by a third): each body that went that far is
    /// checked against every body around it. None in most frames, and a
    /// few in a hard jam.
    fn missed_pairs(&self, positions: &[Vec2]) -> Vec<(u32, u32)> {
        let agents = self.agents;
        let margin = CONTACT_MARGIN - 1.0;
        let went_far = |k: usize| {
            let agent = &agents[k];
            let allowed =
                margin * agent.radius + CONTACT_MARGIN * agent.speed * self.seconds.max(0.0);
            self.views[k].is_some()
                && positions[k].distance_squared(agent.position) > allowed * allowed
        };
        let far: Vec<usize> = (0..agents.len()).filter(|&k| went_far(k)).collect();
        if far.is_empty() {
            return Vec::new();
        }
        // Any other body stands within its own part of the margin of
        // where the buckets hold it (where it started the frame, and where
        // the hold back may put it again); two far ones touching where
        // they are now are paired directly.
        let (widest, fastest) = widest_and_fastest(agents);
        let slack = margin * widest + CONTACT_MARGIN * fastest * self.seconds.max(0.0);
        let mut missed = Vec::new();
        let mut around = Vec::new();
        for (n, &k) in far.iter().enumerate() {
            let reach = agents[k].radius + widest + slack;
            self.grid.within(positions[k], reach, k as u32, &mut around);
            let touching = |&j: &usize| {
                let reach = agents[k].radius + agents[j].radius;
                positions[k].distance_squared(positions[j]) < reach * reach
            };
            let others = around
                .iter()
                .map(|&j| j as usize)
                .chain(far[n + 1..].iter().copied().filter(touching));
            for j in others {
                if agents[j].map == agents[k].map {
                    missed.push((k.min(j) as u32, k.max(j) as u32));
                }
            }
        }
        missed.sort_unstable();
        missed.dedup();
        missed
    }

    /// Pushing through never ends in another body: where the crowd behind
    /// kept a pusher pressed on, it alone steps back to the squeeze (of two
    /// pushing through, the one that yields).
    #[inline(never)] // a parallel body of its own in profiles
    fn step_back(&self, positions: &Shared, pairs: &[(u32, u32)]) {
        let agents = self.agents;
        for &(i, j) in pairs {
            let (i, j) = (i as usize, j as usize);
            let (me, other) = (&agents[i], &agents[j]);
            if !me.pushing() && !other.pushing() {
                continue;
            }
            let offset = positions.get(i) - positions.get(j);
            let distance = offset.length();
            let excess = me.radius + other.radius - distance - SQUEEZE * (me.radius + other.radius);
            if excess <= 1e-4 {
                continue;
            }
            let away = away(offset, distance, me, other);
            let (k, push) = if priority(me, other).steps_back {
                (i, away * excess)
            } else {
                (j, -away * excess)
            };
            let mut at = positions.get(k);
            self.nudge(k, &mut at, push);
            positions.set(k, at);
        }
    }

    /// Moves agent `k`'s body at `position` by `push` on its map, never
    /// into a passage it has no claim on: how far it went along `push`.
    fn nudge(&self, k: usize, position: &mut Vec2, push: Vec2) -> f32 {
        let (Some(view), agent) = (self.views[k].as_ref(), &self.agents[k]) else {
            return 0.0;
        };
        let before = *position;
        walk_velocity(view, position, push, 1.0);
        if !agent.crossing()
            && let Some(map) = agent.map
        {
            *position = self.passages.stop_outside(map, view, before, *position);
        }
        (*position - before).dot(push.normalize_or_zero()).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::run_rounds;
    use crate::movement::parallel::Team;

    /// The rounds `run_rounds` runs when the rounds before `quiet` change
    /// something and the rest nothing.
    fn rounds_run(rounds: usize, finish: bool, quiet: usize) -> Vec<usize> {
        let ran = Mutex::new(Vec::new());
        run_rounds((&Team::alone(), 1), rounds, finish, 2, |r, p, _| {
            if p == 0 {
                ran.lock().unwrap().push(r);
            }
            r < quiet
        });
        ran.into_inner().unwrap()
    }

    /// A round that changes nothing ends the rounds (those left would
    /// change nothing either), but for the finishing round, which runs in
    /// any case; a solve that keeps changing runs every round.
    #[test]
    fn a_quiet_round_ends_the_rounds_but_for_the_last() {
        assert_eq!(rounds_run(6, false, 2), [0, 1, 2]);
        assert_eq!(rounds_run(6, true, 2), [0, 1, 2, 5]);
        assert_eq!(rounds_run(6, true, 0), [0, 5]);
        assert_eq!(rounds_run(6, true, 9), [0, 1, 2, 3, 4, 5]);
        assert_eq!(rounds_run(6, false, 9), [0, 1, 2, 3, 4, 5]);
    }
}
