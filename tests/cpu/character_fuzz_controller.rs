//! Structured fuzzing of controller files: the repository's controllers
//! (the built-in character's, as written and as `ControllerFile::to_ron`
//! writes it, and the test controllers below) cut into RON tokens and
//! mutated by proptest-generated edits (numbers set to boundary values,
//! NaN and infinities, names replaced by hostile ones, elements removed,
//! duplicated, repeated or swapped, blend trees nested deep, a byte-order
//! mark, truncation, byte flips), then parsed and compiled against the
//! built-in character's rig. Whatever the input: no panic, an error is one
//! short line, and a controller that compiles runs a few updates with
//! parameter changes and triggers to a finite pose.
//!
//! The smoke run takes about `VKSKIN_FUZZ_SECONDS` (default 30) with a
//! fixed seed; a longer run (see the guide's testing page) sets the time,
//! `VKSKIN_FUZZ_SEED` and `VKSKIN_FUZZ_THREADS`. A failing input is written
//! to the temp folder.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use vkskin::asset::{Model, load_default_character};
use vkskin::character::controller::{ControllerFile, DEFAULT_CONTROLLER};
use vkskin::character::{Character, Controller, ParameterKind, ParameterValue};

/// How often a run prints its execution count.
const PROGRESS_EVERY: Duration = Duration::from_secs(300);

/// Longest error line accepted, in characters (a transition's message may
/// quote four names of 64 characters).
const MAX_ERROR_CHARS: usize = 350;

/// Controllers written for the tests: layers (additive with a reference,
/// override with a mask), nested blends, every parameter kind.
const TEST_CONTROLLERS: &[&str] = &[
    r#"(
    parameters: [Float(name: "w", default: 0.5, min: 0, max: 1), Float(name: "speed", default: 1, min: -2, max: 6),
        Bool(name: "grounded", default: true), Trigger(name: "jump")],
    states: [
        (name: "Walk", motion: Blend(sync: true, inputs: [
            (motion: Clip(clip: "Walk"), weight: 1.0),
            (motion: BlendSpace1D(parameter: "speed", smoothing: 0.2, points: [
                (at: 0.0, motion: Clip(clip: "Idle", speed: 0.5)),
                (at: 3.4, motion: Clip(clip: "Run")),
            ]), weight: "w"),
        ])),
        (name: "Jump", motion: Clip(clip: "Jump", looping: false)),
    ],
    transitions: [
        (from: "Walk", to: "Jump", when: ["jump", "grounded == true", "speed >= 0.5"], duration: 0.2, curve: Linear),
        (from: "Jump", to: "Walk", exit_time: 0.9, duration: 0.1, priority: 2),
        (from: "*", to: "Walk", when: ["!grounded", "speed != 3"], duration: 0.5),
    ],
    layers: [
        (name: "Arms", motion: Clip(clip: "Jump", looping: false), blending: Additive, weight: "w",
            mask: [(joint: "Chest"), (joint: "Head", weight: 0.25, children: false)],
            reference: (clip: "Jump", time: 0.1)),
        (name: "Spine", motion: Clip(clip: "Run"), weight: 0.5, mask: [(joint: "Root", weight: 0.5)]),
    ],
    root_motion: "Root",
)"#,
    r#"(
    parameters: [Float(name: "x", default: 2, min: 0, max: 4)],
    initial: "B",
    states: [
        (name: "A", motion: BlendSpace1D(parameter: "x", points: [
            (at: 1, motion: Clip(clip: "0")), (at: 2, motion: Clip(clip: "1")), (at: 3, motion: Clip(clip: "2")),
        ])),
        (name: "B", motion: Clip(clip: "Walk", speed: 2)),
    ],
    transitions: [(from: "B", to: "A", when: ["x > 1"]), (from: "A", to: "B", when: ["x < 1"], duration: 1)],
)"#,
];

/// Numbers that find overflow, NaN and off-by-one bugs.
const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "0.5",
    "2",
    "NaN",
    "inf",
    "-inf",
    "1e38",
    "3.4e38",
    "-3.4e38",
    "1e39",
    "1e-45",
    "1e-38",
    "1e6",
    "1000000.1",
    "-1e6",
    "1000",
    "1001",
    "4294967296",
    "-2147483649",
    "1.0000001",
];

/// Names and conditions aimed at lookups, escaping and the condition parser.
const STRINGS: &[&str] = &[
    "\"\"",
    "\"*\"",
    "\"0\"",
    "\"99\"",
    "\"animation_0\"",
    "\"speed\"",
    "\"a b\"",
    "\"x\\u{1b}[2J\\n\"",
    "\"speed > 1e38\"",
    "\"speed > NaN\"",
    "\"!jump\"",
    "\"jump == true\"",
    "\"grounded < 1\"",
    "\"<=\"",
    "\"Root\"",
    "\"Chest\"",
];

/// Identifiers: variants, fields, values.
const IDENTS: &[&str] = &[
    "Clip",
    "Blend",
    "BlendSpace1D",
    "Float",
    "Bool",
    "Trigger",
    "Additive",
    "Override",
    "Linear",
    "Smooth",
    "true",
    "false",
    "Some",
    "None",
    "inputs",
    "points",
    "weight",
    "motion",
    "mask",
    "unknown_field",
];

/// One edit; the selectors are reduced modulo what the input offers.
#[derive(Debug, Clone)]
struct Edit {
    kind: u8,
    at: u64,
    arg: u64,
}

fn edit() -> impl Strategy<Value = Edit> {
    (any::<u8>(), any::<u64>(), any::<u64>()).prop_map(|(kind, at, arg)| Edit { kind, at, arg })
}

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Str,
    Number,
    Ident,
    Punct,
}

type Token = (Kind, String);

/// RON text as tokens (whitespace and comments dropped).
fn tokenize(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        let kind = if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i = (i + 1).min(chars.len());
            Kind::Str
        } else if c.is_ascii_digit()
            || ((c == '-' || c == '+') && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            i += 1;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || matches!(chars[i], '.' | '_' | '-' | '+'))
            {
                i += 1;
            }
            Kind::Number
        } else if c.is_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            Kind::Ident
        } else {
            i += 1;
            Kind::Punct
        };
        out.push((kind, chars[start..i].iter().collect()));
    }
    out
}

/// The index of the bracket closing the one at `open` (or the end).
fn closing(tokens: &[Token], open: usize) -> usize {
    let mut depth = 0i64;
    for (i, (kind, text)) in tokens.iter().enumerate().skip(open) {
        if *kind == Kind::Punct {
            match text.as_str() {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                return i;
            }
        }
    }
    tokens.len() - 1
}

/// The `n`-th token of `kind` (modulo their count), if any.
fn nth_of(tokens: &[Token], n: u64, keep: impl Fn(&Token) -> bool) -> Option<usize> {
    let positions: Vec<usize> = (0..tokens.len()).filter(|&i| keep(&tokens[i])).collect();
    (!positions.is_empty()).then(|| positions[(n % positions.len() as u64) as usize])
}

fn is_open(t: &Token) -> bool {
    t.0 == Kind::Punct && matches!(t.1.as_str(), "(" | "[")
}

/// Applies one token-level edit.
fn apply(tokens: &mut Vec<Token>, e: &Edit) {
    if tokens.is_empty() {
        return;
    }
    let pick = |n: usize| (e.arg % n as u64) as usize;
    let set =
        |tokens: &mut Vec<Token>, i: usize, kind: Kind, text: &str| tokens[i] = (kind, text.to_string());
    match e.kind % 16 {
        0..=2 => {
            if let Some(i) = nth_of(tokens, e.at, |t| t.0 == Kind::Number) {
                set(tokens, i, Kind::Number, NUMBERS[pick(NUMBERS.len())]);
            }
        }
        3 => {
            let i = (e.at % tokens.len() as u64) as usize;
            set(tokens, i, Kind::Number, NUMBERS[pick(NUMBERS.len())]);
        }
        4 => {
            if let Some(i) = nth_of(tokens, e.at, |t| t.0 == Kind::Str) {
                set(tokens, i, Kind::Str, STRINGS[pick(STRINGS.len())]);
            }
        }
        5 => {
            // Another name of the same file: references that resolve.
            if let (Some(i), Some(j)) =
                (nth_of(tokens, e.at, |t| t.0 == Kind::Str), nth_of(tokens, e.arg, |t| t.0 == Kind::Str))
            {
                tokens[i] = tokens[j].clone();
            }
        }
        6 => {
            if let Some(i) = nth_of(tokens, e.at, |t| t.0 == Kind::Ident) {
                set(tokens, i, Kind::Ident, IDENTS[pick(IDENTS.len())]);
            }
        }
        7 => {
            tokens.remove((e.at % tokens.len() as u64) as usize);
        }
        8 | 9 => {
            // An element duplicated next to itself, or removed.
            if let Some(open) = nth_of(tokens, e.at, is_open) {
                let close = closing(tokens, open);
                if e.kind % 16 == 8 {
                    let mut copy = tokens[open..=close].to_vec();
                    copy.push((Kind::Punct, ",".into()));
                    tokens.splice(open..open, copy);
                } else {
                    let end =
                        if tokens.get(close + 1).is_some_and(|t| t.1 == ",") { close + 1 } else { close };
                    tokens.drain(open..=end);
                }
            }
        }
        10 => {
            if let (Some(i), Some(j)) =
                (nth_of(tokens, e.at, |t| t.0 == Kind::Str), nth_of(tokens, e.arg, |t| t.0 == Kind::Str))
            {
                tokens.swap(i, j);
            }
        }
        11 => {
            // A motion wrapped in blends, past the depth limit or just under.
            if let Some(i) = nth_of(tokens, e.at, |t| t.0 == Kind::Ident && t.1.starts_with("Clip")) {
                let close = closing(tokens, i + 1);
                let levels = pick(24);
                let before: Vec<Token> =
                    std::iter::repeat_n(tokenize("Blend(inputs: [(motion: "), levels).flatten().collect();
                let after: Vec<Token> =
                    std::iter::repeat_n(tokenize(", weight: 1)])"), levels).flatten().collect();
                tokens.splice(close + 1..close + 1, after);
                tokens.splice(i..i, before);
            }
        }
        12 => {
            // Many copies of one element.
            if let Some(open) = nth_of(tokens, e.at, is_open) {
                let close = closing(tokens, open);
                let mut copy = tokens[open..=close].to_vec();
                copy.push((Kind::Punct, ",".into()));
                let many: Vec<Token> = std::iter::repeat_n(copy, 1 + pick(300)).flatten().collect();
                tokens.splice(open..open, many);
            }
        }
        13 => {
            let i = (e.at % tokens.len() as u64) as usize;
            let junk = ["(", ")", "[", "]", "{", "}", ",", ":", "\"", "#", "!", "'", "Some(", "-"];
            tokens.insert(i, (Kind::Punct, junk[pick(junk.len())].into()));
        }
        14 => {
            if let Some(i) = nth_of(tokens, e.at, |t| t.0 == Kind::Str) {
                let long = ["é", "a", "\\n", "_"][pick(4)].repeat(pick(3000));
                set(tokens, i, Kind::Str, &format!("\"{long}\""));
            }
        }
        _ => {
            if let Some(i) = nth_of(tokens, e.at, |t| t.0 == Kind::Punct) {
                let puncts = ["(", ")", "[", "]", ",", ":"];
                set(tokens, i, Kind::Punct, puncts[pick(puncts.len())]);
            }
        }
    }
}

/// The tokens as text, with the whole-file edits of `first`: one case in
/// 32 gets a byte-order mark, one in 16 is cut short, one in 16 has a byte
/// changed (to another printable character: the text stays UTF-8).
fn text_of(tokens: &[Token], first: &Edit) -> String {
    let mut text = tokens.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join(" ");
    match first.kind {
        248.. => text.insert(0, '\u{feff}'),
        232..248 if first.kind.is_multiple_of(2) => {
            let mut cut = (first.arg % (text.len() as u64 + 1)) as usize;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        232..248 => {
            let mut bytes = text.into_bytes();
            if !bytes.is_empty() {
                let at = (first.arg % bytes.len() as u64) as usize;
                if bytes[at].is_ascii() {
                    bytes[at] = b' ' + (first.at % 95) as u8;
                }
            }
            text = String::from_utf8(bytes).unwrap_or_default();
        }
        _ => {}
    }
    text
}

/// Parameter values that push the runtime: huge, tiny, negative.
const VALUES: &[f32] = &[0.0, 0.5, 1.3, 2.0, 3.4, -1.0, 1e6, -1e6, 1e38, -3.4e38, 3.4e38, 1e-40];

/// Updates that a game might make: frames, a pause, a long hitch.
const STEPS: &[f32] = &[1.0 / 60.0, 0.0, 0.25, 1.0 / 30.0, 10.0, 1.0 / 60.0];

/// Parses, compiles and runs one input: whether it compiled, or `Err`
/// describing a finding.
fn check(model: &Model, text: &str, salt: u64) -> Result<bool, String> {
    let result = std::panic::catch_unwind(|| -> Result<bool, String> {
        let controller = match Controller::from_text(text, model) {
            Ok(c) => c,
            Err(e) => {
                let message = e.to_string();
                if message.contains('\n') || message.chars().count() > MAX_ERROR_CHARS {
                    return Err(format!(
                        "error not one short line: {:?}",
                        &message[..message.len().min(600)]
                    ));
                }
                if message.contains("recursion_limit") || message.contains("serde_stacker") {
                    return Err(format!("error gives RON's advice: {message}"));
                }
                return Ok(false);
            }
        };
        let controller = Arc::new(controller);
        let mut character =
            Character::new(model.rig.clone(), controller.clone()).map_err(|e| format!("new: {e}"))?;
        for (frame, &dt) in STEPS.iter().enumerate() {
            for (i, p) in controller.parameters().iter().enumerate().take(8) {
                let roll = salt.rotate_left((frame * 8 + i) as u32);
                let value = match p.kind {
                    ParameterKind::Float => {
                        ParameterValue::Float(VALUES[(roll % VALUES.len() as u64) as usize])
                    }
                    ParameterKind::Bool => ParameterValue::Bool(roll.is_multiple_of(2)),
                    ParameterKind::Trigger if roll.is_multiple_of(3) => ParameterValue::Trigger,
                    ParameterKind::Trigger => continue,
                };
                character.set_named(&p.name, value).map_err(|e| format!("set {}: {e}", p.name))?;
            }
            character.update(dt).map_err(|e| format!("update {frame}: {e}"))?;
            let pose = character.local_pose();
            let finite = pose.locals.iter().all(|t| {
                t.translation.iter().chain(t.scale.iter()).all(|v| v.is_finite())
                    && t.rotation.coords.iter().all(|v| v.is_finite())
            });
            let world = character.output().world().iter().all(|m| m.iter().all(|v| v.is_finite()));
            if !(finite && world) {
                return Err(format!("frame {frame}: the pose is not finite"));
            }
            if character.leaf_weights().iter().any(|w| !w.is_finite()) {
                return Err(format!("frame {frame}: a clip weight is not finite"));
            }
        }
        Ok(true)
    });
    result.unwrap_or_else(|_| Err("panicked".into()))
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The seeds, as tokens.
fn seeds() -> Vec<Vec<Token>> {
    let built_in = ControllerFile::parse(DEFAULT_CONTROLLER).unwrap().to_ron();
    let mut texts = vec![DEFAULT_CONTROLLER.to_string(), built_in];
    texts.extend(TEST_CONTROLLERS.iter().map(|t| t.to_string()));
    let model = load_default_character().unwrap();
    for text in &texts {
        Controller::from_text(text, &model).unwrap_or_else(|e| panic!("a seed compiles: {e}"));
    }
    texts.iter().map(|t| tokenize(t)).collect()
}

#[test]
fn fuzz_controller_files() {
    let seeds = Arc::new(seeds());
    let model = Arc::new(load_default_character().unwrap());
    let seconds = env_u64("VKSKIN_FUZZ_SECONDS", 30);
    let base_seed = env_u64("VKSKIN_FUZZ_SEED", 0x0063_6f6e_7472_6f6c);
    let threads = env_u64("VKSKIN_FUZZ_THREADS", 1).max(1);
    let executions = Arc::new(AtomicU64::new(0));
    let compiled = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    // The panic hook would print every caught panic: keep the output readable.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let (seeds, model, executions, compiled) =
                (seeds.clone(), model.clone(), executions.clone(), compiled.clone());
            std::thread::spawn(move || -> Result<(), String> {
                let mut key = [0u8; 32];
                key[..8].copy_from_slice(&(base_seed + t).to_le_bytes());
                let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &key);
                let mut runner = TestRunner::new_with_rng(Config::default(), rng);
                let strategy = (any::<usize>(), any::<u64>(), prop::collection::vec(edit(), 1..6));
                let mut next_report = Instant::now() + PROGRESS_EVERY;
                while Instant::now() < deadline {
                    // A long run says how far it got, so a killed run still counts.
                    if t == 0 && Instant::now() >= next_report {
                        eprintln!(
                            "fuzz_controller_files: {} executions so far",
                            executions.load(Ordering::Relaxed)
                        );
                        next_report += PROGRESS_EVERY;
                    }
                    let (which, salt, edits) = strategy.new_tree(&mut runner).unwrap().current();
                    let mut tokens = seeds[which % seeds.len()].clone();
                    for e in &edits {
                        apply(&mut tokens, e);
                    }
                    let text = text_of(&tokens, &edits[0]);
                    executions.fetch_add(1, Ordering::Relaxed);
                    match check(&model, &text, salt) {
                        Ok(ok) => {
                            compiled.fetch_add(u64::from(ok), Ordering::Relaxed);
                        }
                        Err(finding) => {
                            let saved = std::env::temp_dir().join(format!("vkskin-fuzz-controller-{t}.ron"));
                            let _ = std::fs::write(&saved, &text);
                            return Err(format!(
                                "{finding} (edits {edits:?}; input saved to {})",
                                saved.display()
                            ));
                        }
                    }
                }
                Ok(())
            })
        })
        .collect();
    let results: Vec<_> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    std::panic::set_hook(hook);
    let (n, ok) = (executions.load(Ordering::Relaxed), compiled.load(Ordering::Relaxed));
    eprintln!(
        "fuzz_controller_files: {n} executions ({ok} compiled) in {seconds} s on {threads} thread(s), seed {base_seed}"
    );
    for r in results {
        r.unwrap();
    }
    assert!(n > 0);
}
