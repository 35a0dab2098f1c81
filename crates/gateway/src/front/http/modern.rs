//! Streamable HTTP in the 2026-07-28 revision: a request carries its
//! envelope and the headers that mirror it, needs no session, and is served
//! by its caller's lane (see [`crate::modern`]).
//!
//! The status codes are exact, because clients detect the era from them:
//! 400 with -32602 (envelope), -32020 (headers), -32021 (capability) or
//! -32022 (version); 404 with -32601 (method); 202 for a notification.

use std::convert::Infallible;
use std::sync::Arc;

use axum::http::{HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use warden_config::Config;
use warden_jsonrpc::{ErrorCode, Frame, Kind, Members, Text};
use warden_upstream::mirror;

use super::Front;
use super::access::Caller;
use super::reply::{self, Refusal};
use super::request_headers::RequestHeaders;
use crate::modern::{self, Envelope, EnvelopeError, Reply, ReplyMessage};

/// Whether a POST is for the modern era: its body carries the envelope, or
/// it names a revision after the handshake-based ones and opens no session
/// (a modern request whose envelope is missing is refused as one).
pub(super) fn is_modern(headers: &RequestHeaders<'_>, frame: &Frame) -> bool {
    // The headers first: a modern client names its revision there, and then
    // the body need not be read to know.
    let version = text(headers.version());
    let opens_session = headers.session().is_some()
        || frame.method().is_some_and(|method| *method == warden_jsonrpc::Method::Initialize);
    if version.is_some_and(|version| !modern::is_2025_era_version(version)) && !opens_session {
        return true;
    }
    modern::is_modern(frame) || frame.method().is_some_and(|method| method.as_str() == "server/discover")
}

/// Serves one modern POST.
pub(super) async fn post(
    front: &Arc<Front>,
    scope: Option<String>,
    config: Arc<Config>,
    caller: &Caller,
    headers: &RequestHeaders<'_>,
    frame: Frame,
    json: bool,
) -> Result<Response, Refusal> {
    if frame.kind() != Kind::Request {
        // 2026-07-28 defines no client notifications over HTTP: accepted, ignored.
        return Ok(StatusCode::ACCEPTED.into_response());
    }
    let id = frame.id().unwrap_or("null");
    let envelope = match check(headers, &frame) {
        Ok(envelope) => envelope,
        Err(err) => {
            return Ok(reply::json(StatusCode::BAD_REQUEST, err.response(Some(id))));
        }
    };
    if frame.method().is_some_and(|method| method.as_str() == "server/discover") {
        // No lane (and no server process) for a client that only probes:
        // it may fall back to initialize.
        return Ok(answer(crate::modern::discover::answer(id), json));
    }
    let lane = front.lane(scope, config, caller, headers, &frame).await.map_err(|refusal| refusal.for_id(Some(id)))?;
    if let Err(err) = check_params(headers, &frame, &lane).await {
        return Ok(reply::json(StatusCode::BAD_REQUEST, err.response(Some(id))));
    }
    let mut reply = lane.serve(&frame, &envelope).await;
    match reply.next().await {
        Some(ReplyMessage::Last(text)) => Ok(answer(text, json)),
        Some(ReplyMessage::Note(first)) => Ok(stream(first, reply, front.keep_alive())),
        None => {
            Err(Refusal::new(StatusCode::INTERNAL_SERVER_ERROR, "the request ended without an answer").for_id(Some(id)))
        }
    }
}

/// The envelope, once it and the headers that mirror it agree. The params
/// are not read again: the parse found their `_meta` and `name` (a
/// `resources/read`'s `uri` is read here).
fn check(headers: &RequestHeaders<'_>, frame: &Frame) -> Result<Envelope, EnvelopeError> {
    let envelope = Envelope::read(frame)?;
    let mismatch = |message: String| EnvelopeError { code: ErrorCode::HeaderMismatch, message, data: None };
    match text(headers.version()) {
        None => return Err(mismatch("Header mismatch: the MCP-Protocol-Version header is required".into())),
        Some(version) if version != envelope.version => {
            return Err(mismatch(format!(
                "Header mismatch: MCP-Protocol-Version header value '{version}' does not match body value '{}'",
                envelope.version
            )));
        }
        Some(_) => {}
    }
    envelope.check_version()?;
    let method = frame.method().map(|method| method.as_str()).unwrap_or_default();
    match text(headers.method()) {
        None => return Err(mismatch("Header mismatch: the Mcp-Method header is required".into())),
        Some(value) if value != method => {
            return Err(mismatch(format!(
                "Header mismatch: Mcp-Method header value '{value}' does not match body value '{method}'"
            )));
        }
        Some(_) => {}
    }
    if matches!(method, "tools/call" | "prompts/get" | "resources/read") {
        let key = if method == "resources/read" { "uri" } else { "name" };
        let raw = match frame.param_members() {
            Some(members) if key == "name" => members.name,
            _ => frame.params().and_then(|params| Members::parse(params).ok()).and_then(|params| params.get(key)),
        };
        let Some(value) = text(headers.name()) else {
            return Err(mismatch(format!("Header mismatch: the Mcp-Name header is required for {method}")));
        };
        if raw.is_some_and(|raw| same_plain_text(raw, value)) {
            return Ok(envelope);
        }
        let body = raw.and_then(Text::read);
        let decoded = mirror::decode_header_value(value)
            .ok_or_else(|| mismatch("Header mismatch: Mcp-Name is not valid".into()))?;
        if body.as_deref() != Some(&*decoded) {
            return Err(mismatch(format!(
                "Header mismatch: Mcp-Name header value '{decoded}' does not match body value '{}'",
                body.as_deref().unwrap_or_default()
            )));
        }
    }
    Ok(envelope)
}

/// Whether the JSON string `raw` holds exactly the header value `value`,
/// seen without decoding either: `raw` has no escape (a valid JSON string
/// without a backslash holds its bytes as written) and `value` is not
/// Base64-encoded. `false` says only that they must be decoded to compare.
fn same_plain_text(raw: &str, value: &str) -> bool {
    // A name is a few bytes: a plain loop, not a SIMD search's set-up.
    raw.len() == value.len() + 2
        && raw.as_bytes().get(1..raw.len() - 1) == Some(value.as_bytes())
        && raw.starts_with('"')
        && !value.bytes().any(|byte| byte == b'\\')
        && !value.starts_with("=?")
}

/// The `Mcp-Param-*` headers of a `tools/call` against the tool's schema:
/// every annotated argument with a value must be mirrored, exactly.
async fn check_params(
    headers: &RequestHeaders<'_>,
    frame: &Frame,
    lane: &crate::modern::Lane,
) -> Result<(), EnvelopeError> {
    if frame.method().is_none_or(|method| *method != warden_jsonrpc::Method::ToolsCall) {
        return Ok(());
    }
    // The name is the body's: `check` compared it with the header already.
    let Some(name) = text(headers.name()).and_then(mirror::decode_header_value) else { return Ok(()) };
    let known = match lane.session().tool_mirrored_schema(&name) {
        Some(known) => known,
        None => {
            // Its server may still be starting: checked once the lists are in.
            lane.session().settle().await;
            // Still unknown: the lane answers that.
            lane.session().tool_mirrored_schema(&name).flatten()
        }
    };
    // Most tools mirror nothing: nothing to parse for them.
    let Some(schema) = known else { return Ok(()) };
    let arguments = match frame.param_members() {
        Some(members) => members.arguments,
        None => {
            frame.params().and_then(|params| Members::parse(params).ok()).and_then(|params| params.get("arguments"))
        }
    };
    for (header, expected) in mirror::param_headers(&schema, arguments) {
        let sent = text(headers.map().get(&header)).map(mirror::decode_header_value);
        let matches = matches!(&sent, Some(Some(sent)) if mirror::same_value(sent, &expected));
        if !matches {
            let message = match sent {
                None => {
                    format!("Header mismatch: the {header} header is required: the tool's schema mirrors that argument")
                }
                Some(_) => format!("Header mismatch: the {header} header does not match the argument '{expected}'"),
            };
            return Err(EnvelopeError { code: ErrorCode::HeaderMismatch, message, data: None });
        }
    }
    Ok(())
}

/// A header's value, trimmed, if present and text.
fn text(value: Option<&HeaderValue>) -> Option<&str> {
    value.and_then(|value| value.to_str().ok()).map(str::trim)
}

/// One final message as a JSON body (or a one-event stream for a client
/// that takes only streams), with the status its error code calls for.
fn answer(text: String, json: bool) -> Response {
    let status = match modern::results::error_code(&text) {
        Some(-32601) => StatusCode::NOT_FOUND,
        Some(-32022..=-32020) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    };
    if json || status != StatusCode::OK {
        return reply::json(status, text);
    }
    let events = futures_util::stream::once(async move { Ok::<_, Infallible>(Event::default().data(text)) });
    Sse::new(events).into_response()
}

/// Notifications, then the final message, as an event stream. The stream
/// owns the reply: a client that goes away cancels the request.
fn stream(first: String, reply: Reply, keep_alive: std::time::Duration) -> Response {
    let events = futures_util::stream::unfold((Some(first), Some(reply)), |(first, reply)| async move {
        if let Some(first) = first {
            return Some((Ok::<_, Infallible>(Event::default().data(first)), (None, reply)));
        }
        let mut reply = reply?;
        match reply.next().await? {
            ReplyMessage::Note(text) => Some((Ok(Event::default().data(text)), (None, Some(reply)))),
            // The last message ends the stream.
            ReplyMessage::Last(text) => Some((Ok(Event::default().data(text)), (None, None))),
        }
    });
    let mut response = Sse::new(events).keep_alive(KeepAlive::new().interval(keep_alive)).into_response();
    response.headers_mut().insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

#[cfg(test)]
mod tests {
    use super::same_plain_text;

    #[test]
    fn only_texts_equal_as_written_are_compared_without_decoding() {
        assert!(same_plain_text(r#""fx__echo""#, "fx__echo"));
        assert!(!same_plain_text(r#""fx__echo""#, "fx__echoo"));
        assert!(!same_plain_text(r#""fx__echa""#, "fx__echo"));
        // An escape, or a Base64 header: decoded and compared by the caller.
        assert!(!same_plain_text(r#""a\/b""#, r"a\/b"));
        assert!(!same_plain_text(r#""=?base64?eA==?=""#, "=?base64?eA==?="));
        // Not a string.
        assert!(!same_plain_text("1234", "12"));
    }
}
