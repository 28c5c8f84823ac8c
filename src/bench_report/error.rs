//! The error the bench report returns.

use std::fmt;

/// Samples that cannot be summarised, or a report file that cannot be
/// written or read. Prints as one line that names the file or the samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportError(pub String);

impl ReportError {
    /// An error from a message.
    pub fn new(message: impl Into<String>) -> Self {
        ReportError(message.into())
    }
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReportError {}
