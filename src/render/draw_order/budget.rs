//! A frame's detail budget ([`DetailBudget`]): the most vertices its
//! characters may skin and the most triangles its passes may draw of
//! them (a limit given, and one the GPU frame budget sets). Levels are
//! chosen within half a pixel; a camera flown close
//! into a huge crowd then draws thousands of full meshes, and the frame's
//! skinned output (a vertex each) could outgrow the device's memory or the
//! frame its time, and a huge crowd framed whole still sends tens of
//! millions of triangles through rasterisers that draw a few billion a
//! second. Over the budget, the draw order raises the pixel error every
//! character is chosen within, the same for all, so each keeps its share
//! of the detail (as a global LOD bias does) and the near ones stay
//! finest: the least error (within 1.1 %) whose levels fit every limit.
//! Where even the coarsest levels do not fit, every character draws its
//! coarsest. A frame keeps the last frame's error while it fits and is
//! within [`KEEP`] of the least that does: a crowd at the budget's edge
//! would otherwise move it a little every frame, and characters at a
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

/// The most a frame's characters may cost at their levels, and what one
/// character costs at each level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DetailBudget {
    /// Vertices skinned: every character some pass draws (the camera's
    /// or a shadow cascade's) is skinned once.
    pub vertices: LevelLimit,
    /// Triangles drawn, every pass together (`per_level`: one character
    /// in one pass).
    pub triangles: LevelLimit,
    /// The most triangles, counted as `triangles` are, that the GPU frame
    /// budget allows this frame (`render::gpu_frame_budget`); `u64::MAX`:
    /// none. Apart from `triangles.most` so a frame can say which acted.
    pub gpu_frame_triangles: u64,
    /// The passes that draw what the camera sees (1, or 2 with a depth
    /// prepass).
    pub camera_passes: u32,
    /// Whether the frame draws the shadow cascades: each draws the
    /// characters whose cascade mask names it.
    pub cascades: bool,
}

/// The most of one count, and what one character counts at each level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LevelLimit {
    /// The most the characters may count together.
    pub most: u64,
    /// What one character counts at each level.
    pub per_level: [u64; DETAIL_LEVELS],
}

impl LevelLimit {
    /// No limit.
    pub const NONE: LevelLimit = LevelLimit { most: u64::MAX, per_level: [0; DETAIL_LEVELS] };
}

impl DetailBudget {
    /// At most `most` vertices skinned, `per_level` a character; triangles
    /// unlimited (one pass, no cascades).
    pub fn vertices(most: u64, per_level: [u64; DETAIL_LEVELS]) -> DetailBudget {
        DetailBudget {
            vertices: LevelLimit { most, per_level },
            triangles: LevelLimit::NONE,
            gpu_frame_triangles: u64::MAX,
            camera_passes: 1,
            cascades: false,
        }
    }

    /// The vertices and triangles of a character in `bucket` (see
    /// `DrawOrder::buckets`) drawn into the cascades of `mask` at `level`,
    /// added to `sum`.
    fn add(&self, sum: &mut [u64; 2], bucket: u8, mask: u8, level: usize) {
        if bucket == HIDDEN {
            return;
        }
        sum[0] = sum[0].saturating_add(self.vertices.per_level[level]);
        // Even buckets are the camera's; odd ones only cast shadows.
        let camera = if bucket & 1 == 0 { self.camera_passes } else { 0 };
        let passes = camera + if self.cascades { mask.count_ones() } else { 0 };
        sum[1] = sum[1].saturating_add(self.triangles.per_level[level].saturating_mul(u64::from(passes)));
    }

    /// Whether `sum` (vertices, triangles) is within every limit.
    fn holds(&self, sum: [u64; 2]) -> bool {
        !self.over(sum).any()
    }

    /// The limits `sum` (vertices, triangles) is over.
    fn over(&self, [vertices, triangles]: [u64; 2]) -> OverBudget {
        OverBudget {
            vertices: vertices > self.vertices.most,
            triangles: triangles > self.triangles.most,
            gpu_frame: triangles > self.gpu_frame_triangles,
        }
    }
}

/// Which of a budget's limits a frame's levels within half a pixel were
/// over (where even the coarsest were over a limit, those they were over).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OverBudget {
    /// The vertices skinned.
    pub vertices: bool,
    /// The triangles the passes draw.
    pub triangles: bool,
    /// The triangles the GPU frame budget allows.
    pub gpu_frame: bool,
}

impl OverBudget {
    /// Over any limit.
    pub fn any(self) -> bool {
        self.vertices || self.triangles || self.gpu_frame
    }
}

impl DrawOrder {
    /// The pixel error within which the drawn characters' levels fit
    /// `budget` ([`PIXEL_ERROR`] when they already do; infinite when not
    /// even the coarsest do; the last frame's, `self.pixel_error`, while
    /// it fits and is within [`KEEP`] of the least that does), after
    /// `choose` set their buckets at [`PIXEL_ERROR`], with the buckets set
    /// at that error; and the limits the levels within [`PIXEL_ERROR`]
    /// were over (with an infinite error, those the coarsest are over).
    pub(super) fn fit_budget(
        &mut self,
        view: &LevelView,
        error: &[f32; DETAIL_LEVELS],
        budget: &DetailBudget,
    ) -> (f32, OverBudget) {
        let masks = &self.cascade_masks;
        let [vertices, triangles] = chunked::sum_over_chunks(&self.buckets, |first, buckets| {
            let mut sum = [0; 2];
            for (&b, &mask) in buckets.iter().zip(&masks[first..]) {
                budget.add(&mut sum, b, mask, usize::from(b / 2).min(DETAIL_LEVELS - 1));
            }
            sum
        });
        let mut over = budget.over([vertices, triangles]);
        if !over.any() {
            return (PIXEL_ERROR, over);
        }
        let fits = |pixel_error: f32| budget.holds(self.costs_at(view, error, budget, pixel_error));
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
            // Named by the limits even the coarsest levels are over.
            over = budget.over(self.costs_at(view, error, budget, f32::MAX));
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
        (pixel_error, over)
    }

    /// The vertices and triangles the characters `choose` drew would count
    /// at the levels chosen within `pixel_error`.
    fn costs_at(
        &self,
        view: &LevelView,
        error: &[f32; DETAIL_LEVELS],
        budget: &DetailBudget,
        pixel_error: f32,
    ) -> [u64; 2] {
        let (buckets, masks) = (&self.buckets, &self.cascade_masks);
        chunked::sum_over_chunks(&self.spheres, |first, spheres| {
            let mut sum = [0; 2];
            for ((sphere, &bucket), &mask) in spheres.iter().zip(&buckets[first..]).zip(&masks[first..]) {
                if bucket != HIDDEN {
                    let level = level_for(view, sphere, error, pixel_error);
                    budget.add(&mut sum, bucket, mask, usize::from(level));
                }
            }
            sum
        })
    }
}
