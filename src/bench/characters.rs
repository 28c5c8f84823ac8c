//! `AnimationSystem::update` for crowds of the built-in character (22
//! joints, its own controller: idle, walk/run blend space, jumps): 1, 100
//! and 10,000 characters on 1 and 2 threads. Reported as nanoseconds per
//! joint per character, the 2-thread speed-up measured in the same run, and
//! heap allocations per update (a counting allocator; expected 0).
//!
//! Run: `cargo bench --bench characters` (no shared files needed).

use criterion::{Criterion, Throughput};
use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};
use vkskin::asset::controller::DEFAULT_CONTROLLER;
use vkskin::asset::{Model, load_default_character};
use vkskin::character::{AnimationSystem, CharacterId, Controller, ParameterValue};

#[path = "allocations.rs"]
mod allocations;

use allocations::{CountingAllocator, count_allocations};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// Crowd sizes.
const CROWDS: [usize; 3] = [1, 100, 10_000];
/// Thread counts.
const THREADS: [usize; 2] = [1, 2];

/// `n` characters, walking and running at staggered speeds and phases.
fn crowd(model: &Arc<Model>, controller: &Arc<Controller>, n: usize, threads: usize) -> AnimationSystem {
    let mut system = AnimationSystem::with_threads(threads).expect("threads");
    for i in 0..n {
        let id = system.add(model.rig.clone(), controller.clone()).expect("character");
        let c = system.character_mut(id);
        // 0 to 4 m/s: idle, walk, walk/run blends, run.
        c.set_named("speed", ParameterValue::Float((i % 9) as f32 * 0.5)).expect("speed");
    }
    // Spread phases and let every transition settle.
    for frame in 0..120 {
        for i in (frame % 7..n).step_by(7) {
            system.character_mut(CharacterId(i)).seek(i as f64 * 0.37);
        }
        system.update(1.0 / 60.0).expect("update");
    }
    system
}

/// Jumps fired while measuring, so the state machine works too.
fn fire_jumps(system: &mut AnimationSystem, frame: usize) {
    let n = system.len();
    for i in (frame % 211..n).step_by(211) {
        let _ = system.character_mut(CharacterId(i)).set_named("jump", ParameterValue::Trigger);
    }
}

/// Per-update nanoseconds of every criterion sample of one case.
struct Samples {
    characters: usize,
    threads: usize,
    nanos: Vec<f64>,
    allocations_per_update: f64,
}

fn main() {
    let model = Arc::new(load_default_character().expect("built-in character"));
    let controller = Arc::new(Controller::from_text(DEFAULT_CONTROLLER, &model).expect("controller"));
    let joints = model.skeleton.len();
    let mut criterion = Criterion::default().configure_from_args();
    let samples: RefCell<Vec<Samples>> = RefCell::new(Vec::new());
    for &n in &CROWDS {
        let mut group = criterion.benchmark_group(format!("update/{n}"));
        group.throughput(Throughput::Elements((n * joints) as u64));
        if n >= 10_000 {
            group.sample_size(10).measurement_time(Duration::from_secs(8));
        }
        for &threads in &THREADS {
            let mut system = crowd(&model, &controller, n, threads);
            let slot = {
                let mut s = samples.borrow_mut();
                s.push(Samples {
                    characters: n,
                    threads,
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
                        fire_jumps(&mut system, frame);
                        system.update(1.0 / 60.0).expect("update");
                        frame += 1;
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
                    fire_jumps(&mut system, frame);
                    system.update(1.0 / 60.0).expect("update");
                    frame += 1;
                }
            });
            samples.borrow_mut()[slot].allocations_per_update = allocations as f64 / updates as f64;
        }
        group.finish();
    }
    criterion.final_summary();
    print_report(&samples.into_inner(), joints);
}

/// Median ns per joint per character of each case, and 2 threads against 1.
fn print_report(samples: &[Samples], joints: usize) {
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    println!("\nAnimationSystem::update, built-in character ({joints} joints, its controller)");
    println!(
        "{:>10} {:>8} {:>12} {:>18} {:>12} {:>14}",
        "characters", "threads", "µs/update", "ns/joint/char", "vs 1 thread", "allocs/update"
    );
    for s in samples.iter().filter(|s| !s.nanos.is_empty()) {
        let ns = median(&s.nanos);
        let one = samples
            .iter()
            .find(|o| o.characters == s.characters && o.threads == 1 && !o.nanos.is_empty())
            .map_or(f64::NAN, |o| median(&o.nanos));
        println!(
            "{:>10} {:>8} {:>12.1} {:>18.1} {:>11.2}x {:>14}",
            s.characters,
            s.threads,
            ns / 1000.0,
            ns / (s.characters * joints) as f64,
            one / ns,
            s.allocations_per_update
        );
    }
}
