//! Track compression with a measured error bound, in the style of ACL.
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

pub mod cursor;
pub mod error;
pub mod interpolation;
pub mod quantize;
pub mod reduce;
pub mod report;
pub mod sampler;

pub use cursor::CompressedCursor;
pub use error::ErrorMetric;
pub use sampler::CompressedSampleJob;

use crate::anim::sampling::{check_clip, sample_joint, sample_morph_tracks};
use crate::anim::{
    Clip, Interpolation, JobError, MorphWeightTrack, RotationBlend, Skeleton, Track, Transform,
};
use crate::anim::{SampleJob, SamplingCursor};
use nalgebra::Matrix4;
use quantize::{BitWriter, Range};
use reduce::{Encoded, TrackInput, Value};
use std::sync::atomic::{AtomicU64, Ordering};

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

/// How to compress.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompressionSettings {
    /// Largest distance a virtual vertex may move, object-space units:
    /// 0.0001 (0.01 cm in metres) by default.
    pub error_bound: f64,
    /// Distance of the virtual vertices from each joint, object-space
    /// units: 0.03 (3 cm in metres) by default.
    pub vertex_distance: f64,
    /// Object-space units per metre the two distances above were scaled
    /// for (reports convert errors back to centimetres with it).
    pub units_per_meter: f64,
    /// How the exact clip's LINEAR rotations are sampled (glTF: slerp).
    pub reference: RotationBlend,
}

impl Default for CompressionSettings {
    fn default() -> Self {
        CompressionSettings {
            error_bound: 1e-4,
            vertex_distance: 0.03,
            units_per_meter: 1.0,
            reference: RotationBlend::Slerp,
        }
    }
}

impl CompressionSettings {
    /// The default bound and vertex distance in the units `skeleton` looks
    /// authored in. glTF says metres, but some files (the Fox sample among
    /// them) are centimetres without a scale: a skeleton whose rest pose
    /// spans more than 20 units (no character is 20 m tall) is taken as
    /// centimetres, and both distances are scaled by 100.
    pub fn for_skeleton(skeleton: &Skeleton) -> Self {
        let units_per_meter = if rest_extent(skeleton) > 20.0 { 100.0 } else { 1.0 };
        let default = Self::default();
        CompressionSettings {
            error_bound: default.error_bound * units_per_meter,
            vertex_distance: default.vertex_distance * units_per_meter,
            units_per_meter,
            ..default
        }
    }
}

/// Largest side of the box around every joint's rest position, object space.
pub fn rest_extent(skeleton: &Skeleton) -> f64 {
    let metric = ErrorMetric::new(skeleton, 0.0);
    let mut world = vec![Matrix4::identity(); skeleton.len()];
    metric.world(skeleton.rest(), &mut world);
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for m in &world {
        for i in 0..3 {
            lo[i] = lo[i].min(m[(i, 3)]);
            hi[i] = hi[i].max(m[(i, 3)]);
        }
    }
    (0..3).map(|i| hi[i] - lo[i]).fold(0.0, f64::max)
}

/// What compression achieved, measured.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CompressionStats {
    /// Bytes of the clip's keys as f32: times and values of every track.
    pub raw_bytes: usize,
    /// Bytes the compressed clip's data take (time table, track headers,
    /// constants, bit stream).
    pub compressed_bytes: usize,
    /// Largest virtual-vertex error on the grid, object-space units.
    pub max_error: f64,
    /// Mean virtual-vertex error over every joint and grid time.
    pub mean_error: f64,
    /// Keys in the clip's tracks (a morph track's once per weight).
    pub raw_keys: usize,
    /// Keys stored (constants count one).
    pub kept_keys: usize,
    /// Grid times the error was measured at.
    pub grid_times: usize,
    /// The bound asked for.
    pub error_bound: f64,
    /// Object-space units per metre (see `CompressionSettings`).
    pub units_per_meter: f64,
}

impl CompressionStats {
    /// Raw bytes over compressed bytes.
    pub fn ratio(&self) -> f64 {
        self.raw_bytes as f64 / self.compressed_bytes.max(1) as f64
    }
}

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
const STEP: u8 = 1;
/// `PackedTrack::flags`: nlerp's ratio is corrected to follow slerp (see [`interpolation`]).
const CORRECTED: u8 = 2;
/// `PackedTrack::flags`: where the dropped rotation component starts.
const DROPPED_SHIFT: u32 = 2;
/// `PackedTrack::flags`: where the property starts (translation, rotation, scale, weight = 0..4).
const PROPERTY_SHIFT: u32 = 4;
const PROPERTIES: [Property; 4] =
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
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A clip compressed for one skeleton; sample it with [`CompressedSampleJob`].
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
    /// Bytes of data it holds (see [`CompressionStats::compressed_bytes`]).
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

/// Bytes of a clip's keys as f32 (times and every value component).
pub fn raw_bytes(clip: &Clip) -> usize {
    fn track<T>(t: &Option<Track<T>>, components: usize) -> usize {
        t.as_ref().map_or(0, |t| 4 * t.times.len() + 4 * components * t.values.len())
    }
    let joints: usize = clip
        .joint_tracks
        .iter()
        .map(|j| track(&j.translation, 3) + track(&j.rotation, 4) + track(&j.scale, 3))
        .sum();
    let morphs: usize = clip.morph_tracks.iter().map(|m| 4 * m.times.len() + 4 * m.values.len()).sum();
    joints + morphs
}

/// Most sub-intervals a key interval of a curved track (CUBICSPLINE, or
/// slerped rotation) is resampled into: the runtime interpolates linearly
/// (corrected nlerp for rotations), and key reduction then thins the
/// points out. Slerped rotations rarely need any: the corrected nlerp
/// follows slerp within 1e-6 rad between keys 30° apart.
const MAX_SUBDIVISIONS: usize = 256;
/// Key-reduction grid points per interval of the time table: the
/// runtime's nlerp and the exact slerp agree at the ends and the middle and
/// differ most near the quarters (uncorrected; corrected, far less, in
/// between).
const GRID_STEPS: usize = 4;
/// Measurement grid points per interval of the time table (a multiple of
/// `GRID_STEPS`). The object-space error sums several joints' errors, each
/// with its own phase, so its peak can fall between the key-reduction
/// grid's points: RobotExpressive's Jump measured 0.9994 of the bound on
/// that grid and 1.0497 at the worst of 4,000 times.
const MEASURE_STEPS: usize = 16;
/// Share of the bound the measurement grid must stay within, so that the
/// peaks between its points stay within the whole bound (between 16 points
/// per interval they rose 0.3 % at most over every shared and anchor clip).
const MEASURED_SHARE: f64 = 0.99;
/// Rounds of tightening before giving up on the bound.
const MAX_ROUNDS: usize = 40;
/// What each round multiplies the tolerance of an offending joint's chain by.
const TIGHTEN: f64 = 0.75;

fn value_of(t: &Transform, property: Property) -> Value {
    match property {
        Property::Translation => [t.translation.x, t.translation.y, t.translation.z, 0.0].map(f64::from),
        Property::Scale => [t.scale.x, t.scale.y, t.scale.z, 0.0].map(f64::from),
        Property::Rotation => {
            let q = t.rotation.as_ref();
            [q.i, q.j, q.k, q.w].map(f64::from)
        }
        // Not part of a transform (see the morph tracks' inputs).
        Property::Weight => [0.0; 4],
    }
}

/// Whether a track's exact curve is not what the runtime's linear
/// interpolation between its keys gives: cubic tracks, and slerped
/// rotations (the runtime's corrected nlerp is within 1e-6 rad of slerp
/// between keys 30° apart, 2e-4 rad at 90°). These are resampled before
/// key reduction where that is not within the bound.
fn curved(interpolation: Interpolation, property: Property, settings: &CompressionSettings) -> bool {
    interpolation == Interpolation::CubicSpline
        || (interpolation == Interpolation::Linear
            && property == Property::Rotation
            && settings.reference == RotationBlend::Slerp)
}

/// Whether the runtime corrects nlerp's ratio to follow slerp on this
/// track: rotations whose exact curve is slerp (or a spline), not nlerp.
fn corrected(interpolation: Interpolation, property: Property, settings: &CompressionSettings) -> bool {
    property == Property::Rotation && curved(interpolation, property, settings)
}

/// Object-space movement per unit of local error of `property` at joint `j`.
fn error_scale(metric: &ErrorMetric, j: usize, property: Property) -> f64 {
    match property {
        Property::Translation => metric.translation_scale(j),
        Property::Rotation => metric.rotation_scale(j),
        Property::Scale => metric.scale_scale(j),
        // Weights have their own scales (see `compress_for`).
        Property::Weight => 1.0,
    }
}

/// Checks that every track of `clip` is well formed for `skeleton`, and
/// that joints and morph slots fit the 16-bit indices tracks store.
fn check(clip: &Clip, skeleton: &Skeleton) -> Result<(), JobError> {
    if skeleton.len() > usize::from(u16::MAX) {
        return Err(JobError::new(format!("compress: {} joints, at most 65535", skeleton.len())));
    }
    check_clip("compress", clip, skeleton.len(), usize::from(u16::MAX))
}

/// Morph slots `clip` writes: one past the highest.
fn morph_slots(clip: &Clip) -> usize {
    clip.morph_tracks.iter().map(|m| (m.offset + m.count) as usize).max().unwrap_or(0)
}

/// Weight `w` of morph track `mt` at `t`, exactly as `SampleJob` samples it.
fn weight_at(mt: &MorphWeightTrack, w: usize, t: f64) -> f64 {
    let mut out = vec![0.0; (mt.offset + mt.count) as usize];
    sample_morph_tracks(std::slice::from_ref(mt), t, &mut [0], &mut out);
    f64::from(out[mt.offset as usize + w])
}

/// Times to add to the table inside each key interval of a curved track
/// (see [`curved`]) so that lines through the points stay within a quarter
/// of the bound: `value` samples the exact track, `scale` is the
/// object-space movement per unit of its local error.
fn subdivide(
    times: &[f32],
    property: Property,
    value: &dyn Fn(f64) -> Value,
    scale: f64,
    settings: &CompressionSettings,
    table: &mut Vec<f32>,
) {
    let corrected = property == Property::Rotation;
    for w in times.windows(2) {
        let (a, b) = (f64::from(w[0]), f64::from(w[1]));
        let at = |i: usize, n: usize| a + (b - a) * i as f64 / n as f64;
        let mut n = 1;
        while n < MAX_SUBDIVISIONS
            && (0..n).any(|i| {
                let (ta, tb) = (at(i, n), at(i + 1, n));
                let (va, vb) = (value(ta), value(tb));
                [0.25, 0.5, 0.75].iter().any(|&s| {
                    let line = reduce::interpolate(property, &va, &vb, s, corrected);
                    reduce::local_error(property, &value(ta + (tb - ta) * s), &line) * scale
                        > settings.error_bound * 0.25
                })
            })
        {
            n *= 2;
        }
        table.extend((1..n).map(|i| at(i, n) as f32));
    }
}

/// Largest morph-weight error allowed when nothing says how far a weight
/// moves vertices (see [`compress_for`]): a weight of 1 moving a vertex
/// 1 m is then held to the default 0.01 cm.
pub const DEFAULT_WEIGHT_TOLERANCE: f64 = 1e-4;

/// Compresses `clip` (made for `skeleton`) within `settings.error_bound`,
/// its morph weights within [`DEFAULT_WEIGHT_TOLERANCE`]; returns the clip
/// and what was measured.
pub fn compress(
    clip: &Clip,
    skeleton: &Skeleton,
    settings: &CompressionSettings,
) -> Result<(CompressedClip, CompressionStats), JobError> {
    compress_for(clip, skeleton, settings, &[])
}

/// Compresses `clip` (made for `skeleton`) within `settings.error_bound`;
/// morph weight `s` within `weight_tolerances[s]` (the error that moves no
/// vertex further than the bound, see `Rig::morph_weight_tolerances`;
/// [`DEFAULT_WEIGHT_TOLERANCE`] past the end). Returns the clip and what
/// was measured (weight errors in object space: the tolerance stands for
/// the bound).
pub fn compress_for(
    clip: &Clip,
    skeleton: &Skeleton,
    settings: &CompressionSettings,
    weight_tolerances: &[f64],
) -> Result<(CompressedClip, CompressionStats), JobError> {
    check(clip, skeleton)?;
    let rest = skeleton.rest();
    let metric = ErrorMetric::new(skeleton, settings.vertex_distance);
    let slots = morph_slots(clip);
    // Object-space movement per unit of error of each morph weight.
    let weight_scale: Vec<f64> = (0..slots)
        .map(|s| {
            let tolerance = weight_tolerances.get(s).copied().unwrap_or(DEFAULT_WEIGHT_TOLERANCE);
            settings.error_bound / tolerance.max(1e-12)
        })
        .collect();

    // The time table: every key time; curved intervals subdivided until
    // lines through the points stay well within the bound.
    let mut table: Vec<f32> = Vec::new();
    for jt in &clip.joint_tracks {
        let j = jt.joint as usize;
        let tracks = [
            (Property::Translation, jt.translation.as_ref().map(|t| (&t.times, t.interpolation))),
            (Property::Rotation, jt.rotation.as_ref().map(|t| (&t.times, t.interpolation))),
            (Property::Scale, jt.scale.as_ref().map(|t| (&t.times, t.interpolation))),
        ];
        for (property, track) in tracks {
            let Some((times, interpolation)) = track else { continue };
            table.extend_from_slice(times);
            if curved(interpolation, property, settings) {
                let value = |t: f64| value_of(&sample_joint(jt, t, &rest[j], settings.reference), property);
                subdivide(times, property, &value, error_scale(&metric, j, property), settings, &mut table);
            }
        }
    }
    for mt in &clip.morph_tracks {
        table.extend_from_slice(&mt.times);
        if mt.interpolation == Interpolation::CubicSpline {
            for w in 0..mt.count as usize {
                let value = |t: f64| [weight_at(mt, w, t), 0.0, 0.0, 0.0];
                let scale = weight_scale[mt.offset as usize + w];
                subdivide(&mt.times, Property::Weight, &value, scale, settings, &mut table);
            }
        }
    }
    table.sort_by(f32::total_cmp);
    table.dedup();
    // The measurement grid: every table time, and points between them
    // (table entry i is grid point MEASURE_STEPS * i).
    let mut grid: Vec<f64> = Vec::with_capacity(table.len() * MEASURE_STEPS);
    for (i, &t) in table.iter().enumerate() {
        grid.push(f64::from(t));
        if let Some(&next) = table.get(i + 1) {
            let (a, b) = (f64::from(t), f64::from(next));
            grid.extend((1..MEASURE_STEPS).map(|s| a + (b - a) * s as f64 / MEASURE_STEPS as f64));
        }
    }
    // One input per track, and per weight of each morph track: candidate
    // keys (table entry i is key-reduction grid point GRID_STEPS * i) and
    // the exact track on that grid, filled in below.
    let table_index = |t: f32| table.partition_point(|&x| x < t);
    let candidates = |times: &[f32], curved: bool| -> Vec<(u32, f64, Value)> {
        let indices: Vec<usize> = if curved {
            (table_index(times[0])..=table_index(times[times.len() - 1])).collect()
        } else {
            times.iter().map(|&t| table_index(t)).collect()
        };
        indices.into_iter().map(|i| (i as u32, f64::from(table[i]), [0.0; 4])).collect()
    };
    let mut inputs = Vec::new();
    for jt in &clip.joint_tracks {
        let j = jt.joint as usize;
        let tracks = [
            (Property::Translation, jt.translation.as_ref().map(|t| (&t.times, t.interpolation))),
            (Property::Rotation, jt.rotation.as_ref().map(|t| (&t.times, t.interpolation))),
            (Property::Scale, jt.scale.as_ref().map(|t| (&t.times, t.interpolation))),
        ];
        for (property, track) in tracks {
            let Some((times, interpolation)) = track else { continue };
            inputs.push(TrackInput {
                joint: j,
                property,
                step: interpolation == Interpolation::Step,
                keys: candidates(times, curved(interpolation, property, settings)),
                grid: Vec::new(),
                rest: value_of(&rest[j], property),
                error_scale: error_scale(&metric, j, property),
                corrected: corrected(interpolation, property, settings),
            });
        }
    }
    for mt in &clip.morph_tracks {
        let cubic = mt.interpolation == Interpolation::CubicSpline;
        for w in 0..mt.count as usize {
            let slot = mt.offset as usize + w;
            inputs.push(TrackInput {
                joint: slot,
                property: Property::Weight,
                step: mt.interpolation == Interpolation::Step,
                keys: candidates(&mt.times, cubic),
                grid: Vec::new(),
                // Weights are never dropped: the sampler does not know the
                // rest weights the clip was made for.
                rest: [f64::NAN; 4],
                error_scale: weight_scale[slot],
                corrected: false,
            });
        }
    }

    // The exact tracks on the key-reduction grid (every
    // (MEASURE_STEPS / GRID_STEPS)th measurement point). The measurement
    // samples the exact clip again at each of its points rather than
    // keeping every pose of its grid, four times as many: a clip of 36,000
    // keys (5 minutes at 120 Hz) and 100 joints would need 2.3 GB for them.
    let mut exact = Exact::new(clip, rest, settings.reference, slots);
    for &t in grid.iter().step_by(MEASURE_STEPS / GRID_STEPS) {
        exact.sample(t)?;
        for input in &mut inputs {
            let value = match input.property {
                Property::Weight => [f64::from(exact.weights[input.joint]), 0.0, 0.0, 0.0],
                property => value_of(&exact.locals[input.joint], property),
            };
            input.grid.push((t, value));
        }
    }
    for input in &mut inputs {
        for key in &mut input.keys {
            key.2 = input.grid[GRID_STEPS * key.0 as usize].1;
        }
    }

    let mut tolerance = vec![settings.error_bound; inputs.len()];
    let mut encoded: Vec<Encoded> = inputs.iter().map(|i| reduce::encode(i, settings.error_bound)).collect();
    let mut scratch = Measure::new(skeleton.len(), &weight_scale);
    let mut best: Option<(CompressedClip, f64, f64)> = None;
    for round in 0..MAX_ROUNDS {
        let compressed = assemble(clip, skeleton.len(), &table, &inputs, &encoded)?;
        let (max, mean) = scratch.run(&compressed, &metric, rest, &grid, &mut exact)?;
        let limit = settings.error_bound * MEASURED_SHARE;
        let over = max > limit;
        best = Some((compressed, max, mean));
        if !over || round + 1 == MAX_ROUNDS {
            break;
        }
        // Tighten every track on the chain of each joint over the bound,
        // and each weight over it.
        let mut tighten = vec![false; skeleton.len()];
        for (j, &e) in scratch.joint_max.iter().enumerate() {
            if e > limit {
                let mut a = j as u32;
                while a != crate::anim::NO_PARENT && !tighten[a as usize] {
                    tighten[a as usize] = true;
                    a = metric.parent(a as usize);
                }
            }
        }
        for (i, input) in inputs.iter().enumerate() {
            let over = match input.property {
                Property::Weight => scratch.weight_max[input.joint] > limit,
                _ => tighten[input.joint],
            };
            if over {
                tolerance[i] *= TIGHTEN;
                encoded[i] = reduce::encode(input, tolerance[i]);
            }
        }
    }
    let (compressed, max_error, mean_error) = best.expect("at least one round");
    let raw_keys = inputs.iter().map(|i| i.keys.len()).sum::<usize>();
    let kept_keys = encoded
        .iter()
        .map(|e| match e {
            Encoded::Rest => 0,
            Encoded::Constant(_) => 1,
            Encoded::Packed(p) => p.keys.len(),
        })
        .sum();
    let stats = CompressionStats {
        raw_bytes: raw_bytes(clip),
        compressed_bytes: compressed.data_bytes(),
        max_error,
        mean_error,
        raw_keys,
        kept_keys,
        grid_times: grid.len(),
        error_bound: settings.error_bound,
        units_per_meter: settings.units_per_meter,
    };
    Ok((compressed, stats))
}

/// Builds the clip from encoded tracks: only the times in use go into the table.
fn assemble(
    clip: &Clip,
    joints: usize,
    table: &[f32],
    inputs: &[TrackInput],
    encoded: &[Encoded],
) -> Result<CompressedClip, JobError> {
    let mut used = vec![false; table.len()];
    for e in encoded {
        if let Encoded::Packed(p) = e {
            for k in &p.keys {
                used[k.0 as usize] = true;
            }
        }
    }
    let mut remap = vec![0u32; table.len()];
    let mut times = Vec::new();
    for (i, &t) in table.iter().enumerate() {
        if used[i] {
            remap[i] = times.len() as u32;
            times.push(t);
        }
    }
    let time_bits = (usize::BITS - times.len().saturating_sub(1).leading_zeros()).max(1);
    let mask_words = times.len().div_ceil(64);
    let mut masks: Vec<u64> = Vec::new();
    let mut writer = BitWriter::default();
    let mut constants = Vec::new();
    let mut tracks = Vec::new();
    for (input, e) in inputs.iter().zip(encoded) {
        let joint = input.joint as u16;
        match e {
            Encoded::Rest => {}
            Encoded::Constant(value) => {
                constants.push(ConstantTrack { joint, property: input.property, value: *value })
            }
            Encoded::Packed(p) => {
                let bit_offset = u32::try_from(writer.bits())
                    .map_err(|_| JobError::new("compress: more than 4 Gbit of keys"))?;
                // A mask costs a bit per table time, a list `time_bits` per key.
                // Masks hold their keys' indices in the 16 low bits of the
                // cursor's key ids (see `cursor::KeyReader`).
                let masked = 64 * mask_words < p.keys.len() * time_bits as usize
                    && times.len() < 1 << 16
                    && masks.len() / mask_words.max(1) < usize::from(LISTED);
                let mask = if masked {
                    let index = (masks.len() / mask_words) as u16;
                    let start = masks.len();
                    masks.resize(start + mask_words, 0);
                    for (t, _) in &p.keys {
                        let i = remap[*t as usize] as usize;
                        masks[start + i / 64] |= 1 << (i % 64);
                    }
                    index
                } else {
                    LISTED
                };
                // A weight's other two components are 0: not stored.
                let components = input.property.components();
                for (t, q) in &p.keys {
                    if !masked {
                        writer.push(remap[*t as usize], time_bits);
                    }
                    for c in &q[..components] {
                        writer.push(*c, p.bits);
                    }
                }
                let property = PROPERTIES.iter().position(|&p| p == input.property).unwrap_or(0) as u8;
                let flags = (u8::from(input.step) * STEP)
                    | (u8::from(input.corrected) * CORRECTED)
                    | (((p.dropped & 3) as u8) << DROPPED_SHIFT)
                    | (property << PROPERTY_SHIFT);
                tracks.push(PackedTrack {
                    joint,
                    mask,
                    flags,
                    bits: p.bits as u8,
                    step: p.ranges.map(|r| r.step_bits()),
                    keys: p.keys.len() as u32,
                    bit_offset,
                    min: p.ranges.map(|r| r.min),
                });
            }
        }
    }
    // Rotations, translations and scales, weights. Stable: a later track
    // for the same joint (or slot) and property still wins.
    let kind = |p: Property| match p {
        Property::Rotation => 0,
        Property::Translation | Property::Scale => 1,
        Property::Weight => 2,
    };
    tracks.sort_by_key(|t| kind(t.property()));
    let count = |k| tracks.iter().filter(|t| kind(t.property()) == k).count();
    let (rotation_tracks, vector_tracks) = (count(0), count(1));
    let mut corrected = vec![[0.0f32; 4]; rotation_tracks.div_ceil(4)];
    for (i, t) in tracks[..rotation_tracks].iter().enumerate() {
        if t.corrected() {
            corrected[i / 4][i % 4] = f32::from_bits(u32::MAX);
        }
    }
    Ok(CompressedClip {
        name: clip.name.clone(),
        duration: clip.duration,
        id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        joints,
        times,
        time_bits: time_bits as u8,
        masks,
        mask_words,
        constants,
        tracks,
        rotation_tracks,
        vector_tracks,
        morph_slots: morph_slots(clip),
        corrected,
        stream: writer.finish(),
    })
}

/// The exact clip's local pose and morph weights at one time: `SampleJob`
/// with the reference rotation blend (the reference for the error).
struct Exact<'a> {
    clip: &'a Clip,
    rest: &'a [Transform],
    reference: RotationBlend,
    cursor: SamplingCursor,
    /// 0 in every slot: slots no track writes stay 0 in `weights`.
    rest_weights: Vec<f32>,
    locals: Vec<Transform>,
    weights: Vec<f32>,
}

impl<'a> Exact<'a> {
    fn new(clip: &'a Clip, rest: &'a [Transform], reference: RotationBlend, slots: usize) -> Self {
        Exact {
            clip,
            rest,
            reference,
            cursor: SamplingCursor::new(clip),
            rest_weights: vec![0.0; slots],
            locals: rest.to_vec(),
            weights: vec![0.0; slots],
        }
    }

    /// `locals` and `weights` at `t`.
    fn sample(&mut self, t: f64) -> Result<(), JobError> {
        SampleJob {
            clip: self.clip,
            time: t,
            rest: self.rest,
            rest_morph_weights: &self.rest_weights,
            rotation_blend: self.reference,
            cursor: &mut self.cursor,
            output: &mut self.locals,
            morph_output: &mut self.weights,
        }
        .run()
    }
}

/// Buffers for measuring a compressed clip against the exact poses and weights.
struct Measure {
    locals: Vec<Transform>,
    weights: Vec<f32>,
    expected: Vec<Matrix4<f64>>,
    actual: Vec<Matrix4<f64>>,
    errors: Vec<f64>,
    joint_max: Vec<f64>,
    /// Object-space movement per unit of error of each morph weight.
    weight_scale: Vec<f64>,
    /// Largest object-space error of each morph weight.
    weight_max: Vec<f64>,
}

impl Measure {
    fn new(joints: usize, weight_scale: &[f64]) -> Self {
        Measure {
            locals: vec![Transform::IDENTITY; joints],
            weights: vec![0.0; weight_scale.len()],
            expected: vec![Matrix4::identity(); joints],
            actual: vec![Matrix4::identity(); joints],
            errors: vec![0.0; joints],
            joint_max: vec![0.0; joints],
            weight_scale: weight_scale.to_vec(),
            weight_max: vec![0.0; weight_scale.len()],
        }
    }

    /// Samples `clip` with the runtime sampler at every grid time; returns
    /// the largest and the mean error in object space against `exact`:
    /// virtual-vertex errors, and weight errors times their scales (per
    /// joint and per weight maxima in `joint_max` and `weight_max`). Slots
    /// no track writes keep their rest weight, 0 here and in `exact`.
    fn run(
        &mut self,
        clip: &CompressedClip,
        metric: &ErrorMetric,
        rest: &[Transform],
        grid: &[f64],
        exact: &mut Exact,
    ) -> Result<(f64, f64), JobError> {
        let rest_weights = vec![0.0; self.weights.len()];
        self.joint_max.fill(0.0);
        self.weight_max.fill(0.0);
        let mut cursor = CompressedCursor::new(clip);
        let (mut max, mut sum) = (0.0f64, 0.0f64);
        for &t in grid {
            exact.sample(t)?;
            CompressedSampleJob {
                clip,
                time: t,
                rest,
                rest_morph_weights: &rest_weights,
                cursor: &mut cursor,
                output: &mut self.locals,
                morph_output: &mut self.weights,
            }
            .run()?;
            metric.world(&exact.locals, &mut self.expected);
            metric.world(&self.locals, &mut self.actual);
            metric.vertex_errors(&self.expected, &self.actual, &mut self.errors);
            for (m, &e) in self.joint_max.iter_mut().zip(&self.errors) {
                *m = m.max(e);
                max = max.max(e);
                sum += e;
            }
            for (s, m) in self.weight_max.iter_mut().enumerate() {
                let e = f64::from((self.weights[s] - exact.weights[s]).abs()) * self.weight_scale[s];
                *m = m.max(e);
                max = max.max(e);
                sum += e;
            }
        }
        let count = (grid.len() * (self.errors.len() + self.weights.len())).max(1);
        Ok((max, sum / count as f64))
    }
}
