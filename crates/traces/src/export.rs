//! Spans on their way out: queued, batched, and POSTed to the collector
//! as OTLP/HTTP protobuf, by a task of their own, so a request never waits
//! for the collector.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use warden_sync::lock;

use bytes::Bytes;

use crate::otlp::{HEADROOM, export_request, nested_long};

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

/// The queue of finished spans: each encoded straight into the batch it
/// will be sent in (as `ScopeSpans.spans` fields, after room for the
/// request's header), so a span costs no buffer of its own and no copy
/// when its batch is sent.
#[derive(Debug, Default)]
pub(crate) struct Exporter {
    queue: std::sync::Mutex<Queue>,
    wake: tokio::sync::Notify,
    dropped: AtomicU64,
}

/// Batches of encoded spans, oldest first.
#[derive(Debug, Default)]
struct Queue {
    /// Full batches ([`BATCH`] spans each), waiting to be sent.
    full: VecDeque<Vec<u8>>,
    /// The batch being filled, and how many spans it holds.
    filling: Vec<u8>,
    spans: usize,
}

impl Queue {
    /// Spans held, in all batches.
    fn len(&self) -> usize {
        self.full.len() * BATCH + self.spans
    }

    /// The oldest full batch; else, when `partial` is set, the batch being
    /// filled (and `partial` is cleared: it goes once). `None` when there
    /// is none to take.
    fn take(&mut self, partial: &mut bool) -> Option<Vec<u8>> {
        if let Some(batch) = self.full.pop_front() {
            return Some(batch);
        }
        if !*partial || self.spans == 0 {
            return None;
        }
        *partial = false;
        self.spans = 0;
        Some(std::mem::take(&mut self.filling))
    }
}

impl Exporter {
    /// Queues the span `encode` writes (a `Span` message), waking the
    /// sender when a batch is full.
    pub(crate) fn push(&self, encode: impl FnOnce(&mut Vec<u8>)) {
        let mut queue = lock(&self.queue);
        if queue.len() >= MAX_QUEUED {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        if queue.filling.is_empty() {
            queue.filling.resize(HEADROOM, 0);
        }
        // ScopeSpans.spans
        nested_long(&mut queue.filling, 2, encode);
        queue.spans += 1;
        if queue.spans == BATCH {
            // The next batch is about as long: room for it at once, not
            // grown (and copied) a dozen times on the way.
            let room = queue.filling.len() + queue.filling.len() / 8;
            let full = std::mem::replace(&mut queue.filling, Vec::with_capacity(room));
            queue.full.push_back(full);
            queue.spans = 0;
            self.wake.notify_one();
        }
    }

    /// Sends what is queued to `to` until the process ends: a batch as soon
    /// as it is full, and the batch being filled every `to.every`. Under
    /// load, batches go out full: one POST per 512 spans, not one for what
    /// gathered while the last POST was on its way (about twenty spans at
    /// 16 calls in flight, each POST costing the sender and the collector
    /// as much as a call).
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
        // An interval must not be zero (`OTEL_BSP_SCHEDULE_DELAY=0`).
        let every = to.every.max(Duration::from_millis(1));
        let mut due = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        due.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let mut partial = tokio::select! {
                _ = due.tick() => true,
                () = self.wake.notified() => false,
            };
            loop {
                let Some(batch) = lock(&self.queue).take(&mut partial) else { break };
                let sent = post(&client, &to, export_request(&to.service, batch)).await;
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

async fn post(client: &reqwest::Client, to: &Destination, body: Bytes) -> Result<(), String> {
    let mut request = client.post(&to.url).header("content-type", "application/x-protobuf").body(body);
    for (name, value) in &to.headers {
        request = request.header(name, value);
    }
    let response = request.send().await.map_err(|err| err.to_string())?;
    if response.status().is_success() { Ok(()) } else { Err(format!("the collector answered {}", response.status())) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(out: &mut Vec<u8>) {
        out.extend_from_slice(b"span");
    }

    /// `OTEL_BSP_SCHEDULE_DELAY=0` asks for no wait: the sender runs on
    /// (an interval of zero would stop it at its first poll).
    #[test]
    fn a_zero_interval_does_not_stop_the_sender() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let exporter = Arc::new(Exporter::default());
            exporter.push(span);
            // Nothing listens on the discard port: each POST fails at once.
            let to = Destination {
                url: "http://127.0.0.1:9/v1/traces".into(),
                headers: Vec::new(),
                service: "t".into(),
                every: Duration::ZERO,
            };
            let sender = tokio::spawn(exporter.run(to));
            for _ in 0..20 {
                tokio::task::yield_now().await;
            }
            assert!(!sender.is_finished(), "the sender stopped");
            sender.abort();
        });
    }

    #[test]
    fn spans_are_batched_in_order_and_dropped_past_the_cap() {
        let exporter = Exporter::default();
        for _ in 0..BATCH + 3 {
            exporter.push(span);
        }
        let mut queue = lock(&exporter.queue);
        assert_eq!(queue.len(), BATCH + 3);
        // Each span is a `ScopeSpans.spans` field: tag 0x12, length 4, the bytes.
        // After the room for the request's header.
        // Between ticks, only full batches go.
        let mut partial = false;
        let first = queue.take(&mut partial).expect("a full batch");
        assert_eq!(first.len(), HEADROOM + BATCH * 6);
        assert_eq!(&first[HEADROOM..HEADROOM + 6], b"\x12\x04span");
        assert_eq!(queue.take(&mut partial), None, "the one being filled waits for the tick");
        // On a tick, the one being filled too, once.
        partial = true;
        assert_eq!(queue.take(&mut partial).map(|rest| rest.len()), Some(HEADROOM + 3 * 6));
        assert!(!partial);
        assert_eq!(queue.take(&mut true), None, "nothing is left");
        drop(queue);
        for _ in 0..MAX_QUEUED + 5 {
            exporter.push(span);
        }
        assert_eq!(lock(&exporter.queue).len(), MAX_QUEUED);
        assert_eq!(exporter.dropped.load(Ordering::Relaxed), 5);
    }
}
