//! Headless rendering: pose a character frame by frame (a `Timeline`),
//! frame the skinned bounds of all of its frames, render each frame
//! offscreen and hand the pixels out in order (for PNG / animated PNG output).

use super::camera::{Camera, DEFAULT_FOV_Y};
use super::mesh_pass::VertexPath;
use super::renderer::{PixelSink, RenderSettings, Renderer};
use super::skin_pass::SkinInput;
use crate::anim::{MeshInstance, MeshPrimitive, SkinnedPose};
use crate::asset::Model;
use crate::character::Timeline;
use crate::gpu::GpuContext;
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
}

/// Grows `bounds` by every finite vertex of `pose` (CPU reference skinning);
/// `scratch` holds one primitive's positions (grown once when too short).
pub fn grow_bounds(
    model: &Model,
    pose: &SkinnedPose,
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

/// Scene-space bounds of every drawn vertex over frames
/// `first..first + frames` of `timeline`, or `None` when nothing is drawn.
pub fn skinned_bounds(
    model: &Model,
    timeline: &mut Timeline,
    first: u32,
    frames: u32,
) -> Result<Option<Bounds>, String> {
    let mut scratch = Vec::new();
    let mut bounds = None;
    for i in first..first.saturating_add(frames.max(1)) {
        let character = timeline.frame(i).map_err(|e| format!("{}: {e}", model.file))?;
        grow_bounds(model, &character.pose(), &mut scratch, &mut bounds)?;
    }
    Ok(bounds)
}

/// Renders frames `first_frame..first_frame + frames` of `timeline` and
/// hands each frame's RGBA8 (sRGB) pixels to `on_frame(index, pixels)` in
/// order. Returns warnings worth printing.
pub fn render(
    ctx: &GpuContext,
    model: Arc<Model>,
    timeline: &mut Timeline,
    request: &HeadlessRequest,
    on_frame: &mut PixelSink,
) -> Result<Vec<String>, String> {
    if request.frames == 0 {
        return Err("--frames must be at least 1".into());
    }
    let (first, frames) = (request.first_frame, request.frames);
    let (lo, hi) = skinned_bounds(&model, timeline, first, frames)?
        .ok_or_else(|| format!("{}: nothing to draw (no mesh instances)", model.file))?;
    let aspect = request.width as f32 / request.height.max(1) as f32;
    let camera = Camera::frame_box(lo, hi, aspect, DEFAULT_FOV_Y);
    let settings = RenderSettings {
        extent: vk::Extent2D { width: request.width, height: request.height },
        wireframe: request.wireframe,
        path: if request.vertex_skinning { VertexPath::VertexSkinning } else { VertexPath::PreSkinned },
        msaa: request.msaa,
    };
    let mut renderer = Renderer::new(ctx, model.clone(), settings).map_err(|e| e.to_string())?;
    let result = (|| {
        timeline.restart().map_err(|e| e.to_string())?;
        for i in first..first + frames {
            let character = timeline.frame(i).map_err(|e| format!("{}: {e}", model.file))?;
            let input = SkinInput { pose: character.pose(), version: character.version() };
            renderer.render_frame(ctx, input, &Matrix4::identity(), &camera, true, on_frame)?;
        }
        renderer.finish(ctx, on_frame)
    })();
    let warnings = std::mem::take(&mut renderer.warnings);
    renderer.destroy(ctx);
    result.map(|_| warnings)
}
