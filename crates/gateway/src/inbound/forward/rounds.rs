//! A modern upstream's `input_required` (2026-07-28 MRTR), met on the
//! client's behalf: each input request is asked of the client as a real
//! request (a 2025-era client answers it as any server request; a lane
//! turns it into its own `input_required`), and the call is sent again with
//! the answers and the upstream's `requestState`, byte for byte. The state
//! never leaves Warden.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;
use warden_jsonrpc::{ErrorCode, Frame, Kind, Members, Needle, Splice, error_response, json_string};
use warden_upstream::Connection;

use super::Forwarded;
use crate::parts::SessionParts;
use warden_sync::lock;

/// Marks an answer that may be `input_required`: looked for in every
/// answer from a modern server.
pub(super) static INPUT_REQUIRED: Needle = Needle::new("input_required");

/// SDK clients stop after ten rounds; so does Warden.
const MAX_ROUNDS: usize = 10;

/// A round that asks nothing and only carries state is sent again after
/// this pause, so a server that keeps answering so cannot spin Warden.
const STATE_ONLY_PAUSE: Duration = Duration::from_millis(250);

/// What an `input_required` result asks.
struct InputRequired {
    /// `(key, method, params)`, params as JSON text.
    requests: Vec<(String, String, Option<String>)>,
    /// The upstream's `requestState` as JSON text, to echo exactly.
    state: Option<String>,
}

impl InputRequired {
    fn read(answer: &Frame) -> Option<InputRequired> {
        if answer.kind() != Kind::Response {
            return None;
        }
        let payload = answer.payload().filter(|payload| INPUT_REQUIRED.is_in(payload))?;
        let result = Members::parse(payload).ok()?;
        if result.get("resultType")?.trim() != r#""input_required""# {
            return None;
        }
        let mut requests = Vec::new();
        if let Some(asked) = result.get("inputRequests").and_then(|raw| Members::parse(raw).ok()) {
            for key in asked.keys() {
                let request = asked.get(key).and_then(|raw| Members::parse(raw).ok());
                let method = request
                    .as_ref()
                    .and_then(|request| request.get("method"))
                    .and_then(|raw| serde_json::from_str::<String>(raw).ok());
                let Some(method) = method else { continue };
                let params = request.as_ref().and_then(|request| request.get("params")).map(str::to_owned);
                requests.push((key.to_owned(), method, params));
            }
        }
        Some(InputRequired { requests, state: result.get("requestState").map(str::to_owned) })
    }
}

/// Meets `answer`'s input requests, if it has any, until the upstream
/// answers for good. `base` holds the request's renames (not its id); the
/// request is the client's `client_id`, in flight under `serial`.
pub(super) async fn complete_rounds(
    session: &SessionParts,
    frame: &Frame,
    (client_id, serial): (&str, u64),
    connection: &Arc<Connection>,
    base: &Splice,
    mut answer: Frame,
) -> Forwarded {
    for _ in 0..MAX_ROUNDS {
        let Some(asked) = InputRequired::read(&answer) else { return Forwarded::Answer(answer) };
        if asked.requests.is_empty() {
            tokio::time::sleep(STATE_ONLY_PAUSE).await;
        }
        // All asked at once: a modern client gets them in one round.
        let asking: Vec<_> = asked
            .requests
            .iter()
            .map(|(key, method, params)| (key, method, ask_client(session, client_id, key, method, params.as_deref())))
            .collect();
        let mut responses = Vec::new();
        for (key, method, answered) in asking {
            let Ok(frame) = answered.await else {
                return failed(&format!("the client did not answer {method}"));
            };
            match (frame.kind(), frame.payload()) {
                (Kind::Response, Some(result)) => responses.push(format!("{}:{result}", json_string(key))),
                // The client's refusal (a missing capability, say) is the call's answer.
                (_, Some(error)) => return answer_with(&format!(r#"{{"jsonrpc":"2.0","id":0,"error":{error}}}"#)),
                (_, None) => return failed(&format!("the client answered {method} with nothing")),
            }
        }
        if !session.maps.still_in_flight(client_id, serial) {
            return Forwarded::Cancelled;
        }
        let id_span = frame.id_span();
        let sent = connection.send_request(|id| {
            let mut splice = base.clone();
            if let Some(span) = id_span {
                splice.replace(span, id);
            }
            retry(&splice.apply(frame.text()), &responses, asked.state.as_deref())
        });
        let (upstream_id, response) = match sent {
            Ok(sent) => sent,
            Err(err) => return Forwarded::Failed(err),
        };
        session.surface.hooks.load().observer.round(connection.name());
        match lock(&session.maps.in_flight).get_mut(client_id).filter(|entry| entry.serial == serial) {
            Some(entry) => entry.upstream_id = upstream_id,
            None => {
                connection.forget(upstream_id);
                return Forwarded::Cancelled;
            }
        }
        answer = match response.await {
            Ok(answer) => answer,
            Err(err) => return Forwarded::Failed(err),
        };
    }
    failed(&format!("the server asked for input more than {MAX_ROUNDS} times"))
}

/// Asks the client `method` on behalf of its request `client_id`, for
/// the upstream's input request `key`; the client's answer comes on the
/// receiver.
fn ask_client(
    session: &SessionParts,
    client_id: &str,
    key: &str,
    method: &str,
    params: Option<&str>,
) -> oneshot::Receiver<Frame> {
    let id = session.next();
    let (answer, answered) = oneshot::channel();
    lock(&session.maps.own_requests).insert(id, answer);
    lock(&session.maps.input_keys).insert(id, key.to_owned());
    session.link.send_related(warden_jsonrpc::request(&id.to_string(), method, params), Some(client_id));
    answered
}

/// The request sent again with this round's answers and the server's state.
fn retry(text: &str, responses: &[String], state: Option<&str>) -> String {
    let Ok(message) = Members::parse(text) else { return text.to_owned() };
    let Some(Ok(mut params)) = message.get("params").map(Members::parse) else { return text.to_owned() };
    params.remove_where(|key| key == "inputResponses" || key == "requestState");
    let answers = format!("{{{}}}", responses.join(","));
    let mut extra = vec![("inputResponses", answers.as_str())];
    if let Some(state) = state {
        extra.push(("requestState", state));
    }
    let params = params.render(&extra, &[]);
    message.render(&[], &[("params", &params)])
}

fn failed(why: &str) -> Forwarded {
    answer_with(&error_response(Some("0"), ErrorCode::InternalError, why, None))
}

fn answer_with(text: &str) -> Forwarded {
    match Frame::parse(text) {
        Ok(frame) => Forwarded::Answer(frame),
        Err(_) => Forwarded::Cancelled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_input_requests_and_retries_with_the_exact_state() {
        let answer = Frame::parse(
            r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{"message":"m"}},"b":{"method":"roots/list"}},"requestState":"s\u0041 1"}}"#,
        )
        .unwrap();
        let asked = InputRequired::read(&answer).unwrap();
        assert_eq!(asked.requests.len(), 2);
        assert_eq!(asked.requests[0].0, "a");
        assert_eq!(asked.requests[1], ("b".to_owned(), "roots/list".to_owned(), None));
        assert_eq!(asked.state.as_deref(), Some(r#""s\u0041 1""#));
        let text = retry(
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","requestState":"old"}}"#,
            &[r#""a":{"action":"accept"}"#.to_owned()],
            asked.state.as_deref(),
        );
        assert_eq!(
            text,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"inputResponses":{"a":{"action":"accept"}},"requestState":"s\u0041 1","name":"t"}}"#
        );
        let complete = Frame::parse(r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}"#).unwrap();
        assert!(InputRequired::read(&complete).is_none());
    }
}
