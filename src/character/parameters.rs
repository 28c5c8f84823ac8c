//! A character's parameter values, and why a value was refused. Values
//! only: what a parameter does is the controller's business, and nothing
//! here allocates after `Parameters::new`.

use super::controller::{Controller, ParameterId, ParameterKind};
use crate::text::display_name;

/// A value to set, as the command line or a UI gives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParameterValue {
    /// A float's new value.
    Float(f32),
    /// A bool's new value.
    Bool(bool),
    /// Fire a trigger.
    Trigger,
}

/// Why a parameter could not be set. Prints as one line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParameterError {
    /// No parameter has this index.
    #[error("no parameter {0}")]
    NoIndex(u32),
    /// No parameter has this name.
    #[error("no parameter \"{}\"", display_name(.0))]
    NoName(String),
    /// A float set to NaN or an infinity.
    #[error("{0} is not a finite number")]
    NotFinite(f32),
    /// A value of another kind than the parameter's.
    #[error("a {} parameter cannot take {value:?}", kind.name())]
    WrongKind {
        /// The parameter's kind.
        kind: ParameterKind,
        /// The value refused.
        value: ParameterValue,
    },
    /// The parameter called `name` refused its value.
    #[error("parameter \"{}\": {source}", display_name(name))]
    Named {
        /// The parameter's name.
        name: String,
        /// Why.
        #[source]
        source: Box<ParameterError>,
    },
}

/// Current values: floats as themselves, bools and triggers as 0 or 1.
#[derive(Debug, Clone, PartialEq)]
pub struct Parameters {
    values: Vec<f32>,
    kinds: Vec<ParameterKind>,
}

impl Parameters {
    /// Names the values for a prefetch (see [`prefetch`](crate::anim::prefetch)).
    pub(super) fn blocks(&self, blocks: &mut crate::anim::prefetch::Blocks) {
        blocks.slice(&self.values);
        blocks.slice(&self.kinds);
    }

    /// The controller's defaults.
    pub fn new(controller: &Controller) -> Self {
        let ps = controller.parameters();
        Parameters {
            values: ps.iter().map(|p| p.default).collect(),
            kinds: ps.iter().map(|p| p.kind).collect(),
        }
    }

    /// Every value, by parameter index.
    pub fn values(&self) -> &[f32] {
        &self.values
    }

    /// A float's value (bools and triggers read as 0 or 1).
    pub fn get(&self, id: ParameterId) -> Option<f32> {
        self.values.get(id.0 as usize).copied()
    }

    /// Sets a parameter; the value must match its kind, and floats must be finite.
    pub fn set(&mut self, id: ParameterId, value: ParameterValue) -> Result<(), ParameterError> {
        let i = id.0 as usize;
        let kind = *self.kinds.get(i).ok_or(ParameterError::NoIndex(id.0))?;
        self.values[i] = match (kind, value) {
            (ParameterKind::Float, ParameterValue::Float(v)) if v.is_finite() => v,
            (ParameterKind::Float, ParameterValue::Float(v)) => return Err(ParameterError::NotFinite(v)),
            (ParameterKind::Bool, ParameterValue::Bool(b)) => f32::from(u8::from(b)),
            (ParameterKind::Trigger, ParameterValue::Trigger) => 1.0,
            (kind, value) => return Err(ParameterError::WrongKind { kind, value }),
        };
        Ok(())
    }

    /// Whether trigger `i` has fired since the last update.
    pub(crate) fn fired(&self, i: u32) -> bool {
        self.values[i as usize] != 0.0
    }

    /// Clears trigger `i` (a transition used it).
    pub(crate) fn consume(&mut self, i: u32) {
        self.values[i as usize] = 0.0;
    }

    /// Clears every trigger (the end of an update).
    pub(crate) fn clear_triggers(&mut self) {
        for (v, k) in self.values.iter_mut().zip(&self.kinds) {
            if *k == ParameterKind::Trigger {
                *v = 0.0;
            }
        }
    }
}
