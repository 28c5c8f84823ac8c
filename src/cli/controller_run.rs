//! The controller-driven run of one character that `simulate` and
//! `dump --controller` share, so that a dump at time T is exactly the
//! frame the trace shows at T: the controller (found as `find_controller`
//! says), the `--set` script, the update rate and, with `--level`, the
//! physics world, the authority and the feet.

use super::args::ControllerRunArgs;
use crate::asset::{LoadOptions, Model};
use crate::character::controller::find_controller;
use crate::character::timeline::frame_at;
use crate::character::{Character, Controller, Script, Timeline};
use crate::formats::trace::{TraceFrame, actor_frame, trace_frame};
use crate::world::{Actor, ActorRun, Authority, FootPlacement, Level};
use std::path::Path;
use std::sync::Arc;

/// A frame of the run: the character alone, or an actor in a level.
pub enum Posed<'a> {
    /// Without a level.
    Alone(&'a Character),
    /// In a level.
    InLevel(&'a Actor),
}

impl Posed<'_> {
    /// The character (in a level, the actor's).
    pub fn character(&self) -> &Character {
        match self {
            Posed::Alone(c) => c,
            Posed::InLevel(a) => a.character(),
        }
    }

    /// The frame as the `simulate` trace records it.
    pub fn trace(&self, model: &Model, frame: u32, time: f64) -> TraceFrame {
        match self {
            Posed::Alone(c) => trace_frame(model, frame, time, c),
            Posed::InLevel(a) => actor_frame(model, frame, time, a),
        }
    }
}

// Both boxed: a run is built once per command, and the two differ in size.
enum Run {
    Alone(Box<Timeline>),
    InLevel(Box<ActorRun>),
}

/// See the module documentation.
pub struct ControllerRun {
    run: Run,
    fps: f64,
}

impl ControllerRun {
    /// The run of `model` (loaded from `path`; `None`: the built-in
    /// character) as `args` says. `last_time` is the time of the last frame
    /// the command asks for (`last`, in words): a `--set` after it would
    /// never apply, so it is an error. Prints where the controller came from.
    pub fn new(
        model: &Model,
        path: Option<&Path>,
        args: &ControllerRunArgs,
        load: &LoadOptions,
        last_time: f64,
        last: &str,
    ) -> anyhow::Result<Self> {
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
        let explicit = args.controller.as_deref().map(Path::new);
        let controller = match find_controller(model, path, explicit, load.max_memory)? {
            Some((c, source)) => {
                eprintln!("vkskin: controller: {source}");
                c
            }
            None => {
                eprintln!("vkskin: {}: no controller: clip 0 plays on a loop", model.file);
                Controller::single_clip(model, (!model.clips.is_empty()).then_some(0), true)?
            }
        };
        let script = Script::parse(&args.sets, &controller)?;
        super::set_times::check_within(&args.sets, last_time, last)?;
        let controller = Arc::new(controller);
        let run = match &args.level {
            None => {
                Run::Alone(Box::new(Timeline::simulating(model.rig.clone(), controller, script, args.fps)?))
            }
            Some(level) => {
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
                    FootPlacement::humanoid(model)
                        .map_err(|e| eprintln!("vkskin: {}: {e}: no foot IK", model.file))
                        .ok()
                };
                let level = Level::named(level)?;
                let spawn = args.spawn.as_deref().unwrap_or("open");
                Run::InLevel(Box::new(ActorRun::new(
                    model.rig.clone(),
                    controller,
                    script,
                    &level,
                    spawn,
                    authority,
                    feet,
                    args.fps,
                )?))
            }
        };
        Ok(ControllerRun { run, fps: args.fps })
    }

    /// Seconds of frame `i`.
    pub fn time(&self, i: u32) -> f64 {
        match &self.run {
            Run::Alone(t) => t.time(i),
            Run::InLevel(r) => r.time(i),
        }
    }

    /// Plays up to frame `i`; the error names the model file.
    pub fn frame(&mut self, model: &Model, i: u32) -> anyhow::Result<Posed<'_>> {
        Ok(match &mut self.run {
            Run::Alone(t) => Posed::Alone(t.frame(i).map_err(|e| anyhow::anyhow!("{}: {e}", model.file))?),
            Run::InLevel(r) => {
                Posed::InLevel(r.frame(i).map_err(|e| anyhow::anyhow!("{}: {e}", model.file))?)
            }
        })
    }

    /// Plays up to `time` seconds (>= 0): without a level, the frames up to
    /// it and, between frames, one shorter update to it
    /// (`Timeline::simulate_to`); in a level (a fixed physics step), `time`
    /// must be a frame's. Returns the frame number reached (the one
    /// before `time` when it falls between frames) with the pose.
    pub fn at(&mut self, model: &Model, time: f64) -> anyhow::Result<(u32, Posed<'_>)> {
        if !(time.is_finite() && time >= 0.0) {
            anyhow::bail!("--time {time}: a controller's simulation starts at 0 s");
        }
        let Some((frame, on_frame)) = frame_at(time, self.fps) else {
            anyhow::bail!("--time {time} is more frames than a run can hold at --fps {}", self.fps);
        };
        let fps = self.fps;
        Ok(match &mut self.run {
            Run::Alone(t) => {
                let character = t.simulate_to(time).map_err(|e| anyhow::anyhow!("{}: {e}", model.file))?;
                (frame, Posed::Alone(character))
            }
            Run::InLevel(_) if !on_frame => {
                let (before, after) = (f64::from(frame) / fps, f64::from(frame + 1) / fps);
                anyhow::bail!(
                    "--time {time}: in a level the physics steps at --fps {fps}, so the time must be a frame's \
                     (the nearest are {before} and {after} s)"
                )
            }
            Run::InLevel(r) => {
                let actor = r.frame(frame).map_err(|e| anyhow::anyhow!("{}: {e}", model.file))?;
                (frame, Posed::InLevel(actor))
            }
        })
    }
}
