//! `vkskin bench --quick --validation` end to end on the Vulkan device
//! (lavapipe without a GPU): it exits 0 with validation and synchronization
//! validation silent, and `results.json` holds compute and vertex skinning,
//! two character counts, two pass counts and every upload mode, every timing
//! finite (and positive wherever the phase ran), 0 palette bytes for paused
//! characters in dirty mode, and three SVG plots that parse as SVG. The
//! verdicts come before the table, every GPU figure printed from the one
//! clock the timestamp check chose, and the crossover and upload verdicts
//! (stdout and results.json) follow from the entries. Skips without a
//! device, unless VKSKIN_NO_SKIP is set.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

/// Runs `vkskin bench ARGS --out DIR` (DIR a fresh scratch folder named
/// after `tag`), checks that it exited 0, and returns DIR, the parsed
/// `results.json` and the run's stderr.
fn run_bench(tag: &str, args: &[&str]) -> (PathBuf, Value, String) {
    let (out, results, _, stderr) = run_bench_with_stdout(tag, args);
    (out, results, stderr)
}

/// `run_bench`, with its stdout too (before stderr).
fn run_bench_with_stdout(tag: &str, args: &[&str]) -> (PathBuf, Value, String, String) {
    run_bench_with_env(tag, args, &[])
}

/// `run_bench_with_stdout` with the environment variables `env` set.
fn run_bench_with_env(tag: &str, args: &[&str], env: &[(&str, &str)]) -> (PathBuf, Value, String, String) {
    let out = std::env::temp_dir().join(format!("vkskin-bench{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(env!("CARGO_BIN_EXE_vkskin"))
        .arg("bench")
        .args(args)
        .arg("--out")
        .arg(&out)
        .envs(env.iter().copied())
        .output()
        .expect("run vkskin bench");
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "vkskin bench {} failed: {stderr}", args.join(" "));
    let text = std::fs::read_to_string(out.join("results.json")).expect("results.json");
    let results: Value = serde_json::from_str(&text).expect("results.json is JSON");
    (out, results, String::from_utf8_lossy(&run.stdout).into_owned(), stderr)
}

/// An entry's skinning as the verdicts name it ("dqs-compute, cpu split").
fn skinning_label(e: &Value) -> String {
    let skinning = e["skinning"].as_str().expect("skinning");
    if e["dqs_split"] == "cpu" { format!("{skinning}, cpu split") } else { skinning.to_string() }
}

/// The median of an entry's figure at `key` ("frame_wall_us", or a path
/// into gpu_us), `None` where absent.
fn median(e: &Value, path: &[&str]) -> Option<f64> {
    path.iter().fold(e, |v, k| &v[*k])["median"].as_f64()
}

/// The verdicts printed before the table, every GPU figure from the clock
/// the header names (host-timed on lavapipe: its timestamps fail the check),
/// and the crossover and upload verdicts of results.json recomputed here
/// from its entries, independently of the program.
fn check_verdicts(results: &Value, stdout: &str) {
    let header = &results["header"];
    let check = &header["timestamp_check"];
    let (one, two) = (check["one_copy_us"].as_f64().unwrap(), check["two_copies_us"].as_f64().unwrap());
    let brackets = one > 0.0 && two >= 1.5 * one;
    let timing = header["gpu_timing"].as_str().expect("gpu_timing");
    assert_eq!(timing, if brackets { "timestamps" } else { "host-timed" }, "{check}");
    assert_eq!(header["pose_threads"], 1);

    let lines: Vec<&str> = stdout.lines().collect();
    let table = lines.iter().position(|l| l.starts_with("device: ")).expect("the table's header line");
    let first = |prefix: &str| lines.iter().position(|l| l.starts_with(prefix));
    for kind in ["clock: ", "crossover: ", "upload: ", "skin pass: ", "CPU: ", "memory: "] {
        let at = first(kind).unwrap_or_else(|| panic!("no {kind} verdict: {stdout}"));
        assert!(at < table, "the {kind}verdict comes after the table: {stdout}");
    }
    // One clock: the one chosen, named by each GPU verdict and the caption; the
    // table has no second efficiency column.
    let (chosen, other) =
        if brackets { ("timestamps)", "host-timed)") } else { ("host-timed)", "timestamps)") };
    for line in &lines[..table] {
        assert!(!line.ends_with(other), "a figure from the clock not chosen: {line}");
        let gpu = ["crossover: ", "upload: ", "skin pass: "].iter().any(|k| line.starts_with(k));
        assert!(!gpu || line.ends_with(chosen), "{line}");
    }
    assert!(!lines[table + 1].contains("eff."), "{}", lines[table + 1]);
    let caption = lines.iter().find(|l| l.starts_with("(GPU figures: ")).expect("the caption");
    let named = if brackets { "(GPU figures: GPU timestamps" } else { "(GPU figures: host-timed" };
    assert!(caption.starts_with(named), "{caption}");

    let entries = results["entries"].as_array().expect("entries");
    let frame = |e: &Value| {
        if brackets { median(e, &["gpu_us", "frame"]) } else { median(e, &["frame_wall_us"]) }
    };
    let verdicts = &results["verdicts"];
    let crossovers = verdicts["crossovers"].as_array().expect("crossovers");
    assert!(!crossovers.is_empty(), "no crossover verdict");
    for x in crossovers {
        let series = |skinning: &Value| -> Vec<(u64, f64)> {
            let mut points: Vec<(u64, f64)> = entries
                .iter()
                .filter(|e| {
                    e["model"] == x["model"]
                        && e["passes"] == x["passes"]
                        && e["upload"] == x["upload"]
                        && e["paused"] == false
                        && skinning_label(e) == skinning.as_str().unwrap()
                })
                .map(|e| (e["characters"].as_u64().unwrap(), frame(e).expect("a frame figure")))
                .collect();
            points.sort_by_key(|p| p.0);
            points
        };
        let (compute, vertex) = (series(&x["compute"]), series(&x["vertex"]));
        let counts: Vec<u64> = compute.iter().map(|p| p.0).collect();
        assert_eq!(counts, vertex.iter().map(|p| p.0).collect::<Vec<_>>(), "{x}");
        // The smallest count from which compute is faster at every larger count.
        let wins: Vec<bool> = compute.iter().zip(&vertex).map(|(c, v)| c.1 < v.1).collect();
        let from = (0..=wins.len()).find(|&i| wins[i..].iter().all(|&w| w)).unwrap();
        let expected = counts.get(from).copied();
        assert_eq!(x["characters"].as_u64(), expected, "{x}");
        assert_eq!(
            x["below"].as_u64(),
            from.checked_sub(1).map(|i| counts[i]).filter(|_| expected.is_some())
        );
        let at = from.min(counts.len() - 1);
        assert_eq!(x["compute_us"].as_f64(), Some(compute[at].1), "{x}");
        assert_eq!(x["vertex_us"].as_f64(), Some(vertex[at].1), "{x}");
        let passes = x["passes"].as_u64().unwrap();
        let tag = if passes == 1 { " 1 pass,".to_string() } else { format!(" {passes} passes,") };
        let line = lines[..table]
            .iter()
            .find(|l| l.starts_with("crossover: built-in,") && l.contains(&tag))
            .expect("the crossover's line");
        match expected {
            Some(c) => {
                assert!(line.contains(&format!(" from {c} character")), "{line}: compute wins from {c}")
            }
            None => assert!(line.contains("no crossover between"), "{line}"),
        }
    }
    // Upload: bytes per character and the copy per 1,000 characters, from the entry named.
    for u in verdicts["uploads"].as_array().expect("uploads") {
        let e = entries
            .iter()
            .find(|e| {
                e["model"] == u["model"]
                    && e["upload"] == u["upload"]
                    && e["characters"] == u["characters"]
                    && e["passes"] == u["passes"]
                    && e["paused"] == false
                    && skinning_label(e) == u["skinning"].as_str().unwrap()
            })
            .unwrap_or_else(|| panic!("no entry for {u}"));
        let characters = e["characters"].as_f64().unwrap();
        let bytes = e["palette_bytes"].as_f64().unwrap();
        assert_eq!(u["bytes_per_character"].as_f64(), Some(bytes / characters), "{u}");
        let copy = match e["upload"].as_str() {
            Some("inplace") => None,
            _ if brackets => median(e, &["gpu_us", "upload"]),
            _ => median(e, &["staged_copy_wall_us"]),
        };
        let per_1000 = u["gpu_copy_us_per_1000"].as_f64();
        match copy.filter(|&us| us > 0.0) {
            Some(us) => {
                let close = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() <= 1e-9 * b.abs());
                assert!(close(per_1000, us / characters * 1000.0), "{u}");
                assert!(close(u["copy_gb_per_s"].as_f64(), bytes / us / 1000.0), "{u}");
            }
            None => assert_eq!(per_1000, None, "{u}"),
        }
    }
    // Memory: the largest crowd's scene held the most any of its entries
    // held, and each character past the smallest count added the
    // difference over the counts; more characters hold more (their
    // skinned output above all).
    for m in verdicts["memory"].as_array().expect("memory verdicts") {
        let held = |characters: u64| {
            let at = entries.iter().filter(|e| e["model"] == m["model"] && e["characters"] == characters);
            at.map(|e| e["device_bytes"].as_u64().expect("device_bytes")).max().expect("entries")
        };
        let largest = m["characters"].as_u64().unwrap();
        assert_eq!(m["device_bytes"].as_u64(), Some(held(largest)), "{m}");
        let [from, each] = [&m["per_character"][0], &m["per_character"][1]];
        let (from, each) = (from.as_u64().expect("a smaller count"), each.as_f64().unwrap());
        let added = (held(largest) - held(from)) as f64 / (largest - from) as f64;
        assert!(each > 0.0 && (each - added).abs() <= 1e-9 * added, "{m}");
        // About how many the device's heap holds: what the smallest scene
        // held besides its characters, then as many more as fit at that.
        let heap = header["device_local_bytes"].as_u64().expect("the heap");
        let fixed = held(from) as f64 - from as f64 * each;
        let fits = ((heap as f64 - fixed) / each).max(0.0).floor() as u64;
        assert_eq!((m["fits"][0].as_u64(), m["fits"][1].as_u64()), (Some(heap), Some(fits)), "{m}");
    }
    // Refinements are counts the sweep did not ask for.
    for e in entries.iter().filter(|e| e["refinement"] == true) {
        assert!(![1, 16].contains(&e["characters"].as_u64().unwrap()), "{e}");
    }
}

#[test]
fn quick_bench_writes_complete_results_and_plots() {
    if crate::common::context().is_none() {
        return;
    }
    let started = std::time::Instant::now();
    let (out, results, stdout, stderr) = run_bench_with_stdout("", &["--quick", "--validation"]);
    // Reported, never asserted: the budget is checked by people, on quiet machines.
    eprintln!("bench --quick --validation took {:.1} s", started.elapsed().as_secs_f64());
    assert!(!stderr.contains("skipped"), "a configuration was skipped: {stderr}");
    assert!(stderr.contains("vkskin: bench: GPU figures from "), "the clock is announced: {stderr}");
    check_verdicts(&results, &stdout);

    for key in ["device", "driver", "date", "commit"] {
        let v = results["header"][key].as_str().unwrap_or_default();
        assert!(!v.is_empty(), "header.{key} is empty");
    }
    let entries = results["entries"].as_array().expect("entries");
    let set = |key: &str| -> BTreeSet<String> { entries.iter().map(|e| e[key].to_string()).collect() };
    assert!(set("skinning").contains("\"compute\"") && set("skinning").contains("\"vertex\""));
    assert!(set("characters").len() >= 2, "character counts: {:?}", set("characters"));
    assert!(set("passes").len() >= 2, "pass counts: {:?}", set("passes"));
    for upload in ["inplace", "staged", "dirty"] {
        assert!(set("upload").contains(&format!("\"{upload}\"")), "no {upload} entries");
    }

    for e in entries {
        let name = format!("{} {} {} {} passes", e["characters"], e["skinning"], e["upload"], e["passes"]);
        let stats = |v: &Value| -> [f64; 2] {
            [v["median"].as_f64().expect("median"), v["p95"].as_f64().expect("p95")]
        };
        let gpu = &e["gpu_us"];
        let mut timings = vec![
            ("cpu_pose_us", stats(&e["cpu_pose_us"])),
            ("gpu frame", stats(&gpu["frame"])),
            ("copy kernel", stats(&e["copy_kernel_us"])),
            ("gpu upload", stats(&gpu["upload"])),
            ("gpu skin", stats(&gpu["skin"])),
        ];
        let passes = gpu["passes"].as_array().expect("passes");
        assert_eq!(passes.len() as u64, e["passes"].as_u64().expect("passes"), "{name}: one time per pass");
        timings.extend(passes.iter().map(|p| ("gpu pass", stats(p))));
        for (what, [median, p95]) in &timings {
            assert!(median.is_finite() && p95.is_finite() && *median >= 0.0, "{name}: {what} {median}/{p95}");
            assert!(p95 >= median, "{name}: {what}: p95 {p95} below the median {median}");
        }
        // Whole frames are always host-timed too (both clocks kept).
        let wall = stats(&e["frame_wall_us"]);
        assert!(wall[0] > 0.0 && wall[1] >= wall[0], "{name}: frame_wall_us {wall:?}");
        assert!(!e["samples"]["frame_wall_us"].as_array().expect("frame wall samples").is_empty());
        // Host-timed figures are left out when lost in the noise; present,
        // they are positive medians under their p95.
        for key in ["copy_kernel_wall_us", "skin_wall_us", "staged_copy_wall_us", "buffer_copy_wall_us"] {
            if let Some(v) = e.get(key) {
                let [median, p95] = stats(v);
                assert!(median > 0.0 && p95 >= median, "{name}: {key} {median}/{p95}");
            }
        }
        // Phases that ran took time: the frame, every pass, the copy kernel,
        // the skin dispatch (compute paths) and the staged copies of poses
        // that changed.
        let ran = |what: &str| timings.iter().filter(|(w, _)| *w == what).all(|(_, [m, _])| *m > 0.0);
        assert!(ran("gpu frame") && ran("gpu pass") && ran("copy kernel"), "{name}: {timings:?}");
        let compute = e["skinning"].as_str().is_some_and(|s| s.ends_with("compute"));
        assert!(!compute || ran("gpu skin"), "{name}: no skin time");
        // Shadow cascades' triangles only where the frame draws them.
        assert_eq!(e.get("shadow_triangles").is_some(), e["passes"] == 5, "{name}");
        let paused = e["paused"].as_bool().expect("paused");
        if e["upload"] == "dirty" && paused {
            assert_eq!(e["palette_bytes"], 0, "{name}: paused characters uploaded palettes");
        } else {
            assert!(e["palette_bytes"].as_u64().expect("bytes") > 0, "{name}: no palette bytes");
        }
    }

    for plot in ["frame_time_vs_characters.svg", "upload_vs_characters.svg", "skin_throughput.svg"] {
        let svg = std::fs::read_to_string(out.join(plot)).unwrap_or_else(|e| panic!("{plot}: {e}"));
        let head = svg.trim_start();
        assert!(head.starts_with("<svg") || head.starts_with("<?xml"), "{plot} is not SVG");
        assert!(svg.contains("</svg>"), "{plot} is cut short");
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// The dual-quaternion modes measure both places the matrices can be split
/// (`dqs_split` "shader" and "cpu", on the compute and the vertex path),
/// with validation silent over the CPU-split palettes' staged copies too,
/// in frames that draw the shadow cascades.
#[test]
fn dual_quaternion_modes_measure_both_splits() {
    if crate::common::context().is_none() {
        return;
    }
    let (out, results, _) = run_bench(
        "-dqs",
        &[
            "--quick",
            "--validation",
            "--skinning",
            "dqs-compute,dqs-vertex",
            "--upload",
            "staged,inplace",
            "--characters",
            "2",
            "--passes",
            "5",
            "--frames",
            "3",
        ],
    );
    let entries = results["entries"].as_array().expect("entries");
    let mut seen = BTreeSet::new();
    for e in entries {
        let (skinning, split) = (e["skinning"].as_str().unwrap(), e["dqs_split"].as_str().unwrap());
        assert!(e["gpu_us"]["frame"]["median"].as_f64().unwrap() > 0.0, "{skinning} {split}: no frame time");
        assert!(e["palette_bytes"].as_u64().unwrap() > 0, "{skinning} {split}: no palette bytes");
        // The shadow cascades drew both characters (the draw order's
        // cascade sections, read by every skinning mode's vertex shader).
        let (main, shadows) = (e["triangles"].as_u64().unwrap(), e["shadow_triangles"].as_u64().unwrap());
        assert!(
            main > 0 && shadows >= main,
            "{skinning} {split}: {main} triangles, {shadows} in the cascades"
        );
        seen.insert((skinning.to_string(), split.to_string(), e["upload"].as_str().unwrap().to_string()));
    }
    assert_eq!(seen.len(), 2 * 2 * 2, "every mode, split and upload once: {seen:?}");
    let _ = std::fs::remove_dir_all(&out);
}

/// `--threads 2`: the crowd poses on two threads, which also record the
/// frame's per-character work once a crowd passes 2,048 characters (its
/// draw order and writes split over the crowd's pool), under validation;
/// the header, the table and the verdicts say so, and the GPU pose verdict
/// puts the writes of both sides of the trade beside their poses.
#[test]
fn a_bench_on_two_threads_records_on_the_crowds_pool() {
    if crate::common::context().is_none() {
        return;
    }
    let (out, results, stdout, _) = run_bench_with_stdout(
        "-threads",
        &[
            "--quick",
            "--validation",
            "--threads",
            "2",
            "--characters",
            "2100",
            "--skinning",
            "compute",
            "--upload",
            "inplace",
            "--passes",
            "1",
            "--frames",
            "2",
            "--pose",
            "cpu,gpu",
        ],
    );
    assert_eq!(results["header"]["pose_threads"], 2);
    let entries = results["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 2, "CPU and GPU pose");
    for e in entries {
        assert!(median(e, &["cpu_palette_write_us"]).unwrap() > 0.0, "{e}");
    }
    for said in [
        "characters on 2 threads): one core animates",
        "(2,100 characters on 2 threads; ",
        "GPU pose: built-in, 2,100 characters on 2 threads: CPU pose ",
        "the CPU pose update of every character on 2 threads",
    ] {
        assert!(stdout.contains(said), "{said:?} not in {stdout}");
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// A rig the GPU cannot pose (its clips compressed) has its GPU-pose
/// scenes skipped, each in one line saying why, while its CPU-pose scenes
/// run.
#[test]
fn a_rig_the_gpu_cannot_pose_skips_its_gpu_pose_scenes() {
    if crate::common::context().is_none() {
        return;
    }
    let args = "--quick --validation --compressed-clips --pose gpu,cpu --characters 10 --skinning compute \
                --upload inplace --passes 1 --frames 2";
    let args: Vec<&str> = args.split_whitespace().collect();
    let (out, results, _, stderr) = run_bench_with_env("-gpu-pose-refused", &args, &[]);
    let entries = results["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 1, "the CPU-pose scene alone: {entries:?}");
    assert!(entries[0]["pose"].is_null(), "posed on the CPU: {}", entries[0]);
    let skipped = "skipped built-in, 10 characters, GPU pose, compute, inplace, 1 pass: default_character.glb: \
                   GPU pose samples the clips' own keys: it cannot pose a rig with compressed clips";
    assert_eq!(stderr.matches(skipped).count(), 1, "{stderr}");
    let _ = std::fs::remove_dir_all(&out);
}

/// A crowd whose full detail is past the device's output buffers (here
/// lowered to 256 KiB, 128 built-in characters in 64 of them) is still
/// benched: compute skinning at its detail levels, within the vertex
/// budget, and vertex skinning (which writes no output) at full detail
/// too. The compute row at full detail is skipped with one line naming
/// the limit, and no row has a copy kernel (nothing moves the full
/// scene's bytes).
#[test]
fn a_crowd_past_the_output_buffers_at_full_detail_is_benched_at_its_levels() {
    if crate::common::context().is_none() {
        return;
    }
    let (out, results, _, stderr) = run_bench_with_env(
        "-past-full",
        &[
            "--quick",
            "--validation",
            "--characters",
            "150",
            "--detail",
            "auto,full",
            "--skinning",
            "compute,vertex",
            "--upload",
            "staged",
            "--passes",
            "1",
            "--frames",
            "2",
        ],
        &[("VKSKIN_TEST_OUTPUT_BUFFER_BYTES", "262144")],
    );
    let skipped: Vec<&str> = stderr.lines().filter(|l| l.contains("skipped")).collect();
    assert_eq!(skipped.len(), 1, "{stderr}");
    for said in [
        "skipped built-in, 150 characters, compute, staged, 1 pass, full detail: 150 characters of",
        "more than the device's 64 largest output buffers",
        "at most 128 characters of this model fit",
        "(its compute skinning measured at its detail levels only)",
    ] {
        assert!(skipped[0].contains(said), "{said:?} not in {}", skipped[0]);
    }
    let entries = results["entries"].as_array().expect("entries");
    let rows: Vec<(&str, bool, bool)> = entries
        .iter()
        .map(|e| (e["skinning"].as_str().unwrap(), e["detail"] == "full", e.get("copy_kernel_us").is_some()))
        .collect();
    let measured = [("compute", false, false), ("vertex", false, false), ("vertex", true, false)];
    assert_eq!(rows, measured, "{entries:?}");
    let crowd = &entries[0];
    let skinned = crowd["skinned_vertices"].as_u64().expect("fewer vertices skinned than the scene's");
    let scene = crowd["vertices"].as_u64().unwrap() * 150;
    assert!(skinned > 0 && skinned < scene, "{skinned} of {scene}");
    for e in entries {
        assert!(median(e, &["frame_wall_us"]).unwrap() > 0.0, "{e}");
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// `bench --max-triangles` draws each crowd within the budget at coarser
/// levels and records the budget and the pixel error they were drawn
/// within; full detail ignores it (every full mesh).
#[test]
fn a_triangle_budget_is_kept_and_recorded() {
    if crate::common::context().is_none() {
        return;
    }
    let (out, results, _) = run_bench(
        "-triangles",
        &[
            "--quick",
            "--validation",
            "--characters",
            "100",
            "--detail",
            "auto,full",
            "--skinning",
            "compute",
            "--upload",
            "inplace",
            "--passes",
            "1",
            "--frames",
            "2",
            "--max-triangles",
            "20000",
        ],
    );
    assert_eq!(results["header"]["max_triangles"], 20000, "{}", results["header"]);
    let entries = results["entries"].as_array().expect("entries");
    let rows: Vec<(bool, u64, Option<f64>)> = entries
        .iter()
        .map(|e| (e["detail"] == "full", e["triangles"].as_u64().unwrap(), e["pixel_error"].as_f64()))
        .collect();
    assert_eq!(rows.len(), 2, "{entries:?}");
    let (auto, full) = (rows[0], rows[1]);
    assert!(!auto.0 && auto.1 <= 20000 && auto.2.is_some_and(|px| px > 0.5), "{auto:?}");
    assert!(full.0 && full.1 > 20000 && full.2.is_none(), "{full:?}");
    let _ = std::fs::remove_dir_all(&out);
}

/// `bench --gpu-frame-budget` steers each crowd's triangle budget by the
/// GPU times of its warm-up frames and records the budget, with the
/// triangles and pixel error the crowd settled at, and a verdict says
/// whether the frames kept it: lavapipe takes far longer than 1 ms for
/// 100 characters, so every one is coarser than half a pixel (here, at
/// its coarsest) and the budget is not kept.
#[test]
fn a_gpu_frame_budget_is_steered_and_recorded() {
    if crate::common::context().is_none() {
        return;
    }
    let args = [
        "--quick",
        "--validation",
        "--characters",
        "100",
        "--skinning",
        "compute",
        "--upload",
        "inplace",
        "--passes",
        "1",
        "--frames",
        "2",
        "--gpu-frame-budget",
        "1",
    ];
    let (out, results, stdout, _) = run_bench_with_stdout("-gpu-frame", &args);
    assert_eq!(results["header"]["gpu_frame_budget_ms"], 1.0, "{}", results["header"]);
    let entries = results["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 1, "{entries:?}");
    let e = &entries[0];
    let coarser = e["pixel_error"] == "coarsest" || e["pixel_error"].as_f64().is_some_and(|px| px > 0.5);
    assert!(coarser, "{e}");
    // The full levels, then coarser ones: counts far enough apart for the
    // steering to tell the frame's fixed cost from the triangles'.
    let cost = |field: &str| e["gpu_frame_cost"][field].as_f64().unwrap_or_else(|| panic!("{field}: {e}"));
    assert!(cost("fixed_us") >= 0.0 && cost("per_triangle_ns") >= 0.0, "{e}");
    assert!(stdout.contains("within a GPU frame budget of 1.0 ms"), "{stdout}");
    // The verdict: what the crowd drew within the budget, and whether
    // its frames kept it (lavapipe's cannot).
    let verdict = stdout.lines().find(|l| l.starts_with("budget: ")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        verdict.starts_with(
            "budget: built-in, 100 characters, 1 pass, GPU frame budget 1.00 ms: compute skinning"
        ) && verdict.contains(": over it")
            && verdict.contains(", its frames cost "),
        "{verdict}"
    );
    assert_eq!(results["verdicts"]["budget"].as_array().map(Vec::len), Some(1), "{}", results["verdicts"]);
    let _ = std::fs::remove_dir_all(&out);
}
