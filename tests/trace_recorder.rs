//! A frame trace through the renderer in this process (`TraceRecorder`):
//! what a GPU frame budget reads while a trace records.
//!
//! A test binary of its own: a trace records on its own thread, but
//! `tracing` caches each callsite's interest for the whole process, and a
//! test beside it that reaches the same callsites without a recorder can
//! race that cache and leave the trace without its GPU spans (seen once in
//! three runs beside another renderer test). Needs a Vulkan device, as the
//! `gpu` tests do.

mod common;

use common::steered_crowd::four_under_a_minutes_budget;
use common::{assert_no_messages, context, trace};
use vkskin::render::trace::TraceRecorder;

/// Waiting for every frame under a frame trace (as the viewer does when
/// its overlay's font atlas changes) hands each slot's last frame to the
/// trace and keeps its queries: every later frame still reads the GPU
/// times of the frame before it in its slot, so the GPU frame budget keeps
/// steering (the viewer's `--trace` starved it of its first measurements
/// until 2026-12-07), and each frame is traced once.
#[test]
fn waiting_for_every_frame_under_a_trace_keeps_each_frames_gpu_times() {
    let Some(ctx) = context() else { return };
    let dir = tempfile::tempdir().expect("scratch folder");
    let path = dir.path().join("trace.json");
    let recorder = TraceRecorder::start();
    let (mut renderer, mut crowd, camera) = four_under_a_minutes_budget(&ctx);
    let frames = 6;
    let mut ignore = |_: u64, _: &[u8]| Ok(());
    let mut measured = Vec::new();
    for i in 0..frames {
        crowd.frame(i).expect("frame");
        let report = renderer.render_frame(&ctx, &crowd, &camera, false, &mut ignore).expect("render");
        measured.push(report.previous_gpu.is_some());
        renderer.wait_all(&ctx).expect("wait for every frame");
    }
    let steered = renderer.gpu_frame_triangles();
    renderer.finish(&ctx, &mut ignore).expect("finish");
    renderer.destroy(&ctx);
    recorder.write(&path).expect("trace written");
    // Frames 0 and 1 are their slots' first; every later one reads its slot's last.
    assert_eq!(measured, [false, false, true, true, true, true]);
    assert!(steered.is_some(), "the GPU frame budget measured frames");
    let t = trace::check(&path, &["record", "submit", "wait"]);
    let mut traced: Vec<_> = t.gpu().filter(|s| s.name == "GPU frame").filter_map(|s| s.frame).collect();
    traced.sort_unstable();
    assert_eq!(traced, (0..u64::from(frames)).collect::<Vec<_>>(), "each frame traced once");
    assert_no_messages(&ctx.validation_messages());
}
