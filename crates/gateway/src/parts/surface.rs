//! What a session shows its client: the configuration in force, the
//! pipeline hooks of its profile, and the catalog of upstream items.

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use arc_swap::ArcSwap;
use warden_config::Config;

use crate::catalog::{Catalog, Namer};
use crate::pipeline::Hooks;

/// The configuration, hooks and catalog of one session.
pub(crate) struct Surface {
    /// The configuration in force (replaced on reload).
    pub config: ArcSwap<Config>,
    /// The pipeline stages of the session's profile (replaced on reload).
    pub hooks: ArcSwap<Hooks>,
    /// What the upstreams offer, under the names the client knows.
    catalog: RwLock<Catalog>,
}

impl Surface {
    /// The surface of a new session: an empty catalog for `config`'s
    /// servers, named as `hooks`' view shows them.
    pub fn new(config: Arc<Config>, hooks: Hooks) -> Surface {
        let names = config.servers.keys().map(|name| Arc::from(name.as_str())).collect();
        let mut catalog = Catalog::new(Namer::new(&config.naming, config.servers.len()), names);
        catalog.set_view(hooks.view.clone());
        Surface { config: ArcSwap::new(config), hooks: ArcSwap::from_pointee(hooks), catalog: RwLock::new(catalog) }
    }

    /// The catalog, to read.
    pub fn read_catalog(&self) -> RwLockReadGuard<'_, Catalog> {
        warden_sync::read(&self.catalog)
    }

    /// The catalog, to write.
    pub fn write_catalog(&self) -> RwLockWriteGuard<'_, Catalog> {
        warden_sync::write(&self.catalog)
    }

    /// Whether the session's profile shows server `name` at all.
    pub fn shows_server(&self, name: &str) -> bool {
        self.hooks.load().view.shows_server(name)
    }

    /// How long Warden waits for an upstream to start.
    pub fn start_timeout(&self) -> Duration {
        Duration::from_millis(self.config.load().supervision.start_timeout_ms)
    }

    /// How long a list waits for upstreams that are still starting: the
    /// configured wait, never longer than the start timeout.
    pub fn list_wait(&self) -> Duration {
        let supervision = &self.config.load().supervision;
        Duration::from_millis(supervision.list_wait_ms.min(supervision.start_timeout_ms))
    }
}
