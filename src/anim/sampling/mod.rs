//! Sampling: evaluates a clip's tracks at one time into a local pose.
//!
//! This is the reference sampler, glTF-exact: the runtime samplers
//! ([`SampleClipJob`](super::SampleClipJob) and the compressed one) are
//! measured against it. It never allocates and keeps no per-character
//! state itself: the caller owns the cursor and the output buffers.
//!
//! Key lookup keeps a per-track cursor (the last interval used) so that forward
//! playback costs O(1) per track; any other jump falls back to a binary search.
//! The cursor is only a hint: results never depend on it.
//!
//! - `cursor`: the per-character key cursor and the interval lookup.
//! - `tracks`: one track at one time (step, lerp, slerp or nlerp, cubic).
//! - `check`: the shape checks every sampler makes on a clip.

mod check;
mod cursor;
mod tracks;

pub use cursor::SamplingCursor;

pub(crate) use check::check_clip;
pub(crate) use tracks::{sample_morph_tracks, sample_rotation, sample_vector};

use super::clip::{Clip, JointTracks};
use super::job::{JobError, check_len};
use super::transform::Transform;

/// How `Linear` rotation keys are interpolated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RotationBlend {
    /// Spherical linear interpolation, exactly as glTF specifies.
    #[default]
    Slerp,
    /// Normalised linear interpolation (after the same hemisphere check):
    /// cheaper, constant-speed only approximately. For keys whose rotations
    /// differ by an angle `theta`, the largest angular error against slerp is
    /// `theta^3 / 249` radians for small angles (`theta^3 / (144 sqrt 3)`),
    /// growing to `theta^3 / 218` at 180 degrees, and is reached near
    /// `s = 0.22` and `s = 0.78`. Measured: 0.00058 rad for keys 30 degrees
    /// apart, 0.0160 rad (0.92 degrees) for 90 degrees, 0.142 rad for 180
    /// degrees (see the `nlerp_error_bound` test).
    Nlerp,
}

/// Samples every track of `clip` at `time` into `output` / `morph_output`.
///
/// Joints and properties without a track take their values from `rest` and
/// `rest_morph_weights`.
#[derive(Debug)]
pub struct SampleJob<'a> {
    /// The clip to sample.
    pub clip: &'a Clip,
    /// Seconds on the clip's own timeline; clamped to each track's first and
    /// last key. NaN is rejected.
    pub time: f64,
    /// Rest transform per skeleton joint.
    pub rest: &'a [Transform],
    /// Rest weight per morph slot.
    pub rest_morph_weights: &'a [f32],
    /// How `Linear` rotation keys are interpolated.
    pub rotation_blend: RotationBlend,
    /// Cached key intervals; must have been made for a clip with the same
    /// track layout (validate checks the slot count).
    pub cursor: &'a mut SamplingCursor,
    /// Sampled local transforms, as long as `rest`.
    pub output: &'a mut [Transform],
    /// Sampled morph weights, as long as `rest_morph_weights`.
    pub morph_output: &'a mut [f32],
}

impl SampleJob<'_> {
    /// Checks slice lengths, joint indices, morph ranges, key counts and the
    /// cursor's slot count.
    pub fn validate(&self) -> Result<(), JobError> {
        if self.time.is_nan() {
            return Err(JobError::new("sample: time is NaN"));
        }
        check_len("sample: output", self.output.len(), self.rest.len())?;
        check_len("sample: morph_output", self.morph_output.len(), self.rest_morph_weights.len())?;
        let slots = self.clip.cursor_slots();
        check_len("sample: cursor slots (cursor made for another clip?)", self.cursor.slots(), slots)?;
        check_clip("sample", self.clip, self.rest.len(), self.rest_morph_weights.len())
    }

    /// Validates, then samples. Never allocates.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        self.output.copy_from_slice(self.rest);
        self.morph_output.copy_from_slice(self.rest_morph_weights);
        let t = self.time;
        let keys = &mut self.cursor.keys;
        for (i, jt) in self.clip.joint_tracks.iter().enumerate() {
            let j = jt.joint as usize;
            let cursor = &mut keys[3 * i..3 * i + 3];
            sample_joint_into(jt, t, &self.rest[j], self.rotation_blend, cursor, &mut self.output[j]);
        }
        let base = 3 * self.clip.joint_tracks.len();
        sample_morph_tracks(&self.clip.morph_tracks, t, &mut keys[base..], self.morph_output);
        Ok(())
    }
}

/// Samples one joint's tracks at `time` (seconds on the clip's timeline),
/// properties without a track taking `rest`'s values: what `SampleJob` does
/// for each joint, for callers that need one joint (root motion). Never
/// allocates; the tracks must be well formed (see `SampleJob::validate`).
pub fn sample_joint(
    tracks: &JointTracks,
    time: f64,
    rest: &Transform,
    rotation_blend: RotationBlend,
) -> Transform {
    let mut out = *rest;
    sample_joint_into(tracks, time, rest, rotation_blend, &mut [0; 3], &mut out);
    out
}

/// Samples only the morph-weight tracks of `clip` at `time` into `out`,
/// weights without a track taking `rest_morph_weights`' values: what
/// `SampleJob` writes into its morph output, for callers whose joints are
/// posed elsewhere (the GPU). Never allocates; the clip must be well
/// formed for `out` (see `SampleJob::validate`).
pub fn sample_morph_weights(clip: &Clip, time: f64, rest_morph_weights: &[f32], out: &mut [f32]) {
    out.copy_from_slice(rest_morph_weights);
    for track in &clip.morph_tracks {
        // No cursor: a binary search per track (morph tracks are few).
        sample_morph_tracks(std::slice::from_ref(track), time, &mut [0], out);
    }
}

/// Samples `jt` at `t` into `out`; `cursor` holds its T, R and S key hints.
#[inline]
fn sample_joint_into(
    jt: &JointTracks,
    t: f64,
    rest: &Transform,
    rotation_blend: RotationBlend,
    cursor: &mut [u32],
    out: &mut Transform,
) {
    if let Some(tr) = &jt.translation {
        out.translation = sample_vector(tr, t, &mut cursor[0]);
    }
    if let Some(tr) = &jt.rotation {
        out.rotation = sample_rotation(tr, t, rotation_blend, rest.rotation, &mut cursor[1]);
    }
    if let Some(tr) = &jt.scale {
        out.scale = sample_vector(tr, t, &mut cursor[2]);
    }
}

#[cfg(test)]
mod tests;
