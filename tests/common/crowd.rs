//! Crowds of the built-in character for the character-layer tests.

use std::sync::Arc;
use vkskin::asset::{Model, load_default_character};
use vkskin::character::controller::DEFAULT_CONTROLLER;
use vkskin::character::{AnimationSystem, CharacterId, Controller, ParameterValue};

/// The built-in character.
pub fn model() -> Arc<Model> {
    Arc::new(load_default_character().expect("built-in character"))
}

/// The built-in character's controller.
pub fn controller(model: &Model) -> Arc<Controller> {
    Arc::new(Controller::from_text(DEFAULT_CONTROLLER, model).expect("built-in controller"))
}

/// A system of `n` built-in characters on `threads` threads, each with its
/// own speed and playback rate.
pub fn crowd(model: &Arc<Model>, n: usize, threads: usize) -> AnimationSystem {
    let controller = controller(model);
    let mut system = AnimationSystem::with_threads(threads).unwrap();
    for i in 0..n {
        let id = system.add(model.rig.clone(), controller.clone()).unwrap();
        let c = system.character_mut(id);
        c.set_named("speed", ParameterValue::Float((i % 7) as f32 * 0.6)).unwrap();
        c.set_rate(0.8 + (i % 5) as f32 * 0.1);
    }
    system
}

/// Drives a crowd for frame `frame`: jumps, waves (the triggered layer),
/// talking (the face layer) and speed changes, staggered.
pub fn drive(system: &mut AnimationSystem, frame: usize) {
    for i in 0..system.len() {
        let c = system.character_mut(CharacterId(i));
        if (frame + i).is_multiple_of(97) {
            c.set_named("jump", ParameterValue::Trigger).unwrap();
        }
        if (frame + 5 * i).is_multiple_of(89) {
            c.set_named("wave", ParameterValue::Trigger).unwrap();
        }
        if (frame + 7 * i).is_multiple_of(53) {
            c.set_named("talk", ParameterValue::Float(((frame + i) % 3) as f32 * 0.5)).unwrap();
        }
        if (frame + 3 * i).is_multiple_of(61) {
            c.set_named("speed", ParameterValue::Float(((frame + i) % 9) as f32 * 0.5)).unwrap();
        }
    }
}
