//! Forwarding one request to one upstream, through the guard and the audit.

use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use serde::Deserialize;
use warden_jsonrpc::{ErrorCode, Frame, Kind, Method, Splice, error_response, json_string, result_response};
use warden_upstream::UpstreamError;

use super::approval::Approved;
use super::approval::await_approval;
use super::rounds::INPUT_REQUIRED;
use super::rounds::complete_rounds;
use crate::parts::SessionParts;
use crate::parts::{InFlight, TokenTarget};
use crate::pipeline::{ApprovalStep, Call, Hooks, Outcome, Verdict};
use warden_sync::lock;

/// How a forwarded request ended.
pub(super) enum Forwarded {
    /// The upstream answered.
    Answer(Frame),
    /// It could not be reached, or went away.
    Failed(UpstreamError),
    /// The client cancelled it; nothing is sent back.
    Cancelled,
}

/// Where a request goes and what changes on the way.
pub(super) struct Target {
    /// The upstream's index.
    pub upstream: usize,
    /// The renames the upstream needs (its own tool or prompt name).
    pub splice: Splice,
    /// The span of a progress token to substitute.
    pub token: Option<Range<usize>>,
    /// The request is task-augmented: its answer may carry a task id.
    pub creates_task: bool,
}

impl Target {
    /// Upstream `upstream`, with nothing to change.
    pub fn upstream(upstream: usize) -> Target {
        Target { upstream, splice: Splice::new(), token: None, creates_task: false }
    }
}

/// Runs a request that names its upstream through the pipeline: guard,
/// forward, audit, answer. A request under the id of one still in flight
/// (upstream or waiting for approval) is refused first.
pub(super) async fn dispatch(
    session: &SessionParts,
    frame: &Frame,
    hooks: &Arc<Hooks>,
    call: Call<'_>,
    target: Target,
) {
    if id_in_use(session, frame) {
        return session.link.fail(frame, ErrorCode::InvalidRequest, "that id is already used by a request in flight");
    }
    // Marks what this request places in the session's maps as its own
    // (see `InFlight::serial`).
    let serial = session.next();
    let Target { upstream, splice, token, creates_task } = target;
    let started = Instant::now();
    let verdict = hooks.guard.decide(&call);
    let mut approved = None;
    if let (Verdict::Escalate { .. }, Some(_)) = (&verdict, &hooks.approver) {
        let progress_token = token.clone().map(|span| &frame.text()[span]);
        // Boxed, like the other paths few calls take: an inline future is
        // part of every call's state, which is allocated and moved per call.
        approved =
            Box::pin(await_approval(session, (frame, serial), hooks, call, &verdict, progress_token, started)).await;
        if approved.is_none() {
            return;
        }
    } else if let Some(refusal) = verdict.refusal() {
        tracing::info!(session = %session.id, server = call.server, name = call.name, "refused: {refusal}");
        // A refusal stands even if it cannot be recorded.
        let _ = audit(session, hooks, call, &verdict, &Outcome::Refused, started, None, None).await;
        session.link.respond(frame, refusal_response(frame, call.method, &refusal));
        return;
    }
    let (reply, outcome, answer) = match forward(session, frame, serial, upstream, splice, token).await {
        Forwarded::Cancelled => return,
        Forwarded::Answer(answer) => {
            if creates_task {
                session.replay.record_task(upstream, &answer);
            }
            let outcome = outcome_of(&answer, call.method, hooks.audit.is_some());
            (answer.with_id(frame.id().unwrap_or("null")), outcome, Some(answer))
        }
        Forwarded::Failed(err) => {
            let text = error_response(frame.id(), ErrorCode::UpstreamUnavailable, &err.to_string(), None);
            (text, Outcome::Unreachable(err.to_string()), None)
        }
    };
    if let Some(approved) = &approved {
        approved.approver.executed(&approved.ticket.id);
    }
    let step = approved.as_ref().map(Approved::executed);
    // What a tool answered is part of its record; other answers are not.
    let result = answer.as_ref().filter(|_| *call.method == Method::ToolsCall).and_then(Frame::payload);
    match audit(session, hooks, call, &verdict, &outcome, started, step, result).await {
        Ok(()) => session.link.respond(frame, reply),
        Err(why) => audit_failed(session, frame, &why),
    }
}

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

/// Sends `frame` to upstream `upstream` with Warden's id (and progress
/// token) in place of the client's, and waits for the answer; it is in
/// flight under `serial`.
pub(super) async fn forward(
    session: &SessionParts,
    frame: &Frame,
    serial: u64,
    upstream: usize,
    mut splice: Splice,
    token: Option<Range<usize>>,
) -> Forwarded {
    let connection = match session.connection(upstream).await {
        Ok(connection) => connection,
        Err(err) => return Forwarded::Failed(err),
    };
    let client_id = frame.id().unwrap_or("null").to_owned();
    let token = token.map(|span| {
        let issued = format!("\"w{}\"", session.next());
        let original = frame.text()[span.clone()].to_owned();
        let target = TokenTarget::Client { token: original, request: client_id.clone() };
        lock(&session.maps.tokens).insert(issued.clone(), target);
        splice.replace(span, issued.clone());
        issued
    });
    let release = |token: &Option<String>| {
        if let Some(token) = token {
            lock(&session.maps.tokens).remove(token);
        }
    };
    let id_span = frame.id_span();
    if connection.is_modern()
        && let Some(level) = session.log_level_for(&connection)
    {
        // The level rides each request; the connection may be newer
        // than the client's logging/setLevel.
        connection.set_log_level(level);
    }
    // A modern upstream may answer input_required: the request is sent
    // again, so its renames are kept.
    let base = connection.is_modern().then(|| splice.clone());
    let sent = connection.send_request(|id| {
        if let Some(span) = id_span {
            splice.replace(span, id);
        }
        splice.apply(frame.text())
    });
    let (upstream_id, response) = match sent {
        Ok(sent) => sent,
        Err(err) => {
            release(&token);
            return Forwarded::Failed(err);
        }
    };
    let entry = InFlight { upstream, connection: connection.clone(), upstream_id, token: token.clone(), serial };
    lock(&session.maps.in_flight).insert(client_id.clone(), entry);
    let mut answer = response.await;
    if let (Some(base), Ok(first)) = (&base, &answer)
        && first.payload().is_some_and(|payload| INPUT_REQUIRED.is_in(payload))
        && session.maps.still_in_flight(&client_id, serial)
    {
        let rounds = complete_rounds(session, frame, (&client_id, serial), &connection, base, first.clone());
        answer = match Box::pin(rounds).await {
            Forwarded::Answer(frame) => Ok(frame),
            Forwarded::Failed(err) => Err(err),
            Forwarded::Cancelled => {
                session.maps.take_in_flight(&client_id, serial);
                release(&token);
                return Forwarded::Cancelled;
            }
        };
    }
    let entry = session.maps.take_in_flight(&client_id, serial);
    release(&token);
    match (entry, answer) {
        (None, _) => Forwarded::Cancelled,
        (Some(_), Ok(frame)) => Forwarded::Answer(frame),
        (Some(_), Err(err)) => Forwarded::Failed(err),
    }
}

/// Whether the client already has a request in flight with this id,
/// upstream or waiting for approval.
fn id_in_use(session: &SessionParts, frame: &Frame) -> bool {
    frame.id().is_some_and(|id| {
        lock(&session.maps.in_flight).contains_key(id) || lock(&session.maps.waiting).contains_key(id)
    })
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

/// Classifies an upstream's answer for the audit record; reading `isError`
/// costs a pass over the result, so only when an audit is configured.
fn outcome_of(answer: &Frame, method: &Method, audited: bool) -> Outcome {
    #[derive(Deserialize)]
    struct ToolResult {
        #[serde(default, rename = "isError")]
        is_error: bool,
    }
    match answer.kind() {
        Kind::ErrorResponse => Outcome::Error,
        _ if audited && *method == Method::ToolsCall => {
            let is_error = answer
                .payload()
                .and_then(|result| serde_json::from_str::<ToolResult>(result).ok())
                .is_some_and(|result| result.is_error);
            if is_error { Outcome::ToolError } else { Outcome::Result }
        }
        _ => Outcome::Result,
    }
}
