//! The frame's draw order: which detail level each character draws, and
//! the instance order that lets one instanced draw per primitive and level
//! draw exactly the characters at that level.
//!
//! Each frame, every character's sphere (`GpuModel::bounds`, around its
//! rest and sampled poses, grown a little) is placed by its world matrix; a level's error
//! (`GpuModel::detail_error`) scaled by the character's size and projected
//! at the sphere's nearest depth gives the pixels it may be off by, and the
//! character draws the coarsest level within [`PIXEL_ERROR`]. Characters
//! are then counting-sorted by level within each run of characters that
//! share draws (`DrawItem::run`): the vertex shaders read
//! `draw_order[gl_InstanceIndex]` to find the character an instance draws,
//! so a level's draw is one contiguous instance range.
//!
//! A character whose sphere lies outside the camera's view is culled from
//! the camera's passes (the main pass and its depth prepass) but still
//! drawn, at its level, into the shadow cascades, which see what the
//! camera does not, as long as its shadow may fall into the view (its
//! sphere swept away from the key light reaches the view): within a
//! level, the visible characters come first and the culled ones right
//! after, so the camera's draw of a level is one range and the cascades'
//! draw another; each cascade then draws those of them whose spheres
//! reach its box (`cascades`). A character drawn by no pass (outside the
//! view, and its shadow too, or in no cascade's box, or no shadow pass)
//! is [`HIDDEN`]: sorted after every level, and not skinned either
//! (`render::skin_levels`). Plain CPU work, no allocation per frame;
//! placing, choosing and foreseeing run in chunks on the threads that pose
//! the crowd (`render::chunked`).

use super::camera::Camera;
use super::chunked;
use super::detail_levels::DETAIL_LEVELS;
use super::frame_settings::DrawDetail;
use super::shadow::{CASCADES, Cascades};
use crate::anim::{FramePoses, Sight};
pub use budget::{DetailBudget, LevelLimit, OverBudget};
pub use cascades::{CascadeBoxes, CascadeSlices};
use nalgebra::Matrix4;

/// The most a drawn level may depart from the full mesh, in pixels. Half
/// a pixel: a crowd of characters 10 pixels tall then covers within a few
/// percent of the pixels its full meshes cover (a whole pixel let thin
/// limbs lose a tenth of them; see tests/gpu/render_detail_levels.rs).
pub const PIXEL_ERROR: f32 = 0.5;

/// How far past the sphere around its rest and sampled poses an animated
/// character may reach (poses the samples missed): the sphere's radius is
/// scaled by this.
const BOUNDS_MARGIN: f32 = 1.25;

/// The bucket of a character no pass draws this frame.
pub const HIDDEN: u8 = u8::MAX;

/// Sort slots: a bucket's place in a run's order (the levels' visible and
/// culled, then the hidden).
const SLOTS: usize = 2 * DETAIL_LEVELS + 1;

/// The sort slot of a bucket: the hidden after every level.
fn slot(bucket: u8) -> usize {
    usize::from(bucket).min(SLOTS - 1)
}

/// What a level choice needs of the view: where the camera is, where it
/// looks, how many pixels one unit spans at unit depth, and the planes
/// bounding what it sees.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelView {
    /// Eye position.
    pub eye: [f32; 3],
    /// Unit view direction.
    pub forward: [f32; 3],
    /// Pixels per scene unit at a depth of one unit: `height / (2 tan(fov_y / 2))`.
    pub pixels_per_unit: f32,
    /// Near plane distance (the smallest depth a sphere counts at).
    pub near: f32,
    /// Far plane distance.
    pub far: f32,
    /// Where the key light's shadows fall (unit length, away from the
    /// light) when the frame draws shadow cascades (`with_shadows`).
    pub shadows: Option<[f32; 3]>,
    /// No receiver of shadows but the characters lies below this height
    /// (the scenery's lowest point; infinite without scenery): a shadow
    /// falls no lower than it or the lowest character
    /// (`with_receivers_above`).
    pub receivers_above: f32,
    /// The view's left, right, top, bottom, near and far planes, `[a, b,
    /// c, d]` with a unit normal pointing in: a point p is inside all when
    /// every `a px + b py + c pz + d >= 0`.
    pub planes: [[f32; 4]; 6],
    /// The shadow cascades' boxes when the frame draws the cascades
    /// (`with_cascades`): a caster is drawn into those its sphere reaches.
    /// Without them, into every cascade.
    pub cascades: Option<CascadeBoxes>,
    /// With the boxes, the receivers that read each cascade: a caster
    /// whose shadow cannot fall on them is not drawn into it either.
    pub slices: Option<CascadeSlices>,
}

impl LevelView {
    /// The view of `camera` on a target `height` pixels tall.
    pub fn new(camera: &Camera, height: u32) -> LevelView {
        let forward = (camera.target - camera.eye).normalize();
        LevelView {
            eye: [camera.eye.x, camera.eye.y, camera.eye.z],
            forward: [forward.x, forward.y, forward.z],
            pixels_per_unit: height as f32 / (2.0 * (camera.fov_y * 0.5).tan()),
            near: camera.near,
            far: camera.far,
            shadows: None,
            receivers_above: f32::INFINITY,
            planes: frustum_planes(&camera.view_proj()),
            cascades: None,
            slices: None,
        }
    }

    /// The view with the boxes of the frame's shadow cascades: each
    /// caster is drawn only into those its sphere reaches and whose
    /// receivers its shadow may fall on (`CascadeSlices`; into every
    /// cascade when their projections are not the orthographic ones of
    /// one light, `CascadeBoxes::new`).
    pub fn with_cascades(mut self, cascades: &Cascades) -> LevelView {
        self.cascades = CascadeBoxes::new(cascades);
        self.slices = self.cascades.is_some().then(|| CascadeSlices::new(&self, cascades));
        self
    }

    /// The view of a frame that draws the key light's shadow cascades,
    /// `to_light` pointing at the light.
    pub fn with_shadows(mut self, to_light: [f32; 3]) -> LevelView {
        let length =
            (to_light[0] * to_light[0] + to_light[1] * to_light[1] + to_light[2] * to_light[2]).sqrt();
        self.shadows = (length > 0.0 && length.is_finite()).then(|| to_light.map(|c| -c / length));
        self
    }

    /// The view with receivers of shadows other than the characters (the
    /// scenery) reaching no lower than `height`.
    pub fn with_receivers_above(mut self, height: f32) -> LevelView {
        self.receivers_above = height;
        self
    }

    /// Whether a sphere's shadow may fall into the view: some point of the
    /// sphere swept away from the light, as far as a shadow can land,
    /// lies within its radius of every plane at once (the sweep clipped
    /// by each plane pushed out by the radius; conservative near the
    /// view's edges and corners; false without shadows). A shadow can
    /// land within the view (any point of it lies within 2 far of the
    /// eye, for a field of view under 120 degrees) and no lower than
    /// `floor`, the lowest receiver. Non-finite spheres count as casting.
    fn casts_into(&self, sphere: &PlacedSphere, floor: f32) -> bool {
        let Some((c, end)) = self.sweep(sphere, floor) else { return false };
        let (first, last) = clip(&self.planes, c, end, sphere.radius);
        first <= last
    }

    /// The ends of a sphere's centre swept away from the light as far as
    /// its shadow can land (see `casts_into`); `None` without shadows.
    fn sweep(&self, sphere: &PlacedSphere, floor: f32) -> Option<([f32; 3], [f32; 3])> {
        let away = self.shadows?;
        let c = sphere.centre;
        let to_eye = (0..3).map(|i| (c[i] - self.eye[i]).powi(2)).sum::<f32>().sqrt();
        let mut reach = to_eye + 2.0 * self.far;
        if away[1] < 0.0 {
            // Past this the whole sphere has gone below every receiver.
            reach = reach.min(((c[1] + sphere.radius - floor) / -away[1]).max(0.0));
        }
        Some((c, [c[0] + away[0] * reach, c[1] + away[1] * reach, c[2] + away[2] * reach]))
    }

    /// The pixels the diameter of the sphere around a character's poses
    /// (without `BOUNDS_MARGIN`: about the height of a standing figure)
    /// spans seen from the eye, by its distance, not its depth (turning the
    /// camera changes no size); infinite with the eye inside the sphere,
    /// NaN for a broken one.
    fn pixels_across(&self, sphere: &PlacedSphere) -> f32 {
        let distance = (0..3).map(|i| (sphere.centre[i] - self.eye[i]).powi(2)).sum::<f32>().sqrt();
        if distance > sphere.radius {
            2.0 * sphere.radius / BOUNDS_MARGIN * self.pixels_per_unit / distance
        } else if distance.is_nan() || sphere.radius.is_nan() {
            f32::NAN
        } else {
            f32::INFINITY
        }
    }

    /// Whether a sphere reaches into the view (conservatively: a sphere
    /// near a corner may pass every plane yet miss the view; non-finite
    /// spheres count as inside).
    fn sees(&self, sphere: &PlacedSphere) -> bool {
        reaches(&self.planes, sphere)
    }

    /// The shadow cascades a sphere reaches, a bit each (cascade `k` is
    /// bit `k`; every bit without cascade boxes): those whose box it
    /// reaches and, with shadows and the cascades' slices, whose receivers
    /// its shadow may fall on (no lower than `floor`). Non-finite spheres
    /// reach every cascade.
    fn cascades_reached(&self, sphere: &PlacedSphere, floor: f32) -> u8 {
        let Some(boxes) = &self.cascades else { return EVERY_CASCADE };
        let mask = boxes.reached(sphere);
        match (&self.slices, self.sweep(sphere, floor)) {
            (Some(slices), Some((c, end))) if mask != 0 => {
                mask & slices.fallen_on(self, c, end, sphere.radius)
            }
            _ => mask,
        }
    }
}

/// Every cascade's bit.
const EVERY_CASCADE: u8 = (1 << CASCADES) - 1;

/// The part of the segment from `c` (0) to `end` (1) inside every one of
/// `planes` pushed out by `out`: `(first, last)`, empty (`first > last`)
/// when none is. A broken (NaN) segment keeps all of itself.
fn clip(planes: &[[f32; 4]], c: [f32; 3], end: [f32; 3], out: f32) -> (f32, f32) {
    // How far inside plane p (pushed out) a point is.
    let inside = |p: &[f32; 4], q: [f32; 3]| p[0] * q[0] + p[1] * q[1] + p[2] * q[2] + p[3] + out;
    let (mut first, mut last) = (0.0f32, 1.0f32);
    for p in planes {
        let (a, b) = (inside(p, c), inside(p, end));
        if a < 0.0 && b < 0.0 {
            return (1.0, 0.0);
        }
        // NaN compares false: a broken sphere keeps its whole sweep.
        if a < 0.0 {
            first = first.max(a / (a - b));
        } else if b < 0.0 {
            last = last.min(a / (a - b));
        }
    }
    (first, last)
}

/// Whether a sphere reaches into the volume bounded by `planes`
/// (conservatively: near a corner it may pass every plane yet miss the
/// volume; non-finite spheres count as inside).
fn reaches(planes: &[[f32; 4]; 6], sphere: &PlacedSphere) -> bool {
    let c = sphere.centre;
    let outside = |p: &[f32; 4]| p[0] * c[0] + p[1] * c[1] + p[2] * c[2] + p[3] < -sphere.radius;
    !planes.iter().any(outside)
}

/// The six planes of a Vulkan clip volume (`-w <= x, y <= w`, `0 <= z <=
/// w`) in the space `view_proj` maps from, normals unit length and
/// pointing in (Gribb and Hartmann's rows of the matrix).
fn frustum_planes(view_proj: &Matrix4<f32>) -> [[f32; 4]; 6] {
    let row = |i: usize| [view_proj[(i, 0)], view_proj[(i, 1)], view_proj[(i, 2)], view_proj[(i, 3)]];
    let (x, y, z, w) = (row(0), row(1), row(2), row(3));
    let combos = [(w, x, 1.0), (w, x, -1.0), (w, y, 1.0), (w, y, -1.0), (z, z, 0.0), (w, z, -1.0)];
    combos.map(|(a, b, s)| {
        let p: [f32; 4] = std::array::from_fn(|i| a[i] + s * b[i]);
        let length = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
        if length > 0.0 { p.map(|v| v / length) } else { [0.0, 0.0, 0.0, 1.0] }
    })
}

/// Which passes an instance range is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// The camera's passes: the characters in its view.
    ByCamera,
    /// The shadow cascades together: every character drawn, in view or not.
    ByLight,
    /// Shadow cascade `k`: the characters drawn whose spheres reach its box.
    ByCascade(usize),
}

/// A run of consecutive characters drawn by the same draw items, and
/// where each level's characters lie in the draw order this frame.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Run {
    first: u32,
    count: u32,
    /// Per level, `(first instance, instance count)` of its visible
    /// characters (the camera's passes).
    visible: [(u32, u32); DETAIL_LEVELS],
    /// Per level, the same with its culled characters after them (the
    /// shadow cascades).
    all: [(u32, u32); DETAIL_LEVELS],
    /// Per shadow cascade and level, `(first instance, instance count)` of
    /// its characters that reach the cascade's box (`cascades.rs`).
    cascades: [[(u32, u32); DETAIL_LEVELS]; CASCADES],
    /// Its pieces in `DrawOrder::pieces`: `(first, count)`.
    pieces: (u32, u32),
}

/// A character's bounding sphere in world space, and the largest scale of
/// its world matrix (which scales the levels' errors too).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct PlacedSphere {
    centre: [f32; 3],
    radius: f32,
    scale: f32,
}

impl PlacedSphere {
    /// The sphere `bounds` (`[x, y, z, radius]` in model space) placed by `world`.
    fn new(world: &Matrix4<f32>, bounds: [f32; 4]) -> PlacedSphere {
        let centre = world.transform_point(&nalgebra::Point3::new(bounds[0], bounds[1], bounds[2]));
        let squared = [0, 1, 2].map(|i| world.fixed_view::<3, 1>(0, i).norm_squared());
        // f32::max skips NaN, so a broken matrix is caught here: a NaN
        // scale keeps the full mesh (`level_for`). Every element reaches
        // the centre (the translation, and the projective row through w)
        // or a column's length.
        let finite = centre.iter().chain(&squared).all(|v| v.is_finite());
        let scale = if finite { squared[0].max(squared[1]).max(squared[2]).sqrt() } else { f32::NAN };
        PlacedSphere { centre: centre.into(), radius: scale * bounds[3] * BOUNDS_MARGIN, scale }
    }
}

/// Each frame's level per character and the instance order it implies.
#[derive(Debug, Clone)]
pub struct DrawOrder {
    /// Per character: where its bounding sphere lies this frame.
    spheres: Vec<PlacedSphere>,
    /// Per character: its sort bucket this frame, `2 * level` when the
    /// camera sees it, `2 * level + 1` when only the shadow cascades draw
    /// it, [`HIDDEN`] when no pass does.
    buckets: Vec<u8>,
    /// Per character: the shadow cascades its sphere reaches this frame,
    /// a bit each (`LevelView::cascades_reached`).
    cascade_masks: Vec<u8>,
    /// Whether this frame draws each cascade's own characters
    /// (`cascade_order`), else every drawn character into every cascade.
    per_cascade: bool,
    /// Per instance: the character it draws (the scene's characters, then
    /// one identity entry per character past them, e.g. the scenery).
    order: Vec<u32>,
    /// Per shadow cascade, a section of one entry per character: the
    /// instances of its draws, each run's at the run's place in the section
    /// (instance `order.len() + k * characters + i` is entry `k *
    /// characters + i`).
    cascade_order: Vec<u32>,
    runs: Vec<Run>,
    /// The counting sort's pieces: each run cut into chunks of up to
    /// `chunked::CHUNK` characters, sorted on the threads posing the crowd.
    pieces: Vec<SortPiece>,
    /// Characters the camera sees at each level this frame.
    counts: [u32; DETAIL_LEVELS],
    /// Characters culled from the camera's passes but drawn by the shadow
    /// cascades this frame, per level.
    culled: [u32; DETAIL_LEVELS],
    /// Characters no pass draws this frame.
    hidden: u32,
    /// The pixel error this frame's levels were chosen within.
    pixel_error: f32,
    /// Which of the budget's limits the levels within half a pixel were over.
    over_budget: OverBudget,
}

impl DrawOrder {
    /// An order for `characters` characters in `runs` (`(first, count)`,
    /// covering them, none overlapping another), with `extra` identity
    /// entries after them; every character starts at level 0.
    pub fn new(characters: u32, extra: u32, runs: &[(u32, u32)]) -> DrawOrder {
        let mut ranges: Vec<(u32, u32)> = runs.iter().map(|&(first, count)| (first, first + count)).collect();
        ranges.sort_unstable();
        // The sort writes each run's entries from several threads: runs
        // must not share one.
        let apart = ranges.windows(2).all(|w| w[0].1 <= w[1].0);
        assert!(
            apart && ranges.last().is_none_or(|r| r.1 <= characters),
            "runs apart, within the characters"
        );
        let mut pieces = Vec::new();
        let runs = runs
            .iter()
            .map(|&(first, count)| {
                let mut visible = [(first + count, 0); DETAIL_LEVELS];
                visible[0] = (first, count);
                let first_piece = pieces.len() as u32;
                let chunk = chunked::CHUNK as u32;
                pieces.extend((first..first + count).step_by(chunked::CHUNK).map(|f| SortPiece {
                    characters: (f, chunk.min(first + count - f)),
                    slots: [0; SLOTS],
                    cascade_slots: [[0; DETAIL_LEVELS]; CASCADES],
                }));
                Run {
                    first,
                    count,
                    visible,
                    all: visible,
                    cascades: [visible; CASCADES],
                    pieces: (first_piece, pieces.len() as u32 - first_piece),
                }
            })
            .collect();
        let mut counts = [0; DETAIL_LEVELS];
        counts[0] = characters;
        DrawOrder {
            spheres: vec![PlacedSphere::default(); characters as usize],
            buckets: vec![0; characters as usize],
            cascade_masks: vec![EVERY_CASCADE; characters as usize],
            per_cascade: false,
            order: (0..characters + extra).collect(),
            cascade_order: vec![0; CASCADES * characters as usize],
            runs,
            pieces,
            counts,
            culled: [0; DETAIL_LEVELS],
            hidden: 0,
            pixel_error: PIXEL_ERROR,
            over_budget: OverBudget::default(),
        }
    }

    /// Places character `c`'s sphere (`GpuModel::bounds`: `[x, y, z,
    /// radius]` in its model space) by its world matrix.
    pub fn place(&mut self, c: usize, world: &Matrix4<f32>, bounds: [f32; 4]) {
        if let Some(sphere) = self.spheres.get_mut(c) {
            *sphere = PlacedSphere::new(world, bounds);
        }
    }

    /// Places the first `count` characters of `poses` (at most as many as
    /// the order has) at their current places, each within `bounds` (see
    /// `place`), in chunks on the threads posing the crowd (`chunked`).
    pub fn place_poses(&mut self, poses: &dyn FramePoses, count: usize, bounds: [f32; 4]) {
        let count = count.min(poses.count()).min(self.spheres.len());
        let worlds = poses.worlds().filter(|w| w.len() >= count);
        chunked::for_each_chunk(&mut self.spheres[..count], |first, spheres| match worlds {
            // In place: a call per character returning its matrix costs
            // as much again as placing it.
            Some(worlds) => {
                for (sphere, world) in spheres.iter_mut().zip(&worlds[first..]) {
                    *sphere = PlacedSphere::new(world, bounds);
                }
            }
            None => {
                for (c, sphere) in (first..).zip(spheres) {
                    *sphere = PlacedSphere::new(&poses.world(c), bounds);
                }
            }
        });
    }

    /// Chooses every character's level for `view` from the model's level
    /// errors (scene units, per unit of world scale; never decreasing),
    /// culls those outside it from the camera's passes (`DrawDetail::Auto`;
    /// `Full` draws every full mesh everywhere), and sorts the order by
    /// level, then visible before culled, within each run. With the
    /// view's cascade boxes (`Auto`), each cascade draws only the
    /// characters that reach its box, and a culled character that reaches
    /// none is drawn by no pass.
    pub fn choose(&mut self, view: &LevelView, error: &[f32; DETAIL_LEVELS], detail: DrawDetail) {
        self.choose_within(view, error, detail, None);
    }

    /// [`choose`](Self::choose), and where the drawn characters' levels
    /// would skin more vertices or draw more triangles than `budget` allows
    /// (`DrawDetail::Auto`), coarser levels for all, chosen within a larger
    /// pixel error (`pixel_error`, `over_budget`; see `budget`).
    pub fn choose_within(
        &mut self,
        view: &LevelView,
        error: &[f32; DETAIL_LEVELS],
        detail: DrawDetail,
        budget: Option<&DetailBudget>,
    ) {
        let floor = self.floor(view);
        let spheres = &self.spheres;
        chunked::for_each_chunk_pair(&mut self.buckets, &mut self.cascade_masks, |first, buckets, masks| {
            for ((bucket, mask), sphere) in buckets.iter_mut().zip(masks).zip(&spheres[first..]) {
                (*bucket, *mask) = match detail {
                    // Every full mesh, in every pass: the baseline.
                    DrawDetail::Full => (0, EVERY_CASCADE),
                    DrawDetail::Auto if view.sees(sphere) => (
                        2 * level_for(view, sphere, error, PIXEL_ERROR),
                        view.cascades_reached(sphere, floor),
                    ),
                    DrawDetail::Auto if view.casts_into(sphere, floor) => {
                        match view.cascades_reached(sphere, floor) {
                            0 => (HIDDEN, 0),
                            mask => (2 * level_for(view, sphere, error, PIXEL_ERROR) + 1, mask),
                        }
                    }
                    DrawDetail::Auto => (HIDDEN, 0),
                };
            }
        });
        (self.pixel_error, self.over_budget) = match budget {
            Some(budget) if detail == DrawDetail::Auto => self.fit_budget(view, error, budget),
            _ => (PIXEL_ERROR, OverBudget::default()),
        };
        self.per_cascade = detail == DrawDetail::Auto && view.cascades.is_some();
        self.sort();
        if self.per_cascade {
            self.sort_cascades();
        }
    }

    /// Sets every character's bucket (`buckets`, one per character, as
    /// `choose` would: see `buckets`) and sorts the order by them: for
    /// levels chosen some other way.
    pub fn set_buckets(&mut self, buckets: &[u8]) {
        assert_eq!(buckets.len(), self.buckets.len(), "a bucket per character");
        self.buckets.copy_from_slice(buckets);
        (self.pixel_error, self.over_budget) = (PIXEL_ERROR, OverBudget::default());
        self.per_cascade = false;
        self.sort();
    }

    /// Sorts the order by bucket (level, then visible before culled; the
    /// hidden last) within each run, counting each bucket: a counting sort
    /// whose pieces count and then place their characters on the threads
    /// posing the crowd.
    fn sort(&mut self) {
        self.counts = [0; DETAIL_LEVELS];
        self.culled = [0; DETAIL_LEVELS];
        self.hidden = 0;
        let buckets = &self.buckets;
        let range = |(first, count): (u32, u32)| first as usize..(first + count) as usize;
        chunked::for_each_task(&mut self.pieces, buckets.len(), |piece| {
            piece.slots = [0; SLOTS];
            for &bucket in &buckets[range(piece.characters)] {
                piece.slots[slot(bucket)] += 1;
            }
        });
        for run in &mut self.runs {
            let run_pieces = &mut self.pieces[range(run.pieces)];
            let mut counts = [0u32; SLOTS];
            for piece in run_pieces.iter() {
                for (total, n) in counts.iter_mut().zip(&piece.slots) {
                    *total += n;
                }
            }
            let mut next = [0u32; SLOTS];
            let mut start = run.first;
            for k in 0..DETAIL_LEVELS {
                let (seen, culled) = (counts[2 * k], counts[2 * k + 1]);
                run.visible[k] = (start, seen);
                run.all[k] = (start, seen + culled);
                next[2 * k] = start;
                next[2 * k + 1] = start + seen;
                start += seen + culled;
                self.counts[k] += seen;
                self.culled[k] += culled;
            }
            next[SLOTS - 1] = start;
            self.hidden += counts[SLOTS - 1];
            // Each piece's characters of a slot follow the earlier pieces'.
            for piece in run_pieces.iter_mut() {
                for (at, next) in piece.slots.iter_mut().zip(&mut next) {
                    (*at, *next) = (*next, *next + *at);
                }
            }
        }
        let order = SharedOrder(self.order.as_mut_ptr(), self.order.len());
        chunked::for_each_task(&mut self.pieces, buckets.len(), |piece| {
            let characters = range(piece.characters);
            for (c, &bucket) in characters.clone().zip(&buckets[characters]) {
                let at = &mut piece.slots[slot(bucket)];
                order.write(*at as usize, c as u32);
                *at += 1;
            }
        });
    }

    /// How the characters placed by `place` will be seen from `view`, into
    /// `sight` (one per character, from the first): as `choose` would draw
    /// them, drawn (spanning about their height in pixels; infinite at
    /// `DrawDetail::Full`) or drawn by no pass.
    pub fn foresee(&self, view: &LevelView, detail: DrawDetail, sight: &mut [Sight]) {
        let floor = self.floor(view);
        let count = sight.len().min(self.spheres.len());
        let spheres = &self.spheres;
        chunked::for_each_chunk(&mut sight[..count], |first, sight| {
            for (sight, sphere) in sight.iter_mut().zip(&spheres[first..]) {
                *sight = match detail {
                    DrawDetail::Full => Sight::Drawn { pixels: f32::INFINITY },
                    DrawDetail::Auto
                        if view.sees(sphere)
                            || (view.casts_into(sphere, floor)
                                && view.cascades_reached(sphere, floor) != 0) =>
                    {
                        Sight::Drawn { pixels: view.pixels_across(sphere) }
                    }
                    DrawDetail::Auto => Sight::Unseen,
                };
            }
        });
    }

    /// Places the first `sight.len()` characters of `poses` at their
    /// current places, each within `bounds` (see `place`), and foresees
    /// them from `view` into `sight` (see `foresee`).
    pub fn place_and_foresee(
        &mut self,
        poses: &dyn FramePoses,
        bounds: [f32; 4],
        view: &LevelView,
        detail: DrawDetail,
        sight: &mut [Sight],
    ) {
        self.place_poses(poses, sight.len(), bounds);
        self.foresee(view, detail, sight);
    }

    /// The lowest point a shadow may fall on: the lowest character's
    /// sphere or the view's other receivers (NaN spheres are skipped;
    /// only computed when the view has shadows).
    fn floor(&self, view: &LevelView) -> f32 {
        match view.shadows {
            Some(_) => chunked::min_over_chunks(&self.spheres, view.receivers_above, |spheres| {
                spheres.iter().map(|s| s.centre[1] - s.radius).fold(f32::INFINITY, f32::min)
            }),
            None => view.receivers_above,
        }
    }

    /// Per instance, the character it draws (what the slot's order buffer holds).
    pub fn order(&self) -> &[u32] {
        &self.order
    }

    /// The shadow cascades' instances, which the slot's order buffer holds
    /// after `order` (see `cascade_order`), when this frame's cascades
    /// draw their own characters; `None` when they draw the `ByLight`
    /// ranges of `order`.
    pub fn cascade_order(&self) -> Option<&[u32]> {
        self.per_cascade.then_some(&self.cascade_order[..])
    }

    /// Per level, `(first instance, instance count)` of run `run` (the
    /// index of its `(first, count)` in `new`'s list), for the passes `seen`.
    pub fn run_levels(&self, run: usize, seen: Seen) -> Option<&[(u32, u32); DETAIL_LEVELS]> {
        self.runs.get(run).map(|r| match seen {
            Seen::ByCamera => &r.visible,
            Seen::ByCascade(k) if self.per_cascade => &r.cascades[k.min(CASCADES - 1)],
            Seen::ByLight | Seen::ByCascade(_) => &r.all,
        })
    }

    /// Per level, `(first instance, instance count)` of the characters of
    /// the run `(first, count)` (as given to `new`) that some pass draws
    /// (what the skin pass skins of them, level by level); `None` when no
    /// run is `(first, count)`.
    pub fn drawn_levels(&self, first: u32, count: u32) -> Option<&[(u32, u32); DETAIL_LEVELS]> {
        self.runs.iter().find(|r| r.first == first && r.count == count).map(|r| &r.all)
    }

    /// How many characters the camera sees at each level this frame.
    pub fn counts(&self) -> [u32; DETAIL_LEVELS] {
        self.counts
    }

    /// How many characters are culled from the camera's passes this frame
    /// (those the shadow cascades draw and those no pass draws).
    pub fn culled(&self) -> u32 {
        self.culled.iter().sum::<u32>() + self.hidden
    }

    /// How many characters culled from the camera's passes the shadow
    /// cascades draw at each level this frame.
    pub fn culled_levels(&self) -> [u32; DETAIL_LEVELS] {
        self.culled
    }

    /// How many characters no pass draws this frame.
    pub fn hidden(&self) -> u32 {
        self.hidden
    }

    /// The most pixels by which this frame's levels may depart from the
    /// full meshes: [`PIXEL_ERROR`], or more where a detail budget made
    /// every character coarser (`choose_within`; infinite where even the
    /// coarsest levels were over it).
    pub fn pixel_error(&self) -> f32 {
        self.pixel_error
    }

    /// Which limits of this frame's detail budget its levels within
    /// [`PIXEL_ERROR`] were over (none without a budget; where even the
    /// coarsest levels were over a limit, the limits they were over).
    pub fn over_budget(&self) -> OverBudget {
        self.over_budget
    }

    /// Per character, its sort bucket this frame: `2 * level` when the
    /// camera sees it, `2 * level + 1` when only the shadow cascades draw
    /// it, [`HIDDEN`] when no pass does (what the skin pass reads,
    /// `render::skin_levels::SkinLevels`).
    pub fn buckets(&self) -> &[u8] {
        &self.buckets
    }
}

/// A piece of a run for the counting sort.
#[derive(Debug, Clone, Copy)]
struct SortPiece {
    /// `(first character, count)`.
    characters: (u32, u32),
    /// Its characters per sort slot, then where its next character of
    /// each slot goes in the order.
    slots: [u32; SLOTS],
    /// The same per shadow cascade and level, for `cascade_order`.
    cascade_slots: [[u32; DETAIL_LEVELS]; CASCADES],
}

/// The draw order's entries, written by the sort's pieces at once.
#[derive(Clone, Copy)]
struct SharedOrder(*mut u32, usize);

// SAFETY: the pointer is only written through `write`, at entries no other
// piece writes (see there), while `DrawOrder::sort` holds the order mutably.
unsafe impl Send for SharedOrder {}
unsafe impl Sync for SharedOrder {}

impl SharedOrder {
    /// Writes `value` at entry `i`. Each piece writes, for each slot, the
    /// entries from where the run's earlier pieces' characters of that
    /// slot end, one per character of its own: the runs are apart
    /// (`DrawOrder::new`), their slots' ranges are apart within a run, and
    /// the pieces' shares are apart within a slot, so no two pieces write
    /// one entry and no entry is read meanwhile.
    fn write(self, i: usize, value: u32) {
        assert!(i < self.1, "draw order entry {i} of {}", self.1);
        // SAFETY: in bounds (above), and no other thread reads or writes
        // entry `i` (see above).
        unsafe { self.0.add(i).write(value) }
    }
}

/// The coarsest level whose error, scaled and projected at the sphere's
/// nearest depth, stays within `pixel_error` pixels (0 for a non-finite
/// sphere; a sphere reaching the near plane counts at it).
fn level_for(view: &LevelView, sphere: &PlacedSphere, error: &[f32; DETAIL_LEVELS], pixel_error: f32) -> u8 {
    let mut depth = 0.0;
    for i in 0..3 {
        depth += (sphere.centre[i] - view.eye[i]) * view.forward[i];
    }
    let nearest = (depth - sphere.radius).max(view.near);
    // The largest world-space error that projects to pixel_error there.
    let allowed = pixel_error * nearest / view.pixels_per_unit;
    let mut level = 0;
    for (k, &e) in error.iter().enumerate().skip(1) {
        // NaN compares false: a broken placement keeps the full mesh.
        if e * sphere.scale <= allowed {
            level = k as u8;
        }
    }
    level
}

mod budget;
mod cascades;
#[cfg(test)]
mod tests;
