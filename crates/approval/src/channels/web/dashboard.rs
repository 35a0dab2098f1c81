//! The dashboard beside the approval page, under the same login and rules:
//! `GET /dashboard` (the page), `/api/status` (its data, also live as SSE
//! at `/api/status/events`), `/api/audit` (the audit trail, searched) and
//! `/api/audit/verify` (the hash chain, checked). It only reads: what it
//! links to (approving, revoking) happens on the approval page.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::Stream;
use serde_json::{Value, json};

use super::{Web, html, refuse};

const PAGE: &str = include_str!("assets/dashboard.html");
const JS: &str = include_str!("assets/dashboard.js");

/// How often the live page is sent the status.
const EVERY: Duration = Duration::from_secs(2);

/// The dashboard's routes.
pub(super) fn routes() -> Router<Arc<Web>> {
    Router::new()
        .route("/dashboard", get(page))
        .route("/dashboard.js", get(|| async { ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], JS) }))
        .route("/api/status", get(status))
        .route("/api/status/events", get(events))
        .route("/api/audit", get(audit))
        .route("/api/audit/verify", get(verify))
}

async fn page(State(web): State<Arc<Web>>, headers: HeaderMap) -> Response {
    if let Err(refusal) = web.guard.host(&headers) {
        return refusal.into_response();
    }
    match web.guard.session(&headers) {
        Some((_, csrf)) => html(PAGE.replace("{{CSRF}}", &csrf)),
        None => html(super::LOGIN.replace("<!--ERROR-->", "")),
    }
}

/// The status, with the approvals waiting here.
fn snapshot(web: &Web) -> Option<Value> {
    let mut status = web.board.get()?.status();
    status["approvalsPending"] = json!(web.store.pending().len());
    Some(status)
}

fn json_response(body: &Value) -> Response {
    ([(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-store")], body.to_string())
        .into_response()
}

fn starting() -> Response {
    refuse(StatusCode::SERVICE_UNAVAILABLE, "this Warden is still starting: ask again in a moment")
}

async fn status(State(web): State<Arc<Web>>, headers: HeaderMap) -> Response {
    if let Err(refusal) = web.guard.read(&headers) {
        return refusal.into_response();
    }
    match snapshot(&web) {
        Some(status) => json_response(&status),
        None => starting(),
    }
}

async fn events(State(web): State<Arc<Web>>, headers: HeaderMap) -> Response {
    if let Err(refusal) = web.guard.read(&headers) {
        return refusal.into_response();
    }
    Sse::new(ticks(web)).keep_alive(KeepAlive::default()).into_response()
}

/// The status now, then every [`EVERY`]; ends when the client leaves.
fn ticks(web: Arc<Web>) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    futures_util::stream::unfold((web, true), |(web, first)| async move {
        if !first {
            tokio::time::sleep(EVERY).await;
        }
        let data = snapshot(&web).map_or_else(|| "{}".to_owned(), |status| status.to_string());
        Some((Ok(SseEvent::default().event("status").data(data)), (web, false)))
    })
}

async fn audit(State(web): State<Arc<Web>>, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    if let Err(refusal) = web.guard.read(&headers) {
        return refusal.into_response();
    }
    let Some(dashboard) = web.board.get() else { return starting() };
    let filters: Vec<(String, String)> =
        query.as_deref().map(|query| serde_urlencoded::from_str(query).unwrap_or_default()).unwrap_or_default();
    // Reading a large log is file work: off the page's threads.
    match tokio::task::spawn_blocking(move || dashboard.audit(&filters)).await {
        Ok(Ok(records)) => json_response(&records),
        Ok(Err(why)) => refuse(StatusCode::BAD_REQUEST, &why),
        Err(_) => refuse(StatusCode::INTERNAL_SERVER_ERROR, "the audit search failed"),
    }
}

async fn verify(State(web): State<Arc<Web>>, headers: HeaderMap) -> Response {
    if let Err(refusal) = web.guard.read(&headers) {
        return refusal.into_response();
    }
    let Some(dashboard) = web.board.get() else { return starting() };
    match tokio::task::spawn_blocking(move || dashboard.verify_audit()).await {
        Ok(answer) => json_response(&answer),
        Err(_) => refuse(StatusCode::INTERNAL_SERVER_ERROR, "the audit check failed"),
    }
}
