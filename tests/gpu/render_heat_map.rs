//! The weight heat map on a real Vulkan device (lavapipe without a GPU) with
//! validation on: the per-vertex weights of every joint sum to one, and the
//! heat pipeline draws the Fox in heat colours (blue where the selected
//! joint has no weight, warm where it has) while the plain pipeline on the
//! same frame setup does not. Skips without a device or the shared model,
//! unless VKSKIN_NO_SKIP is set (then only the model may be absent).

use crate::common::{assert_no_messages, context, shared_model};
use ash::vk;
use std::sync::Arc;
use vkskin::anim::SkinInput;
use vkskin::anim::SkinnedPose;
use vkskin::asset::Model;
use vkskin::render::camera::{Camera, DEFAULT_FOV_Y};
use vkskin::render::gpu_model::GpuModel;
use vkskin::render::heat_map::joint_weights;
use vkskin::render::renderer::{RenderSettings, Renderer};

const W: u32 = 128;
const H: u32 = 96;

#[test]
fn heat_map_weights_and_colours() {
    let (Some(model), Some(ctx)) = (shared_model("Fox/Fox.glb"), context()) else { return };
    let gpu = Arc::new(GpuModel::upload(&ctx, &model).expect("upload"));
    // Every skinned vertex's weights over all skin joints sum to one.
    let mut sum = vec![0.0f32; gpu.counts.sources as usize];
    let mut w = Vec::new();
    for &j in &model.skins[0].joints {
        joint_weights(&model, &gpu, j as usize, &mut w);
        sum.iter_mut().zip(&w).for_each(|(s, x)| *s += x);
    }
    assert!(sum.iter().all(|s| (s - 1.0).abs() < 1e-4), "weights do not sum to one");
    // The joint with the most weight overall: a good selection to look at.
    let joint = model.skins[0]
        .joints
        .iter()
        .map(|&j| {
            joint_weights(&model, &gpu, j as usize, &mut w);
            (w.iter().sum::<f32>(), j as usize)
        })
        .fold((0.0, 0), |a, b| if b.0 > a.0 { b } else { a })
        .1;

    let character = crate::common::character_at(&model, None, 0.0);
    let (min, max) = bounds(&model, &character.pose());
    let camera = Camera::frame_box(min, max, W as f32 / H as f32, DEFAULT_FOV_Y);
    let mut settings = RenderSettings::new(vk::Extent2D { width: W, height: H });
    settings.msaa = false;
    let mut renderer = Renderer::new(&ctx, model.clone(), settings).expect("renderer");
    let input = [SkinInput { pose: character.pose(), version: 0 }];
    // Renders one frame and returns its pixels.
    let frame = |renderer: &mut Renderer| {
        let mut pixels = Vec::new();
        let mut keep = |_: u64, rgba: &[u8]| {
            pixels = rgba.to_vec();
            Ok(())
        };
        renderer.render_frame(&ctx, &input, &camera, true, &mut keep).expect("frame");
        renderer.finish(&ctx, &mut keep).expect("finish");
        pixels
    };
    // First another joint, then the chosen one: the replaced stream is retired.
    renderer.set_heat_joint(&ctx, Some(model.skins[0].joints[0] as usize)).expect("heat");
    renderer.set_heat_joint(&ctx, Some(joint)).expect("heat");
    let hot = frame(&mut renderer);
    renderer.set_heat_joint(&ctx, None).expect("no heat");
    let plain = frame(&mut renderer);

    // Heat colours: strongly blue (no weight) and warm (red > blue, weight) pixels.
    let blue = |p: &[u8]| p[2] > 80 && p[2] > p[0] + 40 && p[2] > p[1];
    let warm = |p: &[u8]| p[0] > 80 && p[0] > p[2] + 40;
    let count = |px: &[u8], f: &dyn Fn(&[u8]) -> bool| px.chunks_exact(4).filter(|p| f(p)).count();
    let (hot_blue, hot_warm) = (count(&hot, &blue), count(&hot, &warm));
    assert!(hot_blue > 100, "heat view: only {hot_blue} blue pixels");
    assert!(hot_warm > 20, "heat view: only {hot_warm} warm pixels");
    assert!(count(&plain, &blue) < hot_blue / 4, "plain view looks like the heat map");

    renderer.destroy(&ctx);
    if let Ok(g) = Arc::try_unwrap(gpu) {
        g.destroy(&ctx);
    }
    let messages = ctx.validation_messages();
    assert_no_messages(&messages);
}

/// Scene-space bounds of the CPU-skinned rest pose.
fn bounds(model: &Model, pose: &SkinnedPose) -> ([f32; 3], [f32; 3]) {
    let (mut min, mut max) = ([f32::MAX; 3], [f32::MIN; 3]);
    for instance in &model.instances {
        for primitive in &model.meshes[instance.mesh].primitives {
            let mut out = vec![[0.0f32; 3]; primitive.vertex_count()];
            pose.skin_primitive(instance, primitive, &mut out, None).expect("skin");
            for p in out {
                for c in 0..3 {
                    min[c] = min[c].min(p[c]);
                    max[c] = max[c].max(p[c]);
                }
            }
        }
    }
    (min, max)
}
