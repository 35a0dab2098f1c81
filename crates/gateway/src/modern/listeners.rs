//! The open `subscriptions/listen` streams of one lane, and what each asked
//! for: a change notification goes to every stream that wants it, tagged
//! with that stream's subscription id.

use std::sync::Mutex;

use serde::Deserialize;
use warden_jsonrpc::{Frame, Members, json_string};

use super::meta;
use super::reply::{ReplyMessage, ReplySender};

/// What one stream asked for.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub(super) struct Filter {
    #[serde(default)]
    pub tools_list_changed: bool,
    #[serde(default)]
    pub prompts_list_changed: bool,
    #[serde(default)]
    pub resources_list_changed: bool,
    #[serde(default)]
    pub resource_subscriptions: Vec<String>,
}

impl Filter {
    /// The filter as the acknowledgment names it: only what is honoured.
    pub fn render(&self) -> String {
        let mut members = Vec::new();
        for (flag, name) in [
            (self.tools_list_changed, "toolsListChanged"),
            (self.prompts_list_changed, "promptsListChanged"),
            (self.resources_list_changed, "resourcesListChanged"),
        ] {
            if flag {
                members.push(format!("\"{name}\":true"));
            }
        }
        if !self.resource_subscriptions.is_empty() {
            let uris: Vec<String> = self.resource_subscriptions.iter().map(|uri| json_string(uri)).collect();
            members.push(format!("\"resourceSubscriptions\":[{}]", uris.join(",")));
        }
        format!("{{{}}}", members.join(","))
    }

    fn wants(&self, method: &str, uri: Option<&str>) -> bool {
        match method {
            "notifications/tools/list_changed" => self.tools_list_changed,
            "notifications/prompts/list_changed" => self.prompts_list_changed,
            "notifications/resources/list_changed" => self.resources_list_changed,
            "notifications/resources/updated" => {
                uri.is_some_and(|uri| self.resource_subscriptions.iter().any(|u| u == uri))
            }
            _ => false,
        }
    }
}

struct Listener {
    key: u64,
    /// The listen request's id (JSON text).
    subscription: String,
    filter: Filter,
    to_client: ReplySender,
}

/// The open listen streams of one lane.
#[derive(Default)]
pub(super) struct Listeners {
    all: Mutex<Vec<Listener>>,
}

impl Listeners {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Listener>> {
        warden_sync::lock(&self.all)
    }

    /// Adds a stream.
    pub fn add(&self, key: u64, subscription: String, filter: Filter, to_client: ReplySender) {
        self.lock().push(Listener { key, subscription, filter, to_client });
    }

    /// Removes stream `key`; returns its filter.
    pub fn remove(&self, key: u64) -> Option<Filter> {
        let mut all = self.lock();
        let at = all.iter().position(|listener| listener.key == key)?;
        Some(all.remove(at).filter)
    }

    /// How many are open.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Sends a change notification to every stream that asked for it.
    pub fn fan_out(&self, frame: &Frame, method: &str) {
        let params = frame.params().and_then(|params| Members::parse(params).ok());
        let uri = params
            .as_ref()
            .and_then(|params| params.get("uri"))
            .and_then(|raw| serde_json::from_str::<String>(raw).ok());
        for listener in self.lock().iter().filter(|listener| listener.filter.wants(method, uri.as_deref())) {
            let _ =
                listener.to_client.send(ReplyMessage::Note(tagged(method, params.as_ref(), &listener.subscription)));
        }
    }
}

/// A notification with the subscription's id in `_meta`.
pub(super) fn tagged(method: &str, params: Option<&Members>, subscription: &str) -> String {
    let tag = format!("{{{}:{subscription}}}", json_string(meta::SUBSCRIPTION_ID));
    let params = match params {
        Some(params) if params.contains("_meta") => {
            let meta = params.get("_meta").and_then(|meta| Members::parse(meta).ok());
            let merged = meta.map_or(tag.clone(), |meta| meta.render(&[(meta::SUBSCRIPTION_ID, subscription)], &[]));
            params.render(&[], &[("_meta", &merged)])
        }
        Some(params) => params.render(&[("_meta", &tag)], &[]),
        None => format!("{{\"_meta\":{tag}}}"),
    };
    warden_jsonrpc::notification(method, Some(&params))
}
