//! The locomotion controller shipped for RobotExpressive
//! (`assets/controllers/robot_expressive.ron`): it compiles against the
//! model, walks, runs and jumps in its own clip names, and drives a
//! `bench --cpu-only` crowd.

use crate::common::shared_file;
use serde_json::Value;
use std::path::PathBuf;

fn controller() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/controllers/robot_expressive.ron")
}

fn vkskin(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vkskin")).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_robot_walks_runs_and_jumps_under_its_controller() {
    let Some(robot) = shared_file("RobotExpressive/RobotExpressive.glb", "the RobotExpressive controller")
    else {
        return;
    };
    let (robot, ron) = (robot.to_str().unwrap(), controller());
    let trace = vkskin(&[
        "simulate",
        robot,
        "--controller",
        ron.to_str().unwrap(),
        "--json",
        "--fps",
        "30",
        "--duration",
        "4",
        "--set",
        "0.5:speed=2.5",
        "--set",
        "2:jump",
    ]);
    let frames: Vec<Value> = trace.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let has = |clip: &str| {
        frames.iter().any(|f| f["weights"].get(clip).and_then(Value::as_f64).unwrap_or(0.0) > 0.2)
    };
    assert!(has("Idle") && has("Walking") && has("Running") && has("Jump"), "idle, walk/run blend, jump");
    assert!(frames.iter().any(|f| f["state"] == "Jump") && frames.last().unwrap()["state"] == "Locomotion");
}

#[test]
fn a_cpu_only_crowd_plays_the_shipped_controller() {
    let Some(robot) = shared_file("RobotExpressive/RobotExpressive.glb", "the RobotExpressive crowd") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ron = controller();
    let args = [
        "bench",
        "--cpu-only",
        robot.to_str().unwrap(),
        "--controller",
        ron.to_str().unwrap(),
        "--characters",
        "30",
        "--frames",
        "2",
        "--out",
        dir.path().to_str().unwrap(),
    ];
    vkskin(&args);
    let results: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("results.json")).unwrap()).unwrap();
    let model = vkskin::asset::load(&robot).unwrap();
    let palette = model.palette_len() as u64 * 64;
    for e in results["entries"].as_array().unwrap() {
        assert!(e["model"].as_str().unwrap().ends_with("RobotExpressive.glb"), "{e}");
        // 74 nodes; the palette holds each skin's joints (43 per skin).
        assert_eq!(
            (e["joints"].as_u64(), e["palette_bytes_per_character"].as_u64()),
            (Some(74), Some(palette))
        );
        assert!(e["cpu_pose_us"]["median"].as_f64().unwrap() > 0.0);
    }
}
