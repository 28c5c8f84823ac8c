//! Characters posed on the GPU: the `PoseProgram` of a rig under a
//! controller (its layers' modes, masks and additive references, its
//! root-motion joint), and the character's side of it: with a program
//! set, an update keeps the controller, events, root motion and morph
//! weights on the CPU and only records what the GPU samples (the clips
//! with weight, their times, weights and layers, and the layers' weights:
//! the trace's `clips` and `layers`), never a joint.

use super::character::Character;
use super::controller::Controller;
use crate::anim::{JobError, PoseLayerSetup, PosePlayback, PoseProgram, Rig, RotationBlend};
use std::sync::Arc;

/// The program that poses `controller`'s characters of `rig` on the GPU,
/// LINEAR rotation keys interpolated as `rotation_blend` says (the
/// characters' own setting). Refuses a rig that samples compressed clips
/// (the GPU samples the clips' own keys, and would disagree with the
/// CPU's compressed pose by the compression's error).
pub fn pose_program(
    rig: &Rig,
    controller: &Controller,
    rotation_blend: RotationBlend,
) -> Result<PoseProgram, JobError> {
    if rig.samples_compressed_clips() {
        return Err(JobError::new(
            "GPU pose samples the clips' own keys: it cannot pose a rig with compressed clips",
        ));
    }
    let layers: Vec<PoseLayerSetup> = controller
        .layers()
        .iter()
        .map(|l| PoseLayerSetup { mode: l.mode, mask: &l.mask, reference: &l.reference.locals })
        .collect();
    let root = controller.root_motion.as_ref().map(|r| r.joint);
    PoseProgram::new(rig, controller.leaves().len(), &layers, root, rotation_blend)
}

impl Character {
    /// Poses the character's joints on the GPU with `program` (made by
    /// [`pose_program`] for this character's rig and controller, with its
    /// rotation sampling), or on the CPU again (`None`). On the GPU the
    /// output keeps its last world matrices and palettes; only its morph
    /// weights move, and [`playback`](Self::playback) says what to pose.
    pub fn set_pose_program(&mut self, program: Option<Arc<PoseProgram>>) {
        self.mark_stale();
        self.set_gpu_program(program);
    }

    /// What the GPU poses from the last evaluation, when posed there.
    pub fn playback(&self) -> Option<PosePlayback<'_>> {
        let program = self.gpu_program()?;
        Some(PosePlayback {
            program,
            entries: self.evaluation().playback(),
            layer_weights: self.evaluation().evaluated_layer_weights(),
        })
    }
}
