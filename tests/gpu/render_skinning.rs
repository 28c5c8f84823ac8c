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
use ash::vk;
use nalgebra::{Matrix4, UnitQuaternion, Vector3};
use std::sync::Arc;
use vkskin::anim::Rig as CharacterRig;
use vkskin::anim::SkinInput;
use vkskin::anim::{
    Influences, MeshPrimitive, MorphDeltas, MorphTarget, NO_PARENT, Pose, Skeleton, Skin, SkinnedPose,
    SkinningMethod, Transform,
};
use vkskin::asset::{Mesh, MeshInstance, Model};
use vkskin::character::{DebugPose, PoseOutput};
use vkskin::gpu::{FrameRing, GpuContext};
use vkskin::render::gpu_model::GpuModel;
use vkskin::render::layout::{SkinnedVertex, as_stored};
use vkskin::render::readback::Readback;
use vkskin::render::skin_levels::SkinLevels;
use vkskin::render::skin_pass::{CharacterId, NO_RECORD, PaletteReads, SkinPass, SkinStats};
use vkskin::render::{DqsSplit, InfluenceBlend, PaletteUpload};

/// A hand-made local pose and its evaluated output (the character layer's
/// last stage: local to model, palettes, version).
pub(crate) struct Synthetic {
    pose: Pose,
    output: PoseOutput,
}

impl Synthetic {
    pub(crate) fn new(model: &Model) -> Self {
        let pose =
            Pose { locals: model.skeleton.rest().to_vec(), morph_weights: model.rest_morph_weights.clone() };
        Synthetic { pose, output: PoseOutput::new(model) }
    }

    pub(crate) fn view(&self) -> SkinnedPose<'_> {
        self.output.view()
    }
}

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
/// Unit normals must agree within this (absolute): rounding in the
/// cofactor of a blend of joints turned far apart (near singular, as at
/// the synthetic poses from frame 40) is magnified about a hundredfold.
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
/// normal error, of every primitive of `character` against the CPU reference.
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
        pose.skin_primitive_with(method, instance, prim, &mut pos, nrm.as_deref_mut())
            .unwrap_or_else(|e| panic!("{label}: CPU skinning: {e}"));
        cpu_positions.push(pos);
        cpu_normals.push(nrm);
    }
    // Without vertices nothing is compared; the scale is then moot.
    let diagonal = bounding_diagonal(cpu_positions.iter().flatten()).max(1e-6);
    let (mut position_err, mut normal_err) = (0.0f32, 0.0f32);
    for ((o, pos), nrm) in pass.outputs(character).iter().zip(&cpu_positions).zip(&cpu_normals) {
        let end = o.output_offset as usize + o.vertex_count as usize;
        assert!(end <= out.len(), "{label}: output range {end} past the {} vertices read back", out.len());
        let gpu_vertices = &out[o.output_offset as usize..end];
        for (v, (g, c)) in gpu_vertices.iter().zip(pos).enumerate() {
            let d = (0..3).map(|k| (g.position[k] - c[k]).abs()).fold(0.0, f32::max) / diagonal;
            assert!(d.is_finite(), "{label}: instance {} vertex {v}: non-finite", o.instance);
            position_err = position_err.max(d);
            if let Some(nrm) = nrm {
                let d = (0..3).map(|k| (g.normal[k] - nrm[v][k]).abs()).fold(0.0, f32::max);
                normal_err = normal_err.max(d);
            }
        }
    }
    assert!(
        position_err <= POSITION_TOLERANCE && normal_err <= NORMAL_TOLERANCE,
        "{label}: GPU {method:?} differs from the CPU reference: position {position_err:.2e} of the diagonal, \
         normal {normal_err:.2e}"
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

/// A skeleton of a root and `n` children with distinct rest transforms.
pub(crate) fn skeleton(n: usize) -> Skeleton {
    let mut names = vec!["root".to_string()];
    let mut parents = vec![NO_PARENT];
    let mut rest = vec![Transform::IDENTITY];
    for j in 0..n {
        names.push(format!("bone{j}"));
        parents.push(if j == 0 { 0 } else { j as u32 });
        rest.push(Transform {
            translation: Vector3::new(0.1 * j as f32, 0.5, -0.2),
            rotation: UnitQuaternion::from_euler_angles(0.1 * j as f32, 0.2, 0.05),
            scale: Vector3::new(1.0, 1.0 + 0.05 * j as f32, 1.0),
        });
    }
    Skeleton::new(names, parents, rest).unwrap()
}

/// A hand-built model: skin with 8 joints; mesh 0 has 8 influences per
/// vertex (two sets), normals, and three morph targets (sparse positions,
/// dense positions, sparse normals); mesh 1 is unskinned, drawn rigidly by
/// joint 3, with one sparse morph target.
pub(crate) fn synthetic_model(seed: f32) -> Model {
    let joints = 8usize;
    let skeleton = Arc::new(skeleton(joints));
    let vertices = 37usize;
    let mut positions = Vec::new();
    let mut normals = Vec::new();
    let mut inf_joints = Vec::new();
    let mut inf_weights = Vec::new();
    for v in 0..vertices {
        let f = v as f32 + seed;
        positions.push([f.sin(), 0.1 * f, f.cos()]);
        let n = Vector3::new(f.cos(), 0.3, -f.sin()).normalize();
        normals.push([n.x, n.y, n.z]);
        let raw: Vec<f32> =
            (0..8).map(|k| ((v * 7 + k * 3) % 11) as f32 + if k == 5 { 0.0 } else { 1.0 }).collect();
        let sum: f32 = raw.iter().sum();
        for (k, w) in raw.iter().enumerate() {
            inf_joints.push(((v + k * 5) % joints) as u16);
            // One weight in the second set is zero for some vertices.
            inf_weights.push(if k == 6 && v % 3 == 0 { 0.0 } else { w / sum });
        }
        // Renormalise after zeroing (the importer's contract: weights sum to one).
        let start = inf_weights.len() - 8;
        let s: f32 = inf_weights[start..].iter().sum();
        inf_weights[start..].iter_mut().for_each(|w| *w /= s);
    }
    let sparse_idx: Vec<u32> = vec![0, 5, 6, 20, 36];
    let skinned = MeshPrimitive {
        positions: positions.clone(),
        normals: Some(normals.clone()),
        influences: Some(Influences { per_vertex: 8, joints: inf_joints, weights: inf_weights }),
        morph_targets: vec![
            MorphTarget {
                positions: Some(MorphDeltas::Sparse {
                    indices: sparse_idx.clone(),
                    deltas: sparse_idx.iter().map(|&i| [0.1 * i as f32, -0.2, 0.05]).collect(),
                }),
                normals: None,
                tangents: None,
            },
            MorphTarget {
                positions: Some(MorphDeltas::Dense(
                    (0..vertices).map(|v| [0.0, 0.01 * v as f32, 0.0]).collect(),
                )),
                normals: None,
                tangents: None,
            },
            MorphTarget {
                positions: None,
                normals: Some(MorphDeltas::Sparse { indices: vec![1, 6], deltas: vec![[0.3, 0.0, 0.1]; 2] }),
                tangents: None,
            },
        ],
        indices: (0..vertices as u32 - 1).flat_map(|i| [i, i + 1, 0]).collect(),
        ..Default::default()
    };
    let rigid = MeshPrimitive {
        positions: positions[..10].to_vec(),
        normals: Some(normals[..10].to_vec()),
        morph_targets: vec![MorphTarget {
            positions: Some(MorphDeltas::Sparse { indices: vec![2, 9], deltas: vec![[1.0, 2.0, 3.0]; 2] }),
            normals: None,
            tangents: None,
        }],
        indices: vec![0, 1, 2, 3, 4, 5],
        ..Default::default()
    };
    let mesh = |name: &str, p: MeshPrimitive, targets: usize| {
        Arc::new(Mesh {
            name: name.into(),
            primitives: vec![p],
            primitive_indices: vec![0],
            target_names: Vec::new(),
            target_count: targets,
        })
    };
    let world_of_rest: Vec<Matrix4<f32>> = {
        let mut w: Vec<Matrix4<f32>> = Vec::new();
        for (j, t) in skeleton.rest().iter().enumerate() {
            let p = skeleton.parents()[j];
            let local = t.to_matrix();
            w.push(if p == NO_PARENT { local } else { w[p as usize] * local });
        }
        w
    };
    let skin_joints: Vec<u32> = (1..=joints as u32).collect();
    let inverse_binds =
        skin_joints.iter().map(|&j| world_of_rest[j as usize].try_inverse().unwrap()).collect();
    let joint_count = skeleton.len();
    let rig = CharacterRig::new(
        skeleton,
        vec![Skin { name: "skin".into(), joints: skin_joints, inverse_binds }],
        vec![mesh("skinned", skinned, 3), mesh("rigid", rigid, 1)],
        vec![
            MeshInstance { node: 0, joint: 0, mesh: 0, skin: Some(0), morph_offset: 0, morph_count: 3 },
            MeshInstance { node: 3, joint: 3, mesh: 1, skin: None, morph_offset: 3, morph_count: 1 },
        ],
        Vec::new(),
        vec![0.0; 4],
    )
    .expect("synthetic rig");
    Model {
        file: format!("synthetic {seed}"),
        rig: Arc::new(rig),
        node_of_joint: (0..joint_count).collect(),
        joint_of_node: (0..joint_count as u32).collect(),
        materials: Vec::new(),
        warnings: Vec::new(),
        load_options: Default::default(),
        memory_used: 0,
    }
}

/// A model of `joints` joints, all children of the root, and one primitive
/// of 8 vertices whose influences reach across the whole skin (its first,
/// middle and last joints): a large palette per character with little to
/// skin.
pub(crate) fn wide_model(joints: usize) -> Model {
    let mut names = vec!["root".to_string()];
    let mut parents = vec![NO_PARENT];
    let mut rest = vec![Transform::IDENTITY];
    for j in 0..joints {
        names.push(format!("bone{j}"));
        parents.push(0);
        let f = j as f32 / joints as f32;
        rest.push(Transform {
            translation: Vector3::new(f, 0.5 - f, 0.2),
            rotation: UnitQuaternion::from_euler_angles(f, 0.2, -f),
            scale: Vector3::new(1.0, 1.0 + 0.2 * f, 1.0),
        });
    }
    let skeleton = Arc::new(Skeleton::new(names, parents, rest).unwrap());
    let vertices = 8usize;
    let mut inf_joints = Vec::new();
    for v in 0..vertices {
        let spread = [v, joints / 3 + v, 2 * joints / 3 + v, joints - 1 - v];
        inf_joints.extend(spread.map(|j| j as u16));
    }
    let primitive = MeshPrimitive {
        positions: (0..vertices).map(|v| [v as f32 * 0.1, 1.0, -(v as f32) * 0.05]).collect(),
        influences: Some(Influences {
            per_vertex: 4,
            joints: inf_joints,
            weights: (0..vertices).flat_map(|_| [0.4, 0.3, 0.2, 0.1]).collect(),
        }),
        indices: (0..vertices as u32 - 2).flat_map(|i| [i, i + 1, i + 2]).collect(),
        ..Default::default()
    };
    let mesh = Arc::new(Mesh {
        name: "wide".into(),
        primitives: vec![primitive],
        primitive_indices: vec![0],
        target_names: Vec::new(),
        target_count: 0,
    });
    let skin_joints: Vec<u32> = (1..=joints as u32).collect();
    // Flat: each joint's world rest matrix is its local one.
    let inverse_binds =
        skin_joints.iter().map(|&j| skeleton.rest()[j as usize].to_matrix().try_inverse().unwrap()).collect();
    let joint_count = skeleton.len();
    let rig = CharacterRig::new(
        skeleton,
        vec![Skin { name: "skin".into(), joints: skin_joints, inverse_binds }],
        vec![mesh],
        vec![MeshInstance { node: 0, joint: 0, mesh: 0, skin: Some(0), morph_offset: 0, morph_count: 0 }],
        Vec::new(),
        Vec::new(),
    )
    .expect("wide rig");
    Model {
        file: format!("wide {joints}"),
        rig: Arc::new(rig),
        node_of_joint: (0..joint_count).collect(),
        joint_of_node: (0..joint_count as u32).collect(),
        materials: Vec::new(),
        warnings: Vec::new(),
        load_options: Default::default(),
        memory_used: 0,
    }
}

/// Poses the synthetic model for frame `frame` (every joint rotates).
pub(crate) fn pose_synthetic(model: &Model, synthetic: &mut Synthetic, frame: u32) {
    let t = frame as f32 * 0.05;
    {
        let pose = &mut synthetic.pose;
        for (j, local) in pose.locals.iter_mut().enumerate() {
            let rest = model.skeleton.rest()[j];
            local.rotation =
                rest.rotation * UnitQuaternion::from_euler_angles(0.3 * (t + j as f32).sin(), t, 0.1);
            local.translation = rest.translation + Vector3::new(0.0, 0.1 * t.cos(), 0.0);
        }
        for (k, w) in pose.morph_weights.iter_mut().enumerate() {
            *w = 0.5 + 0.5 * (t + k as f32).sin();
        }
    }
    let Synthetic { pose, output } = synthetic;
    output.update(model, &pose.locals, &pose.morph_weights, DebugPose::Animated).unwrap();
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
        assert_eq!(allocations, 0, "frame {frame}: SkinPass::record allocated on the heap");
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
