//! The one switch for tests that cannot run on this machine (no Vulkan
//! device or validation layer, no display, no `../shared/assets`, a missing
//! device feature): they say so on stderr and pass, unless `VKSKIN_NO_SKIP`
//! is set (CI sets it), where they fail instead, so that a green CI means
//! every test ran. With `VKSKIN_SKIP_LOG=FILE`, each skip also appends a
//! line to FILE (`.ci/run` counts them in a summary line).
//!
//! Shared by the unit tests and the integration tests (`tests/common`).

use std::io::Write;
use std::path::PathBuf;

/// Set (to anything but "" or "0"): nothing may skip.
pub const NO_SKIP: &str = "VKSKIN_NO_SKIP";
/// A file each skip appends a line to.
pub const SKIP_LOG: &str = "VKSKIN_SKIP_LOG";

/// Whether skipping is forbidden (CI).
pub fn no_skip() -> bool {
    std::env::var(NO_SKIP).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Skips the calling test with `why`: logs it, then says so on stderr
/// (naming the test), or panics with it under `VKSKIN_NO_SKIP`.
pub fn skip(why: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    if let Some(log) = std::env::var_os(SKIP_LOG) {
        let line = format!("{test}: {why}\n");
        let file = std::fs::OpenOptions::new().create(true).append(true).open(log);
        if let Ok(mut file) = file {
            let _ = file.write_all(line.as_bytes());
        }
    }
    if no_skip() {
        panic!("{NO_SKIP} is set, so {test} may not skip, but {why}");
    }
    eprintln!("skipping {test}: {why}");
}

/// `../shared/assets` next to this project.
pub fn assets_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/assets")
}

/// The file or folder `relative` under `../shared/assets`, or `None` after
/// skipping (see `skip`) with where the shared models come from.
pub fn shared_path(relative: &str) -> Option<PathBuf> {
    let path = assets_dir().join(relative);
    if path.exists() {
        Some(path)
    } else {
        skip(&format!(
            "{} is absent (the shared glTF models are read in place from ../shared/assets, see its \
             SOURCES.md; check out the shared folder next to this project)",
            path.display()
        ));
        None
    }
}
