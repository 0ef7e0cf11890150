//! The frame's budget of work ([`FrameBudget`]) and the lanes it is spent
//! in: work dealt in turn to the lanes with the most left ([`deal`]), and
//! one round of it run on the compute task pool's threads ([`run_lanes`]).
//! Refilled each frame from [`PathfindingSettings`](crate::schedule::PathfindingSettings)
//! by the schedule.

use std::time::Duration;

use crate::clock::{self, Instant};

use bevy::prelude::*;

/// Expansions between two clock reads when a time cap is set
/// ([`PathfindingSettings::max_frame_time`](crate::schedule::PathfindingSettings::max_frame_time)).
pub const TIME_CHECK_INTERVAL: u32 = 256;

/// The node expansions left in this run of the schedule, shared by
/// everything that searches: group floods first, then searches. Refilled
/// from [`PathfindingSettings::nodes_per_frame`](crate::schedule::PathfindingSettings::nodes_per_frame) in
/// [`FrontierSystems::Orders`](crate::schedule::FrontierSystems::Orders). With
/// [`PathfindingSettings::max_frame_time`](crate::schedule::PathfindingSettings::max_frame_time) set it is handed out in slices
/// and runs dry once the budgeted work of the frame has taken that long.
///
/// With [`PathfindingSettings::search_lanes`](crate::schedule::PathfindingSettings::search_lanes) above 1 the budget is split
/// equally among the lanes: each lane spends its own part over the frame's
/// rounds of work, so every lane does about the same work each frame
/// whatever the rounds dealt it (see [`FrameBudget::lane_times`]).
#[derive(Resource, Debug, Default)]
pub struct FrameBudget {
    nodes_per_frame: u32,
    spent: u64,
    time_cap: Option<Duration>,
    /// When the first slice was handed out this frame.
    clock: Option<Instant>,
    timed_out: bool,
    /// Per lane: what it may still spend this frame and how long it has
    /// worked.
    lanes: Vec<Lane>,
    /// The part of `spent` that read paths back rather than expanding
    /// nodes ([`FrameBudget::reading`]).
    reading: u64,
}

/// One lane's part of the frame.
#[derive(Clone, Copy, Debug, Default)]
struct Lane {
    left: u32,
    time: Duration,
}

impl FrameBudget {
    /// Expansions left this frame.
    pub fn left(&self) -> u32 {
        if self.timed_out {
            return 0;
        }
        let spent = self.spent.min(u32::MAX as u64) as u32;
        self.nodes_per_frame.saturating_sub(spent)
    }

    /// Expansions spent so far this frame, reading included (see
    /// [`FrameBudget::reading`]).
    pub fn spent(&self) -> u64 {
        self.spent
    }

    /// The part of [`FrameBudget::spent`] that read paths back from shared
    /// searches: one per 8 cells of a path, work the budget pays for like
    /// expansions, so a squad's answers spread over frames instead of making
    /// one long.
    pub fn reading(&self) -> u64 {
        self.reading
    }

    /// Records up to `units` spent reading paths back from a shared search
    /// (see [`FrameBudget::reading`]), as much as is left this frame;
    /// returns the rest, to be paid in the next frames.
    pub(crate) fn spend_reading(&mut self, units: u64) -> u64 {
        let now = units.min(self.left() as u64);
        self.reading += now;
        self.spend(now);
        units - now
    }

    /// How long each lane has worked this frame (one lane unless
    /// [`PathfindingSettings::search_lanes`](crate::schedule::PathfindingSettings::search_lanes) says more): the time of its
    /// group floods, quick routes and searches, measured on whatever
    /// thread ran it. Lanes that work alike take alike, so the slowest
    /// against the mean says how evenly a frame's work spreads over cores.
    pub fn lane_times(&self) -> impl Iterator<Item = Duration> + '_ {
        self.lanes.iter().map(|lane| lane.time)
    }

    /// The most the next piece of work may spend: everything left, or a
    /// [`PathfindingSettings::TIME_CHECK_INTERVAL`](crate::schedule::PathfindingSettings::TIME_CHECK_INTERVAL) slice when a time cap
    /// is set (the clock starts with the frame's first slice).
    pub fn slice(&mut self) -> u32 {
        let left = self.left();
        self.capped(left)
    }

    /// `most`, or a time-check slice of it when a time cap is set (and the
    /// clock started).
    fn capped(&mut self, most: u32) -> u32 {
        match self.time_cap {
            Some(_) if most > 0 => {
                self.clock.get_or_insert_with(clock::now);
                most.min(TIME_CHECK_INTERVAL)
            }
            _ => most,
        }
    }

    /// Records `expansions` spent outside the lanes' rounds (charged to the
    /// lanes in order); with a time cap, also reads the clock.
    pub fn spend(&mut self, expansions: u64) {
        let mut charge = expansions;
        for lane in &mut self.lanes {
            let taken = charge.min(lane.left as u64);
            lane.left -= taken as u32;
            charge -= taken;
        }
        self.record(expansions);
    }

    /// Adds `expansions` to what the frame spent; with a time cap, the
    /// frame's budgeted work stops once it has taken that long. Only work
    /// done reads the clock: a piece of work that spent nothing (a search
    /// that had already ended, a round with nothing to run) never ends the
    /// frame, so even a zero cap lets every frame do one slice of work.
    /// (Before, a round that spent nothing timed the frame out before its
    /// slice: a shared search that had ended, waiting for budget to read its
    /// paths back, never got any.)
    fn record(&mut self, expansions: u64) {
        self.spent += expansions;
        if expansions == 0 {
            return;
        }
        if let (Some(cap), Some(started)) = (self.time_cap, self.clock) {
            self.timed_out |= clock::since(started) >= cap;
        }
    }

    /// Lanes this frame.
    pub(crate) fn lane_count(&self) -> usize {
        self.lanes.len().max(1)
    }

    /// What lane `lane` may still spend this frame.
    pub(crate) fn lane_left(&self, lane: usize) -> u32 {
        if self.timed_out || self.left() == 0 {
            return 0;
        }
        self.lanes.get(lane).map_or(0, |lane| lane.left)
    }

    /// The most a lane may spend in one round of work: everything with one
    /// lane; with L lanes, a share of the frame's budget split into L / 2
    /// rounds ([`FrameBudget::ROUNDS_PER_TWO_LANES`]), so that a lane whose
    /// work ran slow in one round (its searches' memory was cold, it
    /// started and ended more of them) evens out over the next. The lanes'
    /// times then differ by a fraction of a round, not of a frame.
    fn round_share(&self) -> u32 {
        let lanes = self.lanes.len().max(1) as u32;
        if lanes == 1 {
            return u32::MAX;
        }
        let rounds = (lanes / 2 * Self::ROUNDS_PER_TWO_LANES).max(1);
        (self.nodes_per_frame / lanes).div_ceil(rounds).max(1)
    }

    /// Rounds a frame's budget is split into per two lanes (see
    /// [`FrameBudget::round_share`]).
    const ROUNDS_PER_TWO_LANES: u32 = 1;

    /// The lanes with expansions left, those with the most first (ties to
    /// the lower lane): the order work is dealt in.
    pub(crate) fn open_lanes(&self) -> Vec<usize> {
        let mut open: Vec<usize> = (0..self.lanes.len())
            .filter(|&lane| self.lane_left(lane) > 0)
            .collect();
        open.sort_by_key(|&lane| std::cmp::Reverse(self.lanes[lane].left));
        open
    }

    /// A full budget for a new frame: `nodes_per_frame` in `lanes` equal
    /// parts, with a time cap if given.
    pub(crate) fn refill(
        &mut self,
        nodes_per_frame: u32,
        time_cap: Option<Duration>,
        lanes: usize,
    ) {
        *self = Self {
            nodes_per_frame,
            time_cap,
            lanes: shares(nodes_per_frame, lanes)
                .map(|left| Lane {
                    left,
                    time: Duration::ZERO,
                })
                .collect(),
            ..Self::default()
        };
    }
}

/// `total` split into `parts` equal shares, the first ones one more when it
/// does not divide.
pub(crate) fn shares(total: u32, parts: usize) -> impl Iterator<Item = u32> {
    let parts = parts.max(1) as u32;
    (0..parts).map(move |part| total / parts + u32::from(part < total % parts))
}

/// Runs one round of budgeted work in lanes: `dealt[lane]` holds the work
/// dealt to each lane (best first), and each lane runs its pieces in turn
/// on what it may still spend this frame (at most `caps[lane]` when given,
/// and a time-check slice when a time cap is set): the first piece runs
/// first and hands what it leaves to the next. `work(item, most)` spends at
/// most `most` expansions and returns what it spent. Lanes run on up to
/// `threads` threads ([`threads_for`]) of the compute task pool, the
/// frame's own thread taking the first group, and nothing a lane does
/// depends on the thread it runs on, so every thread count gives the same
/// results. Each lane's spending and time are charged to it; returns what
/// each lane spent.
pub(crate) fn run_lanes<T: Send>(
    budget: &mut FrameBudget,
    threads: usize,
    dealt: &mut [Vec<T>],
    caps: Option<&[u32]>,
    work: impl Fn(&mut T, u32) -> u64 + Sync,
) -> Vec<u64> {
    let round = budget.round_share();
    let allowance: Vec<u32> = (0..dealt.len())
        .map(|lane| {
            let most = budget.lane_left(lane).min(round);
            let most = caps.map_or(most, |caps| most.min(caps[lane]));
            budget.capped(most)
        })
        .collect();
    let run_lane = |items: &mut Vec<T>, mut left: u32| {
        let began = clock::now();
        let mut spent = 0;
        for item in items.iter_mut() {
            if left == 0 {
                break;
            }
            let used = work(item, left);
            spent += used;
            left = left.saturating_sub(used.min(u32::MAX as u64) as u32);
        }
        (spent, clock::since(began))
    };
    let busy: Vec<usize> = (0..dealt.len())
        .filter(|&lane| !dealt[lane].is_empty() && allowance[lane] > 0)
        .collect();
    let threads = threads_for(threads).min(busy.len());
    let mut results = vec![(0, Duration::ZERO); dealt.len()];
    if threads <= 1 {
        for (lane, items) in dealt.iter_mut().enumerate() {
            if busy.contains(&lane) {
                results[lane] = run_lane(items, allowance[lane]);
            }
        }
    } else {
        let mut groups: Vec<Vec<(usize, &mut Vec<T>)>> = (0..threads).map(|_| Vec::new()).collect();
        for (lane, items) in dealt.iter_mut().enumerate() {
            if let Some(at) = busy.iter().position(|&b| b == lane) {
                groups[at % threads].push((lane, items));
            }
        }
        let pool = bevy::tasks::ComputeTaskPool::get_or_init(bevy::tasks::TaskPool::default);
        let run_group = |group: Vec<(usize, &mut Vec<T>)>| {
            group
                .into_iter()
                .map(|(lane, items)| (lane, run_lane(items, allowance[lane])))
                .collect::<Vec<_>>()
        };
        let run_group = &run_group;
        // The frame's thread takes the first group itself while the pool's
        // threads take the others (it would otherwise only wait for them).
        let mut here = Vec::new();
        let there = pool.scope(|scope| {
            let mut groups = groups.into_iter();
            let first = groups.next();
            for group in groups {
                scope.spawn(async move { run_group(group) });
            }
            here = first.map_or_else(Vec::new, run_group);
        });
        for (lane, result) in here.into_iter().chain(there.into_iter().flatten()) {
            results[lane] = result;
        }
    }
    let mut spent = Vec::with_capacity(results.len());
    for (lane, (used, time)) in results.into_iter().enumerate() {
        if let Some(budget_lane) = budget.lanes.get_mut(lane) {
            budget_lane.left = budget_lane
                .left
                .saturating_sub(used.min(u32::MAX as u64) as u32);
            budget_lane.time += time;
        }
        budget.record(used);
        spent.push(used);
    }
    spent
}

/// Deals `items` (best first) in turn into `open` lanes (the order
/// [`FrameBudget::open_lanes`] gives), as many lists as the frame has
/// lanes.
pub(crate) fn deal<T>(
    lanes: usize,
    open: &[usize],
    items: impl IntoIterator<Item = T>,
) -> Vec<Vec<T>> {
    let mut dealt: Vec<Vec<T>> = (0..lanes).map(|_| Vec::new()).collect();
    if open.is_empty() {
        return dealt;
    }
    for (i, item) in items.into_iter().enumerate() {
        dealt[open[i % open.len()]].push(item);
    }
    dealt
}

/// The threads work is spread over: `setting`, or with 0 (or more than
/// there are) all the compute task pool has and the frame's own thread,
/// which works on the tasks too while it waits for them.
pub(crate) fn threads_for(setting: usize) -> usize {
    let pool =
        bevy::tasks::ComputeTaskPool::get_or_init(bevy::tasks::TaskPool::default).thread_num();
    let all = pool + 1;
    if setting == 0 { all } else { setting.min(all) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_shared_and_refilled() {
        let mut budget = FrameBudget::default();
        budget.refill(100, None, 1);
        assert_eq!(budget.slice(), 100);
        budget.spend(70);
        assert_eq!((budget.left(), budget.spent()), (30, 70));
        budget.spend(45);
        assert_eq!(budget.left(), 0, "overspending leaves nothing, never wraps");
        budget.refill(4096, None, 1);
        assert_eq!(budget.left(), 4096);
    }

    #[test]
    fn a_time_cap_hands_out_slices_and_stops_the_frame() {
        let mut budget = FrameBudget::default();
        budget.refill(4096, Some(Duration::ZERO), 1);
        assert_eq!(budget.slice(), TIME_CHECK_INTERVAL);
        budget.spend(0);
        assert_eq!(
            budget.slice(),
            TIME_CHECK_INTERVAL,
            "work that spent nothing does not end the frame"
        );
        budget.spend(TIME_CHECK_INTERVAL as u64);
        assert_eq!(budget.slice(), 0, "a zero cap allows one slice");
    }
}
