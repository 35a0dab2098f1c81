//! A session's set of servers: opening each one (its own process, the
//! pool's shared one, or a refusal under a process cap), and applying a new
//! configuration's set as a diff, so that unchanged servers keep their
//! processes and state.

use std::sync::{Arc, Weak};

use warden_config::Config;
use warden_upstream::{Upstream, UpstreamSpec, UpstreamState};

use crate::catalog::{ItemKind, Namer};
use crate::outbound::upstream_ready;
use crate::parts::SessionParts;
use crate::pool::Lease;
use warden_sync::lock;

/// Why a hidden server's upstream never started (never shown to a client).
pub(crate) const HIDDEN: &str = "hidden by the profile";

/// After the hooks changed (a reload): servers the profile now shows
/// start, servers it now hides stop.
pub(crate) fn match_view(session: &Arc<SessionParts>) {
    let config = session.surface.config.load_full();
    let mut upstreams: Vec<Upstream> = session.upstreams.slots.load().as_ref().clone();
    let mut retired = Vec::new();
    let mut opened = Vec::new();
    for (index, upstream) in upstreams.iter_mut().enumerate() {
        let name = upstream.name().to_owned();
        if !config.servers.contains_key(&name) {
            continue;
        }
        let hidden_now = !session.surface.shows_server(&name);
        let was_hidden = matches!(upstream.state(), UpstreamState::Refused(ref why) if why == HIDDEN);
        if hidden_now && !was_hidden {
            retire(session, upstream, &config, "the profile hides it now");
            retired.push(index);
            *upstream = Upstream::refused(Arc::from(name.as_str()), HIDDEN.to_owned());
        } else if was_hidden && !hidden_now {
            *upstream = open_upstream(session, index, &name, &config);
            opened.push(index);
        }
    }
    session.upstreams.slots.store(Arc::new(upstreams));
    let changed_kinds = clear_retired(session, &retired);
    session.link.list_changed(&changed_kinds);
    load_opened(session, opened);
}

/// Opens server `name` of `config` as upstream number `index`. A server
/// the session's profile hides is not started (nor joined, if shared).
pub(crate) fn open_upstream(session: &Arc<SessionParts>, index: usize, name: &str, config: &Config) -> Upstream {
    if !session.surface.shows_server(name) {
        return Upstream::refused(Arc::from(name), HIDDEN.to_owned());
    }
    let lease = session.upstreams.pool.as_ref().map_or(Lease::Own(None), |pool| pool.lease(name));
    match lease {
        Lease::Own(permit) => {
            if let Some(permit) = permit {
                lock(&session.upstreams.permits).insert(name.to_owned(), permit);
            }
            let spec = UpstreamSpec::from_config(name, config).expect("a configured server");
            Upstream::spawn(
                index,
                spec,
                session.link.init_params.subscribe(),
                session.upstreams.sink.clone(),
                session.upstreams.sandbox.clone(),
            )
        }
        Lease::Shared(upstream) => {
            if let Some(pool) = &session.upstreams.pool {
                // The pool holds the session weakly, as a member.
                let member: Weak<SessionParts> = Arc::downgrade(session);
                pool.join(name, index, member);
            }
            upstream
        }
        Lease::Refused(reason) => Upstream::refused(Arc::from(name), reason),
    }
}

/// Applies `config`'s servers and naming as a diff against the ones in
/// force (see [`Session::apply`](crate::Session::apply)).
pub(crate) fn apply(session: &Arc<SessionParts>, config: Arc<Config>) {
    let old = session.surface.config.load_full();
    let mut upstreams: Vec<Upstream> = session.upstreams.slots.load().as_ref().clone();
    let mut retired = Vec::new();
    let mut opened = Vec::new();
    for (index, upstream) in upstreams.iter().enumerate() {
        let name = upstream.name();
        if old.servers.contains_key(name) && !config.servers.contains_key(name) {
            tracing::info!(session = %session.id, server = name, "server removed from the configuration: stopping it");
            retire(session, upstream, &old, "it was removed from the configuration");
            retired.push(index);
        }
    }
    for (name, server) in &config.servers {
        let position = upstreams.iter().position(|upstream| upstream.name() == name);
        let spec = UpstreamSpec::from_config(name, &config).expect("a configured server");
        match (old.servers.get(name), position) {
            (Some(before), Some(index)) if before == server => {
                // Timeouts and limits apply from its next start.
                if !server.share {
                    upstreams[index].amend(spec);
                }
            }
            (Some(before), Some(index)) => {
                let upstream = &upstreams[index];
                let own = !before.share && !server.share && !matches!(upstream.state(), UpstreamState::Refused(_));
                if own {
                    tracing::info!(session = %session.id, server = %name, "server definition changed: restarting it");
                    upstream.replace(spec);
                } else if !(before.share && server.share) {
                    // Sharing changed, or it was refused: a new lease.
                    retire(session, upstream, &old, "its definition changed");
                    retired.push(index);
                    upstreams[index] = open_upstream(session, index, name, &config);
                    opened.push(index);
                }
            }
            (_, position) => {
                tracing::info!(session = %session.id, server = %name, "server added to the configuration: starting it");
                let index =
                    position.unwrap_or_else(|| session.surface.write_catalog().add_server(Arc::from(name.as_str())));
                let upstream = open_upstream(session, index, name, &config);
                if index < upstreams.len() {
                    upstreams[index] = upstream;
                } else {
                    upstreams.push(upstream);
                }
                opened.push(index);
            }
        }
    }
    let naming = Namer::new(&config.naming, config.servers.len());
    session.upstreams.slots.store(Arc::new(upstreams));
    session.surface.config.store(config);
    let mut changed_kinds = clear_retired(session, &retired);
    changed_kinds.extend(session.surface.write_catalog().set_namer(naming));
    session.link.list_changed(&changed_kinds);
    load_opened(session, opened);
}

/// Empties the catalog slots of retired upstreams. Called once the new
/// set of upstreams is published: a list that a retired connection was
/// still reading can no longer land (see `SessionParts::catalog_for`), so
/// what is cleared stays cleared. Returns the kinds that had items.
fn clear_retired(session: &SessionParts, retired: &[usize]) -> Vec<ItemKind> {
    lock(&session.replay.subscriptions).retain(|_, (owner, _)| !retired.contains(owner));
    let mut catalog = session.surface.write_catalog();
    retired.iter().flat_map(|index| catalog.clear(*index)).collect()
}

/// Loads what newly opened upstreams offer. One may be ready already (a
/// shared one, or a fast start whose list was refused because it came
/// before the upstream was published, or was cleared with its slot).
fn load_opened(session: &Arc<SessionParts>, opened: Vec<usize>) {
    for index in opened {
        if let Some(connection) = session.upstreams.get(index).connection() {
            let session = session.clone();
            tokio::spawn(async move { upstream_ready(session, index, connection).await });
        }
    }
}

/// Takes `upstream` out of service for `why`: its own process stops
/// (calls in flight fail with `why`), a shared one is left to the pool.
/// Its catalog slot is cleared by [`Self::clear_retired`].
fn retire(session: &Arc<SessionParts>, upstream: &Upstream, old: &Config, why: &str) {
    let name = upstream.name().to_owned();
    if old.servers.get(&name).is_some_and(|server| server.share) {
        if let Some(pool) = &session.upstreams.pool {
            pool.leave(&name, session.as_ref());
        }
    } else {
        let upstream = upstream.clone();
        let why = why.to_owned();
        let permit = lock(&session.upstreams.permits).remove(&name);
        tokio::spawn(async move {
            upstream.stop(&why).await;
            drop(permit);
        });
    }
}

/// What a reload changes beyond the servers, and what of it waits for
/// Warden's next start: one sentence each, for the log.
pub fn pending_changes(old: &Config, new: &Config) -> Vec<String> {
    let mut pending = Vec::new();
    if old.limits != new.limits {
        pending.push(
            "limits.maxMessageBytes: applies to each server from its next start; messages from clients keep the \
             old limit until Warden restarts"
                .to_owned(),
        );
    }
    if old.supervision != new.supervision {
        pending.push("supervision: applies to each server from its next start (or restart)".to_owned());
    }
    for (name, server) in &new.servers {
        if old.servers.get(name).is_some_and(|before| before.max_processes != server.max_processes) {
            pending.push(format!("servers.{name}.maxProcesses: the new cap applies when Warden restarts"));
        }
    }
    if old.http != new.http || old.auth != new.auth {
        pending.push("http and auth: apply when Warden restarts".to_owned());
    }
    if old.audit != new.audit {
        pending.push("audit: the log keeps its file and settings until Warden restarts".to_owned());
    }
    if old.metrics != new.metrics {
        pending.push("metrics: apply when Warden restarts".to_owned());
    }
    if old.tracing != new.tracing {
        pending.push("tracing: applies when Warden restarts".to_owned());
    }
    pending
}

#[cfg(test)]
mod tests {
    use warden_config::{ServerConfig, Transport};

    use super::*;

    #[test]
    fn what_waits_for_a_restart_is_named() {
        let server = |cap| ServerConfig {
            max_processes: cap,
            ..ServerConfig::new(Transport::Stdio {
                command: "x".into(),
                args: Vec::new(),
                env: Default::default(),
                cwd: None,
            })
        };
        let mut old = Config::default();
        old.servers.insert("a".into(), server(Some(2)));
        let mut new = old.clone();
        assert!(pending_changes(&old, &new).is_empty(), "nothing changed");
        new.naming.separator = "-".into();
        new.servers.insert("b".into(), server(None));
        assert!(pending_changes(&old, &new).is_empty(), "naming and servers apply live");
        new.servers.insert("a".into(), server(Some(3)));
        new.supervision.start_timeout_ms = 1;
        new.limits.max_message_bytes = 2048;
        let pending = pending_changes(&old, &new);
        assert_eq!(pending.len(), 3, "{pending:#?}");
        assert!(pending.iter().any(|line| line.contains("servers.a.maxProcesses")), "{pending:#?}");
    }
}
