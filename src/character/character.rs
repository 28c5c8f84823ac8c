//! One animated character: its parameters and settings, driving the three
//! parts of an update, each in its own module: the state machine (current
//! state, crossfade, state weights: `state_machine`), blend-tree playback
//! (clip players, sync groups, blend-space inputs: `playback`) and the
//! evaluation (sampling, blending, layers, root motion, palettes:
//! `evaluation`). Everything is allocated in `Character::new`; `update`
//! and `seek` never allocate (events go into a buffer that keeps its
//! capacity). A character never reads a file and never touches the GPU.
//!
//! One update: crossfade weights move -> every state with weight advances
//! its clips (events from the dominant state) -> the state machine may
//! start a transition -> triggers clear -> when a clip's time or weight
//! changed and the update is due at the evaluation rate: sample -> blend ->
//! morph override -> local-to-model -> palettes; root motion every update.

use super::controller::{Condition, Controller, ParameterId, ParameterKind};
use super::evaluation::{Evaluated, Evaluation, EvaluationInput, Keeps};
use super::events::FiredEvent;
use super::lod::EvaluationRate;
use super::output::{DebugPose, PoseOutput};
use super::parameters::{ParameterError, ParameterValue, Parameters};
use super::playback::{EventSink, Playback, PlaybackInput};
use super::prefetch_plan::{PlanKey, PrefetchPlan};
use super::root_motion::RootMotion;
use super::state_machine::StateMachine;
use crate::anim::Rig;
use crate::anim::hierarchy::batch::BatchedPose;
use crate::anim::prefetch::Blocks;
use crate::anim::{JobError, Pose, PoseProgram, RotationBlend, SkinnedPose, Transform};
use std::sync::Arc;

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
    /// The next update must evaluate (first update, a setting changed).
    stale: bool,
    /// The next update is due whatever the rate's period says (the rate
    /// rose): it evaluates if anything moved.
    due_now: bool,
    /// Poses the joints on the GPU with this program (`gpu_pose`).
    gpu_program: Option<Arc<PoseProgram>>,

    machine: StateMachine,
    playback: Playback,
    evaluation: Evaluation,
    /// The animated pose as edited after the update (IK), see `edit`;
    /// empty until the first edit (most characters are never edited).
    edited: Pose,
    /// The output shows `edited` (committed since the last evaluation).
    shows_edit: bool,
    /// The last update evaluated the pose (`posed`).
    posed: bool,
    events: Vec<FiredEvent>,
}

impl Character {
    /// Events one update can report before the buffer has to grow (it
    /// grows once, past this, and keeps the capacity). Small: a walk cycle
    /// fires one or two per update, and a crowd keeps this per character.
    pub const EVENT_CAPACITY: usize = 4;

    /// A character of `rig` driven by `controller` (which must have been
    /// compiled for a rig with the same clips and skeleton), in the
    /// controller's initial state with default parameters. Not evaluated
    /// until the first `update`.
    pub fn new(rig: Arc<Rig>, controller: Arc<Controller>) -> Result<Self, JobError> {
        Self::keeping(rig, controller, Keeps::ALL)
    }

    /// `new`, keeping what `keeps` says. Without the local pose, an update
    /// within an `AnimationSystem` leaves it in the updating thread's
    /// buffers (read there by its pose batch) and `local_pose` empty (an
    /// update alone still keeps it); without every world matrix, `output`
    /// keeps those that drawing and root motion read. What a crowd that is
    /// only drawn needs: 39 cache lines less per built-in character and
    /// update.
    pub(super) fn keeping(
        rig: Arc<Rig>,
        controller: Arc<Controller>,
        keeps: Keeps,
    ) -> Result<Self, JobError> {
        if let Some(l) = controller.leaves().iter().find(|l| l.clip as usize >= rig.clips.len()) {
            return Err(JobError::new(format!(
                "controller plays clip {}, the rig has {}",
                l.clip,
                rig.clips.len()
            )));
        }
        let mut character = Character {
            parameters: Parameters::new(&controller),
            index: 0,
            rate: 1.0,
            evaluation_rate: EvaluationRate::EveryFrame,
            frame: 0,
            rotation_sampling: rig.rotation_blend(),
            debug: DebugPose::Animated,
            morph_override: None,
            stale: true,
            due_now: false,
            gpu_program: None,
            machine: StateMachine::new(&controller),
            playback: Playback::new(&rig, &controller),
            evaluation: Evaluation::new(&rig, &controller, keeps),
            edited: Pose::default(),
            shows_edit: false,
            posed: false,
            events: Vec::with_capacity(Self::EVENT_CAPACITY),
            rig,
            controller,
        };
        if let Some(s) = character.machine.current() {
            let c = &mut character;
            let input =
                PlaybackInput { rig: &c.rig, controller: &c.controller, values: c.parameters.values() };
            c.playback.enter(input, s);
        }
        character.weigh_layers(0.0);
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

    /// The evaluation (pose buffers and what produced the last pose).
    pub(super) fn evaluation(&self) -> &Evaluation {
        &self.evaluation
    }

    /// The next update evaluates, due or not.
    pub(super) fn mark_stale(&mut self) {
        self.stale = true;
    }

    /// The program posing the joints on the GPU, if any.
    pub(super) fn gpu_program(&self) -> Option<&PoseProgram> {
        self.gpu_program.as_deref()
    }

    /// Sets the program posing the joints on the GPU.
    pub(super) fn set_gpu_program(&mut self, program: Option<Arc<PoseProgram>>) {
        self.gpu_program = program;
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

    /// How often the pose is evaluated: every update (the default), every
    /// 2nd, 4th or 8th for characters far away or small on screen (see
    /// [`EvaluationRate::for_screen_height`]), or not while unseen.
    /// Playback, transitions, events and root motion still run every
    /// update, so events fire once each, on the update that crosses them,
    /// with their own clip time; skipped updates keep the last palettes and
    /// version (nothing to upload). A rate faster than the one before
    /// makes the next update due, so a character coming into view or
    /// closer never shows a pose older than its new rate allows.
    pub fn set_evaluation_rate(&mut self, rate: EvaluationRate) {
        self.due_now |= rate.is_faster_than(self.evaluation_rate);
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
        let Some(s) = self.machine.target() else { return };
        let input =
            PlaybackInput { rig: &self.rig, controller: &self.controller, values: self.parameters.values() };
        self.playback.seek(input, s as usize, time);
    }

    // ---- the update ---------------------------------------------------------

    /// Where the state the next updates read lies (see
    /// [`PrefetchPlan`]); the same until the character is replaced or
    /// its joints move to or from the GPU.
    pub(super) fn prefetch_plan(&self) -> PrefetchPlan {
        let (mut every_update, mut evaluation) = (Blocks::default(), Blocks::default());
        self.parameters.blocks(&mut every_update);
        self.machine.blocks(&mut every_update);
        self.playback.blocks(&mut every_update);
        self.evaluation.blocks(&mut every_update, &mut evaluation, self.gpu_program.is_some());
        PrefetchPlan::new(self.plan_key(), every_update.ranges(), evaluation.ranges())
    }

    /// What a prefetch plan was made for: the address of a block every
    /// character that draws has (a clone or a replacement has another: its
    /// palettes, or without a skin its world matrices) and where its
    /// joints are posed. Read from the character itself, not its blocks.
    pub(super) fn plan_key(&self) -> PlanKey {
        let output = self.evaluation.output();
        let palettes = output.view().palettes;
        let block =
            if palettes.is_empty() { output.world().as_ptr() as usize } else { palettes.as_ptr() as usize };
        (block, self.gpu_program.is_some())
    }

    /// Whether the next update evaluates the pose if anything moved (a
    /// setting changed, or it is due at the evaluation rate).
    pub(super) fn may_evaluate(&self) -> bool {
        self.stale || self.due()
    }

    /// Whether the next update is due at the evaluation rate. Frames are
    /// staggered by character index, so that a crowd at a reduced rate
    /// spreads its evaluations over the frames.
    fn due(&self) -> bool {
        self.due_now || self.evaluation_rate.is_due(self.frame.wrapping_add(self.index))
    }

    /// Advances by `dt` seconds (times the rate; non-finite counts as 0) and
    /// evaluates. Events crossed are in `events()` until the next update.
    pub fn update(&mut self, dt: f32) -> Result<(), JobError> {
        let result = self.advance_and_evaluate(dt, None).map(|_| ());
        self.evaluation.set_root_motion(&self.rig, &self.controller, self.playback.travel());
        result
    }

    /// `update`, but an animated pose's world matrices and palettes wait
    /// for a pose batch across characters of the rig (see
    /// [`batch`](crate::anim::hierarchy::batch)) when it evaluates: then
    /// it returns true, and `finish_batch` ends the update. A character
    /// that does not keep its local pose writes it into `buffer`, which
    /// `batched` and `finish_batch` then read.
    pub(super) fn update_for_batch(
        &mut self,
        dt: f32,
        buffer: &mut Vec<Transform>,
    ) -> Result<bool, JobError> {
        let waits = self.advance_and_evaluate(dt, Some(buffer));
        if !matches!(waits, Ok(true)) {
            self.evaluation.set_root_motion(&self.rig, &self.controller, self.playback.travel());
        }
        waits
    }

    /// The rig, and what a pose batch reads and writes for this character
    /// (after `update_for_batch` returned true).
    pub(super) fn batched<'a>(&'a mut self, buffer: &'a [Transform]) -> (&'a Rig, BatchedPose<'a>) {
        (&self.rig, self.evaluation.batched(buffer))
    }

    /// Ends an update whose output waited for a batch: `Some(changed)`
    /// with what the batch reported, `None` when no batch took it (the
    /// output is then computed alone). Then the root motion, which reads
    /// the new world matrices.
    pub(super) fn finish_batch(
        &mut self,
        world_changed: Option<bool>,
        buffer: &[Transform],
    ) -> Result<(), JobError> {
        let result = match world_changed {
            Some(changed) => self.evaluation.finish_batch(changed),
            None => self.evaluation.finish_alone(&self.rig, buffer),
        };
        self.evaluation.set_root_motion(&self.rig, &self.controller, self.playback.travel());
        result
    }

    /// The update up to the root motion: playback, transitions and the
    /// evaluation (see `evaluate`); with a `buffer`, the output may wait
    /// for a batch (whether it does).
    fn advance_and_evaluate(
        &mut self,
        dt: f32,
        buffer: Option<&mut Vec<Transform>>,
    ) -> Result<bool, JobError> {
        self.events.clear();
        self.playback.clear_travel();
        let step = if dt.is_finite() { dt * self.rate } else { 0.0 };
        let step = if step.is_finite() { step } else { 0.0 };
        self.machine.advance_fade(step.abs());
        self.weigh_layers(step.abs());
        let dominant = self.machine.dominant();
        let input =
            PlaybackInput { rig: &self.rig, controller: &self.controller, values: self.parameters.values() };
        let mut sink = EventSink { character: self.index, events: &mut self.events };
        self.playback.advance(input, self.machine.weights(), dominant, step, &mut sink);
        let state_times = self.playback.state_times();
        if let Some(t) = self.machine.choose(&self.controller, &self.parameters, state_times) {
            self.start_transition(t);
        }
        self.parameters.clear_triggers();
        let due = self.due();
        self.due_now = false;
        self.frame = self.frame.wrapping_add(1);
        self.evaluate(due, buffer)
    }

    /// Sets each layer's weight from its setting; a layer whose weight rises
    /// from 0 starts its clips from the beginning. A triggered layer instead
    /// starts them when its trigger fires while it is idle (a firing during
    /// a run is ignored), and its weight follows its run's envelope, whose
    /// clock moves `seconds` this update.
    fn weigh_layers(&mut self, seconds: f32) {
        for (i, layer) in self.controller.layers().iter().enumerate() {
            let mut w = self.controller.layer_weight(layer, self.parameters.values());
            let s = layer.state as usize;
            let input = PlaybackInput {
                rig: &self.rig,
                controller: &self.controller,
                values: self.parameters.values(),
            };
            match &layer.trigger {
                None => {
                    if self.machine.weights()[s] <= 0.0 && w > 0.0 {
                        self.playback.enter(input, layer.state);
                    }
                }
                Some(trigger) => {
                    // The clock counts from the clips' start, which this
                    // update's playback moves on by `seconds` as well.
                    let run = match self.playback.layer_run(i) {
                        Some(elapsed) => Some(elapsed + seconds),
                        None if self.parameters.fired(trigger.parameter.0) => {
                            self.playback.enter(input, layer.state);
                            Some(seconds)
                        }
                        None => None,
                    };
                    let run = run.filter(|&elapsed| elapsed < trigger.length);
                    self.playback.set_layer_run(i, run);
                    w *= run.map_or(0.0, |elapsed| trigger.envelope(elapsed));
                }
            }
            self.machine.set_layer_weight(s, w);
        }
    }

    /// Starts transition `t`: its triggers are consumed, its target reset
    /// when it had no weight, and the crossfade begun.
    fn start_transition(&mut self, t: u32) {
        let transition = &self.controller.transitions[t as usize];
        for c in &transition.conditions {
            if let Condition::Trigger { parameter } = *c {
                self.parameters.consume(parameter);
            }
        }
        let to = transition.to;
        if self.machine.weights()[to as usize] <= 0.0 {
            let input = PlaybackInput {
                rig: &self.rig,
                controller: &self.controller,
                values: self.parameters.values(),
            };
            self.playback.enter(input, to);
        }
        self.machine.begin(transition);
    }

    /// Evaluates the pose when due (see `Evaluation::run`); with a
    /// `buffer` its output may wait for a batch (whether it does).
    fn evaluate(&mut self, due: bool, buffer: Option<&mut Vec<Transform>>) -> Result<bool, JobError> {
        let batched = buffer.is_some();
        let input = EvaluationInput {
            rig: &self.rig,
            controller: &self.controller,
            state_weights: self.machine.weights(),
            local_weights: self.playback.local_weights(),
            sample_times: self.playback.sample_times(),
            rotation_sampling: self.rotation_sampling,
            debug: self.debug,
            morph_override: self.morph_override.as_deref(),
            stale: self.stale,
            due,
            gpu_pose: self.gpu_program.is_some(),
            batched,
        };
        self.posed = false;
        let evaluated = self.evaluation.run(&input, buffer)?;
        self.posed = evaluated != Evaluated::No;
        if self.posed {
            self.shows_edit = false;
        }
        self.stale = false;
        Ok(evaluated == Evaluated::AwaitsBatch)
    }

    // ---- what it shows ------------------------------------------------------

    /// What the last update's playback moved the root by (model space):
    /// zero without root motion in the controller.
    pub fn root_motion(&self) -> RootMotion {
        self.evaluation.root_motion()
    }

    /// How fast the playing clips' roots travel at rate 1, metres per second
    /// in the root's parent's space: each clip's travel per cycle over its
    /// period, weighted. 0 without root motion.
    pub fn ground_speed(&self) -> f32 {
        let controller = &self.controller;
        let Some(setup) = &controller.root_motion else { return 0.0 };
        let weights = self.evaluation.leaf_weights();
        let mut velocity = nalgebra::Vector3::zeros();
        for (l, motion) in setup.leaves.iter().enumerate() {
            // A synced clip plays one cycle per cycle of its group.
            let group =
                controller.leaves()[l].group.and_then(|g| self.playback.group_cycle(controller, g as usize));
            let period = group.unwrap_or_else(|| self.playback.period(controller, l)) as f32;
            if weights[l] > 0.0 && period > 0.0 {
                velocity += motion.cycle().translation * (weights[l] / period);
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
        self.machine.current().map(|s| s as usize)
    }

    /// Name of the current state.
    pub fn state_name(&self) -> Option<&str> {
        self.machine.current().map(|s| self.controller.states()[s as usize].name.as_str())
    }

    /// The running crossfade: target state and progress in [0, 1).
    pub fn transition(&self) -> Option<(usize, f32)> {
        self.machine.crossfade().map(|f| (f.target as usize, f.progress()))
    }

    /// Weight of each state of the state machine (sums to one while the
    /// controller has states); the layers' are in `layer_weights`.
    pub fn state_weights(&self) -> &[f32] {
        &self.machine.weights()[..self.controller.states().len()]
    }

    /// Weight of each layer this update, in layer order: its weight setting
    /// (clamped to [0, 1]), times its envelope for a triggered layer.
    pub fn layer_weights(&self) -> &[f32] {
        &self.machine.weights()[self.controller.states().len()..]
    }

    /// Cycles played by state `s` since it was entered (what `exit_time` reads).
    pub fn state_time(&self, s: usize) -> f64 {
        self.playback.state_times().get(s).copied().unwrap_or(0.0)
    }

    /// Final weight of each clip in the pose (sums to one while a state plays).
    pub fn clip_weights(&self) -> &[f32] {
        self.evaluation.clip_weights()
    }

    /// Final weight of each clip node (see `Controller::leaves`).
    pub fn leaf_weights(&self) -> &[f32] {
        self.evaluation.leaf_weights()
    }

    /// Time of clip node `l` on its clip's timeline, seconds.
    pub fn leaf_time(&self, l: usize) -> f64 {
        self.playback.sample_times().get(l).copied().unwrap_or(0.0)
    }

    /// The clip node a timeline shows: the heaviest clip of the current state
    /// (the crossfade's target while one runs), with its time and duration.
    pub fn playhead(&self) -> Option<(usize, f64, f32)> {
        let s = self.machine.target()? as usize;
        let range = self.controller.states()[s].leaves.clone();
        let local = self.playback.local_weights();
        let l = range.max_by(|&a, &b| local[a as usize].total_cmp(&local[b as usize]))? as usize;
        Some((l, self.playback.sample_times()[l], self.playback.duration(l)))
    }

    /// The local pose of the last evaluation (before debug views and edits);
    /// its transforms empty after an update in a system that does not keep
    /// local poses (see [`AnimationSystem::set_keeps_local_poses`](super::AnimationSystem::set_keeps_local_poses)).
    pub fn local_pose(&self) -> &Pose {
        self.evaluation.pose()
    }

    /// A copy of the animated pose to change after the update (foot IK,
    /// look-at): the animated pose itself stays as the clips made it, so an
    /// edit never builds on the last one. `commit_edit` publishes it. The
    /// first edit sizes the buffer (one allocation); later ones reuse it.
    pub fn edit(&mut self) -> &mut Pose {
        // Sized on the first edit, then reused (clone_from keeps the buffers).
        let pose = self.evaluation.pose();
        self.edited.locals.clone_from(&pose.locals);
        self.edited.morph_weights.clone_from(&pose.morph_weights);
        &mut self.edited
    }

    /// The edit in progress (after `edit`).
    pub fn edited(&mut self) -> &mut Pose {
        &mut self.edited
    }

    /// Evaluates the edited pose into the output (world matrices, palettes,
    /// version: bumped when the result differs).
    pub fn commit_edit(&mut self) -> Result<(), JobError> {
        self.evaluation.publish(&self.rig, &self.edited, self.debug)?;
        self.shows_edit = true;
        Ok(())
    }

    /// The local pose the output shows: the last committed edit (IK) when
    /// one was committed since the last evaluation, else `local_pose`.
    pub fn shown_pose(&self) -> &Pose {
        if self.shows_edit { &self.edited } else { self.evaluation.pose() }
    }

    /// World matrices, palettes, morph weights and their version.
    pub fn output(&self) -> &PoseOutput {
        self.evaluation.output()
    }

    /// The evaluated pose as plain slices (what the renderer reads).
    pub fn pose(&self) -> SkinnedPose<'_> {
        self.evaluation.output().view()
    }

    /// Changes exactly when the palettes, world matrices or morph weights change.
    pub fn version(&self) -> u64 {
        self.evaluation.output().version()
    }

    /// Whether the last update evaluated the pose (sampled, blended and
    /// accumulated it, or recorded its playback for the GPU): false when
    /// its evaluation rate skipped it or nothing moved.
    pub fn posed(&self) -> bool {
        self.posed
    }

    /// The kind of parameter `id`.
    pub fn parameter_kind(&self, id: ParameterId) -> Option<ParameterKind> {
        self.controller.parameters().get(id.0 as usize).map(|p| p.kind)
    }
}
