//! Watching a server's code: file system events under its `watch` paths,
//! filtered by extension and ignore globs, reported as one change per burst
//! of events (notify's debouncer stitches an editor's save-by-rename
//! together; the supervisor then waits for the burst to end). Upstreams that
//! watch the same paths share one watch.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use globset::{Glob, GlobMatcher, GlobSet, GlobSetBuilder};
use notify_debouncer_full::notify::{EventKind, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, NoCache, new_debouncer_opt};
use tokio::sync::mpsc;
use warden_config::Watch;
use warden_sync::lock;

/// The longest the debouncer holds events back; the supervisor's own wait
/// (`debounceMs`) decides what counts as one change.
const STITCH: Duration = Duration::from_millis(100);

/// One watched path: what is watched, and which changed paths count.
#[derive(Debug)]
enum Root {
    /// A directory and everything below it.
    Dir(PathBuf),
    /// One file (its directory is watched: editors save by renaming).
    File(PathBuf),
    /// A glob, below its longest literal directory.
    Glob(PathBuf, GlobMatcher),
}

impl Root {
    /// Where the watcher is attached, and how.
    fn watched(&self) -> (&Path, RecursiveMode) {
        match self {
            Root::Dir(dir) | Root::Glob(dir, _) => (dir, RecursiveMode::Recursive),
            Root::File(file) => (file.parent().unwrap_or(Path::new("/")), RecursiveMode::NonRecursive),
        }
    }

    /// The part of `path` below this root, when `path` is one of its files.
    fn relative<'a>(&self, path: &'a Path) -> Option<&'a Path> {
        match self {
            Root::Dir(dir) => path.strip_prefix(dir).ok(),
            Root::File(file) => (path == file).then(|| Path::new(path.file_name().unwrap_or_default())),
            Root::Glob(dir, glob) => glob.is_match(path).then(|| path.strip_prefix(dir).ok()).flatten(),
        }
    }
}

/// Which changed paths count.
#[derive(Debug)]
struct Filter {
    roots: Vec<Root>,
    extensions: Vec<String>,
    ignore: GlobSet,
}

impl Filter {
    fn counts(&self, path: &Path) -> bool {
        let Some(relative) = self.roots.iter().find_map(|root| root.relative(path)) else { return false };
        let ignored = relative.components().any(|component| match component {
            Component::Normal(name) => self.ignore.is_match(Path::new(name)),
            _ => false,
        });
        let extension_ok = self.extensions.is_empty()
            || path
                .extension()
                .and_then(|ext| ext.to_str())
                .is_some_and(|ext| self.extensions.iter().any(|e| e == ext));
        !ignored && extension_ok
    }
}

/// One watch of the file system, shared by every upstream that watches the
/// same paths from the same place (over HTTP, each session runs its own
/// process of a server: they share one watch, not one each, which would
/// exhaust the kernel's inotify instances).
struct Shared {
    _debouncer: Debouncer<RecommendedWatcher, NoCache>,
    subscribers: Arc<Mutex<Subscribers>>,
}

/// Who hears of a change: by subscription number.
type Subscribers = HashMap<u64, mpsc::UnboundedSender<PathBuf>>;

/// The live shared watches, by what they watch.
type Registry = Mutex<HashMap<(PathBuf, Watch), Weak<Shared>>>;

fn registry() -> &'static Registry {
    static WATCHES: OnceLock<Registry> = OnceLock::new();
    WATCHES.get_or_init(Default::default)
}

static SUBSCRIPTIONS: AtomicU64 = AtomicU64::new(1);

/// One upstream's subscription to a watch; dropping it unsubscribes (and
/// stops watching when it was the last).
pub(crate) struct CodeWatch {
    shared: Arc<Shared>,
    id: u64,
}

impl std::fmt::Debug for CodeWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CodeWatch")
    }
}

impl Drop for CodeWatch {
    fn drop(&mut self) {
        lock(&self.shared.subscribers).remove(&self.id);
    }
}

impl CodeWatch {
    /// Watches `watch`'s paths (relative ones below `base`); each relevant
    /// change sends the changed path to `changes`. Fails with a sentence
    /// when a path cannot be watched.
    pub fn start(watch: &Watch, base: &Path, changes: mpsc::UnboundedSender<PathBuf>) -> Result<CodeWatch, String> {
        let key = (std::path::absolute(base).unwrap_or_else(|_| base.to_owned()), watch.clone());
        let mut watches = lock(registry());
        watches.retain(|_, shared| shared.strong_count() > 0);
        let shared = match watches.get(&key).and_then(Weak::upgrade) {
            Some(shared) => shared,
            None => {
                let shared = Arc::new(Shared::start(watch, base)?);
                watches.insert(key, Arc::downgrade(&shared));
                shared
            }
        };
        let id = SUBSCRIPTIONS.fetch_add(1, Ordering::Relaxed);
        lock(&shared.subscribers).insert(id, changes);
        Ok(CodeWatch { shared, id })
    }
}

impl Shared {
    fn start(watch: &Watch, base: &Path) -> Result<Shared, String> {
        let filter = Filter {
            roots: watch.paths.iter().map(|path| root(base, path)).collect::<Result<_, _>>()?,
            extensions: watch.extensions().map(str::to_owned).collect(),
            ignore: ignore_set(watch)?,
        };
        let subscribers: Arc<Mutex<Subscribers>> = Default::default();
        let hearing = subscribers.clone();
        let handler = move |result: DebounceEventResult| match result {
            Ok(events) => {
                let changed = events
                    .iter()
                    .filter(|event| !matches!(event.kind, EventKind::Access(_) | EventKind::Other))
                    .flat_map(|event| event.paths.iter())
                    .find(|path| filter.counts(path));
                if let Some(path) = changed {
                    for subscriber in lock(&hearing).values() {
                        let _ = subscriber.send(path.clone());
                    }
                }
            }
            Err(errors) => {
                for error in errors {
                    tracing::warn!("watching code: {error}");
                }
            }
        };
        let mut debouncer =
            new_debouncer_opt(STITCH, None, handler, NoCache, Default::default()).map_err(|err| err.to_string())?;
        for path in &watch.paths {
            let root = root(base, path)?;
            let (watched, mode) = root.watched();
            debouncer.watch(watched, mode).map_err(|err| format!("cannot watch {}: {err}", watched.display()))?;
        }
        Ok(Shared { _debouncer: debouncer, subscribers })
    }
}

/// Resolves one configured path against `base`.
fn root(base: &Path, path: &str) -> Result<Root, String> {
    let full = match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => base.join(path),
    };
    if path.contains(['*', '?', '[', '{']) {
        let literal: PathBuf = full
            .components()
            .take_while(|component| !component.as_os_str().to_string_lossy().contains(['*', '?', '[', '{']))
            .collect();
        let pattern = full.to_string_lossy();
        let glob = Glob::new(&pattern).map_err(|err| format!("watch path {path:?} is not a valid glob: {err}"))?;
        return Ok(Root::Glob(literal, glob.compile_matcher()));
    }
    match std::fs::metadata(&full) {
        Ok(meta) if meta.is_dir() => Ok(Root::Dir(full)),
        Ok(_) => Ok(Root::File(full)),
        Err(err) => Err(format!("cannot watch {}: {err}", full.display())),
    }
}

/// The ignore globs in force, matched against each component of a path.
fn ignore_set(watch: &Watch) -> Result<GlobSet, String> {
    let mut set = GlobSetBuilder::new();
    for pattern in watch.ignored() {
        set.add(Glob::new(pattern).map_err(|err| format!("ignore glob {pattern:?} is invalid: {err}"))?);
    }
    set.build().map_err(|err| err.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(watch: &Watch, base: &Path) -> Filter {
        Filter {
            roots: watch.paths.iter().map(|path| root(base, path).expect("root")).collect(),
            extensions: watch.extensions().map(str::to_owned).collect(),
            ignore: ignore_set(watch).expect("ignore"),
        }
    }

    #[test]
    fn extensions_ignores_and_globs_decide_what_counts() {
        let dir = std::env::temp_dir().join(format!("warden-code-watch-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).expect("dir");
        std::fs::write(dir.join("main.py"), "").expect("file");
        let mut watch = Watch::new(vec![".".into()]);
        watch.extensions = vec![".py".into(), "ts".into()];
        watch.ignore = vec!["generated".into()];
        let dirs = filter(&watch, &dir);
        assert!(dirs.counts(&dir.join("./src/server.py")) || dirs.counts(&dir.join("src/server.py")));
        assert!(!dirs.counts(&dir.join("src/notes.md")), "not a watched extension");
        assert!(!dirs.counts(&dir.join("node_modules/x/index.ts")), "ignored by default");
        assert!(!dirs.counts(&dir.join("src/__pycache__/server.py")), "ignored by default");
        assert!(!dirs.counts(&dir.join("generated/api.ts")), "ignored by the server");
        assert!(!dirs.counts(Path::new("/elsewhere/x.py")), "outside the watched paths");

        let file = filter(&Watch::new(vec!["main.py".into()]), &dir);
        assert!(file.counts(&dir.join("main.py")));
        assert!(!file.counts(&dir.join("other.py")));

        let glob = filter(&Watch::new(vec!["src/**/*.py".into()]), &dir);
        assert!(glob.counts(&dir.join("src/a/b.py")));
        assert!(!glob.counts(&dir.join("main.py")));
        assert!(root(&dir, "missing.py").is_err(), "a missing path is reported");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn upstreams_watching_the_same_paths_share_one_watch() {
        let dir = std::env::temp_dir().join(format!("warden-shared-watch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let watch = Watch { extensions: vec!["py".into()], ..Watch::new(vec![".".into()]) };
        let (one_tx, mut one) = mpsc::unbounded_channel();
        let (two_tx, mut two) = mpsc::unbounded_channel();
        let first = CodeWatch::start(&watch, &dir, one_tx).expect("watch");
        let second = CodeWatch::start(&watch, &dir, two_tx).expect("watch");
        assert!(Arc::ptr_eq(&first.shared, &second.shared), "one watch for both");

        let patience = Duration::from_secs(20);
        std::fs::write(dir.join("server.py"), "1").expect("write");
        let heard = tokio::time::timeout(patience, one.recv()).await.expect("first heard it");
        assert_eq!(heard, Some(dir.join("server.py")));
        assert!(tokio::time::timeout(patience, two.recv()).await.expect("second heard it").is_some());

        // The other keeps watching when one goes.
        drop(first);
        std::fs::write(dir.join("server.py"), "2").expect("write");
        assert!(tokio::time::timeout(patience, two.recv()).await.expect("still watching").is_some());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
