//! A lane: the gateway session that serves one principal's modern requests
//! on one endpoint, and the routing of its messages back to each request.

use foldhash::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use warden_jsonrpc::{
    ErrorCode, Frame, Kind, Members, Method, Needle, error_response, json_string, notification, result_response,
};

use super::discover;
use super::envelope::Envelope;
use super::exchange::{Exchange, Input, Resumed, Round, binding, input_request, may_need_input, progress_token_of};
use super::listeners::Listeners;
use super::reply::{self, Canceller, DropCancel, Reply, ReplyMessage};
use super::results::{self, ResultAt};
use super::seal::{RequestState, Sealer, expiry};
use crate::outlet::{Outbound, Outlet};
use crate::session::Session;
use warden_sync::lock;

/// How long Warden waits for more input requests of the same call before
/// returning them together.
const GATHER: Duration = Duration::from_millis(2);

/// Methods 2026-07-28 removed (the tasks of 2025 included: they do not map
/// onto the tasks extension).
const REMOVED: [&str; 9] = [
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
    "tasks/get",
    "tasks/result",
    "tasks/cancel",
    "tasks/list",
];

/// Serves modern requests through one gateway session.
#[derive(Clone)]
pub struct Lane {
    inner: Arc<Inner>,
}

pub(super) struct Inner {
    /// Random: a `requestState` is valid only in the lane that issued it.
    pub(super) id: String,
    pub(super) session: Session,
    /// Requests in flight or parked, by the number of their id inside the
    /// lane (see [`exchange_key`]): numbers Warden gives, hashed with
    /// foldhash (with SipHash, a 2026-07-28 call took 700 instructions more).
    pub(super) exchanges: Mutex<HashMap<u64, Arc<Exchange>>>,
    pub(super) listeners: Listeners,
    /// Resource URIs subscribed upstream for listen streams, with counts.
    pub(super) subscribed: Mutex<HashMap<String, usize>>,
    pub(super) sealer: Arc<Sealer>,
    pub(super) next: AtomicU64,
    pub(super) last_used: Mutex<Instant>,
    /// How long an upstream's input request waits for the client's retry
    /// (`http.requestStateSecs`).
    pub(super) parked_for: Duration,
}

/// The outlet of a session that a lane serves, or may serve: until a lane
/// takes it over, messages go to `fallback` (the stdio front starts its
/// session before it knows the client's era).
#[derive(Clone, Default)]
pub struct LaneOutlet {
    lane: Arc<OnceLock<Weak<Inner>>>,
    fallback: Option<Arc<dyn Outlet>>,
}

impl LaneOutlet {
    /// An outlet that sends everything to `fallback` until a lane takes over.
    pub fn with_fallback(fallback: impl Outlet) -> LaneOutlet {
        LaneOutlet { lane: Arc::default(), fallback: Some(Arc::new(fallback)) }
    }
}

impl Outlet for LaneOutlet {
    fn deliver(&self, message: Outbound) {
        match self.lane.get().and_then(Weak::upgrade) {
            Some(lane) => lane.deliver(message),
            None => {
                if let Some(fallback) = &self.fallback {
                    fallback.deliver(message);
                }
            }
        }
    }

    fn deliver_answer(&self, answer: &Frame, request: &str, alone: bool) {
        match self.lane.get().and_then(Weak::upgrade) {
            Some(lane) => lane.answer(answer, request),
            None => {
                if let Some(fallback) = &self.fallback {
                    fallback.deliver_answer(answer, request, alone);
                }
            }
        }
    }
}

impl Lane {
    /// Makes `session`, whose outlet is `outlet`, serve modern requests, and
    /// initializes it in the 2025 era on the clients' behalf, declaring every
    /// client capability Warden can bridge (each request's own capabilities
    /// decide what reaches its client). `client_info` (JSON text) names the
    /// client to the upstreams. A request left waiting for input is
    /// forgotten after `parked_for` (the lifetime of its `requestState`).
    pub fn over(
        session: Session,
        outlet: &LaneOutlet,
        sealer: Arc<Sealer>,
        client_info: Option<&str>,
        parked_for: Duration,
    ) -> Lane {
        let inner = Arc::new(Inner {
            id: random_id(),
            session,
            exchanges: Mutex::default(),
            listeners: Listeners::default(),
            subscribed: Mutex::default(),
            sealer,
            next: AtomicU64::new(1),
            last_used: Mutex::new(Instant::now()),
            parked_for,
        });
        let _ = outlet.lane.set(Arc::downgrade(&inner));
        let info = client_info.unwrap_or(r#"{"name":"warden-modern-client","version":"0"}"#);
        let params = format!(
            r#"{{"protocolVersion":"2025-11-25","capabilities":{{"elicitation":{{"form":{{}},"url":{{}}}},"sampling":{{}},"roots":{{}}}},"clientInfo":{info}}}"#
        );
        if let Ok(frame) = Frame::parse(warden_jsonrpc::request("\"warden-lane\"", "initialize", Some(&params))) {
            inner.session.handle_frame(frame);
        }
        inner.session.handle(notification("notifications/initialized", None));
        Lane { inner }
    }

    /// The gateway session.
    pub fn session(&self) -> &Session {
        &self.inner.session
    }

    /// Whether a request or a listen stream is open (parked requests count).
    pub fn busy(&self) -> bool {
        !lock(&self.inner.exchanges).is_empty() || self.inner.listeners.len() > 0
    }

    /// How long since the lane last took a request.
    pub fn idle_for(&self) -> Duration {
        lock(&self.inner.last_used).elapsed()
    }

    /// Serves one modern request whose envelope was checked.
    pub async fn serve(&self, frame: &Frame, envelope: &Envelope) -> Reply {
        *lock(&self.inner.last_used) = Instant::now();
        let id = frame.id().unwrap_or("null").to_owned();
        let method = frame.method().cloned().unwrap_or_else(|| Method::Other("".into()));
        match method.as_str() {
            "server/discover" => Reply::done(discover::answer(&id)),
            "subscriptions/listen" => self.inner.listen(frame, id).await,
            removed if REMOVED.contains(&removed) => Reply::done(error_response(
                Some(&id),
                ErrorCode::MethodNotFound,
                &format!("Method not found: {removed} is not part of MCP 2026-07-28"),
                None,
            )),
            "tools/call" | "prompts/get" | "resources/read" if has_request_state(frame) => {
                self.inner.retry(frame, envelope, id, method.as_str())
            }
            _ => self.inner.start(frame, envelope, id, method),
        }
    }

    /// Stops the session's upstreams.
    pub async fn shutdown(&self) {
        self.inner.session.shutdown().await;
    }
}

impl Inner {
    /// Routes one message of the session.
    fn deliver(self: &Arc<Self>, message: Outbound) {
        let key = message.request.as_deref().and_then(exchange_key);
        let exchange = key.and_then(|key| lock(&self.exchanges).get(&key).cloned());
        let Some(exchange) = exchange else { return self.unrouted(message.text) };
        if message.is_response {
            let result = message.result.map(|span| ResultAt { span, plain: false });
            self.finish(&exchange, &message.text, result);
            return;
        }
        let Ok(frame) = Frame::parse(message.text) else { return };
        let method = frame.method().map(|method| method.as_str().to_owned()).unwrap_or_default();
        match frame.kind() {
            Kind::Request => self.ask(&exchange, frame, &method),
            Kind::Notification if is_change(&method) => self.listeners.fan_out(&frame, &method),
            // 2026-07-28 has no URL-elicitation completion: the retry is it.
            Kind::Notification if method == "notifications/elicitation/complete" => {}
            Kind::Notification if method == "notifications/progress" => exchange.progress(&frame),
            Kind::Notification => exchange.notify(frame.into_text(), method == "notifications/message"),
            _ => {}
        }
    }

    /// An upstream's answer to the request the lane sent as `request`,
    /// rewritten for its client straight from the upstream's frame.
    fn answer(&self, answer: &Frame, request: &str) {
        let exchange = exchange_key(request).and_then(|key| lock(&self.exchanges).get(&key).cloned());
        // A response that belongs to no request (it was cancelled) is dropped.
        if let Some(exchange) = exchange {
            let result = answer
                .payload_span()
                .filter(|_| answer.kind() == Kind::Response)
                .map(|span| ResultAt { span, plain: answer.result_is_plain() });
            self.finish(&exchange, answer.text(), result);
        }
    }

    /// The final answer of `exchange`'s call (a 2025-era response, its
    /// result at `result` when known): to the client, or kept for the retry
    /// while the request is parked.
    fn finish(&self, exchange: &Arc<Exchange>, text: &str, result: Option<ResultAt>) {
        let method = exchange.method.as_str();
        if exchange.finish(text, |text, id| results::complete(text, result, id, method)) {
            self.forget(exchange);
        }
    }

    /// A message that belongs to no modern request.
    fn unrouted(&self, text: String) {
        let Ok(frame) = Frame::parse(text) else { return };
        let method = frame.method().map(|method| method.as_str().to_owned()).unwrap_or_default();
        match frame.kind() {
            Kind::Request => {
                let id = frame.id().unwrap_or("null");
                // A modern client is asked only within one of its requests.
                // Outside one, even `roots/list` is refused rather than
                // answered with no roots: a server keeps such an answer
                // (server-everything caches it for the session) and would
                // act on "the client has no roots" although it has some.
                // Refused, it asks again during a call, where the client
                // is asked for real.
                let answer = match method.as_str() {
                    "ping" => result_response(id, "{}"),
                    _ => error_response(
                        Some(id),
                        ErrorCode::MethodNotFound,
                        &format!("{method}: a modern (2026-07-28) client can be asked only during one of its requests"),
                        None,
                    ),
                };
                self.session.handle(answer);
            }
            Kind::Notification if is_change(&method) => self.listeners.fan_out(&frame, &method),
            _ => {}
        }
    }

    /// An upstream asks the client something during `exchange`'s call.
    fn ask(self: &Arc<Self>, exchange: &Arc<Exchange>, frame: Frame, method: &str) {
        let id = frame.id().unwrap_or("null").to_owned();
        if !may_need_input(exchange.method.as_str()) {
            let message = format!(
                "{method} cannot be asked during {}: only calls, prompts and reads take input",
                exchange.method.as_str()
            );
            self.session.handle(error_response(Some(&id), ErrorCode::MethodNotFound, &message, None));
            return;
        }
        if let Some(missing) = exchange.capabilities().lacks_for(method, frame.params()) {
            let message =
                format!("Missing required client capability: the server asked for {method}, which needs {missing}");
            let data = format!(r#"{{"requiredCapabilities":{missing}}}"#);
            let refusal = error_response(Some(&id), ErrorCode::MissingClientCapability, &message, Some(&data));
            self.session.handle(refusal);
            return;
        }
        // An upstream's own key when Warden asks on its behalf (2026-07-28
        // to 2026-07-28), else one of Warden's.
        let key = self.session.input_key(&id).unwrap_or_else(|| format!("warden-{}", id.trim_matches('"')));
        exchange.ask(Input { key, warden_id: id, request: input_request(&frame, method) });
        // Siblings sent together are returned together.
        let (lane, exchange) = (self.clone(), exchange.clone());
        tokio::spawn(async move {
            tokio::time::sleep(GATHER).await;
            lane.park(&exchange);
        });
    }

    /// Returns `input_required` for what is pending, and times the parked
    /// request out if no retry comes.
    fn park(self: &Arc<Self>, exchange: &Arc<Exchange>) {
        let seal = |round| {
            self.sealer.seal(&RequestState {
                lane: self.id.clone(),
                exchange: exchange.internal(),
                request: exchange.digest().to_owned(),
                round,
                expires: expiry(self.parked_for),
            })
        };
        let Some(generation) = exchange.park(seal) else { return };
        let (lane, exchange, parked_for) = (Arc::downgrade(self), exchange.clone(), self.parked_for);
        tokio::spawn(async move {
            tokio::time::sleep(parked_for).await;
            if let Some(lane) = lane.upgrade()
                && exchange.parked_in(generation)
            {
                lane.cancel(&exchange, "the client did not retry in time");
            }
        });
    }

    /// A new request: into the session under a lane id.
    fn start(self: &Arc<Self>, frame: &Frame, envelope: &Envelope, client_id: String, method: Method) -> Reply {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        // `"wm7"`, written on the stack (`Exchange::internal` writes it again
        // for the rare paths that need it as text).
        let mut id = [0u8; 24];
        let internal = internal_id(&mut id, key);
        let Some(inner_frame) = inner_request(frame, internal, method.as_str()) else {
            let message = "params must be an object";
            return Reply::done(error_response(Some(&client_id), ErrorCode::InvalidParams, message, None));
        };
        let (to_client, pieces) = reply::channel();
        let round = Round {
            client_id,
            to_client: Some(to_client),
            capabilities: envelope.capabilities,
            logs: envelope.logs,
            progress_token: progress_token_of(frame),
            generation: 0,
        };
        let params = frame.params().filter(|_| may_need_input(method.as_str())).map(str::to_owned);
        let exchange = Exchange::new(key, method, params, round);
        lock(&self.exchanges).insert(key, exchange.clone());
        let work = self.session.request_work(inner_frame);
        let lane: Weak<dyn Canceller> = Arc::downgrade(self) as Weak<Inner>;
        let cancel = DropCancel::Round { lane, key, generation: 0 };
        Reply::new(pieces, Some(work), Some(cancel))
    }

    /// A retry carrying `requestState`: the parked request goes on.
    fn retry(self: &Arc<Self>, frame: &Frame, envelope: &Envelope, client_id: String, method: &str) -> Reply {
        let invalid =
            |message: &str| Reply::done(error_response(Some(&client_id), ErrorCode::InvalidParams, message, None));
        let Some(params) = frame.params().and_then(|params| Members::parse(params).ok()) else {
            return invalid("params must be an object");
        };
        let state = params.get("requestState").and_then(|raw| serde_json::from_str::<String>(raw).ok());
        let opened = state.as_deref().map(|state| self.sealer.open(state));
        let Some(Ok(state)) = opened else { return invalid("Invalid or expired requestState") };
        let exchange = exchange_key(&state.exchange).and_then(|key| lock(&self.exchanges).get(&key).cloned());
        let Some(exchange) = exchange.filter(|exchange| {
            state.lane == self.id
                && exchange.internal() == state.exchange
                && exchange.method.as_str() == method
                && exchange.digest() == binding(method, frame.params())
        }) else {
            return invalid("Invalid or expired requestState");
        };
        let responses = params.get("inputResponses").and_then(|raw| Members::parse(raw).ok());
        let (to_client, pieces) = reply::channel();
        let round = Round {
            client_id: client_id.clone(),
            to_client: Some(to_client.clone()),
            capabilities: envelope.capabilities,
            logs: envelope.logs,
            progress_token: progress_token_of(frame),
            generation: 0,
        };
        match exchange.resume(round, responses.as_ref(), state.round) {
            Err(why) => invalid(why),
            Ok((Resumed::Finished(answer), _)) => {
                let _ = to_client.send(ReplyMessage::Last(results::complete(&answer, None, &client_id, method)));
                self.forget(&exchange);
                Reply::new(pieces, None, None)
            }
            Ok((Resumed::Answers(answers), generation)) => {
                drop(to_client);
                for answer in answers {
                    self.session.handle(answer);
                }
                // What is still unanswered is asked again at once.
                self.park(&exchange);
                let lane: Weak<dyn Canceller> = Arc::downgrade(self) as Weak<Inner>;
                let cancel = DropCancel::Round { lane, key: exchange.key, generation };
                Reply::new(pieces, None, Some(cancel))
            }
        }
    }

    /// Warden's own request into the session (for listen streams).
    pub(super) fn internal(self: &Arc<Self>, method: &str, params: &str) -> Reply {
        let id = format!("\"wi{}\"", self.next.fetch_add(1, Ordering::Relaxed));
        let envelope = Envelope::default();
        match Frame::parse(warden_jsonrpc::request(&id, method, Some(params))) {
            Ok(frame) => self.start(&frame, &envelope, id, Method::parse(method)),
            Err(_) => Reply::done(error_response(Some(&id), ErrorCode::InternalError, "cannot build", None)),
        }
    }

    /// Cancels `exchange`'s call upstream and forgets it.
    pub(super) fn cancel(&self, exchange: &Arc<Exchange>, reason: &str) {
        self.forget(exchange);
        let params = format!(r#"{{"requestId":{},"reason":{}}}"#, exchange.internal(), json_string(reason));
        self.session.handle(notification("notifications/cancelled", Some(&params)));
    }

    fn forget(&self, exchange: &Exchange) {
        lock(&self.exchanges).remove(&exchange.key);
    }
}

impl Canceller for Inner {
    fn cancel_round(self: Arc<Self>, key: u64, generation: u64) {
        let exchange = lock(&self.exchanges).get(&key).cloned();
        if let Some(exchange) = exchange.filter(|exchange| exchange.running_in(generation)) {
            self.cancel(&exchange, "the client closed the request");
        }
    }

    fn close_listen(self: Arc<Self>, key: u64) {
        if let Some(filter) = self.listeners.remove(key) {
            for uri in filter.resource_subscriptions {
                self.unsubscribe(uri);
            }
        }
    }
}

/// `"wm<key>"`, written in `out`.
fn internal_id(out: &mut [u8; 24], key: u64) -> &str {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(key).as_bytes();
    out[..3].copy_from_slice(b"\"wm");
    out[3..3 + digits.len()].copy_from_slice(digits);
    out[3 + digits.len()] = b'"';
    std::str::from_utf8(&out[..4 + digits.len()]).unwrap_or("\"wm\"")
}

/// The key of an exchange from its id inside the lane (`"wm7"`).
fn exchange_key(internal: &str) -> Option<u64> {
    internal.strip_prefix("\"wm")?.strip_suffix('"')?.parse().ok()
}

/// The change notifications listen streams carry.
fn is_change(method: &str) -> bool {
    matches!(
        method,
        "notifications/tools/list_changed"
            | "notifications/prompts/list_changed"
            | "notifications/resources/list_changed"
            | "notifications/resources/updated"
    )
}

/// Whether `frame`'s params have a member `requestState` (a retry).
fn has_request_state(frame: &Frame) -> bool {
    // Most requests are first rounds: params with no member but the usual
    // ones, or a search of the text, built once, say so without reading them.
    static QUOTED: Needle = Needle::new("\"requestState\"");
    if only_usual_members(frame) {
        return false;
    }
    frame.params().is_some_and(|params| QUOTED.is_in(params))
        && frame
            .params()
            .and_then(|params| Members::parse(params).ok())
            .is_some_and(|params| params.contains("requestState"))
}

/// Whether the parse found the params to have no member but `name`,
/// `arguments`, `_meta` and `task`: then they carry no retry member.
fn only_usual_members(frame: &Frame) -> bool {
    frame.params_have_others() == Some(false)
}

/// The request as the lane's session takes it: the lane's id, without the
/// retry members (the lane answers those itself). The envelope stays: a
/// modern upstream gets the client's own, and the connection to a 2025-era
/// one takes it off. Everything else keeps its bytes.
fn inner_request(frame: &Frame, internal: &str, method: &str) -> Option<Frame> {
    const RETRY_KEYS: [&str; 2] = ["inputResponses", "requestState"];
    static RETRY_MEMBERS: [Needle; 2] = [Needle::new(RETRY_KEYS[0]), Needle::new(RETRY_KEYS[1])];
    let Some(params) = frame.params() else { return Some(frame.with_id_frame(internal)) };
    if !params.starts_with('{') {
        return None;
    }
    // Most requests carry neither: only their id changes, nothing is read again.
    if only_usual_members(frame) || !RETRY_MEMBERS.iter().any(|member| member.is_in(params)) {
        return Some(frame.with_id_frame(internal));
    }
    let mut params = Members::parse(params).ok()?;
    params.remove_where(|key| RETRY_KEYS.contains(&key));
    Frame::parse(warden_jsonrpc::request(internal, method, Some(&params.render(&[], &[])))).ok()
}

/// A lane id nobody can guess: 64 random bits, or a counter if the system
/// has no randomness to give (the state's tag protects it either way).
fn random_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(1);
    let mut bytes = [0u8; 8];
    let random =
        std::fs::File::open("/dev/urandom").and_then(|mut file| std::io::Read::read_exact(&mut file, &mut bytes));
    match random {
        Ok(()) => format!("{:016x}", u64::from_ne_bytes(bytes)),
        Err(_) => format!("c{}", COUNTER.fetch_add(1, Ordering::Relaxed)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_internal_id_reads_back_as_its_key() {
        for key in [0, 7, 1234567, u64::MAX] {
            let mut out = [0u8; 24];
            let id = internal_id(&mut out, key);
            assert_eq!(id, format!("\"wm{key}\""));
            assert_eq!(exchange_key(id), Some(key));
        }
        assert_eq!(exchange_key("\"wi8\""), None);
        assert_eq!(exchange_key("7"), None);
    }

    #[test]
    fn the_inner_request_drops_only_the_retry_members() {
        let frame = Frame::parse(
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"t","arguments":{"x":1.50},"requestState":"s","inputResponses":{},"_meta":{"progressToken":"p"}}}"#,
        )
        .unwrap();
        let inner = inner_request(&frame, "\"wm1\"", "tools/call").unwrap();
        assert_eq!(
            inner.text(),
            r#"{"jsonrpc":"2.0","id":"wm1","method":"tools/call","params":{"name":"t","arguments":{"x":1.50},"_meta":{"progressToken":"p"}}}"#
        );
        // Without them, only the id changes.
        let text = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"t","arguments":{"x":1.50}}}"#;
        let inner = inner_request(&Frame::parse(text).unwrap(), "\"wm2\"", "tools/call").unwrap();
        assert_eq!(inner.text(), text.replace("9", "\"wm2\""));
        assert_eq!(inner.params(), Some(r#"{"name":"t","arguments":{"x":1.50}}"#));
        let array = Frame::parse(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":[1]}"#).unwrap();
        assert!(inner_request(&array, "\"wm3\"", "tools/call").is_none());
    }
}
