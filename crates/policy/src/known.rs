//! Argument annotations shipped for the MCP servers people run (the
//! reference servers, GitHub, SQLite and Postgres, shell and desktop
//! servers, browsers), so protected paths and URL checks apply without an
//! LLM or a hand-written annotation. See `known/servers.yaml`.
//!
//! A configured server gets the entry whose `packages` its command or one
//! of its arguments names, unless `policy.annotations` has an entry for that
//! server, which replaces the shipped one for it.

use std::sync::OnceLock;

use indexmap::IndexMap;
use serde::Deserialize;
use warden_config::{Config, ToolAnnotation, Transport};

/// The shipped table, as written.
const TABLE: &str = include_str!("known/servers.yaml");

/// One known server.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct KnownServer {
    /// npm / PyPI packages, Docker images or programs that start it.
    packages: Vec<String>,
    /// Its tools' annotations.
    pub tools: IndexMap<String, ToolAnnotation>,
}

/// The shipped table, parsed once. A table that does not parse is a bug
/// caught by this module's tests; at run time it then ships nothing.
fn table() -> &'static IndexMap<String, KnownServer> {
    static TABLE_PARSED: OnceLock<IndexMap<String, KnownServer>> = OnceLock::new();
    TABLE_PARSED.get_or_init(|| match serde_saphyr::from_str(TABLE) {
        Ok(table) => table,
        Err(err) => {
            tracing::error!("the shipped server annotations do not parse: {err}");
            IndexMap::new()
        }
    })
}

/// The known server `transport` starts, with the name of its entry.
pub(crate) fn identify(transport: &Transport) -> Option<(&'static str, &'static KnownServer)> {
    let Transport::Stdio { command, args, .. } = transport else { return None };
    let program = std::path::Path::new(command).file_name().and_then(|name| name.to_str()).unwrap_or(command);
    let words = std::iter::once(program).chain(args.iter().map(String::as_str));
    for word in words {
        for (name, known) in table() {
            if known.packages.iter().any(|package| names(word, package)) {
                return Some((name.as_str(), known));
            }
        }
    }
    None
}

/// Whether `word` of a command line names `package`: exactly, with a version
/// or tag (`pkg@1.2`, `pkg==1.2`, `image:tag`), or as a directory of a path
/// (`.../node_modules/pkg/dist/index.js`).
fn names(word: &str, package: &str) -> bool {
    if let Some(rest) = word.strip_prefix(package) {
        return rest.is_empty() || rest.starts_with(['@', ':', '=', '>', '<', '~']);
    }
    word.contains(&format!("/{package}/")) || word.ends_with(&format!("/{package}"))
}

/// The shipped annotations for every server of `config` that is known and
/// has none of its own, by server name.
pub(crate) fn annotations_for(config: &Config) -> Vec<(&str, &'static str, &'static IndexMap<String, ToolAnnotation>)> {
    let mut found = Vec::new();
    for (server, settings) in &config.servers {
        if config.policy.annotations.contains_key(server) {
            continue;
        }
        if let Some((name, known)) = identify(&settings.transport) {
            found.push((server.as_str(), name, &known.tools));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(command: &str, args: &[&str]) -> Transport {
        Transport::Stdio {
            command: command.into(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: Default::default(),
            cwd: None,
        }
    }

    #[test]
    fn the_table_parses_and_every_role_is_named() {
        let table: IndexMap<String, KnownServer> = serde_saphyr::from_str(TABLE).expect("the shipped table parses");
        assert!(table.len() >= 12, "{}", table.len());
        for (name, known) in &table {
            assert!(!known.packages.is_empty(), "{name}");
            for (tool, annotation) in &known.tools {
                assert!(annotation.side_effects.is_some(), "{name}/{tool} says whether it changes anything");
            }
        }
    }

    #[test]
    fn servers_are_known_by_package_image_or_program() {
        let cases = [
            (stdio("npx", &["-y", "@modelcontextprotocol/server-filesystem", "/home/u"]), Some("filesystem")),
            (stdio("npx", &["-y", "@modelcontextprotocol/server-filesystem@2025.8.21", "/"]), Some("filesystem")),
            (stdio("uvx", &["mcp-server-git", "--repository", "."]), Some("git")),
            (stdio("uvx", &["mcp-server-fetch==2025.4.7"]), Some("fetch")),
            (stdio("python", &["-m", "mcp_server_time"]), Some("time")),
            (stdio("/usr/local/bin/mcp-server-sqlite", &["--db-path", "x.db"]), Some("sqlite")),
            (stdio("docker", &["run", "-i", "--rm", "mcp/filesystem:latest", "/projects"]), Some("filesystem")),
            (stdio("node", &["/opt/node_modules/@modelcontextprotocol/server-memory/dist/index.js"]), Some("memory")),
            (stdio("npx", &["@wonderwhy-er/desktop-commander@latest"]), Some("desktop-commander")),
            (stdio("npx", &["@modelcontextprotocol/server-filesystem-extra"]), None),
            (stdio("my-server", &[]), None),
        ];
        for (transport, expected) in cases {
            assert_eq!(identify(&transport).map(|(name, _)| name), expected, "{transport:?}");
        }
    }
}
