//! `warden serve`: the configured servers behind one stdio endpoint.

use std::sync::Arc;

use anyhow::Context;
use warden_gateway::front::serve_stdio;
use warden_gateway::pipeline::Hooks;

use crate::cli::ServeArgs;

/// Loads the configuration and serves until the client disconnects.
pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    let config = warden_config::load(&args.config)?;
    if config.servers.is_empty() {
        tracing::warn!("{} configures no servers; the client will see nothing", args.config.display());
    }
    tracing::info!(servers = config.servers.len(), "serving MCP on stdio");
    serve_stdio(Arc::new(config), Hooks::default()).await.context("stdio front failed")
}
