//! The weight heat map on a real Vulkan device (lavapipe without a GPU) with
//! validation on: the per-vertex weights of every joint sum to one, and the
//! heat pipeline draws the Fox in heat colours (blue where the selected
//! joint has no weight, warm where it has) while the plain pipeline on the
//! same frame setup does not. Skips without a device or the shared model,
//! unless VKSKIN_NO_SKIP is set (then only the model may be absent).

mod common;

use ash::vk;
use common::{assert_no_messages, context, shared_model};
use nalgebra::Matrix4;
use std::sync::Arc;
use vkskin::anim::SkinnedPose;
use vkskin::asset::Model;
use vkskin::gpu::{FrameRing, GpuContext};
use vkskin::render::camera::{Camera, DEFAULT_FOV_Y};
use vkskin::render::gpu_model::GpuModel;
use vkskin::render::heat_map::{HeatMap, joint_weights};
use vkskin::render::mesh_pass::{DrawItem, FrameParams, FrameUniforms, MeshMaterials, MeshPass, VertexPath};
use vkskin::render::skin_pass::{OUTPUT_STRIDE, SkinInput, SkinPass};
use vkskin::render::target::{CLEAR_COLOR, SlotTargets};
use vkskin::render::textures::Textures;

const W: u32 = 128;
const H: u32 = 96;

/// Renders the Fox's rest pose once with `heat` (or the plain pipeline) and
/// returns the RGBA8 pixels.
#[allow(clippy::too_many_arguments)]
fn render(
    ctx: &GpuContext,
    ring: &mut FrameRing,
    skin: &mut SkinPass,
    mesh: &mut MeshPass,
    materials: &MeshMaterials,
    targets: &SlotTargets,
    model: &Model,
    draws: &[DrawItem],
    pose: SkinnedPose,
    camera: &Camera,
    heat: Option<vk::Buffer>,
    version: u64,
) -> Vec<u8> {
    let slot = ring.begin_frame(ctx).expect("begin");
    let index = slot.index;
    skin.record(ctx, slot, &[SkinInput { pose, version }], false).expect("skin");
    let cmd = slot.command_buffer;
    let target = targets.get(index);
    target.begin_barriers(ctx, cmd);
    target.begin_rendering(ctx, cmd, CLEAR_COLOR);
    let uniforms = FrameUniforms::new(&camera.view_proj(), [camera.eye.x, camera.eye.y, camera.eye.z]);
    let mut world = [0.0f32; 16];
    world.copy_from_slice(Matrix4::<f32>::identity().as_slice());
    let params = FrameParams {
        uniforms: &uniforms,
        path: VertexPath::PreSkinned,
        wireframe: false,
        skin: None,
        world,
    };
    let bound = mesh.begin_with_heat(ctx, slot, &params, heat).expect("begin mesh");
    for item in draws {
        let mut item = *item;
        item.vertices.0 = skin.output_buffer(index);
        mesh.draw(ctx, cmd, &bound, materials, &model.materials, &item);
    }
    target.end_rendering(ctx, cmd);
    target.record_readback(ctx, cmd);
    ring.end_frame(ctx, &[], &[]).expect("submit");
    ring.wait_all(ctx).expect("wait");
    targets.get(index).pixels().expect("pixels").to_vec()
}

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

    let mut ring = FrameRing::new(&ctx).expect("ring");
    let mut skin = SkinPass::new(&ctx).expect("skin pass");
    let character = skin.add_character(&ctx, &mut ring, gpu.clone(), model.clone()).expect("character");
    let samples = vk::SampleCountFlags::TYPE_1;
    let mut mesh = MeshPass::new(&ctx, samples).expect("mesh pass");
    let mut warnings = Vec::new();
    let textures = Textures::load(&ctx, &model, &mut warnings).expect("textures");
    let materials = MeshMaterials::new(&ctx, &mesh, &model.materials, &textures).expect("materials");
    let targets = SlotTargets::new(&ctx, vk::Extent2D { width: W, height: H }, samples).expect("targets");
    let mut draws = Vec::new();
    let mut record = 0u32;
    for o in skin.outputs(character) {
        if o.vertex_count == 0 {
            continue;
        }
        let p = &gpu.primitives[o.gpu_primitive];
        if p.index_count > 0 {
            draws.push(DrawItem {
                vertices: (vk::Buffer::null(), u64::from(o.output_offset) * OUTPUT_STRIDE),
                uvs: (gpu.uvs.raw, u64::from(p.source_offset) * 8),
                indices: gpu.indices.raw,
                first_index: p.first_index,
                index_count: p.index_count,
                material: p.material,
                record,
            });
        }
        record += 1;
    }
    let character = common::character_at(&model, None, 0.0);
    let (min, max) = bounds(&model, &character.pose());
    let camera = Camera::frame_box(min, max, W as f32 / H as f32, DEFAULT_FOV_Y);

    let mut heat = HeatMap::new();
    // First another joint, then the chosen one: the replaced buffer is retired.
    heat.update(&ctx, &mut ring, &model, &gpu, Some(model.skins[0].joints[0] as usize)).expect("heat");
    heat.update(&ctx, &mut ring, &model, &gpu, Some(joint)).expect("heat");
    assert!(heat.buffer_for(Some(joint)).is_some() && heat.buffer_for(None).is_none());
    let mut frame = |heat: Option<vk::Buffer>| {
        render(
            &ctx,
            &mut ring,
            &mut skin,
            &mut mesh,
            &materials,
            &targets,
            &model,
            &draws,
            character.pose(),
            &camera,
            heat,
            0,
        )
    };
    let hot = frame(heat.buffer_for(Some(joint)));
    let plain = frame(None);

    // Heat colours: strongly blue (no weight) and warm (red > blue, weight) pixels.
    let blue = |p: &[u8]| p[2] > 80 && p[2] > p[0] + 40 && p[2] > p[1];
    let warm = |p: &[u8]| p[0] > 80 && p[0] > p[2] + 40;
    let count = |px: &[u8], f: &dyn Fn(&[u8]) -> bool| px.chunks_exact(4).filter(|p| f(p)).count();
    let (hot_blue, hot_warm) = (count(&hot, &blue), count(&hot, &warm));
    assert!(hot_blue > 100, "heat view: only {hot_blue} blue pixels");
    assert!(hot_warm > 20, "heat view: only {hot_warm} warm pixels");
    assert!(count(&plain, &blue) < hot_blue / 4, "plain view looks like the heat map");

    let messages = ctx.validation_messages();
    ring.destroy(&ctx);
    heat.destroy(&ctx);
    skin.destroy(&ctx);
    materials.destroy(&ctx);
    mesh.destroy(&ctx);
    textures.destroy(&ctx);
    targets.destroy(&ctx);
    if let Ok(g) = Arc::try_unwrap(gpu) {
        g.destroy(&ctx);
    }
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
