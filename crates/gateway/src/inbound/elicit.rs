//! Elicitation as an approval channel: Warden asks the client itself, with
//! `elicitation/create` in form mode, whether a waiting call may run.
//! Opt-in (`approval.elicitation`), and only for clients that declared form
//! elicitation. Decline and cancel deny (clients that cannot show the form
//! decline), so the message says where else to approve.

use std::sync::Arc;

use serde::Deserialize;
use tokio::sync::oneshot;
use warden_jsonrpc::{json_string, notification};

use crate::parts::{ClientLink, IdMaps, SessionParts};
use crate::pipeline::{Approver, Ticket, short_id};
use warden_sync::lock;

#[derive(Deserialize)]
struct Answer {
    action: String,
    #[serde(default)]
    content: Option<Content>,
}

#[derive(Deserialize)]
struct Content {
    #[serde(default)]
    approve: Option<bool>,
}

/// An elicitation in flight; cancelled at the client when dropped unanswered.
pub(super) struct Asking<'a> {
    link: &'a ClientLink,
    maps: &'a IdMaps,
    id: u64,
}

impl Drop for Asking<'_> {
    fn drop(&mut self) {
        if lock(&self.maps.own_requests).remove(&self.id).is_some() {
            let params = format!(r#"{{"requestId":{},"reason":"decided elsewhere"}}"#, self.id);
            self.link.send(notification("notifications/cancelled", Some(&params)));
        }
    }
}

/// Asks the client about the waiting call `request` (its id) and applies
/// the answer. Ends when answered; never if the client cannot be asked.
pub(super) async fn elicit(
    session: &SessionParts,
    approver: &Arc<dyn Approver>,
    ticket: &Ticket,
    rule: &str,
    reason: &str,
    request: &str,
) {
    let Some(client) = session.link.init.get().filter(|client| client.elicits_forms && approver.elicits()) else {
        return std::future::pending().await;
    };
    let id = session.next();
    let (answer, answered) = oneshot::channel();
    lock(&session.maps.own_requests).insert(id, answer);
    let asking = Asking { link: &session.link, maps: &session.maps, id };
    let short = short_id(&ticket.id);
    let message = format!(
        "Warden: a call waits for your approval.\n{}\nRule '{rule}': {reason}\nApproval {short} (also {}).",
        ticket.summary, ticket.hint
    );
    // `mode` exists from 2025-11-25 on; earlier clients know forms only.
    let mode = if client.protocol_version.as_str() >= "2025-11-25" { r#""mode":"form","# } else { "" };
    let params = format!(
        r#"{{{mode}"message":{},"requestedSchema":{{"type":"object","properties":{{"approve":{{"type":"boolean","title":"Approve this call","description":"Let this exact call run once"}}}},"required":["approve"]}}}}"#,
        json_string(&message)
    );
    let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"elicitation/create","params":{params}}}"#);
    session.link.send_related(text, Some(request));
    let Ok(frame) = answered.await else { return std::future::pending().await };
    drop(asking);
    let by = format!("elicitation:{}", client.name.as_deref().unwrap_or("client"));
    let parsed = frame.payload().and_then(|result| serde_json::from_str::<Answer>(result).ok());
    let Some(answer) = parsed.filter(|_| frame.kind() == warden_jsonrpc::Kind::Response) else {
        tracing::info!(session = %session.id, approval = %ticket.id, "the client could not show the approval form; other channels stay open");
        return std::future::pending().await;
    };
    let approve = answer.action == "accept" && answer.content.and_then(|content| content.approve) == Some(true);
    let note = (!approve).then(|| {
        format!(
            "{} in the client; approve {} and try again",
            if answer.action == "accept" { "refused" } else { "declined" },
            ticket.hint
        )
    });
    approver.decide(&ticket.id, approve, "elicitation", &by, note);
    std::future::pending().await
}
