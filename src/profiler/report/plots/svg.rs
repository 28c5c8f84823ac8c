//! How a plot is drawn as SVG (plotters): the dash and colour tables every
//! plot shares, log axes, the legend, the notes under the chart. It never
//! decides what a plot shows (see the parent module).

use super::Plot;
use plotters::coord::combinators::LogCoord;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Dash patterns (dash, gap in pixels): solid, dashed, dotted, long dashes.
pub(super) const DASHES: [Option<(i32, i32)>; 4] = [None, Some((9, 5)), Some((2, 4)), Some((18, 6))];

/// The dash pattern of a pass count, the same in every plot: 1 pass solid,
/// 2 dashed, 5 dotted, any other long dashes.
pub(super) fn pass_dash(passes: u32) -> usize {
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
pub(super) fn skinning_colour(label: &str) -> RGBColor {
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
pub(super) fn upload_colour(label: &str) -> RGBColor {
    match label {
        "inplace" => RGBColor(90, 90, 90),
        "staged" => RGBColor(117, 112, 179),
        "dirty" => RGBColor(166, 118, 29),
        "dirty (paused)" => RGBColor(102, 166, 30),
        _ => RGBColor(160, 160, 160),
    }
}

/// Length of a legend entry's line, pixels.
pub(super) const LEGEND_LENGTH: i32 = 24;

/// Height of one note line under a plot, pixels.
pub(super) const NOTE_LINE: u32 = 18;

type DrawResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// Draws `plot`, titled `title`, as SVG text into `svg`.
pub(super) fn draw(svg: &mut String, plot: &Plot, title: &str) -> DrawResult {
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
pub(super) fn fill<'a>(
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
pub(super) fn dashed<'a>(
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
pub(super) fn spread(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (min, max) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if !(min.is_finite() && max.is_finite() && min > 0.0) {
        return (1.0, 10.0);
    }
    (10f64.powf(min.log10().floor()), max * 1.25)
}

/// A short axis label: 950, 1.5k, 2M, 3.2G (SI prefixes, two significant digits).
pub(super) fn si(value: f64) -> String {
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
