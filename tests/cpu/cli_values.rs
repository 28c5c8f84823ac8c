//! Command-line values as a hostile user types them, run as the binary:
//! empty paths, negative numbers, numbers out of range or not finite,
//! `--set` times past the end, level options without a level, names with
//! terminal escapes in the `simulate` trace. Each refusal is one line
//! naming the flag (and the range), exit code 1, never clap's `-- -1` tip;
//! everything here is refused before a GPU is opened, so no device is needed.

use std::process::{Command, Output};

const GLB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/default_character.glb");

fn vkskin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vkskin")).args(args).output().unwrap()
}

/// The run fails with exit code 1 and its last stderr line is `line`
/// (a first line may say which controller was found).
#[track_caller]
fn refused(args: &[&str], line: &str) {
    let o = vkskin(args);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let what = format!("vkskin {}: {stderr}", args.join(" "));
    assert_eq!(o.status.code(), Some(1), "{what}");
    assert!(o.stdout.is_empty(), "{what}: wrote to stdout");
    assert!(!stderr.contains("tip:") && !stderr.contains("-- -"), "{what}: clap's tip");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(last.starts_with(line), "{what}: expected {line}");
    assert!(stderr.lines().filter(|l| !l.starts_with("vkskin: controller: ")).count() == 1, "{what}");
}

#[track_caller]
fn accepted(args: &[&str]) -> String {
    let o = vkskin(args);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "vkskin {}: {stderr}", args.join(" "));
    String::from_utf8(o.stdout).unwrap() + &stderr
}

#[test]
fn an_empty_path_names_its_flag() {
    let empty = "the path is empty";
    refused(&["simulate", GLB, "--controller", ""], &format!("vkskin: --controller: {empty}"));
    refused(&["simulate", ""], &format!("vkskin: MODEL: {empty}"));
    refused(&["inspect", ""], &format!("vkskin: MODEL: {empty}"));
    refused(&["render", GLB, "--out", ""], &format!("vkskin: --out: {empty}"));
    refused(
        &["render", GLB, "--controller", "", "--out", "x.png"],
        &format!("vkskin: --controller: {empty}"),
    );
    refused(&["dump", GLB, "--out", ""], &format!("vkskin: --out: {empty}"));
    refused(&["view", "--screenshot", ""], &format!("vkskin: --screenshot: {empty}"));
    refused(&["view", ""], &format!("vkskin: MODEL: {empty}"));
    refused(&["bench", "--out", ""], &format!("vkskin: --out: {empty}"));
    refused(&["bench", "", "--out", "d"], &format!("vkskin: MODELS: {empty}"));
    refused(&["generate-default", "--out", ""], &format!("vkskin: --out: {empty}"));
}

#[test]
fn negative_numbers_are_values() {
    // Where negative values mean something, they are taken.
    let trace = accepted(&["simulate", GLB, "--set", "0:speed=-1", "--duration", "0", "--json"]);
    assert!(trace.contains("\"frame\":0"), "{trace}");
    let dump = accepted(&["dump", GLB, "--clip", "Walk", "--time", "-0.25"]);
    assert!(dump.contains("\"time\":-0.25"), "{}", &dump[..dump.len().min(200)]);
    // Elsewhere the message says the range, naming the flag.
    refused(&["simulate", GLB, "--fps", "-1"], "vkskin: --fps: takes 1 to 1000 (per second), not -1");
    refused(
        &["simulate", GLB, "--duration", "-1"],
        "vkskin: --duration: takes a finite number of seconds >= 0, not -1",
    );
    refused(
        &["render", GLB, "--frames", "-1", "--out", "x.png"],
        "vkskin: --frames: takes a whole number from 1 to 10000, not -1",
    );
    refused(
        &["render", GLB, "--characters", "-2", "--out", "x.png"],
        "vkskin: --characters: takes a whole number from 1 to 100000, not -2",
    );
    refused(&["view", "--frames", "-5"], "vkskin: --frames: takes a whole number of at least 1, not -5");
    refused(
        &["view", "--reload-every", "-5"],
        "vkskin: --reload-every: takes a whole number of at least 1, not -5",
    );
    refused(
        &["bench", "--frames", "-1", "--out", "d"],
        "vkskin: --frames: takes a whole number from 1 to 1000000, not -1",
    );
    refused(
        &["bench", "--characters", "1,-3", "--out", "d"],
        "vkskin: --characters: takes a whole number from 1 to 100000, not -3",
    );
    refused(
        &["simulate", GLB, "--set", "-1:speed=1"],
        "vkskin: --set -1:speed=1: time -1 is not a finite number of seconds >= 0",
    );
}

#[test]
fn numbers_are_finite_and_in_range() {
    for fps in ["0", "0.5", "1001", "inf", "NaN", "1e400"] {
        refused(&["simulate", GLB, "--fps", fps], "vkskin: --fps: takes 1 to 1000 (per second), not");
        refused(&["render", GLB, "--fps", fps, "--out", "x.png"], "vkskin: --fps: takes 1 to 1000");
    }
    refused(
        &["simulate", GLB, "--duration", "inf"],
        "vkskin: --duration: takes a finite number of seconds >= 0, not inf",
    );
    refused(
        &["simulate", GLB, "--duration", "1e6", "--fps", "1000"],
        "vkskin: --duration 1000000 at --fps 1000 is more than",
    );
    refused(&["dump", GLB, "--time", "inf"], "vkskin: --time: takes a finite number of seconds, not inf");
    refused(
        &["render", GLB, "--time", "1e39", "--out", "x.png"],
        "vkskin: --time: takes a finite number of seconds, not 1e39",
    );
    refused(
        &["render", GLB, "--frames", "0", "--out", "x.png"],
        "vkskin: --frames: takes a whole number from 1 to 10000, not 0",
    );
    refused(
        &["render", GLB, "--frames", "100000000", "--out", "x.png"],
        "vkskin: --frames: takes a whole number from 1 to 10000",
    );
    refused(
        &["render", GLB, "--characters", "100001", "--out", "x.png"],
        "vkskin: --characters: takes a whole number from 1 to 100000",
    );
    refused(
        &["view", "--characters", "0"],
        "vkskin: --characters: takes a whole number from 1 to 100000, not 0",
    );
    for command in [&["render", GLB, "--out", "x.png"][..], &["view"]] {
        for limit in ["--max-skinned-vertices", "--max-triangles"] {
            let args = [command, &[limit, "0"]].concat();
            refused(&args, &format!("vkskin: {limit}: takes a whole number of at least 1, not 0"));
        }
        for ms in ["0.5", "60001", "-1", "abc", "nan", "inf"] {
            let args = [command, &["--gpu-frame-budget", ms]].concat();
            refused(&args, &format!("vkskin: --gpu-frame-budget: takes 1 to 60000 (milliseconds), not {ms}"));
        }
    }
}

/// The span a controller render simulates is capped before any work: the
/// model's sidecar (assets/default_character.ron) is its controller here.
#[test]
fn render_refuses_hours_of_work_up_front() {
    refused(
        &["render", GLB, "--time", "1e8", "--out", "x.png"],
        "vkskin: --time 100000000 and --frames 1 at --fps 30 simulate 3.000000001e9 frames, more than the 100000 one render may",
    );
    refused(
        &["render", GLB, "--time", "3001", "--frames", "10000", "--fps", "30", "--out", "x.png"],
        "vkskin: --time 3001 and --frames 10000 at --fps 30 simulate 100030 frames",
    );
    refused(
        &["render", GLB, "--time", "-1", "--out", "x.png"],
        "vkskin: --time -1: a controller is simulated from 0 s, so --time takes seconds >= 0",
    );
    refused(
        &["render", GLB, "--characters", "2000", "--frames", "10000", "--clip", "Walk", "--out", "x.png"],
        "vkskin: --characters 2000 for 10000 frames poses 20000000 character-frames, more than the 10000000",
    );
}

#[test]
fn a_set_after_the_last_frame_is_an_error() {
    refused(
        &["simulate", GLB, "--set", "1e308:speed=1"],
        "vkskin: --set 1e308:speed=1: time 1e308 s is after the last frame at --duration 5 and --fps 60 (5 s): it would never apply",
    );
    refused(
        &["simulate", GLB, "--set", "2.1:jump", "--duration", "2", "--fps", "10"],
        "vkskin: --set 2.1:jump: time 2.1 s is after",
    );
    // The last frame's own time is within.
    accepted(&["simulate", GLB, "--set", "2:jump", "--duration", "2", "--fps", "10"]);
    refused(
        &["render", GLB, "--set", "1e308:speed=1", "--frames", "3", "--out", "x.png"],
        "vkskin: --set 1e308:speed=1: time 1e308 s is after the last frame (0.0666",
    );
}

#[test]
fn level_options_need_a_level() {
    for (flag, value) in [("--spawn", Some("wall")), ("--authority", Some("movement")), ("--no-ik", None)] {
        let mut args = vec!["simulate", GLB, flag];
        args.extend(value);
        refused(&args, &format!("vkskin: {flag} needs --level"));
        if let Some(value) = value {
            refused(
                &["render", GLB, flag, value, "--out", "x.png"],
                &format!("vkskin: {flag} needs --level"),
            );
        }
    }
    refused(
        &["render", GLB, "--level", "demo", "--characters", "2", "--out", "x.png"],
        "vkskin: --characters and --level exclude each other",
    );
}

/// Driven at 3e38 m/s into the demo level's wall, the character stays on
/// its side, at a finite position, with one warning naming the clamp.
#[test]
fn a_hostile_speed_is_clamped_with_one_warning() {
    let o = vkskin(&[
        "simulate",
        GLB,
        "--level",
        "demo",
        "--spawn",
        "wall",
        "--authority",
        "movement",
        "--set",
        "0:speed=3e38",
        "--duration",
        "2",
        "--fps",
        "30",
        "--json",
        "--no-ik",
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(
        warnings,
        ["vkskin: warning: --set 0:speed=3e38: faster than the mover's 50 m/s: it moves at 50 m/s"],
        "{stderr}"
    );
    let stdout = String::from_utf8(o.stdout).unwrap();
    for line in stdout.lines() {
        let frame: serde_json::Value = serde_json::from_str(line).unwrap();
        let p: Vec<f64> = frame["position"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        // The wall's near face is at z = 3.85, the capsule's radius 0.3.
        assert!(p.iter().all(|v| v.is_finite()) && p[2] + 0.3 <= 3.85 + 1e-4, "{line}");
    }
}

/// State names with terminal escapes stay escaped in the text trace, as in
/// the JSON and in errors.
#[test]
fn the_text_trace_escapes_names() {
    let dir = tempfile::tempdir().unwrap();
    let controller = dir.path().join("escapes.ron");
    let ron = "(parameters: [Trigger(name: \"go\")], initial: \"Idle\u{1b}[2J\", states: [\
               (name: \"Idle\u{1b}[2J\", motion: Clip(clip: \"Idle\")), (name: \"Walk\u{7}\", motion: Clip(clip: \"Walk\"))], \
               transitions: [(from: \"*\", to: \"Walk\u{7}\", when: [\"go\"], duration: 0.5)])";
    std::fs::write(&controller, ron).unwrap();
    let path = controller.to_str().unwrap();
    let text = accepted(&[
        "simulate",
        GLB,
        "--controller",
        path,
        "--set",
        "0.1:go",
        "--duration",
        "0.2",
        "--fps",
        "10",
    ]);
    assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text:?}");
    assert!(text.contains("Idle\\u{1b}[2J -> Walk\\u{7}"), "{text}");
    let json = accepted(&["simulate", GLB, "--controller", path, "--duration", "0", "--json"]);
    assert!(json.contains(r#""state":"Idle\u001b[2J""#), "{json}");
}
