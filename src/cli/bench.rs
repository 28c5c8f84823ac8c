//! `vkskin bench`: the command line turned into a [`BenchPlan`] (every
//! configuration to measure), the measurement run, then the report: a table
//! on stdout, `DIR/results.json` and the SVG plots (`crate::bench_report`).

use super::args::BenchArgs;
use crate::anim::SkinningMethod;
use crate::asset::{self, LoadOptions, Model};
use crate::bench_report::{self, BenchEntry, BenchHeader, BenchProgress, BenchResults, GpuPhases, Stat};
use crate::character::Controller;
use crate::character::controller::find_controller;
use crate::gpu::{GpuContext, GpuOptions};
use crate::render::copy_kernel::{CopyKernel, measure_buffer_copy_wall};
use crate::render::mesh_pass::VertexPath;
use crate::render::profile::{FrameSample, ProfileScene};
use crate::render::skin_pass::PaletteUpload;
use crate::render::skinning::{DqsSplit, ShaderSkinning};
use anyhow::{Context, anyhow, bail};
use ash::vk;
use clap::ValueEnum;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where and how vertices are skinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SkinningMode {
    /// Linear blend skinning in the compute pass, once per frame; every draw pass reads the result.
    Compute,
    /// Linear blend skinning in the vertex shader of every draw pass.
    Vertex,
    /// Dual-quaternion skinning in the compute pass.
    DqsCompute,
    /// Dual-quaternion skinning in the vertex shader of every draw pass.
    DqsVertex,
}

impl SkinningMode {
    /// Every mode, in the order a full sweep measures them.
    pub const ALL: [SkinningMode; 4] =
        [SkinningMode::Compute, SkinningMode::Vertex, SkinningMode::DqsCompute, SkinningMode::DqsVertex];

    /// The name on the command line and in results.json.
    pub fn as_str(self) -> &'static str {
        match self {
            SkinningMode::Compute => "compute",
            SkinningMode::Vertex => "vertex",
            SkinningMode::DqsCompute => "dqs-compute",
            SkinningMode::DqsVertex => "dqs-vertex",
        }
    }

    /// Whether the compute pass skins (once per frame), not the draw passes.
    pub fn is_compute(self) -> bool {
        matches!(self, SkinningMode::Compute | SkinningMode::DqsCompute)
    }

    /// Whether it blends dual quaternions rather than matrices.
    pub fn is_dual_quaternion(self) -> bool {
        matches!(self, SkinningMode::DqsCompute | SkinningMode::DqsVertex)
    }
}

/// How palettes reach the GPU each frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum UploadMode {
    /// Written into host-visible memory the skin pass reads directly.
    #[value(name = "inplace")]
    InPlace,
    /// Written into host-visible staging memory, then copied into device-local memory.
    Staged,
    /// Only characters whose pose changed are written (and copied).
    Dirty,
}

impl UploadMode {
    /// Every mode, in the order a sweep measures them.
    pub const ALL: [UploadMode; 3] = [UploadMode::InPlace, UploadMode::Staged, UploadMode::Dirty];

    /// The name on the command line and in results.json.
    pub fn as_str(self) -> &'static str {
        match self {
            UploadMode::InPlace => "inplace",
            UploadMode::Staged => "staged",
            UploadMode::Dirty => "dirty",
        }
    }
}

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
    /// Draw passes: 1 (main), 2 (depth prepass + main), 5 (4 shadow cascades + main).
    pub passes: u32,
    /// How vertices are skinned.
    pub skinning: SkinningMode,
    /// Dual-quaternion modes: where the matrices are split (`None` for LBS).
    pub dqs_split: Option<DqsSplit>,
    /// How palettes are uploaded.
    pub upload: UploadMode,
    /// Every character paused: no pose changes (measured for `dirty` only,
    /// where it must cost 0 palette bytes).
    pub paused: bool,
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
}

/// The pass counts there is a frame setup for.
pub const PASS_SETUPS: [u32; 3] = [1, 2, 5];
/// Most characters one configuration may ask for.
pub const MAX_CHARACTERS: u32 = 100_000;
/// Most timed frames one configuration may ask for.
pub const MAX_FRAMES: u32 = 1_000_000;

/// The sweep `--quick` measures where an option is not given: small enough
/// to finish in under a minute on lavapipe (CI runs it).
mod quick {
    pub const CHARACTERS: [u32; 2] = [1, 16];
    pub const PASSES: [u32; 2] = [1, 2];
    pub const SKINNING: [super::SkinningMode; 2] =
        [super::SkinningMode::Compute, super::SkinningMode::Vertex];
    pub const FRAMES: u32 = 8;
    pub const WARMUP_FRAMES: u32 = 2;
}

/// The full sweep's defaults.
mod full {
    pub const CHARACTERS: [u32; 4] = [1, 10, 100, 1000];
    pub const FRAMES: u32 = 100;
    pub const WARMUP_FRAMES: u32 = 10;
}

impl BenchPlan {
    /// The plan for `args` (the cartesian product of the options, defaults
    /// from `--quick` or the full sweep for those not given); `command` is
    /// the command line as typed. One clear error for a bad option.
    pub fn from_args(args: &BenchArgs, command: impl Into<String>) -> anyhow::Result<BenchPlan> {
        let characters = sorted_unique(if args.characters.is_empty() {
            if args.quick { quick::CHARACTERS.to_vec() } else { full::CHARACTERS.to_vec() }
        } else {
            args.characters.clone()
        });
        if let Some(bad) = characters.iter().find(|&&c| c == 0 || c > MAX_CHARACTERS) {
            bail!("--characters: {bad} is not a character count (1 to {MAX_CHARACTERS})");
        }
        let passes = sorted_unique(if args.passes.is_empty() {
            if args.quick { quick::PASSES.to_vec() } else { PASS_SETUPS.to_vec() }
        } else {
            args.passes.clone()
        });
        if let Some(bad) = passes.iter().find(|p| !PASS_SETUPS.contains(p)) {
            bail!(
                "--passes: {bad} is not a pass setup (1 = main, 2 = depth prepass + main, 5 = 4 shadow cascades + main)"
            );
        }
        let skinning = first_of_each(if args.skinning.is_empty() {
            if args.quick { quick::SKINNING.to_vec() } else { SkinningMode::ALL.to_vec() }
        } else {
            args.skinning.clone()
        });
        if !args.dqs_split.is_empty() && !skinning.iter().any(|s| s.is_dual_quaternion()) {
            bail!("--dqs-split: no dqs mode in --skinning to split for (dqs-compute, dqs-vertex)");
        }
        // Both places by default: which one pays depends on the device
        // (shader ALU per influence) against the CPU (per joint and frame).
        let dqs_splits = first_of_each(if args.dqs_split.is_empty() {
            DqsSplit::ALL.to_vec()
        } else {
            args.dqs_split.iter().map(|&s| s.into()).collect()
        });
        // Each skinning mode, the dqs ones once per split.
        let shadings: Vec<(SkinningMode, Option<DqsSplit>)> = skinning
            .iter()
            .flat_map(|&mode| {
                if mode.is_dual_quaternion() {
                    dqs_splits.iter().map(|&split| (mode, Some(split))).collect()
                } else {
                    vec![(mode, None)]
                }
            })
            .collect();
        let uploads = first_of_each(if args.upload.is_empty() {
            UploadMode::ALL.to_vec()
        } else {
            args.upload.clone()
        });
        let frames = args.frames.unwrap_or(if args.quick { quick::FRAMES } else { full::FRAMES });
        if frames == 0 || frames > MAX_FRAMES {
            bail!("--frames: {frames} is not a frame count (1 to {MAX_FRAMES})");
        }
        let models: Vec<BenchModel> = if args.models.is_empty() {
            vec![BenchModel::BuiltIn]
        } else {
            first_of_each(args.models.iter().map(|m| BenchModel::File(PathBuf::from(m))).collect())
        };

        let mut configs = Vec::new();
        for model in 0..models.len() {
            for &characters in &characters {
                for &(skinning, dqs_split) in &shadings {
                    for &upload in &uploads {
                        // Pausing changes nothing but what dirty uploads skip.
                        let pauses: &[bool] =
                            if upload == UploadMode::Dirty { &[false, true] } else { &[false] };
                        for &paused in pauses {
                            for &passes in &passes {
                                configs.push(BenchConfig {
                                    model,
                                    characters,
                                    passes,
                                    skinning,
                                    dqs_split,
                                    upload,
                                    paused,
                                });
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
            warmup_frames: if args.quick { quick::WARMUP_FRAMES } else { full::WARMUP_FRAMES },
            quick: args.quick,
            out: PathBuf::from(&args.out),
            device: args.device.clone(),
            validation: args.validation,
            command: command.into(),
            load: LoadOptions::default(),
        })
    }

    /// A configuration's one-line name (the progress bar's message).
    pub fn label(&self, config: &BenchConfig) -> String {
        let passes =
            if config.passes == 1 { "1 pass".to_string() } else { format!("{} passes", config.passes) };
        let split = match config.dqs_split {
            Some(DqsSplit::Cpu) => " (cpu split)",
            _ => "",
        };
        format!(
            "{}, {} character{}, {}{split}, {}{}, {passes}",
            self.models[config.model].label(),
            config.characters,
            if config.characters == 1 { "" } else { "s" },
            config.skinning.as_str(),
            config.upload.as_str(),
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

/// `vkskin bench`: plan, measure, report; models load within `load`'s limits.
pub fn run(args: &BenchArgs, load: &LoadOptions) -> anyhow::Result<()> {
    let plan = BenchPlan { load: load.clone(), ..BenchPlan::from_args(args, command_line())? };
    // Fail on an unusable output folder before minutes of measuring.
    std::fs::create_dir_all(&plan.out)
        .with_context(|| format!("{}: cannot create folder", plan.out.display()))
        .map_err(flatten)?;
    let results = run_bench(&plan)?;
    report(&plan.out, &results)
}

/// An error with its context as one message (`main` prints the top one).
fn flatten(error: anyhow::Error) -> anyhow::Error {
    anyhow!("{error:#}")
}

/// Image size the benchmark draws at (`--quick`: smaller, for lavapipe).
const EXTENT: vk::Extent2D = vk::Extent2D { width: 1280, height: 720 };
const QUICK_EXTENT: vk::Extent2D = vk::Extent2D { width: 320, height: 180 };

/// Measures every configuration of `plan` on the chosen device: per scene
/// (model and character count) one `ProfileScene` and one copy kernel over
/// the bytes its skin pass moves; per configuration `plan.warmup_frames`
/// untimed frames, then `plan.frames` timed ones, summarised as median and
/// 95th percentile. With `plan.validation`, any validation message fails the run.
pub fn run_bench(plan: &BenchPlan) -> anyhow::Result<BenchResults> {
    let options = GpuOptions {
        validation: plan.validation,
        device: plan.device.clone(),
        announce_device: true,
        ..Default::default()
    };
    let ctx = GpuContext::new(&options, &|_, _, _, _| true)?;
    let header = BenchHeader::new(ctx.device_name.clone(), driver(&ctx), plan.quick, plan.command.clone());
    let progress = BenchProgress::new(plan.configs.len() as u64);
    let measured = measure_all(&ctx, plan, &progress);
    progress.clear();
    // Destroyed before the messages are read: leaks are reported then.
    let messages = ctx.finish();
    let entries = measured.map_err(|e| super::gpu_failure(e, "benchmarking"))?;
    if !messages.is_empty() {
        bail!("{} validation message(s); the first: {}", messages.len(), messages[0]);
    }
    Ok(BenchResults { header, entries })
}

/// Every configuration, scene by scene (the plan keeps a scene's configurations together).
fn measure_all(
    ctx: &GpuContext,
    plan: &BenchPlan,
    progress: &BenchProgress,
) -> anyhow::Result<Vec<BenchEntry>> {
    let extent = if plan.quick { QUICK_EXTENT } else { EXTENT };
    let mut entries = Vec::with_capacity(plan.configs.len());
    let mut loaded: Option<(usize, Arc<Model>, Arc<Controller>)> = None;
    // The scene being measured: (model, characters, shaders), its profile and ceilings.
    let mut scene: Option<((usize, u32, ShaderSkinning), ProfileScene, SceneTimes)> = None;
    // A scene the device cannot hold (e.g. past maxStorageBufferRange): its
    // configurations are skipped with a message, the others still run.
    let mut unbuildable: Option<(usize, u32, ShaderSkinning)> = None;
    let result = (|| {
        for config in &plan.configs {
            progress.start(&plan.label(config));
            if loaded.as_ref().is_none_or(|(m, ..)| *m != config.model) {
                loaded = Some(load_model(&plan.models[config.model], &plan.load)?);
            }
            let (_, model, controller) = loaded.as_ref().expect("a model");
            // Pipelines are built for one skinning method and split: a new
            // one is a new scene.
            let method = if config.skinning.is_dual_quaternion() {
                SkinningMethod::DualQuaternion
            } else {
                SkinningMethod::Linear
            };
            let method = ShaderSkinning { method, dqs_split: config.dqs_split.unwrap_or_default() };
            let key = (config.model, config.characters, method);
            if unbuildable == Some(key) {
                progress.finish();
                continue;
            }
            if scene.as_ref().is_none_or(|(k, ..)| *k != key) {
                if let Some((_, old, _)) = scene.take() {
                    old.destroy(ctx);
                }
                let (model, controller) = (model.clone(), controller.clone());
                let made = match ProfileScene::new(ctx, model, controller, config.characters, method, extent)
                {
                    Ok(made) => made,
                    // A lost device is not a scene too big: nothing more can run.
                    Err(e) if e.gpu().is_some_and(|g| g.is_device_lost()) => return Err(e.into()),
                    Err(e) => {
                        progress.println(&format!("vkskin: bench: skipped {}: {e}", plan.label(config)));
                        unbuildable = Some(key);
                        progress.finish();
                        continue;
                    }
                };
                let mut made = made;
                let times = scene_times(ctx, &mut made, plan.frames);
                let times = match times {
                    Ok(t) => t,
                    Err(e) => {
                        made.destroy(ctx);
                        return Err(e);
                    }
                };
                scene = Some((key, made, times));
            }
            let (_, profile, times) = scene.as_mut().expect("a scene");
            entries.push(measure(ctx, plan, config, model, profile, *times)?);
            progress.finish();
        }
        Ok(())
    })();
    if let Some((_, s, _)) = scene {
        s.destroy(ctx);
    }
    result.map(|_| entries)
}

/// A model and the controller its crowd plays: its own (sidecar or
/// built-in), else its first clip looping (the rest pose without clips).
fn load_model(
    which: &BenchModel,
    load: &LoadOptions,
) -> anyhow::Result<(usize, Arc<Model>, Arc<Controller>)> {
    let (model, path) = match which {
        BenchModel::BuiltIn => (asset::load_default_character_with(load)?, None),
        BenchModel::File(path) => (asset::load_with(path, load)?, Some(path.as_path())),
    };
    let controller = match find_controller(&model.rig, path, None)? {
        Some((c, _)) => c,
        None => Controller::single_clip(&model, (!model.clips.is_empty()).then_some(0), true)?,
    };
    Ok((0, Arc::new(model), Arc::new(controller)))
}

/// What a scene measures once for all its configurations: the copy
/// kernel over the bytes its skin pass moves (timestamps, and host-timed),
/// its skin dispatch host-timed, and its staged palette copy host-timed
/// next to a plain buffer copy of the same bytes.
#[derive(Debug, Clone, Copy)]
struct SceneTimes {
    copy: Stat,
    copy_wall: Option<Stat>,
    skin_wall: Option<Stat>,
    staged_copy_wall: Option<Stat>,
    buffer_copy_wall: Option<Stat>,
}

fn scene_times(ctx: &GpuContext, scene: &mut ProfileScene, runs: u32) -> anyhow::Result<SceneTimes> {
    let (read, written) = scene.skin_traffic();
    let kernel = CopyKernel::new(ctx, read + written)?;
    // One untimed run first (first-touch of the buffers).
    let times = kernel.measure(ctx, runs as usize + 1);
    let walls = times.is_ok().then(|| kernel.measure_wall(ctx, runs as usize));
    kernel.destroy(ctx);
    let mut times = times?;
    let copy = Stat::from_samples(&mut times[1..]).map_err(|e| anyhow!("copy kernel: {e}"))?;
    let copy_wall = wall_stat(walls.transpose()?)?;
    let skin_wall = wall_stat(Some(scene.measure_skin_wall(ctx, runs)?))?;
    let (staged, palette_bytes) = scene.measure_staged_copy_wall(ctx, runs)?;
    let staged_copy_wall = wall_stat((palette_bytes > 0).then_some(staged))?;
    let plain = measure_buffer_copy_wall(ctx, palette_bytes, runs as usize)?;
    let buffer_copy_wall = wall_stat((palette_bytes > 0).then_some(plain))?;
    Ok(SceneTimes { copy, copy_wall, skin_wall, staged_copy_wall, buffer_copy_wall })
}

/// The summary of host-timed runs; `None` when the median is not above 0
/// (the work is lost in the noise of a submission).
fn wall_stat(times: Option<Vec<f64>>) -> anyhow::Result<Option<Stat>> {
    let Some(mut times) = times else { return Ok(None) };
    let stat = Stat::from_samples(&mut times).map_err(|e| anyhow!("host-timed runs: {e}"))?;
    Ok((stat.median > 0.0).then_some(stat))
}

/// One configuration on its scene.
fn measure(
    ctx: &GpuContext,
    plan: &BenchPlan,
    config: &BenchConfig,
    model: &Model,
    scene: &mut ProfileScene,
    times: SceneTimes,
) -> anyhow::Result<BenchEntry> {
    let path = if config.skinning.is_compute() { VertexPath::PreSkinned } else { VertexPath::VertexSkinning };
    let upload = match config.upload {
        UploadMode::InPlace => PaletteUpload::InPlace,
        UploadMode::Staged => PaletteUpload::Staged,
        UploadMode::Dirty => PaletteUpload::Dirty,
    };
    scene.configure(path, upload, config.passes)?;
    let samples = scene.measure(ctx, plan.warmup_frames, plan.frames, config.paused)?;
    let stat = |f: &dyn Fn(&FrameSample) -> f64, what: &str| -> anyhow::Result<Stat> {
        let mut values: Vec<f64> = samples.iter().map(f).collect();
        Stat::from_samples(&mut values).map_err(|e| anyhow!("{}: {what}: {e}", plan.label(config)))
    };
    let passes = samples.first().map_or(0, |s| s.gpu.pass_count);
    let gpu_us = GpuPhases {
        upload: stat(&|s| s.gpu.upload_us, "upload")?,
        skin: stat(&|s| s.gpu.skin_us, "skin")?,
        passes: (0..passes).map(|k| stat(&|s| s.gpu.passes_us[k], "pass")).collect::<Result<Vec<_>, _>>()?,
        frame: stat(&|s| s.gpu.frame_us, "frame")?,
    };
    let mut bytes: Vec<u64> = samples.iter().map(|s| s.palette_bytes).collect();
    bytes.sort_unstable();
    let (read, written) = scene.skin_traffic();
    Ok(BenchEntry {
        model: plan.models[config.model].label(),
        characters: config.characters,
        vertices: model.meshes.iter().flat_map(|m| &m.primitives).map(|p| p.vertex_count() as u64).sum(),
        joints: model.skins.iter().map(|s| s.joints.len() as u32).sum(),
        passes: config.passes,
        skinning: config.skinning.as_str().to_string(),
        dqs_split: config.dqs_split.map(|s| s.name().to_string()),
        upload: config.upload.as_str().to_string(),
        paused: config.paused,
        frames: plan.frames,
        cpu_pose_us: stat(&|s| s.cpu_pose_us, "pose")?,
        cpu_palette_write_us: stat(&|s| s.cpu_palette_write_us, "palette write")?,
        palette_bytes: bytes[bytes.len() / 2],
        skin_bytes: read + written,
        gpu_us,
        copy_kernel_us: times.copy,
        copy_kernel_wall_us: times.copy_wall,
        skin_wall_us: if config.skinning.is_compute() { times.skin_wall } else { None },
        staged_copy_wall_us: times.staged_copy_wall,
        buffer_copy_wall_us: times.buffer_copy_wall,
    })
}

/// The driver's name and version (VkPhysicalDeviceDriverProperties).
fn driver(ctx: &GpuContext) -> String {
    let mut driver = vk::PhysicalDeviceDriverProperties::default();
    let mut properties = vk::PhysicalDeviceProperties2::default().push_next(&mut driver);
    // SAFETY: a live physical device; Vulkan 1.2 core query.
    unsafe { ctx.instance.get_physical_device_properties2(ctx.physical, &mut properties) };
    let name = driver.driver_name_as_c_str().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let info = driver.driver_info_as_c_str().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    format!("{name} {info}").trim().to_string()
}

/// Writes the report of `results`: the table on stdout, `out/results.json`
/// and the SVG plots, their paths (and any plot skipped) on stderr.
pub fn report(out: &Path, results: &BenchResults) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    bench_report::print_table(&mut stdout, results).map_err(|e| anyhow!("stdout: {e}"))?;
    let json = bench_report::write_json(out, results)?;
    eprintln!("vkskin: wrote {}", json.display());
    let plots = bench_report::write_plots(out, results)?;
    for path in &plots.written {
        eprintln!("vkskin: wrote {}", path.display());
    }
    for note in &plots.skipped {
        eprintln!("vkskin: {note}");
    }
    Ok(())
}

/// The command line as typed, arguments with spaces or quotes quoted for a shell.
fn command_line() -> String {
    let mut args = std::env::args();
    // The program as `vkskin`, wherever it was run from.
    let program = args
        .next()
        .map(|p| Path::new(&p).file_name().map_or_else(|| p.clone(), |n| n.to_string_lossy().into_owned()));
    program.into_iter().chain(args).map(|a| shell_quoted(&a)).collect::<Vec<_>>().join(" ")
}

/// `arg` as a shell word: as is when plain, else single-quoted.
fn shell_quoted(arg: &str) -> String {
    let plain = !arg.is_empty() && arg.chars().all(|c| c.is_ascii_alphanumeric() || "-_./,=:+@%".contains(c));
    if plain { arg.to_string() } else { format!("'{}'", arg.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    /// Parses `vkskin bench ARGS...` and plans it.
    fn plan(args: &[&str]) -> Result<BenchPlan, String> {
        let cli = Cli::try_parse_from(["vkskin", "bench"].iter().chain(args)).map_err(|e| e.to_string())?;
        let Some(Command::Bench(args)) = cli.command else { panic!("not bench") };
        BenchPlan::from_args(&args, "vkskin bench").map_err(|e| e.to_string())
    }

    #[test]
    fn the_built_in_character_takes_the_load_options() {
        let compressed = LoadOptions { compressed_clips: true, ..LoadOptions::default() };
        let (_, model, _) = load_model(&BenchModel::BuiltIn, &compressed).unwrap();
        assert!((0..model.clips.len()).all(|c| model.rig.compressed_clip(c).is_some()));
        let (_, model, _) = load_model(&BenchModel::BuiltIn, &LoadOptions::default()).unwrap();
        assert!(model.rig.compressed_clip(0).is_none());
    }

    #[test]
    fn quick_is_the_built_in_character_over_a_small_sweep() {
        let p = plan(&["--quick", "--out", "d"]).unwrap();
        assert_eq!(p.models, [BenchModel::BuiltIn]);
        assert_eq!((p.frames, p.warmup_frames, p.quick), (8, 2, true));
        assert_eq!(p.out, PathBuf::from("d"));
        // 2 counts x 2 skinning modes x (inplace, staged, dirty, dirty paused) x 2 pass counts.
        assert_eq!(p.configs.len(), 2 * 2 * 4 * 2);
        let has = |f: &dyn Fn(&BenchConfig) -> bool| p.configs.iter().any(f);
        for c in [1, 16] {
            assert!(has(&|x| x.characters == c));
        }
        for s in [SkinningMode::Compute, SkinningMode::Vertex] {
            assert!(has(&|x| x.skinning == s));
        }
        for u in UploadMode::ALL {
            assert!(has(&|x| x.upload == u));
        }
        assert!(has(&|x| x.upload == UploadMode::Dirty && x.paused));
        assert!(!has(&|x| x.upload != UploadMode::Dirty && x.paused));
        assert_eq!(
            p.configs[0],
            BenchConfig {
                model: 0,
                characters: 1,
                passes: 1,
                skinning: SkinningMode::Compute,
                dqs_split: None,
                upload: UploadMode::InPlace,
                paused: false
            }
        );
        assert_eq!(p.label(&p.configs[0]), "built-in, 1 character, compute, inplace, 1 pass");
    }

    #[test]
    fn the_full_sweep_is_the_issues() {
        let p = plan(&["--out", "d"]).unwrap();
        assert_eq!((p.frames, p.quick), (100, false));
        // 4 counts x (2 LBS modes + 2 DQS modes x 2 splits) x 4 upload setups x 3 pass counts.
        assert_eq!(p.configs.len(), 4 * (2 + 2 * 2) * 4 * 3);
        for split in DqsSplit::ALL {
            assert!(
                p.configs
                    .iter()
                    .any(|c| c.skinning == SkinningMode::DqsCompute && c.dqs_split == Some(split))
            );
        }
        assert!(p.configs.iter().all(|c| c.skinning.is_dual_quaternion() == c.dqs_split.is_some()));
        let mut counts: Vec<u32> = p.configs.iter().map(|c| c.characters).collect();
        counts.dedup();
        assert_eq!(counts, [1, 10, 100, 1000], "character counts are neighbours, ascending");
    }

    #[test]
    fn options_override_the_defaults_and_lists_take_commas() {
        let p = plan(&[
            "a.glb",
            "b.gltf",
            "--quick",
            "--characters",
            "100,1,10,1",
            "--passes",
            "5",
            "--skinning",
            "dqs-vertex,dqs-compute",
            "--upload",
            "staged",
            "--frames",
            "3",
            "--out",
            "d",
            "--device",
            "llvmpipe",
            "--validation",
        ])
        .unwrap();
        assert_eq!(p.models, [BenchModel::File("a.glb".into()), BenchModel::File("b.gltf".into())]);
        assert_eq!(p.frames, 3);
        assert_eq!((p.device.as_deref(), p.validation), (Some("llvmpipe"), true));
        // 2 models x 3 counts x 2 modes x 2 splits.
        assert_eq!(p.configs.len(), 2 * 3 * 2 * 2);
        let first = p.configs[0];
        assert_eq!((first.characters, first.passes, first.skinning), (1, 5, SkinningMode::DqsVertex));
        assert_eq!(first.dqs_split, Some(DqsSplit::Shader));
        assert!(p.configs.iter().all(|c| c.upload == UploadMode::Staged && !c.paused));
        assert_eq!(
            p.label(p.configs.last().unwrap()),
            "b.gltf, 100 characters, dqs-compute (cpu split), staged, 5 passes"
        );
        let cpu_only =
            plan(&["--skinning", "compute,dqs-compute", "--dqs-split", "cpu", "--out", "d"]).unwrap();
        let splits: Vec<_> = cpu_only.configs.iter().map(|c| c.dqs_split).collect();
        assert!(splits.contains(&None) && splits.contains(&Some(DqsSplit::Cpu)));
        assert!(!splits.contains(&Some(DqsSplit::Shader)));
    }

    #[test]
    fn bad_options_are_one_clear_error() {
        let error = |args: &[&str]| plan(args).unwrap_err();
        assert_eq!(
            error(&["--characters", "1,0", "--out", "d"]),
            "--characters: 0 is not a character count (1 to 100000)"
        );
        assert_eq!(
            error(&["--frames", "0", "--out", "d"]),
            "--frames: 0 is not a frame count (1 to 1000000)"
        );
        assert!(error(&["--passes", "3", "--out", "d"]).starts_with("--passes: 3 is not a pass setup"));
        let skinning = error(&["--skinning", "compute,gpu", "--out", "d"]);
        assert!(skinning.contains("invalid value 'gpu' for '--skinning"), "{skinning}");
        assert!(skinning.contains("compute, vertex, dqs-compute, dqs-vertex"), "{skinning}");
        let upload = error(&["--upload", "in-place", "--out", "d"]);
        assert!(upload.contains("invalid value 'in-place' for '--upload"), "{upload}");
        assert!(upload.contains("inplace, staged, dirty"), "{upload}");
        assert!(
            error(&["--characters", "ten", "--out", "d"]).contains("invalid value 'ten' for '--characters")
        );
        assert!(error(&["--quick"]).contains("--out"), "the output folder is required");
        assert_eq!(
            error(&["--skinning", "compute", "--dqs-split", "cpu", "--out", "d"]),
            "--dqs-split: no dqs mode in --skinning to split for (dqs-compute, dqs-vertex)"
        );
        assert!(plan(&["--quick", "--dqs-split", "cpu", "--out", "d"]).is_err(), "--quick has no dqs modes");
    }

    #[test]
    fn mode_names_are_the_results_names() {
        for mode in SkinningMode::ALL {
            assert_eq!(SkinningMode::from_str(mode.as_str(), false), Ok(mode));
        }
        for mode in UploadMode::ALL {
            assert_eq!(UploadMode::from_str(mode.as_str(), false), Ok(mode));
        }
        assert!(SkinningMode::DqsCompute.is_compute() && SkinningMode::DqsCompute.is_dual_quaternion());
        assert!(!SkinningMode::Vertex.is_compute() && !SkinningMode::Vertex.is_dual_quaternion());
    }

    #[test]
    fn the_report_writes_results_and_plots_into_the_folder() {
        use crate::bench_report::test_data::{entry, scratch};
        let out = scratch("cli_report");
        std::fs::create_dir_all(&out).unwrap();
        let header = bench_report::BenchHeader::new("llvmpipe", "Mesa", true, "vkskin bench --quick");
        let entries = vec![entry(1, 1, "compute", "inplace", false), entry(16, 2, "vertex", "dirty", true)];
        let results = BenchResults { header, entries };
        report(&out, &results).unwrap();
        assert_eq!(bench_report::read_json(&out.join(bench_report::RESULTS_FILE)).unwrap(), results);
        for plot in [bench_report::FRAME_TIME_PLOT, bench_report::UPLOAD_PLOT, bench_report::THROUGHPUT_PLOT]
        {
            assert!(std::fs::read_to_string(out.join(plot)).unwrap().contains("</svg>"), "{plot}");
        }
    }

    #[test]
    fn command_lines_quote_what_a_shell_would_split() {
        assert_eq!(shell_quoted("--characters"), "--characters");
        assert_eq!(shell_quoted("1,10"), "1,10");
        assert_eq!(shell_quoted("my model.glb"), "'my model.glb'");
        assert_eq!(shell_quoted("it's"), r"'it'\''s'");
        assert_eq!(shell_quoted(""), "''");
    }
}
