//! Pose evaluation cost per character: sample two clips, blend them, local to
//! model, palettes. Reported as nanoseconds per joint, with the nlerp fast
//! path as a ratio against glTF-exact slerp measured in the same run.
//!
//! Run: `cargo bench --bench pose` (needs ../shared/assets).

use criterion::{Criterion, Throughput};
use nalgebra::Matrix4;
use std::cell::RefCell;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use vkskin::anim::blending::BlendTwoJob;
use vkskin::anim::hierarchy::{LocalToModelJob, PaletteJob};
use vkskin::anim::sampling::{RotationBlend, SampleJob, SamplingCursor};
use vkskin::anim::{BoneMatrix, Pose};
use vkskin::asset::Model;

/// Characters and the two clips blended for each.
const CASES: &[(&str, &str, &str)] = &[
    ("Fox/Fox.glb", "Walk", "Run"),
    ("Wizard/Wizard.glb", "Walk", "Run"),
    ("RobotExpressive/RobotExpressive.glb", "Walking", "Running"),
];

/// Everything one character needs per frame, allocated once.
struct Character {
    model: Model,
    clips: [usize; 2],
    cursors: [SamplingCursor; 2],
    poses: [Pose; 2],
    blended: Pose,
    world: Vec<Matrix4<f32>>,
    palettes: Vec<Vec<BoneMatrix>>,
}

impl Character {
    fn new(model: Model, a: &str, b: &str) -> Self {
        let clips = [model.find_clip(a).expect("clip a"), model.find_clip(b).expect("clip b")];
        let (joints, weights) = (model.skeleton.len(), model.rest_morph_weights.len());
        Character {
            cursors: clips.map(|c| SamplingCursor::new(&model.clips[c])),
            poses: [Pose::new(joints, weights), Pose::new(joints, weights)],
            blended: Pose::new(joints, weights),
            world: vec![Matrix4::identity(); joints],
            palettes: model.skins.iter().map(|s| vec![BoneMatrix::IDENTITY; s.joints.len()]).collect(),
            clips,
            model,
        }
    }

    /// One frame of pose evaluation at time `t`.
    fn evaluate(&mut self, t: f32, rotation_blend: RotationBlend) {
        let m = &self.model;
        for k in 0..2 {
            let clip = &m.clips[self.clips[k]];
            SampleJob {
                clip,
                time: f64::from(t % clip.duration.max(1e-6)),
                rest: m.skeleton.rest(),
                rest_morph_weights: &m.rest_morph_weights,
                rotation_blend,
                cursor: &mut self.cursors[k],
                output: &mut self.poses[k].locals,
                morph_output: &mut self.poses[k].morph_weights,
            }
            .run()
            .unwrap();
        }
        BlendTwoJob {
            a: &self.poses[0].locals,
            b: &self.poses[1].locals,
            a_morph: &self.poses[0].morph_weights,
            b_morph: &self.poses[1].morph_weights,
            t: 0.5,
            output: &mut self.blended.locals,
            morph_output: &mut self.blended.morph_weights,
        }
        .run()
        .unwrap();
        LocalToModelJob {
            parents: m.skeleton.parents(),
            locals: &self.blended.locals,
            root: Matrix4::identity(),
            output: &mut self.world,
        }
        .run()
        .unwrap();
        for (skin, palette) in m.skins.iter().zip(&mut self.palettes) {
            PaletteJob { skin, models: &self.world, output: palette }.run().unwrap();
        }
    }
}

fn main() {
    let assets = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/assets");
    if !assets.is_dir() {
        eprintln!("{}: not found; the pose benchmark needs the shared models", assets.display());
        return;
    }
    let mut criterion = Criterion::default().configure_from_args();
    let samples: RefCell<Vec<Samples>> = RefCell::new(Vec::new());
    for (file, a, b) in CASES {
        let model = vkskin::asset::load(&assets.join(file)).expect("load");
        let name = file.split('/').next().unwrap().to_string();
        let mut character = Character::new(model, a, b);
        let joints = character.model.skeleton.len();
        let mut group = criterion.benchmark_group(format!("pose/{name}"));
        group.throughput(Throughput::Elements(joints as u64));
        for (mode, blend) in [("slerp", RotationBlend::Slerp), ("nlerp", RotationBlend::Nlerp)] {
            let slot = {
                let mut s = samples.borrow_mut();
                s.push(Samples { character: name.clone(), joints, nanos: Vec::new() });
                s.len() - 1
            };
            group.bench_function(mode, |bencher| {
                bencher.iter_custom(|iters| {
                    // Advance time like a 60 Hz player so cursors see forward playback.
                    let start = Instant::now();
                    for i in 0..iters {
                        character.evaluate(i as f32 / 60.0, blend);
                    }
                    let elapsed = start.elapsed();
                    samples.borrow_mut()[slot].nanos.push(elapsed.as_nanos() as f64 / iters.max(1) as f64);
                    elapsed.max(Duration::from_nanos(1))
                })
            });
        }
        group.finish();
    }
    criterion.final_summary();
    print_report(&samples.into_inner());
}

/// Per-iteration nanoseconds of every criterion sample of one case.
struct Samples {
    character: String,
    joints: usize,
    nanos: Vec<f64>,
}

/// Median ns per joint of each case, and nlerp relative to slerp.
fn print_report(samples: &[Samples]) {
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    println!("\npose evaluation (2 clips sampled, blended, local->model, palettes)");
    println!(
        "{:<18} {:>6} {:>14} {:>14} {:>12}",
        "character", "joints", "slerp ns/joint", "nlerp ns/joint", "nlerp/slerp"
    );
    for pair in samples.chunks(2) {
        // Cases filtered out on the command line have no samples.
        if let [slerp, nlerp] = pair
            && !slerp.nanos.is_empty()
            && !nlerp.nanos.is_empty()
        {
            let joints = slerp.joints as f64;
            let (s, n) = (median(&slerp.nanos) / joints, median(&nlerp.nanos) / joints);
            println!("{:<18} {:>6} {s:>14.1} {n:>14.1} {:>12.2}", slerp.character, slerp.joints, n / s);
        }
    }
}
