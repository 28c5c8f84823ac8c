//! The built-in default character: the committed GLB is what the generator
//! makes, it imports cleanly, its clips move the way a walking, running
//! and jumping person does, and its face (a jaw joint and morph targets)
//! moves with the Talk clip.

use crate::common::character_at;
use vkskin::asset::{Model, default_character_glb, load_default_character};
use vkskin::character::Character;

fn model() -> Model {
    let model = load_default_character().expect("the committed default character imports");
    assert!(model.warnings.is_empty(), "warnings: {:?}", model.warnings);
    model
}

fn clip(model: &Model, name: &str) -> usize {
    model.find_clip(name).unwrap_or_else(|| panic!("no clip {name}"))
}

fn joint(model: &Model, name: &str) -> usize {
    model.skeleton.find(name).unwrap_or_else(|| panic!("no joint {name}"))
}

/// World position of `joint` after sampling `clip` at `time`.
fn joint_at(model: &Model, clip: usize, time: f32, joint: usize) -> [f32; 3] {
    let m = character_at(model, Some(clip), f64::from(time)).output().world()[joint];
    [m[(0, 3)], m[(1, 3)], m[(2, 3)]]
}

/// Every drawn vertex in scene space for the character's current pose.
fn vertices(model: &Model, character: &Character) -> Vec<[f32; 3]> {
    let mut all = Vec::new();
    let pose = character.pose();
    for instance in &model.instances {
        for prim in &model.meshes[instance.mesh].primitives {
            let mut out = vec![[0.0f32; 3]; prim.vertex_count()];
            pose.skin_primitive(instance, prim, &mut out, None).unwrap();
            all.extend(out);
        }
    }
    all
}

#[test]
fn committed_file_is_a_fresh_generation() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/default_character.glb");
    let committed = std::fs::read(path).unwrap_or_default();
    let fresh = default_character_glb();
    assert!(
        committed == fresh,
        "assets/default_character.glb ({} bytes) differs from a fresh generation ({} bytes): \
         run `cargo run --release -- generate-default` and commit assets/default_character.glb",
        committed.len(),
        fresh.len()
    );
    // Deterministic: a second generation gives the same bytes.
    assert!(fresh == default_character_glb());
}

#[test]
fn imports_with_clips_skin_and_morph_targets() {
    let model = model();
    // The states' clips keep their first four indices; the layers' follow.
    for (index, name) in ["Idle", "Walk", "Run", "Jump", "Wave", "Breathing", "Talk"].iter().enumerate() {
        assert_eq!(clip(&model, name), index, "{name}");
    }
    assert_eq!(model.clips.len(), 7);
    // 22 body joints and the jaw (after the head: depth first, node and
    // joint indices agree), then the body's node.
    assert_eq!(model.skeleton.len(), 24);
    assert_eq!(model.skins[0].joints.len(), 23);
    let jaw = joint(&model, "Jaw");
    assert_eq!(jaw, 6);
    assert_eq!(model.skeleton.parents()[jaw] as usize, joint(&model, "Head"));
    assert_eq!(model.skins.len(), 1);
    assert_eq!(model.meshes.len(), 1);
    assert_eq!(model.meshes[0].target_names, ["Breathe", "Blink", "Smile", "MouthOpen"]);
    let idle = &model.clips[clip(&model, "Idle")];
    assert_eq!(idle.morph_tracks.len(), 1, "Idle animates the body's morph weights");
    for name in ["Walk", "Run", "Jump", "Wave"] {
        assert!(model.clips[clip(&model, name)].morph_tracks.is_empty(), "{name} animates no morph weight");
    }
    let vertices: usize = model.meshes[0].primitives.iter().map(|p| p.vertex_count()).sum();
    assert!((2000..=6000).contains(&vertices), "{vertices} vertices");
}

#[test]
fn skin_weights_sum_to_one_over_at_most_two_joints() {
    let model = model();
    for prim in &model.meshes[0].primitives {
        let inf = prim.influences.as_ref().expect("skinned");
        for w in inf.weights.chunks(inf.per_vertex) {
            assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-5, "{w:?}");
            assert!(w.iter().filter(|&&x| x > 0.0).count() <= 2, "{w:?}");
        }
    }
}

#[test]
fn rest_mesh_stands_on_the_ground_at_human_height() {
    let model = model();
    let v = vertices(&model, &character_at(&model, None, 0.0));
    let lo = v.iter().map(|p| p[1]).fold(f32::INFINITY, f32::min);
    let hi = v.iter().map(|p| p[1]).fold(f32::NEG_INFINITY, f32::max);
    assert!(lo.abs() < 0.01, "lowest vertex at y = {lo}");
    assert!((1.6..=2.0).contains(&(hi - lo)), "height {}", hi - lo);
    // Facing +Z: the nose (the front-most point of the head) is in front of the neck.
    let head = v.iter().filter(|p| p[1] > 1.6).map(|p| p[2]).fold(f32::NEG_INFINITY, f32::max);
    assert!(head > 0.1, "{head}");
}

#[test]
fn every_clip_gives_finite_vertices_above_the_ground() {
    let model = model();
    for (c, clip) in model.clips.iter().enumerate() {
        let mut character = character_at(&model, Some(c), 0.0);
        let steps = (clip.duration * 30.0).ceil() as usize;
        for i in 0..=steps {
            let t = clip.duration * i as f32 / steps as f32;
            crate::common::seek(&mut character, f64::from(t));
            let v = vertices(&model, &character);
            assert!(v.iter().flatten().all(|x| x.is_finite()), "{:?} at {t}", clip.name);
            let lo = v.iter().map(|p| p[1]).fold(f32::INFINITY, f32::min);
            assert!(lo > -0.03, "{:?} at {t}: a vertex at y = {lo} is under the ground", clip.name);
        }
    }
}

#[test]
fn footsteps_fire_when_the_foot_is_down() {
    let model = model();
    for name in ["Walk", "Run"] {
        let c = clip(&model, name);
        let clip = model.clips[c].clone();
        let names: Vec<&str> = clip.events.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names.iter().filter(|n| **n == "footstep_left").count(), 1, "{name}: {names:?}");
        assert_eq!(names.iter().filter(|n| **n == "footstep_right").count(), 1, "{name}: {names:?}");
        for event in &clip.events {
            let foot = joint(&model, if event.name == "footstep_left" { "Foot.L" } else { "Foot.R" });
            let lowest = (0..200)
                .map(|i| joint_at(&model, c, clip.duration * i as f32 / 200.0, foot)[1])
                .fold(f32::INFINITY, f32::min);
            let y = joint_at(&model, c, event.time, foot)[1];
            assert!(
                y - lowest < 0.02,
                "{name}: {} at {} s: foot at y = {y}, lowest {lowest}",
                event.name,
                event.time
            );
        }
        // Left and right alternate half a cycle apart.
        let gap = (clip.events[1].time - clip.events[0].time).abs();
        assert!((gap - clip.duration * 0.5).abs() < 0.02, "{name}: {gap}");
    }
}

#[test]
fn walk_and_run_move_the_root_forward_and_loop() {
    let model = model();
    let root = joint(&model, "Root");
    let mut speeds = Vec::new();
    for name in ["Walk", "Run"] {
        let c = clip(&model, name);
        let d = model.clips[c].duration;
        let start = joint_at(&model, c, 0.0, root);
        let end = joint_at(&model, c, d - 1e-4, root);
        let speed = (end[2] - start[2]) / d;
        assert!(speed > 1.0, "{name}: root moves {speed} m/s along +Z");
        assert!((end[0] - start[0]).abs() < 1e-3);
        speeds.push(speed);

        // Seamless loop: the last key's pose (root translation aside) is the first one's.
        let first = character_at(&model, Some(c), 0.0).local_pose().locals.clone();
        let last = character_at(&model, Some(c), f64::from(d - 1e-5)).local_pose().locals.clone();
        for (j, (a, b)) in first.iter().zip(&last).enumerate().filter(|&(j, _)| j != root) {
            assert!(a.rotation.angle_to(&b.rotation) < 1e-3, "{name}: joint {j}");
            assert!((a.translation - b.translation).norm() < 1e-3, "{name}: joint {j}");
        }
    }
    assert!(speeds[1] > speeds[0] * 1.5, "Run is faster than Walk: {speeds:?}");
}

#[test]
fn jump_leaves_the_ground() {
    let model = model();
    let c = clip(&model, "Jump");
    let foot = joint(&model, "Foot.L");
    let d = model.clips[c].duration;
    let heights: Vec<f32> = (0..=60).map(|i| joint_at(&model, c, d * i as f32 / 60.0, foot)[1]).collect();
    let (lo, hi) = heights.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), &y| (l.min(y), h.max(y)));
    assert!(hi - lo > 0.2, "the feet rise {} m", hi - lo);
    assert!((heights[0] - heights[60]).abs() < 1e-3, "Jump starts and ends standing");
}

/// Each vertex's offset in morph target `target`, with its rest position.
fn target_offsets(model: &Model, target: usize) -> Vec<([f32; 3], [f32; 3])> {
    let mut out = Vec::new();
    for prim in &model.meshes[0].primitives {
        let deltas = prim.morph_targets[target].positions.as_ref().expect("position deltas");
        let offsets = deltas.to_dense(prim.positions.len());
        out.extend(prim.positions.iter().copied().zip(offsets));
    }
    out
}

#[test]
fn face_targets_move_only_the_face_and_breathe_only_the_torso() {
    let model = model();
    let names = &model.meshes[0].target_names;
    for (name, lowest, least) in [("Blink", 1.69, 0.01), ("Smile", 1.64, 0.002), ("MouthOpen", 1.64, 0.015)] {
        let t = names.iter().position(|n| n == name).unwrap();
        let moved: Vec<_> =
            target_offsets(&model, t).into_iter().filter(|(_, d)| d.iter().any(|x| *x != 0.0)).collect();
        assert!(!moved.is_empty(), "{name} moves vertices");
        for (p, _) in &moved {
            // On the front of the head: eyes and mouth.
            assert!(p[1] > lowest && p[1] < 1.74 && p[2] > 0.07, "{name} moves a vertex at {p:?}");
        }
        let largest =
            moved.iter().map(|(_, d)| (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()).fold(0.0, f32::max);
        assert!(largest > least, "{name}: largest offset {largest} m");
    }
    let breathe = target_offsets(&model, 0);
    assert!(breathe.iter().all(|(p, d)| d == &[0.0; 3] || (1.1..1.5).contains(&p[1])));
}

#[test]
fn talk_opens_the_jaw_with_the_mouth() {
    let model = model();
    let c = clip(&model, "Talk");
    let jaw = joint(&model, "Jaw");
    let mouth = model.meshes[0].target_names.iter().position(|n| n == "MouthOpen").unwrap();
    let d = model.clips[c].duration;
    let (mut widest, mut widest_mouth) = (0.0f32, 0.0f32);
    for i in 0..=96 {
        let t = d * i as f32 / 96.0;
        let character = character_at(&model, Some(c), f64::from(t));
        let pose = character.local_pose();
        let angle = pose.locals[jaw].rotation.angle();
        let open = pose.morph_weights[mouth];
        // The jaw's opening follows the mouth's: 0.22 rad when wide open.
        assert!((angle - 0.22 * open).abs() < 0.01, "at {t} s: jaw {angle} rad, mouth {open}");
        // Opening drops the chin: a rotation about +X.
        if angle > 0.05 {
            assert!(pose.locals[jaw].rotation.axis().unwrap().x > 0.99);
        }
        widest = widest.max(angle);
        widest_mouth = widest_mouth.max(open);
    }
    assert!(widest > 0.15 && widest_mouth > 0.7, "the mouth opens: jaw {widest} rad, weight {widest_mouth}");
    // It starts and ends closed and neutral: the face layer's reference.
    for t in [0.0, f64::from(d)] {
        let pose = character_at(&model, Some(c), t).local_pose().clone();
        assert!(pose.morph_weights.iter().all(|&w| w.abs() < 1e-6), "at {t}: {:?}", pose.morph_weights);
        assert!(pose.locals[jaw].rotation.angle() < 1e-6);
    }
}

#[test]
fn wave_raises_the_right_hand_above_the_shoulder_and_ends_where_it_began() {
    let model = model();
    let c = clip(&model, "Wave");
    let (hand, shoulder) = (joint(&model, "Hand.R"), joint(&model, "UpperArm.R"));
    let d = model.clips[c].duration;
    let at = |t: f32| (joint_at(&model, c, t, hand), joint_at(&model, c, t, shoulder));
    let (start, _) = at(0.0);
    let (middle, top) = at(1.0);
    assert!(middle[1] > top[1] + 0.1, "the hand at {middle:?}, the shoulder at {top:?}");
    let (end, _) = at(d);
    let moved = (0..3).map(|k| (end[k] - start[k]).abs()).fold(0.0, f32::max);
    assert!(moved < 1e-3, "the wave ends with the hand at {end:?}, began at {start:?}");
}
