//! Spans on their way out: queued, batched, and POSTed to the collector
//! as OTLP/HTTP protobuf, by a task of their own, so a request never waits
//! for the collector.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use warden_sync::lock;

use crate::otlp::export_request;

/// Spans kept while the collector is slow; beyond, new ones are dropped
/// (and counted) rather than held without bound.
const MAX_QUEUED: usize = 8192;

/// Spans per request to the collector.
const BATCH: usize = 512;

/// How long one POST may take.
const POST_TIMEOUT: Duration = Duration::from_secs(10);

/// Where spans are sent, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// The full URL (`…/v1/traces`).
    pub url: String,
    /// Extra headers (an API key, say).
    pub headers: Vec<(String, String)>,
    /// `service.name`.
    pub service: String,
    /// The longest a span waits before it is sent.
    pub every: Duration,
}

/// The queue of finished spans.
#[derive(Debug, Default)]
pub(crate) struct Exporter {
    queue: std::sync::Mutex<Vec<Vec<u8>>>,
    wake: tokio::sync::Notify,
    dropped: AtomicU64,
}

impl Exporter {
    /// Queues `span` (an encoded `Span`), waking the sender when a batch
    /// is full.
    pub(crate) fn push(&self, span: Vec<u8>) {
        let mut queue = lock(&self.queue);
        if queue.len() >= MAX_QUEUED {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        queue.push(span);
        if queue.len() == BATCH {
            self.wake.notify_one();
        }
    }

    /// Sends what is queued to `to`, every `to.every` or when a batch
    /// fills, until the process ends.
    pub(crate) async fn run(self: Arc<Self>, to: Destination) {
        // The process's TLS provider (ring), if nothing installed one yet.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = match reqwest::Client::builder()
            .timeout(POST_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
        {
            Ok(client) => client,
            Err(err) => return tracing::error!("traces are not exported: cannot build an HTTP client: {err}"),
        };
        let mut failing = false;
        loop {
            tokio::select! {
                () = tokio::time::sleep(to.every) => {}
                () = self.wake.notified() => {}
            }
            loop {
                let batch: Vec<Vec<u8>> = {
                    let mut queue = lock(&self.queue);
                    let take = queue.len().min(BATCH);
                    queue.drain(..take).collect()
                };
                if batch.is_empty() {
                    break;
                }
                let sent = post(&client, &to, export_request(&to.service, &batch)).await;
                match (sent, failing) {
                    (Ok(()), true) => {
                        failing = false;
                        tracing::info!(url = %to.url, "traces reach the collector again");
                    }
                    // Said once per outage, not per batch.
                    (Err(why), false) => {
                        failing = true;
                        tracing::warn!(url = %to.url, "traces could not be exported (dropped until the collector answers): {why}");
                    }
                    _ => {}
                }
                let dropped = self.dropped.swap(0, Ordering::Relaxed);
                if dropped > 0 {
                    tracing::warn!(dropped, "spans dropped: the collector could not keep up");
                }
                if failing {
                    break;
                }
            }
        }
    }
}

async fn post(client: &reqwest::Client, to: &Destination, body: Vec<u8>) -> Result<(), String> {
    let mut request = client.post(&to.url).header("content-type", "application/x-protobuf").body(body);
    for (name, value) in &to.headers {
        request = request.header(name, value);
    }
    let response = request.send().await.map_err(|err| err.to_string())?;
    if response.status().is_success() { Ok(()) } else { Err(format!("the collector answered {}", response.status())) }
}
