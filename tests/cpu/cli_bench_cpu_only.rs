//! `vkskin bench --cpu-only`: the CPU side of a crowd without a GPU,
//! written as results.json entries with the usual fields and none of the
//! GPU ones.

use serde_json::Value;

fn bench(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_vkskin")).arg("bench").args(args).output().unwrap()
}

/// `vkskin bench --cpu-only ARGS... --out DIR`, which must succeed: its
/// results.json and what it printed.
fn cpu_only(args: &[&str], dir: &std::path::Path) -> (Value, String) {
    let out = dir.to_str().unwrap();
    let run = bench(&[&["--cpu-only"][..], args, &["--out", out]].concat());
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(run.status.success(), "{}\n{stdout}", String::from_utf8_lossy(&run.stderr));
    let results = serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap();
    (results, stdout)
}

#[test]
fn a_cpu_only_run_writes_crowd_figures_without_gpu_fields() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let (results, stdout) = cpu_only(&["--characters", "10,40", "--frames", "3"], dir.path());
    assert_eq!(results["header"]["kind"], "cpu-only");
    // Which kernels ran: what this CPU gives this process too.
    assert_eq!(results["header"]["simd"], vkskin::anim::lanes8::Simd::detect().name());
    let cores = results["header"]["cores"].as_u64().unwrap();
    let entries = results["entries"].as_array().unwrap();
    let built_in = vkskin::asset::load_default_character().unwrap();
    let (joints, palette) = (built_in.skeleton.len() as f64, built_in.palette_len() as f64 * 64.0);
    // The joints its skins name, each once.
    let named: std::collections::BTreeSet<u32> =
        built_in.skins.iter().flat_map(|s| s.joints.iter().copied()).collect();
    let skin_joints = named.len() as f64;
    assert!(skin_joints > 0.0 && skin_joints < joints, "the built-in character: {skin_joints} of {joints}");
    // 2 counts x 3 LOD mixes x (1 thread, and every core when there are more).
    assert_eq!(entries.len() as u64, 2 * 3 * if cores > 1 { 2 } else { 1 });
    for e in entries {
        assert_eq!(e["model"], "built-in");
        assert_eq!(e["joints"].as_f64().unwrap(), joints);
        assert!([10, 40].contains(&e["characters"].as_u64().unwrap()), "{e}");
        for field in ["gpu_us", "copy_kernel_us", "palette_bytes", "skinning", "upload"] {
            assert!(e.get(field).is_none(), "no GPU field {field}: {e}");
        }
        let (median, p95) =
            (e["cpu_pose_us"]["median"].as_f64().unwrap(), e["cpu_pose_us"]["p95"].as_f64().unwrap());
        assert!(median > 0.0 && p95 >= median, "{e}");
        let per_joint = e["ns_per_joint"].as_f64().unwrap();
        let threads = e["threads"].as_f64().unwrap();
        let expected = median * threads * 1e3 / (e["characters"].as_f64().unwrap() * joints);
        assert!((per_joint - expected).abs() <= 1e-9 * expected, "{e}");
        assert_eq!(e["skin_joints"].as_f64().unwrap(), skin_joints, "{e}");
        let per_skin_joint = e["ns_per_skin_joint"].as_f64().unwrap();
        let expected = per_joint * joints / skin_joints;
        assert!((per_skin_joint - expected).abs() <= 1e-9 * expected, "{e}");
        let per_core = e["characters_per_core_frame"].as_f64().unwrap();
        assert!(
            (per_core * per_joint * joints * 1e-3 - 1e6 / 60.0).abs() < 1e-6 * per_core * per_joint,
            "{e}"
        );
        // Each character keeps at least its own palette (64 B per skin
        // joint); the rig is shared, so far less than the model.
        let bytes = e["bytes_per_character"].as_f64().unwrap();
        assert_eq!(e["palette_bytes_per_character"].as_f64().unwrap(), palette);
        assert!((palette..1e6).contains(&bytes), "{bytes} B per character");
        // All near, every character is posed every frame; under the mix
        // 10 % + 30 % / 2 + 60 % / 4 of them; seen, no more than all.
        let (posed, n) = (e["posed_per_frame"].as_f64().unwrap(), e["characters"].as_f64().unwrap());
        match e["lod"].as_str().unwrap() {
            "all-near" => assert_eq!(posed, n, "{e}"),
            "lod" => assert!(posed < 0.5 * n, "{e}"),
            "seen" => assert!(posed > 0.0 && posed <= n, "{e}"),
            other => panic!("an LOD mix {other}"),
        }
    }
    assert!(stdout.contains("ns/joint"), "a table: {stdout}");
    assert!(stdout.contains("the LOD mix costs"), "the LOD saving: {stdout}");
    assert!(stdout.contains("seen from the grid's edge, the crowd costs"), "the seen crowd: {stdout}");
    let compare = std::process::Command::new(env!("CARGO_BIN_EXE_vkskin"))
        .args(["compare", out, out])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&compare.stderr);
    assert!(!compare.status.success() && stderr.contains("CPU-only results"), "{stderr}");
}

#[test]
fn a_cpu_only_run_times_the_cpu_side_of_a_gpu_posed_crowd_beside_the_cpu_pose() {
    let dir = tempfile::tempdir().unwrap();
    let (results, stdout) =
        cpu_only(&["--pose", "cpu,gpu", "--characters", "12", "--frames", "2"], dir.path());
    let entries = results["entries"].as_array().unwrap();
    let cores = results["header"]["cores"].as_u64().unwrap();
    let per_pose = 3 * if cores > 1 { 2 } else { 1 };
    assert_eq!(entries.len() as u64, 2 * per_pose);
    // CPU-posed entries first, as `bench` writes them: no `pose` field;
    // then the GPU-posed crowd's CPU side, `"pose": "gpu"`.
    let (cpu, gpu) = entries.split_at(per_pose as usize);
    assert!(cpu.iter().all(|e| e.get("pose").is_none()), "{cpu:?}");
    assert!(
        gpu.iter().all(|e| e["pose"] == "gpu" && e["cpu_pose_us"]["median"].as_f64().unwrap() > 0.0),
        "{gpu:?}"
    );
    for (c, g) in cpu.iter().zip(gpu) {
        for field in ["characters", "threads", "lod", "joints"] {
            assert_eq!(c[field], g[field], "{field}");
        }
    }
    assert!(stdout.contains("posed on the GPU, the CPU's frame is"), "the comparison line: {stdout}");
}

#[test]
fn a_cpu_only_gpu_pose_is_refused_for_compressed_clips() {
    let run = bench(&[
        "--cpu-only",
        "--pose",
        "gpu",
        "--compressed-clips",
        "--characters",
        "2",
        "--out",
        "/nonexistent/never",
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success() && stderr.contains("compressed"), "{stderr}");
}

#[test]
fn cpu_only_refuses_gpu_options() {
    let flags = [
        &["--skinning", "compute"][..],
        &["--passes", "2"],
        &["--validation"],
        &["--upload", "dirty"],
        &["--max-triangles", "1000"],
        &["--gpu-frame-budget", "16.7"],
    ];
    for flag in flags {
        let args = [&["--cpu-only", "--out", "/nonexistent/never"][..], flag].concat();
        let run = bench(&args);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(!run.status.success() && stderr.contains("cannot be used with"), "{args:?}: {stderr}");
    }
}

/// `--threads` picks the thread counts (one always among them, each once,
/// ascending), and is refused out of range, and as more than one count
/// without `--cpu-only`.
#[test]
fn cpu_only_threads_are_the_counts_asked_for_and_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let (results, stdout) =
        cpu_only(&["--characters", "12", "--frames", "2", "--threads", "3,2,3"], dir.path());
    let threads: Vec<u64> = results["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["lod"] == "all-near")
        .map(|e| e["threads"].as_u64().unwrap())
        .collect();
    assert_eq!(threads, [1, 2, 3], "{stdout}");
    // More threads than cores share them, and the line says so (where
    // sysfs describes the cores).
    let header = &results["header"];
    let physical = header["physical_cores"].as_u64();
    let described = std::path::Path::new("/sys/devices/system/cpu/cpu0/topology/core_id").exists();
    assert_eq!(physical.is_some(), described, "{header}");
    let cores = physical.map(|p| p.min(header["cores"].as_u64().unwrap()));
    for many in [2, 3] {
        let line = stdout.lines().find(|l| l.contains(&format!("all-near: {many} threads")));
        let line = line.unwrap_or_else(|| panic!("an efficiency line for {many}: {stdout}"));
        match cores {
            Some(cores) if many > cores => {
                assert!(
                    line.ends_with(&format!(
                        "; {many} threads share {cores} core{})",
                        if cores == 1 { "" } else { "s" }
                    )),
                    "{line}"
                )
            }
            _ => assert!(!line.contains("share"), "{line}"),
        }
    }
    // Outside --cpu-only one count is the crowd's threads; two are refused
    // before any device is opened.
    for args in [&["--threads", "2,3", "--out", out][..], &["--cpu-only", "--threads", "0", "--out", out]] {
        let run = bench(args);
        assert!(!run.status.success(), "{args:?} accepted");
    }
}
