//! The glTF-exact (slerp) path of [`SampleClipJob`](super::SampleClipJob),
//! eight joints per operation: two blocks of four side by side, as the
//! nlerp path runs (`nlerp8`, whose loop and vector interpolation it
//! shares). Every lane repeats the scalar arithmetic of `SampleJob` in the
//! same order: the key ratio in f64 (four lanes of [`F64Lanes`] per half),
//! slerp's per-interval constants read with the interval, the per-frame
//! sines the correctly rounded ones of [`sine`]. Compiled for AVX2 and
//! portable alike (`clip_sampling::sample_blocks`); both give the scalar
//! job's bits.

use super::nlerp8::{Blocks, Path8, held_key, join4, keep_or, normalize_or, rotation_state, sample_path};
use super::{FastTime, hermite8};
use crate::anim::lanes8::{F64Lanes, Lanes8};
use crate::anim::runtime_clip::{RotationBlock, Times};
use crate::anim::sine;
use crate::anim::transform::Transform;
use std::ops::Range;

/// Blocks `range` at `time` into `output` by glTF-exact slerp.
#[inline(always)]
pub(super) fn sample_exact<F: Lanes8>(
    blocks: &Blocks,
    time: &FastTime,
    range: Range<usize>,
    output: &mut [Transform],
) {
    let t = ExactTime8 { exact: time.exact, down: F::splat(time.down), up: F::splat(time.up) };
    sample_path(blocks, &t, range, output);
}

/// The time as the exact path compares and interpolates it: in f64 for the
/// ratios, and the f32 values just below and above it for the comparisons
/// with key times (see [`FastTime`]).
struct ExactTime8<F> {
    exact: f64,
    down: F,
    up: F,
}

impl<F: Lanes8> Path8<F> for ExactTime8<F> {
    /// The ratio as scalar sampling computes it (in f64 from the f32 key
    /// interval, rounded to f32), the held lanes as its f64 comparisons
    /// decide them (before the first key, a STEP track or a ratio outside
    /// [0, 1]: the start key; at or after the last key: the end key).
    #[inline(always)]
    fn ratios(&self, [x, y]: [&Times; 2]) -> (F, F, F) {
        let w = (F::join(&x.t1, &y.t1) - F::join(&x.t0, &y.t0)).to_array();
        let low = exact_ratio::<F::F64>(self.exact, x.t0, [w[0], w[1], w[2], w[3]]);
        let high = exact_ratio::<F::F64>(self.exact, y.t0, [w[4], w[5], w[6], w[7]]);
        let s = F::join(&low, &high);
        let outside = s.ge(F::splat(0.0)).and(s.le(F::splat(1.0))).not();
        let hold_a = self.up.le(F::join(&x.first, &y.first)).or(outside);
        (s, hold_a, self.down.ge(F::join(&x.last, &y.last)))
    }

    #[inline(always)]
    fn rotation(&self, blocks: &Blocks, pair: [usize; 2]) -> [F; 4] {
        let (x, y) = (rotation_state(blocks, pair[0]), rotation_state(blocks, pair[1]));
        slerp(blocks, pair, [x, y], self.ratios([&x.times, &y.times]))
    }
}

/// `(t - t0) / width` in f64, rounded to f32, four lanes.
#[inline(always)]
fn exact_ratio<W: F64Lanes>(t: f64, t0: [f32; 4], width: [f32; 4]) -> [f32; 4] {
    ((W::splat(t) - W::widen(t0)) / W::widen(width)).narrow()
}

/// `q` normalised where it has a usable length, else as it is (scalar
/// `unit_or_self`).
#[inline(always)]
fn unit_or_self<F: Lanes8>(q: [F; 4]) -> [F; 4] {
    normalize_or(q, &q)
}

/// The correctly rounded sine of the lanes in `mask` (0 elsewhere): the
/// bits of `sine::sin`, through `sine::sin_lanes` four lanes at a time.
#[inline(always)]
fn sin8<F: Lanes8>(x: F, mask: F) -> F {
    let outside = x.abs().le(F::splat(sine::RANGE)).not();
    let v = x.to_array();
    let (low, high) = ([v[0], v[1], v[2], v[3]], [v[4], v[5], v[6], v[7]]);
    if mask.and(outside).any() {
        // Slerp never gets here; lane by lane, as the scalar code.
        let m = mask.to_array();
        let lanes: [f32; 8] =
            std::array::from_fn(|l| if m[l].to_bits() != 0 { sine::sin(v[l]) } else { 0.0 });
        return F::join(&[lanes[0], lanes[1], lanes[2], lanes[3]], &[lanes[4], lanes[5], lanes[6], lanes[7]]);
    }
    mask.and(F::join(&sine::sin_lanes::<F::F64>(low), &sine::sin_lanes::<F::F64>(high)))
}

/// Rotations of a pair of blocks by slerp with the constants of each
/// interval read from the block: the scalar `SampleJob`'s slerp, lane by
/// lane (keys normalised where far from unit, `b` on `a`'s side, a chord
/// lerped and normalised where the keys are too close, held keys); cubic
/// lanes by their spline (`hermite8`), as the scalar job samples them.
#[inline(always)]
fn slerp<F: Lanes8>(
    blocks: &Blocks,
    pair: [usize; 2],
    [x, y]: [&RotationBlock; 2],
    (s, hold_a, hold_b): (F, F, F),
) -> [F; 4] {
    let clip = blocks.clip;
    let fallback = join4(&clip.fallback[pair[0]], &clip.fallback[pair[1]]);
    let (stored_a, stored_b): ([F; 4], [F; 4]) = (join4(&x.a, &y.a), join4(&x.b, &y.b));
    // Slerp's keys: normalised where far from unit, `b` on `a`'s side.
    let (mut a, mut b) = (stored_a, stored_b);
    let unit = F::join(&x.unit, &y.unit);
    if unit.any() {
        let (ua, ub) = (unit_or_self(a), unit_or_self(b));
        a = each!(0, 1, 2, 3; |c| unit.select(ua[c], a[c]));
        b = each!(0, 1, 2, 3; |c| unit.select(ub[c], b[c]));
    }
    let flip = F::join(&x.flip, &y.flip);
    let b: [F; 4] = each!(0, 1, 2, 3; |c| flip.select(-b[c], b[c]));
    let sin = F::join(&x.sin, &y.sin);
    let arc = sin.gt(F::splat(0.0));
    // Identical keys hold the start key, like clamped lanes.
    let hold_a = hold_a.or(sin.lt(F::splat(0.0)));
    let one_minus = F::splat(1.0) - s;
    let moving = hold_a.not().and(hold_b.not());
    // Lanes between keys too close for slerp's weights lerp and normalise.
    let chord = if moving.and(arc.not()).any() {
        normalize_or(each!(0, 1, 2, 3; |c| a[c] * one_minus + b[c] * s), &fallback)
    } else {
        a
    };
    let active = arc.and(moving);
    let v = if active.any() {
        let angle = F::join(&x.angle, &y.angle);
        let wa = sin8(one_minus * angle, active) / sin;
        let wb = sin8(s * angle, active) / sin;
        // Read only where `active` (the rest hold a key or take the chord).
        let on_arc = keep_or(each!(0, 1, 2, 3; |c| a[c] * wa + b[c] * wb), &fallback, active);
        each!(0, 1, 2, 3; |c| arc.select(on_arc[c], chord[c]))
    } else {
        chord
    };
    let v = if hermite8::in_pair(&clip.cubic_rotations, pair) {
        hermite8::rotations(blocks, pair, [&x.times, &y.times], (&stored_a, &stored_b), s, &fallback, v)
    } else {
        v
    };
    let tracked = F::join(&clip.rotation_tracked[pair[0]], &clip.rotation_tracked[pair[1]]);
    let kept = clip.keys_kept;
    let (ka, kb) =
        (held_key(stored_a, kept, tracked, &fallback), held_key(stored_b, kept, tracked, &fallback));
    each!(0, 1, 2, 3; |c| hold_b.select(kb[c], hold_a.select(ka[c], v[c])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::lanes8::{Portable, Simd};

    /// Lanes outside the mask give 0, lanes inside the scalar sine's bits,
    /// in range and out of it (where both use the platform's sine), AVX2
    /// and portable alike.
    #[test]
    fn sin8_is_the_scalar_sine_in_masked_lanes() {
        fn check<F: Lanes8>() {
            let x = [0.5f32, 1.0, 2.5, -3.0, 1.5, 0.0, 1.25, -0.25];
            let set = f32::from_bits(u32::MAX);
            let mask = [set, 0.0, set, 0.0, set, set, set, 0.0];
            let split = |v: [f32; 8]| F::join(&[v[0], v[1], v[2], v[3]], &[v[4], v[5], v[6], v[7]]);
            for wanted in [mask, [set; 8], [0.0; 8]] {
                let got = sin8(split(x), split(wanted)).to_array();
                for l in 0..8 {
                    let want = if wanted[l].to_bits() != 0 { sine::sin(x[l]) } else { 0.0 };
                    assert_eq!(got[l].to_bits(), want.to_bits(), "lane {l} of {x:?}");
                }
            }
        }
        check::<Portable>();
        #[cfg(target_arch = "x86_64")]
        if Simd::avx2_available() {
            check::<crate::anim::lanes8::Avx2>();
        }
    }
}
