//! Where the request being handled came from: the client's address on the
//! HTTP front, for its audit records.
//!
//! The front sets it around each HTTP request it serves, and a client
//! request's [`Work`](crate::Work) keeps the address it was started under,
//! wherever it is polled; records read it where they are made, so the
//! stages in between need not carry it. Outside (stdio) there is none.

use std::future::Future;
use std::net::IpAddr;

tokio::task_local! {
    static CLIENT_ADDRESS: Option<IpAddr>;
}

/// Runs `future` as work for a client at `address`.
pub fn scope<F: Future>(address: Option<IpAddr>, future: F) -> impl Future<Output = F::Output> {
    CLIENT_ADDRESS.scope(address, future)
}

/// The address of the client whose work is running, if known.
pub fn client_address() -> Option<IpAddr> {
    CLIENT_ADDRESS.try_with(|address| *address).ok().flatten()
}
