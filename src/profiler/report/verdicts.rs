//! The conclusions `vkskin bench` prints before its table: computed from
//! the measurements alone (a [`BenchResults`], so a results.json read back
//! gives the same verdicts), each carrying the figures it rests on.
//!
//! Every GPU figure comes from [`BenchEntry::figures`] under the header's
//! [`GpuTiming`], never from a clock the device's check rejected. The
//! formulas are those of the guide's "Verdicts" section
//! (`src/guide/profiling.md`): a reader of results.json recomputes every
//! number printed from the entries named.

use super::budget_verdict::{BudgetVerdict, budgets};
use super::detail_verdict::{DetailVerdict, details};
use super::memory_verdict::{MemoryVerdict, memory};
use super::numbers::{grouped, measure, number};
use super::pose_verdict::{GpuPoseVerdict, gpu_poses};
use super::{BenchEntry, BenchResults, GpuTiming, TimestampCheck};
use serde::{Deserialize, Serialize};

/// One 60 Hz frame, microseconds.
pub const FRAME_60HZ_US: f64 = 1e6 / 60.0;

/// Everything the run concludes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Verdicts {
    /// The clock the GPU figures come from.
    pub timing: GpuTiming,
    /// The measurement that chose `timing`, when the run made one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_check: Option<TimestampCheck>,
    /// Per model, pass count and skinning method: where compute skinning
    /// starts to beat vertex skinning.
    pub crossovers: Vec<Crossover>,
    /// Per model and upload mode: what the palette upload costs.
    pub uploads: Vec<UploadVerdict>,
    /// Per model and compute skinning mode: the skin pass against the copy kernel.
    pub skin: Vec<SkinVerdict>,
    /// Per model: the CPU pose.
    pub cpu: Vec<CpuVerdict>,
    /// Per model measured both ways: the CPU pose against the GPU pose.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_pose: Vec<GpuPoseVerdict>,
    /// Per model measured both ways: full meshes against detail levels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub detail: Vec<DetailVerdict>,
    /// Per model: the device memory its largest scene held, and what each
    /// character added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory: Vec<MemoryVerdict>,
    /// Per model and pass count, under a GPU frame budget: what its
    /// largest crowd drew within it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub budget: Vec<BudgetVerdict>,
}

/// Where compute skinning's GPU frame time drops below vertex skinning's,
/// for one model, pass count and influence blend (LBS or DQS), under one
/// upload mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Crossover {
    /// The model's label (as in the entries).
    pub model: String,
    /// Draw passes per frame.
    pub passes: u32,
    /// The compute mode compared, as [`BenchEntry::skinning_label`] writes
    /// it ("compute", "dqs-compute, cpu split").
    pub compute: String,
    /// The vertex mode compared, likewise ("vertex", "dqs-vertex, cpu split").
    pub vertex: String,
    /// The upload mode both were measured with (not paused).
    pub upload: String,
    /// The smallest character count measured at which compute's frame time
    /// is below vertex's, with every larger count measured below too; `None`
    /// when there is none in the sweep.
    pub characters: Option<u32>,
    /// The largest count measured below `characters` (where vertex still
    /// won or tied), if any.
    pub below: Option<u32>,
    /// The counts measured with both modes: smallest and largest.
    pub measured: (u32, u32),
    /// Compute's frame time (µs, median) at `characters`, or at the largest
    /// count measured when there is no crossover.
    pub compute_us: f64,
    /// Vertex's frame time there (µs, median).
    pub vertex_us: f64,
}

/// What the palette upload costs for one model and upload mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UploadVerdict {
    /// The model's label.
    pub model: String,
    /// "inplace", "staged" or "dirty".
    pub upload: String,
    /// The entry the figures come from: its character count (the largest
    /// measured with this upload, not paused)...
    pub characters: u32,
    /// ...its skinning mode (the first such entry's)...
    pub skinning: String,
    /// ...and its pass count.
    pub passes: u32,
    /// Palette bytes per character per frame.
    pub bytes_per_character: f64,
    /// CPU palette write per 1,000 characters, µs.
    pub cpu_write_us_per_1000: f64,
    /// GPU copy per 1,000 characters, µs (`None` when nothing is copied,
    /// or the copy was lost in the noise).
    pub gpu_copy_us_per_1000: Option<f64>,
    /// The copy's effective bandwidth, GB/s (`None` likewise).
    pub copy_gb_per_s: Option<f64>,
    /// A plain buffer copy of the same bytes, GB/s: host-timed, so given
    /// only where the copy above is host-timed too.
    pub plain_copy_gb_per_s: Option<f64>,
    /// Threads the crowd posed and wrote on (the header's `pose_threads`):
    /// the CPU write is split over them from 2,048 characters up.
    #[serde(default)]
    pub threads: Option<u32>,
}

/// The skin pass against the copy kernel over the same bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkinVerdict {
    /// The model's label.
    pub model: String,
    /// The skinning mode ("compute", "dqs-compute, cpu split", ...).
    pub skinning: String,
    /// The character count the figures are from (the largest measured).
    pub characters: u32,
    /// The skin pass, µs (median).
    pub skin_us: f64,
    /// The copy kernel over the skin pass's bytes, µs (median, same clock).
    pub copy_us: f64,
    /// Copy kernel time / skin pass time (1.0: as fast as a copy).
    pub share_of_copy: f64,
    /// Bytes the skin pass reads and writes per vertex.
    pub bytes_per_vertex: f64,
    /// Vertices skinned per second.
    pub vertices_per_second: f64,
}

/// The CPU pose, one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuVerdict {
    /// The model's label.
    pub model: String,
    /// The character count the figure is from (the largest measured).
    pub characters: u32,
    /// Threads the pose ran on (the header's `pose_threads`; `None` when
    /// the file does not say, and the figure is then per character only).
    pub threads: Option<u32>,
    /// The pose update of all characters, µs: the median over the entries
    /// at `characters` of their `cpu_pose_us` medians.
    pub pose_us: f64,
    /// Pose µs per character on one thread: `pose_us * threads / characters`.
    pub pose_us_per_character: f64,
    /// Characters one core animates within a 60 Hz frame:
    /// ⌊[`FRAME_60HZ_US`] / `pose_us_per_character`⌋.
    pub characters_per_core_at_60hz: u64,
}

impl Verdicts {
    /// The verdicts `results` support (an empty list of a kind where the
    /// sweep did not measure what it needs).
    pub fn from_results(results: &BenchResults) -> Verdicts {
        let timing = results.header.gpu_timing;
        let entries = &results.entries;
        Verdicts {
            timing,
            timestamp_check: results.header.timestamp_check,
            crossovers: crossovers(entries, timing),
            uploads: uploads(entries, timing, results.header.pose_threads),
            skin: skin_passes(entries, timing),
            cpu: cpu_poses(entries, results.header.pose_threads),
            gpu_pose: gpu_poses(entries, timing, results.header.pose_threads),
            detail: details(entries, timing),
            memory: memory(entries, results.header.device_local_bytes),
            budget: budgets(entries, timing, results.header.gpu_frame_budget_ms),
        }
    }

    /// One line per verdict, as printed before the table: the clock first,
    /// then crossovers, uploads, skin passes and the CPU.
    pub fn lines(&self) -> Vec<String> {
        let clock = match self.timing {
            GpuTiming::Timestamps => "GPU timestamps",
            GpuTiming::HostTimed => "host-timed submissions",
        };
        let mut lines = vec![match (self.timing, &self.timestamp_check) {
            (GpuTiming::HostTimed, Some(c)) => format!(
                "clock: GPU figures are {clock}: this device's timestamps do not bracket the work \
                 (a copy of twice the bytes timed {:.2}x one copy)",
                c.ratio()
            ),
            (GpuTiming::Timestamps, Some(c)) => format!(
                "clock: GPU figures are {clock} (a copy of twice the bytes timed {:.2}x one copy)",
                c.ratio()
            ),
            (_, None) => format!("clock: GPU figures are {clock}"),
        }];
        let tag = match self.timing {
            GpuTiming::Timestamps => "timestamps",
            GpuTiming::HostTimed => "host-timed",
        };
        lines.extend(self.crossovers.iter().map(|x| x.line(tag)));
        lines.extend(self.uploads.iter().map(|u| u.line(tag)));
        lines.extend(self.skin.iter().map(|s| s.line(tag)));
        lines.extend(self.cpu.iter().map(CpuVerdict::line));
        lines.extend(self.gpu_pose.iter().map(|v| v.line(tag)));
        lines.extend(self.detail.iter().map(|v| v.line(tag)));
        lines.extend(self.memory.iter().map(MemoryVerdict::line));
        lines.extend(self.budget.iter().map(|v| v.line(tag)));
        lines
    }
}

/// "1 pass", "2 passes".
fn passes_label(passes: u32) -> String {
    if passes == 1 { "1 pass".to_string() } else { format!("{passes} passes") }
}

/// "1 character", "16 characters".
fn characters_label(count: u32) -> String {
    if count == 1 { "1 character".to_string() } else { format!("{} characters", grouped(count.into())) }
}

impl Crossover {
    /// Whether `entry` is one of the two series compared: this model, pass
    /// count and upload, not paused, with `skinning` (`compute` or `vertex`).
    pub fn is_series(&self, entry: &BenchEntry, skinning: &str) -> bool {
        entry.model == self.model
            && entry.passes == self.passes
            && entry.upload == self.upload
            && !entry.paused
            && entry.skinning_label() == skinning
    }

    fn line(&self, clock: &str) -> String {
        let head = format!(
            "crossover: {}, {}, {}",
            super::results::model_name(&self.model),
            passes_label(self.passes),
            self.upload
        );
        let frame = format!("frame {} vs {} µs", measure(self.compute_us), measure(self.vertex_us));
        let (compute, vertex) = (&self.compute, &self.vertex);
        match (self.characters, self.below) {
            (Some(at), Some(below)) => format!(
                "{head}: {compute} beats {vertex} from {} ({frame}; {vertex} wins at {}; {clock})",
                characters_label(at),
                grouped(below.into())
            ),
            (Some(at), None) => format!(
                "{head}: {compute} beats {vertex} at every count measured, from {} ({frame}; {clock})",
                characters_label(at)
            ),
            (None, _) => format!(
                "{head}: no crossover between {} and {} characters (at {}: {frame}; {clock})",
                grouped(self.measured.0.into()),
                grouped(self.measured.1.into()),
                grouped(self.measured.1.into())
            ),
        }
    }
}

/// The upload mode crossovers compare under: `inplace` where it was
/// measured (nothing copied: the frame time is skinning and drawing), else
/// the first upload of an entry not paused (the frame-time plot's choice).
fn crossover_upload(entries: &[BenchEntry]) -> Option<&str> {
    let moving = || entries.iter().filter(|e| !e.paused);
    moving().find(|e| e.upload == "inplace").or_else(|| moving().next()).map(|e| e.upload.as_str())
}

/// The vertex mode a compute entry is compared with: the same method and
/// split ("dqs-compute, cpu split" against "dqs-vertex, cpu split").
fn vertex_counterpart(compute: &BenchEntry) -> Option<String> {
    compute.skinning.ends_with("compute").then(|| compute.skinning_label().replacen("compute", "vertex", 1))
}

/// Every crossover `entries` measure: per model, pass count and compute
/// mode (in the order they first appear) under `crossover_upload`, over
/// the character counts measured with both modes (the first entry of each
/// count), from the frame figure of `timing`.
pub fn crossovers(entries: &[BenchEntry], timing: GpuTiming) -> Vec<Crossover> {
    let Some(upload) = crossover_upload(entries) else { return Vec::new() };
    let mut found: Vec<Crossover> = Vec::new();
    for first in entries.iter().filter(|e| e.upload == upload && !e.paused) {
        let Some(vertex) = vertex_counterpart(first) else { continue };
        let mut x = Crossover {
            model: first.model.clone(),
            passes: first.passes,
            compute: first.skinning_label(),
            vertex,
            upload: upload.to_string(),
            characters: None,
            below: None,
            measured: (0, 0),
            compute_us: 0.0,
            vertex_us: 0.0,
        };
        if found.iter().any(|f| (&f.model, f.passes, &f.compute) == (&x.model, x.passes, &x.compute)) {
            continue;
        }
        let frame = |skinning: &str, count: u32| {
            let e = entries.iter().find(|e| e.characters == count && x.is_series(e, skinning))?;
            e.figures(timing).frame.map(|f| f.stat.median)
        };
        let mut counts: Vec<u32> =
            entries.iter().filter(|e| x.is_series(e, &x.compute)).map(|e| e.characters).collect();
        counts.sort_unstable();
        counts.dedup();
        let points: Vec<(u32, f64, f64)> = counts
            .into_iter()
            .filter_map(|c| Some((c, frame(&x.compute, c)?, frame(&x.vertex, c)?)))
            .collect();
        let (Some(&lowest), Some(&highest)) = (points.first(), points.last()) else { continue };
        x.measured = (lowest.0, highest.0);
        // The first point of the run of compute wins that reaches the largest count.
        let from = points.iter().rposition(|&(_, c, v)| c >= v).map_or(0, |i| i + 1);
        let at = points.get(from).copied().unwrap_or(highest);
        (x.compute_us, x.vertex_us) = (at.1, at.2);
        if from < points.len() {
            x.characters = Some(at.0);
            x.below = from.checked_sub(1).map(|i| points[i].0);
        }
        found.push(x);
    }
    found
}

/// The entry a per-mode verdict reads: of `entries`, the first at the
/// largest character count.
fn at_largest<'a>(mut entries: impl Iterator<Item = &'a BenchEntry> + Clone) -> Option<&'a BenchEntry> {
    let largest = entries.clone().map(|e| e.characters).max()?;
    entries.find(|e| e.characters == largest)
}

/// Per model and upload mode (first appearance), from the first entry not
/// paused at the largest count with that upload.
fn uploads(entries: &[BenchEntry], timing: GpuTiming, threads: Option<u32>) -> Vec<UploadVerdict> {
    let mut found: Vec<UploadVerdict> = Vec::new();
    // A GPU-posed crowd uploads no palette: the GPU pose verdict reads it.
    let cpu_posed = || entries.iter().filter(|e| !e.paused && !e.gpu_posed());
    for first in cpu_posed() {
        if found.iter().any(|u| u.model == first.model && u.upload == first.upload) {
            continue;
        }
        let same = cpu_posed().filter(|e| e.model == first.model && e.upload == first.upload);
        let Some(e) = at_largest(same) else { continue };
        let characters = f64::from(e.characters);
        let bytes = e.palette_bytes as f64;
        let copy = e.figures(timing).upload.map(|f| f.stat.median).filter(|&us| us > 0.0);
        let plain = match timing {
            GpuTiming::HostTimed => e.buffer_copy_wall_us.map(|s| s.median).filter(|&us| us > 0.0),
            GpuTiming::Timestamps => None,
        };
        // Bytes per µs are MB/s: / 1,000 for GB/s.
        let gb_per_s = |us: f64| bytes / us / 1000.0;
        found.push(UploadVerdict {
            model: e.model.clone(),
            upload: e.upload.clone(),
            characters: e.characters,
            skinning: e.skinning_label(),
            passes: e.passes,
            bytes_per_character: bytes / characters,
            cpu_write_us_per_1000: e.cpu_palette_write_us.median / characters * 1000.0,
            gpu_copy_us_per_1000: copy.map(|us| us / characters * 1000.0),
            copy_gb_per_s: copy.map(gb_per_s),
            plain_copy_gb_per_s: copy.and(plain).map(gb_per_s),
            threads,
        });
    }
    found
}

impl UploadVerdict {
    fn line(&self, clock: &str) -> String {
        let head = format!(
            "upload: {}, {}: {} B per character per frame",
            super::results::model_name(&self.model),
            self.upload,
            grouped(self.bytes_per_character.round() as u64)
        );
        let gpu = match (self.gpu_copy_us_per_1000, self.copy_gb_per_s) {
            _ if self.upload == "inplace" => ", read in place (nothing copied on the GPU)".to_string(),
            (Some(us), Some(gb)) => {
                let plain = self
                    .plain_copy_gb_per_s
                    .map_or_else(String::new, |p| format!("; a plain copy of the same bytes: {p:.1} GB/s"));
                format!("; {} µs per 1,000 characters on the GPU ({gb:.1} GB/s{plain})", measure(us))
            }
            _ => "; the GPU copy was lost in the noise".to_string(),
        };
        format!(
            "{head}{gpu}, CPU write {} µs per 1,000 ({}{}; {clock})",
            measure(self.cpu_write_us_per_1000),
            characters_label(self.characters),
            on_threads(self.threads)
        )
    }
}

/// Per model and compute mode (first appearance), from the first entry not
/// paused at the largest count with a skin figure and a copy kernel figure.
fn skin_passes(entries: &[BenchEntry], timing: GpuTiming) -> Vec<SkinVerdict> {
    let timed = |e: &BenchEntry| {
        let f = e.figures(timing);
        let skin = f.skin.map(|s| s.stat.median).filter(|&us| us > 0.0)?;
        let copy = f.copy_kernel.map(|s| s.median).filter(|&us| us > 0.0)?;
        Some((skin, copy))
    };
    let mut found: Vec<SkinVerdict> = Vec::new();
    for first in entries.iter().filter(|e| !e.paused && timed(e).is_some()) {
        let skinning = first.skinning_label();
        if found.iter().any(|s| s.model == first.model && s.skinning == skinning) {
            continue;
        }
        let same = entries.iter().filter(|e| {
            !e.paused && e.model == first.model && e.skinning_label() == skinning && timed(e).is_some()
        });
        let Some(e) = at_largest(same) else { continue };
        let Some((skin_us, copy_us)) = timed(e) else { continue };
        let vertices = e.scene_vertices() as f64;
        found.push(SkinVerdict {
            model: e.model.clone(),
            skinning,
            characters: e.characters,
            skin_us,
            copy_us,
            share_of_copy: copy_us / skin_us,
            bytes_per_vertex: if vertices > 0.0 { e.skin_bytes as f64 / vertices } else { 0.0 },
            vertices_per_second: vertices / (skin_us * 1e-6),
        });
    }
    found
}

impl SkinVerdict {
    fn line(&self, clock: &str) -> String {
        format!(
            "skin pass: {}, {}, {}: {:.0} % of the copy kernel over the same bytes \
             (skin {} vs copy {} µs; {} B per vertex, {} M vertices/s; {clock})",
            super::results::model_name(&self.model),
            self.skinning,
            characters_label(self.characters),
            self.share_of_copy * 100.0,
            measure(self.skin_us),
            measure(self.copy_us),
            number(self.bytes_per_vertex),
            measure(self.vertices_per_second / 1e6),
        )
    }
}

/// Per model (first appearance): the entries not paused at its largest
/// count, the median of their pose medians.
fn cpu_poses(entries: &[BenchEntry], threads: Option<u32>) -> Vec<CpuVerdict> {
    let mut found: Vec<CpuVerdict> = Vec::new();
    // GPU-posed crowds update without posing: the GPU pose verdict reads them.
    for first in entries.iter().filter(|e| !e.paused && !e.gpu_posed()) {
        if found.iter().any(|c| c.model == first.model) {
            continue;
        }
        let same = || entries.iter().filter(|e| !e.paused && !e.gpu_posed() && e.model == first.model);
        let Some(characters) = same().map(|e| e.characters).max() else { continue };
        let mut poses: Vec<f64> =
            same().filter(|e| e.characters == characters).map(|e| e.cpu_pose_us.median).collect();
        let pose_us = super::Stat::from_samples(&mut poses).map_or(0.0, |s| s.median);
        let per_character = pose_us * f64::from(threads.unwrap_or(1)) / f64::from(characters);
        found.push(CpuVerdict {
            model: first.model.clone(),
            characters,
            threads,
            pose_us,
            pose_us_per_character: per_character,
            characters_per_core_at_60hz: if per_character > 0.0 {
                (FRAME_60HZ_US / per_character).floor() as u64
            } else {
                0
            },
        });
    }
    found
}

/// Keeps one verdict per group in `found`: `verdict` joins as the first
/// of its group (`same`), or replaces the one there that it `beats`.
pub(super) fn keep_best<V>(
    found: &mut Vec<V>,
    verdict: V,
    same: impl Fn(&V, &V) -> bool,
    beats: impl Fn(&V, &V) -> bool,
) {
    match found.iter_mut().find(|v| same(v, &verdict)) {
        Some(v) if beats(&verdict, v) => *v = verdict,
        Some(_) => {}
        None => found.push(verdict),
    }
}

/// " on N threads" where the crowd's frame work ran on more than one.
pub(super) fn on_threads(threads: Option<u32>) -> String {
    match threads {
        Some(n) if n > 1 => format!(" on {n} threads"),
        _ => String::new(),
    }
}

impl CpuVerdict {
    fn line(&self) -> String {
        let model = super::results::model_name(&self.model);
        let pose = number(self.pose_us_per_character);
        let from = characters_label(self.characters);
        match self.threads {
            Some(threads) => format!(
                "CPU: {model}: pose {pose} µs per character per thread ({from} on {threads} thread{}): \
                 one core animates {} characters in a 60 Hz frame",
                if threads == 1 { "" } else { "s" },
                grouped(self.characters_per_core_at_60hz)
            ),
            None => format!(
                "CPU: {model}: pose {pose} µs per character ({from}; the thread count was not recorded)"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::report::BenchHeader;
    use crate::profiler::report::test_data::entry;

    fn results(timing: GpuTiming, entries: Vec<BenchEntry>) -> BenchResults {
        let mut header = BenchHeader::new("llvmpipe", "Mesa", true, "vkskin bench --quick");
        header.gpu_timing = timing;
        header.pose_threads = Some(1);
        BenchResults { header, entries }
    }

    /// compute and vertex, inplace, at each count and pass count.
    fn sweep(counts: &[u32], passes: &[u32]) -> Vec<BenchEntry> {
        let mut entries = Vec::new();
        for &c in counts {
            for skinning in ["compute", "vertex"] {
                for &p in passes {
                    entries.push(entry(c, p, skinning, "inplace", false));
                }
            }
        }
        entries
    }

    #[test]
    fn the_crossover_is_where_compute_starts_to_win_for_good() {
        // test_data: compute - vertex = 5 µs + 0.002 µs * vertices * (1 - passes): vertex always
        // wins with 1 pass; with 2, compute wins above 2,500 vertices (1.25 characters).
        let r = results(GpuTiming::Timestamps, sweep(&[1, 10, 100], &[1, 2]));
        let x = crossovers(&r.entries, GpuTiming::Timestamps);
        assert_eq!(x.len(), 2, "{x:?}");
        let (one, two) = (&x[0], &x[1]);
        assert_eq!((one.passes, one.characters, one.below, one.measured), (1, None, None, (1, 100)));
        // At 100: scene 200,000 vertices: compute 405 + 220 = 625, vertex 620.
        assert!((one.compute_us - 625.0).abs() < 1e-9 && (one.vertex_us - 620.0).abs() < 1e-9);
        assert_eq!((two.passes, two.characters, two.below), (2, Some(10), Some(1)));
        // At 10: 20,000 vertices: compute 45 + 2 * 40 = 125, vertex 2 * 80 = 160.
        assert!((two.compute_us - 125.0).abs() < 1e-9 && (two.vertex_us - 160.0).abs() < 1e-9);
        assert_eq!(
            Verdicts::from_results(&r).lines()[1..3],
            [
                "crossover: built-in, 1 pass, inplace: no crossover between 1 and 100 characters \
                 (at 100: frame 625 vs 620 µs; timestamps)",
                "crossover: built-in, 2 passes, inplace: compute beats vertex from 10 characters \
                 (frame 125 vs 160 µs; vertex wins at 1; timestamps)",
            ]
        );
        // Host-timed frames (60 + 1.5 * frame) order the same way.
        let host = crossovers(&r.entries, GpuTiming::HostTimed);
        assert_eq!(host[1].characters, Some(10));
        assert!((host[1].compute_us - 247.5).abs() < 1e-9 && (host[1].vertex_us - 300.0).abs() < 1e-9);
    }

    #[test]
    fn a_win_that_does_not_last_is_no_crossover() {
        let mut entries = sweep(&[1, 10, 100], &[1]);
        // compute wins at 1, loses at 10, wins at 100.
        entries[0].gpu_us.frame.median = 1.0;
        entries[2].gpu_us.frame.median = 1e6;
        entries[4].gpu_us.frame.median = 1.0;
        let x = &crossovers(&entries, GpuTiming::Timestamps)[0];
        assert_eq!((x.characters, x.below), (Some(100), Some(10)));
        // compute wins everywhere: from the smallest count, nothing below.
        entries[2].gpu_us.frame.median = 1.0;
        let x = &crossovers(&entries, GpuTiming::Timestamps)[0];
        assert_eq!((x.characters, x.below), (Some(1), None));
        assert!(
            x.line("timestamps").contains("compute beats vertex at every count measured, from 1 character")
        );
    }

    #[test]
    fn crossovers_prefer_inplace_and_pair_the_same_method_and_split() {
        let mut entries = sweep(&[1, 10], &[2]);
        entries.push(entry(1, 2, "compute", "staged", false));
        entries.push(entry(1, 2, "dqs-compute", "inplace", false));
        entries.push(entry(1, 2, "dqs-vertex", "inplace", false));
        let x = crossovers(&entries, GpuTiming::Timestamps);
        let pairs: Vec<(&str, &str, &str)> =
            x.iter().map(|x| (x.compute.as_str(), x.vertex.as_str(), x.upload.as_str())).collect();
        assert_eq!(pairs, [("compute", "vertex", "inplace"), ("dqs-compute", "dqs-vertex", "inplace")]);
        // Only a vertex series: nothing to compare.
        assert!(crossovers(&sweep(&[1], &[1])[1..], GpuTiming::Timestamps).is_empty());
    }

    #[test]
    fn upload_verdicts_read_the_chosen_clock() {
        let entries = vec![
            entry(1, 1, "compute", "staged", false),
            entry(16, 1, "compute", "staged", false),
            entry(16, 1, "compute", "inplace", false),
            entry(16, 1, "compute", "dirty", true),
        ];
        let v = Verdicts::from_results(&results(GpuTiming::HostTimed, entries.clone()));
        assert_eq!(v.uploads.len(), 2, "paused entries make no verdict: {:?}", v.uploads);
        let staged = &v.uploads[0];
        // 16 characters * 40 joints * 64 B = 40,960 B; staged copy 11 + 40,960 * 2e-4 = 19.192 µs;
        // plain copy 18.192 µs; CPU write 0.2 + 40.96 = 41.16 µs.
        assert_eq!((staged.upload.as_str(), staged.characters), ("staged", 16));
        assert_eq!(staged.bytes_per_character, 2560.0);
        let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-9;
        assert!(close(staged.gpu_copy_us_per_1000, 19.192 / 16.0 * 1000.0));
        assert!(close(staged.copy_gb_per_s, 40_960.0 / 19.192 / 1000.0));
        assert!(close(staged.plain_copy_gb_per_s, 40_960.0 / 18.192 / 1000.0));
        assert!((staged.cpu_write_us_per_1000 - 41.16 / 16.0 * 1000.0).abs() < 1e-9);
        assert_eq!(
            staged.line("host-timed"),
            format!(
                "upload: built-in, staged: 2,560 B per character per frame; 1,200 µs per 1,000 characters \
                 on the GPU (2.1 GB/s; a plain copy of the same bytes: 2.3 GB/s), CPU write {} µs per \
                 1,000 (16 characters; host-timed)",
                measure(staged.cpu_write_us_per_1000)
            )
        );
        let inplace = &v.uploads[1];
        assert_eq!((inplace.gpu_copy_us_per_1000, inplace.copy_gb_per_s), (None, None));
        assert!(inplace.line("host-timed").contains("read in place (nothing copied on the GPU)"));
        // Timestamps: the timestamped copy (2 + 4.096 µs), and no host-timed plain copy beside it.
        let t = Verdicts::from_results(&results(GpuTiming::Timestamps, entries));
        assert!(close(t.uploads[0].gpu_copy_us_per_1000, 6.096 / 16.0 * 1000.0));
        assert_eq!(t.uploads[0].plain_copy_gb_per_s, None);
        // Written on the crowd's threads: the line says how many.
        let mut on_four = results(GpuTiming::HostTimed, vec![entry(16, 1, "compute", "staged", false)]);
        on_four.header.pose_threads = Some(4);
        let line = Verdicts::from_results(&on_four).uploads[0].line("host-timed");
        assert!(line.ends_with("1,000 (16 characters on 4 threads; host-timed)"), "{line}");
    }

    #[test]
    fn skin_verdicts_hold_the_pass_against_the_copy_on_one_clock() {
        let entries = vec![
            entry(1, 1, "compute", "inplace", false),
            entry(16, 1, "compute", "inplace", false),
            entry(16, 1, "vertex", "inplace", false),
        ];
        let v = Verdicts::from_results(&results(GpuTiming::HostTimed, entries.clone()));
        assert_eq!(v.skin.len(), 1, "vertex skinning has no skin pass");
        let s = &v.skin[0];
        // 32,000 vertices: host-timed skin 35 + 80 = 115 µs, copy 30 + 64 = 94 µs.
        assert_eq!((s.characters, s.skin_us, s.copy_us, s.bytes_per_vertex), (16, 115.0, 94.0, 96.0));
        assert!((s.share_of_copy - 94.0 / 115.0).abs() < 1e-12);
        assert!((s.vertices_per_second - 32_000.0 / 115e-6).abs() < 1e-3);
        assert_eq!(
            s.line("host-timed"),
            "skin pass: built-in, compute, 16 characters: 82 % of the copy kernel over the same bytes \
             (skin 115 vs copy 94.0 µs; 96.0 B per vertex, 278 M vertices/s; host-timed)"
        );
        // Timestamps: skin 5 + 64 = 69 µs, copy 4 + 51.2 = 55.2 µs.
        let t = &Verdicts::from_results(&results(GpuTiming::Timestamps, entries)).skin[0];
        assert!((t.share_of_copy - 0.8).abs() < 1e-12);
    }

    #[test]
    fn the_cpu_verdict_is_per_character_per_thread() {
        let mut entries = vec![
            entry(1, 1, "compute", "inplace", false),
            entry(16, 1, "compute", "inplace", false),
            entry(16, 1, "vertex", "inplace", false),
            entry(16, 1, "vertex", "dirty", true),
        ];
        // Medians 48, 60 and (paused, left out) 0.2: the median of 48 and 60 is 54.
        entries[2].cpu_pose_us.median = 60.0;
        entries[3].cpu_pose_us.median = 0.2;
        let mut r = results(GpuTiming::HostTimed, entries);
        let c = &Verdicts::from_results(&r).cpu[0];
        assert_eq!((c.characters, c.pose_us, c.pose_us_per_character), (16, 54.0, 3.375));
        assert_eq!(c.characters_per_core_at_60hz, 4938, "16,666.7 / 3.375");
        assert_eq!(
            c.line(),
            "CPU: built-in: pose 3.38 µs per character per thread (16 characters on 1 thread): one core \
             animates 4,938 characters in a 60 Hz frame"
        );
        r.header.pose_threads = Some(2);
        let c = &Verdicts::from_results(&r).cpu[0];
        assert_eq!((c.pose_us_per_character, c.characters_per_core_at_60hz), (6.75, 2469));
        r.header.pose_threads = None;
        assert!(Verdicts::from_results(&r).cpu[0].line().ends_with("the thread count was not recorded)"));
    }

    #[test]
    fn the_clock_comes_first_and_says_why() {
        let mut r = results(GpuTiming::HostTimed, sweep(&[1], &[1]));
        r.header.timestamp_check =
            Some(TimestampCheck { bytes: 1 << 24, one_copy_us: 100.0, two_copies_us: 105.0 });
        let lines = Verdicts::from_results(&r).lines();
        assert_eq!(
            lines[0],
            "clock: GPU figures are host-timed submissions: this device's timestamps do not bracket the \
             work (a copy of twice the bytes timed 1.05x one copy)"
        );
        assert!(
            lines.iter().skip(1).all(|l| l.ends_with("host-timed)") || l.starts_with("CPU")),
            "{lines:?}"
        );
        assert_eq!(Verdicts::from_results(&results(GpuTiming::Timestamps, Vec::new())).lines().len(), 1);
    }
}
