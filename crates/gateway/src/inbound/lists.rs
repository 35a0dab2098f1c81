//! Requests answered from every upstream at once: the four lists and
//! `logging/setLevel`.

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use tokio::task::JoinSet;
use warden_jsonrpc::{ErrorCode, Frame, Kind, Method, result_response};

use super::named::await_unloaded;
use crate::catalog::ItemKind;
use crate::parts::{SessionParts, level_of};
use crate::surfaces::fetch_all;
use crate::surfaces::store;
use warden_sync::lock;

/// How long a client's list waits for an upstream's fresh answer before the
/// last known one is used.
const REFRESH_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Deserialize)]
struct ListParams {
    #[serde(default)]
    cursor: Option<String>,
}

/// A list: every ready upstream is asked afresh (all pages), the results
/// are merged under client-facing names and filtered by the view. The
/// whole list is returned in one page.
pub(super) async fn list(session: &Arc<SessionParts>, frame: &Frame, method: &Method) {
    let kind = match method {
        Method::ToolsList => ItemKind::Tool,
        Method::PromptsList => ItemKind::Prompt,
        Method::ResourcesList => ItemKind::Resource,
        _ => ItemKind::Template,
    };
    let cursor =
        frame.params().and_then(|params| serde_json::from_str::<ListParams>(params).ok()).and_then(|p| p.cursor);
    if let Some(cursor) = cursor {
        let message = format!("unknown cursor {cursor:?}: Warden returns complete lists, without pages");
        return session.link.fail(frame, ErrorCode::InvalidParams, &message);
    }
    // Servers still starting are waited for (bounded), so that a client
    // that lists once, right after initialize, sees every ready server.
    let _ = tokio::time::timeout(session.surface.list_wait(), await_unloaded(session)).await;
    let mut refreshes = JoinSet::new();
    for (index, upstream) in session.live_upstreams() {
        let Some(connection) = upstream.connection() else { continue };
        if !connection.handshake().has(kind.capability()) {
            continue;
        }
        let session = session.clone();
        refreshes.spawn(async move {
            match tokio::time::timeout(REFRESH_TIMEOUT, fetch_all(&connection, kind)).await {
                Ok(Ok(items)) => {
                    store(&session, index, &connection, kind, items).await;
                }
                Ok(Err(why)) => tracing::warn!(
                    server = connection.name(),
                    "{} failed, using the last known list: {why}",
                    kind.list_method()
                ),
                Err(_) => tracing::warn!(
                    server = connection.name(),
                    "{} timed out, using the last known list",
                    kind.list_method()
                ),
            }
        });
    }
    while refreshes.join_next().await.is_some() {}
    let hooks = session.surface.hooks.load_full();
    let result = session.surface.read_catalog().list(kind, &|server, key| hooks.view.shows(server, kind, key));
    session.link.respond(frame, result_response(frame.id().unwrap_or("null"), &result));
}

/// `logging/setLevel` goes to every ready upstream that logs, and is
/// replayed to upstreams that start later.
pub(super) async fn set_level(session: &SessionParts, frame: &Frame) {
    let params = frame.params().unwrap_or("{}").to_owned();
    *lock(&session.replay.log_level) = Some(params.clone());
    let mut answers = JoinSet::new();
    for (_, upstream) in session.live_upstreams() {
        let Some(connection) = upstream.connection() else { continue };
        // A shared server logs at the most verbose level any of its
        // sessions asked for; each session filters its own.
        let params = match session.shared_log_level(upstream.name()) {
            Some(shared) => format!(r#"{{"level":{shared}}}"#),
            None => params.clone(),
        };
        if connection.is_modern() {
            // 2026-07-28 takes the level on each request instead.
            if let Some(level) = level_of(&params) {
                connection.set_log_level(level);
            }
        } else if connection.handshake().has("logging") {
            answers.spawn(async move {
                if let Ok(answer) = connection.request("logging/setLevel", Some(&params)).await
                    && answer.kind() == Kind::ErrorResponse
                {
                    tracing::warn!(
                        server = connection.name(),
                        "logging/setLevel refused: {}",
                        answer.payload().unwrap_or("")
                    );
                }
            });
        }
    }
    while answers.join_next().await.is_some() {}
    session.link.respond(frame, result_response(frame.id().unwrap_or("null"), "{}"));
}
