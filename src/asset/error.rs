//! The errors of the asset layer: [`AssetError`] says what is wrong and
//! where (keeping the I/O, JSON, image or rig error that caused it), and
//! [`ImportError`] adds the file.
//!
//! Errors only describe: nothing here recovers, retries or prints more than
//! one line per error.

use crate::anim::JobError;
use crate::text::{escape, human_bytes};
use std::path::{Path, PathBuf};

/// What went wrong while reading a glTF file, its buffers or its images.
/// Prints as one line naming the element; causes are kept as `source()`.
#[derive(Debug, thiserror::Error)]
pub enum AssetError {
    /// A file could not be opened or read.
    #[error("{}cannot read {}: {source}", prefix(what), quoted(what, path))]
    Io {
        /// The element that names the file (`buffer 0`, `image 2`; empty for
        /// the model file, which the import error names).
        what: String,
        /// The path that was read.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// A path names a FIFO, a device, a directory or a socket.
    #[error("{}{} is {kind}, not a regular file", prefix(what), quoted(what, path))]
    NotRegularFile {
        /// The element that names the file.
        what: String,
        /// The path.
        path: PathBuf,
        /// What it is instead ("a FIFO", "a directory", ...).
        kind: &'static str,
    },
    /// A URI leaves the model's folder (or names no local file).
    #[error("{what}: uri \"{}\" {reason}", escape(uri))]
    Uri {
        /// The element whose URI it is.
        what: String,
        /// The URI as written in the file.
        uri: String,
        /// Why it is refused.
        reason: &'static str,
    },
    /// The text is not JSON.
    #[error("invalid JSON: {0}")]
    Json(#[source] serde_json::Error),
    /// The JSON does not follow the glTF schema.
    #[error("invalid glTF JSON: {0}")]
    Schema(#[source] serde_json::Error),
    /// A `data:` URI's base64 payload does not decode.
    #[error("invalid base64 in data URI: {0}")]
    Base64(#[source] base64::DecodeError),
    /// Something the file declares would take more memory than it may use.
    #[error("{what} needs {} ({asked} bytes), more than the {} this file may use (--max-memory {})",
        human_bytes(*.asked), human_bytes(*.allowed), human_bytes(*.max_memory))]
    OverBudget {
        /// The element asking (`accessor 5 (MAT4 x 67108864)`, `image 0 (30000x30000)`).
        what: String,
        /// Bytes it asked for.
        asked: u64,
        /// Bytes the file had left.
        allowed: u64,
        /// The global cap.
        max_memory: u64,
    },
    /// An image's declared size is above what can be sampled.
    #[error("image {index}: {width}x{height} is larger than {limit}x{limit}, the largest image allowed")]
    ImageTooLarge {
        /// glTF image index.
        index: usize,
        /// Declared width.
        width: u32,
        /// Declared height.
        height: u32,
        /// The limit per side.
        limit: u32,
    },
    /// A PNG does not decode.
    #[error("PNG: {0}")]
    Png(#[source] png::DecodingError),
    /// A JPEG does not decode.
    #[error("JPEG: {0}")]
    Jpeg(#[source] jpeg_decoder::Error),
    /// The imported data does not form a valid rig.
    #[error(transparent)]
    Rig(#[from] JobError),
    /// A value or structure the glTF spec (or vkskin) does not accept; the
    /// message names the element.
    #[error("{0}")]
    Invalid(String),
    /// An error inside an element: `what: error`.
    #[error("{what}: {source}")]
    In {
        /// The element (e.g. `mesh 0 "body" primitive 1 POSITION`).
        what: String,
        /// What went wrong in it.
        #[source]
        source: Box<AssetError>,
    },
}

impl AssetError {
    /// The same error inside element `what`.
    pub fn context(self, what: impl Into<String>) -> Self {
        AssetError::In { what: what.into(), source: Box::new(self) }
    }

    /// The innermost error (past every `In`).
    pub fn root(&self) -> &AssetError {
        match self {
            AssetError::In { source, .. } => source.root(),
            other => other,
        }
    }
}

/// `what: `, or nothing for the model file itself.
fn prefix(what: &str) -> String {
    if what.is_empty() { String::new() } else { format!("{what}: ") }
}

/// The path in quotes, or `file` for the model file (named already).
fn quoted(what: &str, path: &Path) -> String {
    if what.is_empty() { "file".to_string() } else { format!("\"{}\"", escape(&path.display().to_string())) }
}

/// `AssetError::Invalid` with a formatted message.
macro_rules! invalid {
    ($($arg:tt)*) => { $crate::asset::error::AssetError::Invalid(format!($($arg)*)) };
}
pub(crate) use invalid;

/// A file could not be imported. Prints as one line that names the file and
/// the element, e.g. `Walk.glb: animation 2 "Walk" channel 5: key times not
/// increasing at key 17 (0.50 after 0.52)`.
#[derive(Debug)]
pub struct ImportError {
    /// The file, as the user named it.
    pub file: String,
    /// What is wrong and where.
    pub error: AssetError,
}

impl ImportError {
    /// An error about `file`.
    pub fn new(file: impl Into<String>, error: AssetError) -> Self {
        ImportError { file: file.into(), error }
    }
}

impl std::fmt::Display for ImportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", escape(&self.file), self.error)
    }
}

impl std::error::Error for ImportError {
    // The asset error is printed as part of this one: its causes come next.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    #[test]
    fn context_keeps_the_cause() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let e = AssetError::Io { what: "buffer 0".into(), path: "a\nb.bin".into(), source: io }
            .context("while loading");
        assert_eq!(e.to_string(), "while loading: buffer 0: cannot read \"a\\nb.bin\": gone");
        let inner = e.source().unwrap();
        assert!(inner.source().unwrap().downcast_ref::<std::io::Error>().is_some());
        assert!(matches!(e.root(), AssetError::Io { .. }));
    }
}
