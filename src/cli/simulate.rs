//! `vkskin simulate`: a character's controller run headless (no GPU), one
//! line per frame: the state, the running transition, the clips' weights
//! and the events crossed. `--json` writes the DESIGN.md trace format.

use super::args::SimulateArgs;
use crate::asset::{self, Model};
use crate::character::controller::find_controller;
use crate::character::{Character, Controller, Script, Timeline};
use crate::world::{Actor, ActorRun, Authority, FootPlacement, Level};
use nalgebra::Vector3;
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

/// Most frames one run may ask for.
const MAX_FRAMES: f64 = 10_000_000.0;

/// One frame of the trace (a contract: external checks parse it).
#[derive(Debug, Serialize)]
pub struct TraceFrame {
    /// Frame number from 0.
    pub frame: u32,
    /// Seconds.
    pub time: f64,
    /// The current state; null without states.
    pub state: Option<String>,
    /// The running transition; null when none runs.
    pub transition: Option<TraceTransition>,
    /// Final weight of each clip that has weight (sums to 1), by name.
    pub weights: serde_json::Map<String, serde_json::Value>,
    /// Events crossed during this frame's update.
    pub events: Vec<TraceEvent>,
    /// In a level: where the feet stand, world space.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<[f32; 3]>,
    /// In a level: the movement asked of the physics world and the movement it allowed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_delta: Option<TraceRootDelta>,
    /// In a level with foot IK: each foot's target, error and whether it is planted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feet: Option<Vec<TraceFoot>>,
}

/// A frame's movement.
#[derive(Debug, Serialize)]
pub struct TraceRootDelta {
    /// Asked for (root motion, or the velocity times the step).
    pub requested: [f32; 3],
    /// Allowed by collision resolution.
    pub applied: [f32; 3],
}

/// A foot in a frame.
#[derive(Debug, Serialize)]
pub struct TraceFoot {
    /// Its ankle joint.
    pub joint: String,
    /// Where the ankle was sent, world space.
    pub target: [f32; 3],
    /// Distance from the solved ankle to its target, centimetres.
    pub error_cm: f32,
    /// Whether the foot is planted (IK fully blended in).
    pub planted: bool,
}

/// A running transition.
#[derive(Debug, Serialize)]
pub struct TraceTransition {
    /// Target state.
    pub to: String,
    /// Progress in [0, 1).
    pub progress: f32,
}

/// An event crossed.
#[derive(Debug, Serialize)]
pub struct TraceEvent {
    /// Clip name.
    pub clip: String,
    /// Event name.
    pub name: String,
    /// The event's time on the clip's timeline.
    pub clip_time: f32,
}

/// The frame as the trace records it.
pub fn trace_frame(model: &Model, frame: u32, time: f64, character: &Character) -> TraceFrame {
    let states = character.controller().states();
    let weights = character
        .clip_weights()
        .iter()
        .enumerate()
        .filter(|(_, w)| **w > 0.0)
        .map(|(c, w)| (model.clip_name(c).to_string(), serde_json::Value::from(f64::from(*w))))
        .collect();
    TraceFrame {
        frame,
        time,
        state: character.state_name().map(String::from),
        transition: character
            .transition()
            .map(|(to, progress)| TraceTransition { to: states[to].name.clone(), progress }),
        weights,
        events: character
            .events()
            .iter()
            .map(|e| TraceEvent {
                clip: model.clip_name(e.clip as usize).to_string(),
                name: character.event_name(e).to_string(),
                clip_time: e.clip_time,
            })
            .collect(),
        position: None,
        root_delta: None,
        feet: None,
    }
}

/// The frame of an actor in a level: the character's, plus its movement and feet.
pub fn actor_frame(model: &Model, frame: u32, time: f64, actor: &Actor) -> TraceFrame {
    let mut out = trace_frame(model, frame, time, actor.character());
    let v = |v: Vector3<f32>| [v.x, v.y, v.z];
    out.position = Some(v(actor.position()));
    let moved = actor.last_move();
    out.root_delta = Some(TraceRootDelta { requested: v(moved.requested), applied: v(moved.applied) });
    out.feet = actor.feet().map(|feet| {
        feet.iter()
            .map(|f| TraceFoot {
                joint: f.joint.clone(),
                target: v(f.target),
                error_cm: f.error_cm,
                planted: f.planted,
            })
            .collect()
    });
    out
}

/// Runs the command; the error is one printable line.
pub fn run(args: &SimulateArgs, load: &crate::asset::LoadOptions) -> anyhow::Result<()> {
    if !(args.fps.is_finite() && args.fps > 0.0) {
        return Err(anyhow::anyhow!("--fps must be a positive number, not {}", args.fps));
    }
    if !(args.duration.is_finite() && args.duration >= 0.0) {
        return Err(anyhow::anyhow!(
            "--duration must be a finite number of seconds >= 0, not {}",
            args.duration
        ));
    }
    let frames = (args.duration * args.fps + 1e-9).floor() + 1.0;
    if frames > MAX_FRAMES {
        return Err(anyhow::anyhow!(
            "--duration {} at --fps {} is more than {MAX_FRAMES} frames",
            args.duration,
            args.fps
        ));
    }
    let path = Path::new(&args.model);
    let model = asset::load_with(path, load)?;
    let explicit = args.controller.as_deref().map(Path::new);
    let controller = match find_controller(&model, Some(path), explicit)? {
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
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut write = |frame: &TraceFrame| -> anyhow::Result<()> {
        let line = if args.json { serde_json::to_string(frame)? } else { text_line(frame) };
        writeln!(out, "{line}").map_err(|e| anyhow::anyhow!("stdout: {e}"))
    };
    let controller = Arc::new(controller);
    if let Some(level) = &args.level {
        let authority: Authority = args.authority.parse()?;
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
            &args.spawn,
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

/// `frame 12  0.200 s  Locomotion -> Jump 25%  Walk 0.60 Run 0.40  | Walk:footstep_left@0.520`
fn text_line(f: &TraceFrame) -> String {
    use std::fmt::Write;
    let mut line =
        format!("frame {:5}  {:8.3} s  {}", f.frame, f.time, f.state.as_deref().unwrap_or("(rest)"));
    if let Some(t) = &f.transition {
        let _ = write!(line, " -> {} {:3.0}%", t.to, t.progress * 100.0);
    }
    for (clip, w) in &f.weights {
        let _ = write!(line, "  {clip} {:.2}", w.as_f64().unwrap_or(0.0));
    }
    if let Some(p) = f.position {
        let _ = write!(line, "  at ({:.3}, {:.3}, {:.3})", p[0], p[1], p[2]);
    }
    for foot in f.feet.iter().flatten() {
        let _ =
            write!(line, "  {}{} {:.2} cm", foot.joint, if foot.planted { "*" } else { "" }, foot.error_cm);
    }
    if !f.events.is_empty() {
        line.push_str("  |");
        for e in &f.events {
            let _ = write!(line, " {}:{}@{:.3}", e.clip, e.name, e.clip_time);
        }
    }
    line
}
