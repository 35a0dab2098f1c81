//! Re-initializing when the server no longer knows the session (it answers
//! 404, typically because it restarted): a new `initialize` with the client's
//! own parameters, byte for byte, then `notifications/initialized`, then the
//! message that found the session gone is posted again.

use std::sync::Arc;

use bytes::Bytes;
use warden_jsonrpc::{Frame, Kind};

use super::Remote;
use super::exchange::Exchange;
use super::post::protocol_version;
use super::session::{Renewal, Snapshot};

/// Replaces the session of generation `seen`, which the server forgot.
/// Concurrent callers share one re-initialization. On success the GET
/// stream is reopened and the owner hears that the connection is ready
/// again (to load the server's lists and replay subscriptions).
pub(crate) async fn renew(remote: &Arc<Remote>, seen: u64) -> Result<(), String> {
    if remote.session.renew(seen) == Renewal::Theirs {
        return remote.session.settled(seen).await;
    }
    let generation = remote.session.next_generation();
    match reinitialize(remote, generation).await {
        Ok(next) => {
            tracing::info!(server = %remote.name(), "the upstream no longer knew its session (did it restart?); initialized a new one");
            remote.session.renewed(next);
            super::listen::listen(remote, generation);
            remote.dispatch.ready();
            Ok(())
        }
        Err(reason) => {
            tracing::warn!(server = %remote.name(), "the upstream no longer knows its session and initializing a new one failed: {reason}");
            remote.session.renewal_failed(reason.clone());
            Err(reason)
        }
    }
}

/// Performs the handshake of a new session, numbered `generation`.
async fn reinitialize(remote: &Remote, generation: u64) -> Result<Snapshot, String> {
    let limit = remote.dispatch.limit();
    let init = remote.init.get().ok_or("there is no initialize to replay")?;
    let init = Frame::parse(init.clone()).map_err(|err| format!("the client's initialize is invalid: {err}"))?;
    let id = format!("\"warden-renew-{generation}\"");
    let none = Snapshot::default();
    let exchange = Exchange {
        body: Bytes::from(init.with_id(&id)),
        expect: Some(&id),
        capture: true,
        session: &none,
        mirrored: &[],
    };
    let reply = super::exchange::run(remote, exchange).await.map_err(|err| err.describe(limit))?;
    let answer = reply.captured.ok_or("it did not answer initialize")?;
    if answer.kind() != Kind::Response {
        return Err(format!("it refused initialize: {}", answer.payload().unwrap_or("null")));
    }
    let next = Snapshot::new(reply.session, protocol_version(&answer).as_deref(), generation);
    let initialized = warden_jsonrpc::notification("notifications/initialized", None);
    let exchange =
        Exchange { body: Bytes::from(initialized), expect: None, capture: false, session: &next, mirrored: &[] };
    super::exchange::run(remote, exchange).await.map_err(|err| err.describe(limit))?;
    Ok(next)
}
