//! The `vkskin simulate` trace (DESIGN.md's format, a contract: external
//! checks parse it): one frame of a character (and, in a level, its actor)
//! as a JSON object, or as one line of text.

use super::provenance::{self, RootMotionJoint, TraceClip, TraceLayer};
use crate::asset::Model;
use crate::character::Character;
use crate::text::escape;
use crate::world::Actor;
use nalgebra::Vector3;
use serde::Serialize;

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
    /// Every clip sampled for this frame's pose (see `formats::provenance`).
    pub clips: Vec<TraceClip>,
    /// The layers of this frame's pose, base first.
    pub layers: Vec<TraceLayer>,
    /// The joint whose ground travel and yaw are taken out of the pose; absent without root motion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_motion: Option<RootMotionJoint>,
    /// In a level: where the feet stand, world space.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<[f32; 3]>,
    /// In a level: the movement asked of the physics world and the movement it allowed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_delta: Option<TraceRootDelta>,
    /// In a level with foot IK: each foot's target, error and whether it is planted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feet: Option<Vec<TraceFoot>>,
    /// In a level: whether the capsule stands on something (the controller's `grounded`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grounded: Option<bool>,
    /// In a level, with arms: each hand's reach target, error and weight.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hands: Option<Vec<TraceHand>>,
}

/// A hand in a frame.
#[derive(Debug, Serialize)]
pub struct TraceHand {
    /// Its hand joint.
    pub joint: String,
    /// Where the hand is sent, world space.
    pub target: [f32; 3],
    /// Distance from the hand to its target, centimetres.
    pub error_cm: f32,
    /// How far the reach is blended in (0 to 1).
    pub weight: f32,
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
        clips: provenance::clips(model, character),
        layers: provenance::layers(model, character),
        root_motion: provenance::root_motion_joint(model, character),
        position: None,
        root_delta: None,
        feet: None,
        grounded: None,
        hands: None,
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
    out.grounded = Some(actor.grounded());
    out.hands = actor.hands().map(|hands| {
        hands
            .iter()
            .map(|h| TraceHand {
                joint: h.joint.clone(),
                target: v(h.target),
                error_cm: h.error_cm,
                weight: h.weight,
            })
            .collect()
    });
    out
}

/// `frame 12  0.200 s  Locomotion -> Jump 25%  Walk 0.60 Run 0.40  | Walk:footstep_left@0.520`.
/// Names from the files (states, clips, events, joints) are escaped as in
/// errors (`text::escape`): the line stays one line and cannot repaint the
/// terminal, whatever a controller or model calls things.
pub fn text_line(f: &TraceFrame) -> String {
    use std::fmt::Write;
    let state = f.state.as_deref().map_or_else(|| "(rest)".to_string(), escape);
    let mut line = format!("frame {:5}  {:8.3} s  {state}", f.frame, f.time);
    if let Some(t) = &f.transition {
        let _ = write!(line, " -> {} {:3.0}%", escape(&t.to), t.progress * 100.0);
    }
    for (clip, w) in &f.weights {
        let _ = write!(line, "  {} {:.2}", escape(clip), w.as_f64().unwrap_or(0.0));
    }
    if let Some(p) = f.position {
        let _ = write!(line, "  at ({:.3}, {:.3}, {:.3})", p[0], p[1], p[2]);
    }
    for foot in f.feet.iter().flatten() {
        let _ = write!(
            line,
            "  {}{} {:.2} cm",
            escape(&foot.joint),
            if foot.planted { "*" } else { "" },
            foot.error_cm
        );
    }
    for hand in f.hands.iter().flatten().filter(|h| h.weight > 0.0) {
        let _ = write!(line, "  {}~{:.2} {:.2} cm", escape(&hand.joint), hand.weight, hand.error_cm);
    }
    if !f.events.is_empty() {
        line.push_str("  |");
        for e in &f.events {
            let _ = write!(line, " {}:{}@{:.3}", escape(&e.clip), escape(&e.name), e.clip_time);
        }
    }
    line
}
