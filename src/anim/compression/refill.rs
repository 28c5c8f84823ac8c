//! Refilling a block of four tracks of a [`CompressedCursor`] as one: each
//! stale lane's keys are found and its key read (scalar work), then the
//! block's new keys are unpacked and decoded four lanes per SIMD operation
//! (see [`KeyDecode`]) and written whole, a store per component. The
//! compressor puts tracks that share a key-time mask in the same blocks;
//! when all of a block's tracks share one and move on together (a baked
//! clip's mostly do), the keys are found once for the block. This made
//! sampling 1.3 to 1.7 times faster on baked clips (Fox, CesiumMan, Girl).
//!
//! Two rotation blocks of one mask that move on by one key together are
//! refilled as one, eight lanes at a time, where they can (see
//! `refill_pair`).
//!
//! Every refill is compiled into the sampler twice, for the portable build
//! and for AVX2 (its unpacking four lanes per variable shift); the CPU
//! picks one at run time.

use super::cursor::{CompressedCursor, KeyBlock, KeyReader, Keys, LANES, Mask, PADDING, Span};
use super::cursor::{from_arrays, to_arrays};
use super::key_decode::{KeyDecode, Unpack};
use super::quantize::read_bits;
use super::{CompressedClip, PackedTrack};
use wide::f32x4;

/// Where each lane of a block refilled gets its new keys `a` and `b`
/// from, and the quantized components of those to decode.
struct Refill<const N: usize> {
    /// Quantized components (as f32) of the keys to decode, per lane.
    a: [f32x4; N],
    b: [f32x4; N],
    /// Lanes (one bit each) whose new `a` is the cached `b` (playback moved
    /// on one interval), or is decoded.
    a_was_b: usize,
    a_decoded: usize,
    /// Lanes whose new `b` is their new `a` (a key held), the cached `a`,
    /// or is decoded. Lanes in none of these keep what they hold.
    b_is_a: usize,
    b_was_a: usize,
    b_decoded: usize,
}

impl<const N: usize> Refill<N> {
    const NONE: Self = Refill {
        a: [f32x4::ZERO; N],
        b: [f32x4::ZERO; N],
        a_was_b: 0,
        a_decoded: 0,
        b_is_a: 0,
        b_was_a: 0,
        b_decoded: 0,
    };

    /// Lane `l`, a track (read by `reader`) that held keys `held`, now
    /// holds `keys`: says where each comes from (a key cached already is
    /// moved, not decoded again) and keeps the quantized components of the
    /// others.
    #[inline(always)]
    fn lane(&mut self, l: usize, reader: &KeyReader, track: &PackedTrack, held: &mut [u32; 2], keys: &Keys) {
        let bit = 1 << l;
        if keys.a == held[1] {
            self.a_was_b |= bit;
        } else if keys.a != held[0] {
            self.a_decoded |= bit;
            insert(&mut self.a, l, reader.quantized(track, keys.a));
        }
        if keys.b == keys.a {
            self.b_is_a |= bit;
        } else if keys.b == held[0] && keys.b != held[1] {
            self.b_was_a |= bit;
        } else if keys.b != held[1] {
            self.b_decoded |= bit;
            insert(&mut self.b, l, reader.quantized(track, keys.b));
        }
        *held = [keys.a, keys.b];
    }

    /// Writes the new keys of every lane into `block`'s `a` and `b`, `V`
    /// decoding the quantized ones with `decode`, whole blocks at a time (one
    /// store per component: a narrower store would stall the sampler's
    /// loads).
    #[inline(always)]
    fn apply<V: Decode<N, M>, const M: usize>(&self, block: &mut KeyBlock<M>, decode: &KeyDecode) {
        let (old_a, old_b) = (from_arrays(&block.a), from_arrays(&block.b));
        let decoded_a = if self.a_decoded != 0 { V::values(decode, &self.a) } else { old_a };
        let decoded_b = if self.b_decoded != 0 { V::values(decode, &self.b) } else { old_b };
        let (a_was_b, a_decoded) = (lanes(self.a_was_b), lanes(self.a_decoded));
        let (b_is_a, b_was_a, b_decoded) = (lanes(self.b_is_a), lanes(self.b_was_a), lanes(self.b_decoded));
        for c in 0..M {
            let a = a_was_b.blend(old_b[c], a_decoded.blend(decoded_a[c], old_a[c]));
            let b = b_is_a.blend(a, b_was_a.blend(old_a[c], b_decoded.blend(decoded_b[c], old_b[c])));
            block.a[c] = a.to_array();
            block.b[c] = b.to_array();
        }
    }
}

/// Lane `l` of `lanes` becomes `q` (as f32), in registers: a lane
/// stored on its own and then loaded with the others would wait for the
/// store.
#[inline(always)]
fn insert<const N: usize>(lanes: &mut [f32x4; N], l: usize, q: [u32; 3]) {
    let lane = self::lanes(1 << l);
    for (v, q) in lanes.iter_mut().zip(q) {
        *v = lane.blend(f32x4::splat(q as f32), *v);
    }
}

/// All bits set in the lanes whose bit is set in `bits`.
#[inline(always)]
fn lanes(bits: usize) -> f32x4 {
    const ON: f32 = f32::from_bits(u32::MAX);
    const MASKS: [[f32; LANES]; 16] = {
        let mut masks = [[0.0; LANES]; 16];
        let mut bits = 0;
        while bits < 16 {
            let mut l = 0;
            while l < LANES {
                if bits & (1 << l) != 0 {
                    masks[bits][l] = ON;
                }
                l += 1;
            }
            bits += 1;
        }
        masks
    };
    f32x4::from(MASKS[bits & 15])
}

/// How a kind's `N` quantized components per key become its `M` values.
trait Decode<const N: usize, const M: usize> {
    fn values(decode: &KeyDecode, q: &[f32x4; N]) -> [f32x4; M];
}

/// Rotations: the smallest three components rebuilt to four
/// ([`KeyDecode::rotations`]).
struct Rotations;

impl Decode<3, 4> for Rotations {
    #[inline(always)]
    fn values(decode: &KeyDecode, q: &[f32x4; 3]) -> [f32x4; 4] {
        decode.rotations(q)
    }
}

/// Translations, scales and weights: each component as stored
/// ([`KeyDecode::values`]).
struct Values;

impl<const N: usize> Decode<N, N> for Values {
    #[inline(always)]
    fn values(decode: &KeyDecode, q: &[f32x4; N]) -> [f32x4; N] {
        decode.values(q)
    }
}

/// One block of four tracks of a kind, as a refill sees it.
struct Block<'a, const M: usize> {
    /// The block's tracks (four, or fewer in a kind's last block).
    tracks: &'a [PackedTrack],
    /// Their cached keys' ids.
    held: &'a mut [[u32; 2]],
    /// Their cached keys.
    keys: &'a mut KeyBlock<M>,
    /// Their decoding constants.
    decode: &'a KeyDecode,
}

/// The `stale` lanes (one bit each) of `block` cache the keys around `t`;
/// `V` decodes a block's quantized keys. Where every track of the block
/// shares one key-time mask (a baked clip's mostly do) and held the same
/// keys, the keys are found once for them all.
///
/// No closures here or below (see `nlerp_pair` in the sampler), nor
/// functions passed as values: a function passed as an `impl Fn` was
/// called out of line from the AVX2 sampler. `V` names the decoding as a
/// type, so it inlines by rule.
#[inline(always)]
fn refill<U: Unpack, V: Decode<N, M>, const N: usize, const M: usize>(
    clip: &CompressedClip,
    block: Block<'_, M>,
    stale: i32,
    t: f64,
    last: &mut Option<Crossing>,
) {
    let Block { tracks, held, keys: cached, decode } = block;
    // Lanes of tracks that share their key times and STEP flag have the
    // same spans (padding lanes are never stale), so they go stale
    // together and the same search gives each the same keys.
    debug_assert!(!decode.together || held.iter().all(|h| *h == held[0]));
    if decode.together && stale == (1 << tracks.len()) - 1 {
        together::<U, V, N, M>(clip, Block { tracks, held, keys: cached, decode }, t, last);
        return;
    }
    if forward::<U, V, N, M>(clip, Block { tracks, held, keys: cached, decode }, stale, t, *last) {
        return;
    }
    let mut refill = Refill::<N>::NONE;
    let mut rest = stale;
    while rest != 0 {
        let l = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        let track = &tracks[l];
        let reader = KeyReader::new(clip, track);
        let keys = reader.around(t, held[l]);
        refill.lane(l, &reader, track, &mut held[l], &keys);
        cached.span.set(l, &keys);
    }
    refill.apply::<V, M>(cached, decode);
}

/// A block whose tracks move on together (see [`KeyDecode`]), all of them
/// stale: moved on by one key (`together_forward`), or else to the keys
/// one search finds, both decoded four lanes at a time (the lanes share
/// key ids). A loop back to the clip's start, or a seek, takes the second
/// way: on Fox Walk (a loop every 43 frames at 60 Hz), decoding lane by
/// lane there cost about 4 % of all its sampling.
#[inline(always)]
fn together<U: Unpack, V: Decode<N, M>, const N: usize, const M: usize>(
    clip: &CompressedClip,
    block: Block<'_, M>,
    t: f64,
    last: &mut Option<Crossing>,
) {
    let Block { tracks, held, keys: cached, decode } = block;
    let lanes = (1 << tracks.len()) - 1;
    if together_forward::<U, V, N, M>(clip, Block { tracks, held, keys: cached, decode }, lanes, t, last) {
        return;
    }
    let keys = KeyReader::new(clip, &tracks[0]).around(t, held[0]);
    // Padding lanes stay valid forever.
    let mut span = PADDING;
    for l in 0..tracks.len().min(LANES) {
        span.set(l, &keys);
    }
    cached.span = span;
    let a = V::values(decode, &decode.quantized::<U, N>(&clip.stream, keys.a & 0xffff));
    let b = match keys.b == keys.a {
        true => a,
        false => V::values(decode, &decode.quantized::<U, N>(&clip.stream, keys.b & 0xffff)),
    };
    cached.a = to_arrays(&a);
    cached.b = to_arrays(&b);
    held.fill([keys.a, keys.b]);
}

/// A block whose tracks move on together (see [`KeyDecode`]), all of
/// them stale, when playback moved them on by one key, as it mostly does:
/// the new `a` is the cached `b`, the new `b` the next key, found once and
/// decoded four lanes at a time. The keys and span are those the general
/// path finds (the same bits). Everything is built in registers and stored
/// whole: a `Keys` stored field by field and loaded back as a vector (as
/// the general path's span is) waits for those stores to drain, since
/// narrower stores do not forward to a wider load. Returns false, having
/// changed nothing, where the block needs more (as [`forward`]).
#[inline(always)]
fn together_forward<U: Unpack, V: Decode<N, M>, const N: usize, const M: usize>(
    clip: &CompressedClip,
    block: Block<'_, M>,
    live: i32,
    t: f64,
    last: &mut Option<Crossing>,
) -> bool {
    let Block { held, keys: cached, decode, .. } = block;
    let [a, b] = held[0];
    // The interval ended at the cached `b`'s time.
    let lo = cached.span.hi[0];
    // A held key (or none cached) ends no interval to move on from.
    if decode.movable != live || a == b || f64::from(lo) > t {
        return false;
    }
    let Some(crossing) = Crossing::find(clip, decode.mask_at[0], b, lo, t, last) else { return false };
    let k = crossing.to;
    cached.span = crossing.span(live);
    let new = V::values(decode, &decode.quantized::<U, N>(&clip.stream, k & 0xffff));
    cached.a = cached.b;
    cached.b = to_arrays(&new);
    // Lane by lane (a block has at most four): as a loop over the slice,
    // the compiler vectorised it with more set-up than stores.
    for l in 0..LANES {
        if let Some(held) = held.get_mut(l) {
            *held = [b, k];
        }
    }
    true
}

/// A move on by one key that `together_forward` found for a block:
/// from key `from` (an id) of the mask at `mask_at` to key `to` at time
/// `hi`, `inv` the interval's `1 / (hi - lo)`. Blocks of one mask (a baked
/// clip's mostly share one) move on together, and the next one, or a lane
/// of that mask in a block moving on lane by lane (`forward`), takes it
/// from the one before instead of searching the mask again.
#[derive(Clone, Copy)]
pub(crate) struct Crossing {
    mask_at: u32,
    from: u32,
    /// The new key `b`'s id.
    pub(super) to: u32,
    /// The new interval: from the old key `b`'s time to the new one's.
    lo: f32,
    hi: f32,
    inv: f32,
}

impl Crossing {
    /// The move on from key `from` (an id, whose time is `lo`) of the mask
    /// at `mask_at` to the next key, where `t` falls before that one: the
    /// one `last` holds if it is that, else found (and kept in `last`).
    #[inline(always)]
    pub(super) fn find(
        clip: &CompressedClip,
        mask_at: u32,
        from: u32,
        lo: f32,
        t: f64,
        last: &mut Option<Crossing>,
    ) -> Option<Crossing> {
        match *last {
            // The block before that moved on from the same key of the same
            // mask found the next key already.
            Some(c) if c.mask_at == mask_at && c.from == from => Some(c),
            _ => {
                let (to, hi) = next_key(clip, mask_at, from, t)?;
                let c = Crossing { mask_at, from, to, lo, hi, inv: 1.0 / (hi - lo) };
                *last = Some(c);
                Some(c)
            }
        }
    }

    /// The span of a block whose `live` lanes (one bit each) made this
    /// move; padding lanes stay valid forever (a kind's last block may
    /// have some).
    #[inline(always)]
    pub(super) fn span(&self, live: i32) -> Span {
        let all = live == (1 << LANES) - 1;
        if all {
            return Span {
                lo: [self.lo; LANES],
                hi: [self.hi; LANES],
                t0: [self.lo; LANES],
                inv: [self.inv; LANES],
            };
        }
        let live = lanes(live as usize);
        Span {
            lo: live.blend(f32x4::splat(self.lo), PADDING.lo.into()).to_array(),
            hi: live.blend(f32x4::splat(self.hi), PADDING.hi.into()).to_array(),
            t0: live.blend(f32x4::splat(self.lo), PADDING.t0.into()).to_array(),
            inv: live.blend(f32x4::splat(self.inv), PADDING.inv.into()).to_array(),
        }
    }
}

/// The key after key `b` (an id) of a track whose key-time mask starts at
/// `mask_at`, and its time, where `t` falls before that time: what
/// `KeyReader::next` and `KeyReader::time` give, without a reader.
#[inline(always)]
fn next_key(clip: &CompressedClip, mask_at: u32, b: u32, t: f64) -> Option<(u32, f32)> {
    let k = Mask::at(clip, mask_at as usize).next_key(b)?;
    let time = clip.times.at((k >> 16) as usize);
    (t < f64::from(time)).then_some((k, time))
}

/// `next_key` for lane `l` of a block, a lane whose key times are listed
/// in the stream (a time-table index before each key; ids are key indices).
#[inline(always)]
fn next_listed(clip: &CompressedClip, decode: &KeyDecode, l: usize, b: u32, t: f64) -> Option<(u32, f32)> {
    let k = b.checked_add(1).filter(|&k| k < decode.keys[l])?;
    let time_bits = u32::from(clip.time_bits);
    let start = u64::from(decode.bit_offset[l] - time_bits) + u64::from(k) * u64::from(decode.key_bits[l]);
    let time = clip.times.at(read_bits(&clip.stream, start, time_bits) as usize);
    (t < f64::from(time)).then_some((k, time))
}

/// The `stale` lanes of `block` when playback moved each on by one key,
/// as it mostly does (60 Hz playback of keys a frame or more apart): a
/// lane's new `a` is its cached `b`, its new `b` the next key, decoded with
/// the others' four lanes at a time, and the spans are computed four lanes
/// at a time too. The keys and spans are those the general path finds
/// (the same bits), found with less work: no search, no key compared
/// twice, no lane stored alone. Returns false, having changed nothing,
/// where a lane needs more (seeking, looping, playback past a track's
/// first or last key or by more than one key, STEP keys). Against the
/// general path, 60 Hz playback sampled CesiumMan and Fox Survey 8 %
/// faster, MorphStressTest's TheWave 9 %; taking lanes whose key times
/// are listed too (Fox Survey's six sparsest tracks), Fox Survey 5 % fewer
/// instructions.
#[inline(always)]
fn forward<U: Unpack, V: Decode<N, M>, const N: usize, const M: usize>(
    clip: &CompressedClip,
    block: Block<'_, M>,
    stale: i32,
    t: f64,
    last: Option<Crossing>,
) -> bool {
    let Block { tracks, held, keys: cached, decode } = block;
    if stale & !decode.movable != 0 {
        return false;
    }
    let mut next = [0u32; LANES];
    let mut hi = cached.span.hi;
    let mut q = [f32x4::ZERO; N];
    // Each lane's new key, where the block's keys are one load each.
    let mut index = [0u32; LANES];
    let mut rest = stale;
    while rest != 0 {
        let l = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        let [a, b] = held[l];
        // A held key (or none cached) ends no interval to move on from.
        // (Times are never NaN: the job refuses a NaN time.)
        if a == b || f64::from(hi[l]) > t {
            return false;
        }
        let listed = decode.listed & (1 << l) != 0;
        let mask_at = decode.mask_at[l];
        let found = match last {
            _ if listed => next_listed(clip, decode, l, b, t),
            // A block before moved on from this key of this mask.
            Some(c) if c.mask_at == mask_at && c.from == b => Some((c.to, c.hi)),
            _ => next_key(clip, mask_at, b, t),
        };
        let Some((k, time)) = found else { return false };
        (next[l], hi[l]) = (k, time);
        if decode.one_load {
            index[l] = if listed { k } else { k & 0xffff };
        } else {
            let track = &tracks[l];
            insert(&mut q, l, KeyReader::new(clip, track).quantized(track, k));
        }
    }
    if decode.one_load {
        q = U::unpack(decode, decode.words(&clip.stream, index));
    }
    for (l, held) in held.iter_mut().enumerate() {
        if stale & (1 << l) != 0 {
            *held = [held[1], next[l]];
        }
    }
    let moved = lanes(stale as usize);
    let span = &mut cached.span;
    // What `KeyReader::interval` gives each lane: the interval from the
    // old end key to the new one.
    let lo = moved.blend(f32x4::from(span.hi), f32x4::from(span.lo));
    let hi = f32x4::from(hi);
    span.t0 = moved.blend(lo, f32x4::from(span.t0)).to_array();
    span.inv = moved.blend(f32x4::ONE / (hi - lo), f32x4::from(span.inv)).to_array();
    span.lo = lo.to_array();
    span.hi = hi.to_array();
    let decoded = V::values(decode, &q);
    for ((a, b), new) in cached.a.iter_mut().zip(&mut cached.b).zip(decoded) {
        let old_b = f32x4::from(*b);
        *a = moved.blend(old_b, f32x4::from(*a)).to_array();
        *b = moved.blend(new, old_b).to_array();
    }
    true
}

/// Block `b` of the tracks of a kind, those `kind` of `clip.tracks`, with
/// its cached keys `keys` and decoding constants `decode`.
fn block<'a, const M: usize>(
    clip: &'a CompressedClip,
    held: &'a mut [[u32; 2]],
    kind: std::ops::Range<usize>,
    b: usize,
    keys: &'a mut KeyBlock<M>,
    decode: &'a KeyDecode,
) -> Block<'a, M> {
    let first = kind.start + b * LANES;
    let end = kind.end.min(first + LANES);
    Block { tracks: &clip.tracks[first..end], held: &mut held[first..end], keys, decode }
}

/// The `stale` lanes (one bit each) of rotation block `b` cache the keys
/// around `t`, unpacked as `U` does (inlined into the sampler, compiled for
/// the instructions `U` needs).
#[inline(always)]
pub(crate) fn refill_rotations<U: Unpack>(
    clip: &CompressedClip,
    cursor: &mut CompressedCursor,
    b: usize,
    stale: i32,
    t: f64,
    last: &mut Option<Crossing>,
) {
    let kind = 0..clip.rotation_tracks;
    let block = block(clip, &mut cursor.keys, kind, b, &mut cursor.rotations[b], &clip.rotation_decode[b]);
    refill::<U, Rotations, 3, 4>(clip, block, stale, t, last);
}

/// The `stale` lanes of translation-or-scale block `b` cache the keys
/// around `t`.
#[inline(always)]
pub(crate) fn refill_vectors<U: Unpack>(
    clip: &CompressedClip,
    cursor: &mut CompressedCursor,
    b: usize,
    stale: i32,
    t: f64,
    last: &mut Option<Crossing>,
) {
    let kind = clip.rotation_tracks..clip.rotation_tracks + clip.vector_tracks;
    let block = block(clip, &mut cursor.keys, kind, b, &mut cursor.vectors[b], &clip.vector_decode[b]);
    refill::<U, Values, 3, 3>(clip, block, stale, t, last);
}

/// The `stale` lanes of morph weight block `b` cache the keys around `t`.
#[inline(always)]
pub(crate) fn refill_weights<U: Unpack>(
    clip: &CompressedClip,
    cursor: &mut CompressedCursor,
    b: usize,
    stale: i32,
    t: f64,
    last: &mut Option<Crossing>,
) {
    let kind = clip.rotation_tracks + clip.vector_tracks..clip.tracks.len();
    let block = block(clip, &mut cursor.keys, kind, b, &mut cursor.weights[b], &clip.weight_decode[b]);
    refill::<U, Values, 1, 1>(clip, block, stale, t, last);
}
