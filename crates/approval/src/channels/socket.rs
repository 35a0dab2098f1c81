//! The control socket: a Unix socket (mode 0600, so only its owner can
//! decide) speaking one JSON object per line.
//!
//! Requests and their answers:
//! * `{"op":"list"}` → `{"ok":true,"pending":[…],"recent":[…],"grants":[…]}`
//! * `{"op":"revoke","grant":"…"}` → `{"ok":true,"grant":{…}}`: ends a session whitelist entry
//! * `{"op":"approve","id":"…","by":"alice","remember":false}`, `{"op":"deny","id":"…","reason":"…","by":"alice"}`
//!   → `{"ok":true,"approval":{…}}` or `{"ok":false,"error":"…"}`
//! * `{"op":"watch"}` → one `{"event":"approval","approval":{…}}` line per
//!   pending approval, then one per change, until the client hangs up
//! * `{"op":"context","message":"…","source":"…"}` → `{"ok":true}`: the
//!   user's intent, for the auto-approver
//! * `{"op":"open"}` → `{"ok":true,"url":"http://…/login/<code>"}`: a
//!   one-time login link to the page (`warden approvals open`)
//! * `{"op":"status"}` → `{"ok":true,"status":{…}}`: the dashboard's
//!   overview (`warden status`)

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::broadcast::error::RecvError;

use super::web::LoginLinks;
use super::{Verdict, apply};
use crate::board::Board;
use crate::intent::IntentBoard;
use crate::store::Approvals;
use crate::whitelist::Whitelist;

/// The longest request line accepted.
const MAX_LINE: usize = 64 * 1024;

/// One request on the control socket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Request {
    /// Pending and recent approvals.
    List,
    /// Approve one.
    Approve {
        /// Its id or an unambiguous prefix.
        id: String,
        /// Who approves (the client's user name).
        #[serde(default)]
        by: Option<String>,
        /// Approve calls like it in its session too.
        #[serde(default)]
        remember: bool,
        /// With `remember`: string arguments widened to these globs.
        #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        patterns: std::collections::BTreeMap<String, String>,
    },
    /// Remove a session whitelist entry.
    Revoke {
        /// The entry's id.
        grant: String,
        /// Who revokes.
        #[serde(default)]
        by: Option<String>,
    },
    /// Deny one.
    Deny {
        /// Its id or an unambiguous prefix.
        id: String,
        /// Why.
        #[serde(default)]
        reason: Option<String>,
        /// Who denies.
        #[serde(default)]
        by: Option<String>,
    },
    /// Every pending approval, then every change.
    Watch,
    /// A one-time login link to the approval page.
    Open,
    /// The dashboard's overview.
    Status,
    /// The user's stated intent.
    Context {
        /// What the user asked for.
        message: String,
        /// Who delivered it.
        #[serde(default)]
        source: Option<String>,
    },
}

/// A running control socket; removed when dropped.
pub struct ControlSocket {
    path: PathBuf,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ControlSocket {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}

impl ControlSocket {
    /// Binds `path` (mode 0600; its directory is created with 0700) and
    /// serves it. Fails if another Warden is listening there; a stale socket
    /// file is replaced.
    pub async fn bind(
        path: &Path,
        store: Arc<dyn Approvals>,
        whitelist: Arc<Whitelist>,
        intents: Arc<IntentBoard>,
        links: Arc<LoginLinks>,
        board: Arc<Board>,
    ) -> io::Result<ControlSocket> {
        if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty() && !dir.exists()) {
            std::fs::create_dir_all(dir)?;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
        if path.exists() {
            if UnixStream::connect(path).await.is_ok() {
                return Err(io::Error::new(io::ErrorKind::AddrInUse, "another Warden is listening there"));
            }
            std::fs::remove_file(path)?;
        }
        let listener = UnixListener::bind(path)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        let served = Arc::new(Served { store, whitelist, intents, links, board });
        let task = tokio::spawn(async move {
            loop {
                match listener.accept().await {
                    Ok((stream, _)) => {
                        let served = served.clone();
                        let peer = peer_name(&stream);
                        tokio::spawn(async move { serve(stream, peer, &served).await });
                    }
                    Err(err) => {
                        tracing::warn!("control socket: {err}");
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    }
                }
            }
        });
        Ok(ControlSocket { path: path.to_owned(), task })
    }

    /// Where it listens.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Who is at the other end of `stream`, as the kernel says (`SO_PEERCRED`):
/// `uid=1000(alice)`. What the CLI claims (its `by`, from `$USER`) is not
/// trusted: any process can claim anything.
fn peer_name(stream: &UnixStream) -> String {
    match stream.peer_cred() {
        Ok(cred) => {
            let uid = cred.uid();
            match user_name(uid) {
                Some(name) => format!("uid={uid}({name})"),
                None => format!("uid={uid}"),
            }
        }
        Err(_) => "uid=unknown".into(),
    }
}

/// The login name of `uid`, from `/etc/passwd`.
fn user_name(uid: u32) -> Option<String> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        let id = fields.nth(1)?;
        (id.parse::<u32>().ok()? == uid).then(|| name.to_owned())
    })
}

/// What the socket's requests read and change.
struct Served {
    store: Arc<dyn Approvals>,
    whitelist: Arc<Whitelist>,
    intents: Arc<IntentBoard>,
    links: Arc<LoginLinks>,
    board: Arc<Board>,
}

/// Serves one connection: requests until it closes, or one watch.
async fn serve(stream: UnixStream, peer: String, served: &Served) {
    let Served { store, whitelist, intents, links, board } = served;
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read);
    let mut line = String::new();
    loop {
        line.clear();
        match (&mut lines).take(MAX_LINE as u64).read_line(&mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if !line.ends_with('\n') && line.len() >= MAX_LINE {
            let _ = write.write_all(answer_error("request too long").as_bytes()).await;
            return;
        }
        let answer = match serde_json::from_str::<Request>(line.trim()) {
            Err(err) => answer_error(&format!("not a request: {err}")),
            Ok(Request::Watch) => {
                watch(&mut write, store.as_ref()).await;
                return;
            }
            Ok(Request::Open) => match links.mint() {
                Some(url) => self::line(json!({"ok": true, "url": url})),
                None => answer_error("this Warden has no approval page (approval.listen)"),
            },
            Ok(Request::Status) => match board.get() {
                Some(dashboard) => {
                    let mut status = dashboard.status();
                    status["approvalsPending"] = json!(store.pending().len());
                    self::line(json!({"ok": true, "status": status}))
                }
                None => answer_error("this Warden is still starting: ask again in a moment"),
            },
            Ok(request) => handle(request, &peer, store.as_ref(), whitelist, intents),
        };
        if write.write_all(answer.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// Answers one request other than `watch`, from `peer` (see [`peer_name`]).
/// A decision is recorded as made by `peer`; the name the client gave is
/// kept beside it, marked as a claim.
fn handle(request: Request, peer: &str, store: &dyn Approvals, whitelist: &Whitelist, intents: &IntentBoard) -> String {
    let by = |by: Option<String>| match by.filter(|by| !by.trim().is_empty()) {
        Some(claimed) => format!("{peer} (claims {claimed})"),
        None => peer.to_owned(),
    };
    let decided = match request {
        Request::List => {
            let grants = whitelist.list();
            return line(json!({"ok": true, "pending": store.pending(), "recent": store.recent(), "grants": grants}));
        }
        Request::Context { message, source } => {
            intents.set(message, source.unwrap_or_else(|| "cli".into()));
            return line(json!({"ok": true}));
        }
        Request::Watch | Request::Open | Request::Status => return answer_error("answered elsewhere"),
        Request::Revoke { grant, by: who } => {
            return match whitelist.revoke(&grant, &by(who)) {
                Some(grant) => line(json!({"ok": true, "grant": grant})),
                None => answer_error(&format!("no whitelist entry {grant}")),
            };
        }
        Request::Approve { id, by: who, remember, patterns } => {
            let verdict = Verdict { id, approve: true, reason: None, remember, patterns };
            apply(store, whitelist, &verdict, "cli", &by(who))
        }
        Request::Deny { id, reason, by: who } => {
            let verdict = Verdict { id, approve: false, reason, remember: false, patterns: Default::default() };
            apply(store, whitelist, &verdict, "cli", &by(who))
        }
    };
    match decided {
        Ok(approval) => line(json!({"ok": true, "approval": approval})),
        Err(err) => answer_error(&err.to_string()),
    }
}

/// Streams the pending approvals, then every change.
async fn watch(write: &mut tokio::net::unix::OwnedWriteHalf, store: &dyn Approvals) {
    let mut changes = store.subscribe();
    for approval in store.pending() {
        if write.write_all(line(json!({"event": "approval", "approval": approval})).as_bytes()).await.is_err() {
            return;
        }
    }
    loop {
        let approval = match changes.recv().await {
            Ok(change) => change.approval,
            Err(RecvError::Lagged(_)) => continue,
            Err(RecvError::Closed) => return,
        };
        if write.write_all(line(json!({"event": "approval", "approval": approval})).as_bytes()).await.is_err() {
            return;
        }
    }
}

fn line(value: serde_json::Value) -> String {
    let mut text = value.to_string();
    text.push('\n');
    text
}

fn answer_error(message: &str) -> String {
    line(json!({"ok": false, "error": message}))
}

/// The socket a second Warden uses when `path` is taken:
/// `approvals.sock` → `approvals-<pid>.sock`, beside it.
pub fn sibling_socket(path: &Path, pid: u32) -> PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "approvals".into());
    path.with_file_name(format!("{stem}-{pid}.sock"))
}

/// The sockets of other Wardens beside `path` (see [`sibling_socket`]).
pub fn sibling_sockets(path: &Path) -> Vec<PathBuf> {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "approvals".into());
    let prefix = format!("{stem}-");
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|candidate| {
            candidate.file_name().and_then(|n| n.to_str()).is_some_and(|name| {
                name.strip_prefix(&prefix)
                    .and_then(|rest| rest.strip_suffix(".sock"))
                    .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
            })
        })
        .collect();
    found.sort();
    found
}
