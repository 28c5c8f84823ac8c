//! Whether a crowd of one model fits the device, checked before anything
//! is posed or allocated. Every character's palette and skinned output live
//! in one buffer each per frame slot, never bound whole (the skin pass binds
//! the output in windows, the draws read it by pointer, the palette is read
//! as texels or by pointer): each must fit the largest buffer the device makes
//! (`BufferLimits::largest_buffer`), and all of them, every slot's, the
//! device-local memory. Sized by the device-free layout planner
//! (`skin_pass::SkinLayout`) for one character, times the crowd.
//!
//! The one place this limit is checked up front (`render`, `view` and
//! `bench` build scenes through `Renderer`, which calls it).

use super::gpu_model::ModelStreams;
use super::skin_pass::SkinLayout;
use crate::asset::Model;
use crate::gpu::{BufferLimits, FRAMES_IN_FLIGHT, GpuError};

/// What a crowd of one model needs of the skinning buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrowdNeed {
    /// Characters in the crowd.
    pub characters: u32,
    /// Bytes of one character's skinned output vertices.
    pub output_per_character: u64,
    /// Bytes of one character's palette entries.
    pub palette_per_character: u64,
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
    /// What does not fit ("skinned output in one buffer", ...).
    pub what: String,
    /// Its bytes.
    pub needed: u64,
    /// The limit's name ("largest buffer" or "largest device-local heap").
    pub limit_name: &'static str,
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

impl CrowdNeed {
    /// `characters` characters of `model`, laid out as the skin pass lays them out.
    pub fn of(model: &Model, characters: u32) -> Result<Self, GpuError> {
        let streams = ModelStreams::build(model)?;
        let table = streams.table();
        let mut layout = SkinLayout::default();
        let index = layout.add_model(table.counts)?;
        layout.add_character(index, table, model)?;
        let one = layout.slot_sizes();
        Ok(CrowdNeed { characters, output_per_character: one.output, palette_per_character: one.palette })
    }

    /// The limits the crowd must fit: (what, bytes per character, limit
    /// name, limit). Each slot's output and palette are one buffer; every
    /// slot's output and device-local palette share the device's memory.
    fn bounds(&self, limits: &BufferLimits) -> [(String, u64, &'static str, u64); 3] {
        let largest = limits.largest_buffer();
        let slots = FRAMES_IN_FLIGHT as u64;
        let per_slot = self.output_per_character.saturating_add(self.palette_per_character);
        [
            ("skinned output in one buffer".into(), self.output_per_character, "largest buffer", largest),
            ("palettes in one buffer".into(), self.palette_per_character, "largest buffer", largest),
            (
                format!("skinned output and palettes in {slots} frame slots"),
                per_slot.saturating_mul(slots),
                "largest device-local heap",
                limits.device_local_bytes,
            ),
        ]
    }

    /// Fails when a buffer, or all of them, are larger than `limits` allow.
    pub fn check(&self, file: &str, limits: &BufferLimits) -> Result<(), CrowdTooLarge> {
        let bounds = self.bounds(limits);
        let most = bounds.iter().map(|(_, per, _, limit)| limit.checked_div(*per).unwrap_or(u64::MAX)).min();
        for (what, per, limit_name, limit) in bounds {
            let needed = per.saturating_mul(u64::from(self.characters));
            if needed > limit {
                return Err(CrowdTooLarge {
                    file: file.to_string(),
                    characters: self.characters,
                    what,
                    needed,
                    limit_name,
                    limit,
                    most: most.unwrap_or(0),
                });
            }
        }
        Ok(())
    }
}

/// `characters` characters of `model` on a device with `limits`: an error
/// when their skinning buffers cannot be made.
pub fn check_crowd_fits(model: &Model, characters: u32, limits: &BufferLimits) -> Result<(), GpuError> {
    Ok(CrowdNeed::of(model, characters)?.check(&model.file, limits)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crowd_past_the_limit_is_named_with_its_bytes() {
        let model = crate::asset::load_default_character().unwrap();
        let need = CrowdNeed::of(&model, 1).unwrap();
        assert!(need.output_per_character > 0 && need.palette_per_character > 0);
        // The skin pass lays characters end to end: N of them need N times one.
        let streams = ModelStreams::build(&model).unwrap();
        let mut layout = SkinLayout::default();
        let index = layout.add_model(streams.table().counts).unwrap();
        for _ in 0..3 {
            layout.add_character(index, streams.table(), &model).unwrap();
        }
        let three = layout.slot_sizes();
        assert_eq!(
            (three.output, three.palette),
            (3 * need.output_per_character, 3 * need.palette_per_character)
        );
        // One buffer holds 10 characters' output: the 11th does not fit.
        let ample = u64::MAX / 4;
        let limits = BufferLimits {
            max_buffer_size: need.output_per_character * 10,
            max_allocation_size: ample,
            device_local_bytes: ample,
        };
        assert!(CrowdNeed { characters: 10, ..need }.check("a.glb", &limits).is_ok());
        let e = CrowdNeed { characters: 11, ..need }.check("a.glb", &limits).unwrap_err();
        assert_eq!((e.needed, e.most), (need.output_per_character * 11, 10));
        assert_eq!((e.what.as_str(), e.limit_name), ("skinned output in one buffer", "largest buffer"));
        assert!(e.to_string().starts_with("11 characters of a.glb need"), "{e}");
        // The memory holds every slot's output and palette of 10 characters.
        let slot = need.output_per_character + need.palette_per_character;
        let memory = slot * FRAMES_IN_FLIGHT as u64 * 10;
        let limits =
            BufferLimits { max_buffer_size: ample, max_allocation_size: ample, device_local_bytes: memory };
        assert!(CrowdNeed { characters: 10, ..need }.check("a.glb", &limits).is_ok());
        let e = CrowdNeed { characters: 11, ..need }.check("a.glb", &limits).unwrap_err();
        assert_eq!((e.needed, e.most, e.limit_name), (memory / 10 * 11, 10, "largest device-local heap"));
        assert!(e.to_string().contains("more than the device's largest device-local heap"), "{e}");
    }
}
