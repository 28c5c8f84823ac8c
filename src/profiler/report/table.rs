//! The human-readable table `vkskin bench` prints: one row per configuration.

use super::{BenchEntry, BenchResults, Stat};
use std::io::{self, Write};

/// A column: its title, whether it holds numbers (right-aligned), and its cell.
struct Column {
    title: &'static str,
    numeric: bool,
    cell: fn(&BenchEntry) -> String,
}

const COLUMNS: &[Column] = &[
    Column { title: "model", numeric: false, cell: |e| e.model.clone() },
    Column { title: "chars", numeric: true, cell: |e| e.characters.to_string() },
    Column { title: "skinning", numeric: false, cell: |e| e.skinning_label() },
    Column { title: "upload", numeric: false, cell: upload_cell },
    Column { title: "passes", numeric: true, cell: |e| e.passes.to_string() },
    Column { title: "pose µs", numeric: true, cell: |e| stat_cell(&e.cpu_pose_us) },
    Column {
        title: "palette KiB/frame",
        numeric: true,
        cell: |e| format!("{:.1}", e.palette_bytes as f64 / 1024.0),
    },
    Column { title: "upload µs", numeric: true, cell: |e| stat_cell(&e.gpu_us.upload) },
    Column { title: "skin µs", numeric: true, cell: |e| stat_cell(&e.gpu_us.skin) },
    Column { title: "frame µs", numeric: true, cell: |e| stat_cell(&e.gpu_us.frame) },
    Column { title: "skin eff. %", numeric: true, cell: efficiency_cell },
    Column { title: "host-timed eff. %", numeric: true, cell: wall_efficiency_cell },
    Column { title: "staged/plain copy", numeric: true, cell: staged_copy_cell },
];

/// Writes the header line, then the table of `results` (timings as
/// `median/p95`, GPU figures from timestamps) to `out`.
pub fn print_table(out: &mut impl Write, results: &BenchResults) -> io::Result<()> {
    let h = &results.header;
    writeln!(out, "device: {} · driver: {} · commit {} · {}", h.device, h.driver, h.git_commit, h.date)?;
    let rows: Vec<Vec<String>> =
        results.entries.iter().map(|e| COLUMNS.iter().map(|c| (c.cell)(e)).collect()).collect();
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
    writeln!(
        out,
        "(µs: GPU timestamps except pose, median/p95 over the timed frames; skin eff. = copy kernel / skin pass; \
         host-timed eff.: the same from isolated submissions timed by the host; staged/plain copy: \
         the staged palette copy of the scene / one vkCmdCopyBuffer of its bytes from a host-visible \
         buffer just written into a device-local one, host-timed)"
    )
}

/// The printed table's column titles (with whether each holds numbers)
/// and each entry's cells, for other views of the same table (the HTML
/// report shows these columns first).
pub(super) fn columns(results: &BenchResults) -> (Vec<(&'static str, bool)>, Vec<Vec<String>>) {
    let titles = COLUMNS.iter().map(|c| (c.title, c.numeric)).collect();
    let rows = results.entries.iter().map(|e| COLUMNS.iter().map(|c| (c.cell)(e)).collect()).collect();
    (titles, rows)
}

/// The upload mode, with ", paused" when no character moved.
fn upload_cell(e: &BenchEntry) -> String {
    if e.paused { format!("{}, paused", e.upload) } else { e.upload.clone() }
}

/// `median/p95`, with fewer decimals as the figures grow.
fn stat_cell(s: &Stat) -> String {
    format!("{}/{}", number(s.median), number(s.p95))
}

/// Three significant digits or more: 1.23, 12.3, 123, 12345.
pub(super) fn number(value: f64) -> String {
    let decimals = match value.abs() {
        v if v < 10.0 => 2,
        v if v < 100.0 => 1,
        _ => 0,
    };
    format!("{value:.decimals$}")
}

/// Skin efficiency from host-timed runs in percent, "-" without them.
fn wall_efficiency_cell(e: &BenchEntry) -> String {
    e.skin_efficiency_wall().map_or_else(|| "-".to_string(), |r| format!("{:.1}", r * 100.0))
}

/// Staged palette copy / plain buffer copy, "-" without both.
fn staged_copy_cell(e: &BenchEntry) -> String {
    e.staged_copy_ratio().map_or_else(|| "-".to_string(), |r| format!("{r:.2}x"))
}

/// Skin efficiency in percent, "-" without a skin pass.
fn efficiency_cell(e: &BenchEntry) -> String {
    e.skin_efficiency().map_or_else(|| "-".to_string(), |r| format!("{:.1}", r * 100.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::report::BenchHeader;
    use crate::profiler::report::test_data::entry;

    fn table(entries: Vec<BenchEntry>) -> String {
        let header = BenchHeader::new("llvmpipe", "Mesa 22.3.6", true, "vkskin bench --quick");
        let mut out = Vec::new();
        print_table(&mut out, &BenchResults { header, entries }).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn one_row_per_configuration_under_a_titled_header() {
        let text =
            table(vec![entry(1, 1, "compute", "inplace", false), entry(16, 2, "vertex", "dirty", true)]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert!(lines[0].starts_with("device: llvmpipe · driver: Mesa 22.3.6 · commit "), "{}", lines[0]);
        for title in [
            "model",
            "chars",
            "skinning",
            "upload",
            "passes",
            "pose µs",
            "palette KiB/frame",
            "skin eff. %",
            "host-timed eff. %",
            "staged/plain copy",
        ] {
            assert!(lines[1].contains(title), "{title} missing: {}", lines[1]);
        }
        let first: Vec<&str> = lines[2].split_whitespace().collect();
        // built-in, 1 char: skin 7/8.75 us, copy 7.2 us: 102.9 %; palette 40 joints * 64 B = 2.5 KiB.
        assert_eq!(
            first,
            [
                "built-in",
                "1",
                "compute",
                "inplace",
                "1",
                "3.00/3.75",
                "2.5",
                "0.00/0.00",
                "9.00/11.2",
                "31.0/38.8",
                "80.0",
                // Host-timed: copy 34 us / skin 40 us.
                "85.0",
                // Staged 11.512 us / plain 10.512 us over 2,560 bytes.
                "1.10x"
            ]
        );
        let second: Vec<&str> = lines[3].split_whitespace().collect();
        assert_eq!(&second[..6], ["built-in", "16", "vertex", "dirty,", "paused", "2"]);
        assert_eq!(second[second.len() - 2], "-", "vertex skinning has no host-timed dispatch");
        assert_eq!(second[7], "0.0", "paused dirty writes no palette");
    }

    #[test]
    fn numeric_columns_line_up_on_the_right() {
        let text =
            table(vec![entry(1, 1, "compute", "inplace", false), entry(1000, 5, "compute", "staged", false)]);
        let lines: Vec<&str> = text.lines().collect();
        let end_of = |line: &str, title: &str| line.find(title).unwrap() + title.len();
        let end = end_of(lines[1], "chars");
        assert_eq!(&lines[2][end - 1..end], "1");
        assert_eq!(&lines[3][end - 4..end], "1000");
    }

    #[test]
    fn numbers_keep_three_significant_digits() {
        assert_eq!(number(1.23456), "1.23");
        assert_eq!(number(12.3456), "12.3");
        assert_eq!(number(12345.6), "12346");
    }
}
