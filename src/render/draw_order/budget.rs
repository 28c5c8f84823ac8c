//! A frame's vertex budget ([`VertexBudget`]): the most vertices its
//! characters may skin. Levels are chosen within half a pixel; a camera
//! flown close into a huge crowd then draws thousands of full meshes, and
//! the frame's skinned output (a vertex each) could outgrow the device's
//! memory or the frame its time. Over the budget, the draw order raises
//! the pixel error every character is chosen within, the same for all, so
//! each keeps its share of the detail (as a global LOD bias does) and the
//! near ones stay finest: the least error (within 1.1 %) whose levels
//! fit. Where even the coarsest levels do not fit, every character draws
//! its coarsest. A frame keeps the last frame's error while it fits and
//! is within [`KEEP`] of the least that does: a crowd at the budget's
//! edge would otherwise move it a little every frame, and characters at a
//! level's threshold would flicker between two.

use super::{DETAIL_LEVELS, DrawOrder, HIDDEN, LevelView, PIXEL_ERROR, level_for};
use crate::render::chunked;

/// How much larger than the least error that fits the last frame's may
/// be and still be kept: 2^(1/8), about 9 %.
const KEEP: f32 = 1.090_507_7;

/// Bisection steps over the pixel error's exponent: from 2^-1 to 2^128 (as
/// far as an `f32` goes), halving 129 octaves 13 times leaves 1/63 of one
/// (the error found is at most 1.1 % over the least that fits).
const STEPS: u32 = 13;

/// The most vertices a frame's characters may skin, and what one
/// character skins at each level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VertexBudget {
    /// Vertices the drawn characters may skin together.
    pub most: u64,
    /// Vertices one character skins at each level.
    pub per_level: [u64; DETAIL_LEVELS],
}

impl DrawOrder {
    /// The pixel error within which the drawn characters' levels fit
    /// `budget` ([`PIXEL_ERROR`] when they already do; infinite when not
    /// even the coarsest do; the last frame's, `self.pixel_error`, while
    /// it fits and is within [`KEEP`] of the least that does), after
    /// `choose` set their buckets at [`PIXEL_ERROR`], with the buckets set
    /// at that error.
    pub(super) fn fit_budget(
        &mut self,
        view: &LevelView,
        error: &[f32; DETAIL_LEVELS],
        budget: &VertexBudget,
    ) -> f32 {
        let drawn = |_, buckets: &[u8]| {
            let level = |b: u8| budget.per_level[usize::from(b / 2).min(DETAIL_LEVELS - 1)];
            buckets.iter().filter(|&&b| b != HIDDEN).map(|&b| level(b)).fold(0u64, u64::saturating_add)
        };
        if chunked::sum_over_chunks(&self.buckets, drawn) <= budget.most {
            return PIXEL_ERROR;
        }
        let fits = |pixel_error: f32| self.vertices_at(view, error, budget, pixel_error) <= budget.most;
        let last = self.pixel_error;
        let keep =
            last > PIXEL_ERROR && last.is_finite() && fits(last) && !fits((last / KEEP).max(PIXEL_ERROR));
        let pixel_error = if keep {
            last
        } else if fits(f32::MAX) {
            // Bisecting the exponent: lo never fits, hi always does.
            let (mut lo, mut hi) = (PIXEL_ERROR.log2(), f32::MAX.log2());
            for _ in 0..STEPS {
                let mid = 0.5 * (lo + hi);
                if fits(mid.exp2()) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            hi.exp2().min(f32::MAX)
        } else {
            f32::INFINITY
        };
        let spheres = &self.spheres;
        chunked::for_each_chunk(&mut self.buckets, |first, buckets| {
            for (bucket, sphere) in buckets.iter_mut().zip(&spheres[first..]) {
                if *bucket != HIDDEN {
                    // Seen by the camera or only by the light, as chosen.
                    *bucket = 2 * level_for(view, sphere, error, pixel_error) + (*bucket & 1);
                }
            }
        });
        pixel_error
    }

    /// Vertices the characters `choose` drew would skin at the levels
    /// chosen within `pixel_error`.
    fn vertices_at(
        &self,
        view: &LevelView,
        error: &[f32; DETAIL_LEVELS],
        budget: &VertexBudget,
        pixel_error: f32,
    ) -> u64 {
        let buckets = &self.buckets;
        chunked::sum_over_chunks(&self.spheres, |first, spheres| {
            let mut sum = 0u64;
            for (sphere, &bucket) in spheres.iter().zip(&buckets[first..]) {
                if bucket != HIDDEN {
                    let level = level_for(view, sphere, error, pixel_error);
                    sum = sum.saturating_add(budget.per_level[usize::from(level)]);
                }
            }
            sum
        })
    }
}
