//! `warden profiles`: each profile with its description.

use std::process::ExitCode;

use warden_config::Config;

use crate::cli::ConfigArgs;

/// Lists the profiles; the default is marked with `*`.
pub fn run(args: ConfigArgs) -> anyhow::Result<ExitCode> {
    let config = warden_config::load(&args.config)?;
    if config.profiles.is_empty() {
        println!("{} has no profiles: clients see everything.", args.config.display());
        return Ok(ExitCode::SUCCESS);
    }
    let width = config.profiles.keys().map(String::len).max().unwrap_or(0);
    for (name, profile) in &config.profiles {
        let mark = if config.default_profile.as_deref() == Some(name) { '*' } else { ' ' };
        let servers: Vec<String> = profile.servers.keys().map(|server| labelled(&config, server)).collect();
        println!("{mark} {name:width$}  {}  [servers: {}]", profile.description, servers.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}

/// A server's name, with its `displayName` in quotes when it has one.
pub fn labelled(config: &Config, server: &str) -> String {
    match config.servers.get(server).and_then(|entry| entry.display_name.as_deref()) {
        Some(display_name) => format!("{server} {display_name:?}"),
        None => server.to_owned(),
    }
}
