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
//! `cascade_order`. Of those, a cascade keeps only the casters whose
//! shadows may fall on the receivers that read it (`CascadeSlices`): its
//! box, a sphere around its slice of the view, reaches far past the slice.
//! What the cascades draw is unchanged, pixel for pixel; only the misses
//! are left out.
//!
//! The boxes share the light's axes (`shadow::cascades` looks at every
//! slice from the same light), so a sphere is tested along them once: three
//! dot products, then two comparisons per axis and cascade, instead of six
//! plane distances per cascade.

use super::{DrawOrder, HIDDEN, LevelView, PlacedSphere, SharedOrder, clip};
use crate::render::chunked;
use crate::render::detail_levels::DETAIL_LEVELS;
use crate::render::shadow::{CASCADES, Cascades, SHADOW_SIZE};

/// Shadow-map texels around a receiver's own whose depths its shading may
/// read: mesh.frag's 3x3 taps one texel apart, each a 2x2 PCF, and one
/// more for the rasteriser's rounding of the caster's triangles.
const FILTER_TEXELS: f32 = 3.0;

/// The receivers that read each shadow cascade: mesh.frag shades a point
/// with the cascade whose slice of the view's depth holds it
/// (`Cascades::far`), so a caster drawn into cascade `k` matters only
/// where its shadow falls within the view and slice `k` (within the
/// texels the shading reads around a point). A character near the camera
/// then stays out of the far cascades, whose boxes (spheres around their
/// slices) reach far past them. The slices share the view's side planes
/// and differ in depth, so a sweep is clipped by the sides once and then
/// compared with each slice's depths.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CascadeSlices {
    /// Per cascade, the view depths its slice spans (the first from the
    /// near plane, the last to the far plane).
    depths: [[f32; 2]; CASCADES],
    /// Per cascade, how far across the light its receivers' reads reach:
    /// `FILTER_TEXELS` of its depth map's texels, in scene units.
    reads: [f32; CASCADES],
    /// The largest of `reads`, by which the side planes are pushed out.
    widest: f32,
}

impl CascadeSlices {
    /// The slices of `view` that `cascades` cover.
    pub fn new(view: &LevelView, cascades: &Cascades) -> CascadeSlices {
        let mut depths = [[view.near, view.far]; CASCADES];
        let mut reads = [f32::INFINITY; CASCADES];
        for (k, (depths, reads)) in depths.iter_mut().zip(&mut reads).enumerate() {
            if k > 0 {
                depths[0] = cascades.far[k - 1];
            }
            if k + 1 < CASCADES {
                depths[1] = cascades.far[k];
            }
            // The projection's x row is the light's axis over the box's
            // half width: a texel is 2 / SHADOW_SIZE of the row's inverse length.
            let m = &cascades.view_proj[k];
            let row = (m[(0, 0)] * m[(0, 0)] + m[(0, 1)] * m[(0, 1)] + m[(0, 2)] * m[(0, 2)]).sqrt();
            let texel = 2.0 / (row * SHADOW_SIZE as f32);
            // A degenerate box reads everywhere.
            if texel.is_finite() {
                *reads = FILTER_TEXELS * texel;
            }
        }
        let widest = reads.iter().copied().fold(0.0, f32::max);
        CascadeSlices { depths, reads, widest }
    }

    /// The cascades whose receivers a shadow swept from `c` to `end` (a
    /// sphere's centre, `radius`) may fall on in `view`, a bit each: the
    /// part of the sweep within the view's sides (pushed out by the
    /// radius and the widest reads) spans some depths, which must come
    /// within the radius and the cascade's reads of its slice. A broken
    /// sweep falls on every cascade.
    pub(super) fn fallen_on(&self, view: &LevelView, c: [f32; 3], end: [f32; 3], radius: f32) -> u8 {
        let (first, last) = clip(&view.planes[..4], c, end, radius + self.widest);
        if first > last {
            return 0;
        }
        let f = view.forward;
        let depth = |t: f32| (0..3).map(|i| f[i] * (c[i] + t * (end[i] - c[i]) - view.eye[i])).sum::<f32>();
        let (a, b) = (depth(first), depth(last));
        let (near, far) = (a.min(b), a.max(b));
        let mut mask = 0;
        for (k, (depths, reads)) in self.depths.iter().zip(&self.reads).enumerate() {
            let out = radius + reads;
            // NaN compares false: a broken sweep falls on it.
            let apart = far < depths[0] - out || near > depths[1] + out;
            mask |= u8::from(!apart) << k;
        }
        mask
    }
}

/// How far apart the cascades' axes may be (unit vectors, per component)
/// and still be taken as one light's: rounding leaves them about 1e-7
/// apart. Each box is widened by this much of its reach from the origin,
/// so the shared axes never leave out a caster its own would keep.
const SHARED_AXES: f32 = 1e-6;

/// The shadow cascades' boxes along the key light's axes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CascadeBoxes {
    /// The light's unit axes: across the depth maps (x, y) and along the
    /// light (z), the same for every cascade.
    axes: [[f32; 3]; 3],
    /// Per cascade and axis, the interval of a point's distance along the
    /// axis that lies inside the cascade's box.
    bounds: [[[f32; 2]; 3]; CASCADES],
}

impl CascadeBoxes {
    /// The boxes of `cascades`' orthographic projections; `None` when one
    /// is not orthographic, is degenerate, or looks along other axes than
    /// the first (then every cascade draws every caster).
    pub fn new(cascades: &Cascades) -> Option<CascadeBoxes> {
        let row = |m: &nalgebra::Matrix4<f32>, i: usize| [m[(i, 0)], m[(i, 1)], m[(i, 2)], m[(i, 3)]];
        // A projection row's unit axis and length; None when degenerate.
        let axis = |r: [f32; 4]| {
            let length = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]).sqrt();
            (length > 0.0 && length.is_finite())
                .then(|| ([r[0] / length, r[1] / length, r[2] / length], length))
        };
        let first = &cascades.view_proj[0];
        let axes = [axis(row(first, 0))?.0, axis(row(first, 1))?.0, axis(row(first, 2))?.0];
        let mut bounds = [[[0.0; 2]; 3]; CASCADES];
        for (m, bounds) in cascades.view_proj.iter().zip(&mut bounds) {
            if row(m, 3) != [0.0, 0.0, 0.0, 1.0] {
                return None;
            }
            // Clip x and y within -1..1, z within 0..1 (Vulkan).
            for (i, (bound, clip)) in
                bounds.iter_mut().zip([[-1.0, 1.0], [-1.0, 1.0], [0.0, 1.0]]).enumerate()
            {
                let r = row(m, i);
                let (unit, length) = axis(r)?;
                if (0..3).any(|c| (unit[c] - axes[i][c]).abs() > SHARED_AXES) {
                    return None;
                }
                // clip = length * distance + r[3].
                let (lo, hi) = ((clip[0] - r[3]) / length, (clip[1] - r[3]) / length);
                let widen = SHARED_AXES * (1.0 + lo.abs().max(hi.abs()));
                *bound = [lo - widen, hi + widen];
                if !bound.iter().all(|b| b.is_finite()) {
                    return None;
                }
            }
        }
        Some(CascadeBoxes { axes, bounds })
    }

    /// The cascades `sphere` reaches, a bit each (cascade `k` is bit `k`);
    /// every one for a non-finite sphere.
    pub(super) fn reached(&self, sphere: &PlacedSphere) -> u8 {
        let c = sphere.centre;
        let along = self.axes.map(|a| a[0] * c[0] + a[1] * c[1] + a[2] * c[2]);
        let r = sphere.radius;
        let mut mask = 0;
        for (k, bounds) in self.bounds.iter().enumerate() {
            // NaN compares false: a broken sphere is never outside.
            let outside = along.iter().zip(bounds).any(|(&d, b)| d + r < b[0] || d - r > b[1]);
            mask |= u8::from(!outside) << k;
        }
        mask
    }
}

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
