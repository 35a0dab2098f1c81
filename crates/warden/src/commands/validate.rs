//! `warden validate`: every problem of a config file, or a short summary.

use std::process::ExitCode;
use std::sync::Arc;

use warden_config::{Config, ConfigError, PrefixMode};
use warden_limits::Limiter;
use warden_pipeline::Hooks;
use warden_policy::PolicyEngine;
use warden_profiles::ProfileView;

use crate::cli::ValidateArgs;
use crate::local::LocalClient;

/// Checks the file and every profile in it; with `--connect`, also what the
/// servers offer.
pub async fn run(args: ValidateArgs) -> anyhow::Result<ExitCode> {
    let ValidateArgs { target: args, connect } = args;
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
    let mut warnings: Vec<String> = Vec::new();
    // Every profile, and the policy as each sees it (or once, with no profiles).
    let profiles: Vec<Option<&str>> = if config.profiles.is_empty() {
        vec![None]
    } else {
        config.profiles.keys().map(|name| Some(name.as_str())).collect()
    };
    for profile in profiles {
        if let Err(err) = ProfileView::compile(&config, profile) {
            problems.push(err.to_string());
        }
        match PolicyEngine::compile(&config, profile) {
            Ok(engine) => {
                for warning in engine.warnings() {
                    if !warnings.contains(warning) {
                        warnings.push(warning.clone());
                    }
                }
            }
            Err(err) => {
                let problem = err.to_string();
                if !problems.contains(&problem) {
                    problems.push(problem);
                }
            }
        }
    }
    // Filter entries that change nothing, and globs that collide unprefixed.
    warnings.extend(warden_profiles::warnings(&config));
    if let Err(err) = Limiter::new(&config.rate_limits, &config.breaker) {
        problems.push(err.to_string());
    }
    for name in config.servers.keys() {
        if let Some(sandbox) = config.sandbox_of(name)
            && let Err(err) = warden_sandbox::plan::Plan::resolve(name, &sandbox)
        {
            problems.push(format!("servers.{name}.sandbox: {err}"));
        }
    }
    if !problems.is_empty() {
        eprintln!("{}: {} problem(s):", args.config.display(), problems.len());
        for problem in problems {
            eprintln!("  - {problem}");
        }
        return Ok(ExitCode::FAILURE);
    }
    if connect {
        for warning in collisions_offered(&config).await? {
            if !warnings.contains(&warning) {
                warnings.push(warning);
            }
        }
    }
    for warning in &warnings {
        eprintln!("warning: {warning}");
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
    let default = config.policy.default.map_or("allow".to_owned(), |action| format!("{action:?}").to_lowercase());
    println!(
        "  policy:   {} rule(s), default {default}{}",
        config.policy.rules.len(),
        if config.policy.strict { ", strict" } else { "" }
    );
    Ok(ExitCode::SUCCESS)
}

/// Starts every server and reports, per profile, the names and URIs two of
/// its servers share (see [`warden_profiles::live_collisions`]).
async fn collisions_offered(config: &Config) -> anyhow::Result<Vec<String>> {
    let client = LocalClient::start(Arc::new(config.clone()), Hooks::default(), Default::default()).await?;
    let inventory = client.session().inventory();
    client.close().await;
    let profiles: Vec<Option<&str>> = if config.profiles.is_empty() {
        vec![None]
    } else {
        config.profiles.keys().map(|name| Some(name.as_str())).collect()
    };
    let mut warnings = Vec::new();
    for profile in profiles {
        let view = ProfileView::compile(config, profile)?;
        warnings.extend(warden_profiles::live_collisions(&view, &inventory));
    }
    Ok(warnings)
}
