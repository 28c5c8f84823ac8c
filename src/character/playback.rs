//! Blend-tree playback of one character: a clip player per clip node
//! (leaf), each blend space's input following its parameter, the weight of
//! each leaf within its state, sync groups kept at one phase behind their
//! heaviest clip, each state's cycle count, and how far each leaf played in
//! the last update (its root motion). It moves clip times; it never samples
//! or blends poses (see `evaluation`), never chooses states (see
//! `state_machine`), and never allocates after `new`.

use super::controller::Controller;
use super::events::FiredEvent;
use super::root_motion::LeafStep;
use crate::anim::Rig;
use crate::anim::player::wrap_clip_time;
use crate::anim::{ClipEvent, ClipPlayer};
use std::cell::Cell;
use std::ops::Range;

/// What playback reads: the shared rig and controller, and the
/// character's parameter values.
#[derive(Clone, Copy)]
pub(super) struct PlaybackInput<'a> {
    /// The rig (clip durations and events).
    pub rig: &'a Rig,
    /// The controller (states, leaves, groups, inputs).
    pub controller: &'a Controller,
    /// Parameter values, by index.
    pub values: &'a [f32],
}

/// Where crossed events go: the character's buffer, stamped with its index.
pub(super) struct EventSink<'a> {
    /// The character's index in its system.
    pub character: u32,
    /// The buffer (keeps its capacity).
    pub events: &'a mut Vec<FiredEvent>,
}

/// Every leaf's step in an update (see [`Playback::travel`]).
#[derive(Clone, Copy)]
pub(super) struct Travel<'a> {
    from: &'a [f64],
    travel: &'a [f64],
    to: &'a [f64],
}

impl Travel<'_> {
    /// Leaf `l`'s step.
    pub fn step(&self, l: usize) -> LeafStep {
        LeafStep { from: self.from[l], travel: self.travel[l], to: self.to[l] }
    }
}

/// See the module documentation.
#[derive(Debug, Clone)]
pub(super) struct Playback {
    // Per clip node (leaf).
    players: Vec<ClipPlayer>,
    sample_time: Vec<f64>,
    /// Weight within its state.
    local_weight: Vec<f32>,
    /// Clip time each leaf started this update from, and how far it played
    /// (signed clip seconds, loops unwrapped): its root motion.
    travel_from: Vec<f64>,
    travel: Vec<f64>,
    /// Leader of each sync group.
    leaders: Vec<u32>,
    /// Each blend space's input, following its parameter (see `SpaceInput`).
    inputs: Vec<f32>,
    /// Cycles played since each state was entered.
    state_time: Vec<f64>,
    /// Per layer: seconds since a triggered layer's run started (`None`
    /// while it is idle, and always for untriggered layers).
    runs: Vec<Option<f32>>,
}

impl Playback {
    /// Names every leaf's and state's playback for a prefetch (see
    /// [`prefetch`](crate::anim::prefetch)).
    pub fn blocks(&self, blocks: &mut crate::anim::prefetch::Blocks) {
        blocks.slice(&self.players);
        blocks.slice(&self.sample_time);
        blocks.slice(&self.local_weight);
        blocks.slice(&self.travel_from);
        blocks.slice(&self.travel);
        blocks.slice(&self.leaders);
        blocks.slice(&self.inputs);
        blocks.slice(&self.state_time);
        blocks.slice(&self.runs);
    }

    /// Every clip node at time 0, no state entered yet.
    pub fn new(rig: &Rig, controller: &Controller) -> Self {
        let leaves = controller.leaves();
        Playback {
            players: leaves.iter().map(|l| player(rig, l.clip, l.looping)).collect(),
            sample_time: vec![0.0; leaves.len()],
            local_weight: vec![0.0; leaves.len()],
            travel_from: vec![0.0; leaves.len()],
            travel: vec![0.0; leaves.len()],
            leaders: controller.groups().iter().map(|g| g.leaves.start).collect(),
            inputs: vec![0.0; controller.inputs.len()],
            state_time: vec![0.0; controller.all_states().len()],
            runs: vec![None; controller.layers().len()],
        }
    }

    /// Seconds since triggered layer `i` started its run (`None`: idle).
    pub fn layer_run(&self, i: usize) -> Option<f32> {
        self.runs.get(i).copied().flatten()
    }

    /// Sets (or ends, with `None`) triggered layer `i`'s run.
    pub fn set_layer_run(&mut self, i: usize, run: Option<f32>) {
        if let Some(slot) = self.runs.get_mut(i) {
            *slot = run;
        }
    }

    /// Each leaf's weight within its state.
    pub fn local_weights(&self) -> &[f32] {
        &self.local_weight
    }

    /// Each leaf's time on its clip's timeline, seconds.
    pub fn sample_times(&self) -> &[f64] {
        &self.sample_time
    }

    /// Each leaf's step in the last update: where it started, how far it
    /// played (see the field documentation) and where it is now.
    pub fn travel(&self) -> Travel<'_> {
        Travel { from: &self.travel_from, travel: &self.travel, to: &self.sample_time }
    }

    /// Cycles played by each state since it was entered.
    pub fn state_times(&self) -> &[f64] {
        &self.state_time
    }

    /// Duration of leaf `l`'s clip, seconds.
    pub fn duration(&self, l: usize) -> f32 {
        self.players[l].duration()
    }

    /// Forgets the last update's travel (the start of an update).
    pub fn clear_travel(&mut self) {
        self.travel.fill(0.0);
    }

    /// Resets state `s`, which gets weight again after having none: its
    /// clips start from 0, its cycle count from 0, its blend spaces' inputs
    /// at their parameters' current values.
    pub fn enter(&mut self, input: PlaybackInput, s: u32) {
        let PlaybackInput { rig, controller, values } = input;
        let state = &controller.all_states()[s as usize];
        for l in state.leaves.clone() {
            let leaf = &controller.leaves()[l as usize];
            self.players[l as usize] = player(rig, leaf.clip, leaf.looping);
            self.sample_time[l as usize] = 0.0;
        }
        self.state_time[s as usize] = 0.0;
        // A state entered anew starts at its parameters' values.
        for i in state.inputs.clone() {
            let parameter = controller.inputs[i as usize].parameter;
            self.inputs[i as usize] = values[parameter as usize];
        }
        controller.state_weights(s as usize, values, &self.inputs, &mut self.local_weight);
    }

    /// Advances every state with weight (`weights`, by state) by `step`
    /// seconds: its inputs follow their parameters, its leaves are weighed
    /// and played, its sync groups kept in phase. The `dominant` machine
    /// state and every layer report crossed events to `sink`.
    pub fn advance(
        &mut self,
        input: PlaybackInput,
        weights: &[f32],
        dominant: Option<usize>,
        step: f32,
        sink: &mut EventSink,
    ) {
        let PlaybackInput { rig, controller, values } = input;
        for (s, &weight) in weights.iter().enumerate() {
            if weight <= 0.0 {
                continue;
            }
            self.follow_inputs(controller, values, s, step.abs());
            controller.state_weights(s, values, &self.inputs, &mut self.local_weight);
            // The dominant machine state reports, and every layer with weight.
            let report = dominant == Some(s) || s >= controller.machine_states;
            let state = &controller.all_states()[s];
            let state_period = self.weighted_period(controller, state.leaves.clone());
            let cycle = state_period.unwrap_or(0.0);
            if cycle > 0.0 {
                self.state_time[s] += f64::from(step) / cycle;
            }
            for g in state.groups.clone() {
                // A group of every clip of its state (a synced blend space)
                // shares the state's weighted period: the same sum again.
                let leaves = controller.groups()[g as usize].leaves.clone();
                let period = if leaves == state.leaves {
                    state_period
                } else {
                    self.weighted_period(controller, leaves)
                };
                self.advance_group(rig, controller, g as usize, period, step, report.then_some(&mut *sink));
            }
            for l in state.leaves.clone() {
                let leaf = &controller.leaves()[l as usize];
                if leaf.group.is_some() {
                    continue;
                }
                let l = l as usize;
                let report = report && self.local_weight[l] > 0.0;
                self.players[l].set_speed(leaf.speed);
                self.advance_leaf(rig, controller, l, step, report.then_some(&mut *sink));
            }
        }
    }

    /// Jumps state `s` to `time` seconds on the timeline of its leading
    /// clip (wrapped when it loops, clamped otherwise); synced clips follow
    /// at the same phase. Fires no events.
    pub fn seek(&mut self, input: PlaybackInput, s: usize, time: f64) {
        let PlaybackInput { controller, values, .. } = input;
        controller.state_weights(s, values, &self.inputs, &mut self.local_weight);
        let state = &controller.all_states()[s];
        for g in state.groups.clone() {
            let group = &controller.groups()[g as usize];
            let leader = self.choose_leader(controller, g as usize);
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
        let cycle = self.state_cycle(controller, s);
        self.state_time[s] = if cycle > 0.0 { time / cycle } else { 0.0 };
    }

    /// Moves state `s`'s blend-space inputs towards their parameters over
    /// `seconds` (at once without smoothing).
    fn follow_inputs(&mut self, controller: &Controller, values: &[f32], s: usize, seconds: f32) {
        for i in controller.all_states()[s].inputs.clone() {
            let input = controller.inputs[i as usize];
            let target = values[input.parameter as usize];
            let value = &mut self.inputs[i as usize];
            *value = if input.smoothing > 0.0 {
                // In f64, so a jump across the whole f32 range cannot
                // overflow to infinity (then NaN): the result lies between
                // the value and its target.
                let follow = follow_share(seconds, input.smoothing);
                (f64::from(*value) + (f64::from(target) - f64::from(*value)) * follow) as f32
            } else {
                target
            };
        }
    }

    /// Moves a sync group: its leader by the phase step of the group's
    /// weighted cycle (`period`, its `group_cycle`: durations averaged by
    /// weight, so a 50 % walk/run takes half-way between their periods),
    /// its followers to the leader's phase.
    fn advance_group(
        &mut self,
        rig: &Rig,
        controller: &Controller,
        g: usize,
        period: Option<f64>,
        step: f32,
        sink: Option<&mut EventSink>,
    ) {
        let group = &controller.groups()[g];
        let leader = self.choose_leader(controller, g) as usize;
        let cycle = period.unwrap_or_else(|| self.period(controller, leader));
        if cycle > 0.0 {
            let phase_step = f64::from(step) / cycle;
            let clip_step = phase_step * f64::from(self.players[leader].duration());
            self.players[leader].set_speed(1.0);
            self.advance_leaf(rig, controller, leader, clip_step as f32, sink);
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
    pub fn group_cycle(&self, controller: &Controller, g: usize) -> Option<f64> {
        self.weighted_period(controller, controller.groups()[g].leaves.clone())
    }

    /// The periods of clip nodes `leaves` averaged by their local weights
    /// (nodes without weight or period left out; `None` if that is all).
    fn weighted_period(&self, controller: &Controller, leaves: Range<u32>) -> Option<f64> {
        let (mut weights, mut periods) = (0.0f64, 0.0f64);
        for l in leaves {
            let (w, p) = (f64::from(self.local_weight[l as usize]), self.period(controller, l as usize));
            if w > 0.0 && p > 0.0 {
                weights += w;
                periods += w * p;
            }
        }
        (weights > 0.0).then(|| periods / weights)
    }

    /// The heaviest clip of group `g` (the previous leader keeps a tie).
    fn choose_leader(&mut self, controller: &Controller, g: usize) -> u32 {
        let group = controller.groups()[g].leaves.clone();
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
    /// speed), recording crossed events in `sink` when given.
    fn advance_leaf(
        &mut self,
        rig: &Rig,
        controller: &Controller,
        l: usize,
        step: f32,
        sink: Option<&mut EventSink>,
    ) {
        let clip_index = controller.leaves()[l].clip;
        let events = &rig.clips[clip_index as usize].events;
        let before = self.players[l].time();
        self.travel_from[l] = self.sample_time[l];
        self.travel[l] += f64::from(step) * f64::from(self.players[l].speed());
        let mut sink = sink;
        self.players[l].advance(step, events, |e: &ClipEvent| {
            if let Some(sink) = sink.as_mut() {
                let event = events.iter().position(|x| std::ptr::eq(x, e)).unwrap_or(0) as u32;
                let character = sink.character;
                sink.events.push(FiredEvent { character, clip: clip_index, event, clip_time: e.time });
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
    pub fn period(&self, controller: &Controller, l: usize) -> f64 {
        let speed = f64::from(controller.leaves()[l].speed);
        f64::from(self.players[l].duration()) / speed
    }

    /// Seconds one cycle of state `s` takes: its clips' periods averaged by weight.
    fn state_cycle(&self, controller: &Controller, s: usize) -> f64 {
        self.weighted_period(controller, controller.all_states()[s].leaves.clone()).unwrap_or(0.0)
    }
}

/// A player for `clip` at time 0.
fn player(rig: &Rig, clip: u32, looping: bool) -> ClipPlayer {
    let mut p = ClipPlayer::new(rig.clips[clip as usize].duration);
    p.set_looping(looping);
    p
}

/// `1 - exp(-seconds / smoothing)`, in [0, 1]: the share of the way to its
/// target a smoothed input moves in `seconds`. A crowd asks for the same
/// two numbers for every character of a frame (one frame time, a
/// controller's smoothing), so the last answer is kept per thread: the
/// same bits without an `exp` per character (a tenth of a GPU-posed
/// built-in character's update: `guide::performance_history`).
fn follow_share(seconds: f32, smoothing: f32) -> f64 {
    type Last = Cell<Option<(u32, u32, f64)>>;
    thread_local! {
        static LAST: Last = const { Cell::new(None) };
    }
    let key = (seconds.to_bits(), smoothing.to_bits());
    LAST.with(|last| match last.get() {
        Some((s, m, share)) if (s, m) == key => share,
        _ => {
            let share = (1.0 - (-f64::from(seconds) / f64::from(smoothing)).exp()).clamp(0.0, 1.0);
            last.set(Some((key.0, key.1, share)));
            share
        }
    })
}

#[cfg(test)]
mod tests {
    use super::follow_share;

    /// The kept answer is the formula's, to the bit, whichever pair came
    /// before (the same time with another smoothing, and back).
    #[test]
    fn follow_share_is_the_formula_whatever_came_before() {
        let formula = |s: f32, m: f32| (1.0 - (-f64::from(s) / f64::from(m)).exp()).clamp(0.0, 1.0);
        let pairs =
            [(1.0 / 60.0, 0.25), (1.0 / 60.0, 0.25), (1.0 / 60.0, 0.5), (0.0, 0.5), (1.0 / 60.0, 0.25)];
        for (s, m) in pairs.into_iter().chain([(1e30, 1e-30), (0.1, f32::INFINITY)]) {
            assert_eq!(follow_share(s, m).to_bits(), formula(s, m).to_bits(), "{s} {m}");
        }
    }
}
