//! A GPU session, opened and closed in one place for every command and the
//! viewer: a device chosen as the options say, the work, then everything
//! destroyed and the validation layer's messages read (leaks are reported
//! during the destruction). With validation on, any message fails the
//! session. Commands never open or close a GPU themselves.

use crate::gpu::{GpuContext, GpuError, GpuOptions};
use std::ops::Deref;

/// An open device. Close it with [`close`](Self::close) once everything made
/// on it is destroyed: that is when its validation messages are known.
pub struct GpuSession {
    ctx: GpuContext,
}

impl GpuSession {
    /// A device as `options` ask, on any queue family that computes and draws.
    pub fn open(options: &GpuOptions) -> Result<Self, GpuError> {
        Ok(GpuSession { ctx: GpuContext::new(options, &|_, _, _, _| true)? })
    }

    /// A session around a context opened for a purpose of its own (a
    /// window's, whose queue must present).
    pub(crate) fn around(ctx: GpuContext) -> Self {
        GpuSession { ctx }
    }

    /// Destroys the device (the caller destroyed its own objects first);
    /// any validation message, leak reports included, is a
    /// [`GpuError::Validation`].
    pub fn close(self) -> Result<(), GpuError> {
        let messages = self.ctx.finish();
        match messages.first() {
            Some(first) => Err(GpuError::Validation { count: messages.len(), first: first.clone() }),
            None => Ok(()),
        }
    }
}

impl Deref for GpuSession {
    type Target = GpuContext;
    fn deref(&self) -> &GpuContext {
        &self.ctx
    }
}

/// Runs `work` in a session opened with `options`, then closes it. The
/// work's error comes first; else validation messages are a
/// [`GpuError::Validation`].
pub fn with_gpu<T, E: From<GpuError>>(
    options: &GpuOptions,
    work: impl FnOnce(&GpuContext) -> Result<T, E>,
) -> Result<T, E> {
    let session = GpuSession::open(options)?;
    let result = work(&session);
    let closed = session.close();
    let value = result?;
    closed?;
    Ok(value)
}
