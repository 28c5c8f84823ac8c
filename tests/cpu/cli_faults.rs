//! `vkskin dump` and `generate-default` when the disk fills or the process
//! is killed half way through its output, with the test-only switches of
//! `atomic_file` (`VKSKIN_TEST_WRITE_LIMIT`, `VKSKIN_TEST_STALL_WRITES_AFTER`):
//! the previous file stays byte for byte, one line names the file not
//! written, no temporary file is left, and the next run succeeds.

use crate::common::faults::{kill_once_stalled, run, stderr_lines, temp_files, vkskin};
use std::path::{Path, PathBuf};

/// What an earlier run left at the output path.
const PREVIOUS: &[u8] = b"{\"previous\": true}\n";

/// A fresh folder with the built-in character written as `model.glb`.
fn folder_with_model(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new().prefix(&format!("vkskin-faults-{name}-")).tempdir().unwrap();
    let model = dir.path().join("model.glb");
    let made = run(vkskin().arg("generate-default").arg("--out").arg(&model));
    assert!(made.status.success(), "generate-default: {}", String::from_utf8_lossy(&made.stderr));
    (dir, model)
}

/// The line a file that was not written gives, the previous one kept.
fn not_written(path: &Path) -> String {
    format!(
        "vkskin: {} was not written (No space left on device); the previous file is unchanged",
        path.display()
    )
}

#[test]
fn dump_on_a_full_disk_keeps_the_previous_file() {
    let (dir, model) = folder_with_model("dump-full");
    let out = dir.path().join("pose.json");
    // 0: nothing fits; 64: the file is cut short part way, as a disk fills.
    for limit in ["0", "64"] {
        std::fs::write(&out, PREVIOUS).unwrap();
        let o = run(vkskin()
            .arg("dump")
            .arg(&model)
            .arg("--out")
            .arg(&out)
            .env("VKSKIN_TEST_WRITE_LIMIT", limit));
        assert!(!o.status.success(), "limit {limit}: dump exited 0");
        assert_eq!(stderr_lines(&o), [not_written(&out)], "limit {limit}");
        assert_eq!(std::fs::read(&out).unwrap(), PREVIOUS, "limit {limit}: the previous file changed");
        assert_eq!(temp_files(dir.path()), Vec::<String>::new(), "limit {limit}");
    }
    // Without the switch the same command writes the whole document.
    let o = run(vkskin().arg("dump").arg(&model).arg("--out").arg(&out));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let _: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).expect("JSON");
}

#[test]
fn generate_default_on_a_full_disk_keeps_the_previous_file() {
    let (dir, _) = folder_with_model("glb-full");
    let out = dir.path().join("again.glb");
    std::fs::write(&out, PREVIOUS).unwrap();
    let o =
        run(vkskin().arg("generate-default").arg("--out").arg(&out).env("VKSKIN_TEST_WRITE_LIMIT", "1000"));
    assert!(!o.status.success());
    assert_eq!(stderr_lines(&o), [not_written(&out)]);
    assert_eq!(std::fs::read(&out).unwrap(), PREVIOUS);
    assert_eq!(temp_files(dir.path()), Vec::<String>::new());
}

#[test]
fn dump_killed_half_way_leaves_the_previous_file_and_the_next_run_cleans_up() {
    let (dir, model) = folder_with_model("dump-killed");
    let out = dir.path().join("pose.json");
    std::fs::write(&out, PREVIOUS).unwrap();
    // Killed with 100 bytes of the document written.
    kill_once_stalled(
        vkskin().arg("dump").arg(&model).arg("--out").arg(&out).env("VKSKIN_TEST_STALL_WRITES_AFTER", "100"),
    );
    assert_eq!(std::fs::read(&out).unwrap(), PREVIOUS, "a killed dump changed the previous file");
    // Its temporary file is left (nothing ran to remove it), hidden...
    assert_eq!(temp_files(dir.path()).len(), 1, "{:?}", temp_files(dir.path()));
    // ...and the next run of the same output removes it.
    let o = run(vkskin().arg("dump").arg(&model).arg("--out").arg(&out));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let _: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).expect("JSON");
    assert_eq!(temp_files(dir.path()), Vec::<String>::new());
}
