//! The error every job's `validate()` returns.
//!
//! A message only: it never carries a file name or another layer's error
//! (those layers wrap it).

/// Why a job refused its inputs. The message names the offending input; it
/// is a leaf error (the anim layer calls nothing that fails).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JobError(pub String);

impl JobError {
    /// Builds an error from anything printable.
    pub fn new(message: impl Into<String>) -> Self {
        JobError(message.into())
    }
}

/// Returns an error unless `actual` equals `expected`, naming the slice.
#[inline]
pub fn check_len(what: &str, actual: usize, expected: usize) -> Result<(), JobError> {
    if actual == expected { Ok(()) } else { Err(length_mismatch(what, actual, expected)) }
}

/// `check_len`'s error, out of line: every job checks its lengths on
/// every run, and the check itself is then a compare and a branch (the
/// message's arguments stay out of the registers and off the stack).
#[cold]
#[inline(never)]
fn length_mismatch(what: &str, actual: usize, expected: usize) -> JobError {
    JobError(format!("{what}: {actual} elements, expected {expected}"))
}
