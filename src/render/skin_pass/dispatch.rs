//! The skinning pipelines (skin.comp or skin_storage.comp, with and without
//! morph-target code) and the one dispatch per frame: its descriptor set
//! from the slot's pool, the dispatch, and the barrier that makes the
//! output visible to vertex input, vertex shaders and transfers. It never
//! writes a buffer's contents; what the dispatch reads was uploaded first.

use super::palette_reads::{OUTPUT_BINDING, PaletteReads, is_texel};
use super::upload::FrameLevels;
use super::{SkinPass, SkinStats, WORKGROUP_SIZE};
use crate::gpu::barrier::{self, Access};
use crate::gpu::error::VkResultExt;
use crate::gpu::pipeline::ComputePipeline;
use crate::gpu::{FrameSlot, GpuContext, GpuError};
use crate::render::frame_settings::InfluenceBlend;
use crate::render::skinning;
use ash::vk;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Push {
    record_count: u32,
    total_vertices: u32,
    /// The window's first workgroup and its workgroup count.
    first_group: u32,
    group_count: u32,
    /// The palette skin_storage.comp reads by pointer (0 for skin.comp).
    palette_address: vk::DeviceAddress,
    /// Where the record buffer holds the level tables and the frame's
    /// level per character, and how many characters have one (0: skin
    /// every vertex) (`upload::FrameLevels`).
    level_words: u32,
    frame_levels: u32,
    level_characters: u32,
    /// Keeps the struct free of implicit padding (`Pod`).
    _padding: u32,
}

/// `MORPH_TARGETS` (shaders/common.glsl): a skin.comp specialization
/// constant after the skinning ones (`skinning::SPECIALIZATION_ENTRIES`).
const MORPH_TARGETS_ID: u32 = 8;

/// The test-only switch that makes the skin pass slower (see `guide::testing`).
const SLOW_SKIN: &str = "VKSKIN_TEST_SLOW_SKIN";

/// The most dispatches `VKSKIN_TEST_SLOW_SKIN` may ask for.
const MAX_SLOW_SKIN: u32 = 1000;

/// How many times each frame records the skin dispatch: 1, or K (at most
/// [`MAX_SLOW_SKIN`]) under the test-only `VKSKIN_TEST_SLOW_SKIN=K`, which
/// baseline tests use to make a run whose skin pass is slower for sure.
/// Read once per process; says so on stderr when it is on.
fn slow_skin_repeats() -> u32 {
    static REPEATS: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *REPEATS.get_or_init(|| {
        let k = std::env::var(SLOW_SKIN).ok().and_then(|v| v.trim().parse::<u32>().ok());
        let k = k.unwrap_or(1).clamp(1, MAX_SLOW_SKIN);
        if k > 1 {
            eprintln!("vkskin: test: the skin dispatch is recorded {k} times ({SLOW_SKIN})");
        }
        k
    })
}

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

/// The pass's two pipelines: blending as `shading`, reading as `reads`.
pub(super) struct SkinPipelines {
    /// With the morph-target code.
    pub(super) compute: ComputePipeline,
    /// The same with `MORPH_TARGETS` false (shaders/common.glsl): dispatched
    /// while no record has morph targets.
    pub(super) compute_without_morphs: ComputePipeline,
}

impl SkinPipelines {
    /// Builds both; on error nothing is left behind.
    pub(super) fn new(
        ctx: &GpuContext,
        shading: InfluenceBlend,
        reads: PaletteReads,
    ) -> Result<Self, GpuError> {
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
        match pipeline(false) {
            Ok(compute_without_morphs) => Ok(SkinPipelines { compute, compute_without_morphs }),
            Err(e) => {
                compute.destroy(ctx);
                Err(e)
            }
        }
    }

    /// Frees both; the caller waited for the GPU.
    pub(super) fn destroy(self, ctx: &GpuContext) {
        self.compute.destroy(ctx);
        self.compute_without_morphs.destroy(ctx);
    }
}

/// What set 0 of one dispatch binds: each binding's buffer, and its texel
/// view where the binding is a texel buffer (else null); and the palette
/// the shader reaches by pointer (skin_storage.comp).
struct BoundSet {
    buffers: [vk::Buffer; 9],
    views: [vk::BufferView; 9],
    palette_address: vk::DeviceAddress,
}

impl SkinPass {
    /// Dispatches the skinning of everything `upload`ed into `slot`, at
    /// the detail `levels` written there, and records the barrier after
    /// it; fills in `stats`' dispatch fields.
    pub(super) fn dispatch(
        &self,
        ctx: &GpuContext,
        slot: &mut FrameSlot,
        levels: FrameLevels,
        timestamps: bool,
        stats: &mut SkinStats,
    ) -> Result<(), GpuError> {
        let total_vertices = self.layout.total_vertices();
        if total_vertices == 0 || self.layout.records().is_empty() {
            return Ok(());
        }
        let Some(bound) = self.bound_set(ctx, slot.index)? else {
            return Ok(());
        };
        // Without morph targets in the scene, the pipeline without their code.
        let p = &self.pipelines;
        let compute = if self.layout.morph_targets() { &p.compute } else { &p.compute_without_morphs };
        let windows = self.output_windows();
        let window_groups = windows.vertices / WORKGROUP_SIZE;
        let total_groups = total_vertices.div_ceil(WORKGROUP_SIZE);
        let (d, cmd) = (&ctx.device, slot.command_buffer);
        ctx.begin_region(cmd, c"skin dispatch");
        let before =
            if timestamps { slot.write_timestamp(ctx, vk::PipelineStageFlags2::TOP_OF_PIPE) } else { None };
        // SAFETY: the command buffer is recording (begin_frame).
        unsafe { d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, compute.pipeline) };
        let repeats = slow_skin_repeats();
        for repeat in 0..repeats {
            if repeat > 0 {
                // Test-only: the same dispatches again, after a barrier ordering
                // their writes of the output after the previous ones'
                // (write-after-write); they read nothing the dispatches write.
                barrier::record_global(
                    ctx,
                    cmd,
                    &[Access::ComputeShaderWrite],
                    &[Access::ComputeShaderWrite],
                );
            }
            // One dispatch per window of the output. They write disjoint
            // ranges and read only what the host and the stream uploads
            // wrote, so no barrier goes between them.
            for k in 0..windows.count {
                let first_group = k * window_groups;
                let group_count = window_groups.min(total_groups - first_group);
                let output = self.slots[slot.index].output[k as usize].raw;
                let set = self.write_set(ctx, slot.descriptor_pool, compute.set_layout, &bound, output)?;
                let push = Push {
                    record_count: self.layout.records().len() as u32,
                    total_vertices,
                    first_group,
                    group_count,
                    palette_address: bound.palette_address,
                    level_words: levels.level_words,
                    frame_levels: levels.first_word,
                    level_characters: levels.characters,
                    _padding: 0,
                };
                let (groups_x, groups_y) = ComputePipeline::grid(ctx, group_count);
                // SAFETY: the set is fresh and written; every bound buffer is
                // live and stays alive until this slot's fence (replaced ones
                // are retired). The pipeline is bound above.
                unsafe {
                    let layout = compute.layout;
                    d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, layout, 0, &[set], &[]);
                    let bytes = bytemuck::bytes_of(&push);
                    d.cmd_push_constants(cmd, layout, vk::ShaderStageFlags::COMPUTE, 0, bytes);
                    d.cmd_dispatch(cmd, groups_x, groups_y, 1);
                }
            }
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
        ctx.end_region(cmd);
        stats.timestamps = before.zip(after);
        stats.vertices = total_vertices as u64;
        stats.dispatches = repeats * windows.count;
        Ok(())
    }

    /// Set 0 of slot `slot_index`'s dispatch: the static streams, then the
    /// slot's weights, palette (the one the shaders read in this upload
    /// mode; as texels, or by pointer), records and workgroup records; and
    /// the output's address. `None` before the first character; an error
    /// when a texel binding lacks its view (its creation failed).
    fn bound_set(&self, ctx: &GpuContext, slot_index: usize) -> Result<Option<BoundSet>, GpuError> {
        let Some(([sources, influences, ranges, entries], _)) = self.streams.bound(&self.models) else {
            return Ok(None);
        };
        let b = &self.slots[slot_index];
        let staged = self.reads_device_palette();
        let (palette, palette_view) = b.read_palette(staged);
        let [v0, v1, v2, v3] = self.streams.views();
        let null = vk::BufferView::null();
        let views = [v0, v1, v2, v3, null, palette_view, b.records_view, null, b.groups_view];
        let bindings = &self.bindings;
        if let Some(binding) = (0..9).find(|&i| is_texel(bindings[i]) && views[i] == null) {
            return Err(GpuError::new(format!(
                "skin pass: no texel view for binding {binding} (its creation failed)"
            )));
        }
        let buffers = [
            sources,
            influences,
            ranges,
            entries,
            b.weights.raw,
            palette,
            b.records.raw,
            vk::Buffer::null(), // each window's own, in `write_set`
            b.groups.raw,
        ];
        let palette_address = match self.palette_reads {
            PaletteReads::Storage => b.read_palette_buffer(staged).device_address(ctx),
            PaletteReads::Texels => 0,
        };
        Ok(Some(BoundSet { buffers, views, palette_address }))
    }

    /// A descriptor set of `set_layout` from `pool` (the slot's, reset by
    /// begin_frame after the slot's fence), written with `bound`: each
    /// binding in the set, its buffer whole or its texel view, and one
    /// window's `output` buffer (whole: within maxStorageBufferRange).
    fn write_set(
        &self,
        ctx: &GpuContext,
        pool: vk::DescriptorPool,
        set_layout: vk::DescriptorSetLayout,
        bound: &BoundSet,
        output: vk::Buffer,
    ) -> Result<vk::DescriptorSet, GpuError> {
        let d = &ctx.device;
        let layouts = [set_layout];
        let info = vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool).set_layouts(&layouts);
        let mut set = vk::DescriptorSet::null();
        // SAFETY: one set for one layout into `set`; the pool is this slot's, reset
        // by begin_frame after the slot's fence. The raw entry point avoids the Vec
        // that ash's wrapper returns (no heap allocation per frame).
        unsafe { (d.fp_v1_0().allocate_descriptor_sets)(d.handle(), &info, &mut set) }
            .result()
            .call("vkAllocateDescriptorSets")?;
        let bindings = &self.bindings;
        let infos: [vk::DescriptorBufferInfo; 9] = std::array::from_fn(|i| {
            let buffer = if i == OUTPUT_BINDING { output } else { bound.buffers[i] };
            vk::DescriptorBufferInfo { buffer, offset: 0, range: vk::WHOLE_SIZE }
        });
        let mut writes = [vk::WriteDescriptorSet::default(); 9];
        let mut count = 0;
        for (i, ty) in bindings.iter().enumerate() {
            // Not in the set: reached by pointer.
            let Some(ty) = *ty else { continue };
            let write =
                vk::WriteDescriptorSet::default().dst_set(set).dst_binding(i as u32).descriptor_type(ty);
            writes[count] = if is_texel(bindings[i]) {
                write.texel_buffer_view(std::slice::from_ref(&bound.views[i]))
            } else {
                write.buffer_info(std::slice::from_ref(&infos[i]))
            };
            count += 1;
        }
        // SAFETY: the set is fresh and unused; every written buffer and view is live.
        unsafe { d.update_descriptor_sets(&writes[..count], &[]) };
        Ok(set)
    }
}
