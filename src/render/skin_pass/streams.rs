//! The static streams the skinning binds at set 0 bindings 0..=3 (sources,
//! influences, morph ranges, morph entries): the one model's own buffers, or
//! the pass's concatenation of every distinct model's once there are several
//! ([`StaticStreams::rebuild`], copied on the GPU where `plan::SkinLayout`
//! places each model), and their texel views. It never writes the models'
//! own buffers and never records into a frame.

use super::SKINNING_READS;
use super::palette_reads::{TEXEL_FORMATS, is_texel, swap_view, texel_view};
use super::plan::{INFLUENCES, MORPH_ENTRIES, MORPH_RANGES, SOURCES, SkinLayout};
use crate::gpu::barrier::{self, Access};
use crate::gpu::frame::Retired;
use crate::gpu::{Buffer, FrameRing, GpuContext, GpuError, immediate};
use crate::render::gpu_model::GpuModel;
use ash::vk;
use gpu_allocator::MemoryLocation;
use std::sync::Arc;

/// The bound static streams and their texel views.
pub(super) struct StaticStreams {
    /// Concatenated sources, influences, morph ranges, morph entries when
    /// more than one distinct model is registered.
    combined: Option<[Buffer; 4]>,
    /// Texel views of the bound streams where the pipeline's set 0 reads
    /// them so, else null, and the buffers they view (`views_of`): remade
    /// when those change, the old ones retired through the ring.
    views: [vk::BufferView; 4],
    views_of: [vk::Buffer; 4],
}

impl StaticStreams {
    /// Nothing bound yet.
    pub(super) fn new() -> Self {
        StaticStreams {
            combined: None,
            views: [vk::BufferView::null(); 4],
            views_of: [vk::Buffer::null(); 4],
        }
    }

    /// The streams bound at bindings 0..=3 and their byte sizes: the
    /// concatenation when several models are registered, else the one
    /// model's (of `models`) own buffers (record offsets are relative to
    /// whichever is bound). `None` before the first character.
    pub(super) fn bound(&self, models: &[Arc<GpuModel>]) -> Option<([vk::Buffer; 4], [u64; 4])> {
        let bound = match (&self.combined, models.first()) {
            (Some(c), _) => [&c[0], &c[1], &c[2], &c[3]],
            (None, Some(g)) => [&g.sources, &g.influences, &g.morph_ranges, &g.morph_entries],
            (None, None) => return None,
        };
        Some((bound.map(|b| b.raw), bound.map(|b| b.size)))
    }

    /// The texel views of the bound streams (null where set 0 binds storage buffers).
    pub(super) fn views(&self) -> [vk::BufferView; 4] {
        self.views
    }

    /// Makes the texel views (where `bindings` says so) match the buffers
    /// `bound` now returns, retiring replaced views through `ring` (a
    /// submitted frame may still use them). On failure a view is left null
    /// and `dispatch` refuses.
    pub(super) fn sync_views(
        &mut self,
        ctx: &GpuContext,
        ring: &mut FrameRing,
        bindings: &[Option<vk::DescriptorType>; 9],
        models: &[Arc<GpuModel>],
    ) -> Result<(), GpuError> {
        let (buffers, sizes) = self.bound(models).unwrap_or(([vk::Buffer::null(); 4], [0; 4]));
        if buffers == self.views_of {
            return Ok(());
        }
        let mut result = Ok(());
        for binding in 0..4 {
            if !is_texel(bindings[binding]) {
                continue;
            }
            let made = if buffers[binding] == vk::Buffer::null() {
                Ok(vk::BufferView::null())
            } else {
                texel_view(ctx, buffers[binding], sizes[binding], TEXEL_FORMATS[binding])
            };
            result = result.and(swap_view(ring, &mut self.views[binding], made));
        }
        self.views_of = buffers;
        result
    }

    /// Concatenates the static streams of every distinct model (`models`,
    /// placed by `layout`) into pass-owned buffers (one binding each for the
    /// single dispatch), on the GPU, waiting for it. The previous
    /// concatenation is retired through `ring`; on failure it stays.
    pub(super) fn rebuild(
        &mut self,
        ctx: &GpuContext,
        ring: &mut FrameRing,
        layout: &SkinLayout,
        models: &[Arc<GpuModel>],
    ) -> Result<(), GpuError> {
        let totals = layout.stream_bytes();
        let made = create_combined(ctx, totals)?;
        // Morph ranges index morph entries: rebase them on the host.
        let ranges = layout.rebased_morph_ranges(models.iter().map(|m| m.morph_ranges_host.as_slice()));
        if let Err(e) = copy_streams(ctx, layout, models, &made, &ranges) {
            made.into_iter().for_each(|b| b.destroy(ctx));
            return Err(e);
        }
        let mut it = made.into_iter();
        let mut next = || it.next().expect("four buffers");
        let new = [next(), next(), next(), next()];
        if let Some(old) = self.combined.replace(new) {
            // Frames already submitted may still read the old concatenation.
            for b in old {
                ring.retire(Retired::Buffer(b));
            }
        }
        Ok(())
    }

    /// Destroys the views and the concatenation; the caller waited for the GPU.
    pub(super) fn destroy(self, ctx: &GpuContext) {
        for view in self.views {
            // SAFETY: the caller waited for the GPU; null views are ignored.
            unsafe { ctx.device.destroy_buffer_view(view, None) };
        }
        if let Some(c) = self.combined {
            c.into_iter().for_each(|b| b.destroy(ctx));
        }
    }
}

/// The four device-local concatenation buffers of `totals` bytes; on
/// failure the ones already made are freed.
fn create_combined(ctx: &GpuContext, totals: [u64; 4]) -> Result<Vec<Buffer>, GpuError> {
    let names = ["skin sources", "skin influences", "skin morph ranges", "skin morph entries"];
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER
        | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER
        | vk::BufferUsageFlags::TRANSFER_DST;
    let mut made: Vec<Buffer> = Vec::with_capacity(4);
    for (name, size) in names.iter().zip(totals) {
        // At least one texel (see GpuModel::upload), even for an empty stream.
        match Buffer::new(ctx, name, size.max(16), usage, MemoryLocation::GpuOnly) {
            Ok(b) => made.push(b),
            Err(e) => {
                made.into_iter().for_each(|b| b.destroy(ctx));
                return Err(e);
            }
        }
    }
    Ok(made)
}

/// Copies every model's sources, influences and morph entries into `made`
/// where `layout` places them, and the rebased morph `ranges` through a
/// staging buffer, in one submission it waits for.
fn copy_streams(
    ctx: &GpuContext,
    layout: &SkinLayout,
    models: &[Arc<GpuModel>],
    made: &[Buffer],
    ranges: &[u32],
) -> Result<(), GpuError> {
    let ranges_bytes = layout.stream_bytes()[MORPH_RANGES];
    let mut staging = Buffer::new(
        ctx,
        "skin morph ranges staging",
        ranges_bytes,
        vk::BufferUsageFlags::TRANSFER_SRC,
        MemoryLocation::CpuToGpu,
    )?;
    let result = staging.write(0, bytemuck::cast_slice(ranges)).and_then(|_| {
        immediate::submit_and_wait(ctx, |cmd| {
            for copy in layout.stream_copies() {
                let m = &models[copy.model];
                let src = match copy.stream {
                    SOURCES => &m.sources,
                    INFLUENCES => &m.influences,
                    _ => &m.morph_entries,
                };
                debug_assert!([SOURCES, INFLUENCES, MORPH_ENTRIES].contains(&copy.stream));
                let region = vk::BufferCopy { src_offset: 0, dst_offset: copy.dst_offset, size: copy.size };
                // SAFETY: live buffers, region inside both (sizes from the counts).
                unsafe { ctx.device.cmd_copy_buffer(cmd, src.raw, made[copy.stream].raw, &[region]) };
            }
            if !ranges.is_empty() {
                let region = vk::BufferCopy { src_offset: 0, dst_offset: 0, size: ranges_bytes };
                // SAFETY: as above.
                unsafe { ctx.device.cmd_copy_buffer(cmd, staging.raw, made[MORPH_RANGES].raw, &[region]) };
            }
            // The model buffers' own upload barrier already made their
            // contents visible to transfers. These copies must be visible to
            // the compute shader (compute skinning) and the vertex shader
            // (vertex skinning, `vertex_skinning_buffers`) of every later
            // frame on this queue; a barrier covers later submissions too
            // (and the host also waits).
            // skin.comp reads them as uniform texel buffers (sampled
            // reads), skin_storage.comp and the vertex path as storage.
            barrier::record_global(ctx, cmd, &[Access::CopyWrite], SKINNING_READS);
        })
    });
    staging.destroy(ctx);
    result
}
