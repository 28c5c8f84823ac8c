//! `AnimationSystem::update` allocates nothing on the heap once warm, on one
//! thread or two: a counting global allocator sees every thread of this
//! process, so this test is alone in its test binary.

mod common;

use common::crowd::{crowd, drive, model};

#[path = "../src/bench/allocations.rs"]
mod allocations;

use allocations::{CountingAllocator, count_allocations};

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
        let (events, allocations) = count_allocations(|| {
            let mut events = 0;
            for frame in 400..700 {
                drive(&mut system, frame);
                events += system.update(1.0 / 60.0).unwrap().len();
            }
            events
        });
        assert!(events > 100, "the crowd walked: {events} events");
        assert_eq!(allocations, 0, "{threads} thread(s): {allocations} heap allocations in 300 updates");
    }
}
