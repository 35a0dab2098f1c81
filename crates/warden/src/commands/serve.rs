//! `warden serve`: the configured servers behind one endpoint, stdio by
//! default, HTTP with `--http`.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use warden_config::Config;
use warden_gateway::front::{HttpFront, serve_stdio};
use warden_pipeline::HooksSource;

use crate::cli::ServeArgs;
use crate::hooks::ProfileHooks;
use crate::{hooks, reload};

/// Loads the configuration and serves until the client disconnects (stdio)
/// or Warden is told to stop (HTTP).
pub async fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let ServeArgs { target, http, insecure_no_auth } = args;
    let path = target.config.clone();
    let config = Arc::new(warden_config::load(&path)?);
    if config.servers.is_empty() {
        tracing::warn!("{} configures no servers; the client will see nothing", path.display());
    }
    if let Some(address) = &http {
        return serve_http(target, address, insecure_no_auth, config).await;
    }
    if !config.hub.enabled || config.expose_per_server {
        tracing::warn!("hub.enabled and exposePerServer concern the HTTP front; over stdio the hub is always served");
    }
    let (process_hooks, approvals) = hooks::open_process_hooks(&config).await?;
    let hooks = hooks::for_profile(&config, target.profile.as_deref(), process_hooks.clone())?;
    crate::metrics::start(&config, process_hooks.metrics.as_ref(), false).await?;
    let board = approvals.as_ref().map(crate::approvals::Running::board);
    tracing::info!(servers = config.servers.len(), "serving MCP on stdio");
    let profile = target.profile;
    let running = config.clone();
    let target = reload::Target::Session;
    let sandbox = process_hooks.sandbox.clone();
    serve_stdio(config, hooks, sandbox, move |session| {
        crate::metrics::count_upstreams_of(process_hooks.metrics.as_ref(), session);
        crate::dashboard::show_session(board.as_ref(), &running, process_hooks.metrics.as_ref(), session);
        reload::watch(path, profile, running, process_hooks, target(session.clone()))
    })
    .await
    .context("stdio front failed")?;
    Ok(ExitCode::SUCCESS)
}

async fn serve_http(
    target: crate::cli::ProfileArgs,
    address: &str,
    insecure_no_auth: bool,
    config: Arc<Config>,
) -> anyhow::Result<ExitCode> {
    // A bare port means loopback: reaching further is a deliberate choice.
    let wanted: SocketAddr = match address.parse::<u16>() {
        Ok(port) => SocketAddr::from(([127, 0, 0, 1], port)),
        Err(_) => address.parse().with_context(|| format!("--http {address:?}: expected PORT or IP:PORT"))?,
    };
    if !wanted.ip().is_loopback() && config.auth.tokens.is_empty() && !insecure_no_auth {
        bail!(
            "refusing to serve {wanted} without auth.tokens: anyone who can reach it could use every tool. \
             Configure auth.tokens, bind 127.0.0.1, or pass --insecure-no-auth if that is really what you want"
        );
    }
    let (process_hooks, approvals) = hooks::open_process_hooks(&config).await?;
    let source =
        Arc::new(ProfileHooks::new(ProfileHooks::build_all(&config, target.profile.as_deref(), &process_hooks)));
    // Fail now, not at the first client, if the default profile does not build.
    source.hooks(target.profile.as_deref()).map_err(anyhow::Error::msg)?;
    let listener = tokio::net::TcpListener::bind(wanted).await.with_context(|| format!("cannot listen on {wanted}"))?;
    let bound = listener.local_addr()?;
    let front =
        HttpFront::new(config.clone(), source.clone(), target.profile.clone(), bound, process_hooks.sandbox.clone());
    if let Some(endpoint) = crate::metrics::start(&config, process_hooks.metrics.as_ref(), true).await? {
        front.serve_metrics(endpoint);
    }
    crate::metrics::count_upstreams_of_front(process_hooks.metrics.as_ref(), &front);
    let board = approvals.as_ref().map(crate::approvals::Running::board);
    crate::dashboard::show_front(board.as_ref(), &config, process_hooks.metrics.as_ref(), &front);
    reload::watch(
        target.config,
        target.profile,
        config.clone(),
        process_hooks,
        reload::Target::Http(front.clone(), source),
    )?;
    // Tests and scripts read the address from this line.
    eprintln!("warden: listening on http://{bound}/mcp");
    tracing::info!(
        servers = config.servers.len(),
        threads = %runtime_threads(),
        "serving MCP over HTTP at http://{bound}/mcp"
    );
    front.serve(listener).await.context("HTTP front failed")?;
    Ok(ExitCode::SUCCESS)
}

/// The runtime's threads as an operator reads them: `one` (the runtime is
/// single-threaded: on one or two cores, or `TOKIO_WORKER_THREADS=1`) or
/// the number of worker threads (`TOKIO_WORKER_THREADS` sets it).
fn runtime_threads() -> String {
    let handle = tokio::runtime::Handle::current();
    match handle.runtime_flavor() {
        tokio::runtime::RuntimeFlavor::CurrentThread => "one".to_owned(),
        _ => format!("{} workers", handle.metrics().num_workers()),
    }
}
