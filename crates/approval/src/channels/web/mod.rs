//! The approval page: a small site on its own loopback port.
//!
//! * Login with the token Warden printed at start (or `approval.token`):
//!   an `HttpOnly; SameSite=Strict` session cookie.
//! * `GET` only reads: the page, `/api/approvals`, `/api/events` (SSE).
//! * `POST /api/approvals/<id>/approve|deny` decides, and needs the session
//!   cookie, the session's CSRF token (`X-CSRF-Token`) and an `Origin` that
//!   is this page; or, for scripts and remote CLIs, `Authorization: Bearer
//!   <token>` (not ambient, so no CSRF).
//! * A decision must carry `digest`: the SHA-256 of the arguments the page
//!   (or CLI) showed. One that does not match the approval's is refused, so
//!   a decision never applies to a call other than the one displayed.
//! * Every request's `Host` must name this page (DNS rebinding).
//! * Secrets are compared in constant time; wrong login tokens from one
//!   address are throttled with a growing backoff.
//! * `/dashboard` shows what Warden does (servers, tools, security, the
//!   audit trail), under the same login and checks; see [`dashboard`].
//! * Every answer carries `X-Content-Type-Options: nosniff` and
//!   `Referrer-Policy: same-origin`: no URL of the page ever leaves it as a
//!   referrer. (`no-referrer` would make browsers send `Origin: null` on
//!   the page's own POSTs, which the Origin check refuses.)

mod dashboard;
mod guard;
mod links;
mod peers;

pub use guard::token_bits;
pub use links::{LINK_LIFETIME, LoginLinks};
pub use peers::Peers;

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::ConnectInfo;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::Stream;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;

use super::{Verdict, apply};
use crate::board::Board;
use crate::record::millis;
use crate::store::Approvals;
use crate::whitelist::Whitelist;
use guard::Guard;

const PAGE: &str = include_str!("assets/page.html");
const LOGIN: &str = include_str!("assets/login.html");
const CSS: &str = include_str!("assets/page.css");
const JS: &str = include_str!("assets/page.js");

/// How the page is reached and who may use it.
#[derive(Debug, Clone)]
pub struct WebSettings {
    /// The unnamed login token, if any.
    pub token: Option<String>,
    /// Named login tokens: decisions are recorded under the name.
    pub tokens: Vec<(String, String)>,
    /// `Host` values accepted besides loopback names and the bound address.
    pub allowed_hosts: Vec<String>,
    /// Other Wardens on the same config, whose calls the page shows too.
    pub peers: Option<Peers>,
    /// What the dashboard shows.
    pub board: Arc<Board>,
}

/// The shared state of the page's handlers.
struct Web {
    store: Arc<dyn Approvals>,
    whitelist: Arc<Whitelist>,
    guard: Guard,
    links: Arc<LoginLinks>,
    peers: Option<Peers>,
    board: Arc<Board>,
}

/// Serves the page on `listener` until the task is dropped.
pub fn serve(
    listener: tokio::net::TcpListener,
    store: Arc<dyn Approvals>,
    whitelist: Arc<Whitelist>,
    settings: WebSettings,
    links: Arc<LoginLinks>,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let bound = listener.local_addr()?;
    links.set_page(format!("http://{bound}/"));
    let web = Arc::new(Web {
        store,
        whitelist,
        links,
        peers: settings.peers,
        board: settings.board,
        guard: Guard {
            token: settings.token,
            tokens: settings.tokens,
            allowed_hosts: settings.allowed_hosts,
            bound,
            sessions: Mutex::new(HashMap::new()),
            throttle: guard::Throttle::default(),
        },
    });
    let router = Router::new()
        .route("/", get(index))
        .route("/page.css", get(|| async { ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], CSS) }))
        .route("/page.js", get(|| async { ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], JS) }))
        .route("/login", post(login))
        .route("/login/{code}", get(login_link))
        .route("/logout", post(logout))
        .route("/api/approvals", get(list))
        .route("/api/events", get(events))
        .route("/api/approvals/{id}/{action}", post(decide))
        .route("/api/grants/{id}/revoke", post(revoke))
        .merge(dashboard::routes())
        .with_state(web)
        .layer(axum::middleware::map_response(hardened));
    let task = tokio::spawn(async move {
        let service = router.into_make_service_with_connect_info::<SocketAddr>();
        if let Err(err) = axum::serve(listener, service).await {
            tracing::error!("approval page stopped: {err}");
        }
    });
    Ok((bound, task))
}

/// Headers every answer carries: no content sniffing, no referrer to any
/// other site (the page's URLs name approvals).
async fn hardened(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    response
}

fn html(body: String) -> Response {
    let mut response = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'self'; frame-ancestors 'none'; form-action 'self'"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

fn refuse(status: StatusCode, message: &str) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], json!({"ok": false, "error": message}).to_string())
        .into_response()
}

async fn index(State(web): State<Arc<Web>>, headers: HeaderMap) -> Response {
    if let Err(refusal) = web.guard.host(&headers) {
        return refusal.into_response();
    }
    match web.guard.session(&headers) {
        Some((_, csrf)) => html(PAGE.replace("{{CSRF}}", &csrf)),
        None => html(LOGIN.replace("<!--ERROR-->", "")),
    }
}

#[derive(Deserialize)]
struct LoginForm {
    token: String,
}

async fn login(
    State(web): State<Arc<Web>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Err(refusal) = web.guard.host(&headers).and_then(|()| web.guard.origin(&headers)) {
        return refusal.into_response();
    }
    if let Some(wait) = web.guard.throttle.waiting(peer.ip()) {
        let page = LOGIN.replace(
            "<!--ERROR-->",
            &format!(
                r#"<p class="error" role="alert">Too many wrong tokens: try again in {} s.</p>"#,
                wait.as_secs() + 1
            ),
        );
        let mut response = (StatusCode::TOO_MANY_REQUESTS, html(page)).into_response();
        if let Ok(value) = HeaderValue::from_str(&(wait.as_secs() + 1).to_string()) {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        return response;
    }
    let token = serde_urlencoded::from_bytes::<LoginForm>(&body).map(|form| form.token).unwrap_or_default();
    let Some(cookie) = web.guard.login(&token, peer.ip()) else {
        let page = LOGIN.replace("<!--ERROR-->", r#"<p class="error" role="alert">That token is not valid.</p>"#);
        return (StatusCode::UNAUTHORIZED, html(page)).into_response();
    };
    let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// A one-time link from `warden approvals open`: used once, within a
/// minute, it logs the browser in.
async fn login_link(State(web): State<Arc<Web>>, Path(code): Path<String>, headers: HeaderMap) -> Response {
    if let Err(refusal) = web.guard.host(&headers) {
        return refusal.into_response();
    }
    if !web.links.redeem(&code) {
        let page = LOGIN.replace(
            "<!--ERROR-->",
            r#"<p class="error" role="alert">That link was used already or is too old: run <code>warden approvals open</code> again.</p>"#,
        );
        return (StatusCode::FORBIDDEN, html(page)).into_response();
    }
    let cookie = web.guard.open_session(None);
    let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

#[derive(Deserialize)]
struct LogoutForm {
    csrf: String,
}

async fn logout(State(web): State<Arc<Web>>, headers: HeaderMap, body: Bytes) -> Response {
    let csrf = serde_urlencoded::from_bytes::<LogoutForm>(&body).map(|form| form.csrf).unwrap_or_default();
    if let Err(refusal) = web.guard.post(&headers, Some(&csrf)) {
        return refusal.into_response();
    }
    web.guard.logout(&headers);
    let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
    response.headers_mut().insert(header::SET_COOKIE, HeaderValue::from_static(guard::EXPIRED_COOKIE));
    response
}

async fn list(State(web): State<Arc<Web>>, headers: HeaderMap) -> Response {
    if let Err(refusal) = web.guard.read(&headers) {
        return refusal.into_response();
    }
    let grants: Vec<serde_json::Value> = web
        .whitelist
        .list()
        .into_iter()
        .map(|grant| {
            let scope = grant.scope();
            let mut value = serde_json::to_value(grant).unwrap_or_default();
            value["scope"] = json!(scope);
            value
        })
        .collect();
    // Each pending approval says, in words, what approving it for the
    // session would also approve, and which arguments may be widened.
    let pending: Vec<serde_json::Value> = web
        .store
        .pending()
        .into_iter()
        .map(|approval| {
            let mut value = serde_json::to_value(&approval).unwrap_or_default();
            session_terms(&approval, &mut value);
            value
        })
        .collect();
    let mut pending = pending;
    let mut recent: Vec<serde_json::Value> =
        web.store.recent().into_iter().map(|a| serde_json::to_value(a).unwrap_or_default()).collect();
    // Other Wardens' calls, on the same page.
    if let Some(peers) = &web.peers {
        for (_, answer) in peers.lists().await {
            for item in answer["pending"].as_array().into_iter().flatten() {
                let Ok(approval) = serde_json::from_value::<crate::Approval>(item.clone()) else { continue };
                let mut value = item.clone();
                session_terms(&approval, &mut value);
                pending.push(value);
            }
            recent.extend(answer["recent"].as_array().into_iter().flatten().cloned());
        }
    }
    let body = json!({
        "pending": pending,
        "recent": recent,
        "grants": grants,
        "nowMs": millis(std::time::SystemTime::now()),
    });
    ([(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-store")], body.to_string())
        .into_response()
}

async fn events(State(web): State<Arc<Web>>, headers: HeaderMap) -> Response {
    if let Err(refusal) = web.guard.read(&headers) {
        return refusal.into_response();
    }
    Sse::new(changes(web.store.subscribe())).keep_alive(KeepAlive::default()).into_response()
}

/// Each change as an SSE event carrying the approval.
fn changes(
    receiver: tokio::sync::broadcast::Receiver<crate::store::Change>,
) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    futures_util::stream::unfold(receiver, |mut receiver| async move {
        loop {
            match receiver.recv().await {
                Ok(change) => {
                    let data = serde_json::to_string(&change.approval).unwrap_or_default();
                    return Some((Ok(SseEvent::default().data(data)), receiver));
                }
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return None,
            }
        }
    })
}

#[derive(Deserialize, Default)]
struct DecideBody {
    #[serde(default)]
    reason: Option<String>,
    /// The SHA-256 of the arguments shown (the approval's `argsDigest`).
    #[serde(default)]
    digest: Option<String>,
    /// With `approve-session`: string arguments widened to globs, by name.
    #[serde(default)]
    patterns: std::collections::BTreeMap<String, String>,
}

async fn decide(
    State(web): State<Arc<Web>>,
    Path((id, action)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let who = match web.guard.post(&headers, None) {
        Ok(who) => who,
        Err(refusal) => return refusal.into_response(),
    };
    let (approve, remember) = match action.as_str() {
        "approve" => (true, false),
        "approve-session" => (true, true),
        "deny" => (false, false),
        _ => return refuse(StatusCode::NOT_FOUND, "the action is approve, approve-session or deny"),
    };
    let body = if body.is_empty() {
        DecideBody::default()
    } else {
        match serde_json::from_slice::<Option<DecideBody>>(&body) {
            Ok(body) => body.unwrap_or_default(),
            Err(err) => {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    &format!("the body is not {{\"digest\": ..., \"reason\": ...}}: {err}"),
                );
            }
        }
    };
    // The decision is for the arguments that were shown, or for nothing.
    let Some(digest) = body.digest else {
        return refuse(StatusCode::BAD_REQUEST, "a decision must carry the digest of the arguments shown (\"digest\")");
    };
    match web.store.get(&id) {
        Ok(approval) if crate::channels::same_digest(&approval.args_digest, &digest) => {}
        Ok(_) => {
            return refuse(
                StatusCode::CONFLICT,
                "the digest does not match this approval's arguments: nothing was decided",
            );
        }
        Err(crate::DecideError::Unknown(id)) => {
            let verdict = Verdict { id, approve, reason: body.reason, remember, patterns: body.patterns };
            return decide_on_peer(&web, &verdict, &digest, &who.name()).await;
        }
        Err(err) => return refuse(StatusCode::CONFLICT, &err.to_string()),
    }
    let by = who.name();
    let verdict = Verdict { id, approve, reason: body.reason, remember, patterns: body.patterns };
    match apply(web.store.as_ref(), &web.whitelist, &verdict, "web", &by) {
        Ok(approval) => {
            ([(header::CONTENT_TYPE, "application/json")], json!({"ok": true, "approval": approval}).to_string())
                .into_response()
        }
        Err(crate::DecideError::Unknown(id)) => refuse(StatusCode::NOT_FOUND, &format!("no approval {id}")),
        Err(err @ crate::DecideError::Pattern(_)) => refuse(StatusCode::BAD_REQUEST, &err.to_string()),
        Err(err) => refuse(StatusCode::CONFLICT, &err.to_string()),
    }
}

/// Adds to an approval's JSON what "approve for this session" would grant:
/// `sessionScope`, in words, and `sessionEditable`, the string arguments
/// the approver may widen to a glob, each with the glob of its exact value.
fn session_terms(approval: &crate::Approval, value: &mut serde_json::Value) {
    value["sessionScope"] = json!(Whitelist::prepare(approval, "").scope());
    let editable: Vec<serde_json::Value> = Whitelist::editable(approval)
        .into_iter()
        .map(|(name, pattern)| json!({"name": name, "pattern": pattern}))
        .collect();
    value["sessionEditable"] = json!(editable);
}

/// Passes a decision on to the other Warden that holds approval `id`,
/// after the same digest check.
async fn decide_on_peer(web: &Web, verdict: &Verdict, digest: &str, by: &str) -> Response {
    let id = verdict.id.as_str();
    let Some(peers) = &web.peers else { return refuse(StatusCode::NOT_FOUND, &format!("no approval {id}")) };
    for (path, answer) in peers.lists().await {
        let held = answer["pending"].as_array().into_iter().flatten().find(|item| item["id"] == id).cloned();
        let Some(held) = held else { continue };
        if !crate::channels::same_digest(held["argsDigest"].as_str().unwrap_or_default(), digest) {
            return refuse(
                StatusCode::CONFLICT,
                "the digest does not match this approval's arguments: nothing was decided",
            );
        }
        let by = Some(by.to_owned());
        let request = if verdict.approve {
            let (remember, patterns) = (verdict.remember, verdict.patterns.clone());
            crate::channels::socket::Request::Approve { id: id.to_owned(), by, remember, patterns }
        } else {
            crate::channels::socket::Request::Deny { id: id.to_owned(), reason: verdict.reason.clone(), by }
        };
        return match peers::ask(&path, &request).await {
            Ok(answer) => ([(header::CONTENT_TYPE, "application/json")], answer.to_string()).into_response(),
            Err(err) => refuse(StatusCode::CONFLICT, &err),
        };
    }
    refuse(StatusCode::NOT_FOUND, &format!("no approval {id}"))
}

async fn revoke(State(web): State<Arc<Web>>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let who = match web.guard.post(&headers, None) {
        Ok(who) => who,
        Err(refusal) => return refusal.into_response(),
    };
    match web.whitelist.revoke(&id, &who.name()) {
        Some(grant) => ([(header::CONTENT_TYPE, "application/json")], json!({"ok": true, "grant": grant}).to_string())
            .into_response(),
        None => refuse(StatusCode::NOT_FOUND, &format!("no whitelist entry {id}")),
    }
}
