//! Warden's message path: one client session in front of many upstream MCP
//! servers.
//!
//! A message from the client enters at a front ([`front`]), is parsed into a
//! frame and dispatched by [`inbound`]: requests are resolved against the
//! [`catalog`] of upstream names, pass the [`pipeline`] seams (view, guard,
//! audit) and are forwarded to their upstream. What upstreams send back
//! arrives in [`outbound`], which maps ids and tokens back and writes to the
//! client. A [`Session`] holds one client's state and its upstreams.

#![warn(missing_docs)]

pub mod catalog;
pub mod front;
mod in_place;
mod inbound;
pub mod modern;
pub mod origin;
mod outbound;
mod outlet;
pub mod overview;
mod parts;
// The stages, by the short path the gateway uses for them (other crates depend
// on `warden-pipeline` itself).
pub(crate) use warden_pipeline as pipeline;
mod pool;
mod served;
mod servers;
mod session;
mod surfaces;
mod work;

pub use outlet::{Outbound, Outlet};
pub use pool::Pool;
pub use servers::pending_changes;
pub use session::{Session, Status, UpstreamStatus};
pub use work::Work;
