//! What sampling a compressed clip costs beside the runtime layout's nlerp
//! (issue 23's compression target (c): no slower): both played at 60 Hz
//! from the clip's start, looping, taking turns in short runs timed by the
//! thread's CPU time (see [`cpu_time`](crate::cpu_time)), the median run of
//! each. A run lasts at least 20 µs however small the clip: reading the
//! thread's clock is a system call (170 ns on a 2-core Intel Xeon VM),
//! which added a tenth to each way's time in runs of 60 frames of a small
//! clip (MorphStressTest's, 25-35 ns a frame) and drew their ratio towards
//! one. A measurement, so it varies from run to run on a loaded machine
//! (by about a tenth on the 2-core CI VM); never asserted on.
//!
//! Both are also timed sampling one time every frame (the clip's middle),
//! where no key is crossed: interpolation alone. The difference is what
//! crossing keys costs each frame at 60 Hz (the compressed sampler decodes
//! its next keys, the runtime layout's cursor moves to a state decoded when
//! the clip was built), which says where a slower clip loses.

use super::{CompressedClip, CompressedCursor, CompressedSampleJob};
use crate::anim::{
    Clip, ClipCursor, JobError, RotationBlend, RuntimeClip, SampleClipJob, Skeleton, Transform,
};
use serde::Serialize;
use std::sync::Arc;

/// Turns each way takes.
pub(super) const ROUNDS: usize = 101;

/// CPU time a turn lasts at least, and the frames a turn plays at least
/// and at most (a second of playback, and a few milliseconds of a clip of
/// hundreds of joints).
const TURN_NS: f64 = 20_000.0;
const FRAMES: std::ops::RangeInclusive<usize> = 60..=2_000;

/// Nanoseconds per sampled frame, compressed and from the runtime layout,
/// at 60 Hz playback and at one time (between keys).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SamplingCost {
    /// `CompressedSampleJob` on the compressed clip.
    pub compressed_ns: f64,
    /// `SampleClipJob` nlerp on the clip's `RuntimeClip` (what characters
    /// play uncompressed with `--nlerp`).
    pub runtime_nlerp_ns: f64,
    /// `compressed_ns` sampling the clip's middle every frame: no key crossed.
    pub compressed_between_keys_ns: f64,
    /// `runtime_nlerp_ns` sampling the clip's middle every frame.
    pub runtime_between_keys_ns: f64,
}

impl SamplingCost {
    /// Compressed over runtime nlerp: at most 1 meets the target.
    pub fn ratio(&self) -> f64 {
        self.compressed_ns / self.runtime_nlerp_ns
    }

    /// Compressed over runtime nlerp where no key is crossed.
    pub fn between_keys_ratio(&self) -> f64 {
        self.compressed_between_keys_ns / self.runtime_between_keys_ns
    }

    /// What crossing keys adds to a frame at 60 Hz, compressed and in the
    /// runtime layout (playback less the time between keys; a measurement,
    /// so slightly negative where crossings cost next to nothing).
    pub fn crossing_ns(&self) -> [f64; 2] {
        [
            self.compressed_ns - self.compressed_between_keys_ns,
            self.runtime_nlerp_ns - self.runtime_between_keys_ns,
        ]
    }
}

/// Times `compressed` (compressed from `clip` for `skeleton`) against
/// `clip`'s runtime layout.
pub fn sampling_cost(
    clip: &Clip,
    compressed: &CompressedClip,
    skeleton: &Skeleton,
) -> Result<SamplingCost, JobError> {
    // Morph weights at zero: only how long sampling takes matters here.
    let rest_weights = vec![0.0; compressed.morph_slots];
    let rest = skeleton.rest();
    let runtime = RuntimeClip::new(Arc::new(clip.clone()), rest, &rest_weights)?;
    // Ways: compressed and runtime at 60 Hz, then the same at one time.
    // Each keeps its own cursor.
    let mut compressed_cursors = [0; 2].map(|_| CompressedCursor::new(compressed));
    let mut runtime_cursors = [0; 2].map(|_| ClipCursor::new(&runtime));
    let mut output = vec![Transform::IDENTITY; rest.len()];
    let mut weights = rest_weights.clone();
    let duration = f64::from(clip.duration);
    let mut times = [0.0, 0.0, duration / 2.0, duration / 2.0];
    let mut failed = None;
    let mut frame = |way: usize| {
        let time = times[way];
        // Even ways compressed, odd ones the runtime layout.
        let sampled = if way.is_multiple_of(2) {
            CompressedSampleJob {
                clip: compressed,
                time,
                rest,
                rest_morph_weights: &rest_weights,
                cursor: &mut compressed_cursors[way / 2],
                output: &mut output,
                morph_output: &mut weights,
            }
            .run()
        } else {
            SampleClipJob {
                clip: &runtime,
                time,
                rotation_blend: RotationBlend::Nlerp,
                cursor: &mut runtime_cursors[way / 2],
                output: &mut output,
                morph_output: &mut weights,
            }
            .run()
        };
        if let Err(e) = sampled {
            failed.get_or_insert(e);
        }
        std::hint::black_box(&output);
        if way < 2 {
            times[way] += 1.0 / 60.0;
            if times[way] > duration {
                times[way] -= duration;
            }
        }
    };
    // A first turn of each way (which also warms the caches) sizes the
    // turns by the fastest of them.
    let first = crate::cpu_time::median_ns_taking_turns(4, 1, *FRAMES.start(), &mut frame);
    let fastest = first.iter().copied().fold(f64::INFINITY, f64::min).max(1.0);
    let frames = ((TURN_NS / fastest).ceil() as usize).clamp(*FRAMES.start(), *FRAMES.end());
    let ns = crate::cpu_time::median_ns_taking_turns(4, ROUNDS, frames, frame);
    match failed {
        Some(e) => Err(e),
        None => Ok(SamplingCost {
            compressed_ns: ns[0],
            runtime_nlerp_ns: ns[1],
            compressed_between_keys_ns: ns[2],
            runtime_between_keys_ns: ns[3],
        }),
    }
}
