//! The character layer on the built-in character and its controller: many
//! characters in parallel (bit-identical for 1 and 2 threads), random play
//! (proptest), crossfades interrupted without a pop, the `simulate` trace
//! contract and bad controller files. (No allocation per update: see
//! `tests/allocations.rs`, alone in its process.)

use crate::common::crowd::{controller, crowd, drive, model};
use nalgebra::Vector3;
use proptest::prelude::*;
use std::process::Command;
use std::sync::Arc;
use vkskin::character::{Character, Controller, ParameterValue};

#[test]
fn one_and_two_threads_give_the_same_bits() {
    let model = model();
    let mut one = crowd(&model, 100, 1);
    let mut two = crowd(&model, 100, 2);
    assert_eq!((one.threads(), two.threads()), (1, 2));
    for frame in 0..240 {
        drive(&mut one, frame);
        drive(&mut two, frame);
        let a = one.update(1.0 / 60.0).unwrap().to_vec();
        let b = two.update(1.0 / 60.0).unwrap().to_vec();
        assert_eq!(a, b, "frame {frame}: events");
        let each: Vec<_> = one.characters().iter().flat_map(|c| c.events().to_vec()).collect();
        assert_eq!(a, each, "frame {frame}: the system's events are its characters', in order");
        for (x, y) in one.characters().iter().zip(two.characters()) {
            let (px, py) = (x.pose(), y.pose());
            let bits = |m: &[vkskin::anim::BoneMatrix]| -> Vec<u32> {
                m.iter().flat_map(|b| b.to_matrix().iter().map(|v| v.to_bits()).collect::<Vec<_>>()).collect()
            };
            assert_eq!(bits(px.palettes), bits(py.palettes), "frame {frame}: palettes");
            assert_eq!(x.version(), y.version());
            assert_eq!(x.state(), y.state());
        }
    }
    assert!(one.events().len() + one.characters().iter().filter(|c| c.state() == Some(2)).count() < 10_000);
}

/// Largest movement of any joint (relative to the root, so the clips' own
/// root travel and its wrap do not count) between two frames.
fn largest_step(previous: &[Vector3<f32>], character: &Character) -> (f32, Vec<Vector3<f32>>) {
    let world = character.output().world();
    let root = world[0].column(3).xyz();
    let now: Vec<Vector3<f32>> = world.iter().map(|m| m.column(3).xyz() - root).collect();
    let step = previous.iter().zip(&now).map(|(a, b)| (a - b).norm()).fold(0.0, f32::max);
    (step, now)
}

/// Runs the built-in controller at 60 Hz; `script(frame, character)` sets
/// parameters before each update. Returns the largest joint step over
/// frames `from..to`.
fn largest_step_during(from: usize, to: usize, script: &dyn Fn(usize, &mut Character)) -> f32 {
    let model = model();
    let mut c = Character::new(model.rig.clone(), controller(&model)).unwrap();
    c.update(0.0).unwrap();
    let (_, mut previous) = largest_step(&[], &c);
    let mut worst = 0.0f32;
    for frame in 1..to {
        script(frame, &mut c);
        c.update(1.0 / 60.0).unwrap();
        let (step, now) = largest_step(&previous, &c);
        if frame >= from {
            worst = worst.max(step);
        }
        previous = now;
    }
    worst
}

/// Idle -> Locomotion (run) is interrupted half-way by a jump: the pose
/// moves no more per frame than in the uninterrupted crossfades.
#[test]
fn an_interrupted_crossfade_does_not_pop() {
    let run = |c: &mut Character| c.set_named("speed", ParameterValue::Float(3.4)).unwrap();
    let jump = |c: &mut Character| c.set_named("jump", ParameterValue::Trigger).unwrap();
    // Uninterrupted: Idle -> Locomotion; Locomotion -> Jump; Idle -> Jump.
    let to_run = largest_step_during(10, 40, &|f, c| {
        if f == 10 {
            run(c)
        }
    });
    let run_to_jump = largest_step_during(70, 100, &|f, c| {
        if f == 10 {
            run(c)
        }
        if f == 70 {
            jump(c)
        }
    });
    let idle_to_jump = largest_step_during(10, 40, &|f, c| {
        if f == 10 {
            jump(c)
        }
    });
    // Interrupted 9 frames (0.15 s) into the 0.3 s Idle -> Locomotion fade.
    let interrupted = largest_step_during(10, 40, &|f, c| {
        if f == 10 {
            run(c)
        }
        if f == 19 {
            jump(c)
        }
    });
    let bound = to_run.max(run_to_jump).max(idle_to_jump);
    eprintln!(
        "largest joint step per frame: idle->run {to_run:.4}, run->jump {run_to_jump:.4}, \
         idle->jump {idle_to_jump:.4}, interrupted {interrupted:.4} m"
    );
    assert!(
        interrupted <= bound * 1.02,
        "interrupted fade moves {interrupted} m in a frame, at most {bound} otherwise"
    );
}

#[derive(Debug, Clone)]
enum Op {
    Update(f32),
    Huge(f32),
    Speed(f32),
    Jump,
    Grounded(bool),
    Rate(f32),
    Seek(f64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0.0f32..0.1).prop_map(Op::Update),
        1 => (1.0f32..500.0).prop_map(Op::Huge),
        2 => (0.0f32..5.0).prop_map(Op::Speed),
        1 => Just(Op::Jump),
        1 => any::<bool>().prop_map(Op::Grounded),
        1 => (-2.0f32..2.0).prop_map(Op::Rate),
        1 => (-3.0f64..3.0).prop_map(Op::Seek),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Random play of the built-in controller: clip weights finite and
    /// summing to one, state weights moving no faster than the shortest
    /// crossfade allows (no pop when fades interrupt each other), and no
    /// update reporting an event more often than playback can cross it.
    #[test]
    fn random_play_keeps_its_invariants(ops in proptest::collection::vec(op(), 1..120)) {
        let model = model();
        let mut c = Character::new(model.rig.clone(), controller(&model)).unwrap();
        c.update(0.0).unwrap();
        let shortest_fade = 0.15f32;
        let shortest_cycle = 0.7f32;
        for op in ops {
            let before = c.state_weights().to_vec();
            let dt = match op {
                Op::Update(dt) | Op::Huge(dt) => dt,
                Op::Speed(s) => { c.set_named("speed", ParameterValue::Float(s)).unwrap(); 0.0 }
                Op::Jump => { c.set_named("jump", ParameterValue::Trigger).unwrap(); 0.0 }
                Op::Grounded(g) => { c.set_named("grounded", ParameterValue::Bool(g)).unwrap(); 0.0 }
                Op::Rate(r) => { c.set_rate(r); 0.0 }
                Op::Seek(t) => { c.seek(t); 0.0 }
            };
            c.update(dt).unwrap();
            let sum: f32 = c.clip_weights().iter().sum();
            prop_assert!(c.clip_weights().iter().all(|w| w.is_finite() && *w >= 0.0));
            prop_assert!((sum - 1.0).abs() < 1e-5, "clip weights sum to {}", sum);
            let states: f32 = c.state_weights().iter().sum();
            prop_assert!((states - 1.0).abs() < 1e-5, "state weights sum to {}", states);
            let played = (dt * c.rate()).abs();
            let allowed = 1.5 * played / shortest_fade + 1e-4;
            for (a, b) in before.iter().zip(c.state_weights()) {
                prop_assert!((a - b).abs() <= allowed, "state weight {} -> {} in {} s", a, b, played);
            }
            // Each clip's events at most once per cycle crossed (the player
            // replays at most 64 loops of a huge step).
            let loops = (played / shortest_cycle).min(64.0).ceil() as usize + 2;
            for clip in 0..model.clips.len() {
                let n = c.events().iter().filter(|e| e.clip as usize == clip).count();
                prop_assert!(n <= loops * model.clips[clip].events.len(), "clip {}: {} events in {} s", clip, n, played);
            }
            prop_assert!(c.pose().palettes.iter().all(|m| m.to_matrix().iter().all(|v| v.is_finite())));
        }
    }

    /// Through the character layer, a clip's events are exactly what its
    /// player crosses: forwards, backwards, across loops, over huge steps,
    /// and never on a seek.
    #[test]
    fn one_clip_fires_exactly_what_its_player_crosses(ops in proptest::collection::vec(op(), 1..80)) {
        let model = model();
        let walk = model.find_clip("Walk").unwrap();
        let controller = Arc::new(Controller::single_clip(&model, Some(walk), true).unwrap());
        let mut c = Character::new(model.rig.clone(), controller).unwrap();
        let mut player = vkskin::anim::ClipPlayer::new(model.clips[walk].duration);
        let events = &model.clips[walk].events;
        for op in ops {
            let dt = match op {
                Op::Update(dt) | Op::Huge(dt) => dt,
                Op::Rate(r) => { c.set_rate(r); player.set_speed(r); 0.0 }
                Op::Seek(t) => { c.seek(t); player.set_time(c.leaf_time(0) as f32); 0.0 }
                _ => 0.0,
            };
            c.update(dt).unwrap();
            let mut expected = Vec::new();
            player.advance(dt, events, |e| expected.push(e.name.clone()));
            let got: Vec<String> = c.events().iter().map(|e| c.event_name(e).to_string()).collect();
            prop_assert_eq!(got, expected);
            prop_assert!((c.leaf_time(0) - f64::from(player.time())).abs() < 1e-5);
        }
    }
}

fn vkskin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_vkskin"))
}

/// The acceptance run of the simulate trace: Idle -> Locomotion -> Jump ->
/// back, weights summing to one, transitions rising from 0 to 1, each
/// footstep once per cycle of the clip that carries it.
#[test]
fn simulate_trace_follows_the_contract() {
    let glb = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/default_character.glb");
    let out = vkskin()
        .args(["simulate", glb, "--json", "--fps", "60", "--duration", "7"])
        .args(["--set", "0:speed=0", "--set", "1:speed=1.2", "--set", "3:speed=3.5", "--set", "4.5:jump"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let frames: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(frames.len(), 421, "frames 0..=420");
    let mut states: Vec<String> = Vec::new();
    let mut progress: Option<(String, f64)> = None;
    let mut last_event: std::collections::HashMap<(String, String), f64> = Default::default();
    for (i, f) in frames.iter().enumerate() {
        assert_eq!(f["frame"].as_u64(), Some(i as u64));
        assert!((f["time"].as_f64().unwrap() - i as f64 / 60.0).abs() < 1e-9);
        let state = f["state"].as_str().unwrap().to_string();
        if states.last() != Some(&state) {
            states.push(state);
        }
        let weights = f["weights"].as_object().unwrap();
        let sum: f64 = weights.values().map(|w| w.as_f64().unwrap()).sum();
        assert!((sum - 1.0).abs() < 1e-5, "frame {i}: weights sum to {sum}");
        match &f["transition"] {
            serde_json::Value::Null => progress = None,
            t => {
                let (to, p) = (t["to"].as_str().unwrap().to_string(), t["progress"].as_f64().unwrap());
                assert!((0.0..1.0).contains(&p), "frame {i}: progress {p}");
                match &progress {
                    Some((prev_to, prev)) if *prev_to == to => {
                        assert!(p > *prev, "frame {i}: progress rises")
                    }
                    _ => assert_eq!(p, 0.0, "frame {i}: a transition starts at 0"),
                }
                progress = Some((to, p));
            }
        }
        for e in f["events"].as_array().unwrap() {
            let clip = e["clip"].as_str().unwrap().to_string();
            let name = e["name"].as_str().unwrap().to_string();
            let t = f["time"].as_f64().unwrap();
            if let Some(prev) = last_event.insert((clip.clone(), name.clone()), t)
                && name.starts_with("footstep")
            {
                // Once per cycle: Walk's is 1.1 s, Run's 0.7 s (a blend of
                // both lies in between).
                assert!(t - prev > 0.6, "{clip} {name} at {prev} and again at {t}");
            }
        }
    }
    assert_eq!(states, ["Idle", "Locomotion", "Jump", "Locomotion"]);
    // Running steadily from 3.6 s to 4.5 s: a footstep per half cycle of Run.
    let run_steps = frames[216..270]
        .iter()
        .flat_map(|f| f["events"].as_array().unwrap().clone())
        .filter(|e| e["clip"] == "Run" && e["name"].as_str().unwrap().starts_with("footstep"))
        .count();
    assert!((2..=3).contains(&run_steps), "{run_steps} footsteps in 0.9 s of running");
}

/// A bad controller file: one line on stderr naming the file and the
/// element, exit code 1, never a panic.
#[test]
fn bad_controller_files_fail_in_one_line() {
    let glb = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/default_character.glb");
    let dir = std::env::temp_dir().join(format!("vkskin-controllers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        ("syntax", "(states: [(name: \"A\" motion: Clip(clip: \"Walk\"))])", "syntax.ron:1:"),
        (
            "clip",
            "(states: [(name: \"A\", motion: Clip(clip: \"Sprint\"))])",
            "state 0 \"A\": motion: no clip \"Sprint\"",
        ),
        (
            "parameter",
            "(states: [(name: \"A\", motion: Clip(clip: \"Walk\")), (name: \"B\", motion: Clip(clip: \"Run\"))], \
             transitions: [(from: \"A\", to: \"B\", when: [\"fast > 1\"])])",
            "unknown parameter \"fast\"",
        ),
        (
            "type",
            "(parameters: [Bool(name: \"fast\")], states: [(name: \"A\", motion: Clip(clip: \"Walk\")), \
             (name: \"B\", motion: Clip(clip: \"Run\"))], transitions: [(from: \"A\", to: \"B\", when: [\"fast > 1\"])])",
            "bool parameter \"fast\" compares with true or false",
        ),
        (
            "state",
            "(states: [(name: \"A\", motion: Clip(clip: \"Walk\"))], transitions: [(from: \"A\", to: \"Sprint\")])",
            "transition 0 (\"A\" -> \"Sprint\"): no state \"Sprint\"",
        ),
    ];
    for (name, text, expected) in cases {
        let path = dir.join(format!("{name}.ron"));
        std::fs::write(&path, text).unwrap();
        let out = vkskin().args(["simulate", glb, "--controller"]).arg(&path).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{name}: one line: {stderr}");
        assert!(
            stderr.contains(&path.display().to_string()) && stderr.contains(expected),
            "{name}: {stderr}"
        );
        assert!(!stderr.contains("internal error"), "{name}: {stderr}");
    }
    // A bad --set names the argument.
    let out = vkskin().args(["simulate", glb, "--set", "1:sped=2"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("--set 1:sped=2: unknown parameter \"sped\""), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `render --controller` simulates the controller frame by frame on the GPU
/// path, validation on.
#[test]
fn render_with_a_controller() {
    if crate::common::context().is_none() {
        return;
    }
    let root = env!("CARGO_MANIFEST_DIR");
    let out_file = std::env::temp_dir().join(format!("vkskin-controller-{}.png", std::process::id()));
    let out = vkskin()
        .args(["render", &format!("{root}/assets/default_character.glb")])
        .args(["--controller", &format!("{root}/assets/default_character.ron")])
        .args([
            "--set",
            "0:speed=2",
            "--frames",
            "4",
            "--time",
            "1",
            "--size",
            "96x64",
            "--validation",
            "--out",
        ])
        .arg(&out_file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::metadata(&out_file).map(|m| m.len() > 100).unwrap_or(false));
    let _ = std::fs::remove_file(&out_file);
}

/// Phase sync keeps a 50 % walk/run blend's planted feet from sliding: on
/// the built-in character (both gaits strike at the same phase) and on Fox.
#[test]
fn phase_sync_cuts_foot_sliding() {
    use vkskin::character::foot_slide::{FootSlideSetup, measure};
    let mut cases = vec![(model(), "Walk", "Run", "Foot.L", "Foot.R")];
    if let Some(fox) = crate::common::shared_model("Fox/Fox.glb") {
        cases.push((fox, "Walk", "Run", "b_LeftFoot01_017", "b_RightFoot01_021"));
    }
    for (model, walk, run, left, right) in cases {
        let names = model.skeleton.names();
        let skin = |j: usize| model.skins.iter().any(|s| s.joints.contains(&(j as u32)));
        let foot = |name: &str| (0..names.len()).find(|&j| skin(j) && names[j] == name).expect("foot");
        let setup = |blend: f32, sync: bool| FootSlideSetup {
            a: model.find_clip(walk).unwrap(),
            b: model.find_clip(run).unwrap(),
            blend,
            sync,
            feet: [foot(left), foot(right)],
            seconds: 6.0,
        };
        let slide = |blend, sync| measure(&model.rig, &setup(blend, sync)).unwrap().share_of_stride;
        let (free, synced, walk_only) = (slide(0.5, false), slide(0.5, true), slide(0.0, false));
        eprintln!("{}: walk alone {walk_only:.3}, 50 % {free:.3} unsynced, {synced:.3} synced", model.file);
        assert!(synced < free * 0.5, "{}: sync does not help: {synced} vs {free}", model.file);
    }
}
