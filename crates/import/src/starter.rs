//! The starter profiles `warden init` and the mcptools import write: `safe`
//! (read-only tools, every prompt and resource) and `dev` (everything).

use indexmap::IndexMap;
use warden_config::{Filter, Profile, ServerFilters};

/// Verbs whose tools are taken to only read, when they start the name as a
/// whole word (`read_file`, `getUser`, `list`; not `listen`).
pub const READ_VERBS: [&str; 7] = ["read", "get", "list", "search", "describe", "show", "find"];

/// The glob that `safe` denies when none of a server's tools is read-only:
/// an empty allow list would allow everything, and deny always wins.
pub const DENY_ALL: &str = "*";

/// One tool, as the starter profiles need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolInfo {
    /// Its name, as the server gives it.
    pub name: String,
    /// Whether its annotations say `readOnlyHint: true`.
    pub read_only: bool,
}

/// What one server offers, for the starter profiles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerInventory {
    /// The server's name in the config.
    pub server: String,
    /// Its tools.
    pub tools: Vec<ToolInfo>,
}

/// Whether `name` starts with one of [`READ_VERBS`] as a whole word: the
/// verb (any case) is the whole name or is followed by something other than
/// a lowercase letter (`_`, `-`, `.`, a digit, or a capital as in `getUser`).
pub fn has_read_verb(name: &str) -> bool {
    READ_VERBS.iter().any(|verb| {
        name.get(..verb.len()).is_some_and(|head| head.eq_ignore_ascii_case(verb))
            && !name[verb.len()..].starts_with(|c: char| c.is_ascii_lowercase())
    })
}

/// Whether the `safe` profile allows the tool.
pub fn is_safe(tool: &ToolInfo) -> bool {
    tool.read_only || has_read_verb(&tool.name)
}

/// The `safe` and `dev` profiles for these servers. `safe` allows, per
/// server, only the tools that [`is_safe`] accepts, by name (or denies
/// [`DENY_ALL`] when there are none), and every prompt and resource; `dev`
/// allows everything. Use `safe` as the default profile.
pub fn starter_profiles(inventories: &[ServerInventory]) -> IndexMap<String, Profile> {
    let mut safe = Profile {
        description: "Read-only tools (readOnlyHint, or a name starting with read, get, list, search, describe, show or find), every prompt and resource".into(),
        servers: IndexMap::new(),
        ..Profile::default()
    };
    let mut dev = Profile {
        description: "Everything every server offers".into(),
        servers: IndexMap::new(),
        ..Profile::default()
    };
    for inventory in inventories {
        let mut allow: Vec<String> = Vec::new();
        for tool in inventory.tools.iter().filter(|tool| is_safe(tool)) {
            if !allow.contains(&tool.name) {
                allow.push(tool.name.clone());
            }
        }
        let tools = if allow.is_empty() {
            Filter { allow: Vec::new(), deny: vec![DENY_ALL.into()] }
        } else {
            Filter { allow, deny: Vec::new() }
        };
        safe.servers.insert(inventory.server.clone(), ServerFilters { tools, ..ServerFilters::default() });
        dev.servers.insert(inventory.server.clone(), ServerFilters::default());
    }
    IndexMap::from([("safe".to_owned(), safe), ("dev".to_owned(), dev)])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, read_only: bool) -> ToolInfo {
        ToolInfo { name: name.into(), read_only }
    }

    #[test]
    fn read_verbs_are_whole_words() {
        for name in ["read_file", "getUser", "list", "search-issues", "Describe_table", "show.logs", "find2", "GET_X"] {
            assert!(has_read_verb(name), "{name}");
        }
        for name in ["listen", "reader", "getaway", "write_file", "delete", "", "re", "finder"] {
            assert!(!has_read_verb(name), "{name}");
        }
    }

    #[test]
    fn safe_allows_read_only_tools_or_denies_all() {
        let profiles = starter_profiles(&[
            ServerInventory {
                server: "fs".into(),
                tools: vec![
                    tool("read_file", false),
                    tool("write_file", false),
                    tool("stat", true),
                    tool("stat", true),
                ],
            },
            ServerInventory { server: "shell".into(), tools: vec![tool("run", false)] },
        ]);
        assert_eq!(profiles.keys().collect::<Vec<_>>(), ["safe", "dev"]);
        let safe = &profiles["safe"].servers;
        assert_eq!(safe["fs"].tools, Filter { allow: vec!["read_file".into(), "stat".into()], deny: vec![] });
        assert_eq!(safe["shell"].tools, Filter { allow: vec![], deny: vec!["*".into()] });
        assert_eq!(safe["fs"].prompts, Filter::default());
        assert_eq!(profiles["dev"].servers["shell"], ServerFilters::default());
    }
}
