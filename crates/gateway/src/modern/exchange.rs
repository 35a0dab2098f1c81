//! One modern request inside a lane, across its rounds.
//!
//! A round starts when the client sends the request (or retries it) and
//! ends with one final message: the answer, or `input_required` when the
//! upstream asked the client something meanwhile (elicitation, sampling,
//! roots). Between rounds the exchange is parked: the upstream's call keeps
//! waiting for the answers the retry brings.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use warden_jsonrpc::{Frame, Members, Method, json_string};

use super::envelope::Capabilities;
use super::reply::{ReplyMessage, ReplySender};

/// One request the upstream sent the client during the call, not yet
/// answered.
#[derive(Debug, Clone)]
pub(super) struct Input {
    /// Its key in `inputRequests`.
    pub key: String,
    /// The id Warden gave it towards the client (JSON text).
    pub warden_id: String,
    /// `{"method":…,"params":…}`.
    pub request: String,
}

/// The current round's client side.
pub(super) struct Round {
    /// The client's id for this round's request (JSON text).
    pub client_id: String,
    /// Where this round's messages go; `None` while parked.
    pub to_client: Option<ReplySender>,
    /// What the client said it can do, this round.
    pub capabilities: Capabilities,
    /// Whether the client asked for log messages.
    pub logs: bool,
    /// The `progressToken` of this round's request (JSON text), if it asked
    /// for progress. Each retry is a request of its own, and a client
    /// follows progress by the token of the request it waits on.
    pub progress_token: Option<String>,
    /// Rounds so far: a cancel or a park timer belongs to one round.
    pub generation: u64,
}

/// A modern request in a lane.
pub(super) struct Exchange {
    /// The number of its id inside the lane: its key in the lane's map.
    pub key: u64,
    /// Its method.
    pub method: Method,
    /// Its params, kept for [`Exchange::digest`] (methods that may need
    /// input only).
    params: Option<String>,
    /// What its `requestState` binds it to, worked out when first needed.
    digest: OnceLock<String>,
    state: Mutex<ExchangeState>,
}

struct ExchangeState {
    round: Round,
    /// Asked by the upstream, not answered yet.
    pending: Vec<Input>,
    /// The answer, when it came while parked.
    answer: Option<String>,
}

/// What to do after the client's retry was taken in.
pub(super) enum Resumed {
    /// Answers to send to the session (the client's results for the
    /// upstream's requests).
    Answers(Vec<String>),
    /// The request had already finished: this is its final message.
    Finished(String),
}

impl Exchange {
    pub fn new(key: u64, method: Method, params: Option<String>, round: Round) -> Arc<Exchange> {
        Arc::new(Exchange {
            key,
            method,
            params,
            digest: OnceLock::new(),
            state: Mutex::new(ExchangeState { round, pending: Vec::new(), answer: None }),
        })
    }

    /// Its id inside the lane (JSON text), as the session knows it.
    pub fn internal(&self) -> String {
        format!("\"wm{}\"", self.key)
    }

    /// What a `requestState` of this request binds: its method, name or URI
    /// and arguments (hashed only for a request that gets input).
    pub fn digest(&self) -> &str {
        self.digest.get_or_init(|| binding(self.method.as_str(), self.params.as_deref()))
    }

    fn lock(&self) -> MutexGuard<'_, ExchangeState> {
        warden_sync::lock(&self.state)
    }

    /// The round's capabilities.
    pub fn capabilities(&self) -> Capabilities {
        self.lock().round.capabilities
    }

    /// The final answer (a 2025-era response, under whichever id: the
    /// rewrite writes the client's), rewritten by `finish` for the client.
    /// Returns false when parked: the answer waits for the retry.
    pub fn finish(&self, text: &str, finish: impl FnOnce(&str, &str) -> String) -> bool {
        let mut state = self.lock();
        match state.round.to_client.take() {
            Some(to_client) => {
                let _ = to_client.send(ReplyMessage::Last(finish(text, &state.round.client_id)));
                true
            }
            None => {
                state.answer = Some(text.to_owned());
                false
            }
        }
    }

    /// Progress on this request, under the token of the round running now
    /// (the upstream's call outlives the request that started it: after an
    /// `input_required`, the client follows the retry's token). Dropped
    /// while parked, and in a round whose request asked for no progress.
    pub fn progress(&self, frame: &Frame) {
        let state = self.lock();
        let (Some(to_client), Some(token)) = (&state.round.to_client, &state.round.progress_token) else { return };
        let Some(span) = progress_token_span(frame) else { return };
        let mut text = String::with_capacity(frame.text().len() + token.len());
        text.push_str(&frame.text()[..span.start]);
        text.push_str(token);
        text.push_str(&frame.text()[span.end..]);
        let _ = to_client.send(ReplyMessage::Note(text));
    }

    /// A notification for this request: log messages only when asked for.
    /// Dropped while parked.
    pub fn notify(&self, text: String, is_log: bool) {
        let state = self.lock();
        if is_log && !state.round.logs {
            return;
        }
        if let Some(to_client) = &state.round.to_client {
            let _ = to_client.send(ReplyMessage::Note(text));
        }
    }

    /// Takes an upstream's request for the client.
    pub fn ask(&self, input: Input) {
        self.lock().pending.push(input);
    }

    /// Ends the round with `input_required` if anything is pending and the
    /// client is there; `seal` writes the state. Returns the generation
    /// parked, to time it out.
    pub fn park(&self, seal: impl FnOnce(u64) -> String) -> Option<u64> {
        let mut state = self.lock();
        if state.pending.is_empty() || state.answer.is_some() {
            return None;
        }
        let to_client = state.round.to_client.take()?;
        let requests: Vec<String> =
            state.pending.iter().map(|input| format!("{}:{}", json_string(&input.key), input.request)).collect();
        let result = format!(
            r#"{{"resultType":"input_required","inputRequests":{{{}}},"requestState":{}}}"#,
            requests.join(","),
            json_string(&seal(state.round.generation))
        );
        let _ = to_client.send(ReplyMessage::Last(warden_jsonrpc::result_response(&state.round.client_id, &result)));
        Some(state.round.generation)
    }

    /// Whether the exchange is still parked in round `generation`.
    pub fn parked_in(&self, generation: u64) -> bool {
        let state = self.lock();
        state.round.generation == generation && state.round.to_client.is_none()
    }

    /// Whether round `generation` is still running with its client there.
    pub fn running_in(&self, generation: u64) -> bool {
        let state = self.lock();
        state.round.generation == generation && state.round.to_client.is_some()
    }

    /// Takes the client's retry: a new round. `responses` are its
    /// `inputResponses`; those that answer pending requests become answers
    /// for the session, the rest is ignored. Fails when a round is running.
    pub fn resume(
        &self,
        mut round: Round,
        responses: Option<&Members>,
        ended: u64,
    ) -> Result<(Resumed, u64), &'static str> {
        let mut state = self.lock();
        if state.round.to_client.is_some() {
            return Err("this request is already being retried");
        }
        if ended != state.round.generation {
            // The state of an earlier round, replayed.
            return Err("Invalid or expired requestState");
        }
        round.generation = state.round.generation + 1;
        let generation = round.generation;
        if let Some(answer) = state.answer.take() {
            state.round = round;
            return Ok((Resumed::Finished(answer), generation));
        }
        let mut answers = Vec::new();
        state.pending.retain(|input| match responses.and_then(|responses| responses.get(&input.key)) {
            Some(result) if result.trim_start().starts_with('{') => {
                answers.push(format!(r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#, input.warden_id));
                false
            }
            _ => true,
        });
        state.round = round;
        Ok((Resumed::Answers(answers), generation))
    }
}

/// The `progressToken` a request carries in its params' `_meta` (JSON
/// text), as the session finds it: none for `null` or one named twice.
pub(super) fn progress_token_of(frame: &Frame) -> Option<String> {
    // `_meta` is looked up only if the parse did not find the token's place.
    let token = crate::parts::progress_token(frame, || frame.param_meta()?.ok()?)?;
    Some(frame.text()[token].to_owned())
}

/// Where a progress notification's token is.
fn progress_token_span(frame: &Frame) -> Option<std::ops::Range<usize>> {
    let token = Members::parse(frame.params()?).ok()?.get("progressToken")?;
    Some(frame.span_of(token))
}

/// The methods that may answer `input_required` (2026-07-28).
pub(super) fn may_need_input(method: &str) -> bool {
    matches!(method, "tools/call" | "prompts/get" | "resources/read")
}

/// What binds a request's state: method, name or URI, arguments.
pub(super) fn binding(method: &str, params: Option<&str>) -> String {
    let params = params.and_then(|params| Members::parse(params).ok());
    let get = |key: &str| params.as_ref().and_then(|params| params.get(key));
    let name = get("name").or_else(|| get("uri")).and_then(|raw| serde_json::from_str::<String>(raw).ok());
    super::seal::request_digest(method, name.as_deref(), get("arguments"))
}

/// An input request as `inputRequests` lists it, from the upstream's
/// request `frame`.
pub(super) fn input_request(frame: &Frame, method: &str) -> String {
    match frame.params() {
        Some(params) => format!(r#"{{"method":{},"params":{params}}}"#, json_string(method)),
        None => format!(r#"{{"method":{}}}"#, json_string(method)),
    }
}
