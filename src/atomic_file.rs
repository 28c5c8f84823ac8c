//! Output files written atomically: the data goes to a temporary file in the
//! same folder, which is flushed to disk (fsync) and renamed over the target
//! only once complete. A command that fails or is killed never leaves a
//! truncated or empty file where the user asked for one: the previous file
//! stays as it was. A killed run can leave its hidden temporary file
//! (`.NAME.PID.XXXXXX.tmp`); the next write of `NAME` removes those whose
//! process is gone. A path that exists and is not a regular file
//! (`/dev/stdout`, a FIFO) is written directly: there is nothing to replace.
//!
//! Two test-only switches, read once per process, make the faults of a full
//! disk and of a kill reproducible (see `guide::testing`):
//! `VKSKIN_TEST_WRITE_LIMIT=BYTES` fails every write past BYTES (counted
//! over all output files) with the operating system's "No space left on
//! device" (ENOSPC), and `VKSKIN_TEST_STALL_WRITES_AFTER=BYTES` blocks the
//! writing thread once BYTES are written, after saying so on stderr, so a
//! test can kill the process half way through a file.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use tempfile::NamedTempFile;

/// An output file could not be created or written. Prints as the one line
/// a user needs: `out/results.json was not written (No space left on
/// device); the previous file is unchanged` (the last part only when a
/// file was there). The operating system's error is kept as `source()`.
#[derive(Debug, thiserror::Error)]
#[error("{} was not written ({}){}", path.display(), reason(source), if *previous_kept { "; the previous file is unchanged" } else { "" })]
pub struct OutputError {
    /// The file asked for.
    pub path: PathBuf,
    /// The step that failed: `create`, `open`, `write`, `draw`.
    pub action: &'static str,
    /// Whether a regular file was at `path` when the write failed (it is
    /// still there, as it was: nothing is renamed over it on failure).
    pub previous_kept: bool,
    /// The operating system's reason.
    #[source]
    pub source: std::io::Error,
}

impl OutputError {
    /// `action` on `path` failed with `source`.
    pub fn new(path: &Path, action: &'static str, source: std::io::Error) -> Self {
        let previous_kept = std::fs::metadata(path).is_ok_and(|m| m.is_file());
        OutputError { path: path.to_path_buf(), action, previous_kept, source }
    }
}

/// The reason of an I/O error as the operating system words it, without
/// Rust's ` (os error 28)` suffix or the temporary file's path tempfile
/// adds after it (the message names the file the user asked for):
/// `No space left on device`.
fn reason(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error ") {
        Some(end) => text[..end].to_string(),
        None => text,
    }
}

/// Several output files that were not written, as one line: `a.svg,
/// b.svg were not written (No space left on device); the previous files
/// are unchanged` (each file with its own reason when they differ).
#[derive(Debug)]
pub struct OutputErrors(pub Vec<OutputError>);

impl std::fmt::Display for OutputErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.as_slice() {
            [] => write!(f, "every file was written"),
            [one] => write!(f, "{one}"),
            all => {
                let reasons: Vec<String> = all.iter().map(|e| reason(&e.source)).collect();
                let names: Vec<String> = if reasons.iter().all(|r| *r == reasons[0]) {
                    let mut names: Vec<String> = all.iter().map(|e| e.path.display().to_string()).collect();
                    let last = names.pop().unwrap_or_default();
                    names.push(format!("{last} were not written ({})", reasons[0]));
                    names
                } else {
                    let mut names: Vec<String> = all
                        .iter()
                        .zip(&reasons)
                        .map(|(e, r)| format!("{} ({r})", e.path.display()))
                        .collect();
                    let last = names.pop().unwrap_or_default();
                    names.push(format!("{last} were not written"));
                    names
                };
                write!(f, "{}", names.join(", "))?;
                let kept = all.iter().filter(|e| e.previous_kept).count();
                if kept == all.len() {
                    write!(f, "; the previous files are unchanged")
                } else if kept > 0 {
                    write!(f, "; those that existed before are unchanged")
                } else {
                    Ok(())
                }
            }
        }
    }
}

impl std::error::Error for OutputErrors {}

/// A file being written; it appears at its path on [`AtomicFile::commit`]
/// and is removed if dropped before.
pub struct AtomicFile {
    target: Target,
    path: PathBuf,
}

enum Target {
    /// A regular file: written beside it, then renamed over it.
    Temp(NamedTempFile),
    /// A device or FIFO: written in place.
    Direct(File),
}

impl AtomicFile {
    /// Creates the temporary file next to `path` (so a bad folder fails at
    /// once, and the final rename stays on one file system), first removing
    /// temporary files of `path` that killed runs left behind.
    pub fn create(path: &Path) -> Result<Self, OutputError> {
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| OutputError::new(path, "open", e))?;
            return Ok(AtomicFile { target: Target::Direct(file), path: path.to_path_buf() });
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        remove_stale_temp_files(dir, &name);
        // The process id in the name tells a later run whether its writer is gone.
        let prefix = format!(".{name}.{}.", std::process::id());
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(TEMP_SUFFIX);
        #[cfg(unix)]
        {
            // What a plain create gives (0666 less the umask), not 0600.
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let temp = builder.tempfile_in(dir).map_err(|e| OutputError::new(path, "create", e))?;
        Ok(AtomicFile { target: Target::Temp(temp), path: path.to_path_buf() })
    }

    /// A buffered writer into the temporary file.
    pub fn writer(&self) -> Result<BufWriter<OutputWriter>, OutputError> {
        let file = match &self.target {
            Target::Temp(temp) => temp.as_file(),
            Target::Direct(file) => file,
        };
        let file = file.try_clone().map_err(|e| OutputError::new(&self.path, "write", e))?;
        Ok(BufWriter::new(OutputWriter { file }))
    }

    /// Flushes the data to disk and renames the file to its path.
    pub fn commit(self) -> Result<(), OutputError> {
        let Target::Temp(temp) = self.target else { return Ok(()) };
        temp.as_file().sync_all().map_err(|e| OutputError::new(&self.path, "write", e))?;
        temp.persist(&self.path).map_err(|e| OutputError::new(&self.path, "write", e.error))?;
        Ok(())
    }

    /// The path the file appears at.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// How every temporary file's name ends.
const TEMP_SUFFIX: &str = ".tmp";

/// Whether `file_name` is a temporary file of the output `name`
/// (`.NAME.PID.RANDOM.tmp`), and if so the id of the process that made it.
fn temp_file_owner(file_name: &str, name: &str) -> Option<u32> {
    let middle = file_name.strip_prefix('.')?.strip_prefix(name)?.strip_prefix('.')?;
    let middle = middle.strip_suffix(TEMP_SUFFIX)?;
    let (pid, random) = middle.split_once('.')?;
    let plain = !random.is_empty() && random.bytes().all(|b| b.is_ascii_alphanumeric());
    if !plain || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Removes the temporary files of the output `name` in `dir` whose process
/// no longer runs (a run killed while writing). Those of a live process (a
/// run writing the same file now) are left alone; so is everything where
/// that cannot be told. Best effort: a file that cannot be removed stays.
fn remove_stale_temp_files(dir: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name.to_str().and_then(|f| temp_file_owner(f, name)) else { continue };
        if pid != std::process::id() && process_is_gone(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether no process `pid` exists (on Unix; elsewhere never claimed).
fn process_is_gone(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
        // SAFETY: signal 0 sends nothing; it only checks that the process exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0;
        // EPERM: it exists, owned by someone else.
        !alive && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        false
    }
}

/// The file under an output's buffered writer. It is a plain file write,
/// except under the test-only switches (see the module's first lines).
pub struct OutputWriter {
    file: File,
}

impl Write for OutputWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let switches = test_switches();
        let written = BYTES_WRITTEN.load(Ordering::Relaxed);
        if let Some(stall) = switches.stall_after
            && written.saturating_add(buf.len() as u64) > stall
        {
            // Up to the limit, then never return: the test kills the process.
            let head = (stall.saturating_sub(written) as usize).min(buf.len());
            self.file.write_all(&buf[..head])?;
            BYTES_WRITTEN.fetch_add(head as u64, Ordering::Relaxed);
            eprintln!("vkskin: test: writes stalled after {stall} bytes (VKSKIN_TEST_STALL_WRITES_AFTER)");
            loop {
                std::thread::park();
            }
        }
        let buf = match switches.write_limit {
            Some(limit) => {
                let room = limit.saturating_sub(written);
                if room == 0 && !buf.is_empty() {
                    return Err(no_space());
                }
                &buf[..(room.min(buf.len() as u64) as usize)]
            }
            None => buf,
        };
        let n = self.file.write(buf)?;
        BYTES_WRITTEN.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// The error a full disk gives (ENOSPC, kind `StorageFull`).
fn no_space() -> std::io::Error {
    #[cfg(unix)]
    return std::io::Error::from_raw_os_error(libc::ENOSPC);
    #[cfg(not(unix))]
    return std::io::Error::new(std::io::ErrorKind::StorageFull, "No space left on device");
}

/// Bytes written to output files by this process (what the test switches count).
static BYTES_WRITTEN: AtomicU64 = AtomicU64::new(0);

/// The test-only switches, as the environment set them when first asked.
#[derive(Debug, Clone, Copy, Default)]
struct TestSwitches {
    write_limit: Option<u64>,
    stall_after: Option<u64>,
}

fn test_switches() -> TestSwitches {
    static SWITCHES: OnceLock<TestSwitches> = OnceLock::new();
    *SWITCHES.get_or_init(|| {
        let bytes = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse::<u64>().ok());
        TestSwitches {
            write_limit: bytes("VKSKIN_TEST_WRITE_LIMIT"),
            stall_after: bytes("VKSKIN_TEST_STALL_WRITES_AFTER"),
        }
    })
}

/// Writes `bytes` to `path` atomically.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let file = AtomicFile::create(path)?;
    let mut w = file.writer()?;
    w.write_all(bytes).and_then(|_| w.flush()).map_err(|e| OutputError::new(path, "write", e))?;
    drop(w);
    file.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appears_only_when_committed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.png");
        std::fs::write(&path, b"old").unwrap();
        let file = AtomicFile::create(&path).unwrap();
        file.writer().unwrap().write_all(b"new").unwrap();
        // Not committed: the old content stays, the temporary file goes.
        drop(file);
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        write(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let fresh = dir.path().join("fresh.json");
        write(&fresh, b"{}").unwrap();
        let plain = dir.path().join("plain.json");
        std::fs::write(&plain, b"{}").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions();
        assert_eq!(mode(&fresh), mode(&plain));
        assert!(AtomicFile::create(&dir.path().join("missing/x.png")).is_err());
        // A device is written in place.
        write(Path::new("/dev/null"), b"gone").unwrap();
    }

    #[test]
    fn a_killed_runs_temp_file_is_removed_by_the_next_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.json");
        std::fs::write(&path, b"old").unwrap();
        // A process that has exited: its id is free (until reused, which
        // only leaves its file in place: never a wrong removal).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        let stale = dir.path().join(format!(".results.json.{gone}.AbC123.tmp"));
        let live = dir.path().join(format!(".results.json.{}.XyZ789.tmp", std::process::id()));
        let other = dir.path().join(format!(".other.json.{gone}.AbC123.tmp"));
        for p in [&stale, &live, &other] {
            std::fs::write(p, b"half").unwrap();
        }
        write(&path, b"new").unwrap();
        assert!(!stale.exists(), "the dead run's temporary file is removed");
        assert!(live.exists() && other.exists(), "a live writer's file and other outputs' stay");
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
    }

    #[test]
    fn temporary_names_are_told_apart_from_outputs() {
        assert_eq!(temp_file_owner(".a.png.123.Xy9.tmp", "a.png"), Some(123));
        for not in
            [".a.png.tmp", "a.png.123.Xy9.tmp", ".a.png.12x.Xy9.tmp", ".a.png.1.2.x.tmp", ".a.png.1..tmp"]
        {
            assert_eq!(temp_file_owner(not, "a.png"), None, "{not}");
        }
        // Another output whose name starts like this one is not this one's.
        assert_eq!(temp_file_owner(".a.png.old.123.Xy9.tmp", "a.png"), None);
    }

    #[test]
    fn a_file_not_written_is_one_line_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("results.json");
        std::fs::write(&kept, b"old").unwrap();
        let full = || std::io::Error::from_raw_os_error(libc::ENOSPC);
        let one = OutputError::new(&kept, "write", full());
        assert_eq!(
            one.to_string(),
            format!(
                "{} was not written (No space left on device); the previous file is unchanged",
                kept.display()
            )
        );
        assert_eq!(one.source.kind(), std::io::ErrorKind::StorageFull);
        let fresh = dir.path().join("a.svg");
        let none = OutputError::new(&fresh, "write", full());
        assert_eq!(
            none.to_string(),
            format!("{} was not written (No space left on device)", fresh.display())
        );
        let both = OutputErrors(vec![
            OutputError::new(&kept, "write", full()),
            OutputError::new(&kept, "write", full()),
        ]);
        assert_eq!(
            both.to_string(),
            format!(
                "{0}, {0} were not written (No space left on device); the previous files are unchanged",
                kept.display()
            )
        );
        let mixed = OutputErrors(vec![
            OutputError::new(&kept, "write", full()),
            OutputError::new(&fresh, "draw", std::io::Error::other("bad range")),
        ]);
        assert_eq!(
            mixed.to_string(),
            format!(
                "{} (No space left on device), {} (bad range) were not written; those that existed before are unchanged",
                kept.display(),
                fresh.display()
            )
        );
    }
}
