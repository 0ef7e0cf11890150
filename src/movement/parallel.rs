//! Passes over the crowd on Bevy's compute task pool: over the movers'
//! components ([`each_mover!`]) and over the crowd's arrays in chunks
//! ([`in_chunks`], [`each_chunk_mut`]), each giving the same result on
//! any number of threads.

use bevy::tasks::{ComputeTaskPool, ParallelSlice, ParallelSliceMut, TaskPool};

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

/// The length of the chunks a pass over `len` items is split into, at
/// least `least` each, for up to `threads` threads; `None` when the pass
/// runs whole on this thread (one thread, or too few items to be worth a
/// hand-out to the pool).
fn chunk_len(len: usize, threads: usize, least: usize) -> Option<usize> {
    (threads > 1 && len > least).then(|| len.div_ceil(threads.saturating_mul(2)).max(least))
}

/// Runs `work` over `items` in chunks (see [`chunk_len`]) on the compute
/// task pool: the results in the items' order, the same for any number of
/// threads as long as `work` reads only what it is given.
pub(crate) fn in_chunks<T: Sync, R: Send + 'static>(
    items: &[T],
    threads: usize,
    least: usize,
    work: impl Fn(&[T]) -> R + Send + Sync,
) -> Vec<R> {
    let Some(chunk) = chunk_len(items.len(), threads, least) else {
        return vec![work(items)];
    };
    let pool = ComputeTaskPool::get_or_init(TaskPool::default);
    items.par_chunk_map(pool, chunk, |_, part| work(part))
}

/// Runs `work` over `items` (one of the crowd's arrays) in chunks (see
/// [`chunk_len`]) on the compute task pool, in one dispatch: each call
/// gets the index of its chunk's first item and the chunk to write. The
/// result is the same for any number of threads when `work` writes only
/// its chunk.
pub(crate) fn each_chunk_mut<T: Send>(
    mut items: &mut [T],
    threads: usize,
    least: usize,
    work: impl Fn(usize, &mut [T]) + Send + Sync,
) {
    let Some(chunk) = chunk_len(items.len(), threads, least) else {
        work(0, items);
        return;
    };
    let pool = ComputeTaskPool::get_or_init(TaskPool::default);
    items.par_chunk_map_mut(pool, chunk, |k, part| work(k * chunk, part));
}
