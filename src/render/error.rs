//! The error of the render layer: rendering frames (GPU work, posing each
//! frame) and writing them out (PNG / animated PNG files). It never hides the
//! error it wraps.

use crate::anim::PoseError;
use crate::atomic_file::OutputError;
use crate::gpu::GpuError;

/// Rendering or writing frames failed. Prints as one line; causes are kept
/// as `source()` (the [`GpuError`] with its `vk::Result`, the I/O or PNG
/// encoding error, the pose error).
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// A GPU call, an allocation or a wait for the GPU failed.
    #[error("{0}")]
    Gpu(#[from] GpuError),
    /// Posing a frame (or skinning it on the CPU to frame the camera) failed.
    #[error("{file}: {source}")]
    Pose {
        /// The model being posed.
        file: String,
        /// Why.
        #[source]
        source: PoseError,
    },
    /// The model has no mesh instance: there is nothing to frame or draw.
    #[error("{file}: nothing to draw (no mesh instances)")]
    NothingToDraw {
        /// The model.
        file: String,
    },
    /// An output file could not be created or written.
    #[error("{0}")]
    Output(#[from] OutputError),
    /// The PNG encoder refused the image (or could not write it).
    #[error("{name}: {source}")]
    Png {
        /// The output's name.
        name: String,
        /// The encoder's reason.
        #[source]
        source: png::EncodingError,
    },
    /// A request or a sequence of frames that does not fit (zero frames, a
    /// frame of the wrong size, more frames than an animation announced).
    #[error("{0}")]
    Invalid(String),
}

impl RenderError {
    /// The GPU error underneath, if that is what failed.
    pub fn gpu(&self) -> Option<&GpuError> {
        match self {
            RenderError::Gpu(e) => Some(e),
            _ => None,
        }
    }
}

/// For callers that still report `String` errors (the interactive viewer):
/// the one-line message.
impl From<RenderError> for String {
    fn from(error: RenderError) -> String {
        error.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ash::vk;
    use std::error::Error;

    #[test]
    fn causes_are_kept() {
        let lost = RenderError::from(GpuError::vk("vkQueueSubmit2", vk::Result::ERROR_DEVICE_LOST));
        assert!(lost.gpu().is_some_and(GpuError::is_device_lost));
        let source = lost.source().and_then(|s| s.downcast_ref::<GpuError>());
        assert_eq!(source.and_then(GpuError::vk_result), Some(vk::Result::ERROR_DEVICE_LOST));
        assert_eq!(lost.to_string(), source.unwrap().to_string());

        let pose = RenderError::Pose { file: "Fox.glb".into(), source: "joint 3: not finite".into() };
        assert_eq!(pose.to_string(), "Fox.glb: joint 3: not finite");
        assert!(pose.gpu().is_none() && pose.source().is_some());
    }
}
