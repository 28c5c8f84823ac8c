//! The controller file: what a user writes (RON, read with serde). See the
//! controllers guide page (`vkskin::guide::controllers`) for a commented
//! example; `compile` checks it against a rig. Only
//! the file's shape: no names are resolved here, and no rig is read.

use super::caps;
use super::error::ControllerError;
use serde::{Deserialize, Serialize};

/// A whole controller file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerFile {
    /// Parameters gameplay (or the viewer, or `simulate --set`) changes.
    #[serde(default, deserialize_with = "caps::parameters")]
    pub parameters: Vec<ParameterDef>,
    /// The state the machine starts in (default: the first state).
    #[serde(default, deserialize_with = "caps::optional_name")]
    pub initial: Option<String>,
    /// States, each playing one motion (a blend tree).
    #[serde(deserialize_with = "caps::states")]
    pub states: Vec<StateDef>,
    /// Transitions between states, including any-state ones (`from: "*"`).
    #[serde(default, deserialize_with = "caps::transitions")]
    pub transitions: Vec<TransitionDef>,
    /// Layers over the state machine's pose, applied in order (gestures,
    /// faces, upper-body actions over locomotion).
    #[serde(default, deserialize_with = "caps::layers")]
    pub layers: Vec<LayerDef>,
    /// The joint whose travel on the ground and turn about the up axis are
    /// taken out of the pose as root motion (see `character::root_motion`);
    /// none by default (the clips move the pose itself).
    #[serde(default, deserialize_with = "caps::optional_name")]
    pub root_motion: Option<String>,
}

/// A parameter and its default value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum ParameterDef {
    /// A number (e.g. speed in m/s). `min`/`max` only bound the viewer's slider.
    Float {
        /// Name used by conditions and blend nodes.
        #[serde(deserialize_with = "caps::name")]
        name: String,
        /// Initial value.
        #[serde(default)]
        default: f32,
        /// Slider minimum.
        #[serde(default)]
        min: Option<f32>,
        /// Slider maximum.
        #[serde(default)]
        max: Option<f32>,
    },
    /// A flag (e.g. grounded).
    Bool {
        /// Name used by conditions.
        #[serde(deserialize_with = "caps::name")]
        name: String,
        /// Initial value.
        #[serde(default)]
        default: bool,
    },
    /// A one-update event (e.g. jump): set by `fire`, seen by the next
    /// update's transitions, then cleared whether a transition used it or not.
    Trigger {
        /// Name used by conditions.
        #[serde(deserialize_with = "caps::name")]
        name: String,
    },
}

impl ParameterDef {
    /// The parameter's name.
    pub fn name(&self) -> &str {
        match self {
            ParameterDef::Float { name, .. }
            | ParameterDef::Bool { name, .. }
            | ParameterDef::Trigger { name } => name,
        }
    }
}

/// A layer: a motion applied over the pose below with a weight and a mask.
/// Its clips start from the beginning each time its weight rises from 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerDef {
    /// Unique among layers and states.
    #[serde(deserialize_with = "caps::name")]
    pub name: String,
    /// What the layer plays.
    pub motion: MotionDef,
    /// Override (default) or Additive.
    #[serde(default)]
    pub blending: LayerBlendingDef,
    /// A fixed weight or a float parameter (clamped to [0, 1]); 1 by default.
    #[serde(default = "full_weight")]
    pub weight: WeightDef,
    /// Which joints it moves: each entry sets a joint (and, unless
    /// `children: false`, everything below it) to a weight; later entries
    /// win. No mask: every joint at 1; a mask: unlisted joints at 0.
    #[serde(default, deserialize_with = "caps::mask")]
    pub mask: Vec<MaskDef>,
    /// Additive only: the pose the difference is taken from (default: the
    /// first key of the layer's first clip).
    #[serde(default)]
    pub reference: Option<ReferenceDef>,
    /// Plays the layer once each time a trigger fires, fading in and out
    /// (a gesture); none: the layer plays whenever its weight is above 0.
    #[serde(default)]
    pub trigger: Option<LayerTriggerDef>,
}

/// A triggered layer: `trigger: (parameter: "wave", fade_in: 0.2,
/// fade_out: 0.3)`. Each firing while the layer is idle starts its clips
/// from the beginning; its weight (times `weight`) rises over `fade_in`,
/// holds, and falls over `fade_out` to reach 0 as its longest clip ends.
/// A firing while it plays is ignored: the gesture finishes first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerTriggerDef {
    /// The trigger parameter that starts the layer.
    #[serde(deserialize_with = "caps::name")]
    pub parameter: String,
    /// Seconds the weight takes to rise from 0 (0: at once).
    #[serde(default)]
    pub fade_in: f32,
    /// Seconds before the end at which the weight starts to fall (0: it
    /// drops at the end).
    #[serde(default)]
    pub fade_out: f32,
}

/// How a layer combines with the pose below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum LayerBlendingDef {
    /// Replaces the pose, by weight.
    #[default]
    Override,
    /// Adds its difference from the reference pose.
    Additive,
}

/// One mask entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaskDef {
    /// Joint name.
    #[serde(deserialize_with = "caps::name")]
    pub joint: String,
    /// Its weight in [0, 1].
    #[serde(default = "one")]
    pub weight: f32,
    /// Also every joint below it.
    #[serde(default = "yes")]
    pub children: bool,
}

/// A clip at a time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceDef {
    /// Clip name (or index).
    #[serde(deserialize_with = "caps::name")]
    pub clip: String,
    /// Seconds on its timeline.
    #[serde(default)]
    pub time: f32,
}

fn full_weight() -> WeightDef {
    WeightDef::Value(1.0)
}

/// A state: a name and the motion it plays.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateDef {
    /// Unique name ("*" is reserved for any-state transitions).
    #[serde(deserialize_with = "caps::name")]
    pub name: String,
    /// What the state plays.
    pub motion: MotionDef,
}

/// A blend-tree node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum MotionDef {
    /// One clip.
    Clip {
        /// Clip name (or index, or `animation_N` for an unnamed clip).
        #[serde(deserialize_with = "caps::name")]
        clip: String,
        /// Wraps at the end (else holds the last pose).
        #[serde(default = "yes")]
        looping: bool,
        /// Playback rate of this clip.
        #[serde(default = "one")]
        speed: f32,
    },
    /// A weighted blend of several motions; weights are normalised to sum to one.
    Blend {
        /// The motions and their weights.
        #[serde(deserialize_with = "caps::inputs")]
        inputs: Vec<BlendInputDef>,
        /// Keep every clip below at the same normalised phase.
        #[serde(default)]
        sync: bool,
    },
    /// Motions placed along one float parameter (e.g. speed): the two
    /// neighbours of the parameter's value blend linearly, the ends clamp.
    BlendSpace1D {
        /// The float parameter.
        #[serde(deserialize_with = "caps::name")]
        parameter: String,
        /// The motions and where they sit, in any order (positions distinct).
        #[serde(deserialize_with = "caps::points")]
        points: Vec<BlendPointDef>,
        /// Keep every clip below at the same normalised phase (a sync
        /// group led by the heaviest clip).
        #[serde(default)]
        sync: bool,
        /// Seconds the blend space takes to follow a change of its parameter
        /// (exponential, time constant), so a jump from 1.2 to 3.5 m/s
        /// slides from walk to run instead of popping; 0 follows at once.
        #[serde(default)]
        smoothing: f32,
    },
}

/// One input of a `Blend`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlendInputDef {
    /// The motion.
    pub motion: MotionDef,
    /// A fixed weight or a float parameter's name.
    pub weight: WeightDef,
}

/// A blend weight: a number, or a float parameter read every update.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum WeightDef {
    /// A fixed weight.
    Value(f32),
    /// The value of this float parameter (negative counts as 0).
    Parameter(#[serde(deserialize_with = "caps::name")] String),
}

/// One point of a `BlendSpace1D`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlendPointDef {
    /// The parameter value where this motion has full weight.
    pub at: f32,
    /// The motion.
    pub motion: MotionDef,
}

/// A transition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransitionDef {
    /// Source state, or "*" for any state.
    #[serde(deserialize_with = "caps::name")]
    pub from: String,
    /// Target state.
    #[serde(deserialize_with = "caps::name")]
    pub to: String,
    /// Conditions that must all hold: `speed > 0.5`, `grounded`, `!grounded`,
    /// `grounded == false`, `jump` (a trigger); operators `< <= > >= == !=`.
    #[serde(default, deserialize_with = "caps::conditions")]
    pub when: Vec<String>,
    /// Also wait until the source state's normalised time (cycles since it
    /// was entered: 1.0 = the end of its first cycle) reaches this.
    #[serde(default)]
    pub exit_time: Option<f32>,
    /// Crossfade length in seconds (0: switch at once).
    #[serde(default)]
    pub duration: f32,
    /// How the weights move during the crossfade.
    #[serde(default)]
    pub curve: Curve,
    /// Higher wins when several transitions can start in the same update
    /// (then the one written first).
    #[serde(default)]
    pub priority: i32,
}

/// Crossfade curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Curve {
    /// Weights change at a constant rate.
    Linear,
    /// Smoothstep: weights start and end gently.
    #[default]
    Smooth,
}

fn yes() -> bool {
    true
}

fn one() -> f32 {
    1.0
}

impl ControllerFile {
    /// Parses RON text (optional values written plainly: `exit_time: 0.9`,
    /// not `Some(0.9)`; a leading byte-order mark is skipped), within the
    /// caps of [`super::caps`]. The error ([`ControllerError::Syntax`])
    /// prints as one short line: `LINE:COLUMN: what`.
    pub fn parse(text: &str) -> Result<Self, ControllerError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
            // Deep enough for MAX_DEPTH nested blend nodes (see MAX_NESTING),
            // so the depth check names the problem.
            .with_recursion_limit(caps::MAX_NESTING)
            .from_str(text)
            .map_err(|e: ron::error::SpannedError| ControllerError::Syntax {
                line: e.span.start.line,
                column: e.span.start.col,
                source: e.code,
            })
    }

    /// Writes RON text (for controllers built in code, e.g. to save them).
    pub fn to_ron(&self) -> String {
        ron::ser::to_string_pretty(self, ron::ser::PrettyConfig::default()).unwrap_or_default()
    }
}

impl Curve {
    /// Weight of the incoming state at fade progress `p` in [0, 1].
    pub fn apply(self, p: f32) -> f32 {
        let p = p.clamp(0.0, 1.0);
        match self {
            Curve::Linear => p,
            Curve::Smooth => p * p * (3.0 - 2.0 * p),
        }
    }
}
