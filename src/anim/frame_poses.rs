//! The poses of a frame, as whatever draws them reads them: how many
//! characters there are, each one's skinning input (pose and version) and
//! its world placement. Crowds, timelines and actors implement these traits
//! beside themselves, so the renderer takes poses without knowing the
//! character or world types that made them.
//!
//! Traits and CPU framing only: it never names the character, world or
//! renderer types that implement or read them.
//!
//! Also the CPU-side framing of a frame source: the world-space bounds of
//! its skinned vertices over some frames (CPU reference skinning).

use super::gpu_pose::{PosePlayback, PoseProgram};
use super::job::JobError;
use super::mesh::{MeshInstance, MeshPrimitive};
use super::pose::SkinnedPose;
use super::rig::Rig;
use nalgebra::{Matrix4, Point3};
use rayon::prelude::*;
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
    /// ([`skinned_bounds`]) skins the palettes the CPU holds, and a
    /// character posed on the GPU has none there. The default does
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

/// An axis-aligned box: (min, max).
pub type Bounds = ([f32; 3], [f32; 3]);

/// Grows `bounds` by every finite vertex of `pose` placed by `world` (CPU
/// reference skinning of every mesh instance of `rig`); `scratch` holds one
/// primitive's positions (grown once when too short).
pub fn grow_bounds(
    rig: &Rig,
    pose: &SkinnedPose,
    world: &Matrix4<f32>,
    scratch: &mut Vec<[f32; 3]>,
    bounds: &mut Option<Bounds>,
) -> Result<(), JobError> {
    let instances: &[MeshInstance] = &rig.instances;
    // An affine `world` (last row 0 0 0 1, as placements are) divides each
    // finite point by exactly 1 in `transform_point`: the division is left
    // out, the same products and sums kept (the same bits).
    let (linear, translation) = (world.fixed_view::<3, 3>(0, 0), world.fixed_view::<3, 1>(0, 3));
    let affine = (0..3).all(|k| world[(3, k)] == 0.0) && world[(3, 3)] == 1.0;
    for instance in instances {
        let primitives: &[MeshPrimitive] = &rig.meshes[instance.mesh].primitives;
        for prim in primitives {
            scratch.resize(prim.vertex_count(), [0.0; 3]);
            pose.skin_primitive(instance, prim, scratch, None)?;
            for p in scratch.iter().filter(|p| p.iter().all(|v| v.is_finite())) {
                let p = Point3::new(p[0], p[1], p[2]);
                let q = if affine { linear * p + translation } else { world.transform_point(&p) };
                let p = &[q.x, q.y, q.z];
                let (lo, hi) = bounds.get_or_insert((*p, *p));
                for k in 0..3 {
                    lo[k] = lo[k].min(p[k]);
                    hi[k] = hi[k].max(p[k]);
                }
            }
        }
    }
    Ok(())
}

/// The smallest box holding both (either may be empty).
fn union(a: Option<Bounds>, b: Option<Bounds>) -> Option<Bounds> {
    match (a, b) {
        (Some((alo, ahi)), Some((blo, bhi))) => {
            Some((std::array::from_fn(|k| alo[k].min(blo[k])), std::array::from_fn(|k| ahi[k].max(bhi[k]))))
        }
        (a, b) => a.or(b),
    }
}

/// Characters per task when framing on a pool: a few hundred microseconds
/// of skinning for the built-in character.
const FRAMING_CHUNK: usize = 8;

/// Grows `bounds` by every character of `poses` (`grow_bounds`): in
/// chunks on the rayon pool this thread works in (a crowd's, whose
/// threads pose it), else in order. A box's corners are minima and maxima,
/// so the order changes nothing; each task skins into its own scratch.
fn grow_by_every(
    rig: &Rig,
    poses: &dyn FramePoses,
    scratch: &mut Vec<[f32; 3]>,
    bounds: &mut Option<Bounds>,
) -> Result<(), JobError> {
    let count = poses.count();
    let pooled = rayon::current_num_threads() > 1 && rayon::current_thread_index().is_some();
    if !pooled || count <= FRAMING_CHUNK {
        for c in 0..count {
            grow_bounds(rig, &poses.input(c).pose, &poses.world(c), scratch, bounds)?;
        }
        return Ok(());
    }
    let grown = (0..count)
        .into_par_iter()
        .with_min_len(FRAMING_CHUNK)
        .try_fold(
            || (Vec::new(), None),
            |(mut scratch, mut grown), c| {
                grow_bounds(rig, &poses.input(c).pose, &poses.world(c), &mut scratch, &mut grown)?;
                Ok::<_, JobError>((scratch, grown))
            },
        )
        .map(|folded| folded.map(|(_, grown)| grown))
        .try_reduce(|| None, |a, b| Ok(union(a, b)))?;
    *bounds = union(*bounds, grown);
    Ok(())
}

/// World-space bounds of every drawn vertex of `rig` over frames
/// `first..first + frames` of `source`, or `None` when nothing is drawn.
/// Characters posed on the GPU are posed on the CPU meanwhile (see
/// [`FrameSource::pose_on_cpu_for_framing`]); restart the source before
/// drawing. A crowd's characters are skinned on the threads that pose it.
pub fn skinned_bounds(
    rig: &Rig,
    source: &mut dyn FrameSource,
    first: u32,
    frames: u32,
) -> Result<Option<Bounds>, PoseError> {
    source.pose_on_cpu_for_framing(true)?;
    let mut scratch = Vec::new();
    let mut bounds = None;
    let grown = (|| {
        for i in first..first.saturating_add(frames.max(1)) {
            source.frame(i)?;
            grow_by_every(rig, &*source, &mut scratch, &mut bounds)?;
        }
        Ok::<_, PoseError>(())
    })();
    let restored = source.pose_on_cpu_for_framing(false);
    grown.and(restored).map(|_| bounds)
}
