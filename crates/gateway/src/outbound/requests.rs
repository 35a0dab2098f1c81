//! Requests from upstreams to the client: sampling, elicitation, roots, and
//! anything else, each under a client-facing id.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use warden_jsonrpc::{Frame, Splice};
use warden_upstream::Connection;

use crate::parts::SessionParts;
use crate::parts::{ServerRequest, TokenTarget, progress_token};
use warden_sync::lock;

#[derive(Deserialize)]
struct WithMeta<'a> {
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<&'a RawValue>,
}

/// Forwards an upstream's request to the client. Ids from different
/// upstreams may collide, so the client sees Warden's own; the answer is
/// routed back in the inbound `client_response`.
pub(super) fn upstream_request(
    session: &SessionParts,
    index: usize,
    connection: &Arc<Connection>,
    frame: Frame,
    related: Option<u64>,
) {
    let client_id = session.next();
    let mut splice = Splice::new();
    if let Some(span) = frame.id_span() {
        splice.replace(span, client_id.to_string());
    }
    let token = progress_span(&frame).map(|span| {
        let issued = format!("\"w{}\"", session.next());
        let original = frame.text()[span.clone()].to_owned();
        lock(&session.maps.tokens).insert(issued.clone(), TokenTarget::Upstream(connection.clone(), original));
        splice.replace(span, issued.clone());
        issued
    });
    let during = session.maps.request_of(connection, related);
    let request = ServerRequest {
        upstream: index,
        connection: connection.clone(),
        upstream_id: frame.id().unwrap_or("null").to_owned(),
        token,
        during: during.clone(),
    };
    lock(&session.maps.server_requests).insert(client_id, request);
    session.link.send_related(splice.apply(frame.text()), during.as_deref());
}

fn progress_span(frame: &Frame) -> Option<std::ops::Range<usize>> {
    let with_meta: WithMeta = serde_json::from_str(frame.named_params()?).ok()?;
    progress_token(frame, || with_meta.meta.map(RawValue::get))
}
