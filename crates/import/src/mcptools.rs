//! f/mcptools listings: the JSON that `mcpt tools|prompts|resources SERVER
//! --format json` prints, one file per list and server. mcptools prints the
//! MCP list result, `{"tools": [{"name", "description", "inputSchema",
//! "annotations"}]}` (`{"tools": null}` when there are none), and likewise
//! `prompts` and `resources`. A bare array, a JSON-RPC response
//! (`{"result": {...}}`) and `resourceTemplates` are accepted too.
//!
//! The server is named by a `NAME=FILE` argument, or by the file:
//! `inventory/filesystem-tools.json` is server `filesystem` (a trailing
//! `-tools`, `-prompts` or `-resources`, or `_`…, is dropped; a file named
//! just `tools.json` takes its directory's name).
//!
//! Listings do not say how to start the server, so each gets the stdio
//! command [`PLACEHOLDER_COMMAND`] to fill in, and the starter profiles.

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use warden_config::{Config, ServerConfig, Transport};

use crate::error::ImportError;
use crate::names::{Renames, renamed_warning};
use crate::node::{At, Doc, Node};
use crate::starter::{ServerInventory, ToolInfo, is_safe, starter_profiles};
use crate::{Imported, shown, split_name};

/// The command written for servers imported from listings, which do not say
/// how to start them. Warden accepts it, and it fails clearly if run.
pub const PLACEHOLDER_COMMAND: &str = "CHANGE-ME";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Tools,
    Prompts,
    Resources,
    Templates,
}

impl Kind {
    const ALL: [Kind; 4] = [Kind::Tools, Kind::Prompts, Kind::Resources, Kind::Templates];

    /// The key of the MCP list result.
    fn key(self) -> &'static str {
        match self {
            Kind::Tools => "tools",
            Kind::Prompts => "prompts",
            Kind::Resources => "resources",
            Kind::Templates => "resourceTemplates",
        }
    }

    /// The field every item needs.
    fn id_field(self) -> &'static str {
        match self {
            Kind::Tools | Kind::Prompts => "name",
            Kind::Resources => "uri",
            Kind::Templates => "uriTemplate",
        }
    }

    /// What a bare array of `item` lists, by the fields only that kind has.
    fn of_item(item: &Node) -> Option<Kind> {
        let fields = item.as_map()?;
        let has = |key: &str| fields.contains_key(key);
        if has("inputSchema") || has("annotations") || has("outputSchema") {
            Some(Kind::Tools)
        } else if has("uriTemplate") {
            Some(Kind::Templates)
        } else if has("uri") {
            Some(Kind::Resources)
        } else if has("arguments") {
            Some(Kind::Prompts)
        } else {
            None
        }
    }
}

/// What the listings say about one server.
#[derive(Default)]
struct Listed {
    /// The file each kind came from.
    files: IndexMap<&'static str, String>,
    tools: Option<Vec<ToolInfo>>,
    prompts: usize,
    resources: usize,
}

/// Converts mcptools listings, one file per list.
pub(crate) fn import(files: &[(PathBuf, String)]) -> Result<Imported, ImportError> {
    let mut servers: IndexMap<String, Listed> = IndexMap::new();
    let mut renames = Renames::default();
    let mut warnings = Vec::new();
    for (arg, text) in files {
        let arg_text = arg.to_string_lossy();
        let (given, file) = split_name(&arg_text);
        let doc = Doc::new(arg, text);
        let hint = kind_hint(Path::new(file));
        let original = match given {
            Some("") => return Err(invalid(arg, "the server name before '=' is empty")),
            Some(name) => name.to_owned(),
            None => server_name(Path::new(file)).ok_or_else(|| {
                invalid(arg, "cannot tell which server this lists: name it SERVER-tools.json, or pass SERVER=FILE")
            })?,
        };
        let name = match renames.add(&original) {
            Ok(None) => original.clone(),
            Ok(Some(name)) => {
                if !servers.contains_key(&name) {
                    warnings.push(renamed_warning(&original, &name));
                }
                name
            }
            Err(other) => {
                return Err(invalid(arg, format!("servers {other:?} and {original:?} would get the same Warden name")));
            }
        };
        let root = doc.parse_json().map_err(|err| match err {
            ImportError::Parse { path, message } => {
                ImportError::Parse { path, message: format!("{message} (save mcptools listings with --format json)") }
            }
            other => other,
        })?;
        let listed = servers.entry(name.clone()).or_default();
        for (kind, items, at) in lists(&doc, &root, hint)? {
            if let Some(first) = listed.files.insert(kind.key(), shown(arg)) {
                return Err(invalid(
                    arg,
                    format!("server {name:?} already has a {} listing, from {first}", kind.key()),
                ));
            }
            read_items(&doc, kind, items, &at, listed)?;
        }
    }

    let mut config = Config::default();
    let mut inventories = Vec::new();
    for (name, listed) in &servers {
        let transport =
            Transport::Stdio { command: PLACEHOLDER_COMMAND.into(), args: Vec::new(), env: IndexMap::new(), cwd: None };
        config.servers.insert(name.clone(), ServerConfig::new(transport));
        inventories.push(ServerInventory { server: name.clone(), tools: listed.tools.clone().unwrap_or_default() });
        warnings.push(summary(name, listed));
    }
    config.profiles = starter_profiles(&inventories);
    config.default_profile = Some("safe".into());
    warnings.insert(
        0,
        format!(
            "mcptools listings do not say how to start a server: {} got the placeholder command {PLACEHOLDER_COMMAND}; replace it with the real command (and args, env), or an http transport, before serving",
            servers.keys().cloned().collect::<Vec<_>>().join(", ")
        ),
    );
    let origin =
        format!("mcptools listings {}", files.iter().map(|(path, _)| shown(path)).collect::<Vec<_>>().join(", "));
    Ok(Imported { config, warnings, origin })
}

fn invalid(path: &Path, message: impl Into<String>) -> ImportError {
    ImportError::Invalid { path: path.into(), message: message.into() }
}

/// One list found in a file: its kind, its items and where it is.
type List<'n> = (Kind, &'n [Node], At);

/// The lists in one file: a list result object (one or more keys), a
/// JSON-RPC response around one, or a bare array.
fn lists<'n>(doc: &Doc<'_>, root: &'n Node, hint: Option<Kind>) -> Result<Vec<List<'n>>, ImportError> {
    let mut at = At::root();
    let mut node = root;
    if let Node::Map(fields) = node
        && let Some(result) = fields.get("result")
        && fields.contains_key("jsonrpc")
    {
        at = at.key("result");
        node = result;
    }
    match node {
        Node::List(items) => {
            let kind = hint.or_else(|| items.first().and_then(Kind::of_item));
            match kind {
                Some(kind) => Ok(vec![(kind, items.as_slice(), at)]),
                None if items.is_empty() => Ok(Vec::new()),
                None => Err(doc.error(
                    &at,
                    "cannot tell whether this lists tools, prompts or resources: name the file SERVER-tools.json (or -prompts, -resources)",
                )),
            }
        }
        Node::Map(fields) => {
            let mut found = Vec::new();
            for kind in Kind::ALL {
                let Some(list) = fields.get(kind.key()) else { continue };
                let list_at = at.key(kind.key());
                match list {
                    Node::List(items) => found.push((kind, items.as_slice(), list_at)),
                    Node::Null => found.push((kind, &[][..], list_at)),
                    other => return Err(doc.error(&list_at, format!("expected a list, found {}", other.kind()))),
                }
            }
            if found.is_empty() {
                let keys: Vec<&str> = fields.keys().map(String::as_str).collect();
                return Err(doc.error(
                    &at,
                    format!(
                        "expected a tools, prompts or resources list (mcpt tools SERVER --format json), found keys {}",
                        if keys.is_empty() { "none".into() } else { keys.join(", ") }
                    ),
                ));
            }
            Ok(found)
        }
        other => Err(doc.error(&at, format!("expected a list result or an array, found {}", other.kind()))),
    }
}

/// Checks every item of a list and records what the profiles need.
fn read_items(doc: &Doc<'_>, kind: Kind, items: &[Node], at: &At, listed: &mut Listed) -> Result<(), ImportError> {
    let mut tools = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let at = at.index(index);
        let Some(fields) = item.as_map() else {
            return Err(doc.error(&at, format!("expected an object, found {}", item.kind())));
        };
        let id_at = at.key(kind.id_field());
        let id = doc.text(fields.get(kind.id_field()).unwrap_or(&Node::Null), &id_at)?.unwrap_or_default();
        if id.is_empty() {
            return Err(doc.error(&at, format!("has no {}", kind.id_field())));
        }
        if kind == Kind::Tools {
            let annotations_at = at.key("annotations");
            let annotations = doc.map(fields.get("annotations").unwrap_or(&Node::Null), &annotations_at)?;
            let hint = match annotations.and_then(|a| a.get("readOnlyHint")) {
                Some(hint) => doc.bool(hint, &annotations_at.key("readOnlyHint"))?,
                None => None,
            };
            tools.push(ToolInfo { name: id, read_only: hint == Some(true) });
        }
    }
    match kind {
        Kind::Tools => listed.tools = Some(tools),
        Kind::Prompts => listed.prompts += items.len(),
        Kind::Resources | Kind::Templates => listed.resources += items.len(),
    }
    Ok(())
}

/// The kind a file name announces (`x-tools.json`, `tools.json`).
fn kind_hint(file: &Path) -> Option<Kind> {
    let stem = file.file_stem()?.to_str()?.to_ascii_lowercase();
    [Kind::Tools, Kind::Prompts, Kind::Resources].into_iter().find(|kind| {
        let word = kind.key().to_ascii_lowercase();
        stem == word || ["-", "_", "."].iter().any(|sep| stem.ends_with(&format!("{sep}{word}")))
    })
}

/// The server a file name announces: its stem without a kind suffix, or its
/// directory's name when the stem is only the kind.
fn server_name(file: &Path) -> Option<String> {
    let stem = file.file_stem()?.to_string_lossy().into_owned();
    let lower = stem.to_ascii_lowercase();
    for word in ["tools", "prompts", "resources"] {
        for sep in ["-", "_", "."] {
            if lower.ends_with(&format!("{sep}{word}")) {
                return Some(stem[..stem.len() - word.len() - 1].to_owned()).filter(|name| !name.is_empty());
            }
        }
        if lower == word {
            let dir = file.parent()?.file_name()?.to_string_lossy().into_owned();
            return Some(dir).filter(|name| !name.is_empty());
        }
    }
    Some(stem).filter(|name| !name.is_empty())
}

/// One sentence on what `safe` lets through for a server.
fn summary(name: &str, listed: &Listed) -> String {
    let others = match (listed.prompts, listed.resources) {
        (0, 0) => String::new(),
        (prompts, resources) => format!("; it allows all {prompts} prompts and {resources} resources"),
    };
    let Some(tools) = &listed.tools else {
        return format!("server {name}: no tools listing was given, so profile safe hides its tools{others}");
    };
    let mut safe: Vec<&str> = Vec::new();
    for tool in tools.iter().filter(|tool| is_safe(tool)) {
        if !safe.contains(&tool.name.as_str()) {
            safe.push(&tool.name);
        }
    }
    if safe.is_empty() {
        format!(
            "server {name}: none of its {} tools looks read-only, so profile safe hides them all (tools.deny: ['*']){others}",
            tools.len()
        )
    } else {
        format!(
            "server {name}: profile safe allows {} of its {} tools ({}){others}; review the list",
            safe.len(),
            tools.len(),
            safe.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_servers_after_files() {
        let name = |path: &str| server_name(Path::new(path));
        assert_eq!(name("inventory/filesystem-tools.json").as_deref(), Some("filesystem"));
        assert_eq!(name("gh_prompts.json").as_deref(), Some("gh"));
        assert_eq!(name("db.resources.json").as_deref(), Some("db"));
        assert_eq!(name("inventory/github/tools.json").as_deref(), Some("github"));
        assert_eq!(name("search.json").as_deref(), Some("search"));
        assert_eq!(name("tools.json"), None);
        assert_eq!(kind_hint(Path::new("x/fs-Prompts.json")), Some(Kind::Prompts));
        assert_eq!(kind_hint(Path::new("x/fs.json")), None);
    }
}
