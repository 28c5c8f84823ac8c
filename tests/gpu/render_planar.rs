//! The planar rig on a real Vulkan device (lavapipe without a GPU), with
//! the validation layer on: `vkskin render --planar` draws its four copies
//! (the angle-lerped and the quaternion copy of each row, the planar row
//! alike, the 3D row not) and prints the measured departures; and the
//! compute pass skins the rig's two-weight vertices as the two-weight rule
//! says.
//!
//! Without a device or layer the tests say "skipping" and pass, unless
//! VKSKIN_NO_SKIP is set.

use crate::common::pixels::mask;
use crate::common::{assert_no_validation_messages, context};
use nalgebra::Vector3;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use vkskin::anim::frame_poses::FramePoses;
use vkskin::anim::planar::skin_two_weight;
use vkskin::anim::planar_scene::{PlanarCopy, PlanarScene};
use vkskin::asset::planar_rig::{planar_motion, planar_rig, two_weights};
use vkskin::render::renderer::{RenderSettings, Renderer};
use vkskin::render::skin_pass::CharacterId;

const W: u32 = 480;
const H: u32 = 360;

/// Decodes the first frame of an RGBA8 PNG.
fn read_rgba(path: &Path) -> Vec<u8> {
    let file = std::fs::File::open(path).expect("the image exists");
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().expect("png");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("frame");
    assert_eq!((info.width, info.height, info.color_type), (W, H, png::ColorType::Rgba));
    buf.truncate(info.buffer_size());
    buf
}

/// The character pixels of one quadrant (`qx`, `qy` in 0..2), relative to
/// the centre of their bounding box.
fn quadrant(mask: &[bool], qx: u32, qy: u32) -> Vec<(f32, f32)> {
    let (w, h) = (W as usize / 2, H as usize / 2);
    let pixels: Vec<(usize, usize)> = (0..h)
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .filter(|&(x, y)| mask[(qy as usize * h + y) * W as usize + qx as usize * w + x])
        .collect();
    assert!(!pixels.is_empty(), "quadrant ({qx}, {qy}) shows nothing");
    let lo = pixels.iter().fold((usize::MAX, usize::MAX), |m, p| (m.0.min(p.0), m.1.min(p.1)));
    let hi = pixels.iter().fold((0, 0), |m, p| (m.0.max(p.0), m.1.max(p.1)));
    let centre = ((lo.0 + hi.0) as f32 * 0.5, (lo.1 + hi.1) as f32 * 0.5);
    pixels.iter().map(|&(x, y)| (x as f32 - centre.0, y as f32 - centre.1)).collect()
}

/// How far apart two silhouettes are, in pixels: the 95th percentile of
/// each pixel's distance to the nearest pixel of the other, the larger of
/// the two ways. Equal poses seen from a little apart differ by a pixel
/// or two at the edges; a pose that differs moves whole segments.
fn apart(a: &[(f32, f32)], b: &[(f32, f32)]) -> f32 {
    let one_way = |a: &[(f32, f32)], b: &[(f32, f32)]| {
        let mut d: Vec<f32> = a
            .iter()
            .map(|p| {
                b.iter().map(|q| (p.0 - q.0).powi(2) + (p.1 - q.1).powi(2)).fold(f32::MAX, f32::min).sqrt()
            })
            .collect();
        d.sort_by(f32::total_cmp);
        d[d.len() * 95 / 100]
    };
    one_way(a, b).max(one_way(b, a))
}

#[test]
fn render_planar_draws_both_rigs_and_prints_the_departures() {
    // Checks that Vulkan is there (skipping, or failing under
    // VKSKIN_NO_SKIP, if not); the command opens its own device.
    if context().is_none() {
        return;
    }
    let out = std::env::temp_dir().join(format!("vkskin-planar-{}.png", std::process::id()));
    let output = Command::new(env!("CARGO_BIN_EXE_vkskin"))
        .args(["render", "--planar", "--validation", "--size", &format!("{W}x{H}"), "--out"])
        .arg(&out)
        .output()
        .expect("vkskin runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "vkskin render --planar failed:\n{stderr}");
    // The measured departures: f32 rounding in the plane, asin(1/3) in 3D.
    let line = stderr.lines().find(|l| l.contains("largest joint difference")).expect("the departures line");
    let planar: f64 = line
        .split("largest joint difference ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no planar figure in {line}"));
    assert!(planar < 1e-6, "{line}");
    assert!(line.contains("19.47 degrees (Shoulder"), "{line}");

    let rgba = read_rgba(&out);
    let _ = std::fs::remove_file(&out);
    assert!(!rgba.is_empty());
    let covered = mask(&rgba);
    let quadrants: Vec<_> =
        [(0, 0), (1, 0), (0, 1), (1, 1)].iter().map(|&(x, y)| quadrant(&covered, x, y)).collect();
    for (q, pixels) in quadrants.iter().enumerate() {
        assert!(pixels.len() > 300, "copy {q} covers only {} pixels", pixels.len());
    }
    // Top row (one axis): the angle-lerped copy looks like the quaternion
    // one; bottom row (3D from Euler angles): they visibly differ.
    let (top, bottom) = (apart(&quadrants[0], &quadrants[1]), apart(&quadrants[2], &quadrants[3]));
    eprintln!("planar row copies {top:.1} pixels apart, 3D row copies {bottom:.1}");
    assert!(top <= 3.0, "the planar copies are {top} pixels apart");
    assert!(bottom > 3.0 * top.max(1.0), "the 3D copies look alike: {bottom} pixels apart, the planar {top}");
}

/// The compute pass's output for the angle-lerped and the Euler-lerped
/// copy equals the two-weight rule applied on the CPU to every vertex.
#[test]
fn compute_skinning_is_the_two_weight_rule() {
    let Some(ctx) = context() else { return };
    let model = Arc::new(planar_rig().expect("the planar rig"));
    let motion = planar_motion(&model).expect("its motion");
    let copies = [PlanarCopy::AngleLerp, PlanarCopy::EulerLerp];
    let mut scene = PlanarScene::new(model.rig.clone(), motion, &copies, 0.0, 30.0).expect("scene");
    let mut renderer = Renderer::new(&ctx, model.clone(), RenderSettings::sized(W, H)).expect("renderer");
    let prim = &model.meshes[0].primitives[0];
    let mut worst = 0.0f32;
    for (version, time) in [0.0, 0.3, 0.5, 0.8, 1.4].into_iter().enumerate() {
        scene.pose_at(time).expect("poses");
        for c in 0..copies.len() {
            let mut input = scene.input(c);
            input.version = version as u64 * 2 + c as u64 + 1;
            let out = renderer.read_skinned(&ctx, &[input]).expect("skins on the GPU");
            let o = &renderer.skin_pass().outputs(CharacterId(0))[0];
            assert_eq!(o.vertex_count as usize, prim.vertex_count());
            let palette = input.pose.palette(0);
            for (v, &p) in prim.positions.iter().enumerate() {
                let (joints, w) = two_weights(p[0]);
                let [a, b] = joints.map(|j| palette[j as usize].to_matrix());
                let expected = Vector3::from(skin_two_weight(p, &a, &b, w));
                let g = out[o.output_offset as usize + v].position;
                let gpu = Vector3::new(g[0], g[1], g[2]);
                worst = worst.max((gpu - expected).norm());
            }
        }
    }
    eprintln!("planar rig: GPU vs two-weight rule, largest vertex difference {worst:.2e}");
    // The arm is 2.4 long; unorm16 weights round by 8e-6.
    assert!(worst < 1e-4, "the GPU skins {worst} away from the two-weight rule");
    renderer.destroy(&ctx);
    assert_no_validation_messages(&ctx);
}
