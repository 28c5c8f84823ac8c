//! Layers over the state machine on the built-in character: an additive
//! upper-body layer (Jump's arms and chest, taken as a difference from
//! Jump's first key) over Walk, an override layer fading down the spine, and
//! their weights.

use std::sync::Arc;
use vkskin::anim::Transform;
use vkskin::asset::{Model, load_default_character};
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
    assert_eq!(upper.len(), 11, "chest, neck, head and two arms of four joints");
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
