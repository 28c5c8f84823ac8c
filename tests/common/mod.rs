//! Setup shared by the integration tests: a validated Vulkan context (or a
//! skip, which VKSKIN_NO_SKIP turns into a failure), the validation-message
//! check, and the shared glTF models in `../shared/assets` (or a skip, the
//! same way, when they are absent). The skip policy is `vkskin::testing::skip`,
//! shared with the unit tests.

#![allow(dead_code)]

pub mod base_file;
pub mod bounded;
pub mod browser;
pub mod crowd;
pub mod faults;
pub mod pixels;
pub mod pose_rebuild;
pub mod skin_pass;
pub mod steered_crowd;
pub mod trace;
use vkskin::testing::skip as skip_policy;
pub use vkskin::testing::skip::skip;

use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use vkskin::asset::{self, Model};
use vkskin::gpu::{GpuContext, ValidationLog};

/// How to get a Vulkan device with the validation layer on Debian.
const VULKAN_HINT: &str = "install mesa-vulkan-drivers vulkan-validationlayers, e.g. with `bash .ci/deps`";

/// A validated headless context for a test. When dropped (last, after the
/// test destroyed its resources) it destroys the device and instance and
/// then fails on any validation message, including leaked-object reports
/// that only appear during that destruction.
pub struct TestGpu {
    ctx: ManuallyDrop<GpuContext>,
    log: Arc<ValidationLog>,
}

impl Deref for TestGpu {
    type Target = GpuContext;
    fn deref(&self) -> &GpuContext {
        &self.ctx
    }
}

/// Tests change the context's limits (`buffer_limits`) to reach paths a
/// small device never takes.
impl DerefMut for TestGpu {
    fn deref_mut(&mut self) -> &mut GpuContext {
        &mut self.ctx
    }
}

impl Drop for TestGpu {
    fn drop(&mut self) {
        // SAFETY: the context is dropped exactly once, here.
        unsafe { ManuallyDrop::drop(&mut self.ctx) };
        if !std::thread::panicking() {
            assert_no_messages(&self.log.messages());
        }
    }
}

/// A validated headless context, or `None` (after saying why and how to
/// install one) when this machine has no Vulkan device or validation layer;
/// panics instead under VKSKIN_NO_SKIP.
pub fn context() -> Option<TestGpu> {
    match GpuContext::headless(true, None) {
        Ok(ctx) => Some(TestGpu { log: ctx.validation_log(), ctx: ManuallyDrop::new(ctx) }),
        Err(e) => {
            skip(&format!("no Vulkan device with validation ({e}): {VULKAN_HINT}"));
            None
        }
    }
}

/// Fails when `messages` (from `GpuContext::validation_messages`) is not empty.
pub fn assert_no_messages(messages: &[String]) {
    assert!(messages.is_empty(), "{} validation messages:\n{}", messages.len(), messages.join("\n"));
}

/// Fails on any validation message `ctx` has logged so far.
pub fn assert_no_validation_messages(ctx: &GpuContext) {
    assert_no_messages(&ctx.validation_messages());
}

/// `../shared/assets` (not required to exist).
pub fn assets_dir() -> PathBuf {
    skip_policy::assets_dir()
}

/// `../shared/assets`, or `None` after skipping (see `skip`): `what` needs it.
pub fn shared_assets(what: &str) -> Option<PathBuf> {
    let dir = skip_policy::shared_path("");
    if dir.is_none() {
        eprintln!("(needed by {what})");
    }
    dir
}

/// The file `relative` under `../shared/assets`, or `None` after skipping.
pub fn shared_file(relative: &str, what: &str) -> Option<PathBuf> {
    let path = skip_policy::shared_path(relative);
    if path.is_none() {
        eprintln!("(needed by {what})");
    }
    path
}

/// The shared model `relative` (under `../shared/assets`) imported, or
/// `None` after skipping; panics when it does not import.
pub fn shared_model(relative: &str) -> Option<Arc<Model>> {
    let path = shared_file(relative, "this test")?;
    Some(Arc::new(
        asset::load(&path).unwrap_or_else(|e| panic!("{}: shared model imports: {e}", path.display())),
    ))
}

/// Every `.glb` / `.gltf` file under `dir`, recursively, in path order.
pub fn find_models(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect_models(dir, &mut out);
    out
}

fn collect_models(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_models(&path, out);
        } else if matches!(path.extension().and_then(|e| e.to_str()), Some("glb" | "gltf")) {
            out.push(path);
        }
    }
}

/// A character of `model` playing clip `clip` (the rest pose for `None`)
/// through the character layer, evaluated at `time` seconds.
pub fn character_at(model: &Model, clip: Option<usize>, time: f64) -> vkskin::character::Character {
    use vkskin::character::{Character, Controller};
    let controller = Controller::single_clip(model, clip, true).expect("one-clip controller");
    let mut character = Character::new(model.rig.clone(), Arc::new(controller)).expect("character");
    character.seek(time);
    character.update(0.0).expect("evaluates");
    character
}

/// Moves a one-clip character to `time` and evaluates it.
pub fn seek(character: &mut vkskin::character::Character, time: f64) {
    character.seek(time);
    character.update(0.0).expect("evaluates");
}

/// Length of the diagonal of the box around `points` (0 for none): the
/// scale GPU-vs-CPU position errors are measured against.
pub fn bounding_diagonal<'a>(points: impl IntoIterator<Item = &'a [f32; 3]>) -> f32 {
    let (mut lo, mut hi) = ([f32::MAX; 3], [f32::MIN; 3]);
    for p in points {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    if lo[0] > hi[0] {
        return 0.0;
    }
    (0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f32>().sqrt()
}
