//! The shape the core was given stays (issue 30): no type's inherent impl
//! is spread over more than two files, in any crate, and the gateway's
//! files use one another without a cycle (a file may use its own parent
//! module: that is containment, not a cycle). Read from the sources, as a
//! newcomer would read them: `use` paths and inline `crate::`/`super::`
//! paths outside comments and test modules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root")
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
}

/// A file's code: without its test module and without comments.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("readable source");
    let text = match text.find("#[cfg(test)]\nmod tests {") {
        Some(at) => &text[..at],
        None => &text[..],
    };
    text.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The type of an inherent `impl` that starts `line`, if it is one.
fn inherent_impl(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("impl")?;
    let rest = if let Some(generics) = rest.strip_prefix('<') {
        let mut depth = 1;
        let end = generics.char_indices().find_map(|(at, c)| {
            depth += match c {
                '<' => 1,
                '>' => -1,
                _ => 0,
            };
            (depth == 0).then_some(at)
        })?;
        &generics[end + 1..]
    } else {
        rest.strip_prefix(' ')?
    };
    let header = rest.split('{').next()?;
    if header.contains(" for ") || header.contains("where") && header.split("where").next()?.contains(" for ") {
        return None;
    }
    let name = rest.trim_start().split(|c: char| !is_ident(c) && c != ':').next()?;
    let name = name.rsplit("::").next()?;
    (!name.is_empty()).then_some(name)
}

#[test]
fn no_type_has_its_impl_spread_over_more_than_two_files() {
    let mut files = Vec::new();
    rust_files(&root().join("crates"), &mut files);
    let mut spread: BTreeMap<(String, String), BTreeSet<PathBuf>> = BTreeMap::new();
    for path in files.iter().filter(|path| path.components().any(|part| part.as_os_str() == "src")) {
        let krate = path.strip_prefix(root().join("crates")).expect("under crates").iter().next().expect("a crate");
        for line in code(path).lines() {
            if let Some(name) = inherent_impl(line) {
                let key = (krate.to_string_lossy().into_owned(), name.to_owned());
                spread.entry(key).or_default().insert(path.clone());
            }
        }
    }
    let found = spread.len();
    let over: Vec<_> = spread.into_iter().filter(|(_, files)| files.len() > 2).collect();
    assert!(over.is_empty(), "impls over more than two files: {over:#?}");
    assert!(found > 100, "the scan found only {found} impls: it reads nothing");
}

/// The module a gateway source file is (`front/http` for `front/http/mod.rs`).
fn module_of(src: &Path, path: &Path) -> Vec<String> {
    let relative = path.strip_prefix(src).expect("under src").with_extension("");
    let mut parts: Vec<String> = relative.iter().map(|part| part.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The paths a file's code names, from `crate`, as segments (brace groups
/// of a `use` spread into one path each).
fn named_paths(module: &[String], code: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for (at, _) in code.match_indices("::") {
        // The path's first segment ends here: read back to its start.
        let before = &code[..at];
        let start = before.rfind(|c: char| !is_ident(c)).map_or(0, |at| at + 1);
        let (head, after) = (&before[start..], &code[at + 2..]);
        if start > 0 && before[..start].ends_with("::") {
            continue;
        }
        let mut base: Vec<String> = match head {
            "crate" => Vec::new(),
            "super" => module[..module.len().saturating_sub(1)].to_vec(),
            "self" => module.to_vec(),
            _ => continue,
        };
        let mut rest = after;
        while let Some(next) = rest.strip_prefix("super::") {
            base.pop();
            rest = next;
        }
        let segments = |text: &str| -> Vec<String> {
            text.split("::")
                .map(|part| part.chars().take_while(|&c| is_ident(c)).collect::<String>())
                .take_while(|part| !part.is_empty())
                .collect()
        };
        if let Some(group) = rest.strip_prefix('{') {
            for item in group.split('}').next().unwrap_or("").split(',') {
                found.push([base.clone(), segments(item.trim())].concat());
            }
        } else {
            let mut path = base.clone();
            let mut tail = segments(rest);
            // `crate::a::{b, c}` after segments.
            let text_after: String = rest.chars().skip_while(|&c| is_ident(c) || c == ':').take(1).collect();
            if text_after == "{" && rest.contains("::{") {
                let group = rest.split_once("::{").map(|(_, group)| group).unwrap_or("");
                for item in group.split('}').next().unwrap_or("").split(',') {
                    found.push([path.clone(), tail.clone(), segments(item.trim())].concat());
                }
            }
            path.append(&mut tail);
            found.push(path);
        }
    }
    found
}

#[test]
fn the_gateway_files_use_one_another_without_a_cycle() {
    let src = root().join("crates/gateway/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeMap<Vec<String>, PathBuf> =
        files.iter().map(|path| (module_of(&src, path), path.clone())).collect();
    let mut uses: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, path) in &modules {
        let code = code(path);
        let targets = uses.entry(module.clone()).or_default();
        for named in named_paths(module, &code) {
            // The file a path leads to: its longest prefix that is a file.
            let Some(target) =
                (0..=named.len()).rev().map(|len| named[..len].to_vec()).find(|m| modules.contains_key(m))
            else {
                continue;
            };
            // A file's own module and its ancestors contain it.
            if !module.starts_with(&target) {
                targets.insert(target);
            }
        }
    }
    let edges: usize = uses.values().map(BTreeSet::len).sum();
    assert!(edges > 100, "the scan found only {edges} uses: it reads nothing");
    // Depth-first, looking for an edge back to a file on the current path.
    fn visit(
        at: &[String],
        uses: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        path: &mut Vec<Vec<String>>,
        done: &mut BTreeSet<Vec<String>>,
    ) -> Option<Vec<Vec<String>>> {
        if let Some(from) = path.iter().position(|module| module.as_slice() == at) {
            return Some(path[from..].to_vec());
        }
        if !done.insert(at.to_vec()) {
            return None;
        }
        path.push(at.to_vec());
        for next in uses.get(at).into_iter().flatten() {
            if let Some(cycle) = visit(next, uses, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for module in uses.keys() {
        let cycle = visit(module, &uses, &mut Vec::new(), &mut done);
        assert!(
            cycle.is_none(),
            "gateway files in a cycle: {:?}",
            cycle.map(|c| c.iter().map(|m| m.join("/")).collect::<Vec<_>>())
        );
    }
}
