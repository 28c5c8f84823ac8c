//! Transition conditions: the small expression language of `when` entries.
//!
//! ```text
//! speed > 0.5     a float compared with a number (< <= > >= == !=)
//! grounded        a bool is true, or a trigger has fired
//! !grounded       a bool is false
//! grounded == false
//! ```
//!
//! Parsing only: the parameters come from the caller's lookup, and nothing
//! here knows of states, rigs or files.

use super::ParameterKind;
use crate::text::display_name;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compare {
    /// `<`
    Less,
    /// `<=`
    LessOrEqual,
    /// `>`
    Greater,
    /// `>=`
    GreaterOrEqual,
    /// `==`
    Equal,
    /// `!=`
    NotEqual,
}

impl Compare {
    /// Applies the operator (false when either side is NaN, except `!=`).
    pub fn holds(self, a: f32, b: f32) -> bool {
        match self {
            Compare::Less => a < b,
            Compare::LessOrEqual => a <= b,
            Compare::Greater => a > b,
            Compare::GreaterOrEqual => a >= b,
            Compare::Equal => a == b,
            Compare::NotEqual => a != b,
        }
    }
}

/// A checked condition on one parameter (by index).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Condition {
    /// A float parameter compared with a number.
    Float {
        /// Parameter index.
        parameter: u32,
        /// Operator.
        op: Compare,
        /// Right-hand side.
        value: f32,
    },
    /// A bool parameter equals `value`.
    Bool {
        /// Parameter index.
        parameter: u32,
        /// Required value.
        value: bool,
    },
    /// A trigger has fired (it is consumed when the transition is taken).
    Trigger {
        /// Parameter index.
        parameter: u32,
    },
}

/// Why a `when` entry was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConditionError {
    /// The left side is empty or has characters a name cannot have.
    #[error("\"{}\" is not a parameter name", display_name(.0))]
    NotAName(String),
    /// No parameter has this name.
    #[error("unknown parameter \"{}\"", display_name(.0))]
    UnknownParameter(String),
    /// `!jump` for a trigger.
    #[error("trigger \"{}\" cannot be negated", display_name(.0))]
    NegatedTrigger(String),
    /// A float alone, without an operator.
    #[error("float parameter \"{}\" needs a comparison{}", display_name(.0), example(.0, " > 0.5"))]
    FloatWithoutComparison(String),
    /// A float compared with something that is not a number.
    #[error("\"{}\" is not a number", display_name(.0))]
    NotANumber(String),
    /// A float compared with an infinite number or NaN.
    #[error("\"{}\" is not a finite number", display_name(.0))]
    NotFinite(String),
    /// A bool compared with something other than `true` or `false`.
    #[error(
        "bool parameter \"{}\" compares with true or false, not \"{}\"",
        display_name(name),
        display_name(value)
    )]
    BoolValue {
        /// The parameter.
        name: String,
        /// The right-hand side as written.
        value: String,
    },
    /// A bool with `<`, `<=`, `>` or `>=`.
    #[error("bool parameter \"{}\" only takes == or !=", display_name(.0))]
    BoolOperator(String),
    /// A trigger with an operator.
    #[error("trigger \"{}\" takes no comparison{}", display_name(.0), example(.0, ""))]
    TriggerComparison(String),
}

/// Longest parameter name repeated in an example (a long one is already
/// quoted once; the line stays short).
const MAX_EXAMPLE_NAME_CHARS: usize = 24;

/// `, e.g. "NAME REST"` (`; write just "NAME"` for an empty `rest`), or
/// nothing when the name is long.
fn example(name: &str, rest: &str) -> String {
    if name.chars().count() > MAX_EXAMPLE_NAME_CHARS {
        return String::new();
    }
    let name = display_name(name);
    if rest.is_empty() { format!("; write just \"{name}\"") } else { format!(", e.g. \"{name}{rest}\"") }
}

/// Parses one `when` entry; `lookup` gives a parameter's index and kind.
pub fn parse(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<(u32, ParameterKind)>,
) -> Result<Condition, ConditionError> {
    let text = text.trim();
    let unknown = |name: &str| ConditionError::UnknownParameter(name.to_string());
    const OPERATORS: [(&str, Compare); 6] = [
        ("<=", Compare::LessOrEqual),
        (">=", Compare::GreaterOrEqual),
        ("==", Compare::Equal),
        ("!=", Compare::NotEqual),
        ("<", Compare::Less),
        (">", Compare::Greater),
    ];
    // The first operator in the text (two-character ones win at the same place).
    let found = OPERATORS
        .iter()
        .filter_map(|&(sym, op)| text.find(sym).map(|at| (at, sym, op)))
        .min_by_key(|&(at, sym, _)| (at, std::cmp::Reverse(sym.len())));
    let Some((at, sym, op)) = found else {
        let (negated, name) = match text.strip_prefix('!') {
            Some(rest) => (true, rest.trim()),
            None => (false, text),
        };
        check_name(name)?;
        let (parameter, kind) = lookup(name).ok_or_else(|| unknown(name))?;
        return match (kind, negated) {
            (ParameterKind::Bool, _) => Ok(Condition::Bool { parameter, value: !negated }),
            (ParameterKind::Trigger, false) => Ok(Condition::Trigger { parameter }),
            (ParameterKind::Trigger, true) => Err(ConditionError::NegatedTrigger(name.into())),
            (ParameterKind::Float, _) => Err(ConditionError::FloatWithoutComparison(name.into())),
        };
    };
    let name = text[..at].trim();
    let rhs = text[at + sym.len()..].trim();
    check_name(name)?;
    let (parameter, kind) = lookup(name).ok_or_else(|| unknown(name))?;
    match kind {
        ParameterKind::Float => {
            let value: f32 = rhs.parse().map_err(|_| ConditionError::NotANumber(rhs.into()))?;
            if !value.is_finite() {
                return Err(ConditionError::NotFinite(rhs.into()));
            }
            Ok(Condition::Float { parameter, op, value })
        }
        ParameterKind::Bool => {
            let value = match rhs {
                "true" => true,
                "false" => false,
                _ => return Err(ConditionError::BoolValue { name: name.into(), value: rhs.into() }),
            };
            match op {
                Compare::Equal => Ok(Condition::Bool { parameter, value }),
                Compare::NotEqual => Ok(Condition::Bool { parameter, value: !value }),
                _ => Err(ConditionError::BoolOperator(name.into())),
            }
        }
        ParameterKind::Trigger => Err(ConditionError::TriggerComparison(name.into())),
    }
}

/// A parameter name: letters, digits, `_`, `.` and `-`, not empty.
fn check_name(name: &str) -> Result<(), ConditionError> {
    let ok = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if ok { Ok(()) } else { Err(ConditionError::NotAName(name.into())) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(name: &str) -> Option<(u32, ParameterKind)> {
        match name {
            "speed" => Some((0, ParameterKind::Float)),
            "grounded" => Some((1, ParameterKind::Bool)),
            "jump" => Some((2, ParameterKind::Trigger)),
            _ => None,
        }
    }

    #[test]
    fn parses_every_form() {
        let p = |t: &str| parse(t, &lookup);
        assert_eq!(p("speed > 0.5"), Ok(Condition::Float { parameter: 0, op: Compare::Greater, value: 0.5 }));
        assert_eq!(
            p(" speed<=-1 "),
            Ok(Condition::Float { parameter: 0, op: Compare::LessOrEqual, value: -1.0 })
        );
        assert_eq!(p("speed != 2"), Ok(Condition::Float { parameter: 0, op: Compare::NotEqual, value: 2.0 }));
        assert_eq!(p("grounded"), Ok(Condition::Bool { parameter: 1, value: true }));
        assert_eq!(p("!grounded"), Ok(Condition::Bool { parameter: 1, value: false }));
        assert_eq!(p("grounded == false"), Ok(Condition::Bool { parameter: 1, value: false }));
        assert_eq!(p("grounded != false"), Ok(Condition::Bool { parameter: 1, value: true }));
        assert_eq!(p("jump"), Ok(Condition::Trigger { parameter: 2 }));
    }

    #[test]
    fn rejects_with_a_reason() {
        let p = |t: &str| parse(t, &lookup).unwrap_err().to_string();
        assert!(p("speed").contains("needs a comparison"));
        assert!(p("grounded > 1").contains("true or false"));
        assert!(p("grounded < true").contains("only takes"));
        assert!(p("jump == true").contains("takes no comparison"));
        assert!(p("!jump").contains("cannot be negated"));
        assert!(p("fly").contains("unknown parameter \"fly\""));
        assert!(p("speed > fast").contains("not a number"));
        assert!(p("speed > inf").contains("finite"));
        assert!(p("").contains("not a parameter name"));
        assert!(p("> 3").contains("not a parameter name"));
    }
}
