//! Elementary functions built from IEEE basic operations only, so the
//! generated file is the same bit for bit on every platform.
//!
//! Nothing here may call the platform's maths library (`sin`, `powf`, `exp`,
//! ...).
//!
//! `f32::sin`, `powf` and friends call the platform's math library, whose
//! last-bit rounding differs between systems (glibc, macOS, Windows). Here
//! everything is range reduction plus a series in `f64` (add, multiply,
//! divide and sqrt are correctly rounded everywhere), rounded to `f32` once.

use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use std::f64::consts::{FRAC_PI_2, LN_2};

/// `(sin x, cos x)` for |x| up to a few thousand.
fn sin_cos64(x: f64) -> (f64, f64) {
    if !x.is_finite() {
        return (0.0, 1.0);
    }
    let k = (x / FRAC_PI_2).round();
    let r = x - k * FRAC_PI_2;
    let r2 = r * r;
    // Taylor series: |r| <= pi/4, so 12 terms are far below f32 precision.
    let (mut s, mut c) = (0.0, 0.0);
    let (mut ts, mut tc) = (r, 1.0);
    for n in 0..12 {
        s += ts;
        c += tc;
        let n = f64::from(n);
        ts *= -r2 / ((2.0 * n + 2.0) * (2.0 * n + 3.0));
        tc *= -r2 / ((2.0 * n + 1.0) * (2.0 * n + 2.0));
    }
    match (k as i64).rem_euclid(4) {
        0 => (s, c),
        1 => (c, -s),
        2 => (-s, -c),
        _ => (-c, s),
    }
}

/// Natural logarithm of a positive finite `x` (else 0 or -inf).
fn ln64(x: f64) -> f64 {
    if x.is_nan() || x < 0.0 {
        return 0.0;
    }
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    // x = m * 2^e with m in [1, 2), scaling subnormals up first.
    let (x, bias) = if x < f64::MIN_POSITIVE { (x * 2f64.powi(64), -64) } else { (x, 0) };
    let bits = x.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i64 - 1023 + bias;
    let m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    // ln m = 2 atanh(s), s = (m - 1) / (m + 1) <= 1/3.
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let (mut sum, mut term) = (0.0, s);
    for n in 0..30 {
        sum += term / f64::from(2 * n + 1);
        term *= s2;
    }
    2.0 * sum + e as f64 * LN_2
}

/// `e^x`, saturating far outside the f32 range.
fn exp64(x: f64) -> f64 {
    if x.is_nan() {
        return 0.0;
    }
    let x = x.clamp(-700.0, 700.0);
    let k = (x / LN_2).round();
    let r = x - k * LN_2;
    let (mut sum, mut term) = (0.0, 1.0);
    for n in 1..25 {
        sum += term;
        term *= r / f64::from(n);
    }
    // 2^k, exactly, from its bits (|k| <= 1010 keeps it normal).
    sum * f64::from_bits(((k as i64 + 1023) as u64) << 52)
}

/// Deterministic replacements for `f32`'s platform math.
pub trait DetMath {
    /// Sine.
    fn dsin(self) -> f32;
    /// Cosine.
    fn dcos(self) -> f32;
    /// Sine and cosine.
    fn dsin_cos(self) -> (f32, f32);
    /// Natural logarithm.
    fn dln(self) -> f32;
    /// `self^p` for `self >= 0` (0 for negative bases).
    fn dpowf(self, p: f32) -> f32;
}

impl DetMath for f32 {
    fn dsin(self) -> f32 {
        sin_cos64(f64::from(self)).0 as f32
    }
    fn dcos(self) -> f32 {
        sin_cos64(f64::from(self)).1 as f32
    }
    fn dsin_cos(self) -> (f32, f32) {
        let (s, c) = sin_cos64(f64::from(self));
        (s as f32, c as f32)
    }
    fn dln(self) -> f32 {
        ln64(f64::from(self)) as f32
    }
    fn dpowf(self, p: f32) -> f32 {
        if self <= 0.0 {
            return if self == 0.0 && p == 0.0 { 1.0 } else { 0.0 };
        }
        exp64(f64::from(p) * ln64(f64::from(self))) as f32
    }
}

/// Rotation by `angle` radians about the unit `axis`.
pub fn axis_angle(axis: Vector3<f32>, angle: f32) -> UnitQuaternion<f32> {
    let (s, c) = (angle * 0.5).dsin_cos();
    UnitQuaternion::new_normalize(Quaternion::new(c, axis.x * s, axis.y * s, axis.z * s))
}

/// The shortest rotation taking direction `a` to direction `b` (identity when
/// either is zero or they are opposite), without trigonometry.
pub fn rotation_between(a: &Vector3<f32>, b: &Vector3<f32>) -> UnitQuaternion<f32> {
    let (Some(a), Some(b)) = (a.try_normalize(1e-12), b.try_normalize(1e-12)) else {
        return UnitQuaternion::identity();
    };
    let w = 1.0 + a.dot(&b);
    if w <= 1e-6 {
        return UnitQuaternion::identity();
    }
    let v = a.cross(&b);
    UnitQuaternion::new_normalize(Quaternion::new(w, v.x, v.y, v.z))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_the_platform_functions() {
        for i in -2000..2000 {
            let x = i as f32 * 0.0137;
            assert!((x.dsin() - x.sin()).abs() < 1e-6, "sin {x}");
            assert!((x.dcos() - x.cos()).abs() < 1e-6, "cos {x}");
            if x > 0.0 {
                assert!((x.dln() - x.ln()).abs() < 1e-5, "ln {x}");
                assert!((x.dpowf(0.7) - x.powf(0.7)).abs() < 1e-5 * x.max(1.0), "pow {x}");
            }
        }
        assert_eq!(0f32.dpowf(2.0), 0.0);
    }

    #[test]
    fn rotations() {
        let a = Vector3::new(0.0, -1.0, 0.2);
        let b = Vector3::new(0.3, -0.5, 0.8);
        let q = rotation_between(&a, &b);
        assert!((q * a.normalize() - b.normalize()).norm() < 1e-6);
        let r = axis_angle(Vector3::x(), 0.7);
        let n = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), 0.7);
        assert!(r.angle_to(&n) < 1e-6);
    }
}
