//! A GPU session, opened and closed in one place for every command: the
//! device chosen as the options say, the work, then everything destroyed
//! and the validation layer's messages read (leaks are reported during the
//! destruction). With validation on, any message fails the session. Commands
//! never open or close a GPU themselves.

use crate::gpu::{GpuContext, GpuError, GpuOptions};

/// Runs `work` on a device opened with `options` (any queue family that
/// computes and draws), then closes it. The work's error comes first; else
/// validation messages are a [`GpuError::Validation`].
pub fn with_gpu<T, E: From<GpuError>>(
    options: &GpuOptions,
    work: impl FnOnce(&GpuContext) -> Result<T, E>,
) -> Result<T, E> {
    let ctx = GpuContext::new(options, &|_, _, _, _| true)?;
    let result = work(&ctx);
    // The work destroyed its objects; destroying the context reports leaks.
    let messages = ctx.finish();
    let value = result?;
    match messages.first() {
        Some(first) => Err(GpuError::Validation { count: messages.len(), first: first.clone() }.into()),
        None => Ok(value),
    }
}
