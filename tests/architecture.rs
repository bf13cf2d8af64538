//! The shape of `src/`, checked from the code itself: no import cycle between files or
//! between top-level modules, and the boundaries the library promises (only `cluster`
//! talks to kube, only `gitops` to git2, only `store` and `util::files` write local
//! state, only `app` prints).
//!
//! Imports are read as text: every `crate::…`, `super::…` and `self::…` path, and a
//! parent's use of its own child modules. A path is resolved to the longest prefix that
//! names a file (`a/b.rs` or `a/b/mod.rs`); what remains names an item in that file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One source file as a module: its path in the crate and the files it refers to.
struct Module {
    path: Vec<String>,
    text: String,
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn modules() -> BTreeMap<Vec<String>, Module> {
    let mut out = BTreeMap::new();
    walk(&src(), &mut Vec::new(), &mut out);
    out
}

fn walk(dir: &Path, prefix: &mut Vec<String>, out: &mut BTreeMap<Vec<String>, Module>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            prefix.push(name);
            walk(&path, prefix, out);
            prefix.pop();
        } else if let Some(stem) = name.strip_suffix(".rs") {
            let mut module = prefix.clone();
            if !matches!(stem, "mod" | "lib" | "main") {
                module.push(stem.to_string());
            }
            if stem == "main" {
                continue; // the binary: it only calls the library
            }
            let mut text = std::fs::read_to_string(&path).unwrap();
            // Unit tests sit at the end of a file; they may use anything.
            if let Some(at) = text.find("#[cfg(test)]\nmod tests") {
                text.truncate(at);
            }
            let text = strip_comments(&text);
            out.insert(module.clone(), Module { path: module, text });
        }
    }
}

/// The code without comments and string literals, so a doc comment naming a module or
/// a message mentioning `crate::x` is not an import.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
        } else if b[i] == b'r' && (b.get(i + 1) == Some(&b'#') || b.get(i + 1) == Some(&b'"')) {
            // raw string r"…" or r#"…"#
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"')
                || (i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
            {
                out.push(b[i] as char);
                i += 1;
                continue;
            }
            j += 1;
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            while j < b.len() && !b[j..].starts_with(&close) {
                j += 1;
            }
            i = j + close.len();
            out.push_str("\"\"");
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && b.get(i + 2) == Some(&b'\'') {
            // a char literal such as '"'
            out.push_str("' '");
            i += 3;
        } else {
            // Code is ASCII where paths can be; any other byte (a '⠋' in a literal) is a
            // space, so byte offsets into the result stay char boundaries.
            out.push(if b[i].is_ascii() { b[i] as char } else { ' ' });
            i += 1;
        }
    }
    out
}

/// Every module path a file's code names: `crate::a::b`, `super::x`, `self::x`, grouped
/// `use` trees expanded.
fn references(module: &Module, all: &BTreeMap<Vec<String>, Module>) -> BTreeSet<Vec<String>> {
    let text = &module.text;
    let inline = inline_modules(text);
    let mut paths: Vec<Vec<String>> = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let at_word = i == 0
            || !(bytes[i - 1].is_ascii_alphanumeric()
                || bytes[i - 1] == b'_'
                || bytes[i - 1] == b':');
        let rest = &text[i..];
        let root = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|r| rest.starts_with(r));
        if at_word && let Some(root) = root {
            let (tree, used) = path_tree(&rest[root.len()..]);
            // Inside `mod name { … }`, `self` and `super` start from that module.
            let mut here = module.path.clone();
            here.extend(
                inline
                    .iter()
                    .filter(|(span, _)| span.contains(&i))
                    .map(|(_, name)| name.clone()),
            );
            let base = base_of(&here, root.trim_end_matches(':'));
            for p in expand(&tree) {
                let mut full = base.clone();
                full.extend(p);
                paths.push(full);
            }
            i += root.len() + used.max(1);
            continue;
        }
        i += 1;
    }
    // A parent using its child modules by their bare names (`journal::Line`).
    let children: Vec<&Vec<String>> = all
        .keys()
        .filter(|k| k.len() == module.path.len() + 1 && k.starts_with(&module.path))
        .collect();
    for child in children {
        let name = child.last().unwrap();
        let pat = format!("{name}::");
        let mut from = 0;
        while let Some(pos) = text[from..].find(&pat) {
            let at = from + pos;
            let before = text[..at].chars().last();
            if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                paths.push(child.clone());
            }
            from = at + pat.len();
        }
    }
    paths
        .into_iter()
        .filter_map(|p| resolve(&p, all))
        .filter(|target| *target != module.path)
        .collect()
}

fn base_of(here: &[String], root: &str) -> Vec<String> {
    match root {
        "crate" => Vec::new(),
        "self" => here.to_vec(),
        _ => here[..here.len().saturating_sub(1)].to_vec(),
    }
}

/// The inline modules of a file (`mod name { … }`), each as its byte span and name,
/// outer before inner. The text is free of comments and literals, so braces balance.
fn inline_modules(text: &str) -> Vec<(std::ops::Range<usize>, String)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(pos) = text[from..].find("mod ") {
        let at = from + pos;
        from = at + 4;
        if at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_') {
            continue;
        }
        let rest = &text[from..];
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let after = rest[len..].trim_start();
        if len == 0 || !after.starts_with('{') {
            continue; // `mod name;`: a file of its own
        }
        let open = text.len() - after.len();
        let mut depth = 0;
        let close = (open..b.len()).find(|&j| {
            match b[j] {
                b'{' => depth += 1,
                b'}' => depth -= 1,
                _ => {}
            }
            depth == 0
        });
        out.push((open..close.unwrap_or(b.len()), rest[..len].to_string()));
    }
    out
}

/// A `use` tree: segments, possibly ending in a `{…}` group of subtrees.
#[derive(Debug)]
enum Tree {
    Path(Vec<String>, Vec<Tree>),
}

/// Parses `a::b::{c, d::e}` from the start of `text`; returns the tree and the bytes used.
fn path_tree(text: &str) -> (Tree, usize) {
    let mut segs = Vec::new();
    let mut i = 0;
    let b = text.as_bytes();
    loop {
        let start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        if i > start {
            segs.push(text[start..i].to_string());
        }
        let group = if text[i..].starts_with("::{") {
            Some(3)
        } else if i == start && text[i..].starts_with('{') {
            Some(1)
        } else {
            None
        };
        if let Some(skip) = group {
            i += skip;
            let mut groups = Vec::new();
            loop {
                while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b',') {
                    i += 1;
                }
                if i >= b.len() || b[i] == b'}' {
                    i += 1;
                    break;
                }
                let (t, used) = path_tree(&text[i..]);
                groups.push(t);
                i += used.max(1);
                // skip `as name`
                while i < b.len() && b[i] != b',' && b[i] != b'}' {
                    i += 1;
                }
            }
            return (Tree::Path(segs, groups), i);
        }
        if text[i..].starts_with("::") && i > start {
            i += 2;
            continue;
        }
        return (Tree::Path(segs, Vec::new()), i);
    }
}

fn expand(tree: &Tree) -> Vec<Vec<String>> {
    let Tree::Path(segs, groups) = tree;
    if groups.is_empty() {
        return vec![segs.clone()];
    }
    let mut out = Vec::new();
    for g in groups {
        for tail in expand(g) {
            let mut p = segs.clone();
            p.extend(tail.into_iter().filter(|s| s != "self"));
            out.push(p);
        }
    }
    out
}

/// The file a path lives in: its longest prefix that is a module.
fn resolve(path: &[String], all: &BTreeMap<Vec<String>, Module>) -> Option<Vec<String>> {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| all.contains_key(p))
}

fn name(path: &[String]) -> String {
    if path.is_empty() {
        "lib".into()
    } else {
        path.join("::")
    }
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let all = modules();
    let mut g = BTreeMap::new();
    for (path, module) in &all {
        let refs = references(module, &all);
        g.insert(name(path), refs.iter().map(|r| name(r)).collect());
    }
    g
}

/// A cycle in `g`, if any, as the list of nodes around it.
fn find_cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        mark: &mut BTreeMap<String, Mark>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        mark.insert(n.to_string(), Mark::Open);
        stack.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            match mark.get(m.as_str()).copied().unwrap_or(Mark::New) {
                Mark::Open => {
                    let from = stack.iter().position(|s| s == m).unwrap();
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(m.clone());
                    return Some(cycle);
                }
                Mark::New => {
                    if let Some(c) = visit(m, g, mark, stack) {
                        return Some(c);
                    }
                }
                Mark::Done => {}
            }
        }
        stack.pop();
        mark.insert(n.to_string(), Mark::Done);
        None
    }
    let mut mark = BTreeMap::new();
    for n in g.keys() {
        if mark.get(n.as_str()).copied().unwrap_or(Mark::New) == Mark::New {
            let mut stack = Vec::new();
            if let Some(c) = visit(n, g, &mut mark, &mut stack) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn no_import_cycle_between_files() {
    let mut g = graph();
    assert!(g.len() > 20, "the walk found the source files");
    // Every cycle, one at a time: report it, cut its first edge, look again.
    let mut cycles = Vec::new();
    while let Some(cycle) = find_cycle(&g) {
        cycles.push(cycle.join(" → "));
        g.get_mut(&cycle[0]).unwrap().remove(&cycle[1]);
    }
    assert!(
        cycles.is_empty(),
        "import cycles between files:\n{}",
        cycles.join("\n")
    );
}

#[test]
fn no_import_cycle_between_top_level_modules() {
    let top = |n: &str| n.split("::").next().unwrap().to_string();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, tos) in graph() {
        // lib.rs only declares the modules.
        if from == "lib" {
            continue;
        }
        let entry = g.entry(top(&from)).or_default();
        for to in tos {
            if top(&to) != top(&from) && to != "lib" {
                entry.insert(top(&to));
            }
        }
    }
    if let Some(cycle) = find_cycle(&g) {
        panic!("import cycle between modules: {}", cycle.join(" → "));
    }
    // The leaves really are leaves.
    for leaf in ["util", "delivery"] {
        let deps = &g[leaf];
        assert!(
            deps.iter().all(|d| d == "error"),
            "{leaf} must depend on nothing of the crate but error, depends on {deps:?}"
        );
    }
    assert!(
        g.iter()
            .all(|(from, tos)| from == "app" || !tos.contains("app")),
        "only the command line may depend on app: {g:?}"
    );
}

/// Files whose code contains `needle` (comments and strings aside).
fn users_of(needle: &str) -> BTreeSet<String> {
    modules()
        .values()
        .filter(|m| {
            m.text.match_indices(needle).any(|(at, _)| {
                !m.text[..at]
                    .chars()
                    .last()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
            })
        })
        .map(|m| name(&m.path))
        .collect()
}

fn assert_only_in(needle: &str, allowed: &[&str]) {
    let outside: Vec<String> = users_of(needle)
        .into_iter()
        .filter(|m| {
            !allowed
                .iter()
                .any(|a| m == a || m.starts_with(&format!("{a}::")))
        })
        .collect();
    assert!(
        outside.is_empty(),
        "`{needle}` may be used only in {allowed:?}, also used in {outside:?}"
    );
}

#[test]
fn only_cluster_talks_to_kube() {
    assert_only_in("kube::", &["cluster"]);
    assert_only_in("hyper::", &["cluster"]);
}

#[test]
fn only_gitops_uses_git2() {
    assert_only_in("git2::", &["gitops"]);
}

#[test]
fn only_the_store_and_util_files_write_local_state() {
    for write in [
        "fs::write",
        "File::create",
        "OpenOptions",
        "fs::rename",
        "fs::remove_file",
        "fs::remove_dir",
        "fs::create_dir",
        "fs::set_permissions",
    ] {
        assert_only_in(write, &["store", "util::files", "util::lock"]);
    }
}

/// The crate denies `unsafe_code`; the one exception registers clinv's libgit2
/// transports (`git2::transport::register` is unsafe), in gitops.
#[test]
fn unsafe_code_only_where_gitops_registers_transports() {
    assert_only_in("unsafe", &["gitops"]);
}

#[test]
fn only_app_prints() {
    for print in [
        "println!",
        "eprintln!",
        "print!",
        "eprint!",
        "std::io::stdout",
        "std::io::stderr",
    ] {
        assert_only_in(print, &["app"]);
    }
}

/// Files at `paths`, without code: what a reader test resolves its paths against.
fn empty_modules(paths: &[&[&str]]) -> BTreeMap<Vec<String>, Module> {
    paths
        .iter()
        .map(|p| {
            let path: Vec<String> = p.iter().map(|s| s.to_string()).collect();
            let module = Module {
                path: path.clone(),
                text: String::new(),
            };
            (path, module)
        })
        .collect()
}

#[test]
fn the_reader_sees_through_groups_and_comments() {
    let m = Module {
        path: vec!["x".into()],
        text: strip_comments(
            "use crate::{a::{b, c::D}, e};\n// crate::f\nlet s = \"crate::g\"; super::h::I;",
        ),
    };
    let all = empty_modules(&[
        &["a"],
        &["a", "b"],
        &["a", "c"],
        &["e"],
        &["f"],
        &["g"],
        &["h"],
        &["x"],
    ]);
    let refs: BTreeSet<String> = references(&m, &all).iter().map(|r| name(r)).collect();
    assert_eq!(
        refs,
        ["a::b", "a::c", "e", "h"]
            .into_iter()
            .map(String::from)
            .collect()
    );
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(find_cycle(&g).unwrap(), ["a", "b", "a"]);
}

#[test]
fn the_reader_knows_a_nested_modules_super_is_the_file() {
    // In `s/x.rs`, `super::` inside `mod testing { … }` is `s::x`, not `s`.
    let m = Module {
        path: vec!["s".into(), "x".into()],
        text: strip_comments(
            "mod testing {\n    use super::L;\n    mod deeper { use super::super::M; }\n    fn f() { let c = '}'; }\n}\nuse super::y::Z;",
        ),
    };
    let all = empty_modules(&[&["s"], &["s", "x"], &["s", "y"]]);
    let refs: BTreeSet<String> = references(&m, &all).iter().map(|r| name(r)).collect();
    assert_eq!(refs, BTreeSet::from(["s::y".to_string()]));
}
