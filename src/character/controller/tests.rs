//! Controllers checked against the hand-built test model: a full file
//! compiles, every problem is named (and typed), a file's name comes first,
//! names are escaped. They need no files but the scratch ones they write
//! (the model is built in code, `crate::test_model`).

use crate::character::Controller;
use crate::character::controller::{
    ConditionError, ControllerError, ControllerFile, Curve, MotionDef, MotionError, ParameterDef, StateDef,
    StateProblem, TransitionDef, TransitionProblem, UnknownClip,
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

/// The longest controller message accepted, in characters: a transition's
/// message may quote its two states, its condition and the condition's
/// parameter, each shortened to 64 characters.
const MAX_MESSAGE_CHARS: usize = 350;

#[track_caller]
fn short_line(e: &str) {
    assert!(!e.contains('\n'), "one line: {e}");
    assert!(e.chars().count() <= MAX_MESSAGE_CHARS, "{} characters: {}", e.len(), &e[..e.len().min(600)]);
}

#[test]
fn megabyte_names_conditions_and_fields_give_short_lines() {
    let mega = "n".repeat(1 << 20);
    // Refused while parsing, by the caps.
    let name = compile(&format!("(states: [(name: \"{mega}\", motion: Clip(clip: \"Walk\"))])")).unwrap_err();
    assert!(name.contains("a name of 1048576 bytes (the longest a name may be is 1024)"), "{name}");
    let when = compile(&format!(
        "(states: [(name: \"A\", motion: Clip(clip: \"Walk\"))], transitions: [(from: \"A\", to: \"A\", when: [\"{mega}\"])])"
    ))
    .unwrap_err();
    assert!(when.contains("a condition of 1048576 bytes"), "{when}");
    let field =
        compile(&format!("(states: [(name: \"A\", motion: Clip(clip: \"Walk\", {mega}: 1))])")).unwrap_err();
    assert!(field.contains("Unexpected field named `nnn") && field.contains('…'), "{field}");
    let variant = compile(&format!("(states: [(name: \"A\", motion: {mega}(clip: \"Walk\"))])")).unwrap_err();
    let typed =
        compile(&format!("(states: [(name: \"A\", motion: Clip(clip: \"Walk\", speed: \"{mega}\"))])"))
            .unwrap_err();
    for e in [&name, &when, &field, &variant, &typed] {
        short_line(e);
    }
    // Built in code, past the parser's caps: the compiler shortens names itself.
    let model = test_model();
    let long = "é".repeat(1 << 19);
    let clip = |c: &str| MotionDef::Clip { clip: c.into(), looping: true, speed: 1.0 };
    let state = |name: &str, c: &str| StateDef { name: name.into(), motion: clip(c) };
    let mut file = ControllerFile {
        parameters: vec![ParameterDef::Float { name: long.clone(), default: 0.0, min: None, max: None }],
        initial: None,
        states: vec![state(&long, "Walk"), state("B", &long)],
        transitions: Vec::new(),
        layers: Vec::new(),
        root_motion: None,
    };
    let errors = |file: &ControllerFile| Controller::compile(file, &model).expect_err("refused").to_string();
    short_line(&errors(&file));
    file.states[1].motion = clip("Run");
    file.transitions = vec![TransitionDef {
        from: long.clone(),
        to: format!("{long}x"),
        when: vec![long.clone()],
        exit_time: None,
        duration: 0.0,
        curve: Curve::Smooth,
        priority: 0,
    }];
    short_line(&errors(&file));
    file.transitions[0].to = "B".into();
    let e = errors(&file);
    assert!(e.contains("when \""), "{e}");
    short_line(&e);
    file.transitions.clear();
    file.initial = Some(format!("{long}x"));
    short_line(&errors(&file));
    file.initial = None;
    file.root_motion = Some(long.clone());
    short_line(&errors(&file));
}

#[test]
fn a_hundred_thousand_parameters_and_ten_thousand_transitions_compile() {
    let parameters: Vec<String> = (0..100_000).map(|i| format!("Float(name: \"p{i}\")")).collect();
    let states: Vec<String> =
        (0..32).map(|i| format!("(name: \"S{i}\", motion: Clip(clip: \"{}\"))", i % 2)).collect();
    let transitions: Vec<String> = (0..10_000)
        .map(|i| {
            format!(
                "(from: \"S{}\", to: \"S{}\", when: [\"p{} > 0.5\"])",
                i % 32,
                (i + 1) % 32,
                i * 7 % 100_000
            )
        })
        .collect();
    let text = format!(
        "(parameters: [{}], states: [{}], transitions: [{}])",
        parameters.join(","),
        states.join(","),
        transitions.join(",")
    );
    let c = compile(&text).unwrap();
    assert_eq!((c.parameters().len(), c.transitions().len()), (100_000, 10_000));
    assert_eq!(c.outgoing.iter().map(Vec::len).sum::<usize>(), 10_000);
    // The duplicate check still finds the last one.
    let duplicated = text.replacen("Float(name: \"p0\")", "Float(name: \"p99999\")", 1);
    let e = compile(&duplicated).unwrap_err();
    assert!(e.starts_with("parameter 99999 \"p99999\": a second parameter"), "{e}");
}

#[test]
fn counts_are_capped_while_parsing() {
    let many = |n: usize, item: &str| vec![item; n].join(",");
    let cases = [
        (
            format!("(states: [], transitions: [{}])", many(10_001, "(from: \"\", to: \"\")")),
            "more than 10000 transitions (the most a controller may have)",
        ),
        (
            format!("(states: [{}])", many(1_001, "(name: \"\", motion: Clip(clip: \"\"))")),
            "more than 1000 states",
        ),
        (
            format!("(parameters: [{}], states: [])", many(100_001, "Trigger(name: \"\")")),
            "more than 100000 parameters",
        ),
        (
            format!(
                "(states: [(name: \"A\", motion: Blend(inputs: [{}]))])",
                many(65, "(motion: Clip(clip: \"\"), weight: 1)")
            ),
            "more than 64 inputs (the most a blend may have)",
        ),
        (
            format!(
                "(states: [(name: \"A\", motion: BlendSpace1D(parameter: \"x\", points: [{}]))])",
                many(65, "(at: 0, motion: Clip(clip: \"\"))")
            ),
            "more than 64 points (the most a blend space may have)",
        ),
        (
            format!("(states: [], transitions: [(from: \"\", to: \"\", when: [{}])])", many(65, "\"x\"")),
            "more than 64 conditions (the most a transition may have)",
        ),
        (
            format!(
                "(states: [], layers: [(name: \"L\", motion: Clip(clip: \"\"), mask: [{}])])",
                many(4_097, "(joint: \"\")")
            ),
            "more than 4096 mask entries (the most a layer may have)",
        ),
        (
            format!("(states: [], layers: [{}])", many(101, "(name: \"L\", motion: Clip(clip: \"\"))")),
            "more than 100 layers",
        ),
    ];
    for (text, expected) in &cases {
        let e = compile(text).unwrap_err();
        assert!(e.contains(expected), "{e}\n  wanted: {expected}");
        short_line(&e);
    }
    let deep = format!("(states: [(name: \"A\", motion: {}", "Blend(inputs: [(motion: ".repeat(100_000));
    let e = compile(&deep).unwrap_err();
    assert!(e.ends_with("nested deeper than 256 levels (the most a controller may have)"), "{e}");
}

#[test]
fn values_are_checked_and_bounded() {
    let space = |at: &str| {
        format!(
            "(parameters: [Float(name: \"x\")], states: [(name: \"A\", motion: BlendSpace1D(parameter: \"x\", points: [(at: 0, motion: Clip(clip: \"Walk\")), (at: {at}, motion: Clip(clip: \"Run\"))]))])"
        )
    };
    let two = "(name: \"A\", motion: Clip(clip: \"Walk\")), (name: \"B\", motion: Clip(clip: \"Run\"))";
    let transition =
        |fields: &str| format!("(states: [{two}], transitions: [(from: \"A\", to: \"B\", {fields})])");
    let cases = [
        (space("3.4e38"), "point 1: at 340000000000000000000000000000000000000 is not a number in [-1000000, 1000000]"),
        (space("-1000001"), "point 1: at -1000001"),
        (space("NaN"), "point 1: at NaN"),
        ("(states: [(name: \"A\", motion: Clip(clip: \"Walk\", speed: 1e30))])".to_string(), "speed 1000000000000000000000000000000 is not a number > 0 and <= 1000"),
        ("(states: [(name: \"A\", motion: Clip(clip: \"Walk\", speed: NaN))])".to_string(), "speed NaN"),
        (transition("duration: 1e7"), "duration 10000000 is not a number of seconds in [0, 1000000]"),
        (transition("duration: inf"), "duration inf"),
        (transition("exit_time: 1e9"), "exit_time 1000000000 is not a number in [0, 1000000]"),
        (transition("exit_time: NaN"), "exit_time NaN"),
        (
            "(parameters: [Float(name: \"x\")], states: [(name: \"A\", motion: BlendSpace1D(parameter: \"x\", smoothing: 1e9, points: [(at: 0, motion: Clip(clip: \"Walk\"))]))])".to_string(),
            "smoothing 1000000000 is not a number of seconds in [0, 1000000]",
        ),
        ("(parameters: [Float(name: \"x\", default: 5, min: 0, max: 1)], states: [])".to_string(), "parameter 0 \"x\": default 5 is outside min 0 .. max 1"),
        ("(parameters: [Float(name: \"x\", default: 0, min: 2, max: 1)], states: [])".to_string(), "min 2 and max 1 do not make a range"),
        ("(parameters: [Float(name: \"x\", default: inf)], states: [])".to_string(), "default inf is not finite"),
        ("(parameters: [Float(name: \"x\", min: NaN)], states: [])".to_string(), "min NaN"),
        (
            "(parameters: [Float(name: \"x\")], states: [(name: \"A\", motion: Clip(clip: \"Walk\"))], transitions: [(from: \"*\", to: \"A\", when: [\"x > 1e39\"])])".to_string(),
            "\"1e39\" is not a finite number",
        ),
        (
            "(parameters: [Float(name: \"x\")], states: [(name: \"A\", motion: Blend(inputs: [(motion: Clip(clip: \"Walk\"), weight: -1)]))])".to_string(),
            "input 0: weight -1 is not finite and >= 0",
        ),
    ];
    for (text, expected) in &cases {
        let e = compile(text).expect_err(text);
        assert!(e.contains(expected), "{text}\n  gave: {e}\n  wanted: {expected}");
    }
    assert!(compile(&space("1000000")).is_ok());
}

#[test]
fn close_points_and_extreme_inputs_give_finite_weights() {
    // Neighbouring floats: the blend between them is still a number.
    let text = "(parameters: [Float(name: \"x\")], states: [(name: \"A\", motion: BlendSpace1D(parameter: \"x\", points: [(at: 1, motion: Clip(clip: \"Walk\")), (at: 1.0000001, motion: Clip(clip: \"Run\")), (at: -1000000, motion: Clip(clip: \"Walk\")), (at: 1000000, motion: Clip(clip: \"Run\"))]))])";
    let c = compile(text).unwrap();
    let mut out = vec![0.0; c.leaves().len()];
    for x in [1.0, 1.00000005, 1.0000001, -3.4e38, 3.4e38, 999_999.9, -1e6, f32::NAN, f32::MIN_POSITIVE] {
        c.state_weights(0, &[x], &[x], &mut out);
        assert!(out.iter().all(|w| w.is_finite() && *w >= 0.0), "x = {x}: {out:?}");
        let total: f32 = out.iter().sum();
        assert!((total - 1.0).abs() < 1e-5, "x = {x}: {out:?}");
    }
}

#[test]
fn a_triggered_layers_envelope_rises_holds_and_falls_to_zero_at_its_end() {
    use super::{LayerTrigger, ParameterId};
    let t = LayerTrigger { parameter: ParameterId(0), fade_in: 0.2, fade_out: 0.4, length: 2.0 };
    assert_eq!(t.envelope(0.0), 0.0);
    assert!((t.envelope(0.1) - 0.5).abs() < 1e-6, "half-way in: {}", t.envelope(0.1));
    assert_eq!(t.envelope(0.2), 1.0);
    assert_eq!(t.envelope(1.6), 1.0);
    assert!((t.envelope(1.8) - 0.5).abs() < 1e-6, "half-way out: {}", t.envelope(1.8));
    for outside in [-0.1, 2.0, 5.0, f32::NAN] {
        assert_eq!(t.envelope(outside), 0.0, "{outside}");
    }
    // Fades longer than the run: they meet below 1.
    let short = LayerTrigger { length: 0.3, ..t };
    let peak = (0..=300).map(|i| short.envelope(i as f32 * 0.001)).fold(0.0, f32::max);
    assert!(peak > 0.3 && peak < 1.0, "{peak}");
    // No fades: full weight for the whole run.
    let sharp = LayerTrigger { fade_in: 0.0, fade_out: 0.0, ..t };
    assert_eq!((sharp.envelope(0.0), sharp.envelope(1.999), sharp.envelope(2.0)), (1.0, 1.0, 0.0));
}

#[test]
fn a_mask_reaches_from_its_first_to_its_last_weighted_joint() {
    use super::mask_joints;
    assert_eq!(mask_joints(&[0.0, 0.5, 0.0, 1.0, 0.0]), 1..4);
    assert_eq!(mask_joints(&[1.0; 3]), 0..3);
    assert_eq!(mask_joints(&[0.0, 0.0]), 0..0);
    assert_eq!(mask_joints(&[]), 0..0);
}
