//! The mover's speed limit (`world::MAX_SPEED`): an actor asked to move at
//! 3e38 m/s into the demo level's wall stays on its side at a finite
//! position, and moves exactly as it does at the limit; below the limit
//! nothing changes (`world_levels` keeps the normal walks).

use nalgebra::Vector3;
use std::sync::Arc;
use vkskin::asset::{Model, load_default_character};
use vkskin::character::controller::DEFAULT_CONTROLLER;
use vkskin::character::{Character, Controller};
use vkskin::world::{Actor, Authority, Level, MAX_SPEED, PhysicsWorld};

/// The wall lane's wall: its near face at z = 3.85; the capsule's radius.
const WALL_FACE: f32 = 3.85;
const RADIUS: f32 = 0.3;

/// The built-in character at `spawn`, moved by `velocity` (movement
/// authority) for `frames` updates of `dt`; its feet's path.
fn drive(model: &Model, spawn: &str, velocity: Vector3<f32>, frames: usize, dt: f32) -> Vec<Vector3<f32>> {
    let level = Level::demo();
    let world = PhysicsWorld::new(&level);
    let controller = Arc::new(Controller::from_text(DEFAULT_CONTROLLER, model).unwrap());
    let character = Character::new(model.rig.clone(), controller).unwrap();
    let mut actor = Actor::new(character, level.spawn(spawn).unwrap(), None);
    actor.set_authority(Authority::Movement);
    (0..frames)
        .map(|_| {
            actor.set_velocity(velocity);
            actor.update(dt, &world).unwrap();
            actor.position()
        })
        .collect()
}

#[test]
fn a_hostile_speed_stays_finite_and_out_of_the_wall() {
    let model = load_default_character().unwrap();
    for (velocity, dt) in [(Vector3::new(0.0, 0.0, 3e38), 1.0 / 60.0), (Vector3::new(0.0, 0.0, 3e38), 1.0)] {
        let path = drive(&model, "wall", velocity, 120, dt);
        for p in &path {
            assert!(p.iter().all(|v| v.is_finite()), "{velocity:?} at dt {dt}: {p:?}");
            assert!(p.z + RADIUS <= WALL_FACE + 1e-4, "{velocity:?} at dt {dt}: through the wall at {p:?}");
        }
        // It gets to the wall (and stops there), rather than freezing.
        let end = path.last().unwrap();
        assert!(end.z + RADIUS > WALL_FACE - 0.05, "stopped short: {end:?}");
    }
    // Each component finite, the length not (in f32): it slides along the
    // lane's wall and stops at the level's outer walls (x = 12, z = 16).
    let path = drive(&model, "wall", Vector3::new(3e38, 0.0, 3e38), 240, 1.0 / 60.0);
    for p in &path {
        assert!(p.iter().all(|v| v.is_finite()), "{p:?}");
        assert!(p.x + RADIUS <= 12.0 + 1e-4 && p.z + RADIUS <= 16.0 + 1e-4, "out of the level at {p:?}");
    }
}

#[test]
fn faster_than_the_limit_moves_as_the_limit() {
    let model = load_default_character().unwrap();
    let at_limit = drive(&model, "open", Vector3::new(0.0, 0.0, MAX_SPEED), 30, 1.0 / 120.0);
    let beyond = drive(&model, "open", Vector3::new(0.0, 0.0, 1e9), 30, 1.0 / 120.0);
    assert_eq!(at_limit, beyond);
    let moved = at_limit.last().unwrap().z - at_limit[0].z;
    assert!(moved > 0.0 && moved <= MAX_SPEED * 29.0 / 120.0 + 1e-3, "{moved} m");
}
