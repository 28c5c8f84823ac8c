//! Sampling a compressed clip: the same output as `SampleJob` (local
//! transforms, rest values where a clip has no track, morph weights), from
//! the keys the character's [`CompressedCursor`] decoded, four tracks per
//! SIMD operation. Tracks whose cached keys do not hold at the time decode
//! theirs from the bit stream first.
//!
//! It never changes the clip, its results never depend on where the cursor
//! was, and it never allocates.

use super::cursor::{CompressedCursor, KeyBlock, LANES, RotationBlock, Span, sample_cubic};
use super::interpolation::C;
use super::refill::{refill_rotations, refill_vectors, refill_weights};
use super::{CompressedClip, Property};
use crate::anim::Transform;
use crate::anim::job::{JobError, check_len};
use crate::anim::lanes8::Simd;
use crate::anim::math::normalize_or;
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
        self.validate()?;
        let clip = self.clip;
        self.output.copy_from_slice(self.rest);
        self.morph_output.copy_from_slice(self.rest_morph_weights);
        for c in &clip.constants {
            set(self.output, self.morph_output, c.property, c.joint as usize, c.value);
        }
        self.cursor.follow(clip);
        let time = Time::new(self.time);
        self.refill(&time, Simd::detect());
        let rotations = clip.rotation_tracks;
        for b in 0..self.cursor.rotations.len() {
            let q = nlerp_block(&self.cursor.rotations[b], &clip.corrected[b], &time).map(f32x4::to_array);
            let tracks = &clip.tracks[b * LANES..rotations.min((b + 1) * LANES)];
            for (l, track) in tracks.iter().enumerate() {
                self.output[track.joint as usize].rotation =
                    UnitQuaternion::new_unchecked(Quaternion::new(q[3][l], q[0][l], q[1][l], q[2][l]));
            }
        }
        let vectors = &clip.tracks[rotations..rotations + clip.vector_tracks];
        for b in 0..self.cursor.vectors.len() {
            let v = lerp_block(&self.cursor.vectors[b], &time).map(f32x4::to_array);
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
            let [w] = lerp_block(&self.cursor.weights[b], &time).map(f32x4::to_array);
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
        Ok(())
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
    fn refill(&mut self, time: &Time, simd: Simd) {
        let (clip, t) = (self.clip, self.time);
        for b in 0..self.cursor.rotations.len() {
            let stale = time.stale(&self.cursor.rotations[b].span);
            if stale != 0 {
                refill_rotations(clip, self.cursor, b, stale, t, simd);
            }
        }
        for b in 0..self.cursor.vectors.len() {
            let stale = time.stale(&self.cursor.vectors[b].span);
            if stale != 0 {
                refill_vectors(clip, self.cursor, b, stale, t, simd);
            }
        }
        for b in 0..self.cursor.weights.len() {
            let stale = time.stale(&self.cursor.weights[b].span);
            if stale != 0 {
                refill_weights(clip, self.cursor, b, stale, t, simd);
            }
        }
    }
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
        let nearest = (t as f32).clamp(f32::MIN, f32::MAX);
        let down = if f64::from(nearest) > t { nearest.next_down() } else { nearest };
        Time {
            down: f32x4::splat(down),
            nearest: f32x4::splat(nearest),
            down_f32: down,
            nearest_f32: nearest,
        }
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
    std::array::from_fn(|c| {
        let a = f32x4::from(block.a[c]);
        a + (f32x4::from(block.b[c]) - a) * s
    })
}

/// Rotations of four lanes: normalised lerp on the short arc, the ratio
/// corrected to follow slerp in the `corrected` lanes (see
/// [`interpolation`](super::interpolation); keys held have a dot product
/// of 1, so no correction), normalising with the reciprocal square root
/// estimate refined by one Newton step (as ozz-animation does; relative
/// error below 1e-6). Between two unit keys on the short arc the lerp is at least
/// 0.7 long, so no lane needs a fallback for zero length.
#[inline(always)]
fn nlerp_block(block: &RotationBlock, corrected: &[f32; LANES], time: &Time) -> [f32x4; 4] {
    let s = time.ratios(&block.span);
    let (a, b) = (block.a.map(f32x4::from), block.b.map(f32x4::from));
    let dot = (a[0] * b[0] + a[2] * b[2]) + (a[1] * b[1] + a[3] * b[3]);
    // The sign bit of the dot product flips `b` onto `a`'s side.
    let flip = dot & f32x4::splat(-0.0);
    let x = (f32x4::ONE - (dot ^ flip)).fast_max(f32x4::ZERO);
    let [c0, c1, c2] = C.map(|c| f32x4::splat(c as f32));
    let k = (x * (c0 + x * (c1 + x * c2))) & f32x4::from(*corrected);
    let half = f32x4::splat(0.5);
    let u = s + s * (s - half) * (s - f32x4::ONE) * k;
    let q: [f32x4; 4] = std::array::from_fn(|c| a[c] + ((b[c] ^ flip) - a[c]) * u);
    let n2 = (q[0] * q[0] + q[2] * q[2]) + (q[1] * q[1] + q[3] * q[3]);
    let r = n2.recip_sqrt();
    let inv = r * (f32x4::splat(1.5) - half * n2 * r * r);
    q.map(|c| c * inv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::compression::{CompressionSettings, compress};
    use crate::anim::{Clip, Interpolation, JointTracks, NO_PARENT, Skeleton, Track};

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

    fn x_at(skeleton: &Skeleton, clip: &CompressedClip, cursor: &mut CompressedCursor, time: f64) -> f32 {
        let mut output = [Transform::IDENTITY];
        CompressedSampleJob {
            clip,
            time,
            rest: skeleton.rest(),
            rest_morph_weights: &[],
            cursor,
            output: &mut output,
            morph_output: &mut [],
        }
        .run()
        .unwrap();
        output[0].translation.x
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
}
