//! Hostile controller files given to `vkskin simulate --controller` (which
//! needs no GPU), as a user runs it: a FIFO, a device, a folder, a file
//! larger than `--max-memory`, invalid UTF-8, a million transitions, deep
//! nesting, a 1 MB name. Each ends at once with a non-zero exit and exactly
//! one short stderr line naming the file; a file saved with a byte-order
//! mark loads.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const GLB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/default_character.glb");
const CONTROLLER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/default_character.ron");

/// Longest error line accepted, in characters (the path comes on top).
const MAX_LINE_CHARS: usize = 300;

/// How long a run may take before it counts as blocked (a hang guard, not
/// a timing assertion: every run here takes well under a second).
const HANG: Duration = Duration::from_secs(120);

/// `vkskin simulate GLB --controller CONTROLLER EXTRA..`: exit success and stderr.
fn simulate(controller: &Path, extra: &[&str]) -> (bool, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vkskin"))
        .args(["simulate", GLB, "--duration", "0.1", "--controller"])
        .arg(controller)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > HANG {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("vkskin simulate --controller {} blocked", controller.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The run fails with exactly one short line naming `controller` that says `what`.
#[track_caller]
fn refused(controller: &Path, extra: &[&str], what: &str) {
    let (ok, stderr) = simulate(controller, extra);
    let shown = controller.display().to_string();
    assert!(!ok, "{shown}: accepted");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{shown}: one line: {}", &stderr[..stderr.len().min(2000)]);
    let line = lines[0];
    let rest =
        line.strip_prefix(&format!("vkskin: {shown}")).unwrap_or_else(|| panic!("names the file: {line}"));
    assert!(
        rest.chars().count() <= MAX_LINE_CHARS,
        "{} characters: {}",
        rest.len(),
        &line[..line.len().min(600)]
    );
    assert!(line.contains(what), "{line}\n  wanted: {what}");
    for advice in ["recursion_limit", "serde_stacker"] {
        assert!(!line.contains(advice), "{line}");
    }
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("walk.ron");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    refused(&fifo, &[], ": is a FIFO, not a regular file");
}

#[test]
fn devices_and_folders_are_refused() {
    refused(Path::new("/dev/zero"), &[], ": is a character device, not a regular file");
    refused(Path::new("/dev/urandom"), &[], ": is a character device, not a regular file");
    let dir = tempfile::tempdir().unwrap();
    refused(dir.path(), &[], ": is a directory, not a regular file");
    refused(&dir.path().join("missing.ron"), &[], ": cannot read: ");
}

#[test]
fn a_file_larger_than_max_memory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.ron");
    let mut text = std::fs::read_to_string(CONTROLLER).unwrap();
    text.push_str(&" ".repeat(50 << 20));
    std::fs::write(&path, text).unwrap();
    refused(&path, &["--max-memory", "4M"], "more than the 4.0 MiB a controller file may have");
    // Without --max-memory, the fixed cap.
    refused(&path, &[], "more than the 16.0 MiB a controller file may have");
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bom.ron");
    let text = std::fs::read_to_string(CONTROLLER).unwrap();
    std::fs::write(&path, format!("\u{feff}{text}")).unwrap();
    let (ok, stderr) = simulate(&path, &[]);
    assert!(ok, "{stderr}");
    assert_eq!(stderr.trim(), format!("vkskin: controller: {}", path.display()));
}

#[test]
fn invalid_utf8_is_refused_saying_where() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latin1.ron");
    let mut bytes = b"(states: [(name: \"Caf".to_vec();
    bytes.push(0xE9);
    bytes.extend_from_slice(b"\", motion: Clip(clip: \"0\"))])");
    std::fs::write(&path, bytes).unwrap();
    refused(&path, &[], ": is not UTF-8 text: invalid byte at offset 21 (line 1, column 22)");
}

#[test]
fn a_million_transitions_are_refused_at_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.ron");
    // 16 bytes each: under the 16 MiB file cap, so the count cap speaks.
    let text = format!("(states: [], transitions: [{}])", "(from:\"\",to:\"\"),".repeat(1_000_000));
    std::fs::write(&path, text).unwrap();
    refused(&path, &[], "more than 10000 transitions (the most a controller may have)");
}

#[test]
fn deep_nesting_is_refused_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep.ron");
    let depth = 100_000;
    // Never closed: the depth is refused before the end is reached.
    let text = format!("(states: [(name: \"A\", motion: {}", "Blend(inputs: [(motion: ".repeat(depth));
    std::fs::write(&path, text).unwrap();
    refused(&path, &[], "nested deeper than 256 levels (the most a controller may have)");
    // Inside a weight, which is buffered before its type is known.
    let text = format!(
        "(states: [(name: \"A\", motion: Blend(inputs: [(motion: Clip(clip: \"0\"), weight: {}{})]))])",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    std::fs::write(&path, text).unwrap();
    refused(&path, &[], "nested deeper than 256 levels");
}

#[test]
fn a_megabyte_name_is_refused_in_one_short_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.ron");
    let name = "\u{1b}[2J".repeat(1 << 18);
    std::fs::write(&path, format!("(states: [(name: \"{name}\", motion: Clip(clip: \"0\"))])")).unwrap();
    refused(&path, &[], "a name of 1048576 bytes (the longest a name may be is 1024)");
}
