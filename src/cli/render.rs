//! `vkskin render`: headless rendering of one frame (PNG) or an animation
//! (animated PNG), on the chosen Vulkan device.

use super::args::RenderArgs;
use super::checked::show;
use crate::anim::FrameSource;
use crate::anim::framing::Bounds;
use crate::app::ground_under;
use crate::asset::{self, Model};
use crate::character::controller::find_controller;
use crate::character::{Controller, Crowd, Script, Timeline};
use crate::render::RenderError;
use crate::render::crowd_fit::check_crowd_fits;
use crate::render::headless::{self, HeadlessRequest};
use crate::render::renderer::RenderSettings;
use crate::render::{
    DqsSplit, DrawDetail, GpuOptions, InfluenceBlend, PassSetup, PoseEvaluation, SkinningMethod, with_gpu,
};
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

/// Most frames one render draws (`--frames`). An animated PNG is a
/// preview, streamed to the file frame by frame; 10000 frames is 5.5
/// minutes at 30 fps, and a typo of a few zeros must not run for hours.
pub const MAX_FRAMES: u32 = 10_000;
/// Most frames a controller render simulates in all: `--time` at `--fps`
/// before the first drawn frame, plus the drawn ones (about 55 minutes at
/// 30 fps). The frames before the first drawn one are simulated twice
/// (once to frame the camera, once to draw), with nothing to show.
pub const MAX_SIMULATED_FRAMES: u64 = 100_000;
pub use crate::render::headless::MAX_CHARACTER_FRAMES;

impl RenderArgs {
    /// The device and validation these options ask for (the chosen device announced).
    pub(crate) fn gpu_options(&self) -> GpuOptions {
        GpuOptions {
            validation: self.validation,
            device: self.device.clone(),
            announce_device: true,
            ..Default::default()
        }
    }
}

/// Runs the command, loading the model within `load`'s limits. Every flag
/// is checked, and the crowd against the device's limits, before any
/// frame is posed.
pub fn run(args: &RenderArgs, load: &asset::LoadOptions) -> anyhow::Result<()> {
    let (width, height) = parse_size(&args.size).map_err(anyhow::Error::msg)?;
    // --frames, --fps, --time and --characters were checked as they were
    // parsed (`cli::checked`); what needs several flags is checked here.
    let frames = args.frames.unwrap_or(1);
    let frame_settings = args.frame_settings();
    check_dqs_split(frame_settings.blend)?;
    if args.planar {
        let settings = RenderSettings {
            wireframe: args.wireframe,
            frame: frame_settings,
            ..RenderSettings::sized(width, height)
        };
        return super::planar::render(args, (width, height), frames, settings);
    }
    check_level_flags(args)?;
    let model_path = args.model.as_deref().map(Path::new);
    let model = asset::load_or_default(model_path, load)?;
    let plan = plan_frames(&model, model_path, args, frames)?;
    let settings = RenderSettings {
        wireframe: args.wireframe,
        frame: frame_settings,
        limits: args.limits.detail_limits(),
        ..RenderSettings::sized(width, height)
    };
    for w in &model.warnings {
        eprintln!("vkskin: warning: {}: {w}", model.file);
    }
    if frame_settings.detail == DrawDetail::Full {
        // Full detail draws every full mesh: no level to coarsen.
        let limits = &args.limits;
        for (given, flag) in [
            (limits.max_skinned_vertices.is_some(), "--max-skinned-vertices"),
            (limits.max_triangles.is_some(), "--max-triangles"),
            (limits.gpu_frame_budget.is_some(), "--gpu-frame-budget"),
        ] {
            if given {
                eprintln!(
                    "vkskin: warning: {flag} is not applied with --detail full (every full mesh is drawn)"
                );
            }
        }
    }
    let out = Path::new(&args.out);
    let options = args.gpu_options();
    let model = Arc::new(model);
    let doing = format!("rendering {}", out.display());
    let rendered = with_gpu(&options, |ctx| -> anyhow::Result<Vec<String>> {
        // Right after the device is chosen, before a frame is posed.
        check_crowd_fits(&model, args.characters, settings.frame.detail, &ctx.buffer_limits)
            .map_err(|e| anyhow::anyhow!("--characters {}: {e}", args.characters))?;
        let (mut source, first_frame, scenery) = plan.build(&model, args)?;
        let request = HeadlessRequest { frames, first_frame, settings };
        headless::render_to_file(ctx, model.clone(), source.as_mut(), scenery, &request, out, args.fps)
            .map_err(|e| super::gpu_failure(e.into(), &doing))
    });
    let warnings = rendered.map_err(|e| super::gpu_failure(e, &doing))?;
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

/// `--spawn` and `--authority` mean something only in a level, and a level
/// holds one character: asked for otherwise, they would be ignored.
fn check_level_flags(args: &RenderArgs) -> anyhow::Result<()> {
    if args.level.is_none() {
        for (flag, given) in [("--spawn", args.spawn.is_some()), ("--authority", args.authority.is_some())] {
            if given {
                anyhow::bail!("{flag} needs --level (it says where and how the character moves in a level)");
            }
        }
    } else if args.characters > 1 {
        anyhow::bail!("--characters and --level exclude each other (the level has one actor)");
    } else if args.clip.is_some() {
        anyhow::bail!("--clip and --level exclude each other (in a level the controller chooses the clips)");
    }
    Ok(())
}

/// What a level render draws around the character.
type Scenery = Option<Arc<Model>>;

/// A character in a level, ready to be placed.
struct LevelPlan {
    controller: Controller,
    script: Script,
    level: Level,
    authority: Authority,
    first: u32,
}

/// The frames to draw, decided before the GPU is opened (every flag and
/// file checked); [`FramePlan::build`] makes the source once the crowd is
/// known to fit.
enum FramePlan {
    /// A controller simulated from 0 s in a level (`--level`).
    Level(Box<LevelPlan>),
    /// A clip or controller played frame by frame, by one character or a crowd.
    Timeline { timeline: Box<Timeline>, first: u32 },
}

impl FramePlan {
    /// The source, its first drawn frame and the scenery.
    fn build(self, model: &Model, args: &RenderArgs) -> anyhow::Result<(Box<dyn FrameSource>, u32, Scenery)> {
        if args.pose == PoseEvaluation::Gpu
            && !(args.characters > 1 && matches!(self, FramePlan::Timeline { .. }))
        {
            anyhow::bail!("--pose gpu poses a crowd: it needs --characters 2 or more (and no --level)");
        }
        match self {
            FramePlan::Level(plan) => {
                let LevelPlan { controller, script, level, authority, first } = *plan;
                let feet = FootPlacement::humanoid(model)
                    .map_err(|e| eprintln!("vkskin: {}: {e}: no foot IK", model.file))
                    .ok();
                let run = ActorRun::new(
                    model.rig.clone(),
                    Arc::new(controller),
                    script,
                    &level,
                    args.spawn.as_deref().unwrap_or("open"),
                    authority,
                    feet,
                    f64::from(args.fps),
                )?;
                Ok((Box::new(run), first, Some(Arc::new(scenery_model(&level)?))))
            }
            // The shadow cascades' shadows fall on the window's ground.
            FramePlan::Timeline { timeline, first } if args.characters > 1 => {
                let (crowd, grid) = crowd(model, args, *timeline)?;
                Ok((Box::new(crowd), first, ground_for_shadows(model, args, Some(grid))?))
            }
            FramePlan::Timeline { timeline, first } => {
                Ok((timeline, first, ground_for_shadows(model, args, None)?))
            }
        }
    }
}

/// The frames to draw: a controller (`--controller`, else MODEL.ron next to
/// the model, found as `view` and `simulate` find it) simulated from 0 s
/// (`--time` skipping ahead; in a level with `--level`), else one clip
/// sought to each frame's time (from `--time`, default the clip's first
/// key; the rest pose without a clip).
fn plan_frames(
    model: &Model,
    path: Option<&Path>,
    args: &RenderArgs,
    frames: u32,
) -> anyhow::Result<FramePlan> {
    let explicit = args.controller.as_deref().map(Path::new);
    if explicit.is_some() && args.clip.is_some() {
        anyhow::bail!("--clip and --controller exclude each other (the controller chooses the clips)");
    }
    // A broken sidecar fails here, with `simulate`'s message, even with --clip.
    let controller = match find_controller(model, path, explicit, model.load_options.max_memory)? {
        Some((_, source)) if args.clip.is_some() => {
            eprintln!("vkskin: controller: {source} not used: --clip plays one clip");
            None
        }
        Some((controller, source)) => {
            eprintln!("vkskin: controller: {source}");
            Some(controller)
        }
        None => None,
    };
    let fps = f64::from(args.fps);
    let Some(controller) = controller else {
        if args.level.is_some() {
            anyhow::bail!("--level needs a controller (--controller FILE, or MODEL.ron next to the model)");
        }
        if !args.sets.is_empty() {
            anyhow::bail!(
                "--set needs a controller (--controller FILE, or MODEL.ron next to the model): a clip has no parameters"
            );
        }
        check_posing(args.characters, u64::from(frames))?;
        let timeline = clip_timeline(model, args, frames)?;
        return Ok(FramePlan::Timeline { timeline: Box::new(timeline), first: 0 });
    };
    let script = Script::parse(&args.sets, &controller)?;
    let first = first_frame(args, frames)?;
    let last_time = f64::from(first + frames - 1) / fps;
    super::set_times::check_within(&args.sets, last_time, "the last frame")?;
    if let Some(level) = &args.level {
        let authority: Authority = args.authority.as_deref().unwrap_or("animation").parse()?;
        super::set_times::warn_fast_speeds(&args.sets, &controller, authority);
        let level = Level::named(level)?;
        // The spawn is checked now, not after the GPU is opened.
        level.spawn(args.spawn.as_deref().unwrap_or("open"))?;
        return Ok(FramePlan::Level(Box::new(LevelPlan { controller, script, level, authority, first })));
    }
    let timeline = Timeline::simulating(model.rig.clone(), Arc::new(controller), script, fps)?;
    Ok(FramePlan::Timeline { timeline: Box::new(timeline), first })
}

/// `characters` characters posed for `frames` frames: within [`MAX_CHARACTER_FRAMES`].
fn check_posing(characters: u32, frames: u64) -> anyhow::Result<()> {
    if u64::from(characters) * frames > MAX_CHARACTER_FRAMES {
        anyhow::bail!(
            "--characters {characters} for {frames} frames poses {} character-frames, more than \
             the {MAX_CHARACTER_FRAMES} one render may (fewer characters or --frames)",
            u64::from(characters) * frames
        );
    }
    Ok(())
}

/// `--characters N`: N characters playing what `timeline` plays, each from
/// its own phase, on a grid (and the grid's bounds); its `--set` changes
/// reach every character.
fn crowd(model: &Model, args: &RenderArgs, timeline: Timeline) -> anyhow::Result<(Crowd, Bounds)> {
    let controller = timeline.controller().clone();
    let count = args.characters as usize;
    // The renderer follows the crowd onto the GPU (`FramePoses::gpu_pose`).
    let gpu = args.pose == PoseEvaluation::Gpu;
    let grid = Crowd::on_grid(model.rig.clone(), controller, count, f64::from(args.fps), 0, gpu)
        .map_err(|e| RenderError::Pose { file: model.file.clone(), source: e.into() })?;
    let (mut crowd, bounds) = grid.ok_or_else(|| RenderError::NothingToDraw { file: model.file.clone() })?;
    // The --set changes, to every character at once.
    crowd.set_script(timeline.script().clone());
    Ok((crowd, bounds))
}

/// Outside a level, `--passes 5` draws the viewer's ground under the
/// model (and the crowd's `grid`): without it the cascades' shadows would
/// fall only where characters shade each other. Other passes draw none,
/// as they always have.
fn ground_for_shadows(model: &Model, args: &RenderArgs, grid: Option<Bounds>) -> anyhow::Result<Scenery> {
    if args.passes != PassSetup::ShadowCascades {
        return Ok(None);
    }
    ground_under(model, grid).map(Some)
}

/// The first frame drawn of a simulation from 0 s: `--time` at `--fps`.
/// The whole simulated span, up to the last drawn frame, is within
/// [`MAX_SIMULATED_FRAMES`] (and [`MAX_CHARACTER_FRAMES`] for a crowd).
fn first_frame(args: &RenderArgs, frames: u32) -> anyhow::Result<u32> {
    let time = f64::from(args.time.unwrap_or(0.0));
    if time < 0.0 {
        anyhow::bail!(
            "--time {}: a controller is simulated from 0 s, so --time takes seconds >= 0 with one",
            show(time)
        );
    }
    let first = (time * f64::from(args.fps)).round();
    let simulated = first + f64::from(frames);
    if simulated > MAX_SIMULATED_FRAMES as f64 {
        anyhow::bail!(
            "--time {} and --frames {frames} at --fps {} simulate {} frames, more than the \
             {MAX_SIMULATED_FRAMES} one render may (about {} min at this --fps)",
            show(time),
            args.fps,
            show(simulated),
            (MAX_SIMULATED_FRAMES as f64 / f64::from(args.fps) / 60.0).round()
        );
    }
    check_posing(args.characters, simulated as u64)?;
    Ok(first as u32)
}

/// One clip (or the rest pose) sought to each frame's time.
fn clip_timeline(model: &Model, args: &RenderArgs, frames: u32) -> anyhow::Result<Timeline> {
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
    Ok(Timeline::seeking(model.rig.clone(), Arc::new(controller), f64::from(start), f64::from(args.fps))?)
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
