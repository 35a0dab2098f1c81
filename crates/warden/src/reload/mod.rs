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
use warden_pipeline::Hooks;

use crate::hooks::{Built, ProcessHooks, ProfileHooks};

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
                    tracing::info!("the configuration changed: reloading {}", path.display());
                }
                Some(()) = hangup.recv() => tracing::info!("SIGHUP: reloading {}", path.display()),
                else => return,
            }
            let reloaded = reload(&path, profile.as_deref(), &running, process_hooks.clone(), &target, &shape).await;
            if let Some(config) = reloaded {
                running = config;
            }
        }
    });
    Ok(())
}

/// A reloaded configuration, ready to apply.
struct Prepared {
    config: Config,
    /// The hooks of the profile chosen on the command line.
    hooks: Hooks,
    /// Over HTTP, the hooks of every profile (see [`ProfileHooks::build_all`]).
    built: Built,
}

/// Loads the file and applies its profile; on any error the previous
/// configuration stays in force. Reading the file and compiling its policy
/// (which resolves the paths it names, on a mount that may not answer) are
/// done on a blocking thread: the requests go on meanwhile, served by the
/// previous configuration.
async fn reload(
    path: &Path,
    profile: Option<&str>,
    running: &Config,
    process_hooks: ProcessHooks,
    target: &Target,
    shape: &Shape,
) -> Option<Arc<Config>> {
    let (file, profile, shape) = (path.to_owned(), profile.map(str::to_owned), shape.clone());
    let every_profile = matches!(target, Target::Http(..));
    let prepared =
        tokio::task::spawn_blocking(move || prepare(&file, profile.as_deref(), &process_hooks, &shape, every_profile));
    let Prepared { config, hooks, built } = match prepared.await {
        Ok(Ok(prepared)) => prepared,
        Ok(Err(err)) => {
            tracing::error!("config reload rejected, the previous configuration stays in force: {err}");
            return None;
        }
        Err(err) => {
            tracing::error!("config reload failed, the previous configuration stays in force: {err}");
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
            source.replace(built);
            front.reload();
        }
    }
    tracing::info!("configuration reloaded from {}", path.display());
    Some(config)
}

/// The file loaded and shaped, and its hooks built (every profile's when
/// `every_profile`); why not, in words for the log.
fn prepare(
    path: &Path,
    profile: Option<&str>,
    process_hooks: &ProcessHooks,
    shape: &Shape,
    every_profile: bool,
) -> Result<Prepared, String> {
    let config = shape(warden_config::load(path).map_err(|err| err.to_string())?);
    let built = if every_profile { ProfileHooks::build_all(&config, profile, process_hooks) } else { Built::new() };
    let hooks = match built.get(&profile.map(str::to_owned)) {
        Some(hooks) => hooks.clone()?,
        // The stdio front's one session: its profile alone.
        None => crate::hooks::for_profile(&config, profile, process_hooks.clone()).map_err(|err| format!("{err:#}"))?,
    };
    Ok(Prepared { config, hooks, built })
}
