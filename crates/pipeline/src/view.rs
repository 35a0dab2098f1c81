//! Which components a client may see.

use crate::ItemKind;

/// Decides whether a component is visible. Hidden components are left out of
/// lists and answered as unknown when named in a request.
pub trait View: Send + Sync {
    /// Whether `key` (a tool or prompt name as the upstream knows it, or a
    /// resource URI or template) of `kind` on `server` is visible.
    fn shows(&self, server: &str, kind: ItemKind, key: &str) -> bool;

    /// Whether `server` is visible at all. A hidden server is not started
    /// for the client, and everything about it (its endpoint, its state, why
    /// it is down) answers as if it did not exist.
    fn shows_server(&self, server: &str) -> bool {
        let _ = server;
        true
    }
}

/// Shows everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShowAll;

impl View for ShowAll {
    fn shows(&self, _server: &str, _kind: ItemKind, _key: &str) -> bool {
        true
    }
}
