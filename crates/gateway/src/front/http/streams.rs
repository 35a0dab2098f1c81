//! Which HTTP stream carries each message a session has for its client.
//!
//! Streamable HTTP has no single ordered channel: each POSTed request gets its
//! own answer (a JSON body or an SSE stream), and the GET stream carries what
//! belongs to no request. [`Streams`] is the session's [`Outlet`]: it routes
//! a response to the POST that asked, progress and server requests to the
//! stream of the request they belong to (see [`Outbound::request`]), and
//! everything else to the GET stream, queued until one is open.
//!
//! A POST starts out waiting for a JSON answer; if something else for that
//! request comes first, it turns into an SSE stream. Every SSE event gets an
//! id `<stream>-<seq>` and stays in a bounded backlog, so a client whose
//! stream dropped resumes with a GET carrying `Last-Event-ID`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use foldhash::HashMap;
use tokio::sync::{mpsc, oneshot};

use warden_jsonrpc::{ErrorCode, error_response};

use super::tenants::Held;
use crate::outlet::{Outbound, Outlet};

/// The GET stream's number; POST streams count up from 1.
const STANDALONE: u64 = 0;

/// What a POSTed request gets back.
#[derive(Debug)]
pub(super) enum Answer {
    /// Its response alone, as a JSON body.
    Json(String),
    /// An event stream that carries its response last.
    Stream(mpsc::UnboundedReceiver<SseEvent>),
    /// Nothing: the client cancelled the request, and a cancelled request
    /// gets no response.
    Cancelled,
}

/// One SSE event: its id and its data (a JSON-RPC message, or empty to prime
/// a client for resumption).
#[derive(Debug, Clone)]
pub(super) struct SseEvent {
    pub id: String,
    pub data: Arc<str>,
}

/// The streams of one session.
pub(super) struct Streams {
    inner: Mutex<Inner>,
    /// Events kept per stream for resumption.
    backlog: usize,
    /// The HTTP+SSE transport (2024-11-05): one stream carries everything.
    sse_transport: bool,
}

#[derive(Default)]
struct Inner {
    next_stream: u64,
    /// Client request id (JSON text) → the stream that answers it.
    requests: HashMap<String, u64>,
    streams: HashMap<u64, Stream>,
    /// Whether new SSE streams start with an empty priming event (clients of
    /// 2025-11-25 and later expect it; older ones may not parse it).
    prime: bool,
    /// Whether the client ever opened (or resumed) an event stream with GET.
    attached: bool,
    /// The HTTP+SSE transport: the token's share each request in flight holds
    /// (its POST ended at once with 202), given back with its answer.
    calls: HashMap<String, Held>,
}

struct Stream {
    sink: Sink,
    /// Whether the client accepts an event stream for this request.
    sse: bool,
    seq: u64,
    /// The last events, for resumption.
    backlog: VecDeque<(u64, Arc<str>)>,
    /// The highest seq handed to a live sink.
    delivered: u64,
    /// Finished: its response was sent (or queued); it closes once delivered.
    finished: bool,
}

enum Sink {
    /// A POST waiting for its first message.
    Waiting(oneshot::Sender<Answer>),
    /// An open event stream.
    Open(mpsc::UnboundedSender<SseEvent>),
    /// Nobody is listening: events wait in the backlog.
    Detached,
}

/// Why a stream cannot be opened.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum OpenError {
    /// The client already has a request in flight with this id.
    DuplicateId,
    /// `Last-Event-ID` names no stream this session still has.
    UnknownEvent,
}

impl Streams {
    /// Streams for a new session.
    pub fn new(backlog: usize, sse_transport: bool) -> Arc<Streams> {
        let mut inner = Inner { next_stream: STANDALONE + 1, ..Inner::default() };
        inner.streams.insert(STANDALONE, Stream::new(Sink::Detached, true));
        Arc::new(Streams { inner: Mutex::new(inner), backlog: backlog.max(1), sse_transport })
    }

    /// Whether one stream carries everything (the HTTP+SSE transport).
    pub fn is_sse_transport(&self) -> bool {
        self.sse_transport
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        warden_sync::lock(&self.inner)
    }

    /// Prime new SSE streams with an empty event (protocol 2025-11-25 on).
    pub fn set_priming(&self, prime: bool) {
        self.lock().prime = prime;
    }

    /// Registers a POSTed request: its answer comes through the receiver.
    /// `sse`: whether the client accepts an event stream in answer.
    pub fn expect(&self, id: &str, sse: bool) -> Result<oneshot::Receiver<Answer>, OpenError> {
        let mut inner = self.lock();
        if inner.requests.contains_key(id) {
            return Err(OpenError::DuplicateId);
        }
        let (tx, rx) = oneshot::channel();
        let stream = inner.next_stream;
        inner.next_stream += 1;
        inner.requests.insert(id.to_owned(), stream);
        inner.streams.insert(stream, Stream::new(Sink::Waiting(tx), sse));
        Ok(rx)
    }

    /// Opens the GET stream (replacing an older one), or resumes the stream
    /// named by `last_event_id` after that event.
    pub fn attach(&self, last_event_id: Option<&str>) -> Result<mpsc::UnboundedReceiver<SseEvent>, OpenError> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut inner = self.lock();
        inner.attached = true;
        let prime = inner.prime;
        let (number, after) = match last_event_id {
            Some(last) => parse_event_id(last).ok_or(OpenError::UnknownEvent)?,
            None => (STANDALONE, None),
        };
        let stream = inner.streams.get_mut(&number).ok_or(OpenError::UnknownEvent)?;
        if prime && after.is_none() {
            let _ = tx.send(priming(number, stream.seq));
        }
        let from = after.unwrap_or(stream.delivered);
        for (seq, data) in stream.backlog.iter().filter(|(seq, _)| *seq > from) {
            let _ = tx.send(SseEvent { id: event_id(number, *seq), data: data.clone() });
        }
        stream.delivered = stream.seq;
        if stream.finished {
            // Everything it had is replayed: the stream ends here.
            inner.streams.remove(&number);
        } else {
            stream.sink = Sink::Open(tx);
        }
        Ok(rx)
    }

    /// The client cancelled request `id` (JSON text): its POST ends now,
    /// without a response, instead of waiting for an answer that will never
    /// come. The session has stopped waiting for it upstream first, so no
    /// answer can race this.
    pub fn cancel(&self, id: &str) {
        let mut inner = self.lock();
        if self.sse_transport {
            inner.calls.remove(id);
            return;
        }
        let Some(number) = inner.requests.remove(id) else { return };
        if let Some(Stream { sink: Sink::Waiting(tx), sse, .. }) = inner.streams.remove(&number) {
            // A client that takes only JSON needs some body; it ignores an
            // answer to a request it cancelled.
            let answer = if sse {
                Answer::Cancelled
            } else {
                let message = "the request was cancelled by the client";
                Answer::Json(error_response(Some(id), ErrorCode::RequestCancelled, message, None))
            };
            let _ = tx.send(answer);
        }
        // An open event stream ends as its sender drops with the stream.
    }

    /// The HTTP+SSE transport: request `id` (JSON text) holds `call` of its
    /// token's share until its answer goes out on the stream (or it is
    /// cancelled, or the session ends).
    pub fn hold_call(&self, id: &str, call: Held) {
        self.lock().calls.insert(id.to_owned(), call);
    }

    /// Whether the client ever opened an event stream with GET (the HTTP+SSE
    /// transport's stream counts).
    pub fn ever_attached(&self) -> bool {
        self.sse_transport || self.lock().attached
    }

    /// Whether an event stream of this session is open or a POST is waiting
    /// for its answer: such a session is in use even when no request arrives.
    pub fn any_open(&self) -> bool {
        self.lock().streams.values().any(|stream| match &stream.sink {
            Sink::Open(tx) => !tx.is_closed(),
            Sink::Waiting(tx) => !tx.is_closed(),
            Sink::Detached => false,
        })
    }

    /// Ends every stream (the session is over).
    pub fn close_all(&self) {
        let mut inner = self.lock();
        inner.requests.clear();
        inner.streams.clear();
        inner.calls.clear();
    }

    fn route(&self, message: Outbound) {
        let Outbound { text, request, is_response, .. } = message;
        let mut inner = self.lock();
        let prime = inner.prime;
        if self.sse_transport
            && is_response
            && let Some(id) = &request
        {
            inner.calls.remove(&**id);
        }
        let number = match request {
            _ if self.sse_transport => STANDALONE,
            Some(id) if is_response => inner.requests.remove(&*id).unwrap_or(STANDALONE),
            Some(id) => {
                match inner.requests.get(&*id).and_then(|number| inner.streams.get(number).map(|s| (number, s))) {
                    // A client that takes only JSON gets the rest on the GET stream.
                    Some((number, stream)) if stream.sse => *number,
                    _ => STANDALONE,
                }
            }
            None => STANDALONE,
        };
        let last = is_response && number != STANDALONE;
        let backlog = self.backlog;
        let Some(stream) = inner.streams.get_mut(&number) else { return };
        if stream.push(number, text, last, backlog, prime) {
            inner.streams.remove(&number);
        }
    }
}

impl Outlet for Arc<Streams> {
    fn deliver(&self, message: Outbound) {
        self.route(message);
    }

    fn cancelled(&self, request: &str) {
        self.cancel(request);
    }
}

impl Stream {
    fn new(sink: Sink, sse: bool) -> Stream {
        Stream { sink, sse, seq: 0, backlog: VecDeque::new(), delivered: 0, finished: false }
    }

    /// Sends or keeps one message; `last`: it is the response that ends
    /// the stream. Returns whether the stream is done and can be forgotten.
    fn push(&mut self, number: u64, text: String, last: bool, backlog: usize, prime: bool) -> bool {
        self.sink = match std::mem::replace(&mut self.sink, Sink::Detached) {
            Sink::Waiting(tx) if last => {
                // The POST may be gone (client disconnected): nothing to keep
                // then, since a JSON answer cannot be resumed.
                let _ = tx.send(Answer::Json(text));
                return true;
            }
            // Something comes before the response: the answer becomes a stream.
            Sink::Waiting(tx) => {
                let (events, receiver) = mpsc::unbounded_channel();
                if prime {
                    let _ = events.send(priming(number, 0));
                }
                if tx.send(Answer::Stream(receiver)).is_ok() { Sink::Open(events) } else { Sink::Detached }
            }
            other => other,
        };
        self.seq += 1;
        let data: Arc<str> = Arc::from(clean(text));
        self.backlog.push_back((self.seq, data.clone()));
        if self.backlog.len() > backlog {
            self.backlog.pop_front();
        }
        if let Sink::Open(tx) = &self.sink {
            if tx.send(SseEvent { id: event_id(number, self.seq), data }).is_ok() {
                self.delivered = self.seq;
            } else {
                self.sink = Sink::Detached;
            }
        }
        if last {
            self.finished = true;
            // Delivered: the stream ends (dropping the sender closes it).
            // Detached: kept, so that a resuming client still gets the response.
            return matches!(self.sink, Sink::Open(_));
        }
        false
    }
}

/// SSE cannot carry a carriage return; in valid JSON one can only be
/// whitespace between tokens, so dropping it changes nothing.
fn clean(text: String) -> String {
    if text.contains('\r') { text.replace('\r', "") } else { text }
}

/// An event with an id and no data: it tells a client where to resume from.
fn priming(stream: u64, seq: u64) -> SseEvent {
    SseEvent { id: event_id(stream, seq), data: Arc::from("") }
}

fn event_id(stream: u64, seq: u64) -> String {
    format!("{stream}-{seq}")
}

/// `<stream>-<seq>` → (stream, Some(seq)).
fn parse_event_id(id: &str) -> Option<(u64, Option<u64>)> {
    let (stream, seq) = id.trim().split_once('-')?;
    Some((stream.parse().ok()?, Some(seq.parse().ok()?)))
}

#[cfg(test)]
mod tests;
