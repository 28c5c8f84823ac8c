//! The on-screen controls: egui's output drawn with egui-ash-renderer into
//! the swapchain image after the scene (its own dynamic-rendering pass,
//! colour loaded, single-sampled, the swapchain's format). It never draws the
//! scene.
//!
//! Textures: egui's texture deltas are applied before the frame that needs
//! them is recorded, and only after every frame in flight has finished
//! (`Renderer::wait_all` by the caller, see `needs_idle`), because
//! egui-ash-renderer replaces or rewrites a texture (and frees its
//! descriptor set) at once. Partial updates are applied to a CPU copy and
//! uploaded whole: the crate's partial update transitions the image from
//! UNDEFINED, which may discard the texels outside the updated rectangle.
//! Texture frees are deferred per frame slot and done once that slot's
//! fence has signalled (`release_slot`): the frame whose output listed them
//! no longer draws them, but earlier frames still in flight may.
//!
//! egui and egui-ash-renderer allocate internally per frame (tessellation,
//! vertex staging); this module keeps no per-frame allocation of its own
//! beyond what egui hands it.

use crate::gpu::error::VkResultExt;
use crate::gpu::{FRAMES_IN_FLIGHT, GpuContext, GpuError};
use ash::vk;
use egui::epaint::ImageDelta;
use egui::{ClippedPrimitive, ColorImage, ImageData, TextureId, TexturesDelta};
use egui_ash_renderer::{DynamicRendering, Options, RenderMode, Renderer};
use std::collections::HashMap;
use std::sync::Arc;

/// egui drawn on top of the scene.
pub struct EguiPass {
    renderer: Option<Renderer<egui_ash_renderer::allocator::DefaultAllocator>>,
    /// For egui-ash-renderer's one-shot texture uploads (it waits for the queue).
    upload_pool: vk::CommandPool,
    /// CPU copies of egui's textures (partial updates are applied here).
    mirrors: HashMap<TextureId, ColorImage>,
    /// Per frame slot: textures to free once that slot's fence has signalled.
    to_free: [Vec<TextureId>; FRAMES_IN_FLIGHT],
    primitives: Vec<ClippedPrimitive>,
    pixels_per_point: f32,
}

fn renderer_error(e: egui_ash_renderer::RendererError) -> GpuError {
    GpuError::new(format!("egui-ash-renderer: {e}"))
}

impl EguiPass {
    /// Creates the pipeline for colour attachments of `format` (sRGB
    /// formats get linear output, the hardware encodes).
    pub fn new(ctx: &GpuContext, format: vk::Format) -> Result<Self, GpuError> {
        let info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(ctx.queue_family)
            .flags(vk::CommandPoolCreateFlags::TRANSIENT);
        // SAFETY: valid create info on a live device; destroyed in `destroy`.
        let upload_pool =
            unsafe { ctx.device.create_command_pool(&info, None) }.call("vkCreateCommandPool")?;
        let mode = RenderMode::DynamicRendering(DynamicRendering {
            color_attachment_format: format,
            depth_attachment_format: None,
            stencil_attachment_format: None,
        });
        let options = Options {
            in_flight_frames: FRAMES_IN_FLIGHT,
            enable_depth_test: false,
            enable_depth_write: false,
            srgb_framebuffer: crate::gpu::swapchain::is_srgb(format),
        };
        let renderer =
            Renderer::with_default_allocator(&ctx.instance, ctx.physical, ctx.device.clone(), mode, options);
        let renderer = match renderer {
            Ok(r) => r,
            Err(e) => {
                // SAFETY: nothing was allocated from the pool.
                unsafe { ctx.device.destroy_command_pool(upload_pool, None) };
                return Err(renderer_error(e));
            }
        };
        Ok(EguiPass {
            renderer: Some(renderer),
            upload_pool,
            mirrors: HashMap::new(),
            to_free: std::array::from_fn(|_| Vec::with_capacity(16)),
            primitives: Vec::new(),
            pixels_per_point: 1.0,
        })
    }

    /// Whether `delta` rewrites or replaces textures, so that every frame
    /// in flight must have finished before `prepare`.
    pub fn needs_idle(delta: &TexturesDelta) -> bool {
        !delta.set.is_empty()
    }

    /// Frees the textures whose frees were deferred into frame slot `slot`;
    /// call once that slot's fence has signalled (after `wait_next_slot`).
    pub fn release_slot(&mut self, slot: usize) -> Result<(), GpuError> {
        let Some(renderer) = self.renderer.as_mut() else { return Ok(()) };
        for id in self.to_free[slot].drain(..) {
            renderer.free_texture(id).map_err(renderer_error)?;
            self.mirrors.remove(&id);
        }
        Ok(())
    }

    /// Applies this frame's texture uploads (after the caller made sure no
    /// frame in flight uses egui textures when `needs_idle` says so),
    /// defers its frees into frame slot `slot`, and keeps the tessellated
    /// `primitives` for `record`.
    pub fn prepare(
        &mut self,
        ctx: &GpuContext,
        slot: usize,
        mut delta: TexturesDelta,
        primitives: Vec<ClippedPrimitive>,
        pixels_per_point: f32,
    ) -> Result<(), GpuError> {
        // Frees first: an upload error below must not drop them unapplied.
        self.to_free[slot].extend(delta.free.drain());
        self.primitives = primitives;
        self.pixels_per_point = pixels_per_point;
        let Some(renderer) = self.renderer.as_mut() else {
            delta.clear();
            return Ok(());
        };
        // An early return drops the drain, which empties the set.
        for (id, deltas) in delta.set.drain() {
            for d in deltas {
                let ImageData::Color(image) = &d.image;
                let full = match (d.pos, self.mirrors.get_mut(&id)) {
                    (Some([x, y]), Some(mirror)) => {
                        let [w, h] = image.size;
                        let stride = mirror.size[0];
                        for row in 0..h {
                            let dst = (y + row) * stride + x;
                            if let (Some(dst), Some(src)) = (
                                mirror.pixels.get_mut(dst..dst + w),
                                image.pixels.get(row * w..(row + 1) * w),
                            ) {
                                dst.copy_from_slice(src);
                            }
                        }
                        mirror.clone()
                    }
                    _ => {
                        let copy = (**image).clone();
                        self.mirrors.insert(id, copy.clone());
                        copy
                    }
                };
                let whole = ImageDelta::full(ImageData::Color(Arc::new(full)), d.options);
                renderer.set_texture(ctx.queue, self.upload_pool, id, &whole).map_err(renderer_error)?;
            }
        }
        Ok(())
    }

    /// Records egui's draws into `view` (an image of `extent` in
    /// COLOR_ATTACHMENT_OPTIMAL whose earlier writes this frame are already
    /// ordered before colour-attachment access), loading its contents.
    pub fn record(
        &mut self,
        ctx: &GpuContext,
        cmd: vk::CommandBuffer,
        view: vk::ImageView,
        extent: vk::Extent2D,
    ) -> Result<(), GpuError> {
        let Some(renderer) = self.renderer.as_mut() else { return Ok(()) };
        let color = [vk::RenderingAttachmentInfo::default()
            .image_view(view)
            .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
            .load_op(vk::AttachmentLoadOp::LOAD)
            .store_op(vk::AttachmentStoreOp::STORE)];
        let info = vk::RenderingInfo::default()
            .render_area(vk::Rect2D { offset: vk::Offset2D::default(), extent })
            .layer_count(1)
            .color_attachments(&color);
        // SAFETY: cmd is recording outside rendering; the view is live and in the layout given.
        unsafe { ctx.device.cmd_begin_rendering(cmd, &info) };
        let drawn = renderer.cmd_draw(cmd, extent, self.pixels_per_point, &self.primitives);
        // SAFETY: rendering was begun above.
        unsafe { ctx.device.cmd_end_rendering(cmd) };
        drawn.map_err(renderer_error)
    }

    /// Frees everything after the device went idle.
    pub fn destroy(mut self, ctx: &GpuContext) {
        let _ = ctx.wait_idle();
        // egui-ash-renderer frees its objects on drop; the device is idle.
        self.renderer.take();
        // SAFETY: the uploads finished (they wait for the queue); the device is idle.
        unsafe { ctx.device.destroy_command_pool(self.upload_pool, None) };
    }
}
