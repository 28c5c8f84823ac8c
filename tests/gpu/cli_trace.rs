//! `--trace FILE.json` end to end (`render` and a tiny `bench`, validation
//! on): the trace is Chrome trace-event JSON, every complete event has a
//! start and a duration, the CPU spans of the frame path are there (pose,
//! palette write, record, submit, wait), the GPU clock is stated, and each
//! GPU span (the frame, palette upload, skin, every pass) lies inside its
//! frame's submit-to-fence window; with calibrated timestamps (lavapipe has
//! them) and with them turned off (aligned at submit); a crowd's pool work
//! inside the calls that wait for it. Skips without a device, unless
//! VKSKIN_NO_SKIP is set.

use crate::common::trace;
use std::path::PathBuf;
use std::process::Command;

const CPU_SPANS: [&str; 5] = ["pose", "palette write", "record", "submit", "wait"];

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vkskin-trace-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

/// Runs vkskin with `args` (and `env`), expecting success.
fn vkskin(args: &[&str], env: &[(&str, &str)]) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_vkskin"));
    command.args(args);
    for (k, v) in env {
        command.env(k, v);
    }
    let run = command.output().expect("run vkskin");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "vkskin {} failed: {stderr}", args.join(" "));
}

/// `render --frames 4 --passes 5 --trace`: every frame's GPU phases,
/// named like the passes' debug-utils regions, inside its window.
fn render_trace(tag: &str, env: &[(&str, &str)]) -> trace::Trace {
    let dir = scratch(tag);
    let (png, json) = (dir.join("out.png"), dir.join("trace.json"));
    let (png, json_arg) = (png.to_str().unwrap(), json.to_str().unwrap());
    let model = "assets/default_character.glb";
    let args = [
        "render",
        model,
        "--frames",
        "4",
        "--passes",
        "5",
        "--validation",
        "--out",
        png,
        "--trace",
        json_arg,
    ];
    vkskin(&args, env);
    let t = trace::check(&json, &CPU_SPANS);
    let gpu_frames = t.gpu().filter(|s| s.name == "GPU frame").count();
    assert_eq!(gpu_frames, 4, "one GPU frame span per frame");
    assert_eq!(t.cpu_count("submit"), 4, "one submit span per frame");
    for name in ["skin", "shadow cascade 0", "shadow cascade 3", "main pass"] {
        assert_eq!(t.gpu().filter(|s| s.name == name).count(), 4, "GPU spans named {name:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    t
}

#[test]
fn render_trace_places_gpu_spans_by_calibrated_timestamps() {
    if crate::common::context().is_none() {
        return;
    }
    let t = render_trace("calibrated", &[]);
    // lavapipe offers VK_EXT_calibrated_timestamps; another device may not.
    assert!(t.gpu_clock.starts_with("calibrated") || t.gpu_clock.starts_with("aligned"));
}

#[test]
fn render_trace_without_calibration_aligns_at_submit() {
    if crate::common::context().is_none() {
        return;
    }
    let t = render_trace("aligned", &[("VKSKIN_TEST_NO_CALIBRATED_TIMESTAMPS", "1")]);
    assert!(t.gpu_clock.starts_with("aligned at submit"), "{}", t.gpu_clock);
}

#[test]
fn tiny_bench_trace_names_configurations_and_places_gpu_spans() {
    if crate::common::context().is_none() {
        return;
    }
    let dir = scratch("bench");
    let json = dir.join("trace.json");
    let out = dir.join("out");
    let args = [
        "bench",
        "--characters",
        "1",
        "--frames",
        "3",
        "--passes",
        "5",
        "--skinning",
        "compute,vertex",
        "--upload",
        "staged",
        "--validation",
        "--out",
        out.to_str().unwrap(),
        "--trace",
        json.to_str().unwrap(),
    ];
    vkskin(&args, &[]);
    let t = trace::check(&json, &CPU_SPANS);
    assert!(t.cpu_count("configuration") >= 2, "one configuration span per renderer");
    assert!(t.gpu().any(|s| s.name == "skin") && t.gpu().any(|s| s.name == "palette upload"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A crowd on two threads past a chunk (2,048 characters): the work the
/// pool's workers do for the recording thread is in the trace too, each
/// span inside the call that waited for it (`pool_trace`): the update's
/// tasks in `pose`, the upload's pieces in `palette write`, the draw
/// order's chunks in `foresee` or `record`.
#[test]
fn a_crowd_traces_its_pool_work_inside_the_calls_that_wait_for_it() {
    if crate::common::context().is_none() {
        return;
    }
    let dir = scratch("pool");
    let (json, out) = (dir.join("trace.json"), dir.join("out"));
    let args = [
        "bench",
        "--threads",
        "2",
        "--characters",
        "2100",
        "--pose",
        "gpu",
        "--frames",
        "2",
        "--passes",
        "1",
        "--skinning",
        "compute",
        "--upload",
        "inplace",
        "--quick",
        "--validation",
        "--out",
        out.to_str().unwrap(),
        "--trace",
        json.to_str().unwrap(),
    ];
    vkskin(&args, &[]);
    let t = trace::check(&json, &CPU_SPANS);
    let named = |name: &str| -> Vec<&trace::Span> {
        t.spans.iter().filter(|s| s.pid == 1 && s.name == name).collect()
    };
    for (work, callers) in [
        ("pose tasks", &["pose"][..]),
        ("upload piece", &["palette write"]),
        ("chunk", &["foresee", "record"]),
    ] {
        let spans = named(work);
        assert!(!spans.is_empty(), "no {work:?} spans");
        for span in spans {
            let held = callers.iter().any(|c| named(c).iter().any(|c| c.holds(span)));
            assert!(held, "{span:?} outside any {callers:?} span");
        }
    }
    // Only the pool's work runs elsewhere: the frame path's own spans are
    // on the recording thread.
    let recording = named("record")[0].tid;
    assert!(CPU_SPANS.iter().all(|name| named(name).iter().all(|s| s.tid == recording)));
    let _ = std::fs::remove_dir_all(&dir);
}
