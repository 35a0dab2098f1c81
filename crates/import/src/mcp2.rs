//! mcp2's config (ain3sh/mcp2, `internal/config/types.go` and `loader.go`):
//! `.json` files are JSON, anything else YAML.
//!
//! ```yaml
//! defaultProfile: safe
//! servers:
//!   github:
//!     displayName: GitHub
//!     transport: {kind: http, url: "https://…/mcp", headers: {Authorization: "Bearer ${GITHUB_TOKEN}"}}
//! profiles:
//!   safe:
//!     description: "…"
//!     servers:
//!       github: {tools: {allow: [list_repos], deny: [merge_pr]}, resources: {}, prompts: {}}
//! hub: {enabled: true, prefixServerIDs: true}
//! exposePerServer: false
//! ```
//!
//! Warden's schema uses the same names, so everything carries over. mcp2's Go
//! structs read a missing `prefixServerIDs` as false; it becomes
//! `naming.prefix` (`always` or `never`), and Warden's separator is `__`, not
//! `:`. mcp2 expands `$VAR` and `${VAR}` (`os.ExpandEnv`) in transport
//! fields; Warden only `${VAR}`, so `$VAR` is rewritten.

use std::path::Path;

use indexmap::IndexMap;
use warden_config::{Config, Filter, PrefixMode, Profile, ServerConfig, ServerFilters, Transport};

use crate::error::ImportError;
use crate::names::Renames;
use crate::node::{At, Doc, Node, unknown_keys};
use crate::{Imported, shown};

const ROOT_KEYS: [&str; 5] = ["defaultProfile", "servers", "profiles", "hub", "exposePerServer"];
const TRANSPORT_KEYS: [&str; 6] = ["kind", "command", "args", "env", "url", "headers"];

/// What the walk collects besides the config.
#[derive(Default)]
struct Notes {
    warnings: Vec<String>,
    /// Keys mcp2 does not read (it ignores them too).
    ignored: Vec<String>,
    /// `$VAR` rewritten as `${VAR}`, by place.
    rewritten: Vec<String>,
    /// Every variable referenced.
    variables: Vec<String>,
}

/// Converts one mcp2 config file.
pub(crate) fn import(path: &Path, text: &str) -> Result<Imported, ImportError> {
    let doc = Doc::new(path, text);
    let is_json = path.extension().is_some_and(|ext| ext.eq_ignore_ascii_case("json"));
    let root = if is_json { doc.parse_json()? } else { doc.parse_yaml()? };
    let empty = IndexMap::new();
    let top = doc.map(&root, &At::root())?.unwrap_or(&empty);
    let mut notes = Notes::default();
    notes.ignored.extend(unknown_keys(top, &ROOT_KEYS).into_iter().map(str::to_owned));
    let field = |key: &str| top.get(key).unwrap_or(&Node::Null);

    let mut config = Config::default();
    let mut renames = Renames::default();
    let servers_at = At::root().key("servers");
    for (original, node) in doc.map(field("servers"), &servers_at)?.unwrap_or(&empty) {
        let at = servers_at.key(original);
        let name = renames.server(&doc, &at, original, &mut notes.warnings)?;
        config.servers.insert(name, server(&doc, node, &at, &mut notes)?);
    }

    config.default_profile =
        doc.text(field("defaultProfile"), &At::root().key("defaultProfile"))?.filter(|p| !p.is_empty());
    let profiles_at = At::root().key("profiles");
    for (name, node) in doc.map(field("profiles"), &profiles_at)?.unwrap_or(&empty) {
        config.profiles.insert(name.clone(), profile(&doc, node, &profiles_at.key(name), &renames, &mut notes)?);
    }

    let hub_at = At::root().key("hub");
    let hub = doc.map(field("hub"), &hub_at)?.unwrap_or(&empty);
    notes.ignored.extend(unknown_keys(hub, &["enabled", "prefixServerIDs"]).into_iter().map(|k| format!("hub.{k}")));
    // mcp2 refuses to serve without the hub, so a working config has it on.
    if let Some(enabled) = doc.bool(hub.get("enabled").unwrap_or(&Node::Null), &hub_at.key("enabled"))? {
        config.hub.enabled = enabled;
    }
    let prefix = doc.bool(hub.get("prefixServerIDs").unwrap_or(&Node::Null), &hub_at.key("prefixServerIDs"))?;
    config.naming.prefix = if prefix == Some(true) { PrefixMode::Always } else { PrefixMode::Never };
    notes.warnings.push(match prefix {
        Some(true) => "hub.prefixServerIDs: true is written as naming.prefix: always; names change from server:tool to server__tool, because clients reject ':' in tool names".into(),
        Some(false) => "hub.prefixServerIDs: false is written as naming.prefix: never".into(),
        None => "hub.prefixServerIDs is not set, which mcp2 reads as false (names not prefixed); written as naming.prefix: never".into(),
    });
    config.expose_per_server =
        doc.bool(field("exposePerServer"), &At::root().key("exposePerServer"))?.unwrap_or_default();

    let mut warnings = notes.warnings;
    if config.servers.is_empty() {
        warnings.push("the file defines no servers".into());
    }
    if !notes.ignored.is_empty() {
        warnings.push(format!("ignored {} (mcp2 does not read them either)", notes.ignored.join(", ")));
    }
    if !notes.rewritten.is_empty() {
        warnings.push(format!(
            "$VAR is written as ${{VAR}} in {}: Warden expands only the braced form",
            notes.rewritten.join(", ")
        ));
    }
    if !notes.variables.is_empty() {
        let mut names = notes.variables;
        names.sort();
        names.dedup();
        warnings.push(format!(
            "the config uses environment variables {}: mcp2 replaced unset ones with empty text, Warden refuses to start instead (write ${{VAR:-}} for an empty default)",
            names.join(", ")
        ));
    }
    Ok(Imported { config, warnings, origin: format!("mcp2 config {}", shown(path)) })
}

/// One entry of `servers:`.
fn server(doc: &Doc<'_>, node: &Node, at: &At, notes: &mut Notes) -> Result<ServerConfig, ImportError> {
    let Some(fields) = doc.map(node, at)? else { return Err(doc.error(at, "has no transport")) };
    notes
        .ignored
        .extend(unknown_keys(fields, &["displayName", "transport"]).into_iter().map(|k| at.key(k).to_string()));
    let display_name =
        doc.text(fields.get("displayName").unwrap_or(&Node::Null), &at.key("displayName"))?.filter(|n| !n.is_empty());
    let transport_at = at.key("transport");
    let Some(transport) = doc.map(fields.get("transport").unwrap_or(&Node::Null), &transport_at)? else {
        return Err(doc.error(at, "has no transport (kind: stdio or http)"));
    };
    notes.ignored.extend(unknown_keys(transport, &TRANSPORT_KEYS).into_iter().map(|k| transport_at.key(k).to_string()));
    let get = |key: &str| transport.get(key).unwrap_or(&Node::Null);
    let kind = doc.text(get("kind"), &transport_at.key("kind"))?.unwrap_or_default();
    let (used, unused): (&[&str], &[&str]) = match kind.as_str() {
        "stdio" => (&["command", "args", "env"], &["url", "headers"]),
        "http" => (&["url", "headers"], &["command", "args", "env"]),
        "" => return Err(doc.error(&transport_at, "has no kind (stdio or http)")),
        other => {
            return Err(
                doc.error(&transport_at.key("kind"), format!("unknown kind {other:?} (expected stdio or http)"))
            );
        }
    };
    // mcp2 reads only the fields of its kind.
    for key in unused.iter().filter(|key| !matches!(get(key), Node::Null)) {
        notes.ignored.push(format!("{transport_at}.{key} (not used by kind {kind})"));
    }
    let mut expand = |field: &str, text: String| braced(text, &format!("{transport_at}.{field}"), notes);
    let transport = if used.contains(&"command") {
        let command = doc.text(get("command"), &transport_at.key("command"))?.unwrap_or_default();
        if command.trim().is_empty() {
            return Err(doc.error(&transport_at, "a stdio transport needs a command"));
        }
        let command = expand("command", command);
        let args = doc.texts(get("args"), &transport_at.key("args"))?.into_iter().map(|a| expand("args", a)).collect();
        let env = doc.text_map(get("env"), &transport_at.key("env"))?;
        let env = env.into_iter().map(|(key, value)| (key, expand("env", value))).collect();
        Transport::Stdio { command, args, env, cwd: None }
    } else {
        let url = doc.text(get("url"), &transport_at.key("url"))?.unwrap_or_default();
        if url.trim().is_empty() {
            return Err(doc.error(&transport_at, "an http transport needs a url"));
        }
        let url = expand("url", url);
        let headers = doc.text_map(get("headers"), &transport_at.key("headers"))?;
        let headers = headers.into_iter().map(|(key, value)| (key, expand("headers", value))).collect();
        Transport::Http { url, headers }
    };
    Ok(ServerConfig { display_name, ..ServerConfig::new(transport) })
}

/// One entry of `profiles:`; server names follow the servers' renames.
fn profile(doc: &Doc<'_>, node: &Node, at: &At, renames: &Renames, notes: &mut Notes) -> Result<Profile, ImportError> {
    let empty = IndexMap::new();
    let fields = doc.map(node, at)?.unwrap_or(&empty);
    notes.ignored.extend(unknown_keys(fields, &["description", "servers"]).into_iter().map(|k| at.key(k).to_string()));
    let description =
        doc.text(fields.get("description").unwrap_or(&Node::Null), &at.key("description"))?.unwrap_or_default();
    let servers_at = at.key("servers");
    let mut servers = IndexMap::new();
    for (server, node) in doc.map(fields.get("servers").unwrap_or(&Node::Null), &servers_at)?.unwrap_or(&empty) {
        let server_at = servers_at.key(server);
        let filters = doc.map(node, &server_at)?.unwrap_or(&empty);
        notes.ignored.extend(
            unknown_keys(filters, &["tools", "resources", "prompts"]).into_iter().map(|k| server_at.key(k).to_string()),
        );
        let filter = |key: &str| -> Result<Filter, ImportError> {
            let filter_at = server_at.key(key);
            let Some(lists) = doc.map(filters.get(key).unwrap_or(&Node::Null), &filter_at)? else {
                return Ok(Filter::default());
            };
            let list = |key: &str| doc.texts(lists.get(key).unwrap_or(&Node::Null), &filter_at.key(key));
            Ok(Filter { allow: list("allow")?, deny: list("deny")? })
        };
        let filters =
            ServerFilters { tools: filter("tools")?, resources: filter("resources")?, prompts: filter("prompts")? };
        servers.insert(renames.get(server), filters);
    }
    Ok(Profile { description, servers, ..Profile::default() })
}

/// `text` with Go's `$NAME` written as `${NAME}`; the variables referenced
/// either way are collected.
fn braced(text: String, place: &str, notes: &mut Notes) -> String {
    if !text.contains('$') {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 2);
    let mut rest = text.as_str();
    let mut changed = false;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let name_len = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
        if after.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            let name = &after[..name_len];
            notes.variables.push(name.to_owned());
            out.push_str(&format!("${{{name}}}"));
            changed = true;
            rest = &after[name_len..];
        } else {
            if let Some(body) = after.strip_prefix('{')
                && let Some(end) = body.find('}')
            {
                let name = body[..end].split_once(":-").map_or(&body[..end], |(name, _)| name);
                notes.variables.push(name.to_owned());
            }
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    if changed && !notes.rewritten.iter().any(|seen| seen == place) {
        notes.rewritten.push(place.to_owned());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_go_variables() {
        let mut notes = Notes::default();
        assert_eq!(braced("$HOME/x-${TOKEN}-$1-$".into(), "p", &mut notes), "${HOME}/x-${TOKEN}-$1-$");
        assert_eq!(notes.variables, ["HOME", "TOKEN"]);
        assert_eq!(notes.rewritten, ["p"]);
        assert_eq!(braced("plain".into(), "q", &mut notes), "plain");
        assert_eq!(notes.rewritten, ["p"]);
    }
}
