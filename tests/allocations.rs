//! The hot paths allocate nothing on the heap once warm: every CPU job
//! (sampling, compressed sampling, blending, hierarchy, palette, skinning,
//! the clip player, the pose output) and `AnimationSystem::update` on one
//! thread or two, counted by a global allocator on the test's thread and
//! the animation pool's. And what a character keeps on the heap: 10,000
//! built-in characters share their rig (skeleton, clips, meshes).
//!
//! A test binary of its own: its global allocator counts every allocation
//! of the process while counting is on, so no other test may run beside it.
//! Needs nothing but the source tree.

mod common;

use common::crowd::{crowd, drive, model};

use vkskin::testing::allocations::{CountingAllocator, count_allocations, count_bytes};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn hot_paths_allocate_nothing() {
    // One test, so that nothing else counts meanwhile.
    cpu_jobs_allocate_nothing();
    compressed_sampling_allocates_nothing();
    updates_allocate_nothing();
    draw_order_allocates_nothing();
    characters_share_their_rig();
}

/// A crowd's draw order, placed, chosen, sorted and foreseen in chunks on
/// the pool this thread works in (the crowd's, as a renderer's frame
/// runs it), allocates nothing.
fn draw_order_allocates_nothing() {
    use vkskin::anim::Sight;
    use vkskin::character::crowd::Crowd;
    use vkskin::render::DrawDetail;
    use vkskin::render::camera::{Camera, DEFAULT_FOV_Y};
    use vkskin::render::draw_order::{DrawOrder, LevelView};
    let model = model();
    let n = 3 * vkskin::render::chunked::CHUNK + 100;
    let mut crowd =
        Crowd::new(model.rig.clone(), common::crowd::controller(&model), n, 1.5, 60.0, 2).unwrap();
    crowd.frame(0).unwrap();
    assert!(rayon::current_thread_index().is_some(), "this thread works in the crowd's pool");
    let camera = Camera::frame_box([-60.0, 0.0, -60.0], [60.0, 2.0, 60.0], 16.0 / 9.0, DEFAULT_FOV_Y);
    let view = LevelView::new(&camera, 720).with_shadows([0.3, 1.0, 0.2]);
    let half = n as u32 / 2;
    let mut order = DrawOrder::new(n as u32, 1, &[(0, half), (half, n as u32 - half)]);
    let mut sight = vec![Sight::Unseen; n];
    let error = [0.0, 0.01, 0.04, 0.16, 0.64];
    let mut frame = || {
        order.place_and_foresee(&crowd, [0.0, 0.9, 0.0, 1.0], &view, DrawDetail::Auto, &mut sight);
        order.choose(&view, &error, DrawDetail::Auto);
    };
    frame();
    let ((), allocations) = count_allocations(|| (0..20).for_each(|_| frame()));
    assert_eq!(
        allocations, 0,
        "{allocations} heap allocations in 20 draw orders of {n} characters on a pool"
    );
}

/// Sampling a compressed clip, forward and with jumps.
fn compressed_sampling_allocates_nothing() {
    use vkskin::anim::Transform;
    use vkskin::anim::compression::{CompressedCursor, CompressedSampleJob, CompressionSettings, compress};
    let model = model();
    let walk = &model.clips[model.find_clip("Walk").unwrap()];
    let (clip, _) = compress(walk, &model.skeleton, &CompressionSettings::default()).unwrap();
    let mut cursor = CompressedCursor::new(&clip);
    let mut output = vec![Transform::IDENTITY; model.skeleton.len()];
    let mut weights = model.rest_morph_weights.clone();
    let ((), allocations) = count_allocations(|| {
        for i in 0..400 {
            CompressedSampleJob {
                clip: &clip,
                time: if i % 50 == 0 { 0.3 } else { f64::from(i) / 60.0 },
                rest: model.skeleton.rest(),
                rest_morph_weights: &model.rest_morph_weights,
                cursor: &mut cursor,
                output: &mut output,
                morph_output: &mut weights,
            }
            .run()
            .unwrap();
        }
    });
    assert_eq!(allocations, 0, "{allocations} heap allocations in 400 compressed samples");
}

/// Heap bytes per built-in character in a system of 10,000: far less than
/// one copy of the rig's clips, which every character shares.
/// What a built-in character may keep on the heap besides its palette
/// (issue 23's target for crowds of 100,000).
const CHARACTER_BUDGET: f64 = 6.0 * 1024.0;

fn characters_share_their_rig() {
    use vkskin::anim::BoneMatrix;
    use vkskin::anim::compression::raw_bytes;
    use vkskin::character::{AnimationSystem, Character};
    let model = model();
    let controller = common::crowd::controller(&model);
    let n = 10_000;
    // Updated too: what a character keeps once it has played (its scratch
    // is per thread, warmed by the first update).
    let (system, bytes) = count_bytes(|| {
        let mut system = AnimationSystem::single_threaded();
        system.reserve(n);
        for _ in 0..n {
            system.add(model.rig.clone(), controller.clone()).unwrap();
        }
        for frame in 0..120 {
            drive(&mut system, frame);
            system.update(1.0 / 60.0).unwrap();
        }
        system
    });
    let per_character = bytes as f64 / n as f64;
    let clip_bytes: usize = model.clips.iter().map(|c| raw_bytes(c)).sum();
    let palette = (model.rig.palette_len() * std::mem::size_of::<BoneMatrix>()) as f64;
    eprintln!(
        "{n} built-in characters: {per_character:.0} heap bytes per character ({} of them the \
         Character itself, {palette} its palette); the shared clips' keys: {clip_bytes} bytes",
        std::mem::size_of::<Character>()
    );
    assert!(per_character < clip_bytes as f64, "{per_character} bytes per character: clips copied?");
    assert!(
        per_character - palette <= CHARACTER_BUDGET,
        "{per_character:.0} heap bytes per character, {:.0} besides the palette: over the {CHARACTER_BUDGET} \
         bytes a crowd of 100,000 can afford (see guide::lod)",
        per_character - palette
    );
    drop(system);
}

fn updates_allocate_nothing() {
    let options = vkskin::asset::LoadOptions { compressed_clips: true, ..Default::default() };
    let compressed = std::sync::Arc::new(vkskin::asset::load_default_character_with(&options).unwrap());
    for (model, threads) in [(model(), 1), (model(), 2), (compressed, 1)] {
        let mut system = crowd(&model, 100, threads);
        // Warm up: every state entered, event buffers grown, threads started.
        for frame in 0..400 {
            drive(&mut system, frame);
            system.update(1.0 / 60.0).unwrap();
        }
        let (events, allocations) = count_allocations(|| {
            let mut events = 0;
            for frame in 400..700 {
                drive(&mut system, frame);
                events += system.update(1.0 / 60.0).unwrap().len();
            }
            events
        });
        assert!(events > 100, "the crowd walked: {events} events");
        let what = if model.samples_compressed_clips() { "compressed clips" } else { "exact clips" };
        assert_eq!(
            allocations, 0,
            "{threads} thread(s), {what}: {allocations} heap allocations in 300 updates"
        );
    }
}

/// Every CPU job, as a frame of a two-clip blend runs them.
fn cpu_jobs_allocate_nothing() {
    use nalgebra::Matrix4;
    use vkskin::anim::{
        BlendJob, BlendLayer, BlendTwoJob, BoneMatrix, ClipCursor, ClipPlayer, LocalToModelJob, PaletteJob,
        Pose, RotationBlend, RuntimeClip, SampleClipJob, SampleJob, SamplingCursor, SkinTransform,
        SkinningJob, SkinningMethod,
    };
    use vkskin::character::{DebugPose, PoseOutput};
    let model = model();
    let (joints, weights) = (model.skeleton.len(), model.rest_morph_weights.len());
    let clips = [model.find_clip("Walk").unwrap(), model.find_clip("Run").unwrap()];
    let mut cursors = clips.map(|c| SamplingCursor::new(&model.clips[c]));
    let runtime = clips.map(|c| {
        RuntimeClip::new(model.clips[c].clone(), model.skeleton.rest(), &model.rest_morph_weights).unwrap()
    });
    let mut clip_cursors = runtime.each_ref().map(ClipCursor::new);
    let mut poses = [Pose::new(joints, weights), Pose::new(joints, weights)];
    let mut blended = Pose::new(joints, weights);
    let mut world = vec![Matrix4::identity(); joints];
    let mut palette = vec![BoneMatrix::IDENTITY; model.skins[0].joints.len()];
    let mut output = PoseOutput::new(&model);
    let (instance, primitive) = (&model.instances[0], &model.meshes[model.instances[0].mesh].primitives[0]);
    let mut positions = vec![[0.0f32; 3]; primitive.vertex_count()];
    let mut normals = vec![[0.0f32; 3]; primitive.vertex_count()];
    let mut player = ClipPlayer::new(model.clips[clips[0]].duration);
    let mut events = 0usize;
    let mut frame = |i: usize| {
        let t = i as f64 / 60.0;
        for (k, &c) in clips.iter().enumerate() {
            let rotation_blend =
                if i.is_multiple_of(2) { RotationBlend::Slerp } else { RotationBlend::Nlerp };
            SampleJob {
                clip: &model.clips[c],
                time: t % f64::from(model.clips[c].duration),
                rest: model.skeleton.rest(),
                rest_morph_weights: &model.rest_morph_weights,
                rotation_blend,
                cursor: &mut cursors[k],
                output: &mut poses[k].locals,
                morph_output: &mut poses[k].morph_weights,
            }
            .run()
            .unwrap();
            // The runtime layout, including a rewind when time loops.
            SampleClipJob {
                clip: &runtime[k],
                time: t % f64::from(model.clips[c].duration),
                rotation_blend,
                cursor: &mut clip_cursors[k],
                output: &mut poses[k].locals,
                morph_output: &mut poses[k].morph_weights,
            }
            .run()
            .unwrap();
        }
        let layers = [
            BlendLayer { locals: &poses[0].locals, morph_weights: &poses[0].morph_weights, weight: 0.3 },
            BlendLayer { locals: &poses[1].locals, morph_weights: &poses[1].morph_weights, weight: 0.7 },
        ];
        BlendJob {
            layers: &layers,
            rest: model.skeleton.rest(),
            rest_morph_weights: &model.rest_morph_weights,
            rotation_blend: if i.is_multiple_of(2) { RotationBlend::Nlerp } else { RotationBlend::Slerp },
            output: &mut blended.locals,
            morph_output: &mut blended.morph_weights,
        }
        .run()
        .unwrap();
        BlendTwoJob {
            a: &poses[0].locals,
            b: &poses[1].locals,
            a_morph: &poses[0].morph_weights,
            b_morph: &poses[1].morph_weights,
            t: 0.4,
            output: &mut blended.locals,
            morph_output: &mut blended.morph_weights,
        }
        .run()
        .unwrap();
        LocalToModelJob {
            parents: model.skeleton.parents(),
            locals: &blended.locals,
            root: Matrix4::identity(),
            output: &mut world,
        }
        .run()
        .unwrap();
        PaletteJob { skin: &model.skins[0], models: &world, output: &mut palette }.run().unwrap();
        for method in SkinningMethod::ALL {
            SkinningJob {
                primitive,
                morph_weights: &blended.morph_weights[instance.morph_offset as usize..]
                    [..instance.morph_count as usize],
                transform: SkinTransform::Palette(&palette),
                method,
                out_positions: &mut positions,
                out_normals: Some(&mut normals),
                out_tangents: None,
            }
            .run()
            .unwrap();
        }
        output.update(&model, &blended.locals, &blended.morph_weights, DebugPose::Animated).unwrap();
        player.advance(1.0 / 60.0, &model.clips[clips[0]].events, |_| events += 1);
    };
    for i in 0..10 {
        frame(i);
    }
    let ((), allocations) = count_allocations(|| (10..400).for_each(&mut frame));
    assert_eq!(allocations, 0, "{allocations} heap allocations in 390 frames of the CPU jobs");
    assert!(events > 10, "the walk's footsteps fired ({events})");
}
