//! Evaluation-rate LOD on the built-in character: at every rate, events fire
//! exactly once, on the update that crosses them, with their clip time
//! (the same stream as at full rate); skipped updates keep the palettes and
//! their version; due updates give the full-rate pose bit for bit; a crowd
//! spreads its evaluations over the frames.

use crate::common::crowd::{controller, model};
use proptest::prelude::*;
use std::sync::Arc;
use vkskin::anim::ClipPlayer;
use vkskin::character::{
    AnimationSystem, Character, CharacterId, Controller, EvaluationRate, ParameterValue,
};

const RATES: [EvaluationRate; 5] = [
    EvaluationRate::EveryFrame,
    EvaluationRate::Every2nd,
    EvaluationRate::Every4th,
    EvaluationRate::Every8th,
    EvaluationRate::Unseen,
];

#[derive(Debug, Clone)]
enum Op {
    Update(f32),
    Huge(f32),
    Speed(f32),
    Jump,
    Rate(f32),
    Seek(f64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (0.0f32..0.1).prop_map(Op::Update),
        1 => (1.0f32..50.0).prop_map(Op::Huge),
        2 => (0.0f32..5.0).prop_map(Op::Speed),
        1 => Just(Op::Jump),
        1 => (-2.0f32..2.0).prop_map(Op::Rate),
        1 => (-3.0f64..3.0).prop_map(Op::Seek),
    ]
}

/// Applies a setting to `c`; returns the update's dt (0 for settings).
fn apply(c: &mut Character, op: &Op) -> f32 {
    match *op {
        Op::Update(dt) | Op::Huge(dt) => dt,
        Op::Speed(s) => {
            c.set_named("speed", ParameterValue::Float(s)).unwrap();
            0.0
        }
        Op::Jump => {
            c.set_named("jump", ParameterValue::Trigger).unwrap();
            0.0
        }
        Op::Rate(r) => {
            c.set_rate(r);
            0.0
        }
        Op::Seek(t) => {
            c.seek(t);
            0.0
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The built-in controller (idle, walk/run blend space, jumps) at the
    /// three rates side by side: same events, same clip times, same root
    /// motion every update; palettes and version untouched on skipped
    /// updates, equal to full rate on due ones.
    #[test]
    fn events_fire_exactly_once_at_every_rate(ops in proptest::collection::vec(op(), 1..150)) {
        let model = model();
        let controller = controller(&model);
        let mut characters: Vec<Character> = RATES
            .iter()
            .map(|&rate| {
                let mut c = Character::new(model.rig.clone(), controller.clone()).unwrap();
                c.set_evaluation_rate(rate);
                c
            })
            .collect();
        for (frame, op) in ops.iter().enumerate() {
            let versions: Vec<u64> = characters.iter().map(|c| c.version()).collect();
            for c in &mut characters {
                let dt = apply(c, op);
                c.update(dt).unwrap();
            }
            let (full, reduced) = characters.split_first().unwrap();
            for (c, before) in reduced.iter().zip(&versions[1..]) {
                prop_assert_eq!(c.events(), full.events(), "{:?} at update {}", c.evaluation_rate(), frame);
                prop_assert_eq!(c.root_motion(), full.root_motion());
                let due = c.evaluation_rate().is_due(frame as u32) || frame == 0;
                if due {
                    prop_assert_eq!(c.pose().palettes, full.pose().palettes, "due update {}", frame);
                } else {
                    prop_assert_eq!(c.version(), *before, "skipped update {} bumped the version", frame);
                }
            }
        }
    }

    /// One looping clip with events at each rate: exactly the events its
    /// player crosses, each once, with their clip times.
    #[test]
    fn one_clip_fires_what_its_player_crosses_at_every_rate(ops in proptest::collection::vec(op(), 1..100)) {
        let model = model();
        let walk = model.find_clip("Walk").unwrap();
        let events = &model.clips[walk].events;
        prop_assume!(!events.is_empty());
        let single = Arc::new(Controller::single_clip(&model, Some(walk), true).unwrap());
        for rate in RATES {
            let mut c = Character::new(model.rig.clone(), single.clone()).unwrap();
            c.set_evaluation_rate(rate);
            let mut player = ClipPlayer::new(model.clips[walk].duration);
            for op in &ops {
                let dt = match *op {
                    Op::Update(dt) | Op::Huge(dt) => dt,
                    Op::Rate(r) => { c.set_rate(r); player.set_speed(r); 0.0 }
                    Op::Seek(t) => { c.seek(t); player.set_time(c.leaf_time(0) as f32); 0.0 }
                    _ => 0.0,
                };
                c.update(dt).unwrap();
                let mut expected = Vec::new();
                player.advance(dt, events, |e| expected.push((e.name.clone(), e.time)));
                let got: Vec<(String, f32)> =
                    c.events().iter().map(|e| (c.event_name(e).to_string(), e.clip_time)).collect();
                prop_assert_eq!(got, expected, "{:?}", rate);
            }
        }
    }
}

#[test]
fn a_crowd_spreads_its_evaluations_over_the_frames() {
    let model = model();
    let controller = controller(&model);
    let mut system = AnimationSystem::single_threaded();
    let n = 16;
    for _ in 0..n {
        let id = system.add(model.rig.clone(), controller.clone()).unwrap();
        let c = system.character_mut(id);
        c.set_named("speed", ParameterValue::Float(1.5)).unwrap();
        c.set_evaluation_rate(EvaluationRate::Every4th);
    }
    system.update(1.0 / 60.0).unwrap();
    for frame in 1..40u32 {
        let before: Vec<u64> = system.characters().iter().map(|c| c.version()).collect();
        system.update(1.0 / 60.0).unwrap();
        let mut evaluated = 0;
        for (i, &version) in before.iter().enumerate() {
            let bumped = system.character(CharacterId(i)).version() != version;
            // Character i evaluates when (frame + i) is a multiple of 4.
            assert_eq!(bumped, (frame + i as u32).is_multiple_of(4), "character {i} at frame {frame}");
            evaluated += usize::from(bumped);
        }
        assert_eq!(evaluated, n / 4, "frame {frame}");
    }
}

/// A rate that rises makes the next update due: a character coming into
/// view (from unseen) or closer shows the full-rate pose at once, bit for
/// bit, and its events never stopped.
#[test]
fn a_rising_rate_poses_at_once() {
    let model = model();
    let controller = controller(&model);
    let make = || {
        let mut c = Character::new(model.rig.clone(), controller.clone()).unwrap();
        c.set_named("speed", ParameterValue::Float(1.2)).unwrap();
        c
    };
    let (mut full, mut foreseen) = (make(), make());
    // Unseen for a while, then seen small, then near, then unseen again.
    let plan =
        [(EvaluationRate::Unseen, 30), (EvaluationRate::Every8th, 11), (EvaluationRate::EveryFrame, 3)];
    let mut update = 0;
    for round in 0..2 {
        for &(rate, updates) in &plan {
            let rose = rate.is_faster_than(foreseen.evaluation_rate());
            foreseen.set_evaluation_rate(rate);
            for k in 0..updates {
                let before = foreseen.version();
                full.update(1.0 / 60.0).unwrap();
                foreseen.update(1.0 / 60.0).unwrap();
                assert_eq!(foreseen.events(), full.events(), "update {update}");
                if k == 0 && rose && update > 0 {
                    assert_ne!(foreseen.version(), before, "round {round}: {rate:?} did not pose at once");
                    assert_eq!(foreseen.pose().palettes, full.pose().palettes, "update {update}");
                }
                if rate == EvaluationRate::Unseen && update > 0 {
                    assert_eq!(foreseen.version(), before, "unseen, update {update} posed");
                }
                update += 1;
            }
        }
    }
}
