//! Where the client's messages enter and leave Warden.

mod http;
mod metrics;
mod stdio;
mod stdio_era;
mod stdio_output;

pub use http::HttpFront;
/// Host and secret checks the HTTP front uses, for Warden's other pages.
pub use http::access::{constant_time_eq, host_name, is_loopback_name};
pub use metrics::{MetricsEndpoint, Render, serve_metrics};
pub use stdio::serve_stdio;
