//! Every relative link in the repository's Markdown files resolves: to a
//! file or folder that exists and, with a `#fragment`, to a heading of that
//! file (GitHub's anchor rules). A moved section or a renamed page fails
//! here rather than in a reader's browser.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The repository root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root")
}

/// Folders that hold other projects' files, build output or test scratch.
const SKIPPED: &[&str] = &["target", "node_modules", ".git", ".venv", ".venv1", "corpus", "artifacts", "seeds"];

fn markdown_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !SKIPPED.contains(&name.as_str()) {
                markdown_files(&path, found);
            }
        } else if name.ends_with(".md") {
            found.push(path);
        }
    }
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces
/// turned into hyphens.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown text's headings (outside code blocks), with
/// GitHub's `-1`, `-2` suffixes for repeated ones.
fn anchors(text: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code || !line.starts_with('#') {
            continue;
        }
        let base = anchor(line.trim_start_matches('#').replace('`', "").as_str());
        let mut candidate = base.clone();
        let mut n = 0;
        while seen.contains(&candidate) {
            n += 1;
            candidate = format!("{base}-{n}");
        }
        seen.insert(candidate);
    }
    seen
}

/// The targets of the inline links `[text](target)` outside code.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        // Inline code spans are not links.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            let target = after[..end].split_whitespace().next().unwrap_or("").to_owned();
            found.push(target);
            rest = &after[end..];
        }
    }
    found
}

#[test]
fn every_relative_link_in_the_markdown_files_resolves() {
    let root = root();
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    assert!(files.iter().any(|file| file.ends_with("README.md")), "no README found under {}", root.display());
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable Markdown");
        for target in links(&text) {
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, fragment) = match target.split_once('#') {
                Some((path, fragment)) => (path, Some(fragment)),
                None => (target.as_str(), None),
            };
            let resolved = if path.is_empty() { file.clone() } else { file.parent().expect("a folder").join(path) };
            let shown = file.strip_prefix(&root).unwrap_or(file).display().to_string();
            if !resolved.exists() {
                broken.push(format!("{shown}: {target} (no such file)"));
                continue;
            }
            if let Some(fragment) = fragment
                && resolved.extension().is_some_and(|ext| ext == "md")
            {
                let linked = std::fs::read_to_string(&resolved).unwrap_or_default();
                if !anchors(&linked).contains(fragment) {
                    broken.push(format!("{shown}: {target} (no such heading)"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_follow_githubs_rules() {
    assert_eq!(anchor("Both protocol eras"), "both-protocol-eras");
    assert_eq!(anchor("Rate limits, the breaker and pins"), "rate-limits-the-breaker-and-pins");
    assert_eq!(anchor("The `warden` CLI: validate & call"), "the-warden-cli-validate--call");
    let headings = anchors("# A\n## A\n```\n# not a heading\n```\n## B");
    assert!(headings.contains("a") && headings.contains("a-1") && headings.contains("b"));
    assert!(!headings.contains("not-a-heading"));
    assert_eq!(links("see [x](docs/a.md#b) and `[y](z)` and [w](https://e.org)"), ["docs/a.md#b", "https://e.org"]);
}
