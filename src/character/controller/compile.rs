//! Checking a controller file against a rig: every name resolved to an
//! index, every number finite, every condition typed; the first problem is
//! returned as a [`ControllerError`] naming the element. Reads the rig,
//! never changes it; allocates freely (this runs once per controller).

use super::condition;
use super::error::{
    ControllerError, LayerProblem, MotionError, ParameterProblem, ParameterRefError, StateProblem,
    TransitionProblem, UnknownClip,
};
use super::file::{
    BlendInputDef, BlendPointDef, ControllerFile, LayerBlendingDef, LayerDef, LayerTriggerDef, MaskDef,
    MotionDef, ParameterDef, TransitionDef, WeightDef,
};
use super::{
    Controller, Layer, LayerReference, LayerTrigger, Leaf, MAX_CLIP_NODES, MAX_DEPTH, MAX_EXIT_TIME,
    MAX_POINT_POSITION, MAX_SECONDS, MAX_SPEED, Node, Parameter, ParameterId, ParameterKind, RootMotionSetup,
    SpaceInput, State, SyncGroup, Transition, Weight, mask_joints,
};
use crate::anim::Rig;
use crate::anim::{LayerMode, NO_PARENT, Pose, RotationBlend, SampleJob, SamplingCursor};
use crate::character::clip_cursors::ClipCursors;
use crate::character::root_motion::ClipRootMotion;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Name of the any-state source in `TransitionDef::from`.
const ANY_STATE: &str = "*";

/// A parameter's index and kind by name.
type Lookup<'a> = &'a dyn Fn(&str) -> Option<(u32, ParameterKind)>;

/// Compiles `file`; `find_clip` resolves a clip key to a rig clip index.
/// In file order: parameters, states, `initial`, transitions, layers,
/// root motion. Linear in the file's counts: every name is resolved
/// through a hash map, never by a search inside a loop.
pub(super) fn compile(
    file: &ControllerFile,
    rig: &Rig,
    find_clip: &dyn Fn(&str) -> Option<usize>,
) -> Result<Controller, ControllerError> {
    let parameters = parameters(file)?;
    // Names borrowed from the file: `parameters` moves into the controller.
    let by_name: HashMap<&str, (u32, ParameterKind)> = file
        .parameters
        .iter()
        .zip(&parameters)
        .enumerate()
        .map(|(i, (def, p))| (def.name(), (i as u32, p.kind)))
        .collect();
    let lookup = |name: &str| by_name.get(name).copied();
    let mut builder = Builder {
        rig,
        find_clip,
        lookup: &lookup,
        nodes: Vec::new(),
        leaves: Vec::new(),
        groups: Vec::new(),
        inputs: Vec::new(),
    };
    let (mut states, state_names) = machine_states(file, &mut builder)?;
    let initial = match &file.initial {
        Some(name) => {
            Some(*state_names.get(name.as_str()).ok_or_else(|| ControllerError::Initial(name.clone()))?)
        }
        None => (!states.is_empty()).then_some(0),
    };
    let transitions = file
        .transitions
        .iter()
        .enumerate()
        .map(|(t, def)| {
            transition(def, &state_names, &lookup).map_err(|problem| transition_error(t, def, problem))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (outgoing, any_state) = best_first(&transitions, states.len());
    let machine_states = states.len();
    let layers = layers(file, &mut builder, &mut states, state_names)?;
    let Builder { nodes, leaves, groups, inputs, .. } = builder;
    let root_motion = root_motion(file, rig, &leaves)?;
    let cursor_slots = ClipCursors::slots(leaves.iter().map(|l| l.clip), rig.clips.len());
    let world_joints = world_joints(rig, root_motion.as_ref());
    Ok(Controller {
        parameters,
        states,
        nodes,
        leaves,
        groups,
        inputs,
        transitions,
        outgoing,
        any_state,
        initial,
        machine_states,
        layers,
        root_motion,
        cursor_slots,
        world_joints,
    })
}

/// The joints whose world matrices a character keeps when it keeps few
/// (see `PoseOutput::keeping_world`), ascending: those that place rigidly
/// drawn meshes, and the root-motion joint's parent (root motion turns
/// into model space by it).
fn world_joints(rig: &Rig, root_motion: Option<&RootMotionSetup>) -> Arc<[u32]> {
    let mut joints = rig.rigid_joints();
    let parents = rig.skeleton.parents();
    let parent = root_motion.and_then(|setup| parents.get(setup.joint as usize));
    joints.extend(parent.filter(|&&p| p != NO_PARENT));
    joints.sort_unstable();
    joints.dedup();
    joints.into()
}

/// The parameters, checked: names valid and distinct, float defaults and
/// slider ranges finite, defaults inside their ranges.
fn parameters(file: &ControllerFile) -> Result<Vec<Parameter>, ControllerError> {
    let mut out: Vec<Parameter> = Vec::with_capacity(file.parameters.len());
    let mut seen = HashSet::with_capacity(file.parameters.len());
    for (index, def) in file.parameters.iter().enumerate() {
        let name = def.name();
        let checked = if !valid_name(name) {
            Err(ParameterProblem::Name)
        } else if !seen.insert(name) {
            Err(ParameterProblem::Duplicate)
        } else {
            parameter(def)
        };
        out.push(checked.map_err(|problem| ControllerError::Parameter {
            index,
            name: name.into(),
            problem,
        })?);
    }
    Ok(out)
}

/// Letters, digits, `_`, `.` and `-`, not empty.
fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// One parameter's value checks (its name is checked by the caller).
fn parameter(def: &ParameterDef) -> Result<Parameter, ParameterProblem> {
    let name = def.name();
    Ok(match def {
        ParameterDef::Float { default, min, max, .. } => {
            if !default.is_finite() {
                return Err(ParameterProblem::Default(*default));
            }
            let range = match (min, max) {
                (None, None) => None,
                (lo, hi) => {
                    let (lo, hi) = (lo.unwrap_or(default.min(0.0)), hi.unwrap_or(default.max(1.0)));
                    if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                        return Err(ParameterProblem::Range { min: lo, max: hi });
                    }
                    if !(lo..=hi).contains(default) {
                        return Err(ParameterProblem::DefaultOutside { default: *default, min: lo, max: hi });
                    }
                    Some((lo, hi))
                }
            };
            Parameter { name: name.into(), kind: ParameterKind::Float, default: *default, range }
        }
        ParameterDef::Bool { default, .. } => Parameter {
            name: name.into(),
            kind: ParameterKind::Bool,
            default: f32::from(u8::from(*default)),
            range: None,
        },
        ParameterDef::Trigger { .. } => {
            Parameter { name: name.into(), kind: ParameterKind::Trigger, default: 0.0, range: None }
        }
    })
}

/// A state's index by name (names borrowed from the file).
type StateNames<'a> = HashMap<&'a str, u32>;

/// The state machine's states, in file order: names distinct and not `*`,
/// blend trees built; with each one's index by name.
fn machine_states<'f>(
    file: &'f ControllerFile,
    builder: &mut Builder,
) -> Result<(Vec<State>, StateNames<'f>), ControllerError> {
    let mut states: Vec<State> = Vec::with_capacity(file.states.len() + file.layers.len());
    let mut names = HashMap::with_capacity(file.states.len());
    for (index, def) in file.states.iter().enumerate() {
        let error = |problem| ControllerError::State { index, name: def.name.clone(), problem };
        if def.name.is_empty() || def.name == ANY_STATE {
            return Err(error(StateProblem::Name));
        }
        if names.insert(def.name.as_str(), index as u32).is_some() {
            return Err(error(StateProblem::Duplicate));
        }
        let state = builder.state(&def.name, &def.motion, index as u32);
        states.push(state.map_err(|e| error(StateProblem::Motion(e)))?);
    }
    Ok((states, names))
}

/// Transition `index` (`def`) refused for `problem`.
fn transition_error(index: usize, def: &TransitionDef, problem: TransitionProblem) -> ControllerError {
    ControllerError::Transition { index, from: def.from.clone(), to: def.to.clone(), problem }
}

/// One transition: its states resolved, its conditions parsed, its times checked.
fn transition(
    def: &TransitionDef,
    states: &StateNames,
    lookup: Lookup,
) -> Result<Transition, TransitionProblem> {
    let find = |name: &str| states.get(name).copied().ok_or_else(|| TransitionProblem::NoState(name.into()));
    let from = if def.from == ANY_STATE { None } else { Some(find(&def.from)?) };
    let to = find(&def.to)?;
    if from == Some(to) {
        return Err(TransitionProblem::ToItself);
    }
    let conditions = def
        .when
        .iter()
        .map(|text| {
            condition::parse(text, lookup)
                .map_err(|e| TransitionProblem::Condition { text: text.clone(), source: Box::new(e) })
        })
        .collect::<Result<Vec<_>, _>>()?;
    // `contains` is false for NaN.
    if let Some(e) = def.exit_time.filter(|e| !(0.0..=MAX_EXIT_TIME).contains(e)) {
        return Err(TransitionProblem::ExitTime(e));
    }
    if !(0.0..=MAX_SECONDS).contains(&def.duration) {
        return Err(TransitionProblem::Duration(def.duration));
    }
    Ok(Transition {
        from,
        to,
        conditions,
        exit_time: def.exit_time,
        duration: def.duration,
        curve: def.curve,
        priority: def.priority,
    })
}

/// The transitions out of each of the `states` states, then the any-state
/// ones, each list best first: higher priority, then file order (a stable
/// sort keeps it). One pass over the transitions.
fn best_first(transitions: &[Transition], states: usize) -> (Vec<Vec<u32>>, Vec<u32>) {
    let mut outgoing = vec![Vec::new(); states];
    let mut any_state = Vec::new();
    for (t, transition) in transitions.iter().enumerate() {
        match transition.from {
            Some(s) => outgoing[s as usize].push(t as u32),
            None => any_state.push(t as u32),
        }
    }
    let by_priority =
        |list: &mut Vec<u32>| list.sort_by_key(|&t| std::cmp::Reverse(transitions[t as usize].priority));
    outgoing.iter_mut().for_each(by_priority);
    by_priority(&mut any_state);
    (outgoing, any_state)
}

/// The layers, each with its motion added to `states` after the machine's.
fn layers<'f>(
    file: &'f ControllerFile,
    builder: &mut Builder,
    states: &mut Vec<State>,
    mut names: StateNames<'f>,
) -> Result<Vec<Layer>, ControllerError> {
    let mut layers = Vec::with_capacity(file.layers.len());
    for (index, def) in file.layers.iter().enumerate() {
        let error = |problem| ControllerError::Layer { index, name: def.name.clone(), problem };
        if def.name.is_empty() || names.insert(def.name.as_str(), states.len() as u32).is_some() {
            return Err(error(LayerProblem::Name));
        }
        let state = states.len() as u32;
        states
            .push(builder.state(&def.name, &def.motion, state).map_err(|e| error(LayerProblem::Motion(e)))?);
        let leaves = states[state as usize].leaves.clone();
        let first_clip = builder.leaves[leaves.start as usize].clip as usize;
        let mut layer = layer(def, state, first_clip, builder).map_err(error)?;
        let rig = builder.rig;
        layer.morphs = builder.leaves[leaves.start as usize..leaves.end as usize]
            .iter()
            .any(|l| !rig.clips[l.clip as usize].morph_tracks.is_empty());
        if let Some(trigger) = &def.trigger {
            let leaves = &builder.leaves[leaves.start as usize..leaves.end as usize];
            layer.trigger = Some(layer_trigger(trigger, leaves, builder).map_err(error)?);
        }
        layers.push(layer);
    }
    Ok(layers)
}

/// A layer's weight, mask and reference pose.
fn layer(def: &LayerDef, state: u32, first_clip: usize, builder: &Builder) -> Result<Layer, LayerProblem> {
    let weight = match &def.weight {
        WeightDef::Value(v) if (0.0..=1.0).contains(v) => Weight::Value(*v),
        WeightDef::Value(v) => return Err(LayerProblem::Weight(*v)),
        WeightDef::Parameter(name) => {
            Weight::Parameter(builder.float(name).map_err(LayerProblem::WeightParameter)?)
        }
    };
    let mask = layer_mask(&def.mask, builder.rig)?;
    let (mode, reference, reference_source) = reference_pose(def, first_clip, builder)?;
    Ok(Layer {
        name: def.name.clone(),
        state,
        mode,
        weight,
        joints: mask_joints(&mask),
        mask,
        reference,
        reference_source,
        trigger: None,
        morphs: false,
    })
}

/// A triggered layer's trigger parameter and fades, and how long one run
/// lasts: its longest clip at its speed. Its clips must play once (a
/// looping clip would never end the run) and last longer than 0 s.
fn layer_trigger(
    def: &LayerTriggerDef,
    leaves: &[Leaf],
    builder: &Builder,
) -> Result<LayerTrigger, LayerProblem> {
    let parameter = match (builder.lookup)(&def.parameter) {
        Some((p, ParameterKind::Trigger)) => ParameterId(p),
        Some((_, kind)) => return Err(LayerProblem::NotATrigger { name: def.parameter.clone(), kind }),
        None => return Err(LayerProblem::TriggerParameter(def.parameter.clone())),
    };
    for (what, seconds) in [("fade_in", def.fade_in), ("fade_out", def.fade_out)] {
        // `contains` is false for NaN.
        if !(0.0..=MAX_SECONDS).contains(&seconds) {
            return Err(LayerProblem::TriggerFade { what, seconds });
        }
    }
    if let Some(l) = leaves.iter().find(|l| l.looping) {
        return Err(LayerProblem::TriggerLooping(builder.rig.clip_name(l.clip as usize).to_string()));
    }
    let length = leaves
        .iter()
        .map(|l| f64::from(builder.rig.clips[l.clip as usize].duration) / f64::from(l.speed))
        .fold(0.0f64, f64::max) as f32;
    if !(length > 0.0 && length.is_finite()) {
        return Err(LayerProblem::TriggerLength);
    }
    Ok(LayerTrigger { parameter, fade_in: def.fade_in, fade_out: def.fade_out, length })
}

/// Each joint's weight under a layer's mask entries: every joint at 1
/// without a mask, else unlisted joints at 0 and later entries winning.
/// Linear in entries plus joints: a joint takes the weight of the last
/// entry naming it or (with `children`) one of its ancestors.
fn layer_mask(entries: &[MaskDef], rig: &Rig) -> Result<Vec<f32>, LayerProblem> {
    let joints = rig.skeleton.len();
    if entries.is_empty() {
        return Ok(vec![1.0; joints]);
    }
    let parents = rig.skeleton.parents();
    // The first joint of each name, as `Skeleton::find` gives it.
    let mut by_name = HashMap::with_capacity(joints);
    for (j, name) in rig.skeleton.names().iter().enumerate() {
        by_name.entry(name.as_str()).or_insert(j);
    }
    // Per joint, the last entry naming it (`own`) and the last naming it
    // with its children (`subtree`).
    let (mut own, mut subtree) = (vec![None; joints], vec![None; joints]);
    for (entry, def) in entries.iter().enumerate() {
        let joint = *by_name
            .get(def.joint.as_str())
            .ok_or_else(|| LayerProblem::MaskJoint { entry, joint: def.joint.clone() })?;
        if !(0.0..=1.0).contains(&def.weight) {
            return Err(LayerProblem::MaskWeight { entry, weight: def.weight });
        }
        own[joint] = Some(entry);
        if def.children {
            subtree[joint] = Some(entry);
        }
    }
    // Parents come before children: one pass hands each subtree entry down.
    for j in 0..joints {
        if parents[j] != NO_PARENT {
            subtree[j] = subtree[j].max(subtree[parents[j] as usize]);
        }
    }
    Ok((0..joints).map(|j| own[j].max(subtree[j]).map_or(0.0, |e| entries[e].weight)).collect())
}

/// A layer's mode and the pose an additive layer's difference is taken
/// from (sampled here, once).
fn reference_pose(
    def: &LayerDef,
    first_clip: usize,
    builder: &Builder,
) -> Result<(LayerMode, Pose, LayerReference), LayerProblem> {
    let rig = builder.rig;
    let (mode, reference_clip, time) = match (def.blending, &def.reference) {
        (LayerBlendingDef::Override, None) => (LayerMode::Override, first_clip, 0.0),
        (LayerBlendingDef::Override, Some(_)) => return Err(LayerProblem::ReferenceOnOverride),
        (LayerBlendingDef::Additive, None) => {
            (LayerMode::Additive, first_clip, rig.clips[first_clip].start())
        }
        (LayerBlendingDef::Additive, Some(r)) => {
            let clip = (builder.find_clip)(&r.clip)
                .ok_or_else(|| LayerProblem::ReferenceClip(builder.unknown_clip(&r.clip)))?;
            if !(-MAX_SECONDS..=MAX_SECONDS).contains(&r.time) {
                return Err(LayerProblem::ReferenceTime(r.time));
            }
            (LayerMode::Additive, clip, r.time)
        }
    };
    let mut reference = Pose::new(rig.skeleton.len(), rig.rest_morph_weights.len());
    let clip = &rig.clips[reference_clip];
    SampleJob {
        clip,
        time: f64::from(time),
        rest: rig.skeleton.rest(),
        rest_morph_weights: &rig.rest_morph_weights,
        rotation_blend: RotationBlend::Slerp,
        cursor: &mut SamplingCursor::new(clip),
        output: &mut reference.locals,
        morph_output: &mut reference.morph_weights,
    }
    .run()
    .map_err(LayerProblem::Reference)?;
    let source = LayerReference { clip: reference_clip as u32, time };
    Ok((mode, reference, source))
}

/// The root-motion joint and each clip node's root track (`None` when the
/// file takes no root motion out).
fn root_motion(
    file: &ControllerFile,
    rig: &Rig,
    leaves: &[Leaf],
) -> Result<Option<RootMotionSetup>, ControllerError> {
    let Some(name) = &file.root_motion else { return Ok(None) };
    let joint = rig.skeleton.find(name).ok_or_else(|| ControllerError::RootMotionJoint(name.clone()))?;
    let rest = &rig.skeleton.rest()[joint];
    let per_leaf =
        leaves.iter().map(|l| ClipRootMotion::new(&rig.clips[l.clip as usize], joint as u32, rest));
    Ok(Some(RootMotionSetup { joint: joint as u32, leaves: per_leaf.collect() }))
}

/// Where a blend-tree node sits.
#[derive(Debug, Clone, Copy)]
struct Place {
    /// The state (or layer motion) whose tree it is in.
    state: u32,
    /// The sync group of a synced ancestor (the outermost one wins).
    group: Option<u32>,
    /// Nesting depth (0 at the root).
    depth: usize,
}

/// Builds blend trees into flat node, leaf, sync-group and input lists.
struct Builder<'a> {
    rig: &'a Rig,
    find_clip: &'a dyn Fn(&str) -> Option<usize>,
    lookup: Lookup<'a>,
    nodes: Vec<Node>,
    leaves: Vec<Leaf>,
    groups: Vec<SyncGroup>,
    inputs: Vec<SpaceInput>,
}

impl Builder<'_> {
    /// Adds the blend tree of state (or layer) number `index`; its leaves,
    /// sync groups and inputs are the ranges added meanwhile.
    fn state(&mut self, name: &str, motion: &MotionDef, index: u32) -> Result<State, MotionError> {
        let (leaves_start, groups_start) = (self.leaves.len() as u32, self.groups.len() as u32);
        let inputs_start = self.inputs.len() as u32;
        let root = self.motion(motion, Place { state: index, group: None, depth: 0 })?;
        Ok(State {
            name: name.to_string(),
            root,
            leaves: leaves_start..self.leaves.len() as u32,
            groups: groups_start..self.groups.len() as u32,
            inputs: inputs_start..self.inputs.len() as u32,
        })
    }

    /// Adds `def` and its children; leaves get consecutive indices, so a
    /// node's leaves (and a sync group) are one range.
    fn motion(&mut self, def: &MotionDef, at: Place) -> Result<u32, MotionError> {
        if at.depth >= MAX_DEPTH {
            return Err(MotionError::TooDeep);
        }
        let node = match def {
            MotionDef::Clip { clip, looping, speed } => self.clip(clip, *looping, *speed, at)?,
            MotionDef::Blend { inputs, sync } => self.blend(inputs, *sync, at)?,
            MotionDef::BlendSpace1D { parameter, points, sync, smoothing } => {
                self.space(parameter, points, *sync, *smoothing, at)?
            }
        };
        self.nodes.push(node);
        Ok(self.nodes.len() as u32 - 1)
    }

    /// A blend node: each input's weight resolved and its motion added.
    fn blend(&mut self, inputs: &[BlendInputDef], sync: bool, at: Place) -> Result<Node, MotionError> {
        if inputs.is_empty() {
            return Err(MotionError::EmptyBlend);
        }
        let (below, opened) = self.open_group(at, sync);
        let mut resolved = Vec::with_capacity(inputs.len());
        for (input, def) in inputs.iter().enumerate() {
            let weight = match &def.weight {
                WeightDef::Value(v) if v.is_finite() && *v >= 0.0 => Weight::Value(*v),
                WeightDef::Value(v) => return Err(MotionError::InputWeight { input, weight: *v }),
                WeightDef::Parameter(name) => Weight::Parameter(
                    self.float(name).map_err(|source| MotionError::InputParameter { input, source })?,
                ),
            };
            let child = self
                .motion(&def.motion, below)
                .map_err(|e| MotionError::Input { input, source: Box::new(e) })?;
            resolved.push((child, weight));
        }
        self.close_group(opened);
        Ok(Node::Blend { inputs: resolved })
    }

    /// A 1D blend space: its parameter and smoothing checked, its points
    /// distinct and finite, added and sorted by position.
    fn space(
        &mut self,
        parameter: &str,
        points: &[BlendPointDef],
        sync: bool,
        smoothing: f32,
        at: Place,
    ) -> Result<Node, MotionError> {
        let parameter = self.float(parameter).map_err(MotionError::SpaceParameter)?;
        if points.is_empty() {
            return Err(MotionError::EmptySpace);
        }
        if !(0.0..=MAX_SECONDS).contains(&smoothing) {
            return Err(MotionError::Smoothing(smoothing));
        }
        self.inputs.push(SpaceInput { parameter, smoothing });
        let input = self.inputs.len() as u32 - 1;
        let (below, opened) = self.open_group(at, sync);
        let mut resolved = Vec::with_capacity(points.len());
        for (point, def) in points.iter().enumerate() {
            // Within a bound, so neighbours' distances stay finite and the
            // blend between them a number (`contains` is false for NaN).
            if !(-MAX_POINT_POSITION..=MAX_POINT_POSITION).contains(&def.at) {
                return Err(MotionError::PointPosition { point, at: def.at });
            }
            if resolved.iter().any(|&(at, _)| at == def.at) {
                return Err(MotionError::DuplicatePoint { point, at: def.at });
            }
            let child = self
                .motion(&def.motion, below)
                .map_err(|e| MotionError::Point { point, source: Box::new(e) })?;
            resolved.push((def.at, child));
        }
        self.close_group(opened);
        resolved.sort_by(|a, b| a.0.total_cmp(&b.0));
        Ok(Node::Space { input, points: resolved })
    }

    /// A clip node: its clip found, its speed checked, its leaf added.
    fn clip(&mut self, clip: &str, looping: bool, speed: f32, at: Place) -> Result<Node, MotionError> {
        let index = (self.find_clip)(clip).ok_or_else(|| self.unknown_clip(clip))?;
        if !(speed > 0.0 && speed <= MAX_SPEED) {
            return Err(MotionError::Speed { clip: clip.into(), speed });
        }
        if self.leaves.len() >= MAX_CLIP_NODES {
            return Err(MotionError::TooManyClipNodes);
        }
        self.leaves.push(Leaf { clip: index as u32, looping, speed, state: at.state, group: at.group });
        Ok(Node::Clip { leaf: self.leaves.len() as u32 - 1 })
    }

    /// The float parameter called `name`.
    fn float(&self, name: &str) -> Result<u32, ParameterRefError> {
        match (self.lookup)(name) {
            Some((p, ParameterKind::Float)) => Ok(p),
            Some((_, kind)) => Err(ParameterRefError::NotFloat { name: name.into(), kind }),
            None => Err(ParameterRefError::Unknown(name.into())),
        }
    }

    /// Where the children of a node at `at` sit: one level deeper, in a new
    /// sync group when the node is synced and has no synced ancestor (then
    /// `true`: the caller closes it after the children).
    fn open_group(&mut self, at: Place, sync: bool) -> (Place, bool) {
        let below = Place { depth: at.depth + 1, ..at };
        match (at.group, sync) {
            (None, true) => {
                let start = self.leaves.len() as u32;
                self.groups.push(SyncGroup { leaves: start..start });
                (Place { group: Some(self.groups.len() as u32 - 1), ..below }, true)
            }
            _ => (below, false),
        }
    }

    fn close_group(&mut self, opened: bool) {
        if opened && let Some(g) = self.groups.last_mut() {
            g.leaves.end = self.leaves.len() as u32;
        }
    }

    fn unknown_clip(&self, key: &str) -> UnknownClip {
        let clips = (0..self.rig.clips.len()).map(|c| self.rig.clip_name(c).to_string()).collect();
        UnknownClip { key: key.into(), clips }
    }
}
