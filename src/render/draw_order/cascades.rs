//! Each shadow cascade's own casters.
//!
//! The cascades split the camera's view by depth: the near ones cover a
//! small slice of it, the last one most of the crowd. Drawn with the
//! `ByLight` ranges, every drawn character went into all four depth maps,
//! though a caster whose sphere misses a cascade's box (its orthographic
//! volume, seen from the key light) leaves no fragment in it. So each
//! cascade gets its own instances: per run and level, the characters that
//! reach its box, counting-sorted on the threads posing the crowd like the
//! order itself (`DrawOrder::sort`), into the cascade's section of
//! `cascade_order`. What the cascades draw is unchanged, pixel for pixel;
//! only the misses are left out.

use super::{DrawOrder, HIDDEN, SharedOrder};
use crate::render::chunked;
use crate::render::detail_levels::DETAIL_LEVELS;
use crate::render::shadow::CASCADES;

impl DrawOrder {
    /// Sorts each cascade's characters (those some pass draws whose
    /// spheres reach its box: `cascade_masks`) by level within each run,
    /// into `cascade_order`, after `sort` has sorted the order.
    pub(super) fn sort_cascades(&mut self) {
        let (buckets, masks) = (&self.buckets, &self.cascade_masks);
        let range = |(first, count): (u32, u32)| first as usize..(first + count) as usize;
        // Each drawn character's level and cascades (none when hidden).
        let reached = |c: usize| match buckets[c] {
            HIDDEN => (0, 0),
            bucket => (usize::from(bucket / 2), masks[c]),
        };
        chunked::for_each_task(&mut self.pieces, buckets.len(), |piece| {
            piece.cascade_slots = [[0; DETAIL_LEVELS]; CASCADES];
            for c in range(piece.characters) {
                let (level, mask) = reached(c);
                for (k, slots) in piece.cascade_slots.iter_mut().enumerate() {
                    slots[level] += u32::from(mask >> k & 1);
                }
            }
        });
        // Instances of cascade k's section start past the order.
        let (sections, characters) = (self.order.len() as u32, buckets.len() as u32);
        for run in &mut self.runs {
            let run_pieces = &mut self.pieces[range(run.pieces)];
            for k in 0..CASCADES {
                let mut next = [0u32; DETAIL_LEVELS];
                let mut start = sections + k as u32 * characters + run.first;
                for (level, next) in next.iter_mut().enumerate() {
                    let count = run_pieces.iter().map(|p| p.cascade_slots[k][level]).sum();
                    run.cascades[k][level] = (start, count);
                    *next = start;
                    start += count;
                }
                // Each piece's characters of a level follow the earlier pieces'.
                for piece in run_pieces.iter_mut() {
                    for (at, next) in piece.cascade_slots[k].iter_mut().zip(&mut next) {
                        (*at, *next) = (*next, *next + *at);
                    }
                }
            }
        }
        // Within a cascade's section the runs are apart, and so are the
        // levels within a run and the pieces' shares within a level (as
        // in `sort`): no two pieces write one entry.
        let order = SharedOrder(self.cascade_order.as_mut_ptr(), self.cascade_order.len());
        chunked::for_each_task(&mut self.pieces, buckets.len(), |piece| {
            for c in range(piece.characters) {
                let (level, mask) = reached(c);
                for (k, slots) in piece.cascade_slots.iter_mut().enumerate() {
                    if mask >> k & 1 != 0 {
                        let at = &mut slots[level];
                        order.write((*at - sections) as usize, c as u32);
                        *at += 1;
                    }
                }
            }
        });
    }
}
