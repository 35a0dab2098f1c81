//! Tasks (2025-11-25, experimental): a task-augmented request returns a task
//! id at once; `tasks/get`, `tasks/result` and `tasks/cancel` must then reach
//! the upstream that created it, and `tasks/list` merges every upstream's.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::task::JoinSet;
use warden_jsonrpc::{ErrorCode, Frame, Kind, Method, result_response};
use warden_upstream::Connection;

use super::forward::Target;
use crate::pipeline::Call;
use crate::session::Shared;
use crate::surfaces::paginate;
use warden_sync::lock;

#[derive(Deserialize)]
struct TaskParams {
    #[serde(rename = "taskId")]
    task_id: String,
}

#[derive(Deserialize)]
struct Created {
    task: TaskParams,
}

#[derive(Deserialize)]
struct TaskPage<'a> {
    #[serde(borrow, default)]
    tasks: Vec<&'a RawValue>,
    #[serde(default, rename = "nextCursor")]
    next_cursor: Option<String>,
}

impl Shared {
    /// `tasks/get`, `tasks/result`, `tasks/cancel`: to the task's creator.
    pub(super) async fn call_task(&self, frame: &Frame, method: &Method) {
        let Some(params) = frame.params().and_then(|p| serde_json::from_str::<TaskParams>(p).ok()) else {
            return self.fail(frame, ErrorCode::InvalidParams, "params with a taskId are required");
        };
        let Some(upstream) = lock(&self.tasks).get(&params.task_id).copied() else {
            return self.fail(frame, ErrorCode::InvalidParams, &format!("Unknown task: {}", params.task_id));
        };
        let hooks = self.hooks.load_full();
        let server = self.upstream(upstream);
        let call = Call { session: &self.id, server: server.name(), method, name: &params.task_id, arguments: None };
        self.dispatch(frame, &hooks, call, Target::upstream(upstream)).await;
    }

    /// Remembers which upstream created the task in a `CreateTaskResult`.
    pub(crate) fn record_task(&self, upstream: usize, answer: &Frame) {
        if answer.kind() != Kind::Response {
            return;
        }
        if let Some(created) = answer.payload().and_then(|result| serde_json::from_str::<Created>(result).ok()) {
            lock(&self.tasks).insert(created.task.task_id, upstream);
        }
    }

    /// Remembers the upstream of a task it reports on.
    pub(crate) fn record_task_status(&self, upstream: usize, params: Option<&str>) {
        if let Some(status) = params.and_then(|p| serde_json::from_str::<TaskParams>(p).ok()) {
            lock(&self.tasks).entry(status.task_id).or_insert(upstream);
        }
    }

    /// `tasks/list`: every upstream that lists tasks, all pages, merged. A
    /// shared server lists every tenant's tasks: of its list, only the tasks
    /// this session created are shown (and only those can be asked about).
    pub(super) async fn list_tasks(&self, frame: &Frame) {
        let mut lists = JoinSet::new();
        let config = self.config.load_full();
        for (index, upstream) in self.live_upstreams() {
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
                    let mut owners = lock(&self.tasks);
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
                Err(why) => tracing::warn!(server = self.upstream(index).name(), "tasks/list failed: {why}"),
            }
        }
        let result = format!(r#"{{"tasks":[{}]}}"#, merged.join(","));
        self.respond(frame, result_response(frame.id().unwrap_or("null"), &result));
    }
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
