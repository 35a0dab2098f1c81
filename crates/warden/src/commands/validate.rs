//! `warden validate`: every problem of a config file, or a short summary.

use std::process::ExitCode;

use warden_config::{ConfigError, PrefixMode};
use warden_profiles::ProfileView;

use crate::cli::ConfigArgs;

/// Checks the file and every profile in it.
pub fn run(args: ConfigArgs) -> anyhow::Result<ExitCode> {
    let config = match warden_config::load(&args.config) {
        Ok(config) => config,
        Err(ConfigError::Invalid { path, problems }) => {
            eprintln!("{}: {} problem(s):", path.display(), problems.len());
            for problem in problems {
                eprintln!("  - {problem}");
            }
            return Ok(ExitCode::FAILURE);
        }
        Err(err) => {
            eprintln!("{err}");
            return Ok(ExitCode::FAILURE);
        }
    };
    let mut problems = Vec::new();
    for name in config.profiles.keys() {
        if let Err(err) = ProfileView::compile(&config, Some(name)) {
            problems.push(err.to_string());
        }
    }
    if !problems.is_empty() {
        eprintln!("{}: {} problem(s):", args.config.display(), problems.len());
        for problem in problems {
            eprintln!("  - {problem}");
        }
        return Ok(ExitCode::FAILURE);
    }
    let servers: Vec<&str> = config.servers.keys().map(String::as_str).collect();
    println!("{}: valid", args.config.display());
    println!("  servers:  {} ({})", servers.len(), servers.join(", "));
    if config.profiles.is_empty() {
        println!("  profiles: none (everything is visible)");
    } else {
        let default = config.default_profile.as_deref().unwrap_or("-");
        println!("  profiles: {} (default: {default})", config.profiles.len());
    }
    let prefix = match config.naming.prefix {
        PrefixMode::Always => format!("always, as <server>{}<name>", config.naming.separator),
        PrefixMode::Multiple => format!("with more than one server, as <server>{}<name>", config.naming.separator),
        PrefixMode::Never => "never".to_owned(),
    };
    println!("  names:    prefixed {prefix}; at most {} characters", config.naming.max_length);
    Ok(ExitCode::SUCCESS)
}
