//! 2D images with one view, for render targets and textures. It never changes
//! an image's layout: the passes do, through `barrier`.

use super::context::GpuContext;
use super::error::{GpuError, VkResultExt};
use ash::vk;
use gpu_allocator::MemoryLocation;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};

/// A device-local 2D image (one mip, one layer, optimal tiling) and its view.
#[derive(Debug)]
pub struct Image {
    /// The image.
    pub raw: vk::Image,
    /// A view of the whole image.
    pub view: vk::ImageView,
    /// Its format.
    pub format: vk::Format,
    /// Its size.
    pub extent: vk::Extent2D,
    /// Samples per pixel: TYPE_1 except for multisampled attachments.
    pub samples: vk::SampleCountFlags,
    allocation: Option<Allocation>,
}

impl Image {
    /// Creates a single-sampled image; `aspect` is COLOR or DEPTH.
    pub fn new(
        ctx: &GpuContext,
        name: &str,
        extent: vk::Extent2D,
        format: vk::Format,
        usage: vk::ImageUsageFlags,
        aspect: vk::ImageAspectFlags,
    ) -> Result<Self, GpuError> {
        Self::new_multisampled(ctx, name, extent, format, vk::SampleCountFlags::TYPE_1, usage, aspect)
    }

    /// Creates an image with `samples` samples per pixel (a multisampled
    /// colour or depth attachment unless TYPE_1); `aspect` is COLOR or DEPTH.
    /// The caller checks that the device supports `samples` for `format`
    /// and `usage` (see `framebuffer_*_sample_counts`).
    pub fn new_multisampled(
        ctx: &GpuContext,
        name: &str,
        extent: vk::Extent2D,
        format: vk::Format,
        samples: vk::SampleCountFlags,
        usage: vk::ImageUsageFlags,
        aspect: vk::ImageAspectFlags,
    ) -> Result<Self, GpuError> {
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(vk::Extent3D { width: extent.width.max(1), height: extent.height.max(1), depth: 1 })
            .mip_levels(1)
            .array_layers(1)
            .samples(samples)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        // SAFETY: valid create info on a live device.
        let raw = unsafe { ctx.device.create_image(&info, None) }.call("vkCreateImage")?;
        // SAFETY: raw was just created on this device.
        let requirements = unsafe { ctx.device.get_image_memory_requirements(raw) };
        let allocation = ctx.allocator().allocate(&AllocationCreateDesc {
            name,
            requirements,
            location: MemoryLocation::GpuOnly,
            linear: false,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        });
        let allocation = match allocation {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: the image is unused.
                unsafe { ctx.device.destroy_image(raw, None) };
                return Err(GpuError::allocation(format!("image {name}"), requirements.size, e));
            }
        };
        let mut image =
            Image { raw, view: vk::ImageView::null(), format, extent, samples, allocation: Some(allocation) };
        let allocation = image.allocation.as_ref().expect("allocation");
        // SAFETY: the allocation satisfies the image's requirements and stays alive with the image.
        if let Err(e) = unsafe { ctx.device.bind_image_memory(raw, allocation.memory(), allocation.offset()) }
        {
            image.destroy(ctx);
            return Err(GpuError::vk("vkBindImageMemory", e));
        }
        let view_info = vk::ImageViewCreateInfo::default()
            .image(raw)
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(format)
            .subresource_range(subresource_range(aspect));
        // SAFETY: the image is bound to memory.
        match unsafe { ctx.device.create_image_view(&view_info, None) } {
            Ok(view) => image.view = view,
            Err(e) => {
                image.destroy(ctx);
                return Err(GpuError::vk("vkCreateImageView", e));
            }
        }
        ctx.set_name(raw, name);
        Ok(image)
    }

    /// Frees the image now; the caller guarantees no pending GPU use.
    pub fn destroy(mut self, ctx: &GpuContext) {
        if ctx.is_stalled() {
            // The GPU may still use it (a wait timed out): leaked, not freed.
            return;
        }
        // SAFETY: the caller guarantees the GPU no longer uses the image.
        unsafe {
            if self.view != vk::ImageView::null() {
                ctx.device.destroy_image_view(self.view, None);
            }
            ctx.device.destroy_image(self.raw, None);
        }
        if let Some(allocation) = self.allocation.take() {
            let _ = ctx.allocator().free(allocation);
        }
    }
}

/// The whole single-mip, single-layer range of an image with this aspect.
pub fn subresource_range(aspect: vk::ImageAspectFlags) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: aspect,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: 1,
    }
}
