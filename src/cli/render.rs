//! `vkskin render`: headless rendering of one frame (PNG) or an animation
//! (animated PNG), on the chosen Vulkan device.

use super::args::RenderArgs;
use crate::anim::FrameSource;
use crate::asset::{self, Model};
use crate::character::controller::find_controller;
use crate::character::{Controller, Crowd, Script, Timeline};
use crate::render::RenderError;
use crate::render::headless::{self, HeadlessRequest};
use crate::render::renderer::{MAX_CHARACTERS, RenderSettings};
use crate::render::{DqsSplit, GpuOptions, InfluenceBlend, SkinningMethod, with_gpu};
use crate::text::display_name;
use crate::world::{ActorRun, Authority, FootPlacement, Level, scenery_model};
use std::path::Path;
use std::sync::Arc;

/// Largest accepted width or height.
const MAX_SIZE: u32 = 16384;

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

/// `--dqs-split cpu` only means something with `--skinning-method dqs`:
/// asked for with linear blending, it is a mistake worth one clear line.
fn check_dqs_split(blend: InfluenceBlend) -> anyhow::Result<()> {
    if blend.dqs_split == DqsSplit::Cpu && blend.method != SkinningMethod::DualQuaternion {
        anyhow::bail!("--dqs-split cpu applies to dual-quaternion skinning: add --skinning-method dqs");
    }
    Ok(())
}

/// Runs the command, loading the model within `load`'s limits.
pub fn run(args: &RenderArgs, load: &asset::LoadOptions) -> anyhow::Result<()> {
    let (width, height) = parse_size(&args.size).map_err(anyhow::Error::msg)?;
    let frames = args.frames.unwrap_or(1);
    if frames == 0 {
        anyhow::bail!("--frames must be at least 1");
    }
    if !(args.fps.is_finite() && args.fps > 0.0) {
        return Err(anyhow::anyhow!("--fps must be a positive number, not {}", args.fps));
    }
    if let Some(t) = args.time
        && !t.is_finite()
    {
        return Err(anyhow::anyhow!("--time must be a finite number, not {t}"));
    }
    let frame_settings = args.frame_settings();
    check_dqs_split(frame_settings.blend)?;
    if args.characters == 0 || args.characters > MAX_CHARACTERS {
        anyhow::bail!("bad --characters {}: 1..={MAX_CHARACTERS}", args.characters);
    }
    let model = asset::load_with(Path::new(&args.model), load)?;
    let (mut source, first_frame, scenery) = frames_of(&model, args, frames)?;
    let settings = RenderSettings {
        wireframe: args.wireframe,
        frame: frame_settings,
        ..RenderSettings::sized(width, height)
    };
    let request = HeadlessRequest { frames, first_frame, settings };
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
    let model = Arc::new(model);
    let rendered = with_gpu(&options, |ctx| {
        headless::render_to_file(ctx, model, source.as_mut(), scenery, &request, out, args.fps)
    });
    let warnings =
        rendered.map_err(|e| super::gpu_failure(e.into(), &format!("rendering {}", out.display())))?;
    for w in warnings {
        eprintln!("vkskin: warning: {w}");
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
) -> anyhow::Result<(Box<dyn FrameSource>, u32, Scenery)> {
    if let Some(level) = &args.level {
        let path = args
            .controller
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("--level needs --controller (what drives the character)"))?;
        let (controller, _) =
            find_controller(model, None, Some(Path::new(path)), model.load_options.max_memory)?
                .ok_or_else(|| anyhow::anyhow!("no controller"))?;
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
fn crowd(model: &Model, args: &RenderArgs, timeline: Timeline) -> anyhow::Result<Crowd> {
    if !args.sets.is_empty() {
        anyhow::bail!("--set is not supported with --characters (each character would need its own script)");
    }
    let controller = timeline.controller().clone();
    let count = args.characters as usize;
    let grid = Crowd::on_grid(model.rig.clone(), controller, count, f64::from(args.fps), 0)
        .map_err(|e| RenderError::Pose { file: model.file.clone(), source: e.into() })?;
    let (crowd, _) = grid.ok_or_else(|| RenderError::NothingToDraw { file: model.file.clone() })?;
    Ok(crowd)
}

/// The first frame drawn of a simulation from 0 s: `--time` at `--fps`,
/// leaving room for `frames` frames after it.
fn first_frame(args: &RenderArgs, frames: u32) -> anyhow::Result<u32> {
    let first = (f64::from(args.time.unwrap_or(0.0)).max(0.0) * f64::from(args.fps)).round();
    if first > f64::from(u32::MAX - frames) {
        return Err(anyhow::anyhow!("--time {} is too far ahead", args.time.unwrap_or(0.0)));
    }
    Ok(first as u32)
}

/// A clip or controller played frame by frame without a level.
fn timeline(model: &Model, args: &RenderArgs, frames: u32) -> anyhow::Result<(Timeline, u32)> {
    let fps = f64::from(args.fps);
    if let Some(path) = &args.controller {
        if args.clip.is_some() {
            anyhow::bail!("--clip and --controller exclude each other (the controller chooses the clips)");
        }
        let (controller, _) =
            find_controller(model, None, Some(Path::new(path)), model.load_options.max_memory)?
                .ok_or_else(|| anyhow::anyhow!("no controller"))?;
        let script = Script::parse(&args.sets, &controller)?;
        let first = first_frame(args, frames)?;
        let timeline = Timeline::simulating(model.rig.clone(), Arc::new(controller), script, fps)?;
        return Ok((timeline, first));
    }
    if !args.sets.is_empty() {
        anyhow::bail!("--set needs --controller (a clip has no parameters)");
    }
    let clip = match &args.clip {
        Some(key) => Some(model.find_clip(key).ok_or_else(|| {
            let names: Vec<String> = model
                .clips
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    c.name.as_deref().map_or_else(|| i.to_string(), |n| format!("\"{}\"", display_name(n)))
                })
                .collect();
            let list = if names.is_empty() { "none".to_string() } else { names.join(", ") };
            anyhow::anyhow!("{}: no clip \"{}\" (clips: {list})", model.file, display_name(key))
        })?),
        // An animation without --clip plays the first clip, when there is one.
        None if frames > 1 && !model.clips.is_empty() => Some(0),
        None => None,
    };
    let start = args.time.unwrap_or_else(|| clip.map_or(0.0, |c| model.clips[c].start()));
    let controller = Controller::single_clip(model, clip, true)?;
    let timeline = Timeline::seeking(model.rig.clone(), Arc::new(controller), f64::from(start), fps)?;
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

    #[test]
    fn the_cpu_split_needs_dual_quaternions() {
        let blend = |method, dqs_split| InfluenceBlend { method, dqs_split };
        assert!(check_dqs_split(blend(SkinningMethod::DualQuaternion, DqsSplit::Cpu)).is_ok());
        assert!(check_dqs_split(blend(SkinningMethod::Linear, DqsSplit::Shader)).is_ok());
        let error = check_dqs_split(blend(SkinningMethod::Linear, DqsSplit::Cpu)).unwrap_err().to_string();
        assert!(error.contains("--skinning-method dqs"), "{error}");
    }
}
