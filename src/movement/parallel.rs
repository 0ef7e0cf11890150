//! Passes over the crowd on Bevy's compute task pool: over the movers'
//! components ([`each_mover!`]), and the stages of one system's work in
//! one dispatch ([`with_team`], [`Team`]), each giving the same result on
//! any number of threads.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use bevy::tasks::{ComputeTaskPool, TaskPool};

use super::tuning::SEAT_CHUNK;

/// Runs `$body` for every item of `$query`, a pass over movers in which
/// each reads the frame and writes only itself: on the compute task pool
/// from `$least` items on, on this thread below that (where handing the
/// work out costs more than it saves). The same result either way.
macro_rules! each_mover {
    // With a state `$init` makes once per batch of movers (once in all on
    // this thread), handed to `$body` as `$local`.
    ($query:expr, $least:expr, $init:expr, |$local:pat_param, $item:pat_param| $body:expr $(,)?) => {{
        if $query.iter().len() >= $least {
            $query
                .par_iter_mut()
                .for_each_init($init, |$local, $item| $body)
        } else {
            let mut state = ($init)();
            $query.iter_mut().for_each(|$item| {
                let $local = &mut state;
                $body
            })
        }
    }};
    ($query:expr, $least:expr, |$item:pat_param| $body:expr $(,)?) => {{
        if $query.iter().len() >= $least {
            $query.par_iter_mut().for_each(|$item| $body)
        } else {
            $query.iter_mut().for_each(|$item| $body)
        }
    }};
}

pub(crate) use each_mover;

/// How fast a dispatch went lately on the pool's threads and on the
/// frame's thread alone: nanoseconds per unit of its work on each,
/// averaged (`f32` bits; zero until measured). Threads that wait for one
/// another wait for the slowest, and a thread sharing its core with other
/// work (the game's rendering, another program) is slow: the work then
/// runs faster on one thread, and does so. Either way gives the same
/// result to the bit, so the choice, made by the clock, changes no result.
pub(crate) struct Pace {
    on_pool: AtomicU32,
    alone: AtomicU32,
    runs: AtomicU32,
}

/// Every this many runs, the way that was slower lately is tried again.
const PACE_PROBE: u32 = 16;

impl Pace {
    /// A pace not measured yet.
    pub(crate) const fn new() -> Self {
        Pace {
            on_pool: AtomicU32::new(0),
            alone: AtomicU32::new(0),
            runs: AtomicU32::new(0),
        }
    }

    /// Whether the next run goes on the pool: the way that was faster
    /// lately (each tried once first), the other every [`PACE_PROBE`]th.
    pub(crate) fn on_pool_next(&self) -> bool {
        let runs = self.runs.fetch_add(1, Ordering::Relaxed);
        let on_pool = f32::from_bits(self.on_pool.load(Ordering::Relaxed));
        let alone = f32::from_bits(self.alone.load(Ordering::Relaxed));
        (on_pool <= alone) != (runs % PACE_PROBE == PACE_PROBE - 1)
    }

    /// Takes in a run that went `on_pool` or not at `nanos` per unit of
    /// work.
    pub(crate) fn record(&self, on_pool: bool, nanos: f32) {
        let cell = if on_pool { &self.on_pool } else { &self.alone };
        let last = f32::from_bits(cell.load(Ordering::Relaxed));
        let next = if last > 0.0 {
            0.8 * last + 0.2 * nanos
        } else {
            nanos
        };
        if next.is_finite() {
            cell.store(next.max(f32::MIN_POSITIVE).to_bits(), Ordering::Relaxed);
        }
    }
}

/// The threads of one dispatch to the compute task pool, working through
/// a stage's blocks ([`Team::run`]) one stage after another, as Box2D's
/// solver stages do: the frame's thread leads (it runs the serial work
/// between stages and takes blocks of each stage), the pool's others help
/// with the blocks. A block is taken by whichever thread asks first, so a
/// thread that starts late (its core busy with other work) holds nothing
/// up: the others take its blocks, and a stage waits only for the blocks
/// in hand. Which thread runs a block changes nothing when each block
/// writes only its own part.
pub(crate) struct Team<'a> {
    crew: Option<&'a Crew>,
    /// The blocks handed out so far (the next stage's first).
    handed: Cell<usize>,
}

/// What a team's threads share.
struct Crew {
    /// The next block to take (blocks are numbered across the stages).
    next: AtomicUsize,
    /// The blocks finished.
    done: AtomicUsize,
    /// The stage being worked through.
    stage: Mutex<Stage>,
    /// How many stages were handed out (a helper waits for the next).
    published: AtomicUsize,
    /// The leader is through: the helpers go home.
    finished: AtomicBool,
}

/// A stage: blocks `begin..end` of the numbering, each run by `work` (given
/// its index in the stage).
#[derive(Clone, Copy)]
struct Stage {
    begin: usize,
    end: usize,
    work: *const (dyn Fn(usize) + Sync),
}

// SAFETY: `work` is only called through `Crew::take`, for a block taken
// before its stage ended, while the leader still holds the closure (it
// waits for every block of the stage to finish).
unsafe impl Send for Stage {}

/// Spins before each yield while waiting.
const SPINS: u32 = 2_000;

/// Waits, spinning a little, then yielding, until `ready`.
fn wait_until(ready: impl Fn() -> bool) {
    let mut spins = 0u32;
    while !ready() {
        if spins < SPINS {
            std::hint::spin_loop();
            spins += 1;
        } else {
            std::thread::yield_now();
        }
    }
}

/// Runs block `b` of a stage: every block of every team runs in here, the
/// parallel body a profile counts (`tools/serial_share.sh`).
#[inline(never)]
fn block(work: &(dyn Fn(usize) + Sync), b: usize) {
    work(b);
}

/// Counts a block finished when dropped (even by a panic, so that the
/// leader is not left waiting for it).
struct Finished<'a>(&'a AtomicUsize);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Release);
    }
}

impl Crew {
    /// Takes and runs blocks of `stage` until none is left.
    fn take(&self, stage: Stage) {
        loop {
            let next = self.next.load(Ordering::Relaxed);
            if next >= stage.end || next < stage.begin {
                return;
            }
            if self
                .next
                .compare_exchange_weak(next, next + 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                let _finished = Finished(&self.done);
                // SAFETY: the block was taken before the stage ended, so
                // the leader waits in `Team::run` for it with `work` alive.
                block(unsafe { &*stage.work }, next - stage.begin);
            }
        }
    }

    /// A helper's part: the blocks of every stage handed out, until the
    /// leader is through.
    fn help(&self) {
        let mut seen = 0;
        loop {
            wait_until(|| {
                self.published.load(Ordering::Acquire) != seen
                    || self.finished.load(Ordering::Acquire)
            });
            if self.finished.load(Ordering::Acquire) {
                return;
            }
            seen = self.published.load(Ordering::Acquire);
            let stage = *self.stage.lock().unwrap_or_else(PoisonError::into_inner);
            self.take(stage);
        }
    }
}

/// Sends the helpers home when the leader is through (or panicked).
struct Dismiss<'a>(&'a Crew);

impl Drop for Dismiss<'_> {
    fn drop(&mut self) {
        self.0.finished.store(true, Ordering::Release);
    }
}

impl Team<'_> {
    /// A team of the frame's thread alone.
    pub(crate) fn alone() -> Team<'static> {
        Team {
            crew: None,
            handed: Cell::new(0),
        }
    }

    /// Runs `work(b)` for every block `b` below `blocks`, on the team's
    /// threads, each block once: all of them are done when it returns.
    pub(crate) fn run(&self, blocks: usize, work: impl Fn(usize) + Sync) {
        let Some(crew) = self.crew.filter(|_| blocks > 1) else {
            (0..blocks).for_each(|b| block(&work, b));
            return;
        };
        let begin = self.handed.get();
        let end = begin + blocks;
        self.handed.set(end);
        let work: &(dyn Fn(usize) + Sync) = &work;
        // SAFETY: only the lifetime is erased; the closure outlives every
        // call (see `Stage`).
        let work: *const (dyn Fn(usize) + Sync + 'static) = unsafe { std::mem::transmute(work) };
        let stage = Stage { begin, end, work };
        *crew.stage.lock().unwrap_or_else(PoisonError::into_inner) = stage;
        crew.published.fetch_add(1, Ordering::Release);
        crew.take(stage);
        wait_until(|| crew.done.load(Ordering::Acquire) >= end);
    }

    /// Runs `work` over `items` in chunks of `chunk` (the last may be
    /// shorter) on the team's threads: each call gets the index of its
    /// chunk's first item and the chunk to write. The same result on any
    /// number of threads when `work` writes only its chunk.
    pub(crate) fn each_chunk_mut<T: Send>(
        &self,
        items: &mut [T],
        chunk: usize,
        work: impl Fn(usize, &mut [T]) + Sync,
    ) {
        let (len, chunk) = (items.len(), chunk.max(1));
        let base = Items(items.as_mut_ptr());
        self.run(len.div_ceil(chunk), |b| {
            let first = b * chunk;
            let part = chunk.min(len - first);
            // SAFETY: block `b` is run once, and the chunks do not overlap.
            let part = unsafe { std::slice::from_raw_parts_mut(base.at(first), part) };
            work(first, part);
        });
    }

    /// `work` over `items` in chunks of `chunk` on the team's threads: the
    /// results in the items' order.
    pub(crate) fn map_chunks<T: Sync, R: Send>(
        &self,
        items: &[T],
        chunk: usize,
        work: impl Fn(&[T]) -> R + Sync,
    ) -> Vec<R> {
        let chunk = chunk.max(1);
        let mut out: Vec<Option<R>> = (0..items.len().div_ceil(chunk)).map(|_| None).collect();
        self.each_chunk_mut(&mut out, 1, |b, slot| {
            let first = b * chunk;
            slot[0] = Some(work(&items[first..(first + chunk).min(items.len())]));
        });
        out.into_iter().flatten().collect()
    }
}

/// The start of a slice that a team's blocks write in parts.
struct Items<T>(*mut T);

// SAFETY: each block writes its own part only (see `each_chunk_mut`).
unsafe impl<T: Send> Send for Items<T> {}
unsafe impl<T: Send> Sync for Items<T> {}

impl<T> Items<T> {
    /// Where item `k` lies (a method, so that closures capture the whole
    /// `Sync` wrapper, not its bare pointer).
    fn at(&self, k: usize) -> *mut T {
        // SAFETY: callers stay within the slice.
        unsafe { self.0.add(k) }
    }
}

/// The threads for a team over `work` items: `threads`, or the frame's
/// thread alone when the work is too little to be worth a hand-out to the
/// pool (at most two chunks of seats).
pub(crate) fn team_threads(threads: usize, work: usize) -> usize {
    if work > 2 * SEAT_CHUNK { threads } else { 1 }
}

/// Runs `lead` with a team of up to `threads` threads (the frame's and the
/// compute task pool's) in one dispatch to the pool; or of the frame's
/// thread alone, when there is one thread or `pace` found that faster
/// lately (for `work` units of work). The result is the same either way.
pub(crate) fn with_team<R>(
    threads: usize,
    pace: &Pace,
    work: usize,
    lead: impl FnOnce(&Team) -> R,
) -> R {
    let pool = ComputeTaskPool::get_or_init(TaskPool::default);
    let size = threads.min(pool.thread_num());
    if size < 2 {
        return lead(&Team::alone());
    }
    let on_pool = pace.on_pool_next();
    let began = crate::clock::now();
    let out = if on_pool {
        let crew = Crew {
            next: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            stage: Mutex::new(Stage {
                begin: 0,
                end: 0,
                work: &|_| {},
            }),
            published: AtomicUsize::new(0),
            finished: AtomicBool::new(false),
        };
        let mut out = None;
        pool.scope(|scope| {
            let crew = &crew;
            for _ in 1..size {
                scope.spawn(async move { crew.help() });
            }
            let _dismiss = Dismiss(crew);
            let team = Team {
                crew: Some(crew),
                handed: Cell::new(0),
            };
            out = Some(lead(&team));
        });
        out.expect("the leader ran")
    } else {
        lead(&Team::alone())
    };
    let nanos = crate::clock::since(began).as_nanos() as f32 / work.max(1) as f32;
    pace.record(on_pool, nanos);
    out
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::{Crew, PACE_PROBE, Pace, Stage, Team, with_team};

    /// Runs `lead` on a team of up to three threads, on the pool (a pace
    /// never measured tries the pool first).
    fn on_a_team<R>(lead: impl FnOnce(&Team) -> R) -> R {
        with_team(3, &Pace::new(), 1, lead)
    }

    /// Every block of a stage runs once, and all of them before the next
    /// stage starts: each stage here reads what the last one wrote.
    #[test]
    fn every_block_runs_once_and_a_stage_sees_the_last_one_whole() {
        let runs: Vec<AtomicUsize> = (0..64).map(|_| AtomicUsize::new(0)).collect();
        let sums = on_a_team(|team| {
            let mut sums = Vec::new();
            for stage in 0..50 {
                team.run(runs.len(), |b| {
                    // Every block of the stage before has run `stage` times.
                    let behind = runs.iter().filter(|r| r.load(Ordering::Relaxed) < stage);
                    assert_eq!(behind.count(), 0, "stage {stage} started early");
                    runs[b].fetch_add(1, Ordering::Relaxed);
                });
                sums.push(
                    runs.iter()
                        .map(|r| r.load(Ordering::Relaxed))
                        .sum::<usize>(),
                );
            }
            sums
        });
        let expected: Vec<usize> = (1..=50).map(|stage| stage * 64).collect();
        assert_eq!(sums, expected);
    }

    /// Chunks written and mapped on a team are those the frame's thread
    /// alone gives, in order, whatever thread took each.
    #[test]
    fn chunks_on_a_team_are_as_alone() {
        let work = |team: &Team| {
            let mut items: Vec<u64> = (0..1000).collect();
            team.each_chunk_mut(&mut items, 7, |first, chunk| {
                for (k, item) in chunk.iter_mut().enumerate() {
                    *item = *item * 31 + (first + k) as u64;
                }
            });
            let sums = team.map_chunks(&items, 13, |part| part.iter().sum::<u64>());
            (items, sums)
        };
        let alone = work(&Team::alone());
        assert_eq!(on_a_team(work), alone);
        assert_eq!(alone.1.len(), 1000usize.div_ceil(13));
        assert_eq!(alone.0[999], 999 * 32);
    }

    /// A helper that starts only after the leader is through (its thread
    /// was busy the whole time) finds nothing to do and goes home, and one
    /// holding a stage that ended takes no block of it.
    #[test]
    fn a_late_helper_takes_nothing_and_goes_home() {
        static RAN: AtomicUsize = AtomicUsize::new(0);
        let work = |_: usize| {
            RAN.fetch_add(1, Ordering::Relaxed);
        };
        let crew = Crew {
            next: AtomicUsize::new(5),
            done: AtomicUsize::new(5),
            stage: std::sync::Mutex::new(Stage {
                begin: 0,
                end: 5,
                work: &work,
            }),
            published: AtomicUsize::new(1),
            finished: std::sync::atomic::AtomicBool::new(false),
        };
        // The stage's five blocks are all taken: nothing is run again.
        crew.take(Stage {
            begin: 0,
            end: 5,
            work: &work,
        });
        assert_eq!(RAN.load(Ordering::Relaxed), 0);
        crew.finished.store(true, Ordering::Release);
        crew.help();
        assert_eq!(RAN.load(Ordering::Relaxed), 0);
    }

    /// A dispatch goes the way that ran faster lately, each way tried once
    /// first, and the slower way again every `PACE_PROBE`th run: a pool
    /// whose threads share their cores with other work is left, and taken
    /// again once it is faster.
    #[test]
    fn a_dispatch_goes_the_way_that_ran_faster() {
        let pace = Pace::new();
        let mut ways = Vec::new();
        for _ in 0..2 {
            let on_pool = pace.on_pool_next();
            pace.record(on_pool, if on_pool { 40.0 } else { 10.0 });
            ways.push(on_pool);
        }
        assert_eq!(ways, [true, false], "each way tried once first");
        let ways: Vec<bool> = (0..2 * PACE_PROBE).map(|_| pace.on_pool_next()).collect();
        let probes = ways.iter().filter(|&&on_pool| on_pool).count();
        assert_eq!(probes, 2, "the pool tried again every {PACE_PROBE}th solve");
        // The pool grows faster (the other work ended): it is taken again.
        for _ in 0..12 {
            pace.record(true, 5.0);
        }
        assert!(pace.on_pool_next());
    }
}
