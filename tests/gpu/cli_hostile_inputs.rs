//! Hostile files, as an attacker would write them: tiny files declaring
//! gigabytes, FIFOs and devices where files should be, URIs escaping the
//! model's folder, spec violations, terminal escapes in names. Each run of
//! `inspect`, `dump` and `render` (as a subprocess, under a 4 GiB
//! address-space limit and a timeout) must end with exit code 1 and one line
//! naming the file and the element, within 256 MB + 40 x the file size.

use crate::common::base_file::*;
use crate::common::bounded::{self, Outcome};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;
use vkskin::asset::images::{ImageFile, ImageSource, decode_rgba8};
use vkskin::asset::{AssetError, LoadOptions};

/// Long enough for a debug build on a loaded machine; a hang ends here.
const TIMEOUT: Duration = Duration::from_secs(60);

/// A fresh folder for one test's files.
fn folder(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("vkskin-hostile-{name}-")).tempdir().unwrap()
}

/// Writes `base` as a .gltf whose buffer is the external file `uri` (not
/// written here), returning the model's path.
fn external(dir: &Path, name: &str, base: &Base, uri: &str) -> PathBuf {
    let mut json = base.json.clone();
    json["buffers"][0]["uri"] = Value::String(uri.to_string());
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
    path
}

/// The budget the issue sets: 256 MB plus 40 times the file's size.
fn memory_limit(files_bytes: u64) -> u64 {
    (256 << 20) + 40 * files_bytes
}

/// Runs `inspect`, `dump` and `render` on `model` (plus `extra` options):
/// each must exit with 1 and one line naming `model` and containing
/// `element`, in bounded time and memory, leaving no image behind.
#[track_caller]
fn expect_one_line(model: &Path, element: &str, extra: &[&str]) {
    let file = model.display().to_string();
    let dir = model.parent().unwrap();
    let out_png = dir.join("out.png");
    // An image from an earlier run: a failed render must leave it as it was.
    std::fs::write(&out_png, b"earlier").unwrap();
    let size = std::fs::metadata(model).map(|m| m.len()).unwrap_or(0);
    let out = out_png.display().to_string();
    let commands: [Vec<&str>; 3] =
        [vec!["inspect", &file], vec!["dump", &file, "--clip", "0"], vec!["render", &file, "--out", &out]];
    for mut args in commands {
        args.extend_from_slice(extra);
        let o = bounded::run(&args, TIMEOUT);
        let what = o.describe(&args);
        assert_one_line(&o, &what, &file, element);
        assert!(o.peak_rss <= memory_limit(size), "{what}: more than 256 MB + 40 x {size} bytes");
    }
    assert_eq!(std::fs::read(&out_png).unwrap(), b"earlier", "{file}: render replaced the image");
}

#[track_caller]
fn assert_one_line(o: &Outcome, what: &str, file: &str, element: &str) {
    assert!(!o.timed_out, "{what}");
    assert_eq!(o.code, Some(1), "{what}");
    assert!(o.stdout.is_empty(), "{what}: wrote to stdout");
    assert_eq!(o.stderr.lines().count(), 1, "{what}: one line");
    assert!(o.stderr.starts_with(&format!("vkskin: {file}: ")), "{what}: names the file");
    assert!(o.stderr.contains(element), "{what}: names the element ({element})");
    assert!(!o.stderr.contains("internal error"), "{what}");
    assert!(!o.stderr.chars().any(|c| c.is_control() && c != '\n'), "{what}: control characters");
}

/// Adds a bufferView over `bytes` appended to the buffer; returns its index.
fn add_view(b: &mut Base, bytes: &[u8]) -> usize {
    while !b.buf.len().is_multiple_of(4) {
        b.buf.push(0);
    }
    let at = b.buf.len();
    b.buf.extend_from_slice(bytes);
    b.json["buffers"][0]["byteLength"] = json!(b.buf.len());
    let views = b.json["bufferViews"].as_array_mut().unwrap();
    views.push(json!({"buffer": 0, "byteOffset": at, "byteLength": bytes.len()}));
    views.len() - 1
}

/// Adds an accessor; returns its index.
fn add_accessor(b: &mut Base, accessor: Value) -> usize {
    let accessors = b.json["accessors"].as_array_mut().unwrap();
    accessors.push(accessor);
    accessors.len() - 1
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn tiny_files_declaring_gigabytes() {
    let dir = folder("budget");
    // A view-less MAT4 accessor of 2^26 matrices (8 GiB as f64) as inverse binds.
    let mut b = Base::new();
    let a = add_accessor(&mut b, json!({"componentType": 5126, "count": 1u64 << 26, "type": "MAT4"}));
    b.json["skins"][0]["inverseBindMatrices"] = json!(a);
    let path = write(dir.path(), "viewless-mat4.gltf", &b.gltf());
    expect_one_line(
        &path,
        "skin 0 inverseBindMatrices: accessor 7 (MAT4 FLOAT x 67108864, no bufferView): 4294967296 bytes of zeros",
        &[],
    );
    // A view-less VEC3 morph target in a 2 KB file (1.5 GB before it was refused).
    let mut b = Base::new();
    let a = add_accessor(&mut b, json!({"componentType": 5126, "count": 50_000_000, "type": "VEC3"}));
    b.json["meshes"][0]["primitives"][0]["targets"] = json!([{"POSITION": a}]);
    let path = write(dir.path(), "viewless-vec3.glb", &b.glb());
    expect_one_line(&path, "target 0 POSITION: accessor 7 (VEC3 FLOAT x 50000000, no bufferView)", &[]);
    // The same accessor read by many morph targets: each read is charged.
    let mut b = Base::new();
    // 2 MB of real data, read as 64 morph targets: 64 x 12 B x 3 per vertex.
    let data = add_view(&mut b, &vec![0u8; 699_999 * 12]);
    let a = add_accessor(
        &mut b,
        json!({"bufferView": data, "componentType": 5126, "count": 699_999, "type": "VEC3"}),
    );
    b.json["nodes"][0] = json!({"name": "body", "mesh": 0});
    b.json["meshes"][0]["primitives"][0] = json!({
        "attributes": {"POSITION": a},
        "targets": vec![json!({"POSITION": a}); 64]
    });
    let path = write(dir.path(), "aliased.glb", &b.glb());
    expect_one_line(&path, "needs", &[]);
    // A buffer whose byteLength claims 1 TB.
    let mut b = Base::new();
    b.json["buffers"][0]["byteLength"] = json!(1u64 << 40);
    let path = write(dir.path(), "huge-buffer.gltf", &b.gltf());
    expect_one_line(&path, "buffer 0 (byteLength 1099511627776) needs", &[]);
    // --max-memory lowers the cap for everything.
    let path = write(dir.path(), "fine.glb", &Base::new().glb());
    expect_one_line(&path, "the file needs", &["--max-memory", "100"]);
}

#[test]
fn a_skin_larger_than_a_palette() {
    let dir = folder("joints");
    let mut b = Base::new();
    let nodes = b.json["nodes"].as_array_mut().unwrap();
    let first = nodes.len();
    nodes.extend(std::iter::repeat_n(json!({}), 70_000));
    let joints: Vec<usize> = (first..first + 70_000).collect();
    b.json["scenes"][0]["nodes"] = json!([0, 1]);
    b.json["skins"][0] = json!({"joints": joints});
    let path = write(dir.path(), "joints.gltf", &b.gltf());
    expect_one_line(&path, "skin 0: 70000 joints, more than a palette holds (65536", &[]);
    // 100 skins listing the same 20,000 nodes: each has its own matrices.
    let mut b = Base::new();
    let nodes = b.json["nodes"].as_array_mut().unwrap();
    let first = nodes.len();
    nodes.extend(std::iter::repeat_n(json!({}), 20_000));
    let joints: Vec<usize> = (first..first + 20_000).collect();
    b.json["skins"] = json!(vec![json!({"joints": joints}); 100]);
    let compact = serde_json::to_vec(&serde_json::from_slice::<Value>(&b.gltf()).unwrap()).unwrap();
    let path = write(dir.path(), "skins.gltf", &compact);
    expect_one_line(&path, "(20000 joints) needs", &[]);
}

#[test]
fn many_nodes_and_instances_are_charged() {
    let dir = folder("instances");
    // A million empty nodes (3 MB): each becomes a joint with pose buffers.
    let mut b = Base::new();
    b.json["nodes"].as_array_mut().unwrap().extend(std::iter::repeat_n(json!({}), 1_000_000));
    let path = write(dir.path(), "nodes.gltf", &b.gltf());
    expect_one_line(&path, "1000003 nodes needs", &[]);
    // 2000 morph targets on one mesh, drawn by 50,000 nodes: 10^8 weights.
    let mut b = Base::new();
    b.json["meshes"][0]["primitives"][0] =
        json!({"attributes": {"POSITION": 0}, "targets": vec![json!({"POSITION": 0}); 2000]});
    b.json["nodes"].as_array_mut().unwrap().extend(std::iter::repeat_n(json!({"mesh": 0}), 50_000));
    let path = write(dir.path(), "morph-instances.gltf", &b.gltf());
    expect_one_line(&path, "2000 morph weights of mesh 0 \"tri\" needs", &[]);
}

#[test]
fn fifos_devices_and_directories_are_not_files() {
    let dir = folder("special");
    let fifo = dir.path().join("fifo.bin");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(made.success());
    // A FIFO as a buffer: opening it would block until a writer comes.
    let path = external(dir.path(), "fifo-buffer.gltf", &Base::new(), "fifo.bin");
    expect_one_line(&path, &format!("buffer 0: \"{}\" is a FIFO, not a regular file", fifo.display()), &[]);
    // A FIFO as the model itself.
    let model_fifo = dir.path().join("model.glb");
    assert!(std::process::Command::new("mkfifo").arg(&model_fifo).status().unwrap().success());
    expect_one_line(&model_fifo, "file is a FIFO, not a regular file", &[]);
    // A directory as the model, and as a buffer.
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    expect_one_line(&dir.path().join("sub"), "file is a directory", &[]);
    let path = external(dir.path(), "dir-buffer.gltf", &Base::new(), "sub");
    expect_one_line(&path, "sub\" is a directory, not a regular file", &[]);
    // /dev/zero: an absolute path, and a device even where allowed.
    let path = external(dir.path(), "zero.gltf", &Base::new(), "/dev/zero");
    expect_one_line(&path, "buffer 0: uri \"/dev/zero\" is an absolute path", &[]);
    expect_one_line(&path, "\"/dev/zero\" is a character device", &["--allow-outside-uris"]);
}

#[test]
fn uris_stay_in_the_model_folder() {
    let root = folder("escape");
    let models = root.path().join("models");
    std::fs::create_dir_all(models.join("sub")).unwrap();
    // The real buffer one level up: reachable only when allowed.
    let base = Base::new();
    std::fs::write(root.path().join("secret.bin"), &base.buf).unwrap();
    for (name, uri) in [
        ("dotdot.gltf", "../secret.bin"),
        ("nested.gltf", "sub/../../secret.bin"),
        ("encoded.gltf", "%2e%2e/secret.bin"),
        ("encoded-slash.gltf", "..%2Fsecret.bin"),
    ] {
        let path = external(&models, name, &base, uri);
        expect_one_line(&path, "leads outside the model's folder (--allow-outside-uris allows it)", &[]);
        let o = bounded::run(&["inspect", &path.display().to_string(), "--allow-outside-uris"], TIMEOUT);
        assert_eq!(o.code, Some(0), "{}", o.describe(&["inspect", name, "--allow-outside-uris"]));
    }
    let secret = root.path().join("secret.bin").display().to_string();
    let path = external(&models, "absolute.gltf", &base, &secret);
    expect_one_line(&path, "is an absolute path, outside the model's folder", &[]);
    let path = external(&models, "file-uri.gltf", &base, &format!("file://{secret}"));
    expect_one_line(&path, "is a file: URI", &[]);
    let path = external(&models, "passwd.gltf", &base, "../../../../../../etc/passwd");
    expect_one_line(&path, "leads outside the model's folder", &[]);
    let path = external(&models, "http.gltf", &base, "http://example.com/x.bin");
    expect_one_line(&path, "names no local file", &[]);
}

/// A symbolic link inside the model's folder that points out of it is
/// refused like `..` (the check is on the resolved path, not the text).
#[test]
fn symlinks_stay_in_the_model_folder() {
    let root = folder("symlink");
    let models = root.path().join("models");
    std::fs::create_dir_all(&models).unwrap();
    let base = Base::new();
    std::fs::write(root.path().join("secret.bin"), &base.buf).unwrap();
    std::os::unix::fs::symlink(root.path().join("secret.bin"), models.join("data.bin")).unwrap();
    std::os::unix::fs::symlink(root.path(), models.join("up")).unwrap();
    for (name, uri) in [("file-link.gltf", "data.bin"), ("folder-link.gltf", "up/secret.bin")] {
        let path = external(&models, name, &base, uri);
        expect_one_line(&path, "leads outside the model's folder through a symbolic link", &[]);
        let o = bounded::run(&["inspect", &path.display().to_string(), "--allow-outside-uris"], TIMEOUT);
        assert_eq!(o.code, Some(0), "{}", o.describe(&["inspect", name, "--allow-outside-uris"]));
    }
    // A link that stays inside the folder is read as before.
    std::fs::write(models.join("real.bin"), &base.buf).unwrap();
    std::os::unix::fs::symlink(models.join("real.bin"), models.join("inside.bin")).unwrap();
    let path = external(&models, "inside.gltf", &base, "inside.bin");
    let o = bounded::run(&["inspect", &path.display().to_string()], TIMEOUT);
    assert_eq!(o.code, Some(0), "{}", o.describe(&["inspect", "inside.gltf"]));
}

#[test]
fn sparse_accessors_follow_the_spec() {
    let dir = folder("sparse");
    let cases: [(&str, usize, &[u16], &str); 4] = [
        ("count.gltf", 5, &[0, 1, 2, 2, 2], "accessor 7: sparse count 5 is larger than count 3"),
        ("repeated.gltf", 2, &[1, 1], "accessor 7: sparse index 1 is 1, not above index 0 (1)"),
        ("unsorted.gltf", 2, &[2, 0], "accessor 7: sparse index 1 is 0, not above index 0 (2)"),
        ("outside.gltf", 2, &[0, 3], "accessor 7: sparse index 1 is 3, but count is 3"),
    ];
    for (name, count, indices, element) in cases {
        let mut b = Base::new();
        let bytes: Vec<u8> = indices.iter().flat_map(|i| i.to_le_bytes()).collect();
        let iv = add_view(&mut b, &bytes);
        let values = add_view(&mut b, &vec![0u8; 12 * count]);
        let a = add_accessor(
            &mut b,
            json!({"componentType": 5126, "count": 3, "type": "VEC3", "sparse": {
                "count": count,
                "indices": {"bufferView": iv, "componentType": 5123},
                "values": {"bufferView": values}}}),
        );
        b.json["meshes"][0]["primitives"][0]["targets"] = json!([{"POSITION": a}]);
        let path = write(dir.path(), name, &b.gltf());
        expect_one_line(&path, element, &[]);
    }
}

#[test]
fn scenes_list_roots_once() {
    let dir = folder("scenes");
    let mut b = Base::new();
    b.json["scenes"][0]["nodes"] = json!([0, 2]);
    let path = write(dir.path(), "non-root.gltf", &b.gltf());
    expect_one_line(&path, "scene 0: nodes[1]: node 2 is not a root (its parent is node 1)", &[]);
    let mut b = Base::new();
    b.json["scenes"][0] = json!({"name": "Main", "nodes": [0, 1, 0]});
    let path = write(dir.path(), "twice.gltf", &b.gltf());
    expect_one_line(&path, "scene 0 \"Main\": nodes[2]: node 0 is listed twice (also nodes[0])", &[]);
}

#[test]
fn singular_inverse_bind_matrices() {
    let dir = folder("ibm");
    // Joint 0 carries vertex 0's whole weight: an error.
    let mut b = Base::new();
    b.put_f32(IBM, &[0.0; 16]);
    let path = write(dir.path(), "singular.gltf", &b.gltf());
    expect_one_line(
        &path,
        "skin 0: inverse bind matrix 0 (joint node 1) is singular, and the joint influences vertices of mesh 0",
        &[],
    );
    // Joint 1 influences nothing once every weight is on joint 0: a warning.
    let mut b = Base::new();
    b.put_f32(WEIGHTS, &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
    for v in 0..3 {
        b.buf[JOINTS + 8 * v..JOINTS + 8 * v + 2].copy_from_slice(&0u16.to_le_bytes());
    }
    b.put_f32(IBM + 64, &[0.0; 16]);
    let m = b.load().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.warnings.len(), 1, "{:?}", m.warnings);
    assert!(
        m.warnings[0]
            .contains("inverse bind matrix 1 (joint node 2) is singular; the joint influences no vertex")
    );
    let path = write(dir.path(), "unused-singular.gltf", &b.gltf());
    let o = bounded::run(&["inspect", &path.display().to_string()], TIMEOUT);
    assert_eq!(o.code, Some(0), "{}", o.describe(&["inspect"]));
    assert!(o.stdout.contains("valid, with 1 warning (listed above)"), "{}", o.stdout);
}

#[test]
fn names_cannot_break_the_line_or_the_terminal() {
    let dir = folder("names");
    let mut b = Base::new();
    b.json["nodes"][2]["name"] = json!("arm\n\u{1b}[2J\u{7}");
    b.json["nodes"][2]["rotation"] = json!([0.0, 0.0, 0.0, 0.0]);
    let path = write(dir.path(), "escapes.gltf", &b.gltf());
    expect_one_line(&path, "node 2 \"arm\\n\\u{1b}[2J\\u{7}\": rotation", &[]);
    let mut b = Base::new();
    b.json["nodes"][2]["name"] = json!("x".repeat(10_000));
    b.json["nodes"][2]["rotation"] = json!([0.0, 0.0, 0.0, 0.0]);
    let path = write(dir.path(), "long.gltf", &b.gltf());
    expect_one_line(&path, &format!("node 2 \"{}…\": rotation", "x".repeat(63)), &[]);
    // A file name with a newline.
    let path = write(dir.path(), "bad\nname.gltf", &Base::new().json.to_string().into_bytes());
    let o = bounded::run(&["inspect", &path.display().to_string()], TIMEOUT);
    assert_eq!(o.code, Some(1), "{}", o.describe(&["inspect"]));
    assert_eq!(o.stderr.lines().count(), 1, "{}", o.stderr);
    assert!(o.stderr.contains("bad\\nname.gltf"), "{}", o.stderr);
}

/// A PNG of `width` x `height` 1-bit pixels, all zero (tiny once compressed).
fn png_1bit(width: u32, height: u32) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut e = png::Encoder::new(&mut bytes, width, height);
    e.set_color(png::ColorType::Grayscale);
    e.set_depth(png::BitDepth::One);
    let mut w = e.write_header().unwrap();
    let mut stream = w.stream_writer().unwrap();
    let row = vec![0u8; width.div_ceil(8) as usize];
    for _ in 0..height {
        std::io::Write::write_all(&mut stream, &row).unwrap();
    }
    stream.finish().unwrap();
    w.finish().unwrap();
    bytes
}

/// A PNG whose header claims `width` x `height` (no pixel data).
fn png_header_only(width: u32, height: u32) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut e = png::Encoder::new(&mut bytes, width, height);
    e.set_color(png::ColorType::Rgba);
    drop(e.write_header().unwrap());
    bytes
}

/// The base file with one textured material whose image is `png` (a
/// buffer view), written next to `dir`.
fn textured(dir: &Path, name: &str, png: &[u8]) -> PathBuf {
    let mut b = Base::new();
    let view = add_view(&mut b, png);
    b.json["images"] = json!([{"bufferView": view, "mimeType": "image/png"}]);
    b.json["textures"] = json!([{"source": 0}]);
    b.json["materials"] = json!([{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}]);
    b.json["meshes"][0]["primitives"][0]["material"] = json!(0);
    write(dir, name, &b.glb())
}

#[test]
fn images_are_checked_on_their_header() {
    let dir = folder("images");
    let claims = png_header_only(30_000, 30_000);
    let path = textured(dir.path(), "claims.glb", &claims);
    let file = ImageFile::open(&path).unwrap();
    match file.image(0) {
        Err(AssetError::ImageTooLarge { width: 30_000, height: 30_000, limit: 16_384, .. }) => {}
        other => panic!("{other:?}"),
    }
    let e = decode_rgba8(&ImageSource::new(claims, None)).unwrap_err().to_string();
    assert_eq!(e, "30000x30000 is larger than 16384x16384, the largest image allowed");
    // Within the dimension limit, but 10000 x 10000 RGBA is over a 12 KB file's budget.
    let big = png_1bit(10_000, 10_000);
    assert!(big.len() < 100_000, "{}", big.len());
    let path = textured(dir.path(), "big.glb", &big);
    let e = ImageFile::open(&path).unwrap().image(0).unwrap_err().to_string();
    assert!(e.starts_with("image 0 (10000x10000) needs 762.9 MiB"), "{e}");
    let e = decode_rgba8(&ImageSource::new(big, None)).unwrap_err().to_string();
    assert!(e.starts_with("a 10000x10000 image needs"), "{e}");
    // The device's limit, when the renderer passes it.
    let small = png_1bit(64, 64);
    let path = textured(dir.path(), "small.glb", &small);
    let options = LoadOptions { max_image_dimension: 32, ..LoadOptions::default() };
    let e = ImageFile::open_with(&path, &options, 0).unwrap().image(0).unwrap_err().to_string();
    assert_eq!(e, "image 0: 64x64 is larger than 32x32, the largest image allowed");
    let decoded = decode_rgba8(&ImageFile::open(&path).unwrap().image(0).unwrap()).unwrap();
    assert_eq!((decoded.width, decoded.height, decoded.rgba.len()), (64, 64, 64 * 64 * 4));
}

/// `render` on a model whose texture claims 30000 x 30000: drawn white with
/// a warning, within bounded memory (the image is never decoded).
#[test]
fn render_with_a_hostile_texture() {
    let Some(_gpu) = crate::common::context() else { return };
    let dir = folder("render-image");
    let path = textured(dir.path(), "claims.glb", &png_header_only(30_000, 30_000));
    let out = dir.path().join("out.png");
    let args = ["render", path.to_str().unwrap(), "--size", "32x32", "--out", out.to_str().unwrap()];
    let o = bounded::run(&args, TIMEOUT);
    let what = o.describe(&args);
    assert_eq!(o.code, Some(0), "{what}");
    assert!(o.stderr.contains("30000x30000 is larger than 16384x16384"), "{what}");
    assert!(out.exists(), "{what}");
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(o.peak_rss <= memory_limit(size), "{what}");
}

/// Every shared model still loads, within a fraction of its budget.
#[test]
fn shared_models_fit_their_budget() {
    let Some(assets) = crate::common::shared_assets("the budget check") else { return };
    for path in crate::common::find_models(&assets) {
        let m = vkskin::asset::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let size = std::fs::metadata(&path).unwrap().len();
        let budget = vkskin::asset::limits::Budget::new(&LoadOptions::default(), size);
        assert!(
            m.memory_used * 4 < budget.remaining(),
            "{}: {} of {}",
            path.display(),
            m.memory_used,
            budget.remaining()
        );
    }
}

/// `render` finds the sidecar `MODEL.ron` as `simulate` (and `view`) do:
/// a broken one fails both with the same line; a good one animates the
/// render exactly as `--controller` with the same file does, unlike the
/// rest pose drawn without one.
#[test]
fn render_uses_the_sidecar_controller() {
    let Some(_gpu) = crate::common::context() else { return };
    let dir = folder("sidecar");
    let glb = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/default_character.glb");
    let model = dir.path().join("walker.glb");
    std::fs::copy(glb, &model).unwrap();
    let sidecar = dir.path().join("walker.ron");
    let model = model.to_str().unwrap();
    let png = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    // Broken: the same one line from both commands.
    std::fs::write(&sidecar, "(parameters: [, initial: \"Idle\"").unwrap();
    let simulated = bounded::run(&["simulate", model, "--duration", "0"], TIMEOUT);
    let broken = png("broken.png");
    let rendered = bounded::run(&["render", model, "--size", "48x48", "--out", &broken], TIMEOUT);
    for o in [&simulated, &rendered] {
        assert_eq!(o.code, Some(1), "{}", o.describe(&["render or simulate", model]));
        assert_eq!(o.stderr.lines().count(), 1, "{}", o.stderr);
        assert!(o.stderr.contains("walker.ron"), "{}", o.stderr);
    }
    assert_eq!(simulated.stderr, rendered.stderr);
    assert!(!Path::new(&broken).exists());
    // Good: the character walks from its first frame.
    let walk = "(parameters: [], initial: \"Walk\", states: [(name: \"Walk\", motion: Clip(clip: \"Walk\"))], transitions: [])";
    std::fs::write(&sidecar, walk).unwrap();
    let draw = |out: &str, extra: &[&str]| {
        let mut args = vec!["render", model, "--size", "64x64", "--time", "0.4", "--out", out];
        args.extend_from_slice(extra);
        let o = bounded::run(&args, TIMEOUT);
        assert_eq!(o.code, Some(0), "{}", o.describe(&args));
        let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(out).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
        reader.next_frame(&mut pixels).unwrap();
        (pixels, o.stderr)
    };
    let (with_sidecar, said) = draw(&png("sidecar.png"), &[]);
    assert!(said.contains(&format!("vkskin: controller: {}", sidecar.display())), "{said}");
    let (explicit, _) = draw(&png("explicit.png"), &["--controller", sidecar.to_str().unwrap()]);
    assert_eq!(with_sidecar, explicit, "the sidecar drives the render as --controller does");
    std::fs::remove_file(&sidecar).unwrap();
    let (rest, _) = draw(&png("rest.png"), &[]);
    assert_ne!(with_sidecar, rest, "without a controller: the rest pose, which the walk leaves");
}

/// A crowd at full detail (`--detail full`: every frame skins every
/// character whole) larger than one buffer of the device holds (or its
/// memory) is refused in one line naming `--characters`, the bytes needed,
/// the limit and how many characters fit, and writes nothing.
#[test]
fn render_refuses_a_crowd_the_device_cannot_hold() {
    let Some(gpu) = crate::common::context() else { return };
    let limits = gpu.buffer_limits;
    drop(gpu);
    let model = vkskin::asset::load_default_character().unwrap();
    let need = vkskin::render::crowd_fit::CrowdNeed::of(&model, 1, vkskin::render::DrawDetail::Full).unwrap();
    // The output in one buffer; the output and the device palette (each
    // one for every frame slot) in the heap.
    let in_memory = need.output_per_character + need.palette_per_character;
    let by_buffer = limits.largest_buffer() / need.output_per_character.max(need.palette_per_character);
    let most = by_buffer.min(limits.device_local_bytes / in_memory);
    let too_many = most + 1;
    if too_many > u64::from(vkskin::render::renderer::MAX_CHARACTERS) {
        eprintln!("not applicable: this device holds {most} characters, more than a scene has");
        return;
    }
    let dir = folder("crowd");
    let out = dir.path().join("crowd.png");
    let count = too_many.to_string();
    let glb = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/default_character.glb");
    let args = [
        "render",
        glb,
        "--clip",
        "Walk",
        "--characters",
        &count,
        "--detail",
        "full",
        "--size",
        "32x32",
        "--out",
        out.to_str().unwrap(),
    ];
    let o = bounded::run(&args, TIMEOUT);
    let what = o.describe(&args);
    assert_eq!(o.code, Some(1), "{what}");
    let last = o.stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(&format!("vkskin: --characters {count}: {count} characters of {glb} need "))
            && last.ends_with(&format!("at most {most} characters of this model fit)")),
        "{what}"
    );
    assert!(!out.exists(), "{what}");
}
