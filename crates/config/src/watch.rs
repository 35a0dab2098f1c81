//! `servers.<name>.watch`: restarting a server when its code changes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Names ignored anywhere in a watched path unless a server says otherwise:
/// version control, dependencies, caches, build outputs and editors' scratch
/// files (vim's `4913` probe, swap and backup files).
pub const DEFAULT_IGNORE: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "__pycache__",
    "*.pyc",
    ".venv",
    "venv",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".tox",
    "target",
    "dist",
    "build",
    ".next",
    "coverage",
    ".DS_Store",
    "*.swp",
    "*.swx",
    "*~",
    ".#*",
    "4913",
];

/// What to watch for one server; a change restarts it.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Watch {
    /// Files, directories (watched with everything below them) or globs
    /// (`src/**/*.py`). Relative paths start at the server's `cwd`, else at
    /// Warden's working directory.
    pub paths: Vec<String>,
    /// Only files with one of these extensions count (`py`, `ts`); every
    /// file when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    /// Globs matched against each component of a changed path (`*.log`,
    /// `fixtures`), ignored besides [`DEFAULT_IGNORE`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<String>,
    /// Ignore nothing by default: only `ignore` applies.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_default_ignore: bool,
    /// Changes closer together than this are one restart (an editor's save
    /// by rename, a formatter touching many files), in milliseconds.
    #[serde(default = "default_debounce_ms", skip_serializing_if = "is_default_debounce")]
    pub debounce_ms: u64,
}

fn default_debounce_ms() -> u64 {
    300
}

fn is_default_debounce(ms: &u64) -> bool {
    *ms == default_debounce_ms()
}

impl Watch {
    /// Watches `paths` with every other setting at its default.
    pub fn new(paths: Vec<String>) -> Watch {
        Watch {
            paths,
            extensions: Vec::new(),
            ignore: Vec::new(),
            no_default_ignore: false,
            debounce_ms: default_debounce_ms(),
        }
    }

    /// Every ignore glob in force: the defaults (unless turned off), then
    /// the server's own.
    pub fn ignored(&self) -> impl Iterator<Item = &str> {
        let defaults = if self.no_default_ignore { &[][..] } else { DEFAULT_IGNORE };
        defaults.iter().copied().chain(self.ignore.iter().map(String::as_str))
    }

    /// The extensions, without a leading dot.
    pub fn extensions(&self) -> impl Iterator<Item = &str> {
        self.extensions.iter().map(|extension| extension.trim_start_matches('.'))
    }
}
