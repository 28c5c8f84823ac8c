//! A joint's local transform as separate translation, rotation and scale.
//!
//! A value: it never knows its joint, its parent or the space above it.

use nalgebra::{Matrix4, Quaternion, UnitQuaternion, Vector3};
use std::ops::{Add, Mul, Sub};

/// Translation, rotation and scale, applied to a point as `T * R * S * p`
/// (the glTF node convention).
///
/// `repr(C)`: ten floats in field order, which the blend streams as one
/// run of floats.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C)]
pub struct Transform {
    /// Translation.
    pub translation: Vector3<f32>,
    /// Rotation: unit length, to the precision of the source data (sampling
    /// keeps keys as stored; blends and splines normalise).
    pub rotation: UnitQuaternion<f32>,
    /// Per-axis scale.
    pub scale: Vector3<f32>,
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Transform {
    /// The transform that changes nothing.
    pub const IDENTITY: Transform = Transform {
        translation: Vector3::new(0.0, 0.0, 0.0),
        rotation: UnitQuaternion::new_unchecked(Quaternion::new(1.0, 0.0, 0.0, 0.0)),
        scale: Vector3::new(1.0, 1.0, 1.0),
    };

    /// The column-vector matrix `T * R * S`.
    ///
    /// The rotation uses the unit-quaternion formula (`1 - 2(y^2 + z^2)` ...)
    /// on the stored components, as glTF viewers do: a key stored with length
    /// 1.0002 by its exporter is used as given, not silently renormalised.
    pub fn to_matrix(&self) -> Matrix4<f32> {
        let q = self.rotation.as_ref();
        trs_matrix(self.translation.into(), [q.i, q.j, q.k, q.w], self.scale.into())
    }

    /// `to_matrix` computed in f64, for reference output: chained through a
    /// deep hierarchy with large scales (FBX exports scale joints by 100), f32
    /// products drift by 1e-6 relative, about 1e-4 absolute.
    pub fn to_matrix_f64(&self) -> Matrix4<f64> {
        let q = self.rotation.as_ref();
        let f = |v: f32| f64::from(v);
        let (t, s) = (&self.translation, &self.scale);
        trs_matrix([f(t.x), f(t.y), f(t.z)], [f(q.i), f(q.j), f(q.k), f(q.w)], [f(s.x), f(s.y), f(s.z)])
    }

    /// True when every component is finite.
    pub fn is_finite(&self) -> bool {
        self.translation.iter().all(|v| v.is_finite())
            && self.rotation.coords.iter().all(|v| v.is_finite())
            && self.scale.iter().all(|v| v.is_finite())
    }
}

/// `T * R * S` from translation, quaternion (x, y, z, w) and scale.
fn trs_matrix<T: nalgebra::RealField + Copy>(t: [T; 3], q: [T; 4], s: [T; 3]) -> Matrix4<T> {
    let (one, zero) = (T::one(), T::zero());
    let [m00, m10, m20, m01, m11, m21, m02, m12, m22, m03, m13, m23] = trs_columns(t, q, s, one, one + one);
    #[rustfmt::skip]
    let out = Matrix4::new(
        m00, m01, m02, m03,
        m10, m11, m12, m13,
        m20, m21, m22, m23,
        zero, zero, zero, one,
    );
    out
}

/// The rows above the bottom row (0, 0, 0, 1) of `T * R * S`, column by
/// column: `[c * 3 + r]` is row `r` of column `c` (3: the translation),
/// with the unit-quaternion formula on the stored components. Generic
/// over the number (a float, or SIMD lanes of one component of several
/// joints or poses: `anim::hierarchy` and its pose batch), so that every
/// path computes the same operations in the same order: the same bits.
#[inline(always)]
pub(crate) fn trs_columns<T>(t: [T; 3], q: [T; 4], s: [T; 3], one: T, two: T) -> [T; 12]
where
    T: Copy + Add<Output = T> + Sub<Output = T> + Mul<Output = T>,
{
    let [x, y, z, w] = q;
    let (xx, yy, zz) = (x * x, y * y, z * z);
    let (xy, xz, yz) = (x * y, x * z, y * z);
    let (wx, wy, wz) = (w * x, w * y, w * z);
    [
        (one - two * (yy + zz)) * s[0],
        two * (xy + wz) * s[0],
        two * (xz - wy) * s[0],
        two * (xy - wz) * s[1],
        (one - two * (xx + zz)) * s[1],
        two * (yz + wx) * s[1],
        two * (xz + wy) * s[2],
        two * (yz - wx) * s[2],
        (one - two * (xx + yy)) * s[2],
        t[0],
        t[1],
        t[2],
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_is_translation_rotation_scale() {
        let t = Transform {
            translation: Vector3::new(1.0, 2.0, 3.0),
            rotation: UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f32::consts::FRAC_PI_2),
            scale: Vector3::new(2.0, 3.0, 4.0),
        };
        let p = t.to_matrix().transform_point(&nalgebra::Point3::new(1.0, 1.0, 1.0));
        // S: (2,3,4); R (90 deg about z): (-3,2,4); T: (-2,4,7)
        assert!((p - nalgebra::Point3::new(-2.0, 4.0, 7.0)).norm() < 1e-6, "{p}");
    }

    #[test]
    fn identity_is_identity_matrix() {
        assert_eq!(Transform::IDENTITY.to_matrix(), Matrix4::identity());
    }
}
