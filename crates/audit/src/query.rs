//! Searching the log: the records of a time range that match a filter,
//! across the rotated files, oldest first.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

use crate::error::AuditError;
use crate::writer::numbered;

/// What `warden audit query` looks for. Every field set must hold.
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// Records written at or after this time (RFC 3339, UTC).
    pub since: Option<String>,
    /// Records written before this time.
    pub until: Option<String>,
    /// The record's `server`.
    pub server: Option<String>,
    /// The tool, prompt or resource: the record's `name`.
    pub tool: Option<String>,
    /// `allow`, `deny` or `escalate` (any case).
    pub decision: Option<String>,
    /// The rule that decided.
    pub rule: Option<String>,
    /// The client as it named itself (`client`, a part of it) or the token
    /// it authenticated with (`principal`, exactly).
    pub client: Option<String>,
}

impl Query {
    /// Whether `record` matches.
    pub fn matches(&self, record: &Value) -> bool {
        fn text(value: Option<&Value>) -> Option<&str> {
            value.and_then(Value::as_str)
        }
        let time = text(record.get("time")).unwrap_or("");
        let decision = record.get("decision");
        let verdict = text(decision.and_then(|decision| decision.get("verdict")));
        let rule = text(decision.and_then(|decision| decision.get("rule")));
        let client = text(record.get("client"));
        let principal = text(record.get("principal"));
        // Times are written in one format (UTC, milliseconds): they compare as text.
        self.since.as_deref().is_none_or(|since| time >= since)
            && self.until.as_deref().is_none_or(|until| time < until)
            && self.server.as_deref().is_none_or(|want| text(record.get("server")) == Some(want))
            && self.tool.as_deref().is_none_or(|want| text(record.get("name")) == Some(want))
            && self.decision.as_deref().is_none_or(|want| verdict.is_some_and(|v| v.eq_ignore_ascii_case(want)))
            && self.rule.as_deref().is_none_or(|want| rule == Some(want))
            && self
                .client
                .as_deref()
                .is_none_or(|want| client.is_some_and(|client| client.contains(want)) || principal == Some(want))
    }
}

/// A time given on the command line, as the log writes times: RFC 3339
/// (`2026-05-01T09:30:00Z`, or without seconds or zone, read as UTC) or a
/// duration back from now (`90m`, `2h`, `7d`).
pub fn query_time(text: &str) -> Result<String, String> {
    let text = text.trim();
    let at = if let Ok(ago) = humantime::parse_duration(text) {
        SystemTime::now().checked_sub(ago).unwrap_or(SystemTime::UNIX_EPOCH)
    } else {
        let full = match text.len() {
            10 => format!("{text}T00:00:00Z"),
            16 => format!("{text}:00Z"),
            _ if !text.ends_with('Z') && !text.contains('+') => format!("{text}Z"),
            _ => text.to_owned(),
        };
        humantime::parse_rfc3339_weak(full.trim_end_matches('Z'))
            .or_else(|_| humantime::parse_rfc3339(&full))
            .map_err(|_| format!("{text:?} is neither a time (2026-05-01T09:30:00Z) nor a duration back (2h, 7d)"))?
    };
    Ok(crate::record::timestamp(at))
}

/// The log's files, oldest first: the rotated ones (`.N` … `.1`) that
/// exist, then the log itself.
fn files(path: &Path) -> Vec<PathBuf> {
    let mut rotated = Vec::new();
    for index in 1.. {
        let file = numbered(path, index);
        if !file.exists() {
            break;
        }
        rotated.push(file);
    }
    rotated.reverse();
    rotated.push(path.to_owned());
    rotated
}

/// Passes each record of the log at `path` (and its rotated files) that
/// matches `query` to `out`, oldest first, as its line and its decoded
/// value; stops when `out` returns `false`. A line that is not a record is
/// skipped (a torn last line, say).
pub fn query(path: &Path, query: &Query, out: &mut dyn FnMut(&str, &Value) -> bool) -> Result<(), AuditError> {
    let files = files(path);
    if files.len() == 1 {
        // Only the log itself: say why it cannot be read, if it cannot.
        File::open(path).map_err(|err| AuditError::io(path, "open", err))?;
    }
    for file in files {
        // A file rotated away between listing and opening is skipped.
        let Ok(opened) = File::open(&file) else { continue };
        for line in BufReader::new(opened).lines() {
            let line = line.map_err(|err| AuditError::io(&file, "read", err))?;
            let Ok(record) = serde_json::from_str::<Value>(&line) else { continue };
            if query.matches(&record) && !out(&line, &record) {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// The most recent `limit` records of the log at `path` that match
/// `query` (all of them without a limit), oldest first, each as its line
/// and its decoded value.
pub fn recent(path: &Path, query: &Query, limit: Option<usize>) -> Result<Vec<(String, Value)>, AuditError> {
    let mut found: std::collections::VecDeque<(String, Value)> = std::collections::VecDeque::new();
    self::query(path, query, &mut |line, record| {
        // Kept as they come, the oldest let go.
        if limit == Some(found.len()) {
            found.pop_front();
        }
        if limit != Some(0) {
            found.push_back((line.to_owned(), record.clone()));
        }
        true
    })?;
    Ok(found.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    fn record(time: &str, server: &str, verdict: &str, rule: Option<&str>, client: &str) -> Value {
        json!({"time": time, "server": server, "name": "query", "client": client, "principal": "alice",
               "decision": {"verdict": verdict, "rule": rule}})
    }

    #[test]
    fn every_field_set_must_hold() {
        let denied = record("2026-05-01T09:30:12.345Z", "db", "deny", Some("no-drop"), "claude-code/2.1");
        let everything = Query::default();
        assert!(everything.matches(&denied));
        let wanted = Query {
            since: Some("2026-05-01T09:00:00.000Z".into()),
            until: Some("2026-05-01T10:00:00.000Z".into()),
            server: Some("db".into()),
            tool: Some("query".into()),
            decision: Some("DENY".into()),
            rule: Some("no-drop".into()),
            client: Some("claude-code".into()),
        };
        assert!(wanted.matches(&denied));
        for miss in [
            Query { since: Some("2026-05-01T09:31:00.000Z".into()), ..Query::default() },
            Query { until: Some("2026-05-01T09:30:12.345Z".into()), ..Query::default() },
            Query { server: Some("d".into()), ..Query::default() },
            Query { rule: Some("other".into()), ..Query::default() },
            Query { decision: Some("allow".into()), ..Query::default() },
            Query { client: Some("cursor".into()), ..Query::default() },
        ] {
            assert!(!miss.matches(&denied), "{miss:?}");
        }
        assert!(Query { client: Some("alice".into()), ..Query::default() }.matches(&denied), "the principal");
    }

    #[test]
    fn times_are_read_as_the_log_writes_them() {
        assert_eq!(query_time("2026-05-01T09:30:00Z").unwrap(), "2026-05-01T09:30:00.000Z");
        assert_eq!(query_time("2026-05-01T09:30").unwrap(), "2026-05-01T09:30:00.000Z");
        assert_eq!(query_time("2026-05-01").unwrap(), "2026-05-01T00:00:00.000Z");
        let hour_ago = query_time("1h").unwrap();
        let age = humantime::parse_rfc3339(&hour_ago).ok().and_then(|at| SystemTime::now().duration_since(at).ok());
        assert!(age.is_some_and(|age| age >= Duration::from_secs(3599)), "{hour_ago}");
        assert!(query_time("yesterday-ish").is_err());
    }
}
