//! What `vkskin bench` measures: a [`SweepRequest`] (the lists asked for;
//! an empty list takes the sweep's default) turned into a checked
//! [`BenchPlan`], every configuration in the order it runs.

use crate::asset::LoadOptions;
use crate::render::frame_settings::{
    Choice, DqsSplit, DrawDetail, FrameSettings, InfluenceBlend, PaletteUpload, PassSetup, PoseEvaluation,
    SkinningMethod, SkinningMode,
};
use crate::render::renderer::{DetailLimits, MAX_CHARACTERS};
use std::path::PathBuf;

/// A model to measure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BenchModel {
    /// The built-in default character.
    BuiltIn,
    /// A .glb or .gltf file, as named on the command line.
    File(PathBuf),
}

impl BenchModel {
    /// Its name in the table, the plots and results.json.
    pub fn label(&self) -> String {
        match self {
            BenchModel::BuiltIn => "built-in".to_string(),
            BenchModel::File(path) => path.display().to_string(),
        }
    }
}

/// One configuration: a scene and a way to upload, skin and draw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BenchConfig {
    /// Index into [`BenchPlan::models`].
    pub model: usize,
    /// Characters on the grid.
    pub characters: u32,
    /// How the frames are skinned, uploaded and drawn.
    pub frame: FrameSettings,
    /// Every character paused: no pose changes (measured for uploads that
    /// skip unchanged poses only, where it must cost 0 palette bytes).
    pub paused: bool,
}

/// What the user asked to measure: each list empty for the sweep's default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SweepRequest {
    /// .glb or .gltf files; none: the built-in character.
    pub models: Vec<String>,
    /// Character counts.
    pub characters: Vec<u32>,
    /// Draw pass setups.
    pub passes: Vec<PassSetup>,
    /// Skinning modes.
    pub skinning: Vec<SkinningMode>,
    /// Palette upload modes.
    pub upload: Vec<PaletteUpload>,
    /// Where the dual-quaternion modes split the matrices.
    pub dqs_split: Vec<DqsSplit>,
    /// Where the crowd's poses are evaluated.
    pub pose: Vec<PoseEvaluation>,
    /// Which detail levels characters draw.
    pub detail: Vec<DrawDetail>,
    /// The most triangles the characters draw in a frame, every pass
    /// together, and the most GPU time a frame takes (the vertices' is
    /// the device's default).
    pub limits: DetailLimits,
    /// Timed frames per configuration.
    pub frames: Option<u32>,
    /// The small sweep's defaults.
    pub quick: bool,
    /// The output folder.
    pub out: PathBuf,
    /// Vulkan device: an index or part of its name.
    pub device: Option<String>,
    /// Khronos validation (with synchronization validation) on.
    pub validation: bool,
    /// The threads each crowd poses and records its frames on: none given
    /// is one, more than one count is refused.
    pub threads: Vec<usize>,
}

/// Everything `vkskin bench` will measure, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchPlan {
    /// The models, in command-line order.
    pub models: Vec<BenchModel>,
    /// The configurations in the order they run: model, then character
    /// count, then skinning, upload and pass count, so configurations
    /// sharing a scene are neighbours.
    pub configs: Vec<BenchConfig>,
    /// Timed frames per configuration.
    pub frames: u32,
    /// Untimed frames first, per configuration (pipelines, caches, clocks).
    pub warmup_frames: u32,
    /// Host-timed whole frames per configuration (isolated submissions,
    /// each waited for, so slower than the timed frames: at most `frames`,
    /// fewer in a quick run).
    pub frame_wall_runs: u32,
    /// A `--quick` run (recorded in the results' header).
    pub quick: bool,
    /// The output folder.
    pub out: PathBuf,
    /// Vulkan device: an index or part of its name.
    pub device: Option<String>,
    /// Khronos validation (with synchronization validation) on; any message fails the run.
    pub validation: bool,
    /// The command line, for the results' header.
    pub command: String,
    /// What a model may read and allocate (the global `--max-memory` and
    /// `--allow-outside-uris`).
    pub load: LoadOptions,
    /// The threads each crowd poses on; the frame's per-character
    /// recording (draw order, upload) runs on them too (`render::chunked`).
    /// One by default, so that the pose time over the characters is the
    /// cost per character on one core.
    pub pose_threads: u32,
    /// What a frame's characters may cost at their detail levels (the
    /// request's).
    pub limits: DetailLimits,
}

/// A request that cannot be planned. One line, naming the option.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// A character count out of range.
    #[error("--characters: {0} is not a character count (1 to {MAX_CHARACTERS})")]
    Characters(u32),
    /// A frame count out of range.
    #[error("--frames: {0} is not a frame count (1 to {MAX_FRAMES})")]
    Frames(u32),
    /// `--dqs-split` without a dual-quaternion mode to split for.
    #[error("--dqs-split: no dqs mode in --skinning to split for (dqs-compute, dqs-vertex)")]
    SplitWithoutDqs,
    /// More than one `--threads` count outside `--cpu-only`.
    #[error("--threads: one count without --cpu-only (the threads each crowd poses and records on), not {0}")]
    ThreadCounts(usize),
}

/// Most timed frames one configuration may ask for.
pub const MAX_FRAMES: u32 = 1_000_000;

/// Warm-up frames of each configuration under a GPU frame budget
/// (`--gpu-frame-budget`), quick or not: its first frame is measured as
/// the third is recorded, and the budget settles within a few more.
const STEERED_WARMUP_FRAMES: u32 = 20;

/// The sweep `--quick` measures where an option is not given: small enough
/// to finish in under a minute on lavapipe (CI runs it).
mod quick {
    use super::{PassSetup, SkinningMode};
    pub const CHARACTERS: [u32; 2] = [1, 16];
    pub const PASSES: [PassSetup; 2] = [PassSetup::Main, PassSetup::DepthPrepass];
    pub const SKINNING: [SkinningMode; 2] = [SkinningMode::COMPUTE, SkinningMode::VERTEX];
    pub const FRAMES: u32 = 8;
    pub const WARMUP_FRAMES: u32 = 2;
    pub const FRAME_WALL_RUNS: u32 = 5;
}

/// The full sweep's defaults.
mod full {
    pub const CHARACTERS: [u32; 4] = [1, 10, 100, 1000];
    pub const FRAMES: u32 = 100;
    pub const WARMUP_FRAMES: u32 = 10;
    pub const FRAME_WALL_RUNS: u32 = 30;
}

/// `given`, or `default` when nothing was given.
fn or_default<T: Clone>(given: &[T], default: &[T]) -> Vec<T> {
    if given.is_empty() { default.to_vec() } else { given.to_vec() }
}

impl BenchPlan {
    /// The plan for `request` (the cartesian product of its lists, defaults
    /// from `quick` or the full sweep for those not given); `command` is
    /// the command line as typed, `load` the models' limits.
    pub fn new(
        request: &SweepRequest,
        command: impl Into<String>,
        load: LoadOptions,
    ) -> Result<BenchPlan, PlanError> {
        let quick = request.quick;
        let characters = sorted_unique(or_default(
            &request.characters,
            if quick { &quick::CHARACTERS } else { &full::CHARACTERS },
        ));
        if let Some(&bad) = characters.iter().find(|&&c| c == 0 || c > MAX_CHARACTERS) {
            return Err(PlanError::Characters(bad));
        }
        let mut passes =
            first_of_each(or_default(&request.passes, if quick { &quick::PASSES } else { PassSetup::ALL }));
        passes.sort_by_key(|p| p.count());
        let skinning = first_of_each(or_default(
            &request.skinning,
            if quick { &quick::SKINNING } else { SkinningMode::ALL },
        ));
        let dual_quaternion = |mode: &SkinningMode| mode.method == SkinningMethod::DualQuaternion;
        if !request.dqs_split.is_empty() && !skinning.iter().any(dual_quaternion) {
            return Err(PlanError::SplitWithoutDqs);
        }
        // Both places by default: which one pays depends on the device
        // (shader ALU per influence) against the CPU (per joint and frame).
        let dqs_splits = first_of_each(or_default(&request.dqs_split, &DqsSplit::ALL));
        // Each skinning mode, the dqs ones once per split.
        let blends: Vec<(SkinningMode, InfluenceBlend)> = skinning
            .iter()
            .flat_map(|&mode| {
                let splits = if dual_quaternion(&mode) { dqs_splits.clone() } else { vec![DqsSplit::Shader] };
                splits
                    .into_iter()
                    .map(move |dqs_split| (mode, InfluenceBlend { method: mode.method, dqs_split }))
            })
            .collect();
        let uploads = first_of_each(or_default(&request.upload, PaletteUpload::ALL));
        // GPU pose only when asked: it measures another trade.
        let poses = first_of_each(or_default(&request.pose, &[PoseEvaluation::Cpu]));
        let details = first_of_each(or_default(&request.detail, &[DrawDetail::Auto]));
        let pose_threads = match request.threads[..] {
            [] => 1,
            [one] => one as u32,
            ref many => return Err(PlanError::ThreadCounts(many.len())),
        };
        let frames = request.frames.unwrap_or(if quick { quick::FRAMES } else { full::FRAMES });
        if frames == 0 || frames > MAX_FRAMES {
            return Err(PlanError::Frames(frames));
        }
        let models: Vec<BenchModel> = if request.models.is_empty() {
            vec![BenchModel::BuiltIn]
        } else {
            first_of_each(request.models.iter().map(|m| BenchModel::File(PathBuf::from(m))).collect())
        };
        let mut configs = Vec::new();
        for model in 0..models.len() {
            for &characters in &characters {
                for &pose in &poses {
                    for &(mode, blend) in &blends {
                        // The GPU pose writes matrices, not dual quaternions.
                        if pose == PoseEvaluation::Gpu && blend.palette_holds_dual_quaternions() {
                            continue;
                        }
                        for &upload in &uploads {
                            // Pausing changes nothing but what such uploads skip.
                            let pauses: &[bool] =
                                if upload.skips_unchanged() { &[false, true] } else { &[false] };
                            for &paused in pauses {
                                for &passes in &passes {
                                    for &detail in &details {
                                        let placement = mode.placement;
                                        let frame =
                                            FrameSettings { placement, blend, upload, passes, pose, detail };
                                        configs.push(BenchConfig { model, characters, frame, paused });
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        Ok(BenchPlan {
            models,
            configs,
            frames,
            warmup_frames: if request.limits.gpu_frame.is_some() {
                // A GPU frame budget measures frames two behind and
                // settles within a few more.
                STEERED_WARMUP_FRAMES
            } else if quick {
                quick::WARMUP_FRAMES
            } else {
                full::WARMUP_FRAMES
            },
            frame_wall_runs: frames.min(if quick { quick::FRAME_WALL_RUNS } else { full::FRAME_WALL_RUNS }),
            quick,
            out: request.out.clone(),
            device: request.device.clone(),
            validation: request.validation,
            command: command.into(),
            load,
            pose_threads,
            limits: request.limits,
        })
    }

    /// A configuration's one-line name (the progress bar's message).
    pub fn label(&self, config: &BenchConfig) -> String {
        let count = config.frame.passes.count();
        let passes = if count == 1 { "1 pass".to_string() } else { format!("{count} passes") };
        let split = match config.frame.blend.split() {
            Some(DqsSplit::Cpu) => " (cpu split)",
            _ => "",
        };
        let pose = if config.frame.pose == PoseEvaluation::Gpu { ", GPU pose" } else { "" };
        let detail = if config.frame.detail == DrawDetail::Full { ", full detail" } else { "" };
        format!(
            "{}, {} character{}{pose}, {}{split}, {}{}, {passes}{detail}",
            self.models[config.model].label(),
            config.characters,
            if config.characters == 1 { "" } else { "s" },
            config.frame.mode().name(),
            config.frame.upload.name(),
            if config.paused { " (paused)" } else { "" },
        )
    }
}

/// `values` sorted, each once.
fn sorted_unique(mut values: Vec<u32>) -> Vec<u32> {
    values.sort_unstable();
    values.dedup();
    values
}

/// `values` in their order, each kept at its first appearance.
fn first_of_each<T: PartialEq>(values: Vec<T>) -> Vec<T> {
    let mut kept: Vec<T> = Vec::with_capacity(values.len());
    for value in values {
        if !kept.contains(&value) {
            kept.push(value);
        }
    }
    kept
}
