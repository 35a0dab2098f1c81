//! The protected paths that apply with no policy written: Warden's own
//! files (its configuration, state, approval socket and exchange
//! directory, audit log, pins, sandbox state) and the usual credential
//! stores (the ones the sandbox hides from servers).
//!
//! `policy.protectedPaths` adds to them; `policy.unprotectDefaults` removes
//! one, by its exact text in [`CREDENTIAL_STORES`] or [`own_files`], and each
//! removal is logged.

use warden_config::{Config, own_files};

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

/// Every built-in protected path for `config`, in order: Warden's own files,
/// then the credential stores.
pub fn default_protected_paths(config: &Config) -> Vec<String> {
    let mut all = own_files(config);
    all.extend(CREDENTIAL_STORES.iter().map(|p| (*p).to_owned()));
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_wardens_own_files_then_the_credential_stores() {
        let config = Config { source: Some(std::path::PathBuf::from("/etc/w/warden.yaml")), ..Config::default() };
        let all = default_protected_paths(&config);
        assert!(all.iter().any(|p| p == "/etc/w/warden.yaml"));
        assert!(all.iter().any(|p| p == "~/.ssh"));
    }
}
