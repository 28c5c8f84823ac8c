//! The compression report: every clip of a rig compressed within a bound,
//! one row per clip with what it measured (raw and compressed bytes, ratio,
//! errors, keys), as a table or (serialised) JSON. `vkskin inspect
//! --compression` prints it for a model, the `compression` benchmark for the
//! shared models and the anchor clips.
//!
//! It never reads files or knows where clips come from: the caller names
//! the source (a model's file name, a data set) with a string.

use super::{CompressionSettings, CompressionStats, compress_for};
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
    /// Bytes of its keys as f32 (times and values).
    pub raw_bytes: usize,
    /// Bytes compressed.
    pub compressed_bytes: usize,
    /// `raw_bytes / compressed_bytes`.
    pub ratio: f64,
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
}

impl ClipCompression {
    /// The line for one compressed clip.
    pub fn new(source: &str, clip: &str, stats: &CompressionStats) -> Self {
        let cm = 100.0 / stats.units_per_meter;
        ClipCompression {
            source: source.to_string(),
            clip: clip.to_string(),
            raw_bytes: stats.raw_bytes,
            compressed_bytes: stats.compressed_bytes,
            ratio: stats.ratio(),
            max_error_cm: stats.max_error * cm,
            mean_error_cm: stats.mean_error * cm,
            bound_cm: stats.error_bound * cm,
            raw_keys: stats.raw_keys,
            kept_keys: stats.kept_keys,
        }
    }
}

/// Compresses every clip of `clips` (named by `names`) for `skeleton`,
/// morph weights within `weight_tolerances` (see `compress_for`).
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
            let (_, stats) = compress_for(clip, skeleton, settings, weight_tolerances)
                .map_err(|e| JobError::new(format!("clip \"{name}\": {e}")))?;
            Ok(ClipCompression::new(source, name, &stats))
        })
        .collect()
}

/// The table as text, one line per clip and a total per source.
pub fn to_text(rows: &[ClipCompression]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<24} {:<22} {:>10} {:>10} {:>7} {:>11} {:>11} {:>12}",
        "source", "clip", "raw B", "packed B", "ratio", "max cm", "mean cm", "keys"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{:<24} {:<22} {:>10} {:>10} {:>6.1}:1 {:>11.6} {:>11.6} {:>5} -> {:<5}",
            r.source,
            r.clip,
            r.raw_bytes,
            r.compressed_bytes,
            r.ratio,
            r.max_error_cm,
            r.mean_error_cm,
            r.raw_keys,
            r.kept_keys
        );
    }
    let raw: usize = rows.iter().map(|r| r.raw_bytes).sum();
    let packed: usize = rows.iter().map(|r| r.compressed_bytes).sum();
    let worst = rows.iter().map(|r| r.max_error_cm).fold(0.0, f64::max);
    let bound = rows.first().map_or(0.0, |r| r.bound_cm);
    let _ = writeln!(
        out,
        "all {} clips: {raw} -> {packed} bytes, {:.1}:1, max error {worst:.6} cm (bound {bound} cm)",
        rows.len(),
        raw as f64 / packed.max(1) as f64
    );
    out
}
