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
fn the_viewers_ground_lies_under_the_lowest_point_and_reaches_past_the_crowd() {
    // A model 2 units wide standing from y = -0.5 (its lowest foot) to 3.
    let (lo, hi) = ([-1.0, -0.5, -0.25], [1.0, 3.0, 0.25]);
    for characters in [1, 100] {
        let ground = Level::ground(lo, hi, characters);
        let world = PhysicsWorld::new(&ground);
        let top = world.ground_below(Vector3::new(0.0, 5.0, 0.0), 10.0).unwrap();
        assert!((top.point.y + 0.5).abs() < 1e-4, "its top is the lowest point: {top:?}");
        // The crowd stands on a grid behind the first character (about
        // 1.25 sizes apart, sqrt(N) rows): the ground reaches past it.
        let behind = -(3.5 * 1.25 * (characters as f32).sqrt() + 3.5);
        assert!(world.ground_below(Vector3::new(0.0, 5.0, behind), 10.0).is_some(), "{characters}");
        assert!(ground.spawns.is_empty());
    }
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
    // The wall's near face is at z = 3.85; the capsule's radius 0.3 keeps
    // its centre before 3.55.
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

mod actor {
    use nalgebra::Vector3;
    use std::sync::Arc;
    use vkskin::asset::{Model, load_default_character};
    use vkskin::character::controller::DEFAULT_CONTROLLER;
    use vkskin::character::{Character, Controller, ParameterValue};
    use vkskin::world::level::STEP_RISE;
    use vkskin::world::{Actor, Authority, FootPlacement, Level, PhysicsWorld};

    fn model() -> Arc<Model> {
        Arc::new(load_default_character().unwrap())
    }

    /// The built-in character at `spawn` walking at `speed` (its controller,
    /// animation authority), with foot IK when `ik`.
    fn actor(model: &Model, level: &Level, spawn: &str, speed: f32, ik: bool) -> Actor {
        let controller = Arc::new(Controller::from_text(DEFAULT_CONTROLLER, model).unwrap());
        let mut character = Character::new(model.rig.clone(), controller).unwrap();
        character.set_named("speed", ParameterValue::Float(speed)).unwrap();
        let feet = ik.then(|| FootPlacement::humanoid(model).unwrap());
        Actor::new(character, level.spawn(spawn).unwrap(), feet)
    }

    fn root(actor: &Actor) -> Vector3<f32> {
        let j = actor.character().rig().skeleton.find("Root").unwrap();
        actor.character().output().world()[j].column(3).xyz()
    }

    #[test]
    fn animation_authority_moves_the_entity_by_the_root_motion() {
        let (model, level) = (model(), Level::demo());
        let world = PhysicsWorld::new(&level);
        let mut a = actor(&model, &level, "open", 1.3, false);
        // Into Locomotion (0.3 s crossfade), then measure whole walk cycles.
        for _ in 0..60 {
            a.update(1.0 / 60.0, &world).unwrap();
        }
        let (start, period) = (a.position(), 1.1f32);
        let frames = (5.0 * period * 60.0).round() as usize;
        for _ in 0..frames {
            a.update(1.0 / 60.0, &world).unwrap();
            let r = root(&a);
            assert!(r.x.abs() < 1e-3 && r.z.abs() < 1e-3, "the visual root left the entity: {r:?}");
            let m = a.last_move();
            assert!(
                (m.applied - m.requested).norm() < 1e-3 || m.requested.y < 0.0,
                "open floor resists: {m:?}"
            );
        }
        let per_cycle = (a.position().z - start.z) / (frames as f32 / 60.0 / period);
        let clip = 1.3 * period;
        assert!(
            (per_cycle / clip - 1.0).abs() < 0.01,
            "{per_cycle} m per cycle, the clip's root travels {clip}"
        );
        assert!((a.position().x - start.x).abs() < 1e-3 && a.position().y.abs() < 0.02);
    }

    #[test]
    fn a_wall_stops_the_actor_while_it_keeps_walking() {
        let (model, level) = (model(), Level::demo());
        let world = PhysicsWorld::new(&level);
        let mut a = actor(&model, &level, "wall", 1.3, true);
        let mut last_time = 0.0;
        for frame in 0..480 {
            a.update(1.0 / 60.0, &world).unwrap();
            assert!(
                a.character().pose().palettes.iter().all(|m| m.to_matrix().iter().all(|v| v.is_finite()))
            );
            if frame > 300 {
                let t = a.character().playhead().unwrap().1;
                assert_ne!(t, last_time, "the walk keeps playing");
                last_time = t;
            }
        }
        let face = 4.0 - 0.15;
        assert!(a.position().z + 0.3 <= face + 1e-4, "into the wall: {:?}", a.position());
        assert!(a.position().z > face - 0.4, "stopped short: {:?}", a.position());
        assert_eq!(a.character().state_name(), Some("Locomotion"));
    }

    /// Walking up the stairs with foot IK: planted feet on the step
    /// surfaces within 1 cm, knees within their limits, and no frame-to-frame
    /// jump bigger than walking the same way on flat floor without IK.
    #[test]
    fn feet_land_on_the_steps() {
        let (model, level) = (model(), Level::demo());
        let world = PhysicsWorld::new(&level);
        let names = model.skeleton.names();
        let joint = |n: &str| names.iter().position(|x| x == n).unwrap();
        let knees = [joint("LowerLeg.L"), joint("LowerLeg.R")];
        // 5 s at the walk's 1.3 m/s: up the stairs (z 2 to 4.8) onto the landing.
        let track = |spawn: &str, ik: bool| {
            let mut a = actor(&model, &level, spawn, 1.0, ik);
            let (mut worst_step, mut previous): (f32, Option<Vec<Vector3<f32>>>) = (0.0, None);
            let mut errors = Vec::new();
            for frame in 0..300 {
                a.update(1.0 / 60.0, &world).unwrap();
                let w = a.transform() * 1.0;
                let joints: Vec<Vector3<f32>> =
                    a.character().output().world().iter().map(|m| (w * m).column(3).xyz()).collect();
                if let Some(p) = &previous
                    && frame > 60
                {
                    let step = p.iter().zip(&joints).map(|(x, y)| (x - y).norm()).fold(0.0, f32::max);
                    worst_step = worst_step.max(step);
                }
                previous = Some(joints);
                if let Some(feet) = a.feet() {
                    for f in feet.iter().filter(|f| f.planted) {
                        errors.push(f.error_cm);
                    }
                }
                // Knees bend within the solver's limits (2.6 rad).
                let world = a.character().output().world();
                for &k in &knees {
                    let (hip, knee, ankle) = (
                        world[k - 1].column(3).xyz(),
                        world[k].column(3).xyz(),
                        world[k + 1].column(3).xyz(),
                    );
                    let bend = std::f32::consts::PI - (hip - knee).angle(&(ankle - knee));
                    assert!(bend <= 2.6 + 1e-3, "{spawn}: knee bent {bend} rad");
                }
            }
            (a, worst_step, errors)
        };
        let (climbed, ik_step, errors) = track("stairs", true);
        assert!(
            (climbed.position().y - 8.0 * STEP_RISE).abs() < 0.02,
            "on the landing: {:?}",
            climbed.position()
        );
        let (_, flat_step, _) = track("open", false);
        assert!(!errors.is_empty(), "feet were planted");
        let worst = errors.iter().copied().fold(0.0, f32::max);
        eprintln!(
            "stairs: {} planted samples, worst error {worst:.3} cm; joint step {ik_step:.4} m vs {flat_step:.4} m flat",
            errors.len()
        );
        assert!(worst <= 1.0, "a planted foot is {worst} cm off its step");
        assert!(
            ik_step <= flat_step * 1.5,
            "IK makes the pose jump: {ik_step} m in a frame, {flat_step} m without"
        );
    }

    #[test]
    fn movement_authority_matches_the_playback_to_the_velocity() {
        let (model, level) = (model(), Level::demo());
        let world = PhysicsWorld::new(&level);
        let mut a = actor(&model, &level, "open", 0.0, false);
        a.set_authority(Authority::Movement);
        a.set_velocity(Vector3::new(0.0, 0.0, 1.0));
        for _ in 0..120 {
            a.update(1.0 / 60.0, &world).unwrap();
        }
        let start = a.position();
        for _ in 0..120 {
            a.update(1.0 / 60.0, &world).unwrap();
        }
        assert!(((a.position().z - start.z) - 2.0).abs() < 0.02, "moved {:?}", a.position() - start);
        // The clips play at the rate that makes their feet cover 1 m/s.
        let covered = a.character().ground_speed() * a.character().rate();
        assert!((covered - 1.0).abs() < 0.02, "the feet cover {covered} m/s");
        assert_eq!(a.character().state_name(), Some("Locomotion"));
    }
}
