//! `vkskin render --planar`: the built-in planar rig drawn headless, four
//! copies posed two ways (joint angles blended linearly on the left, the
//! same poses as quaternion clips on the right; rotations about one axis on
//! top, 3D rotations from Euler angles below), after one line giving how
//! far the lerps depart from slerp. `view --planar` shows the same in the
//! window (`app`); this module only checks flags and renders.

use super::args::RenderArgs;
use crate::anim::planar_scene::{self, LAYOUT, MEASURE_SAMPLES, PlanarCopy, PlanarScene};
use crate::app::ground_under_planar;
use crate::asset::planar_rig::{self, HALF_PERIOD};
use crate::render::headless::{self, HeadlessRequest};
use crate::render::renderer::RenderSettings;
use crate::render::{PassSetup, with_gpu};
use std::path::Path;
use std::sync::Arc;

/// The flags that choose a model or what plays it mean nothing for the
/// built-in rig: one line naming the first one given.
fn refuse_model_flags(args: &RenderArgs) -> anyhow::Result<()> {
    let given = [
        ("MODEL", args.model.is_some()),
        ("--clip", args.clip.is_some()),
        ("--controller", args.controller.is_some()),
        ("--set", !args.sets.is_empty()),
        ("--level", args.level.is_some()),
        ("--spawn", args.spawn.is_some()),
        ("--authority", args.authority.is_some()),
        ("--characters", args.characters > 1),
    ];
    if let Some((flag, _)) = given.iter().find(|(_, given)| *given) {
        anyhow::bail!("{flag} and --planar exclude each other (--planar draws its own rig and motion)");
    }
    Ok(())
}

/// Renders `frames` frames of the planar rig (`size` pixels, drawn as
/// `settings` says) to `args.out`. One frame is drawn half way from pose A
/// to pose B unless `--time` says otherwise; an animation starts at pose A.
pub fn render(
    args: &RenderArgs,
    size: (u32, u32),
    frames: u32,
    settings: RenderSettings,
) -> anyhow::Result<()> {
    refuse_model_flags(args)?;
    let model = Arc::new(planar_rig::planar_rig()?);
    let motion = planar_rig::planar_motion(&model)?;
    let errors = planar_scene::measure(&model.rig, &motion, MEASURE_SAMPLES)?;
    eprintln!("vkskin: planar: {}", errors.line(model.skeleton.names()));
    eprintln!("vkskin: planar: {LAYOUT}");
    let half_way = if frames == 1 { 0.5 * HALF_PERIOD } else { 0.0 };
    let start = f64::from(args.time.unwrap_or(half_way));
    let mut scene =
        PlanarScene::new(model.rig.clone(), motion, &PlanarCopy::ALL, start, f64::from(args.fps))?;
    // The shadow cascades' shadows fall on the window's ground.
    let shadows = settings.frame.passes == PassSetup::ShadowCascades;
    let ground = shadows.then(|| ground_under_planar(&model, &mut scene, f64::from(args.fps))).transpose()?;
    let out = Path::new(&args.out);
    let options = args.gpu_options();
    let doing = format!("rendering {}", out.display());
    let request = HeadlessRequest { frames, first_frame: 0, settings };
    let rendered = with_gpu(&options, |ctx| -> anyhow::Result<Vec<String>> {
        headless::render_to_file(ctx, model.clone(), &mut scene, ground.clone(), &request, out, args.fps)
            .map_err(|e| super::gpu_failure(e.into(), &doing))
    });
    for w in rendered.map_err(|e| super::gpu_failure(e, &doing))? {
        eprintln!("vkskin: warning: {w}");
    }
    let (width, height) = size;
    eprintln!(
        "vkskin: wrote {} ({frames} frame{}, {width}x{height}, the planar rig)",
        out.display(),
        if frames == 1 { "" } else { "s" }
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn command(words: &[&str]) -> (Command, crate::asset::LoadOptions) {
        let cli =
            Cli::try_parse_from(std::iter::once("vkskin").chain(words.iter().copied())).expect("parses");
        cli.into_command().expect("a command")
    }

    #[test]
    fn render_refuses_what_chooses_a_model_or_its_motion() {
        for (extra, flag) in [
            (&["walker.glb"][..], "MODEL"),
            (&["--clip", "Walk"], "--clip"),
            (&["--controller", "c.ron"], "--controller"),
            (&["--set", "0:speed=1"], "--set"),
            (&["--level", "demo"], "--level"),
            (&["--characters", "4"], "--characters"),
        ] {
            let words: Vec<&str> =
                ["render", "--planar", "--out", "a.png"].iter().chain(extra).copied().collect();
            let Command::Render(args) = command(&words).0 else { panic!("not render") };
            let error = refuse_model_flags(&args).unwrap_err().to_string();
            assert_eq!(
                error,
                format!("{flag} and --planar exclude each other (--planar draws its own rig and motion)")
            );
        }
        let Command::Render(args) = command(&["render", "--planar", "--frames", "3", "--out", "a.png"]).0
        else {
            panic!("not render")
        };
        assert!(refuse_model_flags(&args).is_ok());
    }

    #[test]
    fn view_refuses_what_chooses_a_model() {
        for (extra, flag) in [
            (&["walker.glb"][..], "MODEL"),
            (&["--level", "demo"], "--level"),
            (&["--characters", "3"], "--characters"),
        ] {
            let words: Vec<&str> = ["view", "--planar"].iter().chain(extra).copied().collect();
            let (Command::View(args), load) = command(&words) else { panic!("not view") };
            let error = super::super::view(&args, &load).unwrap_err().to_string();
            assert!(error.starts_with(&format!("{flag} and --planar exclude each other")), "{error}");
        }
    }
}
