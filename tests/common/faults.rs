//! Running `vkskin` under the test-only fault switches (a disk that fills,
//! a write that stalls so the process can be killed half way, a GPU
//! device lost after N submissions) and checking what it left behind.
//! Nothing here is timed: conditions are polled, and the deadline is only
//! a guard against a hang.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a polled condition may take before the test calls it a hang.
const HANG_GUARD: Duration = Duration::from_secs(300);

/// What `VKSKIN_TEST_STALL_WRITES_AFTER` prints once writes stall.
pub const STALLED: &str = "vkskin: test: writes stalled after";

/// The `vkskin` binary, with none of the test-only switches set.
pub fn vkskin() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_vkskin"));
    for switch in [
        "VKSKIN_TEST_WRITE_LIMIT",
        "VKSKIN_TEST_STALL_WRITES_AFTER",
        "VKSKIN_TEST_LOSE_DEVICE_AFTER",
        "VKSKIN_TEST_SLOW_SKIN",
    ] {
        command.env_remove(switch);
    }
    command
}

/// Runs `command` to its end.
pub fn run(command: &mut Command) -> Output {
    command.stdin(Stdio::null()).output().expect("run vkskin")
}

/// Stderr's lines, but for the device announcement (`vkskin: using device`).
pub fn stderr_lines(output: &Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .filter(|l| !l.starts_with("vkskin: using device"))
        .map(str::to_string)
        .collect()
}

/// The hidden temporary files of outputs (`.NAME.PID.XXXXXX.tmp`) in `dir`.
pub fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("read the output folder")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') && n.ends_with(".tmp"))
        .collect()
}

/// Starts `command`, waits until it says on stderr that its writes stalled
/// (`VKSKIN_TEST_STALL_WRITES_AFTER` set), then kills it with SIGKILL.
/// Returns its stderr up to then. Panics if it ends without stalling.
pub fn kill_once_stalled(command: &mut Command) -> String {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start vkskin");
    let stderr = child.stderr.take().expect("stderr");
    let (send, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => {
                let stalled = line.starts_with(STALLED);
                seen.push(line);
                if stalled {
                    break;
                }
            }
            Err(e) => {
                let _ = child.kill();
                let status = child.wait().expect("wait for vkskin");
                panic!("vkskin ended ({status}, {e:?}) without stalling: {}", seen.join("\n"));
            }
        }
    }
    child.kill().expect("SIGKILL vkskin");
    let status = child.wait().expect("wait for vkskin");
    assert!(!status.success(), "killed, yet it exited 0");
    seen.join("\n")
}

/// Starts `command` and kills it with SIGKILL as soon as `ready()` holds
/// (polled). Returns whether it was still running when killed (false: it
/// had already finished, which the caller's checks must also accept).
pub fn kill_when(command: &mut Command, ready: impl Fn() -> bool) -> bool {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start vkskin");
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        if child.try_wait().expect("poll vkskin").is_some() {
            return false;
        }
        if ready() {
            child.kill().expect("SIGKILL vkskin");
            child.wait().expect("wait for vkskin");
            return true;
        }
        assert!(Instant::now() < deadline, "the condition never held; vkskin still runs");
        std::thread::sleep(Duration::from_millis(5));
    }
}
