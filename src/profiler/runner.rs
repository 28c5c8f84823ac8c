//! Runs a [`BenchPlan`]: scene by scene (model, character count and
//! influence blend), one `ProfileScene` and one copy kernel over the bytes
//! its skin pass moves; per configuration the warm-up frames, then the
//! timed ones, then host-timed whole frames, summarised as median and 95th
//! percentile; then the timestamp check (which clock the GPU figures come
//! from on this device); last, the crossover's refinement (extra character
//! counts, by bisection). Measures through what `render`
//! exposes; records no Vulkan itself.

use super::plan::{BenchConfig, BenchModel, BenchPlan};
use super::report::verdicts::crossovers;
use super::report::{
    BenchEntry, BenchHeader, BenchProgress, BenchResults, EntrySamples, GpuFrameCost, GpuPhases, GpuTiming,
    Stat, TimestampCheck,
};
use super::report::{RESULTS_FILE, ReportError, write_report};
use crate::asset::{self, LoadOptions, Model};
use crate::character::controller::find_controller;
use crate::character::{Controller, Crowd};
use crate::render::copy_kernel::{CopyKernel, bytes_taking, measure_buffer_copy_wall, timestamp_check};
use crate::render::draw_order::PIXEL_ERROR;
use crate::render::frame_settings::{
    Choice, DrawDetail, InfluenceBlend, PassSetup, PoseEvaluation, SkinningPlacement,
};
use crate::render::profile::{FrameSample, PROFILE_FPS, ProfileScene};
use crate::render::{GpuContext, GpuError, GpuOptions, RenderError, with_gpu};
use anyhow::anyhow;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Image size the benchmark draws at (`--quick`: smaller, for lavapipe).
const EXTENT: (u32, u32) = (1280, 720);
const QUICK_EXTENT: (u32, u32) = (320, 180);

/// Bytes the timestamp check's smaller copy moves at first: large enough
/// to take far longer than a timer's tick, small enough to take
/// milliseconds on a CPU. Where it takes under [`CHECK_MIN_US`] by the host
/// clock (a GPU: an H200 copies it in 9 µs, about what its timestamps'
/// own overhead is), the check copies four times as much, and so on, up to
/// [`CHECK_MAX_BYTES`].
const CHECK_BYTES: u64 = 16 << 20;
/// The host-timed time the check's smaller copy should take at least.
const CHECK_MIN_US: f64 = 500.0;
/// The most bytes the check's smaller copy grows to.
const CHECK_MAX_BYTES: u64 = 1 << 30;
/// Timed runs of each of its two copies.
const CHECK_RUNS: usize = 4;

/// Bisection steps at most, per crossover.
const REFINEMENT_STEPS: u32 = 4;
/// A quick run refines the crossover only while the whole run is expected
/// to stay within this (CI runs it on lavapipe, in under a minute).
const QUICK_BUDGET: Duration = Duration::from_secs(40);

/// What a `vkskin bench` run measured, and whether it was cut short.
#[derive(Debug)]
pub struct BenchRun {
    /// The configurations completed, in order (the header says
    /// `incomplete` when the run stopped early).
    pub results: BenchResults,
    /// The configuration being measured when the GPU device was lost,
    /// by its label; `None` when every configuration ran.
    pub lost_during: Option<String>,
}

impl BenchRun {
    /// Writes the report into `out` (each file on its own, see
    /// [`write_report`]), then says in one line what went wrong: the GPU
    /// lost during a configuration (`the GPU device was lost during CONFIG;
    /// out/results.json holds the 3 completed rows`), and any file not written.
    pub fn report(&self, out: &Path) -> anyhow::Result<()> {
        let written = write_report(out, &self.results);
        let Some(config) = &self.lost_during else { return Ok(written?) };
        let lost = format!("the GPU device was lost during {config}");
        let rows = self.results.entries.len();
        let holds = format!(
            "{} holds the {rows} completed row{}",
            out.join(RESULTS_FILE).display(),
            if rows == 1 { "" } else { "s" }
        );
        match written {
            Ok(()) => Err(anyhow!("{lost}; {holds}")),
            Err(ReportError::NotWritten(failed)) => {
                let json_failed = failed.0.iter().any(|e| e.path.file_name() == Some(RESULTS_FILE.as_ref()));
                if json_failed {
                    Err(anyhow!("{lost}; {failed}"))
                } else {
                    Err(anyhow!("{lost}; {holds}; {failed}"))
                }
            }
            Err(e) => Err(anyhow!("{lost}; {e}")),
        }
    }
}

/// Measures every configuration of `plan` on the chosen device. With
/// `plan.validation`, any validation message fails the run. A lost GPU
/// device ends the run early with the configurations completed before it
/// ([`BenchRun::lost_during`]); any other failure is the error.
pub fn run_bench(plan: &BenchPlan) -> anyhow::Result<BenchRun> {
    let options = GpuOptions {
        validation: plan.validation,
        device: plan.device.clone(),
        announce_device: true,
        ..Default::default()
    };
    with_gpu(&options, |ctx| {
        let started = Instant::now();
        let mut header =
            BenchHeader::new(ctx.device_name.clone(), ctx.driver(), plan.quick, plan.command.clone());
        header.pose_threads = Some(plan.pose_threads);
        header.max_triangles = plan.limits.triangles;
        header.gpu_frame_budget_ms = plan.limits.gpu_frame.map(|budget| budget.as_secs_f64() * 1e3);
        header.device_local_bytes = Some(ctx.buffer_limits.device_local_bytes);
        let progress = BenchProgress::new(plan.configs.len() as u64);
        let mut measured = Measured::default();
        let mut stopped = measure_all(ctx, plan, &plan.configs, false, &progress, &mut measured);
        if stopped.is_none() {
            // After the sweep's frames, not before: lavapipe's timestamps
            // bracket a dispatch until the first frame is drawn, and no
            // longer once a framebuffer is bound (its timestamps are then
            // written at the next flush). The check must see the device
            // in the state the figures were measured in.
            match check_timestamps(ctx) {
                Ok(check) => {
                    header.gpu_timing = check.timing();
                    header.timestamp_check = Some(check);
                    progress.println(&format!("vkskin: bench: {}", clock_line(&check)));
                    stopped = refine(ctx, plan, header.gpu_timing, started, &progress, &mut measured);
                }
                // Lost there, the sweep's rows are still reported (their clock unchecked).
                Err(e) => stopped = Some(("the timestamp check".to_string(), e)),
            }
        }
        let entries = measured.entries;
        progress.clear();
        let lost_during = match stopped {
            None => None,
            Some((config, e)) if device_lost(&e) => Some(config),
            Some((_, e)) => return Err(e),
        };
        let mut results = BenchResults { header, entries };
        results.header.incomplete = lost_during.is_some();
        Ok(BenchRun { results, lost_during })
    })
}

/// Independent trials of the timestamp check; the one whose ratio is
/// smallest decides (and is reported).
const CHECK_TRIALS: usize = 3;

/// The copy kernel over [`CHECK_BYTES`] and twice as many, timestamped,
/// [`CHECK_TRIALS`] times: the trial that brackets least is kept. On
/// lavapipe the timestamps of both copies are a few tens of microseconds of
/// noise, and one trial in a few dozen had the larger copy "take" 1.5 times
/// as long (4.5 times, once), which flipped every GPU figure of that run to
/// the timestamps; a device whose timestamps bracket the work passes every
/// trial.
fn check_timestamps(ctx: &GpuContext) -> anyhow::Result<TimestampCheck> {
    let bytes = bytes_taking(ctx, CHECK_BYTES, CHECK_MAX_BYTES, CHECK_MIN_US)
        .map_err(|e| anyhow!("the timestamp check: {e}"))?;
    let mut kept: Option<TimestampCheck> = None;
    for _ in 0..CHECK_TRIALS {
        let (one_copy_us, two_copies_us) =
            timestamp_check(ctx, bytes, CHECK_RUNS).map_err(|e| anyhow!("the timestamp check: {e}"))?;
        let trial = TimestampCheck { bytes, one_copy_us, two_copies_us };
        if kept.is_none_or(|k| trial.ratio() < k.ratio()) {
            kept = Some(trial);
        }
    }
    Ok(kept.expect("at least one trial"))
}

/// The line saying which clock the GPU figures come from, and why.
fn clock_line(check: &TimestampCheck) -> String {
    let mib = |bytes: u64| bytes as f64 / (1u64 << 20) as f64;
    let measured = format!(
        "a copy of {:.0} MiB timed {:.2}x one of {:.0} MiB ({:.0} vs {:.0} µs)",
        mib(2 * check.bytes),
        check.ratio(),
        mib(check.bytes),
        check.two_copies_us,
        check.one_copy_us
    );
    match check.timing() {
        GpuTiming::Timestamps => {
            format!("GPU figures from GPU timestamps: they bracket the work ({measured})")
        }
        GpuTiming::HostTimed => format!(
            "GPU figures from host-timed submissions: this device's timestamps do not bracket the work \
             ({measured}, under {}x)",
            TimestampCheck::MIN_RATIO
        ),
    }
}

/// Whether `error` comes from a lost GPU device (nothing more can run on it).
fn device_lost(error: &anyhow::Error) -> bool {
    error.chain().any(|e| {
        e.downcast_ref::<GpuError>().is_some_and(GpuError::is_device_lost)
            || e.downcast_ref::<RenderError>()
                .and_then(RenderError::gpu)
                .is_some_and(GpuError::is_device_lost)
    })
}

/// The scene a configuration is measured on: what its pipelines and crowd
/// are built for (a new one is a new scene).
type SceneKey = (usize, u32, InfluenceBlend, PoseEvaluation);

/// A scene being measured: its key, its crowd, its profile and what it measured once.
struct Scene {
    key: SceneKey,
    crowd: Crowd,
    profile: ProfileScene,
    times: SceneTimes,
    /// Why the crowd cannot be skinned into the output at full detail on
    /// this device (its `--detail full` configurations that skin in the
    /// compute pass are skipped, saying this); `None` where it can.
    too_large_whole: Option<String>,
}

/// The entries measured so far, each with the configuration it measured.
#[derive(Default)]
struct Measured {
    configs: Vec<BenchConfig>,
    entries: Vec<BenchEntry>,
}

/// Every configuration of `configs`, scene by scene (the plan keeps a
/// scene's configurations together), appended to `measured` (marked as
/// refinements when `refinement`). If the run stopped early, returns the
/// label of the configuration it stopped in and why.
fn measure_all(
    ctx: &GpuContext,
    plan: &BenchPlan,
    configs: &[BenchConfig],
    refinement: bool,
    progress: &BenchProgress,
    measured: &mut Measured,
) -> Option<(String, anyhow::Error)> {
    measured.entries.reserve(configs.len());
    let mut loaded: Option<(usize, Arc<Model>, Arc<Controller>)> = None;
    let mut scene: Option<Scene> = None;
    // A scene the device cannot hold (e.g. past its largest buffer): its
    // configurations are skipped with a message, the others still run.
    let mut unbuildable: Option<SceneKey> = None;
    let mut current = String::new();
    let result = (|| {
        for config in configs {
            current = plan.label(config);
            progress.start(&current);
            if loaded.as_ref().is_none_or(|(m, ..)| *m != config.model) {
                let (model, controller) = load_model(&plan.models[config.model], &plan.load)?;
                loaded = Some((config.model, model, controller));
            }
            let (_, model, controller) = loaded.as_ref().expect("a model");
            let key = (config.model, config.characters, config.frame.blend, config.frame.pose);
            if unbuildable == Some(key) {
                progress.finish();
                continue;
            }
            if scene.as_ref().is_none_or(|s| s.key != key) {
                if let Some(old) = scene.take() {
                    old.profile.destroy(ctx);
                }
                match build_scene(ctx, plan, key, model, controller) {
                    Ok(made) => scene = Some(made),
                    // A lost device is not a scene too big: nothing more can run.
                    Err(SceneError::Fatal(e)) => return Err(e),
                    Err(SceneError::Unbuildable(e)) => {
                        progress.println(&format!("vkskin: bench: skipped {}: {e}", plan.label(config)));
                        unbuildable = Some(key);
                        progress.finish();
                        continue;
                    }
                }
            }
            let scene = scene.as_mut().expect("a scene");
            // Vertex skinning writes no output: it draws full meshes of any crowd.
            let whole = config.frame.detail == DrawDetail::Full
                && config.frame.placement == SkinningPlacement::Compute;
            if let Some(why) = scene.too_large_whole.as_ref().filter(|_| whole) {
                let label = plan.label(config);
                progress.println(&format!(
                    "vkskin: bench: skipped {label}: {why} (its compute skinning measured at its detail levels only)"
                ));
                progress.finish();
                continue;
            }
            let mut entry = measure(ctx, plan, config, model, scene)?;
            entry.refinement = refinement;
            measured.configs.push(*config);
            measured.entries.push(entry);
            progress.finish();
        }
        Ok(())
    })();
    if let Some(s) = scene {
        s.profile.destroy(ctx);
    }
    result.err().map(|e| (current, e))
}

/// Refines each crossover the sweep found between two counts (compute wins
/// at b, not at a, the neighbours a < b) by bisection: compute and vertex
/// at the count halfway, as extra entries, until b - a <= max(1, a / 8) or
/// [`REFINEMENT_STEPS`] steps. A quick run stops when the next step would
/// likely take it past [`QUICK_BUDGET`], and says so. Returns where it
/// stopped early, as `measure_all` does.
fn refine(
    ctx: &GpuContext,
    plan: &BenchPlan,
    timing: GpuTiming,
    started: Instant,
    progress: &BenchProgress,
    measured: &mut Measured,
) -> Option<(String, anyhow::Error)> {
    for _ in 0..REFINEMENT_STEPS {
        let mut next: Vec<BenchConfig> = Vec::new();
        for x in crossovers(&measured.entries, timing) {
            let (Some(b), Some(a)) = (x.characters, x.below) else { continue };
            if b - a <= (a / 8).max(1) {
                continue;
            }
            let mid = a + (b - a) / 2;
            for skinning in [&x.compute, &x.vertex] {
                let Some(i) = measured.entries.iter().position(|e| x.is_series(e, skinning)) else {
                    continue;
                };
                let config = BenchConfig { characters: mid, ..measured.configs[i] };
                if !next.contains(&config) {
                    next.push(config);
                }
            }
        }
        if next.is_empty() {
            return None;
        }
        // A scene's configurations together (compute and vertex share one).
        next.sort_by_key(|c| (c.model, c.characters, format!("{:?}", c.frame.blend)));
        if plan.quick {
            let elapsed = started.elapsed();
            // Each configuration as long as the average so far, half as much again for its scene.
            let per_config = elapsed.div_f64(measured.entries.len().max(1) as f64);
            let expected = per_config.mul_f64(1.5 * next.len() as f64);
            if elapsed + expected > QUICK_BUDGET {
                progress.println(&format!(
                    "vkskin: bench: --quick: the crossover was not refined further ({} more configurations \
                     would take the run past {} s); its verdict names the two counts measured around it",
                    next.len(),
                    QUICK_BUDGET.as_secs()
                ));
                return None;
            }
        }
        progress.extend(next.len() as u64);
        if let Some(stopped) = measure_all(ctx, plan, &next, true, progress, measured) {
            return Some(stopped);
        }
    }
    None
}

/// Why a scene could not be measured.
enum SceneError {
    /// The device cannot hold it: its configurations are skipped.
    Unbuildable(RenderError),
    /// Nothing more can run (a lost device, a failed measurement).
    Fatal(anyhow::Error),
}

/// The crowd and profile of `key`, with what it measures once.
fn build_scene(
    ctx: &GpuContext,
    plan: &BenchPlan,
    key: SceneKey,
    model: &Arc<Model>,
    controller: &Arc<Controller>,
) -> Result<Scene, SceneError> {
    let (_, characters, blend, pose) = key;
    // Before the crowd is posed: a scene past the device's buffer limits at
    // the levels the camera picks is skipped. One that fits only there
    // (its full detail past the output buffers or the heap) is measured
    // without its full-detail reference (`scene_times`) and configurations.
    let fits =
        |detail| crate::render::crowd_fit::check_crowd_fits(model, characters, detail, &ctx.buffer_limits);
    fits(DrawDetail::Auto).map_err(|e| SceneError::Unbuildable(e.into()))?;
    let too_large_whole = fits(DrawDetail::Full).err().map(|e| e.to_string());
    // A crowd that cannot be posed or framed is skipped as a scene the
    // device cannot hold is: the other models still run.
    // The crowd's threads are a pool this thread works in, so the frame's
    // per-character recording runs on them too.
    // The renderer follows the crowd onto the GPU (`FramePoses::gpu_pose`).
    let threads = plan.pose_threads as usize;
    let gpu = pose == PoseEvaluation::Gpu;
    let grid =
        Crowd::on_grid(model.rig.clone(), controller.clone(), characters as usize, PROFILE_FPS, threads, gpu)
            .map_err(|e| {
                SceneError::Unbuildable(RenderError::Pose { file: model.file.clone(), source: e.into() })
            })?;
    let (mut crowd, bounds) =
        grid.ok_or_else(|| SceneError::Unbuildable(RenderError::NothingToDraw { file: model.file.clone() }))?;
    let extent = if plan.quick { QUICK_EXTENT } else { EXTENT };
    let mut profile = match ProfileScene::new(ctx, model.clone(), characters, blend, extent, bounds) {
        Ok(made) => made,
        Err(e) if e.gpu().is_some_and(|g| g.is_device_lost()) => return Err(SceneError::Fatal(e.into())),
        Err(e) => return Err(SceneError::Unbuildable(e)),
    };
    profile.set_detail_limits(plan.limits);
    match scene_times(ctx, &mut profile, &mut crowd, plan.frames, too_large_whole.is_none()) {
        Ok(times) => Ok(Scene { key, crowd, profile, times, too_large_whole }),
        Err(e) => {
            profile.destroy(ctx);
            Err(SceneError::Fatal(e))
        }
    }
}

/// A model and the controller its crowd plays: its own (sidecar or
/// built-in), else its first clip looping (the rest pose without clips).
pub(crate) fn load_model(
    which: &BenchModel,
    load: &LoadOptions,
) -> anyhow::Result<(Arc<Model>, Arc<Controller>)> {
    load_model_with(which, None, load)
}

/// [`load_model`] with `controller`, when given, instead of the model's own.
pub(crate) fn load_model_with(
    which: &BenchModel,
    controller: Option<&Path>,
    load: &LoadOptions,
) -> anyhow::Result<(Arc<Model>, Arc<Controller>)> {
    let (model, path) = match which {
        BenchModel::BuiltIn => (asset::load_default_character_with(load)?, None),
        BenchModel::File(path) => (asset::load_with(path, load)?, Some(path.as_path())),
    };
    let controller = match find_controller(&model.rig, path, controller, load.max_memory)? {
        Some((c, _)) => c,
        None => Controller::single_clip(&model, (!model.clips.is_empty()).then_some(0), true)?,
    };
    Ok((Arc::new(model), Arc::new(controller)))
}

/// What a scene measures once for all its configurations: the copy
/// kernel over the bytes its skin pass moves at full detail (timestamps,
/// and host-timed) and its skin dispatch host-timed, both where the crowd
/// fits at full detail; its staged palette copy host-timed next to a
/// plain buffer copy of the same bytes.
#[derive(Debug, Clone)]
struct SceneTimes {
    copy: Option<Stat>,
    copy_wall: Option<Stat>,
    skin_wall: Option<Stat>,
    staged_copy_wall: Option<Stat>,
    buffer_copy_wall: Option<Stat>,
    /// The host-timed runs behind `skin_wall` and `staged_copy_wall`, in order.
    skin_wall_samples: Vec<f64>,
    staged_copy_wall_samples: Vec<f64>,
}

/// The scene's own measurements; the full-detail ones (the copy kernel,
/// the dispatch skinning every vertex) only with `whole`.
fn scene_times(
    ctx: &GpuContext,
    scene: &mut ProfileScene,
    crowd: &mut Crowd,
    runs: u32,
    whole: bool,
) -> anyhow::Result<SceneTimes> {
    let (copy, copy_wall, skin_wall, skin_wall_samples) = if whole {
        let (read, written) = scene.skin_traffic();
        let kernel = CopyKernel::new(ctx, read + written)?;
        // One untimed run first (first-touch of the buffers).
        let times = kernel.measure(ctx, runs as usize + 1);
        let walls = times.is_ok().then(|| kernel.measure_wall(ctx, runs as usize));
        kernel.destroy(ctx);
        let mut times = times?;
        let copy = Stat::from_samples(&mut times[1..]).map_err(|e| anyhow!("copy kernel: {e}"))?;
        // Every vertex, the copy kernel's bytes: the scene's measure of the
        // pass (a configuration at coarser levels times its own, `measure`).
        let skin_wall_samples = scene.measure_skin_wall(ctx, crowd, runs, DrawDetail::Full)?;
        let skin_wall = wall_stat(Some(skin_wall_samples.clone()))?;
        (Some(copy), wall_stat(walls.transpose()?)?, skin_wall, skin_wall_samples)
    } else {
        (None, None, None, Vec::new())
    };
    let (staged, palette_bytes) = scene.measure_staged_copy_wall(ctx, crowd, runs)?;
    let staged_copy_wall_samples = if palette_bytes > 0 { staged } else { Vec::new() };
    let staged_copy_wall = wall_stat((palette_bytes > 0).then(|| staged_copy_wall_samples.clone()))?;
    let plain = measure_buffer_copy_wall(ctx, palette_bytes, runs as usize)?;
    let buffer_copy_wall = wall_stat((palette_bytes > 0).then_some(plain))?;
    Ok(SceneTimes {
        copy,
        copy_wall,
        skin_wall,
        staged_copy_wall,
        buffer_copy_wall,
        skin_wall_samples,
        staged_copy_wall_samples,
    })
}

/// The median of a count over the measured frames (the upper one of an
/// even number); 0 without frames.
fn median_count(samples: &[FrameSample], count: fn(&FrameSample) -> u64) -> u64 {
    let mut counts: Vec<u64> = samples.iter().map(count).collect();
    counts.sort_unstable();
    counts.get(counts.len() / 2).copied().unwrap_or(0)
}

/// The median frame's pixel error where a detail limit coarsened the
/// levels past half a pixel (`None` where it did not).
fn median_pixel_error(samples: &[FrameSample]) -> Option<f32> {
    let mut errors: Vec<f32> = samples.iter().map(|s| s.pixel_error).collect();
    errors.sort_unstable_by(f32::total_cmp);
    errors.get(errors.len() / 2).copied().filter(|&e| e > PIXEL_ERROR)
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
    scene: &mut Scene,
) -> anyhow::Result<BenchEntry> {
    let Scene { crowd, profile, times, .. } = scene;
    let vertices = model.meshes.iter().flat_map(|m| &m.primitives).map(|p| p.vertex_count() as u64).sum();
    profile.configure(&config.frame);
    crowd.set_paused(config.paused);
    let samples = profile.measure(ctx, crowd, plan.warmup_frames, plan.frames)?;
    // Read now: the host-timed frames below carry no timestamps to steer by.
    let gpu_frame_cost = profile.gpu_frame_cost();
    // The same frames timed by the host too: the header's check says which clock is read.
    let frame_wall_samples = profile.measure_frame_wall(ctx, crowd, plan.frame_wall_runs)?;
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
    let gpu_posed = config.frame.pose == PoseEvaluation::Gpu;
    let skinned = median_count(&samples, |s| s.skinned_vertices);
    let (read, written) = profile.skin_traffic();
    let compute = config.frame.placement == SkinningPlacement::Compute;
    // At coarser levels the dispatch skins less than the scene's measure
    // (every vertex): this configuration times its own.
    let (skin_wall, skin_wall_samples) = if compute && config.frame.detail == DrawDetail::Auto {
        let samples = profile.measure_skin_wall(ctx, crowd, plan.frames, DrawDetail::Auto)?;
        (wall_stat(Some(samples.clone()))?, samples)
    } else {
        (times.skin_wall, times.skin_wall_samples.clone())
    };
    let per_frame = |f: &dyn Fn(&FrameSample) -> f64| samples.iter().map(f).collect::<Vec<f64>>();
    let kept = EntrySamples {
        cpu_pose_us: per_frame(&|s| s.cpu_pose_us),
        gpu_frame_us: per_frame(&|s| s.gpu.frame_us),
        gpu_skin_us: if compute { per_frame(&|s| s.gpu.skin_us) } else { Vec::new() },
        gpu_upload_us: per_frame(&|s| s.gpu.upload_us),
        frame_wall_us: frame_wall_samples.clone(),
        skin_wall_us: if compute { skin_wall_samples } else { Vec::new() },
        staged_copy_wall_us: times.staged_copy_wall_samples.clone(),
    };
    Ok(BenchEntry {
        model: plan.models[config.model].label(),
        characters: config.characters,
        vertices,
        joints: model.palette_len() as u32,
        passes: config.frame.passes.count(),
        skinning: config.frame.mode().name().to_string(),
        dqs_split: config.frame.blend.split().map(|s| s.name().to_string()),
        upload: config.frame.upload.name().to_string(),
        paused: config.paused,
        frames: plan.frames,
        cpu_pose_us: stat(&|s| s.cpu_pose_us, "pose")?,
        cpu_palette_write_us: stat(&|s| s.cpu_palette_write_us, "palette write")?,
        palette_bytes: median_count(&samples, |s| s.palette_bytes),
        skin_bytes: read + written,
        gpu_us,
        copy_kernel_us: times.copy,
        copy_kernel_wall_us: times.copy_wall,
        skin_wall_us: if compute { skin_wall } else { None },
        staged_copy_wall_us: times.staged_copy_wall,
        buffer_copy_wall_us: times.buffer_copy_wall,
        frame_wall_us: wall_stat(Some(frame_wall_samples))?,
        refinement: false,
        pose: gpu_posed.then(|| config.frame.pose.name().to_string()),
        playback_bytes: gpu_posed.then(|| median_count(&samples, |s| s.playback_bytes)),
        gpu_pose_us: if gpu_posed { Some(stat(&|s| s.gpu.pose_us, "pose pass")?) } else { None },
        detail: (config.frame.detail == DrawDetail::Full).then(|| config.frame.detail.name().to_string()),
        triangles: Some(median_count(&samples, |s| s.triangles)),
        shadow_triangles: (config.frame.passes == PassSetup::ShadowCascades)
            .then(|| median_count(&samples, |s| s.shadow_triangles)),
        skinned_vertices: (compute && skinned < vertices * u64::from(config.characters)).then_some(skinned),
        posed_characters: Some(median_count(&samples, |s| s.posed_characters)),
        pixel_error: median_pixel_error(&samples),
        gpu_frame_cost: gpu_frame_cost.map(GpuFrameCost::from),
        device_bytes: Some(ctx.allocated_bytes()),
        samples: kept,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::report::test_data::{entry, scratch};
    use crate::profiler::report::{FRAME_TIME_PLOT, read_json};

    #[test]
    fn a_run_cut_short_reports_its_completed_rows_in_one_line() {
        let out = scratch("lost_run");
        std::fs::create_dir_all(&out).unwrap();
        let mut header = BenchHeader::new("llvmpipe", "Mesa", true, "vkskin bench --quick");
        header.incomplete = true;
        let results = BenchResults { header, entries: vec![entry(1, 1, "compute", "inplace", false)] };
        let config = "built-in, 16 characters, compute, inplace, 1 pass".to_string();
        let run = BenchRun { results, lost_during: Some(config.clone()) };
        let line = run.report(&out).unwrap_err().to_string();
        let json = out.join(RESULTS_FILE);
        assert_eq!(
            line,
            format!("the GPU device was lost during {config}; {} holds the 1 completed row", json.display())
        );
        assert_eq!(read_json(&json).unwrap(), run.results);
        assert!(out.join(FRAME_TIME_PLOT).exists(), "the completed row is plotted");
        // A plot not written is named too.
        std::fs::remove_file(out.join(FRAME_TIME_PLOT)).unwrap();
        std::fs::create_dir(out.join(FRAME_TIME_PLOT)).unwrap();
        let line = run.report(&out).unwrap_err().to_string();
        assert!(line.contains("holds the 1 completed row; "), "{line}");
        assert!(line.contains(&format!("{} was not written", out.join(FRAME_TIME_PLOT).display())), "{line}");
        // A complete run is no error.
        let done = BenchRun { results: run.results.clone(), lost_during: None };
        assert!(done.report(&scratch("complete_run")).is_ok());
    }
}
