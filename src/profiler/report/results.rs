//! The data model of `DIR/results.json` (a contract, see DESIGN.md "The bench
//! results"): a header naming the machine and the build, then one entry per
//! configuration, with the figures derived from an entry.

use super::{Stat, utc};
use crate::render::gpu_frame_budget::FrameCost;
use serde::{Deserialize, Serialize};
use std::time::SystemTime;

/// Everything one `vkskin bench` run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchResults {
    /// Where and when it ran.
    pub header: BenchHeader,
    /// One per configuration, in the order they ran.
    pub entries: Vec<BenchEntry>,
}

/// Where and when the results were measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchHeader {
    /// The Vulkan device's name (e.g. "llvmpipe (LLVM 15.0.6, 256 bits)").
    pub device: String,
    /// The driver's name and version as the device reports them.
    pub driver: String,
    /// When the run started: UTC, ISO 8601 (`2026-11-30T18:28:45Z`).
    pub date: String,
    /// The short commit of the build ("unknown" outside a git checkout).
    /// Written as `commit`, the name DESIGN.md gives it.
    #[serde(rename = "commit", alias = "git_commit")]
    pub git_commit: String,
    /// Whether it was a `--quick` run.
    pub quick: bool,
    /// The command line that produced the results.
    pub command: String,
    /// The run stopped before its last configuration (the GPU device was
    /// lost): `entries` holds the configurations completed before. Written
    /// only when true, so complete files read as before, and files from
    /// before this field read as complete.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub incomplete: bool,
    /// The results format: [`RESULTS_VERSION`] when written by this build;
    /// files from before the field read as 1.
    #[serde(default = "version_one")]
    pub version: u32,
    /// Which clock the table, plots and verdicts read GPU figures from on
    /// this device ([`GpuTiming`]); files from before the field read as
    /// timestamps, the only figures they had.
    #[serde(default)]
    pub gpu_timing: GpuTiming,
    /// The measurement that decided `gpu_timing`, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_check: Option<TimestampCheck>,
    /// Threads the crowd's pose update ran on (`cpu_pose_us` is the time
    /// of all of them together); absent in files from before the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pose_threads: Option<u32>,
    /// The device's largest device-local memory heap, bytes (what a crowd
    /// must fit; absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_local_bytes: Option<u64>,
    /// The most triangles the characters drew in a frame, every pass
    /// together (`--max-triangles`); absent without a limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_triangles: Option<u64>,
    /// The GPU frame budget the crowds were drawn within, milliseconds
    /// (`--gpu-frame-budget`); absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_frame_budget_ms: Option<f64>,
}

/// A frame's GPU time as the GPU frame budget measured it (the entry's
/// `gpu_frame_cost`): `fixed_us` whatever the characters drew, plus
/// `per_triangle_ns` for each triangle, every pass counted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GpuFrameCost {
    /// Microseconds a frame takes whatever the triangles.
    pub fixed_us: f64,
    /// Nanoseconds each triangle drawn adds.
    pub per_triangle_ns: f64,
}

impl From<FrameCost> for GpuFrameCost {
    fn from(cost: FrameCost) -> Self {
        GpuFrameCost { fixed_us: cost.fixed_us, per_triangle_ns: cost.per_triangle_us * 1e3 }
    }
}

impl From<GpuFrameCost> for FrameCost {
    fn from(cost: GpuFrameCost) -> Self {
        FrameCost { fixed_us: cost.fixed_us, per_triangle_us: cost.per_triangle_ns / 1e3 }
    }
}

/// An entry's `pixel_error` in JSON: a number, or `"coarsest"` for an
/// infinite one (serde_json would write `null`, read back as absent).
mod pixel_error_json {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    const COARSEST: &str = "coarsest";

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    enum Json {
        Pixels(f32),
        Word(String),
    }

    pub fn serialize<S: Serializer>(error: &Option<f32>, to: S) -> Result<S::Ok, S::Error> {
        match error {
            Some(px) if px.is_finite() => Json::Pixels(*px).serialize(to),
            Some(_) => Json::Word(COARSEST.into()).serialize(to),
            None => to.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(from: D) -> Result<Option<f32>, D::Error> {
        match Option::<Json>::deserialize(from)? {
            Some(Json::Pixels(px)) => Ok(Some(px)),
            Some(Json::Word(w)) if w == COARSEST => Ok(Some(f32::INFINITY)),
            Some(Json::Word(w)) => {
                Err(serde::de::Error::custom(format!("pixel_error: {w:?} is not a number or \"{COARSEST}\"")))
            }
            None => Ok(None),
        }
    }
}

/// The results format this build writes. 2: `version`, `gpu_timing`,
/// `timestamp_check`, and per entry `frame_wall_us`, `refinement` and
/// `samples`.
pub const RESULTS_VERSION: u32 = 2;

fn version_one() -> u32 {
    1
}

/// Where the figures a user reads come from on a device.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GpuTiming {
    /// GPU timestamp queries: they bracket the work on this device.
    #[default]
    Timestamps,
    /// Isolated submissions timed by the host (submit to fence, minus
    /// empty submissions): this device's timestamps do not bracket the
    /// work (lavapipe's compute dispatches).
    HostTimed,
}

impl GpuTiming {
    /// How the figures were timed, for tables and captions.
    pub fn describe(self) -> &'static str {
        match self {
            GpuTiming::Timestamps => "GPU timestamps",
            GpuTiming::HostTimed => {
                "host-timed submissions (this device's timestamps do not bracket the work)"
            }
        }
    }
}

/// Whether a device's timestamps bracket the work: the copy kernel over
/// `bytes` and over twice as many, timestamped. A device whose timestamps
/// bracket the copy takes clearly longer for twice the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TimestampCheck {
    /// Bytes of the smaller copy.
    pub bytes: u64,
    /// Its timestamped median, microseconds.
    pub one_copy_us: f64,
    /// The timestamped median of the copy of `2 * bytes`, microseconds.
    pub two_copies_us: f64,
}

impl TimestampCheck {
    /// Twice the bytes must take at least this many times as long.
    pub const MIN_RATIO: f64 = 1.5;

    /// Whether the timestamps bracket the copy (twice the bytes took at
    /// least [`MIN_RATIO`](Self::MIN_RATIO) times as long).
    pub fn brackets_work(&self) -> bool {
        self.one_copy_us > 0.0 && self.two_copies_us >= Self::MIN_RATIO * self.one_copy_us
    }

    /// How many times as long the copy of twice the bytes took (0 when
    /// the one copy measured nothing).
    pub fn ratio(&self) -> f64 {
        if self.one_copy_us > 0.0 { self.two_copies_us / self.one_copy_us } else { 0.0 }
    }

    /// The timing the check chooses.
    pub fn timing(&self) -> GpuTiming {
        if self.brackets_work() { GpuTiming::Timestamps } else { GpuTiming::HostTimed }
    }
}

impl BenchHeader {
    /// A header stamped now, with this build's commit.
    pub fn new(
        device: impl Into<String>,
        driver: impl Into<String>,
        quick: bool,
        command: impl Into<String>,
    ) -> Self {
        BenchHeader {
            device: device.into(),
            driver: driver.into(),
            date: utc::iso8601_utc(SystemTime::now()),
            git_commit: GIT_COMMIT.to_string(),
            quick,
            command: command.into(),
            incomplete: false,
            version: RESULTS_VERSION,
            gpu_timing: GpuTiming::Timestamps,
            timestamp_check: None,
            pose_threads: None,
            device_local_bytes: None,
            max_triangles: None,
            gpu_frame_budget_ms: None,
        }
    }
}

/// The short commit this binary was built from, embedded by build.rs
/// ("unknown" when it was built outside a git checkout).
pub const GIT_COMMIT: &str = env!("VKSKIN_GIT_COMMIT");

/// GPU time of each phase of a frame, microseconds, from timestamp queries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuPhases {
    /// Palette upload: the staging copy (0 when palettes are read in place).
    pub upload: Stat,
    /// The compute skin pass (0 with vertex skinning, which skins inside
    /// each draw pass).
    pub skin: Stat,
    /// Each draw pass in recording order (depth prepass or shadow cascades
    /// first, the main pass last).
    pub passes: Vec<Stat>,
    /// The whole frame, first timestamp to last.
    pub frame: Stat,
}

/// One configuration's measurements. Field names are the contract's; the
/// ones the issue did not list (`paused`, `cpu_palette_write_us`,
/// `skin_bytes`) are additions, never renames.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchEntry {
    /// The model, as named on the command line ("built-in" without one).
    pub model: String,
    /// Characters in the scene.
    pub characters: u32,
    /// Vertices of one character (every skinned primitive).
    pub vertices: u64,
    /// Skin joints of one character: the entries of its skin palettes
    /// (skins that share a palette counted once).
    pub joints: u32,
    /// Draw passes per frame: 1 (main), 2 (depth prepass + main),
    /// 5 (4 shadow cascades + main).
    pub passes: u32,
    /// "compute", "vertex", "dqs-compute" or "dqs-vertex".
    pub skinning: String,
    /// Dual-quaternion modes: where each skinning matrix was split into a
    /// dual quaternion, "shader" (per influence of every vertex; the
    /// palette holds matrices) or "cpu" (once per joint and frame, in the
    /// palette write; the palette holds dual quaternions). Absent for LBS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dqs_split: Option<String>,
    /// "inplace", "staged" or "dirty".
    pub upload: String,
    /// Timed frames.
    pub frames: u32,
    /// CPU time evaluating every character's pose, per frame.
    pub cpu_pose_us: Stat,
    /// Palette bytes written (and copied, when staged) per frame, the median frame.
    pub palette_bytes: u64,
    /// GPU time per phase.
    pub gpu_us: GpuPhases,
    /// The copy kernel over exactly `skin_bytes`, timed the same way: the
    /// device's practical bandwidth ceiling for the skin pass. Absent where
    /// the crowd at full detail does not fit the device (its frames skin
    /// fewer vertices: nothing there moves `skin_bytes` to compare with).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_kernel_us: Option<Stat>,
    /// Whether every character was paused (no pose changes: `dirty` writes nothing).
    pub paused: bool,
    /// CPU time writing palettes into mapped memory, per frame.
    pub cpu_palette_write_us: Stat,
    /// Bytes the skin pass reads and writes per frame, all characters.
    pub skin_bytes: u64,
    /// The copy kernel timed by the host: isolated submissions minus empty
    /// ones (for drivers whose timestamps do not bracket compute work);
    /// absent when lost in the noise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_kernel_wall_us: Option<Stat>,
    /// The skin dispatch timed the same way (compute skinning only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skin_wall_us: Option<Stat>,
    /// The staged palette copy of every character of the scene (host-visible
    /// staging to device-local, as `staged` upload records it), timed the
    /// same way; measured once per scene, whatever this entry's upload mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staged_copy_wall_us: Option<Stat>,
    /// One plain `vkCmdCopyBuffer` of the same bytes from a host-visible
    /// buffer the host has just rewritten into a device-local one (the
    /// memory the staged copy reads and writes), timed the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_copy_wall_us: Option<Stat>,
    /// The whole frame timed by the host: isolated submissions of the
    /// frame, submit to fence, minus as many empty ones (the frame time on
    /// devices whose timestamps do not bracket the work).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_wall_us: Option<Stat>,
    /// An extra character count the run measured to find where compute and
    /// vertex skinning cross (not one of the sweep's counts).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refinement: bool,
    /// Where the poses were evaluated: `"gpu"` when a compute pass posed
    /// the crowd (`--pose gpu`); absent when the CPU did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pose: Option<String>,
    /// Under a GPU pose: the bytes of playback state (records, clips,
    /// layer weights) uploaded per frame instead of palettes (median).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub playback_bytes: Option<u64>,
    /// Under a GPU pose: the pose dispatch's GPU time (timestamps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_pose_us: Option<Stat>,
    /// `"full"` when every character drew its full mesh (`--detail
    /// full`); absent when distant ones drew coarser levels (the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Triangles the characters drew per pass, at their detail levels
    /// (median over the frames; absent in files from before detail levels).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triangles: Option<u64>,
    /// Triangles the characters drew into the shadow cascades together,
    /// each cascade those whose spheres reach its box (median over the
    /// frames; only with `passes` 5, and absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shadow_triangles: Option<u64>,
    /// Vertices the skin pass skinned per frame, all characters, where
    /// their detail levels left some unskinned (median over the frames);
    /// absent where it skinned every vertex (and in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skinned_vertices: Option<u64>,
    /// Characters the CPU posed per frame (median over the frames): all of
    /// them at full detail, fewer where small ones were posed less often
    /// and unseen ones not at all (absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posed_characters: Option<u64>,
    /// The most pixels by which the characters' levels departed from their
    /// full meshes (median over the frames) where a detail limit
    /// (`--max-triangles`) made them coarser than half a pixel; absent
    /// where it did not. Infinite (`"coarsest"` in JSON, which has no
    /// infinity) where every character drew its coarsest level and was
    /// still over the limit.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "pixel_error_json")]
    pub pixel_error: Option<f32>,
    /// Under a GPU frame budget: what the steering measured this
    /// configuration's frames to cost, once their triangle counts spread
    /// enough to tell the fixed part from the triangles' (absent where
    /// they did not, and in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_frame_cost: Option<GpuFrameCost>,
    /// Device memory the scene held while measured (gpu-allocator's
    /// allocations: skinned output, palettes, records, render and shadow
    /// targets; absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_bytes: Option<u64>,
    /// The per-frame (or per-run) samples the medians above summarise,
    /// kept so that a later run can be compared with this one.
    #[serde(default, skip_serializing_if = "EntrySamples::is_empty")]
    pub samples: EntrySamples,
}

/// The samples behind an entry's statistics, microseconds, in the order
/// measured. Empty in files from before version 2.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EntrySamples {
    /// CPU pose update per timed frame.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_pose_us: Vec<f64>,
    /// GPU frame time (timestamps) per timed frame.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_frame_us: Vec<f64>,
    /// GPU skin pass (timestamps) per timed frame.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_skin_us: Vec<f64>,
    /// GPU palette copy (timestamps) per timed frame.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_upload_us: Vec<f64>,
    /// Host-timed whole frames (`frame_wall_us`) per run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frame_wall_us: Vec<f64>,
    /// Host-timed skin dispatches (`skin_wall_us`) per run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skin_wall_us: Vec<f64>,
    /// Host-timed staged palette copies (`staged_copy_wall_us`) per run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub staged_copy_wall_us: Vec<f64>,
}

impl EntrySamples {
    /// Whether no samples were kept (a file from before version 2).
    pub fn is_empty(&self) -> bool {
        self.cpu_pose_us.is_empty()
            && self.gpu_frame_us.is_empty()
            && self.gpu_skin_us.is_empty()
            && self.gpu_upload_us.is_empty()
            && self.frame_wall_us.is_empty()
            && self.skin_wall_us.is_empty()
            && self.staged_copy_wall_us.is_empty()
    }
}

/// The figures of one entry a user reads, each from the clock the device's
/// [`GpuTiming`] chose, with its samples (empty where the file kept none).
/// The table, the plots, the verdicts and baselines all read these, so no
/// two of them disagree on which figure is the frame time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures<'a> {
    /// The clock the GPU figures below come from.
    pub timing: GpuTiming,
    /// CPU pose update per frame.
    pub cpu_pose: Figure<'a>,
    /// The whole frame on the GPU.
    pub frame: Option<Figure<'a>>,
    /// The compute skin pass (`None` with vertex skinning).
    pub skin: Option<Figure<'a>>,
    /// The palette copy (`None` when nothing is copied: `inplace`).
    pub upload: Option<Figure<'a>>,
    /// The copy kernel over the skin pass's bytes.
    pub copy_kernel: Option<Stat>,
}

/// One figure: its summary and the samples behind it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure<'a> {
    /// Median and p95, microseconds.
    pub stat: Stat,
    /// The samples, microseconds (empty where the file kept none).
    pub samples: &'a [f64],
}

impl BenchEntry {
    /// The figures to read from this entry under `timing` (the header's
    /// [`GpuTiming`]): timestamped figures where timestamps bracket the
    /// work, host-timed ones where they do not.
    pub fn figures(&self, timing: GpuTiming) -> Figures<'_> {
        fn figure(stat: Stat, samples: &[f64]) -> Figure<'_> {
            Figure { stat, samples }
        }
        let s = &self.samples;
        let compute = self.skinning.ends_with("compute");
        let staged = self.upload != "inplace";
        let cpu_pose = figure(self.cpu_pose_us, &s.cpu_pose_us);
        match timing {
            GpuTiming::Timestamps => Figures {
                timing,
                cpu_pose,
                frame: Some(figure(self.gpu_us.frame, &s.gpu_frame_us)),
                skin: compute.then(|| figure(self.gpu_us.skin, &s.gpu_skin_us)),
                upload: staged.then(|| figure(self.gpu_us.upload, &s.gpu_upload_us)),
                copy_kernel: self.copy_kernel_us.filter(|_| self.skins_every_vertex()),
            },
            GpuTiming::HostTimed => Figures {
                timing,
                cpu_pose,
                frame: self.frame_wall_us.map(|w| figure(w, &s.frame_wall_us)),
                skin: self.skin_wall_us.filter(|_| compute).map(|w| figure(w, &s.skin_wall_us)),
                upload: self
                    .staged_copy_wall_us
                    .filter(|_| staged && self.palette_bytes > 0)
                    .map(|w| figure(w, &s.staged_copy_wall_us)),
                copy_kernel: self.copy_kernel_wall_us.filter(|_| self.skins_every_vertex()),
            },
        }
    }

    /// The skinning mode, with ", cpu split" when the CPU split the dual
    /// quaternions (tables and plot legends).
    pub fn skinning_label(&self) -> String {
        let skinning = match self.dqs_split.as_deref() {
            Some("cpu") => format!("{}, cpu split", self.skinning),
            _ => self.skinning.clone(),
        };
        if self.gpu_posed() { format!("{skinning}, GPU pose") } else { skinning }
    }

    /// Whether a compute pass posed the crowd (`--pose gpu`).
    pub fn gpu_posed(&self) -> bool {
        self.pose.as_deref() == Some("gpu")
    }

    /// The model's file name (the label without its folders: "Fox.glb"),
    /// as the table and the verdicts name it.
    pub fn model_name(&self) -> &str {
        model_name(&self.model)
    }

    /// Vertices in the whole scene: every character's.
    pub fn scene_vertices(&self) -> u64 {
        self.vertices * u64::from(self.characters)
    }

    /// Vertices the skin pass skinned per frame: the scene's, or fewer at
    /// coarser detail levels (`skinned_vertices`).
    pub fn skinned(&self) -> u64 {
        self.skinned_vertices.unwrap_or_else(|| self.scene_vertices())
    }

    /// Whether the skin pass skinned every vertex, the bytes the copy
    /// kernel moved (only then do the two compare).
    pub fn skins_every_vertex(&self) -> bool {
        self.skinned() >= self.scene_vertices()
    }

    /// Copy kernel time / skin pass time over the same bytes (1.0 = the skin
    /// pass moves its bytes as fast as a plain copy); `None` without a timed
    /// skin pass (vertex skinning) or copy, or when the pass skinned fewer
    /// vertices than the copy's bytes hold.
    pub fn skin_efficiency(&self) -> Option<f64> {
        let skin = positive(self.gpu_us.skin.median).filter(|_| self.skins_every_vertex())?;
        Some(positive(self.copy_kernel_us?.median)? / skin)
    }

    /// `skin_efficiency` from host-timed runs of the copy kernel and the
    /// skin dispatch; `None` without both.
    pub fn skin_efficiency_wall(&self) -> Option<f64> {
        let skin = positive(self.skin_wall_us?.median).filter(|_| self.skins_every_vertex())?;
        Some(positive(self.copy_kernel_wall_us?.median)? / skin)
    }

    /// Staged palette copy time / plain buffer copy time over the same bytes,
    /// host-timed (issue 8's target: at most 1.2); `None` without both.
    pub fn staged_copy_ratio(&self) -> Option<f64> {
        let plain = positive(self.buffer_copy_wall_us?.median)?;
        Some(positive(self.staged_copy_wall_us?.median)? / plain)
    }

    /// Whether `other` measured the same scene the same way: model,
    /// characters, skinning (and DQS split), upload and passes (where
    /// the poses were evaluated and the detail aside: what verdicts pair).
    pub fn same_setup(&self, other: &BenchEntry) -> bool {
        self.model == other.model
            && self.characters == other.characters
            && self.skinning == other.skinning
            && self.dqs_split == other.dqs_split
            && self.upload == other.upload
            && self.passes == other.passes
    }

    /// Vertices skinned per second by the skin pass (median frame); `None`
    /// without a timed skin pass.
    pub fn skin_vertices_per_second(&self) -> Option<f64> {
        let seconds = positive(self.gpu_us.skin.median)? * 1e-6;
        positive(self.skinned() as f64 / seconds)
    }

    /// The copy kernel's equivalent: vertices per second at which a plain
    /// copy moves the skin pass's bytes, the ceiling for
    /// [`skin_vertices_per_second`](Self::skin_vertices_per_second).
    pub fn copy_vertices_per_second(&self) -> Option<f64> {
        self.vertices_per_second(self.copy_kernel_us?.median)
    }

    /// Bytes the skin pass reads and writes per vertex; `None` without vertices.
    pub fn bytes_per_vertex(&self) -> Option<f64> {
        let vertices = self.scene_vertices();
        (vertices > 0).then(|| self.skin_bytes as f64 / vertices as f64)
    }

    /// The scene's vertices over `median_us` microseconds, per second.
    fn vertices_per_second(&self, median_us: f64) -> Option<f64> {
        let seconds = positive(median_us)? * 1e-6;
        positive(self.scene_vertices() as f64 / seconds)
    }
}

/// A model label without its folders ("built-in" stays as it is).
pub fn model_name(label: &str) -> &str {
    std::path::Path::new(label).file_name().and_then(|n| n.to_str()).unwrap_or(label)
}

/// `value` when it is a finite number above 0.
fn positive(value: f64) -> Option<f64> {
    (value.is_finite() && value > 0.0).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::report::test_data::entry;

    #[test]
    fn derived_figures_follow_from_the_fields() {
        let e = entry(100, 1, "compute", "inplace", false);
        // 200,000 vertices; skin 405 us, copy 324 us.
        assert_eq!(e.scene_vertices(), 200_000);
        assert!((e.skin_efficiency().unwrap() - 324.0 / 405.0).abs() < 1e-12);
        assert!((e.skin_vertices_per_second().unwrap() - 200_000.0 / 405e-6).abs() < 1e-3);
        assert!((e.copy_vertices_per_second().unwrap() - 200_000.0 / 324e-6).abs() < 1e-3);
        assert_eq!(e.bytes_per_vertex(), Some(96.0));
    }

    #[test]
    fn without_a_skin_pass_there_is_no_efficiency_or_throughput() {
        let e = entry(10, 2, "vertex", "inplace", false);
        assert_eq!(e.skin_efficiency(), None);
        assert_eq!(e.skin_vertices_per_second(), None);
        assert!(e.copy_vertices_per_second().is_some());
    }

    #[test]
    fn the_timestamp_check_trusts_timestamps_only_when_twice_the_bytes_take_clearly_longer() {
        let check =
            |one: f64, two: f64| TimestampCheck { bytes: 16 << 20, one_copy_us: one, two_copies_us: two };
        // A GPU: twice the bytes, about twice the time.
        assert!(check(1000.0, 1980.0).brackets_work());
        assert_eq!(check(1000.0, 1980.0).timing(), GpuTiming::Timestamps);
        assert!(check(1000.0, 1500.0).brackets_work(), "1.5x is enough");
        // lavapipe: the timestamps see (almost) nothing of the dispatch.
        assert!(!check(67.0, 70.0).brackets_work());
        assert_eq!(check(67.0, 70.0).timing(), GpuTiming::HostTimed);
        assert!(!check(0.0, 0.0).brackets_work(), "a timer that measured nothing");
        assert_eq!(check(0.0, 5.0).ratio(), 0.0);
        assert!((check(100.0, 105.0).ratio() - 1.05).abs() < 1e-12);
    }

    /// An entry's pixel error reads back as written: a number, infinity
    /// as "coarsest" (not JSON's null, which would read back as absent),
    /// absent as absent; another word is refused.
    #[test]
    fn pixel_errors_survive_json() {
        for px in [Some(0.84), Some(f32::INFINITY), None] {
            let mut e = entry(100, 1, "compute", "inplace", false);
            e.pixel_error = px;
            let text = serde_json::to_string(&e).unwrap();
            assert_eq!(text.contains("\"pixel_error\":\"coarsest\""), px == Some(f32::INFINITY), "{text}");
            assert_eq!(serde_json::from_str::<BenchEntry>(&text).unwrap().pixel_error, px, "{text}");
        }
        let e = serde_json::to_string(&entry(100, 1, "compute", "inplace", false)).unwrap();
        let odd = e.replacen('{', "{\"pixel_error\":\"fine\",", 1);
        let error = serde_json::from_str::<BenchEntry>(&odd).unwrap_err().to_string();
        assert!(error.contains("pixel_error: \"fine\""), "{error}");
    }

    #[test]
    fn a_model_is_named_by_its_file_name() {
        assert_eq!(model_name("../shared/assets/Fox/glTF-Binary/Fox.glb"), "Fox.glb");
        assert_eq!(model_name("built-in"), "built-in");
    }

    #[test]
    fn a_header_carries_the_build_commit_and_a_utc_date() {
        let h = BenchHeader::new("llvmpipe", "Mesa 22.3.6", true, "vkskin bench --quick");
        assert_eq!(h.git_commit, GIT_COMMIT);
        assert!(!GIT_COMMIT.is_empty());
        let d = h.date.as_bytes();
        assert_eq!(d.len(), 20, "{}", h.date);
        assert_eq!((d[4], d[7], d[10], d[13], d[16], d[19]), (b'-', b'-', b'T', b':', b':', b'Z'));
    }

    #[test]
    fn the_embedded_commit_is_the_checkouts_head() {
        // What build.rs ran, run again: the same commit, or "unknown" where
        // git or the checkout is missing.
        let head = std::process::Command::new("git")
            .args(["rev-parse", "--short", "HEAD"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        assert_eq!(GIT_COMMIT, head.as_deref().unwrap_or("unknown"));
    }
}
