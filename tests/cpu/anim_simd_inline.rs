//! vkskin's SIMD kernels compile their intrinsics inline. An AVX2 kernel
//! is one function compiled for AVX2 that inlines everything it calls; a
//! closure inside it (`map`, `array::from_fn`) is a function of its own,
//! compiled without AVX2, and fast only while the compiler happens to
//! inline it. When it does not, each intrinsic inside becomes a call to an
//! out-of-line copy: nothing fails, only the time grows (the compressed
//! sampler once took 1.9 times as long for it). This test disassembles the
//! program as built for the tests and fails when any function of ours
//! calls such a copy. Needs an optimised x86-64 build (`--release`) and
//! `objdump` (binutils, which the linker already needs).

use std::collections::BTreeMap;
use std::process::Command;
use vkskin::testing::skip::skip;

/// Functions of dependencies known to call out-of-line intrinsics (their
/// own code, not ours), of the standard library's feature detection, and
/// the out-of-line intrinsics themselves (which may call each other).
const FOREIGN: [&str; 4] = ["vello_cpu::", "std_detect::", "compiler_builtins::", "core::core_arch::"];

#[test]
fn no_function_of_ours_calls_an_intrinsic_out_of_line() {
    if cfg!(debug_assertions) || !cfg!(target_arch = "x86_64") {
        skip("intrinsics inline only in an optimised x86-64 build: run it with --release");
        return;
    }
    let program = env!("CARGO_BIN_EXE_vkskin");
    let output = match Command::new("objdump").args(["-d", "--no-show-raw-insn", "-C", program]).output() {
        Ok(output) if output.status.success() => output,
        other => {
            skip(&format!("objdump (binutils) could not disassemble {program}: {other:?}"));
            return;
        }
    };
    let listing = String::from_utf8_lossy(&output.stdout);
    // Each caller and the out-of-line intrinsics it calls.
    let mut callers: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut function = "";
    for line in listing.lines() {
        if let Some(name) = line.strip_suffix(">:").and_then(|l| l.split_once(" <")).map(|(_, n)| n) {
            function = name;
        } else if let Some((_, callee)) = line.split_once("call").or_else(|| line.split_once("jmp"))
            && let Some((_, callee)) = callee.split_once('<')
            && let Some(intrinsic) = callee.strip_prefix("core::core_arch::")
            // A call or a tail call goes to a function's start, not into it.
            && !intrinsic.contains('+')
            && !FOREIGN.iter().any(|f| function.starts_with(f))
        {
            let intrinsic = intrinsic.trim_end_matches('>');
            let called = callers.entry(function).or_default();
            if !called.contains(&intrinsic) {
                called.push(intrinsic);
            }
        }
    }
    assert!(
        callers.is_empty(),
        "functions calling intrinsics compiled out of line (a closure or helper in code an \
         AVX2 function inlines, compiled without AVX2: write it as a loop or an `inline(always)` \
         function):\n{}",
        callers.iter().map(|(f, i)| format!("  {f}: {}", i.join(", "))).collect::<Vec<_>>().join("\n")
    );
}
