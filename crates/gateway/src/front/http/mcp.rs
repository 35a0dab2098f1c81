//! Streamable HTTP: POST a message, GET the session's stream, DELETE the
//! session. The hub is at `/mcp`, each server (with `exposePerServer`) at
//! `/mcp/<server>`.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tokio::sync::oneshot;
use warden_jsonrpc::{Frame, Kind, Method};

use crate::Work;

use super::access::Caller;
use super::body::{parse, read_body};
use super::reply::{self, Refusal};
use super::request_headers::{Accept, RequestHeaders};
use super::sessions::{self, Claim, Entry};
use super::streams::{Answer, OpenError, SseEvent};
use super::tenants::{Share, holding};
use super::{Front, SESSION_HEADER, sse};
use crate::inbound::SUPPORTED_VERSIONS;

/// The media type of a message a client posts (any case, any parameters).
const JSON: &str = "application/json";

/// What the client accepts in answer to a POST.
struct Accepts {
    json: bool,
    sse: bool,
}

/// The `Accept` header of the official SDKs' POSTs.
const USUAL_ACCEPT: &[u8] = b"application/json, text/event-stream";

impl Accepts {
    fn of(headers: &RequestHeaders<'_>) -> Accepts {
        let all = match headers.accept() {
            Accept::None => return Accepts { json: true, sse: true },
            Accept::One(value) => std::slice::from_ref(value).iter(),
            Accept::Several => return Accepts::read(headers.map().get_all(header::ACCEPT).iter()),
        };
        Accepts::read(all)
    }

    /// What the `Accept` values list (none that is text: as no header).
    fn read<'v>(values: impl Iterator<Item = &'v HeaderValue>) -> Accepts {
        let mut values = values.filter_map(|value| value.to_str().ok()).map(str::as_bytes).peekable();
        if values.peek().is_none() {
            return Accepts { json: true, sse: true };
        }
        let (mut json, mut sse) = (false, false);
        for value in values {
            // What the official SDKs send, known without splitting: asked of
            // every POST, where splitting cost 800 instructions.
            if value == USUAL_ACCEPT {
                (json, sse) = (true, true);
                continue;
            }
            for kind in value.split(|&byte| byte == b',') {
                let kind = kind.split(|&byte| byte == b';').next().unwrap_or_default().trim_ascii();
                json |= matches!(kind, b"application/json" | b"application/*" | b"*/*");
                sse |= matches!(kind, b"text/event-stream" | b"text/*" | b"*/*");
            }
        }
        Accepts { json, sse }
    }
}

/// POST `/mcp` or `/mcp/<server>` (`scope`): one message.
pub(super) async fn post(front: Arc<Front>, scope: Option<String>, headers: HeaderMap, body: Body) -> Response {
    posted(front, scope, headers, body).await.unwrap_or_else(IntoResponse::into_response)
}

async fn posted(front: Arc<Front>, scope: Option<String>, headers: HeaderMap, body: Body) -> Result<Response, Refusal> {
    let headers = RequestHeaders::of(&headers);
    let caller = front.access.check(&headers)?;
    let config = front.endpoint(scope.as_deref(), &caller, &headers)?;
    if let Some(kind) = headers.content_type().and_then(|value| value.to_str().ok())
        && !kind.trim_start().get(..JSON.len()).is_some_and(|start| start.eq_ignore_ascii_case(JSON))
    {
        let message = format!("messages must be sent as application/json, not {kind}");
        return Err(Refusal::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, &message));
    }
    let accepts = Accepts::of(&headers);
    if !accepts.json && !accepts.sse {
        let message = "the Accept header must list application/json and text/event-stream";
        return Err(Refusal::new(StatusCode::NOT_ACCEPTABLE, message));
    }
    let text = read_body(body, front.max_message_bytes, front.body_timeout()).await?;
    let frame = parse(text)?;
    // A request counts against its token's calls until its answer is sent;
    // notifications and the client's answers to a server (which a call in
    // flight may be waiting for) never do.
    let call = match frame.kind() {
        Kind::Request => front.tenants.take(caller.name.as_ref(), Share::Calls, 1).map_err(|r| r.for_id(frame.id()))?,
        _ => None,
    };
    let response = post_frame(&front, scope, config, &caller, &headers, frame, accepts).await?;
    Ok(holding(response, call))
}

/// Serves one message POSTed by `caller` to endpoint `scope`.
async fn post_frame(
    front: &Arc<Front>,
    scope: Option<String>,
    config: Arc<warden_config::Config>,
    caller: &Caller,
    headers: &RequestHeaders<'_>,
    frame: Frame,
    accepts: Accepts,
) -> Result<Response, Refusal> {
    if super::modern::is_modern(headers, &frame) {
        return super::modern::post(front, scope, config, caller, headers, frame, accepts.json).await;
    }
    let Some(session_id) = session_id(headers) else {
        if frame.kind() == Kind::Request && frame.method() == Some(&Method::Initialize) {
            return initialize(front, scope, config, caller, headers, frame).await;
        }
        let message = "the request has no Mcp-Session-Id header: send initialize first";
        return Err(Refusal::new(StatusCode::BAD_REQUEST, message).for_id(frame.id()));
    };
    let entry = claim(front, scope.as_deref(), caller, session_id)?;
    check_version(headers)?;
    if frame.method() == Some(&Method::Initialize) {
        let message = "this session is already initialized; start a new one without Mcp-Session-Id";
        return Err(Refusal::new(StatusCode::BAD_REQUEST, message).for_id(frame.id()));
    }
    if frame.kind() != Kind::Request {
        // Notifications and the client's answers need no reply.
        entry.session.handle_frame(frame);
        return Ok(StatusCode::ACCEPTED.into_response());
    }
    let id = frame.id().unwrap_or("null").to_owned();
    let answer = entry.streams.expect(&id, accepts.sse).map_err(|_| {
        let message = "the client already has a request in flight with this id";
        Refusal::new(StatusCode::BAD_REQUEST, message).for_id(Some(&id))
    })?;
    // Served in this connection's task, not a task of its own.
    let work = entry.session.request_work(frame);
    respond(front, &entry, answered(work, answer), &accepts).await
}

/// Runs a request's `work` until its answer is there. If the answer comes
/// first (an event stream, opened by progress or a server's request), the
/// rest of the work goes on in a task of its own (see [`Work`]).
async fn answered(mut work: Work, mut answer: oneshot::Receiver<Answer>) -> Result<Answer, oneshot::error::RecvError> {
    tokio::select! {
        biased;
        answer = &mut answer => answer,
        () = &mut work => answer.await,
    }
}

/// Starts a session for an `initialize` request.
async fn initialize(
    front: &Arc<Front>,
    scope: Option<String>,
    config: Arc<warden_config::Config>,
    caller: &Caller,
    headers: &RequestHeaders<'_>,
    frame: Frame,
) -> Result<Response, Refusal> {
    let refuse = |status, message: &str| Refusal::new(status, message).for_id(frame.id());
    let entry = front
        .open_session(scope, config, caller, headers, false)
        .await
        .map_err(|refusal| refusal.for_id(frame.id()))?;
    let request_id = frame.id().unwrap_or("null").to_owned();
    let answer = entry.streams.expect(&request_id, false).map_err(|_| refuse(StatusCode::BAD_REQUEST, "bad id"))?;
    entry.session.handle_frame(frame);
    match entry.session.protocol_version() {
        Some(version) => entry.streams.set_priming(version >= "2025-11-25"),
        // Refused (a bad initialize): the answer says why; no session stays.
        None => {
            if let Some(entry) = front.sessions.remove(&entry.id) {
                tokio::spawn(sessions::end(entry));
            }
        }
    }
    respond(front, &entry, answer, &Accepts { json: true, sse: false }).await
}

/// Waits for a request's answer: a JSON body (or a one-event stream for a
/// client that takes only streams), or an event stream.
async fn respond(
    front: &Front,
    entry: &Entry,
    answer: impl Future<Output = Result<Answer, oneshot::error::RecvError>>,
    accepts: &Accepts,
) -> Result<Response, Refusal> {
    let mut response = match answer.await {
        Ok(Answer::Json(text)) if accepts.json => reply::json(StatusCode::OK, text),
        Ok(Answer::Json(text)) => {
            let (events, receiver) = tokio::sync::mpsc::unbounded_channel();
            let _ = events.send(SseEvent { id: "0-0".to_owned(), data: std::sync::Arc::from(text) });
            sse::event_stream(receiver, front.keep_alive(), sse::STREAMABLE)
        }
        Ok(Answer::Stream(events)) => sse::event_stream(events, front.keep_alive(), sse::STREAMABLE),
        // A cancelled request gets no response: an event stream that ends
        // at once, without a priming event to resume from.
        Ok(Answer::Cancelled) => {
            sse::event_stream(tokio::sync::mpsc::unbounded_channel().1, front.keep_alive(), sse::STREAMABLE)
        }
        Err(_) => return Err(Refusal::new(StatusCode::NOT_FOUND, "the session ended before answering")),
    };
    if let Some(value) = &entry.id_header {
        response.headers_mut().insert(SESSION_HEADER, value.clone());
    }
    Ok(response)
}

/// GET `/mcp` or `/mcp/<server>`: the session's own stream, or the
/// resumption of a dropped one.
pub(super) fn open_stream(front: Arc<Front>, scope: Option<String>, headers: HeaderMap) -> Response {
    stream_opened(front, scope, headers).unwrap_or_else(IntoResponse::into_response)
}

fn stream_opened(front: Arc<Front>, scope: Option<String>, headers: HeaderMap) -> Result<Response, Refusal> {
    let headers = RequestHeaders::of(&headers);
    let caller = front.access.check(&headers)?;
    front.endpoint(scope.as_deref(), &caller, &headers)?;
    if !Accepts::of(&headers).sse {
        return Err(Refusal::new(StatusCode::NOT_ACCEPTABLE, "a GET stream needs Accept: text/event-stream"));
    }
    let Some(session_id) = session_id(&headers) else {
        return Err(Refusal::new(StatusCode::BAD_REQUEST, "the request has no Mcp-Session-Id header"));
    };
    let entry = find(&front, scope.as_deref(), &caller, session_id)?;
    check_version(&headers)?;
    let stream = front.tenants.take(caller.name.as_ref(), Share::Streams, 1)?;
    entry.touch();
    let last = headers.last_event_id().and_then(|value| value.to_str().ok());
    let events = match entry.streams.attach(last) {
        Ok(events) => events,
        // A stream that is gone and fully delivered: the session's own stream instead.
        Err(OpenError::UnknownEvent | OpenError::DuplicateId) => {
            entry.streams.attach(None).map_err(|_| Refusal::new(StatusCode::NOT_FOUND, "no such stream"))?
        }
    };
    Ok(holding(sse::event_stream(events, front.keep_alive(), sse::STREAMABLE), stream))
}

/// DELETE `/mcp` or `/mcp/<server>`: the client ends its session.
pub(super) fn delete(front: Arc<Front>, scope: Option<String>, headers: HeaderMap) -> Response {
    deleted(front, scope, headers).unwrap_or_else(IntoResponse::into_response)
}

fn deleted(front: Arc<Front>, scope: Option<String>, headers: HeaderMap) -> Result<Response, Refusal> {
    let headers = RequestHeaders::of(&headers);
    let caller = front.access.check(&headers)?;
    front.endpoint(scope.as_deref(), &caller, &headers)?;
    let Some(session_id) = session_id(&headers) else {
        return Err(Refusal::new(StatusCode::BAD_REQUEST, "the request has no Mcp-Session-Id header"));
    };
    let entry = find(&front, scope.as_deref(), &caller, session_id)?;
    if let Some(entry) = front.sessions.remove(&entry.id) {
        tracing::info!(session = %entry.id, "HTTP session ended by the client");
        tokio::spawn(sessions::end(entry));
    }
    Ok(StatusCode::OK.into_response())
}

/// The live session with this id, if it belongs to this endpoint and caller.
fn find(front: &Front, scope: Option<&str>, caller: &Caller, id: &str) -> Result<Arc<Entry>, Refusal> {
    front.sessions.get(id).filter(|entry| belongs(entry, scope, caller)).ok_or_else(unknown_session)
}

/// The same, claimed for a request: it is not ended to make room while the
/// request is handled.
fn claim(front: &Front, scope: Option<&str>, caller: &Caller, id: &str) -> Result<Claim, Refusal> {
    front.sessions.claim(id).filter(|entry| belongs(entry, scope, caller)).ok_or_else(unknown_session)
}

fn belongs(entry: &Entry, scope: Option<&str>, caller: &Caller) -> bool {
    !entry.is_sse_transport() && entry.scope.as_deref() == scope && entry.owner == caller.name
}

fn unknown_session() -> Refusal {
    Refusal::new(StatusCode::NOT_FOUND, "unknown or expired session: initialize a new one")
}

fn session_id<'a>(headers: &RequestHeaders<'a>) -> Option<&'a str> {
    headers.session().and_then(|value| value.to_str().ok()).map(str::trim).filter(|id| !id.is_empty())
}

/// A request after `initialize` may name its protocol revision; an unknown
/// one is refused rather than guessed at.
fn check_version(headers: &RequestHeaders<'_>) -> Result<(), Refusal> {
    match headers.version().map(|value| value.to_str().unwrap_or("")) {
        Some(version) if !SUPPORTED_VERSIONS.contains(&version.trim()) => {
            let message =
                format!("unsupported MCP-Protocol-Version {version:?} (supported: {})", SUPPORTED_VERSIONS.join(", "));
            Err(Refusal::new(StatusCode::BAD_REQUEST, &message))
        }
        _ => Ok(()),
    }
}

pub(super) fn no_endpoint() -> Refusal {
    Refusal::new(StatusCode::NOT_FOUND, "no MCP endpoint here (is the hub or exposePerServer enabled?)")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepts(values: &[&[u8]]) -> (bool, bool) {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(header::ACCEPT, HeaderValue::from_bytes(value).expect("a header value"));
        }
        let accepts = Accepts::of(&RequestHeaders::of(&headers));
        (accepts.json, accepts.sse)
    }

    #[test]
    fn the_accept_header_names_json_and_event_streams_by_media_range() {
        assert_eq!(accepts(&[]), (true, true));
        assert_eq!(accepts(&[b"application/json, text/event-stream"]), (true, true));
        assert_eq!(accepts(&[b"application/json;q=0.9,\ttext/event-stream ; q=1"]), (true, true));
        assert_eq!(accepts(&[b"application/json"]), (true, false));
        assert_eq!(accepts(&[b"text/html", b"text/*"]), (false, true));
        assert_eq!(accepts(&[b"*/*"]), (true, true));
        assert_eq!(accepts(&[b"application/*"]), (true, false));
        assert_eq!(accepts(&[b"text/html"]), (false, false));
        assert_eq!(accepts(&[b"application/jsonx, text/event-streams"]), (false, false));
        // A value that is not visible ASCII is not read, as before: alone,
        // it counts as no Accept header.
        assert_eq!(accepts(&[b"application/json\xff"]), (true, true));
        assert_eq!(accepts(&[b"\xff", b"text/event-stream"]), (false, true));
    }
}
