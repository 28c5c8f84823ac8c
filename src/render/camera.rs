//! A perspective camera for Vulkan clip space (right-handed view, y down in
//! clip space, depth 0..1) that frames an axis-aligned box automatically.
//! Plain maths: it never touches the GPU.

use nalgebra::{Matrix4, Point3, Vector3};

/// A perspective camera looking at `target` from `eye`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    /// Eye position (world space).
    pub eye: Point3<f32>,
    /// Point looked at.
    pub target: Point3<f32>,
    /// World up direction.
    pub up: Vector3<f32>,
    /// Vertical field of view in radians.
    pub fov_y: f32,
    /// Width over height.
    pub aspect: f32,
    /// Near plane distance (> 0).
    pub near: f32,
    /// Far plane distance (> near).
    pub far: f32,
    /// Horizontal shift of the image in clip space (`x' = x + lens_shift * w`):
    /// 0 centres the view; the window uses it to centre the model in the
    /// part the controls leave free, without changing the perspective.
    pub lens_shift: f32,
}

/// Default vertical field of view: 35 degrees.
pub const DEFAULT_FOV_Y: f32 = 35.0 * std::f32::consts::PI / 180.0;

/// How far above the box centre the camera looks from, as an angle (radians).
const ELEVATION: f32 = 12.0 * std::f32::consts::PI / 180.0;

/// How far round from the front (+Z) towards +X the camera stands (radians):
/// a three-quarter view shows depth (a fox seen head-on is a thin strip).
const AZIMUTH: f32 = 30.0 * std::f32::consts::PI / 180.0;

/// Fraction of the half-extent of the screen the box may use.
const FILL: f32 = 0.9;

impl Camera {
    /// A camera looking at the centre of the box `min..max` from the front
    /// (+Z, glTF's forward) turned 30 degrees towards +X, slightly above, close enough that the whole box
    /// fills at most 90% of the vertical and horizontal field of view.
    pub fn frame_box(min: [f32; 3], max: [f32; 3], aspect: f32, fov_y: f32) -> Camera {
        let aspect = if aspect.is_finite() && aspect > 0.0 { aspect } else { 1.0 };
        let mut lo = Vector3::from(min);
        let mut hi = Vector3::from(max);
        if !(lo.iter().chain(hi.iter()).all(|v| v.is_finite()) && lo <= hi) {
            lo = Vector3::repeat(-1.0);
            hi = Vector3::repeat(1.0);
        }
        let centre = (lo + hi) * 0.5;
        // A point-like box still gets a finite camera distance.
        let half = ((hi - lo) * 0.5).map(|v| v.max(1e-3));
        let back =
            Vector3::new(AZIMUTH.sin() * ELEVATION.cos(), ELEVATION.sin(), AZIMUTH.cos() * ELEVATION.cos());
        let up = Vector3::y();
        let right = up.cross(&back).normalize();
        let cam_up = back.cross(&right);
        let tan_y = (fov_y * 0.5).tan() * FILL;
        let tan_x = (fov_y * 0.5).tan() * aspect * FILL;
        // For each corner q (relative to the centre) at view-space coordinates
        // (x, y, z) with z towards the eye, the eye distance d must satisfy
        // |x| <= tan_x (d - z) and |y| <= tan_y (d - z).
        let mut distance = 0.0f32;
        let mut corners = [Vector3::zeros(); 8];
        for (i, c) in corners.iter_mut().enumerate() {
            *c = Vector3::new(
                if i & 1 == 0 { -half.x } else { half.x },
                if i & 2 == 0 { -half.y } else { half.y },
                if i & 4 == 0 { -half.z } else { half.z },
            );
            let (x, y, z) = (c.dot(&right), c.dot(&cam_up), c.dot(&back));
            distance = distance.max(z + x.abs() / tan_x).max(z + y.abs() / tan_y);
        }
        let (mut nearest, mut farthest) = (f32::MAX, 0.0f32);
        for c in &corners {
            let depth = distance - c.dot(&back);
            nearest = nearest.min(depth);
            farthest = farthest.max(depth);
        }
        Camera {
            eye: Point3::from(centre + back * distance),
            target: Point3::from(centre),
            up,
            fov_y,
            aspect,
            near: (nearest * 0.5).max(distance * 1e-3),
            far: farthest * 2.0,
            lens_shift: 0.0,
        }
    }

    /// World to view (right-handed: the camera looks down -Z, +Y up).
    pub fn view(&self) -> Matrix4<f32> {
        Matrix4::look_at_rh(&self.eye, &self.target, &self.up)
    }

    /// View to Vulkan clip space: y points down, depth runs 0 (near) to 1
    /// (far); x is shifted by `lens_shift` (clip x + lens_shift * w).
    pub fn projection(&self) -> Matrix4<f32> {
        let f = 1.0 / (self.fov_y * 0.5).tan();
        let (n, fa) = (self.near, self.far);
        #[rustfmt::skip]
        let m = Matrix4::new(
            f / self.aspect, 0.0, -self.lens_shift, 0.0,
            0.0, -f, 0.0, 0.0,
            0.0, 0.0, fa / (n - fa), n * fa / (n - fa),
            0.0, 0.0, -1.0, 0.0,
        );
        m
    }

    /// `projection * view`.
    pub fn view_proj(&self) -> Matrix4<f32> {
        self.projection() * self.view()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Vector4;

    fn ndc(m: &Matrix4<f32>, p: [f32; 3]) -> Vector3<f32> {
        let c = m * Vector4::new(p[0], p[1], p[2], 1.0);
        assert!(c.w > 0.0, "point behind the camera");
        c.xyz() / c.w
    }

    fn corners(min: [f32; 3], max: [f32; 3]) -> Vec<[f32; 3]> {
        (0..8)
            .map(|i| {
                [
                    if i & 1 == 0 { min[0] } else { max[0] },
                    if i & 2 == 0 { min[1] } else { max[1] },
                    if i & 4 == 0 { min[2] } else { max[2] },
                ]
            })
            .collect()
    }

    #[test]
    fn framed_box_corners_project_inside_clip_space() {
        let boxes = [
            ([-0.5, 0.0, -0.2], [0.5, 1.8, 0.2]),      // a standing person
            ([-40.0, 0.0, -80.0], [40.0, 70.0, 80.0]), // a long animal, large units
            ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]),        // a point
            ([-3.0, -1.0, -0.1], [3.0, 1.0, 0.1]),     // wide and flat
        ];
        for aspect in [4.0 / 3.0, 1.0, 0.5, 2.5] {
            for (min, max) in boxes {
                let cam = Camera::frame_box(min, max, aspect, DEFAULT_FOV_Y);
                let m = cam.view_proj();
                let mut largest = 0.0f32;
                for p in corners(min, max) {
                    let q = ndc(&m, p);
                    assert!(q.x.abs() <= 0.91 && q.y.abs() <= 0.91, "{q:?} for {min:?}..{max:?} at {aspect}");
                    assert!((0.0..=1.0).contains(&q.z), "depth {q:?}");
                    largest = largest.max(q.x.abs()).max(q.y.abs());
                }
                if min != max {
                    // Tight: the box touches the 90% margin on some axis.
                    assert!(largest > 0.85, "box too small on screen: {largest}");
                }
            }
        }
    }

    #[test]
    fn up_is_up_and_front_faces_camera() {
        let cam = Camera::frame_box([-1.0, 0.0, -1.0], [1.0, 2.0, 1.0], 1.0, DEFAULT_FOV_Y);
        let m = cam.view_proj();
        // Vulkan clip space: +Y world (up) must go towards -Y (top of the image).
        let top = ndc(&m, [0.0, 2.0, 0.0]);
        let bottom = ndc(&m, [0.0, 0.0, 0.0]);
        assert!(top.y < bottom.y);
        // +X world appears on the right when looking from +Z.
        assert!(ndc(&m, [1.0, 1.0, 0.0]).x > ndc(&m, [-1.0, 1.0, 0.0]).x);
        // The camera is in front (+Z) and slightly above the centre.
        assert!(cam.eye.z > 1.0 && cam.eye.y > 1.0);
        // Nearer points have smaller depth.
        assert!(ndc(&m, [0.0, 1.0, 1.0]).z < ndc(&m, [0.0, 1.0, -1.0]).z);
    }

    #[test]
    fn lens_shift_moves_the_image_centre() {
        let mut camera = Camera::frame_box([-1.0; 3], [1.0; 3], 1.5, DEFAULT_FOV_Y);
        let centre = [camera.target.x, camera.target.y, camera.target.z];
        assert!(ndc(&camera.view_proj(), centre).x.abs() < 1e-5);
        camera.lens_shift = -0.6;
        let shifted = ndc(&camera.view_proj(), centre);
        assert!((shifted.x + 0.6).abs() < 1e-5, "{shifted:?}");
        // Only x moves: the perspective (y, depth) is the same.
        camera.lens_shift = 0.0;
        let plain = ndc(&camera.view_proj(), centre);
        assert!((shifted.y - plain.y).abs() < 1e-6 && (shifted.z - plain.z).abs() < 1e-6);
    }
}
