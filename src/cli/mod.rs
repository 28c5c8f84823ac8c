//! The `vkskin` command line: argument parsing and one module per command.
//! Errors are `anyhow` errors here (the layers below return typed ones);
//! `main` prints them as one line.

pub mod args;
pub mod bench;
pub mod checked;
pub mod compare;
mod controller_run;
mod dump;
pub mod planar;
pub mod render;
pub mod set_times;
pub mod simulate;
pub mod trace;
pub mod values;

pub use args::{Cli, Command};

use crate::anim::compression::report as compression;
use crate::asset::{self, LoadOptions};
use crate::atomic_file;
use crate::formats::inspect;
use crate::render::GpuError;
use anyhow::anyhow;
use std::path::Path;

/// This process's command line, parsed. A value the checks refuse
/// (`cli::checked`) ends the process with one line naming the flag and
/// exit code 1; clap reports the rest itself (help, version, unknown flags).
pub fn parse_args() -> Cli {
    use clap::Parser;
    Cli::try_parse().unwrap_or_else(|e| match checked::refused_value(&e) {
        Some(line) => {
            eprintln!("vkskin: {}", crate::text::escape(&line));
            std::process::exit(1)
        }
        None => e.exit(),
    })
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    let (command, options) = cli.into_command().map_err(anyhow::Error::msg)?;
    match command {
        Command::Inspect { model, json, compression: true } => {
            let model = asset::load_with(Path::new(&model), &options)?;
            let clips = model.clips.iter().enumerate().map(|(i, c)| (model.clip_name(i), &**c));
            let settings = crate::anim::compression::CompressionSettings::for_skeleton(&model.skeleton);
            let weights = model.rig.morph_weight_tolerances(&settings);
            let rows = compression::compress_all(&model.file, &model.skeleton, clips, &settings, &weights)
                .map_err(|e| anyhow!("{}: {e}", model.file))?;
            let text =
                if json { serde_json::to_string_pretty(&rows)? + "\n" } else { compression::to_text(&rows) };
            print!("{text}");
            Ok(())
        }
        Command::Inspect { model, json, compression: false } => {
            let model = asset::load_with(Path::new(&model), &options)?;
            let report = inspect::Report::new(&model);
            let text = if json { report.to_json() } else { report.to_text() };
            print!("{text}");
            Ok(())
        }
        Command::Dump(args) => dump::run(&args, &options),
        Command::Render(args) => trace::traced(&args.trace, || render::run(&args, &options)),
        Command::Simulate(args) => simulate::run(&args, &options),
        Command::View(args) => trace::traced(&args.trace, || view(&args, &options)),
        Command::Bench(args) => trace::traced(&args.trace, || bench::run(&args, &options)),
        Command::Compare(args) => compare::run(&args),
        Command::GenerateDefault { out } => write_glb(&out, &asset::default_character_glb()),
        Command::GenerateTwistCylinder { out } => {
            write_glb(&out, &asset::twist_cylinder::twist_cylinder_glb())
        }
    }
}

/// `vkskin view`: the options checked, then the viewer (or its headless fallback).
fn view(args: &args::ViewArgs, load: &LoadOptions) -> anyhow::Result<()> {
    use crate::app::viewer::{self, ViewOptions};
    // Counts and paths were checked as they were parsed (`checked`).
    let characters = args.characters.unwrap_or(1);
    if args.reload_every.is_some() && args.model.is_none() {
        anyhow::bail!("--reload-every needs a MODEL file (the built-in character has none)");
    }
    let schedule = crate::app::scripted::Schedule {
        switch_clip_every: args.switch_clip_every,
        reload_every: args.reload_every,
        switch_method_every: args.switch_method_every,
        switch_controller_every: args.switch_controller_every,
        report_memory_every: args.report_memory_every,
    };
    if args.planar {
        let given = [
            ("MODEL", args.model.is_some()),
            ("--controller", args.controller.is_some()),
            ("--level", args.level.is_some()),
            ("--characters", characters > 1),
            ("--reload-every", args.reload_every.is_some()),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, given)| *given) {
            anyhow::bail!("{flag} and --planar exclude each other (--planar shows its own rig and motion)");
        }
    }
    if characters > 1 && args.level.is_some() {
        anyhow::bail!("--characters and --level exclude each other (the level has one actor)");
    }
    let mut resize_at = args
        .resize_at
        .iter()
        .map(|r| viewer::parse_resize_at(r))
        .collect::<Result<Vec<_>, _>>()
        .map_err(anyhow::Error::msg)?;
    // Asked in frame order, whatever order they were given in.
    resize_at.sort_by_key(|&(frame, _, _)| frame);
    let options = ViewOptions {
        model: args.model.as_ref().map(std::path::PathBuf::from),
        clip: args.clip.clone(),
        controller: args.controller.as_ref().map(std::path::PathBuf::from),
        level: args.level.clone(),
        device: args.device.clone(),
        validation: args.validation,
        frames: args.frames,
        screenshot: args.screenshot.as_ref().map(std::path::PathBuf::from),
        resize_at,
        size: render::parse_size(args.size.as_deref().unwrap_or("960x640")).map_err(anyhow::Error::msg)?,
        load: load.clone(),
        characters,
        frame: args.frame_settings(),
        limits: args.limits.detail_limits(),
        schedule,
        planar: args.planar,
    };
    viewer::run(&options).map_err(|e| gpu_failure(e, "showing the model"))
}

/// `vkskin generate-default` and `generate-twist-cylinder`: writes a
/// generated model's GLB (atomically), creating the folder when needed.
fn write_glb(out: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let path = Path::new(out);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| anyhow!("{}: cannot create folder: {e}", dir.display()))?;
    }
    atomic_file::write(path, bytes)?;
    eprintln!("vkskin: wrote {out} ({} bytes)", bytes.len());
    Ok(())
}

/// Writes to a file (atomically), or to standard output for `-`.
pub(crate) fn write_output(out: &str, text: &str) -> anyhow::Result<()> {
    if out == "-" {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(text.as_bytes()).and_then(|_| stdout.flush()).map_err(|e| anyhow!("stdout: {e}"))
    } else {
        Ok(atomic_file::write(Path::new(out), text.as_bytes())?)
    }
}

/// A GPU failure while `doing` something, as the one line `main` prints.
/// A lost device or surface says so plainly (`the GPU was lost
/// (VK_ERROR_DEVICE_LOST) while rendering out.png; ...`): nothing was
/// written and the command can only stop. Other errors are returned as
/// they are (an allocation already says how many bytes it asked for).
pub fn gpu_failure(error: anyhow::Error, doing: &str) -> anyhow::Error {
    let gpu = error.chain().find_map(|e| e.downcast_ref::<GpuError>());
    match gpu.and_then(|g| g.while_doing(doing)) {
        Some(line) => anyhow!(line),
        None => error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::RenderError;
    use ash::vk;

    #[test]
    fn a_lost_gpu_is_one_plain_line() {
        let lost = RenderError::from(GpuError::vk("vkWaitForFences", vk::Result::ERROR_DEVICE_LOST));
        let line = gpu_failure(lost.into(), "rendering out.png").to_string();
        assert_eq!(
            line,
            "the GPU was lost (VK_ERROR_DEVICE_LOST) while rendering out.png (in vkWaitForFences); \
             its driver reset it or crashed; run again, and update the driver if it recurs"
        );
        let surface = GpuError::vk("vkQueuePresentKHR", vk::Result::ERROR_SURFACE_LOST_KHR);
        let line = gpu_failure(surface.into(), "drawing").to_string();
        assert!(
            line.starts_with("the window's surface was lost (VK_ERROR_SURFACE_LOST_KHR) while drawing"),
            "{line}"
        );
        let timeout = GpuError::vk("vkWaitForFences", vk::Result::TIMEOUT);
        let line = gpu_failure(timeout.into(), "rendering a.png").to_string();
        assert!(
            line.starts_with("the GPU did not finish within 60s")
                && line.ends_with("(while rendering a.png)")
        );
        // Anything else is left as it was.
        let other = GpuError::vk("vkCreateBuffer", vk::Result::ERROR_INITIALIZATION_FAILED);
        assert_eq!(
            gpu_failure(other.into(), "x").to_string(),
            "vkCreateBuffer failed: VK_ERROR_INITIALIZATION_FAILED"
        );
        assert_eq!(gpu_failure(anyhow!("plain"), "x").to_string(), "plain");
    }
}
