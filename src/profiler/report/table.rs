//! The human-readable table `vkskin bench` prints: one row per
//! configuration, only the columns a user acts on, every GPU figure from
//! the clock the header chose ([`BenchEntry::figures`]). Everything else
//! (p95s of the other clock, per-pass times, the samples) stays in
//! results.json.

use super::numbers::number;
use super::{BenchEntry, BenchResults, Figure, Figures, GpuTiming};
use std::io::{self, Write};

/// A column: its title, whether it holds numbers (right-aligned), and its cell.
struct Column {
    title: &'static str,
    numeric: bool,
    cell: fn(&BenchEntry, &Figures) -> String,
}

const COLUMNS: &[Column] = &[
    Column { title: "model", numeric: false, cell: |e, _| e.model_name().to_string() },
    Column { title: "chars", numeric: true, cell: characters_cell },
    Column { title: "skinning", numeric: false, cell: |e, _| e.skinning_label() },
    Column { title: "upload", numeric: false, cell: |e, _| upload_cell(e) },
    Column { title: "passes", numeric: true, cell: |e, _| e.passes.to_string() },
    Column { title: "triangles/pass", numeric: true, cell: |e, _| triangles_cell(e) },
    Column { title: "pose µs", numeric: true, cell: |_, f| figure_cell(Some(f.cpu_pose)) },
    Column {
        title: "palette KiB/frame",
        numeric: true,
        // A GPU-posed crowd uploads its playback state instead.
        cell: |e, _| match e.playback_bytes {
            Some(state) if e.gpu_posed() => format!("{:.1} state", state as f64 / 1024.0),
            _ => format!("{:.1}", e.palette_bytes as f64 / 1024.0),
        },
    },
    Column { title: "upload µs", numeric: true, cell: |_, f| figure_cell(f.upload) },
    Column { title: "skin µs", numeric: true, cell: |_, f| figure_cell(f.skin) },
    Column { title: "frame µs", numeric: true, cell: |_, f| figure_cell(f.frame) },
    Column { title: "skin % of copy", numeric: true, cell: |_, f| share_cell(f) },
    Column { title: "staged/plain", numeric: true, cell: |e, _| staged_copy_cell(e) },
];

/// Writes the header line, then the table of `results` (timings as
/// `median/p95`, GPU figures from the header's clock), then a caption
/// naming that clock, to `out`.
pub fn print_table(out: &mut impl Write, results: &BenchResults) -> io::Result<()> {
    let h = &results.header;
    writeln!(out, "device: {} · driver: {} · commit {} · {}", h.device, h.driver, h.git_commit, h.date)?;
    let (_, rows) = columns(results);
    let widths: Vec<usize> = COLUMNS
        .iter()
        .enumerate()
        .map(|(i, c)| {
            rows.iter().map(|r| r[i].chars().count()).chain([c.title.chars().count()]).max().unwrap_or(0)
        })
        .collect();
    let line = |out: &mut dyn Write, cells: &mut dyn Iterator<Item = &str>| -> io::Result<()> {
        let padded: Vec<String> = cells
            .zip(COLUMNS.iter().zip(&widths))
            .map(|(cell, (c, &w))| if c.numeric { format!("{cell:>w$}") } else { format!("{cell:<w$}") })
            .collect();
        writeln!(out, "{}", padded.join("  ").trim_end())
    };
    line(out, &mut COLUMNS.iter().map(|c| c.title))?;
    for row in &rows {
        line(out, &mut row.iter().map(String::as_str))?;
    }
    let threads = match h.pose_threads {
        Some(1) => " on 1 thread".to_string(),
        Some(n) => format!(" on {n} threads"),
        None => String::new(),
    };
    let refined = if results.entries.iter().any(|e| e.refinement) {
        "; * a count measured to refine the crossover"
    } else {
        ""
    };
    let budget = match (h.max_triangles, h.gpu_frame_budget_ms) {
        (None, None) => String::new(),
        (most, gpu_frame) => {
            let most = most.map(|n| format!("within {n} in all passes together"));
            let gpu_frame = gpu_frame.map(|ms| format!("within a GPU frame budget of {ms:.1} ms"));
            let within: Vec<String> = [most, gpu_frame].into_iter().flatten().collect();
            format!(" ({}, and the pixel error where that coarsened them)", within.join(" and "))
        }
    };
    writeln!(
        out,
        "(GPU figures: {}. µs as median/p95; triangles/pass: what the characters drew per pass at \
         their detail levels{budget}, + the shadow cascades' together on 5-pass rows; pose: the CPU pose update of every character{threads}; skin % of copy: \
         the copy kernel over the skin pass's bytes / the skin pass, same clock; staged/plain: the \
         staged palette copy / one plain copy of its bytes, host-timed, on rows that copy \
         palettes{refined})",
        clock_caption(h.gpu_timing)
    )
}

/// The printed table's column titles (with whether each holds numbers)
/// and each entry's cells, for other views of the same table (the HTML
/// report shows these columns first).
pub(super) fn columns(results: &BenchResults) -> (Vec<(&'static str, bool)>, Vec<Vec<String>>) {
    let titles = COLUMNS.iter().map(|c| (c.title, c.numeric)).collect();
    let timing = results.header.gpu_timing;
    let rows = results
        .entries
        .iter()
        .map(|e| {
            let figures = e.figures(timing);
            COLUMNS.iter().map(|c| (c.cell)(e, &figures)).collect()
        })
        .collect();
    (titles, rows)
}

/// What the caption says of the clock.
fn clock_caption(timing: GpuTiming) -> &'static str {
    match timing {
        GpuTiming::Timestamps => "GPU timestamps",
        GpuTiming::HostTimed => {
            "host-timed submissions (submit to fence, minus empty ones): this device's timestamps do not \
             bracket the work"
        }
    }
}

/// The count, with "*" on the counts the crossover refinement added.
fn characters_cell(e: &BenchEntry, _: &Figures) -> String {
    if e.refinement { format!("{}*", e.characters) } else { e.characters.to_string() }
}

/// The upload mode, with ", paused" when no character moved.
fn upload_cell(e: &BenchEntry) -> String {
    if e.paused { format!("{}, paused", e.upload) } else { e.upload.clone() }
}

/// The characters' triangles per pass (`1.2M`, `45.6k`), then the shadow
/// cascades' together (`+ 3.4M`) on rows that draw them, with ", full"
/// when every character drew its full mesh, or the pixel error where a
/// triangle budget coarsened the levels (", 0.84 px"); "-" in older files.
fn triangles_cell(e: &BenchEntry) -> String {
    let Some(t) = e.triangles else { return "-".to_string() };
    let short = |t: u64| match t {
        0..1_000 => t.to_string(),
        1_000..1_000_000 => format!("{:.1}k", t as f64 / 1e3),
        _ => format!("{:.1}M", t as f64 / 1e6),
    };
    let count = match e.shadow_triangles {
        Some(s) => format!("{} + {}", short(t), short(s)),
        None => short(t),
    };
    match (e.detail.as_deref(), e.pixel_error) {
        (Some("full"), _) => format!("{count}, full"),
        (_, Some(px)) if px.is_finite() => format!("{count}, {px:.2} px"),
        (_, Some(_)) => format!("{count}, coarsest"),
        _ => count,
    }
}

/// `median/p95`, "-" for a figure the row does not have (nothing copied,
/// no skin pass, lost in the noise).
fn figure_cell(figure: Option<Figure>) -> String {
    figure.map_or_else(|| "-".to_string(), |f| format!("{}/{}", number(f.stat.median), number(f.stat.p95)))
}

/// The copy kernel / the skin pass in percent, both from the chosen clock;
/// "-" without both.
fn share_cell(f: &Figures) -> String {
    let skin = f.skin.map(|s| s.stat.median).filter(|&us| us > 0.0);
    let copy = f.copy_kernel.map(|s| s.median).filter(|&us| us > 0.0);
    match (skin, copy) {
        (Some(skin), Some(copy)) => format!("{:.1}", copy / skin * 100.0),
        _ => "-".to_string(),
    }
}

/// Staged palette copy / plain buffer copy, only on rows that copy
/// palettes (not `inplace`, some bytes moved); "-" elsewhere.
fn staged_copy_cell(e: &BenchEntry) -> String {
    let stages = e.upload != "inplace" && e.palette_bytes > 0;
    match e.staged_copy_ratio().filter(|_| stages) {
        Some(r) => format!("{r:.2}x"),
        None => "-".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::report::BenchHeader;
    use crate::profiler::report::test_data::entry;

    fn table(timing: GpuTiming, entries: Vec<BenchEntry>) -> String {
        let mut header = BenchHeader::new("llvmpipe", "Mesa 22.3.6", true, "vkskin bench --quick");
        header.gpu_timing = timing;
        header.pose_threads = Some(1);
        let mut out = Vec::new();
        print_table(&mut out, &BenchResults { header, entries }).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn one_row_per_configuration_under_a_titled_header() {
        let mut fox = entry(16, 2, "vertex", "dirty", true);
        fox.model = "../shared/assets/Fox/glTF-Binary/Fox.glb".into();
        let text = table(GpuTiming::Timestamps, vec![entry(1, 1, "compute", "inplace", false), fox]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert!(lines[0].starts_with("device: llvmpipe · driver: Mesa 22.3.6 · commit "), "{}", lines[0]);
        let titles = [
            "model",
            "chars",
            "skinning",
            "upload",
            "passes",
            "triangles/pass",
            "pose µs",
            "palette KiB/frame",
            "upload µs",
            "skin µs",
            "frame µs",
            "skin % of copy",
            "staged/plain",
        ];
        for title in titles {
            assert!(lines[1].contains(title), "{title} missing: {}", lines[1]);
        }
        assert!(!lines[1].contains("host-timed"), "one clock only: {}", lines[1]);
        let first: Vec<&str> = lines[2].split_whitespace().collect();
        // built-in, 1 char, timestamps: skin 9/11.25 us, copy 7.2 us: 80 %; palette 40 joints * 64 B
        // = 2.5 KiB; nothing copied in place: no upload time and no staged/plain ratio.
        assert_eq!(
            first,
            [
                "built-in",
                "1",
                "compute",
                "inplace",
                "1",
                "-",
                "3.00/3.75",
                "2.5",
                "-",
                "9.00/11.2",
                "31.0/38.8",
                "80.0",
                "-"
            ]
        );
        let second: Vec<&str> = lines[3].split_whitespace().collect();
        assert_eq!(&second[..6], ["Fox.glb", "16", "vertex", "dirty,", "paused", "2"], "the file name only");
        assert_eq!(second[8], "0.0", "paused dirty writes no palette");
        assert_eq!(second[second.len() - 1], "-", "nothing was copied");
        assert_eq!(second[second.len() - 2], "-", "vertex skinning has no skin pass");
        assert!(lines[4].starts_with("(GPU figures: GPU timestamps."), "{}", lines[4]);
    }

    #[test]
    fn five_pass_rows_add_the_shadow_cascades_triangles() {
        let mut shadows = entry(1000, 5, "compute", "dirty", false);
        (shadows.triangles, shadows.shadow_triangles) = (Some(1_200_000), Some(3_400_000));
        let mut main = entry(1000, 1, "compute", "dirty", false);
        (main.triangles, main.detail) = (Some(45_600), Some("full".into()));
        assert_eq!(
            (triangles_cell(&shadows), triangles_cell(&main)),
            ("1.2M + 3.4M".into(), "45.6k, full".into())
        );
    }

    /// Under a triangle budget a row shows the pixel error its levels were
    /// drawn within (or that even the coarsest were over), and the caption
    /// names the budget; without one, neither.
    #[test]
    fn rows_under_a_triangle_budget_show_their_pixel_error() {
        let mut coarser = entry(1000, 1, "compute", "inplace", false);
        (coarser.triangles, coarser.pixel_error) = (Some(99_300), Some(0.8421));
        let mut coarsest = coarser.clone();
        coarsest.pixel_error = Some(f32::INFINITY);
        assert_eq!(
            (triangles_cell(&coarser), triangles_cell(&coarsest)),
            ("99.3k, 0.84 px".into(), "99.3k, coarsest".into())
        );
        let mut header = BenchHeader::new("llvmpipe", "Mesa 22.3.6", true, "vkskin bench --quick");
        header.max_triangles = Some(100_000);
        let mut out = Vec::new();
        print_table(&mut out, &BenchResults { header, entries: vec![coarser] }).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("(within 100000 in all passes together, and the pixel error"), "{text}");
        let mut header = BenchHeader::new("llvmpipe", "Mesa 22.3.6", true, "vkskin bench --quick");
        header.gpu_frame_budget_ms = Some(16.7);
        let mut out = Vec::new();
        let entries = vec![entry(1000, 1, "compute", "inplace", false)];
        print_table(&mut out, &BenchResults { header: header.clone(), entries: entries.clone() }).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("(within a GPU frame budget of 16.7 ms, and the pixel error"), "{text}");
        header.max_triangles = Some(100_000);
        let mut out = Vec::new();
        print_table(&mut out, &BenchResults { header, entries }).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains(
                "(within 100000 in all passes together and within a GPU frame budget of 16.7 ms, and"
            ),
            "{text}"
        );
        assert!(
            !table(GpuTiming::Timestamps, vec![entry(1, 1, "compute", "inplace", false)]).contains("within")
        );
    }

    #[test]
    fn host_timed_devices_show_host_timed_figures_only() {
        let mut refined = entry(16, 1, "compute", "staged", false);
        refined.refinement = true;
        let text = table(GpuTiming::HostTimed, vec![refined]);
        let lines: Vec<&str> = text.lines().collect();
        let row: Vec<&str> = lines[2].split_whitespace().collect();
        // 32,000 vertices, 40,960 palette bytes: staged copy 19.192 us (p95 23.99), skin 115 us,
        // frame 60 + 1.5 * (6.096 + 69 + 52) = 250.644 us, copy 94 / skin 115 = 81.7 %,
        // staged 19.192 / plain 18.192 = 1.05x.
        assert_eq!(
            row,
            [
                "built-in",
                "16*",
                "compute",
                "staged",
                "1",
                "-",
                "48.0/60.0",
                "40.0",
                "19.2/24.0",
                "115/144",
                "251/313",
                "81.7",
                "1.05x"
            ]
        );
        assert!(lines[3].starts_with("(GPU figures: host-timed submissions"), "{}", lines[3]);
        assert!(lines[3].contains("* a count measured to refine the crossover"), "{}", lines[3]);
    }

    #[test]
    fn numeric_columns_line_up_on_the_right() {
        let text = table(
            GpuTiming::Timestamps,
            vec![entry(1, 1, "compute", "inplace", false), entry(1000, 5, "compute", "staged", false)],
        );
        let lines: Vec<&str> = text.lines().collect();
        let end_of = |line: &str, title: &str| line.find(title).unwrap() + title.len();
        let end = end_of(lines[1], "chars");
        assert_eq!(&lines[2][end - 1..end], "1");
        assert_eq!(&lines[3][end - 4..end], "1000");
    }
}
