//! Evaluating one imported model: clip sampling, hierarchy, palettes and CPU
//! reference skinning, with every buffer allocated once up front.

use crate::anim::hierarchy::{LocalToModelJob, PaletteJob};
use crate::anim::player::wrap_clip_time;
use crate::anim::sampling::{RotationBlend, SampleJob, SamplingCursor};
use crate::anim::skinning::{SkinTransform, SkinningJob};
use crate::anim::{BoneMatrix, JobError, MeshPrimitive, Pose};
use crate::asset::{MeshInstance, Model};
use nalgebra::Matrix4;

/// Per-character evaluation state for one `Model`: the pose, world matrices,
/// one palette per skin and one sampling cursor per clip.
pub struct Evaluator {
    pose: Pose,
    world: Vec<Matrix4<f32>>,
    palettes: Vec<Vec<BoneMatrix>>,
    cursors: Vec<SamplingCursor>,
}

impl Evaluator {
    /// Buffers sized for `model`, holding its rest pose.
    pub fn new(model: &Model) -> Self {
        let joints = model.skeleton.len();
        let mut evaluator = Evaluator {
            pose: Pose::new(joints, model.rest_morph_weights.len()),
            world: vec![Matrix4::identity(); joints],
            palettes: model.skins.iter().map(|s| vec![BoneMatrix::IDENTITY; s.joints.len()]).collect(),
            cursors: model.clips.iter().map(|c| SamplingCursor::new(c)).collect(),
        };
        evaluator.pose.locals.copy_from_slice(model.skeleton.rest());
        evaluator.pose.morph_weights.copy_from_slice(&model.rest_morph_weights);
        evaluator
    }

    /// Poses the model at its rest pose with default morph weights.
    pub fn set_rest(&mut self, model: &Model) -> Result<(), JobError> {
        self.pose.locals.copy_from_slice(model.skeleton.rest());
        self.pose.morph_weights.copy_from_slice(&model.rest_morph_weights);
        self.update_matrices(model)
    }

    /// Samples clip `clip` at `time` seconds as a looping player does (time
    /// wrapped into the clip's period, keys not shifted), then updates world
    /// matrices and palettes.
    pub fn set_clip_time(
        &mut self,
        model: &Model,
        clip: usize,
        time: impl Into<f64>,
    ) -> Result<(), JobError> {
        let clip_data = model.clips.get(clip).ok_or_else(|| JobError::new(format!("no clip {clip}")))?;
        let local_time = wrap_clip_time(clip_data.duration, time.into());
        SampleJob {
            clip: clip_data,
            time: local_time,
            rest: model.skeleton.rest(),
            rest_morph_weights: &model.rest_morph_weights,
            rotation_blend: RotationBlend::Slerp,
            cursor: &mut self.cursors[clip],
            output: &mut self.pose.locals,
            morph_output: &mut self.pose.morph_weights,
        }
        .run()?;
        self.update_matrices(model)
    }

    /// Recomputes world matrices and palettes from the current pose (call
    /// after editing `pose_mut`).
    pub fn update_matrices(&mut self, model: &Model) -> Result<(), JobError> {
        LocalToModelJob {
            parents: model.skeleton.parents(),
            locals: &self.pose.locals,
            root: Matrix4::identity(),
            output: &mut self.world,
        }
        .run()?;
        for (skin, palette) in model.skins.iter().zip(&mut self.palettes) {
            PaletteJob { skin, models: &self.world, output: palette }.run()?;
        }
        Ok(())
    }

    /// Sets every palette entry to the identity (the "identity palette" debug
    /// view: the skinned mesh as authored, whatever the pose). World matrices
    /// are left as they are, so bones still show the pose.
    pub fn set_identity_palettes(&mut self) {
        for palette in &mut self.palettes {
            palette.fill(BoneMatrix::IDENTITY);
        }
    }

    /// Scene-space matrices, for callers that place joints themselves (e.g. the
    /// bind-pose debug view); call `update_palettes` afterwards.
    pub fn world_mut(&mut self) -> &mut [Matrix4<f32>] {
        &mut self.world
    }

    /// Recomputes the palettes from the current world matrices only (after
    /// editing `world_mut`).
    pub fn update_palettes(&mut self, model: &Model) -> Result<(), JobError> {
        for (skin, palette) in model.skins.iter().zip(&mut self.palettes) {
            PaletteJob { skin, models: &self.world, output: palette }.run()?;
        }
        Ok(())
    }

    /// The current pose.
    pub fn pose(&self) -> &Pose {
        &self.pose
    }

    /// The current pose, for callers that blend or edit it themselves.
    pub fn pose_mut(&mut self) -> &mut Pose {
        &mut self.pose
    }

    /// Scene-space matrices of every joint computed in f64 from the current
    /// local pose: reference output (`dump`), not the per-frame path. Allocates.
    pub fn world_f64(&self, model: &Model) -> Vec<Matrix4<f64>> {
        let parents = model.skeleton.parents();
        let mut world: Vec<Matrix4<f64>> = Vec::with_capacity(parents.len());
        for (local, &parent) in self.pose.locals.iter().zip(parents) {
            // Parents come first (Skeleton's invariant), so the index exists.
            let base = world.get(parent as usize).copied().unwrap_or_else(Matrix4::identity);
            world.push(base * local.to_matrix_f64());
        }
        world
    }

    /// Scene-space matrix of every skeleton joint.
    pub fn world(&self) -> &[Matrix4<f32>] {
        &self.world
    }

    /// Skinning matrices of skin `skin`.
    pub fn palette(&self, skin: usize) -> &[BoneMatrix] {
        &self.palettes[skin]
    }

    /// This instance's current morph weights.
    pub fn morph_weights(&self, instance: &MeshInstance) -> &[f32] {
        let start = instance.morph_offset as usize;
        &self.pose.morph_weights[start..start + instance.morph_count as usize]
    }

    /// CPU reference skinning of one primitive of `instance` into scene space:
    /// morph deltas, then skinning (the mesh node's own transform ignored, as
    /// glTF says) or, when unskinned, the node's world transform.
    pub fn skin_primitive(
        &self,
        instance: &MeshInstance,
        primitive: &MeshPrimitive,
        out_positions: &mut [[f32; 3]],
        out_normals: Option<&mut [[f32; 3]]>,
    ) -> Result<(), JobError> {
        // A primitive without joints moves rigidly with its node, even in a
        // skinned instance (the GPU pass does the same).
        let transform = match instance.skin {
            Some(skin) if primitive.influences.is_some() => SkinTransform::Palette(&self.palettes[skin]),
            _ => SkinTransform::Rigid(self.world[instance.joint as usize]),
        };
        SkinningJob {
            primitive,
            morph_weights: self.morph_weights(instance),
            transform,
            out_positions,
            out_normals,
            out_tangents: None,
        }
        .run()
    }
}
