//! The skinned output ([`SkinnedOutput`]): one for every frame slot, a
//! buffer per window (`OutputWindows`). The output is the crowd's largest
//! buffer by far: 100,000 built-in characters at full detail need 11.7 GB,
//! and a copy per slot doubled it. So each frame holds only what it skins,
//! a character's level's vertices (`batches`): the same crowd framed whole,
//! nearly all at the coarsest level, needs 0.17 GB. The buffers grow with
//! the frames, and shrink again once they have held four times what the
//! frames used for [`SHRINK_AFTER_FRAMES`] frames in a row (one full-detail
//! frame, or a camera that passed close through a crowd, does not keep
//! gigabytes for the rest of the run). Nothing carries over in it from frame to frame: every
//! frame skins each vertex it draws before drawing it. The price is a
//! barrier: a frame's skinning waits for the earlier frames' reads and
//! writes of the output (`record_write_after_reads`). Where the frame
//! copies palettes or poses on the GPU (the crowd's usual modes), it
//! already waits at that point for the earlier frames' vertex shaders
//! (`DevicePalette::record_write_after_reads`), so the skinning starts no
//! later than it did with an output per slot.

use super::OUTPUT_STRIDE;
use super::plan::OutputWindows;
use super::slot_buffers::Grower;
use crate::gpu::barrier::{self, Access};
use crate::gpu::frame::{Retire, Retired};
use crate::gpu::{Buffer, GpuContext, GpuError};
use ash::vk;
use gpu_allocator::MemoryLocation;

/// Written by skin_main.glsl through storage bindings (one window, one
/// buffer each), read by mesh.vert by pointer, copied out by readbacks.
const USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::STORAGE_BUFFER.as_raw()
        | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS.as_raw()
        | vk::BufferUsageFlags::TRANSFER_SRC.as_raw(),
);

/// Every access to the output by an earlier frame that a frame's skinning
/// must come after: the draws' reads (by pointer in mesh.vert), readback
/// copies, and the earlier skinning's writes.
const EARLIER_ACCESSES: &[Access] = &[
    Access::VertexBufferRead,
    Access::VertexShaderStorageRead,
    Access::TransferRead,
    Access::ComputeShaderWrite,
];

/// Frames in a row a window's buffer must be oversized (more than four
/// times what each frame used of it) before it is replaced by a smaller
/// one: two seconds at 60 fps, so a camera that pulls back for a moment
/// keeps its buffers.
pub const SHRINK_AFTER_FRAMES: u32 = 120;

/// A buffer holding more than this many times what a frame used of it is oversized.
const SHRINK_RATIO: u64 = 4;

/// Buffers of at most this many bytes are never oversized: shrinking them
/// saves too little to be worth a reallocation.
pub const SHRINK_FROM_BYTES: u64 = 16 << 20;

/// The output windows' buffers and their device addresses.
pub(super) struct SkinnedOutput {
    /// A buffer per window: at least one, more kept while later frames may
    /// need them.
    pub(super) buffers: Vec<Buffer>,
    /// The device address of each of `buffers`.
    pub(super) addresses: Vec<vk::DeviceAddress>,
    /// Per buffer, how long it has been oversized.
    oversized: Vec<Oversized>,
}

/// How long a buffer has been oversized, and the most bytes a frame used
/// of it meanwhile.
#[derive(Debug, Clone, Copy, Default)]
struct Oversized {
    frames: u32,
    peak: u64,
}

impl SkinnedOutput {
    /// One window of one vertex.
    pub(super) fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        let buffer = window_buffer(ctx, "skin", 0, OUTPUT_STRIDE)?;
        let addresses = vec![buffer.device_address(ctx)];
        Ok(SkinnedOutput { buffers: vec![buffer], addresses, oversized: vec![Oversized::default()] })
    }

    /// Grows the output to hold a frame's `windows`: a buffer per window,
    /// each holding its window's vertices (with headroom, never past a
    /// window's capacity); a window's buffer made or replaced takes its
    /// new address, a replaced one is retired through `retire` (a
    /// submitted frame may still use it). Buffers past the frame's
    /// windows are kept for later frames, and every buffer shrinks once
    /// it has been oversized long enough (`shrink`).
    pub(super) fn fit(
        &mut self,
        grower: &Grower,
        retire: &mut impl Retire,
        windows: OutputWindows,
    ) -> Result<(), GpuError> {
        let capacity = u64::from(windows.vertices) * OUTPUT_STRIDE;
        // Named on growth only: an allocation that fails says what the frame needs.
        let what = |k: usize| {
            let total = u64::from(windows.total) * OUTPUT_STRIDE;
            format!("output {k} (the frame's skinned output: {total} bytes in {} buffers)", windows.count)
        };
        for k in 0..windows.count {
            let needed = windows.bytes(k);
            let k = k as usize;
            if k == self.buffers.len() {
                let size = needed.max(OUTPUT_STRIDE);
                let name = format!("{} {}", grower.owner, what(k));
                self.buffers.push(Buffer::new(grower.ctx, &name, size, USAGE, MemoryLocation::GpuOnly)?);
                self.addresses.push(self.buffers[k].device_address(grower.ctx));
                continue;
            }
            if self.buffers[k].size >= needed {
                continue;
            }
            let (what, limit) = (what(k), Some(capacity));
            let gpu = MemoryLocation::GpuOnly;
            if grower.grow_within(retire, &mut self.buffers[k], needed, limit, &what, USAGE, gpu)? {
                self.addresses[k] = self.buffers[k].device_address(grower.ctx);
            }
        }
        self.shrink(grower, retire, windows)
    }

    /// Counts each buffer oversized for this frame's `windows` (more than
    /// [`SHRINK_RATIO`] times the bytes the frame uses of it, and more
    /// than [`SHRINK_FROM_BYTES`]), and replaces each that has been so for
    /// [`SHRINK_AFTER_FRAMES`] frames in a row by one holding a quarter
    /// more than the most a frame used of it meanwhile; trailing buffers
    /// no frame used meanwhile go (the first stays). Replaced buffers are
    /// retired through `retire`.
    fn shrink(
        &mut self,
        grower: &Grower,
        retire: &mut impl Retire,
        windows: OutputWindows,
    ) -> Result<(), GpuError> {
        self.oversized.resize(self.buffers.len(), Oversized::default());
        for (k, oversized) in self.oversized.iter_mut().enumerate() {
            let used = if (k as u32) < windows.count { windows.bytes(k as u32) } else { 0 };
            let size = self.buffers[k].size;
            *oversized = if size > SHRINK_FROM_BYTES && size > used.saturating_mul(SHRINK_RATIO) {
                Oversized { frames: oversized.frames + 1, peak: oversized.peak.max(used) }
            } else {
                Oversized::default()
            };
        }
        let ripe = |o: &Oversized| o.frames >= SHRINK_AFTER_FRAMES;
        while self.buffers.len() > 1 && self.oversized.last().is_some_and(|o| ripe(o) && o.peak == 0) {
            self.oversized.pop();
            self.addresses.pop();
            retire.retire(Retired::Buffer(self.buffers.pop().expect("a buffer per entry")));
        }
        for k in 0..self.buffers.len() {
            if !ripe(&self.oversized[k]) {
                continue;
            }
            let peak = self.oversized[k].peak;
            let size = (peak + peak / 4).max(OUTPUT_STRIDE);
            let name = format!("{} output {k} (shrunk to {size} bytes)", grower.owner);
            let smaller = Buffer::new(grower.ctx, &name, size, USAGE, MemoryLocation::GpuOnly)?;
            retire.retire(Retired::Buffer(std::mem::replace(&mut self.buffers[k], smaller)));
            self.addresses[k] = self.buffers[k].device_address(grower.ctx);
            self.oversized[k] = Oversized::default();
        }
        Ok(())
    }

    /// Bytes of the output's buffers together.
    pub(super) fn bytes(&self) -> u64 {
        self.buffers.iter().map(|b| b.size).sum()
    }

    /// Records the barrier before a frame's skinning writes the output:
    /// after every earlier frame's reads and writes of it on this queue (a
    /// pipeline barrier orders it after all earlier commands submitted to
    /// the queue, other command buffers included). Write-after-read needs
    /// only the execution dependency; the earlier writes are made available
    /// too (write-after-write). Lavapipe runs in order, and the validation
    /// layer cannot follow the draws' pointer reads: neither can show a
    /// missing one.
    pub(super) fn record_write_after_reads(ctx: &GpuContext, cmd: vk::CommandBuffer) {
        barrier::record_global(ctx, cmd, EARLIER_ACCESSES, &[Access::ComputeShaderWrite]);
    }

    /// Frees the buffers; the caller waited for the GPU.
    pub(super) fn destroy(self, ctx: &GpuContext) {
        self.buffers.into_iter().for_each(|b| b.destroy(ctx));
    }
}

/// `owner`'s buffer for output window `k`, of `bytes` bytes.
fn window_buffer(ctx: &GpuContext, owner: &str, k: usize, bytes: u64) -> Result<Buffer, GpuError> {
    Buffer::new(ctx, &format!("{owner} output {k}"), bytes, USAGE, MemoryLocation::GpuOnly)
}
