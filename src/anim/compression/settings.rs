//! How to compress (the error bound, the virtual-vertex distance, the
//! units they are in, the exact rotation blend) and what compression
//! achieved, measured.
//!
//! Plain values: nothing here compresses or samples a clip.

use super::{ClipBytes, ErrorMetric};
use crate::anim::{Clip, RotationBlend, Skeleton, Track};
use nalgebra::Matrix4;

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
    /// A LINEAR or STEP track that key reduction would leave with at least
    /// this share of its keys keeps them all: 0.3 by default (1 keeps only
    /// what reduction keeps). It then has the key times of the clip's
    /// unreduced tracks, shares their blocks, and the sampler moves those
    /// blocks on one key for four or eight tracks at a time, instead of
    /// track by track. The share pays where a lane's crossing on its own
    /// costs more than that many crossings shared: on a Zen 3 core, about
    /// 260 instructions a lane alone against 73 shared, so 0.28 (see the
    /// compression guide for the measurements).
    pub keep_all_keys_from: f64,
}

impl Default for CompressionSettings {
    fn default() -> Self {
        CompressionSettings {
            error_bound: 1e-4,
            vertex_distance: 0.03,
            units_per_meter: 1.0,
            reference: RotationBlend::Slerp,
            keep_all_keys_from: 0.3,
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
    /// Bytes of the clip as ACL's ratios count a raw clip (see
    /// [`baseline_bytes`]).
    pub baseline_bytes: usize,
    /// Where the compressed clip's bytes go (time table, track headers,
    /// constants, bit stream).
    pub compressed_parts: ClipBytes,
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
    /// Bytes the compressed clip's data take.
    pub fn compressed_bytes(&self) -> usize {
        self.compressed_parts.total()
    }

    /// The baseline's bytes over compressed bytes: the compression ratio
    /// as ACL reports it.
    pub fn ratio(&self) -> f64 {
        self.baseline_bytes as f64 / self.compressed_bytes().max(1) as f64
    }

    /// The clip's own keys' bytes over compressed bytes.
    pub fn key_ratio(&self) -> f64 {
        self.raw_bytes as f64 / self.compressed_bytes().max(1) as f64
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

/// Bytes of `clip`, played by a skeleton of `joints` joints, as ACL
/// counts a raw clip for its compression ratios: every joint's rotation,
/// translation and scale as ten f32 (and every morph weight the clip
/// writes as one) at every sample of the clip at its own key rate, first
/// and last included. For a baked clip that is a key per frame; a clip
/// whose keys were thinned is counted at the rate of its source frames,
/// taken as its most common key interval (rounded to 0.1 ms). A clip
/// without two keys on any track is one sample.
pub fn baseline_bytes(clip: &Clip, joints: usize) -> usize {
    let samples = key_rate_samples(clip);
    let weights = clip.morph_tracks.iter().map(|m| (m.offset + m.count) as usize).max().unwrap_or(0);
    samples * (joints * 10 + weights) * 4
}

/// Samples of `clip` at its own key rate (see [`baseline_bytes`]).
fn key_rate_samples(clip: &Clip) -> usize {
    fn gaps(times: &[f32], counts: &mut std::collections::BTreeMap<u64, usize>) {
        for w in times.windows(2) {
            let tenths_of_ms = (f64::from(w[1] - w[0]) * 1e4).round() as u64;
            if tenths_of_ms > 0 {
                *counts.entry(tenths_of_ms).or_default() += 1;
            }
        }
    }
    let mut counts = std::collections::BTreeMap::new();
    for jt in &clip.joint_tracks {
        let tracks = [
            jt.translation.as_ref().map(|t| &t.times),
            jt.rotation.as_ref().map(|t| &t.times),
            jt.scale.as_ref().map(|t| &t.times),
        ];
        for times in tracks.into_iter().flatten() {
            gaps(times, &mut counts);
        }
    }
    for mt in &clip.morph_tracks {
        gaps(&mt.times, &mut counts);
    }
    // The most common gap; of equally common ones, the shortest.
    let Some((&gap, _)) = counts.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))) else {
        return 1;
    };
    (f64::from(clip.duration) / (gap as f64 * 1e-4)).round() as usize + 1
}

/// Largest morph-weight error allowed when nothing says how far a weight
/// moves vertices (see [`compress_for`](super::compress_for)): a weight of 1 moving a vertex
/// 1 m is then held to the default 0.01 cm.
pub const DEFAULT_WEIGHT_TOLERANCE: f64 = 1e-4;
