//! Headless rendering on a real Vulkan device (lavapipe without a GPU), with
//! the validation layer and synchronization validation on: any validation
//! message fails the test. Without a device or layer the tests say
//! "skipping" and pass, unless VKSKIN_NO_SKIP is set.

use crate::common::pixels::{differing, mask, render_clip};
use crate::common::{assert_no_validation_messages, context, shared_model};
use ash::vk;
use std::sync::Arc;
use vkskin::asset::Model;
use vkskin::gpu::GpuContext;
use vkskin::render::headless::{self, HeadlessRequest};
use vkskin::render::image_out::ApngWriter;
use vkskin::render::renderer::RenderSettings;
use vkskin::render::{DrawDetail, SkinningPlacement};

const W: u32 = 160;
const H: u32 = 120;

/// What to render: a clip from `start` at `fps`, drawn as `request` says.
#[derive(Debug, Clone)]
struct Shot {
    clip: usize,
    start: f32,
    fps: f32,
    request: HeadlessRequest,
}

impl Shot {
    /// This shot with its render settings changed by `change`.
    fn with(&self, change: impl FnOnce(&mut RenderSettings)) -> Shot {
        let mut shot = self.clone();
        change(&mut shot.request.settings);
        shot
    }
}

fn request(clip: usize, start: f32, frames: u32, fps: f32) -> Shot {
    let mut settings = RenderSettings::new(vk::Extent2D { width: W, height: H });
    // The full meshes: at this size a character may draw a coarser level
    // (within a pixel, render_detail_levels checks that), and the
    // reference images hold the meshes pixel for pixel.
    settings.frame.detail = DrawDetail::Full;
    let request = HeadlessRequest { frames, first_frame: 0, settings };
    Shot { clip, start, fps, request }
}

/// Renders `shot`, returning every frame's RGBA8 pixels.
fn render(ctx: &GpuContext, model: &Arc<Model>, shot: &Shot) -> Vec<Vec<u8>> {
    render_clip(ctx, model, shot.clip, f64::from(shot.start), f64::from(shot.fps), &shot.request)
}

#[test]
fn fox_walk_is_drawn_lit_and_moves() {
    let (Some(model), Some(ctx)) = (shared_model("Fox/Fox.glb"), context()) else { return };
    let walk = model.find_clip("Walk").expect("Fox has a Walk clip");
    // Two frames 0.4 s apart in one request: the same camera frames both.
    let frames = render(&ctx, &model, &request(walk, 0.1, 2, 2.5));
    let masks: Vec<Vec<bool>> = frames.iter().map(|f| mask(f)).collect();
    for (f, m) in frames.iter().zip(&masks) {
        let covered = m.iter().filter(|&&x| x).count();
        assert!(covered > (W * H / 50) as usize, "only {covered} character pixels");
        // Lit and textured: the character's pixels are not one flat colour.
        let mut colours: Vec<[u8; 3]> = f
            .chunks_exact(4)
            .zip(m)
            .filter(|&(_, &inside)| inside)
            .map(|(p, _)| [p[0] / 8, p[1] / 8, p[2] / 8])
            .collect();
        colours.sort_unstable();
        colours.dedup();
        assert!(colours.len() > 20, "only {} distinct colours", colours.len());
        // Not black: lighting reaches the character.
        let mean: f64 = f.chunks_exact(4).zip(m).filter(|&(_, &i)| i).map(|(p, _)| p[0] as f64).sum::<f64>()
            / covered as f64;
        assert!(mean > 60.0, "character too dark: mean red {mean}");
        // Framed: nothing touches the image border.
        for x in 0..W as usize {
            assert!(!m[x] && !m[(H as usize - 1) * W as usize + x], "character touches the top/bottom edge");
        }
    }
    let changed = differing(&masks[0], &masks[1]);
    assert!(changed > 40, "silhouette barely changes between clip times: {changed} pixels");
}

#[test]
fn animated_png_has_the_requested_frames() {
    let (Some(model), Some(ctx)) = (shared_model("CesiumMan/CesiumMan.glb"), context()) else { return };
    let frames = 4;
    let path = std::env::temp_dir().join(format!("vkskin-test-{}.apng", std::process::id()));
    let mut writer = ApngWriter::create(&path, W, H, frames, 12.0).expect("create");
    let shot = request(0, 0.1, frames, 12.0);
    for rgba in render(&ctx, &model, &shot) {
        writer.write_frame(&rgba).expect("frame");
    }
    writer.finish().expect("finish");

    let file = std::fs::File::open(&path).expect("open");
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().expect("png");
    assert_eq!(reader.info().animation_control().map(|a| a.num_frames), Some(frames));
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let mut decoded = Vec::new();
    for _ in 0..frames {
        reader.next_frame(&mut buf).expect("frame");
        decoded.push(mask(&buf));
    }
    let _ = std::fs::remove_file(&path);
    assert!(decoded.iter().all(|m| m.iter().any(|&x| x)), "every frame shows the character");
    assert!(differing(&decoded[0], &decoded[3]) > 20, "the animation moves");
}

#[test]
fn vertex_skinning_matches_compute_skinning() {
    for (file, clip) in [("CesiumMan/CesiumMan.glb", "0"), ("RobotExpressive/RobotExpressive.glb", "Dance")] {
        let (Some(model), Some(ctx)) = (shared_model(file), context()) else { return };
        let clip = model.find_clip(clip).expect("clip");
        let compute = request(clip, 0.7, 1, 30.0);
        let vertex = compute.with(|s| s.frame.placement = SkinningPlacement::Vertex);
        let a = render(&ctx, &model, &compute).remove(0);
        let b = render(&ctx, &model, &vertex).remove(0);
        let (ma, mb) = (mask(&a), mask(&b));
        assert!(ma.iter().filter(|&&x| x).count() > (W * H / 50) as usize, "{file}: character drawn");
        let changed = differing(&ma, &mb);
        assert!(changed <= (W * H / 500) as usize, "{file}: masks differ in {changed} pixels");
    }
}

#[test]
fn wireframe_renders_when_supported() {
    let (Some(model), Some(ctx)) = (shared_model("Fox/Fox.glb"), context()) else { return };
    if !ctx.features.fill_mode_non_solid {
        return crate::common::skip("the device lacks fillModeNonSolid");
    }
    let walk = model.find_clip("Walk").expect("Walk");
    let fill = render(&ctx, &model, &request(walk, 0.3, 1, 30.0)).remove(0);
    let shot = request(walk, 0.3, 1, 30.0);
    let wire = render(&ctx, &model, &shot.with(|s| s.wireframe = true)).remove(0);
    let (f, w) = (mask(&fill), mask(&wire));
    let (nf, nw) = (f.iter().filter(|&&x| x).count(), w.iter().filter(|&&x| x).count());
    // Edges cover about the silhouette (anti-aliased lines may spill past
    // it) but the pixels differ: the interior shows the background through.
    assert!(nw > nf / 4 && nw < nf * 2, "wireframe covers {nw} pixels, fill {nf}");
    let changed = fill.chunks_exact(4).zip(wire.chunks_exact(4)).filter(|(a, b)| a != b).count();
    assert!(changed > nf / 4, "wireframe looks like fill: {changed} pixels differ");
}

#[test]
fn single_sample_target_matches_msaa() {
    let (Some(model), Some(ctx)) = (shared_model("CesiumMan/CesiumMan.glb"), context()) else { return };
    let msaa = request(0, 0.5, 1, 30.0);
    let single = msaa.with(|s| s.msaa = false);
    let (a, b) = (render(&ctx, &model, &msaa).remove(0), render(&ctx, &model, &single).remove(0));
    let (ma, mb) = (mask(&a), mask(&b));
    let covered = ma.iter().filter(|&&x| x).count();
    assert!(covered > (W * H / 50) as usize);
    // Only anti-aliased edge pixels may differ.
    let changed = differing(&ma, &mb);
    assert!(changed < covered / 4, "{changed} of {covered} pixels differ");
}

/// Where the reference images live.
fn reference_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference")
}

/// Decodes an RGBA8 PNG.
fn read_png(path: &std::path::Path) -> Option<(u32, u32, Vec<u8>)> {
    let file = std::fs::File::open(path).ok()?;
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().ok()?;
    let mut buf = vec![0; reader.output_buffer_size()?];
    let info = reader.next_frame(&mut buf).ok()?;
    (info.color_type == png::ColorType::Rgba && info.bit_depth == png::BitDepth::Eight)
        .then(|| (info.width, info.height, buf[..info.buffer_size()].to_vec()))
}

/// Pixels whose largest channel difference exceeds `REFERENCE_TOLERANCE`
/// may be at most `REFERENCE_OUTLIERS` of the image (anti-aliased edges are
/// the first to move between driver versions).
const REFERENCE_TOLERANCE: u8 = 2;
const REFERENCE_OUTLIERS: f64 = 0.002;

/// A few renders against the images in `tests/reference` (lavapipe, 4x
/// MSAA, 160x120): every channel within 2/255 on all but 0.2 % of the
/// pixels. `VKSKIN_BLESS=1 cargo test --release --test gpu render_headless` rewrites them
/// (look at them before committing).
#[test]
fn renders_match_reference_images() {
    let Some(ctx) = context() else { return };
    let builtin = Arc::new(vkskin::asset::load_default_character().expect("built-in character"));
    let mut shots: Vec<(&str, Arc<Model>, Shot)> = Vec::new();
    let walk = builtin.find_clip("Walk").unwrap();
    shots.push(("builtin-walk", builtin.clone(), request(walk, 0.5, 1, 30.0)));
    if let Some(fox) = shared_model("Fox/Fox.glb") {
        shots.push(("fox-walk", fox.clone(), request(fox.find_clip("Walk").unwrap(), 0.3, 1, 30.0)));
    }
    if let Some(man) = shared_model("CesiumMan/CesiumMan.glb") {
        let shot = request(0, 0.7, 1, 30.0);
        shots.push(("cesium-vertex", man, shot.with(|s| s.frame.placement = SkinningPlacement::Vertex)));
    }
    if let Some(robot) = shared_model("RobotExpressive/RobotExpressive.glb") {
        let shot = request(robot.find_clip("Dance").unwrap(), 1.1, 1, 30.0);
        if ctx.features.fill_mode_non_solid {
            shots.push(("robot-wire", robot, shot.with(|s| s.wireframe = true)));
        } else {
            crate::common::skip("the device lacks fillModeNonSolid (the wireframe reference)");
        }
    }
    let bless = std::env::var_os("VKSKIN_BLESS").is_some();
    for (name, model, shot) in shots {
        let pixels = render(&ctx, &model, &shot).remove(0);
        let path = reference_dir().join(format!("{name}.png"));
        if bless {
            std::fs::create_dir_all(reference_dir()).unwrap();
            vkskin::render::image_out::write_png(&path, W, H, &pixels).unwrap();
            eprintln!("wrote {}", path.display());
            continue;
        }
        let Some((w, h, expected)) = read_png(&path) else {
            panic!(
                "{}: missing or unreadable; make it with VKSKIN_BLESS=1 cargo test --release --test gpu render_headless",
                path.display()
            );
        };
        assert_eq!((w, h), (W, H), "{name}: size");
        let outliers = pixels
            .chunks_exact(4)
            .zip(expected.chunks_exact(4))
            .filter(|(a, b)| (0..4).any(|c| a[c].abs_diff(b[c]) > REFERENCE_TOLERANCE))
            .count();
        let share = outliers as f64 / f64::from(W * H);
        assert!(
            share <= REFERENCE_OUTLIERS,
            "{name}: {outliers} pixels ({:.2} %) differ from {} by more than {REFERENCE_TOLERANCE}/255",
            share * 100.0,
            path.display()
        );
    }
}

/// The staircase scene: the built-in character walking up the demo level's
/// stairs (physics, foot IK), drawn with the level around it.
#[test]
fn renders_the_staircase_scene() {
    use vkskin::character::controller::DEFAULT_CONTROLLER;
    use vkskin::character::{Controller, Script};
    use vkskin::world::{ActorRun, Authority, FootPlacement, Level, scenery_model};
    let Some(ctx) = context() else { return };
    let model = Arc::new(vkskin::asset::load_default_character().unwrap());
    let controller = Controller::from_text(DEFAULT_CONTROLLER, &model).unwrap();
    let script = Script::parse(&["0:speed=1.2".to_string()], &controller).unwrap();
    let level = Level::demo();
    let feet = FootPlacement::humanoid(&model).ok();
    let mut run = ActorRun::new(
        model.rig.clone(),
        Arc::new(controller),
        script,
        &level,
        "stairs",
        Authority::Animation,
        feet,
        30.0,
    )
    .unwrap();
    let request = HeadlessRequest { first_frame: 96, ..request(0, 0.0, 3, 30.0).request };
    let scenery = Some(Arc::new(scenery_model(&level).unwrap()));
    let mut frames = Vec::new();
    headless::render(&ctx, model.clone(), &mut run, scenery, &request, &mut |_, rgba| {
        frames.push(rgba.to_vec());
        Ok(())
    })
    .expect("render");
    assert_no_validation_messages(&ctx);
    assert_eq!(frames.len(), 3);
    // On the stairs by then (frame 96 is 3.2 s in).
    assert!(run.actor().position().y > 0.5, "{:?}", run.actor().position());
    // The steps show (their colour, lit), and so does the character.
    let step = vkskin::world::Surface::Step.color();
    let steps = frames[0]
        .chunks_exact(4)
        .filter(|p| {
            let (r, g, b) = (f32::from(p[0]), f32::from(p[1]), f32::from(p[2]));
            // Lit step surfaces keep their hue: green over blue, red about green.
            g > b + 15.0 && (r - g).abs() < 40.0 && step[1] > step[2]
        })
        .count();
    assert!(steps > (W * H / 20) as usize, "only {steps} step pixels");
    let skin = frames[0]
        .chunks_exact(4)
        .filter(|p| p[0] > 180 && p[1] > 120 && p[2] > 90 && p[0] > p[2] + 30)
        .count();
    assert!(skin > 30, "only {skin} skin-coloured pixels: the character is missing");
}

/// `render --passes 5` outside a level draws the viewer's ground under the
/// crowd (and under the planar rig), and the cascades' shadows fall on
/// it; one pass draws no ground (the characters against the background,
/// as always).
#[test]
fn render_with_shadow_cascades_draws_a_ground_for_the_shadows() {
    let Some(_ctx) = context() else { return };
    let dir = tempfile::tempdir().unwrap();
    let render = |what: &str, passes: &str| {
        let out = dir.path().join(format!("{}-{passes}.png", what.trim_start_matches('-')));
        let args = ["render", what, "--size", "200x150", "--passes", passes, "--validation", "--out"];
        let args = [&args[..], &[out.to_str().unwrap()]].concat();
        let o = crate::common::bounded::run(&args, std::time::Duration::from_secs(300));
        assert_eq!((o.code, o.timed_out), (Some(0), false), "{}", o.describe(&args));
        read_png(&out).expect("an RGBA PNG")
    };
    let (_, _, planar_one) = render("--planar", "1");
    let (w, h, planar_five) = render("--planar", "5");
    let corner = ((h - 3) * w + 2) as usize * 4;
    assert_eq!(&planar_one[corner..corner + 4], &planar_one[..4], "one pass draws no ground");
    assert_ne!(&planar_five[corner..corner + 4], &planar_five[..4], "no ground under the planar rig");
    let crowd = "--characters=4";
    let (w, h, one) = render(crowd, "1");
    let (_, _, five) = render(crowd, "5");
    let sky = &one[..4];
    // The bottom-left corner: background in one pass, lit ground in five.
    let corner = ((h - 3) * w + 2) as usize * 4;
    assert_eq!(&one[corner..corner + 4], sky, "one pass draws no ground");
    let lit = &five[corner..corner + 4];
    assert!((0..3).any(|k| lit[k].abs_diff(sky[k]) > 8), "no ground: {lit:?} against the sky's {sky:?}");
    // Where one pass shows the background and five the ground, some of it
    // in the characters' shadows: darker than the lit ground.
    let pixel = |image: &[u8], p: usize| -> [u8; 4] { image[p * 4..p * 4 + 4].try_into().unwrap() };
    let shadowed = (0..(w * h) as usize)
        .filter(|&p| {
            pixel(&one, p)[..] == *sky && (0..3).all(|k| pixel(&five, p)[k].saturating_add(20) < lit[k])
        })
        .count();
    assert!(shadowed as u32 * 100 > w * h, "{shadowed} pixels of the ground in shadow");
}
