//! A server's sandbox policy resolved against this machine: paths expanded,
//! the built-in deny list added, its state directory chosen.

use std::path::PathBuf;

use warden_config::{SandboxMechanism, SandboxMode, ServerSandbox};

use crate::SandboxError;
use crate::paths::expand;
use crate::proxy::Allowlist;

/// Paths always hidden from a sandboxed server, whatever it may read.
pub const BUILTIN_DENY: &[&str] = &[
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.azure",
    "~/.config/gcloud",
    "~/.config/gh",
    "~/.config/hub",
    "~/.netrc",
    "~/.docker",
    "~/.kube",
    "~/.git-credentials",
    "~/.npmrc",
    "~/.pypirc",
    "~/.password-store",
    "~/.config/warden",
    "~/.local/state/warden",
    "~/.local/share/warden",
];

/// System directories every sandbox may read.
pub const SYSTEM_READ: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"];

/// Files under `/etc` that hold secrets: masked even though `/etc` is readable.
pub const ETC_SECRETS: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/gshadow-",
    "/etc/ssh",
    "/etc/ssl/private",
    "/etc/sudoers",
    "/etc/sudoers.d",
];

/// The name of a server's state directory: readable (its name, shortened
/// to safe characters) and unique to its identity (a hash of it), so that
/// two servers never share one.
pub fn state_dir_name(server: &str, identity: &str) -> String {
    use sha2::Digest;
    let short: String = server
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .take(40)
        .collect();
    let digest = sha2::Sha256::digest(identity.as_bytes());
    let hex: String = digest[..8].iter().map(|byte| format!("{byte:02x}")).collect();
    format!("{short}-{hex}")
}

/// One server's sandbox, ready to be set up.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The server's name.
    pub server: String,
    /// What happens when it cannot be set up.
    pub mode: SandboxMode,
    /// Which mechanism to use.
    pub mechanism: SandboxMechanism,
    /// The `bwrap` program, if configured.
    pub bwrap: Option<PathBuf>,
    /// Outgoing connections allowed through the proxy; `None`: no network.
    pub network: Option<Allowlist>,
    /// Readable paths besides the system ones.
    pub read: Vec<PathBuf>,
    /// Writable paths (the state directory first).
    pub write: Vec<PathBuf>,
    /// Hidden paths (the built-in list and the policy's).
    pub deny: Vec<PathBuf>,
    /// Variables passed from Warden's environment.
    pub env_pass: Vec<String>,
    /// Variables set.
    pub env_set: Vec<(String, String)>,
    /// The server's own writable directory.
    pub state_dir: PathBuf,
    /// How much of the machine it may take.
    pub limits: warden_config::SandboxLimits,
}

impl Plan {
    /// Resolves `sandbox` for server `server`.
    pub fn resolve(server: &str, sandbox: &ServerSandbox) -> Result<Plan, SandboxError> {
        let policy = &sandbox.policy;
        let defaults = &sandbox.defaults;
        let network = if policy.network.allow.is_empty() {
            None
        } else {
            Some(Allowlist::parse(&policy.network.allow, &policy.network.deny, &defaults.hosts)?)
        };
        let root = defaults.state_dir.as_deref().map_or_else(|| expand("~/.local/state/warden-sandbox"), expand);
        let state_dir = root.join(state_dir_name(server, &sandbox.identity));
        let mut write = vec![state_dir.clone()];
        write.extend(policy.filesystem.write.iter().map(|path| expand(path)));
        let mut deny: Vec<PathBuf> = BUILTIN_DENY.iter().map(|path| expand(path)).collect();
        deny.extend(policy.filesystem.deny.iter().map(|path| expand(path)));
        // Warden's own files, whatever `write` says.
        deny.extend(defaults.protected.iter().map(|path| expand(path)));
        // The sandboxes' own state is Warden's, except the server's own directory.
        deny.retain(|denied| !state_dir.starts_with(denied));
        Ok(Plan {
            server: server.to_owned(),
            mode: policy.mode,
            mechanism: defaults.mechanism,
            bwrap: defaults.bwrap.clone(),
            network,
            read: policy.filesystem.read.iter().map(|path| expand(path)).collect(),
            write,
            deny,
            env_pass: policy.env.pass.clone(),
            env_set: policy.env.set.iter().map(|(key, value)| (key.clone(), value.clone())).collect(),
            state_dir,
            limits: policy.limits,
        })
    }

    /// A one-line description, for logs, `/status` and `warden effective`.
    pub fn describe(&self) -> String {
        let network = match &self.network {
            None => "no network".to_owned(),
            Some(allow) => format!("network {}", allow.describe()),
        };
        let list =
            |paths: &[PathBuf]| paths.iter().map(|path| path.display().to_string()).collect::<Vec<_>>().join(", ");
        let mode = match self.mode {
            SandboxMode::Enforce => "enforce",
            SandboxMode::Warn => "warn",
            SandboxMode::Off => "off",
        };
        let limits = &self.limits;
        format!(
            "{mode} sandbox: {network}; read system dirs{}{}; write {}; limits {} processes, {} MiB memory, /tmp {} MiB, files {} MiB, {} open files",
            if self.read.is_empty() { "" } else { ", " },
            list(&self.read),
            list(&self.write),
            limits.processes,
            limits.memory_mb,
            limits.tmp_mb,
            limits.file_mb,
            limits.open_files
        )
    }
}
