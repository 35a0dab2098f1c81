//! Where the request being handled came from: the client's address on the
//! HTTP front, for its audit records, and the trace context its HTTP
//! headers named (`traceparent`, `tracestate`), for its span.
//!
//! The front sets it around each HTTP request it serves, and a client
//! request's [`Work`](crate::Work) keeps the origin it was started under,
//! wherever it is polled; what needs it reads it where it is used, so the
//! stages in between need not carry it. Outside (stdio) there is none.

use std::future::Future;
use std::net::IpAddr;
use std::sync::Arc;

/// Where a request came from.
#[derive(Debug, Clone, Default)]
pub struct Origin {
    /// The client's address.
    pub address: Option<IpAddr>,
    /// The `traceparent` and `tracestate` headers of the HTTP request that
    /// carried it, when there was one.
    pub trace: Option<Arc<(String, Option<String>)>>,
}

tokio::task_local! {
    static ORIGIN: Origin;
}

/// Runs `future` as work for a client at `origin`.
pub fn scope<F: Future>(origin: Origin, future: F) -> impl Future<Output = F::Output> {
    ORIGIN.scope(origin, future)
}

/// Runs `poll` (one poll of a client's work) with `origin` as the origin.
pub(crate) fn within<R>(origin: Origin, poll: impl FnOnce() -> R) -> R {
    ORIGIN.sync_scope(origin, poll)
}

/// The origin of the work that is running, if known.
pub fn current() -> Option<Origin> {
    ORIGIN.try_with(Origin::clone).ok()
}

/// The address of the client whose work is running, if known.
pub fn client_address() -> Option<IpAddr> {
    ORIGIN.try_with(|origin| origin.address).ok().flatten()
}

/// The `traceparent` (and `tracestate`) of the HTTP request that carried
/// the running work, if any.
pub fn trace_headers() -> Option<Arc<(String, Option<String>)>> {
    ORIGIN.try_with(|origin| origin.trace.clone()).ok().flatten()
}
