//! Arm reach: a hand reaching for something in the world, after the
//! animation (and the feet) are evaluated.
//!
//! Per update, for each arm: the target is the point the user set
//! (`Actor::set_reach_target`; only the arm whose shoulder is nearer reaches
//! for it) or else the nearest point of the level's rails to its shoulder.
//! The arm wants to reach while the target is within reach (95 % of the
//! arm's length from the shoulder); its weight goes towards that (0 or 1)
//! over `BLEND_TIME`, eased, so the hand blends in and out instead of
//! popping, and while it fades out it keeps the last target it had. The arm
//! is solved with two-bone IK (`anim::ik`: the elbow's hinge limits, a pole
//! that keeps the elbow out and back, soft reach).
//!
//! It edits the character's edited pose (the caller begins and commits the
//! edit) and never changes playback or parameters; it never allocates after
//! `new`.

use super::error::WorldError;
use super::physics::PhysicsWorld;
use crate::anim::{JobError, LocalToModelJob, Rig, TwoBoneIkJob};
use crate::character::Character;
use nalgebra::{Isometry3, Matrix4, Vector3};

/// How long an arm's weight takes from 0 to 1 and back, seconds.
pub const BLEND_TIME: f32 = 0.3;
/// Share of the arm's length (shoulder to elbow to wrist) within which a
/// target is in reach.
const REACH_SHARE: f32 = 0.95;
/// Softness of the arm's reach (see `TwoBoneIkJob::softness`).
const SOFTNESS: f32 = 0.98;

/// An arm's joints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arm {
    /// Upper arm (the shoulder's ball joint).
    pub upper: usize,
    /// Elbow (the lower arm's joint).
    pub elbow: usize,
    /// Wrist (the hand's joint).
    pub hand: usize,
}

/// What one hand did in the last update.
#[derive(Debug, Clone, PartialEq)]
pub struct HandReport {
    /// The hand joint's name.
    pub joint: String,
    /// Where the hand is sent, world space (the last target it had, or
    /// where the hand is when it has had none).
    pub target: Vector3<f32>,
    /// Distance from the hand to its target, centimetres, at the reach's
    /// weight (0 while the weight is 0; the solve's own error at weight 1).
    pub error_cm: f32,
    /// How far the reach is blended in: 0 the animated arm, 1 solved.
    pub weight: f32,
}

/// Arm reach for one character.
#[derive(Debug, Clone)]
pub struct ArmReach {
    arms: [Arm; 2],
    /// Each arm's length, metres (model space).
    lengths: [f32; 2],
    /// Each arm's weight before easing.
    weights: [f32; 2],
    /// Each arm's target, world space.
    targets: [Option<Vector3<f32>>; 2],
    user_target: Option<Vector3<f32>>,
    models: Vec<Matrix4<f32>>,
    reports: [HandReport; 2],
}

impl ArmReach {
    /// For the arms named `arms` (upper arm, lower arm, hand each).
    pub fn new(rig: &Rig, arms: [(&str, &str, &str); 2]) -> Result<Self, WorldError> {
        let find =
            |name: &str| rig.skeleton.find(name).ok_or_else(|| WorldError::MissingArmJoint(name.to_string()));
        let arm = |(u, e, h): (&str, &str, &str)| -> Result<Arm, WorldError> {
            Ok(Arm { upper: find(u)?, elbow: find(e)?, hand: find(h)? })
        };
        let arms = [arm(arms[0])?, arm(arms[1])?];
        let mut models = vec![Matrix4::identity(); rig.skeleton.len()];
        model_space(rig.skeleton.parents(), rig.skeleton.rest(), &mut models)?;
        let p = |j: usize| models[j].column(3).xyz();
        let lengths = arms.map(|a| (p(a.elbow) - p(a.upper)).norm() + (p(a.hand) - p(a.elbow)).norm());
        let report = |a: &Arm| HandReport {
            joint: rig.skeleton.names()[a.hand].clone(),
            target: Vector3::zeros(),
            error_cm: 0.0,
            weight: 0.0,
        };
        Ok(ArmReach {
            reports: [report(&arms[0]), report(&arms[1])],
            arms,
            lengths,
            weights: [0.0; 2],
            targets: [None; 2],
            user_target: None,
            models,
        })
    }

    /// The built-in character's arms (UpperArm, LowerArm, Hand; .L and .R);
    /// other humanoids named the same way work too.
    pub fn humanoid(rig: &Rig) -> Result<Self, WorldError> {
        Self::new(rig, [("UpperArm.L", "LowerArm.L", "Hand.L"), ("UpperArm.R", "LowerArm.R", "Hand.R")])
    }

    /// A point, world space, for the nearer hand to reach for instead of
    /// the rails (`None`: the rails again). A non-finite one is ignored.
    pub fn set_target(&mut self, target: Option<Vector3<f32>>) {
        if target.is_none_or(|t| t.iter().all(|v| v.is_finite())) {
            self.user_target = target;
        }
    }

    /// The point set by `set_target`.
    pub fn target(&self) -> Option<Vector3<f32>> {
        self.user_target
    }

    /// The last update's per-hand results (left, right).
    pub fn reports(&self) -> &[HandReport; 2] {
        &self.reports
    }

    /// Whether either arm has weight (the pose needs editing).
    pub fn active(&self) -> bool {
        self.weights.iter().any(|w| *w > 0.0)
    }

    /// Updates the weights and targets by `dt` for the character drawn at
    /// `entity` in `world`, from its animated pose. Returns whether an arm
    /// has weight (then `apply` edits the pose).
    pub fn update(
        &mut self,
        character: &Character,
        world: &PhysicsWorld,
        entity: &Isometry3<f32>,
        dt: f32,
    ) -> Result<bool, JobError> {
        let rig = character.rig();
        model_space(rig.skeleton.parents(), &character.local_pose().locals, &mut self.models)?;
        let step = if dt.is_finite() && dt > 0.0 { (dt / BLEND_TIME).min(1.0) } else { 0.0 };
        let shoulders =
            self.arms.map(|a| entity.transform_point(&self.models[a.upper].column(3).xyz().into()).coords);
        // The user's point goes to the nearer shoulder only.
        let nearer =
            self.user_target.map(|t| usize::from((shoulders[1] - t).norm() < (shoulders[0] - t).norm()));
        for (i, shoulder) in shoulders.iter().enumerate() {
            let candidate = match (self.user_target, nearer) {
                (Some(t), Some(n)) => (n == i).then_some(t),
                _ => world.nearest_rail_point(shoulder),
            };
            let in_reach = candidate.is_some_and(|t| (t - shoulder).norm() <= self.lengths[i] * REACH_SHARE);
            if in_reach {
                self.targets[i] = candidate;
            }
            let wanted = if in_reach { 1.0 } else { 0.0 };
            self.weights[i] += (wanted - self.weights[i]).clamp(-step, step);
            if self.weights[i] <= 0.0 && !in_reach {
                self.targets[i] = None;
            }
            if self.weights[i] <= 0.0 {
                let hand = self.models[self.arms[i].hand].column(3).xyz();
                let report = &mut self.reports[i];
                (report.target, report.error_cm, report.weight) =
                    (entity.transform_point(&hand.into()).coords, 0.0, 0.0);
            }
        }
        Ok(self.active())
    }

    /// Solves the arms with weight in `character`'s edited pose (begun by
    /// the caller, committed after) drawn at `entity`; reports each hand.
    pub fn apply(&mut self, character: &mut Character, entity: &Isometry3<f32>) -> Result<(), JobError> {
        let rig = character.rig().clone();
        let parents = rig.skeleton.parents();
        let pose = character.edited();
        model_space(parents, &pose.locals, &mut self.models)?;
        let inverse = entity.inverse();
        for (i, arm) in self.arms.iter().enumerate() {
            let weight = smoothstep(self.weights[i]);
            let hand = self.models[arm.hand].column(3).xyz();
            let report = &mut self.reports[i];
            report.weight = weight;
            report.error_cm = 0.0;
            let Some(target) = self.targets[i].filter(|_| weight > 0.0) else {
                report.target = entity.transform_point(&hand.into()).coords;
                continue;
            };
            report.target = target;
            let local_target = inverse.transform_point(&target.into()).coords;
            let elbow = self.models[arm.elbow].column(3).xyz();
            let upper = (elbow - self.models[arm.upper].column(3).xyz()).norm().max(0.05);
            // The elbow out to its side, back and a little down.
            let side = if self.models[arm.upper][(0, 3)] >= 0.0 { 1.0 } else { -1.0 };
            let pole = elbow + Vector3::new(0.5 * side, -0.3, -0.8).normalize() * upper;
            TwoBoneIkJob {
                parents,
                models: &self.models,
                locals: &mut pose.locals,
                start: arm.upper,
                mid: arm.elbow,
                end: arm.hand,
                target: local_target,
                pole,
                min_bend: 0.05,
                max_bend: 2.5,
                softness: SOFTNESS,
                weight,
            }
            .run()?;
            model_space(parents, &pose.locals, &mut self.models)?;
            let solved = self.models[arm.hand].column(3).xyz();
            self.reports[i].error_cm = (solved - local_target).norm() * 100.0;
        }
        Ok(())
    }
}

/// `x` eased in and out over [0, 1].
fn smoothstep(x: f32) -> f32 {
    let x = x.clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

/// Joint matrices in the character's model space (no root transform).
fn model_space(
    parents: &[u32],
    locals: &[crate::anim::Transform],
    output: &mut [Matrix4<f32>],
) -> Result<(), JobError> {
    LocalToModelJob { parents, locals, root: Matrix4::identity(), output }.run()
}
