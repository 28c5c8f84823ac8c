//! A crowd of the built-in character through the renderer's one frame path
//! on a real Vulkan device (lavapipe without a GPU), validation and
//! synchronization validation on: every character is drawn (instanced
//! draws), compute and vertex skinning agree, every palette upload mode and
//! the depth prepass give the same picture, and the dirty mode uploads
//! nothing while the crowd is paused. Skips without a device, unless
//! VKSKIN_NO_SKIP is set.

use crate::common::{assert_no_messages, context};
use ash::vk;
use std::sync::Arc;
use vkskin::asset::{Model, load_default_character};
use vkskin::character::controller::DEFAULT_CONTROLLER;
use vkskin::character::{Controller, Crowd, ParameterValue};
use vkskin::gpu::GpuContext;
use vkskin::render::camera::{Camera, DEFAULT_FOV_Y};
use vkskin::render::renderer::{RenderSettings, Renderer};
use vkskin::render::{PaletteUpload, PassSetup, SkinningPlacement};

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

    let variants: [(&str, &Adjust); 5] = [
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
        // Compute and vertex skinning round differently in the last bit; the
        // upload modes and the prepass must not change a pixel.
        let allowed = if name.starts_with("vertex") { (W * H / 500) as usize } else { 0 };
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
