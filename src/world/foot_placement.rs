//! Foot placement: planted feet put on the ground the physics world has
//! under them (stairs, ramps), after the animation is evaluated.
//!
//! Per update, for each leg: rays down under the animated ankle and toes
//! find the ground (the higher of the two: a foot rests on a step's edge
//! rather than hanging off it); a planted foot keeps the ground it landed on
//! until it lifts, so its target does not jump when it rolls over an edge.
//! The foot's target is the animated ankle raised or lowered by that
//! ground's height above the entity's own ground: the foot keeps the height
//! the clip gives it above whatever it stands on. The pelvis is lowered as
//! far as the deepest planted foot needs, to its ground and within the
//! leg's reach; the legs are solved with two-bone IK (knees towards the
//! character's front), and each foot turns to the ground's normal. All of
//! it is weighted by how planted the animated foot is (its ankle within 2 cm
//! of its standing height: full; from 6 cm: none), smoothed over 0.1 s, so
//! IK fades in and out instead of popping. The animated pose itself is not
//! changed: the result is published as the character's edited pose.
//!
//! It edits the character's pose after the update and never changes its
//! playback, parameters or state; it never allocates after `new`.

use super::error::WorldError;
use super::physics::PhysicsWorld;
use crate::anim::Rig;
use crate::anim::ik::model_rotation;
use crate::anim::{JobError, LocalToModelJob, NO_PARENT, Transform, TwoBoneIkJob};
use crate::character::Character;
use nalgebra::{Isometry3, Matrix4, UnitQuaternion, Vector3};

/// How long a foot's planted weight takes to go from 0 to 1, seconds.
const PLANT_TIME: f32 = 0.1;
/// Ankle heights above standing that count as planted (full, none), metres.
const PLANTED_BAND: (f32, f32) = (0.02, 0.06);
/// How far above the entity's ground the ground rays start, metres.
const RAY_START: f32 = 0.75;
/// How far they look down, metres.
const RAY_LENGTH: f32 = 1.5;

/// A leg's joints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leg {
    /// Hip (the thigh's joint).
    pub hip: usize,
    /// Knee.
    pub knee: usize,
    /// Ankle (the foot's joint).
    pub ankle: usize,
    /// Toes, when the rig has them (a second ground ray).
    pub toes: Option<usize>,
}

/// Softness of the legs' IK reach (see `TwoBoneIkJob::softness`).
const SOFTNESS: f32 = 0.97;

/// What one foot did in the last update.
#[derive(Debug, Clone, PartialEq)]
pub struct FootReport {
    /// The ankle joint's name.
    pub joint: String,
    /// Where the ankle was sent, world space.
    pub target: Vector3<f32>,
    /// Distance from the solved ankle to its target, centimetres.
    pub error_cm: f32,
    /// Whether the foot is planted: its IK fully blended in.
    pub planted: bool,
}

/// Foot placement for one character.
#[derive(Debug, Clone)]
pub struct FootPlacement {
    legs: [Leg; 2],
    pelvis: usize,
    /// Each ankle's height above the model's ground when standing.
    standing: [f32; 2],
    planted: [f32; 2],
    /// The ground (height, normal in world space) a planted foot landed on.
    latched: [Option<(f32, Vector3<f32>)>; 2],
    pelvis_offset: f32,
    animated: Vec<Matrix4<f32>>,
    models: Vec<Matrix4<f32>>,
    reports: [FootReport; 2],
}

impl FootPlacement {
    /// For the legs named `legs` (hip, knee, ankle and, optionally, toes
    /// each) and the `pelvis` joint lowered to let a foot reach down.
    pub fn new(
        rig: &Rig,
        legs: [(&str, &str, &str, Option<&str>); 2],
        pelvis: &str,
    ) -> Result<Self, WorldError> {
        let find =
            |name: &str| rig.skeleton.find(name).ok_or_else(|| WorldError::MissingJoint(name.to_string()));
        let leg = |(h, k, a, t): (&str, &str, &str, Option<&str>)| -> Result<Leg, WorldError> {
            Ok(Leg { hip: find(h)?, knee: find(k)?, ankle: find(a)?, toes: t.map(find).transpose()? })
        };
        let legs = [leg(legs[0])?, leg(legs[1])?];
        let joints = rig.skeleton.len();
        let mut rest = vec![Matrix4::identity(); joints];
        model_space(rig.skeleton.parents(), rig.skeleton.rest(), &mut rest)?;
        let report = |l: &Leg| FootReport {
            joint: rig.skeleton.names()[l.ankle].clone(),
            target: Vector3::zeros(),
            error_cm: 0.0,
            planted: false,
        };
        Ok(FootPlacement {
            standing: legs.map(|l| rest[l.ankle][(1, 3)]),
            reports: [report(&legs[0]), report(&legs[1])],
            legs,
            pelvis: find(pelvis)?,
            planted: [0.0; 2],
            latched: [None; 2],
            pelvis_offset: 0.0,
            animated: rest.clone(),
            models: rest,
        })
    }

    /// The built-in character's legs (UpperLeg, LowerLeg, Foot, Toes; .L
    /// and .R) and pelvis (Hips); other humanoids named the same way work too.
    pub fn humanoid(rig: &Rig) -> Result<Self, WorldError> {
        Self::new(
            rig,
            [
                ("UpperLeg.L", "LowerLeg.L", "Foot.L", Some("Toes.L")),
                ("UpperLeg.R", "LowerLeg.R", "Foot.R", Some("Toes.R")),
            ],
            "Hips",
        )
    }

    /// The last update's per-foot results.
    pub fn reports(&self) -> &[FootReport; 2] {
        &self.reports
    }

    /// Places the feet of `character` (just updated) standing at `entity`
    /// on `world`'s ground; `dt` paces the fades. Never allocates.
    pub fn apply(
        &mut self,
        character: &mut Character,
        world: &PhysicsWorld,
        entity: &Isometry3<f32>,
        dt: f32,
    ) -> Result<(), JobError> {
        character.edit();
        self.place(character, world, entity, dt)?;
        character.commit_edit()
    }

    /// `apply` within an edit the caller has begun (`Character::edit`) and
    /// commits: other edits (a hand's reach) follow in the same pose.
    pub fn place(
        &mut self,
        character: &mut Character,
        world: &PhysicsWorld,
        entity: &Isometry3<f32>,
        dt: f32,
    ) -> Result<(), JobError> {
        let rig = character.rig().clone();
        let parents = rig.skeleton.parents();
        model_space(parents, &character.local_pose().locals, &mut self.animated)?;
        let grounds = self.find_grounds(world, entity, dt);
        // No lag of its own: its inputs (the drawn position, which follows
        // steps smoothly; latched grounds; faded weights) move smoothly.
        self.pelvis_offset = self.pelvis_drop(&grounds);

        // The edit: pelvis lowered, legs solved, feet turned.
        let pose = character.edited();
        pose.locals[self.pelvis].translation.y += self.pelvis_offset;
        model_space(parents, &pose.locals, &mut self.models)?;
        let targets = self.solve_legs(parents, &mut pose.locals, &grounds)?;
        model_space(parents, &pose.locals, &mut self.models)?;
        self.turn_feet(parents, &mut pose.locals, &grounds);
        model_space(parents, &pose.locals, &mut self.models)?;
        self.report(entity, &targets);
        Ok(())
    }

    /// For each leg: how planted the animated foot is (faded in and out by
    /// `dt`), and the ground it stands on (the one it landed on while it
    /// stays planted), as a height above the entity's ground and a normal in
    /// the entity's space.
    fn find_grounds(&mut self, world: &PhysicsWorld, entity: &Isometry3<f32>, dt: f32) -> [Ground; 2] {
        let ground_y = entity.translation.vector.y;
        let step = if dt.is_finite() && dt > 0.0 { (dt / PLANT_TIME).min(1.0) } else { 0.0 };
        let mut grounds = [Ground::default(); 2];
        for (i, leg) in self.legs.iter().enumerate() {
            let ankle = position(&self.animated[leg.ankle]);
            let above = ankle.y - self.standing[i];
            let (full, none) = PLANTED_BAND;
            let mut target = ((none - above) / (none - full)).clamp(0.0, 1.0);
            // The higher ground under the heel (ankle) and the toes.
            let ray = |joint: usize| {
                let p = entity.transform_point(&position(&self.animated[joint]).into()).coords;
                world.ground_below(Vector3::new(p.x, ground_y + RAY_START, p.z), RAY_LENGTH)
            };
            let hits = [Some(ray(leg.ankle)), leg.toes.map(ray)];
            let ground = hits.into_iter().flatten().flatten().max_by(|a, b| a.point.y.total_cmp(&b.point.y));
            if ground.is_none() {
                target = 0.0;
            }
            self.planted[i] += (target - self.planted[i]).clamp(-step, step);
            if self.planted[i] <= 0.0 {
                self.latched[i] = None;
            } else if self.latched[i].is_none() {
                self.latched[i] = ground.map(|g| (g.point.y, g.normal));
            }
            if let Some((height, normal)) = self.latched[i].or(ground.map(|g| (g.point.y, g.normal))) {
                grounds[i] = Ground { drop: height - ground_y, normal: entity.rotation.inverse() * normal };
            }
        }
        grounds
    }

    /// How far down the pelvis goes (zero or negative): as far as the
    /// deepest planted foot needs, to reach its ground and to keep its
    /// target within reach.
    fn pelvis_drop(&self, grounds: &[Ground; 2]) -> f32 {
        let mut deepest = 0.0f32;
        for (i, leg) in self.legs.iter().enumerate() {
            let w = self.planted[i];
            let drop = grounds[i].drop;
            let target = position(&self.animated[leg.ankle]) + Vector3::y() * drop;
            let (hip, knee) = (position(&self.animated[leg.hip]), position(&self.animated[leg.knee]));
            let reach = SOFTNESS
                * ((knee - hip).norm()
                    + (target - knee).norm().min((position(&self.animated[leg.ankle]) - knee).norm()));
            let across = Vector3::new(target.x - hip.x, 0.0, target.z - hip.z).norm();
            let reachable_drop = if across < reach { (reach * reach - across * across).sqrt() } else { 0.0 };
            let lower = (hip.y - target.y - reachable_drop).max(0.0);
            deepest = deepest.min(drop.min(-lower) * w);
        }
        deepest
    }

    /// Solves each leg with two-bone IK towards its animated ankle moved to
    /// its ground, weighted by how planted it is; `self.models` is the pose
    /// with the pelvis lowered. Returns the targets (model space).
    fn solve_legs(
        &self,
        parents: &[u32],
        locals: &mut [Transform],
        grounds: &[Ground; 2],
    ) -> Result<[Vector3<f32>; 2], JobError> {
        let mut targets = [Vector3::zeros(); 2];
        for (i, leg) in self.legs.iter().enumerate() {
            targets[i] = position(&self.animated[leg.ankle]) + Vector3::y() * grounds[i].drop;
            let knee = position(&self.models[leg.knee]);
            let length = (position(&self.models[leg.hip]) - knee).norm().max(0.1);
            TwoBoneIkJob {
                parents,
                models: &self.models,
                locals,
                start: leg.hip,
                mid: leg.knee,
                end: leg.ankle,
                target: targets[i],
                // Knees bend towards the character's front (+z).
                pole: knee + Vector3::z() * length,
                min_bend: 0.02,
                max_bend: 2.6,
                softness: SOFTNESS,
                weight: self.planted[i],
            }
            .run()?;
        }
        Ok(targets)
    }

    /// Turns each planted foot to its ground's normal, by how planted it
    /// is; `self.models` is the pose with the legs solved.
    fn turn_feet(&self, parents: &[u32], locals: &mut [Transform], grounds: &[Ground; 2]) {
        for (i, leg) in self.legs.iter().enumerate() {
            let w = self.planted[i];
            if w <= 0.0 {
                continue;
            }
            let tilt =
                UnitQuaternion::rotation_between(&Vector3::y(), &grounds[i].normal).unwrap_or_default();
            let tilt = UnitQuaternion::identity().slerp(&tilt, w);
            let parent = match parents[leg.ankle] {
                NO_PARENT => UnitQuaternion::identity(),
                p => model_rotation(&self.models[p as usize]),
            };
            let ankle = &mut locals[leg.ankle];
            ankle.rotation = parent.inverse() * tilt * parent * ankle.rotation;
        }
    }

    /// Records where each ankle was sent and how far the solved one
    /// (`self.models`, the final pose) is from it.
    fn report(&mut self, entity: &Isometry3<f32>, targets: &[Vector3<f32>; 2]) {
        for (i, leg) in self.legs.iter().enumerate() {
            let solved = position(&self.models[leg.ankle]);
            let report = &mut self.reports[i];
            report.target = entity.transform_point(&targets[i].into()).coords;
            report.error_cm = (solved - targets[i]).norm() * 100.0;
            report.planted = self.planted[i] >= 1.0;
        }
    }
}

/// The ground under one foot, in the entity's frame.
#[derive(Debug, Clone, Copy)]
struct Ground {
    /// Its height above the entity's ground, metres (0 without ground).
    drop: f32,
    /// Its normal (up without ground).
    normal: Vector3<f32>,
}

impl Default for Ground {
    fn default() -> Self {
        Ground { drop: 0.0, normal: Vector3::y() }
    }
}

/// The translation of a joint matrix.
fn position(m: &Matrix4<f32>) -> Vector3<f32> {
    m.column(3).xyz()
}

/// Joint matrices in the character's model space (no root transform).
fn model_space(parents: &[u32], locals: &[Transform], output: &mut [Matrix4<f32>]) -> Result<(), JobError> {
    LocalToModelJob { parents, locals, root: Matrix4::identity(), output }.run()
}
