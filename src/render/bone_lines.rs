//! The skeleton as lines over the mesh: one line from each joint's parent to
//! the joint, an optional small cross at each joint, the selected joint's
//! bones in another colour. Depth test off, so bones show through the mesh.
//! It never changes the skeleton or the pose: it draws the joints it is
//! given.
//!
//! Vertices are written every frame into the frame slot's own host-visible
//! buffer (the slot's fence has signalled when it is recorded again, so the
//! GPU no longer reads it); a buffer grows only when a bigger skeleton comes.

use crate::anim::NO_PARENT;
use crate::gpu::error::VkResultExt;
use crate::gpu::pipeline::{self, GraphicsPipelineDesc};
use crate::gpu::{Buffer, FRAMES_IN_FLIGHT, FrameSlot, GpuContext, GpuError, shader};
use ash::vk;
use bytemuck::{Pod, Zeroable};
use gpu_allocator::MemoryLocation;
use nalgebra::{Matrix4, Vector3};

/// One line end (`in_position`, `in_color` of shaders/lines.vert).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct LineVertex {
    /// Position in the character's space.
    pub position: [f32; 3],
    /// Linear RGBA8 colour.
    pub color: [u8; 4],
}

/// Push constants of shaders/lines.vert.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct LinePush {
    /// `view_proj * world`, column-major.
    pub view_proj_world: [f32; 16],
}

const _: () = {
    assert!(std::mem::size_of::<LineVertex>() == 16);
    assert!(std::mem::size_of::<LinePush>() == 64);
};

/// Bone colour (linear RGBA8): warm yellow, readable over most meshes.
pub const BONE_COLOR: [u8; 4] = [255, 200, 40, 255];
/// Joint cross colour.
pub const JOINT_COLOR: [u8; 4] = [40, 220, 255, 255];
/// Selected joint and its bones: magenta (the heat map uses blue to red).
pub const SELECTED_COLOR: [u8; 4] = [255, 40, 230, 255];

/// Vertices per joint at most: one bone (2) plus a three-axis cross (6).
const VERTICES_PER_JOINT: usize = 8;

/// The bone-lines pipeline and its per-slot vertex buffers.
pub struct BoneLines {
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    /// One vertex buffer per frame slot, created on first use, grown as needed.
    buffers: Vec<Option<Buffer>>,
    /// Joints drawn (see `set_mask`); empty: all.
    mask: Vec<bool>,
    /// Draw a small cross at each joint.
    pub show_joints: bool,
    /// Samples per pixel of the attachments the pipeline draws into.
    samples: vk::SampleCountFlags,
}

impl BoneLines {
    /// Builds the pipeline for attachments of `color_format` and
    /// `depth_format` with `samples` samples per pixel.
    pub fn new(
        ctx: &GpuContext,
        color_format: vk::Format,
        depth_format: vk::Format,
        samples: vk::SampleCountFlags,
    ) -> Result<Self, GpuError> {
        let push = [vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::VERTEX,
            offset: 0,
            size: std::mem::size_of::<LinePush>() as u32,
        }];
        let info = vk::PipelineLayoutCreateInfo::default().push_constant_ranges(&push);
        // SAFETY: valid create info on a live device.
        let layout =
            unsafe { ctx.device.create_pipeline_layout(&info, None) }.call("vkCreatePipelineLayout")?;
        let mut lines = BoneLines {
            layout,
            pipeline: vk::Pipeline::null(),
            buffers: (0..FRAMES_IN_FLIGHT).map(|_| None).collect(),
            mask: Vec::new(),
            show_joints: true,
            samples,
        };
        match lines.build(ctx, color_format, depth_format, samples) {
            Ok(p) => {
                lines.pipeline = p;
                Ok(lines)
            }
            Err(e) => {
                lines.destroy(ctx);
                Err(e)
            }
        }
    }

    fn build(
        &self,
        ctx: &GpuContext,
        color_format: vk::Format,
        depth_format: vk::Format,
        samples: vk::SampleCountFlags,
    ) -> Result<vk::Pipeline, GpuError> {
        let vert = shader::create_module(ctx, "lines.vert", crate::spirv!("lines.vert"))?;
        let frag = match shader::create_module(ctx, "lines.frag", crate::spirv!("lines.frag")) {
            Ok(f) => f,
            Err(e) => {
                // SAFETY: the module is unused.
                unsafe { ctx.device.destroy_shader_module(vert, None) };
                return Err(e);
            }
        };
        let stages = [
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::VERTEX)
                .module(vert)
                .name(c"main"),
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::FRAGMENT)
                .module(frag)
                .name(c"main"),
        ];
        let bindings = [vk::VertexInputBindingDescription {
            binding: 0,
            stride: std::mem::size_of::<LineVertex>() as u32,
            input_rate: vk::VertexInputRate::VERTEX,
        }];
        let attributes = [
            vk::VertexInputAttributeDescription {
                location: 0,
                binding: 0,
                format: vk::Format::R32G32B32_SFLOAT,
                offset: 0,
            },
            vk::VertexInputAttributeDescription {
                location: 1,
                binding: 0,
                format: vk::Format::R8G8B8A8_UNORM,
                offset: 12,
            },
        ];
        // No depth test: the skeleton sits inside the mesh and must show through.
        let result = pipeline::create_graphics_pipeline(
            ctx,
            &GraphicsPipelineDesc {
                stages: &stages,
                vertex_bindings: &bindings,
                vertex_attributes: &attributes,
                topology: vk::PrimitiveTopology::LINE_LIST,
                polygon_mode: vk::PolygonMode::FILL,
                depth_test: None,
                depth_bias: None,
                depth_write: false,
                samples,
                color_format,
                depth_format,
                layout: self.layout,
                name: "bone lines pipeline",
            },
        );
        // SAFETY: pipeline creation has finished; the modules are not needed afterwards.
        unsafe {
            ctx.device.destroy_shader_module(vert, None);
            ctx.device.destroy_shader_module(frag, None);
        }
        result
    }

    /// Samples per pixel of the attachments the pipeline draws into.
    pub fn samples(&self) -> vk::SampleCountFlags {
        self.samples
    }

    /// Restricts drawing to the joints with `mask[j]` set (e.g. the joints of
    /// any skin, see `skin_joint_mask`): a bone is drawn when both ends are
    /// in the mask. An empty mask draws every joint. Copies the mask; call it
    /// when the model changes, not per frame.
    pub fn set_mask(&mut self, mask: &[bool]) {
        self.mask.clear();
        self.mask.extend_from_slice(mask);
    }

    /// Records the skeleton lines inside an active dynamic rendering pass on
    /// `slot`'s command buffer (after the mesh, so they draw over it).
    /// `joints` are scene-space joint matrices (`PoseOutput::world`), placed
    /// by `world` and seen through `view_proj`; `parents` as the skeleton's;
    /// `selected` is highlighted. Sets the viewport and scissor to `extent`.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        ctx: &GpuContext,
        slot: &mut FrameSlot,
        view_proj: &Matrix4<f32>,
        world: &Matrix4<f32>,
        joints: &[Matrix4<f32>],
        parents: &[u32],
        selected: Option<usize>,
        extent: vk::Extent2D,
    ) -> Result<(), GpuError> {
        let count = joints.len().min(parents.len());
        if count == 0 {
            return Ok(());
        }
        let capacity = (count * VERTICES_PER_JOINT * std::mem::size_of::<LineVertex>()) as u64;
        let index = slot.index;
        self.ensure_buffer(ctx, index, capacity)?;
        let lines =
            Lines { joints, parents, count, mask: &self.mask, selected, show_joints: self.show_joints };
        let buffer = self.buffers[index].as_mut().expect("created above");
        let mapped = buffer.mapped_mut().ok_or_else(|| GpuError::new("bone lines buffer is not mapped"))?;
        let vertices = lines.write(mapped) as u32;
        if vertices == 0 {
            return Ok(());
        }
        let buffer = buffer.raw;
        self.draw(ctx, slot, buffer, vertices, &(view_proj * world), extent);
        Ok(())
    }

    /// Makes slot `index`'s vertex buffer hold `capacity` bytes.
    fn ensure_buffer(&mut self, ctx: &GpuContext, index: usize, capacity: u64) -> Result<(), GpuError> {
        if self.buffers[index].as_ref().is_none_or(|b| b.size < capacity) {
            // begin_frame waited for this slot's fence, and only frames on this
            // slot read this buffer: the GPU is done with the old one.
            if let Some(old) = self.buffers[index].take() {
                old.destroy(ctx);
            }
            self.buffers[index] = Some(Buffer::new(
                ctx,
                &format!("bone lines {index}"),
                capacity,
                vk::BufferUsageFlags::VERTEX_BUFFER,
                MemoryLocation::CpuToGpu,
            )?);
        }
        Ok(())
    }

    /// Draws `vertices` line vertices of `buffer` (slot `slot`'s) seen
    /// through `mvp`, with the viewport and scissor over `extent`.
    fn draw(
        &self,
        ctx: &GpuContext,
        slot: &FrameSlot,
        buffer: vk::Buffer,
        vertices: u32,
        mvp: &Matrix4<f32>,
        extent: vk::Extent2D,
    ) {
        let mut push = LinePush { view_proj_world: [0.0; 16] };
        push.view_proj_world.copy_from_slice(mvp.as_slice());
        let viewport = vk::Viewport {
            x: 0.0,
            y: 0.0,
            width: extent.width as f32,
            height: extent.height as f32,
            min_depth: 0.0,
            max_depth: 1.0,
        };
        let scissor = vk::Rect2D { offset: vk::Offset2D::default(), extent };
        let cmd = slot.command_buffer;
        let d = &ctx.device;
        // SAFETY: cmd is recording inside dynamic rendering with attachments of
        // the formats this pipeline was built for; the vertex buffer is this
        // slot's and lives until after its fence (destroyed only on growth
        // after the fence, or in `destroy`).
        unsafe {
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, self.pipeline);
            d.cmd_set_viewport(cmd, 0, &[viewport]);
            d.cmd_set_scissor(cmd, 0, &[scissor]);
            d.cmd_push_constants(
                cmd,
                self.layout,
                vk::ShaderStageFlags::VERTEX,
                0,
                bytemuck::bytes_of(&push),
            );
            d.cmd_bind_vertex_buffers(cmd, 0, &[buffer], &[0]);
            d.cmd_draw(cmd, vertices, 1, 0, 0);
        }
    }

    /// Frees everything; the caller guarantees no pending GPU use.
    pub fn destroy(self, ctx: &GpuContext) {
        // SAFETY: the caller guarantees the GPU no longer uses these objects;
        // null handles are ignored by vkDestroy*.
        unsafe {
            ctx.device.destroy_pipeline(self.pipeline, None);
            ctx.device.destroy_pipeline_layout(self.layout, None);
        }
        self.buffers.into_iter().flatten().for_each(|b| b.destroy(ctx));
    }
}

/// `mask[j]` = skeleton joint `j` is a joint of some skin of `model` (what
/// `BoneLines::set_mask` wants; other nodes are scene plumbing, not bones).
/// All joints when the model has no skin.
pub fn skin_joint_mask(model: &crate::asset::Model) -> Vec<bool> {
    let mut mask = vec![model.skins.is_empty(); model.skeleton.len()];
    for skin in &model.skins {
        for &j in &skin.joints {
            if let Some(m) = mask.get_mut(j as usize) {
                *m = true;
            }
        }
    }
    mask
}

/// One frame's skeleton as lines: bones from each drawn joint to its drawn
/// parent, and a cross at each joint (all joints when `show_joints`, else
/// the selected one).
struct Lines<'a> {
    joints: &'a [Matrix4<f32>],
    parents: &'a [u32],
    /// Joints drawn: `joints.len().min(parents.len())`.
    count: usize,
    /// `BoneLines::mask` (empty: every joint).
    mask: &'a [bool],
    selected: Option<usize>,
    show_joints: bool,
}

impl Lines<'_> {
    fn drawn(&self, j: usize) -> bool {
        self.mask.is_empty() || self.mask.get(j).copied().unwrap_or(false)
    }

    fn origin(&self, j: usize) -> Vector3<f32> {
        let m = &self.joints[j];
        Vector3::new(m[(0, 3)], m[(1, 3)], m[(2, 3)])
    }

    /// The parent `p` (a joint's parent index) when it is a drawn joint.
    fn drawn_parent(&self, p: u32) -> Option<usize> {
        (p != NO_PARENT && (p as usize) < self.count && self.drawn(p as usize)).then_some(p as usize)
    }

    /// Half the cross arms: from the mean bone length, so it suits any model scale.
    fn cross_size(&self) -> f32 {
        let (mut total, mut bones) = (0.0f32, 0usize);
        for (j, &p) in self.parents.iter().enumerate().take(self.count) {
            if let Some(p) = self.drawn_parent(p).filter(|_| self.drawn(j)) {
                total += (self.origin(j) - self.origin(p)).norm();
                bones += 1;
            }
        }
        if bones > 0 { 0.12 * total / bones as f32 } else { 0.02 }
    }

    /// Writes the line vertices into `mapped` (room for
    /// `VERTICES_PER_JOINT` per joint); how many.
    fn write(&self, mapped: &mut [u8]) -> usize {
        let cross = self.cross_size();
        let selected = self.selected;
        let mut n = 0usize;
        let mut put = |p: Vector3<f32>, color: [u8; 4]| {
            let v = LineVertex { position: [p.x, p.y, p.z], color };
            let at = n * std::mem::size_of::<LineVertex>();
            mapped[at..at + std::mem::size_of::<LineVertex>()].copy_from_slice(bytemuck::bytes_of(&v));
            n += 1;
        };
        for (j, &p) in self.parents.iter().enumerate().take(self.count) {
            if !self.drawn(j) {
                continue;
            }
            let here = self.origin(j);
            if let Some(p) = self.drawn_parent(p) {
                let hot = selected == Some(j) || selected == Some(p);
                let color = if hot { SELECTED_COLOR } else { BONE_COLOR };
                put(self.origin(p), color);
                put(here, color);
            }
            if self.show_joints || selected == Some(j) {
                let color = if selected == Some(j) { SELECTED_COLOR } else { JOINT_COLOR };
                for axis in [Vector3::x(), Vector3::y(), Vector3::z()] {
                    put(here - axis * cross, color);
                    put(here + axis * cross, color);
                }
            }
        }
        n
    }
}
