//! The SVG plots `vkskin bench` writes next to results.json (plotters, SVG
//! backend), one set per model: frame time, upload cost and skin throughput
//! against the character count, each titled with the model and the device.
//!
//! Every GPU figure comes from [`BenchEntry::figures`] under the header's
//! [`GpuTiming`] (host-timed submissions where the device's timestamps do
//! not bracket the work), and the axis or note names that clock, so no plot
//! shows a figure the run's own check rejected.
//!
//! Colours and dashes mean the same in every plot: one colour per skinning
//! mode or upload mode, one dash pattern per pass
//! count, from fixed tables rather than the order series appear in. The
//! frame-time plot marks each crossover (where compute skinning's frame
//! time drops below vertex skinning's) with a vertical line and a label.
//!
//! Each plot holds one dimension of the sweep fixed where it would otherwise
//! stack several lines on one another (e.g. the frame-time plot shows one
//! upload mode); the note under the plot says which. A series with no
//! points is left out; a plot with no series at all is not written, and the
//! reason comes back in [`Plots::skipped`].
//!
//! The first model's plots keep the plain file names ([`FRAME_TIME_PLOT`],
//! ...); each further model's add its file stem (`frame_time_vs_characters-Fox.svg`).

use super::verdicts::Crossover;
use super::{BenchEntry, BenchResults, GpuTiming};
use crate::atomic_file::{self, OutputError};
use plotters::prelude::*;
use std::path::{Path, PathBuf};
use svg::{draw, pass_dash, skinning_colour, upload_colour};

mod svg;

/// Frame time against characters, one line per skinning mode and pass
/// count, crossovers marked (the first model's file name).
pub const FRAME_TIME_PLOT: &str = "frame_time_vs_characters.svg";
/// Palette upload cost (GPU copy, CPU write) against characters, per upload mode.
pub const UPLOAD_PLOT: &str = "upload_vs_characters.svg";
/// Skin pass throughput against characters, with the copy kernel's.
pub const THROUGHPUT_PLOT: &str = "skin_throughput.svg";

/// What [`write_plots`] did.
#[derive(Debug, Default)]
pub struct Plots {
    /// The SVG files written.
    pub written: Vec<PathBuf>,
    /// One line per plot not written for want of data, saying why.
    pub skipped: Vec<String>,
    /// The plots that could not be drawn or written (a full disk): each
    /// was tried on its own, and any previous file of its name is unchanged.
    pub failed: Vec<OutputError>,
}

/// One plot of a report, drawn in memory: what [`write_plots`] writes and
/// the HTML report inlines.
#[derive(Debug, Clone, PartialEq)]
pub struct DrawnPlot {
    /// Its file name in the output folder.
    pub file: String,
    /// The model it shows (as named in the entries).
    pub model: String,
    /// Its title (what it shows, the model, the device).
    pub title: String,
    /// The SVG, or why there is none.
    pub content: PlotContent,
}

/// A plot's SVG text, or why it has none.
#[derive(Debug, Clone, PartialEq)]
pub enum PlotContent {
    /// The SVG document.
    Svg(String),
    /// Nothing to plot: why (e.g. "no entry has a timed skin pass").
    Empty(&'static str),
    /// plotters could not draw it: its message.
    Failed(String),
}

/// Draws every plot of `results`, one set per model in the order the
/// models first appear, marking `crossovers` (from
/// [`Verdicts::from_results`](super::Verdicts::from_results)) on the
/// frame-time plots.
pub fn draw_plots(results: &BenchResults, crossovers: &[Crossover]) -> Vec<DrawnPlot> {
    let device = &results.header.device;
    let timing = results.header.gpu_timing;
    let mut drawn = Vec::new();
    let mut slugs: Vec<String> = Vec::new();
    for (index, model) in models(&results.entries).into_iter().enumerate() {
        let entries: Vec<&BenchEntry> = results.entries.iter().filter(|e| e.model == model).collect();
        let suffix = if index == 0 { String::new() } else { format!("-{}", unique_slug(&model, &mut slugs)) };
        let plots = [
            frame_time_plot(&entries, timing, crossovers),
            upload_plot(&entries, timing),
            throughput_plot(&entries, timing),
        ];
        for plot in plots {
            let file = match plot.file.strip_suffix(".svg") {
                Some(stem) if !suffix.is_empty() => format!("{stem}{suffix}.svg"),
                _ => plot.file.to_string(),
            };
            let title = format!("{}: {} on {device}", plot.title, short_model(&model));
            let content = if plot.series.is_empty() {
                PlotContent::Empty(plot.empty_reason)
            } else {
                let mut svg = String::new();
                match draw(&mut svg, &plot, &title) {
                    Ok(()) => PlotContent::Svg(svg),
                    Err(e) => PlotContent::Failed(e.to_string()),
                }
            };
            drawn.push(DrawnPlot { file, model: model.clone(), title, content });
        }
    }
    drawn
}

/// Writes each of `drawn` into `dir` (which must exist), each on its own:
/// one that could not be drawn or written is reported in
/// [`Plots::failed`] and the others are still written. A plot without data
/// is skipped (and a stale file of that name from an earlier run removed),
/// never an error.
pub fn write_plots(dir: &Path, drawn: &[DrawnPlot]) -> Plots {
    let mut plots = Plots::default();
    for plot in drawn {
        let path = dir.join(&plot.file);
        let written = match &plot.content {
            PlotContent::Empty(reason) => {
                let _ = std::fs::remove_file(&path);
                plots.skipped.push(format!("{}: skipped, {reason}", plot.file));
                continue;
            }
            PlotContent::Failed(e) => {
                Err(OutputError::new(&path, "draw", std::io::Error::other(format!("cannot draw: {e}"))))
            }
            PlotContent::Svg(svg) => atomic_file::write(&path, svg.as_bytes()),
        };
        match written {
            Ok(()) => plots.written.push(path),
            Err(e) => plots.failed.push(e),
        }
    }
    plots
}

/// The models of `entries`, in the order they first appear.
fn models(entries: &[BenchEntry]) -> Vec<String> {
    let mut models: Vec<String> = Vec::new();
    for e in entries {
        if !models.contains(&e.model) {
            models.push(e.model.clone());
        }
    }
    models
}

/// The model's file name without its folders, for titles
/// (`../shared/assets/Fox.glb` is `Fox.glb`).
fn short_model(model: &str) -> &str {
    let trimmed = model.trim_end_matches(['/', '\\']);
    trimmed.rsplit(['/', '\\']).next().filter(|s| !s.is_empty()).unwrap_or(model)
}

/// A file-name-safe stem of the model (letters, digits, `-` and `_`; other
/// characters `_`), not yet in `taken` (then `-2`, `-3`...), added to it.
fn unique_slug(model: &str, taken: &mut Vec<String>) -> String {
    let name = short_model(model);
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    let mut slug: String = stem
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect();
    if slug.is_empty() {
        slug = "model".to_string();
    }
    let mut unique = slug.clone();
    let mut n = 2;
    while taken.contains(&unique) {
        unique = format!("{slug}-{n}");
        n += 1;
    }
    taken.push(unique.clone());
    unique
}

/// One line of a plot, points sorted by x (characters).
#[derive(Debug, Clone, PartialEq)]
struct Series {
    label: String,
    colour: RGBColor,
    /// The dash pattern: an index into [`DASHES`].
    dash: usize,
    points: Vec<(f64, f64)>,
}

/// A vertical line at a character count, labelled (a crossover), with a
/// ring at `point` when its value there is known.
#[derive(Debug, Clone, PartialEq)]
struct Mark {
    x: f64,
    point: Option<f64>,
    label: String,
    colour: RGBColor,
    dash: usize,
}

/// One entry's point on one series, as a plot's `lines` function names it.
struct Line {
    label: String,
    colour: RGBColor,
    dash: usize,
    value: Option<f64>,
}

/// A plot's content, apart from drawing.
#[derive(Debug, Clone, PartialEq)]
struct Plot {
    file: &'static str,
    title: &'static str,
    y_label: String,
    series: Vec<Series>,
    marks: Vec<Mark>,
    /// What was held fixed and which clock, printed under the plot, a line each.
    notes: Vec<String>,
    /// Why there is nothing to plot, when `series` is empty.
    empty_reason: &'static str,
}

/// Which clock a plot's GPU figures come from, for axis labels.
fn clock(timing: GpuTiming) -> &'static str {
    match timing {
        GpuTiming::Timestamps => "GPU timestamps",
        GpuTiming::HostTimed => "host-timed",
    }
}

/// The note line naming the clock.
fn clock_note(timing: GpuTiming) -> String {
    format!("GPU figures: {}.", timing.describe())
}

fn passes_label(passes: u32) -> String {
    if passes == 1 { "1 pass".to_string() } else { format!("{passes} passes") }
}

fn frame_time_plot(entries: &[&BenchEntry], timing: GpuTiming, crossovers: &[Crossover]) -> Plot {
    let model = entries.first().map(|e| e.model.as_str()).unwrap_or_default();
    let crossovers: Vec<&Crossover> = crossovers.iter().filter(|c| c.model == model).collect();
    // The crossovers were found under one upload mode: show that one, so
    // the marks sit where the plotted lines cross.
    let (upload, paused) = match crossovers.first() {
        Some(c) if entries.iter().any(|e| e.upload == c.upload && !e.paused) => (c.upload.clone(), false),
        _ => preferred_upload(entries),
    };
    let chosen = entries.iter().copied().filter(|e| e.upload == upload && e.paused == paused);
    let series = collect(chosen, |e| {
        vec![Line {
            label: format!("{}, {}", e.skinning_label(), passes_label(e.passes)),
            colour: skinning_colour(&e.skinning_label()),
            dash: pass_dash(e.passes),
            value: e.figures(timing).frame.and_then(|f| positive(f.stat.median)),
        }]
    });
    let mut marks = Vec::new();
    let mut missing = Vec::new();
    for c in crossovers.iter().filter(|c| c.upload == upload) {
        let passes = passes_label(c.passes);
        match c.characters {
            Some(n) => marks.push(Mark {
                x: f64::from(n),
                point: positive(c.compute_us),
                label: format!("{} < {} from {n}, {passes}", c.compute, c.vertex),
                colour: skinning_colour(&c.compute),
                dash: pass_dash(c.passes),
            }),
            None => missing.push(format!(
                "{} never below {} in {}-{} characters, {passes}",
                c.compute, c.vertex, c.measured.0, c.measured.1
            )),
        }
    }
    let mut notes = vec![
        format!(
            "colour: skinning mode, dashes: pass count; upload {}. Compute skins once per frame, vertex skinning once per pass.",
            upload_label(&upload, paused)
        ),
        clock_note(timing),
    ];
    if !marks.is_empty() {
        notes.push("vertical lines: the crossovers, the smallest count from which compute's frame time stays below vertex's".into());
    }
    if !missing.is_empty() {
        notes.push(format!("no crossover: {}", missing.join("; ")));
    }
    Plot {
        file: FRAME_TIME_PLOT,
        title: "Frame time vs characters",
        y_label: format!("frame time, median (µs, {}, log)", clock(timing)),
        series,
        marks,
        notes,
        empty_reason: "no entry has a frame time",
    }
}

fn upload_plot(entries: &[&BenchEntry], timing: GpuTiming) -> Plot {
    let skinning = preferred_skinning(entries);
    let passes = entries.iter().map(|e| e.passes).min().unwrap_or(1);
    let chosen = entries.iter().copied().filter(|e| e.skinning == skinning && e.passes == passes);
    let series = collect(chosen, |e| {
        let mode = upload_label(&e.upload, e.paused);
        let colour = upload_colour(&mode);
        vec![
            Line {
                label: format!("{mode}: GPU copy"),
                colour,
                dash: 0,
                value: e.figures(timing).upload.and_then(|f| positive(f.stat.median)),
            },
            Line {
                label: format!("{mode}: CPU palette write"),
                colour,
                dash: 1,
                value: positive(e.cpu_palette_write_us.median),
            },
        ]
    });
    Plot {
        file: UPLOAD_PLOT,
        title: "Palette upload cost vs characters",
        y_label: "median per frame (µs, log)".to_string(),
        series,
        marks: Vec::new(),
        notes: vec![
            format!(
                "colour: upload mode; solid: GPU copy ({}), dashed: CPU palette write; {skinning} skinning, {}",
                clock(timing),
                passes_label(passes)
            ),
            "0 µs is not drawn (inplace never copies, dirty skips unchanged poses).".to_string(),
            clock_note(timing),
        ],
        empty_reason: "no entry has upload timings",
    }
}

fn throughput_plot(entries: &[&BenchEntry], timing: GpuTiming) -> Plot {
    let (upload, paused) = preferred_upload(entries);
    let passes = entries.iter().map(|e| e.passes).min().unwrap_or(1);
    let reference = preferred_skinning(entries);
    let chosen =
        entries.iter().copied().filter(|e| e.upload == upload && e.paused == paused && e.passes == passes);
    let mut series = collect(chosen, |e| {
        let figures = e.figures(timing);
        let mut lines = vec![Line {
            label: format!("{} skin pass", e.skinning_label()),
            colour: skinning_colour(&e.skinning_label()),
            dash: pass_dash(e.passes),
            value: figures.skin.and_then(|f| vertices_per_second(e.skinned(), f.stat.median)),
        }];
        if e.skinning == reference {
            lines.push(Line {
                label: format!("{REFERENCE} over the {reference} pass's bytes"),
                colour: BLACK,
                dash: 1,
                value: figures.copy_kernel.and_then(|s| vertices_per_second(e.scene_vertices(), s.median)),
            });
        }
        lines
    });
    // The copy kernel is a reference for skin passes: alone, there is nothing to compare.
    if series.iter().all(|s| s.label.starts_with(REFERENCE)) {
        series.clear();
    }
    Plot {
        file: THROUGHPUT_PLOT,
        title: "Skin pass throughput vs characters",
        y_label: format!("vertices per second ({}, log)", clock(timing)),
        series,
        marks: Vec::new(),
        notes: vec![
            format!(
                "upload {}, {}; vertex skinning has no separate skin pass to time; black: the copy kernel over the same bytes",
                upload_label(&upload, paused),
                passes_label(passes)
            ),
            clock_note(timing),
        ],
        empty_reason: "no entry has a timed skin pass",
    }
}

/// The label of the copy kernel's reference line (drawn black).
const REFERENCE: &str = "copy kernel";

/// `vertices` over `median_us` microseconds, per second.
fn vertices_per_second(vertices: u64, median_us: f64) -> Option<f64> {
    positive(vertices as f64 / (positive(median_us)? * 1e-6))
}

/// Groups `chosen` entries into series: `lines` gives, per entry, each
/// series it belongs to and its value there (None: no point). Series keep
/// the order they first appear in; a second value at the same character
/// count is dropped (the first configuration run wins). Refinement entries
/// are points like any other.
fn collect<'a>(
    chosen: impl Iterator<Item = &'a BenchEntry>,
    lines: impl Fn(&BenchEntry) -> Vec<Line>,
) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    for entry in chosen {
        let x = f64::from(entry.characters);
        for line in lines(entry) {
            let Some(y) = line.value else { continue };
            let index = match series.iter().position(|s| s.label == line.label) {
                Some(i) => i,
                None => {
                    series.push(Series {
                        label: line.label,
                        colour: line.colour,
                        dash: line.dash,
                        points: Vec::new(),
                    });
                    series.len() - 1
                }
            };
            if !series[index].points.iter().any(|&(px, _)| px == x) {
                series[index].points.push((x, y));
            }
        }
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    series
}

/// The upload mode the other plots show: `inplace` animated when it ran,
/// else the first entry's.
fn preferred_upload(entries: &[&BenchEntry]) -> (String, bool) {
    if entries.iter().any(|e| e.upload == "inplace" && !e.paused) {
        return ("inplace".to_string(), false);
    }
    entries.first().map_or((String::new(), false), |e| (e.upload.clone(), e.paused))
}

/// The skinning mode the upload plot shows: `compute` when it ran, else the first entry's.
fn preferred_skinning(entries: &[&BenchEntry]) -> String {
    if entries.iter().any(|e| e.skinning == "compute") {
        return "compute".to_string();
    }
    entries.first().map_or_else(String::new, |e| e.skinning.clone())
}

fn upload_label(upload: &str, paused: bool) -> String {
    if paused { format!("{upload} (paused)") } else { upload.to_string() }
}

/// `value` when finite and above 0 (a log axis cannot show the rest).
fn positive(value: f64) -> Option<f64> {
    (value.is_finite() && value > 0.0).then_some(value)
}

#[cfg(test)]
mod tests;
