//! Tests of the runtime layout's sampler (`SampleClipJob`, `ClipCursor`).

use super::*;
use crate::anim::clip::{Clip, Interpolation, JointTracks, MorphWeightTrack, Track};
use crate::anim::{SampleJob, SamplingCursor};
use crate::testing::bits::pose_bits as bits;
use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use std::sync::Arc;

fn v(x: f32, y: f32, z: f32) -> Vector3<f32> {
    Vector3::new(x, y, z)
}

fn q(w: f32, i: f32, j: f32, k: f32) -> Quaternion<f32> {
    Quaternion::new(w, i, j, k)
}

fn track<T>(times: &[f32], values: Vec<T>, interpolation: Interpolation) -> Option<Track<T>> {
    Some(Track { times: times.to_vec(), values, interpolation })
}

/// A clip with every kind of track the layout must reproduce: STEP,
/// LINEAR and CUBICSPLINE; one key; keys starting late; rotation keys far
/// from unit length, identical, opposite and zero; a joint listed twice;
/// morph weights. Five joints (two blocks, three padding lanes).
fn awkward_clip() -> Clip {
    use Interpolation::{CubicSpline, Linear, Step};
    let mut clip = Clip {
        joint_tracks: vec![
            JointTracks {
                joint: 0,
                translation: track(
                    &[0.0, 0.5, 1.0],
                    vec![v(0., 0., 0.), v(1., 2., 3.), v(-1., 0., 5.)],
                    Linear,
                ),
                rotation: track(
                    &[0.0, 0.4, 0.8, 1.2],
                    vec![q(2.0, 0., 0., 0.), q(0., 0., 0., 3.), q(0., 0., 0., 3.), q(-1.0, 0.1, 0., 0.)],
                    Linear,
                ),
                scale: track(&[0.3], vec![v(2., 2., 2.)], Linear),
            },
            JointTracks {
                joint: 1,
                translation: track(&[0.2, 0.6], vec![v(1., 1., 1.), v(2., 2., 2.)], Step),
                rotation: track(
                    &[0.25, 0.75],
                    vec![
                        q(0., 0., 0., 0.),
                        q(1., 0., 0., 0.),
                        q(0.5, 0.5, 0.5, 0.5),
                        q(0., 0., 0., 0.),
                        q(0., 0.7, 0., 0.7),
                        q(0., 0., 0., 0.),
                    ],
                    CubicSpline,
                ),
                scale: None,
            },
            JointTracks {
                joint: 4,
                translation: track(
                    &[0.1, 0.9],
                    vec![
                        v(0., 0., 0.),
                        v(1., 0., 0.),
                        v(0., 0., 0.),
                        v(0., 0., 0.),
                        v(3., 0., 0.),
                        v(0., 0., 0.),
                    ],
                    CubicSpline,
                ),
                rotation: track(&[0.0, 1.0], vec![q(1.0, 0., 0., 0.), q(-0.9998, 0.02, 0., 0.)], Linear),
                scale: track(&[0.0, 0.5, 1.0], vec![v(1., 1., 1.), v(2., 1., 1.), v(1., 3., 1.)], Step),
            },
            // Joint 2: a constant translation interpolated (not 0 or 1:
            // streamed), joint 3 exactly constant tracks (no state).
            JointTracks {
                joint: 2,
                translation: track(&[0.0, 0.5, 1.0], vec![v(0.3, 0.7, 0.1); 3], Linear),
                rotation: None,
                scale: None,
            },
            JointTracks {
                joint: 3,
                translation: track(&[0.1, 0.6], vec![v(0., -0., 1.); 2], Step),
                rotation: None,
                scale: track(&[0.0, 0.35, 1.0], vec![v(1., 1., 1.); 3], Linear),
            },
            // Joint 0 again: its translation wins over the first entry's.
            JointTracks {
                joint: 0,
                translation: track(&[0.1, 0.7], vec![v(5., 5., 5.), v(6., 5., 4.)], Linear),
                rotation: None,
                scale: None,
            },
        ],
        morph_tracks: vec![MorphWeightTrack {
            offset: 1,
            count: 2,
            times: vec![0.0, 1.0],
            values: vec![0.0, 1.0, 1.0, 0.0],
            interpolation: Linear,
        }],
        ..Default::default()
    };
    clip.update_duration();
    clip
}

fn rest() -> Vec<Transform> {
    (0..5)
        .map(|j| Transform {
            translation: v(j as f32, 0.5, 0.0),
            rotation: UnitQuaternion::from_axis_angle(&Vector3::z_axis(), 0.3 * j as f32),
            scale: v(1.0, 1.0, 1.5),
        })
        .collect()
}

fn reference(clip: &Clip, t: f64, mode: RotationBlend) -> (Vec<Transform>, Vec<f32>) {
    sample_job(clip, &rest(), &[0.25; 3], t, mode)
}

/// `SampleJob` on `clip` at `t` over `rest` and `rest_weights`, from a fresh cursor.
fn sample_job(
    clip: &Clip,
    rest: &[Transform],
    rest_weights: &[f32],
    t: f64,
    mode: RotationBlend,
) -> (Vec<Transform>, Vec<f32>) {
    let (mut out, mut w) = (vec![Transform::IDENTITY; rest.len()], vec![0.0; rest_weights.len()]);
    SampleJob {
        clip,
        time: t,
        rest,
        rest_morph_weights: rest_weights,
        rotation_blend: mode,
        cursor: &mut SamplingCursor::new(clip),
        output: &mut out,
        morph_output: &mut w,
    }
    .run()
    .unwrap();
    (out, w)
}

fn runtime(
    clip: &RuntimeClip,
    cursor: &mut ClipCursor,
    t: f64,
    mode: RotationBlend,
) -> (Vec<Transform>, Vec<f32>) {
    let (mut out, mut w) = (vec![Transform::IDENTITY; 5], vec![0.0; 3]);
    SampleClipJob { clip, time: t, rotation_blend: mode, cursor, output: &mut out, morph_output: &mut w }
        .run()
        .unwrap();
    (out, w)
}

/// `run_joints_with` on a fresh cursor into five joints holding `start`.
fn sample_joints(
    clip: &RuntimeClip,
    t: f64,
    mode: RotationBlend,
    joints: Range<usize>,
    simd: Simd,
    start: Transform,
) -> (Vec<Transform>, Vec<f32>) {
    let (mut out, mut w) = (vec![start; 5], vec![0.0; 3]);
    let mut cursor = ClipCursor::new(clip);
    SampleClipJob {
        clip,
        time: t,
        rotation_blend: mode,
        cursor: &mut cursor,
        output: &mut out,
        morph_output: &mut w,
    }
    .run_joints_with(joints, simd)
    .unwrap();
    (out, w)
}

#[test]
fn awkward_clip_samples_like_sample_job() {
    let source = awkward_clip();
    let clip = RuntimeClip::new(Arc::new(source.clone()), &rest(), &[0.25; 3]).unwrap();
    assert_eq!(clip.blocks(), 2);
    // Cubic lanes are marked in their blocks (joint 1's rotation, joint
    // 4's translation); later keys go to later intervals: rotation 0 has
    // two after its first two, scale 4 one, translation 2 one (the first
    // entry's three translation keys lost to the second entry's two;
    // joint 3's constant tracks are not streamed).
    assert_eq!(clip.cubic_rotations.any, [true, false]);
    assert_eq!(clip.cubic_vectors[0].any, [false, true]);
    assert!(clip.cubic_vectors[1].any.is_empty());
    assert_eq!(clip.streamed_keys(), 2 + 1 + 1);
    let mut times: Vec<f64> = (0..160).map(|i| i as f64 * 0.01 - 0.1).collect();
    times.extend([0.5, 0.4, 0.8, 1.2, 0.3, 0.25, 0.75, 0.2, 0.6, 0.0, 1.0, 0.9, 0.1, f64::INFINITY, -3.0]);
    for mode in [RotationBlend::Slerp, RotationBlend::Nlerp] {
        let mut cursor = ClipCursor::new(&clip);
        for &t in &times {
            let (want, want_w) = reference(&source, t, mode);
            let (got, got_w) = runtime(&clip, &mut cursor, t, mode);
            // AVX2 and portable code (eight f32 lanes per operation for
            // nlerp, four f64 for slerp's ratios and sines): the same bits.
            let both = [Simd::Avx2, Simd::Portable].map(|simd| {
                let (out, w) = sample_joints(&clip, t, mode, 0..5, simd, Transform::IDENTITY);
                bits(&out, &w)
            });
            assert_eq!(both[0], both[1], "{mode:?}, t = {t}");
            assert_eq!(both[0], bits(&got, &got_w), "{mode:?}, t = {t}");
            if mode == RotationBlend::Slerp {
                assert_eq!(bits(&got, &got_w), bits(&want, &want_w), "t = {t}\n{got:?}\n{want:?}");
                continue;
            }
            for (g, e) in got.iter().zip(&want) {
                let (a, b) = (g.rotation.coords, e.rotation.coords);
                let close = (g.translation - e.translation).amax() < 1e-6
                    && (g.scale - e.scale).amax() < 1e-6
                    && (a - b).amax().min((a + b).amax()) < 1e-6;
                assert!(close, "t = {t}\n{g:?}\n{e:?}");
            }
        }
    }
}

/// Pairs of blocks where no lane has a rotation track copy their rest
/// rotations instead of interpolating them: the same bits as the
/// reference (and as a block computed beside a tracked one), both ways,
/// AVX2 and portable, a cubic track's block included.
#[test]
fn blocks_without_rotation_tracks_hold_their_rest_rotations() {
    use Interpolation::{CubicSpline, Linear};
    // Rest rotations a little off unit length, as files have them.
    let rest: Vec<Transform> = (0..20)
        .map(|j| Transform {
            translation: v(0.0, j as f32, 0.0),
            rotation: UnitQuaternion::new_unchecked(q(0.9 + 0.01 * j as f32, 0.3, -0.2, 0.1)),
            scale: v(1.0, 1.0, 1.0),
        })
        .collect();
    let turn = |a: f32| q(a.cos(), a.sin(), 0.0, 0.0);
    let tracks = |joint: u32, rotation| JointTracks { joint, translation: None, rotation, scale: None };
    let source = Clip {
        joint_tracks: vec![
            tracks(1, track(&[0.0, 1.0], vec![turn(0.0), turn(1.2)], Linear)),
            // In/value/out per key.
            tracks(
                17,
                track(
                    &[0.0, 1.0],
                    vec![turn(0.0), turn(0.1), turn(0.0), turn(0.0), turn(0.9), turn(0.0)],
                    CubicSpline,
                ),
            ),
        ],
        ..Clip::default()
    };
    let mut source = source;
    source.update_duration();
    let clip = RuntimeClip::new(Arc::new(source.clone()), &rest, &[]).unwrap();
    // Pair (0, 1) has joint 1's track; blocks 1 to 3 none.
    assert_eq!(clip.rotation_held[..4], [false, true, true, true]);
    for mode in [RotationBlend::Slerp, RotationBlend::Nlerp] {
        let mut cursor = ClipCursor::new(&clip);
        for t in [-0.5, 0.0, 0.25, 0.5, 0.999, 1.0, 3.0, 0.1] {
            let (want, _) = sample_job(&source, &rest, &[], t, mode);
            let got = [Simd::Avx2, Simd::Portable].map(|simd| {
                let mut out = vec![Transform::IDENTITY; 20];
                SampleClipJob {
                    clip: &clip,
                    time: t,
                    rotation_blend: mode,
                    cursor: &mut cursor,
                    output: &mut out,
                    morph_output: &mut [],
                }
                .run_joints_with(0..20, simd)
                .unwrap();
                bits(&out, &[])
            });
            assert_eq!(got[0], got[1], "{mode:?}, t = {t}");
            let (got, want) = (&got[0], bits(&want, &[]));
            // Joints 0 and 2 to 19 are the reference's bit for bit
            // (rest, or the scalar code's cubic); joint 1 is
            // interpolated (nlerp: within rounding of slerp).
            let per_joint = got.len() / 20;
            for j in (0..20).filter(|&j| j != 1 || mode == RotationBlend::Slerp) {
                let range = j * per_joint..(j + 1) * per_joint;
                assert_eq!(got[range.clone()], want[range], "{mode:?}, t = {t}, joint {j}");
            }
        }
    }
}

/// CUBICSPLINE tracks of every property, several keys each with tangents
/// that all differ, sampled in their blocks beside LINEAR and STEP lanes
/// (and a block of cubic lanes alone, a one-key track beside padding
/// lanes): the scalar job's bits by slerp,
/// within 1e-5 of them by nlerp (its ratios are f32), the same
/// bits on AVX2 and portable code, playing forward, back and past the ends.
#[test]
fn cubic_lanes_sample_like_sample_job() {
    use Interpolation::{CubicSpline, Linear, Step};
    // Distinct values from a fixed sequence (no two tangents alike).
    let mut rng = crate::testing::lcg::Lcg(7);
    let mut next = move || rng.between(-1.0, 1.0);
    let mut cubic_vectors =
        |keys: usize| (0..3 * keys).map(|_| v(next(), next(), next())).collect::<Vec<_>>();
    let (tr, sc) = (cubic_vectors(4), cubic_vectors(3));
    let scale = sc.iter().enumerate().map(|(i, s)| if i % 3 == 1 { s.add_scalar(1.5) } else { *s }).collect();
    let (tr_late, tr_many) = (cubic_vectors(2), cubic_vectors(6));
    let rotations = |keys: usize, seed: f32| -> Vec<Quaternion<f32>> {
        (0..3 * keys)
            .map(|i| {
                let x = seed + i as f32;
                if i % 3 == 1 {
                    q(x.cos(), 0.5 * x.sin(), 0.3, -0.2 * x.cos())
                } else {
                    q(0.4 * x.sin(), x.cos(), -0.7 * x.sin(), 0.2)
                }
            })
            .collect()
    };
    let joint = |j: u32| JointTracks { joint: j, translation: None, rotation: None, scale: None };
    let mut source = Clip {
        joint_tracks: vec![
            JointTracks {
                rotation: track(&[0.0, 0.3, 0.5, 0.6, 1.0], rotations(5, 0.1), CubicSpline),
                translation: track(&[0.1, 0.45, 0.7, 0.95], tr, CubicSpline),
                ..joint(1)
            },
            JointTracks { scale: track(&[0.0, 0.55, 1.1], scale, CubicSpline), ..joint(2) },
            JointTracks {
                rotation: track(&[0.2, 0.8], vec![q(1., 0., 0., 0.), q(0.6, 0.8, 0., 0.)], Linear),
                translation: track(&[0.0, 0.5], vec![v(1., 2., 3.), v(4., 5., 6.)], Step),
                ..joint(0)
            },
            // Joints 4-7 cubic alone: one starting late, one with many keys.
            JointTracks { rotation: track(&[0.35, 0.65], rotations(2, 2.0), CubicSpline), ..joint(5) },
            JointTracks {
                translation: track(&[0.25, 0.9], tr_late, CubicSpline),
                rotation: track(&[0.0, 0.1, 0.2, 0.4, 0.8, 1.05], rotations(6, 4.0), CubicSpline),
                ..joint(6)
            },
            JointTracks {
                translation: track(&[0.0, 0.2, 0.3, 0.5, 0.6, 0.9], tr_many, CubicSpline),
                ..joint(7)
            },
            // Joint 8 (with three padding lanes): one key, held at every time.
            JointTracks {
                rotation: track(&[0.4], rotations(1, 6.0), CubicSpline),
                scale: track(&[0.6], cubic_vectors(1), CubicSpline),
                ..joint(8)
            },
        ],
        ..Default::default()
    };
    source.update_duration();
    let rest: Vec<Transform> = (0..9)
        .map(|j| Transform {
            translation: v(j as f32, 0.5, 0.0),
            rotation: UnitQuaternion::from_axis_angle(&Vector3::z_axis(), 0.2 * j as f32),
            scale: v(1.0, 1.0, 1.5),
        })
        .collect();
    let clip = RuntimeClip::new(Arc::new(source.clone()), &rest, &[]).unwrap();
    assert_eq!(clip.cubic_rotations.any, [true, true, true]);
    assert_eq!(
        clip.cubic_vectors.each_ref().map(|c| c.any.clone()),
        [vec![true, true, false], vec![true, false, true]]
    );
    let mut times: Vec<f64> = (0..130).map(|i| i as f64 * 0.0093 - 0.05).collect();
    times.extend([0.3, 0.45, 0.55, 1.1, 0.0, 0.1, 0.35, 0.65, 0.2, 2.0, -1.0, 0.5]);
    for mode in [RotationBlend::Slerp, RotationBlend::Nlerp] {
        let mut cursor = ClipCursor::new(&clip);
        for &t in &times {
            let (want, _) = sample_job(&source, &rest, &[], t, mode);
            let run = |simd: Simd, cursor: &mut ClipCursor| {
                let mut out = vec![Transform::IDENTITY; 9];
                let mut job = SampleClipJob {
                    clip: &clip,
                    time: t,
                    rotation_blend: mode,
                    cursor,
                    output: &mut out,
                    morph_output: &mut [],
                };
                job.run_joints_with(0..9, simd).unwrap();
                bits(&out, &[])
            };
            let got = run(Simd::Avx2, &mut cursor);
            assert_eq!(got, run(Simd::Portable, &mut ClipCursor::new(&clip)), "{mode:?}, t = {t}");
            let want_bits = bits(&want, &[]);
            if mode == RotationBlend::Slerp {
                assert_eq!(got, want_bits, "t = {t}");
                continue;
            }
            // A ratio a few f32 roundings off moves a steep spline by a
            // few millionths.
            for (g, w) in got.iter().zip(&want_bits) {
                let (g, w) = (f32::from_bits(*g), f32::from_bits(*w));
                assert!((g - w).abs() <= 1e-5 * w.abs().max(1.0), "t = {t}: {g} against {w}");
            }
        }
    }
}

/// Tracks whose keys are all equal, each component 0 or 1 (the unit
/// scales exporters write), give that value at every time bit for bit:
/// their blocks keep no cursor state and are not interpolated.
#[test]
fn exact_constant_tracks_keep_no_state() {
    let one = |j: u32, t: &[f32], value: Vector3<f32>, interpolation| JointTracks {
        joint: j,
        translation: None,
        rotation: None,
        scale: track(t, vec![value; t.len()], interpolation),
    };
    let mut source = Clip {
        joint_tracks: vec![
            one(0, &[0.0, 0.3, 1.0], v(1., 1., 1.), Interpolation::Linear),
            one(4, &[0.2, 0.9], v(0., 1., -0.), Interpolation::Step),
            JointTracks {
                translation: track(&[0.0, 1.0], vec![v(0., 0., 0.); 2], Interpolation::Linear),
                ..one(1, &[0.5], v(1., 0., 1.), Interpolation::Linear)
            },
        ],
        ..Default::default()
    };
    source.update_duration();
    let clip = RuntimeClip::new(Arc::new(source.clone()), &rest(), &[0.25; 3]).unwrap();
    assert_eq!(clip.vector_blocks(), [0, 0]);
    assert_eq!(clip.streamed_keys(), 0);
    // Not exactly constant: interpolated as before.
    source.joint_tracks[0].scale.as_mut().unwrap().values[1].y = 1.0 + f32::EPSILON;
    let moving = RuntimeClip::new(Arc::new(source.clone()), &rest(), &[0.25; 3]).unwrap();
    assert_eq!(moving.vector_blocks(), [0, 1]);
    source.joint_tracks[0].scale.as_mut().unwrap().values[1].y = 1.0;
    for mode in [RotationBlend::Slerp, RotationBlend::Nlerp] {
        let mut cursor = ClipCursor::new(&clip);
        for i in 0..130 {
            let t = i as f64 * 0.0093 - 0.1;
            let (want, want_w) = reference(&source, t, mode);
            let (got, got_w) = runtime(&clip, &mut cursor, t, mode);
            assert_eq!(bits(&got, &got_w), bits(&want, &want_w), "t = {t}");
        }
    }
}

/// Twelve joints: the first eight turn on the same key times (two
/// rotation blocks sharing a timeline), the last four on others. Forward
/// at 60 Hz, across the ends, backwards and jumping, every block is
/// where `SampleJob` finds its keys, bit for bit.
#[test]
fn blocks_sharing_key_times_move_together() {
    let turn = |j: usize, times: &[f32]| JointTracks {
        joint: j as u32,
        translation: None,
        rotation: track(
            times,
            (0..times.len())
                .map(|k| {
                    UnitQuaternion::from_axis_angle(&Vector3::y_axis(), 0.4 * (j + k) as f32).into_inner()
                })
                .collect(),
            Interpolation::Linear,
        ),
        scale: None,
    };
    let shared = [0.0, 0.25, 0.5, 1.0];
    let mut source = Clip {
        joint_tracks: (0..8)
            .map(|j| turn(j, &shared))
            .chain((8..12).map(|j| turn(j, &[0.1, 0.6, 0.9])))
            .collect(),
        ..Default::default()
    };
    source.update_duration();
    let rest = vec![Transform::IDENTITY; 12];
    let clip = RuntimeClip::new(Arc::new(source.clone()), &rest, &[]).unwrap();
    let followers = clip.timelines.iter().enumerate().filter(|(at, t)| t[0] as usize != *at).count();
    assert_eq!(followers, 1, "{:?}", clip.timelines);
    let mut times: Vec<f64> = (0..80).map(|i| f64::from(i) / 60.0 - 0.1).collect();
    times.extend([0.3, 0.05, 0.95, 0.26, 0.6, 2.0, -1.0, 0.5]);
    let mut cursor = ClipCursor::new(&clip);
    for t in times {
        let (mut got, mut want) = (vec![Transform::IDENTITY; 12], vec![Transform::IDENTITY; 12]);
        SampleClipJob {
            clip: &clip,
            time: t,
            rotation_blend: RotationBlend::Slerp,
            cursor: &mut cursor,
            output: &mut got,
            morph_output: &mut [],
        }
        .run()
        .unwrap();
        SampleJob {
            clip: &source,
            time: t,
            rest: &rest,
            rest_morph_weights: &[],
            rotation_blend: RotationBlend::Slerp,
            cursor: &mut SamplingCursor::new(&source),
            output: &mut want,
            morph_output: &mut [],
        }
        .run()
        .unwrap();
        assert_eq!(bits(&got, &[]), bits(&want, &[]), "t = {t}");
    }
}

#[test]
fn cursor_follows_its_clip_and_modes() {
    let source = awkward_clip();
    let a = RuntimeClip::new(Arc::new(source.clone()), &rest(), &[0.25; 3]).unwrap();
    let b = RuntimeClip::new(Arc::new(source.clone()), &rest(), &[0.25; 3]).unwrap();
    let mut cursor = ClipCursor::new(&a);
    // Far along a, then used for b (same sizes): rewound, not reused.
    runtime(&a, &mut cursor, 0.95, RotationBlend::Nlerp);
    let (got, _) = runtime(&b, &mut cursor, 0.45, RotationBlend::Slerp);
    assert_eq!(bits(&got, &[]), bits(&reference(&source, 0.45, RotationBlend::Slerp).0, &[]));
    // Nlerp while keys are crossed, then slerp: slerp's constants catch up.
    runtime(&b, &mut cursor, 0.9, RotationBlend::Nlerp);
    let (got, _) = runtime(&b, &mut cursor, 1.1, RotationBlend::Slerp);
    assert_eq!(bits(&got, &[]), bits(&reference(&source, 1.1, RotationBlend::Slerp).0, &[]));
    // A cursor of another size, a NaN time, a short output: errors, not panics.
    let small = RuntimeClip::new(Arc::new(Clip::default()), &rest()[..2], &[]).unwrap();
    let mut small_cursor = ClipCursor::new(&small);
    let (mut out, mut w) = (vec![Transform::IDENTITY; 5], vec![0.0; 3]);
    let mut job = |time: f64, cursor: &mut ClipCursor, joints: usize| {
        SampleClipJob {
            clip: &a,
            time,
            rotation_blend: RotationBlend::Slerp,
            cursor,
            output: &mut out[..joints],
            morph_output: &mut w,
        }
        .run()
    };
    assert!(job(0.5, &mut small_cursor, 5).unwrap_err().0.contains("cursor"));
    assert!(job(f64::NAN, &mut cursor, 5).is_err());
    assert!(job(0.5, &mut cursor, 4).is_err());
    assert!(job(0.5, &mut cursor, 5).is_ok());
}

/// Morph weights sampled alone (`ClipCursor::sample_morph_weights`, the
/// GPU-posed character's path) are the job's, bit for bit, forwards,
/// backwards and jumping, on a cursor of their own or one the job
/// moves too; bad input is an error.
#[test]
fn morph_weights_alone_sample_as_the_job_does() {
    use Interpolation::{Linear, Step};
    let mut source = awkward_clip();
    let times: Vec<f32> = (0..7).map(|k| k as f32 * 0.17).collect();
    source.morph_tracks = vec![
        MorphWeightTrack {
            offset: 0,
            count: 1,
            times: times[..5].to_vec(),
            values: vec![0.1, 0.9, 0.3, 0.7, 0.5],
            interpolation: Step,
        },
        MorphWeightTrack {
            offset: 1,
            count: 2,
            times: times.clone(),
            values: (0..14).map(|i| (i as f32 * 0.37).sin()).collect(),
            interpolation: Linear,
        },
    ];
    source.update_duration();
    let clip = RuntimeClip::new(Arc::new(source), &rest(), &[0.25; 3]).unwrap();
    let mut at: Vec<f64> = (0..130).map(|i| i as f64 * 0.0091 - 0.05).collect();
    at.extend([0.5, 0.2, 0.9, 0.34, 0.35, 1.5, -1.0, 0.6]);
    let (mut alone, mut shared, mut moved) =
        (ClipCursor::new(&clip), ClipCursor::new(&clip), ClipCursor::new(&clip));
    for (i, &t) in at.iter().enumerate() {
        let (_, want) = runtime(&clip, &mut moved, t, RotationBlend::Nlerp);
        let mut got = vec![f32::NAN; 3];
        alone.sample_morph_weights(&clip, t, &mut got).unwrap();
        assert_eq!(bits(&[], &got), bits(&[], &want), "t = {t}");
        // Every other time the job moves the shared cursor.
        if i % 2 == 0 {
            runtime(&clip, &mut shared, t, RotationBlend::Nlerp);
        }
        shared.sample_morph_weights(&clip, t, &mut got).unwrap();
        assert_eq!(bits(&[], &got), bits(&[], &want), "t = {t}, shared");
    }
    let mut w = vec![0.0; 3];
    assert!(alone.sample_morph_weights(&clip, f64::NAN, &mut w).is_err());
    assert!(alone.sample_morph_weights(&clip, 0.5, &mut w[..2]).is_err());
    let small = RuntimeClip::new(Arc::new(Clip::default()), &rest()[..2], &[]).unwrap();
    assert!(
        ClipCursor::new(&small).sample_morph_weights(&clip, 0.5, &mut w).unwrap_err().0.contains("cursor")
    );
}

/// A joint range samples its blocks of four, bit for bit as a whole
/// run, and leaves every other joint as it was (a cubic-spline track,
/// sampled by the scalar code, included: joint 2's translation).
#[test]
fn joint_ranges_sample_their_blocks_alone() {
    let clip = RuntimeClip::new(Arc::new(awkward_clip()), &rest(), &[0.25; 3]).unwrap();
    let untouched =
        Transform { translation: v(9., 9., 9.), rotation: UnitQuaternion::identity(), scale: v(7., 7., 7.) };
    for mode in [RotationBlend::Slerp, RotationBlend::Nlerp] {
        for &t in &[0.0, 0.37, 0.7, 1.3] {
            let (whole, whole_w) = runtime(&clip, &mut ClipCursor::new(&clip), t, mode);
            for (joints, sampled) in [(4..5, 4..5), (1..3, 0..4), (2..5, 0..5), (3..3, 3..3)] {
                let (out, w) = sample_joints(&clip, t, mode, joints.clone(), Simd::detect(), untouched);
                for (j, got) in out.iter().enumerate() {
                    let want = if sampled.contains(&j) { &whole[j] } else { &untouched };
                    assert_eq!(
                        bits(std::slice::from_ref(got), &[]),
                        bits(std::slice::from_ref(want), &[]),
                        "{joints:?} joint {j} t = {t}"
                    );
                }
                assert_eq!(w, whole_w);
            }
        }
    }
    let (mut out, mut w) = (vec![untouched; 5], vec![0.0; 3]);
    let mut cursor = ClipCursor::new(&clip);
    let mut job = SampleClipJob {
        clip: &clip,
        time: 0.5,
        rotation_blend: RotationBlend::Nlerp,
        cursor: &mut cursor,
        output: &mut out,
        morph_output: &mut w,
    };
    assert!(job.run_joints(3..6).unwrap_err().0.contains("outside the skeleton"));
    #[allow(clippy::reversed_empty_ranges)]
    let backwards = 4..2;
    assert!(job.run_joints(backwards).is_err());
}

#[test]
fn building_checks_the_clip_once() {
    let rest = rest();
    let build = |clip: Clip, weights: usize| RuntimeClip::new(Arc::new(clip), &rest, &vec![0.25; weights]);
    let mut bad = awkward_clip();
    bad.joint_tracks[0].translation.as_mut().unwrap().times = vec![0.0, 0.5, 0.5];
    let e = build(bad, 3).unwrap_err();
    assert!(e.0.contains("joint track 0 translation") && e.0.contains("not increasing"), "{e}");
    let mut bad = awkward_clip();
    bad.joint_tracks[2].joint = 5;
    assert!(build(bad, 3).unwrap_err().0.contains("joint 5"));
    let mut bad = awkward_clip();
    bad.joint_tracks[1].rotation.as_mut().unwrap().values.pop();
    assert!(build(bad, 3).is_err());
    assert!(build(awkward_clip(), 2).unwrap_err().0.contains("morph"));
    let mut bad = awkward_clip();
    bad.morph_tracks[0].times[1] = f32::NAN;
    assert!(build(bad, 3).is_err());
    assert!(build(awkward_clip(), 3).is_ok());
}
