//! A tiny deterministic generator for tests (no rand crate): Knuth's MMIX
//! linear congruential generator, the same values on every run and machine.

/// The generator, its state the seed to start from.
pub struct Lcg(pub u64);

impl Lcg {
    /// The next value in [0, 1): the new state's top 24 bits.
    pub fn unit(&mut self) -> f32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    /// The next value in [lo, hi): `unit() * (hi - lo) + lo`.
    pub fn between(&mut self, lo: f32, hi: f32) -> f32 {
        self.unit() * (hi - lo) + lo
    }
}
