//! Named policies shipped with Warden, for `policy.include: [builtin:NAME]`
//! and `warden init --preset NAME`. Each is a `policy:` fragment
//! (`protectedPaths`, `rules`) in `presets/NAME.yaml`; its rules come after
//! the configuration's own, so a rule of yours decides first.

use warden_config::Policy;

/// The presets: name, one-line summary, text.
pub const PRESETS: [(&str, &str, &str); 4] = [
    (
        "protect-secrets",
        "deny key, certificate and .env files anywhere, and more secret directories",
        include_str!("presets/protect-secrets.yaml"),
    ),
    (
        "sql-approval",
        "SQL that writes, deletes or changes the schema needs approval",
        include_str!("presets/sql-approval.yaml"),
    ),
    ("shell-approval", "running commands and processes needs approval", include_str!("presets/shell-approval.yaml")),
    (
        "fetch-approval",
        "fetches and clones from hosts none of your rules allows need approval",
        include_str!("presets/fetch-approval.yaml"),
    ),
];

/// The policy fragment `builtin:NAME` (or `NAME`) names.
pub fn preset(name: &str) -> Result<Policy, String> {
    let bare = name.trim().strip_prefix("builtin:").unwrap_or(name.trim());
    let Some((_, _, text)) = PRESETS.iter().find(|(known, _, _)| *known == bare) else {
        let names: Vec<String> = PRESETS.iter().map(|(known, _, _)| format!("builtin:{known}")).collect();
        return Err(format!("unknown preset {name:?} (there are: {})", names.join(", ")));
    };
    serde_saphyr::from_str(text).map_err(|err| format!("the preset {bare} does not parse: {err}"))
}

/// `policy` with the presets it includes merged in: their protected paths
/// added, their rules after its own.
pub(crate) fn expand(policy: &Policy, problems: &mut Vec<String>) -> Policy {
    let mut merged = policy.clone();
    for name in &policy.include {
        match preset(name) {
            Ok(fragment) => {
                merged.protected_paths.extend(fragment.protected_paths);
                merged.rules.extend(fragment.rules);
            }
            Err(why) => problems.push(format!("policy.include: {why}")),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses_and_unknown_ones_are_named() {
        for (name, _, _) in PRESETS {
            let policy = preset(&format!("builtin:{name}")).unwrap();
            assert!(!policy.rules.is_empty() || !policy.protected_paths.is_empty(), "{name}");
        }
        assert!(preset("builtin:nope").unwrap_err().contains("builtin:sql-approval"));
    }
}
