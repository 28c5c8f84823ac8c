//! The compressed clip: the runtime format the compressor writes and the
//! sampler reads (time table, key-time masks, constant tracks, packed track
//! headers and one bit stream), and how its header fields are packed.
//!
//! A format only: nothing here compresses, decodes or samples.

use super::Property;
use super::quantize::Range;
use std::sync::atomic::AtomicU64;

/// A track stored as one value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ConstantTrack {
    pub(crate) joint: u16,
    pub(crate) property: Property,
    /// x, y, z (and w for a rotation, unit length).
    pub(crate) value: [f32; 4],
}

/// A track stored as quantized keys in the clip's bit stream: per key,
/// three components of `bits` bits, preceded by `time_bits` of time-table
/// index unless the track's key times are a mask (see `mask`).
/// 32 bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PackedTrack {
    pub(crate) joint: u16,
    /// Which of the clip's key-time masks says which table times are this
    /// track's keys ([`LISTED`]: the key times are listed in the stream,
    /// which is smaller when a track has few keys in a long table).
    pub(crate) mask: u16,
    /// [`STEP`], [`CORRECTED`], for rotations the component rebuilt from
    /// the unit length (x, y, z, w = 0..4) shifted by [`DROPPED_SHIFT`],
    /// and the property shifted by [`PROPERTY_SHIFT`].
    pub(crate) flags: u8,
    pub(crate) bits: u8,
    /// Each component's quantization step, bfloat16 (see [`Range::step_bits`]).
    pub(crate) step: [u16; 3],
    pub(crate) keys: u32,
    pub(crate) bit_offset: u32,
    /// Each component's smallest value.
    pub(crate) min: [f32; 3],
}

const _: () = assert!(std::mem::size_of::<PackedTrack>() == 32);

/// `PackedTrack::mask` of a track whose key times are listed in the stream.
pub(crate) const LISTED: u16 = u16::MAX;
/// `PackedTrack::flags`: STEP keys (hold the previous key).
pub(super) const STEP: u8 = 1;
/// `PackedTrack::flags`: nlerp's ratio is corrected to follow slerp (see [`interpolation`](super::interpolation)).
pub(super) const CORRECTED: u8 = 2;
/// `PackedTrack::flags`: where the dropped rotation component starts.
pub(super) const DROPPED_SHIFT: u32 = 2;
/// `PackedTrack::flags`: where the property starts (translation, rotation, scale, weight = 0..4).
pub(super) const PROPERTY_SHIFT: u32 = 4;
pub(super) const PROPERTIES: [Property; 4] =
    [Property::Translation, Property::Rotation, Property::Scale, Property::Weight];

impl PackedTrack {
    /// Which property the track animates.
    pub(crate) fn property(&self) -> Property {
        PROPERTIES[usize::from(self.flags >> PROPERTY_SHIFT) & 3]
    }

    /// Component `c`'s range.
    #[inline(always)]
    pub(crate) fn range(&self, c: usize) -> Range {
        Range { min: self.min[c], step: Range::step_from_bits(self.step[c]) }
    }

    /// STEP keys: the track holds each key until the next.
    pub(crate) fn step(&self) -> bool {
        self.flags & STEP != 0
    }

    /// Rotations: nlerp's ratio is corrected to follow slerp.
    pub(crate) fn corrected(&self) -> bool {
        self.flags & CORRECTED != 0
    }

    /// Rotations: the component rebuilt from the unit length.
    pub(crate) fn dropped(&self) -> usize {
        usize::from(self.flags >> DROPPED_SHIFT) & 3
    }
}

/// Source of unique clip ids (cursors remember the clip their keys came from).
pub(super) static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A clip compressed for one skeleton; sample it with [`CompressedSampleJob`](super::CompressedSampleJob).
#[derive(Debug, Clone)]
pub struct CompressedClip {
    /// The clip's name.
    pub name: Option<String>,
    /// Loop period, as the source clip's.
    pub duration: f32,
    /// Unique id (a clone keeps it: same keys).
    pub(crate) id: u64,
    /// Joints of the skeleton it was compressed for.
    pub(crate) joints: usize,
    /// Key times in use, sorted.
    pub(crate) times: Vec<f32>,
    /// Bits of a time-table index (listed key times).
    pub(crate) time_bits: u8,
    /// Key-time masks, `mask_words` each: bit `i` of a mask set where
    /// `times[i]` is one of its track's keys.
    pub(crate) masks: Vec<u64>,
    /// Words of a key-time mask: `times.len().div_ceil(64)`.
    pub(crate) mask_words: usize,
    pub(crate) constants: Vec<ConstantTrack>,
    /// Rotation tracks first, then translations and scales, then morph
    /// weights (each kind in the source clip's order): the sampler
    /// interpolates four of a kind per SIMD operation.
    pub(crate) tracks: Vec<PackedTrack>,
    /// How many of `tracks` are rotations.
    pub(crate) rotation_tracks: usize,
    /// How many of `tracks` are translations or scales (after the
    /// rotations; the morph weights come last).
    pub(crate) vector_tracks: usize,
    /// Morph slots the clip writes: one past the highest.
    pub(crate) morph_slots: usize,
    /// Per block of four rotation tracks, all bits set in the lanes of
    /// tracks with a slerp correction (`PackedTrack::corrected`).
    pub(crate) corrected: Vec<[f32; 4]>,
    /// Every packed track's keys, padded for 8-byte loads.
    pub(crate) stream: Vec<u8>,
}

impl CompressedClip {
    /// Bytes of data it holds (see [`CompressionStats::compressed_bytes`](super::CompressionStats::compressed_bytes)).
    pub fn data_bytes(&self) -> usize {
        self.times.len() * 4
            + self.masks.len() * 8
            + self.constants.len() * std::mem::size_of::<ConstantTrack>()
            + self.tracks.len() * std::mem::size_of::<PackedTrack>()
            + self.stream.len()
    }

    /// Tracks stored as keys.
    pub fn packed_tracks(&self) -> usize {
        self.tracks.len()
    }

    /// Tracks stored as one value.
    pub fn constant_tracks(&self) -> usize {
        self.constants.len()
    }
}
