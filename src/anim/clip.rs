//! Animation clips: typed keyframe tracks per joint, morph-weight tracks and events.
//!
//! Plain data, shared immutable by every character: nothing here samples a
//! track or checks it against a skeleton (see `sampling` and `runtime_clip`).

use nalgebra::{Quaternion, Vector3};

/// How values between two keys are computed (the glTF sampler kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interpolation {
    /// Hold the previous key's value.
    Step,
    /// Linear; spherical linear for rotations.
    Linear,
    /// Cubic Hermite spline with per-key in and out tangents.
    CubicSpline,
}

impl Interpolation {
    /// The glTF spelling.
    pub fn name(self) -> &'static str {
        match self {
            Interpolation::Step => "STEP",
            Interpolation::Linear => "LINEAR",
            Interpolation::CubicSpline => "CUBICSPLINE",
        }
    }
}

/// Keyframes of one property.
///
/// `times` strictly increase. For `Step` and `Linear`, `values[k]` belongs to
/// `times[k]`. For `CubicSpline`, `values` holds three entries per key:
/// `[in_tangent, value, out_tangent]`, as in a glTF sampler's output.
#[derive(Debug, Clone, PartialEq)]
pub struct Track<T> {
    /// Key times in seconds, strictly increasing, at least one.
    pub times: Vec<f32>,
    /// Key values (three per key for cubic splines).
    pub values: Vec<T>,
    /// Interpolation between keys.
    pub interpolation: Interpolation,
}

impl<T> Track<T> {
    /// Number of values one key holds.
    pub fn values_per_key(&self) -> usize {
        if self.interpolation == Interpolation::CubicSpline { 3 } else { 1 }
    }
    /// Time of the first key.
    pub fn start(&self) -> f32 {
        self.times.first().copied().unwrap_or(0.0)
    }
    /// Time of the last key.
    pub fn end(&self) -> f32 {
        self.times.last().copied().unwrap_or(0.0)
    }
}

/// Translation track.
pub type TranslationTrack = Track<Vector3<f32>>;
/// Rotation track; quaternions need not be normalised (sampling normalises).
pub type RotationTrack = Track<Quaternion<f32>>;
/// Scale track.
pub type ScaleTrack = Track<Vector3<f32>>;

/// The tracks that animate one skeleton joint; a missing track means the
/// joint keeps its rest value for that property.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JointTracks {
    /// Skeleton joint index.
    pub joint: u32,
    /// Translation keys.
    pub translation: Option<TranslationTrack>,
    /// Rotation keys.
    pub rotation: Option<RotationTrack>,
    /// Scale keys.
    pub scale: Option<ScaleTrack>,
}

/// Keys for a run of morph-target weights (one mesh instance's targets).
///
/// `values` holds `count` weights per key (times three for cubic splines:
/// in-tangents, values, out-tangents, each `count` long), as in glTF.
#[derive(Debug, Clone, PartialEq)]
pub struct MorphWeightTrack {
    /// First written slot in the character's flat morph-weight array.
    pub offset: u32,
    /// Number of weights per key.
    pub count: u32,
    /// Key times, strictly increasing.
    pub times: Vec<f32>,
    /// Weights, `count` (or `3 * count` for cubic) per key.
    pub values: Vec<f32>,
    /// Interpolation between keys.
    pub interpolation: Interpolation,
}

/// A named marker on the clip's timeline (e.g. a footstep).
#[derive(Debug, Clone, PartialEq)]
pub struct ClipEvent {
    /// Time in seconds on the clip's timeline.
    pub time: f32,
    /// What happens.
    pub name: String,
}

/// An animation clip: immutable, shareable between characters that use the
/// same skeleton layout.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Clip {
    /// Name; glTF allows unnamed clips.
    pub name: Option<String>,
    /// Loop period in seconds: the latest key time of any track. Time is not
    /// shifted: a clip whose keys run 0.04..2.0 s has duration 2.0 and is
    /// clamped to its first key before 0.04.
    pub duration: f32,
    /// Joint tracks, at most one entry per joint.
    pub joint_tracks: Vec<JointTracks>,
    /// Morph-weight tracks.
    pub morph_tracks: Vec<MorphWeightTrack>,
    /// Events sorted by time.
    pub events: Vec<ClipEvent>,
}

impl Clip {
    /// Number of scalar tracks a sampling cursor needs one slot for: three
    /// per joint entry (T, R, S) plus one per morph track.
    pub fn cursor_slots(&self) -> usize {
        self.joint_tracks.len() * 3 + self.morph_tracks.len()
    }

    /// Earliest key time of any track.
    pub fn start(&self) -> f32 {
        let joints = self.joint_tracks.iter().flat_map(|j| {
            [
                j.translation.as_ref().map(|t| t.start()),
                j.rotation.as_ref().map(|t| t.start()),
                j.scale.as_ref().map(|t| t.start()),
            ]
        });
        let morphs = self.morph_tracks.iter().map(|m| m.times.first().copied());
        joints.chain(morphs).flatten().fold(f32::INFINITY, f32::min).min(self.duration)
    }

    /// Recomputes `duration` from the tracks' last keys.
    pub fn update_duration(&mut self) {
        let joints = self.joint_tracks.iter().flat_map(|j| {
            [
                j.translation.as_ref().map(|t| t.end()),
                j.rotation.as_ref().map(|t| t.end()),
                j.scale.as_ref().map(|t| t.end()),
            ]
        });
        let morphs = self.morph_tracks.iter().map(|m| m.times.last().copied());
        self.duration = joints.chain(morphs).flatten().fold(0.0, f32::max);
    }
}

#[cfg(test)]
mod tests {
    use super::Interpolation;

    #[test]
    fn interpolation_names_are_the_gltf_spellings() {
        // `inspect` prints these and users match them against the glTF file.
        assert_eq!(Interpolation::Step.name(), "STEP");
        assert_eq!(Interpolation::Linear.name(), "LINEAR");
        assert_eq!(Interpolation::CubicSpline.name(), "CUBICSPLINE");
    }
}
