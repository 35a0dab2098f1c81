//! A POSTed message: its body read within a size and a time limit, and
//! parsed as one JSON-RPC message (both transports take messages so).

use std::task::Poll;

use axum::body::Body;
use axum::http::StatusCode;
use futures_util::StreamExt;
use warden_jsonrpc::Frame;

use super::reply::Refusal;

/// Reads a body of at most `limit` bytes, arriving within `timeout` in all
/// (a client dripping a byte at a time is cut off, not waited for).
pub(super) async fn read_body(body: Body, limit: usize, timeout: std::time::Duration) -> Result<String, Refusal> {
    let mut reading = std::pin::pin!(read_body_within(body, limit));
    // A message of a few hundred bytes has usually arrived with the request's
    // head: read at once, it needs no timer (set, then cancelled: about 800
    // instructions a POST).
    if let Poll::Ready(read) = std::future::poll_fn(|cx| Poll::Ready(reading.as_mut().poll(cx))).await {
        return read;
    }
    tokio::time::timeout(timeout, reading).await.unwrap_or_else(|_| {
        let message = format!("the body did not arrive within {} s (http.bodyTimeoutSecs)", timeout.as_secs());
        Err(Refusal::new(StatusCode::REQUEST_TIMEOUT, &message))
    })
}

async fn read_body_within(body: Body, limit: usize) -> Result<String, Refusal> {
    let mut bytes = Vec::new();
    let mut chunks = body.into_data_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk =
            chunk.map_err(|err| Refusal::new(StatusCode::BAD_REQUEST, &format!("cannot read the body: {err}")))?;
        if bytes.len() + chunk.len() > limit {
            let head = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]).into_owned();
            let id = warden_jsonrpc::guess_id(&head, "");
            let message = format!("the body exceeds the limit of {limit} bytes (limits.maxMessageBytes)");
            return Err(Refusal::new(StatusCode::PAYLOAD_TOO_LARGE, &message).for_id(id.as_deref()));
        }
        bytes.extend_from_slice(&chunk);
    }
    String::from_utf8(bytes).map_err(|_| Refusal::new(StatusCode::BAD_REQUEST, "the body is not valid UTF-8"))
}

/// Parses one JSON-RPC message; batches are refused (removed in 2025-06-18).
pub(super) fn parse(text: String) -> Result<Frame, Refusal> {
    if text.trim_start().starts_with('[') {
        let message = "JSON-RPC batches are not supported: send one message per request";
        return Err(Refusal::new(StatusCode::BAD_REQUEST, message));
    }
    Frame::parse(text).map_err(|err| {
        Refusal::new(StatusCode::BAD_REQUEST, &err.message).for_id(err.id.as_deref()).with_code(err.code)
    })
}
