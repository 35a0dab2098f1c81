//! The protected paths that apply with no policy written: Warden's own
//! files (its configuration, state, approval socket and exchange
//! directory, audit log, pins, sandbox state) and the usual credential
//! stores (the ones the sandbox hides from servers).
//!
//! `policy.protectedPaths` adds to them; `policy.unprotectDefaults` removes
//! one, by its exact text in [`CREDENTIAL_STORES`] or [`own_files`], and each
//! removal is logged.

use std::path::PathBuf;

use warden_config::Config;

/// Credential stores no server may be told to read or write.
pub const CREDENTIAL_STORES: &[&str] = &[
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.azure",
    "~/.kube",
    "~/.docker",
    "~/.netrc",
    "~/.git-credentials",
    "~/.config/git/credentials",
    "~/.npmrc",
    "~/.pypirc",
    "~/.config/gcloud",
    "~/.config/gh",
    "~/.config/hub",
    "~/.password-store",
    "~/.local/share/keyrings",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.pgpass",
    "~/.vault-token",
    "~/.terraform.d/credentials.tfrc.json",
];

/// Warden's own files for `config`: where its configuration is (the loaded
/// file, `WARDEN_CONFIG`, the default directory), its state directory, the
/// approval socket and exchange directory, the audit log with its rotated
/// files and sync journal, the sandboxes' state.
pub fn own_files(config: &Config) -> Vec<String> {
    let mut own = vec![config_dir(), state_dir(), "~/.local/share/warden".to_owned()];
    if let Some(source) = &config.source {
        own.push(source.display().to_string());
    }
    if let Some(path) = std::env::var_os("WARDEN_CONFIG").filter(|p| !p.is_empty()) {
        own.push(PathBuf::from(path).display().to_string());
    }
    if let Some(dir) = &config.pins.state_dir {
        own.push(dir.clone());
    }
    if let Some(approval) = &config.approval {
        own.extend(approval.socket.iter().cloned());
        own.extend(approval.exchange_dir.iter().cloned());
    }
    if let Some(audit) = &config.audit {
        own.push(audit.path.clone());
        for n in 1..=audit.keep {
            own.push(format!("{}.{n}", audit.path));
        }
        let path = PathBuf::from(&audit.path);
        if let Some(name) = path.file_name() {
            own.push(path.with_file_name(format!(".{}.sync", name.to_string_lossy())).display().to_string());
        }
    }
    if let Some(dir) = &config.sandbox.state_dir {
        own.push(dir.clone());
    }
    own.dedup();
    own
}

/// Every built-in protected path for `config`, in order: Warden's own files,
/// then the credential stores.
pub fn default_protected_paths(config: &Config) -> Vec<String> {
    let mut all = own_files(config);
    all.extend(CREDENTIAL_STORES.iter().map(|p| (*p).to_owned()));
    all
}

/// `$XDG_CONFIG_HOME/warden`, else `~/.config/warden`.
fn config_dir() -> String {
    match std::env::var_os("XDG_CONFIG_HOME").filter(|dir| !dir.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("warden").display().to_string(),
        None => "~/.config/warden".to_owned(),
    }
}

/// `$XDG_STATE_HOME/warden`, else `~/.local/state/warden` (as the pins and
/// the approval socket choose it).
fn state_dir() -> String {
    match std::env::var_os("XDG_STATE_HOME").filter(|dir| !dir.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("warden").display().to_string(),
        None => "~/.local/state/warden".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_files_follow_the_config() {
        let mut config = Config { source: Some(PathBuf::from("/etc/w/warden.yaml")), ..Config::default() };
        config.audit = Some(warden_config::AuditConfig {
            path: "/var/log/w/audit.jsonl".into(),
            redact: true,
            fsync: warden_config::Fsync::Always,
            fail_open: false,
            rotate_bytes: None,
            keep: 2,
        });
        let own = own_files(&config);
        for expected in [
            "/etc/w/warden.yaml",
            "/var/log/w/audit.jsonl",
            "/var/log/w/audit.jsonl.1",
            "/var/log/w/audit.jsonl.2",
            "/var/log/w/.audit.jsonl.sync",
        ] {
            assert!(own.iter().any(|p| p == expected), "{expected} missing from {own:?}");
        }
        let all = default_protected_paths(&config);
        assert!(all.iter().any(|p| p == "~/.ssh"));
    }
}
