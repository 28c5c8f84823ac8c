//! `vkskin bench --quick --validation` end to end on the Vulkan device
//! (lavapipe without a GPU): it exits 0 with validation and synchronization
//! validation silent, and `results.json` holds compute and vertex skinning,
//! two character counts, two pass counts and every upload mode, every timing
//! finite (and positive wherever the phase ran), 0 palette bytes for paused
//! characters in dirty mode, and three SVG plots that parse as SVG. Skips
//! without a device, unless VKSKIN_NO_SKIP is set.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

/// Runs `vkskin bench ARGS --out DIR` (DIR a fresh scratch folder named
/// after `tag`), checks that it exited 0, and returns DIR, the parsed
/// `results.json` and the run's stderr.
fn run_bench(tag: &str, args: &[&str]) -> (PathBuf, Value, String) {
    let out = std::env::temp_dir().join(format!("vkskin-bench{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(env!("CARGO_BIN_EXE_vkskin"))
        .arg("bench")
        .args(args)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run vkskin bench");
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "vkskin bench {} failed: {stderr}", args.join(" "));
    let text = std::fs::read_to_string(out.join("results.json")).expect("results.json");
    let results: Value = serde_json::from_str(&text).expect("results.json is JSON");
    (out, results, stderr)
}

#[test]
fn quick_bench_writes_complete_results_and_plots() {
    if crate::common::context().is_none() {
        return;
    }
    let (out, results, stderr) = run_bench("", &["--quick", "--validation"]);
    assert!(!stderr.contains("skipped"), "a configuration was skipped: {stderr}");

    for key in ["device", "driver", "date", "commit"] {
        let v = results["header"][key].as_str().unwrap_or_default();
        assert!(!v.is_empty(), "header.{key} is empty");
    }
    let entries = results["entries"].as_array().expect("entries");
    let set = |key: &str| -> BTreeSet<String> { entries.iter().map(|e| e[key].to_string()).collect() };
    assert!(set("skinning").contains("\"compute\"") && set("skinning").contains("\"vertex\""));
    assert!(set("characters").len() >= 2, "character counts: {:?}", set("characters"));
    assert!(set("passes").len() >= 2, "pass counts: {:?}", set("passes"));
    for upload in ["inplace", "staged", "dirty"] {
        assert!(set("upload").contains(&format!("\"{upload}\"")), "no {upload} entries");
    }

    for e in entries {
        let name = format!("{} {} {} {} passes", e["characters"], e["skinning"], e["upload"], e["passes"]);
        let stats = |v: &Value| -> [f64; 2] {
            [v["median"].as_f64().expect("median"), v["p95"].as_f64().expect("p95")]
        };
        let gpu = &e["gpu_us"];
        let mut timings = vec![
            ("cpu_pose_us", stats(&e["cpu_pose_us"])),
            ("gpu frame", stats(&gpu["frame"])),
            ("copy kernel", stats(&e["copy_kernel_us"])),
            ("gpu upload", stats(&gpu["upload"])),
            ("gpu skin", stats(&gpu["skin"])),
        ];
        let passes = gpu["passes"].as_array().expect("passes");
        assert_eq!(passes.len() as u64, e["passes"].as_u64().expect("passes"), "{name}: one time per pass");
        timings.extend(passes.iter().map(|p| ("gpu pass", stats(p))));
        for (what, [median, p95]) in &timings {
            assert!(median.is_finite() && p95.is_finite() && *median >= 0.0, "{name}: {what} {median}/{p95}");
            assert!(p95 >= median, "{name}: {what}: p95 {p95} below the median {median}");
        }
        // Host-timed figures are left out when lost in the noise; present,
        // they are positive medians under their p95.
        for key in ["copy_kernel_wall_us", "skin_wall_us", "staged_copy_wall_us", "buffer_copy_wall_us"] {
            if let Some(v) = e.get(key) {
                let [median, p95] = stats(v);
                assert!(median > 0.0 && p95 >= median, "{name}: {key} {median}/{p95}");
            }
        }
        // Phases that ran took time: the frame, every pass, the copy kernel,
        // the skin dispatch (compute paths) and the staged copies of poses
        // that changed.
        let ran = |what: &str| timings.iter().filter(|(w, _)| *w == what).all(|(_, [m, _])| *m > 0.0);
        assert!(ran("gpu frame") && ran("gpu pass") && ran("copy kernel"), "{name}: {timings:?}");
        let compute = e["skinning"].as_str().is_some_and(|s| s.ends_with("compute"));
        assert!(!compute || ran("gpu skin"), "{name}: no skin time");
        let paused = e["paused"].as_bool().expect("paused");
        if e["upload"] == "dirty" && paused {
            assert_eq!(e["palette_bytes"], 0, "{name}: paused characters uploaded palettes");
        } else {
            assert!(e["palette_bytes"].as_u64().expect("bytes") > 0, "{name}: no palette bytes");
        }
    }

    for plot in ["frame_time_vs_characters.svg", "upload_vs_characters.svg", "skin_throughput.svg"] {
        let svg = std::fs::read_to_string(out.join(plot)).unwrap_or_else(|e| panic!("{plot}: {e}"));
        let head = svg.trim_start();
        assert!(head.starts_with("<svg") || head.starts_with("<?xml"), "{plot} is not SVG");
        assert!(svg.contains("</svg>"), "{plot} is cut short");
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// The dual-quaternion modes measure both places the matrices can be split
/// (`dqs_split` "shader" and "cpu", on the compute and the vertex path),
/// with validation silent over the CPU-split palettes' staged copies too.
#[test]
fn dual_quaternion_modes_measure_both_splits() {
    if crate::common::context().is_none() {
        return;
    }
    let (out, results, _) = run_bench(
        "-dqs",
        &[
            "--quick",
            "--validation",
            "--skinning",
            "dqs-compute,dqs-vertex",
            "--upload",
            "staged,inplace",
            "--characters",
            "2",
            "--passes",
            "1",
            "--frames",
            "3",
        ],
    );
    let entries = results["entries"].as_array().expect("entries");
    let mut seen = BTreeSet::new();
    for e in entries {
        let (skinning, split) = (e["skinning"].as_str().unwrap(), e["dqs_split"].as_str().unwrap());
        assert!(e["gpu_us"]["frame"]["median"].as_f64().unwrap() > 0.0, "{skinning} {split}: no frame time");
        assert!(e["palette_bytes"].as_u64().unwrap() > 0, "{skinning} {split}: no palette bytes");
        seen.insert((skinning.to_string(), split.to_string(), e["upload"].as_str().unwrap().to_string()));
    }
    assert_eq!(seen.len(), 2 * 2 * 2, "every mode, split and upload once: {seen:?}");
    let _ = std::fs::remove_dir_all(&out);
}
