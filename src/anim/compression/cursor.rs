//! The per-character decoded-key cache of a compressed clip, as the
//! runtimes of ozz-animation and ACL keep one: for every stored track, the
//! two keys around the last sampled time, decoded to f32, with the time
//! span they are good for. A frame decodes only the keys of the tracks
//! whose span playback left, and of those only the keys not cached already
//! (forward playback decodes each key once per loop); seeking, looping and
//! playing backwards find the new span by a search. Tracks are cached four
//! to a SIMD block, the rotations apart from the translations and scales,
//! component-major.
//!
//! A block is refilled as one: each stale lane's keys are found and its
//! quantized components read (scalar work), then the block's new keys are
//! decoded four lanes per SIMD operation (values, the rebuilt rotation
//! component) and written whole, a store per component. The compressor
//! puts tracks that share a key-time mask in the same blocks; when all of
//! a block's tracks share one and move on together (a baked clip's mostly
//! do), the keys are found once for the block and the new keys read
//! straight from per-block constants (`KeyDecode`). This made sampling
//! 1.3 to 1.7 times faster on baked clips (Fox, CesiumMan, Girl).
//!
//! Only a hint: it never changes what a track gives at a time, which
//! depends on the two keys around that time, never on where the cursor was
//! before; and sampling through it never allocates.

use super::clip::TableTimes;
use super::quantize::{load_bits, read_bits};
use super::{CompressedClip, CubicTrack, LISTED, PackedTrack};
use crate::anim::math::hermite;
use wide::{CmpEq, CmpLt, f32x4};

/// Tracks per SIMD block.
pub(crate) const LANES: usize = 4;

/// Where four lanes' cached keys are good for and their ratios.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C, align(16))]
pub(crate) struct Span {
    /// The keys hold for times `lo <= t < hi` (f32 key times; the
    /// comparisons are made exact for f64 times, see the sampler).
    pub(crate) lo: [f32; LANES],
    pub(crate) hi: [f32; LANES],
    /// The ratio between the keys is `(t - t0) * inv`; `inv` is 0 where a
    /// lane holds its first key (before a track's first key, after its
    /// last, STEP tracks), with `t0` 0 so that the ratio is 0.
    pub(crate) t0: [f32; LANES],
    pub(crate) inv: [f32; LANES],
}

impl Span {
    /// Every lane stale: the first sample finds its keys.
    const STALE: Span = Span {
        lo: [f32::INFINITY; LANES],
        hi: [f32::NEG_INFINITY; LANES],
        t0: [0.0; LANES],
        inv: [0.0; LANES],
    };

    fn set(&mut self, l: usize, keys: &Keys) {
        self.lo[l] = keys.lo;
        self.hi[l] = keys.hi;
        self.t0[l] = keys.t0;
        self.inv[l] = keys.inv;
    }
}

/// Four tracks' cached keys `a` and `b` as decoded, `N` components each,
/// component-major, and where they hold.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C, align(16))]
pub(crate) struct KeyBlock<const N: usize> {
    pub(crate) a: [[f32; LANES]; N],
    pub(crate) b: [[f32; LANES]; N],
    pub(crate) span: Span,
}

/// Four rotation tracks' keys (quaternion components `x, y, z, w`; the
/// sampler takes `b` on `a`'s side of the sphere).
pub(crate) type RotationBlock = KeyBlock<4>;

/// Four translation or scale tracks' keys.
pub(crate) type VectorBlock = KeyBlock<3>;

/// Four morph weights' keys.
pub(crate) type WeightBlock = KeyBlock<1>;

impl<const N: usize> KeyBlock<N> {
    /// Blocks for `count` tracks, nothing cached.
    fn blocks(count: usize) -> Vec<Self> {
        vec![
            KeyBlock { a: [[0.0; LANES]; N], b: [[0.0; LANES]; N], span: Span::STALE };
            count.div_ceil(LANES)
        ]
    }
}

/// Lanes past the last track of a kind: valid forever, never written out.
const PADDING: Span =
    Span { lo: [f32::NEG_INFINITY; LANES], hi: [f32::INFINITY; LANES], t0: [0.0; LANES], inv: [0.0; LANES] };

/// Per-character sampling state of one compressed clip (see the module
/// documentation): 56 bytes per stored rotation track, 48 per translation
/// or scale track and 40 per morph weight (rounded up to blocks of four),
/// and 120 per cubic track.
#[derive(Debug, Clone, PartialEq)]
pub struct CompressedCursor {
    /// Id of the clip the cached keys came from.
    clip: u64,
    pub(crate) rotations: Vec<RotationBlock>,
    pub(crate) vectors: Vec<VectorBlock>,
    pub(crate) weights: Vec<WeightBlock>,
    /// Per stored track, the ids of its cached keys `a` and `b`
    /// (`u32::MAX`: none): a search starts at `a`, and keys cached already
    /// are not decoded again.
    pub(crate) keys: Vec<[u32; 2]>,
    /// Per cubic track, its cached keys.
    pub(crate) cubic: Vec<CubicKeys>,
}

/// One cubic track's cached Hermite keys `a` and `b` (in-tangent, value,
/// out-tangent, four components each), their ids and where they hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CubicKeys {
    ids: [u32; 2],
    a: [[f32; 4]; 3],
    b: [[f32; 4]; 3],
    /// As [`Span`]'s, for one track.
    lo: f32,
    hi: f32,
    t0: f32,
    inv: f32,
}

impl CubicKeys {
    /// Nothing cached.
    const STALE: CubicKeys = CubicKeys {
        ids: [u32::MAX; 2],
        a: [[0.0; 4]; 3],
        b: [[0.0; 4]; 3],
        lo: f32::INFINITY,
        hi: f32::NEG_INFINITY,
        t0: 0.0,
        inv: 0.0,
    };
}

/// Rotation, translation-or-scale and weight tracks of `clip`.
fn kinds(clip: &CompressedClip) -> [usize; 3] {
    let (rotations, vectors) = (clip.rotation_tracks, clip.vector_tracks);
    [rotations, vectors, clip.tracks.len() - rotations - vectors]
}

impl CompressedCursor {
    /// Starts loading the cursor's cached keys (see
    /// [`prefetch`](crate::anim::prefetch)).
    #[inline]
    pub fn prefetch(&self) {
        use crate::anim::prefetch::slice;
        crate::anim::prefetch::value(self);
        slice(&self.rotations);
        slice(&self.vectors);
        slice(&self.weights);
        slice(&self.keys);
        slice(&self.cubic);
    }

    /// A cursor for `clip`, with nothing cached yet.
    pub fn new(clip: &CompressedClip) -> Self {
        let [rotations, vectors, weights] = kinds(clip);
        let mut cursor = CompressedCursor {
            clip: clip.id,
            rotations: KeyBlock::blocks(rotations),
            vectors: KeyBlock::blocks(vectors),
            weights: KeyBlock::blocks(weights),
            keys: vec![[u32::MAX; 2]; clip.tracks.len()],
            cubic: vec![CubicKeys::STALE; clip.cubic.len()],
        };
        cursor.forget(clip);
        cursor
    }

    /// Whether this cursor has the sizes `clip` needs.
    pub(crate) fn fits(&self, clip: &CompressedClip) -> bool {
        let [rotations, vectors, weights] = kinds(clip);
        self.keys.len() == clip.tracks.len()
            && self.cubic.len() == clip.cubic.len()
            && self.rotations.len() == rotations.div_ceil(LANES)
            && self.vectors.len() == vectors.div_ceil(LANES)
            && self.weights.len() == weights.div_ceil(LANES)
    }

    /// Drops every cached key if they came from another clip (of the same
    /// sizes, see `fits`).
    pub(crate) fn follow(&mut self, clip: &CompressedClip) {
        if self.clip != clip.id {
            self.forget(clip);
        }
    }

    /// Every track stale, padding lanes valid forever.
    fn forget(&mut self, clip: &CompressedClip) {
        self.clip = clip.id;
        self.keys.fill([u32::MAX; 2]);
        self.cubic.fill(CubicKeys::STALE);
        let [rotations, vectors, weights] = kinds(clip);
        for (b, block) in self.rotations.iter_mut().enumerate() {
            block.span = lanes_span(b, rotations);
        }
        for (b, block) in self.vectors.iter_mut().enumerate() {
            block.span = lanes_span(b, vectors);
        }
        for (b, block) in self.weights.iter_mut().enumerate() {
            block.span = lanes_span(b, weights);
        }
    }
}

/// Span of block `b` of `count` tracks before anything is cached: stale
/// lanes, padding lanes valid forever.
fn lanes_span(b: usize, count: usize) -> Span {
    let mut span = Span::STALE;
    for l in 0..LANES {
        if b * LANES + l >= count {
            span.lo[l] = PADDING.lo[l];
            span.hi[l] = PADDING.hi[l];
        }
    }
    span
}

/// Per block of four tracks of a kind, the lanes' decoding constants side
/// by side (derived from the tracks' headers when the clip is built, as
/// `CompressedClip::corrected` is): a block's keys are decoded four lanes
/// per SIMD operation.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C, align(16))]
pub(crate) struct KeyDecode {
    /// Each component's smallest value (`PackedTrack::min`).
    min: [[f32; LANES]; 3],
    /// The components' quantization step.
    step: [f32; LANES],
    /// Rotations: the component rebuilt from the unit length (0 to 3).
    dropped: [f32; LANES],
    /// Where each lane's keys start in the stream, and the bits of each
    /// of its keys (read only where `together`: no time bits).
    bit_offset: [u32; LANES],
    key_bits: [u32; LANES],
    /// Each component's bits, per lane.
    bits: [[u32; LANES]; 3],
    /// The block's lanes that hold a track, one bit each.
    lanes: i32,
    /// Whether all those tracks share one key-time mask and STEP flag
    /// (then they have the same key ids and cross keys together), and
    /// each key's components fit one 64-bit load.
    together: bool,
}

impl KeyDecode {
    /// The constants of `tracks` (all of one kind), four to a block;
    /// padding lanes decode to anything (they are never stale).
    pub(crate) fn blocks(tracks: &[PackedTrack]) -> Vec<KeyDecode> {
        tracks
            .chunks(LANES)
            .map(|block| {
                let mut decode = KeyDecode {
                    min: [[0.0; LANES]; 3],
                    step: [0.0; LANES],
                    dropped: [3.0; LANES],
                    bit_offset: [0; LANES],
                    key_bits: [0; LANES],
                    bits: [[0; LANES]; 3],
                    lanes: (1 << block.len()) - 1,
                    together: block.iter().all(|t| {
                        t.mask != LISTED
                            && t.mask == block[0].mask
                            && t.step() == block[0].step()
                            && t.value_bits() <= 56
                    }),
                };
                for (l, track) in block.iter().enumerate() {
                    for c in 0..3 {
                        decode.min[c][l] = track.min[c];
                        decode.bits[c][l] = u32::from(track.bits[c]);
                    }
                    decode.bit_offset[l] = track.bit_offset;
                    decode.key_bits[l] = track.value_bits();
                    decode.step[l] = track.range(0).step;
                    decode.dropped[l] = track.dropped() as f32;
                }
                decode
            })
            .collect()
    }

    /// Quantized components (as f32) of every lane's key `index` (among
    /// its track's keys), for a block whose tracks are `together`; padding
    /// lanes read zeros.
    #[inline(always)]
    fn quantized<const N: usize>(&self, stream: &[u8], index: u32) -> [f32x4; N] {
        let word: [u64; LANES] = std::array::from_fn(|l| {
            load_bits(stream, u64::from(self.bit_offset[l]) + u64::from(index) * u64::from(self.key_bits[l]))
        });
        let mut shift = [0; LANES];
        std::array::from_fn(|c| {
            f32x4::from(std::array::from_fn::<f32, LANES, _>(|l| {
                let bits = self.bits[c][l];
                let q = (word[l] >> shift[l]) & ((1u64 << bits) - 1);
                shift[l] += bits;
                q as f32
            }))
        })
    }

    /// Four lanes' values from their quantized components (as f32): the
    /// same arithmetic as [`Range::value`](super::quantize::Range::value),
    /// so the same bits.
    #[inline(always)]
    fn values<const N: usize>(&self, q: &[f32x4; N]) -> [f32x4; N] {
        let step = f32x4::from(self.step);
        std::array::from_fn(|c| f32x4::from(self.min[c]) + q[c] * step)
    }

    /// Four lanes' rotations (`x, y, z, w`) from their smallest three: the
    /// arithmetic of
    /// [`from_smallest_three`](super::quantize::from_smallest_three), so the same bits.
    #[inline(always)]
    fn rotations(&self, q: &[f32x4; 3]) -> [f32x4; 4] {
        let [k0, k1, k2] = self.values(q);
        let rebuilt = (((f32x4::ONE - k0 * k0) - k1 * k1) - k2 * k2).fast_max(f32x4::ZERO).sqrt();
        let dropped = f32x4::from(self.dropped);
        let is = |c: f32| dropped.cmp_eq(f32x4::splat(c));
        let below = |c: f32| dropped.cmp_lt(f32x4::splat(c));
        [
            is(0.0).blend(rebuilt, k0),
            is(1.0).blend(rebuilt, below(1.0).blend(k0, k1)),
            is(2.0).blend(rebuilt, below(2.0).blend(k1, k2)),
            is(3.0).blend(rebuilt, k2),
        ]
    }
}

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

    /// Writes the new keys of every lane into `block`'s `a` and `b`,
    /// `decode` decoding the quantized ones, whole blocks at a time (one
    /// store per component: a narrower store would stall the sampler's
    /// loads).
    #[inline(always)]
    fn apply<const M: usize>(&self, block: &mut KeyBlock<M>, decode: impl Fn(&[f32x4; N]) -> [f32x4; M]) {
        let old_a = block.a.map(f32x4::from);
        let old_b = block.b.map(f32x4::from);
        let decoded_a = if self.a_decoded != 0 { decode(&self.a) } else { old_a };
        let decoded_b = if self.b_decoded != 0 { decode(&self.b) } else { old_b };
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
/// `values` decodes a block's quantized keys. Where every track of the
/// block shares one key-time mask (a baked clip's mostly do) and held the
/// same keys, the keys are found once for them all.
#[inline(always)]
fn refill<const N: usize, const M: usize>(
    clip: &CompressedClip,
    block: Block<'_, M>,
    stale: i32,
    t: f64,
    values: impl Fn(&KeyDecode, &[f32x4; N]) -> [f32x4; M],
) {
    let Block { tracks, held, keys: cached, decode } = block;
    let mut refill = Refill::<N>::NONE;
    if decode.together && stale == decode.lanes && held.iter().all(|h| *h == held[0]) {
        let reader = KeyReader::new(clip, &tracks[0]);
        let keys = reader.around(t, held[0]);
        // Padding lanes stay valid forever.
        let lane = |l: usize, value: f32, padding: &[f32; LANES]| {
            if decode.lanes & (1 << l) != 0 { value } else { padding[l] }
        };
        cached.span = Span {
            lo: std::array::from_fn(|l| lane(l, keys.lo, &PADDING.lo)),
            hi: std::array::from_fn(|l| lane(l, keys.hi, &PADDING.hi)),
            t0: std::array::from_fn(|l| lane(l, keys.t0, &PADDING.t0)),
            inv: std::array::from_fn(|l| lane(l, keys.inv, &PADDING.inv)),
        };
        if keys.a == held[0][1] && keys.b != keys.a {
            // Playback moved on one interval, as it mostly does: `a` is the
            // cached `b`, and only the new `b` is decoded.
            let b = values(decode, &decode.quantized(&clip.stream, reader.index(keys.b)));
            cached.a = cached.b;
            cached.b = b.map(f32x4::to_array);
            held.fill([keys.a, keys.b]);
            return;
        }
        for (l, (track, held)) in tracks.iter().zip(held.iter_mut()).enumerate() {
            let reader = KeyReader::new(clip, track);
            refill.lane(l, &reader, track, held, &keys);
        }
    } else {
        for l in (0..LANES).filter(|l| stale & (1 << l) != 0) {
            let track = &tracks[l];
            let reader = KeyReader::new(clip, track);
            let keys = reader.around(t, held[l]);
            refill.lane(l, &reader, track, &mut held[l], &keys);
            cached.span.set(l, &keys);
        }
    }
    refill.apply(cached, |q| values(decode, q));
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
/// around `t`.
#[inline(never)]
pub(crate) fn refill_rotations(
    clip: &CompressedClip,
    cursor: &mut CompressedCursor,
    b: usize,
    stale: i32,
    t: f64,
) {
    let kind = 0..clip.rotation_tracks;
    let block = block(clip, &mut cursor.keys, kind, b, &mut cursor.rotations[b], &clip.rotation_decode[b]);
    refill::<3, 4>(clip, block, stale, t, KeyDecode::rotations);
}

/// The `stale` lanes of translation-or-scale block `b` cache the keys
/// around `t`.
#[inline(never)]
pub(crate) fn refill_vectors(
    clip: &CompressedClip,
    cursor: &mut CompressedCursor,
    b: usize,
    stale: i32,
    t: f64,
) {
    let kind = clip.rotation_tracks..clip.rotation_tracks + clip.vector_tracks;
    let block = block(clip, &mut cursor.keys, kind, b, &mut cursor.vectors[b], &clip.vector_decode[b]);
    refill::<3, 3>(clip, block, stale, t, KeyDecode::values);
}

/// The `stale` lanes of morph weight block `b` cache the keys around `t`.
#[inline(never)]
pub(crate) fn refill_weights(
    clip: &CompressedClip,
    cursor: &mut CompressedCursor,
    b: usize,
    stale: i32,
    t: f64,
) {
    let kind = clip.rotation_tracks + clip.vector_tracks..clip.tracks.len();
    let block = block(clip, &mut cursor.keys, kind, b, &mut cursor.weights[b], &clip.weight_decode[b]);
    refill::<1, 1>(clip, block, stale, t, KeyDecode::values);
}

/// Cubic track `i` at time `t`: the Hermite spline between the keys
/// around it, `width` components (a rotation not yet normalised). `down`,
/// the largest f32 at or below `t`, says whether the cached keys hold (as
/// for the other tracks, see the sampler's `Time`); `nearest`, its nearest
/// f32, gives the ratio. Keys are decoded when playback leaves their span,
/// a key cached already moved rather than decoded again.
pub(crate) fn sample_cubic(
    clip: &CompressedClip,
    cursor: &mut CompressedCursor,
    i: usize,
    t: f64,
    [down, nearest]: [f32; 2],
) -> [f32; 4] {
    let cached = &mut cursor.cubic[i];
    if !(down >= cached.lo && down < cached.hi) {
        let track = &clip.cubic[i];
        let reader = KeyReader::for_cubic(clip, track);
        let keys = reader.around(t, cached.ids);
        let key = |k: u32| {
            if k == cached.ids[1] {
                cached.b
            } else if k == cached.ids[0] {
                cached.a
            } else {
                reader.hermite_key(track, k)
            }
        };
        let a = key(keys.a);
        let b = if keys.b == keys.a { a } else { key(keys.b) };
        let (lo, hi, t0, inv) = (keys.lo, keys.hi, keys.t0, keys.inv);
        *cached = CubicKeys { ids: [keys.a, keys.b], a, b, lo, hi, t0, inv };
    }
    let [_, v0, b0] = cached.a;
    if cached.ids[1] == cached.ids[0] {
        return v0;
    }
    let [a1, v1, _] = cached.b;
    let s = ((nearest - cached.t0) * cached.inv).clamp(0.0, 1.0);
    let td = cached.hi - cached.lo;
    std::array::from_fn(|c| hermite(v0[c], b0[c], v1[c], a1[c], s, td))
}

/// The keys of one track around a time (key ids, see [`KeyReader`]), and
/// where they hold.
#[derive(Clone, Copy)]
struct Keys {
    a: u32,
    b: u32,
    lo: f32,
    hi: f32,
    t0: f32,
    inv: f32,
}

impl Keys {
    /// Holding key `k` for `lo <= t < hi`.
    fn hold(k: u32, lo: f32, hi: f32) -> Self {
        Keys { a: k, b: k, lo, hi, t0: 0.0, inv: 0.0 }
    }
}

/// Keys a forward step may move on before a binary search takes over.
const FORWARD_STEPS: u32 = 4;

/// Reads one stored track's keys from the clip's bit stream. A key's id is
/// its index among the track's keys when the key times are listed in the
/// stream; with a mask, its index in the clip's time table (the mask's set
/// bit) times 2^16 plus its index among the track's keys (masks are only
/// made for tables of at most 2^16 - 1 times, so ids never reach
/// `u32::MAX`, the cursor's "none"). Either way ids grow with time, and
/// playback moving on from one key to the next needs no rank query.
struct KeyReader<'a> {
    stream: &'a [u8],
    times: &'a TableTimes,
    /// Bits before each key's components: its listed time index, or none.
    time_bits: u32,
    /// Bits of each key's components.
    value_bits: u32,
    /// The track's key-time mask, if it has one.
    mask: Option<Mask<'a>>,
    /// Where the track's keys start in the stream.
    bit_offset: u32,
    /// How many keys the track has.
    keys: u32,
    /// STEP keys: each holds until the next.
    step: bool,
}

impl<'a> KeyReader<'a> {
    #[inline(always)]
    fn new(clip: &'a CompressedClip, track: &PackedTrack) -> Self {
        Self::with(clip, track.mask, track.value_bits(), track.bit_offset, track.keys, track.step())
    }

    fn for_cubic(clip: &'a CompressedClip, track: &CubicTrack) -> Self {
        Self::with(clip, track.mask, track.value_bits(), track.bit_offset, track.keys, false)
    }

    #[inline(always)]
    fn with(
        clip: &'a CompressedClip,
        mask_index: u16,
        value_bits: u32,
        bit_offset: u32,
        keys: u32,
        step: bool,
    ) -> Self {
        let mask = (mask_index != LISTED).then(|| Mask::new(clip, mask_index));
        let time_bits = if mask.is_some() { 0 } else { u32::from(clip.time_bits) };
        KeyReader {
            stream: &clip.stream,
            times: &clip.times,
            time_bits,
            value_bits,
            mask,
            bit_offset,
            keys,
            step,
        }
    }

    /// Bit offset of the components of the key with id `k`.
    #[inline(always)]
    fn value_start(&self, k: u32) -> u64 {
        self.key_start(self.index(k)) + u64::from(self.time_bits)
    }

    /// Time of the key with id `k`.
    #[inline(always)]
    fn time(&self, k: u32) -> f32 {
        let index = match self.mask {
            Some(_) => (k >> 16) as usize,
            None => read_bits(self.stream, self.key_start(k), self.time_bits) as usize,
        };
        self.times.at(index)
    }

    /// Bit offset of the key with index `k` among the track's keys.
    #[inline(always)]
    fn key_start(&self, k: u32) -> u64 {
        let key_bits = self.time_bits + self.value_bits;
        u64::from(self.bit_offset) + u64::from(k) * u64::from(key_bits)
    }

    /// Index among the track's keys of the key with id `k`.
    #[inline(always)]
    fn index(&self, k: u32) -> u32 {
        match self.mask {
            Some(_) => k & 0xffff,
            None => k,
        }
    }

    /// Decoded in-tangent, value and out-tangent of the key with id `k` of
    /// cubic `track`, `track.width` components each.
    fn hermite_key(&self, track: &CubicTrack, k: u32) -> [[f32; 4]; 3] {
        let width = usize::from(track.width);
        let mut out = [[0.0; 4]; 3];
        let mut bit = self.value_start(k);
        for (c, &bits) in track.bits.iter().enumerate().take(3 * width) {
            out[c / width][c % width] = track.range(c).value(read_bits(self.stream, bit, u32::from(bits)));
            bit += u64::from(bits);
        }
        out
    }

    /// Quantized components of the key with id `k` of `track` (those
    /// past a weight's first are 0): one 64-bit load when the three fit.
    #[inline(always)]
    fn quantized(&self, track: &PackedTrack, k: u32) -> [u32; 3] {
        let [b0, b1, b2] = track.bits.map(u32::from);
        let start = self.value_start(k);
        if b0 + b1 + b2 <= 56 {
            let word = load_bits(self.stream, start);
            let field = |shift: u32, bits: u32| ((word >> shift) & ((1u64 << bits) - 1)) as u32;
            [field(0, b0), field(b0, b1), field(b0 + b1, b2)]
        } else {
            let field = |shift: u32, bits: u32| read_bits(self.stream, start + u64::from(shift), bits);
            [field(0, b0), field(b0, b1), field(b0 + b1, b2)]
        }
    }

    /// Id of the first key.
    fn first(&self) -> u32 {
        match self.mask {
            Some(mask) => mask.next_set(0).unwrap_or(0) << 16,
            None => 0,
        }
    }

    /// Id of the last key.
    fn last(&self) -> u32 {
        match self.mask {
            Some(mask) => mask.previous_set(mask.len - 1).unwrap_or(0) << 16 | (self.keys - 1),
            None => self.keys - 1,
        }
    }

    /// Id of the key after the one with id `k`, if there is one.
    #[inline(always)]
    fn next(&self, k: u32) -> Option<u32> {
        match self.mask {
            Some(mask) => Some(mask.next_set((k >> 16) + 1)? << 16 | ((k & 0xffff) + 1)),
            None => (k.checked_add(1)? < self.keys).then_some(k + 1),
        }
    }

    /// The keys that give the track's value at `t`: the first key before
    /// it, the last at or after its last key, else the key at or before `t`
    /// and the next (held for STEP). `cached` are the keys last used
    /// (`u32::MAX`: none).
    #[inline(always)]
    fn around(&self, t: f64, cached: [u32; 2]) -> Keys {
        let hint = cached[0];
        // Forward playback: most often the interval after the cached one,
        // which starts at its second key (unless a key was held).
        let next = if cached[1] != hint { Some(cached[1]) } else { self.next(hint) };
        if hint != u32::MAX
            && let Some(next) = next
            && let Some(after) = self.next(next)
        {
            let lo = self.time(next);
            if f64::from(lo) <= t {
                let hi = self.time(after);
                if t < f64::from(hi) {
                    return self.interval(next, after, lo, hi);
                }
            }
        }
        self.search(t, hint)
    }

    /// `around` when playback did not just move on to the next interval:
    /// held before the first key and after the last, else found from `hint`.
    #[inline(never)]
    fn search(&self, t: f64, hint: u32) -> Keys {
        let (first, last) = (self.first(), self.last());
        if first == last {
            return Keys::hold(first, f32::NEG_INFINITY, f32::INFINITY);
        }
        let first_time = self.time(first);
        if t < f64::from(first_time) {
            return Keys::hold(first, f32::NEG_INFINITY, first_time);
        }
        let last_time = self.time(last);
        if t >= f64::from(last_time) {
            return Keys::hold(last, last_time, f32::INFINITY);
        }
        // Here first <= t < last, so both keys exist.
        let a = self.find(t, hint);
        let b = self.next(a).unwrap_or(a);
        self.interval(a, b, self.time(a), self.time(b))
    }

    /// The interval from key `a` (at time `lo`) to the next key `b` (at `hi`).
    #[inline(always)]
    fn interval(&self, a: u32, b: u32, lo: f32, hi: f32) -> Keys {
        if self.step {
            return Keys::hold(a, lo, hi);
        }
        Keys { a, b, lo, hi, t0: lo, inv: 1.0 / (hi - lo) }
    }

    /// The last key at or before `t`, given first <= t < last: with a
    /// mask, the last set bit at or before the table time at or before
    /// `t`; listed, forward from `hint` (playback moves a few keys on at
    /// most; resampled tracks can have keys closer than a frame), else a
    /// binary search.
    fn find(&self, t: f64, hint: u32) -> u32 {
        if let Some(mask) = self.mask {
            let at = self.times.last_at_or_before(t);
            let key = mask.previous_set(at as u32).unwrap_or(0);
            return key << 16 | mask.rank(key);
        }
        let n = self.keys;
        let mut k = hint.min(n - 2);
        if f64::from(self.time(k)) <= t {
            for _ in 0..FORWARD_STEPS {
                if t < f64::from(self.time(k + 1)) {
                    return k;
                }
                // t < last, so k + 2 < n here.
                k += 1;
            }
        }
        let (mut lo, mut hi) = (0, n - 1);
        // Invariant: time(lo) <= t < time(hi).
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if f64::from(self.time(mid)) <= t {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// One track's key-time mask: a bit per time-table entry, in 64-bit words.
#[derive(Clone, Copy)]
struct Mask<'a> {
    words: &'a [u64],
    /// Bits in use (the table's length); those past it are clear.
    len: u32,
}

impl<'a> Mask<'a> {
    #[inline(always)]
    fn new(clip: &'a CompressedClip, index: u16) -> Self {
        let count = clip.mask_words;
        let start = usize::from(index) * count;
        Mask { words: &clip.masks[start..start + count], len: clip.times.len() as u32 }
    }

    /// The first set bit at or after bit `from`.
    #[inline(always)]
    fn next_set(&self, from: u32) -> Option<u32> {
        let mut w = (from / 64) as usize;
        let mut word = self.words.get(w)? & (u64::MAX << (from % 64));
        while word == 0 {
            w += 1;
            word = *self.words.get(w)?;
        }
        Some(w as u32 * 64 + word.trailing_zeros())
    }

    /// The last set bit at or before bit `at`.
    fn previous_set(&self, at: u32) -> Option<u32> {
        let at = at.min(self.len.checked_sub(1)?);
        let mut w = (at / 64) as usize;
        let mut word = self.words[w] & (u64::MAX >> (63 - at % 64));
        while word == 0 {
            w = w.checked_sub(1)?;
            word = self.words[w];
        }
        Some(w as u32 * 64 + 63 - word.leading_zeros())
    }

    /// Set bits below bit `at`.
    fn rank(&self, at: u32) -> u32 {
        let w = (at / 64) as usize;
        let below: u32 = self.words[..w].iter().map(|m| m.count_ones()).sum();
        below + (self.words[w] & ((1u64 << (at % 64)) - 1)).count_ones()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::compression::quantize::{BitWriter, Range, from_smallest_three};

    /// Four lanes of different widths and offsets, one rebuilding each
    /// quaternion component.
    fn four_lanes(stream_start: [u32; LANES]) -> KeyDecode {
        KeyDecode {
            min: [[-0.71, -0.3, 0.1, -0.05], [-0.2, -0.69, -0.4, 0.0], [0.05, -0.5, -0.7, -0.33]],
            step: [1.0 / 4096.0, 3.0e-5, 2.0e-3, 7.0e-6],
            dropped: [0.0, 1.0, 2.0, 3.0],
            bit_offset: stream_start,
            key_bits: [36, 21, 0, 56],
            bits: [[12, 7, 0, 20], [12, 7, 0, 18], [12, 7, 0, 18]],
            lanes: 0b1111,
            together: true,
        }
    }

    #[test]
    fn a_block_decodes_its_keys_to_the_bits_of_one_track_at_a_time() {
        // Keys 0..3 of each lane, written one lane after the other.
        let mut writer = BitWriter::default();
        let mut starts = [0; LANES];
        let mut written = [[[0u32; 3]; 3]; LANES];
        let lengths = [36, 21, 0, 56];
        for l in 0..LANES {
            starts[l] = writer.bits() as u32;
            for (k, key) in written[l].iter_mut().enumerate() {
                let widths = [[12, 12, 12], [7, 7, 7], [0, 0, 0], [20, 18, 18]][l];
                for c in 0..3 {
                    let value =
                        ((k as u32 + 1) * 2_654_435_761u32.wrapping_mul(c as u32 + l as u32 + 1)) >> 8;
                    key[c] = value & ((1u32 << widths[c]) - 1);
                    writer.push(key[c], widths[c]);
                }
            }
            assert_eq!(writer.bits() - u64::from(starts[l]), 3 * lengths[l]);
        }
        let stream = writer.finish();
        let decode = four_lanes(starts);
        for k in 0u32..3 {
            let q: [[f32; LANES]; 3] = decode.quantized(&stream, k).map(f32x4::to_array);
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
    fn mask_searches() {
        let words = [0b1001_0000u64 | 1 << 63, 0, 1 << 2];
        let mask = Mask { words: &words, len: 140 };
        assert_eq!(mask.next_set(0), Some(4));
        assert_eq!(mask.next_set(5), Some(7));
        assert_eq!(mask.next_set(8), Some(63));
        assert_eq!(mask.next_set(64), Some(130));
        assert_eq!(mask.next_set(131), None);
        assert_eq!(mask.next_set(500), None);
        assert_eq!(mask.previous_set(3), None);
        assert_eq!(mask.previous_set(4), Some(4));
        assert_eq!(mask.previous_set(62), Some(7));
        assert_eq!(mask.previous_set(129), Some(63));
        assert_eq!(mask.previous_set(500), Some(130));
        assert_eq!([4, 7, 63, 130].map(|at| mask.rank(at)), [0, 1, 2, 3]);
    }
}
