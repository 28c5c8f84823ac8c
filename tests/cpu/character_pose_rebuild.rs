//! `dump --controller` of the built-in character, rebuilt from its
//! `clips` and `layers` by a second, simple implementation
//! (`common::pose_rebuild`): crossfades, the phase-synced blend space, the
//! jump, a frame between frames, layers over the built-in clips, and in
//! the demo level with foot IK.

use crate::common::pose_rebuild::check_rebuilds;
use std::path::PathBuf;

fn built_in() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/default_character.glb")
}

fn built_in_controller() -> String {
    std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/default_character.ron"))
        .unwrap()
}

#[test]
fn crossfades_blend_spaces_and_jumps_rebuild_from_the_clips_list() {
    let speed = "0.5:speed=2";
    let docs = check_rebuilds(
        &built_in(),
        &built_in_controller(),
        &[
            &["--time", "0"],
            // Idle -> Locomotion half way: three clips in the base layer.
            &["--set", speed, "--time", "0.65"],
            // Walk and run in phase, a time between two 60 Hz frames.
            &["--set", speed, "--time", "2.0083"],
            &["--set", speed, "--set", "2.5:jump", "--time", "2.9", "--fps", "30"],
        ],
    );
    let base_clips =
        |d: &serde_json::Value| d["clips"].as_array().unwrap().iter().filter(|c| c["layer"] == 0).count();
    assert_eq!(base_clips(&docs[1]), 3, "the crossfade samples Idle, Walk and Run: {}", docs[1]["clips"]);
    assert_eq!(docs[2]["frame"], 120, "2.0083 s falls after frame 120 at 60 Hz");
    assert!(docs[3]["clips"].as_array().unwrap().iter().any(|c| c["clip"] == "Jump"), "{}", docs[3]["clips"]);
}

/// Layers over the built-in clips: an override masked to the upper body
/// (fading down the spine), an additive one with its own reference, a
/// layer at weight 0 that must not apply.
const LAYERED: &str = r#"(
    parameters: [
        Float(name: "speed", default: 0.0, min: 0.0, max: 5.0),
        Float(name: "gesture", default: 0.0, min: 0.0, max: 1.0),
        Float(name: "off", default: 0.0, min: 0.0, max: 1.0),
    ],
    root_motion: "Root",
    states: [
        (name: "Idle", motion: Clip(clip: "Idle")),
        (name: "Move", motion: BlendSpace1D(parameter: "speed", sync: true,
            points: [(at: 1.3, motion: Clip(clip: "Walk")), (at: 3.4, motion: Clip(clip: "Run"))])),
    ],
    transitions: [(from: "Idle", to: "Move", when: ["speed > 0.1"], duration: 0.3)],
    layers: [
        (name: "gesture", motion: Clip(clip: "Jump"), weight: "gesture",
         mask: [(joint: "Spine", weight: 0.5), (joint: "Chest", weight: 1.0), (joint: "Neck", weight: 0.25, children: false)]),
        (name: "sway", motion: Blend(inputs: [(motion: Clip(clip: "Run"), weight: 1.0), (motion: Clip(clip: "Walk"), weight: 3.0)]),
         blending: Additive, weight: 0.7, reference: (clip: "Idle", time: 0.4)),
        (name: "off", motion: Clip(clip: "Run"), weight: "off"),
    ],
)"#;

#[test]
fn override_and_additive_layers_rebuild_from_the_clips_list() {
    let docs = check_rebuilds(
        &built_in(),
        LAYERED,
        &[
            &["--set", "0:gesture=0.6", "--time", "0.4"],
            &["--set", "0:gesture=1", "--set", "0.2:speed=2.2", "--time", "1.37"],
            &["--set", "0:gesture=0.3", "--set", "0.2:speed=1", "--time", "0.51"],
        ],
    );
    for d in &docs {
        let layers = d["layers"].as_array().unwrap();
        assert_eq!(layers.len(), 4, "{}", d["layers"]);
        assert_eq!(layers[1]["mode"], "override");
        assert_eq!(layers[2]["mode"], "additive");
        assert_eq!(layers[2]["reference"]["clip"], "Idle");
        assert_eq!(layers[3]["weight"], 0.0);
        let in_layer = |l: u64| d["clips"].as_array().unwrap().iter().filter(|c| c["layer"] == l).count();
        assert_eq!((in_layer(1), in_layer(2), in_layer(3)), (1, 2, 0), "{}", d["clips"]);
    }
    let mask = docs[0]["layers"][1]["mask_joints"].as_array().unwrap();
    assert!(mask.iter().any(|j| j["name"] == "Spine" && j["weight"] == 0.5), "{mask:?}");
    assert!(!mask.iter().any(|j| j["name"] == "UpperLeg.L"), "legs are outside the mask: {mask:?}");
}

#[test]
fn a_level_frame_rebuilds_with_its_ik_joints() {
    let docs = check_rebuilds(
        &built_in(),
        &built_in_controller(),
        &[&["--level", "demo", "--spawn", "stairs", "--set", "0.2:speed=1.3", "--time", "1.5"]],
    );
    let ik = docs[0]["ik"].as_array().unwrap();
    assert!(ik.iter().any(|j| j["name"] == "UpperLeg.L"), "foot IK moved the legs: {ik:?}");
    assert!(docs[0]["position"].is_array() && docs[0]["feet"].is_array(), "the level's fields are there");
}

/// `vkskin ARGS` is refused with one line containing `expected`.
fn refused(args: &[&str], expected: &str) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_vkskin")).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{args:?} succeeded");
    assert!(stderr.contains(expected), "{args:?}: {stderr}");
}

#[test]
fn a_controller_dump_refuses_what_it_cannot_mean() {
    let ron = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/default_character.ron");
    refused(&["dump", "--set", "1:speed=2", "--time", "1"], "--set needs --controller");
    refused(&["dump", "--level", "demo"], "--level needs --controller");
    refused(&["dump", "--controller", ron, "--clip", "Walk"], "cannot be used with");
    refused(&["dump", "--controller", ron, "--time", "-1"], "starts at 0 s");
    refused(&["dump", "--controller", ron, "--set", "2:speed=1", "--time", "1"], "would never apply");
    refused(&["dump", "--controller", ron, "--level", "demo", "--time", "0.01"], "must be a frame's");
    refused(&["dump", "--controller", ron, "--spawn", "stairs", "--time", "1"], "--spawn needs --level");
}
