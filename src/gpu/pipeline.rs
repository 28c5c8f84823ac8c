//! Graphics pipelines for dynamic rendering: the fixed-function state every
//! pipeline in this crate shares, with the parts that differ in a
//! [`GraphicsPipelineDesc`]. It holds no per-frame state and records no
//! commands.

use super::error::VkResultExt;
use super::{GpuContext, GpuError};
use ash::vk;

/// The parts of a graphics pipeline that differ between passes.
///
/// Everything else is fixed by [`create_graphics_pipeline`]: one colour
/// attachment with blending off and all channels written, no culling,
/// counter-clockwise front faces, line width 1, and dynamic viewport and
/// scissor (one of each).
pub struct GraphicsPipelineDesc<'a> {
    /// Shader stages; the caller owns the modules and may destroy them once
    /// the call returns.
    pub stages: &'a [vk::PipelineShaderStageCreateInfo<'a>],
    pub vertex_bindings: &'a [vk::VertexInputBindingDescription],
    pub vertex_attributes: &'a [vk::VertexInputAttributeDescription],
    pub topology: vk::PrimitiveTopology,
    pub polygon_mode: vk::PolygonMode,
    /// `Some(op)`: depth test with `op`; `None`: no depth test.
    pub depth_test: Option<vk::CompareOp>,
    pub depth_write: bool,
    /// `Some((constant, slope))`: depth bias (shadow maps).
    pub depth_bias: Option<(f32, f32)>,
    pub samples: vk::SampleCountFlags,
    /// The colour attachment's format; `vk::Format::UNDEFINED` for none (depth only).
    pub color_format: vk::Format,
    pub depth_format: vk::Format,
    pub layout: vk::PipelineLayout,
    /// Debug name for the pipeline.
    pub name: &'a str,
}

/// Creates one graphics pipeline for dynamic rendering from `desc` (see
/// [`GraphicsPipelineDesc`] for the fixed state) and names it.
pub fn create_graphics_pipeline(
    ctx: &GpuContext,
    desc: &GraphicsPipelineDesc,
) -> Result<vk::Pipeline, GpuError> {
    let vertex_input = vk::PipelineVertexInputStateCreateInfo::default()
        .vertex_binding_descriptions(desc.vertex_bindings)
        .vertex_attribute_descriptions(desc.vertex_attributes);
    let assembly = vk::PipelineInputAssemblyStateCreateInfo::default().topology(desc.topology);
    let viewport = vk::PipelineViewportStateCreateInfo::default().viewport_count(1).scissor_count(1);
    // Width 1: wider lines need the optional wideLines feature.
    let raster = vk::PipelineRasterizationStateCreateInfo::default()
        .polygon_mode(desc.polygon_mode)
        .cull_mode(vk::CullModeFlags::NONE)
        .front_face(vk::FrontFace::COUNTER_CLOCKWISE)
        .line_width(1.0)
        .depth_bias_enable(desc.depth_bias.is_some())
        .depth_bias_constant_factor(desc.depth_bias.map_or(0.0, |b| b.0))
        .depth_bias_slope_factor(desc.depth_bias.map_or(0.0, |b| b.1));
    let multisample = vk::PipelineMultisampleStateCreateInfo::default().rasterization_samples(desc.samples);
    let depth = vk::PipelineDepthStencilStateCreateInfo::default()
        .depth_test_enable(desc.depth_test.is_some())
        .depth_write_enable(desc.depth_write)
        .depth_compare_op(desc.depth_test.unwrap_or(vk::CompareOp::NEVER));
    let blend_attachments = [vk::PipelineColorBlendAttachmentState::default()
        .blend_enable(false)
        .color_write_mask(vk::ColorComponentFlags::RGBA)];
    // `vk::Format::UNDEFINED`: no colour attachment (a depth-only pass).
    let colors = usize::from(desc.color_format != vk::Format::UNDEFINED);
    let blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachments[..colors]);
    let dynamic_states = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
    let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
    let color_formats = [desc.color_format];
    let mut rendering = vk::PipelineRenderingCreateInfo::default()
        .color_attachment_formats(&color_formats[..colors])
        .depth_attachment_format(desc.depth_format);
    let info = vk::GraphicsPipelineCreateInfo::default()
        .stages(desc.stages)
        .vertex_input_state(&vertex_input)
        .input_assembly_state(&assembly)
        .viewport_state(&viewport)
        .rasterization_state(&raster)
        .multisample_state(&multisample)
        .depth_stencil_state(&depth)
        .color_blend_state(&blend)
        .dynamic_state(&dynamic)
        .layout(desc.layout)
        .push_next(&mut rendering);
    // SAFETY: every pointer in info lives until the call returns; dynamic
    // rendering is enabled on the device.
    let pipelines = unsafe { ctx.device.create_graphics_pipelines(vk::PipelineCache::null(), &[info], None) }
        .map_err(|(_, e)| GpuError::vk("vkCreateGraphicsPipelines", e))?;
    ctx.set_name(pipelines[0], desc.name);
    Ok(pipelines[0])
}

/// A compute pipeline whose set 0 is `storage_buffers` storage buffers
/// (bindings 0, 1, ...) and whose push constants are `push_bytes` bytes,
/// with its layouts: what the skin pass and the copy kernel share.
pub struct ComputePipeline {
    /// The pipeline.
    pub pipeline: vk::Pipeline,
    /// Its layout (set 0 + the push-constant range).
    pub layout: vk::PipelineLayout,
    /// The layout of set 0.
    pub set_layout: vk::DescriptorSetLayout,
}

impl ComputePipeline {
    /// Builds the pipeline of SPIR-V `code` (entry `main`, named `name`),
    /// with `specialization` when given. On error nothing is left behind.
    pub fn new(
        ctx: &GpuContext,
        name: &str,
        code: &[u8],
        storage_buffers: u32,
        push_bytes: u32,
        specialization: Option<&vk::SpecializationInfo>,
    ) -> Result<Self, GpuError> {
        let types = vec![Some(vk::DescriptorType::STORAGE_BUFFER); storage_buffers as usize];
        Self::with_bindings(ctx, name, code, &types, push_bytes, specialization)
    }

    /// As `new`, with set 0's binding `b` of type `types[b]` (none where
    /// `types[b]` is `None`).
    pub fn with_bindings(
        ctx: &GpuContext,
        name: &str,
        code: &[u8],
        types: &[Option<vk::DescriptorType>],
        push_bytes: u32,
        specialization: Option<&vk::SpecializationInfo>,
    ) -> Result<Self, GpuError> {
        let d = &ctx.device;
        let bindings: Vec<_> = (0u32..)
            .zip(types)
            .filter_map(|(b, &ty)| Some((b, ty?)))
            .map(|(b, ty)| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(b)
                    .descriptor_type(ty)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let module = super::shader::create_module(ctx, name, code)?;
        let mut made = ComputePipeline {
            pipeline: vk::Pipeline::null(),
            layout: vk::PipelineLayout::null(),
            set_layout: vk::DescriptorSetLayout::null(),
        };
        // SAFETY: valid create infos on a live device; what is made here is
        // destroyed by `destroy` (below on error).
        let built = unsafe {
            (|| -> Result<(), GpuError> {
                made.set_layout = d
                    .create_descriptor_set_layout(
                        &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                        None,
                    )
                    .call("vkCreateDescriptorSetLayout")?;
                let ranges = [vk::PushConstantRange {
                    stage_flags: vk::ShaderStageFlags::COMPUTE,
                    offset: 0,
                    size: push_bytes,
                }];
                let set_layouts = [made.set_layout];
                made.layout = d
                    .create_pipeline_layout(
                        &vk::PipelineLayoutCreateInfo::default()
                            .set_layouts(&set_layouts)
                            .push_constant_ranges(&ranges),
                        None,
                    )
                    .call("vkCreatePipelineLayout")?;
                let mut stage = vk::PipelineShaderStageCreateInfo::default()
                    .stage(vk::ShaderStageFlags::COMPUTE)
                    .module(module)
                    .name(c"main");
                if let Some(spec) = specialization {
                    stage = stage.specialization_info(spec);
                }
                let info = vk::ComputePipelineCreateInfo::default().stage(stage).layout(made.layout);
                made.pipeline = d
                    .create_compute_pipelines(vk::PipelineCache::null(), &[info], None)
                    .map_err(|(_, e)| GpuError::vk("vkCreateComputePipelines", e))?[0];
                Ok(())
            })()
        };
        // SAFETY: the pipeline holds its own copy of the code.
        unsafe { d.destroy_shader_module(module, None) };
        match built {
            Ok(()) => {
                ctx.set_name(made.pipeline, &format!("{name} pipeline"));
                Ok(made)
            }
            Err(e) => {
                made.destroy(ctx);
                Err(e)
            }
        }
    }

    /// Workgroups `(x, y)` covering `groups` groups: x up to the device's
    /// `maxComputeWorkGroupCount[0]`, the rest in rows over y (the shaders
    /// fold y back into one index and return past the last group).
    pub fn grid(ctx: &GpuContext, groups: u32) -> (u32, u32) {
        grid_within(groups, ctx.properties.limits.max_compute_work_group_count[0])
    }

    /// Frees the pipeline and its layouts; the caller guarantees no pending use.
    pub fn destroy(self, ctx: &GpuContext) {
        // SAFETY: no pending work uses these (caller contract); null handles are ignored.
        unsafe {
            ctx.device.destroy_pipeline(self.pipeline, None);
            ctx.device.destroy_pipeline_layout(self.layout, None);
            ctx.device.destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}

/// `groups` as rows of at most `max_x` groups, as few rows as that takes,
/// the groups shared evenly between them: fewer than one group per row past
/// the last. (Full rows would leave up to a row's worth: on lavapipe,
/// 65,535 groups that each still cost a workgroup's launch.)
fn grid_within(groups: u32, max_x: u32) -> (u32, u32) {
    if groups == 0 {
        return (0, 0);
    }
    let rows = groups.div_ceil(max_x.max(1));
    (groups.div_ceil(rows), rows)
}

#[cfg(test)]
mod tests {
    use super::grid_within;

    #[test]
    fn a_grid_covers_its_groups_with_less_than_a_group_per_row_to_spare() {
        assert_eq!(grid_within(0, 65_535), (0, 0));
        assert_eq!(grid_within(1, 65_535), (1, 1));
        assert_eq!(grid_within(65_535, 65_535), (65_535, 1));
        // One past a row: two rows of half, not a full row and one group.
        assert_eq!(grid_within(65_536, 65_535), (32_768, 2));
        for (groups, max_x) in [(76_000, 65_535), (1_000_003, 65_535), (7, 2), (u32::MAX, 65_535), (5, 0)] {
            let (x, y) = grid_within(groups, max_x);
            assert!(x <= max_x.max(1), "{groups} in rows of {max_x}: x {x}");
            let covered = u64::from(x) * u64::from(y);
            assert!(
                covered >= u64::from(groups) && covered - u64::from(groups) < u64::from(y),
                "{groups}: {x} x {y}"
            );
        }
    }
}
