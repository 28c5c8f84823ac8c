//! Why a controller was refused: [`ControllerError`] names the file (or the
//! built-in controller), the line and column of a syntax error, and the
//! parameter, state, transition or layer concerned, with the problem as a
//! typed value below it. Every error prints as one line, names from files
//! shortened and escaped by `crate::text::display_name`. Only describes:
//! never reads, parses or checks anything itself.

use super::MAX_CLIP_NODES;
use super::MAX_DEPTH;
use super::ParameterKind;
use super::condition::ConditionError;
use crate::anim::JobError;
use crate::text::{display_name, label};
use std::path::PathBuf;

/// A controller that could not be read, parsed or checked against a rig.
/// Prints as one line, e.g. `walk.ron:3:5: unexpected ...` or `walk.ron:
/// transition 2 ("Idle" -> "Run"): when "speed": float parameter "speed"
/// needs a comparison, e.g. "speed > 0.5"`; causes are kept as `source()`.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// The file could not be read.
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// A controller file's text was refused (`error` says where and why).
    #[error("{}{}{source}", path.display(), after_origin(source))]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong in it.
        #[source]
        source: Box<ControllerError>,
    },
    /// The built-in controller (assets/default_character.ron) was refused.
    #[error("built-in controller{sep}{0}", sep = after_origin(.0))]
    BuiltIn(#[source] Box<ControllerError>),
    /// The text is not RON, or not the shape of a controller file.
    #[error("{line}:{column}: {}", one_line(source))]
    Syntax {
        /// Line of the problem, from 1.
        line: usize,
        /// Column of the problem, from 1.
        column: usize,
        /// RON's reason.
        #[source]
        source: ron::error::Error,
    },
    /// A parameter definition is refused.
    #[error("{}: {problem}", label("parameter", *index, Some(name)))]
    Parameter {
        /// Its index in the file.
        index: usize,
        /// Its name.
        name: String,
        /// What is wrong.
        #[source]
        problem: ParameterProblem,
    },
    /// A state is refused.
    #[error("{}: {problem}", label("state", *index, Some(name)))]
    State {
        /// Its index in the file.
        index: usize,
        /// Its name.
        name: String,
        /// What is wrong.
        #[source]
        problem: StateProblem,
    },
    /// `initial` names no state.
    #[error("initial: no state \"{}\"", display_name(.0))]
    Initial(String),
    /// A transition is refused.
    #[error("transition {index} (\"{}\" -> \"{}\"): {problem}", display_name(from), display_name(to))]
    Transition {
        /// Its index in the file.
        index: usize,
        /// Its source state as written (`*` for any state).
        from: String,
        /// Its target state as written.
        to: String,
        /// What is wrong.
        #[source]
        problem: TransitionProblem,
    },
    /// A layer is refused.
    #[error("{}: {problem}", label("layer", *index, Some(name)))]
    Layer {
        /// Its index in the file.
        index: usize,
        /// Its name.
        name: String,
        /// What is wrong.
        #[source]
        problem: LayerProblem,
    },
    /// `root_motion` names no joint of the skeleton.
    #[error("root_motion: no joint \"{}\"", display_name(.0))]
    RootMotionJoint(String),
}

impl ControllerError {
    /// The same error, said to be in the file at `path`.
    pub fn in_file(self, path: impl Into<PathBuf>) -> Self {
        ControllerError::File { path: path.into(), source: Box::new(self) }
    }

    /// The innermost error (past `File` and `BuiltIn`).
    pub fn root(&self) -> &ControllerError {
        match self {
            ControllerError::File { source, .. } | ControllerError::BuiltIn(source) => source.root(),
            other => other,
        }
    }
}

/// What follows a file's name: `:` before a syntax error's `LINE:COLUMN`,
/// `: ` before anything else.
fn after_origin(error: &ControllerError) -> &'static str {
    match error {
        ControllerError::Syntax { .. } => ":",
        _ => ": ",
    }
}

/// RON's message on one line.
fn one_line(error: &ron::error::Error) -> String {
    error.to_string().replace('\n', " ")
}

/// What is wrong with a parameter definition.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParameterProblem {
    /// An empty name, or one with other characters.
    #[error("names use letters, digits, '_', '.' and '-'")]
    Name,
    /// An earlier parameter has the same name.
    #[error("a second parameter with this name")]
    Duplicate,
    /// A float's default is NaN or infinite.
    #[error("default {0} is not finite")]
    Default(f32),
    /// A float's slider bounds (given or defaulted) are not an interval.
    #[error("min {min} and max {max} do not make a range")]
    Range {
        /// Lower bound.
        min: f32,
        /// Upper bound.
        max: f32,
    },
}

/// What is wrong with a state.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StateProblem {
    /// An empty name, or the any-state name `*`.
    #[error("a state needs a name other than \"\" and \"*\"")]
    Name,
    /// An earlier state has the same name.
    #[error("a second state with this name")]
    Duplicate,
    /// Its blend tree is refused.
    #[error("motion: {0}")]
    Motion(#[source] MotionError),
}

/// What is wrong with a transition.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TransitionProblem {
    /// Its source or target names no state.
    #[error("no state \"{}\"", display_name(.0))]
    NoState(String),
    /// Its source and target are the same state.
    #[error("a transition from a state to itself")]
    ToItself,
    /// A `when` entry is refused.
    #[error("when \"{}\": {source}", display_name(text))]
    Condition {
        /// The entry as written.
        text: String,
        /// Why (boxed: keeps every `ControllerError` small).
        #[source]
        source: Box<ConditionError>,
    },
    /// `exit_time` is negative or not finite.
    #[error("exit_time {0} is not a finite number >= 0")]
    ExitTime(f32),
    /// `duration` is negative or not finite.
    #[error("duration {0} is not a finite number of seconds >= 0")]
    Duration(f32),
}

/// What is wrong with a layer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LayerProblem {
    /// An empty name, or one a state or an earlier layer has.
    #[error("a layer needs a name no state or other layer has")]
    Name,
    /// Its blend tree is refused.
    #[error("motion: {0}")]
    Motion(#[source] MotionError),
    /// A fixed weight outside [0, 1].
    #[error("weight {0} is not in [0, 1]")]
    Weight(f32),
    /// Its weight parameter is unknown or not a float.
    #[error("weight: {0}")]
    WeightParameter(#[source] ParameterRefError),
    /// A mask entry names no joint.
    #[error("mask {entry}: no joint \"{}\"", display_name(joint))]
    MaskJoint {
        /// Index of the mask entry.
        entry: usize,
        /// The joint as written.
        joint: String,
    },
    /// A mask entry's weight is outside [0, 1].
    #[error("mask {entry}: weight {weight} is not in [0, 1]")]
    MaskWeight {
        /// Index of the mask entry.
        entry: usize,
        /// The weight.
        weight: f32,
    },
    /// An override layer was given a reference pose.
    #[error("reference: only additive layers take one")]
    ReferenceOnOverride,
    /// The reference pose's clip does not exist.
    #[error("reference: {0}")]
    ReferenceClip(#[source] UnknownClip),
    /// The reference pose's time is not finite.
    #[error("reference: time {0} is not finite")]
    ReferenceTime(f32),
    /// The reference pose could not be sampled.
    #[error("reference: {0}")]
    Reference(#[source] JobError),
}

/// What is wrong in a blend tree, with the path down to it
/// (`input 1: point 0: no clip "Jog" ...`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MotionError {
    /// Nested deeper than [`MAX_DEPTH`].
    #[error("blend trees nest at most {MAX_DEPTH} deep")]
    TooDeep,
    /// More than [`MAX_CLIP_NODES`] clip nodes in the whole controller.
    #[error("more than {MAX_CLIP_NODES} clip nodes")]
    TooManyClipNodes,
    /// A clip node names no clip of the rig.
    #[error(transparent)]
    Clip(#[from] UnknownClip),
    /// A clip node's speed is not a finite number > 0.
    #[error("clip \"{}\": speed {speed} is not a finite number > 0", display_name(clip))]
    Speed {
        /// The clip as written.
        clip: String,
        /// The speed.
        speed: f32,
    },
    /// A blend without inputs.
    #[error("a blend needs at least one input")]
    EmptyBlend,
    /// A blend input's fixed weight is negative or not finite.
    #[error("input {input}: weight {weight} is not finite and >= 0")]
    InputWeight {
        /// Index of the input.
        input: usize,
        /// The weight.
        weight: f32,
    },
    /// A blend input's weight parameter is unknown or not a float.
    #[error("input {input}: weight: {source}")]
    InputParameter {
        /// Index of the input.
        input: usize,
        /// Why.
        #[source]
        source: ParameterRefError,
    },
    /// Something below a blend input.
    #[error("input {input}: {source}")]
    Input {
        /// Index of the input.
        input: usize,
        /// What.
        #[source]
        source: Box<MotionError>,
    },
    /// A blend space's parameter is unknown or not a float.
    #[error(transparent)]
    SpaceParameter(ParameterRefError),
    /// A blend space without points.
    #[error("a blend space needs at least one point")]
    EmptySpace,
    /// A blend space's smoothing is negative or not finite.
    #[error("smoothing {0} is not a finite number of seconds >= 0")]
    Smoothing(f32),
    /// A point's position is not finite.
    #[error("point {point}: at {at} is not finite")]
    PointPosition {
        /// Index of the point.
        point: usize,
        /// Its position.
        at: f32,
    },
    /// Two points at the same position.
    #[error("point {point}: a second point at {at}")]
    DuplicatePoint {
        /// Index of the second point.
        point: usize,
        /// Their position.
        at: f32,
    },
    /// Something below a blend-space point.
    #[error("point {point}: {source}")]
    Point {
        /// Index of the point.
        point: usize,
        /// What.
        #[source]
        source: Box<MotionError>,
    },
}

/// A float parameter named by a blend node or a layer weight that is not one.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParameterRefError {
    /// No parameter has this name.
    #[error("unknown parameter \"{}\"", display_name(.0))]
    Unknown(String),
    /// The parameter is a bool or a trigger.
    #[error("parameter \"{}\" is a {}, not a float", display_name(name), kind.name())]
    NotFloat {
        /// Its name.
        name: String,
        /// Its kind.
        kind: ParameterKind,
    },
}

/// A clip key that names no clip of the rig; lists the rig's clips.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("no clip \"{}\" {}", display_name(key), clip_list(clips))]
pub struct UnknownClip {
    /// The key as written.
    pub key: String,
    /// The rig's clip names, in order ("" for an unnamed clip).
    pub clips: Vec<String>,
}

/// `(clips: "A", "B")`, or `(the model has no clips)`.
fn clip_list(clips: &[String]) -> String {
    if clips.is_empty() {
        return "(the model has no clips)".to_string();
    }
    let quoted: Vec<String> = clips.iter().map(|c| format!("\"{}\"", display_name(c))).collect();
    format!("(clips: {})", quoted.join(", "))
}
