//! The progress bar `vkskin bench` shows on stderr while it runs (indicatif):
//! one step per configuration, hidden when stderr is not a terminal (CI,
//! redirected output), so logs stay clean.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// Progress over a run's configurations.
pub struct BenchProgress {
    bar: ProgressBar,
}

impl BenchProgress {
    /// A bar over `total_configs` steps, drawn on stderr when it is a terminal.
    pub fn new(total_configs: u64) -> Self {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        Self::with_target(total_configs, target)
    }

    /// A bar that draws nothing (tests, scripted runs).
    pub fn hidden(total_configs: u64) -> Self {
        Self::with_target(total_configs, ProgressDrawTarget::hidden())
    }

    fn with_target(total_configs: u64, target: ProgressDrawTarget) -> Self {
        let bar = ProgressBar::with_draw_target(Some(total_configs), target);
        let style = ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {wide_msg}")
            .expect("a valid template")
            .progress_chars("=> ");
        bar.set_style(style);
        BenchProgress { bar }
    }

    /// Shows `label` (the configuration now measured).
    pub fn start(&self, label: &str) {
        self.bar.set_message(label.to_string());
    }

    /// Adds `more` steps (configurations planned while running: the
    /// crossover's refinement).
    pub fn extend(&self, more: u64) {
        self.bar.inc_length(more);
    }

    /// Counts the current configuration as done.
    pub fn finish(&self) {
        self.bar.inc(1);
    }

    /// Prints a line above the bar (or plainly on stderr when hidden).
    pub fn println(&self, line: &str) {
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }

    /// Configurations done so far.
    pub fn done(&self) -> u64 {
        self.bar.position()
    }

    /// Whether the bar draws nothing.
    pub fn is_hidden(&self) -> bool {
        self.bar.is_hidden()
    }

    /// Removes the bar from the terminal (the table follows on stdout).
    pub fn clear(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_finished_configurations() {
        let progress = BenchProgress::hidden(3);
        assert!(progress.is_hidden());
        progress.start("built-in, 1 character, compute, inplace, 1 pass");
        progress.finish();
        progress.start("built-in, 16 characters, compute, inplace, 1 pass");
        progress.finish();
        assert_eq!(progress.done(), 2);
        progress.clear();
    }
}
