//! The runtime clip layout samples what the scalar `SampleJob` samples, for
//! every clip of every shared model, through forward playback at 60 Hz,
//! loops, backward steps and random jumps (one cursor kept across all of
//! them): bit for bit with slerp (the glTF-exact path `dump` uses), within
//! a few f32 roundings with nlerp (the fast path).

use crate::common::{find_models, shared_assets};
use vkskin::anim::{
    ClipCursor, RotationBlend, RuntimeClip, SampleClipJob, SampleJob, SamplingCursor, Transform,
};
use vkskin::testing::bits::pose_bits as bits;

/// Tiny deterministic generator (no rand crate).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[test]
fn runtime_clips_sample_exactly_what_sample_job_samples() {
    let Some(dir) = shared_assets("runtime clip exactness") else { return };
    let models = find_models(&dir);
    assert!(models.len() >= 15, "expected the shared models, found {}", models.len());
    let mut checked = 0usize;
    for path in models {
        let model = vkskin::asset::load(&path).unwrap();
        let rest = model.skeleton.rest();
        let rest_w = &model.rest_morph_weights;
        for (c, clip) in model.clips.iter().enumerate() {
            let runtime = RuntimeClip::new(clip.clone(), rest, rest_w).unwrap();
            let mut rng = Lcg(c as u64 + 11);
            let d = f64::from(clip.duration);
            let start = f64::from(clip.start());
            // Forward at 60 Hz over two loops, then a mix of steps and jumps.
            let mut times: Vec<f64> =
                (0..(2.0 * d * 60.0) as usize + 2).map(|i| (i as f64 / 60.0) % d.max(1e-3)).collect();
            times.extend([start, start - 0.1, d, d + 0.5, -1.0, f64::INFINITY, f64::NEG_INFINITY, 0.0]);
            let mut t = 0.0;
            for _ in 0..300 {
                let r = rng.next();
                t = if r < 0.1 {
                    rng.next() * (d + 0.4) - 0.2
                } else if r < 0.2 {
                    t - rng.next() * 0.2
                } else {
                    t + rng.next() * 0.05
                };
                times.push(t);
            }
            // Every key time exactly, and just around it.
            for jt in &clip.joint_tracks {
                if let Some(tr) = &jt.rotation {
                    for &k in tr.times.iter().take(40) {
                        let k = f64::from(k);
                        times.extend([k, k - 1e-9, k + 1e-9]);
                    }
                }
            }
            for mode in [RotationBlend::Slerp, RotationBlend::Nlerp] {
                let mut cursor = ClipCursor::new(&runtime);
                for &t in &times {
                    let mut expected = vec![Transform::IDENTITY; rest.len()];
                    let mut expected_w = vec![0.0; rest_w.len()];
                    SampleJob {
                        clip,
                        time: t,
                        rest,
                        rest_morph_weights: rest_w,
                        rotation_blend: mode,
                        cursor: &mut SamplingCursor::new(clip),
                        output: &mut expected,
                        morph_output: &mut expected_w,
                    }
                    .run()
                    .unwrap();
                    let mut got = vec![Transform::IDENTITY; rest.len()];
                    let mut got_w = vec![0.0; rest_w.len()];
                    SampleClipJob {
                        clip: &runtime,
                        time: t,
                        rotation_blend: mode,
                        cursor: &mut cursor,
                        output: &mut got,
                        morph_output: &mut got_w,
                    }
                    .run()
                    .unwrap();
                    if mode == RotationBlend::Nlerp {
                        let near = |a: f32, b: f32| (a - b).abs() <= 2e-6 * (1.0 + b.abs());
                        for (j, (g, e)) in got.iter().zip(&expected).enumerate() {
                            let (q, r) = (g.rotation.coords, e.rotation.coords);
                            let flip = if q.dot(&r) < 0.0 { -1.0 } else { 1.0 };
                            let ok =
                                g.translation.iter().zip(e.translation.iter()).all(|(a, b)| near(*a, *b))
                                    && g.scale.iter().zip(e.scale.iter()).all(|(a, b)| near(*a, *b))
                                    && q.iter().zip(r.iter()).all(|(a, b)| near(*a * flip, *b));
                            assert!(
                                ok,
                                "{} clip {c} nlerp t={t}: joint {j}\n got {g:?}\nwant {e:?}",
                                path.display()
                            );
                        }
                        assert!(
                            got_w.iter().zip(&expected_w).all(|(a, b)| near(*a, *b)),
                            "{} clip {c} t={t}: weights",
                            path.display()
                        );
                    } else if bits(&got, &got_w) != bits(&expected, &expected_w) {
                        let j =
                            (0..rest.len()).find(|&j| bits(&got[j..=j], &[]) != bits(&expected[j..=j], &[]));
                        panic!(
                            "{} clip {c} {mode:?} t={t}: joint {j:?}\n got {:?}\nwant {:?}",
                            path.display(),
                            j.map(|j| got[j]),
                            j.map(|j| expected[j])
                        );
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 10_000, "{checked} poses compared");
}

/// Both sampling paths (nlerp's eight lanes, slerp's four) give the same
/// bits compiled for AVX2 and as the portable build, on every clip of every shared model (this CPU without
/// AVX2 compares the portable code with itself, and says so).
#[test]
fn avx2_and_portable_sampling_give_the_same_bits() {
    use vkskin::anim::lanes8::Simd;
    let Some(dir) = shared_assets("AVX2 against portable sampling") else { return };
    if !Simd::avx2_available() {
        eprintln!("this CPU has no AVX2: only the portable code runs");
    }
    let mut compared = 0usize;
    for path in find_models(&dir) {
        let model = vkskin::asset::load(&path).unwrap();
        let (rest, rest_w) = (model.skeleton.rest(), &model.rest_morph_weights);
        for (c, clip) in model.clips.iter().enumerate() {
            let runtime = RuntimeClip::new(clip.clone(), rest, rest_w).unwrap();
            let mut rng = Lcg(c as u64 + 5);
            let d = f64::from(clip.duration);
            let mut times: Vec<f64> = (0..(d * 60.0) as usize + 2).map(|i| i as f64 / 60.0).collect();
            times.extend((0..100).map(|_| rng.next() * (d + 0.4) - 0.2));
            for mode in [RotationBlend::Nlerp, RotationBlend::Slerp] {
                let mut cursors = [ClipCursor::new(&runtime), ClipCursor::new(&runtime)];
                for &t in &times {
                    let [a, b] = [Simd::Avx2, Simd::Portable].map(|simd| {
                        let cursor = &mut cursors[(simd == Simd::Portable) as usize];
                        let (mut out, mut w) =
                            (vec![Transform::IDENTITY; rest.len()], vec![0.0; rest_w.len()]);
                        Simd::set_override(Some(simd));
                        SampleClipJob {
                            clip: &runtime,
                            time: t,
                            rotation_blend: mode,
                            cursor,
                            output: &mut out,
                            morph_output: &mut w,
                        }
                        .run()
                        .unwrap();
                        bits(&out, &w)
                    });
                    assert_eq!(a, b, "{} clip {c} t = {t} {mode:?}", path.display());
                    compared += 1;
                }
            }
        }
    }
    Simd::set_override(None);
    assert!(compared > 5_000, "{compared} poses compared");
}
