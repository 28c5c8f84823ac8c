//! The device-local palette ([`DevicePalette`]) that the shaders read in
//! the staged upload modes and that the GPU pose writes: one for every
//! frame slot, not one per slot. Each slot stages what changed in its own
//! host buffer and copies it here, so a character is uploaded once per
//! pose, however many slots there are: a character posed every 2nd frame
//! uploads every 2nd frame (with a palette per slot it was written every
//! time a slot came round, since its pose had changed since that slot's
//! last frame). The price is a barrier: a frame's writes here wait for the
//! earlier frames' reads (`record_write_after_reads`).

use super::palette_reads::{PALETTE_TEXEL_FORMAT, PaletteReads, palette_view, replace_view};
use super::slot_buffers::{Grower, GrowthLimits};
use crate::gpu::barrier::{self, Access};
use crate::gpu::{Buffer, FrameRing, GpuContext, GpuError};
use ash::vk;
use gpu_allocator::MemoryLocation;

/// Written by copies (staged uploads) and by the GPU pose (by pointer),
/// read as texels (skin.comp, mesh_skinned.vert) or by pointer, copied
/// out by readbacks (tests, checks).
const USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS.as_raw()
        | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER.as_raw()
        | vk::BufferUsageFlags::TRANSFER_DST.as_raw()
        | vk::BufferUsageFlags::TRANSFER_SRC.as_raw(),
);

/// Every access to the palette by an earlier frame that a frame's write
/// must come after: the skin dispatch's and the vertex skinning's reads,
/// readback copies, and the previous writes (copies, GPU pose).
const EARLIER_ACCESSES: &[Access] = &[
    Access::ComputeShaderUniformTexelRead,
    Access::ComputeShaderStorageRead,
    Access::VertexShaderStorageRead,
    Access::TransferRead,
    Access::CopyWrite,
    Access::ComputeShaderWrite,
];

/// The shared device-local palette and the pose each character's entries hold.
pub(super) struct DevicePalette {
    pub(super) buffer: Buffer,
    /// Its texel view where the shaders read texels, else null; replaced
    /// and retired with the buffer.
    pub(super) view: vk::BufferView,
    /// Per character, the pose version its entries hold, when the host
    /// wrote them (`None`: unknown, or written by the GPU pose).
    pub(super) held: Vec<Option<u64>>,
}

impl DevicePalette {
    /// An empty palette (one entry), with its view when `reads` reads texels.
    pub(super) fn new(ctx: &GpuContext, reads: PaletteReads) -> Result<Self, GpuError> {
        let buffer = Buffer::new(ctx, "skin device palette", 64, USAGE, MemoryLocation::GpuOnly)?;
        let mut palette = DevicePalette { buffer, view: vk::BufferView::null(), held: Vec::new() };
        if reads == PaletteReads::Texels {
            match palette_view(ctx, &palette.buffer) {
                Ok(view) => palette.view = view,
                Err(e) => {
                    palette.destroy(ctx);
                    return Err(e);
                }
            }
        }
        Ok(palette)
    }

    /// Grows it to `bytes` (never past `limits`), its view remade when
    /// `reads` reads texels; a regrown palette holds no pose. The old
    /// buffer and view are retired through `ring`.
    pub(super) fn grow(
        &mut self,
        ctx: &GpuContext,
        ring: &mut FrameRing,
        bytes: u64,
        limits: GrowthLimits,
        reads: PaletteReads,
    ) -> Result<(), GpuError> {
        let grower = Grower { ctx, limits, owner: "skin".into() };
        let gpu = MemoryLocation::GpuOnly;
        if grower.grow(ring, &mut self.buffer, bytes, "device palette", USAGE, gpu)? {
            self.forget();
            if reads == PaletteReads::Texels {
                replace_view(ctx, ring, &mut self.view, &self.buffer, PALETTE_TEXEL_FORMAT)?;
            }
        }
        Ok(())
    }

    /// Holds no known pose any more (after a regrowth or a mode change).
    pub(super) fn forget(&mut self) {
        self.held.iter_mut().for_each(|h| *h = None);
    }

    /// Records, into `cmd`, the barrier before this frame's writes to the
    /// palette (its staged copy, its GPU pose): after every earlier
    /// frame's reads and writes of it on this queue. Frames in flight share
    /// the palette, so frame N+1's copy must not overwrite entries frame N's
    /// skin dispatch or vertex shaders are still reading; a pipeline
    /// barrier orders it after all earlier commands submitted to the queue.
    pub(super) fn record_write_after_reads(ctx: &GpuContext, cmd: vk::CommandBuffer) {
        barrier::record_global(ctx, cmd, EARLIER_ACCESSES, &[Access::CopyWrite, Access::ComputeShaderWrite]);
    }

    /// Frees the view and the buffer; the caller waited for the GPU.
    pub(super) fn destroy(self, ctx: &GpuContext) {
        // SAFETY: the caller waited for the GPU; a null view is ignored.
        unsafe { ctx.device.destroy_buffer_view(self.view, None) };
        self.buffer.destroy(ctx);
    }
}
