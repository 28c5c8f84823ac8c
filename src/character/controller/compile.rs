//! Checking a controller file against a rig: every name resolved to an
//! index, every number finite, every condition typed; the first problem is
//! returned as one line naming the element.

use super::condition;
use super::file::{ControllerFile, LayerBlendingDef, LayerDef, MotionDef, ParameterDef, WeightDef};
use super::{
    Controller, Layer, Leaf, MAX_CLIP_NODES, MAX_DEPTH, Node, Parameter, ParameterKind, RootMotionSetup,
    SpaceInput, State, SyncGroup, Transition, Weight,
};
use crate::anim::Rig;
use crate::anim::{LayerMode, NO_PARENT, Pose, RotationBlend, SampleJob, SamplingCursor};
use crate::character::root_motion::ClipRootMotion;

/// Name of the any-state source in `TransitionDef::from`.
const ANY_STATE: &str = "*";

/// Compiles `file`; `find_clip` resolves a clip key to a rig clip index.
pub(super) fn compile(
    file: &ControllerFile,
    rig: &Rig,
    find_clip: &dyn Fn(&str) -> Option<usize>,
) -> Result<Controller, String> {
    let parameters = parameters(file)?;
    let lookup =
        |name: &str| parameters.iter().position(|p| p.name == name).map(|i| (i as u32, parameters[i].kind));
    let mut builder = Builder {
        rig,
        find_clip,
        lookup: &lookup,
        nodes: Vec::new(),
        leaves: Vec::new(),
        groups: Vec::new(),
        inputs: Vec::new(),
    };
    let mut states: Vec<State> = Vec::with_capacity(file.states.len());
    for (s, def) in file.states.iter().enumerate() {
        let what = format!("state {s} \"{}\"", def.name);
        if def.name.is_empty() || def.name == ANY_STATE {
            return Err(format!("{what}: a state needs a name other than \"\" and \"{ANY_STATE}\""));
        }
        if states.iter().any(|other| other.name == def.name) {
            return Err(format!("{what}: a second state with this name"));
        }
        states.push(builder.state(&def.name, &def.motion, s as u32).map_err(|e| format!("{what}: {e}"))?);
    }
    let state_index = |name: &str| states.iter().position(|s| s.name == name).map(|i| i as u32);
    let initial = match &file.initial {
        Some(name) => Some(state_index(name).ok_or_else(|| format!("initial: no state \"{name}\""))?),
        None => (!states.is_empty()).then_some(0),
    };
    let mut transitions = Vec::with_capacity(file.transitions.len());
    for (t, def) in file.transitions.iter().enumerate() {
        let what = format!("transition {t} (\"{}\" -> \"{}\")", def.from, def.to);
        let from = if def.from == ANY_STATE {
            None
        } else {
            Some(state_index(&def.from).ok_or_else(|| format!("{what}: no state \"{}\"", def.from))?)
        };
        let to = state_index(&def.to).ok_or_else(|| format!("{what}: no state \"{}\"", def.to))?;
        if from == Some(to) {
            return Err(format!("{what}: a transition from a state to itself"));
        }
        let mut conditions = Vec::with_capacity(def.when.len());
        for text in &def.when {
            conditions
                .push(condition::parse(text, &lookup).map_err(|e| format!("{what}: when \"{text}\": {e}"))?);
        }
        if let Some(e) = def.exit_time.filter(|e| !(e.is_finite() && *e >= 0.0)) {
            return Err(format!("{what}: exit_time {e} is not a finite number >= 0"));
        }
        if !(def.duration.is_finite() && def.duration >= 0.0) {
            return Err(format!("{what}: duration {} is not a finite number of seconds >= 0", def.duration));
        }
        transitions.push(Transition {
            from,
            to,
            conditions,
            exit_time: def.exit_time,
            duration: def.duration,
            curve: def.curve,
            priority: def.priority,
        });
    }
    // Best first: higher priority, then file order (a stable sort keeps it).
    let ordered = |from: Option<u32>| {
        let mut list: Vec<u32> =
            (0..transitions.len() as u32).filter(|&t| transitions[t as usize].from == from).collect();
        list.sort_by_key(|&t| std::cmp::Reverse(transitions[t as usize].priority));
        list
    };
    let outgoing = (0..states.len() as u32).map(|s| ordered(Some(s))).collect();
    let any_state = ordered(None);
    let machine_states = states.len();
    let mut layers = Vec::with_capacity(file.layers.len());
    for (k, def) in file.layers.iter().enumerate() {
        let what = format!("layer {k} \"{}\"", def.name);
        if def.name.is_empty() || states.iter().any(|other| other.name == def.name) {
            return Err(format!("{what}: a layer needs a name no state or other layer has"));
        }
        let state = states.len() as u32;
        states.push(builder.state(&def.name, &def.motion, state).map_err(|e| format!("{what}: {e}"))?);
        let first_clip = builder.leaves[states[state as usize].leaves.start as usize].clip as usize;
        layers.push(layer(def, state, first_clip, rig, &builder).map_err(|e| format!("{what}: {e}"))?);
    }
    let Builder { nodes, leaves, groups, inputs, .. } = builder;
    let root_motion = match &file.root_motion {
        None => None,
        Some(name) => {
            let joint = rig.skeleton.find(name).ok_or_else(|| format!("root_motion: no joint \"{name}\""))?;
            let rest = &rig.skeleton.rest()[joint];
            let per_leaf =
                leaves.iter().map(|l| ClipRootMotion::new(&rig.clips[l.clip as usize], joint as u32, rest));
            Some(RootMotionSetup { joint: joint as u32, leaves: per_leaf.collect() })
        }
    };
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
    })
}

/// A layer's weight, mask and reference pose.
fn layer(
    def: &LayerDef,
    state: u32,
    first_clip: usize,
    rig: &Rig,
    builder: &Builder,
) -> Result<Layer, String> {
    let weight = match &def.weight {
        WeightDef::Value(v) if (0.0..=1.0).contains(v) => Weight::Value(*v),
        WeightDef::Value(v) => return Err(format!("weight {v} is not in [0, 1]")),
        WeightDef::Parameter(name) => match (builder.lookup)(name) {
            Some((p, ParameterKind::Float)) => Weight::Parameter(p),
            Some((_, kind)) => {
                return Err(format!("weight: parameter \"{name}\" is a {}, not a float", kind.name()));
            }
            None => return Err(format!("weight: unknown parameter \"{name}\"")),
        },
    };
    let joints = rig.skeleton.len();
    let parents = rig.skeleton.parents();
    let mut mask = vec![if def.mask.is_empty() { 1.0 } else { 0.0 }; joints];
    for (i, entry) in def.mask.iter().enumerate() {
        let joint = rig
            .skeleton
            .find(&entry.joint)
            .ok_or_else(|| format!("mask {i}: no joint \"{}\"", entry.joint))?;
        if !(0.0..=1.0).contains(&entry.weight) {
            return Err(format!("mask {i}: weight {} is not in [0, 1]", entry.weight));
        }
        // Parents come before children: one pass finds the subtree.
        let mut below = vec![false; joints];
        below[joint] = true;
        for j in joint + 1..joints {
            below[j] = entry.children && parents[j] != NO_PARENT && below[parents[j] as usize];
        }
        for (m, _) in mask.iter_mut().zip(&below).filter(|(_, b)| **b) {
            *m = entry.weight;
        }
    }
    let (mode, reference_clip, time) = match (def.blending, &def.reference) {
        (LayerBlendingDef::Override, None) => (LayerMode::Override, first_clip, 0.0),
        (LayerBlendingDef::Override, Some(_)) => {
            return Err("reference: only additive layers take one".into());
        }
        (LayerBlendingDef::Additive, None) => {
            (LayerMode::Additive, first_clip, rig.clips[first_clip].start())
        }
        (LayerBlendingDef::Additive, Some(r)) => {
            let clip = (builder.find_clip)(&r.clip)
                .ok_or_else(|| format!("reference: {}", builder.unknown_clip(&r.clip)))?;
            if !r.time.is_finite() {
                return Err(format!("reference: time {} is not finite", r.time));
            }
            (LayerMode::Additive, clip, r.time)
        }
    };
    let mut reference = Pose::new(joints, rig.rest_morph_weights.len());
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
    .map_err(|e| format!("reference: {e}"))?;
    Ok(Layer { name: def.name.clone(), state, mode, weight, mask, reference })
}

fn parameters(file: &ControllerFile) -> Result<Vec<Parameter>, String> {
    let mut out: Vec<Parameter> = Vec::with_capacity(file.parameters.len());
    for (i, def) in file.parameters.iter().enumerate() {
        let name = def.name();
        let what = format!("parameter {i} \"{name}\"");
        let valid =
            !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if !valid {
            return Err(format!("{what}: names use letters, digits, '_', '.' and '-'"));
        }
        if out.iter().any(|p| p.name == name) {
            return Err(format!("{what}: a second parameter with this name"));
        }
        let parameter = match def {
            ParameterDef::Float { default, min, max, .. } => {
                if !default.is_finite() {
                    return Err(format!("{what}: default {default} is not finite"));
                }
                let range = match (min, max) {
                    (None, None) => None,
                    (lo, hi) => {
                        let (lo, hi) = (lo.unwrap_or(default.min(0.0)), hi.unwrap_or(default.max(1.0)));
                        if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                            return Err(format!("{what}: min {lo} and max {hi} do not make a range"));
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
        };
        out.push(parameter);
    }
    Ok(out)
}

struct Builder<'a> {
    rig: &'a Rig,
    find_clip: &'a dyn Fn(&str) -> Option<usize>,
    lookup: &'a dyn Fn(&str) -> Option<(u32, ParameterKind)>,
    nodes: Vec<Node>,
    leaves: Vec<Leaf>,
    groups: Vec<SyncGroup>,
    inputs: Vec<SpaceInput>,
}

impl Builder<'_> {
    /// Adds the blend tree of state (or layer) number `index`; its leaves,
    /// sync groups and inputs are the ranges added meanwhile.
    fn state(&mut self, name: &str, motion: &MotionDef, index: u32) -> Result<State, String> {
        let (leaves_start, groups_start) = (self.leaves.len() as u32, self.groups.len() as u32);
        let inputs_start = self.inputs.len() as u32;
        let root = self.motion(motion, index, None, 0).map_err(|e| format!("motion: {e}"))?;
        Ok(State {
            name: name.to_string(),
            root,
            leaves: leaves_start..self.leaves.len() as u32,
            groups: groups_start..self.groups.len() as u32,
            inputs: inputs_start..self.inputs.len() as u32,
        })
    }

    /// Adds `def` and its children; leaves get consecutive indices, so a
    /// node's leaves (and a sync group) are one range. `group` is the sync
    /// group of a synced ancestor (the outermost one wins).
    fn motion(
        &mut self,
        def: &MotionDef,
        state: u32,
        group: Option<u32>,
        depth: usize,
    ) -> Result<u32, String> {
        if depth >= MAX_DEPTH {
            return Err(format!("blend trees nest at most {MAX_DEPTH} deep"));
        }
        let float = |name: &str| match (self.lookup)(name) {
            Some((p, ParameterKind::Float)) => Ok(p),
            Some((_, kind)) => Err(format!("parameter \"{name}\" is a {}, not a float", kind.name())),
            None => Err(format!("unknown parameter \"{name}\"")),
        };
        let node = match def {
            MotionDef::Clip { clip, looping, speed } => {
                let index = (self.find_clip)(clip).ok_or_else(|| self.unknown_clip(clip))?;
                if !(speed.is_finite() && *speed > 0.0) {
                    return Err(format!("clip \"{clip}\": speed {speed} is not a finite number > 0"));
                }
                if self.leaves.len() >= MAX_CLIP_NODES {
                    return Err(format!("more than {MAX_CLIP_NODES} clip nodes"));
                }
                self.leaves.push(Leaf { clip: index as u32, looping: *looping, speed: *speed, state, group });
                Node::Clip { leaf: self.leaves.len() as u32 - 1 }
            }
            MotionDef::Blend { inputs, sync } => {
                if inputs.is_empty() {
                    return Err("a blend needs at least one input".into());
                }
                let (group, opened) = self.open_group(group, *sync);
                let mut resolved = Vec::with_capacity(inputs.len());
                for (i, input) in inputs.iter().enumerate() {
                    let weight = match &input.weight {
                        WeightDef::Value(v) if v.is_finite() && *v >= 0.0 => Weight::Value(*v),
                        WeightDef::Value(v) => {
                            return Err(format!("input {i}: weight {v} is not finite and >= 0"));
                        }
                        WeightDef::Parameter(name) => {
                            Weight::Parameter(float(name).map_err(|e| format!("input {i}: weight: {e}"))?)
                        }
                    };
                    let child = self
                        .motion(&input.motion, state, group, depth + 1)
                        .map_err(|e| format!("input {i}: {e}"))?;
                    resolved.push((child, weight));
                }
                self.close_group(opened);
                Node::Blend { inputs: resolved }
            }
            MotionDef::BlendSpace1D { parameter, points, sync, smoothing } => {
                let parameter = float(parameter)?;
                if points.is_empty() {
                    return Err("a blend space needs at least one point".into());
                }
                if !(smoothing.is_finite() && *smoothing >= 0.0) {
                    return Err(format!("smoothing {smoothing} is not a finite number of seconds >= 0"));
                }
                self.inputs.push(SpaceInput { parameter, smoothing: *smoothing });
                let input = self.inputs.len() as u32 - 1;
                let (group, opened) = self.open_group(group, *sync);
                let mut resolved = Vec::with_capacity(points.len());
                for (i, point) in points.iter().enumerate() {
                    if !point.at.is_finite() {
                        return Err(format!("point {i}: at {} is not finite", point.at));
                    }
                    if resolved.iter().any(|&(at, _)| at == point.at) {
                        return Err(format!("point {i}: a second point at {}", point.at));
                    }
                    let child = self
                        .motion(&point.motion, state, group, depth + 1)
                        .map_err(|e| format!("point {i}: {e}"))?;
                    resolved.push((point.at, child));
                }
                self.close_group(opened);
                resolved.sort_by(|a, b| a.0.total_cmp(&b.0));
                Node::Space { input, points: resolved }
            }
        };
        self.nodes.push(node);
        Ok(self.nodes.len() as u32 - 1)
    }

    /// Starts a sync group for a synced node without a synced ancestor.
    fn open_group(&mut self, group: Option<u32>, sync: bool) -> (Option<u32>, bool) {
        match (group, sync) {
            (None, true) => {
                let start = self.leaves.len() as u32;
                self.groups.push(SyncGroup { leaves: start..start });
                (Some(self.groups.len() as u32 - 1), true)
            }
            _ => (group, false),
        }
    }

    fn close_group(&mut self, opened: bool) {
        if opened && let Some(g) = self.groups.last_mut() {
            g.leaves.end = self.leaves.len() as u32;
        }
    }

    fn unknown_clip(&self, key: &str) -> String {
        let names: Vec<String> =
            (0..self.rig.clips.len()).map(|c| format!("\"{}\"", self.rig.clip_name(c))).collect();
        if names.is_empty() {
            format!("no clip \"{key}\" (the model has no clips)")
        } else {
            format!("no clip \"{key}\" (clips: {})", names.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::character::Controller;
    use crate::test_model::test_model;

    fn compile(text: &str) -> Result<Controller, String> {
        Controller::from_text(text, &test_model())
    }

    const GOOD: &str = r#"(
        parameters: [Float(name: "speed", default: 0.5, min: 0, max: 4), Trigger(name: "jump"), Bool(name: "grounded", default: true)],
        states: [
            (name: "Idle", motion: Clip(clip: "Walk", speed: 0.5)),
            (name: "Move", motion: BlendSpace1D(parameter: "speed", sync: true, smoothing: 0.1, points: [
                (at: 2.0, motion: Clip(clip: "Run")),
                (at: 1.0, motion: Blend(inputs: [
                    (motion: Clip(clip: "Walk"), weight: 1.0),
                    (motion: Clip(clip: "1"), weight: "speed"),
                ])),
            ])),
        ],
        transitions: [
            (from: "Idle", to: "Move", when: ["speed > 0.1", "grounded"], duration: 0.2, curve: Linear),
            (from: "*", to: "Idle", when: ["jump"], exit_time: 0.5, priority: 3),
        ],
    )"#;

    #[test]
    fn compiles_a_full_controller() {
        let c = compile(GOOD).unwrap();
        assert_eq!(c.parameters().len(), 3);
        assert_eq!(c.parameters()[0].range, Some((0.0, 4.0)));
        assert_eq!(c.states().len(), 2);
        assert_eq!(c.initial(), Some(0));
        // Move: Run, Walk, Run (clip "1") — three clip nodes, one sync group over all.
        assert_eq!(c.states()[1].leaves, 1..4);
        assert_eq!(c.groups().len(), 1);
        assert_eq!(c.groups()[0].leaves, 1..4);
        assert!(c.leaves()[1..].iter().all(|l| l.group == Some(0)));
        assert_eq!(c.leaves()[0].speed, 0.5);
        assert_eq!(c.transitions()[1].from, None);
        assert_eq!(c.any_state, vec![1]);
        assert_eq!(c.outgoing, vec![vec![0], vec![]]);
    }

    #[test]
    fn every_problem_is_named() {
        let cases = [
            ("(states: [(name: \"A\", motion: Clip(clip: \"Walk\"))", "1:"), // syntax: unclosed
            (
                "(states: [(name: \"A\", motion: Clip(clip: \"Jog\"))])",
                "state 0 \"A\": motion: no clip \"Jog\" (clips: \"Walk\", \"Run\")",
            ),
            ("(states: [(name: \"A\", motion: Clip(clip: \"Walk\", sped: 2))])", "sped"),
            (
                "(states: [(name: \"A\", motion: BlendSpace1D(parameter: \"speed\", points: [(at: 0, motion: Clip(clip: \"Walk\"))]))])",
                "unknown parameter \"speed\"",
            ),
            (
                "(parameters: [Bool(name: \"speed\")], states: [(name: \"A\", motion: BlendSpace1D(parameter: \"speed\", points: [(at: 0, motion: Clip(clip: \"Walk\"))]))])",
                "parameter \"speed\" is a bool, not a float",
            ),
            (
                "(parameters: [Float(name: \"speed\")], states: [(name: \"A\", motion: Clip(clip: \"Walk\")), (name: \"B\", motion: Clip(clip: \"Run\"))], transitions: [(from: \"A\", to: \"B\", when: [\"speed\"])])",
                "transition 0 (\"A\" -> \"B\"): when \"speed\": float parameter \"speed\" needs a comparison",
            ),
            (
                "(states: [(name: \"A\", motion: Clip(clip: \"Walk\"))], transitions: [(from: \"A\", to: \"Fly\")])",
                "transition 0 (\"A\" -> \"Fly\"): no state \"Fly\"",
            ),
            (
                "(states: [(name: \"A\", motion: Clip(clip: \"Walk\"))], transitions: [(from: \"A\", to: \"A\")])",
                "to itself",
            ),
            (
                "(states: [(name: \"A\", motion: Clip(clip: \"Walk\")), (name: \"A\", motion: Clip(clip: \"Run\"))])",
                "state 1 \"A\": a second state",
            ),
            ("(states: [(name: \"*\", motion: Clip(clip: \"Walk\"))])", "state 0 \"*\""),
            (
                "(initial: \"B\", states: [(name: \"A\", motion: Clip(clip: \"Walk\"))])",
                "initial: no state \"B\"",
            ),
            ("(states: [(name: \"A\", motion: Clip(clip: \"Walk\", speed: -1))])", "speed -1"),
            ("(states: [(name: \"A\", motion: Blend(inputs: []))])", "at least one input"),
            (
                "(states: [(name: \"A\", motion: BlendSpace1D(parameter: \"x\", points: []))], parameters: [Float(name: \"x\")])",
                "at least one point",
            ),
            (
                "(parameters: [Float(name: \"x\")], states: [(name: \"A\", motion: BlendSpace1D(parameter: \"x\", points: [(at: 1, motion: Clip(clip: \"Walk\")), (at: 1, motion: Clip(clip: \"Run\"))]))])",
                "point 1: a second point at 1",
            ),
            (
                "(states: [(name: \"A\", motion: Clip(clip: \"Walk\")), (name: \"B\", motion: Clip(clip: \"Run\"))], transitions: [(from: \"A\", to: \"B\", duration: -1)])",
                "duration -1",
            ),
            ("(parameters: [Float(name: \"a b\")], states: [])", "parameter 0 \"a b\""),
            (
                "(parameters: [Float(name: \"a\"), Bool(name: \"a\")], states: [])",
                "parameter 1 \"a\": a second parameter",
            ),
        ];
        for (text, expected) in cases {
            let e = compile(text).expect_err(text);
            assert!(e.contains(expected), "{text}\n  gave: {e}\n  wanted: {expected}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }

    #[test]
    fn nesting_is_bounded() {
        let mut motion = "Clip(clip: \"Walk\")".to_string();
        for _ in 0..20 {
            motion = format!("Blend(inputs: [(motion: {motion}, weight: 1)])");
        }
        let e = compile(&format!("(states: [(name: \"A\", motion: {motion})])")).unwrap_err();
        assert!(e.contains("nest at most"), "{e}");
    }
}
