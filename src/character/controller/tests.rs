//! Controllers checked against the hand-built test model: a full file
//! compiles, every problem is named (and typed), a file's name comes first,
//! names are escaped. They need no files but the scratch ones they write
//! (the model is built in code, `crate::test_model`).

use crate::character::Controller;
use crate::character::controller::{
    ConditionError, ControllerError, MotionError, StateProblem, TransitionProblem, UnknownClip,
};
use crate::test_model::test_model;

/// The message, as `main` would print it (without the file).
fn compile(text: &str) -> Result<Controller, String> {
    Controller::from_text(text, &test_model()).map_err(|e| e.to_string())
}

const GOOD: &str = r#"(
    parameters: [Float(name: "speed", default: 0.5, min: 0, max: 4), Trigger(name: "jump"), Bool(name: "grounded", default: true)],
    states: [
        (name: "Idle", motion: Clip(clip: "Walk", speed: 0.5)),
        (name: "Move", motion: BlendSpace1D(parameter: "speed", sync: true, smoothing: 0.1, points: [
            (at: 2.0, motion: Clip(clip: "Run")),
            (at: 1.0, motion: Blend(inputs: [
                (motion: Clip(clip: "Walk"), weight: 1.0),
                (motion: Clip(clip: "1"), weight: "speed"),
            ])),
        ])),
    ],
    transitions: [
        (from: "Idle", to: "Move", when: ["speed > 0.1", "grounded"], duration: 0.2, curve: Linear),
        (from: "*", to: "Idle", when: ["jump"], exit_time: 0.5, priority: 3),
    ],
)"#;

#[test]
fn compiles_a_full_controller() {
    let c = compile(GOOD).unwrap();
    assert_eq!(c.parameters().len(), 3);
    assert_eq!(c.parameters()[0].range, Some((0.0, 4.0)));
    assert_eq!(c.states().len(), 2);
    assert_eq!(c.initial(), Some(0));
    // Move: Run, Walk, Run (clip "1") — three clip nodes, one sync group over all.
    assert_eq!(c.states()[1].leaves, 1..4);
    assert_eq!(c.groups().len(), 1);
    assert_eq!(c.groups()[0].leaves, 1..4);
    assert!(c.leaves()[1..].iter().all(|l| l.group == Some(0)));
    assert_eq!(c.leaves()[0].speed, 0.5);
    assert_eq!(c.transitions()[1].from, None);
    assert_eq!(c.any_state, vec![1]);
    assert_eq!(c.outgoing, vec![vec![0], vec![]]);
}

#[test]
fn every_problem_is_named() {
    let cases = [
        ("(states: [(name: \"A\", motion: Clip(clip: \"Walk\"))", "1:"), // syntax: unclosed
        (
            "(states: [(name: \"A\", motion: Clip(clip: \"Jog\"))])",
            "state 0 \"A\": motion: no clip \"Jog\" (clips: \"Walk\", \"Run\")",
        ),
        ("(states: [(name: \"A\", motion: Clip(clip: \"Walk\", sped: 2))])", "sped"),
        (
            "(states: [(name: \"A\", motion: BlendSpace1D(parameter: \"speed\", points: [(at: 0, motion: Clip(clip: \"Walk\"))]))])",
            "unknown parameter \"speed\"",
        ),
        (
            "(parameters: [Bool(name: \"speed\")], states: [(name: \"A\", motion: BlendSpace1D(parameter: \"speed\", points: [(at: 0, motion: Clip(clip: \"Walk\"))]))])",
            "parameter \"speed\" is a bool, not a float",
        ),
        (
            "(parameters: [Float(name: \"speed\")], states: [(name: \"A\", motion: Clip(clip: \"Walk\")), (name: \"B\", motion: Clip(clip: \"Run\"))], transitions: [(from: \"A\", to: \"B\", when: [\"speed\"])])",
            "transition 0 (\"A\" -> \"B\"): when \"speed\": float parameter \"speed\" needs a comparison",
        ),
        (
            "(states: [(name: \"A\", motion: Clip(clip: \"Walk\"))], transitions: [(from: \"A\", to: \"Fly\")])",
            "transition 0 (\"A\" -> \"Fly\"): no state \"Fly\"",
        ),
        (
            "(states: [(name: \"A\", motion: Clip(clip: \"Walk\"))], transitions: [(from: \"A\", to: \"A\")])",
            "to itself",
        ),
        (
            "(states: [(name: \"A\", motion: Clip(clip: \"Walk\")), (name: \"A\", motion: Clip(clip: \"Run\"))])",
            "state 1 \"A\": a second state",
        ),
        ("(states: [(name: \"*\", motion: Clip(clip: \"Walk\"))])", "state 0 \"*\""),
        (
            "(initial: \"B\", states: [(name: \"A\", motion: Clip(clip: \"Walk\"))])",
            "initial: no state \"B\"",
        ),
        ("(states: [(name: \"A\", motion: Clip(clip: \"Walk\", speed: -1))])", "speed -1"),
        ("(states: [(name: \"A\", motion: Blend(inputs: []))])", "at least one input"),
        (
            "(states: [(name: \"A\", motion: BlendSpace1D(parameter: \"x\", points: []))], parameters: [Float(name: \"x\")])",
            "at least one point",
        ),
        (
            "(parameters: [Float(name: \"x\")], states: [(name: \"A\", motion: BlendSpace1D(parameter: \"x\", points: [(at: 1, motion: Clip(clip: \"Walk\")), (at: 1, motion: Clip(clip: \"Run\"))]))])",
            "point 1: a second point at 1",
        ),
        (
            "(states: [(name: \"A\", motion: Clip(clip: \"Walk\")), (name: \"B\", motion: Clip(clip: \"Run\"))], transitions: [(from: \"A\", to: \"B\", duration: -1)])",
            "duration -1",
        ),
        ("(parameters: [Float(name: \"a b\")], states: [])", "parameter 0 \"a b\""),
        (
            "(parameters: [Float(name: \"a\"), Bool(name: \"a\")], states: [])",
            "parameter 1 \"a\": a second parameter",
        ),
    ];
    for (text, expected) in cases {
        let e = compile(text).expect_err(text);
        assert!(e.contains(expected), "{text}\n  gave: {e}\n  wanted: {expected}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
}

#[test]
fn nesting_is_bounded() {
    let mut motion = "Clip(clip: \"Walk\")".to_string();
    for _ in 0..20 {
        motion = format!("Blend(inputs: [(motion: {motion}, weight: 1)])");
    }
    let e = compile(&format!("(states: [(name: \"A\", motion: {motion})])")).unwrap_err();
    assert!(e.contains("nest at most"), "{e}");
}

#[test]
fn errors_are_typed() {
    let model = test_model();
    let e =
        Controller::from_text("(states: [(name: \"A\",\n  motion: Clip(clip: \"Walk\", sped: 2))])", &model)
            .unwrap_err();
    assert!(matches!(e, ControllerError::Syntax { line: 2, .. }), "{e:?}");
    let e = Controller::from_text(
        "(states: [(name: \"A\", motion: Blend(inputs: [(motion: Clip(clip: \"Jog\"), weight: 1)]))])",
        &model,
    )
    .unwrap_err();
    let ControllerError::State { index: 0, name, problem: StateProblem::Motion(motion) } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(name, "A");
    let MotionError::Input { input: 0, source } = motion else { panic!("{motion:?}") };
    assert_eq!(
        **source,
        MotionError::Clip(UnknownClip { key: "Jog".into(), clips: vec!["Walk".into(), "Run".into()] })
    );
    assert_eq!(e.to_string(), "state 0 \"A\": motion: input 0: no clip \"Jog\" (clips: \"Walk\", \"Run\")");
    let e = Controller::from_text(
        "(parameters: [Float(name: \"s\")], states: [(name: \"A\", motion: Clip(clip: \"Walk\")), \
         (name: \"B\", motion: Clip(clip: \"Run\"))], transitions: [(from: \"A\", to: \"B\", when: [\"s\"])])",
        &model,
    )
    .unwrap_err();
    let ControllerError::Transition {
        index: 0, problem: TransitionProblem::Condition { source, .. }, ..
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!(**source, ConditionError::FloatWithoutComparison("s".into()));
}

#[test]
fn a_file_is_named_before_its_error() {
    let model = test_model();
    let dir = std::env::temp_dir().join(format!("vkskin-compile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("walk.ron");
    let shown = path.display().to_string();
    std::fs::write(&path, "(states: [(name: \"A\" motion: Clip(clip: \"Walk\"))])").unwrap();
    let e = Controller::load(&path, &model, u64::MAX).unwrap_err();
    assert!(e.to_string().starts_with(&format!("{shown}:1:")), "{e}");
    assert!(matches!(e.root(), ControllerError::Syntax { line: 1, .. }), "{e:?}");
    std::fs::write(&path, "(initial: \"B\", states: [])").unwrap();
    let e = Controller::load(&path, &model, u64::MAX).unwrap_err();
    assert_eq!(e.to_string(), format!("{shown}: initial: no state \"B\""));
    std::fs::remove_file(&path).unwrap();
    let e = Controller::load(&path, &model, u64::MAX).unwrap_err();
    assert!(matches!(e, ControllerError::Read { .. }), "{e:?}");
    assert!(e.to_string().starts_with(&format!("{shown}: cannot read: ")), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn names_are_escaped_and_shortened() {
    let long = "é".repeat(100);
    let e = compile(&format!("(states: [(name: \"A\", motion: Clip(clip: \"{long}\\n\"))])")).unwrap_err();
    assert!(!e.contains(&long) && e.contains('…'), "{e}");
    let e = compile("(states: [(name: \"A\", motion: Clip(clip: \"x\\u{1b}[2J\"))])").unwrap_err();
    assert!(e.contains("no clip \"x\\u{1b}[2J\""), "{e}");
}
