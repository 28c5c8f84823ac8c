//! Posing on the GPU, as plain data: a [`PoseProgram`] is everything about a
//! rig and its layer setup that shaders/pose.comp needs to sample, blend,
//! layer and accumulate a pose (clips, rest pose, hierarchy by depth,
//! layer masks and additive references, the root-motion joint), flattened
//! into 32-bit words uploaded once; a [`PosePlayback`] is what one
//! character sends each frame instead of its palette (each sampled clip's
//! time, weight and layer, and each layer's weight: the `clips` and
//! `layers` of a trace line, a few dozen bytes).
//!
//! The shader applies the formula of the guide's "Rebuilding a pose" page
//! (src/guide/pose_rebuild.md) to the clips' own keys, so a GPU pose
//! matches the CPU one within float rounding. This file only lays data
//! out: it never samples, blends or touches a device.

use super::clip::{Clip, Interpolation};
use super::job::JobError;
use super::layering::LayerMode;
use super::rig::Rig;
use super::sampling::RotationBlend;
use super::skeleton::NO_PARENT;
use super::transform::Transform;

/// The most skeleton joints a GPU-posed rig may have: the shader keeps one
/// 3x4 matrix per joint in workgroup memory (48 bytes each, 12 KiB at 256:
/// within the 16 KiB every Vulkan device offers).
pub const MAX_POSE_JOINTS: usize = 256;

/// The most layers (the base included) a GPU pose applies.
pub const MAX_POSE_LAYERS: usize = 16;

/// "None" in a word table (no track, no mask, no parent).
pub const NO_WORD: u32 = u32::MAX;

/// Words of the program header (shaders/pose.comp's `H_*` indices).
const HEADER_WORDS: usize = 16;

/// One clip sampled for a character's pose: what shaders/pose.comp reads
/// per clip, 16 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct PlaybackEntry {
    /// Rig clip index.
    pub clip: u32,
    /// Sample time on the clip's timeline, already wrapped or clamped.
    pub time: f32,
    /// Weight within its layer (the layer's blend normalises them).
    pub weight: f32,
    /// 0: the base (state machine) layer; `i + 1`: controller layer `i`.
    pub layer: u32,
}

/// One character's playback for a GPU pose: its sampled clips in
/// evaluation order (layer by layer, so a layer's first entry is its
/// hemisphere reference) and each controller layer's weight.
#[derive(Debug, Clone, Copy)]
pub struct PosePlayback<'a> {
    /// The program the character is posed with.
    pub program: &'a PoseProgram,
    /// Clips with weight, in evaluation order.
    pub entries: &'a [PlaybackEntry],
    /// Weight in [0, 1] of each controller layer (0: not applied).
    pub layer_weights: &'a [f32],
}

impl PosePlayback<'_> {
    /// Bytes the character's playback takes in a frame's upload (the
    /// per-character record besides: see the skin pass).
    pub fn bytes(&self) -> u64 {
        (std::mem::size_of_val(self.entries) + std::mem::size_of_val(self.layer_weights)) as u64
    }
}

/// A layer as the program applies it.
#[derive(Debug, Clone, Copy)]
pub struct PoseLayerSetup<'a> {
    /// Override or additive.
    pub mode: LayerMode,
    /// Mask weight per skeleton joint (all 1: no mask).
    pub mask: &'a [f32],
    /// The additive reference pose (one local per joint; ignored for override).
    pub reference: &'a [Transform],
}

/// A rig and its layers flattened for shaders/pose.comp (see the module
/// documentation). Word layout, every offset in words from the start:
///
/// ```text
/// header (16): joints, levels, clips, layers, root_joint, nlerp,
///              parents@, rest@, levels@, order@, clip_tracks@, tracks@, layers@, 0, 0, 0
/// parents:     joints words (NO_WORD for a root)
/// rest:        10 floats per joint: translation xyz, rotation xyzw, scale xyz
/// levels:      levels + 1 words: where each depth starts in `order`
/// order:       joints sorted by depth (parents before children)
/// clip_tracks: 3 words per clip and joint: its T, R, S track (NO_WORD: rest)
/// tracks:      4 words per track: times@, values@, keys, interpolation (0 step, 1 linear, 2 cubic)
/// layers:      4 words per controller layer: mode (0 override, 1 additive), mask@, reference@, 0
/// data:        key times and values (f32), masks (f32 per joint), references (10 floats per joint)
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct PoseProgram {
    words: Vec<u32>,
    joints: usize,
    layers: usize,
    max_entries: usize,
}

impl PoseProgram {
    /// The program of `rig`'s clips (their own keys: a GPU pose never
    /// samples a compressed form) with `layers` over the base, root motion
    /// taken out at `root_motion_joint`, LINEAR rotation keys interpolated
    /// as `rotation_blend` says, for characters that sample at most
    /// `max_entries` clips at once. Refuses rigs of more than
    /// [`MAX_POSE_JOINTS`] joints and more than [`MAX_POSE_LAYERS`] layers.
    pub fn new(
        rig: &Rig,
        max_entries: usize,
        layers: &[PoseLayerSetup],
        root_motion_joint: Option<u32>,
        rotation_blend: RotationBlend,
    ) -> Result<Self, JobError> {
        let joints = rig.skeleton.len();
        if joints > MAX_POSE_JOINTS {
            return Err(JobError::new(format!(
                "GPU pose: the skeleton has {joints} joints, at most {MAX_POSE_JOINTS} can be posed on the GPU"
            )));
        }
        if layers.len() + 1 > MAX_POSE_LAYERS {
            return Err(JobError::new(format!(
                "GPU pose: {} layers, at most {} besides the base",
                layers.len(),
                MAX_POSE_LAYERS - 1
            )));
        }
        if let Some(j) = root_motion_joint.filter(|&j| j as usize >= joints) {
            return Err(JobError::new(format!("GPU pose: root motion joint {j} of {joints}")));
        }
        for (i, layer) in layers.iter().enumerate() {
            if layer.mask.len() != joints
                || (layer.mode == LayerMode::Additive && layer.reference.len() != joints)
            {
                return Err(JobError::new(format!("GPU pose: layer {i} is not sized for {joints} joints")));
            }
        }
        let mut w = Words(vec![0; HEADER_WORDS]);
        let parents = rig.skeleton.parents();
        w.set(0, joints);
        w.set(2, rig.clips.len());
        w.set(3, layers.len());
        w.0[4] = root_motion_joint.unwrap_or(NO_WORD);
        w.set(5, usize::from(rotation_blend == RotationBlend::Nlerp));

        w.mark(6);
        w.0.extend(parents.iter().map(|&p| if p == NO_PARENT { NO_WORD } else { p }));
        w.mark(7);
        for rest in rig.skeleton.rest() {
            w.transform(rest);
        }
        // Depth levels: a joint's world matrix needs its parent's first.
        let mut depth = vec![0usize; joints];
        for j in 0..joints {
            if let Some(&d) = depth.get(parents[j] as usize) {
                depth[j] = d + 1;
            }
        }
        let levels = depth.iter().max().map_or(0, |d| d + 1);
        w.set(1, levels);
        w.mark(8);
        let mut order: Vec<u32> = (0..joints as u32).collect();
        order.sort_by_key(|&j| depth[j as usize]);
        let mut start = 0;
        for level in 0..=levels {
            while start < joints && depth[order[start] as usize] < level {
                start += 1;
            }
            w.0.push(start as u32);
        }
        w.mark(9);
        w.0.extend(&order);

        // Track tables, then the key data they point at.
        w.mark(10);
        let table = w.0.len();
        w.0.resize(table + 3 * rig.clips.len() * joints, NO_WORD);
        w.mark(11);
        let track_table = w.0.len();
        let mut tracks = 0usize;
        for (c, clip) in rig.clips.iter().enumerate() {
            for jt in &clip.joint_tracks {
                let j = jt.joint as usize;
                if j >= joints {
                    return Err(JobError::new(format!("GPU pose: clip {c} animates joint {j} of {joints}")));
                }
                let base = table + 3 * (c * joints + j);
                let present = [jt.translation.is_some(), jt.rotation.is_some(), jt.scale.is_some()];
                for (k, _) in present.iter().enumerate().filter(|(_, p)| **p) {
                    w.0[base + k] = tracks as u32;
                    tracks += 1;
                }
            }
        }
        w.0.resize(track_table + 4 * tracks, 0);
        w.mark(12);
        let layer_table = w.0.len();
        w.0.resize(layer_table + 4 * layers.len(), 0);
        let mut t = 0;
        for clip in rig.clips.iter() {
            for_each_track(clip, |times, values, interpolation| {
                let row = track_table + 4 * t;
                w.0[row] = w.0.len() as u32;
                w.0.extend(times.iter().map(|x| x.to_bits()));
                w.0[row + 1] = w.0.len() as u32;
                w.0.extend(values.iter().map(|x| x.to_bits()));
                w.0[row + 2] = times.len() as u32;
                w.0[row + 3] = match interpolation {
                    Interpolation::Step => 0,
                    Interpolation::Linear => 1,
                    Interpolation::CubicSpline => 2,
                };
                t += 1;
            });
        }
        debug_assert_eq!(t, tracks);
        for (i, layer) in layers.iter().enumerate() {
            let row = layer_table + 4 * i;
            w.0[row] = u32::from(layer.mode == LayerMode::Additive);
            w.0[row + 1] = w.0.len() as u32;
            w.0.extend(layer.mask.iter().map(|m| m.to_bits()));
            w.0[row + 2] = NO_WORD;
            if layer.mode == LayerMode::Additive {
                w.0[row + 2] = w.0.len() as u32;
                for reference in layer.reference {
                    w.transform(reference);
                }
            }
        }
        Ok(PoseProgram { words: w.0, joints, layers: layers.len(), max_entries })
    }

    /// The words to upload.
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// Skeleton joints posed.
    pub fn joints(&self) -> usize {
        self.joints
    }

    /// Controller layers (besides the base).
    pub fn layers(&self) -> usize {
        self.layers
    }

    /// Most clips one character samples at once.
    pub fn max_entries(&self) -> usize {
        self.max_entries
    }
}

/// The word buffer under construction.
struct Words(Vec<u32>);

impl Words {
    fn set(&mut self, header: usize, value: usize) {
        self.0[header] = value as u32;
    }
    /// Header word `header` points at the next word.
    fn mark(&mut self, header: usize) {
        self.0[header] = self.0.len() as u32;
    }
    /// 10 floats: translation, rotation (xyzw), scale.
    fn transform(&mut self, t: &Transform) {
        let q = t.rotation.quaternion().coords;
        let floats = [t.translation.x, t.translation.y, t.translation.z, q.x, q.y, q.z, q.w];
        self.0.extend(floats.iter().chain(t.scale.iter()).map(|x| x.to_bits()));
    }
}

/// Calls `f(times, flat values, interpolation)` for every joint track of
/// `clip`, in the order `PoseProgram::new` numbers them (joint entries in
/// order, then T, R, S). Rotations as xyzw, vectors as xyz.
fn for_each_track(clip: &Clip, mut f: impl FnMut(&[f32], &[f32], Interpolation)) {
    let mut flat: Vec<f32> = Vec::new();
    for jt in &clip.joint_tracks {
        if let Some(t) = &jt.translation {
            flat.clear();
            flat.extend(t.values.iter().flat_map(|v| [v.x, v.y, v.z]));
            f(&t.times, &flat, t.interpolation);
        }
        if let Some(t) = &jt.rotation {
            flat.clear();
            flat.extend(t.values.iter().flat_map(|q| [q.i, q.j, q.k, q.w]));
            f(&t.times, &flat, t.interpolation);
        }
        if let Some(t) = &jt.scale {
            flat.clear();
            flat.extend(t.values.iter().flat_map(|v| [v.x, v.y, v.z]));
            f(&t.times, &flat, t.interpolation);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{JointTracks, Skeleton, Track};
    use nalgebra::{Quaternion, Vector3};
    use std::sync::Arc;

    fn two_joint_rig() -> Rig {
        let skeleton = Skeleton::new(
            vec!["root".into(), "child".into()],
            vec![NO_PARENT, 0],
            vec![Transform::IDENTITY; 2],
        )
        .unwrap();
        let track = |times: Vec<f32>, values| Track { times, values, interpolation: Interpolation::Linear };
        let clip = Clip {
            name: Some("c".into()),
            duration: 1.0,
            joint_tracks: vec![JointTracks {
                joint: 1,
                translation: Some(track(vec![0.0, 1.0], vec![Vector3::zeros(), Vector3::x()])),
                rotation: Some(Track {
                    times: vec![0.5],
                    values: vec![Quaternion::new(1.0, 0.0, 0.0, 0.0)],
                    interpolation: Interpolation::Step,
                }),
                scale: None,
            }],
            morph_tracks: vec![],
            events: vec![],
        };
        Rig::new(Arc::new(skeleton), vec![], vec![], vec![], vec![Arc::new(clip)], vec![]).unwrap()
    }

    #[test]
    fn tables_point_at_the_keys() {
        let rig = two_joint_rig();
        let program = PoseProgram::new(&rig, 1, &[], Some(0), RotationBlend::Nlerp).unwrap();
        let w = program.words();
        assert_eq!(&w[..6], &[2, 2, 1, 0, 0, 1]);
        assert_eq!(&w[w[6] as usize..][..2], &[NO_WORD, 0]);
        // Levels: root at depth 0, child at 1.
        assert_eq!(&w[w[8] as usize..][..3], &[0, 1, 2]);
        let table = &w[w[10] as usize..][..6];
        // Joint 0 has no track; joint 1 has T (track 0) and R (track 1), no S.
        assert_eq!(table, &[NO_WORD, NO_WORD, NO_WORD, 0, 1, NO_WORD]);
        let tracks = w[11] as usize;
        let (times, values, keys, interpolation) =
            (w[tracks] as usize, w[tracks + 1] as usize, w[tracks + 2], w[tracks + 3]);
        assert_eq!((keys, interpolation), (2, 1));
        assert_eq!(f32::from_bits(w[times + 1]), 1.0);
        assert_eq!(f32::from_bits(w[values + 3]), 1.0, "the second key's x");
        let rotation = tracks + 4;
        assert_eq!((w[rotation + 2], w[rotation + 3]), (1, 0));
        assert_eq!(f32::from_bits(w[w[rotation + 1] as usize + 3]), 1.0, "w last");
    }

    #[test]
    fn refuses_what_the_shader_cannot_hold() {
        let rig = two_joint_rig();
        assert!(PoseProgram::new(&rig, 1, &[], Some(2), RotationBlend::Slerp).is_err());
        let mask = [1.0];
        let layer = PoseLayerSetup { mode: LayerMode::Override, mask: &mask, reference: &[] };
        let e = PoseProgram::new(&rig, 1, &[layer], None, RotationBlend::Slerp).unwrap_err();
        assert!(e.to_string().contains("layer 0"), "{e}");
    }
}
