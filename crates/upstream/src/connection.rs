//! One live connection to an upstream: ids, pending requests, the write queue.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::task::{Context, Poll};

use rustc_hash::FxHashMap;
use tokio::net::unix::pipe;
use tokio::sync::{Notify, mpsc, oneshot};
use warden_jsonrpc::{DirectPipe, Frame, Unwritten};

use crate::era::{self, Era};
use crate::error::UpstreamError;
use crate::handshake::Handshake;
use crate::stderr::StderrTail;

/// What the writer task sends to the process.
#[derive(Debug)]
pub(crate) enum Outgoing {
    /// One message, without its newline.
    Line(String),
    /// The end of a line the pipe took only part of (see [`DirectPipe`]),
    /// newline included.
    Rest(Vec<u8>),
    /// Close the process's stdin, asking it to exit.
    Close,
}

type Reply = Result<Frame, UpstreamError>;

/// A request's whole exchange with the server, driven by its
/// [`ResponseFuture`]; it ends once the answer is delivered (or failed).
pub(crate) type Post = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A link that can post a request from the requester's own task (a
/// Streamable HTTP link): the request is then driven by its
/// [`ResponseFuture`] instead of being handed to the link's task, which
/// spawned a task to post it, and the answer handed back.
pub(crate) trait Poster: Send + Sync {
    /// The exchange that sends `text` (a request) and delivers its answer.
    fn post(self: Arc<Self>, text: String) -> Post;
}

#[derive(Debug, Default)]
struct Pending {
    /// Set once the connection is gone: new requests fail at once.
    closed: Option<UpstreamError>,
    waiting: FxHashMap<u64, oneshot::Sender<Reply>>,
}

/// A live, initialized connection to one upstream process.
///
/// Ids of requests sent upstream are Warden's own (numbers from 1), so that
/// requests from many clients and from Warden itself never collide.
#[derive(Debug)]
pub struct Connection {
    name: Arc<str>,
    outbox: mpsc::UnboundedSender<Outgoing>,
    next_id: AtomicU64,
    pending: Mutex<Pending>,
    handshake: OnceLock<Handshake>,
    stderr: Arc<StderrTail>,
    /// Woken whenever the last waiting request is answered or forgotten.
    idle: Notify,
    /// The era the handshake found, with the envelope members of a modern
    /// one; requests are adapted to it.
    era: OnceLock<(Era, String)>,
    /// The client's log level (JSON text), which a modern server takes on
    /// every request instead of from `logging/setLevel`.
    log_level: Mutex<Option<String>>,
    /// Posts requests in the requester's task, for links that can (weak:
    /// the link holds this connection).
    poster: OnceLock<Weak<dyn Poster>>,
    /// The server's stdin, which a request alone in flight is written to
    /// at once (see [`DirectPipe`]; weak: the writer task holds it).
    direct: OnceLock<Weak<DirectPipe<pipe::Sender>>>,
}

/// The answer to a request sent on a [`Connection`].
pub struct ResponseFuture {
    name: Arc<str>,
    receiver: oneshot::Receiver<Reply>,
    /// The request's exchange, when this future drives it (see [`Poster`]).
    post: Option<Post>,
}

impl std::fmt::Debug for ResponseFuture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture").field("name", &self.name).field("posting", &self.post.is_some()).finish()
    }
}

impl Future for ResponseFuture {
    type Output = Reply;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Reply> {
        if let Some(post) = &mut self.post
            && post.as_mut().poll(cx).is_ready()
        {
            self.post = None;
        }
        let Poll::Ready(reply) = Pin::new(&mut self.receiver).poll(cx) else { return Poll::Pending };
        // The sender is dropped only when the request is forgotten
        // (cancelled): its exchange is dropped with this future, which
        // closes its stream, the cancellation a modern server is told.
        let Ok(reply) = reply else {
            return Poll::Ready(Err(UpstreamError::Lost {
                name: self.name.to_string(),
                reason: "the request was cancelled".into(),
            }));
        };
        // Answered before its exchange ended (the rest of an event stream):
        // the rest goes on by itself, as in the link's task. A failure
        // (the link closed) ends it here instead, so nothing outlives the
        // link.
        if let Some(rest) = self.post.take()
            && reply.is_ok()
        {
            tokio::spawn(rest);
        }
        Poll::Ready(reply)
    }
}

impl Connection {
    pub(crate) fn new(name: Arc<str>, outbox: mpsc::UnboundedSender<Outgoing>, stderr: Arc<StderrTail>) -> Self {
        Connection {
            name,
            outbox,
            next_id: AtomicU64::new(1),
            pending: Mutex::new(Pending::default()),
            handshake: OnceLock::new(),
            stderr,
            idle: Notify::new(),
            era: OnceLock::new(),
            direct: OnceLock::new(),
            log_level: Mutex::new(None),
            poster: OnceLock::new(),
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the server said in its `initialize` result.
    ///
    /// # Panics
    /// Before the handshake; connections are handed out only after it.
    pub fn handshake(&self) -> &Handshake {
        self.handshake.get().expect("connection used before its handshake")
    }

    pub(crate) fn set_handshake(&self, handshake: Handshake) {
        let _ = self.handshake.set(handshake);
    }

    /// Fixes the era requests are adapted to; `envelope` holds the members a
    /// modern request's `_meta` gets (see [`era::envelope_members`]).
    pub(crate) fn set_era(&self, era: Era, envelope: String) {
        let _ = self.era.set((era, envelope));
    }

    /// Whether the server speaks 2026-07-28.
    pub fn is_modern(&self) -> bool {
        matches!(self.era.get(), Some((Era::Modern, _)))
    }

    /// Whether the server speaks a 2025-era revision: the requests it is
    /// sent lose the modern envelope (see [`era::meta_without_envelope`]).
    pub fn is_2025_era(&self) -> bool {
        matches!(self.era.get(), Some((Era::Mcp2025, _)))
    }

    /// A request adapted to the server's era: enveloped for a modern one,
    /// without the envelope for a 2025-era one; as it is before the handshake.
    fn adapt(&self, text: String) -> String {
        match self.era.get() {
            Some((Era::Modern, envelope)) => match self.log_level.lock().ok().and_then(|level| level.clone()) {
                Some(level) => {
                    era::enveloped(text, &format!("{envelope},\"io.modelcontextprotocol/logLevel\":{level}"))
                }
                None => era::enveloped(text, envelope),
            },
            Some((Era::Mcp2025, _)) => era::unenveloped(text),
            None => text,
        }
    }

    /// Sends a request. `build` receives the id Warden chose (JSON text) and
    /// returns the whole message. Returns that id and the future answer.
    pub fn send_request(&self, build: impl FnOnce(&str) -> String) -> Result<(u64, ResponseFuture), UpstreamError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = oneshot::channel();
        let alone = {
            let mut pending = self.lock();
            if let Some(error) = &pending.closed {
                return Err(error.clone());
            }
            pending.waiting.insert(id, sender);
            pending.waiting.len() == 1
        };
        let text = self.adapt(build(itoa::Buffer::new().format(id)));
        // The handshake is the link's own business.
        let poster = self.poster.get().filter(|_| self.handshake.get().is_some());
        if let Some(poster) = poster.and_then(Weak::upgrade) {
            let post = Some(poster.post(text));
            return Ok((id, ResponseFuture { name: self.name.clone(), receiver, post }));
        }
        // Alone in flight, nothing would be gathered with it: written at once.
        let sent = match self.direct.get().and_then(Weak::upgrade) {
            Some(direct) if alone => direct.send(text, |unwritten| {
                let item = match unwritten {
                    Unwritten::Line(text) => Outgoing::Line(text),
                    Unwritten::Rest(bytes) => Outgoing::Rest(bytes),
                };
                self.outbox.send(item).map_err(drop)
            }),
            _ => self.queue(Outgoing::Line(text)),
        };
        if sent.is_err() {
            self.forget(id);
            return Err(self.unavailable("its input is closed"));
        }
        Ok((id, ResponseFuture { name: self.name.clone(), receiver, post: None }))
    }

    /// Queues `item` for the writer task, behind any line written at once.
    fn queue(&self, item: Outgoing) -> Result<(), ()> {
        match self.direct.get().and_then(Weak::upgrade) {
            Some(direct) => direct.queue(|| self.outbox.send(item).map_err(drop)),
            None => self.outbox.send(item).map_err(drop),
        }
    }

    /// From now on a request alone in flight is written to `direct` by its
    /// requester (see [`DirectPipe`]).
    pub(crate) fn set_direct(&self, direct: Weak<DirectPipe<pipe::Sender>>) {
        let _ = self.direct.set(direct);
    }

    /// From now on requests are posted by `poster` in the requester's task
    /// (see [`Poster`]).
    pub(crate) fn set_poster(&self, poster: Weak<dyn Poster>) {
        let _ = self.poster.set(poster);
    }

    /// Sets the log level (a JSON string) a modern server is asked for on
    /// each request from now on.
    pub fn set_log_level(&self, level: String) {
        if let Ok(mut current) = self.log_level.lock() {
            *current = Some(level);
        }
    }

    /// Gives up on request `id`: its future ends, and the server is told
    /// (`notifications/cancelled`; over HTTP to a modern server, its stream
    /// is closed instead).
    pub fn cancel(&self, id: u64, reason: &str) {
        self.forget(id);
        let params = format!(r#"{{"requestId":{id},"reason":{}}}"#, warden_jsonrpc::json_string(reason));
        let _ = self.send(warden_jsonrpc::notification("notifications/cancelled", Some(&params)));
    }

    /// Sends Warden's own request and waits for the answer.
    pub async fn request(&self, method: &str, params: Option<&str>) -> Result<Frame, UpstreamError> {
        let (_, response) = self.send_request(|id| warden_jsonrpc::request(id, method, params))?;
        response.await
    }

    /// Sends a notification, or a response to one of the server's requests.
    pub fn send(&self, text: String) -> Result<(), UpstreamError> {
        self.queue(Outgoing::Line(text)).map_err(|()| self.unavailable("its input is closed"))
    }

    /// Stops waiting for request `id` (after a cancellation); its future ends
    /// with an error and a late answer is dropped.
    pub fn forget(&self, id: u64) {
        self.take(id);
    }

    /// Resolves once no request is waiting for an answer (at once if none is).
    pub(crate) async fn drained(&self) {
        loop {
            let idle = self.idle.notified();
            if self.lock().waiting.is_empty() {
                return;
            }
            idle.await;
        }
    }

    /// Removes request `id` from the waiting ones; wakes [`Connection::drained`]
    /// when it was the last.
    fn take(&self, id: u64) -> Option<oneshot::Sender<Reply>> {
        let mut pending = self.lock();
        let sender = pending.waiting.remove(&id);
        if pending.waiting.is_empty() {
            self.idle.notify_waiters();
        }
        sender
    }

    /// Delivers a response from the server. Returns false when no request
    /// with that id is waiting.
    pub(crate) fn resolve(&self, id: Option<u64>, reply: Reply) -> bool {
        let sender = id.and_then(|id| self.take(id));
        match sender {
            Some(sender) => {
                // The requester may have gone (cancelled); then the answer is dropped.
                let _ = sender.send(reply);
                true
            }
            None => false,
        }
    }

    /// Marks the connection gone and fails every waiting request with `error`.
    pub(crate) fn close(&self, error: UpstreamError) {
        let waiting = {
            let mut pending = self.lock();
            pending.closed = Some(error.clone());
            std::mem::take(&mut pending.waiting)
        };
        self.idle.notify_waiters();
        for (_, sender) in waiting {
            let _ = sender.send(Err(error.clone()));
        }
        let _ = self.queue(Outgoing::Close);
    }

    fn unavailable(&self, reason: &str) -> UpstreamError {
        UpstreamError::Unavailable { name: self.name.to_string(), reason: self.stderr.explain(reason) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        warden_sync::lock(&self.pending)
    }
}
