//! Where the client's messages enter and leave Warden.

mod http;
mod stdio;

pub use http::HttpFront;
pub use stdio::serve_stdio;
