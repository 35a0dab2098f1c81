//! `warden wrap`: Warden in front of exactly one server, no config needed.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use warden_config::{Config, PrefixMode, SandboxSetting, ServerConfig, Transport, Watch};
use warden_gateway::front::serve_stdio;

use crate::cli::WrapArgs;
use crate::{hooks, reload};

/// Builds a one-server configuration and serves it.
pub async fn run(args: WrapArgs) -> anyhow::Result<ExitCode> {
    let mut config = match &args.config {
        Some(path) => warden_config::load(path)?,
        None => Config::default(),
    };
    if !config.servers.is_empty() {
        tracing::info!("wrap ignores the servers of the config file; it serves only the wrapped command");
        config.servers.clear();
    }
    let (command, rest) = args.command.split_first().context("no command to wrap")?;
    let name = args.name.clone().unwrap_or_else(|| server_name(command));
    let mut server = ServerConfig::new(Transport::Stdio {
        command: command.clone(),
        args: rest.to_vec(),
        env: Default::default(),
        cwd: None,
    });
    if !args.watch.is_empty() {
        server.watch = Some(Watch { extensions: args.ext.clone(), ..Watch::new(args.watch.clone()) });
    }
    server.sandbox = match args.sandbox.as_deref() {
        None => None,
        Some("default") => Some(config.sandbox.default.clone().unwrap_or(SandboxSetting::Enabled(true))),
        Some(file) => Some(read_sandbox(Path::new(file))?),
    };
    // The file's servers never apply: the wrapped one takes their place, on
    // every reload too. Drop-in use: the client sees the server's own names.
    let shape: reload::Shape = Arc::new(move |mut config: Config| {
        config.servers.clear();
        config.servers.insert(name.clone(), server.clone());
        config.naming.prefix = PrefixMode::Never;
        config
    });
    let config = Arc::new(shape(config));
    let (process_hooks, approvals) = hooks::open_process_hooks(&config).await?;
    let hooks = hooks::for_profile(&config, args.profile.as_deref(), process_hooks.clone())?;
    crate::metrics::start(&config, process_hooks.metrics.as_ref(), false).await?;
    let board = approvals.as_ref().map(crate::approvals::Running::board);
    let running = config.clone();
    let (file, profile) = (args.config.clone(), args.profile.clone());
    let sandbox = process_hooks.sandbox.clone();
    serve_stdio(config, hooks, sandbox, move |session| {
        crate::metrics::count_upstreams_of(process_hooks.metrics.as_ref(), session);
        crate::dashboard::show_session(board.as_ref(), &running, process_hooks.metrics.as_ref(), session);
        match file {
            // As `serve` does: the file is watched and SIGHUP reloads it.
            Some(path) => reload::watch_shaped(
                path,
                profile,
                running,
                process_hooks,
                reload::Target::Session(session.clone()),
                shape,
            ),
            None => ignore_hangups(),
        }
    })
    .await
    .context("stdio front failed")?;
    Ok(ExitCode::SUCCESS)
}

/// Without `--config` there is nothing to reload, but SIGHUP (which a
/// Sentinel user sends to reload) must not kill Warden and its server.
fn ignore_hangups() -> anyhow::Result<()> {
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?;
    tokio::spawn(async move {
        while hangup.recv().await.is_some() {
            tracing::info!("SIGHUP: nothing to reload (wrap was started without --config)");
        }
    });
    Ok(())
}

/// A name for logs from the command's file name.
fn server_name(command: &str) -> String {
    let stem = Path::new(command).file_stem().and_then(|stem| stem.to_str()).unwrap_or("server");
    let name: String = stem.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    if name.is_empty() { "server".into() } else { name }
}

/// A sandbox policy from a YAML or JSON file (the shape of a server's `sandbox:`).
fn read_sandbox(path: &Path) -> anyhow::Result<SandboxSetting> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read the sandbox file {}", path.display()))?;
    serde_saphyr::from_str(&text).with_context(|| format!("{}: not a sandbox policy", path.display()))
}
