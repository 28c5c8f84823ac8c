//! The report side of `vkskin bench`: the results' data model (the
//! `results.json` contract of DESIGN.md), the statistics of timed samples,
//! and the outputs made from results: the JSON file, the table on stdout,
//! the SVG plots and the progress bar shown while measuring. It knows
//! nothing of Vulkan: the runner fills a [`BenchResults`].

mod error;
mod json;
mod plots;
mod progress;
mod results;
mod stat;
mod table;
#[cfg(test)]
pub(crate) mod test_data;
pub mod utc;

pub use error::ReportError;
pub use json::{RESULTS_FILE, read_json, write_json};
pub use plots::{FRAME_TIME_PLOT, Plots, THROUGHPUT_PLOT, UPLOAD_PLOT, write_plots};
pub use progress::BenchProgress;
pub use results::{BenchEntry, BenchHeader, BenchResults, GIT_COMMIT, GpuPhases};
pub use stat::Stat;
pub use table::print_table;

use std::path::Path;

/// Writes the report of `results`: the table on stdout, `out/results.json`
/// and the SVG plots, their paths (and any plot skipped) on stderr.
pub fn write_report(out: &Path, results: &BenchResults) -> Result<(), ReportError> {
    let mut stdout = std::io::stdout().lock();
    print_table(&mut stdout, results).map_err(ReportError::Stdout)?;
    let json = write_json(out, results)?;
    eprintln!("vkskin: wrote {}", json.display());
    let plots = write_plots(out, results)?;
    for path in &plots.written {
        eprintln!("vkskin: wrote {}", path.display());
    }
    for note in &plots.skipped {
        eprintln!("vkskin: {note}");
    }
    Ok(())
}
