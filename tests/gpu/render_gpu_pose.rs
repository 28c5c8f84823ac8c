//! GPU pose evaluation (shaders/pose.comp through `SkinPass::set_pose_program`)
//! against the CPU pose of the same characters, under validation and
//! synchronization validation: every clip of every shared model, alone and
//! in a two-clip blend, at several times; the built-in character under its
//! full controller (blend space, crossfades, jumps, the wave override with
//! its mask, breathing and face layers, root motion) and with root motion
//! from its hips, which turn; RobotExpressive under its locomotion
//! controller. The palettes the pose pass writes are
//! read back and compared entry by entry with the CPU's: rotation and scale
//! within 1e-5, translation within 1e-5 of the skeleton's size. The posed
//! characters upload no palette, only their playback.

use crate::common::crowd as builtin;
use crate::common::{assert_no_messages, context, find_models, shared_assets, shared_model};
use std::path::PathBuf;
use std::sync::Arc;
use vkskin::anim::frame_poses::FramePoses;
use vkskin::anim::{BoneMatrix, PosePlayback, PoseProgram, RotationBlend, SkinInput};
use vkskin::asset::{self, Model};
use vkskin::character::gpu_pose::pose_program;
use vkskin::character::{Character, Controller, Crowd, ParameterValue};
use vkskin::gpu::barrier::{self, Access};
use vkskin::gpu::{FrameRing, GpuContext};
use vkskin::render::gpu_model::GpuModel;
use vkskin::render::readback::Readback;
use vkskin::render::skin_pass::{CharacterId, SkinPass, SkinStats};

/// The largest error accepted (see the module documentation).
const TOLERANCE: f64 = 1e-5;

/// Characters as the renderer reads them, every one posed on the GPU
/// when `gpu`.
struct Characters {
    characters: Vec<Character>,
}

impl FramePoses for Characters {
    fn count(&self) -> usize {
        self.characters.len()
    }
    fn input(&self, c: usize) -> SkinInput<'_> {
        let character = &self.characters[c];
        SkinInput { pose: character.pose(), version: character.version() }
    }
    fn world(&self, _: usize) -> nalgebra::Matrix4<f32> {
        nalgebra::Matrix4::identity()
    }
    fn playback(&self, c: usize) -> Option<PosePlayback<'_>> {
        self.characters[c].playback()
    }
}

/// A skin pass holding `count` characters of `model`, posed on the GPU with `program`.
struct PosedPass {
    ring: FrameRing,
    pass: SkinPass,
    gpu_model: Arc<GpuModel>,
    readback: Readback,
    palette_bytes: u64,
}

impl PosedPass {
    fn new(ctx: &GpuContext, model: &Arc<Model>, count: usize, program: Arc<PoseProgram>) -> Self {
        let mut ring = FrameRing::new(ctx).expect("ring");
        let mut pass = SkinPass::new(ctx).expect("skin pass");
        let gpu_model = Arc::new(GpuModel::upload(ctx, model).expect("upload"));
        for _ in 0..count {
            pass.add_character(ctx, &mut ring, gpu_model.clone(), model.clone()).expect("character");
        }
        pass.set_pose_program(ctx, &mut ring, Some(program), CharacterId(0)).expect("pose program");
        let entries = pass.layout().characters().last().map_or(0, |c| c.palette_range.1);
        let palette_bytes = u64::from(entries.max(1)) * 64;
        let readback = Readback::new(ctx, palette_bytes).expect("readback");
        PosedPass { ring, pass, gpu_model, readback, palette_bytes }
    }

    /// One frame of `poses` skinned (the GPU posing what it may), and the
    /// palette the shaders read, read back.
    fn frame(&mut self, ctx: &GpuContext, poses: &dyn FramePoses) -> (Vec<BoneMatrix>, SkinStats) {
        let slot = self.ring.begin_frame(ctx).expect("begin frame");
        let stats = self.pass.record(ctx, slot, poses, None, false).expect("record");
        // The test's own read of the palette: after the pose dispatch's
        // (and any staged copy's) writes.
        barrier::record_global(
            ctx,
            slot.command_buffer,
            &[Access::ComputeShaderWrite, Access::CopyWrite],
            &[Access::TransferRead],
        );
        let palette = self.pass.palette_buffer(slot.index);
        self.readback.record_copy(ctx, slot.command_buffer, palette, 0, self.palette_bytes).expect("copy");
        self.ring.end_frame(ctx, &[], &[]).expect("submit");
        self.ring.wait_all(ctx).expect("wait");
        let bytes = self.readback.bytes(self.palette_bytes as usize).expect("read back");
        (bytemuck::pod_collect_to_vec(&bytes), stats)
    }

    fn destroy(mut self, ctx: &GpuContext) {
        self.ring.wait_all(ctx).unwrap();
        self.pass.destroy(ctx);
        self.readback.buffer.destroy(ctx);
        match Arc::try_unwrap(self.gpu_model) {
            Ok(model) => model.destroy(ctx),
            Err(_) => panic!("the pass still holds the model"),
        }
        self.ring.destroy(ctx);
    }
}

/// The largest error of `gpu` (the palette read back) against the CPU
/// pose of every character of `cpu`, placed as the pass lays them out:
/// every skin's palette where that skin reads it (skins that share a run
/// read the same entries), and every rigid entry.
fn palette_error(pass: &SkinPass, gpu: &[BoneMatrix], cpu: &dyn FramePoses, size: f64) -> f64 {
    let mut worst = 0.0f64;
    for (c, place) in pass.layout().characters().iter().enumerate() {
        let pose = cpu.input(c).pose;
        // (absolute palette index, expected entry)
        let mut expected: Vec<(u32, BoneMatrix)> = Vec::new();
        for (s, &base) in place.skin_bases.iter().enumerate() {
            expected.extend(pose.palette(s).iter().enumerate().map(|(i, m)| (base + i as u32, *m)));
        }
        for &(joint, index) in &place.rigid {
            let world = pose.joint_world(joint).expect("a rigid joint's world matrix is kept");
            expected.push((index, BoneMatrix::from_matrix(world)));
        }
        let mut covered: Vec<u32> = expected.iter().map(|&(index, _)| index).collect();
        covered.sort_unstable();
        covered.dedup();
        let range: Vec<u32> = (place.palette_range.0..place.palette_range.1).collect();
        assert_eq!(covered, range, "character {c}: entries read");
        for (k, (g, e)) in expected.iter().map(|(index, e)| (&gpu[*index as usize], e)).enumerate() {
            // The linear part relative to its own magnitude (an inverse
            // bind may scale by 100: the mesh is then in centimetres, and
            // an error there moves a vertex by error * size / 100).
            let linear =
                (0..12).filter(|i| i % 4 != 3).map(|i| f64::from(e.skin[i]).abs()).fold(1.0, f64::max);
            for i in 0..16 {
                let (g, e) = (f64::from(g.skin[i]), f64::from(e.skin[i]));
                assert!(g.is_finite(), "character {c} entry {k}[{i}] is {g}");
                // Elements 12..15 are the translation column.
                let scale = if (12..15).contains(&i) { size } else { linear };
                worst = worst.max((g - e).abs() / scale);
            }
        }
    }
    worst
}

/// The largest difference of the morph weights the GPU-posed characters
/// evaluated on the CPU (without their joints) from the CPU-posed ones'.
fn morph_error(gpu: &dyn FramePoses, cpu: &dyn FramePoses) -> f32 {
    (0..cpu.count())
        .flat_map(|c| {
            let (g, e) = (gpu.input(c).pose.morph_weights, cpu.input(c).pose.morph_weights);
            assert_eq!(g.len(), e.len());
            g.iter().zip(e).map(|(g, e)| (g - e).abs()).collect::<Vec<_>>()
        })
        .fold(0.0, f32::max)
}

/// The size of a character's skeleton: the diagonal of its joints' box in
/// the bind pose (at least a millimetre).
fn skeleton_size(model: &Model) -> f64 {
    let mut world = vec![nalgebra::Matrix4::identity(); model.rig.skeleton.len()];
    model.rig.bind_pose_world(&mut world);
    let points: Vec<[f32; 3]> = world.iter().map(|m| [m[(0, 3)], m[(1, 3)], m[(2, 3)]]).collect();
    f64::from(crate::common::bounding_diagonal(&points)).max(1e-3)
}

/// For each clip: playing alone from two phases, and blended 40 % into the next clip.
fn clip_characters(model: &Arc<Model>, program: Option<&Arc<PoseProgram>>) -> Characters {
    let clips = model.rig.clips.len();
    let mut characters = Vec::new();
    for c in 0..clips {
        let duration = f64::from(model.rig.clips[c].duration);
        for (controller, phase) in [
            (Controller::single_clip(&model.rig, Some(c), true), 0.3),
            (Controller::single_clip(&model.rig, Some(c), true), 0.77),
            (Controller::clip_blend(&model.rig, Some(c), Some((c + 1) % clips), false, true), 0.55),
        ] {
            let controller = Arc::new(controller.expect("controller"));
            let mut character = Character::new(model.rig.clone(), controller).expect("character");
            character.set_named("blend", ParameterValue::Float(0.4)).expect("blend");
            character.seek(duration * phase);
            character.set_pose_program(program.cloned());
            characters.push(character);
        }
    }
    Characters { characters }
}

fn update(characters: &mut Characters, dt: f32) {
    for character in &mut characters.characters {
        character.update(dt).expect("update");
    }
}

/// Every clip of `model`: GPU against CPU over a few frames; the largest error.
fn check_clips(ctx: &GpuContext, model: &Arc<Model>) -> f64 {
    let clips = model.rig.clips.len();
    let blend =
        Controller::clip_blend(&model.rig, Some(0), Some(1 % clips), false, true).expect("blend controller");
    let program = Arc::new(pose_program(&model.rig, &blend, Default::default()).expect("program"));
    let mut cpu = clip_characters(model, None);
    let mut gpu = clip_characters(model, Some(&program));
    let mut pass = PosedPass::new(ctx, model, gpu.count(), program);
    let size = skeleton_size(model);
    let mut worst = 0.0f64;
    for frame in 0..4 {
        let dt = if frame == 0 { 0.0 } else { 0.37 };
        update(&mut cpu, dt);
        update(&mut gpu, dt);
        let (palette, stats) = pass.frame(ctx, &gpu);
        assert_eq!(stats.posed_characters as usize, gpu.count());
        assert_eq!(stats.palette_bytes_written, 0, "{}: posed characters upload no palette", model.file);
        // A record and at most two clips per character.
        assert!(stats.playback_bytes_written <= 48 * gpu.count() as u64, "{stats:?}");
        worst = worst.max(palette_error(&pass.pass, &palette, &cpu, size));
        assert!(morph_error(&gpu, &cpu) <= 1e-6, "{}: morph weights", model.file);
    }
    pass.destroy(ctx);
    worst
}

#[test]
fn every_clip_of_every_shared_model_poses_on_the_gpu_as_on_the_cpu() {
    let Some(ctx) = context() else { return };
    let Some(dir) = shared_assets("GPU pose against CPU pose") else { return };
    let mut checked = Vec::new();
    for path in find_models(&dir) {
        let Ok(model) = asset::load(&path) else { continue }; // the hostile files
        if model.rig.clips.is_empty() || model.rig.skeleton.is_empty() {
            continue;
        }
        let model = Arc::new(model);
        let error = check_clips(&ctx, &model);
        let name = path.strip_prefix(&dir).unwrap_or(&path).display().to_string();
        assert!(error <= TOLERANCE, "{name}: GPU pose differs from the CPU's by {error:e}");
        checked.push((name, model.rig.clips.len(), error));
    }
    eprintln!("GPU pose vs CPU pose, largest error per model: {checked:?}");
    for needed in ["Fox", "CesiumMan", "RobotExpressive", "InterpolationTest"] {
        assert!(checked.iter().any(|(n, _, _)| n.contains(needed)), "{needed} was not checked: {checked:?}");
    }
    assert_no_messages(&ctx.validation_messages());
}

/// `crowd` (posed on the GPU) against `twin` (the same crowd on the CPU)
/// over `frames` frames, `drive` changing both before each; the largest error.
fn check_crowd(
    ctx: &GpuContext,
    model: &Arc<Model>,
    twin: Crowd,
    crowd: Crowd,
    frames: u32,
    drive: impl Fn(&mut Crowd, u32),
) -> f64 {
    check_crowd_on(ctx, model, twin, crowd, frames, drive, None)
}

/// `check_crowd`, each frame recorded on a thread of `pool` when given
/// (the upload then writes the crowd in pieces on its threads).
fn check_crowd_on(
    ctx: &GpuContext,
    model: &Arc<Model>,
    mut twin: Crowd,
    mut crowd: Crowd,
    frames: u32,
    drive: impl Fn(&mut Crowd, u32),
    pool: Option<&rayon::ThreadPool>,
) -> f64 {
    crowd.set_pose_on_gpu(true).expect("GPU pose");
    let program = crowd.pose_program().cloned().expect("a program");
    let mut pass = PosedPass::new(ctx, model, crowd.len(), program);
    let size = skeleton_size(model);
    let mut worst = 0.0f64;
    for frame in 0..frames {
        drive(&mut twin, frame);
        drive(&mut crowd, frame);
        twin.frame(frame).expect("CPU frame");
        crowd.frame(frame).expect("GPU frame");
        let (palette, stats) = match pool {
            Some(pool) => pool.install(|| pass.frame(ctx, &crowd)),
            None => pass.frame(ctx, &crowd),
        };
        assert_eq!(stats.palette_bytes_written, 0);
        assert_eq!(stats.posed_characters as usize, crowd.len(), "frame {frame}: every character posed");
        worst = worst.max(palette_error(&pass.pass, &palette, &twin, size));
        assert!(morph_error(&crowd, &twin) <= 1e-6, "frame {frame}: morph weights");
    }
    pass.destroy(ctx);
    worst
}

#[test]
fn the_builtin_character_poses_on_the_gpu_under_every_layer() {
    builtin_crowd_poses_on_the_gpu_as_on_the_cpu(builtin::model(), "slerp");
}

#[test]
fn an_nlerp_rig_poses_on_the_gpu_as_its_characters_do_on_the_cpu() {
    let options =
        asset::LoadOptions { rotation_blend: RotationBlend::Nlerp, ..asset::LoadOptions::default() };
    let model = Arc::new(asset::load_default_character_with(&options).expect("built-in character"));
    // The rig's nlerp moves the crowd's palettes by more than the GPU
    // pose's tolerance, so matching the CPU's shows the GPU nlerps too.
    let slerp = builtin::model();
    let controller = builtin::controller(&model);
    let crowd = |model: &Arc<Model>| Crowd::new(model.rig.clone(), controller.clone(), 12, 2.0, 30.0, 1);
    let (mut a, mut b) = (crowd(&model).expect("crowd"), crowd(&slerp).expect("crowd"));
    let mut apart = 0.0f32;
    for frame in 0..30 {
        for c in [&mut a, &mut b] {
            for i in 0..c.len() {
                c.character_mut(i).set_named("speed", ParameterValue::Float((i % 6) as f32 * 0.7)).unwrap();
            }
            c.frame(frame).expect("frame");
        }
        for (x, y) in a.characters().iter().zip(b.characters()) {
            for (p, q) in x.pose().palettes.iter().zip(y.pose().palettes) {
                apart = apart.max((p.to_matrix() - q.to_matrix()).amax());
            }
        }
    }
    let size = skeleton_size(&model) as f32;
    eprintln!("nlerp against slerp on the CPU: palettes {:e} apart (relative)", apart / size);
    assert!(f64::from(apart / size) > TOLERANCE, "nlerp and slerp too close to tell apart");
    builtin_crowd_poses_on_the_gpu_as_on_the_cpu(model, "nlerp");
}

/// The built-in character's crowd under its controller, every layer
/// driven, posed on the GPU and on the CPU with the rig's rotation blend.
fn builtin_crowd_poses_on_the_gpu_as_on_the_cpu(model: Arc<Model>, blend: &str) {
    let Some(ctx) = context() else { return };
    let controller = builtin::controller(&model);
    let make = || Crowd::new(model.rig.clone(), controller.clone(), 12, 2.0, 30.0, 1).expect("crowd");
    let drive = |crowd: &mut Crowd, frame: u32| {
        for i in 0..crowd.len() {
            let c = crowd.character_mut(i);
            let f = frame as usize + i;
            if frame == 0 {
                c.set_named("speed", ParameterValue::Float((i % 6) as f32 * 0.7)).unwrap();
            }
            if f % 37 == 3 {
                c.set_named("wave", ParameterValue::Trigger).unwrap();
            }
            if f % 41 == 5 {
                c.set_named("jump", ParameterValue::Trigger).unwrap();
            }
            if f % 23 == 7 {
                c.set_named("talk", ParameterValue::Float((f % 3) as f32 * 0.5)).unwrap();
            }
        }
    };
    let mut layered = 0;
    let mut twin = make();
    for frame in 0..60 {
        drive(&mut twin, frame);
        twin.frame(frame).unwrap();
        layered += twin.characters().iter().filter(|c| c.layer_weights().iter().any(|&w| w > 0.0)).count();
    }
    assert!(layered > 0, "the drive exercises the layers");
    let error = check_crowd(&ctx, &model, make(), make(), 60, drive);
    eprintln!("built-in character under its controller ({blend}): GPU pose within {error:e}");
    assert!(error <= TOLERANCE, "GPU pose differs from the CPU's by {error:e}");
    assert_no_messages(&ctx.validation_messages());
}

/// A crowd of three upload pieces and more, its frames recorded on a pool
/// of two threads: the pieces' playback and records, joined in character
/// order, pose every character as the CPU does.
#[test]
fn a_crowd_in_pieces_on_a_pool_poses_on_the_gpu_as_on_the_cpu() {
    let Some(ctx) = context() else { return };
    let model = builtin::model();
    let controller = builtin::controller(&model);
    let n = 3 * vkskin::render::chunked::CHUNK + 100;
    let make = || Crowd::new(model.rig.clone(), controller.clone(), n, 2.0, 30.0, 1).expect("crowd");
    let drive = |crowd: &mut Crowd, frame: u32| {
        if frame == 0 {
            for i in 0..crowd.len() {
                let c = crowd.character_mut(i);
                c.set_named("speed", ParameterValue::Float((i % 6) as f32 * 0.7)).unwrap();
            }
        }
    };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let error = check_crowd_on(&ctx, &model, make(), make(), 3, drive, Some(&pool));
    assert!(error <= TOLERANCE, "GPU pose differs from the CPU's by {error:e}");
    assert_no_messages(&ctx.validation_messages());
}

#[test]
fn a_turning_root_loses_its_turn_on_the_gpu_as_on_the_cpu() {
    let Some(ctx) = context() else { return };
    // The built-in controller with root motion taken from the hips, which
    // yaw to and fro in Walk and Run (its root only travels), so that the
    // removal's turn is not the identity.
    let text = vkskin::character::controller::DEFAULT_CONTROLLER
        .replace("root_motion: \"Root\"", "root_motion: \"Hips\"");
    assert_ne!(
        text,
        vkskin::character::controller::DEFAULT_CONTROLLER,
        "the built-in controller names its root"
    );
    let model = builtin::model();
    let controller = Arc::new(Controller::from_text(&text, &model).expect("controller"));
    let make = || Crowd::new(model.rig.clone(), controller.clone(), 6, 2.0, 30.0, 1).expect("crowd");
    let drive = |crowd: &mut Crowd, frame: u32| {
        for i in 0..crowd.len() {
            if frame == 0 {
                let speed = ParameterValue::Float(1.0 + i as f32 * 0.5);
                crowd.character_mut(i).set_named("speed", speed).unwrap();
            }
        }
    };
    let mut twin = make();
    let mut turned = 0.0f32;
    for frame in 0..20 {
        drive(&mut twin, frame);
        twin.frame(frame).unwrap();
        turned = twin.characters().iter().map(|c| c.root_motion().yaw.abs()).fold(turned, f32::max);
    }
    assert!(turned > 1e-3, "the hips turn: {turned} rad at most in one frame");
    let error = check_crowd(&ctx, &model, make(), make(), 20, drive);
    eprintln!("built-in character, root motion from its hips: GPU pose within {error:e}");
    assert!(error <= TOLERANCE, "GPU pose differs from the CPU's by {error:e}");
    assert_no_messages(&ctx.validation_messages());
}

#[test]
fn robot_expressive_poses_on_the_gpu_under_its_locomotion_controller() {
    let Some(ctx) = context() else { return };
    let Some(model) = shared_model("RobotExpressive/RobotExpressive.glb") else { return };
    let ron = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/controllers/robot_expressive.ron");
    let controller = Arc::new(Controller::load(&ron, &model.rig, u64::MAX).expect("controller"));
    let make = || Crowd::new(model.rig.clone(), controller.clone(), 8, 3.0, 30.0, 1).expect("crowd");
    let drive = |crowd: &mut Crowd, frame: u32| {
        for i in 0..crowd.len() {
            let c = crowd.character_mut(i);
            if frame == 0 {
                c.set_named("speed", ParameterValue::Float(i as f32 * 0.5)).unwrap();
            }
            if (frame as usize + 3 * i) % 29 == 4 {
                c.set_named("jump", ParameterValue::Trigger).unwrap();
            }
        }
    };
    let error = check_crowd(&ctx, &model, make(), make(), 40, drive);
    eprintln!("RobotExpressive under its controller: GPU pose within {error:e}");
    assert!(error <= TOLERANCE, "GPU pose differs from the CPU's by {error:e}");
    assert_no_messages(&ctx.validation_messages());
}
