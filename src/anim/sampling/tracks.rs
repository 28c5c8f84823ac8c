//! One track at one time: translation and scale (step, lerp, cubic),
//! rotation (step, slerp or nlerp, cubic; normalised with a fallback) and
//! morph weights, exactly as `SampleJob` samples them.
//!
//! The tracks must be well formed (see [`check_clip`](super::check_clip)):
//! nothing here checks them, allocates, or keeps state but the cursor's hint.

use super::RotationBlend;
use super::cursor::{Span, locate};
use crate::anim::clip::{Interpolation, MorphWeightTrack, Track};
use crate::anim::math::{Slerped, hermite, keep_or, lerp, nlerp, normalize_or, slerp};
use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use std::ops::{Add, Mul};

/// Samples a translation or scale track at `t`; `hint` is its cursor slot.
pub(crate) fn sample_vector(track: &Track<Vector3<f32>>, t: f64, hint: &mut u32) -> Vector3<f32> {
    let span = locate(&track.times, t, hint);
    sample_linear_space(&track.values, track.interpolation, span)
}

/// Samples a rotation track at `t`; `fallback` replaces a rotation without
/// usable length, `hint` is the track's cursor slot.
pub(crate) fn sample_rotation(
    track: &Track<Quaternion<f32>>,
    t: f64,
    rotation_blend: RotationBlend,
    fallback: UnitQuaternion<f32>,
    hint: &mut u32,
) -> UnitQuaternion<f32> {
    let span = locate(&track.times, t, hint);
    // Keys and true slerps are kept as the file gives them (unit to the
    // exporter's precision, see `slerp`); anything a lerp or spline built is
    // normalised.
    match (track.interpolation, span) {
        (Interpolation::Linear, Span::Between { k, s, .. }) => {
            let (a, b) = (track.values[k], track.values[k + 1]);
            match rotation_blend {
                RotationBlend::Slerp => match slerp(a, b, s) {
                    Slerped::Arc(q) => keep_or(q, fallback),
                    Slerped::Chord(q) => normalize_or(q, fallback),
                },
                RotationBlend::Nlerp => normalize_or(nlerp(a, b, s), fallback),
            }
        }
        (Interpolation::CubicSpline, span @ Span::Between { .. }) => {
            normalize_or(sample_linear_space(&track.values, Interpolation::CubicSpline, span), fallback)
        }
        (interpolation, span) => keep_or(sample_linear_space(&track.values, interpolation, span), fallback),
    }
}

/// Samples morph-weight tracks at `t` into `out` (one hint per track);
/// the tracks must be well formed (see `SampleJob::validate`).
pub(crate) fn sample_morph_tracks(tracks: &[MorphWeightTrack], t: f64, hints: &mut [u32], out: &mut [f32]) {
    for (mt, hint) in tracks.iter().zip(hints) {
        let span = locate(&mt.times, t, hint);
        let count = mt.count as usize;
        let offset = mt.offset as usize;
        let out = &mut out[offset..offset + count];
        let cubic = mt.interpolation == Interpolation::CubicSpline;
        // Weight `w` of value slot `v` (0 = in tangent, 1 = value, 2 = out
        // tangent for cubic; always 0 otherwise) of key `k`.
        let at = |k: usize, v: usize, w: usize| {
            let slot = if cubic { 3 * k + v } else { k };
            mt.values[slot * count + w]
        };
        let value_slot = usize::from(cubic);
        for (w, o) in out.iter_mut().enumerate() {
            *o = match (mt.interpolation, span) {
                (_, Span::Key(k)) | (Interpolation::Step, Span::Between { k, .. }) => at(k, value_slot, w),
                (Interpolation::Linear, Span::Between { k, s, .. }) => lerp(at(k, 0, w), at(k + 1, 0, w), s),
                (Interpolation::CubicSpline, Span::Between { k, s, td }) => {
                    hermite(at(k, 1, w), at(k, 2, w), at(k + 1, 1, w), at(k + 1, 0, w), s, td)
                }
            };
        }
    }
}

/// Samples a track whose values live in a vector space: step, lerp or cubic.
/// `Linear` rotation tracks come here only when clamped to a key.
fn sample_linear_space<T>(values: &[T], interpolation: Interpolation, span: Span) -> T
where
    T: Copy + Add<Output = T> + Mul<f32, Output = T>,
{
    match (interpolation, span) {
        (Interpolation::CubicSpline, Span::Key(k)) => values[3 * k + 1],
        (_, Span::Key(k)) | (Interpolation::Step, Span::Between { k, .. }) => values[k],
        (Interpolation::Linear, Span::Between { k, s, .. }) => lerp(values[k], values[k + 1], s),
        (Interpolation::CubicSpline, Span::Between { k, s, td }) => {
            hermite(values[3 * k + 1], values[3 * k + 2], values[3 * k + 4], values[3 * k + 3], s, td)
        }
    }
}
