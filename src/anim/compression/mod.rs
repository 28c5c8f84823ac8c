//! Track compression with a measured error bound, in the style of ACL.
//!
//! Offline compression and its runtime sampler: the runtime never compresses,
//! and nothing here knows a file format, a character or the GPU.
//!
//! A clip is compressed for one skeleton: every translation, rotation and
//! scale track is either dropped (equal to the rest value), stored as one
//! constant, or stored as quantized keys in one bit stream: components
//! range-reduced per track to as few bits as its tolerance allows,
//! rotations as "smallest three" (the component that stays largest is
//! rebuilt from the unit length), and keys removed where interpolating
//! their neighbours stays within the tolerance. Key times refer to one
//! time table per clip: a mask over it (a bit per table time), or, where
//! that is smaller, an index per key. The runtime nlerps rotations; on tracks whose
//! exact curve is slerp it corrects nlerp's ratio to follow slerp (see
//! [`interpolation`]), so that those keep their own keys rather than keys
//! resampled for plain nlerp.
//!
//! The tolerance is an object-space distance: how far a virtual vertex a
//! set distance (3 cm) from each joint moves (see [`error::ErrorMetric`]),
//! errors above a joint included. Tracks start with the whole bound; after
//! each round the compressed clip is sampled by the runtime sampler on a
//! grid (every key time of the clip and fifteen points between each two)
//! and compared with the exact clip, and the tracks of any joint over 99 %
//! of the bound (the margin covers peaks between grid points) and of its
//! ancestors get three quarters of their tolerance, until every joint is
//! within it. The result reports the error it measured.
//!
//! Morph weights are compressed the same way, one scalar track per
//! weight, each within the weight error that moves no vertex further than
//! the bound (the caller says how far each weight moves vertices, see
//! [`compress_for`]).
//!
//! Offline, the compressor: [`compress`](mod@compress) (the steps),
//! `assemble` (the layout), `measure` (the errors), [`reduce`] (one track's
//! bits and keys), [`error`] (the metric), [`settings`] and [`report`] (one
//! row per clip). At runtime, [`clip`] (the format), [`cursor`] and
//! [`sampler`], with [`interpolation`] and [`quantize`] shared by both sides.

mod assemble;
pub mod clip;
pub mod compress;
pub mod cursor;
pub mod error;
pub mod interpolation;
mod measure;
pub mod quantize;
pub mod reduce;
pub mod report;
pub mod sampler;
pub mod settings;

pub use clip::CompressedClip;
pub(crate) use clip::{ConstantTrack, LISTED, PackedTrack};
pub use compress::{compress, compress_for};
pub use cursor::CompressedCursor;
pub use error::ErrorMetric;
pub use sampler::CompressedSampleJob;
pub use settings::{CompressionSettings, CompressionStats, DEFAULT_WEIGHT_TOLERANCE, raw_bytes, rest_extent};

/// Which part of a joint's transform a track animates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Property {
    /// Translation.
    Translation,
    /// Rotation.
    Rotation,
    /// Scale.
    Scale,
    /// One morph weight (the track's `joint` is its morph slot).
    Weight,
}

impl Property {
    /// Components stored per key: three (a rotation's smallest three), or
    /// one for a weight.
    pub(crate) fn components(self) -> usize {
        if self == Property::Weight { 1 } else { 3 }
    }
}
