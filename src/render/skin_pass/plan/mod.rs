//! Where every registered character's skinning lands, as plain data
//! ([`SkinLayout`]): where each distinct model's static streams start in
//! their concatenation, each character's palette range (skins, then one
//! entry per rigidly moving instance), morph weights and output vertices,
//! the skin records of its primitives, the runs the dispatches skin
//! ([`SkinRun`]), the bytes the buffers need and whether the device's
//! limits hold them.
//!
//! Computed from the model and its stream table (`gpu_model::StreamTable`)
//! alone: no device, no buffer, no command, so it is tested without a GPU.
//! `SkinPass` sizes and fills its buffers from it; this module must never
//! touch a Vulkan object.

use super::palette_reads::{PaletteReads, TEXEL_FORMATS, texel_bytes};
use super::{OUTPUT_STRIDE, WORKGROUP_SIZE};
use crate::asset::Model;
use crate::gpu::GpuError;
use crate::render::detail_levels::DETAIL_LEVELS;
use crate::render::gpu_model::{StreamCounts, StreamTable};
use crate::render::layout::{Influence, MorphEntry, NO_MORPHS, PackedVertex, SkinRecord};
use ash::vk;

mod placer;
mod runs;
use placer::Placer;
pub use runs::SkinRun;

/// Byte sizes of the static streams' elements (see `layout`).
pub(super) const SOURCE_BYTES: u64 = std::mem::size_of::<PackedVertex>() as u64;
pub(super) const INFLUENCE_BYTES: u64 = std::mem::size_of::<Influence>() as u64;
pub(super) const MORPH_ENTRY_BYTES: u64 = std::mem::size_of::<MorphEntry>() as u64;
/// Bytes of one palette entry (a `BoneMatrix` or `PaletteDualQuat`).
pub(super) const PALETTE_ENTRY_BYTES: u64 = 64;
/// Bytes of one `SkinRecord`.
const RECORD_BYTES: u64 = std::mem::size_of::<SkinRecord>() as u64;

/// Set 0 bindings of the four static streams, also their index in
/// `SkinLayout::stream_bytes`.
pub(super) const SOURCES: usize = 0;
pub(super) const INFLUENCES: usize = 1;
pub(super) const MORPH_RANGES: usize = 2;
pub(super) const MORPH_ENTRIES: usize = 3;

/// Where one primitive of one mesh instance of a character lands in the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrimitiveOutput {
    /// Index into `Model::instances`.
    pub instance: usize,
    /// Index into `GpuModel::primitives` (mesh, material, index lists).
    pub gpu_primitive: usize,
    /// First vertex in the layout's numbering of the output: characters
    /// end to end, each one's primitives in turn (where a readback lays a
    /// frame's output out, `SkinPass::output_copies`). A frame places
    /// each character it skins afresh (`SkinPass::write_batches`), so this
    /// less the character's first is where the primitive's full-detail
    /// vertices start in its part of the frame's output.
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

/// Where a distinct model's streams start in the concatenation (element
/// indices), and their counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelPlace {
    /// First source vertex.
    pub sources: u32,
    /// First influence.
    pub influences: u32,
    /// First morph range entry.
    pub morph_ranges: u32,
    /// First morph entry.
    pub morph_entries: u32,
    /// The model's own element counts.
    pub counts: StreamCounts,
    /// Where its skin level tables start in `SkinLayout::level_words`.
    pub skin_levels: u32,
}

impl ModelPlace {
    /// One past its last element of each stream (`SOURCES`..`MORPH_ENTRIES`).
    fn ends(&self) -> [u32; 4] {
        [
            self.sources + self.counts.sources,
            self.influences + self.counts.influences,
            self.morph_ranges + self.counts.morph_ranges,
            self.morph_entries + self.counts.morph_entries,
        ]
    }
}

/// Where one character's skinning lands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CharacterPlace {
    /// Its model's index in `SkinLayout::models`.
    pub model: usize,
    /// Its palette entries, `[start, end)`: contiguous (skins, then rigid entries).
    pub palette_range: (u32, u32),
    /// Bytes its skinning reads and writes per frame (see `SkinPass::frame_traffic`).
    pub traffic: (u64, u64),
    /// Absolute palette index of each skin's first joint (skins that share
    /// a palette run, [`Rig::palette_ranges`](crate::anim::Rig::palette_ranges), share it).
    pub skin_bases: Vec<u32>,
    /// (skeleton joint, absolute palette index) of each unskinned instance.
    pub rigid: Vec<(u32, u32)>,
    /// Its first morph weight.
    pub weight_base: u32,
    /// Vertices the skin pass skins of it at each detail level
    /// (`render::skin_levels`; level 0: all of them).
    pub level_vertices: [u32; DETAIL_LEVELS],
    /// Each primitive of each mesh instance, in `Model::instances` order
    /// then primitive order.
    pub outputs: Vec<PrimitiveOutput>,
}

/// Bytes of each skinning buffer a layout needs: a frame slot's host
/// buffers, and the device palette every slot shares (as large as a
/// slot's palette). The output is sized by each frame (`OutputWindows`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotSizes {
    /// Palette entries.
    pub palette: u64,
    /// Morph weights (f32).
    pub weights: u64,
    /// Skin records, then what the skin pass reads of the runs and the
    /// detail levels after them (`SkinLayout::record_buffer_words`).
    pub records: u64,
    /// The characters a frame skins, grouped by run and level (u32 each;
    /// room for every character).
    pub work: u64,
    /// Where the frame placed each character's output (`OutputPlaces`).
    pub places: u64,
}

/// Where the parts of a slot's record buffer start, in u32 words
/// (`SkinLayout::record_buffer_words`); skin_main.glsl finds them so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordBufferWords {
    /// `SkinLayout::record_tables`, right after the records.
    pub record_tables: u64,
    /// `SkinLayout::level_words`.
    pub level_words: u64,
    /// `SkinLayout::run_starts`.
    pub run_starts: u64,
    /// One past the last word.
    pub end: u64,
}

/// The most buffers one frame's skinned output may span (each bound by a
/// descriptor set from the frame slot's pool, sized for them; and named by
/// the top bits of an `OutputPlaces` entry).
pub const MAX_OUTPUT_WINDOWS: u32 = 64;

/// The most vertices one window holds: its vertex index fills the low 26
/// bits of an `OutputPlaces` entry (1.5 GiB of output a window).
pub const MAX_WINDOW_VERTICES: u32 = 1 << WINDOW_SHIFT;

/// Where the window sits in an `OutputPlaces` entry (mesh.vert's `WINDOW_SHIFT`).
pub const WINDOW_SHIFT: u32 = 26;

/// How a frame's skinned output is split: `count` windows, each its own
/// buffer of at most `vertices` output vertices, window k holding the
/// frame's vertices from k * `vertices`, written by the dispatches of the
/// batches placed in it. A crowd's output may be larger than one buffer
/// may be (the largest buffer: 4 GiB on NVIDIA's drivers) or one binding
/// (`maxStorageBufferRange`: 128 MiB on lavapipe); each window fits both.
/// No character straddles two windows (`SkinPass::write_batches` starts
/// the next window rather), so a draw and a dispatch read and write each
/// character in one buffer. `vertices` is whole workgroups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OutputWindows {
    /// Windows (buffers); 0 when there is nothing to skin.
    pub count: u32,
    /// Output vertices one window holds (a multiple of `WORKGROUP_SIZE`).
    pub vertices: u32,
    /// Output vertices of the whole frame, gaps before window starts included.
    pub total: u32,
}

impl OutputWindows {
    /// The output vertices one window holds where a buffer may hold at most
    /// `buffer_bytes` (`BufferLimits::output_buffer_bytes`): whole
    /// workgroups, at most [`MAX_WINDOW_VERTICES`]. An error when not even
    /// one workgroup's output fits.
    pub fn capacity(buffer_bytes: u64) -> Result<u32, GpuError> {
        let unit = u64::from(WORKGROUP_SIZE);
        let most = u64::from(MAX_WINDOW_VERTICES);
        let vertices = (buffer_bytes / OUTPUT_STRIDE).min(most) / unit * unit;
        if vertices == 0 {
            return Err(GpuError::new(format!(
                "skin pass: an output buffer of at most {buffer_bytes} bytes holds less than one workgroup's output"
            )));
        }
        Ok(vertices as u32)
    }

    /// Output vertices window `k` holds (the last one: those past the others).
    pub fn used(&self, k: u32) -> u32 {
        let first = u64::from(k) * u64::from(self.vertices);
        (u64::from(self.total).saturating_sub(first)).min(u64::from(self.vertices)) as u32
    }

    /// Bytes of window `k`'s buffer.
    pub fn bytes(&self, k: u32) -> u64 {
        u64::from(self.used(k)) * OUTPUT_STRIDE
    }
}

/// Bytes before `OutputPlaces`' per-character words: an address per window.
pub const PLACES_HEADER_BYTES: u64 = 8 * MAX_OUTPUT_WINDOWS as u64;

/// A slot's table of where the frame placed each character's output,
/// which the draws read by pointer (mesh.vert's `OutputPlaces`): the
/// device address of each window's buffer (`MAX_OUTPUT_WINDOWS` u64s),
/// then per character `window << WINDOW_SHIFT | first vertex in it`
/// (written for the characters the frame skins).
pub struct OutputPlaces;

impl OutputPlaces {
    /// The entry of a character placed at vertex `first` of window `window`.
    pub fn entry(window: u32, first: u32) -> u32 {
        debug_assert!(window < MAX_OUTPUT_WINDOWS && first < MAX_WINDOW_VERTICES);
        window << WINDOW_SHIFT | first
    }

    /// The window and first vertex of an `entry`.
    pub fn locate(entry: u32) -> (u32, u32) {
        (entry >> WINDOW_SHIFT, entry & (MAX_WINDOW_VERTICES - 1))
    }

    /// Bytes of the table for `characters` characters.
    pub fn bytes(characters: usize) -> u64 {
        PLACES_HEADER_BYTES + 4 * characters.max(1) as u64
    }
}

/// One region of a model's stream copied into the concatenation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamCopy {
    /// Index of the model (`SkinLayout::models`).
    pub model: usize,
    /// The stream (`SOURCES`, `INFLUENCES` or `MORPH_ENTRIES`; morph ranges
    /// are rebased on the host, `SkinLayout::rebased_morph_ranges`).
    pub stream: usize,
    /// Byte offset in the concatenated stream (the model's whole stream is copied from 0).
    pub dst_offset: u64,
    /// Bytes.
    pub size: u64,
}

/// A layout's sizes before a change, to roll back to (`SkinLayout::mark`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    models: usize,
    characters: usize,
    records: usize,
    level_words: usize,
    palette_len: u32,
    weight_len: u32,
    total_vertices: u32,
}

/// Every registered character's place in the skinning buffers (see the
/// module's doc). Characters are appended; a failed or undone addition
/// rolls back to a `Mark`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkinLayout {
    /// Output vertices one window (buffer) of a frame's output holds
    /// (`OutputWindows::capacity`).
    window_vertices: u32,
    models: Vec<ModelPlace>,
    characters: Vec<CharacterPlace>,
    records: Vec<SkinRecord>,
    /// Per record, the absolute offset of its primitive's skin level
    /// table in `level_words`, or `NO_SKIN_LEVELS`.
    record_tables: Vec<u32>,
    /// Every model's skin level tables (`render::skin_levels`), model by model.
    level_words: Vec<u32>,
    /// The runs of `characters`, rebuilt whenever they change.
    runs: Vec<SkinRun>,
    /// Per run and level, the thread at which each of a character's
    /// records starts (`SkinRun::starts`), rebuilt with `runs`.
    run_starts: Vec<u32>,
    /// Whether any of `records` has morph targets; updated with `runs`.
    morph_targets: bool,
    palette_len: u32,
    weight_len: u32,
    total_vertices: u32,
}

/// Windows of the most vertices one may hold.
impl Default for SkinLayout {
    fn default() -> Self {
        SkinLayout::with_window_vertices(MAX_WINDOW_VERTICES)
    }
}

impl SkinLayout {
    /// An empty layout whose frames' output windows hold `window_vertices`
    /// vertices each (`OutputWindows::capacity` of the device's limit;
    /// rounded down to whole workgroups, at least one, at most
    /// [`MAX_WINDOW_VERTICES`]).
    pub fn with_window_vertices(window_vertices: u32) -> Self {
        let unit = WORKGROUP_SIZE;
        SkinLayout {
            window_vertices: (window_vertices.min(MAX_WINDOW_VERTICES) / unit * unit).max(unit),
            models: Vec::new(),
            characters: Vec::new(),
            records: Vec::new(),
            record_tables: Vec::new(),
            level_words: Vec::new(),
            runs: Vec::new(),
            run_starts: Vec::new(),
            morph_targets: false,
            palette_len: 0,
            weight_len: 0,
            total_vertices: 0,
        }
    }

    /// Output vertices one window (buffer) of a frame's output holds.
    pub fn window_vertices(&self) -> u32 {
        self.window_vertices
    }

    /// Places a distinct model's streams (of `table`) after the previous
    /// models' in the concatenation, and its skin level tables after
    /// theirs; its index in `models`.
    pub fn add_model(&mut self, table: StreamTable<'_>) -> Result<usize, GpuError> {
        let counts = table.counts;
        let bases = self.models.last().map_or([0; 4], ModelPlace::ends);
        let more = [counts.sources, counts.influences, counts.morph_ranges, counts.morph_entries];
        let what = ["source vertices", "influences", "morph ranges", "morph entries"];
        for ((base, more), what) in bases.iter().zip(more).zip(what) {
            base.checked_add(more).ok_or_else(|| GpuError::new(format!("too many {what}")))?;
        }
        let [sources, influences, morph_ranges, morph_entries] = bases;
        if u32::try_from(self.level_words.len() + table.skin_levels.len()).is_err() {
            return Err(GpuError::new("too many skin level words"));
        }
        let skin_levels = self.level_words.len() as u32;
        self.level_words.extend_from_slice(table.skin_levels);
        self.models.push(ModelPlace {
            sources,
            influences,
            morph_ranges,
            morph_entries,
            counts,
            skin_levels,
        });
        Ok(self.models.len() - 1)
    }

    /// Lays out one more character of `asset`, whose model was added as
    /// `model` (what `add_model` returned) with stream table `table`, after
    /// the existing ones: its palette, morph weights, outputs and records.
    /// Its index in `characters`. On error the layout is unchanged.
    pub fn add_character(
        &mut self,
        model: usize,
        table: StreamTable<'_>,
        asset: &Model,
    ) -> Result<usize, GpuError> {
        self.add_characters(model, table, asset, 1)
    }

    /// `add_character` `count` times (at least once), the runs rebuilt
    /// once at the end: a crowd of 100,000 is laid out in
    /// one pass. The index of the first. On error the layout is unchanged.
    pub fn add_characters(
        &mut self,
        model: usize,
        table: StreamTable<'_>,
        asset: &Model,
        count: u32,
    ) -> Result<usize, GpuError> {
        let place =
            *self.models.get(model).ok_or_else(|| GpuError::new(format!("skin layout: no model {model}")))?;
        let mark = self.mark();
        let first = self.characters.len();
        for _ in 0..count.max(1) {
            let placed = match Placer::start(self, (model, place), table).place(asset) {
                Ok(placed) => placed,
                Err(e) => {
                    self.roll_back(mark);
                    return Err(e);
                }
            };
            self.palette_len = placed.palette_end;
            self.weight_len = placed.weight_end;
            self.total_vertices = placed.output_end;
            self.records.extend_from_slice(&placed.records);
            self.record_tables.extend_from_slice(&placed.record_tables);
            self.characters.push(placed.character);
        }
        self.regroup();
        Ok(first)
    }

    /// The sizes to roll back to.
    pub fn mark(&self) -> Mark {
        Mark {
            models: self.models.len(),
            characters: self.characters.len(),
            records: self.records.len(),
            level_words: self.level_words.len(),
            palette_len: self.palette_len,
            weight_len: self.weight_len,
            total_vertices: self.total_vertices,
        }
    }

    /// Undoes every model and character added since `mark`.
    pub fn roll_back(&mut self, mark: Mark) {
        self.models.truncate(mark.models);
        self.characters.truncate(mark.characters);
        self.records.truncate(mark.records);
        self.record_tables.truncate(mark.records);
        self.level_words.truncate(mark.level_words);
        (self.palette_len, self.weight_len, self.total_vertices) =
            (mark.palette_len, mark.weight_len, mark.total_vertices);
        self.regroup();
    }

    /// The runs and the morph-target flag, from the characters and records.
    fn regroup(&mut self) {
        let (runs, starts) = (&mut self.runs, &mut self.run_starts);
        let (records, levels) = (&self.records, &self.record_tables);
        runs::find_runs(&self.characters, records, levels, &self.level_words, runs, starts);
        self.morph_targets = self.records.iter().any(|r| r.morph_offset != NO_MORPHS);
    }

    /// The distinct models, in the order they were added.
    pub fn models(&self) -> &[ModelPlace] {
        &self.models
    }

    /// The characters, in the order they were added.
    pub fn characters(&self) -> &[CharacterPlace] {
        &self.characters
    }

    /// Every skin record, character by character.
    pub fn records(&self) -> &[SkinRecord] {
        &self.records
    }

    /// Per record, the absolute offset of its skin level table in
    /// `level_words` (or `NO_SKIN_LEVELS`).
    pub fn record_tables(&self) -> &[u32] {
        &self.record_tables
    }

    /// Every model's skin level tables, model by model.
    pub fn level_words(&self) -> &[u32] {
        &self.level_words
    }

    /// Where the record buffer's parts start, in u32 words: the records
    /// (8 words each) at 0, `record_tables` (1 each), `level_words`, and
    /// `run_starts`; the end rounded up to whole 4-word texels. skin.comp
    /// reads the buffer as RGBA32UI texels, and a view holds whole ones:
    /// without the rounding the last run's coarsest starts could fall in a
    /// partial texel past the view, read as 0.
    pub fn record_buffer_words(&self) -> RecordBufferWords {
        let records = self.records.len() as u64;
        let record_tables = RECORD_BYTES / 4 * records;
        let level_words = record_tables + records;
        let run_starts = level_words + self.level_words.len() as u64;
        let end = (run_starts + self.run_starts.len() as u64).next_multiple_of(4);
        RecordBufferWords { record_tables, level_words, run_starts, end }
    }

    /// The characters' runs, in character order (see [`SkinRun`]).
    pub fn runs(&self) -> &[SkinRun] {
        &self.runs
    }

    /// Per run and level, the thread at which each of a character's
    /// records starts (`SkinRun::starts` says where a run's lie).
    pub fn run_starts(&self) -> &[u32] {
        &self.run_starts
    }

    /// Whether any record has morph targets.
    pub fn morph_targets(&self) -> bool {
        self.morph_targets
    }

    /// Output vertices, all characters at full detail (the layout's
    /// numbering, `PrimitiveOutput::output_offset`).
    pub fn total_vertices(&self) -> u32 {
        self.total_vertices
    }

    /// Bytes of each concatenated static stream (`SOURCES`..`MORPH_ENTRIES`):
    /// every model's, end to end.
    pub fn stream_bytes(&self) -> [u64; 4] {
        let ends = self.models.last().map_or([0; 4], ModelPlace::ends);
        let element = [SOURCE_BYTES, INFLUENCE_BYTES, 4, MORPH_ENTRY_BYTES];
        std::array::from_fn(|s| u64::from(ends[s]) * element[s])
    }

    /// Bytes of each skinning buffer (see [`SlotSizes`]).
    pub fn slot_sizes(&self) -> SlotSizes {
        SlotSizes {
            palette: u64::from(self.palette_len) * PALETTE_ENTRY_BYTES,
            weights: u64::from(self.weight_len) * 4,
            records: self.record_buffer_words().end * 4,
            work: self.characters.len().max(1) as u64 * 4,
            places: OutputPlaces::bytes(self.characters.len()),
        }
    }

    /// The copies that concatenate every model's sources, influences and
    /// morph entries (empty streams skipped), model by model.
    pub fn stream_copies(&self) -> impl Iterator<Item = StreamCopy> + '_ {
        self.models.iter().enumerate().flat_map(|(model, m)| {
            [
                (SOURCES, u64::from(m.sources), u64::from(m.counts.sources), SOURCE_BYTES),
                (INFLUENCES, u64::from(m.influences), u64::from(m.counts.influences), INFLUENCE_BYTES),
                (
                    MORPH_ENTRIES,
                    u64::from(m.morph_entries),
                    u64::from(m.counts.morph_entries),
                    MORPH_ENTRY_BYTES,
                ),
            ]
            .into_iter()
            .filter(|&(_, _, count, _)| count > 0)
            .map(move |(stream, first, count, bytes)| StreamCopy {
                model,
                stream,
                dst_offset: first * bytes,
                size: count * bytes,
            })
        })
    }

    /// The concatenated morph ranges stream: each model's `ranges` (given
    /// in model order) with its entry indices moved past the earlier
    /// models' morph entries.
    pub fn rebased_morph_ranges<'r>(&self, ranges: impl IntoIterator<Item = &'r [u32]>) -> Vec<u32> {
        let mut out = Vec::with_capacity((self.stream_bytes()[MORPH_RANGES] / 4) as usize);
        for (m, ranges) in self.models.iter().zip(ranges) {
            out.extend(ranges.iter().map(|r| r + m.morph_entries));
        }
        out
    }

    /// Every storage buffer is bound whole: each must fit
    /// `maxStorageBufferRange`. The palette, which grows with the crowd,
    /// is not: it is reached by pointer or texels and must fit
    /// `largest_buffer` (`BufferLimits::largest_buffer`). (The skinned
    /// output is sized and split into windows by each frame,
    /// `OutputWindows`.) Where skin.comp reads through texels (`reads`),
    /// also `maxTexelBufferElements`.
    pub fn check_ranges(
        &self,
        limits: &vk::PhysicalDeviceLimits,
        largest_buffer: u64,
        reads: PaletteReads,
    ) -> Result<(), GpuError> {
        let limit = u64::from(limits.max_storage_buffer_range);
        let streams = self.stream_bytes();
        let slot = self.slot_sizes();
        let sizes = [
            ("source vertices", streams[SOURCES]),
            ("influences", streams[INFLUENCES]),
            ("morph ranges", streams[MORPH_RANGES]),
            ("morph entries", streams[MORPH_ENTRIES]),
            ("palette", slot.palette),
            ("morph weights", slot.weights),
            ("skin records", slot.records),
            ("characters to skin", slot.work),
        ];
        // The palette (index 4) is not bound.
        let mut bound = sizes.iter().enumerate().filter(|&(i, _)| i != 4).map(|(_, s)| s);
        if let Some((what, size)) = bound.find(|(_, size)| *size > limit) {
            return Err(GpuError::new(format!(
                "skin pass: {what} need {size} bytes, more than the device's maxStorageBufferRange {limit}"
            )));
        }
        if slot.palette > largest_buffer {
            return Err(GpuError::new(format!(
                "skin pass: palette need {} bytes, more than the device's largest buffer \
                 ({largest_buffer} bytes)",
                slot.palette
            )));
        }
        if reads == PaletteReads::Storage {
            return Ok(());
        }
        // skin.comp reads these as texels (`TEXEL_FORMATS`): (index into
        // `sizes`, binding).
        let max = u64::from(limits.max_texel_buffer_elements);
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

#[cfg(test)]
mod tests;
