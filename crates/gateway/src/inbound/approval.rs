//! The approval stage: an escalated call waits here, in its own task, for a
//! decision. Progress tells the client where to approve; a cancellation
//! withdraws the approval; every step is audited.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;
use warden_jsonrpc::{Frame, json_string, notification};

use super::elicit::elicit;
use super::record::{audit, audit_failed, refusal_response};
use crate::parts::{IdMaps, SessionParts};
use crate::pipeline::{
    ApprovalStep, Approver, Ask, Call, Hooks, Outcome, Resolution, Settled, Ticket, Verdict, short_id,
};
use warden_sync::lock;

/// How often a waiting call's client hears that it still waits.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// An approved call, ready to be forwarded.
pub(super) struct Approved {
    pub approver: Arc<dyn Approver>,
    pub ticket: Ticket,
    pub resolution: Resolution,
}

impl Approved {
    /// The audit step of the forwarded call.
    pub fn executed(&self) -> ApprovalStep<'_> {
        ApprovalStep {
            id: &self.ticket.id,
            state: "executed",
            digest: &self.ticket.digest,
            resolution: Some(&self.resolution),
        }
    }
}

/// Withdraws the approval if the waiting task ends before it settled (the
/// session went away), and forgets the cancellation handle: its own, not
/// that of a later request reusing the id (see `InFlight::serial`).
struct Waiting<'a> {
    maps: &'a IdMaps,
    approver: &'a Arc<dyn Approver>,
    id: &'a str,
    request: String,
    serial: u64,
    settled: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.maps.forget_waiting(&self.request, self.serial);
        if !self.settled {
            self.approver.withdraw(self.id);
        }
    }
}

/// Waits for a decision on an escalated call. Returns the approval when
/// the call may go ahead; otherwise the client has been answered (or,
/// after a cancellation, needs no answer). The request's `serial` marks
/// its withdrawal handle as its own.
pub(super) async fn await_approval(
    session: &SessionParts,
    (frame, serial): (&Frame, u64),
    hooks: &Hooks,
    call: Call<'_>,
    verdict: &Verdict,
    progress_token: Option<&str>,
    started: Instant,
) -> Option<Approved> {
    let (Verdict::Escalate { rule, reason, escalation }, Some(approver)) = (verdict, &hooks.approver) else {
        return None;
    };
    let client = session.link.name();
    let principal = session.link.principal.get().map(|name| &**name);
    let ask = Ask { call, client, principal, rule, reason, escalation };
    let (ticket, decision) = approver.open(&ask);
    let step = |state, resolution| ApprovalStep { id: &ticket.id, state, digest: &ticket.digest, resolution };
    let request = frame.id().unwrap_or("null").to_owned();
    let (cancel, cancelled) = oneshot::channel();
    lock(&session.maps.waiting).insert(request.clone(), (serial, cancel));
    let mut waiting = Waiting { maps: &session.maps, approver, id: &ticket.id, request, serial, settled: false };
    tracing::info!(session = %session.id, server = call.server, name = call.name, approval = %ticket.id, "waiting for approval ({rule})");
    if let Err(why) =
        audit(session, hooks, call, verdict, &Outcome::Pending, started, Some(step("pending", None)), None).await
    {
        audit_failed(session, frame, &why);
        return None;
    }
    let keep_informed = keep_informed(session, &waiting.request, progress_token, &ticket);
    let elicit = elicit(session, approver, &ticket, rule, reason, &waiting.request);
    let resolution = tokio::select! {
        resolution = decision => resolution,
        why = cancelled => {
            approver.withdraw(&ticket.id);
            Resolution {
                settled: Settled::Withdrawn,
                channel: "client".into(),
                by: client.unwrap_or("client").into(),
                note: Some(why.unwrap_or("the session ended").into()),
                assessed: None,
            }
        }
        () = keep_informed => unreachable!("keeping the client informed never ends"),
        () = elicit => unreachable!("asking the client never ends"),
    };
    waiting.settled = true;
    drop(waiting);
    let settled = resolution.settled;
    crate::served::approval(settled.as_str(), &resolution.channel);
    tracing::info!(session = %session.id, approval = %ticket.id, channel = %resolution.channel, by = %resolution.by, "approval {}", settled.as_str());
    let outcome = if settled == Settled::Approved { Outcome::Pending } else { Outcome::Refused };
    let audited =
        audit(session, hooks, call, verdict, &outcome, started, Some(step(settled.as_str(), Some(&resolution))), None)
            .await;
    match (settled, audited) {
        // A cancelled request gets no answer.
        (Settled::Withdrawn, _) if resolution.channel == "client" => None,
        (Settled::Approved, Ok(())) => Some(Approved { approver: approver.clone(), ticket, resolution }),
        (_, Err(why)) => {
            audit_failed(session, frame, &why);
            None
        }
        (_, Ok(())) => {
            let text = refusal_text(rule, reason, &ticket, &resolution);
            session.link.respond(frame, refusal_response(frame, call.method, &text));
            None
        }
    }
}

/// Sends progress for the waiting request now and every ten seconds, if
/// the client gave a progress token. Never ends.
async fn keep_informed(session: &SessionParts, request: &str, token: Option<&str>, ticket: &Ticket) {
    let Some(token) = token else { return std::future::pending().await };
    let short = short_id(&ticket.id);
    let message = json_string(&format!("waiting for approval {short} {}", ticket.hint));
    let mut ticks = tokio::time::interval(PROGRESS_EVERY);
    for progress in 0u64.. {
        ticks.tick().await;
        let params = format!(r#"{{"progressToken":{token},"progress":{progress},"message":{message}}}"#);
        session.link.send_related(notification("notifications/progress", Some(&params)), Some(request));
    }
}

/// What the model reads when an escalated call is refused. The prefixes are
/// stable: `Escalation denied:` and `Escalation timed out:`.
fn refusal_text(rule: &str, reason: &str, ticket: &Ticket, resolution: &Resolution) -> String {
    let short = short_id(&ticket.id);
    match resolution.settled {
        Settled::Expired => {
            format!(
                "Escalation timed out: nobody approved the call within {} s (policy '{rule}': {reason}; approval {short}). Ask the user to approve it {} and try again.",
                ticket.timeout.as_secs(),
                ticket.hint
            )
        }
        _ => {
            let note = resolution.note.as_deref().map(|note| format!(": {note}")).unwrap_or_default();
            format!(
                "Escalation denied: the call was not approved (policy '{rule}': {reason}; approval {short}); denied by {} via {}{note}",
                resolution.by, resolution.channel
            )
        }
    }
}
