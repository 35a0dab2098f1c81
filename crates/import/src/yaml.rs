//! Writing a Warden config as YAML, and checking it with Warden's own loader.
//!
//! Sections equal to their defaults are left out (the config's own
//! serialisation skips them), so the file shows only what the import decided.

use std::path::Path;

use warden_config::{Config, ConfigError};

use crate::error::ImportError;

/// Writes `config` as YAML that [`warden_config::parse`] reads back to the
/// same config (`${VAR}` references are written as they are, to be expanded
/// when Warden loads the file). There is no header, so callers can put their
/// own first; [`crate::Imported::to_yaml`] adds one saying where the config
/// came from.
pub fn to_yaml(config: &Config) -> Result<String, ImportError> {
    serde_saphyr::to_string(config).map_err(|err| ImportError::Write { message: err.to_string() })
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
