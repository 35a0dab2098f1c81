//! Which sessions a shared upstream's message is for, from what the
//! protocol tells and nothing weaker: the call on whose own answer stream it
//! came (a Streamable HTTP server's), a progress token or server request
//! Warden issued to one session, a subscription, a task. A session merely
//! having a call in flight on the server proves nothing: another tenant's
//! call may be the one asking.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use warden_jsonrpc::{Frame, Kind, Method};
use warden_upstream::Connection;

use super::Member;

/// A session using a shared upstream, with the index it gave the upstream.
pub(super) type User = (Arc<dyn Member>, usize);

/// Where a shared upstream's message goes.
pub(super) enum Owners<'a> {
    /// To these sessions.
    Sessions(Vec<&'a User>),
    /// To nobody: nothing tells whose it is (why, for the log).
    Unknown(&'static str),
}

#[derive(Deserialize)]
struct RoutingParams<'a> {
    #[serde(borrow, default, rename = "progressToken")]
    progress_token: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "requestId")]
    request_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    uri: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "taskId")]
    task_id: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<RelatedMeta<'a>>,
}

#[derive(Deserialize)]
struct RelatedMeta<'a> {
    #[serde(borrow, default, rename = "io.modelcontextprotocol/related-task")]
    related_task: Option<RelatedTask<'a>>,
}

#[derive(Deserialize)]
struct RelatedTask<'a> {
    #[serde(borrow, rename = "taskId")]
    task_id: &'a RawValue,
}

/// The sessions among `users` that `frame`, from shared upstream
/// `connection`, belongs to. `related` is Warden's request on whose answer
/// stream it came, if it did.
pub(super) fn owners<'a>(
    users: &'a [User],
    connection: &Arc<Connection>,
    frame: &Frame,
    related: Option<u64>,
) -> Owners<'a> {
    let params = frame.named_params().and_then(|params| serde_json::from_str::<RoutingParams>(params).ok());
    let holding = |holds: &dyn Fn(&dyn Member, usize) -> bool, none: &'static str| {
        let found: Vec<&User> = users.iter().filter(|(session, index)| holds(session.as_ref(), *index)).collect();
        if found.is_empty() { Owners::Unknown(none) } else { Owners::Sessions(found) }
    };
    match (frame.kind(), frame.method()) {
        // Everyone's lists changed; each session reloads its own view.
        (_, Some(Method::ToolsListChanged | Method::PromptsListChanged | Method::ResourcesListChanged)) => {
            Owners::Sessions(users.iter().collect())
        }
        (Kind::Notification, Some(Method::Progress)) => {
            let Some(token) = params.as_ref().and_then(|params| params.progress_token) else {
                return Owners::Unknown("the progress has no token");
            };
            // Warden's tokens are unique across sessions: one holds it.
            holding(
                &|session, _| session.holds_token(token.get()),
                "its progress token is not one Warden issued for a call in flight",
            )
        }
        (Kind::Notification, Some(Method::Cancelled)) => {
            let Some(id) = params.as_ref().and_then(|params| params.request_id) else {
                return Owners::Unknown("the cancellation names no request");
            };
            holding(
                &|session, _| session.holds_server_request(connection, id.get()),
                "it cancels no request of the server's that a session holds",
            )
        }
        (Kind::Notification, Some(Method::ResourceUpdated)) => {
            let Some(uri) = params.as_ref().and_then(|params| text(params.uri)) else {
                return Owners::Unknown("the update names no resource");
            };
            holding(&|session, index| session.subscribed(index, &uri), "no session subscribed to that resource")
        }
        // The acknowledgement of a session's own listen request: each ignores it.
        (Kind::Notification, Some(Method::Other(name))) if &**name == "notifications/subscriptions/acknowledged" => {
            Owners::Sessions(users.iter().collect())
        }
        _ => {
            if let Some(related) = related {
                return holding(
                    &|session, _| session.has_in_flight(connection, related),
                    "it came on the stream of a call no session has in flight any more",
                );
            }
            let task = params.as_ref().and_then(|params| {
                let related = params.meta.as_ref().and_then(|meta| meta.related_task.as_ref());
                text(related.map(|task| task.task_id))
                    .or_else(|| (frame.method() == Some(&Method::TaskStatus)).then(|| text(params.task_id)).flatten())
            });
            if let Some(task) = task {
                return holding(
                    &|session, index| session.created_task(index, &task),
                    "it names a task no session created",
                );
            }
            Owners::Unknown(
                "nothing in it tells whose it is: it did not come on the answer stream of a call (a shared \
                 server over stdio or the HTTP+SSE transport has none) and names no request, progress token \
                 or task of one session",
            )
        }
    }
}

/// A JSON string's text.
fn text(raw: Option<&RawValue>) -> Option<String> {
    serde_json::from_str(raw?.get()).ok()
}
