//! Baselines: a bench run compared with an earlier one (`vkskin bench
//! --baseline OLD_DIR`, `vkskin compare OLD_DIR NEW_DIR`). Per configuration
//! found in both and per figure a user reads, the change in the median and
//! a verdict from the per-frame samples, decided as criterion decides:
//! "regressed" or "improved" only when a bootstrap test finds the change
//! significant and its whole confidence interval lies beyond the figure's
//! noise threshold, else "within noise".
//!
//! `compare` is a pure function of two [`BenchResults`](crate::profiler::report::BenchResults)
//! (read back from results.json or just measured); `resample` holds the
//! statistics; `output` prints the table and writes `comparison.json`.

mod compare;
mod output;
mod resample;

pub use compare::{Comparison, ConfigKey, FigureKind, Row, SIGNIFICANCE, Side, Verdict, compare};
pub use output::{
    COMPARISON_FILE, COMPARISON_VERSION, print_comparison, read_results, summary, write_comparison,
};
pub use resample::{CONFIDENCE, RESAMPLES, Resampled, SplitMix64, resample};
