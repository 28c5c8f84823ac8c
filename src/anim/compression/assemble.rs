//! Assembling a compressed clip from encoded tracks: the time table cut to
//! the times some packed track has a key at, each packed track's key times
//! as a mask over them or listed in the stream, its keys written to the bit
//! stream, and the tracks ordered by kind for the sampler.
//!
//! It only lays out what `reduce` encoded: it never chooses bits or keys,
//! and never measures.

use super::clip::{CORRECTED, DROPPED_SHIFT, NEXT_ID, PROPERTIES, PROPERTY_SHIFT, STEP};
use super::compress::morph_slots;
use super::quantize::BitWriter;
use super::reduce::{Encoded, Packed, TrackInput};
use super::{CompressedClip, ConstantTrack, LISTED, PackedTrack, Property};
use crate::anim::{Clip, JobError};
use std::sync::atomic::Ordering;

/// Builds the clip of `joints` joints from `inputs` encoded as `encoded`,
/// with `table` the time table their keys index.
pub(super) fn assemble(
    clip: &Clip,
    joints: usize,
    table: &[f32],
    inputs: &[TrackInput],
    encoded: &[Encoded],
) -> Result<CompressedClip, JobError> {
    let mut packer = Packer::new(table, encoded);
    let mut constants = Vec::new();
    let mut tracks = Vec::new();
    for (input, e) in inputs.iter().zip(encoded) {
        match e {
            Encoded::Rest => {}
            Encoded::Constant(value) => constants.push(ConstantTrack {
                joint: input.joint as u16,
                property: input.property,
                value: *value,
            }),
            Encoded::Packed(p) => tracks.push(packer.pack(input, p)?),
        }
    }
    let (rotation_tracks, vector_tracks) = sort_by_kind(&mut tracks);
    let corrected = corrected_lanes(&tracks[..rotation_tracks]);
    let Packer { times, time_bits, masks, mask_words, writer, .. } = packer;
    Ok(CompressedClip {
        name: clip.name.clone(),
        duration: clip.duration,
        id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        joints,
        times,
        time_bits: time_bits as u8,
        masks,
        mask_words,
        constants,
        tracks,
        rotation_tracks,
        vector_tracks,
        morph_slots: morph_slots(clip),
        corrected,
        stream: writer.finish(),
    })
}

/// The clip's key times, key-time masks and bit stream, filled one packed
/// track at a time.
struct Packer {
    /// The table times some packed track has a key at, sorted.
    times: Vec<f32>,
    /// Each table time's index in `times` (where it is in use).
    remap: Vec<u32>,
    /// Bits of an index in `times` (listed key times).
    time_bits: u32,
    /// Words of a key-time mask: `times.len().div_ceil(64)`.
    mask_words: usize,
    masks: Vec<u64>,
    writer: BitWriter,
}

impl Packer {
    /// Keeps the times of `table` that some packed track of `encoded` has a key at.
    fn new(table: &[f32], encoded: &[Encoded]) -> Self {
        let mut used = vec![false; table.len()];
        for e in encoded {
            if let Encoded::Packed(p) = e {
                for k in &p.keys {
                    used[k.0 as usize] = true;
                }
            }
        }
        let mut remap = vec![0u32; table.len()];
        let mut times = Vec::new();
        for (i, &t) in table.iter().enumerate() {
            if used[i] {
                remap[i] = times.len() as u32;
                times.push(t);
            }
        }
        let time_bits = (usize::BITS - times.len().saturating_sub(1).leading_zeros()).max(1);
        let mask_words = times.len().div_ceil(64);
        Packer { times, remap, time_bits, mask_words, masks: Vec::new(), writer: BitWriter::default() }
    }

    /// The header of `input` encoded as `p`, its keys written to the stream
    /// (each after its time index, unless a mask holds the key times).
    fn pack(&mut self, input: &TrackInput, p: &Packed) -> Result<PackedTrack, JobError> {
        let bit_offset = u32::try_from(self.writer.bits())
            .map_err(|_| JobError::new("compress: more than 4 Gbit of keys"))?;
        let mask = self.key_time_mask(p);
        // A weight's other two components are 0: not stored.
        let components = input.property.components();
        for (t, q) in &p.keys {
            if mask.is_none() {
                self.writer.push(self.remap[*t as usize], self.time_bits);
            }
            for c in &q[..components] {
                self.writer.push(*c, p.bits);
            }
        }
        Ok(PackedTrack {
            joint: input.joint as u16,
            mask: mask.unwrap_or(LISTED),
            flags: flags(input, p),
            bits: p.bits as u8,
            step: p.ranges.map(|r| r.step_bits()),
            keys: p.keys.len() as u32,
            bit_offset,
            min: p.ranges.map(|r| r.min),
        })
    }

    /// The index of a new mask of `p`'s key times, where a mask is smaller
    /// than listing them (a bit per time against `time_bits` per key);
    /// `None` to list them. Masks hold their keys' indices in the 16 low
    /// bits of the cursor's key ids (see `cursor::KeyReader`).
    fn key_time_mask(&mut self, p: &Packed) -> Option<u16> {
        let masked = 64 * self.mask_words < p.keys.len() * self.time_bits as usize
            && self.times.len() < 1 << 16
            && self.masks.len() / self.mask_words.max(1) < usize::from(LISTED);
        if !masked {
            return None;
        }
        let index = (self.masks.len() / self.mask_words) as u16;
        let start = self.masks.len();
        self.masks.resize(start + self.mask_words, 0);
        for (t, _) in &p.keys {
            let i = self.remap[*t as usize] as usize;
            self.masks[start + i / 64] |= 1 << (i % 64);
        }
        Some(index)
    }
}

/// `PackedTrack::flags` of `input` encoded as `p`: STEP, the slerp
/// correction, the dropped rotation component and the property.
fn flags(input: &TrackInput, p: &Packed) -> u8 {
    let property = PROPERTIES.iter().position(|&q| q == input.property).unwrap_or(0) as u8;
    (u8::from(input.step) * STEP)
        | (u8::from(input.corrected) * CORRECTED)
        | (((p.dropped & 3) as u8) << DROPPED_SHIFT)
        | (property << PROPERTY_SHIFT)
}

/// Orders `tracks` rotations first, then translations and scales, then
/// weights, and returns how many are rotations and how many translations
/// or scales. Stable: a later track for the same joint (or slot) and
/// property still wins.
fn sort_by_kind(tracks: &mut [PackedTrack]) -> (usize, usize) {
    let kind = |p: Property| match p {
        Property::Rotation => 0,
        Property::Translation | Property::Scale => 1,
        Property::Weight => 2,
    };
    tracks.sort_by_key(|t| kind(t.property()));
    let count = |k| tracks.iter().filter(|t| kind(t.property()) == k).count();
    (count(0), count(1))
}

/// Per block of four `rotations`, all bits set in the lanes of tracks with
/// a slerp correction (see `CompressedClip::corrected`).
fn corrected_lanes(rotations: &[PackedTrack]) -> Vec<[f32; 4]> {
    let mut corrected = vec![[0.0f32; 4]; rotations.len().div_ceil(4)];
    for (i, t) in rotations.iter().enumerate() {
        if t.corrected() {
            corrected[i / 4][i % 4] = f32::from_bits(u32::MAX);
        }
    }
    corrected
}
