//! The character runtime on a small hand-built model: blend trees, sync
//! groups, crossfades (and interrupting them), exit times, triggers, events
//! and the pose version. They need no files: the models are built in code
//! (`crate::test_model`).

use super::{Character, Controller, ParameterValue};
use crate::anim::{
    Clip, ClipEvent, Interpolation, JointTracks, Pose, Rig, RotationBlend, SampleJob, SamplingCursor, Track,
};
use crate::test_model::{model_with_clips, slide, test_model};
use nalgebra::Vector3;
use std::sync::Arc;

fn character(rig: &Arc<Rig>, text: &str) -> Character {
    let controller = Controller::from_text(text, rig).unwrap_or_else(|e| panic!("{e}"));
    Character::new(rig.clone(), Arc::new(controller)).unwrap()
}

fn set(c: &mut Character, name: &str, value: ParameterValue) {
    c.set_named(name, value).unwrap();
}

fn close(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-5)
}

/// Event names of the last update, as `clip:name`.
fn fired(c: &Character) -> Vec<String> {
    c.events().iter().map(|e| format!("{}:{}", c.rig().clip_name(e.clip as usize), c.event_name(e))).collect()
}

const SPACE: &str = r#"(
    parameters: [Float(name: "x")],
    states: [(name: "S", motion: BlendSpace1D(parameter: "x", points: [
        (at: 0, motion: Clip(clip: "Walk")), (at: 1, motion: Clip(clip: "Run")),
    ]))],
)"#;

#[test]
fn blend_space_weights_interpolate_and_clamp() {
    let model = test_model();
    let mut c = character(&model.rig, SPACE);
    for (x, expected) in [(0.25, [0.75, 0.25]), (-3.0, [1.0, 0.0]), (7.0, [0.0, 1.0]), (1.0, [0.0, 1.0])] {
        set(&mut c, "x", ParameterValue::Float(x));
        c.update(0.0).unwrap();
        assert!(close(c.clip_weights(), &expected), "x = {x}: {:?}", c.clip_weights());
    }
    assert!(c.set_named("x", ParameterValue::Float(f32::NAN)).is_err());
    assert!(c.set_named("x", ParameterValue::Bool(true)).is_err());
    assert!(c.set_named("y", ParameterValue::Float(1.0)).is_err());
}

#[test]
fn n_way_blend_normalises_its_weights() {
    let model = test_model();
    let text = r#"(
        parameters: [Float(name: "w")],
        states: [(name: "S", motion: Blend(inputs: [
            (motion: Clip(clip: "Walk"), weight: "w"),
            (motion: Clip(clip: "Run"), weight: 6),
        ]))],
    )"#;
    let mut c = character(&model.rig, text);
    set(&mut c, "w", ParameterValue::Float(2.0));
    c.update(0.1).unwrap();
    assert!(close(c.clip_weights(), &[0.25, 0.75]), "{:?}", c.clip_weights());
    // Negative counts as 0.
    set(&mut c, "w", ParameterValue::Float(-5.0));
    c.update(0.1).unwrap();
    assert!(close(c.clip_weights(), &[0.0, 1.0]), "{:?}", c.clip_weights());
    // Nothing weighted: the first input alone.
    let text = r#"(states: [(name: "S", motion: Blend(inputs: [
        (motion: Clip(clip: "Walk"), weight: 0), (motion: Clip(clip: "Run"), weight: 0),
    ]))])"#;
    let mut c = character(&model.rig, text);
    c.update(0.1).unwrap();
    assert!(close(c.clip_weights(), &[1.0, 0.0]), "{:?}", c.clip_weights());
}

#[test]
fn sync_group_shares_one_phase_on_a_weighted_cycle() {
    let model = test_model();
    let mut c = character(&model.rig, &SPACE.replace("parameter: \"x\",", "parameter: \"x\", sync: true,"));
    set(&mut c, "x", ParameterValue::Float(0.5));
    c.update(0.0).unwrap();
    // Walk 1 s, Run 0.5 s at 50 %: a 0.75 s cycle, a quarter of it is 0.1875 s.
    c.update(0.1875).unwrap();
    assert!((c.leaf_time(0) - 0.25).abs() < 1e-6 && (c.leaf_time(1) - 0.125).abs() < 1e-6);
    assert!((c.state_time(0) - 0.25).abs() < 1e-6, "{}", c.state_time(0));
    // Run leads from 75 % on; the phases stay equal.
    set(&mut c, "x", ParameterValue::Float(0.75));
    for _ in 0..50 {
        c.update(0.013).unwrap();
        let (a, b) = (c.leaf_time(0), c.leaf_time(1) / 0.5);
        assert!((a - b).abs() < 1e-5 || (1.0 - (a - b).abs()) < 1e-5, "{a} {b}");
    }
}

/// Two synced clips carrying the same footstep at the same phase: it fires
/// once per cycle (from the leader), never twice, whoever leads.
#[test]
fn a_footstep_in_two_synced_clips_fires_once() {
    let model =
        model_with_clips(vec![slide("Walk", 1.0, &[(0.25, "step")]), slide("Run", 0.5, &[(0.125, "step")])]);
    let mut c = character(&model.rig, &SPACE.replace("parameter: \"x\",", "parameter: \"x\", sync: true,"));
    let mut phase = 0.0f64;
    let mut steps = Vec::new();
    for i in 0..800 {
        // The blend sweeps across the tie (leader changes) again and again.
        let x = 0.5 + 0.45 * (i as f32 * 0.05).sin();
        set(&mut c, "x", ParameterValue::Float(x));
        c.update(1.0 / 60.0).unwrap();
        // This update's cycle, computed independently from the weights.
        let w = c.clip_weights();
        phase += (1.0 / 60.0) / f64::from(w[0] * 1.0 + w[1] * 0.5);
        let events = fired(&c);
        assert!(events.len() <= 1, "update {i}: {events:?}");
        if !events.is_empty() {
            steps.push(phase);
        }
    }
    assert!(steps.len() > 10);
    for pair in steps.windows(2) {
        let gap = pair[1] - pair[0];
        assert!((gap - 1.0).abs() < 0.05, "consecutive footsteps {gap} cycles apart");
    }
}

const FADES: &str = r#"(
    parameters: [Trigger(name: "go"), Trigger(name: "back"), Trigger(name: "other")],
    states: [
        (name: "A", motion: Clip(clip: "Walk")),
        (name: "B", motion: Clip(clip: "Run")),
        (name: "C", motion: Clip(clip: "Walk", speed: 2)),
    ],
    transitions: [
        (from: "A", to: "B", when: ["go"], duration: 0.5, curve: Linear),
        (from: "B", to: "A", when: ["back"], duration: 0.5, curve: Linear),
        (from: "*", to: "C", when: ["other"], duration: 1.0, curve: Smooth),
    ],
)"#;

#[test]
fn crossfade_exchanges_weights_over_its_duration() {
    let model = test_model();
    let mut c = character(&model.rig, FADES);
    c.update(0.0).unwrap();
    set(&mut c, "go", ParameterValue::Trigger);
    c.update(0.1).unwrap();
    assert_eq!(c.transition(), Some((1, 0.0)));
    assert_eq!(c.state_name(), Some("A"), "the source until the fade ends");
    c.update(0.25).unwrap();
    assert!(close(c.state_weights(), &[0.5, 0.5, 0.0]), "{:?}", c.state_weights());
    assert!(close(c.clip_weights(), &[0.5, 0.5]));
    let (_, progress) = c.transition().unwrap();
    assert!((progress - 0.5).abs() < 1e-6);
    c.update(0.25).unwrap();
    assert_eq!((c.state_name(), c.transition()), (Some("B"), None));
    assert!(close(c.state_weights(), &[0.0, 1.0, 0.0]));
}

#[test]
fn interrupting_a_crossfade_keeps_the_weights_continuous() {
    let model = test_model();
    let mut c = character(&model.rig, FADES);
    c.update(0.0).unwrap();
    set(&mut c, "go", ParameterValue::Trigger);
    c.update(0.0).unwrap();
    c.update(0.3).unwrap(); // A 0.4, B 0.6
    let before = c.state_weights().to_vec();
    set(&mut c, "other", ParameterValue::Trigger);
    c.update(0.0).unwrap();
    assert!(close(c.state_weights(), &before), "no jump when the new fade starts");
    assert_eq!(c.state_name(), Some("B"), "the interrupted fade's target is the state left");
    assert_eq!(c.transition().map(|t| t.0), Some(2));
    // Smooth curve at a quarter: 0.15625 of the way.
    c.update(0.25).unwrap();
    let s = 0.15625;
    let expected = [0.4 * (1.0 - s), 0.6 * (1.0 - s), s];
    assert!(close(c.state_weights(), &expected), "{:?}", c.state_weights());
    // Back to a state still fading out: it keeps its weight and time.
    let mut c = character(&model.rig, FADES);
    c.update(0.0).unwrap();
    set(&mut c, "go", ParameterValue::Trigger);
    c.update(0.0).unwrap();
    c.update(0.3).unwrap();
    let walk_time = c.leaf_time(0);
    set(&mut c, "back", ParameterValue::Trigger);
    c.update(0.0).unwrap();
    assert_eq!(c.leaf_time(0), walk_time, "A was not restarted");
    c.update(0.25).unwrap();
    assert!(close(c.state_weights(), &[0.4 + 0.6 * 0.5, 0.6 * 0.5, 0.0]), "{:?}", c.state_weights());
}

#[test]
fn triggers_last_one_update_and_are_consumed() {
    let model = test_model();
    let mut c = character(&model.rig, FADES);
    // Fired where no transition uses it (B -> A needs B): gone after one update.
    set(&mut c, "back", ParameterValue::Trigger);
    c.update(0.1).unwrap();
    assert_eq!(c.parameters().values()[1], 0.0);
    set(&mut c, "go", ParameterValue::Trigger);
    c.update(0.1).unwrap();
    assert_eq!(c.parameters().values()[0], 0.0, "consumed by A -> B");
    assert!(c.transition().is_some());
}

#[test]
fn exit_time_waits_for_the_source_state() {
    let model = test_model();
    let text = r#"(states: [(name: "A", motion: Clip(clip: "Walk")), (name: "B", motion: Clip(clip: "Run"))],
        transitions: [(from: "A", to: "B", exit_time: 1.5)])"#;
    let mut c = character(&model.rig, text);
    for _ in 0..14 {
        c.update(0.1).unwrap();
        assert_eq!(c.state_name(), Some("A"), "after {} cycles", c.state_time(0));
    }
    c.update(0.1).unwrap();
    assert_eq!(c.state_name(), Some("B"));
}

#[test]
fn events_come_from_the_dominant_state() {
    let model = model_with_clips(vec![
        slide("Walk", 1.0, &[(0.1, "w1"), (0.3, "w3")]),
        slide("Run", 0.5, &[(0.1, "r1"), (0.3, "r3")]),
    ]);
    let mut c =
        character(&model.rig, &FADES.replace("duration: 0.5, curve: Linear", "duration: 0.4, curve: Linear"));
    c.update(0.0).unwrap();
    set(&mut c, "go", ParameterValue::Trigger);
    c.update(0.05).unwrap(); // Walk at 0.05; the fade starts, Run at 0
    // Walk (weight 0.75, dominant) crosses 0.1 while Run crosses nothing.
    c.update(0.1).unwrap();
    assert_eq!(fired(&c), vec!["Walk:w1"]);
    // Run crossed its 0.1 too, but while Walk dominated: not reported.
    // Now Run dominates (0.75): its 0.3 fires, Walk's 0.3 does not.
    c.update(0.2).unwrap();
    assert_eq!(fired(&c), vec!["Run:r3"]);
}

#[test]
fn playback_events_match_a_clip_player_forwards_and_backwards() {
    let model = test_model();
    let mut c = character(&model.rig, r#"(states: [(name: "A", motion: Clip(clip: "Walk"))])"#);
    let mut reference = crate::anim::ClipPlayer::new(1.0);
    let events = &model.clips[0].events;
    for (dt, rate) in [(0.3, 1.0), (0.5, 1.0), (2.6, 1.0), (0.4, -1.0), (3.3, -2.0), (0.0, 1.0)] {
        c.set_rate(rate);
        reference.set_speed(rate);
        c.update(dt).unwrap();
        let mut expected = Vec::new();
        reference.advance(dt, events, |e| expected.push(format!("Walk:{}", e.name)));
        assert_eq!(fired(&c), expected, "dt {dt} rate {rate}");
        assert!((c.leaf_time(0) - f64::from(reference.time())).abs() < 1e-6);
    }
    // Seeking fires nothing.
    c.seek(0.9);
    c.update(0.0).unwrap();
    assert!(c.events().is_empty());
}

#[test]
fn version_changes_exactly_when_the_pose_does() {
    let model = test_model();
    let mut c = character(&model.rig, r#"(states: [(name: "A", motion: Clip(clip: "Walk"))])"#);
    c.update(0.0).unwrap();
    let v = c.version();
    assert_eq!(v, 1);
    c.update(0.0).unwrap();
    c.set_rate(0.0);
    c.update(0.5).unwrap();
    assert_eq!(c.version(), v, "paused");
    c.set_rate(1.0);
    c.update(0.1).unwrap();
    assert_eq!(c.version(), v + 1);
    // Non-looping at its end: time stays at the end, the pose too.
    let text = r#"(states: [(name: "A", motion: Clip(clip: "Walk", looping: false))])"#;
    let mut c = character(&model.rig, text);
    c.update(5.0).unwrap();
    let v = c.version();
    c.update(0.5).unwrap();
    assert_eq!(c.version(), v, "held at the end");
    // STEP keys: time moves, the pose does not.
    let step = Arc::new(Clip {
        name: Some("Step".into()),
        duration: 1.0,
        joint_tracks: vec![JointTracks {
            joint: 1,
            translation: Some(Track {
                times: vec![0.0, 1.0],
                values: vec![Vector3::new(0.5, 1.0, 0.0), Vector3::new(1.0, 1.0, 0.0)],
                interpolation: Interpolation::Step,
            }),
            rotation: None,
            scale: None,
        }],
        morph_tracks: Vec::new(),
        events: vec![ClipEvent { time: 0.5, name: "half".into() }],
    });
    let model = model_with_clips(vec![step]);
    let mut c = character(&model.rig, r#"(states: [(name: "A", motion: Clip(clip: "Step"))])"#);
    c.update(0.1).unwrap();
    let v = c.version();
    c.update(0.1).unwrap();
    assert_eq!(c.version(), v, "between two STEP keys");
    // A debug view or a morph override changes what the GPU reads.
    c.set_morph_override(Some(&[0.5, 0.5]));
    c.update(0.0).unwrap();
    assert_eq!(c.version(), v + 1);
    c.set_morph_override(Some(&[0.5, 0.5]));
    c.update(0.0).unwrap();
    assert_eq!(c.version(), v + 1, "the same override again");
    let animated = c.output().palette(0).to_vec();
    assert!(animated.iter().any(|m| *m != crate::anim::BoneMatrix::IDENTITY));
    c.set_debug_pose(super::DebugPose::IdentityPalette);
    c.update(0.0).unwrap();
    assert_eq!(c.version(), v + 2);
    assert!(c.output().palette(0).iter().all(|m| *m == crate::anim::BoneMatrix::IDENTITY));
    // The same world matrices under another view: the palettes follow the view.
    c.set_debug_pose(super::DebugPose::Animated);
    c.update(0.0).unwrap();
    assert_eq!(c.version(), v + 3);
    assert_eq!(c.output().palette(0), animated.as_slice());
}

#[test]
fn one_clip_is_sampled_bit_for_bit() {
    let model = test_model();
    let controller = Arc::new(Controller::single_clip(&model, Some(1), true).unwrap());
    let mut c = Character::new(model.rig.clone(), controller).unwrap();
    for t in [0.0, 0.137, 0.4999, 1.7, -0.3] {
        c.seek(t);
        c.update(0.0).unwrap();
        let mut expected = Pose::new(5, 2);
        let clip = &model.clips[1];
        SampleJob {
            clip,
            time: crate::anim::player::wrap_clip_time(clip.duration, t),
            rest: model.skeleton.rest(),
            rest_morph_weights: &model.rest_morph_weights,
            rotation_blend: RotationBlend::Slerp,
            cursor: &mut SamplingCursor::new(clip),
            output: &mut expected.locals,
            morph_output: &mut expected.morph_weights,
        }
        .run()
        .unwrap();
        assert_eq!(c.local_pose(), &expected, "t = {t}");
    }
}

#[test]
fn skins_that_share_a_palette_run_each_read_their_own_product() {
    let model = test_model();
    let rig = &model.rig;
    let skin = rig.skins[0].clone();
    let mut spine_only = skin.clone();
    (spine_only.joints, spine_only.inverse_binds) = (vec![2], vec![skin.inverse_binds[1]]);
    let skins = vec![skin.clone(), spine_only, skin];
    let (meshes, instances, clips) = (rig.meshes.clone(), rig.instances.clone(), rig.clips.clone());
    let shared =
        Rig::new(rig.skeleton.clone(), skins, meshes, instances, clips, rig.rest_morph_weights.clone());
    let shared = Arc::new(shared.unwrap());
    assert_eq!(shared.palette_ranges(), [[0, 2], [2, 3], [0, 2]]);
    let controller = Arc::new(Controller::single_clip(&shared, Some(1), true).unwrap());
    let mut c = Character::new(shared.clone(), controller).unwrap();
    c.update(0.3).unwrap();
    let output = c.output();
    assert_eq!(output.view().palettes.len(), 3, "the shared run is kept once");
    for (s, skin) in shared.skins.iter().enumerate() {
        let mut expected = vec![crate::anim::BoneMatrix::IDENTITY; skin.joints.len()];
        crate::anim::PaletteJob { skin, models: output.world(), output: &mut expected }.run().unwrap();
        assert!(expected.iter().any(|m| *m != crate::anim::BoneMatrix::IDENTITY));
        assert_eq!(output.palette(s), expected.as_slice(), "skin {s}");
    }
}

/// Posed on the GPU, a character blends its morph weights on the CPU
/// without sampling the clips that have no morph tracks (they give the
/// rest weights): the CPU-posed weights within f32 rounding, and the rest
/// weights exactly where no clip with weight has any.
#[test]
fn gpu_posed_morph_weights_skip_clips_without_morph_tracks() {
    let mut still = (*slide("Still", 0.8, &[])).clone();
    still.morph_tracks.clear();
    let model = model_with_clips(vec![slide("Walk", 1.0, &[]), Arc::new(still)]);
    // Rest weights that a blend of them does not give back bit for bit.
    let r = &model.rig;
    let (skeleton, skins, meshes, instances, clips) =
        (r.skeleton.clone(), r.skins.clone(), r.meshes.clone(), r.instances.clone(), r.clips.clone());
    let rig = Arc::new(Rig::new(skeleton, skins, meshes, instances, clips, vec![0.123, 0.71]).unwrap());
    let text = r#"(
        parameters: [Float(name: "x"), Bool(name: "still")],
        states: [
            (name: "Blend", motion: BlendSpace1D(parameter: "x", points: [
                (at: 0, motion: Clip(clip: "Walk")), (at: 1, motion: Clip(clip: "Still")),
            ])),
            (name: "Still", motion: Clip(clip: "Still")),
            (name: "BothStill", motion: BlendSpace1D(parameter: "x", points: [
                (at: 0, motion: Clip(clip: "Still")), (at: 1, motion: Clip(clip: "Still", speed: 0.5)),
            ])),
        ],
        transitions: [
            (from: "Blend", to: "Still", when: ["still"], duration: 0.5),
            (from: "Still", to: "BothStill", when: ["still"], duration: 0.0),
        ],
    )"#;
    let mut cpu = character(&rig, text);
    let mut gpu = character(&rig, text);
    let program = super::gpu_pose::pose_program(&rig, gpu.controller(), RotationBlend::Slerp).unwrap();
    gpu.set_pose_program(Some(Arc::new(program)));
    let rest = rig.rest_morph_weights.clone();
    for (frame, x) in [0.3, 0.6, 0.6, 0.9, 0.2, 0.29].into_iter().enumerate() {
        for c in [&mut cpu, &mut gpu] {
            set(c, "x", ParameterValue::Float(x));
            set(c, "still", ParameterValue::Bool(frame >= 3));
            c.update(0.13).unwrap();
        }
        let (want, got) = (cpu.output().morph_weights(), gpu.output().morph_weights());
        assert!(close(got, want), "frame {frame}: {got:?} against {want:?}");
        assert!(got.iter().zip(&rest).any(|(g, r)| g != r) || frame >= 4, "frame {frame}: {got:?}");
    }
    // Past the crossfade only the Still clip plays (twice, at two speeds):
    // the rest weights, bit for bit, without a blend.
    for _ in 0..8 {
        for c in [&mut cpu, &mut gpu] {
            c.update(0.13).unwrap();
        }
    }
    let active = gpu.leaf_weights().iter().filter(|w| **w > 0.0).count();
    assert_eq!(active, 2, "{:?}", gpu.leaf_weights());
    assert!(close(gpu.output().morph_weights(), cpu.output().morph_weights()));
    assert_eq!(gpu.output().morph_weights(), rest.as_slice());
}

#[test]
fn a_rig_s_rotation_blend_is_its_characters_own() {
    let model = test_model();
    let mut nlerp_rig = (*model.rig).clone();
    nlerp_rig.set_rotation_blend(RotationBlend::Nlerp);
    let controller = Arc::new(Controller::single_clip(&model, Some(1), true).unwrap());
    let mut on_rig = Character::new(Arc::new(nlerp_rig), controller.clone()).unwrap();
    let mut slerp = Character::new(model.rig.clone(), controller.clone()).unwrap();
    let mut set = Character::new(model.rig.clone(), controller).unwrap();
    set.set_rotation_sampling(RotationBlend::Nlerp);
    let mut differs = false;
    for t in [0.0, 0.137, 0.4999, 1.7, -0.3] {
        for c in [&mut on_rig, &mut slerp, &mut set] {
            c.seek(t);
            c.update(0.0).unwrap();
        }
        assert_eq!(on_rig.local_pose(), set.local_pose(), "t = {t}");
        differs |= on_rig.local_pose() != slerp.local_pose();
    }
    assert!(differs, "the rig's nlerp reached its characters");
}

#[test]
fn a_controller_without_states_is_the_rest_pose() {
    let model = test_model();
    let controller = Arc::new(Controller::single_clip(&model, None, true).unwrap());
    let mut c = Character::new(model.rig.clone(), controller).unwrap();
    c.update(1.0).unwrap();
    assert_eq!(c.local_pose().locals, model.skeleton.rest());
    assert_eq!((c.state(), c.version()), (None, 1));
    assert!(c.clip_weights().iter().all(|&w| w == 0.0));
    c.update(1.0).unwrap();
    assert_eq!(c.version(), 1);
}

#[test]
fn smoothing_follows_the_parameter_gradually() {
    let model = test_model();
    let text = SPACE.replace("parameter: \"x\",", "parameter: \"x\", smoothing: 0.5,");
    let mut c = character(&model.rig, &text);
    c.update(0.0).unwrap();
    set(&mut c, "x", ParameterValue::Float(1.0));
    let mut last = 0.0;
    for _ in 0..30 {
        c.update(0.05).unwrap();
        let w = c.clip_weights()[1];
        assert!(w > last && w - last < 0.1, "{last} -> {w}");
        last = w;
    }
    // e^(-1.5 / 0.5) left to go.
    assert!((last - (1.0 - (-3.0f32).exp())).abs() < 1e-3, "{last}");
}

/// The state a bool `go` leads to from `A`, with these transitions.
fn chosen(transitions: &str) -> String {
    let model = test_model();
    let text = format!(
        r#"(
        parameters: [Bool(name: "go")],
        states: [
            (name: "A", motion: Clip(clip: "Walk")), (name: "B", motion: Clip(clip: "Run")),
            (name: "C", motion: Clip(clip: "Walk")), (name: "D", motion: Clip(clip: "Run")),
        ],
        transitions: [{transitions}],
    )"#
    );
    let mut c = character(&model.rig, &text);
    c.update(0.1).unwrap();
    assert_eq!(c.state_name(), Some("A"));
    set(&mut c, "go", ParameterValue::Bool(true));
    c.update(0.1).unwrap();
    c.state_name().unwrap().to_string()
}

#[test]
fn highest_priority_wins_then_file_order() {
    // Among a state's own transitions, and against any-state ones.
    let own = r#"(from: "A", to: "B", when: ["go"]), (from: "A", to: "C", when: ["go"], priority: 5)"#;
    assert_eq!(chosen(own), "C");
    let tie =
        r#"(from: "A", to: "B", when: ["go"], priority: 2), (from: "A", to: "C", when: ["go"], priority: 2)"#;
    assert_eq!(chosen(tie), "B");
    let any_first =
        r#"(from: "*", to: "D", when: ["go"], priority: 5), (from: "A", to: "C", when: ["go"], priority: 5)"#;
    assert_eq!(chosen(any_first), "D");
    let own_first =
        r#"(from: "A", to: "C", when: ["go"], priority: 5), (from: "*", to: "D", when: ["go"], priority: 5)"#;
    assert_eq!(chosen(own_first), "C");
    let any_higher =
        r#"(from: "A", to: "C", when: ["go"], priority: 5), (from: "*", to: "D", when: ["go"], priority: 6)"#;
    assert_eq!(chosen(any_higher), "D");
    // A better transition that cannot start gives way.
    let blocked =
        r#"(from: "A", to: "C", when: ["go", "!go"], priority: 9), (from: "A", to: "B", when: ["go"])"#;
    assert_eq!(chosen(blocked), "B");
}
