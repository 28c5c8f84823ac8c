//! Output files written atomically: the data goes to a temporary file in the
//! same folder, which is renamed over the target only once complete. A
//! command that fails or is killed never leaves a truncated or empty file
//! where the user asked for one (at worst a hidden `.NAME.XXXXXX.tmp`).
//! A path that exists and is not a regular file (`/dev/stdout`, a FIFO) is
//! written directly: there is nothing to replace.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

/// An output file could not be created or written: names the file and the
/// step, and keeps the operating system's error.
#[derive(Debug, thiserror::Error)]
#[error("{}: cannot {action}: {source}", path.display())]
pub struct OutputError {
    /// The file asked for.
    pub path: PathBuf,
    /// The step that failed: `create`, `open`, `write`.
    pub action: &'static str,
    /// The operating system's reason.
    #[source]
    pub source: std::io::Error,
}

impl OutputError {
    /// `action` on `path` failed with `source`.
    pub fn new(path: &Path, action: &'static str, source: std::io::Error) -> Self {
        OutputError { path: path.to_path_buf(), action, source }
    }
}

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
    /// once, and the final rename stays on one file system).
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
        let prefix = format!(".{name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
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
    pub fn writer(&self) -> Result<BufWriter<File>, OutputError> {
        let file = match &self.target {
            Target::Temp(temp) => temp.as_file(),
            Target::Direct(file) => file,
        };
        let file = file.try_clone().map_err(|e| OutputError::new(&self.path, "write", e))?;
        Ok(BufWriter::new(file))
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
}
