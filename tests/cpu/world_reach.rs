//! Arm reach in the demo level: the left hand reaches for the rail along the
//! open lane while walking by, and for a point set on the actor; the weight
//! blends in and out over `BLEND_TIME` and nothing pops (the built-in
//! character and controller, 60 Hz).

use nalgebra::Vector3;
use std::sync::Arc;
use vkskin::asset::{Model, load_default_character};
use vkskin::character::controller::DEFAULT_CONTROLLER;
use vkskin::character::{Character, Controller, ParameterValue};
use vkskin::world::level::{RAIL_HEIGHT, RAIL_X};
use vkskin::world::reach::BLEND_TIME;
use vkskin::world::{Actor, FootPlacement, Level, PhysicsWorld};

const DT: f32 = 1.0 / 60.0;

fn model() -> Arc<Model> {
    Arc::new(load_default_character().unwrap())
}

fn actor(model: &Model, level: &Level, spawn: &str, speed: f32) -> Actor {
    let controller = Arc::new(Controller::from_text(DEFAULT_CONTROLLER, model).unwrap());
    let mut character = Character::new(model.rig.clone(), controller).unwrap();
    character.set_named("speed", ParameterValue::Float(speed)).unwrap();
    Actor::new(character, level.spawn(spawn).unwrap(), Some(FootPlacement::humanoid(model).unwrap()))
}

/// World positions of every joint.
fn joints(a: &Actor) -> Vec<Vector3<f32>> {
    let w = a.transform();
    a.character().output().world().iter().map(|m| (w * m).column(3).xyz()).collect()
}

/// One frame of a walk: the actor's position, each hand's (weight, error
/// in cm) and the largest joint move since the frame before.
type Frame = (Vector3<f32>, [(f32, f32); 2], f32);

/// Walks the open lane for `frames`.
fn walk(model: &Model, level: &Level, frames: usize) -> Vec<Frame> {
    let world = PhysicsWorld::new(level);
    let mut a = actor(model, level, "open", 1.3);
    let mut previous: Option<Vec<Vector3<f32>>> = None;
    let mut out = Vec::new();
    for frame in 0..frames {
        a.update(if frame == 0 { 0.0 } else { DT }, &world).unwrap();
        let now = joints(&a);
        let step = previous
            .as_ref()
            .map_or(0.0, |p| p.iter().zip(&now).map(|(x, y)| (x - y).norm()).fold(0.0, f32::max));
        previous = Some(now);
        let hands = a.hands().unwrap();
        out.push((a.position(), [0, 1].map(|i| (hands[i].weight, hands[i].error_cm)), step));
    }
    out
}

#[test]
fn the_left_hand_takes_the_rail_walking_by() {
    let model = model();
    let level = Level::demo();
    assert_eq!(level.rails.len(), 1);
    let frames = walk(&model, &level, 480);
    // Before the rail (it starts at z = 3) and well after it (it ends at 7):
    // the animated arms.
    for (p, hands, _) in &frames {
        if p.z < 2.0 || p.z > 8.0 {
            assert_eq!(hands[0].0, 0.0, "at z = {}: the left hand reaches with nothing there", p.z);
        }
        assert_eq!(hands[1].0, 0.0, "the right hand is too far from the rail");
    }
    let along: Vec<_> = frames.iter().filter(|(p, _, _)| p.z > 4.0 && p.z < 6.0).collect();
    assert!(!along.is_empty(), "walked past the rail");
    for (p, hands, _) in &along {
        assert_eq!(hands[0].0, 1.0, "at z = {}: beside the rail the left hand holds it", p.z);
        assert!(hands[0].1 <= 1.0, "at z = {}: the hand is {} cm off the rail", p.z, hands[0].1);
    }
    // Blended in and out, never faster than BLEND_TIME allows (eased: the
    // steepest step of smoothstep is 1.5 times the linear one).
    let most = 1.5 * DT / BLEND_TIME + 1e-4;
    for w in frames.windows(2) {
        let change = (w[1].1[0].0 - w[0].1[0].0).abs();
        assert!(change <= most, "the weight jumps by {change} in a frame");
    }
    // No pop: the reach adds no joint move bigger than walking the lane
    // without the rail.
    let mut bare = level.clone();
    bare.rails.clear();
    let without = walk(&model, &bare, 480);
    let worst = |f: &[Frame]| f[60..].iter().map(|x| x.2).fold(0.0, f32::max);
    let (with_rail, no_rail) = (worst(&frames), worst(&without));
    let held = along.len();
    let error = along.iter().map(|x| x.1[0].1).fold(0.0, f32::max);
    eprintln!(
        "rail: held over {held} frames, worst error {error:.3} cm; joint step {with_rail:.4} m vs {no_rail:.4} m without the rail"
    );
    assert!(with_rail <= no_rail + 0.02, "the reach pops: {with_rail} m in a frame, {no_rail} m without");
}

#[test]
fn a_set_target_is_reached_then_let_go() {
    let model = model();
    let level = Level::demo();
    let world = PhysicsWorld::new(&level);
    // Standing at the ramp's foot, far from the rail.
    let mut a = actor(&model, &level, "ramp", 0.0);
    for frame in 0..30 {
        a.update(if frame == 0 { 0.0 } else { DT }, &world).unwrap();
    }
    assert!(a.hands().unwrap().iter().all(|h| h.weight == 0.0), "nothing to reach for");
    // A point in front of the right shoulder (the character faces +z, its
    // right is -x), 40 cm out.
    let names = model.skeleton.names();
    let shoulder = names.iter().position(|n| n == "UpperArm.R").unwrap();
    let target = joints(&a)[shoulder] + Vector3::new(-0.1, -0.1, 0.35);
    a.set_reach_target(Some(target));
    assert_eq!(a.reach_target(), Some(target));
    a.set_reach_target(Some(Vector3::new(f32::NAN, 0.0, 0.0)));
    assert_eq!(a.reach_target(), Some(target), "a non-finite target is ignored");
    let blend = (BLEND_TIME / DT).ceil() as usize;
    for _ in 0..blend + 2 {
        a.update(DT, &world).unwrap();
    }
    let hands = a.hands().unwrap();
    assert_eq!((hands[0].weight, hands[1].weight), (0.0, 1.0), "the nearer (right) hand reaches: {hands:?}");
    assert!(hands[1].error_cm <= 1.0, "{hands:?}");
    let hand = names.iter().position(|n| n == "Hand.R").unwrap();
    assert!((joints(&a)[hand] - target).norm() <= 0.01, "the drawn hand is at the target");
    assert!((hands[1].target - target).norm() < 1e-5);
    // Let go: back to the animated arm within the blend time.
    a.set_reach_target(None);
    for _ in 0..blend + 2 {
        a.update(DT, &world).unwrap();
    }
    assert!(a.hands().unwrap().iter().all(|h| h.weight == 0.0), "{:?}", a.hands());
    // Out of reach (2 m up): not reached for.
    a.set_reach_target(Some(joints(&a)[shoulder] + Vector3::new(0.0, 2.0, 0.0)));
    for _ in 0..blend + 2 {
        a.update(DT, &world).unwrap();
    }
    assert!(a.hands().unwrap().iter().all(|h| h.weight == 0.0), "{:?}", a.hands());
    // The rail's nearest point is what the level offers.
    let p = world.nearest_rail_point(&Vector3::new(0.0, 1.4, 5.0)).unwrap();
    assert!((p - Vector3::new(RAIL_X, RAIL_HEIGHT, 5.0)).norm() < 1e-5, "{p:?}");
}
