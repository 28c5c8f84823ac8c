//! How a block of four tracks of a kind turns its lanes' quantized keys
//! into values: the lanes' decoding constants side by side
//! ([`KeyDecode`], derived from the track headers when the clip is built),
//! each lane's key read with one 64-bit load, its components unpacked one
//! lane at a time ([`Portable`]) or four lanes per AVX2 variable shift
//! ([`Avx2`], chosen at run time), then values and rotations rebuilt four
//! lanes per SIMD operation. Both unpackings give the same bits.
//!
//! Nothing here finds keys or knows a cursor: `refill` says which keys.

use super::LISTED;
use super::clip::PackedTrack;
use super::cursor::LANES;
use super::quantize::load_bits;
use crate::anim::lanes8::{Lanes8, Portable};
use wide::{CmpEq, CmpLt, f32x4};

/// Per block of four tracks of a kind, the lanes' decoding constants side
/// by side: a block's keys are decoded four lanes per SIMD operation.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C, align(32))]
pub(crate) struct KeyDecode {
    /// Where each component starts in a lane's key (bits from the key's
    /// first), as 64-bit lanes for AVX2's variable shift.
    shift: [[u64; LANES]; 3],
    /// Each component's smallest value (`PackedTrack::min`).
    pub(super) min: [[f32; LANES]; 3],
    /// Each component's bits set (`2^bits - 1`; none: the component is its `min`).
    field: [[u32; LANES]; 3],
    /// The components' quantization step.
    pub(super) step: [f32; LANES],
    /// Rotations: the component rebuilt from the unit length (0 to 3).
    pub(super) dropped: [f32; LANES],
    /// Where each lane's first key's components start in the stream (after
    /// its time index where the key times are listed), and the bits from
    /// one key to the next.
    pub(super) bit_offset: [u32; LANES],
    pub(super) key_bits: [u32; LANES],
    /// Where each lane's key-time mask starts in `CompressedClip::masks`
    /// (lanes whose key times are a mask).
    pub(super) mask_at: [u32; LANES],
    /// Each lane's keys.
    pub(super) keys: [u32; LANES],
    /// Whether all those tracks share one key-time mask and STEP flag
    /// (then they have the same key ids and cross keys together), and
    /// `one_load`.
    pub(super) together: bool,
    /// Whether every lane's three components fit one 64-bit load (56
    /// bits: the load starts at the components' byte).
    pub(super) one_load: bool,
    /// The lanes (one bit each) that hold no STEP keys: playback moves one
    /// on by finding its next key (the next bit of its mask, or the next
    /// key with its time listed).
    pub(super) movable: i32,
    /// The lanes whose key times are listed in the stream.
    pub(super) listed: i32,
    /// Whether every track of the block has lane 0's number of keys, each
    /// key's 64 bits (from its first byte) lie in the stream, and bit
    /// offsets fit 32 bits (see [`KeyDecode::check_reads`]): a key below
    /// that number may then be read for all lanes at once, unchecked.
    pub(super) keys_in_stream: bool,
    /// Rotations: the component every track of the block rebuilds (0 to
    /// 3), which puts the three stored ones in place without a selection
    /// per lane; 4 where they differ (the compressor sorts a mask's tracks
    /// by it, so that few blocks do).
    pub(super) rebuilds: u8,
}

// The size the compression guide gives.
const _: () = assert!(std::mem::size_of::<KeyDecode>() == 320);

impl KeyDecode {
    /// The constants of `tracks` (all of one kind, in a clip whose masks
    /// are `mask_words` long and whose listed key times `time_bits` each),
    /// four to a block; padding lanes decode to anything (they are never
    /// stale).
    pub(crate) fn blocks(tracks: &[PackedTrack], mask_words: usize, time_bits: u32) -> Vec<KeyDecode> {
        let lanes = |block: &[PackedTrack], which: fn(&PackedTrack) -> bool| {
            block.iter().enumerate().filter(|(_, t)| which(t)).fold(0, |lanes, (l, _)| lanes | 1 << l)
        };
        tracks
            .chunks(LANES)
            .map(|block| {
                let one_load = block.iter().all(|t| t.value_bits() <= 56);
                let mut decode = KeyDecode {
                    shift: [[0; LANES]; 3],
                    min: [[0.0; LANES]; 3],
                    field: [[0; LANES]; 3],
                    step: [0.0; LANES],
                    dropped: [3.0; LANES],
                    bit_offset: [0; LANES],
                    key_bits: [0; LANES],
                    mask_at: [0; LANES],
                    keys: [0; LANES],
                    together: one_load
                        && block.iter().all(|t| {
                            t.mask != LISTED && t.mask == block[0].mask && t.step() == block[0].step()
                        }),
                    one_load,
                    keys_in_stream: false,
                    movable: lanes(block, |t| !t.step()),
                    listed: lanes(block, |t| t.mask == LISTED),
                    rebuilds: match block[0].dropped() {
                        c if block.iter().all(|t| t.dropped() == c) => c as u8,
                        _ => 4,
                    },
                };
                for (l, track) in block.iter().enumerate() {
                    let mut shift = 0;
                    for c in 0..3 {
                        let bits = u32::from(track.bits[c]);
                        decode.min[c][l] = track.min[c];
                        decode.shift[c][l] = u64::from(shift);
                        decode.field[c][l] = ((1u64 << bits) - 1) as u32;
                        shift += bits;
                    }
                    let time_bits = if track.mask == LISTED { time_bits } else { 0 };
                    decode.bit_offset[l] = track.bit_offset + time_bits;
                    decode.key_bits[l] = time_bits + track.value_bits();
                    if track.mask != LISTED {
                        decode.mask_at[l] = (usize::from(track.mask) * mask_words) as u32;
                    }
                    decode.keys[l] = track.keys;
                    decode.step[l] = track.range(0).step;
                    decode.dropped[l] = track.dropped() as f32;
                }
                decode
            })
            .collect()
    }

    /// Sets `keys_in_stream` on each of `blocks` whose keys all lie in
    /// `stream` (see the field), once the clip's stream is written.
    pub(crate) fn check_reads(blocks: &mut [KeyDecode], stream: &[u8]) {
        for decode in blocks {
            let keys = decode.keys[0];
            let reads_in_stream = (0..LANES).all(|l| {
                // Padding lanes (no keys) read from the stream's start.
                let last_key = u64::from(decode.keys[l].saturating_sub(1));
                let last_bit = u64::from(decode.bit_offset[l]) + last_key * u64::from(decode.key_bits[l]);
                let padding = decode.keys[l] == 0 && decode.key_bits[l] == 0 && decode.bit_offset[l] == 0;
                (decode.keys[l] == keys || padding)
                    && last_bit <= u64::from(u32::MAX)
                    && (last_bit / 8 + 8) as usize <= stream.len()
            });
            decode.keys_in_stream = decode.one_load && keys > 0 && reads_in_stream;
        }
    }

    /// The 64 bits from the first of each lane's key `index[l]` (among its
    /// track's keys), for a block that is `one_load`.
    #[inline(always)]
    pub(super) fn words(&self, stream: &[u8], index: [u32; LANES]) -> [u64; LANES] {
        let mut words = [0; LANES];
        for l in 0..LANES {
            let first_bit = u64::from(self.bit_offset[l]) + u64::from(index[l]) * u64::from(self.key_bits[l]);
            words[l] = load_bits(stream, first_bit);
        }
        words
    }

    /// Quantized components (as f32) of every lane's key `index`, for a
    /// block whose tracks are `together`; padding lanes read zeros.
    #[inline(always)]
    pub(super) fn quantized<U: Unpack, const N: usize>(&self, stream: &[u8], index: u32) -> [f32x4; N] {
        U::unpack(self, self.words(stream, [index; LANES]))
    }

    /// Four lanes' values from their quantized components (as f32): the
    /// same arithmetic as [`Range::value`](super::quantize::Range::value),
    /// so the same bits.
    #[inline(always)]
    pub(super) fn values<const N: usize>(&self, q: &[f32x4; N]) -> [f32x4; N] {
        let step = f32x4::from(self.step);
        let mut values = [f32x4::ZERO; N];
        for c in 0..N {
            values[c] = f32x4::from(self.min[c]) + q[c] * step;
        }
        values
    }

    /// Four lanes' rotations (`x, y, z, w`) from their smallest three: the
    /// arithmetic of
    /// [`from_smallest_three`](super::quantize::from_smallest_three), so the same bits.
    #[inline(always)]
    pub(super) fn rotations(&self, q: &[f32x4; 3]) -> [f32x4; 4] {
        let [k0, k1, k2] = self.values(q);
        let rebuilt = (((f32x4::ONE - k0 * k0) - k1 * k1) - k2 * k2).fast_max(f32x4::ZERO).sqrt();
        if let Some(q) = in_place(self.rebuilds, rebuilt, [k0, k1, k2]) {
            return q;
        }
        let dropped = f32x4::from(self.dropped);
        let (c0, c1, c2, c3) = (f32x4::ZERO, f32x4::ONE, f32x4::splat(2.0), f32x4::splat(3.0));
        let (is0, is1, is2, is3) =
            (dropped.cmp_eq(c0), dropped.cmp_eq(c1), dropped.cmp_eq(c2), dropped.cmp_eq(c3));
        let (below1, below2) = (dropped.cmp_lt(c1), dropped.cmp_lt(c2));
        [
            is0.blend(rebuilt, k0),
            is1.blend(rebuilt, below1.blend(k0, k1)),
            is2.blend(rebuilt, below2.blend(k1, k2)),
            is3.blend(rebuilt, k2),
        ]
    }
}

/// Rebuilt component `rebuilds` (0 to 3) and the three stored ones, `x, y,
/// z, w` in place, where every lane rebuilds that one; `None` where lanes
/// differ (4), which selects per lane.
#[inline(always)]
pub(super) fn in_place<T>(rebuilds: u8, rebuilt: T, [k0, k1, k2]: [T; 3]) -> Option<[T; 4]> {
    match rebuilds {
        0 => Some([rebuilt, k0, k1, k2]),
        1 => Some([k0, rebuilt, k1, k2]),
        2 => Some([k0, k1, rebuilt, k2]),
        3 => Some([k0, k1, k2, rebuilt]),
        _ => None,
    }
}

/// How the first `N` quantized components of four lanes' keys are
/// unpacked from the 64 bits at each key's first bit (`words`, as
/// [`KeyDecode::words`] reads them), to f32 (exact: a component has at
/// most 24 bits).
pub(crate) trait Unpack: Lanes8 {
    fn unpack<const N: usize>(decode: &KeyDecode, words: [u64; LANES]) -> [f32x4; N];

    /// The quantized components of key `index` of every lane of two
    /// blocks whose tracks are `together` and `keys_in_stream`, `index` below
    /// their number of keys: eight lanes, the first block's low. What
    /// [`KeyDecode::quantized`] gives each block, so the same bits.
    #[inline(always)]
    fn quantized_pair<const N: usize>(pair: [&KeyDecode; 2], stream: &[u8], index: u32) -> [Self; N] {
        let [low, high] = pair.map(|d| d.quantized::<Self, N>(stream, index).map(f32x4::to_array));
        std::array::from_fn(|c| Self::join(&low[c], &high[c]))
    }
}

/// One lane at a time: a shift and a mask per component.
impl Unpack for Portable {
    #[inline(always)]
    fn unpack<const N: usize>(decode: &KeyDecode, words: [u64; LANES]) -> [f32x4; N] {
        std::array::from_fn(|c| {
            f32x4::from(std::array::from_fn::<f32, LANES, _>(|l| {
                ((words[l] >> decode.shift[c][l]) as u32 & decode.field[c][l]) as f32
            }))
        })
    }
}

/// Four lanes per operation: AVX2's per-lane variable shift, the low
/// halves gathered and masked, one conversion. Only inside a function
/// compiled for AVX2.
#[cfg(target_arch = "x86_64")]
impl Unpack for crate::anim::lanes8::Avx2 {
    #[inline(always)]
    fn unpack<const N: usize>(decode: &KeyDecode, words: [u64; LANES]) -> [f32x4; N] {
        use std::arch::x86_64::*;
        // SAFETY: callers compile this for AVX2 and choose it where the CPU
        // has it; the loads read the arrays of `decode` they name.
        unsafe {
            let [w0, w1, w2, w3] = words;
            let words = _mm256_set_epi64x(w3 as i64, w2 as i64, w1 as i64, w0 as i64);
            let low_halves = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
            // A loop, not a closure (see `nlerp_pair` in the sampler).
            let mut quantized = [f32x4::ZERO; N];
            for (c, out) in quantized.iter_mut().enumerate() {
                let shifted = _mm256_srlv_epi64(words, _mm256_load_si256(decode.shift[c].as_ptr().cast()));
                let low = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(shifted, low_halves));
                let q = _mm_and_si128(low, _mm_loadu_si128(decode.field[c].as_ptr().cast()));
                *out = std::mem::transmute::<__m128, f32x4>(_mm_cvtepi32_ps(q));
            }
            quantized
        }
    }

    /// Eight lanes' bit offsets computed in one register, each key's 64
    /// bits read unchecked straight into a register (a gather instead took
    /// as long as two blocks refilled alone on Zen 3, and words stored to
    /// an array and loaded back whole wait for those stores: 11 % slower),
    /// a lane's bit within its first byte added to its components' shifts
    /// (`words` shifts by it first: the same bits, the total below 64).
    #[inline(always)]
    fn quantized_pair<const N: usize>(pair: [&KeyDecode; 2], stream: &[u8], index: u32) -> [Self; N] {
        use std::arch::x86_64::*;
        let [low, high] = pair;
        assert!(low.keys_in_stream && high.keys_in_stream && index < low.keys[0] && index < high.keys[0]);
        // No closures (see `nlerp_pair` in the sampler).
        // SAFETY: callers compile this for AVX2 and choose it where the CPU
        // has it. Each lane reads the 8 bytes from its key's first byte:
        // `keys_in_stream` says those lie in the stream for every key below
        // lane 0's count (padding lanes read from the stream's start), and
        // that the bit offsets fit 32 bits.
        unsafe {
            let index = _mm256_set1_epi32(index as i32);
            let bits = _mm256_add_epi32(
                join_u32(&low.bit_offset, &high.bit_offset),
                _mm256_mullo_epi32(index, join_u32(&low.key_bits, &high.key_bits)),
            );
            let bytes = _mm256_srli_epi32::<3>(bits);
            let within = _mm256_and_si256(bits, _mm256_set1_epi32(7));
            let bytes: [u32; 8] = std::mem::transmute(bytes);
            let mut w = [0i64; 8];
            for i in 0..8 {
                w[i] = stream.as_ptr().add(bytes[i] as usize).cast::<i64>().read_unaligned();
            }
            let words =
                [_mm256_setr_epi64x(w[0], w[1], w[2], w[3]), _mm256_setr_epi64x(w[4], w[5], w[6], w[7])];
            let within = [
                _mm256_cvtepu32_epi64(_mm256_castsi256_si128(within)),
                _mm256_cvtepu32_epi64(_mm256_extracti128_si256::<1>(within)),
            ];
            let mut quantized = [crate::anim::lanes8::Avx2(_mm256_setzero_ps()); N];
            for (c, out) in quantized.iter_mut().enumerate() {
                let mut shifted = [_mm256_setzero_ps(); 2];
                for h in 0..2 {
                    let shift =
                        _mm256_add_epi64(_mm256_load_si256(pair[h].shift[c].as_ptr().cast()), within[h]);
                    shifted[h] = _mm256_castsi256_ps(_mm256_srlv_epi64(words[h], shift));
                }
                // Each 64-bit lane's low half, the first block's four then
                // the second's: picked within 128-bit halves, then put in order.
                let halves = _mm256_castps_si256(_mm256_shuffle_ps::<0b10_00_10_00>(shifted[0], shifted[1]));
                let ordered = _mm256_permute4x64_epi64::<0b11_01_10_00>(halves);
                let q = _mm256_and_si256(ordered, join_u32(&low.field[c], &high.field[c]));
                *out = crate::anim::lanes8::Avx2(_mm256_cvtepi32_ps(q));
            }
            quantized
        }
    }
}

/// Two blocks' four u32 in one register, the first block's low.
///
/// # Safety
///
/// Only where the CPU has AVX2, inside a function compiled for it (this
/// one inlines into it by rule).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn join_u32(low: &[u32; LANES], high: &[u32; LANES]) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    // SAFETY: loads of four u32 from arrays of four; AVX2 as the caller promised.
    unsafe { _mm256_setr_m128i(_mm_loadu_si128(low.as_ptr().cast()), _mm_loadu_si128(high.as_ptr().cast())) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::compression::quantize::{BitWriter, Range, from_smallest_three};
    use crate::anim::lanes8::Simd;

    /// Four lanes of different widths and offsets, one rebuilding each
    /// quaternion component.
    fn four_lanes(stream_start: [u32; LANES], widths: [[u32; 3]; LANES]) -> KeyDecode {
        let mut decode = KeyDecode {
            shift: [[0; LANES]; 3],
            min: [[-0.71, -0.3, 0.1, -0.05], [-0.2, -0.69, -0.4, 0.0], [0.05, -0.5, -0.7, -0.33]],
            field: [[0; LANES]; 3],
            step: [1.0 / 4096.0, 3.0e-5, 2.0e-3, 7.0e-6],
            dropped: [0.0, 1.0, 2.0, 3.0],
            bit_offset: stream_start,
            key_bits: widths.map(|w| w.iter().sum()),
            mask_at: [0; LANES],
            keys: [3; LANES],
            together: true,
            one_load: true,
            movable: 0b1111,
            listed: 0,
            keys_in_stream: false,
            rebuilds: 4,
        };
        for (l, widths) in widths.iter().enumerate() {
            let mut shift = 0;
            for (c, &bits) in widths.iter().enumerate() {
                decode.shift[c][l] = u64::from(shift);
                decode.field[c][l] = ((1u64 << bits) - 1) as u32;
                shift += bits;
            }
        }
        decode
    }

    /// Keys 0..3 of each lane of `decode` read back, per unpacking, against
    /// the fields written and one track at a time's arithmetic.
    fn decodes_as_written<U: Unpack>() {
        let widths = [[12, 12, 12], [7, 7, 7], [0, 0, 0], [20, 18, 18]];
        let mut writer = BitWriter::default();
        let mut starts = [0; LANES];
        let mut written = [[[0u32; 3]; 3]; LANES];
        for l in 0..LANES {
            starts[l] = writer.bits() as u32;
            for (k, key) in written[l].iter_mut().enumerate() {
                for c in 0..3 {
                    let value = (k as u32 + 1)
                        .wrapping_mul(2_654_435_761u32.wrapping_mul(c as u32 + l as u32 + 1))
                        >> 8;
                    key[c] = value & ((1u32 << widths[l][c]) - 1);
                    writer.push(key[c], widths[l][c]);
                }
            }
        }
        let stream = writer.finish();
        let decode = four_lanes(starts, widths);
        for k in 0u32..3 {
            let q: [[f32; LANES]; 3] = decode.quantized::<U, 3>(&stream, k).map(f32x4::to_array);
            let rotations = decode.rotations(&q.map(f32x4::from));
            for l in 0..LANES {
                let kept: [f32; 3] = std::array::from_fn(|c| {
                    let written = written[l][k as usize][c];
                    assert_eq!(q[c][l], written as f32, "lane {l} key {k} component {c}");
                    Range { min: decode.min[c][l], step: decode.step[l] }.value(written)
                });
                let scalar = from_smallest_three(kept, l);
                let block = rotations.map(|c| c.to_array()[l]);
                assert_eq!(block.map(f32::to_bits), scalar.map(f32::to_bits), "lane {l} key {k}");
            }
        }
    }

    #[test]
    fn a_block_whose_tracks_rebuild_one_component_puts_it_where_each_lane_would() {
        let q = [[100.0, 2.0, 0.0, 4000.0], [7.0, 90.0, 1.0, 30.0], [0.0, 55.0, 3.0, 2.0]].map(f32x4::from);
        for c in 0..4u8 {
            let mut lane_by_lane = four_lanes([0; LANES], [[12, 12, 12]; LANES]);
            lane_by_lane.dropped = [f32::from(c); LANES];
            let whole = KeyDecode { rebuilds: c, ..lane_by_lane };
            let [got, want] =
                [whole, lane_by_lane].map(|d| d.rotations(&q).map(|v| v.to_array().map(f32::to_bits)));
            assert_eq!(got, want, "component {c} rebuilt");
        }
    }

    #[test]
    fn a_block_decodes_its_keys_to_the_bits_of_one_track_at_a_time() {
        decodes_as_written::<Portable>();
        #[cfg(target_arch = "x86_64")]
        if Simd::avx2_available() {
            #[target_feature(enable = "avx2,fma")]
            fn with_avx2() {
                decodes_as_written::<crate::anim::lanes8::Avx2>();
            }
            // SAFETY: the CPU has AVX2 and FMA.
            unsafe { with_avx2() };
        }
    }
}
