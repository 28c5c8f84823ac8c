//! Baselines end to end on the Vulkan device (lavapipe without a GPU): a
//! small bench compared with itself (`vkskin compare DIR DIR`) is within
//! noise on every row, and a second run with the skin pass made slower on
//! purpose (the test-only `VKSKIN_TEST_SLOW_SKIN`, validation on) and
//! `--baseline` the first reports the skin figure of every compute row
//! regressed. Skips without a device, unless VKSKIN_NO_SKIP is set.

use crate::common::faults::{run, vkskin};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// How many times the slowed run records the skin dispatch: on lavapipe the
/// skin pass of 16 built-in characters then takes several times as long,
/// far past any run-to-run noise of its host-timed figure.
const SLOWDOWN: &str = "6";

/// A small sweep: one count, one pass count, both skinning placements, the
/// in-place and dirty uploads (dirty measured animated and paused).
const SWEEP: &[&str] =
    &["--quick", "--characters", "16", "--passes", "1", "--upload", "inplace,dirty", "--validation"];

/// Runs `vkskin bench SWEEP EXTRA --out DIR` (DIR named after `tag`, in
/// a fresh temporary folder, removed when the returned guard drops) with
/// `env` set; checks it exited 0 and returns DIR, the guard and stdout.
fn bench(tag: &str, extra: &[&str], env: &[(&str, &str)]) -> (PathBuf, tempfile::TempDir, String) {
    let parent = tempfile::Builder::new().prefix("vkskin-baseline-").tempdir().unwrap();
    let out = parent.path().join(tag);
    let mut command = vkskin();
    command.arg("bench").args(SWEEP).args(extra).arg("--out").arg(&out);
    for (name, value) in env {
        command.env(name, value);
    }
    let o = run(&mut command);
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "bench {tag} failed: {stdout}{}", String::from_utf8_lossy(&o.stderr));
    (out, parent, stdout)
}

fn comparison(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("comparison.json")).expect("comparison.json");
    serde_json::from_str(&text).expect("comparison.json is JSON")
}

fn rows(c: &Value) -> &Vec<Value> {
    c["rows"].as_array().expect("rows")
}

#[test]
fn a_run_is_within_noise_of_itself_and_a_slowed_skin_pass_regresses() {
    if crate::common::context().is_none() {
        return;
    }
    let (first, _first, _) = bench("first", &[], &[]);

    let o = run(vkskin().arg("compare").arg(&first).arg(&first).arg("--fail-on-regression"));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}{}", String::from_utf8_lossy(&o.stderr));
    let same = comparison(&first);
    let n = rows(&same).len();
    // 6 configurations (compute, vertex x inplace, dirty, dirty paused),
    // each with at least a frame and a cpu pose row.
    assert!(n >= 6 * 2, "{same:#}");
    assert_eq!(stdout.lines().next(), Some(format!("{n} within noise, 0 regressed, 0 improved").as_str()));
    assert!(rows(&same).iter().all(|r| r["verdict"] == "within-noise"), "{same:#}");
    assert!(same["new_configurations"].as_array().unwrap().is_empty());

    let baseline = first.to_str().unwrap();
    let (slowed, _slowed, stdout) =
        bench("slowed", &["--baseline", baseline], &[("VKSKIN_TEST_SLOW_SKIN", SLOWDOWN)]);
    let c = comparison(&slowed);
    let skin: Vec<&Value> = rows(&c)
        .iter()
        .filter(|r| r["figure"] == "skin" && r["skinning"].as_str().unwrap().ends_with("compute"))
        .collect();
    assert_eq!(skin.len(), 3, "one skin row per compute configuration: {c:#}");
    for r in &skin {
        assert_eq!(r["verdict"], "regressed", "{r:#}\n{stdout}");
        assert!(r["change_percent"].as_f64().unwrap() > 100.0, "{r:#}");
    }
    let summary = stdout.lines().find(|l| l.contains("within noise")).expect("a summary line");
    assert!(summary.contains("regressed (") && summary.contains("skin"), "{summary}");
    assert_eq!(c["old_folder"], baseline);
}
