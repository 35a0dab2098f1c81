//! What the load phases need from a transport: send one request, wait for its answer.

use std::future::Future;

use serde_json::value::RawValue;

use crate::client::Completed;

/// Sends JSON-RPC requests and waits for their answers. Each in-flight slot of
/// the load phases owns one (for stdio, a handle on the shared pipe; for HTTP,
/// a connection of its own).
pub trait Caller: Send + 'static {
    /// Sends a request and waits for its response.
    ///
    /// Errors only on transport failures (server gone, timeout); a JSON-RPC
    /// error response is an `Ok` with an `Err` outcome.
    fn request<'a>(
        &'a mut self,
        method: &'a str,
        params: &'a RawValue,
    ) -> impl Future<Output = anyhow::Result<Completed>> + Send + 'a;
}
