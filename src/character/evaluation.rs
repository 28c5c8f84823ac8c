//! Evaluating one character's pose from its playback: each clip node's
//! final weight, then (when something changed and the update is due)
//! sampling, blending, layers, root-motion removal, the morph override,
//! local-to-model and palettes; and the root motion of every update. It
//! reads the state machine's weights and the leaves' times; it never moves
//! a clip time or a state, and never allocates after `new`.

use super::clip_cursors::ClipCursors;
use super::controller::{Controller, Leaf, MAX_CLIP_NODES};
use super::output::{DebugPose, PoseOutput};
use super::playback::Travel;
use super::root_motion::{self, RootMotion, RootTrail};
use super::scratch::{BlendPoses, Scratch, fit, with_scratch};
use crate::anim::hierarchy::batch::BatchedPose;
use crate::anim::prefetch::Blocks;
use crate::anim::{
    BlendJob, BlendLayer, JobError, LayerJob, LayerMode, PlaybackEntry, Pose, Rig, RotationBlend, Transform,
};
use std::ops::Range;

/// What one evaluation reads.
#[derive(Clone, Copy)]
pub(super) struct EvaluationInput<'a> {
    /// The rig (clips, skeleton, rest pose).
    pub rig: &'a Rig,
    /// The controller (leaves, layers, root motion).
    pub controller: &'a Controller,
    /// Each state's weight (the state machine's).
    pub state_weights: &'a [f32],
    /// Each leaf's weight within its state (playback's).
    pub local_weights: &'a [f32],
    /// Each leaf's clip time (playback's).
    pub sample_times: &'a [f64],
    /// How LINEAR rotation keys are sampled.
    pub rotation_sampling: RotationBlend,
    /// A debug view replacing the matrices.
    pub debug: DebugPose,
    /// Morph weights replacing the clips'.
    pub morph_override: Option<&'a [f32]>,
    /// A setting changed since the last evaluation: evaluate whatever else.
    pub stale: bool,
    /// The update is due at the character's evaluation rate.
    pub due: bool,
    /// The joints are posed on the GPU: evaluate the morph weights and
    /// record the playback, but sample, blend and accumulate no joint.
    pub gpu_pose: bool,
    /// An animated pose's world matrices and palettes may wait for a pose
    /// batch (see [`Evaluated::AwaitsBatch`]).
    pub batched: bool,
}

/// What `Evaluation::run` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Evaluated {
    /// Nothing changed, or the update was not due: the output stays.
    No,
    /// The pose and its output are new.
    Yes,
    /// The local pose is new; its world matrices and palettes wait for a
    /// pose batch (`batched`, then `finish_batch` or `finish_alone`).
    AwaitsBatch,
}

/// The pose buffers and the last evaluation's results.
#[derive(Debug, Clone)]
pub(super) struct Evaluation {
    /// One per distinct clip the leaves play.
    cursors: ClipCursors,
    /// Final weight of each leaf (state weight times local weight).
    weight: Vec<f32>,
    /// Final weight of each clip in the machine's pose.
    clip_weights: Vec<f32>,
    /// (time, weight) of each leaf at the last evaluation.
    evaluated: Vec<(f64, f32)>,
    /// Each layer's weight at the last evaluation.
    evaluated_layers: Vec<f32>,
    pose: Pose,
    output: PoseOutput,
    /// Root motion of the last update, in model space.
    root_motion: RootMotion,
    /// Each machine leaf's root-motion trail (see [`RootTrail`]); none
    /// without root motion.
    root_trails: Vec<RootTrail>,
    /// The last evaluation's clips with weight, as a GPU pose reads them.
    playback: Vec<PlaybackEntry>,
    /// Whether `pose.locals` holds the local pose after an update; else a
    /// caller's buffer does (see `run`) and it is empty until an update
    /// without one.
    keeps_local_pose: bool,
}

/// What a character keeps after an update besides its palettes and morph
/// weights (everything, unless a crowd that is only drawn says otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Keeps {
    /// Its local pose (see [`Evaluation::run`]).
    pub local_pose: bool,
    /// Every joint's world matrix; else only those that rigidly drawn
    /// meshes and root motion read (see [`PoseOutput::keeping_world`]).
    pub world_matrices: bool,
}

impl Keeps {
    /// Everything.
    pub const ALL: Keeps = Keeps { local_pose: true, world_matrices: true };
}

impl Evaluation {
    /// Names for a prefetch (see [`prefetch`](crate::anim::prefetch)) the
    /// weights every update reads (and compressed clip cursors) into
    /// `every_update`, and into `evaluation` what an evaluation reads
    /// besides: the cursors' keys, pose and output, or with the joints
    /// posed on the GPU the cursors' keys, the morph weights and the
    /// playback recorded. An update that does not
    /// evaluate leaves the latter alone: loading it would only take
    /// bandwidth from the characters that do.
    pub fn blocks(&self, every_update: &mut Blocks, evaluation: &mut Blocks, gpu_pose: bool) {
        every_update.slice(&self.weight);
        every_update.slice(&self.clip_weights);
        every_update.slice(&self.evaluated);
        every_update.slice(&self.evaluated_layers);
        every_update.slice(&self.root_trails);
        // Compressed cursors with what every update reads: loaded before
        // the evaluation's runs, they no longer wait for memory when a
        // sample reads them (7 % of a compressed crowd's time on a Zen 3
        // VM; a few lines for an update that does not evaluate).
        self.cursors.blocks(every_update, evaluation);
        evaluation.slice(&self.pose.morph_weights);
        self.output.blocks(evaluation, gpu_pose);
        match gpu_pose {
            // Last evaluation's entries: where this one writes its own.
            true => evaluation.slice(&self.playback),
            false => evaluation.slice(&self.pose.locals),
        }
    }

    /// The rest pose, nothing evaluated yet, keeping what `keeps` says
    /// (without the local pose: see `run`).
    pub fn new(rig: &Rig, controller: &Controller, keeps: Keeps) -> Self {
        let keeps_local_pose = keeps.local_pose;
        let output = match keeps.world_matrices {
            true => PoseOutput::new(rig),
            false => PoseOutput::keeping_world(rig, controller.world_joints.clone()),
        };
        let leaves = controller.leaves();
        // What every update reads is allocated first, what an evaluation
        // reads after it: each then lies in one run of the heap (see
        // `blocks`).
        Evaluation {
            weight: vec![0.0; leaves.len()],
            clip_weights: vec![0.0; rig.clips.len()],
            evaluated: vec![(f64::NAN, 0.0); leaves.len()],
            evaluated_layers: vec![0.0; controller.layers().len()],
            root_trails: match controller.root_motion {
                Some(_) => vec![RootTrail::default(); controller.machine_leaves().len()],
                None => Vec::new(),
            },
            root_motion: RootMotion::default(),
            cursors: ClipCursors::new(rig, &controller.cursor_slots),
            pose: Pose {
                locals: if keeps_local_pose { rig.skeleton.rest().to_vec() } else { Vec::new() },
                morph_weights: rig.rest_morph_weights.clone(),
            },
            output,
            playback: Vec::with_capacity(leaves.len()),
            keeps_local_pose,
        }
    }

    /// The last evaluation's clips with weight in evaluation order (what a
    /// GPU pose samples), filled when the joints are posed on the GPU.
    pub fn playback(&self) -> &[PlaybackEntry] {
        &self.playback
    }

    /// Final weight of each leaf.
    pub fn leaf_weights(&self) -> &[f32] {
        &self.weight
    }

    /// Each leaf's (sample time, final weight) at the last evaluation:
    /// what produced the pose (a skipped update leaves them as they were).
    pub fn evaluated_leaves(&self) -> &[(f64, f32)] {
        &self.evaluated
    }

    /// Each layer's weight at the last evaluation.
    pub fn evaluated_layer_weights(&self) -> &[f32] {
        &self.evaluated_layers
    }

    /// Final weight of each clip in the machine's pose.
    pub fn clip_weights(&self) -> &[f32] {
        &self.clip_weights
    }

    /// The local pose of the last evaluation (its transforms empty when an
    /// evaluation that does not keep them wrote them into a buffer).
    pub fn pose(&self) -> &Pose {
        &self.pose
    }

    /// World matrices, palettes, morph weights and their version.
    pub fn output(&self) -> &PoseOutput {
        &self.output
    }

    /// Publishes `pose` (an edit of the evaluated one) into the output.
    pub fn publish(&mut self, rig: &Rig, pose: &Pose, debug: DebugPose) -> Result<(), JobError> {
        self.output.update(rig, &pose.locals, &pose.morph_weights, debug).map(|_| ())
    }

    /// The root motion of the last update.
    pub fn root_motion(&self) -> RootMotion {
        self.root_motion
    }

    /// Weighs the clip nodes and, when something changed and the update is
    /// due (or a setting changed), evaluates the pose: sample, blend,
    /// layers, palettes. Skipped, the palettes stay as they are (no new
    /// version, no upload). Whether it evaluated.
    ///
    /// An evaluation that does not keep its local pose writes it into
    /// `buffer` when given (a crowd thread's, read back by its pose batch:
    /// see `batched`), else into its own, which then grows once.
    pub fn run(
        &mut self,
        input: &EvaluationInput,
        buffer: Option<&mut Vec<Transform>>,
    ) -> Result<Evaluated, JobError> {
        let changed = self.weigh(input);
        if !changed || !(input.due || input.stale) {
            // The leaves' times move on; the next due update samples them
            // where playback is then.
            return Ok(Evaluated::No);
        }
        let mut evaluated = Evaluated::Yes;
        let (rig, controller) = (input.rig, input.controller);
        if input.gpu_pose {
            with_scratch(|scratch| self.blend_morph_weights(input, scratch))?;
            if let Some(weights) = input.morph_override {
                self.pose.morph_weights.copy_from_slice(weights);
            }
            self.output.set_morph_weights(&self.pose.morph_weights)?;
        } else {
            // The local pose's buffer, taken out of `self` (no copy) while
            // the rest of `self` is written beside it.
            let mut own = std::mem::take(&mut self.pose.locals);
            let locals = match buffer {
                Some(buffer) if !self.keeps_local_pose => {
                    // Not kept: no stale pose left to read.
                    own.clear();
                    buffer
                }
                _ => &mut own,
            };
            locals.resize(rig.skeleton.len(), Transform::IDENTITY);
            let posed = self.pose_locals(input, locals);
            self.pose.locals = own;
            evaluated = posed?;
        }
        for (evaluated, (&time, &weight)) in
            self.evaluated.iter_mut().zip(input.sample_times.iter().zip(&self.weight))
        {
            *evaluated = (time, weight);
        }
        for (layer, evaluated) in controller.layers().iter().zip(&mut self.evaluated_layers) {
            *evaluated = input.state_weights[layer.state as usize];
        }
        self.playback.clear();
        if input.gpu_pose {
            let machine = controller.machine_states;
            for (leaf, &(time, weight)) in controller.leaves().iter().zip(&self.evaluated) {
                if weight > 0.0 {
                    let state = leaf.state as usize;
                    let layer = if state < machine { 0 } else { (state - machine + 1) as u32 };
                    self.playback.push(PlaybackEntry { clip: leaf.clip, time: time as f32, weight, layer });
                }
            }
        }
        Ok(evaluated)
    }

    /// Samples, blends and layers the local pose into `locals`, takes the
    /// root motion out of it and sets the morph weights, then computes the
    /// output, or leaves it for a batch.
    fn pose_locals(
        &mut self,
        input: &EvaluationInput,
        locals: &mut [Transform],
    ) -> Result<Evaluated, JobError> {
        let rig = input.rig;
        with_scratch(|scratch| self.blend_pose(input, scratch, locals))?;
        if let Some(setup) = &input.controller.root_motion {
            let j = setup.joint as usize;
            root_motion::remove(&mut locals[j], &rig.skeleton.rest()[j]);
        }
        if let Some(weights) = input.morph_override {
            self.pose.morph_weights.copy_from_slice(weights);
        }
        if input.batched && input.debug == DebugPose::Animated {
            return Ok(Evaluated::AwaitsBatch);
        }
        self.output.update(rig, locals, &self.pose.morph_weights, input.debug)?;
        Ok(Evaluated::Yes)
    }

    /// The local pose (its own, or `buffer` where `run` wrote it) and the
    /// matrices a batch writes from it (after `run` gave
    /// [`Evaluated::AwaitsBatch`]).
    pub fn batched<'a>(&'a mut self, buffer: &'a [Transform]) -> BatchedPose<'a> {
        let locals = if self.keeps_local_pose { &self.pose.locals } else { buffer };
        self.output.batched(locals)
    }

    /// Publishes what the batch wrote: `world_changed` as it reported.
    pub fn finish_batch(&mut self, world_changed: bool) -> Result<(), JobError> {
        self.output.finish_batch(world_changed, &self.pose.morph_weights).map(|_| ())
    }

    /// The output of a pose that waited for a batch, computed alone (no
    /// batch took it); `buffer` as for `batched`.
    pub fn finish_alone(&mut self, rig: &Rig, buffer: &[Transform]) -> Result<(), JobError> {
        let locals = if self.keeps_local_pose { &self.pose.locals } else { buffer };
        self.output.update(rig, locals, &self.pose.morph_weights, DebugPose::Animated).map(|_| ())
    }

    /// The morph weights of `blend_pose` without any joint: each layer's
    /// clips' morph tracks sampled and blended by the same jobs (over no
    /// joints), the layers applied by weight.
    fn blend_morph_weights(
        &mut self,
        input: &EvaluationInput,
        scratch: &mut Scratch,
    ) -> Result<(), JobError> {
        let (rig, controller) = (input.rig, input.controller);
        if rig.rest_morph_weights.is_empty() {
            return Ok(());
        }
        let Scratch { blend, layer: layer_pose, .. } = scratch;
        let layer_pose = fit(layer_pose, 0, rig.rest_morph_weights.len());
        let mut leaves = LeafSampling::new(input, &self.weight, &mut self.cursors, blend);
        leaves.blend_morphs(controller.machine_leaves(), &mut self.pose.morph_weights)?;
        for layer in controller.layers() {
            let weight = input.state_weights[layer.state as usize];
            if weight > 0.0 {
                if layer.mode == LayerMode::Override && !layer.morphs {
                    continue;
                }
                let range = controller.all_states()[layer.state as usize].leaves.clone();
                leaves.blend_morphs(range, &mut layer_pose.morph_weights)?;
                LayerJob {
                    mode: layer.mode,
                    layer: &[],
                    layer_morph: &layer_pose.morph_weights,
                    reference: &[],
                    reference_morph: &layer.reference.morph_weights,
                    mask: &[],
                    weight,
                    output: &mut [],
                    morph_output: &mut self.pose.morph_weights,
                }
                .run()?;
            }
        }
        Ok(())
    }

    /// Sets each leaf's final weight and each clip's; whether anything
    /// differs from the last evaluation (or a setting changed).
    fn weigh(&mut self, input: &EvaluationInput) -> bool {
        let controller = input.controller;
        let machine = controller.machine_states;
        self.clip_weights.fill(0.0);
        let mut changed = input.stale;
        for (l, leaf) in controller.leaves().iter().enumerate() {
            let state = leaf.state as usize;
            // A layer's clips are weighted within the layer (its own weight
            // applies when it is laid over the pose).
            let w = if state < machine {
                input.state_weights[state] * input.local_weights[l]
            } else if input.state_weights[state] > 0.0 {
                input.local_weights[l]
            } else {
                0.0
            };
            self.weight[l] = w;
            if state < machine {
                self.clip_weights[leaf.clip as usize] += w;
            }
            let (t, last_w) = self.evaluated[l];
            if w != last_w || (w > 0.0 && t != input.sample_times[l]) {
                changed = true;
            }
        }
        for (layer, evaluated) in controller.layers().iter().zip(&self.evaluated_layers) {
            changed |= input.state_weights[layer.state as usize] != *evaluated;
        }
        changed
    }

    /// The machine's pose, then every layer with weight laid over it.
    fn blend_pose(
        &mut self,
        input: &EvaluationInput,
        scratch: &mut Scratch,
        locals: &mut [Transform],
    ) -> Result<(), JobError> {
        let (rig, controller) = (input.rig, input.controller);
        let Scratch { blend, layer: layer_pose, .. } = scratch;
        let layer_pose = fit(layer_pose, rig.skeleton.len(), rig.rest_morph_weights.len());
        let mut leaves = LeafSampling::new(input, &self.weight, &mut self.cursors, blend);
        let joints = 0..rig.skeleton.len();
        leaves.blend(controller.machine_leaves(), joints, locals, &mut self.pose.morph_weights)?;
        for layer in controller.layers() {
            let weight = input.state_weights[layer.state as usize];
            if weight > 0.0 {
                let range = controller.all_states()[layer.state as usize].leaves.clone();
                // Only the joints its mask reaches are sampled and laid over
                // (the others' weight is 0: the job would leave them as they are).
                let joints = layer.joints();
                leaves.blend(range, joints.clone(), &mut layer_pose.locals, &mut layer_pose.morph_weights)?;
                if layer.mode == LayerMode::Override && !layer.morphs {
                    // Its clips say nothing about morph weights: the
                    // override keeps those below (`out + (out - out) * w`).
                    layer_pose.morph_weights.copy_from_slice(&self.pose.morph_weights);
                }
                LayerJob {
                    mode: layer.mode,
                    layer: &layer_pose.locals[joints.clone()],
                    layer_morph: &layer_pose.morph_weights,
                    reference: &layer.reference.locals[joints.clone()],
                    reference_morph: &layer.reference.morph_weights,
                    mask: &layer.mask[joints.clone()],
                    weight,
                    output: &mut locals[joints],
                    morph_output: &mut self.pose.morph_weights,
                }
                .run()?;
            }
        }
        Ok(())
    }

    /// Sets the root motion to what this update's playback moved the root
    /// by, in model space (the world matrices of the last evaluation place
    /// the root's parent), from each leaf's step; zero without root motion
    /// in the controller. Every update, evaluated or not: the entity moves
    /// every frame.
    pub fn set_root_motion(&mut self, rig: &Rig, controller: &Controller, travel: Travel) {
        self.root_motion = RootMotion::default();
        let Some(setup) = &controller.root_motion else { return };
        let j = setup.joint as usize;
        let rest = &rig.skeleton.rest()[j];
        // Layers play over the pose; they do not move the entity.
        for l in controller.machine_leaves().map(|l| l as usize) {
            let weight = self.weight[l];
            if weight > 0.0 {
                let leaf = &controller.leaves()[l];
                let clip = &rig.clips[leaf.clip as usize];
                let trail = &mut self.root_trails[l];
                let d = setup.leaves[l].displacement(clip, rest, travel.step(l), leaf.looping, trail);
                self.root_motion.add_weighted(&d, weight);
            }
        }
        // From the root's parent's space to model space.
        let parent = rig.skeleton.parents()[j];
        if let Some(m) = self.output.world().get(parent as usize) {
            self.root_motion.translation = m.fixed_view::<3, 3>(0, 0) * self.root_motion.translation;
        }
    }
}

/// Samples and blends ranges of clip nodes (the machine's, a layer's).
struct LeafSampling<'a> {
    rig: &'a Rig,
    leaves: &'a [Leaf],
    weights: &'a [f32],
    times: &'a [f64],
    rotation_blend: RotationBlend,
    cursors: &'a mut ClipCursors,
    poses: &'a mut BlendPoses,
}

impl<'a> LeafSampling<'a> {
    /// The clip nodes of `input`'s controller, weighted by `weights`,
    /// sampled with `cursors` into `poses`.
    fn new(
        input: &EvaluationInput<'a>,
        weights: &'a [f32],
        cursors: &'a mut ClipCursors,
        poses: &'a mut BlendPoses,
    ) -> Self {
        LeafSampling {
            rig: input.rig,
            leaves: input.controller.leaves(),
            weights,
            times: input.sample_times,
            rotation_blend: input.rotation_sampling,
            cursors,
            poses,
        }
    }

    /// `blend` for the morph weights alone (into `out`). A clip without
    /// morph tracks gives the rest weights, so its nodes are not sampled:
    /// they are one layer of the rest weights, theirs summed (the same
    /// blend within f32 rounding; none sampled at all, the rest weights).
    fn blend_morphs(&mut self, range: Range<u32>, out: &mut [f32]) -> Result<(), JobError> {
        self.blend_into(range, Blended::MorphWeights, 0..0, &mut [], out)
    }

    /// Samples the clip nodes `range` that have weight and blends them into
    /// `locals` and `morph_weights`: the rest pose for none, one clip
    /// sampled straight into it (bit for bit what sampling gives: dump and
    /// the conformance suite rely on it), else a weighted blend of the first `MAX_CLIP_NODES` (each
    /// sampled into the thread's scratch). Joints outside `joints` may
    /// keep what they held.
    fn blend(
        &mut self,
        range: Range<u32>,
        joints: Range<usize>,
        locals: &mut [Transform],
        morph_weights: &mut [f32],
    ) -> Result<(), JobError> {
        self.blend_into(range, Blended::Pose, joints, locals, morph_weights)
    }

    /// `blend` of `what` into `locals` (empty for morph weights alone) and
    /// `morph_weights`.
    fn blend_into(
        &mut self,
        range: Range<u32>,
        what: Blended,
        joints: Range<usize>,
        locals: &mut [Transform],
        morph_weights: &mut [f32],
    ) -> Result<(), JobError> {
        let (rig, leaves, weights, times) = (self.rig, self.leaves, self.weights, self.times);
        let rotation_blend = self.rotation_blend;
        let mut sample = |l: usize, locals: &mut [Transform], morphs: &mut [f32]| {
            let clip = leaves[l].clip;
            match what {
                Blended::Pose => {
                    self.cursors.sample(rig, clip, times[l], rotation_blend, joints.clone(), locals, morphs)
                }
                Blended::MorphWeights => self.cursors.sample_morph_weights(rig, clip, times[l], morphs),
            }
        };
        let active =
            (range.start as usize..range.end as usize).filter(|&l| weights[l] > 0.0).take(MAX_CLIP_NODES);
        // Nodes whose clip gives the rest values of what is blended.
        let at_rest = |l: usize| {
            what == Blended::MorphWeights && rig.clips[leaves[l].clip as usize].morph_tracks.is_empty()
        };
        // Those to sample, in order, and the weight of those at rest: one pass.
        let mut sampled = [0u32; MAX_CLIP_NODES];
        let (mut count, mut rest_weight) = (0, 0.0f32);
        for l in active {
            if at_rest(l) {
                rest_weight += weights[l];
            } else {
                sampled[count] = l as u32;
                count += 1;
            }
        }
        let sampled = &sampled[..count];
        match sampled {
            &[l] if rest_weight == 0.0 => return sample(l as usize, locals, morph_weights),
            [] if rest_weight > 0.0 => {
                morph_weights.copy_from_slice(&rig.rest_morph_weights);
                return Ok(());
            }
            _ => {}
        }
        let (len, rest) = match what {
            Blended::Pose => (rig.skeleton.len(), &rig.skeleton.rest()[joints.clone()]),
            Blended::MorphWeights => (0, &[][..]),
        };
        let poses = self.poses.get(count, len, rig.rest_morph_weights.len());
        for (&l, pose) in sampled.iter().zip(poses.iter_mut()) {
            sample(l as usize, &mut pose.locals, &mut pose.morph_weights)?;
        }
        let sampled_layers = sampled.iter().zip(poses.iter()).map(|(&l, pose)| BlendLayer {
            locals: &pose.locals[joints.clone()],
            morph_weights: &pose.morph_weights,
            weight: weights[l as usize],
        });
        // At most `MAX_CLIP_NODES - 1` were sampled when some node is at rest.
        let rest_layer = (rest_weight > 0.0).then(|| BlendLayer {
            locals: &[],
            morph_weights: &rig.rest_morph_weights,
            weight: rest_weight,
        });
        let layers = sampled_layers.chain(rest_layer);
        let blend = |layers: &[BlendLayer]| {
            BlendJob {
                layers,
                rest,
                rest_morph_weights: &rig.rest_morph_weights,
                rotation_blend: RotationBlend::Nlerp,
                output: &mut locals[joints.clone()],
                morph_output: morph_weights,
            }
            .run()
        };
        match count < FEW_LAYERS {
            true => with_layers::<FEW_LAYERS, _>(layers, blend),
            false => with_layers::<MAX_CLIP_NODES, _>(layers, blend),
        }
    }
}

/// Layers a blend of a few clip nodes (as most are) fits, its rest layer
/// included.
const FEW_LAYERS: usize = 8;

/// `blend` of `layers` (at most `N`) gathered in an array of `N`: one of
/// `MAX_CLIP_NODES` layers is 2.5 KB to fill, for blends that mostly
/// take two or three.
fn with_layers<'a, const N: usize, R>(
    layers: impl Iterator<Item = BlendLayer<'a>>,
    blend: impl FnOnce(&[BlendLayer<'a>]) -> R,
) -> R {
    let mut array = [BlendLayer { locals: &[], morph_weights: &[], weight: 0.0 }; N];
    let mut count = 0;
    for (slot, layer) in array.iter_mut().zip(layers) {
        *slot = layer;
        count += 1;
    }
    blend(&array[..count])
}

/// What a blend of clip nodes writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Blended {
    /// Whole poses.
    Pose,
    /// The morph weights alone (the joints are posed on the GPU).
    MorphWeights,
}
