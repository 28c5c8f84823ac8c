//! Whether a crowd of one model fits the device, checked before anything
//! is posed or allocated. Every character's palette lives in one buffer
//! (the device-local one, shared by the frame slots; each slot stages in
//! its own host-visible one), never bound whole (read as texels or by pointer): it
//! must fit the largest buffer the device makes
//! (`BufferLimits::largest_buffer`), and the device-local memory. The
//! skinned output is split into windows, each its own buffer of at most
//! `BufferLimits::output_buffer_bytes` holding whole characters
//! (`skin_pass::OutputWindows`): one character's full detail must fit
//! one. How much output the crowd needs depends on each frame's detail
//! levels (a frame holds what it skins: 100,000 built-in characters
//! framed whole need about 0.2 GB, at full detail 11.7). At full detail
//! (`DrawDetail::Full`) every frame skins every character whole, so the
//! crowd's output must fit [`MAX_OUTPUT_WINDOWS`] windows and, with the
//! device palette, the device-local memory, checked here; at the levels
//! the camera picks, the frame checks what it needs itself and fails with
//! its bytes where that does not fit. Sized by the
//! device-free layout planner (`skin_pass::SkinLayout`) for one character,
//! times the crowd.
//!
//! The one place this limit is checked up front (`render`, `view` and
//! `bench` build scenes through `Renderer`, which calls it).

use super::frame_settings::DrawDetail;
use super::gpu_model::ModelStreams;
use super::skin_pass::{MAX_OUTPUT_WINDOWS, OUTPUT_STRIDE, OutputWindows, SkinLayout};
use crate::asset::Model;
use crate::gpu::{BufferLimits, GpuError};

/// What a crowd of one model needs of the skinning buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrowdNeed {
    /// Characters in the crowd.
    pub characters: u32,
    /// Bytes of one character's skinned output vertices at full detail.
    pub output_per_character: u64,
    /// Bytes of one character's palette entries.
    pub palette_per_character: u64,
    /// Whether every frame skins every character whole (`DrawDetail::Full`):
    /// the crowd's output is then known up front.
    pub whole: bool,
}

/// A crowd the device cannot hold: one line, naming the bytes and the limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{characters} characters of {file} need {needed} bytes of {what}, more than the device's \
     {limit_name} ({limit} bytes; at most {most} characters of this model fit)"
)]
pub struct CrowdTooLarge {
    /// The model.
    pub file: String,
    /// Characters asked for.
    pub characters: u32,
    /// What does not fit ("palettes in one buffer", ...).
    pub what: String,
    /// Its bytes.
    pub needed: u64,
    /// The limit's name ("largest buffer", "largest device-local heap", ...).
    pub limit_name: String,
    /// The limit.
    pub limit: u64,
    /// The most characters that fit.
    pub most: u64,
}

impl From<CrowdTooLarge> for GpuError {
    fn from(e: CrowdTooLarge) -> Self {
        GpuError::new(e.to_string())
    }
}

/// One limit a crowd must fit.
struct Bound {
    what: String,
    needed: u64,
    limit_name: String,
    limit: u64,
    /// The most characters within it.
    most: u64,
}

impl CrowdNeed {
    /// `characters` characters of `model`, laid out as the skin pass lays
    /// them out, drawn at `detail`.
    pub fn of(model: &Model, characters: u32, detail: DrawDetail) -> Result<Self, GpuError> {
        let streams = ModelStreams::build(model)?;
        let table = streams.table();
        let mut layout = SkinLayout::default();
        let index = layout.add_model(table)?;
        layout.add_character(index, table, model)?;
        let output_per_character = u64::from(layout.total_vertices()) * OUTPUT_STRIDE;
        let palette_per_character = layout.slot_sizes().palette;
        let whole = detail == DrawDetail::Full;
        Ok(CrowdNeed { characters, output_per_character, palette_per_character, whole })
    }

    /// The limits the crowd must fit, in the order they are checked.
    fn bounds(&self, limits: &BufferLimits) -> [Bound; 4] {
        let n = u64::from(self.characters);
        let (output, palette) = (self.output_per_character, self.palette_per_character);
        let per = |limit: u64, each: u64| limit.checked_div(each).unwrap_or(u64::MAX);
        // A device that cannot hold one workgroup's output holds no character.
        let vertices = OutputWindows::capacity(limits.output_buffer_bytes).unwrap_or(0);
        let window = u64::from(vertices) * OUTPUT_STRIDE;
        let windows = u64::from(MAX_OUTPUT_WINDOWS);
        // The output every frame holds at full detail; else each frame's own.
        let whole = if self.whole { output } else { 0 };
        // One skinned output and one device palette for every slot.
        let both = whole.saturating_add(palette);
        [
            Bound {
                what: "skinned output of one character".into(),
                needed: output,
                limit_name: "largest output buffer".into(),
                limit: window,
                most: if output <= window { u64::MAX } else { 0 },
            },
            Bound {
                what: "skinned output".into(),
                needed: whole.saturating_mul(n),
                limit_name: format!("{windows} largest output buffers"),
                limit: window.saturating_mul(windows),
                most: per(window, whole).saturating_mul(windows),
            },
            Bound {
                what: "palettes in one buffer".into(),
                needed: palette.saturating_mul(n),
                limit_name: "largest buffer".into(),
                limit: limits.largest_buffer(),
                most: per(limits.largest_buffer(), palette),
            },
            Bound {
                what: if self.whole { "skinned output and the device palette" } else { "the device palette" }
                    .into(),
                needed: both.saturating_mul(n),
                limit_name: "largest device-local heap".into(),
                limit: limits.device_local_bytes,
                most: per(limits.device_local_bytes, both),
            },
        ]
    }

    /// Fails when a buffer, or all of them, are larger than `limits` allow.
    pub fn check(&self, file: &str, limits: &BufferLimits) -> Result<(), CrowdTooLarge> {
        let bounds = self.bounds(limits);
        let most = bounds.iter().map(|b| b.most).min().unwrap_or(0);
        match bounds.into_iter().find(|b| u64::from(self.characters) > b.most) {
            Some(b) => Err(CrowdTooLarge {
                file: file.to_string(),
                characters: self.characters,
                what: b.what,
                needed: b.needed,
                limit_name: b.limit_name,
                limit: b.limit,
                most,
            }),
            None => Ok(()),
        }
    }
}

/// The most vertices a frame skins unless told otherwise
/// (`RenderSettings::max_skinned_vertices`): as many as half the largest
/// device-local heap holds of skinned output (the rest is for the palettes,
/// the model, the targets and the allocator's blocks), of what this
/// process may allocate of it as the device was opened
/// (`BufferLimits::device_local_budget`: other processes' share left
/// out where the driver says), and within the
/// output's [`MAX_OUTPUT_WINDOWS`] windows, less a character of
/// `character_vertices` per window (a window holds whole characters, so up
/// to one character's vertices of it may stay unused).
pub fn default_vertex_budget(limits: &BufferLimits, character_vertices: u64) -> u64 {
    let heap = limits.device_local_budget / 2 / OUTPUT_STRIDE;
    let window = OutputWindows::capacity(limits.output_buffer_bytes).map_or(0, u64::from);
    let windows = u64::from(MAX_OUTPUT_WINDOWS) * window.saturating_sub(character_vertices);
    heap.min(windows)
}

/// `characters` characters of `model` drawn at `detail` on a device with
/// `limits`: an error when their skinning buffers cannot be made.
pub fn check_crowd_fits(
    model: &Model,
    characters: u32,
    detail: DrawDetail,
    limits: &BufferLimits,
) -> Result<(), GpuError> {
    Ok(CrowdNeed::of(model, characters, detail)?.check(&model.file, limits)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_vertex_budget_is_half_the_heap_within_the_windows() {
        let limits = |device_local_bytes, output_buffer_bytes| BufferLimits {
            max_buffer_size: u64::MAX,
            max_allocation_size: u64::MAX,
            device_local_bytes,
            device_local_budget: device_local_bytes,
            output_buffer_bytes,
        };
        // Lavapipe's 2 GiB heap and 128 MiB bindings: the heap bounds it.
        let heap = 2u64 << 30;
        let window = u64::from(OutputWindows::capacity(128 << 20).unwrap());
        assert_eq!(default_vertex_budget(&limits(heap, 128 << 20), 3600), heap / 2 / OUTPUT_STRIDE);
        // Small windows bound it: 64 of them, each less a character.
        let small = 4096 * OUTPUT_STRIDE;
        assert_eq!(default_vertex_budget(&limits(heap, small), 1000), 64 * (4096 - 1000));
        assert!(64 * window > heap / 2 / OUTPUT_STRIDE);
        // A character larger than a window leaves no budget.
        assert_eq!(default_vertex_budget(&limits(heap, small), 5000), 0);
        // Other processes' share of the heap is left out: half of what is left.
        let shared = BufferLimits { device_local_budget: heap / 4, ..limits(heap, 128 << 20) };
        assert_eq!(default_vertex_budget(&shared, 3600), heap / 8 / OUTPUT_STRIDE);
    }

    #[test]
    fn a_crowd_past_the_limit_is_named_with_its_bytes() {
        let model = crate::asset::load_default_character().unwrap();
        let need = CrowdNeed::of(&model, 1, DrawDetail::Auto).unwrap();
        assert!(need.output_per_character > 0 && need.palette_per_character > 0 && !need.whole);
        let whole = CrowdNeed { whole: true, ..need };
        assert_eq!(CrowdNeed::of(&model, 1, DrawDetail::Full).unwrap(), whole);
        // The skin pass lays characters end to end: N of them need N times one.
        let streams = ModelStreams::build(&model).unwrap();
        let mut layout = SkinLayout::default();
        let index = layout.add_model(streams.table()).unwrap();
        for _ in 0..3 {
            layout.add_character(index, streams.table(), &model).unwrap();
        }
        assert_eq!(
            (u64::from(layout.total_vertices()) * OUTPUT_STRIDE, layout.slot_sizes().palette),
            (3 * need.output_per_character, 3 * need.palette_per_character)
        );
        let ample = u64::MAX / 4;
        let limits = |output_buffer_bytes, largest, memory| BufferLimits {
            max_buffer_size: largest,
            max_allocation_size: ample,
            device_local_bytes: memory,
            device_local_budget: memory,
            output_buffer_bytes,
        };
        // At the camera's levels the output is sized by each frame: an
        // output buffer of one character does not limit the crowd.
        let unit = 64 * OUTPUT_STRIDE;
        let one = need.output_per_character.div_ceil(unit) * unit;
        assert!(CrowdNeed { characters: 100_000, ..need }.check("a.glb", &limits(one, ample, ample)).is_ok());
        // At full detail every frame holds every character's output: an
        // output buffer of 10 characters (whole workgroups), 64 of them
        // hold 640; the 641st does not fit.
        let ten = (need.output_per_character * 10).div_ceil(unit) * unit;
        let windows = limits(ten, ample, ample);
        assert!(CrowdNeed { characters: 640, ..whole }.check("a.glb", &windows).is_ok());
        let e = CrowdNeed { characters: 641, ..whole }.check("a.glb", &windows).unwrap_err();
        assert_eq!((e.needed, e.most, e.limit), (need.output_per_character * 641, 640, ten * 64));
        assert_eq!((e.what.as_str(), e.limit_name.as_str()), ("skinned output", "64 largest output buffers"));
        assert!(e.to_string().starts_with("641 characters of a.glb need"), "{e}");
        // An output buffer smaller than one character holds none.
        let small = limits(need.output_per_character - 1, ample, ample);
        let e = CrowdNeed { characters: 1, ..need }.check("a.glb", &small).unwrap_err();
        assert_eq!((e.what.as_str(), e.most), ("skinned output of one character", 0), "{e}");
        // The palettes of all characters share one buffer: 10 fit, not 11.
        let palettes = limits(ample, need.palette_per_character * 10, ample);
        assert!(CrowdNeed { characters: 10, ..need }.check("a.glb", &palettes).is_ok());
        let e = CrowdNeed { characters: 11, ..need }.check("a.glb", &palettes).unwrap_err();
        assert_eq!(
            (e.what.as_str(), e.limit_name.as_str(), e.most),
            ("palettes in one buffer", "largest buffer", 10)
        );
        // The memory holds the device palette (one for every slot) of 10
        // characters, and at full detail their output too.
        for (need, each) in [
            (need, need.palette_per_character),
            (whole, need.output_per_character + need.palette_per_character),
        ] {
            let memory = each * 10;
            let heap = limits(ample, ample, memory);
            assert!(CrowdNeed { characters: 10, ..need }.check("a.glb", &heap).is_ok());
            let e = CrowdNeed { characters: 11, ..need }.check("a.glb", &heap).unwrap_err();
            assert_eq!(
                (e.needed, e.most, e.limit_name.as_str()),
                (memory / 10 * 11, 10, "largest device-local heap")
            );
            assert!(e.to_string().contains("more than the device's largest device-local heap"), "{e}");
        }
    }
}
