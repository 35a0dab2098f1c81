//! `/healthz` for load balancers and `/status` for people: each session's
//! upstreams and their state.

use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::session::UpstreamStatus;

use super::Front;
use super::reply;
use super::request_headers::RequestHeaders;

/// GET `/healthz`: the front is up. `Host` and `Origin` are checked as
/// everywhere (a DNS-rebinding page reads nothing); no token is needed, but
/// only a caller with a valid one (or any caller of a front without tokens)
/// learns the number of sessions.
pub(super) fn healthz(front: Arc<Front>, headers: HeaderMap) -> Response {
    let headers = RequestHeaders::of(&headers);
    if let Err(refusal) = front.access.check_origin_and_host(&headers) {
        return refusal.into_response();
    }
    let body = match front.access.check(&headers) {
        Ok(_) => json!({"status": "ok", "sessions": front.sessions.len()}),
        Err(_) => json!({"status": "ok"}),
    };
    reply::json(StatusCode::OK, body.to_string())
}

/// GET `/status`: every session and the state of its upstreams (with the
/// stderr tail of those that failed). Needs a token when tokens are set.
pub(super) fn status(front: Arc<Front>, headers: HeaderMap) -> Response {
    let headers = RequestHeaders::of(&headers);
    let caller = match front.access.check(&headers) {
        Ok(caller) => caller,
        Err(refusal) => return refusal.into_response(),
    };
    let sessions: Vec<_> = front
        .sessions
        .all()
        .into_iter()
        // A token holder sees their own sessions only.
        .filter(|entry| caller.name.is_none() || entry.owner == caller.name)
        .map(|entry| {
            let status = entry.session.status();
            json!({
                "id": entry.id,
                "endpoint": entry.scope.as_ref().map_or("/mcp".to_owned(), |server| format!("/mcp/{server}")),
                "transport": if entry.is_sse_transport() { "sse" } else { "streamable-http" },
                "owner": entry.owner.as_deref(),
                "profile": entry.profile,
                "protocolVersion": status.protocol_version,
                "upstreams": status.upstreams.iter().map(upstream_json).collect::<Vec<_>>(),
                "collisions": status.collisions,
            })
        })
        .collect();
    // Shared servers the caller's profile shows, with what they sent that
    // Warden kept for want of an owner.
    let view =
        front.access.profile(&caller, &headers).ok().and_then(|profile| front.hooks.hooks(profile.as_deref()).ok());
    let shared: Vec<_> = front
        .pool
        .kept()
        .into_iter()
        .filter(|(name, _, _)| view.as_ref().is_some_and(|hooks| hooks.view.shows_server(name)))
        .map(|(name, requests, notifications)| {
            json!({"name": name, "keptRequests": requests, "keptNotifications": notifications})
        })
        .collect();
    let body = json!({
        "sessions": sessions,
        "shared": shared,
        // The caller's token's shares: what it holds and may hold.
        "token": caller.name.as_deref().map(|name| json!({"name": name, "shares": front.tenants.report(name, front.connections.held_by(name))})),
        "processes": {"budget": front.budget.total(), "reserved": front.budget.in_use()},
        "connections": {
            "open": front.connections.len(),
            "max": front.connections.max_total(),
            "openFilesLimit": super::descriptors::open_files_limit(),
        },
    });
    reply::json(StatusCode::OK, body.to_string())
}

/// One upstream of a session in `/status`; `displayName` only when the
/// configuration gives one.
fn upstream_json(upstream: &UpstreamStatus) -> serde_json::Value {
    let mut entry = json!({
        "name": upstream.name,
        "state": upstream.state,
        "sandbox": upstream.sandbox,
    });
    if let Some(display_name) = &upstream.display_name {
        entry["displayName"] = json!(display_name);
    }
    entry
}
