//! `vkskin compare OLD_DIR NEW_DIR` on results files written by hand: a
//! version-1 file (no `version`, no samples, timestamps only) still
//! compares, medians only, each row saying "no samples"; samples in a
//! version-2 file give verdicts, and `--fail-on-regression` turns a
//! regression into exit status 1; a missing or foreign results file is one
//! line naming it. No GPU: nothing is run.

use crate::common::faults::{run, stderr_lines, vkskin};
use serde_json::{Value, json};
use std::path::Path;

/// One compute entry as the results format has it, its skin pass taking
/// `skin_us` (timestamps), with `samples` when given (host-timed skin runs).
fn entry(skin_us: f64, samples: Option<Vec<f64>>) -> Value {
    let stat = |median: f64| json!({"median": median, "p95": median * 1.2});
    let mut e = json!({
        "model": "built-in", "characters": 16, "vertices": 4824, "joints": 20, "passes": 1,
        "skinning": "compute", "upload": "inplace", "frames": 8,
        "cpu_pose_us": stat(300.0), "palette_bytes": 20480,
        "gpu_us": {"upload": stat(0.0), "skin": stat(skin_us), "passes": [stat(900.0)], "frame": stat(900.0 + skin_us)},
        "copy_kernel_us": stat(200.0), "paused": false, "cpu_palette_write_us": stat(4.0), "skin_bytes": 7_000_000
    });
    if let Some(samples) = samples {
        let median = {
            let mut s = samples.clone();
            s.sort_by(f64::total_cmp);
            (s[3] + s[4]) / 2.0
        };
        e["skin_wall_us"] = stat(median);
        e["samples"] = json!({"skin_wall_us": samples});
    }
    e
}

/// Writes `dir/results.json`: a version-1 header (no `version`, no
/// `gpu_timing`), or a version-2 host-timed one.
fn write_results(dir: &Path, version_two: bool, entries: Vec<Value>) {
    std::fs::create_dir_all(dir).unwrap();
    let mut header = json!({
        "device": "llvmpipe (LLVM 15.0.6, 256 bits)", "driver": "Mesa 22.3.6",
        "date": "2026-11-30T18:28:45Z", "commit": "abc1234", "quick": true, "command": "vkskin bench --quick"
    });
    if version_two {
        header["version"] = json!(2);
        header["gpu_timing"] = json!("host-timed");
    }
    let text = serde_json::to_string_pretty(&json!({"header": header, "entries": entries})).unwrap();
    std::fs::write(dir.join("results.json"), text).unwrap();
}

fn compare(old: &Path, new: &Path, extra: &[&str]) -> std::process::Output {
    run(vkskin().arg("compare").arg(old).arg(new).args(extra))
}

fn comparison(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("comparison.json")).unwrap()).unwrap()
}

#[test]
fn a_version_one_file_compares_medians_only() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    write_results(&old, false, vec![entry(400.0, None)]);
    write_results(&new, false, vec![entry(800.0, None)]);
    let o = compare(&old, &new, &["--fail-on-regression"]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        stdout.lines().next(),
        Some("0 within noise, 0 regressed, 0 improved, 3 no samples"),
        "{stdout}"
    );
    assert!(stdout.contains("skin") && stdout.contains("+100.0 %"), "{stdout}");
    let c = comparison(&new);
    let rows = c["rows"].as_array().unwrap();
    let figures: Vec<&str> = rows.iter().map(|r| r["figure"].as_str().unwrap()).collect();
    assert_eq!(figures, ["frame", "skin", "cpu-pose"]);
    assert!(rows.iter().all(|r| r["verdict"] == "no-samples" && r["p_value"].is_null()), "{c:#}");
    assert_eq!(rows[1]["change_percent"], 100.0);
    assert_eq!(
        (c["old"]["version"].as_u64(), c["old"]["gpu_timing"].as_str()),
        (Some(1), Some("timestamps"))
    );
}

#[test]
fn samples_give_verdicts_and_a_regression_can_fail_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new, mixed) = (dir.path().join("old"), dir.path().join("new"), dir.path().join("mixed"));
    let runs: Vec<f64> = [400.0, 410.0, 395.0, 405.0, 398.0, 402.0, 420.0, 401.0].to_vec();
    write_results(&old, true, vec![entry(400.0, Some(runs.clone()))]);
    write_results(&new, true, vec![entry(400.0, Some(runs.iter().map(|x| x * 3.0).collect()))]);
    // Against itself: within noise.
    let o = compare(&old, &old, &["--fail-on-regression"]);
    assert!(o.status.success());
    let rows = comparison(&old)["rows"].clone();
    let skin = rows.as_array().unwrap().iter().find(|r| r["figure"] == "skin").unwrap().clone();
    assert_eq!((skin["verdict"].as_str(), skin["p_value"].as_f64()), (Some("within-noise"), Some(1.0)));
    // Three times slower: regressed; exit 0 as a report, 1 when asked.
    let o = compare(&old, &new, &[]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}");
    assert!(stdout.lines().next().unwrap().contains("1 regressed (skin)"), "{stdout}");
    let o = compare(&old, &new, &["--fail-on-regression"]);
    assert_eq!(o.status.code(), Some(1));
    let expected =
        format!("vkskin: 1 figure regressed (skin) against {} (--fail-on-regression)", old.display());
    assert_eq!(stderr_lines(&o).last(), Some(&expected));
    // A version-1 baseline against a version-2 run: the clocks differ.
    write_results(&mixed, false, vec![entry(400.0, None)]);
    let o = compare(&mixed, &new, &[]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("note: the GPU figures come from different clocks"));
    assert_eq!(comparison(&new)["clocks_differ"], true);
}

#[test]
fn a_missing_or_foreign_results_file_is_one_line_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let (old, foreign) = (dir.path().join("old"), dir.path().join("foreign"));
    write_results(&old, true, vec![entry(400.0, None)]);
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("results.json"), "{\"clip\": \"Walk\"}").unwrap();
    let missing = dir.path().join("nowhere");
    for (new, says) in [(&missing, "cannot read"), (&foreign, "not bench results")] {
        let o = compare(&old, new, &[]);
        assert_eq!(o.status.code(), Some(1));
        let lines = stderr_lines(&o);
        assert_eq!(lines.len(), 1, "{lines:?}");
        let file = new.join("results.json");
        assert!(lines[0].starts_with(&format!("vkskin: {}: {says}", file.display())), "{lines:?}");
    }
}
