//! Synthetic results for the report's tests: plausible numbers from simple
//! formulas, so each test can say what it expects.

use super::{BenchEntry, GpuPhases, Stat};
use std::path::{Path, PathBuf};

/// A stat with p95 = 1.25 * median.
fn stat(median: f64) -> Stat {
    Stat { median, p95: median * 1.25 }
}

/// A plausible entry whose timings grow with the character count and
/// the pass count, vertex skinning paying for skinning in every pass.
pub fn entry(characters: u32, passes: u32, skinning: &str, upload: &str, paused: bool) -> BenchEntry {
    let vertices = 2_000_u64;
    let joints = 40;
    let scene = vertices as f64 * f64::from(characters);
    let compute = skinning.ends_with("compute");
    let skin_us = if compute { 5.0 + scene * 0.002 } else { 0.0 };
    let draw_us = 20.0 + scene * if compute { 0.001 } else { 0.003 };
    let palette_bytes =
        if paused && upload == "dirty" { 0 } else { u64::from(characters) * u64::from(joints) * 64 };
    let upload_us = if upload == "staged" { 2.0 + palette_bytes as f64 * 1e-4 } else { 0.0 };
    let pass_stats: Vec<Stat> = (0..passes).map(|_| stat(draw_us)).collect();
    let frame = upload_us + skin_us + draw_us * f64::from(passes);
    BenchEntry {
        model: "built-in".into(),
        characters,
        vertices,
        joints,
        passes,
        skinning: skinning.into(),
        dqs_split: skinning.starts_with("dqs").then(|| "shader".into()),
        upload: upload.into(),
        frames: 8,
        cpu_pose_us: stat(3.0 * f64::from(characters)),
        palette_bytes,
        gpu_us: GpuPhases {
            upload: stat(upload_us),
            skin: stat(skin_us),
            passes: pass_stats,
            frame: stat(frame),
        },
        copy_kernel_us: Some(stat(4.0 + scene * 0.0016)),
        copy_kernel_wall_us: Some(stat(30.0 + scene * 0.002)),
        skin_wall_us: (skin_us > 0.0).then(|| stat(35.0 + scene * 0.0025)),
        staged_copy_wall_us: Some(stat(11.0 + palette_bytes as f64 * 2e-4)),
        buffer_copy_wall_us: Some(stat(10.0 + palette_bytes as f64 * 2e-4)),
        paused,
        cpu_palette_write_us: stat(0.2 + palette_bytes as f64 * 1e-3), // 0.2: checking pose versions
        skin_bytes: vertices * u64::from(characters) * 96,
        frame_wall_us: Some(stat(60.0 + frame * 1.5)),
        refinement: false,
        pose: None,
        playback_bytes: None,
        gpu_pose_us: None,
        detail: None,
        triangles: None,
        shadow_triangles: None,
        skinned_vertices: None,
        posed_characters: None,
        pixel_error: None,
        gpu_frame_cost: None,
        device_bytes: None,
        samples: Default::default(),
    }
}

/// A folder for one test, not yet made (a report makes it), in a fresh
/// folder under the system's temp folder that is removed with everything
/// in it when this is dropped.
pub struct Scratch {
    _parent: tempfile::TempDir,
    path: PathBuf,
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// A folder named after the test (see [`Scratch`]).
pub fn scratch(name: &str) -> Scratch {
    let parent = tempfile::Builder::new().prefix(&format!("vkskin-bench-report-{name}-")).tempdir().unwrap();
    let path = parent.path().join(name);
    Scratch { _parent: parent, path }
}
