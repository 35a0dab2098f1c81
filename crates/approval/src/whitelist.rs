//! The session whitelist: "approve this and calls like it for this
//! session" (IronCurtain's `/approve+`). In memory, visible and revocable.
//!
//! An entry covers one session's calls of one server's tool, escalated by
//! the same rule, whose resources all lie within what the approved call
//! named (a path within the approved path's directory, a URL on the
//! approved URL's host) and whose other arguments are exactly the approved
//! call's, except those the approver widened to a pattern (a glob: `*` any
//! text, `?` one character), which the approved value must itself match.
//! So a remembered `DROP TABLE t` never lets a `DROP DATABASE` or a call
//! another rule escalated through, unless the approver wrote a pattern that
//! says so. The entry states all of this in words ([`Grant::scope`]) before
//! it is granted.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use warden_jsonrpc::Method;
use warden_pipeline::{Audit, Call, Identifier, Outcome, Record, Verdict};

use crate::record::{Approval, millis};

/// One whitelist entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Grant {
    /// Its id (to revoke it).
    pub id: String,
    /// The session it applies to.
    pub session: String,
    /// The server.
    pub server: String,
    /// The tool.
    pub tool: String,
    /// Directories the call's paths must lie within.
    pub directories: Vec<String>,
    /// Hosts the call's URLs must be on.
    pub hosts: Vec<String>,
    /// The rule that escalated the approved call: only calls it escalates
    /// are covered.
    #[serde(default)]
    pub rule: String,
    /// The arguments other than resources (top-level members not naming a
    /// path or URL; all of them if the call named none), which a covered
    /// call must have exactly.
    #[serde(default)]
    pub exact: serde_json::Map<String, serde_json::Value>,
    /// String arguments the approver widened to a glob (`*`, `?`, `[…]`;
    /// `\` escapes), by name: a covered call's value must match it whole.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub patterns: BTreeMap<String, String>,
    /// The approval it came from.
    pub from: String,
    /// Who granted it.
    pub by: String,
    /// When, in milliseconds since the Unix epoch.
    pub at_ms: u64,
}

impl Grant {
    /// What it covers, in words.
    pub fn scope(&self) -> String {
        let mut parts = Vec::new();
        if !self.directories.is_empty() {
            parts.push(format!("paths within {}", self.directories.join(", ")));
        }
        if !self.hosts.is_empty() {
            parts.push(format!("URLs on {}", self.hosts.join(", ")));
        }
        if !self.exact.is_empty() {
            // Secrets as markers, and nothing a terminal would obey.
            let exact = serde_json::Value::Object(self.exact.clone());
            let shown = crate::display::for_terminal(&exact, &crate::display::masks(&exact));
            let values: Vec<String> = shown
                .as_object()
                .into_iter()
                .flatten()
                .map(|(key, value)| if key.is_empty() { value.to_string() } else { format!("{key} = {value}") })
                .collect();
            parts.push(format!("exactly {}", values.join(", ")));
        }
        if !self.patterns.is_empty() {
            let patterns: Vec<String> = self
                .patterns
                .iter()
                .map(|(name, glob)| {
                    let safe = |text: &str| crate::display::terminal_safe(text, false);
                    format!("{} matching {:?}", safe(name), safe(glob))
                })
                .collect();
            parts.push(patterns.join(", "));
        }
        let what = if parts.is_empty() { "no arguments".to_owned() } else { parts.join(" and ") };
        let rule = if self.rule.is_empty() { String::new() } else { format!(" escalated by rule {}", self.rule) };
        format!("{}/{} in session {}{rule} with {what}", self.server, self.tool, self.session)
    }

    fn covers(&self, call: &Covered<'_>) -> bool {
        let Covered { session, server, tool, rule, identifiers, arguments } = *call;
        if (self.session.as_str(), self.server.as_str(), self.tool.as_str(), self.rule.as_str())
            != (session, server, tool, rule)
        {
            return false;
        }
        let mut others = non_resources(arguments, identifiers);
        for (name, glob) in &self.patterns {
            let matched = match others.remove(name) {
                Some(serde_json::Value::String(value)) => matcher(glob).is_ok_and(|glob| glob.is_match(&value)),
                _ => false,
            };
            if !matched {
                return false;
            }
        }
        if others != self.exact {
            return false;
        }
        let open = self.directories.is_empty() && self.hosts.is_empty();
        if open {
            return identifiers.is_empty();
        }
        !identifiers.is_empty()
            && identifiers.iter().all(|identifier| match identifier {
                Identifier::Path(path) => {
                    let path = normal(path);
                    self.directories.iter().any(|dir| path.starts_with(dir))
                }
                Identifier::Url(url) => host_of(url).is_some_and(|host| self.hosts.contains(&host)),
            })
    }
}

/// Why a pattern for "approve for this session" was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// It names no string argument of the call that is not a resource.
    #[error(
        "argument {0:?} is not a string argument of this call that names no path or URL: only those take a pattern"
    )]
    NotAString(String),
    /// It is not a valid glob.
    #[error("the pattern for {0:?} is not a valid glob: {1}")]
    Invalid(String, String),
    /// The approved call itself is not within it.
    #[error("the pattern for {0:?} does not match the value of the call being approved")]
    MissesApproved(String),
}

/// A glob over a whole string value: `*` and `?` match any character, `/`
/// and newlines included; `\` escapes.
fn matcher(glob: &str) -> Result<globset::GlobMatcher, String> {
    globset::GlobBuilder::new(glob)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
        .map(|glob| glob.compile_matcher())
        .map_err(|err| err.kind().to_string())
}

/// A call asking whether an entry covers it.
#[derive(Debug, Clone, Copy)]
pub struct Covered<'a> {
    /// Its session.
    pub session: &'a str,
    /// Its server.
    pub server: &'a str,
    /// Its tool.
    pub tool: &'a str,
    /// The rule that escalated it.
    pub rule: &'a str,
    /// The resources it names.
    pub identifiers: &'a [Identifier],
    /// Its arguments.
    pub arguments: &'a serde_json::Value,
}

/// The members of `arguments` that name no resource: those whose value is
/// not one of `identifiers` (nor a list of them). Arguments that are not an
/// object count as one member, `""`.
fn non_resources(
    arguments: &serde_json::Value,
    identifiers: &[Identifier],
) -> serde_json::Map<String, serde_json::Value> {
    use serde_json::Value;
    let named = |value: &Value| {
        let is_identifier = |text: &str| {
            identifiers.iter().any(|identifier| match identifier {
                Identifier::Path(path) | Identifier::Url(path) => path == text,
            })
        };
        match value {
            Value::String(text) => is_identifier(text),
            Value::Array(items) => {
                !items.is_empty() && items.iter().all(|item| item.as_str().is_some_and(is_identifier))
            }
            _ => false,
        }
    };
    match arguments {
        Value::Object(map) => {
            map.iter().filter(|(_, value)| !named(value)).map(|(k, v)| (k.clone(), v.clone())).collect()
        }
        Value::Null => serde_json::Map::new(),
        other => std::iter::once((String::new(), other.clone())).collect(),
    }
}

/// The whitelist.
#[derive(Default)]
pub struct Whitelist {
    grants: Mutex<Vec<Grant>>,
    /// Where revocations are recorded (grants are recorded with the
    /// approval they came with).
    audit: Option<Arc<dyn Audit>>,
}

impl std::fmt::Debug for Whitelist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Whitelist").field("grants", &self.list()).finish_non_exhaustive()
    }
}

impl Whitelist {
    /// An empty whitelist whose revocations are recorded in `audit`.
    pub fn new(audit: Option<Arc<dyn Audit>>) -> Whitelist {
        Whitelist { grants: Mutex::default(), audit }
    }

    /// Adds an entry for calls like `approval`'s, granted by `by`.
    pub fn grant(&self, approval: &Approval, by: &str) -> Grant {
        let grant = Whitelist::prepare(approval, by);
        self.insert(grant.clone());
        grant
    }

    /// Adds `grant`.
    pub fn insert(&self, grant: Grant) {
        self.lock().push(grant);
    }

    /// The entry that would cover calls like `approval`'s, with the string
    /// arguments named in `patterns` widened to those globs, not yet added.
    /// Each must name a string argument that is not a resource, compile,
    /// and match the approved value.
    pub fn prepare_with(
        approval: &Approval,
        by: &str,
        patterns: &BTreeMap<String, String>,
    ) -> Result<Grant, PatternError> {
        let mut grant = Whitelist::prepare(approval, by);
        for (name, glob) in patterns {
            let Some(serde_json::Value::String(value)) = grant.exact.get(name) else {
                return Err(PatternError::NotAString(name.clone()));
            };
            let matcher = matcher(glob).map_err(|why| PatternError::Invalid(name.clone(), why))?;
            if !matcher.is_match(value) {
                return Err(PatternError::MissesApproved(name.clone()));
            }
            grant.exact.remove(name);
            grant.patterns.insert(name.clone(), glob.clone());
        }
        Ok(grant)
    }

    /// The arguments of `approval` that "approve for this session" may widen
    /// to a pattern (strings that name no resource), each with the pattern
    /// that matches exactly its value: what a page or CLI offers to edit.
    pub fn editable(approval: &Approval) -> Vec<(String, String)> {
        non_resources(&approval.arguments, &approval.identifiers)
            .into_iter()
            .filter(|(name, _)| !name.is_empty())
            .filter_map(|(name, value)| value.as_str().map(|text| (name.clone(), globset::escape(text))))
            .collect()
    }

    /// The entry that would cover calls like `approval`'s, not yet added.
    pub fn prepare(approval: &Approval, by: &str) -> Grant {
        let mut directories = Vec::new();
        let mut hosts = Vec::new();
        for identifier in &approval.identifiers {
            match identifier {
                Identifier::Path(path) => {
                    let path = normal(path);
                    let dir = path.parent().unwrap_or(&path).to_string_lossy().into_owned();
                    if !directories.contains(&dir) {
                        directories.push(dir);
                    }
                }
                Identifier::Url(url) => {
                    if let Some(host) = host_of(url).filter(|host| !hosts.contains(host)) {
                        hosts.push(host);
                    }
                }
            }
        }
        Grant {
            id: uuid::Uuid::new_v4().simple().to_string()[..8].to_owned(),
            session: approval.session.clone(),
            server: approval.server.clone(),
            tool: approval.tool.clone(),
            directories,
            hosts,
            rule: approval.rule.clone(),
            exact: non_resources(&approval.arguments, &approval.identifiers),
            patterns: BTreeMap::new(),
            from: approval.id.clone(),
            by: by.to_owned(),
            at_ms: millis(std::time::SystemTime::now()),
        }
    }

    /// The entry that covers this call, if any.
    pub fn covering(&self, call: &Covered<'_>) -> Option<Grant> {
        self.lock().iter().find(|grant| grant.covers(call)).cloned()
    }

    /// Removes entry `id` on behalf of `by`, and records that in the audit
    /// log (in the background); returns it.
    pub fn revoke(&self, id: &str, by: &str) -> Option<Grant> {
        let grant = {
            let mut grants = self.lock();
            let at = grants.iter().position(|grant| grant.id == id)?;
            grants.remove(at)
        };
        tracing::info!(grant = %grant.id, by, "session whitelist entry revoked: {}", grant.scope());
        if let Some(audit) = self.audit.clone() {
            let (grant, by) = (grant.clone(), by.to_owned());
            tokio::spawn(async move {
                let method = Method::Other("warden/whitelist".into());
                let call = Call {
                    session: &grant.session,
                    server: &grant.server,
                    method: &method,
                    name: &grant.tool,
                    arguments: None,
                };
                let reason = format!("entry {} revoked by {by}: {}", grant.id, grant.scope());
                let verdict = Verdict::Deny { rule: "session-whitelist".into(), reason };
                let record = Record {
                    call,
                    client: None,
                    principal: None,
                    client_address: None,
                    verdict: &verdict,
                    outcome: &Outcome::Refused,
                    result: None,
                    elapsed: Default::default(),
                    approval: None,
                };
                if let Err(why) = audit.record(record).await {
                    tracing::error!("could not audit a whitelist revocation: {why}");
                }
            });
        }
        Some(grant)
    }

    /// Every entry, oldest first.
    pub fn list(&self) -> Vec<Grant> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Grant>> {
        warden_sync::lock(&self.grants)
    }
}

/// `path` with `.` and `..` resolved lexically (a `..` can never climb out
/// of a granted directory unnoticed).
fn normal(path: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for component in Path::new(path).components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The lower-case host of a URL (`scheme://[user@]host[:port]/...`).
fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://").map(|(_, rest)| rest)?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map(|(_, host)| host).unwrap_or(authority);
    let host = host
        .rsplit_once(':')
        .filter(|(_, port)| port.chars().all(|c| c.is_ascii_digit()))
        .map(|(h, _)| h)
        .unwrap_or(host);
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::ApprovalState;

    fn approved(identifiers: Vec<Identifier>) -> Approval {
        Approval {
            id: "a".repeat(32),
            server: "fs".into(),
            tool: "read".into(),
            arguments: serde_json::Value::Null,
            masked: Vec::new(),
            args_digest: String::new(),
            identifiers,
            rule: "r".into(),
            reason: String::new(),
            policy_version: String::new(),
            session: "s1".into(),
            client: None,
            principal: None,
            created_ms: 0,
            expires_ms: 0,
            state: ApprovalState::Approved,
            decided: None,
        }
    }

    #[test]
    fn a_grant_covers_the_same_tool_and_session_within_what_was_approved() {
        let list = Whitelist::default();
        let grant = list.grant(
            &approved(vec![
                Identifier::Path("/srv/app/a.txt".into()),
                Identifier::Url("https://Example.com:443/x".into()),
            ]),
            "me",
        );
        assert_eq!(
            grant.scope(),
            "fs/read in session s1 escalated by rule r with paths within /srv/app and URLs on example.com"
        );
        let covered = |session: &str, tool: &str, ids: Vec<Identifier>| {
            let arguments = serde_json::Value::Null;
            let call = Covered { session, server: "fs", tool, rule: "r", identifiers: &ids, arguments: &arguments };
            list.covering(&call).is_some()
        };
        assert!(covered("s1", "read", vec![Identifier::Path("/srv/app/b.txt".into())]));
        assert!(covered("s1", "read", vec![Identifier::Url("http://example.com/y".into())]));
        assert!(!covered("s1", "read", vec![Identifier::Path("/srv/app/../secret".into())]), "no climbing out");
        assert!(!covered("s1", "read", vec![Identifier::Path("/srv/other".into())]));
        assert!(!covered("s2", "read", vec![Identifier::Path("/srv/app/b.txt".into())]), "another session");
        assert!(!covered("s1", "write", vec![Identifier::Path("/srv/app/b.txt".into())]), "another tool");
        assert!(!covered("s1", "read", vec![]), "a call naming nothing is not within anything");
        assert!(list.revoke(&grant.id, "me").is_some());
        assert!(!covered("s1", "read", vec![Identifier::Path("/srv/app/b.txt".into())]), "revoked");

        let open = list.grant(&approved(vec![]), "me");
        assert!(open.scope().ends_with("with no arguments"));
        assert!(covered("s1", "read", vec![]));
    }

    /// Issue 28: remembering `DROP TABLE tmp` let a `DROP DATABASE` (and a
    /// TRUNCATE another rule escalated) through.
    #[test]
    fn a_grant_covers_only_its_rule_and_the_exact_other_arguments() {
        let list = Whitelist::default();
        let mut approval = approved(vec![Identifier::Path("/srv/app/a.sql".into())]);
        approval.arguments = serde_json::json!({"file": "/srv/app/a.sql", "sql": "DROP TABLE tmp"});
        let grant = list.grant(&approval, "me");
        assert_eq!(
            grant.scope(),
            r#"fs/read in session s1 escalated by rule r with paths within /srv/app and exactly sql = "DROP TABLE tmp""#
        );
        let covered = |rule: &str, file: &str, sql: &str| {
            let ids = vec![Identifier::Path(file.into())];
            let arguments = serde_json::json!({"file": file, "sql": sql});
            let call =
                Covered { session: "s1", server: "fs", tool: "read", rule, identifiers: &ids, arguments: &arguments };
            list.covering(&call).is_some()
        };
        assert!(covered("r", "/srv/app/b.sql", "DROP TABLE tmp"), "another file in the directory");
        assert!(!covered("r", "/srv/app/a.sql", "DROP DATABASE production CASCADE"), "other SQL");
        assert!(!covered("truncates", "/srv/app/a.sql", "DROP TABLE tmp"), "another rule");
    }

    /// Issue 28: the approver may widen an argument to a pattern it sees
    /// and edits; the approved value must match it.
    #[test]
    fn a_grant_covers_a_pattern_the_approver_wrote_and_nothing_wider() {
        let mut approval = approved(vec![]);
        approval.arguments = serde_json::json!({"sql": "DROP TABLE tmp_1", "dry": false});
        assert_eq!(Whitelist::editable(&approval), [("sql".to_owned(), "DROP TABLE tmp_1".to_owned())]);
        let patterns = |glob: &str| BTreeMap::from([("sql".to_owned(), glob.to_owned())]);
        let grant = Whitelist::prepare_with(&approval, "me", &patterns("DROP TABLE tmp_*")).expect("a pattern");
        assert_eq!(
            grant.scope(),
            r#"fs/read in session s1 escalated by rule r with exactly dry = false and sql matching "DROP TABLE tmp_*""#
        );
        let list = Whitelist::default();
        list.insert(grant);
        let covered = |sql: serde_json::Value, dry: bool| {
            let arguments = serde_json::json!({"sql": sql, "dry": dry});
            let call = Covered {
                session: "s1",
                server: "fs",
                tool: "read",
                rule: "r",
                identifiers: &[],
                arguments: &arguments,
            };
            list.covering(&call).is_some()
        };
        assert!(covered("DROP TABLE tmp_2".into(), false));
        assert!(covered("DROP TABLE tmp_/x\ny".into(), false), "`*` takes any text");
        assert!(!covered("DROP TABLE tmp_2".into(), true), "the other arguments stay exact");
        assert!(!covered("DROP TABLE users; -- tmp_".into(), false));
        assert!(!covered("DROP TABLE tmp".into(), false));
        assert!(!covered(serde_json::json!(["DROP TABLE tmp_2"]), false), "a string only");
        for (glob, error) in [
            ("DROP TABLE other_*", PatternError::MissesApproved("sql".into())),
            ("DROP TABLE [tmp", PatternError::Invalid("sql".into(), "unclosed character class; missing ']'".into())),
        ] {
            assert_eq!(Whitelist::prepare_with(&approval, "me", &patterns(glob)), Err(error), "{glob}");
        }
        let dry = BTreeMap::from([("dry".to_owned(), "*".to_owned())]);
        assert_eq!(Whitelist::prepare_with(&approval, "me", &dry), Err(PatternError::NotAString("dry".into())));
        let escaped = Whitelist::editable(&{
            let mut odd = approval.clone();
            odd.arguments = serde_json::json!({"q": "a*b?[c]"});
            odd
        });
        assert_eq!(escaped, [("q".to_owned(), "a[*]b[?][[]c[]]".to_owned())], "the exact value, escaped");
    }
}
