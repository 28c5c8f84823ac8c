//! `--trace FILE.json` (render, view, bench): records a frame trace
//! (`render::trace`) while the command runs and writes it when it ends.

use super::args::TraceArgs;
use crate::render::trace::TraceRecorder;
use anyhow::Context;
use std::path::Path;

/// Runs `command`, recording a frame trace into `args.trace` when given.
/// The trace is written even when the command fails (what ran until the
/// error is worth seeing); the command's error comes first.
pub fn traced(args: &TraceArgs, command: impl FnOnce() -> anyhow::Result<()>) -> anyhow::Result<()> {
    let Some(path) = &args.trace else { return command() };
    let recorder = TraceRecorder::start();
    let ran = command();
    let written = recorder.write(Path::new(path)).with_context(|| "writing the frame trace");
    ran.and(written)
}
