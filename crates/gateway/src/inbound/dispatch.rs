//! The pipeline one request that names its upstream runs through: the
//! guard decides; an escalated call waits for approval; the request is
//! forwarded; the outcome is recorded; the client gets its answer.

use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use serde::Deserialize;
use warden_jsonrpc::{ErrorCode, Frame, Kind, Method, Needle, Splice, error_response};

use super::approval::{Approved, await_approval};
use super::forward::{Forwarded, forward};
use super::record::{audit, audit_failed, refusal_response};
use crate::parts::SessionParts;
use crate::pipeline::{Call, ErrorType, Hooks, Operation, Outcome, Target as Named, Verdict};
use crate::served;
use warden_sync::lock;

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
    let named = match call.method {
        Method::ToolsCall => Some(Named::Tool(call.name)),
        Method::PromptsGet => Some(Named::Prompt(call.name)),
        _ => None,
    };
    let observed = |decision, error| served::record(&*hooks.observer, call.method, call.server, named, decision, error);
    // What a refused call is answered with (see `refusal_response`).
    let refused = if *call.method == Method::ToolsCall {
        ErrorType::ToolError
    } else {
        ErrorType::Code(ErrorCode::Refused.code())
    };
    let started = Instant::now();
    let verdict = match hooks.guard.decide_at_once(&call) {
        Some(verdict) => verdict,
        // Boxed, as approval below: few calls name a path on a remote mount.
        None => Box::pin(super::decide::off_thread(&hooks.guard, &call)).await,
    };
    let mut approved = None;
    if let (Verdict::Escalate { .. }, Some(_)) = (&verdict, &hooks.approver) {
        let progress_token = token.clone().map(|span| &frame.text()[span]);
        // Boxed, like the other paths few calls take: an inline future is
        // part of every call's state, which is allocated and moved per call.
        approved =
            Box::pin(await_approval(session, (frame, serial), hooks, call, &verdict, progress_token, started)).await;
        if approved.is_none() {
            return observed(decided(&verdict), Some(refused));
        }
    } else if let Some(refusal) = verdict.refusal() {
        tracing::info!(session = %session.id, server = call.server, name = call.name, "refused: {refusal}");
        // A refusal stands even if it cannot be recorded.
        let _ = audit(session, hooks, call, &verdict, &Outcome::Refused, started, None, None).await;
        session.link.respond(frame, refusal_response(frame, call.method, &refusal));
        return observed(decided(&verdict), Some(refused));
    }
    // A traced request's forwarded copy names Warden's span as its parent.
    let mut splice = splice;
    let span = served::span().and_then(|within| hooks.observer.child(&within));
    if let Some(span) = &span {
        super::trace_context::inject(frame, &mut splice, &span.context);
    }
    // The call's own duration is for the observer alone: no clock is read
    // for it when nothing watches.
    let sent = hooks.observer.is_watching().then(Instant::now);
    let forwarded = forward(session, frame, serial, upstream, splice, token).await;
    // The client gets the upstream's answer, or the error that it failed.
    let (outcome, reply) = match forwarded {
        Forwarded::Cancelled => return,
        Forwarded::Answer(answer) => {
            if creates_task {
                session.replay.record_task(upstream, &answer);
            }
            let outcome = outcome_of(&answer, call.method, hooks.audit.is_some(), hooks.observer.is_watching());
            (outcome, Ok(answer))
        }
        Forwarded::Failed(err) => {
            let text = error_response(frame.id(), ErrorCode::UpstreamUnavailable, &err.to_string(), None);
            (Outcome::Unreachable(err.to_string()), Err(text))
        }
    };
    let answer = reply.as_ref().ok();
    let error = if hooks.observer.is_watching() { error_type(&outcome, answer) } else { None };
    if let Some(sent) = sent {
        let operation = Operation {
            target: named,
            server: Some(call.server),
            error,
            span: span.as_ref(),
            ..Operation::new(call.method, sent.elapsed())
        };
        hooks.observer.called(&operation);
    }
    if let Some(approved) = &approved {
        approved.approver.executed(&approved.ticket.id);
    }
    let step = approved.as_ref().map(Approved::executed);
    // What a tool answered is part of its record; other answers are not.
    let result = answer.filter(|_| *call.method == Method::ToolsCall).and_then(Frame::payload);
    match audit(session, hooks, call, &verdict, &outcome, started, step, result).await {
        Ok(()) => {
            match reply {
                Ok(answer) => session.link.respond_answer(frame, &answer),
                Err(text) => session.link.respond(frame, text),
            }
            observed(decided(&verdict), error);
        }
        Err(why) => {
            audit_failed(session, frame, &why);
            observed(decided(&verdict), Some(ErrorType::Code(ErrorCode::InternalError.code())));
        }
    }
}

/// What the guard decided and by which rule, when it did more than allow.
fn decided(verdict: &Verdict) -> Option<(&'static str, &str)> {
    match verdict {
        Verdict::Allow => None,
        Verdict::Deny { rule, .. } => Some(("deny", rule)),
        Verdict::Escalate { rule, .. } => Some(("escalate", rule)),
    }
}

/// Whether the client already has a request in flight with this id,
/// upstream or waiting for approval.
fn id_in_use(session: &SessionParts, frame: &Frame) -> bool {
    frame.id().is_some_and(|id| {
        lock(&session.maps.in_flight).contains_key(id) || lock(&session.maps.waiting).contains_key(id)
    })
}

/// A tool result's flag, as its key is usually written.
static IS_ERROR: Needle = Needle::new("\"isError\"");

/// Classifies an upstream's answer, for the audit record and the observer.
/// Reading `isError` costs a pass over the result: only when audited or
/// watched, and for the observer alone only when the key is in the text as
/// usually written (a metric may miss a flag written with escapes; an
/// audit record does not).
fn outcome_of(answer: &Frame, method: &Method, audited: bool, watched: bool) -> Outcome {
    #[derive(Deserialize)]
    struct ToolResult {
        #[serde(default, rename = "isError")]
        is_error: bool,
    }
    let flagged = || watched && answer.payload().is_some_and(|result| IS_ERROR.is_in(result));
    match answer.kind() {
        Kind::ErrorResponse => Outcome::Error,
        _ if *method == Method::ToolsCall && (audited || flagged()) => {
            let is_error = answer
                .payload()
                .and_then(|result| serde_json::from_str::<ToolResult>(result).ok())
                .is_some_and(|result| result.is_error);
            if is_error { Outcome::ToolError } else { Outcome::Result }
        }
        _ => Outcome::Result,
    }
}

/// How a forwarded request ended, as `error.type`: an error answer's code,
/// `tool_error`, or Warden's code for an unreachable upstream.
fn error_type(outcome: &Outcome, answer: Option<&Frame>) -> Option<ErrorType> {
    #[derive(Deserialize)]
    struct Error {
        code: i64,
    }
    match outcome {
        Outcome::ToolError => Some(ErrorType::ToolError),
        Outcome::Unreachable(_) => Some(ErrorType::Code(ErrorCode::UpstreamUnavailable.code())),
        Outcome::Error => {
            let code = answer.and_then(Frame::payload).and_then(|error| serde_json::from_str::<Error>(error).ok());
            Some(ErrorType::Code(code.map_or(ErrorCode::InternalError.code(), |error| error.code)))
        }
        Outcome::Result | Outcome::Refused | Outcome::Pending => None,
    }
}
