//! JSON-RPC 2.0 framing for Warden.
//!
//! A gateway must forward what it does not understand, byte for byte. This crate
//! therefore never decodes a whole message into typed structs: [`Frame`] validates
//! the envelope (`jsonrpc`, `id`, `method`, `params`, `result`, `error`) and keeps
//! the original text; [`Splice`] rewrites a few values (an id, a tool name) in
//! place and leaves every other byte untouched; [`LineReader`] reads
//! newline-delimited messages with a size cap.

#![warn(missing_docs)]

mod build;
mod canonical;
mod codes;
mod direct;
mod frame;
mod id_text;
mod lines;
mod meta;
mod method;
mod needle;
mod object;
mod oversized;
mod params;
mod scan;
mod splice;
mod text;

pub use build::{error_response, notification, request, result_response};
pub use canonical::canonical_text;
pub use codes::ErrorCode;
pub use direct::{DirectPipe, SharedWrite, Unwritten};
pub use frame::{Frame, FrameError, Kind, span_in};
pub use id_text::IdText;
pub use lines::{Line, LineReader};
pub use meta::{MetaMembers, ProtocolKeys, keys as meta_keys};
pub use method::Method;
pub use needle::{Needle, has_escape};
pub use object::{Members, without_members};
pub use oversized::guess_id;
pub use params::ParamMembers;
pub use splice::{Splice, json_string};
pub use text::Text;
