//! Dual-quaternion skinning: the candy-wrapper test on the generated twist
//! cylinder (CPU reference), and the GPU's DQS (compute pass and vertex
//! shader) against the CPU reference, with the validation layer on.
//!
//! Without a Vulkan device or the shared models the GPU tests print why and
//! pass, unless VKSKIN_NO_SKIP is set, where they fail.

use crate::common::pixels::{differing, mask, render_clip};
use crate::common::{
    assert_no_validation_messages, bounding_diagonal, character_at, context, find_models, shared_assets,
    shared_model,
};
use crate::render_skinning::compare_with;
use std::sync::Arc;
use vkskin::anim::SkinInput;
use vkskin::anim::SkinningMethod;
use vkskin::asset::Model;
use vkskin::asset::twist_cylinder::{
    MIDDLE_RING, RADIUS, SEGMENTS, TWIST_CLIP, ring_vertices, twist_cylinder, twist_time,
};
use vkskin::gpu::GpuContext;
use vkskin::render::headless::HeadlessRequest;
use vkskin::render::renderer::{RenderSettings, Renderer};
use vkskin::render::skin_pass::CharacterId;
use vkskin::render::{DqsSplit, InfluenceBlend, SkinningPlacement};

fn twist_model() -> Arc<Model> {
    Arc::new(twist_cylinder().expect("the twist cylinder imports"))
}

/// The twist cylinder's only primitive skinned on the CPU with `method`,
/// its second joint turned by `degrees`.
fn twisted(model: &Model, method: SkinningMethod, degrees: f32) -> Vec<[f32; 3]> {
    let clip = model.find_clip(TWIST_CLIP).expect("Twist clip");
    let character = character_at(model, Some(clip), twist_time(degrees));
    let instance = &model.instances[0];
    let prim = &model.meshes[instance.mesh].primitives[0];
    let mut positions = vec![[0.0; 3]; prim.vertex_count()];
    character.pose().skin_primitive_with(method, instance, prim, &mut positions, None, None).expect("skins");
    positions
}

/// Area of ring `ring`'s polygon projected onto the plane perpendicular to
/// the tube's axis (y): the shoelace formula over (z, x), which is
/// counter-clockwise for the rest ring.
fn ring_area(positions: &[[f32; 3]], ring: usize) -> f32 {
    let ring = &positions[ring_vertices(ring)];
    let mut twice = 0.0f64;
    for (i, a) in ring.iter().enumerate() {
        let b = ring[(i + 1) % ring.len()];
        twice += f64::from(a[2]) * f64::from(b[0]) - f64::from(b[2]) * f64::from(a[0]);
    }
    (twice * 0.5).abs() as f32
}

#[test]
fn dual_quaternions_keep_the_twisted_middle_ring() {
    let model = twist_model();
    let rest = ring_area(&twisted(&model, SkinningMethod::Linear, 0.0), MIDDLE_RING);
    // The rest ring is the regular SEGMENTS-gon of the tube's radius.
    let n = SEGMENTS as f32;
    let polygon = 0.5 * n * RADIUS * RADIUS * (std::f32::consts::TAU / n).sin();
    assert!((rest - polygon).abs() < 1e-5 * polygon, "rest area {rest} vs {polygon}");
    let mut report = Vec::new();
    for degrees in [90.0, 180.0] {
        let lbs = ring_area(&twisted(&model, SkinningMethod::Linear, degrees), MIDDLE_RING) / rest;
        let dqs = ring_area(&twisted(&model, SkinningMethod::DualQuaternion, degrees), MIDDLE_RING) / rest;
        report.push(format!("{degrees} degrees: LBS {lbs:.4}, DQS {dqs:.4} of the rest area"));
        // LBS at half weight scales the ring by cos(angle / 2) in both
        // directions: area cos^2(angle / 2), 0.5 at 90 degrees, 0 at 180.
        let expected = (degrees.to_radians() * 0.5).cos().powi(2);
        assert!((lbs - expected).abs() < 1e-3, "{degrees}: LBS {lbs} vs cos^2 {expected}");
        assert!((dqs - 1.0).abs() < 0.1, "{degrees}: DQS keeps the area: {dqs}");
    }
    eprintln!("middle-ring cross-section: {}", report.join("; "));
    // The criterion at 180 degrees: LBS loses more than half.
    let lbs = ring_area(&twisted(&model, SkinningMethod::Linear, 180.0), MIDDLE_RING) / rest;
    assert!(lbs < 0.5, "LBS keeps {lbs}");
}

#[test]
fn twist_clip_turns_the_top_and_leaves_the_bottom() {
    let model = twist_model();
    let top = ring_vertices(vkskin::asset::twist_cylinder::RINGS - 1);
    for method in SkinningMethod::ALL {
        let rest = twisted(&model, method, 0.0);
        let half = twisted(&model, method, 180.0);
        // The bottom ring follows the root only; the top ring is turned
        // 180 degrees about y: (x, z) -> (-x, -z).
        for v in ring_vertices(0) {
            assert!(dist(rest[v], half[v]) < 1e-5, "{method:?}: bottom vertex {v} moved");
        }
        for v in top.clone() {
            let turned = [-rest[v][0], rest[v][1], -rest[v][2]];
            assert!(dist(turned, half[v]) < 1e-5, "{method:?}: top vertex {v}: {:?}", half[v]);
        }
    }
}

fn dist(a: [f32; 3], b: [f32; 3]) -> f32 {
    (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f32>().sqrt()
}

/// DQS with the matrices split on the CPU (the palette holds dual quaternions).
const DQS_CPU_SPLIT: InfluenceBlend =
    InfluenceBlend { method: SkinningMethod::DualQuaternion, dqs_split: DqsSplit::Cpu };

/// Skins `model` at each `(clip, time)` (no clip: the rest pose) with a
/// compute pass built for `shading` and compares every frame with the CPU
/// reference of its method (which splits nothing ahead: the same answer
/// whichever side splits the matrices).
fn compute_matches_cpu(
    ctx: &GpuContext,
    model: &Arc<Model>,
    shading: impl Into<InfluenceBlend>,
    frames: &[(Option<usize>, f64)],
) {
    let shading: InfluenceBlend = shading.into();
    let method = shading.method;
    let mut settings = RenderSettings::sized(W, H);
    settings.frame.blend = shading;
    let mut renderer = Renderer::new(ctx, model.clone(), settings).unwrap();
    let pass = renderer.skin_pass();
    assert_eq!((pass.method(), pass.shading()), (method, shading));
    let id = CharacterId(0);
    let mut worst = (0.0f32, 0.0f32);
    for (version, &(clip, time)) in frames.iter().enumerate() {
        let character = character_at(model, clip, time);
        let inputs = [SkinInput { pose: character.pose(), version: version as u64 }];
        let out = renderer.read_skinned(ctx, &inputs).unwrap();
        let label = format!("{} clip {clip:?} t={time}", model.file);
        let (p, n) = compare_with(method, renderer.skin_pass(), id, &character.pose(), &out, &label);
        worst = (worst.0.max(p), worst.1.max(n));
    }
    eprintln!(
        "{} {} compute: largest position error {:.2e} of the diagonal, normal error {:.2e}",
        model.file,
        shading.name(),
        worst.0,
        worst.1
    );
    renderer.destroy(ctx);
    assert_no_validation_messages(ctx);
}

#[test]
fn compute_dqs_matches_cpu_on_the_twist_cylinder() {
    let Some(ctx) = context() else { return };
    let model = twist_model();
    let clip = model.find_clip(TWIST_CLIP).unwrap();
    let frames: Vec<(Option<usize>, f64)> =
        [0.0, 45.0, 90.0, 135.0, 180.0, 270.0, 350.0].iter().map(|&d| (Some(clip), twist_time(d))).collect();
    compute_matches_cpu(&ctx, &model, SkinningMethod::DualQuaternion, &frames);
    compute_matches_cpu(&ctx, &model, DQS_CPU_SPLIT, &frames);
    // The LBS pipeline of the same pass type still matches LBS, except at
    // 180 degrees: there the middle ring collapses (the candy wrapper) and
    // its blended normal is undefined (a zero vector normalised), so the
    // unorm16 weights' last bit decides its direction.
    let lbs: Vec<_> = frames.iter().copied().filter(|&(_, t)| t != twist_time(180.0)).collect();
    compute_matches_cpu(&ctx, &model, SkinningMethod::Linear, &lbs);
}

/// Every shared model (skinned or not, morphs, several skins, non-normalised
/// weights, scaled joints): the rest pose and up to three clips at two times.
#[test]
fn compute_dqs_matches_cpu_on_shared_models() {
    let (Some(assets), Some(ctx)) = (shared_assets("the shared-model DQS comparison"), context()) else {
        return;
    };
    let files = find_models(&assets);
    assert!(!files.is_empty(), "no .glb/.gltf under {}", assets.display());
    for file in files {
        let model =
            Arc::new(vkskin::asset::load(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display())));
        let mut frames = vec![(None, 0.0)];
        for c in 0..model.clips.len().min(3) {
            let d = f64::from(model.clips[c].duration);
            frames.extend([(Some(c), 0.31 * d), (Some(c), 0.77 * d)]);
        }
        compute_matches_cpu(&ctx, &model, SkinningMethod::DualQuaternion, &frames);
        compute_matches_cpu(&ctx, &model, DQS_CPU_SPLIT, &frames);
    }
}

const W: u32 = 160;
const H: u32 = 120;

/// One frame of `clip` at `time`, rendered headless.
fn render(
    ctx: &GpuContext,
    model: &Arc<Model>,
    clip: usize,
    time: f64,
    vertex_skinning: bool,
    skinning: impl Into<InfluenceBlend>,
) -> Vec<u8> {
    let skinning: InfluenceBlend = skinning.into();
    let mut settings = RenderSettings::sized(W, H);
    settings.frame.placement =
        if vertex_skinning { SkinningPlacement::Vertex } else { SkinningPlacement::Compute };
    settings.frame.blend = skinning;
    let request = HeadlessRequest { frames: 1, first_frame: 0, settings };
    render_clip(ctx, model, clip, time, 30.0, &request).remove(0)
}

/// The vertex shader's DQS draws what the compute pass's DQS draws (which
/// matches the CPU reference above); on the twisted cylinder both differ
/// clearly from LBS, so the specialization constant reaches the vertex
/// shader.
#[test]
fn vertex_dqs_draws_what_compute_dqs_draws() {
    let Some(ctx) = context() else { return };
    let twist = twist_model();
    let twist_clip = twist.find_clip(TWIST_CLIP).unwrap();
    let dqs = SkinningMethod::DualQuaternion;
    let compute = mask(&render(&ctx, &twist, twist_clip, twist_time(180.0), false, dqs));
    let vertex = mask(&render(&ctx, &twist, twist_clip, twist_time(180.0), true, dqs));
    let vertex_lbs = mask(&render(&ctx, &twist, twist_clip, twist_time(180.0), true, SkinningMethod::Linear));
    let compute_lbs =
        mask(&render(&ctx, &twist, twist_clip, twist_time(180.0), false, SkinningMethod::Linear));
    let covered = compute.iter().filter(|&&x| x).count();
    assert!(covered > (W * H / 50) as usize, "cylinder drawn: {covered} pixels");
    let same = differing(&compute, &vertex);
    assert!(same <= (W * H / 500) as usize, "vertex and compute DQS differ in {same} pixels");
    // The palette of dual quaternions split on the CPU: the same shape on both paths.
    for vertex_skinning in [false, true] {
        let split =
            mask(&render(&ctx, &twist, twist_clip, twist_time(180.0), vertex_skinning, DQS_CPU_SPLIT));
        let changed = differing(&compute, &split);
        assert!(
            changed <= (W * H / 500) as usize,
            "DQS split on the CPU (vertex skinning {vertex_skinning}) differs in {changed} pixels"
        );
    }
    // The candy wrapper: LBS pinches the middle, on both paths alike.
    let pinched = differing(&vertex, &vertex_lbs);
    assert!(pinched > 100, "vertex DQS and LBS differ in only {pinched} pixels");
    assert!(differing(&compute_lbs, &vertex_lbs) <= (W * H / 500) as usize);
    let Some(model) = shared_model("CesiumMan/CesiumMan.glb") else { return };
    let a = mask(&render(&ctx, &model, 0, 0.7, false, dqs));
    let b = mask(&render(&ctx, &model, 0, 0.7, true, dqs));
    let changed = differing(&a, &b);
    assert!(changed <= (W * H / 500) as usize, "CesiumMan: masks differ in {changed} pixels");
    let c = mask(&render(&ctx, &model, 0, 0.7, true, DQS_CPU_SPLIT));
    let changed = differing(&a, &c);
    assert!(changed <= (W * H / 500) as usize, "CesiumMan, CPU split: masks differ in {changed} pixels");
}

/// On real rigs, DQS is LBS where a vertex follows one joint. (Elsewhere
/// they may differ a lot: girl.glb has vertices split three ways between
/// joints whose rotations differ widely, where DQS lands 12 % of the
/// part's size away from LBS.)
#[test]
fn dqs_agrees_with_lbs_where_it_should() {
    let Some(assets) = shared_assets("the DQS/LBS comparison") else { return };
    let mut checked = 0;
    for file in find_models(&assets) {
        let model = vkskin::asset::load(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for clip in 0..model.clips.len().min(3) {
            let character = character_at(&model, Some(clip), f64::from(0.43 * model.clips[clip].duration));
            let pose = character.pose();
            for instance in &model.instances {
                for prim in &model.meshes[instance.mesh].primitives {
                    let Some(inf) = &prim.influences else { continue };
                    let n = prim.vertex_count();
                    let (mut lbs, mut dqs) = (vec![[0.0f32; 3]; n], vec![[0.0f32; 3]; n]);
                    pose.skin_primitive_with(SkinningMethod::Linear, instance, prim, &mut lbs, None, None)
                        .unwrap();
                    pose.skin_primitive_with(
                        SkinningMethod::DualQuaternion,
                        instance,
                        prim,
                        &mut dqs,
                        None,
                        None,
                    )
                    .unwrap();
                    let diagonal = bounding_diagonal(&lbs).max(1e-6);
                    let label = format!("{} clip {clip}", file.display());
                    for v in 0..n {
                        let w = &inf.weights[v * inf.per_vertex..(v + 1) * inf.per_vertex];
                        let d = dist(lbs[v], dqs[v]) / diagonal;
                        if w.iter().any(|&w| w >= 0.9999) {
                            assert!(d < 1e-4, "{label}: single-joint vertex {v} differs by {d:.2e}");
                            checked += 1;
                        }
                        assert!(d.is_finite(), "{label}: vertex {v}: not finite");
                    }
                }
            }
        }
    }
    assert!(checked > 1000, "only {checked} single-joint vertices checked");
}
