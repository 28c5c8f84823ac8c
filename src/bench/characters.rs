//! A crowd's update (`Crowd`, as `render`, `view`, `bench --characters`
//! and `bench --cpu-only` play it: no local poses kept, only the world
//! matrices drawing reads) for the built-in character (24 joints, its own
//! controller: idle, walk/run blend space, jumps): 1, 100 and 10,000
//! characters on 1 and 2 threads, and 10,000 at the reduced evaluation
//! rates (every 2nd and 4th update, staggered). Reported as
//! nanoseconds per joint per character, the 2-thread speed-up measured in
//! the same run, heap allocations per update (a counting allocator;
//! expected 0), and the heap bytes each of 10,000 characters keeps (with
//! the exact clips and with compressed ones). Last, 10,000 characters on
//! a slerp rig (the default) and on an nlerp one (`--nlerp`) take turns on
//! one thread, timed by its CPU time (`vkskin::cpu_time`), for their ratio.
//!
//! Run: `cargo bench --bench characters` (no shared files needed).

use criterion::{Criterion, Throughput};
use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};
use vkskin::anim::RotationBlend;
use vkskin::anim::lanes8::Simd;
use vkskin::asset::{LoadOptions, Model, load_default_character, load_default_character_with};
use vkskin::character::controller::DEFAULT_CONTROLLER;
use vkskin::character::{Controller, Crowd, EvaluationRate, ParameterValue};
use vkskin::cpu_time;

use vkskin::testing::allocations::{CountingAllocator, count_allocations, count_bytes};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// Crowd sizes.
const CROWDS: [usize; 3] = [1, 100, 10_000];
/// Thread counts.
const THREADS: [usize; 2] = [1, 2];
/// Reduced evaluation rates measured on the largest crowd (one thread and two).
const LOD_RATES: [EvaluationRate; 2] = [EvaluationRate::Every2nd, EvaluationRate::Every4th];

/// A crowd of `n` characters (each at its own phase, see `Crowd`),
/// walking and running at staggered speeds.
fn make_crowd(
    model: &Arc<Model>,
    controller: &Arc<Controller>,
    n: usize,
    threads: usize,
    rate: EvaluationRate,
) -> Crowd {
    let mut crowd = Crowd::new(model.rig.clone(), controller.clone(), n, 1.0, 60.0, threads).expect("crowd");
    for i in 0..n {
        let c = crowd.character_mut(i);
        c.set_evaluation_rate(rate);
        // 0 to 4 m/s: idle, walk, walk/run blends, run.
        c.set_named("speed", ParameterValue::Float((i % 9) as f32 * 0.5)).expect("speed");
    }
    // Let every transition settle.
    for _ in 0..120 {
        crowd.update(1.0 / 60.0).expect("update");
    }
    crowd
}

/// One measured update at 60 Hz, `frame` counted on: jumps fired first,
/// so the state machine works too.
fn step(crowd: &mut Crowd, frame: &mut usize) {
    for i in (*frame % 211..crowd.len()).step_by(211) {
        let _ = crowd.character_mut(i).set_named("jump", ParameterValue::Trigger);
    }
    crowd.update(1.0 / 60.0).expect("update");
    *frame += 1;
}

/// Per-update nanoseconds of every criterion sample of one case.
struct Samples {
    characters: usize,
    threads: usize,
    rate: EvaluationRate,
    nanos: Vec<f64>,
    allocations_per_update: f64,
}

fn main() {
    let model = Arc::new(load_default_character().expect("built-in character"));
    let controller = Arc::new(Controller::from_text(DEFAULT_CONTROLLER, &model).expect("controller"));
    let joints = model.skeleton.len();
    let mut criterion = Criterion::default().configure_from_args();
    let samples: RefCell<Vec<Samples>> = RefCell::new(Vec::new());
    let mut cases: Vec<(usize, usize, EvaluationRate)> = Vec::new();
    for &n in &CROWDS {
        for &threads in &THREADS {
            cases.push((n, threads, EvaluationRate::EveryFrame));
        }
    }
    for &rate in &LOD_RATES {
        for &threads in &THREADS {
            cases.push((10_000, threads, rate));
        }
    }
    for (n, threads, rate) in cases {
        let mut group = criterion.benchmark_group(format!("update/{n}/every-{}", rate.period()));
        group.throughput(Throughput::Elements((n * joints) as u64));
        if n >= 10_000 {
            group.sample_size(10).measurement_time(Duration::from_secs(8));
        }
        let mut crowd = make_crowd(&model, &controller, n, threads, rate);
        let slot = {
            let mut s = samples.borrow_mut();
            s.push(Samples {
                characters: n,
                threads,
                rate,
                nanos: Vec::new(),
                allocations_per_update: f64::NAN,
            });
            s.len() - 1
        };
        let mut frame = 0usize;
        group.bench_function(format!("{threads}-thread"), |bencher| {
            bencher.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    step(&mut crowd, &mut frame);
                }
                let elapsed = start.elapsed();
                samples.borrow_mut()[slot].nanos.push(elapsed.as_nanos() as f64 / iters.max(1) as f64);
                elapsed.max(Duration::from_nanos(1))
            })
        });
        // Allocations per update, counted apart from the timing.
        let updates = if n >= 10_000 { 20 } else { 200 };
        let ((), allocations) = count_allocations(|| {
            for _ in 0..updates {
                step(&mut crowd, &mut frame);
            }
        });
        samples.borrow_mut()[slot].allocations_per_update = allocations as f64 / updates as f64;
        group.finish();
    }
    criterion.final_summary();
    print_report(&samples.into_inner(), joints);
    // Slerp against nlerp, taking turns.
    let n = 10_000;
    let options = LoadOptions { rotation_blend: RotationBlend::Nlerp, ..LoadOptions::default() };
    let nlerp = Arc::new(load_default_character_with(&options).expect("built-in character"));
    let mut crowds = [&model, &nlerp].map(|m| make_crowd(m, &controller, n, 1, EvaluationRate::EveryFrame));
    let mut frame = 0usize;
    let ns = cpu_time::median_ns_taking_turns(2, 15, 4, |w| {
        step(&mut crowds[w], &mut frame);
    });
    let per_joint = |ns: f64| ns / (n * joints) as f64;
    println!(
        "{n} characters, 1 thread, taking turns: slerp {:.1} ns/joint, nlerp {:.1} ns/joint ({:.2}x)",
        per_joint(ns[0]),
        per_joint(ns[1]),
        ns[1] / ns[0]
    );
    // The nlerp crowd with its AVX2 kernels (sampling, blend, local to
    // model, palette) against the portable build's code, and with the
    // kernels compiled with AVX-512's registers against AVX2's alone,
    // taking turns (the same bits every way).
    let comparisons = [
        (Simd::avx2_available(), [(Simd::Avx2, "AVX2"), (Simd::Portable, "portable")]),
        (Simd::avx512_available(), [(Simd::Avx512, "AVX-512 registers"), (Simd::Avx2, "AVX2")]),
    ];
    for (_, [(a, a_name), (b, b_name)]) in comparisons.into_iter().filter(|(available, _)| *available) {
        let ns = cpu_time::median_ns_taking_turns(2, 15, 4, |w| {
            Simd::set_override(Some([a, b][w]));
            step(&mut crowds[1], &mut frame);
        });
        Simd::set_override(None);
        println!(
            "{n} characters, 1 thread, nlerp, taking turns: {a_name} {:.1} ns/joint, {b_name} {:.1} ns/joint ({:.2}x)",
            per_joint(ns[0]),
            per_joint(ns[1]),
            ns[0] / ns[1]
        );
    }
    drop(crowds);
    // What each character keeps on the heap (its rig is shared).
    let (crowd, bytes) = count_bytes(|| make_crowd(&model, &controller, n, 1, EvaluationRate::EveryFrame));
    println!(
        "heap bytes per character, {n} built-in characters (after 120 updates): {:.0}",
        bytes as f64 / n as f64
    );
    drop(crowd);
    // The same with compressed clips (their cursors cache decoded keys).
    let options = LoadOptions { compressed_clips: true, ..LoadOptions::default() };
    let compressed = Arc::new(load_default_character_with(&options).expect("built-in character"));
    let (crowd, bytes) =
        count_bytes(|| make_crowd(&compressed, &controller, n, 1, EvaluationRate::EveryFrame));
    println!(
        "heap bytes per character, {n} built-in characters, compressed clips (after 120 updates): {:.0}",
        bytes as f64 / n as f64
    );
    drop(crowd);
}

/// Median ns per joint per character of each case, and 2 threads against 1.
fn print_report(samples: &[Samples], joints: usize) {
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    println!("\nA crowd's update (Crowd::update), built-in character ({joints} joints, its controller)");
    println!(
        "{:>10} {:>6} {:>8} {:>12} {:>18} {:>12} {:>14}",
        "characters", "every", "threads", "µs/update", "ns/joint/char", "vs 1 thread", "allocs/update"
    );
    for s in samples.iter().filter(|s| !s.nanos.is_empty()) {
        let ns = median(&s.nanos);
        let one = samples
            .iter()
            .find(|o| {
                o.characters == s.characters && o.rate == s.rate && o.threads == 1 && !o.nanos.is_empty()
            })
            .map_or(f64::NAN, |o| median(&o.nanos));
        println!(
            "{:>10} {:>6} {:>8} {:>12.1} {:>18.1} {:>11.2}x {:>14}",
            s.characters,
            s.rate.period(),
            s.threads,
            ns / 1000.0,
            ns / (s.characters * joints) as f64,
            one / ns,
            s.allocations_per_update
        );
    }
}
