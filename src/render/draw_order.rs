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
//! draw another. A character drawn by no pass (outside the view, and its
//! shadow too or no shadow pass) is [`HIDDEN`]: sorted after every level,
//! and not skinned either (`render::skin_levels`). Plain CPU work, no
//! allocation per frame; placing, choosing and foreseeing run in chunks
//! on the threads that pose the crowd (`render::chunked`).

use super::camera::Camera;
use super::chunked;
use super::detail_levels::DETAIL_LEVELS;
use super::frame_settings::DrawDetail;
use crate::anim::{FramePoses, Sight};
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
        }
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
        let Some(away) = self.shadows else { return false };
        let c = sphere.centre;
        let to_eye = (0..3).map(|i| (c[i] - self.eye[i]).powi(2)).sum::<f32>().sqrt();
        let mut reach = to_eye + 2.0 * self.far;
        if away[1] < 0.0 {
            // Past this the whole sphere has gone below every receiver.
            reach = reach.min(((c[1] + sphere.radius - floor) / -away[1]).max(0.0));
        }
        let end = [c[0] + away[0] * reach, c[1] + away[1] * reach, c[2] + away[2] * reach];
        // How far inside plane p (pushed out by the radius) a point is.
        let inside =
            |p: &[f32; 4], q: [f32; 3]| p[0] * q[0] + p[1] * q[1] + p[2] * q[2] + p[3] + sphere.radius;
        // The part of the sweep, from c (0) to end (1), inside every plane.
        let (mut first, mut last) = (0.0f32, 1.0f32);
        for p in &self.planes {
            let (a, b) = (inside(p, c), inside(p, end));
            if a < 0.0 && b < 0.0 {
                return false;
            }
            // NaN compares false: a broken sphere keeps its whole sweep.
            if a < 0.0 {
                first = first.max(a / (a - b));
            } else if b < 0.0 {
                last = last.min(a / (a - b));
            }
        }
        first <= last
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
        let c = sphere.centre;
        let outside = |p: &[f32; 4]| p[0] * c[0] + p[1] * c[1] + p[2] * c[2] + p[3] < -sphere.radius;
        !self.planes.iter().any(outside)
    }
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
    /// The shadow cascades: every character.
    ByLight,
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
    #[inline(always)]
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
    /// Per instance: the character it draws (the scene's characters, then
    /// one identity entry per character past them, e.g. the scenery).
    order: Vec<u32>,
    runs: Vec<Run>,
    /// Characters the camera sees at each level this frame.
    counts: [u32; DETAIL_LEVELS],
    /// Characters culled from the camera's passes but drawn by the shadow
    /// cascades this frame, per level.
    culled: [u32; DETAIL_LEVELS],
    /// Characters no pass draws this frame.
    hidden: u32,
}

impl DrawOrder {
    /// An order for `characters` characters in `runs` (`(first, count)`,
    /// covering them), with `extra` identity entries after them; every
    /// character starts at level 0.
    pub fn new(characters: u32, extra: u32, runs: &[(u32, u32)]) -> DrawOrder {
        let runs = runs
            .iter()
            .map(|&(first, count)| {
                let mut visible = [(first + count, 0); DETAIL_LEVELS];
                visible[0] = (first, count);
                Run { first, count, visible, all: visible }
            })
            .collect();
        let mut counts = [0; DETAIL_LEVELS];
        counts[0] = characters;
        DrawOrder {
            spheres: vec![PlacedSphere::default(); characters as usize],
            buckets: vec![0; characters as usize],
            order: (0..characters + extra).collect(),
            runs,
            counts,
            culled: [0; DETAIL_LEVELS],
            hidden: 0,
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
    /// level, then visible before culled, within each run.
    pub fn choose(&mut self, view: &LevelView, error: &[f32; DETAIL_LEVELS], detail: DrawDetail) {
        let floor = self.floor(view);
        let spheres = &self.spheres;
        chunked::for_each_chunk(&mut self.buckets, |first, buckets| {
            for (bucket, sphere) in buckets.iter_mut().zip(&spheres[first..]) {
                *bucket = match detail {
                    // Every full mesh, in every pass: the baseline.
                    DrawDetail::Full => 0,
                    DrawDetail::Auto if view.sees(sphere) => 2 * level_for(view, sphere, error),
                    DrawDetail::Auto if view.casts_into(sphere, floor) => {
                        2 * level_for(view, sphere, error) + 1
                    }
                    DrawDetail::Auto => HIDDEN,
                };
            }
        });
        self.sort();
    }

    /// Sets every character's bucket (`buckets`, one per character, as
    /// `choose` would: see `buckets`) and sorts the order by them: for
    /// levels chosen some other way.
    pub fn set_buckets(&mut self, buckets: &[u8]) {
        assert_eq!(buckets.len(), self.buckets.len(), "a bucket per character");
        self.buckets.copy_from_slice(buckets);
        self.sort();
    }

    /// Sorts the order by bucket (level, then visible before culled; the
    /// hidden last) within each run, counting each bucket.
    fn sort(&mut self) {
        self.counts = [0; DETAIL_LEVELS];
        self.culled = [0; DETAIL_LEVELS];
        self.hidden = 0;
        // The hidden after every level.
        let slot = |bucket: u8| usize::from(bucket).min(2 * DETAIL_LEVELS);
        for run in &mut self.runs {
            let mut counts = [0u32; 2 * DETAIL_LEVELS + 1];
            let range = run.first as usize..(run.first + run.count) as usize;
            for &bucket in &self.buckets[range.clone()] {
                counts[slot(bucket)] += 1;
            }
            let mut next = [0u32; 2 * DETAIL_LEVELS + 1];
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
            next[2 * DETAIL_LEVELS] = start;
            self.hidden += counts[2 * DETAIL_LEVELS];
            for (c, &bucket) in range.clone().zip(&self.buckets[range]) {
                let slot = &mut next[slot(bucket)];
                self.order[*slot as usize] = c as u32;
                *slot += 1;
            }
        }
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
                    DrawDetail::Auto if view.sees(sphere) || view.casts_into(sphere, floor) => {
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

    /// Per level, `(first instance, instance count)` of run `run` (the
    /// index of its `(first, count)` in `new`'s list), for the passes `seen`.
    pub fn run_levels(&self, run: usize, seen: Seen) -> Option<&[(u32, u32); DETAIL_LEVELS]> {
        self.runs.get(run).map(|r| match seen {
            Seen::ByCamera => &r.visible,
            Seen::ByLight => &r.all,
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

    /// Per character, its sort bucket this frame: `2 * level` when the
    /// camera sees it, `2 * level + 1` when only the shadow cascades draw
    /// it, [`HIDDEN`] when no pass does (what the skin pass reads,
    /// `render::skin_levels::SkinLevels`).
    pub fn buckets(&self) -> &[u8] {
        &self.buckets
    }
}

/// The coarsest level whose error, scaled and projected at the sphere's
/// nearest depth, stays within `PIXEL_ERROR` (0 for a non-finite sphere or
/// one reaching the near plane).
fn level_for(view: &LevelView, sphere: &PlacedSphere, error: &[f32; DETAIL_LEVELS]) -> u8 {
    let mut depth = 0.0;
    for i in 0..3 {
        depth += (sphere.centre[i] - view.eye[i]) * view.forward[i];
    }
    let nearest = (depth - sphere.radius).max(view.near);
    // The largest world-space error that projects to PIXEL_ERROR there.
    let allowed = PIXEL_ERROR * nearest / view.pixels_per_unit;
    let mut level = 0;
    for (k, &e) in error.iter().enumerate().skip(1) {
        // NaN compares false: a broken placement keeps the full mesh.
        if e * sphere.scale <= allowed {
            level = k as u8;
        }
    }
    level
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Point3, Vector3};

    const ERROR: [f32; DETAIL_LEVELS] = [0.0, 0.01, 0.04, 0.16];

    /// A camera at the origin looking down -Z on a 1000-pixel-tall target
    /// (90 degrees: one unit at depth d spans 500 / d pixels).
    fn view() -> LevelView {
        let camera = Camera {
            eye: Point3::origin(),
            target: Point3::new(0.0, 0.0, -1.0),
            up: Vector3::y(),
            fov_y: std::f32::consts::FRAC_PI_2,
            aspect: 1.0,
            near: 0.1,
            far: 1000.0,
            lens_shift: 0.0,
        };
        LevelView::new(&camera, 1000)
    }

    /// The depth of a unit sphere's centre from which an error `e` is drawn.
    fn reach(e: f32) -> f32 {
        e * 500.0 / PIXEL_ERROR + BOUNDS_MARGIN
    }

    fn at(z: f32) -> Matrix4<f32> {
        Matrix4::new_translation(&Vector3::new(0.0, 0.0, -z))
    }

    #[test]
    fn a_level_is_drawn_once_its_error_is_under_a_pixel() {
        assert!((view().pixels_per_unit - 500.0).abs() < 1e-3);
        let mut order = DrawOrder::new(5, 0, &[(0, 5)]);
        // A sphere of radius 1 (BOUNDS_MARGIN with the margin). Level k's error e
        // is within PIXEL_ERROR from a nearest depth of 500 e / PIXEL_ERROR.
        let depths = [1.0, reach(0.01) + 0.1, reach(0.04) + 0.1, reach(0.16) + 0.1, reach(0.01) - 0.1];
        for (c, &z) in depths.iter().enumerate() {
            order.place(c, &at(z), [0.0, 0.0, 0.0, 1.0]);
        }
        order.choose(&view(), &ERROR, DrawDetail::Auto);
        assert_eq!(order.buckets, [0, 2, 4, 6, 0], "every level, all in view");
        assert_eq!(order.counts(), [2, 1, 1, 1]);
        // Sorted by level, stable within one: 0, 4 | 1 | 2 | 3.
        assert_eq!(order.order(), [0, 4, 1, 2, 3]);
        assert_eq!(order.run_levels(0, Seen::ByCamera), Some(&[(0, 2), (2, 1), (3, 1), (4, 1)]));
        assert_eq!(order.run_levels(0, Seen::ByLight), order.run_levels(0, Seen::ByCamera));
        order.choose(&view(), &ERROR, DrawDetail::Full);
        assert_eq!(order.order(), [0, 1, 2, 3, 4]);
        assert_eq!(order.run_levels(0, Seen::ByCamera), Some(&[(0, 5), (5, 0), (5, 0), (5, 0)]));
    }

    #[test]
    fn a_larger_character_keeps_its_detail_longer() {
        let mut order = DrawOrder::new(2, 0, &[(0, 2)]);
        let z = reach(0.01) + 0.1;
        order.place(0, &at(z), [0.0, 0.0, 0.0, 1.0]);
        // Twice the size: twice the error, and a sphere reaching closer.
        order.place(1, &(at(z) * Matrix4::new_scaling(2.0)), [0.0, 0.0, 0.0, 1.0]);
        order.choose(&view(), &ERROR, DrawDetail::Auto);
        assert_eq!(order.buckets, [2, 0]);
    }

    #[test]
    fn runs_sort_apart_and_extra_entries_stay_identity() {
        let mut order = DrawOrder::new(4, 1, &[(0, 2), (2, 2)]);
        for (c, z) in [1000.0, 1.0, 1000.0, 1.0].into_iter().enumerate() {
            order.place(c, &at(z), [0.0, 0.0, 0.0, 1.0]);
        }
        order.choose(&view(), &ERROR, DrawDetail::Auto);
        assert_eq!(order.order(), [1, 0, 3, 2, 4]);
        assert_eq!(order.run_levels(1, Seen::ByCamera), Some(&[(2, 1), (3, 0), (3, 0), (3, 1)]));
        assert_eq!(order.run_levels(2, Seen::ByCamera), None);
    }

    /// What the skin pass skins of a run: per level, its characters that
    /// any pass draws (culled ones the shadows draw after the visible), the
    /// hidden in none.
    #[test]
    fn a_run_s_drawn_levels_leave_out_the_hidden() {
        let mut order = DrawOrder::new(6, 1, &[(0, 2), (2, 4)]);
        order.set_buckets(&[0, 2 * 3, 2 * 3 + 1, HIDDEN, 2, 2 * 3]);
        assert_eq!(order.order(), [0, 1, 4, 5, 2, 3, 6]);
        assert_eq!(order.drawn_levels(0, 2), Some(&[(0, 1), (1, 0), (1, 0), (1, 1)]));
        assert_eq!(order.drawn_levels(2, 4), Some(&[(2, 0), (2, 1), (3, 0), (3, 2)]));
        assert_eq!(order.run_levels(1, Seen::ByCamera), Some(&[(2, 0), (2, 1), (3, 0), (3, 1)]));
        assert_eq!((order.drawn_levels(2, 3), order.drawn_levels(6, 1)), (None, None));
        assert_eq!((order.hidden(), order.culled_levels()), (1, [0, 0, 0, 1]));
    }

    #[test]
    fn broken_or_near_placements_draw_the_full_mesh() {
        let mut order = DrawOrder::new(3, 0, &[(0, 3)]);
        order.place(0, &Matrix4::from_element(f32::NAN), [0.0, 0.0, 0.0, 1.0]);
        // Behind the camera: its sphere's nearest depth is the near plane.
        order.place(1, &at(-50.0), [0.0, 0.0, 0.0, 1.0]);
        order.place(2, &at(1000.0), [0.0, 0.0, 0.0, f32::INFINITY]);
        order.choose(&view(), &ERROR, DrawDetail::Auto);
        // The one behind is culled from the camera's passes (and, without
        // shadows, drawn by none), not the others.
        assert_eq!(order.buckets, [0, HIDDEN, 0]);
    }

    /// Characters at their places, with nothing to skin; their world
    /// matrices in a slice or (`in_slice` false) only one by one.
    struct Places {
        worlds: Vec<Matrix4<f32>>,
        in_slice: bool,
    }

    impl FramePoses for Places {
        fn count(&self) -> usize {
            self.worlds.len()
        }
        fn input(&self, _: usize) -> crate::anim::SkinInput<'_> {
            let pose = crate::anim::SkinnedPose {
                palettes: &[],
                palette_ranges: &[],
                world: &[],
                world_joints: None,
                morph_weights: &[],
            };
            crate::anim::SkinInput { pose, version: 0 }
        }
        fn world(&self, c: usize) -> Matrix4<f32> {
            self.worlds[c]
        }
        fn worlds(&self) -> Option<&[Matrix4<f32>]> {
            self.in_slice.then_some(&self.worlds[..])
        }
    }

    /// Placed, chosen, sorted and foreseen in chunks on a pool of threads,
    /// a crowd gets what one thread gives it, whether its places are read
    /// from a slice or one by one.
    #[test]
    fn chunks_on_a_pool_order_as_one_thread_does() {
        let n = 3 * chunked::CHUNK + 5;
        let grid = (n as f32).sqrt().ceil() as usize;
        let mut worlds: Vec<Matrix4<f32>> = (0..n)
            .map(|c| {
                at(5.0 + 3.0 * (c / grid) as f32)
                    * Matrix4::new_translation(&Vector3::x().scale((c % grid) as f32 - 40.0))
            })
            .collect();
        worlds[7] = Matrix4::from_element(f32::NAN);
        let runs = [(0, 4000), (4000, n as u32 - 4000)];
        let view = view().with_shadows([0.3, 1.0, 0.2]).with_receivers_above(-1.0);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let mut results = Vec::new();
        for (threads, in_slice) in [(1, true), (2, true), (2, false)] {
            let poses = Places { worlds: worlds.clone(), in_slice };
            let mut order = DrawOrder::new(n as u32, 1, &runs);
            let mut sight = vec![Sight::Unseen; n];
            let mut frame = || {
                order.place_poses(&poses, n, [0.0, 0.9, 0.0, 1.0]);
                order.choose(&view, &ERROR, DrawDetail::Auto);
                order.foresee(&view, DrawDetail::Auto, &mut sight);
            };
            if threads == 1 {
                frame()
            } else {
                pool.install(frame)
            }
            results.push((order.spheres, order.buckets, order.order, order.runs, sight));
        }
        let (_, buckets, ..) = &results[0];
        let levels = |l: u8| buckets.iter().filter(|&&b| b == l).count();
        // Every level seen, some culled but shadowed, some hidden.
        let taken: Vec<usize> = [0, 1, 2, 3, 4, 6, HIDDEN].map(levels).into();
        assert!(taken.iter().all(|&n| n > 0), "buckets taken: {taken:?}");
        // Debug's text: the broken placement's NaNs compare equal.
        let same = |a: &dyn std::fmt::Debug, b: &dyn std::fmt::Debug| format!("{a:?}") == format!("{b:?}");
        for (i, result) in results.iter().enumerate().skip(1) {
            assert!(same(&result.0, &results[0].0), "{i}: spheres");
            assert_eq!((&result.1, &result.2), (&results[0].1, &results[0].2), "{i}: buckets and order");
            assert!(same(&result.3, &results[0].3) && same(&result.4, &results[0].4), "{i}: runs and sight");
        }
    }

    /// What the foresight calls unseen is exactly what the frame then
    /// draws in no pass, for any placement, camera, light and ground (a
    /// drawn character left unposed would show a stale pose).
    #[test]
    fn foresight_calls_unseen_exactly_what_no_pass_draws() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |lo: f32, hi: f32| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            lo + (hi - lo) * ((state >> 40) as f32 / (1u64 << 24) as f32)
        };
        let n = 300;
        let mut order = DrawOrder::new(n, 0, &[(0, n)]);
        let mut sight = vec![Sight::Unseen; n as usize];
        let (mut unseen, mut drawn) = (0, 0);
        for round in 0..40 {
            for c in 0..n as usize {
                let at = Vector3::new(next(-60.0, 60.0), next(-2.0, 2.0), next(-60.0, 60.0));
                order.place(c, &Matrix4::new_translation(&at), [0.0, 0.9, 0.0, next(0.5, 2.0)]);
            }
            let eye = Point3::new(next(-20.0, 20.0), next(0.5, 10.0), next(-20.0, 20.0));
            let camera = Camera {
                eye,
                target: eye + Vector3::new(next(-1.0, 1.0), next(-0.6, 0.1), next(-1.0, 1.0)),
                up: Vector3::y(),
                fov_y: next(0.4, 1.2),
                aspect: 16.0 / 9.0,
                near: 0.1,
                far: next(30.0, 200.0),
                lens_shift: 0.0,
            };
            let mut view = LevelView::new(&camera, 720);
            if round % 2 == 1 {
                let light = [next(-1.0, 1.0), next(0.2, 1.0), next(-1.0, 1.0)];
                view = view.with_shadows(light).with_receivers_above(next(-10.0, 0.0));
            }
            order.choose(&view, &ERROR, DrawDetail::Auto);
            order.foresee(&view, DrawDetail::Auto, &mut sight);
            for (c, (s, &bucket)) in sight.iter().zip(order.buckets()).enumerate() {
                assert_eq!(
                    *s == Sight::Unseen,
                    bucket == HIDDEN,
                    "round {round}, character {c}: {s:?}, {bucket}"
                );
                if let Sight::Drawn { pixels } = s {
                    assert!(*pixels > 0.0, "{pixels}");
                }
            }
            unseen += order.hidden();
            drawn += n - order.hidden();
            order.foresee(&view, DrawDetail::Full, &mut sight);
            assert!(sight.iter().all(|s| *s == Sight::Drawn { pixels: f32::INFINITY }));
        }
        // Both kinds, many times over.
        assert!(unseen > 1000 && drawn > 1000, "{unseen} unseen, {drawn} drawn");
    }

    #[test]
    fn characters_out_of_view_are_drawn_for_the_light_alone() {
        let mut order = DrawOrder::new(4, 0, &[(0, 4)]);
        // In view; far to the left (the view is 90 degrees wide); just
        // outside the right edge but reaching in; behind the far plane.
        let beside = |x: f32| Matrix4::new_translation(&Vector3::new(x, 0.0, -10.0));
        order.place(0, &at(10.0), [0.0, 0.0, 0.0, 1.0]);
        order.place(1, &beside(-30.0), [0.0, 0.0, 0.0, 1.0]);
        order.place(2, &beside(10.5), [0.0, 0.0, 0.0, 1.0]);
        order.place(3, &at(1002.0), [0.0, 0.0, 0.0, 1.0]);
        // A light low on the left: the shadows fall right and a little
        // down, into the view, onto ground far below.
        let low_left = [-1.0, 0.25, 0.0];
        let lit = view().with_shadows(low_left).with_receivers_above(-40.0);
        order.choose(&lit, &ERROR, DrawDetail::Full);
        assert_eq!((order.buckets.as_slice(), order.culled()), ([0, 0, 0, 0].as_slice(), 0), "no culling");
        // Levels too coarse to draw anywhere: level 0 and culling alone.
        // The one behind the far plane casts its shadow behind it too.
        order.choose(&lit, &[0.0, 1e6, 1e6, 1e6], DrawDetail::Auto);
        assert_eq!(order.buckets, [0, 1, 0, HIDDEN]);
        assert_eq!((order.counts(), order.culled(), order.hidden()), ([2, 0, 0, 0], 2, 1));
        // Visible first, then the culled ones of the same level, the hidden last.
        assert_eq!(order.order(), [0, 2, 1, 3]);
        assert_eq!(order.run_levels(0, Seen::ByCamera), Some(&[(0, 2), (3, 0), (3, 0), (3, 0)]));
        assert_eq!(order.run_levels(0, Seen::ByLight), Some(&[(0, 3), (3, 0), (3, 0), (3, 0)]));
        // With nothing below the characters to fall on, the left one's
        // shadow lands within a few units of it, far from the view.
        order.choose(&view().with_shadows(low_left), &[0.0, 1e6, 1e6, 1e6], DrawDetail::Auto);
        assert_eq!(order.buckets, [0, HIDDEN, 0, HIDDEN]);
        // The shadow must travel about 19 units along the light to reach
        // the view's left plane (pushed out by the radius, 1.25), dropping
        // 4.6: ground 2 units below stops it short, 5 below lets it in.
        let onto = |floor| view().with_shadows(low_left).with_receivers_above(floor);
        order.choose(&onto(-2.0), &[0.0, 1e6, 1e6, 1e6], DrawDetail::Auto);
        assert_eq!(order.buckets[1], HIDDEN);
        order.choose(&onto(-5.0), &[0.0, 1e6, 1e6, 1e6], DrawDetail::Auto);
        assert_eq!(order.buckets[1], 1);
        // A light high on the left throws that shadow steeply down: at the
        // characters' depth it crosses the left plane 10 units below the
        // bottom one and the bottom plane 10 units left of the left one,
        // so it passes under the view's corner (each plane alone would
        // let it in).
        let steep = view().with_shadows([-1.0, 1.0, 0.0]).with_receivers_above(-40.0);
        order.choose(&steep, &[0.0, 1e6, 1e6, 1e6], DrawDetail::Auto);
        assert_eq!(order.buckets[1], HIDDEN);
        // A light up and to the right throws the left one's shadow away
        // from the view; without shadows no pass draws either.
        order.choose(&view().with_shadows([1.0, 1.0, 0.0]), &[0.0, 1e6, 1e6, 1e6], DrawDetail::Auto);
        assert_eq!(order.buckets, [0, HIDDEN, 0, HIDDEN]);
        order.choose(&view(), &[0.0, 1e6, 1e6, 1e6], DrawDetail::Auto);
        assert_eq!(order.buckets, [0, HIDDEN, 0, HIDDEN]);
        assert_eq!(order.run_levels(0, Seen::ByLight), Some(&[(0, 2), (2, 0), (2, 0), (2, 0)]));
    }
}
