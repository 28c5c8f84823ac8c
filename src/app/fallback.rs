//! The viewer without a window: when there is no display, no event loop or
//! window, or no device that can present, the model is rendered headless to
//! an animated PNG in the current folder instead (its path printed), after
//! one line saying why. Records no Vulkan: it runs `render::headless`.
//!
//! It draws what the window would have: `--characters` on a grid,
//! `--level` with its actor, the frame settings (`--passes`, `--pose`,
//! `--detail`, ...) and `--max-skinned-vertices`. Left to itself a
//! controller stands idle, so a picture of one character (or a crowd)
//! plays a clip (`--clip`, else "Walk", else the first) unless a
//! controller was asked for with `--controller` or a level drives it.

use super::scene::model_bounds;
use super::viewer::ViewOptions;
use crate::anim::FrameSource;
use crate::anim::framing::{Bounds, skinned_bounds};
use crate::anim::planar_scene::{PlanarCopy, PlanarScene};
use crate::asset::{Model, planar_rig};
use crate::character::controller::FoundController;
use crate::character::{Controller, Crowd, Script, Timeline};
use crate::render::crowd_fit::check_crowd_fits;
use crate::render::headless::{self, HeadlessRequest};
use crate::render::image_out::{self, ApngWriter};
use crate::render::renderer::RenderSettings;
use crate::render::{GpuOptions, PoseEvaluation, RenderError, with_gpu};
use crate::world::{ActorRun, Authority, FootPlacement, Level, scenery_model};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Frames of the headless fallback without `--frames`: at most this many.
const FALLBACK_MAX_FRAMES: u32 = 90;
/// Frame rate of the headless fallback.
const FALLBACK_FPS: f32 = 30.0;

/// A file-name-safe version of `text`.
fn file_part(text: &str) -> String {
    let s: String = text
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect();
    if s.is_empty() { "model".into() } else { s }
}

/// What the fallback plays: the controller (named by its file, else by
/// the level it runs in) or the clip (`None`: the rest pose).
enum Motion<'a> {
    Controller(&'a FoundController, String),
    Clip(Option<usize>),
}

impl Motion<'_> {
    /// The part of the file name after the model's.
    fn name(&self, model: &Model) -> String {
        match self {
            Motion::Controller(_, name) => name.clone(),
            Motion::Clip(clip) => clip.map_or_else(
                || "rest".to_string(),
                |c| model.clips[c].name.clone().unwrap_or_else(|| c.to_string()),
            ),
        }
    }

    /// The controller that plays it.
    fn controller(&self, model: &Model) -> anyhow::Result<Arc<Controller>> {
        Ok(match self {
            Motion::Controller((controller, _), _) => Arc::new(controller.clone()),
            Motion::Clip(clip) => Arc::new(Controller::single_clip(model, *clip, true)?),
        })
    }
}

/// Renders the model headless to `vkskin-<model>-<clip or controller>.png`
/// in the current directory after printing one line saying why; prints the
/// path. `controller` is the one the window would have run, `level` the
/// level it would have shown (checked to have a controller).
pub(super) fn fallback(
    options: &ViewOptions,
    model: &Arc<Model>,
    clip: Option<usize>,
    controller: Option<&FoundController>,
    level: Option<&Level>,
    reason: &str,
) -> anyhow::Result<()> {
    eprintln!("vkskin: {reason}: rendering headless to an animated PNG instead");
    let schedule = &options.schedule;
    let window_only = [
        ("--resize-at", !options.resize_at.is_empty()),
        ("--switch-clip-every", schedule.switch_clip_every.is_some()),
        ("--reload-every", schedule.reload_every.is_some()),
        ("--switch-method-every", schedule.switch_method_every.is_some()),
        ("--switch-controller-every", schedule.switch_controller_every.is_some()),
        ("--report-memory-every", schedule.report_memory_every.is_some()),
    ];
    let unused: Vec<&str> = window_only.iter().filter(|(_, given)| *given).map(|(flag, _)| *flag).collect();
    if !unused.is_empty() {
        eprintln!("vkskin: {} act on the window: not applied to the animated PNG", unused.join(", "));
    }
    let motion = match (controller, &options.controller, level) {
        (Some(found), Some(path), _) if options.clip.is_none() => {
            let stem = path.file_stem().map_or_else(|| "controller".into(), |s| s.to_string_lossy());
            Motion::Controller(found, stem.into_owned())
        }
        (Some(found), _, Some(level)) => Motion::Controller(found, level.name.to_string()),
        _ => Motion::Clip(clip),
    };
    let stem = Path::new(&model.file)
        .file_stem()
        .map_or_else(|| "model".into(), |s| s.to_string_lossy().into_owned());
    let out = PathBuf::from(format!("vkskin-{}-{}.png", file_part(&stem), file_part(&motion.name(model))));
    let frames = match (options.frames, &motion) {
        (Some(n), _) => n.clamp(1, 10_000) as u32,
        // The planar rig's whole loop, pose A -> B -> A.
        (None, Motion::Clip(Some(_))) if options.planar => {
            (2.0 * planar_rig::HALF_PERIOD * FALLBACK_FPS).ceil() as u32
        }
        (None, Motion::Clip(Some(c))) => {
            ((model.clips[*c].duration * FALLBACK_FPS).ceil() as u32).clamp(1, FALLBACK_MAX_FRAMES)
        }
        (None, Motion::Clip(None)) => 1,
        (None, Motion::Controller(..)) => FALLBACK_MAX_FRAMES,
    };
    // As `render` refuses it: hours of posing for a preview.
    let posed = u64::from(options.characters.max(1)) * u64::from(frames);
    if posed > headless::MAX_CHARACTER_FRAMES {
        anyhow::bail!(
            "--characters {} for {frames} frames poses {posed} character-frames without a window, more \
             than the {} one render may (fewer characters or --frames)",
            options.characters,
            headless::MAX_CHARACTER_FRAMES
        );
    }
    let (width, height) = options.size;
    let settings = RenderSettings {
        frame: options.frame,
        limits: options.limits,
        ..RenderSettings::sized(width, height)
    };
    let request = HeadlessRequest { frames, first_frame: 0, settings };
    let gpu =
        GpuOptions { validation: options.validation, device: options.device.clone(), ..Default::default() };
    let warnings = with_gpu(&gpu, |ctx| -> anyhow::Result<Vec<String>> {
        // Before a character of the crowd is posed, as the window checks it.
        check_crowd_fits(model, options.characters.max(1), settings.frame.detail, &ctx.buffer_limits)?;
        let (mut source, scenery) = source(options, model, &motion, level)?;
        let mut writer = ApngWriter::create(&out, width, height, frames, FALLBACK_FPS)?;
        // --screenshot still gets the last frame.
        let mut last = Vec::with_capacity(if options.screenshot.is_some() {
            width as usize * height as usize * 4
        } else {
            0
        });
        let warnings =
            headless::render(ctx, model.clone(), source.as_mut(), scenery, &request, &mut |_, rgba| {
                if options.screenshot.is_some() {
                    last.clear();
                    last.extend_from_slice(rgba);
                }
                writer.write_frame(rgba)
            })?;
        writer.finish()?;
        if let Some(path) = &options.screenshot {
            image_out::write_png(path, width, height, &last)?;
        }
        Ok(warnings)
    })?;
    for w in warnings {
        eprintln!("vkskin: warning: {w}");
    }
    println!("{}", out.display());
    Ok(())
}

/// Frames to draw, and the scenery around them.
type Staged = (Box<dyn FrameSource>, Option<Arc<Model>>);

/// The fallback's frames and what is drawn around them: the planar rig's
/// four copies (the quaternion one of the planar row included: in the
/// window the driven character is that one); the level's actor at its
/// first spawn (feet placed when the rig has humanoid legs); `motion`
/// played by one character or by `--characters` on a grid, on a ground as
/// in the window (shadows need somewhere to fall).
fn source(
    options: &ViewOptions,
    model: &Model,
    motion: &Motion,
    level: Option<&Level>,
) -> anyhow::Result<Staged> {
    let fps = f64::from(FALLBACK_FPS);
    let rig = model.rig.clone();
    if options.planar {
        let planar = planar_rig::planar_motion(model)?;
        let mut copies = PlanarScene::new(rig, planar, &PlanarCopy::ALL, 0.0, fps)?;
        let ground = ground_under_planar(model, &mut copies, fps)?;
        return Ok((Box::new(copies), Some(ground)));
    }
    let controller = motion.controller(model)?;
    if let Some(level) = level {
        let spawn = level.spawns.first().map_or("open", |(name, _)| *name);
        let feet = FootPlacement::humanoid(model).ok();
        let run =
            ActorRun::new(rig, controller, Script::default(), level, spawn, Authority::Animation, feet, fps)?;
        return Ok((Box::new(run), Some(Arc::new(scenery_model(level)?))));
    }
    if options.characters > 1 {
        // The renderer follows the crowd onto the GPU (`FramePoses::gpu_pose`).
        let gpu = options.frame.pose == PoseEvaluation::Gpu;
        let grid = Crowd::on_grid(rig, controller, options.characters as usize, fps, 0, gpu)
            .map_err(|e| anyhow::anyhow!("{}: {e}", model.file))?;
        let (crowd, grid) = grid.ok_or_else(|| RenderError::NothingToDraw { file: model.file.clone() })?;
        return Ok((Box::new(crowd), Some(ground_under(model, Some(grid))?)));
    }
    let timeline = match motion {
        Motion::Controller(..) => Timeline::simulating(rig, controller, Script::default(), fps)?,
        Motion::Clip(clip) => {
            let start = clip.map_or(0.0, |c| model.clips[c].start());
            Timeline::seeking(rig, controller, f64::from(start), fps)?
        }
    };
    Ok((Box::new(timeline), Some(ground_under(model, None)?)))
}

/// The window's ground under `model` outside a level: its top at the
/// lowest point the model reaches over its clips, reaching past the
/// crowd's `grid` (`Crowd::on_grid`'s bounds) when there is one.
/// Shadows need somewhere to fall (`render --passes 5` draws it too).
pub(crate) fn ground_under(model: &Model, grid: Option<Bounds>) -> anyhow::Result<Arc<Model>> {
    let (lo, hi) =
        model_bounds(model)?.ok_or_else(|| RenderError::NothingToDraw { file: model.file.clone() })?;
    let (lo, hi) = match grid {
        Some((grid_lo, grid_hi)) => (
            [grid_lo[0].min(lo[0]), lo[1], grid_lo[2].min(lo[2])],
            [grid_hi[0].max(hi[0]), hi[1], grid_hi[2].max(hi[2])],
        ),
        None => (lo, hi),
    };
    ground(lo, hi)
}

/// The window's ground under the planar rig's `copies` (played at `fps`)
/// over their whole loop; the copies are left where the loop ends
/// (`render::headless` restarts them).
pub(crate) fn ground_under_planar(
    model: &Model,
    copies: &mut PlanarScene,
    fps: f64,
) -> anyhow::Result<Arc<Model>> {
    let frames = (2.0 * f64::from(planar_rig::HALF_PERIOD) * fps).ceil() as u32;
    let bounds =
        skinned_bounds(model, copies, 0, frames).map_err(|e| anyhow::anyhow!("{}: {e}", model.file))?.bounds;
    let (lo, hi) = bounds.ok_or_else(|| RenderError::NothingToDraw { file: model.file.clone() })?;
    ground(lo, hi)
}

/// The floor under everything within `lo..hi`, its top at `lo`'s height.
fn ground(lo: [f32; 3], hi: [f32; 3]) -> anyhow::Result<Arc<Model>> {
    Ok(Arc::new(scenery_model(&Level::ground(lo, hi, 1))?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_parts() {
        assert_eq!(file_part("Cesium Man"), "Cesium_Man");
        assert_eq!(file_part("walk-2"), "walk-2");
        assert_eq!(file_part(""), "model");
    }
}
