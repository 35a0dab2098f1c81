//! Notifications from upstreams to the client.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use warden_jsonrpc::{Frame, Method, Splice};
use warden_upstream::Connection;

use crate::catalog::ItemKind;
use crate::parts::SessionParts;
use crate::parts::TokenTarget;
use crate::pool::wants_log;
use crate::surfaces::reload_kinds;
use warden_sync::lock;

#[derive(Deserialize)]
struct ProgressParams<'a> {
    #[serde(borrow, rename = "progressToken")]
    progress_token: &'a RawValue,
}

#[derive(Deserialize)]
struct CancelledParams<'a> {
    #[serde(borrow, rename = "requestId")]
    request_id: &'a RawValue,
}

/// Maps what must be mapped and passes the rest through unchanged.
pub(super) fn upstream_notification(
    session: &Arc<SessionParts>,
    index: usize,
    connection: &Arc<Connection>,
    frame: Frame,
    related: Option<u64>,
) {
    match frame.method() {
        Some(Method::Progress) => upstream_progress(session, frame),
        Some(Method::Cancelled) => upstream_cancelled(session, connection, frame),
        Some(Method::ToolsListChanged) => refresh(session, index, connection, &[ItemKind::Tool]),
        Some(Method::PromptsListChanged) => refresh(session, index, connection, &[ItemKind::Prompt]),
        Some(Method::ResourcesListChanged) => {
            refresh(session, index, connection, &[ItemKind::Resource, ItemKind::Template])
        }
        // The answer to Warden's own listen request, not the client's.
        Some(Method::Other(name)) if &**name == "notifications/subscriptions/acknowledged" => {}
        // A shared server logs at the most verbose level any session
        // asked for: this session gets what it asked for.
        Some(Method::Other(name))
            if &**name == "notifications/message"
                && session.upstreams.is_shared(connection.name())
                && !wants_log(session.replay.level().as_deref(), frame.named_params()) => {}
        Some(Method::TaskStatus) => {
            session.replay.record_task_status(index, frame.named_params());
            session.link.send_related(frame.into_text(), session.maps.request_of(connection, related).as_deref())
        }
        _ => session.link.send_related(frame.into_text(), session.maps.request_of(connection, related).as_deref()),
    }
}

/// Progress goes to the client under the token the client chose. Progress
/// for a token Warden never issued (or that is finished) is dropped, so an
/// upstream cannot speak for another's request.
fn upstream_progress(session: &SessionParts, frame: Frame) {
    let Some(params) = frame.named_params().and_then(|p| serde_json::from_str::<ProgressParams>(p).ok()) else {
        return;
    };
    let target = lock(&session.maps.tokens).get(params.progress_token.get()).cloned();
    let Some(TokenTarget::Client { token: original, request }) = target else {
        tracing::debug!(session = %session.id, token = params.progress_token.get(), "dropped progress for an unknown token");
        return;
    };
    let mut splice = Splice::new();
    splice.replace(frame.span_of(params.progress_token.get()), original);
    session.link.send_related(splice.apply(frame.text()), Some(&request));
}

/// An upstream gives up on a request it made to the client.
fn upstream_cancelled(session: &SessionParts, connection: &Arc<Connection>, frame: Frame) {
    let Some(params) = frame.named_params().and_then(|p| serde_json::from_str::<CancelledParams>(p).ok()) else {
        return;
    };
    let client_id = {
        let mut requests = lock(&session.maps.server_requests);
        let found = requests
            .iter()
            .find(|(_, request)| {
                Arc::ptr_eq(&request.connection, connection) && request.upstream_id == params.request_id.get()
            })
            .map(|(id, _)| *id);
        found.inspect(|id| {
            requests.remove(id);
        })
    };
    let Some(client_id) = client_id else { return };
    let mut splice = Splice::new();
    splice.replace(frame.span_of(params.request_id.get()), client_id.to_string());
    session.link.send_related(splice.apply(frame.text()), session.maps.sole_request_on(connection).as_deref());
}

/// An upstream's list changed: reload it so routing stays right, then
/// tell the client.
fn refresh(session: &Arc<SessionParts>, index: usize, connection: &Arc<Connection>, kinds: &'static [ItemKind]) {
    let session = session.clone();
    let connection = connection.clone();
    tokio::spawn(async move {
        reload_kinds(&session, index, &connection, kinds).await;
        session.link.list_changed(kinds);
    });
}
