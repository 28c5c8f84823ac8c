//! How skin.comp reads the palette, on a real Vulkan device (lavapipe
//! without a GPU) with the Khronos validation layer and synchronization
//! validation on: as texels or from a storage buffer, the matrix
//! convention pinned, and palettes past one binding's range. Every test
//! fails on any validation message.
//!
//! Without a Vulkan device or the validation layer the tests print why and
//! pass, unless VKSKIN_NO_SKIP is set (CI), where they fail.

use crate::common::{assert_no_validation_messages, context};
use crate::render_skinning::{Rig, compare};
use crate::synthetic_models::{Synthetic, pose_synthetic, skeleton, synthetic_model, wide_model};
use nalgebra::Matrix4;
use std::sync::Arc;
use vkskin::anim::Rig as CharacterRig;
use vkskin::anim::SkinInput;
use vkskin::anim::{BoneMatrix, Influences, MeshPrimitive, Skin, SkinnedPose, SkinningMethod};
use vkskin::asset::{Mesh, MeshInstance, Model};
use vkskin::render::PaletteUpload;
use vkskin::render::layout::SkinnedVertex;
use vkskin::render::skin_pass::{CharacterId, PaletteReads, SkinPass};

/// The two ways skin.comp can read the palette (a uniform texel buffer, or a
/// storage buffer on devices with a small texel limit) skin the synthetic
/// characters (8 influences, sparse morphs, shared and concatenated streams)
/// to the same bits, in place and staged, and both match the CPU reference.
#[test]
fn texel_and_storage_palette_reads_skin_the_same() {
    let Some(ctx) = context() else { return };
    // lavapipe's texel limit holds any palette its storage range can.
    assert_eq!(PaletteReads::for_device(&ctx.properties.limits), PaletteReads::Texels);
    let a = Arc::new(synthetic_model(0.0));
    let b = Arc::new(synthetic_model(0.5));
    let models = [&a, &a, &b];
    let mut outputs = Vec::new();
    for reads in [PaletteReads::Texels, PaletteReads::Storage] {
        for upload in [PaletteUpload::InPlace, PaletteUpload::Staged] {
            let pass = SkinPass::with_palette_reads(&ctx, SkinningMethod::Linear, reads).unwrap();
            assert_eq!(pass.palette_reads(), reads);
            let mut rig = Rig::with_pass(&ctx, pass);
            rig.pass.set_upload_mode(upload);
            let ids = [rig.add(&ctx, &a, true), rig.add(&ctx, &a, false), rig.add(&ctx, &b, true)];
            let mut evaluators: Vec<Synthetic> = models.iter().map(|m| Synthetic::new(m)).collect();
            let mut frames = Vec::new();
            for frame in [0u32, 11] {
                for (i, (m, e)) in models.iter().zip(&mut evaluators).enumerate() {
                    pose_synthetic(m, e, frame + 3 * i as u32);
                }
                let inputs: Vec<SkinInput> =
                    evaluators.iter().map(|e| SkinInput { pose: e.view(), version: frame as u64 }).collect();
                let out = rig.skin(&ctx, &inputs);
                for (id, e) in ids.iter().zip(&evaluators) {
                    compare(&rig.pass, *id, &e.view(), &out, &format!("{reads:?} {upload:?} frame {frame}"));
                }
                frames.push(bytemuck::cast_slice::<SkinnedVertex, u8>(&out).to_vec());
            }
            rig.destroy(&ctx);
            outputs.push(((reads, upload), frames));
        }
    }
    for (way, frames) in &outputs[1..] {
        assert!(frames == &outputs[0].1, "{way:?} skins differently from {:?}", outputs[0].0);
    }
    assert_no_validation_messages(&ctx);
}

/// The matrix convention, pinned: a known non-symmetric matrix with a
/// translation moves a known vertex to the same point on the CPU
/// (`BoneMatrix::to_matrix() * p`) and in the compute shader, skinned
/// (one joint, weight 1) and rigid.
#[test]
fn palette_layout_is_pinned() {
    let Some(ctx) = context() else { return };
    #[rustfmt::skip]
    let m = Matrix4::new(
        0.0, -2.0, 0.5, 10.0,
        1.0,  0.0, 0.0, 20.0,
        0.0,  0.3, 3.0, 30.0,
        0.0,  0.0, 0.0,  1.0,
    );
    let p = [1.0f32, 2.0, 3.0];
    let bone = BoneMatrix::from_matrix(&m);
    let expected = bone.to_matrix() * nalgebra::Vector4::new(p[0], p[1], p[2], 1.0);
    // By hand: row i of m times (1, 2, 3, 1).
    assert_eq!([expected.x, expected.y, expected.z], [7.5, 21.0, 39.6]);
    let prim = |skinned: bool| MeshPrimitive {
        positions: vec![p],
        normals: Some(vec![[0.0, 0.0, 1.0]]),
        influences: skinned.then(|| Influences {
            per_vertex: 4,
            joints: vec![0, 0, 0, 0],
            weights: vec![1.0, 0.0, 0.0, 0.0],
        }),
        indices: vec![0, 0, 0],
        ..Default::default()
    };
    let mesh = |p: MeshPrimitive| {
        Arc::new(Mesh {
            name: String::new(),
            primitives: vec![p],
            primitive_indices: vec![0],
            target_names: Vec::new(),
            target_count: 0,
        })
    };
    let rig = CharacterRig::new(
        Arc::new(skeleton(1)),
        vec![Skin { name: String::new(), joints: vec![1], inverse_binds: vec![Matrix4::identity()] }],
        vec![mesh(prim(true)), mesh(prim(false))],
        vec![
            MeshInstance { node: 0, joint: 0, mesh: 0, skin: Some(0), morph_offset: 0, morph_count: 0 },
            MeshInstance { node: 1, joint: 1, mesh: 1, skin: None, morph_offset: 0, morph_count: 0 },
        ],
        Vec::new(),
        Vec::new(),
    )
    .expect("pinned rig");
    let model = Arc::new(Model {
        file: "pinned".into(),
        rig: Arc::new(rig),
        node_of_joint: vec![0, 1],
        joint_of_node: vec![0, 1],
        materials: Vec::new(),
        warnings: Vec::new(),
        load_options: Default::default(),
        memory_used: 0,
    });
    let mut rig = Rig::new(&ctx);
    let id = rig.add(&ctx, &model, true);
    let palette = [bone];
    let world = [Matrix4::identity(), m];
    let pose = SkinnedPose {
        palettes: &palette,
        palette_ranges: &[[0, 1]],
        world: &world,
        world_joints: None,
        morph_weights: &[],
    };
    let out = rig.skin(&ctx, &[SkinInput { pose, version: 1 }]);
    for (o, what) in rig.pass.outputs(id).iter().zip(["skinned", "rigid"]) {
        let v = out[o.output_offset as usize].position;
        for k in 0..3 {
            assert!((v[k] - expected[k]).abs() < 1e-5, "{what}: GPU {v:?}, CPU {expected:?}");
        }
        assert_eq!(v[3], 1.0);
    }
    rig.destroy(&ctx);
    assert_no_validation_messages(&ctx);
}

/// Palettes larger than a storage binding may be (`maxStorageBufferRange`,
/// 128 MiB on lavapipe: about 520 characters of 4,096 joints) are not capped
/// by it: read as texels (skin.comp) or by pointer (skin_storage.comp, as
/// the vertex path reads them), the characters whose palettes lie past the
/// range skin as the CPU reference does.
#[test]
fn palettes_past_the_storage_binding_range_skin_right() {
    let Some(ctx) = context() else { return };
    let joints = 4096;
    let model = Arc::new(wide_model(joints));
    let per = joints as u64 * std::mem::size_of::<BoneMatrix>() as u64;
    let range = u64::from(ctx.properties.limits.max_storage_buffer_range);
    // The last two characters' palettes start past the range.
    let count = (range / per + 3) as usize;
    if count > 2_000 {
        eprintln!("not applicable: a binding here holds {} characters' palettes", range / per);
        return;
    }
    let mut evaluators: Vec<Synthetic> = (0..count).map(|_| Synthetic::new(&model)).collect();
    for (i, e) in evaluators.iter_mut().enumerate() {
        pose_synthetic(&model, e, i as u32);
    }
    let inputs: Vec<SkinInput> =
        evaluators.iter().map(|e| SkinInput { pose: e.view(), version: 1 }).collect();
    for reads in [PaletteReads::Texels, PaletteReads::Storage] {
        let pass = SkinPass::with_palette_reads(&ctx, SkinningMethod::Linear, reads).unwrap();
        let mut rig = Rig::with_pass(&ctx, pass);
        let ids: Vec<CharacterId> = (0..count).map(|i| rig.add(&ctx, &model, i == 0)).collect();
        assert!(rig.pass.layout().slot_sizes().palette > range, "{reads:?}: the palettes fit one binding");
        let out = rig.skin(&ctx, &inputs);
        for c in [0, count - 2, count - 1] {
            let first = rig.pass.layout().characters()[c].palette_range.0;
            assert_eq!(c > 0, u64::from(first) * per / joints as u64 > range, "character {c}");
            compare(&rig.pass, ids[c], &evaluators[c].view(), &out, &format!("{reads:?} character {c}"));
        }
        rig.destroy(&ctx);
    }
    assert_no_validation_messages(&ctx);
}
