//! A frame's skin batches ([`SkinBatch`]): per run of characters
//! (`plan::SkinRun`), the characters drawn at each level, which one
//! dispatch skins at that level. With the frame's draw order
//! (`SkinLevels`) a batch names its characters by where
//! `SkinPass::write_batches` copied that part of the draw order into the
//! slot's work buffer; without one, or for a run the draw order does not
//! hold (the scenery), a batch skins the whole run at full detail.
//! Allocates nothing on the heap per frame.

use super::SkinPass;
use crate::gpu::GpuError;
use crate::render::skin_levels::SkinLevels;

/// `SkinBatch::order_first` of a batch that skins its run's characters in
/// their own order (skin_main.glsl's `NO_ORDER`).
pub(super) const NO_ORDER: u32 = u32::MAX;

/// The characters of one run that one dispatch skins at one level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SkinBatch {
    /// Its run's index in `SkinLayout::runs`.
    pub(super) run: u32,
    pub(super) level: u32,
    /// How many characters it skins.
    pub(super) characters: u32,
    /// The word of the slot's work buffer where they are listed, or
    /// [`NO_ORDER`]: every character of the run, in order.
    pub(super) order_first: u32,
}

impl SkinPass {
    /// This frame's batches, into `self.batches`, and the characters they
    /// list into `slot_index`'s work buffer: per run, one batch per level
    /// that `levels` draws characters of it at (a character no pass draws
    /// is in none), or one batch of the whole run at level 0. Host writes
    /// before the submit, into a buffer the slot's last frame finished
    /// reading (see `upload`).
    pub(super) fn write_batches(
        &mut self,
        slot_index: usize,
        levels: Option<SkinLevels>,
    ) -> Result<(), GpuError> {
        self.batches.clear();
        let work = &mut self.slots[slot_index].work;
        let mut written = 0u32;
        for (r, run) in self.layout.runs().iter().enumerate() {
            let run_index = r as u32;
            let drawn = levels.and_then(|l| {
                Some((l.order.order(), l.order.drawn_levels(run.first_character, run.characters)?))
            });
            let Some((order, drawn)) = drawn else {
                let characters = run.characters;
                self.batches.push(SkinBatch { run: run_index, level: 0, characters, order_first: NO_ORDER });
                continue;
            };
            for (level, &(first, count)) in drawn.iter().enumerate() {
                if count == 0 {
                    continue;
                }
                let characters = order.get(first as usize..(first + count) as usize).ok_or_else(|| {
                    GpuError::new(format!(
                        "skin pass: draw order of {} entries lacks {first}..+{count}",
                        order.len()
                    ))
                })?;
                debug_assert!(
                    characters.iter().all(|c| c.wrapping_sub(run.first_character) < run.characters)
                );
                // Within the buffer: a run's levels list each of its
                // characters at most once, and the buffer holds a word per
                // character.
                work.write(u64::from(written) * 4, bytemuck::cast_slice(characters))?;
                self.batches.push(SkinBatch {
                    run: run_index,
                    level: level as u32,
                    characters: count,
                    order_first: written,
                });
                written += count;
            }
        }
        Ok(())
    }
}
