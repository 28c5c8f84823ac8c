//! The error every GPU call returns.

use ash::vk;
use std::fmt;

/// A Vulkan call failed, or the machine lacks something vkskin needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuError(pub String);

impl GpuError {
    /// An error from a message.
    pub fn new(message: impl Into<String>) -> Self {
        GpuError(message.into())
    }

    /// Wraps a failed Vulkan call, naming it.
    pub fn vk(call: &str, result: vk::Result) -> Self {
        GpuError(format!("{call} failed: {result:?}"))
    }
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GpuError {}

/// Adds the call name to a raw `vk::Result` error.
pub trait VkResultExt<T> {
    /// Names the failed call.
    fn call(self, name: &str) -> Result<T, GpuError>;
}

impl<T> VkResultExt<T> for Result<T, vk::Result> {
    fn call(self, name: &str) -> Result<T, GpuError> {
        self.map_err(|e| GpuError::vk(name, e))
    }
}
