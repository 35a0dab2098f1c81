//! After a restart: approvals whose last audit record is `pending` can no
//! longer be decided (their calls died with the process that held them, and
//! never ran). They are closed in the audit log as `withdrawn (warden
//! restarted)`, so no record stays pending forever.
//!
//! One Warden writes one audit log (two writers would break the hash chain
//! anyway), so every pending approval found at start belongs to a process
//! that is gone.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use warden_audit::AuditRecord;
use warden_jsonrpc::Method;
use warden_pipeline::{ApprovalStep, Audit, Call, Escalation, Outcome, Record, Resolution, Settled, Verdict};

/// What the closing record says.
pub const NOTE: &str = "warden restarted";

/// The approvals in the log at `path` whose last record is `pending`, in
/// the order they were opened.
pub fn dangling(path: &Path) -> Vec<AuditRecord> {
    let Ok(text) = std::fs::read_to_string(path) else { return Vec::new() };
    let mut last: HashMap<String, (usize, AuditRecord)> = HashMap::new();
    for (line, record) in text.lines().filter_map(|line| serde_json::from_str::<AuditRecord>(line).ok()).enumerate() {
        if let Some(id) = record.approval.as_ref().map(|approval| approval.id.clone()) {
            let opened = last.get(&id).map(|(at, _)| *at).unwrap_or(line);
            last.insert(id, (opened, record));
        }
    }
    let mut open: Vec<(usize, AuditRecord)> = last
        .into_values()
        .filter(|(_, record)| record.approval.as_ref().is_some_and(|approval| approval.state == "pending"))
        .collect();
    open.sort_by_key(|(at, _)| *at);
    open.into_iter().map(|(_, record)| record).collect()
}

/// Closes each of `records` in `audit` as withdrawn because Warden restarted.
pub async fn close(audit: &Arc<dyn Audit>, records: Vec<AuditRecord>) {
    for record in records {
        let Some(approval) = &record.approval else { continue };
        let method = Method::parse(&record.method);
        let verdict = Verdict::Escalate {
            rule: record.decision.rule.clone().unwrap_or_default(),
            reason: record.decision.reason.clone().unwrap_or_default(),
            escalation: Escalation::default(),
        };
        let resolution = Resolution {
            settled: Settled::Withdrawn,
            channel: "warden".into(),
            by: "warden".into(),
            note: Some(NOTE.into()),
            assessed: None,
        };
        let step = ApprovalStep {
            id: &approval.id,
            state: "withdrawn",
            digest: &approval.args_digest,
            resolution: Some(&resolution),
        };
        let closing = Record {
            // The arguments are in the pending record (and their digest in
            // the step): not repeated.
            call: Call {
                session: &record.session,
                server: &record.server,
                method: &method,
                name: &record.name,
                arguments: None,
            },
            client: record.client.as_deref(),
            principal: record.principal.as_deref(),
            client_address: record.client_address.as_deref().and_then(|address| address.parse().ok()),
            verdict: &verdict,
            outcome: &Outcome::Refused,
            result: None,
            elapsed: Default::default(),
            approval: Some(step),
        };
        match audit.record(closing).await {
            Ok(()) => tracing::info!("approval {} was pending when Warden stopped: closed as withdrawn", approval.id),
            Err(why) => tracing::error!("could not close approval {} in the audit log: {why}", approval.id),
        }
    }
}
