//! Compute skinning: morphs and skins every primitive of every registered
//! character instance (shaders/skin.comp), one dispatch per run of alike
//! characters and detail level drawn (`plan::SkinRun`, `batches`), into the
//! output buffers (`skinned_output`, one for every frame slot), which the
//! draw pass then reads by pointer.
//! It never poses characters (its inputs are `FramePoses`) and never draws.
//!
//! The pieces: `plan` lays every character out as plain data (no device:
//! offsets, counts, records, sizes); `palette_reads` says how skin.comp reads
//! its set 0 (texels or storage); `slot_buffers` holds one frame slot's
//! buffers, `device_palette` and `skinned_output` the GPU-written ones all
//! slots share; `streams` binds or concatenates the models' static streams;
//! `upload` writes a frame's palettes and weights; `batches` lists what
//! each dispatch skins; `dispatch` holds the pipelines and records the
//! dispatches. This file ties them together:
//! registering characters (`add_character`) and recording a frame (`record`).
//!
//! Per frame: `record` = `upload` (writes the palettes and morph weights of
//! the characters whose pose changed since this slot last held them, and the
//! skin records after a layout change) + `write_batches` (per run, the
//! characters drawn at each level, from the frame's draw order when it has
//! one: a character's primitives are then skinned only where its level
//! draws, `render::skin_levels`, and a character no pass draws not at all;
//! and where each character's output lands this frame, the output grown
//! to hold it), then the dispatches (per window of the output a descriptor
//! set from the slot's pool, one dispatch per batch, then the barrier that
//! makes the output visible to vertex shaders and transfers).
//!
//! The vertex-skinning path (shaders/mesh_skinned.vert) reads the same
//! per-slot buffers: call `upload` instead of `record` (no dispatch) and bind
//! `vertex_skinning_buffers(slot)` as set 0 of the draw (the palette by
//! pointer); each drawn primitive selects its record with
//! `PrimitiveOutput::record`.
//!
//! The output and the palettes grow with the crowd, and neither a binding
//! range (`maxStorageBufferRange`, 128 MiB on lavapipe) nor the largest
//! buffer (4 GiB on NVIDIA's drivers) may cap them: the output holds only
//! what the frame skins, a character's level's vertices each (`batches`),
//! split into windows (`OutputWindows`), each its own buffer within both
//! limits and holding whole characters, and a batch's dispatch writes one
//! window; the draws read the output by device address
//! (`GL_EXT_buffer_reference`), finding each character's window and place
//! in the slot's `plan::OutputPlaces`; the palette is
//! read as texels (limited by `maxTexelBufferElements`, 2^27 on common
//! devices) or, where the texel limit is small, by address. So a crowd is
//! limited by the device's memory and the palette's buffer
//! (`render::crowd_fit`). On llvmpipe pointer stores made the dispatch
//! about a quarter slower and pointer palette loads the vertex path about
//! as much, hence the windows and the texels (the guide's performance
//! history). The validation layer's synchronization checks cannot follow
//! the pointer reads; the barrier before them (below) is the same one the
//! bound writes are checked against. Nor does robust buffer access guard a
//! pointer: every read is in bounds by construction instead (a draw
//! reads a character the frame placed, within its level's vertices there,
//! through a level map whose places the skin levels bound; a palette read
//! is a record's `palette_offset` plus a joint the layout checked against
//! its skin, `plan::Placer`).
//!
//! Synchronisation, all of it (see also the comments at each barrier):
//! - Palette, weight, record, work and output-place buffers are host-visible, HOST_COHERENT,
//!   persistently mapped and written by the CPU before `vkQueueSubmit`; a
//!   submission makes earlier host writes to coherent memory visible to the
//!   device (the implicit host-write guarantee of queue submission), so no
//!   barrier and no flush is needed.
//! - The device-local palette (staged modes, GPU pose) is one for all
//!   slots: frame N+1's copy or pose pass may overwrite entries that
//!   frame N's dispatch or draws still read, so a barrier before those
//!   writes orders them after every earlier command's accesses on the
//!   queue (`DevicePalette::record_write_after_reads`; lavapipe's
//!   in-order execution and the layer's checks cannot show a missing one).
//! - The host-visible buffers belong to one frame slot, and are rewritten only after
//!   `FrameRing::begin_frame` waited for that slot's fence: the previous GPU
//!   reads of them have completed (write-after-read needs only that
//!   execution dependency).
//! - The output is one for every slot as well (`SkinnedOutput`): frame N+1's
//!   dispatch may overwrite vertices that frame N's draws or readback copies
//!   still read, or its dispatch still writes, so a barrier before the
//!   dispatches orders them after every earlier command's accesses on the
//!   queue (`SkinnedOutput::record_write_after_reads`; as with the palette,
//!   lavapipe's in-order execution and the layer, which cannot follow the
//!   pointer reads, cannot show a missing one). Every frame skins what it
//!   draws before drawing it: nothing in the output carries over. A frame
//!   that needs more output than a window's buffer holds replaces the
//!   buffer while it records (`write_batches`): the old one is retired into
//!   the slot being recorded (`FrameSlot::retire`), whose fence signals
//!   after every earlier frame that may still read it, and the new one's
//!   address reaches the frame's draws through the slot's output places,
//!   written after the growth.
//! - Within a frame, compute writes -> vertex input / vertex shader storage
//!   reads / transfer reads need the pipeline barrier recorded after the
//!   dispatch. It also covers a draw recorded in a later command buffer or
//!   submission on the same queue (barriers apply in submission order).
//! - The static mesh streams were uploaded with a barrier to every later
//!   reader (compute and vertex shaders; storage reads, and sampled reads
//!   for skin.comp's uniform texel buffers), and are only read here; so are
//!   the concatenated streams of several models (the barrier in
//!   `StaticStreams::rebuild`).
//! - Host writes made visible by a submission are visible to every access
//!   type, texel fetches included; the output is written only as a storage
//!   buffer (a storage texel write measured slower on llvmpipe).
//! - The vertex-skinning path has no compute write at all: its vertex shader
//!   reads only host-written slot buffers (visible at submit, as above) and
//!   the static streams, so it needs no barrier of its own.

use super::detail_levels::DETAIL_LEVELS;
use super::frame_settings::{InfluenceBlend, PaletteUpload};
use super::gpu_model::GpuModel;
use super::layout::PackedVertex;
use super::skin_levels::SkinLevels;
use crate::anim::{FramePoses, PoseProgram, SkinningMethod};
use crate::asset::Model;
use crate::gpu::barrier::Access;
use crate::gpu::{Buffer, FRAMES_IN_FLIGHT, FrameRing, FrameSlot, GpuContext, GpuError};
use ash::vk;
use device_palette::DevicePalette;
use dispatch::SkinPipelines;
use plan::Mark;
use skinned_output::SkinnedOutput;
use slot_buffers::{GrowthLimits, SlotBuffers};
use std::sync::Arc;
use streams::StaticStreams;
use upload_pieces::UploadPiece;

mod batches;
mod device_palette;
mod dispatch;
mod gpu_pose;
mod palette_reads;
pub mod plan;
mod skinned_output;
mod slot_buffers;
mod streams;
mod upload;
mod upload_pieces;

pub use palette_reads::{AMPLE_PALETTE_TEXELS, PaletteReads};
pub use plan::{MAX_OUTPUT_WINDOWS, NO_RECORD, OutputWindows, PrimitiveOutput, SkinLayout, SkinRun};
pub use skinned_output::{SHRINK_AFTER_FRAMES, SHRINK_FROM_BYTES};

/// Threads per workgroup (`local_size_x` in skin.comp).
pub const WORKGROUP_SIZE: u32 = 64;

/// Byte size of one output vertex.
pub const OUTPUT_STRIDE: u64 = std::mem::size_of::<PackedVertex>() as u64;

/// How the skinning shaders read their inputs (static streams, palettes):
/// skin.comp as uniform texel buffers, skin_storage.comp and the
/// vertex-skinning path (mesh_skinned.vert) as storage buffers.
const SKINNING_READS: &[Access] = &[
    Access::ComputeShaderUniformTexelRead,
    Access::ComputeShaderStorageRead,
    Access::VertexShaderStorageRead,
];

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
    /// Output vertices the dispatches skin (with detail levels, those the
    /// characters' levels draw).
    pub vertices: u64,
    /// Compute dispatches recorded: one per batch (a run of alike
    /// characters in one output window, at one level drawn; one per run
    /// without detail levels), 0 when there is nothing to skin, K times
    /// as many under the test-only `VKSKIN_TEST_SLOW_SKIN=K`.
    pub dispatches: u32,
    /// Timestamp queries before and after the dispatch, when asked and available.
    pub timestamps: Option<(u32, u32)>,
    /// Characters posed on the GPU this frame (`set_pose_program`).
    pub posed_characters: u32,
    /// Bytes of playback state the host wrote for them (records, clips,
    /// layer weights): what they upload instead of a palette.
    pub playback_bytes_written: u64,
    /// Timestamp queries before and after the pose dispatch, when asked and available.
    pub pose_timestamps: Option<(u32, u32)>,
}

/// What the vertex-skinning path reads (shaders/common.glsl): set 0's
/// bindings [`VERTEX_SKINNING_BINDINGS`], and the palette as the pass reads
/// it (`PaletteReads`): the texel view at [`PALETTE_BINDING`], or by pointer.
#[derive(Debug, Clone, Copy)]
pub struct VertexSkinning {
    /// Sources, influences, morph ranges, morph entries, morph weights and
    /// skin records, each bound whole.
    pub buffers: [vk::DescriptorBufferInfo; 6],
    /// The palette the frame's shaders read, as texels (null when read by pointer).
    pub palette_view: vk::BufferView,
    /// Its address (`push.palette_address`).
    pub palette_address: vk::DeviceAddress,
}

/// The set 0 binding of each of `VertexSkinning::buffers`.
pub const VERTEX_SKINNING_BINDINGS: [u32; 6] = [0, 1, 2, 3, 4, 6];

/// The palette's binding in set 0 where it is read as texels.
pub const PALETTE_BINDING: u32 = palette_reads::PALETTE_BINDING as u32;

/// A registered character instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CharacterId(pub usize);

/// A registered character's model: its GPU streams and the imported asset
/// (skins and morph weights, which `upload` checks poses against). Where it
/// lands is `SkinLayout::characters`' entry of the same index.
struct Character {
    gpu: Arc<GpuModel>,
    model: Arc<Model>,
}

/// The compute skinning pass and every registered character.
pub struct SkinPass {
    /// What the shader computes and what the palette holds for it.
    shading: InfluenceBlend,
    /// How its shader reads the palette.
    palette_reads: PaletteReads,
    /// The descriptor type of each binding of the pipelines' set 0.
    bindings: [Option<vk::DescriptorType>; 9],
    pipelines: SkinPipelines,
    characters: Vec<Character>,
    /// The distinct models, in `layout.models()` order.
    models: Vec<Arc<GpuModel>>,
    /// Where everything lands (plain data).
    layout: SkinLayout,
    /// The static streams bound at bindings 0..=3.
    streams: StaticStreams,
    /// Changes with every layout change: a slot rewrites its records when
    /// it holds an older one.
    generation: u64,
    slots: Vec<SlotBuffers>,
    /// The device-local palette every slot's staged copies and the GPU
    /// pose write, and the shaders read in those modes.
    device_palette: DevicePalette,
    /// The skinned output, one for every slot: the skin dispatches write it,
    /// the draws and readbacks read it.
    output: SkinnedOutput,
    /// This frame's batches (`write_batches`): capacity for every run at
    /// every level and a cut per window, reserved when characters are added.
    batches: Vec<batches::SkinBatch>,
    /// Per character, where this frame placed its output
    /// (`plan::OutputPlaces::entry`, or `batches::NOT_PLACED`) and how many
    /// vertices it skinned there; the frame's windows.
    places: Vec<u32>,
    placed_vertices: Vec<u32>,
    windows: OutputWindows,
    upload_mode: PaletteUpload,
    /// Poses the characters whose input carries a playback (`set_pose_program`).
    gpu_pose: Option<gpu_pose::GpuPose>,
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
        let pipelines = SkinPipelines::new(ctx, shading, reads)?;
        let device_palette = match DevicePalette::new(ctx, reads) {
            Ok(palette) => palette,
            Err(e) => {
                pipelines.destroy(ctx);
                return Err(e);
            }
        };
        let output = match SkinnedOutput::new(ctx) {
            Ok(output) => output,
            Err(e) => {
                device_palette.destroy(ctx);
                pipelines.destroy(ctx);
                return Err(e);
            }
        };
        let mut pass = SkinPass {
            shading,
            palette_reads: reads,
            bindings: reads.bindings(),
            pipelines,
            characters: Vec::new(),
            models: Vec::new(),
            layout: SkinLayout::with_window_vertices(OutputWindows::capacity(
                ctx.buffer_limits.output_buffer_bytes,
            )?),
            streams: StaticStreams::new(),
            generation: 0,
            slots: Vec::with_capacity(FRAMES_IN_FLIGHT),
            device_palette,
            output,
            batches: Vec::new(),
            places: Vec::new(),
            placed_vertices: Vec::new(),
            windows: OutputWindows::default(),
            upload_mode: PaletteUpload::default(),
            gpu_pose: None,
        };
        match pass.create_slots(ctx) {
            Ok(()) => Ok(pass),
            Err(e) => {
                pass.destroy(ctx);
                Err(e)
            }
        }
    }

    /// Every frame slot's (empty) buffers and their texel views.
    fn create_slots(&mut self, ctx: &GpuContext) -> Result<(), GpuError> {
        for i in 0..FRAMES_IN_FLIGHT {
            self.slots.push(SlotBuffers::new(ctx, i)?);
            let slot = self.slots.last_mut().expect("the slot just pushed");
            slot.make_views(ctx, self.palette_reads)?;
        }
        Ok(())
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
        self.add_characters(ctx, ring, gpu, model, 1)
    }

    /// `add_character` `count` times (at least once), the buffers grown
    /// once for all of them (a crowd of 100,000 makes each buffer once,
    /// not a chain of larger ones). The first one's id; on error none is added.
    pub fn add_characters(
        &mut self,
        ctx: &GpuContext,
        ring: &mut FrameRing,
        gpu: Arc<GpuModel>,
        model: Arc<Model>,
        count: u32,
    ) -> Result<CharacterId, GpuError> {
        let existing = self.models.iter().position(|m| Arc::ptr_eq(m, &gpu));
        let is_new_model = existing.is_none();
        let mark = self.layout.mark();
        let placed = match existing {
            Some(i) => Ok(i),
            None => self.layout.add_model(gpu.table()),
        }
        .and_then(|m| self.layout.add_characters(m, gpu.table(), &model, count));
        if let Err(e) = placed {
            self.layout.roll_back(mark);
            return Err(e);
        }
        if is_new_model {
            self.models.push(gpu.clone());
        }
        let first = self.characters.len();
        let count = count.max(1) as usize;
        self.characters.resize_with(first + count, || Character { gpu: gpu.clone(), model: model.clone() });
        // At most one copy region per character (these included).
        let regions = self.characters.len();
        for slot in &mut self.slots {
            slot.held.resize(regions, None);
            slot.staged.resize(regions, None);
            slot.copies.reserve(regions);
            slot.pending.reserve(regions);
            slot.pieces
                .resize_with(regions.div_ceil(crate::render::chunked::CHUNK), UploadPiece::with_capacity);
        }
        self.device_palette.held.resize(regions, None);
        self.batches.clear();
        let cuts = MAX_OUTPUT_WINDOWS as usize;
        self.batches.reserve(self.layout.runs().len() * DETAIL_LEVELS + cuts);
        self.places.resize(regions, batches::NOT_PLACED);
        self.placed_vertices.resize(regions, 0);
        self.generation += 1;
        if let Err(e) = self.fit_buffers(ctx, ring, is_new_model) {
            self.undo_add(ctx, ring, mark, first, is_new_model);
            return Err(e);
        }
        Ok(CharacterId(first))
    }

    /// Makes the buffers hold the layout after a character was added: the
    /// device's limits checked, the streams concatenated again when the
    /// character brought a new model (and there are several), the slots
    /// grown, the stream views matched.
    fn fit_buffers(
        &mut self,
        ctx: &GpuContext,
        ring: &mut FrameRing,
        is_new_model: bool,
    ) -> Result<(), GpuError> {
        let largest = ctx.buffer_limits.largest_buffer();
        self.layout.check_ranges(&ctx.properties.limits, largest, self.palette_reads)?;
        if is_new_model && self.models.len() > 1 {
            self.streams.rebuild(ctx, ring, &self.layout, &self.models)?;
        }
        self.ensure_capacity(ctx, ring)?;
        self.streams.sync_views(ctx, ring, &self.bindings, &self.models)
    }

    /// Undoes the characters just added from `first` (`fit_buffers`
    /// failed): back to the previous layout, which the buffers still fit.
    fn undo_add(
        &mut self,
        ctx: &GpuContext,
        ring: &mut FrameRing,
        mark: Mark,
        first: usize,
        is_new_model: bool,
    ) {
        self.characters.truncate(first);
        self.places.truncate(first);
        self.placed_vertices.truncate(first);
        if is_new_model {
            self.models.pop();
        }
        self.layout.roll_back(mark);
        self.slots.iter_mut().for_each(|s| {
            s.held.truncate(first);
            s.staged.truncate(first);
            s.drop_staged();
            s.records_generation = None;
        });
        self.device_palette.held.truncate(first);
        // The views must match the streams bound now: a concatenation
        // made before a later step failed stays bound (it holds the
        // remaining models' streams at the same offsets). Should that
        // fail too, a view stays null and `dispatch` says so.
        let _ = self.streams.sync_views(ctx, ring, &self.bindings, &self.models);
    }

    /// Grows every slot's buffers to the current layout; replaced buffers are
    /// retired through the ring (a submitted frame may still use them).
    fn ensure_capacity(&mut self, ctx: &GpuContext, ring: &mut FrameRing) -> Result<(), GpuError> {
        let sizes = self.layout.slot_sizes();
        let limits = GrowthLimits::of(ctx);
        for (i, slot) in self.slots.iter_mut().enumerate() {
            slot.grow(ctx, ring, i, sizes, limits, self.palette_reads)?;
        }
        self.device_palette.grow(ctx, ring, sizes.palette, limits, self.palette_reads)?;
        if let Some(pose) = &mut self.gpu_pose {
            pose.ensure_capacity(ctx, ring, self.characters.len())?;
        }
        Ok(())
    }

    /// Poses on the GPU, with `program`, every character whose input
    /// carries a `PosePlayback` of that program (`FramePoses::playback`);
    /// `None` turns it off. Characters posed so must be of the model of
    /// `like` (their palettes are laid out alike). The shaders then read
    /// the device-local palette in every upload mode. Call between
    /// frames; the GPU must not be using the pass's pose objects (wait
    /// for it first when replacing a program).
    pub fn set_pose_program(
        &mut self,
        ctx: &GpuContext,
        ring: &mut FrameRing,
        program: Option<Arc<PoseProgram>>,
        like: CharacterId,
    ) -> Result<(), GpuError> {
        if let Some(old) = self.gpu_pose.take() {
            old.destroy(ctx);
        }
        self.forget_poses();
        let Some(program) = program else { return Ok(()) };
        if self.shading.palette_holds_dual_quaternions() {
            return Err(GpuError::new(
                "GPU pose writes matrices into the palette: it cannot feed dual quaternions split on the CPU \
                 (use --dqs-split shader)",
            ));
        }
        let (character, place) = self
            .characters
            .get(like.0)
            .zip(self.layout.characters().get(like.0))
            .ok_or_else(|| GpuError::new(format!("GPU pose: no character {}", like.0)))?;
        if program.joints() != character.model.skeleton.len() {
            return Err(GpuError::new(format!(
                "GPU pose: the program poses {} joints, {} has {}",
                program.joints(),
                character.model.file,
                character.model.skeleton.len()
            )));
        }
        let mut pose = gpu_pose::GpuPose::new(ctx, program, &character.model.rig, place)?;
        if let Err(e) = pose.ensure_capacity(ctx, ring, self.characters.len()) {
            pose.destroy(ctx);
            return Err(e);
        }
        self.gpu_pose = Some(pose);
        Ok(())
    }

    /// The program posing characters on the GPU (`set_pose_program`).
    pub fn pose_program(&self) -> Option<&Arc<PoseProgram>> {
        self.gpu_pose.as_ref().map(|p| p.program())
    }

    /// Makes every slot and the device palette hold no known pose (each
    /// character is written again), and drops what the slots staged.
    fn forget_poses(&mut self) {
        for slot in &mut self.slots {
            slot.held.iter_mut().for_each(|h| *h = None);
            slot.drop_staged();
        }
        self.device_palette.forget();
    }

    /// Whether the shaders read the device-local palette: in the staged
    /// upload modes, and whenever the GPU poses (it writes there).
    fn reads_device_palette(&self) -> bool {
        self.upload_mode.staged() || self.gpu_pose.is_some()
    }

    /// The palette the shaders of frame slot `slot_index` read and its
    /// texel view (null where they read by pointer): the shared device
    /// palette (`reads_device_palette`), else the slot's host palette.
    fn read_palette(&self, slot_index: usize) -> (&Buffer, vk::BufferView) {
        if self.reads_device_palette() {
            (&self.device_palette.buffer, self.device_palette.view)
        } else {
            let slot = &self.slots[slot_index];
            (&slot.palette, slot.palette_view)
        }
    }

    /// How the latest recorded frame's output splits into buffers
    /// (`write_batches`).
    pub fn output_windows(&self) -> OutputWindows {
        self.windows
    }

    /// Records this frame's skinning into `slot`: `upload`s changed poses,
    /// dispatches each batch, and records the barrier that makes the output
    /// readable by vertex input, vertex shaders and transfers later in the
    /// same command buffer. Character `c` of `inputs` is `CharacterId(c)`.
    /// With `levels`, each character's primitives are skinned only where
    /// its detail level draws (`render::skin_levels`); the other vertices
    /// keep what the slot's output last held, and a character no pass
    /// draws is neither uploaded nor skinned. Allocates nothing on the heap.
    pub fn record<P: FramePoses + ?Sized>(
        &mut self,
        ctx: &GpuContext,
        slot: &mut FrameSlot,
        inputs: &P,
        levels: Option<SkinLevels>,
        timestamps: bool,
    ) -> Result<SkinStats, GpuError> {
        let mut stats = self.upload(slot, inputs, levels)?;
        self.write_batches(ctx, slot, levels)?;
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
            self.forget_poses();
        }
    }

    /// shaders/common.glsl's inputs for slot `slot_index`
    /// (`FrameSlot::index`): set 0's sources, influences, morph ranges,
    /// morph entries (the streams the records index: the pass's
    /// concatenation when several models are registered, else the one
    /// model's own buffers), then this slot's morph weights and skin
    /// records, each bound whole; and the address of the palette the
    /// shaders read in this upload mode. For the vertex-skinning draw of the
    /// frame that `upload`ed into that slot; the draw of primitive `o` uses
    /// record `o.record`. The handles change when characters are added.
    /// `None` before the first character is added.
    pub fn vertex_skinning_buffers(&self, ctx: &GpuContext, slot_index: usize) -> Option<VertexSkinning> {
        let ([sources, influences, ranges, entries], _) = self.streams.bound(&self.models)?;
        let b = &self.slots[slot_index];
        let bound = [sources, influences, ranges, entries, b.weights.raw, b.records.raw];
        let (palette, palette_view) = self.read_palette(slot_index);
        Some(VertexSkinning {
            buffers: bound.map(|buffer| vk::DescriptorBufferInfo {
                buffer,
                offset: 0,
                range: vk::WHOLE_SIZE,
            }),
            palette_view,
            palette_address: palette.device_address(ctx),
        })
    }

    /// The palette the shaders of frame slot `slot_index` read in this
    /// upload mode (`BoneMatrix` entries, `SkinLayout` places them): the
    /// device-local one in the staged modes and under a GPU pose (shared
    /// by every slot: written by the latest frame that changed a
    /// character's entries, by copy or pose dispatch), else the slot's own.
    pub fn palette_buffer(&self, slot_index: usize) -> vk::Buffer {
        self.read_palette(slot_index).0.raw
    }

    /// The copies that gather the latest recorded frame's output into one
    /// buffer the way the layout numbers its vertices
    /// (`PrimitiveOutput::output_offset` times `OUTPUT_STRIDE`): per
    /// character it skinned, the vertices of its level (all of them at
    /// level 0, in the layout's order; at a coarser level its level's, one
    /// after the other from its first), from the window the frame placed
    /// it in. For the frame that skinned it, after the skinning (the
    /// barrier `record` ends with).
    pub fn output_copies(&self) -> impl Iterator<Item = (vk::Buffer, vk::BufferCopy)> + '_ {
        let placed = self.places.iter().zip(&self.placed_vertices);
        let characters = self.layout.characters().iter().zip(placed);
        characters.filter(|(_, (place, _))| **place != batches::NOT_PLACED).filter_map(
            move |(c, (place, n))| {
                let (window, first) = plan::OutputPlaces::locate(*place);
                let region = vk::BufferCopy {
                    src_offset: u64::from(first) * OUTPUT_STRIDE,
                    dst_offset: u64::from(c.outputs.first()?.output_offset) * OUTPUT_STRIDE,
                    size: u64::from(*n) * OUTPUT_STRIDE,
                };
                Some((self.output.buffers.get(window as usize)?.raw, region))
            },
        )
    }

    /// The device address of slot `slot_index`'s `plan::OutputPlaces`: each
    /// output window's buffer address, then where in them the slot's latest
    /// frame placed each character it skinned. The windows hold a
    /// `PackedVertex` per vertex (24-byte stride: f32 position, octahedral
    /// normal and tangent, handedness), scene space, read by pointer in
    /// the frame that skinned them, after the skinning (or copied,
    /// `output_copies`).
    pub fn output_places_address(&self, slot_index: usize) -> vk::DeviceAddress {
        self.slots[slot_index].places_address
    }

    /// Where each primitive of each mesh instance of `character` lands in the
    /// output, in `Model::instances` order then primitive order.
    pub fn outputs(&self, character: CharacterId) -> &[PrimitiveOutput] {
        &self.layout.characters()[character.0].outputs
    }

    /// First output vertex of primitive `primitive` (index into
    /// `Mesh::primitives`) of instance `instance` (index into `Model::instances`).
    pub fn output_offset(&self, character: CharacterId, instance: usize, primitive: usize) -> Option<u32> {
        let outputs = &self.layout.characters().get(character.0)?.outputs;
        let first = outputs.iter().position(|o| o.instance == instance)?;
        let o = outputs.get(first + primitive).filter(|o| o.instance == instance)?;
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

    /// Where every registered character lands (plain data).
    pub fn layout(&self) -> &SkinLayout {
        &self.layout
    }

    /// Bytes of the skinned output's buffers: what the largest recent
    /// frame needed, with headroom (`skinned_output`).
    pub fn skinned_output_bytes(&self) -> u64 {
        self.output.bytes()
    }

    /// Bytes the skinning dispatch reads and writes per frame, all characters:
    /// `(read, written)`. Read: source vertices, influence sets, morph
    /// ranges and entries, records, and each palette entry and morph weight
    /// once (caches serve the repeats). Written: the skinned vertices.
    pub fn frame_traffic(&self) -> (u64, u64) {
        self.layout.characters().iter().fold((0, 0), |(r, w), c| (r + c.traffic.0, w + c.traffic.1))
    }

    /// Output vertices per frame (all characters).
    pub fn total_vertices(&self) -> u32 {
        self.layout.total_vertices()
    }

    /// Destroys the pass's objects; the caller waited for the GPU (e.g.
    /// `FrameRing::wait_all`). The `GpuModel`s are the caller's.
    pub fn destroy(self, ctx: &GpuContext) {
        for slot in self.slots {
            slot.destroy(ctx);
        }
        self.device_palette.destroy(ctx);
        self.output.destroy(ctx);
        self.streams.destroy(ctx);
        self.pipelines.destroy(ctx);
        if let Some(pose) = self.gpu_pose {
            pose.destroy(ctx);
        }
    }
}
