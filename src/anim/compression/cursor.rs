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
//! A block is refilled as one (see the `refill` module).
//!
//! Only a hint: it never changes what a track gives at a time, which
//! depends on the two keys around that time, never on where the cursor was
//! before; and sampling through it never allocates.

use super::clip::TableTimes;
use super::quantize::{BitReader, Range, load_bits, read_bits};
use super::{CompressedClip, CubicTrack, LISTED, PackedTrack};
use crate::anim::math::hermite;
use wide::f32x4;

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

    pub(super) fn set(&mut self, l: usize, keys: &Keys) {
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

/// Each register's lanes as an array; a loop, not `map`: a closure in
/// code an AVX2 function inlines may be compiled without AVX2 (see
/// `nlerp_pair` in the sampler).
#[inline(always)]
pub(crate) fn to_arrays<const N: usize>(v: &[f32x4; N]) -> [[f32; LANES]; N] {
    let mut arrays = [[0.0; LANES]; N];
    for c in 0..N {
        arrays[c] = v[c].to_array();
    }
    arrays
}

/// Each array as a register (see [`to_arrays`]).
#[inline(always)]
pub(crate) fn from_arrays<const N: usize>(v: &[[f32; LANES]; N]) -> [f32x4; N] {
    let mut registers = [f32x4::ZERO; N];
    for c in 0..N {
        registers[c] = f32x4::from(v[c]);
    }
    registers
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
pub(super) const PADDING: Span =
    Span { lo: [f32::NEG_INFINITY; LANES], hi: [f32::INFINITY; LANES], t0: [0.0; LANES], inv: [0.0; LANES] };

/// Per-character sampling state of one compressed clip (see the module
/// documentation): 56 bytes per stored rotation track, 48 per translation
/// or scale track and 40 per morph weight (rounded up to blocks of four),
/// and 120 per cubic track.
#[derive(Debug, Clone, PartialEq)]
pub struct CompressedCursor {
    /// Id of the clip the cached keys came from.
    clip: u64,
    /// Where every block's cached keys hold (the latest `lo` and the
    /// earliest `hi` of all their lanes; empty when some lane is stale):
    /// a frame inside it refills nothing and checks no block.
    pub(crate) fresh: [f32; 2],
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
    /// Names the cursor's cached keys for a prefetch (see
    /// [`prefetch`](crate::anim::prefetch)); not the cursor itself, which
    /// its owner names with the array that holds it.
    pub fn blocks(&self, blocks: &mut crate::anim::prefetch::Blocks) {
        blocks.slice(&self.rotations);
        blocks.slice(&self.vectors);
        blocks.slice(&self.weights);
        blocks.slice(&self.keys);
        blocks.slice(&self.cubic);
    }

    /// A cursor for `clip`, with nothing cached yet.
    pub fn new(clip: &CompressedClip) -> Self {
        let [rotations, vectors, weights] = kinds(clip);
        let mut cursor = CompressedCursor {
            clip: clip.id,
            fresh: [f32::INFINITY, f32::NEG_INFINITY],
            rotations: KeyBlock::blocks(rotations),
            vectors: KeyBlock::blocks(vectors),
            weights: KeyBlock::blocks(weights),
            keys: vec![[u32::MAX; 2]; clip.tracks.len()],
            cubic: vec![CubicKeys::STALE; clip.cubic.len()],
        };
        cursor.forget(clip);
        cursor
    }

    /// Whether this cursor has the sizes `clip` needs: those of the clip
    /// it was made for or last followed (ids are unique per compressed
    /// clip, and a cursor only follows a clip it fits), or the same.
    pub(crate) fn fits(&self, clip: &CompressedClip) -> bool {
        if self.clip == clip.id {
            return true;
        }
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
        self.fresh = [f32::INFINITY, f32::NEG_INFINITY];
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
pub(super) struct Keys {
    pub(super) a: u32,
    pub(super) b: u32,
    pub(super) lo: f32,
    pub(super) hi: f32,
    pub(super) t0: f32,
    pub(super) inv: f32,
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
pub(super) struct KeyReader<'a> {
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
    pub(super) fn new(clip: &'a CompressedClip, track: &PackedTrack) -> Self {
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
    pub(super) fn time(&self, k: u32) -> f32 {
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
    pub(super) fn index(&self, k: u32) -> u32 {
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
        let mut reader = BitReader::new(self.stream, self.value_start(k));
        // Part by part, each component's index counted on: no division by
        // the width per component (three of them, and a load per
        // component, made a key's decode take 700 instructions).
        let mut c = 0;
        for (part, out) in out.iter_mut().enumerate() {
            let step = track.part_step(part);
            for out in out.iter_mut().take(width) {
                *out = Range { min: track.min[c], step }.value(reader.read(u32::from(track.bits[c])));
                c += 1;
            }
        }
        out
    }

    /// Quantized components of the key with id `k` of `track` (those
    /// past a weight's first are 0): one 64-bit load when the three fit.
    #[inline(always)]
    pub(super) fn quantized(&self, track: &PackedTrack, k: u32) -> [u32; 3] {
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
    pub(super) fn next(&self, k: u32) -> Option<u32> {
        match self.mask {
            Some(mask) => mask.next_key(k),
            None => (k.checked_add(1)? < self.keys).then_some(k + 1),
        }
    }

    /// The keys that give the track's value at `t`: the first key before
    /// it, the last at or after its last key, else the key at or before `t`
    /// and the next (held for STEP). `cached` are the keys last used
    /// (`u32::MAX`: none).
    #[inline(always)]
    pub(super) fn around(&self, t: f64, cached: [u32; 2]) -> Keys {
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
        // Here first <= t < last, so both keys exist. A looping clip comes
        // back to its first interval: no search for that one.
        if let Some(second) = self.next(first) {
            let second_time = self.time(second);
            if t < f64::from(second_time) {
                return self.interval(first, second, first_time, second_time);
            }
        }
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
pub(super) struct Mask<'a> {
    words: &'a [u64],
    /// Bits in use (the table's length); those past it are clear.
    len: u32,
}

impl<'a> Mask<'a> {
    #[inline(always)]
    fn new(clip: &'a CompressedClip, index: u16) -> Self {
        Self::at(clip, usize::from(index) * clip.mask_words)
    }

    /// The mask whose words start at `start` of `clip.masks`.
    #[inline(always)]
    pub(super) fn at(clip: &'a CompressedClip, start: usize) -> Self {
        Mask { words: &clip.masks[start..start + clip.mask_words], len: clip.times.len() as u32 }
    }

    /// The id of the key after the key with id `k` (its time-table index
    /// shifted up 16, its index among the track's keys below), if any.
    #[inline(always)]
    pub(super) fn next_key(&self, k: u32) -> Option<u32> {
        Some(self.next_set((k >> 16) + 1)? << 16 | ((k & 0xffff) + 1))
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
