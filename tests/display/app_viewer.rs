//! The viewer binary end to end: a scripted window run under Xvfb on
//! lavapipe with validation (and synchronization validation) on, resized
//! half-way, whose last frame is checked (and its `--trace` file, see
//! `common::trace`); the headless fallback without a
//! display; and soak runs (resizes, reloads, clip, skinning-method and
//! controller switches) whose memory must stay flat: 500 frames in the
//! normal tests, 10,000 (Fox) and 100,000 (a crowd of 100 built-in
//! characters) in ignored tests (see the guide's testing page). Without Xvfb (and no DISPLAY) or
//! without a Vulkan device the tests say "skipping" and pass, unless
//! VKSKIN_NO_SKIP is set.

use crate::common::{context, shared_assets, skip};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::time::{Duration, Instant};
use vkskin::app::scripted::MemorySample;

const BIN: &str = env!("CARGO_BIN_EXE_vkskin");

/// The model argument: the built-in character (none).
fn model_args() -> Vec<String> {
    Vec::new()
}

/// An Xvfb server started by the test, killed on drop.
struct Xvfb {
    child: Child,
    display: String,
    /// Kept open: a closed pipe would kill the server if it ever wrote again.
    _stdout: BufReader<ChildStdout>,
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        // SIGTERM first, so the server removes its socket and lock file.
        let _ = Command::new("kill").arg(self.child.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// Starts Xvfb on a display number it picks itself. `-displayfd` makes the
/// server claim a free number atomically (its lock file) and print it once
/// it accepts connections: tests running in parallel never share a server,
/// which choosing the number here from the lock files could not promise.
fn start_xvfb() -> Option<Xvfb> {
    let mut child = Command::new("Xvfb")
        .args(["-displayfd", "1", "-screen", "0", "1280x800x24", "-nolisten", "tcp"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    // The number, then nothing more: EOF (no number) if the server failed.
    let mut stdout = BufReader::new(child.stdout.take()?);
    let mut line = String::new();
    let read = stdout.read_line(&mut line);
    let server = Xvfb { child, display: format!(":{}", line.trim()), _stdout: stdout };
    match (read, line.trim().parse::<u32>()) {
        (Ok(_), Ok(_)) => Some(server),
        _ => None,
    }
}

/// A display to open windows on: $DISPLAY, or an Xvfb started here.
fn display() -> Option<(String, Option<Xvfb>)> {
    if let Some(d) = std::env::var("DISPLAY").ok().filter(|d| !d.is_empty()) {
        return Some((d, None));
    }
    if !on_path("Xvfb") {
        return None;
    }
    let server = start_xvfb()?;
    Some((server.display.clone(), Some(server)))
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vkskin-viewer-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn run(command: Command) -> Output {
    run_for(command, Duration::from_secs(300))
}

/// Runs `command`, killed after `limit`: a hung window loop must fail the
/// test, not hang it.
fn run_for(mut command: Command, limit: Duration) -> Output {
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("vkskin starts");
    let deadline = Instant::now() + limit;
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("output")
}

fn assert_clean(output: &Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "vkskin failed ({}):\nstdout:\n{}\nstderr:\n{stderr}",
        output.status,
        String::from_utf8_lossy(&output.stdout)
    );
    for line in stderr.lines() {
        assert!(
            !line.starts_with("vulkan ")
                && !line.contains("validation message")
                && !line.contains("internal error"),
            "unexpected message on stderr: {line}\n(all of stderr:\n{stderr})"
        );
    }
}

/// Decodes an RGBA8 or RGB8 PNG (first frame) into RGBA.
fn read_png(path: &Path) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).expect("png exists")));
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("png frame");
    let rgba = match info.color_type {
        png::ColorType::Rgba => buf[..info.buffer_size()].to_vec(),
        png::ColorType::Rgb => {
            buf[..info.buffer_size()].chunks(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect()
        }
        other => panic!("unexpected PNG colour type {other:?}"),
    };
    (info.width, info.height, rgba)
}

#[test]
fn window_run_with_resize_and_screenshot() {
    // Checks that Vulkan is there at all (skipping, or failing under
    // VKSKIN_NO_SKIP, if not); the context is dropped at once.
    if context().is_none() {
        return;
    }
    let Some((display, _server)) = display() else {
        return skip("no display: DISPLAY is unset and Xvfb is not on PATH");
    };
    let dir = scratch_dir("window");
    let shot = dir.join("OUT.png");
    let trace = dir.join("trace.json");
    let mut command = Command::new(BIN);
    command
        .current_dir(&dir)
        .env("DISPLAY", &display)
        .env_remove("WAYLAND_DISPLAY")
        .arg("view")
        .args(model_args())
        .args(["--validation", "--frames", "120", "--resize-at", "60:500x400", "--screenshot"])
        .arg(&shot)
        .arg("--trace")
        .arg(&trace);
    let output = run(command);
    assert_clean(&output);
    // `--trace`: the window's frames, GPU spans inside their windows.
    crate::common::trace::check(&trace, &["pose", "palette write", "record", "submit", "wait"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("rendering headless"), "fell back to headless under {display}:\n{stderr}");

    let (w, h, rgba) = read_png(&shot);
    // The resize at frame 60 took effect: the swapchain was recreated.
    assert_eq!((w, h), (500, 400), "screenshot size");
    let px = |x: u32, y: u32| {
        let i = ((y * w + x) * 4) as usize;
        [rgba[i], rgba[i + 1], rgba[i + 2]]
    };
    // The bottom-left corner is the ground under the model (the controls
    // sit at the right): the character differs from it.
    let background = px(2, h - 3);
    let differs = |p: [u8; 3]| p.iter().zip(background).any(|(a, b)| a.abs_diff(b) > 24);
    // The character is framed in the part the controls leave free (left);
    // the controls never reach the left third of the window.
    let region = (w / 3) * h;
    let character =
        (0..h).flat_map(|y| (0..w / 3).map(move |x| (x, y))).filter(|&(x, y)| differs(px(x, y))).count();
    assert!(
        character as u32 * 100 >= region * 3,
        "too few character pixels in the left third: {character} of {region} (background {background:?})"
    );
    // The controls are drawn: a dark egui window in the right half.
    let dark = (0..h)
        .flat_map(|y| (w / 2..w).map(move |x| (x, y)))
        .filter(|&(x, y)| px(x, y).iter().all(|&c| c < 60))
        .count();
    assert!(dark as u32 * 100 >= (w / 2) * h * 10, "no controls drawn: {dark} dark pixels");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `vkskin view` in `dir`, with no display to open a window on.
fn view_without_display(dir: &Path) -> Command {
    let mut command = Command::new(BIN);
    command
        .current_dir(dir)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WAYLAND_SOCKET")
        .arg("view");
    command
}

/// `vkskin view ARGS --validation` in `dir` without a display: its stderr
/// (one line of which says why there is no window) and the path of the
/// animated PNG it printed.
fn fall_back(dir: &Path, args: &[&str]) -> (String, PathBuf) {
    let mut command = view_without_display(dir);
    command.args(model_args()).arg("--validation").args(args);
    let output = run(command);
    assert_clean(&output);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(
        stderr.lines().filter(|l| l.contains("no display")).count(),
        1,
        "one line says why:\n{stderr}"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let printed = stdout.lines().last().expect("the output path is printed").trim().to_string();
    let path = dir.join(&printed);
    assert!(path.is_file(), "{} does not exist (stdout: {stdout})", path.display());
    (stderr, path)
}

#[test]
fn without_a_display_falls_back_to_headless_apng() {
    // Checks that Vulkan is there at all (skipping, or failing under
    // VKSKIN_NO_SKIP, if not); the context is dropped at once.
    if context().is_none() {
        return;
    }
    let dir = scratch_dir("fallback");
    let (_, path) = fall_back(&dir, &["--frames", "6", "--size", "160x120"]);
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    assert!(name.starts_with("vkskin-") && name.ends_with(".png"), "{name}");
    let bytes = std::fs::read(&path).expect("read apng");
    let actl = bytes.windows(4).position(|w| w == b"acTL").expect("an animated PNG (acTL chunk)");
    let frames = u32::from_be_bytes(bytes[actl + 4..actl + 8].try_into().expect("4 bytes"));
    assert_eq!(frames, 6);
    let (w, h, rgba) = read_png(&path);
    assert_eq!((w, h), (160, 120));
    let first = &rgba[..4];
    assert!(rgba.chunks(4).any(|p| p != first), "the frame is one flat colour");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The fallback draws what the window would: `--characters 9` the crowd
/// that `render --characters 9` draws (the same pixels wherever `render`
/// drew a character, but for edges seen against the ground rather than the
/// sky), on a ground; `--passes 5` their shadows on it; the vertex budget
/// coarsens it (and says so); `--level` the level with its actor. What
/// acts on the window alone (`--resize-at`, the scripted switches) is
/// named in one line.
#[test]
fn the_fallback_draws_the_crowd_passes_budget_and_level_asked_for() {
    if context().is_none() {
        return;
    }
    let dir = scratch_dir("fallback-crowd");
    let shot = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let crowd = ["--characters", "9", "--frames", "1", "--size", "400x300"];
    let (_, path) = fall_back(&dir, &[&crowd[..], &["--screenshot", &shot("one.png")]].concat());
    assert!(path.ends_with("vkskin-default_character-Walk.png"), "{}", path.display());
    let output = Command::new(BIN)
        .args(["render", "--characters", "9", "--clip", "Walk", "--size", "400x300", "--validation", "--out"])
        .arg(dir.join("render.png"))
        .output()
        .expect("vkskin starts");
    assert_clean(&output);
    let (_, _, fallback) = read_png(&dir.join("one.png"));
    let (w, h, render) = read_png(&dir.join("render.png"));
    let sky = &render[..4];
    let drawn: Vec<usize> =
        (0..(w * h) as usize).map(|p| p * 4).filter(|&i| &render[i..i + 4] != sky).collect();
    let alike =
        drawn.iter().filter(|&&i| (0..3).all(|k| fallback[i + k].abs_diff(render[i + k]) <= 2)).count();
    // 92 % on lavapipe; one character framed alone matches almost none.
    assert!(
        drawn.len() > 5000 && alike * 100 >= drawn.len() * 85,
        "{alike} of {} character pixels as `render` drew them",
        drawn.len()
    );
    let ground = ((h - 3) * w + 2) as usize * 4;
    assert!(
        (0..3).any(|k| fallback[ground + k].abs_diff(sky[k]) > 8),
        "no ground drawn: {:?} vs the sky's {sky:?}",
        &fallback[ground..ground + 4]
    );
    let (_, _) =
        fall_back(&dir, &[&crowd[..], &["--passes", "5", "--screenshot", &shot("five.png")]].concat());
    let (_, _, five) = read_png(&dir.join("five.png"));
    let shadowed = (0..(w * h) as usize)
        .filter(|p| (0..3).all(|k| fallback[p * 4 + k] > five[p * 4 + k].saturating_add(20)))
        .count();
    assert!(shadowed as u32 * 100 > w * h, "--passes 5 drew {shadowed} shadowed pixels");
    for limit in ["--max-skinned-vertices", "--max-triangles"] {
        let (stderr, _) = fall_back(&dir, &[&crowd[..], &[limit, "5000"]].concat());
        assert!(stderr.contains("than 5000 ") && stderr.contains(limit), "{limit}'s warning:\n{stderr}");
    }
    // The GPU frame budget too (lavapipe takes far longer than 1 ms).
    let steered = ["--characters", "9", "--frames", "4", "--size", "400x300", "--gpu-frame-budget", "1"];
    let (stderr, _) = fall_back(&dir, &steered);
    assert!(stderr.contains("the GPU frame budget of 1.0 ms allowed (--gpu-frame-budget)"), "{stderr}");
    // What acts on the window alone is named, once.
    let level = ["--level", "demo", "--frames", "2", "--size", "160x120", "--resize-at", "1:200x100"];
    let (stderr, path) = fall_back(&dir, &level);
    assert!(path.ends_with("vkskin-default_character-demo.png"), "{}", path.display());
    let unused = "--resize-at act on the window: not applied to the animated PNG";
    assert_eq!(stderr.matches(unused).count(), 1, "{stderr}");
    // Hours of posing are refused, as `render` refuses them.
    let output = view_without_display(&dir)
        .args(["--characters", "100000", "--frames", "1000"])
        .output()
        .expect("vkskin starts");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("poses 100000000 character-frames without a window"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The viewer with a level: the character stands in the demo level (drawn
/// around it), validation silent.
#[test]
fn window_run_in_a_level() {
    if context().is_none() {
        return;
    }
    let Some((display, _server)) = display() else {
        return skip("no display: DISPLAY is unset and Xvfb is not on PATH");
    };
    let dir = scratch_dir("level");
    let shot = dir.join("LEVEL.png");
    let mut command = Command::new(BIN);
    command
        .current_dir(&dir)
        .env("DISPLAY", &display)
        .env_remove("WAYLAND_DISPLAY")
        .args([
            "view",
            "--level",
            "demo",
            "--validation",
            "--frames",
            "30",
            "--size",
            "640x400",
            "--screenshot",
        ])
        .arg(&shot);
    let output = run(command);
    assert_clean(&output);
    let (w, h, rgba) = read_png(&shot);
    assert_eq!((w, h), (640, 400));
    // The floor fills the bottom of the view (the level is drawn): its grey
    // differs from the background's blue-grey at the top-left corner.
    let px = |x: u32, y: u32| {
        let i = ((y * w + x) * 4) as usize;
        [rgba[i], rgba[i + 1], rgba[i + 2]]
    };
    let (sky, floor) = (px(2, 2), px(2, h - 3));
    assert!(sky.iter().zip(floor).any(|(a, b)| a.abs_diff(b) > 8), "no floor drawn: {sky:?} vs {floor:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Outside a level the viewer draws a ground under the model, and with
/// `--passes 5` the character's shadow falls on it: the same view with
/// shadows has clearly more dark ground pixels below the character than
/// without.
#[test]
fn window_run_draws_a_ground_that_receives_shadows() {
    if context().is_none() {
        return;
    }
    let Some((display, _server)) = display() else {
        return skip("no display: DISPLAY is unset and Xvfb is not on PATH");
    };
    let dir = scratch_dir("ground");
    let shot = |passes: &str| {
        let path = dir.join(format!("GROUND-{passes}.png"));
        let mut command = Command::new(BIN);
        command
            .current_dir(&dir)
            .env("DISPLAY", &display)
            .env_remove("WAYLAND_DISPLAY")
            .args(["view", "--validation", "--frames", "20", "--size", "640x400", "--passes", passes])
            .arg("--screenshot")
            .arg(&path);
        assert_clean(&run(command));
        read_png(&path)
    };
    let (lit, shadowed) = (shot("1"), shot("5"));
    let (w, h) = (lit.0, lit.1);
    let px = |rgba: &[u8], x: u32, y: u32| {
        let i = ((y * w + x) * 4) as usize;
        [rgba[i], rgba[i + 1], rgba[i + 2]]
    };
    let luma = |p: [u8; 3]| 0.2126 * f32::from(p[0]) + 0.7152 * f32::from(p[1]) + 0.0722 * f32::from(p[2]);
    // The ground fills the bottom-left corner: grey, unlike the sky above.
    let (sky, ground) = (px(&lit.2, 2, 2), px(&lit.2, 2, h - 3));
    assert!(sky.iter().zip(ground).any(|(a, b)| a.abs_diff(b) > 8), "no ground drawn: {sky:?} vs {ground:?}");
    // Dark ground: pixels of the lower half, left of the controls, well below
    // the ground's brightness and about as grey (a shadow, not the trousers).
    let dark = |rgba: &[u8]| {
        let threshold = luma(px(rgba, 2, h - 3)) * 0.8;
        (h / 2..h)
            .flat_map(|y| (0..w / 2).map(move |x| (x, y)))
            .map(|(x, y)| px(rgba, x, y))
            .filter(|p| {
                let (hi, lo) = (p.iter().max().unwrap(), p.iter().min().unwrap());
                luma(*p) < threshold && hi - lo < 24
            })
            .count()
    };
    let (without, with) = (dark(&lit.2), dark(&shadowed.2));
    assert!(
        with > without + 200,
        "no shadow on the ground: {with} dark grey pixels with shadows, {without} without"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--characters 9`: the driven character and eight more behind it, all
/// drawn (instanced) in the window with validation silent. The crowd covers
/// clearly more of the view than the driven character alone.
#[test]
fn window_run_with_a_crowd() {
    if context().is_none() {
        return;
    }
    let Some((display, _server)) = display() else {
        return skip("no display: DISPLAY is unset and Xvfb is not on PATH");
    };
    let dir = scratch_dir("crowd");
    let coverage = |characters: &str| {
        let shot = dir.join(format!("CROWD{characters}.png"));
        let mut command = Command::new(BIN);
        command
            .current_dir(&dir)
            .env("DISPLAY", &display)
            .env_remove("WAYLAND_DISPLAY")
            .args(["--characters", characters, "--validation", "--frames", "12", "--size", "640x400"])
            .arg("--screenshot")
            .arg(&shot);
        let output = run(command);
        assert_clean(&output);
        let (w, h, rgba) = read_png(&shot);
        // Pixels left of the controls that differ from both the top-left
        // background and the ground in the bottom-left corner (in front
        // of the driven character; the crowd stands behind it).
        let at = |x: u32, y: u32| ((y * w + x) * 4) as usize;
        let (sky, ground) = (at(0, 0), at(2, h - 3));
        let differs = |i: usize, from: usize| (0..3).any(|k| rgba[i + k].abs_diff(rgba[from + k]) > 12);
        (0..h)
            .flat_map(|y| (0..w / 2).map(move |x| at(x, y)))
            .filter(|&i| differs(i, sky) && differs(i, ground))
            .count()
    };
    let (one, nine) = (coverage("1"), coverage("9"));
    assert!(one > 100, "the driven character covers {one} pixels");
    assert!(nine > one * 2, "nine characters cover {nine} pixels, one covers {one}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a soak run shows.
#[derive(Clone, Copy)]
enum SoakModel {
    /// Fox from the shared models (no controller: clips only).
    Fox,
    /// The built-in character's file in `assets/`, with its controller.
    BuiltIn,
}

/// A soak run's model, crowd and schedule (in frames).
struct Soak {
    model: SoakModel,
    /// Characters in the scene (one driven, the rest on a grid behind it).
    characters: u32,
    frames: u64,
    /// Resize every this many frames, alternating between two sizes.
    resize: u64,
    reload: u64,
    clip: u64,
    method: u64,
    /// Switch between the controller and the manual clip mode (built-in
    /// character only: Fox has no controller).
    controller: Option<u64>,
    memory: u64,
    /// How long the run may take before it counts as hung.
    limit: Duration,
    /// Samples up to this frame are the warm-up (every action has run once
    /// and both window sizes and skinning methods were seen).
    warm_up: u64,
}

/// Host heap growth a soak run may show after its warm-up (allocator
/// high-water marks, driver caches).
const HOST_SLACK: u64 = 8 << 20;

/// Alignment padding gpu-allocator counts in its allocated bytes, which
/// varies with placement (measured: by up to about 120 bytes between
/// samples of the same scene; a leaked renderer would be megabytes).
const ALIGNMENT_SLACK: u64 = 16 << 10;

/// Runs the viewer on `soak`'s model and crowd under its schedule with validation on and
/// checks that it ends cleanly and that host RSS and the GPU allocator's
/// bytes stay flat after the warm-up. Prints the samples.
fn soak_run(soak: &Soak) {
    if context().is_none() {
        return;
    }
    let model = match soak.model {
        SoakModel::Fox => {
            let Some(assets) = shared_assets("the viewer soak run") else { return };
            assets.join("Fox/Fox.glb")
        }
        SoakModel::BuiltIn => Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/default_character.glb"),
    };
    let Some((display, _server)) = display() else {
        return skip("no display: DISPLAY is unset and Xvfb is not on PATH");
    };
    // Two soaks of the same length run at once: the crowd has its own folder.
    let dir = scratch_dir(&format!("soak{}-{}", soak.frames, soak.characters));
    let sizes = ["400x300", "320x240"];
    let resizes: Vec<String> = (1..)
        .map(|k| k * soak.resize)
        .take_while(|&f| f < soak.frames)
        .enumerate()
        .map(|(i, f)| format!("{f}:{}", sizes[i % 2]))
        .collect();
    let mut command = Command::new(BIN);
    command.current_dir(&dir).env("DISPLAY", &display).env_remove("WAYLAND_DISPLAY");
    command.arg("view").arg(model).args(["--validation", "--size", sizes[1]]);
    command.args(["--frames", &soak.frames.to_string(), "--characters", &soak.characters.to_string()]);
    command.args(["--resize-at", &resizes.join(",")]);
    command.args(["--reload-every", &soak.reload.to_string(), "--switch-clip-every", &soak.clip.to_string()]);
    command.args(["--switch-method-every", &soak.method.to_string()]);
    if let Some(every) = soak.controller {
        command.args(["--switch-controller-every", &every.to_string()]);
    }
    command.args(["--report-memory-every", &soak.memory.to_string()]);
    let started = Instant::now();
    let output = run_for(command, soak.limit);
    eprintln!("{} frames in {:.0} s", soak.frames, started.elapsed().as_secs_f64());
    assert_clean(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let samples: Vec<MemorySample> = stderr.lines().filter_map(MemorySample::parse).collect();
    for s in &samples {
        eprintln!(
            "frame {:6}: rss {:.1} MB, heap {:.1} MB, gpu allocated {:.2} MB, reserved {:.0} MB",
            s.frame,
            s.rss_bytes as f64 / 1e6,
            s.heap_bytes as f64 / 1e6,
            s.gpu_allocated_bytes as f64 / 1e6,
            s.gpu_reserved_bytes as f64 / 1e6
        );
    }
    let expected = (soak.frames - 1) / soak.memory;
    assert_eq!(samples.len() as u64, expected, "memory samples:\n{stderr}");
    let (warm, after): (Vec<_>, Vec<_>) = samples.iter().partition(|s| s.frame <= soak.warm_up);
    assert!(!warm.is_empty() && !after.is_empty(), "the run is longer than its warm-up");
    let peak = |of: &[&MemorySample], f: fn(&MemorySample) -> u64| of.iter().map(|s| f(s)).max().unwrap_or(0);
    // On lavapipe "device memory" is host memory: pages of the allocator's
    // blocks join the RSS as allocations land on them for the first time
    // (renderers rebuilt at other offsets), up to the reserved bytes. So
    // host RSS may rise above its warm-up peak by the reserved bytes not
    // yet allocated, plus a little for the host heap, and no more.
    let untouched = peak(&warm, |s| s.gpu_reserved_bytes.saturating_sub(s.gpu_allocated_bytes));
    let rss = (peak(&warm, |s| s.rss_bytes), peak(&after, |s| s.rss_bytes));
    assert!(
        rss.1 <= rss.0 + untouched + HOST_SLACK,
        "host RSS grew after the warm-up: peak {} MB, then {} MB (allowed: {} MB of device pages + {} MB)",
        rss.0 / 1_000_000,
        rss.1 / 1_000_000,
        untouched / 1_000_000,
        HOST_SLACK / 1_000_000
    );
    // Bytes in use on the heap (the driver's device memory included on
    // lavapipe) may not grow after the warm-up: that would be a leak,
    // whatever the allocator does with pages.
    let heap = (peak(&warm, |s| s.heap_bytes), peak(&after, |s| s.heap_bytes));
    assert!(
        heap.1 <= heap.0 + HOST_SLACK,
        "heap in use grew after the warm-up: peak {} MB, then {} MB",
        heap.0 / 1_000_000,
        heap.1 / 1_000_000
    );
    // The GPU allocator's bytes depend only on the scene, the window size
    // and the method, all seen during the warm-up, except for the alignment
    // padding gpu-allocator counts with each allocation (where an allocation
    // lands depends on what was freed before it): reserved blocks may not
    // grow at all, allocated bytes by that padding only. A leaked buffer is
    // also a validation error when the device is destroyed.
    for (name, f, slack) in [
        ("allocated", (|s| s.gpu_allocated_bytes) as fn(&MemorySample) -> u64, ALIGNMENT_SLACK),
        ("reserved", |s| s.gpu_reserved_bytes, 0),
    ] {
        let (before, later) = (peak(&warm, f), peak(&after, f));
        assert!(later <= before + slack, "GPU {name} bytes grew after the warm-up: {before} then {later}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn soak_500_frames() {
    soak_run(&Soak {
        model: SoakModel::Fox,
        characters: 1,
        frames: 500,
        resize: 100,
        reload: 200,
        clip: 20,
        // Linear, DQS split in the shader, DQS split on the CPU: all within the warm-up.
        method: 100,
        controller: None,
        memory: 50,
        warm_up: 250,
        limit: Duration::from_secs(3600),
    });
}

/// The long soak (about 10 minutes on lavapipe): `cargo test --release
/// --test display -- --ignored app_viewer::soak_10000_frames --nocapture`.
#[test]
#[ignore = "10,000 frames: run on demand (see the guide's testing page)"]
fn soak_10000_frames() {
    soak_run(&Soak {
        model: SoakModel::Fox,
        characters: 1,
        frames: 10_000,
        resize: 500,
        reload: 2000,
        clip: 100,
        method: 1000,
        controller: None,
        memory: 500,
        warm_up: 2500,
        limit: Duration::from_secs(3600),
    });
}

/// The same switches as the Fox soak, with the controller switched too,
/// on a crowd of 100 built-in characters (about an hour on lavapipe):
/// `cargo test --release --test display -- --ignored
/// app_viewer::soak_100000_frames_crowd --nocapture`.
#[test]
#[ignore = "100,000 frames: run on demand (see the guide's testing page)"]
fn soak_100000_frames_crowd() {
    soak_run(&Soak {
        model: SoakModel::BuiltIn,
        characters: 100,
        frames: 100_000,
        resize: 500,
        reload: 2000,
        clip: 100,
        method: 1000,
        controller: Some(700),
        memory: 500,
        warm_up: 2500,
        limit: Duration::from_secs(6 * 3600),
    });
}

/// A short crowd soak with controller switches, as a check of the schedule.
#[test]
fn soak_500_frames_crowd() {
    soak_run(&Soak {
        model: SoakModel::BuiltIn,
        characters: 9,
        frames: 500,
        resize: 100,
        reload: 200,
        clip: 20,
        method: 100,
        controller: Some(70),
        memory: 50,
        warm_up: 250,
        limit: Duration::from_secs(3600),
    });
}

/// `view --planar`: the window shows the planar rig's four copies (the
/// driven character, which plays the clips as quaternions, and the three
/// posed beside it by blending angles and Euler angles), one in each
/// quarter of the part the controls leave free, after printing the
/// measured departures.
#[test]
fn window_run_shows_the_planar_rig() {
    if context().is_none() {
        return;
    }
    let Some((display, _server)) = display() else {
        return skip("no display: DISPLAY is unset and Xvfb is not on PATH");
    };
    let dir = scratch_dir("planar");
    let shot = dir.join("PLANAR.png");
    let mut command = Command::new(BIN);
    command
        .current_dir(&dir)
        .env("DISPLAY", &display)
        .env_remove("WAYLAND_DISPLAY")
        .args(["view", "--planar", "--validation", "--frames", "12", "--size", "960x600", "--screenshot"])
        .arg(&shot);
    let output = run(command);
    assert_clean(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("rendering headless"), "fell back to headless under {display}:\n{stderr}");
    assert!(stderr.contains("19.47 degrees (Shoulder"), "no measured departures:\n{stderr}");
    let (w, h, rgba) = read_png(&shot);
    // The arm is blue (0.35, 0.6, 0.85); sky and ground are grey.
    let blue = |x: u32, y: u32| {
        let i = ((y * w + x) * 4) as usize;
        rgba[i + 2] > 100 && rgba[i + 2] as i32 > rgba[i] as i32 + 50
    };
    // The controls sit at the right: the copies stand in the left half,
    // lerps left of w / 4, the planar row above h / 2.
    for (cx, cy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        let (xs, ys) = (cx * w / 4..(cx + 1) * w / 4, cy * h / 2..(cy + 1) * h / 2);
        let count = ys.flat_map(|y| xs.clone().map(move |x| (x, y))).filter(|&(x, y)| blue(x, y)).count();
        assert!(count > 150, "quarter ({cx}, {cy}) shows {count} arm pixels");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
