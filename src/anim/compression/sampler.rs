//! Sampling a compressed clip: the same output as `SampleJob` (local
//! transforms, rest values where a clip has no track, morph weights), from
//! the keys the character's [`CompressedCursor`] decoded, four tracks per
//! SIMD operation. Tracks whose cached keys do not hold at the time decode
//! theirs from the bit stream first.
//!
//! It never changes the clip, its results never depend on where the cursor
//! was, and it never allocates.

use super::cursor::{CompressedCursor, KeyBlock, LANES, RotationBlock, Span, sample_cubic, to_arrays};
use super::interpolation::C;
use super::key_decode::Unpack;
use super::refill::{refill_rotations, refill_vectors, refill_weights};
use super::refill_pair::refill_rotation_pair;
use super::{CompressedClip, Property};
use crate::anim::Transform;
use crate::anim::job::{JobError, check_len};
use crate::anim::lanes8::{Lanes8, Portable, Simd};
use crate::anim::math::{f32_around, normalize_or};
use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use wide::{CmpGe, CmpLt, f32x4};

/// Samples a compressed clip at one time into a local pose.
#[derive(Debug)]
pub struct CompressedSampleJob<'a> {
    /// The clip.
    pub clip: &'a CompressedClip,
    /// Seconds on the clip's timeline (clamped to each track's keys). NaN is rejected.
    pub time: f64,
    /// Rest transform per skeleton joint (the skeleton the clip was compressed for).
    pub rest: &'a [Transform],
    /// Rest weight per morph slot.
    pub rest_morph_weights: &'a [f32],
    /// This character's decoded keys of the clip (a cursor made for another
    /// clip of the same sizes is emptied first).
    pub cursor: &'a mut CompressedCursor,
    /// Sampled local transforms, as long as `rest`.
    pub output: &'a mut [Transform],
    /// Sampled morph weights, as long as `rest_morph_weights`.
    pub morph_output: &'a mut [f32],
}

impl CompressedSampleJob<'_> {
    /// Checks the time, slice lengths, the skeleton size and the cursor.
    pub fn validate(&self) -> Result<(), JobError> {
        if self.time.is_nan() {
            return Err(JobError::new("compressed sample: time is NaN"));
        }
        check_len("compressed sample: rest (skeleton of another size?)", self.rest.len(), self.clip.joints)?;
        check_len("compressed sample: output", self.output.len(), self.rest.len())?;
        check_len("compressed sample: morph_output", self.morph_output.len(), self.rest_morph_weights.len())?;
        if self.clip.morph_slots > self.rest_morph_weights.len() {
            return Err(JobError::new(format!(
                "compressed sample: the clip writes {} morph weights, the pose has {}",
                self.clip.morph_slots,
                self.rest_morph_weights.len()
            )));
        }
        if !self.cursor.fits(self.clip) {
            return Err(JobError::new("compressed sample: cursor made for a clip of another size"));
        }
        Ok(())
    }

    /// Validates, then samples. Never allocates.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.run_with(Simd::detect())
    }

    /// `run` with the instructions `simd` names (AVX2 only where the CPU
    /// has it): the same bits either way.
    pub(crate) fn run_with(&mut self, simd: Simd) -> Result<(), JobError> {
        self.validate()?;
        match simd {
            // Checked again here (a cached flag): whoever names `Avx2` on a
            // CPU without it gets the portable code.
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the CPU has AVX2 and FMA.
            Simd::Avx2 | Simd::Avx512 if Simd::avx2_available() => unsafe { self.sample_avx2() },
            _ => self.sample::<Portable>(),
        }
        Ok(())
    }

    /// `sample` compiled for AVX2 (eight-lane rotations in one register,
    /// keys unpacked by variable shifts).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn sample_avx2(&mut self) {
        self.sample::<crate::anim::lanes8::Avx2>();
    }

    /// Samples a validated job: rotations two blocks (eight tracks) per
    /// operation of `F`, keys unpacked as `F` does.
    #[inline(always)]
    fn sample<F: Lanes8 + Unpack>(&mut self) {
        let clip = self.clip;
        self.output.copy_from_slice(self.rest);
        // Slots the clip writes every one of need no rest weights first.
        if self.morph_output.len() > clip.weights_written {
            self.morph_output.copy_from_slice(self.rest_morph_weights);
        }
        let [translations, rotations, scales, weights] = clip.constants_by_property();
        for c in translations {
            self.output[c.joint as usize].translation = Vector3::new(c.value[0], c.value[1], c.value[2]);
        }
        for c in rotations {
            self.output[c.joint as usize].rotation = UnitQuaternion::new_unchecked(Quaternion::from(c.value));
        }
        for c in scales {
            self.output[c.joint as usize].scale = Vector3::new(c.value[0], c.value[1], c.value[2]);
        }
        for c in weights {
            self.morph_output[c.joint as usize] = c.value[0];
        }
        self.cursor.follow(clip);
        let time = Time::new(self.time);
        self.refill::<F>(&time);
        let rotations = clip.rotation_tracks;
        let blocks = &self.cursor.rotations;
        let nearest = F::splat(time.nearest_f32);
        for first in (0..blocks.len()).step_by(2) {
            // The last block alone rides in both halves.
            let second = (first + 1).min(blocks.len() - 1);
            let pair = [&blocks[first], &blocks[second]];
            let q = nlerp_pair::<F>(pair, [&clip.corrected[first], &clip.corrected[second]], nearest);
            // Each lane's x, y, z, w side by side: nalgebra's order.
            let lanes = F::transpose_halves(q);
            let tracks = &clip.tracks[first * LANES..rotations.min((first + 2) * LANES)];
            for (i, track) in tracks.iter().enumerate() {
                // Written whole, with `nlerp_pair`'s unit quaternion.
                let coords =
                    self.output[track.joint as usize].rotation.as_mut_unchecked().coords.as_mut_slice();
                if i < LANES { lanes[i].store_low(coords) } else { lanes[i - LANES].store_high(coords) }
            }
        }
        let vectors = &clip.tracks[rotations..rotations + clip.vector_tracks];
        for b in 0..self.cursor.vectors.len() {
            let v = to_arrays(&lerp_block(&self.cursor.vectors[b], &time));
            let tracks = &vectors[b * LANES..vectors.len().min((b + 1) * LANES)];
            for (l, track) in tracks.iter().enumerate() {
                let out = &mut self.output[track.joint as usize];
                let value = Vector3::new(v[0][l], v[1][l], v[2][l]);
                if track.property() == Property::Translation {
                    out.translation = value;
                } else {
                    out.scale = value;
                }
            }
        }
        let weights = &clip.tracks[rotations + clip.vector_tracks..];
        for b in 0..self.cursor.weights.len() {
            let [w] = to_arrays(&lerp_block(&self.cursor.weights[b], &time));
            let first = clip.weight_runs[b] as usize;
            if let Some(run) = self.morph_output.get_mut(first..first.wrapping_add(LANES)) {
                run.copy_from_slice(&w);
                continue;
            }
            let tracks = &weights[b * LANES..weights.len().min((b + 1) * LANES)];
            for (l, track) in tracks.iter().enumerate() {
                self.morph_output[track.joint as usize] = w[l];
            }
        }
        for (i, track) in clip.cubic.iter().enumerate() {
            let [x, y, z, w] =
                sample_cubic(clip, self.cursor, i, self.time, [time.down_f32, time.nearest_f32]);
            let joint = track.joint as usize;
            let value = if track.property == Property::Rotation {
                // Normalised after the spline, as `SampleJob` does; one
                // through zero keeps the rest rotation.
                let q = normalize_or(Quaternion::new(w, x, y, z), self.rest[joint].rotation);
                [q.i, q.j, q.k, q.w]
            } else {
                [x, y, z, w]
            };
            set(self.output, self.morph_output, track.property, joint, value);
        }
    }
}

impl CompressedSampleJob<'_> {
    /// Every block with tracks whose cached keys do not hold at `time`
    /// decodes their keys around it. All of them before any block is
    /// interpolated: a refill may write single lanes of a block's span, and
    /// a block read right after (one 16-byte load per component) would
    /// wait for those stores (no store-to-load forwarding from narrower
    /// stores); this order made sampling 6 to 8 % faster (Fox Run, Wizard
    /// Walk).
    #[inline(always)]
    fn refill<U: Unpack>(&mut self, time: &Time) {
        if time.within(self.cursor.fresh) {
            return;
        }
        let (clip, t) = (self.clip, self.time);
        let mut last = None;
        let mut b = 0;
        while b < self.cursor.rotations.len() {
            let stale = time.stale(&self.cursor.rotations[b].span);
            // Two blocks that move on together, as one where they can.
            if stale == (1 << LANES) - 1 && refill_rotation_pair::<U>(clip, self.cursor, b, t, &mut last) {
                b += 2;
                continue;
            }
            if stale != 0 {
                refill_rotations::<U>(clip, self.cursor, b, stale, t, &mut last);
            }
            b += 1;
        }
        for b in 0..self.cursor.vectors.len() {
            let stale = time.stale(&self.cursor.vectors[b].span);
            if stale != 0 {
                refill_vectors::<U>(clip, self.cursor, b, stale, t, &mut last);
            }
        }
        for b in 0..self.cursor.weights.len() {
            let stale = time.stale(&self.cursor.weights[b].span);
            if stale != 0 {
                refill_weights::<U>(clip, self.cursor, b, stale, t, &mut last);
            }
        }
        self.cursor.fresh = fresh(self.cursor);
    }
}

/// Where every block of `cursor` holds its keys (see `CompressedCursor::fresh`).
#[inline(always)]
fn fresh(cursor: &CompressedCursor) -> [f32; 2] {
    let spans = cursor.rotations.iter().map(|b| &b.span);
    let spans =
        spans.chain(cursor.vectors.iter().map(|b| &b.span)).chain(cursor.weights.iter().map(|b| &b.span));
    let (mut lo, mut hi) = (f32x4::splat(f32::NEG_INFINITY), f32x4::splat(f32::INFINITY));
    for span in spans {
        lo = lo.fast_max(f32x4::from(span.lo));
        hi = hi.fast_min(f32x4::from(span.hi));
    }
    let ([a, b, c, d], [e, f, g, h]) = (lo.to_array(), hi.to_array());
    [a.max(b).max(c.max(d)), e.min(f).min(g.min(h))]
}

/// Writes a track's value (x, y, z and w; a rotation unit length) to the
/// joint's `property` in `output`, or a weight to its slot of `morph_output`.
fn set(
    output: &mut [Transform],
    morph_output: &mut [f32],
    property: Property,
    joint: usize,
    value: [f32; 4],
) {
    let [x, y, z, w] = value;
    match property {
        Property::Translation => output[joint].translation = Vector3::new(x, y, z),
        Property::Rotation => {
            output[joint].rotation = UnitQuaternion::new_unchecked(Quaternion::new(w, x, y, z))
        }
        Property::Scale => output[joint].scale = Vector3::new(x, y, z),
        Property::Weight => morph_output[joint] = x,
    }
}

/// The sampled time in f32, four lanes: `down`, the largest f32 at or
/// below it, decides where cached keys hold exactly as f64 comparisons
/// against the f32 key times would (`t >= lo` exactly when `down >= lo`,
/// `t < hi` exactly when `down < hi`), so STEP keys and clamping switch at
/// the same instant whatever the cursor; `nearest` gives the ratios.
struct Time {
    down: f32x4,
    nearest: f32x4,
    /// `down` and `nearest` in one lane.
    down_f32: f32,
    nearest_f32: f32,
}

impl Time {
    fn new(t: f64) -> Self {
        // Finite: ratios of holding lanes are `(nearest - 0) * 0`.
        let around = f32_around(t);
        let nearest = around.nearest.clamp(f32::MIN, f32::MAX);
        // At or below `t` still, and below +inf's padding spans.
        let down = around.down.min(f32::MAX);
        Time {
            down: f32x4::splat(down),
            nearest: f32x4::splat(nearest),
            down_f32: down,
            nearest_f32: nearest,
        }
    }

    /// Whether this time falls in `[lo, hi)`, compared as `stale` compares
    /// each lane (see `CompressedCursor::fresh`).
    #[inline(always)]
    fn within(&self, [lo, hi]: [f32; 2]) -> bool {
        self.down_f32 >= lo && self.down_f32 < hi
    }

    /// Lanes whose cached keys do not hold at this time, one bit each.
    #[inline(always)]
    fn stale(&self, span: &Span) -> i32 {
        let holds = self.down.cmp_ge(f32x4::from(span.lo)) & self.down.cmp_lt(f32x4::from(span.hi));
        !holds.move_mask() & 0b1111
    }

    /// The ratio of each lane between its cached keys, in [0, 1].
    #[inline(always)]
    fn ratios(&self, span: &Span) -> f32x4 {
        ((self.nearest - f32x4::from(span.t0)) * f32x4::from(span.inv)).fast_min(f32x4::ONE)
    }
}

/// Translations, scales or weights of four lanes: `a + (b - a) s`.
#[inline(always)]
fn lerp_block<const N: usize>(block: &KeyBlock<N>, time: &Time) -> [f32x4; N] {
    let s = time.ratios(&block.span);
    let mut values = [f32x4::ZERO; N];
    for (value, (a, b)) in values.iter_mut().zip(block.a.iter().zip(&block.b)) {
        let a = f32x4::from(*a);
        *value = a + (f32x4::from(*b) - a) * s;
    }
    values
}

/// Rotations of two blocks (eight lanes): normalised lerp on the short
/// arc, the ratio corrected to follow slerp in the `corrected` lanes (see
/// [`interpolation`](super::interpolation); keys held have a dot product
/// of 1, so no correction), normalising with the reciprocal square root
/// estimate refined by one Newton step (as ozz-animation does; relative
/// error below 1e-6). Between two unit keys on the short arc the lerp is at
/// least 0.7 long, so no lane needs a fallback for zero length.
///
/// No closures here or in anything an AVX2 function inlines (`map`,
/// `array::from_fn`, helpers taking one): a closure is a function of its
/// own, compiled without AVX2, and fast only while the compiler happens
/// to inline it. When it does not (a change elsewhere in the crate was
/// enough), every intrinsic inside it becomes a call: Fox Walk's frame
/// took 1.9 times as long. Loops and functions marked `inline(always)`
/// are inlined by rule.
#[inline(always)]
fn nlerp_pair<F: Lanes8>(blocks: [&RotationBlock; 2], corrected: [&[f32; LANES]; 2], nearest: F) -> [F; 4] {
    let [low, high] = blocks;
    let (one, zero, half) = (F::splat(1.0), F::splat(0.0), F::splat(0.5));
    // Where time falls between each lane's keys, in [0, 1] (`min` as SSE's:
    // the second where the first is not below it).
    let s = (nearest - F::join(&low.span.t0, &high.span.t0)) * F::join(&low.span.inv, &high.span.inv);
    let s = s.lt(one).select(s, one);
    let (mut a, mut b) = ([zero; 4], [zero; 4]);
    for c in 0..4 {
        a[c] = F::join(&low.a[c], &high.a[c]);
        b[c] = F::join(&low.b[c], &high.b[c]);
    }
    let dot = (a[0] * b[0] + a[2] * b[2]) + (a[1] * b[1] + a[3] * b[3]);
    // The sign bit of the dot product flips `b` onto `a`'s side.
    let flip = dot.and(F::splat(-0.0));
    let x = one - dot.xor(flip);
    let x = x.gt(zero).select(x, zero);
    let (c0, c1, c2) = (F::splat(C[0] as f32), F::splat(C[1] as f32), F::splat(C[2] as f32));
    let k = (x * (c0 + x * (c1 + x * c2))).and(F::join(corrected[0], corrected[1]));
    let u = s + s * (s - half) * (s - one) * k;
    let mut q = [zero; 4];
    for c in 0..4 {
        q[c] = a[c] + (b[c].xor(flip) - a[c]) * u;
    }
    let n2 = (q[0] * q[0] + q[2] * q[2]) + (q[1] * q[1] + q[3] * q[3]);
    let r = n2.recip_sqrt_estimate();
    let inv = r * (F::splat(1.5) - half * n2 * r * r);
    for c in &mut q {
        *c = *c * inv;
    }
    q
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::anim::compression::{CompressionSettings, compress};
    use crate::anim::{Clip, Interpolation, JointTracks, MorphWeightTrack, NO_PARENT, Skeleton, Track};

    /// One joint whose x translation has keys `xs` at `times`.
    fn clip(times: [f32; 3], xs: [f32; 3], interpolation: Interpolation) -> (Skeleton, CompressedClip) {
        let skeleton = Skeleton::new(vec!["j".into()], vec![NO_PARENT], vec![Transform::IDENTITY]).unwrap();
        let track = Track {
            times: times.to_vec(),
            values: xs.map(|x| Vector3::new(x, 0.0, 0.0)).to_vec(),
            interpolation,
        };
        let mut clip = Clip {
            joint_tracks: vec![JointTracks {
                joint: 0,
                translation: Some(track),
                rotation: None,
                scale: None,
            }],
            ..Clip::default()
        };
        clip.update_duration();
        let (compressed, _) = compress(&clip, &skeleton, &CompressionSettings::default()).unwrap();
        assert_eq!((compressed.tracks.len(), compressed.rotation_tracks), (1, 0));
        (skeleton, compressed)
    }

    /// The local pose `clip` (without morph weights) samples at `time`
    /// through `cursor`, with the instructions `simd` names.
    pub(in crate::anim::compression) fn pose_at(
        skeleton: &Skeleton,
        clip: &CompressedClip,
        cursor: &mut CompressedCursor,
        time: f64,
        simd: Simd,
    ) -> Vec<Transform> {
        sample_at(skeleton, clip, cursor, time, &[], simd).0
    }

    /// The local pose and morph weights `clip` samples at `time` through
    /// `cursor`, `rest_weights` the weights of slots without a track.
    fn sample_at(
        skeleton: &Skeleton,
        clip: &CompressedClip,
        cursor: &mut CompressedCursor,
        time: f64,
        rest_weights: &[f32],
        simd: Simd,
    ) -> (Vec<Transform>, Vec<f32>) {
        let mut output = vec![Transform::IDENTITY; skeleton.len()];
        let mut weights = vec![f32::NAN; rest_weights.len()];
        CompressedSampleJob {
            clip,
            time,
            rest: skeleton.rest(),
            rest_morph_weights: rest_weights,
            cursor,
            output: &mut output,
            morph_output: &mut weights,
        }
        .run_with(simd)
        .unwrap();
        (output, weights)
    }

    /// `sample_at` from a new cursor, with the CPU's instructions.
    fn pose_and_weights_at(
        skeleton: &Skeleton,
        clip: &CompressedClip,
        time: f64,
        rest_weights: &[f32],
    ) -> (Vec<Transform>, Vec<f32>) {
        sample_at(skeleton, clip, &mut CompressedCursor::new(clip), time, rest_weights, Simd::detect())
    }

    fn x_at(skeleton: &Skeleton, clip: &CompressedClip, cursor: &mut CompressedCursor, time: f64) -> f32 {
        pose_at(skeleton, clip, cursor, time, Simd::detect())[0].translation.x
    }

    /// Nine joints in a chain, each rotating through its own keys (some
    /// key times shared, some not): three rotation blocks, so a pair and a
    /// last block alone.
    fn nine_rotations() -> (Skeleton, CompressedClip) {
        let names = (0..9).map(|j| format!("j{j}")).collect();
        let parents = (0..9).map(|j| if j == 0 { NO_PARENT } else { j - 1 }).collect();
        let rest = vec![Transform { translation: Vector3::new(0.0, 0.1, 0.0), ..Transform::IDENTITY }; 9];
        let skeleton = Skeleton::new(names, parents, rest).unwrap();
        let joint_tracks = (0..9u32)
            .map(|j| {
                let f = j as f32;
                let keys = 4 + j as usize % 3;
                let times = (0..keys).map(|k| k as f32 * (0.3 + 0.05 * (j % 2) as f32)).collect();
                let values = (0..keys)
                    .map(|k| {
                        let axis = Vector3::new(1.0, f * 0.3 - 1.0, 0.5 + k as f32).normalize();
                        let angle = 0.4 * k as f32 - f * 0.2;
                        UnitQuaternion::from_axis_angle(&nalgebra::Unit::new_unchecked(axis), angle)
                            .into_inner()
                    })
                    .collect();
                JointTracks {
                    joint: j,
                    translation: None,
                    rotation: Some(Track { times, values, interpolation: Interpolation::Linear }),
                    scale: None,
                }
            })
            .collect();
        let mut clip = Clip { joint_tracks, ..Clip::default() };
        clip.update_duration();
        let (compressed, _) = compress(&clip, &skeleton, &CompressionSettings::default()).unwrap();
        assert_eq!(compressed.rotation_tracks, 9);
        (skeleton, compressed)
    }

    #[test]
    fn both_instruction_sets_sample_the_same_bits() {
        let (skeleton, clip) = nine_rotations();
        let simds =
            if Simd::avx2_available() { vec![Simd::Portable, Simd::Avx2] } else { vec![Simd::Portable] };
        let mut cursors = simds.iter().map(|_| CompressedCursor::new(&clip)).collect::<Vec<_>>();
        // Forward at 60 Hz past the end, then back and jumping.
        let times = (0..150).map(|i| f64::from(i) / 60.0).chain([1.0, 0.2, 1.7, 0.9, -1.0, 0.61]);
        for t in times {
            let poses: Vec<Vec<Transform>> = simds
                .iter()
                .zip(&mut cursors)
                .map(|(&simd, cursor)| pose_at(&skeleton, &clip, cursor, t, simd))
                .collect();
            for pose in &poses {
                for (p, first) in pose.iter().zip(&poses[0]) {
                    let bits = |q: &UnitQuaternion<f32>| q.coords.map(f32::to_bits);
                    assert_eq!(bits(&p.rotation), bits(&first.rotation), "at {t}");
                    assert!((p.rotation.norm() - 1.0).abs() < 1e-6, "at {t}");
                }
            }
        }
    }

    /// Nine translation tracks keyed every 0.1 s for 3 s, the first five
    /// without the key at 0.2 s: their second keys have the same id (table
    /// time 0.1, the track's key 1), their next keys do not. Blocks of four
    /// of the five, of the fifth and three others, and of the last one
    /// alone: moving on together, lane by lane, and together.
    fn two_masks() -> (Skeleton, CompressedClip) {
        let names = (0..9).map(|j| format!("j{j}")).collect();
        let parents = (0..9).map(|j| if j == 0 { NO_PARENT } else { j - 1 }).collect();
        let skeleton = Skeleton::new(names, parents, vec![Transform::IDENTITY; 9]).unwrap();
        let joint_tracks = (0..9u32)
            .map(|j| {
                let times: Vec<f32> = (0..31).filter(|&k| j >= 5 || k != 2).map(|k| k as f32 * 0.1).collect();
                // A zigzag, so that reduction keeps every key.
                let values = (0..times.len())
                    .map(|k| Vector3::new(if k % 2 == 0 { 0.2 } else { 1.1 } + 0.05 * j as f32, 0.0, 0.0))
                    .collect();
                JointTracks {
                    joint: j,
                    translation: Some(Track { times, values, interpolation: Interpolation::Linear }),
                    rotation: None,
                    scale: None,
                }
            })
            .collect();
        let mut clip = Clip { joint_tracks, ..Clip::default() };
        clip.update_duration();
        let (compressed, _) = compress(&clip, &skeleton, &CompressionSettings::default()).unwrap();
        assert_eq!((compressed.vector_tracks, compressed.tracks.len()), (9, 9));
        // Key times as two masks; the second block's tracks do not share one.
        let together = compressed.vector_decode.iter().map(|d| d.together).collect::<Vec<_>>();
        assert_eq!(together, [true, false, true]);
        assert_ne!(compressed.tracks[0].mask, compressed.tracks[5].mask);
        (skeleton, compressed)
    }

    #[test]
    fn blocks_of_other_key_times_move_on_by_their_own_keys() {
        let (skeleton, clip) = two_masks();
        let sample = |cursor: &mut CompressedCursor, time: f64| {
            let pose = pose_at(&skeleton, &clip, cursor, time, Simd::detect());
            pose.iter().map(|t| t.translation.map(f32::to_bits)).collect::<Vec<_>>()
        };
        let mut kept = CompressedCursor::new(&clip);
        for i in 0..200 {
            let t = f64::from(i) / 60.0;
            assert_eq!(sample(&mut kept, t), sample(&mut CompressedCursor::new(&clip), t), "at {t}");
        }
    }

    /// Morph slots 0 to 3 (one block of four consecutive slots, stored at
    /// once) and 5 and 6 moving, 4 and 7 without a track: those keep their
    /// rest weights, the others land in their own slots.
    #[test]
    fn weights_land_in_their_slots_and_slots_without_a_track_rest() {
        let skeleton = Skeleton::new(vec!["j".into()], vec![NO_PARENT], vec![Transform::IDENTITY]).unwrap();
        let track = |offset: u32, count: u32| MorphWeightTrack {
            offset,
            count,
            times: vec![0.0, 1.0],
            values: (0..2 * count)
                .map(|i| if i < count { 0.0 } else { (offset + i - count + 1) as f32 / 10.0 })
                .collect(),
            interpolation: Interpolation::Linear,
        };
        let mut clip = Clip { morph_tracks: vec![track(0, 4), track(5, 2)], ..Clip::default() };
        clip.update_duration();
        let (compressed, _) = compress(&clip, &skeleton, &CompressionSettings::default()).unwrap();
        assert_eq!((compressed.weights_written, compressed.weight_runs[0]), (4, 0));
        let (_, weights) = pose_and_weights_at(&skeleton, &compressed, 0.5, &[0.5; 8]);
        let expected = [0.05, 0.1, 0.15, 0.2, 0.5, 0.3, 0.35, 0.5];
        for (slot, (w, e)) in weights.iter().zip(expected).enumerate() {
            assert!((w - e).abs() < 1e-3, "slot {slot}: {w}, expected {e}");
        }
    }

    /// A track of one value, of each property, is written to its own
    /// joint's property (or slot), grouped by property in the clip.
    #[test]
    fn constant_tracks_land_in_their_joints_property() {
        let names = (0..3).map(|j| format!("j{j}")).collect();
        let skeleton = Skeleton::new(names, vec![NO_PARENT, 0, 1], vec![Transform::IDENTITY; 3]).unwrap();
        let held = |v: Vector3<f32>| {
            Some(Track { times: vec![0.0, 1.0], values: vec![v; 2], interpolation: Interpolation::Linear })
        };
        let turn = UnitQuaternion::from_euler_angles(0.3, -0.2, 0.9).into_inner();
        let tracks =
            |joint, translation, rotation, scale| JointTracks { joint, translation, rotation, scale };
        let mut clip = Clip {
            joint_tracks: vec![
                tracks(0, held(Vector3::new(1.0, 2.0, 3.0)), None, held(Vector3::new(0.5, 0.25, 2.0))),
                tracks(
                    1,
                    None,
                    Some(Track {
                        times: vec![0.0, 1.0],
                        values: vec![turn; 2],
                        interpolation: Interpolation::Linear,
                    }),
                    None,
                ),
                tracks(2, held(Vector3::new(-4.0, 0.0, 0.5)), None, held(Vector3::new(3.0, 1.0, 1.5))),
            ],
            morph_tracks: vec![MorphWeightTrack {
                offset: 1,
                count: 1,
                times: vec![0.0, 1.0],
                values: vec![0.75, 0.75],
                interpolation: Interpolation::Linear,
            }],
            ..Clip::default()
        };
        clip.update_duration();
        let (compressed, _) = compress(&clip, &skeleton, &CompressionSettings::default()).unwrap();
        let counts = compressed.constants_by_property().map(<[_]>::len);
        assert_eq!((counts, compressed.tracks.len()), ([2, 1, 2, 1], 0));
        let (output, weights) = pose_and_weights_at(&skeleton, &compressed, 0.5, &[0.1; 2]);
        let close = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(a, b)| (a - b).abs() < 1e-6);
        assert!(close(output[0].translation.as_slice(), &[1.0, 2.0, 3.0]), "{:?}", output[0]);
        assert!(close(output[0].scale.as_slice(), &[0.5, 0.25, 2.0]), "{:?}", output[0]);
        assert!(close(output[1].rotation.coords.as_slice(), turn.coords.as_slice()), "{:?}", output[1]);
        assert!(close(output[1].translation.as_slice(), &[0.0; 3]), "{:?}", output[1]);
        assert!(close(output[2].translation.as_slice(), &[-4.0, 0.0, 0.5]), "{:?}", output[2]);
        assert!(close(output[2].scale.as_slice(), &[3.0, 1.0, 1.5]), "{:?}", output[2]);
        assert!(close(&weights, &[0.1, 0.75]), "{weights:?}");
    }

    #[test]
    fn a_cursor_made_for_another_clip_is_emptied_first() {
        let (skeleton, a) = clip([0.0, 0.5, 1.0], [0.0, 1.0, 0.0], Interpolation::Linear);
        let (_, b) = clip([0.0, 0.5, 1.0], [5.0, 9.0, 2.0], Interpolation::Linear);
        let mut cursor = CompressedCursor::new(&a);
        assert!((x_at(&skeleton, &a, &mut cursor, 0.25) - 0.5).abs() < 1e-4);
        // Same sizes, so the cursor fits; its keys are a's.
        let x = x_at(&skeleton, &b, &mut cursor, 0.25);
        assert_eq!(x, x_at(&skeleton, &b, &mut CompressedCursor::new(&b), 0.25));
        assert!((x - 7.0).abs() < 1e-4, "{x}");
    }

    #[test]
    fn step_keys_and_clamping_switch_at_the_key_times_whatever_the_cursor() {
        let (skeleton, c) = clip([0.5, 1.0, 1.5], [1.0, 2.0, 3.0], Interpolation::Step);
        // Just below 1.0 in f64 rounds to 1.0 in f32, yet still holds key 0.
        let below = 1.0 - 1e-12;
        let expected =
            [(-3.0, 1.0), (0.5, 1.0), (below, 1.0), (1.0, 2.0), (1.4, 2.0), (1.5, 3.0), (1e40, 3.0)];
        let mut kept = CompressedCursor::new(&c);
        for order in [expected.to_vec(), expected.iter().rev().copied().collect()] {
            for (t, want) in order {
                let got = x_at(&skeleton, &c, &mut kept, t);
                assert_eq!(got, x_at(&skeleton, &c, &mut CompressedCursor::new(&c), t), "at {t}");
                assert!((got - want).abs() < 1e-3, "at {t}: {got}, expected {want}");
            }
        }
    }

    /// Six joints with cubic tracks of every property (several keys, every
    /// tangent its own), keyed at times of their own, and a cubic morph
    /// track of two weights: more than one block, a block mixing properties.
    fn cubic_clip() -> (Skeleton, Clip) {
        let names = (0..6).map(|j| format!("j{j}")).collect();
        let parents = (0..6).map(|j| if j == 0 { NO_PARENT } else { j - 1 }).collect();
        let skeleton = Skeleton::new(names, parents, vec![Transform::IDENTITY; 6]).unwrap();
        let wave = |i: usize, k: f32| (k * 1.7 + i as f32 * 0.9).sin();
        let times = |keys: usize, start: f32, step: f32| (0..keys).map(|k| start + k as f32 * step).collect();
        let vectors = |keys: usize, k: f32| -> Vec<Vector3<f32>> {
            (0..3 * keys)
                .map(|i| Vector3::new(wave(i, k), 0.5 * wave(i, k + 1.0), 1.0 + 0.2 * wave(i, k + 2.0)))
                .collect()
        };
        let rotations = |keys: usize, k: f32| -> Vec<Quaternion<f32>> {
            (0..3 * keys)
                .map(|i| {
                    let (a, b) = (wave(i, k), wave(i, k + 0.5));
                    if i % 3 == 1 {
                        Quaternion::new(0.8 + 0.1 * a, 0.3 * b, 0.2, 0.4 * a).normalize()
                    } else {
                        Quaternion::new(0.3 * a, b, -0.5 * a, 0.2 * b)
                    }
                })
                .collect()
        };
        fn cubic<T>(times: Vec<f32>, values: Vec<T>) -> Option<Track<T>> {
            Some(Track { times, values, interpolation: Interpolation::CubicSpline })
        }
        let joint = |j: u32| JointTracks { joint: j, translation: None, rotation: None, scale: None };
        let mut clip = Clip {
            joint_tracks: vec![
                JointTracks { rotation: cubic(times(5, 0.0, 0.25), rotations(5, 0.0)), ..joint(0) },
                JointTracks { translation: cubic(times(4, 0.1, 0.3), vectors(4, 1.0)), ..joint(1) },
                JointTracks { rotation: cubic(times(3, 0.4, 0.2), rotations(3, 2.0)), ..joint(2) },
                JointTracks { scale: cubic(times(4, 0.0, 0.33), vectors(4, 3.0)), ..joint(3) },
                JointTracks {
                    translation: cubic(times(6, 0.05, 0.19), vectors(6, 4.0)),
                    rotation: cubic(times(2, 0.0, 1.0), rotations(2, 5.0)),
                    ..joint(4)
                },
            ],
            morph_tracks: vec![MorphWeightTrack {
                offset: 0,
                count: 2,
                times: times(3, 0.2, 0.4),
                values: (0..18).map(|i| 0.5 + 0.4 * wave(i, 6.0)).collect(),
                interpolation: Interpolation::CubicSpline,
            }],
            ..Clip::default()
        };
        clip.update_duration();
        (skeleton, clip)
    }

    /// What cubic track `i` gives at `t` alone: its keys around `t`
    /// decoded into a fresh cursor, and the spline (a rotation not yet
    /// normalised).
    fn cubic_alone(clip: &CompressedClip, i: usize, t: f64) -> [f32; 4] {
        let time = Time::new(t);
        sample_cubic(clip, &mut CompressedCursor::new(clip), i, t, [time.down_f32, time.nearest_f32])
    }

    /// Cubic tracks give, in their own joint's property or slot, each
    /// track's spline sampled alone, bit for bit, whatever the cursor
    /// held: playing forward at 60 and 24 Hz, back, jumping, and past both
    /// ends.
    #[test]
    fn cubic_tracks_sample_as_each_alone() {
        let (skeleton, source) = cubic_clip();
        let (clip, _) = compress(&source, &skeleton, &CompressionSettings::default()).unwrap();
        assert_eq!(clip.cubic.len(), 8, "six joint tracks and two weights");
        let d = f64::from(source.duration);
        let playing = [60.0, 24.0]
            .into_iter()
            .flat_map(|hz| (0..).map(move |f| f64::from(f) / hz - 0.05).take_while(move |&t| t < d + 0.1));
        let jumping = (0..60).map(|i| d * ((f64::from(i) * 0.37) % 1.2) - 0.1);
        let mut kept = CompressedCursor::new(&clip);
        for t in playing.chain(jumping) {
            let (out, weights) = sample_at(&skeleton, &clip, &mut kept, t, &[0.0; 2], Simd::detect());
            let (fresh, fresh_weights) = pose_and_weights_at(&skeleton, &clip, t, &[0.0; 2]);
            let bits = |pose: &[Transform], w: &[f32]| crate::testing::bits::pose_bits(pose, w);
            assert_eq!(bits(&out, &weights), bits(&fresh, &fresh_weights), "at {t}");
            for (i, track) in clip.cubic.iter().enumerate() {
                let [x, y, z, w] = cubic_alone(&clip, i, t);
                let j = track.joint as usize;
                let got = match track.property {
                    Property::Translation => {
                        [out[j].translation.x, out[j].translation.y, out[j].translation.z, z]
                    }
                    Property::Scale => [out[j].scale.x, out[j].scale.y, out[j].scale.z, z],
                    Property::Rotation => out[j].rotation.coords.into(),
                    Property::Weight => [weights[j], y, z, w],
                };
                let want = match track.property {
                    Property::Translation | Property::Scale => [x, y, z, z],
                    Property::Rotation => {
                        normalize_or(Quaternion::new(w, x, y, z), skeleton.rest()[j].rotation).coords.into()
                    }
                    Property::Weight => [x, y, z, w],
                };
                assert_eq!(
                    got.map(f32::to_bits),
                    want.map(f32::to_bits),
                    "track {i} ({:?} of {j}) at {t}",
                    track.property
                );
            }
        }
    }
}
