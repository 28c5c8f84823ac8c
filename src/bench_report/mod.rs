//! The report side of `vkskin bench`: the results' data model (the
//! `results.json` contract of DESIGN.md), the statistics of timed samples,
//! and the outputs made from results: the JSON file, the table on stdout,
//! the SVG plots and the progress bar shown while measuring. It knows
//! nothing of Vulkan: the runner in `render` fills a [`BenchResults`].

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
