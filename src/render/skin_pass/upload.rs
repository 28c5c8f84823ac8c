//! What the host writes each frame into a slot's buffers ([`SkinPass::upload`]:
//! palettes, morph weights, and the records after a layout change) and the
//! staged palette copies ([`SkinPass::record_copies`]). Allocates nothing on
//! the heap per frame; never dispatches and never changes the layout.

use super::device_palette::DevicePalette;
use super::plan::{CharacterPlace, PALETTE_ENTRY_BYTES};
use super::slot_buffers::SlotBuffers;
use super::{SKINNING_READS, SkinPass, SkinStats};
use crate::anim::{FramePoses, SkinInput};
use crate::asset::Model;
use crate::gpu::barrier::{self, Access};
use crate::gpu::{FrameSlot, GpuContext, GpuError};
use crate::render::draw_order::HIDDEN;
use crate::render::layout::{BoneMatrix, PaletteDualQuat};
use crate::render::skin_levels::SkinLevels;
use ash::vk;

impl SkinPass {
    /// Records the staging copies that `upload` queued into `slot` (staged
    /// modes; nothing in `InPlace` or when nothing changed) and the barrier
    /// that makes them visible to the skinning shaders. `record` calls it;
    /// the vertex-skinning path calls it after `upload`. Fills in
    /// `stats.copy_timestamps`. Allocates nothing on the heap.
    ///
    /// Synchronisation: the host wrote the staging range before the submit
    /// (visible to the copy). The copy and the GPU pose overwrite the
    /// device-local palette that every slot shares, which earlier frames
    /// may still be reading (the frame before this one's fence has not
    /// been waited): a barrier orders them after every earlier command's
    /// reads and writes of it (`DevicePalette::record_write_after_reads`).
    /// The barrier after the copy orders its writes before this frame's
    /// compute and vertex shader reads (the pose pass has its own).
    pub fn record_copies(
        &mut self,
        ctx: &GpuContext,
        slot: &mut FrameSlot,
        timestamps: bool,
        stats: &mut SkinStats,
    ) {
        let buffers = &mut self.slots[slot.index];
        if !buffers.copies.is_empty() || self.gpu_pose.is_some() {
            DevicePalette::record_write_after_reads(ctx, slot.command_buffer);
        }
        if !buffers.copies.is_empty() {
            let cmd = slot.command_buffer;
            ctx.begin_region(cmd, c"palette upload (staged copy)");
            let before =
                if timestamps { slot.write_timestamp(ctx, vk::PipelineStageFlags2::COPY) } else { None };
            // SAFETY: recording command buffer; both buffers are live until this
            // slot's fence (a replaced device palette is retired) and every
            // region lies inside both (palette ranges of registered
            // characters, which both buffers hold).
            unsafe {
                let device = self.device_palette.buffer.raw;
                ctx.device.cmd_copy_buffer(cmd, buffers.palette.raw, device, &buffers.copies);
            }
            // skin.comp reads the palette as a uniform texel buffer (a sampled
            // read), skin_storage.comp and the vertex path as a storage buffer.
            barrier::record_global(ctx, cmd, &[Access::CopyWrite], SKINNING_READS);
            let after =
                if timestamps { slot.write_timestamp(ctx, vk::PipelineStageFlags2::COPY) } else { None };
            ctx.end_region(cmd);
            stats.copy_timestamps = before.zip(after);
            buffers.copies.clear();
            // The device palette will hold what was staged.
            let held = &mut self.device_palette.held;
            for &c in &buffers.pending {
                let c = c as usize;
                held[c] = buffers.staged[c].take();
            }
            buffers.pending.clear();
        }
        if let Some(pose) = &self.gpu_pose {
            // The posed characters' palettes, written where the shaders read.
            let palette = self.device_palette.buffer.device_address(ctx);
            pose.record(ctx, slot, palette, timestamps, stats);
        }
    }

    /// Writes this frame's inputs into `slot`'s own buffers without
    /// recording anything: the palettes and morph weights of every character
    /// (in `PaletteUpload::Dirty`, only of those whose `version` differs from
    /// what the slot holds, or for the palettes of the staged modes, from
    /// what the shared device palette holds: a pose is copied there once,
    /// whichever slot stages it; never of those `levels` says no pass draws this
    /// frame, `draw_order::HIDDEN`: the slot then holds their pose from
    /// before, and writes it once they are drawn; nor are those posed on
    /// the GPU), and the skin records when the layout changed
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
        levels: Option<SkinLevels>,
    ) -> Result<SkinStats, GpuError> {
        if inputs.count() != self.characters.len() {
            return Err(GpuError::new(format!(
                "skin pass: {} inputs for {} characters",
                inputs.count(),
                self.characters.len()
            )));
        }
        // A frame trace's CPU span (nothing is recorded without one).
        let _span = tracing::trace_span!("palette write").entered();
        let mut stats = SkinStats::default();
        let started = std::time::Instant::now();
        let mode = self.upload_mode;
        // DqsSplit::Cpu: each skin joint is split here, once per upload,
        // instead of once per influence of every vertex in the shader.
        let dual_quaternions = self.shading.palette_holds_dual_quaternions();
        let buffers = &mut self.slots[slot.index];
        // Host writes into HOST_COHERENT mapped memory, before the submit that
        // reads them: vkQueueSubmit makes them visible to the device (to the
        // compute shader and to the vertex shader alike). The previous reader
        // of this slot's buffers finished (its fence was waited in
        // begin_frame), so overwriting them is safe.
        if buffers.records_generation != Some(self.generation) {
            let words = self.layout.record_buffer_words();
            buffers.records.write(0, bytemuck::cast_slice(self.layout.records()))?;
            let record_tables = bytemuck::cast_slice(self.layout.record_tables());
            buffers.records.write(words.record_tables * 4, record_tables)?;
            buffers.records.write(words.level_words * 4, bytemuck::cast_slice(self.layout.level_words()))?;
            buffers.records.write(words.run_starts * 4, bytemuck::cast_slice(self.layout.run_starts()))?;
            buffers.records_generation = Some(self.generation);
        }
        let places = self.layout.characters();
        let staged = mode.staged() || self.gpu_pose.is_some();
        let mut state = self.gpu_pose.as_ref().map(|p| p.begin(slot.index, places.len()));
        let device_held = &mut self.device_palette.held;
        let skips_unchanged = mode.skips_unchanged();
        for (c, (model, place)) in self.characters.iter().map(|c| &c.model).zip(places).enumerate() {
            if levels.is_some_and(|l| l.order.buckets().get(c) == Some(&HIDDEN)) {
                // Drawn by no pass: neither posed on the GPU nor uploaded.
                continue;
            }
            let input = inputs.input(c);
            let playback = inputs.playback(c);
            if let Some(playback) = &playback {
                // Posed on the GPU: the playback every frame, no palette.
                let (Some(pose), Some(writer)) = (self.gpu_pose.as_mut(), state.as_mut()) else {
                    return Err(GpuError::new(format!(
                        "skin pass: character {c} is posed on the GPU, but the pass has no pose program"
                    )));
                };
                let (start, end) = place.palette_range;
                if end - start != pose.map_entries() {
                    return Err(GpuError::new(format!(
                        "skin pass: character {c} has {} palette entries, the pose program writes {}",
                        end - start,
                        pose.map_entries()
                    )));
                }
                pose.write(writer, c, playback, start)?;
                device_held[c] = None;
            }
            let version = Some(input.version);
            let weights = !(skips_unchanged && buffers.held[c] == version);
            // Read in place, the palette lives beside the weights in the
            // slot; staged, in the shared device palette.
            let palette = playback.is_none()
                && if staged {
                    // A copy this slot queued and has not recorded carries
                    // its staging to the device palette: it must hold this pose.
                    let held = match buffers.staged[c] {
                        Some(queued) => Some(queued) == version,
                        None => device_held[c] == version,
                    };
                    !(skips_unchanged && held)
                } else {
                    weights
                };
            if !weights && !palette {
                continue;
            }
            let character = Written { c, model, place, dual_quaternions, palette, weights };
            character.write(buffers, &input, &mut stats)?;
            if weights {
                buffers.held[c] = version;
            }
            if palette && staged {
                // One queued copy per character: a later write to the
                // staging (a newer pose before the copy is recorded) rides on it.
                if buffers.staged[c].is_none() {
                    queue_copy(buffers, place);
                    buffers.pending.push(c as u32);
                }
                buffers.staged[c] = version;
            }
        }
        if let (Some(pose), Some(writer)) = (self.gpu_pose.as_mut(), state) {
            pose.finish(writer, &mut stats);
        }
        stats.write_ns = started.elapsed().as_nanos() as u64;
        Ok(stats)
    }
}

/// One character's pose as `upload` writes it.
struct Written<'a> {
    /// Its index (`CharacterId`), for messages.
    c: usize,
    model: &'a Model,
    place: &'a CharacterPlace,
    /// The palette holds dual quaternions (`DqsSplit::Cpu`), not matrices.
    dual_quaternions: bool,
    /// Its palette is due (the host's to write: not posed on the GPU).
    palette: bool,
    /// Its morph weights are due.
    weights: bool,
}

impl Written<'_> {
    /// Writes the character's skin palettes, rigid entries and morph
    /// weights into `buffers`, counting the bytes in `stats`.
    fn write(
        &self,
        buffers: &mut SlotBuffers,
        input: &SkinInput,
        stats: &mut SkinStats,
    ) -> Result<(), GpuError> {
        let (c, place, pose) = (self.c, self.place, &input.pose);
        // One run per distinct skin: skins that share it read the same entries.
        let owners = if self.palette { self.model.palette_skins() } else { &[] };
        for &s in owners {
            let s = s as usize;
            let (Some(&base), Some(skin)) = (place.skin_bases.get(s), self.model.skins.get(s)) else {
                return Err(GpuError::new(format!("skin pass: character {c}: skin {s} not placed")));
            };
            let palette = pose.palette(s);
            if palette.len() != skin.joints.len() {
                return Err(GpuError::new(format!(
                    "skin pass: character {c} skin {s}: palette of {} for {} joints",
                    palette.len(),
                    skin.joints.len()
                )));
            }
            if self.dual_quaternions {
                for (i, skin) in palette.iter().enumerate() {
                    let entry = PaletteDualQuat::from_bone(skin);
                    let offset = (base as u64 + i as u64) * PALETTE_ENTRY_BYTES;
                    buffers.palette.write(offset, bytemuck::bytes_of(&entry))?;
                }
            } else {
                buffers.palette.write(base as u64 * PALETTE_ENTRY_BYTES, bytemuck::cast_slice(palette))?;
            }
            stats.palette_bytes_written += palette.len() as u64 * PALETTE_ENTRY_BYTES;
        }
        let rigid = if self.palette { place.rigid.as_slice() } else { &[] };
        for &(joint, index) in rigid {
            let m = pose.joint_world(joint).ok_or_else(|| {
                GpuError::new(format!("skin pass: character {c}: no world matrix for joint {joint}"))
            })?;
            let entry = BoneMatrix::from_matrix(m);
            buffers.palette.write(index as u64 * PALETTE_ENTRY_BYTES, bytemuck::bytes_of(&entry))?;
            stats.palette_bytes_written += PALETTE_ENTRY_BYTES;
        }
        let weights = pose.morph_weights;
        if !self.weights {
            return Ok(());
        }
        if weights.len() != self.model.rest_morph_weights.len() {
            return Err(GpuError::new(format!(
                "skin pass: character {c}: {} morph weights, the model has {}",
                weights.len(),
                self.model.rest_morph_weights.len()
            )));
        }
        let bytes: &[u8] = bytemuck::cast_slice(weights);
        buffers.weights.write(place.weight_base as u64 * 4, bytes)?;
        stats.weight_bytes_written += bytes.len() as u64;
        Ok(())
    }
}

/// Queues the copy of the character's palette range from the slot's
/// staging into the device-local palette (consecutive characters' ranges
/// are adjacent: one region).
fn queue_copy(buffers: &mut SlotBuffers, place: &CharacterPlace) {
    let (start, end) = place.palette_range;
    if end > start {
        let (offset, size) = (start as u64 * PALETTE_ENTRY_BYTES, (end - start) as u64 * PALETTE_ENTRY_BYTES);
        match buffers.copies.last_mut() {
            Some(last) if last.src_offset + last.size == offset => last.size += size,
            _ => buffers.copies.push(vk::BufferCopy { src_offset: offset, dst_offset: offset, size }),
        }
    }
}
