//! The 2026-07-28 revision ("modern") on Warden's client side.
//!
//! A modern client sends no `initialize`: every request carries its
//! revision and capabilities in `params._meta` ([`envelope`]) and is served
//! on its own. Warden serves such requests through a [`Lane`]: one gateway
//! [`Session`](crate::Session) per principal and endpoint, initialized by
//! Warden itself in the 2025 era with every client capability it can bridge,
//! so the existing pipeline (profiles, policies, approvals, audit) applies
//! unchanged. What differs is only at the edge:
//!
//! - each request gets a Warden id inside the lane, so requests of many
//!   clients never collide, and its answer is rewritten for the modern client
//!   ([`results`]: `resultType`, caching fields, `serverInfo`, error codes);
//! - an upstream's elicitation, sampling or roots request during a call is
//!   parked ([`exchange`]) and returned as `input_required` with a
//!   `requestState` only Warden can have written ([`seal`]); the client's
//!   retry answers it and the call goes on;
//! - list and resource change notifications reach `subscriptions/listen`
//!   streams ([`listen`]);
//! - `server/discover` is answered from Warden's own view ([`discover`]).

pub mod discover;
pub mod envelope;
mod exchange;
mod lane;
mod listen;
mod listeners;
mod reply;
pub mod results;
pub mod seal;

pub use envelope::{Capabilities, Envelope, EnvelopeError, is_modern};
pub use lane::{Lane, LaneOutlet};
pub use reply::{Reply, ReplyMessage};
pub use seal::Sealer;

/// The modern revisions Warden speaks.
pub const MODERN_VERSIONS: [&str; 1] = ["2026-07-28"];

/// Whether `version` is one of the handshake-based revisions (2025-11-25
/// and earlier), which open a session with `initialize`.
pub fn is_2025_era_version(version: &str) -> bool {
    crate::inbound::SUPPORTED_VERSIONS.contains(&version)
}

/// The `_meta` keys of 2026-07-28.
pub mod meta {
    /// The revision a request is written in (the key upstreams are sent).
    pub const PROTOCOL_VERSION: &str = warden_jsonrpc::meta_keys::PROTOCOL_VERSION;
    /// The client's capabilities for this request.
    pub const CLIENT_CAPABILITIES: &str = warden_jsonrpc::meta_keys::CLIENT_CAPABILITIES;
    /// Who the client is.
    pub const CLIENT_INFO: &str = warden_jsonrpc::meta_keys::CLIENT_INFO;
    /// The log level the client wants for this request.
    pub const LOG_LEVEL: &str = warden_jsonrpc::meta_keys::LOG_LEVEL;
    /// Who the server is, on results.
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
    /// Which `subscriptions/listen` stream a notification belongs to.
    pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
    /// The prefix of every key the protocol itself defines.
    pub const PROTOCOL_PREFIX: &str = warden_jsonrpc::meta_keys::PROTOCOL_PREFIX;
}
