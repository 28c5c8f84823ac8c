//! Offscreen render targets: an sRGB colour image (resolved from 4x MSAA
//! when the device supports it) and a depth buffer, plus a host-visible
//! readback buffer, one set per frame slot so two frames can be in flight. It
//! records no draws: the passes draw into it.

use super::mesh_pass::DrawStage;
use crate::gpu::barrier::{self, Access, ImageBarrier};
use crate::gpu::image::subresource_range;
use crate::gpu::{Buffer, FRAMES_IN_FLIGHT, GpuContext, GpuError, Image};
use ash::vk;
use gpu_allocator::MemoryLocation;

/// Colour format of every target: 8-bit sRGB, written as linear by shaders.
pub const COLOR_FORMAT: vk::Format = vk::Format::R8G8B8A8_SRGB;
/// Depth format.
pub const DEPTH_FORMAT: vk::Format = vk::Format::D32_SFLOAT;
/// Background colour (linear): a light grey-blue.
pub const CLEAR_COLOR: [f32; 4] = [0.32, 0.36, 0.42, 1.0];

/// One frame slot's colour + depth target and readback buffer.
pub struct RenderTarget {
    /// Size in pixels.
    pub extent: vk::Extent2D,
    /// Samples per pixel of the colour and depth attachments.
    pub samples: vk::SampleCountFlags,
    /// Single-sampled colour image: the resolve target (or the attachment at 1x).
    color: Image,
    /// Multisampled colour attachment, resolved into `color` (None at 1x).
    msaa_color: Option<Image>,
    depth: Image,
    readback: Buffer,
}

/// The sample count to render with: 4 when colour and depth both support it, else 1.
pub fn choose_samples(ctx: &GpuContext) -> vk::SampleCountFlags {
    let limits = &ctx.properties.limits;
    let both = limits.framebuffer_color_sample_counts & limits.framebuffer_depth_sample_counts;
    if both.contains(vk::SampleCountFlags::TYPE_4) {
        vk::SampleCountFlags::TYPE_4
    } else {
        vk::SampleCountFlags::TYPE_1
    }
}

impl RenderTarget {
    /// Creates a `width`x`height` target with `samples` samples per pixel.
    pub fn new(
        ctx: &GpuContext,
        name: &str,
        extent: vk::Extent2D,
        samples: vk::SampleCountFlags,
    ) -> Result<Self, GpuError> {
        let color = Image::new(
            ctx,
            &format!("{name} colour"),
            extent,
            COLOR_FORMAT,
            vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
            vk::ImageAspectFlags::COLOR,
        )?;
        let msaa_color = if samples == vk::SampleCountFlags::TYPE_1 {
            None
        } else {
            let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSIENT_ATTACHMENT;
            let made = Image::new_multisampled(
                ctx,
                &format!("{name} msaa colour"),
                extent,
                COLOR_FORMAT,
                samples,
                usage,
                vk::ImageAspectFlags::COLOR,
            );
            match made {
                Ok(a) => Some(a),
                Err(e) => {
                    color.destroy(ctx);
                    return Err(e);
                }
            }
        };
        let depth = Image::new_multisampled(
            ctx,
            &format!("{name} depth"),
            extent,
            DEPTH_FORMAT,
            samples,
            vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT | vk::ImageUsageFlags::TRANSIENT_ATTACHMENT,
            vk::ImageAspectFlags::DEPTH,
        );
        let depth = match depth {
            Ok(d) => d,
            Err(e) => {
                color.destroy(ctx);
                msaa_color.into_iter().for_each(|a| a.destroy(ctx));
                return Err(e);
            }
        };
        let bytes = u64::from(extent.width) * u64::from(extent.height) * 4;
        let readback = Buffer::new(
            ctx,
            &format!("{name} readback"),
            bytes,
            vk::BufferUsageFlags::TRANSFER_DST,
            MemoryLocation::GpuToCpu,
        );
        let readback = match readback {
            Ok(b) => b,
            Err(e) => {
                color.destroy(ctx);
                msaa_color.into_iter().for_each(|a| a.destroy(ctx));
                depth.destroy(ctx);
                return Err(e);
            }
        };
        Ok(RenderTarget { extent, samples, color, msaa_color, depth, readback })
    }

    /// Records the layout transitions before rendering: both attachments go
    /// from UNDEFINED (contents discarded; they are cleared) to attachment layouts.
    pub fn begin_barriers(&self, ctx: &GpuContext, cmd: vk::CommandBuffer) {
        let color_image = self.msaa_color.as_ref().map_or(self.color.raw, |a| a.raw);
        let color = subresource_range(vk::ImageAspectFlags::COLOR);
        let barriers = [
            // The last use of this slot's colour images was the previous frame's
            // resolve/clear (COLOR_ATTACHMENT_OUTPUT) and readback copy (COPY).
            // This is a write-after-write/read: the attachment writes wait for
            // those stages and for their writes to be made available.
            ImageBarrier::new(
                color_image,
                color,
                &[Access::ColorAttachmentWrite, Access::CopyRead],
                &[Access::ColorAttachmentReadWrite],
            )
            .discarding_contents()
            .to_vk(),
            depth_barrier(&self.depth),
            // The resolve target (MSAA only): its previous contents were read by
            // the readback copy (COPY); resolve writes happen in COLOR_ATTACHMENT_OUTPUT.
            ImageBarrier::new(self.color.raw, color, &[Access::CopyRead], &[Access::ColorAttachmentWrite])
                .discarding_contents()
                .to_vk(),
        ];
        let count = if self.msaa_color.is_some() { 3 } else { 2 };
        // cmd is recording; the images belong to this target.
        barrier::record(ctx, cmd, &[], &[], &barriers[..count]);
    }

    /// Begins dynamic rendering into this target, clearing colour to `clear`
    /// (linear) and depth to 1; sets the viewport and scissor to the whole target.
    pub fn begin_rendering(&self, ctx: &GpuContext, cmd: vk::CommandBuffer, clear: [f32; 4]) {
        self.begin_stage(ctx, cmd, clear, DrawStage::Main);
    }

    /// Begins the rendering of one `DrawStage`: `Main` as `begin_rendering`;
    /// `DepthPrepass` clears and keeps depth alone; `AfterPrepass` clears
    /// colour and loads the depth the prepass (ended before) wrote.
    pub fn begin_stage(&self, ctx: &GpuContext, cmd: vk::CommandBuffer, clear: [f32; 4], stage: DrawStage) {
        let msaa = self.msaa_color.as_ref();
        begin_rendering(ctx, cmd, self.extent, msaa, self.color.view, &self.depth, clear, stage);
    }

    /// Ends rendering.
    pub fn end_rendering(&self, ctx: &GpuContext, cmd: vk::CommandBuffer) {
        // SAFETY: cmd is inside the rendering begun by begin_rendering.
        unsafe { ctx.device.cmd_end_rendering(cmd) };
    }

    /// Records the copy of the rendered colour image into the readback buffer;
    /// its bytes may be read with `pixels` once this frame's fence has signalled.
    pub fn record_readback(&self, ctx: &GpuContext, cmd: vk::CommandBuffer) {
        let (image, buffer) = (self.color.raw, self.readback.raw);
        record_color_readback(ctx, cmd, image, buffer, self.extent, Access::CopyRead);
    }

    /// The pixels copied by the last `record_readback` (RGBA8, sRGB, rows top
    /// to bottom). Only valid after that frame's fence has signalled.
    pub fn pixels(&self) -> Result<&[u8], GpuError> {
        let bytes = self.extent.width as usize * self.extent.height as usize * 4;
        let mapped = self.readback.mapped().ok_or_else(|| GpuError::new("readback buffer is not mapped"))?;
        Ok(&mapped[..bytes])
    }

    /// Frees the target; the caller guarantees no pending GPU use.
    pub fn destroy(self, ctx: &GpuContext) {
        self.color.destroy(ctx);
        if let Some(a) = self.msaa_color {
            a.destroy(ctx);
        }
        self.depth.destroy(ctx);
        self.readback.destroy(ctx);
    }
}

/// One `RenderTarget` per frame slot.
pub struct SlotTargets {
    targets: Vec<RenderTarget>,
}

impl SlotTargets {
    /// Creates `FRAMES_IN_FLIGHT` targets of `extent` with `samples`.
    pub fn new(
        ctx: &GpuContext,
        extent: vk::Extent2D,
        samples: vk::SampleCountFlags,
    ) -> Result<Self, GpuError> {
        let mut targets = Vec::with_capacity(FRAMES_IN_FLIGHT);
        for i in 0..FRAMES_IN_FLIGHT {
            match RenderTarget::new(ctx, &format!("target {i}"), extent, samples) {
                Ok(t) => targets.push(t),
                Err(e) => {
                    targets.into_iter().for_each(|t| t.destroy(ctx));
                    return Err(e);
                }
            }
        }
        Ok(SlotTargets { targets })
    }

    /// The target of frame slot `slot`.
    pub fn get(&self, slot: usize) -> &RenderTarget {
        &self.targets[slot]
    }

    /// Frees every target; the caller guarantees no pending GPU use.
    pub fn destroy(self, ctx: &GpuContext) {
        self.targets.into_iter().for_each(|t| t.destroy(ctx));
    }
}

/// Attachments for drawing into images the target does not own (swapchain
/// images): a multisampled colour attachment resolved into the given view
/// (none at 1x: the view is drawn into directly) and a depth buffer. One set
/// is shared by every frame slot; `begin_barriers` orders each frame's
/// first writes after the previous frame's (a barrier's first scope covers
/// earlier submissions on the queue).
pub struct ScreenTarget {
    /// Size in pixels.
    pub extent: vk::Extent2D,
    /// Samples per pixel.
    pub samples: vk::SampleCountFlags,
    /// Colour format (the swapchain's).
    pub format: vk::Format,
    msaa_color: Option<Image>,
    depth: Image,
}

impl ScreenTarget {
    /// Creates attachments of `extent` for colour images of `format`.
    pub fn new(
        ctx: &GpuContext,
        extent: vk::Extent2D,
        format: vk::Format,
        samples: vk::SampleCountFlags,
    ) -> Result<Self, GpuError> {
        let transient = vk::ImageUsageFlags::TRANSIENT_ATTACHMENT;
        let msaa_color = if samples == vk::SampleCountFlags::TYPE_1 {
            None
        } else {
            let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | transient;
            let color = vk::ImageAspectFlags::COLOR;
            Some(Image::new_multisampled(ctx, "screen msaa colour", extent, format, samples, usage, color)?)
        };
        let usage = vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT | transient;
        let depth = Image::new_multisampled(
            ctx,
            "screen depth",
            extent,
            DEPTH_FORMAT,
            samples,
            usage,
            vk::ImageAspectFlags::DEPTH,
        );
        let depth = match depth {
            Ok(d) => d,
            Err(e) => {
                msaa_color.into_iter().for_each(|a| a.destroy(ctx));
                return Err(e);
            }
        };
        Ok(ScreenTarget { extent, samples, format, msaa_color, depth })
    }

    /// Records the transitions before drawing into `image` (an acquired
    /// swapchain image): every attachment from UNDEFINED (contents discarded,
    /// they are cleared or resolved over) to its attachment layout.
    pub fn begin_barriers(&self, ctx: &GpuContext, cmd: vk::CommandBuffer, image: vk::Image) {
        let color = subresource_range(vk::ImageAspectFlags::COLOR);
        let attachment = &[Access::ColorAttachmentReadWrite][..];
        let barriers = [
            // The swapchain image: the acquire semaphore is waited on at
            // COLOR_ATTACHMENT_OUTPUT, so a barrier whose first scope is that
            // stage chains after the wait: the layout transition happens only
            // once the presentation engine has released the image. No access
            // to make available (the engine's reads are covered by the
            // semaphore). The clear/resolve/draw writes wait for the transition.
            ImageBarrier::new(image, color, &[Access::SwapchainAcquire], attachment)
                .discarding_contents()
                .to_vk(),
            // Depth is shared by the frames in flight (see `depth_barrier`).
            depth_barrier(&self.depth),
            // The shared multisampled colour: same write-after-write ordering
            // against the previous frame's attachment writes.
            ImageBarrier::new(
                self.msaa_color.as_ref().map_or(vk::Image::null(), |m| m.raw),
                color,
                &[Access::ColorAttachmentWrite],
                attachment,
            )
            .discarding_contents()
            .to_vk(),
        ];
        let count = if self.msaa_color.is_some() { 3 } else { 2 };
        // cmd is recording outside rendering; the images are live.
        barrier::record(ctx, cmd, &[], &[], &barriers[..count]);
    }

    /// Begins dynamic rendering of the scene into `view` (the acquired
    /// image, in COLOR_ATTACHMENT_OPTIMAL), clearing colour and depth; with
    /// MSAA the multisampled attachment is resolved into `view` at the end.
    /// Sets the viewport and scissor to the whole target.
    pub fn begin_rendering(
        &self,
        ctx: &GpuContext,
        cmd: vk::CommandBuffer,
        view: vk::ImageView,
        clear: [f32; 4],
    ) {
        self.begin_stage(ctx, cmd, view, clear, DrawStage::Main);
    }

    /// Begins the rendering of one `DrawStage` into `view` (see
    /// `RenderTarget::begin_stage`).
    pub fn begin_stage(
        &self,
        ctx: &GpuContext,
        cmd: vk::CommandBuffer,
        view: vk::ImageView,
        clear: [f32; 4],
        stage: DrawStage,
    ) {
        begin_rendering(ctx, cmd, self.extent, self.msaa_color.as_ref(), view, &self.depth, clear, stage);
    }

    /// Frees the attachments; the caller guarantees no pending GPU use.
    pub fn destroy(self, ctx: &GpuContext) {
        if let Some(a) = self.msaa_color {
            a.destroy(ctx);
        }
        self.depth.destroy(ctx);
    }
}

/// Copies a colour image that was just rendered (COLOR_ATTACHMENT_OPTIMAL)
/// into a host-visible `buffer` of width*height*4 bytes, readable after the
/// frame's fence; the image ends in the layout of `then`, its next use
/// (`Access::CopyRead`: it stays in TRANSFER_SRC_OPTIMAL; `Access::Present`
/// for a swapchain image that is presented next).
pub fn record_color_readback(
    ctx: &GpuContext,
    cmd: vk::CommandBuffer,
    image: vk::Image,
    buffer: vk::Buffer,
    extent: vk::Extent2D,
    then: Access,
) {
    let range = subresource_range(vk::ImageAspectFlags::COLOR);
    // The colour (or resolve, or overlay) writes finish in
    // COLOR_ATTACHMENT_OUTPUT; the copy reads in COPY, in TRANSFER_SRC layout.
    // This makes those writes available and visible to the copy and orders the
    // layout change after them.
    let to_src =
        [ImageBarrier::new(image, range, &[Access::ColorAttachmentWrite], &[Access::CopyRead]).to_vk()];
    // A reused buffer was last written by an earlier copy, whose fence the
    // host waited for before reading it. That wait already orders the two
    // copies; this barrier states the write-after-write dependency explicitly
    // (its first scope reaches earlier submissions). For a fresh buffer it
    // orders nothing.
    let buffer_before = [barrier::buffer(buffer, &[Access::CopyWrite], &[Access::CopyWrite])];
    let region = vk::BufferImageCopy::default()
        .image_subresource(vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        })
        .image_extent(vk::Extent3D { width: extent.width, height: extent.height, depth: 1 });
    // The copy's writes must be available to the host after the fence:
    // COPY/TRANSFER_WRITE -> HOST/HOST_READ.
    let to_host = [barrier::buffer(buffer, &[Access::CopyWrite], &[Access::HostRead])];
    // A final layout change waits for the copy's reads (a write-after-read on
    // the image: an execution dependency suffices). For PRESENT_SRC the
    // render-finished semaphore signalled after it covers presentation.
    let to_final = [ImageBarrier::new(image, range, &[Access::CopyRead], &[then]).to_vk()];
    let stays = then.info().layout == Access::CopyRead.info().layout;
    let final_barriers = if stays { &[][..] } else { &to_final[..] };
    // cmd is recording outside rendering; the caller guarantees the image is
    // live and in COLOR_ATTACHMENT_OPTIMAL and the buffer holds
    // width*height*4 bytes and is not in use by another pending copy.
    barrier::record(ctx, cmd, &[], &buffer_before, &to_src);
    // SAFETY: as above; the barrier just recorded put the image in TRANSFER_SRC_OPTIMAL.
    unsafe {
        ctx.device.cmd_copy_image_to_buffer(
            cmd,
            image,
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            buffer,
            &[region],
        )
    };
    barrier::record(ctx, cmd, &[], &to_host, final_barriers);
}

/// The depth attachment's transition before a frame, from UNDEFINED
/// (contents discarded: it is cleared) to DEPTH_ATTACHMENT_OPTIMAL. Depth
/// was last written by the previous frame's fragment tests (the first scope
/// reaches that earlier submission); this frame's clear (LOAD_OP) and tests
/// happen in the same stages, so they wait for those writes.
fn depth_barrier(depth: &Image) -> vk::ImageMemoryBarrier2<'static> {
    let range = subresource_range(vk::ImageAspectFlags::DEPTH);
    ImageBarrier::new(depth.raw, range, &[Access::DepthAttachmentWrite], &[Access::DepthAttachmentReadWrite])
        .discarding_contents()
        .to_vk()
}

/// Begins dynamic rendering over the whole `extent`, clearing colour to
/// `clear` (linear) and `depth` to 1. Colour is drawn into `msaa` and
/// resolved (averaged) into `view` at the end, or drawn into `view`
/// directly when there is no multisampled attachment. Sets the viewport and
/// scissor to the whole area. Every attachment must already be in its
/// attachment layout (COLOR_/DEPTH_ATTACHMENT_OPTIMAL).
///
/// `stage` `DepthPrepass`: no colour attachment; depth is cleared and
/// stored. `AfterPrepass`: depth is loaded, after a barrier that makes the
/// prepass's depth writes visible to this rendering's load and tests.
#[allow(clippy::too_many_arguments)]
fn begin_rendering(
    ctx: &GpuContext,
    cmd: vk::CommandBuffer,
    extent: vk::Extent2D,
    msaa: Option<&Image>,
    view: vk::ImageView,
    depth: &Image,
    clear: [f32; 4],
    stage: DrawStage,
) {
    if stage == DrawStage::AfterPrepass {
        // The prepass wrote depth in the fragment-test stages; this
        // rendering's LOAD (a read in EARLY_FRAGMENT_TESTS) and its tests
        // read it: write -> read, same layout, same queue.
        // cmd is recording outside rendering.
        barrier::record_global(ctx, cmd, &[Access::DepthAttachmentWrite], &[Access::DepthAttachmentRead]);
    }
    let clear_color = vk::ClearValue { color: vk::ClearColorValue { float32: clear } };
    let mut color = vk::RenderingAttachmentInfo::default()
        .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
        .load_op(vk::AttachmentLoadOp::CLEAR)
        .clear_value(clear_color);
    color = match msaa {
        // The multisampled image is only needed until it is resolved.
        Some(msaa) => color
            .image_view(msaa.view)
            .store_op(vk::AttachmentStoreOp::DONT_CARE)
            .resolve_mode(vk::ResolveModeFlags::AVERAGE)
            .resolve_image_view(view)
            .resolve_image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL),
        None => color.image_view(view).store_op(vk::AttachmentStoreOp::STORE),
    };
    let (depth_load, depth_store) = match stage {
        DrawStage::Main => (vk::AttachmentLoadOp::CLEAR, vk::AttachmentStoreOp::DONT_CARE),
        DrawStage::DepthPrepass | DrawStage::Shadow(_) => {
            (vk::AttachmentLoadOp::CLEAR, vk::AttachmentStoreOp::STORE)
        }
        DrawStage::AfterPrepass => (vk::AttachmentLoadOp::LOAD, vk::AttachmentStoreOp::DONT_CARE),
    };
    let depth = vk::RenderingAttachmentInfo::default()
        .image_view(depth.view)
        .image_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
        .load_op(depth_load)
        .store_op(depth_store)
        .clear_value(vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth: 1.0, stencil: 0 } });
    let colors = [color];
    let color_count = usize::from(matches!(stage, DrawStage::Main | DrawStage::AfterPrepass));
    let area = vk::Rect2D { offset: vk::Offset2D::default(), extent };
    let info = vk::RenderingInfo::default()
        .render_area(area)
        .layer_count(1)
        .color_attachments(&colors[..color_count])
        .depth_attachment(&depth);
    let viewport = vk::Viewport {
        x: 0.0,
        y: 0.0,
        width: extent.width as f32,
        height: extent.height as f32,
        min_depth: 0.0,
        max_depth: 1.0,
    };
    // SAFETY: cmd is recording outside rendering; the caller's barriers put
    // the attachments in the layouts given, and the views are live.
    unsafe {
        ctx.device.cmd_begin_rendering(cmd, &info);
        ctx.device.cmd_set_viewport(cmd, 0, &[viewport]);
        ctx.device.cmd_set_scissor(cmd, 0, &[area]);
    }
}
