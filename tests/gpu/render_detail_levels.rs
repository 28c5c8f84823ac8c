//! Detail levels through the renderer's one frame path on a real Vulkan
//! device, validation and synchronization validation on: a distant crowd
//! draws coarser levels (far fewer triangles) yet the same picture within
//! the levels' pixel of error, a close character draws its full mesh (the
//! same pixels as `--detail full`), and the vertex-skinning path and the
//! shadow passes draw the same levels. Skips without a device, unless
//! VKSKIN_NO_SKIP is set.

use crate::common::{assert_no_messages, context};
use ash::vk;
use std::sync::Arc;
use vkskin::asset::{Model, load_default_character};
use vkskin::character::controller::DEFAULT_CONTROLLER;
use vkskin::character::{Controller, Crowd};
use vkskin::gpu::GpuContext;
use vkskin::render::camera::{Camera, DEFAULT_FOV_Y};
use vkskin::render::detail_levels::DETAIL_LEVELS;
use vkskin::render::renderer::{RenderSettings, Renderer};
use vkskin::render::{DrawDetail, PassSetup, SkinningPlacement};

const W: u32 = 320;
const H: u32 = 240;
const SPACING: f32 = 1.5;

/// What one render drew.
struct Drawn {
    pixels: Vec<u8>,
    counts: [u32; DETAIL_LEVELS],
    triangles: u64,
}

/// Renders two frames of a `side` x `side` walking crowd seen by `camera`.
fn render(
    ctx: &GpuContext,
    model: &Arc<Model>,
    side: u32,
    camera: &Camera,
    adjust: impl Fn(&mut RenderSettings),
) -> Drawn {
    let mut settings = RenderSettings::new(vk::Extent2D { width: W, height: H });
    settings.msaa = false;
    settings.characters = side * side;
    adjust(&mut settings);
    let mut renderer = Renderer::new(ctx, model.clone(), settings).expect("renderer");
    let controller = Arc::new(Controller::from_text(DEFAULT_CONTROLLER, model).expect("controller"));
    let count = settings.characters as usize;
    let mut crowd = Crowd::new(model.rig.clone(), controller, count, SPACING, 30.0, 1).expect("crowd");
    let mut pixels = Vec::new();
    let mut keep = |_: u64, rgba: &[u8]| {
        pixels = rgba.to_vec();
        Ok(())
    };
    for i in 0..2 {
        crowd.frame(i).expect("frame");
        renderer.render_frame(ctx, &crowd, camera, true, &mut keep).expect("render");
    }
    let (counts, triangles) = (renderer.detail_counts(), renderer.triangles_per_pass());
    renderer.finish(ctx, &mut keep).expect("finish");
    renderer.destroy(ctx);
    Drawn { pixels, counts, triangles }
}

/// A camera framing a `side` x `side` grid of characters (Crowd's layout:
/// centred on the origin, `SPACING` apart).
fn framing(side: u32) -> Camera {
    let half = SPACING * (side as f32 - 1.0) * 0.5 + 0.5;
    Camera::frame_box([-half, 0.0, -half], [half, 2.0, half], W as f32 / H as f32, DEFAULT_FOV_Y)
}

/// Pixels whose colour differs by more than `tolerance` in some channel.
fn differing(a: &[u8], b: &[u8], tolerance: u8) -> usize {
    a.chunks_exact(4)
        .zip(b.chunks_exact(4))
        .filter(|(x, y)| x.iter().zip(*y).any(|(p, q)| p.abs_diff(*q) > tolerance))
        .count()
}

/// Pixels that are not background.
fn covered(rgba: &[u8]) -> usize {
    let bg = vkskin::render::target::CLEAR_COLOR.map(|c| (c.powf(1.0 / 2.2) * 255.0) as i32);
    rgba.chunks_exact(4).filter(|p| (0..3).any(|k| (i32::from(p[k]) - bg[k]).abs() > 12)).count()
}

#[test]
fn a_distant_crowd_draws_coarser_levels_and_the_same_picture() {
    let Some(ctx) = context() else { return };
    let model = Arc::new(load_default_character().expect("built-in character"));
    let side = 16;
    let camera = framing(side);
    for (name, placement, passes) in [
        ("compute", SkinningPlacement::Compute, PassSetup::Main),
        ("vertex skinning, shadows", SkinningPlacement::Vertex, PassSetup::ShadowCascades),
    ] {
        let with = |detail| {
            move |s: &mut RenderSettings| {
                s.frame.placement = placement;
                s.frame.passes = passes;
                s.frame.detail = detail;
            }
        };
        let full = render(&ctx, &model, side, &camera, with(DrawDetail::Full));
        let auto = render(&ctx, &model, side, &camera, with(DrawDetail::Auto));
        let all = side * side;
        assert_eq!(full.counts, [all, 0, 0, 0], "{name}");
        assert_eq!(auto.counts.iter().sum::<u32>(), all, "{name}");
        // Some 8 to 20 pixels tall, every character is far enough for a
        // coarser level, most for the coarsest ones.
        assert_eq!(auto.counts[0], 0, "{name}: {:?}", auto.counts);
        assert!(auto.counts[2] + auto.counts[3] > all / 2, "{name}: {:?}", auto.counts);
        assert!(
            auto.triangles * 4 < full.triangles,
            "{name}: {} of {} triangles",
            auto.triangles,
            full.triangles
        );
        // The same crowd: each level is within a pixel of the full mesh, so
        // only edge pixels change, and not by much.
        let (a, f) = (covered(&auto.pixels), covered(&full.pixels));
        assert!(f > (W * H / 20) as usize, "{name}: the crowd covers {f} pixels");
        eprintln!(
            "{name}: levels {:?}, {} of {} triangles, {a} and {f} pixels covered",
            auto.counts, auto.triangles, full.triangles
        );
        assert!(a.abs_diff(f) * 20 < f, "{name}: {a} pixels covered at auto detail, {f} at full");
        let changed = differing(&auto.pixels, &full.pixels, 48);
        assert!(changed * 8 < f, "{name}: {changed} of {f} pixels changed by more than 48");
    }
    assert_no_messages(&ctx.validation_messages());
}

#[test]
fn a_close_character_draws_its_full_mesh() {
    let Some(ctx) = context() else { return };
    let model = Arc::new(load_default_character().expect("built-in character"));
    let camera = framing(1);
    let full = render(&ctx, &model, 1, &camera, |s| s.frame.detail = DrawDetail::Full);
    let auto = render(&ctx, &model, 1, &camera, |_| {});
    assert_eq!(auto.counts, [1, 0, 0, 0]);
    assert_eq!(auto.triangles, full.triangles);
    assert_eq!(differing(&auto.pixels, &full.pixels, 0), 0, "the same draws, the same pixels");
    assert_no_messages(&ctx.validation_messages());
}
