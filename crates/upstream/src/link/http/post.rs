//! Posting one outgoing message, and what to do when that fails.

use std::sync::Arc;

use bytes::Bytes;
use reqwest::header::{HeaderName, HeaderValue};
use serde::Deserialize;
use warden_jsonrpc::{Frame, Kind};

use super::Remote;
use super::exchange::{Exchange, PostError, Reply};
use super::session::Snapshot;
use crate::error::UpstreamError;
use crate::link::web::outbound::Outbound;
use warden_sync::lock;

/// What to do after a POST failed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Recovery {
    /// The session expired: initialize a new one, then post again.
    Renew,
    /// The session expired and the message was a notification or a response,
    /// which only made sense in the old session: drop it.
    Drop,
    /// Give up: fail the request (or log the notification).
    Fail,
}

/// Decides what follows `error` for a message that is a request or not,
/// and that was already posted again after a renewal or not.
pub(crate) fn recovery(error: &PostError, request: bool, renewed: bool) -> Recovery {
    match error {
        PostError::Expired if !request => Recovery::Drop,
        PostError::Expired if !renewed => Recovery::Renew,
        _ => Recovery::Fail,
    }
}

/// Posts one message Warden sends upstream. Never fails silently: a request
/// that cannot be delivered or answered fails with an [`UpstreamError`].
pub(crate) async fn post(remote: Arc<Remote>, text: String, outbound: Outbound) {
    let limit = remote.dispatch.limit();
    if text.len() > limit {
        let error = UpstreamError::RequestTooLarge { name: remote.name().to_owned(), bytes: text.len(), limit };
        outbound.fail(&remote.dispatch, error);
        return;
    }
    if outbound.initialize {
        initialize(&remote, text, outbound.request.as_deref().unwrap_or("null")).await;
        return;
    }
    let mirrored = match mirrored(&remote, &outbound) {
        Ok(mirrored) => mirrored,
        Err(reason) => {
            let reason = format!("POST {}: {reason}", remote.settings.url);
            outbound.fail(&remote.dispatch, UpstreamError::Lost { name: remote.name().to_owned(), reason });
            return;
        }
    };
    let body = Bytes::from(text);
    let mut renewed = false;
    loop {
        let session = remote.session.current().await;
        let exchange = Exchange {
            body: body.clone(),
            expect: outbound.request.as_deref(),
            capture: false,
            session: &session,
            mirrored: &mirrored,
        };
        let error = match super::exchange::run(&remote, exchange).await {
            Ok(_) => {
                if outbound.initialized {
                    super::listen::listen(&remote, session.generation);
                }
                return;
            }
            Err(error) => error,
        };
        match recovery(&error, outbound.request.is_some(), renewed) {
            Recovery::Renew => {
                renewed = true;
                if let Err(reason) = super::renew::renew(&remote, session.generation).await {
                    let reason =
                        format!("the server no longer knows the session, and re-initializing failed: {reason}");
                    outbound.fail(&remote.dispatch, UpstreamError::Http { name: remote.name().to_owned(), reason });
                    return;
                }
            }
            Recovery::Drop => {
                tracing::debug!(server = %remote.name(), "dropped a notification or response for an expired upstream session");
                return;
            }
            Recovery::Fail => {
                let reason = error.describe(limit);
                let error = match error {
                    PostError::Broken(_) => UpstreamError::Lost { name: remote.name().to_owned(), reason },
                    PostError::TooLarge(bytes) => {
                        UpstreamError::TooLarge { name: remote.name().to_owned(), bytes, limit }
                    }
                    _ => UpstreamError::Http { name: remote.name().to_owned(), reason },
                };
                outbound.fail(&remote.dispatch, error);
                return;
            }
        }
    }
}

/// The headers that mirror a modern message: the standard ones and the
/// `Mcp-Param-*` its tool's schema asks for; and, in either era, the
/// trace context of its `_meta`. Notes a modern `tools/list`, whose
/// answer tells which tools ask. Made once per message, whatever the
/// number of attempts.
fn mirrored(remote: &Remote, outbound: &Outbound) -> Result<Vec<(HeaderName, HeaderValue)>, String> {
    let invalid = |name: &str| format!("a mirrored header is not a valid header: {name}");
    let mut headers = Vec::with_capacity(outbound.mirrored.len());
    for (name, value) in &outbound.mirrored {
        let value = HeaderValue::from_str(value).map_err(|_| invalid(name))?;
        // The standard names are constants: nothing copied per message.
        headers.push((HeaderName::from_static(name), value));
    }
    if !headers.is_empty() {
        if outbound.method.as_deref() == Some("tools/list")
            && let Some(id) = &outbound.request
        {
            lock(&remote.listing).insert(id.clone());
        }
        if let Some((tool, arguments)) = &outbound.call
            && let Some(schema) = lock(&remote.schemas).get(tool)
        {
            for (name, value) in crate::mirror::param_headers(schema, arguments.as_deref()) {
                let value = crate::mirror::header_value(&value);
                match (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(&value)) {
                    (Ok(name), Ok(value)) => headers.push((name, value)),
                    _ => return Err(invalid(&name)),
                }
            }
        }
    }
    // The trace context goes in headers too; one that is no valid header
    // value is not a trace context, and stays in `_meta` only.
    for (name, value) in &outbound.trace {
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.push((HeaderName::from_static(name), value));
        }
    }
    Ok(headers)
}

/// Notes the tools of a `tools/list` answer that ask for headers.
pub(crate) fn learn_schemas(remote: &Remote, frame: &Frame) {
    let listed = frame.id().is_some_and(|id| lock(&remote.listing).remove(id));
    if let (true, Some(result)) = (listed, frame.payload()) {
        let mut schemas = lock(&remote.schemas);
        for (name, schema) in crate::mirror::annotated_tools(result) {
            schemas.insert(name, schema);
        }
    }
}

/// Posts the client's `initialize` (request `id`), opening the session:
/// its id and protocol version are recorded before the result is
/// delivered, so the handshake's next message already carries them. If
/// this fails, the link fails (the server could not be started).
async fn initialize(remote: &Remote, text: String, id: &str) {
    let _ = remote.init.set(text.clone());
    let none = Snapshot::default();
    let exchange = Exchange { body: Bytes::from(text), expect: Some(id), capture: true, session: &none, mirrored: &[] };
    match super::exchange::run(remote, exchange).await {
        Ok(Reply { session, captured: Some(frame) }) => {
            remote.session.begin(Snapshot::new(session, protocol_version(&frame).as_deref(), 0));
            remote.dispatch.frame(frame);
        }
        Ok(Reply { captured: None, .. }) => remote.fail("it did not answer initialize".into()),
        Err(error) => remote.fail(error.describe(remote.dispatch.limit())),
    }
}

/// The `protocolVersion` of an `initialize` result.
pub(crate) fn protocol_version(frame: &Frame) -> Option<String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Result {
        protocol_version: String,
    }
    if frame.kind() != Kind::Response {
        return None;
    }
    serde_json::from_str::<Result>(frame.payload()?).ok().map(|result| result.protocol_version)
}

#[cfg(test)]
mod tests {
    use warden_jsonrpc::Frame;

    use super::{PostError, Recovery, protocol_version, recovery};

    #[test]
    fn an_expired_session_is_renewed_once_for_requests_only() {
        assert_eq!(recovery(&PostError::Expired, true, false), Recovery::Renew);
        assert_eq!(recovery(&PostError::Expired, true, true), Recovery::Fail);
        assert_eq!(recovery(&PostError::Expired, false, false), Recovery::Drop);
        assert_eq!(recovery(&PostError::Status("500".into()), true, false), Recovery::Fail);
        assert_eq!(recovery(&PostError::Connect("refused".into()), false, false), Recovery::Fail);
    }

    #[test]
    fn reads_the_negotiated_version() {
        let ok =
            Frame::parse(r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{}}}"#);
        assert_eq!(protocol_version(&ok.unwrap()).as_deref(), Some("2025-06-18"));
        let refused = Frame::parse(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no"}}"#);
        assert_eq!(protocol_version(&refused.unwrap()), None);
    }
}
