//! Pinning tool definitions against "rug pulls".
//!
//! The first time Warden sees a tool, it records a fingerprint of the tool's
//! name, description and schemas, per server, in a state file. When the
//! server later offers a different definition under the same name (at start
//! or after `list_changed`), the change is recorded as pending; in `enforce`
//! mode the tool is withheld (answered as unknown) until a person accepts
//! the change with `warden pins accept`, which shows the diff; in `warn`
//! mode it is logged and stays available.

#![warn(missing_docs)]

mod fingerprint;
mod store;

pub use fingerprint::{canonical, canonical_text, fingerprint};
pub use store::{Change, PinError, PinStore, default_state_dir};
