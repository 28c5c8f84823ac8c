//! `vkskin simulate`: a character's controller run headless (no GPU), one
//! line per frame: the state, the running transition, the clips' weights
//! and the events crossed. `--json` writes the DESIGN.md trace format.

use super::args::SimulateArgs;
use crate::asset;
use crate::character::controller::find_controller;
use crate::character::{Controller, Script, Timeline};
use crate::formats::trace::{TraceFrame, actor_frame, text_line, trace_frame};
use crate::world::{ActorRun, Authority, FootPlacement, Level};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

/// Most frames one run may ask for.
const MAX_FRAMES: f64 = 10_000_000.0;

/// Runs the command; the error is one printable line.
pub fn run(args: &SimulateArgs, load: &crate::asset::LoadOptions) -> anyhow::Result<()> {
    // --fps and --duration were checked as they were parsed (`cli::checked`).
    let frames = (args.duration * args.fps + 1e-9).floor() + 1.0;
    if frames > MAX_FRAMES {
        return Err(anyhow::anyhow!(
            "--duration {} at --fps {} is more than {MAX_FRAMES} frames",
            args.duration,
            args.fps
        ));
    }
    if args.level.is_none() {
        let without_level = [
            ("--spawn", args.spawn.is_some()),
            ("--authority", args.authority.is_some()),
            ("--no-ik", args.no_ik),
        ];
        if let Some((flag, _)) = without_level.iter().find(|(_, given)| *given) {
            anyhow::bail!("{flag} needs --level (it says where and how the character moves in a level)");
        }
    }
    let path = args.model.as_deref().map(Path::new);
    let model = asset::load_or_default(path, load)?;
    let explicit = args.controller.as_deref().map(Path::new);
    let controller = match find_controller(&model, path, explicit, load.max_memory)? {
        Some((c, source)) => {
            eprintln!("vkskin: controller: {source}");
            c
        }
        None => {
            eprintln!("vkskin: {}: no controller: clip 0 plays on a loop", model.file);
            Controller::single_clip(&model, (!model.clips.is_empty()).then_some(0), true)?
        }
    };
    let script = Script::parse(&args.sets, &controller)?;
    let last = format!("the last frame at --duration {} and --fps {}", args.duration, args.fps);
    super::set_times::check_within(&args.sets, (frames - 1.0) / args.fps, &last)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut write = |frame: &TraceFrame| -> anyhow::Result<()> {
        let line = if args.json { serde_json::to_string(frame)? } else { text_line(frame) };
        writeln!(out, "{line}").map_err(|e| anyhow::anyhow!("stdout: {e}"))
    };
    let controller = Arc::new(controller);
    if let Some(level) = &args.level {
        let authority: Authority = args.authority.as_deref().unwrap_or("animation").parse()?;
        super::set_times::warn_fast_speeds(&args.sets, &controller, authority);
        if authority == Authority::Animation && controller.root_motion_joint().is_none() {
            eprintln!(
                "vkskin: the controller takes no root motion (root_motion): the character stays where it is"
            );
        }
        let feet = if args.no_ik {
            None
        } else {
            FootPlacement::humanoid(&model)
                .map_err(|e| eprintln!("vkskin: {}: {e}: no foot IK", model.file))
                .ok()
        };
        let level = Level::named(level)?;
        let mut run = ActorRun::new(
            model.rig.clone(),
            controller,
            script,
            &level,
            args.spawn.as_deref().unwrap_or("open"),
            authority,
            feet,
            args.fps,
        )?;
        for i in 0..frames as u32 {
            let time = run.time(i);
            let actor = run.frame(i).map_err(|e| anyhow::anyhow!("{}: {e}", model.file))?;
            write(&actor_frame(&model, i, time, actor))?;
        }
    } else {
        let mut timeline = Timeline::simulating(model.rig.clone(), controller, script, args.fps)?;
        for i in 0..frames as u32 {
            let time = timeline.time(i);
            let character = timeline.frame(i).map_err(|e| anyhow::anyhow!("{}: {e}", model.file))?;
            write(&trace_frame(&model, i, time, character))?;
        }
    }
    out.flush().map_err(|e| anyhow::anyhow!("stdout: {e}"))
}
