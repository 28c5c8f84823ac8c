//! A character's sampling state: one cursor per distinct clip its
//! controller plays (not one per clip node: a clip used by several states
//! or blend trees shares its cursor), of the kind the rig samples, runtime
//! clips ([`ClipCursor`]) or compressed clips ([`CompressedCursor`]).
//!
//! Cursors are only hints (results never depend on them), so sharing one is
//! always correct; when one clip is sampled at two different times in one
//! update (two nodes of the same clip at different phases), the second
//! sample rewinds the cursor, which costs time, not accuracy. A result must
//! never depend on a cursor's state; nothing here allocates after `new`.

use crate::anim::Rig;
use crate::anim::compression::{CompressedCursor, CompressedSampleJob};
use crate::anim::job::check_len;
use crate::anim::prefetch::Blocks;
use crate::anim::{ClipCursor, JobError, RotationBlend, SampleClipJob, Transform, sample_morph_weights};
use std::ops::Range;
use std::sync::Arc;

/// Every distinct clip's cursor, by slot, of the kind the rig samples (a
/// rig's clips are all compressed or none are).
#[derive(Debug, Clone)]
enum Cursors {
    Runtime(Vec<ClipCursor>),
    /// Side by side in one array, not boxed one by one (a box per cursor
    /// kept the runtime cursors' array short): a crowd's update found each
    /// box's first line out of cache, a load that took 7 % of a compressed
    /// crowd's time on a Zen 3 VM. In one array, loaded first (see
    /// `blocks`), 10,000 built-in characters update 0.91x the time
    /// (`--compressed-clips --nlerp`, one thread).
    Compressed(Vec<CompressedCursor>),
}

/// One cursor per distinct clip a character plays (see the module documentation).
#[derive(Debug, Clone)]
pub(crate) struct ClipCursors {
    /// Index into `cursors` of each rig clip (`u32::MAX`: not played);
    /// the controller's, shared by its characters (see `slots`).
    slot: Arc<[u32]>,
    cursors: Cursors,
}

impl ClipCursors {
    /// Names every cursor for a prefetch (see
    /// [`prefetch`](crate::anim::prefetch); `slot` is the controller's,
    /// in cache for any character): compressed cursors themselves in
    /// `cursors`, what they point to in `keys`. A sample reads a cursor
    /// before the keys it points to, so the caller has those loaded first.
    /// Runtime cursors go with their keys: loaded first too, they measured
    /// 1.03-1.07x slower under the LOD mix (slerp), no faster all near.
    pub(crate) fn blocks(&self, cursors: &mut Blocks, keys: &mut Blocks) {
        match &self.cursors {
            Cursors::Runtime(all) => {
                keys.slice(all);
                all.iter().for_each(|c| c.blocks(keys));
            }
            Cursors::Compressed(all) => {
                cursors.slice(all);
                all.iter().for_each(|c| c.blocks(keys));
            }
        }
    }

    /// Each of `clip_count` rig clips' cursor: its index among the
    /// distinct clips of `clips` (rig clip indices, repeats allowed; one
    /// past `clip_count` gets none) in order of first appearance,
    /// `u32::MAX` for a clip not named. The same for every character of a
    /// controller, so the controller keeps it.
    pub(crate) fn slots(clips: impl IntoIterator<Item = u32>, clip_count: usize) -> Arc<[u32]> {
        let mut slot = vec![u32::MAX; clip_count];
        let mut distinct = 0;
        for clip in clips {
            if let Some(s) = slot.get_mut(clip as usize).filter(|s| **s == u32::MAX) {
                *s = distinct;
                distinct += 1;
            }
        }
        slot.into()
    }

    /// A cursor, of the kind `rig` samples, for each clip `slot` (from
    /// `slots`) gives one.
    pub(crate) fn new(rig: &Rig, slot: &Arc<[u32]>) -> Self {
        let mut clips: Vec<(u32, usize)> =
            slot.iter().enumerate().filter(|(_, s)| **s != u32::MAX).map(|(c, &s)| (s, c)).collect();
        clips.sort_unstable();
        let clips = clips.into_iter().map(|(_, c)| c);
        let cursors = match rig.samples_compressed_clips() {
            true => Cursors::Compressed(
                clips.filter_map(|c| rig.compressed_clip(c).map(CompressedCursor::new)).collect(),
            ),
            false => Cursors::Runtime(clips.map(|c| ClipCursor::new(rig.runtime_clip(c))).collect()),
        };
        ClipCursors { slot: slot.clone(), cursors }
    }

    /// Samples rig clip `clip` at `time` into `out` (joints and weights
    /// without a track take the rig's rest values), at least the joints in
    /// `joints` (others may keep what they held). Runtime clips
    /// interpolate LINEAR rotations as `rotation_blend` says; compressed
    /// clips always nlerp between their stored keys, the ratio corrected to
    /// follow slerp on slerped tracks (what the compressor measured its
    /// bound with, against the exact slerp).
    #[allow(clippy::too_many_arguments)] // A sampling job's fields, and the clip's slot.
    pub(crate) fn sample(
        &mut self,
        rig: &Rig,
        clip: u32,
        time: f64,
        rotation_blend: RotationBlend,
        joints: Range<usize>,
        locals: &mut [Transform],
        morph_weights: &mut [f32],
    ) -> Result<(), JobError> {
        let c = clip as usize;
        let slot = self.slot.get(c).copied().unwrap_or(u32::MAX) as usize;
        let no_cursor = || JobError::new(format!("sample: clip {clip} has no cursor"));
        match (&mut self.cursors, rig.compressed_clip(c)) {
            (Cursors::Runtime(cursors), None) => SampleClipJob {
                clip: rig.runtime_clip(c),
                time,
                rotation_blend,
                cursor: cursors.get_mut(slot).ok_or_else(no_cursor)?,
                output: locals,
                morph_output: morph_weights,
            }
            .run_joints(joints),
            // Compressed clips sample every joint (a superset of `joints`).
            (Cursors::Compressed(cursors), Some(compressed)) => CompressedSampleJob {
                clip: compressed,
                time,
                rest: rig.skeleton.rest(),
                rest_morph_weights: &rig.rest_morph_weights,
                cursor: cursors.get_mut(slot).ok_or_else(no_cursor)?,
                output: locals,
                morph_output: morph_weights,
            }
            .run(),
            _ => Err(JobError::new("sample: cursors made for a rig with other clips")),
        }
    }

    /// Samples rig clip `clip`'s morph weights alone at `time` into `out`
    /// (the rig's rest weights where no track plays): what `sample` writes
    /// into its morph weights, for a character whose joints are posed on
    /// the GPU. A runtime clip's cursor keeps its key hints; a compressed
    /// clip's weights are searched for.
    pub(crate) fn sample_morph_weights(
        &mut self,
        rig: &Rig,
        clip: u32,
        time: f64,
        out: &mut [f32],
    ) -> Result<(), JobError> {
        let c = clip as usize;
        let slot = self.slot.get(c).copied().unwrap_or(u32::MAX) as usize;
        let no_cursor = || JobError::new(format!("sample morph weights: clip {clip} has no cursor"));
        match &mut self.cursors {
            Cursors::Runtime(cursors) => {
                let cursor = cursors.get_mut(slot).ok_or_else(no_cursor)?;
                cursor.sample_morph_weights(rig.runtime_clip(c), time, out)
            }
            Cursors::Compressed(cursors) => {
                cursors.get(slot).ok_or_else(no_cursor)?;
                check_len("sample morph weights: output", out.len(), rig.rest_morph_weights.len())?;
                sample_morph_weights(&rig.clips[c], time, &rig.rest_morph_weights, out);
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_model::test_model;

    #[test]
    fn slots_number_distinct_clips_in_order_of_first_appearance() {
        const NONE: u32 = u32::MAX;
        assert_eq!(&*ClipCursors::slots([3, 1, 3, 0, 1], 5), &[2, 1, NONE, 0, NONE]);
        // A clip past the count has no slot (the rig's clips are checked
        // against the controller's elsewhere).
        assert_eq!(&*ClipCursors::slots([7, 1], 2), &[NONE, 0]);
        assert_eq!(&*ClipCursors::slots([], 2), &[NONE, NONE]);
    }

    #[test]
    fn cursors_by_slot_sample_each_clip_as_its_own_cursor_does() {
        let model = test_model();
        let rig = &model.rig;
        // Clip 1 first: it takes cursor 0, clip 0 cursor 1.
        let slots = ClipCursors::slots([1, 0, 1], rig.clips.len());
        let mut cursors = ClipCursors::new(rig, &slots);
        assert!(matches!(&cursors.cursors, Cursors::Runtime(c) if c.len() == 2));
        let joints = rig.skeleton.len();
        let morphs = rig.rest_morph_weights.len();
        for clip in [0u32, 1] {
            let (mut locals, mut weights) = (vec![Transform::IDENTITY; joints], vec![0.0; morphs]);
            cursors
                .sample(rig, clip, 0.3, RotationBlend::Slerp, 0..joints, &mut locals, &mut weights)
                .unwrap();
            let (mut want, mut want_weights) = (vec![Transform::IDENTITY; joints], vec![0.0; morphs]);
            let mut own = ClipCursor::new(rig.runtime_clip(clip as usize));
            SampleClipJob {
                clip: rig.runtime_clip(clip as usize),
                time: 0.3,
                rotation_blend: RotationBlend::Slerp,
                cursor: &mut own,
                output: &mut want,
                morph_output: &mut want_weights,
            }
            .run()
            .unwrap();
            assert_eq!((locals, weights), (want, want_weights), "clip {clip}");
        }
    }
}
