//! `vkskin bench` and `vkskin render` when the disk fills, the process is
//! killed half way through its output, or the GPU device is lost, with the
//! test-only switches (`VKSKIN_TEST_WRITE_LIMIT`,
//! `VKSKIN_TEST_STALL_WRITES_AFTER`, `VKSKIN_TEST_LOSE_DEVICE_AFTER`; see
//! `guide::testing`): every output is whole or not there, the previous file
//! stays byte for byte, one line says what happened, no temporary file is
//! left, and the next run succeeds. Runs with validation: a message after a
//! loss fails the command. Skips without a device, unless VKSKIN_NO_SKIP.

use crate::common::faults::{kill_once_stalled, kill_when, run, stderr_lines, temp_files, vkskin};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The smallest bench the command line allows: one configuration (or one
/// per count in `characters`), one timed frame, at the quick size.
const TINY_BENCH: &[&str] =
    &["bench", "--quick", "--skinning", "compute", "--upload", "inplace", "--passes", "1", "--frames", "1"];

/// What an earlier run left at each output path.
const PREVIOUS: &[u8] = b"previous run\n";

/// The plots and the report page bench writes beside results.json.
const PLOTS: [&str; 4] =
    ["frame_time_vs_characters.svg", "upload_vs_characters.svg", "skin_throughput.svg", "report.html"];

/// A fresh folder with the built-in character written as `model.glb`, or
/// `None` (a skip) without a Vulkan device.
fn setup(name: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    crate::common::context()?;
    let dir = tempfile::Builder::new().prefix(&format!("vkskin-faults-{name}-")).tempdir().unwrap();
    let model = dir.path().join("model.glb");
    let made = run(vkskin().arg("generate-default").arg("--out").arg(&model));
    assert!(made.status.success(), "generate-default: {}", String::from_utf8_lossy(&made.stderr));
    Some((dir, model))
}

fn bench(out: &Path, characters: &str) -> Command {
    let mut command = vkskin();
    command.args(TINY_BENCH).args(["--characters", characters, "--validation", "--out"]).arg(out);
    command
}

fn render(model: &Path, out: &Path, frames: u32) -> Command {
    let mut command = vkskin();
    let frames = frames.to_string();
    command
        .arg("render")
        .arg(model)
        .args(["--size", "64x48", "--frames", &frames, "--validation", "--out"])
        .arg(out);
    command
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The number of frames in the (animated) PNG at `path`, every one decoded.
fn decoded_frames(path: &Path) -> u32 {
    let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut reader = png::Decoder::new(file).read_info().expect("a PNG");
    let frames = reader.info().animation_control().map_or(1, |c| c.num_frames);
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    for i in 0..frames {
        reader.next_frame(&mut buf).unwrap_or_else(|e| panic!("frame {i} of {frames}: {e}"));
    }
    frames
}

fn results(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).expect("results.json is JSON")
}

#[test]
fn bench_on_a_full_disk_keeps_every_previous_file() {
    let Some((dir, _)) = setup("bench-full") else { return };
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    for name in std::iter::once("results.json").chain(PLOTS) {
        std::fs::write(out.join(name), PREVIOUS).unwrap();
    }
    let o = run(bench(&out, "1").env("VKSKIN_TEST_WRITE_LIMIT", "0"));
    assert!(!o.status.success(), "bench exited 0: {}", stderr(&o));
    let lines = stderr_lines(&o);
    let failed: Vec<&String> = lines.iter().filter(|l| l.contains("not written")).collect();
    assert_eq!(failed.len(), 1, "one line names what was not written: {lines:?}");
    let line = failed[0];
    assert_eq!(Some(line), lines.last(), "it is the last line");
    let json = out.join("results.json");
    assert!(line.starts_with(&format!("vkskin: {}", json.display())), "{line}");
    assert!(line.contains("not written (No space left on device); the previous file"), "{line}");
    assert_eq!(std::fs::read(&json).unwrap(), PREVIOUS, "results.json changed");
    for plot in PLOTS {
        let path = out.join(plot);
        // A plot is either not written (and named in the line) or skipped
        // for want of data (its stale file removed, as without a fault).
        if path.exists() {
            assert_eq!(std::fs::read(&path).unwrap(), PREVIOUS, "{plot} changed");
            assert!(line.contains(&path.display().to_string()), "{plot} not named: {line}");
        }
    }
    assert_eq!(temp_files(&out), Vec::<String>::new());
}

#[test]
fn bench_killed_while_writing_results_leaves_the_previous_file() {
    let Some((dir, _)) = setup("bench-killed") else { return };
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("results.json"), PREVIOUS).unwrap();
    // Killed with 200 bytes of results.json written (the first file).
    kill_once_stalled(bench(&out, "1").env("VKSKIN_TEST_STALL_WRITES_AFTER", "200"));
    assert_eq!(
        std::fs::read(out.join("results.json")).unwrap(),
        PREVIOUS,
        "a killed bench changed results.json"
    );
    assert_eq!(temp_files(&out).len(), 1, "{:?}", temp_files(&out));
    let o = run(&mut bench(&out, "1"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(results(&out)["entries"].as_array().unwrap().len(), 1);
    assert_eq!(temp_files(&out), Vec::<String>::new(), "the next run left temporary files");
}

#[test]
fn render_on_a_full_disk_keeps_the_previous_image() {
    let Some((dir, model)) = setup("render-full") else { return };
    let out = dir.path().join("anim.png");
    for (frames, limit) in [(1, "0"), (6, "0"), (6, "3000")] {
        std::fs::write(&out, PREVIOUS).unwrap();
        let o = run(render(&model, &out, frames).env("VKSKIN_TEST_WRITE_LIMIT", limit));
        let what = format!("{frames} frames, limit {limit}");
        assert!(!o.status.success(), "{what}: render exited 0");
        let expected = format!(
            "vkskin: {} was not written (No space left on device); the previous file is unchanged",
            out.display()
        );
        assert_eq!(stderr_lines(&o), [expected], "{what}");
        assert_eq!(std::fs::read(&out).unwrap(), PREVIOUS, "{what}: the previous image changed");
        assert_eq!(temp_files(dir.path()), Vec::<String>::new(), "{what}");
    }
}

#[test]
fn render_killed_half_way_leaves_the_previous_image_or_a_whole_one() {
    let Some((dir, model)) = setup("render-killed") else { return };
    let out = dir.path().join("anim.png");
    const FRAMES: u32 = 24;
    // At the worst moment: part of the animation in the temporary file.
    std::fs::write(&out, PREVIOUS).unwrap();
    kill_once_stalled(render(&model, &out, FRAMES).env("VKSKIN_TEST_STALL_WRITES_AFTER", "2000"));
    assert_eq!(std::fs::read(&out).unwrap(), PREVIOUS, "a killed render changed the image");
    // At whatever moment the temporary file has some data: either the
    // previous image or a whole new one, never a truncated one.
    std::fs::write(&out, PREVIOUS).unwrap();
    let started = || {
        let temp = temp_files(dir.path());
        temp.iter().any(|t| std::fs::metadata(dir.path().join(t)).is_ok_and(|m| m.len() > 0))
    };
    kill_when(&mut render(&model, &out, FRAMES), started);
    let left = std::fs::read(&out).unwrap();
    if left != PREVIOUS {
        assert_eq!(decoded_frames(&out), FRAMES, "a complete new image");
    }
    let o = run(&mut render(&model, &out, FRAMES));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(decoded_frames(&out), FRAMES);
    assert_eq!(temp_files(dir.path()), Vec::<String>::new(), "the next run left temporary files");
}

#[test]
fn render_on_a_lost_device_writes_nothing_and_says_so() {
    let Some((dir, model)) = setup("render-lost") else { return };
    let out = dir.path().join("anim.png");
    // Lost at the first submission (an upload), or a few frames in.
    for lose_after in ["0", "12"] {
        std::fs::write(&out, PREVIOUS).unwrap();
        let o = run(render(&model, &out, 24).env("VKSKIN_TEST_LOSE_DEVICE_AFTER", lose_after));
        assert!(!o.status.success(), "lost after {lose_after}: render exited 0");
        let lines = stderr_lines(&o);
        assert_eq!(lines.len(), 1, "lost after {lose_after}: {lines:?}");
        assert!(
            lines[0].starts_with(&format!(
                "vkskin: the GPU was lost (VK_ERROR_DEVICE_LOST) while rendering {}",
                out.display()
            )),
            "{}",
            lines[0]
        );
        assert_eq!(std::fs::read(&out).unwrap(), PREVIOUS, "lost after {lose_after}: the image changed");
        assert_eq!(temp_files(dir.path()), Vec::<String>::new());
    }
}

#[test]
fn bench_on_a_lost_device_writes_the_completed_rows_marked_incomplete() {
    let Some((dir, _)) = setup("bench-lost") else { return };
    let out = dir.path().join("out");
    // Two scenes (1 and 2 characters). Found by bisection: the fewest
    // submissions after which the first configuration completes; losing
    // the device at the next one stops the run in the second.
    let lose_after = |n: u64| {
        let _ = std::fs::remove_dir_all(&out);
        let mut command = bench(&out, "1,2");
        command.env("VKSKIN_TEST_LOSE_DEVICE_AFTER", n.to_string());
        let o = run(&mut command);
        let rows = if o.status.success() { 2 } else { results(&out)["entries"].as_array().unwrap().len() };
        (rows, o)
    };
    let (rows, o) = lose_after(0);
    assert_eq!(rows, 0, "lost at once: {}", stderr(&o));
    let (mut low, mut high) = (0, 1);
    while lose_after(high).0 == 0 {
        (low, high) = (high, high * 2);
        assert!(high < 1 << 16, "the first configuration never completed");
    }
    while high - low > 1 {
        let mid = (low + high) / 2;
        if lose_after(mid).0 == 0 { low = mid } else { high = mid }
    }
    let (rows, o) = lose_after(high);
    assert_eq!(rows, 1, "{}", stderr(&o));
    assert!(!o.status.success());
    let lines = stderr_lines(&o);
    let json = out.join("results.json");
    assert_eq!(
        lines.last().unwrap(),
        &format!(
            "vkskin: the GPU device was lost during built-in, 2 characters, compute, inplace, 1 pass; {} holds the 1 completed row",
            json.display()
        ),
        "{lines:?}"
    );
    let value = results(&out);
    assert_eq!(value["header"]["incomplete"], true);
    assert_eq!(value["entries"][0]["characters"], 1);
    // The report reads the marked file back, and its plots were written.
    let read = vkskin::profiler::report::read_json(&json).unwrap();
    assert!(read.header.incomplete && read.entries.len() == 1);
    let written: Vec<&str> = PLOTS.iter().copied().filter(|p| out.join(p).exists()).collect();
    assert!(!written.is_empty(), "no plot of the completed row: {lines:?}");
    for plot in written {
        assert!(lines.contains(&format!("vkskin: wrote {}", out.join(plot).display())), "{plot}: {lines:?}");
    }
    assert_eq!(temp_files(&out), Vec::<String>::new());
    // A complete run has no marker at all (readers of old files see nothing new).
    let o = run(&mut bench(&out, "1"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(results(&out)["header"].get("incomplete").is_none());
}
