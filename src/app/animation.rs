//! The viewer's controls mapped onto the character layer: one character in
//! an `AnimationSystem`, driven either by the model's controller (parameter
//! changes from the UI) or by the manual clip A / clip B blend (a controller
//! built from the chosen clips). Speed, pause, scrub and step map onto the
//! character's rate and `seek`; debug views and the morph override onto its
//! settings. In a level the character is an actor of the physics world: the
//! movement keys become its velocity (movement authority) and the jump key
//! its `jump` trigger. No animation logic lives here.

use super::state::{AnimationMode, DebugView, EventLog, LoggedEvent, ViewerState};
use crate::asset::Model;
use crate::character::controller::FoundController;
use crate::character::{
    AnimationSystem, Character, CharacterId, Controller, DebugPose, ParameterId, ParameterValue,
};
use crate::world::{Actor, Authority, FootPlacement, HandReport, Level, PhysicsWorld};
use anyhow::anyhow;
use nalgebra::{Matrix4, UnitQuaternion, Vector3};
use std::sync::Arc;

/// Walking and running speeds of the movement keys, metres per second.
const KEY_SPEEDS: (f32, f32) = (1.3, 3.4);

/// The character as an actor of a level.
struct LevelRun {
    world: PhysicsWorld,
    actor: Actor,
}

/// Length of one step of `ViewerState::step_frames`, seconds.
pub const STEP_SECONDS: f64 = 1.0 / 30.0;

/// The manual mode's settings: a change rebuilds its controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ClipChoice {
    a: Option<usize>,
    b: Option<usize>,
    sync: bool,
    looping: bool,
}

/// One character and what drives it.
pub struct ViewerAnimation {
    model: Arc<Model>,
    system: AnimationSystem,
    id: CharacterId,
    /// The model's controller, when it has one.
    controller: Option<Arc<Controller>>,
    /// Where it came from (shown in the controls).
    controller_source: Option<String>,
    /// What the character runs now: the controller, or this clip choice.
    running: Option<ClipChoice>,
    /// The manual mode's `blend` parameter.
    blend: Option<ParameterId>,
    /// In a level: the physics world and the actor holding the character.
    level: Option<LevelRun>,
}

impl ViewerAnimation {
    /// A character of `model`, driven by `controller` when given (else by
    /// the clips `state` chooses; `state.mode` is switched to match).
    pub fn new(
        model: Arc<Model>,
        controller: Option<FoundController>,
        state: &mut ViewerState,
    ) -> anyhow::Result<Self> {
        let (controller, controller_source) = match controller {
            Some((c, source)) => (Some(Arc::new(c)), Some(source)),
            None => (None, None),
        };
        if controller.is_none() {
            state.mode = AnimationMode::Clips;
        }
        let mut animation = ViewerAnimation {
            model,
            system: AnimationSystem::single_threaded(),
            id: CharacterId(0),
            controller,
            controller_source,
            running: None,
            blend: None,
            level: None,
        };
        animation.rebuild(state, 0.0)?;
        Ok(animation)
    }

    /// Puts the character in `level` at its first spawn, driven by the
    /// controller (a level needs one), with its feet placed when the rig has
    /// humanoid legs.
    pub fn enter_level(&mut self, level: &Level, state: &mut ViewerState) -> anyhow::Result<()> {
        let controller = self
            .controller
            .clone()
            .ok_or_else(|| anyhow!("{}: a level needs a controller", self.model.file))?;
        let character = Character::new(self.model.rig.clone(), controller)?;
        let feet = FootPlacement::humanoid(&self.model).ok();
        let spawn = level.spawns.first().map_or(Vector3::zeros(), |(_, p)| *p);
        self.level =
            Some(LevelRun { world: PhysicsWorld::new(level), actor: Actor::new(character, spawn, feet) });
        state.mode = AnimationMode::Controller;
        Ok(())
    }

    /// Where the character stands (world transform, applied after skinning).
    pub fn transform(&self) -> Matrix4<f32> {
        self.level.as_ref().map_or_else(Matrix4::identity, |l| l.actor.transform())
    }

    /// In a level: the point set for the hands to reach (world space) and
    /// each hand's reach this frame (left, right); `None` outside a level
    /// or for a rig without arms.
    pub fn reach(&self) -> Option<(Option<Vector3<f32>>, &[HandReport; 2])> {
        let actor = &self.level.as_ref()?.actor;
        Some((actor.reach_target(), actor.hands()?))
    }

    /// Whether the character is in a level.
    pub fn in_level(&self) -> bool {
        self.level.is_some()
    }

    /// The character being shown.
    pub fn character(&self) -> &Character {
        match &self.level {
            Some(l) => l.actor.character(),
            None => self.system.character(self.id),
        }
    }

    /// Whether the model has a controller (the UI offers the mode).
    pub fn has_controller(&self) -> bool {
        self.controller.is_some()
    }

    /// Where the controller came from.
    pub fn controller_source(&self) -> Option<&str> {
        self.controller_source.as_deref()
    }

    /// CPU time of the last update (players, sampling, blending, hierarchy,
    /// palettes; in a level also foot IK, not the physics), microseconds.
    pub fn cpu_pose_us(&self) -> f64 {
        let last = match &self.level {
            Some(l) => l.actor.last_pose(),
            None => self.system.last_update(),
        };
        last.as_secs_f64() * 1e6
    }

    /// What `state` asks for the character now.
    fn wanted(&self, state: &ViewerState) -> Option<ClipChoice> {
        match (state.mode, &self.controller) {
            (AnimationMode::Controller, Some(_)) => None,
            _ => {
                let clips = self.model.clips.len();
                let a = state.clip_a.filter(|&c| c < clips);
                let b = state.clip_b.filter(|&c| c < clips && Some(c) != a);
                Some(ClipChoice { a, b, sync: state.sync_phase, looping: state.looping })
            }
        }
    }

    /// Replaces the character for what `state` asks, at `time` on its playhead.
    fn rebuild(&mut self, state: &ViewerState, time: f64) -> anyhow::Result<()> {
        let choice = self.wanted(state);
        let controller = match (choice, &self.controller) {
            (None, Some(c)) => c.clone(),
            (Some(c), _) => Arc::new(Controller::clip_blend(&self.model, c.a, c.b, c.sync, c.looping)?),
            (None, None) => Arc::new(Controller::single_clip(&self.model, None, true)?),
        };
        self.blend = controller.parameter("blend").filter(|_| choice.is_some());
        self.system.clear();
        self.id = self.system.add(self.model.rig.clone(), controller)?;
        self.running = choice;
        if choice.is_some() {
            self.system.character_mut(self.id).seek(time);
        }
        Ok(())
    }

    /// One frame: applies `state` (mode and clips, parameter changes,
    /// speed, pause, scrub and step requests, debug view, morph override;
    /// in a level the movement keys, jump and authority), advances by `dt`
    /// seconds and logs the events crossed, stamped `now`.
    pub fn update(
        &mut self,
        dt: f32,
        state: &mut ViewerState,
        log: &mut EventLog,
        now: f64,
    ) -> anyhow::Result<()> {
        let dt = if state.playing && dt.is_finite() { dt.max(0.0) } else { 0.0 };
        if let Some(level) = self.level.as_mut() {
            let character = level.actor.character_mut();
            apply_settings(character, state, &self.model)?;
            if std::mem::take(&mut state.jump) {
                // A controller without a jump trigger just does not jump.
                let _ = character.set_named("jump", ParameterValue::Trigger);
            }
            level.actor.set_authority(state.authority);
            if state.authority == Authority::Movement {
                let k = state.keys;
                let (ahead, side) =
                    (f32::from(k.forward) - f32::from(k.back), f32::from(k.right) - f32::from(k.left));
                let forward = Vector3::new(state.camera_forward[0], 0.0, state.camera_forward[1]);
                let right = Vector3::new(-forward.z, 0.0, forward.x);
                let direction = forward * ahead + right * side;
                let speed = if k.run { KEY_SPEEDS.1 } else { KEY_SPEEDS.0 };
                let velocity = direction.try_normalize(1e-6).map_or(Vector3::zeros(), |d| d * speed);
                level.actor.set_velocity(velocity);
            }
            // The reach point follows the character (its own frame).
            let heading = UnitQuaternion::from_axis_angle(&Vector3::y_axis(), level.actor.yaw());
            let reach = state
                .reach
                .map(|[right, up, ahead]| level.actor.position() + heading * Vector3::new(-right, up, ahead));
            level.actor.set_reach_target(reach);
            level.actor.update(dt, &level.world).map_err(|e| anyhow!("{}: {e}", self.model.file))?;
            log_events(&self.model, level.actor.character(), log, now);
            show_morphs(level.actor.character(), state);
            return Ok(());
        }
        if self.wanted(state) != self.running {
            // Rare (the user changed clips): the new character starts where
            // the old one's playhead was.
            let time = self.character().playhead().map_or(0.0, |(_, t, _)| t);
            self.rebuild(state, time)?;
        }
        let blend = if state.blend.is_finite() { state.blend.clamp(0.0, 1.0) } else { 0.0 };
        let blend_id = self.blend;
        let character = self.system.character_mut(self.id);
        apply_settings(character, state, &self.model)?;
        if let Some(id) = blend_id {
            character.set(id, ParameterValue::Float(blend))?;
        }
        character.set_rate(state.speed);
        // Scrubbing and stepping jump without firing events: they are the
        // user moving the playhead, not playback crossing an event.
        if let Some(t) = state.scrub_to.take().filter(|t| t.is_finite()) {
            character.seek(f64::from(t));
        }
        if state.step_frames != 0 {
            let now_at = character.playhead().map_or(0.0, |(_, t, _)| t);
            character.seek(now_at + f64::from(state.step_frames) * STEP_SECONDS);
            state.step_frames = 0;
        }
        self.system.update(dt).map_err(|e| anyhow!("{}: {e}", self.model.file))?;
        let character = self.system.character(self.id);
        log_events(&self.model, character, log, now);
        show_morphs(character, state);
        Ok(())
    }
}

/// The settings every frame hands the character: parameter changes from the
/// controls, the debug view and the morph override.
fn apply_settings(character: &mut Character, state: &mut ViewerState, model: &Model) -> anyhow::Result<()> {
    for (id, value) in state.parameter_changes.drain(..) {
        character.set(id, value)?;
    }
    character.set_debug_pose(match state.debug_view {
        DebugView::BindPose => DebugPose::BindPose,
        DebugView::IdentityPalette => DebugPose::IdentityPalette,
        DebugView::Shaded | DebugView::WeightHeatMap => DebugPose::Animated,
    });
    let rest = &model.rest_morph_weights;
    if state.morph_weights.len() != rest.len() {
        // Only when the model changes: the UI's list is resized once.
        state.morph_weights.clear();
        state.morph_weights.extend_from_slice(rest);
    }
    character.set_morph_override(state.morph_override.then_some(&state.morph_weights[..]));
    Ok(())
}

/// Logs the events the character's last update crossed.
fn log_events(model: &Model, character: &Character, log: &mut EventLog, now: f64) {
    for e in character.events() {
        let clip = model.clip_name(e.clip as usize).to_owned();
        let name = character.event_name(e).to_owned();
        log.push(LoggedEvent { at: now, clip, time: e.clip_time, name });
    }
}

/// Without the override, the sliders show the live weights (so turning the
/// override on starts from what is on screen).
fn show_morphs(character: &Character, state: &mut ViewerState) {
    if !state.morph_override {
        state.morph_weights.copy_from_slice(character.output().morph_weights());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{BoneMatrix, Pose};
    use crate::character::controller::DEFAULT_CONTROLLER;
    use crate::test_model::test_model;
    use nalgebra::Matrix4;

    struct Rig {
        model: Arc<Model>,
        anim: ViewerAnimation,
        state: ViewerState,
        log: EventLog,
    }

    impl Rig {
        fn new(model: Model) -> Self {
            let mut state = ViewerState { clip_a: Some(0), ..ViewerState::default() };
            let model = Arc::new(model);
            let anim = ViewerAnimation::new(model.clone(), None, &mut state).unwrap();
            Rig { model, anim, state, log: EventLog::default() }
        }

        fn update(&mut self, dt: f32) {
            self.anim.update(dt, &mut self.state, &mut self.log, 0.0).unwrap();
        }

        fn time(&self) -> f64 {
            self.anim.character().playhead().map_or(0.0, |(_, t, _)| t)
        }

        /// Time of the clip node playing clip `clip`.
        fn clip_time(&self, clip: u32) -> f64 {
            let c = self.anim.character();
            let leaf = c.controller().leaves().iter().position(|l| l.clip == clip).unwrap();
            c.leaf_time(leaf)
        }

        fn pose(&self) -> &Pose {
            self.anim.character().local_pose()
        }

        fn names(&self) -> Vec<String> {
            self.log.entries().map(|e| format!("{}:{}", e.clip, e.name)).collect()
        }
    }

    /// The pose of `clip` alone at `time`, through a one-clip character.
    fn reference(model: &Model, clip: usize, time: f64) -> Pose {
        let controller = Arc::new(Controller::single_clip(model, Some(clip), true).unwrap());
        let mut c = Character::new(model.rig.clone(), controller).unwrap();
        c.seek(time);
        c.update(0.0).unwrap();
        c.local_pose().clone()
    }

    fn close(a: &Pose, b: &Pose) -> bool {
        a.locals.iter().zip(&b.locals).all(|(x, y)| {
            (x.translation - y.translation).norm() < 1e-5
                && x.rotation.angle_to(&y.rotation) < 1e-4
                && (x.scale - y.scale).norm() < 1e-5
        }) && a.morph_weights.iter().zip(&b.morph_weights).all(|(x, y)| (x - y).abs() < 1e-5)
    }

    #[test]
    fn playing_advances_and_pause_holds() {
        let mut r = Rig::new(test_model());
        r.update(0.25);
        assert!((r.time() - 0.25).abs() < 1e-6);
        assert!(close(r.pose(), &reference(&r.model, 0, 0.25)));
        r.state.playing = false;
        let version = r.anim.character().version();
        r.update(0.25);
        assert!((r.time() - 0.25).abs() < 1e-6);
        assert_eq!(r.anim.character().version(), version, "a paused character keeps its pose version");
        r.state.playing = true;
        r.state.speed = 0.5;
        r.update(0.5);
        assert!((r.time() - 0.5).abs() < 1e-6);
        assert!(r.anim.character().version() > version);
        assert!(r.anim.cpu_pose_us() >= 0.0);
    }

    #[test]
    fn negative_speed_goes_backwards() {
        let mut r = Rig::new(test_model());
        r.state.scrub_to = Some(0.5);
        r.update(0.0);
        r.state.speed = -1.0;
        r.update(0.125);
        assert!((r.time() - 0.375).abs() < 1e-6);
        r.update(0.5);
        assert!((r.time() - 0.875).abs() < 1e-6, "wraps backwards: {}", r.time());
        assert_eq!(r.names(), vec!["Walk:left"]);
    }

    #[test]
    fn scrub_and_step_set_time_without_events() {
        let mut r = Rig::new(test_model());
        r.state.playing = false;
        r.state.scrub_to = Some(0.8);
        r.update(0.0);
        assert!((r.time() - 0.8).abs() < 1e-6);
        assert!(r.state.scrub_to.is_none());
        assert!(close(r.pose(), &reference(&r.model, 0, 0.8)));
        r.state.step_frames = -3;
        r.update(0.0);
        assert!((r.time() - 0.7).abs() < 1e-6);
        assert_eq!(r.state.step_frames, 0);
        r.state.step_frames = 12; // 0.7 + 0.4 wraps to 0.1
        r.update(0.0);
        assert!((r.time() - 0.1).abs() < 1e-5);
        assert!(r.log.is_empty(), "{:?}", r.names());
        // Not looping: clamps.
        r.state.looping = false;
        r.state.scrub_to = Some(5.0);
        r.update(0.0);
        assert_eq!(r.time(), 1.0);
        assert!(r.log.is_empty());
    }

    #[test]
    fn sync_keeps_phases_equal_and_blends_cycle_length() {
        let mut r = Rig::new(test_model());
        r.state.clip_b = Some(1);
        r.state.blend = 0.5;
        r.state.sync_phase = true;
        r.update(0.0);
        // Cycle = 0.75 s at blend 0.5: 0.1875 s is a quarter cycle.
        r.update(0.1875);
        assert!((r.clip_time(0) - 0.25).abs() < 1e-5, "{}", r.clip_time(0));
        assert!((r.clip_time(1) - 0.125).abs() < 1e-5);
        for _ in 0..100 {
            r.update(0.0173);
            let (pa, pb) = (r.clip_time(0) / 1.0, r.clip_time(1) / 0.5);
            let d = (pa - pb).abs();
            assert!(d < 1e-4 || (1.0 - d) < 1e-4, "phases {pa} {pb}");
        }
        // The sync group reports through its leader only (Walk on a tie):
        // ~2.4 cycles, each event once per cycle, Run's never.
        let steps = r.log.entries().filter(|e| e.clip == "Run").count();
        let lefts = r.log.entries().filter(|e| e.name == "left").count();
        assert!(steps == 0 && (2..=3).contains(&lefts), "{:?}", r.names());
        // A scrub puts B at A's phase.
        r.state.scrub_to = Some(0.6);
        r.update(0.0);
        assert!((r.clip_time(1) - 0.3).abs() < 1e-5);
    }

    #[test]
    fn choosing_b_under_sync_jumps_to_the_phase_without_events() {
        let mut r = Rig::new(test_model());
        r.state.scrub_to = Some(0.6);
        r.state.playing = false;
        r.update(0.0);
        r.state.clip_b = Some(1);
        r.state.blend = 1.0;
        r.update(0.0);
        assert!((r.clip_time(1) - 0.3).abs() < 1e-6);
        assert!(close(r.pose(), &reference(&r.model, 1, 0.3)));
        // Playing on (cycle 0.5 s at blend 1, Run leads): the jump past
        // Run's event at 0.1 did not fire it, the next loop does.
        r.state.playing = true;
        r.update(0.1);
        assert!(r.log.is_empty(), "{:?}", r.names());
        r.update(0.2);
        assert_eq!(r.names(), vec!["Run:step"]);
    }

    #[test]
    fn blend_zero_and_one_equal_the_single_clips() {
        let mut r = Rig::new(test_model());
        r.state.playing = false;
        r.state.clip_b = Some(1);
        r.state.sync_phase = false;
        r.state.scrub_to = Some(0.3);
        r.update(0.0);
        assert!(close(r.pose(), &reference(&r.model, 0, 0.3)));
        r.state.blend = 1.0;
        r.update(0.0);
        assert!(close(r.pose(), &reference(&r.model, 1, 0.3)));
        // Both clips slide 1 m/s, so at 0.3 s any blend is at 0.3 m; their
        // rotations differ (0.3 rad vs 0.6 rad about z): a quarter of the
        // way is 0.375 rad, which only a t-weighted blend gives.
        r.state.blend = 0.25;
        r.update(0.0);
        let hip = r.pose().locals[1];
        assert!((hip.translation.x - 0.3).abs() < 1e-5, "{}", hip.translation.x);
        assert!((hip.rotation.angle() - 0.375).abs() < 1e-3, "{}", hip.rotation.angle());
        // No clip A: rest pose.
        r.state.clip_a = None;
        r.update(0.0);
        assert_eq!(r.pose().locals, r.model.skeleton.rest());
        assert_eq!(r.time(), 0.0);
    }

    #[test]
    fn events_logged_once_per_crossing() {
        let mut r = Rig::new(test_model());
        // 2 loops in 1/64 s steps: each event twice.
        for _ in 0..128 {
            r.update(1.0 / 64.0);
        }
        assert_eq!(r.names(), vec!["Walk:left", "Walk:right", "Walk:left", "Walk:right"]);
        let e = r.log.entries().next().unwrap();
        assert_eq!(e.time, 0.25);
    }

    #[test]
    fn morph_override_replaces_weights() {
        let mut r = Rig::new(test_model());
        r.state.morph_weights = vec![0.5; 7]; // wrong length: resized
        r.update(0.5);
        // Live copy of the clip's weights while not overriding.
        assert_eq!(r.state.morph_weights.len(), 2);
        assert!((r.state.morph_weights[0] - 0.5).abs() < 1e-6);
        r.state.morph_override = true;
        r.state.morph_weights = vec![0.9, 0.1];
        r.update(0.1);
        assert_eq!(r.anim.character().output().morph_weights(), &[0.9, 0.1]);
    }

    #[test]
    fn identity_palette_view() {
        let mut r = Rig::new(test_model());
        r.state.debug_view = DebugView::IdentityPalette;
        r.update(0.4);
        let out = r.anim.character().output();
        assert!(out.palette(0).iter().all(|m| *m == BoneMatrix::IDENTITY));
        // World matrices still show the pose.
        assert!((out.world()[2] - Matrix4::identity()).norm() > 0.1);
    }

    #[test]
    fn bind_pose_view_on_built_model() {
        let mut r = Rig::new(test_model());
        r.state.debug_view = DebugView::BindPose;
        r.update(0.4);
        let out = r.anim.character().output();
        for m in out.palette(0) {
            assert!((m.to_matrix() - Matrix4::identity()).norm() < 1e-5);
        }
        // The prop (not a joint) follows the spine at its rest offset;
        // the armature keeps its rest world.
        let w = out.world();
        assert!((w[3] - w[2] * r.model.skeleton.rest()[3].to_matrix()).norm() < 1e-6);
        assert!((w[0] - r.model.skeleton.rest()[0].to_matrix()).norm() < 1e-6);
    }

    #[test]
    fn bind_pose_view_on_fox() {
        let Some(path) = crate::testing::skip::shared_path("Fox/Fox.glb") else { return };
        let model = crate::asset::load(&path).expect("Fox imports");
        let mut r = Rig::new(model);
        r.state.debug_view = DebugView::BindPose;
        r.update(0.3);
        let palette = r.anim.character().output().palette(0);
        assert!(!palette.is_empty());
        for (i, m) in palette.iter().enumerate() {
            let err = (m.to_matrix() - Matrix4::identity()).abs().max();
            assert!(err < 1e-3, "palette {i} off identity by {err}");
        }
    }

    #[test]
    fn in_a_level_the_pose_time_is_the_actors() {
        let model = Arc::new(crate::asset::load_default_character().unwrap());
        let controller = Controller::from_text(DEFAULT_CONTROLLER, &model).unwrap();
        let mut state = ViewerState::default();
        let mut anim =
            ViewerAnimation::new(model.clone(), Some((controller, "built-in".into())), &mut state).unwrap();
        anim.enter_level(&crate::world::Level::demo(), &mut state).unwrap();
        let mut log = EventLog::default();
        let mut total = 0.0;
        for _ in 0..5 {
            anim.update(1.0 / 60.0, &mut state, &mut log, 0.0).unwrap();
            total += anim.cpu_pose_us();
        }
        // The level's character is the actor's, not the system's (which the
        // level leaves idle, so its time stayed 0).
        assert!(total > 0.0, "the level's pose work is timed");
    }

    #[test]
    fn controller_mode_maps_parameters_and_switches_to_clips() {
        let model = Arc::new(crate::asset::load_default_character().unwrap());
        let controller = Controller::from_text(DEFAULT_CONTROLLER, &model).unwrap();
        let mut state = ViewerState { clip_a: Some(1), ..ViewerState::default() };
        let mut anim =
            ViewerAnimation::new(model.clone(), Some((controller, "built-in".into())), &mut state).unwrap();
        let mut log = EventLog::default();
        assert!(anim.has_controller());
        anim.update(1.0 / 60.0, &mut state, &mut log, 0.0).unwrap();
        assert_eq!(anim.character().state_name(), Some("Idle"));
        let speed = anim.character().controller().parameter("speed").unwrap();
        state.parameter_changes.push((speed, ParameterValue::Float(2.0)));
        for _ in 0..120 {
            anim.update(1.0 / 60.0, &mut state, &mut log, 0.0).unwrap();
        }
        assert!(state.parameter_changes.is_empty());
        assert_eq!(anim.character().state_name(), Some("Locomotion"));
        assert!(log.entries().any(|e| e.name.starts_with("footstep")), "footsteps while walking");
        // The manual mode plays clip A alone.
        state.mode = AnimationMode::Clips;
        anim.update(1.0 / 60.0, &mut state, &mut log, 0.0).unwrap();
        assert_eq!(anim.character().clip_weights(), &[0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    }
}
