//! One frame slot's skinning buffers (see [`SlotBuffers`]): made empty,
//! grown to a layout's sizes (replaced buffers and views retired through the
//! ring), destroyed. It never writes their contents (`upload` does) nor
//! decides their sizes (`plan::SkinLayout::slot_sizes` does).

use super::palette_reads::{
    PALETTE_TEXEL_FORMAT, PaletteReads, TEXEL_FORMATS, is_texel, palette_view, replace_view, texel_view,
};
use super::plan::{OutputPlaces, SlotSizes};
use super::upload_pieces::UploadPiece;
use crate::gpu::frame::{Retire, Retired};
use crate::gpu::{Buffer, FrameRing, GpuContext, GpuError};
use ash::vk;
use gpu_allocator::MemoryLocation;

/// Weights, records and the characters to skin: storage buffers for the vertex path
/// and skin_storage.comp, uniform texel buffers for skin.comp.
const HOST_USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::STORAGE_BUFFER.as_raw() | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER.as_raw(),
);
/// The host palette is also the staging buffer of the staged modes.
/// Palettes are read by pointer (vertex skinning, skin_storage.comp) and as
/// uniform texel buffers (skin.comp, through `SlotBuffers::palette_view`).
const PALETTE_USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS.as_raw()
        | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER.as_raw()
        | vk::BufferUsageFlags::TRANSFER_SRC.as_raw(),
);

/// Where the frame placed each character's output (`plan::OutputPlaces`),
/// read by the draws by pointer.
const PLACES_USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::STORAGE_BUFFER.as_raw() | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS.as_raw(),
);

/// Per-slot buffers: what the host writes each frame. (What the GPU alone
/// writes, the device palette and the skinned output, is one for every
/// slot.)
pub(super) struct SlotBuffers {
    /// Host-visible palettes: read by the shaders (`PaletteUpload::InPlace`)
    /// or the staging of the pass's shared `DevicePalette`.
    pub(super) palette: Buffer,
    /// Texel view of `palette` (skin.comp's binding 5), replaced with it
    /// and retired through the ring with it.
    pub(super) palette_view: vk::BufferView,
    /// Texel views of `records` and `work` (bindings 6 and 8) where the
    /// pipeline reads them so (`PaletteReads::Texels`), else null; replaced
    /// and retired with their buffers.
    pub(super) records_view: vk::BufferView,
    pub(super) work_view: vk::BufferView,
    /// This frame's staging copies (capacity: one per character, reserved
    /// when characters are added, so recording allocates nothing).
    pub(super) copies: Vec<vk::BufferCopy>,
    pub(super) weights: Buffer,
    pub(super) records: Buffer,
    /// The characters a frame skins, grouped by run and level (binding 8,
    /// skin_main.glsl's `work_word`), written each frame (`upload`).
    pub(super) work: Buffer,
    /// Where the frame placed each character's output and each output
    /// window's address (`plan::OutputPlaces`), written each frame
    /// (`write_batches`), and its device address.
    pub(super) places: Buffer,
    pub(super) places_address: vk::DeviceAddress,
    /// Pose version of each character whose morph weights (and palette,
    /// when the shaders read `palette` in place) this slot holds.
    pub(super) held: Vec<Option<u64>>,
    /// Staged modes: per character, the pose version `palette` stages for
    /// a copy into the device palette that is queued in `copies` but not
    /// yet recorded (`record_copies` commits it to `DevicePalette::held`).
    /// Such a copy outlives a frame that never recorded it, and then
    /// carries whatever the staging holds: `upload` stages the current
    /// pose there whenever it differs.
    pub(super) staged: Vec<Option<u64>>,
    /// The characters whose `staged` version awaits that copy (capacity:
    /// one per character, reserved when characters are added).
    pub(super) pending: Vec<u32>,
    /// What each piece of `chunked::CHUNK` characters leaves of a frame's
    /// upload (one per piece, added with the characters).
    pub(super) pieces: Vec<UploadPiece>,
    /// Layout generation whose records `records` holds.
    pub(super) records_generation: Option<u64>,
}

impl SlotBuffers {
    /// Slot `i`'s buffers, each of one element, with no views.
    pub(super) fn new(ctx: &GpuContext, i: usize) -> Result<Self, GpuError> {
        let name = |what: &str| format!("skin slot {i} {what}");
        let cpu = MemoryLocation::CpuToGpu;
        let mut slot = SlotBuffers {
            palette: Buffer::new(ctx, &name("palette"), 64, PALETTE_USAGE, cpu)?,
            palette_view: vk::BufferView::null(),
            records_view: vk::BufferView::null(),
            work_view: vk::BufferView::null(),
            copies: Vec::new(),
            weights: Buffer::new(ctx, &name("weights"), 16, HOST_USAGE, cpu)?,
            records: Buffer::new(ctx, &name("records"), 32, HOST_USAGE, cpu)?,
            work: Buffer::new(ctx, &name("characters to skin"), 4, HOST_USAGE, cpu)?,
            places: Buffer::new(ctx, &name("output places"), OutputPlaces::bytes(0), PLACES_USAGE, cpu)?,
            places_address: 0,
            held: Vec::new(),
            staged: Vec::new(),
            pending: Vec::new(),
            pieces: Vec::new(),
            records_generation: None,
        };
        slot.places_address = slot.places.device_address(ctx);
        Ok(slot)
    }

    /// Makes the texel views `reads` needs of the fresh buffers; on
    /// failure the caller destroys the slot.
    pub(super) fn make_views(&mut self, ctx: &GpuContext, reads: PaletteReads) -> Result<(), GpuError> {
        let bindings = reads.bindings();
        if reads == PaletteReads::Texels {
            self.palette_view = palette_view(ctx, &self.palette)?;
        }
        for (binding, buffer, view) in
            [(6, &self.records, &mut self.records_view), (8, &self.work, &mut self.work_view)]
        {
            if is_texel(bindings[binding]) {
                *view = texel_view(ctx, buffer.raw, buffer.size, TEXEL_FORMATS[binding])?;
            }
        }
        Ok(())
    }

    /// Grows slot `i`'s buffers to `sizes` (never past `limits`), remaking the texel views `reads` needs of regrown ones; replaced
    /// buffers and views are retired through the ring (a submitted frame
    /// may still use them). A regrown palette or weight buffer holds no pose
    /// (`held` cleared), regrown records no layout (`records_generation`).
    pub(super) fn grow(
        &mut self,
        ctx: &GpuContext,
        ring: &mut FrameRing,
        i: usize,
        sizes: SlotSizes,
        limits: GrowthLimits,
        reads: PaletteReads,
    ) -> Result<(), GpuError> {
        let bindings = reads.bindings();
        let grower = Grower { ctx, limits, owner: format!("skin slot {i}").into() };
        let cpu = MemoryLocation::CpuToGpu;
        let regrown = grower.grow(ring, &mut self.palette, sizes.palette, "palette", PALETTE_USAGE, cpu)?;
        let texels = reads == PaletteReads::Texels;
        if regrown && texels {
            replace_view(ctx, ring, &mut self.palette_view, &self.palette, PALETTE_TEXEL_FORMAT)?;
        }
        let mut lost = regrown;
        lost |= grower.grow(ring, &mut self.weights, sizes.weights, "weights", HOST_USAGE, cpu)?;
        if lost {
            // The new buffers hold no pose yet, nor anything staged.
            self.held.iter_mut().for_each(|h| *h = None);
            self.drop_staged();
        }
        let records_regrown =
            grower.grow(ring, &mut self.records, sizes.records, "records", HOST_USAGE, cpu)?;
        let work_regrown =
            grower.grow(ring, &mut self.work, sizes.work, "characters to skin", HOST_USAGE, cpu)?;
        if records_regrown {
            self.records_generation = None;
        }
        if grower.grow(ring, &mut self.places, sizes.places, "output places", PLACES_USAGE, cpu)? {
            self.places_address = self.places.device_address(ctx);
        }
        for (binding, regrown, buffer, view) in [
            (6, records_regrown, &self.records, &mut self.records_view),
            (8, work_regrown, &self.work, &mut self.work_view),
        ] {
            if regrown && is_texel(bindings[binding]) {
                replace_view(ctx, ring, view, buffer, TEXEL_FORMATS[binding])?;
            }
        }
        Ok(())
    }

    /// Forgets what `palette` stages and the copies queued from it.
    pub(super) fn drop_staged(&mut self) {
        self.staged.iter_mut().for_each(|s| *s = None);
        self.pending.clear();
        self.copies.clear();
    }

    /// Destroys the views and buffers; the caller waited for the GPU.
    pub(super) fn destroy(self, ctx: &GpuContext) {
        // SAFETY: the caller waited for the GPU; null views are ignored.
        unsafe {
            for view in [self.palette_view, self.records_view, self.work_view] {
                ctx.device.destroy_buffer_view(view, None);
            }
        }
        for b in [self.palette, self.weights, self.records, self.work, self.places] {
            b.destroy(ctx);
        }
    }
}

/// The sizes a slot's buffers never grow past.
#[derive(Debug, Clone, Copy)]
pub(super) struct GrowthLimits {
    /// Buffers bound to a descriptor: `maxStorageBufferRange`.
    pub(super) bound: u64,
    /// Buffers reached by pointer (`SHADER_DEVICE_ADDRESS` usage): the
    /// largest buffer the device makes (`BufferLimits::largest_buffer`).
    pub(super) addressed: u64,
}

impl GrowthLimits {
    /// The limits of `ctx`'s device.
    pub(super) fn of(ctx: &GpuContext) -> Self {
        GrowthLimits {
            bound: u64::from(ctx.properties.limits.max_storage_buffer_range),
            addressed: ctx.buffer_limits.largest_buffer(),
        }
    }
}

/// Regrows the skin pass's buffers (a slot's, or the shared device
/// palette), never past `limits`.
pub(super) struct Grower<'a> {
    pub(super) ctx: &'a GpuContext,
    pub(super) limits: GrowthLimits,
    /// What the buffers' names start with ("skin slot 0").
    pub(super) owner: std::borrow::Cow<'a, str>,
}

impl Grower<'_> {
    /// Replaces `buffer` with a larger one when it holds fewer than `needed`
    /// bytes, retiring the old one through `ring`; whether it did.
    pub(super) fn grow(
        &self,
        ring: &mut impl Retire,
        buffer: &mut Buffer,
        needed: u64,
        what: &str,
        usage: vk::BufferUsageFlags,
        location: MemoryLocation,
    ) -> Result<bool, GpuError> {
        self.grow_within(ring, buffer, needed, None, what, usage, location)
    }

    /// `grow`, never past `limit` when given (else the limit of its usage).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn grow_within(
        &self,
        ring: &mut impl Retire,
        buffer: &mut Buffer,
        needed: u64,
        limit: Option<u64>,
        what: &str,
        usage: vk::BufferUsageFlags,
        location: MemoryLocation,
    ) -> Result<bool, GpuError> {
        if buffer.size >= needed {
            return Ok(false);
        }
        // Headroom so that adding characters one by one does not
        // reallocate every time, but never past the buffer's limit
        // (check_ranges made sure `needed` fits).
        let addressed = usage.contains(vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS);
        let limit = limit.unwrap_or(if addressed { self.limits.addressed } else { self.limits.bound });
        let size = needed.max((buffer.size.saturating_mul(3) / 2).min(limit));
        let name = format!("{} {what}", self.owner);
        let new = Buffer::new(self.ctx, &name, size, usage, location)?;
        ring.retire(Retired::Buffer(std::mem::replace(buffer, new)));
        Ok(true)
    }
}
