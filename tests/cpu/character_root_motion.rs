//! Root motion on the built-in character: taken out of the pose (the root
//! stays over the entity's origin), accumulated across loop wraps, backwards
//! and over long steps exactly as the clip's root travels, and weighted by
//! the blend.

use nalgebra::Vector3;
use proptest::prelude::*;
use std::sync::Arc;
use vkskin::asset::{Model, load_default_character};
use vkskin::character::controller::DEFAULT_CONTROLLER;
use vkskin::character::{Character, Controller, ParameterValue};

/// The built-in character's Walk root travels +z at 1.3 m/s, Run's at 3.4.
const WALK_SPEED: f32 = 1.3;

fn model() -> Arc<Model> {
    Arc::new(load_default_character().unwrap())
}

/// A character playing `motion` with root motion taken from "Root".
fn character(model: &Model, motion: &str) -> Character {
    let text = format!(
        "(parameters: [Float(name: \"speed\", default: 1.3)], root_motion: \"Root\", \
         states: [(name: \"Move\", motion: {motion})])"
    );
    let controller = Controller::from_text(&text, model).unwrap_or_else(|e| panic!("{e}"));
    Character::new(model.rig.clone(), Arc::new(controller)).unwrap()
}

fn root_position(c: &Character) -> Vector3<f32> {
    let root = c.rig().skeleton.find("Root").unwrap();
    c.output().world()[root].column(3).xyz()
}

#[test]
fn walking_moves_the_entity_not_the_pose() {
    let model = model();
    let mut c = character(&model, "Clip(clip: \"Walk\")");
    let period = model.clips[model.find_clip("Walk").unwrap()].duration;
    let mut travelled = Vector3::zeros();
    let frames = (10.0 * period * 60.0).round() as usize;
    for _ in 0..frames {
        c.update(1.0 / 60.0).unwrap();
        travelled += c.root_motion().translation;
        let root = root_position(&c);
        assert!(root.x.abs() < 1e-3 && root.z.abs() < 1e-3, "the visual root left the origin: {root:?}");
    }
    let cycles = frames as f32 / 60.0 / period;
    let per_cycle = travelled.z / cycles;
    let expected = WALK_SPEED * period;
    assert!(
        (per_cycle / expected - 1.0).abs() < 0.01,
        "{per_cycle} m per cycle, the clip's root travels {expected}"
    );
    assert!(travelled.x.abs() < 1e-3, "{travelled:?}");
    assert!((c.ground_speed() - WALK_SPEED).abs() < 1e-3, "ground speed {}", c.ground_speed());
}

#[test]
fn a_blend_travels_at_its_weighted_speed() {
    let model = model();
    let space = "BlendSpace1D(parameter: \"speed\", sync: true, points: [\
                 (at: 1.3, motion: Clip(clip: \"Walk\")), (at: 3.4, motion: Clip(clip: \"Run\"))])";
    let mut c = character(&model, space);
    c.set_named("speed", ParameterValue::Float(2.35)).unwrap(); // half-way
    c.update(0.0).unwrap();
    let mut travelled = 0.0;
    for _ in 0..600 {
        c.update(1.0 / 60.0).unwrap();
        travelled += c.root_motion().translation.z;
    }
    // Each clip's travel per cycle, weighted, over the synced cycle (the
    // periods weighted): (0.5 * 1.43 + 0.5 * 2.38) / (0.5 * 1.1 + 0.5 * 0.7).
    let expected = (0.5 * 1.3 * 1.1 + 0.5 * 3.4 * 0.7) / (0.5 * 1.1 + 0.5 * 0.7) * 10.0;
    assert!((travelled / expected - 1.0).abs() < 0.01, "{travelled} m in 10 s, expected {expected}");
    assert!((c.ground_speed() * 10.0 / expected - 1.0).abs() < 0.01, "ground speed {}", c.ground_speed());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Whatever the steps (backwards, across loops, many cycles at once),
    /// the root motion adds up to the clip root's travel over the clip time
    /// played.
    #[test]
    fn root_motion_accumulates_across_wraps_and_reverse(
        steps in proptest::collection::vec((0.0f32..0.3, -2.0f32..2.0), 1..200),
        huge in 0.0f32..40.0,
    ) {
        let model = model();
        let mut c = character(&model, "Clip(clip: \"Walk\")");
        c.update(0.0).unwrap();
        let (mut travelled, mut played) = (0.0f64, 0.0f64);
        for (dt, rate) in steps.into_iter().chain([(huge, 1.0)]) {
            c.set_rate(rate);
            c.update(dt).unwrap();
            travelled += f64::from(c.root_motion().translation.z);
            played += f64::from(dt) * f64::from(rate);
        }
        let expected = f64::from(WALK_SPEED) * played;
        prop_assert!((travelled - expected).abs() <= 1e-3 * (1.0 + expected.abs()), "{} m for {} s of clip", travelled, played);
    }
}

/// Without `root_motion` in the controller, the pose keeps its root travel
/// and the character reports none.
#[test]
fn without_root_motion_the_pose_moves() {
    let model = model();
    let text = DEFAULT_CONTROLLER.replace("root_motion: \"Root\",", "");
    assert_ne!(text, DEFAULT_CONTROLLER, "the built-in controller declares root motion");
    let controller = Arc::new(Controller::from_text(&text, &model).unwrap());
    let mut c = Character::new(model.rig.clone(), controller).unwrap();
    c.set_named("speed", ParameterValue::Float(1.3)).unwrap();
    for _ in 0..60 {
        c.update(1.0 / 60.0).unwrap();
        assert_eq!(c.root_motion().translation, Vector3::zeros());
    }
    assert!(root_position(&c).z > 0.1, "the clip's root travel stays in the pose");
}
