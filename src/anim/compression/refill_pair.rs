//! Refilling two rotation blocks as one, eight tracks per operation of
//! [`Lanes8`]: where both blocks' tracks share one key-time mask and
//! playback moved them on by one key together (a baked clip's mostly
//! do), the crossing is found once, the eight lanes' new keys are read
//! and unpacked eight at a time (on AVX2, eight loads and a variable shift
//! per component, see [`Unpack::quantized_pair`]) and rebuilt eight at a
//! time. The keys, spans and bits are those of two `together_forward`
//! refills (see the `refill` module). Key crossings are what made
//! compressed sampling slower than the runtime layout's on Fox and
//! CesiumMan on a Zen 3 core (3 to 10 times the runtime layout's crossing
//! cost); pairs cut them by 5 to 10 % there (Fox Run 52 to 48 ns a frame
//! at 60 Hz), and the clips that share one key-time mask no longer lose.

use super::CompressedClip;
use super::cursor::{CompressedCursor, LANES};
use super::key_decode::{KeyDecode, Unpack, in_place};
use super::refill::Crossing;
use crate::anim::lanes8::Lanes8;

/// Rotation blocks `b` and `b + 1`, block `b` all stale at `t`, move on by
/// one key as one, when they can (see the module documentation): the
/// blocks' tracks all share one key-time mask, hold the same two keys and
/// no STEP keys, their keys lie in the stream (`KeyDecode::keys_in_stream`), and
/// `t` lies past the keys held. Returns false, having changed nothing,
/// where they cannot; each block then refills on its own.
#[inline(always)]
pub(crate) fn refill_rotation_pair<F: Unpack>(
    clip: &CompressedClip,
    cursor: &mut CompressedCursor,
    b: usize,
    t: f64,
    last: &mut Option<Crossing>,
) -> bool {
    let Some([low, high]) =
        clip.rotation_decode.get(b..b + 2).and_then(|d| <&[KeyDecode; 2]>::try_from(d).ok())
    else {
        return false;
    };
    let first = b * LANES;
    let end = clip.rotation_tracks.min(first + 2 * LANES);
    // The second block's tracks (it may be the last, with padding lanes).
    let live = (1 << (end - first - LANES)) - 1;
    let movable = low.movable == (1 << LANES) - 1 && high.movable == live;
    if !(low.together && high.together && low.keys_in_stream && high.keys_in_stream && movable)
        || low.mask_at[0] != high.mask_at[0]
    {
        return false;
    }
    let held = &mut cursor.keys[first..end];
    let [a, from] = held[0];
    // A held key (or none cached) ends no interval to move on from.
    if held[LANES] != held[0] || a == from {
        return false;
    }
    let (blocks, after) = cursor.rotations.split_at_mut(b + 1);
    let (low_keys, high_keys) = (&mut blocks[b], &mut after[0]);
    // The interval ended at the cached `b`'s time: the same in both (the
    // same keys of the same mask), and every lane is stale past it.
    let lo = low_keys.span.hi[0];
    debug_assert_eq!(high_keys.span.hi[0].to_bits(), lo.to_bits());
    if f64::from(lo) > t {
        return false;
    }
    let Some(crossing) = Crossing::find(clip, low.mask_at[0], from, lo, t, last) else { return false };
    // The unchecked loads read only where the keys were checked to lie.
    let key = crossing.to & 0xffff;
    if key >= low.keys[0] || key >= high.keys[0] {
        return false;
    }
    low_keys.span = crossing.span((1 << LANES) - 1);
    high_keys.span = crossing.span(live);
    let new = rotations::<F>([low, high], &F::quantized_pair::<3>([low, high], &clip.stream, key));
    low_keys.a = low_keys.b;
    high_keys.a = high_keys.b;
    for (c, v) in new.iter().enumerate() {
        v.store_low(&mut low_keys.b[c]);
        v.store_high(&mut high_keys.b[c]);
    }
    held.fill([from, crossing.to]);
    true
}

/// Eight lanes' values from their quantized components: what
/// [`KeyDecode::values`] gives each block's four, so the same bits.
#[inline(always)]
fn values<F: Lanes8>([low, high]: [&KeyDecode; 2], q: &[F; 3]) -> [F; 3] {
    let step = F::join(&low.step, &high.step);
    // No closures (see `nlerp_pair` in the sampler).
    [
        F::join(&low.min[0], &high.min[0]) + q[0] * step,
        F::join(&low.min[1], &high.min[1]) + q[1] * step,
        F::join(&low.min[2], &high.min[2]) + q[2] * step,
    ]
}

/// Eight lanes' rotations (`x, y, z, w`) from their smallest three: what
/// [`KeyDecode::rotations`] gives each block's four, so the same bits.
#[inline(always)]
fn rotations<F: Lanes8>(pair: [&KeyDecode; 2], q: &[F; 3]) -> [F; 4] {
    let [k0, k1, k2] = values(pair, q);
    let (one, zero) = (F::splat(1.0), F::splat(0.0));
    let x = ((one - k0 * k0) - k1 * k1) - k2 * k2;
    // `fast_max(0)` as SSE's `max`: 0 where `x` is not above it (NaN too).
    let rebuilt = x.gt(zero).select(x, zero).sqrt();
    let [low, high] = pair;
    if low.rebuilds == high.rebuilds
        && let Some(q) = in_place(low.rebuilds, rebuilt, [k0, k1, k2])
    {
        return q;
    }
    let dropped = F::join(&low.dropped, &high.dropped);
    let (c1, c2, c3) = (F::splat(1.0), F::splat(2.0), F::splat(3.0));
    [
        is(dropped, zero).select(rebuilt, k0),
        is(dropped, c1).select(rebuilt, dropped.lt(c1).select(k0, k1)),
        is(dropped, c2).select(rebuilt, dropped.lt(c2).select(k1, k2)),
        is(dropped, c3).select(rebuilt, k2),
    ]
}

/// The lanes of `dropped` equal to `c`'s.
#[inline(always)]
fn is<F: Lanes8>(dropped: F, c: F) -> F {
    dropped.ge(c).and(dropped.le(c))
}

#[cfg(test)]
mod tests {
    use crate::anim::compression::sampler::tests::pose_at;
    use crate::anim::compression::{CompressedClip, CompressedCursor, compress};
    use crate::anim::compression::{CompressionSettings, cursor::LANES};
    use crate::anim::lanes8::Simd;
    use crate::anim::{Clip, Interpolation, JointTracks, NO_PARENT, Skeleton, Track, Transform};
    use nalgebra::{Unit, UnitQuaternion, Vector3};

    /// Seven joints keyed together 24 times a second for a second, each
    /// zigzagging about its own turn (none, or nearly half a turn about x,
    /// y or z, so that their keys rebuild different components) and every
    /// key kept: rotation blocks of four and of three (and a padding
    /// lane) that move on as a pair.
    fn baked_pair() -> (Skeleton, CompressedClip) {
        let names = (0..7).map(|j| format!("j{j}")).collect();
        let parents = (0..7).map(|j| if j == 0 { NO_PARENT } else { j - 1 }).collect();
        let rest = vec![Transform { translation: Vector3::new(0.0, 0.2, 0.0), ..Transform::IDENTITY }; 7];
        let skeleton = Skeleton::new(names, parents, rest).unwrap();
        let times: Vec<f32> = (0..25).map(|k| k as f32 / 24.0).collect();
        let joint_tracks = (0..7u32)
            .map(|j| {
                let turn = match j % 4 {
                    0 => UnitQuaternion::identity(),
                    axis => UnitQuaternion::from_axis_angle(
                        &Unit::new_normalize(Vector3::from_fn(|c, _| {
                            if c + 1 == axis as usize { 1.0 } else { 0.1 }
                        })),
                        3.0,
                    ),
                };
                let values = (0..times.len())
                    .map(|k| {
                        let zig = if k % 2 == 0 { 0.2 } else { -0.15 } + 0.01 * j as f32;
                        let axis = Unit::new_normalize(Vector3::new(0.3, 1.0, 0.2 * j as f32));
                        (turn * UnitQuaternion::from_axis_angle(&axis, zig)).into_inner()
                    })
                    .collect();
                JointTracks {
                    joint: j,
                    translation: None,
                    rotation: Some(Track {
                        times: times.clone(),
                        values,
                        interpolation: Interpolation::Linear,
                    }),
                    scale: None,
                }
            })
            .collect();
        let mut clip = Clip { joint_tracks, ..Clip::default() };
        clip.update_duration();
        let (compressed, _) = compress(&clip, &skeleton, &CompressionSettings::default()).unwrap();
        (skeleton, compressed)
    }

    /// The rotations' bits `clip` samples at `t` (see the sampler's `pose_at`).
    fn rotations_at(
        skeleton: &Skeleton,
        clip: &CompressedClip,
        cursor: &mut CompressedCursor,
        t: f64,
        simd: Simd,
    ) -> Vec<[u32; 4]> {
        let pose = pose_at(skeleton, clip, cursor, t, simd);
        pose.iter().map(|o| o.rotation.coords.map(f32::to_bits).into()).collect()
    }

    #[test]
    fn a_pair_of_blocks_moves_on_to_the_bits_each_block_finds_alone() {
        let (skeleton, clip) = baked_pair();
        assert_eq!(clip.rotation_tracks, 7);
        let [low, high] = [&clip.rotation_decode[0], &clip.rotation_decode[1]];
        // What the pair needs, and blocks that rebuild different components.
        assert!(low.together && high.together && low.keys_in_stream && high.keys_in_stream);
        assert_eq!((low.movable, high.movable, low.mask_at[0]), ((1 << LANES) - 1, 0b111, high.mask_at[0]));
        assert_eq!(low.rebuilds, 4);
        let simds =
            if Simd::avx2_available() { vec![Simd::Portable, Simd::Avx2] } else { vec![Simd::Portable] };
        for simd in simds {
            let mut kept = CompressedCursor::new(&clip);
            // 60 Hz (a key every two or three frames) and 24 Hz (a key
            // every frame) through the end, then jumping.
            let times = (0..70).map(|f| f64::from(f) / 60.0).chain((0..30).map(|f| f64::from(f) / 24.0));
            for t in times.chain([0.5, 0.51, 0.2, 0.99, 0.3]) {
                let fresh = rotations_at(&skeleton, &clip, &mut CompressedCursor::new(&clip), t, simd);
                assert_eq!(rotations_at(&skeleton, &clip, &mut kept, t, simd), fresh, "{simd:?} at {t}");
            }
        }
    }
}
