//! Path arguments as policies canonicalise them: every candidate is
//! absolute and free of `.` and `..`, the lexical reading of a path with `..`
//! is among the candidates, and a path under the (nonexistent) working
//! directory without `..` stays under it.
#![no_main]

use std::path::{Component, Path, PathBuf};

use libfuzzer_sys::fuzz_target;
use warden_policy::path_candidates;

/// A base that does not exist, so nothing on this machine's disk (no link)
/// changes the reading: the kernel's and the lexical one must agree.
const BASE: &str = "/nonexistent-warden-fuzz";

fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else { return };
    let home = PathBuf::from(format!("{BASE}/home"));
    let cwd = PathBuf::from(format!("{BASE}/cwd"));
    let Ok(candidates) = path_candidates(raw, Some(home.clone()), Some(cwd.clone())) else { return };
    assert!(!candidates.is_empty(), "no candidate for {raw:?}");
    for candidate in &candidates {
        assert!(candidate.is_absolute(), "{candidate:?} of {raw:?} is relative");
        assert!(
            candidate.components().all(|c| !matches!(c, Component::ParentDir | Component::CurDir)),
            "{candidate:?} of {raw:?} keeps . or .."
        );
    }
    // Resolved under the nonexistent base, the readings are the lexical one.
    let absolute =
        if raw == "~" || raw.starts_with("~/") { home.join(raw[1..].trim_start_matches('/')) } else { cwd.join(raw) };
    if absolute.starts_with(BASE) && lexical(&absolute).starts_with(BASE) && !raw.starts_with('/') {
        // Nothing under BASE exists, so no link can redirect the walk.
        let expected = lexical(&absolute);
        assert!(candidates.contains(&expected), "{raw:?}: {candidates:?} lacks the lexical {expected:?}");
        if !raw.split('/').any(|part| part == "..") {
            assert!(
                candidates.iter().all(|c| c.starts_with(&cwd) || c.starts_with(&home)),
                "{raw:?} escaped: {candidates:?}"
            );
        }
    }
});
