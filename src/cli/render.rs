//! `vkskin render`: headless rendering of one frame (PNG) or an animation
//! (animated PNG), on the chosen Vulkan device.

use super::args::RenderArgs;
use crate::asset::{self, Model, controller::find_controller};
use crate::character::{Controller, Crowd, Script, Timeline};
use crate::gpu::{GpuContext, GpuOptions};
use crate::render::headless::FrameSource;
use crate::render::headless::{self, HeadlessRequest};
use crate::render::image_out::{self, ApngWriter};
use crate::render::renderer::PASS_SETUPS;
use crate::render::skin_pass::PaletteUpload;
use crate::world::{ActorRun, Authority, FootPlacement, Level, scenery_model};
use std::path::Path;
use std::sync::Arc;

/// Largest accepted width or height.
const MAX_SIZE: u32 = 16384;
/// Most characters `--characters` accepts.
const MAX_CHARACTERS: u32 = 100_000;

/// Parses `WIDTHxHEIGHT` (e.g. `640x480`).
pub fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("bad --size \"{text}\": expected WIDTHxHEIGHT, e.g. 640x480, each 1..={MAX_SIZE}");
    let (w, h) = text.trim().split_once(['x', 'X']).ok_or_else(bad)?;
    let w: u32 = w.trim().parse().map_err(|_| bad())?;
    let h: u32 = h.trim().parse().map_err(|_| bad())?;
    if w == 0 || h == 0 || w > MAX_SIZE || h > MAX_SIZE {
        return Err(bad());
    }
    Ok((w, h))
}

/// Runs the command; the error is one printable line.
pub fn run(args: &RenderArgs) -> Result<(), String> {
    let (width, height) = parse_size(&args.size)?;
    let frames = args.frames.unwrap_or(1);
    if frames == 0 {
        return Err("--frames must be at least 1".into());
    }
    if !(args.fps.is_finite() && args.fps > 0.0) {
        return Err(format!("--fps must be a positive number, not {}", args.fps));
    }
    if let Some(t) = args.time
        && !t.is_finite()
    {
        return Err(format!("--time must be a finite number, not {t}"));
    }
    let upload = PaletteUpload::from_name(&args.upload)
        .ok_or_else(|| format!("bad --upload \"{}\": expected inplace, staged or dirty", args.upload))?;
    if !PASS_SETUPS.contains(&args.passes) {
        return Err(format!(
            "bad --passes {}: 1 (main), 2 (depth prepass + main) or 5 (4 shadow cascades + main)",
            args.passes
        ));
    }
    if args.characters == 0 || args.characters > MAX_CHARACTERS {
        return Err(format!("bad --characters {}: 1..={MAX_CHARACTERS}", args.characters));
    }
    let model = asset::load(Path::new(&args.model)).map_err(|e| e.to_string())?;
    let (mut source, first_frame, scenery) = frames_of(&model, args, frames)?;
    let request = HeadlessRequest {
        frames,
        first_frame,
        width,
        height,
        wireframe: args.wireframe,
        vertex_skinning: args.vertex_skinning,
        msaa: true,
        passes: args.passes,
        upload,
        skinning: args.skinning_method.into(),
    };
    for w in &model.warnings {
        eprintln!("vkskin: warning: {}: {w}", model.file);
    }
    let out = Path::new(&args.out);
    let options = GpuOptions {
        validation: args.validation,
        device: args.device.clone(),
        announce_device: true,
        ..Default::default()
    };
    let ctx = GpuContext::new(&options, &|_, _, _, _| true).map_err(|e| e.to_string())?;
    let model = Arc::new(model);
    let name = out.display().to_string();
    // The output is created before rendering, so a bad path fails at once.
    let result = if frames == 1 {
        let mut file = Some(image_out::create_file(out)?);
        headless::render(&ctx, model, source.as_mut(), scenery, &request, &mut |_, rgba| {
            let file = file.take().ok_or("more than one frame for a PNG")?;
            image_out::write_png_to(file, &name, width, height, rgba)
        })
    } else {
        let mut writer = ApngWriter::create(out, width, height, frames, args.fps)?;
        headless::render(&ctx, model, source.as_mut(), scenery, &request, &mut |_, rgba| {
            writer.write_frame(rgba)
        })
        .and_then(|w| writer.finish().map(|_| w))
    };
    if result.is_err() {
        // Do not leave a truncated image behind.
        let _ = std::fs::remove_file(out);
    }
    // Destroyed before the messages are read: leaks are reported then.
    let messages = ctx.finish();
    let warnings = result?;
    for w in warnings {
        eprintln!("vkskin: warning: {w}");
    }
    if !messages.is_empty() {
        return Err(format!("{} validation message(s); the first: {}", messages.len(), messages[0]));
    }
    eprintln!(
        "vkskin: wrote {} ({frames} frame{}, {width}x{height})",
        out.display(),
        if frames == 1 { "" } else { "s" }
    );
    Ok(())
}

/// What a level render draws around the character.
type Scenery = Option<Arc<Model>>;

/// The frames to draw, the first one and the scenery: a controller
/// simulated from 0 s (`--controller`, `--time` skipping ahead; in a level
/// with `--level`), else one clip sought to each frame's time (from
/// `--time`, default the clip's first key; the rest pose without a clip).
fn frames_of(
    model: &Model,
    args: &RenderArgs,
    frames: u32,
) -> Result<(Box<dyn FrameSource>, u32, Scenery), String> {
    if let Some(level) = &args.level {
        let path =
            args.controller.as_ref().ok_or("--level needs --controller (what drives the character)")?;
        let (controller, _) = find_controller(model, None, Some(Path::new(path)))?.ok_or("no controller")?;
        let script = Script::parse(&args.sets, &controller)?;
        let authority: Authority = args.authority.parse()?;
        let level = Level::named(level)?;
        let feet = FootPlacement::humanoid(model)
            .map_err(|e| eprintln!("vkskin: {}: {e}: no foot IK", model.file))
            .ok();
        let fps = f64::from(args.fps);
        let run = ActorRun::new(
            model.rig.clone(),
            Arc::new(controller),
            script,
            &level,
            &args.spawn,
            authority,
            feet,
            fps,
        )?;
        let first = first_frame(args, frames)?;
        return Ok((Box::new(run), first, Some(Arc::new(scenery_model(&level)?))));
    }
    let (timeline, first) = timeline(model, args, frames)?;
    if args.characters > 1 {
        return Ok((Box::new(crowd(model, args, timeline)?), first, None));
    }
    Ok((Box::new(timeline), first, None))
}

/// `--characters N`: N characters playing what `timeline` plays, each from
/// its own phase, on a grid.
fn crowd(model: &Model, args: &RenderArgs, timeline: Timeline) -> Result<Crowd, String> {
    if !args.sets.is_empty() {
        return Err(
            "--set is not supported with --characters (each character would need its own script)".into()
        );
    }
    let controller = timeline.controller().clone();
    let count = args.characters as usize;
    Ok(headless::crowd_on_grid(model, controller, count, f64::from(args.fps), 0)?.0)
}

/// The first frame drawn of a simulation from 0 s: `--time` at `--fps`,
/// leaving room for `frames` frames after it.
fn first_frame(args: &RenderArgs, frames: u32) -> Result<u32, String> {
    let first = (f64::from(args.time.unwrap_or(0.0)).max(0.0) * f64::from(args.fps)).round();
    if first > f64::from(u32::MAX - frames) {
        return Err(format!("--time {} is too far ahead", args.time.unwrap_or(0.0)));
    }
    Ok(first as u32)
}

/// A clip or controller played frame by frame without a level.
fn timeline(model: &Model, args: &RenderArgs, frames: u32) -> Result<(Timeline, u32), String> {
    let fps = f64::from(args.fps);
    if let Some(path) = &args.controller {
        if args.clip.is_some() {
            return Err(
                "--clip and --controller exclude each other (the controller chooses the clips)".into()
            );
        }
        let (controller, _) = find_controller(model, None, Some(Path::new(path)))?.ok_or("no controller")?;
        let script = Script::parse(&args.sets, &controller)?;
        let first = first_frame(args, frames)?;
        let timeline = Timeline::simulating(model.rig.clone(), Arc::new(controller), script, fps)
            .map_err(|e| e.to_string())?;
        return Ok((timeline, first));
    }
    if !args.sets.is_empty() {
        return Err("--set needs --controller (a clip has no parameters)".into());
    }
    let clip = match &args.clip {
        Some(key) => Some(model.find_clip(key).ok_or_else(|| {
            let names: Vec<String> = model
                .clips
                .iter()
                .enumerate()
                .map(|(i, c)| c.name.clone().map_or_else(|| i.to_string(), |n| format!("\"{n}\"")))
                .collect();
            let list = if names.is_empty() { "none".to_string() } else { names.join(", ") };
            format!("{}: no clip \"{key}\" (clips: {list})", model.file)
        })?),
        // An animation without --clip plays the first clip, when there is one.
        None if frames > 1 && !model.clips.is_empty() => Some(0),
        None => None,
    };
    let start = args.time.unwrap_or_else(|| clip.map_or(0.0, |c| model.clips[c].start()));
    let controller = Controller::single_clip(model, clip, true)?;
    let timeline = Timeline::seeking(model.rig.clone(), Arc::new(controller), f64::from(start), fps)
        .map_err(|e| e.to_string())?;
    Ok((timeline, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("640x480"), Ok((640, 480)));
        assert_eq!(parse_size("16X9"), Ok((16, 9)));
        for bad in ["640", "0x10", "x", "10x-3", "99999x10", "axb", ""] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }
}
