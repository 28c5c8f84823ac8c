//! Blending: combines several local poses into one.
//!
//! Local poses in, one local pose out, in the caller's buffer: it never
//! samples a clip, never works in model space and never allocates.

use super::job::{JobError, check_len};
use super::lanes8::Simd;
use super::math::{normalize_or, slerp};
use super::sampling::RotationBlend;
use super::transform::Transform;
use nalgebra::{Quaternion, UnitQuaternion, Vector3};

mod many_nlerp;
mod two_nlerp;

/// One input pose of a [`BlendJob`] and its weight.
#[derive(Debug, Clone, Copy)]
pub struct BlendLayer<'a> {
    /// Local transform per joint.
    pub locals: &'a [Transform],
    /// Morph weights.
    pub morph_weights: &'a [f32],
    /// Blend weight: finite and non-negative; weights are normalised to sum to one.
    pub weight: f32,
}

/// Weighted N-way blend of local poses.
///
/// Translations, scales and morph weights are weighted sums (weights
/// normalised to sum to one). Rotations follow `rotation_blend`:
///
/// - [`RotationBlend::Nlerp`], the fast path (ozz-animation's): a weighted
///   quaternion sum, each rotation flipped into the hemisphere of the first
///   layer with a non-zero weight, then normalised.
/// - [`RotationBlend::Slerp`]: slerp accumulated layer by layer on the
///   short arc, `q = slerp(q, q_i, w_i / (w_0 + ... + w_i))`: exact for two
///   layers (what [`BlendTwoJob`] computes), order-dependent beyond.
///
/// When every weight is zero (or there are no layers) the output is the rest pose.
#[derive(Debug)]
pub struct BlendJob<'a> {
    /// Input poses.
    pub layers: &'a [BlendLayer<'a>],
    /// Rest pose, the result when nothing has weight.
    pub rest: &'a [Transform],
    /// Rest morph weights.
    pub rest_morph_weights: &'a [f32],
    /// How rotations are combined.
    pub rotation_blend: RotationBlend,
    /// Blended transforms, as long as `rest`.
    pub output: &'a mut [Transform],
    /// Blended morph weights, as long as `rest_morph_weights`.
    pub morph_output: &'a mut [f32],
}

impl BlendJob<'_> {
    /// Checks lengths and that weights are finite, non-negative and have a finite sum.
    pub fn validate(&self) -> Result<(), JobError> {
        check_len("blend: output", self.output.len(), self.rest.len())?;
        check_len("blend: morph_output", self.morph_output.len(), self.rest_morph_weights.len())?;
        let mut total = 0.0f32;
        for (i, l) in self.layers.iter().enumerate() {
            if !(l.weight.is_finite() && l.weight >= 0.0) {
                return Err(JobError::new(format!(
                    "blend: layer {i} weight {} is not finite and >= 0",
                    l.weight
                )));
            }
            total += l.weight;
            // Checked by hand rather than with check_len to build a message only on failure.
            if l.locals.len() != self.rest.len() || l.morph_weights.len() != self.rest_morph_weights.len() {
                return Err(JobError::new(format!(
                    "blend: layer {i} has {} locals and {} morph weights, expected {} and {}",
                    l.locals.len(),
                    l.morph_weights.len(),
                    self.rest.len(),
                    self.rest_morph_weights.len()
                )));
            }
        }
        if !total.is_finite() {
            return Err(JobError::new("blend: sum of weights overflows"));
        }
        Ok(())
    }

    /// Validates, then blends. Never allocates.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        let total: f32 = self.layers.iter().map(|l| l.weight).sum();
        // The reference layer for the hemisphere check must contribute, or the
        // flips could split a cluster of nearby rotations.
        let Some(reference) = self.layers.iter().find(|l| l.weight > 0.0) else {
            self.output.copy_from_slice(self.rest);
            self.morph_output.copy_from_slice(self.rest_morph_weights);
            return Ok(());
        };
        if self.rotation_blend == RotationBlend::Nlerp {
            self.blend_nlerp(total, Simd::detect());
            return Ok(());
        }
        self.blend_layer_by_layer(reference, total);
        Ok(())
    }

    /// Every mode and layer count (slerp's path, and what nlerp's is
    /// tested against): the layers one after the other, each a
    /// straight pass over the joints, every joint summing its layers in
    /// layer order. `reference` is the first layer with weight.
    fn blend_layer_by_layer(&mut self, reference: &BlendLayer, total: f32) {
        let zero = Transform {
            translation: Vector3::zeros(),
            rotation: UnitQuaternion::new_unchecked(Quaternion::new(0.0, 0.0, 0.0, 0.0)),
            scale: Vector3::zeros(),
        };
        self.output.fill(zero);
        let mut so_far = 0.0f32;
        for l in self.layers.iter().filter(|l| l.weight > 0.0) {
            // Divide rather than multiply by 1 / total: a denormal total has no finite inverse.
            let w = l.weight / total;
            let first = so_far == 0.0;
            so_far += l.weight;
            let along = l.weight / so_far;
            for ((out, x), (r0, rest)) in
                self.output.iter_mut().zip(l.locals).zip(reference.locals.iter().zip(self.rest))
            {
                out.translation += x.translation * w;
                out.scale += x.scale * w;
                let q = x.rotation.into_inner();
                let acc = out.rotation.into_inner();
                let r = match self.rotation_blend {
                    RotationBlend::Nlerp => acc + if q.dot(&r0.rotation) < 0.0 { q * -w } else { q * w },
                    RotationBlend::Slerp if first => q,
                    RotationBlend::Slerp => {
                        normalize_or(slerp(acc, q, along).into_inner(), rest.rotation).into_inner()
                    }
                };
                out.rotation = UnitQuaternion::new_unchecked(r);
            }
        }
        for (out, rest) in self.output.iter_mut().zip(self.rest) {
            out.rotation = normalize_fast_or(out.rotation.into_inner(), rest.rotation);
        }
        for (m, out) in self.morph_output.iter_mut().enumerate() {
            *out = self.layers.iter().map(|l| l.morph_weights[m] * (l.weight / total)).sum();
        }
    }
}

impl BlendJob<'_> {
    /// The nlerp path, any number of layers (some with weight), eight
    /// joints at a time with the instructions `simd` names: two layers with
    /// weight (the common case) in one straight pass, any other number
    /// layer after layer; the same sums, in the same order, as
    /// `blend_layer_by_layer`, so the same bits (tested).
    fn blend_nlerp(&mut self, total: f32, simd: Simd) {
        let mut active = self.layers.iter().filter(|l| l.weight > 0.0);
        match (active.next(), active.next(), active.next()) {
            (Some(a), Some(b), None) => {
                let (wa, wb) = (a.weight / total, b.weight / total);
                two_nlerp::blend(self.output, self.rest, (a.locals, wa), (b.locals, wb), simd);
            }
            _ => many_nlerp::blend(self.output, self.rest, self.layers, total, simd),
        }
        for (m, out) in self.morph_output.iter_mut().enumerate() {
            *out = self.layers.iter().map(|l| l.morph_weights[m] * (l.weight / total)).sum();
        }
    }
}

/// `q` normalised by one reciprocal square root (within an f32 rounding of
/// dividing by the norm, and four times cheaper), or `fallback` when `q` has
/// (near) zero or non-finite length.
#[inline(always)]
fn normalize_fast_or(q: Quaternion<f32>, fallback: UnitQuaternion<f32>) -> UnitQuaternion<f32> {
    let n2 = q.norm_squared();
    if n2 > f32::MIN_POSITIVE && n2.is_finite() {
        UnitQuaternion::new_unchecked(q * (1.0 / n2.sqrt()))
    } else {
        fallback
    }
}

/// Blends two poses: `t = 0` gives `a`, `t = 1` gives `b`. Translation,
/// scale and morph weights are lerped, rotations slerped on the short arc.
#[derive(Debug)]
pub struct BlendTwoJob<'a> {
    /// First pose.
    pub a: &'a [Transform],
    /// Second pose, as long as `a`.
    pub b: &'a [Transform],
    /// First pose's morph weights.
    pub a_morph: &'a [f32],
    /// Second pose's morph weights, as long as `a_morph`.
    pub b_morph: &'a [f32],
    /// Blend factor, clamped to [0, 1]; NaN is rejected.
    pub t: f32,
    /// Result, as long as `a`.
    pub output: &'a mut [Transform],
    /// Result morph weights, as long as `a_morph`.
    pub morph_output: &'a mut [f32],
}

impl BlendTwoJob<'_> {
    /// Checks lengths and that `t` is not NaN.
    pub fn validate(&self) -> Result<(), JobError> {
        if self.t.is_nan() {
            return Err(JobError::new("blend two: t is NaN"));
        }
        check_len("blend two: b", self.b.len(), self.a.len())?;
        check_len("blend two: output", self.output.len(), self.a.len())?;
        check_len("blend two: b_morph", self.b_morph.len(), self.a_morph.len())?;
        check_len("blend two: morph_output", self.morph_output.len(), self.a_morph.len())
    }

    /// Validates, then blends. Never allocates.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        let t = self.t.clamp(0.0, 1.0);
        for ((out, a), b) in self.output.iter_mut().zip(self.a).zip(self.b) {
            let q = slerp(a.rotation.into_inner(), b.rotation.into_inner(), t).into_inner();
            *out = Transform {
                translation: a.translation.lerp(&b.translation, t),
                rotation: normalize_or(q, a.rotation),
                scale: a.scale.lerp(&b.scale, t),
            };
        }
        for ((out, a), b) in self.morph_output.iter_mut().zip(self.a_morph).zip(self.b_morph) {
            *out = a + (b - a) * t;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::bits::pose_bits;
    use nalgebra::UnitQuaternion;

    fn xf(x: f32, angle_z: f32, s: f32) -> Transform {
        Transform {
            translation: Vector3::new(x, 0.0, 0.0),
            rotation: UnitQuaternion::from_axis_angle(&Vector3::z_axis(), angle_z),
            scale: Vector3::repeat(s),
        }
    }

    fn blend(
        layers: &[BlendLayer],
        rest: &[Transform],
        rest_w: &[f32],
    ) -> Result<(Vec<Transform>, Vec<f32>), JobError> {
        blend_mode(RotationBlend::Nlerp, layers, rest, rest_w)
    }

    fn blend_mode(
        rotation_blend: RotationBlend,
        layers: &[BlendLayer],
        rest: &[Transform],
        rest_w: &[f32],
    ) -> Result<(Vec<Transform>, Vec<f32>), JobError> {
        let mut out = vec![Transform::IDENTITY; rest.len()];
        let mut out_w = vec![0.0; rest_w.len()];
        BlendJob {
            layers,
            rest,
            rest_morph_weights: rest_w,
            rotation_blend,
            output: &mut out,
            morph_output: &mut out_w,
        }
        .run()?;
        Ok((out, out_w))
    }

    fn blend_two(
        a: &[Transform],
        b: &[Transform],
        am: &[f32],
        bm: &[f32],
        t: f32,
    ) -> Result<(Vec<Transform>, Vec<f32>), JobError> {
        let mut out = vec![Transform::IDENTITY; a.len()];
        let mut out_w = vec![0.0; am.len()];
        BlendTwoJob { a, b, a_morph: am, b_morph: bm, t, output: &mut out, morph_output: &mut out_w }
            .run()?;
        Ok((out, out_w))
    }

    #[test]
    fn rejects_bad_weights_and_lengths() {
        let p = [xf(0.0, 0.0, 1.0); 2];
        let w = [0.0; 1];
        let layer = |weight| BlendLayer { locals: &p, morph_weights: &w, weight };
        assert!(blend(&[layer(1.0)], &p, &w).is_ok());
        for bad in [-1.0, f32::NAN, f32::INFINITY] {
            assert!(blend(&[layer(bad)], &p, &w).is_err(), "{bad}");
        }
        assert!(blend(&[layer(f32::MAX), layer(f32::MAX)], &p, &w).is_err());
        assert!(blend(&[BlendLayer { locals: &p[..1], morph_weights: &w, weight: 1.0 }], &p, &w).is_err());
        assert!(blend(&[BlendLayer { locals: &p, morph_weights: &[], weight: 1.0 }], &p, &w).is_err());
        let mut out = vec![Transform::IDENTITY; 1];
        let mut out_w = vec![0.0; 1];
        let job = BlendJob {
            layers: &[],
            rest: &p,
            rest_morph_weights: &w,
            rotation_blend: RotationBlend::Nlerp,
            output: &mut out,
            morph_output: &mut out_w,
        };
        assert!(job.validate().is_err());
        let mut out = vec![Transform::IDENTITY; 2];
        let mut out_w = vec![];
        let job = BlendJob {
            layers: &[],
            rest: &p,
            rest_morph_weights: &w,
            rotation_blend: RotationBlend::Nlerp,
            output: &mut out,
            morph_output: &mut out_w,
        };
        assert!(job.validate().is_err());
    }

    #[test]
    fn blend_two_rejects_bad_input() {
        let p = [xf(0.0, 0.0, 1.0); 2];
        assert!(blend_two(&p, &p, &[0.0], &[1.0], 0.5).is_ok());
        assert!(blend_two(&p, &p, &[0.0], &[1.0], f32::NAN).is_err());
        assert!(blend_two(&p, &p[..1], &[0.0], &[1.0], 0.5).is_err());
        assert!(blend_two(&p, &p, &[0.0], &[], 0.5).is_err());
        let mut out = vec![Transform::IDENTITY; 1];
        let mut out_w = vec![0.0];
        let job = BlendTwoJob {
            a: &p,
            b: &p,
            a_morph: &[0.0],
            b_morph: &[0.0],
            t: 0.5,
            output: &mut out,
            morph_output: &mut out_w,
        };
        assert!(job.validate().is_err());
        let mut out = vec![Transform::IDENTITY; 2];
        let mut out_w = vec![];
        let job = BlendTwoJob {
            a: &p,
            b: &p,
            a_morph: &[0.0],
            b_morph: &[0.0],
            t: 0.5,
            output: &mut out,
            morph_output: &mut out_w,
        };
        assert!(job.validate().is_err());
    }

    #[test]
    fn weights_are_normalised() {
        let a = [xf(0.0, 0.0, 1.0)];
        let b = [xf(2.0, 1.0, 3.0)];
        let (out, w) = blend(
            &[
                BlendLayer { locals: &a, morph_weights: &[0.0], weight: 2.0 },
                BlendLayer { locals: &b, morph_weights: &[1.0], weight: 2.0 },
            ],
            &[Transform::IDENTITY],
            &[0.7],
        )
        .unwrap();
        assert!((out[0].translation - Vector3::new(1.0, 0.0, 0.0)).norm() < 1e-6);
        assert!((out[0].scale - Vector3::repeat(2.0)).norm() < 1e-6);
        assert!((out[0].rotation.angle() - 0.5).abs() < 1e-5);
        assert!((w[0] - 0.5).abs() < 1e-6);
        // Same as the two-pose blend at t = 0.5.
        let (two, w2) = blend_two(&a, &b, &[0.0], &[1.0], 0.5).unwrap();
        assert!((two[0].translation - out[0].translation).norm() < 1e-6);
        assert!(two[0].rotation.angle_to(&out[0].rotation) < 1e-5);
        assert_eq!(w2, vec![0.5]);
    }

    #[test]
    fn tiny_weights_still_normalise() {
        let a = [xf(1.0, 0.5, 2.0)];
        let layers = [BlendLayer { locals: &a, morph_weights: &[0.5], weight: 1e-45 }];
        let (out, w) = blend(&layers, &[Transform::IDENTITY], &[0.0]).unwrap();
        assert!((out[0].translation.x - 1.0).abs() < 1e-6 && (w[0] - 0.5).abs() < 1e-6, "{out:?}");
    }

    #[test]
    fn zero_weights_give_rest() {
        let a = [xf(1.0, 1.0, 2.0)];
        let rest = [xf(5.0, 0.3, 1.5)];
        let layers = [BlendLayer { locals: &a, morph_weights: &[1.0], weight: 0.0 }];
        assert_eq!(blend(&layers, &rest, &[0.25]).unwrap(), (rest.to_vec(), vec![0.25]));
        assert_eq!(blend(&[], &rest, &[0.25]).unwrap(), (rest.to_vec(), vec![0.25]));
    }

    #[test]
    fn zero_weight_first_layer_is_not_the_hemisphere_reference() {
        // Layer 0 has no weight; layers 1 and 2 are the same rotation written as
        // q and -q. Flipping into layer 0's hemisphere would cancel them.
        let q = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), 2.0);
        let far = Transform {
            rotation: UnitQuaternion::from_axis_angle(&Vector3::x_axis(), -1.2),
            ..Transform::IDENTITY
        };
        let a = [Transform { rotation: q, ..Transform::IDENTITY }];
        let b =
            [Transform { rotation: UnitQuaternion::new_unchecked(-q.into_inner()), ..Transform::IDENTITY }];
        let (out, _) = blend(
            &[
                BlendLayer { locals: &[far], morph_weights: &[], weight: 0.0 },
                BlendLayer { locals: &a, morph_weights: &[], weight: 1.0 },
                BlendLayer { locals: &b, morph_weights: &[], weight: 1.0 },
            ],
            &[Transform::IDENTITY],
            &[],
        )
        .unwrap();
        assert!(out[0].rotation.angle_to(&q) < 1e-5);
    }

    #[test]
    fn rotation_blend_takes_short_path() {
        let a = [xf(0.0, 10f32.to_radians(), 1.0)];
        let mut b = [xf(0.0, -10f32.to_radians(), 1.0)];
        b[0].rotation = UnitQuaternion::new_unchecked(-b[0].rotation.into_inner());
        let (out, _) = blend(
            &[
                BlendLayer { locals: &a, morph_weights: &[], weight: 1.0 },
                BlendLayer { locals: &b, morph_weights: &[], weight: 1.0 },
            ],
            &[Transform::IDENTITY],
            &[],
        )
        .unwrap();
        assert!(out[0].rotation.angle() < 1e-5);
        let (two, _) = blend_two(&a, &b, &[], &[], 0.5).unwrap();
        assert!(two[0].rotation.angle() < 1e-5);
    }

    #[test]
    fn blend_two_clamps_and_slerps() {
        let a = [xf(0.0, 0.0, 1.0)];
        let b = [xf(4.0, std::f32::consts::FRAC_PI_2, 2.0)];
        // A non-zero first morph weight: 0.2 + (0.6 - 0.2) * 0.25 = 0.3.
        let (out, w) = blend_two(&a, &b, &[0.2], &[0.6], 0.25).unwrap();
        assert!((out[0].translation.x - 1.0).abs() < 1e-6);
        assert!((out[0].scale.x - 1.25).abs() < 1e-6);
        assert!((out[0].rotation.angle() - std::f32::consts::FRAC_PI_8).abs() < 1e-5);
        assert!((w[0] - 0.3).abs() < 1e-6, "{w:?}");
        assert_eq!(blend_two(&a, &b, &[0.0], &[1.0], -3.0).unwrap().0, a.to_vec());
        let (end, _) = blend_two(&a, &b, &[0.0], &[1.0], 7.0).unwrap();
        assert!(end[0].rotation.angle_to(&b[0].rotation) < 1e-6);
        assert_eq!(end[0].translation, b[0].translation);
    }
    /// One joint rotated `degrees` about `axis`.
    fn turned(axis: Vector3<f32>, degrees: f32) -> [Transform; 1] {
        let rotation =
            UnitQuaternion::from_axis_angle(&nalgebra::Unit::new_normalize(axis), degrees.to_radians());
        [Transform { rotation, ..Transform::IDENTITY }]
    }

    fn layer<'a>(locals: &'a [Transform], weight: f32) -> BlendLayer<'a> {
        BlendLayer { locals, morph_weights: &[], weight }
    }

    #[test]
    fn slerp_blend_is_constant_speed_and_nlerp_is_not() {
        // 0 and 90 degrees about z at weights 1 : 3. Slerp turns exactly 3/4
        // of the way (67.5 degrees). The normalised weighted sum of the
        // quaternions (half-angles 0 and 45 degrees) has half-angle
        // atan2(3 sin 45, 1 + 3 cos 45): it turns 68.40 degrees.
        let (a, b) = (turned(Vector3::z(), 0.0), turned(Vector3::z(), 90.0));
        let layers = [layer(&a, 1.0), layer(&b, 3.0)];
        let (slerped, _) = blend_mode(RotationBlend::Slerp, &layers, &[Transform::IDENTITY], &[]).unwrap();
        let (nlerped, _) = blend_mode(RotationBlend::Nlerp, &layers, &[Transform::IDENTITY], &[]).unwrap();
        assert!(
            (slerped[0].rotation.angle().to_degrees() - 67.5).abs() < 1e-3,
            "{}",
            slerped[0].rotation.angle()
        );
        let expected = 2.0 * (3.0 * 45f32.to_radians().sin()).atan2(1.0 + 3.0 * 45f32.to_radians().cos());
        assert!((nlerped[0].rotation.angle() - expected).abs() < 1e-5, "{}", nlerped[0].rotation.angle());
        assert!((expected.to_degrees() - 68.40).abs() < 0.01, "{}", expected.to_degrees());
        // Two layers: the same as the two-pose slerp at t = w1 / (w0 + w1).
        let (two, _) = blend_two(&a, &b, &[], &[], 0.75).unwrap();
        assert!(two[0].rotation.angle_to(&slerped[0].rotation) < 1e-6);
    }

    #[test]
    fn both_modes_normalise_weights() {
        let (a, b) = (turned(Vector3::x(), 10.0), turned(Vector3::y(), 70.0));
        let (ta, tb) = (
            [Transform { translation: Vector3::new(1.0, 0.0, 0.0), ..a[0] }],
            [Transform { translation: Vector3::new(0.0, 4.0, 0.0), ..b[0] }],
        );
        for mode in [RotationBlend::Nlerp, RotationBlend::Slerp] {
            let results: Vec<Transform> = [(0.25, 0.75), (1.0, 3.0), (40.0, 120.0), (1e-30, 3e-30)]
                .iter()
                .map(|&(wa, wb)| {
                    blend_mode(mode, &[layer(&ta, wa), layer(&tb, wb)], &[Transform::IDENTITY], &[])
                        .unwrap()
                        .0[0]
                })
                .collect();
            for r in &results {
                assert!((r.translation - Vector3::new(0.25, 3.0, 0.0)).norm() < 1e-5, "{mode:?} {r:?}");
                assert!((r.rotation.norm() - 1.0).abs() < 1e-6);
                assert!(r.rotation.angle_to(&results[0].rotation) < 1e-5, "{mode:?}: {r:?}");
            }
        }
    }

    #[test]
    fn both_modes_take_the_short_arc_whatever_the_sign() {
        // 40 degrees about x against -(80 degrees about x) (the same rotation
        // as +80 written in the other hemisphere), equal weights: 60 degrees.
        let a = turned(Vector3::x(), 40.0);
        let mut b = turned(Vector3::x(), 80.0);
        b[0].rotation = UnitQuaternion::new_unchecked(-b[0].rotation.into_inner());
        let expected = turned(Vector3::x(), 60.0)[0].rotation;
        for mode in [RotationBlend::Nlerp, RotationBlend::Slerp] {
            let (out, _) =
                blend_mode(mode, &[layer(&a, 1.0), layer(&b, 1.0)], &[Transform::IDENTITY], &[]).unwrap();
            assert!(out[0].rotation.angle_to(&expected) < 1e-5, "{mode:?}: {:?}", out[0].rotation);
            // A zero-weight layer in the far hemisphere changes nothing.
            let far = turned(Vector3::x(), -150.0);
            let (out, _) = blend_mode(
                mode,
                &[layer(&far, 0.0), layer(&a, 1.0), layer(&b, 1.0)],
                &[Transform::IDENTITY],
                &[],
            )
            .unwrap();
            assert!(out[0].rotation.angle_to(&expected) < 1e-5, "{mode:?}: {:?}", out[0].rotation);
        }
    }

    #[test]
    fn slerp_blend_of_three_equal_rotations_is_that_rotation() {
        let a = turned(Vector3::new(1.0, 2.0, 3.0), 123.0);
        let (out, _) = blend_mode(
            RotationBlend::Slerp,
            &[layer(&a, 1.0), layer(&a, 2.0), layer(&a, 0.5)],
            &[Transform::IDENTITY],
            &[],
        )
        .unwrap();
        assert!(out[0].rotation.angle_to(&a[0].rotation) < 1e-6);
    }

    #[test]
    fn nlerp_layers_in_one_pass_give_the_layer_by_layer_bits() {
        // A small deterministic generator: values in [-2, 2).
        let mut state = 0x2545_f491_u32;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state as f32 / u32::MAX as f32) * 4.0 - 2.0
        };
        let joint = |next: &mut dyn FnMut() -> f32| Transform {
            translation: Vector3::new(next(), next(), next()),
            // Not normalised: a blend must give the same bits whatever it is handed.
            rotation: UnitQuaternion::new_unchecked(Quaternion::new(next(), next(), next(), next())),
            scale: Vector3::new(next(), next(), next()),
        };
        for joints in 1..=27 {
            let rest: Vec<Transform> = (0..joints).map(|_| joint(&mut next)).collect();
            let mut a: Vec<Transform> = (0..joints).map(|_| joint(&mut next)).collect();
            let mut b: Vec<Transform> = (0..joints).map(|_| joint(&mut next)).collect();
            let mut c: Vec<Transform> = (0..joints).map(|_| joint(&mut next)).collect();
            let mut d: Vec<Transform> = (0..joints).map(|_| joint(&mut next)).collect();
            // A third layer opposite the first: flipped into its hemisphere.
            c[joints / 2].rotation = UnitQuaternion::new_unchecked(-a[joints / 2].rotation.into_inner());
            // Zero rotations blend to zero (the rest's is taken); a NaN and
            // an infinite rotation go to the rest's too. Opposite ones do
            // not cancel: the hemisphere check flips one.
            a[0].rotation = UnitQuaternion::new_unchecked(Quaternion::new(0.0, 0.0, 0.0, 0.0));
            b[0].rotation = a[0].rotation;
            c[0].rotation = a[0].rotation;
            d[0].rotation = a[0].rotation;
            b[joints - 1].rotation = UnitQuaternion::new_unchecked(-a[joints - 1].rotation.into_inner());
            if joints > 2 {
                b[1].rotation = UnitQuaternion::new_unchecked(Quaternion::new(f32::NAN, 0.0, 0.0, 0.0));
                b[2].rotation = UnitQuaternion::new_unchecked(Quaternion::new(f32::INFINITY, 0.0, 0.0, 0.0));
            }
            if joints > 14 {
                // In the high half of the second group of eight.
                a[12].rotation = UnitQuaternion::new_unchecked(Quaternion::new(0.0, f32::NAN, 0.0, 0.0));
            }
            let weight_sets: [&[f32]; 9] = [
                &[1.0],
                &[1.0, 1.0],
                &[0.3, 0.7],
                &[2.5, 1e-30],
                &[1e-40, 1e-40],
                &[0.2, 0.5, 0.3],
                // The first layer without weight: the second is the hemisphere reference.
                &[0.0, 0.6, 0.4],
                &[0.25, 0.25, 0.25, 0.25],
                &[1.0, 0.0, 2.0, 1e-30],
            ];
            let poses = [&a, &b, &c, &d];
            let morphs = [[0.25], [0.75], [0.5], [1.0]];
            for weights in weight_sets {
                let layers: Vec<BlendLayer> = weights
                    .iter()
                    .enumerate()
                    .map(|(i, &weight)| BlendLayer { locals: poses[i], morph_weights: &morphs[i], weight })
                    .collect();
                let total: f32 = weights.iter().sum();
                let reference = layers.iter().find(|l| l.weight > 0.0).unwrap();
                // Layer by layer, then in one pass with each kind of instructions.
                let ways = [None, Some(Simd::Portable), Some(Simd::Avx2), Some(Simd::Avx512)];
                let mut outputs = ways.map(|_| vec![Transform::IDENTITY; joints]);
                let mut morphs = ways.map(|_| [0.0f32]);
                for (way, (output, morph_output)) in ways.iter().zip(outputs.iter_mut().zip(&mut morphs)) {
                    let mut job = BlendJob {
                        layers: &layers,
                        rest: &rest,
                        rest_morph_weights: &[0.0],
                        rotation_blend: RotationBlend::Nlerp,
                        output,
                        morph_output,
                    };
                    match way {
                        // Each runs the widest code below it that the CPU has.
                        Some(simd) => job.blend_nlerp(total, *simd),
                        None => job.blend_layer_by_layer(reference, total),
                    }
                }
                for way in 1..ways.len() {
                    assert_eq!(
                        pose_bits(&outputs[way], &morphs[way]),
                        pose_bits(&outputs[0], &morphs[0]),
                        "{joints} joints, weights {weights:?}, {:?}",
                        ways[way]
                    );
                }
                assert_eq!(outputs[0][0].rotation, rest[0].rotation, "a zero rotation takes the rest's");
                if joints > 3 {
                    let opposite = outputs[0][joints - 1].rotation;
                    assert!((opposite.norm() - 1.0).abs() < 1e-5, "opposite rotations do not cancel");
                }
            }
        }
    }
}
