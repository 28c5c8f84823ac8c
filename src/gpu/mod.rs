//! Raw Vulkan (ash) with no knowledge of animation: instance and validation,
//! device choice, memory, buffers and images, shaders, frame slots with
//! deferred destruction, one-shot command submission. It must never use
//! `crate::anim`, `crate::asset`, `crate::render`, `crate::character` or
//! `crate::world`: they build on it, not it on them.

pub mod barrier;
pub mod buffer;
pub mod context;
pub mod device_select;
pub mod error;
pub mod frame;
pub mod image;
pub mod immediate;
pub mod pipeline;
pub mod shader;
pub mod staging;
pub mod swapchain;
pub mod validation;

pub use buffer::Buffer;
pub use context::{BufferLimits, GpuContext, GpuOptions};
pub use error::GpuError;
pub use frame::{FRAMES_IN_FLIGHT, FrameRing, FrameSlot};
pub use image::Image;
pub use validation::ValidationLog;
