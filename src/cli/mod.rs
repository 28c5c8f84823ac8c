//! The `vkskin` command line: argument parsing and one module per command.

pub mod args;
pub mod bench;
pub mod compression;
pub mod dump;
pub mod inspect;
pub mod render;
pub mod simulate;

pub use args::{Cli, Command};

use crate::asset;
use std::path::Path;

/// Runs a parsed command line; the error is one printable line.
pub fn run(cli: Cli) -> Result<(), String> {
    // No subcommand: the viewer on the built-in character.
    let command = cli.command.unwrap_or_else(|| Command::View(args::ViewArgs::default()));
    match command {
        Command::Inspect { model, json, compression: true } => {
            let model = asset::load(Path::new(&model)).map_err(|e| e.to_string())?;
            let clips = model.clips.iter().enumerate().map(|(i, c)| (model.clip_name(i), &**c));
            let settings = crate::anim::compression::CompressionSettings::for_skeleton(&model.skeleton);
            let rows = compression::compress_all(&model.file, &model.skeleton, clips, &settings)
                .map_err(|e| format!("{}: {e}", model.file))?;
            let text = if json {
                serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())? + "\n"
            } else {
                compression::to_text(&rows)
            };
            print!("{text}");
            Ok(())
        }
        Command::Inspect { model, json, compression: false } => {
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
        Command::Simulate(args) => simulate::run(&args),
        Command::View(args) => view(&args),
        Command::Bench(args) => bench::run(&args),
        Command::GenerateDefault { out } => write_glb(&out, &asset::default_character_glb()),
        Command::GenerateTwistCylinder { out } => {
            write_glb(&out, &asset::twist_cylinder::twist_cylinder_glb())
        }
    }
}

/// `vkskin view`: the options checked, then the viewer (or its headless fallback).
fn view(args: &args::ViewArgs) -> Result<(), String> {
    use crate::app::viewer::{self, ViewOptions};
    if args.frames == Some(0) {
        return Err("--frames must be at least 1".into());
    }
    let options = ViewOptions {
        model: args.model.as_ref().map(std::path::PathBuf::from),
        clip: args.clip.clone(),
        controller: args.controller.as_ref().map(std::path::PathBuf::from),
        level: args.level.clone(),
        device: args.device.clone(),
        validation: args.validation,
        frames: args.frames,
        screenshot: args.screenshot.as_ref().map(std::path::PathBuf::from),
        resize_at: args.resize_at.as_deref().map(viewer::parse_resize_at).transpose()?,
        size: render::parse_size(args.size.as_deref().unwrap_or("960x640"))?,
    };
    viewer::run(&options)
}

/// `vkskin generate-default` and `generate-twist-cylinder`: writes a
/// generated model's GLB, creating the folder when needed.
fn write_glb(out: &str, bytes: &[u8]) -> Result<(), String> {
    let path = Path::new(out);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create folder: {e}", dir.display()))?;
    }
    std::fs::write(path, bytes).map_err(|e| format!("{out}: cannot write: {e}"))?;
    eprintln!("vkskin: wrote {out} ({} bytes)", bytes.len());
    Ok(())
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
