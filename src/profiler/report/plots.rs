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
use plotters::coord::combinators::LogCoord;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

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
            value: figures.skin.and_then(|f| vertices_per_second(e, f.stat.median)),
        }];
        if e.skinning == reference {
            lines.push(Line {
                label: format!("{REFERENCE} over the {reference} pass's bytes"),
                colour: BLACK,
                dash: 1,
                value: figures.copy_kernel.and_then(|s| vertices_per_second(e, s.median)),
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

/// The scene's vertices over `median_us` microseconds, per second.
fn vertices_per_second(e: &BenchEntry, median_us: f64) -> Option<f64> {
    positive(e.scene_vertices() as f64 / (positive(median_us)? * 1e-6))
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

/// Dash patterns (dash, gap in pixels): solid, dashed, dotted, long dashes.
const DASHES: [Option<(i32, i32)>; 4] = [None, Some((9, 5)), Some((2, 4)), Some((18, 6))];

/// The dash pattern of a pass count, the same in every plot: 1 pass solid,
/// 2 dashed, 5 dotted, any other long dashes.
fn pass_dash(passes: u32) -> usize {
    match passes {
        1 => 0,
        2 => 1,
        5 => 2,
        _ => 3,
    }
}

/// The colour of a skinning mode (its [`BenchEntry::skinning_label`]), the
/// same in every plot: Okabe and Ito's palette, distinct on white and for
/// the common colour blindnesses. Compute `#0072B2` blue, vertex `#D55E00`
/// vermillion, dqs-compute `#009E73` green, dqs-vertex `#CC79A7` purple,
/// their CPU-split variants `#E69F00` orange and `#56B4E9` sky blue; any
/// other grey. Black is the copy kernel's.
fn skinning_colour(label: &str) -> RGBColor {
    match label {
        "compute" => RGBColor(0, 114, 178),
        "vertex" => RGBColor(213, 94, 0),
        "dqs-compute" => RGBColor(0, 158, 115),
        "dqs-vertex" => RGBColor(204, 121, 167),
        "dqs-compute, cpu split" => RGBColor(230, 159, 0),
        "dqs-vertex, cpu split" => RGBColor(86, 180, 233),
        _ => RGBColor(128, 128, 128),
    }
}

/// The colour of an upload mode (as [`upload_label`] names it), hues the
/// skinning modes do not use, so that no colour means two things in one
/// report: inplace dark grey, staged `#7570B3` violet, dirty `#A6761D`
/// brown, dirty paused `#66A61E` olive.
fn upload_colour(label: &str) -> RGBColor {
    match label {
        "inplace" => RGBColor(90, 90, 90),
        "staged" => RGBColor(117, 112, 179),
        "dirty" => RGBColor(166, 118, 29),
        "dirty (paused)" => RGBColor(102, 166, 30),
        _ => RGBColor(160, 160, 160),
    }
}

/// Length of a legend entry's line, pixels.
const LEGEND_LENGTH: i32 = 24;

/// Height of one note line under a plot, pixels.
const NOTE_LINE: u32 = 18;

type DrawResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// Draws `plot`, titled `title`, as SVG text into `svg`.
fn draw(svg: &mut String, plot: &Plot, title: &str) -> DrawResult {
    let notes_height = 12 + NOTE_LINE * plot.notes.len() as u32;
    let root = SVGBackend::with_string(svg, (960, 590 + notes_height)).into_drawing_area();
    root.fill(&WHITE)?;
    let (chart_area, note_area) = root.split_vertically(590);
    let points = plot.series.iter().flat_map(|s| &s.points);
    let marks = plot.marks.iter().map(|m| m.x);
    let (x_min, x_max) = spread(points.clone().map(|p| p.0).chain(marks));
    let (y_min, y_max) = spread(points.map(|p| p.1));
    let chart = ChartBuilder::on(&chart_area)
        .caption(title, ("sans-serif", 19))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(76)
        .build_cartesian_2d((x_min..x_max).log_scale(), (y_min..y_max).log_scale())?;
    fill(chart, plot, (y_min, y_max))?;
    let note_style = ("sans-serif", 13).into_font().color(&BLACK.mix(0.7));
    for (i, note) in plot.notes.iter().enumerate() {
        note_area.draw_text(note, &note_style, (14, 4 + NOTE_LINE as i32 * i as i32))?;
    }
    root.present()?;
    Ok(())
}

/// Draws the axes, every series (a line and a dot per point, so a single
/// point shows), the marks and the legend.
fn fill<'a>(
    mut chart: ChartContext<'a, SVGBackend<'a>, Cartesian2d<LogCoord<f64>, LogCoord<f64>>>,
    plot: &Plot,
    (y_min, y_max): (f64, f64),
) -> DrawResult {
    chart
        .configure_mesh()
        .x_desc("characters (log)")
        .y_desc(plot.y_label.as_str())
        .x_label_formatter(&|x| si(*x))
        .y_label_formatter(&|y| si(*y))
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 15))
        .light_line_style(BLACK.mix(0.04))
        .draw()?;
    for series in &plot.series {
        let style = series.colour.stroke_width(2);
        let (dash, gap) = dashed(&mut chart, series.points.iter().copied(), series.dash, style)?;
        // The legend entry: the line's own pattern.
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
            .label(series.label.as_str())
            .legend(move |(x, y)| {
                DashedPathElement::new(vec![(x, y), (x + LEGEND_LENGTH, y)], dash, gap, style)
            });
        chart.draw_series(series.points.iter().map(|&p| Circle::new(p, 3, series.colour.filled())))?;
    }
    // Crossovers: a line over the whole height, its label near the bottom
    // (log-log frame times rise to the right, leaving the lower right
    // free), stacked upward, on the side of the line with more room.
    let (x_low, x_high) = (chart.x_range().start.ln(), chart.x_range().end.ln());
    for (k, mark) in plot.marks.iter().enumerate() {
        let style = mark.colour.mix(0.8).stroke_width(1);
        dashed(&mut chart, [(mark.x, y_min), (mark.x, y_max)].into_iter(), mark.dash, style)?;
        if let Some(y) = mark.point {
            chart.draw_series([Circle::new((mark.x, y), 7, mark.colour.stroke_width(2))])?;
        }
        let height = (y_max / y_min).ln();
        let y = (y_min.ln() + height * (0.04 + 0.055 * k as f64)).exp();
        let right_half = (mark.x.ln() - x_low) / (x_high - x_low) > 0.6;
        let (dx, anchor) = if right_half { (-6, HPos::Right) } else { (6, HPos::Left) };
        let font = ("sans-serif", 13).into_font().color(&mark.colour).pos(Pos::new(anchor, VPos::Center));
        chart.draw_series([EmptyElement::at((mark.x, y)) + Text::new(mark.label.clone(), (dx, 0), font)])?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", 13))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()?;
    Ok(())
}

/// Draws a line through `points` in dash pattern `dash` (an index into
/// [`DASHES`]); returns the (dash, gap) its legend entry draws with.
fn dashed<'a>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<LogCoord<f64>, LogCoord<f64>>>,
    points: impl Iterator<Item = (f64, f64)> + Clone,
    dash: usize,
    style: ShapeStyle,
) -> Result<(i32, i32), Box<dyn std::error::Error + Send + Sync>> {
    Ok(match DASHES[dash % DASHES.len()] {
        None => {
            chart.draw_series(LineSeries::new(points, style))?;
            (LEGEND_LENGTH, 1) // one dash the legend line's length: solid
        }
        Some((dash, gap)) => {
            chart.draw_series(DashedLineSeries::new(points, dash, gap, style))?;
            (dash, gap)
        }
    })
}

/// The logarithmic axis range holding `values` (all > 0): from the power
/// of ten at or below the smallest, so the axis has a power of ten to label
/// (plotters labels a log axis from its powers of ten), to 25 % above the
/// largest. A single value, or none, still gets a range.
fn spread(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (min, max) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if !(min.is_finite() && max.is_finite() && min > 0.0) {
        return (1.0, 10.0);
    }
    (10f64.powf(min.log10().floor()), max * 1.25)
}

/// A short axis label: 950, 1.5k, 2M, 3.2G (SI prefixes, two significant digits).
fn si(value: f64) -> String {
    let magnitude = value.abs();
    let (scaled, prefix) = match magnitude {
        m if m >= 1e9 => (value / 1e9, "G"),
        m if m >= 1e6 => (value / 1e6, "M"),
        m if m >= 1e3 => (value / 1e3, "k"),
        _ => (value, ""),
    };
    let text = if scaled.abs() >= 10.0 || scaled == scaled.round() {
        format!("{scaled:.0}")
    } else if scaled.abs() >= 0.1 {
        format!("{scaled:.1}")
    } else {
        format!("{scaled:.2}")
    };
    format!("{text}{prefix}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::report::test_data::{entry, scratch};
    use crate::profiler::report::{BenchHeader, Stat};

    const DEVICE: &str = "llvmpipe (LLVM 15.0.6, 256 bits) & <co>";

    fn results(entries: Vec<BenchEntry>) -> BenchResults {
        BenchResults {
            header: BenchHeader::new(DEVICE, "Mesa 22.3.6", true, "vkskin bench --quick"),
            entries,
        }
    }

    fn host_timed(entries: Vec<BenchEntry>) -> BenchResults {
        let mut results = results(entries);
        results.header.gpu_timing = GpuTiming::HostTimed;
        results
    }

    /// The quick sweep's shape: 2 counts, 2 pass counts, both skinning
    /// paths, every upload mode, dirty also paused.
    fn quick_sweep() -> Vec<BenchEntry> {
        let mut entries = Vec::new();
        for characters in [1, 16] {
            for skinning in ["compute", "vertex"] {
                for (upload, paused) in
                    [("inplace", false), ("staged", false), ("dirty", false), ("dirty", true)]
                {
                    for passes in [1, 2] {
                        entries.push(entry(characters, passes, skinning, upload, paused));
                    }
                }
            }
        }
        entries
    }

    fn crossover(passes: u32, characters: Option<u32>) -> Crossover {
        Crossover {
            model: "built-in".into(),
            passes,
            compute: "compute".into(),
            vertex: "vertex".into(),
            upload: "inplace".into(),
            characters,
            below: characters.map(|n| n / 2),
            measured: (1, 1000),
            compute_us: 100.0 + f64::from(characters.unwrap_or(1000)),
            vertex_us: 110.0 + f64::from(characters.unwrap_or(1000)),
        }
    }

    /// Parses `svg` as XML and returns its text content (titles, labels,
    /// legend): every plot must be well-formed SVG.
    fn svg_text(svg: &str) -> String {
        assert!(svg.starts_with("<svg") || svg.starts_with("<?xml"));
        assert!(svg.trim_end().ends_with("</svg>"));
        let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        doc.descendants().filter_map(|n| n.text()).collect::<Vec<_>>().join("\n")
    }

    fn file_text(path: &Path) -> String {
        svg_text(&std::fs::read_to_string(path).unwrap())
    }

    fn series<'a>(plot: &'a Plot, label: &str) -> &'a Series {
        plot.series.iter().find(|s| s.label == label).unwrap_or_else(|| panic!("no {label} in {plot:?}"))
    }

    fn entries_of(results: &BenchResults) -> Vec<&BenchEntry> {
        results.entries.iter().collect()
    }

    #[test]
    fn a_quick_sweep_writes_three_well_formed_svgs_titled_with_the_model_and_device() {
        let dir = scratch("plots_quick");
        std::fs::create_dir_all(&dir).unwrap();
        let plots = write_plots(&dir, &draw_plots(&results(quick_sweep()), &[]));
        assert!(plots.skipped.is_empty() && plots.failed.is_empty(), "{plots:?}");
        let names: Vec<_> = plots.written.iter().map(|p| p.file_name().unwrap().to_str().unwrap()).collect();
        assert_eq!(names, [FRAME_TIME_PLOT, UPLOAD_PLOT, THROUGHPUT_PLOT]);
        for path in &plots.written {
            let text = file_text(path);
            assert!(
                text.contains(&format!("built-in on {DEVICE}")),
                "{}: no model and device in\n{text}",
                path.display()
            );
            assert!(text.contains("characters (log)"), "{}", path.display());
            assert!(text.contains("GPU figures: GPU timestamps."), "{}: no clock in\n{text}", path.display());
        }
        let frame = file_text(&dir.join(FRAME_TIME_PLOT));
        for label in [
            "compute, 1 pass",
            "compute, 2 passes",
            "vertex, 1 pass",
            "vertex, 2 passes",
            "GPU timestamps, log",
        ] {
            assert!(frame.contains(label), "{label} missing:\n{frame}");
        }
        let upload = file_text(&dir.join(UPLOAD_PLOT));
        for label in ["staged: GPU copy", "dirty (paused): CPU palette write", "µs"] {
            assert!(upload.contains(label), "{label} missing:\n{upload}");
        }
        let throughput = file_text(&dir.join(THROUGHPUT_PLOT));
        assert!(
            throughput.contains("compute skin pass") && throughput.contains("copy kernel"),
            "{throughput}"
        );
        assert!(!throughput.contains("vertex skin pass"), "vertex skinning has no skin pass time");
    }

    #[test]
    fn the_frame_time_series_are_the_sweeps_lines_from_the_chosen_clock() {
        let stamped = results(quick_sweep());
        let plot = frame_time_plot(&entries_of(&stamped), GpuTiming::Timestamps, &[]);
        let labels: Vec<&str> = plot.series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["compute, 1 pass", "compute, 2 passes", "vertex, 1 pass", "vertex, 2 passes"]);
        // inplace held fixed: one point per character count, sorted.
        let e = |c: u32| entry(c, 2, "compute", "inplace", false);
        assert_eq!(
            plot.series[1].points,
            [(1.0, e(1).gpu_us.frame.median), (16.0, e(16).gpu_us.frame.median)]
        );
        assert!(plot.y_label.contains("GPU timestamps"), "{}", plot.y_label);

        let walled = host_timed(quick_sweep());
        let plot = frame_time_plot(&entries_of(&walled), GpuTiming::HostTimed, &[]);
        let wall = |c: u32| e(c).frame_wall_us.unwrap().median;
        assert_eq!(series(&plot, "compute, 2 passes").points, [(1.0, wall(1)), (16.0, wall(16))]);
        assert!(plot.y_label.contains("host-timed"), "{}", plot.y_label);
        assert!(plot.notes.iter().any(|n| n.contains("do not bracket the work")), "{:?}", plot.notes);
    }

    /// lavapipe's failure: timestamps that do not bracket the dispatch
    /// make 1,000 Foxes' skin pass look like 9 µs (2e11 vertices per
    /// second on a 2-core CPU). Host-timed, the plot shows what the
    /// dispatch took.
    #[test]
    fn throughput_comes_from_the_chosen_clock_and_stays_within_reach() {
        let mut fox = entry(1000, 1, "compute", "inplace", false);
        fox.vertices = 1728;
        fox.gpu_us.skin = Stat { median: 9.0, p95: 11.0 };
        fox.copy_kernel_us = Stat { median: 7.0, p95: 8.0 };
        fox.skin_wall_us = Some(Stat { median: 24_000.0, p95: 26_000.0 });
        fox.copy_kernel_wall_us = Some(Stat { median: 9_000.0, p95: 9_500.0 });
        let vertices = 1728.0 * 1000.0;

        let walled = host_timed(vec![fox.clone()]);
        let plot = throughput_plot(&entries_of(&walled), GpuTiming::HostTimed);
        let skin = series(&plot, "compute skin pass").points[0].1;
        assert!((skin - vertices / 24_000e-6).abs() < 1e-3, "{skin}");
        let copy = series(&plot, "copy kernel over the compute pass's bytes").points[0].1;
        assert!((copy - vertices / 9_000e-6).abs() < 1e-3, "{copy}");
        let highest = plot.series.iter().flat_map(|s| &s.points).map(|p| p.1).fold(0.0, f64::max);
        assert!(highest < 1e9, "a 2-core CPU does not skin {highest} vertices per second");
        assert!(plot.y_label.contains("host-timed"));

        // The same entry under timestamps (a file from a device whose
        // timestamps bracket the work) plots the timestamped figure.
        let stamped = results(vec![fox]);
        let plot = throughput_plot(&entries_of(&stamped), GpuTiming::Timestamps);
        assert!((series(&plot, "compute skin pass").points[0].1 - vertices / 9e-6).abs() < 1.0);
    }

    #[test]
    fn the_upload_plot_reads_the_chosen_clock() {
        let walled = host_timed(quick_sweep());
        let plot = upload_plot(&entries_of(&walled), GpuTiming::HostTimed);
        let staged = entry(16, 1, "compute", "staged", false);
        let points = &series(&plot, "staged: GPU copy").points;
        assert_eq!(points[1], (16.0, staged.staged_copy_wall_us.unwrap().median));
        assert!(plot.series.iter().all(|s| s.label != "inplace: GPU copy"), "inplace copies nothing");
        assert!(
            plot.series.iter().all(|s| s.label != "dirty (paused): GPU copy"),
            "paused dirty copies nothing"
        );
    }

    #[test]
    fn host_timed_results_without_host_timed_figures_skip_the_plot_rather_than_show_timestamps() {
        let mut old = entry(1, 1, "compute", "inplace", false);
        old.frame_wall_us = None;
        old.skin_wall_us = None;
        old.copy_kernel_wall_us = None;
        let drawn = draw_plots(&host_timed(vec![old]), &[]);
        assert_eq!(drawn[0].content, PlotContent::Empty("no entry has a frame time"));
        assert_eq!(drawn[2].content, PlotContent::Empty("no entry has a timed skin pass"));
    }

    #[test]
    fn colours_follow_the_mode_and_dashes_the_pass_count_whatever_the_order() {
        let forward = results(quick_sweep());
        let mut backward = quick_sweep();
        backward.reverse();
        let backward = results(backward);
        let [a, b] =
            [&forward, &backward].map(|r| frame_time_plot(&entries_of(r), GpuTiming::Timestamps, &[]));
        for s in &a.series {
            let other = series(&b, &s.label);
            assert_eq!((s.colour, s.dash), (other.colour, other.dash), "{}", s.label);
        }
        assert_eq!(series(&a, "compute, 1 pass").colour, RGBColor(0, 114, 178));
        assert_eq!(series(&a, "vertex, 2 passes").colour, RGBColor(213, 94, 0));
        assert_eq!(series(&a, "vertex, 1 pass").dash, 0);
        assert_eq!(series(&a, "compute, 2 passes").dash, 1);

        // 2 passes only: the throughput plot's skin line is dashed as on the frame-time plot.
        let two: Vec<BenchEntry> = quick_sweep().into_iter().filter(|e| e.passes == 2).collect();
        let two = results(two);
        let throughput = throughput_plot(&entries_of(&two), GpuTiming::Timestamps);
        let skin = series(&throughput, "compute skin pass");
        assert_eq!((skin.colour, skin.dash), (RGBColor(0, 114, 178), 1));

        // No colour means two things in one report.
        let upload: Vec<RGBColor> =
            ["inplace", "staged", "dirty", "dirty (paused)"].into_iter().map(upload_colour).collect();
        let skinning: Vec<RGBColor> = [
            "compute",
            "vertex",
            "dqs-compute",
            "dqs-vertex",
            "dqs-compute, cpu split",
            "dqs-vertex, cpu split",
        ]
        .into_iter()
        .map(skinning_colour)
        .collect();
        let all: Vec<RGBColor> = upload.iter().chain(&skinning).copied().chain([BLACK]).collect();
        for (i, c) in all.iter().enumerate() {
            assert!(!all[i + 1..].contains(c), "{c:?} twice");
        }
    }

    #[test]
    fn a_crossover_is_marked_and_labelled_on_the_frame_time_plot() {
        let mut entries = Vec::new();
        for characters in [1, 10, 100, 1000] {
            for skinning in ["compute", "vertex"] {
                for passes in [1, 2] {
                    entries.push(entry(characters, passes, skinning, "inplace", false));
                }
            }
        }
        let results = results(entries);
        let crossovers = [crossover(2, Some(24)), crossover(1, None)];
        let plot = frame_time_plot(&entries_of(&results), GpuTiming::Timestamps, &crossovers);
        assert_eq!(plot.marks.len(), 1, "{:?}", plot.marks);
        let mark = &plot.marks[0];
        assert_eq!(mark.x, 24.0);
        assert_eq!(mark.point, Some(124.0));
        assert_eq!(mark.label, "compute < vertex from 24, 2 passes");
        assert_eq!((mark.colour, mark.dash), (skinning_colour("compute"), pass_dash(2)));
        assert!(
            plot.notes.iter().any(|n| n.contains("compute never below vertex in 1-1000 characters, 1 pass")),
            "{:?}",
            plot.notes
        );

        let drawn = draw_plots(&results, &crossovers);
        let PlotContent::Svg(svg) = &drawn[0].content else { panic!("{:?}", drawn[0].content) };
        let text = svg_text(svg);
        assert!(text.contains("compute < vertex from 24, 2 passes"), "{text}");
        assert!(text.contains("no crossover: compute never below vertex"), "{text}");
        // The line is in compute's colour, as the label.
        assert!(svg.contains("#0072B2"), "no compute-coloured mark");

        // Another model's crossover is not marked here.
        let mut elsewhere = crossover(2, Some(24));
        elsewhere.model = "Fox.glb".into();
        assert!(frame_time_plot(&entries_of(&results), GpuTiming::Timestamps, &[elsewhere]).marks.is_empty());
    }

    #[test]
    fn the_frame_time_plot_shows_the_upload_mode_its_crossovers_were_found_with() {
        let results = results(quick_sweep());
        let mut staged = crossover(1, Some(16));
        staged.upload = "staged".into();
        let plot = frame_time_plot(&entries_of(&results), GpuTiming::Timestamps, &[staged]);
        assert!(plot.notes[0].contains("upload staged."), "{:?}", plot.notes);
        assert_eq!(plot.marks.len(), 1);
        let staged_16 = entry(16, 1, "compute", "staged", false).gpu_us.frame.median;
        assert_eq!(series(&plot, "compute, 1 pass").points[1], (16.0, staged_16));
    }

    #[test]
    fn refinement_entries_are_points_on_the_lines() {
        let mut entries =
            vec![entry(1, 1, "compute", "inplace", false), entry(100, 1, "compute", "inplace", false)];
        let mut refined = entry(24, 1, "compute", "inplace", false);
        refined.refinement = true;
        entries.push(refined);
        let results = results(entries);
        let plot = frame_time_plot(&entries_of(&results), GpuTiming::Timestamps, &[]);
        let xs: Vec<f64> = plot.series[0].points.iter().map(|p| p.0).collect();
        assert_eq!(xs, [1.0, 24.0, 100.0]);
    }

    #[test]
    fn a_full_sweep_draws_a_line_per_skinning_mode_and_pass_count() {
        let dir = scratch("plots_full");
        std::fs::create_dir_all(&dir).unwrap();
        let mut entries = Vec::new();
        for characters in [1, 10, 100, 1000] {
            for skinning in ["compute", "vertex", "dqs-compute", "dqs-vertex"] {
                for passes in [1, 2, 5] {
                    for (upload, paused) in [("inplace", false), ("staged", false), ("dirty", true)] {
                        entries.push(entry(characters, passes, skinning, upload, paused));
                    }
                }
            }
        }
        let results = results(entries);
        let all = entries_of(&results);
        let frame = frame_time_plot(&all, GpuTiming::Timestamps, &[]);
        assert_eq!(frame.series.len(), 12);
        assert_eq!(series(&frame, "dqs-vertex, 5 passes").dash, 2);
        let throughput = throughput_plot(&all, GpuTiming::Timestamps);
        let labels: Vec<&str> = throughput.series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            ["compute skin pass", "copy kernel over the compute pass's bytes", "dqs-compute skin pass"]
        );
        assert!(throughput.series.iter().all(|s| s.points.len() == 4));
        let plots = write_plots(&dir, &draw_plots(&results, &[]));
        assert_eq!(plots.written.len(), 3);
        for path in &plots.written {
            file_text(path);
        }
    }

    #[test]
    fn a_single_point_still_plots() {
        let dir = scratch("plots_single");
        std::fs::create_dir_all(&dir).unwrap();
        let plots =
            write_plots(&dir, &draw_plots(&results(vec![entry(1, 1, "compute", "staged", false)]), &[]));
        assert_eq!(plots.written.len(), 3, "{:?}", plots.skipped);
        for path in &plots.written {
            file_text(path);
        }
    }

    #[test]
    fn an_empty_plot_is_skipped_with_a_note_and_its_stale_file_removed() {
        let dir = scratch("plots_missing");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(THROUGHPUT_PLOT), "stale").unwrap();
        // Vertex skinning only: no skin pass, so no throughput plot.
        let plots =
            write_plots(&dir, &draw_plots(&results(vec![entry(1, 1, "vertex", "inplace", false)]), &[]));
        assert_eq!(plots.written.len(), 2);
        assert_eq!(plots.skipped, [format!("{THROUGHPUT_PLOT}: skipped, no entry has a timed skin pass")]);
        assert!(!dir.join(THROUGHPUT_PLOT).exists());

        assert!(draw_plots(&results(Vec::new()), &[]).is_empty(), "no model, no plot");
    }

    #[test]
    fn several_models_get_a_set_of_plots_each() {
        let mut fox = entry(1, 1, "compute", "inplace", false);
        fox.model = "../shared/assets/Fox/glTF-Binary/Fox.glb".into();
        let mut other_fox = fox.clone();
        other_fox.model = "elsewhere/Fox.glb".into();
        let results = results(vec![entry(1, 1, "compute", "inplace", false), fox, other_fox]);
        let drawn = draw_plots(&results, &[]);
        let files: Vec<&str> = drawn.iter().map(|d| d.file.as_str()).collect();
        assert_eq!(
            files,
            [
                FRAME_TIME_PLOT,
                UPLOAD_PLOT,
                THROUGHPUT_PLOT,
                "frame_time_vs_characters-Fox.svg",
                "upload_vs_characters-Fox.svg",
                "skin_throughput-Fox.svg",
                "frame_time_vs_characters-Fox-2.svg",
                "upload_vs_characters-Fox-2.svg",
                "skin_throughput-Fox-2.svg",
            ]
        );
        assert_eq!(drawn[3].title, format!("Frame time vs characters: Fox.glb on {DEVICE}"));
        let PlotContent::Svg(svg) = &drawn[3].content else { panic!() };
        let text = svg_text(svg);
        assert!(text.contains("compute, 1 pass") && !text.contains("built-in"), "{text}");
    }

    #[test]
    fn model_names_become_safe_file_stems() {
        let mut taken = Vec::new();
        assert_eq!(unique_slug("a/b/My Model.v2.gltf", &mut taken), "My_Model_v2");
        assert_eq!(unique_slug("<&>", &mut taken), "___");
        assert_eq!(unique_slug("dir/", &mut taken), "dir");
        assert_eq!(unique_slug(".glb", &mut taken), "model");
    }

    #[test]
    fn axis_labels_are_short() {
        assert_eq!(si(1.0), "1");
        assert_eq!(si(16.0), "16");
        assert_eq!(si(1500.0), "1.5k");
        assert_eq!(si(2.0e6), "2M");
        assert_eq!(si(3.25e9), "3.2G");
        assert_eq!(si(0.05), "0.05");
    }

    #[test]
    fn ranges_hold_a_single_value_and_no_value() {
        assert_eq!(spread([10.0].into_iter()), (10.0, 12.5));
        assert_eq!(spread([16.0, 1.0].into_iter()), (1.0, 20.0));
        assert_eq!(spread([3.3e5, 9e5].into_iter()), (1e5, 1.125e6));
        assert_eq!(spread(std::iter::empty()), (1.0, 10.0));
    }
}
