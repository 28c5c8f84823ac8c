//! The compressed clip: the runtime format the compressor writes and the
//! sampler reads (time table, key-time masks, constant tracks, packed track
//! headers and one bit stream), and how its header fields are packed.
//!
//! A format only: nothing here compresses, decodes or samples.

use super::Property;
use super::key_decode::KeyDecode;
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
/// three components of `bits[c]` bits each (all with the same step),
/// preceded by `time_bits` of time-table index unless the track's key
/// times are a mask (see `mask`). 32 bytes.
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
    /// Each component's bits (0: the component is its `min`).
    pub(crate) bits: [u8; 3],
    /// The components' quantization step, bfloat16 (see [`Range::step_bits`]).
    pub(crate) step: u16,
    pub(crate) keys: u32,
    pub(crate) bit_offset: u32,
    /// Each component's smallest value.
    pub(crate) min: [f32; 3],
}

const _: () = assert!(std::mem::size_of::<PackedTrack>() == 32);

/// A CUBICSPLINE track stored as Hermite keys in the clip's bit stream:
/// per key, after `time_bits` of time-table index unless a mask holds the
/// key times, its in-tangent, value and out-tangent, `width` components
/// each (four for a rotation: a spline's keys cannot drop one, and it is
/// normalised after the spline, as glTF samples it; three for a
/// translation or scale; one for a weight). Component `c` takes `bits[c]`
/// bits from `min[c]`, in steps of `step[0]` for values and `step[1]` for
/// tangents (bfloat16, see [`Range::step_bits`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CubicTrack {
    pub(crate) joint: u16,
    pub(crate) property: Property,
    /// As `PackedTrack::mask`.
    pub(crate) mask: u16,
    pub(crate) keys: u32,
    pub(crate) bit_offset: u32,
    pub(crate) width: u8,
    pub(crate) bits: [u8; CUBIC_COMPONENTS],
    pub(crate) step: [u16; 2],
    pub(crate) min: [f32; CUBIC_COMPONENTS],
}

/// Most components a Hermite key stores: in-tangent, value and
/// out-tangent of a rotation.
pub(crate) const CUBIC_COMPONENTS: usize = 12;

impl CubicTrack {
    /// Bits of one key's components.
    pub(crate) fn value_bits(&self) -> u32 {
        self.bits.iter().map(|&b| u32::from(b)).sum()
    }

    /// The quantization step of a key's part `part` (0 in-tangent, 1 value, 2 out-tangent).
    #[inline(always)]
    pub(crate) fn part_step(&self, part: usize) -> f32 {
        Range::step_from_bits(if part == 1 { self.step[0] } else { self.step[1] })
    }
}

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

    /// Bits of one key's components.
    pub(crate) fn value_bits(&self) -> u32 {
        self.bits.iter().map(|&b| u32::from(b)).sum()
    }

    /// Component `c`'s range.
    #[inline(always)]
    pub(crate) fn range(&self, c: usize) -> Range {
        Range { min: self.min[c], step: Range::step_from_bits(self.step) }
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

/// The times a clip's keys are at, in order: listed, or the frames of a
/// uniform rate when every key falls on one (a baked clip, or one thinned
/// from baked frames), which then take no bytes at all.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TableTimes {
    /// Each time as an f32.
    Listed(Vec<f32>),
    /// `count` frames, frame `i` at `i * interval` (in f32, as `at` computes it).
    Frames { count: u32, interval: f32 },
}

impl TableTimes {
    /// How many times.
    pub(crate) fn len(&self) -> usize {
        match self {
            TableTimes::Listed(times) => times.len(),
            TableTimes::Frames { count, .. } => *count as usize,
        }
    }

    /// Time `i` (0 past the end).
    #[inline(always)]
    pub(crate) fn at(&self, i: usize) -> f32 {
        match self {
            TableTimes::Listed(times) => times.get(i).copied().unwrap_or(0.0),
            TableTimes::Frames { count, interval } => {
                if i < *count as usize {
                    frame_time(i as u32, *interval)
                } else {
                    0.0
                }
            }
        }
    }

    /// The last time at or before `t` (the first when `t` is before them all).
    pub(crate) fn last_at_or_before(&self, t: f64) -> usize {
        match self {
            TableTimes::Listed(times) => times.partition_point(|&x| f64::from(x) <= t).saturating_sub(1),
            TableTimes::Frames { count, interval } => {
                let last = count.saturating_sub(1);
                // A guess from the rate, then exact against the times `at` gives.
                let mut i = (t / f64::from(*interval)).floor().clamp(0.0, f64::from(last)) as u32;
                while i < last && f64::from(frame_time(i + 1, *interval)) <= t {
                    i += 1;
                }
                while i > 0 && f64::from(frame_time(i, *interval)) > t {
                    i -= 1;
                }
                i as usize
            }
        }
    }

    /// Bytes they take.
    pub(crate) fn bytes(&self) -> usize {
        match self {
            TableTimes::Listed(times) => times.len() * 4,
            TableTimes::Frames { .. } => 0,
        }
    }
}

/// Time of frame `i` at `interval` seconds a frame.
#[inline(always)]
pub(crate) fn frame_time(i: u32, interval: f32) -> f32 {
    i as f32 * interval
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
    pub(crate) times: TableTimes,
    /// Bits of a time-table index (listed key times).
    pub(crate) time_bits: u8,
    /// Key-time masks, `mask_words` each: bit `i` of a mask set where
    /// `times[i]` is one of its track's keys.
    pub(crate) masks: Vec<u64>,
    /// Words of a key-time mask: `times.len().div_ceil(64)`.
    pub(crate) mask_words: usize,
    /// Tracks stored as one value, grouped by property in [`PROPERTIES`]'
    /// order (see [`CompressedClip::constants_by_property`]).
    pub(crate) constants: Vec<ConstantTrack>,
    /// Where each property's group of `constants` ends.
    pub(crate) constant_ends: [usize; 4],
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
    /// Morph slots from 0 up to this one are each written by some track:
    /// a sampler with no more morph slots than that copies no rest
    /// weights first.
    pub(crate) weights_written: usize,
    /// Per block of four morph weight tracks, the first of four
    /// consecutive slots they write, in lane order (`u32::MAX`: they do
    /// not): written with one store.
    pub(crate) weight_runs: Vec<u32>,
    /// CUBICSPLINE tracks (sampled one at a time after the others).
    pub(crate) cubic: Vec<CubicTrack>,
    /// Per block of four rotation tracks, all bits set in the lanes of
    /// tracks with a slerp correction (`PackedTrack::corrected`).
    pub(crate) corrected: Vec<[f32; 4]>,
    /// Per block of four rotation tracks, of four translation or scale
    /// tracks, and of four morph weights, the lanes' decoding constants
    /// (derived from `tracks`; see [`KeyDecode`]).
    pub(crate) rotation_decode: Vec<KeyDecode>,
    pub(crate) vector_decode: Vec<KeyDecode>,
    pub(crate) weight_decode: Vec<KeyDecode>,
    /// Every packed track's keys, padded for 8-byte loads.
    pub(crate) stream: Vec<u8>,
}

impl CompressedClip {
    /// Bytes of data it holds (see [`CompressionStats::compressed_bytes`](super::CompressionStats::compressed_bytes)).
    pub fn data_bytes(&self) -> usize {
        self.bytes_by_part().total()
    }

    /// Where its bytes go.
    pub fn bytes_by_part(&self) -> ClipBytes {
        ClipBytes {
            times: self.times.bytes(),
            masks: self.masks.len() * 8,
            constants: self.constants.len() * std::mem::size_of::<ConstantTrack>(),
            headers: self.tracks.len() * std::mem::size_of::<PackedTrack>()
                + self.cubic.len() * std::mem::size_of::<CubicTrack>(),
            stream: self.stream.len(),
        }
    }

    /// The constant tracks of each property: translations, rotations,
    /// scales and morph weights. A loop per property writes them without a
    /// branch per track: a `match` per track took about 30 instructions,
    /// on the ozz anchor clips (40 constants) a fifth of a frame's.
    pub(crate) fn constants_by_property(&self) -> [&[ConstantTrack]; 4] {
        let [translations, rotations, scales, _] = self.constant_ends;
        let c = &self.constants;
        [&c[..translations], &c[translations..rotations], &c[rotations..scales], &c[scales..]]
    }

    /// Tracks stored as keys (Hermite keys included).
    pub fn packed_tracks(&self) -> usize {
        self.tracks.len() + self.cubic.len()
    }

    /// Tracks stored as one value.
    pub fn constant_tracks(&self) -> usize {
        self.constants.len()
    }

    /// Morph weights it writes: one past the highest slot (a sampler's
    /// rest weights need at least these).
    pub fn morph_slots(&self) -> usize {
        self.morph_slots
    }
}

/// Where a compressed clip's bytes go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct ClipBytes {
    /// The time table.
    pub times: usize,
    /// Key-time masks.
    pub masks: usize,
    /// Tracks stored as one value.
    pub constants: usize,
    /// Packed track headers.
    pub headers: usize,
    /// The bit stream of keys (with its 8 bytes of padding).
    pub stream: usize,
}

impl ClipBytes {
    /// All of them.
    pub fn total(&self) -> usize {
        self.times + self.masks + self.constants + self.headers + self.stream
    }
}
