//! Poses on the GPU (shaders/pose.comp): the characters whose `FramePoses`
//! input carries a `PosePlayback` send their playback (a few dozen bytes)
//! instead of a palette, and one dispatch, a workgroup per character,
//! samples, blends and accumulates their poses into the palette the
//! skinning shaders read. What [`SkinPass::set_pose_program`] turns on.
//!
//! Buffers: the program (the rig's `PoseProgram` words, then the palette
//! map: per palette entry of a character, its skeleton joint and inverse
//! bind) is device-local, uploaded once through a staging copy followed by
//! a barrier to every later compute read; each frame slot has a
//! host-visible state buffer (a record per posed character, in order, then
//! a playback slot per character: its entries and layer weights), written
//! before the submit and rewritten only after
//! the slot's fence, like the other slot buffers.
//!
//! Synchronisation: the dispatch writes the device-local palette that the
//! slots share (by pointer), after the barrier `record_copies` records
//! before any write to it (`DevicePalette::record_write_after_reads`:
//! earlier frames may still read it); a barrier after it orders the
//! writes before the skinning reads (compute and vertex shaders). The
//! staged copies of other characters (scenery) write other ranges of the
//! same buffer, ordered before the dispatch by their own barrier.

use super::plan::CharacterPlace;
use super::upload_pieces::Window;
use super::{SKINNING_READS, SkinStats};
use crate::anim::{PlaybackEntry, PosePlayback, PoseProgram, Rig};
use crate::gpu::barrier::{self, Access};
use crate::gpu::frame::Retired;
use crate::gpu::pipeline::ComputePipeline;
use crate::gpu::{Buffer, FRAMES_IN_FLIGHT, FrameRing, FrameSlot, GpuContext, GpuError, staging};
use ash::vk;
use gpu_allocator::MemoryLocation;
use std::sync::Arc;

/// Bytes of one posed character's record in a frame's state (entry start,
/// entry count, palette start, layer weights start).
pub const RECORD_BYTES: u64 = 16;

/// Words per palette map entry: the joint and a 3x4 inverse bind.
const MAP_WORDS: usize = 13;

/// pose.comp's push constants.
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Push {
    program: u64,
    state: u64,
    palette: u64,
    characters: u32,
    map_at: u32,
    map_entries: u32,
    pad: u32,
}

/// The GPU pose of one rig's characters: pipeline, program and per-slot state.
pub(super) struct GpuPose {
    program: Arc<PoseProgram>,
    pipeline: ComputePipeline,
    /// The program words and the palette map (device-local).
    words: Buffer,
    map_at: u32,
    map_entries: u32,
    /// Each slot's playback state (host-visible).
    states: Vec<Buffer>,
    /// Most entries and layer weights one character sends.
    per_character_bytes: u64,
    /// Characters posed in the frame each slot was last written for.
    posed: Vec<u32>,
}

impl GpuPose {
    /// Builds the pipeline and uploads `program` with the palette map of a
    /// character placed as `place` (every posed character's palette is laid
    /// out alike: skins in `rig`'s order, then the rigid entries).
    pub(super) fn new(
        ctx: &GpuContext,
        program: Arc<PoseProgram>,
        rig: &Rig,
        place: &CharacterPlace,
    ) -> Result<Self, GpuError> {
        let map = palette_map(rig, place)?;
        let map_entries = (map.len() / MAP_WORDS) as u32;
        let mut words = program.words().to_vec();
        let map_at = words.len() as u32;
        words.extend(&map);
        let pipeline = ComputePipeline::new(
            ctx,
            "pose.comp",
            crate::spirv!("pose.comp"),
            0,
            std::mem::size_of::<Push>() as u32,
            None,
        )?;
        let buffer = match upload_words(ctx, &words) {
            Ok(b) => b,
            Err(e) => {
                pipeline.destroy(ctx);
                return Err(e);
            }
        };
        let per_character_bytes = RECORD_BYTES
            + program.max_entries() as u64 * std::mem::size_of::<PlaybackEntry>() as u64
            + program.layers() as u64 * 4;
        let mut pose = GpuPose {
            program,
            pipeline,
            words: buffer,
            map_at,
            map_entries,
            states: Vec::with_capacity(FRAMES_IN_FLIGHT),
            per_character_bytes,
            posed: vec![0; FRAMES_IN_FLIGHT],
        };
        for i in 0..FRAMES_IN_FLIGHT {
            match Buffer::new(ctx, &format!("pose state {i}"), 64, STATE_USAGE, MemoryLocation::CpuToGpu) {
                Ok(b) => pose.states.push(b),
                Err(e) => {
                    pose.destroy(ctx);
                    return Err(e);
                }
            }
        }
        Ok(pose)
    }

    /// The program the pass poses with.
    pub(super) fn program(&self) -> &Arc<PoseProgram> {
        &self.program
    }

    /// Grows every slot's state buffer to hold `characters` posed
    /// characters; replaced buffers are retired through `ring`.
    pub(super) fn ensure_capacity(
        &mut self,
        ctx: &GpuContext,
        ring: &mut FrameRing,
        characters: usize,
    ) -> Result<(), GpuError> {
        let needed = (characters as u64 * self.per_character_bytes).max(64);
        for (i, state) in self.states.iter_mut().enumerate() {
            if state.size < needed {
                let size = needed.max(state.size.saturating_mul(3) / 2);
                let new = Buffer::new(
                    ctx,
                    &format!("pose state {i}"),
                    size,
                    STATE_USAGE,
                    MemoryLocation::CpuToGpu,
                )?;
                ring.retire(Retired::Buffer(std::mem::replace(state, new)));
            }
        }
        Ok(())
    }

    /// Slot `slot`'s state for a frame of `characters` characters, in two:
    /// room for a record per character (the posed characters' records, in
    /// order from the first byte), then each character's playback slot
    /// (its clips and layer weights at most, character by character), as
    /// a window; and what writes a character's playback there.
    pub(super) fn state_mut(
        &mut self,
        slot: usize,
        characters: usize,
    ) -> Result<(&mut [u8], Window<'_>, PlaybackWriter<'_>), GpuError> {
        let records = characters * RECORD_BYTES as usize;
        let bytes = characters as u64 * self.per_character_bytes;
        let state = self.states[slot].mapped_elements::<u8>(bytes as usize)?;
        let (records, slots) = state.split_at_mut(records);
        let at = records.len() as u64;
        let writer = PlaybackWriter {
            program: &self.program,
            map_entries: self.map_entries,
            slot_bytes: self.per_character_bytes - RECORD_BYTES,
            records_end: at,
        };
        Ok((records, Window::new(slots, at, "pose state"), writer))
    }

    /// Ends slot `slot`'s state for a frame: `posed` characters' records
    /// written (`state_mut`), the characters the dispatch poses.
    pub(super) fn finish(&mut self, slot: usize, posed: u32) {
        self.posed[slot] = posed;
    }

    /// Records the dispatch for slot `slot`'s posed characters into its
    /// palette at `palette` (nothing when none), then the barrier to the
    /// skinning reads. Fills in `stats.pose_timestamps`.
    pub(super) fn record(
        &self,
        ctx: &GpuContext,
        slot: &mut FrameSlot,
        palette: vk::DeviceAddress,
        timestamps: bool,
        stats: &mut SkinStats,
    ) {
        let characters = self.posed[slot.index];
        if characters == 0 {
            return;
        }
        let cmd = slot.command_buffer;
        let push = Push {
            program: self.words.device_address(ctx),
            state: self.states[slot.index].device_address(ctx),
            palette,
            characters,
            map_at: self.map_at,
            map_entries: self.map_entries,
            pad: 0,
        };
        let (x, y) = ComputePipeline::grid(ctx, characters);
        ctx.begin_region(cmd, c"pose (GPU)");
        let before =
            if timestamps { slot.write_timestamp(ctx, vk::PipelineStageFlags2::TOP_OF_PIPE) } else { None };
        let d = &ctx.device;
        // SAFETY: the command buffer is recording; the program, state and
        // palette buffers live until this slot's fence; every palette write
        // lies in a posed character's range (its palette start plus at most
        // `map_entries`, checked when the character was laid out).
        unsafe {
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, self.pipeline.pipeline);
            d.cmd_push_constants(
                cmd,
                self.pipeline.layout,
                vk::ShaderStageFlags::COMPUTE,
                0,
                bytemuck::bytes_of(&push),
            );
            d.cmd_dispatch(cmd, x, y, 1);
        }
        // The palette writes before every skinning read of this frame.
        barrier::record_global(ctx, cmd, &[Access::ComputeShaderWrite], SKINNING_READS);
        let after = if timestamps {
            slot.write_timestamp(ctx, vk::PipelineStageFlags2::COMPUTE_SHADER)
        } else {
            None
        };
        ctx.end_region(cmd);
        stats.pose_timestamps = before.zip(after);
    }

    /// Destroys everything; the caller waited for the GPU.
    pub(super) fn destroy(self, ctx: &GpuContext) {
        self.pipeline.destroy(ctx);
        self.words.destroy(ctx);
        for state in self.states {
            state.destroy(ctx);
        }
    }
}

/// Writes posed characters' playback into a frame's state (`GpuPose::state_mut`).
pub(super) struct PlaybackWriter<'a> {
    program: &'a Arc<PoseProgram>,
    map_entries: u32,
    /// Bytes of a character's playback slot: its clips and layer weights, at most.
    slot_bytes: u64,
    /// Where the playback slots start (after room for a record per character).
    records_end: u64,
}

impl PlaybackWriter<'_> {
    /// Palette entries the program writes per character.
    pub(super) fn map_entries(&self) -> u32 {
        self.map_entries
    }

    /// Bytes of a character's playback slot.
    pub(super) fn slot_bytes(&self) -> u64 {
        self.slot_bytes
    }

    /// Writes posed character `c`'s playback into its slot of `slots`
    /// (see `GpuPose::state_mut`) and returns its record; `palette_start`
    /// is its first palette entry.
    pub(super) fn encode(
        &self,
        slots: &mut Window,
        c: usize,
        playback: &PosePlayback,
        palette_start: u32,
    ) -> Result<[u32; 4], GpuError> {
        if !std::ptr::eq(playback.program, Arc::as_ptr(self.program)) {
            return Err(GpuError::new(format!(
                "skin pass: character {c} is posed with another program than the pass's"
            )));
        }
        if playback.entries.len() > self.program.max_entries()
            || playback.layer_weights.len() != self.program.layers()
        {
            return Err(GpuError::new(format!(
                "skin pass: character {c}: {} clips and {} layer weights, the program takes at most {} and {}",
                playback.entries.len(),
                playback.layer_weights.len(),
                self.program.max_entries(),
                self.program.layers()
            )));
        }
        let entries_at = self.records_end + c as u64 * self.slot_bytes;
        let weights_at = entries_at + std::mem::size_of_val(playback.entries) as u64;
        slots.write(entries_at, bytemuck::cast_slice(playback.entries))?;
        slots.write(weights_at, bytemuck::cast_slice(playback.layer_weights))?;
        Ok([(entries_at / 4) as u32, playback.entries.len() as u32, palette_start, (weights_at / 4) as u32])
    }
}

/// The state buffers are read by pointer only.
const STATE_USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;

/// The palette map of a character placed as `place`: for each of its palette
/// entries in order, the skeleton joint and the inverse bind (rows of a 3x4;
/// the identity for rigid entries, which are the joint's world matrix).
fn palette_map(rig: &Rig, place: &CharacterPlace) -> Result<Vec<u32>, GpuError> {
    let start = place.palette_range.0;
    let mut entries: Vec<(u32, nalgebra::Matrix4<f32>)> = Vec::new();
    // One run per distinct skin (skins that share one read it).
    for &s in rig.palette_skins() {
        let (skin, base) = (&rig.skins[s as usize], place.skin_bases.get(s as usize).copied());
        if base != Some(start + entries.len() as u32) {
            return Err(GpuError::new(format!("GPU pose: skin {s} is not laid out after the one before")));
        }
        entries.extend(skin.joints.iter().copied().zip(skin.inverse_binds.iter().copied()));
    }
    for &(joint, index) in &place.rigid {
        if index != start + entries.len() as u32 {
            return Err(GpuError::new("GPU pose: rigid palette entries are not laid out after the skins"));
        }
        entries.push((joint, nalgebra::Matrix4::identity()));
    }
    if start + entries.len() as u32 != place.palette_range.1 {
        return Err(GpuError::new(
            "GPU pose: the palette range holds other entries than skins and rigid nodes",
        ));
    }
    let mut words = Vec::with_capacity(entries.len() * MAP_WORDS);
    for (joint, m) in entries {
        words.push(joint);
        for row in 0..3 {
            words.extend((0..4).map(|col| m[(row, col)].to_bits()));
        }
    }
    Ok(words)
}

/// A device-local buffer holding `words`, copied through a staging buffer
/// (waited: setup work), with a barrier to every later compute read.
fn upload_words(ctx: &GpuContext, words: &[u32]) -> Result<Buffer, GpuError> {
    let bytes: &[u8] = bytemuck::cast_slice(words);
    let size = bytes.len().max(4) as u64;
    let usage = vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS | vk::BufferUsageFlags::TRANSFER_DST;
    let buffer = Buffer::new(ctx, "pose program", size, usage, MemoryLocation::GpuOnly)?;
    // Every later pose dispatch reads the program.
    let readers = [Access::ComputeShaderStorageRead];
    match staging::copy_through_staging(
        ctx,
        "pose program staging",
        std::slice::from_ref(&buffer),
        &[bytes],
        &readers,
    ) {
        Ok(()) => Ok(buffer),
        Err(e) => {
            buffer.destroy(ctx);
            Err(e)
        }
    }
}
