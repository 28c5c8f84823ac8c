//! The error metric, in the style of ACL: how far a virtual vertex at a set
//! distance from each joint moves in object space when a pose is replaced by
//! another. Errors of every joint above it move a vertex too, so the metric
//! sees error accumulated down the hierarchy, as a skinned mesh would.
//!
//! Measurement only: it never changes a pose or a track.

use crate::anim::{NO_PARENT, Skeleton, Transform};
use nalgebra::{Matrix4, Vector4};

/// Virtual vertices of every joint and the local-error scales derived from
/// them (for key reduction, which works one track at a time).
#[derive(Debug, Clone)]
pub struct ErrorMetric {
    parents: Vec<u32>,
    /// Distance of the virtual vertices along the joint's local x, y and z
    /// axes, in the joint's local units: the object-space distance divided
    /// by the joint's scale at rest, so that a model authored in
    /// centimetres under a 0.01 root scale gets vertices 3 cm away, not 0.03 cm.
    vertex: Vec<f64>,
    /// Object-space distance from each joint's origin to the farthest
    /// virtual vertex of it or any descendant, at rest: a rotation error of
    /// `a` radians at the joint moves a vertex by at most `a * reach`.
    reach: Vec<f64>,
    /// Object-space scale of each joint's parent at rest (1 for roots): a
    /// translation error `d` moves a vertex by `d * parent_scale`.
    parent_scale: Vec<f64>,
    /// Smallest magnitude of each joint's rest scale components: a scale
    /// error `d` moves a vertex by about `d / min_scale * reach`.
    min_scale: Vec<f64>,
}

/// Largest column length of the upper 3x3 of `m`: how much it scales.
fn scale_of(m: &Matrix4<f64>) -> f64 {
    (0..3).map(|c| m.fixed_view::<3, 1>(0, c).norm()).fold(0.0, f64::max)
}

impl ErrorMetric {
    /// The metric for `skeleton` with virtual vertices `distance` object-space
    /// units (metres for glTF) from each joint.
    pub fn new(skeleton: &Skeleton, distance: f64) -> Self {
        let parents = skeleton.parents().to_vec();
        let rest = skeleton.rest();
        let n = parents.len();
        let mut world = vec![Matrix4::<f64>::identity(); n];
        for j in 0..n {
            let local = rest[j].to_matrix_f64();
            world[j] = match parents[j] {
                NO_PARENT => local,
                p => world[p as usize] * local,
            };
        }
        let vertex: Vec<f64> = world
            .iter()
            .map(|m| {
                let s = scale_of(m);
                if s > 1e-12 && s.is_finite() { distance / s } else { distance }
            })
            .collect();
        let mut reach = vec![distance; n];
        for k in 0..n {
            for axis in 0..3 {
                let mut p = Vector4::new(0.0, 0.0, 0.0, 1.0);
                p[axis] = vertex[k];
                let p = (world[k] * p).xyz();
                // The vertex moves with every ancestor's error.
                let mut a = k as u32;
                while a != NO_PARENT {
                    let origin = world[a as usize].fixed_view::<3, 1>(0, 3).into_owned();
                    reach[a as usize] = reach[a as usize].max((p - origin).norm());
                    a = parents[a as usize];
                }
            }
        }
        let parent_scale = parents
            .iter()
            .map(|&p| if p == NO_PARENT { 1.0 } else { scale_of(&world[p as usize]) })
            .collect();
        let min_scale = rest
            .iter()
            .map(|t| t.scale.iter().map(|s| f64::from(s.abs())).fold(f64::INFINITY, f64::min).max(1e-6))
            .collect();
        ErrorMetric { parents, vertex, reach, parent_scale, min_scale }
    }

    /// Number of joints.
    pub fn joints(&self) -> usize {
        self.parents.len()
    }

    /// Object-space movement per unit of translation error at joint `j`.
    pub fn translation_scale(&self, j: usize) -> f64 {
        self.parent_scale[j]
    }

    /// Object-space movement per radian of rotation error at joint `j`.
    pub fn rotation_scale(&self, j: usize) -> f64 {
        self.reach[j]
    }

    /// Object-space movement per unit of scale error at joint `j`.
    pub fn scale_scale(&self, j: usize) -> f64 {
        self.reach[j] / self.min_scale[j]
    }

    /// Parent of joint `j` (`NO_PARENT` for a root).
    pub fn parent(&self, j: usize) -> u32 {
        self.parents[j]
    }

    /// Object-space matrices of a local pose, in f64 (`out` as long as the skeleton).
    pub fn world(&self, locals: &[Transform], out: &mut [Matrix4<f64>]) {
        for (j, local) in locals.iter().enumerate().take(out.len()) {
            let m = local.to_matrix_f64();
            out[j] = match self.parents[j] {
                NO_PARENT => m,
                p => out[p as usize] * m,
            };
        }
    }

    /// Per joint, the farthest any of its three virtual vertices lies from
    /// where `expected` puts it when `actual` is used instead (object-space
    /// units), written to `errors`.
    pub fn vertex_errors(&self, expected: &[Matrix4<f64>], actual: &[Matrix4<f64>], errors: &mut [f64]) {
        for (j, error) in errors.iter_mut().enumerate() {
            let d = expected[j] - actual[j];
            let origin = d.fixed_view::<3, 1>(0, 3).into_owned();
            *error = (0..3)
                .map(|axis| (origin + d.fixed_view::<3, 1>(0, axis) * self.vertex[j]).norm())
                .fold(0.0, f64::max);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{UnitQuaternion, Vector3};

    fn chain() -> Skeleton {
        // Root at the origin, a child 1 m up x, a grandchild 1 m further.
        let t = |x: f32| Transform { translation: Vector3::new(x, 0.0, 0.0), ..Transform::IDENTITY };
        Skeleton::new(
            vec!["a".into(), "b".into(), "c".into()],
            vec![NO_PARENT, 0, 1],
            vec![t(0.0), t(1.0), t(1.0)],
        )
        .unwrap()
    }

    #[test]
    fn reach_spans_descendants_and_vertices() {
        let m = ErrorMetric::new(&chain(), 0.03);
        // From the root: the grandchild's +x vertex at 2.03 m.
        assert!((m.rotation_scale(0) - 2.03).abs() < 1e-12);
        assert!((m.rotation_scale(2) - 0.03).abs() < 1e-12);
    }

    #[test]
    fn rotation_error_at_root_moves_the_far_vertex_by_angle_times_distance() {
        let skeleton = chain();
        let m = ErrorMetric::new(&skeleton, 0.03);
        let mut moved = skeleton.rest().to_vec();
        let angle = 1e-4;
        moved[0].rotation = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), angle);
        let (mut a, mut b) = (vec![Matrix4::identity(); 3], vec![Matrix4::identity(); 3]);
        m.world(skeleton.rest(), &mut a);
        m.world(&moved, &mut b);
        let mut e = [0.0; 3];
        m.vertex_errors(&a, &b, &mut e);
        // The grandchild's +x vertex is 2.03 m from the pivot: chord of 1e-4 rad.
        let expected = 2.0 * 2.03 * (angle as f64 / 2.0).sin();
        assert!((e[2] - expected).abs() < 1e-9, "{} vs {expected}", e[2]);
        assert!(e[2] <= m.rotation_scale(0) * angle as f64 + 1e-12);
    }

    #[test]
    fn vertex_distance_follows_the_units() {
        // A centimetre skeleton under a 0.01 root scale: vertices 3 cm away in metres.
        let root = Transform { scale: Vector3::new(0.01, 0.01, 0.01), ..Transform::IDENTITY };
        let child = Transform { translation: Vector3::new(100.0, 0.0, 0.0), ..Transform::IDENTITY };
        let s = Skeleton::new(vec!["r".into(), "c".into()], vec![NO_PARENT, 0], vec![root, child]).unwrap();
        let m = ErrorMetric::new(&s, 0.03);
        // (0.01 is not exact in f32.)
        assert!((m.vertex[1] - 3.0).abs() < 1e-5, "{}", m.vertex[1]);
        assert!((m.translation_scale(1) - 0.01).abs() < 1e-8);
        assert!((m.rotation_scale(1) - 0.03).abs() < 1e-8);
    }
}
