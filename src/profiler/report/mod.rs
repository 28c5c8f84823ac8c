//! The report side of `vkskin bench`: the results' data model (the
//! `results.json` contract of DESIGN.md), the statistics of timed samples,
//! and the outputs made from results: the JSON file, the table on stdout,
//! the SVG plots and the progress bar shown while measuring. It knows
//! nothing of Vulkan: the runner fills a [`BenchResults`].

pub mod budget_verdict;
pub mod detail_verdict;
mod error;
mod fields;
mod html;
mod json;
pub mod memory_verdict;
pub(crate) mod numbers;
mod plots;
pub mod pose_verdict;
mod progress;
mod results;
mod stat;
mod table;
#[cfg(test)]
pub(crate) mod test_data;
pub mod utc;
pub mod verdicts;

pub use error::ReportError;
pub use html::{REPORT_FILE, report_html, write_html};
pub use json::{RESULTS_FILE, read_json, write_json};
pub use plots::{
    DrawnPlot, FRAME_TIME_PLOT, PlotContent, Plots, THROUGHPUT_PLOT, UPLOAD_PLOT, draw_plots, write_plots,
};
pub use progress::BenchProgress;
pub use results::{
    BenchEntry, BenchHeader, BenchResults, EntrySamples, Figure, Figures, GIT_COMMIT, GpuFrameCost,
    GpuPhases, GpuTiming, RESULTS_VERSION, TimestampCheck,
};
pub use stat::Stat;
pub use table::print_table;
pub use verdicts::Verdicts;

use crate::atomic_file::OutputErrors;
use std::path::Path;

/// Writes the report of `results`: the verdicts and the table on stdout,
/// `out/results.json`, the SVG plots and `out/report.html` (the plots
/// inlined), their paths (and any plot skipped) on stderr. Each file is
/// tried on its own: one that cannot be written (a full disk) does not stop
/// the others, and the error names every file not written
/// ([`ReportError::NotWritten`]).
pub fn write_report(out: &Path, results: &BenchResults) -> Result<(), ReportError> {
    let mut stdout = std::io::stdout().lock();
    let verdicts = Verdicts::from_results(results);
    print_verdicts(&mut stdout, &verdicts).map_err(ReportError::Stdout)?;
    print_table(&mut stdout, results).map_err(ReportError::Stdout)?;
    let mut failed = Vec::new();
    match write_json(out, results) {
        Ok(json) => eprintln!("vkskin: wrote {}", json.display()),
        Err(ReportError::Output(e)) => failed.push(e),
        Err(e) => return Err(e),
    }
    let drawn = draw_plots(results, &verdicts.crossovers);
    let plots = write_plots(out, &drawn);
    for path in &plots.written {
        eprintln!("vkskin: wrote {}", path.display());
    }
    for note in &plots.skipped {
        eprintln!("vkskin: {note}");
    }
    failed.extend(plots.failed);
    match write_html(out, results, &verdicts, &drawn) {
        Ok(html) => eprintln!("vkskin: wrote {}", html.display()),
        Err(e) => failed.push(e),
    }
    if failed.is_empty() { Ok(()) } else { Err(OutputErrors(failed).into()) }
}

/// The verdicts, one per line, then a blank line (nothing without any).
fn print_verdicts(out: &mut impl std::io::Write, verdicts: &Verdicts) -> std::io::Result<()> {
    let lines = verdicts.lines();
    for line in &lines {
        writeln!(out, "{line}")?;
    }
    if !lines.is_empty() {
        writeln!(out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::test_data::{entry, scratch};
    use super::*;

    fn results() -> BenchResults {
        let header = BenchHeader::new("llvmpipe", "Mesa", true, "vkskin bench --quick");
        let entries =
            vec![entry(1, 1, "compute", "inplace", false), entry(16, 1, "compute", "inplace", false)];
        BenchResults { header, entries }
    }

    #[test]
    fn a_plot_that_cannot_be_written_does_not_stop_the_others() {
        let out = scratch("independent_plot");
        // A folder where the plot should go: its rename fails, as a full disk's write would.
        std::fs::create_dir_all(out.join(FRAME_TIME_PLOT)).unwrap();
        // One value: its header holds the time it was made, to the second.
        let results = results();
        let error = write_report(&out, &results).unwrap_err();
        let ReportError::NotWritten(failed) = &error else { panic!("{error}") };
        assert_eq!(failed.0.len(), 1, "{error}");
        assert_eq!(failed.0[0].path, out.join(FRAME_TIME_PLOT));
        assert!(
            error
                .to_string()
                .starts_with(&format!("{} was not written (", out.join(FRAME_TIME_PLOT).display()))
        );
        assert_eq!(read_json(&out.join(RESULTS_FILE)).unwrap(), results, "results.json was still written");
        assert!(std::fs::read_to_string(out.join(THROUGHPUT_PLOT)).unwrap().contains("</svg>"));
        assert!(std::fs::read_to_string(out.join(REPORT_FILE)).unwrap().contains("</html>"));
    }

    #[test]
    fn a_report_page_that_cannot_be_written_does_not_stop_the_others() {
        let out = scratch("independent_html");
        std::fs::create_dir_all(out.join(REPORT_FILE)).unwrap();
        let results = results();
        let error = write_report(&out, &results).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!("{} was not written (", out.join(REPORT_FILE).display())),
            "{error}"
        );
        assert!(std::fs::read_to_string(out.join(FRAME_TIME_PLOT)).unwrap().contains("</svg>"));
        assert_eq!(read_json(&out.join(RESULTS_FILE)).unwrap(), results);
    }

    #[test]
    fn results_that_cannot_be_written_do_not_stop_the_plots() {
        let out = scratch("independent_json");
        std::fs::create_dir_all(out.join(RESULTS_FILE)).unwrap();
        let error = write_report(&out, &results()).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!("{} was not written (", out.join(RESULTS_FILE).display())),
            "{error}"
        );
        assert!(std::fs::read_to_string(out.join(FRAME_TIME_PLOT)).unwrap().contains("</svg>"));
    }
}
