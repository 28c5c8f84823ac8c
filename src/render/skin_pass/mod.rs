//! Compute skinning: morphs and skins every primitive of every registered
//! character instance in ONE dispatch (shaders/skin.comp) into the frame
//! slot's own output buffer, which the draw pass then binds as a vertex buffer.
//!
//! Per frame: `record` = `upload` (writes the palettes and morph weights of
//! the characters whose pose changed since this slot last held them, and the
//! skin records after a layout change) + a dispatch (a descriptor set from
//! the slot's pool, one dispatch, and the barrier that makes the output
//! visible to vertex input and transfers).
//!
//! The vertex-skinning path (shaders/mesh_skinned.vert) reads the same
//! per-slot buffers: call `upload` instead of `record` (no dispatch) and bind
//! `vertex_skinning_buffers(slot)` as set 0 of the draw; each drawn primitive
//! selects its record with `PrimitiveOutput::record`.
//!
//! Synchronisation, all of it (see also the comments at each barrier):
//! - Palette, weight, record and workgroup-record buffers are host-visible, HOST_COHERENT,
//!   persistently mapped and written by the CPU before `vkQueueSubmit`; a
//!   submission makes earlier host writes to coherent memory visible to the
//!   device (the implicit host-write guarantee of queue submission), so no
//!   barrier and no flush is needed.
//! - They belong to one frame slot, and are rewritten only after
//!   `FrameRing::begin_frame` waited for that slot's fence: the previous GPU
//!   reads of them have completed (write-after-read needs only that
//!   execution dependency).
//! - The output buffer is per slot as well (see `SlotBuffers`), so frame N+1's
//!   dispatch never writes what frame N's draw may still read; frame N+2
//!   rewrites frame N's copy only after that slot's fence (which orders it
//!   after frame N's compute write, vertex reads and readback copies).
//! - Within a frame, compute writes -> vertex input / vertex shader storage
//!   reads / transfer reads need the pipeline barrier recorded after the
//!   dispatch. It also covers a draw recorded in a later command buffer or
//!   submission on the same queue (barriers apply in submission order).
//! - The static mesh streams were uploaded with a barrier to every later
//!   reader (compute and vertex shaders; storage reads, and sampled reads
//!   for skin.comp's uniform texel buffers), and are only read here; so are
//!   the concatenated streams of several models (`rebuild_combined`'s barrier).
//! - Host writes made visible by a submission are visible to every access
//!   type, texel fetches included; the output is written only as a storage
//!   buffer (a storage texel write measured slower on llvmpipe).
//! - The vertex-skinning path has no compute write at all: its vertex shader
//!   reads only host-written slot buffers (visible at submit, as above) and
//!   the static streams, so it needs no barrier of its own.

use super::frame_settings::{InfluenceBlend, PaletteUpload};
use super::gpu_model::GpuModel;
use super::layout::{
    BoneMatrix, Influence, MorphEntry, NO_MORPHS, PaletteDualQuat, SkinRecord, SkinnedVertex, SourceVertex,
    group_records,
};
use super::skinning;
use crate::anim::{FramePoses, SkinningMethod};
use crate::asset::Model;
use crate::gpu::barrier::{self, Access};
use crate::gpu::error::VkResultExt;
use crate::gpu::frame::Retired;
use crate::gpu::pipeline::ComputePipeline;
use crate::gpu::{Buffer, FRAMES_IN_FLIGHT, FrameRing, FrameSlot, GpuContext, GpuError, immediate};
use ash::vk;
use gpu_allocator::MemoryLocation;
use std::sync::Arc;

/// Threads per workgroup (`local_size_x` in skin.comp).
pub const WORKGROUP_SIZE: u32 = 64;

/// Byte sizes of the static streams' elements (see `layout`).
const SOURCE_BYTES: u64 = std::mem::size_of::<SourceVertex>() as u64;
const INFLUENCE_BYTES: u64 = std::mem::size_of::<Influence>() as u64;
const MORPH_ENTRY_BYTES: u64 = std::mem::size_of::<MorphEntry>() as u64;

/// How the skinning shaders read their inputs (static streams, palettes):
/// skin.comp as uniform texel buffers, skin_storage.comp and the
/// vertex-skinning path (mesh_skinned.vert) as storage buffers.
const SKINNING_READS: &[Access] = &[
    Access::ComputeShaderUniformTexelRead,
    Access::ComputeShaderStorageRead,
    Access::VertexShaderStorageRead,
];

/// Byte size of one output vertex.
pub const OUTPUT_STRIDE: u64 = std::mem::size_of::<SkinnedVertex>() as u64;

/// What one `record` (or `upload`) did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SkinStats {
    /// Palette bytes written by the host this frame (each written byte
    /// counted once; in `PaletteUpload::Dirty`, a character whose pose
    /// version the slot already holds adds nothing). In the staged modes the
    /// same bytes are then copied on the GPU.
    pub palette_bytes_written: u64,
    /// Host time spent writing palettes and weights, in nanoseconds.
    pub write_ns: u64,
    /// Timestamp queries before and after the palette copy (staged modes),
    /// when asked and available.
    pub copy_timestamps: Option<(u32, u32)>,
    /// Morph weight bytes written.
    pub weight_bytes_written: u64,
    /// Vertices skinned.
    pub vertices: u64,
    /// Compute dispatches recorded (1, or 0 when there is nothing to skin).
    pub dispatches: u32,
    /// Timestamp queries before and after the dispatch, when asked and available.
    pub timestamps: Option<(u32, u32)>,
}

/// A registered character instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CharacterId(pub usize);

/// Where one primitive of one mesh instance of a character lands in the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrimitiveOutput {
    /// Index into `Model::instances`.
    pub instance: usize,
    /// Index into `GpuModel::primitives` (mesh, material, first_index, index_count).
    pub gpu_primitive: usize,
    /// First `SkinnedVertex` in `SkinPass::output_buffer`: draw with
    /// `vertex_offset = output_offset` (indices are primitive-local), or bind
    /// the buffer at `output_offset * OUTPUT_STRIDE`.
    pub output_offset: u32,
    /// Vertex count.
    pub vertex_count: u32,
    /// Index of this primitive's `SkinRecord` in the pass's record buffer
    /// (binding 6 of `vertex_skinning_buffers`): the `DrawPush::record` of its
    /// draw on the vertex-skinning path. `NO_RECORD` when `vertex_count` is 0
    /// (no record: nothing to skin or draw).
    pub record: u32,
}

/// `PrimitiveOutput::record` of a primitive without vertices.
pub const NO_RECORD: u32 = u32::MAX;

struct Character {
    gpu: Arc<GpuModel>,
    model: Arc<Model>,
    /// Its palette entries, `[start, end)`: contiguous (skins, then rigid entries).
    palette_range: (u32, u32),
    /// Bytes its skinning reads and writes per frame (see `SkinPass::frame_traffic`).
    traffic: (u64, u64),
    /// Absolute palette index of each skin's first joint.
    skin_bases: Vec<u32>,
    /// (skeleton joint, absolute palette index) of each unskinned instance.
    rigid: Vec<(u32, u32)>,
    weight_base: u32,
    outputs: Vec<PrimitiveOutput>,
}

/// A distinct `GpuModel` and where its streams start in the concatenation.
struct ModelEntry {
    gpu: Arc<GpuModel>,
    sources: u32,
    influences: u32,
    morph_ranges: u32,
    morph_entries: u32,
}

/// Per-slot buffers. The output is per slot, not one buffer shared by both
/// slots: frame N+1's dispatch then never writes vertices that frame N's draw
/// may still be reading, so the CPU can record and the GPU run frame N+1's
/// compute while frame N draws, without a cross-frame barrier (or a
/// semaphore) ordering N's vertex reads before N+1's writes. It costs twice
/// the output memory (48 bytes per skinned vertex per slot).
struct SlotBuffers {
    /// Host-visible palettes: read by the shaders (`PaletteUpload::InPlace`)
    /// or the staging of `device_palette`.
    palette: Buffer,
    /// Device-local palettes the shaders read in the staged modes.
    device_palette: Buffer,
    /// Texel views of `palette` and `device_palette` (skin.comp's binding
    /// 5), replaced with their buffers and retired through the ring with them.
    palette_view: vk::BufferView,
    device_palette_view: vk::BufferView,
    /// Texel views of `records` and `groups` (bindings 6 and 8) where the
    /// pipeline reads them so (`PaletteReads::Texels`), else null; replaced
    /// and retired with their buffers.
    records_view: vk::BufferView,
    groups_view: vk::BufferView,
    /// This frame's staging copies (capacity: one per character, reserved
    /// when characters are added, so recording allocates nothing).
    copies: Vec<vk::BufferCopy>,
    weights: Buffer,
    records: Buffer,
    /// skin.comp's `group_records` (binding 8), written with `records`.
    groups: Buffer,
    output: Buffer,
    /// Pose version of each character last written into `palette`/`weights`.
    held: Vec<Option<u64>>,
    /// Layout generation whose records `records` (and `groups`) hold.
    records_generation: Option<u64>,
}

/// The compute skinning pass and every registered character.
pub struct SkinPass {
    /// How the pipeline blends influences.
    /// What the shader computes and what the palette holds for it.
    shading: InfluenceBlend,
    /// How its shader reads the palette.
    palette_reads: PaletteReads,
    /// The descriptor type of each binding of the pipeline's set 0.
    bindings: [vk::DescriptorType; 9],
    /// Texel views of the static streams (bindings 0..=3) where `bindings`
    /// says so, else null, and the buffers they view (`stream_buffers`):
    /// remade when those change, the old ones retired through the ring.
    stream_views: [vk::BufferView; 4],
    stream_views_of: [vk::Buffer; 4],
    compute: ComputePipeline,
    /// The same with `MORPH_TARGETS` false (shaders/common.glsl): dispatched
    /// while no record has morph targets.
    compute_without_morphs: ComputePipeline,
    characters: Vec<Character>,
    models: Vec<ModelEntry>,
    /// Concatenated sources, influences, morph ranges, morph entries when
    /// more than one distinct model is registered.
    combined: Option<[Buffer; 4]>,
    records: Vec<SkinRecord>,
    /// Per workgroup of the dispatch, its first vertex's record
    /// (`layout::group_records`), rebuilt whenever `records` change.
    group_records: Vec<u32>,
    /// Whether any of `records` has morph targets (`compute`), or none
    /// (`compute_without_morphs`); updated with `group_records`.
    morph_targets: bool,
    palette_len: u32,
    weight_len: u32,
    total_vertices: u32,
    generation: u64,
    slots: Vec<SlotBuffers>,
    upload_mode: PaletteUpload,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Push {
    record_count: u32,
    total_vertices: u32,
}

/// Weights, records and group records: storage buffers for the vertex path
/// and skin_storage.comp, uniform texel buffers for skin.comp.
const HOST_USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::STORAGE_BUFFER.as_raw() | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER.as_raw(),
);
/// The host palette is also the staging buffer of the staged modes.
/// Palettes are read as storage buffers (vertex skinning) and as uniform
/// texel buffers (skin.comp, through `SlotBuffers::palette_view`).
const PALETTE_USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::STORAGE_BUFFER.as_raw()
        | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER.as_raw()
        | vk::BufferUsageFlags::TRANSFER_SRC.as_raw(),
);
const DEVICE_PALETTE_USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::STORAGE_BUFFER.as_raw()
        | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER.as_raw()
        | vk::BufferUsageFlags::TRANSFER_DST.as_raw(),
);

/// The texel format skin.comp reads the palette in: one RGBA32F texel per
/// row of a `BoneMatrix`, four per matrix.
const PALETTE_TEXEL_FORMAT: vk::Format = vk::Format::R32G32B32A32_SFLOAT;

/// Palette texels that hold any scene the other buffers allow in practice
/// (33.5 million matrices: a million characters of 33 joints).
pub const AMPLE_PALETTE_TEXELS: u64 = 1 << 27;

/// How skin.comp reads the palette (binding 5) and, with it, the sources,
/// influences, records and workgroup records (bindings 0, 1, 6, 8). The
/// bytes are the same either way (DESIGN.md's `BoneMatrix`, layout.rs);
/// only the descriptors differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaletteReads {
    /// Uniform texel buffers (`TEXEL_FORMATS`: RGBA32F for the palette, one
    /// texel per matrix row; skin.comp): llvmpipe gathers texels, where
    /// every storage-buffer load is a loop over its SIMD lanes. Limited to
    /// `maxTexelBufferElements / 4` matrices (and `/ 3` source vertices).
    Texels,
    /// Storage buffers, as the vertex path reads them (skin_storage.comp):
    /// as many matrices as `maxStorageBufferRange` allows.
    Storage,
}

impl PaletteReads {
    /// Texels where the device's texel limit holds every palette its
    /// storage-buffer range can, or at least [`AMPLE_PALETTE_TEXELS`]
    /// (lavapipe, NVIDIA, AMD and Intel report 2^27 or more); else storage.
    /// Vulkan only guarantees 65,536 texels (16,384 matrices), which would
    /// cap scenes far below what the storage path allows.
    pub fn for_device(limits: &vk::PhysicalDeviceLimits) -> Self {
        let storage_rows = u64::from(limits.max_storage_buffer_range) / 16;
        if u64::from(limits.max_texel_buffer_elements) >= storage_rows.min(AMPLE_PALETTE_TEXELS) {
            PaletteReads::Texels
        } else {
            PaletteReads::Storage
        }
    }

    /// The shader reading this way.
    fn spirv(self) -> (&'static str, &'static [u8]) {
        match self {
            PaletteReads::Texels => ("skin.comp", crate::spirv!("skin.comp")),
            PaletteReads::Storage => ("skin_storage.comp", crate::spirv!("skin_storage.comp")),
        }
    }

    /// Its set 0: storage buffers, or uniform texel buffers where skin.comp
    /// reads them so (`TEXEL_BINDINGS`).
    fn bindings(self) -> [vk::DescriptorType; 9] {
        let mut types = [vk::DescriptorType::STORAGE_BUFFER; 9];
        if self == PaletteReads::Texels {
            for binding in TEXEL_BINDINGS {
                types[binding] = vk::DescriptorType::UNIFORM_TEXEL_BUFFER;
            }
        }
        types
    }
}

/// The bindings of set 0 that skin.comp reads through uniform texel
/// buffers: sources, influences, palette, records, group records. The
/// morph bindings stay storage buffers (not measured as texels): scenes
/// without morph targets skip their code (`MORPH_TARGETS`), and in scenes
/// with them llvmpipe would run texel fetches, which ignore the lane mask,
/// for the morph-free vertices too.
const TEXEL_BINDINGS: [usize; 5] = [0, 1, 5, 6, 8];

/// The texel format of each binding of skin.comp's set 0 that is a texel
/// buffer (`TEXEL_BINDINGS`; shaders/common.glsl, skin_main.glsl): the bytes
/// of the storage layout as whole texels. Every one of them is a format
/// Vulkan requires uniform texel buffer support for.
const TEXEL_FORMATS: [vk::Format; 9] = [
    vk::Format::R32G32_UINT,       // sources: three per PackedSource (24 bytes)
    vk::Format::R32G32B32A32_UINT, // influences: one per PackedInfluence
    vk::Format::UNDEFINED,         // morph ranges: storage
    vk::Format::UNDEFINED,         // morph entries: storage
    vk::Format::UNDEFINED,         // morph weights: storage
    PALETTE_TEXEL_FORMAT,          // palette: four per BoneMatrix
    vk::Format::R32G32B32A32_UINT, // records: two per SkinRecord
    vk::Format::UNDEFINED,         // output: storage
    vk::Format::R32_UINT,          // group records
];

/// Bytes of one texel of `format` (one of `TEXEL_FORMATS`).
fn texel_bytes(format: vk::Format) -> u64 {
    match format {
        vk::Format::R32_UINT => 4,
        vk::Format::R32G32_UINT => 8,
        _ => 16,
    }
}

/// Whether `ty` is the texel-buffer descriptor type (needs a view).
fn is_texel(ty: vk::DescriptorType) -> bool {
    ty == vk::DescriptorType::UNIFORM_TEXEL_BUFFER
}

/// A view of `buffer`'s whole palette as RGBA32F texels (at most
/// `maxTexelBufferElements` of them; `check_ranges` keeps the palette within).
fn palette_view(ctx: &GpuContext, buffer: &Buffer) -> Result<vk::BufferView, GpuError> {
    texel_view(ctx, buffer.raw, buffer.size, PALETTE_TEXEL_FORMAT)
}

/// A view of the first `size` bytes of `buffer` as `format` texels (whole
/// texels, at most `maxTexelBufferElements`; `check_ranges` keeps what the
/// shader reads within).
fn texel_view(
    ctx: &GpuContext,
    buffer: vk::Buffer,
    size: u64,
    format: vk::Format,
) -> Result<vk::BufferView, GpuError> {
    let bytes = texel_bytes(format);
    let texels = (size / bytes).min(u64::from(ctx.properties.limits.max_texel_buffer_elements)).max(1);
    let info =
        vk::BufferViewCreateInfo::default().buffer(buffer).format(format).offset(0).range(texels * bytes);
    // SAFETY: a live buffer with UNIFORM_TEXEL_BUFFER usage; the range lies inside it.
    unsafe { ctx.device.create_buffer_view(&info, None) }.call("vkCreateBufferView")
}

fn output_usage() -> vk::BufferUsageFlags {
    vk::BufferUsageFlags::VERTEX_BUFFER
        | vk::BufferUsageFlags::STORAGE_BUFFER
        | vk::BufferUsageFlags::TRANSFER_SRC
}

/// `MORPH_TARGETS` (shaders/common.glsl): a skin.comp specialization
/// constant after the skinning ones (`skinning::SPECIALIZATION_ENTRIES`).
const MORPH_TARGETS_ID: u32 = 8;

/// skin.comp's specialization map and data: the skinning constants of
/// `shading` (`skinning::specialization`), then `MORPH_TARGETS` as a 32-bit
/// VkBool32 after them. Made twice per pass, at creation.
fn skin_specialization(
    shading: InfluenceBlend,
    morph_targets: bool,
) -> (Vec<vk::SpecializationMapEntry>, Vec<u8>) {
    let mut data = skinning::constants(shading).to_vec();
    let mut entries = skinning::SPECIALIZATION_ENTRIES.to_vec();
    entries.push(vk::SpecializationMapEntry {
        constant_id: MORPH_TARGETS_ID,
        offset: data.len() as u32,
        size: 4,
    });
    data.extend_from_slice(&vk::Bool32::from(morph_targets).to_ne_bytes());
    (entries, data)
}

impl SkinPass {
    /// Creates the pipeline (linear blend skinning) and empty per-slot buffers.
    pub fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        Self::with_method(ctx, SkinningMethod::Linear)
    }

    /// Creates the pipeline for `method` (a `SkinningMethod`, or a
    /// `InfluenceBlend` that also says where DQS splits the matrices),
    /// reading the palette the way the device suits
    /// (`PaletteReads::for_device`), and empty per-slot buffers.
    pub fn with_method(ctx: &GpuContext, method: impl Into<InfluenceBlend>) -> Result<Self, GpuError> {
        Self::with_palette_reads(ctx, method, PaletteReads::for_device(&ctx.properties.limits))
    }

    /// Creates the pipeline for `method` reading the palette as `reads` says,
    /// and empty per-slot buffers.
    pub fn with_palette_reads(
        ctx: &GpuContext,
        method: impl Into<InfluenceBlend>,
        reads: PaletteReads,
    ) -> Result<Self, GpuError> {
        let shading: InfluenceBlend = method.into();
        let push_bytes = std::mem::size_of::<Push>() as u32;
        let (name, spirv) = reads.spirv();
        let bindings = reads.bindings();
        let pipeline = |morph_targets: bool| {
            let (entries, data) = skin_specialization(shading, morph_targets);
            let spec = vk::SpecializationInfo::default().map_entries(&entries).data(&data);
            let compute =
                ComputePipeline::with_bindings(ctx, name, spirv, &bindings, push_bytes, Some(&spec))?;
            let what = if morph_targets { "" } else { ", no morph targets" };
            ctx.set_name(compute.pipeline, &format!("{name} pipeline ({}{what})", shading.name()));
            Ok::<_, GpuError>(compute)
        };
        let compute = pipeline(true)?;
        let compute_without_morphs = match pipeline(false) {
            Ok(c) => c,
            Err(e) => {
                compute.destroy(ctx);
                return Err(e);
            }
        };
        let mut pass = SkinPass {
            shading,
            palette_reads: reads,
            bindings,
            stream_views: [vk::BufferView::null(); 4],
            stream_views_of: [vk::Buffer::null(); 4],
            compute,
            compute_without_morphs,
            characters: Vec::new(),
            models: Vec::new(),
            combined: None,
            records: Vec::new(),
            group_records: Vec::new(),
            morph_targets: false,
            palette_len: 0,
            weight_len: 0,
            total_vertices: 0,
            generation: 0,
            slots: Vec::with_capacity(FRAMES_IN_FLIGHT),
            upload_mode: PaletteUpload::default(),
        };
        let created = (|| {
            for i in 0..FRAMES_IN_FLIGHT {
                let name = |what: &str| format!("skin slot {i} {what}");
                pass.slots.push(SlotBuffers {
                    palette: Buffer::new(ctx, &name("palette"), 64, PALETTE_USAGE, MemoryLocation::CpuToGpu)?,
                    device_palette: Buffer::new(
                        ctx,
                        &name("device palette"),
                        64,
                        DEVICE_PALETTE_USAGE,
                        MemoryLocation::GpuOnly,
                    )?,
                    palette_view: vk::BufferView::null(),
                    device_palette_view: vk::BufferView::null(),
                    records_view: vk::BufferView::null(),
                    groups_view: vk::BufferView::null(),
                    copies: Vec::new(),
                    weights: Buffer::new(ctx, &name("weights"), 16, HOST_USAGE, MemoryLocation::CpuToGpu)?,
                    records: Buffer::new(ctx, &name("records"), 32, HOST_USAGE, MemoryLocation::CpuToGpu)?,
                    groups: Buffer::new(
                        ctx,
                        &name("group records"),
                        4,
                        HOST_USAGE,
                        MemoryLocation::CpuToGpu,
                    )?,
                    output: Buffer::new(
                        ctx,
                        &name("output"),
                        OUTPUT_STRIDE,
                        output_usage(),
                        MemoryLocation::GpuOnly,
                    )?,
                    held: Vec::new(),
                    records_generation: None,
                });
                let slot = pass.slots.last_mut().expect("the slot just pushed");
                if reads == PaletteReads::Texels {
                    slot.palette_view = palette_view(ctx, &slot.palette)?;
                    slot.device_palette_view = palette_view(ctx, &slot.device_palette)?;
                }
                for (binding, buffer, view) in
                    [(6, &slot.records, &mut slot.records_view), (8, &slot.groups, &mut slot.groups_view)]
                {
                    if is_texel(bindings[binding]) {
                        *view = texel_view(ctx, buffer.raw, buffer.size, TEXEL_FORMATS[binding])?;
                    }
                }
            }
            Ok(())
        })();
        match created {
            Ok(()) => Ok(pass),
            Err(e) => {
                pass.destroy(ctx);
                Err(e)
            }
        }
    }

    /// How this pass blends influences.
    pub fn method(&self) -> SkinningMethod {
        self.shading.method
    }

    /// The method and where DQS splits the matrices.
    pub fn shading(&self) -> InfluenceBlend {
        self.shading
    }

    /// How the shader reads the palette.
    pub fn palette_reads(&self) -> PaletteReads {
        self.palette_reads
    }

    /// Registers a character instance of `model` (uploaded as `gpu`), laid out
    /// after the existing ones. Grows per-slot buffers, retiring the old ones
    /// through `ring` (never freed while a submitted frame may use them).
    /// Call between frames, not between `begin_frame` and `record`.
    pub fn add_character(
        &mut self,
        ctx: &GpuContext,
        ring: &mut FrameRing,
        gpu: Arc<GpuModel>,
        model: Arc<Model>,
    ) -> Result<CharacterId, GpuError> {
        let model_index = match self.models.iter().position(|m| Arc::ptr_eq(&m.gpu, &gpu)) {
            Some(i) => i,
            None => {
                let (sources, influences, morph_ranges, morph_entries) = match self.models.last() {
                    None => (0, 0, 0, 0),
                    Some(last) => (
                        last.sources + last.gpu.counts.sources,
                        last.influences + last.gpu.counts.influences,
                        last.morph_ranges + last.gpu.counts.morph_ranges,
                        last.morph_entries + last.gpu.counts.morph_entries,
                    ),
                };
                for (what, base, more) in [
                    ("source vertices", sources, gpu.counts.sources),
                    ("influences", influences, gpu.counts.influences),
                    ("morph ranges", morph_ranges, gpu.counts.morph_ranges),
                    ("morph entries", morph_entries, gpu.counts.morph_entries),
                ] {
                    base.checked_add(more).ok_or_else(|| GpuError::new(format!("too many {what}")))?;
                }
                self.models.push(ModelEntry {
                    gpu: gpu.clone(),
                    sources,
                    influences,
                    morph_ranges,
                    morph_entries,
                });
                self.models.len() - 1
            }
        };
        let is_new_model = !self.characters.iter().any(|c| Arc::ptr_eq(&c.gpu, &gpu));
        let saved = (self.palette_len, self.weight_len, self.total_vertices, self.records.len());
        let character = match self.layout_character(model_index, &gpu, &model) {
            Ok(c) => c,
            Err(e) => {
                if is_new_model {
                    self.models.pop();
                }
                return Err(e);
            }
        };
        self.characters.push(character);
        self.generation += 1;
        group_records(&self.records, self.total_vertices, WORKGROUP_SIZE, &mut self.group_records);
        self.morph_targets = self.records.iter().any(|r| r.morph_offset != NO_MORPHS);
        let mut result = self.check_ranges(ctx);
        if result.is_ok() && is_new_model && self.models.len() > 1 {
            result = self.rebuild_combined(ctx, ring);
        }
        result = result.and_then(|_| self.ensure_capacity(ctx, ring));
        result = result.and_then(|_| self.sync_stream_views(ctx, ring));
        if let Err(e) = result {
            // Roll back to the previous layout, which the buffers still fit.
            self.characters.pop();
            if is_new_model {
                self.models.pop();
            }
            (self.palette_len, self.weight_len, self.total_vertices) = (saved.0, saved.1, saved.2);
            self.records.truncate(saved.3);
            group_records(&self.records, self.total_vertices, WORKGROUP_SIZE, &mut self.group_records);
            self.morph_targets = self.records.iter().any(|r| r.morph_offset != NO_MORPHS);
            self.slots.iter_mut().for_each(|s| {
                s.held.pop();
                s.records_generation = None;
            });
            // The views must match the streams bound now: a concatenation
            // made before a later step failed stays bound (it holds the
            // remaining models' streams at the same offsets). Should that
            // fail too, a view stays null and `dispatch` says so.
            let _ = self.sync_stream_views(ctx, ring);
            return Err(e);
        }
        Ok(CharacterId(self.characters.len() - 1))
    }

    /// Palette, weight, record and output layout of one more character.
    fn layout_character(
        &mut self,
        model_index: usize,
        gpu: &Arc<GpuModel>,
        model: &Arc<Model>,
    ) -> Result<Character, GpuError> {
        let m = &self.models[model_index];
        let base = (m.sources, m.influences, m.morph_ranges);
        let palette_start = self.palette_len;
        let mut palette = self.palette_len as u64;
        let mut skin_bases = Vec::with_capacity(model.skins.len());
        for skin in &model.skins {
            skin_bases.push(palette as u32);
            palette += skin.joints.len() as u64;
        }
        let mut rigid = Vec::new();
        let weight_base = self.weight_len;
        let weights = weight_base as u64 + model.rest_morph_weights.len() as u64;
        let mut output = self.total_vertices as u64;
        let mut outputs = Vec::new();
        let mut records = Vec::new();
        // Records of earlier characters come first (add_character appends).
        let first_record = self.records.len();
        let mut traffic = (0u64, 0u64);
        for (i, instance) in model.instances.iter().enumerate() {
            let context =
                |e: String| GpuError::new(format!("{}: instance of node {}: {e}", model.file, instance.node));
            let skin_base = match instance.skin {
                Some(s) => Some(*skin_bases.get(s).ok_or_else(|| context(format!("no skin {s}")))?),
                None => None,
            };
            // One palette entry holding the node's world matrix, made on first
            // use: for unskinned instances, and for primitives without joints
            // in a skinned one (they move rigidly with their node, as the CPU
            // reference skins them).
            let mut rigid_entry = None;
            let morph_end = instance.morph_offset as u64 + instance.morph_count as u64;
            if morph_end > model.rest_morph_weights.len() as u64 {
                return Err(context("morph weights outside the pose".into()));
            }
            let first =
                *gpu.mesh_first_primitive.get(instance.mesh).ok_or_else(|| context("no mesh".into()))?;
            for (p, prim) in gpu.mesh_primitives(instance.mesh).iter().enumerate() {
                let (palette_offset, influence_sets) = match (instance.skin, skin_base) {
                    (Some(s), Some(skin_base)) if prim.influence_sets > 0 => {
                        if prim.max_joint as usize >= model.skins[s].joints.len() {
                            return Err(context(format!(
                                "joint {} outside skin {s} of {} joints",
                                prim.max_joint,
                                model.skins[s].joints.len()
                            )));
                        }
                        (skin_base, prim.influence_sets)
                    }
                    _ => {
                        let entry = *rigid_entry.get_or_insert_with(|| {
                            rigid.push((instance.joint, palette as u32));
                            palette += 1;
                            palette as u32 - 1
                        });
                        (entry, 0)
                    }
                };
                if prim.morph_offset != NO_MORPHS && prim.target_count > instance.morph_count {
                    return Err(context(format!(
                        "{} morph targets but {} weights",
                        prim.target_count, instance.morph_count
                    )));
                }
                outputs.push(PrimitiveOutput {
                    instance: i,
                    gpu_primitive: first + p,
                    output_offset: output as u32,
                    vertex_count: prim.vertex_count,
                    // check_ranges bounds the record count far below u32::MAX.
                    record: if prim.vertex_count > 0 {
                        (first_record + records.len()) as u32
                    } else {
                        NO_RECORD
                    },
                });
                if prim.vertex_count > 0 {
                    let vertices = u64::from(prim.vertex_count);
                    // Sources, influence sets, morph ranges and entries in; skinned vertices out.
                    let mut read = vertices * (SOURCE_BYTES + INFLUENCE_BYTES * u64::from(influence_sets));
                    if prim.morph_offset != NO_MORPHS {
                        let ranges = &gpu.morph_ranges_host;
                        let first = prim.morph_offset as usize;
                        let entries = ranges.get(first + prim.vertex_count as usize).zip(ranges.get(first));
                        read += 4 * (vertices + 1)
                            + entries.map_or(0, |(b, a)| u64::from(b - a) * MORPH_ENTRY_BYTES);
                    }
                    traffic.0 += read + 32;
                    traffic.1 += vertices * OUTPUT_STRIDE;
                    records.push(SkinRecord {
                        source_offset: base.0 + prim.source_offset,
                        vertex_count: prim.vertex_count,
                        output_offset: output as u32,
                        palette_offset,
                        influence_offset: base.1 + prim.influence_offset,
                        influence_sets,
                        morph_offset: if prim.morph_offset == NO_MORPHS {
                            NO_MORPHS
                        } else {
                            base.2 + prim.morph_offset
                        },
                        weight_offset: weight_base + instance.morph_offset,
                    });
                }
                output += prim.vertex_count as u64;
            }
        }
        // Output offsets are u32 in the shader; byte sizes must fit too.
        if output * OUTPUT_STRIDE > u32::MAX as u64 || palette > u32::MAX as u64 || weights > u32::MAX as u64
        {
            return Err(GpuError::new(format!("{}: too many vertices or joints to skin", model.file)));
        }
        self.palette_len = palette as u32;
        self.weight_len = weights as u32;
        self.total_vertices = output as u32;
        self.records.extend_from_slice(&records);
        // At most one copy region per character (this one included).
        let regions = self.characters.len() + 1;
        for slot in &mut self.slots {
            slot.held.push(None);
            slot.copies.reserve(regions);
        }
        // Each palette entry and morph weight is read at least once.
        traffic.0 += (palette - u64::from(palette_start)) * 64 + model.rest_morph_weights.len() as u64 * 4;
        Ok(Character {
            gpu: gpu.clone(),
            model: model.clone(),
            palette_range: (palette_start, palette as u32),
            traffic,
            skin_bases,
            rigid,
            weight_base,
            outputs,
        })
    }
}

/// Replaces `view` with a view of `buffer` (just regrown) as `format`
/// texels (see `swap_view`).
fn replace_view(
    ctx: &GpuContext,
    ring: &mut FrameRing,
    view: &mut vk::BufferView,
    buffer: &Buffer,
    format: vk::Format,
) -> Result<(), GpuError> {
    swap_view(ring, view, texel_view(ctx, buffer.raw, buffer.size, format))
}

/// Puts `made` in `view`'s place, retiring the old view through `ring`: a
/// submitted frame may still use it. When the new view could not be made,
/// `view` is left null (`dispatch` then refuses) and the error returned.
fn swap_view(
    ring: &mut FrameRing,
    view: &mut vk::BufferView,
    made: Result<vk::BufferView, GpuError>,
) -> Result<(), GpuError> {
    let old = std::mem::replace(view, *made.as_ref().unwrap_or(&vk::BufferView::null()));
    ring.retire(Retired::Other(Box::new(move |ctx: &GpuContext| {
        // SAFETY: retired views are destroyed after the frames that used
        // them; a null view is ignored.
        unsafe { ctx.device.destroy_buffer_view(old, None) }
    })));
    made.map(|_| ())
}

impl SkinPass {
    /// Makes the texel views of the static streams (`stream_views`) match
    /// the buffers `stream_buffers` now returns, retiring replaced views
    /// through `ring` (a submitted frame may still use them). On failure a
    /// view is left null and `dispatch` refuses.
    fn sync_stream_views(&mut self, ctx: &GpuContext, ring: &mut FrameRing) -> Result<(), GpuError> {
        let (buffers, sizes) = self.stream_buffers_sized().unwrap_or(([vk::Buffer::null(); 4], [0; 4]));
        if buffers == self.stream_views_of {
            return Ok(());
        }
        let mut result = Ok(());
        for binding in 0..4 {
            if !is_texel(self.bindings[binding]) {
                continue;
            }
            let made = if buffers[binding] == vk::Buffer::null() {
                Ok(vk::BufferView::null())
            } else {
                texel_view(ctx, buffers[binding], sizes[binding], TEXEL_FORMATS[binding])
            };
            result = result.and(swap_view(ring, &mut self.stream_views[binding], made));
        }
        self.stream_views_of = buffers;
        result
    }

    /// Concatenates the static streams of every distinct model into pass-owned
    /// buffers (one binding each for the single dispatch), on the GPU.
    fn rebuild_combined(&mut self, ctx: &GpuContext, ring: &mut FrameRing) -> Result<(), GpuError> {
        let last = self.models.last().expect("a model");
        let totals = [
            (last.sources + last.gpu.counts.sources) as u64 * SOURCE_BYTES,
            (last.influences + last.gpu.counts.influences) as u64 * INFLUENCE_BYTES,
            (last.morph_ranges + last.gpu.counts.morph_ranges) as u64 * 4,
            (last.morph_entries + last.gpu.counts.morph_entries) as u64 * MORPH_ENTRY_BYTES,
        ];
        let names = ["skin sources", "skin influences", "skin morph ranges", "skin morph entries"];
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER
            | vk::BufferUsageFlags::TRANSFER_DST;
        let mut made: Vec<Buffer> = Vec::with_capacity(4);
        for (name, size) in names.iter().zip(totals) {
            // At least one texel (see GpuModel::upload), even for an empty stream.
            match Buffer::new(ctx, name, size.max(16), usage, MemoryLocation::GpuOnly) {
                Ok(b) => made.push(b),
                Err(e) => {
                    made.into_iter().for_each(|b| b.destroy(ctx));
                    return Err(e);
                }
            }
        }
        // Morph ranges index morph entries: rebase them on the host.
        let mut ranges: Vec<u32> = Vec::with_capacity((totals[2] / 4) as usize);
        for m in &self.models {
            ranges.extend(m.gpu.morph_ranges_host.iter().map(|r| r + m.morph_entries));
        }
        let staging = Buffer::new(
            ctx,
            "skin morph ranges staging",
            totals[2],
            vk::BufferUsageFlags::TRANSFER_SRC,
            MemoryLocation::CpuToGpu,
        );
        let mut staging = match staging {
            Ok(s) => s,
            Err(e) => {
                made.into_iter().for_each(|b| b.destroy(ctx));
                return Err(e);
            }
        };
        let result = staging.write(0, bytemuck::cast_slice(&ranges)).and_then(|_| {
            immediate::submit_and_wait(ctx, |cmd| {
                for m in &self.models {
                    let parts = [
                        (
                            &m.gpu.sources,
                            m.sources as u64 * SOURCE_BYTES,
                            m.gpu.counts.sources as u64 * SOURCE_BYTES,
                        ),
                        (
                            &m.gpu.influences,
                            m.influences as u64 * INFLUENCE_BYTES,
                            m.gpu.counts.influences as u64 * INFLUENCE_BYTES,
                        ),
                        (
                            &m.gpu.morph_entries,
                            m.morph_entries as u64 * MORPH_ENTRY_BYTES,
                            m.gpu.counts.morph_entries as u64 * MORPH_ENTRY_BYTES,
                        ),
                    ];
                    for ((src, offset, size), dst) in parts.into_iter().zip([0, 1, 3]) {
                        if size > 0 {
                            let region = vk::BufferCopy { src_offset: 0, dst_offset: offset, size };
                            // SAFETY: live buffers, region inside both (sizes from the counts).
                            unsafe { ctx.device.cmd_copy_buffer(cmd, src.raw, made[dst].raw, &[region]) };
                        }
                    }
                }
                if !ranges.is_empty() {
                    let region = vk::BufferCopy { src_offset: 0, dst_offset: 0, size: totals[2] };
                    // SAFETY: as above.
                    unsafe { ctx.device.cmd_copy_buffer(cmd, staging.raw, made[2].raw, &[region]) };
                }
                // The model buffers' own upload barrier already made their
                // contents visible to transfers. These copies must be visible to
                // the compute shader (compute skinning) and the vertex shader
                // (vertex skinning, `vertex_skinning_buffers`) of every later
                // frame on this queue; a barrier covers later submissions too
                // (and the host also waits).
                // skin.comp reads them as uniform texel buffers (sampled
                // reads), skin_storage.comp and the vertex path as storage.
                barrier::record_global(ctx, cmd, &[Access::CopyWrite], SKINNING_READS);
            })
        });
        staging.destroy(ctx);
        if let Err(e) = result {
            made.into_iter().for_each(|b| b.destroy(ctx));
            return Err(e);
        }
        let mut it = made.into_iter();
        let mut next = || it.next().expect("four buffers");
        let new = [next(), next(), next(), next()];
        if let Some(old) = self.combined.replace(new) {
            // Frames already submitted may still read the old concatenation.
            for b in old {
                ring.retire(Retired::Buffer(b));
            }
        }
        Ok(())
    }

    /// Every storage buffer is bound whole: each must fit `maxStorageBufferRange`.
    fn check_ranges(&self, ctx: &GpuContext) -> Result<(), GpuError> {
        let limit = ctx.properties.limits.max_storage_buffer_range as u64;
        let last = self.models.last().expect("a model");
        let sizes = [
            ("source vertices", (last.sources + last.gpu.counts.sources) as u64 * SOURCE_BYTES),
            ("influences", (last.influences + last.gpu.counts.influences) as u64 * INFLUENCE_BYTES),
            ("morph ranges", (last.morph_ranges + last.gpu.counts.morph_ranges) as u64 * 4),
            (
                "morph entries",
                (last.morph_entries + last.gpu.counts.morph_entries) as u64 * MORPH_ENTRY_BYTES,
            ),
            ("palette", self.palette_len as u64 * 64),
            ("morph weights", self.weight_len as u64 * 4),
            ("skin records", self.records.len() as u64 * 32),
            ("workgroup records", self.group_records.len() as u64 * 4),
            ("skinned output", self.total_vertices as u64 * OUTPUT_STRIDE),
        ];
        match sizes.iter().find(|(_, size)| *size > limit) {
            Some((what, size)) => Err(GpuError::new(format!(
                "skin pass: {what} need {size} bytes, more than the device's maxStorageBufferRange {limit}"
            ))),
            None if self.palette_reads == PaletteReads::Storage => Ok(()),
            None => {
                // skin.comp reads these as texels (`TEXEL_FORMATS`): (index
                // into `sizes`, binding).
                let max = u64::from(ctx.properties.limits.max_texel_buffer_elements);
                let texel_reads = [(0, 0), (1, 1), (4, 5), (6, 6), (7, 8)];
                for (i, binding) in texel_reads {
                    let (what, size) = sizes[i];
                    let texels = size / texel_bytes(TEXEL_FORMATS[binding]);
                    if texels > max {
                        return Err(GpuError::new(format!(
                            "skin pass: {what} need {texels} texels, more than the device's \
                             maxTexelBufferElements {max}"
                        )));
                    }
                }
                Ok(())
            }
        }
    }

    /// Grows every slot's buffers to the current layout; replaced buffers are
    /// retired through the ring (a submitted frame may still use them).
    fn ensure_capacity(&mut self, ctx: &GpuContext, ring: &mut FrameRing) -> Result<(), GpuError> {
        let palette = self.palette_len as u64 * 64;
        let weights = self.weight_len as u64 * 4;
        let records = self.records.len() as u64 * 32;
        let groups = self.group_records.len() as u64 * 4;
        let output = self.total_vertices as u64 * OUTPUT_STRIDE;
        let limit = ctx.properties.limits.max_storage_buffer_range as u64;
        for (i, slot) in self.slots.iter_mut().enumerate() {
            let grow = |ctx: &GpuContext,
                        ring: &mut FrameRing,
                        buffer: &mut Buffer,
                        needed: u64,
                        what: &str,
                        usage: vk::BufferUsageFlags,
                        location: MemoryLocation|
             -> Result<bool, GpuError> {
                if buffer.size >= needed {
                    return Ok(false);
                }
                // Headroom so that adding characters one by one does not
                // reallocate every time, but never past the storage range
                // limit (check_ranges made sure `needed` fits).
                let size = needed.max((buffer.size.saturating_mul(3) / 2).min(limit));
                let new = Buffer::new(ctx, &format!("skin slot {i} {what}"), size, usage, location)?;
                ring.retire(Retired::Buffer(std::mem::replace(buffer, new)));
                Ok(true)
            };
            let cpu = MemoryLocation::CpuToGpu;
            let regrown = grow(ctx, ring, &mut slot.palette, palette, "palette", PALETTE_USAGE, cpu)?;
            let texels = self.palette_reads == PaletteReads::Texels;
            if regrown && texels {
                replace_view(ctx, ring, &mut slot.palette_view, &slot.palette, PALETTE_TEXEL_FORMAT)?;
            }
            let gpu = MemoryLocation::GpuOnly;
            let device = &mut slot.device_palette;
            let device_regrown =
                grow(ctx, ring, device, palette, "device palette", DEVICE_PALETTE_USAGE, gpu)?;
            if device_regrown && texels {
                let view = &mut slot.device_palette_view;
                replace_view(ctx, ring, view, &slot.device_palette, PALETTE_TEXEL_FORMAT)?;
            }
            let mut lost = regrown | device_regrown;
            lost |= grow(ctx, ring, &mut slot.weights, weights, "weights", HOST_USAGE, cpu)?;
            if lost {
                // The new buffers hold no pose yet.
                slot.held.iter_mut().for_each(|h| *h = None);
            }
            let records_regrown = grow(ctx, ring, &mut slot.records, records, "records", HOST_USAGE, cpu)?;
            let groups_regrown = grow(ctx, ring, &mut slot.groups, groups, "group records", HOST_USAGE, cpu)?;
            if records_regrown | groups_regrown {
                slot.records_generation = None;
            }
            grow(ctx, ring, &mut slot.output, output, "output", output_usage(), MemoryLocation::GpuOnly)?;
            for (binding, regrown, buffer, view) in [
                (6, records_regrown, &slot.records, &mut slot.records_view),
                (8, groups_regrown, &slot.groups, &mut slot.groups_view),
            ] {
                if regrown && is_texel(self.bindings[binding]) {
                    replace_view(ctx, ring, view, buffer, TEXEL_FORMATS[binding])?;
                }
            }
        }
        Ok(())
    }

    /// Records this frame's skinning into `slot`: `upload`s changed poses,
    /// dispatches once, and records the barrier that makes the output
    /// readable by vertex input, vertex shaders and transfers later in the
    /// same command buffer. Character `c` of `inputs` is `CharacterId(c)`.
    /// Allocates nothing on the heap.
    pub fn record<P: FramePoses + ?Sized>(
        &mut self,
        ctx: &GpuContext,
        slot: &mut FrameSlot,
        inputs: &P,
        timestamps: bool,
    ) -> Result<SkinStats, GpuError> {
        let mut stats = self.upload(slot, inputs)?;
        self.record_copies(ctx, slot, timestamps, &mut stats);
        self.dispatch(ctx, slot, timestamps, &mut stats)?;
        Ok(stats)
    }

    /// How palettes reach the GPU (see `PaletteUpload`).
    pub fn upload_mode(&self) -> PaletteUpload {
        self.upload_mode
    }

    /// Switches the palette upload mode (between frames). Every slot then
    /// rewrites every palette once: the buffer the shaders read changes.
    pub fn set_upload_mode(&mut self, mode: PaletteUpload) {
        if mode != self.upload_mode {
            self.upload_mode = mode;
            self.slots.iter_mut().for_each(|s| s.held.iter_mut().for_each(|h| *h = None));
        }
    }

    /// Records the staging copies that `upload` queued into `slot` (staged
    /// modes; nothing in `InPlace` or when nothing changed) and the barrier
    /// that makes them visible to the skinning shaders. `record` calls it;
    /// the vertex-skinning path calls it after `upload`. Fills in
    /// `stats.copy_timestamps`. Allocates nothing on the heap.
    ///
    /// Synchronisation: the host wrote the staging range before the submit
    /// (visible to the copy); the copy overwrites this slot's device-local
    /// palette, whose last readers were this slot's previous frame (finished:
    /// its fence was waited in `begin_frame`). The barrier orders the copy's
    /// writes before this frame's compute and vertex shader reads.
    pub fn record_copies(
        &mut self,
        ctx: &GpuContext,
        slot: &mut FrameSlot,
        timestamps: bool,
        stats: &mut SkinStats,
    ) {
        let buffers = &mut self.slots[slot.index];
        if buffers.copies.is_empty() {
            return;
        }
        let cmd = slot.command_buffer;
        let before = if timestamps { slot.write_timestamp(ctx, vk::PipelineStageFlags2::COPY) } else { None };
        // SAFETY: recording command buffer; both buffers are live until this
        // slot's fence and every region lies inside both (palette ranges of
        // registered characters, which both buffers hold).
        unsafe {
            ctx.device.cmd_copy_buffer(cmd, buffers.palette.raw, buffers.device_palette.raw, &buffers.copies);
        }
        // skin.comp reads the palette as a uniform texel buffer (a sampled
        // read), skin_storage.comp and the vertex path as a storage buffer.
        barrier::record_global(ctx, cmd, &[Access::CopyWrite], SKINNING_READS);
        let after = if timestamps { slot.write_timestamp(ctx, vk::PipelineStageFlags2::COPY) } else { None };
        stats.copy_timestamps = before.zip(after);
        buffers.copies.clear();
    }

    /// Writes this frame's inputs into `slot`'s own buffers without
    /// recording anything: the palettes and morph weights of every character
    /// (in `PaletteUpload::Dirty`, only of those whose `version` differs from
    /// what the slot holds), and the skin records when the layout changed
    /// since the slot last held them; in the staged modes it queues the
    /// copies `record_copies` records. Character `c` of `inputs` is
    /// `CharacterId(c)`. `record` calls it; the vertex-skinning path calls it
    /// and `record_copies` (then binds `vertex_skinning_buffers`). In `Dirty`
    /// mode a second call in the same frame with the same versions writes
    /// and counts nothing. Call after `FrameRing::begin_frame` returned `slot`, before
    /// the frame is submitted. Allocates nothing on the heap.
    pub fn upload<P: FramePoses + ?Sized>(
        &mut self,
        slot: &FrameSlot,
        inputs: &P,
    ) -> Result<SkinStats, GpuError> {
        if inputs.count() != self.characters.len() {
            return Err(GpuError::new(format!(
                "skin pass: {} inputs for {} characters",
                inputs.count(),
                self.characters.len()
            )));
        }
        let mut stats = SkinStats::default();
        let started = std::time::Instant::now();
        let mode = self.upload_mode;
        // DqsSplit::Cpu: each skin joint is split here, once per upload,
        // instead of once per influence of every vertex in the shader.
        let dual_quaternions = self.shading.palette_holds_dual_quaternions();
        let buffers = &mut self.slots[slot.index];
        buffers.copies.clear();
        // Host writes into HOST_COHERENT mapped memory, before the submit that
        // reads them: vkQueueSubmit makes them visible to the device (to the
        // compute shader and to the vertex shader alike). The previous reader
        // of this slot's buffers finished (its fence was waited in
        // begin_frame), so overwriting them is safe.
        if buffers.records_generation != Some(self.generation) {
            buffers.records.write(0, bytemuck::cast_slice(&self.records))?;
            buffers.groups.write(0, bytemuck::cast_slice(&self.group_records))?;
            buffers.records_generation = Some(self.generation);
        }
        for (c, character) in self.characters.iter().enumerate() {
            let input = inputs.input(c);
            if mode.skips_unchanged() && buffers.held[c] == Some(input.version) {
                continue;
            }
            let pose = input.pose;
            for (s, (&base, skin)) in character.skin_bases.iter().zip(&character.model.skins).enumerate() {
                let palette = pose.palette(s);
                if palette.len() != skin.joints.len() {
                    return Err(GpuError::new(format!(
                        "skin pass: character {c} skin {s}: palette of {} for {} joints",
                        palette.len(),
                        skin.joints.len()
                    )));
                }
                if dual_quaternions {
                    for (i, skin) in palette.iter().enumerate() {
                        let entry = PaletteDualQuat::from_bone(skin);
                        buffers.palette.write((base as u64 + i as u64) * 64, bytemuck::bytes_of(&entry))?;
                    }
                } else {
                    buffers.palette.write(base as u64 * 64, bytemuck::cast_slice(palette))?;
                }
                stats.palette_bytes_written += palette.len() as u64 * 64;
            }
            let world = pose.world;
            for &(joint, index) in &character.rigid {
                let m = world.get(joint as usize).ok_or_else(|| {
                    GpuError::new(format!("skin pass: character {c}: no world matrix for joint {joint}"))
                })?;
                let entry = BoneMatrix::from_matrix(m);
                buffers.palette.write(index as u64 * 64, bytemuck::bytes_of(&entry))?;
                stats.palette_bytes_written += 64;
            }
            let weights = pose.morph_weights;
            if weights.len() != character.model.rest_morph_weights.len() {
                return Err(GpuError::new(format!(
                    "skin pass: character {c}: {} morph weights, the model has {}",
                    weights.len(),
                    character.model.rest_morph_weights.len()
                )));
            }
            let bytes: &[u8] = bytemuck::cast_slice(weights);
            buffers.weights.write(character.weight_base as u64 * 4, bytes)?;
            stats.weight_bytes_written += bytes.len() as u64;
            buffers.held[c] = Some(input.version);
            let (start, end) = character.palette_range;
            if mode.staged() && end > start {
                let (offset, size) = (start as u64 * 64, (end - start) as u64 * 64);
                // Consecutive characters' ranges are adjacent: one region.
                match buffers.copies.last_mut() {
                    Some(last) if last.src_offset + last.size == offset => last.size += size,
                    _ => buffers.copies.push(vk::BufferCopy { src_offset: offset, dst_offset: offset, size }),
                }
            }
        }
        stats.write_ns = started.elapsed().as_nanos() as u64;
        Ok(stats)
    }

    /// The static streams bound at set 0 bindings 0..=3 (sources, influences,
    /// morph ranges, morph entries): the pass's concatenation when several
    /// models are registered, else the one model's own buffers (record
    /// offsets are relative to whichever is bound). `None` before the first
    /// character.
    fn stream_buffers(&self) -> Option<[vk::Buffer; 4]> {
        self.stream_buffers_sized().map(|(buffers, _)| buffers)
    }

    /// `stream_buffers` and their byte sizes.
    fn stream_buffers_sized(&self) -> Option<([vk::Buffer; 4], [u64; 4])> {
        let bound = match (&self.combined, self.models.first()) {
            (Some(c), _) => [&c[0], &c[1], &c[2], &c[3]],
            (None, Some(m)) => {
                let g = &m.gpu;
                [&g.sources, &g.influences, &g.morph_ranges, &g.morph_entries]
            }
            (None, None) => return None,
        };
        Some((bound.map(|b| b.raw), bound.map(|b| b.size)))
    }

    /// Set 0 of shaders/common.glsl for slot `slot_index`
    /// (`FrameSlot::index`), bindings 0..=6 in order: sources, influences,
    /// morph ranges, morph entries (the streams the records index, see
    /// `stream_buffers`), then this slot's morph weights, palette and skin
    /// records, each bound whole. For the vertex-skinning draw of the frame
    /// that `upload`ed into that slot; the draw of primitive `o` uses record
    /// `o.record`. The handles change when characters are added. `None`
    /// before the first character is added.
    pub fn vertex_skinning_buffers(&self, slot_index: usize) -> Option<[vk::DescriptorBufferInfo; 7]> {
        let [sources, influences, ranges, entries] = self.stream_buffers()?;
        let b = &self.slots[slot_index];
        let palette = if self.upload_mode.staged() { b.device_palette.raw } else { b.palette.raw };
        let bound = [sources, influences, ranges, entries, b.weights.raw, palette, b.records.raw];
        Some(bound.map(|buffer| vk::DescriptorBufferInfo { buffer, offset: 0, range: vk::WHOLE_SIZE }))
    }

    /// Dispatches the skinning of everything `upload`ed into `slot` and
    /// records the barrier after it; fills in `stats`' dispatch fields.
    fn dispatch(
        &self,
        ctx: &GpuContext,
        slot: &mut FrameSlot,
        timestamps: bool,
        stats: &mut SkinStats,
    ) -> Result<(), GpuError> {
        if self.total_vertices == 0 || self.records.is_empty() {
            return Ok(());
        }
        let Some([sources, influences, ranges, entries]) = self.stream_buffers() else {
            return Ok(());
        };
        let buffers = &self.slots[slot.index];
        let palette =
            if self.upload_mode.staged() { buffers.device_palette.raw } else { buffers.palette.raw };
        let palette_view =
            if self.upload_mode.staged() { buffers.device_palette_view } else { buffers.palette_view };
        let bindings = &self.bindings;
        let [v0, v1, v2, v3] = self.stream_views;
        let views = [
            v0,
            v1,
            v2,
            v3,
            vk::BufferView::null(),
            palette_view,
            buffers.records_view,
            vk::BufferView::null(),
            buffers.groups_view,
        ];
        if let Some(b) = (0..9).find(|&b| is_texel(bindings[b]) && views[b] == vk::BufferView::null()) {
            return Err(GpuError::new(format!(
                "skin pass: no texel view for binding {b} (its creation failed)"
            )));
        }
        let bound = [
            sources,
            influences,
            ranges,
            entries,
            buffers.weights.raw,
            palette,
            buffers.records.raw,
            buffers.output.raw,
            buffers.groups.raw,
        ];
        let d = &ctx.device;
        // Without morph targets in the scene, the pipeline without their code.
        let compute = if self.morph_targets { &self.compute } else { &self.compute_without_morphs };
        let layouts = [compute.set_layout];
        let info = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(slot.descriptor_pool)
            .set_layouts(&layouts);
        let mut set = vk::DescriptorSet::null();
        // SAFETY: one set for one layout into `set`; the pool is this slot's, reset
        // by begin_frame after the slot's fence. The raw entry point avoids the Vec
        // that ash's wrapper returns (no heap allocation per frame).
        unsafe { (d.fp_v1_0().allocate_descriptor_sets)(d.handle(), &info, &mut set) }
            .result()
            .call("vkAllocateDescriptorSets")?;
        let infos: [vk::DescriptorBufferInfo; 9] = std::array::from_fn(|i| vk::DescriptorBufferInfo {
            buffer: bound[i],
            offset: 0,
            range: vk::WHOLE_SIZE,
        });
        let writes: [vk::WriteDescriptorSet; 9] = std::array::from_fn(|i| {
            let write = vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(i as u32)
                .descriptor_type(bindings[i]);
            if is_texel(bindings[i]) {
                write.texel_buffer_view(std::slice::from_ref(&views[i]))
            } else {
                write.buffer_info(std::slice::from_ref(&infos[i]))
            }
        });
        let push = Push { record_count: self.records.len() as u32, total_vertices: self.total_vertices };
        let (groups_x, groups_y) = ComputePipeline::grid(ctx, self.total_vertices.div_ceil(WORKGROUP_SIZE));
        let cmd = slot.command_buffer;
        let before =
            if timestamps { slot.write_timestamp(ctx, vk::PipelineStageFlags2::TOP_OF_PIPE) } else { None };
        // SAFETY: the set is fresh and unused; every bound buffer is live and
        // stays alive until this slot's fence (replaced ones are retired).
        // The command buffer is recording (begin_frame).
        unsafe {
            d.update_descriptor_sets(&writes, &[]);
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, compute.pipeline);
            d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, compute.layout, 0, &[set], &[]);
            d.cmd_push_constants(
                cmd,
                compute.layout,
                vk::ShaderStageFlags::COMPUTE,
                0,
                bytemuck::bytes_of(&push),
            );
            d.cmd_dispatch(cmd, groups_x, groups_y, 1);
        }
        // The draw (vertex input of the output as a vertex buffer, or storage
        // reads in a vertex shader) and readback copies later in this command
        // buffer must see the dispatch's writes: compute write -> those stages
        // and accesses. A global memory barrier is enough (one queue, one
        // command buffer); a buffer barrier would add nothing on this queue.
        // Nothing else needs ordering here: the writes cannot race an earlier
        // frame's reads, because every slot has its own output (frame N+1 and
        // frame N touch different buffers) and a slot is reused only after its
        // fence. Frame-begin writes by the host are covered by the submit.
        barrier::record_global(
            ctx,
            cmd,
            &[Access::ComputeShaderWrite],
            &[Access::VertexBufferRead, Access::VertexShaderStorageRead, Access::TransferRead],
        );
        let after = if timestamps {
            slot.write_timestamp(ctx, vk::PipelineStageFlags2::COMPUTE_SHADER)
        } else {
            None
        };
        stats.timestamps = before.zip(after);
        stats.vertices = self.total_vertices as u64;
        stats.dispatches = 1;
        Ok(())
    }

    /// The output buffer of frame slot `slot_index` (`FrameSlot::index`):
    /// `SkinnedVertex` per vertex (48-byte stride: position vec4, normal vec4,
    /// tangent vec4), scene space. Bind it as a vertex buffer in the frame
    /// that recorded the skinning into that slot. The handle changes when
    /// characters are added.
    pub fn output_buffer(&self, slot_index: usize) -> vk::Buffer {
        self.slots[slot_index].output.raw
    }

    /// Where each primitive of each mesh instance of `character` lands in the
    /// output, in `Model::instances` order then primitive order.
    pub fn outputs(&self, character: CharacterId) -> &[PrimitiveOutput] {
        &self.characters[character.0].outputs
    }

    /// First output vertex of primitive `primitive` (index into
    /// `Mesh::primitives`) of instance `instance` (index into `Model::instances`).
    pub fn output_offset(&self, character: CharacterId, instance: usize, primitive: usize) -> Option<u32> {
        let c = self.characters.get(character.0)?;
        let first = c.outputs.iter().position(|o| o.instance == instance)?;
        let o = c.outputs.get(first + primitive).filter(|o| o.instance == instance)?;
        Some(o.output_offset)
    }

    /// The GPU streams (index buffer, UVs, per-primitive info) of `character`.
    pub fn gpu_model(&self, character: CharacterId) -> &Arc<GpuModel> {
        &self.characters[character.0].gpu
    }

    /// The imported model of `character`.
    pub fn model(&self, character: CharacterId) -> &Arc<Model> {
        &self.characters[character.0].model
    }

    /// Registered characters.
    pub fn character_count(&self) -> usize {
        self.characters.len()
    }

    /// Bytes the skinning dispatch reads and writes per frame, all characters:
    /// `(read, written)`. Read: source vertices, influence sets, morph
    /// ranges and entries, records, and each palette entry and morph weight
    /// once (caches serve the repeats). Written: the skinned vertices.
    pub fn frame_traffic(&self) -> (u64, u64) {
        self.characters.iter().fold((0, 0), |(r, w), c| (r + c.traffic.0, w + c.traffic.1))
    }

    /// Output vertices per frame (all characters).
    pub fn total_vertices(&self) -> u32 {
        self.total_vertices
    }

    /// Destroys the pass's objects; the caller waited for the GPU (e.g.
    /// `FrameRing::wait_all`). The `GpuModel`s are the caller's.
    pub fn destroy(self, ctx: &GpuContext) {
        for slot in self.slots {
            // SAFETY: the caller waited for the GPU; null views are ignored.
            unsafe {
                for view in [slot.palette_view, slot.device_palette_view, slot.records_view, slot.groups_view]
                {
                    ctx.device.destroy_buffer_view(view, None);
                }
            }
            for b in [slot.palette, slot.device_palette, slot.weights, slot.records, slot.groups, slot.output]
            {
                b.destroy(ctx);
            }
        }
        for view in self.stream_views {
            // SAFETY: as above.
            unsafe { ctx.device.destroy_buffer_view(view, None) };
        }
        if let Some(c) = self.combined {
            c.into_iter().for_each(|b| b.destroy(ctx));
        }
        self.compute.destroy(ctx);
        self.compute_without_morphs.destroy(ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(texels: u32, storage_range: u32) -> vk::PhysicalDeviceLimits {
        vk::PhysicalDeviceLimits {
            max_texel_buffer_elements: texels,
            max_storage_buffer_range: storage_range,
            ..Default::default()
        }
    }

    #[test]
    fn texel_formats_tile_the_shader_layouts() {
        // shaders/common.glsl and skin_main.glsl fetch these many texels per
        // element: a source three, an influence one, a matrix four (rows),
        // a record two, a workgroup record one.
        let per_element = [
            (0, SOURCE_BYTES, 3),
            (1, INFLUENCE_BYTES, 1),
            (5, std::mem::size_of::<BoneMatrix>() as u64, 4),
            (6, std::mem::size_of::<SkinRecord>() as u64, 2),
            (8, 4, 1),
        ];
        assert_eq!(per_element.map(|(b, _, _)| b), TEXEL_BINDINGS);
        for (binding, bytes, texels) in per_element {
            assert_eq!(texel_bytes(TEXEL_FORMATS[binding]) * texels, bytes, "binding {binding}");
        }
        let types = PaletteReads::Texels.bindings();
        for (binding, ty) in types.iter().enumerate() {
            assert_eq!(is_texel(*ty), TEXEL_BINDINGS.contains(&binding), "binding {binding}");
            assert_eq!(TEXEL_FORMATS[binding] != vk::Format::UNDEFINED, is_texel(*ty), "binding {binding}");
        }
        assert!(PaletteReads::Storage.bindings().iter().all(|t| *t == vk::DescriptorType::STORAGE_BUFFER));
    }

    #[test]
    fn texels_only_where_the_texel_limit_caps_no_real_scene() {
        // lavapipe, NVIDIA, Intel: 2^27 texels, 128 MiB to 4 GiB of storage range.
        assert_eq!(PaletteReads::for_device(&limits(1 << 27, 128 << 20)), PaletteReads::Texels);
        assert_eq!(PaletteReads::for_device(&limits(u32::MAX, u32::MAX)), PaletteReads::Texels);
        assert_eq!(PaletteReads::for_device(&limits(1 << 27, u32::MAX)), PaletteReads::Texels);
        // Vulkan's minimum texel limit against a 128 MiB range: storage.
        assert_eq!(PaletteReads::for_device(&limits(65_536, 128 << 20)), PaletteReads::Storage);
        assert_eq!(PaletteReads::for_device(&limits((1 << 27) - 1, u32::MAX)), PaletteReads::Storage);
    }
}
