//! Which era a stdio server speaks, asked of a process of its own.
//!
//! A probe is a `server/discover` request (2026-07-28). Sent to the process
//! that will serve, it can kill a legacy server (servers built on rmcp exit
//! on any request before `initialize`), so it goes to a disposable process
//! started the same way (sandbox included), which is stopped right after.
//! An answer listing 2026-07-28 means modern; any error, silence until the
//! deadline, or an exit means legacy. The verdict is kept per server
//! definition for the life of Warden, and forgotten when a handshake in that
//! era fails, so the next start asks again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use std::time::Duration;
use tokio::sync::OnceCell;

use warden_jsonrpc::Kind;

use crate::era::{self, Era};
use crate::event::{Event, EventSink};
use crate::handshake::Handshake;
use crate::link::Link;
use crate::supervisor::UpstreamSpec;

/// The longest a probe waits for the disposable process to answer.
const PATIENCE: Duration = Duration::from_secs(5);

/// Verdicts by server definition; a cell being filled is a probe under way,
/// which every other start of that server waits for (one probe, however
/// many sessions start at once).
fn verdicts() -> &'static Mutex<HashMap<String, Arc<OnceCell<Era>>>> {
    static VERDICTS: OnceLock<Mutex<HashMap<String, Arc<OnceCell<Era>>>>> = OnceLock::new();
    VERDICTS.get_or_init(Mutex::default)
}

/// What identifies a server definition: how it is started.
fn key(spec: &UpstreamSpec) -> String {
    format!("{:?}|{:?}", spec.transport, spec.sandbox)
}

/// The era of the stdio server `spec` starts, probing it if not known yet.
pub(crate) async fn stdio_era(spec: &UpstreamSpec, timeout: Duration) -> Era {
    let cell = match verdicts().lock() {
        Ok(mut verdicts) => verdicts.entry(key(spec)).or_default().clone(),
        Err(_) => Arc::default(),
    };
    *cell
        .get_or_init(|| async {
            let era = probe(spec, timeout.min(PATIENCE)).await;
            tracing::info!(server = %spec.name, era = ?era, "probed the server's protocol era");
            era
        })
        .await
}

/// Forgets the verdict for `spec`: its handshake failed in that era.
pub(crate) fn forget(spec: &UpstreamSpec) {
    if let Ok(mut verdicts) = verdicts().lock() {
        verdicts.remove(&key(spec));
    }
}

/// Events of the disposable process: nobody wants them.
struct Discard;

impl EventSink for Discard {
    fn deliver(&self, _event: Event) {}
}

async fn probe(spec: &UpstreamSpec, patience: Duration) -> Era {
    let Ok(link) = Link::open(spec, usize::MAX, Arc::new(Discard)) else { return Era::Legacy };
    let params = format!(r#"{{"_meta":{{{}}}}}"#, era::envelope_members("{}"));
    let answer = tokio::time::timeout(patience, link.connection().request("server/discover", Some(&params))).await;
    let era = match answer {
        Ok(Ok(answer)) if answer.kind() == Kind::Response => match answer.payload().map(Handshake::from_discover) {
            Some(Ok(_)) => Era::Modern,
            _ => Era::Legacy,
        },
        _ => Era::Legacy,
    };
    link.close("the protocol probe is done").await;
    era
}
