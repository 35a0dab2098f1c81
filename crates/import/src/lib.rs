//! Converts other MCP gateways' configuration into a Warden config, so their
//! users switch in one command (`warden import <mcpmon|mcp2|mcptools> FILE...`).
//!
//! - **mcpmon** (`.mcpmon.yaml`, its gateway mode): `servers:` by name, each a
//!   command (text) or `{command|cmd, args, env, watch, extensions|ext}`, and
//!   `settings: {log_level, notify_on_change}`. Backends become stdio servers;
//!   names are prefixed only with several servers, as mcpmon does, but with
//!   `__` instead of `::`. Watch settings are dropped, with a warning.
//! - **mcp2** (one YAML or JSON file): `defaultProfile`, `servers` (with
//!   `displayName` and `transport: {kind, command, args, env, url, headers}`),
//!   `profiles`, `hub: {enabled, prefixServerIDs}`, `exposePerServer`. Warden's
//!   schema is mcp2's, so everything carries over; `prefixServerIDs` becomes
//!   `naming.prefix`.
//! - **mcptools** (`mcpt tools|prompts|resources --format json` output, one
//!   file per list, `NAME=FILE` or the server named by the file): a server per
//!   name with a placeholder command, and the starter profiles `safe` and
//!   `dev` (see [`starter_profiles`]).
//!
//! - **MCP Sentinel** (a `security_policy.yaml` rule list, see
//!   [`import_sentinel`]): each rule becomes a call rule with conditions on
//!   its argument; the default is `allow`; Python regexes are translated or
//!   refused.
//! - **IronCurtain** (`compiled-policy.json`, `tool-annotations.json`,
//!   `dynamic-lists.json`, and its settings from the command line, see
//!   [`import_ironcurtain`]): rules, annotations and lists become the
//!   `policy:` section, strict and denying by default.
//!
//! [`merge`] adds an import to an existing config instead (`--merge`): see
//! its module for what is added, kept and refused.
//!
//! Every import is checked with Warden's own loader before it is returned.
//! Anything that cannot be carried over, or that behaves differently in
//! Warden, is reported in [`Imported::warnings`]; malformed input is an error
//! naming the file and the place.

#![warn(missing_docs)]

mod error;
mod glob;
mod ironcurtain;
mod mcp2;
mod mcpmon;
mod mcptools;
mod merge;
mod names;
mod node;
mod pyregex;
mod sandboxes;
mod sentinel;
mod starter;
mod yaml;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

pub use error::ImportError;
pub use ironcurtain::{IronCurtainInput, parse_allowed_domains};
pub use mcptools::PLACEHOLDER_COMMAND;
pub use merge::{Merged, merge, read_config};
/// Public for the fuzz target; imports use it on MCP Sentinel's patterns.
pub use pyregex::translate as translate_python_regex;
pub use starter::{DENY_ALL, READ_VERBS, ServerInventory, ToolInfo, has_read_verb, is_safe, starter_profiles};
use warden_config::Config;
pub use yaml::to_yaml;

/// The gateway whose configuration is imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// mcpmon's gateway config (`.mcpmon.yaml`).
    Mcpmon,
    /// mcp2's config (YAML or JSON).
    Mcp2,
    /// f/mcptools' JSON listings of tools, prompts and resources.
    Mcptools,
}

impl Source {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Source::Mcpmon => "mcpmon",
            Source::Mcp2 => "mcp2",
            Source::Mcptools => "mcptools",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Source {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "mcpmon" => Ok(Source::Mcpmon),
            "mcp2" => Ok(Source::Mcp2),
            "mcptools" | "mcpt" => Ok(Source::Mcptools),
            other => Err(format!("unknown import source {other:?} (expected mcpmon, mcp2 or mcptools)")),
        }
    }
}

/// The result of an import.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The Warden config; it passes Warden's validation.
    pub config: Config,
    /// What was dropped or behaves differently, one sentence each, for the
    /// user to read.
    pub warnings: Vec<String>,
    /// Where the config came from, e.g. `mcp2 config ./mcp2.yaml`.
    pub origin: String,
}

impl Imported {
    /// The config as YAML, headed by comments saying where it was imported
    /// from and listing the warnings.
    pub fn to_yaml(&self) -> Result<String, ImportError> {
        let mut header = format!(
            "Warden config imported from {} by `warden import`.\nCheck it with `warden validate --config <this file>`.\n",
            self.origin
        );
        if !self.warnings.is_empty() {
            header.push_str("\nReview:\n");
            for warning in &self.warnings {
                header.push_str(&format!("- {warning}\n"));
            }
        }
        Ok(format!("{}\n{}", yaml::comment(&header), to_yaml(&self.config)?))
    }
}

/// Splits a file argument of the form `NAME=FILE` (an mcptools inventory
/// for server `NAME`) at its first `=`; any other argument is just a file.
/// The caller reads the file part and passes the whole argument to
/// [`import`] as the path.
pub fn split_name(arg: &str) -> (Option<&str>, &str) {
    match arg.split_once('=') {
        Some((name, path)) => (Some(name), path),
        None => (None, arg),
    }
}

/// Converts `files` (each a path as given on the command line and its text)
/// from `source`'s format into a Warden config.
///
/// mcpmon and mcp2 take one file. mcptools takes any number of listings;
/// a path may be `NAME=FILE` to name the server (see [`split_name`]).
pub fn import(source: Source, files: &[(PathBuf, String)]) -> Result<Imported, ImportError> {
    if files.is_empty() {
        return Err(ImportError::NoFiles { format: source.name() });
    }
    let imported = match source {
        Source::Mcpmon | Source::Mcp2 => {
            let [(path, text)] = files else {
                return Err(ImportError::OneFile { format: source.name(), count: files.len() });
            };
            if let (Some(name), _) = split_name(&path.to_string_lossy()) {
                return Err(ImportError::Invalid {
                    path: path.clone(),
                    message: format!(
                        "{name}=FILE names an mcptools inventory's server; a {source} config names its own servers"
                    ),
                });
            }
            if source == Source::Mcpmon { mcpmon::import(path, text)? } else { mcp2::import(path, text)? }
        }
        Source::Mcptools => mcptools::import(files)?,
    };
    yaml::check(&imported.config, &imported.origin)?;
    Ok(imported)
}

/// Converts an MCP Sentinel policy file (`security_policy.yaml`; `path` as
/// given on the command line, for messages) into a Warden config whose
/// `policy:` section holds its rules and whose `rateLimits:` carry
/// Sentinel's circuit breaker.
pub fn import_sentinel(path: &Path, text: &str) -> Result<Imported, ImportError> {
    let imported = sentinel::import(path, text)?;
    yaml::check(&imported.config, &imported.origin)?;
    Ok(imported)
}

/// Converts IronCurtain's compiled policy, tool annotations and dynamic
/// lists, with the settings IronCurtain reads from its own configuration,
/// into a Warden config whose `policy:` section holds them.
pub fn import_ironcurtain(input: IronCurtainInput) -> Result<Imported, ImportError> {
    let imported = ironcurtain::import(&input)?;
    yaml::check(&imported.config, &imported.origin)?;
    Ok(imported)
}

/// Converts IronCurtain's `mcp-servers.json` into a Warden config: its
/// servers, each with its OS sandbox (`filesystem`, `network.allowedDomains`)
/// in `mode` (IronCurtain's `sandboxPolicy`, `warn` by default there).
pub fn import_ironcurtain_servers(
    path: &Path,
    text: &str,
    mode: warden_config::SandboxMode,
) -> Result<Imported, ImportError> {
    let imported = sandboxes::import(path, text, mode)?;
    yaml::check(&imported.config, &imported.origin)?;
    Ok(imported)
}

/// How a file is shown in messages and headers.
pub(crate) fn shown(path: &Path) -> String {
    path.display().to_string()
}
