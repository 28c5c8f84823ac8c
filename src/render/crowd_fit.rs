//! Whether a crowd of one model fits the device's buffer limits, checked
//! before anything is posed or allocated: every character's palette and
//! skinned output live in one storage buffer each, bound whole, so each
//! must fit `maxStorageBufferRange`. Sized by the device-free layout planner
//! (`skin_pass::SkinLayout`) for one character, times the crowd.
//!
//! The one place this limit is checked up front (`render`, `view` and
//! `bench` build scenes through `Renderer`, which calls it); when the skin
//! pass splits its bindings, [`CrowdNeed::largest_binding`] is what changes.

use super::gpu_model::ModelStreams;
use super::skin_pass::SkinLayout;
use crate::asset::Model;
use crate::gpu::GpuError;
use ash::vk;

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
    "{characters} characters of {file} need {needed} bytes of {what} in one buffer, more than the \
     device's maxStorageBufferRange {limit} (at most {most} characters of this model fit)"
)]
pub struct CrowdTooLarge {
    /// The model.
    pub file: String,
    /// Characters asked for.
    pub characters: u32,
    /// The buffer that does not fit ("skinned output" or "palettes").
    pub what: &'static str,
    /// Its bytes.
    pub needed: u64,
    /// The device's limit.
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

    /// The largest single binding the crowd needs: (what, bytes per
    /// character). Each of the two is one buffer bound whole today.
    fn largest_binding(&self) -> [(&'static str, u64); 2] {
        [("skinned output", self.output_per_character), ("palettes", self.palette_per_character)]
    }

    /// Fails when a binding is larger than `limits` allow.
    pub fn check(&self, file: &str, limits: &vk::PhysicalDeviceLimits) -> Result<(), CrowdTooLarge> {
        let limit = u64::from(limits.max_storage_buffer_range);
        let bindings = self.largest_binding();
        let most = bindings.iter().map(|&(_, per)| limit.checked_div(per).unwrap_or(u64::MAX)).min();
        for (what, per) in bindings {
            let needed = per.saturating_mul(u64::from(self.characters));
            if needed > limit {
                return Err(CrowdTooLarge {
                    file: file.to_string(),
                    characters: self.characters,
                    what,
                    needed,
                    limit,
                    most: most.unwrap_or(0),
                });
            }
        }
        Ok(())
    }
}

/// `characters` characters of `model` on a device with `limits`: an error
/// when their skinning buffers cannot be bound.
pub fn check_crowd_fits(
    model: &Model,
    characters: u32,
    limits: &vk::PhysicalDeviceLimits,
) -> Result<(), GpuError> {
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
        let limits = vk::PhysicalDeviceLimits {
            max_storage_buffer_range: (need.output_per_character * 10) as u32,
            ..Default::default()
        };
        assert!(CrowdNeed { characters: 10, ..need }.check("a.glb", &limits).is_ok());
        let e = CrowdNeed { characters: 11, ..need }.check("a.glb", &limits).unwrap_err();
        assert_eq!((e.needed, e.most, e.what), (need.output_per_character * 11, 10, "skinned output"));
        assert!(e.to_string().starts_with("11 characters of a.glb need"), "{e}");
    }
}
