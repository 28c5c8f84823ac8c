//! A character's parameter values.

use super::controller::{Controller, ParameterId, ParameterKind};

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

/// Current values: floats as themselves, bools and triggers as 0 or 1.
#[derive(Debug, Clone, PartialEq)]
pub struct Parameters {
    values: Vec<f32>,
    kinds: Vec<ParameterKind>,
}

impl Parameters {
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
    pub fn set(&mut self, id: ParameterId, value: ParameterValue) -> Result<(), String> {
        let i = id.0 as usize;
        let kind = *self.kinds.get(i).ok_or_else(|| format!("no parameter {i}"))?;
        self.values[i] = match (kind, value) {
            (ParameterKind::Float, ParameterValue::Float(v)) if v.is_finite() => v,
            (ParameterKind::Float, ParameterValue::Float(v)) => {
                return Err(format!("{v} is not a finite number"));
            }
            (ParameterKind::Bool, ParameterValue::Bool(b)) => f32::from(u8::from(b)),
            (ParameterKind::Trigger, ParameterValue::Trigger) => 1.0,
            (kind, value) => return Err(format!("a {} parameter cannot take {value:?}", kind.name())),
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
