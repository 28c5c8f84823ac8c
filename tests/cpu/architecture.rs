//! The layer rules of `src/guide/architecture.md`, enforced: every
//! `crate::LAYER` path in non-test code under `src/` (and every `vkskin::`
//! path in the criterion harnesses of `src/bench/`) must name a layer its
//! own layer may use, and no layer may name an external crate the rules
//! forbid it. Needs nothing but the source tree.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A layer's rules: the layers it may name, the external crates it may not.
#[derive(Debug, Default)]
struct Rule {
    may_use: BTreeSet<String>,
    forbidden_crates: BTreeSet<String>,
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The rules block of the architecture page: the first ```text block after
/// the heading that introduces it.
fn rules() -> BTreeMap<String, Rule> {
    let page = std::fs::read_to_string(src().join("guide/architecture.md")).expect("the architecture page");
    let after =
        page.split("## The rules, as the architecture test reads them").nth(1).expect("the rules heading");
    let block = after.split("```text").nth(1).and_then(|b| b.split("```").next()).expect("the rules block");
    let mut rules = BTreeMap::new();
    for line in block.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (layers, crates) = line.split_once('|').unwrap_or((line, ""));
        let mut words = layers.split_whitespace();
        let layer = words.next().expect("a layer name").to_string();
        let rule = Rule {
            may_use: words.filter(|w| *w != "-").map(String::from).collect(),
            forbidden_crates: crates.split_whitespace().map(String::from).collect(),
        };
        rules.insert(layer, rule);
    }
    rules
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("a source folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The layer a source file belongs to (`None`: the crate root, unchecked).
fn layer_of(relative: &Path) -> Option<String> {
    let mut parts = relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned());
    let first = parts.next()?;
    match first.strip_suffix(".rs") {
        Some("lib" | "main") => None,
        Some(module) => Some(module.to_string()),
        None => Some(first),
    }
}

/// The text of `code` with comments, string and char literals blanked (so
/// that a path in a doc comment or a message is not a dependency), line
/// breaks kept.
fn code_only(code: &str) -> String {
    let bytes = code.as_bytes();
    let mut out = String::with_capacity(code.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &code[i..];
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            i += end;
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(rest.len(), |e| e + 2);
            out.extend(rest[..end].chars().filter(|&c| c == '\n'));
            i += end;
        } else if rest.starts_with("r#\"") || rest.starts_with("r\"") {
            let hashes = rest[1..].chars().take_while(|&c| c == '#').count();
            let close = format!("\"{}", "#".repeat(hashes));
            let body = 2 + hashes;
            let end = rest[body..].find(&close).map_or(rest.len(), |e| body + e + close.len());
            out.extend(rest[..end].chars().filter(|&c| c == '\n'));
            i += end;
        } else if rest.starts_with('"') {
            let mut j = 1;
            while j < rest.len() && rest.as_bytes()[j] != b'"' {
                j += if rest.as_bytes()[j] == b'\\' { 2 } else { 1 };
            }
            out.extend(rest[..(j + 1).min(rest.len())].chars().filter(|&c| c == '\n'));
            i += (j + 1).min(rest.len());
        } else if let Some(len) = char_literal(rest) {
            i += len;
        } else {
            let c = rest.chars().next().expect("a character");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The length of a char literal at the start of `text` (`'a'`, `'\n'`,
/// `'\''`), `None` for a lifetime or anything else.
fn char_literal(text: &str) -> Option<usize> {
    let rest = text.strip_prefix('\'')?;
    let mut chars = rest.char_indices();
    let (_, first) = chars.next()?;
    let after = if first == '\\' {
        let (_, escaped) = chars.next()?;
        if escaped == 'u' { rest.find('}')? + 1 } else { 2 }
    } else {
        first.len_utf8()
    };
    rest[after..].starts_with('\'').then_some(after + 2)
}

/// `code` with every `#[cfg(test)]` item blanked (lines kept), and whether
/// the file declares test-only submodules (`#[cfg(test)] mod name;`), whose
/// names are returned.
fn without_test_items(code: &str) -> (String, Vec<String>) {
    let mut out = String::with_capacity(code.len());
    let mut test_modules = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        // The item ends at its `;` (a `mod x;` or a `use`) or its matching brace.
        let semicolon = item.find(';');
        let brace = item.find('{');
        let end = match (semicolon, brace) {
            (Some(s), Some(b)) if s < b => s + 1,
            (Some(s), None) => s + 1,
            (_, Some(b)) => matching_brace(item, b),
            (None, None) => item.len(),
        };
        let declared = &item[..end];
        if let Some(name) = declared.split("mod ").nth(1).and_then(|m| m.strip_suffix(';')) {
            test_modules.push(name.trim().to_string());
        }
        out.extend(declared.chars().filter(|&c| c == '\n'));
        rest = &item[end..];
    }
    out.push_str(rest);
    (out, test_modules)
}

fn matching_brace(text: &str, open: usize) -> usize {
    let mut depth = 0;
    for (i, c) in text[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return open + i + 1;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// The top-level names a line's `root::` paths reach: `root::a::b` gives
/// `a`, `root::{a, b::c}` gives `a` and `b`.
fn named_after(line: &str, root: &str) -> Vec<String> {
    let mut names = Vec::new();
    let pattern = format!("{root}::");
    let mut search = line;
    while let Some(at) = search.find(&pattern) {
        // A path segment, not the end of a longer identifier (`mycrate::`).
        let before = search[..at].chars().next_back();
        let rest = &search[at + pattern.len()..];
        search = rest;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for item in inner.split(',') {
                let name: String =
                    item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() && name != "self" {
                    names.push(name);
                }
            }
        } else {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            // `crate::spirv!(..)`: an exported macro, not a module.
            let macro_call = rest[name.len()..].starts_with('!');
            if !name.is_empty() && !macro_call {
                names.push(name);
            }
        }
    }
    names
}

/// Whether `line` names the external crate `name` as a path root.
fn names_crate(line: &str, name: &str) -> bool {
    !named_after(&format!(" {line}"), name).is_empty()
}

#[test]
fn every_layer_names_only_the_layers_below_it() {
    let rules = rules();
    assert!(rules.len() >= 12, "the rules block lists every layer: {:?}", rules.keys());
    let root = src();
    let files = rust_files(&root);
    // Files declared `#[cfg(test)] mod x;` are test code as a whole.
    let mut test_files = BTreeSet::new();
    let mut cleaned = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("a source file");
        let (code, test_modules) = without_test_items(&code_only(&text));
        let dir = if path.file_name().is_some_and(|n| n == "mod.rs" || n == "lib.rs" || n == "main.rs") {
            path.parent().expect("a folder").to_path_buf()
        } else {
            path.with_extension("")
        };
        for module in test_modules {
            test_files.insert(dir.join(format!("{module}.rs")));
            test_files.insert(dir.join(&module).join("mod.rs"));
        }
        cleaned.push((path.clone(), code));
    }
    let mut broken = Vec::new();
    for (path, code) in &cleaned {
        if test_files.contains(path) {
            continue;
        }
        let relative = path.strip_prefix(&root).expect("under src");
        let Some(layer) = layer_of(relative) else { continue };
        let rule = rules
            .get(&layer)
            .unwrap_or_else(|| panic!("src/{}: layer `{layer}` has no rule", relative.display()));
        let path_root = if layer == "bench" { "vkskin" } else { "crate" };
        for (n, line) in code.lines().enumerate() {
            for used in named_after(line, path_root) {
                if used != layer && !rule.may_use.contains(&used) && rules.contains_key(&used) {
                    broken.push(format!(
                        "src/{}:{}: {layer} may not use {path_root}::{used}",
                        relative.display(),
                        n + 1
                    ));
                }
                if !rules.contains_key(&used)
                    && !["self", "super"].contains(&used.as_str())
                    && path_root == "crate"
                {
                    broken.push(format!(
                        "src/{}:{}: crate::{used} is in no layer of the rules",
                        relative.display(),
                        n + 1
                    ));
                }
            }
            for forbidden in &rule.forbidden_crates {
                if names_crate(line, forbidden) {
                    broken.push(format!(
                        "src/{}:{}: {layer} may not use the crate {forbidden}",
                        relative.display(),
                        n + 1
                    ));
                }
            }
        }
    }
    assert!(broken.is_empty(), "layer rules broken (src/guide/architecture.md):\n{}", broken.join("\n"));
}

#[test]
fn the_checker_sees_paths_and_ignores_comments_strings_and_tests() {
    assert_eq!(named_after("use crate::render::Renderer;", "crate"), ["render"]);
    assert_eq!(named_after("use crate::{anim::Rig, text::escape, self};", "crate"), ["anim", "text"]);
    assert_eq!(named_after("let x = crate::gpu::Buffer::new(); y(mycrate::a)", "crate"), ["gpu"]);
    assert!(named_after("let m = crate::spirv!(\"a.vert\");", "crate").is_empty(), "macros are not layers");
    let code = "let a = \"crate::cli\"; // crate::app\n/* crate::world */ let c = '\"'; crate::anim::X";
    assert_eq!(named_after(&code_only(code), "crate"), ["anim"]);
    let (code, modules) = without_test_items(
        "use crate::anim;\n#[cfg(test)]\nmod tests {\n use crate::cli;\n}\n#[cfg(test)]\nmod fixtures;\n",
    );
    assert_eq!(named_after(&code, "crate"), ["anim"]);
    assert_eq!(modules, ["fixtures"]);
    assert_eq!(code.lines().count(), 7, "line numbers are kept");
    assert!(names_crate("use ash::vk;", "ash") && !names_crate("let hash = 1;", "ash"));
    assert!(!names_crate("use crate::render::ash_like;", "ash"));
}
