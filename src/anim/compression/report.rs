//! The compression report: every clip of a rig compressed within a bound,
//! one row per clip with what it measured (raw and compressed bytes, ratio,
//! errors, keys, and how long a frame takes to sample against the runtime
//! layout's nlerp), as a table or (serialised) JSON. `vkskin inspect
//! --compression` prints it for a model, the `compression` benchmark for the
//! shared models and the anchor clips.
//!
//! It never reads files or knows where clips come from: the caller names
//! the source (a model's file name, a data set) with a string.

use super::{ClipBytes, CompressionSettings, CompressionStats, SamplingCost, compress_for, sampling_cost};
use crate::anim::{Clip, JobError, Skeleton};
use serde::Serialize;
use std::fmt::Write;

/// One clip's line.
#[derive(Debug, Clone, Serialize)]
pub struct ClipCompression {
    /// Where the clip comes from (model file or data set).
    pub source: String,
    /// Clip name (or index).
    pub clip: String,
    /// Bytes of the clip as ACL counts a raw clip: every joint's
    /// transform as ten f32 at every sample of the clip's own key rate
    /// (see [`baseline_bytes`](super::baseline_bytes)).
    pub baseline_bytes: usize,
    /// Bytes of its keys as f32 (times and values), as the file has them.
    pub raw_bytes: usize,
    /// Bytes compressed.
    pub compressed_bytes: usize,
    /// Where they go.
    pub compressed_parts: ClipBytes,
    /// `baseline_bytes / compressed_bytes`: the ratio as ACL reports it.
    pub ratio: f64,
    /// `raw_bytes / compressed_bytes`.
    pub key_ratio: f64,
    /// Largest virtual-vertex error measured, centimetres.
    pub max_error_cm: f64,
    /// Mean virtual-vertex error, centimetres.
    pub mean_error_cm: f64,
    /// The bound asked for, centimetres.
    pub bound_cm: f64,
    /// Keys in the source tracks.
    pub raw_keys: usize,
    /// Keys stored.
    pub kept_keys: usize,
    /// Sampling one frame compressed against the runtime layout's nlerp
    /// (see [`sampling_cost`](fn@super::sampling_cost)).
    pub sampling: SamplingCost,
}

impl ClipCompression {
    /// The line for one compressed clip, sampled as `sampling` says.
    pub fn new(source: &str, clip: &str, stats: &CompressionStats, sampling: SamplingCost) -> Self {
        let cm = 100.0 / stats.units_per_meter;
        ClipCompression {
            source: source.to_string(),
            clip: clip.to_string(),
            baseline_bytes: stats.baseline_bytes,
            raw_bytes: stats.raw_bytes,
            compressed_bytes: stats.compressed_bytes(),
            compressed_parts: stats.compressed_parts,
            ratio: stats.ratio(),
            key_ratio: stats.key_ratio(),
            max_error_cm: stats.max_error * cm,
            mean_error_cm: stats.mean_error * cm,
            bound_cm: stats.error_bound * cm,
            raw_keys: stats.raw_keys,
            kept_keys: stats.kept_keys,
            sampling,
        }
    }
}

/// Compresses every clip of `clips` (named by `names`) for `skeleton`,
/// morph weights within `weight_tolerances` (see `compress_for`), and
/// times sampling each (a few milliseconds a clip).
pub fn compress_all<'a>(
    source: &str,
    skeleton: &Skeleton,
    clips: impl IntoIterator<Item = (&'a str, &'a Clip)>,
    settings: &CompressionSettings,
    weight_tolerances: &[f64],
) -> Result<Vec<ClipCompression>, JobError> {
    clips
        .into_iter()
        .map(|(name, clip)| {
            let named = |e: JobError| JobError::new(format!("clip \"{name}\": {e}"));
            let (compressed, stats) =
                compress_for(clip, skeleton, settings, weight_tolerances).map_err(named)?;
            let sampling = sampling_cost(clip, &compressed, skeleton).map_err(named)?;
            Ok(ClipCompression::new(source, name, &stats, sampling))
        })
        .collect()
}

/// The table as text, one line per clip and a total per source: the
/// baseline (ACL's raw clip), the file's keys, the compressed bytes and
/// where they go (time table and masks, track headers and constants, key
/// stream), both ratios, the errors, the keys kept, and nanoseconds per
/// sampled frame compressed, what crossing keys adds to a frame
/// (compressed / runtime layout), and compressed against the runtime
/// layout's nlerp between keys and at 60 Hz.
pub fn to_text(rows: &[ClipCompression]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<24} {:<22} {:>10} {:>9} {:>9} {:>7} {:>7} {:>8} {:>8} {:>8} {:>10} {:>10} {:>12} {:>9} {:>13} {:>9} {:>9}",
        "source",
        "clip",
        "baseline B",
        "keys B",
        "packed B",
        "times",
        "headers",
        "stream",
        "ratio",
        "vs keys",
        "max cm",
        "mean cm",
        "keys",
        "sample ns",
        "crossings ns",
        "between",
        "vs nlerp"
    );
    for r in rows {
        let p = &r.compressed_parts;
        let [crossing, runtime_crossing] = r.sampling.crossing_ns();
        let _ = writeln!(
            out,
            "{:<24} {:<22} {:>10} {:>9} {:>9} {:>7} {:>7} {:>8} {:>6.1}:1 {:>6.1}:1 {:>10.6} {:>10.6} {:>5} -> {:<5} {:>9.0} {:>6.0} / {:<4.0} {:>8.2}x {:>8.2}x",
            r.source,
            r.clip,
            r.baseline_bytes,
            r.raw_bytes,
            r.compressed_bytes,
            p.times + p.masks,
            p.headers + p.constants,
            p.stream,
            r.ratio,
            r.key_ratio,
            r.max_error_cm,
            r.mean_error_cm,
            r.raw_keys,
            r.kept_keys,
            r.sampling.compressed_ns,
            crossing,
            runtime_crossing,
            r.sampling.between_keys_ratio(),
            r.sampling.ratio()
        );
    }
    let sum = |f: fn(&ClipCompression) -> usize| rows.iter().map(f).sum::<usize>();
    let (baseline, raw, packed) =
        (sum(|r| r.baseline_bytes), sum(|r| r.raw_bytes), sum(|r| r.compressed_bytes));
    let worst = rows.iter().map(|r| r.max_error_cm).fold(0.0, f64::max);
    if rows.is_empty() {
        let _ = writeln!(out, "no clips");
        return out;
    }
    let lowest = rows.iter().map(|r| r.ratio).fold(f64::INFINITY, f64::min);
    let bound = rows.first().map_or(0.0, |r| r.bound_cm);
    let _ = writeln!(
        out,
        "all {} clips: {baseline} baseline B ({raw} B of keys) -> {packed} B, {:.1}:1 ({:.1}:1 against the keys; \
         lowest clip {lowest:.1}:1), max error {worst:.6} cm (bound {bound} cm)",
        rows.len(),
        baseline as f64 / packed.max(1) as f64,
        raw as f64 / packed.max(1) as f64,
    );
    let slower = rows.iter().filter(|r| r.sampling.ratio() > 1.0).count();
    let slowest = rows.iter().max_by(|a, b| a.sampling.ratio().total_cmp(&b.sampling.ratio()));
    let _ = write!(
        out,
        "sampling (60 Hz playback, median of {} turns): {slower} of {} clips slower compressed than the runtime \
         layout's nlerp",
        super::sampling_cost::ROUNDS,
        rows.len(),
    );
    if let Some(r) = slowest {
        let s = &r.sampling;
        let [compressed, runtime] = s.crossing_ns();
        // Where the slowest loses (or wins least): between keys, or crossing them.
        let _ = write!(
            out,
            ", the slowest {:.2}x ({}: {:.2}x between keys; crossing keys adds {compressed:.0} ns a frame \
             compressed, {runtime:.0} in the runtime layout)",
            s.ratio(),
            r.clip,
            s.between_keys_ratio(),
        );
    }
    let _ = writeln!(out);
    out
}
