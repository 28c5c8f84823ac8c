//! Layers: a pose applied over another with a weight and a per-joint mask
//! (e.g. an upper-body gesture over locomotion, fading down the spine).
//!
//! Local poses only: it never samples a clip or works in model space, and
//! never allocates.
//!
//! - Override: each joint moves from the base towards the layer's transform
//!   by `weight * mask[j]` (translation and scale lerped, rotation
//!   normalised-lerped on the short arc).
//! - Additive: the layer is taken as its difference from a reference pose
//!   (`t - t_ref`, `r_ref^-1 * r`, `s / s_ref`, per joint, in local space)
//!   and that difference is added to the base by `weight * mask[j]`
//!   (`t + w dt`, `r * (identity towards dr by w)`, `s * (1 towards ds by w)`).
//!
//! A joint whose effective weight is 0 is not touched (bit for bit); at 1
//! the override is exactly the layer and the additive exactly the base
//! times the difference. Morph weights follow `weight` (no mask). The
//! additive layer runs eight joints per operation (`additive8`, AVX2
//! where the CPU has it), with the bits of the one-joint arithmetic.

mod additive8;

use super::job::{JobError, check_len};
use super::lanes8::Simd;
use super::transform::Transform;
use nalgebra::{Quaternion, UnitQuaternion};

/// A rotation sum shorter than this normalises to the pose below instead.
const MIN_ROTATION_NORM: f32 = 1e-12;

/// How a layer combines with the pose below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LayerMode {
    /// Replaces the pose, by weight.
    #[default]
    Override,
    /// Adds its difference from a reference pose.
    Additive,
}

/// Applies one layer onto `output` (the pose below it).
#[derive(Debug)]
pub struct LayerJob<'a> {
    /// How it combines.
    pub mode: LayerMode,
    /// The layer's local pose.
    pub layer: &'a [Transform],
    /// The layer's morph weights.
    pub layer_morph: &'a [f32],
    /// What the layer's difference is taken from (additive only; ignored
    /// for override, which may pass the layer itself).
    pub reference: &'a [Transform],
    /// The reference's morph weights.
    pub reference_morph: &'a [f32],
    /// Weight of each joint in [0, 1] (the mask).
    pub mask: &'a [f32],
    /// The layer's weight in [0, 1].
    pub weight: f32,
    /// The pose below, replaced by the result.
    pub output: &'a mut [Transform],
    /// Its morph weights, replaced by the result.
    pub morph_output: &'a mut [f32],
}

impl LayerJob<'_> {
    /// Checks lengths and weights.
    pub fn validate(&self) -> Result<(), JobError> {
        let n = self.output.len();
        check_len("layer: layer pose", self.layer.len(), n)?;
        check_len("layer: reference pose", self.reference.len(), n)?;
        check_len("layer: mask", self.mask.len(), n)?;
        let m = self.morph_output.len();
        check_len("layer: layer morph weights", self.layer_morph.len(), m)?;
        check_len("layer: reference morph weights", self.reference_morph.len(), m)?;
        // Counted, not searched: a count vectorises, and a layer checks its
        // whole mask on every run.
        let in_range = self.mask.iter().map(|&w| u32::from(w >= 0.0) & u32::from(w <= 1.0)).sum::<u32>();
        if !(0.0..=1.0).contains(&self.weight) || in_range as usize != self.mask.len() {
            return Err(JobError::new("layer: weights must be in [0, 1]"));
        }
        Ok(())
    }

    /// Validates, then applies the layer. Never allocates.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.run_with(Simd::detect())
    }

    /// `run` with the instructions `simd` names (the additive layer runs
    /// eight joints per operation, with the same bits as `additive_one`).
    fn run_with(&mut self, simd: Simd) -> Result<(), JobError> {
        self.validate()?;
        match self.mode {
            LayerMode::Additive => {
                additive8::apply(self.output, self.layer, self.reference, self.mask, self.weight, simd)
            }
            LayerMode::Override => {
                for (j, out) in self.output.iter_mut().enumerate() {
                    let w = self.weight * self.mask[j];
                    if w <= 0.0 {
                        continue;
                    }
                    let layer = &self.layer[j];
                    *out = if w >= 1.0 {
                        *layer
                    } else {
                        Transform {
                            translation: out.translation.lerp(&layer.translation, w),
                            rotation: nlerp(&out.rotation, &layer.rotation, w),
                            scale: out.scale.lerp(&layer.scale, w),
                        }
                    };
                }
            }
        }
        let w = self.weight;
        for ((out, layer), reference) in
            self.morph_output.iter_mut().zip(self.layer_morph).zip(self.reference_morph)
        {
            match self.mode {
                LayerMode::Override => *out += (layer - *out) * w,
                LayerMode::Additive => *out += (layer - reference) * w,
            }
        }
        Ok(())
    }
}

/// One joint of the additive layer at weight `w` > 0: what `additive8`
/// computes eight joints at a time (the reference it is tested against).
#[cfg(test)]
fn additive_one(out: &Transform, layer: &Transform, reference: &Transform, w: f32) -> Transform {
    let dt = layer.translation - reference.translation;
    let dr = reference.rotation.inverse() * layer.rotation;
    let ds = layer.scale.component_div(&reference.scale.map(|s| if s == 0.0 { 1.0 } else { s }));
    let turn = if w >= 1.0 { dr } else { nlerp(&UnitQuaternion::identity(), &dr, w) };
    Transform {
        translation: out.translation + dt * w,
        rotation: out.rotation * turn,
        scale: out.scale.component_mul(&nalgebra::Vector3::repeat(1.0).lerp(&ds, w)),
    }
}

/// `a` towards `b` by `t` on the short arc, normalised.
fn nlerp(a: &UnitQuaternion<f32>, b: &UnitQuaternion<f32>, t: f32) -> UnitQuaternion<f32> {
    let (qa, mut qb) = (a.into_inner(), b.into_inner());
    if qa.dot(&qb) < 0.0 {
        qb = -qb;
    }
    let q: Quaternion<f32> = qa * (1.0 - t) + qb * t;
    UnitQuaternion::try_new(q, MIN_ROTATION_NORM).unwrap_or(*a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Vector3;

    fn joint(x: f32, angle: f32, s: f32) -> Transform {
        Transform {
            translation: Vector3::new(x, 0.0, 0.0),
            rotation: UnitQuaternion::from_axis_angle(&Vector3::z_axis(), angle),
            scale: Vector3::repeat(s),
        }
    }

    fn apply(mode: LayerMode, mask: &[f32], weight: f32) -> (Vec<Transform>, Vec<f32>) {
        let mut base = vec![joint(1.0, 0.2, 1.0), joint(2.0, -0.4, 2.0), joint(3.0, 0.1, 1.0)];
        let layer = [joint(1.5, 0.7, 2.0), joint(2.5, 0.1, 4.0), joint(4.0, 0.5, 3.0)];
        let reference = [joint(1.0, 0.5, 1.0), joint(2.0, 0.0, 2.0), joint(3.0, 0.0, 1.0)];
        let mut morphs = vec![0.25];
        LayerJob {
            mode,
            layer: &layer,
            layer_morph: &[0.75],
            reference: &reference,
            reference_morph: &[0.5],
            mask,
            weight,
            output: &mut base,
            morph_output: &mut morphs,
        }
        .run()
        .unwrap();
        (base, morphs)
    }

    #[test]
    fn masked_out_joints_are_untouched_and_full_weight_is_exact() {
        let (base, _) = apply(LayerMode::Override, &[0.0, 0.0, 0.0], 1.0);
        assert_eq!(base[..], [joint(1.0, 0.2, 1.0), joint(2.0, -0.4, 2.0), joint(3.0, 0.1, 1.0)]);
        let (over, _) = apply(LayerMode::Override, &[0.0, 1.0, 0.5], 1.0);
        assert_eq!(over[0], joint(1.0, 0.2, 1.0), "mask 0: bit for bit");
        assert_eq!(over[1], joint(2.5, 0.1, 4.0), "override at 1: the layer itself");
        assert!((over[2].translation.x - 3.5).abs() < 1e-6 && (over[2].rotation.angle() - 0.3).abs() < 1e-3);
        let (add, morphs) = apply(LayerMode::Additive, &[1.0, 1.0, 0.0], 1.0);
        // Joint 0: +0.5 in x, the base turned by the layer's 0.2 rad over its reference, scale x2.
        assert!((add[0].translation.x - 1.5).abs() < 1e-6);
        assert!((add[0].rotation.angle() - 0.4).abs() < 1e-5, "{}", add[0].rotation.angle());
        assert!((add[0].scale.x - 2.0).abs() < 1e-6);
        assert!((add[1].rotation.angle() - 0.3).abs() < 1e-5, "{}", add[1].rotation.angle());
        assert_eq!(add[2], joint(3.0, 0.1, 1.0));
        assert!((morphs[0] - 0.5).abs() < 1e-6, "0.25 + (0.75 - 0.5)");
    }

    #[test]
    fn additive_groups_are_bit_for_bit_one_joint_at_a_time() {
        // 19 joints: two groups of eight and a last one overlapping the
        // second (and 5 joints: one padded group; none: morph weights
        // alone, the GPU-posed character's layer); masks of 0 (untouched),
        // partial and 1 (no normalisation), zero and negative reference
        // scales, rotations on both hemispheres.
        let mut rng = crate::testing::lcg::Lcg(7);
        let mut next = move || rng.between(-2.0, 2.0);
        let mut transform = |zero_scale: bool| {
            let q = Quaternion::new(next(), next(), next(), next());
            Transform {
                translation: Vector3::new(next(), next(), next()),
                rotation: UnitQuaternion::from_quaternion(q),
                scale: Vector3::new(if zero_scale { 0.0 } else { next() }, next(), next()),
            }
        };
        let n = 19;
        let base: Vec<Transform> = (0..n).map(|_| transform(false)).collect();
        let layer: Vec<Transform> = (0..n).map(|_| transform(false)).collect();
        let reference: Vec<Transform> = (0..n).map(|j| transform(j % 5 == 0)).collect();
        let mask: Vec<f32> = (0..n).map(|j| [0.0, 0.25, 1.0, 0.7][j % 4]).collect();
        let bits = |t: &[Transform]| -> Vec<u32> {
            t.iter()
                .flat_map(|t| t.translation.iter().chain(t.rotation.coords.iter()).chain(t.scale.iter()))
                .map(|v| v.to_bits())
                .collect()
        };
        for weight in [1.0, 0.6, 0.0] {
            let expected: Vec<Transform> = (0..n)
                .map(|j| {
                    let w = weight * mask[j];
                    if w <= 0.0 { base[j] } else { additive_one(&base[j], &layer[j], &reference[j], w) }
                })
                .collect();
            for (simd, joints) in
                Simd::available().into_iter().flat_map(|s| [(s, 0..n), (s, 3..8), (s, 0..0)])
            {
                let mut out = base[joints.clone()].to_vec();
                let mut job = LayerJob {
                    mode: LayerMode::Additive,
                    layer: &layer[joints.clone()],
                    layer_morph: &[],
                    reference: &reference[joints.clone()],
                    reference_morph: &[],
                    mask: &mask[joints.clone()],
                    weight,
                    output: &mut out,
                    morph_output: &mut [],
                };
                job.run_with(simd).unwrap();
                assert_eq!(
                    bits(&out),
                    bits(&expected[joints.clone()]),
                    "weight {weight}, {simd:?}, {joints:?}"
                );
            }
        }
    }

    #[test]
    fn partial_weights_scale_the_effect() {
        let (half, morphs) = apply(LayerMode::Additive, &[1.0, 0.5, 1.0], 0.5);
        assert!((half[0].translation.x - 1.25).abs() < 1e-6);
        assert!((half[0].rotation.angle() - 0.3).abs() < 1e-3);
        assert!((half[1].translation.x - 2.125).abs() < 1e-6, "weight 0.5 x mask 0.5");
        assert!((morphs[0] - 0.375).abs() < 1e-6);
        let (_, over) = apply(LayerMode::Override, &[1.0; 3], 0.5);
        assert!((over[0] - 0.5).abs() < 1e-6);
    }

    #[test]
    fn rejects_bad_weights_and_lengths() {
        let bad_masks = [[1.0, -0.5], [1.0, 1.5], [1.0, f32::NAN]];
        let pose = [Transform::IDENTITY; 2];
        let mut out = [Transform::IDENTITY; 2];
        let mut job = LayerJob {
            mode: LayerMode::Override,
            layer: &pose,
            layer_morph: &[],
            reference: &pose,
            reference_morph: &[],
            mask: &[1.0, 2.0],
            weight: 1.0,
            output: &mut out,
            morph_output: &mut [],
        };
        assert!(job.run().is_err());
        job.mask = &[1.0];
        assert!(job.run().is_err());
        for mask in &bad_masks {
            job.mask = mask;
            assert!(job.run().is_err(), "mask {mask:?}");
        }
        job.mask = &[1.0, 1.0];
        job.weight = f32::NAN;
        assert!(job.run().is_err());
        job.weight = 1.0;
        assert!(job.run().is_ok());
        // A NaN anywhere in a longer mask.
        let (pose, mut out) = ([Transform::IDENTITY; 19], [Transform::IDENTITY; 19]);
        for j in 0..19 {
            let mut mask = [0.5; 19];
            mask[j] = f32::NAN;
            let job = LayerJob {
                mode: LayerMode::Additive,
                layer: &pose,
                layer_morph: &[],
                reference: &pose,
                reference_morph: &[],
                mask: &mask,
                weight: 1.0,
                output: &mut out,
                morph_output: &mut [],
            };
            assert!(job.validate().is_err(), "NaN at joint {j}");
        }
    }
}
