//! Many characters updated together: in parallel (rayon) when the system has
//! more than one thread, with the same results bit for bit whatever the
//! thread count (each character is computed by one thread, alone). It
//! schedules: it never changes what one character computes, and its update
//! never allocates once the event buffers have grown (see `update`).

use super::character::Character;
use super::controller::Controller;
use super::events::FiredEvent;
use super::prefetch_plan::PrefetchPlan;
use crate::anim::JobError;
use crate::anim::Rig;
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

/// Characters handed to one rayon task at a time (small enough to balance
/// two cores on a hundred characters, large enough to amortise the task).
const CHARACTERS_PER_TASK: usize = 8;

/// What the characters of one task leave for the serial pass after the
/// update: the first failure (its index within the task) and whether any
/// fired events. The pass reads one summary per task instead of every
/// character, whose state is out of cache by then: reading every one took
/// 1-3 % of a 10,000-character update, serially.
#[derive(Debug, Clone, Default)]
struct TaskSummary {
    failure: Option<(usize, JobError)>,
    fired: bool,
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

    /// Adds a character of `rig` driven by `controller` (both shared).
    pub fn add(&mut self, rig: Arc<Rig>, controller: Arc<Controller>) -> Result<CharacterId, JobError> {
        let mut character = Character::new(rig, controller)?;
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
        // A frame trace's CPU span (`render::trace`; nothing without one).
        let _span = tracing::trace_span!("pose").entered();
        let start = Instant::now();
        match &self.pool {
            Some(pool) => pool.install(|| {
                self.characters
                    .par_chunks_mut(CHARACTERS_PER_TASK)
                    .zip(self.plans.par_chunks_mut(CHARACTERS_PER_TASK))
                    .zip(self.summaries.par_chunks_mut(1))
                    .for_each(|((characters, plans), summary)| {
                        update_in_order(characters, plans, summary, dt)
                    })
            }),
            None => update_in_order(&mut self.characters, &mut self.plans, &mut self.summaries, dt),
        }
        self.events.clear();
        for (task, summary) in self.summaries.iter().enumerate() {
            let first = task * CHARACTERS_PER_TASK;
            // Up to the failure, if any: the events before it stay readable.
            let end = match &summary.failure {
                Some((i, _)) => first + i,
                None => (first + CHARACTERS_PER_TASK).min(self.characters.len()),
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
        let block = |c: &Character| c.output().world().as_ptr() as usize;
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
}

/// Updates `characters` (from the start of a task on) in order into the
/// summaries of their tasks, the state of the next character loading while
/// the current one computes (a crowd is bound by memory latency: see
/// [`prefetch`](crate::anim::prefetch)) as its plan (one per character)
/// names it.
fn update_in_order(
    characters: &mut [Character],
    plans: &mut [PrefetchPlan],
    summaries: &mut [TaskSummary],
    dt: f32,
) {
    for summary in summaries.iter_mut() {
        *summary = TaskSummary::default();
    }
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
        let character = &mut characters[i];
        let result = character.update(dt);
        let summary = &mut summaries[i / CHARACTERS_PER_TASK];
        if let (Err(error), None) = (result, &summary.failure) {
            summary.failure = Some((i % CHARACTERS_PER_TASK, error));
        }
        summary.fired |= !character.events().is_empty();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::character::controller::DEFAULT_CONTROLLER;

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
