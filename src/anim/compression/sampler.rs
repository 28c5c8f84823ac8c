//! Sampling a compressed clip straight from its bit stream: the same output
//! as `SampleJob` (local transforms, rest values where a clip has no track,
//! morph weights), decoding only the two keys around the time of each
//! animated track.

use super::quantize::{from_smallest_three, load_bits, read_bits};
use super::{CompressedClip, PackedTrack, Property};
use crate::anim::job::{JobError, check_len};
use crate::anim::{SampleJob, SamplingCursor, Transform};
use nalgebra::{Quaternion, UnitQuaternion, Vector3};

/// Per-character lookup state for one compressed clip: the last key used
/// by each stored track, and the cursor of its morph tracks. Only a hint:
/// results never depend on it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CompressedCursor {
    keys: Vec<u32>,
    morph: SamplingCursor,
}

impl CompressedCursor {
    /// A cursor for `clip`, at its first keys.
    pub fn new(clip: &CompressedClip) -> Self {
        CompressedCursor { keys: vec![0; clip.tracks.len()], morph: SamplingCursor::new(&clip.morph) }
    }
}

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
    /// Cached key positions, made for this clip.
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
        check_len(
            "compressed sample: cursor (made for another clip?)",
            self.cursor.keys.len(),
            self.clip.tracks.len(),
        )
    }

    /// Validates, then samples. Never allocates.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        let clip = self.clip;
        if clip.morph.morph_tracks.is_empty() {
            self.output.copy_from_slice(self.rest);
            self.morph_output.copy_from_slice(self.rest_morph_weights);
        } else {
            // Morph weights are kept as stored; the uncompressed sampler
            // does them (and puts every joint at rest).
            SampleJob {
                clip: &clip.morph,
                time: self.time,
                rest: self.rest,
                rest_morph_weights: self.rest_morph_weights,
                rotation_blend: Default::default(),
                cursor: &mut self.cursor.morph,
                output: self.output,
                morph_output: self.morph_output,
            }
            .run()?;
        }
        for c in &clip.constants {
            let out = &mut self.output[c.joint as usize];
            let [x, y, z, w] = c.value;
            match c.property {
                Property::Translation => out.translation = Vector3::new(x, y, z),
                Property::Rotation => {
                    out.rotation = UnitQuaternion::new_unchecked(Quaternion::new(w, x, y, z))
                }
                Property::Scale => out.scale = Vector3::new(x, y, z),
            }
        }
        let stream = &clip.stream[..];
        let times = &clip.times[..];
        let time_bits = u32::from(clip.time_bits);
        for (track, cursor) in clip.tracks.iter().zip(self.cursor.keys.iter_mut()) {
            let reader = KeyReader { stream, times, time_bits, track };
            let out = &mut self.output[track.joint as usize];
            let (k, s) = reader.locate(self.time, cursor);
            let a = reader.components(k);
            if track.property == Property::Rotation {
                let a = from_smallest_three(a, usize::from(track.dropped));
                let q = if s > 0.0 {
                    let b = from_smallest_three(reader.components(k + 1), usize::from(track.dropped));
                    nlerp(a, b, s)
                } else {
                    a
                };
                out.rotation = UnitQuaternion::new_unchecked(Quaternion::new(q[3], q[0], q[1], q[2]));
            } else {
                let v = if s > 0.0 {
                    let b = reader.components(k + 1);
                    [0, 1, 2].map(|i| a[i] + (b[i] - a[i]) * s)
                } else {
                    a
                };
                let v = Vector3::new(v[0], v[1], v[2]);
                if track.property == Property::Translation {
                    out.translation = v;
                } else {
                    out.scale = v;
                }
            }
        }
        Ok(())
    }
}

/// Normalised lerp on the short arc (what key reduction assumed).
#[inline(always)]
fn nlerp(a: [f32; 4], b: [f32; 4], s: f32) -> [f32; 4] {
    let dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
    let sb = if dot < 0.0 { -s } else { s };
    let sa = 1.0 - s;
    let q = [0, 1, 2, 3].map(|i| a[i] * sa + b[i] * sb);
    let n = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    if n > 0.0 {
        let inv = 1.0 / n.sqrt();
        q.map(|c| c * inv)
    } else {
        a
    }
}

/// Keys a forward step may move on before a binary search takes over.
const FORWARD_STEPS: u32 = 4;

/// Reads one stored track's keys from the clip's bit stream.
struct KeyReader<'a> {
    stream: &'a [u8],
    times: &'a [f32],
    time_bits: u32,
    track: &'a PackedTrack,
}

impl KeyReader<'_> {
    /// Bit offset of key `k`.
    #[inline(always)]
    fn key_start(&self, k: u32) -> u64 {
        let key_bits = self.time_bits + 3 * u32::from(self.track.bits);
        u64::from(self.track.bit_offset) + u64::from(k) * u64::from(key_bits)
    }

    /// Time of key `k`.
    #[inline(always)]
    fn time(&self, k: u32) -> f64 {
        let index = read_bits(self.stream, self.key_start(k), self.time_bits) as usize;
        f64::from(self.times.get(index).copied().unwrap_or(0.0))
    }

    /// Decoded components of key `k`: one 64-bit load when the three fit.
    #[inline(always)]
    fn components(&self, k: u32) -> [f32; 3] {
        let bits = u32::from(self.track.bits);
        let start = self.key_start(k) + u64::from(self.time_bits);
        let r = &self.track.ranges;
        let mask = (1u64 << bits) - 1;
        if 3 * bits <= 56 {
            let word = load_bits(self.stream, start);
            [
                r[0].value((word & mask) as u32),
                r[1].value(((word >> bits) & mask) as u32),
                r[2].value(((word >> (2 * bits)) & mask) as u32),
            ]
        } else {
            let field = |i: u32| read_bits(self.stream, start + u64::from(i * bits), bits);
            [r[0].value(field(0)), r[1].value(field(1)), r[2].value(field(2))]
        }
    }

    /// The key at or before `t` and the fraction towards the next one (0 at
    /// a key, before the first and after the last; the next key for STEP
    /// only counts from its own time). `cached` is the last key used.
    #[inline(always)]
    fn locate(&self, t: f64, cached: &mut u32) -> (u32, f32) {
        let n = self.track.keys;
        if n == 1 || t <= self.time(0) {
            *cached = 0;
            return (0, 0.0);
        }
        if t >= self.time(n - 1) {
            *cached = n - 1;
            return (n - 1, 0.0);
        }
        // Here n >= 2 and first < t < last: forward playback stays in the
        // cached interval or moves a few keys on (resampled tracks can have
        // keys closer than a frame).
        let c = (*cached).min(n - 2);
        let (mut k, mut ta) = (c, self.time(c));
        let mut next = None;
        if ta <= t {
            let mut tb = self.time(c + 1);
            let mut steps = 0;
            while tb <= t && steps < FORWARD_STEPS {
                // t < last, so k + 2 < n here.
                k += 1;
                ta = tb;
                tb = self.time(k + 1);
                steps += 1;
            }
            next = (t < tb).then_some(tb);
        }
        let tb = match next {
            Some(tb) => tb,
            None => {
                k = self.search(t);
                ta = self.time(k);
                self.time(k + 1)
            }
        };
        *cached = k;
        if self.track.step || tb <= ta {
            return (k, 0.0);
        }
        (k, ((t - ta) / (tb - ta)) as f32)
    }

    /// Binary search for the last key at or before `t`, in `0..n-1`.
    fn search(&self, t: f64) -> u32 {
        let (mut lo, mut hi) = (0, self.track.keys - 1);
        // Invariant: time(lo) <= t < time(hi).
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.time(mid) <= t {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }
}
