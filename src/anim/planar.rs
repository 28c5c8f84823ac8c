//! The handbook's planar rig, as maths: a chain of joints turning in one
//! plane, posed by blending joint *angles* linearly, beside the same motion
//! blended as quaternions (slerp); why the two agree exactly for rotations
//! about one axis and why linear interpolation of Euler angles does not for
//! a general 3D rotation; and the two-weight linear skinning rule of the
//! rig's mesh.
//!
//! Pure maths on nalgebra values: it never samples a clip, and knows no
//! file format, GPU or renderer (`planar_scene` poses a rig with it).
//!
//! Why angle lerp is exact in the plane: rotations about one fixed axis
//! compose by adding their angles, so `R(a + t (b - a))` is the constant-speed
//! path from `R(a)` to `R(b)`, which is what slerp computes, as long as
//! `|b - a| < 180` degrees (slerp takes the shorter way round; the angle
//! lerp goes the way the numbers say). For rotations about different axes
//! the Euler angles do not add: `Rz(t y) Ry(t p) Rx(t r)` leaves the slerp
//! path in between, although both agree at `t = 0` and `t = 1`.

use super::math::slerp as slerp_raw;
use nalgebra::{Matrix4, Point3, UnitQuaternion, Vector3};

/// Rotation by `angle` radians about the plane's normal (+z, so the chain
/// turns in the x-y plane, counter-clockwise seen from +z).
pub fn planar_rotation(angle: f32) -> UnitQuaternion<f32> {
    UnitQuaternion::from_axis_angle(&Vector3::z_axis(), angle)
}

/// Joint angles blended linearly: `out[j] = a[j] + t (b[j] - a[j])`, over
/// the joints all three slices have.
pub fn lerp_angles(a: &[f32], b: &[f32], t: f32, out: &mut [f32]) {
    for ((o, &a), &b) in out.iter_mut().zip(a).zip(b) {
        *o = a + t * (b - a);
    }
}

/// Spherical linear interpolation from `a` to `b` at `t`, the shorter way
/// round (q and -q are one rotation): the crate's slerp, the one clip
/// sampling uses.
pub fn slerp(a: UnitQuaternion<f32>, b: UnitQuaternion<f32>, t: f32) -> UnitQuaternion<f32> {
    UnitQuaternion::new_normalize(slerp_raw(a.into_inner(), b.into_inner(), t).into_inner())
}

/// Angle in radians (0 to pi) of the rotation that takes `a` to `b`,
/// computed in f64 as `2 atan2(|v|, |w|)` of `a^-1 b`: accurate near 0,
/// where `2 acos(dot)` in f32 could not resolve less than about 1e-3 rad.
pub fn angle_between(a: UnitQuaternion<f32>, b: UnitQuaternion<f32>) -> f64 {
    let a = a.into_inner().cast::<f64>();
    let b = b.into_inner().cast::<f64>();
    let r = a.conjugate() * b;
    2.0 * r.imag().norm().atan2(r.w.abs())
}

/// Euler angles in radians, applied as `R = Rz(yaw) Ry(pitch) Rx(roll)`
/// (x first: nalgebra's `from_euler_angles` order).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EulerAngles {
    /// About x, applied first.
    pub roll: f32,
    /// About y.
    pub pitch: f32,
    /// About z, applied last.
    pub yaw: f32,
}

impl EulerAngles {
    /// Angles given in degrees.
    pub fn degrees(roll: f32, pitch: f32, yaw: f32) -> Self {
        EulerAngles { roll: roll.to_radians(), pitch: pitch.to_radians(), yaw: yaw.to_radians() }
    }

    /// The rotation these angles describe.
    pub fn rotation(&self) -> UnitQuaternion<f32> {
        UnitQuaternion::from_euler_angles(self.roll, self.pitch, self.yaw)
    }

    /// Each angle blended linearly towards `other`: what the handbook warns
    /// against for 3D rotations.
    pub fn lerp(&self, other: &EulerAngles, t: f32) -> EulerAngles {
        let mix = |a: f32, b: f32| a + t * (b - a);
        EulerAngles {
            roll: mix(self.roll, other.roll),
            pitch: mix(self.pitch, other.pitch),
            yaw: mix(self.yaw, other.yaw),
        }
    }
}

/// The largest difference between two ways of blending one joint, over
/// `t` in `0..=1`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Departure {
    /// Largest rotation angle between the two blends, radians.
    pub radians: f64,
    /// The blend parameter where it is largest.
    pub at: f32,
}

impl Departure {
    /// The larger of two departures.
    pub fn max(self, other: Departure) -> Departure {
        if other.radians > self.radians { other } else { self }
    }
}

/// How far `blend(t)` departs from `slerp(blend(0), blend(1), t)` over
/// `samples + 1` evenly spaced `t` in `0..=1`.
fn departure(samples: u32, blend: impl Fn(f32) -> UnitQuaternion<f32>) -> Departure {
    let samples = samples.max(1);
    let (a, b) = (blend(0.0), blend(1.0));
    let mut worst = Departure::default();
    for i in 0..=samples {
        let t = i as f32 / samples as f32;
        let radians = angle_between(blend(t), slerp(a, b, t));
        worst = worst.max(Departure { radians, at: t });
    }
    worst
}

/// How far the planar angle lerp from `a` to `b` (radians about +z)
/// departs from slerp: f32 rounding only (about 1e-7 rad) while
/// `|b - a| < pi`.
pub fn angle_lerp_departure(a: f32, b: f32, samples: u32) -> Departure {
    departure(samples, |t| planar_rotation(a + t * (b - a)))
}

/// How far the Euler-angle lerp from `a` to `b` departs from slerp. From
/// no rotation to roll 90 and yaw 90 degrees (a 120-degree turn about
/// (1, 1, 1)) it is largest at `t = 0.5`: asin(1/3) = 19.47 degrees.
pub fn euler_lerp_departure(a: EulerAngles, b: EulerAngles, samples: u32) -> Departure {
    departure(samples, |t| a.lerp(&b, t).rotation())
}

/// Forward kinematics in the plane: `lengths[k]` is the segment from joint
/// `k` to joint `k + 1` (or the tip), turned by the sum of `angles[..=k]`.
/// Writes joint 0 (the origin), the other joints and the tip into `out`
/// (`lengths.len() + 1` points, as many as fit).
pub fn chain_points(lengths: &[f32], angles: &[f32], out: &mut [[f32; 2]]) {
    let (mut at, mut heading) = ([0.0f32; 2], 0.0f32);
    if let Some(first) = out.first_mut() {
        *first = at;
    }
    for ((length, angle), point) in lengths.iter().zip(angles).zip(out.iter_mut().skip(1)) {
        heading += angle;
        at = [at[0] + length * heading.cos(), at[1] + length * heading.sin()];
        *point = at;
    }
}

/// The two-weight linear skinning rule: a vertex `p` bound to joints `a`
/// and `b`, with weight `w` on `b` and `1 - w` on `a`, goes to
/// `(1 - w) Ma p + w Mb p`, each `M` a skinning matrix (joint world times
/// inverse bind).
pub fn skin_two_weight(p: [f32; 3], a: &Matrix4<f32>, b: &Matrix4<f32>, w: f32) -> [f32; 3] {
    let p = Point3::from(p);
    let (pa, pb) = (a.transform_point(&p), b.transform_point(&p));
    (pa.coords * (1.0 - w) + pb.coords * w).into()
}

/// Weight on the farther joint of a vertex `offset` past a joint (negative:
/// before it), blended over a band `band` wide centred on the joint: 0
/// before the band, 1 after it, a smoothstep across it (0.5 at the joint).
pub fn band_weight(offset: f32, band: f32) -> f32 {
    if band <= 0.0 {
        return if offset < 0.0 { 0.0 } else { 1.0 };
    }
    let x = (offset / band + 0.5).clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f32::consts::PI;

    use crate::testing::lcg::Lcg;

    #[test]
    fn angle_lerp_equals_slerp_about_one_axis() {
        let mut rng = Lcg(7);
        let mut worst = Departure::default();
        for _ in 0..2000 {
            // Both ends anywhere in (-pi, pi), less than pi apart.
            let a = (rng.unit() * 2.0 - 1.0) * PI;
            let mut b = (rng.unit() * 2.0 - 1.0) * PI;
            if (b - a).abs() >= PI * 0.999 {
                b = a + (b - a).signum() * PI * 0.5;
            }
            worst = worst.max(angle_lerp_departure(a, b, 64));
        }
        assert!(worst.radians < 1e-6, "angle lerp departs from slerp by {:e} rad", worst.radians);
    }

    #[test]
    fn angle_lerp_goes_the_long_way_past_180_degrees() {
        // 200 degrees apart: the angle lerp turns 200 degrees, slerp the
        // other way by 160, so half way they are 180 degrees apart.
        let d = angle_lerp_departure(0.0, 200f32.to_radians(), 100);
        assert!((d.radians.to_degrees() - 180.0).abs() < 1e-3, "{d:?}");
    }

    #[test]
    fn euler_lerp_about_one_axis_is_slerp_too() {
        for b in [EulerAngles::degrees(80.0, 0.0, 0.0), EulerAngles::degrees(0.0, 0.0, -120.0)] {
            let d = euler_lerp_departure(EulerAngles::default(), b, 100);
            assert!(d.radians < 1e-6, "{b:?}: {d:?}");
        }
    }

    /// By hand: roll 90 then yaw 90 is the quaternion (1, 1, 1, 1) / 2, a
    /// 120-degree turn about (1, 1, 1) / sqrt 3; slerp half way is 60
    /// degrees about that axis, (sqrt 3 / 2, 1 / (2 sqrt 3) (1, 1, 1)). The
    /// Euler lerp half way is Rz(45) Rx(45) = (c^2, cs, s^2, cs) with c, s =
    /// cos, sin 22.5 degrees. Their dot product is
    /// (sqrt 3 / 2) c^2 + (2cs + s^2) / (2 sqrt 3) = cos(theta / 2), which
    /// gives cos theta = 2 sqrt 2 / 3: theta = asin(1/3) = 19.4712 degrees.
    #[test]
    fn euler_lerp_departs_from_slerp_in_3d_by_asin_one_third() {
        let b = EulerAngles::degrees(90.0, 0.0, 90.0);
        let q = b.rotation();
        let half = [q.w, q.i, q.j, q.k];
        for c in half {
            assert!((c - 0.5).abs() < 1e-6, "{half:?}");
        }
        let d = euler_lerp_departure(EulerAngles::default(), b, 1000);
        let expected = (1.0f64 / 3.0).asin();
        assert!((d.radians - expected).abs() < 1e-5, "{:.4} degrees", d.radians.to_degrees());
        assert_eq!(d.at, 0.5);
        // A meaningful lower bound, far above the planar case's rounding.
        assert!(d.radians.to_degrees() > 19.4, "{d:?}");
        // Smaller turns depart less, but still by degrees.
        let smaller =
            euler_lerp_departure(EulerAngles::default(), EulerAngles::degrees(0.0, 60.0, 60.0), 1000);
        assert!((smaller.radians.to_degrees() - 8.2132).abs() < 1e-3, "{smaller:?}");
    }

    #[test]
    fn angle_between_is_accurate_near_zero() {
        let a = planar_rotation(0.3);
        let b = planar_rotation(0.3 + 1e-5);
        assert!((angle_between(a, b) - 1e-5).abs() < 2e-7);
        // q and -q are one rotation.
        let minus = UnitQuaternion::new_unchecked(-a.into_inner());
        assert!(angle_between(a, minus) < 1e-7);
    }

    #[test]
    fn chain_points_add_the_angles() {
        let mut out = [[0.0; 2]; 4];
        chain_points(&[1.0, 1.0, 0.5], &[PI / 2.0, -PI / 2.0, PI], &mut out);
        let expected = [[0.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 1.0]];
        for (p, e) in out.iter().zip(expected) {
            assert!((p[0] - e[0]).abs() < 1e-6 && (p[1] - e[1]).abs() < 1e-6, "{out:?}");
        }
    }

    #[test]
    fn chain_points_match_composed_quaternions() {
        // The same chain as joints whose local rotations are planar
        // quaternions and whose children sit `length` along x.
        let lengths = [1.0, 0.8, 0.6];
        let angles = [0.4, -1.1, 0.7];
        let mut out = [[0.0; 2]; 4];
        chain_points(&lengths, &angles, &mut out);
        let mut world = Matrix4::identity();
        for k in 0..3 {
            world *= planar_rotation(angles[k]).to_homogeneous();
            let tip = world.transform_point(&Point3::new(lengths[k], 0.0, 0.0));
            assert!((tip.x - out[k + 1][0]).abs() < 1e-6 && (tip.y - out[k + 1][1]).abs() < 1e-6);
            world *= Matrix4::new_translation(&Vector3::new(lengths[k], 0.0, 0.0));
        }
    }

    #[test]
    fn two_weights_blend_the_two_joints() {
        let a = Matrix4::identity();
        let b = Matrix4::new_translation(&Vector3::new(0.0, 2.0, 0.0));
        assert_eq!(skin_two_weight([1.0, 0.0, 0.0], &a, &b, 0.0), [1.0, 0.0, 0.0]);
        assert_eq!(skin_two_weight([1.0, 0.0, 0.0], &a, &b, 1.0), [1.0, 2.0, 0.0]);
        assert_eq!(skin_two_weight([1.0, 0.0, 0.0], &a, &b, 0.25), [1.0, 0.5, 0.0]);
    }

    #[test]
    fn band_weights_run_from_zero_to_one() {
        assert_eq!(band_weight(-0.2, 0.3), 0.0);
        assert_eq!(band_weight(0.0, 0.3), 0.5);
        assert_eq!(band_weight(0.2, 0.3), 1.0);
        assert!(band_weight(-0.05, 0.3) < band_weight(0.05, 0.3));
        assert_eq!(band_weight(-0.1, 0.0), 0.0);
    }
}
