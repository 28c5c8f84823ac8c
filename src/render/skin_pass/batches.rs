//! A frame's skin batches ([`SkinBatch`]) and where their output lands:
//! per run of characters (`plan::SkinRun`), the characters drawn at each
//! level, which one dispatch skins at that level into one output window.
//! With the frame's draw order (`SkinLevels`) a batch names its characters
//! by where `SkinPass::write_batches` copied that part of the draw order
//! into the slot's work buffer; without one, or for a run the draw order
//! does not hold (the scenery), a batch skins the whole run at full detail.
//!
//! The output holds only what the frame skins: the batches are placed one
//! after the other, each character taking its level's vertices (so a
//! crowd framed whole, nearly all at the coarsest level, needs a small
//! fraction of its full meshes' output), a batch cut where a window ends
//! (no character straddles two), and each character's place is written
//! into the slot's `OutputPlaces` for the draws. Allocates nothing on the
//! heap per frame.

use super::plan::{MAX_OUTPUT_WINDOWS, OutputPlaces, OutputWindows, PLACES_HEADER_BYTES, SkinRun};
use super::slot_buffers::{Grower, GrowthLimits};
use super::{OUTPUT_STRIDE, SkinPass};
use crate::gpu::{FrameSlot, GpuContext, GpuError};
use crate::render::skin_levels::SkinLevels;

/// `SkinBatch::order_first` of a batch that skins its run's characters in
/// their own order (skin_main.glsl's `NO_ORDER`), from `first_slot` on.
pub(super) const NO_ORDER: u32 = u32::MAX;

/// `SkinPass::places` of a character the frame does not skin.
pub(super) const NOT_PLACED: u32 = u32::MAX;

/// The characters of one run that one dispatch skins at one level, into
/// one output window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SkinBatch {
    /// Its run's index in `SkinLayout::runs`.
    pub(super) run: u32,
    pub(super) level: u32,
    /// How many characters it skins.
    pub(super) characters: u32,
    /// The word of the slot's work buffer where they are listed, or
    /// [`NO_ORDER`]: the run's characters in order, from `first_slot`.
    pub(super) order_first: u32,
    /// With `NO_ORDER`, its first character's index in the run.
    pub(super) first_slot: u32,
    /// The output window it writes, and its first character's first
    /// vertex there; the others follow, a level's vertices each.
    pub(super) window: u32,
    pub(super) first_vertex: u32,
}

/// Where the next batch's output goes: window `window`, from vertex `used`.
struct Cursor {
    window: u32,
    used: u32,
    /// Vertices one window holds.
    capacity: u32,
}

impl SkinPass {
    /// This frame's batches, into `self.batches`, the characters they list
    /// into the slot's work buffer, and where each character's output lands
    /// (`self.places`, `self.windows`, the slot's `OutputPlaces`): per run,
    /// one batch per level that `levels` draws characters of it at (a
    /// character no pass draws is in none), or one batch of the whole run
    /// at level 0, each cut at window ends. Grows the output to the
    /// frame's windows (replaced buffers retired into `slot`). Host writes
    /// before the submit, into buffers the slot's last frame finished
    /// reading (see `upload`).
    pub(super) fn write_batches(
        &mut self,
        ctx: &GpuContext,
        slot: &mut FrameSlot,
        levels: Option<SkinLevels>,
    ) -> Result<(), GpuError> {
        self.batches.clear();
        self.places.fill(NOT_PLACED);
        let mut cursor = Cursor { window: 0, used: 0, capacity: self.layout.window_vertices() };
        let mut written = 0u32;
        for (r, run) in self.layout.runs().iter().enumerate() {
            let run_index = r as u32;
            let drawn = levels.and_then(|l| {
                Some((l.order.order(), l.order.drawn_levels(run.first_character, run.characters)?))
            });
            let Some((order, drawn)) = drawn else {
                let batch = SkinBatch {
                    run: run_index,
                    level: 0,
                    characters: run.characters,
                    order_first: NO_ORDER,
                    first_slot: 0,
                    window: 0,
                    first_vertex: 0,
                };
                let characters =
                    (run.first_character..run.first_character + run.characters).map(|c| c as usize);
                let placed = (&mut self.places[..], &mut self.placed_vertices[..]);
                place(&mut self.batches, placed, &mut cursor, run, batch, characters)?;
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
                self.slots[slot.index]
                    .work
                    .write(u64::from(written) * 4, bytemuck::cast_slice(characters))?;
                let batch = SkinBatch {
                    run: run_index,
                    level: level as u32,
                    characters: count,
                    order_first: written,
                    first_slot: 0,
                    window: 0,
                    first_vertex: 0,
                };
                let listed = characters.iter().map(|&c| c as usize);
                let placed = (&mut self.places[..], &mut self.placed_vertices[..]);
                place(&mut self.batches, placed, &mut cursor, run, batch, listed)?;
                written += count;
            }
        }
        let used = cursor.window > 0 || cursor.used > 0;
        self.windows = OutputWindows {
            count: if used { cursor.window + 1 } else { 0 },
            vertices: cursor.capacity,
            total: cursor.window * cursor.capacity + cursor.used,
        };
        let grower = Grower { ctx, limits: GrowthLimits::of(ctx), owner: "skin".into() };
        self.output.fit(&grower, slot, self.windows)?;
        let places = &mut self.slots[slot.index].places;
        places.write(0, bytemuck::cast_slice(&self.output.addresses))?;
        places.write(PLACES_HEADER_BYTES, bytemuck::cast_slice(&self.places))
    }
}

impl SkinPass {
    /// A frame that skins nothing into the output (the vertex-skinning
    /// path, whose draws skin for themselves): no character is placed, and
    /// the output's buffers count the frame as one that used none of them,
    /// so a large output left by compute-skinned frames shrinks after a
    /// while (`skinned_output`; replaced buffers retired into `slot`).
    pub(crate) fn leave_output_unused(
        &mut self,
        ctx: &GpuContext,
        slot: &mut FrameSlot,
    ) -> Result<(), GpuError> {
        self.batches.clear();
        self.places.fill(NOT_PLACED);
        self.windows = OutputWindows { count: 0, vertices: self.layout.window_vertices(), total: 0 };
        let grower = Grower { ctx, limits: GrowthLimits::of(ctx), owner: "skin".into() };
        self.output.fit(&grower, slot, self.windows)
    }
}

/// Places `batch` (of `run`, listing `characters`) at `cursor`, cut into
/// one batch per window it reaches, into `batches`; each character's
/// entry and vertex count into `places`.
fn place(
    batches: &mut Vec<SkinBatch>,
    (places, counts): (&mut [u32], &mut [u32]),
    cursor: &mut Cursor,
    run: &SkinRun,
    batch: SkinBatch,
    mut characters: impl Iterator<Item = usize>,
) -> Result<(), GpuError> {
    let vertices = run.level_vertices[batch.level as usize];
    if vertices == 0 {
        // Nothing to skin or draw: no place.
        batches.push(batch);
        return Ok(());
    }
    let mut done = 0;
    while done < batch.characters {
        // The layout keeps a character's full output within one window.
        let mut fit = (cursor.capacity - cursor.used) / vertices;
        if fit == 0 {
            cursor.window += 1;
            cursor.used = 0;
            fit = cursor.capacity / vertices;
        }
        if cursor.window >= MAX_OUTPUT_WINDOWS {
            let most = u64::from(MAX_OUTPUT_WINDOWS) * u64::from(cursor.capacity);
            return Err(GpuError::new(format!(
                "skin pass: this frame's skinned output needs more than {} bytes, {MAX_OUTPUT_WINDOWS} buffers \
                 of {} vertices",
                most * OUTPUT_STRIDE,
                cursor.capacity
            )));
        }
        let count = fit.min(batch.characters - done);
        for (i, c) in characters.by_ref().take(count as usize).enumerate() {
            places[c] = OutputPlaces::entry(cursor.window, cursor.used + i as u32 * vertices);
            counts[c] = vertices;
        }
        let order_first = if batch.order_first == NO_ORDER { NO_ORDER } else { batch.order_first + done };
        batches.push(SkinBatch {
            characters: count,
            order_first,
            first_slot: batch.first_slot + done,
            window: cursor.window,
            first_vertex: cursor.used,
            ..batch
        });
        cursor.used += count * vertices;
        done += count;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::detail_levels::DETAIL_LEVELS;

    /// A run of 7 characters from 10, of 100 vertices but 30 at level 3.
    fn run() -> SkinRun {
        let mut level_vertices = [100; DETAIL_LEVELS];
        level_vertices[3] = 30;
        SkinRun {
            first_character: 10,
            characters: 7,
            first_record: 0,
            records_per_character: 1,
            level_vertices,
            starts: 0,
        }
    }

    const WHOLE: SkinBatch = SkinBatch {
        run: 0,
        level: 0,
        characters: 7,
        order_first: NO_ORDER,
        first_slot: 0,
        window: 0,
        first_vertex: 0,
    };

    #[test]
    fn batches_fill_windows_in_turn_and_no_character_straddles_two() {
        let (mut places, mut counts) = (vec![NOT_PLACED; 20], vec![0; 20]);
        let mut cursor = Cursor { window: 0, used: 0, capacity: 256 };
        let mut batches = Vec::new();
        // The whole run at level 0: two characters per window of 256.
        let placed = (&mut places[..], &mut counts[..]);
        place(&mut batches, placed, &mut cursor, &run(), WHOLE, 10..17).unwrap();
        let cuts: Vec<_> =
            batches.iter().map(|b| (b.characters, b.first_slot, b.window, b.first_vertex)).collect();
        assert_eq!(cuts, [(2, 0, 0, 0), (2, 2, 1, 0), (2, 4, 2, 0), (1, 6, 3, 0)]);
        for i in 0..7u32 {
            let c = 10 + i as usize;
            assert_eq!((OutputPlaces::locate(places[c]), counts[c]), ((i / 2, i % 2 * 100), 100), "{c}");
        }
        // Three characters listed at level 3 fit after the last one.
        batches.clear();
        let listed = SkinBatch { level: 3, characters: 3, order_first: 40, ..WHOLE };
        let placed = (&mut places[..], &mut counts[..]);
        place(&mut batches, placed, &mut cursor, &run(), listed, [12, 15, 11].into_iter()).unwrap();
        assert_eq!(batches, [SkinBatch { window: 3, first_vertex: 100, ..listed }]);
        let at = |places: &[u32], counts: &[u32], c: usize| (OutputPlaces::locate(places[c]), counts[c]);
        let placed = [12, 15, 11].map(|c| at(&places, &counts, c));
        assert_eq!(placed, [((3, 100), 30), ((3, 130), 30), ((3, 160), 30)]);
        // Nine more: two fill the window up to 250, seven start the next.
        batches.clear();
        let more = SkinBatch { level: 3, characters: 9, order_first: 50, ..WHOLE };
        let placed = (&mut places[..], &mut counts[..]);
        place(&mut batches, placed, &mut cursor, &run(), more, 0..9).unwrap();
        let cuts: Vec<_> =
            batches.iter().map(|b| (b.characters, b.order_first, b.window, b.first_vertex)).collect();
        assert_eq!(cuts, [(2, 50, 3, 190), (7, 52, 4, 0)]);
        let placed = [1, 2, 8].map(|c| at(&places, &counts, c));
        assert_eq!(placed, [((3, 220), 30), ((4, 0), 30), ((4, 180), 30)]);
        assert_eq!((cursor.window, cursor.used), (4, 210));
    }

    #[test]
    fn a_frame_past_the_most_windows_fails() {
        let (mut places, mut counts) = (vec![NOT_PLACED; 100], vec![0; 100]);
        let mut cursor = Cursor { window: 0, used: 0, capacity: 100 };
        let many = SkinBatch { characters: MAX_OUTPUT_WINDOWS + 1, ..WHOLE };
        let placed = (&mut places[..], &mut counts[..]);
        let e = place(&mut Vec::new(), placed, &mut cursor, &run(), many, 0..100).unwrap_err().to_string();
        assert!(e.contains("needs more than 153600 bytes, 64 buffers of 100 vertices"), "{e}");
    }
}
