//! The audit stage's side of a request: its record, and the answers the
//! client gets when a call is refused or its record cannot be written.

use std::time::Instant;

use warden_jsonrpc::{ErrorCode, Frame, Method, error_response, json_string, result_response};

use crate::parts::SessionParts;
use crate::pipeline::{ApprovalStep, Call, Hooks, Outcome, Verdict};

/// Records one decision, or one step of an approval, with what a tool
/// answered (`result`, see [`crate::pipeline::Record::result`]).
#[allow(clippy::too_many_arguments)]
pub(super) async fn audit(
    session: &SessionParts,
    hooks: &Hooks,
    call: Call<'_>,
    verdict: &Verdict,
    outcome: &Outcome,
    started: Instant,
    approval: Option<ApprovalStep<'_>>,
    result: Option<&str>,
) -> Result<(), String> {
    let Some(audit) = &hooks.audit else { return Ok(()) };
    let client = session.link.name();
    let principal = session.link.principal.get().map(|name| &**name);
    let record = crate::pipeline::Record {
        call,
        client,
        principal,
        client_address: crate::origin::client_address(),
        verdict,
        outcome,
        result,
        elapsed: started.elapsed(),
        approval,
    };
    audit.record(record).await
}

/// Answers with an error instead of a result whose record failed.
pub(super) fn audit_failed(session: &SessionParts, frame: &Frame, why: &str) {
    tracing::error!(session = %session.id, "audit record failed, answer withheld: {why}");
    let message = format!("the audit log could not be written, so the result was withheld: {why}");
    session.link.respond(frame, error_response(frame.id(), ErrorCode::InternalError, &message, None));
}

/// The answer to a refused request: a tool result with `isError` for
/// tools/call (so the model reads the reason), a JSON-RPC error otherwise.
pub(super) fn refusal_response(frame: &Frame, method: &Method, refusal: &str) -> String {
    let id = frame.id().unwrap_or("null");
    if *method == Method::ToolsCall {
        let result = format!(r#"{{"content":[{{"type":"text","text":{}}}],"isError":true}}"#, json_string(refusal));
        result_response(id, &result)
    } else {
        error_response(Some(id), ErrorCode::Refused, refusal, None)
    }
}
