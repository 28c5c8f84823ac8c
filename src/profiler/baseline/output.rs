//! What a comparison shows: a summary line, the notes, the table on stdout,
//! and `comparison.json` in the new run's folder.

use super::compare::{Comparison, ConfigKey, Verdict};
use crate::atomic_file;
use crate::profiler::report::numbers::number;
use crate::profiler::report::{BenchResults, RESULTS_FILE, ReportError, read_json};
use serde::Serialize;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The comparison file's name inside the new run's folder.
pub const COMPARISON_FILE: &str = "comparison.json";

/// The format of `comparison.json`; fields may be added, never renamed.
pub const COMPARISON_VERSION: u32 = 1;

/// The results of the run in `dir` (`dir/results.json`); an error names the file.
pub fn read_results(dir: &Path) -> Result<BenchResults, ReportError> {
    read_json(&dir.join(RESULTS_FILE))
}

/// The summary line: "12 within noise, 3 regressed (skin), 0 improved",
/// then the rows without samples and those not comparable, when any.
pub fn summary(c: &Comparison) -> String {
    let with_figures = |verdict: Verdict| {
        let n = c.count(verdict);
        let figures = c.figures_with(verdict);
        if figures.is_empty() {
            format!("{n} {}", verdict.name())
        } else {
            format!("{n} {} ({})", verdict.name(), figures.join(", "))
        }
    };
    let mut parts = vec![
        format!("{} {}", c.count(Verdict::WithinNoise), Verdict::WithinNoise.name()),
        with_figures(Verdict::Regressed),
        with_figures(Verdict::Improved),
    ];
    for verdict in [Verdict::NoSamples, Verdict::NotComparable] {
        let n = c.count(verdict);
        if n > 0 {
            parts.push(format!("{n} {}", verdict.name()));
        }
    }
    parts.join(", ")
}

/// Writes the summary, the notes (clocks, new and gone configurations) and
/// the table: configuration, figure, old and new medians, change, verdict.
pub fn print_comparison(
    out: &mut impl Write,
    c: &Comparison,
    old_dir: &Path,
    new_dir: &Path,
) -> io::Result<()> {
    writeln!(out, "{}", summary(c))?;
    writeln!(
        out,
        "baseline {} (commit {}, {}) against {} (commit {}, {})",
        old_dir.display(),
        c.old.commit,
        c.old.date,
        new_dir.display(),
        c.new.commit,
        c.new.date
    )?;
    if c.old.device != c.new.device {
        writeln!(out, "note: different devices: {} against {}", c.old.device, c.new.device)?;
    }
    if c.old.pose_threads != c.new.pose_threads {
        let threads = |t: Option<u32>| t.map_or_else(|| "unrecorded".to_string(), |n| n.to_string());
        writeln!(
            out,
            "note: the crowds posed on different thread counts: {} in the baseline, {} now",
            threads(c.old.pose_threads),
            threads(c.new.pose_threads)
        )?;
    }
    if c.old.max_triangles != c.new.max_triangles {
        let budget = |t: Option<u64>| t.map(|n| n.to_string());
        let (old, new) = (budget(c.old.max_triangles), budget(c.new.max_triangles));
        budgets_differ(out, "triangle budgets (--max-triangles)", old, new)?;
    }
    if c.old.gpu_frame_budget_ms != c.new.gpu_frame_budget_ms {
        let budget = |ms: Option<f64>| ms.map(|ms| format!("{ms:.1} ms"));
        let (old, new) = (budget(c.old.gpu_frame_budget_ms), budget(c.new.gpu_frame_budget_ms));
        budgets_differ(out, "GPU frame budgets (--gpu-frame-budget)", old, new)?;
    }
    if c.clocks_differ {
        writeln!(
            out,
            "note: the GPU figures come from different clocks: {} in the baseline, {} now",
            c.old.gpu_timing.describe(),
            c.new.gpu_timing.describe()
        )?;
    }
    for (what, keys) in [("new", &c.new_configurations), ("gone", &c.gone_configurations)] {
        if !keys.is_empty() {
            let labels: Vec<String> = keys.iter().map(ConfigKey::label).collect();
            writeln!(out, "{what} configurations ({}): {}", keys.len(), labels.join("; "))?;
        }
    }
    let titles = ["configuration", "figure", "old µs", "new µs", "change", "verdict"];
    let numeric = [false, false, true, true, true, false];
    let rows: Vec<[String; 6]> = c
        .rows
        .iter()
        .map(|r| {
            [
                r.config.label(),
                r.figure.name().to_string(),
                r.old_median_us.map_or_else(dash, number),
                r.new_median_us.map_or_else(dash, number),
                r.change_percent.map_or_else(dash, |p| format!("{p:+.1} %")),
                r.verdict.name().to_string(),
            ]
        })
        .collect();
    let widths: [usize; 6] = std::array::from_fn(|i| {
        rows.iter().map(|r| r[i].chars().count()).chain([titles[i].chars().count()]).max().unwrap_or(0)
    });
    let line = |out: &mut dyn Write, cells: [&str; 6]| -> io::Result<()> {
        let padded: Vec<String> = (0..6)
            .map(|i| {
                let w = widths[i];
                if numeric[i] { format!("{:>w$}", cells[i]) } else { format!("{:<w$}", cells[i]) }
            })
            .collect();
        writeln!(out, "{}", padded.join("  ").trim_end())
    };
    writeln!(out)?;
    line(out, titles)?;
    for r in &rows {
        line(out, std::array::from_fn(|i| r[i].as_str()))?;
    }
    writeln!(
        out,
        "(medians; regressed/improved: p < 0.05 in a bootstrap of the per-frame samples and the \
         whole 95 % interval of the change beyond the noise threshold: 5 % for GPU figures, 2 % for \
         the CPU pose)"
    )
}

/// The note for two runs whose crowds were drawn within different detail
/// limits (`what`: "triangle budgets (--max-triangles)"), each as written
/// (`None`: no limit).
fn budgets_differ(
    out: &mut impl Write,
    what: &str,
    old: Option<String>,
    new: Option<String>,
) -> io::Result<()> {
    writeln!(
        out,
        "note: the crowds were drawn within different {what}: {} in the baseline, {} now; their levels, \
         and so their frames, differ by design",
        old.as_deref().unwrap_or("none"),
        new.as_deref().unwrap_or("none")
    )
}

/// "-" for a missing cell.
fn dash() -> String {
    "-".to_string()
}

/// `comparison.json`: the folders compared, then the comparison.
#[derive(Serialize)]
struct ComparisonFile<'a> {
    version: u32,
    old_folder: String,
    new_folder: String,
    summary: String,
    #[serde(flatten)]
    comparison: &'a Comparison,
}

/// Writes `new_dir/comparison.json` (atomically) and returns its path.
pub fn write_comparison(c: &Comparison, old_dir: &Path, new_dir: &Path) -> Result<PathBuf, ReportError> {
    let path = new_dir.join(COMPARISON_FILE);
    let file = ComparisonFile {
        version: COMPARISON_VERSION,
        old_folder: old_dir.display().to_string(),
        new_folder: new_dir.display().to_string(),
        summary: summary(c),
        comparison: c,
    };
    let mut text = serde_json::to_string_pretty(&file)
        .map_err(|source| ReportError::Encode { path: path.clone(), source })?;
    text.push('\n');
    atomic_file::write(&path, text.as_bytes())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::baseline::compare;
    use crate::profiler::report::test_data::{entry, scratch};
    use crate::profiler::report::{BenchHeader, write_json};

    fn results(skin_us: f64) -> BenchResults {
        let header = BenchHeader::new("llvmpipe", "Mesa", true, "vkskin bench --quick");
        let mut e = entry(16, 1, "compute", "inplace", false);
        e.gpu_us.skin.median = skin_us;
        BenchResults { header, entries: vec![e] }
    }

    #[test]
    fn the_summary_names_the_figures_that_moved() {
        let c = compare(&results(100.0), &results(100.0));
        assert_eq!(summary(&c), "0 within noise, 0 regressed, 0 improved, 3 no samples");
        let mut text = Vec::new();
        print_comparison(&mut text, &c, Path::new("old"), Path::new("new")).unwrap();
        let text = String::from_utf8(text).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].starts_with("baseline old (commit "), "{text}");
        assert!(lines[3].starts_with("configuration") && lines[3].ends_with("verdict"), "{text}");
        assert!(lines[5].starts_with("built-in, 16 characters, compute, inplace, 1 pass  skin"), "{text}");
        assert!(lines[5].ends_with("+0.0 %  no samples"), "{text}");
    }

    /// Runs whose crowds posed on different thread counts say so: their
    /// pose and record figures are per frame on those threads.
    #[test]
    fn different_thread_counts_are_said() {
        let print = |old: &BenchResults, new: &BenchResults| {
            let mut text = Vec::new();
            print_comparison(&mut text, &compare(old, new), Path::new("old"), Path::new("new")).unwrap();
            String::from_utf8(text).unwrap()
        };
        let (mut old, mut new) = (results(100.0), results(100.0));
        old.header.pose_threads = Some(1);
        new.header.pose_threads = Some(1);
        assert!(!print(&old, &new).contains("thread counts"));
        new.header.pose_threads = Some(16);
        let text = print(&old, &new);
        assert!(
            text.contains("note: the crowds posed on different thread counts: 1 in the baseline, 16 now"),
            "{text}"
        );
        old.header.pose_threads = None;
        assert!(print(&old, &new).contains("unrecorded in the baseline, 16 now"));
        // So do runs under different triangle budgets.
        assert!(!print(&old, &new).contains("triangle budgets"));
        new.header.max_triangles = Some(12_000_000);
        let text = print(&old, &new);
        assert!(
            text.contains(
                "note: the crowds were drawn within different triangle budgets (--max-triangles): none in \
                 the baseline, 12000000 now"
            ),
            "{text}"
        );
        // And different GPU frame budgets.
        assert!(!text.contains("GPU frame budgets"));
        old.header.gpu_frame_budget_ms = Some(16.7);
        let text = print(&old, &new);
        assert!(
            text.contains(
                "note: the crowds were drawn within different GPU frame budgets (--gpu-frame-budget): 16.7 ms \
                 in the baseline, none now"
            ),
            "{text}"
        );
    }

    #[test]
    fn the_file_is_written_into_the_new_folder_and_a_missing_one_is_named() {
        let dir = scratch("comparison_file");
        write_json(&dir, &results(100.0)).unwrap();
        let read = read_results(&dir).unwrap();
        let c = compare(&read, &results(200.0));
        let path = write_comparison(&c, Path::new("old"), &dir).unwrap();
        assert_eq!(path, dir.join(COMPARISON_FILE));
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(json["version"], 1);
        assert_eq!(json["old_folder"], "old");
        assert_eq!(json["rows"][1]["figure"], "skin");
        assert_eq!(json["rows"][1]["change_percent"], 100.0);
        assert_eq!(json["rows"][1]["verdict"], "no-samples");
        assert_eq!(json["rows"][1]["characters"], 16);
        let missing = read_results(&dir.join("nowhere")).unwrap_err().to_string();
        let file = dir.join("nowhere").join(RESULTS_FILE);
        assert!(missing.starts_with(&format!("{}: cannot read: ", file.display())), "{missing}");
        std::fs::write(dir.join(RESULTS_FILE), "{\"header\": 1}").unwrap();
        let not = read_results(&dir).unwrap_err().to_string();
        assert!(
            not.starts_with(&format!("{}: not bench results: ", dir.join(RESULTS_FILE).display())),
            "{not}"
        );
    }
}
