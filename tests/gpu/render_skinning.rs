//! Compute skinning on a real Vulkan device (lavapipe without a GPU), with the
//! Khronos validation layer and synchronization validation on: every test
//! fails on any validation message.
//!
//! Without a Vulkan device or the validation layer the tests print why and
//! pass, unless VKSKIN_NO_SKIP is set (CI), where they fail.

use crate::common::skin_pass::skin_and_read_back;
use crate::common::{
    assert_no_validation_messages, bounding_diagonal, character_at, context, find_models, shared_assets,
    shared_file,
};
use crate::synthetic_models::{Synthetic, pose_synthetic, synthetic_model};
use ash::vk;
use std::sync::Arc;
use vkskin::anim::SkinInput;
use vkskin::anim::{SkinnedPose, SkinningMethod};
use vkskin::asset::Model;
use vkskin::gpu::{FrameRing, GpuContext};
use vkskin::render::gpu_model::GpuModel;
use vkskin::render::layout::{SkinnedVertex, as_stored};
use vkskin::render::readback::Readback;
use vkskin::render::skin_levels::SkinLevels;
use vkskin::render::skin_pass::{CharacterId, NO_RECORD, PaletteReads, SkinPass, SkinStats};
use vkskin::render::{DqsSplit, InfluenceBlend, PaletteUpload};

/// Counts heap allocations made on this thread while `COUNTING` is set, to
/// prove that `SkinPass::record` allocates nothing per frame.
struct CountingAllocator;

thread_local! {
    static COUNTING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static ALLOCATIONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counters are const-initialised
// thread locals, which never allocate.
unsafe impl std::alloc::GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if COUNTING.with(|c| c.get()) {
            ALLOCATIONS.with(|a| a.set(a.get() + 1));
        }
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: ptr came from System.alloc with this layout.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Heap allocations `f` makes on this thread.
fn allocations_in<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = ALLOCATIONS.with(|a| a.get());
    COUNTING.with(|c| c.set(true));
    let result = f();
    COUNTING.with(|c| c.set(false));
    (result, ALLOCATIONS.with(|a| a.get()) - before)
}

/// Positions must agree within this fraction of the bounding-box diagonal.
/// The CPU reference skins the primitive as the GPU stores it
/// (`layout::as_stored`), so only the arithmetic differs: lavapipe gives
/// the same bits with linear blend skinning (4.2e-7 with dual quaternions),
/// a GPU that fuses multiplies and adds a few ulps.
const POSITION_TOLERANCE: f32 = 1e-5;
/// Unit normals and tangents must agree within this (absolute). The GPU
/// stores them as octahedral snorm16 (`layout::PackedVertex`): up to about
/// 5.4e-5 per component on the shared models. Rounding in the cofactor of
/// a blend of joints turned far apart (near singular, as at the synthetic
/// poses from frame 40) is magnified about a hundredfold, and stays
/// within it on lavapipe.
const NORMAL_TOLERANCE: f32 = 1e-4;

/// Everything one test creates on the device, destroyed in order at the end.
pub(crate) struct Rig {
    ring: FrameRing,
    pub(crate) pass: SkinPass,
    readback: Readback,
    models: Vec<Arc<GpuModel>>,
}

impl Rig {
    pub(crate) fn new(ctx: &GpuContext) -> Rig {
        Rig::with_pass(ctx, SkinPass::new(ctx).unwrap())
    }

    pub(crate) fn with_pass(ctx: &GpuContext, pass: SkinPass) -> Rig {
        Rig {
            ring: FrameRing::new(ctx).unwrap(),
            pass,
            readback: Readback::new(ctx, 16).unwrap(),
            models: Vec::new(),
        }
    }

    /// Uploads `model` (once per distinct model) and registers a character.
    pub(crate) fn add(&mut self, ctx: &GpuContext, model: &Arc<Model>, upload: bool) -> CharacterId {
        if upload || self.models.is_empty() {
            self.models.push(Arc::new(GpuModel::upload(ctx, model).unwrap()));
        }
        let gpu = self.models.last().unwrap().clone();
        self.pass.add_character(ctx, &mut self.ring, gpu, model.clone()).unwrap()
    }

    pub(crate) fn skin(&mut self, ctx: &GpuContext, inputs: &[SkinInput]) -> Vec<SkinnedVertex> {
        self.skin_at(ctx, inputs, None).0
    }

    /// `skin` at detail `levels` (`SkinPass::record`), with the frame's stats.
    pub(crate) fn skin_at(
        &mut self,
        ctx: &GpuContext,
        inputs: &[SkinInput],
        levels: Option<SkinLevels>,
    ) -> (Vec<SkinnedVertex>, SkinStats) {
        skin_and_read_back(ctx, &mut self.ring, &mut self.pass, inputs, levels, &mut self.readback).unwrap()
    }

    pub(crate) fn destroy(mut self, ctx: &GpuContext) {
        self.ring.wait_all(ctx).unwrap();
        self.readback.buffer.destroy(ctx);
        self.pass.destroy(ctx);
        for m in self.models {
            Arc::into_inner(m).expect("only the test holds the model").destroy(ctx);
        }
        self.ring.destroy(ctx);
    }
}

/// Largest position error relative to the bounding-box diagonal, and largest
/// direction error (normals and tangents), of every primitive of
/// `character` against the CPU reference; tangents keep their handedness.
pub(crate) fn compare(
    pass: &SkinPass,
    character: CharacterId,
    pose: &SkinnedPose,
    out: &[SkinnedVertex],
    label: &str,
) -> (f32, f32) {
    compare_with(SkinningMethod::Linear, pass, character, pose, out, label)
}

/// [`compare`] against the CPU reference skinned with `method`.
pub(crate) fn compare_with(
    method: SkinningMethod,
    pass: &SkinPass,
    character: CharacterId,
    pose: &SkinnedPose,
    out: &[SkinnedVertex],
    label: &str,
) -> (f32, f32) {
    let model = pass.model(character).clone();
    let gpu = pass.gpu_model(character).clone();
    // Every primitive every instance draws has one output range, as long
    // as the primitive: a dropped or short primitive fails here.
    let drawn: usize = model.instances.iter().map(|i| model.meshes[i.mesh].primitives.len()).sum();
    assert_eq!(pass.outputs(character).len(), drawn, "{label}: primitives skinned");
    let mut cpu_positions = Vec::new();
    let mut cpu_normals = Vec::new();
    let mut cpu_tangents = Vec::new();
    for o in pass.outputs(character) {
        let instance = &model.instances[o.instance];
        let prim_info = &gpu.primitives[o.gpu_primitive];
        // Skinned as the GPU stores it, so the bound below is on the GPU's
        // arithmetic alone (the storage's own error has its tests in layout).
        let prim = &as_stored(&model.meshes[instance.mesh].primitives[prim_info.primitive]);
        let n = prim.vertex_count();
        assert_eq!(o.vertex_count as usize, n, "{label}: instance {} output length", o.instance);
        let mut pos = vec![[0.0f32; 3]; n];
        let mut nrm = prim.normals.as_ref().map(|_| vec![[0.0f32; 3]; n]);
        let mut tan = prim.tangents.as_ref().map(|_| vec![[0.0f32; 4]; n]);
        pose.skin_primitive_with(method, instance, prim, &mut pos, nrm.as_deref_mut(), tan.as_deref_mut())
            .unwrap_or_else(|e| panic!("{label}: CPU skinning: {e}"));
        cpu_positions.push(pos);
        cpu_normals.push(nrm);
        cpu_tangents.push(tan);
    }
    // Without vertices nothing is compared; the scale is then moot.
    let diagonal = bounding_diagonal(cpu_positions.iter().flatten()).max(1e-6);
    let (mut position_err, mut normal_err) = (0.0f32, 0.0f32);
    // The largest difference of the first three components.
    let apart = |a: &[f32], b: &[f32]| (0..3).map(|k| (a[k] - b[k]).abs()).fold(0.0, f32::max);
    let cpu = cpu_positions.iter().zip(&cpu_normals).zip(&cpu_tangents);
    for (o, ((pos, nrm), tan)) in pass.outputs(character).iter().zip(cpu) {
        let end = o.output_offset as usize + o.vertex_count as usize;
        assert!(end <= out.len(), "{label}: output range {end} past the {} vertices read back", out.len());
        let gpu_vertices = &out[o.output_offset as usize..end];
        for (v, (g, c)) in gpu_vertices.iter().zip(pos).enumerate() {
            let d = apart(&g.position, c) / diagonal;
            assert!(d.is_finite(), "{label}: instance {} vertex {v}: non-finite", o.instance);
            position_err = position_err.max(d);
            if let Some(nrm) = nrm {
                normal_err = normal_err.max(apart(&g.normal, &nrm[v]));
            }
            if let Some(tan) = tan {
                normal_err = normal_err.max(apart(&g.tangent, &tan[v]));
                assert_eq!(
                    g.tangent[3], tan[v][3],
                    "{label}: instance {} vertex {v}: handedness",
                    o.instance
                );
            }
        }
    }
    assert!(
        position_err <= POSITION_TOLERANCE && normal_err <= NORMAL_TOLERANCE,
        "{label}: GPU {method:?} differs from the CPU reference: position {position_err:.2e} of the diagonal, \
         normal or tangent {normal_err:.2e}"
    );
    (position_err, normal_err)
}

#[test]
fn gpu_skinning_matches_cpu_on_every_shared_model() {
    let Some(assets) = shared_assets("the shared-model GPU comparison") else { return };
    let Some(ctx) = context() else { return };
    let files = find_models(&assets);
    assert!(!files.is_empty(), "no .glb/.gltf under {}", assets.display());
    let mut rig = Rig::new(&ctx);
    // Every model is one character of ONE pass: each frame skins them all in
    // one dispatch, over the concatenated streams of all models.
    let mut characters = Vec::new();
    for file in &files {
        let model = match vkskin::asset::load(file) {
            Ok(m) => Arc::new(m),
            Err(e) => panic!("{}: {e}", file.display()),
        };
        let id = rig.add(&ctx, &model, true);
        characters.push((file.clone(), model.clone(), character_at(&model, None, 0.0), id));
    }
    let fractions = [0.0f32, 0.37, 0.81, 0.5, 0.93];
    let mut worst = (0.0f32, 0.0f32);
    for (step, fraction) in fractions.iter().enumerate() {
        let mut labels = Vec::new();
        for (file, model, character, _) in &mut characters {
            let label = if model.clips.is_empty() || step == 0 {
                *character = character_at(model, None, 0.0);
                format!("{} rest pose", file.display())
            } else {
                // Several clips, several times: clip by step, time across its keys.
                let clip = step % model.clips.len();
                let time = fraction * model.clips[clip].duration;
                *character = character_at(model, Some(clip), f64::from(time));
                format!("{} clip {clip} t={time}", file.display())
            };
            labels.push(label);
        }
        let inputs: Vec<SkinInput> = characters
            .iter()
            .map(|(_, _, c, _)| SkinInput { pose: c.pose(), version: step as u64 })
            .collect();
        let out = rig.skin(&ctx, &inputs);
        for ((_, _, character, id), label) in characters.iter().zip(&labels) {
            let (p, n) = compare(&rig.pass, *id, &character.pose(), &out, label);
            worst = (worst.0.max(p), worst.1.max(n));
        }
    }
    eprintln!(
        "{} models, {} vertices per frame: largest position error {:.2e} of the diagonal, normal error {:.2e}",
        files.len(),
        rig.pass.total_vertices(),
        worst.0,
        worst.1
    );
    rig.destroy(&ctx);
    assert_no_validation_messages(&ctx);
}

#[test]
fn eight_influences_and_sparse_morphs_match_cpu() {
    let Some(ctx) = context() else { return };
    let mut rig = Rig::new(&ctx);
    let a = Arc::new(synthetic_model(0.0));
    let b = Arc::new(synthetic_model(0.5));
    // Two instances of one model and one of another: shared and concatenated streams.
    let ids = [rig.add(&ctx, &a, true), rig.add(&ctx, &a, false), rig.add(&ctx, &b, true)];
    let models = [&a, &a, &b];
    assert_eq!(rig.pass.gpu_model(ids[0]).primitives[0].influence_sets, 2, "8 influences are two sets");
    let mut evaluators: Vec<Synthetic> = models.iter().map(|m| Synthetic::new(m)).collect();
    // Frames 47 and 50 blend joints turned far apart: near-singular
    // matrices whose normals magnify any difference in storage or order.
    for frame in [0u32, 7, 19, 47, 50] {
        for (i, (m, e)) in models.iter().zip(&mut evaluators).enumerate() {
            pose_synthetic(m, e, frame + 3 * i as u32);
        }
        let inputs: Vec<SkinInput> =
            evaluators.iter().map(|e| SkinInput { pose: e.view(), version: frame as u64 }).collect();
        let out = rig.skin(&ctx, &inputs);
        for (i, (id, e)) in ids.iter().zip(&evaluators).enumerate() {
            compare(&rig.pass, *id, &e.view(), &out, &format!("synthetic character {i} frame {frame}"));
        }
    }
    rig.destroy(&ctx);
    assert_no_validation_messages(&ctx);
}

/// 1,000 frames, two in flight, three characters (two models): the pose
/// changes every frame except during pauses, where no palette is uploaded
/// (the slots share the device palette, which holds the paused pose) and
/// no morph weight once both slots hold the paused pose. No memory growth, no validation message,
/// and the last frame still matches the CPU.
#[test]
fn thousand_frames_without_growth_or_hazards() {
    let Some(ctx) = context() else { return };
    let mut rig = Rig::new(&ctx);
    let a = Arc::new(synthetic_model(0.0));
    let b = Arc::new(synthetic_model(0.25));
    let ids = [rig.add(&ctx, &a, true), rig.add(&ctx, &a, false), rig.add(&ctx, &b, true)];
    let models = [&a, &a, &b];
    let mut evaluators: Vec<Synthetic> = models.iter().map(|m| Synthetic::new(m)).collect();
    let mut bytes_after_10 = 0;
    let mut paused_frames = 0;
    // Reused every frame: the loop itself allocates nothing per frame.
    let mut versions = [0u64; 3];
    for frame in 1..=1000u32 {
        // Frames with frame % 10 in 5..=8 keep the pose of the frame before.
        let paused = (5..=8).contains(&(frame % 10));
        if !paused {
            for (i, (m, e)) in models.iter().zip(&mut evaluators).enumerate() {
                pose_synthetic(m, e, frame + i as u32);
                versions[i] = frame as u64;
            }
        }
        let inputs = [
            SkinInput { pose: evaluators[0].view(), version: versions[0] },
            SkinInput { pose: evaluators[1].view(), version: versions[1] },
            SkinInput { pose: evaluators[2].view(), version: versions[2] },
        ];
        let slot = rig.ring.begin_frame(&ctx).unwrap();
        let (stats, allocations) =
            allocations_in(|| rig.pass.record(&ctx, slot, &inputs, None, true).unwrap());
        rig.ring.end_frame(&ctx, &[], &[]).unwrap();
        // The first frame makes the output it skins into (sized by the
        // frames, not the layout); no later one allocates.
        if frame > 1 {
            assert_eq!(allocations, 0, "frame {frame}: SkinPass::record allocated on the heap");
        }
        // A dispatch per run: the two characters of model a, the one of b.
        assert_eq!(stats.dispatches, 2);
        assert_eq!(stats.vertices, rig.pass.total_vertices() as u64);
        // The first paused frame still writes the weights of the slot that
        // missed the last change, but no palette: the device palette holds
        // it. From the second on, both slots hold the paused pose.
        if paused && frame % 10 >= 6 {
            assert_eq!((stats.palette_bytes_written, stats.weight_bytes_written), (0, 0), "frame {frame}");
            paused_frames += 1;
        } else if paused {
            assert!(stats.palette_bytes_written == 0 && stats.weight_bytes_written > 0, "frame {frame}");
        } else {
            assert!(stats.palette_bytes_written > 0 && stats.weight_bytes_written > 0, "frame {frame}");
        }
        if frame == 10 {
            bytes_after_10 = ctx.allocated_bytes();
        }
    }
    assert_eq!(ctx.allocated_bytes(), bytes_after_10, "GPU memory grew between frame 10 and 1000");
    assert!(paused_frames > 0);
    // The result is still right after a thousand frames.
    let inputs: Vec<SkinInput> =
        evaluators.iter().zip(versions).map(|(e, v)| SkinInput { pose: e.view(), version: v }).collect();
    let out = rig.skin(&ctx, &inputs);
    for (i, (id, e)) in ids.iter().zip(&evaluators).enumerate() {
        compare(&rig.pass, *id, &e.view(), &out, &format!("character {i} after 1000 frames"));
    }
    rig.destroy(&ctx);
    assert_no_validation_messages(&ctx);
}

/// The frame slots share the device palette: a pose is uploaded once,
/// whichever slot draws it first, so a character whose pose changes every
/// 2nd or 3rd frame uploads on those frames alone (with a palette per slot
/// it was uploaded whenever a slot came round after a change). Two frames
/// in flight, no wait between them; every frame then skins as the CPU
/// does.
#[test]
fn a_pose_is_uploaded_once_whichever_slot_draws_it() {
    let Some(ctx) = context() else { return };
    let mut rig = Rig::new(&ctx);
    let a = Arc::new(synthetic_model(0.0));
    let ids = [rig.add(&ctx, &a, true), rig.add(&ctx, &a, false), rig.add(&ctx, &a, false)];
    let entries = |c: usize| {
        let (start, end) = rig.pass.layout().characters()[c].palette_range;
        u64::from(end - start) * 64
    };
    let bytes = [entries(0), entries(1), entries(2)];
    let mut evaluators: Vec<Synthetic> = ids.iter().map(|_| Synthetic::new(&a)).collect();
    let mut versions = [0u64; 3];
    for frame in 1..=12u32 {
        // Character c changes pose every (c + 1)th frame.
        let mut expected = 0;
        for (c, e) in evaluators.iter_mut().enumerate() {
            if frame == 1 || frame % (c as u32 + 1) == 0 {
                pose_synthetic(&a, e, frame + 5 * c as u32);
                versions[c] = u64::from(frame);
                expected += bytes[c];
            }
        }
        let inputs: Vec<SkinInput> =
            evaluators.iter().zip(versions).map(|(e, v)| SkinInput { pose: e.view(), version: v }).collect();
        let stats = if frame % 4 == 0 {
            // Read back: the frame skins each character's newest pose.
            let (out, stats) = rig.skin_at(&ctx, &inputs, None);
            for (c, (id, e)) in ids.iter().zip(&evaluators).enumerate() {
                compare(&rig.pass, *id, &e.view(), &out, &format!("character {c} frame {frame}"));
            }
            stats
        } else {
            let slot = rig.ring.begin_frame(&ctx).unwrap();
            let stats = rig.pass.record(&ctx, slot, &inputs[..], None, false).unwrap();
            rig.ring.end_frame(&ctx, &[], &[]).unwrap();
            stats
        };
        assert_eq!(stats.palette_bytes_written, expected, "frame {frame}");
    }
    // A frame that uploads without recording its copies leaves them queued
    // in its slot; the other slot then uploads a newer pose, and the first
    // slot's next frame, whose queued copy still carries the older one,
    // must skin the newer.
    let pose_all = |frame: u32, evaluators: &mut [Synthetic]| {
        for (c, e) in evaluators.iter_mut().enumerate() {
            pose_synthetic(&a, e, frame + 5 * c as u32);
        }
    };
    pose_all(100, &mut evaluators);
    let older: Vec<SkinInput> =
        evaluators.iter().map(|e| SkinInput { pose: e.view(), version: 100 }).collect();
    let slot = rig.ring.begin_frame(&ctx).unwrap();
    rig.pass.upload(slot, &older[..], None).unwrap();
    rig.ring.end_frame(&ctx, &[], &[]).unwrap();
    drop(older);
    pose_all(101, &mut evaluators);
    let newer: Vec<SkinInput> =
        evaluators.iter().map(|e| SkinInput { pose: e.view(), version: 101 }).collect();
    let slot = rig.ring.begin_frame(&ctx).unwrap();
    rig.pass.record(&ctx, slot, &newer[..], None, false).unwrap();
    rig.ring.end_frame(&ctx, &[], &[]).unwrap();
    let out = rig.skin(&ctx, &newer);
    for (c, (id, e)) in ids.iter().zip(&evaluators).enumerate() {
        compare(&rig.pass, *id, &e.view(), &out, &format!("character {c} after a frame left its copies"));
    }
    rig.destroy(&ctx);
    assert_no_validation_messages(&ctx);
}

/// A character added while frames are in flight: the pass grows its buffers
/// and concatenates a second model, retiring (not freeing) what submitted
/// frames still use; both characters stay right, validation stays silent.
#[test]
fn character_added_between_frames_in_flight() {
    let Some(ctx) = context() else { return };
    let mut rig = Rig::new(&ctx);
    let a = Arc::new(synthetic_model(0.0));
    let b = Arc::new(synthetic_model(0.75));
    let first = rig.add(&ctx, &a, true);
    let mut ea = Synthetic::new(&a);
    let mut eb = Synthetic::new(&b);
    for frame in 0..3u32 {
        pose_synthetic(&a, &mut ea, frame);
        let slot = rig.ring.begin_frame(&ctx).unwrap();
        rig.pass
            .record(&ctx, slot, &[SkinInput { pose: ea.view(), version: frame as u64 }], None, false)
            .unwrap();
        rig.ring.end_frame(&ctx, &[], &[]).unwrap();
    }
    // No wait: the last two frames may still be running.
    let second = rig.add(&ctx, &b, true);
    for frame in 3..6u32 {
        pose_synthetic(&a, &mut ea, frame);
        pose_synthetic(&b, &mut eb, frame * 2);
        let inputs = [
            SkinInput { pose: ea.view(), version: frame as u64 },
            SkinInput { pose: eb.view(), version: frame as u64 },
        ];
        let slot = rig.ring.begin_frame(&ctx).unwrap();
        rig.pass.record(&ctx, slot, &inputs, None, false).unwrap();
        rig.ring.end_frame(&ctx, &[], &[]).unwrap();
    }
    let out = rig
        .skin(&ctx, &[SkinInput { pose: ea.view(), version: 5 }, SkinInput { pose: eb.view(), version: 5 }]);
    compare(&rig.pass, first, &ea.view(), &out, "first character");
    compare(&rig.pass, second, &eb.view(), &out, "character added later");
    rig.destroy(&ctx);
    assert_no_validation_messages(&ctx);
}

/// DQS with the matrices split on the CPU (the palette holds dual
/// quaternions): with texel and storage palette reads, in place and staged,
/// its uploads allocate nothing and count a BoneMatrix's bytes per entry,
/// and it skins the synthetic characters (eight influences, large
/// rotations) as the shader's own split does, to rounding (each side runs
/// the polar decomposition in f32).
#[test]
fn dqs_split_on_the_cpu_skins_what_the_shader_split_skins() {
    let Some(ctx) = context() else { return };
    let a = Arc::new(synthetic_model(0.0));
    let b = Arc::new(synthetic_model(0.5));
    let models = [&a, &a, &b];
    let in_shader = InfluenceBlend::from(SkinningMethod::DualQuaternion);
    let on_cpu = InfluenceBlend { method: SkinningMethod::DualQuaternion, dqs_split: DqsSplit::Cpu };
    let ways = [
        (in_shader, PaletteReads::Texels, PaletteUpload::InPlace),
        (on_cpu, PaletteReads::Texels, PaletteUpload::InPlace),
        (on_cpu, PaletteReads::Texels, PaletteUpload::Staged),
        (on_cpu, PaletteReads::Storage, PaletteUpload::Dirty),
    ];
    let mut reference: Vec<Vec<SkinnedVertex>> = Vec::new();
    for (shading, reads, upload) in ways {
        let way = format!("{} {reads:?} {upload:?}", shading.name());
        let mut rig = Rig::with_pass(&ctx, SkinPass::with_palette_reads(&ctx, shading, reads).unwrap());
        rig.pass.set_upload_mode(upload);
        for (i, m) in models.iter().enumerate() {
            rig.add(&ctx, m, i != 1);
        }
        let mut evaluators: Vec<Synthetic> = models.iter().map(|m| Synthetic::new(m)).collect();
        let palette_entries: usize = evaluators.iter().map(|e| e.view().palettes.len()).sum();
        for (f, frame) in [0u32, 11].into_iter().enumerate() {
            for (i, (m, e)) in models.iter().zip(&mut evaluators).enumerate() {
                pose_synthetic(m, e, frame + 3 * i as u32);
            }
            let inputs: Vec<SkinInput> =
                evaluators.iter().map(|e| SkinInput { pose: e.view(), version: frame as u64 + 1 }).collect();
            let slot = rig.ring.begin_frame(&ctx).unwrap();
            let (stats, allocations) = allocations_in(|| rig.pass.upload(slot, &inputs[..], None).unwrap());
            rig.ring.end_frame(&ctx, &[], &[]).unwrap();
            assert_eq!(allocations, 0, "{way}: the upload allocated on the heap");
            assert!(stats.palette_bytes_written >= palette_entries as u64 * 64, "{way}: {stats:?}");
            let out = rig.skin(&ctx, &inputs);
            if reference.len() <= f {
                reference.push(out);
                continue;
            }
            let positions: Vec<[f32; 3]> =
                reference[f].iter().map(|v| [v.position[0], v.position[1], v.position[2]]).collect();
            let diagonal = bounding_diagonal(&positions);
            let (mut position, mut normal) = (0.0f32, 0.0f32);
            for (g, r) in out.iter().zip(&reference[f]) {
                for k in 0..3 {
                    position = position.max((g.position[k] - r.position[k]).abs() / diagonal);
                    normal = normal.max((g.normal[k] - r.normal[k]).abs());
                }
            }
            assert!(
                position <= 1e-5 && normal <= 1e-4,
                "{way} frame {frame}: position {position:.2e} of the diagonal, normal {normal:.2e} from the shader's split"
            );
        }
        rig.destroy(&ctx);
    }
    assert_no_validation_messages(&ctx);
}

/// The vertex-skinning path's inputs come from the pass itself: `upload`
/// writes the slot's palettes/weights/records without dispatching (and
/// without allocating), a `record` of the same versions in the same frame
/// writes and counts nothing again, `vertex_skinning_buffers` binds the
/// single model's streams or the concatenation of several, and every
/// primitive with vertices has its own record index, in output order.
#[test]
fn upload_serves_vertex_skinning_from_the_pass_buffers() {
    let Some(ctx) = context() else { return };
    let mut rig = Rig::new(&ctx);
    assert!(rig.pass.vertex_skinning_buffers(&ctx, 0).is_none(), "no character yet");
    let a = Arc::new(synthetic_model(0.0));
    let b = Arc::new(synthetic_model(0.5));
    let mut ids = vec![rig.add(&ctx, &a, true)];
    // One model: its own streams are bound.
    let single = rig.pass.vertex_skinning_buffers(&ctx, 0).unwrap().buffers;
    assert_eq!(single[0].buffer, rig.models[0].sources.raw);
    assert_eq!(single[3].buffer, rig.models[0].morph_entries.raw);
    ids.push(rig.add(&ctx, &a, false));
    ids.push(rig.add(&ctx, &b, true));
    // Record indices: consecutive over every character's primitives with vertices.
    let mut next = 0;
    for &id in &ids {
        for o in rig.pass.outputs(id) {
            if o.vertex_count == 0 {
                assert_eq!(o.record, NO_RECORD);
            } else {
                assert_eq!(o.record, next);
                next += 1;
            }
        }
    }
    assert!(next > 3);
    let models = [&a, &a, &b];
    let mut evaluators: Vec<Synthetic> = models.iter().map(|m| Synthetic::new(m)).collect();
    for frame in 1..=4u32 {
        for (i, (m, e)) in models.iter().zip(&mut evaluators).enumerate() {
            pose_synthetic(m, e, frame + i as u32);
        }
        let inputs: Vec<SkinInput> =
            evaluators.iter().map(|e| SkinInput { pose: e.view(), version: frame as u64 }).collect();
        let slot = rig.ring.begin_frame(&ctx).unwrap();
        let (uploaded, allocations) = allocations_in(|| rig.pass.upload(slot, &inputs[..], None).unwrap());
        assert_eq!(allocations, 0, "frame {frame}: SkinPass::upload allocated on the heap");
        assert!(uploaded.palette_bytes_written > 0 && uploaded.weight_bytes_written > 0);
        assert_eq!((uploaded.dispatches, uploaded.vertices, uploaded.timestamps), (0, 0, None));
        // Odd frames also dispatch: the palettes were written once, by the upload.
        if frame % 2 == 1 {
            let again = rig.pass.record(&ctx, slot, &inputs[..], None, false).unwrap();
            assert_eq!((again.palette_bytes_written, again.weight_bytes_written), (0, 0));
            assert_eq!(again.dispatches, 2, "a dispatch per run");
        }
        let inputs_of_slot = rig.pass.vertex_skinning_buffers(&ctx, slot.index).unwrap();
        assert_ne!(inputs_of_slot.palette_address, 0);
        let bindings = inputs_of_slot.buffers;
        assert!(bindings.iter().all(|b| b.buffer != vk::Buffer::null() && b.range == vk::WHOLE_SIZE));
        // Two models: the pass's concatenation, not either model's own streams.
        assert!(rig.models.iter().all(|m| m.sources.raw != bindings[0].buffer));
        rig.ring.end_frame(&ctx, &[], &[]).unwrap();
    }
    // The uploads of frames without a dispatch skin correctly when dispatched.
    let inputs: Vec<SkinInput> =
        evaluators.iter().map(|e| SkinInput { pose: e.view(), version: 4 }).collect();
    let out = rig.skin(&ctx, &inputs);
    for (i, (id, e)) in ids.iter().zip(&evaluators).enumerate() {
        compare(&rig.pass, *id, &e.view(), &out, &format!("character {i} after uploads"));
    }
    rig.destroy(&ctx);
    assert_no_validation_messages(&ctx);
}

/// `vkskin dump --skinning gpu --validation` gives the CPU dump's positions.
#[test]
fn dump_gpu_matches_dump_cpu() {
    use vkskin::formats::dump::Skinning;
    use vkskin::formats::dump::{GpuChoice, Request, evaluate, evaluate_on};
    let Some(file) = shared_file("RobotExpressive/RobotExpressive.glb", "the dump comparison") else {
        return;
    };
    // Checks that Vulkan is there at all (and fails under VKSKIN_NO_SKIP if not).
    let Some(ctx) = context() else { return };
    drop(ctx);
    let model = vkskin::asset::load(&file).unwrap();
    for (clip, time) in [(None, 0.0), (Some("Dance"), 0.7), (Some("Wave"), 1.3)] {
        let cpu = evaluate(&model, &Request { clip, time, skinning: Skinning::Cpu }).unwrap();
        let request = Request { clip, time, skinning: Skinning::Gpu };
        let gpu = evaluate_on(&model, &request, &GpuChoice { device: None, validation: true })
            .unwrap_or_else(|e| panic!("{clip:?} {time}: {e}"));
        assert_eq!(cpu.primitives.len(), gpu.primitives.len());
        for (c, g) in cpu.primitives.iter().zip(&gpu.primitives) {
            assert_eq!((c.mesh, c.primitive, c.node), (g.mesh, g.primitive, g.node));
            assert_eq!(
                c.positions.len(),
                g.positions.len(),
                "{clip:?}: mesh {} primitive {}",
                c.mesh,
                c.primitive
            );
            let err = c.positions.iter().zip(&g.positions).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
            assert!(err < 1e-4, "{clip:?} {time}: mesh {} primitive {}: {err}", c.mesh, c.primitive);
        }
    }
}

/// A command's last validation check sees leaks: `GpuContext::finish`
/// destroys the device and returns the layer's reports made meanwhile (an
/// object still alive then is one). `dump`, `render` and the viewer check
/// what it returns.
#[test]
fn finish_reports_leaked_objects() {
    let Some(probe) = context() else { return };
    drop(probe);
    let ctx = GpuContext::headless(true, None).expect("validated context");
    let buffer = vkskin::gpu::Buffer::new(
        &ctx,
        "leaked on purpose",
        256,
        vk::BufferUsageFlags::STORAGE_BUFFER,
        gpu_allocator::MemoryLocation::CpuToGpu,
    )
    .unwrap();
    assert!(ctx.validation_messages().is_empty(), "nothing is reported while the object lives");
    std::mem::forget(buffer);
    let messages = ctx.finish();
    assert!(
        messages.iter().any(|m| m.contains("VkBuffer")),
        "the leaked buffer is reported when the device is destroyed: {messages:?}"
    );
}
