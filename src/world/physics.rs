//! The physics world (rapier3d): a level's boxes as static colliders, ray
//! casts against them, and a kinematic character controller moving a
//! capsule through them (sliding along walls, climbing steps, snapping to
//! the ground).

use super::level::{Level, Rail};
use nalgebra::{Isometry3, Point3, Vector3};
use rapier3d::control::{CharacterLength, KinematicCharacterController};
use rapier3d::prelude::{
    BroadPhaseBvh, CCDSolver, Capsule, ColliderBuilder, ColliderSet, ImpulseJointSet, IntegrationParameters,
    IslandManager, MultibodyJointSet, NarrowPhase, PhysicsPipeline, QueryFilter, Ray, RigidBodySet,
};

/// A ground point under a ray.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroundHit {
    /// Where the ray met the ground.
    pub point: Vector3<f32>,
    /// The surface normal there (unit).
    pub normal: Vector3<f32>,
}

/// The shape and limits of a character's collision capsule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CapsuleShape {
    /// Radius, metres.
    pub radius: f32,
    /// Total height, metres (at least twice the radius).
    pub height: f32,
    /// Highest step climbed without jumping (and followed down), metres:
    /// 20 cm climbs any stair, and a 30 cm obstacle needs a jump (the
    /// capsule's round bottom also walks up an edge less than 7 cm above it,
    /// as a 40 degree slope: 25 cm would walk onto 30 cm).
    pub step_height: f32,
    /// Steepest slope walked up, radians.
    pub max_slope: f32,
}

impl Default for CapsuleShape {
    fn default() -> Self {
        CapsuleShape { radius: 0.3, height: 1.8, step_height: 0.2, max_slope: 40f32.to_radians() }
    }
}

/// The gap the character controller keeps between the capsule and what it
/// touches, metres: the capsule hovers this much above the ground its feet
/// stand on.
pub const CONTACT_OFFSET: f32 = 0.01;

/// What one move did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moved {
    /// The displacement asked for.
    pub requested: Vector3<f32>,
    /// The displacement the collision resolution allowed.
    pub applied: Vector3<f32>,
    /// On the ground afterwards.
    pub grounded: bool,
}

/// How one controller move treats contacts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sweep {
    /// Slide along surfaces, then snap down onto the ground.
    Walk,
    /// Slide along surfaces.
    Slide,
    /// Stop at the first contact.
    Stop,
}

/// Static level geometry and queries.
pub struct PhysicsWorld {
    /// The level's rails (what hands reach for).
    rails: Vec<Rail>,
    bodies: RigidBodySet,
    colliders: ColliderSet,
    broad_phase: BroadPhaseBvh,
    narrow_phase: NarrowPhase,
}

impl std::fmt::Debug for PhysicsWorld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PhysicsWorld").field("colliders", &self.colliders.len()).finish_non_exhaustive()
    }
}

impl PhysicsWorld {
    /// The level's boxes as static colliders.
    pub fn new(level: &Level) -> Self {
        let mut world = PhysicsWorld {
            rails: level.rails.clone(),
            bodies: RigidBodySet::new(),
            colliders: ColliderSet::new(),
            broad_phase: BroadPhaseBvh::new(),
            narrow_phase: NarrowPhase::new(),
        };
        for b in &level.boxes {
            let collider = ColliderBuilder::cuboid(b.half_extents.x, b.half_extents.y, b.half_extents.z)
                .position(Isometry3::from_parts(b.center.into(), b.rotation))
                .build();
            world.colliders.insert(collider);
        }
        // One step builds the broad phase's tree that queries walk.
        let mut pipeline = PhysicsPipeline::new();
        pipeline.step(
            &Vector3::zeros(),
            &IntegrationParameters::default(),
            &mut IslandManager::new(),
            &mut world.broad_phase,
            &mut world.narrow_phase,
            &mut world.bodies,
            &mut world.colliders,
            &mut ImpulseJointSet::new(),
            &mut MultibodyJointSet::new(),
            &mut CCDSolver::new(),
            &(),
            &(),
        );
        world
    }

    /// The point of the level's rails nearest to `p` (`None` without rails).
    pub fn nearest_rail_point(&self, p: &Vector3<f32>) -> Option<Vector3<f32>> {
        self.rails.iter().map(|r| r.nearest(p)).min_by(|a, b| (a - p).norm().total_cmp(&(b - p).norm()))
    }

    /// The first surface straight below `from`, within `max` metres.
    pub fn ground_below(&self, from: Vector3<f32>, max: f32) -> Option<GroundHit> {
        let query = self.broad_phase.as_query_pipeline(
            self.narrow_phase.query_dispatcher(),
            &self.bodies,
            &self.colliders,
            QueryFilter::default(),
        );
        let ray = Ray::new(Point3::from(from), -Vector3::y());
        let (_, hit) = query.cast_ray_and_get_normal(&ray, max, true)?;
        Some(GroundHit { point: from - Vector3::y() * hit.time_of_impact, normal: hit.normal })
    }

    /// Moves a capsule standing at `feet` (the bottom of the capsule) by
    /// `requested`: slides along walls, walks up slopes up to the shape's
    /// largest slope, steps up onto ledges up to its step height (lifted,
    /// moved, set down again: the controller's own stepping stalls when the
    /// round bottom rests on a step's edge) and snaps down onto the ground
    /// (and down steps) when it was on it.
    pub fn move_capsule(
        &self,
        shape: &CapsuleShape,
        feet: Vector3<f32>,
        requested: Vector3<f32>,
        dt: f32,
    ) -> Moved {
        let plain = self.sweep(shape, feet, requested, dt, Sweep::Walk);
        let horizontal = |v: &Vector3<f32>| Vector3::new(v.x, 0.0, v.z);
        let wanted = horizontal(&requested).norm();
        if wanted < 1e-6 || !plain.grounded {
            return plain;
        }
        let direction = horizontal(&requested) / wanted;
        let progress = |v: &Vector3<f32>| v.dot(&direction);
        if progress(&plain.applied) >= wanted * 0.9 {
            return plain;
        }
        // Up by the step height (or less, under a ceiling; only the vertical
        // part: the controller may push out sideways), across, then down.
        let up = Vector3::y()
            * self.sweep(shape, feet, Vector3::y() * shape.step_height, dt, Sweep::Slide).applied.y;
        let across = self.sweep(shape, feet + up, horizontal(&requested), dt, Sweep::Slide).applied;
        // Set down without sliding: the round bottom rests on the step's
        // edge, and the next moves carry it over.
        let drop = up.y + shape.step_height;
        let down = self.sweep(shape, feet + up + across, -Vector3::y() * drop, dt, Sweep::Stop);
        let stepped = up + across + down.applied;
        let further = progress(&stepped) > progress(&plain.applied) + 1e-4;
        let landed = down.applied.y > -drop + 1e-3 && stepped.y <= shape.step_height + 1e-3;
        // What it steps onto must be a step: the ground just ahead of the
        // capsule at most the step height up. Otherwise the round bottom,
        // set down on a taller block's edge below the step height, is carried
        // a little higher up that edge by every move, onto any height.
        let top = feet.y + shape.step_height;
        let ahead = feet + across + direction * (shape.radius + 0.01);
        let probe = Vector3::new(ahead.x, top + 0.05, ahead.z);
        let a_step =
            self.ground_below(probe, shape.step_height + 0.15).is_none_or(|g| g.point.y <= top + 1e-3);
        if further && landed && a_step {
            Moved { requested, applied: stepped, grounded: true }
        } else {
            plain
        }
    }

    /// One controller move of the capsule at `feet` by `translation`.
    fn sweep(
        &self,
        shape: &CapsuleShape,
        feet: Vector3<f32>,
        translation: Vector3<f32>,
        dt: f32,
        how: Sweep,
    ) -> Moved {
        let half_segment = (shape.height * 0.5 - shape.radius).max(0.0);
        let capsule = Capsule::new_y(half_segment, shape.radius);
        let center = feet + Vector3::y() * (shape.height * 0.5 + CONTACT_OFFSET);
        let controller = KinematicCharacterController {
            offset: CharacterLength::Absolute(CONTACT_OFFSET),
            slide: how != Sweep::Stop,
            autostep: None,
            max_slope_climb_angle: shape.max_slope,
            min_slope_slide_angle: shape.max_slope,
            snap_to_ground: (how == Sweep::Walk).then_some(CharacterLength::Absolute(shape.step_height)),
            ..KinematicCharacterController::default()
        };
        let query = self.broad_phase.as_query_pipeline(
            self.narrow_phase.query_dispatcher(),
            &self.bodies,
            &self.colliders,
            QueryFilter::default(),
        );
        let movement = controller.move_shape(
            dt,
            &query,
            &capsule,
            &Isometry3::translation(center.x, center.y, center.z),
            translation,
            |_| {},
        );
        Moved { requested: translation, applied: movement.translation, grounded: movement.grounded }
    }
}
