//! The skeleton-lines pass drawn into an offscreen target on a real Vulkan
//! device (lavapipe without a GPU) with validation on: bones and the
//! selected joint show in their colours, the per-slot buffer grows for a
//! bigger skeleton, and no validation message appears. Skips without a
//! device unless VKSKIN_NO_SKIP is set.

use crate::common::{assert_no_messages, context};
use ash::vk;
use nalgebra::{Matrix4, Point3, Vector3};
use vkskin::anim::NO_PARENT;
use vkskin::gpu::FrameRing;
use vkskin::render::bone_lines::{BONE_COLOR, BoneLines, SELECTED_COLOR};
use vkskin::render::camera::Camera;
use vkskin::render::target::{CLEAR_COLOR, COLOR_FORMAT, DEPTH_FORMAT, SlotTargets};

const W: u32 = 96;
const H: u32 = 96;

/// A chain of `n` joints going up the y axis, 1/n apart, from y = -0.5.
fn chain(n: usize) -> (Vec<Matrix4<f32>>, Vec<u32>) {
    let joints = (0..n)
        .map(|i| Matrix4::new_translation(&Vector3::new(0.0, -0.5 + i as f32 / (n - 1) as f32, 0.0)))
        .collect();
    let parents = (0..n).map(|i| if i == 0 { NO_PARENT } else { i as u32 - 1 }).collect();
    (joints, parents)
}

/// sRGB-encoded byte of a linear byte, roughly (for colour matching).
fn srgb(linear: u8) -> u8 {
    let c = linear as f32 / 255.0;
    let s = if c <= 0.0031308 { c * 12.92 } else { 1.055 * c.powf(1.0 / 2.4) - 0.055 };
    (s * 255.0).round() as u8
}

fn count_colour(rgba: &[u8], linear: [u8; 4]) -> usize {
    let want = [srgb(linear[0]), srgb(linear[1]), srgb(linear[2])];
    rgba.chunks_exact(4).filter(|p| (0..3).all(|c| p[c].abs_diff(want[c]) <= 6)).count()
}

#[test]
fn bones_draw_in_their_colours_without_validation_messages() {
    let Some(ctx) = context() else { return };
    let samples = vk::SampleCountFlags::TYPE_1;
    let extent = vk::Extent2D { width: W, height: H };
    let mut ring = FrameRing::new(&ctx).expect("ring");
    let targets = SlotTargets::new(&ctx, extent, samples).expect("targets");
    let mut lines = BoneLines::new(&ctx, COLOR_FORMAT, DEPTH_FORMAT, samples).expect("pipeline");
    lines.show_joints = false;
    let camera = Camera {
        eye: Point3::new(0.0, 0.0, 3.0),
        target: Point3::origin(),
        up: Vector3::y(),
        fov_y: 40f32.to_radians(),
        aspect: 1.0,
        near: 0.1,
        far: 10.0,
        lens_shift: 0.0,
    };
    let view_proj = camera.view_proj();
    // Frame 0 and 1: a 3-joint chain (both slots); frame 2: 40 joints (the
    // slot's buffer grows after its fence); selection on joint 1 first.
    let mut last = Vec::new();
    for frame in 0..3 {
        let (joints, parents) = chain(if frame < 2 { 3 } else { 40 });
        let selected = if frame < 2 { Some(1) } else { None };
        let slot = ring.begin_frame(&ctx).expect("begin");
        let target = targets.get(slot.index);
        let cmd = slot.command_buffer;
        target.begin_barriers(&ctx, cmd);
        target.begin_rendering(&ctx, cmd, CLEAR_COLOR);
        let recorded =
            lines.record(&ctx, slot, &view_proj, &Matrix4::identity(), &joints, &parents, selected, extent);
        target.end_rendering(&ctx, cmd);
        target.record_readback(&ctx, cmd);
        let index = slot.index;
        ring.end_frame(&ctx, &[], &[]).expect("submit");
        recorded.expect("record");
        ring.wait_all(&ctx).expect("wait");
        let pixels = targets.get(index).pixels().expect("pixels").to_vec();
        if frame == 0 {
            // Joint 1 is selected: both bones touch it, so all are highlighted.
            assert!(count_colour(&pixels, SELECTED_COLOR) > 20, "selected bones drawn");
        }
        last = pixels;
    }
    let bone = count_colour(&last, BONE_COLOR);
    assert!(bone > 40, "only {bone} bone-coloured pixels");
    assert_eq!(count_colour(&last, SELECTED_COLOR), 0, "nothing selected");
    let messages = ctx.validation_messages();
    ring.destroy(&ctx);
    lines.destroy(&ctx);
    targets.destroy(&ctx);
    assert_no_messages(&messages);
}
