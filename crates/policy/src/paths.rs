//! Paths: canonicalisation, containment, protected paths.
//!
//! A path argument is made absolute (`~` → `HOME`, relative → the current
//! directory) and then resolved the way the kernel would: component by
//! component, following every symbolic link that exists (also a dangling one
//! or one under a directory reached through `..`), with `..` taken from the
//! real parent. Components that do not exist yet are appended as written,
//! so a file about to be created is checked where it will be created.
//!
//! Tools differ in how they treat `..`: the kernel applies it after following
//! links, while many servers normalise it away first (`path.resolve`). When a
//! path contains `..`, both readings are kept as candidates; a path is within
//! a directory only if every candidate is, and protected if any is.

use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

/// Longest path text accepted (Linux `PATH_MAX`).
pub(crate) const MAX_PATH_BYTES: usize = 4096;

/// Symbolic links followed while resolving one path before giving up (as
/// the kernel's `ELOOP`).
const MAX_LINKS: usize = 40;

/// What relative and `~` paths are resolved against.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PathEnv {
    /// `HOME`.
    pub home: Option<PathBuf>,
    /// The current directory.
    pub cwd: Option<PathBuf>,
}

impl PathEnv {
    /// The process's `HOME` and current directory.
    pub(crate) fn from_process() -> PathEnv {
        PathEnv {
            home: std::env::var_os("HOME").filter(|home| !home.is_empty()).map(PathBuf::from),
            cwd: std::env::current_dir().ok(),
        }
    }
}

/// How a decision resolves the paths it checks: reading every filesystem,
/// or only the machine's own, for a caller that must not wait on one that
/// may not answer (see [`crate::mounts`]) and decides such a call
/// elsewhere. Refraining is noted: what was decided without the path does
/// not stand.
#[derive(Debug)]
pub(crate) struct Resolver {
    local_only: bool,
    /// The remote mounts, looked up at the first path to read: most calls
    /// name none.
    remote: std::cell::OnceCell<std::sync::Arc<crate::mounts::Remote>>,
    wanted: std::cell::Cell<bool>,
}

impl Resolver {
    /// Resolves by reading any filesystem.
    pub(crate) fn reading() -> Resolver {
        Resolver { local_only: false, remote: std::cell::OnceCell::new(), wanted: std::cell::Cell::new(false) }
    }

    /// Resolves on the machine's own filesystems; a path whose walk reaches
    /// a remote mount is an error, and [`Resolver::wanted`] says so.
    pub(crate) fn local_only() -> Resolver {
        Resolver { local_only: true, ..Resolver::reading() }
    }

    /// [`Resolver::local_only`], with `remote` for the remote mounts.
    #[cfg(test)]
    pub(crate) fn local_only_of(remote: crate::mounts::Remote) -> Resolver {
        let resolver = Resolver::local_only();
        let _ = resolver.remote.set(std::sync::Arc::new(remote));
        resolver
    }

    /// [`canonicalize`], by this resolver.
    pub(crate) fn canonicalize(&self, raw: &str, env: &PathEnv) -> Result<Vec<PathBuf>, String> {
        canonicalize_by(raw, env, self)
    }

    /// Whether `path` may be read (noting it when it may not).
    fn may_read(&self, path: &Path) -> bool {
        let reaches = self.local_only && self.remote.get_or_init(crate::mounts::remote).reaches(path);
        if reaches {
            self.wanted.set(true);
        }
        !reaches
    }

    /// Whether a path was to be read on a remote mount while refraining.
    pub(crate) fn wanted(&self) -> bool {
        self.wanted.get()
    }
}

/// The canonical forms of `raw` (one, or two when `..` is read differently
/// by the kernel and by lexical normalisation), or why it has none.
pub(crate) fn canonicalize(raw: &str, env: &PathEnv) -> Result<Vec<PathBuf>, String> {
    canonicalize_by(raw, env, &Resolver::reading())
}

/// [`canonicalize`], reading what `resolver` lets it read.
fn canonicalize_by(raw: &str, env: &PathEnv, resolver: &Resolver) -> Result<Vec<PathBuf>, String> {
    let absolute = absolute(raw, env)?;
    let resolved = resolve(&absolute, resolver)?;
    let mut candidates = vec![resolved];
    if absolute.components().any(|c| c == Component::ParentDir) {
        let lexical = resolve(&normalize(&absolute), resolver)?;
        if !candidates.contains(&lexical) {
            candidates.push(lexical);
        }
    }
    Ok(candidates)
}

/// `raw` as an absolute path: `~` expanded, relative paths joined to the
/// current directory. Nothing is resolved yet.
fn absolute(raw: &str, env: &PathEnv) -> Result<PathBuf, String> {
    if raw.is_empty() {
        return Err("the path is empty".into());
    }
    if raw.contains('\0') {
        return Err("the path contains a NUL byte".into());
    }
    if raw.len() > MAX_PATH_BYTES {
        return Err(format!("the path is longer than {MAX_PATH_BYTES} bytes"));
    }
    let path = if raw == "~" || raw.starts_with("~/") {
        let home = env.home.as_ref().ok_or("the path starts with ~ but HOME is not set")?;
        home.join(raw[1..].trim_start_matches('/'))
    } else if raw.starts_with('~') {
        return Err("~user paths are not supported".into());
    } else {
        PathBuf::from(raw)
    };
    if path.is_absolute() {
        return Ok(path);
    }
    let cwd = env.cwd.as_ref().ok_or("the path is relative and the current directory is unknown")?;
    Ok(cwd.join(path))
}

/// Removes `.` and applies `..` lexically (the root's parent is the root).
fn normalize(path: &Path) -> PathBuf {
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

/// Resolves an absolute path the way the kernel does, following links that
/// exist and appending what does not exist as written.
fn resolve(absolute: &Path, resolver: &Resolver) -> Result<PathBuf, String> {
    let mut pending: Vec<PathBuf> = Vec::new(); // components still to walk, last = next
    let mut current = PathBuf::new();
    let mut links = 0;
    push_components(absolute, &mut pending, &mut current);
    while let Some(part) = pending.pop() {
        if part.as_os_str() == ".." {
            current.pop();
            continue;
        }
        let next = current.join(&part);
        if !resolver.may_read(&next) {
            return Err(format!("{} is on a filesystem that is not read here", next.display()));
        }
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(format!("too many symbolic links at {}", next.display()));
                }
                let target = std::fs::read_link(&next)
                    .map_err(|err| format!("cannot read the link {}: {err}", next.display()))?;
                if target.as_os_str().is_empty() {
                    return Err(format!("the link {} is empty", next.display()));
                }
                push_components(&target, &mut pending, &mut current);
            }
            Ok(_) => current = next,
            Err(err) if matches!(err.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => current = next,
            Err(err) => return Err(format!("cannot resolve {}: {err}", next.display())),
        }
    }
    if current.as_os_str().is_empty() {
        return Err("the path resolves to nothing".into());
    }
    Ok(current)
}

/// Queues the components of `path` (in reverse, so the first is popped
/// first); an absolute `path` restarts `current` at its root.
fn push_components(path: &Path, pending: &mut Vec<PathBuf>, current: &mut PathBuf) {
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::Prefix(prefix) => *current = PathBuf::from(prefix.as_os_str()),
            Component::RootDir => {
                // An absolute path: start again from the root (keeping a Windows prefix).
                let mut root: PathBuf =
                    current.components().take_while(|c| matches!(c, Component::Prefix(_))).collect();
                root.push(component.as_os_str());
                *current = root;
            }
            Component::CurDir => {}
            Component::ParentDir => parts.push(PathBuf::from("..")),
            Component::Normal(name) => parts.push(PathBuf::from(name)),
        }
    }
    pending.extend(parts.into_iter().rev());
}

/// Whether `path` is `dir` or lies within it, component by component.
///
/// Both are canonical (absolute, no `.`, `..`, doubled or trailing
/// separator but the root's): [`canonicalize`] makes every path the engine
/// compares, the call's and the configured ones alike. So this compares
/// bytes, as [`Path::starts_with`] would compare components: `dir` must be
/// a prefix of `path` ending where a component does.
pub(crate) fn within(path: &Path, dir: &Path) -> bool {
    let (p, d) = (path.as_os_str().as_encoded_bytes(), dir.as_os_str().as_encoded_bytes());
    debug_assert!(is_canonical(p) && is_canonical(d), "{path:?} within {dir:?}: not canonical");
    p.starts_with(d) && (p.len() == d.len() || d == b"/" || p.get(d.len()) == Some(&b'/'))
}

/// Whether `bytes` is an absolute path in canonical form (see [`within`]).
fn is_canonical(bytes: &[u8]) -> bool {
    bytes.first() == Some(&b'/')
        && (bytes.len() == 1
            || (bytes.last() != Some(&b'/')
                && bytes.split(|&b| b == b'/').skip(1).all(|part| !matches!(part, b"" | b"." | b".."))))
}

/// Whether every candidate lies within (or is) `dir`.
pub(crate) fn all_within(candidates: &[PathBuf], dir: &Path) -> bool {
    !candidates.is_empty() && candidates.iter().all(|c| within(c, dir))
}

/// Whether every candidate lies within (or is) one of `dirs` (not
/// necessarily the same one).
pub(crate) fn all_within_any(candidates: &[PathBuf], dirs: &[PathBuf]) -> bool {
    !candidates.is_empty() && candidates.iter().all(|c| dirs.iter().any(|d| within(c, d)))
}

/// The first protected path that one of the candidates lies within. A
/// sandbox placed inside a protected directory is carved out of it (as
/// IronCurtain excludes its sandbox from protection); a protected path
/// inside the sandbox stays protected.
pub(crate) fn protected_by<'p>(
    candidates: &[PathBuf],
    protected: &'p [PathBuf],
    sandbox: Option<&Path>,
) -> Option<&'p Path> {
    protected
        .iter()
        .find(|p| {
            let carved = sandbox.is_some_and(|sandbox| within(sandbox, p) && all_within(candidates, sandbox));
            !carved && candidates.iter().any(|c| within(c, p))
        })
        .map(PathBuf::as_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(dir: &Path) -> PathEnv {
        PathEnv { home: Some(dir.join("home")), cwd: Some(dir.join("cwd")) }
    }

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("warden-policy-paths-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::canonicalize(dir).unwrap()
    }

    #[test]
    fn tilde_and_relative_paths_become_absolute() {
        let base = Path::new("/nonexistent-warden");
        let env = env(base);
        assert_eq!(canonicalize("~", &env).unwrap(), vec![base.join("home")]);
        assert_eq!(canonicalize("~/.ssh/id", &env).unwrap(), vec![base.join("home/.ssh/id")]);
        assert_eq!(canonicalize("a/./b", &env).unwrap(), vec![base.join("cwd/a/b")]);
        assert!(canonicalize("~bob/x", &env).is_err());
        assert!(canonicalize("~/x", &PathEnv::default()).is_err());
        assert!(canonicalize("x", &PathEnv::default()).is_err());
    }

    #[test]
    fn hostile_inputs_are_errors_not_panics() {
        let env = env(Path::new("/nonexistent-warden"));
        assert!(canonicalize("", &env).is_err());
        assert!(canonicalize("/tmp/a\0b", &env).is_err());
        assert!(canonicalize(&"a/".repeat(3000), &env).is_err());
        assert_eq!(canonicalize("/../../..", &env).unwrap(), vec![PathBuf::from("/")]);
        assert_eq!(canonicalize("//x//y/", &env).unwrap(), vec![PathBuf::from("/x/y")]);
    }

    #[test]
    fn traversal_is_resolved() {
        let env = env(Path::new("/nonexistent-warden"));
        let c = canonicalize("/safe/../home/u/.ssh/id_rsa", &env).unwrap();
        assert!(c.contains(&PathBuf::from("/home/u/.ssh/id_rsa")), "{c:?}");
        assert!(protected_by(&c, &[PathBuf::from("/home/u/.ssh")], None).is_some());
        assert!(!all_within(&c, Path::new("/safe")));
    }

    /// Resolving only what is local: a path, or a link, that reaches a
    /// remote mount is not read and is noted as wanted; the rest resolves
    /// as it always does.
    #[cfg(unix)]
    #[test]
    fn a_local_only_resolver_stops_where_a_remote_mount_starts() {
        let dir = temp("remote");
        std::fs::create_dir_all(dir.join("nfs/in")).unwrap();
        std::fs::create_dir_all(dir.join("local")).unwrap();
        std::os::unix::fs::symlink(dir.join("nfs/in"), dir.join("local/to-nfs")).unwrap();
        let mountinfo = format!("40 22 0:35 / {} rw - nfs4 server:/x rw\n", dir.join("nfs").display());
        let remote = || crate::mounts::Remote::of_mountinfo(&mountinfo);
        let env = env(&dir);
        let at = |rest: &str| dir.join(rest).display().to_string();
        for reaching in ["nfs/in/file", "local/to-nfs/file", "local/../nfs"] {
            let resolver = Resolver::local_only_of(remote());
            assert!(resolver.canonicalize(&at(reaching), &env).is_err(), "{reaching}");
            assert!(resolver.wanted(), "{reaching}");
            let everywhere = Resolver::reading();
            assert_eq!(everywhere.canonicalize(&at(reaching), &env), canonicalize(&at(reaching), &env));
            assert!(!everywhere.wanted());
        }
        let resolver = Resolver::local_only_of(remote());
        assert_eq!(resolver.canonicalize(&at("local/x"), &env).unwrap(), vec![dir.join("local/x")]);
        assert!(!resolver.wanted());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_followed_also_dangling_and_under_dotdot() {
        let dir = temp("links");
        std::fs::create_dir_all(dir.join("secret")).unwrap();
        std::fs::create_dir_all(dir.join("sandbox/sub")).unwrap();
        std::os::unix::fs::symlink(dir.join("secret"), dir.join("sandbox/link")).unwrap();
        std::os::unix::fs::symlink(dir.join("secret/new-file"), dir.join("sandbox/dangling")).unwrap();
        std::os::unix::fs::symlink("../secret", dir.join("sandbox/rel")).unwrap();
        let env = env(&dir);
        let secret = dir.join("secret");
        // Through a link to an existing directory, to a file not yet there.
        let c = canonicalize(dir.join("sandbox/link/not-yet/x").to_str().unwrap(), &env).unwrap();
        assert_eq!(c, vec![secret.join("not-yet/x")]);
        // A dangling link: writing to it creates its target.
        let c = canonicalize(dir.join("sandbox/dangling").to_str().unwrap(), &env).unwrap();
        assert_eq!(c, vec![secret.join("new-file")]);
        // A relative link.
        let c = canonicalize(dir.join("sandbox/rel/k").to_str().unwrap(), &env).unwrap();
        assert_eq!(c, vec![secret.join("k")]);
        // `link/..` is the link target's parent for the kernel, the sandbox lexically: both kept.
        let c = canonicalize(dir.join("sandbox/link/../x").to_str().unwrap(), &env).unwrap();
        assert!(c.contains(&dir.join("x")) && c.contains(&dir.join("sandbox/x")), "{c:?}");
        assert!(!all_within(&c, &dir.join("sandbox")));
        // A loop is an error.
        std::os::unix::fs::symlink(dir.join("loop"), dir.join("loop")).unwrap();
        assert!(canonicalize(dir.join("loop/x").to_str().unwrap(), &env).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn within_is_by_component() {
        let c = vec![PathBuf::from("/home/u/.sshx/key")];
        assert!(protected_by(&c, &[PathBuf::from("/home/u/.ssh")], None).is_none());
        // A sandbox inside a protected directory is carved out of it, nothing more.
        let home = [PathBuf::from("/home/u/.app")];
        let sandbox = Some(Path::new("/home/u/.app/sandbox"));
        assert!(protected_by(&[PathBuf::from("/home/u/.app/sandbox/f")], &home, sandbox).is_none());
        assert!(protected_by(&[PathBuf::from("/home/u/.app/config")], &home, sandbox).is_some());
        let inside = [PathBuf::from("/home/u/.app/sandbox/.env")];
        assert!(protected_by(&[PathBuf::from("/home/u/.app/sandbox/.env")], &inside, sandbox).is_some());
        assert!(all_within(&[PathBuf::from("/a/b")], Path::new("/a/b")));
        assert!(!all_within(&[], Path::new("/")));
        assert!(all_within_any(&[PathBuf::from("/a/x"), PathBuf::from("/b/y")], &[PathBuf::from("/a"), "/b".into()]));
    }

    #[test]
    fn within_compares_bytes_as_components_would() {
        let paths = ["/", "/a", "/ab", "/a/b", "/a/bc", "/a/b/c", "/b", "/a/.b", "/a/b.", "/é/x"];
        for path in paths {
            for dir in paths {
                assert_eq!(
                    within(Path::new(path), Path::new(dir)),
                    Path::new(path).starts_with(dir),
                    "{path} in {dir}"
                );
            }
        }
    }

    #[test]
    fn no_combination_of_path_fragments_panics() {
        const PARTS: [&str; 9] = ["/", "..", ".", "~", "a", "\0", "é", "//", "~/"];
        let env = env(Path::new("/nonexistent-warden"));
        for a in PARTS {
            for b in PARTS {
                for c in PARTS {
                    for d in PARTS {
                        if let Ok(candidates) = canonicalize(&format!("{a}{b}{c}{d}"), &env) {
                            assert!(candidates.iter().all(|p| p.is_absolute()));
                            let canonical = |p: &PathBuf| is_canonical(p.as_os_str().as_encoded_bytes());
                            assert!(candidates.iter().all(canonical), "{candidates:?}");
                        }
                    }
                }
            }
        }
    }
}
