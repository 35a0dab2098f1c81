//! Tasks (2025-11-25, experimental): a task-augmented request returns a task
//! id at once; `tasks/get`, `tasks/result` and `tasks/cancel` must then reach
//! the upstream that created it, and `tasks/list` merges every upstream's.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::task::JoinSet;
use warden_jsonrpc::{ErrorCode, Frame, Method, result_response};
use warden_upstream::Connection;

use super::dispatch::Target;
use super::dispatch::dispatch;
use crate::parts::SessionParts;
use crate::pipeline::Call;
use crate::surfaces::paginate;
use warden_sync::lock;

#[derive(Deserialize)]
struct TaskParams {
    #[serde(rename = "taskId")]
    task_id: String,
}

#[derive(Deserialize)]
struct TaskPage<'a> {
    #[serde(borrow, default)]
    tasks: Vec<&'a RawValue>,
    #[serde(default, rename = "nextCursor")]
    next_cursor: Option<String>,
}

/// `tasks/get`, `tasks/result`, `tasks/cancel`: to the task's creator.
pub(super) async fn call_task(session: &SessionParts, frame: &Frame, method: &Method) {
    let Some(params) = frame.params().and_then(|p| serde_json::from_str::<TaskParams>(p).ok()) else {
        return session.link.fail(frame, ErrorCode::InvalidParams, "params with a taskId are required");
    };
    let Some(upstream) = lock(&session.replay.tasks).get(&params.task_id).copied() else {
        return session.link.fail(frame, ErrorCode::InvalidParams, &format!("Unknown task: {}", params.task_id));
    };
    let hooks = session.surface.hooks.load_full();
    let server = session.upstreams.get(upstream);
    let call = Call { session: &session.id, server: server.name(), method, name: &params.task_id, arguments: None };
    dispatch(session, frame, &hooks, call, Target::upstream(upstream)).await;
}

/// `tasks/list`: every upstream that lists tasks, all pages, merged. A
/// shared server lists every tenant's tasks: of its list, only the tasks
/// this session created are shown (and only those can be asked about).
pub(super) async fn list_tasks(session: &SessionParts, frame: &Frame) {
    let mut lists = JoinSet::new();
    let config = session.surface.config.load_full();
    for (index, upstream) in session.live_upstreams() {
        let Some(connection) = upstream.connection() else { continue };
        if connection.handshake().flag_present("tasks", "list") {
            let shared = config.servers.get(upstream.name()).is_some_and(|server| server.share);
            lists.spawn(async move { (index, shared, all_tasks(&connection).await) });
        }
    }
    let mut merged = Vec::new();
    while let Some(joined) = lists.join_next().await {
        let Ok((index, shared, listed)) = joined else { continue };
        match listed {
            Ok(tasks) => {
                let mut owners = lock(&session.replay.tasks);
                for (id, raw) in tasks {
                    if shared {
                        if owners.get(&id) == Some(&index) {
                            merged.push(raw);
                        }
                    } else {
                        owners.insert(id, index);
                        merged.push(raw);
                    }
                }
            }
            Err(why) => tracing::warn!(server = session.upstreams.get(index).name(), "tasks/list failed: {why}"),
        }
    }
    let result = format!(r#"{{"tasks":[{}]}}"#, merged.join(","));
    session.link.respond(frame, result_response(frame.id().unwrap_or("null"), &result));
}

/// Every page of an upstream's `tasks/list`: `(taskId, task JSON)`.
async fn all_tasks(connection: &Arc<Connection>) -> Result<Vec<(String, String)>, String> {
    paginate(connection, "tasks/list", |result| {
        let page: TaskPage = serde_json::from_str(result).map_err(|err| err.to_string())?;
        let tasks = page
            .tasks
            .iter()
            .filter_map(|raw| {
                let task = serde_json::from_str::<TaskParams>(raw.get()).ok()?;
                Some((task.task_id, raw.get().to_owned()))
            })
            .collect();
        Ok((tasks, page.next_cursor))
    })
    .await
}
