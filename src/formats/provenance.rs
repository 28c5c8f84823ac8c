//! The `clips` and `layers` fields of the `simulate` trace and of
//! `dump --controller` (DESIGN.md's contract): what produced a character's
//! pose, written so that an outside program can rebuild the local pose
//! from the model file alone (the formula is in the `controllers` guide
//! page, "Rebuilding a pose").

use crate::asset::Model;
use crate::character::Character;
use serde::Serialize;

/// One clip sampled for the pose.
#[derive(Debug, Clone, Serialize)]
pub struct TraceClip {
    /// Its name; null when the file leaves it unnamed.
    pub clip: Option<String>,
    /// Its index in the file (glTF `animations`).
    pub index: u32,
    /// Sample time, seconds on the file's timeline (wrapped or clamped as
    /// its player plays it: sample exactly here).
    pub time: f64,
    /// Its weight within its layer (the layer's blend normalises them).
    pub weight: f64,
    /// Index into `layers` (0: the state machine's pose).
    pub layer: u32,
}

/// One layer of the pose, in the order layers apply.
#[derive(Debug, Clone, Serialize)]
pub struct TraceLayer {
    /// The controller's name for it; null for the base.
    pub name: Option<String>,
    /// `base`, `override` or `additive`.
    pub mode: &'static str,
    /// In [0, 1]; a layer at 0 is not applied.
    pub weight: f64,
    /// Joints the layer moves (mask weight above 0), by name; null: every joint at 1.
    pub mask: Option<Vec<String>>,
    /// The same joints with their glTF node index and mask weight.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mask_joints: Option<Vec<MaskJoint>>,
    /// Whether it sets morph weights (false: an override layer whose clips
    /// have no morph-weight track leaves the weights below it as they are).
    pub morphs: bool,
    /// Additive layers: where the reference pose is sampled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<TraceReference>,
}

/// A joint under a layer's mask.
#[derive(Debug, Clone, Serialize)]
pub struct MaskJoint {
    /// glTF node index.
    pub node: usize,
    /// Node name.
    pub name: String,
    /// Mask weight in (0, 1].
    pub weight: f64,
}

/// An additive layer's reference pose: a clip at a time.
#[derive(Debug, Clone, Serialize)]
pub struct TraceReference {
    /// Its name; null when unnamed.
    pub clip: Option<String>,
    /// Its index in the file.
    pub index: u32,
    /// Seconds on its timeline, clamped to its keys (never wrapped).
    pub time: f64,
}

/// The clips sampled for `character`'s last evaluated pose.
pub fn clips(model: &Model, character: &Character) -> Vec<TraceClip> {
    character
        .sampled_clips()
        .map(|c| TraceClip {
            clip: model.clips[c.clip as usize].name.clone(),
            index: c.clip,
            time: c.time,
            weight: f64::from(c.weight),
            layer: c.layer,
        })
        .collect()
}

/// The layers of `character`'s last evaluated pose, base first.
pub fn layers(model: &Model, character: &Character) -> Vec<TraceLayer> {
    let names = model.skeleton.names();
    character
        .evaluated_layers()
        .map(|l| {
            let mask_joints: Option<Vec<MaskJoint>> = l.mask().map(|mask| {
                mask.iter()
                    .enumerate()
                    .filter(|(_, w)| **w > 0.0)
                    .map(|(j, &w)| MaskJoint {
                        node: model.node_of_joint[j],
                        name: names[j].clone(),
                        weight: f64::from(w),
                    })
                    .collect()
            });
            TraceLayer {
                name: l.name().map(String::from),
                mode: l.mode_name(),
                weight: f64::from(l.weight),
                mask: mask_joints.as_ref().map(|m| m.iter().map(|j| j.name.clone()).collect()),
                mask_joints,
                morphs: l.sets_morphs(),
                reference: l.reference().map(|r| TraceReference {
                    clip: model.clips[r.clip as usize].name.clone(),
                    index: r.clip,
                    time: f64::from(r.time),
                }),
            }
        })
        .collect()
}

/// The joint whose ground travel and yaw are taken out of the pose.
#[derive(Debug, Clone, Serialize)]
pub struct RootMotionJoint {
    /// glTF node index.
    pub node: usize,
    /// Node name.
    pub name: String,
}

/// `character`'s root-motion joint; `None` without root motion.
pub fn root_motion_joint(model: &Model, character: &Character) -> Option<RootMotionJoint> {
    let joint = character.controller().root_motion_joint()?;
    Some(RootMotionJoint { node: model.node_of_joint[joint], name: model.skeleton.names()[joint].clone() })
}
