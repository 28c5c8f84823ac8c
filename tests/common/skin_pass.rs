//! The skin pass on its own, for the tests that check it as a component
//! (several models in one pass, its layouts, its allocations): one frame
//! of `SkinPass::record` into a ring slot, its whole output copied back.
//! Commands never skin this way: they go through `Renderer::draw_frame`
//! (`Renderer::read_skinned` for `dump --skinning gpu`).

use vkskin::anim::SkinInput;
use vkskin::gpu::frame::Retired;
use vkskin::gpu::{FrameRing, GpuContext, GpuError};
use vkskin::render::layout::SkinnedVertex;
use vkskin::render::readback::Readback;
use vkskin::render::skin_levels::SkinLevels;
use vkskin::render::skin_pass::{OUTPUT_STRIDE, SkinPass, SkinStats};

/// Runs one frame of `pass` (its `record` into the ring's next slot, at
/// detail `levels` when given), copies the whole output into `readback`
/// (grown as needed; a replaced buffer is retired through the ring),
/// submits, waits, and returns every output vertex.
pub fn skin_and_read_back(
    ctx: &GpuContext,
    ring: &mut FrameRing,
    pass: &mut SkinPass,
    inputs: &[SkinInput],
    levels: Option<SkinLevels>,
    readback: &mut Readback,
) -> Result<(Vec<SkinnedVertex>, SkinStats), GpuError> {
    let count = pass.total_vertices() as usize;
    let bytes = count as u64 * OUTPUT_STRIDE;
    if readback.buffer.size < bytes {
        let old = std::mem::replace(readback, Readback::new(ctx, bytes)?);
        ring.retire(Retired::Buffer(old.buffer));
    }
    let slot = ring.begin_frame(ctx)?;
    let recorded = pass.record(ctx, slot, inputs, levels, false).and_then(|stats| {
        readback.record_copies(ctx, slot.command_buffer, pass.output_copies())?;
        Ok(stats)
    });
    // Submit even after an error, so that the ring is not left recording.
    let submitted = ring.end_frame(ctx, &[], &[]);
    let stats = recorded?;
    submitted?;
    ring.wait_all(ctx)?;
    Ok((readback.vertices(count)?, stats))
}
