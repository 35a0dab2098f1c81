//! `subscriptions/listen` in a lane: a long-lived stream of the change
//! notifications the client opted in to, acknowledged with what is honoured;
//! the resources it names are subscribed upstream while a stream wants them.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use warden_jsonrpc::{Frame, Members, json_string};

use super::lane::Inner;
use super::listeners::{Filter, tagged};
use super::reply::{self, Canceller, DropCancel, Reply, ReplyMessage};
use super::results;
use warden_sync::lock;

impl Inner {
    /// `subscriptions/listen`: acknowledged with what is honoured, then open.
    pub(super) async fn listen(self: &Arc<Self>, frame: &Frame, subscription: String) -> Reply {
        let mut filter: Filter = frame
            .params()
            .and_then(|params| Members::parse(params).ok())
            .and_then(|params| params.get("notifications").and_then(|raw| serde_json::from_str(raw).ok()))
            .unwrap_or_default();
        let mut honoured = Vec::new();
        for uri in std::mem::take(&mut filter.resource_subscriptions) {
            if self.subscribe(&uri).await {
                honoured.push(uri);
            }
        }
        filter.resource_subscriptions = honoured;
        let (to_client, pieces) = reply::channel();
        let ack_params = format!(r#"{{"notifications":{}}}"#, filter.render());
        if let Ok(params) = Members::parse(&ack_params) {
            let ack = tagged("notifications/subscriptions/acknowledged", Some(&params), &subscription);
            let _ = to_client.send(ReplyMessage::Note(ack));
        }
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        self.listeners.add(key, subscription, filter, to_client);
        let lane: std::sync::Weak<dyn Canceller> = Arc::downgrade(self) as std::sync::Weak<Inner>;
        Reply::new(pieces, None, Some(DropCancel::Listen { lane, key }))
    }

    /// Subscribes the session to `uri` for listen streams; true if some
    /// upstream took the subscription.
    async fn subscribe(self: &Arc<Self>, uri: &str) -> bool {
        if let Some(count) = lock(&self.subscribed).get_mut(uri) {
            *count += 1;
            return true;
        }
        let params = format!(r#"{{"uri":{}}}"#, json_string(uri));
        let mut reply = self.internal("resources/subscribe", &params);
        let taken =
            matches!(reply.next().await, Some(ReplyMessage::Last(text)) if results::error_code(&text).is_none());
        if taken {
            *lock(&self.subscribed).entry(uri.to_owned()).or_default() += 1;
        }
        taken
    }

    /// Drops one listen stream's subscription to `uri`.
    pub(super) fn unsubscribe(self: &Arc<Self>, uri: String) {
        let last = {
            let mut subscribed = lock(&self.subscribed);
            match subscribed.get_mut(&uri) {
                Some(count) if *count > 1 => {
                    *count -= 1;
                    false
                }
                Some(_) => subscribed.remove(&uri).is_some(),
                None => false,
            }
        };
        if last {
            let params = format!(r#"{{"uri":{}}}"#, json_string(&uri));
            // Nobody waits for the answer.
            let reply = self.internal("resources/unsubscribe", &params);
            tokio::spawn(async move {
                let mut reply = reply;
                while reply.next().await.is_some() {}
            });
        }
    }
}
