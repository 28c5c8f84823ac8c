//! `vkskin compare OLD_DIR NEW_DIR`: two bench result folders compared
//! without running anything; also the comparison `vkskin bench --baseline`
//! makes after its run. This module only maps the command line onto
//! `profiler::baseline`.

use super::args::CompareArgs;
use crate::profiler::baseline::{self, Verdict};
use crate::profiler::report::BenchResults;
use anyhow::anyhow;
use std::path::Path;

/// `vkskin compare`: reads both folders' results.json, then [`report`]s.
pub fn run(args: &CompareArgs) -> anyhow::Result<()> {
    let (old_dir, new_dir) = (Path::new(&args.old), Path::new(&args.new));
    let old = baseline::read_results(old_dir)?;
    let new = baseline::read_results(new_dir)?;
    report(&old, &new, old_dir, new_dir, args.fail_on_regression)
}

/// Compares `new` (the results in `new_dir`) with the baseline `old` (in
/// `old_dir`): the summary and the table on stdout, `new_dir/comparison.json`.
/// Regressions are a report, not a failure, unless `fail_on_regression`.
pub fn report(
    old: &BenchResults,
    new: &BenchResults,
    old_dir: &Path,
    new_dir: &Path,
    fail_on_regression: bool,
) -> anyhow::Result<()> {
    let comparison = baseline::compare(old, new);
    let mut stdout = std::io::stdout().lock();
    baseline::print_comparison(&mut stdout, &comparison, old_dir, new_dir)
        .map_err(|e| anyhow!("stdout: {e}"))?;
    drop(stdout);
    let path = baseline::write_comparison(&comparison, old_dir, new_dir)?;
    eprintln!("vkskin: wrote {}", path.display());
    let regressed = comparison.count(Verdict::Regressed);
    if fail_on_regression && regressed > 0 {
        let figures = comparison.figures_with(Verdict::Regressed).join(", ");
        anyhow::bail!(
            "{regressed} figure{} regressed ({figures}) against {} (--fail-on-regression)",
            if regressed == 1 { "" } else { "s" },
            old_dir.display()
        );
    }
    Ok(())
}
