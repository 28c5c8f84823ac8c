//! The JSON the binary writes, checked against its documented shape (key
//! sets, types, counts that must agree with the model): `dump` (the
//! DESIGN.md contract), `inspect --json` and `simulate --json` (the trace
//! contract). A renamed key, a dropped field or a short array fails here.

use serde_json::Value;
use std::process::Command;

const GLB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/default_character.glb");

/// Runs the binary, which must succeed, and returns its standard output.
fn vkskin(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_vkskin")).args(args).output().unwrap();
    assert!(out.status.success(), "vkskin {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The object's keys are exactly `keys`.
#[track_caller]
fn keys(v: &Value, keys: &[&str], what: &str) {
    let object = v.as_object().unwrap_or_else(|| panic!("{what}: not an object: {v}"));
    let mut got: Vec<&str> = object.keys().map(String::as_str).collect();
    let mut want = keys.to_vec();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want, "{what}: keys");
}

#[track_caller]
fn uint(v: &Value, what: &str) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("{what}: not an unsigned integer: {v}"))
}

#[track_caller]
fn number(v: &Value, what: &str) -> f64 {
    let x = v.as_f64().unwrap_or_else(|| panic!("{what}: not a number: {v}"));
    assert!(x.is_finite(), "{what}: {x}");
    x
}

#[track_caller]
fn array<'a>(v: &'a Value, what: &str) -> &'a Vec<Value> {
    v.as_array().unwrap_or_else(|| panic!("{what}: not an array: {v}"))
}

#[track_caller]
fn string<'a>(v: &'a Value, what: &str) -> &'a str {
    v.as_str().unwrap_or_else(|| panic!("{what}: not a string: {v}"))
}

/// `inspect --json`, checked; returns it.
fn inspect(file: &str) -> Value {
    let doc: Value = serde_json::from_str(&vkskin(&["inspect", file, "--json"])).unwrap();
    keys(&doc, &["file", "nodes", "skins", "clips", "meshes", "warnings"], "inspect");
    assert_eq!(string(&doc["file"], "file"), file);
    for (i, n) in array(&doc["nodes"], "nodes").iter().enumerate() {
        keys(n, &["node", "name", "parent", "mesh", "skin", "joint_of"], "node");
        assert_eq!(uint(&n["node"], "node"), i as u64, "nodes in order");
        string(&n["name"], "node name");
        for k in ["parent", "mesh", "skin"] {
            assert!(n[k].is_null() || n[k].is_u64(), "node {i} {k}: {}", n[k]);
        }
        array(&n["joint_of"], "joint_of").iter().for_each(|s| _ = uint(s, "joint_of"));
    }
    for s in array(&doc["skins"], "skins") {
        keys(s, &["skin", "name", "joints", "palette_of"], "skin");
        assert!(uint(&s["palette_of"], "palette_of") <= uint(&s["skin"], "skin"));
        array(&s["joints"], "skin joints").iter().for_each(|j| _ = uint(j, "joint"));
    }
    for (i, c) in array(&doc["clips"], "clips").iter().enumerate() {
        let what = format!("clip {i}");
        keys(
            c,
            &[
                "clip",
                "name",
                "start",
                "duration",
                "translation_channels",
                "rotation_channels",
                "scale_channels",
                "weight_channels",
                "interpolations",
                "events",
            ],
            &what,
        );
        assert_eq!(uint(&c["clip"], &what), i as u64);
        assert!(c["name"].is_null() || c["name"].is_string(), "{what}: name");
        assert!(number(&c["start"], &what) <= number(&c["duration"], &what));
        for k in ["translation_channels", "rotation_channels", "scale_channels", "weight_channels", "events"]
        {
            uint(&c[k], &what);
        }
        for s in array(&c["interpolations"], &what) {
            assert!(["STEP", "LINEAR", "CUBICSPLINE"].contains(&string(s, &what)), "{what}: {s}");
        }
    }
    for m in array(&doc["meshes"], "meshes") {
        keys(m, &["mesh", "name", "morph_targets", "primitives"], "mesh");
        array(&m["morph_targets"], "morph targets").iter().for_each(|t| _ = string(t, "target"));
        for p in array(&m["primitives"], "primitives") {
            keys(
                p,
                &["primitive", "vertices", "triangles", "attributes", "influences", "material"],
                "primitive",
            );
            for k in ["primitive", "vertices", "triangles", "influences"] {
                uint(&p[k], k);
            }
            assert!(p["material"].is_null() || p["material"].is_u64());
            assert!(array(&p["attributes"], "attributes").iter().any(|a| a == "POSITION"));
        }
    }
    array(&doc["warnings"], "warnings").iter().for_each(|w| _ = string(w, "warning"));
    doc
}

/// `dump`, checked against the DESIGN.md format and the model's own counts.
fn dump(file: &str, clip: Option<&str>, info: &Value) {
    let mut args = vec!["dump", file, "--time", "0.5"];
    if let Some(c) = clip {
        args.extend(["--clip", c]);
    }
    let doc: Value = serde_json::from_str(&vkskin(&args)).unwrap();
    let what = format!("dump {file} {clip:?}");
    keys(&doc, &["clip", "time", "joints", "primitives"], &what);
    assert_eq!(number(&doc["time"], &what), 0.5);
    match clip {
        None => assert!(doc["clip"].is_null(), "{what}: clip"),
        Some(c) => assert!(doc["clip"] == c || doc["clip"].as_u64().map(|i| i.to_string()) == Some(c.into())),
    }
    // Every node that is a joint of some skin, once, by node index.
    let mut skin_nodes: Vec<u64> = array(&info["skins"], "skins")
        .iter()
        .flat_map(|s| array(&s["joints"], "joints").iter().map(|j| uint(j, "joint")))
        .collect();
    skin_nodes.sort_unstable();
    skin_nodes.dedup();
    let joints = array(&doc["joints"], &what);
    let nodes: Vec<u64> = joints.iter().map(|j| uint(&j["node"], "joint node")).collect();
    assert_eq!(nodes, skin_nodes, "{what}: joints");
    for j in joints {
        keys(j, &["node", "name", "world"], "joint");
        let node = &info["nodes"][uint(&j["node"], "node") as usize];
        assert_eq!(j["name"], node["name"], "{what}: joint name");
        let world = array(&j["world"], "world");
        assert_eq!(world.len(), 16, "{what}: world");
        world.iter().for_each(|v| _ = number(v, "world"));
    }
    // Every primitive of every node that draws a mesh, positions as long as its vertices.
    let mut expected = Vec::new();
    for n in array(&info["nodes"], "nodes") {
        if let Some(mesh) = n["mesh"].as_u64() {
            for p in array(&info["meshes"][mesh as usize]["primitives"], "primitives") {
                expected.push((
                    mesh,
                    uint(&p["primitive"], "p"),
                    uint(&n["node"], "n"),
                    uint(&p["vertices"], "v"),
                ));
            }
        }
    }
    let primitives = array(&doc["primitives"], &what);
    assert_eq!(primitives.len(), expected.len(), "{what}: primitives");
    for (p, (mesh, primitive, node, vertices)) in primitives.iter().zip(expected) {
        keys(p, &["mesh", "primitive", "node", "skinned", "positions"], "primitive");
        assert_eq!(
            (uint(&p["mesh"], "mesh"), uint(&p["primitive"], "p"), uint(&p["node"], "n")),
            (mesh, primitive, node)
        );
        assert_eq!(
            p["skinned"].as_bool(),
            Some(!info["nodes"][node as usize]["skin"].is_null()),
            "{what}: skinned"
        );
        let positions = array(&p["positions"], "positions");
        assert_eq!(
            positions.len() as u64,
            3 * vertices,
            "{what}: mesh {mesh} primitive {primitive} positions"
        );
        positions.iter().for_each(|v| _ = number(v, "position"));
    }
}

#[test]
fn dump_and_inspect_follow_their_formats() {
    let info = inspect(GLB);
    // Idle, Walk, Run, Jump, and the layers' Wave, Breathing and Talk.
    assert_eq!(array(&info["clips"], "clips").len(), 7);
    dump(GLB, None, &info);
    dump(GLB, Some("Walk"), &info);
    // A shared model with several skinned and rigid parts, and an unnamed clip.
    for (file, clip) in [("CesiumMan/CesiumMan.glb", "0"), ("RobotExpressive/RobotExpressive.glb", "Wave")] {
        let Some(path) = crate::common::shared_file(file, "the format checks") else { return };
        let path = path.display().to_string();
        let info = inspect(&path);
        dump(&path, Some(clip), &info);
        if file.starts_with("RobotExpressive") {
            // Its two skins (a hand mesh each) are one palette.
            let palette_of: Vec<u64> =
                array(&info["skins"], "skins").iter().map(|s| uint(&s["palette_of"], "palette_of")).collect();
            assert_eq!(palette_of, [0, 0]);
        }
    }
}

#[test]
fn simulate_json_follows_the_trace_format() {
    let text = vkskin(&[
        "simulate",
        GLB,
        "--json",
        "--fps",
        "30",
        "--duration",
        "3",
        "--set",
        "0.5:speed=2",
        "--set",
        "2:jump",
    ]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 91);
    let clips = ["Idle", "Walk", "Run", "Jump", "Wave", "Breathing", "Talk"];
    let info = inspect(GLB);
    let durations: Vec<f64> =
        array(&info["clips"], "clips").iter().map(|c| number(&c["duration"], "duration")).collect();
    for (i, line) in lines.iter().enumerate() {
        let f: Value = serde_json::from_str(line).unwrap();
        let what = format!("frame {i}");
        let fields =
            ["frame", "time", "state", "transition", "weights", "events", "clips", "layers", "root_motion"];
        keys(&f, &fields, &what);
        assert_eq!(uint(&f["frame"], &what), i as u64);
        assert!((number(&f["time"], &what) - i as f64 / 30.0).abs() < 1e-9);
        assert!(["Idle", "Locomotion", "Jump"].contains(&string(&f["state"], &what)), "{what}");
        if !f["transition"].is_null() {
            keys(&f["transition"], &["to", "progress"], &what);
            string(&f["transition"]["to"], &what);
            assert!((0.0..1.0).contains(&number(&f["transition"]["progress"], &what)));
        }
        let weights = f["weights"].as_object().unwrap();
        assert!(weights.keys().all(|k| clips.contains(&k.as_str())), "{what}: {weights:?}");
        let sum: f64 = weights.values().map(|w| number(w, &what)).sum();
        assert!((sum - 1.0).abs() < 1e-5, "{what}: weights sum to {sum}");
        for e in array(&f["events"], &what) {
            keys(e, &["clip", "name", "clip_time"], &what);
            assert!(clips.contains(&string(&e["clip"], &what)));
            string(&e["name"], &what);
            number(&e["clip_time"], &what);
        }
        // What produced the pose: the base layer's clips carry the weights.
        let layers = array(&f["layers"], &what);
        keys(&layers[0], &["name", "mode", "weight", "mask", "morphs"], &what);
        assert_eq!(string(&layers[0]["mode"], &what), "base");
        let mut by_clip = serde_json::Map::new();
        for c in array(&f["clips"], &what) {
            keys(c, &["clip", "index", "time", "weight", "layer"], &what);
            let name = string(&c["clip"], &what);
            assert_eq!(clips[uint(&c["index"], &what) as usize], name, "{what}: index of {name}");
            assert!(uint(&c["layer"], &what) < layers.len() as u64);
            let time = number(&c["time"], &what);
            let duration = durations[uint(&c["index"], &what) as usize];
            assert!((0.0..=duration).contains(&time), "{what}: {name} sampled at {time} s of {duration}");
            if uint(&c["layer"], &what) == 0 {
                let w =
                    by_clip.get(name).and_then(Value::as_f64).unwrap_or(0.0) + number(&c["weight"], &what);
                by_clip.insert(name.to_string(), w.into());
            }
        }
        for (name, w) in weights {
            let listed = by_clip.get(name).and_then(Value::as_f64).unwrap_or(0.0);
            assert!(
                (listed - number(w, &what)).abs() < 1e-6,
                "{what}: {name} weighs {w}, its clips {listed}"
            );
        }
        assert_eq!(string(&f["root_motion"]["name"], &what), "Root");
    }
}

#[test]
fn simulate_json_in_a_level_adds_position_root_delta_and_feet() {
    let text = vkskin(&[
        "simulate",
        GLB,
        "--json",
        "--fps",
        "30",
        "--duration",
        "2",
        "--level",
        "demo",
        "--spawn",
        "stairs",
        "--set",
        "0:speed=1.2",
    ]);
    let mut planted = 0;
    for (i, line) in text.lines().enumerate() {
        let f: Value = serde_json::from_str(line).unwrap();
        let what = format!("frame {i}");
        keys(
            &f,
            &[
                "frame",
                "time",
                "state",
                "transition",
                "weights",
                "events",
                "clips",
                "layers",
                "root_motion",
                "position",
                "root_delta",
                "feet",
                "grounded",
                "hands",
            ],
            &what,
        );
        assert!(f["grounded"].is_boolean(), "{what}: grounded");
        for (hand, name) in array(&f["hands"], &what).iter().zip(["Hand.L", "Hand.R"]) {
            keys(hand, &["joint", "target", "error_cm", "weight"], &what);
            assert_eq!(string(&hand["joint"], &what), name);
            assert_eq!(array(&hand["target"], &what).len(), 3);
            number(&hand["error_cm"], &what);
            assert!((0.0..=1.0).contains(&number(&hand["weight"], &what)), "{what}: hand weight");
        }
        assert_eq!(array(&f["position"], &what).len(), 3);
        keys(&f["root_delta"], &["requested", "applied"], &what);
        for k in ["requested", "applied"] {
            let v = array(&f["root_delta"][k], &what);
            assert_eq!(v.len(), 3);
            v.iter().for_each(|x| _ = number(x, &what));
        }
        let feet = array(&f["feet"], &what);
        assert_eq!(feet.len(), 2);
        for (foot, name) in feet.iter().zip(["Foot.L", "Foot.R"]) {
            keys(foot, &["joint", "target", "error_cm", "planted"], &what);
            assert_eq!(string(&foot["joint"], &what), name);
            assert_eq!(array(&foot["target"], &what).len(), 3);
            let error = number(&foot["error_cm"], &what);
            if foot["planted"].as_bool().unwrap() {
                planted += 1;
                assert!(error <= 1.0, "{what}: a planted foot {error} cm off");
            }
        }
    }
    assert!(planted > 20, "feet were planted ({planted})");
}

#[test]
fn without_a_model_simulate_dump_and_render_take_the_built_in_character() {
    // The built-in character's file with its controller beside it gives the
    // same output as no MODEL at all.
    let ron = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/default_character.ron");
    let trace = ["--json", "--fps", "10", "--duration", "2", "--set", "0.5:speed=1.5"];
    let with_file: Vec<&str> = ["simulate", GLB, "--controller", ron].iter().chain(&trace).copied().collect();
    let without: Vec<&str> = ["simulate"].iter().chain(&trace).copied().collect();
    assert_eq!(vkskin(&without), vkskin(&with_file));
    let dump = ["--clip", "Walk", "--time", "0.4"];
    let with_file: Vec<&str> = ["dump", GLB].iter().chain(&dump).copied().collect();
    let without: Vec<&str> = ["dump"].iter().chain(&dump).copied().collect();
    assert_eq!(vkskin(&without), vkskin(&with_file));
    let help = vkskin(&["render", "--help"]);
    assert!(help.contains("[MODEL]"), "MODEL is optional for render: {help}");
}

/// `inspect --compression`: one row per clip with its bytes, ratio, errors
/// within the bound and sampling cost (compressed and the runtime layout's
/// nlerp, both measured), as JSON and as the table with its totals.
#[test]
fn inspect_compression_reports_every_clip_with_its_sampling_cost() {
    let clips = array(&inspect(GLB)["clips"], "clips").len();
    assert!(clips >= 3, "the built-in character has its clips: {clips}");
    let rows: Value = serde_json::from_str(&vkskin(&["inspect", "--compression", "--json", GLB])).unwrap();
    let rows = array(&rows, "rows");
    assert_eq!(rows.len(), clips, "a row per clip");
    for (i, row) in rows.iter().enumerate() {
        let what = format!("row {i}");
        keys(
            row,
            &[
                "source",
                "clip",
                "baseline_bytes",
                "raw_bytes",
                "compressed_bytes",
                "compressed_parts",
                "ratio",
                "key_ratio",
                "max_error_cm",
                "mean_error_cm",
                "bound_cm",
                "raw_keys",
                "kept_keys",
                "sampling",
            ],
            &what,
        );
        let sampling =
            ["compressed_ns", "runtime_nlerp_ns", "compressed_between_keys_ns", "runtime_between_keys_ns"];
        keys(&row["sampling"], &sampling, &what);
        for key in sampling {
            assert!(number(&row["sampling"][key], &what) > 0.0, "{what}: {key} measured");
        }
        assert!(
            number(&row["max_error_cm"], &what) <= number(&row["bound_cm"], &what),
            "{what}: within the bound"
        );
        assert!(uint(&row["compressed_bytes"], &what) > 0, "{what}");
    }
    let text = vkskin(&["inspect", "--compression", GLB]);
    let header = text.lines().next().unwrap();
    assert!(header.contains("sample ns") && header.contains("vs nlerp"), "{header}");
    let rows = text.lines().filter(|l| !l.starts_with("sampling") && l.trim_end().ends_with('x'));
    assert_eq!(rows.count(), clips, "{text}");
    let summary = text.lines().last().unwrap();
    assert!(
        summary.starts_with("sampling (60 Hz playback") && summary.contains(&format!("of {clips} clips")),
        "{summary}"
    );
}
