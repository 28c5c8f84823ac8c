//! The window's side of the frame path: a surface and its swapchain, the
//! window's attachments, the egui overlay and the bone lines, around the
//! renderer's frame (the same skinning and scene passes as headless frames).
//! One frame: It never records the scene itself: the renderer's one frame
//! sequence does.
//!
//! `begin`: recreate what a resize invalidated -> wait for the next frame
//! slot's fence -> free the overlay textures it retired. The caller poses
//! and runs egui, then `prepare_overlay` (texture uploads), then `draw`,
//! which runs the renderer's one frame sequence (`Renderer::draw_frame`)
//! ending in this window: acquire an image (that slot's acquire semaphore)
//! -> the renderer's skinning and scene passes (MSAA resolved into the
//! image) with the bones inside the main pass -> the egui pass, then the
//! screenshot copy or the transition to PRESENT_SRC -> submit (wait for the
//! acquire at COLOR_ATTACHMENT_OUTPUT, signal the image's render-finished
//! semaphore) -> present.
//!
//! Everything that can fail runs before the image is acquired where it can:
//! once acquired, the slot's semaphore is signalled and the frame must be
//! submitted (a signalled semaphore may not be acquired with again).

use super::bone_lines::{self, BoneLines};
use super::camera::Camera;
use super::egui_pass::EguiPass;
use super::error::RenderError;
use super::frame::{FrameContents, FrameEnd, FrameInput, FrameOutput, GpuTimes};
use super::renderer::Renderer;
use super::scene_passes::SceneTarget;
use super::session::GpuSession;
use super::skin_pass::SkinStats;
use super::target::{DEPTH_FORMAT, ScreenTarget, record_color_readback};
use crate::anim::FramePoses;
use crate::asset::Model;
use crate::gpu::barrier::{self, Access, ImageBarrier};
use crate::gpu::image::subresource_range;
use crate::gpu::swapchain::{self, Acquired, Surface, Swapchain};
use crate::gpu::{Buffer, FrameRing, FrameSlot, GpuContext, GpuError, GpuOptions};
use ash::vk;
use egui::{ClippedPrimitive, TexturesDelta};
use gpu_allocator::MemoryLocation;
use nalgebra::Matrix4;
use winit::raw_window_handle::{HasDisplayHandle, HasWindowHandle};

/// Why a window could not be opened for drawing.
#[derive(Debug)]
pub enum OpenError {
    /// The window cannot be drawn into here (no surface support, no device
    /// that presents to it): the caller may fall back to headless output.
    Unusable(String),
    /// Something failed that a fallback would not fix.
    Failed(GpuError),
}

/// The skeleton drawn over the mesh.
#[derive(Debug, Clone, Copy)]
pub struct BoneOverlay<'a> {
    /// Places the character (scene to world).
    pub world: Matrix4<f32>,
    /// Scene-space joint matrices (`PoseOutput::world`).
    pub joints: &'a [Matrix4<f32>],
    /// Parent of each joint, as the skeleton's.
    pub parents: &'a [u32],
    /// The highlighted joint.
    pub selected: Option<usize>,
}

/// What one window frame shows.
pub struct WindowScene<'a> {
    /// Every character's pose and placement.
    pub poses: &'a dyn FramePoses,
    /// The view (its lens shift included).
    pub camera: &'a Camera,
    /// Draw the characters (off: the bones alone).
    pub show_mesh: bool,
    /// Draw this skeleton over the mesh.
    pub bones: Option<BoneOverlay<'a>>,
    /// Copy the presented image back (`Drawn::screenshot`).
    pub screenshot: bool,
}

/// A presented image's pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct Screenshot {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// RGBA8, sRGB, rows top to bottom, alpha 255.
    pub rgba: Vec<u8>,
}

/// What `draw` did.
#[derive(Debug, Clone, Default)]
pub struct Drawn {
    /// This frame's upload and skinning.
    pub skin: SkinStats,
    /// GPU times of the earlier frame that used the same slot.
    pub previous_gpu: Option<GpuTimes>,
    /// The presented image, when asked for.
    pub screenshot: Option<Screenshot>,
}

/// A window's surface, swapchain, attachments and overlays.
pub struct WindowFrame {
    surface: Option<Surface>,
    swapchain: Option<Swapchain>,
    /// Depth and MSAA attachments of the swapchain's size.
    screen: Option<ScreenTarget>,
    overlay: Option<EguiPass>,
    /// Made on first use, with the renderer's sample count.
    bones: Option<BoneLines>,
    /// Which joints the bone lines draw (`bone_lines::skin_joint_mask`).
    bone_mask: Vec<bool>,
}

impl WindowFrame {
    /// Opens a device that can present to `window` (as `options` asks, with
    /// the surface and swapchain extensions added) and the window's surface,
    /// swapchain of `size` pixels and overlay.
    ///
    /// # Safety
    /// The window must outlive the returned frame: `destroy` it (then the
    /// context) before the window is dropped.
    pub unsafe fn open<W: HasDisplayHandle + HasWindowHandle>(
        mut options: GpuOptions,
        window: &W,
        size: (u32, u32),
        vsync: bool,
    ) -> Result<(GpuSession, WindowFrame), OpenError> {
        let handles =
            window.display_handle().and_then(|d| Ok((d.as_raw(), window.window_handle()?.as_raw())));
        let (display, raw_window) =
            handles.map_err(|e| OpenError::Unusable(format!("no window handle ({e})")))?;
        options.instance_extensions = swapchain::required_instance_extensions(display)
            .map_err(|e| OpenError::Unusable(format!("no Vulkan surface support ({e})")))?;
        options.device_extensions = vec![ash::khr::swapchain::NAME];
        let ctx = GpuContext::new(&options, &|entry, instance, physical, family| {
            swapchain::presentation_supported(entry, instance, physical, family, display, raw_window)
        })
        .map_err(|e| OpenError::Unusable(format!("no Vulkan device can present to the window ({e})")))?;
        let mut frame = WindowFrame {
            surface: None,
            swapchain: None,
            screen: None,
            overlay: None,
            bones: None,
            bone_mask: Vec::new(),
        };
        let opened = (|| {
            // SAFETY: the caller keeps the window alive until `destroy`.
            let surface = unsafe { Surface::new(&ctx, display, raw_window) }
                .map_err(|e| OpenError::Unusable(format!("cannot create a Vulkan surface ({e})")))?;
            let surface = frame.surface.insert(surface);
            let extent = vk::Extent2D { width: size.0, height: size.1 };
            let chain = Swapchain::new(&ctx, surface, extent, vsync)
                .map_err(|e| OpenError::Unusable(format!("cannot present to the window ({e})")))?;
            let format = chain.format.format;
            frame.swapchain = Some(chain);
            frame.overlay = Some(EguiPass::new(&ctx, format).map_err(OpenError::Failed)?);
            Ok(())
        })();
        match opened {
            Ok(()) => Ok((GpuSession::around(ctx), frame)),
            Err(e) => {
                // The run ends or falls back: the validation messages of
                // this half-made context would only repeat the error.
                frame.destroy(&ctx);
                let _ = ctx.finish();
                Err(e)
            }
        }
    }

    fn chain(&self) -> Result<&Swapchain, GpuError> {
        self.swapchain.as_ref().ok_or_else(|| GpuError::new("the window has no swapchain"))
    }

    /// The format of the swapchain images (for `Renderer::new_for_screen`).
    pub fn color_format(&self) -> vk::Format {
        self.swapchain.as_ref().map_or(vk::Format::UNDEFINED, |c| c.format.format)
    }

    /// Size of the swapchain images in pixels.
    pub fn size(&self) -> (u32, u32) {
        self.swapchain.as_ref().map_or((0, 0), |c| (c.extent.width, c.extent.height))
    }

    /// Width over height of the swapchain images (1 when empty).
    pub fn aspect(&self) -> f32 {
        match self.size() {
            (w, h) if w > 0 && h > 0 => w as f32 / h as f32,
            _ => 1.0,
        }
    }

    /// Marks the swapchain for recreation (the window was resized).
    pub fn invalidate(&mut self) {
        if let Some(chain) = self.swapchain.as_mut() {
            chain.invalidate();
        }
    }

    /// Draws the bones of `model`'s skins only (its other nodes are not joints).
    pub fn show_bones_of(&mut self, model: &Model) {
        self.bone_mask = bone_lines::skin_joint_mask(model);
        if let Some(b) = self.bones.as_mut() {
            b.set_mask(&self.bone_mask);
        }
    }

    /// Frees the overlay textures deferred into every slot; call when the
    /// device is idle (after a scene was replaced).
    pub fn release_overlay_slots(&mut self) -> Result<(), GpuError> {
        if let Some(overlay) = self.overlay.as_mut() {
            for s in 0..crate::gpu::FRAMES_IN_FLIGHT {
                overlay.release_slot(s)?;
            }
        }
        Ok(())
    }

    /// Starts a frame for a window of `window_size` pixels: recreates the
    /// swapchain and attachments a resize invalidated, waits for the next
    /// frame slot and frees the overlay textures it retired. `None` when
    /// there is nothing to draw into (a minimised window).
    pub fn begin(
        &mut self,
        ctx: &GpuContext,
        renderer: &mut Renderer,
        window_size: (u32, u32),
        vsync: bool,
    ) -> Result<Option<usize>, GpuError> {
        if window_size.0 == 0 || window_size.1 == 0 {
            return Ok(None);
        }
        let chain = self.swapchain.as_mut().ok_or_else(|| GpuError::new("the window has no swapchain"))?;
        chain.set_vsync(vsync);
        if chain.needs_recreate() {
            let extent = vk::Extent2D { width: window_size.0, height: window_size.1 };
            if !chain.recreate(ctx, extent)? {
                // The surface reports a zero extent: minimised.
                return Ok(None);
            }
            // Recreate waited for the device: the old attachments are unused.
            if let Some(old) = self.screen.take() {
                old.destroy(ctx);
            }
        }
        let (extent, format) = (chain.extent, chain.format.format);
        let samples = renderer.samples();
        if self.screen.as_ref().is_none_or(|s| s.extent != extent || s.samples != samples) {
            if let Some(old) = self.screen.take() {
                // Reached without a recreate: wait before freeing.
                renderer.wait_all(ctx)?;
                old.destroy(ctx);
            }
            self.screen = Some(ScreenTarget::new(ctx, extent, format, samples)?);
        }
        if self.bones.as_ref().is_none_or(|b| b.samples() != samples) {
            if let Some(old) = self.bones.take() {
                renderer.wait_all(ctx)?;
                old.destroy(ctx);
            }
            let mut bones = BoneLines::new(ctx, format, DEPTH_FORMAT, samples)?;
            bones.set_mask(&self.bone_mask);
            self.bones = Some(bones);
        }
        // The slot's previous frame is done: its acquire semaphore and the
        // overlay textures freed then may be reused / freed now.
        let slot = renderer.wait_next_slot(ctx)?;
        if let Some(overlay) = self.overlay.as_mut() {
            overlay.release_slot(slot)?;
        }
        Ok(Some(slot))
    }

    /// Applies this frame's egui output (texture uploads, frees deferred
    /// into `slot`; `primitives` for `draw`). Texture replacements wait for
    /// every frame in flight: egui-ash-renderer replaces them at once.
    pub fn prepare_overlay(
        &mut self,
        ctx: &GpuContext,
        renderer: &mut Renderer,
        slot: usize,
        textures: TexturesDelta,
        primitives: Vec<ClippedPrimitive>,
        pixels_per_point: f32,
    ) -> Result<(), GpuError> {
        let overlay = self.overlay.as_mut().ok_or_else(|| GpuError::new("the window has no overlay"))?;
        if EguiPass::needs_idle(&textures) {
            renderer.wait_all(ctx)?;
        }
        overlay.prepare(ctx, slot, textures, primitives, pixels_per_point)
    }

    /// Records, submits and presents one frame of `scene` (after `begin` and
    /// `prepare_overlay`). `None` when no image could be acquired (the
    /// swapchain is out of date; the next `begin` recreates it).
    pub fn draw(
        &mut self,
        ctx: &GpuContext,
        renderer: &mut Renderer,
        scene: &WindowScene,
    ) -> Result<Option<Drawn>, RenderError> {
        let screenshot = match scene.screenshot {
            true => Some(screenshot_buffer(ctx, self.chain()?)?),
            false => None,
        };
        let drawn = self.draw_with(ctx, renderer, scene, screenshot.as_ref());
        let Some(buffer) = screenshot else { return drawn };
        let read = match &drawn {
            Ok(Some(_)) => Some(read_screenshot(ctx, renderer, &buffer, self.chain()?)),
            // The copy may be in flight after a failed submit: free the buffer after the GPU.
            Err(_) => renderer.wait_all(ctx).err().map(Err),
            Ok(None) => None,
        };
        buffer.destroy(ctx);
        let mut drawn = drawn?;
        if let (Some(d), Some(read)) = (drawn.as_mut(), read) {
            d.screenshot = Some(read?);
        }
        Ok(drawn)
    }

    /// `draw`'s body, with the screenshot buffer made.
    fn draw_with(
        &mut self,
        ctx: &GpuContext,
        renderer: &mut Renderer,
        scene: &WindowScene,
        screenshot: Option<&Buffer>,
    ) -> Result<Option<Drawn>, RenderError> {
        let (Some(chain), Some(screen), Some(overlay), Some(bones)) =
            (self.swapchain.as_mut(), self.screen.as_ref(), self.overlay.as_mut(), self.bones.as_mut())
        else {
            return Err(GpuError::new("draw without begin").into());
        };
        let mut output = WindowOutput {
            chain,
            screen,
            overlay,
            bones,
            overlay_bones: scene.bones,
            screenshot,
            image: None,
        };
        let contents = FrameContents::Scene { camera: scene.camera, show_mesh: scene.show_mesh };
        let input = FrameInput { poses: scene.poses, contents };
        let report = renderer.draw_frame(ctx, &input, &mut output)?;
        Ok(report.map(|r| Drawn { skin: r.skin, previous_gpu: r.previous_gpu, screenshot: None }))
    }

    /// Waits for the device and frees everything, the surface last.
    pub fn destroy(mut self, ctx: &GpuContext) {
        let _ = ctx.wait_idle();
        if let Some(o) = self.overlay.take() {
            o.destroy(ctx);
        }
        if let Some(b) = self.bones.take() {
            b.destroy(ctx);
        }
        if let Some(s) = self.screen.take() {
            s.destroy(ctx);
        }
        if let Some(s) = self.swapchain.take() {
            s.destroy(ctx);
        }
        if let Some(s) = self.surface.take() {
            s.destroy();
        }
    }
}

/// A frame that ends in the window: the acquired swapchain image, the
/// bones in the scene pass, the egui pass over it, then the screenshot copy
/// or the transition to PRESENT_SRC, and the present.
struct WindowOutput<'a> {
    chain: &'a mut Swapchain,
    screen: &'a ScreenTarget,
    overlay: &'a mut EguiPass,
    bones: &'a mut BoneLines,
    overlay_bones: Option<BoneOverlay<'a>>,
    screenshot: Option<&'a Buffer>,
    /// The acquired image's index.
    image: Option<u32>,
}

impl WindowOutput<'_> {
    fn image_index(&self) -> Result<u32, GpuError> {
        self.image.ok_or_else(|| GpuError::new("no swapchain image acquired"))
    }
}

impl FrameOutput for WindowOutput<'_> {
    fn begin(&mut self, _: &GpuContext, slot: usize) -> Result<bool, RenderError> {
        // The slot's fence has signalled, so its acquire semaphore is unsignalled and free.
        match self.chain.acquire(slot)? {
            Acquired::Image { index, .. } => self.image = Some(index),
            Acquired::OutOfDate => return Ok(false),
        }
        Ok(true)
    }

    fn target(&self, _: usize) -> Result<SceneTarget<'_>, GpuError> {
        let (image, view) = self.chain.image(self.image_index()?);
        Ok(SceneTarget::Window { target: self.screen, image, view })
    }

    fn record_in_scene(
        &mut self,
        ctx: &GpuContext,
        slot: &mut FrameSlot,
        camera: &Camera,
    ) -> Result<(), GpuError> {
        let Some(b) = &self.overlay_bones else { return Ok(()) };
        let view_proj = camera.view_proj();
        let cmd = slot.command_buffer;
        ctx.begin_region(cmd, c"bones");
        let recorded = self.bones.record(
            ctx,
            slot,
            &view_proj,
            &b.world,
            b.joints,
            b.parents,
            b.selected,
            self.chain.extent,
        );
        ctx.end_region(cmd);
        recorded
    }

    fn record_end(&mut self, ctx: &GpuContext, end: &FrameEnd) -> Result<(), GpuError> {
        let (image, view) = self.chain.image(self.image_index()?);
        let extent = self.chain.extent;
        scene_to_overlay_barrier(ctx, end.cmd, image);
        ctx.begin_region(end.cmd, c"UI (egui)");
        let overlay = self.overlay.record(ctx, end.cmd, view, extent);
        ctx.end_region(end.cmd);
        overlay?;
        match self.screenshot {
            Some(buffer) => record_color_readback(ctx, end.cmd, image, buffer.raw, extent, Access::Present),
            None => to_present(ctx, end.cmd, image),
        }
        Ok(())
    }

    fn semaphores(
        &self,
        slot: usize,
    ) -> Option<(vk::SemaphoreSubmitInfo<'static>, vk::SemaphoreSubmitInfo<'static>)> {
        let image = self.image?;
        let wait = vk::SemaphoreSubmitInfo::default()
            .semaphore(self.chain.acquire_semaphore(slot))
            .stage_mask(vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT);
        let signal = vk::SemaphoreSubmitInfo::default()
            .semaphore(self.chain.render_finished(image))
            .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS);
        Some((wait, signal))
    }

    fn submitted(&mut self, ctx: &GpuContext, _: &mut FrameRing, _: usize, _: u64) -> Result<(), GpuError> {
        self.chain.present(ctx, self.image_index()?)
    }
}

/// Between the scene pass (its MSAA resolve, or direct writes, into the
/// image) and the egui pass (loads the image and blends over it): both are
/// colour-attachment accesses in COLOR_ATTACHMENT_OUTPUT, so the resolve
/// writes are made available and visible to the egui pass's reads and
/// writes; the layout stays COLOR_ATTACHMENT_OPTIMAL.
fn scene_to_overlay_barrier(ctx: &GpuContext, cmd: vk::CommandBuffer, image: vk::Image) {
    let range = subresource_range(vk::ImageAspectFlags::COLOR);
    // cmd is recording outside rendering; the image is acquired.
    barrier::record_image(
        ctx,
        cmd,
        ImageBarrier::new(image, range, &[Access::ColorAttachmentWrite], &[Access::ColorAttachmentReadWrite]),
    );
}

/// The image's last writes (egui, COLOR_ATTACHMENT_OUTPUT) must finish and
/// be made available, and the image must be in PRESENT_SRC_KHR, before
/// presentation. No second scope is needed: the render-finished semaphore
/// is signalled with ALL_COMMANDS after this barrier in submission order
/// (its first scope covers the transition), the present waits on it, and
/// vkQueuePresentKHR makes available writes visible to the engine's reads.
fn to_present(ctx: &GpuContext, cmd: vk::CommandBuffer, image: vk::Image) {
    let range = subresource_range(vk::ImageAspectFlags::COLOR);
    // cmd is recording outside rendering; the image is acquired.
    barrier::record_image(
        ctx,
        cmd,
        ImageBarrier::new(image, range, &[Access::ColorAttachmentWrite], &[Access::Present]),
    );
}

/// A host-readable buffer for one swapchain image (made for a screenshot frame only).
fn screenshot_buffer(ctx: &GpuContext, chain: &Swapchain) -> Result<Buffer, GpuError> {
    if !chain.transfer_src {
        return Err(GpuError::new("this surface's images cannot be copied (no TRANSFER_SRC usage)"));
    }
    let bytes = u64::from(chain.extent.width) * u64::from(chain.extent.height) * 4;
    Buffer::new(ctx, "screenshot", bytes, vk::BufferUsageFlags::TRANSFER_DST, MemoryLocation::GpuToCpu)
}

/// Waits for the frame that copied the screenshot and returns it as RGBA.
fn read_screenshot(
    ctx: &GpuContext,
    renderer: &mut Renderer,
    buffer: &Buffer,
    chain: &Swapchain,
) -> Result<Screenshot, GpuError> {
    renderer.wait_all(ctx)?;
    let (width, height) = (chain.extent.width, chain.extent.height);
    let bytes = width as usize * height as usize * 4;
    let mapped = buffer.mapped().ok_or_else(|| GpuError::new("screenshot buffer is not mapped"))?;
    let mut rgba = mapped[..bytes].to_vec();
    let bgra = matches!(chain.format.format, vk::Format::B8G8R8A8_SRGB | vk::Format::B8G8R8A8_UNORM);
    for px in rgba.chunks_exact_mut(4) {
        if bgra {
            px.swap(0, 2);
        }
        // The window is opaque: alpha is whatever the passes left.
        px[3] = 255;
    }
    Ok(Screenshot { width, height, rgba })
}
