//! Sampling: evaluates a clip's tracks at one time into a local pose.
//!
//! Key lookup keeps a per-track cursor (the last interval used) so that forward
//! playback costs O(1) per track; any other jump falls back to a binary search.
//! The cursor is only a hint: results never depend on it.

use super::clip::{Clip, Interpolation, JointTracks, MorphWeightTrack, Track};
use super::job::{JobError, check_len};
use super::sine;
use super::transform::Transform;
use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use std::ops::{Add, Mul};

/// How `Linear` rotation keys are interpolated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RotationBlend {
    /// Spherical linear interpolation, exactly as glTF specifies.
    #[default]
    Slerp,
    /// Normalised linear interpolation (after the same hemisphere check):
    /// cheaper, constant-speed only approximately. For keys whose rotations
    /// differ by an angle `theta`, the largest angular error against slerp is
    /// `theta^3 / 249` radians for small angles (`theta^3 / (144 sqrt 3)`),
    /// growing to `theta^3 / 218` at 180 degrees, and is reached near
    /// `s = 0.22` and `s = 0.78`. Measured: 0.00058 rad for keys 30 degrees
    /// apart, 0.0160 rad (0.92 degrees) for 90 degrees, 0.142 rad for 180
    /// degrees (see the `nlerp_error_bound` test).
    Nlerp,
}

/// Per-character lookup state for one clip: the last key interval used by
/// each track slot (see [`Clip::cursor_slots`] for the slot order).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SamplingCursor {
    keys: Vec<u32>,
}

impl SamplingCursor {
    /// A cursor with one slot per track of `clip`, all at the first key.
    pub fn new(clip: &Clip) -> Self {
        SamplingCursor { keys: vec![0; clip.cursor_slots()] }
    }

    /// Forgets the cached intervals (e.g. after switching characters' clips).
    pub fn reset(&mut self) {
        self.keys.fill(0);
    }

    /// Number of track slots.
    pub fn slots(&self) -> usize {
        self.keys.len()
    }
}

/// Samples every track of `clip` at `time` into `output` / `morph_output`.
///
/// Joints and properties without a track take their values from `rest` and
/// `rest_morph_weights`.
#[derive(Debug)]
pub struct SampleJob<'a> {
    /// The clip to sample.
    pub clip: &'a Clip,
    /// Seconds on the clip's own timeline; clamped to each track's first and
    /// last key. NaN is rejected.
    pub time: f64,
    /// Rest transform per skeleton joint.
    pub rest: &'a [Transform],
    /// Rest weight per morph slot.
    pub rest_morph_weights: &'a [f32],
    /// How `Linear` rotation keys are interpolated.
    pub rotation_blend: RotationBlend,
    /// Cached key intervals; must have been made for a clip with the same
    /// track layout (validate checks the slot count).
    pub cursor: &'a mut SamplingCursor,
    /// Sampled local transforms, as long as `rest`.
    pub output: &'a mut [Transform],
    /// Sampled morph weights, as long as `rest_morph_weights`.
    pub morph_output: &'a mut [f32],
}

impl SampleJob<'_> {
    /// Checks slice lengths, joint indices, morph ranges, key counts and the
    /// cursor's slot count.
    pub fn validate(&self) -> Result<(), JobError> {
        if self.time.is_nan() {
            return Err(JobError::new("sample: time is NaN"));
        }
        check_len("sample: output", self.output.len(), self.rest.len())?;
        check_len("sample: morph_output", self.morph_output.len(), self.rest_morph_weights.len())?;
        let slots = self.clip.cursor_slots();
        check_len("sample: cursor slots (cursor made for another clip?)", self.cursor.slots(), slots)?;
        check_clip("sample", self.clip, self.rest.len(), self.rest_morph_weights.len())
    }

    /// Validates, then samples. Never allocates.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        self.output.copy_from_slice(self.rest);
        self.morph_output.copy_from_slice(self.rest_morph_weights);
        let t = self.time;
        let keys = &mut self.cursor.keys;
        for (i, jt) in self.clip.joint_tracks.iter().enumerate() {
            let j = jt.joint as usize;
            let cursor = &mut keys[3 * i..3 * i + 3];
            sample_joint_into(jt, t, &self.rest[j], self.rotation_blend, cursor, &mut self.output[j]);
        }
        let base = 3 * self.clip.joint_tracks.len();
        sample_morph_tracks(&self.clip.morph_tracks, t, &mut keys[base..], self.morph_output);
        Ok(())
    }
}

/// Samples one joint's tracks at `time` (seconds on the clip's timeline),
/// properties without a track taking `rest`'s values: what `SampleJob` does
/// for each joint, for callers that need one joint (root motion). Never
/// allocates; the tracks must be well formed (see `SampleJob::validate`).
pub fn sample_joint(
    tracks: &JointTracks,
    time: f64,
    rest: &Transform,
    rotation_blend: RotationBlend,
) -> Transform {
    let mut out = *rest;
    sample_joint_into(tracks, time, rest, rotation_blend, &mut [0; 3], &mut out);
    out
}

/// Samples `jt` at `t` into `out`; `cursor` holds its T, R and S key hints.
#[inline]
fn sample_joint_into(
    jt: &JointTracks,
    t: f64,
    rest: &Transform,
    rotation_blend: RotationBlend,
    cursor: &mut [u32],
    out: &mut Transform,
) {
    if let Some(tr) = &jt.translation {
        out.translation = sample_vector(tr, t, &mut cursor[0]);
    }
    if let Some(tr) = &jt.rotation {
        out.rotation = sample_rotation(tr, t, rotation_blend, rest.rotation, &mut cursor[1]);
    }
    if let Some(tr) = &jt.scale {
        out.scale = sample_vector(tr, t, &mut cursor[2]);
    }
}

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

/// Checks that every track of `clip` animates one of `joints` joints or
/// writes inside `morph_slots` weights, and has at least one key and the
/// right number of values per key. `job` starts each error message.
pub(crate) fn check_clip(job: &str, clip: &Clip, joints: usize, morph_slots: usize) -> Result<(), JobError> {
    for (i, jt) in clip.joint_tracks.iter().enumerate() {
        if jt.joint as usize >= joints {
            return Err(JobError::new(format!(
                "{job}: joint track {i} animates joint {}, skeleton has {}",
                jt.joint, joints
            )));
        }
        let shapes = [
            jt.translation.as_ref().map(|t| (t.times.len(), t.values.len(), t.values_per_key())),
            jt.rotation.as_ref().map(|t| (t.times.len(), t.values.len(), t.values_per_key())),
            jt.scale.as_ref().map(|t| (t.times.len(), t.values.len(), t.values_per_key())),
        ];
        for (what, shape) in ["translation", "rotation", "scale"].iter().zip(shapes) {
            if let Some((times, values, per_key)) = shape {
                check_keys(&|| format!("{job}: joint track {i} {what}"), times, values, per_key)?;
            }
        }
    }
    for (m, mt) in clip.morph_tracks.iter().enumerate() {
        let end = mt.offset as u64 + mt.count as u64;
        if end > morph_slots as u64 {
            return Err(JobError::new(format!(
                "{job}: morph track {m} writes weights {}..{end}, only {} exist",
                mt.offset, morph_slots
            )));
        }
        let per_key = if mt.interpolation == Interpolation::CubicSpline { 3 } else { 1 };
        let what = || format!("{job}: morph track {m}");
        // Checked so that a huge count cannot overflow the expected length.
        let per_key = (mt.count as usize)
            .checked_mul(per_key)
            .ok_or_else(|| JobError::new(format!("{}: count too large", what())))?;
        check_keys(&what, mt.times.len(), mt.values.len(), per_key)?;
    }
    Ok(())
}

/// Checks that a track has at least one key and `per_key` values per key.
/// `what` names the track; it is only called (and allocates) on failure.
fn check_keys(
    what: &dyn Fn() -> String,
    times: usize,
    values: usize,
    per_key: usize,
) -> Result<(), JobError> {
    if times == 0 {
        return Err(JobError::new(format!("{}: no keys", what())));
    }
    match times.checked_mul(per_key) {
        Some(expected) if expected == values => Ok(()),
        Some(expected) => Err(JobError::new(format!(
            "{}: {values} values, expected {expected} ({per_key} per key)",
            what()
        ))),
        None => Err(JobError::new(format!("{}: too many values", what()))),
    }
}

/// Where a time falls on a track.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Span {
    /// Exactly the value of key `k` (clamped, single key, or degenerate interval).
    Key(usize),
    /// Between keys `k` and `k + 1`: `s` in [0, 1), `td` the interval length.
    Between { k: usize, s: f32, td: f32 },
}

/// Finds the interval of `times` containing `t`, starting from the cached
/// interval `cached` and updating it.
///
/// Forward playback usually stays in the cached interval or moves one or two
/// keys on, so those are checked before a binary search. Never panics, even
/// for unsorted times or a stale cursor.
fn locate(times: &[f32], t: f64, cached: &mut u32) -> Span {
    let n = times.len();
    // Keys are f32; the time is f64 so that a decimal time compares with
    // them as in f64 implementations (see player::wrap_clip_time).
    let at = |i: usize| f64::from(times[i]);
    if n == 0 {
        return Span::Key(0);
    }
    if n == 1 || t <= at(0) {
        *cached = 0;
        return Span::Key(0);
    }
    if t >= at(n - 1) {
        *cached = (n - 2) as u32;
        return Span::Key(n - 1);
    }
    // Here n >= 2 and first < t < last.
    let c = *cached as usize;
    let k = if c + 1 < n && at(c) <= t {
        if t < at(c + 1) {
            c
        } else if c + 2 < n && t < at(c + 2) {
            c + 1
        } else if c + 3 < n && t < at(c + 3) {
            c + 2
        } else {
            search(times, t)
        }
    } else {
        search(times, t)
    };
    *cached = k as u32;
    let td = times[k + 1] - times[k];
    let s = ((t - at(k)) / f64::from(td)) as f32;
    // Guards against unsorted or duplicate key times: hold the key instead of
    // producing NaN or extrapolating.
    if td > 0.0 && (0.0..=1.0).contains(&s) { Span::Between { k, s, td } } else { Span::Key(k) }
}

/// Binary search for the last key at or before `t`, kept inside `0..n-1`.
fn search(times: &[f32], t: f64) -> usize {
    times.partition_point(|&x| f64::from(x) <= t).saturating_sub(1).min(times.len().saturating_sub(2))
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

/// `a + (b - a) * s`, written as a weighted sum so it needs only `Add` and `Mul<f32>`.
fn lerp<T: Copy + Add<Output = T> + Mul<f32, Output = T>>(a: T, b: T, s: f32) -> T {
    a * (1.0 - s) + b * s
}

/// glTF Appendix C cubic Hermite spline between `v0` (out tangent `b0`) and
/// `v1` (in tangent `a1`); tangents are per second, hence the `td` factor.
fn hermite<T: Copy + Add<Output = T> + Mul<f32, Output = T>>(
    v0: T,
    b0: T,
    v1: T,
    a1: T,
    s: f32,
    td: f32,
) -> T {
    let s2 = s * s;
    let s3 = s2 * s;
    v0 * (2.0 * s3 - 3.0 * s2 + 1.0)
        + b0 * (td * (s3 - 2.0 * s2 + s))
        + v1 * (-2.0 * s3 + 3.0 * s2)
        + a1 * (td * (s3 - s2))
}

/// `b`, negated if needed so that it lies in `a`'s hemisphere (the shorter
/// of the two arcs between the rotations), and the resulting dot product.
fn same_hemisphere(a: Quaternion<f32>, b: Quaternion<f32>) -> (Quaternion<f32>, f32) {
    let d = a.dot(&b);
    if d < 0.0 { (-b, -d) } else { (b, d) }
}

/// Normalised lerp on the short arc; the caller normalises the result.
pub(crate) fn nlerp(a: Quaternion<f32>, b: Quaternion<f32>, s: f32) -> Quaternion<f32> {
    let (b, _) = same_hemisphere(a, b);
    lerp(a, b, s)
}

/// Spherical linear interpolation on the short arc (glTF's definition).
///
/// What `slerp` computed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Slerped {
    /// A true spherical interpolation of the keys as given.
    Arc(Quaternion<f32>),
    /// The keys were too close for slerp's weights: a lerp, to be normalised.
    Chord(Quaternion<f32>),
}

/// The keys are used as stored, not renormalised first: glTF rotation keys
/// are unit only to the exporter's precision (SimpleSkin's are off by 2e-4),
/// and other implementations (three.js) interpolate and use them as given, so
/// an arc result is not renormalised either: a key of length 1.0002 then
/// scales by 2e-4, as the file says, instead of disagreeing with them by 1e-4.
/// Identical keys return the key itself (for non-unit keys the arc formula
/// would not). The angle is `atan2(sin, cos)` with sin from an f64 `1 - cos^2`,
/// accurate near 0; below f64::EPSILON of sin^2 (as three.js) the result is a chord (lerp) for the
/// caller to normalise.
pub(crate) fn slerp(a: Quaternion<f32>, b: Quaternion<f32>, s: f32) -> Slerped {
    SlerpKeys::new(a, b).at(s)
}

/// The part of [`slerp`] that depends only on the two keys: computed once
/// per key interval by the runtime sampler, which then calls [`SlerpKeys::at`]
/// (or repeats its arithmetic lane by lane) each frame with the same result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum SlerpKeys {
    /// Identical keys: the key itself, whatever `s`.
    Same(Quaternion<f32>),
    /// Keys too close for slerp's weights: a lerp of these, to be normalised.
    Chord(Quaternion<f32>, Quaternion<f32>),
    /// A true arc from `a` to `b` (on the short path), `angle` radians, `sin` its sine.
    Arc { a: Quaternion<f32>, b: Quaternion<f32>, sin: f32, angle: f32 },
}

impl SlerpKeys {
    /// The per-interval constants of slerping from `a` to `b`.
    pub(crate) fn new(a: Quaternion<f32>, b: Quaternion<f32>) -> Self {
        if a == b {
            return SlerpKeys::Same(a);
        }
        let (a, b, _, _) = slerp_keys(a, b);
        let cos: f64 = a.coords.iter().zip(b.coords.iter()).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
        let sin_squared = 1.0 - cos * cos;
        if sin_squared.is_nan() || sin_squared <= f64::EPSILON {
            return SlerpKeys::Chord(a, b);
        }
        // cos and sin^2 need f64 (1 - cos^2 cancels for small angles); once sin
        // is known to full precision, f32 trigonometry is accurate to ~1e-7
        // relative and twice as fast as f64.
        let sin = sin_squared.sqrt() as f32;
        SlerpKeys::Arc { a, b, sin, angle: sin.atan2(cos as f32) }
    }

    /// The interpolation at `s`.
    #[inline]
    pub(crate) fn at(&self, s: f32) -> Slerped {
        match *self {
            SlerpKeys::Same(a) => Slerped::Arc(a),
            SlerpKeys::Chord(a, b) => Slerped::Chord(lerp(a, b, s)),
            SlerpKeys::Arc { a, b, sin, angle } => {
                // Correctly rounded sines (see `sine`), as the SIMD sampler's.
                let wa = sine::sin((1.0 - s) * angle) / sin;
                let wb = sine::sin(s * angle) / sin;
                Slerped::Arc(a * wa + b * wb)
            }
        }
    }
}

/// The keys slerp interpolates between: normalised when either is far
/// from unit length (no exporter rounding), `b` flipped into `a`'s
/// hemisphere; and whether each of those happened.
pub(crate) fn slerp_keys(
    a: Quaternion<f32>,
    b: Quaternion<f32>,
) -> (Quaternion<f32>, Quaternion<f32>, bool, bool) {
    let normalized = !(near_unit(a) && near_unit(b));
    let (a, b) = if normalized { (unit_or_self(a), unit_or_self(b)) } else { (a, b) };
    let d = a.dot(&b);
    let (b, _) = same_hemisphere(a, b);
    (a, b, normalized, d < 0.0)
}

impl Slerped {
    /// The quaternion, whichever way it was computed.
    pub(crate) fn into_inner(self) -> Quaternion<f32> {
        match self {
            Slerped::Arc(q) | Slerped::Chord(q) => q,
        }
    }
}

/// Whether `q`'s length is 1 to an exporter's rounding (within 0.1%).
pub(crate) fn near_unit(q: Quaternion<f32>) -> bool {
    (q.norm_squared() - 1.0).abs() <= 2e-3
}

/// `q` normalised when it has a usable length, else unchanged.
fn unit_or_self(q: Quaternion<f32>) -> Quaternion<f32> {
    let n2 = q.norm_squared();
    if n2 > f32::MIN_POSITIVE && n2.is_finite() { q / n2.sqrt() } else { q }
}

/// `q` as stored when it is unit to an exporter's rounding, normalised when it
/// is further off, `fallback` when it has no usable length.
pub(crate) fn keep_or(q: Quaternion<f32>, fallback: UnitQuaternion<f32>) -> UnitQuaternion<f32> {
    if near_unit(q) { UnitQuaternion::new_unchecked(q) } else { normalize_or(q, fallback) }
}

/// `q` normalised, or `fallback` when `q` has (near) zero or non-finite length.
pub(crate) fn normalize_or(q: Quaternion<f32>, fallback: UnitQuaternion<f32>) -> UnitQuaternion<f32> {
    let n2 = q.norm_squared();
    if n2 > f32::MIN_POSITIVE && n2.is_finite() {
        UnitQuaternion::new_unchecked(q / n2.sqrt())
    } else {
        fallback
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::clip::{ClipEvent, JointTracks, MorphWeightTrack, Track};
    use nalgebra::Vector3;
    use std::f32::consts::FRAC_PI_2;

    fn axis_angle(axis: Vector3<f32>, angle: f32) -> Quaternion<f32> {
        UnitQuaternion::from_axis_angle(&nalgebra::Unit::new_normalize(axis), angle).into_inner()
    }

    fn track<T>(times: &[f32], values: Vec<T>, interpolation: Interpolation) -> Track<T> {
        Track { times: times.to_vec(), values, interpolation }
    }

    fn v(x: f32, y: f32, z: f32) -> Vector3<f32> {
        Vector3::new(x, y, z)
    }

    /// Samples a one-joint clip (plus its morph tracks) at `time`.
    fn sample(clip: &Clip, time: f32, blend: RotationBlend, morphs: usize) -> (Transform, Vec<f32>) {
        let rest = vec![Transform::IDENTITY; 1];
        let rest_w = vec![0.5; morphs];
        let mut out = vec![Transform::IDENTITY; 1];
        let mut out_w = vec![0.0; morphs];
        let mut cursor = SamplingCursor::new(clip);
        SampleJob {
            clip,
            time: time.into(),
            rest: &rest,
            rest_morph_weights: &rest_w,
            rotation_blend: blend,
            cursor: &mut cursor,
            output: &mut out,
            morph_output: &mut out_w,
        }
        .run()
        .unwrap();
        (out[0], out_w)
    }

    fn joint_clip(jt: JointTracks) -> Clip {
        let mut c = Clip { joint_tracks: vec![jt], ..Default::default() };
        c.update_duration();
        c
    }

    fn translation_clip(times: &[f32], values: Vec<Vector3<f32>>, i: Interpolation) -> Clip {
        joint_clip(JointTracks { joint: 0, translation: Some(track(times, values, i)), ..Default::default() })
    }

    fn rotation_clip(times: &[f32], values: Vec<Quaternion<f32>>, i: Interpolation) -> Clip {
        joint_clip(JointTracks { joint: 0, rotation: Some(track(times, values, i)), ..Default::default() })
    }

    fn close(a: Vector3<f32>, b: Vector3<f32>) -> bool {
        (a - b).norm() < 1e-5
    }

    fn angle_between(a: UnitQuaternion<f32>, b: UnitQuaternion<f32>) -> f32 {
        a.angle_to(&b)
    }

    // ---- validity ----

    struct Bufs {
        rest: Vec<Transform>,
        rest_w: Vec<f32>,
        out: Vec<Transform>,
        out_w: Vec<f32>,
        cursor: SamplingCursor,
    }

    fn bufs(clip: &Clip, joints: usize, morphs: usize) -> Bufs {
        Bufs {
            rest: vec![Transform::IDENTITY; joints],
            rest_w: vec![0.0; morphs],
            out: vec![Transform::IDENTITY; joints],
            out_w: vec![0.0; morphs],
            cursor: SamplingCursor::new(clip),
        }
    }

    fn check(clip: &Clip, b: &mut Bufs, time: f32) -> Result<(), JobError> {
        SampleJob {
            clip,
            time: time.into(),
            rest: &b.rest,
            rest_morph_weights: &b.rest_w,
            rotation_blend: RotationBlend::Slerp,
            cursor: &mut b.cursor,
            output: &mut b.out,
            morph_output: &mut b.out_w,
        }
        .run()
    }

    fn valid_clip() -> Clip {
        let mut c = translation_clip(&[0.0, 1.0], vec![v(0., 0., 0.), v(1., 0., 0.)], Interpolation::Linear);
        c.morph_tracks.push(MorphWeightTrack {
            offset: 1,
            count: 2,
            times: vec![0.0, 1.0],
            values: vec![0.0, 0.0, 1.0, 1.0],
            interpolation: Interpolation::Linear,
        });
        c
    }

    #[test]
    fn accepts_valid_input() {
        let c = valid_clip();
        assert!(check(&c, &mut bufs(&c, 2, 3), 0.5).is_ok());
    }

    #[test]
    fn rejects_nan_time() {
        let c = valid_clip();
        assert!(check(&c, &mut bufs(&c, 2, 3), f32::NAN).is_err());
    }

    #[test]
    fn rejects_wrong_output_lengths() {
        let c = valid_clip();
        let mut b = bufs(&c, 2, 3);
        b.out.pop();
        assert!(check(&c, &mut b, 0.5).is_err());
        let mut b = bufs(&c, 2, 3);
        b.out_w.push(0.0);
        assert!(check(&c, &mut b, 0.5).is_err());
    }

    #[test]
    fn rejects_cursor_for_another_clip() {
        let c = valid_clip();
        let mut b = bufs(&c, 2, 3);
        b.cursor = SamplingCursor::new(&Clip::default());
        assert!(check(&c, &mut b, 0.5).unwrap_err().0.contains("cursor"));
    }

    #[test]
    fn rejects_joint_out_of_range() {
        let mut c = valid_clip();
        c.joint_tracks[0].joint = 2;
        assert!(check(&c, &mut bufs(&c, 2, 3), 0.5).is_err());
    }

    #[test]
    fn rejects_morph_range_out_of_bounds() {
        let c = valid_clip();
        assert!(check(&c, &mut bufs(&c, 2, 2), 0.5).is_err());
        let mut c = valid_clip();
        c.morph_tracks[0].offset = u32::MAX;
        assert!(check(&c, &mut bufs(&c, 2, 3), 0.5).is_err());
    }

    #[test]
    fn rejects_bad_key_counts() {
        let mut c = valid_clip();
        c.joint_tracks[0].translation.as_mut().unwrap().values.pop();
        assert!(check(&c, &mut bufs(&c, 2, 3), 0.5).is_err());
        // Cubic needs three values per key.
        let mut c = valid_clip();
        c.joint_tracks[0].translation.as_mut().unwrap().interpolation = Interpolation::CubicSpline;
        assert!(check(&c, &mut bufs(&c, 2, 3), 0.5).is_err());
        let mut c = valid_clip();
        c.morph_tracks[0].values.pop();
        assert!(check(&c, &mut bufs(&c, 2, 3), 0.5).is_err());
        let mut c = valid_clip();
        c.joint_tracks[0].rotation = Some(track(&[], vec![], Interpolation::Linear));
        let mut b = bufs(&c, 2, 3);
        assert!(check(&c, &mut b, 0.5).unwrap_err().0.contains("no keys"));
    }

    #[test]
    fn unsorted_times_and_stale_cursor_do_not_panic() {
        let mut c = translation_clip(
            &[0.0, 2.0, 1.0, 1.0, 3.0],
            vec![v(0., 0., 0.), v(1., 0., 0.), v(2., 0., 0.), v(3., 0., 0.), v(4., 0., 0.)],
            Interpolation::Linear,
        );
        c.events.push(ClipEvent { time: 0.0, name: String::new() });
        let mut b = bufs(&c, 1, 0);
        for (i, t) in [0.5, 1.0, 1.5, 2.5, -1.0, 9.0].into_iter().enumerate() {
            b.cursor.keys[0] = [0, 3, 4, 100, u32::MAX, 2][i];
            check(&c, &mut b, t).unwrap();
            assert!(b.out[0].is_finite());
        }
    }

    // ---- behaviour ----

    #[test]
    fn untracked_joints_and_morphs_keep_rest() {
        let c = valid_clip();
        let mut b = bufs(&c, 2, 3);
        b.rest[1].translation = v(7., 8., 9.);
        b.rest_w = vec![0.25, 0.0, 0.0];
        check(&c, &mut b, 0.5).unwrap();
        assert_eq!(b.out[1], b.rest[1]);
        assert_eq!(b.out_w, vec![0.25, 0.5, 0.5]);
        assert!(close(b.out[0].translation, v(0.5, 0., 0.)));
    }

    #[test]
    fn linear_midpoint() {
        let c = translation_clip(&[1.0, 3.0], vec![v(0., 2., 4.), v(2., 4., 8.)], Interpolation::Linear);
        let (t, _) = sample(&c, 2.0, RotationBlend::Slerp, 0);
        assert!(close(t.translation, v(1., 3., 6.)));
    }

    #[test]
    fn clamps_before_first_and_after_last_key() {
        let c = translation_clip(&[1.0, 3.0], vec![v(0., 2., 4.), v(2., 4., 8.)], Interpolation::Linear);
        assert_eq!(sample(&c, 0.0, RotationBlend::Slerp, 0).0.translation, v(0., 2., 4.));
        assert_eq!(sample(&c, -5.0, RotationBlend::Slerp, 0).0.translation, v(0., 2., 4.));
        assert_eq!(sample(&c, 3.0, RotationBlend::Slerp, 0).0.translation, v(2., 4., 8.));
        assert_eq!(sample(&c, f32::INFINITY, RotationBlend::Slerp, 0).0.translation, v(2., 4., 8.));
        // Cubic clamps to the middle value, not a tangent.
        let c = translation_clip(
            &[1.0, 3.0],
            vec![v(9., 9., 9.), v(1., 1., 1.), v(9., 9., 9.), v(9., 9., 9.), v(2., 2., 2.), v(9., 9., 9.)],
            Interpolation::CubicSpline,
        );
        assert_eq!(sample(&c, 0.0, RotationBlend::Slerp, 0).0.translation, v(1., 1., 1.));
        assert_eq!(sample(&c, 4.0, RotationBlend::Slerp, 0).0.translation, v(2., 2., 2.));
    }

    #[test]
    fn single_key_is_constant() {
        for i in [Interpolation::Step, Interpolation::Linear] {
            let c = translation_clip(&[0.5], vec![v(1., 2., 3.)], i);
            for t in [0.0, 0.5, 2.0] {
                assert_eq!(sample(&c, t, RotationBlend::Slerp, 0).0.translation, v(1., 2., 3.));
            }
        }
        let c = translation_clip(
            &[0.5],
            vec![v(5., 5., 5.), v(1., 2., 3.), v(5., 5., 5.)],
            Interpolation::CubicSpline,
        );
        assert_eq!(sample(&c, 1.0, RotationBlend::Slerp, 0).0.translation, v(1., 2., 3.));
    }

    #[test]
    fn step_holds_previous_key() {
        let c = translation_clip(
            &[0.0, 1.0, 2.0],
            vec![v(0., 0., 0.), v(1., 0., 0.), v(2., 0., 0.)],
            Interpolation::Step,
        );
        for (t, x) in [(0.0, 0.), (0.99, 0.), (1.0, 1.), (1.5, 1.), (1.999, 1.), (2.0, 2.), (3.0, 2.)] {
            assert_eq!(sample(&c, t, RotationBlend::Slerp, 0).0.translation.x, x, "t = {t}");
        }
    }

    #[test]
    fn slerp_quarter_of_90_degrees_is_22_5_degrees() {
        let axis = v(1., 2., 3.);
        let c = rotation_clip(
            &[0.0, 1.0],
            vec![Quaternion::identity(), axis_angle(axis, FRAC_PI_2)],
            Interpolation::Linear,
        );
        let (t, _) = sample(&c, 0.25, RotationBlend::Slerp, 0);
        let expected = UnitQuaternion::new_normalize(axis_angle(axis, FRAC_PI_2 / 4.0));
        assert!(angle_between(t.rotation, expected) < 1e-5);
        // Nlerp is close but not exact.
        let (n, _) = sample(&c, 0.25, RotationBlend::Nlerp, 0);
        let err = angle_between(n.rotation, expected);
        assert!(err > 1e-3 && err < 0.02, "{err}");
    }

    #[test]
    fn slerp_of_tiny_angle_is_accurate() {
        let c = rotation_clip(
            &[0.0, 1.0],
            vec![Quaternion::identity(), axis_angle(v(0., 0., 1.), 1e-4)],
            Interpolation::Linear,
        );
        let (t, _) = sample(&c, 0.5, RotationBlend::Slerp, 0);
        assert!((t.rotation.angle() - 0.5e-4).abs() < 1e-6, "{}", t.rotation.angle());
    }

    #[test]
    fn hemisphere_check_takes_short_path() {
        // Keys 10 degrees and 350 degrees about z; as quaternions 350 degrees is
        // the negation of -10 degrees, so the short path passes through 0.
        let a = axis_angle(v(0., 0., 1.), 10f32.to_radians());
        let b = axis_angle(v(0., 0., 1.), 350f32.to_radians());
        assert!(a.dot(&b) < 0.0);
        for blend in [RotationBlend::Slerp, RotationBlend::Nlerp] {
            let c = rotation_clip(&[0.0, 1.0], vec![a, b], Interpolation::Linear);
            let (t, _) = sample(&c, 0.5, blend, 0);
            assert!(t.rotation.angle() < 1e-4, "{blend:?}: {}", t.rotation.angle());
            // Exactly q and -q: the same rotation all the way.
            let c = rotation_clip(&[0.0, 1.0], vec![a, -a], Interpolation::Linear);
            let (t, _) = sample(&c, 0.3, blend, 0);
            assert!(angle_between(t.rotation, UnitQuaternion::new_normalize(a)) < 1e-4);
        }
    }

    #[test]
    fn rotations_are_unit_and_zero_falls_back_to_rest() {
        // Unnormalised keys still give a unit result.
        let c = rotation_clip(
            &[0.0, 1.0],
            vec![Quaternion::new(2.0, 0., 0., 0.), axis_angle(v(1., 0., 0.), 1.0) * 3.0],
            Interpolation::Linear,
        );
        let (t, _) = sample(&c, 0.5, RotationBlend::Slerp, 0);
        assert!((t.rotation.norm() - 1.0).abs() < 1e-6);
        assert!((t.rotation.angle() - 0.5).abs() < 1e-5);
        // A cubic spline passing through zero gives the rest rotation, not NaN.
        let z = Quaternion::new(0.0, 0.0, 0.0, 0.0);
        let c = rotation_clip(&[0.0, 1.0], vec![z, z, z, z, z, z], Interpolation::CubicSpline);
        let (t, _) = sample(&c, 0.5, RotationBlend::Slerp, 0);
        assert_eq!(t.rotation, UnitQuaternion::identity());
    }

    #[test]
    fn cubic_spline_matches_formula() {
        // Scalar case in x: v0 = 1, b0 = 2, v1 = 3, a1 = -1, td = 2, s = 0.5.
        // p = 0.5*1 + 2*(0.125 - 0.5 + 0.5)*2 + 0.5*3 + 2*(0.125 - 0.25)*(-1) = 0.5 + 0.5 + 1.5 + 0.25
        let c = translation_clip(
            &[1.0, 3.0],
            vec![v(7., 0., 0.), v(1., 0., 0.), v(2., 0., 0.), v(-1., 0., 0.), v(3., 0., 0.), v(7., 0., 0.)],
            Interpolation::CubicSpline,
        );
        let (t, _) = sample(&c, 2.0, RotationBlend::Slerp, 0);
        assert!((t.translation.x - 2.75).abs() < 1e-6, "{}", t.translation.x);
        // s = 0.25: h00 = 0.84375, h10 = 0.140625, h01 = 0.15625, h11 = -0.046875.
        let (t, _) = sample(&c, 1.5, RotationBlend::Slerp, 0);
        let (v0, b0, v1, a1, td) = (1.0, 2.0, 3.0, -1.0, 2.0);
        let p = 0.84375 * v0 + td * 0.140625 * b0 + 0.15625 * v1 + td * -0.046875 * a1;
        assert!((t.translation.x - p).abs() < 1e-6, "{} vs {p}", t.translation.x);
    }

    #[test]
    fn cubic_rotation_is_normalised() {
        let q0 = axis_angle(v(0., 1., 0.), 0.0);
        let q1 = axis_angle(v(0., 1., 0.), 1.0);
        let zero = Quaternion::new(0.0, 0.0, 0.0, 0.0);
        let c = rotation_clip(&[0.0, 1.0], vec![zero, q0, zero, zero, q1, zero], Interpolation::CubicSpline);
        let (t, _) = sample(&c, 0.5, RotationBlend::Slerp, 0);
        // Zero tangents: the unnormalised midpoint is (q0 + q1) / 2, i.e. 0.5 rad.
        assert!((t.rotation.angle() - 0.5).abs() < 1e-5);
    }

    #[test]
    fn morph_tracks_all_interpolations() {
        let mut c = Clip::default();
        // Linear: two weights at offset 0.
        c.morph_tracks.push(MorphWeightTrack {
            offset: 0,
            count: 2,
            times: vec![0.0, 1.0],
            values: vec![0.0, 1.0, 1.0, 0.0],
            interpolation: Interpolation::Linear,
        });
        // Step: one weight at offset 2.
        c.morph_tracks.push(MorphWeightTrack {
            offset: 2,
            count: 1,
            times: vec![0.0, 1.0],
            values: vec![0.2, 0.8],
            interpolation: Interpolation::Step,
        });
        // Cubic: two weights at offset 3, layout [a0 a0' v0 v0' b0 b0' | a1 a1' v1 v1' b1 b1'].
        c.morph_tracks.push(MorphWeightTrack {
            offset: 3,
            count: 2,
            times: vec![0.0, 2.0],
            values: vec![9., 9., 1., 0., 2., 0., -1., 0., 3., 1., 9., 9.],
            interpolation: Interpolation::CubicSpline,
        });
        c.update_duration();
        let (_, w) = sample(&c, 1.0, RotationBlend::Slerp, 6);
        assert!((w[0] - 1.0).abs() < 1e-6 && w[1].abs() < 1e-6, "{w:?}");
        assert_eq!(w[2], 0.8);
        assert!((w[3] - 2.75).abs() < 1e-6, "{w:?}");
        assert!((w[4] - 0.5).abs() < 1e-6, "{w:?}");
        assert_eq!(w[5], 0.5); // rest
        let (_, w) = sample(&c, 0.25, RotationBlend::Slerp, 6);
        assert!((w[0] - 0.25).abs() < 1e-6 && (w[1] - 0.75).abs() < 1e-6, "{w:?}");
        assert_eq!(w[2], 0.2);
        let (_, w) = sample(&c, 5.0, RotationBlend::Slerp, 6);
        assert_eq!(&w[3..5], &[3.0, 1.0]);
    }

    #[test]
    fn nlerp_error_bound() {
        // Measures the worst angular error of nlerp against slerp over s for
        // several key separations and checks the documented bound: theta^3 / 249
        // for small angles, theta^3 / 218 for any angle up to 180 degrees.
        let axis = v(0.3, -1.0, 0.5);
        let mut measured = Vec::new();
        for deg in [10.0f32, 30.0, 90.0, 180.0] {
            let a = axis_angle(v(1., 0., 0.), 0.3);
            let b = axis_angle(axis, deg.to_radians()) * a;
            let mut worst = 0.0f32;
            for i in 0..=1000 {
                let s = i as f32 / 1000.0;
                let id = UnitQuaternion::identity();
                let e =
                    normalize_or(slerp(a, b, s).into_inner(), id).angle_to(&normalize_or(nlerp(a, b, s), id));
                worst = worst.max(e);
            }
            let theta = deg.to_radians();
            measured.push(worst);
            assert!(worst <= theta.powi(3) / 218.0 + 1e-5, "{deg}: {worst}");
            if deg <= 30.0 {
                assert!((worst / (theta.powi(3) / 249.0) - 1.0).abs() < 0.02, "{deg}: {worst}");
            }
        }
        assert!((measured[2] - 0.0160).abs() < 2e-4, "90 degrees: {}", measured[2]);
        assert!((measured[3] - 0.1422).abs() < 2e-3, "180 degrees: {}", measured[3]);
    }

    /// Tiny deterministic generator (no rand crate).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> f32 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 40) as f32 / (1u64 << 24) as f32
        }
    }

    #[test]
    fn cursor_matches_fresh_cursor() {
        let mut rng = Lcg(7);
        let n = 40;
        let mut times = Vec::new();
        let mut acc = 0.0;
        for _ in 0..n {
            times.push(acc);
            acc += 0.01 + rng.next() * 0.2;
        }
        let vals: Vec<Vector3<f32>> = (0..n).map(|_| v(rng.next(), rng.next(), rng.next())).collect();
        let rots: Vec<Quaternion<f32>> =
            (0..n).map(|_| axis_angle(v(rng.next(), rng.next(), 1.0), rng.next() * 6.0)).collect();
        let scales: Vec<Vector3<f32>> = (0..3 * n).map(|_| v(rng.next(), rng.next(), rng.next())).collect();
        let weights: Vec<f32> = (0..2 * n).map(|_| rng.next()).collect();
        let mut clip = Clip {
            joint_tracks: vec![JointTracks {
                joint: 1,
                translation: Some(track(&times, vals, Interpolation::Linear)),
                rotation: Some(track(&times[..n / 2], rots[..n / 2].to_vec(), Interpolation::Linear)),
                scale: Some(track(&times, scales, Interpolation::CubicSpline)),
            }],
            morph_tracks: vec![MorphWeightTrack {
                offset: 0,
                count: 2,
                times: times.clone(),
                values: weights,
                interpolation: Interpolation::Step,
            }],
            ..Default::default()
        };
        clip.update_duration();
        let rest = vec![Transform::IDENTITY; 2];
        let rest_w = vec![0.0; 2];
        let mut kept = SamplingCursor::new(&clip);
        let mut t = -0.1;
        for step in 0..2000 {
            // Mostly small forward steps, sometimes backwards or a random jump.
            let r = rng.next();
            t = if step % 97 == 0 {
                rng.next() * (acc + 0.4) - 0.2
            } else if r < 0.1 {
                t - rng.next() * 0.3
            } else {
                t + rng.next() * 0.05
            };
            if t > acc + 0.2 {
                t = -0.1;
            }
            let mut results = Vec::new();
            for cursor in [&mut kept, &mut SamplingCursor::new(&clip)] {
                let mut out = vec![Transform::IDENTITY; 2];
                let mut out_w = vec![0.0; 2];
                SampleJob {
                    clip: &clip,
                    time: t.into(),
                    rest: &rest,
                    rest_morph_weights: &rest_w,
                    rotation_blend: RotationBlend::Slerp,
                    cursor,
                    output: &mut out,
                    morph_output: &mut out_w,
                }
                .run()
                .unwrap();
                results.push((out, out_w));
            }
            assert_eq!(results[0], results[1], "t = {t}");
        }
        kept.reset();
        assert!(kept.keys.iter().all(|&k| k == 0));
    }

    #[test]
    fn locate_forward_is_cached() {
        let times = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
        let mut c = 0;
        assert_eq!(locate(&times, 0.5, &mut c), Span::Between { k: 0, s: 0.5, td: 1.0 });
        assert_eq!(locate(&times, 1.5, &mut c), Span::Between { k: 1, s: 0.5, td: 1.0 });
        assert_eq!(c, 1);
        assert_eq!(locate(&times, 3.5, &mut c), Span::Between { k: 3, s: 0.5, td: 1.0 });
        assert_eq!(locate(&times, 0.25, &mut c), Span::Between { k: 0, s: 0.25, td: 1.0 });
        assert_eq!(locate(&times, 5.0, &mut c), Span::Key(5));
        assert_eq!(c, 4);
    }
}
