//! The seam where tool definitions are checked against what was seen before
//! (against "rug pulls": a server that changes a tool's description or
//! schema after it was trusted).

/// One tool definition as an upstream sent it.
#[derive(Debug, Clone, Copy)]
pub struct ToolDefinition<'a> {
    /// The tool's name, as the upstream knows it.
    pub name: &'a str,
    /// Its JSON, as the upstream sent it.
    pub raw: &'a str,
}

/// Reviews an upstream's tools each time they are loaded.
pub trait Pins: Send + Sync {
    /// Returns the names of `server`'s tools to withhold: tools whose
    /// definition changed since it was pinned, until a person accepts the
    /// change. A withheld tool is answered as if it did not exist.
    fn review(&self, server: &str, tools: &[ToolDefinition<'_>]) -> Vec<String>;
}
