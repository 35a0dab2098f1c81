//! Which components a client may see.

use crate::catalog::ItemKind;

/// Decides whether a component is visible. Hidden components are left out of
/// lists and answered as unknown when named in a request.
pub trait View: Send + Sync {
    /// Whether `key` (a tool or prompt name as the upstream knows it, or a
    /// resource URI or template) of `kind` on `server` is visible.
    fn shows(&self, server: &str, kind: ItemKind, key: &str) -> bool;
}

/// Shows everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShowAll;

impl View for ShowAll {
    fn shows(&self, _server: &str, _kind: ItemKind, _key: &str) -> bool {
        true
    }
}
