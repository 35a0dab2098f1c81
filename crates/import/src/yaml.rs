//! Writing a Warden config as YAML, and checking it with Warden's own loader.
//!
//! Sections equal to their defaults are left out, so the file shows only
//! what the import decided; left out or not, they load the same.

use std::path::Path;

use indexmap::IndexMap;
use serde::Serialize;
use warden_config::{
    Config, ConfigError, Filter, Hub, Limits, Naming, Profile, ServerConfig, ServerFilters, Supervision,
};

use crate::error::ImportError;

/// The config as Warden reads it, without the sections at their defaults.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Out<'a> {
    servers: &'a IndexMap<String, ServerConfig>,
    #[serde(skip_serializing_if = "is_default")]
    naming: &'a Naming,
    #[serde(skip_serializing_if = "is_default")]
    limits: &'a Limits,
    #[serde(skip_serializing_if = "is_default")]
    supervision: &'a Supervision,
    #[serde(skip_serializing_if = "is_default")]
    hub: &'a Hub,
    #[serde(skip_serializing_if = "is_false")]
    expose_per_server: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    default_profile: Option<&'a String>,
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    profiles: IndexMap<&'a String, OutProfile<'a>>,
}

#[derive(Serialize)]
struct OutProfile<'a> {
    #[serde(skip_serializing_if = "str::is_empty")]
    description: &'a str,
    servers: IndexMap<&'a String, OutFilters<'a>>,
}

#[derive(Serialize)]
struct OutFilters<'a> {
    #[serde(skip_serializing_if = "is_default")]
    tools: &'a Filter,
    #[serde(skip_serializing_if = "is_default")]
    resources: &'a Filter,
    #[serde(skip_serializing_if = "is_default")]
    prompts: &'a Filter,
}

fn is_default<T: Default + PartialEq>(value: &&T) -> bool {
    **value == T::default()
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn out(config: &Config) -> Out<'_> {
    // Every field named, so a new one cannot be forgotten here.
    let Config { servers, naming, limits, supervision, default_profile, profiles, hub, expose_per_server } = config;
    let profiles = profiles
        .iter()
        .map(|(name, profile)| {
            let Profile { description, servers } = profile;
            let servers = servers
                .iter()
                .map(|(server, filters)| {
                    let ServerFilters { tools, resources, prompts } = filters;
                    (server, OutFilters { tools, resources, prompts })
                })
                .collect();
            (name, OutProfile { description, servers })
        })
        .collect();
    Out {
        servers,
        naming,
        limits,
        supervision,
        hub,
        expose_per_server: *expose_per_server,
        default_profile: default_profile.as_ref(),
        profiles,
    }
}

/// Writes `config` as YAML that [`warden_config::parse`] reads back to the
/// same config (`${VAR}` references are written as they are, to be expanded
/// when Warden loads the file). There is no header, so callers can put their
/// own first; [`crate::Imported::to_yaml`] adds one saying where the config
/// came from.
pub fn to_yaml(config: &Config) -> Result<String, ImportError> {
    serde_saphyr::to_string(&out(config)).map_err(|err| ImportError::Write { message: err.to_string() })
}

/// `# ` before every line of `text`.
pub(crate) fn comment(text: &str) -> String {
    text.lines().map(|line| if line.is_empty() { "#\n".to_owned() } else { format!("# {line}\n") }).collect()
}

/// Loads the YAML of `config` with Warden's loader, so the import is refused
/// exactly when Warden would refuse the file. `${VAR}` references stand for
/// themselves here: the variables need not be set at import time.
pub(crate) fn check(config: &Config, origin: &str) -> Result<(), ImportError> {
    let text = to_yaml(config)?;
    let lookup = |name: &str| Some(format!("${{{name}}}"));
    match warden_config::parse(Path::new("imported.yaml"), &text, &lookup) {
        Ok(_) => Ok(()),
        Err(ConfigError::Invalid { problems, .. }) => {
            // Positions refer to the generated text, not the user's file.
            let problems = problems.iter().map(|problem| without_position(problem).to_owned()).collect();
            Err(ImportError::Rejected { origin: origin.to_owned(), problems })
        }
        Err(other) => Err(ImportError::Rejected { origin: origin.to_owned(), problems: vec![other.to_string()] }),
    }
}

/// `problem` without a leading `line N, column M: `.
fn without_position(problem: &str) -> &str {
    match problem.split_once(": ") {
        Some((place, rest)) if place.starts_with("line ") && place.contains(", column ") => rest,
        _ => problem,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaves_out_defaults() {
        let yaml = to_yaml(&Config::default()).unwrap();
        assert_eq!(yaml.trim(), "servers: {}");
        assert_eq!(without_position("line 3, column 5: servers.a: bad"), "servers.a: bad");
        assert_eq!(without_position("servers.a: bad"), "servers.a: bad");
        assert_eq!(comment("a\n\nb"), "# a\n#\n# b\n");
    }
}
