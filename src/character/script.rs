//! Timed parameter changes: `--set T:NAME=VALUE` (a float or bool at T
//! seconds) and `--set T:NAME` (fire a trigger at T). Parses and replays;
//! never reads the command line itself.

use super::character::Character;
use super::controller::{Controller, ParameterId, ParameterKind};
use super::parameters::ParameterValue;
use crate::text::display_name;

/// A `--set` argument that was refused: `--set ARG: what`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("--set {}: {problem}", display_name(arg))]
pub struct ScriptError {
    /// The argument as given.
    pub arg: String,
    /// What is wrong with it.
    #[source]
    pub problem: SetProblem,
}

/// What is wrong with one `--set` argument.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SetProblem {
    /// No `:` between the time and the rest.
    #[error("expected TIME:NAME=VALUE or TIME:TRIGGER, e.g. 1.5:speed=1.2")]
    Form,
    /// The time is not a number.
    #[error("\"{}\" is not a time in seconds", display_name(.0))]
    TimeText(String),
    /// The time is negative or not finite.
    #[error("time {0} is not a finite number of seconds >= 0")]
    Time(f64),
    /// No parameter has this name.
    #[error("unknown parameter \"{}\" {}", display_name(name), known_list(known))]
    UnknownParameter {
        /// The name as given.
        name: String,
        /// The controller's parameters.
        known: Vec<String>,
    },
    /// A float given something other than a finite number.
    #[error(
        "float parameter \"{}\" needs a finite number, not \"{}\"",
        display_name(name),
        display_name(value)
    )]
    Float {
        /// The parameter.
        name: String,
        /// The value as given.
        value: String,
    },
    /// A bool given something other than `true` or `false`.
    #[error("bool parameter \"{}\" takes true or false, not \"{}\"", display_name(name), display_name(value))]
    Bool {
        /// The parameter.
        name: String,
        /// The value as given.
        value: String,
    },
    /// A trigger given a value.
    #[error("trigger \"{name}\" takes no value: write TIME:{name}", name = display_name(.0))]
    TriggerValue(String),
    /// A float or bool given no value.
    #[error("{kind} parameter \"{name}\" needs a value: TIME:{name}=VALUE", kind = .0.name(), name = display_name(.1))]
    MissingValue(ParameterKind, String),
}

/// `(parameters: a, b)`, or `(the controller has none)`.
fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        return "(the controller has none)".to_string();
    }
    let names: Vec<String> = known.iter().map(|n| display_name(n)).collect();
    format!("(parameters: {})", names.join(", "))
}

/// One change.
#[derive(Debug, Clone, PartialEq)]
pub struct TimedSet {
    /// Seconds from the start.
    pub time: f64,
    /// The parameter.
    pub parameter: ParameterId,
    /// Its new value.
    pub value: ParameterValue,
}

/// Changes in time order (equal times keep their command-line order).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Script {
    sets: Vec<TimedSet>,
}

impl Script {
    /// Parses `--set` values against `controller`; the error quotes the
    /// offending argument and says what is wrong.
    pub fn parse(args: &[String], controller: &Controller) -> Result<Self, ScriptError> {
        let mut sets = Vec::with_capacity(args.len());
        for arg in args {
            sets.push(
                parse_one(arg, controller).map_err(|problem| ScriptError { arg: arg.clone(), problem })?,
            );
        }
        sets.sort_by(|a: &TimedSet, b| a.time.total_cmp(&b.time));
        Ok(Script { sets })
    }

    /// The changes, in time order.
    pub fn sets(&self) -> &[TimedSet] {
        &self.sets
    }

    /// The changes from `*next` on whose time is at or before `time` (a
    /// microsecond early counts, against float drift); moves `*next` past
    /// them.
    pub fn due(&self, next: &mut usize, time: f64) -> &[TimedSet] {
        let start = (*next).min(self.sets.len());
        let due = self.sets[start..].iter().take_while(|s| s.time <= time + 1e-6).count();
        *next = start + due;
        &self.sets[start..*next]
    }

    /// Applies to `character` the changes [`due`](Self::due) at `time`.
    pub fn apply_until(&self, next: &mut usize, time: f64, character: &mut Character) {
        for set in self.due(next, time) {
            // Checked against this controller when the script was parsed.
            let _ = character.set(set.parameter, set.value);
        }
    }
}

fn parse_one(arg: &str, controller: &Controller) -> Result<TimedSet, SetProblem> {
    let (time, rest) = arg.split_once(':').ok_or(SetProblem::Form)?;
    let time: f64 = time.trim().parse().map_err(|_| SetProblem::TimeText(time.into()))?;
    if !(time.is_finite() && time >= 0.0) {
        return Err(SetProblem::Time(time));
    }
    let (name, value) = match rest.split_once('=') {
        Some((n, v)) => (n.trim(), Some(v.trim())),
        None => (rest.trim(), None),
    };
    let parameter = controller.parameter(name).ok_or_else(|| SetProblem::UnknownParameter {
        name: name.into(),
        known: controller.parameters().iter().map(|p| p.name.clone()).collect(),
    })?;
    let kind = controller.parameters()[parameter.0 as usize].kind;
    let value = match (kind, value) {
        (ParameterKind::Float, Some(v)) => match v.parse::<f32>() {
            Ok(x) if x.is_finite() => ParameterValue::Float(x),
            _ => return Err(SetProblem::Float { name: name.into(), value: v.into() }),
        },
        (ParameterKind::Bool, Some("true")) => ParameterValue::Bool(true),
        (ParameterKind::Bool, Some("false")) => ParameterValue::Bool(false),
        (ParameterKind::Bool, Some(v)) => {
            return Err(SetProblem::Bool { name: name.into(), value: v.into() });
        }
        (ParameterKind::Trigger, None) => ParameterValue::Trigger,
        (ParameterKind::Trigger, Some(_)) => return Err(SetProblem::TriggerValue(name.into())),
        (kind, None) => return Err(SetProblem::MissingValue(kind, name.into())),
    };
    Ok(TimedSet { time, parameter, value })
}
