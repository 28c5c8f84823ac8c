//! Many characters of one rig in one scene: each with its own animation
//! state (its own `Character` under one controller), a pseudo-random phase,
//! and a place on a square grid in the ground plane (glTF's +Y up), updated
//! together by an `AnimationSystem` (parallel on its rayon pool). What
//! `--characters N` means for `render`, `view` and `bench`. It places and
//! plays; it never draws (the renderer reads it through `FramePoses`).

use super::gpu_pose::pose_program;
use super::lod::EvaluationRate;
use super::script::Script;
use super::system::ThreadPoolError;
use super::{
    AnimationSystem, Character, CharacterId, Controller, ParameterError, ParameterId, ParameterValue,
    UpdateError,
};
use crate::anim::frame_poses::{FramePoses, FrameSource, PoseError, SkinInput};
use crate::anim::framing::{Bounds, grow_bounds};
use crate::anim::{JobError, PosePlayback, PoseProgram, Rig, Sight};
use nalgebra::{Matrix4, Vector3};
use std::sync::Arc;

/// Why a crowd could not be made or played. One line; causes kept.
#[derive(Debug, thiserror::Error)]
pub enum CrowdError {
    /// `--characters 0`.
    #[error("a crowd needs at least one character")]
    Empty,
    /// The frame rate is zero, negative or not a number.
    #[error("the frame rate must be positive, not {0}")]
    FrameRate(f64),
    /// The animation threads could not start.
    #[error(transparent)]
    Threads(#[from] ThreadPoolError),
    /// A character refused the rig or its controller.
    #[error(transparent)]
    Character(#[from] JobError),
    /// A character's update failed.
    #[error(transparent)]
    Update(#[from] UpdateError),
}

/// A crowd of characters played at a fixed frame rate.
pub struct Crowd {
    rig: Arc<Rig>,
    controller: Arc<Controller>,
    system: AnimationSystem,
    /// Each character's placement (a translation on the grid).
    worlds: Vec<Matrix4<f32>>,
    fps: f64,
    /// The frame `frame` poses next.
    next_frame: u32,
    paused: bool,
    /// Poses every character's joints on the GPU with this program.
    gpu_program: Option<Arc<PoseProgram>>,
    /// `gpu_program`, kept while the crowd is posed on the CPU for framing.
    framing_aside: Option<Arc<PoseProgram>>,
    /// A character came back into view since the last update: paused,
    /// the update still poses it (at the paused time).
    seen_again: bool,
    /// Each character's rate as last foreseen (empty until `foresee`;
    /// characters past it keep their own), set by the next update.
    rates: Vec<EvaluationRate>,
    /// Characters the last update posed, and how long it took.
    posed: usize,
    last_update: std::time::Duration,
    /// Changes to every character's parameters, at times from frame 0,
    /// and the next one due.
    script: Script,
    next_set: usize,
}

impl Crowd {
    /// `count` characters of `rig` driven by `controller`, `spacing` apart on
    /// a square grid centred on the origin, updated on `threads` threads
    /// (the calling thread included; 0: every core); frames advance by
    /// `1 / fps` seconds.
    pub fn new(
        rig: Arc<Rig>,
        controller: Arc<Controller>,
        count: usize,
        spacing: f32,
        fps: f64,
        threads: usize,
    ) -> Result<Self, CrowdError> {
        if count == 0 {
            return Err(CrowdError::Empty);
        }
        if !(fps.is_finite() && fps > 0.0) {
            return Err(CrowdError::FrameRate(fps));
        }
        let mut system = AnimationSystem::with_threads(threads)?;
        // Drawn, not edited: no local pose kept per character, and only
        // the world matrices that drawing and root motion read.
        system.set_keeps_local_poses(false);
        system.set_keeps_world_matrices(false);
        let worlds =
            (0..count).map(|i| Matrix4::new_translation(&grid_position(i, count, spacing))).collect();
        let mut crowd = Crowd {
            rig,
            controller,
            system,
            worlds,
            fps,
            next_frame: 0,
            paused: false,
            gpu_program: None,
            framing_aside: None,
            seen_again: false,
            rates: Vec::new(),
            posed: 0,
            last_update: std::time::Duration::ZERO,
            script: Script::default(),
            next_set: 0,
        };
        crowd.restart()?;
        Ok(crowd)
    }

    /// Goes back to before frame 0: fresh characters, each sought to its phase.
    pub fn restart(&mut self) -> Result<(), CrowdError> {
        self.system.clear();
        self.system.reserve(self.worlds.len());
        // Phases spread over the longest clip: looping clips wrap, so every
        // character shows a different moment of its motion.
        let span = self.rig.clips.iter().map(|c| f64::from(c.duration)).fold(0.0, f64::max);
        for i in 0..self.worlds.len() {
            let id = self.system.add(self.rig.clone(), self.controller.clone())?;
            let character = self.system.character_mut(id);
            character.seek(phase(i as u64) * span);
            character.set_pose_program(self.gpu_program.clone());
        }
        self.system.prefer_huge_pages();
        self.next_frame = 0;
        self.next_set = 0;
        Ok(())
    }

    /// Changes every character's parameters as `script` says, each change
    /// at its time in seconds from frame 0 (frame `i` is `i / fps`): before
    /// the update of the first frame at or after it (those already past,
    /// at the next frame), as a [`Timeline`](super::Timeline) changes its
    /// one character's, every character at once whatever its phase.
    /// `frame` applies them; `update` alone applies none.
    pub fn set_script(&mut self, script: Script) {
        self.script = script;
        self.next_set = 0;
    }

    /// Poses frame `i` (frame 0 at each character's phase, then `1 / fps`
    /// apart). Frames come in order; an earlier one restarts the crowd.
    pub fn frame(&mut self, i: u32) -> Result<(), CrowdError> {
        if self.next_frame > i + 1 {
            self.restart()?;
        }
        while self.next_frame <= i {
            let time = f64::from(self.next_frame) / self.fps;
            let script = std::mem::take(&mut self.script);
            for set in script.due(&mut self.next_set, time) {
                // Checked against this controller when the script was parsed.
                let _ = self.set_on_every(set.parameter, set.value);
            }
            self.script = script;
            let dt = if self.next_frame == 0 { 0.0 } else { (1.0 / self.fps) as f32 };
            self.update(dt)?;
            self.next_frame += 1;
        }
        Ok(())
    }

    /// Advances every character by `dt` seconds. Paused, nothing moves:
    /// the poses and their versions stay, so no palette changes, unless a
    /// character came back into view (`foresee`), whose pose is then
    /// brought to the paused time.
    pub fn update(&mut self, dt: f32) -> Result<(), CrowdError> {
        let seen_again = std::mem::take(&mut self.seen_again);
        (self.posed, self.last_update) = (0, std::time::Duration::ZERO);
        let dt = match (self.paused && self.next_frame > 0, seen_again) {
            (false, _) => dt,
            // Its pose is from before it left the view: bring it to the
            // paused time (what is due re-poses the same time).
            (true, true) => 0.0,
            (true, false) => return Ok(()),
        };
        self.system.update_at_rates(dt, &self.rates)?;
        (self.posed, self.last_update) = (self.system.posed(), self.system.last_update());
        Ok(())
    }

    /// Sets each character's evaluation rate, from the next update on, for
    /// how the next frames will see it (`Sight`, in character order;
    /// characters past the slice keep theirs): by the pixels it spans,
    /// and not at all while no pass draws it. A character seen again is
    /// posed on the next update, paused or not. The rates are written here
    /// and set on the characters by the (parallel) update.
    pub fn foresee(&mut self, sight: &[Sight]) {
        let sight = &sight[..sight.len().min(self.len())];
        if self.rates.len() < sight.len() {
            self.rates.resize(sight.len(), EvaluationRate::EveryFrame);
        }
        for (rate, &sight) in self.rates.iter_mut().zip(sight) {
            let new = EvaluationRate::for_sight(sight);
            self.seen_again |= *rate == EvaluationRate::Unseen && new != EvaluationRate::Unseen;
            *rate = new;
        }
    }

    /// Poses the characters' joints on the GPU (`true`: the renderer's
    /// pose pass samples what each character's update records, see
    /// `gpu_pose`) or on the CPU; the next update evaluates every
    /// character. Fails for a rig the GPU cannot pose (compressed clips,
    /// too many joints or layers).
    pub fn set_pose_on_gpu(&mut self, on: bool) -> Result<(), CrowdError> {
        let program = match on {
            true => Some(Arc::new(pose_program(&self.rig, &self.controller, self.rig.rotation_blend())?)),
            false => None,
        };
        self.framing_aside = None;
        self.set_program(program);
        Ok(())
    }

    /// Every character posed with `program` (on the CPU for `None`).
    fn set_program(&mut self, program: Option<Arc<PoseProgram>>) {
        for i in 0..self.len() {
            self.character_mut(i).set_pose_program(program.clone());
        }
        self.gpu_program = program;
    }

    /// The program posing the characters on the GPU, if they are posed there.
    pub fn pose_program(&self) -> Option<&Arc<PoseProgram>> {
        self.gpu_program.as_ref()
    }

    /// Pauses or resumes every character.
    pub fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
    }

    /// Whether the crowd is paused.
    pub fn paused(&self) -> bool {
        self.paused
    }

    /// The characters, in order.
    pub fn characters(&self) -> &[Character] {
        self.system.characters()
    }

    /// Character `i` for changes (parameters, seeking).
    pub fn character_mut(&mut self, i: usize) -> &mut Character {
        self.system.character_mut(CharacterId(i))
    }

    /// The controller every character runs.
    pub fn controller(&self) -> &Arc<Controller> {
        &self.controller
    }

    /// Sets `parameter` of every character (fires a trigger on each) as
    /// [`Character::set`] does; fails for a value the parameter does not
    /// take, on the first character (they share the controller), so
    /// setting none.
    pub fn set_on_every(
        &mut self,
        parameter: ParameterId,
        value: ParameterValue,
    ) -> Result<(), ParameterError> {
        for i in 0..self.system.len() {
            self.system.character_mut(CharacterId(i)).set(parameter, value)?;
        }
        Ok(())
    }

    /// Each character's world placement, in order.
    pub fn worlds(&self) -> &[Matrix4<f32>] {
        &self.worlds
    }

    /// Moves every character's place by `offset`.
    pub fn shift(&mut self, offset: &Vector3<f32>) {
        for world in &mut self.worlds {
            *world = Matrix4::new_translation(offset) * *world;
        }
    }

    /// Number of characters.
    pub fn len(&self) -> usize {
        self.worlds.len()
    }

    /// Never true: a crowd has at least one character.
    pub fn is_empty(&self) -> bool {
        self.worlds.is_empty()
    }

    /// Time of the last update (all characters; zero when a paused crowd
    /// had nothing to do).
    pub fn last_update(&self) -> std::time::Duration {
        self.last_update
    }

    /// How many characters the last update posed (none while paused,
    /// unless one came back into view).
    pub fn posed(&self) -> usize {
        self.posed
    }
}

/// The crowd as the renderer reads it: every character's pose and place.
impl FramePoses for Crowd {
    fn count(&self) -> usize {
        self.len()
    }
    fn input(&self, c: usize) -> SkinInput<'_> {
        let character = &self.characters()[c];
        SkinInput { pose: character.pose(), version: character.version() }
    }
    fn world(&self, c: usize) -> Matrix4<f32> {
        self.worlds()[c]
    }
    fn worlds(&self) -> Option<&[Matrix4<f32>]> {
        Some(Crowd::worlds(self))
    }
    fn playback(&self, c: usize) -> Option<PosePlayback<'_>> {
        self.characters()[c].playback()
    }
    fn gpu_pose(&self) -> Option<(usize, &Arc<PoseProgram>)> {
        self.gpu_program.as_ref().map(|p| (0, p))
    }
}

impl FrameSource for Crowd {
    fn restart(&mut self) -> Result<(), PoseError> {
        Ok(Crowd::restart(self)?)
    }
    fn frame(&mut self, i: u32) -> Result<(), PoseError> {
        Ok(Crowd::frame(self, i)?)
    }
    fn foresee(&mut self, sight: &[Sight]) {
        Crowd::foresee(self, sight);
    }
    fn posed(&self) -> usize {
        Crowd::posed(self)
    }
    fn pose_on_cpu_for_framing(&mut self, on: bool) -> Result<(), PoseError> {
        let program = match on {
            true => {
                self.framing_aside = self.gpu_program.take();
                None
            }
            false => self.framing_aside.take().or(self.gpu_program.take()),
        };
        self.set_program(program);
        Ok(())
    }
}

impl Crowd {
    /// `count` characters of `rig` driven by `controller` on a grid spaced by
    /// the footprint of one character's first frame (1.25 times its larger
    /// horizontal extent), updated on `threads` threads (0: every core),
    /// frames `1 / fps` apart, posed on the GPU when `pose_on_gpu` (see
    /// [`Crowd::set_pose_on_gpu`]); with the world-space bounds of the whole
    /// grid at frame 0. `None` when the rig draws nothing (no bounds to
    /// space by).
    pub fn on_grid(
        rig: Arc<Rig>,
        controller: Arc<Controller>,
        count: usize,
        fps: f64,
        threads: usize,
        pose_on_gpu: bool,
    ) -> Result<Option<(Crowd, Bounds)>, CrowdError> {
        let mut one = Crowd::new(rig.clone(), controller.clone(), 1, 0.0, fps, 1)?;
        one.frame(0)?;
        let mut first = None;
        grow_bounds(&rig, &one.input(0).pose, &one.world(0), &mut Vec::new(), &mut first)?;
        let Some((lo, hi)) = first else { return Ok(None) };
        let spacing = ((hi[0] - lo[0]).max(hi[2] - lo[2]) * 1.25).max(1e-3);
        let mut crowd = Crowd::new(rig, controller, count, spacing, fps, threads)?;
        crowd.set_pose_on_gpu(pose_on_gpu)?;
        // Every character's first frame lies within its own footprint moved to
        // its place (the grid spacing leaves room between them).
        let (mut glo, mut ghi) = (lo, hi);
        for world in crowd.worlds() {
            let t = world.column(3);
            for k in 0..3 {
                glo[k] = glo[k].min(lo[k] + t[k]);
                ghi[k] = ghi[k].max(hi[k] + t[k]);
            }
        }
        Ok(Some((crowd, (glo, ghi))))
    }
}

/// Position of character `i` of `count` on a square grid `spacing` apart in
/// the XZ plane, centred on the origin (row by row along +X, rows along +Z).
pub fn grid_position(i: usize, count: usize, spacing: f32) -> Vector3<f32> {
    let side = (count as f64).sqrt().ceil().max(1.0) as usize;
    let rows = count.div_ceil(side);
    let (row, col) = (i / side, i % side);
    let centre = |n: usize, k: usize| (k as f32 - (n as f32 - 1.0) / 2.0) * spacing;
    Vector3::new(centre(side, col), 0.0, centre(rows, row))
}

/// A pseudo-random phase in [0, 1) for character `i` (splitmix64): the same
/// crowd every run, without visible patterns along the grid.
fn phase(i: u64) -> f64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::framing::skinned_bounds;
    use crate::test_model::test_model;

    /// A crowd posed on the GPU frames the camera as the same crowd posed
    /// on the CPU (its CPU palettes are never computed: framing poses it
    /// there meanwhile), and stays posed on the GPU afterwards.
    #[test]
    fn a_crowd_posed_on_the_gpu_frames_as_on_the_cpu() {
        let model = test_model();
        let controller = Arc::new(Controller::single_clip(&model, Some(0), true).unwrap());
        let crowd = |gpu: bool| {
            let mut crowd = Crowd::new(model.rig.clone(), controller.clone(), 4, 3.0, 10.0, 1).unwrap();
            crowd.set_pose_on_gpu(gpu).unwrap();
            crowd
        };
        let (mut cpu, mut gpu) = (crowd(false), crowd(true));
        let expected = skinned_bounds(&model, &mut cpu, 2, 6).unwrap().bounds.expect("bounds");
        let framed = skinned_bounds(&model, &mut gpu, 2, 6).unwrap().bounds.expect("bounds");
        assert_eq!(framed, expected);
        // The slide moves the hip 0.2 m and more by frame 2: the bind pose
        // (what the unposed palettes give) would not reach as far.
        let mut unposed = crowd(true);
        let mut bind = None;
        unposed.frame(7).unwrap();
        for c in 0..unposed.count() {
            let world = unposed.world(c);
            grow_bounds(&model, &unposed.input(c).pose, &world, &mut Vec::new(), &mut bind).unwrap();
        }
        assert!(bind.unwrap().1[0] < expected.1[0] - 0.1, "{bind:?} {expected:?}");
        assert!(gpu.gpu_pose().is_some(), "posed on the GPU again");
        assert!(gpu.characters().iter().all(|c| c.playback().is_some()));
        gpu.restart().unwrap();
        gpu.frame(3).unwrap();
        assert!(gpu.characters().iter().all(|c| c.playback().is_some()));
    }

    /// A crowd on two threads is framed on them (the thread that built it
    /// works in its pool), in chunks, to the same box as on one thread.
    #[test]
    fn a_crowd_on_two_threads_frames_as_on_one() {
        let model = test_model();
        let controller = Arc::new(Controller::single_clip(&model, Some(0), true).unwrap());
        let mut one = Crowd::new(model.rig.clone(), controller.clone(), 50, 3.0, 10.0, 1).unwrap();
        let expected = skinned_bounds(&model, &mut one, 1, 5).unwrap().bounds.expect("bounds");
        let mut two = Crowd::new(model.rig.clone(), controller, 50, 3.0, 10.0, 2).unwrap();
        assert_eq!(
            (rayon::current_num_threads(), rayon::current_thread_index()),
            (2, Some(0)),
            "in the pool"
        );
        assert_eq!(skinned_bounds(&model, &mut two, 1, 5).unwrap().bounds.expect("bounds"), expected);
    }

    /// Foreseen unseen, a crowd's characters are not posed (their versions
    /// stay); seen again, they show the pose of a crowd never foreseen at
    /// once, paused or not.
    #[test]
    fn unseen_characters_are_posed_when_seen_again() {
        let model = test_model();
        let controller = Arc::new(Controller::single_clip(&model, Some(0), true).unwrap());
        let crowd = || Crowd::new(model.rig.clone(), controller.clone(), 3, 2.0, 30.0, 1).unwrap();
        let (mut seen, mut foreseen) = (crowd(), crowd());
        let near = Sight::Drawn { pixels: f32::INFINITY };
        let versions = |c: &Crowd| c.characters().iter().map(Character::version).collect::<Vec<_>>();
        let palettes = |c: &Crowd, i: usize| c.input(i).pose.palettes.to_vec();
        seen.frame(0).unwrap();
        foreseen.frame(0).unwrap();
        foreseen.foresee(&[near, Sight::Unseen, Sight::Unseen]);
        for i in 1..6 {
            let before = versions(&foreseen);
            seen.frame(i).unwrap();
            foreseen.frame(i).unwrap();
            assert_eq!((seen.posed(), foreseen.posed()), (3, 1), "frame {i}: characters posed");
            assert_eq!(versions(&foreseen)[1..], before[1..], "frame {i}: unseen characters posed");
            assert_eq!(palettes(&foreseen, 0), palettes(&seen, 0));
            assert_ne!(palettes(&foreseen, 1), palettes(&seen, 1), "frame {i}: the clip moves");
        }
        // Seen again: posed by the next frame.
        foreseen.foresee(&[near, near]);
        seen.frame(6).unwrap();
        foreseen.frame(6).unwrap();
        assert_eq!(palettes(&foreseen, 1), palettes(&seen, 1));
        // Paused, the third is seen again: posed at the paused time, once.
        for c in [&mut seen, &mut foreseen] {
            c.set_paused(true);
            c.frame(7).unwrap();
        }
        assert_ne!(palettes(&foreseen, 2), palettes(&seen, 2));
        foreseen.foresee(&[near, near, near]);
        foreseen.frame(8).unwrap();
        assert_eq!(palettes(&foreseen, 2), palettes(&seen, 2));
        let after = versions(&foreseen);
        foreseen.frame(9).unwrap();
        assert_eq!(versions(&foreseen), after, "paused: nothing posed again");
        assert_eq!(foreseen.posed(), 0);
    }

    /// Each character takes its own foreseen rate, on one thread or
    /// several (the update sets the rates task by task).
    #[test]
    fn every_character_takes_its_foreseen_rate_on_any_thread_count() {
        let model = test_model();
        let controller = Arc::new(Controller::single_clip(&model, Some(0), true).unwrap());
        let n = 500;
        let sight: Vec<Sight> = (0..n)
            .map(|i| match i % 3 {
                0 => Sight::Drawn { pixels: f32::INFINITY },
                1 => Sight::Unseen,
                _ => Sight::Drawn { pixels: 40.0 },
            })
            .collect();
        for threads in [1, 2, 3] {
            let mut crowd = Crowd::new(model.rig.clone(), controller.clone(), n, 2.0, 30.0, threads).unwrap();
            crowd.frame(0).unwrap();
            crowd.foresee(&sight[..n - 7]);
            crowd.frame(1).unwrap();
            for (i, c) in crowd.characters().iter().enumerate() {
                let want = sight
                    .get(i)
                    .filter(|_| i < n - 7)
                    .map_or(EvaluationRate::EveryFrame, |&s| EvaluationRate::for_sight(s));
                assert_eq!(c.evaluation_rate(), want, "{threads} threads, character {i}");
            }
        }
    }

    #[test]
    fn grid_is_centred_and_spaced() {
        // 1 character: at the origin.
        assert_eq!(grid_position(0, 1, 2.0), Vector3::zeros());
        // 4 characters: a 2x2 grid at +-1 (spacing 2).
        let p: Vec<_> = (0..4).map(|i| grid_position(i, 4, 2.0)).collect();
        assert_eq!(p[0], Vector3::new(-1.0, 0.0, -1.0));
        assert_eq!(p[3], Vector3::new(1.0, 0.0, 1.0));
        // 5 characters: 3 per row, 2 rows; all distinct.
        let q: Vec<_> = (0..5).map(|i| grid_position(i, 5, 1.0)).collect();
        for a in 0..5 {
            for b in a + 1..5 {
                assert!((q[a] - q[b]).norm() >= 1.0 - 1e-6, "{a} {b}");
            }
        }
        assert_eq!(q[0], Vector3::new(-1.0, 0.0, -0.5));
    }

    #[test]
    fn phases_are_spread() {
        let phases: Vec<f64> = (0..1000).map(phase).collect();
        assert!(phases.iter().all(|p| (0.0..1.0).contains(p)));
        // Every tenth of [0, 1) gets a fair share.
        for decile in 0..10 {
            let n = phases.iter().filter(|p| (**p * 10.0) as usize == decile).count();
            assert!((60..=140).contains(&n), "decile {decile}: {n}");
        }
    }

    /// A script changes every character of a crowd at its times, as a
    /// timeline changes its one character (the same states frame by
    /// frame, whatever each character's phase), and again after a restart.
    #[test]
    fn a_script_reaches_every_character_at_its_time() {
        use crate::character::Timeline;
        use crate::character::controller::DEFAULT_CONTROLLER;
        let model = crate::asset::load_default_character().unwrap();
        let controller = Arc::new(Controller::from_text(DEFAULT_CONTROLLER, &model).unwrap());
        let sets = ["0.5:speed=3", "1.2:jump"].map(String::from);
        let script = Script::parse(&sets, &controller).unwrap();
        let speed = controller.parameter("speed").unwrap();
        let mut crowd = Crowd::new(model.rig.clone(), controller.clone(), 6, 2.0, 10.0, 1).unwrap();
        crowd.set_script(script.clone());
        let mut timeline = Timeline::simulating(model.rig.clone(), controller, script, 10.0).unwrap();
        let mut states = Vec::new();
        for frame in [4, 5, 9, 12, 14, 2, 13] {
            crowd.frame(frame).unwrap();
            let alone = timeline.frame(frame).unwrap();
            let expected = if frame >= 5 { 3.0 } else { 0.0 };
            for c in crowd.characters() {
                assert_eq!(c.parameters().get(speed), Some(expected), "frame {frame}");
                assert_eq!(c.state_name(), alone.state_name(), "frame {frame}");
            }
            states.push(alone.state_name().unwrap_or_default().to_string());
        }
        // The jump at 1.2 s is entered over a 0.1 s crossfade.
        assert_eq!(states, ["Idle", "Idle", "Locomotion", "Locomotion", "Jump", "Idle", "Locomotion"]);
    }
}
