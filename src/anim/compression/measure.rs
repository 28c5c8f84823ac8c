//! Measuring a compressed clip: the exact clip sampled by `SampleJob` with
//! the reference rotation blend, the compressed one by the runtime
//! sampler, and the object-space errors between them on a grid of times.
//!
//! It only measures: it never changes a track or decides what to keep.

use super::{CompressedClip, CompressedCursor, CompressedSampleJob, ErrorMetric};
use crate::anim::{Clip, JobError, RotationBlend, SampleJob, SamplingCursor, Transform};
use nalgebra::Matrix4;

/// The exact clip's local pose and morph weights at one time: `SampleJob`
/// with the reference rotation blend (the reference for the error).
pub(super) struct Exact<'a> {
    clip: &'a Clip,
    rest: &'a [Transform],
    reference: RotationBlend,
    cursor: SamplingCursor,
    /// 0 in every slot: slots no track writes stay 0 in `weights`.
    rest_weights: Vec<f32>,
    pub(super) locals: Vec<Transform>,
    pub(super) weights: Vec<f32>,
}

impl<'a> Exact<'a> {
    pub(super) fn new(clip: &'a Clip, rest: &'a [Transform], reference: RotationBlend, slots: usize) -> Self {
        Exact {
            clip,
            rest,
            reference,
            cursor: SamplingCursor::new(clip),
            rest_weights: vec![0.0; slots],
            locals: rest.to_vec(),
            weights: vec![0.0; slots],
        }
    }

    /// `locals` and `weights` at `t`.
    pub(super) fn sample(&mut self, t: f64) -> Result<(), JobError> {
        SampleJob {
            clip: self.clip,
            time: t,
            rest: self.rest,
            rest_morph_weights: &self.rest_weights,
            rotation_blend: self.reference,
            cursor: &mut self.cursor,
            output: &mut self.locals,
            morph_output: &mut self.weights,
        }
        .run()
    }
}

/// Buffers for measuring a compressed clip against the exact poses and weights.
pub(super) struct Measure {
    locals: Vec<Transform>,
    weights: Vec<f32>,
    expected: Vec<Matrix4<f64>>,
    actual: Vec<Matrix4<f64>>,
    errors: Vec<f64>,
    /// Largest virtual-vertex error of each joint.
    pub(super) joint_max: Vec<f64>,
    /// Object-space movement per unit of error of each morph weight.
    weight_scale: Vec<f64>,
    /// Largest object-space error of each morph weight.
    pub(super) weight_max: Vec<f64>,
}

impl Measure {
    pub(super) fn new(joints: usize, weight_scale: &[f64]) -> Self {
        Measure {
            locals: vec![Transform::IDENTITY; joints],
            weights: vec![0.0; weight_scale.len()],
            expected: vec![Matrix4::identity(); joints],
            actual: vec![Matrix4::identity(); joints],
            errors: vec![0.0; joints],
            joint_max: vec![0.0; joints],
            weight_scale: weight_scale.to_vec(),
            weight_max: vec![0.0; weight_scale.len()],
        }
    }

    /// Samples `clip` with the runtime sampler at every grid time; returns
    /// the largest and the mean error in object space against `exact`:
    /// virtual-vertex errors, and weight errors times their scales (per
    /// joint and per weight maxima in `joint_max` and `weight_max`). Slots
    /// no track writes keep their rest weight, 0 here and in `exact`.
    pub(super) fn run(
        &mut self,
        clip: &CompressedClip,
        metric: &ErrorMetric,
        rest: &[Transform],
        grid: &[f64],
        exact: &mut Exact,
    ) -> Result<(f64, f64), JobError> {
        let rest_weights = vec![0.0; self.weights.len()];
        self.joint_max.fill(0.0);
        self.weight_max.fill(0.0);
        let mut cursor = CompressedCursor::new(clip);
        let (mut max, mut sum) = (0.0f64, 0.0f64);
        for &t in grid {
            exact.sample(t)?;
            CompressedSampleJob {
                clip,
                time: t,
                rest,
                rest_morph_weights: &rest_weights,
                cursor: &mut cursor,
                output: &mut self.locals,
                morph_output: &mut self.weights,
            }
            .run()?;
            metric.world(&exact.locals, &mut self.expected);
            metric.world(&self.locals, &mut self.actual);
            metric.vertex_errors(&self.expected, &self.actual, &mut self.errors);
            for (m, &e) in self.joint_max.iter_mut().zip(&self.errors) {
                *m = m.max(e);
                max = max.max(e);
                sum += e;
            }
            for (s, m) in self.weight_max.iter_mut().enumerate() {
                let e = f64::from((self.weights[s] - exact.weights[s]).abs()) * self.weight_scale[s];
                *m = m.max(e);
                max = max.max(e);
                sum += e;
            }
        }
        let count = (grid.len() * (self.errors.len() + self.weights.len())).max(1);
        Ok((max, sum / count as f64))
    }
}
