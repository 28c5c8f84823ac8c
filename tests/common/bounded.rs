//! Running the `vkskin` binary on a hostile input the way an attacker's
//! file would meet it: a 4 GiB address-space limit (an allocation that big
//! fails instead of swapping), a wall-clock timeout (a hang is killed and
//! reported, never waited for), and the child's own peak memory measured.
//!
//! The peak comes from GNU time (`/usr/bin/time -f %M`), which forks
//! `vkskin` and reads its rusage. `wait4` on a child of this test process
//! cannot give it: Linux carries the RSS of the image a process replaces at
//! `exec` into its peak, and a child forked from this process (which runs
//! many GPU tests at once) starts as a copy of it, so the reading was never
//! below this process's own size at that moment (263 MB once in CI, for a
//! run that refused its file before reading it).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Address space a hostile run may map (the check uses 4 GB).
pub const ADDRESS_SPACE_LIMIT: u64 = 4 << 30;

/// GNU time: forks the command from a process of its own size and reports
/// the command's peak resident memory (installed by `.ci/deps`).
const GNU_TIME: &str = "/usr/bin/time";

/// How one run ended.
#[derive(Debug)]
pub struct Outcome {
    /// Exit code, `None` when killed by a signal (or by the timeout).
    pub code: Option<i32>,
    /// Whether the timeout killed it.
    pub timed_out: bool,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Peak resident memory of the child, bytes.
    pub peak_rss: u64,
}

impl Outcome {
    /// A description for assertion messages.
    pub fn describe(&self, args: &[&str]) -> String {
        format!(
            "vkskin {}: code {:?}{}, peak {} MB, stderr: {}",
            args.join(" "),
            self.code,
            if self.timed_out { " (timed out)" } else { "" },
            self.peak_rss >> 20,
            self.stderr
        )
    }
}

/// Runs the binary with `args`, killing it after `timeout`.
pub fn run(args: &[&str], timeout: Duration) -> Outcome {
    assert!(
        std::path::Path::new(GNU_TIME).is_file(),
        "{GNU_TIME} is missing: install Debian's `time` package (bash .ci/deps does)"
    );
    let report_file = tempfile::NamedTempFile::new().expect("a file for GNU time's report");
    let mut command = Command::new(GNU_TIME);
    command
        .args(["-f", "%M", "-o"])
        .arg(report_file.path())
        .arg(env!("CARGO_BIN_EXE_vkskin"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // A group of its own, so the timeout kills `vkskin` along with GNU time.
    use std::os::unix::process::CommandExt;
    command.process_group(0);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork
    // and exec. The limit passes from GNU time to the `vkskin` it forks.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: ADDRESS_SPACE_LIMIT, rlim_max: ADDRESS_SPACE_LIMIT };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().expect("GNU time starts");
    let group = child.id() as libc::pid_t;
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let deadline = Instant::now() + timeout;
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for GNU time") {
            break status;
        }
        if !timed_out && Instant::now() > deadline {
            timed_out = true;
            // SAFETY: kill has no memory-safety preconditions; the group is ours.
            unsafe { libc::kill(-group, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stdout = String::from_utf8_lossy(&out_reader.join().unwrap()).into_owned();
    let stderr = String::from_utf8_lossy(&err_reader.join().unwrap()).into_owned();
    let report = std::fs::read_to_string(report_file.path()).unwrap_or_default();
    let (code, peak_rss) = read_report(&report, status, timed_out);
    Outcome { code, timed_out, stdout, stderr, peak_rss }
}

/// `vkskin`'s exit code and peak RSS (bytes) from GNU time's report: a
/// "Command terminated by signal N" or "Command exited with non-zero
/// status N" line when there is one, then the peak in KiB.
fn read_report(report: &str, status: std::process::ExitStatus, timed_out: bool) -> (Option<i32>, u64) {
    let signalled = timed_out || report.lines().any(|l| l.starts_with("Command terminated by signal"));
    let code = if signalled { None } else { status.code() };
    let peak_kib = report.lines().rev().find_map(|l| l.trim().parse::<u64>().ok());
    // Killed with GNU time by the timeout, there is no report: the peak is
    // unknown, and the timeout is what the caller sees first. Otherwise a
    // missing peak would pass every memory check, so it is an error.
    assert!(timed_out || peak_kib.is_some(), "GNU time reported no peak: {report:?}");
    (code, peak_kib.map_or(0, |k| k * 1024))
}
