//! One character played at a fixed frame rate, frame by frame: what
//! `render`, the viewer's headless fallback and `simulate` step through.
//!
//! - Seeking: frame `i` shows the controller's current state at
//!   `start + i / fps` seconds exactly (`render --clip`: no drift over long
//!   runs, no events).
//! - Simulating: frame 0 is the first update (dt = 0), frame `i` follows
//!   `i` updates of `1 / fps` seconds; script changes with a time at or
//!   before a frame's time are applied just before that frame's update.
//!
//! It steps one character; it never draws or writes anything itself.

use super::character::Character;
use super::controller::Controller;
use super::script::Script;
use crate::anim::frame_poses::{FramePoses, FrameSource, PoseError, SkinInput};
use crate::anim::{JobError, Rig};
use nalgebra::Matrix4;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Seek { start: f64 },
    Simulate,
}

/// See the module documentation.
#[derive(Debug, Clone)]
pub struct Timeline {
    rig: Arc<Rig>,
    controller: Arc<Controller>,
    script: Script,
    mode: Mode,
    fps: f64,
    character: Character,
    /// The next frame `frame` can reach without restarting (simulating).
    next_frame: u32,
    /// The next script change to apply.
    next_set: usize,
}

impl Timeline {
    /// Frames at `start + i / fps` seconds of the controller's initial state.
    pub fn seeking(
        rig: Arc<Rig>,
        controller: Arc<Controller>,
        start: f64,
        fps: f64,
    ) -> Result<Self, JobError> {
        Self::new(rig, controller, Script::default(), Mode::Seek { start }, fps)
    }

    /// Frames of a simulation at `fps` updates per second, with `script`'s changes.
    pub fn simulating(
        rig: Arc<Rig>,
        controller: Arc<Controller>,
        script: Script,
        fps: f64,
    ) -> Result<Self, JobError> {
        Self::new(rig, controller, script, Mode::Simulate, fps)
    }

    fn new(
        rig: Arc<Rig>,
        controller: Arc<Controller>,
        script: Script,
        mode: Mode,
        fps: f64,
    ) -> Result<Self, JobError> {
        if !(fps.is_finite() && fps > 0.0) {
            return Err(JobError::new(format!("frame rate {fps} is not a positive number")));
        }
        let character = Character::new(rig.clone(), controller.clone())?;
        Ok(Timeline { rig, controller, script, mode, fps, character, next_frame: 0, next_set: 0 })
    }

    /// Seconds of frame `i`.
    pub fn time(&self, i: u32) -> f64 {
        let t = f64::from(i) / self.fps;
        match self.mode {
            Mode::Seek { start } => start + t,
            Mode::Simulate => t,
        }
    }

    /// The controller every frame plays.
    pub fn controller(&self) -> &Arc<Controller> {
        &self.controller
    }

    /// The `--set` changes a simulation applies.
    pub fn script(&self) -> &Script {
        &self.script
    }

    /// The character as of the last `frame`.
    pub fn character(&self) -> &Character {
        &self.character
    }

    /// Goes back to before frame 0.
    pub fn restart(&mut self) -> Result<(), JobError> {
        self.character = Character::new(self.rig.clone(), self.controller.clone())?;
        self.next_frame = 0;
        self.next_set = 0;
        Ok(())
    }

    /// Poses frame `i`. Seeking, any order is fine; simulating, frames
    /// before the last one restart the simulation from frame 0.
    pub fn frame(&mut self, i: u32) -> Result<&Character, JobError> {
        // A frame trace's CPU span (`render::trace`; nothing without one).
        let _span = tracing::trace_span!("pose").entered();
        match self.mode {
            Mode::Seek { .. } => {
                let t = self.time(i);
                self.character.seek(t);
                self.character.update(0.0)?;
            }
            Mode::Simulate => {
                // `next_frame - 1` is the frame shown now.
                if self.next_frame > i + 1 {
                    self.restart()?;
                }
                while self.next_frame <= i {
                    self.step()?;
                }
            }
        }
        Ok(&self.character)
    }

    /// Simulating: the character at `t` seconds (>= 0): the frames at or
    /// before `t` (frame `k` exactly when `t` is within a microsecond of
    /// its time), then, when `t` falls between two frames, one shorter
    /// update to `t` after the script's changes timed at or before `t`. A
    /// later `frame` after such a partial update restarts the simulation.
    pub fn simulate_to(&mut self, t: f64) -> Result<&Character, JobError> {
        if self.mode != Mode::Simulate || !(t.is_finite() && t >= 0.0) {
            return Err(JobError::new(format!("simulate_to: {t} s is not a time of a simulation")));
        }
        let Some((k, on_frame)) = frame_at(t, self.fps) else {
            return Err(JobError::new(format!("simulate_to: {t} s is too many frames at {} fps", self.fps)));
        };
        self.frame(k)?;
        if !on_frame {
            self.script.apply_until(&mut self.next_set, t, &mut self.character);
            self.character.update((t - self.time(k)) as f32)?;
            // The character is now between frames: the next `frame` starts over.
            self.next_frame = u32::MAX;
        }
        Ok(&self.character)
    }

    /// Applies the script up to the next frame's time and updates.
    fn step(&mut self) -> Result<(), JobError> {
        let k = self.next_frame;
        let t = self.time(k);
        self.script.apply_until(&mut self.next_set, t, &mut self.character);
        let dt = if k == 0 { 0.0 } else { (1.0 / self.fps) as f32 };
        self.character.update(dt)?;
        self.next_frame += 1;
        Ok(())
    }
}

/// The frame of a run at `fps` that time `t` (seconds, >= 0) falls on: the
/// frame within a microsecond of `t` (then `true`), else the one before it
/// (`false`: `t` lies between frames). `None` past the frames a `u32` counts.
pub fn frame_at(t: f64, fps: f64) -> Option<(u32, bool)> {
    let frames = t * fps;
    let nearest = frames.round();
    let on_frame = (nearest - frames).abs() / fps <= 1e-6;
    let k = if on_frame { nearest } else { frames.floor() };
    (k < f64::from(u32::MAX - 1)).then_some((k as u32, on_frame))
}

/// A clip or controller of one character, at the origin.
impl FramePoses for Timeline {
    fn count(&self) -> usize {
        1
    }
    fn input(&self, _: usize) -> SkinInput<'_> {
        let c = self.character();
        SkinInput { pose: c.pose(), version: c.version() }
    }
    fn world(&self, _: usize) -> Matrix4<f32> {
        Matrix4::identity()
    }
}

impl FrameSource for Timeline {
    fn restart(&mut self) -> Result<(), PoseError> {
        Ok(Timeline::restart(self)?)
    }
    fn frame(&mut self, i: u32) -> Result<(), PoseError> {
        Timeline::frame(self, i)?;
        Ok(())
    }
}
