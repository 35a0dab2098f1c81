//! The guard's decision on a call. Most are taken at once, on the thread
//! that serves the session, local paths resolved there too. One that must
//! read a filesystem that may not answer (the policy resolving a path on a
//! network or FUSE mount) is taken on the runtime's blocking threads, under
//! a deadline: a mount that hangs then holds up that call alone, never the
//! others. On one or two cores the whole front is one thread.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use warden_jsonrpc::Method;

use crate::pipeline::{Call, Guard, Verdict};

/// How long a decision that reads a remote mount may take: then the call
/// is refused. Resolving the paths of one call takes microseconds on a
/// filesystem that answers.
const DEADLINE: Duration = Duration::from_secs(5);

/// Decisions that read a remote mount, at most at once. Each one stuck on a
/// mount that hangs holds one of the runtime's blocking threads until the
/// mount answers; the rest of Warden needs some of them too.
static READING: Semaphore = Semaphore::const_new(16);

/// The guard's verdict on `call`, which [`Guard::decide_at_once`] put off.
pub(super) async fn off_thread(guard: &Arc<dyn Guard>, call: &Call<'_>) -> Verdict {
    let owned = OwnedCall::of(call);
    let guard = guard.clone();
    let decided = tokio::time::timeout(DEADLINE, async move {
        // Never closed. The slot goes with the work: a decision stuck past
        // the deadline still holds it.
        let slot = READING.acquire().await.ok()?;
        tokio::task::spawn_blocking(move || {
            let _slot = slot;
            guard.decide(&owned.call())
        })
        .await
        .ok()
    })
    .await;
    match decided {
        Ok(Some(verdict)) => verdict,
        Ok(None) => Verdict::Deny { rule: "guard-failed".into(), reason: "deciding on the call failed".into() },
        Err(_) => Verdict::Deny {
            rule: "filesystem-timeout".into(),
            reason: format!(
                "a path it names could not be checked: the filesystem did not answer within {} s",
                DEADLINE.as_secs()
            ),
        },
    }
}

/// A [`Call`]'s parts, owned, for a blocking thread.
struct OwnedCall {
    session: String,
    server: String,
    method: Method,
    name: String,
    arguments: Option<String>,
}

impl OwnedCall {
    fn of(call: &Call<'_>) -> OwnedCall {
        OwnedCall {
            session: call.session.to_owned(),
            server: call.server.to_owned(),
            method: call.method.clone(),
            name: call.name.to_owned(),
            arguments: call.arguments.map(str::to_owned),
        }
    }

    fn call(&self) -> Call<'_> {
        Call {
            session: &self.session,
            server: &self.server,
            method: &self.method,
            name: &self.name,
            arguments: self.arguments.as_deref(),
        }
    }
}
