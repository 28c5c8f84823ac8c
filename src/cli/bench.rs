//! `vkskin bench`: the command line turned into a [`BenchPlan`] (every
//! configuration to measure), the measurement run, then the report: a table
//! on stdout, `DIR/results.json` and the SVG plots (`crate::bench_report`).

use super::args::BenchArgs;
use crate::bench_report::{self, BenchResults};
use clap::ValueEnum;
use std::path::{Path, PathBuf};

/// Where and how vertices are skinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SkinningMode {
    /// Linear blend skinning in the compute pass, once per frame; every draw pass reads the result.
    Compute,
    /// Linear blend skinning in the vertex shader of every draw pass.
    Vertex,
    /// Dual-quaternion skinning in the compute pass.
    DqsCompute,
    /// Dual-quaternion skinning in the vertex shader of every draw pass.
    DqsVertex,
}

impl SkinningMode {
    /// Every mode, in the order a full sweep measures them.
    pub const ALL: [SkinningMode; 4] =
        [SkinningMode::Compute, SkinningMode::Vertex, SkinningMode::DqsCompute, SkinningMode::DqsVertex];

    /// The name on the command line and in results.json.
    pub fn as_str(self) -> &'static str {
        match self {
            SkinningMode::Compute => "compute",
            SkinningMode::Vertex => "vertex",
            SkinningMode::DqsCompute => "dqs-compute",
            SkinningMode::DqsVertex => "dqs-vertex",
        }
    }

    /// Whether the compute pass skins (once per frame), not the draw passes.
    pub fn is_compute(self) -> bool {
        matches!(self, SkinningMode::Compute | SkinningMode::DqsCompute)
    }

    /// Whether it blends dual quaternions rather than matrices.
    pub fn is_dual_quaternion(self) -> bool {
        matches!(self, SkinningMode::DqsCompute | SkinningMode::DqsVertex)
    }
}

/// How palettes reach the GPU each frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum UploadMode {
    /// Written into host-visible memory the skin pass reads directly.
    #[value(name = "inplace")]
    InPlace,
    /// Written into host-visible staging memory, then copied into device-local memory.
    Staged,
    /// Only characters whose pose changed are written (and copied).
    Dirty,
}

impl UploadMode {
    /// Every mode, in the order a sweep measures them.
    pub const ALL: [UploadMode; 3] = [UploadMode::InPlace, UploadMode::Staged, UploadMode::Dirty];

    /// The name on the command line and in results.json.
    pub fn as_str(self) -> &'static str {
        match self {
            UploadMode::InPlace => "inplace",
            UploadMode::Staged => "staged",
            UploadMode::Dirty => "dirty",
        }
    }
}

/// A model to measure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BenchModel {
    /// The built-in default character.
    BuiltIn,
    /// A .glb or .gltf file, as named on the command line.
    File(PathBuf),
}

impl BenchModel {
    /// Its name in the table, the plots and results.json.
    pub fn label(&self) -> String {
        match self {
            BenchModel::BuiltIn => "built-in".to_string(),
            BenchModel::File(path) => path.display().to_string(),
        }
    }
}

/// One configuration: a scene and a way to upload, skin and draw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BenchConfig {
    /// Index into [`BenchPlan::models`].
    pub model: usize,
    /// Characters on the grid.
    pub characters: u32,
    /// Draw passes: 1 (main), 2 (depth prepass + main), 5 (4 shadow cascades + main).
    pub passes: u32,
    /// How vertices are skinned.
    pub skinning: SkinningMode,
    /// How palettes are uploaded.
    pub upload: UploadMode,
    /// Every character paused: no pose changes (measured for `dirty` only,
    /// where it must cost 0 palette bytes).
    pub paused: bool,
}

/// Everything `vkskin bench` will measure, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchPlan {
    /// The models, in command-line order.
    pub models: Vec<BenchModel>,
    /// The configurations in the order they run: model, then character
    /// count, then skinning, upload and pass count, so configurations
    /// sharing a scene are neighbours.
    pub configs: Vec<BenchConfig>,
    /// Timed frames per configuration.
    pub frames: u32,
    /// Untimed frames first, per configuration (pipelines, caches, clocks).
    pub warmup_frames: u32,
    /// A `--quick` run (recorded in the results' header).
    pub quick: bool,
    /// The output folder.
    pub out: PathBuf,
    /// Vulkan device: an index or part of its name.
    pub device: Option<String>,
    /// Khronos validation (with synchronization validation) on; any message fails the run.
    pub validation: bool,
    /// The command line, for the results' header.
    pub command: String,
}

/// The pass counts there is a frame setup for.
pub const PASS_SETUPS: [u32; 3] = [1, 2, 5];
/// Most characters one configuration may ask for.
pub const MAX_CHARACTERS: u32 = 100_000;
/// Most timed frames one configuration may ask for.
pub const MAX_FRAMES: u32 = 1_000_000;

/// The sweep `--quick` measures where an option is not given: small enough
/// to finish in under a minute on lavapipe (CI runs it).
mod quick {
    pub const CHARACTERS: [u32; 2] = [1, 16];
    pub const PASSES: [u32; 2] = [1, 2];
    pub const SKINNING: [super::SkinningMode; 2] =
        [super::SkinningMode::Compute, super::SkinningMode::Vertex];
    pub const FRAMES: u32 = 8;
    pub const WARMUP_FRAMES: u32 = 2;
}

/// The full sweep's defaults.
mod full {
    pub const CHARACTERS: [u32; 4] = [1, 10, 100, 1000];
    pub const FRAMES: u32 = 100;
    pub const WARMUP_FRAMES: u32 = 10;
}

impl BenchPlan {
    /// The plan for `args` (the cartesian product of the options, defaults
    /// from `--quick` or the full sweep for those not given); `command` is
    /// the command line as typed. One clear error for a bad option.
    pub fn from_args(args: &BenchArgs, command: impl Into<String>) -> Result<BenchPlan, String> {
        let characters = sorted_unique(if args.characters.is_empty() {
            if args.quick { quick::CHARACTERS.to_vec() } else { full::CHARACTERS.to_vec() }
        } else {
            args.characters.clone()
        });
        if let Some(bad) = characters.iter().find(|&&c| c == 0 || c > MAX_CHARACTERS) {
            return Err(format!("--characters: {bad} is not a character count (1 to {MAX_CHARACTERS})"));
        }
        let passes = sorted_unique(if args.passes.is_empty() {
            if args.quick { quick::PASSES.to_vec() } else { PASS_SETUPS.to_vec() }
        } else {
            args.passes.clone()
        });
        if let Some(bad) = passes.iter().find(|p| !PASS_SETUPS.contains(p)) {
            return Err(format!(
                "--passes: {bad} is not a pass setup (1 = main, 2 = depth prepass + main, 5 = 4 shadow cascades + main)"
            ));
        }
        let skinning = first_of_each(if args.skinning.is_empty() {
            if args.quick { quick::SKINNING.to_vec() } else { SkinningMode::ALL.to_vec() }
        } else {
            args.skinning.clone()
        });
        let uploads = first_of_each(if args.upload.is_empty() {
            UploadMode::ALL.to_vec()
        } else {
            args.upload.clone()
        });
        let frames = args.frames.unwrap_or(if args.quick { quick::FRAMES } else { full::FRAMES });
        if frames == 0 || frames > MAX_FRAMES {
            return Err(format!("--frames: {frames} is not a frame count (1 to {MAX_FRAMES})"));
        }
        let models: Vec<BenchModel> = if args.models.is_empty() {
            vec![BenchModel::BuiltIn]
        } else {
            first_of_each(args.models.iter().map(|m| BenchModel::File(PathBuf::from(m))).collect())
        };

        let mut configs = Vec::new();
        for model in 0..models.len() {
            for &characters in &characters {
                for &skinning in &skinning {
                    for &upload in &uploads {
                        // Pausing changes nothing but what dirty uploads skip.
                        let pauses: &[bool] =
                            if upload == UploadMode::Dirty { &[false, true] } else { &[false] };
                        for &paused in pauses {
                            for &passes in &passes {
                                configs.push(BenchConfig {
                                    model,
                                    characters,
                                    passes,
                                    skinning,
                                    upload,
                                    paused,
                                });
                            }
                        }
                    }
                }
            }
        }
        Ok(BenchPlan {
            models,
            configs,
            frames,
            warmup_frames: if args.quick { quick::WARMUP_FRAMES } else { full::WARMUP_FRAMES },
            quick: args.quick,
            out: PathBuf::from(&args.out),
            device: args.device.clone(),
            validation: args.validation,
            command: command.into(),
        })
    }

    /// A configuration's one-line name (the progress bar's message).
    pub fn label(&self, config: &BenchConfig) -> String {
        let passes =
            if config.passes == 1 { "1 pass".to_string() } else { format!("{} passes", config.passes) };
        format!(
            "{}, {} character{}, {}, {}{}, {passes}",
            self.models[config.model].label(),
            config.characters,
            if config.characters == 1 { "" } else { "s" },
            config.skinning.as_str(),
            config.upload.as_str(),
            if config.paused { " (paused)" } else { "" },
        )
    }
}

/// `values` sorted, each once.
fn sorted_unique(mut values: Vec<u32>) -> Vec<u32> {
    values.sort_unstable();
    values.dedup();
    values
}

/// `values` in their order, each kept at its first appearance.
fn first_of_each<T: PartialEq>(values: Vec<T>) -> Vec<T> {
    let mut kept: Vec<T> = Vec::with_capacity(values.len());
    for value in values {
        if !kept.contains(&value) {
            kept.push(value);
        }
    }
    kept
}

/// `vkskin bench`: plan, measure, report.
pub fn run(args: &BenchArgs) -> Result<(), String> {
    let plan = BenchPlan::from_args(args, command_line())?;
    // Fail on an unusable output folder before minutes of measuring.
    std::fs::create_dir_all(&plan.out)
        .map_err(|e| format!("{}: cannot create folder: {e}", plan.out.display()))?;
    let results = run_bench(&plan)?;
    report(&plan.out, &results)
}

// ---------------------------------------------------------------------------
// TO BE IMPLEMENTED BY THE LEAD (issue 8, GPU measurement runner): builds each
// configuration's scene on the chosen device, warms up, times `plan.frames`
// frames (GPU timestamps per phase, CPU timers for pose and palette write,
// the copy kernel over the skin pass's bytes), summarises them with
// `bench_report::Stat::from_samples`, and shows a `bench_report::BenchProgress`
// (one step per configuration, labelled with `plan.label(config)`).
// ---------------------------------------------------------------------------
/// Measures every configuration of `plan`.
pub fn run_bench(plan: &BenchPlan) -> Result<BenchResults, String> {
    let _ = plan;
    Err("bench: the GPU measurement runner is not implemented yet".to_string())
}

/// Writes the report of `results`: the table on stdout, `out/results.json`
/// and the SVG plots, their paths (and any plot skipped) on stderr.
pub fn report(out: &Path, results: &BenchResults) -> Result<(), String> {
    let mut stdout = std::io::stdout().lock();
    bench_report::print_table(&mut stdout, results).map_err(|e| format!("stdout: {e}"))?;
    let json = bench_report::write_json(out, results).map_err(|e| e.to_string())?;
    eprintln!("vkskin: wrote {}", json.display());
    let plots = bench_report::write_plots(out, results).map_err(|e| e.to_string())?;
    for path in &plots.written {
        eprintln!("vkskin: wrote {}", path.display());
    }
    for note in &plots.skipped {
        eprintln!("vkskin: {note}");
    }
    Ok(())
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
    use clap::Parser;

    /// Parses `vkskin bench ARGS...` and plans it.
    fn plan(args: &[&str]) -> Result<BenchPlan, String> {
        let cli = Cli::try_parse_from(["vkskin", "bench"].iter().chain(args)).map_err(|e| e.to_string())?;
        let Some(Command::Bench(args)) = cli.command else { panic!("not bench") };
        BenchPlan::from_args(&args, "vkskin bench")
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
        for s in [SkinningMode::Compute, SkinningMode::Vertex] {
            assert!(has(&|x| x.skinning == s));
        }
        for u in UploadMode::ALL {
            assert!(has(&|x| x.upload == u));
        }
        assert!(has(&|x| x.upload == UploadMode::Dirty && x.paused));
        assert!(!has(&|x| x.upload != UploadMode::Dirty && x.paused));
        assert_eq!(
            p.configs[0],
            BenchConfig {
                model: 0,
                characters: 1,
                passes: 1,
                skinning: SkinningMode::Compute,
                upload: UploadMode::InPlace,
                paused: false
            }
        );
        assert_eq!(p.label(&p.configs[0]), "built-in, 1 character, compute, inplace, 1 pass");
    }

    #[test]
    fn the_full_sweep_is_the_issues() {
        let p = plan(&["--out", "d"]).unwrap();
        assert_eq!((p.frames, p.quick), (100, false));
        // 4 counts x 4 skinning modes x 4 upload setups x 3 pass counts.
        assert_eq!(p.configs.len(), 4 * 4 * 4 * 3);
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
        assert_eq!(p.configs.len(), 2 * 3 * 2);
        let first = p.configs[0];
        assert_eq!((first.characters, first.passes, first.skinning), (1, 5, SkinningMode::DqsVertex));
        assert!(p.configs.iter().all(|c| c.upload == UploadMode::Staged && !c.paused));
        assert_eq!(
            p.label(p.configs.last().unwrap()),
            "b.gltf, 100 characters, dqs-compute, staged, 5 passes"
        );
    }

    #[test]
    fn bad_options_are_one_clear_error() {
        let error = |args: &[&str]| plan(args).unwrap_err();
        assert_eq!(
            error(&["--characters", "1,0", "--out", "d"]),
            "--characters: 0 is not a character count (1 to 100000)"
        );
        assert_eq!(
            error(&["--frames", "0", "--out", "d"]),
            "--frames: 0 is not a frame count (1 to 1000000)"
        );
        assert!(error(&["--passes", "3", "--out", "d"]).starts_with("--passes: 3 is not a pass setup"));
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
    }

    #[test]
    fn mode_names_are_the_results_names() {
        for mode in SkinningMode::ALL {
            assert_eq!(SkinningMode::from_str(mode.as_str(), false), Ok(mode));
        }
        for mode in UploadMode::ALL {
            assert_eq!(UploadMode::from_str(mode.as_str(), false), Ok(mode));
        }
        assert!(SkinningMode::DqsCompute.is_compute() && SkinningMode::DqsCompute.is_dual_quaternion());
        assert!(!SkinningMode::Vertex.is_compute() && !SkinningMode::Vertex.is_dual_quaternion());
    }

    #[test]
    fn the_report_writes_results_and_plots_into_the_folder() {
        use crate::bench_report::test_data::{entry, scratch};
        let out = scratch("cli_report");
        std::fs::create_dir_all(&out).unwrap();
        let header = bench_report::BenchHeader::new("llvmpipe", "Mesa", true, "vkskin bench --quick");
        let entries = vec![entry(1, 1, "compute", "inplace", false), entry(16, 2, "vertex", "dirty", true)];
        let results = BenchResults { header, entries };
        report(&out, &results).unwrap();
        assert_eq!(bench_report::read_json(&out.join(bench_report::RESULTS_FILE)).unwrap(), results);
        for plot in [bench_report::FRAME_TIME_PLOT, bench_report::UPLOAD_PLOT, bench_report::THROUGHPUT_PLOT]
        {
            assert!(std::fs::read_to_string(out.join(plot)).unwrap().contains("</svg>"), "{plot}");
        }
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
