//! Support for the tests and benchmarks, never used by the program: the
//! skip policy of tests that need a GPU, a display or `../shared` (`skip`),
//! the counting allocator that proves hot paths allocate nothing
//! (`allocations`), and the ozz-animation-rs anchor data with its check
//! (`anchors`), poses as bits for bit-for-bit comparisons (`bits`), and
//! a deterministic generator of test values (`lcg`).

pub mod allocations;
pub mod anchors;
pub mod bits;
pub mod lcg;
pub mod skip;
