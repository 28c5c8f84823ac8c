//! Structured fuzzing of the importer: the shared models (`../shared/assets`)
//! mutated by proptest-generated edits of their JSON (numbers set to
//! boundary values, values of the wrong type, elements removed, duplicated
//! or swapped, strings replaced by hostile URIs and names) and of their
//! bytes (BIN chunk flips, truncations), then imported. Whatever the input:
//! no panic, an error is one line naming the file, and a file that loads is
//! inspected and evaluated (rest pose and a clip) without a panic either.
//!
//! The smoke run takes about `VKSKIN_FUZZ_SECONDS` (default 60) with a fixed
//! seed; a longer run (see the guide's testing page) sets the time, `VKSKIN_FUZZ_SEED` and
//! `VKSKIN_FUZZ_THREADS`. A failing input is written to the temp folder.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use vkskin::asset::LoadOptions;
use vkskin::asset::glb_writer::glb_container;
use vkskin::asset::import::load_from_bytes_with;
use vkskin::formats::dump::Skinning;
use vkskin::formats::dump::{Request, evaluate};
use vkskin::formats::inspect::Report;

/// One seed file: its JSON, its BIN chunk (GLB) and where its external files are.
struct Seed {
    name: String,
    /// Bytes of the file (JSON and BIN).
    size: usize,
    json: Value,
    bin: Option<Vec<u8>>,
    dir: PathBuf,
}

/// How often a run prints its execution count.
const PROGRESS_EVERY: Duration = Duration::from_secs(300);

/// Seeds below this size are mutated more often.
const SMALL_SEED: usize = 64 << 10;

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

/// Numbers that find off-by-one, overflow and allocation bugs.
const NUMBERS: &[f64] = &[
    0.0,
    -1.0,
    1.0,
    2.0,
    3.0,
    4.0,
    255.0,
    256.0,
    65535.0,
    65536.0,
    2147483647.0,
    4294967295.0,
    4294967296.0,
    67108864.0,
    9007199254740991.0,
    1.8e19,
    -0.0,
    0.5,
    1e-40,
    3.4e38,
    1e300,
    5120.0,
    5121.0,
    5123.0,
    5125.0,
    5126.0,
];

/// Strings aimed at URIs, names and enums.
const STRINGS: &[&str] = &[
    "",
    "../x.bin",
    "%2e%2e/%2e%2e/etc/passwd",
    "/dev/zero",
    "file:///etc/passwd",
    "data:application/octet-stream;base64,AAAA",
    "data:,",
    "SCALAR",
    "MAT4",
    "VEC3",
    "rotation",
    "weights",
    "pointer",
    "CUBICSPLINE",
    "STEP",
    "name\n\u{1b}[2J",
    "KHR_mesh_quantization",
    "KHR_draco_mesh_compression",
    "image/png",
];

/// Number of values in the JSON (long arrays count their first 64 items).
fn count(value: &Value) -> u64 {
    1 + match value {
        Value::Object(map) => map.values().map(count).sum(),
        Value::Array(items) => items.iter().take(64).map(count).sum(),
        _ => 0,
    }
}

/// The `k`-th value in depth-first order (as `count` counts them).
fn nth<'a>(value: &'a mut Value, k: &mut u64) -> Option<&'a mut Value> {
    if *k == 0 {
        return Some(value);
    }
    *k -= 1;
    match value {
        Value::Object(map) => map.values_mut().find_map(|v| nth_or_skip(v, k)),
        // Long data arrays (joints, channels) are sampled, not walked whole.
        Value::Array(items) => items.iter_mut().take(64).find_map(|v| nth_or_skip(v, k)),
        _ => None,
    }
}

fn nth_or_skip<'a>(value: &'a mut Value, k: &mut u64) -> Option<&'a mut Value> {
    let n = count(value);
    if *k < n {
        nth(value, k)
    } else {
        *k -= n;
        None
    }
}

/// Applies one edit to the JSON (or, for a GLB, to its BIN chunk).
fn apply(json: &mut Value, bin: &mut Option<Vec<u8>>, e: &Edit) {
    if e.kind % 16 == 15
        && let Some(bin) = bin.as_mut().filter(|b| !b.is_empty())
    {
        let at = (e.at % bin.len() as u64) as usize;
        bin[at] ^= (e.arg % 255 + 1) as u8;
        return;
    }
    let mut k = e.at % count(json);
    let Some(target) = nth(json, &mut k) else { return };
    let pick = |n: usize| (e.arg % n as u64) as usize;
    match e.kind % 15 {
        0..=3 => {
            if target.is_number() || target.is_null() || e.kind % 15 == 3 {
                *target = Value::from(NUMBERS[pick(NUMBERS.len())]);
            }
        }
        4 => {
            if let Some(n) = target.as_i64() {
                *target = Value::from(n + pick(5) as i64 - 2);
            }
        }
        5..=6 => {
            if target.is_string() || e.kind % 15 == 6 {
                *target = Value::from(STRINGS[pick(STRINGS.len())]);
            }
        }
        7 => *target = Value::Null,
        8 => {
            *target =
                [Value::Array(vec![]), Value::Object(Default::default()), Value::Bool(true)][pick(3)].clone()
        }
        9 => match target {
            Value::Object(map) if !map.is_empty() => {
                let key = map.keys().nth(pick(map.len())).cloned().unwrap();
                map.remove(&key);
            }
            Value::Array(items) if !items.is_empty() => {
                items.remove(pick(items.len()));
            }
            _ => {}
        },
        10 | 11 => {
            if let Value::Array(items) = target
                && !items.is_empty()
            {
                let copy = items[pick(items.len())].clone();
                items.push(copy);
            }
        }
        12 => {
            if let Value::Array(items) = target
                && items.len() > 1
            {
                let (i, j) = (pick(items.len()), (e.arg >> 32) as usize % items.len());
                items.swap(i, j);
            }
        }
        13 => {
            if let Value::Array(items) = target {
                // Many copies of one element: aliasing and repeated indices.
                if let Some(first) = items.first().cloned() {
                    items.extend(std::iter::repeat_n(first, pick(1000)));
                }
            }
        }
        _ => {
            if let Some(n) = target.as_u64() {
                *target = Value::from(n.wrapping_mul(1 + pick(1 << 20) as u64));
            }
        }
    }
}

/// The file's bytes: a GLB when the seed had a BIN chunk, else JSON.
fn encode(json: &Value, bin: &Option<Vec<u8>>) -> Vec<u8> {
    let text = serde_json::to_vec(json).unwrap();
    match bin {
        Some(bin) => glb_container(&text, Some(bin)),
        None => text,
    }
}

fn seeds(assets: &Path) -> Vec<Seed> {
    let mut seeds = Vec::new();
    for path in crate::common::find_models(assets) {
        let bytes = std::fs::read(&path).unwrap();
        let name = path.strip_prefix(assets).unwrap().display().to_string();
        let dir = path.parent().unwrap().to_path_buf();
        let (json, bin) = if bytes.starts_with(b"glTF") {
            let json_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
            let json = serde_json::from_slice(&bytes[20..20 + json_len]).unwrap();
            let bin_at = 20 + json_len;
            let bin = (bytes.len() >= bin_at + 8).then(|| {
                let len = u32::from_le_bytes(bytes[bin_at..bin_at + 4].try_into().unwrap()) as usize;
                bytes[bin_at + 8..(bin_at + 8 + len).min(bytes.len())].to_vec()
            });
            (json, bin)
        } else {
            (serde_json::from_slice(&bytes).unwrap(), None)
        };
        seeds.push(Seed { name, size: bytes.len(), json, bin, dir });
    }
    seeds
}

/// Imports one mutated file and checks the contract; `Err` describes a finding.
fn check(seed: &Seed, bytes: &[u8], options: &LoadOptions) -> Result<(), String> {
    let name = format!("fuzz/{}", seed.name);
    let result =
        std::panic::catch_unwind(|| match load_from_bytes_with(&name, bytes, Some(&seed.dir), options) {
            Ok(model) => {
                let report = Report::new(&model);
                let _ = report.to_text();
                let rest = Request { clip: None, time: 0.0, skinning: Skinning::Cpu };
                let _ = evaluate(&model, &rest);
                if !model.clips.is_empty() {
                    let clip = Request { clip: Some("0"), time: 0.37, skinning: Skinning::Cpu };
                    let _ = evaluate(&model, &clip);
                }
                Ok(())
            }
            Err(e) => {
                let text = e.to_string();
                if text.contains('\n') || !text.starts_with(&format!("{name}: ")) {
                    Err(format!("error not one line naming the file: {text:?}"))
                } else {
                    Ok(())
                }
            }
        });
    result.unwrap_or_else(|_| Err("panicked".into()))
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn fuzz_import() {
    let Some(assets) = crate::common::shared_assets("the importer fuzz run") else { return };
    let mut seeds = seeds(&assets);
    assert!(!seeds.is_empty());
    seeds.sort_by_key(|s| s.size);
    let small = seeds.iter().filter(|s| s.size < SMALL_SEED).count().max(1);
    let seeds = Arc::new(seeds);
    let seconds = env_u64("VKSKIN_FUZZ_SECONDS", 60);
    let base_seed = env_u64("VKSKIN_FUZZ_SEED", 0x766b_736b_696e);
    let threads = env_u64("VKSKIN_FUZZ_THREADS", 1).max(1);
    // A lower cap keeps each case fast; the budget logic is the same.
    let options = LoadOptions { max_memory: 256 << 20, ..LoadOptions::default() };
    let executions = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    // The panic hook would print every caught panic: keep the output readable.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let (seeds, executions, options) = (seeds.clone(), executions.clone(), options.clone());
            std::thread::spawn(move || -> Result<(), String> {
                let mut key = [0u8; 32];
                key[..8].copy_from_slice(&(base_seed + t).to_le_bytes());
                let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &key);
                let mut runner = TestRunner::new_with_rng(Config::default(), rng);
                let strategy = (any::<usize>(), prop::collection::vec(edit(), 1..6));
                let mut next_report = Instant::now() + PROGRESS_EVERY;
                while Instant::now() < deadline {
                    // A long run says how far it got, so a killed run still counts.
                    if t == 0 && Instant::now() >= next_report {
                        eprintln!("fuzz_import: {} executions so far", executions.load(Ordering::Relaxed));
                        next_report += PROGRESS_EVERY;
                    }
                    let (which, edits) = strategy.new_tree(&mut runner).unwrap().current();
                    // Three cases in four mutate one of the small seeds (most
                    // structure per byte, so more executions), the rest any seed.
                    let pool = if which % 4 == 0 { seeds.len() } else { small };
                    let seed = &seeds[(which / 4) % pool];
                    let (mut json, mut bin) = (seed.json.clone(), seed.bin.clone());
                    for e in &edits {
                        apply(&mut json, &mut bin, e);
                    }
                    let mut bytes = encode(&json, &bin);
                    // One case in 16 is also cut short.
                    if edits[0].kind >= 240 {
                        bytes.truncate((edits[0].arg % (bytes.len() as u64 + 1)) as usize);
                    }
                    executions.fetch_add(1, Ordering::Relaxed);
                    if let Err(finding) = check(seed, &bytes, &options) {
                        let saved = std::env::temp_dir().join(format!("vkskin-fuzz-finding-{t}.bin"));
                        let _ = std::fs::write(&saved, &bytes);
                        return Err(format!(
                            "{}: {finding} (edits {edits:?}; input saved to {})",
                            seed.name,
                            saved.display()
                        ));
                    }
                }
                Ok(())
            })
        })
        .collect();
    let results: Vec<_> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    std::panic::set_hook(hook);
    let n = executions.load(Ordering::Relaxed);
    eprintln!("fuzz_import: {n} executions in {seconds} s on {threads} thread(s), seed {base_seed}");
    for r in results {
        r.unwrap();
    }
    assert!(n > 0);
}
