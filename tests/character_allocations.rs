//! `AnimationSystem::update` allocates nothing on the heap once warm, on one
//! thread or two: a counting global allocator sees every thread of this
//! process, so this test is alone in its test binary.

mod common;

use common::crowd::{crowd, drive, model};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Counts heap allocations on every thread while `COUNTING` is set.
struct CountingAllocator;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; the counters are atomics.
unsafe impl std::alloc::GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn updates_allocate_nothing() {
    let model = model();
    for threads in [1, 2] {
        let mut system = crowd(&model, 100, threads);
        // Warm up: every state entered, event buffers grown, threads started.
        for frame in 0..400 {
            drive(&mut system, frame);
            system.update(1.0 / 60.0).unwrap();
        }
        let mut events = 0;
        COUNTING.store(true, Ordering::SeqCst);
        ALLOCATIONS.store(0, Ordering::SeqCst);
        for frame in 400..700 {
            drive(&mut system, frame);
            events += system.update(1.0 / 60.0).unwrap().len();
        }
        COUNTING.store(false, Ordering::SeqCst);
        let allocations = ALLOCATIONS.load(Ordering::SeqCst);
        assert!(events > 100, "the crowd walked: {events} events");
        assert_eq!(allocations, 0, "{threads} thread(s): {allocations} heap allocations in 300 updates");
    }
}
