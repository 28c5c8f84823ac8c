//! Headless rendering: pose a character frame by frame (a `FrameSource`: a
//! `Timeline`, or an actor moving through a level), frame the skinned
//! bounds of all of its frames in world space, render each frame offscreen
//! (with the level's scenery, if any) and hand the pixels out in order (for
//! PNG / animated PNG output).

use super::camera::{Camera, DEFAULT_FOV_Y};
use super::error::{PoseError, RenderError};
use super::mesh_pass::VertexPath;
use super::renderer::{PixelSink, RenderSettings, Renderer};
use super::skin_pass::{FramePoses, PaletteUpload, SkinInput};
use super::skinning::DqsSplit;
use crate::anim::{MeshInstance, MeshPrimitive, SkinnedPose, SkinningMethod};
use crate::asset::Model;
use crate::character::{Controller, Crowd, Timeline};
use crate::gpu::GpuContext;
use crate::world::ActorRun;
use ash::vk;
use nalgebra::Matrix4;
use std::sync::Arc;

/// An axis-aligned box: (min, max).
pub type Bounds = ([f32; 3], [f32; 3]);

/// What to render.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadlessRequest {
    /// Number of frames (at least 1).
    pub frames: u32,
    /// First frame of the timeline to draw (frames before it are only simulated).
    pub first_frame: u32,
    /// Image size.
    pub width: u32,
    /// Image size.
    pub height: u32,
    /// Draw triangle edges only.
    pub wireframe: bool,
    /// Skin in the vertex shader instead of the compute pass.
    pub vertex_skinning: bool,
    /// Anti-alias with 4x MSAA when the device supports it (else one sample).
    pub msaa: bool,
    /// Draw passes: 1 (main) or 2 (depth prepass + main).
    pub passes: u32,
    /// How palettes reach the GPU.
    pub upload: PaletteUpload,
    /// How influences are blended (the camera frames the linear-blend bounds).
    pub skinning: SkinningMethod,
    /// Where dual-quaternion skinning splits the matrices.
    pub dqs_split: DqsSplit,
}

/// Frames to render: after `frame(i)`, the characters' poses, versions
/// and world placements of frame `i` (as `FramePoses`). Errors are the
/// source's own, boxed.
pub trait FrameSource: FramePoses {
    /// Goes back to before frame 0.
    fn restart(&mut self) -> Result<(), PoseError>;
    /// Poses frame `i` (frames come in order after a restart).
    fn frame(&mut self, i: u32) -> Result<(), PoseError>;
}

/// A clip or controller of one character, at the origin.
impl FramePoses for Timeline {
    fn count(&self) -> usize {
        1
    }
    fn input(&self, _: usize) -> SkinInput<'_> {
        let c = self.character();
        SkinInput { pose: c.pose(), version: c.version() }
    }
    fn world(&self, _: usize) -> Matrix4<f32> {
        Matrix4::identity()
    }
}

impl FrameSource for Timeline {
    fn restart(&mut self) -> Result<(), PoseError> {
        Ok(Timeline::restart(self)?)
    }
    fn frame(&mut self, i: u32) -> Result<(), PoseError> {
        Timeline::frame(self, i)?;
        Ok(())
    }
}

/// An actor moving through a level.
impl FramePoses for ActorRun {
    fn count(&self) -> usize {
        1
    }
    fn input(&self, _: usize) -> SkinInput<'_> {
        let c = self.actor().character();
        SkinInput { pose: c.pose(), version: c.version() }
    }
    fn world(&self, _: usize) -> Matrix4<f32> {
        self.actor().transform()
    }
}

impl FrameSource for ActorRun {
    fn restart(&mut self) -> Result<(), PoseError> {
        Ok(ActorRun::restart(self)?)
    }
    fn frame(&mut self, i: u32) -> Result<(), PoseError> {
        ActorRun::frame(self, i)?;
        Ok(())
    }
}

/// Many characters on a grid.
impl FrameSource for Crowd {
    fn restart(&mut self) -> Result<(), PoseError> {
        Ok(Crowd::restart(self)?)
    }
    fn frame(&mut self, i: u32) -> Result<(), PoseError> {
        Ok(Crowd::frame(self, i)?)
    }
}

/// Grows `bounds` by every finite vertex of `pose` placed by `world` (CPU
/// reference skinning); `scratch` holds one primitive's positions (grown
/// once when too short).
pub fn grow_bounds(
    model: &Model,
    pose: &SkinnedPose,
    world: &Matrix4<f32>,
    scratch: &mut Vec<[f32; 3]>,
    bounds: &mut Option<Bounds>,
) -> Result<(), RenderError> {
    let instances: &[MeshInstance] = &model.instances;
    for instance in instances {
        let primitives: &[MeshPrimitive] = &model.meshes[instance.mesh].primitives;
        for prim in primitives {
            scratch.resize(prim.vertex_count(), [0.0; 3]);
            pose.skin_primitive(instance, prim, scratch, None).map_err(|e| pose_error(model, e.into()))?;
            for p in scratch.iter().filter(|p| p.iter().all(|v| v.is_finite())) {
                let q = world.transform_point(&nalgebra::Point3::new(p[0], p[1], p[2]));
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

/// World-space bounds of every drawn vertex over frames
/// `first..first + frames` of `source`, or `None` when nothing is drawn.
pub fn skinned_bounds(
    model: &Model,
    source: &mut dyn FrameSource,
    first: u32,
    frames: u32,
) -> Result<Option<Bounds>, RenderError> {
    let mut scratch = Vec::new();
    let mut bounds = None;
    for i in first..first.saturating_add(frames.max(1)) {
        source.frame(i).map_err(|e| pose_error(model, e))?;
        for c in 0..source.count() {
            grow_bounds(model, &source.input(c).pose, &source.world(c), &mut scratch, &mut bounds)?;
        }
    }
    Ok(bounds)
}

/// `count` characters of `model` driven by `controller` on a grid spaced by
/// the footprint of one character's first frame (1.25 times its larger
/// horizontal extent), updated on `threads` threads (0: every core), frames
/// `1 / fps` apart; with the world-space bounds of the whole grid at frame 0.
pub fn crowd_on_grid(
    model: &Model,
    controller: Arc<Controller>,
    count: usize,
    fps: f64,
    threads: usize,
) -> Result<(Crowd, Bounds), RenderError> {
    let mut one = Crowd::new(model.rig.clone(), controller.clone(), 1, 0.0, fps, 1)
        .map_err(|e| pose_error(model, e.into()))?;
    let (lo, hi) = skinned_bounds(model, &mut one, 0, 1)?.ok_or_else(|| nothing_to_draw(model))?;
    let spacing = ((hi[0] - lo[0]).max(hi[2] - lo[2]) * 1.25).max(1e-3);
    let crowd = Crowd::new(model.rig.clone(), controller, count, spacing, fps, threads)
        .map_err(|e| pose_error(model, e.into()))?;
    // Every character's first frame lies within its own footprint moved to
    // its place (the grid spacing leaves room between them).
    let (mut glo, mut ghi) = (lo, hi);
    for world in crowd.worlds() {
        let t = world.column(3);
        for k in 0..3 {
            glo[k] = glo[k].min(lo[k] + t[k]);
            ghi[k] = ghi[k].max(hi[k] + t[k]);
        }
    }
    Ok((crowd, (glo, ghi)))
}

/// Renders frames `first_frame..first_frame + frames` of `source` (with
/// `scenery` around it, if any) and hands each frame's RGBA8 (sRGB) pixels
/// to `on_frame(index, pixels)` in order. Returns warnings worth printing.
pub fn render(
    ctx: &GpuContext,
    model: Arc<Model>,
    source: &mut dyn FrameSource,
    scenery: Option<Arc<Model>>,
    request: &HeadlessRequest,
    on_frame: &mut PixelSink,
) -> Result<Vec<String>, RenderError> {
    if request.frames == 0 {
        return Err(RenderError::Invalid("--frames must be at least 1".into()));
    }
    let (first, frames) = (request.first_frame, request.frames);
    let (lo, hi) = skinned_bounds(&model, source, first, frames)?.ok_or_else(|| nothing_to_draw(&model))?;
    let aspect = request.width as f32 / request.height.max(1) as f32;
    let camera = Camera::frame_box(lo, hi, aspect, DEFAULT_FOV_Y);
    let settings = RenderSettings {
        extent: vk::Extent2D { width: request.width, height: request.height },
        wireframe: request.wireframe,
        path: if request.vertex_skinning { VertexPath::VertexSkinning } else { VertexPath::PreSkinned },
        msaa: request.msaa,
        characters: source.count() as u32,
        passes: request.passes,
        upload: request.upload,
        skinning: request.skinning,
        dqs_split: request.dqs_split,
    };
    let mut renderer = Renderer::new(ctx, model.clone(), settings)?;
    let result = (|| {
        if let Some(s) = scenery {
            renderer.add_scenery(ctx, s)?;
        }
        source.restart().map_err(|e| pose_error(&model, e))?;
        for i in first..first + frames {
            source.frame(i).map_err(|e| pose_error(&model, e))?;
            renderer.render_frame(ctx, source, &camera, true, on_frame)?;
        }
        renderer.finish(ctx, on_frame)
    })();
    let warnings = std::mem::take(&mut renderer.warnings);
    renderer.destroy(ctx);
    result.map(|_| warnings)
}

fn pose_error(model: &Model, source: PoseError) -> RenderError {
    RenderError::Pose { file: model.file.clone(), source }
}

fn nothing_to_draw(model: &Model) -> RenderError {
    RenderError::NothingToDraw { file: model.file.clone() }
}
