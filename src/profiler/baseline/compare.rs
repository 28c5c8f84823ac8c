//! The comparison itself, a pure function of two [`BenchResults`]: the
//! configurations matched, and for each figure a user reads the change in
//! the median with a verdict decided as criterion decides it.

use super::resample::{self, Resampled};
use crate::profiler::report::{BenchEntry, BenchResults, Figure, Figures, GpuTiming};
use serde::Serialize;

/// Below this p-value a change is significant (criterion's default).
pub const SIGNIFICANCE: f64 = 0.05;

/// The figures a comparison reads, in the order rows list them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FigureKind {
    /// The whole frame on the GPU.
    Frame,
    /// The compute skin pass.
    Skin,
    /// The palette copy.
    Upload,
    /// The CPU pose update.
    CpuPose,
}

impl FigureKind {
    /// Every figure, in row order.
    pub const ALL: [FigureKind; 4] =
        [FigureKind::Frame, FigureKind::Skin, FigureKind::Upload, FigureKind::CpuPose];

    /// The figure's name in tables and summaries.
    pub fn name(self) -> &'static str {
        match self {
            FigureKind::Frame => "frame",
            FigureKind::Skin => "skin",
            FigureKind::Upload => "upload",
            FigureKind::CpuPose => "cpu pose",
        }
    }

    /// The smallest relative change called a change at all, when also
    /// significant. Criterion's default is 1 %; the CPU pose gets 2 %
    /// because on lavapipe the "GPU" shares the CPU's cores and caches with
    /// it, and the GPU figures 5 %: the same build measured twice moves
    /// them by that much (clocks, other processes, the driver's threads).
    pub fn noise_threshold(self) -> f64 {
        match self {
            FigureKind::CpuPose => 0.02,
            FigureKind::Frame | FigureKind::Skin | FigureKind::Upload => 0.05,
        }
    }

    /// Whether the figure is a GPU one (its clock is the header's `gpu_timing`).
    pub fn is_gpu(self) -> bool {
        self != FigureKind::CpuPose
    }

    /// This figure of `figures`, when the entry has it.
    fn of<'a>(self, figures: &Figures<'a>) -> Option<Figure<'a>> {
        match self {
            FigureKind::Frame => figures.frame,
            FigureKind::Skin => figures.skin,
            FigureKind::Upload => figures.upload,
            FigureKind::CpuPose => Some(figures.cpu_pose),
        }
    }
}

/// What the comparison concludes about one figure of one configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Significantly faster, by more than the noise threshold.
    Improved,
    /// Significantly slower, by more than the noise threshold.
    Regressed,
    /// Not significant, or significant but inside the noise threshold.
    WithinNoise,
    /// One side kept no samples (a version-1 file): only the medians are
    /// compared, and nothing is concluded.
    NoSamples,
    /// A median is not above 0 (and the two differ), or the figure was
    /// measured on one side only: there is no relative change to give.
    NotComparable,
}

impl Verdict {
    /// The verdict as the table prints it.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::WithinNoise => "within noise",
            Verdict::NoSamples => "no samples",
            Verdict::NotComparable => "not comparable",
        }
    }
}

/// What identifies a configuration in both runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigKey {
    /// The model's label.
    pub model: String,
    /// Characters in the scene.
    pub characters: u32,
    /// The skinning mode.
    pub skinning: String,
    /// The dual-quaternion split, for the dqs modes.
    pub dqs_split: Option<String>,
    /// The palette upload mode.
    pub upload: String,
    /// Whether every character was paused.
    pub paused: bool,
    /// Draw passes per frame.
    pub passes: u32,
    /// `"gpu"` when a compute pass posed the crowd.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pose: Option<String>,
    /// `"full"` when every character drew its full mesh.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl ConfigKey {
    /// The key of `entry`.
    pub fn of(entry: &BenchEntry) -> Self {
        ConfigKey {
            model: entry.model.clone(),
            characters: entry.characters,
            skinning: entry.skinning.clone(),
            dqs_split: entry.dqs_split.clone(),
            upload: entry.upload.clone(),
            paused: entry.paused,
            passes: entry.passes,
            pose: entry.pose.clone(),
            detail: entry.detail.clone(),
        }
    }

    /// The configuration in words, as the bench names it
    /// ("built-in, 16 characters, compute, dirty (paused), 1 pass").
    pub fn label(&self) -> String {
        let plural = |n: u32, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let split = match self.dqs_split.as_deref() {
            Some("cpu") => " (cpu split)",
            _ => "",
        };
        let pose = if self.pose.as_deref() == Some("gpu") { ", GPU pose" } else { "" };
        let detail = if self.detail.as_deref() == Some("full") { ", full detail" } else { "" };
        format!(
            "{}, {}{pose}, {}{split}, {}{}, {}{detail}",
            self.model,
            plural(self.characters, "character", "characters"),
            self.skinning,
            self.upload,
            if self.paused { " (paused)" } else { "" },
            plural(self.passes, "pass", "passes"),
        )
    }
}

/// One figure of one configuration, old against new.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The configuration.
    #[serde(flatten)]
    pub config: ConfigKey,
    /// Which figure.
    pub figure: FigureKind,
    /// The old run's median, microseconds (`None`: not measured there).
    pub old_median_us: Option<f64>,
    /// The new run's median, microseconds.
    pub new_median_us: Option<f64>,
    /// `100 * (new / old - 1)`: positive is slower.
    pub change_percent: Option<f64>,
    /// The 95 % bootstrap interval of the change, percent (with samples).
    pub interval_percent: Option<[f64; 2]>,
    /// The resampling test's p-value (with samples).
    pub p_value: Option<f64>,
    /// The samples behind each side's median.
    pub old_samples: usize,
    /// See `old_samples`.
    pub new_samples: usize,
    /// The noise threshold applied, percent.
    pub threshold_percent: f64,
    /// The conclusion.
    pub verdict: Verdict,
}

/// Where and how a side was measured, as its header says.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    /// The device's name.
    pub device: String,
    /// When it ran.
    pub date: String,
    /// The build's commit.
    pub commit: String,
    /// The results format version.
    pub version: u32,
    /// The clock its GPU figures come from.
    pub gpu_timing: GpuTiming,
    /// The threads its crowds posed and recorded on.
    pub pose_threads: Option<u32>,
    /// The triangle budget its crowds were drawn within (`--max-triangles`).
    pub max_triangles: Option<u64>,
    /// The GPU frame budget its crowds were drawn within, milliseconds
    /// (`--gpu-frame-budget`).
    pub gpu_frame_budget_ms: Option<f64>,
}

impl Side {
    fn of(results: &BenchResults) -> Self {
        let h = &results.header;
        Side {
            device: h.device.clone(),
            date: h.date.clone(),
            commit: h.git_commit.clone(),
            version: h.version,
            gpu_timing: h.gpu_timing,
            pose_threads: h.pose_threads,
            max_triangles: h.max_triangles,
            gpu_frame_budget_ms: h.gpu_frame_budget_ms,
        }
    }
}

/// Everything a comparison of two runs finds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The baseline.
    pub old: Side,
    /// The run compared with it.
    pub new: Side,
    /// The two runs' GPU figures come from different clocks (timestamps
    /// on one, host-timed submissions on the other): their GPU rows
    /// compare different measurements.
    pub clocks_differ: bool,
    /// Per matched configuration (in the new run's order) and figure.
    pub rows: Vec<Row>,
    /// Configurations only the new run measured.
    pub new_configurations: Vec<ConfigKey>,
    /// Configurations only the old run measured.
    pub gone_configurations: Vec<ConfigKey>,
}

impl Comparison {
    /// How many rows have `verdict`.
    pub fn count(&self, verdict: Verdict) -> usize {
        self.rows.iter().filter(|r| r.verdict == verdict).count()
    }

    /// The figures (by name, each once, in row order) with a row of `verdict`.
    pub fn figures_with(&self, verdict: Verdict) -> Vec<&'static str> {
        let mut names = Vec::new();
        for kind in FigureKind::ALL {
            if self.rows.iter().any(|r| r.verdict == verdict && r.figure == kind) {
                names.push(kind.name());
            }
        }
        names
    }
}

/// Compares `new` against the baseline `old`: configurations matched by
/// their [`ConfigKey`] (each old entry used once), every figure of
/// [`BenchEntry::figures`] under each side's own header timing.
pub fn compare(old: &BenchResults, new: &BenchResults) -> Comparison {
    let mut used = vec![false; old.entries.len()];
    let mut rows = Vec::new();
    let mut new_configurations = Vec::new();
    for entry in &new.entries {
        let key = ConfigKey::of(entry);
        let found = old.entries.iter().enumerate().position(|(i, o)| !used[i] && ConfigKey::of(o) == key);
        let Some(i) = found else {
            new_configurations.push(key);
            continue;
        };
        used[i] = true;
        let (was, now) =
            (old.entries[i].figures(old.header.gpu_timing), entry.figures(new.header.gpu_timing));
        for kind in FigureKind::ALL {
            let (a, b) = (kind.of(&was), kind.of(&now));
            if a.is_none() && b.is_none() {
                continue;
            }
            rows.push(row(key.clone(), kind, a, b));
        }
    }
    let gone_configurations =
        old.entries.iter().zip(&used).filter(|(_, u)| !**u).map(|(e, _)| ConfigKey::of(e)).collect();
    Comparison {
        old: Side::of(old),
        new: Side::of(new),
        clocks_differ: old.header.gpu_timing != new.header.gpu_timing,
        rows,
        new_configurations,
        gone_configurations,
    }
}

/// One figure compared; at least one side has it.
fn row(config: ConfigKey, figure: FigureKind, old: Option<Figure>, new: Option<Figure>) -> Row {
    let threshold = figure.noise_threshold();
    let mut row = Row {
        config,
        figure,
        old_median_us: old.map(|f| f.stat.median),
        new_median_us: new.map(|f| f.stat.median),
        change_percent: None,
        interval_percent: None,
        p_value: None,
        old_samples: old.map_or(0, |f| f.samples.len()),
        new_samples: new.map_or(0, |f| f.samples.len()),
        threshold_percent: 100.0 * threshold,
        verdict: Verdict::NotComparable,
    };
    let (Some(old), Some(new)) = (old, new) else { return row };
    let (a, b) = (old.stat.median, new.stat.median);
    let samples = !old.samples.is_empty() && !new.samples.is_empty();
    if !(a.is_finite() && b.is_finite() && a > 0.0 && b > 0.0) {
        // Nothing measured on either side (a paused crowd's upload): unchanged.
        if a == b {
            row.change_percent = Some(0.0);
            row.verdict = if samples { Verdict::WithinNoise } else { Verdict::NoSamples };
        }
        return row;
    }
    row.change_percent = Some(100.0 * (b / a - 1.0));
    if !samples {
        row.verdict = Verdict::NoSamples;
        return row;
    }
    if old.samples == new.samples {
        // The same measurements (a run against itself): no change, even
        // where the figure is too close to 0 to resample a relative change.
        row.interval_percent = Some([0.0, 0.0]);
        row.p_value = Some(1.0);
        row.verdict = Verdict::WithinNoise;
        return row;
    }
    let Some(Resampled { interval: (low, high), p_value }) = resample::resample(old.samples, new.samples)
    else {
        return row;
    };
    row.interval_percent = Some([100.0 * low, 100.0 * high]);
    row.p_value = Some(p_value);
    // Criterion's rule: significant, and the whole interval beyond the
    // threshold on one side.
    row.verdict = if p_value >= SIGNIFICANCE {
        Verdict::WithinNoise
    } else if low > threshold {
        Verdict::Regressed
    } else if high < -threshold {
        Verdict::Improved
    } else {
        Verdict::WithinNoise
    };
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::report::test_data::entry;
    use crate::profiler::report::{BenchHeader, EntrySamples, Stat};

    #[test]
    fn the_same_samples_are_within_noise_even_when_lost_in_the_noise() {
        // Host-timed runs minus empty ones can be at or below 0: no relative
        // change can be resampled, but the same samples are no change.
        let noise = [0.5, -0.25, 0.75, -0.5, 0.25, 0.1, -0.1, 0.3];
        let figure = Figure { stat: Stat { median: 0.175, p95: 0.7 }, samples: &noise };
        let key = ConfigKey::of(&entry(16, 1, "compute", "inplace", false));
        let same = row(key.clone(), FigureKind::ALL[0], Some(figure), Some(figure));
        assert_eq!((same.verdict, same.change_percent), (Verdict::WithinNoise, Some(0.0)));
        let shifted: Vec<f64> = noise.iter().map(|v| v + 0.01).collect();
        let other = Figure { stat: Stat { median: 0.185, p95: 0.71 }, samples: &shifted };
        assert_eq!(row(key, FigureKind::ALL[0], Some(figure), Some(other)).verdict, Verdict::NotComparable);
    }

    /// 30 samples around `median` with a spread of `spread` (relative),
    /// deterministic and unsorted.
    fn samples(median: f64, spread: f64) -> Vec<f64> {
        (0..30).map(|i| median * (1.0 + spread * (f64::from((i * 7) % 30) / 29.0 - 0.5))).collect()
    }

    fn stat(samples: &[f64]) -> Stat {
        Stat::from_samples(&mut samples.to_vec()).unwrap()
    }

    /// A compute entry, host-timed, whose figures are scaled by `scale`
    /// (its skin by `skin_scale`), each with `spread`.
    fn measured(characters: u32, scale: f64, skin_scale: f64, spread: f64) -> BenchEntry {
        let mut e = entry(characters, 1, "compute", "staged", false);
        let s = EntrySamples {
            cpu_pose_us: samples(100.0 * scale, spread),
            frame_wall_us: samples(1000.0 * scale, spread),
            skin_wall_us: samples(400.0 * skin_scale, spread),
            staged_copy_wall_us: samples(50.0 * scale, spread),
            ..EntrySamples::default()
        };
        e.cpu_pose_us = stat(&s.cpu_pose_us);
        e.frame_wall_us = Some(stat(&s.frame_wall_us));
        e.skin_wall_us = Some(stat(&s.skin_wall_us));
        e.staged_copy_wall_us = Some(stat(&s.staged_copy_wall_us));
        e.samples = s;
        e
    }

    fn results(entries: Vec<BenchEntry>) -> BenchResults {
        let mut header = BenchHeader::new("llvmpipe", "Mesa", true, "vkskin bench --quick");
        header.gpu_timing = GpuTiming::HostTimed;
        BenchResults { header, entries }
    }

    fn verdicts(c: &Comparison) -> Vec<(FigureKind, Verdict)> {
        c.rows.iter().map(|r| (r.figure, r.verdict)).collect()
    }

    #[test]
    fn a_run_against_itself_is_within_noise_everywhere() {
        let run = results(vec![measured(1, 1.0, 1.0, 0.2), measured(16, 1.0, 1.0, 0.2)]);
        let c = compare(&run, &run);
        assert_eq!(c.rows.len(), 2 * 4, "frame, skin, upload and cpu pose of both");
        assert!(c.rows.iter().all(|r| r.verdict == Verdict::WithinNoise), "{:#?}", c.rows);
        assert!(c.rows.iter().all(|r| r.change_percent == Some(0.0) && r.p_value == Some(1.0)));
        assert!(c.new_configurations.is_empty() && c.gone_configurations.is_empty());
        assert!(!c.clocks_differ);
    }

    #[test]
    fn thirty_percent_with_small_spread_is_a_regression_or_an_improvement() {
        let old = results(vec![measured(16, 1.0, 1.0, 0.04)]);
        let slower = results(vec![measured(16, 1.3, 1.3, 0.04)]);
        let c = compare(&old, &slower);
        assert!(c.rows.iter().all(|r| r.verdict == Verdict::Regressed), "{:#?}", c.rows);
        let r = &c.rows[0];
        assert!((r.change_percent.unwrap() - 30.0).abs() < 1e-9);
        let [low, high] = r.interval_percent.unwrap();
        assert!(low > 25.0 && high < 35.0, "{low} {high}");
        assert!(r.p_value.unwrap() < 0.001);
        let c = compare(&slower, &old);
        assert!(c.rows.iter().all(|r| r.verdict == Verdict::Improved), "{:#?}", c.rows);
    }

    #[test]
    fn a_two_percent_shift_inside_the_noise_is_within_noise() {
        // 2 % against a 10 % spread: not significant with 30 samples, and
        // inside the GPU figures' 5 % threshold even if it were.
        let old = results(vec![measured(16, 1.0, 1.0, 0.1)]);
        let new = results(vec![measured(16, 1.02, 1.02, 0.1)]);
        let c = compare(&old, &new);
        assert!(c.rows.iter().all(|r| r.verdict == Verdict::WithinNoise), "{:#?}", c.rows);
        // A clean 2 % shift is significant, yet inside the GPU threshold.
        let new = results(vec![measured(16, 1.02, 1.02, 0.001)]);
        let c = compare(&results(vec![measured(16, 1.0, 1.0, 0.001)]), &new);
        let frame = c.rows.iter().find(|r| r.figure == FigureKind::Frame).unwrap();
        assert!(frame.p_value.unwrap() < SIGNIFICANCE, "{frame:?}");
        assert_eq!(frame.verdict, Verdict::WithinNoise);
    }

    #[test]
    fn only_the_slowed_figure_regresses() {
        let old = results(vec![measured(16, 1.0, 1.0, 0.04)]);
        let new = results(vec![measured(16, 1.0, 3.0, 0.04)]);
        let c = compare(&old, &new);
        assert_eq!(
            verdicts(&c),
            [
                (FigureKind::Frame, Verdict::WithinNoise),
                (FigureKind::Skin, Verdict::Regressed),
                (FigureKind::Upload, Verdict::WithinNoise),
                (FigureKind::CpuPose, Verdict::WithinNoise),
            ]
        );
        assert_eq!(c.figures_with(Verdict::Regressed), ["skin"]);
        assert_eq!((c.count(Verdict::WithinNoise), c.count(Verdict::Regressed)), (3, 1));
    }

    #[test]
    fn configurations_match_by_key_and_the_rest_are_new_or_gone() {
        let old = results(vec![measured(1, 1.0, 1.0, 0.1), measured(16, 1.0, 1.0, 0.1)]);
        let mut paused = measured(16, 1.0, 1.0, 0.1);
        paused.paused = true;
        let new = results(vec![measured(16, 1.0, 1.0, 0.1), paused, measured(100, 1.0, 1.0, 0.1)]);
        let c = compare(&old, &new);
        assert!(c.rows.iter().all(|r| r.config.characters == 16 && !r.config.paused));
        let labels = |keys: &[ConfigKey]| keys.iter().map(ConfigKey::label).collect::<Vec<_>>();
        assert_eq!(
            labels(&c.new_configurations),
            [
                "built-in, 16 characters, compute, staged (paused), 1 pass",
                "built-in, 100 characters, compute, staged, 1 pass"
            ]
        );
        assert_eq!(labels(&c.gone_configurations), ["built-in, 1 character, compute, staged, 1 pass"]);
    }

    #[test]
    fn entries_without_samples_compare_medians_only() {
        // A version-1 file: timestamps, no samples.
        let mut old = results(vec![entry(16, 1, "compute", "inplace", false)]);
        old.header.gpu_timing = GpuTiming::Timestamps;
        old.header.version = 1;
        let mut slower = entry(16, 1, "compute", "inplace", false);
        slower.gpu_us.skin.median *= 2.0;
        let mut new = old.clone();
        new.entries = vec![slower];
        let c = compare(&old, &new);
        assert_eq!(
            verdicts(&c),
            [
                (FigureKind::Frame, Verdict::NoSamples),
                (FigureKind::Skin, Verdict::NoSamples),
                (FigureKind::CpuPose, Verdict::NoSamples),
            ],
            "no upload row: inplace copies nothing"
        );
        assert_eq!(c.rows[1].change_percent, Some(100.0));
        assert_eq!(c.rows[1].p_value, None);
    }

    #[test]
    fn different_clocks_are_said_and_each_side_reads_its_own() {
        let old = results(vec![measured(16, 1.0, 1.0, 0.04)]);
        let mut new = old.clone();
        new.header.gpu_timing = GpuTiming::Timestamps;
        let c = compare(&old, &new);
        assert!(c.clocks_differ);
        let skin = c.rows.iter().find(|r| r.figure == FigureKind::Skin).unwrap();
        // Host-timed 400 µs against the entry's timestamped skin pass.
        assert_eq!(skin.old_median_us, old.entries[0].skin_wall_us.map(|s| s.median));
        assert_eq!(skin.new_median_us, Some(new.entries[0].gpu_us.skin.median));
        assert_eq!(skin.new_samples, 0);
        assert_eq!(skin.verdict, Verdict::NoSamples);
    }

    #[test]
    fn nothing_measured_on_both_sides_is_unchanged_and_zero_against_some_is_not_comparable() {
        let mut paused = measured(16, 1.0, 1.0, 0.04);
        paused.staged_copy_wall_us = Some(Stat::ZERO);
        paused.samples.staged_copy_wall_us = vec![0.0; 8];
        paused.palette_bytes = 1; // keeps the upload figure, at 0 µs
        let old = results(vec![paused.clone()]);
        let c = compare(&old, &old);
        let upload = c.rows.iter().find(|r| r.figure == FigureKind::Upload).unwrap();
        assert_eq!((upload.verdict, upload.change_percent), (Verdict::WithinNoise, Some(0.0)));
        let new = results(vec![measured(16, 1.0, 1.0, 0.04)]);
        let c = compare(&old, &new);
        let upload = c.rows.iter().find(|r| r.figure == FigureKind::Upload).unwrap();
        assert_eq!((upload.verdict, upload.change_percent), (Verdict::NotComparable, None));
    }

    #[test]
    fn a_figure_measured_on_one_side_only_is_not_comparable() {
        let old = results(vec![measured(16, 1.0, 1.0, 0.04)]);
        let mut new = old.clone();
        new.entries[0].skin_wall_us = None;
        let c = compare(&old, &new);
        let skin = c.rows.iter().find(|r| r.figure == FigureKind::Skin).unwrap();
        assert_eq!(
            (skin.verdict, skin.new_median_us, skin.change_percent),
            (Verdict::NotComparable, None, None)
        );
    }
}
