//! A crowd of the built-in character through the renderer's one frame path
//! on a real Vulkan device (lavapipe without a GPU), validation and
//! synchronization validation on: every character is drawn (instanced
//! draws), compute and vertex skinning agree, every palette upload mode and
//! the depth prepass give the same picture, the dirty mode uploads
//! nothing while the crowd is paused, and a crowd whose skinned output is
//! larger than a storage binding may be (`maxStorageBufferRange`) skins and
//! draws its last characters right. Skips without a device, unless
//! VKSKIN_NO_SKIP is set.

use crate::common::{assert_no_messages, context};
use ash::vk;
use std::sync::Arc;
use vkskin::anim::frame_poses::FramePoses;
use vkskin::asset::{Model, load_default_character};
use vkskin::character::controller::DEFAULT_CONTROLLER;
use vkskin::character::{Controller, Crowd, ParameterValue};
use vkskin::gpu::GpuContext;
use vkskin::render::camera::{Camera, DEFAULT_FOV_Y};
use vkskin::render::crowd_fit::CrowdNeed;
use vkskin::render::renderer::{RenderSettings, Renderer};
use vkskin::render::skin_pass::{CharacterId, SHRINK_AFTER_FRAMES, SHRINK_FROM_BYTES};
use vkskin::render::{DrawDetail, PaletteUpload, PassSetup, PoseEvaluation, SkinningPlacement};

const W: u32 = 160;
const H: u32 = 120;
const CHARACTERS: usize = 9;
const SPACING: f32 = 1.5;

/// A change to the default settings.
type Adjust = dyn Fn(&mut RenderSettings);

fn crowd(model: &Arc<Model>, count: usize) -> Crowd {
    let controller = Arc::new(Controller::from_text(DEFAULT_CONTROLLER, model).expect("controller"));
    let mut crowd = Crowd::new(model.rig.clone(), controller, count, SPACING, 30.0, 1).expect("crowd");
    for i in 0..count {
        // Idle, walking and running characters side by side.
        crowd.character_mut(i).set_named("speed", ParameterValue::Float(i as f32 * 0.5)).expect("speed");
    }
    crowd
}

/// A camera looking down on the whole grid.
fn camera() -> Camera {
    let half = SPACING * 1.5 + 0.5;
    Camera::frame_box([-half, 0.0, -half], [half, 2.0, half], W as f32 / H as f32, DEFAULT_FOV_Y)
}

/// Renders frames 0..frames of a fresh crowd with `settings` (changed by
/// `adjust`) and returns the last frame's pixels and every frame's palette bytes.
fn render(
    ctx: &GpuContext,
    model: &Arc<Model>,
    adjust: impl Fn(&mut RenderSettings),
    pause_after: Option<u32>,
    frames: u32,
) -> (Vec<u8>, Vec<u64>) {
    let mut settings = RenderSettings::new(vk::Extent2D { width: W, height: H });
    settings.msaa = false;
    settings.characters = CHARACTERS as u32;
    adjust(&mut settings);
    let mut renderer = Renderer::new(ctx, model.clone(), settings).expect("renderer");
    let mut crowd = crowd(model, settings.characters as usize);
    crowd.set_pose_on_gpu(settings.frame.pose == PoseEvaluation::Gpu).expect("GPU pose");
    let camera = camera();
    let mut last = Vec::new();
    let mut bytes = Vec::new();
    let mut keep = |_: u64, rgba: &[u8]| {
        last = rgba.to_vec();
        Ok(())
    };
    for i in 0..frames {
        crowd.set_paused(pause_after.is_some_and(|p| i >= p));
        crowd.frame(i).expect("frame");
        let report = renderer.render_frame(ctx, &crowd, &camera, true, &mut keep).expect("render");
        bytes.push(report.skin.palette_bytes_written);
    }
    renderer.finish(ctx, &mut keep).expect("finish");
    renderer.destroy(ctx);
    (last, bytes)
}

/// Pixels that are not background.
fn mask(rgba: &[u8]) -> Vec<bool> {
    let bg = vkskin::render::target::CLEAR_COLOR.map(|c| (c.powf(1.0 / 2.2) * 255.0) as i32);
    rgba.chunks_exact(4).map(|p| (0..3).any(|k| (i32::from(p[k]) - bg[k]).abs() > 12)).collect()
}

fn differing(a: &[u8], b: &[u8]) -> usize {
    a.chunks_exact(4)
        .zip(b.chunks_exact(4))
        .filter(|(x, y)| x.iter().zip(*y).any(|(p, q)| p.abs_diff(*q) > 2))
        .count()
}

#[test]
fn crowd_draws_every_character_the_same_on_every_path() {
    let Some(ctx) = context() else { return };
    let model = Arc::new(load_default_character().expect("built-in character"));
    let (base, _) = render(&ctx, &model, |_| {}, None, 3);
    // Every character is drawn: nine of them, 1.5 m apart, cover several
    // times what the one in the middle covers alone (same camera).
    let covered = mask(&base).iter().filter(|&&m| m).count();
    let (single, _) = render(&ctx, &model, |s| s.characters = 1, None, 3);
    let one = mask(&single).iter().filter(|&&m| m).count();
    assert!(one > 20, "the single character covers {one} pixels");
    assert!(covered > 6 * one, "nine characters cover {covered} pixels, one covers {one}");

    let variants: [(&str, &Adjust); 8] = [
        ("GPU pose", &|s| s.frame.pose = PoseEvaluation::Gpu),
        ("GPU pose, inplace", &|s| {
            s.frame.pose = PoseEvaluation::Gpu;
            s.frame.upload = PaletteUpload::InPlace;
        }),
        ("vertex skinning, GPU pose", &|s| {
            s.frame.pose = PoseEvaluation::Gpu;
            s.frame.placement = SkinningPlacement::Vertex;
        }),
        ("vertex skinning", &|s| s.frame.placement = SkinningPlacement::Vertex),
        ("inplace", &|s| s.frame.upload = PaletteUpload::InPlace),
        ("staged", &|s| s.frame.upload = PaletteUpload::Staged),
        ("depth prepass", &|s| s.frame.passes = PassSetup::DepthPrepass),
        ("vertex skinning, prepass, staged", &|s| {
            s.frame.placement = SkinningPlacement::Vertex;
            s.frame.passes = PassSetup::DepthPrepass;
            s.frame.upload = PaletteUpload::Staged;
        }),
    ];
    for (name, adjust) in variants {
        let (pixels, _) = render(&ctx, &model, adjust, None, 3);
        let changed = differing(&base, &pixels);
        // Compute and vertex skinning round differently in the last bit,
        // and so do GPU and CPU poses (within 1e-6 of the skeleton); the
        // upload modes and the prepass must not change a pixel.
        let rounds = name.starts_with("vertex") || name.contains("GPU pose");
        let allowed = if rounds { (W * H / 500) as usize } else { 0 };
        assert!(changed <= allowed, "{name}: {changed} pixels differ from compute/dirty/1 pass");
    }
    // Five passes: four shadow cascades of the key light, then the main
    // pass sampling them. Shadows only take light away: some pixels get
    // darker (the characters shadow themselves and each other), none brighter.
    for path in [SkinningPlacement::Compute, SkinningPlacement::Vertex] {
        let (plain, _) = render(&ctx, &model, |s| s.frame.placement = path, None, 3);
        let (shadowed, _) = render(
            &ctx,
            &model,
            |s| {
                s.frame.placement = path;
                s.frame.passes = PassSetup::ShadowCascades;
            },
            None,
            3,
        );
        let luma = |p: &[u8]| u32::from(p[0]) + u32::from(p[1]) + u32::from(p[2]);
        let pairs = || plain.chunks_exact(4).zip(shadowed.chunks_exact(4));
        let darker = pairs().filter(|(a, b)| luma(b) + 6 < luma(a)).count();
        let brighter = pairs().filter(|(a, b)| luma(b) > luma(a) + 6).count();
        assert!(darker > 30, "{path:?}: shadows darken only {darker} pixels");
        assert!(brighter <= darker / 50, "{path:?}: {brighter} pixels got brighter with shadows");
    }
    assert_no_messages(&ctx.validation_messages());
}

#[test]
fn upload_modes_count_their_bytes() {
    let Some(ctx) = context() else { return };
    let model = Arc::new(load_default_character().expect("built-in character"));
    let joints: u64 = model.skins.iter().map(|s| s.joints.len() as u64).sum();
    let everything = CHARACTERS as u64 * joints * 64;
    // Paused from frame 2 on: the pose of frame 1 stays. Frame 2 (slot 0,
    // which holds frame 0's pose) still writes it; from frame 3 both slots
    // hold it.
    for (mode, expect_paused) in
        [(PaletteUpload::InPlace, everything), (PaletteUpload::Staged, everything), (PaletteUpload::Dirty, 0)]
    {
        let (_, bytes) = render(&ctx, &model, |s| s.frame.upload = mode, Some(2), 6);
        assert_eq!(bytes[0], everything, "{mode:?}: the first frame writes every palette");
        assert!(bytes[3..].iter().all(|&b| b == expect_paused), "{mode:?}: paused frames wrote {bytes:?}");
    }
    // Playing, dirty mode writes every character that moved: all of them.
    let (_, bytes) = render(&ctx, &model, |s| s.frame.upload = PaletteUpload::Dirty, None, 4);
    assert!(bytes.iter().all(|&b| b == everything), "dirty, playing: {bytes:?}");
    assert_no_messages(&ctx.validation_messages());
}

/// A crowd whose skinned output passes `maxStorageBufferRange` (128 MiB on
/// lavapipe: about 580 built-in characters at full detail) is not capped
/// by it: the skin pass writes the frame's output in two windows (two
/// dispatches), the draws read it by pointer. The characters
/// whose vertices lie past the range skin as the CPU reference does, and
/// the picture of the last ones is the same with compute skinning (which
/// draws from that output) and vertex skinning (which does not).
#[test]
fn a_crowd_past_the_storage_binding_range_skins_and_draws_its_last_characters() {
    let Some(ctx) = context() else { return };
    let model = Arc::new(load_default_character().expect("built-in character"));
    let per = CrowdNeed::of(&model, 1, DrawDetail::Full).unwrap().output_per_character;
    let range = u64::from(ctx.properties.limits.max_storage_buffer_range);
    // The last two characters' output starts past the range.
    let count = (range / per + 3) as usize;
    if count > 2_000 {
        eprintln!("not applicable: a binding here holds {} characters' output", range / per);
        return;
    }
    let mut crowd = crowd(&model, count);
    crowd.frame(3).expect("frame");
    // The last characters, whose output starts past the range, framed
    // from the front.
    let last = [count - 3, count - 2, count - 1];
    let at = |c: usize| {
        let w = crowd.world(c);
        [w[(0, 3)], w[(1, 3)], w[(2, 3)]]
    };
    let (lo, hi) = last.iter().map(|&c| at(c)).fold(([f32::MAX; 3], [f32::MIN; 3]), |(lo, hi), p| {
        (std::array::from_fn(|k| lo[k].min(p[k] - 0.6)), std::array::from_fn(|k| hi[k].max(p[k] + 0.6)))
    });
    let camera =
        Camera::frame_box([lo[0], 0.0, lo[2]], [hi[0], 2.0, hi[2]], W as f32 / H as f32, DEFAULT_FOV_Y);
    let mut pictures = Vec::new();
    for placement in [SkinningPlacement::Compute, SkinningPlacement::Vertex] {
        let mut settings = RenderSettings::new(vk::Extent2D { width: W, height: H });
        settings.msaa = false;
        settings.characters = count as u32;
        settings.frame.placement = placement;
        // Every character skinned whole, as a crowd close by would be.
        settings.frame.detail = DrawDetail::Full;
        let mut renderer = Renderer::new(&ctx, model.clone(), settings).expect("renderer");
        let mut picture = Vec::new();
        let mut keep = |_: u64, rgba: &[u8]| {
            picture = rgba.to_vec();
            Ok(())
        };
        let report = renderer.render_frame(&ctx, &crowd, &camera, true, &mut keep).expect("render");
        if placement == SkinningPlacement::Compute {
            // The frame's output in two windows, a dispatch each.
            assert_eq!(renderer.skin_pass().output_windows().count, 2, "two windows");
            assert!(report.skin.dispatches >= 2, "{} dispatches", report.skin.dispatches);
        } else {
            assert_eq!(report.skin.dispatches, 0, "no dispatch when the vertex shaders skin");
        }
        renderer.finish(&ctx, &mut keep).expect("finish");
        if placement == SkinningPlacement::Compute {
            let skinned = renderer.read_skinned(&ctx, &crowd).expect("read back");
            assert!(skinned.len() as u64 * 48 > range, "{} vertices fit one binding", skinned.len());
            for c in [0, count - 2, count - 1] {
                let outputs = renderer.outputs(CharacterId(c));
                let first = outputs.iter().map(|o| u64::from(o.output_offset)).min().unwrap();
                assert_eq!(c > 0, first * 48 > range, "character {c} starts at vertex {first}");
                let pose = crowd.input(c).pose;
                let mut worst = 0.0f32;
                for o in outputs {
                    let instance = &model.instances[o.instance];
                    let gpu = renderer.skin_pass().gpu_model(CharacterId(c));
                    let prim =
                        &model.meshes[instance.mesh].primitives[gpu.primitives[o.gpu_primitive].primitive];
                    let mut cpu = vec![[0.0f32; 3]; o.vertex_count as usize];
                    pose.skin_primitive(instance, prim, &mut cpu, None).expect("CPU skinning");
                    let start = o.output_offset as usize;
                    for (g, c) in skinned[start..start + cpu.len()].iter().zip(&cpu) {
                        worst = (0..3).map(|k| (g.position[k] - c[k]).abs()).fold(worst, f32::max);
                    }
                }
                // Metres, on a character under 2 m tall.
                assert!(worst < 1e-4, "character {c}: GPU differs from the CPU by {worst} m");
            }
        }
        renderer.destroy(&ctx);
        pictures.push(picture);
    }
    let covered = mask(&pictures[0]).iter().filter(|&&m| m).count();
    assert!(covered > (W * H / 20) as usize, "the last characters cover {covered} pixels");
    let changed = differing(&pictures[0], &pictures[1]);
    assert!(changed <= (W * H / 500) as usize, "compute and vertex skinning differ in {changed} pixels");
    assert_no_messages(&ctx.validation_messages());
}

/// A crowd whose skinned output is split across buffers, as the largest
/// buffer splits a GPU's (4 GiB on NVIDIA's drivers: about 18,000
/// built-in characters at full detail); here the limit is lowered to two
/// and a half characters' full output. Each window is its own buffer
/// holding whole characters (at full detail two here: the third starts
/// the next one), skinned by its own dispatches and read by the draws of
/// its characters. CPU- and GPU-posed, at full detail and at the levels
/// the camera picks, the picture is the one a single buffer gives, and
/// every character's vertices are the same bits at its place in the layout.
#[test]
fn a_crowd_split_across_output_buffers_draws_as_one_buffer_does() {
    let Some(mut ctx) = context() else { return };
    let model = Arc::new(load_default_character().expect("built-in character"));
    let per = CrowdNeed::of(&model, 1, DrawDetail::Full).unwrap().output_per_character;
    let whole = ctx.buffer_limits.output_buffer_bytes;
    // At the camera's levels, 12 x 12 characters from far enough for the
    // coarsest levels (a few pixels tall).
    let far = {
        let half = SPACING * 12.0;
        Camera::frame_box([-half, 0.0, -half], [half, 2.0, half], W as f32 / H as f32, DEFAULT_FOV_Y)
    };
    let cases =
        [PoseEvaluation::Cpu, PoseEvaluation::Gpu].map(|p| (p, DrawDetail::Full, camera(), CHARACTERS));
    let far_case = (PoseEvaluation::Cpu, DrawDetail::Auto, far, 144);
    for (pose, detail, camera, characters) in cases.into_iter().chain([far_case]) {
        let mut runs = Vec::new();
        // At the camera's levels the characters skin fewer vertices: a
        // window of three full characters holds a few dozen. (The full
        // skin of the readback then takes 48 windows.)
        let unit = 64 * 24;
        let split = if detail == DrawDetail::Full { per * 5 / 2 } else { (3 * per).div_ceil(unit) * unit };
        for limit in [whole, split] {
            ctx.buffer_limits.output_buffer_bytes = limit;
            let mut settings = RenderSettings::new(vk::Extent2D { width: W, height: H });
            settings.msaa = false;
            settings.characters = characters as u32;
            settings.frame.pose = pose;
            settings.frame.detail = detail;
            let mut renderer = Renderer::new(&ctx, model.clone(), settings).expect("renderer");
            let mut crowd = crowd(&model, characters);
            crowd.set_pose_on_gpu(pose == PoseEvaluation::Gpu).expect("GPU pose");
            let mut picture = Vec::new();
            let mut keep = |_: u64, rgba: &[u8]| {
                picture = rgba.to_vec();
                Ok(())
            };
            let mut windows = 0;
            let mut counts = None;
            for i in 0..3 {
                crowd.frame(i).expect("frame");
                let report = renderer.render_frame(&ctx, &crowd, &camera, true, &mut keep).expect("render");
                // At least one dispatch per window.
                windows = renderer.skin_pass().output_windows().count;
                counts = Some(renderer.detail_counts());
                assert!(report.skin.dispatches >= windows, "{pose:?}: {} dispatches", report.skin.dispatches);
            }
            renderer.finish(&ctx, &mut keep).expect("finish");
            let skinned = renderer.read_skinned(&ctx, &crowd).expect("read back");
            let vertices: Vec<Vec<[u32; 12]>> = (0..characters)
                .map(|c| {
                    let outputs = renderer.outputs(CharacterId(c));
                    let first = outputs.iter().map(|o| o.output_offset).min().unwrap() as usize;
                    let count: u32 = outputs.iter().map(|o| o.vertex_count).sum();
                    skinned[first..first + count as usize]
                        .iter()
                        .map(|v| bytemuck::cast([v.position, v.normal, v.tangent]))
                        .collect()
                })
                .collect();
            renderer.destroy(&ctx);
            if detail == DrawDetail::Auto {
                // The two coarsest levels, skinned into windows of three
                // full characters each.
                let (levels, _) = counts.expect("a frame");
                eprintln!("{limit}: levels {levels:?}, {windows} windows");
                assert_eq!(levels[3] + levels[4], characters as u32, "{levels:?}");
            }
            runs.push((picture, windows, vertices));
        }
        ctx.buffer_limits.output_buffer_bytes = whole;
        let ((one, one_windows, one_vertices), (split, split_windows, split_vertices)) = (&runs[0], &runs[1]);
        // Nine characters, two a window at full detail: five windows.
        let split_into = if detail == DrawDetail::Full { 5 } else { *split_windows };
        assert_eq!((*one_windows, *split_windows), (1, split_into), "{pose:?}, {detail:?}");
        assert!(*split_windows > 1, "{pose:?}, {detail:?}: {split_windows} windows");
        let covered = mask(one).iter().filter(|&&m| m).count();
        assert!(covered > (W * H / 400) as usize, "{pose:?}, {detail:?}: {covered} pixels covered");
        assert_eq!(
            differing(one, split),
            0,
            "{pose:?}, {detail:?}: one buffer and several draw the same picture"
        );
        for c in 0..characters {
            assert!(one_vertices[c] == split_vertices[c], "{pose:?}: character {c}'s vertices differ");
        }
    }
    assert_no_messages(&ctx.validation_messages());
}

/// The skinned output grows to the largest frame and shrinks again once
/// the frames have used a quarter of it or less for `SHRINK_AFTER_FRAMES`
/// frames in a row: one full-detail frame of a crowd does not keep its
/// output for the rest of the run. The memory goes back to the device, and
/// the frames before and after the new buffer draw the same picture. Split
/// across four output buffers, the three the later frames leave unused go;
/// frames skinned in the vertex shader use none of it, and it shrinks to
/// almost nothing.
#[test]
fn the_skinned_output_shrinks_after_frames_that_need_far_less() {
    let Some(mut ctx) = context() else { return };
    let model = Arc::new(load_default_character().expect("built-in character"));
    let per = CrowdNeed::of(&model, 1, DrawDetail::Full).unwrap().output_per_character;
    // Each buffer past the size that may shrink.
    let over = SHRINK_FROM_BYTES / per + 20;
    let unit = 64 * 24;
    let whole = ctx.buffer_limits.output_buffer_bytes;
    let split = (over * per).div_ceil(unit) * unit;
    let (compute, vertex) = (SkinningPlacement::Compute, SkinningPlacement::Vertex);
    // The first case's picture at the camera's levels, skinned in
    // compute, and the bytes its frames skinned.
    let mut computed: Option<(Vec<u8>, u64)> = None;
    for (count, limit, buffers, later) in
        [(over, whole, 1, compute), (4 * over, split, 4, compute), (over, whole, 1, vertex)]
    {
        ctx.buffer_limits.output_buffer_bytes = limit;
        let count = count as usize;
        let mut settings = RenderSettings::new(vk::Extent2D { width: 64, height: 48 });
        (settings.msaa, settings.characters) = (false, count as u32);
        let mut renderer = Renderer::new(&ctx, model.clone(), settings).expect("renderer");
        let mut crowd = crowd(&model, count);
        let half = SPACING * (count as f32).sqrt() * 0.5 + 1.0;
        let camera = Camera::frame_box([-half, 0.0, -half], [half, 2.0, half], 64.0 / 48.0, DEFAULT_FOV_Y);
        let mut pictures = Vec::new();
        let mut keep = |_: u64, rgba: &[u8]| {
            pictures.push(rgba.to_vec());
            Ok(())
        };
        // One frame of full meshes, then the same pose at the camera's levels.
        renderer.set_detail(DrawDetail::Full);
        crowd.frame(0).expect("frame");
        renderer.render_frame(&ctx, &crowd, &camera, true, &mut keep).expect("render");
        let full = renderer.skin_pass().skinned_output_bytes();
        let plural = if buffers == 1 { "" } else { "s" };
        let name = format!("{count} characters in {buffers} output buffer{plural}, then {later:?}");
        assert!(full >= count as u64 * per, "{name}: {full} bytes of {per} each");
        assert_eq!(renderer.skin_pass().output_windows().count, buffers, "{name}");
        renderer.set_detail(DrawDetail::Auto);
        renderer.set_placement(later);
        crowd.set_paused(true);
        let mut sizes = Vec::new();
        let mut before = 0;
        for i in 1..SHRINK_AFTER_FRAMES + 4 {
            crowd.frame(i).expect("frame");
            renderer.render_frame(&ctx, &crowd, &camera, true, &mut keep).expect("render");
            sizes.push(renderer.skin_pass().skinned_output_bytes());
            if i == SHRINK_AFTER_FRAMES - 1 {
                before = ctx.memory_use().allocated_bytes;
            }
        }
        let windows = if later == vertex { 0 } else { 1 };
        assert_eq!(renderer.skin_pass().output_windows().count, windows, "{name}");
        renderer.finish(&ctx, &mut keep).expect("finish");
        // The old buffers went once the frames that used them had finished.
        let after = ctx.memory_use().allocated_bytes;
        let skinned = renderer.skinned_vertices() * 24;
        // Back to compute skinning: the output grows again.
        let regrown = (later == vertex).then(|| {
            renderer.set_placement(compute);
            for i in SHRINK_AFTER_FRAMES + 4..SHRINK_AFTER_FRAMES + 6 {
                crowd.frame(i).expect("frame");
                renderer.render_frame(&ctx, &crowd, &camera, true, &mut keep).expect("render");
            }
            renderer.finish(&ctx, &mut keep).expect("finish");
            renderer.skin_pass().skinned_output_bytes()
        });
        renderer.destroy(&ctx);
        // Oversized from frame 1 on: the frame after SHRINK_AFTER_FRAMES of
        // them holds a quarter more than they used.
        let shrunk = SHRINK_AFTER_FRAMES as usize - 1;
        assert!(sizes[..shrunk].iter().all(|&s| s == full), "{name}: {sizes:?}");
        assert!(sizes[shrunk..].iter().all(|&s| s == sizes[shrunk]), "{name}: {sizes:?}");
        let small = sizes[shrunk];
        assert!(small >= skinned && small <= skinned * 5 / 4 + 24, "{name}: {small} for {skinned}");
        assert!(small * 20 < full, "{name}: {small} of {full} bytes");
        eprintln!(
            "{name}: output {full} bytes, {small} after {SHRINK_AFTER_FRAMES} frames; {before} then {after} allocated"
        );
        // (Other buffers may move by a few bytes meanwhile.)
        let freed = before.saturating_sub(after);
        assert!(freed >= (full - small) * 99 / 100, "{name}: {before} then {after} bytes allocated");
        // The frames before and after the swap draw the same paused crowd.
        let frames = SHRINK_AFTER_FRAMES as usize + 4;
        assert_eq!(pictures.len(), frames + if regrown.is_some() { 2 } else { 0 });
        assert!(
            pictures[2..frames].iter().all(|p| p == &pictures[1]),
            "{name}: the same picture through the shrink"
        );
        match (regrown, &computed) {
            (None, _) => _ = computed.get_or_insert_with(|| (pictures[1].clone(), skinned)),
            (Some(bytes), Some((picture, skinned))) => {
                assert!(bytes >= *skinned, "{name}: {bytes} bytes again, for {skinned}");
                let last = pictures.last().expect("a picture");
                assert!(last == picture, "{name}: compute skinning again, the same picture");
            }
            (Some(_), None) => unreachable!("the compute cases come first"),
        }
    }
    assert_no_messages(&ctx.validation_messages());
}

/// `render --characters N --set T:NAME=VALUE`: the change reaches every
/// character of the crowd at its time (the crowd walks where it stood),
/// and a change to the value already held changes no pixel.
#[test]
fn render_sets_a_crowds_parameters() {
    let Some(_ctx) = context() else { return };
    let dir = tempfile::tempdir().unwrap();
    let picture = |sets: &[&str]| {
        let out = dir.path().join("crowd.png");
        let mut args =
            vec!["render", "--validation", "--characters", "9", "--time", "1.5", "--size", "160x120"];
        for set in sets {
            args.extend(["--set", set]);
        }
        args.extend(["--out", out.to_str().unwrap()]);
        let o = crate::common::bounded::run(&args, std::time::Duration::from_secs(300));
        let what = o.describe(&args);
        assert_eq!((o.code, o.timed_out), (Some(0), false), "{what}");
        std::fs::read(&out).expect("the picture")
    };
    let still = picture(&[]);
    assert_eq!(picture(&["0.2:speed=0"]), still, "speed 0 is the default");
    assert_ne!(picture(&["0.2:speed=3"]), still, "the crowd runs");
}
