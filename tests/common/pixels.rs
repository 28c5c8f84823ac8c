//! Rendering a clip headless and reading its pixels, for the render tests.

use super::assert_no_validation_messages;
use std::sync::Arc;
use vkskin::asset::Model;
use vkskin::character::{Controller, Timeline};
use vkskin::gpu::GpuContext;
use vkskin::render::headless::{self, HeadlessRequest};

/// Renders `request` of `model` playing `clip` from `start` seconds at
/// `fps` (as `vkskin render --clip` does), and returns every frame's RGBA8
/// pixels; fails on any validation message.
pub fn render_clip(
    ctx: &GpuContext,
    model: &Arc<Model>,
    clip: usize,
    start: f64,
    fps: f64,
    request: &HeadlessRequest,
) -> Vec<Vec<u8>> {
    let controller = Arc::new(Controller::single_clip(model, Some(clip), true).expect("controller"));
    let mut timeline = Timeline::seeking(model.rig.clone(), controller, start, fps).expect("timeline");
    let mut frames = Vec::new();
    headless::render(ctx, model.clone(), &mut timeline, None, request, &mut |i, rgba| {
        assert_eq!(i as usize, frames.len(), "frames arrive in order");
        frames.push(rgba.to_vec());
        Ok(())
    })
    .expect("render");
    assert_no_validation_messages(ctx);
    assert_eq!(frames.len(), request.frames as usize);
    frames
}

/// Non-background pixels: those that differ from the top-left corner (the
/// tests frame their models so that it is always background).
pub fn mask(rgba: &[u8]) -> Vec<bool> {
    let bg = [rgba[0], rgba[1], rgba[2]];
    rgba.chunks_exact(4).map(|p| (0..3).any(|c| p[c].abs_diff(bg[c]) > 3)).collect()
}

/// How many pixels one mask has and the other has not.
pub fn differing(a: &[bool], b: &[bool]) -> usize {
    a.iter().zip(b).filter(|(x, y)| x != y).count()
}
