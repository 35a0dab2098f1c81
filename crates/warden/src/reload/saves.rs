//! Noticing that the configuration file was saved: written and closed,
//! renamed into place, or touched.

use std::path::Path;

use tokio::sync::mpsc;

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
pub(super) fn of(path: &Path, changed: mpsc::UnboundedSender<()>) -> anyhow::Result<std::thread::JoinHandle<()>> {
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
pub(super) fn of(path: &Path, changed: mpsc::UnboundedSender<()>) -> anyhow::Result<notify::RecommendedWatcher> {
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
