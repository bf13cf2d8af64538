//! The one rule of docs/architecture.md that neither the compiler nor clippy can hold:
//! the top-level modules form layers, and a module names only modules of lower layers
//! (so no import cycle between them, and no arrow back up). Visibility, `unsafe_code`,
//! `clippy.toml` (disallowed methods and types) and the print lints hold the others.
//!
//! A reference is any `crate::<module>` in a file's code (comments aside), including
//! `use` lines and paths in expressions; a file's module is its first path component
//! under `src/`. Test modules are left out: tests may reach anywhere.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Bottom to top; a module may name the modules before it (or its own layer's
/// neighbours listed in the same entry, which must not name each other both ways).
const LAYERS: &[&[&str]] = &[
    &["util", "yaml", "snapshot_id"],
    &["delivery"],
    &["error"],
    &["domain", "console"],
    &["project"],
    &["inventory"],
    &["history"],
    &["catalog"],
    &["store"],
    &["cluster", "gitops", "oci"],
    &["fleet"],
    &["ops"],
    &["view"],
    &["app"],
];

/// What `crate::Error`/`crate::Result` (the re-exports) really name.
fn module_of(name: &str) -> &str {
    match name {
        "Error" | "Result" => "error",
        other => other,
    }
}

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The code of a file without `//` comments and without its `#[cfg(test)] mod` block.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod ") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| l.split_once("//").map_or(l, |(code, _)| code))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::x` a module's files name: module → the modules it names.
fn references() -> BTreeMap<String, BTreeSet<String>> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut files = vec![src.clone()];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let Some(module) = top_module(&src, &path) else {
            continue;
        };
        let text = code(&std::fs::read_to_string(&path).unwrap());
        let named = out.entry(module.clone()).or_default();
        for (i, _) in text.match_indices("crate::") {
            let rest = &text[i + "crate::".len()..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let name = module_of(&rest[..end]);
            if !name.is_empty() && name != module {
                named.insert(name.to_string());
            }
        }
    }
    out
}

fn top_module(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main")).then(|| name.to_string())
}

#[test]
fn every_module_has_a_layer_and_names_only_lower_ones() {
    let refs = references();
    let mut wrong = Vec::new();
    for (module, named) in &refs {
        let Some(own) = layer(module) else {
            wrong.push(format!("{module}: not in LAYERS"));
            continue;
        };
        for other in named {
            match layer(other) {
                Some(l) if l < own => {}
                Some(l) if l == own && !refs.get(other).is_some_and(|n| n.contains(module)) => {}
                Some(_) => wrong.push(format!("{module} → {other} runs up (or both ways)")),
                None => wrong.push(format!("{module} → {other}: not a module in LAYERS")),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_reader_sees_references_in_code_only() {
    let text = "use crate::a::b; // crate::c\nfn f() { crate::d::e(); }\n\
                #[cfg(test)]\nmod tests { use crate::f; }\n";
    let code = code(text);
    assert!(code.contains("crate::a") && code.contains("crate::d"));
    assert!(!code.contains("crate::c") && !code.contains("crate::f"));
}

/// Issue 41: docs/architecture.md names every module of every folder (four of the
/// store's were missing): a file `src/<folder>/<name>.rs` (or `<name>/`) is named, as a
/// word, in the entry of `<folder>/` in the doc's tree.
#[test]
fn the_architecture_doc_names_every_module() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    let tree = doc
        .split("```text")
        .nth(1)
        .and_then(|t| t.split("```").next())
        .unwrap();
    let mut entries: BTreeMap<String, String> = BTreeMap::new();
    let mut current = String::new();
    for line in tree.lines() {
        if let Some(rest) = line.strip_prefix("  ").filter(|r| !r.starts_with(' ')) {
            current = rest
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string();
        }
        entries
            .entry(current.clone())
            .or_default()
            .push_str(&format!(" {line} "));
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut missing = Vec::new();
    for folder in std::fs::read_dir(&src)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
    {
        let name = folder.file_name().to_string_lossy().to_string();
        let entry = entries
            .get(&format!("{name}/"))
            .cloned()
            .unwrap_or_default();
        for module in std::fs::read_dir(folder.path()).unwrap().flatten() {
            let file = module.file_name().to_string_lossy().to_string();
            let module = file.trim_end_matches(".rs");
            let word = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            let named = entry.match_indices(module).any(|(i, _)| {
                word(entry[..i].chars().last()) && word(entry[i + module.len()..].chars().next())
            });
            if module != "mod" && !named {
                missing.push(format!("src/{name}/{file}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/architecture.md does not name: {missing:?}"
    );
}
