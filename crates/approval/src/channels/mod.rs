//! The ways a decision reaches an approval. Each channel only reads the
//! [`Approvals`](crate::Approvals) store and calls
//! [`decide`](crate::Approvals::decide): the first decision wins.
//!
//! * [`socket`]: the local control socket (`warden approvals`,
//!   `warden context set`), mode 0600.
//! * [`auto`]: the LLM auto-approver (approve or leave it to a person).
//! * [`files`]: IronCurtain's escalation directory (request and response files).
//! * [`web`]: the approval page (login, CSRF, Host and Origin checks, SSE).

pub mod auto;
pub mod files;
pub mod socket;
pub mod web;

use crate::Approval;
use crate::record::Decided;
use crate::state::Event;
use crate::store::{Approvals, DecideError};
use crate::whitelist::Whitelist;

/// A person's verdict on one approval, as any channel receives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The approval's id (or an unambiguous prefix of at least 8 characters).
    pub id: String,
    /// Approve (else deny).
    pub approve: bool,
    /// Why (for a denial).
    pub reason: Option<String>,
    /// With an approval: calls like it in the same session are approved
    /// too, until revoked (the session whitelist).
    pub remember: bool,
    /// With `remember`: string arguments widened to these globs, by name
    /// (see [`Whitelist::prepare_with`]).
    pub patterns: std::collections::BTreeMap<String, String>,
}

/// Applies `verdict` from `channel`, decided by `by`; a remembered approval
/// adds its whitelist entry once it is the decision.
pub fn apply(
    store: &dyn Approvals,
    whitelist: &Whitelist,
    verdict: &Verdict,
    channel: &str,
    by: &str,
) -> Result<Approval, DecideError> {
    let event = if verdict.approve { Event::Approve } else { Event::Deny };
    let reason = verdict.reason.as_ref().map(|r| r.trim().to_owned()).filter(|r| !r.is_empty());
    if !(verdict.approve && verdict.remember) {
        return store.decide(&verdict.id, event, Decided::now(channel, by, reason));
    }
    let approval = store.get(&verdict.id)?;
    let grant = Whitelist::prepare_with(&approval, by, &verdict.patterns).map_err(DecideError::Pattern)?;
    let note = format!("and calls like it: {} (whitelist entry {})", grant.scope(), grant.id);
    let decided = store.decide(&approval.id, event, Decided::now(channel, by, Some(note)))?;
    tracing::info!(grant = %grant.id, by, "session whitelist: {}", grant.scope());
    whitelist.insert(grant);
    Ok(decided)
}

/// Whether `presented` is `digest` (hex, any case), compared in constant time.
pub fn same_digest(digest: &str, presented: &str) -> bool {
    warden_pipeline::access::constant_time_eq(digest.as_bytes(), presented.trim().to_ascii_lowercase().as_bytes())
}
