//! The file exchange, compatible with IronCurtain's escalation directory:
//! for each pending approval Warden writes `request-<id>.json`
//! (`{escalationId, serverName, toolName, arguments, reason,
//! whitelistCandidates}`, atomically); whoever writes
//! `response-<id>.json` (`{decision: "approved" | "denied",
//! whitelistSelection?}`) decides. Any other decision denies. Both files
//! are removed once the approval is settled, the request first (so a
//! watcher can tell expired from resolved). The directory is created with
//! mode 0700: whoever can write to it can approve.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use super::{Verdict, apply};
use crate::record::Approval;
use crate::store::Approvals;
use crate::whitelist::Whitelist;

/// How often the directory is read for responses.
const POLL: Duration = Duration::from_millis(250);

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Response {
    #[serde(default)]
    decision: Option<String>,
    #[serde(default)]
    whitelist_selection: Option<serde_json::Value>,
}

/// Prepares `dir` (mode 0700) and keeps it in step with the pending
/// approvals until the task is dropped.
pub fn serve(
    dir: &Path,
    store: Arc<dyn Approvals>,
    whitelist: Arc<Whitelist>,
) -> io::Result<tokio::task::JoinHandle<()>> {
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    let dir = dir.to_owned();
    Ok(tokio::spawn(async move {
        let mut written: Vec<String> = Vec::new();
        loop {
            let pending = store.pending();
            for approval in &pending {
                if !written.contains(&approval.id) {
                    match write_request(&dir, approval) {
                        Ok(()) => written.push(approval.id.clone()),
                        Err(err) => tracing::warn!(approval = %approval.id, "cannot write the request file: {err}"),
                    }
                }
                if let Some(verdict) = read_response(&dir, &approval.id) {
                    let by = "files";
                    if let Err(err) = apply(store.as_ref(), &whitelist, &verdict, "files", by) {
                        tracing::info!(approval = %approval.id, "file response ignored: {err}");
                    }
                }
            }
            // Settled ones: request first, then response.
            written.retain(|id| {
                if pending.iter().any(|approval| &approval.id == id) {
                    return true;
                }
                let _ = std::fs::remove_file(file(&dir, "request", id));
                let _ = std::fs::remove_file(file(&dir, "response", id));
                false
            });
            tokio::time::sleep(POLL).await;
        }
    }))
}

fn file(dir: &Path, kind: &str, id: &str) -> PathBuf {
    dir.join(format!("{kind}-{id}.json"))
}

/// Writes the request file atomically (a temporary file, then a rename).
fn write_request(dir: &Path, approval: &Approval) -> io::Result<()> {
    let scope = Whitelist::prepare(approval, "files").scope();
    let request = json!({
        "escalationId": approval.id,
        "serverName": approval.server,
        "toolName": approval.tool,
        "arguments": approval.arguments,
        "reason": format!("{} (policy '{}')", approval.reason, approval.rule),
        "whitelistCandidates": [{"description": format!("Allow {scope}")}],
    });
    let path = file(dir, "request", &approval.id);
    let temporary = dir.join(format!(".request-{}.json.tmp", approval.id));
    std::fs::write(&temporary, serde_json::to_vec_pretty(&request)?)?;
    std::fs::rename(&temporary, &path)
}

/// The decision in `response-<id>.json`, if one was written (then removed).
fn read_response(dir: &Path, id: &str) -> Option<Verdict> {
    let path = file(dir, "response", id);
    let text = std::fs::read(&path).ok()?;
    let response: Option<Response> = serde_json::from_slice(&text).ok();
    let _ = std::fs::remove_file(&path);
    let (approve, remember) = match &response {
        Some(Response { decision: Some(decision), whitelist_selection }) if decision == "approved" => {
            (true, whitelist_selection.is_some())
        }
        _ => (false, false),
    };
    let reason = (!approve).then(|| "denied through the exchange directory".to_owned());
    Some(Verdict { id: id.to_owned(), approve, reason, remember, patterns: Default::default() })
}
