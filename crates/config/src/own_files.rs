//! Warden's own files: what no server may be told to touch (the policy's
//! built-in protected paths) and what no sandboxed server can reach
//! (denied whatever its `write` says). A server that could rewrite them
//! could turn its own sandbox off at the next reload, answer its own
//! escalation through the exchange directory, or rewrite the audit.

use std::path::PathBuf;

use crate::Config;

/// Warden's own files for `config`, as written (`~` not expanded): where its
/// configuration is (the loaded file, `WARDEN_CONFIG`, the default
/// directory), its state directory, the approval socket and exchange
/// directory, the audit log with its rotated files, sync journal and lock file, the
/// pins and the sandboxes' state.
pub fn own_files(config: &Config) -> Vec<String> {
    let mut own = vec![config_dir(), state_dir(), "~/.local/share/warden".to_owned()];
    if let Some(source) = &config.source {
        own.push(source.display().to_string());
        // Through a symlink, the file it points at is the one that is read.
        if let Ok(real) = source.canonicalize() {
            own.push(real.display().to_string());
        }
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
            for hidden in ["sync", "lock"] {
                let beside = path.with_file_name(format!(".{}.{hidden}", name.to_string_lossy()));
                own.push(beside.display().to_string());
            }
        }
    }
    if let Some(dir) = &config.sandbox.state_dir {
        own.push(dir.clone());
    }
    own.dedup();
    own
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
        config.audit = Some(crate::AuditConfig {
            path: "/var/log/w/audit.jsonl".into(),
            redact: true,
            fsync: crate::Fsync::Always,
            fail_open: false,
            rotate_bytes: None,
            keep: 2,
            results: true,
            result_max_bytes: crate::policy::RESULT_MAX_BYTES,
        });
        config.approval = Some(crate::ApprovalConfig {
            exchange_dir: Some("/run/w/exchange".into()),
            ..crate::ApprovalConfig::default()
        });
        let own = own_files(&config);
        for expected in [
            "/etc/w/warden.yaml",
            "/var/log/w/audit.jsonl",
            "/var/log/w/audit.jsonl.1",
            "/var/log/w/audit.jsonl.2",
            "/var/log/w/.audit.jsonl.sync",
            "/var/log/w/.audit.jsonl.lock",
            "/run/w/exchange",
        ] {
            assert!(own.iter().any(|p| p == expected), "{expected} missing from {own:?}");
        }
    }
}
