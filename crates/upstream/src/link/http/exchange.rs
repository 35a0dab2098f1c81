//! One POST and its answer: `202 Accepted`, a JSON body, or an SSE stream
//! that may carry the server's requests and notifications before the
//! response. A stream that breaks before the response is resumed with a GET
//! and `Last-Event-ID` when its events had ids.

use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Response, StatusCode};
use warden_jsonrpc::{Frame, Kind};

use super::Remote;
use super::session::{SESSION_ID, Snapshot};
use crate::link::web::body::{self, BodyError};
use crate::link::web::events::{Cursor, Events, Next};
use crate::link::web::{self, SendError};

/// How often a broken answer stream is resumed before the request fails.
const MAX_RESUMES: u32 = 5;

/// How long to keep reading an answer stream after its response, so that it
/// ends cleanly and its connection can be reused.
const LINGER: Duration = Duration::from_secs(5);

/// One message to post and what to expect back.
pub(crate) struct Exchange<'a> {
    /// The message.
    pub body: Bytes,
    /// The id (JSON text) of the request whose response completes the
    /// exchange; `None` for notifications and responses.
    pub expect: Option<&'a str>,
    /// Hand that response back in [`Reply::captured`] instead of delivering it.
    pub capture: bool,
    /// The session to post in.
    pub session: &'a Snapshot,
    /// Headers that mirror the body (2026-07-28), made once per message
    /// (see `Remote::mirrored`).
    pub mirrored: &'a [(HeaderName, HeaderValue)],
}

/// What a POST brought back.
#[derive(Debug, Default)]
pub(crate) struct Reply {
    /// The `Mcp-Session-Id` the server set.
    pub session: Option<HeaderValue>,
    /// The response, when it was to be captured.
    pub captured: Option<Frame>,
}

/// Why a POST did not get its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PostError {
    /// The server could not be reached.
    Connect(String),
    /// The server answered 404 to a message carrying a session id: it no
    /// longer knows the session.
    Expired,
    /// The server answered with an error status.
    Status(String),
    /// The answer broke off or made no sense.
    Broken(String),
    /// The answer was over the size limit (at least this many bytes).
    TooLarge(usize),
}

impl PostError {
    /// Says what went wrong, for logs and errors.
    pub fn describe(&self, limit: usize) -> String {
        match self {
            PostError::Connect(reason) | PostError::Status(reason) | PostError::Broken(reason) => reason.clone(),
            PostError::Expired => "the server no longer knows the session (404)".into(),
            PostError::TooLarge(bytes) => {
                format!("its answer of {bytes} bytes is over the limit of {limit} (limits.maxMessageBytes)")
            }
        }
    }
}

/// How an answer stream stopped.
enum StreamEnd {
    /// The awaited response came.
    Answered,
    /// It ended (with why, if it broke) without the awaited response.
    Ended(Option<String>),
    /// An event was over the size limit.
    TooLarge(usize),
}

/// Posts one message and reads the answer, delivering every message in
/// it in order.
pub(crate) async fn run(remote: &Remote, exchange: Exchange<'_>) -> Result<Reply, PostError> {
    let url = &remote.settings.url;
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
    exchange.session.add_to(&mut headers);
    for (name, value) in exchange.mirrored {
        headers.append(name.clone(), value.clone());
    }
    let response = remote
        .settings
        .post(url, headers, exchange.body.clone())
        .await
        .map_err(|err| if err.connect { PostError::Connect(err.reason) } else { PostError::Broken(err.reason) })?;
    let status = response.status();
    if status == StatusCode::NOT_FOUND && exchange.session.id.is_some() {
        return Err(PostError::Expired);
    }
    if status.is_client_error() && exchange.session.id.is_none() && web::is_media_type(&response, "application/json") {
        // A modern server refuses with a JSON-RPC error in the body:
        // that error is the answer.
        return refusal(remote, response, &exchange, status).await;
    }
    if !status.is_success() {
        return Err(PostError::Status(web::status_error("POST", url, response).await));
    }
    let mut reply = Reply { session: response.headers().get(SESSION_ID).cloned(), captured: None };
    let expect = exchange.expect;
    if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
        return match expect {
            Some(_) => Err(PostError::Broken(format!("POST {url} answered {status} to a request"))),
            None => Ok(reply),
        };
    }
    if web::is_event_stream(&response) {
        read_stream(remote, response, &exchange, &mut reply).await?;
        return Ok(reply);
    }
    if web::is_media_type(&response, "application/json") {
        let text = body::read_limited(response, remote.dispatch.limit()).await.map_err(|err| match err {
            BodyError::TooLarge(bytes) => PostError::TooLarge(bytes),
            BodyError::Failed(reason) => {
                PostError::Broken(format!("reading the answer to POST {url} failed: {reason}"))
            }
        })?;
        let mut answered = false;
        for message in body::messages(text) {
            answered |= deliver(remote, message, &exchange, &mut reply);
        }
        return match (expect, answered) {
            (Some(_), false) => Err(PostError::Broken(format!("POST {url} answered without the response"))),
            _ => Ok(reply),
        };
    }
    match expect {
        Some(_) => {
            let media = web::media_type(&response);
            Err(PostError::Broken(format!("POST {url} answered with content type '{media}'")))
        }
        None => Ok(reply),
    }
}

/// A 4xx whose JSON body answers the request: delivered as its answer.
async fn refusal(
    remote: &Remote,
    response: reqwest::Response,
    exchange: &Exchange<'_>,
    status: StatusCode,
) -> Result<Reply, PostError> {
    let url = &remote.settings.url;
    let mut reply = Reply { session: None, captured: None };
    let text = body::read_limited(response, remote.dispatch.limit())
        .await
        .map_err(|_| PostError::Status(format!("POST {url} answered {status}")))?;
    let mut answered = false;
    if exchange.expect.is_some() {
        for message in body::messages(text.clone()) {
            // An error with a null id (a server's "Bad Request" before
            // it read the request) answers nothing: it is the refusal,
            // reported below with its text, not a stray response.
            if is_unaddressed_error(&message) {
                continue;
            }
            answered |= deliver(remote, message, exchange, &mut reply);
        }
    }
    if answered { Ok(reply) } else { Err(PostError::Status(format!("POST {url} answered {status}: {}", text.trim()))) }
}

/// Reads an answer stream until the awaited response, resuming it when
/// it breaks off first and its events had ids.
async fn read_stream(
    remote: &Remote,
    response: Response,
    exchange: &Exchange<'_>,
    reply: &mut Reply,
) -> Result<(), PostError> {
    let url = &remote.settings.url;
    let mut cursor = Cursor::default();
    let mut events = Events::new(response, remote.dispatch.limit());
    let mut resumes = 0;
    loop {
        let broke = match read_events(remote, &mut events, &mut cursor, exchange, reply).await {
            StreamEnd::Answered => return Ok(()),
            StreamEnd::TooLarge(bytes) => return Err(PostError::TooLarge(bytes)),
            StreamEnd::Ended(_) if exchange.expect.is_none() => return Ok(()),
            StreamEnd::Ended(broke) => broke,
        };
        let why = broke.map(|reason| format!(" ({reason})")).unwrap_or_default();
        let Some(last_id) = cursor.last_id.clone() else {
            return Err(PostError::Broken(format!("the server closed the stream before answering{why}")));
        };
        if resumes == MAX_RESUMES {
            return Err(PostError::Broken(format!("the stream broke {resumes} times before the answer{why}")));
        }
        let delay = cursor.retry.unwrap_or_else(|| remote.settings.backoff(resumes)).min(remote.settings.backoff_max);
        resumes += 1;
        tracing::debug!(server = %remote.name(), %last_id, "resuming an answer stream that broke off{why}");
        tokio::time::sleep(delay).await;
        let request = remote
            .settings
            .client
            .get(url.clone())
            .header(ACCEPT, "text/event-stream")
            .header("last-event-id", last_id);
        let resumed = exchange.session.apply(request).send().await.map_err(|err| {
            let reason = SendError::new(&err, "GET", url).reason;
            PostError::Broken(format!("the stream broke before the answer{why} and resuming it failed: {reason}"))
        })?;
        if !resumed.status().is_success() || !web::is_event_stream(&resumed) {
            let reason = web::status_error("GET", url, resumed).await;
            return Err(PostError::Broken(format!(
                "the stream broke before the answer{why} and resuming it failed: {reason}"
            )));
        }
        events = Events::new(resumed, remote.dispatch.limit());
    }
}

/// Delivers the messages of one stream until the awaited response or its end.
async fn read_events(
    remote: &Remote,
    events: &mut Events,
    cursor: &mut Cursor,
    exchange: &Exchange<'_>,
    reply: &mut Reply,
) -> StreamEnd {
    loop {
        match events.next(cursor).await {
            Next::Event { kind, data } => {
                if kind.as_deref().is_some_and(|kind| kind != "message") {
                    continue;
                }
                if deliver(remote, data, exchange, reply) {
                    if !exchange.capture {
                        // The server ends the stream after the response;
                        // reading to its end lets the connection be reused.
                        let _ = tokio::time::timeout(LINGER, drain(remote, events, cursor)).await;
                    }
                    return StreamEnd::Answered;
                }
            }
            Next::End => return StreamEnd::Ended(None),
            Next::Failed(reason) => return StreamEnd::Ended(Some(reason)),
            Next::TooLarge(bytes) => return StreamEnd::TooLarge(bytes),
        }
    }
}

/// Delivers whatever still comes on a stream, until it ends.
async fn drain(remote: &Remote, events: &mut Events, cursor: &mut Cursor) {
    while let Next::Event { kind, data } = events.next(cursor).await {
        if kind.as_deref().is_none_or(|kind| kind == "message") {
            remote.dispatch.text(data);
        }
    }
}

/// Delivers one message, or captures it when it is the awaited response
/// and capturing was asked for. Returns whether it was the awaited response.
fn deliver(remote: &Remote, text: String, exchange: &Exchange<'_>, reply: &mut Reply) -> bool {
    let Some(frame) = remote.dispatch.parse(text) else { return false };
    if frame.kind() == Kind::Response && remote.dispatch.connection().is_modern() {
        super::post::learn_schemas(remote, &frame);
    }
    let awaited = matches!(frame.kind(), Kind::Response | Kind::ErrorResponse)
        && exchange.expect.is_some_and(|expect| frame.id() == Some(expect));
    if awaited && exchange.capture {
        reply.captured = Some(frame);
    } else {
        let related = exchange.expect.and_then(|id| id.parse::<u64>().ok());
        remote.dispatch.frame_on(frame, related);
    }
    awaited
}

/// Whether `message` is a JSON-RPC error without an id (or with a null one).
fn is_unaddressed_error(message: &str) -> bool {
    Frame::parse(message)
        .is_ok_and(|frame| frame.kind() == Kind::ErrorResponse && frame.id().is_none_or(|id| id == "null"))
}

#[cfg(test)]
mod tests {
    use super::is_unaddressed_error;

    #[test]
    fn a_refusal_with_a_null_id_answers_no_request() {
        let refusal =
            r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}"#;
        assert!(is_unaddressed_error(refusal));
        assert!(!is_unaddressed_error(r#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"no"},"id":3}"#));
        assert!(!is_unaddressed_error(r#"{"jsonrpc":"2.0","result":{},"id":3}"#));
        assert!(!is_unaddressed_error("not json"));
    }
}
