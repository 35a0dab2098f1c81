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

/// What a review of an upstream's tools found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Review {
    /// Tools to withhold: their definition changed since it was pinned, and
    /// no person has accepted the change. A withheld tool is answered as if
    /// it did not exist.
    pub withheld: Vec<String>,
    /// Tools whose change was seen for the first time in this review (to be
    /// audited once, not at every list).
    pub changed: Vec<String>,
}

/// Reviews an upstream's tools each time they are loaded.
pub trait Pins: Send + Sync {
    /// Reviews `server`'s freshly listed tools.
    fn review(&self, server: &str, tools: &[ToolDefinition<'_>]) -> Review;
}
