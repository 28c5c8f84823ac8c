//! The viewer without a window: when there is no display, no event loop or
//! window, or no device that can present, the model is rendered headless to
//! an animated PNG in the current folder instead (its path printed), after
//! one line saying why. Records no Vulkan: it runs `render::headless`.

use super::viewer::ViewOptions;
use crate::anim::FrameSource;
use crate::anim::planar_scene::{PlanarCopy, PlanarScene};
use crate::asset::{Model, planar_rig};
use crate::character::{Controller, Timeline};
use crate::render::headless::{self, HeadlessRequest};
use crate::render::image_out::{self, ApngWriter};
use crate::render::renderer::RenderSettings;
use crate::render::{GpuOptions, RenderError, with_gpu};
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

/// Renders the model headless to `vkskin-<model>-<clip>.png` in the current
/// directory after printing one line saying why; prints the path.
pub(super) fn fallback(
    options: &ViewOptions,
    model: &Arc<Model>,
    clip: Option<usize>,
    reason: &str,
) -> anyhow::Result<()> {
    eprintln!("vkskin: {reason}: rendering headless to an animated PNG instead");
    let stem = Path::new(&model.file)
        .file_stem()
        .map_or_else(|| "model".into(), |s| s.to_string_lossy().into_owned());
    let clip_name = clip
        .map_or_else(|| "rest".to_string(), |c| model.clips[c].name.clone().unwrap_or_else(|| c.to_string()));
    let out = PathBuf::from(format!("vkskin-{}-{}.png", file_part(&stem), file_part(&clip_name)));
    let frames = match (options.frames, clip) {
        (Some(n), _) => n.clamp(1, 10_000) as u32,
        // The planar rig's whole loop, pose A -> B -> A.
        (None, Some(_)) if options.planar => (2.0 * planar_rig::HALF_PERIOD * FALLBACK_FPS).ceil() as u32,
        (None, Some(c)) => {
            ((model.clips[c].duration * FALLBACK_FPS).ceil() as u32).clamp(1, FALLBACK_MAX_FRAMES)
        }
        (None, None) => 1,
    };
    let (width, height) = options.size;
    let settings = RenderSettings::sized(width, height);
    let request = HeadlessRequest { frames, first_frame: 0, settings };
    let start = clip.map_or(0.0, |c| model.clips[c].start());
    let controller = Arc::new(Controller::single_clip(model, clip, true)?);
    let fps = f64::from(FALLBACK_FPS);
    // `--planar`: all four copies, the quaternion one of the planar row
    // included (in the window the driven character is that one).
    let mut source: Box<dyn FrameSource> = if options.planar {
        let motion = planar_rig::planar_motion(model)?;
        Box::new(PlanarScene::new(model.rig.clone(), motion, &PlanarCopy::ALL, 0.0, fps)?)
    } else {
        Box::new(Timeline::seeking(model.rig.clone(), controller, f64::from(start), fps)?)
    };
    let gpu =
        GpuOptions { validation: options.validation, device: options.device.clone(), ..Default::default() };
    let warnings = with_gpu(&gpu, |ctx| -> Result<Vec<String>, RenderError> {
        let mut writer = ApngWriter::create(&out, width, height, frames, FALLBACK_FPS)?;
        // --screenshot still gets the last frame.
        let mut last = Vec::with_capacity(if options.screenshot.is_some() {
            width as usize * height as usize * 4
        } else {
            0
        });
        let warnings =
            headless::render(ctx, model.clone(), source.as_mut(), None, &request, &mut |_, rgba| {
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
