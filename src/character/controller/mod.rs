//! Controllers: a state machine whose states play blend trees, driven by
//! parameters. `file` is what users write (RON); `Controller` is that file
//! checked against a rig (clips and parameters resolved to indices), shared
//! by every character that uses it; `error` says why a file was refused.
//! Pure data and checks: no playback state lives here (see `Character`).

pub mod caps;
mod compile;
pub mod condition;
pub mod error;
pub mod file;
pub mod find;
#[cfg(test)]
mod tests;

pub use condition::{Compare, Condition, ConditionError};
pub use error::{
    ControllerError, LayerProblem, MotionError, ParameterProblem, ParameterRefError, StateProblem,
    TransitionProblem, UnknownClip,
};
pub use file::{
    BlendInputDef, BlendPointDef, ControllerFile, Curve, LayerTriggerDef, MotionDef, ParameterDef, StateDef,
    TransitionDef, WeightDef,
};
pub use find::{DEFAULT_CONTROLLER, FoundController, find_controller, sidecar_path};

use super::root_motion::ClipRootMotion;
use crate::anim::Rig;
use crate::anim::{LayerMode, Pose};
use crate::input_file::{self, InputError};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

/// Most clip nodes (leaves of all blend trees together) a controller may have.
pub const MAX_CLIP_NODES: usize = 64;
/// Deepest blend-tree nesting.
pub const MAX_DEPTH: usize = 16;
/// Largest blend-space point position, either sign: distances between
/// points stay finite, so blends between them are numbers.
pub const MAX_POINT_POSITION: f32 = 1e6;
/// Fastest clip playback rate (speeds are > 0 and at most this).
pub const MAX_SPEED: f32 = 1000.0;
/// Longest crossfade duration, blend-space smoothing and (either sign)
/// additive reference time, in seconds.
pub const MAX_SECONDS: f32 = 1e6;
/// Latest transition exit time, in cycles of the source state.
pub const MAX_EXIT_TIME: f32 = 1e6;

/// What a parameter holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParameterKind {
    /// A number.
    Float,
    /// A flag.
    Bool,
    /// A one-update event.
    Trigger,
}

impl ParameterKind {
    /// Lower-case name for messages.
    pub fn name(self) -> &'static str {
        match self {
            ParameterKind::Float => "float",
            ParameterKind::Bool => "bool",
            ParameterKind::Trigger => "trigger",
        }
    }
}

/// A parameter: name, kind, initial value (bools and triggers as 0 or 1)
/// and, for floats, the slider range the file suggests.
#[derive(Debug, Clone, PartialEq)]
pub struct Parameter {
    /// Name.
    pub name: String,
    /// Kind.
    pub kind: ParameterKind,
    /// Initial value.
    pub default: f32,
    /// Suggested slider range (floats).
    pub range: Option<(f32, f32)>,
}

/// A parameter's index in its controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ParameterId(pub u32);

/// A state: its name, the root of its blend tree and its clip nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    /// Name.
    pub name: String,
    /// Root blend-tree node (index into the controller's nodes).
    pub(crate) root: u32,
    /// Its clip nodes (leaves), contiguous.
    pub leaves: Range<u32>,
    /// Its sync groups, contiguous.
    pub groups: Range<u32>,
    /// Its blend spaces' inputs, contiguous.
    pub(crate) inputs: Range<u32>,
}

/// A blend-tree node, resolved.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    /// A clip node.
    Clip { leaf: u32 },
    /// Weighted inputs (child node, weight).
    Blend { inputs: Vec<(u32, Weight)> },
    /// Children placed along an input (see `SpaceInput`), sorted by position.
    Space { input: u32, points: Vec<(f32, u32)> },
}

/// What a blend space reads: a float parameter, followed with a lag.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SpaceInput {
    /// The float parameter.
    pub parameter: u32,
    /// Time constant in seconds (0: no lag).
    pub smoothing: f32,
}

/// A resolved blend weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Weight {
    Value(f32),
    Parameter(u32),
}

/// A clip node: one clip played by one state.
#[derive(Debug, Clone, PartialEq)]
pub struct Leaf {
    /// Clip index in the rig.
    pub clip: u32,
    /// Wraps at the end (else holds).
    pub looping: bool,
    /// Playback rate.
    pub speed: f32,
    /// The state that plays it.
    pub state: u32,
    /// Its sync group, if a synced node is above it.
    pub group: Option<u32>,
}

/// Clip nodes kept at one normalised phase, led by the heaviest of them.
#[derive(Debug, Clone, PartialEq)]
pub struct SyncGroup {
    /// Its clip nodes, contiguous.
    pub leaves: Range<u32>,
}

/// A resolved transition.
#[derive(Debug, Clone, PartialEq)]
pub struct Transition {
    /// Source state; `None` for any state.
    pub from: Option<u32>,
    /// Target state.
    pub to: u32,
    /// All must hold.
    pub conditions: Vec<Condition>,
    /// Source state's normalised time to wait for.
    pub exit_time: Option<f32>,
    /// Crossfade seconds.
    pub duration: f32,
    /// Crossfade curve.
    pub curve: Curve,
    /// Higher wins.
    pub priority: i32,
}

/// A controller checked against a rig: immutable, shared by every
/// character that uses it.
#[derive(Debug, Clone, PartialEq)]
pub struct Controller {
    pub(crate) parameters: Vec<Parameter>,
    pub(crate) states: Vec<State>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) leaves: Vec<Leaf>,
    pub(crate) groups: Vec<SyncGroup>,
    pub(crate) inputs: Vec<SpaceInput>,
    pub(crate) transitions: Vec<Transition>,
    /// Transitions out of each state, best first (priority, then file order).
    pub(crate) outgoing: Vec<Vec<u32>>,
    /// Any-state transitions, best first.
    pub(crate) any_state: Vec<u32>,
    pub(crate) initial: Option<u32>,
    /// States `0..machine_states` are the state machine's; each later one
    /// is the motion of a layer (`layers[s - machine_states]`).
    pub(crate) machine_states: usize,
    pub(crate) layers: Vec<Layer>,
    /// The root-motion joint and each clip node's root track.
    pub(crate) root_motion: Option<RootMotionSetup>,
    /// Each rig clip's clip cursor in a character (`ClipCursors::slots`
    /// of the leaves' clips).
    pub(crate) cursor_slots: Arc<[u32]>,
    /// The joints whose world matrices a character keeps when it keeps
    /// few, ascending (rigidly drawn meshes', the root-motion joint's parent).
    pub(crate) world_joints: Arc<[u32]>,
}

/// A layer: its motion (a state past the machine's), how it combines, its
/// weight, its mask and, for additive layers, its reference pose.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    /// Name.
    pub name: String,
    /// The state holding its motion.
    pub(crate) state: u32,
    /// Override or additive.
    pub mode: LayerMode,
    pub(crate) weight: Weight,
    /// Weight of each skeleton joint.
    pub mask: Vec<f32>,
    /// The joints from the first to the last with a mask weight above 0
    /// (the skeleton lists joints depth first: a mask of one or a few
    /// subtrees is one short range).
    pub(crate) joints: Range<u32>,
    /// The pose an additive layer's difference is taken from.
    pub(crate) reference: Pose,
    /// Where `reference` was sampled (additive layers; for override
    /// layers the first clip at 0, unused).
    pub reference_source: LayerReference,
    /// What starts a triggered layer, and how it fades (`None`: the layer
    /// plays whenever its weight is above 0).
    pub trigger: Option<LayerTrigger>,
    /// Whether its clips animate morph weights: an override layer whose
    /// clips do not leaves the morph weights below it alone.
    pub(crate) morphs: bool,
}

impl Layer {
    /// The joints its mask reaches: the first to the last with a weight
    /// above 0 (empty for none).
    pub fn joints(&self) -> Range<usize> {
        self.joints.start as usize..self.joints.end as usize
    }
}

/// The first to the last joint of `mask` with a weight above 0.
pub(crate) fn mask_joints(mask: &[f32]) -> Range<u32> {
    let first = mask.iter().position(|&w| w > 0.0);
    let last = mask.iter().rposition(|&w| w > 0.0);
    match (first, last) {
        (Some(first), Some(last)) => first as u32..last as u32 + 1,
        _ => 0..0,
    }
}

/// The clip and time an additive layer's reference pose is sampled at
/// (slerp for LINEAR rotations, the rig's rest pose where the clip has no track).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerReference {
    /// Rig clip index.
    pub clip: u32,
    /// Seconds on the clip's timeline (clamped to its keys, never wrapped).
    pub time: f32,
}

/// A triggered layer, resolved: the trigger that starts a run, and the
/// run's envelope (see `LayerTriggerDef`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerTrigger {
    /// The trigger parameter (index in the controller).
    pub parameter: ParameterId,
    /// Seconds the weight takes to rise from 0.
    pub fade_in: f32,
    /// Seconds the weight takes to fall to 0 at the end.
    pub fade_out: f32,
    /// Seconds one run lasts: the layer's longest clip at its speed.
    pub length: f32,
}

impl LayerTrigger {
    /// The layer's weight factor `elapsed` seconds into a run, in [0, 1]:
    /// 0 outside `[0, length)`, else the smaller of the fade-in and the
    /// fade-out ramp, each eased (smoothstep, as a smooth crossfade).
    pub fn envelope(&self, elapsed: f32) -> f32 {
        if !(0.0..self.length).contains(&elapsed) {
            return 0.0;
        }
        let ramp =
            |seconds: f32, fade: f32| if fade > 0.0 { Curve::Smooth.apply(seconds / fade) } else { 1.0 };
        ramp(elapsed, self.fade_in).min(ramp(self.length - elapsed, self.fade_out))
    }
}

/// Root motion: the joint and, per clip node, its clip's root track.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RootMotionSetup {
    pub joint: u32,
    pub leaves: Vec<ClipRootMotion>,
}

impl Controller {
    /// Checks `file` against `rig`. The error names the element, e.g.
    /// `transition 2 ("Idle" -> "Run"): when "speed": float parameter "speed" needs a comparison`.
    pub fn compile(file: &ControllerFile, rig: &Rig) -> Result<Self, ControllerError> {
        compile::compile(file, rig, &|key| rig.find_clip(key))
    }

    /// Reads, parses and checks a controller file: a regular file (never a
    /// FIFO or a device) of at most [`caps::MAX_FILE_BYTES`] and never more
    /// than `max_memory` (`--max-memory`), UTF-8 (a byte-order mark is
    /// skipped). The error ([`ControllerError::Read`],
    /// [`ControllerError::TooLarge`] or [`ControllerError::File`]) prints as
    /// one line starting with the file's path: `walk.ron:3:5: ...` for
    /// syntax, `walk.ron: state 0 "A": ...` for the rest.
    pub fn load(path: &Path, rig: &Rig, max_memory: u64) -> Result<Self, ControllerError> {
        let allowed = caps::MAX_FILE_BYTES.min(max_memory);
        let text = input_file::read_text(path, allowed).map_err(|e| match e {
            InputError::TooLarge { size, .. } => {
                ControllerError::TooLarge { path: path.to_path_buf(), size, allowed, max_memory }
            }
            source => ControllerError::Read { path: path.to_path_buf(), source },
        })?;
        Self::from_text(&text, rig).map_err(|e| e.in_file(path))
    }

    /// Parses and checks controller text; the error prints as `LINE:COL:
    /// what` for syntax, `what` for everything else.
    pub fn from_text(text: &str, rig: &Rig) -> Result<Self, ControllerError> {
        let file = ControllerFile::parse(text)?;
        Self::compile(&file, rig)
    }

    /// One state playing clip `clip` (looping or not); no states (the rest
    /// pose) for `None`. What `dump --clip` and a model without a controller use.
    pub fn single_clip(rig: &Rig, clip: Option<usize>, looping: bool) -> Result<Self, ControllerError> {
        Self::clip_blend(rig, clip, None, false, looping)
    }

    /// The viewer's manual mode: clip `a`, blended with clip `b` by the float
    /// parameter `blend` (0 = all A, 1 = all B), kept in phase when `sync`.
    pub fn clip_blend(
        rig: &Rig,
        a: Option<usize>,
        b: Option<usize>,
        sync: bool,
        looping: bool,
    ) -> Result<Self, ControllerError> {
        let clip = |c: usize| MotionDef::Clip { clip: c.to_string(), looping, speed: 1.0 };
        let motion = match (a, b) {
            (Some(a), Some(b)) if a != b => Some(MotionDef::BlendSpace1D {
                parameter: "blend".into(),
                points: vec![
                    BlendPointDef { at: 0.0, motion: clip(a) },
                    BlendPointDef { at: 1.0, motion: clip(b) },
                ],
                sync,
                smoothing: 0.0,
            }),
            (Some(a), _) => Some(clip(a)),
            (None, _) => None,
        };
        let file = ControllerFile {
            parameters: vec![ParameterDef::Float {
                name: "blend".into(),
                default: 0.0,
                min: Some(0.0),
                max: Some(1.0),
            }],
            initial: None,
            states: motion.into_iter().map(|motion| StateDef { name: "Clips".into(), motion }).collect(),
            transitions: Vec::new(),
            layers: Vec::new(),
            root_motion: None,
        };
        // Clips are named by index here, whatever their names.
        compile::compile(&file, rig, &|key| key.parse().ok().filter(|&c: &usize| c < rig.clips.len()))
    }

    /// Parameters in file order.
    pub fn parameters(&self) -> &[Parameter] {
        &self.parameters
    }

    /// The parameter called `name`.
    pub fn parameter(&self, name: &str) -> Option<ParameterId> {
        self.parameters.iter().position(|p| p.name == name).map(|i| ParameterId(i as u32))
    }

    /// The state machine's states, in file order (layers' motions follow
    /// them in `all_states`).
    pub fn states(&self) -> &[State] {
        &self.states[..self.machine_states]
    }

    /// The machine's states, then one per layer (its motion).
    pub(crate) fn all_states(&self) -> &[State] {
        &self.states
    }

    /// The clip nodes of the machine's states (the layers' follow them).
    pub(crate) fn machine_leaves(&self) -> Range<u32> {
        0..self.states.get(self.machine_states).map_or(self.leaves.len() as u32, |s| s.leaves.start)
    }

    /// Layers, in the order they apply.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// The state called `name`.
    pub fn state(&self, name: &str) -> Option<usize> {
        self.states().iter().position(|s| s.name == name)
    }

    /// A layer's weight for these parameter values, in [0, 1].
    pub(crate) fn layer_weight(&self, layer: &Layer, values: &[f32]) -> f32 {
        let w = match layer.weight {
            Weight::Value(v) => v,
            Weight::Parameter(p) => values[p as usize],
        };
        if w.is_finite() { w.clamp(0.0, 1.0) } else { 0.0 }
    }

    /// Transitions in file order.
    pub fn transitions(&self) -> &[Transition] {
        &self.transitions
    }

    /// Clip nodes of every state.
    pub fn leaves(&self) -> &[Leaf] {
        &self.leaves
    }

    /// Sync groups of every state.
    pub fn groups(&self) -> &[SyncGroup] {
        &self.groups
    }

    /// The root-motion joint, when the controller takes root motion out.
    pub fn root_motion_joint(&self) -> Option<usize> {
        self.root_motion.as_ref().map(|r| r.joint as usize)
    }

    /// The state a character starts in (`None` without states: the rest pose).
    pub fn initial(&self) -> Option<usize> {
        self.initial.map(|s| s as usize)
    }

    /// Writes the weight of each clip node of `state` within that state
    /// (non-negative, summing to one) into `out[leaf]`; other entries are
    /// left alone. `values` are the parameter values, `inputs` the
    /// blend-space inputs (see `SpaceInput`). Never allocates.
    pub(crate) fn state_weights(&self, state: usize, values: &[f32], inputs: &[f32], out: &mut [f32]) {
        let s = &self.states[state];
        out[s.leaves.start as usize..s.leaves.end as usize].fill(0.0);
        self.node_weights(s.root, 1.0, values, inputs, out);
    }

    fn node_weights(&self, node: u32, weight: f32, values: &[f32], inputs: &[f32], out: &mut [f32]) {
        match &self.nodes[node as usize] {
            Node::Clip { leaf } => out[*leaf as usize] = weight,
            Node::Blend { inputs: children } => {
                let value = |w: &Weight| {
                    let v = match *w {
                        Weight::Value(v) => v,
                        Weight::Parameter(p) => values[p as usize],
                    };
                    if v.is_finite() { v.max(0.0) } else { 0.0 }
                };
                let total: f32 = children.iter().map(|(_, w)| value(w)).sum();
                for (i, (child, w)) in children.iter().enumerate() {
                    // Nothing weighted: the first input plays alone.
                    let share = if total > 0.0 && total.is_finite() {
                        value(w) / total
                    } else if i == 0 {
                        1.0
                    } else {
                        0.0
                    };
                    self.node_weights(*child, weight * share, values, inputs, out);
                }
            }
            Node::Space { input, points } => {
                let x = inputs[*input as usize];
                // Index of the last point at or below x (0 below the first).
                let upper = points.partition_point(|&(at, _)| at <= x);
                let (lo, t) = match upper {
                    0 => (0, 0.0),
                    n if n >= points.len() => (points.len() - 1, 0.0),
                    n => {
                        let (a, b) = (points[n - 1].0, points[n].0);
                        (n - 1, ((x - a) / (b - a)).clamp(0.0, 1.0))
                    }
                };
                for (i, &(_, child)) in points.iter().enumerate() {
                    let share = if i == lo {
                        1.0 - t
                    } else if i == lo + 1 {
                        t
                    } else {
                        0.0
                    };
                    self.node_weights(child, weight * share, values, inputs, out);
                }
            }
        }
    }
}
