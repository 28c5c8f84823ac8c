//! A character's pose: the per-character buffers jobs read and write, and
//! the read-only view of an evaluated pose that skinning (CPU or GPU) reads.
//!
//! Buffers and a view: nothing here samples, blends or decides what a
//! character plays.

use super::job::JobError;
use super::mesh::{MeshInstance, MeshPrimitive};
use super::skeleton::BoneMatrix;
use super::skinning::{SkinTransform, SkinningJob, SkinningMethod};
use super::transform::Transform;
use nalgebra::Matrix4;

/// Local transforms of every skeleton joint plus the flat morph-weight array
/// (all mesh instances' targets, one run per instance).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Pose {
    /// Local (parent-relative) transform per joint.
    pub locals: Vec<Transform>,
    /// Morph-target weights.
    pub morph_weights: Vec<f32>,
}

impl Pose {
    /// A pose of the given sizes, at identity and zero weights.
    pub fn new(joints: usize, morph_weights: usize) -> Self {
        Pose { locals: vec![Transform::IDENTITY; joints], morph_weights: vec![0.0; morph_weights] }
    }
}

/// An evaluated pose as plain slices: what skinning reads. The palettes of
/// every skin are concatenated; skin `s` reads
/// `palettes[palette_ranges[s][0]..palette_ranges[s][1]]`, a run that
/// skins with the same joints and inverse binds share
/// ([`Rig::palette_ranges`](super::Rig::palette_ranges)).
#[derive(Debug, Clone, Copy)]
pub struct SkinnedPose<'a> {
    /// Skinning matrices of every skin, one run per distinct skin.
    pub palettes: &'a [BoneMatrix],
    /// Each skin's run `[start, end)` in `palettes`.
    pub palette_ranges: &'a [[u32; 2]],
    /// Scene-space matrix of every skeleton joint, or of those of
    /// `world_joints` in its order (unskinned meshes use
    /// [`joint_world`](Self::joint_world)`(instance.joint)`).
    pub world: &'a [Matrix4<f32>],
    /// The joints `world` holds when not every one (ascending: a crowd's
    /// characters keep those that drawing and root motion read).
    pub world_joints: Option<&'a [u32]>,
    /// Morph weights laid out as `Pose::morph_weights`.
    pub morph_weights: &'a [f32],
}

impl<'a> SkinnedPose<'a> {
    /// Number of skins.
    pub fn skins(&self) -> usize {
        self.palette_ranges.len()
    }

    /// Joint `joint`'s scene-space matrix, if the pose holds it.
    pub fn joint_world(&self, joint: u32) -> Option<&'a Matrix4<f32>> {
        match self.world_joints {
            None => self.world.get(joint as usize),
            Some(joints) => joints.binary_search(&joint).ok().and_then(|k| self.world.get(k)),
        }
    }

    /// Skinning matrices of skin `skin`, one per skin joint (empty for an unknown skin).
    pub fn palette(&self, skin: usize) -> &'a [BoneMatrix] {
        let range = self.palette_ranges.get(skin);
        range.and_then(|&[a, b]| self.palettes.get(a as usize..b as usize)).unwrap_or(&[])
    }

    /// Morph weights of `instance` (empty when they lie outside the pose).
    pub fn instance_morph_weights(&self, instance: &MeshInstance) -> &'a [f32] {
        let start = instance.morph_offset as usize;
        self.morph_weights.get(start..start + instance.morph_count as usize).unwrap_or(&[])
    }

    /// CPU reference skinning of one primitive of `instance` into scene
    /// space: morph deltas, then skinning (the mesh node's own transform
    /// ignored, as glTF says) or, for a primitive without joints, the
    /// node's world transform (the GPU pass does the same).
    pub fn skin_primitive(
        &self,
        instance: &MeshInstance,
        primitive: &MeshPrimitive,
        out_positions: &mut [[f32; 3]],
        out_normals: Option<&mut [[f32; 3]]>,
    ) -> Result<(), JobError> {
        self.skin_primitive_with(
            SkinningMethod::Linear,
            instance,
            primitive,
            out_positions,
            out_normals,
            None,
        )
    }

    /// [`skin_primitive`](Self::skin_primitive) with palette influences
    /// blended by `method`, and the tangents too where `out_tangents` is
    /// given (the primitive must have them).
    pub fn skin_primitive_with(
        &self,
        method: SkinningMethod,
        instance: &MeshInstance,
        primitive: &MeshPrimitive,
        out_positions: &mut [[f32; 3]],
        out_normals: Option<&mut [[f32; 3]]>,
        out_tangents: Option<&mut [[f32; 4]]>,
    ) -> Result<(), JobError> {
        let transform = match instance.skin {
            Some(skin) if primitive.influences.is_some() => SkinTransform::Palette(self.palette(skin)),
            _ => SkinTransform::Rigid(*self.joint_world(instance.joint).ok_or_else(|| {
                JobError::new(format!("skinning: instance joint {} outside the pose", instance.joint))
            })?),
        };
        SkinningJob {
            primitive,
            morph_weights: self.instance_morph_weights(instance),
            transform,
            method,
            out_positions,
            out_normals,
            out_tangents,
        }
        .run()
    }
}
