//! An actor: a character standing in the physics world. Its movement is
//! asked of the physics world (a capsule moved by the kinematic character
//! controller), and collision resolution decides where it ends up; its feet
//! are then placed on the ground under them.
//!
//! Who drives the movement:
//! - `Authority::Animation`: the clips' root motion (taken out of the pose
//!   by the controller's `root_motion` joint) is requested as it is, turned
//!   to the actor's heading.
//! - `Authority::Movement`: gameplay sets a velocity; the actor asks for
//!   that, faces where it goes, sets the controller's `speed` parameter to
//!   its speed (the locomotion blend follows) and the playback rate to that
//!   speed over the playing clips' own ground speed, so feet do not slide.
//!
//! Jumps (either authority) start when the controller's `jump` trigger
//! starts a transition, and last until the capsule is back on the ground.
//! Through a jump the pose's vertical root motion (`Lift`: how far its feet
//! are off the ground) is asked of the physics world too, so the capsule
//! rises and falls with the feet and an obstacle or a ceiling stops it; the
//! pose is drawn that much lower, so the drawn feet stay at the capsule's
//! bottom. (Outside a jump a run's short flight does not lift the capsule:
//! it would leave the ground, and `grounded`, at every stride.) The ground
//! velocity of the jump's start is kept, and while the feet are off the
//! ground the actor travels with it (animation authority), as a body in
//! flight does: the jump clip carries no travel of its own, and a walk's or
//! a run's jump goes as far as its speed takes it. Off the ground and not
//! lifted, the actor falls under gravity. The controller's `grounded`
//! parameter is set from the capsule's contact after every move, for the
//! next update's transitions.
//!
//! After the feet, a hand reaches for the level's rails (or a point set by
//! `set_reach_target`) when it is within reach (`ArmReach`), in the same edit.

use super::error::WorldError;
use super::foot_placement::{FootPlacement, FootReport};
use super::lift::Lift;
use super::physics::{CapsuleShape, Moved, PhysicsWorld};
use super::reach::{ArmReach, HandReport};
use crate::anim::JobError;
use crate::character::{Character, ParameterId, ParameterValue};
use nalgebra::{Isometry3, Matrix4, UnitQuaternion, Vector3};
use std::time::{Duration, Instant};

/// Gravity, metres per second squared.
const GRAVITY: f32 = 9.81;
/// How fast a moving actor turns to face its velocity, radians per second.
const TURN_RATE: f32 = 8.0;
/// Playback rates the speed matching keeps within.
const RATE_LIMITS: (f32, f32) = (0.25, 2.0);
/// A vertical move bigger than this in one update is a step (up or down a
/// ledge), which the drawn character follows smoothly, metres.
const STEP_JUMP: f32 = 0.03;
/// Time constant of the drawn character catching up after a step, seconds.
const STEP_SMOOTHING: f32 = 0.1;
/// The fastest an actor moves, metres per second, horizontally (whoever
/// drives it) and falling: faster asks are clamped to it. The character
/// controller sweeps the capsule along each move, but a move of 1e36 m
/// (3e38 m/s for one 60 Hz update) is lost to float precision there and
/// goes through walls, ending at an infinite position. 50 m/s (180 km/h,
/// about a falling body's terminal speed) is far above any walk or run.
pub const MAX_SPEED: f32 = 50.0;

/// Who decides where the actor goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Authority {
    /// The clips' root motion.
    #[default]
    Animation,
    /// A velocity set by gameplay.
    Movement,
}

impl std::str::FromStr for Authority {
    type Err = WorldError;
    fn from_str(s: &str) -> Result<Self, WorldError> {
        match s {
            "animation" => Ok(Authority::Animation),
            "movement" => Ok(Authority::Movement),
            _ => Err(WorldError::UnknownAuthority(s.to_string())),
        }
    }
}

/// A character in the world.
#[derive(Debug)]
pub struct Actor {
    character: Character,
    shape: CapsuleShape,
    /// The bottom of the capsule: where the feet stand.
    position: Vector3<f32>,
    /// Heading about +y (0: facing +z).
    yaw: f32,
    fall_speed: f32,
    grounded: bool,
    /// How far the drawn character is above the physics position (negative
    /// just after stepping up a ledge), decaying to 0.
    visual_offset: f32,
    authority: Authority,
    velocity: Vector3<f32>,
    speed: Option<ParameterId>,
    feet: Option<FootPlacement>,
    /// The controller's `jump` trigger and `grounded` flag, when it has them.
    jump: Option<ParameterId>,
    grounded_flag: Option<ParameterId>,
    /// Measures the pose's vertical root motion (`None`: the rig has no feet
    /// to measure, and nothing lifts the capsule).
    lift: Option<Lift>,
    /// Hands reaching for rails or a set point (`None`: the rig has no arms).
    reach: Option<ArmReach>,
    /// The last update's lift, metres.
    lifted: f32,
    /// Horizontal velocity of the last move on the ground, metres per second.
    ground_velocity: Vector3<f32>,
    /// The jump in progress.
    flight: Option<Flight>,
    /// The state the last jump started, until the character has left it.
    jump_state: Option<usize>,
    moved: Moved,
    /// CPU time of the last update's pose work: the character's update
    /// (controller, sampling, blending, hierarchy, palette), foot IK and
    /// arm reach.
    last_pose: Duration,
}

impl Actor {
    /// `character` standing at `position`, facing +z, with `feet` placing
    /// its feet (`None`: no foot IK).
    pub fn new(character: Character, position: Vector3<f32>, feet: Option<FootPlacement>) -> Self {
        let controller = character.controller();
        let speed = controller.parameter("speed");
        let jump = controller.parameter("jump");
        let grounded_flag = controller.parameter("grounded");
        let lift = Lift::humanoid(character.rig()).ok();
        let reach = ArmReach::humanoid(character.rig()).ok();
        Actor {
            character,
            shape: CapsuleShape::default(),
            position,
            yaw: 0.0,
            fall_speed: 0.0,
            grounded: true,
            visual_offset: 0.0,
            authority: Authority::Animation,
            velocity: Vector3::zeros(),
            speed,
            feet,
            jump,
            grounded_flag,
            lift,
            reach,
            lifted: 0.0,
            ground_velocity: Vector3::zeros(),
            flight: None,
            jump_state: None,
            moved: Moved { requested: Vector3::zeros(), applied: Vector3::zeros(), grounded: true },
            last_pose: Duration::ZERO,
        }
    }

    /// CPU time of the last update's pose work: the character's own update
    /// (controller, sampling, blending, hierarchy, palette) plus foot IK
    /// and arm reach,
    /// not the physics move between them.
    pub fn last_pose(&self) -> Duration {
        self.last_pose
    }

    /// The character.
    pub fn character(&self) -> &Character {
        &self.character
    }

    /// The character, to set parameters.
    pub fn character_mut(&mut self) -> &mut Character {
        &mut self.character
    }

    /// Chooses who drives the movement.
    pub fn set_authority(&mut self, authority: Authority) {
        self.authority = authority;
        if authority == Authority::Animation {
            self.character.set_rate(1.0);
        }
    }

    /// Who drives the movement.
    pub fn authority(&self) -> Authority {
        self.authority
    }

    /// The velocity gameplay wants (movement authority), metres per second;
    /// only its horizontal part counts, at most [`MAX_SPEED`] (a faster one
    /// keeps its direction at that speed). A non-finite one is ignored.
    pub fn set_velocity(&mut self, velocity: Vector3<f32>) {
        if velocity.iter().all(|v| v.is_finite()) {
            self.velocity = at_most(Vector3::new(velocity.x, 0.0, velocity.z), MAX_SPEED);
        }
    }

    /// Turns foot placement on (with the given setup) or off.
    pub fn set_feet(&mut self, feet: Option<FootPlacement>) {
        self.feet = feet;
    }

    /// A point, world space, for the nearer hand to reach for (blending in
    /// while it is within reach) instead of the level's rails; `None`: the
    /// rails again. A non-finite point is ignored.
    pub fn set_reach_target(&mut self, target: Option<Vector3<f32>>) {
        if let Some(r) = self.reach.as_mut() {
            r.set_target(target);
        }
    }

    /// The point set by `set_reach_target`.
    pub fn reach_target(&self) -> Option<Vector3<f32>> {
        self.reach.as_ref().and_then(ArmReach::target)
    }

    /// Each hand's reach in the last update, left then right (`None`: the
    /// rig has no arms to reach with).
    pub fn hands(&self) -> Option<&[HandReport; 2]> {
        self.reach.as_ref().map(ArmReach::reports)
    }

    /// Where the feet stand (the bottom of the capsule).
    pub fn position(&self) -> Vector3<f32> {
        self.position
    }

    /// Heading about +y, radians (0: facing +z).
    pub fn yaw(&self) -> f32 {
        self.yaw
    }

    /// Standing on something after the last update.
    pub fn grounded(&self) -> bool {
        self.grounded
    }

    /// How far the last update's pose lifts the character off the ground
    /// (its vertical root motion), metres.
    pub fn lift(&self) -> f32 {
        self.lifted
    }

    /// In the air: lifted by the pose, or with nothing under the capsule.
    pub fn airborne(&self) -> bool {
        self.lifted > 0.0 || !self.grounded
    }

    /// The movement the last update asked for and the movement it got.
    pub fn last_move(&self) -> Moved {
        self.moved
    }

    /// Each foot's placement in the last update (`None` without foot IK).
    pub fn feet(&self) -> Option<&[FootReport; 2]> {
        self.feet.as_ref().map(FootPlacement::reports)
    }

    /// Where the character is drawn and its heading, as an isometry (model
    /// space to world space): the physics position lowered by the pose's
    /// lift (the pose itself holds the feet that high), but after a step up
    /// or down a ledge the drawn character follows within `STEP_SMOOTHING`
    /// instead of jumping.
    pub fn isometry(&self) -> Isometry3<f32> {
        let drawn = self.position + Vector3::y() * (self.visual_offset - self.lifted);
        Isometry3::from_parts(drawn.into(), UnitQuaternion::from_axis_angle(&Vector3::y_axis(), self.yaw))
    }

    /// The same as a matrix (what the renderer places the character with).
    pub fn transform(&self) -> Matrix4<f32> {
        self.isometry().to_homogeneous()
    }

    /// Advances the character by `dt`, moves the actor through `world` and
    /// places its feet.
    pub fn update(&mut self, dt: f32, world: &PhysicsWorld) -> Result<(), JobError> {
        let dt = if dt.is_finite() && dt > 0.0 { dt } else { 0.0 };
        if self.authority == Authority::Movement {
            let speed = self.velocity.norm();
            if let Some(p) = self.speed {
                // Known to be a float: the value only fails for a wrong kind.
                let _ = self.character.set(p, ParameterValue::Float(speed));
            }
            let natural = self.character.ground_speed();
            // A jump plays at its own pace (its crouch and flight are timed to
            // the lift, not to a ground speed): in and out of its state the
            // blended ground speed would swing the rate to its limits.
            let jumping = self.jump_state.is_some() && self.jump_state == self.character.state();
            let rate = if speed > 0.05 && natural > 0.05 && !jumping {
                (speed / natural).clamp(RATE_LIMITS.0, RATE_LIMITS.1)
            } else {
                1.0
            };
            self.character.set_rate(rate);
            if speed > 0.05 {
                let wanted = self.velocity.x.atan2(self.velocity.z);
                let turn = wrap_angle(wanted - self.yaw);
                self.yaw = wrap_angle(self.yaw + turn.clamp(-TURN_RATE * dt, TURN_RATE * dt));
            }
        }
        // A jump starts when the `jump` trigger, set for this update, starts
        // a transition: keep the ground velocity of that moment for the flight.
        let jump_asked = self.jump.is_some_and(|p| self.character.parameters().get(p) == Some(1.0));
        let before = (self.character.state(), self.character.transition().map(|t| t.0));
        let posing = Instant::now();
        self.character.update(dt)?;
        let mut pose_time = posing.elapsed();
        let after = (self.character.state(), self.character.transition().map(|t| t.0));
        if jump_asked && self.grounded && after != before {
            let state = after.1.or(after.0);
            self.flight = Some(Flight { velocity: self.ground_velocity, state, left: false });
            self.jump_state = state;
        }
        if self.jump_state.is_some() && after.0 != self.jump_state && after.1 != self.jump_state {
            self.jump_state = None;
        }
        // A jump that never left the ground ends with its state.
        if let Some(f) = &self.flight
            && !f.left
            && after.0 != f.state
            && after.1 != f.state
        {
            self.flight = None;
        }
        let lift = match (&self.lift, &self.flight) {
            (Some(l), Some(_)) => {
                l.measure(self.character.rig().skeleton.parents(), &self.character.local_pose().locals)
            }
            _ => 0.0,
        };
        let mut requested = match self.authority {
            Authority::Animation => {
                let root = self.character.root_motion();
                self.yaw = wrap_angle(self.yaw + root.yaw);
                UnitQuaternion::from_axis_angle(&Vector3::y_axis(), self.yaw) * root.translation
            }
            Authority::Movement => self.velocity * dt,
        };
        // In the air a jump goes on with the velocity it took off with.
        let in_air = lift > 0.0 || !self.grounded;
        if in_air && let Some(f) = self.flight.as_mut() {
            f.left = true;
            if self.authority == Authority::Animation {
                (requested.x, requested.z) = (f.velocity.x * dt, f.velocity.z * dt);
            }
        }
        // Root motion (or a velocity) faster than MAX_SPEED is clamped, and a
        // non-finite one is no move: the position must stay finite.
        if !requested.iter().all(|v| v.is_finite()) {
            requested = Vector3::zeros();
        }
        if dt > 0.0 {
            let horizontal = at_most(Vector3::new(requested.x, 0.0, requested.z), MAX_SPEED * dt);
            (requested.x, requested.z) = (horizontal.x, horizontal.z);
        }
        // The feet rise and fall with the pose's lift (vertical root motion).
        let rise = lift - self.lifted;
        requested.y += rise - self.fall_speed * dt;
        self.lifted = lift;
        self.moved = world.move_capsule(&self.shape, self.position, requested, dt);
        self.position += self.moved.applied;
        self.grounded = self.moved.grounded;
        if let Some(p) = self.grounded_flag {
            // Known to be a bool: the value only fails for a wrong kind.
            let _ = self.character.set(p, ParameterValue::Bool(self.grounded));
        }
        // Gravity pulls only what the pose does not hold up.
        self.fall_speed =
            if self.grounded || lift > 0.0 { 0.0 } else { (self.fall_speed + GRAVITY * dt).min(MAX_SPEED) };
        if self.grounded && lift <= 0.0 {
            if dt > 0.0 {
                let applied = self.moved.applied;
                self.ground_velocity = Vector3::new(applied.x, 0.0, applied.z) / dt;
            }
            if self.flight.as_ref().is_some_and(|f| f.left) {
                self.flight = None;
            }
        }
        // A step up or down a ledge; the lift's own moves are drawn lowered
        // by the lift already.
        let step = self.moved.applied.y;
        if self.grounded && rise == 0.0 && step.abs() > STEP_JUMP {
            self.visual_offset -= step;
        }
        self.visual_offset *= if dt > 0.0 { (-dt / STEP_SMOOTHING).exp() } else { 1.0 };
        let entity = self.isometry();
        let placing = Instant::now();
        let reaching = match self.reach.as_mut() {
            Some(r) => r.update(&self.character, world, &entity, dt)?,
            None => false,
        };
        // One edit for the feet and the hands, published once.
        if self.feet.is_some() || reaching {
            self.character.edit();
            if let Some(feet) = self.feet.as_mut() {
                feet.place(&mut self.character, world, &entity, dt)?;
            }
            if let Some(r) = self.reach.as_mut().filter(|_| reaching) {
                r.apply(&mut self.character, &entity)?;
            }
            self.character.commit_edit()?;
        }
        pose_time += placing.elapsed();
        self.last_pose = pose_time;
        Ok(())
    }
}

/// A jump from its start (the trigger) to its landing.
#[derive(Debug, Clone, Copy)]
struct Flight {
    /// The ground velocity at the start, kept through the air.
    velocity: Vector3<f32>,
    /// The state the trigger started (or went on in).
    state: Option<usize>,
    /// Whether it has left the ground yet.
    left: bool,
}

/// `v` shortened to `max` long when longer, in f64 (the length of a vector
/// with components near f32::MAX overflows an f32).
fn at_most(v: Vector3<f32>, max: f32) -> Vector3<f32> {
    let wide = v.cast::<f64>();
    let length = wide.norm();
    if length <= f64::from(max) { v } else { (wide * (f64::from(max) / length)).cast::<f32>() }
}

/// `a` brought into (-pi, pi].
fn wrap_angle(a: f32) -> f32 {
    let a = a.rem_euclid(std::f32::consts::TAU);
    if a > std::f32::consts::PI { a - std::f32::consts::TAU } else { a }
}
