//! Live configuration: the file is watched (and SIGHUP reloads it). Profile
//! changes apply to the running sessions without restarting servers; server
//! changes apply as a diff (new servers start, removed ones stop, changed
//! ones restart, the rest are untouched); naming applies at once; the log
//! names what waits for Warden's next start.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use warden_config::Config;
use warden_gateway::Session;
use warden_gateway::front::HttpFront;

use crate::hooks::{ProcessHooks, ProfileHooks};

mod saves;

/// What a reload applies to.
pub enum Target {
    /// The one session of the stdio front.
    Session(Session),
    /// Every session of the HTTP front, each with its own profile.
    Http(HttpFront, Arc<ProfileHooks>),
}

/// Events closer together than this are one change (editors write in steps).
const SETTLE: Duration = Duration::from_millis(150);

/// What a reloaded file becomes before it applies (`warden wrap` puts its
/// one wrapped server in place of the file's servers).
pub type Shape = Arc<dyn Fn(Config) -> Config + Send + Sync>;

/// Reloads `path` into `target` whenever it changes or on SIGHUP, until
/// Warden exits. `profile` is the one chosen on the command line, if any.
pub fn watch(
    path: PathBuf,
    profile: Option<String>,
    running: Arc<Config>,
    process_hooks: ProcessHooks,
    target: Target,
) -> anyhow::Result<()> {
    watch_shaped(path, profile, running, process_hooks, target, Arc::new(|config| config))
}

/// [`watch`], with each loaded configuration passed through `shape` first.
pub fn watch_shaped(
    path: PathBuf,
    profile: Option<String>,
    running: Arc<Config>,
    process_hooks: ProcessHooks,
    target: Target,
    shape: Shape,
) -> anyhow::Result<()> {
    let (changed, mut changes) = mpsc::unbounded_channel();
    let watcher = saves::of(&path, changed)?;
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?;
    tokio::spawn(async move {
        let _watcher = watcher;
        let mut running = running;
        loop {
            tokio::select! {
                Some(()) = changes.recv() => {
                    tokio::time::sleep(SETTLE).await;
                    while changes.try_recv().is_ok() {}
                }
                Some(()) = hangup.recv() => tracing::info!("SIGHUP: reloading {}", path.display()),
                else => return,
            }
            if let Some(config) = reload(&path, profile.as_deref(), &running, process_hooks.clone(), &target, &shape) {
                running = config;
            }
        }
    });
    Ok(())
}

/// Loads the file and applies its profile; on any error the previous
/// configuration stays in force.
fn reload(
    path: &Path,
    profile: Option<&str>,
    running: &Config,
    process_hooks: ProcessHooks,
    target: &Target,
    shape: &Shape,
) -> Option<Arc<Config>> {
    let config = match warden_config::load(path) {
        Ok(config) => shape(config),
        Err(err) => {
            tracing::error!("config reload rejected, the previous configuration stays in force: {err}");
            return None;
        }
    };
    let hooks = match crate::hooks::for_profile(&config, profile, process_hooks) {
        Ok(hooks) => hooks,
        Err(err) => {
            tracing::error!("config reload rejected, the previous configuration stays in force: {err:#}");
            return None;
        }
    };
    for pending in warden_gateway::pending_changes(running, &config) {
        tracing::warn!("reload: {pending}");
    }
    let config = Arc::new(config);
    match target {
        Target::Session(session) => {
            session.apply(config.clone());
            session.set_hooks(hooks);
        }
        Target::Http(front, source) => {
            front.apply(running, config.clone());
            source.replace(config.clone());
            front.reload();
        }
    }
    tracing::info!("configuration reloaded from {}", path.display());
    Some(config)
}
