//! Reading skinned vertices back to the host (tests, `dump --skinning gpu`):
//! a host-visible buffer, the copy into it and the barriers around it.

use super::layout::SkinnedVertex;
use super::skin_pass::{OUTPUT_STRIDE, SkinPass, SkinStats};
use crate::anim::SkinInput;
use crate::gpu::frame::Retired;
use crate::gpu::{Buffer, FrameRing, GpuContext, GpuError};
use ash::vk;
use gpu_allocator::MemoryLocation;

/// A host-visible (HOST_COHERENT, persistently mapped) buffer that GPU
/// results are copied into.
pub struct Readback {
    /// The buffer (TRANSFER_DST).
    pub buffer: Buffer,
}

impl Readback {
    /// A readback buffer of `bytes` bytes.
    pub fn new(ctx: &GpuContext, bytes: u64) -> Result<Self, GpuError> {
        let buffer = Buffer::new(
            ctx,
            "readback",
            bytes,
            vk::BufferUsageFlags::TRANSFER_DST,
            MemoryLocation::GpuToCpu,
        )?;
        Ok(Readback { buffer })
    }

    /// Records `src[src_offset..+size]` -> this buffer at 0, then the barrier
    /// that makes the copy visible to host reads after the fence.
    ///
    /// Precondition: the writes to `src` were made available to transfer
    /// reads by an earlier barrier in this command buffer (`SkinPass::record`
    /// records compute write -> TRANSFER_READ).
    pub fn record_copy(
        &self,
        ctx: &GpuContext,
        cmd: vk::CommandBuffer,
        src: vk::Buffer,
        src_offset: u64,
        size: u64,
    ) -> Result<(), GpuError> {
        if size > self.buffer.size {
            return Err(GpuError::new(format!("readback of {size} bytes into {}", self.buffer.size)));
        }
        if size > 0 {
            let region = vk::BufferCopy { src_offset, dst_offset: 0, size };
            // SAFETY: cmd is recording; both buffers are live and the region fits.
            unsafe { ctx.device.cmd_copy_buffer(cmd, src, self.buffer.raw, &[region]) };
        }
        // Transfer write -> host read: the host reads the mapped memory after
        // waiting for the fence, and a fence wait alone only makes writes
        // visible that were made available to the host domain; this barrier
        // does that. The memory is HOST_COHERENT, so no invalidate is needed.
        let barriers = [vk::MemoryBarrier2::default()
            .src_stage_mask(vk::PipelineStageFlags2::COPY)
            .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
            .dst_stage_mask(vk::PipelineStageFlags2::HOST)
            .dst_access_mask(vk::AccessFlags2::HOST_READ)];
        let dependency = vk::DependencyInfo::default().memory_barriers(&barriers);
        // SAFETY: recording command buffer; synchronization2 is enabled.
        unsafe { ctx.device.cmd_pipeline_barrier2(cmd, &dependency) };
        Ok(())
    }

    /// The first `count` skinned vertices, copied out of the mapped memory.
    /// Call only after the fence of the frame that recorded the copy.
    pub fn vertices(&self, count: usize) -> Result<Vec<SkinnedVertex>, GpuError> {
        let bytes = self.buffer.mapped().ok_or_else(|| GpuError::new("readback buffer is not mapped"))?;
        let end = count * OUTPUT_STRIDE as usize;
        let bytes = bytes.get(..end).ok_or_else(|| GpuError::new("readback shorter than asked"))?;
        // Copy bytes into an aligned Vec: no assumption on the mapping's alignment.
        let mut out = vec![SkinnedVertex { position: [0.0; 4], normal: [0.0; 4], tangent: [0.0; 4] }; count];
        bytemuck::cast_slice_mut::<SkinnedVertex, u8>(&mut out).copy_from_slice(bytes);
        Ok(out)
    }
}

/// Runs one frame of `pass` (its `record` into the ring's next slot), copies
/// the whole output into `readback` (grown as needed; a replaced buffer is
/// retired through the ring), submits, waits, and returns every output vertex.
pub fn skin_and_read_back(
    ctx: &GpuContext,
    ring: &mut FrameRing,
    pass: &mut SkinPass,
    inputs: &[SkinInput],
    readback: &mut Readback,
) -> Result<(Vec<SkinnedVertex>, SkinStats), GpuError> {
    let count = pass.total_vertices() as usize;
    let bytes = count as u64 * OUTPUT_STRIDE;
    if readback.buffer.size < bytes {
        let old = std::mem::replace(readback, Readback::new(ctx, bytes)?);
        ring.retire(Retired::Buffer(old.buffer));
    }
    let slot = ring.begin_frame(ctx)?;
    let recorded = pass.record(ctx, slot, inputs, false).and_then(|stats| {
        readback.record_copy(ctx, slot.command_buffer, pass.output_buffer(slot.index), 0, bytes)?;
        Ok(stats)
    });
    // Submit even after an error, so that the ring is not left recording.
    let submitted = ring.end_frame(ctx, &[], &[]);
    let stats = recorded?;
    submitted?;
    ring.wait_all(ctx)?;
    Ok((readback.vertices(count)?, stats))
}
