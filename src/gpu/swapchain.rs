//! A window surface and its swapchain: creation from winit's raw handles
//! (through ash-window), recreation on resize and on OUT_OF_DATE/SUBOPTIMAL,
//! minimised windows (zero extent: nothing is rendered or recreated), vsync
//! on (FIFO) or off (MAILBOX, else IMMEDIATE), sRGB BGRA8/RGBA8 preferred. It
//! records no commands: the window's frame path transitions and draws into
//! the images.
//!
//! Semaphores: one *acquire* semaphore per frame slot, reused once that
//! slot's fence has signalled (`FrameRing::wait_next`), because the submit
//! that waited on it is then complete. One *render-finished* semaphore per
//! swapchain image, indexed by the acquired image index: the presentation
//! engine waits on it, and no fence tells when that wait is over, but an
//! image is handed out again by vkAcquireNextImageKHR only after its
//! previous present finished, so the semaphore of the image just acquired
//! is free again (the known-correct pattern; per-slot render-finished
//! semaphores could still be pending in a present).
//!
//! Recreation waits for the device to go idle instead of retiring the old
//! swapchain into a frame slot: the old images' render-finished semaphores
//! are waited on by presents, which no fence covers (without
//! VK_EXT_swapchain_maintenance1), so a slot fence would not prove they are
//! unused. Resizes are rare; an idle wait there costs nothing measurable.

use super::context::GpuContext;
use super::error::{GPU_WAIT_TIMEOUT, GpuError, VkResultExt};
use super::frame::FRAMES_IN_FLIGHT;
use super::image::subresource_range;
use ash::vk;
use std::ffi::CStr;
use winit::raw_window_handle::{RawDisplayHandle, RawWindowHandle};

/// Instance extensions a surface on `display` needs.
pub fn required_instance_extensions(display: RawDisplayHandle) -> Result<Vec<&'static CStr>, GpuError> {
    let names = ash_window::enumerate_required_extensions(display)
        .call("ash_window::enumerate_required_extensions")?;
    Ok(names
        .iter()
        // SAFETY: ash-window returns pointers to its static NUL-terminated extension names.
        .map(|&p| unsafe { CStr::from_ptr(p) })
        .collect())
}

/// Whether queue family `family` of `physical` can present to windows of
/// `display` (asked of the platform, before any surface exists). Platforms
/// other than X11 answer true here; `Swapchain::new` checks the surface.
pub fn presentation_supported(
    entry: &ash::Entry,
    instance: &ash::Instance,
    physical: vk::PhysicalDevice,
    family: u32,
    display: RawDisplayHandle,
    window: RawWindowHandle,
) -> bool {
    match (display, window) {
        (RawDisplayHandle::Xlib(d), RawWindowHandle::Xlib(w)) => {
            let Some(dpy) = d.display else { return false };
            let loader = ash::khr::xlib_surface::Instance::new(entry, instance);
            // SAFETY: the display pointer comes from winit's live X connection;
            // the instance enabled VK_KHR_xlib_surface (required_instance_extensions).
            unsafe {
                loader.get_physical_device_xlib_presentation_support(
                    physical,
                    family,
                    dpy.as_ptr().cast(),
                    w.visual_id as vk::VisualID,
                )
            }
        }
        (RawDisplayHandle::Xcb(d), RawWindowHandle::Xcb(w)) => {
            let (Some(conn), Some(visual)) = (d.connection, w.visual_id) else { return true };
            let loader = ash::khr::xcb_surface::Instance::new(entry, instance);
            // SAFETY: the connection comes from winit's live X connection; the
            // instance enabled VK_KHR_xcb_surface.
            unsafe {
                let conn = &mut *conn.as_ptr().cast::<vk::xcb_connection_t>();
                loader.get_physical_device_xcb_presentation_support(physical, family, conn, visual.get())
            }
        }
        _ => true,
    }
}

/// A window surface.
pub struct Surface {
    loader: ash::khr::surface::Instance,
    /// The surface handle.
    pub raw: vk::SurfaceKHR,
}

impl Surface {
    /// Creates a surface for `window` on `display`.
    ///
    /// # Safety
    /// The handles must stay valid (the window alive) until `destroy`.
    pub unsafe fn new(
        ctx: &GpuContext,
        display: RawDisplayHandle,
        window: RawWindowHandle,
    ) -> Result<Self, GpuError> {
        // SAFETY: the caller keeps the window alive; the instance enabled the
        // extensions ash-window needs for this display.
        let raw = unsafe { ash_window::create_surface(&ctx.entry, &ctx.instance, display, window, None) }
            .call("vkCreate*SurfaceKHR")?;
        Ok(Surface { loader: ash::khr::surface::Instance::new(&ctx.entry, &ctx.instance), raw })
    }

    /// Whether the context's queue can present to this surface.
    pub fn supported(&self, ctx: &GpuContext) -> bool {
        // SAFETY: physical device and surface belong to the same instance.
        unsafe { self.loader.get_physical_device_surface_support(ctx.physical, ctx.queue_family, self.raw) }
            .unwrap_or(false)
    }

    /// Destroys the surface (after its swapchain).
    pub fn destroy(self) {
        // SAFETY: the caller destroyed every swapchain made from the surface.
        unsafe { self.loader.destroy_surface(self.raw, None) };
    }
}

/// What `acquire` got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acquired {
    /// An image to render into and present; `suboptimal` asks for a
    /// recreation after this frame (the acquire semaphore is signalled, so
    /// the frame must still be submitted).
    Image {
        /// Index into the swapchain images.
        index: u32,
        /// The swapchain no longer matches the surface exactly.
        suboptimal: bool,
    },
    /// The swapchain is out of date (nothing was signalled): recreate, skip the frame.
    OutOfDate,
}

/// The swapchain of one surface with its views and semaphores.
pub struct Swapchain {
    loader: ash::khr::swapchain::Device,
    surface_loader: ash::khr::surface::Instance,
    surface: vk::SurfaceKHR,
    raw: vk::SwapchainKHR,
    /// Colour format and space of the images.
    pub format: vk::SurfaceFormatKHR,
    /// Size of the images (0x0 while the window is minimised and no swapchain exists).
    pub extent: vk::Extent2D,
    /// The present mode in use.
    pub present_mode: vk::PresentModeKHR,
    images: Vec<vk::Image>,
    views: Vec<vk::ImageView>,
    render_finished: Vec<vk::Semaphore>,
    acquire: [vk::Semaphore; FRAMES_IN_FLIGHT],
    vsync: bool,
    /// Images can be copied from (screenshots).
    pub transfer_src: bool,
    needs_recreate: bool,
}

/// sRGB 8-bit BGRA or RGBA when offered, else the first format.
fn choose_format(formats: &[vk::SurfaceFormatKHR]) -> Option<vk::SurfaceFormatKHR> {
    let preferred = [vk::Format::B8G8R8A8_SRGB, vk::Format::R8G8B8A8_SRGB];
    preferred
        .iter()
        .find_map(|&f| {
            formats
                .iter()
                .copied()
                .find(|s| s.format == f && s.color_space == vk::ColorSpaceKHR::SRGB_NONLINEAR)
        })
        .or_else(|| formats.first().copied())
}

/// The surface's extent, or `window_extent` within the surface's bounds
/// where the surface leaves it to the swapchain.
fn choose_extent(caps: &vk::SurfaceCapabilitiesKHR, window_extent: vk::Extent2D) -> vk::Extent2D {
    if caps.current_extent.width != u32::MAX {
        caps.current_extent
    } else {
        vk::Extent2D {
            width: window_extent.width.clamp(caps.min_image_extent.width, caps.max_image_extent.width),
            height: window_extent.height.clamp(caps.min_image_extent.height, caps.max_image_extent.height),
        }
    }
}

/// The first supported of opaque, inherited, pre- and post-multiplied alpha.
fn choose_composite_alpha(caps: &vk::SurfaceCapabilitiesKHR) -> vk::CompositeAlphaFlagsKHR {
    [
        vk::CompositeAlphaFlagsKHR::OPAQUE,
        vk::CompositeAlphaFlagsKHR::INHERIT,
        vk::CompositeAlphaFlagsKHR::PRE_MULTIPLIED,
        vk::CompositeAlphaFlagsKHR::POST_MULTIPLIED,
    ]
    .into_iter()
    .find(|&c| caps.supported_composite_alpha.contains(c))
    .unwrap_or(vk::CompositeAlphaFlagsKHR::OPAQUE)
}

/// The identity transform where supported, else the current one.
fn choose_transform(caps: &vk::SurfaceCapabilitiesKHR) -> vk::SurfaceTransformFlagsKHR {
    if caps.supported_transforms.contains(vk::SurfaceTransformFlagsKHR::IDENTITY) {
        vk::SurfaceTransformFlagsKHR::IDENTITY
    } else {
        caps.current_transform
    }
}

/// FIFO with vsync (always available); without, MAILBOX, else IMMEDIATE, else FIFO.
fn choose_present_mode(modes: &[vk::PresentModeKHR], vsync: bool) -> vk::PresentModeKHR {
    if vsync {
        return vk::PresentModeKHR::FIFO;
    }
    [vk::PresentModeKHR::MAILBOX, vk::PresentModeKHR::IMMEDIATE]
        .into_iter()
        .find(|m| modes.contains(m))
        .unwrap_or(vk::PresentModeKHR::FIFO)
}

/// Whether `format` is an sRGB (hardware-encoded) format.
pub fn is_srgb(format: vk::Format) -> bool {
    matches!(format, vk::Format::B8G8R8A8_SRGB | vk::Format::R8G8B8A8_SRGB | vk::Format::A8B8G8R8_SRGB_PACK32)
}

impl Swapchain {
    /// Creates a swapchain for `surface` of (at most) `window_extent`, with
    /// vsync as asked. The extent may be 0x0 (minimised): then no swapchain
    /// exists until `recreate` gets a non-zero one.
    pub fn new(
        ctx: &GpuContext,
        surface: &Surface,
        window_extent: vk::Extent2D,
        vsync: bool,
    ) -> Result<Self, GpuError> {
        if !surface.supported(ctx) {
            return Err(GpuError::new(format!(
                "the device {} cannot present to this window",
                ctx.device_name
            )));
        }
        // SAFETY: the surface belongs to the context's instance.
        let formats =
            unsafe { surface.loader.get_physical_device_surface_formats(ctx.physical, surface.raw) }
                .call("vkGetPhysicalDeviceSurfaceFormatsKHR")?;
        let format = choose_format(&formats).ok_or_else(|| GpuError::new("the surface offers no format"))?;
        let mut chain = Swapchain {
            loader: ash::khr::swapchain::Device::new(&ctx.instance, &ctx.device),
            surface_loader: surface.loader.clone(),
            surface: surface.raw,
            raw: vk::SwapchainKHR::null(),
            format,
            extent: vk::Extent2D::default(),
            present_mode: vk::PresentModeKHR::FIFO,
            images: Vec::new(),
            views: Vec::new(),
            render_finished: Vec::new(),
            acquire: [vk::Semaphore::null(); FRAMES_IN_FLIGHT],
            vsync,
            transfer_src: false,
            needs_recreate: false,
        };
        for (i, s) in chain.acquire.iter_mut().enumerate() {
            // SAFETY: valid create info on a live device; destroyed in `destroy`.
            match unsafe { ctx.device.create_semaphore(&vk::SemaphoreCreateInfo::default(), None) } {
                Ok(sem) => {
                    *s = sem;
                    ctx.set_name(sem, &format!("acquire semaphore slot {i}"));
                }
                Err(e) => {
                    chain.destroy(ctx);
                    return Err(GpuError::vk("vkCreateSemaphore", e));
                }
            }
        }
        if let Err(e) = chain.build(ctx, window_extent) {
            chain.destroy(ctx);
            return Err(e);
        }
        Ok(chain)
    }

    /// Whether a swapchain exists (false while minimised).
    pub fn is_ready(&self) -> bool {
        self.raw != vk::SwapchainKHR::null()
    }

    /// Whether the next frame must recreate the swapchain first.
    pub fn needs_recreate(&self) -> bool {
        self.needs_recreate || !self.is_ready()
    }

    /// Asks for a recreation before the next frame (window resized).
    pub fn invalidate(&mut self) {
        self.needs_recreate = true;
    }

    /// Vsync on (FIFO) or off (MAILBOX/IMMEDIATE when available); a change recreates the swapchain.
    pub fn set_vsync(&mut self, vsync: bool) {
        if vsync != self.vsync {
            self.vsync = vsync;
            self.needs_recreate = true;
        }
    }

    /// Whether vsync is asked for.
    pub fn vsync(&self) -> bool {
        self.vsync
    }

    /// The swapchain images.
    pub fn images(&self) -> &[vk::Image] {
        &self.images
    }

    /// Image `index` and its view.
    pub fn image(&self, index: u32) -> (vk::Image, vk::ImageView) {
        (self.images[index as usize], self.views[index as usize])
    }

    /// The acquire semaphore of frame slot `slot`.
    pub fn acquire_semaphore(&self, slot: usize) -> vk::Semaphore {
        self.acquire[slot]
    }

    /// The render-finished semaphore of image `index`.
    pub fn render_finished(&self, index: u32) -> vk::Semaphore {
        self.render_finished[index as usize]
    }

    /// Recreates the swapchain for `window_extent` after waiting for the
    /// device to go idle (see the module docs for why not retire). Returns
    /// false when the surface has a zero extent (minimised): nothing is
    /// created and nothing may be rendered.
    pub fn recreate(&mut self, ctx: &GpuContext, window_extent: vk::Extent2D) -> Result<bool, GpuError> {
        ctx.wait_idle()?;
        self.build(ctx, window_extent)?;
        Ok(self.is_ready())
    }

    /// (Re)creates the swapchain, its views and render-finished semaphores
    /// for `window_extent` (nothing when minimised); the device is idle.
    fn build(&mut self, ctx: &GpuContext, window_extent: vk::Extent2D) -> Result<(), GpuError> {
        // SAFETY: surface and physical device belong to the context's instance.
        let (caps, modes) = unsafe {
            (
                self.surface_loader
                    .get_physical_device_surface_capabilities(ctx.physical, self.surface)
                    .call("vkGetPhysicalDeviceSurfaceCapabilitiesKHR")?,
                self.surface_loader
                    .get_physical_device_surface_present_modes(ctx.physical, self.surface)
                    .call("vkGetPhysicalDeviceSurfacePresentModesKHR")?,
            )
        };
        let extent = choose_extent(&caps, window_extent);
        let old = self.raw;
        if extent.width == 0 || extent.height == 0 || window_extent.width == 0 || window_extent.height == 0 {
            // Minimised: keep nothing; a later call with a real size creates it.
            self.release_images(ctx);
            if old != vk::SwapchainKHR::null() {
                // SAFETY: the caller waited for the device to go idle.
                unsafe { self.loader.destroy_swapchain(old, None) };
                self.raw = vk::SwapchainKHR::null();
            }
            self.extent = vk::Extent2D::default();
            return Ok(());
        }
        let present_mode = choose_present_mode(&modes, self.vsync);
        let raw = self.create(ctx, &caps, extent, present_mode, old)?;
        self.raw = raw;
        self.extent = extent;
        self.present_mode = present_mode;
        self.needs_recreate = false;
        self.make_views(ctx, raw)
    }

    /// Creates the swapchain replacing `old` (destroyed after, even when
    /// creation fails: a retired swapchain may not be passed as
    /// oldSwapchain again) and releases the old images' views.
    fn create(
        &mut self,
        ctx: &GpuContext,
        caps: &vk::SurfaceCapabilitiesKHR,
        extent: vk::Extent2D,
        present_mode: vk::PresentModeKHR,
        old: vk::SwapchainKHR,
    ) -> Result<vk::SwapchainKHR, GpuError> {
        let mut count = caps.min_image_count + 1;
        if caps.max_image_count > 0 {
            count = count.min(caps.max_image_count);
        }
        self.transfer_src = caps.supported_usage_flags.contains(vk::ImageUsageFlags::TRANSFER_SRC);
        let mut usage = vk::ImageUsageFlags::COLOR_ATTACHMENT;
        if self.transfer_src {
            usage |= vk::ImageUsageFlags::TRANSFER_SRC;
        }
        let info = vk::SwapchainCreateInfoKHR::default()
            .surface(self.surface)
            .min_image_count(count)
            .image_format(self.format.format)
            .image_color_space(self.format.color_space)
            .image_extent(extent)
            .image_array_layers(1)
            .image_usage(usage)
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
            .pre_transform(choose_transform(caps))
            .composite_alpha(choose_composite_alpha(caps))
            .present_mode(present_mode)
            .clipped(true)
            .old_swapchain(old);
        // SAFETY: valid create info; the old swapchain (if any) is retired by
        // this call and destroyed below, after the device went idle.
        let created = unsafe { self.loader.create_swapchain(&info, None) }.call("vkCreateSwapchainKHR");
        self.release_images(ctx);
        let raw = match created {
            Ok(raw) => raw,
            Err(e) => {
                // The old swapchain is retired even when creation fails, and a
                // retired one may not be passed as oldSwapchain again: drop it
                // so that a later attempt starts from null.
                if old != vk::SwapchainKHR::null() {
                    // SAFETY: the device is idle and no image of it is acquired.
                    unsafe { self.loader.destroy_swapchain(old, None) };
                }
                self.raw = vk::SwapchainKHR::null();
                self.images.clear();
                return Err(e);
            }
        };
        if old != vk::SwapchainKHR::null() {
            // SAFETY: the caller waited for the device to go idle; no image of
            // the old swapchain is acquired.
            unsafe { self.loader.destroy_swapchain(old, None) };
        }
        Ok(raw)
    }

    /// The images of `raw` (just created), a view and a render-finished
    /// semaphore for each.
    fn make_views(&mut self, ctx: &GpuContext, raw: vk::SwapchainKHR) -> Result<(), GpuError> {
        // SAFETY: the swapchain was just created.
        self.images = unsafe { self.loader.get_swapchain_images(raw) }.call("vkGetSwapchainImagesKHR")?;
        for (i, &image) in self.images.iter().enumerate() {
            let view_info = vk::ImageViewCreateInfo::default()
                .image(image)
                .view_type(vk::ImageViewType::TYPE_2D)
                .format(self.format.format)
                .subresource_range(subresource_range(vk::ImageAspectFlags::COLOR));
            // SAFETY: valid create infos; views and semaphores are destroyed in release_images.
            unsafe {
                self.views.push(ctx.device.create_image_view(&view_info, None).call("vkCreateImageView")?);
                let sem = ctx
                    .device
                    .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
                    .call("vkCreateSemaphore")?;
                self.render_finished.push(sem);
                ctx.set_name(sem, &format!("render finished semaphore image {i}"));
            }
            ctx.set_name(image, &format!("swapchain image {i}"));
        }
        Ok(())
    }

    fn release_images(&mut self, ctx: &GpuContext) {
        // SAFETY: callers waited for the device to go idle: no command or
        // present uses the views or semaphores.
        unsafe {
            for v in self.views.drain(..) {
                ctx.device.destroy_image_view(v, None);
            }
            for s in self.render_finished.drain(..) {
                ctx.device.destroy_semaphore(s, None);
            }
        }
        self.images.clear();
    }

    /// Acquires the next image, signalling frame slot `slot`'s acquire
    /// semaphore. Call after that slot's fence has signalled.
    pub fn acquire(&mut self, slot: usize) -> Result<Acquired, GpuError> {
        if !self.is_ready() {
            return Ok(Acquired::OutOfDate);
        }
        // SAFETY: the semaphore is unsignalled and unused: the submit that
        // waited on it belongs to this slot's previous frame, whose fence
        // the caller waited for.
        // Bounded like every wait (a timeout becomes `GpuError::Timeout`):
        // nothing was submitted yet, so nothing is pending when it runs out.
        let timeout = u64::try_from(GPU_WAIT_TIMEOUT.as_nanos()).unwrap_or(u64::MAX);
        let result = unsafe {
            self.loader.acquire_next_image(self.raw, timeout, self.acquire[slot], vk::Fence::null())
        };
        match result {
            Ok((index, suboptimal)) => {
                if suboptimal {
                    self.needs_recreate = true;
                }
                Ok(Acquired::Image { index, suboptimal })
            }
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => {
                self.needs_recreate = true;
                Ok(Acquired::OutOfDate)
            }
            Err(e) => Err(GpuError::vk("vkAcquireNextImageKHR", e)),
        }
    }

    /// Presents image `index` once its render-finished semaphore is signalled.
    /// OUT_OF_DATE and SUBOPTIMAL mark the swapchain for recreation.
    pub fn present(&mut self, ctx: &GpuContext, index: u32) -> Result<(), GpuError> {
        let waits = [self.render_finished[index as usize]];
        let chains = [self.raw];
        let indices = [index];
        let info =
            vk::PresentInfoKHR::default().wait_semaphores(&waits).swapchains(&chains).image_indices(&indices);
        // SAFETY: the image was acquired and the submit that signals the
        // semaphore has been queued; it leaves the image in PRESENT_SRC_KHR.
        match unsafe { self.loader.queue_present(ctx.queue, &info) } {
            Ok(false) => Ok(()),
            Ok(true) | Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => {
                self.needs_recreate = true;
                Ok(())
            }
            Err(e) => Err(GpuError::vk("vkQueuePresentKHR", e)),
        }
    }

    /// Destroys the swapchain, views and semaphores after the device went idle.
    pub fn destroy(mut self, ctx: &GpuContext) {
        let _ = ctx.wait_idle();
        self.release_images(ctx);
        // SAFETY: the device is idle; nothing uses these objects.
        unsafe {
            if self.raw != vk::SwapchainKHR::null() {
                self.loader.destroy_swapchain(self.raw, None);
            }
            for s in self.acquire {
                ctx.device.destroy_semaphore(s, None);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefers_srgb_bgra_then_rgba() {
        let f = |format, color_space| vk::SurfaceFormatKHR { format, color_space };
        let srgb = vk::ColorSpaceKHR::SRGB_NONLINEAR;
        let list = [f(vk::Format::B8G8R8A8_UNORM, srgb), f(vk::Format::R8G8B8A8_SRGB, srgb)];
        assert_eq!(choose_format(&list).map(|s| s.format), Some(vk::Format::R8G8B8A8_SRGB));
        let list = [f(vk::Format::R8G8B8A8_SRGB, srgb), f(vk::Format::B8G8R8A8_SRGB, srgb)];
        assert_eq!(choose_format(&list).map(|s| s.format), Some(vk::Format::B8G8R8A8_SRGB));
        let list = [f(vk::Format::A2B10G10R10_UNORM_PACK32, srgb)];
        assert_eq!(choose_format(&list).map(|s| s.format), Some(vk::Format::A2B10G10R10_UNORM_PACK32));
        assert_eq!(choose_format(&[]), None);
    }

    #[test]
    fn present_modes() {
        use vk::PresentModeKHR as M;
        assert_eq!(choose_present_mode(&[M::IMMEDIATE, M::MAILBOX, M::FIFO], true), M::FIFO);
        assert_eq!(choose_present_mode(&[M::IMMEDIATE, M::MAILBOX, M::FIFO], false), M::MAILBOX);
        assert_eq!(choose_present_mode(&[M::IMMEDIATE, M::FIFO], false), M::IMMEDIATE);
        assert_eq!(choose_present_mode(&[M::FIFO], false), M::FIFO);
    }
}
