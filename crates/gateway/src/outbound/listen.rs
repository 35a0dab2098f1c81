//! What a 2025-era session needs from a modern (2026-07-28) upstream that a
//! 2025 server would send unasked: list changes and resource updates come
//! on one `subscriptions/listen` request per upstream, opened when the
//! upstream is ready and opened anew whenever the session's resource
//! subscriptions on it change.

use std::sync::Arc;

use warden_jsonrpc::json_string;
use warden_upstream::Connection;

use crate::session::Shared;
use warden_sync::lock;

impl Shared {
    /// (Re)opens the listen stream on modern upstream `index` with every
    /// list change and the session's subscriptions to its resources.
    pub(crate) fn relisten(self: &Arc<Self>, index: usize, connection: &Arc<Connection>) {
        let uris: Vec<String> = lock(&self.subscriptions)
            .iter()
            .filter(|(_, (owner, _))| *owner == index)
            .map(|(uri, _)| json_string(uri))
            .collect();
        let params = format!(
            r#"{{"notifications":{{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":[{}]}}}}"#,
            uris.join(",")
        );
        let sent = connection.send_request(|id| warden_jsonrpc::request(id, "subscriptions/listen", Some(&params)));
        let (id, answer) = match sent {
            Ok(sent) => sent,
            Err(err) => {
                tracing::warn!(session = %self.id, server = connection.name(), "cannot listen for changes: {err}");
                return;
            }
        };
        if let Some(old) = lock(&self.listens).insert(index, id) {
            connection.cancel(old, "replaced by a new subscription set");
        }
        let (session, server) = (self.id.clone(), connection.name().to_owned());
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
