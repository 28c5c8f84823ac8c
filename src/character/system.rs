//! Many characters updated together: in parallel (rayon) when the system has
//! more than one thread, with the same results bit for bit whatever the
//! thread count (each character is computed by one thread, alone). It
//! schedules: it never changes what one character computes, and its update
//! never allocates once the event buffers have grown (see `update`).

use super::character::Character;
use super::controller::Controller;
use super::evaluation::Keeps;
use super::events::FiredEvent;
use super::lod::EvaluationRate;
use super::prefetch_plan::PrefetchPlan;
use super::scratch::with_scratch;
use crate::anim::hierarchy::batch::{BatchedPose, LANES, model_and_palettes};
use crate::anim::{JobError, Rig, Transform};
use crate::pool_trace::CallersTrace;
use rayon::prelude::*;
use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};

thread_local! {
    /// The pool this thread is worker 0 of (see `pool_for`), shared by every
    /// system this thread builds with the same thread count.
    static JOINED_POOL: RefCell<Option<Arc<rayon::ThreadPool>>> = const { RefCell::new(None) };
}

/// A pool of `threads` threads that the calling thread belongs to, when it
/// can: rayon then runs `install` from this thread inline, and the update's
/// tasks go to this thread's own work queue, from which the others steal.
/// From a thread outside the pool, rayon would put each update into its
/// global job queue, which allocates a block every 63 jobs; this keeps
/// updates free of heap allocations. A thread joins one pool for good
/// (rayon has no way to leave), so a second thread count on the same
/// thread, or a thread already in another pool, gets a plain pool.
fn pool_for(threads: usize) -> Result<Arc<rayon::ThreadPool>, ThreadPoolError> {
    let builder =
        || rayon::ThreadPoolBuilder::new().num_threads(threads).thread_name(|i| format!("vkskin-anim-{i}"));
    let failed = |source| ThreadPoolError { threads, source };
    JOINED_POOL.with(|joined| {
        let mut joined = joined.borrow_mut();
        if let Some(pool) = joined.as_ref() {
            if pool.current_num_threads() == threads {
                return Ok(pool.clone());
            }
            return builder().build().map(Arc::new).map_err(failed);
        }
        match builder().use_current_thread().build() {
            Ok(pool) => {
                // Work stealing registers a thread with crossbeam's epoch
                // collector on its first steal (one allocation per thread,
                // for good). Steal now, not in some later update.
                let _ = rayon::yield_now();
                let pool = Arc::new(pool);
                *joined = Some(pool.clone());
                Ok(pool)
            }
            // Already a worker of some other pool: a plain one.
            Err(_) => builder().build().map(Arc::new).map_err(failed),
        }
    })
}

/// The fewest characters handed to one rayon task at a time (small enough
/// to balance two cores on a hundred characters, large enough to amortise
/// the task), and the most: a large crowd's tasks grow (while each thread
/// still gets eight tasks or more) so that the characters that evaluate
/// in a task fill pose batches of `LANES` even at reduced evaluation rates.
const CHARACTERS_PER_TASK: usize = 8;
const MOST_CHARACTERS_PER_TASK: usize = 64;

/// Characters per task for `characters` on `threads` threads (a multiple
/// of `CHARACTERS_PER_TASK`).
fn task_size(characters: usize, threads: usize) -> usize {
    let size = (characters / (threads * 8)).clamp(CHARACTERS_PER_TASK, MOST_CHARACTERS_PER_TASK);
    size / CHARACTERS_PER_TASK * CHARACTERS_PER_TASK
}

/// What the characters of one task leave for the serial pass after the
/// update: the first failure (its index within the task), whether any
/// fired events and how many were posed. The pass reads one summary per task instead of every
/// character, whose state is out of cache by then: reading every one took
/// 1-3 % of a 10,000-character update, serially.
#[derive(Debug, Clone, Default)]
struct TaskSummary {
    failure: Option<(usize, JobError)>,
    fired: bool,
    posed: u32,
}

/// A character's index in its system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CharacterId(pub usize);

/// Why an update failed: the character and the job's reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("character {}: {error}", character.0)]
pub struct UpdateError {
    /// The character that failed.
    pub character: CharacterId,
    /// What its evaluation reported.
    #[source]
    pub error: JobError,
}

/// The operating system refused the animation threads.
#[derive(Debug, thiserror::Error)]
#[error("cannot start {threads} animation threads: {source}")]
pub struct ThreadPoolError {
    /// Threads asked for.
    pub threads: usize,
    /// rayon's reason.
    #[source]
    pub source: rayon::ThreadPoolBuildError,
}

/// Owns characters and updates them all.
pub struct AnimationSystem {
    characters: Vec<Character>,
    /// Where each character's state lies, to load it a character ahead.
    plans: Vec<PrefetchPlan>,
    /// One per `CHARACTERS_PER_TASK` characters, written by whichever
    /// thread updates them.
    summaries: Vec<TaskSummary>,
    events: Vec<FiredEvent>,
    pool: Option<Arc<rayon::ThreadPool>>,
    threads: usize,
    last_update: Duration,
    /// Characters the last update posed.
    posed: usize,
    /// What characters added keep after an update.
    keeps: Keeps,
}

impl std::fmt::Debug for AnimationSystem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnimationSystem")
            .field("characters", &self.characters.len())
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

impl Default for AnimationSystem {
    fn default() -> Self {
        Self::single_threaded()
    }
}

impl AnimationSystem {
    /// A system that updates characters on the calling thread only.
    pub fn single_threaded() -> Self {
        AnimationSystem {
            characters: Vec::new(),
            plans: Vec::new(),
            summaries: Vec::new(),
            events: Vec::new(),
            pool: None,
            threads: 1,
            last_update: Duration::ZERO,
            posed: 0,
            keeps: Keeps::ALL,
        }
    }

    /// A system updating characters on `threads` threads (0: one per core),
    /// the calling thread among them. Update it from the thread that made
    /// it: that thread is part of the pool, and its updates allocate nothing.
    pub fn with_threads(threads: usize) -> Result<Self, ThreadPoolError> {
        let threads =
            if threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { threads };
        if threads == 1 {
            return Ok(Self::single_threaded());
        }
        Ok(AnimationSystem { pool: Some(pool_for(threads)?), threads, ..Self::single_threaded() })
    }

    /// Threads used by `update`.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Whether characters added from now on keep their local pose after
    /// an update (they do unless told otherwise). A crowd that is only
    /// drawn needs none: each evaluated pose then lives in the updating
    /// thread's buffers until its world matrices and palettes are
    /// computed, and `Character::local_pose` (and so `Character::edit`,
    /// on which IK builds) is empty after an update here. A built-in
    /// character keeps 960 bytes and 15 cache lines less per update.
    pub fn set_keeps_local_poses(&mut self, keep: bool) {
        self.keeps.local_pose = keep;
    }

    /// Whether characters added from now on keep every joint's world
    /// matrix after an update (they do unless told otherwise). A crowd
    /// that is only drawn needs only those that rigidly drawn meshes and
    /// root motion read ([`PoseOutput::keeping_world`](super::PoseOutput::keeping_world)):
    /// the rest live in the pose batch's buffers until the palettes are
    /// written, and `Character::output().world()` holds those of
    /// `world_joints()` alone. A built-in character keeps 1.5 KB and 24
    /// cache lines less per update (it keeps none), RobotExpressive 3.9 KB
    /// and 62 (it keeps the 12 that place its rigid meshes).
    pub fn set_keeps_world_matrices(&mut self, keep: bool) {
        self.keeps.world_matrices = keep;
    }

    /// Adds a character of `rig` driven by `controller` (both shared).
    pub fn add(&mut self, rig: Arc<Rig>, controller: Arc<Controller>) -> Result<CharacterId, JobError> {
        let mut character = Character::keeping(rig, controller, self.keeps)?;
        let id = CharacterId(self.characters.len());
        character.set_index(id.0 as u32);
        self.plans.push(character.prefetch_plan());
        self.characters.push(character);
        self.summaries.resize(self.characters.len().div_ceil(CHARACTERS_PER_TASK), TaskSummary::default());
        // Room for every character's usual events, so updates do not grow it.
        let room = self.characters.len() * Character::EVENT_CAPACITY;
        self.events.reserve(room.saturating_sub(self.events.len()));
        Ok(id)
    }

    /// Room for `additional` more characters, exactly: a crowd added one by
    /// one would otherwise keep up to twice the room it needs.
    pub fn reserve(&mut self, additional: usize) {
        self.characters.reserve_exact(additional);
        self.plans.reserve_exact(additional);
        let tasks = (self.characters.len() + additional).div_ceil(CHARACTERS_PER_TASK);
        self.summaries.reserve_exact(tasks.saturating_sub(self.summaries.len()));
        let room = (self.characters.len() + additional) * Character::EVENT_CAPACITY;
        self.events.reserve_exact(room.saturating_sub(self.events.len()));
    }

    /// Removes every character.
    pub fn clear(&mut self) {
        self.characters.clear();
        self.plans.clear();
        self.summaries.clear();
        self.events.clear();
    }

    /// Number of characters.
    pub fn len(&self) -> usize {
        self.characters.len()
    }

    /// True without characters.
    pub fn is_empty(&self) -> bool {
        self.characters.is_empty()
    }

    /// Every character, by id.
    pub fn characters(&self) -> &[Character] {
        &self.characters
    }

    /// One character.
    pub fn character(&self, id: CharacterId) -> &Character {
        &self.characters[id.0]
    }

    /// One character, to set its parameters or seek it.
    pub fn character_mut(&mut self, id: CharacterId) -> &mut Character {
        &mut self.characters[id.0]
    }

    /// Advances every character by `dt` seconds and evaluates its pose.
    /// Returns the events crossed, by character, then in playback order.
    /// Never allocates once the event buffers have grown to their need.
    pub fn update(&mut self, dt: f32) -> Result<&[FiredEvent], UpdateError> {
        self.update_at_rates(dt, &[])
    }

    /// `update`, each character `i` first set to evaluate at `rates[i]`
    /// (characters past the slice keep theirs; see
    /// `Character::set_evaluation_rate`): set inside the parallel update,
    /// where each character is touched anyway, not in a serial pass over
    /// a crowd whose state is out of cache.
    pub fn update_at_rates(
        &mut self,
        dt: f32,
        rates: &[EvaluationRate],
    ) -> Result<&[FiredEvent], UpdateError> {
        // A frame trace's CPU span (`render::trace`; nothing without one).
        let _span = tracing::trace_span!("pose").entered();
        let start = Instant::now();
        // One thread's summaries are per `CHARACTERS_PER_TASK` characters
        // too: the same serial pass reads them.
        let task = match &self.pool {
            Some(_) => task_size(self.characters.len(), self.threads),
            None => CHARACTERS_PER_TASK,
        };
        let tasks = self.characters.len().div_ceil(task);
        match &self.pool {
            Some(pool) => {
                // In a trace, a span on each worker around the tasks it
                // runs in one go (a span per task would be thousands).
                let trace = CallersTrace::here();
                pool.install(|| {
                    self.characters
                        .par_chunks_mut(task)
                        .zip(self.plans.par_chunks_mut(task))
                        .zip(self.summaries[..tasks].par_chunks_mut(1))
                        .enumerate()
                        .for_each_init(
                            || trace.enter(|| tracing::trace_span!("pose tasks")),
                            |_, (t, ((characters, plans), summary))| {
                                let rates = rates.get(t * task..).unwrap_or(&[]);
                                update_in_order(characters, plans, summary, rates, task, dt)
                            },
                        )
                })
            }
            None => {
                update_in_order(&mut self.characters, &mut self.plans, &mut self.summaries, rates, task, dt)
            }
        }
        self.events.clear();
        self.posed = 0;
        for (t, summary) in self.summaries[..tasks].iter().enumerate() {
            self.posed += summary.posed as usize;
            let first = t * task;
            // Up to the failure, if any: the events before it stay readable.
            let end = match &summary.failure {
                Some((i, _)) => first + i,
                None => (first + task).min(self.characters.len()),
            };
            if summary.fired {
                for c in &self.characters[first..end] {
                    self.events.extend_from_slice(c.events());
                }
            }
            if let Some((_, error)) = &summary.failure {
                return Err(UpdateError { character: CharacterId(end), error: error.clone() });
            }
        }
        self.last_update = start.elapsed();
        Ok(&self.events)
    }

    /// Asks for huge pages under the characters' state (see
    /// [`prefer_huge_pages`](crate::heap::prefer_huge_pages)): the
    /// characters themselves, and the heap blocks between the first's and
    /// the last's, where characters added one after another keep theirs.
    /// A hint for large crowds; results never depend on it.
    pub fn prefer_huge_pages(&self) {
        let (Some(first), Some(last)) = (self.characters.first(), self.characters.last()) else { return };
        let characters = self.characters.as_ptr_range();
        crate::heap::prefer_huge_pages(characters.start as usize, characters.end as usize);
        // The palettes: every character of a skinned rig has them.
        let block = |c: &Character| c.output().view().palettes.as_ptr() as usize;
        let (a, b) = (block(first), block(last));
        crate::heap::prefer_huge_pages(a.min(b), a.max(b));
    }

    /// The events of the last update.
    pub fn events(&self) -> &[FiredEvent] {
        &self.events
    }

    /// Wall-clock time the last update took.
    pub fn last_update(&self) -> Duration {
        self.last_update
    }

    /// How many characters the last update posed (see `Character::posed`).
    pub fn posed(&self) -> usize {
        self.posed
    }
}

/// Updates `characters` (from the start of a task on) in order into the
/// summaries of their tasks (`task` characters each), the state of the
/// next character loading while the current one computes (a crowd is
/// bound by memory latency: see [`prefetch`](crate::anim::prefetch)) as
/// its plan (one per character) names it. The characters whose pose
/// evaluates wait, `LANES` of one rig at a time, for their world matrices
/// and palettes: one pose batch for all of them (see
/// [`batch`](crate::anim::hierarchy::batch)), bit for bit what each would
/// compute alone, which is what the few left at the end do.
fn update_in_order(
    characters: &mut [Character],
    plans: &mut [PrefetchPlan],
    summaries: &mut [TaskSummary],
    rates: &[EvaluationRate],
    task: usize,
    dt: f32,
) {
    for summary in summaries.iter_mut() {
        *summary = TaskSummary::default();
    }
    LOCAL_POSES.with(|held| {
        // Not reentrant by design; a nested update gets fresh buffers.
        let (mut held, mut fresh) = (held.try_borrow_mut().ok(), None);
        let buffers = match held.as_deref_mut() {
            Some(buffers) => buffers,
            None => fresh.insert(Default::default()),
        };
        let report = |summaries: &mut [TaskSummary], i: usize, result: Result<(), JobError>| {
            let summary = &mut summaries[i / task];
            let first = summary.failure.as_ref().is_none_or(|(f, _)| i % task < *f);
            if let (Err(error), true) = (result, first) {
                summary.failure = Some((i % task, error));
            }
        };
        let mut waiting = Waiting::default();
        for i in 0..characters.len() {
            // The character after next: its own fields (the addresses of its
            // heap blocks), so that naming those blocks one character ahead
            // does not wait for them.
            if let Some(after_next) = characters.get(i + 2) {
                crate::anim::prefetch::value(after_next);
            }
            if let (Some(next), Some(plan)) = (characters.get(i + 1), plans.get_mut(i + 1)) {
                if !plan.fits(next) {
                    *plan = next.prefetch_plan();
                }
                plan.prefetch(next.may_evaluate());
            }
            if let Some(&rate) = rates.get(i) {
                characters[i].set_evaluation_rate(rate);
            }
            // The next lane's buffer: kept if the character waits.
            let buffer = &mut buffers[waiting.len];
            let result = characters[i].update_for_batch(dt, buffer);
            summaries[i / task].fired |= !characters[i].events().is_empty();
            summaries[i / task].posed += u32::from(characters[i].posed());
            match result {
                Ok(false) => {}
                Ok(true) if waiting.takes(characters, i) => {
                    if waiting.len == LANES {
                        waiting.finish(characters, buffers, |c, result| report(summaries, c, result));
                    }
                }
                // Another rig (or other kept matrices) than the waiting ones': alone.
                Ok(true) => report(summaries, i, characters[i].finish_batch(None, buffer)),
                Err(error) => report(summaries, i, Err(error)),
            }
        }
        // Too few for a batch to pay: alone.
        for (&c, buffer) in waiting.at[..waiting.len].iter().zip(buffers.iter()) {
            report(summaries, c, characters[c].finish_batch(None, buffer));
        }
    });
}

thread_local! {
    /// The local poses of the characters waiting for a pose batch that do
    /// not keep their own, one per lane (see `Waiting`).
    static LOCAL_POSES: RefCell<[Vec<Transform>; LANES]> = RefCell::new(Default::default());
}

/// The characters whose world matrices and palettes wait for a pose batch,
/// in order, all of one rig and keeping the same world matrices.
#[derive(Default)]
struct Waiting {
    at: [usize; LANES],
    len: usize,
}

impl Waiting {
    /// Adds character `i` when it shares the waiting ones' rig and kept
    /// world matrices (whether it did).
    fn takes(&mut self, characters: &[Character], i: usize) -> bool {
        if self.len > 0 {
            let (first, c) = (&characters[self.at[0]], &characters[i]);
            if !Arc::ptr_eq(first.rig(), c.rig())
                || first.output().world_joints() != c.output().world_joints()
            {
                return false;
            }
        }
        self.at[self.len] = i;
        self.len += 1;
        true
    }

    /// Runs the batch and ends each waiting character's update, handing
    /// `report` its index and result. None wait afterwards.
    fn finish(
        &mut self,
        characters: &mut [Character],
        buffers: &[Vec<Transform>; LANES],
        mut report: impl FnMut(usize, Result<(), JobError>),
    ) {
        let waiting = &self.at[..self.len];
        let (first, last) = (waiting[0], waiting[self.len - 1]);
        let mut rig = None;
        let mut poses: [BatchedPose; LANES] = std::array::from_fn(|_| BatchedPose::default());
        let span = characters[first..=last].iter_mut().enumerate();
        let waiters = span.filter(|(o, _)| waiting.contains(&(first + o)));
        for (((_, character), pose), buffer) in waiters.zip(&mut poses).zip(buffers) {
            let (its_rig, batched) = character.batched(buffer);
            rig = Some(its_rig);
            *pose = batched;
        }
        let changed = match rig {
            Some(rig) => with_scratch(|scratch| {
                model_and_palettes(rig, &mut poses[..waiting.len()], &mut scratch.batch)
            }),
            None => Ok([false; LANES]),
        };
        for (lane, &c) in waiting.iter().enumerate() {
            // A batch that failed leaves each character's output to itself.
            let batched = changed.as_ref().ok().map(|changed| changed[lane]);
            report(c, characters[c].finish_batch(batched, &buffers[lane]));
        }
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::character::controller::DEFAULT_CONTROLLER;

    /// Every bit of what the renderer and the entity read.
    fn outcome(c: &Character) -> (Vec<u32>, Vec<u32>, Vec<u32>, u64, [u32; 4], usize) {
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        let pose = c.pose();
        let world: Vec<f32> = pose.world.iter().flat_map(|m| m.iter().copied()).collect();
        let palettes: Vec<f32> = pose.palettes.iter().flat_map(|m| m.skin).collect();
        let motion = c.root_motion();
        let [x, y, z] = [0, 1, 2].map(|i| motion.translation[i].to_bits());
        (
            bits(&world),
            bits(&palettes),
            bits(pose.morph_weights),
            c.version(),
            [x, y, z, motion.yaw.to_bits()],
            c.events().len(),
        )
    }

    #[test]
    fn batched_characters_compute_what_each_computes_alone() {
        use crate::character::{DebugPose, EvaluationRate, ParameterValue};
        // Two rigs with the same content: a batch takes one rig's characters.
        let models = [
            crate::asset::load_default_character().unwrap(),
            crate::asset::load_default_character().unwrap(),
        ];
        // The second takes root motion from a joint with a parent, whose
        // world matrix a character keeping few keeps (root motion turns by it).
        let texts = [
            DEFAULT_CONTROLLER.to_string(),
            DEFAULT_CONTROLLER.replace(r#"root_motion: "Root""#, r#"root_motion: "Hips""#),
        ];
        assert_ne!(texts[0], texts[1]);
        let controllers = [0, 1].map(|r| Arc::new(Controller::from_text(&texts[r], &models[r]).unwrap()));
        assert_eq!(&controllers[1].world_joints[..], [0]);
        let cases = [
            (1, true, true),
            (2, true, true),
            (1, false, false),
            (2, false, false),
            (1, false, true),
            (2, true, false),
        ];
        for (threads, keep, keep_world) in cases {
            let mut system = AnimationSystem::with_threads(threads).unwrap();
            system.set_keeps_local_poses(keep);
            system.set_keeps_world_matrices(keep_world);
            // The same characters keeping everything, updated alone.
            let mut full = Vec::new();
            let setup = |c: &mut Character, i: usize| {
                c.set_named("speed", ParameterValue::Float(i as f32 * 0.25)).unwrap();
                c.set_named("talk", ParameterValue::Float((i % 3) as f32 * 0.5)).unwrap();
                if i % 7 == 2 {
                    c.set_debug_pose(DebugPose::BindPose);
                }
                if i % 6 == 4 {
                    c.set_evaluation_rate(EvaluationRate::Every2nd);
                }
            };
            for i in 0..21 {
                let r = usize::from(i % 5 == 3);
                let id = system.add(models[r].rig.clone(), controllers[r].clone()).unwrap();
                setup(system.character_mut(id), i);
                full.push(Character::new(models[r].rig.clone(), controllers[r].clone()).unwrap());
                setup(&mut full[i], i);
            }
            // Not kept: never allocated.
            assert_eq!(system.character(CharacterId(0)).local_pose().locals.is_empty(), !keep);
            let world_joints = system.character(CharacterId(0)).output().world_joints();
            assert_eq!(world_joints.is_none(), keep_world);
            let mut alone: Vec<Character> = system.characters().to_vec();
            for frame in 0..40 {
                if frame == 12 {
                    for c in &mut full {
                        c.set_named("jump", ParameterValue::Trigger).unwrap();
                    }
                    for (i, c) in alone.iter_mut().enumerate() {
                        c.set_named("jump", ParameterValue::Trigger).unwrap();
                        system
                            .character_mut(CharacterId(i))
                            .set_named("jump", ParameterValue::Trigger)
                            .unwrap();
                    }
                }
                system.update(1.0 / 60.0).unwrap();
                for (i, (c, f)) in alone.iter_mut().zip(&mut full).enumerate() {
                    c.update(1.0 / 60.0).unwrap();
                    f.update(1.0 / 60.0).unwrap();
                    let batched = system.character(CharacterId(i));
                    let what = format!(
                        "{threads} threads, keeping local poses {keep} and world matrices {keep_world}, \
                         frame {frame}: character {i}"
                    );
                    assert!(outcome(batched) == outcome(c), "{what}");
                    // Keeping fewer world matrices: the same palettes, the
                    // same matrices where kept, the same root motion.
                    let (b, f) = (outcome(batched), outcome(f));
                    assert!(b.0[..] == f.0[..b.0.len()] && b.1 == f.1 && b.2 == f.2, "{what}: as if kept");
                    assert!(b.4 == f.4 && b.5 == f.5, "{what}: root motion and events as if kept");
                    // Updated alone, a character keeps its local pose.
                    assert_eq!(c.local_pose().locals.len(), c.rig().skeleton.len(), "{what}");
                    if !keep && i % 7 != 2 && i % 6 != 4 {
                        assert!(batched.local_pose().locals.is_empty(), "{what}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_replaced_character_gets_a_new_prefetch_plan() {
        let model = crate::asset::load_default_character().unwrap();
        let controller = Arc::new(Controller::from_text(DEFAULT_CONTROLLER, &model).unwrap());
        let mut system = AnimationSystem::single_threaded();
        for _ in 0..3 {
            system.add(model.rig.clone(), controller.clone()).unwrap();
        }
        for (plan, character) in system.plans.iter().zip(&system.characters) {
            assert!(plan.fits(character));
            // The lines every update reads, and at least the world
            // matrices and palettes for an evaluation.
            let [every_update, evaluation] = plan.line_counts();
            assert!(every_update > 0);
            let output = character.output();
            let view = output.view();
            let matrices = std::mem::size_of_val(view.world) + std::mem::size_of_val(view.palettes);
            assert!(evaluation * 64 >= matrices, "{evaluation} lines for {matrices} bytes of matrices");
        }
        // A clone has blocks of its own; moved to the GPU, it reads others.
        let clone = system.character(CharacterId(0)).clone();
        *system.character_mut(CharacterId(1)) = clone;
        let program = Arc::new(
            crate::character::gpu_pose::pose_program(&model.rig, &controller, model.rig.rotation_blend())
                .unwrap(),
        );
        system.character_mut(CharacterId(2)).set_pose_program(Some(program));
        assert!(!system.plans[1].fits(&system.characters[1]));
        assert!(!system.plans[2].fits(&system.characters[2]));
        // The update makes them again as it reaches them.
        system.update(0.01).unwrap();
        assert!(system.plans.iter().zip(&system.characters).all(|(p, c)| p.fits(c)));
    }
}
