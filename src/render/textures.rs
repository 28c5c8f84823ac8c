//! Material textures: base-colour images decoded from the glTF file and
//! uploaded once (staging buffer + one-shot submit), plus a 1x1 white
//! texture for materials without one, and the sampler they share. Never
//! rewritten once uploaded: frames in flight sample them.

use crate::asset::Model;
use crate::asset::images::{DecodedImage, ImageFile, decode_rgba8};
use crate::gpu::barrier::{self, Access, ImageBarrier};
use crate::gpu::error::VkResultExt;
use crate::gpu::image::subresource_range;
use crate::gpu::{Buffer, GpuContext, GpuError, Image, immediate};
use ash::vk;
use gpu_allocator::MemoryLocation;

/// Sampled sRGB images: one per glTF image a material uses, and white.
pub struct Textures {
    /// `by_image[i]`: index into `images` of glTF image `i`, when it was loaded.
    by_image: Vec<Option<usize>>,
    images: Vec<Image>,
    /// Index of the 1x1 white texture in `images`.
    white: usize,
    /// Linear, repeating sampler.
    pub sampler: vk::Sampler,
}

impl Textures {
    /// Decodes and uploads every base-colour image the model's materials use.
    /// An image that cannot be read or decoded is reported in `warnings` and
    /// drawn white.
    pub fn load(ctx: &GpuContext, model: &Model, warnings: &mut Vec<String>) -> Result<Self, GpuError> {
        let wanted: Vec<usize> = {
            let mut w: Vec<usize> = model.materials.iter().filter_map(|m| m.base_color_image).collect();
            w.sort_unstable();
            w.dedup();
            w
        };
        let mut decoded: Vec<(usize, DecodedImage)> = Vec::new();
        if !wanted.is_empty() {
            match ImageFile::for_model(model) {
                Ok(file) => {
                    for &i in &wanted {
                        match file.image(i).and_then(|s| decode_rgba8(&s)) {
                            Ok(d) if d.width > 0 && d.height > 0 => decoded.push((i, d)),
                            Ok(_) => warnings.push(format!("image {i} is empty; drawn white")),
                            Err(e) => warnings.push(format!("image {i}: {e}; drawn white")),
                        }
                    }
                }
                Err(e) => warnings.push(format!("textures not loaded: {e}")),
            }
        }
        let white = DecodedImage { width: 1, height: 1, rgba: vec![255; 4] };
        let mut all: Vec<&DecodedImage> = decoded.iter().map(|(_, d)| d).collect();
        all.push(&white);
        let images = upload(ctx, &all)?;
        let mut by_image =
            vec![None; model.materials.iter().filter_map(|m| m.base_color_image).max().map_or(0, |m| m + 1)];
        for (slot, (i, _)) in decoded.iter().enumerate() {
            by_image[*i] = Some(slot);
        }
        let info = vk::SamplerCreateInfo::default()
            .mag_filter(vk::Filter::LINEAR)
            .min_filter(vk::Filter::LINEAR)
            .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
            .address_mode_u(vk::SamplerAddressMode::REPEAT)
            .address_mode_v(vk::SamplerAddressMode::REPEAT)
            .address_mode_w(vk::SamplerAddressMode::REPEAT)
            .max_lod(0.0);
        // SAFETY: valid create info on a live device.
        let sampler = match unsafe { ctx.device.create_sampler(&info, None) }.call("vkCreateSampler") {
            Ok(s) => s,
            Err(e) => {
                images.into_iter().for_each(|i| i.destroy(ctx));
                return Err(e);
            }
        };
        let white = images.len() - 1;
        Ok(Textures { by_image, images, white, sampler })
    }

    /// The view to sample for glTF image `image` (white when absent or not loaded).
    pub fn view(&self, image: Option<usize>) -> vk::ImageView {
        let slot = image.and_then(|i| self.by_image.get(i).copied().flatten()).unwrap_or(self.white);
        self.images[slot].view
    }

    /// Number of uploaded images, white included.
    pub fn len(&self) -> usize {
        self.images.len()
    }

    /// Always false: the white texture is always there.
    pub fn is_empty(&self) -> bool {
        self.images.is_empty()
    }

    /// Frees the textures; the caller guarantees no pending GPU use.
    pub fn destroy(self, ctx: &GpuContext) {
        // SAFETY: the caller guarantees no pending GPU use.
        unsafe { ctx.device.destroy_sampler(self.sampler, None) };
        self.images.into_iter().for_each(|i| i.destroy(ctx));
    }
}

/// Uploads RGBA8 sRGB images through one staging buffer and one submission;
/// they end in SHADER_READ_ONLY_OPTIMAL.
fn upload(ctx: &GpuContext, sources: &[&DecodedImage]) -> Result<Vec<Image>, GpuError> {
    let total: u64 = sources.iter().map(|d| d.rgba.len() as u64).sum();
    let mut staging = Buffer::new(
        ctx,
        "texture staging",
        total,
        vk::BufferUsageFlags::TRANSFER_SRC,
        MemoryLocation::CpuToGpu,
    )?;
    let mut images: Vec<Image> = Vec::with_capacity(sources.len());
    let mut offsets = Vec::with_capacity(sources.len());
    let result = stage(ctx, sources, &mut staging, &mut images, &mut offsets).and_then(|_| {
        immediate::submit_and_wait(ctx, |cmd| {
            record_upload(ctx, cmd, staging.raw, &images, sources, &offsets)
        })
    });
    // submit_and_wait returned: the GPU is done with the staging buffer.
    staging.destroy(ctx);
    match result {
        Ok(()) => Ok(images),
        Err(e) => {
            images.into_iter().for_each(|i| i.destroy(ctx));
            Err(e)
        }
    }
}

/// Writes each source's texels into `staging` end to end (their offsets
/// into `offsets`) and creates its image into `images`.
fn stage(
    ctx: &GpuContext,
    sources: &[&DecodedImage],
    staging: &mut Buffer,
    images: &mut Vec<Image>,
    offsets: &mut Vec<u64>,
) -> Result<(), GpuError> {
    let mut offset = 0u64;
    for (i, d) in sources.iter().enumerate() {
        staging.write(offset, &d.rgba)?;
        offsets.push(offset);
        offset += d.rgba.len() as u64;
        images.push(Image::new(
            ctx,
            &format!("texture {i}"),
            vk::Extent2D { width: d.width, height: d.height },
            vk::Format::R8G8B8A8_SRGB,
            vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST,
            vk::ImageAspectFlags::COLOR,
        )?);
    }
    Ok(())
}

/// Records the copies of `staging` (at `offsets`) into the new `images`,
/// with the transitions before and after them.
fn record_upload(
    ctx: &GpuContext,
    cmd: vk::CommandBuffer,
    staging: vk::Buffer,
    images: &[Image],
    sources: &[&DecodedImage],
    offsets: &[u64],
) {
    let range = subresource_range(vk::ImageAspectFlags::COLOR);
    // New images: nothing to wait for; the copy's writes need TRANSFER_DST layout.
    let to_dst: Vec<_> = images
        .iter()
        .map(|img| ImageBarrier::new(img.raw, range, &[Access::Nothing], &[Access::CopyWrite]).to_vk())
        .collect();
    // The copies' writes are made visible to fragment-shader sampling in
    // every later submission (queue order carries the dependency on).
    let to_read: Vec<_> = images
        .iter()
        .map(|img| {
            let sampled = &[Access::FragmentShaderSampledRead];
            ImageBarrier::new(img.raw, range, &[Access::CopyWrite], sampled).to_vk()
        })
        .collect();
    // cmd is recording; the images and staging buffer live until
    // submit_and_wait has waited for the fence. The host writes to the
    // staging buffer happened before the submit, which makes them visible.
    barrier::record(ctx, cmd, &[], &[], &to_dst);
    for ((img, d), &off) in images.iter().zip(sources).zip(offsets) {
        let region = vk::BufferImageCopy::default()
            .buffer_offset(off)
            .image_subresource(vk::ImageSubresourceLayers {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                mip_level: 0,
                base_array_layer: 0,
                layer_count: 1,
            })
            .image_extent(vk::Extent3D { width: d.width, height: d.height, depth: 1 });
        // SAFETY: as above; the images are in TRANSFER_DST_OPTIMAL.
        unsafe {
            ctx.device.cmd_copy_buffer_to_image(
                cmd,
                staging,
                img.raw,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &[region],
            )
        };
    }
    barrier::record(ctx, cmd, &[], &[], &to_read);
}
