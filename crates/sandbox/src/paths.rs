//! Path helpers: `~` expansion and carving denied paths out of allowed ones.

use std::path::{Path, PathBuf};

/// The user's home directory.
pub(crate) fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|home| !home.is_empty()).map(PathBuf::from)
}

/// `~` and `~/x` → under `$HOME`; anything else as written.
pub(crate) fn expand(path: &str) -> PathBuf {
    match (path, home()) {
        ("~", Some(home)) => home,
        (path, Some(home)) if path.starts_with("~/") => home.join(&path[2..]),
        (path, _) => PathBuf::from(path),
    }
}

/// `allowed`, with every path in `deny` taken out: an allowed directory that
/// contains a denied path is replaced by its entries (recursively), minus the
/// denied ones. Landlock can only allow, so this is how a deny inside an
/// allowed directory is expressed.
pub(crate) fn carve(allowed: &[PathBuf], deny: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for path in allowed {
        carve_one(path, deny, &mut out, 0);
    }
    out
}

fn carve_one(path: &Path, deny: &[PathBuf], out: &mut Vec<PathBuf>, depth: usize) {
    if deny.iter().any(|denied| path.starts_with(denied)) {
        return;
    }
    if !deny.iter().any(|denied| denied.starts_with(path)) {
        out.push(path.to_path_buf());
        return;
    }
    // A denied path lies below: allow its siblings one by one. Too deep a
    // tree is left out rather than allowed whole (fail closed).
    let Ok(entries) = std::fs::read_dir(path) else { return };
    if depth > 8 {
        return;
    }
    for entry in entries.flatten() {
        // A link is never followed: a rule for it would allow its target,
        // which a server that may write here could have chosen. Paths
        // through it are checked against their target's own rules.
        if entry.file_type().is_ok_and(|kind| kind.is_symlink()) {
            continue;
        }
        carve_one(&entry.path(), deny, out, depth + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carving_replaces_a_directory_by_its_allowed_entries() {
        let dir = std::env::temp_dir().join(format!("warden-carve-{}", std::process::id()));
        std::fs::create_dir_all(dir.join(".ssh")).unwrap();
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("notes"), "x").unwrap();
        std::os::unix::fs::symlink(dir.join(".ssh"), dir.join("planted")).unwrap();
        let mut carved = carve(std::slice::from_ref(&dir), &[dir.join(".ssh")]);
        carved.sort();
        assert_eq!(carved, vec![dir.join("notes"), dir.join("src")]);
        assert_eq!(carve(&[dir.join("src")], &[dir.join(".ssh")]), vec![dir.join("src")]);
        assert!(carve(&[dir.join(".ssh/x")], &[dir.join(".ssh")]).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
