//! Compiles every GLSL shader in `shaders/` (`*.comp`, `*.vert`, `*.frag`)
//! to SPIR-V in OUT_DIR with shaderc; `#include "x.glsl"` resolves inside
//! `shaders/`. A shader error fails the build with shaderc's message.
//!
//! Also embeds the checkout's commit as `VKSKIN_GIT_COMMIT` (the bench
//! results' header): `git rev-parse --short HEAD`, or "unknown" where there
//! is no git or no checkout (a source tarball), which never fails the build.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    // Read when the script runs, not baked in when it is compiled: a target
    // folder shared by several checkouts (CI's) may reuse this script's
    // binary from a checkout that has since been removed.
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    embed_git_commit(&manifest_dir);
    let shader_dir = manifest_dir.join("shaders");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    println!("cargo:rerun-if-changed=shaders");

    let compiler = shaderc::Compiler::new().expect("shaderc compiler");
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&shader_dir)
        .expect("shaders/ directory")
        .map(|e| e.expect("shaders/ entry").path())
        .collect();
    entries.sort();
    let mut failures = Vec::new();
    for path in entries {
        let kind = match path.extension().and_then(|e| e.to_str()) {
            Some("comp") => shaderc::ShaderKind::Compute,
            Some("vert") => shaderc::ShaderKind::Vertex,
            Some("frag") => shaderc::ShaderKind::Fragment,
            _ => continue, // includes (*.glsl) are compiled as part of the shaders using them
        };
        println!("cargo:rerun-if-changed={}", path.display());
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut options = shaderc::CompileOptions::new().expect("shaderc options");
        options.set_target_env(shaderc::TargetEnv::Vulkan, shaderc::EnvVersion::Vulkan1_3 as u32);
        options.set_optimization_level(shaderc::OptimizationLevel::Performance);
        options.set_warnings_as_errors();
        let include_dir = shader_dir.clone();
        options.set_include_callback(move |requested, _kind, _from, _depth| {
            let file = include_dir.join(requested);
            std::fs::read_to_string(&file)
                .map(|content| shaderc::ResolvedInclude {
                    resolved_name: file.display().to_string(),
                    content,
                })
                .map_err(|e| format!("{}: {e}", file.display()))
        });
        match compiler.compile_into_spirv(&source, kind, &name, "main", Some(&options)) {
            Ok(artifact) => {
                std::fs::write(out_dir.join(format!("{name}.spv")), artifact.as_binary_u8())
                    .expect("write SPIR-V");
            }
            Err(error) => failures.push(format!("{name}: {error}")),
        }
    }
    if !failures.is_empty() {
        panic!("shader compilation failed:\n{}", failures.join("\n"));
    }
}

/// Sets `VKSKIN_GIT_COMMIT` to the short commit of HEAD, "unknown" without
/// one, and asks cargo to run this script again when HEAD moves: when the
/// HEAD file changes (a checkout) or the branch it names does (a commit).
/// Paths come from `git rev-parse --git-path`, which knows where a linked
/// worktree keeps its HEAD and where the shared refs live.
fn embed_git_commit(manifest_dir: &Path) {
    let git = |args: &[&str]| -> Option<String> {
        let output = Command::new("git").args(args).current_dir(manifest_dir).output().ok()?;
        let text = String::from_utf8(output.stdout).ok()?;
        (output.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
    };
    let commit = git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=VKSKIN_GIT_COMMIT={commit}");

    // Only files that exist: cargo reruns a script on every build when a
    // watched path is missing.
    let watch = |git_path: &str| -> Option<PathBuf> {
        let path = manifest_dir.join(git(&["rev-parse", "--git-path", git_path])?);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
        Some(path)
    };
    let Some(head) = watch("HEAD") else { return };
    watch("packed-refs");
    // HEAD's reflog grows with every commit and checkout, even when the
    // branch's ref is packed and its loose file appears only later.
    watch("logs/HEAD");
    let head_text = std::fs::read_to_string(head).unwrap_or_default();
    if let Some(branch) = head_text.strip_prefix("ref:") {
        watch(branch.trim());
    }
}
