//! `vkskin bench --cpu-only`: the CPU side of a crowd frame at scale, with
//! no GPU at all: every character's controller, clips sampled, blend,
//! events, root motion, local-to-model and palette write, for 1,000 to
//! 100,000 characters, on one thread and on every core, every character
//! evaluated each frame ("all-near"), under the default distance mix
//! ("lod": 10 % every frame, 30 % every 2nd, 60 % every 4th, staggered),
//! and placed on `bench`'s grid, seen by a camera at its edge ("seen":
//! each character's rate from the renderer's foresight, as `render` and
//! `view` pose a crowd: near ones every frame, far ones less often, those
//! out of view not at all).
//! Per entry: the frame time, nanoseconds per joint on one core, characters
//! one core updates in a 60 Hz frame, and the heap each character keeps
//! (the rig is shared, so it is measured apart). Written as
//! `DIR/results.json` (`kind: "cpu-only"`: the usual `model`,
//! `characters`, `joints`, `cpu_pose_us`; no GPU fields) and a table.

use super::plan::BenchModel;
use super::report::Stat;
use super::report::utc::iso8601_utc;
use super::runner::load_model_with;
use crate::anim::Sight;
use crate::anim::framing::Bounds;
use crate::asset::LoadOptions;
use crate::character::{Crowd, EvaluationRate, ParameterValue};
use crate::render::DrawDetail;
use crate::render::camera::{Camera, DEFAULT_FOV_Y};
use crate::render::detail_levels::DetailLevels;
use crate::render::draw_order::{DrawOrder, LevelView};
use crate::render::frame_settings::{Choice, PoseEvaluation};
use nalgebra::{Point3, Vector3};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

/// The `kind` of a CPU-only results file.
pub const CPU_ONLY_KIND: &str = "cpu-only";
/// One 60 Hz frame, microseconds.
const FRAME_60HZ_US: f64 = 1e6 / 60.0;
/// Frames every crowd plays before it is timed (transitions settle,
/// caches warm).
const WARMUP_FRAMES: u32 = 8;

/// How the characters of a crowd are spread over evaluation rates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LodMix {
    /// Every character evaluated every frame.
    AllNear,
    /// 10 % near (every frame), 30 % mid (every 2nd), 60 % far (every 4th).
    Lod,
    /// On `bench`'s grid (spaced by the footprint), seen by a camera at eye
    /// height at the grid's edge looking across it (1280x720): rates by
    /// the renderer's foresight (`Renderer::foresee`).
    Seen,
}

impl LodMix {
    /// The rate of character `i` of a crowd (the mix spread evenly over
    /// the crowd, so every slice of it has the same share).
    fn rate(self, i: usize) -> EvaluationRate {
        match (self, i % 10) {
            // Seen: until the foresight sets it.
            (LodMix::AllNear | LodMix::Seen, _) | (LodMix::Lod, 0) => EvaluationRate::EveryFrame,
            (LodMix::Lod, 1..=3) => EvaluationRate::Every2nd,
            (LodMix::Lod, _) => EvaluationRate::Every4th,
        }
    }

    fn name(self) -> &'static str {
        match self {
            LodMix::AllNear => "all-near",
            LodMix::Lod => "lod",
            LodMix::Seen => "seen",
        }
    }
}

/// How a camera at eye height at the edge of `crowd`'s grid (`grid`: its
/// bounds), looking across it at 1280x720, sees each character, whose
/// poses lie within `sphere` (`DetailLevels::bounds`): what the renderer
/// foresees with the same camera.
fn seen_from_the_edge(crowd: &Crowd, grid: Bounds, sphere: [f32; 4]) -> Vec<Sight> {
    let (lo, hi) = (Vector3::from(grid.0), Vector3::from(grid.1));
    let centre = (lo + hi) * 0.5;
    let eye_height = lo.y + 0.9 * (hi.y - lo.y);
    let eye = Point3::new(centre.x, eye_height, hi.z + 1.0);
    let camera = Camera {
        eye,
        target: Point3::new(centre.x, eye_height * 0.8, centre.z),
        up: Vector3::y(),
        fov_y: DEFAULT_FOV_Y,
        aspect: 1280.0 / 720.0,
        near: 0.1,
        far: 2.0 * (hi - lo).norm() + 10.0,
        lens_shift: 0.0,
    };
    let n = crowd.len() as u32;
    let mut order = DrawOrder::new(n, 0, &[(0, n)]);
    let mut sight = vec![Sight::Unseen; crowd.len()];
    order.place_and_foresee(crowd, sphere, &LevelView::new(&camera, 720), DrawDetail::Auto, &mut sight);
    sight
}

/// The most threads `--threads` may ask for.
pub const MAX_THREADS: usize = 1024;

/// What to measure.
#[derive(Debug, Clone)]
pub struct CpuScalePlan {
    /// Models (the built-in character without any).
    pub models: Vec<BenchModel>,
    /// Crowd sizes.
    pub characters: Vec<u32>,
    /// Timed frames per entry.
    pub frames: u32,
    /// Thread counts, ascending, 1 first (by default 1, then every core
    /// when there is more than one; see `with_threads`).
    pub threads: Vec<usize>,
    /// Where poses are evaluated: `Cpu` times the whole update, `Gpu` the
    /// CPU side of a GPU-posed crowd.
    pub poses: Vec<PoseEvaluation>,
    /// The controller every model's crowd plays (`None`: each model's own,
    /// as `bench` finds it: a sidecar `MODEL.ron`, the built-in's, or clip 0).
    pub controller: Option<PathBuf>,
    /// Output folder.
    pub out: PathBuf,
    /// A `--quick` run.
    pub quick: bool,
    /// The command line.
    pub command: String,
}

impl CpuScalePlan {
    /// The plan for `models` (paths; none: the built-in character),
    /// `characters` (none: 1,000, 10,000 and 100,000; quick: 1,000 and
    /// 10,000) and `frames` (none: 30; quick: 10).
    pub fn new(
        models: &[String],
        characters: &[u32],
        frames: Option<u32>,
        quick: bool,
        out: PathBuf,
        command: String,
    ) -> Self {
        let models = if models.is_empty() {
            vec![BenchModel::BuiltIn]
        } else {
            models.iter().map(|m| BenchModel::File(PathBuf::from(m))).collect()
        };
        let characters = match (characters.is_empty(), quick) {
            (false, _) => characters.to_vec(),
            (true, false) => vec![1_000, 10_000, 100_000],
            (true, true) => vec![1_000, 10_000],
        };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = if cores > 1 { vec![1, cores] } else { vec![1] };
        let frames = frames.unwrap_or(if quick { 10 } else { 30 });
        let poses = vec![PoseEvaluation::Cpu];
        CpuScalePlan { models, characters, frames, threads, poses, controller: None, out, quick, command }
    }

    /// Times `threads` (none: the default) and one thread, ascending,
    /// each count once: the efficiency lines compare each with one.
    pub fn with_threads(mut self, threads: &[usize]) -> Self {
        if !threads.is_empty() {
            self.threads = std::iter::once(1).chain(threads.iter().copied()).collect();
            self.threads.sort_unstable();
            self.threads.dedup();
        }
        self
    }
}

/// Where and when it ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CpuScaleHeader {
    /// Always [`CPU_ONLY_KIND`].
    pub kind: String,
    /// The CPU's model name (`/proc/cpuinfo`), or "unknown".
    pub cpu: String,
    /// CPUs the process may use (hardware threads: two of one core
    /// count twice).
    pub cores: usize,
    /// The physical cores among them (`cpu_topology`: hardware threads
    /// of one core count once); absent where the system does not say,
    /// and in files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical_cores: Option<usize>,
    /// The instructions the eight-lane kernels ran as (`Simd::name`:
    /// `avx512`, `avx2` or `portable`; empty in files written before it
    /// was recorded).
    #[serde(default)]
    pub simd: String,
    /// UTC, ISO 8601.
    pub date: String,
    /// The short commit of the build.
    pub commit: String,
    /// Whether it was a `--quick` run.
    pub quick: bool,
    /// The command line.
    pub command: String,
}

/// One crowd at one thread count and LOD mix.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CpuScaleEntry {
    /// The model, as named on the command line ("built-in" without one).
    pub model: String,
    /// Characters in the crowd.
    pub characters: u32,
    /// Joints of one character: every node of its skeleton (each goes
    /// through local-to-model).
    pub joints: u32,
    /// Of those, the joints its skins name (each distinct joint once):
    /// the count "ns per joint" targets usually mean (RobotExpressive: 74
    /// nodes, 43 skin joints). Absent in files written before it existed.
    #[serde(default)]
    pub skin_joints: u32,
    /// Threads the update ran on.
    pub threads: u32,
    /// `all-near` or `lod` (see the module documentation).
    pub lod: LodMix,
    /// `"gpu"` when the crowd was posed on the GPU (`--pose gpu`: the
    /// figures are its CPU side); absent when the CPU posed it, as in
    /// `bench`'s GPU entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pose: Option<String>,
    /// Timed frames.
    pub frames: u32,
    /// Wall time of one frame's update of every character.
    pub cpu_pose_us: Stat,
    /// The median frame's CPU time per joint per character: wall time
    /// times threads, over characters times joints.
    pub ns_per_joint: f64,
    /// The same per skin joint (`skin_joints`; 0 for a rig without skins).
    #[serde(default)]
    pub ns_per_skin_joint: f64,
    /// Characters one core updates in a 60 Hz frame (16.7 ms), at the median.
    pub characters_per_core_frame: f64,
    /// Characters posed per frame (the median over the timed frames;
    /// absent in older files).
    #[serde(default)]
    pub posed_per_frame: f64,
    /// Heap bytes each character keeps (the shared rig and controller not
    /// counted; 0 where the allocator cannot say).
    pub bytes_per_character: f64,
    /// Of those, its palette (joints x 64 bytes).
    pub palette_bytes_per_character: u64,
}

/// A CPU-only run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CpuScaleResults {
    /// Where and when.
    pub header: CpuScaleHeader,
    /// One per model, character count, LOD mix and thread count.
    pub entries: Vec<CpuScaleEntry>,
}

/// Measures `plan`, printing each entry as a table row as it completes.
pub fn run_cpu_scale(plan: &CpuScalePlan, load: &LoadOptions) -> anyhow::Result<CpuScaleResults> {
    let header = CpuScaleHeader {
        kind: CPU_ONLY_KIND.to_string(),
        cpu: cpu_name(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        physical_cores: super::cpu_topology::physical_cores(),
        simd: crate::anim::lanes8::Simd::detect().name().to_string(),
        date: iso8601_utc(SystemTime::now()),
        commit: env!("VKSKIN_GIT_COMMIT").to_string(),
        quick: plan.quick,
        command: plan.command.clone(),
    };
    println!("{}", table_header());
    let mut entries = Vec::new();
    for which in &plan.models {
        let (model, controller) = load_model_with(which, plan.controller.as_deref(), load)?;
        let joints = model.skeleton.len() as u32;
        let skin_joints = model.skin_joint_nodes().len() as u32;
        // The sphere the renderer culls by, made once per model.
        let mut sphere = None;
        for &characters in &plan.characters {
            let mixes = [LodMix::AllNear, LodMix::Lod, LodMix::Seen];
            for (&pose, lod) in plan.poses.iter().flat_map(|p| mixes.map(|l| (p, l))) {
                for &threads in &plan.threads {
                    let n = characters as usize;
                    let heap_before = crate::heap::in_use_bytes();
                    let (mut crowd, grid) = match lod {
                        LodMix::Seen => {
                            // Posed on the CPU until the heap is measured: a
                            // GPU pose's clips are the rig's, not a character's.
                            let on_grid = Crowd::on_grid(
                                model.rig.clone(),
                                controller.clone(),
                                n,
                                60.0,
                                threads,
                                false,
                            )?;
                            // A rig that draws nothing is seen by no camera.
                            let Some((crowd, grid)) = on_grid else { continue };
                            (crowd, Some(grid))
                        }
                        _ => {
                            (Crowd::new(model.rig.clone(), controller.clone(), n, 1.0, 60.0, threads)?, None)
                        }
                    };
                    let heap_after = crate::heap::in_use_bytes();
                    crowd.set_pose_on_gpu(pose == PoseEvaluation::Gpu)?;
                    let speed = controller.parameter("speed");
                    for i in 0..characters as usize {
                        let c = crowd.character_mut(i);
                        c.set_evaluation_rate(lod.rate(i));
                        // Idle, walk, walk/run blends and run: the whole
                        // locomotion range at once.
                        if let Some(p) = speed {
                            let _ = c.set(p, ParameterValue::Float((i % 9) as f32 * 0.5));
                        }
                    }
                    if let Some(grid) = grid {
                        let sphere = *sphere.get_or_insert_with(|| DetailLevels::build(&model).bounds);
                        crowd.foresee(&seen_from_the_edge(&crowd, grid, sphere));
                    }
                    let mut times = Vec::with_capacity(plan.frames as usize);
                    let mut posed = Vec::with_capacity(plan.frames as usize);
                    for frame in 0..WARMUP_FRAMES + plan.frames {
                        let start = Instant::now();
                        crowd.frame(frame)?;
                        if frame >= WARMUP_FRAMES {
                            times.push(start.elapsed().as_secs_f64() * 1e6);
                            posed.push(crowd.posed() as f64);
                        }
                    }
                    let stat = Stat::from_samples(&mut times)?;
                    let posed_per_frame = Stat::from_samples(&mut posed)?.median;
                    let core_us = stat.median * threads as f64;
                    let per_character_us = core_us / f64::from(characters);
                    let entry = CpuScaleEntry {
                        model: which.label(),
                        characters,
                        joints,
                        skin_joints,
                        threads: threads as u32,
                        lod,
                        pose: (pose == PoseEvaluation::Gpu).then(|| pose.name().to_string()),
                        frames: plan.frames,
                        cpu_pose_us: stat,
                        ns_per_joint: per_character_us * 1e3 / f64::from(joints.max(1)),
                        ns_per_skin_joint: match skin_joints {
                            0 => 0.0,
                            n => per_character_us * 1e3 / f64::from(n),
                        },
                        characters_per_core_frame: FRAME_60HZ_US / per_character_us,
                        posed_per_frame,
                        bytes_per_character: heap_after.saturating_sub(heap_before) as f64
                            / f64::from(characters),
                        palette_bytes_per_character: model.rig.palette_len() as u64 * 64,
                    };
                    println!("{}", table_row(&entry));
                    entries.push(entry);
                    drop(crowd);
                    crate::heap::return_free_pages();
                }
            }
        }
    }
    // The cores the threads run on: the physical ones, or fewer where
    // the process may use fewer (a CPU quota).
    let cores = header.physical_cores.map(|physical| physical.min(header.cores));
    let results = CpuScaleResults { header, entries };
    for line in scaling_lines(&results.entries, cores) {
        println!("{line}");
    }
    Ok(results)
}

/// Writes `DIR/results.json`.
pub fn write(out: &Path, results: &CpuScaleResults) -> anyhow::Result<()> {
    let path = out.join(super::report::RESULTS_FILE);
    let text = serde_json::to_string_pretty(results)? + "\n";
    crate::atomic_file::write(&path, text.as_bytes())?;
    println!("wrote {}", path.display());
    Ok(())
}

fn table_header() -> String {
    format!(
        "{:<12} {:>10} {:>6} {:>8} {:>4} {:>7} {:>11} {:>10} {:>14} {:>14} {:>12}",
        "model",
        "characters",
        "joints",
        "lod",
        "pose",
        "threads",
        "frame ms",
        "ns/joint",
        "ns/skin joint",
        "chars/core/60Hz",
        "heap/char"
    )
}

fn table_row(e: &CpuScaleEntry) -> String {
    let model = Path::new(&e.model).file_stem().map_or(e.model.clone(), |s| s.to_string_lossy().into_owned());
    format!(
        "{:<12} {:>10} {:>6} {:>8} {:>4} {:>7} {:>11.2} {:>10.1} {:>14.1} {:>14.0} {:>10.0} B",
        model,
        e.characters,
        e.joints,
        e.lod.name(),
        e.pose.as_deref().unwrap_or("cpu"),
        e.threads,
        e.cpu_pose_us.median / 1e3,
        e.ns_per_joint,
        e.ns_per_skin_joint,
        e.characters_per_core_frame,
        e.bytes_per_character
    )
}

/// One line per crowd measured on one thread and on more: the speed-up
/// and the efficiency (speed-up over threads; with more threads than
/// `cores`, where known, they share them, which bounds the speed-up),
/// the LOD mix's saving, and what is left of the CPU's frame when the
/// GPU poses the crowd.
pub fn scaling_lines(entries: &[CpuScaleEntry], cores: Option<usize>) -> Vec<String> {
    let mut lines = Vec::new();
    for one in entries.iter().filter(|e| e.threads == 1) {
        let same = |e: &&CpuScaleEntry| {
            e.model == one.model && e.characters == one.characters && e.lod == one.lod && e.pose == one.pose
        };
        for many in entries.iter().filter(same).filter(|e| e.threads > 1) {
            let speedup = one.cpu_pose_us.median / many.cpu_pose_us.median;
            let shared = match cores {
                Some(cores) if many.threads as usize > cores => {
                    format!(
                        "; {} threads share {cores} core{}",
                        many.threads,
                        if cores == 1 { "" } else { "s" }
                    )
                }
                _ => String::new(),
            };
            lines.push(format!(
                "{} x{} {}: {} threads {speedup:.2}x one ({:.0} % efficiency{shared})",
                one.model,
                one.characters,
                one.lod.name(),
                many.threads,
                100.0 * speedup / f64::from(many.threads)
            ));
        }
        if one.lod != LodMix::AllNear {
            let near = entries.iter().find(|e| {
                e.model == one.model
                    && e.characters == one.characters
                    && e.threads == 1
                    && e.lod == LodMix::AllNear
                    && e.pose == one.pose
            });
            let what = match one.lod {
                LodMix::Seen => "seen from the grid's edge, the crowd",
                _ => "the LOD mix",
            };
            if let Some(near) = near {
                lines.push(format!(
                    "{} x{}: {what} costs {:.0} % of all-near per character on one thread ({:.0} % of the characters posed per frame)",
                    one.model,
                    one.characters,
                    100.0 * one.cpu_pose_us.median / near.cpu_pose_us.median,
                    100.0 * one.posed_per_frame / f64::from(one.characters.max(1))
                ));
            }
        }
    }
    for gpu in entries.iter().filter(|e| e.pose.is_some()) {
        let cpu = entries.iter().find(|e| {
            e.pose.is_none()
                && e.model == gpu.model
                && e.characters == gpu.characters
                && e.lod == gpu.lod
                && e.threads == gpu.threads
        });
        if let Some(cpu) = cpu {
            lines.push(format!(
                "{} x{} {}, {} thread{}: posed on the GPU, the CPU's frame is {:.2} ms ({:.0} % of posing on the CPU, {:.2} ms)",
                gpu.model,
                gpu.characters,
                gpu.lod.name(),
                gpu.threads,
                if gpu.threads == 1 { "" } else { "s" },
                gpu.cpu_pose_us.median / 1e3,
                100.0 * gpu.cpu_pose_us.median / cpu.cpu_pose_us.median,
                cpu.cpu_pose_us.median / 1e3
            ));
        }
    }
    lines
}

/// The CPU's model name, as Linux reports it.
fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, name)| name.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".to_string())
}
