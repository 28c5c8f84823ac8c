//! Track compression with a measured error bound, in the style of ACL.
//!
//! Offline compression and its runtime sampler: the runtime never compresses,
//! and nothing here knows a file format, a character or the GPU.
//!
//! A clip is compressed for one skeleton: every translation, rotation and
//! scale track is either dropped (equal to the rest value), stored as one
//! constant, or stored as quantized keys in one bit stream: components
//! range-reduced per track, with one quantization step per track (as
//! coarse as its tolerance allows) and each component as few bits as its
//! own range needs at that step (none for one that stays within a step),
//! rotations as "smallest three" (the component that stays largest is
//! rebuilt from the unit length), and keys removed where interpolating
//! their neighbours stays within the tolerance. Key times refer to one
//! time table per clip: a mask over it (a bit per table time; tracks with
//! the same key times share one, and the sampler's blocks), or, where
//! that is smaller, an index per key. A table whose times fall on the
//! frames of one rate (baked clips, and clips thinned from baked frames)
//! is stored as that rate alone. CUBICSPLINE tracks keep their own keys
//! as quantized Hermite keys (in-tangent, value, out-tangent; see
//! [`hermite`]), and the runtime evaluates the spline. The runtime nlerps
//! rotations; on tracks whose exact curve is slerp it corrects nlerp's
//! ratio to follow slerp (see [`interpolation`]), so that those keep their
//! own keys rather than keys resampled for plain nlerp.
//!
//! The tolerance is an object-space distance: how far a virtual vertex a
//! set distance (3 cm) from each joint moves (see [`error::ErrorMetric`]),
//! errors above a joint included. Tracks start with the whole bound; after
//! each round the compressed clip is sampled by the runtime sampler on a
//! grid (every key time of the clip and fifteen points between each two)
//! and compared with the exact clip, and the tracks of any joint over 99 %
//! of the bound (the margin covers peaks between grid points) and of its
//! ancestors get three quarters of their tolerance, until every joint is
//! within it. That last round may have tightened more than it needed, so
//! every tolerance is then scaled back up as far as the bound allows (a
//! short bisection). The result reports the error it measured.
//!
//! Compression ratios are reported as ACL reports them, against the raw
//! clip at its own key rate (see [`baseline_bytes`]), and against the
//! file's own keys.
//!
//! Morph weights are compressed the same way, one scalar track per
//! weight, each within the weight error that moves no vertex further than
//! the bound (the caller says how far each weight moves vertices, see
//! [`compress_for`]).
//!
//! Offline, the compressor: [`compress`](mod@compress) (the steps),
//! `assemble` (the layout), `measure` (the errors), [`reduce`] (one track's
//! bits and keys; [`hermite`] for splines), [`error`] (the metric),
//! [`settings`] and [`report`] (one row per clip, with
//! [`sampling_cost`](mod@sampling_cost)). At runtime, [`clip`] (the
//! format), [`cursor`] and [`sampler`] (blocks refilled by `refill`, their
//! keys unpacked and decoded by `key_decode`), with [`interpolation`] and
//! [`quantize`] shared by both sides.

mod assemble;
pub mod clip;
pub mod compress;
pub mod cursor;
pub mod error;
pub mod hermite;
pub mod interpolation;
mod key_decode;
mod measure;
pub mod quantize;
pub mod reduce;
mod refill;
mod refill_pair;
pub mod report;
pub mod sampler;
pub mod sampling_cost;
pub mod settings;

pub use clip::{ClipBytes, CompressedClip};
pub(crate) use clip::{ConstantTrack, CubicTrack, LISTED, PackedTrack};
pub use compress::{compress, compress_for};
pub use cursor::CompressedCursor;
pub use error::ErrorMetric;
pub use sampler::CompressedSampleJob;
pub use sampling_cost::{SamplingCost, sampling_cost};
pub use settings::{
    CompressionSettings, CompressionStats, DEFAULT_WEIGHT_TOLERANCE, baseline_bytes, raw_bytes, rest_extent,
};

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
