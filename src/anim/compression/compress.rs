//! The compressor: a clip and its skeleton in, a [`CompressedClip`] and
//! what was measured out, in named steps. The time table (every key time,
//! curved intervals subdivided), one input per track on it, the exact
//! tracks sampled on the key-reduction grid, then rounds of encoding,
//! assembling and measuring, each tightening the tracks of the joints that
//! were over the bound.
//!
//! Offline only: nothing here runs while a character plays, and the clip
//! it compresses is never changed.

use super::assemble::assemble;
use super::measure::{Exact, Measure};
use super::reduce::{self, Encoded, TrackInput, Value};
use super::{
    CompressedClip, CompressionSettings, CompressionStats, DEFAULT_WEIGHT_TOLERANCE, ErrorMetric, Property,
    baseline_bytes, raw_bytes,
};
use crate::anim::sampling::{check_clip, sample_joint};
use crate::anim::{
    Clip, Interpolation, JobError, JointTracks, NO_PARENT, RotationBlend, Skeleton, Transform,
};

/// Most sub-intervals a key interval of a curved track (a slerped
/// rotation) is resampled into: the runtime interpolates linearly
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
/// Bisection steps of the loosening after the last round (see [`Compressor::refine`]).
const LOOSEN_STEPS: usize = 3;

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
    let compressor = Compressor::new(clip, skeleton, settings, weight_tolerances);
    let table = compressor.time_table();
    let grid = table.measurement_grid();
    let mut inputs = compressor.track_inputs(&table);
    let mut exact = Exact::new(clip, compressor.rest, settings.reference, compressor.weight_scale.len());
    sample_exact_on_grid(&mut inputs, &grid, &mut exact)?;
    let refined = compressor.refine(&table, &inputs, &grid, &mut exact)?;
    let stats = CompressionStats {
        raw_bytes: raw_bytes(clip),
        baseline_bytes: baseline_bytes(clip, skeleton.len()),
        compressed_parts: refined.clip.bytes_by_part(),
        max_error: refined.max_error,
        mean_error: refined.mean_error,
        raw_keys: inputs.iter().map(|i| i.keys.len()).sum::<usize>(),
        kept_keys: kept_keys(&refined.encoded),
        grid_times: grid.len(),
        error_bound: settings.error_bound,
        units_per_meter: settings.units_per_meter,
    };
    Ok((refined.clip, stats))
}

/// What every step of compressing one clip reads: the clip, its
/// skeleton's rest pose and error metric, the settings, and how far each
/// morph weight moves vertices.
struct Compressor<'a> {
    clip: &'a Clip,
    /// Joints of the skeleton.
    joints: usize,
    rest: &'a [Transform],
    settings: &'a CompressionSettings,
    metric: ErrorMetric,
    /// Object-space movement per unit of error of each morph weight (one
    /// per morph slot the clip writes).
    weight_scale: Vec<f64>,
}

impl<'a> Compressor<'a> {
    fn new(
        clip: &'a Clip,
        skeleton: &'a Skeleton,
        settings: &'a CompressionSettings,
        weight_tolerances: &[f64],
    ) -> Self {
        let weight_scale = (0..morph_slots(clip))
            .map(|s| {
                let tolerance = weight_tolerances.get(s).copied().unwrap_or(DEFAULT_WEIGHT_TOLERANCE);
                settings.error_bound / tolerance.max(1e-12)
            })
            .collect();
        Compressor {
            clip,
            joints: skeleton.len(),
            rest: skeleton.rest(),
            settings,
            metric: ErrorMetric::new(skeleton, settings.vertex_distance),
            weight_scale,
        }
    }

    /// The time table: every key time; curved intervals subdivided until
    /// lines through the points stay well within the bound.
    fn time_table(&self) -> TimeTable {
        let settings = self.settings;
        let mut times: Vec<f32> = Vec::new();
        for jt in &self.clip.joint_tracks {
            let j = jt.joint as usize;
            for (property, track) in joint_properties(jt) {
                let Some((keys, interpolation)) = track else { continue };
                times.extend_from_slice(keys);
                if curved(interpolation, property, settings) {
                    let value =
                        |t: f64| value_of(&sample_joint(jt, t, &self.rest[j], settings.reference), property);
                    let scale = error_scale(&self.metric, j, property);
                    subdivide(keys, property, &value, scale, settings, &mut times);
                }
            }
        }
        for mt in &self.clip.morph_tracks {
            times.extend_from_slice(&mt.times);
        }
        times.sort_by(f32::total_cmp);
        times.dedup();
        TimeTable { times }
    }

    /// One input per track, and per weight of each morph track: its
    /// candidate keys on `table` and what the tolerance is measured with.
    /// The exact values come from [`sample_exact_on_grid`].
    fn track_inputs(&self, table: &TimeTable) -> Vec<TrackInput> {
        let settings = self.settings;
        let mut inputs = Vec::new();
        for jt in &self.clip.joint_tracks {
            let j = jt.joint as usize;
            for (property, track) in joint_properties(jt) {
                let Some((times, interpolation)) = track else { continue };
                inputs.push(TrackInput {
                    joint: j,
                    property,
                    step: interpolation == Interpolation::Step,
                    keys: table.candidates(times, curved(interpolation, property, settings)),
                    grid: Vec::new(),
                    rest: value_of(&self.rest[j], property),
                    error_scale: error_scale(&self.metric, j, property),
                    corrected: corrected(interpolation, property, settings),
                    keep_all_keys_from: settings.keep_all_keys_from,
                    spline: if interpolation == Interpolation::CubicSpline {
                        joint_spline(jt, property)
                    } else {
                        Vec::new()
                    },
                });
            }
        }
        for mt in &self.clip.morph_tracks {
            let cubic = mt.interpolation == Interpolation::CubicSpline;
            let count = mt.count as usize;
            for w in 0..count {
                let slot = mt.offset as usize + w;
                // In-tangent, value and out-tangent of key k: slots 3k..3k + 3.
                let weight = |slot: usize| [f64::from(mt.values[slot * count + w]), 0.0, 0.0, 0.0];
                let spline = if cubic {
                    (0..mt.times.len())
                        .map(|k| [weight(3 * k), weight(3 * k + 1), weight(3 * k + 2)])
                        .collect()
                } else {
                    Vec::new()
                };
                inputs.push(TrackInput {
                    joint: slot,
                    property: Property::Weight,
                    step: mt.interpolation == Interpolation::Step,
                    keys: table.candidates(&mt.times, false),
                    grid: Vec::new(),
                    // Weights are never dropped: the sampler does not know the
                    // rest weights the clip was made for.
                    rest: [f64::NAN; 4],
                    error_scale: self.weight_scale[slot],
                    corrected: false,
                    keep_all_keys_from: settings.keep_all_keys_from,
                    spline,
                });
            }
        }
        inputs
    }

    /// Encodes every track within the whole bound, then rounds: the clip
    /// assembled, measured on `grid`, and the tracks of every joint (and
    /// weight) over `MEASURED_SHARE` of the bound tightened, until none is
    /// over or `MAX_ROUNDS` have run. The last tightening round may have
    /// tightened more than it had to, so every track's tolerance is then
    /// scaled back up by as much as the round took (bisecting
    /// `LOOSEN_STEPS` times); the smallest clip within the bound is kept.
    fn refine(
        &self,
        table: &TimeTable,
        inputs: &[TrackInput],
        grid: &[f64],
        exact: &mut Exact,
    ) -> Result<Refined, JobError> {
        let bound = self.settings.error_bound;
        let mut tolerance = vec![bound; inputs.len()];
        let mut encoded: Vec<Encoded> = inputs.iter().map(|i| reduce::encode(i, bound)).collect();
        let mut measure = Measure::new(self.joints, &self.weight_scale);
        let limit = bound * MEASURED_SHARE;
        let mut rounds = 0;
        let within = loop {
            let round = self.round(table, inputs, grid, exact, &mut measure, encoded)?;
            rounds += 1;
            if round.max_error <= limit {
                break round;
            }
            if rounds == MAX_ROUNDS {
                return Ok(round);
            }
            encoded = round.encoded;
            self.tighten(inputs, &measure, limit, &mut tolerance, &mut encoded);
        };
        let mut best = within;
        let (mut lo, mut hi) = (1.0, 1.0 / TIGHTEN);
        for _ in 0..LOOSEN_STEPS {
            let scale = (lo + hi) / 2.0;
            let encoded = inputs.iter().zip(&tolerance).map(|(i, &t)| reduce::encode(i, t * scale)).collect();
            let round = self.round(table, inputs, grid, exact, &mut measure, encoded)?;
            if round.max_error <= limit {
                lo = scale;
                if round.clip.data_bytes() < best.clip.data_bytes() {
                    best = round;
                }
            } else {
                hi = scale;
            }
        }
        Ok(best)
    }

    /// One round: the clip assembled from `encoded` and measured on `grid`.
    fn round(
        &self,
        table: &TimeTable,
        inputs: &[TrackInput],
        grid: &[f64],
        exact: &mut Exact,
        measure: &mut Measure,
        encoded: Vec<Encoded>,
    ) -> Result<Refined, JobError> {
        let clip = assemble(self.clip, self.joints, &table.times, inputs, &encoded)?;
        let (max_error, mean_error) = measure.run(&clip, &self.metric, self.rest, grid, exact)?;
        Ok(Refined { clip, max_error, mean_error, encoded })
    }

    /// Multiplies by `TIGHTEN` the tolerance of every track on the chain
    /// of each joint over `limit` (the joint and its ancestors) and of each
    /// weight over it, and encodes those tracks again.
    fn tighten(
        &self,
        inputs: &[TrackInput],
        measure: &Measure,
        limit: f64,
        tolerance: &mut [f64],
        encoded: &mut [Encoded],
    ) {
        let mut tighten = vec![false; self.joints];
        for (j, &e) in measure.joint_max.iter().enumerate() {
            if e > limit {
                let mut a = j as u32;
                while a != NO_PARENT && !tighten[a as usize] {
                    tighten[a as usize] = true;
                    a = self.metric.parent(a as usize);
                }
            }
        }
        for (i, input) in inputs.iter().enumerate() {
            let over = match input.property {
                Property::Weight => measure.weight_max[input.joint] > limit,
                _ => tighten[input.joint],
            };
            if over {
                tolerance[i] *= TIGHTEN;
                encoded[i] = reduce::encode(input, tolerance[i]);
            }
        }
    }
}

/// The last round of [`Compressor::refine`]: the clip, its measured
/// errors and how every track was encoded.
struct Refined {
    clip: CompressedClip,
    max_error: f64,
    mean_error: f64,
    encoded: Vec<Encoded>,
}

/// The clip's time table: every key time of every track and the times
/// curved intervals were subdivided at, sorted, each once. Entry `i` is
/// point `GRID_STEPS * i` of the key-reduction grid and `MEASURE_STEPS * i`
/// of the measurement grid.
struct TimeTable {
    times: Vec<f32>,
}

impl TimeTable {
    /// The measurement grid: every table time, and `MEASURE_STEPS - 1`
    /// points between each two.
    fn measurement_grid(&self) -> Vec<f64> {
        let table = &self.times;
        let mut grid: Vec<f64> = Vec::with_capacity(table.len() * MEASURE_STEPS);
        for (i, &t) in table.iter().enumerate() {
            grid.push(f64::from(t));
            if let Some(&next) = table.get(i + 1) {
                let (a, b) = (f64::from(t), f64::from(next));
                grid.extend((1..MEASURE_STEPS).map(|s| a + (b - a) * s as f64 / MEASURE_STEPS as f64));
            }
        }
        grid
    }

    /// Where `t` is in the table.
    fn index(&self, t: f32) -> usize {
        self.times.partition_point(|&x| x < t)
    }

    /// The candidate keys of a track with key `times` (table index, time,
    /// value to be filled in): its key times, or every table time from its
    /// first key to its last for a curved track.
    fn candidates(&self, times: &[f32], curved: bool) -> Vec<(u32, f64, Value)> {
        let indices: Vec<usize> = if curved {
            (self.index(times[0])..=self.index(times[times.len() - 1])).collect()
        } else {
            times.iter().map(|&t| self.index(t)).collect()
        };
        indices.into_iter().map(|i| (i as u32, f64::from(self.times[i]), [0.0; 4])).collect()
    }
}

/// Fills in each input's exact track on the key-reduction grid (every
/// (MEASURE_STEPS / GRID_STEPS)th point of `grid`), and its candidate keys'
/// values from it. The measurement samples the exact clip again at each of
/// its points rather than keeping every pose of its grid, four times as
/// many: a clip of 36,000 keys (5 minutes at 120 Hz) and 100 joints would
/// need 2.3 GB for them.
fn sample_exact_on_grid(inputs: &mut [TrackInput], grid: &[f64], exact: &mut Exact) -> Result<(), JobError> {
    for &t in grid.iter().step_by(MEASURE_STEPS / GRID_STEPS) {
        exact.sample(t)?;
        for input in inputs.iter_mut() {
            let value = match input.property {
                Property::Weight => [f64::from(exact.weights[input.joint]), 0.0, 0.0, 0.0],
                property => value_of(&exact.locals[input.joint], property),
            };
            input.grid.push((t, value));
        }
    }
    for input in inputs.iter_mut() {
        for key in &mut input.keys {
            key.2 = input.grid[GRID_STEPS * key.0 as usize].1;
        }
    }
    Ok(())
}

/// Keys stored: a constant counts one, a track equal to its rest none.
fn kept_keys(encoded: &[Encoded]) -> usize {
    encoded
        .iter()
        .map(|e| match e {
            Encoded::Rest => 0,
            Encoded::Constant(_) => 1,
            Encoded::Packed(p) => p.keys.len(),
            Encoded::Cubic(c) => c.keys.len(),
        })
        .sum()
}

/// A track's key times and interpolation.
type KeyTimes<'a> = (&'a [f32], Interpolation);

/// A joint's translation, rotation and scale tracks: the key times and
/// interpolation of each it has.
fn joint_properties(jt: &JointTracks) -> [(Property, Option<KeyTimes<'_>>); 3] {
    [
        (Property::Translation, jt.translation.as_ref().map(|t| (&t.times[..], t.interpolation))),
        (Property::Rotation, jt.rotation.as_ref().map(|t| (&t.times[..], t.interpolation))),
        (Property::Scale, jt.scale.as_ref().map(|t| (&t.times[..], t.interpolation))),
    ]
}

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
/// interpolation between its keys gives: slerped rotations (the runtime's
/// corrected nlerp is within 1e-6 rad of slerp between keys 30° apart,
/// 2e-4 rad at 90°). These are resampled before key reduction where that
/// is not within the bound. (CUBICSPLINE tracks keep their own keys as
/// Hermite keys, see [`hermite`](super::hermite).)
fn curved(interpolation: Interpolation, property: Property, settings: &CompressionSettings) -> bool {
    interpolation == Interpolation::Linear
        && property == Property::Rotation
        && settings.reference == RotationBlend::Slerp
}

/// A CUBICSPLINE joint track's keys as in-tangent, value and out-tangent.
fn joint_spline(jt: &JointTracks, property: Property) -> Vec<[Value; 3]> {
    let vector = |v: &nalgebra::Vector3<f32>| [v.x, v.y, v.z, 0.0].map(f64::from);
    let keys: Vec<Value> = match property {
        Property::Translation => jt.translation.iter().flat_map(|t| t.values.iter().map(vector)).collect(),
        Property::Scale => jt.scale.iter().flat_map(|t| t.values.iter().map(vector)).collect(),
        Property::Rotation => jt
            .rotation
            .iter()
            .flat_map(|t| t.values.iter().map(|q| [q.i, q.j, q.k, q.w].map(f64::from)))
            .collect(),
        Property::Weight => Vec::new(),
    };
    keys.chunks_exact(3).map(|k| [k[0], k[1], k[2]]).collect()
}

/// Whether the runtime corrects nlerp's ratio to follow slerp on this
/// track: rotations whose exact curve is slerp, not nlerp.
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
pub(super) fn morph_slots(clip: &Clip) -> usize {
    clip.morph_tracks.iter().map(|m| (m.offset + m.count) as usize).max().unwrap_or(0)
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
