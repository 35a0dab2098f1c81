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

use crate::hooks::{Lasting, ProfileHooks};

/// What a reload applies to.
pub enum Target {
    /// The one session of the stdio front.
    Session(Session),
    /// Every session of the HTTP front, each with its own profile.
    Http(HttpFront, Arc<ProfileHooks>),
}

/// Events closer together than this are one change (editors write in steps).
const SETTLE: Duration = Duration::from_millis(150);

/// Reloads `path` into `target` whenever it changes or on SIGHUP, until
/// Warden exits. `profile` is the one chosen on the command line, if any.
pub fn watch(
    path: PathBuf,
    profile: Option<String>,
    running: Arc<Config>,
    lasting: Lasting,
    target: Target,
) -> anyhow::Result<()> {
    let (changed, mut changes) = mpsc::unbounded_channel();
    let watcher = changes_of(&path, changed)?;
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
            if let Some(config) = reload(&path, profile.as_deref(), &running, lasting.clone(), &target) {
                running = config;
            }
        }
    });
    Ok(())
}

/// The directory holding `path`, watched rather than the file: editors save
/// by writing a new file and renaming it over the old one.
fn directory_of(path: &Path) -> &Path {
    path.parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// Sends on `changed` when the file at `path` was written and closed,
/// renamed into place or touched. Not on each `write`: a file kept open and
/// appended beside the configuration (an audit log next to `warden.yaml`)
/// would otherwise wake the watcher on every record, about 1.5 times per
/// call measured. Linux's inotify takes that mask; its thread runs until the
/// process ends (the handle is kept only to match the portable watcher).
#[cfg(target_os = "linux")]
fn changes_of(path: &Path, changed: mpsc::UnboundedSender<()>) -> anyhow::Result<std::thread::JoinHandle<()>> {
    use inotify::{Inotify, WatchMask};
    let inotify = Inotify::init()?;
    let mask = WatchMask::CLOSE_WRITE | WatchMask::MOVED_TO | WatchMask::ATTRIB;
    inotify.watches().add(directory_of(path), mask)?;
    let name = path.file_name().map(ToOwned::to_owned);
    let thread = std::thread::Builder::new().name("config-watch".into()).spawn(move || {
        let mut inotify = inotify;
        let mut buffer = [0u8; 4096];
        loop {
            let events = match inotify.read_events_blocking(&mut buffer) {
                Ok(events) => events,
                Err(err) => {
                    tracing::error!("watching the configuration failed, SIGHUP still reloads it: {err}");
                    return;
                }
            };
            if events.into_iter().any(|event| event.name == name.as_deref()) && changed.send(()).is_err() {
                return;
            }
        }
    })?;
    Ok(thread)
}

/// Elsewhere, notify's portable watcher (which also reports each write);
/// the returned watcher must be kept alive.
#[cfg(not(target_os = "linux"))]
fn changes_of(path: &Path, changed: mpsc::UnboundedSender<()>) -> anyhow::Result<notify::RecommendedWatcher> {
    let name = path.file_name().map(ToOwned::to_owned);
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Ok(event) = event
            && event.paths.iter().any(|p| p.file_name() == name.as_deref())
        {
            let _ = changed.send(());
        }
    })?;
    watcher.watch(directory_of(path), RecursiveMode::NonRecursive)?;
    Ok(watcher)
}

/// Loads the file and applies its profile; on any error the previous
/// configuration stays in force.
fn reload(
    path: &Path,
    profile: Option<&str>,
    running: &Config,
    lasting: Lasting,
    target: &Target,
) -> Option<Arc<Config>> {
    let config = match warden_config::load(path) {
        Ok(config) => config,
        Err(err) => {
            tracing::error!("config reload rejected, the previous configuration stays in force: {err}");
            return None;
        }
    };
    let hooks = match crate::hooks::for_profile(&config, profile, lasting) {
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
