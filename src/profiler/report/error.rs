//! The error the bench report returns.

use crate::atomic_file::{OutputError, OutputErrors};
use std::path::PathBuf;

/// Samples that cannot be summarised, or a report file that cannot be
/// written or read. Prints as one line that names the file or the samples;
/// the cause (the operating system's, serde_json's, plotters') is kept as
/// `source()`.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A quantity was never measured.
    #[error("no samples to summarise")]
    NoSamples,
    /// A broken timer: a NaN or infinite sample.
    #[error("sample {index} of {count} is {value}, not a finite number")]
    NotFinite {
        /// Which sample.
        index: usize,
        /// How many there were.
        count: usize,
        /// What it was.
        value: f64,
    },
    /// The output folder cannot be made.
    #[error("{}: cannot create folder: {source}", path.display())]
    Folder {
        /// The folder.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// The results do not encode as JSON.
    #[error("{}: cannot encode the results: {source}", path.display())]
    Encode {
        /// The results file.
        path: PathBuf,
        /// serde_json's reason.
        #[source]
        source: serde_json::Error,
    },
    /// A results file cannot be read.
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// A file that is not a results file.
    #[error("{}: not bench results: {source}", path.display())]
    NotResults {
        /// The file.
        path: PathBuf,
        /// serde_json's reason.
        #[source]
        source: serde_json::Error,
    },
    /// A `bench --cpu-only` results file where GPU results are needed.
    #[error(
        "{}: CPU-only results (bench --cpu-only): they have no GPU figures to compare; compare two GPU runs",
        path.display()
    )]
    CpuOnly {
        /// The file.
        path: PathBuf,
    },
    /// A file cannot be written.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// Report files that could not be written (each was tried on its own;
    /// the others were written).
    #[error(transparent)]
    NotWritten(#[from] OutputErrors),
    /// The table could not be printed.
    #[error("stdout: {0}")]
    Stdout(#[source] std::io::Error),
}
