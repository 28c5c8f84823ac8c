//! Input files read safely, shared by every layer that reads what a user
//! names: only regular files (a FIFO, a device, a directory or a socket is
//! an error naming what it is, never a hang or an endless read), opened
//! non-blocking, never more bytes read than allowed. Text files also lose a
//! UTF-8 byte-order mark and are refused, with the byte offset, when they
//! are not UTF-8. Knows nothing of any other module; its errors name no
//! file (the caller does).

use std::fs::{File, FileType};
use std::io::Read;
use std::path::Path;

/// Why an input file was not read. Prints without the path (the caller
/// names the file): `is a FIFO, not a regular file`.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be opened or read.
    #[error("cannot read: {0}")]
    Io(#[source] std::io::Error),
    /// A FIFO, a device, a directory or a socket.
    #[error("is {0}, not a regular file")]
    NotRegular(&'static str),
    /// Larger than the caller allows.
    #[error("is {size} bytes, more than the {limit} allowed")]
    TooLarge {
        /// Its size in bytes (at least `limit + 1` when it grew while read).
        size: u64,
        /// The most allowed.
        limit: u64,
    },
    /// Not UTF-8 text.
    #[error("is not UTF-8 text: invalid byte at offset {offset} (line {line}, column {column})")]
    NotUtf8 {
        /// Offset of the first invalid byte from the file's start.
        offset: usize,
        /// Its line, from 1.
        line: usize,
        /// Its column in characters, from 1.
        column: usize,
    },
}

/// What a file type is when it is not a regular file.
fn special_kind(t: &FileType) -> Option<&'static str> {
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some("a FIFO");
        }
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_block_device() {
            return Some("a block device");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a regular file but a special file")
}

/// Opens `path` for reading, following symlinks, if it is a regular file;
/// returns it with its length. The type is checked before opening (opening a
/// FIFO blocks until a writer comes) and again on the open file, which is
/// opened non-blocking in case a FIFO was swapped in between.
pub fn open_regular(path: &Path) -> Result<(File, u64), InputError> {
    let meta = std::fs::metadata(path).map_err(InputError::Io)?;
    if let Some(kind) = special_kind(&meta.file_type()) {
        return Err(InputError::NotRegular(kind));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(InputError::Io)?;
    let meta = file.metadata().map_err(InputError::Io)?;
    if let Some(kind) = special_kind(&meta.file_type()) {
        return Err(InputError::NotRegular(kind));
    }
    Ok((file, meta.len()))
}

/// Reads at most `len` bytes from `file` (its size said `size`, which only
/// sizes the buffer: a file that grew is still cut at `len`).
pub fn read_up_to(file: File, len: u64, size: u64) -> std::io::Result<Vec<u8>> {
    let mut data = Vec::with_capacity(len.min(size) as usize);
    file.take(len).read_to_end(&mut data)?;
    Ok(data)
}

/// Reads the regular file `path` whole as text of at most `limit` bytes:
/// a leading UTF-8 byte-order mark is dropped, invalid UTF-8 refused with
/// where it is.
pub fn read_text(path: &Path, limit: u64) -> Result<String, InputError> {
    let (file, size) = open_regular(path)?;
    if size > limit {
        return Err(InputError::TooLarge { size, limit });
    }
    // One byte past the limit tells a file that grew since it was measured.
    let bytes = read_up_to(file, limit.saturating_add(1), size).map_err(InputError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge { size: bytes.len() as u64, limit });
    }
    text_of(bytes)
}

/// `bytes` as text, without a leading byte-order mark.
fn text_of(mut bytes: Vec<u8>) -> Result<String, InputError> {
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    let skipped = if bytes.starts_with(BOM) { BOM.len() } else { 0 };
    bytes.drain(..skipped);
    String::from_utf8(bytes).map_err(|e| {
        let valid_up_to = e.utf8_error().valid_up_to();
        // The valid prefix is UTF-8, so its lines and characters count.
        let valid = std::str::from_utf8(&e.as_bytes()[..valid_up_to]).unwrap_or_default();
        let line_start = valid.rfind('\n').map_or(0, |at| at + 1);
        InputError::NotUtf8 {
            offset: skipped + valid_up_to,
            line: valid.matches('\n').count() + 1,
            column: valid[line_start..].chars().count() + 1,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_files_are_refused_naming_what_they_are() {
        let e = read_text(Path::new("/dev/zero"), 100).unwrap_err().to_string();
        assert_eq!(e, "is a character device, not a regular file");
        let e = read_text(Path::new("/"), 100).unwrap_err().to_string();
        assert_eq!(e, "is a directory, not a regular file");
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("f");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_text(&fifo, 100).unwrap_err().to_string();
        assert_eq!(e, "is a FIFO, not a regular file");
        assert!(matches!(read_text(&dir.path().join("missing"), 100), Err(InputError::Io(_))));
    }

    #[test]
    fn text_is_bounded_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.ron");
        std::fs::write(&path, "\u{feff}(states: [])").unwrap();
        assert_eq!(read_text(&path, 100).unwrap(), "(states: [])");
        let e = read_text(&path, 5).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { size: 15, limit: 5 }), "{e:?}");
        std::fs::write(&path, b"(a: 1,\n  \"h\xC3\xA9\xFF\")").unwrap();
        let e = read_text(&path, 100).unwrap_err().to_string();
        assert_eq!(e, "is not UTF-8 text: invalid byte at offset 13 (line 2, column 6)");
        std::fs::write(&path, b"\xEF\xBB\xBF\xFF").unwrap();
        let e = read_text(&path, 100).unwrap_err().to_string();
        assert!(e.contains("offset 3 (line 1, column 1)"), "{e}");
    }
}
