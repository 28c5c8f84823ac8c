//! The skin dispatch's unit of work ([`SkinRun`]): consecutive characters
//! of one model, laid out alike. A frame skins a run level by level, one
//! dispatch per run and level that some character is drawn at (and per
//! output window the frame places them in, `SkinPass::write_batches`):
//! each of those characters gets whole
//! workgroups, and its thread `t` skins the `t`-th vertex its level draws,
//! its records' lists one after the other ([`SkinRun::skinned_by`], the
//! twin of skin_main.glsl's `main`). So a character far away costs the
//! workgroups of the vertices its level draws, not of all its vertices,
//! and a character no pass draws costs none.

use super::{CharacterPlace, NO_RECORD, WORKGROUP_SIZE};
use crate::render::detail_levels::DETAIL_LEVELS;
use crate::render::layout::SkinRecord;
use crate::render::skin_levels;

/// Consecutive characters of one model whose records follow one another
/// at a fixed stride.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkinRun {
    /// Its first character (`CharacterId`) and how many there are.
    pub first_character: u32,
    pub characters: u32,
    /// The first character's first record; character `i` of the run has
    /// records `first_record + i * records_per_character ..`.
    pub first_record: u32,
    pub records_per_character: u32,
    /// Vertices one character skins at each level (all its records').
    pub level_vertices: [u32; DETAIL_LEVELS],
    /// Where its tables start in `SkinLayout::run_starts`: per level,
    /// `records_per_character` words, the thread at which each record's
    /// vertices start (the first is 0).
    pub starts: u32,
}

impl SkinRun {
    /// Workgroups one character takes at `level`.
    pub fn groups_per_character(&self, level: usize) -> u32 {
        self.level_vertices[level].div_ceil(WORKGROUP_SIZE)
    }

    /// Where `level`'s table of record starts lies in `run_starts`.
    pub fn level_starts(&self, level: usize) -> u32 {
        self.starts + level as u32 * self.records_per_character
    }

    /// The record and the vertex of it that thread `t` of the run's
    /// `character`-th character skins at `level`, or `None` past what the
    /// level draws: skin_main.glsl's `main` on the CPU. `run_starts`,
    /// `record_tables` and `level_words` are the layout's.
    pub fn skinned_by(
        &self,
        level: usize,
        character: u32,
        t: u32,
        run_starts: &[u32],
        record_tables: &[u32],
        level_words: &[u32],
    ) -> Option<(u32, u32)> {
        if t >= self.level_vertices[level] {
            return None;
        }
        let first = self.level_starts(level) as usize;
        let starts = &run_starts[first..first + self.records_per_character as usize];
        let mut p = 0;
        while p + 1 < starts.len() && starts[p + 1] <= t {
            p += 1;
        }
        let record = self.first_record + character * self.records_per_character + p as u32;
        let table = record_tables[record as usize];
        Some((record, skin_levels::level_vertex(level_words, table, level, t - starts[p])))
    }
}

/// The runs of `characters` (laid out with `records`, `record_tables` and
/// `level_words`) into `runs`, and their record starts into `run_starts`
/// (both cleared first). A run ends where the model or the records per
/// character change.
pub(super) fn find_runs(
    characters: &[CharacterPlace],
    records: &[SkinRecord],
    record_tables: &[u32],
    level_words: &[u32],
    runs: &mut Vec<SkinRun>,
    run_starts: &mut Vec<u32>,
) {
    runs.clear();
    run_starts.clear();
    let mut next_record = 0u32;
    let mut run_model = None;
    for (c, place) in characters.iter().enumerate() {
        let first_record = next_record;
        let count = place.outputs.iter().filter(|o| o.record != NO_RECORD).count() as u32;
        next_record += count;
        if let Some(run) = runs.last_mut()
            && run_model == Some(place.model)
            && run.records_per_character == count
        {
            run.characters += 1;
            continue;
        }
        run_model = Some(place.model);
        let starts = run_starts.len() as u32;
        for level in 0..DETAIL_LEVELS {
            let mut start = 0;
            for record in first_record..first_record + count {
                run_starts.push(start);
                let (r, table) = (&records[record as usize], record_tables[record as usize]);
                start += skin_levels::skinned_vertices(level_words, table, r.vertex_count, level);
            }
        }
        runs.push(SkinRun {
            first_character: c as u32,
            characters: 1,
            first_record,
            records_per_character: count,
            level_vertices: place.level_vertices,
            starts,
        });
    }
}
