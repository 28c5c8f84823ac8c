//! The demo level in the physics world: the ground under a ray, and a
//! capsule walked along each lane (open floor, a wall, the stairs, the ramp).

use nalgebra::Vector3;
use vkskin::world::level::{STEP_RISE, STEP_RUN};
use vkskin::world::{CapsuleShape, Level, PhysicsWorld};

/// Walks a capsule from `spawn` along +z at `speed` m/s for `seconds`,
/// with gravity while it is off the ground; returns its feet's path.
fn walk(world: &PhysicsWorld, spawn: Vector3<f32>, speed: f32, seconds: f32) -> Vec<Vector3<f32>> {
    let shape = CapsuleShape::default();
    let dt = 1.0 / 60.0;
    let (mut feet, mut fall) = (spawn, 0.0f32);
    let mut path = vec![feet];
    for _ in 0..(seconds / dt) as usize {
        let requested = Vector3::new(0.0, -fall * dt, speed * dt);
        let moved = world.move_capsule(&shape, feet, requested, dt);
        feet += moved.applied;
        fall = if moved.grounded { 0.0 } else { fall + 9.81 * dt };
        path.push(feet);
    }
    path
}

#[test]
fn rays_find_the_floor_the_steps_and_the_ramp() {
    let level = Level::demo();
    let world = PhysicsWorld::new(&level);
    let floor = world.ground_below(Vector3::new(0.0, 5.0, 1.0), 10.0).unwrap();
    assert!(floor.point.y.abs() < 1e-4 && (floor.normal - Vector3::y()).norm() < 1e-4, "{floor:?}");
    for k in 0..8 {
        let z = 2.0 + (k as f32 + 0.5) * STEP_RUN;
        let step = world.ground_below(Vector3::new(4.0, 5.0, z), 10.0).unwrap();
        assert!((step.point.y - (k + 1) as f32 * STEP_RISE).abs() < 1e-4, "step {k}: {step:?}");
    }
    let ramp = world.ground_below(Vector3::new(-4.0, 5.0, 5.0), 10.0).unwrap();
    assert!((ramp.point.y - 0.5).abs() < 1e-3, "{ramp:?}");
    let slope = ramp.normal.y.acos().to_degrees();
    assert!((slope - (1.0f32 / 6.0).atan().to_degrees()).abs() < 0.1, "{slope} degrees");
    assert!(world.ground_below(Vector3::new(0.0, 5.0, 100.0), 10.0).is_none(), "nothing outside the level");
}

#[test]
fn open_floor_lets_the_capsule_through() {
    let level = Level::demo();
    let world = PhysicsWorld::new(&level);
    let path = walk(&world, level.spawn("open").unwrap(), 1.5, 4.0);
    let end = path.last().unwrap();
    assert!((end.z - 6.0).abs() < 0.05 && end.y.abs() < 0.02, "{end:?}");
}

#[test]
fn a_wall_stops_the_capsule_without_penetration() {
    let level = Level::demo();
    let world = PhysicsWorld::new(&level);
    let path = walk(&world, level.spawn("wall").unwrap(), 1.5, 6.0);
    let end = path.last().unwrap();
    // The wall's near face is at z = 3.85; the capsule's radius 0.3 and the
    // controller's offset 0.01 keep its centre before 3.54.
    let face = 4.0 - 0.15;
    let penetration = end.z + 0.3 - face;
    assert!(penetration <= 0.0, "the capsule went {penetration} m into the wall");
    assert!(end.z > face - 0.3 - 0.05, "stopped early: {end:?}");
    assert!(path.iter().all(|p| p.iter().all(|v| v.is_finite())));
}

#[test]
fn the_capsule_climbs_the_stairs_and_the_ramp() {
    let level = Level::demo();
    let world = PhysicsWorld::new(&level);
    let stairs = walk(&world, level.spawn("stairs").unwrap(), 1.2, 6.0);
    let end = stairs.last().unwrap();
    assert!((end.y - 8.0 * STEP_RISE).abs() < 0.02 && end.z > 5.5, "on the landing: {end:?}");
    let ramp = walk(&world, level.spawn("ramp").unwrap(), 1.2, 8.0);
    let end = ramp.last().unwrap();
    assert!((end.y - 1.0).abs() < 0.03 && end.z > 8.5, "on the ramp's landing: {end:?}");
}
