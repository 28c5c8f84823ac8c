//! The end of the chain: a local pose -> world matrices -> skinning palettes,
//! plus the morph weights, with a version that changes exactly when what the
//! GPU reads (palettes, world matrices, morph weights) changes. It takes the
//! local pose as given: it never samples or blends, and never allocates
//! after `new`.
//!
//! A crowd's output keeps the world matrices of a few joints only
//! (`keeping_world`): those that drawing and root motion read. The others
//! are computed in the updating thread's buffers (or a pose batch's) and
//! forgotten once the palettes are written from them; the version then
//! follows the palettes and the matrices kept.

use super::scratch::with_scratch;
use crate::anim::Rig;
use crate::anim::hierarchy::batch::BatchedPose;
use crate::anim::prefetch::Blocks;
use crate::anim::{BoneMatrix, JobError, SkinnedPose, Transform, job::check_len, skeleton_to_model_in_place};
use nalgebra::Matrix4;
use std::sync::Arc;

/// Replaces the evaluated matrices for debugging.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DebugPose {
    /// The animated pose.
    #[default]
    Animated,
    /// Every skin joint at its bind pose (palette = identity where the
    /// skeleton's rest equals its bind).
    BindPose,
    /// World matrices from the animated pose, every palette entry the
    /// identity: the mesh as authored whatever the pose (the first check
    /// when vertices explode).
    IdentityPalette,
}

/// World matrices, palettes and morph weights of one character, and their
/// version. Sized once for a rig; `update` never allocates.
#[derive(Debug, Clone)]
pub struct PoseOutput {
    /// Every joint's, or those of `world_joints` in its order.
    world: Vec<Matrix4<f32>>,
    /// The joints `world` holds when not every one (see `keeping_world`).
    world_joints: Option<Arc<[u32]>>,
    palettes: Vec<BoneMatrix>,
    /// The rig's (shared, not copied per character).
    palette_ranges: Arc<[[u32; 2]]>,
    morph_weights: Vec<f32>,
    version: u64,
    evaluated: bool,
    /// The debug view the palettes were computed for.
    debug: DebugPose,
}

impl PoseOutput {
    /// Names the matrices and weights for a prefetch (see
    /// [`prefetch`](crate::anim::prefetch)), or the weights alone when
    /// the joints are posed on the GPU (the matrices stay as they are).
    pub(super) fn blocks(&self, blocks: &mut Blocks, gpu_pose: bool) {
        blocks.slice(&self.morph_weights);
        if !gpu_pose {
            blocks.slice(&self.world);
            blocks.slice(&self.palettes);
        }
    }

    /// Buffers for `rig`, at identity until the first `update`.
    pub fn new(rig: &Rig) -> Self {
        Self::with_world(rig, None)
    }

    /// `new`, keeping the world matrices of `joints` only (sorted and
    /// deduplicated when they are not ascending already, since lookups
    /// search the list; a joint past the skeleton makes `update` fail):
    /// `world` then holds theirs in ascending order, and the version changes
    /// exactly when they, the palettes or the morph weights change (a
    /// joint that no skin uses and that is not kept changes nothing
    /// drawn). A crowd keeps those that rigidly drawn meshes and root
    /// motion read (`Controller`'s world joints); 1.5 KB and 24 cache
    /// lines less per update for a built-in character.
    pub fn keeping_world(rig: &Rig, joints: Arc<[u32]>) -> Self {
        Self::with_world(rig, Some(joints))
    }

    fn with_world(rig: &Rig, mut world_joints: Option<Arc<[u32]>>) -> Self {
        if let Some(joints) = &mut world_joints
            && !joints.is_sorted_by(|a, b| a < b)
        {
            let mut sorted = joints.to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            *joints = sorted.into();
        }
        let kept = world_joints.as_deref().map_or(rig.skeleton.len(), <[u32]>::len);
        let palette = rig.palette_len();
        PoseOutput {
            world: vec![Matrix4::identity(); kept],
            world_joints,
            palettes: vec![BoneMatrix::IDENTITY; palette],
            palette_ranges: rig.shared_palette_ranges(),
            morph_weights: rig.rest_morph_weights.clone(),
            version: 0,
            evaluated: false,
            debug: DebugPose::Animated,
        }
    }

    /// Computes world matrices (`world[j] = world[parent] * local[j]`) and
    /// palettes (`world[joint] * inverse_bind`) from `locals`, takes
    /// `morph_weights`, applies `debug`, and bumps the version when anything
    /// differs from the previous result (always on the first call). Returns
    /// whether it changed. Never allocates.
    pub fn update(
        &mut self,
        rig: &Rig,
        locals: &[Transform],
        morph_weights: &[f32],
        debug: DebugPose,
    ) -> Result<bool, JobError> {
        check_len("pose output: morph weights", morph_weights.len(), self.morph_weights.len())?;
        check_len("pose output: palettes", self.palettes.len(), rig.palette_len())?;
        if self.world_joints.is_some() {
            let changed = with_scratch(|scratch| self.update_few(rig, locals, debug, &mut scratch.models))?;
            let changed = changed || !self.evaluated || debug != self.debug;
            self.debug = debug;
            return Ok(self.take_morph_weights(changed, morph_weights));
        }
        check_len("pose output: world", self.world.len(), rig.skeleton.len())?;
        // The world matrices are computed in place, each compared with the
        // one it replaces: compared rather than assumed, since a paused
        // clip, a clamped end or a STEP key between two updates gives the
        // same matrices, and then nothing needs uploading. The palettes
        // follow from them (and the debug view), so they are computed, in
        // place, only when those changed.
        let world_changed = match debug {
            // The same matrices every time: changed only with the view.
            DebugPose::BindPose => {
                rig.bind_pose_world(&mut self.world);
                false
            }
            DebugPose::Animated | DebugPose::IdentityPalette => {
                skeleton_to_model_in_place(&rig.skeleton, locals, &Matrix4::identity(), &mut self.world)?
            }
        };
        let world_changed = world_changed || !self.evaluated || debug != self.debug;
        if world_changed {
            if debug == DebugPose::IdentityPalette {
                self.palettes.fill(BoneMatrix::IDENTITY);
            } else {
                rig.write_palettes(&self.world, &mut self.palettes)?;
            }
            self.debug = debug;
        }
        Ok(self.take_morph_weights(world_changed, morph_weights))
    }

    /// `update`'s matrices when only a few world matrices are kept: all of
    /// them, and the palettes, computed in `models`, then compared bit for
    /// bit with (and copied over) the palettes and the matrices kept.
    /// Whether any bit changed.
    fn update_few(
        &mut self,
        rig: &Rig,
        locals: &[Transform],
        debug: DebugPose,
        models: &mut ModelScratch,
    ) -> Result<bool, JobError> {
        let ModelScratch { world, palettes } = models;
        world.resize(rig.skeleton.len(), Matrix4::identity());
        palettes.resize(rig.palette_len(), BoneMatrix::IDENTITY);
        match debug {
            DebugPose::BindPose => rig.bind_pose_world(world),
            DebugPose::Animated | DebugPose::IdentityPalette => {
                // Compared with another character's matrices: the answer means nothing.
                skeleton_to_model_in_place(&rig.skeleton, locals, &Matrix4::identity(), world)?;
            }
        }
        match debug {
            DebugPose::IdentityPalette => palettes.fill(BoneMatrix::IDENTITY),
            DebugPose::Animated | DebugPose::BindPose => rig.write_palettes(world, palettes)?,
        }
        let joints = self.world_joints.as_deref().unwrap_or_default();
        let mut same = same_bits(bytemuck::cast_slice(palettes), bytemuck::cast_slice(&self.palettes));
        for (kept, &j) in self.world.iter_mut().zip(joints) {
            let m =
                world.get(j as usize).ok_or_else(|| JobError::new(format!("pose output: no joint {j}")))?;
            same &= same_bits(m.as_slice(), kept.as_slice());
            *kept = *m;
        }
        if !same {
            self.palettes.copy_from_slice(palettes);
        }
        Ok(!same)
    }

    /// The matrices a pose batch writes for `locals` (see
    /// [`batch`](crate::anim::hierarchy::batch)); `finish_batch` then
    /// publishes them.
    pub(super) fn batched<'a>(&'a mut self, locals: &'a [Transform]) -> BatchedPose<'a> {
        let world_joints = self.world_joints.as_deref();
        BatchedPose { locals, world: &mut self.world, world_joints, palettes: &mut self.palettes }
    }

    /// `update`'s end for the animated pose whose world matrices and
    /// palettes a batch wrote (the palettes always: a function of the
    /// matrices, so unchanged ones are rewritten with the same bits), and
    /// whether any bit of the matrices changed, as the batch reported
    /// (keeping few matrices: of those or of the palettes).
    pub(super) fn finish_batch(
        &mut self,
        world_changed: bool,
        morph_weights: &[f32],
    ) -> Result<bool, JobError> {
        check_len("pose output: morph weights", morph_weights.len(), self.morph_weights.len())?;
        let world_changed = world_changed || !self.evaluated || self.debug != DebugPose::Animated;
        self.debug = DebugPose::Animated;
        Ok(self.take_morph_weights(world_changed, morph_weights))
    }

    /// Takes `morph_weights` and bumps the version when they or the
    /// matrices (`world_changed`) differ. Whether anything changed.
    fn take_morph_weights(&mut self, world_changed: bool, morph_weights: &[f32]) -> bool {
        let changed = world_changed || morph_weights != self.morph_weights.as_slice();
        if changed {
            self.morph_weights.copy_from_slice(morph_weights);
            self.version += 1;
            self.evaluated = true;
        }
        changed
    }

    /// Takes `morph_weights` alone (the joints are posed on the GPU: the
    /// world matrices and palettes stay as they are), bumping the version
    /// when they differ or nothing was published yet. Whether it changed.
    pub fn set_morph_weights(&mut self, morph_weights: &[f32]) -> Result<bool, JobError> {
        check_len("pose output: morph weights", morph_weights.len(), self.morph_weights.len())?;
        Ok(self.take_morph_weights(!self.evaluated, morph_weights))
    }

    /// Changes exactly when the palettes, world matrices (those kept) or
    /// morph weights change (starts at 1 after the first `update`).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Scene-space matrix of every skeleton joint, or of those of
    /// `world_joints` in its order.
    pub fn world(&self) -> &[Matrix4<f32>] {
        &self.world
    }

    /// The joints `world` holds when not every one (see `keeping_world`).
    pub fn world_joints(&self) -> Option<&[u32]> {
        self.world_joints.as_deref()
    }

    /// Skinning matrices of skin `skin` (empty for an unknown skin).
    pub fn palette(&self, skin: usize) -> &[BoneMatrix] {
        self.view().palette(skin)
    }

    /// Morph weights, laid out as `Pose::morph_weights`.
    pub fn morph_weights(&self) -> &[f32] {
        &self.morph_weights
    }

    /// The pose as plain slices, for skinning on the CPU or the GPU.
    pub fn view(&self) -> SkinnedPose<'_> {
        SkinnedPose {
            palettes: &self.palettes,
            palette_ranges: &self.palette_ranges,
            world: &self.world,
            world_joints: self.world_joints.as_deref(),
            morph_weights: &self.morph_weights,
        }
    }
}

/// Whether `a` and `b` hold the same bits (NaNs and signed zeros included).
fn same_bits(a: &[f32], b: &[f32]) -> bool {
    bytemuck::cast_slice::<f32, u32>(a) == bytemuck::cast_slice::<f32, u32>(b)
}

/// Every model matrix and palette of an output that keeps only a few
/// world matrices, while it updates (one set per thread: see `scratch`).
#[derive(Debug, Default)]
pub(super) struct ModelScratch {
    world: Vec<Matrix4<f32>>,
    palettes: Vec<BoneMatrix>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joints_to_keep_in_any_order_are_kept_ascending() {
        let model = crate::asset::load_default_character().unwrap();
        let rig = &model.rig;
        // A pose away from rest, so that the matrices differ joint to joint.
        let mut locals = rig.skeleton.rest().to_vec();
        for (j, local) in locals.iter_mut().enumerate() {
            local.translation.x += j as f32 * 0.01;
        }
        let update = |output: &mut PoseOutput| {
            output.update(rig, &locals, &rig.rest_morph_weights, DebugPose::Animated).unwrap();
        };
        let mut every = PoseOutput::new(rig);
        update(&mut every);
        let mut few = PoseOutput::keeping_world(rig, Arc::from([9, 2, 5, 2]));
        update(&mut few);
        assert_eq!(few.world_joints(), Some(&[2, 5, 9][..]));
        let (few, every) = (few.view(), every.view());
        for j in 0..rig.skeleton.len() as u32 {
            let kept = [2, 5, 9].contains(&j).then(|| every.joint_world(j).unwrap());
            assert_eq!(few.joint_world(j), kept, "joint {j}");
        }
        assert_eq!(few.palettes, every.palettes);
    }
}
