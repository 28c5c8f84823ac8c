//! Headless rendering: pose a character frame by frame (a `FrameSource`: a
//! `Timeline`, or an actor moving through a level), frame the skinned
//! bounds of all of its frames in world space, render each frame offscreen
//! (with the level's scenery, if any) and hand the pixels out in order (for
//! PNG / animated PNG output).

use super::camera::{Camera, DEFAULT_FOV_Y};
use super::mesh_pass::VertexPath;
use super::renderer::{PixelSink, RenderSettings, Renderer};
use super::skin_pass::SkinInput;
use crate::anim::{MeshInstance, MeshPrimitive, SkinnedPose, SkinningMethod};
use crate::asset::Model;
use crate::character::Timeline;
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
    /// How influences are blended (the camera frames the linear-blend bounds).
    pub skinning: SkinningMethod,
}

/// Frames of a character to render: its pose, the pose's version and where
/// the character stands (world transform, applied after skinning).
pub trait FrameSource {
    /// Goes back to before frame 0.
    fn restart(&mut self) -> Result<(), String>;
    /// Poses frame `i` (frames come in order after a restart).
    fn frame(&mut self, i: u32) -> Result<(SkinnedPose<'_>, u64, Matrix4<f32>), String>;
}

impl FrameSource for Timeline {
    fn restart(&mut self) -> Result<(), String> {
        Timeline::restart(self).map_err(|e| e.to_string())
    }
    fn frame(&mut self, i: u32) -> Result<(SkinnedPose<'_>, u64, Matrix4<f32>), String> {
        let c = Timeline::frame(self, i).map_err(|e| e.to_string())?;
        Ok((c.pose(), c.version(), Matrix4::identity()))
    }
}

impl FrameSource for ActorRun {
    fn restart(&mut self) -> Result<(), String> {
        ActorRun::restart(self)
    }
    fn frame(&mut self, i: u32) -> Result<(SkinnedPose<'_>, u64, Matrix4<f32>), String> {
        let a = ActorRun::frame(self, i)?;
        Ok((a.character().pose(), a.character().version(), a.transform()))
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
) -> Result<(), String> {
    let instances: &[MeshInstance] = &model.instances;
    for instance in instances {
        let primitives: &[MeshPrimitive] = &model.meshes[instance.mesh].primitives;
        for prim in primitives {
            scratch.resize(prim.vertex_count(), [0.0; 3]);
            pose.skin_primitive(instance, prim, scratch, None).map_err(|e| format!("{}: {e}", model.file))?;
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
) -> Result<Option<Bounds>, String> {
    let mut scratch = Vec::new();
    let mut bounds = None;
    for i in first..first.saturating_add(frames.max(1)) {
        let (pose, _, world) = source.frame(i).map_err(|e| format!("{}: {e}", model.file))?;
        grow_bounds(model, &pose, &world, &mut scratch, &mut bounds)?;
    }
    Ok(bounds)
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
) -> Result<Vec<String>, String> {
    if request.frames == 0 {
        return Err("--frames must be at least 1".into());
    }
    let (first, frames) = (request.first_frame, request.frames);
    let (lo, hi) = skinned_bounds(&model, source, first, frames)?
        .ok_or_else(|| format!("{}: nothing to draw (no mesh instances)", model.file))?;
    let aspect = request.width as f32 / request.height.max(1) as f32;
    let camera = Camera::frame_box(lo, hi, aspect, DEFAULT_FOV_Y);
    let settings = RenderSettings {
        extent: vk::Extent2D { width: request.width, height: request.height },
        wireframe: request.wireframe,
        path: if request.vertex_skinning { VertexPath::VertexSkinning } else { VertexPath::PreSkinned },
        msaa: request.msaa,
        skinning: request.skinning,
    };
    let mut renderer = Renderer::new(ctx, model.clone(), settings).map_err(|e| e.to_string())?;
    let result = (|| {
        if let Some(s) = scenery {
            renderer.add_scenery(ctx, s).map_err(|e| e.to_string())?;
        }
        source.restart()?;
        for i in first..first + frames {
            let (pose, version, world) = source.frame(i).map_err(|e| format!("{}: {e}", model.file))?;
            renderer.render_frame(ctx, SkinInput { pose, version }, &world, &camera, true, on_frame)?;
        }
        renderer.finish(ctx, on_frame)
    })();
    let warnings = std::mem::take(&mut renderer.warnings);
    renderer.destroy(ctx);
    result.map(|_| warnings)
}
