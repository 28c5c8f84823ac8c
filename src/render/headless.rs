//! Headless rendering: pose a character frame by frame (a `FrameSource`: a
//! `Timeline`, or an actor moving through a level), frame the skinned
//! bounds of all of its frames in world space, render each frame offscreen
//! (with the level's scenery, if any) and hand the pixels out in order (for
//! PNG / animated PNG output). It never opens a window.

use super::camera::{Camera, DEFAULT_FOV_Y};
use super::draw_order::{OverBudget, PIXEL_ERROR};
use super::error::RenderError;
use super::frame_settings::DrawDetail;
use super::gpu_frame_budget::GpuFrameBudget;
use super::image_out::{self, ApngWriter};
use super::offscreen::PixelSink;
use super::renderer::{RenderSettings, Renderer};
use crate::anim::frame_poses::{FrameSource, PoseError};
use crate::anim::framing::skinned_bounds;
use crate::asset::Model;
use crate::atomic_file::{AtomicFile, OutputError};
use crate::gpu::GpuContext;
use ash::vk;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

/// Most character-frames one headless render poses in all (characters
/// times frames posed): 100000 characters for 100 frames, or 1000 for
/// 10000. A few zeros too many must not run for hours.
pub const MAX_CHARACTER_FRAMES: u64 = 10_000_000;

/// What to render.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadlessRequest {
    /// Number of frames (at least 1).
    pub frames: u32,
    /// First frame of the timeline to draw (frames before it are only simulated).
    pub first_frame: u32,
    /// How frames are drawn (the camera frames the linear-blend bounds);
    /// `characters` is the source's count, whatever it says here.
    pub settings: RenderSettings,
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
    let bounds = skinned_bounds(&model, source, first, frames).map_err(|e| pose_error(&model, e))?.bounds;
    let (lo, hi) = bounds.ok_or_else(|| nothing_to_draw(&model))?;
    let extent = request.settings.extent;
    let aspect = extent.width as f32 / extent.height.max(1) as f32;
    let camera = Camera::frame_box(lo, hi, aspect, DEFAULT_FOV_Y);
    let settings = RenderSettings { characters: source.count() as u32, ..request.settings };
    let mut renderer = Renderer::new(ctx, model.clone(), settings)?;
    let result = (|| {
        if let Some(s) = scenery {
            renderer.add_scenery(ctx, s)?;
        }
        source.restart().map_err(|e| pose_error(&model, e))?;
        // The frame whose levels the detail limits coarsened most, which
        // limits its levels within half a pixel were over, and the
        // triangles the GPU frame budget allowed it.
        let mut coarsest = (PIXEL_ERROR, first, renderer.over_budget(), None);
        for i in first..first + frames {
            renderer.pose_foreseen(source, i, &camera).map_err(|e| pose_error(&model, e))?;
            renderer.render_frame(ctx, source, &camera, true, on_frame)?;
            if renderer.detail_pixel_error() > coarsest.0 {
                let steered = renderer.gpu_frame_triangles();
                coarsest = (renderer.detail_pixel_error(), i, renderer.over_budget(), steered);
            }
        }
        // (Full detail has no level to coarsen: the command says so.)
        let levels = renderer.settings().frame.detail == DrawDetail::Auto;
        if let Some(warning) = renderer.gpu_frame_steering().and_then(|s| gpu_frame_budget_warning(s, levels))
        {
            renderer.warnings.push(warning);
        }
        if coarsest.0 > PIXEL_ERROR {
            let (pixels, frame, over, steered) = coarsest;
            let most = over_limits(&renderer, over, steered);
            renderer.warnings.push(if pixels.is_finite() {
                format!(
                    "frame {frame} drew its characters within {pixels:.2} pixels of their full meshes, not \
                     {PIXEL_ERROR}: within {PIXEL_ERROR} they {most}"
                )
            } else {
                format!("frame {frame} drew every character at its coarsest level, and they still {most}")
            });
        }
        renderer.finish(ctx, on_frame)
    })();
    let warnings = std::mem::take(&mut renderer.warnings);
    renderer.destroy(ctx);
    result.map(|_| warnings)
}

/// The limits a frame's characters were over, in words: "skin more than N
/// vertices (--max-skinned-vertices)", "draw more than N triangles
/// (--max-triangles)", "draw more than the N triangles the GPU frame
/// budget allowed (--gpu-frame-budget)" (`steered`: those it allowed that
/// frame), or several, joined by "and".
fn over_limits(renderer: &Renderer, over: OverBudget, steered: Option<u64>) -> String {
    let limits = renderer.detail_limits();
    let vertices = over.vertices.then(|| {
        format!("skin more than {} vertices (--max-skinned-vertices)", renderer.max_skinned_vertices())
    });
    let triangles = over.triangles.then(|| {
        format!("draw more than {} triangles (--max-triangles)", limits.triangles.unwrap_or(u64::MAX))
    });
    let gpu_frame = (over.gpu_frame).then(|| {
        let budget_ms = limits.gpu_frame.unwrap_or_default().as_secs_f64() * 1e3;
        format!(
            "draw more than the {} triangles the GPU frame budget of {budget_ms:.1} ms allowed \
             (--gpu-frame-budget)",
            steered.unwrap_or(u64::MAX)
        )
    });
    let named: Vec<String> = [vertices, triangles, gpu_frame].into_iter().flatten().collect();
    named.join(" and ")
}

/// What a render says of its GPU frame budget: that it was not applied
/// where no frame was measured (and the `levels` could have been
/// coarsened), or, where the last measured frame took longer than the
/// budget, how long, and why the steering could not help when its cause
/// was not the characters' triangles.
fn gpu_frame_budget_warning(steering: &GpuFrameBudget, levels: bool) -> Option<String> {
    let budget = steering.budget();
    let Some(frame_us) = steering.last_frame_us() else {
        return levels.then(|| {
            format!(
                "the GPU frame budget ({:.1} ms, --gpu-frame-budget) was not applied: no frame's GPU time was \
                 measured (the first is measured as the third frame is recorded)",
                budget.as_secs_f64() * 1e3
            )
        });
    };
    if frame_us <= budget.as_secs_f64() * 1e6 {
        return None;
    }
    let why = match (steering.triangles_matter(), steering.cost()) {
        (Some(false), _) => {
            ": the characters' triangles are not what takes that time (the target size, the passes or the \
             scenery are), so their levels were left as they were"
        }
        (_, Some(cost)) if cost.fixed_part_over(budget) => {
            ": the part no coarsening removes (skinning, posing, the passes' fill) is over it, so fewer \
             characters or passes would keep it, or a larger budget"
        }
        _ => "",
    };
    // The split, once frames drew counts apart: how much no coarsening removes.
    let cost = steering.cost().map(|c| format!(" (its frames cost {})", c.describe())).unwrap_or_default();
    Some(format!(
        "the GPU frame budget of {:.1} ms (--gpu-frame-budget) was not kept: the last measured frame took \
         {:.1} ms on the GPU{cost}{why}",
        budget.as_secs_f64() * 1e3,
        frame_us / 1e3
    ))
}

fn pose_error(model: &Model, source: PoseError) -> RenderError {
    RenderError::Pose { file: model.file.clone(), source }
}

fn nothing_to_draw(model: &Model) -> RenderError {
    RenderError::NothingToDraw { file: model.file.clone() }
}

/// [`render`] into the file `out`: one frame as a PNG, more as an animated
/// PNG played at `fps`. The file is written to a temporary file created
/// before rendering (a bad path fails at once) and renamed into place once
/// complete: a failed or killed render leaves no truncated image behind.
/// Returns warnings worth printing.
pub fn render_to_file(
    ctx: &GpuContext,
    model: Arc<Model>,
    source: &mut dyn FrameSource,
    scenery: Option<Arc<Model>>,
    request: &HeadlessRequest,
    out: &Path,
    fps: f32,
) -> Result<Vec<String>, RenderError> {
    let name = out.display().to_string();
    let vk::Extent2D { width, height } = request.settings.extent;
    let file = AtomicFile::create(out)?;
    let mut writer = file.writer()?;
    let warnings = if request.frames == 1 {
        let mut written = false;
        render(ctx, model, source, scenery, request, &mut |_, rgba| {
            if std::mem::replace(&mut written, true) {
                return Err(RenderError::Invalid("more than one frame for a PNG".into()));
            }
            image_out::write_png_to(&mut writer, &name, width, height, rgba)
        })?
    } else {
        let mut apng = ApngWriter::new(&mut writer, &name, width, height, request.frames, fps)?;
        let warnings = render(ctx, model, source, scenery, request, &mut |_, rgba| apng.write_frame(rgba))?;
        apng.finish()?;
        warnings
    };
    writer.flush().map_err(|e| OutputError::new(out, "write", e))?;
    drop(writer);
    file.commit()?;
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The warning of a render whose frames took longer than the GPU
    /// frame budget names the last frame's time, and, where the steering
    /// found the triangles were not the cost, why it left the levels.
    #[test]
    fn a_budget_not_kept_is_named_with_its_cause() {
        let mut steering = GpuFrameBudget::new(Duration::from_millis(10));
        let budget_not_kept = |steering: &GpuFrameBudget| gpu_frame_budget_warning(steering, true);
        assert_eq!(
            budget_not_kept(&steering).as_deref(),
            Some(
                "the GPU frame budget (10.0 ms, --gpu-frame-budget) was not applied: no frame's GPU time was \
                 measured (the first is measured as the third frame is recorded)"
            ),
            "nothing measured"
        );
        assert_eq!(gpu_frame_budget_warning(&steering, false), None, "no levels to coarsen: said elsewhere");
        // Triangles that cost a lot: coarsened, not kept yet.
        steering.measured(30_000.0, 1_000_000);
        assert_eq!(
            budget_not_kept(&steering).as_deref(),
            Some(
                "the GPU frame budget of 10.0 ms (--gpu-frame-budget) was not kept: the last measured frame took 30.0 ms on the GPU"
            )
        );
        // A frame as long with half the triangles: they are not the cost.
        steering.measured(29_990.0, 500_000);
        let warning = budget_not_kept(&steering).unwrap();
        assert!(warning.ends_with("so their levels were left as they were"), "{warning}");
        // Two counts apart: the frames' fixed part is known and named.
        let cost = steering.cost().expect("frames drew counts apart").describe();
        assert!(
            warning.contains(&format!("took 30.0 ms on the GPU (its frames cost {cost}): ")),
            "{warning}"
        );
        assert_eq!(steering.triangles(), Some(u64::MAX));
        steering.measured(8_000.0, 1_000_000);
        assert_eq!(budget_not_kept(&steering), None, "kept");
        // Over the budget before a triangle (lavapipe's frames of 400
        // characters): fewer characters or passes would keep it.
        let mut steering = GpuFrameBudget::new(Duration::from_millis(40));
        steering.measured(885_666.0, 1_381_808);
        steering.measured(92_200.0, 55_968);
        assert_eq!(
            budget_not_kept(&steering).as_deref(),
            Some(
                "the GPU frame budget of 40.0 ms (--gpu-frame-budget) was not kept: the last measured frame took \
                 92.2 ms on the GPU (its frames cost 58.7 ms + 598 ns a triangle): the part no coarsening \
                 removes (skinning, posing, the passes' fill) is over it, so fewer characters or passes would \
                 keep it, or a larger budget"
            )
        );
    }
}
