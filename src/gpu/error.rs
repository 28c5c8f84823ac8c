//! The error every GPU call returns. It keeps what caused it, so callers can
//! react: a failed Vulkan call keeps its `vk::Result`, a failed allocation
//! keeps gpu-allocator's error and the size that was asked for. It never
//! drops the cause for a string.

use crate::text::human_bytes;
use ash::vk;
use gpu_allocator::AllocationError;
use std::time::Duration;

/// The longest vkskin waits for the GPU to finish one submission (a frame,
/// an upload, a readback) before reporting [`GpuError::Timeout`] instead of
/// hanging. Generous on purpose: on Mesa's lavapipe (the CPU "GPU" of CI and
/// of machines without a graphics card) a frame of a big crowd on two cores
/// can take seconds, and a false timeout would fail a render that was
/// merely slow; a hung real GPU is reset by its kernel driver well before
/// this (and reported as `VK_ERROR_DEVICE_LOST`).
pub const GPU_WAIT_TIMEOUT: Duration = Duration::from_secs(60);

/// A Vulkan call failed, an allocation did not fit, the GPU did not finish
/// in time, or the machine lacks something vkskin needs. Prints as one
/// line; causes are kept (`vk::Result` as itself, gpu-allocator's error as
/// `source()`).
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// A Vulkan call returned an error code.
    #[error("{}", vulkan_message(call, *result))]
    Vulkan {
        /// The Vulkan function (`vkQueueSubmit2`).
        call: &'static str,
        /// What it returned.
        result: vk::Result,
    },
    /// Vulkan refused to create a buffer of that size (a driver may answer
    /// out-of-memory here, before any memory is allocated).
    #[error("creating {what} ({}, {bytes} bytes): {}", human_bytes(*bytes), vulkan_message(call, *result))]
    Creation {
        /// What was being created (the buffer's name).
        what: String,
        /// Its size in bytes.
        bytes: u64,
        /// The Vulkan function (`vkCreateBuffer`).
        call: &'static str,
        /// What it returned.
        result: vk::Result,
    },
    /// gpu-allocator could not provide memory for a buffer or an image.
    #[error("allocating {} ({bytes} bytes) for {what}: {}", human_bytes(*bytes), allocation_reason(source))]
    Allocation {
        /// What was being allocated (the buffer's or image's name).
        what: String,
        /// Bytes asked for (the memory requirements' size).
        bytes: u64,
        /// gpu-allocator's reason.
        #[source]
        source: AllocationError,
    },
    /// The GPU did not finish a submission within [`GPU_WAIT_TIMEOUT`].
    #[error(
        "the GPU did not finish within {waited:?} ({call}): the work is too heavy for this device, or the GPU hangs"
    )]
    Timeout {
        /// The waiting call (`vkWaitForFences`).
        call: &'static str,
        /// How long it waited.
        waited: Duration,
    },
    /// The Khronos validation layer reported problems during a session
    /// (printed as they came); with validation on, any message fails it.
    #[error("{count} validation message(s); the first: {first}")]
    Validation {
        /// How many messages.
        count: usize,
        /// The first one.
        first: String,
    },
    /// The device lacks something vkskin needs, or the input does not fit
    /// the GPU's layouts.
    #[error("{0}")]
    Message(String),
}

impl GpuError {
    /// An error from a message.
    pub fn new(message: impl Into<String>) -> Self {
        GpuError::Message(message.into())
    }

    /// Wraps a failed Vulkan call, naming it. `VK_TIMEOUT` (what a bounded
    /// wait returns when the time is up) becomes [`GpuError::Timeout`].
    pub fn vk(call: &'static str, result: vk::Result) -> Self {
        match result {
            vk::Result::TIMEOUT => GpuError::Timeout { call, waited: GPU_WAIT_TIMEOUT },
            result => GpuError::Vulkan { call, result },
        }
    }

    /// A failed allocation of `bytes` bytes for `what`.
    pub fn allocation(what: impl Into<String>, bytes: u64, source: AllocationError) -> Self {
        GpuError::Allocation { what: what.into(), bytes, source }
    }

    /// The `vk::Result` of a failed Vulkan call.
    pub fn vk_result(&self) -> Option<vk::Result> {
        match self {
            GpuError::Vulkan { result, .. } | GpuError::Creation { result, .. } => Some(*result),
            _ => None,
        }
    }

    /// The GPU (`VK_ERROR_DEVICE_LOST`) or the window's surface
    /// (`VK_ERROR_SURFACE_LOST_KHR`) is gone: nothing more can be drawn
    /// with this device or surface; the work must be stopped, not retried.
    pub fn is_device_lost(&self) -> bool {
        matches!(self.vk_result(), Some(vk::Result::ERROR_DEVICE_LOST | vk::Result::ERROR_SURFACE_LOST_KHR))
    }

    /// The one line to print when this error ended the work of `doing`,
    /// where plainer words help: a lost device or surface says so plainly
    /// (`the GPU was lost (VK_ERROR_DEVICE_LOST) while rendering out.png
    /// (in vkWaitForFences); ...`: nothing was written and the command can
    /// only stop), and a timeout says what it interrupted. `None`: the
    /// error's own message says it well (an allocation names its bytes).
    pub fn while_doing(&self, doing: &str) -> Option<String> {
        match self {
            GpuError::Vulkan { call, result } if self.is_device_lost() => {
                let (what, advice) = if *result == vk::Result::ERROR_SURFACE_LOST_KHR {
                    ("the window's surface was lost", "the window or its display went away")
                } else {
                    (
                        "the GPU was lost",
                        "its driver reset it or crashed; run again, and update the driver if it recurs",
                    )
                };
                Some(format!("{what} ({}) while {doing} (in {call}); {advice}", vk_name(*result)))
            }
            GpuError::Timeout { .. } => Some(format!("{self} (while {doing})")),
            _ => None,
        }
    }

    /// The GPU ran out of memory: a failed allocation, or a Vulkan call that
    /// returned `VK_ERROR_OUT_OF_DEVICE_MEMORY`.
    pub fn is_out_of_device_memory(&self) -> bool {
        match self {
            GpuError::Allocation { source, .. } => matches!(source, AllocationError::OutOfMemory),
            _ => self.vk_result() == Some(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY),
        }
    }

    /// The GPU may still be working on what was submitted (a wait timed
    /// out): memory it uses must not be freed.
    pub fn is_timeout(&self) -> bool {
        matches!(self, GpuError::Timeout { .. })
    }
}

/// `VK_ERROR_DEVICE_LOST` for `vk::Result::ERROR_DEVICE_LOST` (the name in
/// the Vulkan specification, which is what people search for).
pub fn vk_name(result: vk::Result) -> String {
    let name = format!("{result:?}");
    if name.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_') {
        format!("VK_{name}")
    } else {
        // A code ash does not know prints as a number.
        format!("VkResult {}", result.as_raw())
    }
}

fn vulkan_message(call: &str, result: vk::Result) -> String {
    let name = vk_name(result);
    match result {
        vk::Result::ERROR_DEVICE_LOST => {
            format!("the GPU was lost ({name}) in {call}: its driver reset it or it crashed")
        }
        vk::Result::ERROR_SURFACE_LOST_KHR => {
            format!("the window's surface was lost ({name}) in {call}: the window or display is gone")
        }
        vk::Result::ERROR_OUT_OF_DEVICE_MEMORY => format!("{call}: the GPU is out of memory ({name})"),
        vk::Result::ERROR_OUT_OF_HOST_MEMORY => format!("{call}: out of memory ({name})"),
        _ => format!("{call} failed: {name}"),
    }
}

fn allocation_reason(error: &AllocationError) -> String {
    match error {
        AllocationError::OutOfMemory => "the GPU is out of memory".into(),
        other => other.to_string(),
    }
}

/// Adds the call name to a raw `vk::Result` error.
pub trait VkResultExt<T> {
    /// Names the failed call.
    fn call(self, name: &'static str) -> Result<T, GpuError>;
}

impl<T> VkResultExt<T> for Result<T, vk::Result> {
    fn call(self, name: &'static str) -> Result<T, GpuError> {
        self.map_err(|e| GpuError::vk(name, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    #[test]
    fn a_failed_call_keeps_its_result() {
        let e = GpuError::vk("vkQueueSubmit2", vk::Result::ERROR_DEVICE_LOST);
        assert_eq!(e.vk_result(), Some(vk::Result::ERROR_DEVICE_LOST));
        assert!(e.is_device_lost() && !e.is_out_of_device_memory() && !e.is_timeout());
        assert_eq!(
            e.to_string(),
            "the GPU was lost (VK_ERROR_DEVICE_LOST) in vkQueueSubmit2: its driver reset it or it crashed"
        );
        let surface = Err::<(), _>(vk::Result::ERROR_SURFACE_LOST_KHR).call("vkAcquireNextImageKHR");
        let surface = surface.unwrap_err();
        assert!(surface.is_device_lost(), "{surface}");
        assert!(surface.to_string().contains("VK_ERROR_SURFACE_LOST_KHR"), "{surface}");
        let other = GpuError::vk("vkCreateBuffer", vk::Result::ERROR_INITIALIZATION_FAILED);
        assert!(!other.is_device_lost());
        assert_eq!(other.to_string(), "vkCreateBuffer failed: VK_ERROR_INITIALIZATION_FAILED");
        assert_eq!(vk_name(vk::Result::from_raw(-123456)), "VkResult -123456");
    }

    #[test]
    fn out_of_memory_says_how_much_was_asked() {
        let e = GpuError::allocation("skinned vertices", 3 << 30, AllocationError::OutOfMemory);
        assert!(e.is_out_of_device_memory() && !e.is_device_lost());
        assert_eq!(
            e.to_string(),
            "allocating 3.0 GiB (3221225472 bytes) for skinned vertices: the GPU is out of memory"
        );
        assert!(matches!(e.source().and_then(|s| s.downcast_ref()), Some(AllocationError::OutOfMemory)));
        let vk_oom = GpuError::vk("vkAllocateMemory", vk::Result::ERROR_OUT_OF_DEVICE_MEMORY);
        assert!(vk_oom.is_out_of_device_memory());
        let create = GpuError::Creation {
            what: "palettes".into(),
            bytes: 5 << 20,
            call: "vkCreateBuffer",
            result: vk::Result::ERROR_OUT_OF_DEVICE_MEMORY,
        };
        assert!(create.is_out_of_device_memory());
        assert_eq!(
            create.to_string(),
            "creating palettes (5.0 MiB, 5242880 bytes): vkCreateBuffer: the GPU is out of memory (VK_ERROR_OUT_OF_DEVICE_MEMORY)"
        );
        assert_eq!(
            vk_oom.to_string(),
            "vkAllocateMemory: the GPU is out of memory (VK_ERROR_OUT_OF_DEVICE_MEMORY)"
        );
    }

    #[test]
    fn a_bounded_wait_that_runs_out_is_a_timeout() {
        let e = Err::<(), _>(vk::Result::TIMEOUT).call("vkWaitForFences").unwrap_err();
        assert!(e.is_timeout() && !e.is_device_lost());
        assert_eq!(e.vk_result(), None);
        assert!(e.to_string().starts_with("the GPU did not finish within 60s (vkWaitForFences)"), "{e}");
        assert_eq!(GpuError::new("no device").to_string(), "no device");
    }
}
