//! The kinds of things an MCP server lists, and one listed item as
//! inspection (`warden effective`, `validate --connect`) sees it.

/// The four kinds of things an MCP server lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ItemKind {
    /// `tools/list`
    Tool,
    /// `prompts/list`
    Prompt,
    /// `resources/list`
    Resource,
    /// `resources/templates/list`
    Template,
}

impl ItemKind {
    /// Every kind, in a fixed order.
    pub const ALL: [ItemKind; 4] = [ItemKind::Tool, ItemKind::Prompt, ItemKind::Resource, ItemKind::Template];

    /// The method that lists this kind.
    pub fn list_method(self) -> &'static str {
        match self {
            ItemKind::Tool => "tools/list",
            ItemKind::Prompt => "prompts/list",
            ItemKind::Resource => "resources/list",
            ItemKind::Template => "resources/templates/list",
        }
    }

    /// The member of the list result that holds the items.
    pub fn field(self) -> &'static str {
        match self {
            ItemKind::Tool => "tools",
            ItemKind::Prompt => "prompts",
            ItemKind::Resource => "resources",
            ItemKind::Template => "resourceTemplates",
        }
    }

    /// The capability a server declares to offer this kind.
    pub fn capability(self) -> &'static str {
        match self {
            ItemKind::Tool => "tools",
            ItemKind::Prompt => "prompts",
            ItemKind::Resource | ItemKind::Template => "resources",
        }
    }

    /// The notification that says this kind changed.
    pub fn list_changed(self) -> &'static str {
        match self {
            ItemKind::Tool => "notifications/tools/list_changed",
            ItemKind::Prompt => "notifications/prompts/list_changed",
            ItemKind::Resource | ItemKind::Template => "notifications/resources/list_changed",
        }
    }

    /// Tools and prompts are renamed; resources and templates keep their URIs.
    pub fn is_named(self) -> bool {
        matches!(self, ItemKind::Tool | ItemKind::Prompt)
    }
}

/// One item an upstream offers, for inspection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InventoryItem {
    /// The upstream's name.
    pub server: String,
    /// What it is.
    pub kind: ItemKind,
    /// Its name, URI or URI template as the upstream knows it.
    pub key: String,
    /// Its name as the client sees it (tools and prompts), or its URI.
    pub exposed: String,
    /// Its description, if it has one.
    pub description: Option<String>,
    /// Whether a tool says it does not modify anything (`annotations.readOnlyHint`).
    pub read_only: bool,
}
