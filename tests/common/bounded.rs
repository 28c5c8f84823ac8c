//! Running the `vkskin` binary on a hostile input the way an attacker's
//! file would meet it: a 4 GiB address-space limit (an allocation that big
//! fails instead of swapping), a wall-clock timeout (a hang is killed and
//! reported, never waited for), and the child's own peak memory measured.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Address space a hostile run may map (the check uses 4 GB).
pub const ADDRESS_SPACE_LIMIT: u64 = 4 << 30;

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
    let mut command = Command::new(env!("CARGO_BIN_EXE_vkskin"));
    command.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: ADDRESS_SPACE_LIMIT, rlim_max: ADDRESS_SPACE_LIMIT };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    // Reaped below with wait4 (which reports the child's own peak RSS), not `wait`.
    #[allow(clippy::zombie_processes)]
    let mut child = command.spawn().expect("vkskin starts");
    let pid = child.id() as libc::pid_t;
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
    // Reaped here with wait4, which reports this child's own peak RSS.
    let deadline = Instant::now() + timeout;
    let mut timed_out = false;
    let (status, usage) = loop {
        let mut status = 0;
        // SAFETY: a zeroed rusage is a valid value to be overwritten.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: pid is our unreaped child; the pointers are valid.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break (status, usage);
        }
        assert!(r == 0, "wait4 failed: {}", std::io::Error::last_os_error());
        if !timed_out && Instant::now() > deadline {
            timed_out = true;
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stdout = String::from_utf8_lossy(&out_reader.join().unwrap()).into_owned();
    let stderr = String::from_utf8_lossy(&err_reader.join().unwrap()).into_owned();
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Outcome { code, timed_out, stdout, stderr, peak_rss: usage.ru_maxrss as u64 * 1024 }
}
