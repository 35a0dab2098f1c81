//! The `sandbox:` settings: per server, and the top-level default.

use std::path::PathBuf;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A server's `sandbox:`: `true` for the restrictive default (no network,
/// read-only system, writes only to its state directory), `false` for none,
/// or the settings.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(untagged)]
pub enum SandboxSetting {
    /// `true`: the restrictive default; `false`: no sandbox.
    Enabled(bool),
    /// The settings.
    Policy(Box<SandboxPolicy>),
}

impl SandboxSetting {
    /// The policy this setting asks for, or `None` when it turns the sandbox off.
    pub fn policy(&self) -> Option<SandboxPolicy> {
        match self {
            SandboxSetting::Enabled(true) => Some(SandboxPolicy::default()),
            SandboxSetting::Enabled(false) => None,
            SandboxSetting::Policy(policy) if policy.mode == SandboxMode::Off => None,
            SandboxSetting::Policy(policy) => Some((**policy).clone()),
        }
    }
}

/// What one server may reach from inside its sandbox.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxPolicy {
    /// What happens when the sandbox cannot be set up.
    #[serde(default, skip_serializing_if = "is_default")]
    pub mode: SandboxMode,
    /// Outgoing connections (none by default).
    #[serde(default, skip_serializing_if = "is_default")]
    pub network: SandboxNetwork,
    /// Paths it may read and write, besides the system directories.
    #[serde(default, skip_serializing_if = "is_default")]
    pub filesystem: SandboxFilesystem,
    /// Its environment, cleared except for what is listed here.
    #[serde(default, skip_serializing_if = "is_default")]
    pub env: SandboxEnv,
}

/// `enforce`, `warn` or `off`.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// Refuse to start the server when the sandbox cannot be set up.
    #[default]
    Enforce,
    /// Start it unsandboxed, and say so loudly.
    Warn,
    /// No sandbox.
    Off,
}

/// The network a sandboxed server may reach.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxNetwork {
    /// `host`, `host:port`, `*.domain[:port]`, or an IP literal (`[v6]:port`
    /// for IPv6 with a port); empty means no network at all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Hosts refused even when `allow` matches them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
}

/// The files a sandboxed server may see.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxFilesystem {
    /// Readable paths (`~` expanded) besides the system directories.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<String>,
    /// Writable paths besides the server's own state directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<String>,
    /// Paths never visible, added to the built-in list (`~/.ssh`, `~/.aws`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
}

/// A sandboxed server's environment.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxEnv {
    /// Variables passed on from Warden's environment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass: Vec<String>,
    /// Variables set (after the transport's `env`).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub set: IndexMap<String, String>,
}

/// The top-level `sandbox:` section.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxDefaults {
    /// The sandbox of every stdio server that has no `sandbox:` of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<SandboxSetting>,
    /// Which mechanism confines the servers.
    #[serde(default, skip_serializing_if = "is_default")]
    pub mechanism: SandboxMechanism,
    /// The `bwrap` program (default: looked up in `PATH`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bwrap: Option<PathBuf>,
    /// Where each server's writable state directory is created
    /// (default: `~/.local/state/warden-sandbox`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_dir: Option<String>,
    /// Fixed addresses for names, consulted by the egress proxy before DNS
    /// (like `/etc/hosts`); the address checks still apply to them.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub hosts: IndexMap<String, String>,
}

/// How servers are confined.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum SandboxMechanism {
    /// bubblewrap with Landlock and seccomp inside, or Landlock and seccomp
    /// alone when user namespaces are unavailable.
    #[default]
    Auto,
    /// bubblewrap (with Landlock and seccomp inside) or nothing.
    Bwrap,
    /// Landlock and seccomp only (no namespaces; only `network: []`).
    Landlock,
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// The sandbox one server runs in, with the settings shared by all of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSandbox {
    /// The server's own policy (or the default one).
    pub policy: SandboxPolicy,
    /// The top-level settings: mechanism, `bwrap`, state directory, hosts.
    pub defaults: SandboxDefaults,
}
