//! The SVG plots `vkskin bench` writes next to results.json (plotters, SVG
//! backend): frame time, upload cost and skin throughput against the
//! character count, each titled with the device.
//!
//! Each plot holds one dimension of the sweep fixed where it would otherwise
//! stack several lines on one another (e.g. the frame-time plot shows one
//! upload mode); the note under the plot says which. A series with no
//! points is left out; a plot with no series at all is not written, and the
//! reason comes back in [`Plots::skipped`].

use super::{BenchEntry, BenchResults};
use crate::atomic_file::{self, OutputError};
use plotters::coord::combinators::LogCoord;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// GPU frame time against characters, one line per skinning mode and pass count.
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

/// Writes the three plots of `results` into `dir` (which must exist), each
/// on its own: one that cannot be drawn or written is reported in
/// [`Plots::failed`] and the others are still written. A plot without data
/// is skipped (and a stale file of that name from an earlier run removed),
/// never an error.
pub fn write_plots(dir: &Path, results: &BenchResults) -> Plots {
    let device = &results.header.device;
    let mut plots = Plots::default();
    for plot in [frame_time_plot(results), upload_plot(results), throughput_plot(results)] {
        let path = dir.join(plot.file);
        if plot.series.is_empty() {
            let _ = std::fs::remove_file(&path);
            plots.skipped.push(format!("{}: skipped, {}", plot.file, plot.empty_reason));
            continue;
        }
        let mut svg = String::new();
        let written = draw(&mut svg, &plot, device)
            .map_err(|e| OutputError::new(&path, "draw", std::io::Error::other(format!("cannot draw: {e}"))))
            .and_then(|_| atomic_file::write(&path, svg.as_bytes()));
        match written {
            Ok(()) => plots.written.push(path),
            Err(e) => plots.failed.push(e),
        }
    }
    plots
}

/// One line of a plot, points sorted by x (characters).
#[derive(Debug, Clone, PartialEq)]
struct Series {
    label: String,
    /// Lines of one group share a colour (a skinning mode, an upload mode).
    group: String,
    /// The dash pattern: an index into [`DASHES`].
    dash: usize,
    points: Vec<(f64, f64)>,
}

/// One entry's point on one series, as a plot's `lines` function names it.
struct Line {
    label: String,
    group: String,
    dash: usize,
    value: Option<f64>,
}

/// A plot's content, apart from drawing.
#[derive(Debug, Clone, PartialEq)]
struct Plot {
    file: &'static str,
    title: &'static str,
    y_label: &'static str,
    series: Vec<Series>,
    /// What was held fixed, printed under the plot.
    note: String,
    /// Why there is nothing to plot, when `series` is empty.
    empty_reason: &'static str,
}

/// The group of the copy kernel's reference line (drawn black).
const REFERENCE: &str = "copy kernel";

fn frame_time_plot(results: &BenchResults) -> Plot {
    let entries = &results.entries;
    let (upload, paused) = preferred_upload(entries);
    let mut pass_counts: Vec<u32> = entries.iter().map(|e| e.passes).collect();
    pass_counts.sort_unstable();
    pass_counts.dedup();
    let chosen = entries.iter().filter(|e| e.upload == upload && e.paused == paused);
    let series = collect(entries, chosen, |e| {
        let passes = if e.passes == 1 { "1 pass".to_string() } else { format!("{} passes", e.passes) };
        let dash = pass_counts.iter().position(|&p| p == e.passes).unwrap_or(0);
        let value = positive(e.gpu_us.frame.median);
        vec![Line {
            label: format!("{}, {passes}", e.skinning_label()),
            group: e.skinning_label(),
            dash,
            value,
        }]
    });
    Plot {
        file: FRAME_TIME_PLOT,
        title: "GPU frame time vs characters",
        y_label: "GPU frame time, median (µs, log)",
        series,
        note: format!(
            "colour: skinning mode, dashes: pass count; upload {}. Compute skins once per frame, vertex skinning once per pass.",
            upload_label(&upload, paused)
        ),
        empty_reason: "no entry has a GPU frame time",
    }
}

fn upload_plot(results: &BenchResults) -> Plot {
    let entries = &results.entries;
    let skinning = preferred_skinning(entries);
    let passes = entries.iter().map(|e| e.passes).min().unwrap_or(1);
    let chosen = entries.iter().filter(|e| e.skinning == skinning && e.passes == passes);
    let series = collect(entries, chosen, |e| {
        let mode = upload_label(&e.upload, e.paused);
        vec![
            Line {
                label: format!("{mode}: GPU copy"),
                group: mode.clone(),
                dash: 0,
                value: positive(e.gpu_us.upload.median),
            },
            Line {
                label: format!("{mode}: CPU palette write"),
                group: mode.clone(),
                dash: 1,
                value: positive(e.cpu_palette_write_us.median),
            },
        ]
    });
    Plot {
        file: UPLOAD_PLOT,
        title: "Palette upload cost vs characters",
        y_label: "median per frame (µs, log)",
        series,
        note: format!(
            "solid: GPU copy, dashed: CPU palette write; 0 µs is not drawn (inplace never copies, dirty skips unchanged poses); {skinning} skinning, {passes} pass(es)"
        ),
        empty_reason: "no entry has upload timings",
    }
}

fn throughput_plot(results: &BenchResults) -> Plot {
    let entries = &results.entries;
    let (upload, paused) = preferred_upload(entries);
    let passes = entries.iter().map(|e| e.passes).min().unwrap_or(1);
    let reference = preferred_skinning(entries);
    let chosen = entries.iter().filter(|e| e.upload == upload && e.paused == paused && e.passes == passes);
    let mut series = collect(entries, chosen, |e| {
        let mut lines = vec![Line {
            label: format!("{} skin pass", e.skinning_label()),
            group: e.skinning_label(),
            dash: 0,
            value: e.skin_vertices_per_second(),
        }];
        if e.skinning == reference {
            lines.push(Line {
                label: format!("{REFERENCE} over the {reference} pass's bytes"),
                group: REFERENCE.to_string(),
                dash: 1,
                value: e.copy_vertices_per_second(),
            });
        }
        lines
    });
    // The copy kernel is a reference for skin passes: alone, there is nothing to compare.
    if series.iter().all(|s| s.group.ends_with(REFERENCE)) {
        series.clear();
    }
    Plot {
        file: THROUGHPUT_PLOT,
        title: "Skin pass throughput vs characters",
        y_label: "vertices per second (log)",
        series,
        note: format!(
            "upload {}, {passes} pass(es); vertex skinning has no separate skin pass to time",
            upload_label(&upload, paused)
        ),
        empty_reason: "no entry has a timed skin pass",
    }
}

/// Groups `chosen` entries into series: `lines` gives, per entry, each
/// series it belongs to and its value there (None: no point). Labels and
/// groups gain the model's name when `all` holds more than one model.
/// Series keep the order they first appear in; a second value at the same
/// character count is dropped (the first configuration run wins).
fn collect<'a>(
    all: &[BenchEntry],
    chosen: impl Iterator<Item = &'a BenchEntry>,
    lines: impl Fn(&BenchEntry) -> Vec<Line>,
) -> Vec<Series> {
    let several_models = all.iter().any(|e| e.model != all[0].model);
    let mut series: Vec<Series> = Vec::new();
    for entry in chosen {
        let x = f64::from(entry.characters);
        for line in lines(entry) {
            let Some(y) = line.value else { continue };
            let (label, group) = if several_models {
                (format!("{}: {}", entry.model, line.label), format!("{}: {}", entry.model, line.group))
            } else {
                (line.label, line.group)
            };
            let index = match series.iter().position(|s| s.label == label) {
                Some(i) => i,
                None => {
                    series.push(Series { label, group, dash: line.dash, points: Vec::new() });
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
fn preferred_upload(entries: &[BenchEntry]) -> (String, bool) {
    if entries.iter().any(|e| e.upload == "inplace" && !e.paused) {
        return ("inplace".to_string(), false);
    }
    entries.first().map_or((String::new(), false), |e| (e.upload.clone(), e.paused))
}

/// The skinning mode the upload plot shows: `compute` when it ran, else the first entry's.
fn preferred_skinning(entries: &[BenchEntry]) -> String {
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

/// Length of a legend entry's line, pixels.
const LEGEND_LENGTH: i32 = 24;

/// Line colours, distinct on white and for the common colour blindnesses
/// (Okabe and Ito's palette; black is the copy kernel's).
const COLOURS: [RGBColor; 6] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
];

type DrawResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// Draws `plot` as SVG text into `svg`.
fn draw(svg: &mut String, plot: &Plot, device: &str) -> DrawResult {
    let root = SVGBackend::with_string(svg, (960, 620)).into_drawing_area();
    root.fill(&WHITE)?;
    let (chart_area, note_area) = root.split_vertically(590);
    let title = format!("{}: {device}", plot.title);
    let points = plot.series.iter().flat_map(|s| &s.points);
    let (x_min, x_max) = spread(points.clone().map(|p| p.0));
    let (y_min, y_max) = spread(points.map(|p| p.1));
    let chart = ChartBuilder::on(&chart_area)
        .caption(title, ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(76)
        .build_cartesian_2d((x_min..x_max).log_scale(), (y_min..y_max).log_scale())?;
    fill(chart, plot)?;
    note_area.draw_text(&plot.note, &("sans-serif", 13).into_font().color(&BLACK.mix(0.7)), (14, 6))?;
    root.present()?;
    Ok(())
}

/// Draws the axes, every series (a line and a dot per point, so a single
/// point shows) and the legend.
fn fill<'a>(
    mut chart: ChartContext<'a, SVGBackend<'a>, Cartesian2d<LogCoord<f64>, LogCoord<f64>>>,
    plot: &Plot,
) -> DrawResult {
    chart
        .configure_mesh()
        .x_desc("characters (log)")
        .y_desc(plot.y_label)
        .x_label_formatter(&|x| si(*x))
        .y_label_formatter(&|y| si(*y))
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 15))
        .light_line_style(BLACK.mix(0.04))
        .draw()?;
    let mut groups: Vec<&str> = Vec::new();
    for series in &plot.series {
        if !groups.contains(&series.group.as_str()) {
            groups.push(&series.group);
        }
    }
    let mut palette = COLOURS.iter().cycle();
    let colours: Vec<RGBColor> = groups
        .iter()
        .map(|g| if g.ends_with(REFERENCE) { BLACK } else { *palette.next().unwrap() })
        .collect();
    for series in &plot.series {
        let colour = colours[groups.iter().position(|g| *g == series.group).unwrap_or(0)];
        let style = colour.stroke_width(2);
        let points = series.points.iter().copied();
        let (dash, gap) = match DASHES[series.dash % DASHES.len()] {
            None => {
                chart.draw_series(LineSeries::new(points, style))?;
                (LEGEND_LENGTH, 1) // one dash the legend line's length: solid
            }
            Some((dash, gap)) => {
                chart.draw_series(DashedLineSeries::new(points, dash, gap, style))?;
                (dash, gap)
            }
        };
        // The legend entry: the line's own pattern.
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
            .label(series.label.as_str())
            .legend(move |(x, y)| {
                DashedPathElement::new(vec![(x, y), (x + LEGEND_LENGTH, y)], dash, gap, style)
            });
        chart.draw_series(series.points.iter().map(|&p| Circle::new(p, 3, colour.filled())))?;
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
    use crate::profiler::report::BenchHeader;
    use crate::profiler::report::test_data::{entry, scratch};

    const DEVICE: &str = "llvmpipe (LLVM 15.0.6, 256 bits) & <co>";

    fn results(entries: Vec<BenchEntry>) -> BenchResults {
        BenchResults {
            header: BenchHeader::new(DEVICE, "Mesa 22.3.6", true, "vkskin bench --quick"),
            entries,
        }
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

    /// Parses `path` as XML and returns its text content (titles, labels,
    /// legend): every file must be well-formed SVG.
    fn svg_text(path: &Path) -> String {
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.starts_with("<svg") || text.starts_with("<?xml"), "{}", path.display());
        assert!(text.trim_end().ends_with("</svg>"), "{}", path.display());
        let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        doc.descendants().filter_map(|n| n.text()).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn a_quick_sweep_writes_three_well_formed_svgs_titled_with_the_device() {
        let dir = scratch("plots_quick");
        std::fs::create_dir_all(&dir).unwrap();
        let plots = write_plots(&dir, &results(quick_sweep()));
        assert!(plots.skipped.is_empty(), "{:?}", plots.skipped);
        let names: Vec<_> = plots.written.iter().map(|p| p.file_name().unwrap().to_str().unwrap()).collect();
        assert_eq!(names, [FRAME_TIME_PLOT, UPLOAD_PLOT, THROUGHPUT_PLOT]);
        for path in &plots.written {
            let text = svg_text(path);
            assert!(text.contains(DEVICE), "{}: no device in\n{text}", path.display());
            assert!(text.contains("characters (log)"), "{}", path.display());
        }
        let frame = svg_text(&dir.join(FRAME_TIME_PLOT));
        for label in ["compute, 1 pass", "compute, 2 passes", "vertex, 1 pass", "vertex, 2 passes", "µs"] {
            assert!(frame.contains(label), "{label} missing:\n{frame}");
        }
        let upload = svg_text(&dir.join(UPLOAD_PLOT));
        for label in ["staged: GPU copy", "dirty (paused): CPU palette write", "µs"] {
            assert!(upload.contains(label), "{label} missing:\n{upload}");
        }
        let throughput = svg_text(&dir.join(THROUGHPUT_PLOT));
        assert!(
            throughput.contains("compute skin pass") && throughput.contains("copy kernel"),
            "{throughput}"
        );
        assert!(!throughput.contains("vertex skin pass"), "vertex skinning has no skin pass time");
    }

    #[test]
    fn the_frame_time_series_are_the_sweeps_lines() {
        let plot = frame_time_plot(&results(quick_sweep()));
        let labels: Vec<&str> = plot.series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["compute, 1 pass", "compute, 2 passes", "vertex, 1 pass", "vertex, 2 passes"]);
        // inplace held fixed: one point per character count, sorted.
        let compute_2 = &plot.series[1].points;
        let expected = |c: u32| entry(c, 2, "compute", "inplace", false).gpu_us.frame.median;
        assert_eq!(compute_2, &[(1.0, expected(1)), (16.0, expected(16))]);
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
        assert_eq!(frame_time_plot(&results).series.len(), 12);
        let throughput = throughput_plot(&results);
        let labels: Vec<&str> = throughput.series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            ["compute skin pass", "copy kernel over the compute pass's bytes", "dqs-compute skin pass"]
        );
        assert!(throughput.series.iter().all(|s| s.points.len() == 4));
        let plots = write_plots(&dir, &results);
        assert_eq!(plots.written.len(), 3);
        for path in &plots.written {
            svg_text(path);
        }
    }

    #[test]
    fn a_single_point_still_plots() {
        let dir = scratch("plots_single");
        std::fs::create_dir_all(&dir).unwrap();
        let plots = write_plots(&dir, &results(vec![entry(1, 1, "compute", "staged", false)]));
        assert_eq!(plots.written.len(), 3, "{:?}", plots.skipped);
        for path in &plots.written {
            svg_text(path);
        }
    }

    #[test]
    fn an_empty_plot_is_skipped_with_a_note_and_its_stale_file_removed() {
        let dir = scratch("plots_missing");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(THROUGHPUT_PLOT), "stale").unwrap();
        // Vertex skinning only: no skin pass, so no throughput plot.
        let plots = write_plots(&dir, &results(vec![entry(1, 1, "vertex", "inplace", false)]));
        assert_eq!(plots.written.len(), 2);
        assert_eq!(plots.skipped, [format!("{THROUGHPUT_PLOT}: skipped, no entry has a timed skin pass")]);
        assert!(!dir.join(THROUGHPUT_PLOT).exists());

        let none = write_plots(&dir, &results(Vec::new()));
        assert!(none.written.is_empty());
        assert_eq!(none.skipped.len(), 3);
    }

    #[test]
    fn several_models_are_told_apart() {
        let mut other = entry(1, 1, "compute", "inplace", false);
        other.model = "Fox.glb".into();
        let plot = frame_time_plot(&results(vec![entry(1, 1, "compute", "inplace", false), other]));
        let labels: Vec<&str> = plot.series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["built-in: compute, 1 pass", "Fox.glb: compute, 1 pass"]);
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
