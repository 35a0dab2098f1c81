//! mcpmon's gateway config (`mcpmon --config .mcpmon.yaml`), as read by its
//! `mcpmon/config.py` (`load_config`) and `gateway.ts`:
//!
//! ```yaml
//! servers:
//!   sage: sage-mcp                  # just a command
//!   my-server:
//!     command: python               # or `cmd`; text, or a list: [python, -m, x]
//!     args: ["-m", "my_server"]
//!     env: {API_KEY: "${API_KEY}"}  # ${VAR} expanded in env values only
//!     watch: ./src/                 # restart on changes here...
//!     extensions: py,json           # ...to these (or `ext`; default py)
//! settings:
//!   log_level: info
//!   notify_on_change: true
//! ```
//!
//! `cwd` is read too, as the server's working directory. Each backend becomes
//! a stdio server; `watch` and `extensions` become its `watch:` settings
//! (mcpmon watches the directory recursively, for `py` files unless told
//! otherwise, and ignores the same kinds of directories Warden does). mcpmon prefixes tools `backend::tool`, and not at all with
//! a single backend; Warden gets `naming.prefix: multiple` and its own
//! separator, `__`.

use std::path::Path;

use indexmap::IndexMap;
use warden_config::{Config, PrefixMode, ServerConfig, Transport, Watch};

use crate::error::ImportError;
use crate::names::Renames;
use crate::node::{At, Doc, Node, unknown_keys};
use crate::{Imported, shown};

const SERVER_KEYS: [&str; 8] = ["command", "cmd", "args", "env", "cwd", "watch", "extensions", "ext"];

/// One backend, as read.
struct Backend {
    command: String,
    args: Vec<String>,
    env: IndexMap<String, String>,
    cwd: Option<String>,
    /// `watch:`, the directory to watch.
    watch: Option<String>,
    /// `extensions:` (or `ext:`), comma-separated.
    extensions: Option<String>,
}

/// Converts one mcpmon config file.
pub(crate) fn import(path: &Path, text: &str) -> Result<Imported, ImportError> {
    let doc = Doc::new(path, text);
    let root = doc.parse_yaml()?;
    let empty = IndexMap::new();
    // mcpmon reads an empty file as no servers.
    let top = doc.map(&root, &At::root())?.unwrap_or(&empty);
    let mut warnings = Vec::new();
    let ignored = unknown_keys(top, &["servers", "settings"]);
    if !ignored.is_empty() {
        warnings.push(format!("ignored {} (not mcpmon settings; mcpmon ignores them too)", ignored.join(", ")));
    }
    let settings_at = At::root().key("settings");
    if let Some(settings) = doc.map(top.get("settings").unwrap_or(&Node::Null), &settings_at)? {
        settings_warnings(settings, &mut warnings);
    }

    let mut config = Config::default();
    config.naming.prefix = PrefixMode::Multiple;
    let servers_at = At::root().key("servers");
    let servers = doc.map(top.get("servers").unwrap_or(&Node::Null), &servers_at)?.unwrap_or(&empty);
    let mut renames = Renames::default();
    let (mut watched, mut escaped, mut env_refs, mut unknown) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (original, node) in servers {
        let at = servers_at.key(original);
        let name = renames.server(&doc, &at, original, &mut warnings)?;
        let backend = backend(&doc, node, &at, &mut unknown)?;
        if backend.command.contains(char::is_whitespace) {
            warnings.push(format!(
                "{at}: command {:?} contains spaces; like mcpmon, Warden runs it as one program name: move its arguments to args",
                backend.command
            ));
        }
        let watch = match (&backend.watch, &backend.extensions) {
            (Some(path), extensions) => {
                if backend.cwd.is_some() && !path.starts_with(['/', '~']) {
                    watched.push(format!(
                        "{at}.watch ({path}) is relative: mcpmon resolved it against its own working directory, Warden resolves it against the server's cwd; check the path"
                    ));
                }
                let extensions = extensions.as_deref().unwrap_or("py");
                let extensions = extensions.split(',').map(|ext| ext.trim().trim_start_matches('.').to_owned());
                Some(Watch {
                    extensions: extensions.filter(|ext| !ext.is_empty()).collect(),
                    ..Watch::new(vec![path.clone()])
                })
            }
            (None, Some(extensions)) => {
                watched.push(format!(
                    "{at} has extensions ({extensions}) but no watch: mcpmon watches nothing for it, nor does Warden"
                ));
                None
            }
            (None, None) => None,
        };
        let mut escape_in = |field: &str, text: &str| {
            let written = escape(text, None);
            if written != text {
                escaped.push(format!("{at}.{field}"));
            }
            written
        };
        let command = escape_in("command", &backend.command);
        let args = backend.args.iter().map(|arg| escape_in("args", arg)).collect();
        let cwd = backend.cwd.as_deref().map(|cwd| escape_in("cwd", cwd).into());
        let env = backend.env.iter().map(|(key, value)| (key.clone(), escape(value, Some(&mut env_refs)))).collect();
        let transport = Transport::Stdio { command, args, env, cwd };
        config.servers.insert(name, ServerConfig { watch, ..ServerConfig::new(transport) });
    }

    if config.servers.is_empty() {
        warnings.push("the file defines no servers".into());
    }
    warnings.push(
        "mcpmon names tools backend::tool when it runs several backends; Warden names them backend__tool, because clients reject ':' in tool names, and, like mcpmon, leaves them unprefixed while there is only one server (naming.prefix: multiple)".into(),
    );
    if !unknown.is_empty() {
        warnings.push(format!("ignored {} (mcpmon does not read them either)", unknown.join(", ")));
    }
    warnings.extend(watched);
    if !escaped.is_empty() {
        escaped.dedup();
        warnings.push(format!(
            "'$' is doubled in {}: Warden expands ${{VAR}} there, mcpmon passed the text as written",
            escaped.join(", ")
        ));
    }
    if !env_refs.is_empty() {
        env_refs.dedup();
        warnings.push(format!(
            "env values use {}: Warden expands them when it loads the config, like mcpmon, but refuses to start when one is unset (mcpmon kept the text as written); write ${{VAR:-}} for an empty default",
            env_refs.iter().map(|name| format!("${{{name}}}")).collect::<Vec<_>>().join(", ")
        ));
    }
    Ok(Imported { config, warnings, origin: format!("mcpmon config {}", shown(path)) })
}

/// Warnings for `settings:`, none of which has a place in Warden's config.
fn settings_warnings(settings: &IndexMap<String, Node>, warnings: &mut Vec<String>) {
    for (key, value) in settings {
        let value = match value {
            Node::Text(text) | Node::Number(text) => text.clone(),
            Node::Bool(value) => value.to_string(),
            other => other.kind().to_owned(),
        };
        warnings.push(match key.as_str() {
            "log_level" => format!(
                "settings.log_level ({value}) is not part of Warden's config: start Warden with --log-level (or WARDEN_LOG) instead"
            ),
            "notify_on_change" => format!("settings.notify_on_change ({value}) has no Warden equivalent and was dropped"),
            other => format!("ignored settings.{other} (not an mcpmon setting)"),
        });
    }
}

/// Reads one entry of `servers:`.
fn backend(doc: &Doc<'_>, node: &Node, at: &At, unknown: &mut Vec<String>) -> Result<Backend, ImportError> {
    let mut backend = Backend {
        command: String::new(),
        args: Vec::new(),
        env: IndexMap::new(),
        cwd: None,
        watch: None,
        extensions: None,
    };
    let fields = match node {
        Node::Text(command) => {
            backend.command = command.clone();
            return check_command(doc, backend, at);
        }
        Node::Map(fields) => fields,
        other => {
            return Err(doc.error(
                at,
                format!(
                    "expected a command, or a mapping with command, args, env, watch and extensions; found {}",
                    other.kind()
                ),
            ));
        }
    };
    // `command` wins over `cmd`, as in mcpmon (`cfg.get("command", cfg.get("cmd"))`).
    let (key, command) = match (fields.get("command"), fields.get("cmd")) {
        (Some(command), _) => ("command", command),
        (None, Some(command)) => ("cmd", command),
        (None, None) => return Err(doc.error(at, "has no command")),
    };
    let command_at = at.key(key);
    match command {
        Node::Text(command) => backend.command = command.clone(),
        Node::List(_) => {
            let mut words = doc.texts(command, &command_at)?.into_iter();
            backend.command = words.next().ok_or_else(|| doc.error(&command_at, "the command list is empty"))?;
            backend.args.extend(words);
        }
        Node::Null => return Err(doc.error(&command_at, "has no command")),
        other => return Err(doc.error(&command_at, format!("expected text or a list, found {}", other.kind()))),
    }
    if let Some(args) = fields.get("args") {
        backend.args.extend(doc.texts(args, &at.key("args"))?);
    }
    if let Some(env) = fields.get("env") {
        backend.env = env_map(doc, env, &at.key("env"))?;
    }
    if let Some(cwd) = fields.get("cwd") {
        backend.cwd = doc.text(cwd, &at.key("cwd"))?;
    }
    if let Some(watch) = fields.get("watch") {
        backend.watch = doc.text(watch, &at.key("watch"))?.filter(|path| !path.trim().is_empty());
    }
    // `extensions` wins over `ext`, as in mcpmon.
    for key in ["ext", "extensions"] {
        if let Some(value) = fields.get(key) {
            backend.extensions = doc.text(value, &at.key(key))?.or(backend.extensions.take());
        }
    }
    unknown.extend(unknown_keys(fields, &SERVER_KEYS).into_iter().map(|key| at.key(key).to_string()));
    check_command(doc, backend, at)
}

fn check_command(doc: &Doc<'_>, backend: Backend, at: &At) -> Result<Backend, ImportError> {
    if backend.command.trim().is_empty() { Err(doc.error(at, "the command is empty")) } else { Ok(backend) }
}

/// `env:` values as mcpmon passes them (`str(value)`: `True`, `8080`).
fn env_map(doc: &Doc<'_>, node: &Node, at: &At) -> Result<IndexMap<String, String>, ImportError> {
    let Some(map) = doc.map(node, at)? else { return Ok(IndexMap::new()) };
    map.iter()
        .map(|(key, value)| {
            let text = match value {
                Node::Bool(true) => "True".to_owned(),
                Node::Bool(false) => "False".to_owned(),
                other => doc.text(other, &at.key(key))?.ok_or_else(|| doc.error(&at.key(key), "has no value"))?,
            };
            Ok((key.clone(), text))
        })
        .collect()
}

/// `text` written so that Warden's `${VAR}` expansion gives it back: `$`
/// before `{` or `$` is doubled. With `refs`, `${NAME}` references (which
/// mcpmon expands in env values) are kept, and their names collected.
pub(crate) fn escape(text: &str, mut refs: Option<&mut Vec<String>>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(refs) = refs.as_deref_mut()
            && let Some(name) = reference(after)
        {
            refs.push(name.to_owned());
            out.push_str(&rest[at..at + name.len() + 3]);
            rest = &after[name.len() + 2..];
            continue;
        }
        out.push_str(if after.starts_with(['{', '$']) { "$$" } else { "$" });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The `NAME` of `{NAME}` at the start of `text`, as mcpmon's `\$\{(\w+)\}`.
fn reference(text: &str) -> Option<&str> {
    let body = text.strip_prefix('{')?;
    let end = body.find('}')?;
    let name = &body[..end];
    (!name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escapes_what_warden_would_expand() {
        let lookup = |_: &str| Some("X".to_owned());
        for text in ["plain", "$HOME", "${HOME}", "a$$b", "$", "${", "cost: $5", "$${x}"] {
            let written = escape(text, None);
            assert_eq!(warden_config::expand(&written, &lookup).unwrap(), text, "{text} as {written}");
        }
        let mut refs = Vec::new();
        assert_eq!(escape("${TOKEN}-${A:-b}-$$", Some(&mut refs)), "${TOKEN}-$${A:-b}-$$$");
        assert_eq!(refs, ["TOKEN"]);
    }
}
