//! `warden serve`: the configured servers behind one stdio endpoint.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use warden_gateway::front::serve_stdio;

use crate::cli::ServeArgs;
use crate::{hooks, reload};

/// Loads the configuration and serves until the client disconnects.
pub async fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let path = args.target.config;
    let config = Arc::new(warden_config::load(&path)?);
    if config.servers.is_empty() {
        tracing::warn!("{} configures no servers; the client will see nothing", path.display());
    }
    if !config.hub.enabled || config.expose_per_server {
        tracing::warn!("hub.enabled and exposePerServer concern the HTTP front; over stdio the hub is always served");
    }
    let audit = hooks::open_audit(&config)?;
    let hooks = hooks::for_profile(&config, args.target.profile.as_deref(), audit.clone())?;
    tracing::info!(servers = config.servers.len(), "serving MCP on stdio");
    let profile = args.target.profile;
    let running = config.clone();
    serve_stdio(config, hooks, move |session| reload::watch(path, profile, running, audit, session.clone()))
        .await
        .context("stdio front failed")?;
    Ok(ExitCode::SUCCESS)
}
