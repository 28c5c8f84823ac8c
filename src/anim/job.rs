//! The error every job's `validate()` returns.

use std::fmt;

/// Why a job refused its inputs. The message names the offending input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobError(pub String);

impl JobError {
    /// Builds an error from anything printable.
    pub fn new(message: impl Into<String>) -> Self {
        JobError(message.into())
    }
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for JobError {}

/// Returns an error unless `actual` equals `expected`, naming the slice.
pub fn check_len(what: &str, actual: usize, expected: usize) -> Result<(), JobError> {
    if actual == expected {
        Ok(())
    } else {
        Err(JobError(format!("{what}: {actual} elements, expected {expected}")))
    }
}
