//! Jumps through the physics world: the demo level's low obstacle stops a
//! walk and a jump clears it; the capsule rises with the feet, `grounded`
//! follows the capsule's contact, feet stay planted at take-off and landing
//! and nothing pops (the built-in character and controller, 60 Hz).

use nalgebra::Vector3;
use std::sync::Arc;
use vkskin::asset::{Model, load_default_character};
use vkskin::character::controller::DEFAULT_CONTROLLER;
use vkskin::character::{Character, Controller, ParameterValue};
use vkskin::world::level::{OBSTACLE_DEPTH, OBSTACLE_HEIGHT, OBSTACLE_Z};
use vkskin::world::{Actor, Authority, FootPlacement, Level, PhysicsWorld};

const DT: f32 = 1.0 / 60.0;

/// What a run of the actor did, frame by frame.
struct Run {
    /// Where the feet stand (the capsule's bottom).
    positions: Vec<Vector3<f32>>,
    /// The controller's `grounded` parameter after each update, and the
    /// capsule's contact.
    grounded: Vec<(bool, bool)>,
    states: Vec<String>,
    /// The largest move of any joint (world space) since the frame before.
    joint_steps: Vec<f32>,
    /// The largest change of any joint's move (world space) from the frame
    /// before to this one: a pop is a move that starts or stops at once.
    joint_jerks: Vec<f32>,
    /// Errors of the planted feet, per frame.
    planted_errors: Vec<Vec<f32>>,
}

fn model() -> Arc<Model> {
    Arc::new(load_default_character().unwrap())
}

/// The built-in character from `spawn` at `speed` m/s (foot IK on), the
/// `jump` trigger set for frame `jump_at`, for `frames` updates.
fn run(
    model: &Model,
    spawn: &str,
    authority: Authority,
    speed: f32,
    jump_at: Option<usize>,
    frames: usize,
) -> Run {
    let level = Level::demo();
    let world = PhysicsWorld::new(&level);
    let controller = Arc::new(Controller::from_text(DEFAULT_CONTROLLER, model).unwrap());
    let mut character = Character::new(model.rig.clone(), controller).unwrap();
    character.set_named("speed", ParameterValue::Float(speed)).unwrap();
    let mut actor =
        Actor::new(character, level.spawn(spawn).unwrap(), Some(FootPlacement::humanoid(model).unwrap()));
    actor.set_authority(authority);
    let grounded = actor.character().controller().parameter("grounded").unwrap();
    let mut out = Run {
        positions: Vec::new(),
        grounded: Vec::new(),
        states: Vec::new(),
        joint_steps: Vec::new(),
        joint_jerks: Vec::new(),
        planted_errors: Vec::new(),
    };
    let mut previous: Option<Vec<Vector3<f32>>> = None;
    let mut moves: Option<Vec<Vector3<f32>>> = None;
    for frame in 0..frames {
        if Some(frame) == jump_at {
            actor.character_mut().set_named("jump", ParameterValue::Trigger).unwrap();
        }
        if authority == Authority::Movement {
            let heading = nalgebra::UnitQuaternion::from_axis_angle(&Vector3::y_axis(), actor.yaw());
            actor.set_velocity(heading * Vector3::z() * speed);
        }
        actor.update(if frame == 0 { 0.0 } else { DT }, &world).unwrap();
        let w = actor.transform();
        let joints: Vec<Vector3<f32>> =
            actor.character().output().world().iter().map(|m| (w * m).column(3).xyz()).collect();
        let moved: Option<Vec<Vector3<f32>>> =
            previous.as_ref().map(|p| p.iter().zip(&joints).map(|(a, b)| b - a).collect());
        let step = moved.as_ref().map_or(0.0, |m| m.iter().map(|d| d.norm()).fold(0.0, f32::max));
        let jerk = match (&moves, &moved) {
            (Some(a), Some(b)) => a.iter().zip(b).map(|(x, y)| (y - x).norm()).fold(0.0, f32::max),
            _ => 0.0,
        };
        previous = Some(joints);
        moves = moved;
        out.joint_steps.push(step);
        out.joint_jerks.push(jerk);
        out.positions.push(actor.position());
        let flag = actor.character().parameters().get(grounded).unwrap() > 0.5;
        out.grounded.push((flag, actor.grounded()));
        out.states.push(actor.character().state_name().unwrap_or("").to_string());
        let feet = actor.feet().unwrap();
        out.planted_errors.push(feet.iter().filter(|f| f.planted).map(|f| f.error_cm).collect());
    }
    out
}

/// The obstacle's far side, where the capsule (radius 0.3) is past it.
fn past_the_obstacle() -> f32 {
    OBSTACLE_Z + OBSTACLE_DEPTH + 0.3
}

#[test]
fn a_walk_stops_at_the_obstacle() {
    let model = model();
    let walk = run(&model, "obstacle", Authority::Animation, 1.3, None, 360);
    let end = walk.positions.last().unwrap();
    // The capsule's front (radius 0.3) at the obstacle's near face.
    assert!(end.z + 0.3 <= OBSTACLE_Z + 1e-3, "into the obstacle: {end:?}");
    assert!(end.z + 0.3 > OBSTACLE_Z - 0.05, "stopped short: {end:?}");
    let highest = walk.positions.iter().map(|p| p.y).fold(f32::MIN, f32::max);
    assert!(highest < 0.02, "the walk climbed {highest} m: a 30 cm block is no step");
    assert_eq!(walk.states.last().unwrap(), "Locomotion", "it keeps walking against it");
}

/// The largest change of a joint's move between frames over `window` of the
/// character alone (model space: no level, no entity, no IK) walking and
/// jumping at frame `jump_at`.
fn clip_alone(model: &Model, jump_at: usize, window: std::ops::Range<usize>) -> f32 {
    let controller = Arc::new(Controller::from_text(DEFAULT_CONTROLLER, model).unwrap());
    let mut c = Character::new(model.rig.clone(), controller).unwrap();
    c.set_named("speed", ParameterValue::Float(1.3)).unwrap();
    let mut previous: Option<Vec<Vector3<f32>>> = None;
    let mut moves: Option<Vec<Vector3<f32>>> = None;
    let mut worst = 0.0f32;
    for frame in 0..window.end {
        if frame == jump_at {
            c.set_named("jump", ParameterValue::Trigger).unwrap();
        }
        c.update(if frame == 0 { 0.0 } else { DT }).unwrap();
        let joints: Vec<Vector3<f32>> = c.output().world().iter().map(|m| m.column(3).xyz()).collect();
        let moved: Option<Vec<Vector3<f32>>> =
            previous.as_ref().map(|p| p.iter().zip(&joints).map(|(a, b)| b - a).collect());
        if let (Some(a), Some(b)) = (&moves, &moved)
            && window.contains(&frame)
        {
            worst = worst.max(a.iter().zip(b).map(|(x, y)| (y - x).norm()).fold(0.0, f32::max));
        }
        previous = Some(joints);
        moves = moved;
    }
    worst
}

/// Walking at the obstacle and jumping 0.5 s before reaching it: the feet
/// (the capsule's bottom) rise above its top and the actor lands beyond
/// its near face, then walks on past it. Both authorities.
#[test]
fn a_jump_clears_the_obstacle() {
    let model = model();
    let walking = run(&model, "open", Authority::Animation, 1.3, None, 240);
    let walk_jerk = walking.joint_jerks[60..].iter().copied().fold(0.0, f32::max);
    // The same jump on open floor: the clip's own motion (its arms swing
    // faster than a walk's, 18 cm in a frame).
    let jump_at = 72;
    let window = jump_at..jump_at + 72;
    let open = run(&model, "open", Authority::Animation, 1.3, Some(jump_at), 240);
    let open_step = open.joint_steps[window.clone()].iter().copied().fold(0.0, f32::max);
    let open_jerk = open.joint_jerks[window.clone()].iter().copied().fold(0.0, f32::max);
    // The clip alone (no level, no IK, standing still): its keys are 30 Hz
    // and linear, so even alone its joints' moves change by several cm
    // from one 60 Hz frame to the next.
    let clip_jerk = clip_alone(&model, jump_at, window.clone());
    // With movement authority the walk goes on through the jump's 0.5 s
    // crouch: it jumps earlier, not to be against the obstacle at take-off.
    for (authority, jump_at) in [(Authority::Animation, jump_at), (Authority::Movement, 50)] {
        let window = jump_at..jump_at + 72;
        let jump = run(&model, "obstacle", authority, 1.3, Some(jump_at), 240);
        let start = jump.positions[jump_at];
        let highest = jump.positions.iter().map(|p| p.y).fold(f32::MIN, f32::max);
        assert!(
            highest - start.y >= OBSTACLE_HEIGHT,
            "{authority:?}: the feet rose {} m, the obstacle is {OBSTACLE_HEIGHT} m",
            highest - start.y
        );
        let end = jump.positions.last().unwrap();
        assert!(end.z > past_the_obstacle(), "{authority:?}: did not pass it: {end:?}");
        assert!(end.y.abs() < 0.02, "{authority:?}: back on the floor: {end:?}");
        // Take-off and landing: from the trigger to 1.2 s later (the jump
        // clip's length), planted feet on the ground and no joint moving
        // much more in a frame than walking moves it.
        let worst_error = jump.planted_errors[window.clone()].iter().flatten().copied().fold(0.0, f32::max);
        let planted = jump.planted_errors[window.clone()].iter().flatten().count();
        let worst_step = jump.joint_steps[window.clone()].iter().copied().fold(0.0, f32::max);
        let worst_jerk = jump.joint_jerks[window.clone()].iter().copied().fold(0.0, f32::max);
        eprintln!(
            "{authority:?}: rose {:.3} m; {planted} planted samples, worst {worst_error:.3} cm; \
             joint step {worst_step:.4} m (the jump on open floor {open_step:.4} m); \
             change of a joint's move {worst_jerk:.4} m (open floor {open_jerk:.4} m, the clip alone \
             {clip_jerk:.4} m, walking {walk_jerk:.4} m)",
            highest - start.y
        );
        assert!(planted > 20, "{authority:?}: feet were planted at take-off and landing");
        assert!(worst_error <= 1.0, "{authority:?}: a planted foot is {worst_error} cm off the ground");
        assert!(
            worst_step <= open_step + 0.02,
            "{authority:?}: the obstacle makes the jump pop: {worst_step} m in a frame, {open_step} m on open floor"
        );
        // What the level adds to the clip's own unevenness: starting and
        // stopping the flight's 1.3 m/s (2.2 cm a frame) and no more.
        assert!(
            worst_jerk <= clip_jerk + 0.03,
            "{authority:?}: the jump pops: a joint's move changes by {worst_jerk} m in a frame, \
             {clip_jerk} m in the clip alone"
        );
    }
}

/// `grounded` is the capsule's contact on every frame; it goes false in
/// the air, and the state machine leaves Jump only once it is back.
#[test]
fn grounded_follows_the_capsule() {
    let model = model();
    let jump_at = 72;
    let jump = run(&model, "open", Authority::Animation, 1.3, Some(jump_at), 240);
    for (frame, (flag, contact)) in jump.grounded.iter().enumerate() {
        assert_eq!(flag, contact, "frame {frame}: grounded {flag}, the capsule's contact {contact}");
    }
    let air: Vec<usize> = (0..jump.grounded.len()).filter(|&f| !jump.grounded[f].1).collect();
    let (Some(&first), Some(&last)) = (air.first(), air.last()) else { panic!("never left the ground") };
    assert!(first > jump_at, "left the ground before the jump: frame {first}");
    let flight = (last - first + 1) as f32 * DT;
    assert!(flight > 0.2 && air.len() == last - first + 1, "one flight of {flight} s: {air:?}");
    for f in first..=last {
        assert_eq!(jump.states[f], "Jump", "frame {f}: in the air and in {}", jump.states[f]);
    }
    assert!(jump.positions[first..=last].iter().all(|p| p.y > 0.0), "in the air, above the floor");
    assert_eq!(jump.states.last().unwrap(), "Locomotion", "landed and walking again");
    // A run's short flight (both feet a few cm up) does not lift the capsule.
    let running = run(&model, "open", Authority::Animation, 3.4, None, 240);
    assert!(running.grounded.iter().all(|g| g.1), "a run leaves the ground");
    assert!(running.positions.iter().all(|p| p.y.abs() < 0.02));
}
