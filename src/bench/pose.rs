//! Pose evaluation cost per character, through the character layer (the
//! chain every command uses): advance two clips, sample both, blend them,
//! local to model, palettes. Reported as nanoseconds per joint, with nlerp
//! key sampling and compressed clips (`Rig::compress_clips`, sampled from
//! their bit streams) as ratios against glTF-exact slerp measured in the
//! same run.
//!
//! The same three ways are then timed once more taking turns (see
//! `vkskin::cpu_time`): on a loaded machine that table's ratios are the ones
//! to trust.
//!
//! Last, the end of an evaluation for eight characters of one rig: world
//! matrices and palettes of each pose computed alone, against one pose
//! batch for the eight (`anim::hierarchy::batch`, what a crowd's
//! `AnimationSystem` runs), taking turns.
//!
//! Run: `cargo bench --bench pose` (needs ../shared/assets).

use criterion::{Criterion, Throughput};
use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use vkskin::anim::RotationBlend;
use vkskin::asset::{LoadOptions, Model};
use vkskin::character::{Character, Controller};
use vkskin::cpu_time;

/// Characters and the two clips blended for each.
const CASES: &[(&str, &str, &str)] = &[
    ("Fox/Fox.glb", "Walk", "Run"),
    ("Wizard/Wizard.glb", "Walk", "Run"),
    ("RobotExpressive/RobotExpressive.glb", "Walking", "Running"),
];

/// One character of `model` playing clips `a` and `b` at equal weight
/// (both sampled every frame, then blended), through the character layer.
fn character(model: &Model, a: &str, b: &str) -> Character {
    let text = format!(
        "(states: [(name: \"Both\", motion: Blend(inputs: [\
         (motion: Clip(clip: \"{a}\"), weight: 1), (motion: Clip(clip: \"{b}\"), weight: 1)]))])"
    );
    let controller = Controller::from_text(&text, model).expect("controller");
    Character::new(model.rig.clone(), Arc::new(controller)).expect("character")
}

fn main() {
    let assets = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/assets");
    if !assets.is_dir() {
        eprintln!("{}: not found; the pose benchmark needs the shared models", assets.display());
        return;
    }
    let mut criterion = Criterion::default().configure_from_args();
    let samples: RefCell<Vec<Samples>> = RefCell::new(Vec::new());
    let mut turns = Vec::new();
    let mut batches = Vec::new();
    for (file, a, b) in CASES {
        let model = vkskin::asset::load(&assets.join(file)).expect("load");
        let options = LoadOptions { compressed_clips: true, ..LoadOptions::default() };
        let compressed = vkskin::asset::load_with(&assets.join(file), &options).expect("load");
        let name = file.split('/').next().unwrap().to_string();
        let joints = model.skeleton.len();
        let mut group = criterion.benchmark_group(format!("pose/{name}"));
        group.throughput(Throughput::Elements(joints as u64));
        let modes = [
            ("slerp", character(&model, a, b), RotationBlend::Slerp),
            ("nlerp", character(&model, a, b), RotationBlend::Nlerp),
            ("compressed", character(&compressed, a, b), RotationBlend::Nlerp),
        ];
        for (mode, mut character, blend) in modes {
            let slot = {
                let mut s = samples.borrow_mut();
                s.push(Samples { character: name.clone(), joints, nanos: Vec::new() });
                s.len() - 1
            };
            character.set_rotation_sampling(blend);
            group.bench_function(mode, |bencher| {
                bencher.iter_custom(|iters| {
                    // Advance like a 60 Hz player so cursors see forward playback.
                    let start = Instant::now();
                    for _ in 0..iters {
                        character.update(1.0 / 60.0).expect("update");
                    }
                    let elapsed = start.elapsed();
                    samples.borrow_mut()[slot].nanos.push(elapsed.as_nanos() as f64 / iters.max(1) as f64);
                    elapsed.max(Duration::from_nanos(1))
                })
            });
        }
        group.finish();
        let mut characters = [
            (character(&model, a, b), RotationBlend::Slerp),
            (character(&model, a, b), RotationBlend::Nlerp),
            (character(&compressed, a, b), RotationBlend::Nlerp),
        ]
        .map(|(mut character, blend)| {
            character.set_rotation_sampling(blend);
            character
        });
        let ns = cpu_time::median_ns_taking_turns(3, 201, 200, |w| {
            characters[w].update(1.0 / 60.0).expect("update")
        });
        turns.push((name.clone(), joints, [ns[0], ns[1], ns[2]]));
        batches.push((name, joints, alone_and_batched(&model, a, b)));
    }
    criterion.final_summary();
    print_table(
        "pose evaluation (one character: 2 clips advanced, sampled, blended, local->model, palettes)",
        &criterion_rows(&samples.into_inner()),
    );
    print_table(
        "the same, taking turns (201 rounds of 200 updates each, thread CPU time, median round)",
        &turns,
    );
    println!("\nworld matrices and palettes of 8 poses of one rig, taking turns (ns per pose)");
    println!("{:<18} {:>6} {:>10} {:>10} {:>15}", "character", "joints", "alone", "batched", "batched/alone");
    for (name, joints, [alone, batched]) in batches {
        println!("{name:<18} {joints:>6} {alone:>10.0} {batched:>10.0} {:>15.2}", batched / alone);
    }
}

/// Median ns per pose of eight poses' world matrices and palettes, each
/// pose alone and the eight as one batch. The poses: the blend of `a` and
/// `b` at eight times.
fn alone_and_batched(model: &Model, a: &str, b: &str) -> [f64; 2] {
    use vkskin::anim::hierarchy::batch::{BatchScratch, BatchedPose, LANES, model_and_palettes};
    use vkskin::anim::{BoneMatrix, skeleton_to_model_in_place};
    let rig = &model.rig;
    let locals: Vec<Vec<_>> = (0..LANES)
        .map(|k| {
            let mut c = character(model, a, b);
            c.update(0.1 + k as f32 * 0.13).expect("update");
            c.local_pose().locals.clone()
        })
        .collect();
    let output = || {
        (
            vec![nalgebra::Matrix4::identity(); rig.skeleton.len()],
            vec![BoneMatrix::IDENTITY; rig.palette_len()],
        )
    };
    let mut outputs: Vec<_> = (0..LANES).map(|_| output()).collect();
    let mut scratch = BatchScratch::default();
    let ns = cpu_time::median_ns_taking_turns(2, 101, 100, |w| {
        if w == 0 {
            for ((world, palettes), locals) in outputs.iter_mut().zip(&locals) {
                skeleton_to_model_in_place(&rig.skeleton, locals, &nalgebra::Matrix4::identity(), world)
                    .expect("world");
                rig.write_palettes(world, palettes).expect("palettes");
            }
        } else {
            // On the stack, as the system builds it: no allocation timed.
            let mut each = outputs.iter_mut().zip(&locals);
            let mut poses: [BatchedPose; LANES] = std::array::from_fn(|_| {
                let ((world, palettes), locals) = each.next().expect("eight poses");
                BatchedPose { locals, world, world_joints: None, palettes }
            });
            model_and_palettes(rig, &mut poses, &mut scratch).expect("batch");
        }
    });
    [ns[0] / LANES as f64, ns[1] / LANES as f64]
}

/// Per-iteration nanoseconds of every criterion sample of one case.
struct Samples {
    character: String,
    joints: usize,
    nanos: Vec<f64>,
}

/// One table row: character, joints, and ns per update with slerp, nlerp
/// and compressed clips.
type Row = (String, usize, [f64; 3]);

/// Median ns per update of each character's three criterion cases.
fn criterion_rows(samples: &[Samples]) -> Vec<Row> {
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    samples
        .chunks(3)
        .filter_map(|triple| match triple {
            // Cases filtered out on the command line have no samples.
            [slerp, nlerp, compressed] if !slerp.nanos.is_empty() => Some((
                slerp.character.clone(),
                slerp.joints,
                [slerp, nlerp, compressed].map(|s| median(&s.nanos)),
            )),
            _ => None,
        })
        .collect()
}

/// `rows` in ns per joint, nlerp and compressed relative to slerp and
/// compressed relative to nlerp, under `title`.
fn print_table(title: &str, rows: &[Row]) {
    println!("\n{title}");
    println!(
        "{:<18} {:>6} {:>14} {:>14} {:>12} {:>19} {:>17} {:>17}",
        "character",
        "joints",
        "slerp ns/joint",
        "nlerp ns/joint",
        "nlerp/slerp",
        "compressed ns/joint",
        "compressed/slerp",
        "compressed/nlerp"
    );
    for (name, joints, ns) in rows {
        let [s, n, c] = ns.map(|v| v / *joints as f64);
        println!(
            "{name:<18} {joints:>6} {s:>14.1} {n:>14.1} {:>12.2} {c:>19.1} {:>17.2} {:>17.2}",
            n / s,
            c / s,
            c / n
        );
    }
}
