//! `vkskin bench`: the options as a [`SweepRequest`], planned, run and
//! reported by the profiler (`crate::profiler`); this module only maps the
//! command line.

use super::args::BenchArgs;
use crate::asset::LoadOptions;
use crate::profiler::cpu_scale::{self, CpuScalePlan, run_cpu_scale};
use crate::profiler::{BenchPlan, SweepRequest, baseline, run_bench};
use crate::render::renderer::DetailLimits;
use anyhow::{Context, anyhow};
use std::path::{Path, PathBuf};

impl BenchArgs {
    /// What these options ask the profiler to measure.
    pub fn sweep(&self) -> SweepRequest {
        SweepRequest {
            models: self.models.clone(),
            characters: self.characters.clone(),
            passes: self.passes.clone(),
            skinning: self.skinning.clone(),
            upload: self.upload.clone(),
            dqs_split: self.dqs_split.clone(),
            pose: self.pose.clone(),
            detail: self.detail.clone(),
            limits: DetailLimits {
                skinned_vertices: None,
                triangles: self.max_triangles,
                gpu_frame: self.gpu_frame_budget,
            },
            frames: self.frames,
            quick: self.quick,
            out: PathBuf::from(&self.out),
            device: self.device.clone(),
            validation: self.validation,
            threads: self.threads.clone(),
        }
    }
}

/// `vkskin bench`: plan, measure, report, then compare with `--baseline`
/// when given; models load within `load`'s limits.
pub fn run(args: &BenchArgs, load: &LoadOptions) -> anyhow::Result<()> {
    if args.cpu_only {
        return run_cpu_only(args, load);
    }
    let plan = BenchPlan::new(&args.sweep(), command_line(), load.clone())?;
    // An unreadable baseline fails before minutes of measuring, too.
    let baseline = match &args.baseline {
        Some(dir) => Some((Path::new(dir), baseline::read_results(Path::new(dir))?)),
        None => None,
    };
    // Fail on an unusable output folder before minutes of measuring.
    std::fs::create_dir_all(&plan.out)
        .with_context(|| format!("{}: cannot create folder", plan.out.display()))
        .map_err(|e| anyhow!("{e:#}"))?;
    let run = run_bench(&plan).map_err(|e| super::gpu_failure(e, "benchmarking"))?;
    run.report(&plan.out)?;
    match baseline {
        Some((dir, old)) => {
            println!();
            super::compare::report(&old, &run.results, dir, &plan.out, args.fail_on_regression)
        }
        None => Ok(()),
    }
}

/// `vkskin bench --cpu-only`: the crowd's CPU side at scale, no GPU.
fn run_cpu_only(args: &BenchArgs, load: &LoadOptions) -> anyhow::Result<()> {
    let out = PathBuf::from(&args.out);
    let mut plan =
        CpuScalePlan::new(&args.models, &args.characters, args.frames, args.quick, out, command_line())
            .with_threads(&args.threads);
    plan.controller = args.controller.as_ref().map(PathBuf::from);
    if !args.pose.is_empty() {
        plan.poses = args.pose.clone();
    }
    std::fs::create_dir_all(&plan.out)
        .with_context(|| format!("{}: cannot create folder", plan.out.display()))
        .map_err(|e| anyhow!("{e:#}"))?;
    let results = run_cpu_scale(&plan, load)?;
    cpu_scale::write(&plan.out, &results)
}

/// The command line as typed, arguments with spaces or quotes quoted for a shell.
fn command_line() -> String {
    let mut args = std::env::args();
    // The program as `vkskin`, wherever it was run from.
    let program = args
        .next()
        .map(|p| Path::new(&p).file_name().map_or_else(|| p.clone(), |n| n.to_string_lossy().into_owned()));
    program.into_iter().chain(args).map(|a| shell_quoted(&a)).collect::<Vec<_>>().join(" ")
}

/// `arg` as a shell word: as is when plain, else single-quoted.
fn shell_quoted(arg: &str) -> String {
    let plain = !arg.is_empty() && arg.chars().all(|c| c.is_ascii_alphanumeric() || "-_./,=:+@%".contains(c));
    if plain { arg.to_string() } else { format!("'{}'", arg.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use crate::profiler::runner::load_model;
    use crate::profiler::{BenchConfig, BenchModel};
    use crate::render::frame_settings::{
        Choice, DqsSplit, FrameSettings, InfluenceBlend, PaletteUpload, PassSetup, SkinningMethod,
        SkinningMode, SkinningPlacement,
    };
    use clap::Parser;

    /// Parses `vkskin bench ARGS...` and plans it.
    fn plan(args: &[&str]) -> Result<BenchPlan, String> {
        let cli = Cli::try_parse_from(["vkskin", "bench"].iter().chain(args)).map_err(|e| e.to_string())?;
        let Some(Command::Bench(args)) = cli.command else { panic!("not bench") };
        BenchPlan::new(&args.sweep(), "vkskin bench", LoadOptions::default()).map_err(|e| e.to_string())
    }

    fn is_dqs(c: &BenchConfig) -> bool {
        c.frame.blend.method == SkinningMethod::DualQuaternion
    }

    #[test]
    fn the_built_in_character_takes_the_load_options() {
        let compressed = LoadOptions { compressed_clips: true, ..LoadOptions::default() };
        let (model, _) = load_model(&BenchModel::BuiltIn, &compressed).unwrap();
        assert!((0..model.clips.len()).all(|c| model.rig.compressed_clip(c).is_some()));
        let (model, _) = load_model(&BenchModel::BuiltIn, &LoadOptions::default()).unwrap();
        assert!(model.rig.compressed_clip(0).is_none());
    }

    #[test]
    fn quick_is_the_built_in_character_over_a_small_sweep() {
        let p = plan(&["--quick", "--out", "d"]).unwrap();
        assert_eq!(p.models, [BenchModel::BuiltIn]);
        assert_eq!((p.frames, p.warmup_frames, p.quick), (8, 2, true));
        assert_eq!(p.out, PathBuf::from("d"));
        // 2 counts x 2 skinning modes x (inplace, staged, dirty, dirty paused) x 2 pass counts.
        assert_eq!(p.configs.len(), 2 * 2 * 4 * 2);
        let has = |f: &dyn Fn(&BenchConfig) -> bool| p.configs.iter().any(f);
        for c in [1, 16] {
            assert!(has(&|x| x.characters == c));
        }
        for s in [SkinningMode::COMPUTE, SkinningMode::VERTEX] {
            assert!(has(&|x| x.frame.mode() == s));
        }
        for &u in PaletteUpload::ALL {
            assert!(has(&|x| x.frame.upload == u));
        }
        assert!(has(&|x| x.frame.upload == PaletteUpload::Dirty && x.paused));
        assert!(!has(&|x| x.frame.upload != PaletteUpload::Dirty && x.paused));
        let frame = FrameSettings {
            placement: SkinningPlacement::Compute,
            blend: InfluenceBlend::default(),
            upload: PaletteUpload::InPlace,
            passes: PassSetup::Main,
            pose: Default::default(),
            detail: Default::default(),
        };
        assert_eq!(p.configs[0], BenchConfig { model: 0, characters: 1, frame, paused: false });
        assert_eq!(p.label(&p.configs[0]), "built-in, 1 character, compute, inplace, 1 pass");
    }

    #[test]
    fn the_full_sweep_is_the_issues() {
        let p = plan(&["--out", "d"]).unwrap();
        assert_eq!((p.frames, p.quick), (100, false));
        // 4 counts x (2 LBS modes + 2 DQS modes x 2 splits) x 4 upload setups x 3 pass counts.
        assert_eq!(p.configs.len(), 4 * (2 + 2 * 2) * 4 * 3);
        for split in DqsSplit::ALL {
            assert!(
                p.configs
                    .iter()
                    .any(|c| c.frame.mode() == SkinningMode::DQS_COMPUTE
                        && c.frame.blend.split() == Some(split))
            );
        }
        assert!(p.configs.iter().all(|c| is_dqs(c) == c.frame.blend.split().is_some()));
        let mut counts: Vec<u32> = p.configs.iter().map(|c| c.characters).collect();
        counts.dedup();
        assert_eq!(counts, [1, 10, 100, 1000], "character counts are neighbours, ascending");
    }

    #[test]
    fn options_override_the_defaults_and_lists_take_commas() {
        let p = plan(&[
            "a.glb",
            "b.gltf",
            "--quick",
            "--characters",
            "100,1,10,1",
            "--passes",
            "5",
            "--skinning",
            "dqs-vertex,dqs-compute",
            "--upload",
            "staged",
            "--frames",
            "3",
            "--out",
            "d",
            "--device",
            "llvmpipe",
            "--validation",
        ])
        .unwrap();
        assert_eq!(p.models, [BenchModel::File("a.glb".into()), BenchModel::File("b.gltf".into())]);
        assert_eq!(p.frames, 3);
        assert_eq!((p.device.as_deref(), p.validation), (Some("llvmpipe"), true));
        // 2 models x 3 counts x 2 modes x 2 splits.
        assert_eq!(p.configs.len(), 2 * 3 * 2 * 2);
        let first = p.configs[0];
        assert_eq!(
            (first.characters, first.frame.passes, first.frame.mode()),
            (1, PassSetup::ShadowCascades, SkinningMode::DQS_VERTEX)
        );
        assert_eq!(first.frame.blend.split(), Some(DqsSplit::Shader));
        assert!(p.configs.iter().all(|c| c.frame.upload == PaletteUpload::Staged && !c.paused));
        assert_eq!(
            p.label(p.configs.last().unwrap()),
            "b.gltf, 100 characters, dqs-compute (cpu split), staged, 5 passes"
        );
        let cpu_only =
            plan(&["--skinning", "compute,dqs-compute", "--dqs-split", "cpu", "--out", "d"]).unwrap();
        let splits: Vec<_> = cpu_only.configs.iter().map(|c| c.frame.blend.split()).collect();
        assert!(splits.contains(&None) && splits.contains(&Some(DqsSplit::Cpu)));
        assert!(!splits.contains(&Some(DqsSplit::Shader)));
    }

    #[test]
    fn bad_options_are_one_clear_error() {
        let error = |args: &[&str]| plan(args).unwrap_err();
        // Counts are refused as they are parsed (`cli::checked`), negative ones too.
        for (flag, value, range) in
            [("--characters", "1,0", "1 to 100000, not 0"), ("--frames", "-1", "1 to 1000000, not -1")]
        {
            let e = error(&[flag, value, "--out", "d"]);
            assert!(e.contains(&format!("'{flag} <N")) && e.contains(range), "{e}");
        }
        let passes = error(&["--passes", "3", "--out", "d"]);
        assert!(passes.contains("invalid value '3' for '--passes"), "{passes}");
        assert!(passes.contains("1, 2, 5"), "{passes}");
        let skinning = error(&["--skinning", "compute,gpu", "--out", "d"]);
        assert!(skinning.contains("invalid value 'gpu' for '--skinning"), "{skinning}");
        assert!(skinning.contains("compute, vertex, dqs-compute, dqs-vertex"), "{skinning}");
        let upload = error(&["--upload", "in-place", "--out", "d"]);
        assert!(upload.contains("invalid value 'in-place' for '--upload"), "{upload}");
        assert!(upload.contains("inplace, staged, dirty"), "{upload}");
        assert!(
            error(&["--characters", "ten", "--out", "d"]).contains("invalid value 'ten' for '--characters")
        );
        assert!(error(&["--quick"]).contains("--out"), "the output folder is required");
        assert_eq!(
            error(&["--skinning", "compute", "--dqs-split", "cpu", "--out", "d"]),
            "--dqs-split: no dqs mode in --skinning to split for (dqs-compute, dqs-vertex)"
        );
        assert!(plan(&["--quick", "--dqs-split", "cpu", "--out", "d"]).is_err(), "--quick has no dqs modes");
        assert_eq!(
            error(&["--threads", "2,4", "--out", "d"]),
            "--threads: one count without --cpu-only (the threads each crowd poses and records on), not 2"
        );
        assert!(error(&["--threads", "0", "--out", "d"]).contains("1 to 1024, not 0"));
    }

    /// Crowds pose on one thread unless `--threads` names another count.
    #[test]
    fn threads_are_the_crowds_pose_threads() {
        assert_eq!(plan(&["--quick", "--out", "d"]).unwrap().pose_threads, 1);
        assert_eq!(plan(&["--quick", "--threads", "16", "--out", "d"]).unwrap().pose_threads, 16);
    }

    #[test]
    fn the_report_writes_results_and_plots_into_the_folder() {
        use crate::profiler::report::test_data::{entry, scratch};
        use crate::profiler::report::{self, BenchHeader, BenchResults, write_report};
        let out = scratch("cli_report");
        std::fs::create_dir_all(&out).unwrap();
        let header = BenchHeader::new("llvmpipe", "Mesa", true, "vkskin bench --quick");
        let entries = vec![entry(1, 1, "compute", "inplace", false), entry(16, 2, "vertex", "dirty", true)];
        let results = BenchResults { header, entries };
        write_report(&out, &results).unwrap();
        assert_eq!(report::read_json(&out.join(report::RESULTS_FILE)).unwrap(), results);
        for plot in [report::FRAME_TIME_PLOT, report::UPLOAD_PLOT, report::THROUGHPUT_PLOT] {
            assert!(std::fs::read_to_string(out.join(plot)).unwrap().contains("</svg>"), "{plot}");
        }
    }

    #[test]
    fn baseline_options_parse_and_compare_takes_two_folders() {
        let parse = |args: &[&str]| Cli::try_parse_from(std::iter::once(&"vkskin").chain(args));
        let cli =
            parse(&["bench", "--quick", "--out", "n", "--baseline", "o", "--fail-on-regression"]).unwrap();
        let Some(Command::Bench(args)) = cli.command else { panic!("not bench") };
        assert_eq!((args.baseline.as_deref(), args.fail_on_regression), (Some("o"), true));
        let e = parse(&["bench", "--quick", "--out", "n", "--fail-on-regression"]).unwrap_err().to_string();
        assert!(e.contains("--baseline"), "--fail-on-regression needs a baseline: {e}");
        let cli = parse(&["compare", "old", "new"]).unwrap();
        let Some(Command::Compare(args)) = cli.command else { panic!("not compare") };
        assert_eq!((args.old.as_str(), args.new.as_str(), args.fail_on_regression), ("old", "new", false));
        assert!(parse(&["compare", "old"]).is_err(), "both folders are needed");
    }

    #[test]
    fn an_unreadable_baseline_fails_before_anything_is_measured() {
        use crate::profiler::report::test_data::scratch;
        let dir = scratch("missing_baseline");
        let (missing, out) = (dir.join("nowhere"), dir.join("out"));
        let cli = Cli::try_parse_from([
            "vkskin",
            "bench",
            "--quick",
            "--out",
            out.to_str().unwrap(),
            "--baseline",
            missing.to_str().unwrap(),
        ])
        .unwrap();
        let Some(Command::Bench(args)) = cli.command else { panic!("not bench") };
        // No device is opened: the error comes first, naming the file.
        let e = run(&args, &LoadOptions::default()).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}: cannot read: ", missing.join("results.json").display())), "{e}");
        assert!(!out.exists(), "nothing was created");
    }

    #[test]
    fn command_lines_quote_what_a_shell_would_split() {
        assert_eq!(shell_quoted("--characters"), "--characters");
        assert_eq!(shell_quoted("1,10"), "1,10");
        assert_eq!(shell_quoted("my model.glb"), "'my model.glb'");
        assert_eq!(shell_quoted("it's"), r"'it'\''s'");
        assert_eq!(shell_quoted(""), "''");
    }
}
