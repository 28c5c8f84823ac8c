//! Support for the tests and benchmarks, never used by the program: the
//! skip policy of tests that need a GPU, a display or `../shared` (`skip`),
//! the counting allocator that proves hot paths allocate nothing
//! (`allocations`), and the ozz-animation-rs anchor data with its check
//! (`anchors`), and poses as bits for bit-for-bit comparisons (`bits`).

pub mod allocations;
pub mod anchors;
pub mod bits;
pub mod skip;
