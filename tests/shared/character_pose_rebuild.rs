//! `dump --controller` of the shared models, rebuilt from its `clips` and
//! `layers` by a second, simple implementation (`common::pose_rebuild`):
//! crossfades, blend spaces in phase, override and additive layers with
//! masks, root motion, animated morph weights, and STEP and CUBICSPLINE
//! tracks blended.

use crate::common::pose_rebuild::check_rebuilds;
use crate::common::shared_file;

#[test]
fn fox_crossfades_blend_spaces_and_an_additive_head() {
    let Some(fox) = shared_file("Fox/Fox.glb", "the Fox rebuild") else { return };
    let controller = r#"(
        parameters: [Float(name: "speed", default: 0.0, min: 0.0, max: 5.0)],
        root_motion: "b_Root_00",
        states: [
            (name: "Survey", motion: Clip(clip: "Survey")),
            (name: "Move", motion: BlendSpace1D(parameter: "speed", sync: true, smoothing: 0.2,
                points: [(at: 1.0, motion: Clip(clip: "Walk")), (at: 3.0, motion: Clip(clip: "Run"))])),
        ],
        transitions: [(from: "Survey", to: "Move", when: ["speed > 0.1"], duration: 0.5, curve: Linear)],
        layers: [
            (name: "look", motion: Clip(clip: "Survey"), blending: Additive, weight: 0.8,
             reference: (clip: "Survey", time: 1.0), mask: [(joint: "b_Neck_04")]),
        ],
    )"#;
    check_rebuilds(
        &fox,
        controller,
        &[
            &["--time", "1.3"],
            &["--set", "0.5:speed=2", "--time", "0.8"],
            &["--set", "0.5:speed=2", "--time", "2.4917"],
        ],
    );
}

#[test]
fn robot_expressive_waves_over_locomotion_with_its_face_morphs() {
    let Some(robot) = shared_file("RobotExpressive/RobotExpressive.glb", "the RobotExpressive rebuild")
    else {
        return;
    };
    let controller = r#"(
        parameters: [Float(name: "speed", default: 0.0, min: 0.0, max: 5.0), Float(name: "wave", default: 0.0, min: 0.0, max: 1.0)],
        initial: "Idle",
        states: [
            (name: "Idle", motion: Clip(clip: "Idle")),
            (name: "Move", motion: BlendSpace1D(parameter: "speed", sync: true,
                points: [(at: 1.0, motion: Clip(clip: "Walking")), (at: 4.0, motion: Clip(clip: "Running"))])),
        ],
        transitions: [
            (from: "Idle", to: "Move", when: ["speed > 0.1"], duration: 0.4),
            (from: "Move", to: "Idle", when: ["speed <= 0.1"], duration: 0.4),
        ],
        layers: [
            (name: "wave", motion: Clip(clip: "Wave", looping: false), weight: "wave",
             mask: [(joint: "Abdomen", weight: 0.3), (joint: "Torso", weight: 0.7), (joint: "Shoulder.R")]),
            (name: "yes", motion: Clip(clip: "Yes"), blending: Additive, weight: 0.5, mask: [(joint: "Neck")]),
        ],
    )"#;
    check_rebuilds(
        &robot,
        controller,
        &[
            &["--set", "0:wave=1", "--time", "0.7"],
            &["--set", "0.2:speed=2.5", "--set", "0.3:wave=0.6", "--time", "0.45"],
            &["--set", "0.2:speed=3", "--set", "1:speed=0", "--set", "0:wave=0.9", "--time", "1.2"],
        ],
    );
}

#[test]
fn wizard_and_cesium_man_layer_clips_over_themselves() {
    let (Some(wizard), Some(cesium)) = (
        shared_file("Wizard/Wizard.glb", "the Wizard rebuild"),
        shared_file("CesiumMan/CesiumMan.glb", "the CesiumMan rebuild"),
    ) else {
        return;
    };
    let wizard_controller = r#"(
        parameters: [Float(name: "cast", default: 0.0, min: 0.0, max: 1.0)],
        root_motion: "Root",
        states: [(name: "Walk", motion: Blend(inputs: [(motion: Clip(clip: "Walk"), weight: 0.7), (motion: Clip(clip: "Run", speed: 1.3), weight: 0.3)], sync: true))],
        layers: [(name: "cast", motion: Clip(clip: "Spell1"), weight: "cast", mask: [(joint: "Torso"), (joint: "UpperLeg.L", weight: 0.2)])],
    )"#;
    check_rebuilds(&wizard, wizard_controller, &[&["--set", "0.3:cast=0.5", "--time", "0.9"]]);
    // CesiumMan's one clip has no name: by index, over itself later on.
    let cesium_controller = r#"(
        parameters: [Float(name: "mix", default: 0.4, min: 0.0, max: 1.0)],
        states: [(name: "Walk", motion: Clip(clip: "0"))],
        layers: [(name: "late", motion: Clip(clip: "0", speed: 1.7), weight: "mix")],
    )"#;
    let docs = check_rebuilds(&cesium, cesium_controller, &[&["--set", "0.6:mix=0.4", "--time", "1.1"]]);
    assert!(
        docs[0]["clips"][0]["clip"].is_null() && docs[0]["clips"][0]["index"] == 0,
        "{}",
        docs[0]["clips"]
    );
}

#[test]
fn step_and_cubic_spline_tracks_blend_as_sampled() {
    let Some(file) = shared_file("InterpolationTest/InterpolationTest.glb", "the InterpolationTest rebuild")
    else {
        return;
    };
    // Every interpolation at once, blended, and crossfaded into the
    // cubic-spline clips of the same nodes.
    let controller = r#"(
        parameters: [Bool(name: "go", default: false)],
        states: [
            (name: "All", motion: Blend(inputs: [
                (motion: Clip(clip: "Step Scale"), weight: 1.0), (motion: Clip(clip: "Linear Scale"), weight: 1.0),
                (motion: Clip(clip: "CubicSpline Scale"), weight: 1.0), (motion: Clip(clip: "Step Rotation"), weight: 1.0),
                (motion: Clip(clip: "CubicSpline Rotation"), weight: 1.0), (motion: Clip(clip: "Linear Rotation"), weight: 1.0),
                (motion: Clip(clip: "Step Translation"), weight: 1.0), (motion: Clip(clip: "CubicSpline Translation"), weight: 1.0),
                (motion: Clip(clip: "Linear Translation"), weight: 1.0)])),
            (name: "Cubic", motion: Blend(inputs: [(motion: Clip(clip: "CubicSpline Rotation"), weight: 2.0), (motion: Clip(clip: "CubicSpline Translation"), weight: 1.0)])),
        ],
        transitions: [(from: "All", to: "Cubic", when: ["go"], duration: 0.6)],
    )"#;
    check_rebuilds(
        &file,
        controller,
        &[&["--time", "0.35"], &["--time", "1.55"], &["--set", "0.9:go=true", "--time", "1.23"]],
    );
}
