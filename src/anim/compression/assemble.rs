//! Assembling a compressed clip from encoded tracks: the time table cut to
//! the times some packed track has a key at, each packed track's key times
//! as a mask over them or listed in the stream, its keys written to the bit
//! stream, and the tracks ordered by kind for the sampler.
//!
//! It only lays out what `reduce` encoded: it never chooses bits or keys,
//! and never measures.

use super::clip::{
    CORRECTED, DROPPED_SHIFT, NEXT_ID, PROPERTIES, PROPERTY_SHIFT, STEP, TableTimes, frame_time,
};
use super::compress::morph_slots;
use super::cursor::LANES;
use super::hermite::Cubic;
use super::key_decode::KeyDecode;
use super::quantize::BitWriter;
use super::reduce::{Encoded, Packed, TrackInput};
use super::{CompressedClip, ConstantTrack, CubicTrack, LISTED, PackedTrack, Property};
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
    let mut packer = Packer::new(table, inputs, encoded);
    let mut constants = Vec::new();
    let mut tracks = Vec::new();
    let mut cubic = Vec::new();
    for (input, e) in inputs.iter().zip(encoded) {
        match e {
            Encoded::Rest => {}
            Encoded::Constant(value) => constants.push(ConstantTrack {
                joint: input.joint as u16,
                property: input.property,
                value: *value,
            }),
            Encoded::Packed(p) => tracks.push(packer.pack(input, p)?),
            Encoded::Cubic(c) => cubic.push(packer.pack_cubic(input, c)?),
        }
    }
    let constant_ends = group_by_property(&mut constants);
    let (rotation_tracks, vector_tracks) = sort_by_kind(&mut tracks);
    let corrected = corrected_lanes(&tracks[..rotation_tracks]);
    let (rotations, rest) = tracks.split_at(rotation_tracks);
    let (vectors, weights) = rest.split_at(vector_tracks);
    let [mut rotation_decode, mut vector_decode, mut weight_decode] = [rotations, vectors, weights]
        .map(|kind| KeyDecode::blocks(kind, packer.mask_words, packer.time_bits));
    let weights_written = weights_written(weights, &constants, &cubic);
    let weight_runs = weight_runs(weights);
    let Packer { times, time_bits, masks, mask_words, writer, .. } = packer;
    let stream = writer.finish();
    for blocks in [&mut rotation_decode, &mut vector_decode, &mut weight_decode] {
        KeyDecode::check_reads(blocks, &stream);
    }
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
        constant_ends,
        tracks,
        cubic,
        rotation_tracks,
        vector_tracks,
        morph_slots: morph_slots(clip),
        weights_written,
        weight_runs,
        corrected,
        rotation_decode,
        vector_decode,
        weight_decode,
        stream,
    })
}

/// The clip's key times, key-time masks and bit stream, filled one packed
/// track at a time.
struct Packer {
    /// The table times some packed track has a key at, or the frames they fall on.
    times: TableTimes,
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
    /// Keeps the times of `table` that some packed track of `encoded` has
    /// a key at: as the frames of a rate where they fall on one (see
    /// [`on_frames`]), else listed.
    fn new(table: &[f32], inputs: &[TrackInput], encoded: &[Encoded]) -> Self {
        let mut used = vec![false; table.len()];
        for e in encoded {
            for t in key_times(e) {
                used[t as usize] = true;
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
        // STEP keys switch at their exact times: only listed times keep them.
        let step = inputs.iter().zip(encoded).any(|(i, e)| i.step && key_times(e).next().is_some());
        let times = match on_frames(&times).filter(|_| !step) {
            Some((frames, count, interval)) => {
                for r in &mut remap {
                    *r = frames.get(*r as usize).copied().unwrap_or(0);
                }
                TableTimes::Frames { count, interval }
            }
            None => TableTimes::Listed(times),
        };
        let len = times.len();
        let time_bits = (usize::BITS - len.saturating_sub(1).leading_zeros()).max(1);
        let mask_words = len.div_ceil(64);
        Packer { times, remap, time_bits, mask_words, masks: Vec::new(), writer: BitWriter::default() }
    }

    /// The header of `input` encoded as `p`, its keys written to the stream
    /// (each after its time index, unless a mask holds the key times).
    fn pack(&mut self, input: &TrackInput, p: &Packed) -> Result<PackedTrack, JobError> {
        let (bit_offset, mask) = self.write_keys(&p.keys, &p.bits)?;
        Ok(PackedTrack {
            joint: input.joint as u16,
            mask,
            flags: flags(input, p),
            bits: p.bits.map(|b| b as u8),
            step: p.ranges[0].step_bits(),
            keys: p.keys.len() as u32,
            bit_offset,
            min: p.ranges.map(|r| r.min),
        })
    }

    /// The header of a CUBICSPLINE track `input` encoded as `c`, its keys
    /// written to the stream as `pack` writes them.
    fn pack_cubic(&mut self, input: &TrackInput, c: &Cubic) -> Result<CubicTrack, JobError> {
        let (bit_offset, mask) = self.write_keys(&c.keys, &c.bits)?;
        let value = c.ranges[c.width];
        let tangent = c.ranges[0];
        Ok(CubicTrack {
            joint: input.joint as u16,
            property: input.property,
            mask,
            keys: c.keys.len() as u32,
            bit_offset,
            width: c.width as u8,
            bits: c.bits.map(|b| b as u8),
            step: [value.step_bits(), tangent.step_bits()],
            min: c.ranges.map(|r| r.min),
        })
    }

    /// Writes one track's `keys` (time-table index, quantized components
    /// of `bits[c]` bits each) to the stream, each after its time index
    /// unless a mask holds the key times; returns where they start and the
    /// mask ([`LISTED`] for none). A component that stays within a step (a
    /// weight's other two among them) takes no bits.
    fn write_keys<const N: usize>(
        &mut self,
        keys: &[(u32, [u32; N])],
        bits: &[u32; N],
    ) -> Result<(u32, u16), JobError> {
        let bit_offset = u32::try_from(self.writer.bits())
            .map_err(|_| JobError::new("compress: more than 4 Gbit of keys"))?;
        let mask = self.key_time_mask(keys);
        for (t, q) in keys {
            if mask.is_none() {
                self.writer.push(self.remap[*t as usize], self.time_bits);
            }
            for (&c, &bits) in q.iter().zip(bits) {
                self.writer.push(c, bits);
            }
        }
        Ok((bit_offset, mask.unwrap_or(LISTED)))
    }

    /// The index of a mask of `keys`' times (indices in the time table):
    /// one made for an earlier track with the same times (it takes no more
    /// bytes, and the sampler finds the keys of tracks that share a mask
    /// once for them all), else a new one where a mask is smaller than
    /// listing the times (a bit per time against `time_bits` per key);
    /// `None` to list them. Masks hold their keys' indices in the 16 low
    /// bits of the cursor's key ids (see `cursor::KeyReader`).
    fn key_time_mask<K>(&mut self, keys: &[(u32, K)]) -> Option<u16> {
        if self.times.len() >= 1 << 16 {
            return None;
        }
        let mut mask = vec![0u64; self.mask_words];
        for (t, _) in keys {
            let i = self.remap[*t as usize] as usize;
            mask[i / 64] |= 1 << (i % 64);
        }
        if let Some(same) = self.masks.chunks_exact(self.mask_words.max(1)).position(|m| m == mask) {
            return Some(same as u16);
        }
        let worth_it = 64 * self.mask_words < keys.len() * self.time_bits as usize;
        let index = self.masks.len() / self.mask_words.max(1);
        if !worth_it || index >= usize::from(LISTED) {
            return None;
        }
        self.masks.extend_from_slice(&mask);
        Some(index as u16)
    }
}

/// The time-table indices of the keys `e` stores (none for a track at
/// rest or constant).
fn key_times(e: &Encoded) -> impl Iterator<Item = u32> + '_ {
    let (packed, cubic) = match e {
        Encoded::Packed(p) => (&p.keys[..], &[][..]),
        Encoded::Cubic(c) => (&[][..], &c.keys[..]),
        Encoded::Rest | Encoded::Constant(_) => (&[][..], &[][..]),
    };
    packed.iter().map(|k| k.0).chain(cubic.iter().map(|k| k.0))
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
/// weights, each kind grouped by key-time mask, the most shared first
/// (tracks that share one share blocks, whose keys the sampler then finds
/// once), a mask's rotations by the component they rebuild (a block whose
/// tracks all rebuild the same one decodes without a selection per lane),
/// and returns how many are rotations and how many translations or
/// scales. A track that a later one for the same joint (or slot) and
/// property overrides is dropped first, since the order no longer says
/// which wins.
fn sort_by_kind(tracks: &mut Vec<PackedTrack>) -> (usize, usize) {
    let kind = |p: Property| match p {
        Property::Rotation => 0,
        Property::Translation | Property::Scale => 1,
        Property::Weight => 2,
    };
    let target = |t: &PackedTrack| (t.joint, t.property() as u8);
    let mut later = std::collections::HashSet::new();
    let mut keep: Vec<bool> = tracks.iter().rev().map(|t| later.insert(target(t))).collect();
    keep.reverse();
    let mut keep = keep.into_iter();
    tracks.retain(|_| keep.next().unwrap_or(true));
    // The most shared masks first, so that their tracks fill whole blocks.
    let group = |t: &PackedTrack| (kind(t.property()), t.mask, t.step());
    let mut sharing = std::collections::HashMap::new();
    for t in tracks.iter().filter(|t| t.mask != LISTED) {
        *sharing.entry(group(t)).or_insert(0usize) += 1;
    }
    tracks.sort_by_key(|t| {
        let shared = sharing.get(&group(t)).copied().unwrap_or(0);
        let rebuilt = if t.property() == Property::Rotation { t.dropped() } else { 0 };
        (kind(t.property()), std::cmp::Reverse(shared), t.mask, t.step(), rebuilt)
    });
    let count = |k| tracks.iter().filter(|t| kind(t.property()) == k).count();
    (count(0), count(1))
}

/// Sorts `constants` by property in [`PROPERTIES`]' order (each
/// property's in the source clip's order) and returns where each
/// property's group ends.
fn group_by_property(constants: &mut [ConstantTrack]) -> [usize; 4] {
    let group = |p: Property| PROPERTIES.iter().position(|&o| o == p).unwrap_or(PROPERTIES.len());
    constants.sort_by_key(|c| group(c.property));
    PROPERTIES.map(|p| constants.partition_point(|c| group(c.property) <= group(p)))
}

/// How many morph slots from 0 on some track writes (packed `weights`,
/// constants or cubic tracks).
fn weights_written(weights: &[PackedTrack], constants: &[ConstantTrack], cubic: &[CubicTrack]) -> usize {
    let packed = weights.iter().map(|t| t.joint);
    let constant = constants.iter().filter(|c| c.property == Property::Weight).map(|c| c.joint);
    let cubic = cubic.iter().filter(|c| c.property == Property::Weight).map(|c| c.joint);
    let mut written = Vec::new();
    for slot in packed.chain(constant).chain(cubic).map(usize::from) {
        if written.len() <= slot {
            written.resize(slot + 1, false);
        }
        written[slot] = true;
    }
    written.iter().take_while(|&&w| w).count()
}

/// Per block of four morph `weights`, the first slot where its tracks
/// write four consecutive slots (`u32::MAX` otherwise).
fn weight_runs(weights: &[PackedTrack]) -> Vec<u32> {
    weights
        .chunks(LANES)
        .map(|block| {
            let first = u32::from(block[0].joint);
            let consecutive = block.iter().enumerate().all(|(l, t)| u32::from(t.joint) == first + l as u32);
            if block.len() == LANES && consecutive { first } else { u32::MAX }
        })
        .collect()
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

/// Where `times` (sorted, not negative) fall on the frames of one rate:
/// each time's frame, the frames from 0 to the last, and the interval, or
/// `None` if some time is further than four f32 steps from its frame's
/// time (as [`frame_time`] gives it) or the frames would be over an eighth
/// more than the times (masks and indices over them would then grow by
/// more than the time table saves). The rate is taken from the shortest
/// interval between the times; a clip thinned from baked frames keeps at
/// least two neighbouring ones somewhere, and one that does not keeps its
/// listed times. The measured error includes the shift, which is a few
/// f32 steps of time at most.
fn on_frames(times: &[f32]) -> Option<(Vec<u32>, u32, f32)> {
    let (&first, &last) = (times.first()?, times.last()?);
    if times.len() < 2 || first < 0.0 {
        return None;
    }
    let shortest = times.windows(2).map(|w| f64::from(w[1]) - f64::from(w[0])).fold(f64::INFINITY, f64::min);
    let frames_to_last = (f64::from(last) / shortest).round();
    if frames_to_last.is_nan()
        || frames_to_last < 1.0
        || frames_to_last > (times.len() + times.len() / 8) as f64
    {
        return None;
    }
    let interval = (f64::from(last) / frames_to_last) as f32;
    let mut frames = Vec::with_capacity(times.len());
    for &t in times {
        let frame = (f64::from(t) / f64::from(interval)).round() as u32;
        let shift = (frame_time(frame, interval) - t).abs();
        if shift > 4.0 * f32::EPSILON * t.max(interval) || frames.last().is_some_and(|&f| f >= frame) {
            return None;
        }
        frames.push(frame);
    }
    Some((frames, frames_to_last as u32 + 1, interval))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_on_frames_become_a_rate() {
        // 30 Hz frames as ozz writes them (a ratio times the duration, in
        // f32: a step or two off `frame_time`'s), some thinned out.
        let (duration, n) = (8.6f32, 258);
        let times: Vec<f32> =
            (0..=n).filter(|k| k % 13 != 3).map(|k| (k as f32 / n as f32) * duration).collect();
        let (frames, count, interval) = on_frames(&times).expect("on frames");
        assert_eq!(count, 259);
        assert_eq!(frames.len(), times.len());
        for (&t, &f) in times.iter().zip(&frames) {
            assert_eq!(f, (f64::from(t) * 30.0).round() as u32);
            assert!((frame_time(f, interval) - t).abs() <= 4.0 * f32::EPSILON * t);
        }
        // Off the frames of the shortest interval, or too few of them: listed.
        assert!(on_frames(&[0.0, 0.5, 0.7]).is_none());
        assert!(on_frames(&[0.0, 0.1, 1.0]).is_none());
        assert!(on_frames(&[-0.5, 0.0, 0.5]).is_none());
        assert!(on_frames(&[0.25]).is_none());
    }

    #[test]
    fn frames_find_the_last_time_at_or_before_as_a_list_does() {
        let frames = TableTimes::Frames { count: 259, interval: 8.6 / 258.0 };
        let listed = TableTimes::Listed((0..259).map(|i| frames.at(i)).collect());
        assert_eq!((frames.len(), frames.bytes(), listed.bytes()), (259, 0, 259 * 4));
        for i in 0..3000 {
            let t = -0.1 + f64::from(i) * 9.0 / 3000.0;
            assert_eq!(frames.last_at_or_before(t), listed.last_at_or_before(t), "at {t}");
        }
        for i in 0..259 {
            let t = f64::from(frames.at(i));
            assert_eq!(frames.last_at_or_before(t), i);
            assert_eq!(frames.last_at_or_before(t - 1e-9), listed.last_at_or_before(t - 1e-9));
        }
        assert_eq!(frames.at(259), 0.0);
    }

    #[test]
    fn constants_are_grouped_by_property_in_their_order() {
        use Property::*;
        let constant = |joint: u16, property| ConstantTrack { joint, property, value: [f32::from(joint); 4] };
        let mut constants: Vec<ConstantTrack> =
            [(3, Scale), (1, Rotation), (0, Weight), (7, Translation), (2, Rotation), (5, Scale)]
                .map(|(j, p)| constant(j, p))
                .to_vec();
        let ends = group_by_property(&mut constants);
        assert_eq!(ends, [1, 3, 5, 6]);
        let joints = |from: usize, to: usize| constants[from..to].iter().map(|c| c.joint).collect::<Vec<_>>();
        assert_eq!(
            [joints(0, 1), joints(1, 3), joints(3, 5), joints(5, 6)],
            [[7].to_vec(), [1, 2].to_vec(), [3, 5].to_vec(), [0].to_vec()]
        );
        assert!(constants[1..3].iter().all(|c| c.property == Rotation));
        // No scales: the rotations' end is the scales' too.
        let mut constants = vec![constant(4, Weight), constant(1, Rotation)];
        assert_eq!(group_by_property(&mut constants), [0, 1, 1, 2]);
        assert_eq!(group_by_property(&mut []), [0; 4]);
    }
}
