//! What an evaluation writes and reads back within one update, then
//! forgets: each clip's sampled pose before the blend, a layer's pose
//! before it is laid over, and the model matrices of a pose batch and of
//! an output that keeps few. One set per thread, reused
//! by every character the thread updates, instead of one per character: a
//! crowd's characters keep only what outlives an update (a tenth of what
//! they kept), and these buffers stay in the thread's cache from one
//! character to the next.
//!
//! Buffers grow to the largest rig and blend a thread has seen and keep
//! their capacity, so a warm thread never allocates here.

use super::output::ModelScratch;
use crate::anim::hierarchy::batch::BatchScratch;
use crate::anim::{Pose, Transform};
use std::cell::RefCell;

/// The per-thread buffers (see the module documentation).
#[derive(Debug, Default)]
pub(super) struct Scratch {
    /// The clips sampled for a blend.
    pub blend: BlendPoses,
    /// A layer's blended pose (see [`fit`]).
    pub layer: Pose,
    /// The model matrices of a pose batch (see `system`).
    pub batch: BatchScratch,
    /// The model matrices and palettes of an output that keeps few (see `output`).
    pub models: ModelScratch,
}

/// One pose per clip sampled for a blend, in blend order.
#[derive(Debug, Default)]
pub(super) struct BlendPoses(Vec<Pose>);

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's buffers. Not reentrant by design (an
/// evaluation borrows them once at a time); a nested call gets fresh
/// buffers rather than a panic.
pub(super) fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut scratch) => f(&mut scratch),
        Err(_) => f(&mut Scratch::default()),
    })
}

/// `pose` holding `joints` transforms and `weights` morph weights (values
/// unspecified: every user overwrites them).
pub(super) fn fit(pose: &mut Pose, joints: usize, weights: usize) -> &mut Pose {
    pose.locals.resize(joints, Transform::IDENTITY);
    pose.morph_weights.resize(weights, 0.0);
    pose
}

impl BlendPoses {
    /// `count` poses of `joints` transforms and `weights` morph weights.
    pub fn get(&mut self, count: usize, joints: usize, weights: usize) -> &mut [Pose] {
        if self.0.len() < count {
            self.0.resize_with(count, Pose::default);
        }
        let poses = &mut self.0[..count];
        for pose in poses.iter_mut() {
            fit(pose, joints, weights);
        }
        poses
    }
}
