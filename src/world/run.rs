//! An actor in a level played at a fixed frame rate: frame 0 is the first
//! update (dt = 0), frame `i` follows `i` updates of `1 / fps` seconds, and
//! script changes with a time at or before a frame's time are applied just
//! before that frame's update. In movement authority the `speed` parameter
//! is the velocity along the actor's heading. What `simulate --level` and
//! `render --level` step through.

use super::actor::{Actor, Authority};
use super::error::WorldError;
use super::foot_placement::FootPlacement;
use super::level::Level;
use super::physics::PhysicsWorld;
use crate::anim::Rig;
use crate::anim::frame_poses::{FramePoses, FrameSource, PoseError, SkinInput};
use crate::character::{Character, Controller, Script};
use nalgebra::{Matrix4, UnitQuaternion, Vector3};
use std::sync::Arc;

/// See the module documentation.
#[derive(Debug)]
pub struct ActorRun {
    rig: Arc<Rig>,
    controller: Arc<Controller>,
    script: Script,
    world: PhysicsWorld,
    spawn: Vector3<f32>,
    authority: Authority,
    feet: Option<FootPlacement>,
    fps: f64,
    actor: Actor,
    /// The next frame `frame` can reach without restarting.
    next_frame: u32,
    next_set: usize,
}

impl ActorRun {
    /// The character of `rig` driven by `controller` and `script`, standing
    /// at `spawn` in `level`, moved by `authority`, with `feet` placed (or
    /// not), at `fps` updates per second.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        rig: Arc<Rig>,
        controller: Arc<Controller>,
        script: Script,
        level: &Level,
        spawn: &str,
        authority: Authority,
        feet: Option<FootPlacement>,
        fps: f64,
    ) -> Result<Self, WorldError> {
        if !(fps.is_finite() && fps > 0.0) {
            return Err(WorldError::BadFrameRate(fps));
        }
        let spawn = level.spawn(spawn)?;
        let world = PhysicsWorld::new(level);
        let actor = Self::new_actor(&rig, &controller, spawn, authority, feet.clone())?;
        Ok(ActorRun {
            rig,
            controller,
            script,
            world,
            spawn,
            authority,
            feet,
            fps,
            actor,
            next_frame: 0,
            next_set: 0,
        })
    }

    fn new_actor(
        rig: &Arc<Rig>,
        controller: &Arc<Controller>,
        spawn: Vector3<f32>,
        authority: Authority,
        feet: Option<FootPlacement>,
    ) -> Result<Actor, WorldError> {
        let character = Character::new(rig.clone(), controller.clone())?;
        let mut actor = Actor::new(character, spawn, feet);
        actor.set_authority(authority);
        Ok(actor)
    }

    /// Seconds of frame `i`.
    pub fn time(&self, i: u32) -> f64 {
        f64::from(i) / self.fps
    }

    /// The actor as of the last `frame`.
    pub fn actor(&self) -> &Actor {
        &self.actor
    }

    /// Goes back to before frame 0.
    pub fn restart(&mut self) -> Result<(), WorldError> {
        self.actor =
            Self::new_actor(&self.rig, &self.controller, self.spawn, self.authority, self.feet.clone())?;
        self.next_frame = 0;
        self.next_set = 0;
        Ok(())
    }

    /// Plays up to frame `i` (restarting for an earlier one).
    pub fn frame(&mut self, i: u32) -> Result<&Actor, WorldError> {
        if self.next_frame > i + 1 {
            self.restart()?;
        }
        while self.next_frame <= i {
            let k = self.next_frame;
            let time = self.time(k);
            self.script.apply_until(&mut self.next_set, time, self.actor.character_mut());
            if self.authority == Authority::Movement {
                let character = self.actor.character();
                let speed =
                    character.controller().parameter("speed").and_then(|p| character.parameters().get(p));
                let heading = UnitQuaternion::from_axis_angle(&Vector3::y_axis(), self.actor.yaw());
                self.actor.set_velocity(heading * Vector3::z() * speed.unwrap_or(0.0));
            }
            let dt = if k == 0 { 0.0 } else { (1.0 / self.fps) as f32 };
            self.actor.update(dt, &self.world)?;
            self.next_frame += 1;
        }
        Ok(&self.actor)
    }
}

/// An actor moving through a level, as the renderer reads it.
impl FramePoses for ActorRun {
    fn count(&self) -> usize {
        1
    }
    fn input(&self, _: usize) -> SkinInput<'_> {
        let c = self.actor().character();
        SkinInput { pose: c.pose(), version: c.version() }
    }
    fn world(&self, _: usize) -> Matrix4<f32> {
        self.actor().transform()
    }
}

impl FrameSource for ActorRun {
    fn restart(&mut self) -> Result<(), PoseError> {
        Ok(ActorRun::restart(self)?)
    }
    fn frame(&mut self, i: u32) -> Result<(), PoseError> {
        ActorRun::frame(self, i)?;
        Ok(())
    }
}
