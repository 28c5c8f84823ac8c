//! The skinning pipelines (skin.comp or skin_storage.comp, with and without
//! morph-target code) and a frame's dispatches, one per batch (`batches`):
//! a descriptor set per output window from the slot's pool, the dispatches,
//! and the barrier that makes the output visible to vertex input, vertex
//! shaders and transfers. It never writes a buffer's contents; what the
//! dispatches read was uploaded first.

use super::batches::SkinBatch;
use super::palette_reads::{OUTPUT_BINDING, PaletteReads, is_texel};
use super::plan::MAX_OUTPUT_WINDOWS;
use super::skinned_output::SkinnedOutput;
use super::{SkinPass, SkinStats};
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
    /// The batch's run (`plan::SkinRun`): its first record, records per
    /// character and first character.
    first_record: u32,
    records_per_character: u32,
    first_character: u32,
    /// The batch: its level, the vertices and workgroups one character
    /// takes there, how many characters, and where they are listed in the
    /// work buffer (`batches::NO_ORDER`: the run's, in order).
    level: u32,
    level_vertices: u32,
    groups_per_character: u32,
    characters: u32,
    order_first: u32,
    /// Words of the record buffer: the run's record starts at this level,
    /// and the level tables; and the records' count (where
    /// `record_tables` start).
    starts: u32,
    level_words: u32,
    record_count: u32,
    /// With `batches::NO_ORDER`, the batch's first character's index in the run.
    first_slot: u32,
    /// Where the batch's first character's output starts in its window's
    /// buffer; the others follow, `level_vertices` each.
    first_vertex: u32,
    pad: u32,
    /// The palette skin_storage.comp reads by pointer (0 for skin.comp).
    palette_address: vk::DeviceAddress,
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

/// What set 0 of a frame's dispatches binds but the output window: each
/// binding's buffer, and its texel view where the binding is a texel
/// buffer (else null); and the palette
/// the shader reaches by pointer (skin_storage.comp).
struct BoundSet {
    buffers: [vk::Buffer; 9],
    views: [vk::BufferView; 9],
    palette_address: vk::DeviceAddress,
}

impl SkinPass {
    /// Dispatches the skinning of this frame's batches (`write_batches`)
    /// of what was `upload`ed into `slot`, and records the barrier after
    /// them; fills in `stats`' dispatch fields.
    pub(super) fn dispatch(
        &self,
        ctx: &GpuContext,
        slot: &mut FrameSlot,
        timestamps: bool,
        stats: &mut SkinStats,
    ) -> Result<(), GpuError> {
        if self.layout.total_vertices() == 0 || self.layout.records().is_empty() {
            return Ok(());
        }
        let Some(bound_set) = self.bound_set(ctx, slot.index)? else {
            return Ok(());
        };
        // Without morph targets in the scene, the pipeline without their code.
        let p = &self.pipelines;
        let compute = if self.layout.morph_targets() { &p.compute } else { &p.compute_without_morphs };
        let (d, cmd) = (&ctx.device, slot.command_buffer);
        ctx.begin_region(cmd, c"skin dispatch");
        // The output is one for every slot: after every earlier frame's
        // draws, readbacks and skinning of it.
        SkinnedOutput::record_write_after_reads(ctx, cmd);
        let before =
            if timestamps { slot.write_timestamp(ctx, vk::PipelineStageFlags2::TOP_OF_PIPE) } else { None };
        // SAFETY: the command buffer is recording (begin_frame).
        unsafe { d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, compute.pipeline) };
        // One set per output window, made when a batch first writes it.
        let mut sets = [vk::DescriptorSet::null(); MAX_OUTPUT_WINDOWS as usize];
        let (mut dispatches, mut vertices) = (0, 0);
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
            // The batches write disjoint vertices (each character's, at one
            // level) and read only what the host and the stream uploads
            // wrote, so no barrier goes between them.
            let mut bound = None;
            for batch in &self.batches {
                let Some(push) = self.push(batch, bound_set.palette_address) else {
                    continue;
                };
                let window = batch.window;
                let set = &mut sets[window as usize];
                if *set == vk::DescriptorSet::null() {
                    let output = self.output.buffers[window as usize].raw;
                    *set =
                        self.write_set(ctx, slot.descriptor_pool, compute.set_layout, &bound_set, output)?;
                }
                if bound != Some(window) {
                    // SAFETY: the set is fresh and written; every bound buffer is
                    // live and stays alive until this slot's fence (replaced ones
                    // are retired). The pipeline is bound above.
                    unsafe {
                        let layout = compute.layout;
                        d.cmd_bind_descriptor_sets(
                            cmd,
                            vk::PipelineBindPoint::COMPUTE,
                            layout,
                            0,
                            &[*set],
                            &[],
                        );
                    }
                    bound = Some(window);
                }
                let (groups_x, groups_y) =
                    ComputePipeline::grid(ctx, push.characters * push.groups_per_character);
                // SAFETY: as above; the push range is the layout's.
                unsafe {
                    let bytes = bytemuck::bytes_of(&push);
                    d.cmd_push_constants(cmd, compute.layout, vk::ShaderStageFlags::COMPUTE, 0, bytes);
                    d.cmd_dispatch(cmd, groups_x, groups_y, 1);
                }
                dispatches += 1;
                vertices += u64::from(push.characters) * u64::from(push.level_vertices);
            }
        }
        // The draw (vertex input of the output as a vertex buffer, or storage
        // reads in a vertex shader) and readback copies later in this command
        // buffer must see the dispatch's writes: compute write -> those stages
        // and accesses. A global memory barrier is enough (one queue, one
        // command buffer); a buffer barrier would add nothing on this queue.
        // The earlier frames' reads were ordered before the writes by the
        // barrier above. Frame-begin writes by the host are covered by the
        // submit.
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
        stats.vertices = vertices / u64::from(repeats);
        stats.dispatches = dispatches;
        Ok(())
    }

    /// The push constants of `batch`'s dispatch (`palette_address` for
    /// skin_storage.comp), or `None` when it skins nothing.
    fn push(&self, batch: &SkinBatch, palette_address: vk::DeviceAddress) -> Option<Push> {
        let run = &self.layout.runs()[batch.run as usize];
        let level = batch.level as usize;
        let groups_per_character = run.groups_per_character(level);
        if batch.characters == 0 || groups_per_character == 0 {
            return None;
        }
        let words = self.layout.record_buffer_words();
        Some(Push {
            first_record: run.first_record,
            records_per_character: run.records_per_character,
            first_character: run.first_character,
            level: batch.level,
            level_vertices: run.level_vertices[level],
            groups_per_character,
            characters: batch.characters,
            order_first: batch.order_first,
            // check_ranges keeps the record buffer within u32 words.
            starts: (words.run_starts + u64::from(run.level_starts(level))) as u32,
            level_words: words.level_words as u32,
            record_count: self.layout.records().len() as u32,
            first_slot: batch.first_slot,
            first_vertex: batch.first_vertex,
            pad: 0,
            palette_address,
        })
    }

    /// Set 0 of slot `slot_index`'s dispatch: the static streams, then the
    /// slot's weights, palette (the one the shaders read in this upload
    /// mode; as texels, or by pointer), records and the characters to skin; and
    /// the output's address. `None` before the first character; an error
    /// when a texel binding lacks its view (its creation failed).
    fn bound_set(&self, ctx: &GpuContext, slot_index: usize) -> Result<Option<BoundSet>, GpuError> {
        let Some(([sources, influences, ranges, entries], _)) = self.streams.bound(&self.models) else {
            return Ok(None);
        };
        let b = &self.slots[slot_index];
        let (palette, palette_view) = self.read_palette(slot_index);
        let [v0, v1, v2, v3] = self.streams.views();
        let null = vk::BufferView::null();
        let views = [v0, v1, v2, v3, null, palette_view, b.records_view, null, b.work_view];
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
            palette.raw,
            b.records.raw,
            vk::Buffer::null(), // each window's own, in `write_set`
            b.work.raw,
        ];
        let palette_address = match self.palette_reads {
            PaletteReads::Storage => palette.device_address(ctx),
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
