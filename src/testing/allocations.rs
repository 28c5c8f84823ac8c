//! A global allocator that counts heap allocations while counting is on:
//! how the benchmarks and tests prove that a hot path allocates nothing,
//! and how they measure the bytes a structure keeps (`count_bytes`).
//! It counts on the thread that asked (`count_allocations`) and on rayon's
//! worker threads (the animation pool), not elsewhere: a test harness's own
//! thread may still be allocating while the test runs. Installed by the
//! harnesses that need it, each with its own `#[global_allocator]`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering};

thread_local! {
    /// This thread asked for the count. Const-initialised, no destructor:
    /// safe to read from inside the allocator.
    static ASKED_HERE: Cell<bool> = const { Cell::new(false) };
}

/// Whether an allocation on this thread counts.
fn counted_thread() -> bool {
    ASKED_HERE.with(Cell::get) || rayon::current_thread_index().is_some()
}

/// Forwards to the system allocator, counting while `COUNTING` is set.
pub struct CountingAllocator;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
/// Bytes allocated minus bytes freed while counting.
static BYTES: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to the system allocator; the counters are atomics.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) && counted_thread() {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
            BYTES.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if COUNTING.load(Ordering::Relaxed) && counted_thread() {
            BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) && counted_thread() {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
            BYTES.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Runs `f` and returns its result with the heap allocations made meanwhile
/// on this thread and on rayon's worker threads.
pub fn count_allocations<T>(f: impl FnOnce() -> T) -> (T, usize) {
    ALLOCATIONS.store(0, Ordering::SeqCst);
    BYTES.store(0, Ordering::SeqCst);
    ASKED_HERE.with(|h| h.set(true));
    COUNTING.store(true, Ordering::SeqCst);
    let out = f();
    COUNTING.store(false, Ordering::SeqCst);
    ASKED_HERE.with(|h| h.set(false));
    (out, ALLOCATIONS.load(Ordering::SeqCst))
}

/// Runs `f` and returns its result with the heap bytes it left allocated
/// (allocated minus freed, on this thread and rayon's workers): what a
/// structure `f` builds and returns keeps on the heap.
#[allow(dead_code)]
pub fn count_bytes<T>(f: impl FnOnce() -> T) -> (T, isize) {
    let (out, _) = count_allocations(f);
    (out, BYTES.load(Ordering::SeqCst))
}
