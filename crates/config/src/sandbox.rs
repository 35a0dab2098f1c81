//! The `sandbox:` settings: per server, and the top-level default.

use std::path::PathBuf;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A server's `sandbox:`: `true` for the restrictive default (no network,
/// read-only system, writes only to its state directory), `false` for none,
/// or the settings.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq, Eq)]
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

// By hand rather than `untagged`: an untagged enum answers every mistake
// with "data did not match any variant"; this names the misspelled key or
// the wrong value, and reads YAML's unquoted `off`/`on` as what they mean.
impl<'de> Deserialize<'de> for SandboxSetting {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SettingVisitor)
    }
}

struct SettingVisitor;

impl<'de> serde::de::Visitor<'de> for SettingVisitor {
    type Value = SandboxSetting;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("`true`, `false` (or `on`, `off`), or a map with the keys mode, network, filesystem, env")
    }

    fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<Self::Value, E> {
        Ok(SandboxSetting::Enabled(value))
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<Self::Value, E> {
        match value {
            "true" | "on" | "yes" | "enforce" => Ok(SandboxSetting::Enabled(true)),
            "false" | "off" | "no" => Ok(SandboxSetting::Enabled(false)),
            other => Err(E::invalid_value(serde::de::Unexpected::Str(other), &self)),
        }
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        SandboxPolicy::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            .map(|policy| SandboxSetting::Policy(Box::new(policy)))
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
    /// How much of the machine it may take.
    #[serde(default, skip_serializing_if = "is_default")]
    pub limits: SandboxLimits,
}

/// Resource limits of one sandboxed server: it must not be able to take
/// the machine down. A cgroup holds the processes and memory limits when
/// Warden can create one; otherwise they are per-process rlimits.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct SandboxLimits {
    /// Processes (and threads) at once.
    pub processes: u64,
    /// Memory, in MiB (the cgroup's whole tree; else each process's data).
    pub memory_mb: u64,
    /// The size of its private `/tmp`, in MiB (bwrap only).
    pub tmp_mb: u64,
    /// The largest file it may write, in MiB (its state directory has no
    /// other quota).
    pub file_mb: u64,
    /// Open files per process.
    pub open_files: u64,
    /// Connections at once through its egress proxy.
    pub proxy_connections: usize,
    /// Seconds a request head to the egress proxy may take to arrive.
    pub proxy_header_timeout_secs: u64,
    /// Seconds a proxied connection may stay idle.
    pub proxy_idle_timeout_secs: u64,
}

impl Default for SandboxLimits {
    fn default() -> Self {
        SandboxLimits {
            processes: 512,
            memory_mb: 4096,
            tmp_mb: 512,
            file_mb: 8192,
            open_files: 4096,
            proxy_connections: 64,
            proxy_header_timeout_secs: 10,
            proxy_idle_timeout_secs: 300,
        }
    }
}

/// `enforce`, `warn` or `off`.
#[derive(Debug, Clone, Copy, Default, Serialize, JsonSchema, PartialEq, Eq)]
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

// By hand: `mode: off` unquoted is a boolean to YAML 1.1 readers, and a
// wrong value names the allowed ones.
impl<'de> Deserialize<'de> for SandboxMode {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ModeVisitor)
    }
}

struct ModeVisitor;

impl serde::de::Visitor<'_> for ModeVisitor {
    type Value = SandboxMode;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("one of `enforce`, `warn`, `off`")
    }

    fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<Self::Value, E> {
        if value { Err(E::invalid_value(serde::de::Unexpected::Bool(true), &self)) } else { Ok(SandboxMode::Off) }
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<Self::Value, E> {
        match value {
            "enforce" => Ok(SandboxMode::Enforce),
            "warn" => Ok(SandboxMode::Warn),
            "off" | "false" | "no" => Ok(SandboxMode::Off),
            other => Err(E::invalid_value(serde::de::Unexpected::Str(other), &self)),
        }
    }
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
    /// Warden's own files, denied to every sandboxed server whatever its
    /// `write` says: the configuration file it was loaded from, the audit
    /// log, the pins directory, the approval socket. Filled by [`crate::load`],
    /// never read from the file.
    #[serde(skip)]
    #[schemars(skip)]
    pub protected: Vec<String>,
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
    /// What makes this server itself: its name, program, arguments and
    /// working directory. Its state directory is named after a hash of it,
    /// so that two servers never share one (two `python` servers running
    /// different scripts once did, and one planted a git hook for the other).
    pub identity: String,
}

impl ServerSandbox {
    /// The identity of server `name` started as `command` with `args` in
    /// `cwd` (Warden's own working directory when none is configured).
    pub fn identity_of(name: &str, command: &str, args: &[String], cwd: Option<&std::path::Path>) -> String {
        let cwd = cwd.map(std::path::Path::to_path_buf).or_else(|| std::env::current_dir().ok()).unwrap_or_default();
        let mut identity = format!("{name}\0{command}");
        for arg in args {
            identity.push('\0');
            identity.push_str(arg);
        }
        identity.push_str("\0cwd=");
        identity.push_str(&cwd.to_string_lossy());
        identity
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<SandboxSetting, String> {
        serde_saphyr::from_str::<SandboxSetting>(text).map_err(|err| err.to_string())
    }

    #[test]
    fn mistakes_name_the_key_and_the_allowed_values() {
        let misspelled = parse("{filesytem: {read: [/x]}}").unwrap_err();
        assert!(misspelled.contains("filesytem") && misspelled.contains("filesystem"), "{misspelled}");
        let enforced = parse("{mode: enforced}").unwrap_err();
        assert!(enforced.contains("enforced") && enforced.contains("`enforce`, `warn`, `off`"), "{enforced}");
        let word = parse("sometimes").unwrap_err();
        assert!(word.contains("sometimes") && word.contains("`true`, `false`"), "{word}");
    }

    #[test]
    fn off_reads_as_off_quoted_or_not() {
        assert_eq!(parse("{mode: off}").unwrap().policy(), None);
        assert_eq!(parse("{mode: 'off'}").unwrap().policy(), None);
        assert_eq!(parse("off").unwrap(), SandboxSetting::Enabled(false));
        assert_eq!(parse("false").unwrap(), SandboxSetting::Enabled(false));
        assert_eq!(parse("true").unwrap(), SandboxSetting::Enabled(true));
        let warn = parse("{mode: warn, network: {allow: [a.test]}}").unwrap().policy().unwrap();
        assert_eq!(warn.mode, SandboxMode::Warn);
        let json: SandboxSetting = serde_json::from_str(r#"{"mode": "warn"}"#).unwrap();
        assert_eq!(json.policy().unwrap().mode, SandboxMode::Warn);
    }
}
