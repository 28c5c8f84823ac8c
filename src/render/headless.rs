//! Headless rendering: evaluate a clip at a run of times, frame the skinned
//! bounds of all of them, render each frame offscreen and hand the pixels
//! out in order (for PNG / animated PNG output).

use super::camera::{Camera, DEFAULT_FOV_Y};
use super::mesh_pass::VertexPath;
use super::renderer::{PixelSink, RenderSettings, Renderer};
use crate::asset::Model;
use crate::gpu::GpuContext;
use crate::scene::Evaluator;
use ash::vk;
use nalgebra::Matrix4;
use std::sync::Arc;

/// An axis-aligned box: (min, max).
pub type Bounds = ([f32; 3], [f32; 3]);

/// What to render.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadlessRequest {
    /// Clip index; `None` renders the rest pose.
    pub clip: Option<usize>,
    /// Time of the first frame, seconds on the file's timeline.
    pub start_time: f32,
    /// Number of frames (at least 1).
    pub frames: u32,
    /// Frames per second (time step between frames).
    pub fps: f32,
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

impl HeadlessRequest {
    /// The clip time of frame `i`.
    pub fn time(&self, i: u32) -> f32 {
        self.start_time + i as f32 / self.fps
    }
}

/// Poses `evaluator` for frame `i` of `request`.
fn pose(model: &Model, evaluator: &mut Evaluator, request: &HeadlessRequest, i: u32) -> Result<(), String> {
    match request.clip {
        Some(c) => evaluator.set_clip_time(model, c, request.time(i)),
        None => evaluator.set_rest(model),
    }
    .map_err(|e| format!("{}: {e}", model.file))
}

/// Scene-space bounds of every drawn vertex over every frame of `request`
/// (CPU reference skinning), or `None` when nothing is drawn.
pub fn skinned_bounds(
    model: &Model,
    evaluator: &mut Evaluator,
    request: &HeadlessRequest,
) -> Result<Option<Bounds>, String> {
    let largest =
        model.meshes.iter().flat_map(|m| &m.primitives).map(|p| p.vertex_count()).max().unwrap_or(0);
    let mut positions = vec![[0.0f32; 3]; largest];
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    // The rest pose does not change: one evaluation suffices.
    let frames = if request.clip.is_some() { request.frames.max(1) } else { 1 };
    for i in 0..frames {
        pose(model, evaluator, request, i)?;
        for instance in &model.instances {
            for prim in &model.meshes[instance.mesh].primitives {
                let out = &mut positions[..prim.vertex_count()];
                evaluator
                    .skin_primitive(instance, prim, out, None)
                    .map_err(|e| format!("{}: {e}", model.file))?;
                for p in out.iter().filter(|p| p.iter().all(|v| v.is_finite())) {
                    for k in 0..3 {
                        lo[k] = lo[k].min(p[k]);
                        hi[k] = hi[k].max(p[k]);
                    }
                }
            }
        }
    }
    Ok((lo[0] <= hi[0]).then_some((lo, hi)))
}

/// Renders `request` and hands each frame's RGBA8 (sRGB) pixels to
/// `on_frame(index, pixels)` in order. Returns warnings worth printing.
pub fn render(
    ctx: &GpuContext,
    model: Arc<Model>,
    request: &HeadlessRequest,
    on_frame: &mut PixelSink,
) -> Result<Vec<String>, String> {
    if request.frames == 0 {
        return Err("--frames must be at least 1".into());
    }
    if !(request.fps.is_finite() && request.fps > 0.0) {
        return Err("--fps must be a positive number".into());
    }
    let mut evaluator = Evaluator::new(&model);
    let (lo, hi) = skinned_bounds(&model, &mut evaluator, request)?
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
        for i in 0..request.frames {
            pose(&model, &mut evaluator, request, i)?;
            renderer.render_frame(ctx, &evaluator, &Matrix4::identity(), &camera, true, on_frame)?;
        }
        renderer.finish(ctx, on_frame)
    })();
    let warnings = std::mem::take(&mut renderer.warnings);
    renderer.destroy(ctx);
    result.map(|_| warnings)
}
