//! Warden's argument-policy engine.
//!
//! It unites two systems: IronCurtain's structural checks and per-role rules
//! (argument roles from tool annotations, protected paths, a sandbox,
//! per-server domain allowlists, the most restrictive role winning) and MCP
//! Sentinel's ordered rules on argument values (strings, numbers, lists, SQL
//! facts; the first deciding rule wins, `log` rules record and go on).
//!
//! Unlike them it never fails open: an invalid policy (a bad regex, an
//! unknown list or dialect, a malformed condition) is an error naming its
//! rule, not an empty or silently non-matching policy; an argument of an
//! unexpected JSON type is refused or fails to match, never crashes the
//! engine. See [`evaluate`](PolicyEngine::evaluate) for the algorithm
//! (documented in `src/evaluate.rs`).
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let config = warden_config::parse(std::path::Path::new("w.yaml"), r#"
//! policy:
//!   rules:
//!     - name: no-unbounded-select
//!       if: {tool: ["query"], args: {arg: sql, sql: {selectWithoutLimit: true}}}
//!       then: deny
//!       reason: add a LIMIT
//! "#, &|_| None)?;
//! let engine = warden_policy::PolicyEngine::compile(&config, None)?;
//! let evaluation = engine.evaluate("db", "query", Some(r#"{"sql": "SELECT * FROM users"}"#));
//! assert_eq!(evaluation.action, warden_policy::Decision::Deny);
//! assert_eq!(evaluation.rule, "no-unbounded-select");
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

mod candidates;
mod cases;
mod categories;
mod compile;
mod condition;
mod decode;
mod domains;
mod error;
mod evaluate;
mod fold;
mod identifiers;
mod index;
mod known;
mod loose_paths;
mod mounts;
mod paths;
mod presets;
mod protect;
mod roles;
mod scan;
mod shape;
mod sieve;
mod trigger;
mod verdict;

pub use cases::{CaseFailure, CaseReport, Expected, run_cases};
pub use compile::{PolicyEngine, Request};
pub use error::PolicyError;
pub use presets::{PRESETS, preset};
pub use protect::{CREDENTIAL_STORES, default_protected_paths};
pub use verdict::{Decision, Evaluation};
pub use warden_config::own_files;

/// The host a policy reads in a URL or git remote argument, as
/// `(host, is_ip)`, or why it has none. Public for the fuzz targets, which
/// compare it with the `url` crate; policies use it through their roles.
pub fn url_host(url: &str) -> Result<(String, bool), &'static str> {
    domains::host_of(url).map(|host| (host.as_str().to_owned(), matches!(host, domains::Host::Ip(_))))
}

/// The canonical forms a policy checks a path argument as (one, or two when
/// `..` reads differently before and after following links), resolving `~`
/// against `home` and relative paths against `cwd`. Public for the fuzz
/// targets; policies use it through their roles.
pub fn path_candidates(
    raw: &str,
    home: Option<std::path::PathBuf>,
    cwd: Option<std::path::PathBuf>,
) -> Result<Vec<std::path::PathBuf>, String> {
    paths::canonicalize(raw, &paths::PathEnv { home, cwd })
}
