//! What the host writes each frame into a slot's buffers ([`SkinPass::upload`]:
//! palettes, morph weights, and the records after a layout change) and the
//! staged palette copies ([`SkinPass::record_copies`]). Allocates nothing on
//! the heap per frame; never dispatches and never changes the layout.

use super::device_palette::DevicePalette;
use super::gpu_pose::{PlaybackWriter, RECORD_BYTES};
use super::plan::{CharacterPlace, PALETTE_ENTRY_BYTES};
use super::upload_pieces::{Span, Window};
use super::{Character, SKINNING_READS, SkinPass, SkinStats};
use crate::anim::{FramePoses, SkinInput};
use crate::asset::Model;
use crate::gpu::barrier::{self, Access};
use crate::gpu::{FrameSlot, GpuContext, GpuError};
use crate::pool_trace::CallersTrace;
use crate::render::chunked::{self, CHUNK};
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
    /// the frame is submitted. Allocates nothing on the heap. A crowd is
    /// written in pieces of `chunked::CHUNK` characters on the threads that
    /// pose it (`upload_pieces`); a failure names the first character, in
    /// order, that could not be written.
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
        let characters = self.characters.len();
        let pieces = characters.div_ceil(CHUNK);
        let (mut records, playback, pose) = match self.gpu_pose.as_mut() {
            Some(pose) => {
                let (records, slots, writer) = pose.state_mut(slot.index, characters)?;
                (Some(records), slots, Some(writer))
            }
            None => (None, Window::new(&mut [], 0, "pose state"), None),
        };
        let palette =
            buffers.palette.mapped_mut().ok_or_else(|| GpuError::new("skin pass: palette not mapped"))?;
        let weights =
            buffers.weights.mapped_mut().ok_or_else(|| GpuError::new("skin pass: weights not mapped"))?;
        let span = Span {
            first: 0,
            palette: Window::new(palette, 0, "palette"),
            weights: Window::new(weights, 0, "morph weights"),
            playback,
            held: &mut buffers.held[..characters],
            staged: &mut buffers.staged[..characters],
            device_held: &mut self.device_palette.held[..characters],
            pieces: &mut buffers.pieces[..pieces],
        };
        let job = UploadJob {
            characters: &self.characters,
            places: self.layout.characters(),
            inputs,
            buckets: levels.map(|l| l.order.buckets()),
            staged: mode.staged() || pose.is_some(),
            pose,
            skips_unchanged: mode.skips_unchanged(),
            dual_quaternions,
            parallel: chunked::in_parallel(characters),
            trace: CallersTrace::here(),
        };
        job.run(span);
        // The pieces joined in character order, after any copies queued
        // by a frame that never recorded them.
        let mut posed = 0;
        let mut failed = None;
        for piece in &mut buffers.pieces[..pieces] {
            let piece_stats = &piece.stats;
            stats.palette_bytes_written += piece_stats.palette_bytes_written;
            stats.weight_bytes_written += piece_stats.weight_bytes_written;
            stats.playback_bytes_written += piece_stats.playback_bytes_written;
            for copy in &piece.copies {
                queue_region(&mut buffers.copies, *copy);
            }
            buffers.pending.extend_from_slice(&piece.pending);
            if let Some(records) = &mut records {
                let at = posed * RECORD_BYTES as usize;
                let bytes: &[u8] = bytemuck::cast_slice(&piece.records);
                records[at..at + bytes.len()].copy_from_slice(bytes);
            }
            posed += piece.records.len();
            failed = failed.or(piece.error.take());
            piece.clear();
        }
        stats.posed_characters = posed as u32;
        if let Some(pose) = self.gpu_pose.as_mut() {
            pose.finish(slot.index, posed as u32);
        }
        if let Some(e) = failed {
            return Err(e);
        }
        stats.write_ns = started.elapsed().as_nanos() as u64;
        Ok(stats)
    }
}

/// What every character's upload reads, shared by the pieces.
struct UploadJob<'a, P: FramePoses + ?Sized> {
    characters: &'a [Character],
    places: &'a [CharacterPlace],
    inputs: &'a P,
    /// The draw order's bucket per character, when the frame skins only
    /// what it draws.
    buckets: Option<&'a [u8]>,
    /// Writes the playback of characters posed on the GPU.
    pose: Option<PlaybackWriter<'a>>,
    /// Palettes go to the shared device palette through the slot's staging.
    staged: bool,
    skips_unchanged: bool,
    /// The palette holds dual quaternions (`DqsSplit::Cpu`).
    dual_quaternions: bool,
    /// The pieces run on the pool this thread works in.
    parallel: bool,
    /// The recording thread's trace, for the pieces other threads run.
    trace: CallersTrace,
}

impl<P: FramePoses + ?Sized> UploadJob<'_, P> {
    /// Uploads the characters of `span`, halving it down to its pieces.
    fn run(&self, span: Span) {
        if span.pieces.len() <= 1 {
            self.upload_piece(span);
            return;
        }
        let playback_slot = self.pose.as_ref().map_or(0, PlaybackWriter::slot_bytes);
        match span.middle(self.places, playback_slot) {
            Ok(middle) => {
                let (low, high) = span.halve(middle);
                if self.parallel {
                    // The first half runs on this thread, under its trace.
                    rayon::join(|| self.run(low), || self.trace.run(|| self.run(high)));
                } else {
                    self.run(low);
                    self.run(high);
                }
            }
            Err(e) => span.pieces[0].error = Some(e),
        }
    }

    /// Uploads one piece's characters (`span` holds one piece) in order,
    /// stopping at the first that cannot be written.
    fn upload_piece(&self, mut span: Span) {
        let _span = tracing::trace_span!("upload piece", first = span.first).entered();
        for i in 0..span.len() {
            if let Err(e) = self.upload_character(i, &mut span) {
                span.pieces[0].error = Some(e);
                return;
            }
        }
    }

    /// Writes what is due of character `span.first + i` (its palette,
    /// morph weights or GPU-pose playback: see `SkinPass::upload`) into
    /// `span`, and notes in its piece what `upload` joins.
    fn upload_character(&self, i: usize, span: &mut Span) -> Result<(), GpuError> {
        let c = span.first + i;
        if self.buckets.is_some_and(|b| b.get(c) == Some(&HIDDEN)) {
            // Drawn by no pass: neither posed on the GPU nor uploaded.
            return Ok(());
        }
        let (model, place) = (&self.characters[c].model, &self.places[c]);
        let piece = &mut span.pieces[0];
        let input = self.inputs.input(c);
        let playback = self.inputs.playback(c);
        if let Some(playback) = &playback {
            // Posed on the GPU: the playback every frame, no palette.
            let Some(pose) = &self.pose else {
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
            piece.records.push(pose.encode(&mut span.playback, c, playback, start)?);
            piece.stats.playback_bytes_written += RECORD_BYTES + playback.bytes();
            span.device_held[i] = None;
        }
        let version = Some(input.version);
        let weights = !(self.skips_unchanged && span.held[i] == version);
        // Read in place, the palette lives beside the weights in the
        // slot; staged, in the shared device palette.
        let palette = playback.is_none()
            && if self.staged {
                // A copy this slot queued and has not recorded carries
                // its staging to the device palette: it must hold this pose.
                let held = match span.staged[i] {
                    Some(queued) => Some(queued) == version,
                    None => span.device_held[i] == version,
                };
                !(self.skips_unchanged && held)
            } else {
                weights
            };
        if !weights && !palette {
            return Ok(());
        }
        let character =
            Written { c, model, place, dual_quaternions: self.dual_quaternions, palette, weights };
        character.write(&mut span.palette, &mut span.weights, &input, &mut piece.stats)?;
        if weights {
            span.held[i] = version;
        }
        if palette && self.staged {
            // One queued copy per character: a later write to the
            // staging (a newer pose before the copy is recorded) rides on it.
            if span.staged[i].is_none() {
                queue_copy(&mut piece.copies, place);
                piece.pending.push(c as u32);
            }
            span.staged[i] = version;
        }
        Ok(())
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
    /// weights into `palettes` and `weights`, counting the bytes in `stats`.
    fn write(
        &self,
        palettes: &mut Window,
        weights: &mut Window,
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
                    palettes.write(offset, bytemuck::bytes_of(&entry))?;
                }
            } else {
                palettes.write(base as u64 * PALETTE_ENTRY_BYTES, bytemuck::cast_slice(palette))?;
            }
            stats.palette_bytes_written += palette.len() as u64 * PALETTE_ENTRY_BYTES;
        }
        let rigid = if self.palette { place.rigid.as_slice() } else { &[] };
        for &(joint, index) in rigid {
            let m = pose.joint_world(joint).ok_or_else(|| {
                GpuError::new(format!("skin pass: character {c}: no world matrix for joint {joint}"))
            })?;
            let entry = BoneMatrix::from_matrix(m);
            palettes.write(index as u64 * PALETTE_ENTRY_BYTES, bytemuck::bytes_of(&entry))?;
            stats.palette_bytes_written += PALETTE_ENTRY_BYTES;
        }
        let morph_weights = pose.morph_weights;
        if !self.weights {
            return Ok(());
        }
        if morph_weights.len() != self.model.rest_morph_weights.len() {
            return Err(GpuError::new(format!(
                "skin pass: character {c}: {} morph weights, the model has {}",
                morph_weights.len(),
                self.model.rest_morph_weights.len()
            )));
        }
        let bytes: &[u8] = bytemuck::cast_slice(morph_weights);
        weights.write(place.weight_base as u64 * 4, bytes)?;
        stats.weight_bytes_written += bytes.len() as u64;
        Ok(())
    }
}

/// Queues the copy of the character's palette range from the slot's
/// staging into the device-local palette.
fn queue_copy(copies: &mut Vec<vk::BufferCopy>, place: &CharacterPlace) {
    let (start, end) = place.palette_range;
    if end > start {
        let (offset, size) = (start as u64 * PALETTE_ENTRY_BYTES, (end - start) as u64 * PALETTE_ENTRY_BYTES);
        queue_region(copies, vk::BufferCopy { src_offset: offset, dst_offset: offset, size });
    }
}

/// Queues `copy` (source and destination at one offset), merged into the
/// last region when it follows it (consecutive characters' ranges are
/// adjacent: one region).
fn queue_region(copies: &mut Vec<vk::BufferCopy>, copy: vk::BufferCopy) {
    match copies.last_mut() {
        Some(last) if last.src_offset + last.size == copy.src_offset => last.size += copy.size,
        _ => copies.push(copy),
    }
}
