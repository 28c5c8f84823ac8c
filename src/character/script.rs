//! Timed parameter changes: `--set T:NAME=VALUE` (a float or bool at T
//! seconds) and `--set T:NAME` (fire a trigger at T).

use super::character::Character;
use super::controller::{Controller, ParameterId, ParameterKind};
use super::parameters::ParameterValue;

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
    pub fn parse(args: &[String], controller: &Controller) -> Result<Self, String> {
        let mut sets = Vec::with_capacity(args.len());
        for arg in args {
            sets.push(parse_one(arg, controller).map_err(|e| format!("--set {arg}: {e}"))?);
        }
        sets.sort_by(|a: &TimedSet, b| a.time.total_cmp(&b.time));
        Ok(Script { sets })
    }

    /// The changes, in time order.
    pub fn sets(&self) -> &[TimedSet] {
        &self.sets
    }

    /// Applies to `character` every change from `*next` on whose time is at
    /// or before `time` (a microsecond early counts, against float drift),
    /// and moves `*next` past them.
    pub fn apply_until(&self, next: &mut usize, time: f64, character: &mut Character) {
        while let Some(set) = self.sets.get(*next).filter(|s| s.time <= time + 1e-6) {
            // Checked against this controller when the script was parsed.
            let _ = character.set(set.parameter, set.value);
            *next += 1;
        }
    }
}

fn parse_one(arg: &str, controller: &Controller) -> Result<TimedSet, String> {
    let (time, rest) =
        arg.split_once(':').ok_or("expected TIME:NAME=VALUE or TIME:TRIGGER, e.g. 1.5:speed=1.2")?;
    let time: f64 = time.trim().parse().map_err(|_| format!("\"{time}\" is not a time in seconds"))?;
    if !(time.is_finite() && time >= 0.0) {
        return Err(format!("time {time} is not a finite number of seconds >= 0"));
    }
    let (name, value) = match rest.split_once('=') {
        Some((n, v)) => (n.trim(), Some(v.trim())),
        None => (rest.trim(), None),
    };
    let parameter = controller.parameter(name).ok_or_else(|| {
        let names: Vec<&str> = controller.parameters().iter().map(|p| p.name.as_str()).collect();
        if names.is_empty() {
            format!("unknown parameter \"{name}\" (the controller has none)")
        } else {
            format!("unknown parameter \"{name}\" (parameters: {})", names.join(", "))
        }
    })?;
    let kind = controller.parameters()[parameter.0 as usize].kind;
    let value = match (kind, value) {
        (ParameterKind::Float, Some(v)) => match v.parse::<f32>() {
            Ok(x) if x.is_finite() => ParameterValue::Float(x),
            _ => return Err(format!("float parameter \"{name}\" needs a finite number, not \"{v}\"")),
        },
        (ParameterKind::Bool, Some("true")) => ParameterValue::Bool(true),
        (ParameterKind::Bool, Some("false")) => ParameterValue::Bool(false),
        (ParameterKind::Bool, Some(v)) => {
            return Err(format!("bool parameter \"{name}\" takes true or false, not \"{v}\""));
        }
        (ParameterKind::Trigger, None) => ParameterValue::Trigger,
        (ParameterKind::Trigger, Some(_)) => {
            return Err(format!("trigger \"{name}\" takes no value: write TIME:{name}"));
        }
        (kind, None) => {
            return Err(format!("{} parameter \"{name}\" needs a value: TIME:{name}=VALUE", kind.name()));
        }
    };
    Ok(TimedSet { time, parameter, value })
}
