//! Blending: combines several local poses into one.

use super::job::{JobError, check_len};
use super::sampling::{normalize_or, slerp};
use super::transform::Transform;
use nalgebra::{Quaternion, Vector3};

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
/// Translations, scales and morph weights are weighted sums; rotations are a
/// weighted quaternion sum, each flipped into the hemisphere of the first
/// layer with a non-zero weight, then normalised. When every weight is zero
/// (or there are no layers) the output is the rest pose.
#[derive(Debug)]
pub struct BlendJob<'a> {
    /// Input poses.
    pub layers: &'a [BlendLayer<'a>],
    /// Rest pose, the result when nothing has weight.
    pub rest: &'a [Transform],
    /// Rest morph weights.
    pub rest_morph_weights: &'a [f32],
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
        for (j, out) in self.output.iter_mut().enumerate() {
            let r0 = reference.locals[j].rotation.into_inner();
            let mut t = Vector3::zeros();
            let mut s = Vector3::zeros();
            let mut r = Quaternion::new(0.0, 0.0, 0.0, 0.0);
            for l in self.layers.iter().filter(|l| l.weight > 0.0) {
                // Divide rather than multiply by 1 / total: a denormal total has no finite inverse.
                let w = l.weight / total;
                let x = &l.locals[j];
                t += x.translation * w;
                s += x.scale * w;
                let q = x.rotation.into_inner();
                r += if q.dot(&r0) < 0.0 { q * -w } else { q * w };
            }
            *out = Transform { translation: t, rotation: normalize_or(r, self.rest[j].rotation), scale: s };
        }
        for (m, out) in self.morph_output.iter_mut().enumerate() {
            *out = self.layers.iter().map(|l| l.morph_weights[m] * (l.weight / total)).sum();
        }
        Ok(())
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
        let mut out = vec![Transform::IDENTITY; rest.len()];
        let mut out_w = vec![0.0; rest_w.len()];
        BlendJob { layers, rest, rest_morph_weights: rest_w, output: &mut out, morph_output: &mut out_w }
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
}
