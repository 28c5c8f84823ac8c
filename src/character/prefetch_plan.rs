//! Where one character's state lies in memory, named once: a crowd's
//! update starts loading the next character's state while the current one
//! computes (see [`prefetch`](crate::anim::prefetch)), and naming a few
//! runs of cache lines takes a dozen instructions where naming each of
//! some thirty arrays took over a thousand, a twelfth of a built-in
//! character's update. The runs are found once, when the character joins its system:
//! its arrays never move afterwards (a character never allocates after
//! `new`). A plan is a hint only: a stale one (a character replaced, its
//! joints moved to or from the GPU) loads the wrong lines, never changes a
//! result, and is made again when its key no longer fits.

use super::character::Character;
use crate::anim::prefetch::Ranges;

/// What a plan was made for (see [`Character::plan_key`]).
pub(super) type PlanKey = (usize, bool);

/// The runs of memory a character's update reads: those every update
/// reads, and those only an evaluation reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct PrefetchPlan {
    key: PlanKey,
    every_update: Ranges,
    evaluation: Ranges,
}

impl PrefetchPlan {
    /// The plan of the character with `key` (see [`Character::prefetch_plan`]).
    pub fn new(key: PlanKey, every_update: Ranges, evaluation: Ranges) -> Self {
        PrefetchPlan { key, every_update, evaluation }
    }

    /// Whether the plan was made for `character` as it is now.
    #[inline]
    pub fn fits(&self, character: &Character) -> bool {
        self.key == character.plan_key()
    }

    /// Starts loading what the next update reads: the evaluation's part
    /// too when it `evaluates`.
    #[inline]
    pub fn prefetch(&self, evaluates: bool) {
        self.every_update.prefetch();
        if evaluates {
            self.evaluation.prefetch();
        }
    }

    /// Cache lines the plan names: every update's, an evaluation's.
    #[cfg(test)]
    pub fn line_counts(&self) -> [usize; 2] {
        [self.every_update.line_count(), self.evaluation.line_count()]
    }
}
