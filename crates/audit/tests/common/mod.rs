//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod wakeups;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use warden_audit::{AuditLog, AuditSettings};
use warden_jsonrpc::Method;
use warden_pipeline::{Audit, Call, Outcome, Record, Verdict};

/// A directory removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("warden-audit-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What one test call looks like.
pub struct Req<'a> {
    pub server: &'a str,
    pub name: &'a str,
    pub arguments: Option<&'a str>,
    pub verdict: Verdict,
    pub outcome: Outcome,
    /// What the tool answered (the `result` object's text).
    pub result: Option<&'a str>,
}

impl<'a> Req<'a> {
    pub fn allow(server: &'a str, name: &'a str, arguments: Option<&'a str>) -> Self {
        Req { server, name, arguments, verdict: Verdict::Allow, outcome: Outcome::Result, result: None }
    }

    pub fn deny(server: &'a str, name: &'a str, rule: &str, reason: &str) -> Self {
        Req {
            server,
            name,
            arguments: None,
            verdict: Verdict::Deny { rule: rule.into(), reason: reason.into() },
            outcome: Outcome::Refused,
            result: None,
        }
    }
}

/// Records `req` through the `Audit` trait, as the gateway does.
pub async fn record(log: &AuditLog, req: &Req<'_>) -> Result<(), String> {
    let method = Method::ToolsCall;
    let call = Call { session: "s1", server: req.server, method: &method, name: req.name, arguments: req.arguments };
    log.record(Record {
        call,
        client: Some("test-client/1.0"),
        principal: Some("alice"),
        client_address: Some(std::net::IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 7))),
        verdict: &req.verdict,
        outcome: &req.outcome,
        result: req.result,
        elapsed: Duration::from_micros(1234),
        approval: None,
    })
    .await
}

/// Records `n` allowed calls `t0`, `t1`, ... at once, each from a task of
/// its own; returns each name with its outcome, in the order started.
pub async fn record_at_once(
    log: &Arc<AuditLog>,
    n: usize,
    arguments: Option<&'static str>,
) -> Vec<(String, Result<(), String>)> {
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let log = Arc::clone(log);
            tokio::spawn(async move {
                let name = format!("t{i}");
                let outcome = record(&log, &Req::allow("s", &name, arguments)).await;
                (name, outcome)
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.expect("join"));
    }
    outcomes
}

/// Writes `n` allowed records `tool0`, `tool1`, ... to a fresh log at `path`.
pub async fn write_n(path: &Path, n: usize) {
    let log = AuditLog::open(AuditSettings::new(path)).expect("open");
    for i in 0..n {
        let name = format!("tool{i}");
        record(&log, &Req::allow("github", &name, Some(r#"{"x":1}"#))).await.expect("record");
    }
}

/// The lines of a file, without newlines.
pub fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).expect("read").lines().map(str::to_owned).collect()
}

/// Parses one line.
pub fn json(line: &str) -> serde_json::Value {
    serde_json::from_str(line).expect("json line")
}
