//! Headless rendering: pose a character frame by frame (a `FrameSource`: a
//! `Timeline`, or an actor moving through a level), frame the skinned
//! bounds of all of its frames in world space, render each frame offscreen
//! (with the level's scenery, if any) and hand the pixels out in order (for
//! PNG / animated PNG output).

use super::camera::{Camera, DEFAULT_FOV_Y};
use super::error::RenderError;
use super::mesh_pass::VertexPath;
use super::renderer::{PixelSink, RenderSettings, Renderer};
use super::skin_pass::PaletteUpload;
use super::skinning::DqsSplit;
use crate::anim::SkinningMethod;
use crate::anim::frame_poses::{FrameSource, PoseError, skinned_bounds};
use crate::asset::Model;
use crate::gpu::GpuContext;
use ash::vk;
use std::sync::Arc;

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
    let bounds = skinned_bounds(&model, source, first, frames).map_err(|e| pose_error(&model, e))?;
    let (lo, hi) = bounds.ok_or_else(|| nothing_to_draw(&model))?;
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
