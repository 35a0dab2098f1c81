//! IronCurtain's `mcp-servers.json`: its servers, each with the OS sandbox
//! IronCurtain runs it in (`sandbox: false`, omitted for the restrictive
//! default, or `{filesystem, network}`), and its `sandboxPolicy`.

use std::path::Path;

use indexmap::IndexMap;
use warden_config::{
    Config, SandboxEnv, SandboxFilesystem, SandboxMode, SandboxNetwork, SandboxPolicy, SandboxSetting, ServerConfig,
    Transport,
};

use crate::error::ImportError;
use crate::mcpmon::escape;
use crate::names::Renames;
use crate::node::{At, Doc, Node, unknown_keys};
use crate::{Imported, shown};

/// Converts IronCurtain's `mcp-servers.json` (`path` for messages) with its
/// `sandboxPolicy` (`enforce`, or IronCurtain's default `warn`).
pub(crate) fn import(path: &Path, text: &str, mode: SandboxMode) -> Result<Imported, ImportError> {
    let doc = Doc::new(path, text);
    let root = doc.parse_json()?;
    let servers = doc.map(&root, &At::root())?.cloned().unwrap_or_default();
    let mut config = Config::default();
    let mut warnings = Vec::new();
    let mut renames = Renames::default();
    let mut reads_by_default = Vec::new();
    for (original, node) in &servers {
        let at = At::root().key(original);
        let name = renames.server(&doc, &at, original, &mut warnings)?;
        let Some(server) = doc.map(node, &at)? else { return Err(doc.error(&at, "expected a server")) };
        let field = |key: &str| server.get(key).unwrap_or(&Node::Null);
        let command =
            doc.text(field("command"), &at.key("command"))?.ok_or_else(|| doc.error(&at, "has no command"))?;
        let args = doc.texts(field("args"), &at.key("args"))?.iter().map(|arg| escape(arg, None)).collect();
        let env = doc.text_map(field("env"), &at.key("env"))?.into_iter().map(|(k, v)| (k, escape(&v, None))).collect();
        let mut imported =
            ServerConfig::new(Transport::Stdio { command: escape(&command, None), args, env, cwd: None });
        imported.display_name = doc.text(field("description"), &at.key("description"))?;
        let ignored: Vec<&str> = unknown_keys(server, &["command", "args", "env", "description", "sandbox"])
            .into_iter()
            .filter(|key| !key.starts_with('_'))
            .collect();
        if !ignored.is_empty() {
            warnings.push(format!("{at}: ignored {}", ignored.join(", ")));
        }
        imported.sandbox = Some(match field("sandbox") {
            Node::Bool(false) => SandboxSetting::Enabled(false),
            Node::Null => SandboxSetting::Policy(Box::new(SandboxPolicy { mode, ..SandboxPolicy::default() })),
            node => SandboxSetting::Policy(Box::new(policy(&doc, node, &at.key("sandbox"), mode, &mut warnings)?)),
        });
        if !matches!(imported.sandbox, Some(SandboxSetting::Enabled(false))) {
            reads_by_default.push(name.clone());
        }
        config.servers.insert(name, imported);
    }
    if !reads_by_default.is_empty() {
        warnings.push(format!(
            "IronCurtain's sandbox lets a server read everything but denyRead; Warden's shows only the system directories and `filesystem.read`: add what {} must read (its project, its runtime if outside /usr)",
            reads_by_default.join(", ")
        ));
    }
    Ok(Imported { config, warnings, origin: format!("IronCurtain servers {}", shown(path)) })
}

fn policy(
    doc: &Doc<'_>,
    node: &Node,
    at: &At,
    mode: SandboxMode,
    warnings: &mut Vec<String>,
) -> Result<SandboxPolicy, ImportError> {
    let Some(sandbox) = doc.map(node, at)? else { return Ok(SandboxPolicy { mode, ..SandboxPolicy::default() }) };
    let none = Node::Null;
    let mut network = SandboxNetwork::default();
    match sandbox.get("network").unwrap_or(&none) {
        Node::Null | Node::Bool(false) => {}
        node => {
            let at = at.key("network");
            let map = doc.map(node, &at)?.cloned().unwrap_or_default();
            let list = |key: &str| doc.texts(map.get(key).unwrap_or(&none), &at.key(key));
            network.allow = list("allowedDomains")?;
            network.deny = list("deniedDomains")?;
        }
    }
    let at_fs = at.key("filesystem");
    let fs = doc.map(sandbox.get("filesystem").unwrap_or(&none), &at_fs)?.cloned().unwrap_or_else(IndexMap::new);
    let list = |key: &str| doc.texts(fs.get(key).unwrap_or(&none), &at_fs.key(key));
    let filesystem =
        SandboxFilesystem { read: list("allowRead")?, write: list("allowWrite")?, deny: list("denyRead")? };
    let deny_write = list("denyWrite")?;
    if !deny_write.is_empty() {
        warnings.push(format!(
            "{at_fs}.denyWrite ({}) has no Warden equivalent: only `filesystem.write` paths are writable, so leave them out of it",
            deny_write.join(", ")
        ));
    }
    Ok(SandboxPolicy { mode, network, filesystem, env: SandboxEnv::default(), limits: Default::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_ironcurtains_servers_with_their_sandboxes() {
        let text = r#"{
          "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp/x"], "sandbox": false},
          "git": {"description": "Git", "command": "node", "args": ["git-mcp-server"], "env": {"MCP_TRANSPORT_TYPE": "stdio"},
                  "sandbox": {"filesystem": {"denyRead": ["~/.gnupg"], "allowWrite": ["~/src"], "denyWrite": ["~/src/.git"]},
                              "network": {"allowedDomains": ["github.com", "*.github.com"], "deniedDomains": ["gist.github.com"]}}},
          "plain": {"command": "server", "_comment": "restrictive default"}
        }"#;
        let imported = import(Path::new("mcp-servers.json"), text, SandboxMode::Enforce).unwrap();
        let servers = &imported.config.servers;
        assert_eq!(servers["filesystem"].sandbox, Some(SandboxSetting::Enabled(false)));
        let Some(SandboxSetting::Policy(git)) = &servers["git"].sandbox else { panic!("git has no policy") };
        assert_eq!(git.mode, SandboxMode::Enforce);
        assert_eq!(git.network.allow, ["github.com", "*.github.com"]);
        assert_eq!(git.network.deny, ["gist.github.com"]);
        assert_eq!(
            (git.filesystem.deny.clone(), git.filesystem.write.clone()),
            (vec!["~/.gnupg".to_owned()], vec!["~/src".to_owned()])
        );
        assert_eq!(servers["git"].display_name.as_deref(), Some("Git"));
        let Some(SandboxSetting::Policy(plain)) = &servers["plain"].sandbox else { panic!("plain has no policy") };
        assert!(plain.network.allow.is_empty());
        assert!(imported.warnings.iter().any(|w| w.contains("denyWrite")), "{:?}", imported.warnings);
        assert!(imported.warnings.iter().any(|w| w.contains("git, plain")), "{:?}", imported.warnings);
        assert!(import(Path::new("x.json"), r#"{"a": {"args": []}}"#, SandboxMode::Warn).is_err());
    }
}
