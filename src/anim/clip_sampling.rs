//! Sampling a [`RuntimeClip`]: a per-character cursor that keeps the state
//! each block of four lanes is in (an index into the clip's block states),
//! and the job that moves it to a time and interpolates four joints per
//! SIMD operation.
//!
//! It reads the layout (checked once, when it was built) and writes only the
//! caller's cursor and output buffers: it never changes the clip, checks its
//! tracks again or allocates.
//!
//! Two paths, chosen by the rotation mode:
//!
//! - [`RotationBlend::Slerp`], glTF-exact: the results are bit for bit those
//!   of [`SampleJob`](super::SampleJob) on the source clip. Every lane
//!   repeats the scalar arithmetic in the same order (key ratio in f64, the
//!   same clamping, the same normalisation), and slerp's per-interval
//!   constants (angle, sine, hemisphere) are computed by the scalar code
//!   when the clip is built and read with the interval; the per-frame
//!   sines are the correctly rounded ones of [`sine`](super::sine), which the scalar
//!   code uses too. What the layout saves is the work around the
//!   arithmetic: no key search, no validation, one SIMD operation for
//!   eight joints (two blocks side by side, see `slerp8`; the f64 steps
//!   four lanes at a time), slerp's `atan2` once per key of the clip
//!   instead of once per frame and joint. As AVX2 where the CPU has it,
//!   else portable code; the same bits.
//! - [`RotationBlend::Nlerp`], the fast path (ozz-animation's): ratios in
//!   f32, normalised by dividing by the square root; within a few f32
//!   roundings of `SampleJob`'s nlerp. Eight joints per operation (two
//!   blocks side by side), as AVX2 where the CPU has it (see `nlerp8`).

use super::job::{JobError, check_len};
use super::lanes8::{Lanes8, Portable, Simd};
use super::math::{F32Around, f32_around};
use super::runtime_clip::{LANES, RuntimeClip};
use super::sampling::{RotationBlend, sample_morph_tracks};
use super::transform::Transform;
use std::ops::Range;

/// `[e with c = 0, e with c = 1, ...]`, written out: no closure to call
/// (a call out of the AVX2 function would run its body without AVX2).
macro_rules! each {
    ($($i:literal),+; |$c:ident| $e:expr) => {
        [$({ let $c = $i; $e }),+]
    };
}

mod hermite8;
mod nlerp8;
mod slerp8;

/// Per-character sampling state of one [`RuntimeClip`]: the state each
/// block is in (an index into the clip's block states, four bytes per
/// block) and the key hints of the morph tracks. Results never
/// depend on it: a cursor left at a later time, or made for another clip
/// of the same size, is moved back.
#[derive(Debug, Clone, PartialEq)]
pub struct ClipCursor {
    /// Id of the clip the state belongs to (0: none).
    clip: u64,
    /// The time the state is valid for.
    time: f64,
    /// The earliest time a block's next state starts (+inf when every
    /// block is in its last): playing forward to before it, no block
    /// moves, and the seek walks none of them.
    until: f64,
    /// The state of each translation block with a track (see
    /// `RuntimeClip::vector_slot`; the others hold their rest values), of
    /// every rotation block, of each scale block with a track; then the key
    /// hints of the morph tracks.
    state: Vec<u32>,
}

/// Where each part of a cursor's state starts: translation, rotation and
/// scale blocks, morph hints, end.
fn state_layout(clip: &RuntimeClip) -> [usize; 5] {
    let [translations, scales] = clip.vector_blocks();
    let scales_at = translations + clip.blocks();
    let morphs = scales_at + scales;
    [0, translations, scales_at, morphs, morphs + clip.clip().morph_tracks.len()]
}

impl ClipCursor {
    /// Names the cursor's state for a prefetch (see [`prefetch`](super::prefetch)).
    pub fn blocks(&self, blocks: &mut super::prefetch::Blocks) {
        blocks.slice(&self.state);
    }

    /// Samples `clip`'s morph weights alone at `time` into `out`, as
    /// `SampleClipJob` samples them (from the same key hints, which it
    /// moves), without seeking a joint's block: for a character whose
    /// joints are posed elsewhere (the GPU). Never allocates.
    pub fn sample_morph_weights(
        &mut self,
        clip: &RuntimeClip,
        time: f64,
        out: &mut [f32],
    ) -> Result<(), JobError> {
        if time.is_nan() {
            return Err(JobError::new("sample morph weights: time is NaN"));
        }
        check_len("sample morph weights: output", out.len(), clip.rest_morph_weights().len())?;
        if !self.fits(clip) {
            return Err(JobError::new("sample morph weights: cursor made for a clip of another size"));
        }
        let layout = state_layout(clip);
        morph_weights_into(clip, time, &mut self.state[layout[3]..layout[4]], out);
        Ok(())
    }

    /// A cursor for `clip`, at its start.
    pub fn new(clip: &RuntimeClip) -> Self {
        let mut cursor = ClipCursor {
            clip: 0,
            time: f64::NEG_INFINITY,
            until: f64::NEG_INFINITY,
            state: vec![0; state_layout(clip)[4]],
        };
        cursor.seek(clip, f64::NEG_INFINITY);
        cursor
    }

    /// Whether this cursor has the sizes `clip` needs.
    fn fits(&self, clip: &RuntimeClip) -> bool {
        self.state.len() == state_layout(clip)[4]
    }

    /// Moves every block to the state containing `time`: the keys crossed
    /// since the last call, a binary search when time went back. A block is
    /// in the last state whose start it reached (its first when none).
    fn seek(&mut self, clip: &RuntimeClip, time: f64) {
        let back = self.clip != clip.id() || time < self.time;
        if !back && time < self.until {
            // Between keys (every other sample of a clip keyed at 30 Hz
            // played at 60): 2 to 8 % of a clip's sample (Fox, CesiumMan).
            self.time = time;
            return;
        }
        let layout = state_layout(clip);
        if back {
            self.clip = clip.id();
            self.state[layout[3]..].fill(0);
        }
        let reached = |t0: &f32| f64::from(*t0) <= time;
        let mut until = f32::INFINITY;
        for (kind, starts) in clip.block_starts.iter().enumerate() {
            for (b, &[start, end]) in clip.cursor_blocks[kind].iter().enumerate() {
                let at = layout[kind] + b;
                let [leader, offset] = clip.timelines[at];
                if leader as usize != at {
                    // States starting when an earlier block's do (a baked
                    // clip's blocks mostly do): as far into its own.
                    self.state[at] = self.state[leader as usize].wrapping_add(offset);
                    continue;
                }
                let index = &mut self.state[at];
                let (start, end) = (start as usize, end as usize);
                let mut i = if back {
                    start + starts[start + 1..end].partition_point(reached)
                } else {
                    *index as usize
                };
                while i + 1 < end && reached(&starts[i + 1]) {
                    i += 1;
                }
                *index = i as u32;
                if i + 1 < end {
                    until = until.min(starts[i + 1]);
                }
            }
        }
        self.time = time;
        self.until = f64::from(until);
    }
}

/// Samples a [`RuntimeClip`] at one time into a local pose and morph
/// weights, as [`SampleJob`](super::SampleJob) does on the source clip.
#[derive(Debug)]
pub struct SampleClipJob<'a> {
    /// The clip, validated when it was built.
    pub clip: &'a RuntimeClip,
    /// Seconds on the clip's own timeline; clamped to each track's first
    /// and last key. NaN is rejected.
    pub time: f64,
    /// How LINEAR rotation keys are interpolated.
    pub rotation_blend: RotationBlend,
    /// This character's state for the clip (see [`ClipCursor`]).
    pub cursor: &'a mut ClipCursor,
    /// Sampled local transforms, one per skeleton joint.
    pub output: &'a mut [Transform],
    /// Sampled morph weights, as many as the clip's rest morph weights.
    pub morph_output: &'a mut [f32],
}

impl SampleClipJob<'_> {
    /// Checks the time and the sizes of the outputs and the cursor: the clip
    /// itself was checked when it was built.
    pub fn validate(&self) -> Result<(), JobError> {
        if self.time.is_nan() {
            return Err(JobError::new("sample clip: time is NaN"));
        }
        check_len("sample clip: output", self.output.len(), self.clip.joints())?;
        check_len(
            "sample clip: morph_output",
            self.morph_output.len(),
            self.clip.rest_morph_weights().len(),
        )?;
        if !self.cursor.fits(self.clip) {
            return Err(JobError::new("sample clip: cursor made for a clip of another size"));
        }
        Ok(())
    }

    /// Validates, then samples. Never allocates.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.run_joints(0..self.output.len())
    }

    /// `run` for the joints in `joints` alone (a layer's mask): they, and
    /// the others of their blocks of four, are sampled; the other joints'
    /// outputs keep what they held. Morph weights are sampled whole.
    pub fn run_joints(&mut self, joints: Range<usize>) -> Result<(), JobError> {
        self.run_joints_with(joints, Simd::detect())
    }

    /// `run_joints` with the instructions chosen by the caller, for either
    /// path (AVX2 and portable give the same bits: tested).
    pub(crate) fn run_joints_with(&mut self, joints: Range<usize>, simd: Simd) -> Result<(), JobError> {
        self.validate()?;
        if joints.start > joints.end || joints.end > self.output.len() {
            return Err(JobError::new(format!(
                "sample clip: joints {joints:?} outside the skeleton ({})",
                self.output.len()
            )));
        }
        let blocks = if joints.is_empty() { 0..0 } else { joints.start / LANES..joints.end.div_ceil(LANES) };
        let clip = self.clip;
        let t = self.time;
        let slerp = self.rotation_blend == RotationBlend::Slerp;
        self.cursor.seek(clip, t);
        let cursor = &*self.cursor;
        let layout = state_layout(clip);
        let rotations_at = layout[1];
        let fast_time = FastTime::new(t);
        let blocks_in =
            nlerp8::Blocks { clip, state: &cursor.state, rotations_at, vectors_at: [layout[0], layout[2]] };
        sample_blocks(&blocks_in, &fast_time, blocks, self.output, slerp, simd);
        let morph_hints = &mut self.cursor.state[layout[3]..];
        morph_weights_into(clip, t, morph_hints, self.morph_output);
        Ok(())
    }
}

/// `clip`'s morph weights at `t` into `out` (the clip's rest weights where
/// no track plays), each track's key search starting from its hint.
fn morph_weights_into(clip: &RuntimeClip, t: f64, hints: &mut [u32], out: &mut [f32]) {
    out.copy_from_slice(clip.rest_morph_weights());
    sample_morph_tracks(&clip.clip().morph_tracks, t, hints, out);
}

/// Samples blocks `range` at `time` into `output` (blocks of four joints,
/// two per operation), by slerp or nlerp, with the instructions `simd`
/// names.
fn sample_blocks(
    blocks: &nlerp8::Blocks,
    time: &FastTime,
    range: Range<usize>,
    output: &mut [Transform],
    slerp: bool,
    simd: Simd,
) {
    match simd {
        // Checked again here (a cached flag): whoever names `Avx2` on a CPU
        // without it gets the portable code, never an illegal instruction.
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the CPU has AVX2 and FMA. (Compiled with AVX-512's
        // registers too, the sampler measured no faster by nlerp and 1.09x
        // slower by slerp.)
        Simd::Avx2 | Simd::Avx512 if Simd::avx2_available() => unsafe {
            sample_blocks_avx2(blocks, time, range, output, slerp)
        },
        _ => sample_blocks_in::<Portable>(blocks, time, range, output, slerp),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn sample_blocks_avx2(
    blocks: &nlerp8::Blocks,
    time: &FastTime,
    range: Range<usize>,
    output: &mut [Transform],
    slerp: bool,
) {
    sample_blocks_in::<crate::anim::lanes8::Avx2>(blocks, time, range, output, slerp);
}

#[inline(always)]
fn sample_blocks_in<F: Lanes8>(
    blocks: &nlerp8::Blocks,
    time: &FastTime,
    range: Range<usize>,
    output: &mut [Transform],
    slerp: bool,
) {
    if slerp {
        slerp8::sample_exact::<F>(blocks, time, range, output);
    } else {
        nlerp8::sample_pairs::<F>(blocks, time, range, output);
    }
}

/// The sampled time as the eight-lane paths read it: exact (slerp's f64
/// ratios), rounded to f32 (nlerp's ratios), and the f32 values just below
/// and above it, with which f32 comparisons against key times decide
/// exactly as f64 ones (so STEP keys and clamping switch at the same
/// instant on both paths).
struct FastTime {
    /// The time itself.
    exact: f64,
    nearest: f32,
    down: f32,
    up: f32,
}

impl FastTime {
    fn new(t: f64) -> Self {
        let F32Around { nearest, down, up } = f32_around(t);
        FastTime { exact: t, nearest, down, up }
    }
}

#[cfg(test)]
mod tests;
