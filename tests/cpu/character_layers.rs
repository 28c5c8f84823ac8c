//! Layers over the state machine on the built-in character: an additive
//! upper-body layer (Jump's arms and chest, taken as a difference from
//! Jump's first key) over Walk, an override layer fading down the spine, and
//! their weights; then the built-in controller's own layers: the triggered
//! wave (played once, faded, legs untouched), breathing and the talking face.

use std::sync::Arc;
use vkskin::anim::Transform;
use vkskin::asset::{Model, load_default_character};
use vkskin::character::controller::{ControllerFile, DEFAULT_CONTROLLER};
use vkskin::character::{Character, Controller, ParameterValue};

fn model() -> Arc<Model> {
    Arc::new(load_default_character().unwrap())
}

/// Walk, with `layer` (RON) over it; parameter "w" is a float at `w`.
fn character(model: &Model, layer: &str, w: f32) -> Character {
    let text = format!(
        "(parameters: [Float(name: \"w\", default: {w:?})], \
         states: [(name: \"Walk\", motion: Clip(clip: \"Walk\"))], layers: [{layer}])"
    );
    let controller = Controller::from_text(&text, model).unwrap_or_else(|e| panic!("{e}"));
    Character::new(model.rig.clone(), Arc::new(controller)).unwrap()
}

fn walk_alone(model: &Model) -> Character {
    let controller =
        Controller::from_text("(states: [(name: \"Walk\", motion: Clip(clip: \"Walk\"))])", model).unwrap();
    Character::new(model.rig.clone(), Arc::new(controller)).unwrap()
}

/// The pose of `clip` at `time` alone.
fn clip_pose(model: &Model, clip: &str, time: f64) -> Vec<Transform> {
    let controller = Controller::single_clip(model, model.find_clip(clip), false).unwrap();
    let mut c = Character::new(model.rig.clone(), Arc::new(controller)).unwrap();
    c.seek(time);
    c.update(0.0).unwrap();
    c.local_pose().locals.clone()
}

const UPPER_BODY_ADDITIVE: &str = "(name: \"Arms\", motion: Clip(clip: \"Jump\", looping: false), blending: Additive, weight: \"w\", \
     mask: [(joint: \"Chest\")])";

#[test]
fn an_additive_upper_body_layer_leaves_the_rest_bit_identical_and_reaches_its_joints() {
    let model = model();
    let mut layered = character(&model, UPPER_BODY_ADDITIVE, 1.0);
    let mut plain = walk_alone(&model);
    let names = model.skeleton.names();
    // The Chest and everything below it (parents come first).
    let parents = model.skeleton.parents();
    let mut upper = vec![model.skeleton.find("Chest").unwrap()];
    for (j, &parent) in parents.iter().enumerate() {
        if upper.contains(&(parent as usize)) && !upper.contains(&j) {
            upper.push(j);
        }
    }
    assert_eq!(upper.len(), 12, "chest, neck, head, jaw and two arms of four joints");
    let reference = clip_pose(&model, "Jump", 0.0);
    for frame in 0..40 {
        layered.update(1.0 / 30.0).unwrap();
        plain.update(1.0 / 30.0).unwrap();
        let (a, b) = (&layered.local_pose().locals, &plain.local_pose().locals);
        // Everything outside the mask: Walk alone, bit for bit.
        for j in (0..a.len()).filter(|j| !upper.contains(j)) {
            assert_eq!(a[j], b[j], "frame {frame}: {} moved", names[j]);
        }
        // Inside it, at weight 1: Walk times Jump's difference from its first key, exactly.
        let jump = clip_pose(&model, "Jump", layered.leaf_time(1));
        for &j in &upper {
            let expected_rotation = b[j].rotation * (reference[j].rotation.inverse() * jump[j].rotation);
            assert!(a[j].rotation.angle_to(&expected_rotation) < 1e-5, "frame {frame}: {}", names[j]);
            let expected_translation = b[j].translation + (jump[j].translation - reference[j].translation);
            assert!((a[j].translation - expected_translation).norm() < 1e-5, "frame {frame}: {}", names[j]);
        }
        // Jump's arms do move during the jump: the layer shows.
        if frame == 20 {
            let moved = upper.iter().any(|&j| a[j].rotation.angle_to(&b[j].rotation) > 0.05);
            assert!(moved, "the layer changes the upper body");
        }
    }
}

#[test]
fn weight_zero_is_the_base_and_rising_weight_restarts_the_layer() {
    let model = model();
    let mut layered = character(&model, UPPER_BODY_ADDITIVE, 0.0);
    let mut plain = walk_alone(&model);
    for _ in 0..20 {
        layered.update(1.0 / 30.0).unwrap();
        plain.update(1.0 / 30.0).unwrap();
        assert_eq!(layered.local_pose(), plain.local_pose());
    }
    // The layer's clip (node 1: Walk is node 0) starts at 0 when its weight rises.
    layered.set_named("w", ParameterValue::Float(0.5)).unwrap();
    layered.update(0.0).unwrap();
    assert_eq!(layered.leaf_time(1), 0.0);
    layered.update(0.25).unwrap();
    assert!((layered.leaf_time(1) - 0.25).abs() < 1e-6);
    // The clip weights report the state machine only.
    assert_eq!(layered.clip_weights().iter().sum::<f32>(), 1.0);
}

#[test]
fn an_override_layer_fades_down_the_spine() {
    let model = model();
    let layer = "(name: \"Pose\", motion: Clip(clip: \"Idle\"), mask: [(joint: \"Spine\", weight: 0.5), \
                 (joint: \"Chest\", weight: 1.0), (joint: \"Neck\", weight: 0.25, children: false)])";
    let mut layered = character(&model, layer, 1.0);
    let mut plain = walk_alone(&model);
    layered.update(0.3).unwrap();
    plain.update(0.3).unwrap();
    let idle = clip_pose(&model, "Idle", layered.leaf_time(1));
    let (a, b) = (&layered.local_pose().locals, &plain.local_pose().locals);
    let j = |n: &str| model.skeleton.find(n).unwrap();
    // Chest and below it: Idle; Neck 0.25 (children: false, so Head is Chest's 1).
    assert_eq!(a[j("Chest")], idle[j("Chest")]);
    assert_eq!(a[j("Hand.L")], idle[j("Hand.L")]);
    assert_eq!(a[j("Head")], idle[j("Head")]);
    let quarter = b[j("Neck")].rotation.angle_to(&a[j("Neck")].rotation);
    let full = b[j("Neck")].rotation.angle_to(&idle[j("Neck")].rotation);
    assert!((quarter - 0.25 * full).abs() < 1e-3, "{quarter} vs a quarter of {full}");
    // Spine half-way; hips and legs untouched.
    let half = b[j("Spine")].rotation.angle_to(&a[j("Spine")].rotation);
    let spine_full = b[j("Spine")].rotation.angle_to(&idle[j("Spine")].rotation);
    assert!((half - 0.5 * spine_full).abs() < 1e-3);
    for n in ["Root", "Hips", "UpperLeg.L", "Foot.R"] {
        assert_eq!(a[j(n)], b[j(n)], "{n}");
    }
}

#[test]
fn bad_layers_are_named() {
    let model = model();
    let cases = [
        (
            "(name: \"A\", motion: Clip(clip: \"Idle\"), mask: [(joint: \"Tail\")])",
            "layer 0 \"A\": mask 0: no joint \"Tail\"",
        ),
        ("(name: \"A\", motion: Clip(clip: \"Idle\"), weight: 2)", "weight 2 is not in [0, 1]"),
        ("(name: \"A\", motion: Clip(clip: \"Idle\"), weight: \"speed\")", "unknown parameter \"speed\""),
        ("(name: \"A\", motion: Clip(clip: \"Idle\"), reference: (clip: \"Idle\"))", "only additive layers"),
        ("(name: \"Walk\", motion: Clip(clip: \"Idle\"))", "a layer needs a name no state"),
    ];
    for (layer, expected) in cases {
        let text = format!("(states: [(name: \"Walk\", motion: Clip(clip: \"Walk\"))], layers: [{layer}])");
        let e = Controller::from_text(&text, &model).unwrap_err().to_string();
        assert!(e.contains(expected), "{e}\nwanted: {expected}");
    }
}

// ---- the built-in controller's layers ---------------------------------------

/// The built-in controller, or (`layers: false`) the same file without its layers.
fn built_in(model: &Model, layers: bool) -> Arc<Controller> {
    let mut file = ControllerFile::parse(DEFAULT_CONTROLLER).unwrap();
    if !layers {
        file.layers.clear();
    }
    Arc::new(Controller::compile(&file, model).unwrap_or_else(|e| panic!("{e}")))
}

/// A built-in character at `speed`.
fn built_in_at(model: &Model, controller: &Arc<Controller>, speed: f32) -> Character {
    let mut c = Character::new(model.rig.clone(), controller.clone()).unwrap();
    c.set_named("speed", ParameterValue::Float(speed)).unwrap();
    c
}

/// Index of layer `name` (in `Character::layer_weights`).
fn layer_index(controller: &Controller, name: &str) -> usize {
    controller.layers().iter().position(|l| l.name == name).unwrap_or_else(|| panic!("no layer {name}"))
}

/// The clip node layer `layer` plays (layers' motions follow the machine's states).
fn layer_leaf(controller: &Controller, layer: usize) -> usize {
    let state = controller.states().len() + layer;
    controller.leaves().iter().position(|l| l.state as usize == state).unwrap()
}

/// The hips and the leg chains below them (and the root above them).
const LEGS: [&str; 10] = [
    "Root",
    "Hips",
    "UpperLeg.L",
    "LowerLeg.L",
    "Foot.L",
    "Toes.L",
    "UpperLeg.R",
    "LowerLeg.R",
    "Foot.R",
    "Toes.R",
];

#[test]
fn with_the_wave_layer_active_the_legs_are_bit_identical_over_idle_walk_and_run() {
    let model = model();
    let (layered, plain) = (built_in(&model, true), built_in(&model, false));
    let wave = layer_index(&layered, "Wave");
    let legs: Vec<usize> = LEGS.iter().map(|n| model.skeleton.find(n).unwrap()).collect();
    let hand = model.skeleton.find("Hand.R").unwrap();
    // Idle, walk, between walk and run, run.
    for speed in [0.0, 1.3, 2.2, 3.4] {
        let mut waving = built_in_at(&model, &layered, speed);
        let mut not_waving = built_in_at(&model, &layered, speed);
        let mut no_layers = built_in_at(&model, &plain, speed);
        let (mut frames_waving, mut hand_moved) = (0, 0.0f32);
        // 8 s at 60 Hz: waves fired at 0.5 s, 1.5 s (ignored) and 4 s.
        for frame in 0..480 {
            if [30, 90, 240].contains(&frame) {
                waving.set_named("wave", ParameterValue::Trigger).unwrap();
            }
            for c in [&mut waving, &mut not_waving, &mut no_layers] {
                c.update(1.0 / 60.0).unwrap();
            }
            let a = &waving.local_pose().locals;
            for &j in &legs {
                let what = format!(
                    "speed {speed}, frame {frame}: {}",
                    LEGS[legs.iter().position(|&l| l == j).unwrap()]
                );
                assert_eq!(a[j], not_waving.local_pose().locals[j], "{what} (with and without the wave)");
                assert_eq!(a[j], no_layers.local_pose().locals[j], "{what} (and without any layer)");
            }
            // The world matrices of the legs agree too (the root motion and the hips above them).
            for &j in &legs {
                assert_eq!(
                    waving.output().world()[j],
                    not_waving.output().world()[j],
                    "speed {speed}, frame {frame}"
                );
            }
            // The layers' weights are their own: the machine's still sum to one.
            assert!((waving.state_weights().iter().sum::<f32>() - 1.0).abs() < 1e-5, "frame {frame}");
            if waving.layer_weights()[wave] > 0.0 {
                frames_waving += 1;
                let (p, q) = (waving.output().world()[hand], not_waving.output().world()[hand]);
                hand_moved = hand_moved.max((p[(1, 3)] - q[(1, 3)]).abs());
            }
        }
        // Two runs of 2.4 s each (the second firing fell inside the first run).
        assert!((280..=290).contains(&frames_waving), "speed {speed}: waving for {frames_waving} frames");
        assert!(hand_moved > 0.3, "speed {speed}: the wave raises the right hand {hand_moved} m");
    }
}

#[test]
fn the_wave_trigger_plays_once_fades_in_and_out_and_ignores_a_second_firing() {
    let model = model();
    let controller = built_in(&model, true);
    let wave = layer_index(&controller, "Wave");
    let leaf = layer_leaf(&controller, wave);
    let mut c = built_in_at(&model, &controller, 1.3);
    let dt = 1.0 / 100.0;
    for _ in 0..50 {
        c.update(dt).unwrap();
        assert_eq!(c.layer_weights()[wave], 0.0, "idle until fired");
    }
    c.set_named("wave", ParameterValue::Trigger).unwrap();
    let mut weights = Vec::new();
    for step in 1..=300 {
        if step == 100 {
            // Mid-wave: ignored, the clip plays on.
            c.set_named("wave", ParameterValue::Trigger).unwrap();
        }
        c.update(dt).unwrap();
        weights.push(c.layer_weights()[wave]);
        if step <= 240 {
            // The clip plays from its start, once.
            assert!(
                (c.leaf_time(leaf) - f64::from(step as f32 * dt)).abs() < 1e-4,
                "step {step}: {}",
                c.leaf_time(leaf)
            );
        }
    }
    // Fade in over 0.25 s, eased, rising; full until 0.4 s before the end (2.4 s).
    assert!(weights[0] > 0.0 && weights[0] < 0.01, "{}", weights[0]);
    assert!(weights[..25].windows(2).all(|w| w[1] > w[0]), "{:?}", &weights[..25]);
    assert!((weights[11] - 0.5).abs() < 0.1, "half-way into the fade: {}", weights[11]);
    assert!(weights[24..200].iter().all(|&w| w == 1.0), "held at 1: {:?}", &weights[24..200]);
    assert!(weights[200..239].windows(2).all(|w| w[1] < w[0]), "{:?}", &weights[200..240]);
    assert!(weights[239] < 0.01 && weights[239] > 0.0, "{}", weights[239]);
    assert!(weights[240..].iter().all(|&w| w == 0.0), "over at 2.4 s: {:?}", &weights[238..245]);
    // Fired again once it has ended: it starts over from the beginning.
    c.set_named("wave", ParameterValue::Trigger).unwrap();
    c.update(dt).unwrap();
    assert!(c.layer_weights()[wave] > 0.0);
    assert!((c.leaf_time(leaf) - f64::from(dt)).abs() < 1e-6, "{}", c.leaf_time(leaf));
}

#[test]
fn the_face_layer_moves_the_morph_weights_and_the_jaw_over_any_state() {
    let model = model();
    let controller = built_in(&model, true);
    let names = &model.meshes[0].target_names;
    let target = |n: &str| names.iter().position(|t| t == n).unwrap();
    let (blink, smile, mouth) = (target("Blink"), target("Smile"), target("MouthOpen"));
    let jaw = model.skeleton.find("Jaw").unwrap();
    let legs: Vec<usize> = LEGS.iter().map(|n| model.skeleton.find(n).unwrap()).collect();
    for speed in [0.0, 1.3, 3.4] {
        let mut talking = built_in_at(&model, &controller, speed);
        let mut silent = built_in_at(&model, &controller, speed);
        talking.set_named("talk", ParameterValue::Float(1.0)).unwrap();
        let mut most = [0.0f32; 4];
        for frame in 0..150 {
            talking.update(1.0 / 30.0).unwrap();
            silent.update(1.0 / 30.0).unwrap();
            let (a, b) = (talking.local_pose(), silent.local_pose());
            for (k, t) in [blink, smile, mouth].into_iter().enumerate() {
                most[k] = most[k].max(a.morph_weights[t]);
                assert_eq!(
                    b.morph_weights[t], 0.0,
                    "speed {speed}, frame {frame}: silent, the face is still"
                );
            }
            let opening = b.locals[jaw].rotation.angle_to(&a.locals[jaw].rotation);
            most[3] = most[3].max(opening);
            // The jaw opens with the mouth (the Talk clip's 0.22 rad when wide open).
            assert!((opening - 0.22 * a.morph_weights[mouth]).abs() < 0.01, "speed {speed}, frame {frame}");
            for &j in &legs {
                assert_eq!(a.locals[j], b.locals[j], "speed {speed}, frame {frame}: the face moved a leg");
            }
            // Breathe is the state's (and the breathing layer's), not the face's.
            assert_eq!(a.morph_weights[0], b.morph_weights[0], "speed {speed}, frame {frame}");
        }
        let [blinked, smiled, opened, jaw_opened] = most;
        assert!(
            blinked > 0.9 && smiled > 0.5 && opened > 0.7 && jaw_opened > 0.15,
            "speed {speed}: {most:?}"
        );
    }
}

#[test]
fn the_breathing_layer_breathes_while_moving_and_leaves_idle_alone() {
    let model = model();
    let (layered, plain) = (built_in(&model, true), built_in(&model, false));
    let chest = model.skeleton.find("Chest").unwrap();
    for (speed, breathes) in [(0.0, false), (1.3, true), (3.4, true)] {
        let mut a = built_in_at(&model, &layered, speed);
        let mut b = built_in_at(&model, &plain, speed);
        let (mut morph, mut turn) = (0.0f32, 0.0f32);
        for _ in 0..120 {
            a.update(1.0 / 30.0).unwrap();
            b.update(1.0 / 30.0).unwrap();
            let (pa, pb) = (a.local_pose(), b.local_pose());
            morph = morph.max((pa.morph_weights[0] - pb.morph_weights[0]).abs());
            turn = turn.max(pa.locals[chest].rotation.angle_to(&pb.locals[chest].rotation));
            if !breathes {
                assert_eq!(pa, pb, "idle breathes by itself: no layer shows");
            }
        }
        if breathes {
            assert!(morph > 0.9 && turn > 0.02, "speed {speed}: breathe {morph}, chest {turn} rad");
        }
    }
}

#[test]
fn bad_triggered_layers_are_named() {
    let model = model();
    let params = "parameters: [Float(name: \"f\"), Trigger(name: \"go\")]";
    let cases = [
        ("trigger: (parameter: \"f\")", "layer 0 \"A\": trigger: parameter \"f\" is a float, not a trigger"),
        ("trigger: (parameter: \"nope\")", "trigger: unknown parameter \"nope\""),
        ("trigger: (parameter: \"go\", fade_in: -1)", "trigger: fade_in -1 is not a number of seconds"),
        ("trigger: (parameter: \"go\", fade_out: inf)", "trigger: fade_out inf is not a number of seconds"),
    ];
    for (trigger, expected) in cases {
        let text = format!(
            "({params}, states: [(name: \"Walk\", motion: Clip(clip: \"Walk\"))], \
             layers: [(name: \"A\", motion: Clip(clip: \"Wave\", looping: false), {trigger})])"
        );
        let e = Controller::from_text(&text, &model).unwrap_err().to_string();
        assert!(e.contains(expected), "{e}\nwanted: {expected}");
    }
    // A looping clip would never end the run.
    let text = format!(
        "({params}, states: [(name: \"Walk\", motion: Clip(clip: \"Walk\"))], \
         layers: [(name: \"A\", motion: Clip(clip: \"Wave\"), trigger: (parameter: \"go\"))])"
    );
    let e = Controller::from_text(&text, &model).unwrap_err().to_string();
    assert!(e.contains("clip \"Wave\" needs looping: false"), "{e}");
    // Unknown fields are refused as for every other entry.
    let text = format!(
        "({params}, states: [(name: \"Walk\", motion: Clip(clip: \"Walk\"))], \
         layers: [(name: \"A\", motion: Clip(clip: \"Wave\", looping: false), trigger: (parameter: \"go\", fade: 1))])"
    );
    let e = Controller::from_text(&text, &model).unwrap_err().to_string();
    assert!(e.contains("fade"), "{e}");
}
