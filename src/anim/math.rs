//! Quaternion and interpolation maths shared by the samplers and the blends:
//! lerp, glTF's cubic Hermite spline, slerp (with the per-interval constants
//! the runtime sampler computes once per key interval), nlerp, and
//! normalisation with a fallback.
//!
//! Plain values in, plain values out: nothing here sees a clip, a track, a
//! pose or a job, keeps state or allocates.

use super::sine;
use nalgebra::{Quaternion, UnitQuaternion};
use std::ops::{Add, Mul};

/// `a + (b - a) * s`, written as a weighted sum so it needs only `Add` and `Mul<f32>`.
pub(crate) fn lerp<T: Copy + Add<Output = T> + Mul<f32, Output = T>>(a: T, b: T, s: f32) -> T {
    a * (1.0 - s) + b * s
}

/// glTF Appendix C cubic Hermite spline between `v0` (out tangent `b0`) and
/// `v1` (in tangent `a1`); tangents are per second, hence the `td` factor.
pub(crate) fn hermite<T: Copy + Add<Output = T> + Mul<f32, Output = T>>(
    v0: T,
    b0: T,
    v1: T,
    a1: T,
    s: f32,
    td: f32,
) -> T {
    let s2 = s * s;
    let s3 = s2 * s;
    v0 * (2.0 * s3 - 3.0 * s2 + 1.0)
        + b0 * (td * (s3 - 2.0 * s2 + s))
        + v1 * (-2.0 * s3 + 3.0 * s2)
        + a1 * (td * (s3 - s2))
}

/// `b`, negated if needed so that it lies in `a`'s hemisphere (the shorter
/// of the two arcs between the rotations), and the resulting dot product.
fn same_hemisphere(a: Quaternion<f32>, b: Quaternion<f32>) -> (Quaternion<f32>, f32) {
    let d = a.dot(&b);
    if d < 0.0 { (-b, -d) } else { (b, d) }
}

/// Normalised lerp on the short arc; the caller normalises the result.
pub(crate) fn nlerp(a: Quaternion<f32>, b: Quaternion<f32>, s: f32) -> Quaternion<f32> {
    let (b, _) = same_hemisphere(a, b);
    lerp(a, b, s)
}

/// Spherical linear interpolation on the short arc (glTF's definition).
///
/// The keys are used as stored, not renormalised first: glTF rotation keys
/// are unit only to the exporter's precision (SimpleSkin's are off by 2e-4),
/// and other implementations (three.js) interpolate and use them as given, so
/// an arc result is not renormalised either: a key of length 1.0002 then
/// scales by 2e-4, as the file says, instead of disagreeing with them by 1e-4.
/// Identical keys return the key itself (for non-unit keys the arc formula
/// would not). The angle is `atan2(sin, cos)` with sin from an f64 `1 - cos^2`,
/// accurate near 0; below f64::EPSILON of sin^2 (as three.js) the result is a chord (lerp) for the
/// caller to normalise.
pub(crate) fn slerp(a: Quaternion<f32>, b: Quaternion<f32>, s: f32) -> Slerped {
    SlerpKeys::new(a, b).at(s)
}

/// What `slerp` computed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Slerped {
    /// A true spherical interpolation of the keys as given.
    Arc(Quaternion<f32>),
    /// The keys were too close for slerp's weights: a lerp, to be normalised.
    Chord(Quaternion<f32>),
}

impl Slerped {
    /// The quaternion, whichever way it was computed.
    pub(crate) fn into_inner(self) -> Quaternion<f32> {
        match self {
            Slerped::Arc(q) | Slerped::Chord(q) => q,
        }
    }
}

/// The part of [`slerp`] that depends only on the two keys: computed once
/// per key interval by the runtime sampler, which then calls [`SlerpKeys::at`]
/// (or repeats its arithmetic lane by lane) each frame with the same result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum SlerpKeys {
    /// Identical keys: the key itself, whatever `s`.
    Same(Quaternion<f32>),
    /// Keys too close for slerp's weights: a lerp of these, to be normalised.
    Chord(Quaternion<f32>, Quaternion<f32>),
    /// A true arc from `a` to `b` (on the short path), `angle` radians, `sin` its sine.
    Arc { a: Quaternion<f32>, b: Quaternion<f32>, sin: f32, angle: f32 },
}

impl SlerpKeys {
    /// The per-interval constants of slerping from `a` to `b`.
    pub(crate) fn new(a: Quaternion<f32>, b: Quaternion<f32>) -> Self {
        if a == b {
            return SlerpKeys::Same(a);
        }
        let (a, b, _, _) = slerp_keys(a, b);
        let cos: f64 = a.coords.iter().zip(b.coords.iter()).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
        let sin_squared = 1.0 - cos * cos;
        if sin_squared.is_nan() || sin_squared <= f64::EPSILON {
            return SlerpKeys::Chord(a, b);
        }
        // cos and sin^2 need f64 (1 - cos^2 cancels for small angles); once sin
        // is known to full precision, f32 trigonometry is accurate to ~1e-7
        // relative and twice as fast as f64.
        let sin = sin_squared.sqrt() as f32;
        SlerpKeys::Arc { a, b, sin, angle: sin.atan2(cos as f32) }
    }

    /// The interpolation at `s`.
    #[inline]
    pub(crate) fn at(&self, s: f32) -> Slerped {
        match *self {
            SlerpKeys::Same(a) => Slerped::Arc(a),
            SlerpKeys::Chord(a, b) => Slerped::Chord(lerp(a, b, s)),
            SlerpKeys::Arc { a, b, sin, angle } => {
                // Correctly rounded sines (see `sine`), as the SIMD sampler's.
                let wa = sine::sin((1.0 - s) * angle) / sin;
                let wb = sine::sin(s * angle) / sin;
                Slerped::Arc(a * wa + b * wb)
            }
        }
    }
}

/// The keys slerp interpolates between: normalised when either is far
/// from unit length (no exporter rounding), `b` flipped into `a`'s
/// hemisphere; and whether each of those happened.
pub(crate) fn slerp_keys(
    a: Quaternion<f32>,
    b: Quaternion<f32>,
) -> (Quaternion<f32>, Quaternion<f32>, bool, bool) {
    let normalized = !(near_unit(a) && near_unit(b));
    let (a, b) = if normalized { (unit_or_self(a), unit_or_self(b)) } else { (a, b) };
    let d = a.dot(&b);
    let (b, _) = same_hemisphere(a, b);
    (a, b, normalized, d < 0.0)
}

/// Whether `q`'s length is 1 to an exporter's rounding (within 0.1%).
pub(crate) fn near_unit(q: Quaternion<f32>) -> bool {
    (q.norm_squared() - 1.0).abs() <= 2e-3
}

/// `q` normalised when it has a usable length, else unchanged.
fn unit_or_self(q: Quaternion<f32>) -> Quaternion<f32> {
    let n2 = q.norm_squared();
    if n2 > f32::MIN_POSITIVE && n2.is_finite() { q / n2.sqrt() } else { q }
}

/// `q` as stored when it is unit to an exporter's rounding, normalised when it
/// is further off, `fallback` when it has no usable length.
pub(crate) fn keep_or(q: Quaternion<f32>, fallback: UnitQuaternion<f32>) -> UnitQuaternion<f32> {
    if near_unit(q) { UnitQuaternion::new_unchecked(q) } else { normalize_or(q, fallback) }
}

/// `q` normalised, or `fallback` when `q` has (near) zero or non-finite length.
pub(crate) fn normalize_or(q: Quaternion<f32>, fallback: UnitQuaternion<f32>) -> UnitQuaternion<f32> {
    let n2 = q.norm_squared();
    if n2 > f32::MIN_POSITIVE && n2.is_finite() {
        UnitQuaternion::new_unchecked(q / n2.sqrt())
    } else {
        fallback
    }
}

/// The f32s around a time: `t` rounded to the nearest, and the largest at
/// or below it and the smallest at or above it (`nearest` itself where it
/// is exact; `t` not NaN). Comparing these against f32 key times decides
/// as comparing `t` in f64 would. Without branches: a time rounds up or
/// down about as often, so a branch on it is mispredicted every other
/// sample.
#[inline]
pub(crate) fn f32_around(t: f64) -> F32Around {
    let nearest = t as f32;
    let bits = nearest.to_bits();
    // One step towards -inf or +inf in the bits: away from zero is +1.
    // (+0 never rounds up from below, nor -0 down from above, so the
    // steps never cross zero.)
    let (negative, widened) = (bits >> 31, f64::from(nearest));
    let towards_down = negative.wrapping_mul(2).wrapping_sub(1);
    let down = bits.wrapping_add(u32::from(widened > t).wrapping_mul(towards_down));
    let up = bits.wrapping_sub(u32::from(widened < t).wrapping_mul(towards_down));
    F32Around { nearest, down: f32::from_bits(down), up: f32::from_bits(up) }
}

/// See [`f32_around`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct F32Around {
    pub nearest: f32,
    pub down: f32,
    pub up: f32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Vector3;

    #[test]
    fn the_f32s_around_a_time_are_next_down_and_next_up_where_it_rounds() {
        let mut times = vec![0.0, -0.0, 1.0, -1.0, 1e-45, -1e-45, 1e-300, -1e-300, 3.4e38, 1e39, -1e39];
        times.extend([f64::INFINITY, f64::NEG_INFINITY, f64::MAX, f64::MIN_POSITIVE]);
        // Playback times: most round one way or the other.
        times.extend((0..2000).map(|i| f64::from(i) / 60.0 - 3.0));
        times.extend((0..200).map(|i| f64::from(i) * 0.1e-40));
        for t in times {
            let nearest = t as f32;
            let (down, up) = match f64::from(nearest).partial_cmp(&t) {
                Some(std::cmp::Ordering::Greater) => (nearest.next_down(), nearest),
                Some(std::cmp::Ordering::Less) => (nearest, nearest.next_up()),
                _ => (nearest, nearest),
            };
            let around = f32_around(t);
            assert_eq!(
                [around.nearest, around.down, around.up].map(f32::to_bits),
                [nearest, down, up].map(f32::to_bits),
                "{t:e}"
            );
            assert!(f64::from(around.down) <= t && f64::from(around.up) >= t, "{t:e}");
        }
    }

    fn axis_angle(axis: Vector3<f32>, angle: f32) -> Quaternion<f32> {
        UnitQuaternion::from_axis_angle(&nalgebra::Unit::new_normalize(axis), angle).into_inner()
    }

    fn v(x: f32, y: f32, z: f32) -> Vector3<f32> {
        Vector3::new(x, y, z)
    }

    #[test]
    fn nlerp_error_bound() {
        // Measures the worst angular error of nlerp against slerp over s for
        // several key separations and checks the documented bound: theta^3 / 249
        // for small angles, theta^3 / 218 for any angle up to 180 degrees.
        let axis = v(0.3, -1.0, 0.5);
        let mut measured = Vec::new();
        for deg in [10.0f32, 30.0, 90.0, 180.0] {
            let a = axis_angle(v(1., 0., 0.), 0.3);
            let b = axis_angle(axis, deg.to_radians()) * a;
            let mut worst = 0.0f32;
            for i in 0..=1000 {
                let s = i as f32 / 1000.0;
                let id = UnitQuaternion::identity();
                let e =
                    normalize_or(slerp(a, b, s).into_inner(), id).angle_to(&normalize_or(nlerp(a, b, s), id));
                worst = worst.max(e);
            }
            let theta = deg.to_radians();
            measured.push(worst);
            assert!(worst <= theta.powi(3) / 218.0 + 1e-5, "{deg}: {worst}");
            if deg <= 30.0 {
                assert!((worst / (theta.powi(3) / 249.0) - 1.0).abs() < 0.02, "{deg}: {worst}");
            }
        }
        assert!((measured[2] - 0.0160).abs() < 2e-4, "90 degrees: {}", measured[2]);
        assert!((measured[3] - 0.1422).abs() < 2e-3, "180 degrees: {}", measured[3]);
    }
}
