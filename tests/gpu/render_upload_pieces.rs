//! A crowd's upload in pieces (`skin_pass::upload_pieces`): on the threads
//! of a pool, the pieces write every character's palette and morph
//! weights where one thread writes them, queue the same copies, and skin
//! each character as the CPU does.

use crate::common::{assert_no_validation_messages, context};
use crate::render_skinning::{Rig, compare};
use crate::synthetic_models::{Synthetic, pose_synthetic, synthetic_model};
use std::sync::Arc;
use vkskin::anim::SkinInput;
use vkskin::render::chunked::CHUNK;
use vkskin::render::skin_pass::SkinStats;

/// Two frames of a crowd of three pieces and a bit (the second frame
/// changes every third character's pose), skinned and read back, on this
/// thread and on a pool of two: each character matches its CPU pose, and
/// both runs write the same bytes.
#[test]
fn a_crowd_uploads_in_pieces_on_a_pool_as_on_one_thread() {
    let Some(ctx) = context() else { return };
    let model = Arc::new(synthetic_model(0.0));
    let n = 3 * CHUNK + 100;
    // A few distinct poses, shared round the crowd.
    let mut poses: Vec<Synthetic> = (0..7).map(|_| Synthetic::new(&model)).collect();
    for (k, pose) in poses.iter_mut().enumerate() {
        pose_synthetic(&model, pose, 3 * k as u32);
    }
    let mut later: Vec<Synthetic> = (0..7).map(|_| Synthetic::new(&model)).collect();
    for (k, pose) in later.iter_mut().enumerate() {
        pose_synthetic(&model, pose, 3 * k as u32 + 1);
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let mut runs: Vec<Vec<SkinStats>> = Vec::new();
    for on_pool in [false, true] {
        let mut rig = Rig::new(&ctx);
        let ids: Vec<_> = (0..n).map(|c| rig.add(&ctx, &model, c == 0)).collect();
        let mut stats = Vec::new();
        for frame in 0..2u64 {
            // Frame 1 moves every third character to a later pose.
            let moved = |c: usize| frame == 1 && c.is_multiple_of(3);
            let pose = |c: usize| if moved(c) { &later[c % 7] } else { &poses[c % 7] };
            let inputs: Vec<SkinInput> = (0..n)
                .map(|c| SkinInput { pose: pose(c).view(), version: if moved(c) { 2 } else { 1 } })
                .collect();
            let (out, frame_stats) = match on_pool {
                false => rig.skin_at(&ctx, &inputs, None),
                true => pool.install(|| rig.skin_at(&ctx, &inputs, None)),
            };
            for (c, id) in ids.iter().enumerate() {
                compare(&rig.pass, *id, &pose(c).view(), &out, &format!("character {c} frame {frame}"));
            }
            stats.push(SkinStats { write_ns: 0, timestamps: None, copy_timestamps: None, ..frame_stats });
        }
        assert!(
            stats[1].palette_bytes_written * 2 < stats[0].palette_bytes_written,
            "frame 1 uploads the moved"
        );
        runs.push(stats);
        rig.destroy(&ctx);
    }
    assert_eq!(runs[0], runs[1], "what one thread and the pool wrote");
    assert_no_validation_messages(&ctx);
}
