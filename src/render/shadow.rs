//! Cascaded shadow maps for the key light: the view frustum split into
//! `CASCADES` slices, each covered by an orthographic light projection
//! (`cascades`), rendered depth-only into one layer of a per-slot depth
//! array (`ShadowMaps`) that the main pass samples with 3x3 PCF
//! (shaders/mesh.frag). With them a frame has five draw passes: four shadow
//! cascades and the main pass; vertex skinning skins in each of them. It
//! never draws the main pass.

use super::camera::Camera;
use crate::gpu::barrier::{self, Access, ImageBarrier};
use crate::gpu::error::VkResultExt;
use crate::gpu::{FRAMES_IN_FLIGHT, GpuContext, GpuError, immediate};
use ash::vk;
use gpu_allocator::MemoryLocation;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use nalgebra::{Matrix4, Point3, Vector3};

/// Shadow cascades (depth-array layers).
pub const CASCADES: usize = 4;
/// Width and height of each cascade's depth map.
pub const SHADOW_SIZE: u32 = 1024;
/// Depth format of the shadow maps.
pub const SHADOW_FORMAT: vk::Format = vk::Format::D32_SFLOAT;

/// The light projections of one frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cascades {
    /// World -> light clip space (Vulkan: depth 0..1) of each cascade.
    pub view_proj: [Matrix4<f32>; CASCADES],
    /// View depth (distance along the camera's forward axis) where each cascade ends.
    pub far: [f32; CASCADES],
}

/// Splits `camera`'s frustum into `CASCADES` slices (the practical split:
/// 3/4 logarithmic, 1/4 uniform) and fits each in an orthographic projection
/// looking along `-to_light` (unit, towards the light): a square around the
/// slice's bounding sphere, whose depth range reaches back towards the light
/// by three radii so that casters outside the slice still shadow it.
pub fn cascades(camera: &Camera, to_light: Vector3<f32>) -> Cascades {
    let (near, far) = (camera.near.max(1e-4), camera.far.max(camera.near + 1e-3));
    let split = |i: usize| -> f32 {
        let f = i as f32 / CASCADES as f32;
        let log = near * (far / near).powf(f);
        let uniform = near + (far - near) * f;
        0.75 * log + 0.25 * uniform
    };
    let forward = (camera.target - camera.eye).normalize();
    let right = forward.cross(&camera.up).normalize();
    let up = right.cross(&forward);
    let tan_y = (camera.fov_y * 0.5).tan();
    let tan_x = tan_y * camera.aspect;
    // A lens shift s moves what is seen to clip x in -1 - s..1 - s of the unshifted view.
    let x_span = |side: f32| side - camera.lens_shift;
    let light_up = if to_light.y.abs() > 0.99 { Vector3::z() } else { Vector3::y() };
    let mut view_proj = [Matrix4::identity(); CASCADES];
    let mut ends = [0.0; CASCADES];
    for (k, (vp, end)) in view_proj.iter_mut().zip(&mut ends).enumerate() {
        let (d0, d1) = (split(k), split(k + 1));
        // The slice's eight corners.
        let corners = [d0, d1].into_iter().flat_map(|d| {
            let centre = camera.eye + forward * d;
            [(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)]
                .map(|(sx, sy)| centre + right * (x_span(sx) * tan_x * d) + up * (sy * tan_y * d))
        });
        let corners: Vec<Point3<f32>> = corners.collect();
        let centre = Point3::from(corners.iter().map(|p| p.coords).sum::<Vector3<f32>>() / 8.0);
        let radius = corners.iter().map(|p| (p - centre).norm()).fold(0.0, f32::max).max(1e-3);
        let eye = centre + to_light * (3.0 * radius);
        let view = Matrix4::look_at_rh(&eye, &centre, &light_up);
        // Orthographic, right-handed view space (looking down -z) to Vulkan
        // clip space: x, y in -1..1 over the square, depth 0 at the eye to 1
        // at 4 radii.
        let depth = 4.0 * radius;
        #[rustfmt::skip]
        let ortho = Matrix4::new(
            1.0 / radius, 0.0, 0.0, 0.0,
            0.0, -1.0 / radius, 0.0, 0.0,
            0.0, 0.0, -1.0 / depth, 0.0,
            0.0, 0.0, 0.0, 1.0,
        );
        *vp = ortho * view;
        *end = d1;
    }
    Cascades { view_proj, far: ends }
}

/// A depth-array image (one layer per cascade) with a view per layer (to
/// render into) and an array view (to sample).
struct DepthArray {
    image: vk::Image,
    allocation: Option<Allocation>,
    layers: [vk::ImageView; CASCADES],
    array: vk::ImageView,
}

impl DepthArray {
    fn new(ctx: &GpuContext, name: &str, size: u32) -> Result<Self, GpuError> {
        let d = &ctx.device;
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(SHADOW_FORMAT)
            .extent(vk::Extent3D { width: size, height: size, depth: 1 })
            .mip_levels(1)
            .array_layers(CASCADES as u32)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            // TRANSFER_DST: the stand-in is cleared by a transfer.
            .usage(
                vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT
                    | vk::ImageUsageFlags::SAMPLED
                    | vk::ImageUsageFlags::TRANSFER_DST,
            )
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        // SAFETY: valid create info on a live device.
        let image = unsafe { d.create_image(&info, None) }.call("vkCreateImage")?;
        let mut made = DepthArray {
            image,
            allocation: None,
            layers: [vk::ImageView::null(); CASCADES],
            array: vk::ImageView::null(),
        };
        match made.bind_and_view(ctx, name) {
            Ok(()) => Ok(made),
            Err(e) => {
                made.destroy(ctx);
                Err(e)
            }
        }
    }

    fn bind_and_view(&mut self, ctx: &GpuContext, name: &str) -> Result<(), GpuError> {
        let d = &ctx.device;
        // SAFETY: a live image.
        let requirements = unsafe { d.get_image_memory_requirements(self.image) };
        let allocation = ctx
            .allocator()
            .allocate(&AllocationCreateDesc {
                name,
                requirements,
                location: MemoryLocation::GpuOnly,
                linear: false,
                allocation_scheme: AllocationScheme::GpuAllocatorManaged,
            })
            .map_err(|e| GpuError::allocation(name, requirements.size, e))?;
        let allocation = self.allocation.insert(allocation);
        // SAFETY: fresh memory of the image's requirements.
        unsafe { d.bind_image_memory(self.image, allocation.memory(), allocation.offset()) }
            .call("vkBindImageMemory")?;
        let view = |base: u32, count: u32, ty: vk::ImageViewType| {
            let info = vk::ImageViewCreateInfo::default()
                .image(self.image)
                .view_type(ty)
                .format(SHADOW_FORMAT)
                .subresource_range(layers(base, count));
            // SAFETY: a live image with bound memory; the range lies inside it.
            unsafe { d.create_image_view(&info, None) }.call("vkCreateImageView")
        };
        for k in 0..CASCADES {
            self.layers[k] = view(k as u32, 1, vk::ImageViewType::TYPE_2D)?;
        }
        self.array = view(0, CASCADES as u32, vk::ImageViewType::TYPE_2D_ARRAY)?;
        ctx.set_name(self.image, name);
        Ok(())
    }

    fn destroy(mut self, ctx: &GpuContext) {
        // SAFETY: the caller guarantees no pending GPU use; null views are ignored.
        unsafe {
            for v in self.layers.iter().chain([&self.array]) {
                ctx.device.destroy_image_view(*v, None);
            }
            ctx.device.destroy_image(self.image, None);
        }
        if let Some(a) = self.allocation.take() {
            let _ = ctx.allocator().free(a);
        }
    }
}

/// Every layer of a depth array.
fn layers(base: u32, count: u32) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::DEPTH,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: base,
        layer_count: count,
    }
}

/// The per-slot shadow maps, the comparison sampler, and a 1x1 stand-in
/// (depth 1, never in shadow) that frames without shadows bind.
pub struct ShadowMaps {
    slots: Vec<DepthArray>,
    none: DepthArray,
    /// Depth comparison (LESS_OR_EQUAL), linear (2x2 PCF per tap), clamped.
    pub sampler: vk::Sampler,
}

impl ShadowMaps {
    /// Creates the maps (`SHADOW_SIZE` square, `CASCADES` layers per slot).
    pub fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        let none = DepthArray::new(ctx, "no shadow map", 1)?;
        let mut maps = ShadowMaps { slots: Vec::new(), none, sampler: vk::Sampler::null() };
        match maps.build(ctx) {
            Ok(()) => Ok(maps),
            Err(e) => {
                maps.destroy(ctx);
                Err(e)
            }
        }
    }

    fn build(&mut self, ctx: &GpuContext) -> Result<(), GpuError> {
        for i in 0..FRAMES_IN_FLIGHT {
            self.slots.push(DepthArray::new(ctx, &format!("shadow maps slot {i}"), SHADOW_SIZE)?);
        }
        let info = vk::SamplerCreateInfo::default()
            .mag_filter(vk::Filter::LINEAR)
            .min_filter(vk::Filter::LINEAR)
            .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
            .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .compare_enable(true)
            .compare_op(vk::CompareOp::LESS_OR_EQUAL)
            .max_lod(0.0);
        // SAFETY: valid create info on a live device.
        self.sampler = unsafe { ctx.device.create_sampler(&info, None) }.call("vkCreateSampler")?;
        // The stand-in: cleared to depth 1 once and left in the layout the
        // main pass samples in.
        let image = self.none.image;
        immediate::submit_and_wait(ctx, |cmd| {
            let all = layers(0, CASCADES as u32);
            let clear = vk::ClearDepthStencilValue { depth: 1.0, stencil: 0 };
            // cmd is recording; the image is live (new: nothing to wait for).
            barrier::record_image(
                ctx,
                cmd,
                ImageBarrier::new(image, all, &[Access::Nothing], &[Access::ClearWrite]),
            );
            // SAFETY: as above; the barrier put the image in TRANSFER_DST_OPTIMAL.
            unsafe {
                ctx.device.cmd_clear_depth_stencil_image(
                    cmd,
                    image,
                    vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                    &clear,
                    &[all],
                );
            }
            let sampled = &[Access::FragmentShaderSampledRead];
            barrier::record_image(ctx, cmd, ImageBarrier::new(image, all, &[Access::ClearWrite], sampled));
        })
    }

    /// The view the main pass samples in slot `slot`: the slot's maps when
    /// `shadows`, else the stand-in. Either is in SHADER_READ_ONLY_OPTIMAL
    /// when the main pass runs (see `begin` and `end`).
    pub fn sampled_view(&self, slot: usize, shadows: bool) -> vk::ImageView {
        if shadows { self.slots[slot].array } else { self.none.array }
    }

    /// Records the transition of slot `slot`'s maps for rendering: from
    /// UNDEFINED (their contents are cleared) to DEPTH_ATTACHMENT_OPTIMAL,
    /// after the previous frame's main pass sampled them (write after read:
    /// the first scope reaches that earlier submission on this queue).
    pub fn begin(&self, ctx: &GpuContext, cmd: vk::CommandBuffer, slot: usize) {
        let (image, all) = (self.slots[slot].image, layers(0, CASCADES as u32));
        let (sampled, attachment) =
            (&[Access::FragmentShaderSampledRead], &[Access::DepthAttachmentReadWrite]);
        // cmd is recording outside rendering; the image is live.
        barrier::record_image(
            ctx,
            cmd,
            ImageBarrier::new(image, all, sampled, attachment).discarding_contents(),
        );
    }

    /// Begins depth-only rendering into cascade `k` of slot `slot` (cleared
    /// to 1, stored), with the viewport and scissor over the whole map.
    pub fn begin_cascade(&self, ctx: &GpuContext, cmd: vk::CommandBuffer, slot: usize, k: usize) {
        let depth = vk::RenderingAttachmentInfo::default()
            .image_view(self.slots[slot].layers[k])
            .image_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE)
            .clear_value(vk::ClearValue {
                depth_stencil: vk::ClearDepthStencilValue { depth: 1.0, stencil: 0 },
            });
        let extent = vk::Extent2D { width: SHADOW_SIZE, height: SHADOW_SIZE };
        let area = vk::Rect2D { offset: vk::Offset2D::default(), extent };
        let info = vk::RenderingInfo::default().render_area(area).layer_count(1).depth_attachment(&depth);
        let viewport = vk::Viewport {
            x: 0.0,
            y: 0.0,
            width: SHADOW_SIZE as f32,
            height: SHADOW_SIZE as f32,
            min_depth: 0.0,
            max_depth: 1.0,
        };
        // SAFETY: cmd is recording outside rendering; `begin` put the layer in
        // DEPTH_ATTACHMENT_OPTIMAL.
        unsafe {
            ctx.device.cmd_begin_rendering(cmd, &info);
            ctx.device.cmd_set_viewport(cmd, 0, &[viewport]);
            ctx.device.cmd_set_scissor(cmd, 0, &[area]);
        }
    }

    /// Records the transition after the cascades: their depth writes become
    /// visible to the main pass's fragment shader, in SHADER_READ_ONLY_OPTIMAL.
    pub fn end(&self, ctx: &GpuContext, cmd: vk::CommandBuffer, slot: usize) {
        let (image, all) = (self.slots[slot].image, layers(0, CASCADES as u32));
        let (written, sampled) = (&[Access::DepthAttachmentWrite], &[Access::FragmentShaderSampledRead]);
        // cmd is recording outside rendering; the image is live.
        barrier::record_image(ctx, cmd, ImageBarrier::new(image, all, written, sampled));
    }

    /// Frees everything; the caller guarantees no pending GPU use.
    pub fn destroy(self, ctx: &GpuContext) {
        // SAFETY: no pending use (caller contract); a null sampler is ignored.
        unsafe { ctx.device.destroy_sampler(self.sampler, None) };
        self.slots.into_iter().for_each(|s| s.destroy(ctx));
        self.none.destroy(ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Vector4;

    /// Every cascade holds the points of its slice inside its clip volume,
    /// and the cascades end at increasing depths up to the far plane.
    #[test]
    fn cascades_cover_their_slices() {
        let camera = Camera::frame_box([-2.0, 0.0, -2.0], [2.0, 2.0, 2.0], 16.0 / 9.0, 0.8);
        let to_light = Vector3::new(-0.45, 0.75, 0.6).normalize();
        let c = cascades(&camera, to_light);
        assert!(c.far.windows(2).all(|w| w[0] < w[1]));
        assert!((c.far[CASCADES - 1] - camera.far).abs() < 1e-3 * camera.far);
        let forward = (camera.target - camera.eye).normalize();
        // Points along the view axis and off it, at each cascade's middle depth.
        let mut start = camera.near;
        for k in 0..CASCADES {
            let d = 0.5 * (start + c.far[k]);
            let p = camera.eye + forward * d;
            let q = c.view_proj[k] * p.to_homogeneous();
            let q = q.xyz() / q.w;
            assert!(q.x.abs() <= 1.0 && q.y.abs() <= 1.0 && (0.0..=1.0).contains(&q.z), "cascade {k}: {q:?}");
            start = c.far[k];
        }
    }

    #[test]
    fn shifted_views_stay_covered() {
        // The window shifts the image left of the controls: what is seen
        // then reaches past the unshifted frustum's right edge.
        let mut camera = Camera::frame_box([-2.0, 0.0, -2.0], [2.0, 2.0, 2.0], 16.0 / 9.0, 0.8);
        camera.lens_shift = -0.6;
        let c = cascades(&camera, Vector3::new(-0.45, 0.75, 0.6).normalize());
        let inverse = camera.view_proj().try_inverse().expect("invertible");
        let mut start = camera.near;
        for k in 0..CASCADES {
            // The visible corners (clip x, y = +-1) at the slice's middle depth.
            let d = 0.5 * (start + c.far[k]);
            let depth = camera.projection() * Vector4::new(0.0, 0.0, -d, 1.0);
            let z = depth.z / depth.w;
            for (x, y) in [(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)] {
                let p = inverse * Vector4::new(x, y, z, 1.0);
                let q = c.view_proj[k] * (p / p.w);
                let q = q.xyz() / q.w;
                assert!(q.x.abs() <= 1.0 && q.y.abs() <= 1.0, "cascade {k}, corner ({x}, {y}): {q:?}");
            }
            start = c.far[k];
        }
    }
}
