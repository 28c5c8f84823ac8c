//! An orbit camera for the viewer: orbit around a target (left drag), pan
//! the target in the view plane (right/middle drag, shift+left), zoom by
//! moving towards it (wheel). It starts framing the character the way
//! `render::camera::Camera::frame_box` frames headless renders.

use crate::render::camera::{Camera, DEFAULT_FOV_Y};
use nalgebra::{Point3, Vector3};

/// Radians of orbit per pixel dragged.
const ORBIT_PER_PIXEL: f32 = 0.008;
/// Zoom factor per wheel line.
const ZOOM_PER_LINE: f32 = 0.9;
/// Pitch stays short of the poles so "up" stays defined.
const MAX_PITCH: f32 = 1.5;

/// Spherical coordinates around a target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OrbitCamera {
    /// Point orbited around.
    pub target: Point3<f32>,
    /// Eye distance from the target.
    pub distance: f32,
    /// Rotation around world +Y, radians (0: the eye on +Z).
    pub yaw: f32,
    /// Elevation, radians (positive: looking down).
    pub pitch: f32,
    /// Radius of the framed bounds (clip planes and zoom limits).
    pub radius: f32,
    /// Vertical field of view.
    pub fov_y: f32,
}

impl OrbitCamera {
    /// A camera framing the box `min..max` at `aspect`, as headless renders do.
    pub fn framing(min: [f32; 3], max: [f32; 3], aspect: f32) -> Self {
        let framed = Camera::frame_box(min, max, aspect, DEFAULT_FOV_Y);
        let offset = framed.eye - framed.target;
        let distance = offset.norm().max(1e-4);
        let half = (Vector3::from(max) - Vector3::from(min)) * 0.5;
        let radius = if half.iter().all(|v| v.is_finite()) { half.norm().max(1e-3) } else { 1.0 };
        OrbitCamera {
            target: framed.target,
            distance,
            yaw: offset.x.atan2(offset.z),
            pitch: (offset.y / distance).clamp(-1.0, 1.0).asin(),
            radius,
            fov_y: DEFAULT_FOV_Y,
        }
    }

    fn back(&self) -> Vector3<f32> {
        Vector3::new(self.pitch.cos() * self.yaw.sin(), self.pitch.sin(), self.pitch.cos() * self.yaw.cos())
    }

    /// The direction the camera looks, flattened onto the ground (unit):
    /// "forward" for keys that move a character.
    pub fn ground_forward(&self) -> Vector3<f32> {
        Vector3::new(-self.yaw.sin(), 0.0, -self.yaw.cos())
    }

    /// Orbits by a drag of `(dx, dy)` pixels (right drag turns the model to the right).
    pub fn orbit(&mut self, dx: f32, dy: f32) {
        self.yaw -= dx * ORBIT_PER_PIXEL;
        self.pitch = (self.pitch + dy * ORBIT_PER_PIXEL).clamp(-MAX_PITCH, MAX_PITCH);
    }

    /// Pans the target so the point under the cursor follows a drag of
    /// `(dx, dy)` pixels in a viewport `height` pixels high.
    pub fn pan(&mut self, dx: f32, dy: f32, height: f32) {
        let back = self.back();
        let right = Vector3::y().cross(&back).normalize();
        let up = back.cross(&right);
        let per_pixel = 2.0 * self.distance * (self.fov_y * 0.5).tan() / height.max(1.0);
        self.target += (-right * dx + up * dy) * per_pixel;
    }

    /// Zooms by `lines` wheel lines (positive: closer).
    pub fn zoom(&mut self, lines: f32) {
        let factor = ZOOM_PER_LINE.powf(lines);
        self.distance = (self.distance * factor).clamp(self.radius * 0.05, self.radius * 200.0);
    }

    /// The camera for a viewport of `aspect` (width over height).
    pub fn camera(&self, aspect: f32) -> Camera {
        let eye = self.target + self.back() * self.distance;
        // Clip planes hug the framed sphere around the target, however far
        // the eye is: near never reaches 0 (depth precision), far covers the sphere.
        let near = (self.distance - self.radius * 2.0).max(self.distance * 0.01).max(1e-4);
        let far = (self.distance + self.radius * 4.0).max(near * 2.0);
        Camera {
            eye,
            target: self.target,
            up: Vector3::y(),
            fov_y: self.fov_y,
            aspect: if aspect.is_finite() && aspect > 0.0 { aspect } else { 1.0 },
            near,
            far,
            lens_shift: 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_where_frame_box_looks_from() {
        let (min, max) = ([-0.5, 0.0, -0.2], [0.5, 1.8, 0.2]);
        let orbit = OrbitCamera::framing(min, max, 1.5);
        let framed = Camera::frame_box(min, max, 1.5, DEFAULT_FOV_Y);
        let cam = orbit.camera(1.5);
        assert!((cam.eye - framed.eye).norm() < 1e-3, "{:?} vs {:?}", cam.eye, framed.eye);
        assert!((cam.target - framed.target).norm() < 1e-5);
    }

    #[test]
    fn orbit_pan_zoom() {
        let mut orbit = OrbitCamera::framing([-1.0; 3], [1.0; 3], 1.0);
        let d = orbit.distance;
        orbit.zoom(1.0);
        assert!(orbit.distance < d);
        orbit.zoom(-1000.0);
        assert!(orbit.distance <= orbit.radius * 200.0 + 1e-3);
        let target = orbit.target;
        orbit.pan(10.0, 0.0, 100.0);
        assert!((orbit.target - target).norm() > 0.0);
        orbit.orbit(0.0, 1e6);
        assert!(orbit.pitch <= MAX_PITCH);
        let cam = orbit.camera(1.0);
        assert!(cam.near > 0.0 && cam.far > cam.near);
    }
}
