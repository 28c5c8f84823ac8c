//! `vkskin dump`: joint world matrices and skinned vertices as JSON (the
//! DESIGN.md dump format), of one clip at a time or, with `--controller`,
//! of the frame a controller run poses (the same run `simulate` traces),
//! with the `clips` and `layers` that produced it.

use super::args::DumpArgs;
use super::controller_run::ControllerRun;
use crate::asset::{self, LoadOptions};
use crate::formats::dump;
use std::path::Path;

/// Runs the command; the error is one printable line.
pub fn run(args: &DumpArgs, load: &LoadOptions) -> anyhow::Result<()> {
    let path = args.model.as_deref().map(Path::new);
    if args.run.controller.is_none() {
        let given = [
            ("--set", !args.run.sets.is_empty()),
            ("--level", args.run.level.is_some()),
            ("--spawn", args.run.spawn.is_some()),
            ("--authority", args.run.authority.is_some()),
            ("--no-ik", args.run.no_ik),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, given)| *given) {
            anyhow::bail!("{flag} needs --controller (it scripts or places a controller's run)");
        }
    }
    let model = asset::load_or_default(path, load)?;
    let gpu = dump::GpuChoice { device: args.device.as_deref(), validation: args.validation };
    let document = if args.run.controller.is_some() {
        let last = format!("--time {}", args.time);
        let mut run = ControllerRun::new(&model, path, &args.run, load, args.time, &last)?;
        let (frame, posed) = run.at(&model, args.time)?;
        let trace = posed.trace(&model, frame, args.time);
        dump::controller_frame(&model, posed.character(), frame, args.time, trace, args.skinning, &gpu)
    } else {
        let request = dump::Request { clip: args.clip.as_deref(), time: args.time, skinning: args.skinning };
        dump::evaluate_on(&model, &request, &gpu)
    };
    let json = document
        .and_then(|d| Ok(serde_json::to_string(&d)?))
        .map_err(|e| anyhow::anyhow!("{}: {}", model.file, super::gpu_failure(e, "skinning on the GPU")))?;
    super::write_output(&args.out, &json)
}
