//! The viewer's animation system: plays the clips `ViewerState` selects,
//! blends them, applies the morph override and the debug views, and leaves
//! the result in a `scene::Evaluator` (pose, world matrices, palettes).
//!
//! Every buffer is allocated in `AnimationSystem::new`; `update` allocates
//! nothing except the strings of events that fire (pushed into the log).

use super::state::{DebugView, EventLog, LoggedEvent, ViewerState};
use crate::anim::{BlendTwoJob, ClipPlayer, Pose, RotationBlend, SampleJob, SamplingCursor};
use crate::asset::Model;
use crate::scene::Evaluator;
use nalgebra::Matrix4;
use std::time::Instant;

/// Length of one step of `ViewerState::step_frames`, seconds.
pub const STEP_SECONDS: f32 = 1.0 / 30.0;

/// With phase sync, a B that is off A's phase by more than this fraction of
/// its duration jumps there (no events); less is rounding drift, absorbed
/// by playback.
const SYNC_SNAP: f32 = 1e-3;

/// Clip players, sampling cursors and pose buffers for one model.
pub struct AnimationSystem {
    /// One player per clip, so switching clips resumes where each one was.
    players: Vec<ClipPlayer>,
    /// One cursor per clip (a cursor is only valid for its own clip's tracks).
    cursors: Vec<SamplingCursor>,
    /// Clip names for the event log (the index when unnamed).
    clip_names: Vec<String>,
    /// Clip A sampled, when it must be blended.
    pose_a: Pose,
    /// Clip B sampled.
    pose_b: Pose,
    /// Bind-pose world matrix of each skeleton joint that some skin lists:
    /// `inverse(inverse_bind)` from the first skin listing it. `None` for
    /// other nodes (and for non-invertible inverse binds).
    bind_world: Vec<Option<Matrix4<f32>>>,
    /// Clip A of the last update (for `time` and `duration`).
    current: Option<usize>,
    cpu_pose_us: f64,
}

impl AnimationSystem {
    /// Allocates every buffer for `model`: players, cursors, two sampled poses.
    pub fn new(model: &Model) -> Self {
        let joints = model.skeleton.len();
        let weights = model.rest_morph_weights.len();
        let mut bind_world = vec![None; joints];
        // The first skin listing a joint wins: with two skins binding one
        // joint differently, the first skin's mesh shows its bind pose and
        // the second shows the difference (palette != identity), which is
        // exactly what this view is for.
        for skin in &model.skins {
            for (&j, ib) in skin.joints.iter().zip(&skin.inverse_binds) {
                if let Some(slot @ None) = bind_world.get_mut(j as usize) {
                    *slot = ib.try_inverse();
                }
            }
        }
        AnimationSystem {
            players: model.clips.iter().map(|c| ClipPlayer::new(c.duration)).collect(),
            cursors: model.clips.iter().map(|c| SamplingCursor::new(c)).collect(),
            clip_names: model
                .clips
                .iter()
                .enumerate()
                .map(|(i, c)| c.name.clone().unwrap_or_else(|| i.to_string()))
                .collect(),
            pose_a: Pose::new(joints, weights),
            pose_b: Pose::new(joints, weights),
            bind_world,
            current: None,
            cpu_pose_us: 0.0,
        }
    }

    /// Time of clip A (seconds on the clip's timeline), 0 without a clip.
    pub fn time(&self) -> f32 {
        self.current.map_or(0.0, |c| self.players[c].time())
    }

    /// Duration of clip A, 0 without a clip.
    pub fn duration(&self) -> f32 {
        self.current.map_or(0.0, |c| self.players[c].duration())
    }

    /// Time of clip `clip`'s player (0 for an unknown clip).
    pub fn clip_time(&self, clip: usize) -> f32 {
        self.players.get(clip).map_or(0.0, |p| p.time())
    }

    /// CPU time of the last update's pose evaluation (sampling, blending,
    /// hierarchy, palettes), microseconds.
    pub fn cpu_pose_us(&self) -> f64 {
        self.cpu_pose_us
    }

    /// One frame: advances clips A and B by `dt` seconds (scaled by
    /// `state.speed`) when playing, applies and clears the scrub and step
    /// requests, samples and blends, applies the morph override, then writes
    /// the pose into `evaluator` and computes world matrices and palettes
    /// for `state.debug_view`. Events that fire go to `log`, stamped `now`.
    pub fn update(
        &mut self,
        dt: f32,
        state: &mut ViewerState,
        model: &Model,
        evaluator: &mut Evaluator,
        log: &mut EventLog,
        now: f64,
    ) -> Result<(), String> {
        let clips = self.players.len().min(model.clips.len());
        let a = state.clip_a.filter(|&c| c < clips);
        // B equal to A would advance one player twice; blending a clip with
        // itself is the clip alone anyway.
        let b = state.clip_b.filter(|&c| c < clips && Some(c) != a);
        let blend = if state.blend.is_finite() { state.blend.clamp(0.0, 1.0) } else { 0.0 };
        let sync = state.sync_phase;
        self.current = a;

        if let Some(a) = a {
            self.players[a].set_looping(state.looping);
            if let Some(b) = b {
                self.players[b].set_looping(state.looping);
            }
            if state.playing && dt.is_finite() && dt > 0.0 {
                self.advance(dt, state.speed, a, b, blend, sync, model, log, now);
            }
            // Scrubbing and stepping jump without firing events: they are
            // the user moving the playhead, not playback crossing an event.
            let step = state.step_frames as f32 * STEP_SECONDS;
            if let Some(t) = state.scrub_to.filter(|t| t.is_finite()) {
                self.players[a].set_time(t);
                if let Some(b) = b {
                    let tb = if sync { self.synced_time(a, b) } else { t };
                    self.players[b].set_time(tb);
                }
            }
            if state.step_frames != 0 {
                let ta = self.players[a].time() + step;
                self.players[a].set_time(ta);
                if let Some(b) = b {
                    let tb = if sync { self.synced_time(a, b) } else { self.players[b].time() + step };
                    self.players[b].set_time(tb);
                }
            }
        }
        state.scrub_to = None;
        state.step_frames = 0;
        // Paused, B may have just been chosen: show it at A's phase already.
        if let (Some(a), Some(b), true) = (a, b, sync)
            && self.phase_drift(a, b).abs() > SYNC_SNAP * self.players[b].duration()
        {
            let t = self.synced_time(a, b);
            self.players[b].set_time(t);
        }

        let start = Instant::now();
        self.sample(a, b, blend, model, evaluator).map_err(|e| e.to_string())?;
        self.apply_morphs(state, model, evaluator);
        match state.debug_view {
            DebugView::BindPose => self.bind_pose(model, evaluator),
            DebugView::IdentityPalette => {
                evaluator.update_matrices(model).map_err(|e| e.to_string())?;
                evaluator.set_identity_palettes();
                Ok(())
            }
            DebugView::Shaded | DebugView::WeightHeatMap => {
                evaluator.update_matrices(model).map_err(|e| e.to_string())
            }
        }?;
        self.cpu_pose_us = start.elapsed().as_secs_f64() * 1e6;
        Ok(())
    }

    /// How far B's time is behind A's phase (seconds of B; shortest way
    /// round when looping).
    fn phase_drift(&self, a: usize, b: usize) -> f32 {
        let db = self.players[b].duration();
        let mut drift = self.synced_time(a, b) - self.players[b].time();
        if self.players[b].looping() && db > 0.0 {
            drift -= db * (drift / db).round();
        }
        drift
    }

    /// Clip B's time at clip A's normalised phase.
    fn synced_time(&self, a: usize, b: usize) -> f32 {
        let (pa, pb) = (&self.players[a], &self.players[b]);
        if pa.duration() > 0.0 { pa.time() / pa.duration() * pb.duration() } else { 0.0 }
    }

    /// Moves the players of A and B, reporting the events they cross.
    ///
    /// With phase sync, both clips move through the same fraction of their
    /// cycle, and the cycle length is the durations interpolated by the blend
    /// weight (a walk/run blend at 0.5 takes half-way between the walk's and
    /// the run's period), so feet stay in step at any weight.
    #[allow(clippy::too_many_arguments)]
    fn advance(
        &mut self,
        dt: f32,
        speed: f32,
        a: usize,
        b: Option<usize>,
        blend: f32,
        sync: bool,
        model: &Model,
        log: &mut EventLog,
        now: f64,
    ) {
        let names = &self.clip_names;
        fn reporter<'l>(
            log: &'l mut EventLog,
            clip: &'l str,
            now: f64,
        ) -> impl FnMut(&crate::anim::ClipEvent) + 'l {
            move |e| {
                log.push(LoggedEvent { at: now, clip: clip.to_owned(), time: e.time, name: e.name.clone() })
            }
        }
        let (da, db) = (self.players[a].duration(), b.map_or(0.0, |b| self.players[b].duration()));
        match b {
            Some(b) if sync && da > 0.0 && db > 0.0 => {
                let cycle = da + (db - da) * blend;
                let phase_step = dt * speed / cycle;
                let phase_before = self.players[a].time() / da;
                let mut drift = self.phase_drift(a, b);
                self.players[a].set_speed(1.0);
                self.players[a].advance(
                    phase_step * da,
                    &model.clips[a].events,
                    reporter(log, &names[a], now),
                );
                // B moves by the same phase step plus its rounding drift from
                // A's phase, folded into one advance so each crossed event
                // fires exactly once. A real jump (B just chosen, sync just
                // turned on) is a jump, not playback: no events.
                if drift.abs() > SYNC_SNAP * db {
                    self.players[b].set_time(phase_before * db);
                    drift = 0.0;
                }
                self.players[b].set_speed(1.0);
                self.players[b].advance(
                    phase_step * db + drift,
                    &model.clips[b].events,
                    reporter(log, &names[b], now),
                );
            }
            _ => {
                self.players[a].set_speed(speed);
                self.players[a].advance(dt, &model.clips[a].events, reporter(log, &names[a], now));
                if let Some(b) = b {
                    self.players[b].set_speed(speed);
                    self.players[b].advance(dt, &model.clips[b].events, reporter(log, &names[b], now));
                }
            }
        }
    }

    /// Samples A (and B when it has weight) and blends into the evaluator's pose.
    fn sample(
        &mut self,
        a: Option<usize>,
        b: Option<usize>,
        blend: f32,
        model: &Model,
        evaluator: &mut Evaluator,
    ) -> Result<(), crate::anim::JobError> {
        let rest = model.skeleton.rest();
        let rest_weights = &model.rest_morph_weights[..];
        let pose = evaluator.pose_mut();
        let Some(a) = a else {
            crate::anim::job::check_len("pose locals", pose.locals.len(), rest.len())?;
            crate::anim::job::check_len("pose weights", pose.morph_weights.len(), rest_weights.len())?;
            pose.locals.copy_from_slice(rest);
            pose.morph_weights.copy_from_slice(rest_weights);
            return Ok(());
        };
        let (clip_a, time_a) = (&model.clips[a], self.players[a].time());
        let b = b.filter(|_| blend > 0.0);
        let Some(b) = b else {
            // A alone: sampled straight into the evaluator's pose.
            return SampleJob {
                clip: clip_a,
                time: f64::from(time_a),
                rest,
                rest_morph_weights: rest_weights,
                rotation_blend: RotationBlend::Slerp,
                cursor: &mut self.cursors[a],
                output: &mut pose.locals,
                morph_output: &mut pose.morph_weights,
            }
            .run();
        };
        SampleJob {
            clip: clip_a,
            time: f64::from(time_a),
            rest,
            rest_morph_weights: rest_weights,
            rotation_blend: RotationBlend::Slerp,
            cursor: &mut self.cursors[a],
            output: &mut self.pose_a.locals,
            morph_output: &mut self.pose_a.morph_weights,
        }
        .run()?;
        SampleJob {
            clip: &model.clips[b],
            time: f64::from(self.players[b].time()),
            rest,
            rest_morph_weights: rest_weights,
            rotation_blend: RotationBlend::Slerp,
            cursor: &mut self.cursors[b],
            output: &mut self.pose_b.locals,
            morph_output: &mut self.pose_b.morph_weights,
        }
        .run()?;
        BlendTwoJob {
            a: &self.pose_a.locals,
            b: &self.pose_b.locals,
            a_morph: &self.pose_a.morph_weights,
            b_morph: &self.pose_b.morph_weights,
            t: blend,
            output: &mut pose.locals,
            morph_output: &mut pose.morph_weights,
        }
        .run()
    }

    /// With the override on, the UI's weights replace the pose's; otherwise
    /// the pose's weights are copied to the UI so its sliders show them live
    /// (and turning the override on starts from what is on screen).
    fn apply_morphs(&self, state: &mut ViewerState, model: &Model, evaluator: &mut Evaluator) {
        let weights = &mut evaluator.pose_mut().morph_weights;
        if state.morph_weights.len() != weights.len() {
            // Only when the model changes: the UI's list is resized once.
            state.morph_weights.clear();
            state.morph_weights.extend_from_slice(&model.rest_morph_weights);
            state.morph_weights.resize(weights.len(), 0.0);
        }
        if state.morph_override {
            weights.copy_from_slice(&state.morph_weights);
        } else {
            state.morph_weights.copy_from_slice(weights);
        }
    }

    /// The bind-pose view: each skin joint at `inverse(inverse_bind)` (its
    /// palette entry becomes the identity), every other node at its rest
    /// local transform under its parent, so attachments under a joint follow
    /// it and nodes above the skeleton keep their rest world matrix.
    fn bind_pose(&self, model: &Model, evaluator: &mut Evaluator) -> Result<(), String> {
        let parents = model.skeleton.parents();
        let rest = model.skeleton.rest();
        let world = evaluator.world_mut();
        if world.len() != parents.len() || self.bind_world.len() != parents.len() {
            return Err(format!(
                "bind pose: {} world matrices for {} joints (evaluator made for another model?)",
                world.len(),
                parents.len()
            ));
        }
        for j in 0..parents.len() {
            world[j] = match self.bind_world[j] {
                Some(m) => m,
                None => {
                    let parent = parents[j];
                    let local = rest[j].to_matrix();
                    if parent == crate::anim::NO_PARENT { local } else { world[parent as usize] * local }
                }
            };
        }
        evaluator.update_palettes(model).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::anim::{
        BoneMatrix, Clip, ClipEvent, Influences, Interpolation, JointTracks, MeshPrimitive, MorphDeltas,
        MorphTarget, NO_PARENT, Skeleton, Skin, Track, Transform,
    };
    use crate::asset::{Mesh, MeshInstance};
    use nalgebra::{UnitQuaternion, Vector3};
    use std::sync::Arc;

    fn translate(x: f32, y: f32) -> Transform {
        Transform { translation: Vector3::new(x, y, 0.0), ..Transform::IDENTITY }
    }

    /// A clip moving joint 1 along x from 0 to `duration` metres over `duration` seconds.
    fn slide(name: &str, duration: f32, events: &[(f32, &str)]) -> Arc<Clip> {
        Arc::new(Clip {
            name: Some(name.into()),
            duration,
            joint_tracks: vec![JointTracks {
                joint: 1,
                translation: Some(Track {
                    times: vec![0.0, duration],
                    values: vec![Vector3::new(0.0, 1.0, 0.0), Vector3::new(duration, 1.0, 0.0)],
                    interpolation: Interpolation::Linear,
                }),
                rotation: Some(Track {
                    times: vec![0.0, duration],
                    values: vec![
                        UnitQuaternion::identity().into_inner(),
                        UnitQuaternion::from_axis_angle(&Vector3::z_axis(), 1.0).into_inner(),
                    ],
                    interpolation: Interpolation::Linear,
                }),
                scale: None,
            }],
            morph_tracks: vec![crate::anim::MorphWeightTrack {
                offset: 0,
                count: 2,
                times: vec![0.0, duration],
                values: vec![0.0, 0.0, 1.0, 0.5],
                interpolation: Interpolation::Linear,
            }],
            events: events.iter().map(|&(time, n)| ClipEvent { time, name: n.into() }).collect(),
        })
    }

    /// Nodes: 0 = armature (not a joint), 1 = hip, 2 = spine, 3 = prop under
    /// the spine (not a joint), 4 = the mesh node. One skin over joints
    /// [1, 2], one skinned triangle with two morph targets; clips "Walk"
    /// (1 s, events at 0.25 and 0.75) and "Run" (0.5 s, event at 0.1).
    pub(crate) fn test_model() -> Model {
        let names = ["armature", "hip", "spine", "prop", "mesh"].map(String::from).to_vec();
        let parents = vec![NO_PARENT, 0, 1, 2, NO_PARENT];
        let rest = vec![
            translate(0.0, 0.5),
            translate(0.0, 1.0),
            translate(0.0, 1.0),
            translate(0.3, 0.0),
            Transform::IDENTITY,
        ];
        let skeleton = Skeleton::new(names, parents, rest).unwrap();
        // Inverse binds of the rest pose: hip at y = 1.5, spine at y = 2.5.
        let ib = |y: f32| Matrix4::new_translation(&Vector3::new(0.0, -y, 0.0));
        let skin = Skin { name: "skin".into(), joints: vec![1, 2], inverse_binds: vec![ib(1.5), ib(2.5)] };
        let primitive = MeshPrimitive {
            positions: vec![[0.0, 1.5, 0.0], [0.0, 2.5, 0.0], [0.5, 2.0, 0.0]],
            influences: Some(Influences {
                per_vertex: 4,
                joints: vec![0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0],
                weights: vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.25, 0.75, 0.0, 0.0],
            }),
            morph_targets: vec![
                MorphTarget {
                    positions: Some(MorphDeltas::Dense(vec![[0.1, 0.0, 0.0]; 3])),
                    normals: None,
                    tangents: None,
                },
                MorphTarget {
                    positions: Some(MorphDeltas::Dense(vec![[0.0, 0.1, 0.0]; 3])),
                    normals: None,
                    tangents: None,
                },
            ],
            indices: vec![0, 1, 2],
            ..Default::default()
        };
        let mesh = Mesh {
            name: "body".into(),
            primitives: vec![primitive],
            primitive_indices: vec![0],
            target_names: vec!["smile".into(), "blink".into()],
            target_count: 2,
        };
        Model {
            file: "test.gltf".into(),
            skeleton: Arc::new(skeleton),
            node_of_joint: (0..5).collect(),
            joint_of_node: (0..5).collect(),
            skins: vec![skin],
            meshes: vec![Arc::new(mesh)],
            instances: vec![MeshInstance {
                node: 4,
                joint: 4,
                mesh: 0,
                skin: Some(0),
                morph_offset: 0,
                morph_count: 2,
            }],
            clips: vec![
                slide("Walk", 1.0, &[(0.25, "left"), (0.75, "right")]),
                slide("Run", 0.5, &[(0.1, "step")]),
            ],
            materials: Vec::new(),
            rest_morph_weights: vec![0.0, 0.0],
            warnings: Vec::new(),
        }
    }

    struct Rig {
        model: Model,
        anim: AnimationSystem,
        eval: Evaluator,
        state: ViewerState,
        log: EventLog,
    }

    impl Rig {
        fn new(model: Model) -> Self {
            let anim = AnimationSystem::new(&model);
            let eval = Evaluator::new(&model);
            let state = ViewerState { clip_a: Some(0), ..ViewerState::default() };
            Rig { model, anim, eval, state, log: EventLog::default() }
        }

        fn update(&mut self, dt: f32) {
            self.anim.update(dt, &mut self.state, &self.model, &mut self.eval, &mut self.log, 0.0).unwrap();
        }

        fn names(&self) -> Vec<String> {
            self.log.entries().map(|e| format!("{}:{}", e.clip, e.name)).collect()
        }
    }

    /// The pose of `clip` at `time` alone, through the evaluator.
    fn reference(model: &Model, clip: usize, time: f32) -> Pose {
        let mut e = Evaluator::new(model);
        e.set_clip_time(model, clip, time).unwrap();
        e.pose().clone()
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
        assert!((r.anim.time() - 0.25).abs() < 1e-6);
        assert_eq!(r.anim.duration(), 1.0);
        assert!(close(r.eval.pose(), &reference(&r.model, 0, 0.25)));
        r.state.playing = false;
        r.update(0.25);
        assert!((r.anim.time() - 0.25).abs() < 1e-6);
        r.state.playing = true;
        r.state.speed = 0.5;
        r.update(0.5);
        assert!((r.anim.time() - 0.5).abs() < 1e-6);
        assert!(r.anim.cpu_pose_us() >= 0.0);
    }

    #[test]
    fn negative_speed_goes_backwards() {
        let mut r = Rig::new(test_model());
        r.state.scrub_to = Some(0.5);
        r.update(0.0);
        r.state.speed = -1.0;
        r.update(0.125);
        assert!((r.anim.time() - 0.375).abs() < 1e-6);
        r.update(0.5);
        assert!((r.anim.time() - 0.875).abs() < 1e-6, "wraps backwards: {}", r.anim.time());
        assert_eq!(r.names(), vec!["Walk:left"]);
    }

    #[test]
    fn scrub_and_step_set_time_without_events() {
        let mut r = Rig::new(test_model());
        r.state.playing = false;
        r.state.scrub_to = Some(0.8);
        r.update(0.0);
        assert_eq!(r.anim.time(), 0.8);
        assert!(r.state.scrub_to.is_none());
        assert!(close(r.eval.pose(), &reference(&r.model, 0, 0.8)));
        r.state.step_frames = -3;
        r.update(0.0);
        assert!((r.anim.time() - 0.7).abs() < 1e-6);
        assert_eq!(r.state.step_frames, 0);
        r.state.step_frames = 12; // 0.7 + 0.4 wraps to 0.1
        r.update(0.0);
        assert!((r.anim.time() - 0.1).abs() < 1e-5);
        assert!(r.log.is_empty(), "{:?}", r.names());
        // Not looping: clamps.
        r.state.looping = false;
        r.state.scrub_to = Some(5.0);
        r.update(0.0);
        assert_eq!(r.anim.time(), 1.0);
        assert!(r.log.is_empty());
    }

    #[test]
    fn sync_keeps_phases_equal_and_blends_cycle_length() {
        let mut r = Rig::new(test_model());
        r.state.clip_b = Some(1);
        r.state.blend = 0.5;
        r.state.sync_phase = true;
        // Cycle = 0.75 s at blend 0.5: 0.1875 s is a quarter cycle.
        r.update(0.1875);
        assert!((r.anim.time() - 0.25).abs() < 1e-5, "{}", r.anim.time());
        assert!((r.anim.clip_time(1) - 0.125).abs() < 1e-5);
        for _ in 0..100 {
            r.update(0.0173);
            let (pa, pb) = (r.anim.time() / 1.0, r.anim.clip_time(1) / 0.5);
            let d = (pa - pb).abs();
            assert!(d < 1e-4 || (1.0 - d) < 1e-4, "phases {pa} {pb}");
        }
        // Each clip fired its events once per cycle it completed (~2.4 cycles).
        let steps = r.log.entries().filter(|e| e.clip == "Run").count();
        let lefts = r.log.entries().filter(|e| e.name == "left").count();
        assert!((2..=3).contains(&steps) && (2..=3).contains(&lefts), "{:?}", r.names());
        // A scrub puts B at A's phase.
        r.state.scrub_to = Some(0.6);
        r.update(0.0);
        assert!((r.anim.clip_time(1) - 0.3).abs() < 1e-5);
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
        assert!((r.anim.clip_time(1) - 0.3).abs() < 1e-6);
        assert!(close(r.eval.pose(), &reference(&r.model, 1, 0.3)));
        // Playing on (cycle 0.5 s at blend 1): B follows A's phase; the jump
        // past B's event at 0.1 did not fire it, the next loop does.
        r.state.playing = true;
        r.update(0.1);
        assert_eq!(r.names(), vec!["Walk:right"]);
        r.update(0.2);
        assert_eq!(r.names(), vec!["Walk:right", "Run:step"]);
    }

    #[test]
    fn blend_zero_and_one_equal_the_single_clips() {
        let mut r = Rig::new(test_model());
        r.state.playing = false;
        r.state.clip_b = Some(1);
        r.state.sync_phase = false;
        r.state.scrub_to = Some(0.3);
        r.update(0.0);
        assert!(close(r.eval.pose(), &reference(&r.model, 0, 0.3)));
        r.state.blend = 1.0;
        r.update(0.0);
        assert!(close(r.eval.pose(), &reference(&r.model, 1, 0.3)));
        r.state.blend = 0.5;
        r.update(0.0);
        let mid = r.eval.pose().locals[1].translation.x;
        assert!((mid - 0.3).abs() < 1e-5, "both clips slide 1 m/s: {mid}");
        // No clip A: rest pose.
        r.state.clip_a = None;
        r.update(0.0);
        assert_eq!(r.eval.pose().locals, r.model.skeleton.rest());
        assert_eq!(r.anim.time(), 0.0);
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
        assert_eq!(r.eval.pose().morph_weights, vec![0.9, 0.1]);
    }

    #[test]
    fn identity_palette_view() {
        let mut r = Rig::new(test_model());
        r.state.debug_view = DebugView::IdentityPalette;
        r.update(0.4);
        assert!(r.eval.palette(0).iter().all(|m| *m == BoneMatrix::IDENTITY));
        // World matrices still show the pose.
        assert!((r.eval.world()[2] - Matrix4::identity()).norm() > 0.1);
    }

    #[test]
    fn bind_pose_view_on_built_model() {
        let mut r = Rig::new(test_model());
        r.state.debug_view = DebugView::BindPose;
        r.update(0.4);
        for m in r.eval.palette(0) {
            assert!((m.to_matrix() - Matrix4::identity()).norm() < 1e-5);
        }
        // The prop (not a joint) follows the spine at its rest offset;
        // the armature keeps its rest world.
        let w = r.eval.world();
        assert!((w[3] - w[2] * r.model.skeleton.rest()[3].to_matrix()).norm() < 1e-6);
        assert!((w[0] - r.model.skeleton.rest()[0].to_matrix()).norm() < 1e-6);
    }

    #[test]
    fn bind_pose_view_on_fox() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/assets/Fox/Fox.glb");
        if !path.exists() {
            eprintln!("skipping: {} is absent", path.display());
            return;
        }
        let model = crate::asset::load(&path).expect("Fox imports");
        let mut r = Rig::new(model);
        r.state.debug_view = DebugView::BindPose;
        r.update(0.3);
        let palette = r.eval.palette(0);
        assert!(!palette.is_empty());
        for (i, m) in palette.iter().enumerate() {
            let err = (m.to_matrix() - Matrix4::identity()).abs().max();
            assert!(err < 1e-3, "palette {i} off identity by {err}");
        }
    }
}
