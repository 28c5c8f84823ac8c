//! Scripted viewer runs (tests, soak runs): actions repeated every so many
//! frames (switch the clip, reload the model, switch the skinning method,
//! switch between the controller and the manual clip mode)
//! and memory samples (host RSS and the GPU allocator's bytes) printed as
//! one line each, in a format tests read back (`MemorySample::parse`).

use super::state::{AnimationMode, ViewerState};
use crate::anim::SkinningMethod;
use crate::render::DqsSplit;
use std::path::{Path, PathBuf};

/// How often each scripted action runs, in rendered frames (`None`: never).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Schedule {
    /// Play the next clip (manual clip mode).
    pub switch_clip_every: Option<u64>,
    /// Load the model file again (a new scene, as a drop of the file).
    pub reload_every: Option<u64>,
    /// Switch between linear and dual-quaternion skinning.
    pub switch_method_every: Option<u64>,
    /// Switch between the controller (state machine) and the manual clip
    /// mode; each switch builds the character anew.
    pub switch_controller_every: Option<u64>,
    /// Print a `MemorySample` line.
    pub report_memory_every: Option<u64>,
}

/// One memory sample of the viewer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemorySample {
    /// Frames rendered when it was taken.
    pub frame: u64,
    /// Resident set size of the process, bytes.
    pub rss_bytes: u64,
    /// Bytes the C heap (malloc, which Rust's and the driver's allocations
    /// go through) has handed out and not had back: flat while RSS climbs
    /// means pages (device memory on lavapipe, fragmentation), not a leak.
    pub heap_bytes: u64,
    /// Bytes of live allocations in vkskin's GPU allocator.
    pub gpu_allocated_bytes: u64,
    /// Bytes of device memory blocks that allocator holds.
    pub gpu_reserved_bytes: u64,
}

/// What starts a memory line.
const MEMORY_PREFIX: &str = "vkskin: memory: ";

impl MemorySample {
    /// The line `print` writes.
    pub fn line(&self) -> String {
        format!(
            "{MEMORY_PREFIX}frame {} rss {} heap {} gpu-allocated {} gpu-reserved {}",
            self.frame, self.rss_bytes, self.heap_bytes, self.gpu_allocated_bytes, self.gpu_reserved_bytes
        )
    }

    /// Reads a line written by `line`; `None` for any other line.
    pub fn parse(line: &str) -> Option<MemorySample> {
        let fields: Vec<&str> = line.strip_prefix(MEMORY_PREFIX)?.split_whitespace().collect();
        let value = |name: &str| -> Option<u64> {
            let at = fields.iter().position(|f| *f == name)?;
            fields.get(at + 1)?.parse().ok()
        };
        Some(MemorySample {
            frame: value("frame")?,
            rss_bytes: value("rss")?,
            heap_bytes: value("heap")?,
            gpu_allocated_bytes: value("gpu-allocated")?,
            gpu_reserved_bytes: value("gpu-reserved")?,
        })
    }
}

/// Resident set size of this process in bytes (0 where `/proc` is missing).
pub fn resident_bytes() -> u64 {
    // "VmRSS:     123456 kB"
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next().and_then(|n| n.parse::<u64>().ok()));
    kib.unwrap_or(0) * 1024
}

/// What a scripted frame asks the viewer to do beyond `ViewerState` changes.
#[derive(Debug, Default, PartialEq)]
pub struct Actions {
    /// Take a memory sample.
    pub report_memory: bool,
}

/// Runs the schedule's actions due at `frame` (frames rendered so far) once:
/// a repeated call for the same frame (a redraw that rendered nothing) does
/// nothing.
#[derive(Debug, Default)]
pub struct Script {
    schedule: Schedule,
    model: Option<PathBuf>,
    last_frame: Option<u64>,
}

impl Script {
    /// A script for `schedule`; reloads read `model` (none: no reloads).
    pub fn new(schedule: Schedule, model: Option<&Path>) -> Self {
        Script { schedule, model: model.map(Path::to_path_buf), last_frame: None }
    }

    /// Applies the actions due at `frame` to `state` (`clips`: the clips of
    /// the model shown) and returns the rest.
    pub fn step(&mut self, frame: u64, clips: usize, state: &mut ViewerState) -> Actions {
        if frame == 0 || self.last_frame == Some(frame) {
            return Actions::default();
        }
        self.last_frame = Some(frame);
        let due = |every: Option<u64>| every.is_some_and(|n| n > 0 && frame.is_multiple_of(n));
        if due(self.schedule.switch_clip_every) && clips > 0 {
            state.mode = AnimationMode::Clips;
            state.clip_a = Some(state.clip_a.map_or(0, |c| (c + 1) % clips));
        }
        if due(self.schedule.reload_every)
            && let Some(model) = &self.model
        {
            state.load_request = Some(model.clone());
        }
        if due(self.schedule.switch_method_every) {
            // Linear, then DQS split in the shader, then split on the CPU.
            let blend = &mut state.frame.blend;
            (blend.method, blend.dqs_split) = match (blend.method, blend.dqs_split) {
                (SkinningMethod::Linear, _) => (SkinningMethod::DualQuaternion, DqsSplit::Shader),
                (SkinningMethod::DualQuaternion, DqsSplit::Shader) => {
                    (SkinningMethod::DualQuaternion, DqsSplit::Cpu)
                }
                (SkinningMethod::DualQuaternion, DqsSplit::Cpu) => (SkinningMethod::Linear, DqsSplit::Shader),
            };
        }
        if due(self.schedule.switch_controller_every) {
            state.mode = match state.mode {
                AnimationMode::Controller => AnimationMode::Clips,
                AnimationMode::Clips => AnimationMode::Controller,
            };
        }
        Actions { report_memory: due(self.schedule.report_memory_every) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_lines_round_trip() {
        let s = MemorySample {
            frame: 500,
            rss_bytes: 1 << 27,
            heap_bytes: 1 << 26,
            gpu_allocated_bytes: 123,
            gpu_reserved_bytes: 456,
        };
        assert_eq!(MemorySample::parse(&s.line()), Some(s));
        assert_eq!(MemorySample::parse("vkskin: wrote x.png"), None);
        assert_eq!(MemorySample::parse("vkskin: memory: frame x"), None);
    }

    #[test]
    fn resident_size_is_plausible() {
        let rss = resident_bytes();
        assert!(rss > 1 << 20 && rss < 1 << 40, "{rss}");
    }

    #[test]
    fn heap_in_use_follows_allocations() {
        let before = crate::heap::in_use_bytes();
        let block = std::hint::black_box(vec![1u8; 64 << 20]);
        let during = crate::heap::in_use_bytes();
        drop(block);
        // Other tests allocate meanwhile: only a 64 MiB step is certain.
        assert!(during >= before + (32 << 20), "{before} then {during}");
    }

    #[test]
    fn actions_run_once_when_due() {
        let schedule = Schedule {
            switch_clip_every: Some(2),
            reload_every: Some(3),
            switch_method_every: Some(4),
            switch_controller_every: Some(7),
            report_memory_every: Some(5),
        };
        let mut script = Script::new(schedule, Some(Path::new("m.glb")));
        let mut state = ViewerState::default();
        assert_eq!(script.step(0, 3, &mut state), Actions::default());
        assert_eq!(state, ViewerState::default());
        script.step(2, 3, &mut state);
        assert_eq!((state.mode, state.clip_a), (AnimationMode::Clips, Some(0)));
        // A redraw that rendered nothing asks again for the same frame: no second switch.
        script.step(2, 3, &mut state);
        assert_eq!(state.clip_a, Some(0));
        script.step(3, 3, &mut state);
        assert_eq!(state.load_request.take(), Some(PathBuf::from("m.glb")));
        script.step(4, 3, &mut state);
        assert_eq!((state.clip_a, state.frame.blend.method), (Some(1), SkinningMethod::DualQuaternion));
        assert!(script.step(5, 3, &mut state).report_memory);
        script.step(6, 3, &mut state);
        assert_eq!(state.clip_a, Some(2));
        script.step(7, 3, &mut state);
        assert_eq!(state.mode, AnimationMode::Controller);
        script.step(8, 3, &mut state);
        assert_eq!(
            (state.clip_a, state.frame.blend.method, state.frame.blend.dqs_split),
            (Some(0), SkinningMethod::DualQuaternion, DqsSplit::Cpu)
        );
        script.step(12, 3, &mut state);
        assert_eq!(
            (state.frame.blend.method, state.frame.blend.dqs_split),
            (SkinningMethod::Linear, DqsSplit::Shader)
        );
    }
}
