//! The poses of a frame, as whatever draws them reads them: how many
//! characters there are, each one's skinning input (pose and version) and
//! its world placement. Crowds, timelines and actors implement these traits
//! beside themselves, so the renderer takes poses without knowing the
//! character or world types that made them.
//!
//! Traits only: it never names the character, world or renderer types
//! that implement or read them (framing is `anim::framing`).

use super::gpu_pose::{PosePlayback, PoseProgram};
use super::pose::SkinnedPose;
use nalgebra::Matrix4;
use std::sync::Arc;

/// One character's input to a frame.
#[derive(Clone, Copy)]
pub struct SkinInput<'a> {
    /// Its current pose, as plain slices.
    pub pose: SkinnedPose<'a>,
    /// Changes whenever the pose changes: a slot that already holds this
    /// version uploads nothing for the character (a paused character costs
    /// no palette bandwidth).
    pub version: u64,
}

/// The characters of one frame, by index: each one's pose (as a
/// `SkinInput`) and world placement (applied after skinning). Read in
/// place, so a frame of any size is handed over without allocating.
pub trait FramePoses: Sync {
    /// Number of characters.
    fn count(&self) -> usize;
    /// Character `c`'s pose and its version.
    fn input(&self, c: usize) -> SkinInput<'_>;
    /// Character `c`'s world matrix.
    fn world(&self, c: usize) -> Matrix4<f32>;
    /// Every character's world matrix in one slice (`count` of them), when
    /// the source keeps them so (a crowd): read in place, without a call
    /// per character. `None`, the default: read them by `world`.
    fn worlds(&self) -> Option<&[Matrix4<f32>]> {
        None
    }
    /// Character `c`'s playback when it is posed on the GPU (its `input`
    /// then holds only its morph weights; the palette is the pose pass's);
    /// `None`, the default: its palette comes from `input`.
    fn playback(&self, _c: usize) -> Option<PosePlayback<'_>> {
        None
    }
    /// The program the characters posed on the GPU are posed with, and
    /// the first of them (the others are laid out like it); `None`, the
    /// default: the CPU poses every character. The renderer follows it.
    fn gpu_pose(&self) -> Option<(usize, &Arc<PoseProgram>)> {
        None
    }
}

/// How a character will be seen in the frame about to be posed, foreseen
/// by the renderer from the camera and the character's place before the
/// pose is evaluated (`Renderer::foresee`): what evaluation-rate level of
/// detail chooses by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sight {
    /// A pass draws it (the camera's, or only the shadow cascades'),
    /// spanning about `pixels` on screen (the diameter of the sphere
    /// around its poses, about a standing figure's height; infinite when
    /// every character is drawn at full detail).
    Drawn {
        /// The pixels its bounds span.
        pixels: f32,
    },
    /// No pass draws it: outside the view, and its shadow too.
    Unseen,
}

/// Why posing a frame failed: the error of whatever drives the characters
/// (a timeline, an actor in a level, a crowd), kept as it came.
pub type PoseError = Box<dyn std::error::Error + Send + Sync>;

/// Frames to draw: after `frame(i)`, the characters' poses, versions and
/// world placements of frame `i` (as `FramePoses`).
pub trait FrameSource: FramePoses {
    /// Goes back to before frame 0.
    fn restart(&mut self) -> Result<(), PoseError>;
    /// Poses frame `i` (frames come in order after a restart).
    fn frame(&mut self, i: u32) -> Result<(), PoseError>;
    /// From the next frame on, poses every character on the CPU (`true`),
    /// or as it was set up again (`false`): CPU framing
    /// ([`skinned_bounds`](super::framing::skinned_bounds)) skins the
    /// palettes the CPU holds, and a character posed on the GPU has none
    /// there. The default does
    /// nothing: the source poses on the CPU anyway.
    fn pose_on_cpu_for_framing(&mut self, _on: bool) -> Result<(), PoseError> {
        Ok(())
    }
    /// How each character will be seen in the frames posed next (in
    /// order; characters past the slice as before), for sources that
    /// evaluate what is small or unseen less often (a crowd). The
    /// default ignores it: every pose is evaluated every frame.
    fn foresee(&mut self, _sight: &[Sight]) {}
    /// How many characters the last frame posed (by default every one).
    fn posed(&self) -> usize {
        self.count()
    }
}

/// Poses placed at the origin.
impl FramePoses for [SkinInput<'_>] {
    fn count(&self) -> usize {
        self.len()
    }
    fn input(&self, c: usize) -> SkinInput<'_> {
        self[c]
    }
    fn world(&self, _: usize) -> Matrix4<f32> {
        Matrix4::identity()
    }
}

/// Poses placed at the origin.
impl<const N: usize> FramePoses for [SkinInput<'_>; N] {
    fn count(&self) -> usize {
        N
    }
    fn input(&self, c: usize) -> SkinInput<'_> {
        self[c]
    }
    fn world(&self, _: usize) -> Matrix4<f32> {
        Matrix4::identity()
    }
}

/// One character placed by a world matrix.
impl FramePoses for (SkinInput<'_>, Matrix4<f32>) {
    fn count(&self) -> usize {
        1
    }
    fn input(&self, _: usize) -> SkinInput<'_> {
        self.0
    }
    fn world(&self, _: usize) -> Matrix4<f32> {
        self.1
    }
}
