//! Per-character frame work split across the threads that pose the crowd.
//!
//! Placing, choosing levels and foreseeing touch every character of a
//! crowd once a frame on the thread that records it: at 100,000 characters
//! a few milliseconds each, in order, while the crowd's own update runs on
//! every core. A crowd's `AnimationSystem` makes the thread that builds it
//! worker 0 of its rayon pool, so the frame's work can run on the same
//! threads: chunks of characters go to the pool this thread works in.
//! A thread in no pool (a single character, a tool) runs the whole slice
//! in order as one chunk: no thread is woken, and nothing is allocated
//! (rayon's global queue, used from outside a pool, allocates).

use crate::pool_trace::CallersTrace;
use rayon::prelude::*;

/// Characters per task: about 50 µs of placing or choosing (large enough
/// to amortise a task, small enough to balance a few thousand characters
/// over the cores).
pub const CHUNK: usize = 2048;

/// Whether work over `len` characters runs in chunks on a pool: when this
/// thread works in one of more than one thread and there is more than a chunk.
pub fn in_parallel(len: usize) -> bool {
    len > CHUNK && rayon::current_num_threads() > 1 && rayon::current_thread_index().is_some()
}

/// Runs `task(first, chunk)` over `items` in chunks of [`CHUNK`] (`first`:
/// the index of the chunk's first item) on the pool this thread works in,
/// or once over the whole slice (`first` 0) when it works in none.
pub fn for_each_chunk<T: Send>(items: &mut [T], task: impl Fn(usize, &mut [T]) + Sync + Send) {
    if in_parallel(items.len()) {
        let trace = CallersTrace::here();
        items.par_chunks_mut(CHUNK).enumerate().for_each(|(i, chunk)| {
            trace.run(|| {
                let _span = tracing::trace_span!("chunk", first = i * CHUNK).entered();
                task(i * CHUNK, chunk)
            })
        });
    } else {
        task(0, items);
    }
}

/// [`for_each_chunk`] over two slices of one length at once: `task(first,
/// a_chunk, b_chunk)` gets the same items of each.
pub fn for_each_chunk_pair<A: Send, B: Send>(
    a: &mut [A],
    b: &mut [B],
    task: impl Fn(usize, &mut [A], &mut [B]) + Sync + Send,
) {
    assert_eq!(a.len(), b.len(), "two slices of one length");
    if in_parallel(a.len()) {
        let trace = CallersTrace::here();
        a.par_chunks_mut(CHUNK).zip(b.par_chunks_mut(CHUNK)).enumerate().for_each(|(i, (a, b))| {
            trace.run(|| {
                let _span = tracing::trace_span!("chunk", first = i * CHUNK).entered();
                task(i * CHUNK, a, b)
            })
        });
    } else {
        task(0, a, b);
    }
}

/// Runs `task` on each item, as tasks of their own on the pool this
/// thread works in when `work` (the characters the items stand for) is
/// more than a chunk, else in order on this thread.
pub fn for_each_task<T: Send>(items: &mut [T], work: usize, task: impl Fn(&mut T) + Sync + Send) {
    if in_parallel(work) {
        let trace = CallersTrace::here();
        items.par_iter_mut().for_each(|item| {
            trace.run(|| {
                let _span = tracing::trace_span!("chunk").entered();
                task(item)
            })
        });
    } else {
        items.iter_mut().for_each(task);
    }
}

/// The least of `value(chunk)` over `items`' chunks (as [`for_each_chunk`]
/// splits them), and `start` when it is less; NaN values are skipped.
pub fn min_over_chunks<T: Sync>(items: &[T], start: f32, value: impl Fn(&[T]) -> f32 + Sync + Send) -> f32 {
    if in_parallel(items.len()) {
        items.par_chunks(CHUNK).map(value).reduce(|| start, f32::min)
    } else {
        value(items).min(start)
    }
}

/// The sums of `value(first, chunk)` over `items`' chunks (as
/// [`for_each_chunk`] splits them, `first` the index of the chunk's first
/// item), each of the `N` counts saturating.
pub fn sum_over_chunks<T: Sync, const N: usize>(
    items: &[T],
    value: impl Fn(usize, &[T]) -> [u64; N] + Sync + Send,
) -> [u64; N] {
    if in_parallel(items.len()) {
        let trace = CallersTrace::here();
        let add = |a: [u64; N], b: [u64; N]| std::array::from_fn(|k| a[k].saturating_add(b[k]));
        items
            .par_chunks(CHUNK)
            .enumerate()
            .map(|(i, chunk)| trace.run(|| value(i * CHUNK, chunk)))
            .reduce(|| [0; N], add)
    } else {
        value(0, items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In a pool of two, chunks cover the slice once with their own first
    /// index; outside any pool, one chunk.
    #[test]
    fn chunks_cover_every_item_once_with_its_index() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        for n in [0, 1, CHUNK, CHUNK + 1, 5 * CHUNK + 7] {
            // Per item: the index its chunk gave it, and how often it was visited.
            let mut items = vec![(usize::MAX, 0usize); n];
            pool.install(|| {
                for_each_chunk(&mut items, |first, chunk| {
                    for (i, (index, visits)) in chunk.iter_mut().enumerate() {
                        *index = first + i;
                        *visits += 1;
                    }
                })
            });
            assert!(items.iter().enumerate().all(|(i, &(v, _))| v == i), "{n} items");
            assert!(items.iter().all(|&(_, t)| t == 1), "{n} items: each once");
            let values: Vec<f32> = (0..n).map(|i| if i % 3 == 0 { f32::NAN } else { i as f32 }).collect();
            let least = |c: &[f32]| c.iter().copied().fold(f32::INFINITY, f32::min);
            let expected = if n >= 2 { 1.0 } else { 5.0 };
            assert_eq!(pool.install(|| min_over_chunks(&values, 5.0, least)), expected, "{n} items");
            // Each chunk's sum names its first item: the indices' sum, and their count.
            let indices =
                |first: usize, c: &[f32]| [(first..first + c.len()).map(|i| i as u64).sum(), c.len() as u64];
            let all = (n as u64 * n.saturating_sub(1) as u64) / 2;
            assert_eq!(pool.install(|| sum_over_chunks(&values, indices)), [all, n as u64], "{n} items");
        }
        let mut items = vec![0u8; 3 * CHUNK];
        for_each_chunk(&mut items, |first, chunk| {
            assert_eq!((first, chunk.len()), (0, 3 * CHUNK), "outside a pool: one chunk");
            chunk.fill(1);
        });
        assert!(items.iter().all(|&v| v == 1));
    }
}
