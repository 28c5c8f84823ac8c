//! The reference sampler's tests: what `SampleJob` rejects, and what it
//! gives for each interpolation, at and past the ends, for untracked joints
//! and weights, and with a reused cursor.
//!
//! Every clip is built here in code: they need no model file and never
//! touch the runtime samplers.

use super::*;
use crate::anim::clip::{ClipEvent, Interpolation, MorphWeightTrack, Track};
use nalgebra::Vector3;
use nalgebra::{Quaternion, UnitQuaternion};
use std::f32::consts::FRAC_PI_2;

fn axis_angle(axis: Vector3<f32>, angle: f32) -> Quaternion<f32> {
    UnitQuaternion::from_axis_angle(&nalgebra::Unit::new_normalize(axis), angle).into_inner()
}

fn track<T>(times: &[f32], values: Vec<T>, interpolation: Interpolation) -> Track<T> {
    Track { times: times.to_vec(), values, interpolation }
}

fn v(x: f32, y: f32, z: f32) -> Vector3<f32> {
    Vector3::new(x, y, z)
}

/// Samples a one-joint clip (plus its morph tracks) at `time`.
fn sample(clip: &Clip, time: f32, blend: RotationBlend, morphs: usize) -> (Transform, Vec<f32>) {
    let rest = vec![Transform::IDENTITY; 1];
    let rest_w = vec![0.5; morphs];
    let mut out = vec![Transform::IDENTITY; 1];
    let mut out_w = vec![0.0; morphs];
    let mut cursor = SamplingCursor::new(clip);
    SampleJob {
        clip,
        time: time.into(),
        rest: &rest,
        rest_morph_weights: &rest_w,
        rotation_blend: blend,
        cursor: &mut cursor,
        output: &mut out,
        morph_output: &mut out_w,
    }
    .run()
    .unwrap();
    (out[0], out_w)
}

fn joint_clip(jt: JointTracks) -> Clip {
    let mut c = Clip { joint_tracks: vec![jt], ..Default::default() };
    c.update_duration();
    c
}

fn translation_clip(times: &[f32], values: Vec<Vector3<f32>>, i: Interpolation) -> Clip {
    joint_clip(JointTracks { joint: 0, translation: Some(track(times, values, i)), ..Default::default() })
}

fn rotation_clip(times: &[f32], values: Vec<Quaternion<f32>>, i: Interpolation) -> Clip {
    joint_clip(JointTracks { joint: 0, rotation: Some(track(times, values, i)), ..Default::default() })
}

fn close(a: Vector3<f32>, b: Vector3<f32>) -> bool {
    (a - b).norm() < 1e-5
}

fn angle_between(a: UnitQuaternion<f32>, b: UnitQuaternion<f32>) -> f32 {
    a.angle_to(&b)
}

// ---- validity ----

struct Bufs {
    rest: Vec<Transform>,
    rest_w: Vec<f32>,
    out: Vec<Transform>,
    out_w: Vec<f32>,
    cursor: SamplingCursor,
}

fn bufs(clip: &Clip, joints: usize, morphs: usize) -> Bufs {
    Bufs {
        rest: vec![Transform::IDENTITY; joints],
        rest_w: vec![0.0; morphs],
        out: vec![Transform::IDENTITY; joints],
        out_w: vec![0.0; morphs],
        cursor: SamplingCursor::new(clip),
    }
}

fn check(clip: &Clip, b: &mut Bufs, time: f32) -> Result<(), JobError> {
    SampleJob {
        clip,
        time: time.into(),
        rest: &b.rest,
        rest_morph_weights: &b.rest_w,
        rotation_blend: RotationBlend::Slerp,
        cursor: &mut b.cursor,
        output: &mut b.out,
        morph_output: &mut b.out_w,
    }
    .run()
}

fn valid_clip() -> Clip {
    let mut c = translation_clip(&[0.0, 1.0], vec![v(0., 0., 0.), v(1., 0., 0.)], Interpolation::Linear);
    c.morph_tracks.push(MorphWeightTrack {
        offset: 1,
        count: 2,
        times: vec![0.0, 1.0],
        values: vec![0.0, 0.0, 1.0, 1.0],
        interpolation: Interpolation::Linear,
    });
    c
}

#[test]
fn accepts_valid_input() {
    let c = valid_clip();
    assert!(check(&c, &mut bufs(&c, 2, 3), 0.5).is_ok());
}

#[test]
fn rejects_nan_time() {
    let c = valid_clip();
    assert!(check(&c, &mut bufs(&c, 2, 3), f32::NAN).is_err());
}

#[test]
fn rejects_wrong_output_lengths() {
    let c = valid_clip();
    let mut b = bufs(&c, 2, 3);
    b.out.pop();
    assert!(check(&c, &mut b, 0.5).is_err());
    let mut b = bufs(&c, 2, 3);
    b.out_w.push(0.0);
    assert!(check(&c, &mut b, 0.5).is_err());
}

#[test]
fn rejects_cursor_for_another_clip() {
    let c = valid_clip();
    let mut b = bufs(&c, 2, 3);
    b.cursor = SamplingCursor::new(&Clip::default());
    assert!(check(&c, &mut b, 0.5).unwrap_err().0.contains("cursor"));
}

#[test]
fn rejects_joint_out_of_range() {
    let mut c = valid_clip();
    c.joint_tracks[0].joint = 2;
    assert!(check(&c, &mut bufs(&c, 2, 3), 0.5).is_err());
}

#[test]
fn rejects_morph_range_out_of_bounds() {
    let c = valid_clip();
    assert!(check(&c, &mut bufs(&c, 2, 2), 0.5).is_err());
    let mut c = valid_clip();
    c.morph_tracks[0].offset = u32::MAX;
    assert!(check(&c, &mut bufs(&c, 2, 3), 0.5).is_err());
}

#[test]
fn rejects_bad_key_counts() {
    let mut c = valid_clip();
    c.joint_tracks[0].translation.as_mut().unwrap().values.pop();
    assert!(check(&c, &mut bufs(&c, 2, 3), 0.5).is_err());
    // Cubic needs three values per key.
    let mut c = valid_clip();
    c.joint_tracks[0].translation.as_mut().unwrap().interpolation = Interpolation::CubicSpline;
    assert!(check(&c, &mut bufs(&c, 2, 3), 0.5).is_err());
    let mut c = valid_clip();
    c.morph_tracks[0].values.pop();
    assert!(check(&c, &mut bufs(&c, 2, 3), 0.5).is_err());
    let mut c = valid_clip();
    c.joint_tracks[0].rotation = Some(track(&[], vec![], Interpolation::Linear));
    let mut b = bufs(&c, 2, 3);
    assert!(check(&c, &mut b, 0.5).unwrap_err().0.contains("no keys"));
}

#[test]
fn unsorted_times_and_stale_cursor_do_not_panic() {
    let mut c = translation_clip(
        &[0.0, 2.0, 1.0, 1.0, 3.0],
        vec![v(0., 0., 0.), v(1., 0., 0.), v(2., 0., 0.), v(3., 0., 0.), v(4., 0., 0.)],
        Interpolation::Linear,
    );
    c.events.push(ClipEvent { time: 0.0, name: String::new() });
    let mut b = bufs(&c, 1, 0);
    for (i, t) in [0.5, 1.0, 1.5, 2.5, -1.0, 9.0].into_iter().enumerate() {
        b.cursor.keys[0] = [0, 3, 4, 100, u32::MAX, 2][i];
        check(&c, &mut b, t).unwrap();
        assert!(b.out[0].is_finite());
    }
}

// ---- behaviour ----

#[test]
fn untracked_joints_and_morphs_keep_rest() {
    let c = valid_clip();
    let mut b = bufs(&c, 2, 3);
    b.rest[1].translation = v(7., 8., 9.);
    b.rest_w = vec![0.25, 0.0, 0.0];
    check(&c, &mut b, 0.5).unwrap();
    assert_eq!(b.out[1], b.rest[1]);
    assert_eq!(b.out_w, vec![0.25, 0.5, 0.5]);
    assert!(close(b.out[0].translation, v(0.5, 0., 0.)));
}

#[test]
fn linear_midpoint() {
    let c = translation_clip(&[1.0, 3.0], vec![v(0., 2., 4.), v(2., 4., 8.)], Interpolation::Linear);
    let (t, _) = sample(&c, 2.0, RotationBlend::Slerp, 0);
    assert!(close(t.translation, v(1., 3., 6.)));
}

#[test]
fn clamps_before_first_and_after_last_key() {
    let c = translation_clip(&[1.0, 3.0], vec![v(0., 2., 4.), v(2., 4., 8.)], Interpolation::Linear);
    assert_eq!(sample(&c, 0.0, RotationBlend::Slerp, 0).0.translation, v(0., 2., 4.));
    assert_eq!(sample(&c, -5.0, RotationBlend::Slerp, 0).0.translation, v(0., 2., 4.));
    assert_eq!(sample(&c, 3.0, RotationBlend::Slerp, 0).0.translation, v(2., 4., 8.));
    assert_eq!(sample(&c, f32::INFINITY, RotationBlend::Slerp, 0).0.translation, v(2., 4., 8.));
    // Cubic clamps to the middle value, not a tangent.
    let c = translation_clip(
        &[1.0, 3.0],
        vec![v(9., 9., 9.), v(1., 1., 1.), v(9., 9., 9.), v(9., 9., 9.), v(2., 2., 2.), v(9., 9., 9.)],
        Interpolation::CubicSpline,
    );
    assert_eq!(sample(&c, 0.0, RotationBlend::Slerp, 0).0.translation, v(1., 1., 1.));
    assert_eq!(sample(&c, 4.0, RotationBlend::Slerp, 0).0.translation, v(2., 2., 2.));
}

#[test]
fn single_key_is_constant() {
    for i in [Interpolation::Step, Interpolation::Linear] {
        let c = translation_clip(&[0.5], vec![v(1., 2., 3.)], i);
        for t in [0.0, 0.5, 2.0] {
            assert_eq!(sample(&c, t, RotationBlend::Slerp, 0).0.translation, v(1., 2., 3.));
        }
    }
    let c = translation_clip(
        &[0.5],
        vec![v(5., 5., 5.), v(1., 2., 3.), v(5., 5., 5.)],
        Interpolation::CubicSpline,
    );
    assert_eq!(sample(&c, 1.0, RotationBlend::Slerp, 0).0.translation, v(1., 2., 3.));
}

#[test]
fn step_holds_previous_key() {
    let c = translation_clip(
        &[0.0, 1.0, 2.0],
        vec![v(0., 0., 0.), v(1., 0., 0.), v(2., 0., 0.)],
        Interpolation::Step,
    );
    for (t, x) in [(0.0, 0.), (0.99, 0.), (1.0, 1.), (1.5, 1.), (1.999, 1.), (2.0, 2.), (3.0, 2.)] {
        assert_eq!(sample(&c, t, RotationBlend::Slerp, 0).0.translation.x, x, "t = {t}");
    }
}

#[test]
fn slerp_quarter_of_90_degrees_is_22_5_degrees() {
    let axis = v(1., 2., 3.);
    let c = rotation_clip(
        &[0.0, 1.0],
        vec![Quaternion::identity(), axis_angle(axis, FRAC_PI_2)],
        Interpolation::Linear,
    );
    let (t, _) = sample(&c, 0.25, RotationBlend::Slerp, 0);
    let expected = UnitQuaternion::new_normalize(axis_angle(axis, FRAC_PI_2 / 4.0));
    assert!(angle_between(t.rotation, expected) < 1e-5);
    // Nlerp is close but not exact.
    let (n, _) = sample(&c, 0.25, RotationBlend::Nlerp, 0);
    let err = angle_between(n.rotation, expected);
    assert!(err > 1e-3 && err < 0.02, "{err}");
}

#[test]
fn slerp_of_tiny_angle_is_accurate() {
    let c = rotation_clip(
        &[0.0, 1.0],
        vec![Quaternion::identity(), axis_angle(v(0., 0., 1.), 1e-4)],
        Interpolation::Linear,
    );
    let (t, _) = sample(&c, 0.5, RotationBlend::Slerp, 0);
    assert!((t.rotation.angle() - 0.5e-4).abs() < 1e-6, "{}", t.rotation.angle());
}

#[test]
fn hemisphere_check_takes_short_path() {
    // Keys 10 degrees and 350 degrees about z; as quaternions 350 degrees is
    // the negation of -10 degrees, so the short path passes through 0.
    let a = axis_angle(v(0., 0., 1.), 10f32.to_radians());
    let b = axis_angle(v(0., 0., 1.), 350f32.to_radians());
    assert!(a.dot(&b) < 0.0);
    for blend in [RotationBlend::Slerp, RotationBlend::Nlerp] {
        let c = rotation_clip(&[0.0, 1.0], vec![a, b], Interpolation::Linear);
        let (t, _) = sample(&c, 0.5, blend, 0);
        assert!(t.rotation.angle() < 1e-4, "{blend:?}: {}", t.rotation.angle());
        // Exactly q and -q: the same rotation all the way.
        let c = rotation_clip(&[0.0, 1.0], vec![a, -a], Interpolation::Linear);
        let (t, _) = sample(&c, 0.3, blend, 0);
        assert!(angle_between(t.rotation, UnitQuaternion::new_normalize(a)) < 1e-4);
    }
}

#[test]
fn rotations_are_unit_and_zero_falls_back_to_rest() {
    // Unnormalised keys still give a unit result.
    let c = rotation_clip(
        &[0.0, 1.0],
        vec![Quaternion::new(2.0, 0., 0., 0.), axis_angle(v(1., 0., 0.), 1.0) * 3.0],
        Interpolation::Linear,
    );
    let (t, _) = sample(&c, 0.5, RotationBlend::Slerp, 0);
    assert!((t.rotation.norm() - 1.0).abs() < 1e-6);
    assert!((t.rotation.angle() - 0.5).abs() < 1e-5);
    // A cubic spline passing through zero gives the rest rotation, not NaN.
    let z = Quaternion::new(0.0, 0.0, 0.0, 0.0);
    let c = rotation_clip(&[0.0, 1.0], vec![z, z, z, z, z, z], Interpolation::CubicSpline);
    let (t, _) = sample(&c, 0.5, RotationBlend::Slerp, 0);
    assert_eq!(t.rotation, UnitQuaternion::identity());
}

#[test]
fn cubic_spline_matches_formula() {
    // Scalar case in x: v0 = 1, b0 = 2, v1 = 3, a1 = -1, td = 2, s = 0.5.
    // p = 0.5*1 + 2*(0.125 - 0.5 + 0.5)*2 + 0.5*3 + 2*(0.125 - 0.25)*(-1) = 0.5 + 0.5 + 1.5 + 0.25
    let c = translation_clip(
        &[1.0, 3.0],
        vec![v(7., 0., 0.), v(1., 0., 0.), v(2., 0., 0.), v(-1., 0., 0.), v(3., 0., 0.), v(7., 0., 0.)],
        Interpolation::CubicSpline,
    );
    let (t, _) = sample(&c, 2.0, RotationBlend::Slerp, 0);
    assert!((t.translation.x - 2.75).abs() < 1e-6, "{}", t.translation.x);
    // s = 0.25: h00 = 0.84375, h10 = 0.140625, h01 = 0.15625, h11 = -0.046875.
    let (t, _) = sample(&c, 1.5, RotationBlend::Slerp, 0);
    let (v0, b0, v1, a1, td) = (1.0, 2.0, 3.0, -1.0, 2.0);
    let p = 0.84375 * v0 + td * 0.140625 * b0 + 0.15625 * v1 + td * -0.046875 * a1;
    assert!((t.translation.x - p).abs() < 1e-6, "{} vs {p}", t.translation.x);
}

#[test]
fn cubic_rotation_is_normalised() {
    let q0 = axis_angle(v(0., 1., 0.), 0.0);
    let q1 = axis_angle(v(0., 1., 0.), 1.0);
    let zero = Quaternion::new(0.0, 0.0, 0.0, 0.0);
    let c = rotation_clip(&[0.0, 1.0], vec![zero, q0, zero, zero, q1, zero], Interpolation::CubicSpline);
    let (t, _) = sample(&c, 0.5, RotationBlend::Slerp, 0);
    // Zero tangents: the unnormalised midpoint is (q0 + q1) / 2, i.e. 0.5 rad.
    assert!((t.rotation.angle() - 0.5).abs() < 1e-5);
}

#[test]
fn morph_tracks_all_interpolations() {
    let mut c = Clip::default();
    // Linear: two weights at offset 0.
    c.morph_tracks.push(MorphWeightTrack {
        offset: 0,
        count: 2,
        times: vec![0.0, 1.0],
        values: vec![0.0, 1.0, 1.0, 0.0],
        interpolation: Interpolation::Linear,
    });
    // Step: one weight at offset 2.
    c.morph_tracks.push(MorphWeightTrack {
        offset: 2,
        count: 1,
        times: vec![0.0, 1.0],
        values: vec![0.2, 0.8],
        interpolation: Interpolation::Step,
    });
    // Cubic: two weights at offset 3, layout [a0 a0' v0 v0' b0 b0' | a1 a1' v1 v1' b1 b1'].
    c.morph_tracks.push(MorphWeightTrack {
        offset: 3,
        count: 2,
        times: vec![0.0, 2.0],
        values: vec![9., 9., 1., 0., 2., 0., -1., 0., 3., 1., 9., 9.],
        interpolation: Interpolation::CubicSpline,
    });
    c.update_duration();
    let (_, w) = sample(&c, 1.0, RotationBlend::Slerp, 6);
    assert!((w[0] - 1.0).abs() < 1e-6 && w[1].abs() < 1e-6, "{w:?}");
    assert_eq!(w[2], 0.8);
    assert!((w[3] - 2.75).abs() < 1e-6, "{w:?}");
    assert!((w[4] - 0.5).abs() < 1e-6, "{w:?}");
    assert_eq!(w[5], 0.5); // rest
    let (_, w) = sample(&c, 0.25, RotationBlend::Slerp, 6);
    assert!((w[0] - 0.25).abs() < 1e-6 && (w[1] - 0.75).abs() < 1e-6, "{w:?}");
    assert_eq!(w[2], 0.2);
    let (_, w) = sample(&c, 5.0, RotationBlend::Slerp, 6);
    assert_eq!(&w[3..5], &[3.0, 1.0]);
}

use crate::testing::lcg::Lcg;

#[test]
fn cursor_matches_fresh_cursor() {
    let mut rng = Lcg(7);
    let n = 40;
    let mut times = Vec::new();
    let mut acc = 0.0;
    for _ in 0..n {
        times.push(acc);
        acc += 0.01 + rng.unit() * 0.2;
    }
    let vals: Vec<Vector3<f32>> = (0..n).map(|_| v(rng.unit(), rng.unit(), rng.unit())).collect();
    let rots: Vec<Quaternion<f32>> =
        (0..n).map(|_| axis_angle(v(rng.unit(), rng.unit(), 1.0), rng.unit() * 6.0)).collect();
    let scales: Vec<Vector3<f32>> = (0..3 * n).map(|_| v(rng.unit(), rng.unit(), rng.unit())).collect();
    let weights: Vec<f32> = (0..2 * n).map(|_| rng.unit()).collect();
    let mut clip = Clip {
        joint_tracks: vec![JointTracks {
            joint: 1,
            translation: Some(track(&times, vals, Interpolation::Linear)),
            rotation: Some(track(&times[..n / 2], rots[..n / 2].to_vec(), Interpolation::Linear)),
            scale: Some(track(&times, scales, Interpolation::CubicSpline)),
        }],
        morph_tracks: vec![MorphWeightTrack {
            offset: 0,
            count: 2,
            times: times.clone(),
            values: weights,
            interpolation: Interpolation::Step,
        }],
        ..Default::default()
    };
    clip.update_duration();
    let rest = vec![Transform::IDENTITY; 2];
    let rest_w = vec![0.0; 2];
    let mut kept = SamplingCursor::new(&clip);
    let mut t = -0.1;
    for step in 0..2000 {
        // Mostly small forward steps, sometimes backwards or a random jump.
        let r = rng.unit();
        t = if step % 97 == 0 {
            rng.unit() * (acc + 0.4) - 0.2
        } else if r < 0.1 {
            t - rng.unit() * 0.3
        } else {
            t + rng.unit() * 0.05
        };
        if t > acc + 0.2 {
            t = -0.1;
        }
        let mut results = Vec::new();
        for cursor in [&mut kept, &mut SamplingCursor::new(&clip)] {
            let mut out = vec![Transform::IDENTITY; 2];
            let mut out_w = vec![0.0; 2];
            SampleJob {
                clip: &clip,
                time: t.into(),
                rest: &rest,
                rest_morph_weights: &rest_w,
                rotation_blend: RotationBlend::Slerp,
                cursor,
                output: &mut out,
                morph_output: &mut out_w,
            }
            .run()
            .unwrap();
            results.push((out, out_w));
        }
        assert_eq!(results[0], results[1], "t = {t}");
    }
    kept.reset();
    assert!(kept.keys.iter().all(|&k| k == 0));
}
