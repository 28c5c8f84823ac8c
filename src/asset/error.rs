//! The one error an import returns.

use std::fmt;

/// A file could not be imported. Prints as one line that names the file and
/// the element, e.g. `Walk.glb: animation 2 "Walk" channel 5: key times not
/// increasing at key 17 (0.50 after 0.52)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    /// The file, as the user named it.
    pub file: String,
    /// What is wrong and where (no file name, no trailing newline).
    pub message: String,
}

impl ImportError {
    /// An error about `file`.
    pub fn new(file: impl Into<String>, message: impl Into<String>) -> Self {
        ImportError { file: file.into(), message: message.into() }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file, self.message)
    }
}

impl std::error::Error for ImportError {}
