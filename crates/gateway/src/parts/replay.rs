//! What the client set on a session's upstreams, kept so that an upstream
//! that restarts is told again: resource subscriptions, the log level, the
//! listen streams of modern upstreams, and which upstream made each task.
//!
//! A 2025-era session needs from a modern (2026-07-28) upstream what a
//! 2025 server would send unasked: list changes and resource updates come
//! on one `subscriptions/listen` request per upstream, opened when the
//! upstream is ready and opened anew whenever the session's resource
//! subscriptions on it change.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use warden_jsonrpc::{Frame, Kind, json_string};
use warden_sync::lock;
use warden_upstream::Connection;

/// One session's replayable settings.
#[derive(Debug, Default)]
pub(crate) struct Replay {
    /// `resources/subscribe` params by URI, with the upstream's index.
    pub subscriptions: Mutex<HashMap<String, (usize, String)>>,
    /// The last `logging/setLevel` params.
    pub log_level: Mutex<Option<String>>,
    /// Upstream index → the id of the `subscriptions/listen` request open on
    /// that (modern) upstream.
    pub listens: Mutex<HashMap<usize, u64>>,
    /// Task id → the upstream that created the task.
    pub tasks: Mutex<HashMap<String, usize>>,
}

#[derive(Deserialize)]
struct TaskResult {
    task: TaskId,
}

#[derive(Deserialize)]
struct TaskId {
    #[serde(rename = "taskId")]
    task_id: String,
}

impl Replay {
    /// The level the client asked for (JSON text, e.g. `"info"`), if any.
    pub fn level(&self) -> Option<String> {
        lock(&self.log_level).as_deref().and_then(level_of)
    }

    /// The URIs subscribed to on upstream `index`, with their params.
    pub fn subscriptions_on(&self, index: usize) -> Vec<(String, String)> {
        lock(&self.subscriptions)
            .iter()
            .filter(|(_, (owner, _))| *owner == index)
            .map(|(uri, (_, params))| (uri.clone(), params.clone()))
            .collect()
    }

    /// Whether upstream `index` holds this session's subscription to `uri`.
    pub fn subscribed(&self, index: usize, uri: &str) -> bool {
        lock(&self.subscriptions).get(uri).is_some_and(|(owner, _)| *owner == index)
    }

    /// Remembers the task that upstream `index` created, from its answer
    /// to a task-augmented request.
    pub fn record_task(&self, upstream: usize, answer: &Frame) {
        if answer.kind() != Kind::Response {
            return;
        }
        if let Some(created) = answer.payload().and_then(|result| serde_json::from_str::<TaskResult>(result).ok()) {
            lock(&self.tasks).insert(created.task.task_id, upstream);
        }
    }

    /// Remembers the task a status notification of upstream `index` names.
    pub fn record_task_status(&self, upstream: usize, params: Option<&str>) {
        if let Some(status) = params.and_then(|p| serde_json::from_str::<TaskId>(p).ok()) {
            lock(&self.tasks).entry(status.task_id).or_insert(upstream);
        }
    }

    /// Whether upstream `index` created task `task`.
    pub fn created_task(&self, index: usize, task: &str) -> bool {
        lock(&self.tasks).get(task) == Some(&index)
    }

    /// (Re)opens the listen stream on modern upstream `index` with every
    /// list change and the session's subscriptions to its resources.
    pub fn relisten(&self, session: &str, index: usize, connection: &Arc<Connection>) {
        let uris: Vec<String> = self.subscriptions_on(index).iter().map(|(uri, _)| json_string(uri)).collect();
        let params = format!(
            r#"{{"notifications":{{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":[{}]}}}}"#,
            uris.join(",")
        );
        let sent = connection.send_request(|id| warden_jsonrpc::request(id, "subscriptions/listen", Some(&params)));
        let (id, answer) = match sent {
            Ok(sent) => sent,
            Err(err) => {
                tracing::warn!(session = %session, server = connection.name(), "cannot listen for changes: {err}");
                return;
            }
        };
        if let Some(old) = lock(&self.listens).insert(index, id) {
            connection.cancel(old, "replaced by a new subscription set");
        }
        let (session, server) = (session.to_owned(), connection.name().to_owned());
        tokio::spawn(async move {
            // The stream's answer comes only when the server ends it.
            if let Ok(answer) = answer.await
                && answer.kind() == warden_jsonrpc::Kind::ErrorResponse
            {
                tracing::warn!(%session, %server, "the server refused subscriptions/listen: {}", answer.payload().unwrap_or(""));
            }
        });
    }
}

/// The `level` of `logging/setLevel` params, as JSON text.
pub(crate) fn level_of(params: &str) -> Option<String> {
    let params = warden_jsonrpc::Members::parse(params).ok()?;
    params.get("level").filter(|level| level.starts_with('"')).map(str::to_owned)
}
