//! Reading skinned vertices back to the host (`dump --skinning gpu`,
//! tests): a host-visible buffer, the copy into it and the barriers around
//! it, and the frame output that ends a skinning-only frame with that copy
//! (`Renderer::read_skinned`). It never reads before the frame's fence.

use super::error::RenderError;
use super::frame::{FrameContents, FrameEnd, FrameInput, FrameOutput};
use super::frame_settings::SkinningPlacement;
use super::layout::{PackedVertex, SkinnedVertex};
use super::renderer::{RenderSettings, Renderer};
use super::session::with_gpu;
use super::skin_pass::{CharacterId, OUTPUT_STRIDE};
use crate::anim::{FramePoses, SkinInput};
use crate::asset::Model;
use crate::gpu::barrier::{self, Access};
use crate::gpu::frame::Retired;
use crate::gpu::{Buffer, FrameRing, GpuContext, GpuError, GpuOptions};
use ash::vk;
use gpu_allocator::MemoryLocation;
use std::sync::Arc;

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
        let region = vk::BufferCopy { src_offset, dst_offset: 0, size };
        self.record_copies(ctx, cmd, [(src, region)])
    }

    /// `record_copy` of several regions, each from its own buffer (a skin
    /// pass's output gathered character by character,
    /// `SkinPass::output_copies`), then one barrier. Regions that continue
    /// one another in the same buffer go in one copy.
    pub fn record_copies(
        &self,
        ctx: &GpuContext,
        cmd: vk::CommandBuffer,
        copies: impl IntoIterator<Item = (vk::Buffer, vk::BufferCopy)>,
    ) -> Result<(), GpuError> {
        let copy = |(src, region): (vk::Buffer, vk::BufferCopy)| {
            let end = region.dst_offset.saturating_add(region.size);
            if end > self.buffer.size {
                return Err(GpuError::new(format!("readback of {end} bytes into {}", self.buffer.size)));
            }
            if region.size > 0 {
                // SAFETY: cmd is recording; both buffers are live and the region fits.
                unsafe { ctx.device.cmd_copy_buffer(cmd, src, self.buffer.raw, &[region]) };
            }
            Ok(())
        };
        let mut pending: Option<(vk::Buffer, vk::BufferCopy)> = None;
        for (src, region) in copies {
            if let Some((from, joined)) = &mut pending
                && *from == src
                && joined.src_offset + joined.size == region.src_offset
                && joined.dst_offset + joined.size == region.dst_offset
            {
                joined.size += region.size;
                continue;
            }
            if let Some(done) = pending.replace((src, region)) {
                copy(done)?;
            }
        }
        if let Some(done) = pending {
            copy(done)?;
        }
        // Transfer write -> host read: the host reads the mapped memory after
        // waiting for the fence, and a fence wait alone only makes writes
        // visible that were made available to the host domain; this barrier
        // does that. The memory is HOST_COHERENT, so no invalidate is needed.
        barrier::record_global(ctx, cmd, &[Access::CopyWrite], &[Access::HostRead]);
        Ok(())
    }

    /// The first `len` bytes, copied out of the mapped memory. Call only
    /// after the fence of the frame that recorded the copy.
    pub fn bytes(&self, len: usize) -> Result<Vec<u8>, GpuError> {
        let bytes = self.buffer.mapped().ok_or_else(|| GpuError::new("readback buffer is not mapped"))?;
        Ok(bytes.get(..len).ok_or_else(|| GpuError::new("readback shorter than asked"))?.to_vec())
    }

    /// The first `count` skinned vertices, copied out of the mapped memory
    /// and unpacked. Call only after the fence of the frame that recorded
    /// the copy.
    pub fn vertices(&self, count: usize) -> Result<Vec<SkinnedVertex>, GpuError> {
        let bytes = self.buffer.mapped().ok_or_else(|| GpuError::new("readback buffer is not mapped"))?;
        let end = count * OUTPUT_STRIDE as usize;
        let bytes = bytes.get(..end).ok_or_else(|| GpuError::new("readback shorter than asked"))?;
        // Read unaligned: no assumption on the mapping's alignment.
        Ok(bytes
            .chunks_exact(OUTPUT_STRIDE as usize)
            .map(|v| bytemuck::pod_read_unaligned::<PackedVertex>(v).unpack())
            .collect())
    }
}

/// A skinning-only frame that ends with every skinned vertex copied to
/// `readback`, read after its fence.
struct SkinnedReadback<'a> {
    readback: &'a Readback,
}

impl FrameOutput for SkinnedReadback<'_> {
    fn record_end(&mut self, ctx: &GpuContext, end: &FrameEnd) -> Result<(), GpuError> {
        self.readback.record_copies(ctx, end.cmd, end.skin.output_copies())
    }

    fn submitted(
        &mut self,
        ctx: &GpuContext,
        ring: &mut FrameRing,
        _: usize,
        _: u64,
    ) -> Result<(), GpuError> {
        ring.wait_all(ctx)
    }
}

impl Renderer {
    /// Skins `poses` (one per character) in one compute frame and returns
    /// every output vertex, read back after the frame's fence: characters
    /// in order, each one's primitives as `SkinPass::outputs` lays them out.
    /// The readback buffer is made (or grown, the old one retired) as needed.
    pub fn read_skinned(
        &mut self,
        ctx: &GpuContext,
        poses: &dyn FramePoses,
    ) -> Result<Vec<SkinnedVertex>, RenderError> {
        let count = self.skin.total_vertices() as usize;
        let bytes = count as u64 * OUTPUT_STRIDE;
        if self.readback.as_ref().is_none_or(|r| r.buffer.size < bytes) {
            let new = Readback::new(ctx, bytes.max(16))?;
            if let Some(old) = self.readback.replace(new) {
                self.ring.retire(Retired::Buffer(old.buffer));
            }
        }
        let readback = self.readback.take().expect("made above");
        // The compute pass writes the vertices (the vertex path has none to read).
        let placement = std::mem::replace(&mut self.settings.frame.placement, SkinningPlacement::Compute);
        let input = FrameInput { poses, contents: FrameContents::Skinning { seen_by: None } };
        let drawn = self.draw_frame(ctx, &input, &mut SkinnedReadback { readback: &readback });
        self.settings.frame.placement = placement;
        let vertices = drawn.and_then(|_| Ok(readback.vertices(count)?));
        self.readback = Some(readback);
        vertices
    }
}

/// Skins one pose of `model` in one compute frame on a device opened with
/// `options` (the session closed after, validation messages an error) and
/// returns its positions per instanced primitive, in `Model::instances`
/// then primitive order (`vkskin dump --skinning gpu`).
pub fn skin_pose_on_gpu(
    options: &GpuOptions,
    model: Arc<Model>,
    pose: SkinInput,
) -> Result<Vec<Vec<[f32; 3]>>, RenderError> {
    with_gpu(options, |ctx| {
        // The smallest target: nothing is drawn, but a renderer has one.
        let settings = RenderSettings { msaa: false, ..RenderSettings::sized(1, 1) };
        let mut renderer = Renderer::new(ctx, model, settings)?;
        let vertices = renderer.read_skinned(ctx, &[pose]);
        let positions = vertices.map(|vertices| {
            let outputs = renderer.outputs(CharacterId(0));
            outputs
                .iter()
                .map(|o| {
                    let range = o.output_offset as usize..(o.output_offset + o.vertex_count) as usize;
                    vertices[range].iter().map(|v| [v.position[0], v.position[1], v.position[2]]).collect()
                })
                .collect()
        });
        renderer.destroy(ctx);
        positions
    })
}
