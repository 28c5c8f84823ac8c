//! One character's state machine: the state it is in, the crossfade to the
//! next one, every state's weight, and which transition starts when. It
//! decides and keeps the weights; it never plays clips or samples (a state
//! that gets weight anew is reset by the caller, see `Playback::enter`), and
//! never allocates after `new`.
//!
//! A crossfade moves every machine state's weight from what it was when the
//! crossfade started (`fade_from`) towards the target by the transition's
//! curve, so a crossfade interrupted by another transition stays continuous.

use super::controller::{Condition, Controller, Curve, Transition};
use super::parameters::Parameters;

/// A running crossfade.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Crossfade {
    /// The state faded to.
    pub target: u32,
    elapsed: f32,
    duration: f32,
    curve: Curve,
}

impl Crossfade {
    /// How far it is, in [0, 1] (1 at once for a zero duration).
    pub fn progress(&self) -> f32 {
        if self.duration > 0.0 { (self.elapsed / self.duration).min(1.0) } else { 1.0 }
    }
}

/// See the module documentation.
#[derive(Debug, Clone)]
pub(super) struct StateMachine {
    /// States `0..machine_states` are the machine's; the rest are layers'.
    machine_states: usize,
    /// The state the machine is in (the source while a crossfade runs).
    current: Option<u32>,
    fade: Option<Crossfade>,
    /// Weight of every state: the machine's, then each layer's motion (its
    /// layer's weight, set with `set_layer_weight`).
    weights: Vec<f32>,
    /// Weights when the running crossfade started.
    fade_from: Vec<f32>,
}

impl StateMachine {
    /// Names the weights for a prefetch (see [`prefetch`](crate::anim::prefetch)).
    pub fn blocks(&self, blocks: &mut crate::anim::prefetch::Blocks) {
        blocks.slice(&self.weights);
        blocks.slice(&self.fade_from);
    }

    /// In the controller's initial state, at full weight.
    pub fn new(controller: &Controller) -> Self {
        let states = controller.all_states().len();
        let current = controller.initial().map(|s| s as u32);
        let mut weights = vec![0.0; states];
        if let Some(s) = current {
            weights[s as usize] = 1.0;
        }
        StateMachine {
            machine_states: controller.machine_states,
            current,
            fade: None,
            weights,
            fade_from: vec![0.0; states],
        }
    }

    /// The state the machine is in (the source while a crossfade runs).
    pub fn current(&self) -> Option<u32> {
        self.current
    }

    /// The state transitions are checked from: the crossfade's target while
    /// one runs (so a new transition interrupts it), else the current state.
    pub fn target(&self) -> Option<u32> {
        self.fade.map(|f| f.target).or(self.current)
    }

    /// The running crossfade.
    pub fn crossfade(&self) -> Option<Crossfade> {
        self.fade
    }

    /// Weight of every state (the machine's, then the layers').
    pub fn weights(&self) -> &[f32] {
        &self.weights
    }

    /// Sets the weight of a layer's state (`s` past the machine's states).
    pub fn set_layer_weight(&mut self, s: usize, weight: f32) {
        debug_assert!(s >= self.machine_states);
        self.weights[s] = weight;
    }

    /// Moves the crossfade on by `amount` seconds; at its end, the target
    /// becomes the current state at full weight.
    pub fn advance_fade(&mut self, amount: f32) {
        let Some(fade) = self.fade.as_mut() else { return };
        fade.elapsed += amount;
        let fade = *fade;
        let c = fade.curve.apply(fade.progress());
        let target = fade.target as usize;
        for (s, w) in self.weights[..self.machine_states].iter_mut().enumerate() {
            let from = self.fade_from[s];
            *w = if s == target { from + (1.0 - from) * c } else { from * (1.0 - c) };
        }
        if fade.progress() >= 1.0 {
            self.finish(fade.target);
        }
    }

    fn finish(&mut self, target: u32) {
        self.weights[..self.machine_states].fill(0.0);
        self.weights[target as usize] = 1.0;
        self.current = Some(target);
        self.fade = None;
    }

    /// The state reporting events: the heaviest, the crossfade's target on a tie.
    pub fn dominant(&self) -> Option<usize> {
        let preferred = self.target()? as usize;
        let mut best = preferred;
        for (s, &w) in self.weights[..self.machine_states].iter().enumerate() {
            if w > self.weights[best] {
                best = s;
            }
        }
        Some(best)
    }

    /// The transition that starts now, if any: of the any-state and the
    /// outgoing transitions whose exit time has come and whose conditions
    /// hold, the best (higher priority, then earlier in the file).
    /// `state_time` is each state's cycles since it was entered.
    pub fn choose(
        &self,
        controller: &Controller,
        parameters: &Parameters,
        state_time: &[f64],
    ) -> Option<u32> {
        let source = self.target()?;
        // Each list is best first, so its first transition that can start wins it.
        let first = |list: &[u32]| {
            list.iter().copied().find(|&t| {
                let transition = &controller.transitions[t as usize];
                transition.to != source && holds(transition, parameters, state_time[source as usize])
            })
        };
        match (first(&controller.any_state), first(&controller.outgoing[source as usize])) {
            (Some(a), Some(b)) => {
                let rank = |t: u32| (controller.transitions[t as usize].priority, std::cmp::Reverse(t));
                Some(if rank(a) > rank(b) { a } else { b })
            }
            (a, b) => a.or(b),
        }
    }

    /// Starts `transition` (its target already reset by the caller when it
    /// had no weight): at once without a duration, else a crossfade from the
    /// weights at this instant. An interrupted crossfade's target becomes
    /// the state left.
    pub fn begin(&mut self, transition: &Transition) {
        if let Some(fade) = self.fade {
            self.current = Some(fade.target);
        }
        if transition.duration <= 0.0 {
            self.finish(transition.to);
        } else {
            // The weights at this instant are the crossfade's start: the pose
            // stays continuous even when a running crossfade is interrupted.
            self.fade_from.copy_from_slice(&self.weights);
            self.fade = Some(Crossfade {
                target: transition.to,
                elapsed: 0.0,
                duration: transition.duration,
                curve: transition.curve,
            });
        }
    }
}

/// Whether `transition` can start from a source state that has played
/// `source_time` cycles.
fn holds(transition: &Transition, parameters: &Parameters, source_time: f64) -> bool {
    let time_ok = transition.exit_time.is_none_or(|e| source_time >= f64::from(e));
    let values = parameters.values();
    time_ok
        && transition.conditions.iter().all(|c| match *c {
            Condition::Float { parameter, op, value } => op.holds(values[parameter as usize], value),
            Condition::Bool { parameter, value } => (values[parameter as usize] != 0.0) == value,
            Condition::Trigger { parameter } => parameters.fired(parameter),
        })
}
