//! Why a controller was refused: [`ControllerError`] names the file (or the
//! built-in controller), the line and column of a syntax error, and the
//! parameter, state, transition or layer concerned, with the problem as a
//! typed value below it. Every error prints as one line, names from files
//! shortened and escaped by `crate::text::display_name`. Only describes:
//! never reads, parses or checks anything itself.

use super::ParameterKind;
use super::caps::{MAX_FILE_BYTES, MAX_NESTING};
use super::condition::ConditionError;
use super::{MAX_CLIP_NODES, MAX_DEPTH, MAX_EXIT_TIME, MAX_POINT_POSITION, MAX_SECONDS, MAX_SPEED};
use crate::anim::JobError;
use crate::input_file::InputError;
use crate::text::{MAX_NAME_CHARS, display_name, escape, human_bytes, label};
use std::path::PathBuf;

/// A controller that could not be read, parsed or checked against a rig.
/// Prints as one line, e.g. `walk.ron:3:5: unexpected ...` or `walk.ron:
/// transition 2 ("Idle" -> "Run"): when "speed": float parameter "speed"
/// needs a comparison, e.g. "speed > 0.5"`; causes are kept as `source()`.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// The file could not be read: missing, not a regular file, not UTF-8.
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why (`cannot read: ...`, `is a FIFO, not a regular file`, ...).
        #[source]
        source: InputError,
    },
    /// The file is larger than a controller file may be.
    #[error("{}: {} ({size} bytes), more than the {} a controller file may have \
        (at most {} and never more than --max-memory {})",
        path.display(), human_bytes(*.size), human_bytes(*.allowed),
        human_bytes(MAX_FILE_BYTES), human_bytes(*.max_memory))]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size in bytes.
        size: u64,
        /// The most it may have: the smaller of the fixed cap and `max_memory`.
        allowed: u64,
        /// `--max-memory`.
        max_memory: u64,
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

/// Longest RON message printed whole, in characters.
const MAX_SYNTAX_CHARS: usize = 240;

/// RON's message on one short line: what it quotes from the file (between
/// backticks or double quotes) shortened like a name, the whole escaped and
/// cut at [`MAX_SYNTAX_CHARS`]; too deep a nesting said plainly (RON's own
/// message gives advice meant for the program, not the user).
fn one_line(error: &ron::error::Error) -> String {
    if matches!(error, ron::error::Error::ExceededRecursionLimit) {
        return format!("nested deeper than {MAX_NESTING} levels (the most a controller may have)");
    }
    let message = error.to_string();
    let mut out = String::with_capacity(message.len().min(4 * MAX_SYNTAX_CHARS));
    for (i, outside) in message.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        for (j, part) in outside.split('"').enumerate() {
            if j > 0 {
                out.push('"');
            }
            // Odd parts were quoted by one of the two marks.
            let quoted = i % 2 == 1 || j % 2 == 1;
            if quoted && part.chars().count() > MAX_NAME_CHARS {
                out.push_str(&display_name(part));
            } else {
                out.push_str(part);
            }
        }
    }
    let out = escape(&out);
    if out.chars().count() <= MAX_SYNTAX_CHARS {
        return out;
    }
    let mut short: String = out.chars().take(MAX_SYNTAX_CHARS - 1).collect();
    short.push('…');
    short
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
    /// A float's default lies outside its slider range.
    #[error("default {default} is outside min {min} .. max {max}")]
    DefaultOutside {
        /// The default.
        default: f32,
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
    /// `exit_time` is negative, not finite or past [`MAX_EXIT_TIME`].
    #[error("exit_time {0} is not a number in [0, {MAX_EXIT_TIME}]")]
    ExitTime(f32),
    /// `duration` is negative, not finite or longer than [`MAX_SECONDS`].
    #[error("duration {0} is not a number of seconds in [0, {MAX_SECONDS}]")]
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
    /// The reference pose's time is not finite or past ±[`MAX_SECONDS`].
    #[error("reference: time {0} is not a number of seconds in [-{MAX_SECONDS}, {MAX_SECONDS}]")]
    ReferenceTime(f32),
    /// The reference pose could not be sampled.
    #[error("reference: {0}")]
    Reference(#[source] JobError),
    /// `trigger` names no parameter.
    #[error("trigger: unknown parameter \"{}\"", display_name(.0))]
    TriggerParameter(String),
    /// `trigger` names a float or a bool.
    #[error("trigger: parameter \"{}\" is a {}, not a trigger", display_name(name), kind.name())]
    NotATrigger {
        /// Its name.
        name: String,
        /// Its kind.
        kind: ParameterKind,
    },
    /// A fade is negative, not finite or longer than [`MAX_SECONDS`].
    #[error("trigger: {what} {seconds} is not a number of seconds in [0, {MAX_SECONDS}]")]
    TriggerFade {
        /// `fade_in` or `fade_out`.
        what: &'static str,
        /// The value.
        seconds: f32,
    },
    /// A triggered layer plays a looping clip (its run would never end).
    #[error("trigger: a triggered layer plays once, so clip \"{}\" needs looping: false", display_name(.0))]
    TriggerLooping(String),
    /// A triggered layer's clips all last 0 s.
    #[error("trigger: the layer's clips last 0 s, so a run would show nothing")]
    TriggerLength,
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
    /// A clip node's speed is not a number > 0 and at most [`MAX_SPEED`].
    #[error("clip \"{}\": speed {speed} is not a number > 0 and <= {MAX_SPEED}", display_name(clip))]
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
    /// A blend space's smoothing is negative, not finite or longer than [`MAX_SECONDS`].
    #[error("smoothing {0} is not a number of seconds in [0, {MAX_SECONDS}]")]
    Smoothing(f32),
    /// A point's position is not finite or past ±[`MAX_POINT_POSITION`].
    #[error("point {point}: at {at} is not a number in [-{MAX_POINT_POSITION}, {MAX_POINT_POSITION}]")]
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

/// Most clip names an unknown-clip message lists (a line stays short
/// whatever the model has).
const MAX_LISTED_CLIPS: usize = 3;

/// `(clips: "A", "B")`, or `(the model has no clips)`.
fn clip_list(clips: &[String]) -> String {
    if clips.is_empty() {
        return "(the model has no clips)".to_string();
    }
    let mut quoted: Vec<String> =
        clips.iter().take(MAX_LISTED_CLIPS).map(|c| format!("\"{}\"", display_name(c))).collect();
    if clips.len() > MAX_LISTED_CLIPS {
        quoted.push(format!("and {} more", clips.len() - MAX_LISTED_CLIPS));
    }
    format!("(clips: {})", quoted.join(", "))
}
