//! The load phases: sequential and concurrent `tools/call` loops, over any
//! [`Caller`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio::task::JoinSet;

use crate::caller::Caller;
use crate::client::Completed;

/// How many error messages a phase keeps for display.
const KEPT_ERRORS: usize = 5;

/// Measurements of one phase.
pub struct PhaseResult {
    /// Latency of every call.
    pub latencies: Vec<Duration>,
    /// Wall time of the whole phase.
    pub wall: Duration,
    /// Calls whose response was an error or had `isError: true`.
    pub errors: u64,
    /// The first few error descriptions.
    pub error_samples: Vec<String>,
}

/// The request each call makes, its params serialized once and reused.
pub struct CallParams {
    method: &'static str,
    params: Box<RawValue>,
}

impl CallParams {
    /// `tools/call` of `tool` with `arguments`.
    pub fn new(tool: &str, arguments: &RawValue) -> anyhow::Result<Self> {
        #[derive(Serialize)]
        struct Params<'a> {
            name: &'a str,
            arguments: &'a RawValue,
        }
        let params = serde_json::value::to_raw_value(&Params { name: tool, arguments })?;
        Ok(Self { method: "tools/call", params })
    }

    /// `ping`, which a gateway answers itself: the cost of its front alone.
    pub fn ping() -> anyhow::Result<Self> {
        Ok(Self { method: "ping", params: RawValue::from_string("{}".to_owned())? })
    }
}

/// Checks a completed call: `None` if it succeeded, else why not.
fn call_error(done: &Completed) -> Option<String> {
    #[derive(Deserialize)]
    struct CallResult<'a> {
        #[serde(default, rename = "isError")]
        is_error: Option<bool>,
        #[serde(default, borrow)]
        content: Option<&'a RawValue>,
    }
    match &done.outcome {
        Err(e) => Some(e.clone()),
        Ok(raw) => match serde_json::from_str::<CallResult<'_>>(raw.get()) {
            Err(e) => Some(format!("malformed tools/call result: {e}")),
            Ok(r) if r.is_error == Some(true) => {
                Some(format!("tool returned isError: {}", r.content.map_or("", RawValue::get)))
            }
            Ok(_) => None,
        },
    }
}

/// Accumulates one worker's measurements.
#[derive(Default)]
struct Tally {
    latencies: Vec<Duration>,
    errors: u64,
    error_samples: Vec<String>,
}

impl Tally {
    fn record(&mut self, done: &Completed) {
        self.latencies.push(done.latency);
        if let Some(e) = call_error(done) {
            self.errors += 1;
            if self.error_samples.len() < KEPT_ERRORS {
                self.error_samples.push(e);
            }
        }
    }

    fn merge(&mut self, other: Tally) {
        self.latencies.extend(other.latencies);
        self.errors += other.errors;
        let room = KEPT_ERRORS.saturating_sub(self.error_samples.len());
        self.error_samples.extend(other.error_samples.into_iter().take(room));
    }

    fn finish(self, wall: Duration) -> PhaseResult {
        PhaseResult { latencies: self.latencies, wall, errors: self.errors, error_samples: self.error_samples }
    }
}

/// Makes `calls` calls one after the other.
pub async fn sequential(caller: &mut impl Caller, params: &CallParams, calls: u64) -> anyhow::Result<PhaseResult> {
    let mut tally = Tally { latencies: Vec::with_capacity(usize::try_from(calls).unwrap_or(0)), ..Tally::default() };
    let start = Instant::now();
    for _ in 0..calls {
        let done = caller.request(params.method, &params.params).await?;
        tally.record(&done);
    }
    Ok(tally.finish(start.elapsed()))
}

/// Makes `calls` calls with one worker task per caller, each keeping one call
/// in flight, so that as many calls as there are callers are outstanding at
/// once. Hands the callers back, in their order.
pub async fn concurrent<C: Caller>(
    callers: Vec<C>,
    params: &Arc<CallParams>,
    calls: u64,
) -> anyhow::Result<(PhaseResult, Vec<C>)> {
    let remaining = Arc::new(AtomicU64::new(calls));
    let mut workers = JoinSet::new();
    let slots = callers.len();
    let start = Instant::now();
    for (slot, mut caller) in callers.into_iter().enumerate() {
        let params = Arc::clone(params);
        let remaining = Arc::clone(&remaining);
        workers.spawn(async move {
            let mut tally = Tally::default();
            // Claim one call at a time until none are left.
            while remaining.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1)).is_ok() {
                let done = caller.request(params.method, &params.params).await?;
                tally.record(&done);
            }
            anyhow::Ok((slot, caller, tally))
        });
    }
    let mut total = Tally { latencies: Vec::with_capacity(usize::try_from(calls).unwrap_or(0)), ..Tally::default() };
    let mut returned: Vec<Option<C>> = (0..slots).map(|_| None).collect();
    while let Some(joined) = workers.join_next().await {
        let (slot, caller, tally) = joined.context("worker task failed")??;
        total.merge(tally);
        if let Some(place) = returned.get_mut(slot) {
            *place = Some(caller);
        }
    }
    let wall = start.elapsed();
    Ok((total.finish(wall), returned.into_iter().flatten().collect()))
}
