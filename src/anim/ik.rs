//! Two-bone inverse kinematics (hip-knee-ankle, shoulder-elbow-wrist): an
//! analytic solve in model space, written back as the local rotations of the
//! chain's first two joints.
//!
//! It rewrites only the chain's two local rotations (bone lengths never
//! change) and never allocates; the caller recomputes model matrices from the
//! locals afterwards.
//!
//! - The mid joint is a hinge: its bend (0 = straight) is what the law of
//!   cosines asks for, kept within `[min_bend, max_bend]`.
//! - The bend plane goes through the start joint, the target and the pole
//!   (a point the knee should point towards), so it does not flip when the
//!   chain straightens: near full extension the current chain's own plane is
//!   ill-defined, the pole's is not.
//! - Soft reach: past `softness` of the chain's length the reach grows ever
//!   slower towards full length (an exponential ease), so a leg does not
//!   snap straight as its target moves away.
//! - `weight` blends each local rotation from the authored (0) to the solved
//!   (1) one.

use super::job::{JobError, check_len};
use super::skeleton::NO_PARENT;
use super::transform::Transform;
use nalgebra::{Matrix4, Rotation3, UnitQuaternion, Vector3};

/// The solve of one chain.
#[derive(Debug)]
pub struct TwoBoneIkJob<'a> {
    /// Parent of each joint.
    pub parents: &'a [u32],
    /// Model-space matrix of each joint for the current locals.
    pub models: &'a [Matrix4<f32>],
    /// Local transforms; the rotations of `start` and `mid` are replaced.
    pub locals: &'a mut [Transform],
    /// First joint (hip, shoulder).
    pub start: usize,
    /// Hinge joint (knee, elbow), a descendant of `start`.
    pub mid: usize,
    /// Last joint (ankle, wrist), a descendant of `mid`.
    pub end: usize,
    /// Where `end` should be, model space.
    pub target: Vector3<f32>,
    /// A point the hinge bends towards, model space.
    pub pole: Vector3<f32>,
    /// Smallest bend of the hinge, radians (0: may straighten fully).
    pub min_bend: f32,
    /// Largest bend, radians (below pi).
    pub max_bend: f32,
    /// Share of the full reach from which the reach eases (1: off).
    pub softness: f32,
    /// 0: the authored pose; 1: solved.
    pub weight: f32,
}

/// What a solve did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IkSolution {
    /// Distance from where the end joint lands (at full weight) to the
    /// target: 0 when reached, more when out of reach, limited or softened.
    pub error: f32,
    /// The hinge's bend after the solve (at full weight), radians.
    pub bend: f32,
}

impl TwoBoneIkJob<'_> {
    /// Checks lengths, joint indices, the chain's ancestry and the settings.
    pub fn validate(&self) -> Result<(), JobError> {
        let n = self.parents.len();
        check_len("two-bone ik: models", self.models.len(), n)?;
        check_len("two-bone ik: locals", self.locals.len(), n)?;
        for (what, j) in [("start", self.start), ("mid", self.mid), ("end", self.end)] {
            if j >= n {
                return Err(JobError::new(format!("two-bone ik: {what} joint {j}, skeleton has {n}")));
            }
        }
        let descends = |child: usize, ancestor: usize| {
            let mut j = child;
            while self.parents[j] != NO_PARENT && (self.parents[j] as usize) < j {
                j = self.parents[j] as usize;
                if j == ancestor {
                    return true;
                }
            }
            false
        };
        if !descends(self.mid, self.start) || !descends(self.end, self.mid) {
            return Err(JobError::new("two-bone ik: the joints are not a start-mid-end chain"));
        }
        let finite = [self.target, self.pole].iter().all(|v| v.iter().all(|x| x.is_finite()));
        if !finite {
            return Err(JobError::new("two-bone ik: target or pole not finite"));
        }
        let limits =
            0.0 <= self.min_bend && self.min_bend <= self.max_bend && self.max_bend < std::f32::consts::PI;
        if !limits {
            return Err(JobError::new(format!(
                "two-bone ik: bend limits {}..{} are not within [0, pi)",
                self.min_bend, self.max_bend
            )));
        }
        let settings = self.softness > 0.0 && self.softness <= 1.0 && (0.0..=1.0).contains(&self.weight);
        if !settings {
            return Err(JobError::new("two-bone ik: softness must be in (0, 1] and weight in [0, 1]"));
        }
        Ok(())
    }

    /// Validates, then solves. Never allocates.
    pub fn run(&mut self) -> Result<IkSolution, JobError> {
        self.validate()?;
        let position = |j: usize| self.models[j].column(3).xyz();
        let (s, m, e) = (position(self.start), position(self.mid), position(self.end));
        let (a, b) = ((m - s).norm(), (e - m).norm());
        let to_target = self.target - s;
        let distance = to_target.norm();
        let reach = a + b;
        if a < 1e-6 || b < 1e-6 {
            return Ok(IkSolution { error: (e - self.target).norm(), bend: 0.0 });
        }
        // The distance the chain spans: eased past `softness` of its reach,
        // then within what the hinge limits allow.
        let soft_start = self.softness * reach;
        let mut c = if distance > soft_start && self.softness < 1.0 {
            let band = reach - soft_start;
            soft_start + band * (1.0 - (-(distance - soft_start) / band).exp())
        } else {
            distance
        };
        let span = |bend: f32| (a * a + b * b + 2.0 * a * b * bend.cos()).max(0.0).sqrt();
        c = c.clamp(span(self.max_bend), span(self.min_bend));
        let cos_inner = ((a * a + b * b - c * c) / (2.0 * a * b)).clamp(-1.0, 1.0);
        let bend = std::f32::consts::PI - cos_inner.acos();

        // Directions: `u` towards the target, `v` towards the pole within
        // the bend plane (or the chain's own bend when the pole is on the line).
        let u = if distance > 1e-6 { to_target / distance } else { (e - s).normalize() };
        let side = |p: Vector3<f32>| p - u * p.dot(&u);
        let v = [side(self.pole - s), side(m - s), u.cross(&Vector3::x()), u.cross(&Vector3::z())]
            .into_iter()
            .find(|w| w.norm() > 1e-5)
            .map_or(Vector3::y(), |w| w.normalize());
        let cos_start = ((a * a + c * c - b * b) / (2.0 * a * c.max(1e-6))).clamp(-1.0, 1.0);
        let sin_start = (1.0 - cos_start * cos_start).sqrt();
        let mid_solved = s + (u * cos_start + v * sin_start) * a;
        let end_solved = s + u * c;

        // The start joint turns its bone onto the solved one; the hinge then
        // turns the lower bone (already carried by that turn) onto its own.
        let turn_start = rotation_between(&(m - s), &(mid_solved - s));
        let lower = turn_start * (e - m);
        let turn_mid = rotation_between(&lower, &(end_solved - mid_solved));

        let rotation = |j: usize| model_rotation(&self.models[j]);
        let parent_rotation = |j: usize| match self.parents[j] {
            NO_PARENT => UnitQuaternion::identity(),
            p => rotation(p as usize),
        };
        // Model-space turns expressed in each joint's parent space.
        let q_ps = parent_rotation(self.start);
        let start_local = q_ps.inverse() * turn_start * q_ps * self.locals[self.start].rotation;
        let q_pm = parent_rotation(self.mid);
        let mid_local = q_pm.inverse()
            * turn_start.inverse()
            * turn_mid
            * turn_start
            * q_pm
            * self.locals[self.mid].rotation;
        // The ends are exact: at weight 0 the authored pose is untouched.
        let blend = |from: UnitQuaternion<f32>, to: UnitQuaternion<f32>| match self.weight {
            w if w <= 0.0 => from,
            w if w >= 1.0 => to,
            w => from.try_slerp(&to, w, 1e-6).unwrap_or(to),
        };
        self.locals[self.start].rotation = blend(self.locals[self.start].rotation, start_local);
        self.locals[self.mid].rotation = blend(self.locals[self.mid].rotation, mid_local);
        Ok(IkSolution { error: (end_solved - self.target).norm(), bend })
    }
}

/// The shortest rotation taking direction `from` onto direction `to`
/// (identity for a zero vector; a half turn about a perpendicular axis for
/// opposite directions).
fn rotation_between(from: &Vector3<f32>, to: &Vector3<f32>) -> UnitQuaternion<f32> {
    UnitQuaternion::rotation_between(from, to).unwrap_or_else(|| {
        if from.norm() < 1e-9 || to.norm() < 1e-9 {
            return UnitQuaternion::identity();
        }
        let axis = [from.cross(&Vector3::x()), from.cross(&Vector3::y())]
            .into_iter()
            .max_by(|p, q| p.norm().total_cmp(&q.norm()))
            .unwrap_or_else(Vector3::z);
        UnitQuaternion::from_axis_angle(&nalgebra::Unit::new_normalize(axis), std::f32::consts::PI)
    })
}

/// The rotation of a model matrix (scale divided out of its columns).
pub fn model_rotation(m: &Matrix4<f32>) -> UnitQuaternion<f32> {
    let mut r = m.fixed_view::<3, 3>(0, 0).into_owned();
    for mut col in r.column_iter_mut() {
        let n = col.norm();
        if n > 0.0 {
            col /= n;
        }
    }
    UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix(&r))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::LocalToModelJob;

    /// A leg hanging down: hip at y = 1 under a root, knee 0.5 below, ankle 0.5 below that.
    fn leg() -> (Vec<u32>, Vec<Transform>) {
        let t =
            |x: f32, y: f32, z: f32| Transform { translation: Vector3::new(x, y, z), ..Transform::IDENTITY };
        (
            vec![NO_PARENT, 0, 1, 2],
            vec![t(0.0, 1.0, 0.0), t(0.1, 0.0, 0.0), t(0.0, -0.5, 0.0), t(0.0, -0.5, 0.0)],
        )
    }

    fn models(parents: &[u32], locals: &[Transform]) -> Vec<Matrix4<f32>> {
        let mut out = vec![Matrix4::identity(); locals.len()];
        LocalToModelJob { parents, locals, root: Matrix4::identity(), output: &mut out }.run().unwrap();
        out
    }

    fn solve(
        locals: &mut [Transform],
        target: Vector3<f32>,
        pole: Vector3<f32>,
        limits: (f32, f32),
        softness: f32,
        weight: f32,
    ) -> IkSolution {
        let (parents, _) = leg();
        let m = models(&parents, locals);
        TwoBoneIkJob {
            parents: &parents,
            models: &m,
            locals,
            start: 1,
            mid: 2,
            end: 3,
            target,
            pole,
            min_bend: limits.0,
            max_bend: limits.1,
            softness,
            weight,
        }
        .run()
        .unwrap()
    }

    fn position(locals: &[Transform], j: usize) -> Vector3<f32> {
        let (parents, _) = leg();
        models(&parents, locals)[j].column(3).xyz()
    }

    const FORWARD: Vector3<f32> = Vector3::new(0.1, 1.0, 5.0);

    #[test]
    fn reaches_a_reachable_target_bending_towards_the_pole() {
        let (_, mut locals) = leg();
        let target = Vector3::new(0.1, 0.3, 0.2);
        let solution = solve(&mut locals, target, FORWARD, (0.0, 2.8), 1.0, 1.0);
        assert!((position(&locals, 3) - target).norm() < 1e-4, "{:?}", position(&locals, 3));
        assert!(solution.error < 1e-4);
        let knee = position(&locals, 2);
        assert!(knee.z > 0.05, "the knee points forward, to the pole: {knee:?}");
        // Bone lengths unchanged.
        assert!(((knee - position(&locals, 1)).norm() - 0.5).abs() < 1e-5);
        // A pole behind: the knee bends backwards instead.
        let (_, mut locals) = leg();
        solve(&mut locals, target, Vector3::new(0.1, 1.0, -5.0), (0.0, 2.8), 1.0, 1.0);
        assert!(position(&locals, 2).z < -0.05);
    }

    #[test]
    fn bend_limits_hold_and_report_the_miss() {
        // Too close: the hinge stops at its largest bend.
        let (_, mut locals) = leg();
        let s = solve(&mut locals, Vector3::new(0.1, 0.95, 0.05), FORWARD, (0.1, 2.0), 1.0, 1.0);
        assert!((s.bend - 2.0).abs() < 1e-4, "{}", s.bend);
        assert!(s.error > 0.1);
        // Too far: never straighter than the smallest bend.
        let (_, mut locals) = leg();
        let s = solve(&mut locals, Vector3::new(0.1, -2.0, 0.0), FORWARD, (0.1, 2.0), 1.0, 1.0);
        assert!((s.bend - 0.1).abs() < 1e-4, "{}", s.bend);
        assert!(s.error > 1.0);
        // Pointing at the target all the same.
        let (hip, ankle) = (position(&locals, 1), position(&locals, 3));
        let dir = (ankle - hip).normalize();
        assert!((dir - Vector3::new(0.0, -1.0, 0.0)).norm() < 1e-3, "{dir:?}");
    }

    #[test]
    fn stays_on_the_pole_side_and_continuous_through_full_extension() {
        // The target moves from a bent reach to past full extension and back.
        let mut previous: Option<(Vector3<f32>, f32)> = None;
        for i in 0..=200 {
            let k = if i <= 100 { i } else { 200 - i } as f32 / 100.0;
            let depth = 0.7 + 0.5 * k; // hip-to-target from 0.7 to 1.2 (reach 1.0)
            let (_, mut locals) = leg();
            let s = solve(&mut locals, Vector3::new(0.1, 1.0 - depth, 0.0), FORWARD, (0.0, 2.8), 0.95, 1.0);
            let knee = position(&locals, 2);
            assert!(knee.z >= -1e-6, "step {i}: the knee flipped behind: {knee:?}");
            if let Some((before, bend)) = previous {
                assert!(
                    (knee - before).norm() < 0.02,
                    "step {i}: the knee jumped {}",
                    (knee - before).norm()
                );
                assert!((s.bend - bend).abs() < 0.1, "step {i}: the bend jumped");
            }
            // The soft reach never straightens the leg entirely.
            assert!(s.bend > 1e-3, "step {i}: straight");
            previous = Some((knee, s.bend));
        }
    }

    #[test]
    fn weight_blends_back_to_the_authored_pose() {
        let (_, authored) = leg();
        let target = Vector3::new(0.1, 0.3, 0.2);
        let mut zero = authored.clone();
        solve(&mut zero, target, FORWARD, (0.0, 2.8), 1.0, 0.0);
        assert_eq!(zero, authored, "weight 0 changes nothing");
        let mut full = authored.clone();
        solve(&mut full, target, FORWARD, (0.0, 2.8), 1.0, 1.0);
        let mut half = authored.clone();
        solve(&mut half, target, FORWARD, (0.0, 2.8), 1.0, 0.5);
        for j in [1, 2] {
            let (a, h, f) = (authored[j].rotation, half[j].rotation, full[j].rotation);
            assert!((a.angle_to(&h) - h.angle_to(&f)).abs() < 1e-4, "joint {j}: half-way");
        }
    }

    #[test]
    fn rejects_a_broken_chain() {
        let (parents, mut locals) = leg();
        let m = models(&parents, &locals);
        let mut job = TwoBoneIkJob {
            parents: &parents,
            models: &m,
            locals: &mut locals,
            start: 2,
            mid: 1,
            end: 3,
            target: Vector3::zeros(),
            pole: FORWARD,
            min_bend: 0.0,
            max_bend: 2.0,
            softness: 1.0,
            weight: 1.0,
        };
        assert!(job.run().is_err());
        job.start = 1;
        job.mid = 2;
        job.max_bend = 4.0;
        assert!(job.run().is_err());
        job.max_bend = 2.0;
        job.target.x = f32::NAN;
        assert!(job.run().is_err());
        job.target.x = 0.0;
        // Softness 0 would ease from the start joint outwards: rejected.
        job.softness = 0.0;
        assert!(job.run().is_err());
        job.softness = 1e-3;
        assert!(job.run().is_ok());
    }

    #[test]
    fn a_zero_length_bone_leaves_the_pose_alone() {
        // The ankle sits on the knee: no plane to bend in, so nothing moves
        // (and nothing becomes NaN); the miss is reported.
        let (_, mut locals) = leg();
        locals[3].translation = Vector3::zeros();
        let authored = locals.clone();
        let target = Vector3::new(0.1, 0.3, 0.2);
        let s = solve(&mut locals, target, FORWARD, (0.0, 2.8), 1.0, 1.0);
        assert_eq!(locals, authored);
        assert_eq!(s.bend, 0.0);
        assert!((s.error - (position(&locals, 3) - target).norm()).abs() < 1e-6);
    }

    #[test]
    fn model_rotation_survives_a_zero_scale_axis() {
        // A joint scaled to nothing on one axis (a hidden part): the
        // rotation stays finite.
        let m = Matrix4::new_nonuniform_scaling(&Vector3::new(0.0, 2.0, 3.0));
        let r = model_rotation(&m);
        assert!(r.coords.iter().all(|c| c.is_finite()), "{r:?}");
        let turned = Matrix4::from_axis_angle(&Vector3::y_axis(), 0.5) * Matrix4::new_scaling(2.0);
        assert!((model_rotation(&turned).angle() - 0.5).abs() < 1e-5);
    }
}
