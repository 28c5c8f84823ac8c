//! Dual-quaternion skinning (DQS) math: a skinning matrix as a unit dual
//! quaternion plus a scale/shear part, and the per-vertex blend.
//!
//! Maths on values: it never walks a mesh or owns a buffer (`skinning` does),
//! and it changes only together with its GPU twin (see the end).
//!
//! Linear blend skinning averages matrices, and an average of rotations is
//! not a rotation: a joint twisted by 180 degrees collapses the skin half-way
//! between it and its parent to a line (the "candy wrapper"). DQS averages
//! unit dual quaternions instead and normalises the result, which is always
//! a rigid transform (Kavan, Collins, Zara, O'Sullivan: "Geometric skinning
//! with approximate dual quaternion blending", ACM TOG 2008).
//!
//! # Scale
//!
//! A unit dual quaternion holds rotation and translation only. Skinning
//! matrices that scale or shear are handled the way Kavan et al. recommend,
//! in two phases: each matrix `M = [A | t]` is split into `M = [R | t] * [S | 0]`
//! with `R` the rotation of `A`'s polar decomposition and `S = Rᵀ A` (so the
//! split is exact); the `S` parts are blended *linearly* and applied to the
//! vertex first, then the blended rigid dual quaternion.
//!
//! Limits that come with it:
//! - Scale is blended linearly, so between joints with different scales DQS
//!   behaves like LBS for the scale part (no volume preservation there), and
//!   the scale is taken in bind space, before the blended rotation.
//! - A joint that mirrors (negative determinant) is split into a rotation and
//!   a negative `S`; blending it with a non-mirrored joint is as meaningless
//!   as it is with LBS.
//! - A singular `A` (a joint scaled to zero, a common way to hide parts)
//!   has no rotation: it is taken as the identity with `S = A`, which keeps
//!   a single-joint vertex exact.
//! - DQS rotates about the blended joint centres: bending a joint makes the
//!   skin bulge slightly on the outside of the bend, which LBS does not.
//!
//! The GPU twin of this module is `shaders/dqs.glsl`; keep them in step.

use super::skeleton::BoneMatrix;
use nalgebra::{
    DualQuaternion, Matrix3, Matrix4, Quaternion, Rotation3, Translation3, UnitDualQuaternion,
    UnitQuaternion, Vector3,
};

/// Newton steps allowed when extracting a rotation (the scaled iteration
/// converges in a handful for any realistic scale).
pub const POLAR_ITERATIONS: usize = 16;
/// The iteration stops once a step changes the (unit-scaled) matrix by less
/// than this (Frobenius norm); convergence is quadratic, so the rotation is
/// then orthonormal to f32 precision.
pub const POLAR_TOLERANCE: f32 = 1e-5;
/// A matrix whose determinant, after scaling it to Frobenius norm 1, is at
/// most this has no rotation worth extracting (rank deficient).
pub const SINGULAR_DETERMINANT: f32 = 1e-8;

/// One skinning matrix for DQS: `M = rigid * scale`, the scale/shear part
/// applied first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SkinDualQuat {
    /// Rotation and translation.
    pub rigid: UnitDualQuaternion<f32>,
    /// Scale/shear (column-vector 3x3), identity for a rigid matrix.
    pub scale: Matrix3<f32>,
}

impl SkinDualQuat {
    /// Splits a column-vector affine matrix (the bottom row is ignored).
    pub fn from_matrix(m: &Matrix4<f32>) -> Self {
        let a: Matrix3<f32> = m.fixed_view::<3, 3>(0, 0).into_owned();
        let t = Vector3::new(m[(0, 3)], m[(1, 3)], m[(2, 3)]);
        let r = rotation_part(&a);
        let scale = r.transpose() * a;
        let q = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(r));
        // `r` is orthonormal to rounding: renormalise what Shepperd's method gives.
        let q = UnitQuaternion::new_normalize(q.into_inner());
        SkinDualQuat { rigid: UnitDualQuaternion::from_parts(Translation3::from(t), q), scale }
    }

    /// Splits a palette entry.
    pub fn from_bone(b: &BoneMatrix) -> Self {
        Self::from_matrix(&b.to_matrix())
    }

    /// The matrix back: `rigid * scale`.
    pub fn to_matrix(&self) -> Matrix4<f32> {
        self.rigid.to_homogeneous() * self.scale.to_homogeneous()
    }
}

/// The rotation of `a`'s polar decomposition `a = R P` (`R` a proper
/// rotation; for a mirroring `a`, the rotation of `-a`), by the scaled Newton
/// iteration `X <- (g X + X⁻ᵀ / g) / 2`, `g = sqrt(|X⁻¹| / |X|)` (Higham).
/// Identity for a zero, non-finite or rank-deficient `a`.
pub fn rotation_part(a: &Matrix3<f32>) -> Matrix3<f32> {
    let norm = a.norm();
    if !(norm > 0.0 && norm.is_finite()) {
        return Matrix3::identity();
    }
    let mut x = a * (1.0 / norm);
    let det = x.determinant();
    // `a` is finite here (its norm is), so `det` is too.
    if det.abs() <= SINGULAR_DETERMINANT {
        return Matrix3::identity();
    }
    if det < 0.0 {
        x = -x;
    }
    for _ in 0..POLAR_ITERATIONS {
        let cof = cofactor(&x);
        let inv_t = cof * (1.0 / x.column(0).dot(&cof.column(0)));
        let gamma = (inv_t.norm() / x.norm()).sqrt();
        let next = (x * gamma + inv_t * (1.0 / gamma)) * 0.5;
        let change = (next - x).norm();
        x = next;
        if change <= POLAR_TOLERANCE {
            break;
        }
    }
    x
}

/// Cofactor matrix, `det(a) * a⁻ᵀ`: its columns are cross products of `a`'s.
pub fn cofactor(a: &Matrix3<f32>) -> Matrix3<f32> {
    let (c0, c1, c2) = (a.column(0), a.column(1), a.column(2));
    Matrix3::from_columns(&[c1.cross(&c2), c2.cross(&c0), c0.cross(&c1)])
}

/// The DQS transform of one vertex: its influences' scale parts blended
/// linearly, then their dual quaternions blended and normalised.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DqBlend {
    /// Blended rotation.
    pub rotation: UnitQuaternion<f32>,
    /// Blended translation.
    pub translation: Vector3<f32>,
    /// Blended scale/shear, applied first.
    pub scale: Matrix3<f32>,
}

impl DqBlend {
    /// Blends the influences `(joints[i], weights[i])` of one vertex.
    ///
    /// `q` and `-q` are the same rotation, but a sum of them is not: every
    /// dual quaternion is first put in the hemisphere of the most-weighted
    /// influence's (the first of equal ones), which is accumulated first.
    /// Zero weights are skipped. Without any weight (or when the rotations
    /// cancel exactly) the rigid part is the identity. Panics on a joint
    /// outside `palette` (the skinning job validates them first).
    pub fn of_influences(palette: &[BoneMatrix], joints: &[u16], weights: &[f32]) -> Self {
        let mut pivot = None;
        let mut best = 0.0;
        for (i, &w) in weights.iter().enumerate() {
            if w > best {
                best = w;
                pivot = Some(i);
            }
        }
        let zero = Quaternion::new(0.0, 0.0, 0.0, 0.0);
        let mut sum = DualQuaternion::from_real_and_dual(zero, zero);
        let mut scale = Matrix3::zeros();
        let mut hemisphere = zero;
        let mut add = |dq: &SkinDualQuat, w: f32, hemisphere: &Quaternion<f32>| {
            let real = dq.rigid.as_ref().real;
            let signed = if real.dot(hemisphere) < 0.0 { -w } else { w };
            sum += *dq.rigid.as_ref() * signed;
            scale += dq.scale * w;
        };
        if let Some(p) = pivot {
            let dq = SkinDualQuat::from_bone(&palette[joints[p] as usize]);
            hemisphere = dq.rigid.as_ref().real;
            add(&dq, weights[p], &hemisphere);
        }
        for (i, (&j, &w)) in joints.iter().zip(weights).enumerate() {
            if w != 0.0 && Some(i) != pivot {
                add(&SkinDualQuat::from_bone(&palette[j as usize]), w, &hemisphere);
            }
        }
        let len = sum.real.norm();
        let (rotation, translation) = if len > 0.0 {
            let unit = UnitDualQuaternion::new_unchecked(sum * (1.0 / len));
            (unit.rotation(), unit.translation().vector)
        } else {
            (UnitQuaternion::identity(), Vector3::zeros())
        };
        DqBlend { rotation, translation, scale }
    }

    /// `rotation * (scale * p) + translation`.
    pub fn transform_point(&self, p: &Vector3<f32>) -> Vector3<f32> {
        self.rotation * (self.scale * p) + self.translation
    }

    /// A normal: the scale part's cofactor (times the sign of its
    /// determinant, so mirroring keeps normals outward), then the rotation;
    /// not normalised.
    pub fn transform_normal(&self, n: &Vector3<f32>) -> Vector3<f32> {
        let sign = if self.scale.determinant() < 0.0 { -1.0 } else { 1.0 };
        self.rotation * (cofactor(&self.scale) * (n * sign))
    }

    /// A tangent direction: scale, then rotation; not normalised.
    pub fn transform_vector(&self, t: &Vector3<f32>) -> Vector3<f32> {
        self.rotation * (self.scale * t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f32::consts::{FRAC_PI_2, PI};

    fn axis(x: f32, y: f32, z: f32) -> nalgebra::Unit<Vector3<f32>> {
        nalgebra::Unit::new_normalize(Vector3::new(x, y, z))
    }

    fn rigid(t: [f32; 3], axis: nalgebra::Unit<Vector3<f32>>, angle: f32) -> Matrix4<f32> {
        Matrix4::new_translation(&Vector3::from(t)) * Matrix4::from_axis_angle(&axis, angle)
    }

    fn max_diff(a: &Matrix4<f32>, b: &Matrix4<f32>) -> f32 {
        (a - b).abs().max()
    }

    /// Rigid, scaled, sheared, mirrored and singular matrices.
    fn matrices() -> Vec<Matrix4<f32>> {
        let r = rigid([0.4, -1.2, 2.5], axis(0.3, -0.8, 0.5), 2.9);
        vec![
            Matrix4::identity(),
            r,
            rigid([1.0, 2.0, 3.0], axis(0.0, 1.0, 0.0), PI),
            rigid([0.0, 0.0, 0.0], axis(1.0, 0.0, 0.0), -FRAC_PI_2),
            r * Matrix4::new_scaling(2.5),
            r * Matrix4::new_nonuniform_scaling(&Vector3::new(1.7, 0.6, 2.2)),
            // Scale along axes that are not the joint's: a shear in `S`.
            r * Matrix4::from_axis_angle(&axis(1.0, 1.0, 0.0), 0.6)
                * Matrix4::new_nonuniform_scaling(&Vector3::new(3.0, 0.5, 1.0))
                * Matrix4::from_axis_angle(&axis(1.0, 1.0, 0.0), -0.6),
            r * Matrix4::new_nonuniform_scaling(&Vector3::new(-2.0, 1.0, 1.0)),
            r * Matrix4::new_nonuniform_scaling(&Vector3::new(1.0, 1.0, 0.0)),
            Matrix4::new_translation(&Vector3::new(1.0, 2.0, 3.0)) * Matrix4::new_scaling(0.0),
        ]
    }

    #[test]
    fn matrix_round_trip() {
        for (i, m) in matrices().iter().enumerate() {
            let dq = SkinDualQuat::from_matrix(m);
            let back = dq.to_matrix();
            assert!(max_diff(&back, m) < 2e-6, "matrix {i}: {back} vs {m}");
            assert!((dq.rigid.as_ref().real.norm() - 1.0).abs() < 1e-6, "matrix {i}: unit");
        }
    }

    #[test]
    fn rigid_matrix_is_exactly_its_dual_quaternion() {
        let axis = axis(0.3, -0.8, 0.5);
        for angle in [0.0, 0.3, FRAC_PI_2, 2.0, PI, -2.5] {
            let m = rigid([0.4, -1.2, 2.5], axis, angle);
            let dq = SkinDualQuat::from_matrix(&m);
            // The scale part is the identity and the rigid part the motion.
            assert!((dq.scale - Matrix3::identity()).abs().max() < 1e-6, "{angle}: {}", dq.scale);
            let expected = UnitQuaternion::from_axis_angle(&axis, angle);
            assert!(dq.rigid.rotation().angle_to(&expected) < 1e-3, "{angle}");
            let t = dq.rigid.translation().vector;
            assert!((t - Vector3::new(0.4, -1.2, 2.5)).norm() < 1e-6, "{angle}: {t}");
        }
    }

    #[test]
    fn rotation_part_is_the_polar_rotation() {
        // R * P with P symmetric positive definite: the polar rotation is R.
        let r = Matrix3::from(Rotation3::from_axis_angle(&axis(0.2, 0.9, -0.4), 1.3));
        let q = Matrix3::from(Rotation3::from_axis_angle(&axis(1.0, -1.0, 0.5), 0.8));
        let p = q * Matrix3::from_diagonal(&Vector3::new(4.0, 0.25, 1.5)) * q.transpose();
        let got = rotation_part(&(r * p));
        assert!((got - r).abs().max() < 1e-5, "{got} vs {r}");
        assert!((rotation_part(&(r * 1e-3)) - r).abs().max() < 1e-5);
        assert_eq!(rotation_part(&Matrix3::zeros()), Matrix3::identity());
        assert_eq!(rotation_part(&Matrix3::from_element(f32::NAN)), Matrix3::identity());
    }

    #[test]
    fn single_joint_blend_equals_the_matrix() {
        let palette: Vec<BoneMatrix> = matrices().iter().map(BoneMatrix::from_matrix).collect();
        let p = Vector3::new(0.7, -0.3, 1.9);
        let n = Vector3::new(-0.2, 0.9, 0.4);
        for (j, m) in matrices().iter().enumerate() {
            // One influence with weight 1 among zero weights, in any slot.
            let joints = [0, j as u16, 1, 2];
            let blend = DqBlend::of_influences(&palette, &joints, &[0.0, 1.0, 0.0, 0.0]);
            let expected = m.transform_point(&p.into()).coords;
            let got = blend.transform_point(&p);
            assert!((got - expected).norm() < 1e-5, "joint {j}: {got} vs {expected}");
            // The normal's direction matches LBS's inverse transpose (for
            // an invertible matrix).
            let a = m.fixed_view::<3, 3>(0, 0).into_owned();
            if let Some(inv) = a.try_inverse() {
                let expected = (inv.transpose() * n).normalize();
                let got = blend.transform_normal(&n).normalize();
                assert!((got - expected).norm() < 1e-5, "joint {j}: normal {got} vs {expected}");
            }
        }
    }

    #[test]
    fn blending_half_way_rotates_half_way() {
        // Identity and 120 degrees about z, half each: 60 degrees, rigid.
        let m = rigid([0.0; 3], Vector3::z_axis(), 2.0 * PI / 3.0);
        let palette = [BoneMatrix::IDENTITY, BoneMatrix::from_matrix(&m)];
        let blend = DqBlend::of_influences(&palette, &[0, 1], &[0.5, 0.5]);
        let expected = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), PI / 3.0);
        assert!(blend.rotation.angle_to(&expected) < 1e-5);
        assert!((blend.scale - Matrix3::identity()).abs().max() < 1e-6);
        let p = blend.transform_point(&Vector3::new(1.0, 0.0, 0.0));
        assert!((p.norm() - 1.0).abs() < 1e-6, "radius kept: {p}");
    }

    #[test]
    fn antipodal_quaternions_blend_as_the_same_rotation() {
        // 200 degrees about z is -160 degrees. Shepperd's method keeps the
        // largest component (z) positive, which puts its quaternion in the
        // other hemisphere from the identity's (w < 0). Blended half and
        // half with the identity, the shortest way is -80 degrees; summing
        // without the flip would give +100 degrees.
        let m = rigid([0.0; 3], Vector3::z_axis(), PI * 10.0 / 9.0);
        let real = SkinDualQuat::from_matrix(&m).rigid.as_ref().real;
        assert!(real.w < 0.0, "the test needs an antipodal pair: {real:?}");
        let palette = [BoneMatrix::IDENTITY, BoneMatrix::from_matrix(&m)];
        let signed_angle = |b: &DqBlend| b.rotation.scaled_axis().z;
        let minus_80 = -PI * 4.0 / 9.0;
        // Whichever influence is the pivot (listed first or second, or
        // the most weighted by a hair), the result is the same.
        for (joints, weights) in [([0, 1], [0.5, 0.5]), ([1, 0], [0.5, 0.5]), ([1, 0], [0.4999, 0.5001])] {
            let blend = DqBlend::of_influences(&palette, &joints, &weights);
            let angle = signed_angle(&blend);
            assert!((angle - minus_80).abs() < 1e-3, "{joints:?} {weights:?}: {angle}");
            let axis = blend.rotation.scaled_axis();
            assert!(axis.x.abs() < 1e-6 && axis.y.abs() < 1e-6, "{axis}");
        }
        // A dominant influence: 0.9 of the way to -160 degrees.
        let angle = signed_angle(&DqBlend::of_influences(&palette, &[0, 1], &[0.1, 0.9]));
        assert!(angle < -2.4 && angle > -2.8, "{angle}");
    }

    #[test]
    fn scale_is_blended_linearly_and_applied_first() {
        // Joint 0 scales by 2, joint 1 is the identity: the scale blends to
        // 1.5, and the rotation (none) does not change it.
        let palette = [BoneMatrix::from_matrix(&Matrix4::new_scaling(2.0)), BoneMatrix::IDENTITY];
        let blend = DqBlend::of_influences(&palette, &[0, 1], &[0.5, 0.5]);
        let p = blend.transform_point(&Vector3::new(1.0, 2.0, 3.0));
        assert!((p - Vector3::new(1.5, 3.0, 4.5)).norm() < 1e-6, "{p}");
    }

    #[test]
    fn no_weight_gives_the_scale_part_only() {
        let palette = [BoneMatrix::IDENTITY];
        let blend = DqBlend::of_influences(&palette, &[0, 0], &[0.0, 0.0]);
        assert_eq!(blend.transform_point(&Vector3::new(1.0, 2.0, 3.0)), Vector3::zeros());
        assert_eq!(blend.transform_normal(&Vector3::new(0.0, 0.0, 1.0)), Vector3::zeros());
    }
}
