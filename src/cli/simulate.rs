//! `vkskin simulate`: a character's controller run headless (no GPU), one
//! line per frame: the state, the running transition, the clips' weights
//! and the events crossed. `--json` writes the DESIGN.md trace format
//! (with the `clips` and `layers` that produced each frame's pose).

use super::args::SimulateArgs;
use super::controller_run::ControllerRun;
use crate::asset;
use crate::formats::trace::{TraceFrame, text_line};
use std::io::Write;
use std::path::Path;

/// Most frames one run may ask for.
const MAX_FRAMES: f64 = 10_000_000.0;

/// Runs the command; the error is one printable line.
pub fn run(args: &SimulateArgs, load: &crate::asset::LoadOptions) -> anyhow::Result<()> {
    // --fps and --duration were checked as they were parsed (`cli::checked`).
    let fps = args.run.fps;
    let frames = (args.duration * fps + 1e-9).floor() + 1.0;
    if frames > MAX_FRAMES {
        return Err(anyhow::anyhow!(
            "--duration {} at --fps {fps} is more than {MAX_FRAMES} frames",
            args.duration
        ));
    }
    let path = args.model.as_deref().map(Path::new);
    let model = asset::load_or_default(path, load)?;
    let last = format!("the last frame at --duration {} and --fps {fps}", args.duration);
    let mut run = ControllerRun::new(&model, path, &args.run, load, (frames - 1.0) / fps, &last)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut write = |frame: &TraceFrame| -> anyhow::Result<()> {
        let line = if args.json { serde_json::to_string(frame)? } else { text_line(frame) };
        writeln!(out, "{line}").map_err(|e| anyhow::anyhow!("stdout: {e}"))
    };
    for i in 0..frames as u32 {
        let time = run.time(i);
        let posed = run.frame(&model, i)?;
        write(&posed.trace(&model, i, time))?;
    }
    out.flush().map_err(|e| anyhow::anyhow!("stdout: {e}"))
}
