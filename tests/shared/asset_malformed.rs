//! Broken glTF files built in memory: each must give an error that names the
//! file and the element, never a panic.

use crate::common::base_file::*;
use serde_json::json;
use std::path::Path;
use vkskin::asset::import::load_from_bytes;

/// Loads `base` expecting an error that names the file and contains `needle`.
#[track_caller]
fn expect_err(base: &Base, needle: &str) -> String {
    let e = base.load().map(|m| m.warnings).expect_err("loaded a broken file");
    let text = e.to_string();
    assert!(text.starts_with("t.gltf: "), "{text}");
    assert!(text.contains(needle), "expected {needle:?} in: {text}");
    assert!(!text.contains('\n'), "{text}");
    text
}

#[test]
fn base_file_loads() {
    let m = Base::new().load().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.skeleton.len(), 3);
    assert_eq!(m.skins.len(), 1);
    assert_eq!(m.skins[0].inverse_binds[1][(1, 3)], -1.0);
    assert_eq!(m.clips.len(), 1);
    assert_eq!(m.clips[0].name.as_deref(), Some("Wave"));
    assert_eq!(m.clips[0].duration, 1.0);
    assert_eq!(m.instances[0].skin, Some(0));
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    let glb = load_from_bytes("t.glb", &Base::new().glb(), None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(glb.meshes, m.meshes);
    assert_eq!(glb.clips, m.clips);
}

#[test]
fn truncated_glb() {
    let glb = Base::new().glb();
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let cuts =
        [0, 3, 4, 8, 11, 12, 15, 19, 20, 21, 20 + json_len / 2, 20 + json_len, 24 + json_len, glb.len() - 1];
    for cut in cuts {
        let e = load_from_bytes("t.glb", &glb[..cut], None).expect_err("truncated GLB loaded");
        assert!(e.to_string().starts_with("t.glb: "), "{e}");
    }
    // A GLB whose header admits the truncation still fails on the chunk length.
    let mut lying = glb[..20 + json_len / 2].to_vec();
    let len = lying.len() as u32;
    lying[8..12].copy_from_slice(&len.to_le_bytes());
    let e = load_from_bytes("t.glb", &lying, None).unwrap_err();
    assert!(e.to_string().contains("GLB chunk 0"), "{e}");
}

#[test]
fn nan_key_value() {
    let mut b = Base::new();
    b.put_f32(ROTATIONS + 16, &[f32::NAN]);
    expect_err(&b, "animation 0 \"Wave\" channel 0: output value 1 is not finite");
}

#[test]
fn nan_key_time() {
    let mut b = Base::new();
    b.buf[TIMES + 4..TIMES + 8].copy_from_slice(&0x7fc0_0001u32.to_le_bytes());
    expect_err(&b, "animation 0 \"Wave\" channel 0: key time 1 is not finite");
}

#[test]
fn zero_quaternion() {
    let mut b = Base::new();
    b.put_f32(ROTATIONS + 32, &[0.0; 4]);
    expect_err(&b, "animation 0 \"Wave\" channel 0: zero-length rotation at key 2");
}

#[test]
fn decreasing_times() {
    let mut b = Base::new();
    b.put_f32(TIMES, &[0.0, 0.52, 0.5]);
    let text = expect_err(&b, "");
    assert_eq!(
        text,
        "t.gltf: animation 0 \"Wave\" channel 0: key times not increasing at key 2 (0.50 after 0.52)"
    );
}

#[test]
fn equal_times() {
    let mut b = Base::new();
    b.put_f32(TIMES, &[0.0, 0.5, 0.5]);
    expect_err(&b, "channel 0: key times not increasing at key 2 (0.50 after 0.50)");
}

#[test]
fn negative_time() {
    let mut b = Base::new();
    b.put_f32(TIMES, &[-0.5, 0.5, 1.0]);
    expect_err(&b, "channel 0: key time 0 is negative");
}

#[test]
fn sampler_count_mismatch() {
    let mut b = Base::new();
    b.json["accessors"][6]["count"] = json!(2);
    expect_err(&b, "channel 0: sampler 0 has 3 key times but 2 output values (expected 3)");
    let mut b = Base::new();
    b.json["animations"][0]["samplers"][0]["interpolation"] = json!("CUBICSPLINE");
    expect_err(&b, "has 3 key times but 3 output values (expected 9)");
}

#[test]
fn joint_index_out_of_range() {
    let mut b = Base::new();
    b.buf[JOINTS + 8..JOINTS + 10].copy_from_slice(&5u16.to_le_bytes());
    expect_err(&b, "mesh 0 \"tri\" primitive 0: vertex 1 uses joint 5 (weight 1), but skin 0 has 2 joints");
}

#[test]
fn junk_joint_with_zero_weight_is_clamped() {
    let mut b = Base::new();
    b.buf[JOINTS + 10..JOINTS + 12].copy_from_slice(&900u16.to_le_bytes());
    let m = b.load().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.meshes[0].primitives[0].influences.as_ref().unwrap().joints[5], 0);
    assert!(m.warnings.iter().any(|w| w.contains("1 out-of-range joint indices")), "{:?}", m.warnings);
}

#[test]
fn weights_renormalised_and_zero_weights_bound() {
    let mut b = Base::new();
    b.put_f32(WEIGHTS + 32, &[1.0, 1.0, 0.0, 0.0]);
    b.put_f32(WEIGHTS + 16, &[0.0; 4]);
    let m = b.load().unwrap_or_else(|e| panic!("{e}"));
    let w = &m.meshes[0].primitives[0].influences.as_ref().unwrap().weights;
    assert_eq!(&w[4..12], &[1.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0]);
    assert!(
        m.warnings
            .iter()
            .any(|w| w
                == "mesh 0 \"tri\" primitive 0: 1 vertices had skin weights not summing to 1; renormalised"),
        "{:?}",
        m.warnings
    );
    assert!(m.warnings.iter().any(|w| w.contains("all skin weights zero")), "{:?}", m.warnings);
}

#[test]
fn negative_weight() {
    let mut b = Base::new();
    b.put_f32(WEIGHTS + 32, &[1.5, -0.5]);
    expect_err(&b, "mesh 0 \"tri\" primitive 0: vertex 2 has skin weight -0.5");
}

#[test]
fn node_cycle() {
    let mut b = Base::new();
    b.json["nodes"][2]["children"] = json!([1]);
    expect_err(&b, "is its own ancestor");
}

#[test]
fn node_with_two_parents() {
    let mut b = Base::new();
    b.json["nodes"][0]["children"] = json!([2]);
    expect_err(&b, "node 2 has two parents: 0 and 1");
}

#[test]
fn child_out_of_range() {
    let mut b = Base::new();
    b.json["nodes"][1]["children"] = json!([2, 9]);
    expect_err(&b, "nodes[1].children[1]: index out of range");
}

#[test]
fn accessor_out_of_view() {
    let mut b = Base::new();
    b.json["accessors"][0]["byteOffset"] = json!(4);
    expect_err(
        &b,
        "mesh 0 \"tri\" primitive 0 POSITION: accessor 0: reads bytes 4..40 of bufferView 0, which has 36",
    );
    let mut b = Base::new();
    b.json["accessors"][6]["count"] = json!(4_000_000_000u64);
    expect_err(&b, "accessor 6: reads bytes 0..64000000000 of bufferView 6, which has 48");
}

#[test]
fn view_out_of_buffer() {
    let mut b = Base::new();
    b.json["bufferViews"][6]["byteLength"] = json!(100);
    expect_err(&b, "bufferView 6: bytes 256..356 lie outside buffer 0, which has 304");
    let mut b = Base::new();
    b.json["bufferViews"][6]["byteOffset"] = json!(u64::MAX);
    expect_err(&b, "bufferView 6: bytes 18446744073709551615..overflow lie outside buffer 0");
}

#[test]
fn buffer_shorter_than_byte_length() {
    let mut b = Base::new();
    b.json["buffers"][0]["byteLength"] = json!(400);
    expect_err(&b, "buffer 0: byteLength is 400 but the data has only 304 bytes");
}

#[test]
fn invalid_json() {
    let e = load_from_bytes("t.gltf", b"{\"asset\": {\"version\": \"2.0\"},\n  \"nodes\": [,]}", None)
        .unwrap_err();
    assert!(e.to_string().starts_with("t.gltf: invalid JSON: "), "{e}");
    assert!(e.to_string().contains("line 2 column"), "{e}");
    let e = load_from_bytes("t.gltf", b"{\"asset\": {\"version\": 2}}", None).unwrap_err();
    assert!(e.to_string().contains("invalid glTF JSON"), "{e}");
    let e = load_from_bytes("t.gltf", b"", None).unwrap_err();
    assert!(e.to_string().starts_with("t.gltf: "), "{e}");
}

#[test]
fn index_out_of_range_in_json() {
    let mut b = Base::new();
    b.json["nodes"][0]["mesh"] = json!(7);
    expect_err(&b, "nodes[0].mesh: index out of range");
    let mut b = Base::new();
    b.json["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = json!(70);
    expect_err(&b, "accessor 70 does not exist");
    let mut b = Base::new();
    b.json["animations"][0]["channels"][0]["target"]["node"] = json!(99);
    expect_err(&b, "animation 0 \"Wave\" channel 0: target node 99 does not exist");
}

#[test]
fn required_extensions() {
    let mut b = Base::new();
    b.json["extensionsUsed"] = json!(["KHR_draco_mesh_compression"]);
    b.json["extensionsRequired"] = json!(["KHR_draco_mesh_compression"]);
    expect_err(&b, "extension KHR_draco_mesh_compression is not supported");
    let mut b = Base::new();
    b.json["extensionsUsed"] = json!(["KHR_mesh_quantization", "KHR_materials_variants"]);
    b.json["extensionsRequired"] = json!(["KHR_mesh_quantization", "KHR_materials_variants"]);
    let m = b.load().unwrap_or_else(|e| panic!("{e}"));
    assert!(m.warnings.iter().any(|w| w.contains("KHR_materials_variants")), "{:?}", m.warnings);
}

#[test]
fn missing_position() {
    let mut b = Base::new();
    b.json["meshes"][0]["primitives"][0]["attributes"].as_object_mut().unwrap().remove("POSITION");
    expect_err(&b, "meshes[0].primitives[0].attributes[\"POSITION\"]: missing");
}

#[test]
fn duplicate_channel_target() {
    let mut b = Base::new();
    b.json["animations"][0]["channels"] = json!([
        {"sampler": 0, "target": {"node": 2, "path": "rotation"}},
        {"sampler": 0, "target": {"node": 2, "path": "rotation"}}
    ]);
    expect_err(&b, "channel 1: node 2 rotation is already animated by channel 0");
}

#[test]
fn channel_without_node_is_ignored() {
    let mut b = Base::new();
    b.json["animations"][0]["channels"] = json!([
        {"sampler": 0, "target": {"path": "rotation"}},
        {"sampler": 0, "target": {"node": 2, "path": "rotation"}}
    ]);
    // Extras survive the re-parse that dropping a channel needs.
    b.json["meshes"][0]["extras"] = json!({"targetNames": [], "other": 1});
    b.json["nodes"][0]["extras"] = json!({"x": [1, 2]});
    let m = b.load().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.clips[0].joint_tracks.len(), 1);
    assert!(
        m.warnings.iter().any(|w| w == "animation 0 channel 0: no target node; ignored"),
        "{:?}",
        m.warnings
    );
    b.put_f32(TIMES, &[0.0, 0.5, 0.4]);
    // The error names the channel by its index in the file, not after dropping channel 0.
    expect_err(&b, "animation 0 \"Wave\" channel 1: key times not increasing");
}

#[test]
fn weights_on_a_node_without_morph_targets() {
    let mut b = Base::new();
    b.json["animations"][0]["channels"][0]["target"] = json!({"node": 0, "path": "weights"});
    expect_err(&b, "channel 0: node 0's mesh 0 has no morph targets");
    b.json["animations"][0]["channels"][0]["target"] = json!({"node": 1, "path": "weights"});
    expect_err(&b, "channel 0: node 1 has no mesh");
}

#[test]
fn skin_problems() {
    let mut b = Base::new();
    b.json["skins"][0]["joints"] = json!([]);
    expect_err(&b, "skin 0: has no joints");
    let mut b = Base::new();
    b.json["skins"][0]["joints"] = json!([1, 2, 0]);
    expect_err(&b, "skin 0: 2 inverse bind matrices for 3 joints");
    let mut b = Base::new();
    b.put_f32(IBM + 64, &[f32::INFINITY]);
    expect_err(&b, "skin 0: inverse bind matrix 1 is not finite");
}

#[test]
fn external_buffer_from_memory() {
    let mut b = Base::new();
    b.json["buffers"][0]["uri"] = json!("missing%20file.bin");
    let json = serde_json::to_vec(&b.json).unwrap();
    let e = load_from_bytes("t.gltf", &json, None).unwrap_err();
    assert!(e.to_string().contains("buffer 0: refers to external file"), "{e}");
    let e = load_from_bytes("t.gltf", &json, Some(Path::new("/nonexistent-dir"))).unwrap_err();
    assert!(e.to_string().contains("/nonexistent-dir/missing file.bin"), "{e}");
}

/// Deterministic mutations (byte flips and truncations) of a real GLB: every
/// one must return, never panic.
#[test]
fn mutated_files_never_panic() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/assets/Fox/Fox.glb");
    let mut inputs =
        vec![("built.glb".to_string(), Base::new().glb()), ("built.gltf".to_string(), Base::new().gltf())];
    match std::fs::read(&shared) {
        Ok(bytes) => inputs.push(("Fox.glb".to_string(), bytes)),
        Err(_) => eprintln!("../shared/assets not found: mutating only the built files"),
    }
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    for (name, bytes) in &inputs {
        // Most of the structure sits in the header and JSON: aim half the hits there.
        let json_end = if bytes.starts_with(b"glTF") {
            20 + u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize
        } else {
            bytes.len()
        };
        for i in 0..200 {
            let pos = if i % 2 == 0 { next() % json_end } else { next() % bytes.len() };
            let mut mutated = bytes.clone();
            let what = match next() % 4 {
                0 => {
                    mutated.truncate(pos);
                    "truncated at"
                }
                1 => {
                    // A digit somewhere in the JSON becomes 9: indices and counts grow.
                    if let Some(d) = mutated[pos..json_end.max(pos)].iter().position(u8::is_ascii_digit) {
                        mutated[pos + d] = b'9';
                    }
                    "digit bumped after"
                }
                _ => {
                    mutated[pos] ^= (next() % 255 + 1) as u8;
                    "byte flipped at"
                }
            };
            let result = std::panic::catch_unwind(|| load_from_bytes(name, &mutated, None));
            assert!(result.is_ok(), "{name}: panicked with {what} {pos} (iteration {i})");
        }
    }
}

#[test]
fn duplicate_skin_joint() {
    let mut b = Base::new();
    b.json["skins"][0]["joints"] = json!([1, 1]);
    expect_err(&b, "skin 0: joint 1 is node 1, already joint 0");
}

#[test]
fn misaligned_accessor() {
    let mut b = Base::new();
    b.json["accessors"][0]["byteOffset"] = json!(2);
    b.json["accessors"][0]["count"] = json!(2);
    expect_err(&b, "accessor 0: starts at byte 2 of its buffer, not a multiple of its 4-byte components");
}

#[test]
fn texture_format_extensions_are_ignorable_and_view_less_accessors_are_zeros() {
    let mut b = Base::new();
    b.json["extensionsUsed"] = json!(["KHR_texture_basisu", "EXT_texture_webp"]);
    b.json["extensionsRequired"] = json!(["KHR_texture_basisu", "EXT_texture_webp"]);
    // A second set of weights given by an accessor without bufferView: all zeros.
    let accessors = b.json["accessors"].as_array_mut().unwrap();
    accessors.push(json!({"componentType": 5126, "count": 3, "type": "VEC3"}));
    b.json["meshes"][0]["primitives"][0]["targets"] = json!([{"POSITION": 7}]);
    let m = b.load().unwrap_or_else(|e| panic!("{e}"));
    let target = &m.meshes[0].primitives[0].morph_targets[0];
    let deltas = target.positions.as_ref().expect("position deltas").to_dense(3);
    assert_eq!(deltas, vec![[0.0; 3]; 3]);
}

#[test]
fn strips_and_fans_are_drawn_as_triangles() {
    // Five indices, three triangles: a strip and a fan give different lists.
    // Strip: (0 1 2), (1 2 0) with its winding kept, (2 0 1). Fan: the hub 0
    // with (1 2), (2 0), (0 1).
    let strip = vec![0, 1, 2, 2, 1, 0, 2, 0, 1];
    let fan = vec![0, 1, 2, 0, 2, 0, 0, 0, 1];
    for (mode, expected) in [(5, strip), (6, fan)] {
        let mut b = Base::new();
        let at = b.buf.len();
        for ix in [0u16, 1, 2, 0, 1, 0] {
            b.buf.extend_from_slice(&ix.to_le_bytes());
        }
        b.json["buffers"][0]["byteLength"] = json!(b.buf.len());
        b.json["bufferViews"]
            .as_array_mut()
            .unwrap()
            .push(json!({"buffer": 0, "byteOffset": at, "byteLength": 10}));
        let views = b.json["bufferViews"].as_array().unwrap().len() - 1;
        let accessors = b.json["accessors"].as_array_mut().unwrap();
        accessors.push(json!({"bufferView": views, "componentType": 5123, "count": 5, "type": "SCALAR"}));
        let indices = accessors.len() - 1;
        b.json["meshes"][0]["primitives"][0]["indices"] = json!(indices);
        b.json["meshes"][0]["primitives"][0]["mode"] = json!(mode);
        let m = b.load().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.meshes[0].primitives[0].indices, expected, "mode {mode}");
    }
    let mut b = Base::new();
    b.json["meshes"][0]["primitives"][0]["mode"] = json!(1); // LINES
    let m = b.load().unwrap_or_else(|e| panic!("{e}"));
    assert!(m.meshes[0].primitives.is_empty());
    assert!(m.warnings.iter().any(|w| w.contains("draws no triangles")), "{:?}", m.warnings);
}

/// The binary on a table of bad files: `inspect`, `dump` and `render` each
/// end with exit code 1 and exactly one line on stderr, which names the file
/// and the element (before any GPU work), and never panic.
#[test]
fn the_binary_reports_bad_files_in_one_line() {
    let bin = env!("CARGO_BIN_EXE_vkskin");
    let dir = std::env::temp_dir().join(format!("vkskin-bad-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let nan_key = {
        let mut b = Base::new();
        b.put_f32(ROTATIONS + 16, &[f32::NAN]);
        b
    };
    let zero_rotation = {
        let mut b = Base::new();
        b.put_f32(ROTATIONS + 32, &[0.0; 4]);
        b
    };
    let times_back = {
        let mut b = Base::new();
        b.put_f32(TIMES, &[0.0, 0.6, 0.5]);
        b
    };
    let far_joint = {
        let mut b = Base::new();
        b.buf[JOINTS + 8..JOINTS + 10].copy_from_slice(&5u16.to_le_bytes());
        b
    };
    let cycle = {
        let mut b = Base::new();
        b.json["nodes"][2]["children"] = json!([1]);
        b
    };
    let outside = {
        let mut b = Base::new();
        b.json["bufferViews"][6]["byteOffset"] = json!(256 + 100);
        b
    };
    let truncated = Base::new().glb()[..40].to_vec();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("nan-key.gltf", nan_key.gltf(), "animation 0 \"Wave\" channel 0: output value 1 is not finite"),
        ("zero-rotation.glb", zero_rotation.glb(), "zero-length rotation at key 2"),
        ("times-back.gltf", times_back.gltf(), "key times not increasing at key 2"),
        ("far-joint.gltf", far_joint.gltf(), "uses joint 5 (weight 1), but skin 0 has 2 joints"),
        ("cycle.gltf", cycle.gltf(), "is its own ancestor"),
        ("outside.gltf", outside.gltf(), "bufferView 6"),
        ("truncated.glb", truncated, "GLB"),
    ];
    for (name, bytes, element) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let file = path.display().to_string();
        let out_png = dir.join("out.png").display().to_string();
        let commands: [Vec<&str>; 3] = [
            vec!["inspect", &file],
            vec!["dump", &file, "--clip", "0"],
            vec!["render", &file, "--out", &out_png],
        ];
        for args in commands {
            let out = std::process::Command::new(bin).args(&args).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            let what = format!("vkskin {}: {stderr}", args.join(" "));
            assert_eq!(out.status.code(), Some(1), "{what}");
            assert!(out.stdout.is_empty(), "{what}: wrote to stdout");
            assert_eq!(stderr.lines().count(), 1, "{what}: one line");
            assert!(stderr.starts_with(&format!("vkskin: {file}: ")), "{what}: names the file");
            assert!(stderr.contains(element), "{what}: names the element ({element})");
            assert!(!stderr.contains("internal error") && !stderr.contains("panicked"), "{what}");
        }
        assert!(!dir.join("out.png").exists(), "{name}: render left an image behind");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn zero_node_rotation() {
    let mut b = Base::new();
    b.json["nodes"][2]["rotation"] = json!([0.0, 0.0, 0.0, 0.0]);
    expect_err(&b, "rotation [0.0, 0.0, 0.0, 0.0] is zero or not finite");
}

#[test]
fn skins_and_joint_streams_must_agree_or_warn() {
    // A rigid mesh on a node without a skin: nothing to say.
    let mut rigid = Base::new();
    rigid.json["nodes"][0] = json!({"name": "body", "mesh": 0});
    let attributes = &mut rigid.json["meshes"][0]["primitives"][0]["attributes"];
    attributes.as_object_mut().unwrap().retain(|k, _| k == "POSITION");
    let m = rigid.load().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.instances[0].skin, None);
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    // Joint streams but no skin on the node: drawn unskinned, with a warning.
    let mut unbound = Base::new();
    unbound.json["nodes"][0] = json!({"name": "body", "mesh": 0});
    let m = unbound.load().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.instances[0].skin, None);
    assert!(
        m.warnings.iter().any(|w| w.contains("has skin weights but the node has no skin")),
        "{:?}",
        m.warnings
    );
    // A skin but no joint streams: likewise.
    rigid.json["nodes"][0]["skin"] = json!(0);
    let m = rigid.load().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.instances[0].skin, None);
    assert!(m.warnings.iter().any(|w| w.contains("has no JOINTS_0/WEIGHTS_0")), "{:?}", m.warnings);
}

#[test]
fn sparse_vec3_accessor_replaces_whole_elements() {
    // Morph deltas from a view-less accessor with two sparse VEC3 values
    // (vertices 1 and 0 of the positions) at indices 0 and 1.
    let mut b = Base::new();
    let accessors = b.json["accessors"].as_array_mut().unwrap();
    accessors.push(json!({"componentType": 5126, "count": 3, "type": "VEC3", "sparse": {
        "count": 2,
        "indices": {"bufferView": 3, "componentType": 5123},
        "values": {"bufferView": 0, "byteOffset": 12}
    }}));
    b.json["meshes"][0]["primitives"][0]["targets"] = json!([{"POSITION": 7}]);
    let m = b.load().unwrap_or_else(|e| panic!("{e}"));
    let target = &m.meshes[0].primitives[0].morph_targets[0];
    let deltas = target.positions.as_ref().expect("position deltas").to_dense(3);
    assert_eq!(deltas, vec![[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0; 3]]);
}
