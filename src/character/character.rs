//! One animated character: controller state (parameters, active states and
//! their crossfade), clip players, sampling cursors, pose buffers and the
//! evaluated output. Everything is allocated in `Character::new`; `update`
//! and `seek` never allocate (events go into a buffer that keeps its
//! capacity).
//!
//! One update: crossfade weights move -> every state with weight advances
//! its clips (events from the dominant state) -> the state machine may
//! start a transition -> triggers clear -> when a clip's time or weight
//! changed and the update is due at the evaluation rate: sample -> blend ->
//! morph override -> local-to-model -> palettes; root motion every update.

use super::clip_cursors::ClipCursors;
use super::controller::{Condition, Controller, Curve, ParameterId, ParameterKind};
use super::events::FiredEvent;
use super::lod::EvaluationRate;
use super::output::{DebugPose, PoseOutput};
use super::parameters::{ParameterError, ParameterValue, Parameters};
use super::root_motion::{self, RootMotion};
use crate::anim::Rig;
use crate::anim::player::wrap_clip_time;
use crate::anim::{
    BlendJob, BlendLayer, ClipEvent, ClipPlayer, JobError, LayerJob, Pose, RotationBlend, SkinnedPose,
};
use std::sync::Arc;

/// A running crossfade.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Fade {
    target: u32,
    elapsed: f32,
    duration: f32,
    curve: Curve,
}

impl Fade {
    fn progress(&self) -> f32 {
        if self.duration > 0.0 { (self.elapsed / self.duration).min(1.0) } else { 1.0 }
    }
}

/// One character: see the module documentation.
#[derive(Debug, Clone)]
pub struct Character {
    rig: Arc<Rig>,
    controller: Arc<Controller>,
    parameters: Parameters,
    /// Index in the owning system (stamped on events).
    index: u32,
    rate: f32,
    /// How often the pose is evaluated (playback and events run every update).
    evaluation_rate: EvaluationRate,
    /// Updates so far (with `index`, which of them are due at the rate).
    frame: u32,
    rotation_sampling: RotationBlend,
    debug: DebugPose,
    morph_override: Option<Vec<f32>>,

    /// The state the machine is in (the source while a crossfade runs).
    current: Option<u32>,
    fade: Option<Fade>,
    state_weight: Vec<f32>,
    /// Weights when the running crossfade started.
    fade_from: Vec<f32>,
    /// Cycles played since each state was entered.
    state_time: Vec<f64>,

    // Per clip node (leaf).
    players: Vec<ClipPlayer>,
    sample_time: Vec<f64>,
    /// One per distinct clip the leaves play.
    cursors: ClipCursors,
    /// Weight within its state.
    local_weight: Vec<f32>,
    /// Final weight (state weight times local weight).
    weight: Vec<f32>,
    poses: Vec<Pose>,
    /// (time, weight) of each leaf at the last evaluation.
    evaluated: Vec<(f64, f32)>,
    /// Clip time each leaf started this update from, and how far it played
    /// (signed clip seconds, loops unwrapped): its root motion.
    travel_from: Vec<f64>,
    travel: Vec<f64>,
    /// Root motion of the last update, in model space.
    root_motion: RootMotion,
    /// Leader of each sync group.
    leaders: Vec<u32>,
    /// Each blend space's input, following its parameter (see `SpaceInput`).
    inputs: Vec<f32>,

    clip_weights: Vec<f32>,
    /// Each layer's weight at the last evaluation.
    evaluated_layers: Vec<f32>,
    /// A layer's pose, before it is applied (empty without layers).
    layer_pose: Pose,
    /// The animated pose as edited after the update (IK), see `edit`;
    /// empty until the first edit (most characters are never edited).
    edited: Pose,
    pose: Pose,
    output: PoseOutput,
    /// The next update must evaluate (first update, a setting changed).
    stale: bool,
    events: Vec<FiredEvent>,
}

impl Character {
    /// Events one update can report before the buffer has to grow (it
    /// grows once, past this, and keeps the capacity).
    pub const EVENT_CAPACITY: usize = 32;

    /// A character of `rig` driven by `controller` (which must have been
    /// compiled for a rig with the same clips and skeleton), in the
    /// controller's initial state with default parameters. Not evaluated
    /// until the first `update`.
    pub fn new(rig: Arc<Rig>, controller: Arc<Controller>) -> Result<Self, JobError> {
        let joints = rig.skeleton.len();
        let weights = rig.rest_morph_weights.len();
        let leaves = controller.leaves();
        if let Some(l) = leaves.iter().find(|l| l.clip as usize >= rig.clips.len()) {
            return Err(JobError::new(format!(
                "controller plays clip {}, the rig has {}",
                l.clip,
                rig.clips.len()
            )));
        }
        let states = controller.all_states().len();
        let mut character = Character {
            parameters: Parameters::new(&controller),
            index: 0,
            rate: 1.0,
            evaluation_rate: EvaluationRate::EveryFrame,
            frame: 0,
            rotation_sampling: RotationBlend::Slerp,
            debug: DebugPose::Animated,
            morph_override: None,
            current: controller.initial().map(|s| s as u32),
            fade: None,
            state_weight: vec![0.0; states],
            fade_from: vec![0.0; states],
            state_time: vec![0.0; states],
            players: leaves.iter().map(|l| player(&rig, l.clip, l.looping)).collect(),
            sample_time: vec![0.0; leaves.len()],
            cursors: ClipCursors::new(&rig, leaves.iter().map(|l| l.clip)),
            local_weight: vec![0.0; leaves.len()],
            weight: vec![0.0; leaves.len()],
            poses: vec![Pose::new(joints, weights); leaves.len()],
            evaluated: vec![(f64::NAN, 0.0); leaves.len()],
            travel_from: vec![0.0; leaves.len()],
            travel: vec![0.0; leaves.len()],
            root_motion: RootMotion::default(),
            leaders: controller.groups().iter().map(|g| g.leaves.start).collect(),
            inputs: vec![0.0; controller.inputs.len()],
            clip_weights: vec![0.0; rig.clips.len()],
            evaluated_layers: vec![0.0; controller.layers().len()],
            layer_pose: if controller.layers().is_empty() {
                Pose::default()
            } else {
                Pose::new(joints, weights)
            },
            edited: Pose::default(),
            pose: Pose {
                locals: rig.skeleton.rest().to_vec(),
                morph_weights: rig.rest_morph_weights.clone(),
            },
            output: PoseOutput::new(&rig),
            stale: true,
            events: Vec::with_capacity(Self::EVENT_CAPACITY),
            rig,
            controller,
        };
        if let Some(s) = character.current {
            character.enter(s);
            character.state_weight[s as usize] = 1.0;
        }
        character.weigh_layers();
        Ok(character)
    }

    /// The shared asset.
    pub fn rig(&self) -> &Arc<Rig> {
        &self.rig
    }

    /// The shared controller.
    pub fn controller(&self) -> &Arc<Controller> {
        &self.controller
    }

    pub(crate) fn set_index(&mut self, index: u32) {
        self.index = index;
    }

    // ---- settings ----------------------------------------------------------

    /// Current parameter values.
    pub fn parameters(&self) -> &Parameters {
        &self.parameters
    }

    /// Sets a parameter (read by the next update).
    pub fn set(&mut self, id: ParameterId, value: ParameterValue) -> Result<(), ParameterError> {
        self.parameters.set(id, value)
    }

    /// Sets the parameter called `name`; the error names it.
    pub fn set_named(&mut self, name: &str, value: ParameterValue) -> Result<(), ParameterError> {
        let id = self.controller.parameter(name).ok_or_else(|| ParameterError::NoName(name.into()))?;
        self.set(id, value).map_err(|e| ParameterError::Named { name: name.into(), source: Box::new(e) })
    }

    /// Playback rate of the whole character: negative plays backwards, 0
    /// pauses (crossfades and exit times included). Non-finite is ignored.
    pub fn set_rate(&mut self, rate: f32) {
        if rate.is_finite() {
            self.rate = rate;
        }
    }

    /// The playback rate.
    pub fn rate(&self) -> f32 {
        self.rate
    }

    /// How often the pose is evaluated: every update (the default), or every
    /// 2nd or 4th for characters far away or small on screen (see
    /// [`EvaluationRate::for_screen_height`]). Playback, transitions, events
    /// and root motion still run every update, so events fire once each, on
    /// the update that crosses them, with their own clip time; skipped
    /// updates keep the last palettes and version (nothing to upload).
    pub fn set_evaluation_rate(&mut self, rate: EvaluationRate) {
        self.evaluation_rate = rate;
    }

    /// How often the pose is evaluated.
    pub fn evaluation_rate(&self) -> EvaluationRate {
        self.evaluation_rate
    }

    /// How LINEAR rotation keys are sampled (slerp, glTF-exact, by default).
    /// A rig that samples compressed clips ([`Rig::compress_clips`]) nlerps
    /// between their stored keys whatever this says.
    pub fn set_rotation_sampling(&mut self, mode: RotationBlend) {
        self.stale |= mode != self.rotation_sampling;
        self.rotation_sampling = mode;
    }

    /// Replaces the evaluated matrices for debugging.
    pub fn set_debug_pose(&mut self, debug: DebugPose) {
        self.stale |= debug != self.debug;
        self.debug = debug;
    }

    /// Morph weights that replace the clips' (`None`: the clips' own). A
    /// slice of the wrong length is padded with the rest weights or cut.
    pub fn set_morph_override(&mut self, weights: Option<&[f32]>) {
        match (weights, &mut self.morph_override) {
            (None, o) => {
                self.stale |= o.is_some();
                *o = None;
            }
            (Some(w), Some(current)) if current.len() == self.rig.rest_morph_weights.len() => {
                for (i, slot) in current.iter_mut().enumerate() {
                    let v = w.get(i).copied().unwrap_or(self.rig.rest_morph_weights[i]);
                    self.stale |= *slot != v;
                    *slot = v;
                }
            }
            (Some(w), o) => {
                let mut v = self.rig.rest_morph_weights.clone();
                for (slot, x) in v.iter_mut().zip(w) {
                    *slot = *x;
                }
                *o = Some(v);
                self.stale = true;
            }
        }
    }

    /// Jumps the current state (the crossfade's target while one runs) to
    /// `time` seconds on the timeline of its leading clip (wrapped when it
    /// loops, clamped otherwise); synced clips follow at the same phase.
    /// Fires no events. Times are f64 so that a typed time such as 1.7
    /// compares with f32 keys as in f64 implementations.
    pub fn seek(&mut self, time: f64) {
        let Some(s) = self.target_state() else { return };
        let s = s as usize;
        let controller = self.controller.clone();
        controller.state_weights(s, self.parameters.values(), &self.inputs, &mut self.local_weight);
        let state = &controller.all_states()[s];
        for g in state.groups.clone() {
            let group = &controller.groups()[g as usize];
            let leader = self.choose_leader(g as usize);
            self.set_leaf_time(leader as usize, time);
            let phase = self.phase(leader as usize);
            for l in group.leaves.clone().filter(|&l| l != leader) {
                let d = self.players[l as usize].duration();
                self.set_leaf_time(l as usize, phase * f64::from(d));
            }
        }
        for l in state.leaves.clone() {
            if controller.leaves()[l as usize].group.is_none() {
                self.set_leaf_time(l as usize, time);
            }
        }
        let cycle = self.state_cycle(s);
        self.state_time[s] = if cycle > 0.0 { time / cycle } else { 0.0 };
    }

    // ---- the update ---------------------------------------------------------

    /// Advances by `dt` seconds (times the rate; non-finite counts as 0) and
    /// evaluates. Events crossed are in `events()` until the next update.
    pub fn update(&mut self, dt: f32) -> Result<(), JobError> {
        self.events.clear();
        self.travel.fill(0.0);
        self.root_motion = RootMotion::default();
        let step = if dt.is_finite() { dt * self.rate } else { 0.0 };
        let step = if step.is_finite() { step } else { 0.0 };
        if self.current.is_some() {
            self.advance_fade(step.abs());
        }
        self.weigh_layers();
        self.advance_states(step);
        if self.current.is_some() {
            self.choose_transition();
        }
        self.parameters.clear_triggers();
        // Frames are staggered by character index, so that a crowd at a
        // reduced rate spreads its evaluations over the frames.
        let due = self.evaluation_rate.is_due(self.frame.wrapping_add(self.index));
        self.frame = self.frame.wrapping_add(1);
        let result = self.evaluate(due);
        self.add_root_motion();
        result
    }

    fn advance_fade(&mut self, amount: f32) {
        let Some(fade) = self.fade.as_mut() else { return };
        fade.elapsed += amount;
        let fade = *fade;
        let c = fade.curve.apply(fade.progress());
        let target = fade.target as usize;
        let machine = self.controller.machine_states;
        for (s, w) in self.state_weight[..machine].iter_mut().enumerate() {
            let from = self.fade_from[s];
            *w = if s == target { from + (1.0 - from) * c } else { from * (1.0 - c) };
        }
        if fade.progress() >= 1.0 {
            self.finish_fade(fade.target);
        }
    }

    fn finish_fade(&mut self, target: u32) {
        self.state_weight[..self.controller.machine_states].fill(0.0);
        self.state_weight[target as usize] = 1.0;
        self.current = Some(target);
        self.fade = None;
    }

    /// The state reporting events: the heaviest, the crossfade's target on a tie.
    fn dominant_state(&self) -> Option<usize> {
        let preferred = self.target_state()? as usize;
        let mut best = preferred;
        for (s, &w) in self.state_weight[..self.controller.machine_states].iter().enumerate() {
            if w > self.state_weight[best] {
                best = s;
            }
        }
        Some(best)
    }

    fn advance_states(&mut self, step: f32) {
        let controller = self.controller.clone();
        let dominant = self.dominant_state();
        for s in 0..self.state_weight.len() {
            if self.state_weight[s] <= 0.0 {
                continue;
            }
            self.follow_inputs(s, step.abs());
            controller.state_weights(s, self.parameters.values(), &self.inputs, &mut self.local_weight);
            // The dominant machine state reports, and every layer with weight.
            let report = dominant == Some(s) || s >= controller.machine_states;
            let cycle = self.state_cycle(s);
            if cycle > 0.0 {
                self.state_time[s] += f64::from(step) / cycle;
            }
            let state = &controller.all_states()[s];
            for g in state.groups.clone() {
                self.advance_group(g as usize, step, report);
            }
            for l in state.leaves.clone() {
                let leaf = &controller.leaves()[l as usize];
                if leaf.group.is_some() {
                    continue;
                }
                let l = l as usize;
                let report = report && self.local_weight[l] > 0.0;
                self.players[l].set_speed(leaf.speed);
                self.advance_leaf(l, step, report);
            }
        }
    }

    /// Sets each layer's weight from its setting; a layer whose weight rises
    /// from 0 starts its clips from the beginning.
    fn weigh_layers(&mut self) {
        let controller = self.controller.clone();
        for layer in controller.layers() {
            let w = controller.layer_weight(layer, self.parameters.values());
            let s = layer.state as usize;
            if self.state_weight[s] <= 0.0 && w > 0.0 {
                self.enter(layer.state);
            }
            self.state_weight[s] = w;
        }
    }

    /// Moves state `s`'s blend-space inputs towards their parameters over
    /// `seconds` (at once without smoothing).
    fn follow_inputs(&mut self, s: usize, seconds: f32) {
        let controller = &self.controller;
        for i in controller.all_states()[s].inputs.clone() {
            let input = controller.inputs[i as usize];
            let target = self.parameters.values()[input.parameter as usize];
            let value = &mut self.inputs[i as usize];
            *value = if input.smoothing > 0.0 {
                *value + (target - *value) * (1.0 - (-seconds / input.smoothing).exp())
            } else {
                target
            };
        }
    }

    /// Moves a sync group: its leader by the phase step of the group's
    /// weighted cycle (durations averaged by weight, so a 50 % walk/run
    /// takes half-way between their periods), its followers to the leader's phase.
    fn advance_group(&mut self, g: usize, step: f32, report: bool) {
        let controller = self.controller.clone();
        let group = &controller.groups()[g];
        let leader = self.choose_leader(g) as usize;
        let cycle = self.group_cycle(g).unwrap_or_else(|| self.period(leader));
        if cycle > 0.0 {
            let phase_step = f64::from(step) / cycle;
            let clip_step = phase_step * f64::from(self.players[leader].duration());
            self.players[leader].set_speed(1.0);
            self.advance_leaf(leader, clip_step as f32, report);
        }
        let phase = self.phase(leader);
        let leader_duration = f64::from(self.players[leader].duration());
        let phase_travel = if leader_duration > 0.0 { self.travel[leader] / leader_duration } else { 0.0 };
        for l in group.leaves.clone().filter(|&l| l as usize != leader) {
            let (l, d) = (l as usize, self.players[l as usize].duration());
            self.travel_from[l] = self.sample_time[l];
            self.travel[l] = phase_travel * f64::from(d);
            self.set_leaf_time(l, phase * f64::from(d));
        }
    }

    /// Seconds one cycle of sync group `g` takes: its clips' periods averaged
    /// by their weights in the state (`None` while none has weight).
    fn group_cycle(&self, g: usize) -> Option<f64> {
        self.weighted_period(self.controller.groups()[g].leaves.clone())
    }

    /// The periods of clip nodes `leaves` averaged by their local weights
    /// (nodes without weight or period left out; `None` if that is all).
    fn weighted_period(&self, leaves: std::ops::Range<u32>) -> Option<f64> {
        let (mut weights, mut periods) = (0.0f64, 0.0f64);
        for l in leaves {
            let (w, p) = (f64::from(self.local_weight[l as usize]), self.period(l as usize));
            if w > 0.0 && p > 0.0 {
                weights += w;
                periods += w * p;
            }
        }
        (weights > 0.0).then(|| periods / weights)
    }

    /// The heaviest clip of group `g` (the previous leader keeps a tie).
    fn choose_leader(&mut self, g: usize) -> u32 {
        let group = self.controller.groups()[g].leaves.clone();
        let mut leader = self.leaders[g];
        for l in group {
            if self.local_weight[l as usize] > self.local_weight[leader as usize] {
                leader = l;
            }
        }
        self.leaders[g] = leader;
        leader
    }

    /// Advances one clip node's player by `step` clip seconds (times its
    /// speed), recording crossed events when `report`.
    fn advance_leaf(&mut self, l: usize, step: f32, report: bool) {
        let clip_index = self.controller.leaves()[l].clip;
        let clip = &self.rig.clips[clip_index as usize];
        let (events, index, sink) = (&clip.events, self.index, &mut self.events);
        let before = self.players[l].time();
        self.travel_from[l] = self.sample_time[l];
        self.travel[l] += f64::from(step) * f64::from(self.players[l].speed());
        self.players[l].advance(step, events, |e: &ClipEvent| {
            if report {
                let event = events.iter().position(|x| std::ptr::eq(x, e)).unwrap_or(0) as u32;
                sink.push(FiredEvent { character: index, clip: clip_index, event, clip_time: e.time });
            }
        });
        // A player that did not move keeps the exact time a seek gave it.
        if self.players[l].time() != before {
            self.sample_time[l] = f64::from(self.players[l].time());
        }
    }

    /// Jumps one clip node to `time` (wrapped or clamped), without events.
    fn set_leaf_time(&mut self, l: usize, time: f64) {
        let player = &mut self.players[l];
        let d = player.duration();
        let t = if player.looping() { wrap_clip_time(d, time) } else { time.clamp(0.0, f64::from(d)) };
        let t = if t.is_finite() { t } else { 0.0 };
        player.set_time(t as f32);
        self.sample_time[l] = t;
    }

    /// Normalised phase of clip node `l` (0 for a zero-length clip).
    fn phase(&self, l: usize) -> f64 {
        let d = f64::from(self.players[l].duration());
        if d > 0.0 { self.sample_time[l] / d } else { 0.0 }
    }

    /// Seconds one cycle of clip node `l` takes at its speed.
    fn period(&self, l: usize) -> f64 {
        let speed = f64::from(self.controller.leaves()[l].speed);
        f64::from(self.players[l].duration()) / speed
    }

    /// Seconds one cycle of state `s` takes: its clips' periods averaged by weight.
    fn state_cycle(&self, s: usize) -> f64 {
        self.weighted_period(self.controller.all_states()[s].leaves.clone()).unwrap_or(0.0)
    }

    /// Resets a state that gets weight again after having none: its clips
    /// start from 0, its cycle count from 0.
    fn enter(&mut self, s: u32) {
        let controller = self.controller.clone();
        let state = &controller.all_states()[s as usize];
        for l in state.leaves.clone() {
            let leaf = &controller.leaves()[l as usize];
            self.players[l as usize] = player(&self.rig, leaf.clip, leaf.looping);
            self.sample_time[l as usize] = 0.0;
        }
        self.state_time[s as usize] = 0.0;
        // A state entered anew starts at its parameters' values.
        for i in state.inputs.clone() {
            let parameter = controller.inputs[i as usize].parameter;
            self.inputs[i as usize] = self.parameters.values()[parameter as usize];
        }
        controller.state_weights(s as usize, self.parameters.values(), &self.inputs, &mut self.local_weight);
    }

    /// The state transitions are checked from: the crossfade's target while
    /// one runs (so a new transition interrupts it), else the current state.
    fn target_state(&self) -> Option<u32> {
        self.fade.map(|f| f.target).or(self.current)
    }

    fn choose_transition(&mut self) {
        let Some(source) = self.target_state() else { return };
        let controller = self.controller.clone();
        // Each list is best first, so its first transition that can start wins it.
        let first = |list: &[u32]| {
            list.iter()
                .copied()
                .find(|&t| controller.transitions[t as usize].to != source && self.holds(source, t))
        };
        let best = match (first(&controller.any_state), first(&controller.outgoing[source as usize])) {
            (Some(a), Some(b)) => {
                let rank = |t: u32| (controller.transitions[t as usize].priority, std::cmp::Reverse(t));
                Some(if rank(a) > rank(b) { a } else { b })
            }
            (a, b) => a.or(b),
        };
        if let Some(t) = best {
            self.start_transition(t);
        }
    }

    /// Whether transition `t` can start from state `source` now.
    fn holds(&self, source: u32, t: u32) -> bool {
        let transition = &self.controller.transitions[t as usize];
        let time_ok = transition.exit_time.is_none_or(|e| self.state_time[source as usize] >= f64::from(e));
        time_ok
            && transition.conditions.iter().all(|c| match *c {
                Condition::Float { parameter, op, value } => {
                    op.holds(self.parameters.values()[parameter as usize], value)
                }
                Condition::Bool { parameter, value } => {
                    (self.parameters.values()[parameter as usize] != 0.0) == value
                }
                Condition::Trigger { parameter } => self.parameters.fired(parameter),
            })
    }

    fn start_transition(&mut self, t: u32) {
        let controller = self.controller.clone();
        let transition = &controller.transitions[t as usize];
        for c in &transition.conditions {
            if let Condition::Trigger { parameter } = *c {
                self.parameters.consume(parameter);
            }
        }
        // An interrupted crossfade's target becomes the state we leave.
        if let Some(fade) = self.fade {
            self.current = Some(fade.target);
        }
        let to = transition.to;
        if self.state_weight[to as usize] <= 0.0 {
            self.enter(to);
        }
        if transition.duration <= 0.0 {
            self.finish_fade(to);
        } else {
            // The weights at this instant are the crossfade's start: the pose
            // stays continuous even when a running crossfade is interrupted.
            self.fade_from.copy_from_slice(&self.state_weight);
            self.fade = Some(Fade {
                target: to,
                elapsed: 0.0,
                duration: transition.duration,
                curve: transition.curve,
            });
        }
    }

    // ---- evaluation ---------------------------------------------------------

    /// Weighs the clip nodes and, when something changed and this frame is
    /// due at the character's evaluation rate (or a setting changed),
    /// evaluates the pose: sample, blend, layers, palettes.
    fn evaluate(&mut self, due: bool) -> Result<(), JobError> {
        let leaves = self.controller.leaves();
        self.clip_weights.fill(0.0);
        let mut changed = self.stale;
        let machine = self.controller.machine_states;
        for (l, leaf) in leaves.iter().enumerate() {
            let state = leaf.state as usize;
            // A layer's clips are weighted within the layer (its own weight
            // applies when it is laid over the pose).
            let w = if state < machine {
                self.state_weight[state] * self.local_weight[l]
            } else if self.state_weight[state] > 0.0 {
                self.local_weight[l]
            } else {
                0.0
            };
            self.weight[l] = w;
            if state < machine {
                self.clip_weights[leaf.clip as usize] += w;
            }
            let (t, last_w) = self.evaluated[l];
            if w != last_w || (w > 0.0 && t != self.sample_time[l]) {
                changed = true;
            }
        }
        for (layer, evaluated) in self.controller.layers().iter().zip(&self.evaluated_layers) {
            changed |= self.state_weight[layer.state as usize] != *evaluated;
        }
        if !changed || !(due || self.stale) {
            // Skipped: the palettes stay as they are (no new version, no
            // upload); the leaves' times move on and the next due frame
            // samples them where playback is then.
            return Ok(());
        }
        let rig = &self.rig;
        let rest = rig.skeleton.rest();
        blend_leaves(
            rig,
            leaves,
            self.controller.machine_leaves(),
            &self.weight,
            &self.sample_time,
            self.rotation_sampling,
            &mut self.cursors,
            &mut self.poses,
            &mut self.pose,
        )?;
        for layer in self.controller.layers() {
            let weight = self.state_weight[layer.state as usize];
            if weight > 0.0 {
                blend_leaves(
                    rig,
                    leaves,
                    self.controller.all_states()[layer.state as usize].leaves.clone(),
                    &self.weight,
                    &self.sample_time,
                    self.rotation_sampling,
                    &mut self.cursors,
                    &mut self.poses,
                    &mut self.layer_pose,
                )?;
                LayerJob {
                    mode: layer.mode,
                    layer: &self.layer_pose.locals,
                    layer_morph: &self.layer_pose.morph_weights,
                    reference: &layer.reference.locals,
                    reference_morph: &layer.reference.morph_weights,
                    mask: &layer.mask,
                    weight,
                    output: &mut self.pose.locals,
                    morph_output: &mut self.pose.morph_weights,
                }
                .run()?;
            }
        }
        if let Some(setup) = &self.controller.root_motion {
            let j = setup.joint as usize;
            root_motion::remove(&mut self.pose.locals[j], &rest[j]);
        }
        if let Some(weights) = &self.morph_override {
            self.pose.morph_weights.copy_from_slice(weights);
        }
        self.output.update(rig, &self.pose.locals, &self.pose.morph_weights, self.debug)?;
        for l in 0..leaves.len() {
            self.evaluated[l] = (self.sample_time[l], self.weight[l]);
        }
        for (layer, evaluated) in self.controller.layers().iter().zip(&mut self.evaluated_layers) {
            *evaluated = self.state_weight[layer.state as usize];
        }
        self.stale = false;
        Ok(())
    }

    /// What this update's playback moved the root by, in model space (the
    /// world matrices of the last evaluation place the root's parent).
    /// Every update, evaluated or not: the entity moves every frame.
    fn add_root_motion(&mut self) {
        let Some(setup) = &self.controller.root_motion else { return };
        let (rig, leaves) = (&self.rig, self.controller.leaves());
        let j = setup.joint as usize;
        let rest = &rig.skeleton.rest()[j];
        for (l, (leaf, clip_motion)) in leaves.iter().zip(&setup.leaves).enumerate() {
            // Layers play over the pose; they do not move the entity.
            if (leaf.state as usize) < self.controller.machine_states && self.weight[l] > 0.0 {
                let clip = &rig.clips[leaf.clip as usize];
                let d =
                    clip_motion.displacement(clip, rest, self.travel_from[l], self.travel[l], leaf.looping);
                self.root_motion.add_weighted(&d, self.weight[l]);
            }
        }
        // From the root's parent's space to model space.
        let parent = rig.skeleton.parents()[j];
        if let Some(m) = self.output.world().get(parent as usize) {
            self.root_motion.translation = m.fixed_view::<3, 3>(0, 0) * self.root_motion.translation;
        }
    }

    // ---- what it shows ------------------------------------------------------

    /// What the last update's playback moved the root by (model space):
    /// zero without root motion in the controller.
    pub fn root_motion(&self) -> RootMotion {
        self.root_motion
    }

    /// How fast the playing clips' roots travel at rate 1, metres per second
    /// in the root's parent's space: each clip's travel per cycle over its
    /// period, weighted. 0 without root motion.
    pub fn ground_speed(&self) -> f32 {
        let Some(setup) = &self.controller.root_motion else { return 0.0 };
        let mut velocity = nalgebra::Vector3::zeros();
        for (l, motion) in setup.leaves.iter().enumerate() {
            // A synced clip plays one cycle per cycle of its group.
            let group = self.controller.leaves()[l].group.and_then(|g| self.group_cycle(g as usize));
            let period = group.unwrap_or_else(|| self.period(l)) as f32;
            if self.weight[l] > 0.0 && period > 0.0 {
                velocity += motion.cycle().translation * (self.weight[l] / period);
            }
        }
        velocity.norm()
    }

    /// Events crossed by the last update, in playback order.
    pub fn events(&self) -> &[FiredEvent] {
        &self.events
    }

    /// The name of a fired event ("" if it is not one of this rig's).
    pub fn event_name(&self, event: &FiredEvent) -> &str {
        let clip = self.rig.clips.get(event.clip as usize);
        clip.and_then(|c| c.events.get(event.event as usize)).map_or("", |e| e.name.as_str())
    }

    /// The state the machine is in (the source while a crossfade runs);
    /// `None` for a controller without states.
    pub fn state(&self) -> Option<usize> {
        self.current.map(|s| s as usize)
    }

    /// Name of the current state.
    pub fn state_name(&self) -> Option<&str> {
        self.current.map(|s| self.controller.states()[s as usize].name.as_str())
    }

    /// The running crossfade: target state and progress in [0, 1).
    pub fn transition(&self) -> Option<(usize, f32)> {
        self.fade.map(|f| (f.target as usize, f.progress()))
    }

    /// Weight of each state (sums to one while the controller has states).
    pub fn state_weights(&self) -> &[f32] {
        &self.state_weight
    }

    /// Cycles played by state `s` since it was entered (what `exit_time` reads).
    pub fn state_time(&self, s: usize) -> f64 {
        self.state_time.get(s).copied().unwrap_or(0.0)
    }

    /// Final weight of each clip in the pose (sums to one while a state plays).
    pub fn clip_weights(&self) -> &[f32] {
        &self.clip_weights
    }

    /// Final weight of each clip node (see `Controller::leaves`).
    pub fn leaf_weights(&self) -> &[f32] {
        &self.weight
    }

    /// Time of clip node `l` on its clip's timeline, seconds.
    pub fn leaf_time(&self, l: usize) -> f64 {
        self.sample_time.get(l).copied().unwrap_or(0.0)
    }

    /// The clip node a timeline shows: the heaviest clip of the current state
    /// (the crossfade's target while one runs), with its time and duration.
    pub fn playhead(&self) -> Option<(usize, f64, f32)> {
        let s = self.target_state()? as usize;
        let range = self.controller.states()[s].leaves.clone();
        let l = range
            .max_by(|&a, &b| self.local_weight[a as usize].total_cmp(&self.local_weight[b as usize]))?
            as usize;
        Some((l, self.sample_time[l], self.players[l].duration()))
    }

    /// The local pose of the last evaluation (before debug views and edits).
    pub fn local_pose(&self) -> &Pose {
        &self.pose
    }

    /// A copy of the animated pose to change after the update (foot IK,
    /// look-at): the animated pose itself stays as the clips made it, so an
    /// edit never builds on the last one. `commit_edit` publishes it. The
    /// first edit sizes the buffer (one allocation); later ones reuse it.
    pub fn edit(&mut self) -> &mut Pose {
        // Sized on the first edit, then reused (clone_from keeps the buffers).
        self.edited.locals.clone_from(&self.pose.locals);
        self.edited.morph_weights.clone_from(&self.pose.morph_weights);
        &mut self.edited
    }

    /// The edit in progress (after `edit`).
    pub fn edited(&mut self) -> &mut Pose {
        &mut self.edited
    }

    /// Evaluates the edited pose into the output (world matrices, palettes,
    /// version: bumped when the result differs).
    pub fn commit_edit(&mut self) -> Result<(), JobError> {
        self.output.update(&self.rig, &self.edited.locals, &self.edited.morph_weights, self.debug).map(|_| ())
    }

    /// World matrices, palettes, morph weights and their version.
    pub fn output(&self) -> &PoseOutput {
        &self.output
    }

    /// The evaluated pose as plain slices (what the renderer reads).
    pub fn pose(&self) -> SkinnedPose<'_> {
        self.output.view()
    }

    /// Changes exactly when the palettes, world matrices or morph weights change.
    pub fn version(&self) -> u64 {
        self.output.version()
    }

    /// The kind of parameter `id`.
    pub fn parameter_kind(&self, id: ParameterId) -> Option<ParameterKind> {
        self.controller.parameters().get(id.0 as usize).map(|p| p.kind)
    }
}

/// Samples the clip nodes `range` that have weight and blends them into
/// `out`: the rest pose for none, one clip sampled straight into it (bit
/// for bit what sampling gives: dump and the conformance suite rely on
/// it), else a weighted blend. Used for the machine's pose and each layer's.
#[allow(clippy::too_many_arguments)]
fn blend_leaves(
    rig: &Rig,
    leaves: &[super::controller::Leaf],
    range: std::ops::Range<u32>,
    weights: &[f32],
    times: &[f64],
    rotation_blend: RotationBlend,
    cursors: &mut ClipCursors,
    poses: &mut [Pose],
    out: &mut Pose,
) -> Result<(), JobError> {
    let active = || (range.start as usize..range.end as usize).filter(|&l| weights[l] > 0.0);
    let mut it = active();
    if let (Some(l), None) = (it.next(), it.next()) {
        return cursors.sample(rig, leaves[l].clip, times[l], rotation_blend, out);
    }
    for l in active() {
        cursors.sample(rig, leaves[l].clip, times[l], rotation_blend, &mut poses[l])?;
    }
    let empty = BlendLayer { locals: &[], morph_weights: &[], weight: 0.0 };
    let mut layers = [empty; super::controller::MAX_CLIP_NODES];
    let mut count = 0;
    for l in active().take(layers.len()) {
        layers[count] = BlendLayer {
            locals: &poses[l].locals,
            morph_weights: &poses[l].morph_weights,
            weight: weights[l],
        };
        count += 1;
    }
    BlendJob {
        layers: &layers[..count],
        rest: rig.skeleton.rest(),
        rest_morph_weights: &rig.rest_morph_weights,
        rotation_blend: RotationBlend::Nlerp,
        output: &mut out.locals,
        morph_output: &mut out.morph_weights,
    }
    .run()
}

/// A player for `clip` at time 0.
fn player(rig: &Rig, clip: u32, looping: bool) -> ClipPlayer {
    let mut p = ClipPlayer::new(rig.clips[clip as usize].duration);
    p.set_looping(looping);
    p
}
