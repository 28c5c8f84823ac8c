//! The draw pass: graphics pipelines (dynamic rendering, D32 depth test, no
//! culling) that draw either pre-skinned vertices from the compute pass
//! (`mesh.vert`) or skin in the vertex shader (`mesh_skinned.vert`, the
//! comparison path), lit and textured by `mesh.frag`; fill and wireframe. It
//! never writes the vertices it draws: the skin pass (or the vertex shader)
//! skins them.
//!
//! A heat variant of each pipeline (`begin_with_heat`) colours vertices by a
//! per-vertex float stream (vertex binding 2, laid out like the UV stream:
//! one f32 per `GpuModel` source vertex; see `render::heat_map`) instead of
//! the material. Without it, binding 2 reads one zero through a stride-0
//! binding, so the shaders stay the same for both.
//!
//! Descriptor sets: set 0 = the skinning buffers (vertex-skinning path only,
//! the layout of shaders/common.glsl), set 1 = per-frame uniforms, set 2 =
//! the material's base-colour texture. Sets 0 and 1 are allocated each frame
//! from the slot's descriptor pool; material sets once, from the pass's pool.

use super::detail_levels::DETAIL_LEVELS;
use super::frame_settings::{InfluenceBlend, SkinningPlacement};
use super::frame_uniforms::FrameUniforms;
use super::shadow::{CASCADES, SHADOW_FORMAT};
use super::skin_pass::{PALETTE_BINDING, PaletteReads, VERTEX_SKINNING_BINDINGS, VertexSkinning};
use super::skinning;
use super::target::{COLOR_FORMAT, DEPTH_FORMAT};
use super::textures::Textures;
use crate::anim::SkinningMethod;
use crate::asset::Material;
use crate::gpu::error::VkResultExt;
use crate::gpu::pipeline::{self, GraphicsPipelineDesc};
use crate::gpu::{Buffer, FRAMES_IN_FLIGHT, FrameSlot, GpuContext, GpuError, shader};
use ash::vk;
use bytemuck::{Pod, Zeroable};
use gpu_allocator::MemoryLocation;

/// Per-draw push constants (`Push` in shaders/mesh_common.glsl). The
/// characters' world matrices are not here but in the frame's instance
/// buffer (set 1, binding 1), indexed by the character the frame's draw
/// order (binding 2) gives each `gl_InstanceIndex`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct DrawPush {
    /// Linear base colour factor.
    pub base_color: [f32; 4],
    /// The draw item's first character (`DrawItem::first_character`).
    pub first_character: u32,
    /// `SkinRecord` index of the first character's primitive (vertex-skinning path).
    pub record: u32,
    /// Records between one character's primitive and the next one's.
    pub records_per_character: u32,
    /// Where the primitive's vertices start in a character's output at
    /// the draw's level (pre-skinned path).
    pub output_offset: u32,
    /// Where the frame placed each character's output
    /// (`skin_pass::plan::OutputPlaces`; pre-skinned path).
    pub output_places: vk::DeviceAddress,
    /// The palette the frame reads (vertex-skinning path).
    pub palette_address: vk::DeviceAddress,
    /// The draw's level map (`GpuPrimitive::level_maps`; pre-skinned
    /// path), or 0 where the output holds the primitive's own vertices.
    pub level_map: vk::DeviceAddress,
}

const _: () = assert!(std::mem::size_of::<DrawPush>() == 56);

/// One primitive of `characters` consecutive characters of one model, drawn
/// with one instanced draw.
#[derive(Debug, Clone, Copy)]
pub struct DrawItem {
    /// Per detail level, where the primitive's vertices start in a
    /// character's output (pre-skinned path): a level's vertices lie
    /// together (`render::skin_levels`).
    pub level_offsets: [u32; DETAIL_LEVELS],
    /// Per detail level, the device address of the primitive's level map
    /// (`GpuModel::level_maps`), or 0 (level 0, or no map).
    pub level_maps: [vk::DeviceAddress; DETAIL_LEVELS],
    /// The first character (index into the frame's instance buffer).
    pub first_character: u32,
    /// How many characters draw this primitive.
    pub characters: u32,
    /// The draw's run of characters in the frame's `DrawOrder` (draws of
    /// the same characters share one).
    pub run: u32,
    /// `[f32; 2]` UVs and the byte offset of the primitive's first one.
    pub uvs: (vk::Buffer, u64),
    /// u32 primitive-local indices.
    pub indices: vk::Buffer,
    /// Per detail level, `(first index, index count)` (`GpuPrimitive::levels`).
    pub levels: [(u32, u32); DETAIL_LEVELS],
    /// Material index into the model's materials.
    pub material: Option<usize>,
    /// `SkinRecord` index of the first character's primitive (vertex-skinning path).
    pub record: u32,
    /// Records from one character's primitive to the next one's.
    pub records_per_character: u32,
}

/// Pipelines, layouts and per-slot uniform buffers of the draw pass.
pub struct MeshPass {
    /// How the vertex-skinning pipelines blend influences.
    method: InfluenceBlend,
    /// How they read the palette: as the device's `SkinPass` does
    /// (`PaletteReads::for_device`), texels or by pointer.
    palette_reads: PaletteReads,
    skin_set_layout: vk::DescriptorSetLayout,
    frame_set_layout: vk::DescriptorSetLayout,
    material_set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    /// `[depth][path][wireframe][heat]`, depth 0 = `DrawStage::Main`, 1 = `DrawStage::AfterPrepass`.
    pipelines: [[[[vk::Pipeline; 2]; 2]; 2]; 2],
    /// `DrawStage::DepthPrepass` pipelines, `[path]`.
    depth_only: [vk::Pipeline; 2],
    /// `DrawStage::Shadow` pipelines, `[path]`.
    shadow: [vk::Pipeline; 2],
    /// One zero float: binding 2 (heat) of draws without a heat stream.
    zero_heat: Option<Buffer>,
    uniforms: Vec<Buffer>,
    /// Sample count the pipelines were built for.
    pub samples: vk::SampleCountFlags,
    /// Colour attachment format the pipelines were built for.
    pub color_format: vk::Format,
}

/// What one frame draws with.
#[derive(Clone, Copy)]
pub struct FrameParams<'a> {
    /// Camera and lights.
    pub uniforms: &'a FrameUniforms,
    /// Pre-skinned or vertex-shader skinning.
    pub path: SkinningPlacement,
    /// Triangle edges only.
    pub wireframe: bool,
    /// Set 0 buffers and the palette; required for `SkinningPlacement::Vertex`.
    pub skin: Option<&'a VertexSkinning>,
    /// Every character's world matrix (column-major `[f32; 16]` each,
    /// applied after skinning), indexed by character (`draw_order`'s
    /// entries): set 1, binding 1. Written by the host before the frame's submit.
    pub instances: vk::Buffer,
    /// Per instance, the character it draws (u32 each; `DrawOrder::order`):
    /// set 1, binding 2. Written by the host before the frame's submit.
    pub draw_order: vk::Buffer,
    /// Where this frame placed each character's skinned output
    /// (pre-skinned path; `SkinPass::output_places_address`, read by pointer).
    pub output_places: vk::DeviceAddress,
    /// Which depth pass the draws belong to.
    pub stage: DrawStage,
    /// The key light's shadow maps the main pass samples (a depth array
    /// view in SHADER_READ_ONLY_OPTIMAL; see `shadow::ShadowMaps`) and their
    /// comparison sampler: set 1, binding 3.
    pub shadow_maps: (vk::ImageView, vk::Sampler),
}

/// The depth role of a rendering's draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DrawStage {
    /// One pass: depth test LESS and depth writes, colour.
    Main,
    /// Depth only (no colour attachment, no fragment shader): fills the depth
    /// buffer that the `AfterPrepass` draws then test against.
    DepthPrepass,
    /// Colour after a depth prepass of the same draws: depth test
    /// LESS_OR_EQUAL without writes, so every hidden fragment is rejected
    /// before shading (the vertex shaders compute positions `precise`).
    AfterPrepass,
    /// Depth only into shadow cascade k (single-sampled `SHADOW_FORMAT`,
    /// depth bias), seen by the cascade's light projection.
    Shadow(usize),
}

impl DrawStage {
    /// Which of a frame's uniform regions the stage reads: 0 for the camera's
    /// passes, 1 + k for shadow cascade k.
    fn uniform_region(self) -> usize {
        match self {
            DrawStage::Shadow(k) => 1 + k,
            _ => 0,
        }
    }
}

/// Bytes between the uniform regions of one frame (a multiple of every
/// device's largest allowed minUniformBufferOffsetAlignment, 256).
const UNIFORM_STRIDE: u64 = 512;
const _: () = assert!(std::mem::size_of::<FrameUniforms>() as u64 <= UNIFORM_STRIDE);

/// What `MeshPass::begin` bound for the frame.
pub struct BoundFrame {
    /// Heat stream (binding 2), indexed like the UVs.
    heat: Option<vk::Buffer>,
    /// What every draw's push constants point at (`DrawPush`): the
    /// output's places, the palette.
    output_places: vk::DeviceAddress,
    palette_address: vk::DeviceAddress,
}

impl BoundFrame {
    /// The same frame without the heat map (another model's vertices).
    pub fn without_heat(&self) -> BoundFrame {
        BoundFrame { heat: None, ..*self }
    }
}

fn set_layout(
    ctx: &GpuContext,
    bindings: &[vk::DescriptorSetLayoutBinding],
) -> Result<vk::DescriptorSetLayout, GpuError> {
    let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(bindings);
    // SAFETY: valid create info on a live device.
    unsafe { ctx.device.create_descriptor_set_layout(&info, None) }.call("vkCreateDescriptorSetLayout")
}

/// Allocates one set from a frame slot's pool without a heap allocation
/// (ash's wrapper returns a Vec). The pool was reset by `begin_frame` after
/// the slot's fence, so the set is used only by the frame being recorded.
fn allocate_set(
    ctx: &GpuContext,
    pool: vk::DescriptorPool,
    layout: vk::DescriptorSetLayout,
) -> Result<vk::DescriptorSet, GpuError> {
    let layouts = [layout];
    let info = vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool).set_layouts(&layouts);
    let mut set = vk::DescriptorSet::null();
    let d = &ctx.device;
    // SAFETY: one layout, one output handle; pool and layout are live.
    unsafe { (d.fp_v1_0().allocate_descriptor_sets)(d.handle(), &info, &mut set) }
        .result()
        .call("vkAllocateDescriptorSets")?;
    Ok(set)
}

impl MeshPass {
    /// Builds the pipelines for offscreen targets (`COLOR_FORMAT`) with
    /// `samples` samples per pixel.
    pub fn new(ctx: &GpuContext, samples: vk::SampleCountFlags) -> Result<Self, GpuError> {
        Self::with_format(ctx, samples, COLOR_FORMAT)
    }

    /// Builds the pipelines for colour attachments of `color_format` (a
    /// swapchain's) with `samples` samples per pixel.
    pub fn with_format(
        ctx: &GpuContext,
        samples: vk::SampleCountFlags,
        color_format: vk::Format,
    ) -> Result<Self, GpuError> {
        Self::with_method(ctx, samples, color_format, SkinningMethod::Linear)
    }

    /// [`with_format`](Self::with_format), with the vertex-skinning path
    /// blending influences by `method` (a `SkinningMethod`, or a
    /// `InfluenceBlend` that also says where DQS splits the matrices: it
    /// must match the `SkinPass` whose palette the draws read).
    pub fn with_method(
        ctx: &GpuContext,
        samples: vk::SampleCountFlags,
        color_format: vk::Format,
        method: impl Into<InfluenceBlend>,
    ) -> Result<Self, GpuError> {
        let mut pass = MeshPass {
            method: method.into(),
            palette_reads: PaletteReads::for_device(&ctx.properties.limits),
            skin_set_layout: vk::DescriptorSetLayout::null(),
            frame_set_layout: vk::DescriptorSetLayout::null(),
            material_set_layout: vk::DescriptorSetLayout::null(),
            layout: vk::PipelineLayout::null(),
            pipelines: [[[[vk::Pipeline::null(); 2]; 2]; 2]; 2],
            depth_only: [vk::Pipeline::null(); 2],
            shadow: [vk::Pipeline::null(); 2],
            zero_heat: None,
            uniforms: Vec::with_capacity(FRAMES_IN_FLIGHT),
            samples,
            color_format,
        };
        match pass.build(ctx) {
            Ok(()) => Ok(pass),
            Err(e) => {
                pass.destroy(ctx);
                Err(e)
            }
        }
    }

    /// Creates everything `with_method` left null: the layouts, the
    /// per-slot uniforms and the pipelines. On error the caller destroys
    /// what was made.
    fn build(&mut self, ctx: &GpuContext) -> Result<(), GpuError> {
        self.create_layouts(ctx)?;
        self.create_buffers(ctx)?;
        self.create_pipelines(ctx)
    }

    /// The three set layouts (skinning streams, frame, material) and the
    /// pipeline layout with the draw's push constants.
    fn create_layouts(&mut self, ctx: &GpuContext) -> Result<(), GpuError> {
        let storage = VERTEX_SKINNING_BINDINGS.map(|b| (b, vk::DescriptorType::STORAGE_BUFFER));
        // The palette as texels where the device reads it so; else by pointer, unbound.
        let texels = (self.palette_reads == PaletteReads::Texels)
            .then_some((PALETTE_BINDING, vk::DescriptorType::UNIFORM_TEXEL_BUFFER));
        let skin_bindings: Vec<_> = storage
            .into_iter()
            .chain(texels)
            .map(|(b, ty)| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(b)
                    .descriptor_type(ty)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::VERTEX)
            })
            .collect();
        self.skin_set_layout = set_layout(ctx, &skin_bindings)?;
        self.frame_set_layout = set_layout(
            ctx,
            &[
                vk::DescriptorSetLayoutBinding::default()
                    .binding(0)
                    .descriptor_type(vk::DescriptorType::UNIFORM_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT),
                vk::DescriptorSetLayoutBinding::default()
                    .binding(1)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::VERTEX),
                vk::DescriptorSetLayoutBinding::default()
                    .binding(2)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::VERTEX),
                vk::DescriptorSetLayoutBinding::default()
                    .binding(3)
                    .descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::FRAGMENT),
            ],
        )?;
        self.material_set_layout = set_layout(
            ctx,
            &[vk::DescriptorSetLayoutBinding::default()
                .binding(0)
                .descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::FRAGMENT)],
        )?;
        let set_layouts = [self.skin_set_layout, self.frame_set_layout, self.material_set_layout];
        let push = [vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT,
            offset: 0,
            size: std::mem::size_of::<DrawPush>() as u32,
        }];
        let info =
            vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts).push_constant_ranges(&push);
        // SAFETY: valid create info; the set layouts are live.
        self.layout =
            unsafe { ctx.device.create_pipeline_layout(&info, None) }.call("vkCreatePipelineLayout")?;
        Ok(())
    }

    /// Each frame slot's uniforms (the main pass's and every cascade's) and
    /// the zero heat stream drawn when no heat map is shown.
    fn create_buffers(&mut self, ctx: &GpuContext) -> Result<(), GpuError> {
        for i in 0..FRAMES_IN_FLIGHT {
            self.uniforms.push(Buffer::new(
                ctx,
                &format!("frame uniforms {i}"),
                UNIFORM_STRIDE * (1 + CASCADES as u64),
                vk::BufferUsageFlags::UNIFORM_BUFFER,
                MemoryLocation::CpuToGpu,
            )?);
        }

        let mut zero = Buffer::new(
            ctx,
            "mesh zero heat",
            4,
            vk::BufferUsageFlags::VERTEX_BUFFER,
            MemoryLocation::CpuToGpu,
        )?;
        // Written once, before any submission reads it.
        let written = zero.write(0, &0f32.to_ne_bytes());
        self.zero_heat = Some(zero);
        written
    }

    /// Every pipeline: per skinning placement, the main pass's (with and
    /// without a prepass before it, filled or wireframe where the device
    /// can, with or without the heat map), the depth prepass's and the
    /// shadow cascades'.
    fn create_pipelines(&mut self, ctx: &GpuContext) -> Result<(), GpuError> {
        let mut modules = Vec::with_capacity(3);
        let result = (|| {
            modules.push(shader::create_module(ctx, "mesh.vert", crate::spirv!("mesh.vert"))?);
            let (name, spirv): (&str, &[u8]) = match self.palette_reads {
                PaletteReads::Texels => ("mesh_skinned.vert", crate::spirv!("mesh_skinned.vert")),
                PaletteReads::Storage => {
                    ("mesh_skinned_storage.vert", crate::spirv!("mesh_skinned_storage.vert"))
                }
            };
            modules.push(shader::create_module(ctx, name, spirv)?);
            modules.push(shader::create_module(ctx, "mesh.frag", crate::spirv!("mesh.frag"))?);
            for (p, path) in [SkinningPlacement::Compute, SkinningPlacement::Vertex].into_iter().enumerate() {
                let vertex = modules[p];
                for (d, stage) in [DrawStage::Main, DrawStage::AfterPrepass].into_iter().enumerate() {
                    for wire in [false, true] {
                        if wire && !ctx.features.fill_mode_non_solid {
                            continue;
                        }
                        for heat in [false, true] {
                            self.pipelines[d][p][wire as usize][heat as usize] =
                                self.pipeline(ctx, path, stage, vertex, Some(modules[2]), wire, heat)?;
                        }
                    }
                }
                self.depth_only[p] =
                    self.pipeline(ctx, path, DrawStage::DepthPrepass, vertex, None, false, false)?;
                self.shadow[p] =
                    self.pipeline(ctx, path, DrawStage::Shadow(0), vertex, None, false, false)?;
            }
            Ok(())
        })();
        for m in modules {
            // SAFETY: pipeline creation has finished; modules are not needed afterwards.
            unsafe { ctx.device.destroy_shader_module(m, None) };
        }
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn pipeline(
        &self,
        ctx: &GpuContext,
        path: SkinningPlacement,
        stage: DrawStage,
        vertex: vk::ShaderModule,
        fragment: Option<vk::ShaderModule>,
        wireframe: bool,
        heat: bool,
    ) -> Result<vk::Pipeline, GpuError> {
        // mesh.frag's HEAT specialization constant (a 32-bit VkBool32).
        let heat_value = vk::Bool32::from(heat).to_ne_bytes();
        let spec_entries = [vk::SpecializationMapEntry { constant_id: 0, offset: 0, size: 4 }];
        let spec = vk::SpecializationInfo::default().map_entries(&spec_entries).data(&heat_value);
        // mesh_skinned.vert's skinning constants (mesh.vert has none).
        let skinning_constants = skinning::constants(self.method);
        let vertex_spec = skinning::specialization(&skinning_constants);
        let mut stages = vec![
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::VERTEX)
                .module(vertex)
                .name(c"main")
                .specialization_info(&vertex_spec),
        ];
        if let Some(fragment) = fragment {
            stages.push(
                vk::PipelineShaderStageCreateInfo::default()
                    .stage(vk::ShaderStageFlags::FRAGMENT)
                    .module(fragment)
                    .name(c"main")
                    .specialization_info(&spec),
            );
        }
        // Binding 1: UV; binding 2: heat (stride 0 without a heat stream:
        // every vertex reads the zero buffer's one float). Both are per
        // source vertex of the model, shared by all its characters; the
        // skinned vertices are pulled from storage buffers (see mesh.vert).
        let bindings = [
            vk::VertexInputBindingDescription {
                binding: 2,
                stride: if heat { 4 } else { 0 },
                input_rate: vk::VertexInputRate::VERTEX,
            },
            vk::VertexInputBindingDescription {
                binding: 1,
                stride: 8,
                input_rate: vk::VertexInputRate::VERTEX,
            },
        ];
        let attributes = [
            vk::VertexInputAttributeDescription {
                location: 3,
                binding: 2,
                format: vk::Format::R32_SFLOAT,
                offset: 0,
            },
            vk::VertexInputAttributeDescription {
                location: 2,
                binding: 1,
                format: vk::Format::R32G32_SFLOAT,
                offset: 0,
            },
        ];
        let name = format!(
            "mesh pipeline {path:?} {} {stage:?}{}{}",
            self.method.name(),
            if wireframe { " wireframe" } else { "" },
            if heat { " heat" } else { "" }
        );
        let (depth_test, depth_write) = match stage {
            DrawStage::Main | DrawStage::DepthPrepass | DrawStage::Shadow(_) => (vk::CompareOp::LESS, true),
            DrawStage::AfterPrepass => (vk::CompareOp::LESS_OR_EQUAL, false),
        };
        let shadow = matches!(stage, DrawStage::Shadow(_));
        // No culling (fixed by the helper): glTF double-sidedness varies and
        // the fragment shader lights both sides.
        pipeline::create_graphics_pipeline(
            ctx,
            &GraphicsPipelineDesc {
                stages: &stages,
                vertex_bindings: &bindings,
                vertex_attributes: &attributes,
                topology: vk::PrimitiveTopology::TRIANGLE_LIST,
                polygon_mode: if wireframe { vk::PolygonMode::LINE } else { vk::PolygonMode::FILL },
                depth_test: Some(depth_test),
                depth_write,
                samples: if shadow { vk::SampleCountFlags::TYPE_1 } else { self.samples },
                // The prepass and the shadow cascades render depth alone.
                color_format: if fragment.is_some() { self.color_format } else { vk::Format::UNDEFINED },
                // Slope-scaled bias against shadow acne.
                depth_bias: shadow.then_some((1.25, 1.75)),
                depth_format: if shadow { SHADOW_FORMAT } else { DEPTH_FORMAT },
                layout: self.layout,
                name: &name,
            },
        )
    }

    /// How the vertex-skinning path blends influences.
    pub fn method(&self) -> SkinningMethod {
        self.method.method
    }

    /// Whether `begin` accepts `wireframe = true` on this device.
    pub fn supports_wireframe(&self) -> bool {
        self.pipelines[0][0][1][0] != vk::Pipeline::null()
    }

    /// Starts drawing a frame inside dynamic rendering: writes this slot's
    /// uniforms, allocates and binds sets 0 (vertex skinning) and 1 from the
    /// slot's descriptor pool, and binds the pipeline.
    pub fn begin(
        &mut self,
        ctx: &GpuContext,
        slot: &FrameSlot,
        params: &FrameParams,
    ) -> Result<BoundFrame, GpuError> {
        self.begin_with_heat(ctx, slot, params, None)
    }

    /// `begin`, with the weight heat map when `heat` is given: the heat
    /// pipeline colours each vertex by `heat`'s float (one per `GpuModel`
    /// source vertex, the UV stream's layout; `render::heat_map::HeatMap`
    /// builds it) instead of the material. The buffer must live until this
    /// frame's fence has signalled.
    pub fn begin_with_heat(
        &mut self,
        ctx: &GpuContext,
        slot: &FrameSlot,
        params: &FrameParams,
        heat: Option<vk::Buffer>,
    ) -> Result<BoundFrame, GpuError> {
        let FrameParams {
            uniforms,
            path,
            wireframe,
            skin,
            instances,
            draw_order,
            output_places,
            stage,
            shadow_maps,
        } = *params;
        let p = (path == SkinningPlacement::Vertex) as usize;
        let pipeline = match stage {
            DrawStage::DepthPrepass => self.depth_only[p],
            DrawStage::Shadow(k) if k < CASCADES => self.shadow[p],
            DrawStage::Shadow(k) => return Err(GpuError::new(format!("no shadow cascade {k}"))),
            DrawStage::Main => self.pipelines[0][p][wireframe as usize][heat.is_some() as usize],
            DrawStage::AfterPrepass => self.pipelines[1][p][wireframe as usize][heat.is_some() as usize],
        };
        if pipeline == vk::Pipeline::null() {
            return Err(GpuError::new(
                "wireframe drawing is not supported by this device (fillModeNonSolid)",
            ));
        }
        // This slot's fence has signalled (begin_frame waited), so the GPU no
        // longer reads this slot's uniform buffer; host writes before the
        // submit are visible to it.
        let region = stage.uniform_region() as u64 * UNIFORM_STRIDE;
        self.uniforms[slot.index].write(region, bytemuck::bytes_of(uniforms))?;
        let cmd = slot.command_buffer;
        let d = &ctx.device;
        let frame_set = allocate_set(ctx, slot.descriptor_pool, self.frame_set_layout)?;
        let infos = [
            vk::DescriptorBufferInfo {
                buffer: self.uniforms[slot.index].raw,
                offset: region,
                range: std::mem::size_of::<FrameUniforms>() as u64,
            },
            vk::DescriptorBufferInfo { buffer: instances, offset: 0, range: vk::WHOLE_SIZE },
            vk::DescriptorBufferInfo { buffer: draw_order, offset: 0, range: vk::WHOLE_SIZE },
        ];
        let writes: [vk::WriteDescriptorSet; 3] = std::array::from_fn(|b| {
            vk::WriteDescriptorSet::default()
                .dst_set(frame_set)
                .dst_binding(b as u32)
                .descriptor_type(if b == 0 {
                    vk::DescriptorType::UNIFORM_BUFFER
                } else {
                    vk::DescriptorType::STORAGE_BUFFER
                })
                .buffer_info(std::slice::from_ref(&infos[b]))
        });
        let shadow_info = [vk::DescriptorImageInfo {
            sampler: shadow_maps.1,
            image_view: shadow_maps.0,
            image_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
        }];
        let shadow_write = vk::WriteDescriptorSet::default()
            .dst_set(frame_set)
            .dst_binding(3)
            .descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
            .image_info(&shadow_info);
        // SAFETY: the set and buffers are live; the set is not in use by the GPU.
        unsafe {
            d.update_descriptor_sets(&writes, &[]);
            d.update_descriptor_sets(&[shadow_write], &[]);
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, pipeline);
            d.cmd_bind_descriptor_sets(
                cmd,
                vk::PipelineBindPoint::GRAPHICS,
                self.layout,
                1,
                &[frame_set],
                &[],
            );
        }
        let mut palette_address = 0;
        if path == SkinningPlacement::Vertex {
            let skin = skin.ok_or_else(|| GpuError::new("vertex skinning needs the skinning buffers"))?;
            palette_address = skin.palette_address;
            let skin_set = allocate_set(ctx, slot.descriptor_pool, self.skin_set_layout)?;
            let writes: [vk::WriteDescriptorSet; 6] = std::array::from_fn(|i| {
                vk::WriteDescriptorSet::default()
                    .dst_set(skin_set)
                    .dst_binding(VERTEX_SKINNING_BINDINGS[i])
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(std::slice::from_ref(&skin.buffers[i]))
            });
            let views = [skin.palette_view];
            let palette = vk::WriteDescriptorSet::default()
                .dst_set(skin_set)
                .dst_binding(PALETTE_BINDING)
                .descriptor_type(vk::DescriptorType::UNIFORM_TEXEL_BUFFER)
                .texel_buffer_view(&views);
            let texels = self.palette_reads == PaletteReads::Texels;
            if texels && skin.palette_view == vk::BufferView::null() {
                return Err(GpuError::new("vertex skinning: the palette has no texel view"));
            }
            // SAFETY: the set is fresh; the buffers and the view outlive this frame's fence.
            unsafe {
                d.update_descriptor_sets(&writes, &[]);
                if texels {
                    d.update_descriptor_sets(&[palette], &[]);
                }
                d.cmd_bind_descriptor_sets(
                    cmd,
                    vk::PipelineBindPoint::GRAPHICS,
                    self.layout,
                    0,
                    &[skin_set],
                    &[],
                );
            }
        }
        Ok(BoundFrame { heat, output_places, palette_address })
    }

    /// Records one draw item (inside rendering, after `begin`): per detail
    /// level, one instanced draw of `instances[k]` (`(first instance,
    /// count)` in the frame's draw order) with that level's indices.
    pub fn draw(
        &self,
        ctx: &GpuContext,
        cmd: vk::CommandBuffer,
        frame: &BoundFrame,
        materials: &MeshMaterials,
        item: &DrawItem,
        instances: &[(u32, u32); DETAIL_LEVELS],
    ) {
        let (set, base_color) = materials.of(item.material);
        let push = |level: usize| DrawPush {
            base_color,
            first_character: item.first_character,
            record: item.record,
            records_per_character: item.records_per_character,
            output_offset: item.level_offsets[level],
            output_places: frame.output_places,
            palette_address: frame.palette_address,
            level_map: item.level_maps[level],
        };
        // The heat stream is laid out like the UVs (one f32 where they have
        // a [f32; 2]), so its offset is half the UV offset; without one, the
        // stride-0 binding reads the zero buffer.
        let heat = match (frame.heat, &self.zero_heat) {
            (Some(buffer), _) => (buffer, item.uvs.1 / 2),
            (None, Some(zero)) => (zero.raw, 0),
            (None, None) => return, // only after a failed build, which `new` reports
        };
        let d = &ctx.device;
        // SAFETY: cmd is recording inside rendering with this pass's pipeline
        // bound; every buffer and set outlives the frame's fence.
        unsafe {
            d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::GRAPHICS, self.layout, 2, &[set], &[]);
            d.cmd_bind_vertex_buffers(cmd, 1, &[item.uvs.0, heat.0], &[item.uvs.1, heat.1]);
            d.cmd_bind_index_buffer(cmd, item.indices, 0, vk::IndexType::UINT32);
            // One instance per character at the level; the vertex shader
            // finds its character at draw_order[gl_InstanceIndex].
            let levels = item.levels.iter().zip(instances).enumerate();
            for (level, (&(first_index, index_count), &(first_instance, count))) in levels {
                if count > 0 && index_count > 0 {
                    let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
                    d.cmd_push_constants(cmd, self.layout, stages, 0, bytemuck::bytes_of(&push(level)));
                    d.cmd_draw_indexed(cmd, index_count, count, first_index, 0, first_instance);
                }
            }
        }
    }

    /// The material set layout (set 2), for `MeshMaterials`.
    pub fn material_set_layout(&self) -> vk::DescriptorSetLayout {
        self.material_set_layout
    }

    /// Frees everything; the caller guarantees no pending GPU use.
    pub fn destroy(self, ctx: &GpuContext) {
        // SAFETY: the caller guarantees the GPU no longer uses these objects;
        // null handles are ignored by vkDestroy*.
        unsafe {
            for p in self
                .pipelines
                .iter()
                .flatten()
                .flatten()
                .flatten()
                .chain(&self.depth_only)
                .chain(&self.shadow)
            {
                ctx.device.destroy_pipeline(*p, None);
            }
            ctx.device.destroy_pipeline_layout(self.layout, None);
            for l in [self.skin_set_layout, self.frame_set_layout, self.material_set_layout] {
                ctx.device.destroy_descriptor_set_layout(l, None);
            }
        }
        self.uniforms.into_iter().chain(self.zero_heat).for_each(|b| b.destroy(ctx));
    }
}

/// One descriptor set (set 2) per material plus one for "no material",
/// allocated once from the pass's own pool: textures never change; and
/// each material's base colour factor (a draw's push constant).
pub struct MeshMaterials {
    pool: vk::DescriptorPool,
    /// `sets[m]` for material m; the last one is the default (white).
    sets: Vec<vk::DescriptorSet>,
    /// `base_colors[m]` for material m; the last one is the default (white).
    base_colors: Vec<[f32; 4]>,
}

impl MeshMaterials {
    /// Writes a set per material of `materials`, sampling `textures`.
    pub fn new(
        ctx: &GpuContext,
        pass: &MeshPass,
        materials: &[Material],
        textures: &Textures,
    ) -> Result<Self, GpuError> {
        let count = materials.len() as u32 + 1;
        let sizes = [vk::DescriptorPoolSize {
            ty: vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
            descriptor_count: count,
        }];
        let info = vk::DescriptorPoolCreateInfo::default().max_sets(count).pool_sizes(&sizes);
        // SAFETY: valid create info on a live device.
        let pool =
            unsafe { ctx.device.create_descriptor_pool(&info, None) }.call("vkCreateDescriptorPool")?;
        let layouts = vec![pass.material_set_layout; count as usize];
        let alloc = vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool).set_layouts(&layouts);
        // SAFETY: the pool was sized for exactly these sets.
        let sets = match unsafe { ctx.device.allocate_descriptor_sets(&alloc) } {
            Ok(s) => s,
            Err(e) => {
                // SAFETY: nothing uses the pool yet.
                unsafe { ctx.device.destroy_descriptor_pool(pool, None) };
                return Err(GpuError::vk("vkAllocateDescriptorSets", e));
            }
        };
        let images: Vec<[vk::DescriptorImageInfo; 1]> = (0..count as usize)
            .map(|m| {
                let image = materials.get(m).and_then(|m| m.base_color_image);
                [vk::DescriptorImageInfo {
                    sampler: textures.sampler,
                    image_view: textures.view(image),
                    image_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
                }]
            })
            .collect();
        let writes: Vec<_> = sets
            .iter()
            .zip(&images)
            .map(|(&set, image)| {
                vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .dst_binding(0)
                    .descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
                    .image_info(image)
            })
            .collect();
        // SAFETY: fresh sets, live views and sampler.
        unsafe { ctx.device.update_descriptor_sets(&writes, &[]) };
        let base_colors = materials.iter().map(|m| m.base_color).chain([[1.0; 4]]).collect();
        Ok(MeshMaterials { pool, sets, base_colors })
    }

    /// The set and base colour of material `material` (the default's when
    /// `None` or out of range).
    pub fn of(&self, material: Option<usize>) -> (vk::DescriptorSet, [f32; 4]) {
        let default = self.sets.len() - 1;
        let m = material.filter(|&m| m < default).unwrap_or(default);
        (self.sets[m], self.base_colors[m])
    }

    /// Frees the sets; the caller guarantees no pending GPU use.
    pub fn destroy(self, ctx: &GpuContext) {
        // SAFETY: the caller guarantees no pending GPU use; sets go with the pool.
        unsafe { ctx.device.destroy_descriptor_pool(self.pool, None) };
    }
}
