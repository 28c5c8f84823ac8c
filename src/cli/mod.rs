//! The `vkskin` command line: argument parsing and one module per command.

pub mod args;
pub mod dump;
pub mod inspect;
pub mod render;

pub use args::{Cli, Command};

use crate::asset;
use std::path::Path;

/// Runs a parsed command line; the error is one printable line.
pub fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Inspect { model, json } => {
            let model = asset::load(Path::new(&model)).map_err(|e| e.to_string())?;
            let report = inspect::Report::new(&model);
            let text = if json { report.to_json() } else { report.to_text() };
            print!("{text}");
            Ok(())
        }
        Command::Dump { model, clip, time, skinning, device, validation, out } => {
            let model = asset::load(Path::new(&model)).map_err(|e| e.to_string())?;
            let request = dump::Request { clip: clip.as_deref(), time, skinning };
            let gpu = dump::GpuChoice { device: device.as_deref(), validation };
            let json = dump::dump_on(&model, &request, &gpu).map_err(|e| format!("{}: {e}", model.file))?;
            write_output(&out, &json)
        }
        Command::Render(args) => render::run(&args),
    }
}

/// Writes to a file, or to standard output for `-`.
fn write_output(out: &str, text: &str) -> Result<(), String> {
    if out == "-" {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(text.as_bytes()).and_then(|_| stdout.flush()).map_err(|e| format!("stdout: {e}"))
    } else {
        std::fs::write(out, text).map_err(|e| format!("{out}: cannot write: {e}"))
    }
}
